#!/bin/sh
# sid-sparse.sh - sid's sparse, from the cached sid root (tools/vm/sid-root.sh), run on the host
# with that root's own loader and libraries. The host's sparse (bookworm's 0.6.4) cannot parse
# what kernels since 6.16 use (__typeof_unqual__), and their `make C=2` then turns sparse off
# (scripts/checker-valid.sh); tools/kmod-lint.sh passes this as CHECK for a kernel built on the
# host from such sources (the 7.2-debug kernel).
r=${VIACAM_CACHE:-$HOME/.cache/viacam}/sid-root/root
exec "$r/usr/lib64/ld-linux-x86-64.so.2" --library-path "$r/usr/lib/x86_64-linux-gnu" \
	"$r/usr/bin/sparse" "$@"
