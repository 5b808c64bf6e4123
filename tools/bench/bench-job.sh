#!/bin/bash
# bench-job.sh - guest side of `make bench` (tools/bench/run.sh boots the guest with it).
#
# Loads viacam (one camera) and the peer, Debian's v4l2loopback built for this kernel
# (build/bench/kmod/<kver>/v4l2loopback.ko), and drives both with the same program,
# build/host/vcbench: per size and producer path (write, mmap, and viacam's zero-copy
# lend), the unpaced throughput, then latency (and
# CPU and copies per frame) paced at 30 and 60 fps, and the torn frames a consumer that copies
# each frame out sees under an unpaced producer, viacam and v4l2loopback one after the
# other. Then several consumers of one stream (2 and 4: viacam's capture nodes of one camera,
# v4l2loopback's one node opened by each), unpaced, at BENCH_CONSUMERS_SIZE. Then the
# control-ioctl latency on viacam's capture node with queue_lock=0 and =1 (and on
# v4l2loopback's node for reference). Every result line goes to
# $VIACAM_RESULTS/results.txt; "meta" lines describe the run.
# Knobs: $VIACAM_RESULTS/bench.conf (written by run.sh): BENCH_SIZES, BENCH_FPS_SECONDS,
# BENCH_LAT30_FRAMES, BENCH_LAT60_FRAMES, BENCH_CTRL_SECONDS, BENCH_CONSUMERS_SIZE, BENCH_PARTS.
set -uo pipefail
src=${VIACAM_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${VIACAM_RESULTS:-/tmp}
build=${VIACAM_BUILD:-$src/build}
kver=$(uname -r)
BENCH_SIZES="640x480 1280x720 1920x1080"
BENCH_FPS_SECONDS=4 BENCH_LAT30_FRAMES=150 BENCH_LAT60_FRAMES=300 BENCH_CTRL_SECONDS=4
BENCH_CONSUMERS_SIZE=640x480
BENCH_PARTS="stream consumers ctrl"	# which parts run (a quick look at one: BENCH_PARTS=ctrl)
# shellcheck disable=SC1091
[ -f "$out/bench.conf" ] && . "$out/bench.conf"
vcbench=$build/host/vcbench
res=$out/results.txt
: >"$res"
errors=0
t_start=$(date +%s)

say() { echo "bench: $*"; }
part() { [[ " $BENCH_PARTS " == *" $1 "* ]]; }
meta() { echo "meta $*" >>"$res"; }
[ -x "$vcbench" ] || { say "no $vcbench (make host)"; exit 1; }

# run LABEL ARGS...: one vcbench run; its result lines go to results.txt.
run() {
	local label=$1 log rc
	shift
	log=$(mktemp)
	"$vcbench" "$@" --kernel "$kver" >"$log" 2>&1
	rc=$?
	grep '^result ' "$log" >>"$res"
	grep -v '^result ' "$log" | sed "s/^/  [$label] /"
	if [ "$rc" != 0 ]; then
		echo "error $label rc=$rc $(grep -m1 'vcbench: error' "$log")" >>"$res"
		say "FAILED: $label (rc $rc)"
		errors=$((errors + 1))
	fi
	rm -f "$log"
}

# The viacam camera's nodes, by their sysfs role: vc_cap (capture node 1), vc_extra (the
# other capture nodes, where the module knows consumers=), vc_out.
viacam_nodes() {
	vc_cap="" vc_out="" vc_stats="" vc_extra=()
	local d
	for d in /sys/class/video4linux/video*; do
		[ -f "$d/viacam_role" ] || continue
		case "$(cat "$d/viacam_role")" in
		capture)
			if [ "$(cat "$d/viacam_index" 2>/dev/null || echo 0)" = 0 ]; then
				vc_cap=/dev/$(basename "$d") vc_stats=$d/viacam_stats
			else
				vc_extra+=("/dev/$(basename "$d")")
			fi ;;
		backend) vc_out=/dev/$(basename "$d") ;;
		esac
	done
	[ -n "$vc_cap" ] && [ -n "$vc_out" ]
}

