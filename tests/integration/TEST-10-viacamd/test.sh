#!/bin/bash
# TEST-10-viacamd: the daemon with real clients. viacamd serves a pattern camera from a config
# file: the capture node offers what the section says, nothing runs while nobody streams, every
# offered format streams with the right pixels (v4l2-ctl, ffmpeg, GStreamer), controls reach the
# picture, v4l2-compliance passes; then live reconfiguration by editing the file (label, a new
# camera, control defaults, formats, an invalid file, backend swaps while a consumer streams,
# removing a camera), kill -9 of the daemon mid-stream and its restart, the v4l2 backend
# proxying vivid, and a camera the full bridge cannot take, served by a later retry.
. "$(dirname "$0")/../lib.sh"

modprobe vivid n_devs=1 node_types=0x1 input_types=0x1 || die "modprobe vivid"
vivid=/dev/video0
load_viacam devices=0
cfg=/tmp/cfg
conf=$cfg/viacam.conf
state=/run/viacamd/cameras
mkdir -p $cfg
ffmpeg -loglevel error -f lavfi -i testsrc=size=640x480:rate=30 -frames:v 45 -pix_fmt yuv420p \
	$cfg/clip.y4m || die "ffmpeg could not write the Y4M clip"

# Editors write a temporary file and rename it over the old one; so do we.
put_conf() { cat >"$conf.tmp" && mv "$conf.tmp" "$conf"; }
log=$RES/viacamd.log
start_daemon() { "$BIN/viacamd" -c "$conf" --state "$state" >>"$log" 2>&1 & daemon=$!; }
wait_for() { # SECONDS COMMAND...: until COMMAND succeeds
	local i n=$(($1 * 10)); shift
	for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done
	return 1
}
log_has() { grep -qF -- "$1" "$log"; }
not() { ! "$@"; }
# wait_more NODE N SECONDS: until N more frames came in than when called (a new stream runs)
wait_more() { wait_frames_in "$1" $(($(frames_in "$1") + $2)) "$3"; }
stats() { cat "/sys/class/video4linux/video$1/viacam_stats"; }
fin() { frames_in "video$1"; }
capture() { # NODE FOURCC W H FILE [N] [extra v4l2-ctl args...]
	local node=$1 f=$2 w=$3 h=$4 file=$5 n=${6:-4}; shift 6 2>/dev/null || shift $#
	timeout 60 v4l2-ctl -d "$node" --set-fmt-video=width=$w,height=$h,pixelformat=$f "$@" \
		--stream-mmap --stream-count="$n" --stream-to="$file" >/dev/null 2>>"$RES/clients.log"
}

put_conf <<'CONF'
[camera main]
label = viacam main
video_nr = 20
backend_nr = 21
timeout_ms = 1000
formats = YUYV NV12 YUV420 RGB24
sizes = 640x480 320x240
rates = 30 15
pattern = bars
CONF
start_daemon
wait_for 20 test -e /dev/video20 || { cat "$log"; die "viacamd did not create /dev/video20"; }
cap=/dev/video20

# --- the offer, on demand ---
v4l2-ctl -d $cap --list-formats-ext >"$RES/formats.txt" 2>&1
check "the capture node offers YUYV, NV12, YU12 and RGB3" \
	test "$(grep -cE "'(YUYV|NV12|YU12|RGB3)'" "$RES/formats.txt")" = 4
check "...at 640x480 and 320x240, 30 and 15 fps" \
	test "$(grep -c 'Size: Discrete 320x240' "$RES/formats.txt")" = 4 -a \
	"$(grep -c '(15.000 fps)' "$RES/formats.txt")" = 8
sleep 1
check "no frames while nobody streams" test "$(fin 20)" = 0

for f in YUYV NV12 YU12 RGB3; do
	capture $cap $f 320 240 /tmp/$f.raw 4
	check "$f streams with the pattern's pixels ($("$BIN/vcpix" /tmp/$f.raw $f 320 240 2>&1 | tail -n1))" \
		"$BIN/vcpix" /tmp/$f.raw $f 320 240
done
before=$(fin 20); sleep 1
check "the source stops after the last consumer ($before frames in, then none)" test "$(fin 20)" = "$before"

capture $cap YUYV 640 480 /tmp/flip.raw 4 -c horizontal_flip=1
check "v4l2-ctl -c horizontal_flip=1 mirrors the picture" \
	"$BIN/vcpix" -c horizontal_flip=1 /tmp/flip.raw YUYV 640 480
