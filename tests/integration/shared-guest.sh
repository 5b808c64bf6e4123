#!/bin/bash
# shared-guest.sh - runs several integration tests one after another in one guest (tests/run.sh
# groups the tests that have a "shared" file, per kernel series, to save a boot each).
#
# $VIACAM_RESULTS/tests.list has a line "SECONDS FOLDER" per test (its timeout, as tests/run.sh
# works it out for a guest of its own). Each test runs as it would in a guest of its own: its
# own results folder ($VIACAM_RESULTS/<test>, which becomes its VIACAM_RESULTS), its own
# session, its own time limit. Afterwards every process of that session is killed and the
# modules the tests load are unloaded, so the next test starts from the state of a fresh
# guest as far as viacam can tell. Kernel log lines "viacam-vm: test <name> starts" / "...
# ends" bound each test's part of the log, by which tests/run.sh judges its kernel reports.
# Each test's folder gets rc (its exit status; 124 on timeout) and secs. The exit status is 0
# when every test passed.
set -u
list=$VIACAM_RESULTS/tests.list
[ -f "$list" ] || { echo "shared-guest: no $list"; exit 2; }
all_rc=0
my_sid=$(ps -o sid= -p $$ | tr -d ' ')
init_sid=$(ps -o sid= -p 1 | tr -d ' ')
strays() {
	ps -e -o pid=,sid=,ppid= | while read -r pid sid ppid; do
		if [ "$pid" = 2 ] || [ "$ppid" = 2 ] || [ "$sid" = "$my_sid" ] || [ "$sid" = "$init_sid" ]; then
			continue
		fi
		echo "$pid"
	done
}
while read -r limit dir; do
	[ -n "$dir" ] || continue
	name=$(basename "$dir")
	res=$VIACAM_RESULTS/$name
	mkdir -p "$res"
	echo "viacam-vm: test $name starts" >/dev/kmsg
	echo "shared-guest: $name starts (timeout ${limit}s)"
	start=$(date +%s)
	VIACAM_RESULTS=$res timeout -s KILL "$limit" setsid bash "$dir/test.sh" \
		>"$res/output.log" 2>&1 </dev/null
	rc=$?
	[ "$rc" = 137 ] && rc=124
	# What the test left running goes: every process outside this script's session and
	# init's (the test ran in a session of its own, and may have made more), but kernel
	# threads. Then wait until they are gone, so that their open nodes are closed.
	for _ in $(seq 50); do
		left=$(strays)
		[ -z "$left" ] && break
		# shellcheck disable=SC2086 # one pid per word
		kill -KILL $left 2>/dev/null
		sleep 0.1
	done
	# The modules the tests load, in an order that lets each go.
	for m in viacam vivid i2c_stub v4l2loopback; do
		grep -q "^$m " /proc/modules && rmmod "$m" 2>/dev/null
	done
	echo "$rc" >"$res/rc"
	echo $(($(date +%s) - start)) >"$res/secs"
	echo "viacam-vm: test $name ends" >/dev/kmsg
	sed 's/^/  | /' "$res/output.log"
	echo "shared-guest: $name exited with $rc after $(cat "$res/secs") s"
	[ "$rc" = 0 ] || all_rc=1
done <"$list"
exit "$all_rc"
