#!/bin/bash
# TEST-12-apps: real applications on viacamd cameras (issue 7). viacamd serves a pattern
# camera (YUYV NV12 YUV420 RGB24 x 640x480 320x240 x 30 15 fps), the VIA backend on its model
# with the OV7670 on i2c-stub, and a file camera playing a Y4M clip made by ffmpeg.
# - GStreamer (what Cheese uses): with udev's v4l_id tags in place, gst-device-monitor-1.0
#   lists each camera under its label with the declared caps, and no backend node as a source;
#   gst-launch-1.0 v4l2src negotiates every offered format x size x rate, with and without
#   libv4l2, and gets the pattern's pixels; a caps change between two runs needs no daemon.
# - ffmpeg: -list_formats shows exactly the configured formats and sizes; a 320x240 15 fps
#   capture has the right size, pixels and a plausible rate; ffmpeg as a plain producer into a
#   backend node (viacamctl add, no daemon) while another ffmpeg captures its capture node.
# - v4l2-ctl and yavta: mmap, userptr, dmabuf and read() captures with the right pixels,
#   controls listed and set (v4l2-ctl -c / --get-ctrl, yavta -l / -w) reaching the picture.
# - One snapshot PNG per backend in the results: via.png, pattern.png, file.png.
. "$(dirname "$0")/../lib.sh"

modprobe i2c-dev || die "modprobe i2c-dev"
modprobe i2c-stub chip_addr=0x21 || die "modprobe i2c-stub"
load_viacam devices=0
cfg=/tmp/cfg conf=/tmp/cfg/viacam.conf log=$RES/viacamd.log clients=$RES/clients.log
mkdir -p $cfg
# A still clip (SMPTE bars do not move), so any frame the file camera shows can be compared
# with the clip's first frame.
ffmpeg -nostdin -loglevel error -f lavfi -i smptebars=size=320x240:rate=15 -pix_fmt yuv420p \
	-frames:v 30 $cfg/clip.y4m -frames:v 1 -pix_fmt yuv420p -f rawvideo $cfg/clip.yu12 || die "ffmpeg could not write the Y4M clip"
