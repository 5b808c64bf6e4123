#!/usr/bin/env bash
# test-vm-verdicts.sh - the guest harness turns each kind of bad guest run into a failure:
# a failing script, a guest that outlives its timeout, a kernel WARNING in the log, and a
# fault while the kernel boots once retries are used up (one such fault is retried).
# A passing script passes. The guest loads the cache's modules (with viacam.ko) even when the
# host root it shares already has /lib/modules/<that release> (a host with the same Debian
# kernel installed; faked inside the guest, the host is never touched). Two guests started at
# once on a fresh cache share one initramfs build. Runs on the newest cached kernel (6.12).
# expected-seconds: 130 (the runner's guess on a fresh machine: long jobs start first)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
run=$src/tools/vm/run.sh
ok=1

check() { # NAME WANT_RC GOT_RC
	if [ "$2" = "$3" ]; then
		echo "ok: $1 -> exit $3"
	else
		echo "NOT OK: $1 -> exit $3, expected $2"
		ok=0
	fi
}

printf '#!/bin/bash\necho fine\nexit 0\n' >"$work/pass.sh"
printf '#!/bin/bash\necho failing on purpose\nexit 3\n' >"$work/fail.sh"
printf '#!/bin/bash\necho hanging on purpose\nsleep 100000\n' >"$work/hang.sh"
printf '#!/bin/bash\necho "WARNING: CPU: 0 PID: 1 at fake.c:1 injected by the harness test" >/dev/kmsg\nexit 0\n' >"$work/warn.sh"

"$run" --results "$work/pass" "$work/pass.sh"; check "passing script" 0 $?
grep -q fine "$work/pass/output.log" && echo "ok: script output kept" || { echo "NOT OK: output.log lacks the script output"; ok=0; }
[ -s "$work/pass/console.log" ] && echo "ok: console log kept" || { echo "NOT OK: no console.log"; ok=0; }
"$run" --results "$work/fail" "$work/fail.sh"; check "failing script" 3 $?
"$run" --results "$work/hang" --timeout 25 "$work/hang.sh"; check "guest timeout" 124 $?
"$run" --results "$work/warn" "$work/warn.sh"; check "kernel WARNING in the log" 126 $?
grep -q 'injected by the harness test' "$work/warn/scan.log" && echo "ok: scan.log names the line" ||
	{ echo "NOT OK: scan.log does not show the WARNING line"; ok=0; }
# A fault while the guest kernel boots (faked before the boot marker on the first boot only)
# is retried once, and the run passes on the second boot; the retry is stated and counted.
VIACAM_VM_INJECT_BOOTFAULT=1 "$run" --results "$work/bootfault" "$work/pass.sh" 2>"$work/bootfault.err"
check "boot-time fault, then a clean boot" 0 $?
grep -q 'booting again (boot retry 1 of' "$work/bootfault.err" && [ "$(cat "$work/bootfault/boot-retries")" = 1 ] &&
	echo "ok: the boot retry is reported and counted" ||
	{ echo "NOT OK: no boot retry reported"; cat "$work/bootfault.err"; ok=0; }
VIACAM_VM_INJECT_BOOTFAULT=1 VIACAM_BOOT_RETRIES=0 "$run" --results "$work/bootfault0" "$work/pass.sh" 2>/dev/null
check "boot-time fault with retries used up" 126 $?
# The host has this kernel's modules installed (without viacam.ko): modprobe must still find ours.
printf '#!/bin/bash\nmodprobe viacam || exit 1\ngrep -q "^viacam " /proc/modules || exit 2\nmodprobe vivid || exit 3\nexit 0\n' >"$work/modprobe.sh"
VIACAM_VM_INJECT_HOSTMODS=1 "$run" --results "$work/hostmods" "$work/modprobe.sh"
check "modprobe viacam with the host's own /lib/modules/<release>" 0 $?
grep -q 'faked host modules' "$work/hostmods/console.log" && echo "ok: the host's modules were faked" ||
	{ echo "NOT OK: the guest did not fake the host's modules"; ok=0; }
# Two guests start at once on a kernel whose initramfs is not built yet (a fresh cache, as in
# make check's parallel jobs): both must boot (they once raced on initramfs.gz.tmp).
cache=${VIACAM_CACHE:-$HOME/.cache/viacam}
read -r _ kver kdir < <("$src/tools/vm/kernels.sh" list 6.12)
scratch=$work/cache/kernels/$kver
rm -rf "$work/cache" && mkdir -p "$scratch"
ln -s "$kdir/root" "$scratch/root"
cp "$kdir/series" "$kdir/kver" "$kdir/.complete" "$scratch/"
VIACAM_CACHE=$work/cache "$run" --results "$work/par1" "$work/pass.sh" >"$work/par1.err" 2>&1 &
p1=$!
VIACAM_CACHE=$work/cache "$run" --results "$work/par2" "$work/pass.sh" >"$work/par2.err" 2>&1 &
p2=$!
wait "$p1"; check "first of two guests started at once on a fresh cache" 0 $?
wait "$p2"; check "second of two guests started at once on a fresh cache" 0 $?
[ -s "$scratch/initramfs.gz" ] && echo "ok: one initramfs built for both" ||
	{ echo "NOT OK: no initramfs in the scratch cache"; ok=0; }
cat "$work/par1.err" "$work/par2.err" | grep -i 'initramfs' && ok=0
[ "$ok" = 1 ]