check "...and the unflipped check fails on it" not "$BIN/vcpix" /tmp/flip.raw YUYV 640 480
v4l2-ctl -d $cap -c horizontal_flip=0
check "viacamctl set brightness=40" "$BIN/viacamctl" set $cap brightness=40
check "viacamctl get shows it" grep -q '^brightness=40' <<<"$("$BIN/viacamctl" get $cap brightness)"
capture $cap NV12 640 480 /tmp/bright.raw 4
check "brightness 40 reaches the picture" "$BIN/vcpix" -c brightness=40 /tmp/bright.raw NV12 640 480
"$BIN/viacamctl" set $cap brightness=0
check "viacamctl get of an unknown control fails with its name" \
	grep -q "no control 'nosuch'" <<<"$("$BIN/viacamctl" get $cap nosuch 2>&1)"

timeout 60 ffmpeg -loglevel error -f v4l2 -input_format nv12 -video_size 640x480 -i $cap \
	-frames:v 3 -f rawvideo -y /tmp/ff.nv12 2>>"$RES/clients.log"
check "ffmpeg captures NV12 with the pattern's pixels" "$BIN/vcpix" /tmp/ff.nv12 NV12 640 480
timeout 60 gst-launch-1.0 -q v4l2src device=$cap num-buffers=3 ! \
	video/x-raw,format=YUY2,width=320,height=240,framerate=15/1 ! filesink location=/tmp/gst.yuyv \
	>>"$RES/clients.log" 2>&1
check "GStreamer captures YUY2 320x240@15 with the pattern's pixels" "$BIN/vcpix" /tmp/gst.yuyv YUYV 320 240
ffmpeg -loglevel error -f rawvideo -pix_fmt yuyv422 -s 320x240 -i /tmp/gst.yuyv -frames:v 1 -y "$RES/pattern.png"

compliance_run $cap "$RES/compliance.log" 180
gate=$(compliance_gate "$RES/compliance.log")
check "v4l2-compliance -s on a viacamd camera: $gate" compliance_gate "$RES/compliance.log"
echo "compliance: $(head -n1 <<<"$gate")" >>"$RES/summary"

# --- live reconfiguration ---
put_conf <<'CONF'
[camera main]
label = viacam renamed
video_nr = 20
backend_nr = 21
timeout_ms = 1000
formats = YUYV NV12 YUV420 RGB24
sizes = 640x480 320x240
rates = 30 15
pattern = bars
ctrl.brightness = 10

[camera second]
video_nr = 22
backend_nr = 23
formats = YUYV
CONF
check "adding a section creates /dev/video22" wait_for 20 test -e /dev/video22
check "a label change renames the card" wait_for 10 bash -c "v4l2-ctl -d $cap --info | grep -q 'Card type *: viacam renamed'"
check "a control default change applies (brightness 10)" \
	wait_for 10 bash -c "v4l2-ctl -d $cap --get-ctrl=brightness | grep -q 'brightness: 10'"
check "the second camera offers only YUYV" \
	test "$(v4l2-ctl -d /dev/video22 --list-formats | grep -c "'")" = 1

# An invalid file: the running cameras go on, the daemon names the line.
timeout 60 "$BIN/vctest" consume -a -n 100000 -t 6 /dev/video22 >"$RES/consume-invalid.log" 2>&1 &
cons=$!
sleep 2
put_conf <<'CONF'
[camera main]
label = viacam renamed
video_nr = banana
CONF
check "an invalid file is reported with its line" wait_for 10 log_has "viacam.conf:3: bad value 'banana' for video_nr"
check "...and changes nothing" wait_for 5 log_has "is invalid; the running configuration stays (2 cameras)"
wait $cons; rc=$?
check "a consumer of the second camera streams on through it ($(tail -n1 "$RES/consume-invalid.log"))" \
	test $rc = 0 -a -e /dev/video22

