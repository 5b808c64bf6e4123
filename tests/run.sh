#!/usr/bin/env bash
# run.sh - the viacam test runner: unit tests on the host, then host-side checks and the
# integration tests in QEMU guests.
#
# Usage: tests/run.sh [--unit-only]
# Environment knobs:
#   VIACAM_KERNELS   kernel series to test on (default "6.1 6.12 6.12-rt 6.1-debug")
#   VIACAM_MATRIX    ci (default): each integration test runs on the series of its "ci-kernels"
#                    file (when it has one), else on every series of VIACAM_KERNELS;
#                    full: every test on every series (make check-full)
#   VIACAM_JOBS      guests (and host checks) run at once (default: the number of CPUs, at
#                    most 2; each guest is one single-threaded TCG process, see tools/vm/run.sh)
#   TEST_MATCH       only run tests whose name matches this extended regex
#   TEST_SKIP        skip tests whose name matches this extended regex (reported as skipped)
# A test directory may hold "timeout" (seconds, default 300; tripled on *-debug kernels),
# "kernels" (the only series it can run on, e.g. "6.1 6.12") and "ci-kernels" (the series it
# runs on in `make check`; the full matrix ignores it).
#   VIACAM_TEST_TIMEOUT  seconds: replaces every selected test's own timeout file (for long
#                    runs such as make fuzz-nightly; still tripled on the *-debug kernels)
# Test knobs (VIACAM_FUZZ_*, VIACAM_STRESS_*) reach the guest through tools/vm/run.sh.
# Each test prints one line when it ends: PASS/FAIL/SKIP, its name and time. Logs go to
# build/test-results/. Lines "== time NAME: N s" give each phase's wall time. The last line is
# "N passed, N failed" (", N skipped" when any were skipped); the exit status is 1 when
# anything failed. A guest that crashes or hangs fails its own test only.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
out=$src/build/test-results
mkdir -p "$out"
passed=0 failed=0 skipped=0
failures=()
matrix=${VIACAM_MATRIX:-ci}
case "$matrix" in ci|full) ;; *) echo "run.sh: VIACAM_MATRIX must be ci or full, not '$matrix'" >&2; exit 2 ;; esac
jobs=${VIACAM_JOBS:-$(n=$(nproc); [ "$n" -gt 2 ] && n=2; echo "$n")}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: VIACAM_JOBS must be a positive number" >&2; exit 2; }
# Durations of earlier runs, so the longest tests start first.
times_file=${VIACAM_CACHE:-$HOME/.cache/viacam}/test-times
mkdir -p "$(dirname "$times_file")"
touch "$times_file"
run_start=$(date +%s)

phase_time() { echo "== time $1: $2 s"; }

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
t0=$(date +%s)
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
phase_time unit $(($(date +%s) - t0))

