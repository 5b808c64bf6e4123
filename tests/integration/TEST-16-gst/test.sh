#!/bin/bash
# TEST-16-gst: the gst backend (issue 14, item 2) and backends with their own clock (item 4).
# viacamd serves GStreamer sources as cameras; ffmpeg and gst-launch-1.0 consume them and
# every capture is compared with a reference that gst-launch-1.0 makes from the same source
# with the same conversion (vcpix --same). Checked:
# - videotestsrc: YUYV 320x240 to ffmpeg, then a caps change (NV12 640x480) to GStreamer;
#   the pipeline runs only while a consumer streams;
# - a file: filesrc ! decodebin of an MJPEG AVI clip, which loops at its end (reported once),
#   to ffmpeg and GStreamer;
# - v4l2src of vivid, scaled by the pipeline;
# - a bad element name: `viacamd --check` refuses the configuration, naming the line;
# - a source unplugged while a consumer streams (v4l2src of a camera that is removed): the
#   failure is reported once with GStreamer's message, the consumer keeps getting (repeated)
#   frames, and the pipeline recovers when the camera comes back;
# - own clock: a live source at 10 fps reaches the consumer at 10 fps, every frame new; the
#   v4l2 backend passes each frame of a 10 fps device on when the device delivers it (the
#   mean latency from the producer's QBUF to the consumer's DQBUF, through two bridges and
#   viacamd, is well under the 50 ms a 100 ms timer would add on average);
# - the v4l2 backend forwards the device's controls: vivid's are the camera's, a value set
#   while idle reaches vivid when the stream starts, one set while streaming at once;
# - capture times pass through the v4l2 backend and both bridges unchanged;
# - a device that takes 2 s to start does not stall another camera; one that has gone is
#   reported with its error.
. "$(dirname "$0")/../lib.sh"

load_viacam devices=0
modprobe vivid n_devs=1 node_types=0x1 vid_cap_nr=30 || die "modprobe vivid"
wait_for 20 test -e /dev/video30 || die "vivid made no /dev/video30"
# The gst backend's worker is not root (docs/architecture.md, "Privilege separation"): it opens
# a device as the group video, as udev's rules would make the node here (no udevd runs).
as_udev() { chgrp video "$@" && chmod 0660 "$@"; }
as_udev /dev/video30
# vivid's picture without its text (time, counters): the same in every frame.
v4l2-ctl -d /dev/video30 -c osd_text_mode=2 >>"$RES/vivid.log" 2>&1 || fail "vivid: osd_text_mode"

cfg=/tmp/cfg
mkdir -p $cfg
timeout 120 gst-launch-1.0 -q videotestsrc pattern=smpte75 num-buffers=30 ! \
	video/x-raw,width=320,height=240,framerate=15/1 ! jpegenc ! avimux ! \
	filesink location=$cfg/clip.avi >"$RES/clip.log" 2>&1 || die "gst-launch-1.0 could not make the clip"
cat >$cfg/viacam.conf <<CONF
[camera testsrc]
label = gst testsrc
video_nr = 50
backend_nr = 51
backend = gst
pipeline = videotestsrc pattern=smpte75
formats = YUYV NV12
sizes = 320x240 640x480
rates = 15

[camera clip]
label = gst file
video_nr = 52
backend_nr = 53
backend = gst
pipeline = filesrc location=$cfg/clip.avi ! decodebin
formats = YUYV
sizes = 320x240
rates = 15

[camera vivid]
label = gst vivid
video_nr = 54
backend_nr = 55
backend = gst
pipeline = v4l2src device=/dev/video30
formats = YUYV
sizes = 320x240
rates = 15

[camera proxy]
label = gst proxy
video_nr = 56
backend_nr = 57
timeout_ms = 500
backend = gst
pipeline = v4l2src device=/dev/video60
formats = YUYV
sizes = 320x240
rates = 15

[camera probed]
label = gst probed
video_nr = 62
backend_nr = 63
backend = gst
pipeline = v4l2src device=/dev/video30

[camera v4l2clock]
label = v4l2 clock
video_nr = 64
backend_nr = 65
backend = v4l2
device = /dev/video60
formats = YUYV

[camera vividctl]
label = v4l2 vivid
video_nr = 66
backend_nr = 67
backend = v4l2
device = /dev/video30
formats = YUYV
sizes = 320x180
ctrl.saturation = 90

