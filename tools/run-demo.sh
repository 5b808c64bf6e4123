#!/usr/bin/env bash
# run-demo.sh - `make run`: bring up the bridge on the embedded default.
#
# Where the running kernel can load our module (its build directory exists and we are
# root), the module is built for it and the bridge is loaded on this machine. Otherwise (as
# on our build machines) the same job runs inside the QEMU guest on one cached Debian kernel
# (KERNEL, default 6.12; fetched into the cache when missing, nothing else is), with the
# module built for it, and what it produced is left in build/run/.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
kver=$(uname -r)
series=${KERNEL:-6.12}
hostkdir=/lib/modules/$kver/build
if [ -f "$hostkdir/Makefile" ] && [ "$(id -u)" = 0 ] && [ "${VIACAM_RUN_IN_GUEST:-0}" != 1 ]; then
	"$src/tools/build-kmod.sh" "$hostkdir"
	echo "run: loading the bridge on this machine ($kver)"
	exec bash "$src/tools/demo-job.sh" --host
fi
echo "run: this kernel ($kver) cannot load viacam.ko here; running the job in a QEMU guest ($series)"
"$src/tools/vm/kernels.sh" fetch "$series"
"$src/tools/build-kmod.sh" "$("$src/tools/vm/kernels.sh" kdir "$series")"
out=$src/build/run
rm -rf "$out"
mkdir -p "$out"
rc=0
"$src/tools/vm/run.sh" --kernel "$series" --results "$out" --timeout 300 \
	"$src/tools/demo-job.sh" || rc=$?
cat "$out/output.log" 2>/dev/null || true
[ -f "$out/snapshot.png" ] && echo "run: snapshot: $out/snapshot.png"
echo "run: guest logs in ${out#$src/}/ (console.log, output.log, dmesg.log)"
exit "$rc"
