#!/usr/bin/env bash
# run-demo.sh - `make run`: bring up the bridge on the embedded default.
#
# Where the running kernel can load our module (its build directory exists and
# the module was built for it), the bridge is loaded on this machine. Otherwise
# (as on our build machines) the same job runs inside the QEMU guest on the
# newest cached kernel (KERNEL=6.1 to choose another), and what it produced is
# left in build/run/.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
kver=$(uname -r)
if [ -f "$src/build/kmod/$kver/viacam.ko" ] && [ "$(id -u)" = 0 ]; then
	echo "run: loading the bridge on this machine ($kver)"
	exec bash "$src/tools/demo-job.sh" --host
fi
out=$src/build/run
rm -rf "$out"
mkdir -p "$out"
echo "run: this kernel ($kver) cannot load viacam.ko here; running the job in a QEMU guest"
rc=0
"$src/tools/vm/run.sh" --kernel "${KERNEL:-6.12}" --results "$out" --timeout 300 \
	"$src/tools/demo-job.sh" || rc=$?
cat "$out/output.log" 2>/dev/null || true
[ -f "$out/snapshot.png" ] && echo "run: snapshot: $out/snapshot.png"
echo "run: guest logs in ${out#$src/}/ (console.log, output.log, dmesg.log)"
exit "$rc"
