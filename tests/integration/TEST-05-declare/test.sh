#!/bin/bash
# TEST-05-declare: declared formats and controls appear on the capture node exactly as declared;
# consumer S_FMT, S_PARM, S_CTRL and STREAMON/STREAMOFF arrive at the backend as events; bad
# declarations are refused with EINVAL and change nothing; a second handle gets EBUSY; a
# 32-bit backend's declarations work (compat_ioctl32); a consumer's S_PARM while it streams
# sets the rate of the bridge's repeats.
. "$(dirname "$0")/../lib.sh"
load_viacam
cap=$(cam_node capture 0) && out=$(cam_node backend 0) || die "no nodes"
"$BIN/vctest" declare "$cap" "$out" | tee "$RES/declare.log"
check "vctest declare" test "${PIPESTATUS[0]}" = 0
# S_PARM while streaming sets the rate of the repeats at once.
"$BIN/vctest" reparm "$cap" "$out" | tee "$RES/reparm.log"
check "vctest reparm" test "${PIPESTATUS[0]}" = 0
# A 32-bit backend declares through the private ioctls (compat_ioctl32).
"$BIN/vccompat32" "$cap" "$out" | tee "$RES/compat32.log"
check "a 32-bit backend declares formats, controls and a card name" test "${PIPESTATUS[0]}" = 0
rmmod viacam || fail "rmmod viacam"
finish
