#!/usr/bin/env bash
# test-fuzz-parsers.sh - runs the libFuzzer targets of viacamd's parsers (config file, Y4M)
# for VIACAM_PARSER_FUZZ_SECONDS each (default 20), from seed inputs: the shipped config and a
# small valid clip. A crash, leak, sanitizer report or broken invariant fails the test and
# leaves the input that did it in the work folder (replay: build/fuzz/fuzz-NAME FILE).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
secs=${VIACAM_PARSER_FUZZ_SECONDS:-20}
ok=1
rm -rf "$work/config" "$work/y4m"
mkdir -p "$work/config" "$work/y4m"
cp "$src/conf/viacam.conf" "$work/config/"
printf '[camera a]\nlabel = x\nformats = YUYV NV12\nsizes = 640x480\nrates = 30 7.5\nctrl.hue = 5\n[camera b]\nbackend = file\nfile = /nonexistent.y4m\n' \
	>"$work/config/two.conf"
{ printf 'YUV4MPEG2 W16 H16 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\nFRAME\n'; head -c 384 /dev/zero
  printf 'FRAME Ixyz\n'; head -c 384 /dev/zero; } >"$work/y4m/clip.y4m"
{ printf 'YUV4MPEG2 W16 H16 F25:1 Cmono\nFRAME\n'; head -c 256 /dev/zero; } >"$work/y4m/mono.y4m"
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
