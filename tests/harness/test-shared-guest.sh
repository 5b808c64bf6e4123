#!/usr/bin/env bash
# test-shared-guest.sh - tests/run.sh runs the tests that have a "shared" file in one guest per
# kernel series, and still judges each on its own: in one 6.12 guest, a test that passes; one
# that puts a kernel WARNING in the log and exits 0 (must fail, and only it); one that hangs
# past its timeout (must fail with 124 while the next still runs); one that leaves a process
# and a module behind (must pass, and the test after it must find neither). The runner's
# counts line must say 3 passed, 2 failed.
# expected-seconds: 40 (the runner's guess on a fresh machine: long jobs start first)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work/tests"
ok=1
bad() { echo "NOT OK: $*"; ok=0; }

mk() { # NAME TIMEOUT BODY
	mkdir -p "$work/tests/$1"
	printf '#!/bin/bash\n%s\n' "$3" >"$work/tests/$1/test.sh"
	echo "$2" >"$work/tests/$1/timeout"
	: >"$work/tests/$1/shared"
}
mk TEST-A-pass 60 'echo "a ran"; exit 0'
mk TEST-B-warn 60 'echo "WARNING: CPU: 0 PID: 1 at fake.c:1 injected by test-shared-guest" >/dev/kmsg; exit 0'
mk TEST-C-hang 10 'echo "c hangs"; sleep 100000'
mk TEST-D-litter 60 'modprobe vivid n_devs=1 || exit 1
setsid sleep 100000 </dev/null >/dev/null 2>&1 &
echo "d leaves vivid and a sleep behind"; exit 0'
mk TEST-E-clean 60 'grep -q "^vivid " /proc/modules && { echo "vivid is still loaded"; exit 1; }
pgrep -x sleep >/dev/null && { echo "a sleep of an earlier test still runs"; exit 1; }
echo "e found a clean guest"; exit 0'

VIACAM_TESTS=$work/tests VIACAM_OUT=$work/out VIACAM_TIMES=$work/times VIACAM_KERNELS=6.12 \
	TEST_MATCH='^6\.12/' "$src/tests/run.sh" >"$work/run.log" 2>&1
rc=$?
cat "$work/run.log"
[ "$rc" = 1 ] && echo "ok: the runner exits 1" || bad "the runner exited $rc, expected 1"
grep -qx '3 passed, 2 failed' "$work/run.log" && echo "ok: 3 passed, 2 failed" || bad "wrong counts line"
for t in A-pass D-litter E-clean; do
	grep -q "^PASS 6.12/TEST-$t " "$work/run.log" && echo "ok: TEST-$t passes" || bad "TEST-$t did not pass"
done
grep -q '^FAIL 6.12/TEST-B-warn .*exit 126' "$work/run.log" && echo "ok: the WARNING fails TEST-B (126)" ||
	bad "TEST-B-warn did not fail with 126"
grep -q 'kernel: .*injected by test-shared-guest' "$work/run.log" && echo "ok: the WARNING line is shown" ||
	bad "the WARNING line is not shown"
grep -q '^FAIL 6.12/TEST-C-hang .*exit 124' "$work/run.log" && echo "ok: the hang fails TEST-C (124)" ||
	bad "TEST-C-hang did not fail with 124"
[ "$(grep -c 'shared-guest.*starts' "$work/out/6.12/shared-guest/console.log")" = 5 ] &&
	echo "ok: all five ran in one guest" || bad "not all five tests ran in the one guest"
[ -L "$work/out/6.12/TEST-A-pass" ] && [ -s "$work/out/6.12/TEST-A-pass/output.log" ] &&
	echo "ok: each test's results are at their usual place" || bad "no results at out/6.12/TEST-A-pass"
[ "$ok" = 1 ]