[camera live]
label = gst live
video_nr = 58
backend_nr = 59
backend = gst
pipeline = videotestsrc is-live=true pattern=ball
formats = YUYV
sizes = 320x240
rates = 10
CONF
log=$RES/viacamd.log

# --- a bad element name is refused before anything runs
sed 's/^pipeline = videotestsrc pattern=smpte75$/pipeline = videotestsrc ! nosuchelement/' \
	$cfg/viacam.conf >$cfg/bad.conf
line=$(grep -n nosuchelement $cfg/bad.conf | cut -d: -f1)
"$BIN/viacamd" --check -c $cfg/bad.conf >"$RES/check-bad.log" 2>&1
rc=$?
check "viacamd --check refuses a pipeline with an unknown element (exit $rc)" test $rc != 0
check "...naming the line and the element ($(head -c 200 "$RES/check-bad.log"))" \
	grep -q "bad.conf:$line:.*nosuchelement" "$RES/check-bad.log"

# --- the plain camera the proxy reads: vctest produces into it
"$BIN/viacamctl" add --label "proxied" --capture-nr 60 --backend-nr 61 >"$RES/add.log" 2>&1 ||
	die "viacamctl add ($(cat "$RES/add.log"))"
wait_for 10 test -e /dev/video60 -a -e /dev/video61 || die "no /dev/video60 and 61"
as_udev /dev/video60
"$BIN/vctest" produce /dev/video61 -W 320 -H 240 -r 10 -P -n 100000 >"$RES/producer.log" 2>&1 &
prod=$!

"$BIN/viacamd" -c $cfg/viacam.conf >"$log" 2>&1 &
daemon=$!
wait_for 120 test -e /dev/video50 -a -e /dev/video58 || { cat "$log"; die "viacamd did not create the cameras"; }
check "the gst cameras are ready" grep -q "camera live: ready: backend 'gst'" "$log"
streams() { grep -c "camera $1: streaming " "$log"; }
stops() { grep -c "camera $1: the last consumer stopped" "$log"; }
stopped() { [ "$(stops "$1")" -ge "$2" ]; } # CAMERA N: stopped at least N times
check "nothing streams yet: no pipeline runs" test "$(grep -c ': streaming ' "$log")" = 0

