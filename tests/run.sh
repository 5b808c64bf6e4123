#!/usr/bin/env bash
# run.sh - the viacam test runner: unit tests on the host, then host-side checks and the
# integration tests in QEMU guests.
#
# Usage: tests/run.sh [--unit-only]
# Environment knobs:
#   VIACAM_KERNELS   kernel series to test on (default "6.1 6.12 6.12-rt 7.2 7.2-debug")
#   VIACAM_MATRIX    ci (default): each integration test runs on the series of its "ci-kernels"
#                    file (when it has one), else on every series of VIACAM_KERNELS;
#                    full: every test on every series (make check-full)
#   VIACAM_JOBS      guests (and host checks) run at once (default: the number of CPUs, at
#                    most 2; each guest is one single-threaded TCG process, see tools/vm/run.sh)
#   TEST_MATCH       only run tests whose name matches this extended regex
#   TEST_SKIP        skip tests whose name matches this extended regex (reported as skipped)
#   VIACAM_TESTS     folder of the integration tests (default tests/integration), VIACAM_OUT
#                    of the results (default build/test-results), VIACAM_TIMES of the times of
#                    earlier runs (default ~/.cache/viacam/test-times): for the runner's own test
# A test directory may hold "timeout" (seconds, default 300; tripled on *-debug kernels),
# "kernels" (the only series it can run on, e.g. "6.1 6.12"), "ci-kernels" (the series it
# runs on in `make check`; the full matrix ignores it) and "shared" (it may share a guest: the
# shared tests of a series run one after another in one guest, see
# tests/integration/shared-guest.sh; each still gets its own result; VIACAM_SHARED=0 gives
# each test a guest of its own).
#   VIACAM_TEST_TIMEOUT  seconds: replaces every selected test's own timeout file (for long
#                    runs such as make fuzz-nightly; still tripled on the *-debug kernels)
# Test knobs (VIACAM_FUZZ_*, VIACAM_STRESS_*, VIACAM_HOSTILE_*) reach the guest through
# tools/vm/run.sh.
# Each test prints one line when it ends: PASS/FAIL/SKIP, its name and time. Logs go to
# build/test-results/. Lines "== time NAME: N s" give each phase's wall time. The last line is
# "N passed, N failed" (", N skipped" when any were skipped); the exit status is 1 when
# anything failed. A guest that crashes or hangs fails its own test only.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
out=${VIACAM_OUT:-$src/build/test-results}
tests_dir=${VIACAM_TESTS:-tests/integration}
mkdir -p "$out"
passed=0 failed=0 skipped=0
failures=()
matrix=${VIACAM_MATRIX:-ci}
case "$matrix" in ci|full) ;; *) echo "run.sh: VIACAM_MATRIX must be ci or full, not '$matrix'" >&2; exit 2 ;; esac
jobs=${VIACAM_JOBS:-$(n=$(nproc); [ "$n" -gt 2 ] && n=2; echo "$n")}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: VIACAM_JOBS must be a positive number" >&2; exit 2; }
# Durations of earlier runs, so the longest tests start first.
times_file=${VIACAM_TIMES:-${VIACAM_CACHE:-$HOME/.cache/viacam}/test-times}
mkdir -p "$(dirname "$times_file")"
touch "$times_file"
run_start=$(date +%s)

