#!/bin/bash
# TEST-15-pipewire: the capture node as a PipeWire camera (issue 14, item 1). viacamd serves a
# pattern camera; udevd tags the nodes (v4l_id), then pipewire and wireplumber run in a D-Bus
# session as a desktop would start them (wireplumber 0.4 quits without logind unless its bluez
# monitor is off: a drop-in in $XDG_CONFIG_HOME turns it off). Checked:
# - the camera is a Video/Source node under its label, and the backend node is none;
# - gst-launch-1.0 pipewiresrc streams it, with the pattern's pixels;
# - two PipeWire clients receive frames at once (PipeWire asks the node for 16 buffers);
# - the on-demand rule holds through PipeWire: the backend starts only when a client streams
#   and stops once none does (wireplumber suspends an idle node after 5 s).
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
	CONF
	"$BIN/viacamd" -c /tmp/cfg/viacam.conf --state /run/viacamd/cameras >>"$RES/viacamd.log" 2>&1 &
	wait_for 60 test -e /dev/video40 -a -e /dev/video41 ||
		{ cat "$RES/viacamd.log"; die "viacamd did not create /dev/video40 and 41"; }
	SYSTEMD_IGNORE_CHROOT=1 /lib/systemd/systemd-udevd --daemon >>"$RES/udevd.log" 2>&1 ||
		die "systemd-udevd did not start"
	udevadm trigger --subsystem-match=video4linux >>"$RES/udevd.log" 2>&1
	udevadm settle -t 60 >>"$RES/udevd.log" 2>&1
	export HOME=/tmp/pwhome XDG_RUNTIME_DIR=/tmp/pwrun
	export XDG_CONFIG_HOME=$HOME/.config
	mkdir -p "$HOME" "$XDG_CONFIG_HOME/wireplumber/bluetooth.lua.d"
	install -d -m 0700 "$XDG_RUNTIME_DIR"
	echo 'bluez_monitor.enabled = false' >"$XDG_CONFIG_HOME/wireplumber/bluetooth.lua.d/60-viacam-test.lua"
	exec dbus-run-session -- bash "$0" --session
fi

log=$RES/viacamd.log
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
# Running as root, the monitor can open the backend node and shows it as a Video/Device
# (a desktop user cannot open it: root 0600); it must make no node of it.
check "no PipeWire node for the backend node" not jq -e '.[] | select(.type == "PipeWire:Interface:Node") |
	select(.info.props["api.v4l2.path"] == "/dev/video41")' "$RES/pw-dump.json"
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
grep -h 'viacamd:' "$log" | tail -n 20 >"$RES/viacamd-tail.log"
kill "$wp" "$pw" 2>/dev/null
wait "$wp" "$pw" 2>/dev/null
finish