ref() { # NAME FORMAT W H SOURCE...: the reference frame gst-launch-1.0 makes of SOURCE
	local name=$1 f=$2 w=$3 h=$4; shift 4
	timeout 120 gst-launch-1.0 -q "$@" ! videoconvert ! videoscale ! \
		video/x-raw,format=$f,width=$w,height=$h,pixel-aspect-ratio=1/1 ! \
		identity eos-after=2 ! filesink location=/tmp/ref-$name >"$RES/ref-$name.log" 2>&1
}
# last_real FILE SIZE: FILE cut after its last frame that is not neutral grey (a new stream gets
# neutral frames until its pipeline runs, never an older picture), in FILE.real
last_real() {
	local last
	read -r _ last < <("$BIN/vcpix" --real "$1" "$2")
	head -c $((${last:-0} * $2)) "$1" >"$1.real"
}
same() { # FILE REF SIZE [MAXDIFF [PERCENT]]: FILE's last frame against REF's first; sets $out
	out=$("$BIN/vcpix" --same "$@" 2>&1)
	local rc=$?
	echo "$out" >>"$RES/vcpix.log"
	out=${out#vcpix: }
	return $rc
}

# --- videotestsrc: ffmpeg YUYV 320x240, then GStreamer NV12 640x480
ref testsrc-yuyv YUY2 320 240 videotestsrc pattern=smpte75
timeout 60 ffmpeg -nostdin -loglevel error -f v4l2 -input_format yuyv422 -video_size 320x240 \
	-framerate 15 -i /dev/video50 -frames:v 20 -f rawvideo -y /tmp/t1.yuyv >"$RES/ffmpeg-t1.log" 2>&1
check "ffmpeg captures 20 frames of YUYV 320x240 from videotestsrc ($(stat -c %s /tmp/t1.yuyv 2>/dev/null) bytes)" \
	test "$(stat -c %s /tmp/t1.yuyv 2>/dev/null)" = $((320 * 240 * 2 * 20))
same /tmp/t1.yuyv /tmp/ref-testsrc-yuyv $((320 * 240 * 2))
check "...the same picture as gst-launch-1.0's ($out)" test $? = 0
check "...the pipeline stops with the consumer" wait_for 30 stopped testsrc 1
ref testsrc-nv12 NV12 640 480 videotestsrc pattern=smpte75
# (A second stream starts on neutral frames until the pipeline runs again: 40 frames.)
timeout 60 gst-launch-1.0 -q v4l2src device=/dev/video50 num-buffers=40 ! \
	video/x-raw,format=NV12,width=640,height=480,framerate=15/1 ! filesink location=/tmp/t2.nv12 \
	>"$RES/gst-t2.log" 2>&1
check "then GStreamer captures 40 frames of NV12 640x480 ($(stat -c %s /tmp/t2.nv12 2>/dev/null) bytes)" \
	test "$(stat -c %s /tmp/t2.nv12 2>/dev/null)" = $((640 * 480 * 3 / 2 * 40))
same /tmp/t2.nv12 /tmp/ref-testsrc-nv12 $((640 * 480 * 3 / 2))
check "...the same picture as gst-launch-1.0's ($out)" test $? = 0
check "...with the caps the second consumer chose (viacamd log)" \
	grep -q "camera testsrc: streaming NV12 640x480 at 15 fps from backend 'gst'" "$log"

# --- a file, looping at its end (30 frames at 15 fps: 2 s; capture 90)
ref clip YUY2 320 240 filesrc location=$cfg/clip.avi ! decodebin
# (Neutral frames until the pipeline's first frame: a busy TCG host takes seconds to start
# decodebin. 90 frames at 15 fps: 6 s, the clip's 2 s and its loop included.)
timeout 120 ffmpeg -nostdin -loglevel error -f v4l2 -input_format yuyv422 -i /dev/video52 \
	-frames:v 90 -f rawvideo -y /tmp/c1.yuyv >"$RES/ffmpeg-c1.log" 2>&1
check "ffmpeg captures 90 frames from the AVI clip ($(stat -c %s /tmp/c1.yuyv 2>/dev/null) bytes)" \
	test "$(stat -c %s /tmp/c1.yuyv 2>/dev/null)" = $((320 * 240 * 2 * 90))
same /tmp/c1.yuyv /tmp/ref-clip $((320 * 240 * 2))
check "...the clip's picture ($out)" test $? = 0
check "...its end was reported once" test "$(grep -c 'camera clip: gst: the pipeline reached the end of the stream' "$log")" = 1
# A new stream starts on neutral frames until the pipeline runs again (never the last
# stream's picture): 60 frames, 4 s at 15 fps, and the last one is the clip's.
timeout 60 gst-launch-1.0 -q v4l2src device=/dev/video52 num-buffers=60 ! \
	video/x-raw,format=YUY2,width=320,height=240 ! filesink location=/tmp/c2.yuyv \
	>"$RES/gst-c2.log" 2>&1
last_real /tmp/c2.yuyv $((320 * 240 * 2))
same /tmp/c2.yuyv.real /tmp/ref-clip $((320 * 240 * 2))
check "...and GStreamer gets it too ($out)" test $? = 0
check "...the clip played again after its end and for the new stream, never unlinked" \
	not grep "camera clip: gst: the pipeline failed" "$log"

# --- v4l2src of vivid, scaled to 320x240 by the pipeline
ref vivid YUY2 320 240 v4l2src device=/dev/video30
timeout 60 gst-launch-1.0 -q v4l2src device=/dev/video54 num-buffers=20 ! \
	video/x-raw,format=YUY2,width=320,height=240 ! filesink location=/tmp/v1.yuyv \
	>"$RES/gst-v1.log" 2>&1
check "GStreamer captures 20 frames of vivid through the gst backend ($(stat -c %s /tmp/v1.yuyv 2>/dev/null) bytes)" \
	test "$(stat -c %s /tmp/v1.yuyv 2>/dev/null)" = $((320 * 240 * 2 * 20))
same /tmp/v1.yuyv /tmp/ref-vivid $((320 * 240 * 2)) 8 95
check "...vivid's picture ($out)" test $? = 0
timeout 60 ffmpeg -nostdin -loglevel error -f v4l2 -i /dev/video54 -frames:v 30 -f rawvideo \
	-y /tmp/v2.yuyv >"$RES/ffmpeg-v2.log" 2>&1
same /tmp/v2.yuyv /tmp/ref-vivid $((320 * 240 * 2)) 8 95
check "...and ffmpeg too ($out)" test $? = 0

# --- without sizes and rates the offer comes from the source's caps (vivid's webcam sizes)
v4l2-ctl -d /dev/video62 --list-formats-ext >"$RES/probed-formats.txt" 2>&1
sizes=$(sed -nE 's/.*Size: Discrete ([0-9]+x[0-9]+).*/\1/p' "$RES/probed-formats.txt" | sort -u | xargs)
check "a pipeline without sizes offers the sizes its source lists (vivid's: $sizes)" \
	test -n "$(grep -w 320x180 <<<"$sizes")" -a -n "$(grep -w 640x360 <<<"$sizes")"

# --- the source unplugged while a consumer streams, and back
"$BIN/vctest" consume /dev/video56 -a -n 100000 -t 40 >"$RES/proxy-consumer.log" 2>&1 &
cons=$!
wait_for 60 grep -q "camera proxy: streaming " "$log" || fail "the proxy camera did not start"
sleep 4
id=$(cat /sys/class/video4linux/video60/viacam_id)
kill $prod 2>/dev/null; wait $prod 2>/dev/null
"$BIN/viacamctl" remove "$id" >>"$RES/add.log" 2>&1 || fail "viacamctl remove $id"
reported() { grep -q "camera proxy: gst: the pipeline failed: " "$log"; }
check "the unplugged source is reported with GStreamer's message" wait_for 30 reported
grep "camera proxy: gst:" "$log" >"$RES/proxy-notes.log"
sleep 10 # retries at 0.5, 1, 2, 4 s fail: no new report
check "...once, not at every retry ($(grep -c 'camera proxy: gst: the pipeline fail' "$log") reports)" \
	test "$(grep -c 'camera proxy: gst: the pipeline fail' "$log")" = 1
"$BIN/viacamctl" add --label "proxied" --capture-nr 60 --backend-nr 61 >>"$RES/add.log" 2>&1 ||
	fail "viacamctl add again ($(cat "$RES/add.log"))"
wait_for 10 test -e /dev/video61 || fail "no /dev/video61 after adding it again"
wait_for 10 test -e /dev/video60 && as_udev /dev/video60
"$BIN/vctest" produce /dev/video61 -W 320 -H 240 -r 10 -P -n 100000 >"$RES/producer2.log" 2>&1 &
prod=$!
recovered() { grep -q "camera proxy: gst: the pipeline delivers frames again" "$log"; }
check "...and it recovers when the camera is back" wait_for 30 recovered
wait $cons
rc=$?
out=$(tail -n 1 "$RES/proxy-consumer.log")
check "the consumer streamed throughout (exit $rc: $out)" test $rc = 0
gap=$(sed -nE 's/.*max_gap_ms=([0-9]+).*/\1/p' <<<"$out")
check "...never waiting more than the camera's timeout and slack for a frame (max gap ${gap:-?} ms)" \
	test "${gap:-99999}" -lt 3000
kill $prod 2>/dev/null; wait $prod 2>/dev/null

# --- own clock, latency: vctest's numbered frames at 10 fps through the v4l2 backend
"$BIN/vctest" produce /dev/video61 -W 320 -H 240 -r 10 -P -n 100000 -S 30 -T /tmp/prod.times \
	>"$RES/producer3.log" 2>&1 &
prod=$!
"$BIN/vctest" consume /dev/video64 -n 100000 -t 10 -T /tmp/cons.times >"$RES/latency-consumer.log" 2>&1
kill $prod 2>/dev/null; wait $prod 2>/dev/null
cp /tmp/prod.times /tmp/cons.times "$RES/"
grep -q "camera v4l2clock: streaming YUYV 320x240 at 10 fps from backend 'v4l2'" "$log" ||
	fail "the v4l2 camera did not stream YUYV 320x240 at 10 fps ($(grep 'camera v4l2clock' "$log" | tail -n 2))"
# latency per frame: the consumer's DQBUF time minus the producer's QBUF time of that counter
lat=$(awk 'NR == FNR { p[$1] = $2; next } ($1 in p) { d = $2 - p[$1]; s += d; n++; if (d > m) m = d }
	END { if (n) printf "%d %.1f %.1f", n, s / n, m; else print "0 999 999" }' /tmp/prod.times /tmp/cons.times)
read -r n mean worst <<<"$lat"
check "the v4l2 backend passes each frame on when its device delivers it: $n frames in 10 s, mean latency $mean ms (worst $worst; a 100 ms timer would add 50 on average)" \
	awk -v n="$n" -v m="$mean" 'BEGIN { exit !(n >= 60 && m < 25) }'
# the producer stamped each frame "captured 30 ms before QBUF": that time passes the first
# bridge, the v4l2 backend (the proxied buffer's timestamp) and the second bridge unchanged
eq=$(awk 'NR == FNR { st[$1] = $3; next } ($1 in st) { n++; d = $3 - st[$1]; if (d < 0.0015 && d > -0.0015) eq++ }
	END { print eq + 0, n + 0 }' /tmp/prod.times /tmp/cons.times)
check "...and each frame's capture time with it, to the microsecond: $eq frames ($(tail -n 1 "$RES/latency-consumer.log"))" \
	awk -v e="$eq" 'BEGIN { split(e, a, " "); exit !(a[2] >= 60 && a[1] == a[2]) }'

# --- own clock: a live source at 10 fps; every frame new, at the source's pace
"$BIN/vctest" consume /dev/video58 -a -n 100000 -t 8 >"$RES/live-consumer.log" 2>&1
out=$(tail -n 1 "$RES/live-consumer.log")
real=$(sed -nE 's/.* real=([0-9]+).*/\1/p' <<<"$out")
repeats=$(sed -nE 's/.* repeats=([0-9]+).*/\1/p' <<<"$out")
check "a live source at 10 fps: 8 s bring 50..90 new frames, at most 3 repeats (real=${real:-?} repeats=${repeats:-?})" \
	test "${real:-0}" -ge 50 -a "${real:-0}" -le 90 -a "${repeats:-99}" -le 3
wait_for 30 grep -q "camera live: the last consumer stopped" "$log"
line=$(grep "camera live: the last consumer stopped" "$log" | tail -n 1)
sent=$(sed -nE 's/.*\(([0-9]+) frames sent, ([0-9]+) slots skipped\).*/\1/p' <<<"$line")
skipped=$(sed -nE 's/.*\(([0-9]+) frames sent, ([0-9]+) slots skipped\).*/\2/p' <<<"$line")
# (A timer at the same nominal rate does about as well here: the latency check above is the
# one that tells a clock from a timer.)
check "...no frame of its clock lost for want of a buffer (${sent:-?} sent, ${skipped:-?} skipped)" \
	test "${sent:-0}" -ge 50 -a "${skipped:-99}" -le $((${sent:-0} / 20))

# --- the v4l2 backend forwards vivid's controls
v4l2-ctl -d /dev/video66 --list-ctrls >"$RES/vividctl-ctrls.txt" 2>&1
check "the v4l2 camera has vivid's user controls (brightness, contrast, saturation, hue, menu)" \
	test "$(grep -cE '^ *(brightness|contrast|saturation|hue|menu) ' "$RES/vividctl-ctrls.txt")" = 5
viv_ctrl() { v4l2-ctl -d /dev/video30 --get-ctrl "$1" 2>/dev/null | sed -nE 's/.*: (-?[0-9]+).*/\1/p'; }
v4l2-ctl -d /dev/video66 -c contrast=200 || fail "set contrast on the v4l2 camera"
check "...a value set while idle waits: vivid's contrast is still $(viv_ctrl contrast)" \
	test "$(viv_ctrl contrast)" != 200
"$BIN/vctest" consume /dev/video66 -a -n 100000 -t 8 >"$RES/vividctl-consumer.log" 2>&1 &
cons=$!
wait_for 60 grep -q "camera vividctl: streaming " "$log" || fail "the vivid camera did not start"
check "...and reaches vivid when the stream starts (contrast $(viv_ctrl contrast))" \
	wait_for 10 test "$(viv_ctrl contrast)" = 200
v4l2-ctl -d /dev/video66 -c brightness=77 || fail "set brightness on the v4l2 camera"
bright77() { [ "$(viv_ctrl brightness)" = 77 ]; }
check "...a value set while streaming reaches vivid at once (brightness $(sleep 1; viv_ctrl brightness))" \
	wait_for 10 bright77
check "...and the config's ctrl.saturation = 90 is vivid's ($(viv_ctrl saturation))" \
	test "$(viv_ctrl saturation)" = 90
wait $cons

kill $daemon; wait $daemon
check "viacamd stops cleanly" grep -q 'viacamd: stopped' "$log"
grep -h 'viacamd:' "$log" | grep -v ': streaming \|stopped (' | tail -n 30 >"$RES/viacamd-tail.log"

# --- a slow device does not stall the other cameras: the v4l2 backend opens, sets up and
# starts its device in its own thread (VIACAMD_TEST_V4L2_START_MS holds it 2 s before
# STREAMON, as a slow camera would); a pattern camera's consumer meanwhile gets every frame.
# A device that has gone by the time a consumer streams is reported once, with its error.
cat >$cfg/slow.conf <<CONF
[camera pat]
video_nr = 70
backend_nr = 71
backend = pattern
formats = YUYV
sizes = 320x240
rates = 30

[camera slow]
video_nr = 72
backend_nr = 73
backend = v4l2
device = /dev/video60
formats = YUYV

[camera gone]
video_nr = 74
backend_nr = 75
backend = v4l2
device = /dev/video60
CONF
"$BIN/vctest" produce /dev/video61 -W 320 -H 240 -r 10 -P -n 100000 >"$RES/producer4.log" 2>&1 &
prod=$!
slog=$RES/viacamd-slow.log
VIACAMD_TEST_V4L2_START_MS=2000 "$BIN/viacamd" -c $cfg/slow.conf >"$slog" 2>&1 &
daemon=$!
wait_for 60 test -e /dev/video70 -a -e /dev/video72 -a -e /dev/video74 ||
	{ cat "$slog"; die "viacamd did not create the cameras of slow.conf"; }
"$BIN/vctest" consume /dev/video70 -a -n 100000 -t 7 >"$RES/pat-consumer.log" 2>&1 &
cons=$!
sleep 2
# 60 frames at 10 fps; the bridge fills the first second or two with neutral frames (its
# timeout) while the device starts
"$BIN/vctest" consume /dev/video72 -n 60 -t 20 >"$RES/slow-consumer.log" 2>&1
out=$(tail -n 1 "$RES/slow-consumer.log")
real=$(sed -nE 's/.* real=([0-9]+).*/\1/p' <<<"$out")
neutral=$(sed -nE 's/.* neutral=([0-9]+).*/\1/p' <<<"$out")
check "a camera whose device takes 2 s to start streams the device's frames after it ($out)" \
	test "${real:-0}" -ge 25 -a "${neutral:-0}" -ge 1
wait $cons
out=$(tail -n 1 "$RES/pat-consumer.log")
gap=$(sed -nE 's/.*max_gap_ms=([0-9]+).*/\1/p' <<<"$out")
check "...while the pattern camera's consumer waited at most ${gap:-?} ms for a frame ($out)" \
	test "${gap:-99999}" -lt 500
# consumers that leave while the device is still starting (one after 1 s, then six more
# after 0.3 s each: each start and stop is a command to the worker, which is busy for 2 s),
# then one that streams
timeout -s KILL 1 "$BIN/vctest" consume /dev/video72 -n 100 >/dev/null 2>&1
for i in 1 2 3 4 5 6; do
	timeout -s KILL 0.3 "$BIN/vctest" consume /dev/video72 -n 100 >/dev/null 2>&1
done
"$BIN/vctest" consume /dev/video72 -n 100 -t 30 >"$RES/slow-consumer2.log" 2>&1
out=$(tail -n 1 "$RES/slow-consumer2.log")
real=$(sed -nE 's/.* real=([0-9]+).*/\1/p' <<<"$out")
check "...and after consumers came and went during the start, the next one gets the device's frames ($out)" \
	test "${real:-0}" -ge 30
kill $prod 2>/dev/null; wait $prod 2>/dev/null
id=$(cat /sys/class/video4linux/video60/viacam_id 2>/dev/null)
[ -n "$id" ] && "$BIN/viacamctl" remove "$id" >>"$RES/add.log" 2>&1
wait_for 10 test ! -e /dev/video60
timeout 15 ffmpeg -nostdin -loglevel error -f v4l2 -video_size 320x240 -i /dev/video74 \
	-frames:v 3 -f null - >"$RES/ffmpeg-gone.log" 2>&1
reported() { grep -q "camera gone: v4l2: cannot stream [0-9]*x[0-9]* from /dev/video60: No such file or directory" "$slog"; }
check "a device gone before its camera streams is reported: $(grep 'camera gone' "$slog" | tail -n 2 | tr '\n' ' ')" \
	wait_for 10 reported
kill $daemon; wait $daemon
check "...and viacamd stops cleanly" grep -q 'viacamd: stopped' "$slog"
rmmod vivid
rmmod viacam || fail "rmmod viacam"
finish
