#!/usr/bin/env bash
# run.sh - boot a cached Debian kernel under QEMU, run one script in it, judge the result.
#
# Usage: tools/vm/run.sh [options] SCRIPT     run SCRIPT (a path in the host tree) in the guest
#        tools/vm/run.sh [options] --shell    interactive guest on this terminal
# Options:
#   --kernel SERIES    kernel series from the cache (default 6.12; see kernels.sh)
#   --results DIR      where console.log, output.log, dmesg.log and rc go (default: a new
#                      folder under build/vm/)
#   --timeout SECONDS  wall-clock limit of the whole guest run (default 300)
#   --memory MIB       guest memory (default 2048)    --smp N   guest CPUs (default 2)
#   --q35              use the q35 machine (automatic for the *-debug kernels)
#
# Exit status: the script's own status when the guest finished cleanly; 124 when the guest
# ran out of time; 125 when the guest died without reporting a status (crash, panic, boot
# failure); 126 when the script succeeded but the kernel log holds a WARNING/BUG/Oops/
# lockdep/KASAN/UBSAN/hung-task report (listed on stderr). The full console log is kept.
#
# The host's root is shared read-only; the guest writes only to DIR (and its own tmpfs).
# Acceleration is TCG: KVM hangs on our build machines. VIACAM_ACCEL=kvm opts in where it works.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
series=6.12 results="" timeout=300 memory=2048 smp=2 machine=pc script="" shell=0

die() { echo "vm: $*" >&2; exit 125; }
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) series=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--q35) machine=q35; shift ;;
	--shell) shell=1; shift ;;
	-h|--help) sed -n '2,24p' "$0"; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) script=$1; shift; break ;;
	esac
done
[ $# -eq 0 ] || die "unexpected arguments after the script: $*"
[ "$shell" = 1 ] || [ -n "$script" ] || die "no script given (or --shell)"
if [ -n "$script" ]; then
	script=$(realpath "$script") || die "script not found"
	[ -f "$script" ] || die "script '$script' not found"
fi

line=$("$here/kernels.sh" list "$series" || true)
[ -n "$line" ] || die "kernel series $series is not cached; run: tools/vm/kernels.sh fetch $series"
read -r _ kver kdir <<<"$line"
# Self-built debug kernels need q35: on i440fx their ACPI interrupt routing under TCG
# costs ~30 s per virtio device.
case "$series" in *-debug) machine=q35 ;; esac
vmlinuz=$kdir/root/boot/vmlinuz-$kver
[ -f "$vmlinuz" ] || die "no kernel image at $vmlinuz"

# The initramfs is rebuilt when its inputs change.
initrd=$kdir/initramfs.gz
stamp=$(cat "$here/mkinitramfs.sh" "$here/initramfs-init" | sha1sum | cut -c1-12)
if [ ! -f "$initrd" ] || [ "$(cat "$kdir/initramfs.stamp" 2>/dev/null)" != "$stamp" ]; then
	"$here/mkinitramfs.sh" "$kdir" "$initrd" || die "initramfs build failed for $kver"
	echo "$stamp" >"$kdir/initramfs.stamp"
fi

logscan=${VIACAM_LOGSCAN:-$src/build/host/logscan}
[ -x "$logscan" ] || die "log scanner $logscan is not built (run make)"

if [ -z "$results" ]; then
	results=$src/build/vm/$kver/$(date +%Y%m%d-%H%M%S)-$$
fi
mkdir -p "$results"
results=$(realpath "$results")
rm -f "$results"/{rc,console.log,output.log,dmesg.log,scan.log,kmemleak.log}

modroot=$src/build/modroot/$kver
[ -d "$modroot" ] || modroot=$kdir/root

accel=${VIACAM_ACCEL:-tcg}
append="console=ttyS0 panic=-1 loglevel=6 printk.time=1 rw init=/init"
append+=" vm_init=$here/guest-init.sh vm_src=$src vm_kver=$kver vm_modroot=$modroot"
keep=${VIACAM_CACHE:-$HOME/.cache/viacam}
[ -n "$script" ] && keep+=":$script"
append+=" vm_results=$results vm_keep=$keep"
[ -n "$script" ] && append+=" vm_script=$script"

qemu=(qemu-system-x86_64 -machine "$machine" -accel "$accel" -cpu max -m "$memory" -smp "$smp"
	-nographic -no-reboot -nic none
	-kernel "$vmlinuz" -initrd "$initrd" -append "$append"
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$results,mount_tag=results,security_model=none,multidevs=remap")

if [ "$shell" = 1 ]; then
	echo "vm: interactive guest on $kver; type 'poweroff' to leave (Ctrl-A X kills QEMU)" >&2
	"${qemu[@]}" -serial mon:stdio -display none -nographic 2>&1 | tee "$results/console.log"
	exit 0
fi

start=$(date +%s)
set +e
timeout --kill-after=10 "$timeout" "${qemu[@]}" </dev/null >"$results/console.log" 2>&1
qrc=$?
set -e
elapsed=$(($(date +%s) - start))
echo "$elapsed" >"$results/seconds"

status=125
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "vm: guest timed out after ${timeout}s ($kver); console log: $results/console.log" >&2
	status=124
elif [ -f "$results/rc" ]; then
	status=$(cat "$results/rc")
else
	echo "vm: guest ended without a status (crash or boot failure, qemu rc $qrc); see $results/console.log" >&2
fi

# Kernel lines of the console (a crash never reaches dmesg.log) and the final kernel log.
scan_files=("$results/console.log")
[ -f "$results/dmesg.log" ] && scan_files+=("$results/dmesg.log")
if ! "$logscan" --kernel-lines "${scan_files[@]}" >"$results/scan.log" 2>&1; then
	echo "vm: kernel log of $kver reports problems:" >&2
	sed 's/^/vm:   /' "$results/scan.log" >&2
	[ "$status" = 0 ] && status=126
fi
# kmemleak (debug kernels): any unreferenced object whose backtrace passes through viacam.
if [ -s "$results/kmemleak.log" ] && grep -q viacam "$results/kmemleak.log"; then
	echo "vm: kmemleak reports objects leaked by viacam (see $results/kmemleak.log)" >&2
	[ "$status" = 0 ] && status=126
fi
exit "$status"