# Backend swaps while a consumer streams YUV420 640x480 at 30 fps.
good_conf() { # BACKEND-LINES...
	{ printf '[camera main]\nlabel = viacam renamed\nvideo_nr = 20\nbackend_nr = 21\ntimeout_ms = 1000\n'
	  printf 'formats = YUYV NV12 YUV420 RGB24\nsizes = 640x480 320x240\nrates = 30 15\n'
	  printf '%s\n' "$@"
	  printf '[camera second]\nvideo_nr = 22\nbackend_nr = 23\nformats = YUYV\n'; } | put_conf
}
v4l2-ctl -d $cap --set-fmt-video=width=640,height=480,pixelformat=YU12 -p 30
timeout 60 "$BIN/vctest" consume -a -n 100000 -t 12 $cap >"$RES/consume-swap.log" 2>&1 &
cons=$!
wait_more $cap 5 20 || fail "the swap consumer did not start"
good_conf "backend = file" "file = $cfg/clip.y4m"
check "the file backend takes over the running stream" wait_for 10 log_has "backend 'file' took over the running stream"
sleep 3
good_conf "backend = pattern" "pattern = gradient"
check "...and then the pattern backend again" wait_for 10 log_has "backend 'pattern' took over the running stream"
wait $cons; rc=$?
res=$(tail -n1 "$RES/consume-swap.log")
echo "swap consumer: $res" >>"$RES/summary"
gap=$(sed -nE 's/.*max_gap_ms=([0-9]+).*/\1/p' <<<"$res")
check "the consumer streamed through both swaps without an error ($res)" test $rc = 0
check "...and frames never stopped for longer than the timeout (max gap ${gap:-?} ms)" test "${gap:-99999}" -lt 1000

# A swap to a backend that cannot make the streaming format waits for the stream to stop.
timeout 60 "$BIN/vctest" consume -a -n 100000 -t 5 /dev/video22 >"$RES/consume-wait.log" 2>&1 &
cons=$!
wait_more /dev/video22 3 20
{ sed '/^\[camera second\]/,$d' "$conf"; printf '[camera second]\nvideo_nr = 22\nbackend_nr = 23\nbackend = file\nfile = %s\n' "$cfg/clip.y4m"; } >"$cfg/new.conf"
mv "$cfg/new.conf" "$conf"
check "a swap the stream cannot take waits, and says so" wait_for 10 log_has "backend 'file' cannot produce the streaming YUYV"
wait $cons
check "...and happens when the stream stops" wait_for 10 log_has "switching to backend 'file' now that the stream stopped"

# Removing a section removes the camera; its consumer gets ENODEV.
timeout 60 "$BIN/vctest" consume -a -n 100000 -t 20 /dev/video22 >"$RES/consume-removed.log" 2>&1 &
cons=$!
wait_more /dev/video22 3 20
good_conf "backend = pattern" "pattern = gradient"
sed -i '/^\[camera second\]/,$d' "$conf"
check "removing a section removes /dev/video22" wait_for 20 bash -c '! test -e /dev/video22'
wait $cons; rc=$?
check "...and its consumer got ENODEV ($(tail -n1 "$RES/consume-removed.log"))" \
	grep -q 'No such device' "$RES/consume-removed.log"

# kill -9 mid-stream: repeated frames; a new viacamd adopts the camera and real frames resume.
v4l2-ctl -d $cap --set-fmt-video=width=320,height=240,pixelformat=YUYV -p 30
timeout 60 "$BIN/vctest" consume -a -n 100000 -t 14 $cap >"$RES/consume-kill.log" 2>&1 &
cons=$!
wait_more $cap 5 20
kill -9 $daemon; wait $daemon 2>/dev/null
sleep 4
in_killed=$(fin 20)
start_daemon
check "the restarted viacamd adopts the camera" wait_for 20 log_has "adopted camera"
check "...and feeds the consumer that kept streaming" wait_for 20 log_has "a consumer is already streaming; feeding it"
wait $cons; rc=$?
res=$(tail -n1 "$RES/consume-kill.log")
echo "kill -9 consumer: $res" >>"$RES/summary"
check "the consumer streamed through kill -9 and restart ($res)" test $rc = 0
check "...with repeated frames while the daemon was gone" test "$(sed -nE 's/.* repeats=([0-9]+).*/\1/p' <<<"$res")" -gt 0
check "...and real frames again after the restart ($in_killed frames in at restart, $(fin 20) at the end)" \
	test "$(fin 20)" -gt "$in_killed"

