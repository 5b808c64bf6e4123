#!/bin/bash
# TEST-04-blocking-dqbuf: the case from the 2010 V4L2 locking debate. Thread A blocks in
# VIDIOC_DQBUF on the capture node; QUERYCAP, G_FMT, ENUM_FMT, G_CTRL and S_CTRL on another
# file handle and the producer's S_FMT/REQBUFS/QBUF/STREAMON on the backend node all complete
# meanwhile; then A wakes up with the producer's frame (the default: each vb2 queue with its
# own lock). The same again with queue_lock=0 (the camera's one lock is the capture queue's
# too: the 2010 arrangement, the measurement mode of make bench), plus frames in every memory
# mode and a producer/consumer pair with content checks in that mode.
. "$(dirname "$0")/../lib.sh"
load_viacam devices=0
check "queue_lock=1 is the default" grep -qx Y /sys/module/viacam/parameters/queue_lock
"$BIN/viacamctl" add --label blocking --timeout 60000 >"$RES/add.log" || die "viacamctl add"
id=$(cut -f1 "$RES/add.log")
cap=$(cam_node capture "$id") && out=$(cam_node backend "$id") || die "nodes of camera $id"
"$BIN/vctest" blocking "$cap" "$out" | tee "$RES/blocking.log"
check "vctest blocking" test "${PIPESTATUS[0]}" = 0
"$BIN/viacamctl" remove "$id" || fail "viacamctl remove"
rmmod viacam || fail "rmmod viacam"

load_viacam devices=1 queue_lock=0
check "queue_lock=0 is in effect" grep -qx N /sys/module/viacam/parameters/queue_lock
cap=$(cam_node capture 0) && out=$(cam_node backend 0) || die "nodes of camera 0"
"$BIN/vctest" blocking "$cap" "$out" | tee "$RES/blocking-qlock.log"
check "vctest blocking with queue_lock=0" test "${PIPESTATUS[0]}" = 0
for mode in mmap write; do
	flag=; [ $mode = write ] && flag=-w
	"$BIN/vctest" produce $flag -r 30 "$out" >"$RES/producer-$mode.log" 2>&1 &
	prod=$!
	res=$("$BIN/vctest" consume -n 40 -t 30 "$cap" 2>&1 | tail -n 1)
	check "queue_lock=0, $mode producer: 40 frames in order ($res)" grep -q 'bad=0 backwards=0 seq_bad=0' <<<"$res"
	kill "$prod"; wait "$prod" 2>/dev/null
done
timeout 30 dd if="$cap" of=/tmp/read.raw bs=614400 count=3 iflag=fullblock 2>/dev/null
check "queue_lock=0: read() gets 3 (repeated) frames" test "$(stat -c %s /tmp/read.raw)" = 1843200
rmmod viacam || fail "rmmod viacam (queue_lock=0)"
finish