# phase_time WHAT SECONDS [CPU_SECONDS]
phase_time() {
	if [ -n "${3:-}" ]; then
		echo "== time $1: $2 s (CPU $3 s, $(awk -v c="$3" -v w="$2" 'BEGIN { printf "%.2f", w ? c / w : 0 }') cores)"
	else
		echo "== time $1: $2 s"
	fi
}

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
	[ -f "$t" ] && [ -x "$t" ] || continue
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
	all_series=${VIACAM_KERNELS:-6.1 6.12 6.12-rt 7.2 7.2-debug}
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
		shared=()
		for dir in "$tests_dir"/TEST-*/; do
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
			if [ -f "$dir/shared" ] && [ "${VIACAM_SHARED:-1}" = 1 ]; then
				shared+=("$dir")
			else
				joblist+=("guest $name $series $dir")
			fi
		done
		# The tests with a "shared" file run one after another in one guest per series.
		if [ ${#shared[@]} -ge 2 ]; then
			joblist+=("group $series/shared-guest $series $(IFS=,; echo "${shared[*]}")")
		elif [ ${#shared[@]} = 1 ]; then
			joblist+=("guest $series/$(basename "${shared[0]}") $series ${shared[0]}")
		fi
	done
	# Longest first (the last run's time), so the job slots finish together. A job never
	# timed yet (a fresh cache) is guessed from its timeout (tripled on the debug kernel,
	# where tests take about three times as long), a host check from its header line
	# "# expected-seconds: N" (else 100 s; the 7-minute installed-system check guessed so
	# would start among the last jobs and run alone at the end).
	mapfile -t joblist < <(for j in "${joblist[@]}"; do
		read -r kind name series path <<<"$j"
		secs=$(awk -v n="$name" '$1 == n { s = $2 } END { print s + 0 }' "$times_file")
		if [ "$secs" = 0 ]; then
			if [ "$kind" = harness ]; then
				secs=$(sed -n 's/^# expected-seconds: *\([0-9]*\).*/\1/p' "$path" | head -n 1)
				secs=${secs:-100}
			elif [ "$kind" = group ]; then
				secs=$(for d in ${path//,/ }; do cat "$d/timeout" 2>/dev/null || echo 300; done |
					awk '{ s += $1 } END { print s }')
				case "$series" in *-debug) secs=$((secs * 3)) ;; esac
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
		elif [ "$kind" = group ]; then
			# Each test keeps its own time limit inside the guest; the guest gets their sum.
			local d t total=60
			: >"$res/tests.list"
			for d in ${path//,/ }; do
				t=${VIACAM_TEST_TIMEOUT:-$(cat "$d/timeout" 2>/dev/null || echo 300)}
				case "$series" in *-debug) t=$((t * 3)) ;; esac
				echo "$t $(cd "$d" && pwd)" >>"$res/tests.list"
				total=$((total + t))
			done
			VIACAM_VM_KEEP=$(cut -d' ' -f2- "$res/tests.list" | paste -sd:) \
				tools/vm/run.sh --kernel "$series" --results "$res" --timeout "$total" \
				tests/integration/shared-guest.sh >"$res/harness.log" 2>&1
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
		# CPU seconds of everything the job ran (its guests included): how much of its time a
		# job keeps a core busy, which says whether more job slots would pay.
		# (times into a file, not a pipe: in a pipe it runs in a fork that has no children yet)
		times >"$res/times"
		awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] }
			printf "%d\n", s }' "$res/times" >"$res/cpu"
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
		if [ "$kind" = group ]; then
			report_group "$series" "$res" "$rc" "$path"
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

	# report_group SERIES RES RC DIRS: one result per test of a shared guest. A test fails on
	# its own exit status, or on a kernel report in its part of the guest's log (between its
	# "viacam-vm: test NAME starts/ends" lines), or when the guest ended before it did. A guest
	# that failed (a report outside every test's part, a kmemleak report at the end, a crash)
	# while each test passed gives a failure of its own, SERIES/shared-guest.
	report_group() {
		local series=$1 res=$2 grc=$3 dirs=$4 d t name m rc secs log any_failed=0 retries
		retries=$(cat "$res/boot-retries" 2>/dev/null || echo 0)
		[ "$retries" != 0 ] &&
			echo "     vm: the $series guest kernel faulted while booting, before the tests; booted again ($retries retries)"
		log=$res/dmesg.log
		[ -s "$log" ] || log=$res/console.log
		for d in ${dirs//,/ }; do
			t=$(basename "$d")
			name=$series/$t
			m=$res/$t
			mkdir -p "$m"
			rm -rf "${out:?}/$name" && ln -s "shared-guest/$t" "$out/$name"
			rc=$(cat "$m/rc" 2>/dev/null)
			secs=$(cat "$m/secs" 2>/dev/null || echo 0)
			if [ -z "$rc" ]; then
				rc=$grc
				[ "$rc" = 0 ] && rc=1
				echo "the shared guest ended (exit $grc) before this test did" >>"$m/output.log"
			fi
			awk -v s="viacam-vm: test $t starts" -v e="viacam-vm: test $t ends" \
				'index($0, s) { on = 1 } on { print } index($0, e) { on = 0 }' "$log" >"$m/kernel.log"
			if ! build/host/logscan --kernel-lines "$m/kernel.log" >"$m/scan.log" 2>&1; then
				[ "$rc" = 0 ] && rc=126
			fi
			[ "$rc" = 0 ] && echo "$name $secs" >>"$times_file" || any_failed=1
			result "$name" "$rc" "$secs" "$m/output.log" "$m/summary"
			if [ "$rc" != 0 ]; then
				[ -s "$m/scan.log" ] && sed 's/^/     kernel: /' "$m/scan.log" | head -n 8
				tail -n 15 "$m/output.log" | sed 's/^/     | /'
			fi
		done
		if [ "$grc" != 0 ] && [ "$any_failed" = 0 ]; then
			result "$series/shared-guest" "$grc" "$(cat "$res/secs" 2>/dev/null || echo 0)" "$res/harness.log"
			sed 's/^/     /' "$res/harness.log" | tail -n 8
		fi
	}

	t0=$(date +%s)
	declare -A running=()     # pid -> job
	declare -A series_secs=() # series -> guest seconds spent on it
	declare -A series_cpu=()  # series -> CPU seconds spent on it
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
			s=$(cat "$out/$name/cpu" 2>/dev/null || echo 0)
			series_cpu[$series]=$((${series_cpu[$series]:-0} + ${s:-0}))
		done
		[ -n "$job" ] || break
		read -r kind name series path <<<"$job"
		run_job "$kind" "$name" "$series" "$path" &
		running[$!]=$job
	done
	# Keep the newest time of each test only.
	awk '{ t[$1] = $2 } END { for (n in t) print n, t[n] }' "$times_file" | sort >"$times_file.new" &&
		mv "$times_file.new" "$times_file"
	cpu_all=0
	for s in "${!series_secs[@]}"; do
		cpu_all=$((cpu_all + ${series_cpu[$s]:-0}))
		[ "$s" = - ] && phase_time "host checks (sum over jobs)" "${series_secs[$s]}" "${series_cpu[$s]:-0}" ||
			phase_time "kernel $s (sum over its tests)" "${series_secs[$s]}" "${series_cpu[$s]:-0}"
	done
	phase_time "host checks and integration tests ($jobs at once)" $(($(date +%s) - t0)) "$cpu_all"
fi
phase_time "tests/run.sh" $(($(date +%s) - run_start))

[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]}"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
