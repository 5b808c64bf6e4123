#!/bin/bash
# demo-job.sh - the main job, run on a machine (or guest) that can load viacam.ko.
# Loads the bridge with one camera and shows what an application sees.
set -euo pipefail
src=${VIACAM_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
ctl=$src/build/host/viacamctl
if [ "${1:-}" = --host ]; then
	insmod "$src/build/kmod/$(uname -r)/viacam.ko" 2>/dev/null || modprobe viacam
else
	modprobe viacam
fi
echo "== viacam bridge loaded"
"$ctl" version
echo "== cameras (id, capture node, backend node, label, state, format, counters)"
"$ctl" list
for d in /sys/class/video4linux/video*; do
	[ -e "$d" ] || continue
	echo "$(basename "$d"): $(cat "$d/name")"
done
