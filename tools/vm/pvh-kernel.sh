#!/usr/bin/env bash
# pvh-kernel.sh BZIMAGE OUT - write the uncompressed kernel inside BZIMAGE to OUT, if it has a
# PVH entry point (Xen ELF note 18, XEN_ELFNOTE_PHYS32_ENTRY; Debian's kernels have
# CONFIG_PVH=y). QEMU boots such an ELF file directly: no real-mode setup code and no
# self-decompression, which under TCG costs ~7 s per boot for Debian's xz-compressed 6.1
# image and ~1.5 s for 6.12's zstd one. Exit status 1 (and no OUT) when the image has no
# PVH entry or its payload cannot be found; the caller then boots BZIMAGE as it is.
set -euo pipefail
bz=$1 out=$2
tmp=$out.tmp.$$
trap 'rm -f "$tmp"' EXIT
# The first compressed stream in the image that unpacks to an ELF file is the kernel.
for magic in 'fd377a585a00:xz -dc' '28b52ffd:zstd -dcq' '1f8b0800:gzip -dc' '894c5a4f:lzop -dc'; do
	hex=${magic%%:*} cmd=${magic#*:}
	command -v "${cmd%% *}" >/dev/null || continue
	pat=$(sed 's/../\\x&/g' <<<"$hex")
	while read -r off; do
		# Trailing bytes after the stream make the decompressors complain; the output is whole.
		tail -c +$((off + 1)) "$bz" | $cmd >"$tmp" 2>/dev/null || true
		if [ "$(head -c 4 "$tmp" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; then
			notes=$(readelf -n "$tmp" 2>/dev/null || true)
			grep -qE 'Xen[[:space:]]+0x[0-9a-f]+[[:space:]]+Unknown note type: \(0x00000012\)' <<<"$notes" ||
				exit 1
			mv "$tmp" "$out"
			exit 0
		fi
	done < <(LC_ALL=C grep -obUaP "$pat" "$bz" | cut -d: -f1 | head -n 3)
done
exit 1