t0=$(date +%s)
section() { echo "$(($(date +%s) - t0)) s: $*" >>"$RES/timing"; }
wait_for() { local i n=$(($1 * 10)); shift; for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done; return 1; }
not() { ! "$@"; }
# frame_size FOURCC W H
frame_size() {
	case $1 in
	YUYV) echo $(($2 * $3 * 2)) ;;
	NV12 | YU12) echo $(($2 * $3 * 3 / 2)) ;;
	RGB3) echo $(($2 * $3 * 3)) ;;
	esac
}
# Under TCG each program started costs up to a second (its binary and libraries come over 9p),
# so the loops below use shell builtins where they can.
# frames_ok FILE FOURCC W H N [vcpix args]: N whole frames (vcpix refuses partial ones), the
# last one the pattern's picture; prints vcpix's verdict
frames_ok() {
	local file=$1 f=$2 w=$3 h=$4 n=$5 out; shift 5
	out=$("$BIN/vcpix" "$file" "$f" "$w" "$h" "$@" 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	[[ $out == *" frame $n of $n "* ]] || { echo "not $n frames"; return 1; }
}
# check_said DESCRIPTION COMMAND...: check COMMAND, with its last line of output (vcpix's
# verdict) in the check's line, and all its output before the line when it fails
check_said() {
	local what=$1 out; shift
	if out=$("$@" 2>&1); then
		out=${out##*$'\n'}
		pass "$what: ${out#vcpix: }"
	else
		echo "$out"; fail "$what"
	fi
}
check_frames() { local what=$1; shift; check_said "$what" frames_ok "$@"; }
# timeout_ms = 10000: a backend that starts slowly on a busy host must not meet the bridge's
# neutral grey frames (sent after timeout_ms without a frame before the first real one).
cat >$conf <<CONF
[camera main]
label = viacam apps
video_nr = 20
timeout_ms = 10000
backend_nr = 21
formats = YUYV NV12 YUV420 RGB24
sizes = 640x480 320x240
rates = 30 15
pattern = bars

[camera via]
label = VIA camera
video_nr = 30
timeout_ms = 10000
backend_nr = 31
backend = via
transport = model
sensor_bus = SMBus stub driver
sensor_smbus = yes

[camera file]
label = viacam file
video_nr = 32
timeout_ms = 10000
backend_nr = 33
backend = file
file = $cfg/clip.y4m
CONF
"$BIN/viacamd" -c $conf --state /run/viacamd/cameras >>"$log" 2>&1 &
daemon=$!
wait_for 30 test -e /dev/video20 -a -e /dev/video30 -a -e /dev/video32 ||
	{ cat "$log"; die "viacamd did not create /dev/video20, 30 and 32"; }
cap=/dev/video20

section "device monitor"
# ---------------------------------------------------------------- GStreamer's device monitor
# GStreamer's v4l2 device provider lists only nodes that udev's v4l_id tagged.
SYSTEMD_IGNORE_CHROOT=1 /lib/systemd/systemd-udevd --daemon >>"$RES/udevd.log" 2>&1 ||
	fail "systemd-udevd did not start"
check "udevd runs with /run/udev writable" test -d /run/udev -a -w /run/udev
udevadm trigger --subsystem-match=video4linux >>"$RES/udevd.log" 2>&1
udevadm settle -t 60 >>"$RES/udevd.log" 2>&1
udevadm info -q property /dev/video20 >"$RES/udev-video20.txt" 2>&1
check "v4l_id tagged the capture node (ID_V4L_VERSION=2, :capture:)" \
	test "$(grep -cxE 'ID_V4L_VERSION=2|ID_V4L_CAPABILITIES=:capture:' "$RES/udev-video20.txt")" = 2

timeout 60 gst-device-monitor-1.0 Video/Source >"$RES/device-monitor.txt" 2>>"$clients"
timeout 60 gst-device-monitor-1.0 >"$RES/device-monitor-all.txt" 2>>"$clients"
# mon_block FILE NODE: the monitor's entry of NODE
mon_block() {
	awk -v node="$2" 'BEGIN { RS = "Device found:" } index($0, "device.path = " node "\n") { print }' "$1"
}
# mon_caps FILE NODE: its progressive caps as "FORMAT WxH RATE,RATE..." lines, sorted
mon_caps() {
	mon_block "$1" "$2" |
		grep -oE 'video/x-raw, format=[A-Za-z0-9_]+, width=[0-9]+, height=[0-9]+, framerate=(\{[^}]*\}|(\(fraction\))?[0-9]+/[0-9]+)' |
		sed -E 's/video\/x-raw, format=([^,]+), width=([0-9]+), height=([0-9]+), framerate=(.*)/\1 \2x\3 \4/; s/\(fraction\)//g' |
		awk '{ f = $1; s = $2; $1 = $2 = ""; gsub(/[{} ]/, ""); print f, s, $0 }' | sort
}
# mon_is FILE NODE NAME CLASS: the monitor lists NODE under NAME in CLASS
mon_is() { local b; b=$(mon_block "$1" "$2"); grep -qx "	name  : $3" <<<"$b" && grep -qx "	class : $4" <<<"$b"; }
want_caps=$(for f in YUY2 NV12 I420 RGB; do for s in 640x480 320x240; do echo "$f $s 30/1,15/1"; done; done | sort)
got_caps=$(mon_caps "$RES/device-monitor.txt" /dev/video20)
printf '%s\n' "$got_caps" >"$RES/device-monitor-caps.txt"
check "gst-device-monitor lists /dev/video20 as Video/Source named 'viacam apps'" \
	mon_is "$RES/device-monitor.txt" /dev/video20 "viacam apps" Video/Source
check "...with caps YUY2 NV12 I420 RGB x 640x480 320x240 at 30/1 and 15/1, nothing else ($(wc -l <<<"$got_caps") caps)" \
	test "$got_caps" = "$want_caps"
via_listed() {
	mon_is "$RES/device-monitor.txt" /dev/video30 "VIA camera" Video/Source &&
		[ "$(mon_caps "$RES/device-monitor.txt" /dev/video30 |
			grep -cE '^YUY2 (640x480|352x288|320x240|176x144) 30/1,15/1,10/1,5/1,1/1$')" = 4 ]
}
check "...the VIA camera as 'VIA camera' with YUY2 at 640x480 352x288 320x240 176x144, 30 to 1 fps" via_listed
check "...and RGB16 at 640x480" \
	grep -qx 'RGB16 640x480 30/1,15/1,10/1,5/1,1/1' <<<"$(mon_caps "$RES/device-monitor.txt" /dev/video30)"
file_listed() {
	mon_is "$RES/device-monitor.txt" /dev/video32 "viacam file" Video/Source &&
		mon_caps "$RES/device-monitor.txt" /dev/video32 | grep -qx 'I420 320x240 15/1'
}
check "...the file camera as 'viacam file' with I420 320x240 at 15/1" file_listed
check "no backend node is listed as a Video/Source" \
	not grep -qE 'device.path = /dev/video(21|31|33)$|name  : viacam backend' "$RES/device-monitor.txt"
check "...while the unfiltered monitor shows them as Video/Sink" \
	test "$(for n in 21 31 33; do mon_block "$RES/device-monitor-all.txt" /dev/video$n; done | grep -c 'class : Video/Sink')" = 3

section "gst-launch"
# ---------------------------------------------------------------- gst-launch-1.0 v4l2src
gst_cap() { # GSTFORMAT W H RATE FILE [LIBV4L2]: 3 buffers from /dev/video20 (through libv4l2
	# when LIBV4L2 is 1)
	local g=$1 w=$2 h=$3 r=$4 file=$5 lib=${6:-0} t=${EPOCHREALTIME/./} rc
	echo "== libv4l2=$lib gst-launch-1.0 $g ${w}x$h $r/1" >>"$RES/gst.log"
	(
		[ "$lib" = 1 ] && export GST_V4L2_USE_LIBV4L2=1
		exec timeout 60 gst-launch-1.0 -q v4l2src device=$cap num-buffers=3 ! \
			video/x-raw,format=$g,width=$w,height=$h,framerate=$r/1 ! filesink location="$file"
	) >>"$RES/gst.log" 2>&1
	rc=$?
	t=$(((${EPOCHREALTIME/./} - t) / 100000))
	echo "== rc $rc after $((t / 10)).$((t % 10)) s" >>"$RES/gst.log"
	return $rc
}
# the daemon's last "camera main: streaming ..." line, in $neg
last_stream() {
	local l
	neg=
	while IFS= read -r l; do [[ $l == *"camera main: streaming "* ]] && neg=${l#viacamd: }; done <"$log"
}
stream_is() { last_stream; [[ $neg == *"streaming $1 from backend"* ]]; }
for lib in 0 1; do
	what="v4l2src"
	[ $lib = 1 ] && what="v4l2src with libv4l2"
	for g in YUY2 NV12 I420 RGB; do
		case $g in YUY2) f=YUYV ;; I420) f=YU12 ;; RGB) f=RGB3 ;; *) f=$g ;; esac
		for s in 640x480 320x240; do
			w=${s%x*} h=${s#*x}
			for r in 30 15; do
				file=/tmp/gst-$lib-$g-$s-$r.raw
				gst_cap $g $w $h $r $file $lib
				rc=$?
				wait_for 5 stream_is "$f ${w}x$h at $r fps"
				check_frames "$what $g $s@$r (rc $rc)" $file $f $w $h 3
				check "...negotiated as $f ${w}x$h at $r fps ($neg)" stream_is "$f ${w}x$h at $r fps"
			done
		done
	done
done

section "caps change"
# A caps change between two runs on the same node, the daemon untouched.
lines=$(wc -l <"$log")
gst_cap YUY2 640 480 30 /tmp/change-1.raw
gst_cap I420 320 240 15 /tmp/change-2.raw
check_frames "caps change: YUY2 640x480@30" /tmp/change-1.raw YUYV 640 480 3
check_frames "...then I420 320x240@15 on the same node" /tmp/change-2.raw YU12 320 240 3
check "...with the same viacamd (pid $daemon; running: $(pgrep -x viacamd | xargs))" \
	test "$(pgrep -x viacamd | xargs)" = "$daemon"
check "...which was not reloaded or restarted in between" \
	not grep -qE 'reloading|starting with' <<<"$(tail -n +$((lines + 1)) "$log")"

section "ffmpeg"
# ---------------------------------------------------------------- ffmpeg
timeout 60 ffmpeg -nostdin -hide_banner -f v4l2 -list_formats all -i $cap >"$RES/ffmpeg-formats.txt" 2>&1
got=$(sed -nE 's/.*\] (Raw|Compressed) *: *([^ ]+) *:.*: *(.*[^ ]) *$/\2 \3/p' "$RES/ffmpeg-formats.txt")
want=$(printf '%s 640x480 320x240\n' yuyv422 nv12 yuv420p rgb24)
check "ffmpeg -list_formats all shows YUYV NV12 YUV420 RGB24 at 640x480 320x240, nothing else ($(xargs <<<"$got"))" \
	test "$got" = "$want"

timeout 60 ffmpeg -nostdin -f v4l2 -input_format yuyv422 -video_size 320x240 -framerate 15 -i $cap \
	-frames:v 30 -vf showinfo -fps_mode passthrough -f rawvideo -y /tmp/ff.yuyv >"$RES/ffmpeg-capture.log" 2>&1
check_frames "ffmpeg captures 30 frames of YUYV 320x240" /tmp/ff.yuyv YUYV 320 240 30
check "...which ffmpeg saw as 320x240" \
	test "$(grep -c 'Parsed_showinfo.* s:320x240 ' "$RES/ffmpeg-capture.log")" = 30
# The median interval between buffer timestamps: a host too busy to run the guest for a while
# makes gaps and bursts, which move the mean but hardly the median.
rate=$(grep -oE 'Parsed_showinfo.* pts_time:[0-9.]+' "$RES/ffmpeg-capture.log" | sed 's/.*pts_time://' |
	awk 'NR > 1 { print $1 - p } { p = $1 }' | sort -g |
	awk '{ d[NR] = $1 } END { m = d[int((NR + 1) / 2)]; if (NR > 10 && m > 0) printf "%.2f", 1 / m }')
echo "ffmpeg 320x240 at 15 fps: measured ${rate:-?} fps" >>"$RES/summary"
check "...at a plausible rate for 15 fps (${rate:-nothing} fps from the median interval of the buffer timestamps)" \
	awk -v r="${rate:-0}" 'BEGIN { exit !(r >= 9 && r <= 21) }'

section "v4l2-ctl and yavta"
# ---------------------------------------------------------------- v4l2-ctl and yavta
v4l2-ctl -d $cap --list-ctrls >"$RES/ctrls.txt" 2>>"$clients"
check "v4l2-ctl --list-ctrls shows the pattern backend's controls ($(awk '/0x/ { print $1 }' "$RES/ctrls.txt" | xargs))" \
	test "$(awk '/0x/ { print $1 }' "$RES/ctrls.txt" | xargs)" = \
	"brightness contrast saturation hue horizontal_flip vertical_flip test_pattern"
v4l2-ctl -d $cap -c brightness=40 2>>"$clients"
check "v4l2-ctl -c brightness=40, then --get-ctrl shows it" \
	grep -qx 'brightness: 40' <<<"$(v4l2-ctl -d $cap --get-ctrl=brightness 2>>"$clients")"
v4l2-ctl -d $cap --set-fmt-video=width=320,height=240,pixelformat=YUYV -p 30 >>"$clients" 2>&1
v4l2-ctl -d /dev/video30 --set-fmt-video=width=640,height=480,pixelformat=YUYV >>"$clients" 2>&1
for mode in mmap user dmabuf read; do
	file=/tmp/v4l2ctl-$mode.raw
	case $mode in
	read) timeout 60 dd if=$cap of=$file bs=153600 count=4 iflag=fullblock 2>"$RES/read.log" ;;
	dmabuf) # buffers exported by the VIA camera's capture node, imported here
		timeout 60 v4l2-ctl -d $cap --stream-dmabuf --export-device /dev/video30 --stream-count=4 \
			--stream-to=$file >"$RES/v4l2ctl-$mode.log" 2>&1 ;;
	*) timeout 60 v4l2-ctl -d $cap --stream-$mode --stream-count=4 --stream-to=$file \
		>"$RES/v4l2ctl-$mode.log" 2>&1 ;;
	esac
	check_frames "$mode capture: 4 frames with brightness 40" $file YUYV 320 240 4 -c brightness=40
