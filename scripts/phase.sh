#!/usr/bin/env bash
# phase.sh NAME COMMAND...: run COMMAND and print its wall time as "== time NAME: N s", so
# the CI log shows where the time of `make check` goes. Exits with COMMAND's status.
name=$1
shift
t0=$(date +%s)
"$@"
rc=$?
echo "== time $name: $(($(date +%s) - t0)) s$([ "$rc" = 0 ] || echo " (exit $rc)")"
exit "$rc"
