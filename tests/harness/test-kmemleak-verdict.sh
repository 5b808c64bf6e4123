#!/usr/bin/env bash
# test-kmemleak-verdict.sh - on the lockdep/KASAN/kmemleak kernel, memory that viacam.ko
# loses fails the guest run: the module's test-only fault injection (inject bit 2) leaks
# 64 bytes per camera, and tools/vm/run.sh must exit 126 naming kmemleak. The same script
# without the leak passes, so the verdict comes from the leak and not from the kernel; a run
# in which kmemleak turned itself off fails as well (its silence would prove nothing).
# expected-seconds: 180 (the runner's guess on a fresh machine: long jobs start first)
# needs-kernel: 7.2-debug
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work"
run=$src/tools/vm/run.sh
ok=1

cat >"$work/leak.sh" <<'SCRIPT'
#!/bin/bash
# One camera, made at load time. The module stays loaded, so that kmemleak's backtrace can
# name its functions.
modprobe viacam devices=1 inject="${1:-0}" || exit 1
[ -e /dev/viacam ] || exit 2
echo "module loaded (inject=${1:-0})"
SCRIPT
printf '#!/bin/bash\nexec bash %q 4\n' "$work/leak.sh" >"$work/leak4.sh"
printf '#!/bin/bash\nexec bash %q 0\n' "$work/leak.sh" >"$work/leak0.sh"
# kmemleak turns itself off when it cannot allocate its own records; a run after that would
# find no leak whatever happened, so it must fail too.
printf '#!/bin/bash\necho off >/sys/kernel/debug/kmemleak\n' >"$work/off.sh"

"$run" --kernel 7.2-debug --timeout 400 --results "$work/leak" "$work/leak4.sh" 2>"$work/leak.err" &
p1=$!
"$run" --kernel 7.2-debug --timeout 400 --results "$work/off" "$work/off.sh" 2>"$work/off.err" &
p2=$!
"$run" --kernel 7.2-debug --timeout 400 --results "$work/clean" "$work/leak0.sh" 2>"$work/clean.err"
rc=$?
wait "$p1"; rc_leak=$?
wait "$p2"; rc_off=$?
if [ "$rc_leak" = 126 ] && grep -q 'kmemleak reports 1 unreferenced objects, some allocated by viacam' "$work/leak.err"; then
	echo "ok: a leak in viacam.ko fails the run (exit 126, kmemleak named)"
else
	echo "NOT OK: the leaking run ended with exit $rc_leak:"; cat "$work/leak.err"; ok=0
	echo "its output:"; cat "$work/leak/output.log" 2>/dev/null
	echo "its kmemleak.log ($(wc -c <"$work/leak/kmemleak.log" 2>/dev/null || echo no) bytes):"
	head -n 20 "$work/leak/kmemleak.log" 2>/dev/null
	grep -h kmemleak "$work/leak/dmesg.log" 2>/dev/null | head -n 5
fi
grep -q 'viacam_queues_init' "$work/leak/kmemleak.log" 2>/dev/null &&
	echo "ok: kmemleak.log shows the leaking function" ||
	{ echo "NOT OK: kmemleak.log does not name viacam_queues_init"; ok=0; }
if [ "$rc_off" = 126 ] && grep -q 'vm: kmemleak: kmemleak could not scan' "$work/off.err"; then
	echo "ok: a run in which kmemleak was off fails (exit 126, said so)"
else
	echo "NOT OK: the run with kmemleak off ended with exit $rc_off:"; cat "$work/off.err"; ok=0
fi
if [ "$rc" = 0 ]; then
	echo "ok: the same script without the leak passes"
else
	echo "NOT OK: the clean run ended with exit $rc:"; cat "$work/clean.err"; ok=0
fi
[ "$ok" = 1 ]