done
# viacamd makes each frame straight in the consumer's buffer, a DMABUF one too (the dma-buf
# of the VIA camera's capture buffer, lent to viacamd): the kernel copies (nearly) nothing.
read -r k0 f0 < <(cam_stats $cap copies frames_in)
timeout 60 v4l2-ctl -d $cap --stream-dmabuf --export-device /dev/video30 --stream-count=60 \
	--stream-to=/tmp/v4l2ctl-dmabuf60.raw >"$RES/v4l2ctl-dmabuf60.log" 2>&1
read -r k1 f1 < <(cam_stats $cap copies frames_in)
check_frames "dmabuf capture: 60 frames with brightness 40" /tmp/v4l2ctl-dmabuf60.raw YUYV 320 240 60 -c brightness=40
check "...with $((k1 - k0)) kernel copies for $((f1 - f0)) frames (at most 1 in 10)" \
	test $((f1 - f0)) -ge 50 -a $(((k1 - k0) * 10)) -le $((f1 - f0))
unbright() { frames_ok /tmp/v4l2ctl-mmap.raw YUYV 320 240 4 >/dev/null; }
check "...and the unbrightened check fails on them" not unbright

yavta -l $cap >"$RES/yavta-l.txt" 2>&1
yavta_lists() {
	grep -q '^7 controls found' "$RES/yavta-l.txt" &&
		grep -qE "^control 0x00980900 .Brightness' .* current 40$" "$RES/yavta-l.txt"
}
check "yavta -l lists the 7 controls, brightness at 40" yavta_lists
yavta -w '0x00980900 -20' $cap >"$RES/yavta-w.txt" 2>&1
check "yavta -w '0x00980900 -20' sets brightness ($(grep -m1 '^Control' "$RES/yavta-w.txt"))" \
	grep -qx 'brightness: -20' <<<"$(v4l2-ctl -d $cap --get-ctrl=brightness 2>>"$clients")"