load_viacam() {
	rmmod viacam 2>/dev/null
	# A 60 s timeout: no repeated frames while a consumer waits on purpose (ctrl --load
	# blocked) or a slow guest stalls the producer; the bench measures real frames only.
	# Four capture nodes where the module has them (the consumers runs use the other three;
	# idle nodes change nothing for the others).
	local more=()
	modinfo -p viacam 2>/dev/null | grep -q '^consumers:' && more=(consumers=4)
	modprobe viacam devices=1 timeout_ms=60000 "${more[@]}" "$@" || return 1
	for _ in $(seq 50); do viacam_nodes && [ -e "$vc_cap" ] && [ -e "$vc_out" ] && return 0; sleep 0.1; done
	return 1
}

modprobe videodev || { say "modprobe videodev failed"; exit 1; }
load_viacam || { say "cannot load viacam"; exit 1; }
say "viacam: capture $vc_cap, backend $vc_out"
copies=no
grep -q '^copies ' "$vc_stats" && copies=yes
ql=no
[ -e /sys/module/viacam/parameters/queue_lock ] && ql=yes

peer=$build/bench/kmod/$kver/v4l2loopback.ko
lb=""
if [ -f "$peer" ]; then
	if insmod "$peer" devices=1 max_buffers=8 exclusive_caps=0 video_nr=40 \
		card_label=bench-peer; then
		for _ in $(seq 50); do [ -e /dev/video40 ] && break; sleep 0.1; done
		lb=/dev/video40
		say "v4l2loopback $(cat "$(dirname "$peer")/VERSION" 2>/dev/null): $lb"
	else
		say "insmod $peer failed"
	fi
else
	say "peer not available on $kver: $(cat "$(dirname "$peer")/FAILED" 2>/dev/null || echo "not built")"
fi
meta "kernel=$kver"
meta "date=$(date -u +%Y-%m-%dT%H:%MZ)"
meta "cpus=$(nproc)"
meta "cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1 | tr ' ' '_')"
meta "viacam_copies_counter=$copies"
meta "queue_lock_param=$ql"
meta "peer=${lb:+$(cat "$(dirname "$peer")/VERSION" 2>/dev/null || echo unknown)}"
meta "peer_compat=$(cat "$(dirname "$peer")/COMPAT" 2>/dev/null | tr ' ' '_')"
meta "peer_failed=$(head -c 300 "$(dirname "$peer")/FAILED" 2>/dev/null | tr ' \n' '_ ')"
meta "sizes=$(echo $BENCH_SIZES | tr ' ' ,) fps_seconds=$BENCH_FPS_SECONDS lat30_frames=$BENCH_LAT30_FRAMES lat60_frames=$BENCH_LAT60_FRAMES ctrl_seconds=$BENCH_CTRL_SECONDS"

# The idle guest's CPU use: the floor under the CPU-per-frame figures.
run "idle" idle --prod none --cap none --impl idle --seconds 3

# Streaming figures: per size and path, viacam and the peer side by side.
part stream && for size in $BENCH_SIZES; do
	for path in write mmap lend; do
		for impl in viacam v4l2loopback; do
			# lend: viacam's zero-copy path (VIACAM_IOC_LEND); v4l2loopback has none
			[ $path = lend ] && [ $impl != viacam ] && continue
			if [ $impl = viacam ]; then
				args=(--impl viacam --prod "$vc_out" --cap "$vc_cap" --stats "$vc_stats")
			else
				[ -n "$lb" ] || continue
				args=(--impl v4l2loopback --prod "$lb" --cap "$lb")
			fi
			args+=(--size "$size" --path "$path")
			say "$impl $size $path"
			run "$impl $size $path fps" stream "${args[@]}" --mode fps \
				--seconds "$BENCH_FPS_SECONDS"
			run "$impl $size $path lat30" stream "${args[@]}" --mode latency --rate 30 \
				--frames "$BENCH_LAT30_FRAMES"
			run "$impl $size $path lat60" stream "${args[@]}" --mode latency --rate 60 \
				--frames "$BENCH_LAT60_FRAMES"
			# torn frames: an unpaced producer, a consumer that copies each frame out
			run "$impl $size $path torn" stream "${args[@]}" --mode fps --torn \
				--seconds "$BENCH_FPS_SECONDS"
		done
	done
done

