#!/usr/bin/env bash
# test-viacamd-host.sh - viacamd's command line and files on the host, without the bridge
# (--control /dev/null: every camera is "not served", the daemon runs on):
#  - --check exits 1, with FILE:LINE: reason, for input libinih would drop silently (CR line
#    ends, text after a section header) and for an empty file, and for a v4l2 camera whose
#    device is /dev/null, a regular file or a directory;
#  - --check of gst pipelines with a filesink, a tcpserversink and a tcpclientsink touches
#    nothing: the file keeps its bytes, no socket is bound, listened on or connected;
#  - a -c path longer than PATH_MAX is an error, never cut to another, existing file;
#  - -c is resolved on every reload: after its symlink is repointed, a reload reads the new
#    target, and saving the target (in another directory) reloads too;
#  - one viacamd per state file: a second one refuses to start, saying which pid runs; and
#    none starts with its state file in a directory others can write;
#  - a gst source that hangs in READY (pipewiresrc on a PipeWire socket that never answers)
#    does not keep SIGTERM waiting.
# Runs build/host/viacamd and viacamctl (make host). Needs no root for these checks.
# expected-seconds: 15
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work"
chmod 700 "$work"
bin=${VIACAMD:-$src/build/host/viacamd}
ctl=${VIACAMCTL:-$src/build/host/viacamctl}
ok=1
bad() { echo "NOT OK: $*"; ok=0; }
good() { echo "ok: $*"; }
for b in "$bin" "$ctl"; do
	[ -x "$b" ] || { echo "NOT OK: $b is not built (make host)"; exit 1; }
done
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

# check_fails NAME PATTERN FILE: viacamd --check -c FILE exits 1 and says PATTERN (a regex).
check_fails() {
	local name=$1 pat=$2 file=$3 rc
	timeout 20 "$bin" --check -c "$file" >"$work/check.out" 2>&1
	rc=$?
	if [ "$rc" != 1 ]; then
		bad "$name: --check exits $rc, expected 1: $(head -c 300 "$work/check.out")"
	elif ! grep -qE -- "$pat" "$work/check.out"; then
		bad "$name: --check does not say '$pat': $(head -c 300 "$work/check.out")"
	else
		good "$name: --check exits 1: $(head -n 1 "$work/check.out" | cut -c1-150)"
	fi
}

