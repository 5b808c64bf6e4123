#!/bin/bash
# guest-init.sh - PID 1 of the viacam test guest (runs on the host's root, seen
# read-only through 9p under a tmpfs overlay; see initramfs-init).
#
# Kernel command-line variables (set by tools/vm/run.sh):
#   vm_src      project tree (build products under $vm_src/build)
#   vm_kver     running kernel release
#   vm_modroot  tree whose lib/modules/$vm_kver becomes the guest's /lib/modules
#   vm_results  host folder exported read-write as 9p tag "results", mounted at the same path
#   vm_script   script to run (empty: interactive shell on the console)
#   vm_keep     colon-separated host paths (folders or files) that must stay visible although they lie under /tmp or /run
#   vm_bootfault  harness self-test only: write a fake kernel BUG line before the boot marker
#   vm_hostmods   harness self-test only: fake a host that has this kernel's modules installed
#                 (a /usr/lib/modules/$vm_kver of its own, without viacam.ko)
#   vm_systemd  1: an installed system (run.sh --systemd): the script runs twice, first as
#               `SCRIPT install` before systemd starts (the machine is being set up: install
#               packages, edit /etc), then systemd becomes PID 1 and its unit
#               viacam-test.service runs `SCRIPT check` (this file with --systemd-test), whose
#               status ends the guest. The journal is kept as journal.log.
# $vm_results/test-env (if there) holds test knobs from the host's environment
# (VIACAM_FUZZ_*, VIACAM_STRESS_*, VIACAM_HOSTILE_*; see run.sh); it is sourced before the
# script runs.
#
# The script's exit status goes to $vm_results/rc, its output to $vm_results/output.log
# (and the console), the kernel log to $vm_results/dmesg.log. Then the guest powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=${TERM:-linux}
set +e

log() { echo "guest: $*" >/dev/console; }

# run_script ARGS...: $vm_script with ARGS, in a session of its own (its children cannot take
# the console from us); output to output.log and the console. Sets rc.
run_script() {
	log "running $vm_script $*"
	setsid bash -c 'exec "$@"' _ bash "$vm_script" "$@" 2>&1 </dev/null |
		tee -a "$VIACAM_RESULTS/output.log" >/dev/console
	rc=${PIPESTATUS[0]}
	log "script exited with $rc"
}

# finish: the kernel's verdicts and the status go to the results folder; the guest powers off.
finish() {
	# Debug kernels: kmemleak scans after the script. Two are needed: a scan passes over an
	# object whose contents it has not summed before (and one younger than 5 s), so a leak
	# shows in the second scan at the earliest. Its "suspected memory leak" line in the kernel
	# log fails the run (logscan); run.sh also fails it on a non-empty kmemleak.log. Each scan
	# of a 1 GiB guest takes ~20 s under TCG, which covers kmemleak's 5 s minimum age.
	# A pointer to a lost object can outlive its last user on a dead task's kernel stack,
	# which the kernel keeps (per CPU) for the next fork and kmemleak scans like any
	# allocation: forks on every CPU take those stacks back, and a stack is zeroed when it is
	# reused. A scan that fails (kmemleak turned itself off) fails the run: its silence would
	# prove nothing.
	if [ -w /sys/kernel/debug/kmemleak ]; then
		for c in $(seq 0 $(($(nproc) - 1))); do
			taskset -c "$c" sh -c ':& :& :& wait' 2>/dev/null
		done
		if echo scan >/sys/kernel/debug/kmemleak && echo scan >/sys/kernel/debug/kmemleak; then
			cat /sys/kernel/debug/kmemleak >"$VIACAM_RESULTS/kmemleak.log" 2>&1
		else
			echo "kmemleak could not scan (it turned itself off: see the kernel log)" \
				>"$VIACAM_RESULTS/kmemleak.log"
		fi
	fi
	dmesg >"$VIACAM_RESULTS/dmesg.log" 2>&1
	[ -d /run/systemd/system ] &&
		journalctl -b --no-pager -o short-monotonic >"$VIACAM_RESULTS/journal.log" 2>&1
	echo "$rc" >"$VIACAM_RESULTS/rc"
	sync
	# A synchronous power-off: reboot(2) does not return. (SysRq-o only schedules one, and
	# PID 1 racing on would exit with the root being torn down: "Attempted to kill init".)
	/bin/busybox poweroff -f
	echo o >/proc/sysrq-trigger
	while :; do read -r -t 3600 _ </dev/console; done
}

# The second run of an installed system's test, started by systemd (see vm_systemd above):
# the guest is set up already; its variables were saved by the first run.
if [ "${1:-}" = --systemd-test ]; then
	. /etc/viacam-vm.env
	cd "$vm_src" || cd /
	run_script check
	finish
fi

