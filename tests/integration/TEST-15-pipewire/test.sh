#!/bin/bash
# TEST-15-pipewire: the capture node as a PipeWire camera (issue 14, item 1). viacamd serves a
# pattern camera; udevd applies conf/70-viacam.rules and tags the nodes (v4l_id), then
# pipewire and wireplumber run as a desktop user in group video, in a D-Bus session, as a
# desktop would start them (wireplumber 0.4 quits without logind unless its bluez monitor is
# off: a drop-in in $XDG_CONFIG_HOME turns it off). Checked:
# - the camera is a Video/Source node under its label; the backend node (root 0600) is not
#   even a PipeWire device;
# - gst-launch-1.0 pipewiresrc streams it, with the pattern's pixels;
# - two PipeWire clients receive frames at once (PipeWire asks the node for 16 buffers);
# - the on-demand rule holds through PipeWire: the backend starts only when a client streams
#   and stops once none does (wireplumber suspends an idle node after 5 s);
# - the other way round, the pipewire backend (issue 14, item 3): a PipeWire-only camera
#   (gst-launch-1.0 ... ! pipewiresink mode=provide, media.class Video/Source) becomes
#   /dev/video42 for V4L2 applications; viacamd (root) reaches the desktop user's PipeWire
#   through the config's remote socket; ffmpeg gets the provider's picture.
. "$(dirname "$0")/../lib.sh"

