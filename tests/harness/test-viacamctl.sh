#!/usr/bin/env bash
# test-viacamctl.sh - viacamctl's bad input, on the host (no bridge needed): every usage error
# is found before any device is opened (exit 2, with its own message, never a "No such file"
# about the device that hides it), and a node that is not a viacam node is an error (exit 1)
# that says so. Runs build/host/viacamctl (make host).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
bin=${VIACAMCTL:-$src/build/host/viacamctl}
ok=1
[ -x "$bin" ] || { echo "NOT OK: $bin is not built (make host)"; exit 1; }
nodev=/nonexistent/viacam	# a control node that does not exist

# expect NAME WANT_RC PATTERN ARGS...: viacamctl ARGS exits WANT_RC and its stderr matches the
# extended regex PATTERN; for usage errors (2) stderr must not blame the device.
expect() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	timeout 20 "$bin" "$@" >"$work/out" 2>"$work/err" </dev/null	# a hang is a failure (124)
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "NOT OK: $name: exit $rc, expected $want; stderr: $(head -c 300 "$work/err")"
		ok=0
	elif ! grep -qE -- "$pat" "$work/err"; then
		echo "NOT OK: $name: stderr does not match '$pat': $(head -c 300 "$work/err")"
		ok=0
	elif [ "$want" = 2 ] && grep -q "No such file" "$work/err"; then
		echo "NOT OK: $name: a usage error reported as a missing device: $(head -c 300 "$work/err")"
		ok=0
	else
		echo "ok: $name -> exit $rc"
	fi
}

# Usage errors: arguments are checked before /dev/viacam is opened.
expect "no command" 2 "Usage" -d "$nodev"
expect "-d without a device" 2 "Usage|needs" -d
expect "unknown command" 2 "unknown command 'bogus'" -d "$nodev" bogus
expect "add with an unknown option" 2 "bogus" -d "$nodev" add --bogus
expect "add --id -1" 2 "invalid id '-1'" -d "$nodev" add --id -1
expect "add --capture-nr too big" 2 "invalid node number '99999999999'" -d "$nodev" add --capture-nr 99999999999
expect "add --id 64 (the bridge has ids 0-63)" 2 "invalid id '64'" -d "$nodev" add --id 64
expect "add --backend-nr 256" 2 "invalid node number '256'" -d "$nodev" add --backend-nr 256
expect "add with a stray argument" 2 "add: unexpected argument 'extra'" -d "$nodev" add --label x extra
expect "reload with a stray argument" 2 "reload: unexpected argument 'foo'" -d "$nodev" reload foo
expect "add --timeout 60001" 2 "invalid timeout '60001'" -d "$nodev" add --timeout 60001
expect "add with an extra argument" 2 "unexpected argument 'x'" -d "$nodev" add x
expect "add --label with a control character" 2 "label 'bad\\\\x01' has a control character" -d "$nodev" add --label $'bad\x01'
expect "add --label with invalid UTF-8" 2 "label 'bad\\\\xff' is not valid UTF-8" -d "$nodev" add --label $'bad\xff'
expect "add --label with a right-to-left override" 2 "label 'bad\\\\u202ecam' has an invisible or bidi control character" -d "$nodev" add --label $'bad\u202ecam'
expect "add --label of 32 bytes" 2 "label is too long \\(32 bytes; at most 31\\)" -d "$nodev" add --label "012345678901234567890123456789é"
expect "remove without an id" 2 "remove needs exactly one camera id" -d "$nodev" remove
expect "remove abc" 2 "invalid camera id 'abc'" -d "$nodev" remove abc
expect "query with two ids" 2 "query needs exactly one camera id" -d "$nodev" query 1 2
expect "version with an argument" 2 "version takes no arguments" -d "$nodev" version extra
expect "list with an argument" 2 "list takes no arguments" -d "$nodev" list extra
expect "reload with an argument" 2 "reload: unexpected argument 'now'" --state "$work/none" reload now
expect "reload --timeout without --wait" 2 "reload: --timeout goes with --wait" --state "$work/none" reload --timeout 5
expect "reload --wait --timeout 0" 2 "reload: --timeout is 1 to 3600 seconds" --state "$work/none" reload --wait --timeout 0
expect "reload --wait --timeout x" 2 "invalid timeout 'x'" --state "$work/none" reload --wait --timeout x
expect "get without a camera" 2 "get needs a camera" -d "$nodev" get
expect "get abc" 2 "invalid camera id 'abc'" -d "$nodev" get abc
expect "set by id without NAME=VALUE" 2 "'brightness' is not NAME=VALUE" -d "$nodev" set 3 brightness
expect "set by id with a bad value" 2 "brightness: value 'x' is not an integer" -d "$nodev" set 3 brightness=x
expect "set on /dev/null with a bad value" 2 "value 'x' is not an integer" set /dev/null brightness=x
# Numbers are decimal: 064 is 64 (not octal 52), 09 is 9 (octal would refuse it), no 0x.
expect "add --id 064 is 64, too big" 2 "invalid id '064'" -d "$nodev" add --id 064
expect "add --id 09 is 9" 1 "$nodev: No such file" -d "$nodev" add --id 09
expect "add --timeout 0x10" 2 "invalid timeout '0x10'" -d "$nodev" add --timeout 0x10
expect "set brightness=09 is 9" 1 "$nodev: No such file" -d "$nodev" set 3 brightness=09
expect "set brightness=0x10" 2 "value '0x10' is not an integer" -d "$nodev" set 3 brightness=0x10
expect "set brightness=-010 is -10" 1 "$nodev: No such file" -d "$nodev" set 3 brightness=-010
expect "set brightness=' 5'" 2 "value ' 5' is not an integer" -d "$nodev" set 3 "brightness= 5"