if [ "${1:-}" != --unit-only ]; then
	# --- the job list: host checks (scripts that may boot guests themselves) and one fresh
	# guest per integration test and kernel. A job is "KIND NAME SERIES PATH".
	joblist=()
	all_series=${VIACAM_KERNELS:-6.1 6.12 6.12-rt 6.1-debug}
	for t in tests/harness/test-*.sh; do
		[ -f "$t" ] || continue
		name=harness/$(basename "$t" .sh)
		# A host check that boots one kernel series says so ("# needs-kernel: SERIES") and
		# runs when that series is in the run, like the integration tests on it.
		need=$(sed -n 's/^# needs-kernel: *//p' "$t")
		if [ -n "$need" ] && ! grep -qxF "$need" <(tr ' ' '\n' <<<"$all_series"); then
			continue
		fi
		selected "$name" || continue
		joblist+=("harness $name - $t")
	done
	for series in $all_series; do
		if [ -z "$(tools/vm/kernels.sh list "$series")" ]; then
			result "$series/kernel-cache" 1 0 "(kernel $series is not cached: run make kernels)"
			continue
		fi
		for dir in tests/integration/TEST-*/; do
			dir=${dir%/}
			name=$series/$(basename "$dir")
			if [ -f "$dir/kernels" ] && ! grep -qxF "$series" <(tr ' ' '\n' <"$dir/kernels"); then
				continue
			fi
			if [ "$matrix" = ci ] && [ -f "$dir/ci-kernels" ] &&
				! grep -qxF "$series" <(tr ' ' '\n' <"$dir/ci-kernels"); then
				continue
			fi
			selected "$name" || continue
			joblist+=("guest $name $series $dir")
		done
	done
	# Longest first (the last run's time), so the job slots finish together. A job never
	# timed yet (a fresh cache) is guessed from its timeout (tripled on the debug kernel,
	# where tests take about three times as long), a host check as 100 s.
	mapfile -t joblist < <(for j in "${joblist[@]}"; do
		read -r kind name series path <<<"$j"
		secs=$(awk -v n="$name" '$1 == n { s = $2 } END { print s + 0 }' "$times_file")
		if [ "$secs" = 0 ]; then
			if [ "$kind" = harness ]; then
				secs=100
			else
				secs=$(cat "$path/timeout" 2>/dev/null || echo 300)
				case "$series" in *-debug) secs=$((secs * 3)) ;; esac
			fi
		fi
		printf '%s\t%s\n' "$secs" "$j"
	done | sort -t$'\t' -k1,1nr -s | cut -f2-)

	# run_job KIND NAME SERIES PATH: runs in the background; leaves rc and secs in its folder.
	run_job() {
		local kind=$1 name=$2 series=$3 path=$4 res start rc timeout
		res=$out/$name
		rm -rf "$res"
		mkdir -p "$res"
		start=$(date +%s)
		if [ "$kind" = harness ]; then
			bash "$path" "$res/work" >"$res/output.log" 2>&1
			rc=$?
		else
			timeout=${VIACAM_TEST_TIMEOUT:-$(cat "$path/timeout" 2>/dev/null || echo 300)}
			# lockdep + KASAN under TCG: everything takes about three times as long.
			case "$series" in *-debug) timeout=$((timeout * 3)) ;; esac
			tools/vm/run.sh --kernel "$series" --results "$res" --timeout "$timeout" \
				"$path/test.sh" >"$res/harness.log" 2>&1
			rc=$?
		fi
		echo $(($(date +%s) - start)) >"$res/secs"
		echo "$rc" >"$res/rc"
	}
	report_job() { # KIND NAME SERIES PATH
		local kind=$1 name=$2 series=$3 res=$out/$2 rc secs retries
		rc=$(cat "$res/rc" 2>/dev/null || echo 1)
		secs=$(cat "$res/secs" 2>/dev/null || echo 0)
		# Only a passing run's time says how long the job takes (a failure may end at once).
		[ "$rc" = 0 ] && echo "$name $secs" >>"$times_file"
		if [ "$kind" = harness ]; then
			result "$name" "$rc" "$secs" "$res/output.log"
			[ "$rc" = 0 ] || tail -n 5 "$res/output.log" | sed 's/^/     /'
			return
		fi
		result "$name" "$rc" "$secs" "$res/output.log" "$res/summary"
		retries=$(cat "$res/boot-retries" 2>/dev/null || echo 0)
		if [ "$retries" != 0 ]; then
			echo "     vm: the guest kernel faulted while booting, before the test; booted again ($retries retries):"
			grep -m4 'vm:  ' "$res/harness.log" | sed 's/^/     /'
		fi
		if [ "$rc" != 0 ]; then
			sed 's/^/     /' "$res/harness.log" | tail -n 8
			[ -f "$res/output.log" ] && tail -n 15 "$res/output.log" | sed 's/^/     | /'
		fi
	}

	t0=$(date +%s)
	declare -A running=()     # pid -> job
	declare -A series_secs=() # series -> guest seconds spent on it
	for job in "${joblist[@]}" ""; do
		# Wait for a free slot (and, after the last job, for all of them).
		while [ ${#running[@]} -gt 0 ] && { [ -z "$job" ] || [ ${#running[@]} -ge "$jobs" ]; }; do
			done_pid=""
			wait -n -p done_pid "${!running[@]}"
			[ -n "$done_pid" ] || break
			read -r kind name series path <<<"${running[$done_pid]}"
			unset "running[$done_pid]"
			report_job "$kind" "$name" "$series" "$path"
			s=$(cat "$out/$name/secs" 2>/dev/null || echo 0)
			series_secs[$series]=$((${series_secs[$series]:-0} + s))
		done
		[ -n "$job" ] || break
		read -r kind name series path <<<"$job"
		run_job "$kind" "$name" "$series" "$path" &
		running[$!]=$job
	done
	# Keep the newest time of each test only.
	awk '{ t[$1] = $2 } END { for (n in t) print n, t[n] }' "$times_file" | sort >"$times_file.new" &&
		mv "$times_file.new" "$times_file"
	for s in "${!series_secs[@]}"; do
		[ "$s" = - ] && phase_time "host checks (sum over jobs)" "${series_secs[$s]}" ||
			phase_time "kernel $s (sum over its tests)" "${series_secs[$s]}"
	done
	phase_time "host checks and integration tests ($jobs at once)" $(($(date +%s) - t0))
fi
phase_time "tests/run.sh" $(($(date +%s) - run_start))

[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]}"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
