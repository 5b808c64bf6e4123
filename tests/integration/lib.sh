# lib.sh - helpers for the guest-side integration tests (sourced by each test.sh).
set -u
BIN=$VIACAM_BUILD/host
RES=$VIACAM_RESULTS
failures=0

# Each verdict also goes to $RES/check-times with the test's elapsed seconds, to show where a
# test spends its time.
fail() { echo "FAIL: $*"; echo "$SECONDS FAIL: $*" >>"$RES/check-times"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; echo "$SECONDS ok: $*" >>"$RES/check-times"; }
check() { # DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() {
	[ "$failures" = 0 ] && { echo "all checks passed"; exit 0; }
	echo "$failures check(s) failed"; exit 1
}
die() { echo "FAIL: $*"; exit 1; }
wait_for() { # SECONDS COMMAND...: until COMMAND succeeds
	local i n=$(($1 * 10))
	shift
	for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done
	return 1
}
not() { ! "$@"; }

# Node of camera ID: cam_node capture|backend ID [INDEX] -> /dev/videoN (INDEX: which
# capture node, from 0, the default)
cam_node() { # ROLE ID [INDEX]
	local d
	for d in /sys/class/video4linux/video*; do
		[ "$(cat "$d/viacam_id" 2>/dev/null)" = "$2" ] &&
			[ "$(cat "$d/viacam_role")" = "$1" ] &&
			{ [ "$1" = backend ] || [ "$(cat "$d/viacam_index")" = "${3:-0}" ]; } &&
			{ echo "/dev/$(basename "$d")"; return 0; }
	done
	return 1
}

# compliance_gate LOG: 0 failures and 0 warnings, except the two messages that Debian's
# v4l2-compliance 1.22.1 prints for every driver on these kernels (see README).
compliance_gate() {
	local log=$1 totals failed warnings other
	totals=$(grep -E '^Total for ' "$log" | tail -n 1)
	[ -n "$totals" ] || { echo "no totals in $log"; return 1; }
	failed=$(sed -nE 's/.*Failed: ([0-9]+).*/\1/p' <<<"$totals")
	warnings=$(sed -nE 's/.*Warnings: ([0-9]+).*/\1/p' <<<"$totals")
	other=$(grep -E '^\s*(fail|warn):' "$log" |
		grep -vE 'fmtdesc\.description mismatch|check_0\(crbufs\.reserved, sizeof\(crbufs\.reserved\)\)' || true)
	echo "$totals"
	[ -n "$other" ] && { echo "unexpected:"; echo "$other"; }
	local tolerated
	tolerated=$(grep -cE '^\s*fail:.*(fmtdesc\.description mismatch|check_0\(crbufs\.reserved)' "$log")
	[ -z "$other" ] && [ "$warnings" = 0 ] && [ "$failed" -le "$tolerated" ]
}

# compliance_run DEVICE LOG [TIMEOUT]: v4l2-compliance -s on DEVICE into LOG. Its "test
# read/write" reads one byte without blocking right after the read() emulation starts the
# stream, twice (the second time after reopening), and wants both answers alike: EAGAIN,
# or a byte when a frame is there at once. With a producer streaming, a frame can arrive
# between the two (the bridge hands a waiting frame to a new stream from its worker), so
# the answers differ now and then (seen once in CI on 6.1). When that comparison is the only
# unexpected failure, the run is repeated, at most twice; LOG.retries says how often.
compliance_run() {
	compliance_retry "$2" 'fmtdesc\.description mismatch|check_0\(crbufs\.reserved' \
		timeout "${3:-300}" v4l2-compliance -d "$1" -s
}

# compliance_retry LOG TOLERATED CMD...: runs CMD into LOG, again (at most twice) while the
# raced read/write comparison is its only fail/warn line beside those TOLERATED matches.
compliance_retry() {
	local log=$1 tolerated=${2:-^$} n
	shift 2
	for n in 0 1 2; do
		"$@" >"$log" 2>&1
		grep -E '^\s*(fail|warn):' "$log" | grep -vE "$tolerated" |
			grep -qvE 'v4l2-test-buffers\.cpp\([0-9]+\): ret2 != ret \|\| err2 != err' && break
		grep -qE 'ret2 != ret \|\| err2 != err' "$log" || break
		[ "$n" -lt 2 ] && echo "run $((n + 1)): test read/write raced a frame; again" >>"$log.retries"
	done
	return 0
}

# v4l2_compliance_new [timeout SECONDS] ARG...: the newest v4l2-compliance Debian has
# (sid's, 1.32 when written), from the cached sid root (tools/vm/sid-root.sh) with that
# root's own loader and libraries; the guest's /dev and /sys as they are.
v4l2_compliance_new() {
	local r=${VIACAM_SID_ROOT:-} t=()
	[ "${1:-}" = timeout ] && { t=(timeout "$2"); shift 2; }
	if [ -z "$r" ] || [ ! -x "$r/usr/bin/v4l2-compliance" ]; then
		echo "no sid root with v4l2-compliance (make kernels makes it)"
		return 127
	fi
	"${t[@]}" "$r/usr/lib64/ld-linux-x86-64.so.2" --library-path "$r/usr/lib/x86_64-linux-gnu" \
		"$r/usr/bin/v4l2-compliance" "$@"
}

# compliance_run_new DEVICE LOG TIMEOUT ARG...: the newest v4l2-compliance with ARGs on
# DEVICE into LOG, with compliance_run's repeat of a raced read/write comparison.
compliance_run_new() {
	compliance_retry "$2" '' v4l2_compliance_new timeout "$3" -d "$1" "${@:4}"
}

# compliance_gate_new LOG: the newest v4l2-compliance's verdict, nothing tolerated: a
# version line of 1.32 or later, totals, 0 failures, 0 warnings, no fail/warn line.
compliance_gate_new() {
	local log=$1 totals
	totals=$(grep -E '^Total for ' "$log" | tail -n 1)
	[ -n "$totals" ] || { echo "no totals in $log: $(tail -n 3 "$log" | tr '\n' ' ')"; return 1; }
	echo "$(sed -nE 's/^v4l2-compliance ([0-9.]+).*/\1/p' "$log" | head -n 1): $totals"
	grep -E '^\s*(fail|warn):' "$log" && return 1
	grep -qE 'Failed: 0, Warnings: 0' <<<"$totals"
}

load_viacam() {
	modprobe viacam "$@" || die "modprobe viacam $*"
}

# cam_stats CAPNODE KEY...: the values of KEYs in the node's viacam_stats, in that order, from
# one read (the bridge takes them together under its lock; reading twice lets frames pass)
cam_stats() {
	local node=$1
	shift
	awk -v keys="$*" 'BEGIN { n = split(keys, k, " ") } { v[$1] = $2 }
		END { for (i = 1; i <= n; i++) printf "%s%s", v[k[i]], (i < n ? " " : "\n") }' \
		"/sys/class/video4linux/$(basename "$node")/viacam_stats"
}

# viacamd_lent LOG: the most frames a viacamd session made in consumers' own buffers
# (VIACAM_IOC_LEND), from its "last consumer stopped" lines in LOG; empty if none
viacamd_lent() {
	sed -nE "s/.*slots skipped\), ([0-9]+) of them made in a consumer's own buffer.*/\1/p" "$1" |
		sort -n | tail -n 1
}

# frames_in of the camera whose capture node is $1
frames_in() { cam_stats "$1" frames_in; }

# wait_frames_in CAPNODE MIN SECONDS: until the backend has queued more than MIN frames
# (producers start slowly under TCG, more so while the host is busy).
wait_frames_in() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(frames_in "$1")" -gt "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