# Not a viacam node: a clear error, never silence and success.
expect "get /dev/null" 1 "/dev/null: not a V4L2 device" get /dev/null
expect "get /dev/null brightness" 1 "/dev/null: not a V4L2 device" get /dev/null brightness
expect "set /dev/null brightness=1" 1 "/dev/null: not a V4L2 device" set /dev/null brightness=1
expect "-d /dev/null list" 1 "/dev/null: not the viacam control node" -d /dev/null list
expect "-d /dev/null version" 1 "/dev/null: not the viacam control node" -d /dev/null version

# Real errors about devices still say what they are.
expect "list without the module" 1 "$nodev: No such file or directory \\(is the viacam module loaded\\?\\)" -d "$nodev" list
expect "get on a missing node" 1 "/dev/nonexistent-video: No such file or directory" get /dev/nonexistent-video
expect "reload without viacamd" 1 "viacamd is not running" --state "$work/none" reload
# The state file: only a regular file is read, nothing spins (/dev/zero) or blocks (a FIFO).
expect "--state /dev/zero" 1 "/dev/zero: cannot read: not a regular file" --state /dev/zero reload
rm -f "$work/fifo"
mkfifo "$work/fifo"
expect "--state FIFO" 1 "fifo: cannot read: not a regular file" --state "$work/fifo" reload --wait
# reload --wait against a stand-in named viacamd (sleep, which SIGHUP ends): a state file
# without reload counts is refused before any signal; a daemon that ends is reported.
cp "$(command -v sleep)" "$work/viacamd"
"$work/viacamd" 60 &
fake=$!
printf 'pid %d\n' "$fake" >"$work/state-old"
expect "reload --wait, state file without reload counts" 1 "has no reload count" --state "$work/state-old" reload --wait
kill -0 "$fake" 2>/dev/null && echo "ok: ...and nothing was signalled" || { echo "NOT OK: the stand-in was signalled"; ok=0; }
printf 'pid %d\nreloads 0 0\n' "$fake" >"$work/state-new"
expect "reload --wait, viacamd ends instead" 1 "viacamd \\(pid $fake\\) ended before it reloaded" --state "$work/state-new" reload --wait --timeout 5
wait "$fake" 2>/dev/null
# Only viacamd is signalled: a program named exactly viacamd (/proc/PID/exe), run by root (or
# by the caller, who could signal it anyway). A forged state file made root's viacamctl signal
# a nobody-owned viacamd-impostor: any name starting with "viacamd" passed.
cp "$(command -v sleep)" "$work/viacamd-impostor"
"$work/viacamd-impostor" 60 &
fake=$!
printf 'pid %d\nreloads 0 0\n' "$fake" >"$work/state-impostor"
expect "reload refuses viacamd-impostor" 1 "pid $fake .*is not viacamd.*viacamd-impostor" --state "$work/state-impostor" reload
kill -0 "$fake" 2>/dev/null && echo "ok: ...and it was not signalled" || { echo "NOT OK: viacamd-impostor was signalled"; ok=0; }
kill "$fake"; wait "$fake" 2>/dev/null
printf 'pid 1\nreloads 0 0\n' >"$work/state-init"
# (where root may not read /proc/1/exe, as in some containers, that refuses too)
expect "reload refuses pid 1" 1 "pid 1 in [^ ]*( is not viacamd|: /proc/1/exe: )" --state "$work/state-init" reload
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# Named viacamd, run by nobody: root's viacamctl does not signal it.
	pub=$(mktemp -d)
	chmod 755 "$pub"
	cp "$(command -v sleep)" "$pub/viacamd"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$pub/viacamd" 60 &
	fake=$!
	sleep 0.2
	printf 'pid %d\nreloads 0 0\n' "$fake" >"$work/state-nobody"
	expect "reload refuses a viacamd run by nobody" 1 "pid $fake .*runs as uid 65534" --state "$work/state-nobody" reload
	kill -0 "$fake" 2>/dev/null && echo "ok: ...and it was not signalled" || { echo "NOT OK: nobody's viacamd was signalled"; ok=0; }
	kill "$fake"; wait "$fake" 2>/dev/null
	rm -rf "$pub"
else
	echo "ok: (skipped: a viacamd run by nobody needs root and setpriv)"
fi

# Help and version: on stdout, exit 0, nothing opened.
# out NAME PATTERN ARGS...: viacamctl ARGS exits 0 and its stdout matches PATTERN.
out() {
	local name=$1 pat=$2 rc
	shift 2
	"$bin" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	if [ "$rc" != 0 ] || ! grep -qE -- "$pat" "$work/out"; then
		echo "NOT OK: $name: exit $rc, stdout: $(head -c 300 "$work/out") stderr: $(head -c 200 "$work/err")"
		ok=0
	else
		echo "ok: $name"
	fi
}
out "--version" "^viacamctl [0-9]+\.[0-9]+\.[0-9]+ \(bridge uapi [0-9]+\.[0-9]+\)$" -d "$nodev" --version
out "--help lists the commands" "^Commands:" --help
out "add --help" "Usage: viacamctl .*add \[--label L\]" -d "$nodev" add --help
out "add --id 3 --help" "Usage: viacamctl .*add " -d "$nodev" add --id 3 --help
out "help set" "Usage: viacamctl .*set CAMERA NAME=VALUE" help set
out "get 3 -h" "Usage: viacamctl .*get CAMERA" -d "$nodev" get 3 -h
expect "help of an unknown command" 2 "help: unknown command 'bogus'" help bogus
# --help as the value of --label is a label, not a request for help.
expect "add --label --help (a label)" 1 "$nodev" -d "$nodev" add --label --help
[ "$ok" = 1 ]