if [ "${1:-}" != --session ]; then
	load_viacam devices=0
	mkdir -p /tmp/cfg
	cat >/tmp/cfg/viacam.conf <<-CONF
	[camera pw]
	label = viacam pipewire camera
	video_nr = 40
	backend_nr = 41
	timeout_ms = 10000
	formats = YUYV
	sizes = 320x240
	rates = 15
	pattern = bars

	[camera fromp]
	label = from pipewire
	video_nr = 42
	backend_nr = 43
	backend = pipewire
	target = vcprov
	remote = /tmp/pwrun/pipewire-0
	formats = YUYV
	sizes = 320x240
	rates = 15
	CONF
	# Its log where the desktop user can read it (the results folder is root's).
	"$BIN/viacamd" -c /tmp/cfg/viacam.conf --state /run/viacamd/cameras >>/tmp/viacamd.log 2>&1 &
	wait_for 60 test -e /dev/video40 -a -e /dev/video41 -a -e /dev/video42 ||
		{ cat /tmp/viacamd.log; die "viacamd did not create /dev/video40 and 41"; }
	chmod 0644 /tmp/viacamd.log
	cp "$VIACAM_SRC/conf/70-viacam.rules" /etc/udev/rules.d/ || die "install the rules"
	SYSTEMD_IGNORE_CHROOT=1 /lib/systemd/systemd-udevd --daemon >>"$RES/udevd.log" 2>&1 ||
		die "systemd-udevd did not start"
	udevadm trigger --subsystem-match=video4linux >>"$RES/udevd.log" 2>&1
	udevadm settle -t 60 >>"$RES/udevd.log" 2>&1
	check "capture node root:video 0660, backend node root:root 0600 ($(stat -c '%U:%G %a' /dev/video40 /dev/video41 | xargs))" \
		test "$(stat -c '%U:%G %a' /dev/video40 /dev/video41 | xargs)" = "root:video 660 root:root 600"
	useradd -m -d /tmp/pwuser -G video pwuser || die "useradd pwuser"
	rundir=/tmp/pwrun
	install -d -m 0700 -o pwuser -g pwuser "$rundir"
	cfgdir=/tmp/pwuser/.config/wireplumber/bluetooth.lua.d
	install -d -o pwuser -g pwuser /tmp/pwuser/.config /tmp/pwuser/.config/wireplumber "$cfgdir"
	echo 'bluez_monitor.enabled = false' >"$cfgdir/60-viacam-test.lua"
	# The session's own logs go to /tmp/pwlogs and are copied into the results afterwards.
	install -d -o pwuser -g pwuser /tmp/pwlogs
	setpriv --reuid=pwuser --regid=pwuser --init-groups \
		env -i PATH="$PATH" HOME=/tmp/pwuser USER=pwuser XDG_RUNTIME_DIR="$rundir" \
		XDG_CONFIG_HOME=/tmp/pwuser/.config VIACAM_BUILD="$VIACAM_BUILD" VIACAM_SRC="$VIACAM_SRC" \
		VIACAM_RESULTS=/tmp/pwlogs KVER="$KVER" \
		dbus-run-session -- bash "$0" --session
	rc=$?
	cp /tmp/pwlogs/* /tmp/viacamd.log "$RES/" 2>/dev/null
	[ "$failures" = 0 ] || exit 1
	exit "$rc"
fi

log=/tmp/viacamd.log
check "the session runs as a desktop user in group video ($(id -un): $(id -Gn))" \
	test "$(id -un)" = pwuser -a -n "$(id -Gn | grep -w video)"
pipewire >"$RES/pipewire.log" 2>&1 &
pw=$!
wireplumber >"$RES/wireplumber.log" 2>&1 &
wp=$!
# The node of /dev/videoN as pw-dump shows it: "ID CLASS DESCRIPTION"
pw_nodes() {
	pw-dump 2>/dev/null | jq -r '.[] | select(.type == "PipeWire:Interface:Node") |
		"\(.id) \(.info.props["media.class"]) \(.info.props["object.path"] // "") \(.info.props["node.description"] // "")"'
}
cam_listed() { pw_nodes | grep -q "Video/Source .*viacam pipewire camera"; }
check "wireplumber lists the camera as a Video/Source" wait_for 90 cam_listed
pw_nodes >"$RES/pw-nodes.txt"
check "wireplumber is still running" kill -0 "$wp"
node=$(awk '/Video\/Source/ && /viacam pipewire camera/ { print $1; exit }' "$RES/pw-nodes.txt")
check "...one node for the camera ($(grep -c 'viacam pipewire camera' "$RES/pw-nodes.txt"))" \
	test "$(grep -c 'Video/Source.*viacam pipewire camera' "$RES/pw-nodes.txt")" = 1
pw-dump >"$RES/pw-dump.json" 2>&1
check "...and it is /dev/video40 (api.v4l2.path)" \
	jq -e --argjson id "$node" '.[] | select(.id == $id) | .info.props["api.v4l2.path"] == "/dev/video40"' \
	"$RES/pw-dump.json"
# (As root, the monitor opens the backend node and shows it as a Video/Device without a node.)
check "the backend node is no PipeWire object at all" \
	not jq -e '.[] | select(.info.props["api.v4l2.path"]? == "/dev/video41")' "$RES/pw-dump.json"
streams() { grep -c 'camera pw: streaming ' "$log"; }
stops() { grep -c 'camera pw: the last consumer stopped' "$log"; }
stopped() { [ "$(stops)" -ge "$1" ]; } # at least N times
check "nothing streams yet: the backend has not started (viacamd log)" test "$(streams)" = 0

# One client: 30 frames of the pattern.
timeout 120 gst-launch-1.0 -q pipewiresrc path="$node" num-buffers=30 ! \
	video/x-raw,format=YUY2,width=320,height=240 ! filesink location=/tmp/pw1.yuyv \
	>"$RES/client1.log" 2>&1
rc=$?
check "gst-launch-1.0 pipewiresrc streams the camera (exit $rc)" test $rc = 0
check "...30 frames of 320x240 YUYV ($(stat -c %s /tmp/pw1.yuyv 2>/dev/null) bytes)" \
	test "$(stat -c %s /tmp/pw1.yuyv 2>/dev/null)" = $((320 * 240 * 2 * 30))
out=$("$BIN/vcpix" /tmp/pw1.yuyv YUYV 320 240 2>&1)
check "...showing the pattern (${out#vcpix: })" test $? = 0
check "the backend started for it" test "$(streams)" -ge 1
check "...and stops once no client streams" wait_for 30 stopped 1
n1=$(streams)

# Two clients at once.
for i in 2 3; do
	timeout 120 gst-launch-1.0 -q pipewiresrc path="$node" num-buffers=90 ! \
		video/x-raw,format=YUY2,width=320,height=240 ! filesink location=/tmp/pw$i.yuyv \
		>"$RES/client$i.log" 2>&1 &
	eval "c$i=\$!"
done
wait "$c2"; r2=$?
wait "$c3"; r3=$?
for i in 2 3; do
	eval "r=\$r$i"
	check "client $i of two at once ends well (exit $r) with 90 frames" \
		test "$r" = 0 -a "$(stat -c %s /tmp/pw$i.yuyv 2>/dev/null)" = $((320 * 240 * 2 * 90))
	out=$("$BIN/vcpix" /tmp/pw$i.yuyv YUYV 320 240 2>&1)
	check "...showing the pattern (${out#vcpix: })" test $? = 0
done
check "...one stream of the backend served both ($(($(streams) - n1)) started for them)" \
	test "$(streams)" = $((n1 + 1))
check "...and the backend stops after them" wait_for 30 stopped 2

# The pipewire backend: a PipeWire-only camera as a V4L2 device.
gst-launch-1.0 -q videotestsrc pattern=smpte75 is-live=true ! \
	video/x-raw,format=YUY2,width=320,height=240,framerate=15/1 ! pipewiresink mode=provide \
	stream-properties="props,media.class=Video/Source,node.name=vcprov,node.description=vcprov" \
	>"$RES/provider.log" 2>&1 &
prov=$!
prov_listed() { pw_nodes | grep -q "Video/Source .*vcprov"; }
check "a PipeWire-only camera (pipewiresink mode=provide) is a Video/Source node" wait_for 60 prov_listed
timeout 60 gst-launch-1.0 -q videotestsrc pattern=smpte75 num-buffers=1 ! \
	video/x-raw,format=YUY2,width=320,height=240 ! filesink location=/tmp/ref-smpte.yuyv \
	>"$RES/ref.log" 2>&1
timeout 120 ffmpeg -nostdin -loglevel error -f v4l2 -input_format yuyv422 -video_size 320x240 \
	-i /dev/video42 -frames:v 45 -f rawvideo -y /tmp/fromp.yuyv >"$RES/ffmpeg-fromp.log" 2>&1
check "ffmpeg captures 45 frames from /dev/video42 ($(stat -c %s /tmp/fromp.yuyv 2>/dev/null) bytes)" \
	test "$(stat -c %s /tmp/fromp.yuyv 2>/dev/null)" = $((320 * 240 * 2 * 45))
out=$("$BIN/vcpix" --same /tmp/fromp.yuyv /tmp/ref-smpte.yuyv $((320 * 240 * 2)) 2>&1)
check "...the provider's picture, through PipeWire and the pipewire backend (${out#vcpix: })" test $? = 0
check "...served by the pipewire backend (viacamd log)" \
	grep -q "camera fromp: streaming YUYV 320x240 at 15 fps from backend 'pipewire'" "$log"
kill "$prov" 2>/dev/null
wait "$prov" 2>/dev/null
grep -h 'viacamd:' "$log" | tail -n 20 >"$RES/viacamd-tail.log"
kill "$wp" "$pw" 2>/dev/null
wait "$wp" "$pw" 2>/dev/null
finish
