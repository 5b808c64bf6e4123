#!/usr/bin/env bash
# kernels.sh - fetch Debian kernel images + headers into the viacam kernel cache.
#
# Usage: tools/vm/kernels.sh fetch [SERIES...]   fetch (or re-use) the newest kernel of each series
#        tools/vm/kernels.sh list                print "SERIES KVER DIR" for every cached kernel
#        tools/vm/kernels.sh kdir SERIES         print the kbuild directory (KDIR) of a cached series
#
# Nothing here touches the host's /boot or /lib/modules: packages are fetched with
# `apt-get download` and unpacked with `dpkg -x` into $VIACAM_CACHE/kernels/<kver>/root.
# SERIES defaults to "6.1 6.12 6.12-rt 7.2 7.2-debug" (the test matrix; VIACAM_KERNELS
# overrides). Fetched kernels are re-used: a series is looked up in the archive only when the
# cache holds none of it, or when VIACAM_KERNEL_REFRESH=1 is set. "7.2-debug" is not fetched
# but built from sid's linux-source-7.2 with the host's gcc (lockdep, KASAN, kmemleak) by
# build-debug-kernel.sh.
# "7.2" is sid's kernel: its packages are looked up and downloaded inside the cached sid root
# (sid-root.sh; the host's apt sources stay bookworm's), unpacked here like the others, and
# its modules are built in that root with sid's gcc (the cache entry's "buildroot" file says
# so; tools/vm/kbuild-run.sh reads it).
set -euo pipefail

CACHE=${VIACAM_CACHE:-$HOME/.cache/viacam}
KCACHE=$CACHE/kernels
DEFAULT_SERIES=${VIACAM_KERNELS:-"6.1 6.12 6.12-rt 7.2 7.2-debug"}
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "kernels.sh: $*" >&2; exit 1; }

# Dies unless $1 is a series this script knows.
known_series() {
	case "$1" in
	6.1 | 6.12 | 6.12-rt | 7.2 | 7.2-debug) ;;
	*) die "unknown kernel series '$1' (known: 6.1, 6.12, 6.12-rt, 7.2, 7.2-debug)" ;;
	esac
}

# Package-name pattern of the image for a series (the ABI part is captured as group 1).
image_regex() {
	case "$1" in
	6.1)  echo '^linux-image-(6\.1\.0-[0-9]+)-amd64-unsigned$' ;;
	6.12) echo '^linux-image-(6\.12\.[0-9]+\+deb[0-9]+)-amd64-unsigned$' ;;
	6.12-rt) echo '^linux-image-(6\.12\.[0-9]+\+deb[0-9]+)-rt-amd64-unsigned$' ;;
	# sid splits the image (linux-binary-unsigned-*, linux-modules-*, linux-base-*); the
	# linux-image-* package that depends on them names the release.
	7.2) echo '^linux-image-(7\.2\.[0-9]+\+deb[0-9]+)-amd64$' ;;
	*) known_series "$1"; die "no stock image for kernel series '$1'" ;;
	esac
}

flavour() { case "$1" in *-rt) echo rt-amd64 ;; *) echo amd64 ;; esac; }

# Where a series' packages come from and its modules are built: "host" (bookworm: the host's
# apt and gcc-12) or "sid" (the sid root).
buildroot() { case "$1" in *-debug) echo host ;; 7.*) echo sid ;; *) echo host ;; esac; }

# apt SERIES CMD ARG...: an apt command against the archive of a series.
apt_for() {
	local series=$1
	shift
	if [ "$(buildroot "$series")" = sid ]; then
		"$here/sid-root.sh" run "$@"
	else
		"$@"
	fi
}

