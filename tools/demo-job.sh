#!/bin/bash
# demo-job.sh - the main job, run on a machine (or guest) that can load viacam.ko.
#
# Loads the bridge with one camera, feeds it from a producer on the backend node
# (ffmpeg's test source, a plain producer, until viacamd's backends land), and
# captures from the capture node with a standard client (ffmpeg -f v4l2), writing a
# snapshot PNG. In the guest the PNG lands in the results folder (build/run/).
set -euo pipefail
src=${VIACAM_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
out=${VIACAM_RESULTS:-$src/build/run}
mkdir -p "$out"
ctl=$src/build/host/viacamctl
if [ "${1:-}" = --host ]; then
	insmod "$src/build/kmod/$(uname -r)/viacam.ko" 2>/dev/null || modprobe viacam
else
	modprobe viacam
fi
echo "== viacam bridge loaded: $("$ctl" version)"
cap=/dev/$(basename "$(grep -l capture /sys/class/video4linux/video*/viacam_role | head -n 1 | xargs dirname)")
backend=/dev/$(cat "/sys/class/video4linux/$(basename "$cap")/viacam_peer")
echo "== camera 0: capture node $cap (for applications), backend node $backend"
ffmpeg -nostdin -loglevel error -re -f lavfi -i testsrc=size=640x480:rate=30 \
	-pix_fmt yuyv422 -f v4l2 "$backend" &
producer=$!
sleep 3
rm -f "$out/snapshot.png"
ffmpeg -nostdin -loglevel error -f v4l2 -i "$cap" -frames:v 1 -y "$out/snapshot.png"
kill "$producer" 2>/dev/null || true
wait "$producer" 2>/dev/null || true
echo "== cameras (id, capture node, backend node, label, state, format, counters)"
"$ctl" list
[ -s "$out/snapshot.png" ] || { echo "no snapshot was captured" >&2; exit 1; }
echo "== snapshot captured from $cap with ffmpeg -f v4l2: snapshot.png"
