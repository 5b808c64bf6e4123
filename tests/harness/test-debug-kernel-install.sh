#!/usr/bin/env bash
# test-debug-kernel-install.sh - the part of the debug kernel's path that broke every fresh
# machine: computing the release of the built tree and installing it into the kernel cache,
# run under make (MAKEFLAGS carries 'w', so a child make prints "Entering directory" lines).
# The ~16-minute compile itself runs in `make kernels` (7.2-debug) on a fresh machine; here the
# tree it left in the cache is installed again into a scratch cache, through the same code.
# needs-kernel: 7.2-debug
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work"
cache=${VIACAM_CACHE:-$HOME/.cache/viacam}
tree=$cache/debug-build/linux-source-7.2
[ -f "$tree/arch/x86/boot/bzImage" ] ||
	{ echo "NOT OK: no built debug kernel tree at $tree (make kernels builds it)"; exit 1; }
ok=1
bad() { echo "NOT OK: $*"; ok=0; }
printf 'all:\n\t%s --install %s\n' "$src/tools/vm/build-debug-kernel.sh" "$tree" >"$work/Makefile"
VIACAM_CACHE=$work/cache make -C "$work" >"$work/install.log" 2>&1 || { bad "install under make failed"; cat "$work/install.log"; }
want=$(cat "$tree/include/config/kernel.release")
dirs=$(ls "$work/cache/kernels" 2>/dev/null)
[ "$dirs" = "$want" ] && echo "ok: installed as $want" || bad "cache holds '$dirs', expected '$want'"
d=$work/cache/kernels/$want
[ "$(cat "$d/kver" 2>/dev/null)" = "$want" ] && echo "ok: kver is $want" || bad "kver is '$(cat "$d/kver" 2>/dev/null)'"
[ -s "$d/root/boot/vmlinuz-$want" ] && echo "ok: kernel image installed" || bad "no vmlinuz-$want"
[ -s "$d/root/lib/modules/$want/modules.dep" ] && echo "ok: modules and modules.dep installed" || bad "no modules.dep"
find "$d/root/lib/modules/$want" -name 'i2c-stub.ko*' | grep -q . && echo "ok: i2c-stub.ko is there" || bad "no i2c-stub.ko"
[ -f "$d/.complete" ] || bad "no .complete"
line=$(VIACAM_CACHE=$work/cache "$src/tools/vm/kernels.sh" list 7.2-debug)
[ "$line" = "7.2-debug $want $d" ] && echo "ok: kernels.sh lists it" || bad "kernels.sh list says '$line'"
kdir=$(VIACAM_CACHE=$work/cache "$src/tools/vm/kernels.sh" kdir 7.2-debug)
[ -f "$kdir/Makefile" ] && echo "ok: its KDIR is a kernel tree" || bad "KDIR $kdir has no Makefile"
[ "$ok" = 1 ]
