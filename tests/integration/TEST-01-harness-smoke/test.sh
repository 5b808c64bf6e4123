#!/bin/bash
# TEST-01-harness-smoke: the guest can load media modules and run v4l2-compliance
# (on vivid; totals recorded, not gated: v4l2-compliance 1.22 fails a few vivid tests),
# and viacam.ko loads, registers /dev/viacam, and unloads cleanly.
set -u
fail() { echo "FAIL: $*"; exit 1; }
summary=$VIACAM_RESULTS/summary

modprobe vivid n_devs=1 node_types=0x1 || fail "modprobe vivid"
dev=$(for d in /sys/class/video4linux/video*; do
	grep -qi vivid "$d/name" 2>/dev/null && { echo "/dev/$(basename "$d")"; break; }; done)
[ -n "$dev" ] || fail "vivid created no video node"
v4l2-compliance -d "$dev" -s >"$VIACAM_RESULTS/vivid-compliance.log" 2>&1
totals=$(grep -E '^Total for' "$VIACAM_RESULTS/vivid-compliance.log" | tail -n 1)
[ -n "$totals" ] || fail "v4l2-compliance printed no totals"
echo "vivid (not gated): $totals" | tee "$summary"
modprobe -r vivid || fail "rmmod vivid"

modprobe viacam || fail "modprobe viacam"
grep -q '^viacam ' /proc/modules || fail "viacam is not listed in /proc/modules"
[ -c /dev/viacam ] || fail "/dev/viacam was not created"
rmmod viacam || fail "rmmod viacam"
grep -q '^viacam ' /proc/modules && fail "viacam still loaded after rmmod"
[ -e /dev/viacam ] && fail "/dev/viacam still exists after rmmod"
echo "viacam.ko: load, /dev/viacam, unload OK" | tee -a "$summary"
exit 0