# /tmp and /run get fresh tmpfs; paths below them that the run needs are bound back.
keep_n=0
declare -a keep_src=() keep_tmp=()
IFS=: read -ra keeps <<<"${vm_keep:-}:$vm_src"
for p in "${keeps[@]}"; do
	case "$p" in /tmp/*|/run/*) ;; *) continue ;; esac
	if [ -d "$p" ]; then
		mkdir -p "/.vm-keep/$keep_n"
	elif [ -f "$p" ]; then
		mkdir -p /.vm-keep && : >"/.vm-keep/$keep_n"
	else
		continue
	fi
	mount --bind "$p" "/.vm-keep/$keep_n" &&
		{ keep_src+=("$p"); keep_tmp+=("/.vm-keep/$keep_n"); }
	keep_n=$((keep_n + 1))
done
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
for i in "${!keep_src[@]}"; do
	if [ -d "${keep_tmp[$i]}" ]; then
		mkdir -p "${keep_src[$i]}"
	else
		mkdir -p "$(dirname "${keep_src[$i]}")" && : >"${keep_src[$i]}"
	fi
	mount --bind "${keep_tmp[$i]}" "${keep_src[$i]}"
done
mkdir -p /dev/pts /dev/shm
# What udev or systemd would make: bash's <(...) and dkms need /dev/fd.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mount -t devpts -o gid=5,mode=620 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mkdir -p /run/lock /run/user
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
hostname viacam-guest

if [ -n "${vm_results:-}" ]; then
	mkdir -p "$vm_results"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results "$vm_results" ||
		log "cannot mount the results folder $vm_results"
fi

# Harness self-test: the host root already has this release's modules (as on a Debian 12
# machine running the same kernel), made here in the guest's overlay.
if [ "${vm_hostmods:-0}" = 1 ]; then
	mkdir -p "/usr/lib/modules/$vm_kver/kernel"
	: >"/usr/lib/modules/$vm_kver/modules.dep"
	log "faked host modules in /usr/lib/modules/$vm_kver"
fi
# The cached kernel's modules (plus viacam.ko, see the Makefile's modroot) for modprobe.
# A bind mount, not a symlink: the shared host root may have a /usr/lib/modules/$vm_kver of
# its own (a host running the same Debian kernel), which must not hide ours.
if [ -n "${vm_modroot:-}" ] && [ -d "$vm_modroot/lib/modules/$vm_kver" ]; then
	mkdir -p "/usr/lib/modules/$vm_kver"
	mount --bind "$vm_modroot/lib/modules/$vm_kver" "/usr/lib/modules/$vm_kver" ||
		log "cannot bind the modules of $vm_kver from $vm_modroot"
fi

# Find hung tasks sooner than the default 120 s, so a hang fails within the run's timeout.
[ -w /proc/sys/kernel/hung_task_timeout_secs ] && echo 30 >/proc/sys/kernel/hung_task_timeout_secs
echo 1 >/proc/sys/kernel/sysrq 2>/dev/null

# The boot marker: run.sh treats kernel reports before this line as a boot-time fault of the
# guest kernel (nothing of viacam is loaded yet) and boots again; reports after it fail the run.
[ "${vm_bootfault:-0}" = 1 ] && echo "BUG: fake boot-time fault injected by the harness self-test" >/dev/kmsg
echo "viacam-vm: boot complete, test starts" >/dev/kmsg

export VIACAM_SRC=$vm_src VIACAM_KVER=$vm_kver VIACAM_RESULTS=${vm_results:-/tmp}
export VIACAM_BUILD=$vm_src/build KVER=$vm_kver
# Test knobs from the host (VIACAM_FUZZ_*, VIACAM_STRESS_*, VIACAM_HOSTILE_*; written by run.sh).
[ -f "$VIACAM_RESULTS/test-env" ] && . "$VIACAM_RESULTS/test-env"
cd "$vm_src" || cd /

# An installed system: set up (SCRIPT install), then systemd as PID 1 (see vm_systemd).
if [ "${vm_systemd:-0}" = 1 ] && [ -n "${vm_script:-}" ]; then
	run_script install
	if [ "$rc" = 0 ]; then
		{ export -p; declare -p "${!vm_@}"; } >/etc/viacam-vm.env
		mkdir -p /etc/systemd/system /etc/tmpfiles.d
		# The target: what a booted machine has (basic.target, udev, journald, modules-load)
		# and the test, without the host's own services (multi-user.target).
		cat >/etc/systemd/system/viacam-test.target <<-EOF
		[Unit]
		Description=viacam test of an installed system
		Requires=basic.target viacam-test.service
		After=basic.target
		AllowIsolate=yes
		EOF
		cat >/etc/systemd/system/viacam-test.service <<-EOF
		[Unit]
		Description=viacam test of an installed system: SCRIPT check
		After=basic.target
		[Service]
		ExecStart=/bin/bash $0 --systemd-test
		StandardInput=null
		StandardOutput=journal
		StandardError=journal
		EOF
		# The host's timers (apt-daily and such) would fire at boot as missed: masked. Its
		# tmp.conf would empty /tmp at boot, where kept folders are bound: replaced by none.
		for t in /etc/systemd/system/timers.target.wants/*.timer; do
			[ -e "$t" ] && ln -sf /dev/null "/etc/systemd/system/$(basename "$t")"
		done
		: >/etc/tmpfiles.d/tmp.conf
		log "starting systemd as PID 1 (viacam-test.target)"
		exec /lib/systemd/systemd --unit=viacam-test.target
		log "systemd did not start"
		rc=125
	fi
	finish
fi

if [ -n "${vm_script:-}" ]; then
	run_script
else
	log "interactive shell; 'poweroff' (or exit) ends the guest"
	cat >/tmp/.bashrc <<'RC'
PS1='viacam-guest \w # '
poweroff() { sync; /bin/busybox poweroff -f; }
RC
	setsid -c bash --rcfile /tmp/.bashrc -i </dev/console >/dev/console 2>&1
	rc=$?
fi
finish
