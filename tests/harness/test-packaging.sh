#!/usr/bin/env bash
# test-packaging.sh - the Debian packages, built as a packager would build them: from a copy
# of this tree (with its uncommitted changes), `dpkg-buildpackage -us -uc`, then
#  - lintian (pedantic, info tags shown) reports nothing that is not overridden with a reason;
#  - each package holds what it must: viacamd (daemon, viacamctl, unit, udev rules, modprobe
#    and modules-load files, the config as a conffile, man pages), viacam-dev (the uapi
#    header), viacam-dkms (the module's source with a dkms.conf whose version is the
#    package's and version.h's, a postinst that runs dkms, a dependency on dkms);
#  - `dkms build` of the packaged source succeeds against every cached kernel's headers
#    (private dkms and source trees: nothing of the host's is touched; sid's 7.2 in the sid
#    root, with sid's dkms and gcc), and each module's vermagic names its kernel.
# expected-seconds: 45 (the runner's guess on a fresh machine: long jobs start first)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work"
ok=1
bad() { echo "NOT OK: $*"; ok=0; }
good() { echo "ok: $*"; }
cd "$src" || exit 1
ver=$(sed -nE 's/^#define VIACAM_VERSION "(.*)"$/\1/p' lib/version.h)

# --- Build (tools/build-debs.sh: a copy of the tree, dpkg-buildpackage -us -uc).
if "$src/tools/build-debs.sh" "$work"; then
	good "dpkg-buildpackage -us -uc"
else
	bad "dpkg-buildpackage failed"
	exit 1
fi
cd "$work/src" || exit 1
dver=$(dpkg-parsechangelog -l viacam/debian/changelog -S Version)
[ "$dver" = "$ver" ] && good "debian/changelog and version.h agree ($ver)" ||
	bad "debian/changelog says $dver, lib/version.h $ver"
changes=$(ls viacam_*_*.changes 2>/dev/null | head -n1)
[ -n "$changes" ] || { bad "no .changes file"; exit 1; }

# --- lintian: no error, warning, info or pedantic tag that is not overridden.
lintian --allow-root -E -I --pedantic "$changes" >"$work/lintian.log" 2>&1
tags=$(grep -E '^[EWIPX]: ' "$work/lintian.log")
[ -z "$tags" ] && good "lintian --pedantic -E -I: no tag (overrides: $(cat viacam/debian/*.lintian-overrides 2>/dev/null | grep -c '^[a-z]'), each with its reason)" ||
	bad "lintian: $tags"
grep -q '^viacamd: .*\[' viacam/debian/viacamd.lintian-overrides &&
	! awk '/^viacamd:/ && prev !~ /^#/ { exit 1 } { prev = $0 }' viacam/debian/viacamd.lintian-overrides &&
	bad "a lintian override without a comment giving its reason"

# --- What each package holds.
has() {	# has DEB PATH...
	local deb=$1 p
	shift
	for p in "$@"; do
		dpkg-deb -c "$deb" | awk '{ print $6 }' | grep -qxF ".$p" || bad "$(basename "$deb") lacks $p"
	done
}
# The udev rules go where udev.pc says (Debian 12: /lib/udev), the rest where systemd.pc does.
udevdir=$(pkg-config --variable=udevdir udev)
has viacamd_"$ver"_*.deb /usr/sbin/viacamd /usr/bin/viacamctl /usr/lib/systemd/system/viacamd.service \
	"${udevdir:-/usr/lib/udev}"/rules.d/70-viacam.rules /usr/lib/modprobe.d/viacam.conf \
	/usr/lib/modules-load.d/viacam.conf /etc/viacam/viacam.conf \
	/usr/share/man/man8/viacamd.8.gz /usr/share/man/man1/viacamctl.1.gz /usr/share/man/man5/viacam.conf.5.gz
