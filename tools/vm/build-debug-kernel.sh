#!/usr/bin/env bash
# build-debug-kernel.sh - build the "6.1-debug" guest kernel (lockdep, KASAN, kmemleak) from
# Debian's linux-source-6.1 into the kernel cache, in the same layout as a fetched kernel:
#   $VIACAM_CACHE/kernels/<release>/root/{boot/vmlinuz-R, lib/modules/R, usr/src/linux-headers-R}
# where linux-headers-R points at the build tree (KDIR for viacam.ko). A build whose inputs
# (source package version, config fragment, this script) have not changed is re-used.
# About 11 minutes with -j2 on our 2-core machines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${VIACAM_CACHE:-$HOME/.cache/viacam}
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1 || true)
[ -n "$tarball" ] || { echo "debug kernel: linux-source-6.1 is not installed (make deps)" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
stamp=$( (echo "$srcver"; cat "$here/debug-kernel.config" "$0") | sha1sum | cut -c1-12)
tree=$cache/debug-build/linux-source-6.1

done_dir=$(grep -lx '6.1-debug' "$cache"/kernels/*/series 2>/dev/null | head -n 1 | xargs -r dirname || true)
if [ -n "$done_dir" ] && [ -f "$done_dir/.complete" ] && [ "$(cat "$done_dir/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "debug kernel: cached $(cat "$done_dir/kver") in $done_dir" >&2
	exit 0
fi
[ -n "$done_dir" ] && rm -rf "$done_dir"

echo "debug kernel: building from linux-source-6.1 $srcver (about 11 minutes)" >&2
if [ ! -f "$tree/.unpacked-$srcver" ]; then
	rm -rf "$cache/debug-build"
	mkdir -p "$cache/debug-build"
	tar -xf "$tarball" -C "$cache/debug-build"
	touch "$tree/.unpacked-$srcver"
fi
cd "$tree"
make -s x86_64_defconfig >/dev/null
scripts/kconfig/merge_config.sh -m .config kernel/configs/kvm_guest.config "$here/debug-kernel.config" >/dev/null
make -s olddefconfig >/dev/null
# Every line of the fragment must have survived olddefconfig (else a dependency is missing).
missing=$(grep -E '^(CONFIG_[A-Z0-9_]+=|# CONFIG_[A-Z0-9_]+ is not set)' "$here/debug-kernel.config" |
	while read -r line; do grep -qxF "$line" .config || echo "$line"; done)
[ -z "$missing" ] || { echo "debug kernel: config lines not honoured:" >&2; echo "$missing" >&2; exit 1; }
make -s -j"$(nproc)" bzImage modules
kver=$(make -s kernelrelease)
dir=$cache/kernels/$kver
rm -rf "$dir"
mkdir -p "$dir/root/boot" "$dir/root/usr/src"
cp arch/x86/boot/bzImage "$dir/root/boot/vmlinuz-$kver"
make -s INSTALL_MOD_PATH="$dir/root" INSTALL_MOD_STRIP=1 modules_install >/dev/null
ln -s "$tree" "$dir/root/usr/src/linux-headers-$kver"
echo 6.1-debug >"$dir/series"
echo "$kver" >"$dir/kver"
echo "$stamp" >"$dir/stamp"
touch "$dir/.complete"
echo "debug kernel: ready ($kver)" >&2
