#!/bin/bash
# TEST-02-compliance: v4l2-compliance -s on the capture node while a producer streams into the
# backend node, then on the backend node itself: 0 failures, 0 warnings (but the two known
# messages of v4l2-compliance 1.22.1), including the "blocking wait" test.
. "$(dirname "$0")/../lib.sh"
load_viacam
cap=$(cam_node capture 0) || die "no capture node"
out=$(cam_node backend 0) || die "no backend node"
"$BIN/vctest" produce -r 30 "$out" >"$RES/producer.log" 2>&1 &
prod=$!
wait_frames_in "$cap" 5 60 || fail "the producer did not start"
compliance_run "$cap" "$RES/compliance-capture.log"
check "capture node $cap: compliance clean" compliance_gate "$RES/compliance-capture.log"
check "capture node: blocking wait test OK" grep -qE 'test blocking wait: OK' "$RES/compliance-capture.log"
grep -E '^Total' "$RES/compliance-capture.log" | sed 's/^/capture: /' >>"$RES/summary"
kill "$prod"; wait "$prod" 2>/dev/null
compliance_run "$out" "$RES/compliance-backend.log"
check "backend node $out: compliance clean" compliance_gate "$RES/compliance-backend.log"
check "backend node: blocking wait test OK" grep -qE 'test blocking wait: OK' "$RES/compliance-backend.log"
grep -E '^Total' "$RES/compliance-backend.log" | sed 's/^/backend: /' >>"$RES/summary"
check "capture node is capture-only" bash -c "v4l2-ctl -d $cap -D | grep -A4 'Device Caps' | grep -q 'Video Capture' && ! v4l2-ctl -d $cap -D | grep -A4 'Device Caps' | grep -q 'Video Output'"
rmmod viacam || fail "rmmod viacam"
finish
