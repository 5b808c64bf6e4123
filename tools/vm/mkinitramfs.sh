#!/usr/bin/env bash
# mkinitramfs.sh - build the guest's small initramfs for one cached kernel.
#
# Usage: tools/vm/mkinitramfs.sh KERNEL_DIR OUT
#   KERNEL_DIR  a cache entry made by kernels.sh (holds root/ and kver)
#   OUT         the gzip'd cpio archive to write
#
# The archive holds busybox-static, the modules needed to reach the host over
# virtio-9p (plus overlayfs), decompressed because busybox insmod cannot read
# .ko.xz, in dependency order, and tools/vm/initramfs-init as /init.
set -euo pipefail
kdir=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
kver=$(cat "$kdir/kver")
moddir=$kdir/root/lib/modules/$kver
busybox=$(command -v busybox || true)
[ -x /bin/busybox ] && busybox=/bin/busybox
[ -n "$busybox" ] || { echo "mkinitramfs: busybox-static is not installed" >&2; exit 1; }
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	{ echo "mkinitramfs: $busybox is not static (install busybox-static)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,dev,proc,sys,newroot,mods}
cp "$busybox" "$work/bin/busybox"

# Resolve dependencies from modules.dep: deps first, each module once.
declare -A seen=()
order=()
dep_line() { grep -E "^(kernel/)?([^:]*/)?$1\.ko(\.xz|\.zst|\.gz)?:" "$moddir/modules.dep" | head -n 1 || true; }
add_mod() {
	local name=$1 line path deps d
	[ -n "${seen[$name]:-}" ] && return
	seen[$name]=1
	line=$(dep_line "$name")
	if [ -z "$line" ]; then
		# Built into this kernel (e.g. virtio_pci on 6.12): nothing to load.
		grep -qE "/$name\.ko$" "$moddir/modules.builtin" && return
		echo "mkinitramfs: module $name not found for $kver" >&2
		exit 1
	fi
	path=${line%%:*}
	deps=${line#*:}
	for d in $deps; do
		d=$(basename "$d"); d=${d%%.ko*}
		add_mod "$d"
	done
	order+=("$path")
}
for m in virtio_ring virtio virtio_pci 9pnet 9pnet_virtio 9p overlay; do add_mod "$m"; done

: >"$work/modules.list"
for path in "${order[@]}"; do
	base=$(basename "$path"); base=${base%%.ko*}.ko
	case "$path" in
	*.xz) xz -dc "$moddir/$path" >"$work/mods/$base" ;;
	*.zst) zstd -qdc "$moddir/$path" >"$work/mods/$base" ;;
	*.gz) gzip -dc "$moddir/$path" >"$work/mods/$base" ;;
	*) cp "$moddir/$path" "$work/mods/$base" ;;
	esac
	echo "$base" >>"$work/modules.list"
done
install -m 0755 "$here/initramfs-init" "$work/init"
(cd "$work" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
