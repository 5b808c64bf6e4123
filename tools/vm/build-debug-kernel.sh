#!/usr/bin/env bash
# build-debug-kernel.sh - build the "7.2-debug" guest kernel (lockdep, KASAN, kmemleak) from
# sid's linux-source-7.2 into the kernel cache, in the same layout as a fetched kernel:
#   $VIACAM_CACHE/kernels/<release>/root/{boot/vmlinuz-R, lib/modules/R, usr/src/linux-headers-R}
# where linux-headers-R points at the build tree (KDIR for viacam.ko). A build whose inputs
# (source package version, config fragment, this script) have not changed is re-used.
# The configuration is `allnoconfig` with tools/vm/debug-kernel.config as its answers (only what the guest
# uses).
#
# Why 7.2, the newest series: lockdep and KASAN should watch the vb2, dma-buf and locking
# code that users run today (vb2 drops the queue lock itself while DQBUF waits since 6.15;
# dma-buf's reservation locking changed after 6.1), not the oldest series of the matrix. The
# source is sid's linux-source-7.2 (the same release as the "7.2" series), downloaded inside
# the cached sid root (the host's apt sources stay bookworm's; the .deb is kept in
# $VIACAM_CACHE/debug-src), and it is built with the host's gcc-12 (7.2 needs gcc 8 or
# later), so its modules, viacam.ko included, build on the host like the bookworm kernels'.
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
	echo 7.2-debug >"$dir/series"
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

srcpkg=linux-source-7.2
debs=$cache/debug-src
"$here/sid-root.sh" path >/dev/null || { echo "debug kernel: no sid root for $srcpkg" >&2; exit 1; }
srcver=$("$here/sid-root.sh" run apt-cache show --no-all-versions "$srcpkg" 2>/dev/null |
	sed -n 's/^Version: //p' | head -n 1)
[ -n "$srcver" ] || { echo "debug kernel: sid has no $srcpkg (sid-root.sh refresh?)" >&2; exit 1; }
stamp=$( (echo "$srcver"; cat "$here/debug-kernel.config" "$0") | sha1sum | cut -c1-12)
tree=$cache/debug-build/$srcpkg

done_dir=$(grep -lx '7.2-debug' "$cache"/kernels/*/series 2>/dev/null | head -n 1 | xargs -r dirname || true)
if [ -n "$done_dir" ] && [ -f "$done_dir/.complete" ] && [ "$(cat "$done_dir/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "debug kernel: cached $(cat "$done_dir/kver") in $done_dir" >&2
	exit 0
fi
[ -n "$done_dir" ] && rm -rf "$done_dir"

echo "debug kernel: building from $srcpkg $srcver (about 20 minutes on 2 cores)" >&2
deb=$debs/${srcpkg}_${srcver#*:}_all.deb
if [ ! -f "$deb" ]; then
	rm -rf "$debs"
	mkdir -p "$debs"
	(cd "$debs" && "$here/sid-root.sh" run --bind "$debs" \
		apt-get -q -o APT::Sandbox::User=root download "$srcpkg=$srcver" >&2)
	[ -f "$deb" ] || { echo "debug kernel: apt-get download gave no $deb" >&2; exit 1; }
fi
if [ ! -f "$tree/.unpacked-$srcver" ]; then
	rm -rf "$cache/debug-build"
	mkdir -p "$cache/debug-build"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$srcpkg.tar.xz" | tar -xJ -C "$cache/debug-build"
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
