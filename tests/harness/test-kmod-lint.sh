#!/usr/bin/env bash
# test-kmod-lint.sh - kmod/ is checkpatch --strict clean and sparse clean on every cached kernel.
exec "$(dirname "$0")/../../tools/kmod-lint.sh"