yavta -l $cap >"$RES/yavta-l2.txt" 2>&1
check "...and yavta -l reads it back" grep -qE "^control 0x00980900 .Brightness' .* current -20$" "$RES/yavta-l2.txt"
for m in mmap userptr; do
	opt=() && [ $m = userptr ] && opt=(-u)
	timeout 60 yavta "${opt[@]}" -c4 -n4 -s 320x240 -f YUYV --capture=4 -F/tmp/yavta-$m-# $cap \
		>"$RES/yavta-$m.log" 2>&1
	n=$(find /tmp -maxdepth 1 -name "yavta-$m-*" -size 153600c | wc -l)
	check "yavta $m: 4 frames of 153600 bytes ($n files)" test "$n" = 4
	check_frames "...the last with brightness -20" /tmp/yavta-$m-000003 YUYV 320 240 1 -c brightness=-20
done
v4l2-ctl -d $cap -c brightness=0 2>>"$clients"

section "snapshots"
# ---------------------------------------------------------------- snapshots per backend
png_ok() { # FILE W H
	[ "$(ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height \
		-of csv=p=0 "$1" 2>>"$clients")" = "png,$2,$3" ]
}
# VIA model: YUYV 640x480, frames also written raw to compare with the model's reference render
timeout 60 ffmpeg -nostdin -loglevel error -f v4l2 -input_format yuyv422 -video_size 640x480 -i /dev/video30 \
	-frames:v 2 -f rawvideo -y /tmp/via.yuyv -frames:v 1 -y "$RES/via.png" 2>>"$clients"
