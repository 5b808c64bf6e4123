#!/usr/bin/env bash
# run.sh - `make bench`: viacam against Debian's v4l2loopback, side by side in one QEMU guest
# run per kernel, then docs/benchmarks.md and docs/benchmarks.png.
#
# Usage: tools/bench/run.sh      (make bench builds what it needs first)
# Knobs: BENCH_KERNELS (default "6.1 6.12 7.2"), BENCH_TIMEOUT (guest wall limit per kernel, 900 s),
# and the run lengths passed to the guest: BENCH_SIZES, BENCH_FPS_SECONDS, BENCH_LAT30_FRAMES,
# BENCH_LAT60_FRAMES, BENCH_CTRL_SECONDS, BENCH_CONSUMERS_SIZE, BENCH_PARTS (defaults in
# tools/bench/bench-job.sh).
# Results: build/bench/<series>/ (results.txt, output.log, console.log, dmesg.log).
# Exit status: 0 when every guest run and every measurement in it succeeded.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
kernels=${BENCH_KERNELS:-6.1 6.12 7.2}
timeout=${BENCH_TIMEOUT:-900}
t0=$(date +%s)
rc=0
for s in $kernels; do
	out=$src/build/bench/$s
	rm -rf "$out"
	mkdir -p "$out"
	for v in BENCH_SIZES BENCH_FPS_SECONDS BENCH_LAT30_FRAMES BENCH_LAT60_FRAMES BENCH_CTRL_SECONDS \
		BENCH_CONSUMERS_SIZE BENCH_PARTS; do
		[ -n "${!v:-}" ] && printf '%s=%q\n' "$v" "${!v}"
	done >"$out/bench.conf"
	echo "bench: Linux $s: one guest run with viacam and v4l2loopback (a few minutes under TCG)"
	ts=$(date +%s)
	r=0
	"$src/tools/vm/run.sh" --kernel "$s" --results "$out" --timeout "$timeout" \
		"$src/tools/bench/bench-job.sh" >"$out/run.log" 2>&1 || r=$?
	echo "meta host_seconds=$(($(date +%s) - ts))" >>"$out/results.txt"
	grep -E '^(bench|  \[)' "$out/output.log" 2>/dev/null | grep -vE '^  \[.*\] info: (impl|control)' || true
	if [ "$r" != 0 ]; then
		echo "bench: Linux $s: the guest run failed (exit $r); logs in build/bench/$s/" >&2
		tail -n 5 "$out/run.log" >&2 || true
		rc=1
	fi
	echo "bench: Linux $s: $(($(date +%s) - ts)) s"
done
"$src/tools/bench/report.sh" $kernels || rc=1
echo "bench: total $(($(date +%s) - t0)) s"
exit "$rc"
