#!/usr/bin/env bash
# build-debs.sh WORK - build viacam's Debian packages as a packager would: a copy of this tree
# (with its uncommitted changes, without build products) in WORK/src/viacam, then
# `dpkg-buildpackage -us -uc` there. The packages, .changes and .buildinfo land in WORK/src;
# the log is WORK/build.log. Exit status: dpkg-buildpackage's (its log's tail on failure).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
work=${1:?usage: build-debs.sh WORK}
rm -rf "$work/src"
mkdir -p "$work/src/viacam"
cd "$src" || exit 1
(git ls-files; git ls-files -o --exclude-standard) | grep -v -e '^build/' -e '^debian/build/' -e '^obj-' |
	while read -r f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	xargs -0 cp --parents -t "$work/src/viacam"
if ! (cd "$work/src/viacam" && dpkg-buildpackage -us -uc) >"$work/build.log" 2>&1; then
	echo "dpkg-buildpackage failed:" >&2
	tail -n 20 "$work/build.log" >&2
	exit 1
fi
