#!/usr/bin/env bash
# deps.sh - install the Debian 12 packages viacam needs to build, run and test.
#
# Usage: scripts/deps.sh [--check]
# As root it installs what is missing with apt-get. As another user, or with
# --check, it prints the exact apt-get command and exits 1 if anything is missing.
set -euo pipefail

packages=(
	# build: user space and the kernel module (kbuild runs the headers' gcc-12)
	gcc gcc-12 make libc6-dev pkg-config bc flex bison libelf-dev libssl-dev dwarves
	libcmocka-dev libsystemd-dev libinih-dev libv4l-dev libdrm-dev
	# kernel cache and the QEMU guest
	apt file kmod cpio gzip xz-utils zstd busybox-static qemu-system-x86 udev passwd util-linux
	# style and static checks of kmod/ (checkpatch.pl comes with the kernel source)
	sparse linux-source-6.1 perl
	# libFuzzer targets of the parsers (clang's -fsanitize=fuzzer)
	clang libclang-rt-14-dev
	# V4L2 clients used in the guest tests
	v4l-utils gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good ffmpeg
	gstreamer1.0-plugins-base-apps yavta
	# make bench: the plot
	gnuplot-nox
	# the peer we measure against
	v4l2loopback-source
)

missing=()
for p in "${packages[@]}"; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "${1:-}" = --check ] || [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: install them with: sudo apt-get update && sudo $cmd" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done" >&2
