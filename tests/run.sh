#!/usr/bin/env bash
# run.sh - the viacam test runner: unit tests on the host, then integration tests in QEMU.
#
# Usage: tests/run.sh [--unit-only]
# Environment knobs:
#   VIACAM_KERNELS   kernel series to test on (default "6.1 6.12 6.12-rt 6.1-debug")
#   TEST_MATCH       only run tests whose name matches this extended regex
#   TEST_SKIP        skip tests whose name matches this extended regex (reported as skipped)
# A test directory may hold "timeout" (seconds, default 300; tripled on *-debug kernels) and
# "kernels" (the series it runs on, e.g. "6.1 6.12"; default: every series of the matrix).
#   VIACAM_TEST_TIMEOUT  seconds: replaces every selected test's own timeout file (for long
#                    runs such as make fuzz-nightly; still tripled on the *-debug kernels)
# Test knobs (VIACAM_FUZZ_*, VIACAM_STRESS_*) reach the guest through tools/vm/run.sh.
# Each test prints one line: PASS/FAIL/SKIP, its name and time. Logs go to build/test-results/.
# The last line is "N passed, N failed" (", N skipped" when any were skipped); the exit
# status is 1 when anything failed. A guest that crashes or hangs fails its own test only.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
out=$src/build/test-results
mkdir -p "$out"
passed=0 failed=0 skipped=0
failures=()

selected() {
	if [ -n "${TEST_MATCH:-}" ] && ! [[ $1 =~ $TEST_MATCH ]]; then return 1; fi
	if [ -n "${TEST_SKIP:-}" ] && [[ $1 =~ $TEST_SKIP ]]; then
		echo "SKIP $1 (TEST_SKIP)"
		skipped=$((skipped + 1))
		return 1
	fi
	return 0
}

# result NAME RC SECONDS LOG [SUMMARY_FILE]
result() {
	local name=$1 rc=$2 secs=$3 log=$4 summary=${5:-}
	if [ "$rc" = 0 ]; then
		echo "PASS $name (${secs}s)"
		passed=$((passed + 1))
	else
		echo "FAIL $name (${secs}s, exit $rc; log: ${log#$src/})"
		failed=$((failed + 1))
		failures+=("$name")
	fi
	if [ -n "$summary" ] && [ -s "$summary" ]; then
		sed 's/^/     /' "$summary"
	fi
}

# --- unit tests (host, ASan/UBSan builds) ---
for t in build/asan/tests/test-*; do
	[ -x "$t" ] || continue
	name=unit/$(basename "$t")
	selected "$name" || continue
	log=$out/unit/$(basename "$t").log
	mkdir -p "$(dirname "$log")"
	start=$(date +%s)
	"$t" >"$log" 2>&1
	rc=$?
	result "$name" "$rc" $(($(date +%s) - start)) "$log"
	[ "$rc" = 0 ] || grep -E '^\[  (FAILED|ERROR) |FAIL|error' "$log" | head -n 10 | sed 's/^/     /'
done

if [ "${1:-}" != --unit-only ]; then
	# --- harness self-tests (host scripts that boot guests themselves) ---
	for t in tests/harness/test-*.sh; do
		[ -f "$t" ] || continue
		name=harness/$(basename "$t" .sh)
		selected "$name" || continue
		log=$out/harness/$(basename "$t" .sh).log
		mkdir -p "$(dirname "$log")"
		start=$(date +%s)
		bash "$t" "$out/harness/$(basename "$t" .sh)" >"$log" 2>&1
		rc=$?
		result "$name" "$rc" $(($(date +%s) - start)) "$log"
		[ "$rc" = 0 ] || tail -n 5 "$log" | sed 's/^/     /'
	done

	# --- integration tests: one fresh guest per test and kernel ---
	for series in ${VIACAM_KERNELS:-6.1 6.12 6.12-rt 6.1-debug}; do
		if [ -z "$(tools/vm/kernels.sh list "$series")" ]; then
			name=$series/kernel-cache
			result "$name" 1 0 "(kernel $series is not cached: run make kernels)"
			continue
		fi
		for dir in tests/integration/TEST-*/; do
			dir=${dir%/}
			name=$series/$(basename "$dir")
			# A test's "kernels" file, when present, names the series it belongs to.
			if [ -f "$dir/kernels" ] && ! grep -qxF "$series" <(tr ' ' '\n' <"$dir/kernels"); then
				continue
			fi
			selected "$name" || continue
			res=$out/$series/$(basename "$dir")
			rm -rf "$res"
			mkdir -p "$res"
			timeout=${VIACAM_TEST_TIMEOUT:-$(cat "$dir/timeout" 2>/dev/null || echo 300)}
			# lockdep + KASAN under TCG: everything takes about three times as long.
			case "$series" in *-debug) timeout=$((timeout * 3)) ;; esac
			start=$(date +%s)
			tools/vm/run.sh --kernel "$series" --results "$res" --timeout "$timeout" \
				"$dir/test.sh" >"$res/harness.log" 2>&1
			rc=$?
			result "$name" "$rc" $(($(date +%s) - start)) "$res/output.log" "$res/summary"
			retries=$(cat "$res/boot-retries" 2>/dev/null || echo 0)
			if [ "$retries" != 0 ]; then
				echo "     vm: the guest kernel faulted while booting, before the test; booted again ($retries retries):"
				grep -m4 'vm:  ' "$res/harness.log" | sed 's/^/     /'
			fi
			if [ "$rc" != 0 ]; then
				sed 's/^/     /' "$res/harness.log" | tail -n 8
				[ -f "$res/output.log" ] && tail -n 15 "$res/output.log" | sed 's/^/     | /'
			fi
		done
	done
fi

[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]}"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
