#!/bin/bash
# TEST-18-apps-debug: issue 13's several-consumer cases with real applications, made for the
# lockdep/KASAN/kmemleak kernel, whose log the harness checks (any report fails the run).
# TEST-17 runs them in full on 6.12; on the debug kernel its Chromium and rate checks need a
# faster guest than TCG with KASAN gives (on 6.1-debug it took 459 s, with three checks failing
# on timing only and a clean kernel log). Here:
#  - viacamd (pattern, consumers = 3) makes each frame in a consumer's own buffer (LEND):
#    ffmpeg (MMAP) on node 1, v4l2-ctl --stream-dmabuf (dma-bufs of another camera's capture
#    node: viacamd writes into them) on node 2, v4l2-ctl --stream-user on node 3, SIGKILLed
#    mid-stream; ffmpeg and the DMABUF consumer get the pattern's picture, and viacamd's log
#    counts frames made in consumers' buffers;
#  - a consumer joins node 3 while the others stream, and gets the pattern;
#  - the camera is removed under viacamd while ffmpeg and v4l2-ctl stream two of its nodes:
#    both end, viacamd goes on, and the module unloads once everyone has let go.
. "$(dirname "$0")/../lib.sh"
load_viacam devices=0
W=320 H=240 SIZE=$((320 * 240 * 2))
clients=$RES/clients.log
node_out() { cam_stats "$1" node_frames_out; }
got_frames() { [ "$(node_out "$1")" -ge "$2" ]; }
file_frames() { echo $(($(stat -c %s "$1" 2>/dev/null || echo 0) / SIZE)); }

"$BIN/viacamctl" add --label exporter >"$RES/add-exporter.log" || die "viacamctl add"
exp=$(cam_node capture "$(cut -f1 "$RES/add-exporter.log")") || die "no exporter node"
v4l2-ctl -d "$exp" --set-fmt-video=width=$W,height=$H,pixelformat=YUYV >>"$clients" 2>&1
cfg=/tmp/cfg18
mkdir -p $cfg
cat >$cfg/viacam.conf <<CONF
[camera apps]
label = Apps
backend = pattern
pattern = bars
consumers = 3
timeout_ms = 10000
formats = YUYV
sizes = 320x240
rates = 15
CONF
"$BIN/viacamd" -c $cfg/viacam.conf --state /run/viacamd/cameras18 >"$RES/viacamd.log" 2>&1 &
daemon=$!
wait_for 60 grep -q "capture node 3 of camera" "$RES/viacamd.log" || die "viacamd did not make 3 capture nodes"
cid=$(sed -nE "s/.*created camera ([0-9]+) 'Apps'.*/\1/p" "$RES/viacamd.log" | head -n 1)
for i in 0 1 2; do n[$i]=$(cam_node capture "$cid" $i) || die "no capture node $i"; done

# Three applications, three memory types, at once.
timeout 180 ffmpeg -nostdin -loglevel error -f v4l2 -input_format yuyv422 -video_size ${W}x$H \
	-i "${n[0]}" -frames:v 90 -f rawvideo -y /tmp/ff18.yuyv 2>>"$clients" &
ff=$!
timeout 180 v4l2-ctl -d "${n[1]}" --stream-dmabuf --export-device "$exp" --stream-count=90 \
	--stream-to=/tmp/dm18.yuyv >"$RES/v4l2ctl-dmabuf.log" 2>&1 &
dm=$!
# (not under timeout(1): SIGKILL must reach v4l2-ctl itself)
v4l2-ctl -d "${n[2]}" --stream-user --stream-count=100000 --stream-to=/dev/null \
	>"$RES/v4l2ctl-user.log" 2>&1 &
us=$!
wait_for 90 got_frames "${n[2]}" 10 || fail "v4l2-ctl --stream-user got no 10 frames"
kill -KILL $us; wait $us 2>/dev/null
check "v4l2-ctl --stream-user SIGKILLed mid-stream (node 3 had $(node_out "${n[2]}") frames)" \
	not kill -0 $us
late=$("$BIN/vctest" consume "${n[2]}" -a -n 15 -t 60 2>&1)
late_rc=$?
check "a consumer joins node 3 while the others stream: 15 frames ($late)" \
	test "$late_rc" = 0 -a "$(sed -nE 's/^frames=([0-9]+) .*/\1/p' <<<"$late")" = 15
wait $ff; ff_rc=$?
wait $dm; dm_rc=$?
check "ffmpeg (MMAP, node 1) ended well with $(file_frames /tmp/ff18.yuyv) frames" \
	test "$ff_rc" = 0 -a "$(file_frames /tmp/ff18.yuyv)" = 90
check "v4l2-ctl --stream-dmabuf (node 2) ended well with $(file_frames /tmp/dm18.yuyv) frames" \
	test "$dm_rc" = 0 -a "$(file_frames /tmp/dm18.yuyv)" = 90
check "...ffmpeg's last frame is the pattern's picture ($("$BIN/vcpix" /tmp/ff18.yuyv YUYV $W $H 2>&1 | tail -n 1))" \
	"$BIN/vcpix" /tmp/ff18.yuyv YUYV $W $H
check "...and the DMABUF consumer's too ($("$BIN/vcpix" /tmp/dm18.yuyv YUYV $W $H 2>&1 | tail -n 1))" \
	"$BIN/vcpix" /tmp/dm18.yuyv YUYV $W $H

lent_said() { grep -q "of them made in a consumer's own buffer" "$RES/viacamd.log"; }
wait_for 30 lent_said
lent=$(viacamd_lent "$RES/viacamd.log")
check "viacamd made frames in consumers' own buffers (${lent:-none}, by its log once the last consumer stopped)" \
	test "${lent:-0}" -gt 0

# Removal while two applications stream.
o0=$(node_out "${n[0]}") o1=$(node_out "${n[1]}")
timeout 180 ffmpeg -nostdin -loglevel error -f v4l2 -input_format yuyv422 -video_size ${W}x$H \
	-i "${n[0]}" -f rawvideo -y /dev/null 2>>"$clients" &
ff=$!
timeout 180 v4l2-ctl -d "${n[1]}" --stream-dmabuf --export-device "$exp" --stream-count=100000 \
	--stream-to=/dev/null >"$RES/v4l2ctl-gone.log" 2>&1 &
dm=$!
wait_for 90 got_frames "${n[0]}" $((o0 + 15)) || fail "ffmpeg did not stream again"
wait_for 90 got_frames "${n[1]}" $((o1 + 15)) || fail "v4l2-ctl did not stream again"
"$BIN/viacamctl" remove "$cid" >>"$RES/add-exporter.log" 2>&1
check "viacamctl remove of viacamd's camera while two nodes stream" test $? = 0
ended() { ! kill -0 "$1" 2>/dev/null; }
check "ffmpeg ends once its camera is gone" wait_for 60 ended $ff
check "v4l2-ctl --stream-dmabuf ends too" wait_for 60 ended $dm
check "viacamd goes on" kill -0 $daemon
check "...and says its session stopped" grep -q "removed from the bridge (ENODEV)" "$RES/viacamd.log"
kill $ff $dm 2>/dev/null
kill $daemon; wait $daemon 2>/dev/null
"$BIN/viacamctl" remove "$(cut -f1 "$RES/add-exporter.log")" >>"$RES/add-exporter.log" 2>&1
check "rmmod viacam once every application has let go" wait_for 30 rmmod viacam
finish