# wait_log FILE PATTERN [SECONDS]: until FILE has a line matching PATTERN.
wait_log() {
	local i
	for ((i = 0; i < ${3:-10} * 10; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# --- Input that used to be dropped without a word.
printf '[camera a]\rbackend = file\rfile = /x.y4m\r' >"$work/cr.conf"
check_fails "CR line ends" "cr.conf:1: carriage return inside a line" "$work/cr.conf"
printf '[camera a] backend = file\nfile = /x.y4m\n' >"$work/after.conf"
check_fails "text after ']'" "after.conf:1: text after the section header: 'backend = file'" "$work/after.conf"
: >"$work/empty.conf"
check_fails "an empty file" "empty.conf:1: the file is empty" "$work/empty.conf"

# --- The v4l2 backend takes nothing but a V4L2 capture node: /dev/null (a character device of
# another driver), a regular file and a directory are refused with the path and what it is.
printf '[camera a]\nbackend = v4l2\ndevice = /dev/null\n' >"$work/v4l2-null.conf"
check_fails "v4l2 device = /dev/null" \
	"v4l2-null.conf:3: camera a: /dev/null is not a V4L2 device: it is a character device of another driver \\(1:3\\)" \
	"$work/v4l2-null.conf"
printf 'data\n' >"$work/notadevice"
printf '[camera a]\nbackend = v4l2\ndevice = %s\n' "$work/notadevice" >"$work/v4l2-file.conf"
check_fails "v4l2 device = a regular file" "v4l2-file.conf:3: camera a: .*/notadevice is not a V4L2 device: it is a regular file" \
	"$work/v4l2-file.conf"
[ "$(cat "$work/notadevice")" = data ] || bad "...and the file changed"
printf '[camera a]\nbackend = v4l2\ndevice = %s\n' "$work" >"$work/v4l2-dir.conf"
check_fails "v4l2 device = a directory" "v4l2-dir.conf:3: camera a: .* is not a V4L2 device: it is a directory" \
	"$work/v4l2-dir.conf"

# --- --check has no side effects: a gst pipeline is parsed and checked, never set to a state
# that opens a file, a socket or a device. A filesink's file keeps its bytes; a tcpserversink
# listens on no port and a tcpclientsink connects nowhere (strace sees no bind, listen or
# connect to them, and no open of the file).
printf 'keep me\n' >"$work/sink.out"
port=$((20000 + RANDOM % 20000))
cat >"$work/gst-sinks.conf" <<EOC
[camera file]
backend = gst
pipeline = videotestsrc ! tee name=t ! queue ! filesink location=$work/sink.out t. ! queue
[camera server]
backend = gst
pipeline = videotestsrc ! tee name=t ! queue ! tcpserversink host=127.0.0.1 port=$port t. ! queue
[camera client]
backend = gst
pipeline = videotestsrc ! tee name=t ! queue ! tcpclientsink host=127.0.0.1 port=$((port + 1)) t. ! queue
EOC
trace=()
if command -v strace >/dev/null && strace -f -o /dev/null true 2>/dev/null; then
	trace=(strace -f -e trace=openat,bind,listen,connect -o "$work/check.strace")
fi
if ! timeout 60 "${trace[@]}" "$bin" --check -c "$work/gst-sinks.conf" >"$work/check.out" 2>&1; then
	bad "--check of the gst sinks: $(head -c 300 "$work/check.out")"
elif [ "$(cat "$work/sink.out")" != "keep me" ]; then
	bad "--check of a filesink pipeline changed its file: $(wc -c <"$work/sink.out") bytes left"
else
	good "--check of a filesink pipeline leaves its file alone"
fi
if [ ${#trace[@]} = 0 ]; then
	echo "skipped: no strace here, the sockets of --check are not watched"
elif grep -E "^[0-9]+ +((bind|connect)\(.*sin6?_port=htons|listen\()" "$work/check.strace" \
	>"$work/check.sockets"; [ -s "$work/check.sockets" ]; then
	bad "--check opened sockets: $(head -c 300 "$work/check.sockets")"
elif grep -q "sink.out" "$work/check.strace"; then
	bad "--check opened the filesink's file: $(grep -m1 sink.out "$work/check.strace")"
else
	good "--check binds, listens and connects to nothing, and does not open the filesink's file"
fi

# --- A -c path longer than PATH_MAX (4096 with its NUL): its first 4095 bytes name an existing
# file, which a cut would read and call OK.
printf '[camera cut]\n' >"$work/v.conf"
pad=$((4095 - ${#work} - 7))	# 7: "/v.conf"
long=$work$(printf '%*s' "$pad" '' | tr ' ' /)/v.conf
[ ${#long} = 4095 ] && [ -f "$long" ] || bad "the test's own path is wrong (${#long} bytes)"
check_fails "-c of 4096 bytes" "too long" "${long}x"
grep -q "OK" "$work/check.out" && bad "...and it read the cut path: $(head -c 200 "$work/check.out")"

# --- -c is resolved on every reload.
mkdir -p "$work/a" "$work/b" "$work/run"
printf '[camera alpha]\n' >"$work/a/v.conf"
printf '[camera beta]\n' >"$work/b/v.conf"
ln -s "$work/a/v.conf" "$work/link.conf"
state=$work/run/cameras
"$bin" --control /dev/null --state "$state" -c "$work/link.conf" >"$work/daemon.log" 2>&1 &
pids+=($!)
if ! wait_log "$work/daemon.log" "ready: .*not served: alpha"; then
	bad "viacamd did not start on the symlink: $(tail -n 5 "$work/daemon.log")"
else
	sleep 0.3	# the start's state file is written
	ln -sfn "$work/b/v.conf" "$work/link.conf"
	timeout 20 "$ctl" --state "$state" reload --wait --timeout 10 >"$work/reload.out" 2>&1 ||
		bad "viacamctl reload --wait: $(cat "$work/reload.out")"
	if wait_log "$work/daemon.log" "configuration applied: .*not served: beta" 5; then
		good "after the symlink is repointed, a reload reads the new target"
	else
		bad "a reload after the symlink was repointed: $(grep 'configuration applied' "$work/daemon.log" | tail -n 1)"
	fi
	# The target lives in another directory: saving it (an editor's rename) reloads too.
	printf '[camera gamma]\n' >"$work/b/v.conf.tmp"
	mv "$work/b/v.conf.tmp" "$work/b/v.conf"
	if wait_log "$work/daemon.log" "configuration applied: .*not served: gamma" 5; then
		good "saving the symlink's target reloads"
	else
		bad "saving the symlink's target did not reload: $(tail -n 3 "$work/daemon.log")"
	fi
fi

# --- One viacamd per state file (the first one still runs).
if kill -0 "${pids[0]}" 2>/dev/null; then
	timeout 10 "$bin" --control /dev/null --state "$state" -c "$work/link.conf" >"$work/second.log" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && grep -q "another viacamd (pid ${pids[0]}) runs with the state file '$state'" "$work/second.log"; then
		good "a second viacamd refuses to start: $(head -n 1 "$work/second.log")"
	else
		bad "a second viacamd: exit $rc (124: it ran), $(head -c 300 "$work/second.log")"
	fi
	kill -0 "${pids[0]}" 2>/dev/null || bad "...and the first one is gone"
else
	bad "the first viacamd is gone: $(tail -n 3 "$work/daemon.log")"
fi
mkdir -p "$work/pub"
chmod 1777 "$work/pub"
timeout 10 "$bin" --control /dev/null --state "$work/pub/cameras" -c "$work/a/v.conf" >"$work/pub.log" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "writable by others" "$work/pub.log" && [ ! -e "$work/pub/cameras" ]; then
	good "no start with the state file in a directory others can write: $(head -n 1 "$work/pub.log")"
else
	bad "a state file in a directory others can write: exit $rc, $(head -c 300 "$work/pub.log")"
fi

# --- A source that hangs in its start holds up no signal: a gst camera "pipewiresrc" whose
# PipeWire socket accepts and never answers (pipewiresrc waits 30 s in READY for it) beside a
# pattern camera. SIGTERM is handled within 1.5 s, not when the source gives up.
if ! command -v perl >/dev/null || ! gst-inspect-1.0 pipewiresrc >/dev/null 2>&1; then
	echo "skipped: no perl or no pipewiresrc here, the hung source is not tried"
else
	mkdir -p "$work/hung"
	perl -MIO::Socket::UNIX -e '
		my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $ARGV[0], Listen => 8)
			or die "listen: $!";
		my @c;
		while (my $c = $s->accept) { push @c, $c }	# accept, never answer
	' "$work/hung/pipewire-0" &
	pids+=($!)
	for ((i = 0; i < 50; i++)); do [ -S "$work/hung/pipewire-0" ] && break; sleep 0.1; done
	printf '[camera slow]\nbackend = gst\npipeline = pipewiresrc\n[camera p]\n' >"$work/hung.conf"
	PIPEWIRE_REMOTE=$work/hung/pipewire-0 "$bin" --control /dev/null --state "$work/hung/run/cameras" \
		-c "$work/hung.conf" >"$work/hung.log" 2>&1 &
	hpid=$!
	pids+=($hpid)
	wait_log "$work/hung.log" "starting with" 5 || bad "viacamd on the hung source did not start: $(head -c 300 "$work/hung.log")"
	sleep 0.3
	t0=$(date +%s%N)
	kill -TERM "$hpid"
	for ((i = 0; i < 400; i++)); do kill -0 "$hpid" 2>/dev/null || break; sleep 0.1; done
	ms=$((($(date +%s%N) - t0) / 1000000))
	if kill -0 "$hpid" 2>/dev/null; then
		bad "SIGTERM beside a hung pipewiresrc: viacamd still runs after $ms ms: $(tail -n 3 "$work/hung.log")"
	elif [ "$ms" -gt 1500 ]; then
		bad "SIGTERM beside a hung pipewiresrc was handled after $ms ms: $(tail -n 3 "$work/hung.log")"
	else
		good "SIGTERM beside a hung pipewiresrc handled in $ms ms"
	fi
fi

[ "$ok" = 1 ]
