#!/usr/bin/env bash
# test-clean-root.sh - the build a packager gets: in a clean Debian 12 root that holds only
# build-essential and debian/control's Build-Depends (made by mmdebstrap from Debian's
# archive, cached in $VIACAM_CACHE/build-root until the Build-Depends, the mirror or
# root_version below change), with a copy of this tree (its uncommitted changes included):
#  - the default build (`meson setup` + `ninja`) builds the product, viacamd and viacamctl,
#    and nothing of the test lab (no gcc-multilib, cmocka or clang there);
#  - `dpkg-buildpackage -us -uc -b` builds the packages, each with what it must hold.
# Needs root (mmdebstrap, chroot); the root's first build takes a few minutes, later runs
# re-use it under an overlay (nothing of the cached root changes).
# expected-seconds: 150 (the runner's guess on a fresh machine: long jobs start first)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work"
ok=1
bad() { echo "NOT OK: $*"; ok=0; }
good() { echo "ok: $*"; }
cd "$src" || exit 1
[ "$(id -u)" = 0 ] || { bad "needs root (mmdebstrap, chroot)"; exit 1; }
CACHE=${VIACAM_CACHE:-$HOME/.cache/viacam}
MIRROR=${VIACAM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
base=$CACHE/build-root

# debian/control's Build-Depends as package names (no versions, no architectures).
bdeps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control | sed -e '$d' -e 's/^Build-Depends://' |
	tr ',' '\n' | sed -E 's/\(.*\)|\[.*\]|<.*>//g; s/\|.*//; s/[[:space:]]//g' | sed '/^$/d' | sort -u)
root_version=1	# how the root is made (mmdebstrap's options below): bump when they change
stamp=$(echo "$bdeps $MIRROR $root_version" | sha1sum | cut -c1-12)

# --- The root: bookworm, variant buildd (essential, build-essential, apt), the Build-Depends.
mkdir -p "$CACHE"
exec 8>"$CACHE/build-root.lock"
flock 8
if [ ! -f "$base/.complete" ] || [ "$(cat "$base/stamp" 2>/dev/null)" != "$stamp" ]; then
	command -v mmdebstrap >/dev/null || { bad "mmdebstrap is not installed (make deps)"; exit 1; }
	t0=$SECONDS
	rm -rf "$base.new"
	mkdir -p "$base.new"
	if ! mmdebstrap --quiet --variant=buildd --mode=root \
		--aptopt='APT::Install-Recommends "false"' --dpkgopt=force-unsafe-io \
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--include="$(echo $bdeps | tr ' ' ',')" bookworm "$base.new/root" "$MIRROR" \
		>"$base.new/mmdebstrap.log" 2>&1; then
		bad "mmdebstrap of the build root failed:"; tail -n 15 "$base.new/mmdebstrap.log"
		exit 1
	fi
	echo "$stamp" >"$base.new/stamp"
	rm -rf "$base"
	mv "$base.new" "$base"
	touch "$base/.complete"
	good "made the build root (bookworm, buildd + Build-Depends) in $((SECONDS - t0)) s"
fi
flock -s 8
root=$base/root
for p in gcc-multilib libcmocka-dev clang; do
	chroot "$root" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' &&
		bad "the clean root holds $p: it is not clean"
done

# --- A copy of the tree (as tools/build-debs.sh makes it) in the root, under an overlay.
mkdir -p "$work/tree/viacam" "$work/upper" "$work/ovl" "$work/merged"
(git ls-files; git ls-files -o --exclude-standard) | grep -v -e '^build/' -e '^debian/build/' -e '^obj-' |
	while read -r f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	xargs -0 cp --parents -t "$work/tree/viacam"
inroot() {	# inroot LOG CMD: CMD in /src/viacam of the overlaid root, as a clean build user would
	local log=$1
	shift
	unshare --mount --propagation private -- bash -c '
		set -e
		mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4"
		m=$4; shift 4
		mount -t proc proc "$m/proc"
		mount --rbind /dev "$m/dev"
		mkdir -p "$m/src"
		mount --bind "$1" "$m/src"
		shift
		exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			chroot "$m" /bin/sh -c "cd /src/viacam && $*"
	' x "$root" "$work/upper" "$work/ovl" "$work/merged" "$work/tree" "$@" >"$log" 2>&1
}

# --- The default build: the product, nothing of the test lab.
if inroot "$work/meson.log" 'meson setup build && ninja -C build'; then
	good "meson setup + ninja in the clean root"
else
	bad "the default build failed in the clean root:"; tail -n 15 "$work/meson.log"
fi
b=$work/tree/viacam/build
for p in viacamd viacamctl; do
	[ -x "$b/$p" ] && good "default build: $p" || bad "the default build made no $p"
done
lab=$(cd "$b" 2>/dev/null && ls -d vctest vcpix vcfuzz vcbench vchostile vccompat32 logscan fuzz-* tests/test-* 2>/dev/null)
[ -z "$lab" ] && good "the default build built nothing of the test lab" ||
	bad "the default build built test tools: $(tr '\n' ' ' <<<"$lab")"
grep -A5 'Backends' "$work/meson.log" | grep -q 'gst *: YES' ||
	bad "the clean root's build has no gst backend (Build-Depends?)"

# --- The packages.
rm -rf "$b"
if inroot "$work/dpkg.log" 'dpkg-buildpackage -us -uc -b'; then
	good "dpkg-buildpackage -us -uc -b in the clean root"
else
	bad "dpkg-buildpackage failed in the clean root:"; tail -n 20 "$work/dpkg.log"
fi
ver=$(sed -nE 's/^#define VIACAM_VERSION "(.*)"$/\1/p' lib/version.h)
udevdir=$(chroot "$root" pkg-config --variable=udevdir udev)
for deb in viacamd viacam-dev viacam-dkms; do
	f=$(ls "$work/tree/${deb}_${ver}_"*.deb 2>/dev/null | head -n1)
	[ -n "$f" ] || { bad "no $deb package"; continue; }
	dpkg-deb -c "$f" | awk '{ print $6 }' >"$work/$deb.list"
done
has() { grep -qxF ".$2" "$work/$1.list" 2>/dev/null || bad "$1 lacks $2"; }
has viacamd /usr/sbin/viacamd
has viacamd /usr/bin/viacamctl
has viacamd /usr/lib/systemd/system/viacamd.service
has viacamd "$udevdir/rules.d/70-viacam.rules"
has viacamd /etc/viacam/viacam.conf
has viacam-dev /usr/include/linux/viacam.h
has viacam-dkms "/usr/src/viacam-$ver/dkms.conf"
has viacam-dkms "/usr/src/viacam-$ver/uapi/linux/viacam.h"
[ "$ok" = 1 ] && good "the clean root's packages hold what they must"
[ "$ok" = 1 ]
