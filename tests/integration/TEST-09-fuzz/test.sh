#!/bin/bash
# TEST-09-fuzz: vcfuzz (tests/guest/vcfuzz.c) throws random and half-valid ioctls, opens,
# closes, mmaps, reads, writes, polls, dmabuf imports and camera adds/removes at every node
# of three cameras from 4 threads, while a producer and a consumer stream through camera 0,
# for VIACAM_FUZZ_SECONDS (default 60; make fuzz-nightly runs 600). The seed comes from
# VIACAM_FUZZ_SEED (to replay a run) or the clock, and is printed in the summary.
# Afterwards every camera must still stream frames from a fresh producer to a fresh
# consumer, and rmmod must work. The guest log must stay clean (checked by the harness).
. "$(dirname "$0")/../lib.sh"
secs=${VIACAM_FUZZ_SECONDS:-60}
seed=${VIACAM_FUZZ_SEED:-$(date +%s)$((RANDOM % 1000))}
echo "vcfuzz: seed=$seed (replay: VIACAM_FUZZ_SEED=$seed VIACAM_FUZZ_SECONDS=$secs)" >>"$RES/summary"
load_viacam devices=3 timeout_ms=300

# vcfuzz has its own hang watchdog (a call stuck for 20 s fails it); timeout(1) is the backstop.
timeout -k 10 $((secs + 180)) "$BIN/vcfuzz" -s "$seed" -t "$secs" -j 4 -c 6 2>&1 | tee "$RES/vcfuzz.log"
rc=${PIPESTATUS[0]}
grep -E '^vcfuzz: [0-9]+ (actions|calls)|VIOLATION|HANG' "$RES/vcfuzz.log" | head -n 6 >>"$RES/summary"
check "vcfuzz -s $seed: $secs s, 4 threads, exit status $rc" test "$rc" = 0
check "vcfuzz finished (done line)" grep -q "^vcfuzz: done, seed=$seed" "$RES/vcfuzz.log"

# The module still works: each camera streams from a fresh producer to a fresh consumer.
prods=() conss=()
for i in 0 1 2; do
	cap=$(cam_node capture $i) && out=$(cam_node backend $i) || { fail "camera $i is gone"; continue; }
	"$BIN/vctest" produce -r 30 "$out" >"$RES/producer$i.log" 2>&1 &
	prods[$i]=$!
	if ! wait_frames_in "$cap" 5 60; then
		fail "camera $i: the producer did not start ($(tail -n 1 "$RES/producer$i.log"))"
		continue
	fi
	"$BIN/vctest" consume -n 60 -t 60 "$cap" >"$RES/consumer$i.log" 2>&1 &
	conss[$i]=$!
done
for i in "${!conss[@]}"; do
	wait "${conss[$i]}"
	crc=$?
	res=$(tail -n 1 "$RES/consumer$i.log")
	check "camera $i after fuzzing: 60 valid frames in order ($res)" test "$crc" = 0
	real=$(sed -nE 's/.* real=([0-9]+).*/\1/p' <<<"$res")
	check "camera $i: real frames from the new producer ($real)" test "${real:-0}" -gt 0
done
for i in "${!prods[@]}"; do kill "${prods[$i]}" 2>/dev/null; wait "${prods[$i]}" 2>/dev/null; done
check "rmmod works once everything is closed" rmmod viacam
finish
