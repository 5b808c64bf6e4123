#!/usr/bin/env bash
# build-debug-kernel.sh - build the "6.1-debug" guest kernel (lockdep, KASAN, kmemleak) from
# Debian's linux-source-6.1 into the kernel cache, in the same layout as a fetched kernel:
#   $VIACAM_CACHE/kernels/<release>/root/{boot/vmlinuz-R, lib/modules/R, usr/src/linux-headers-R}
# where linux-headers-R points at the build tree (KDIR for viacam.ko). A build whose inputs
# (source package version, config fragment, this script) have not changed is re-used.
# The configuration is `allnoconfig` with tools/vm/debug-kernel.config as its answers (only what the guest
# uses); about 13 minutes with -j2 on our 2-core machines (plus ~0.5 for unpacking).
#
# Usage: build-debug-kernel.sh                 build (or re-use) and install into the cache
#        build-debug-kernel.sh --install TREE  only install an already built TREE into the
#                                              cache (what tests/harness/test-debug-kernel-
#                                              install.sh runs under make with a scratch cache)
#
# The release is read from the tree's include/config/kernel.release, never from a child
# make's stdout: under a parent make (MAKEFLAGS carries 'w') a child prints "Entering
# directory" lines there. Every child make also runs with --no-print-directory and without
# the parent's MAKEFLAGS, so the result is the same from a shell and from make.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${VIACAM_CACHE:-$HOME/.cache/viacam}

kmake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make --no-print-directory "$@"; }

# release TREE: the kernel release of a configured tree, checked for its shape.
release() {
	local f=$1/include/config/kernel.release r
	[ -f "$f" ] || { echo "debug kernel: no $f (tree not built?)" >&2; return 1; }
	r=$(cat "$f")
	[[ $r =~ ^[0-9]+\.[0-9]+[A-Za-z0-9.+_-]*$ ]] ||
		{ echo "debug kernel: '$r' in $f is not a kernel release" >&2; return 1; }
	echo "$r"
}

# install_tree TREE STAMP: copy a built tree's kernel and modules into the cache.
install_tree() {
	local tree=$1 stamp=$2 kver dir
	kver=$(release "$tree")
	[ -f "$tree/arch/x86/boot/bzImage" ] || { echo "debug kernel: $tree has no bzImage" >&2; return 1; }
	dir=$cache/kernels/$kver
	rm -rf "$dir"
	mkdir -p "$dir/root/boot" "$dir/root/usr/src"
	cp "$tree/arch/x86/boot/bzImage" "$dir/root/boot/vmlinuz-$kver"
	kmake -s -C "$tree" INSTALL_MOD_PATH="$dir/root" INSTALL_MOD_STRIP=1 modules_install >/dev/null
	[ -f "$dir/root/lib/modules/$kver/modules.dep" ] ||
		{ echo "debug kernel: modules_install made no modules.dep for $kver" >&2; return 1; }
	ln -s "$tree" "$dir/root/usr/src/linux-headers-$kver"
	echo 6.1-debug >"$dir/series"
	echo "$kver" >"$dir/kver"
	echo "$stamp" >"$dir/stamp"
	touch "$dir/.complete"
	echo "debug kernel: ready ($kver) in $dir" >&2
}

if [ "${1:-}" = --install ]; then
	[ $# -eq 2 ] || { echo "usage: build-debug-kernel.sh --install TREE" >&2; exit 2; }
	install_tree "$(realpath "$2")" installed-by-hand
	exit 0
fi
[ $# -eq 0 ] || { echo "usage: build-debug-kernel.sh [--install TREE]" >&2; exit 2; }

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

echo "debug kernel: building from linux-source-6.1 $srcver (about 13 minutes on 2 cores)" >&2
if [ ! -f "$tree/.unpacked-$srcver" ]; then
	rm -rf "$cache/debug-build"
	mkdir -p "$cache/debug-build"
	tar -xf "$tarball" -C "$cache/debug-build"
	touch "$tree/.unpacked-$srcver"
fi
cd "$tree"
# allnoconfig with the fragment as its fixed answers: every option the fragment does not name
# is off where it can be, also those its lines make visible (a merge followed by olddefconfig
# gave those their defaults: ACPI's battery, fan and thermal drivers, cpufreq, six initramfs
# decompressors, PCI serial cards ... 116 options, 3.3 minutes of the build).
rm -f .config
kmake -s allnoconfig KCONFIG_ALLCONFIG="$here/debug-kernel.config" >/dev/null
# Every line of the fragment must have survived (else a dependency is missing).
missing=$(grep -E '^(CONFIG_[A-Z0-9_]+=|# CONFIG_[A-Z0-9_]+ is not set)' "$here/debug-kernel.config" |
	while read -r line; do grep -qxF "$line" .config || echo "$line"; done)
[ -z "$missing" ] || { echo "debug kernel: config lines not honoured:" >&2; echo "$missing" >&2; exit 1; }
kmake -s -j"$(nproc)" bzImage modules
install_tree "$tree" "$stamp"
