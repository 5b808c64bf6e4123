#!/usr/bin/env bash
# test-installed-system.sh - viacam as a user gets it: its Debian packages (tools/build-debs.sh)
# installed with dpkg in a 6.12 guest that then boots with systemd as PID 1 on an overlay of
# the host's root (tools/vm/run.sh --systemd); what is checked there is listed at the top of
# tests/integration/installed-system.sh. The guest's journal is kept as journal.log.
# One vCPU: under single-threaded TCG a second one only takes turns, and DKMS's compile (most
# of the test's time) ran 10% faster without it (318 s against 352 s).
# expected-seconds: 450 (the runner's guess on a fresh machine: long jobs start first)
# needs-kernel: 6.12
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work/guest/debs"
"$src/tools/build-debs.sh" "$work" || { echo "NOT OK: the packages did not build"; exit 1; }
cp "$work"/src/*.deb "$work/guest/debs/"
echo "ok: packages built: $(cd "$work/guest/debs" && echo *.deb)"
"$src/tools/vm/run.sh" --systemd --kernel 6.12 --smp 1 --timeout 900 --results "$work/guest" \
	"$src/tests/integration/installed-system.sh"
rc=$?
grep -E '^(ok|FAIL|NOT OK):' "$work/guest/output.log" 2>/dev/null
[ "$rc" = 0 ] && echo "ok: the installed system passed (guest time $(cat "$work/guest/seconds" 2>/dev/null) s)" ||
	echo "NOT OK: the installed-system guest ended with $rc (results in $work/guest)"
exit "$rc"
