#!/bin/bash
# TEST-19-hostile: issue 31. Capture nodes are open to every user in group video, and a
# producer writes frames straight into consumers' capture buffers (VIACAM_IOC_LEND). Here
# unprivileged hostile consumers (tests/guest/vchostile.c, 3 processes of user "hostile",
# each an actor, a poker thread and a scribbler thread) do what a consumer may do at the
# worst moments (DMABUF buffers of other cameras queued, lent out, then STREAMOFF, a bad fd
# queued and REQBUFS(0); rounds of USERPTR or DMABUF QBUF/STREAMOFF/QBUF of length 1 or with
# a bad fd; marker bytes written into their own MMAP buffers and dma-bufs, queued or not;
# S_PARM 67108864/1; close with lends out...) on capture nodes 1, 3 and 4 of a 4-node camera (the bridge lends from
# node 1 first; each process has a node of its own to come back to), against
#  - phase 1: vchostile's lending producer (root: 1-3 lends out at once, some held, some
#    given back half written, pauses longer than the camera's timeout, stream restarts);
#  - phase 2: viacamd serving a pattern camera (it lends for every frame).
# Meanwhile an innocent consumer (the victim) streams node 2 and checks every frame: a whole
# producer frame or an all-neutral one, never a hostile consumer's bytes, never a picture
# from before its STREAMON, never a stall. Afterwards (the invariants, as the unprivileged
# user): each node gives a fresh open REQBUFS(4), CREATE_BUFS(2), frames and read(); once every
# process has gone the kernel holds as many dma-bufs as before (debugfs bufinfo). The kernel log
# must stay clean (checked by the harness: KASAN on 7.2-debug). VIACAM_HOSTILE_SEED=N replays
# a seed, VIACAM_HOSTILE_SECONDS sets the length of phase 1 (phase 2 runs two thirds of it),
# VIACAM_HOSTILE_RECIPES the hostile sessions to run (vchostile --recipes; default all).
. "$(dirname "$0")/../lib.sh"
secs=${VIACAM_HOSTILE_SECONDS:-40}
secs2=$((secs * 2 / 3))
seed=${VIACAM_HOSTILE_SEED:-$(date +%s)$((RANDOM % 1000))}
recipes=${VIACAM_HOSTILE_RECIPES:-stream,stale,churn,read,ctl,peek}
HOST=$BIN/vchostile
echo "vchostile: seed=$seed (replay: VIACAM_HOSTILE_SEED=$seed VIACAM_HOSTILE_SECONDS=$secs${VIACAM_HOSTILE_RECIPES:+ VIACAM_HOSTILE_RECIPES=$recipes})" >>"$RES/summary"
# A use-after-free can leave the bridge's spinlock held with interrupts off, and the guest
# would hang to the end of its time limit: an Oops ends it at once (the console keeps it).
sysctl -q kernel.panic_on_oops=1
load_viacam devices=0
useradd -M -N -G video hostile 2>/dev/null || die "useradd hostile"
# The group and mode conf/70-viacam.rules gives capture nodes (TEST-07 checks the rules with
# a real udevd); the backend nodes stay root's.
open_up() { chgrp video "$@" && chmod 0660 "$@"; }
add_cam() { # LOG ARGS...: the new camera's id
	"$BIN/viacamctl" add "${@:2}" >"$RES/$1" || die "viacamctl add ${*:2}"
	cut -f1 "$RES/$1"
}
summary() { echo "$*" >>"$RES/summary"; }
# The lines of a vchostile log worth reading first.
gist() { grep -E 'VIOLATION|HANG|FAIL|done,|dma-bufs:|died|ENOMEM from' "$1" | head -n "${2:-8}"; }

id=$(add_cam add-main.log --label hostile --timeout 300 --consumers 4)
cap0=$(cam_node capture "$id" 0) && cap1=$(cam_node capture "$id" 1) &&
	cap2=$(cam_node capture "$id" 2) && cap3=$(cam_node capture "$id" 3) &&
	out=$(cam_node backend "$id") || die "nodes of camera $id"
