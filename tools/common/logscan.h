/* SPDX-License-Identifier: GPL-2.0-only */
/* logscan.h - find kernel reports (WARNING, BUG, Oops, lockdep, KASAN, ...) in log text. */
#ifndef VIACAM_LOGSCAN_H
#define VIACAM_LOGSCAN_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Returns the pattern that makes @line a kernel problem report, or NULL for a
 * harmless line. @line need not be NUL-terminated before @len.
 */
const char *logscan_match(const char *line, size_t len);

/* True when @line looks like a kernel log line: "[ seconds.micros] text". */
bool logscan_is_kernel_line(const char *line, size_t len);

#endif
