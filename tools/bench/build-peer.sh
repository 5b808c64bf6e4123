#!/usr/bin/env bash
# build-peer.sh - build the benchmark's peer, Debian's v4l2loopback, against each cached
# kernel: bookworm's (package v4l2loopback-source, /usr/src/v4l2loopback.tar.bz2) for the
# kernels built on the host, sid's (the same package from sid, downloaded inside the cached
# sid root into $VIACAM_CACHE/peer-sid/) for sid's kernels, built there with their compiler
# (tools/vm/kbuild-run.sh): each kernel is measured against the v4l2loopback its Debian
# release ships.
#
# Usage: tools/bench/build-peer.sh [SERIES...]   (default: $BENCH_KERNELS or "6.1 6.12 7.2")
# Output: build/bench/kmod/<kernelrelease>/v4l2loopback.ko. Each tarball is unpacked into
# build/bench/src-<root>/ and each kernel gets its own copy of the source (kbuild writes next
# to it). Nothing of v4l2loopback enters the tree. A kernel it does not build for gets a
# build/bench/kmod/<kernelrelease>/FAILED file with the compiler's reason, and the bench
# reports the peer as missing on that kernel.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${VIACAM_CACHE:-$HOME/.cache/viacam}
series=${*:-${BENCH_KERNELS:-6.1 6.12 7.2}}

# tarball ROOT: the v4l2loopback source tarball for kernels built in ROOT (host or sid)
tarball() {
	case "$1" in
	host)
		local t=${V4L2LOOPBACK_TARBALL:-/usr/src/v4l2loopback.tar.bz2}
		[ -f "$t" ] || { echo "build-peer: $t missing (package v4l2loopback-source; make deps)" >&2; return 1; }
		echo "$t"
		;;
	sid)
		local d=$CACHE/peer-sid
		if [ ! -f "$d/usr/src/v4l2loopback.tar.bz2" ]; then
			rm -rf "$d" && mkdir -p "$d/deb"
			"$src/tools/vm/sid-root.sh" run --bind "$d/deb" sh -c \
				'cd "$1" && exec apt-get download -q -o APT::Sandbox::User=root v4l2loopback-source' _ "$d/deb" \
				>"$d/download.log" 2>&1 || { cat "$d/download.log" >&2; echo "build-peer: sid's v4l2loopback-source did not download" >&2; return 1; }
			dpkg -x "$d"/deb/v4l2loopback-source_*.deb "$d"
		fi
		echo "$d/usr/src/v4l2loopback.tar.bz2"
		;;
	*) echo "build-peer: no peer source for build root '$1'" >&2; return 1 ;;
	esac
}

# unpack ROOT: unpack ROOT's tarball (once per tarball) and print the folder of v4l2loopback.c
unpack() {
	local t bsrc=$src/build/bench/src-$1 lbsrc
	t=$(tarball "$1") || return 1
	if [ ! -f "$bsrc/stamp" ] || [ "$t" -nt "$bsrc/stamp" ]; then
		rm -rf "$bsrc"
		mkdir -p "$bsrc"
		tar -xjf "$t" -C "$bsrc"
		touch "$bsrc/stamp"
	fi
	lbsrc=$(dirname "$(find "$bsrc" -name v4l2loopback.c | head -n1)")
	[ -f "$lbsrc/v4l2loopback.c" ] || { echo "build-peer: no v4l2loopback.c in $t" >&2; return 1; }
	echo "$lbsrc"
}

for s in $series; do
	kdir=$("$src/tools/vm/kernels.sh" kdir "$s")
	kver=$(sed -nE 's/^#define UTS_RELEASE "(.*)"$/\1/p' "$kdir/include/generated/utsrelease.h")
	broot=$("$src/tools/vm/kbuild-run.sh" --which "$kdir")
	lbsrc=$(unpack "$broot") || exit 1
	bsrc=$src/build/bench/src-$broot
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
	if ! "$src/tools/vm/kbuild-run.sh" "$kdir" make -s -C "$kdir" M="$out" modules >"$out/build.log" 2>&1 &&
		grep -q "implicit declaration of function .strlcpy" "$out/build.log"; then
		compat="strlcpy mapped to strscpy (strlcpy is gone since Linux 6.8)"
		echo 'ccflags-y := -Dstrlcpy=strscpy' >> "$out/Kbuild"
		"$src/tools/vm/kbuild-run.sh" "$kdir" make -s -C "$kdir" M="$out" modules >"$out/build.log" 2>&1 || true
	fi
	if [ -f "$out/v4l2loopback.ko" ]; then
		sed -nE 's/^#define V4L2LOOPBACK_VERSION_CODE KERNEL_VERSION\(([0-9]+), *([0-9]+), *([0-9]+)\).*/\1.\2.\3/p' \
			"$out/v4l2loopback.c" >"$out/VERSION"
		# 0.13 and later: the version is three macros in v4l2loopback.h
		[ -s "$out/VERSION" ] || awk '/^#define V4L2LOOPBACK_VERSION_(MAJOR|MINOR|BUGFIX) / { v[$2] = $3 }
			END { print v["V4L2LOOPBACK_VERSION_MAJOR"] "." v["V4L2LOOPBACK_VERSION_MINOR"] "." v["V4L2LOOPBACK_VERSION_BUGFIX"] }' \
			"$out/v4l2loopback.h" >"$out/VERSION"
		if [ -n "$compat" ]; then echo "$compat" > "$out/COMPAT"; else rm -f "$out/COMPAT"; fi
		echo "build-peer: $out/v4l2loopback.ko ($kver${compat:+; $compat})"
	else
		grep -m3 -E 'error' "$out/build.log" > "$out/FAILED" || echo "build failed" > "$out/FAILED"
		echo "build-peer: v4l2loopback does not build for $kver: $(head -n1 "$out/FAILED")" >&2
	fi
done