# Newest ABI of a series available in the package archive.
newest_abi() {
	local re abi
	re=$(image_regex "$1")
	if [ "$(buildroot "$1")" = sid ]; then
		# The sid root's package lists are those of the day it was made (refresh: see fetch_one).
		abi=$(apt_for "$1" apt-cache pkgnames linux-image- | sed -nE "s/$re/\1/p" | sort -V | tail -n 1)
		[ -n "$abi" ] || die "no linux-image for series $1 found in sid (sid-root.sh refresh?)"
		echo "$abi"
		return
	fi
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
	if [ "$series" = 7.2-debug ]; then
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
	local broot
	broot=$(buildroot "$series")
	# A refresh follows today's sid: the root (and its package lists) is made again.
	[ "$broot" = sid ] && [ "${VIACAM_KERNEL_REFRESH:-0}" = 1 ] && "$here/sid-root.sh" refresh >/dev/null
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
	kbuild=$(apt_for "$series" apt-cache depends "linux-headers-$kver" | sed -nE 's/.*Depends: (linux-kbuild-[^ ]+).*/\1/p' | head -n 1)
	[ -n "$kbuild" ] || die "cannot find the linux-kbuild package of linux-headers-$kver"
	# The image: one linux-image-*-unsigned package (bookworm), or sid's split packages (the
	# unsigned kernel binary, the modules, the base files).
	local image=("linux-image-$kver-unsigned")
	if [ "$broot" = sid ]; then
		image=("linux-binary-unsigned-$kver" "linux-modules-$kver" "linux-base-$kver")
		apt_for "$series" apt-cache show "${image[0]}" >/dev/null 2>&1 || image[0]=linux-binary-$kver
	fi
	# (Inside the sid root, $dir is the same path: sid-root.sh mounts the kernel cache there.)
	apt_for "$series" sh -c 'cd "$1" && shift && exec apt-get download -q -o APT::Sandbox::User=root "$@"' _ \
		"$dir/debs" "${image[@]}" "linux-headers-$kver" "$hdr_common" "$kbuild" >&2 ||
		die "apt-get download failed for $kver"
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/root"
	done
	# Merged /usr (sid): the modules are in usr/lib/modules; depmod, mkinitramfs.sh, the guest
	# and build-kmod.sh look in lib/modules.
	[ -d "$dir/root/lib" ] || [ ! -d "$dir/root/usr/lib/modules" ] || ln -s usr/lib "$dir/root/lib"
	# The flavour headers name themselves (KBUILD_OUTPUT, sid) and include the common ones by
	# absolute path: point them into the cache.
	local hdr=$dir/root/usr/src/linux-headers-$kver
	[ -d "$hdr" ] || die "headers missing after unpacking $kver"
	sed -i "s|/usr/src/linux-headers-$abi-|$dir/root/usr/src/linux-headers-$abi-|g" "$hdr/Makefile"
	[ -e "$hdr/scripts/basic/fixdep" ] || die "kbuild scripts missing in $hdr (broken 'scripts' link?)"
	# Since 6.16 `make C=1/2` asks scripts/checker-valid.sh whether sparse is new enough, and
	# turns sparse off (one make warning) when it cannot tell; sid's linux-kbuild-7.2 lacks
	# the script. This one does what the kernel's does: 1 when CHECK parses a
	# __typeof_unqual__ without an error. (tools/kmod-lint.sh runs sparse on every kernel.)
	local cv=$hdr/scripts/checker-valid.sh
	if grep -qs 'checker-valid.sh' "$dir/root/usr/src/$hdr_common/Makefile" && [ ! -e "$cv" ]; then
		cat >"$cv" <<-'CHECKER'
		#!/bin/sh -eu
		# Added by viacam's kernels.sh: Debian's linux-kbuild package lacks it.
		[ ! -x "$(command -v "$1")" ] && exit 1
		tmp_file=$(mktemp)
		trap 'rm -f "$tmp_file"' EXIT
		printf 'static inline int u(const int *q)\n{\n\t__typeof_unqual__(*q) v = *q;\n\treturn v;\n}\n' >"$tmp_file"
		# sparse exits with 0 on errors: look for one in its output.
		"$@" "$tmp_file" 2>&1 | awk -v c=1 '/error/ { c = 0 } END { print c }'
		CHECKER
		chmod +x "$cv"
	fi
	# sid's kernel binary is lib/modules/KVER/vmlinuz(.unsigned) (its postinst would copy it
	# to /boot); run.sh boots boot/vmlinuz-KVER.
	local img
	for img in vmlinuz vmlinuz.unsigned; do
		[ ! -e "$dir/root/boot/vmlinuz-$kver" ] && [ -f "$dir/root/lib/modules/$kver/$img" ] &&
			mkdir -p "$dir/root/boot" && ln -s "../lib/modules/$kver/$img" "$dir/root/boot/vmlinuz-$kver"
	done
	[ -f "$dir/root/boot/vmlinuz-$kver" ] || die "no kernel image (boot/vmlinuz-$kver) in the packages of $kver"
	# The unpacked tree has no modules.dep; the guest's modprobe needs one.
	/sbin/depmod -b "$dir/root" "$kver" || die "depmod failed for $kver"
	echo "$series" >"$dir/series"
	echo "$kver" >"$dir/kver"
	echo "$broot" >"$dir/buildroot"
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
		if [ "$s" = 7.2-debug ] && [ $# -gt 1 ]; then
			setsid "$0" fetch 7.2-debug &
			debug_pid=$!
			trap 'kill -TERM -- -"$debug_pid" 2>/dev/null' EXIT
			trap 'exit 130' INT TERM
		else
			others+=("$s")
		fi
	done
	for s in "${others[@]}"; do fetch_one "$s"; done
	if [ -n "$debug_pid" ]; then
		wait "$debug_pid" || die "the 7.2-debug kernel was not built (its messages are above)"
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
