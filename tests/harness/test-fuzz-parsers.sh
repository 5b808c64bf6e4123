#!/usr/bin/env bash
# test-fuzz-parsers.sh - runs the libFuzzer targets of viacamd's parsers (config file, Y4M)
# for VIACAM_PARSER_FUZZ_SECONDS each (default 20; `make fuzz-parsers-nightly`: 600), from the
# committed seed corpus in tests/fuzz/corpus/. A crash, leak, sanitizer report or broken invariant fails the test and
# leaves the input that did it in the work folder (replay: build/fuzz/fuzz-NAME FILE).
# expected-seconds: 45 (the runner's guess on a fresh machine: long jobs start first)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
secs=${VIACAM_PARSER_FUZZ_SECONDS:-20}
ok=1
rm -rf "$work/config" "$work/y4m"
mkdir -p "$work/config" "$work/y4m"
# The committed seed corpus (tests/fuzz/corpus/), copied: libFuzzer adds what it finds.
cp "$src"/tests/fuzz/corpus/config/* "$work/config/"
cp "$src"/tests/fuzz/corpus/y4m/* "$work/y4m/"
for t in config y4m; do
	bin=$src/build/fuzz/fuzz-$t
	[ -x "$bin" ] || { echo "NOT OK: $bin is not built (make fuzz)"; ok=0; continue; }
	if (cd "$work" && "$bin" -max_total_time="$secs" -max_len=4096 -artifact_prefix="$work/$t-" \
		"$work/$t" >"$work/$t.log" 2>&1); then
		echo "ok: fuzz-$t: $(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$work/$t.log" | tail -n1)s, no finding"
	else
		echo "NOT OK: fuzz-$t found a problem; input and log in $work:"
		grep -E 'ERROR|SUMMARY|Test unit written' "$work/$t.log" | head -n 5
		ok=0
	fi
done
[ "$ok" = 1 ]