# dma-bufs for the hostile consumers: MMAP buffers of another camera's nodes, and of a
# smaller camera's (too short for 640x480).
eid=$(add_cam add-exporter.log --label exporter --consumers 2)
exp0=$(cam_node capture "$eid" 0) && exp1=$(cam_node capture "$eid" 1) || die "exporter nodes"
sid=$(add_cam add-small.log --label small)
small=$(cam_node capture "$sid") && small_out=$(cam_node backend "$sid") || die "small nodes"
v4l2-ctl -d "$small_out" --set-fmt-video-out=width=320,height=240,pixelformat=YUYV ||
	fail "320x240 for the small exporter"
open_up "$cap0" "$cap1" "$cap2" "$cap3" "$exp0" "$exp1" "$small"
summary "camera $id: hostile on $cap0 $cap2 $cap3, victim on $cap1, producer on $out; exporters $exp0 $exp1 $small ($(v4l2-ctl -d "$small" --get-fmt-video | grep -m1 'Width/Height' | tr -d '\t '))"

base=$("$HOST" dmabufs) || die "no dma-buf count (debugfs)"
summary "dma-bufs before: $base"

# --- phase 1: vchostile's lending producer ---
echo "TEST-19-hostile: phase 1, vchostile's producer, seed $seed" >/dev/kmsg
"$HOST" produce -b "$out" -s "$seed" -p 2000 >"$RES/producer.log" 2>&1 &
prod=$!
wait_frames_in "$cap0" 5 60 || fail "the producer did not start ($(tail -n 2 "$RES/producer.log"))"
"$HOST" victim -c "$cap1" -t "$secs" -s "$seed" >"$RES/victim.log" 2>&1 &
vic=$!
# (each vchostile process has its own hang watchdog; timeout(1) is the backstop)
timeout -k 10 $((secs + 240)) "$HOST" hostile -u hostile -n "$cap0" -n "$cap2" -n "$cap3" -k "$cap1" \
	-x "$exp0" -x "$exp1" -x "$small" -P 3 -t "$secs" -s "$seed" -R "$recipes" >"$RES/hostile.log" 2>&1
hrc=$?
timeout 120 tail --pid=$vic -f /dev/null
wait $vic
vrc=$?
kill -TERM $prod 2>/dev/null
timeout 120 tail --pid=$prod -f /dev/null
wait $prod
prc=$?
for f in hostile victim producer; do summary "$f: $(gist "$RES/$f.log" 6 | tr '\n' '|')"; done
check "hostile consumers ran $secs s: no hang, no crash, exit $hrc ($(grep -m1 '^vchostile: done' "$RES/hostile.log"))" \
	test "$hrc" = 0
check "victim on $cap1: every frame whole and new, exit $vrc ($(grep -m1 'done,' "$RES/victim.log"))" \
	test "$vrc" = 0
check "producer: the uapi kept its promises, exit $prc ($(grep -m1 'done,' "$RES/producer.log"))" \
	test "$prc" = 0
timeout 300 "$HOST" check -u hostile -b "$out" -c "$cap0" -c "$cap1" -c "$cap2" -c "$cap3" \
	>"$RES/check1.log" 2>&1
crc=$?
summary "check: $(grep -E '^vchostile\[check\]: check /dev|FAIL' "$RES/check1.log" | head -n 6 | tr '\n' '|')"
check "a fresh unprivileged consumer gets buffers, frames and read() on each node (exit $crc)" \
	test "$crc" = 0
"$HOST" dmabufs -e "$base" -W 15 >"$RES/dmabufs1.log" 2>&1
drc=$?
summary "after phase 1: $(cat "$RES/dmabufs1.log")"
check "every process gone: as many dma-bufs as before ($(cat "$RES/dmabufs1.log"))" test "$drc" = 0

