#!/bin/bash
# TEST-14-limits: what a consumer (anyone in the video group) may make the kernel allocate.
# CREATE_BUFS plane sizes are capped (twice the frame, or the biggest frame the camera offers),
# and all buffers of one queue fit in max_queue_mb (default 1024 MiB; vmalloc memory that no
# cgroup is charged for).
. "$(dirname "$0")/../lib.sh"
load_viacam devices=1
check "max_queue_mb is 1024 by default" grep -qx 1024 /sys/module/viacam/parameters/max_queue_mb
cap=$(cam_node capture 0) && out=$(cam_node backend 0) || die "nodes of camera 0"
"$BIN/vctest" limits "$cap" "$out" | tee "$RES/limits.log"
check "vctest limits" test "${PIPESTATUS[0]}" = 0
rmmod viacam || fail "rmmod viacam"
finish