# The v4l2 backend proxies vivid.
{ cat "$conf"; printf '[camera proxy]\nvideo_nr = 24\nbackend_nr = 25\nbackend = v4l2\ndevice = %s\nsizes = 640x480\nformats = YUYV\n' $vivid; } >"$cfg/new.conf"
mv "$cfg/new.conf" "$conf"
check "a v4l2 camera appears" wait_for 20 test -e /dev/video24
capture /dev/video24 YUYV 640 480 /tmp/proxy.raw 8
check "it streams vivid's frames (8 x 640x480 YUYV)" test "$(stat -c %s /tmp/proxy.raw 2>/dev/null)" = $((640 * 480 * 2 * 8))
check "...served by the v4l2 backend" grep -qE "camera proxy: streaming YUYV 640x480 at [0-9.]+ fps from backend 'v4l2'" "$log"
check "...without libv4l2 complaining" not grep -q "libv4l2: error" "$log"
check "...and they are vivid's, not empty" test "$(od -An -tu1 -N 614400 -j 614400 /tmp/proxy.raw | tr -s ' ' '\n' | sort -u | wc -l)" -gt 20

# The proxied device goes away mid-stream: the session says so, the consumer gets repeats.
timeout 60 "$BIN/vctest" consume -a -n 100000 -t 8 /dev/video24 >"$RES/consume-unplug.log" 2>&1 &
cons=$!
wait_more /dev/video24 3 20
echo vivid.0 >/sys/bus/platform/drivers/vivid/unbind || fail "cannot unbind vivid"
check "an unplugged source is reported" wait_for 10 log_has "camera proxy: the source is gone"
wait $cons; rc=$?
res=$(tail -n1 "$RES/consume-unplug.log")
check "...and its consumer streams on with repeated frames ($res)" \
	test $rc = 0 -a "$(sed -nE 's/.* repeats=([0-9]+).*/\1/p' <<<"$res")" -gt 0

"$BIN/viacamctl" --state $state list >"$RES/list.txt"
check "viacamctl list names the backends" grep -q 'viacamd:main:pattern' "$RES/list.txt"
check "viacamctl reload signals the daemon" "$BIN/viacamctl" --state $state reload
check "...which reloads" wait_for 10 log_has "reloading $conf (SIGHUP)"
# reload --wait (viacamd.service's ExecReload): 0 once applied, 1 with the first problem once
# rejected, and the running cameras stay.
check "viacamctl reload --wait reports an applied reload" \
	bash -c "'$BIN/viacamctl' --state $state reload --wait | grep -q 'applied its configuration'"
cp "$conf" "$cfg/good.conf"
printf '[camera broken]\nbackend = nonesuch\n' >>"$conf"
"$BIN/viacamctl" --state $state reload --wait >"$RES/reload-bad.out" 2>&1
rc=$?
check "...and a rejected one: exit $rc ($(tail -n1 "$RES/reload-bad.out"))" test $rc = 1
check "...naming FILE:LINE of the problem" grep -qE "rejected its configuration .*: $conf:[0-9]+: " "$RES/reload-bad.out"
check "...while the camera stays" test -e $cap
cp "$cfg/good.conf" "$conf"
check "...and the repaired file is applied" "$BIN/viacamctl" --state $state reload --wait

# A camera the bridge cannot create (its 64 cameras are taken) is not served, the reload says
# so, and the daemon tries it again until it is: once a camera is removed, it appears.
fillers=()
for i in $(seq 63 -1 0); do
	"$BIN/viacamctl" add --id "$i" --label filler >/dev/null 2>&1 && fillers+=("$i")
done
check "the bridge is full (${#fillers[@]} fillers)" not "$BIN/viacamctl" add --label one-more
{ cat "$conf"; printf '[camera late]\nvideo_nr = 26\nbackend_nr = 27\n'; } >"$cfg/new.conf"
mv "$cfg/new.conf" "$conf"
check "a reload whose camera cannot be created says it is not served" \
	wait_for 20 log_has "of 3 cameras served; not served: late ("
check "...and when a retry is due" wait_for 5 grep -qE "not served: late \(.*\); next try in [0-9]+ s" "$log"
"$BIN/viacamctl" remove "${fillers[0]}" || fail "viacamctl remove ${fillers[0]}"
check "a retry creates it once the bridge has room" wait_for 20 test -e /dev/video26
check "...and says all are served" wait_for 10 log_has "after trying again: 3 cameras"
for i in "${fillers[@]:1}"; do "$BIN/viacamctl" remove "$i" || fail "viacamctl remove $i"; done

kill $daemon; wait $daemon
check "SIGTERM stops viacamd cleanly" log_has "viacamd: stopped"
check "...and leaves the cameras for the next start" test -e $cap
echo "viacamd log: $(wc -l <"$log") lines" >>"$RES/summary"
rmmod viacam || fail "rmmod viacam"
rmmod vivid
finish
