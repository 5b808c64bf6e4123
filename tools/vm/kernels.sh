#!/usr/bin/env bash
# kernels.sh - fetch Debian kernel images + headers into the viacam kernel cache.
#
# Usage: tools/vm/kernels.sh fetch [SERIES...]   fetch (or re-use) the newest kernel of each series
#        tools/vm/kernels.sh list                print "SERIES KVER DIR" for every cached kernel
#        tools/vm/kernels.sh kdir SERIES         print the kbuild directory (KDIR) of a cached series
#
# Nothing here touches the host's /boot or /lib/modules: packages are fetched with
# `apt-get download` and unpacked with `dpkg -x` into $VIACAM_CACHE/kernels/<kver>/root.
# SERIES defaults to "6.1 6.12 6.12-rt 6.1-debug" (the test matrix; VIACAM_KERNELS overrides).
# Fetched kernels are re-used: a series is looked up in the archive only when the cache holds
# none of it, or when VIACAM_KERNEL_REFRESH=1 is set. "6.1-debug" is not fetched but built
# from Debian's linux-source-6.1 (lockdep, KASAN, kmemleak) by build-debug-kernel.sh.
set -euo pipefail

CACHE=${VIACAM_CACHE:-$HOME/.cache/viacam}
KCACHE=$CACHE/kernels
DEFAULT_SERIES=${VIACAM_KERNELS:-"6.1 6.12 6.12-rt 6.1-debug"}

die() { echo "kernels.sh: $*" >&2; exit 1; }

# Dies unless $1 is a series this script knows.
known_series() {
	case "$1" in
	6.1 | 6.12 | 6.12-rt | 6.1-debug) ;;
	*) die "unknown kernel series '$1' (known: 6.1, 6.12, 6.12-rt, 6.1-debug)" ;;
	esac
}

# Package-name pattern of the image for a series (the ABI part is captured as group 1).
image_regex() {
	case "$1" in
	6.1)  echo '^linux-image-(6\.1\.0-[0-9]+)-amd64-unsigned$' ;;
	6.12) echo '^linux-image-(6\.12\.[0-9]+\+deb[0-9]+)-amd64-unsigned$' ;;
	6.12-rt) echo '^linux-image-(6\.12\.[0-9]+\+deb[0-9]+)-rt-amd64-unsigned$' ;;
	*) known_series "$1"; die "no stock image for kernel series '$1'" ;;
	esac
}

flavour() { case "$1" in *-rt) echo rt-amd64 ;; *) echo amd64 ;; esac; }

# Newest ABI of a series available in the package archive.
newest_abi() {
	local re abi
	re=$(image_regex "$1")
	abi=$(apt-cache pkgnames linux-image- 2>/dev/null | sed -nE "s/$re/\1/p" | sort -V | tail -n 1)
	if [ -z "$abi" ]; then
		# The package lists may be missing on a fresh machine.
		[ "$(id -u)" = 0 ] || die "no $1 kernel in the apt lists; run: sudo apt-get update"
		apt-get update -qq >&2
		abi=$(apt-cache pkgnames linux-image- | sed -nE "s/$re/\1/p" | sort -V | tail -n 1)
	fi
	[ -n "$abi" ] || die "no linux-image for series $1 found in the Debian archive"
	echo "$abi"
}

