#!/bin/bash
# TEST-04-blocking-dqbuf: the case from the 2010 V4L2 locking debate. Thread A blocks in
# VIDIOC_DQBUF on the capture node; QUERYCAP, G_FMT, ENUM_FMT, G_CTRL and S_CTRL on another
# file handle and the producer's S_FMT/REQBUFS/QBUF/STREAMON on the backend node all complete
# meanwhile; then A wakes up with the producer's frame.
. "$(dirname "$0")/../lib.sh"
load_viacam devices=0
"$BIN/viacamctl" add --label blocking --timeout 60000 >"$RES/add.log" || die "viacamctl add"
id=$(cut -f1 "$RES/add.log")
cap=$(cam_node capture "$id") && out=$(cam_node backend "$id") || die "nodes of camera $id"
"$BIN/vctest" blocking "$cap" "$out" | tee "$RES/blocking.log"
check "vctest blocking" test "${PIPESTATUS[0]}" = 0
"$BIN/viacamctl" remove "$id" || fail "viacamctl remove"
rmmod viacam || fail "rmmod viacam"
finish
