// SPDX-License-Identifier: GPL-2.0-only
/*
 * logscan - report kernel problems in guest logs.
 *
 * Usage: logscan [--kernel-lines] FILE...
 * Prints "FILE:LINE: [pattern] text" for every problem line and exits 1 if there
 * was any, 0 if the logs are clean, 2 on a usage or I/O error. With
 * --kernel-lines only lines that carry a kernel timestamp are considered, so
 * that test output mixed into a console log cannot trigger a false alarm.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logscan.h"

static int scan_file(const char *path, bool kernel_only, unsigned *found)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;

	if (!f) {
		fprintf(stderr, "logscan: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		const char *pat;

		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (kernel_only && !logscan_is_kernel_line(line, (size_t)n))
			continue;
		pat = logscan_match(line, (size_t)n);
		if (pat) {
			printf("%s:%u: [%s] %s\n", path, lineno, pat, line);
			(*found)++;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	bool kernel_only = false;
	unsigned found = 0;
	int i = 1, files = 0;

	if (i < argc && strcmp(argv[i], "--kernel-lines") == 0) {
		kernel_only = true;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: logscan [--kernel-lines] FILE...\n");
		return 2;
	}
	for (; i < argc; i++, files++)
		if (scan_file(argv[i], kernel_only, &found) < 0)
			return 2;
	return found ? 1 : 0;
}
