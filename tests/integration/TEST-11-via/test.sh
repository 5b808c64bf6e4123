#!/bin/bash
# TEST-11-via: the VIA backend on the register-level VX855 model, with the OV7670's registers
# on a real kernel I2C bus (i2c-stub at 0x21 through i2c-dev, SMBus byte transfers): the
# backend's own i2c-dev code programs the sensor, and the model reads the sensor's state from
# that bus. v4l2-compliance, three sizes against the model's reference render, flips, the
# test-pattern bars, frame rates 30/15/10 within 5%, and the sensor errors (no bus, wrong
# identity) reported with the camera usable again after a config fix.
. "$(dirname "$0")/../lib.sh"

modprobe i2c-dev || die "modprobe i2c-dev"
modprobe i2c-stub chip_addr=0x21 || die "modprobe i2c-stub"
stub=$(grep -l '^SMBus stub driver$' /sys/class/i2c-dev/i2c-*/name | head -n1)
[ -n "$stub" ] || die "no i2c-stub adapter"
echo "sensor bus: /dev/$(basename "$(dirname "$stub")") (SMBus stub driver)" >>"$RES/summary"
load_viacam devices=0
cfg=/tmp/cfg conf=/tmp/cfg/viacam.conf log=$RES/viacamd.log
mkdir -p $cfg
put_conf() { cat >"$conf.tmp" && mv "$conf.tmp" "$conf"; }
wait_for() { local i n=$(($1 * 10)); shift; for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done; return 1; }
log_has() { grep -qF -- "$1" "$log"; }
not() { ! "$@"; }
via_conf() { # extra lines for the camera section
	{ printf '[camera via]\nlabel = VIA camera\nvideo_nr = 30\nbackend_nr = 31\nbackend = via\n'
	  printf 'transport = model\nsensor_bus = SMBus stub driver\nsensor_smbus = yes\nformats = YUYV RGB565\n'
	  printf '%s\n' "$@"; } | put_conf
}
capture() { # FOURCC W H FILE N [v4l2-ctl args]
	local f=$1 w=$2 h=$3 file=$4 n=$5; shift 5
	timeout 60 v4l2-ctl -d /dev/video30 --set-fmt-video=width=$w,height=$h,pixelformat=$f "$@" \
		--stream-mmap --stream-count="$n" --stream-to="$file" 2>&1
}

via_conf
"$BIN/viacamd" -c $conf --state /run/viacamd/cameras >>"$log" 2>&1 &
daemon=$!
wait_for 20 test -e /dev/video30 || { cat "$log"; die "no VIA camera"; }
cap=/dev/video30
v4l2-ctl -d $cap --list-formats-ext >"$RES/formats.txt"
check "YUYV at 640x480, 352x288, 320x240, 176x144 and RGB565 at 640x480 are offered" \
	test "$(grep -c 'Size: Discrete' "$RES/formats.txt")" = 5
check "...at 30, 15, 10, 5 and 1 fps" test "$(grep -c '(10.000 fps)' "$RES/formats.txt")" = 5

