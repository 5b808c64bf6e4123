#!/usr/bin/env bash
# test-fuzz-parsers.sh - runs viacamd's libFuzzer targets for VIACAM_PARSER_FUZZ_SECONDS each
# (default 20; `make fuzz-parsers-nightly`: 600), from the committed seed corpus in
# tests/fuzz/corpus/: its parsers (config file, Y4M) and a session's handling of what the
# bridge tells it (fuzz-session: events, frame slots, swaps, failing ioctls, against a
# stand-in for the bridge). A crash, leak, sanitizer report or broken invariant fails the
# test and leaves the input that did it in the work folder (replay: build/fuzz/fuzz-NAME FILE).
# expected-seconds: 65 (the runner's guess on a fresh machine: long jobs start first)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
secs=${VIACAM_PARSER_FUZZ_SECONDS:-20}
ok=1
targets="config y4m session"
for t in $targets; do
	# The committed seed corpus (tests/fuzz/corpus/), copied: libFuzzer adds what it finds.
	rm -rf "${work:?}/$t"
	mkdir -p "$work/$t"
	cp "$src"/tests/fuzz/corpus/$t/* "$work/$t/"
	bin=$src/build/fuzz/fuzz-$t
	# The session logs what it does on stderr: libFuzzer keeps its own reports.
	quiet=() && [ "$t" = session ] && quiet=(-close_fd_mask=2)
	[ -x "$bin" ] || { echo "NOT OK: $bin is not built (make fuzz)"; ok=0; continue; }
	if (cd "$work" && "$bin" "${quiet[@]}" -max_total_time="$secs" -max_len=4096 -artifact_prefix="$work/$t-" \
		"$work/$t" >"$work/$t.log" 2>&1); then
		echo "ok: fuzz-$t: $(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$work/$t.log" | tail -n1)s, no finding"
	else
		echo "NOT OK: fuzz-$t found a problem; input and log in $work:"
		grep -E 'ERROR|SUMMARY|Test unit written' "$work/$t.log" | head -n 5
		ok=0
	fi
done
[ "$ok" = 1 ]