# Several consumers of one stream: 2 and 4, unpaced, both producer paths, viacam and the peer.
meta "consumers_size=$BENCH_CONSUMERS_SIZE"
peer_multi=""
part consumers && for n in 2 4; do
	for path in write mmap lend; do
		for impl in viacam v4l2loopback; do
			[ $path = lend ] && [ $impl != viacam ] && continue
			extra=()
			if [ $impl = viacam ]; then
				[ "${#vc_extra[@]}" -ge $((n - 1)) ] || { say "viacam has no $n capture nodes"; continue; }
				for ((k = 0; k < n - 1; k++)); do extra+=(--extra "${vc_extra[$k]}"); done
				args=(--impl viacam --prod "$vc_out" --cap "$vc_cap" --stats "$vc_stats")
			else
				[ -n "$lb" ] || continue
				for ((k = 0; k < n - 1; k++)); do extra+=(--extra "$lb"); done
				args=(--impl v4l2loopback --prod "$lb" --cap "$lb")
			fi
			[ $impl = v4l2loopback ] && [ "$peer_multi" = refused ] && continue
			say "$impl $BENCH_CONSUMERS_SIZE $path, $n consumers"
			if [ $impl = v4l2loopback ] && [ -z "$peer_multi" ]; then
				# Does the peer let a second opener stream (0.12 does; later versions may not)?
				# A one-second try, not counted.
				peer_multi=ok
				probe=$("$vcbench" stream "${args[@]}" "${extra[@]}" --size "$BENCH_CONSUMERS_SIZE" \
					--path "$path" --mode fps --seconds 1 --kernel "$kver" 2>&1)
				if grep -q 'REQBUFS capture: Device or resource busy' <<<"$probe"; then
					peer_multi=refused
					meta "peer_multi_consumers=refused"
					say "v4l2loopback refuses a second streaming consumer (REQBUFS: EBUSY): no figures"
					continue
				fi
			fi
			run "$impl $path $n consumers" stream "${args[@]}" "${extra[@]}" \
				--size "$BENCH_CONSUMERS_SIZE" --path "$path" --mode fps --seconds "$BENCH_FPS_SECONDS"
		done
	done
done

# Control-ioctl latency on the capture node: a 1080p stream at 30 fps (write(), mmap and
# viacam's lend producer; an mmap producer with a read() consumer), and a consumer blocked in
# DQBUF with no frames coming.
ctrl_runs() {	# IMPL TAG ARGS...
	local impl=$1 tag=$2
	shift 2
	local path paths=(write mmap)
	# lend: viacam's zero-copy producer, the 2010 question with the copy gone
	[ "$impl" = viacam ] && paths+=(lend)
	for path in "${paths[@]}"; do
		say "ctrl $impl $tag stream 1920x1080 $path"
		run "ctrl $impl $tag stream $path" ctrl "$@" --impl "$impl" --tag "$tag" \
			--load stream --tag load=stream --size 1920x1080 --path "$path" --rate 30 \
			--seconds "$BENCH_CTRL_SECONDS"
	done
	# a consumer that read()s: vb2 copies each frame to it under the capture queue's lock
	say "ctrl $impl $tag stream 1920x1080 mmap, read() consumer"
	run "ctrl $impl $tag read" ctrl "$@" --impl "$impl" --tag "$tag" --load stream \
		--tag load=read --cap-read --size 1920x1080 --path mmap --rate 30 \
		--seconds "$BENCH_CTRL_SECONDS"
	say "ctrl $impl $tag blocked"
	run "ctrl $impl $tag blocked" ctrl "$@" --impl "$impl" --tag "$tag" --load blocked \
		--tag load=blocked --size 640x480 --path write --seconds "$BENCH_CTRL_SECONDS"
}
part ctrl && ctrl_runs viacam queue_lock=0 --prod "$vc_out" --cap "$vc_cap" --declare
if ! part ctrl; then
	:
elif [ $ql = yes ]; then
	if load_viacam queue_lock=1 && grep -qxE "Y|1" /sys/module/viacam/parameters/queue_lock; then
		ctrl_runs viacam queue_lock=1 --prod "$vc_out" --cap "$vc_cap" --declare
	else
		say "cannot load viacam with queue_lock=1"
		errors=$((errors + 1))
	fi
	load_viacam
else
	say "queue_lock parameter not available"
fi
part ctrl && [ -n "$lb" ] && ctrl_runs v4l2loopback queue_lock=na --prod "$lb" --cap "$lb"

[ -n "$lb" ] && rmmod v4l2loopback
rmmod viacam
meta "guest_seconds=$(($(date +%s) - t_start))"
say "done in $(($(date +%s) - t_start)) s, $errors failed run(s)"
[ "$errors" = 0 ]
