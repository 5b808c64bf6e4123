#!/bin/bash
# TEST-02-compliance: v4l2-compliance -s on the capture node while a producer streams into the
# backend node, then on the backend node itself: 0 failures, 0 warnings (but the two known
# messages of bookworm's v4l2-compliance 1.22.1), including the "blocking wait" test; then
# the newest v4l2-compliance (sid's) with -s, -s -f and -a -s on both nodes, nothing tolerated.
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
# The newest v4l2-compliance, nothing tolerated: -s on every kernel; -s -f (every format,
# size and interval) and -a -s on the newest kernel only (70 s more per kernel). On the
# backend node -f gets a frame count: v4l2-compliance streams 1/interval frames per
# interval, which is 0 for the node's longest (50 s) and then never ends (an unsigned count
# that wraps), as nothing paces an output without consumers.
ways="-s"
[ "$(uname -r | cut -d. -f1)" -ge 7 ] && ways="-s|-s -f|-a -s"
newest() { # NODE NAME ARG...
	local node=$1 name=$2 log
	shift 2
	log="$RES/compliance-new-$name-$(tr -d ' -' <<<"$*").log"
	compliance_run_new "$node" "$log" 300 "$@"
	gate=$(compliance_gate_new "$log")
	check "newest v4l2-compliance $* on the $name node: $gate" compliance_gate_new "$log"
	echo "$name $*: $gate" >>"$RES/summary"
}
IFS='|' read -ra list <<<"$ways"
for args in "${list[@]}"; do
	# shellcheck disable=SC2086
	newest "$cap" capture $args
done
kill "$prod"; wait "$prod" 2>/dev/null
compliance_run "$out" "$RES/compliance-backend.log"
check "backend node $out: compliance clean" compliance_gate "$RES/compliance-backend.log"
check "backend node: blocking wait test OK" grep -qE 'test blocking wait: OK' "$RES/compliance-backend.log"
grep -E '^Total' "$RES/compliance-backend.log" | sed 's/^/backend: /' >>"$RES/summary"
for args in "${list[@]}"; do
	[ "$args" = "-s -f" ] && args="-s -f 30"
	# shellcheck disable=SC2086
	newest "$out" backend $args
done
check "capture node is capture-only" bash -c "v4l2-ctl -d $cap -D | grep -A4 'Device Caps' | grep -q 'Video Capture' && ! v4l2-ctl -d $cap -D | grep -A4 'Device Caps' | grep -q 'Video Output'"
rmmod viacam || fail "rmmod viacam"
finish
