#!/usr/bin/env bash
# build-kmod.sh - build kmod/viacam.ko against one kernel build directory.
#
# Usage: tools/build-kmod.sh KDIR [extra kbuild args...]
# Output: build/kmod/<kernelrelease>/viacam.ko. Kbuild writes next to the sources, so
# each kernel gets its own copy of kmod/ under build/. When KDIR belongs to a kernel
# in the viacam cache, build/modroot/<kernelrelease>/lib/modules/<kernelrelease> is
# made too: the cached modules (by symlink) plus viacam.ko in updates/, with a
# modules.dep from depmod, so `modprobe viacam` works in the guest.
# A kernel fetched from sid is built inside the cached sid root with sid's gcc
# (tools/vm/kbuild-run.sh); the others on the host.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: build-kmod.sh KDIR}
shift
[ -f "$kdir/Makefile" ] || { echo "build-kmod: no kernel build directory at $kdir" >&2; exit 1; }
# UTS_RELEASE, not include/config/kernel.release: Debian's 6.1 headers say 6.1.x there.
kver=$(sed -nE 's/^#define UTS_RELEASE "(.*)"$/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null)
[ -n "$kver" ] || { echo "build-kmod: cannot tell the kernel release of $kdir" >&2; exit 1; }
out=$src/build/kmod/$kver
mkdir -p "$out"
# Copy only changed files so kbuild's own dependency tracking stays useful.
for f in "$src"/kmod/*.[ch] "$src"/kmod/Kbuild; do
	cmp -s "$f" "$out/$(basename "$f")" || cp "$f" "$out/"
done
mkdir -p "$out/uapi/linux"
for f in "$src"/kmod/uapi/linux/*.h; do
	[ -e "$f" ] || continue
	cmp -s "$f" "$out/uapi/linux/$(basename "$f")" || cp "$f" "$out/uapi/linux/"
done
"$src/tools/vm/kbuild-run.sh" "$kdir" make -s -C "$kdir" M="$out" "$@" modules
echo "build-kmod: $out/viacam.ko ($kver)"

# Module tree for the guest, when this is a cached kernel.
case "$kdir" in
*/root/usr/src/linux-headers-*) ;;
*) exit 0 ;;
esac
kroot=${kdir%/usr/src/linux-headers-*}
cmods=$kroot/lib/modules/$kver
[ -d "$cmods" ] || exit 0
mroot=$src/build/modroot/$kver
mdir=$mroot/lib/modules/$kver
# Re-used only when it has this module and links to this cache's modules (a tree made for
# another VIACAM_CACHE, since removed, would leave modprobe without the kernel's modules).
if [ -f "$mdir/updates/viacam.ko" ] && cmp -s "$out/viacam.ko" "$mdir/updates/viacam.ko" &&
	[ "$(readlink "$mdir/kernel")" = "$cmods/kernel" ] && [ -d "$mdir/kernel/" ]; then
	exit 0
fi
rm -rf "$mroot"
mkdir -p "$mdir/updates"
ln -s "$cmods/kernel" "$mdir/kernel"
cp "$cmods"/modules.order "$cmods"/modules.builtin "$cmods"/modules.builtin.modinfo "$mdir/"
cp "$out/viacam.ko" "$mdir/updates/"
/sbin/depmod -b "$mroot" "$kver"