check_said "VIA model: ffmpeg's frames are the model's picture" "$BIN/vcpix" --via /tmp/via.yuyv YUYV 640 480
check "...via.png is a 640x480 PNG ($(stat -c %s "$RES/via.png" 2>/dev/null) bytes)" png_ok "$RES/via.png" 640 480
# pattern: the GStreamer capture checked above
ffmpeg -nostdin -loglevel error -f rawvideo -pix_fmt yuyv422 -s 640x480 -i /tmp/gst-0-YUY2-640x480-30.raw \
	-frames:v 1 -y "$RES/pattern.png" 2>>"$clients"
check "pattern.png is a 640x480 PNG ($(stat -c %s "$RES/pattern.png" 2>/dev/null) bytes)" png_ok "$RES/pattern.png" 640 480
# file: the clip's bars, byte for byte (the clip is YUV420 and needs no conversion)
timeout 60 ffmpeg -nostdin -loglevel error -f v4l2 -input_format yuv420p -video_size 320x240 -i /dev/video32 \
	-frames:v 2 -f rawvideo -y /tmp/file.yu12 -frames:v 1 -y "$RES/file.png" 2>>"$clients"
check "file: ffmpeg captures the clip's picture unchanged ($(stat -c %s /tmp/file.yu12 2>/dev/null) bytes)" \
	bash -c "[ \$(stat -c %s /tmp/file.yu12) = 230400 ] && tail -c 115200 /tmp/file.yu12 | cmp -s - $cfg/clip.yu12"