# Cached kernel dir of a series, newest first; empty if none.
cached_dir() {
	local s=$1 d
	for d in $(ls -d "$KCACHE"/*/ 2>/dev/null | sort -rV); do
		[ -f "$d/.complete" ] && [ "$(cat "$d/series")" = "$s" ] && { echo "${d%/}"; return; }
	done
	return 0
}

fetch_one() {
	local series=$1 abi flav kver dir tmp hdr_common kbuild
	if [ "$series" = 6.1-debug ]; then
		"$(dirname "$0")/build-debug-kernel.sh"
		return
	fi
	if [ "${VIACAM_KERNEL_REFRESH:-0}" != 1 ]; then
		dir=$(cached_dir "$series")
		if [ -n "$dir" ]; then
			echo "kernel $series: cached $(cat "$dir/kver") in $dir" >&2
			return
		fi
	fi
	abi=$(newest_abi "$series")
	flav=$(flavour "$series")
	kver=$abi-$flav
	dir=$KCACHE/$kver
	if [ -f "$dir/.complete" ]; then
		echo "kernel $series: cached $kver in $dir" >&2
		return
	fi
	echo "kernel $series: fetching $kver into $dir" >&2
	rm -rf "$dir"
	mkdir -p "$dir/debs" "$dir/root"
	case "$series" in *-rt) hdr_common=linux-headers-$abi-common-rt ;; *) hdr_common=linux-headers-$abi-common ;; esac
	# The kbuild package name is whatever the headers package depends on.
	kbuild=$(apt-cache depends "linux-headers-$kver" | sed -nE 's/.*Depends: (linux-kbuild-[^ ]+).*/\1/p' | head -n 1)
	[ -n "$kbuild" ] || die "cannot find the linux-kbuild package of linux-headers-$kver"
	(cd "$dir/debs" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "linux-image-$kver-unsigned" "linux-headers-$kver" \
		"$hdr_common" "$kbuild" >&2) || die "apt-get download failed for $kver"
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/root"
	done
	# The flavour headers include the common ones by absolute path: point them into the cache.
	local hdr=$dir/root/usr/src/linux-headers-$kver
	[ -d "$hdr" ] || die "headers missing after unpacking $kver"
	sed -i "s|/usr/src/$hdr_common|$dir/root/usr/src/$hdr_common|g" "$hdr/Makefile"
	[ -e "$hdr/scripts/basic/fixdep" ] || die "kbuild scripts missing in $hdr (broken 'scripts' link?)"
	# The unpacked tree has no modules.dep; the guest's modprobe needs one.
	/sbin/depmod -b "$dir/root" "$kver" || die "depmod failed for $kver"
	echo "$series" >"$dir/series"
	echo "$kver" >"$dir/kver"
	rm -rf "$dir/debs"
	touch "$dir/.complete"
	echo "kernel $series: ready ($kver)" >&2
}

cmd=${1:-fetch}
shift || true
case "$cmd" in
fetch)
	[ $# -gt 0 ] || set -- $DEFAULT_SERIES
	for s in "$@"; do known_series "$s"; done
	# The debug kernel's build starts first and runs beside the fetches: unpacking the source
	# and unpacking the fetched packages are each one xz stream (one core), so together they
	# keep both cores busy (about 40 s less on a fresh machine).
	# It runs in a session of its own, so that a failed fetch (or ^C) stops the whole build.
	debug_pid=
	others=()
	for s in "$@"; do
		if [ "$s" = 6.1-debug ] && [ $# -gt 1 ]; then
			setsid "$0" fetch 6.1-debug &
			debug_pid=$!
			trap 'kill -TERM -- -"$debug_pid" 2>/dev/null' EXIT
			trap 'exit 130' INT TERM
		else
			others+=("$s")
		fi
	done
	for s in "${others[@]}"; do fetch_one "$s"; done
	if [ -n "$debug_pid" ]; then
		wait "$debug_pid" || die "the 6.1-debug kernel was not built (its messages are above)"
		trap - EXIT
	fi
	;;
list)
	[ $# -gt 0 ] || set -- $DEFAULT_SERIES
	for s in "$@"; do
		d=$(cached_dir "$s")
		[ -n "$d" ] && echo "$s $(cat "$d/kver") $d"
	done
	;;
kdir)
	[ $# -eq 1 ] || die "usage: kernels.sh kdir SERIES"
	d=$(cached_dir "$1")
	[ -n "$d" ] || die "kernel series $1 is not cached; run: tools/vm/kernels.sh fetch $1"
	echo "$d/root/usr/src/linux-headers-$(cat "$d/kver")"
	;;
*) die "unknown command '$cmd' (fetch, list, kdir)" ;;
esac