# --- phase 2: viacamd lends into the consumers' buffers ---
echo "TEST-19-hostile: phase 2, viacamd, seed $((seed + 1))" >/dev/kmsg
cfg=/tmp/cfg19
mkdir -p $cfg
cat >$cfg/viacam.conf <<CONF
[camera hostile-d]
label = Hostile viacamd
backend = pattern
pattern = bars
consumers = 4
timeout_ms = 300
formats = YUYV
sizes = 640x480 320x240
rates = 30 15
CONF
"$BIN/viacamd" -c $cfg/viacam.conf --state /run/viacamd/cameras19 >"$RES/viacamd.log" 2>&1 &
daemon=$!
wait_for 60 grep -q "capture node 4 of camera" "$RES/viacamd.log" || die "viacamd did not make 4 capture nodes"
did=$(sed -nE "s/.*created camera ([0-9]+) 'Hostile viacamd'.*/\1/p" "$RES/viacamd.log" | head -n 1)
d0=$(cam_node capture "$did" 0) && d1=$(cam_node capture "$did" 1) &&
	d2=$(cam_node capture "$did" 2) && d3=$(cam_node capture "$did" 3) ||
	die "nodes of viacamd's camera $did"
open_up "$d0" "$d1" "$d2" "$d3"
base2=$("$HOST" dmabufs)
seed2=$((seed + 1))
"$HOST" victim -a -c "$d1" -t "$secs2" -s "$seed2" >"$RES/victim-d.log" 2>&1 &
vic=$!
timeout -k 10 $((secs2 + 240)) "$HOST" hostile -u hostile -n "$d0" -n "$d2" -n "$d3" -k "$d1" \
	-x "$exp0" -x "$exp1" -x "$small" -P 3 -t "$secs2" -s "$seed2" -R "$recipes" >"$RES/hostile-d.log" 2>&1
hrc=$?
timeout 120 tail --pid=$vic -f /dev/null
wait $vic
vrc=$?
for f in hostile-d victim-d; do summary "$f: $(gist "$RES/$f.log" 6 | tr '\n' '|')"; done
check "hostile consumers against viacamd ($secs2 s, seed $seed2): no hang, no crash, exit $hrc" \
	test "$hrc" = 0
check "victim on viacamd's $d1: no hostile bytes, no stall, exit $vrc ($(grep -m1 'done,' "$RES/victim-d.log"))" \
	test "$vrc" = 0
check "viacamd goes on" kill -0 $daemon
lent=$(viacamd_lent "$RES/viacamd.log")
summary "viacamd: ${lent:-no} frames made in consumers' buffers (its log)"
timeout 300 "$HOST" check -a -u hostile -c "$d0" -c "$d1" -c "$d2" -c "$d3" >"$RES/check2.log" 2>&1
crc=$?
summary "check (viacamd): $(grep -E '^vchostile\[check\]: check /dev|FAIL' "$RES/check2.log" | head -n 6 | tr '\n' '|')"
check "viacamd's camera: a fresh unprivileged consumer gets buffers, frames and read() on each node (exit $crc)" \
	test "$crc" = 0
kill $daemon
timeout 60 tail --pid=$daemon -f /dev/null
wait $daemon 2>/dev/null
"$HOST" dmabufs -e "$base2" -W 15 >"$RES/dmabufs2.log" 2>&1
drc=$?
summary "after phase 2: $(cat "$RES/dmabufs2.log")"
check "viacamd and every consumer gone: as many dma-bufs as before ($(cat "$RES/dmabufs2.log"))" \
	test "$drc" = 0

echo "TEST-19-hostile: cleanup" >/dev/kmsg
for c in "$id" "$eid" "$sid" "$did"; do "$BIN/viacamctl" remove "$c" >/dev/null 2>&1; done
check "rmmod viacam once everything is closed" wait_for 30 rmmod viacam
"$HOST" dmabufs -e "$base" -W 5 >"$RES/dmabufs3.log" 2>&1
drc=$?
summary "after rmmod: $(cat "$RES/dmabufs3.log")"
check "after rmmod: as many dma-bufs as at the start ($(cat "$RES/dmabufs3.log"))" test "$drc" = 0
finish