check "...file.png is a 320x240 PNG ($(stat -c %s "$RES/file.png" 2>/dev/null) bytes)" png_ok "$RES/file.png" 320 240

check "no misprogramming was reported by the VIA model" not grep -q misprogrammed "$log"
kill $daemon; wait $daemon
check "viacamd stops cleanly" grep -q 'viacamd: stopped' "$log"

section "plain producer"
# ---------------------------------------------------------------- ffmpeg as a plain producer
# No daemon: a camera from viacamctl add; ffmpeg's testsrc into its backend node while another
# ffmpeg captures its capture node.
"$BIN/viacamctl" add --label "ffmpeg producer" --capture-nr 40 --backend-nr 41 >"$RES/add.log" 2>&1 ||
	fail "viacamctl add ($(cat "$RES/add.log"))"
wait_for 10 test -e /dev/video40 -a -e /dev/video41 || fail "no /dev/video40 and 41 after viacamctl add"
timeout 60 ffmpeg -nostdin -loglevel error -re -f lavfi -i testsrc=size=320x240:rate=30 \
	-pix_fmt yuyv422 -f v4l2 /dev/video41 >"$RES/ffmpeg-producer.log" 2>&1 &
prod=$!
wait_frames_in /dev/video40 5 60 || fail "ffmpeg's frames did not reach the bridge"
timeout 60 ffmpeg -nostdin -loglevel error -f v4l2 -i /dev/video40 -frames:v 10 -f rawvideo -y /tmp/plain.yuyv \
	>"$RES/ffmpeg-consumer.log" 2>&1
kill $prod 2>/dev/null; wait $prod 2>/dev/null
distinct=$(tail -c 153600 /tmp/plain.yuyv | od -An -tu1 -v | tr -s ' ' '\n' | sed '/^$/d' | sort -u | wc -l)
grey=$(tail -c 153600 /tmp/plain.yuyv | tr -d '\200' | wc -c)
check "ffmpeg captures 10 frames of 320x240 YUYV from ffmpeg's producer ($(stat -c %s /tmp/plain.yuyv 2>/dev/null) bytes)" \
	test "$(stat -c %s /tmp/plain.yuyv 2>/dev/null)" = $((153600 * 10))
check "...showing testsrc, not the bridge's neutral grey ($distinct byte values, $grey bytes not 0x80)" \
	test "$distinct" -gt 50 -a "$grey" -gt 100000
id=$(cat /sys/class/video4linux/video40/viacam_id 2>/dev/null)
"$BIN/viacamctl" remove "$id" >>"$RES/add.log" 2>&1 || fail "viacamctl remove $id"

udevadm control --exit >>"$RES/udevd.log" 2>&1
rmmod viacam || fail "rmmod viacam"
section end
finish
