#!/usr/bin/env bash
# build-peer.sh - build the benchmark's peer, Debian's v4l2loopback (package
# v4l2loopback-source, /usr/src/v4l2loopback.tar.bz2), against each cached kernel.
#
# Usage: tools/bench/build-peer.sh [SERIES...]   (default: $BENCH_KERNELS or "6.1 6.12")
# Output: build/bench/kmod/<kernelrelease>/v4l2loopback.ko. The tarball is unpacked into
# build/bench/src/ and each kernel gets its own copy of the source (kbuild writes next to
# it). Nothing of v4l2loopback enters the tree. A kernel it does not build for gets a
# build/bench/kmod/<kernelrelease>/FAILED file with the compiler's reason, and the bench
# reports the peer as missing on that kernel.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tarball=${V4L2LOOPBACK_TARBALL:-/usr/src/v4l2loopback.tar.bz2}
[ -f "$tarball" ] || { echo "build-peer: $tarball missing (package v4l2loopback-source; make deps)" >&2; exit 1; }
series=${*:-${BENCH_KERNELS:-6.1 6.12}}
bsrc=$src/build/bench/src
if [ ! -f "$bsrc/stamp" ] || [ "$tarball" -nt "$bsrc/stamp" ]; then
	rm -rf "$bsrc"
	mkdir -p "$bsrc"
	tar -xjf "$tarball" -C "$bsrc"
	touch "$bsrc/stamp"
fi
lbsrc=$(dirname "$(find "$bsrc" -name v4l2loopback.c | head -n1)")
[ -f "$lbsrc/v4l2loopback.c" ] || { echo "build-peer: no v4l2loopback.c in $tarball" >&2; exit 1; }
for s in $series; do
	kdir=$("$src/tools/vm/kernels.sh" kdir "$s")
	kver=$(sed -nE 's/^#define UTS_RELEASE "(.*)"$/\1/p' "$kdir/include/generated/utsrelease.h")
	out=$src/build/bench/kmod/$kver
	if [ -f "$out/v4l2loopback.ko" ] && [ "$out/v4l2loopback.ko" -nt "$bsrc/stamp" ]; then
		echo "build-peer: $out/v4l2loopback.ko ($kver, up to date)"
		continue
	fi
	mkdir -p "$out"
	rm -f "$out/FAILED" "$out/v4l2loopback.ko"
	cp "$lbsrc"/*.c "$lbsrc"/*.h "$out/"
	echo 'obj-m := v4l2loopback.o' > "$out/Kbuild"
	# Linux 6.8 removed strlcpy(); v4l2loopback 0.12.7 calls it four times (return value
	# unused), which is the only thing that stops it on 6.12. Where the first build fails
	# for exactly that reason, build again with strlcpy mapped to strscpy on the compiler
	# command line; the source stays Debian's.
	compat=""
	if ! make -s -C "$kdir" M="$out" modules >"$out/build.log" 2>&1 &&
		grep -q "implicit declaration of function .strlcpy" "$out/build.log"; then
		compat="strlcpy mapped to strscpy (strlcpy is gone since Linux 6.8)"
		echo 'ccflags-y := -Dstrlcpy=strscpy' >> "$out/Kbuild"
		make -s -C "$kdir" M="$out" modules >"$out/build.log" 2>&1 || true
	fi
	if [ -f "$out/v4l2loopback.ko" ]; then
		sed -nE 's/^#define V4L2LOOPBACK_VERSION_CODE KERNEL_VERSION\(([0-9]+), *([0-9]+), *([0-9]+)\).*/\1.\2.\3/p' \
			"$out/v4l2loopback.c" >"$out/VERSION"
		if [ -n "$compat" ]; then echo "$compat" > "$out/COMPAT"; else rm -f "$out/COMPAT"; fi
		echo "build-peer: $out/v4l2loopback.ko ($kver${compat:+; $compat})"
	else
		grep -m3 -E 'error' "$out/build.log" > "$out/FAILED" || echo "build failed" > "$out/FAILED"
		echo "build-peer: v4l2loopback does not build for $kver: $(head -n1 "$out/FAILED")" >&2
	fi
done
