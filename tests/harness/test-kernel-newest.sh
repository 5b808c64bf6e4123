#!/usr/bin/env bash
# test-kernel-newest.sh - the module builds on the newest kernel Debian serves, never again
# silently not: in the cached sid root (tools/vm/sid-root.sh), against whatever sid's
# linux-headers-amd64 is in it (7.2 when this was written), with sid's gcc:
#  - `make -k modules W=1` of kmod/: no error and no warning; on failure the compiler's own
#    messages are printed;
#  - the module's vermagic names that kernel;
#  - `dkms build` of kmod/ with its dkms.conf (as the viacam-dkms package installs it), private
#    dkms and source trees;
#  - and it says when the cached "7.2" series (the one the guest tests boot) is older than
#    sid's headers (then VIACAM_KERNEL_REFRESH=1 make kernels follows sid).
# The root is made when it is missing (about 1.5 to 3 minutes; make kernels makes it).
# needs-kernel: 7.2
# expected-seconds: 60 (the runner's guess on a fresh machine: long jobs start first)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
ok=1
bad() { echo "NOT OK: $*"; ok=0; }
good() { echo "ok: $*"; }
sidroot=$src/tools/vm/sid-root.sh
inroot() { "$sidroot" run --bind "$work" "$@"; }

root=$("$sidroot" path) || { bad "no sid root (tools/vm/sid-root.sh failed)"; exit 1; }
echo "== $("$sidroot" info)"
kver=$(cd "$root/usr/src" && ls -d linux-headers-*-amd64 2>/dev/null | sed 's/^linux-headers-//' | sort -V | tail -n 1)
[ -n "$kver" ] || { bad "sid root has no linux-headers-*-amd64"; exit 1; }
kdir=/usr/src/linux-headers-$kver
ver=$(sed -nE 's/^#define VIACAM_VERSION "(.*)"$/\1/p' "$src/lib/version.h")

# --- kbuild, W=1: the compiler's messages are the verdict.
mkdir -p "$work/kmod/uapi/linux"
cp "$src"/kmod/*.[ch] "$src"/kmod/Kbuild "$work/kmod/"
cp "$src"/kmod/uapi/linux/*.h "$work/kmod/uapi/linux/"
inroot make -k --no-print-directory -C "$kdir" M="$work/kmod" W=1 modules >"$work/kbuild.log" 2>&1
rc=$?
# Kbuild's own notes are not the compiler's (no BTF without vmlinux is one of them).
diags=$(grep -E '(error|warning|note):|Error [0-9]|undefined!' "$work/kbuild.log")
if [ "$rc" != 0 ]; then
	bad "viacam.ko does not build on sid's $kver (make exit $rc):"
	grep -E ': (error|warning):|Error [0-9]|undefined!|^make' "$work/kbuild.log" | head -n 40 | sed 's/^/    /'
	[ -n "$diags" ] || tail -n 20 "$work/kbuild.log" | sed 's/^/    /'
elif [ -n "$diags" ]; then
	bad "viacam.ko builds on sid's $kver with W=1 warnings:"
	echo "$diags" | head -n 40 | sed 's/^/    /'
else
	good "viacam.ko builds on sid's $kver with W=1, no warning ($(inroot gcc --version | head -n 1))"
fi
if [ -f "$work/kmod/viacam.ko" ]; then
	vm=$(modinfo -F vermagic "$work/kmod/viacam.ko" | awk '{ print $1 }')
	[ "$vm" = "$kver" ] && good "vermagic $vm" || bad "vermagic '$vm', expected $kver"
fi

# --- DKMS, from kmod/ and its dkms.conf (what viacam-dkms puts in /usr/src/viacam-VERSION).
mkdir -p "$work/dkms-src/viacam-$ver" "$work/dkms-tree"
cp -r "$src"/kmod/. "$work/dkms-src/viacam-$ver/"
rm -f "$work/dkms-src/viacam-$ver"/*.o "$work/dkms-src/viacam-$ver"/*.ko
if inroot dkms build --dkmstree "$work/dkms-tree" --sourcetree "$work/dkms-src" \
	-m viacam -v "$ver" -k "$kver" --kernelsourcedir "$kdir" >"$work/dkms.log" 2>&1; then
	ko=$(find "$work/dkms-tree/viacam/$ver/$kver" -name 'viacam.ko*' | head -n 1)
	if [ -n "$ko" ]; then
		good "dkms build of kmod/ (dkms.conf) for $kver"
	else
		bad "dkms build for $kver left no viacam.ko"
	fi
else
	bad "dkms build of kmod/ for $kver failed:"
	tail -n 12 "$work/dkms.log" | sed 's/^/    /'
	tail -n 20 "$work/dkms-tree/viacam/$ver/build/make.log" 2>/dev/null | sed 's/^/    /'
fi

# --- Is the guest tests' 7.2 the kernel sid serves?
cached=$("$src/tools/vm/kernels.sh" list 7.2 | awk '{ print $2 }')
if [ -z "$cached" ]; then
	echo "note: no 7.2 series in the kernel cache (make kernels)"
elif [ "$cached" != "$kver" ]; then
	echo "note: the guest tests boot $cached, sid's headers are $kver (VIACAM_KERNEL_REFRESH=1 make kernels)"
fi
[ "$ok" = 1 ]
