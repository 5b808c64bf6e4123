#!/usr/bin/env bash
# deps.sh - install the Debian 12 packages viacam needs to build, run and test.
#
# Usage: scripts/deps.sh [--check] [run|check]
#   run    what `make run` needs: build the daemon and the module, boot one guest, capture
#          with ffmpeg (the smaller set; a fresh machine's `make run` installs only these)
#   check  everything `make check`, `make bench` and the nightly targets need (default)
# As root it installs what is missing with apt-get. As another user, or with --check, it
# prints the exact apt-get command and exits 1 if anything is missing.
set -euo pipefail

check_only=0 profile=check
for a in "$@"; do
	case "$a" in
	--check) check_only=1 ;;
	run|check) profile=$a ;;
	*) echo "deps: unknown argument '$a' (usage: deps.sh [--check] [run|check])" >&2; exit 2 ;;
	esac
done

run_packages=(
	# build: user space and the kernel module (kbuild runs the headers' gcc-12)
	gcc gcc-12 make libc6-dev pkg-config meson ninja-build bc libelf-dev dwarves
	libsystemd-dev libinih-dev libv4l-dev libdrm-dev libseccomp-dev
	libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
	# kernel cache and the QEMU guest
	apt file kmod cpio gzip xz-utils zstd busybox-static qemu-system-x86 util-linux
	# the demo's capture client
	ffmpeg
)
check_packages=(
	# the debug kernel's build, unit tests, the 32-bit test backend (gcc -m32)
	flex bison libssl-dev libcmocka-dev gcc-multilib
	udev passwd
	# style and static checks of kmod/ (checkpatch.pl comes with the kernel source)
	sparse linux-source-6.1 perl
	# libFuzzer targets of the parsers (clang's -fsanitize=fuzzer)
	clang libclang-rt-14-dev
	# V4L2 clients used in the guest tests
	v4l-utils gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
	gstreamer1.0-plugins-base-apps yavta
	# a browser's getUserMedia in the guest (TEST-17: several applications on one camera)
	chromium
	# PipeWire in the guest (TEST-15): the daemon, its session manager and GStreamer source
	pipewire pipewire-bin wireplumber gstreamer1.0-pipewire dbus jq
	# make bench: the plot
	gnuplot-nox
	# the peer we measure against
	v4l2loopback-source
	# packaging: Debian packages, DKMS, lintian (harness/test-packaging)
	debhelper dh-dkms dkms dpkg-dev lintian
	# the sid root: sid's gcc for the 7.2 kernel's module (tools/vm/sid-root.sh)
	mmdebstrap
)
packages=("${run_packages[@]}")
[ "$profile" = check ] && packages+=("${check_packages[@]}")

missing=()
for p in "${packages[@]}"; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$check_only" = 1 ] || [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: install them with: sudo apt-get update && sudo $cmd" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done" >&2
