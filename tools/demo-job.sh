#!/bin/bash
# demo-job.sh - the main job, run on a machine (or guest) that can load viacam.ko.
#
# Loads the bridge (no cameras of its own), starts viacamd on conf/demo.conf (the VIA camera
# on the built-in model of the chips), captures a few seconds from the capture node with a
# standard client (ffmpeg -f v4l2) and writes a snapshot PNG. In the guest the PNG lands in
# the results folder (build/run/). On a real machine viacamd keeps running until Ctrl-C.
set -euo pipefail
src=${VIACAM_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
out=${VIACAM_RESULTS:-$src/build/run}
conf=${VIACAM_CONF:-$src/conf/demo.conf}
mkdir -p "$out"
ctl=$src/build/host/viacamctl
if [ "${1:-}" = --host ]; then
	insmod "$src/build/kmod/$(uname -r)/viacam.ko" devices=0 2>/dev/null || modprobe viacam devices=0
else
	modprobe viacam devices=0
fi
echo "== viacam bridge loaded: $("$ctl" version)"
"$src/build/host/viacamd" -c "$conf" 2>"$out/viacamd.log" &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null' EXIT
for _ in $(seq 100); do
	grep -q "viacamd: ready" "$out/viacamd.log" && break
	kill -0 $daemon 2>/dev/null || { cat "$out/viacamd.log"; exit 1; }
	sleep 0.1
done
sed 's/^/   /' "$out/viacamd.log"
cap=$(sed -nE 's/.*created camera .*capture (\/dev\/video[0-9]+).*/\1/p; s/.*adopted camera .*capture (\/dev\/video[0-9]+).*/\1/p' "$out/viacamd.log" | head -n1)
[ -n "$cap" ] || { echo "viacamd created no camera" >&2; exit 1; }
echo "== capturing 3 s from $cap with ffmpeg -f v4l2"
rm -f "$out/snapshot.png"
ffmpeg -nostdin -loglevel error -f v4l2 -framerate 30 -video_size 640x480 -i "$cap" -t 3 \
	-update 1 -y "$out/snapshot.png"
echo "== cameras (id, capture node, backend node, label, state, format, counters, source)"
"$ctl" list
[ -s "$out/snapshot.png" ] || { echo "no snapshot was captured" >&2; exit 1; }
echo "== snapshot captured from $cap with ffmpeg -f v4l2: snapshot.png"
if [ "${1:-}" = --host ]; then
	echo "== viacamd serves $cap until Ctrl-C"
	wait $daemon
fi
