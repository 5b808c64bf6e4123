#!/usr/bin/env bash
# sid-root.sh - a cached Debian sid root: the toolchain of the newest kernels Debian serves.
#
# Usage: tools/vm/sid-root.sh path                  build (or re-use) the root, print its folder
#        tools/vm/sid-root.sh refresh               make it again from today's sid
#        tools/vm/sid-root.sh run [--bind DIR]... CMD [ARG...]
#                                                  run CMD inside the root (chroot), as root
#        tools/vm/sid-root.sh info                  the root's kernel headers, gcc, age
#
# A prebuilt sid kernel (tools/vm/kernels.sh's "7.2") takes modules built by its own
# compiler only (gcc 16; the headers name x86_64-linux-gnu-gcc-16, and their kbuild tools are
# linked against sid's libc), so its module is built in here. The root also holds sid's
# linux-headers-amd64 (whatever version sid has the day the root is made: the
# newest-kernel check, tests/harness/test-kernel-newest.sh, builds against it), dkms and
# v4l-utils.
#
# The root is made by mmdebstrap (--variant=apt) from Debian's archive only, into
# $VIACAM_CACHE/sid-root/root (~540 MB; 1.5 to 2.5 minutes, more on a busy host), and re-used
# until its inputs change (the package list, the mirror, this script) or `refresh` asks for
# today's sid (kernels.sh does with VIACAM_KERNEL_REFRESH=1). sid's Release file in the
# archive may be past its Valid-Until date, so apt in the root does not check it. The host's
# apt sources are never touched. The root's package lists are kept (kernels.sh looks up and
# downloads sid's kernel packages inside the root).
#
# `run` works in a mount namespace of its own (nothing stays mounted when it ends): /proc
# (objtool reads it), /dev, the project tree, $VIACAM_CACHE/kernels and each --bind DIR are
# mounted into the root at their own paths; the environment is a clean one (no MAKEFLAGS:
# a jobserver of the host's make does not reach in). Needs root (chroot, mounts).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
CACHE=${VIACAM_CACHE:-$HOME/.cache/viacam}
base=$CACHE/sid-root
root=$base/root
MIRROR=${VIACAM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What goes in: kbuild of the sid kernels (gcc, make, bc, bison, flex, libelf, libssl,
# pahole for the modules' BTF, kmod), their headers, DKMS, sparse (tools/kmod-lint.sh), and
# the newest v4l-utils (v4l2-compliance).
PACKAGES=gcc,make,linux-headers-amd64,libelf-dev,bc,bison,flex,kmod,libssl-dev,dwarves,dkms,sparse,v4l-utils

die() { echo "sid-root: $*" >&2; exit 1; }

stamp() { (echo "$PACKAGES $MIRROR"; cat "$0") | sha1sum | cut -c1-12; }

# ensure [refresh]: the root exists and is current (under the lock, so that parallel jobs
# build it once); "refresh" makes it again from today's sid.
ensure() {
	[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap and chroot)"
	mkdir -p "$CACHE"
	exec 8>"$CACHE/sid-root.lock"
	flock 8
	if [ "${1:-}" != refresh ] && [ -f "$base/.complete" ] && [ "$(cat "$base/stamp" 2>/dev/null)" = "$(stamp)" ]; then
		exec 8>&-
		return
	fi
	command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (make deps)"
	echo "sid-root: making the sid root in $root (about 2 minutes)" >&2
	local t0=$SECONDS new=$base.new want
	want=$(stamp)
	rm -rf "$new"
	mkdir -p "$new"
	# No fsync per file (a root that breaks is made again) and no man pages, docs or
	# translations: together about half of the time dpkg takes in here.
	if ! mmdebstrap --quiet --variant=apt --mode=root \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--aptopt='APT::Install-Recommends "false"' \
		--dpkgopt=force-unsafe-io \
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
		--skip=cleanup/apt/lists \
		--include="$PACKAGES" sid "$new/root" "$MIRROR" >"$new/mmdebstrap.log" 2>&1; then
		tail -n 20 "$new/mmdebstrap.log" >&2
		die "mmdebstrap failed (log: $new/mmdebstrap.log)"
	fi
	echo "$want" >"$new/stamp"
	rm -rf "$base"
	mv "$new" "$base"
	touch "$base/.complete"
	exec 8>&-
	echo "sid-root: ready in $((SECONDS - t0)) s: $(info_line)" >&2
}

info_line() {
	local h g
	h=$(cd "$root/usr/src" && ls -d linux-headers-*-amd64 2>/dev/null | sed 's/^linux-headers-//' | sort -V | tail -n 1)
	g=$(chroot "$root" gcc --version 2>/dev/null | head -n 1)
	echo "sid linux-headers-amd64 ${h:-none}, $g, made $(date -r "$base/.complete" '+%F %R')"
}

cmd=${1:-path}
shift || true
case "$cmd" in
path)
	ensure
	echo "$root"
	;;
refresh)
	ensure refresh
	echo "$root"
	;;
info)
	ensure
	info_line
	;;
run)
	binds=("$src" "$CACHE/kernels")
	while [ $# -gt 0 ]; do
		case "$1" in
		--bind) binds+=("$(realpath "$2")"); shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	[ $# -gt 0 ] || die "usage: sid-root.sh run [--bind DIR]... CMD [ARG...]"
	ensure
	mkdir -p "$CACHE/kernels"
	# A shared lock while CMD runs: a rebuild (exclusive) waits for it.
	exec 8>"$CACHE/sid-root.lock"
	flock -s 8
	# Binds go in a private mount namespace: they vanish with it, whatever way CMD ends.
	exec unshare --mount --propagation private -- bash -c '
		set -e
		root=$1; shift
		n=$1; shift
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		for ((i = 0; i < n; i++)); do
			d=$1; shift
			[ -d "$d" ] || continue
			mkdir -p "$root$d"
			mount --bind "$d" "$root$d"
		done
		# The same working folder inside, where it is visible there.
		exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
			chroot "$root" /bin/sh -c '\''cd "$0" 2>/dev/null || cd /; exec "$@"'\'' "$PWD" "$@"
	' sid-root "$root" "${#binds[@]}" "${binds[@]}" "$@"
	;;
*) die "unknown command '$cmd' (path, refresh, run, info)" ;;
esac