dpkg-deb -e viacamd_"$ver"_*.deb "$work/ctl"
# The workers' user (docs/architecture.md, "Privilege separation"): made at install.
has viacamd_"$ver"_*.deb /usr/lib/sysusers.d/viacamd.conf
grep -q 'systemd-sysusers' "$work/ctl/postinst" 2>/dev/null && good "viacamd: the postinst makes the user viacam" ||
	bad "viacamd: no postinst that runs systemd-sysusers (workers would run as nobody)"
grep -qx /etc/viacam/viacam.conf "$work/ctl/conffiles" 2>/dev/null && good "viacamd: /etc/viacam/viacam.conf is a conffile" ||
	bad "viacamd: the config is not a conffile"
has viacam-dev_"$ver"_all.deb /usr/include/linux/viacam.h
has viacam-dkms_"$ver"_all.deb /usr/src/viacam-"$ver"/dkms.conf /usr/src/viacam-"$ver"/Kbuild \
	/usr/src/viacam-"$ver"/viacam-core.c /usr/src/viacam-"$ver"/uapi/linux/viacam.h
# Installing it must build the module: dh_dkms's postinst runs dkms, and dkms is a dependency.
dpkg-deb -e viacam-dkms_"$ver"_all.deb "$work/dkms-ctl"
grep -q 'dkms' "$work/dkms-ctl/postinst" 2>/dev/null && good "viacam-dkms: its postinst builds the module with dkms" ||
	bad "viacam-dkms: no postinst that runs dkms (installing it would build nothing)"
dpkg-deb -f viacam-dkms_"$ver"_all.deb Depends | grep -qw dkms && good "viacam-dkms depends on dkms" ||
	bad "viacam-dkms does not depend on dkms ($(dpkg-deb -f viacam-dkms_"$ver"_all.deb Depends))"
mkdir -p "$work/dkms-src" "$work/dkms-tree"
dpkg-deb -x viacam-dkms_"$ver"_all.deb "$work/dkms-src"
dkv=$(sed -nE 's/^PACKAGE_VERSION="(.*)"$/\1/p' "$work/dkms-src/usr/src/viacam-$ver/dkms.conf" 2>/dev/null)
[ "$dkv" = "$ver" ] && good "dkms.conf: PACKAGE_VERSION $dkv" || bad "dkms.conf says version '$dkv', the package $ver"
[ "$ok" = 1 ] && good "the packages hold what they must"

# --- DKMS against every cached kernel.
n=0
while read -r series kver _; do
	kdir=$("$src/tools/vm/kernels.sh" kdir "$series" 2>/dev/null)
	[ -n "$kdir" ] || { bad "$series: no build directory"; continue; }
	n=$((n + 1))
	# (kbuild-run.sh: a sid kernel's build runs in the sid root, with sid's dkms and gcc.)
	if "$src/tools/vm/kbuild-run.sh" "$kdir" --bind "$work" \
		dkms build --dkmstree "$work/dkms-tree" --sourcetree "$work/dkms-src/usr/src" \
		-m viacam -v "$ver" -k "$kver" --kernelsourcedir "$kdir" >"$work/dkms-$series.log" 2>&1; then
		ko=$(find "$work/dkms-tree/viacam/$ver/$kver" -name 'viacam.ko*' | head -n1)
		vm=$(modinfo -F vermagic "$ko" 2>/dev/null | awk '{ print $1 }')
		[ "$vm" = "$kver" ] && good "dkms build for $series ($kver)" ||
			bad "dkms build for $series: module vermagic '$vm', expected $kver"
	else
		bad "dkms build for $series ($kver) failed:"; tail -n 12 "$work/dkms-$series.log"
		cat "$work/dkms-tree/viacam/$ver/build/make.log" 2>/dev/null | tail -n 12
	fi
done < <("$src/tools/vm/kernels.sh" list)
[ "$n" -gt 0 ] || bad "no cached kernel to build for (make kernels)"
[ "$ok" = 1 ]
