#!/usr/bin/env bash
# kbuild-run.sh - run a module build command where the kernel of KDIR takes its modules.
#
# Usage: tools/vm/kbuild-run.sh KDIR [--bind DIR]... CMD [ARG...]
#        tools/vm/kbuild-run.sh --which KDIR      print "host" or "sid"
#
# The bookworm kernels and the self-built debug kernel build on the host (gcc-12). A kernel
# fetched from sid (kernels.sh: its cache entry's "buildroot" file says "sid") needs its own
# compiler (gcc 16) and kbuild tools linked against sid's libc: CMD then runs inside the
# cached sid root (sid-root.sh run), where the project tree, the kernel cache and each
# --bind DIR are visible at their own paths. CMD is a make, dkms or sparse run against KDIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

which_root() {
	local kdir=$1 entry
	case "$kdir" in
	*/root/usr/src/linux-headers-*)
		entry=${kdir%/root/usr/src/linux-headers-*}
		cat "$entry/buildroot" 2>/dev/null || echo host
		;;
	*) echo host ;;
	esac
}

if [ "${1:-}" = --which ]; then
	[ $# -eq 2 ] || { echo "usage: kbuild-run.sh --which KDIR" >&2; exit 2; }
	which_root "$2"
	exit 0
fi
[ $# -ge 2 ] || { echo "usage: kbuild-run.sh KDIR [--bind DIR]... CMD [ARG...]" >&2; exit 2; }
kdir=$1
shift
binds=()
while [ "${1:-}" = --bind ]; do binds+=(--bind "$2"); shift 2; done
case "$(which_root "$kdir")" in
host) exec "$@" ;;
sid) exec "$here/sid-root.sh" run "${binds[@]}" "$@" ;;
*) echo "kbuild-run: unknown build root '$(which_root "$kdir")' for $kdir" >&2; exit 1 ;;
esac