for size in 640x480 320x240 176x144; do
	w=${size%x*} h=${size#*x}
	capture YUYV $w $h /tmp/via-$size.raw 3 >/dev/null
	check "$size streams the model's picture ($("$BIN/vcpix" --via /tmp/via-$size.raw YUYV $w $h 2>&1 | tail -n1))" \
		"$BIN/vcpix" --via /tmp/via-$size.raw YUYV $w $h
done
capture YUYV 640 480 /tmp/hflip.raw 3 -c horizontal_flip=1 >/dev/null
check "horizontal_flip=1 mirrors the frames like the model's reference" \
	"$BIN/vcpix" --via /tmp/hflip.raw YUYV 640 480 -c horizontal_flip=1
check "...which the unflipped reference does not match" not "$BIN/vcpix" --via /tmp/hflip.raw YUYV 640 480
# Checking a config (or a reload making a new instance) while the camera streams must not
# touch the sensor it streams from: before, create()'s probe reset the OV7670 (COM7) and the
# stream lost its settings (here: the mirror).
mkdir -p /run/viacamd
n0=$(grep -c 'camera via: streaming ' "$log")
capture YUYV 320 240 /tmp/during.raw 90 -c horizontal_flip=1 >"$RES/during.log" &
stream=$!
streaming_again() { [ "$(grep -c 'camera via: streaming ' "$log")" -gt "$n0" ]; }
wait_for 30 streaming_again || fail "the camera did not stream"
sleep 1
"$BIN/viacamd" --check -c $conf >"$RES/check-during.log" 2>&1
check "viacamd --check passes while the camera streams ($(tail -n1 "$RES/check-during.log"))" test $? = 0
wait $stream
check "...and leaves the streaming sensor alone: the last frame is still mirrored" \
	"$BIN/vcpix" --via /tmp/during.raw YUYV 320 240 -c horizontal_flip=1
v4l2-ctl -d $cap -c horizontal_flip=0
capture YUYV 640 480 /tmp/vflip.raw 3 -c horizontal_flip=0,vertical_flip=1 >/dev/null
check "vertical_flip=1 too" "$BIN/vcpix" --via /tmp/vflip.raw YUYV 640 480 -c vertical_flip=1
capture YUYV 320 240 /tmp/bars.raw 3 -c vertical_flip=0,test_pattern=2 >/dev/null
check "test_pattern=2 gives the colour bars" "$BIN/vcpix" --via /tmp/bars.raw YUYV 320 240 -c test_pattern=2
v4l2-ctl -d $cap -c test_pattern=0
ffmpeg -loglevel error -f rawvideo -pix_fmt yuyv422 -s 320x240 -i /tmp/bars.raw -frames:v 1 -y "$RES/via-bars.png"
ffmpeg -loglevel error -f rawvideo -pix_fmt yuyv422 -s 640x480 -i /tmp/via-640x480.raw -frames:v 1 -y "$RES/via-model.png"
capture RGBP 640 480 /tmp/rgb.raw 3 >/dev/null
check "RGB565 at 640x480 streams (3 frames)" test "$(stat -c %s /tmp/rgb.raw 2>/dev/null)" = $((640 * 480 * 2 * 3))

for fps in 30 15 10; do
	out=$(capture YUYV 320 240 /dev/null $((fps * 4)) -p $fps)
	got=$(grep -oE '[0-9]+\.[0-9]+ fps' <<<"$out" | tail -n1 | cut -d' ' -f1)
	echo "rate $fps: measured ${got:-?} fps" >>"$RES/summary"
	check "$fps fps measured as ${got:-nothing} (within 5%)" \
		awk -v g="${got:-0}" -v w=$fps 'BEGIN { exit !(g >= w * 0.95 && g <= w * 1.05) }'
done

compliance_run $cap "$RES/compliance.log" 180
gate=$(compliance_gate "$RES/compliance.log")
check "v4l2-compliance -s on the VIA camera: $gate" compliance_gate "$RES/compliance.log"
echo "compliance: $(head -n1 <<<"$gate")" >>"$RES/summary"

# Sensor errors are reported, the running camera stays, and a fixed file is taken.
via_conf "model_sensor_id = 7f a2 77 73"
check "a wrong sensor identity is reported with the values read" \
	wait_for 15 log_has "not an OV7670: MIDH/MIDL/PID/VER read 7f a2 77 73, expected 7f a2 76 73"
{ sed 's/^sensor_bus = .*/sensor_bus = no such bus/' "$conf"; } | grep -v model_sensor_id | put_conf
check "a missing sensor bus is reported with what was looked for" \
	wait_for 15 log_has "no I2C bus named 'no such bus'"
check "...and the camera stays" test -e $cap
capture YUYV 320 240 /tmp/after.raw 3 >/dev/null
check "...and keeps streaming the model's picture" "$BIN/vcpix" --via /tmp/after.raw YUYV 320 240
via_conf "olpc_power = no"
check "the fixed file is applied" wait_for 15 log_has "camera via: now served by backend 'via'"
capture YUYV 176 144 /tmp/fixed.raw 3 >/dev/null
check "...and the camera streams" "$BIN/vcpix" --via /tmp/fixed.raw YUYV 176 144
check "no misprogramming was reported by the model" not log_has "misprogrammed"

kill $daemon; wait $daemon
rmmod viacam || fail "rmmod viacam"
finish
