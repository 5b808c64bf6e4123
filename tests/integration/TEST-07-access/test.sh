#!/bin/bash
# TEST-07-access: with conf/70-viacam.rules applied by a real udevd, a user in the "video"
# group can capture, but cannot open the backend node or /dev/viacam (EACCES); the seat's
# "uaccess" tag (an ACL for the logged-in user) stays off both; and even with a
# world-writable /dev/viacam, adding or removing a camera needs CAP_SYS_ADMIN (EPERM).
. "$(dirname "$0")/../lib.sh"
cp "$VIACAM_SRC/conf/70-viacam.rules" /etc/udev/rules.d/ || die "install the rules"
SYSTEMD_IGNORE_CHROOT=1 /lib/systemd/systemd-udevd --daemon || die "systemd-udevd"
load_viacam
udevadm trigger --subsystem-match=video4linux --subsystem-match=misc --action=add
udevadm settle -t 30
cap=$(cam_node capture 0) && out=$(cam_node backend 0) || die "no nodes"
echo "$(ls -l "$cap" "$out" /dev/viacam)" >>"$RES/summary"
check "capture node is root:video 0660" test "$(stat -c '%U:%G %a' "$cap")" = "root:video 660"
check "backend node is root:root 0600" test "$(stat -c '%U:%G %a' "$out")" = "root:root 600"
check "/dev/viacam is root:root 0600" test "$(stat -c '%U:%G %a' /dev/viacam)" = "root:root 600"
# Debian's 70-uaccess.rules tags every video4linux node "uaccess": logind then gives the
# user at the seat an ACL on it, whatever its mode. Capture nodes keep the tag (the desktop
# user's camera); backend nodes and /dev/viacam must not have it. CURRENT_TAGS is what counts:
# 73-seat-late.rules' TAG=="uaccess" and logind's seat ACLs (sd_device_has_current_tag) look
# there, while TAGS keeps every tag a device ever had, one taken off again included.
tags() { udevadm info -q property -n "$1" | sed -n 's/^CURRENT_TAGS=//p'; }
echo "tags: capture '$(tags "$cap")' backend '$(tags "$out")' control '$(tags /dev/viacam)'" >>"$RES/summary"
check "Debian's uaccess rule is there to override" test -f /lib/udev/rules.d/70-uaccess.rules
check "the capture node keeps the seat's uaccess tag ($(tags "$cap"))" grep -q ':uaccess:' <<<"$(tags "$cap")"
check "the backend node has no uaccess tag ($(tags "$out"))" bash -c "! grep -q ':uaccess:' <<<'$(tags "$out")'"
check "/dev/viacam has no uaccess tag ($(tags /dev/viacam))" bash -c "! grep -q ':uaccess:' <<<'$(tags /dev/viacam)'"
# The ACL itself, not only the tags: udev's uaccess builtin (73-seat-late.rules) grants the
# seat's active user rw on every node it runs for, and all it asks logind is the seat's state
# file. With a stand-in file naming uid 4242 the active user at seat0, replaying the nodes'
# events must give uid 4242 the capture node and nothing else. (systemd 252, Debian 12's,
# matches TAG== against the sticky tags, so a rule's TAG-="uaccess" alone does not stop it.)
mkdir -p /run/systemd/seats
printf 'ACTIVE=c1\nACTIVE_UID=4242\n' >/run/systemd/seats/seat0
udevadm trigger --action=change "$cap" "$out" /dev/viacam
udevadm settle -t 30
seat_user() { setpriv --reuid=4242 --regid=nogroup --clear-groups -- "$@"; }
seat_may_open() { seat_user v4l2-ctl -d "$1" --get-fmt-video >/dev/null; }
echo "with uid 4242 at the seat: $(ls -l "$cap" "$out" /dev/viacam | tr '\n' ';')" >>"$RES/summary"
check "the seat's user may open the capture node (the stand-in seat works)" \
	seat_may_open "$cap"
msg=$(seat_user "$BIN/vctest" produce -n 1 "$out" 2>&1)
check "...but not the backend node ($msg)" grep -q 'Permission denied' <<<"$msg"
msg=$(seat_user "$BIN/viacamctl" list 2>&1)
check "...nor /dev/viacam ($msg)" grep -q 'Permission denied' <<<"$msg"
check "the backend node has no ACL ($(ls -l "$out" | cut -d' ' -f1))" \
	bash -c "[ \"\$(ls -l '$out' | cut -c11)\" != + ]"
rm -rf /run/systemd/seats
useradd -M -N -G video camuser 2>/dev/null || die "useradd"
as_user() { setpriv --reuid=camuser --regid=nogroup --init-groups -- "$@"; }

"$BIN/vctest" produce -r 30 "$out" >"$RES/producer.log" 2>&1 &
prod=$!
wait_frames_in "$cap" 5 60 || fail "the producer did not start"
as_user timeout 30 v4l2-ctl -d "$cap" --stream-mmap --stream-count=5 --stream-to=/tmp/user.raw \
	>"$RES/user-capture.log" 2>&1
check "a video-group user captures 5 frames" test "$(stat -c %s /tmp/user.raw 2>/dev/null)" = $((640 * 480 * 2 * 5))
kill "$prod"; wait "$prod" 2>/dev/null

msg=$(as_user "$BIN/vctest" produce -n 1 "$out" 2>&1)
check "the user cannot open the backend node ($msg)" grep -q 'Permission denied' <<<"$msg"
msg=$(as_user "$BIN/viacamctl" add --label evil 2>&1)
check "the user cannot open /dev/viacam ($msg)" grep -q 'Permission denied' <<<"$msg"
chmod 0666 /dev/viacam
msg=$(as_user "$BIN/viacamctl" add --label evil 2>&1)
check "with /dev/viacam opened up, ADD still needs CAP_SYS_ADMIN ($msg)" grep -q 'Operation not permitted' <<<"$msg"
msg=$(as_user "$BIN/viacamctl" remove 0 2>&1)
check "...and so does REMOVE ($msg)" grep -q 'Operation not permitted' <<<"$msg"
check "...while QUERY is allowed" as_user "$BIN/viacamctl" query 0
udevadm control --exit 2>/dev/null
rmmod viacam || fail "rmmod viacam"
finish
