#!/usr/bin/env bash
# kmod-lint.sh - style and static checks of kmod/: checkpatch.pl --strict (from Debian's
# linux-source-6.1), sparse (make C=2) and gcc's -Wmaybe-uninitialized against each cached
# kernel.
# Exit status 1 when either reports anything.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${VIACAM_CACHE:-$HOME/.cache/viacam}/checkpatch
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1 || true)
[ -n "$tarball" ] || { echo "kmod-lint: linux-source-6.1 is not installed (scripts/deps.sh)" >&2; exit 2; }
if [ ! -x "$cache/scripts/checkpatch.pl" ] || [ "$tarball" -nt "$cache/scripts/checkpatch.pl" ]; then
	rm -rf "$cache" && mkdir -p "$cache"
	top=$(basename "$tarball"); top=${top%%.tar.*}
	tar -xf "$tarball" -C "$cache" --strip-components=1 "$top/scripts/checkpatch.pl" \
		"$top/scripts/spelling.txt" "$top/scripts/const_structs.checkpatch"
	touch "$cache/scripts/checkpatch.pl"
fi
rc=0
echo "== checkpatch --strict"
if ! "$cache/scripts/checkpatch.pl" --strict --no-tree --terse --show-types \
	--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f "$src"/kmod/*.[ch] "$src"/kmod/uapi/linux/*.h; then
	rc=1
fi
echo "== sparse"
for series in $("$src/tools/vm/kernels.sh" list | awk '{print $1}'); do
	kdir=$("$src/tools/vm/kernels.sh" kdir "$series")
	out=$(mktemp -d)
	cp "$src"/kmod/*.[ch] "$src"/kmod/Kbuild "$out/"
	mkdir -p "$out/uapi/linux" && cp "$src"/kmod/uapi/linux/*.h "$out/uapi/linux/"
	# Kbuild turns -Wmaybe-uninitialized off; we want it (it found an uninitialised return
	# value in viacam_write).
	# (kbuild-run.sh: sid's kernel is checked in the sid root, with its gcc and sparse. A
	# kernel built on the host whose `make C=2` finds the host's sparse too old (7.2-debug:
	# scripts/checker-valid.sh) is checked with sid's sparse, tools/vm/sid-sparse.sh.)
	check=sparse
	if [ "$("$src/tools/vm/kbuild-run.sh" --which "$kdir")" = host ] &&
		[ -x "$kdir/scripts/checker-valid.sh" ] &&
		[ "$("$kdir/scripts/checker-valid.sh" sparse -m64 2>/dev/null)" != 1 ]; then
		check=$src/tools/vm/sid-sparse.sh
	fi
	log=$("$src/tools/vm/kbuild-run.sh" "$kdir" --bind "$out" \
		make -s --no-print-directory -C "$kdir" M="$out" C=2 CHECK="$check -Wno-declaration-after-statement" \
		KCFLAGS="-Wmaybe-uninitialized" modules 2>&1 |
		grep -vE 'Skipping BTF|^make|^\s*$' || true)
	if [ -n "$log" ]; then
		echo "$series:"; echo "$log"; rc=1
	else
		echo "$series: clean"
	fi
	rm -rf "$out"
done
exit $rc
