#!/usr/bin/env bash
# test-kmod-lint.sh - kmod/ is checkpatch --strict clean and sparse clean on every cached kernel.
# expected-seconds: 40 (the runner's guess on a fresh machine: long jobs start first)
exec "$(dirname "$0")/../../tools/kmod-lint.sh"
