#!/bin/bash
# TEST-05-declare: declared formats and controls appear on the capture node exactly as declared;
# consumer S_FMT, S_PARM, S_CTRL and STREAMON/STREAMOFF arrive at the backend as events; bad
# declarations are refused with EINVAL and change nothing; a second handle gets EBUSY.
. "$(dirname "$0")/../lib.sh"
load_viacam
cap=$(cam_node capture 0) && out=$(cam_node backend 0) || die "no nodes"
"$BIN/vctest" declare "$cap" "$out" | tee "$RES/declare.log"
check "vctest declare" test "${PIPESTATUS[0]}" = 0
rmmod viacam || fail "rmmod viacam"
finish
