// SPDX-License-Identifier: GPL-2.0-only
/* logscan.c - find kernel reports (WARNING, BUG, Oops, lockdep, KASAN, ...) in log text. */
#include "logscan.h"

#include <ctype.h>
#include <string.h>

/*
 * What fails a guest run. Each entry is a substring that only the kernel's
 * report paths print: WARN() ("WARNING: CPU: 0 PID: ..."), BUG()/KASAN
 * ("BUG: KASAN: ..."), oopses and GP faults, lockdep splats (which also start
 * with "WARNING: possible ..."), UBSAN, the hung-task detector, soft/hard
 * lockups, RCU stalls, kmemleak findings and panics.
 */
static const char *const patterns[] = {
	"WARNING:",
	"BUG:",
	"Oops",
	"general protection",
	"lockdep",
	"KASAN",
	"UBSAN",
	"blocked for more than",
	"soft lockup",
	"hard LOCKUP",
	"detected stall",
	"suspected memory leak",
	"memory leak detector disabled",
	"Kernel panic",
};

static const char *memmem_str(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	if (n > len)
		return NULL;
	for (size_t i = 0; i + n <= len; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, n) == 0)
			return hay + i;
	return NULL;
}

/*
 * Lines that contain a pattern but report nothing: the banners a debug kernel
 * prints at boot ("RCU lockdep checking is enabled.", "... MAX_LOCKDEP_KEYS: 8192").
 */
static const char *const benign[] = {
	"RCU lockdep checking is enabled",
	"MAX_LOCKDEP_",
	"Lock dependency validator",
};

const char *logscan_match(const char *line, size_t len)
{
	for (size_t i = 0; i < sizeof(benign) / sizeof(benign[0]); i++)
		if (memmem_str(line, len, benign[i]))
			return NULL;
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++)
		if (memmem_str(line, len, patterns[i]))
			return patterns[i];
	return NULL;
}

bool logscan_is_kernel_line(const char *line, size_t len)
{
	size_t i = 0;
	bool digits = false, dot = false;

	/* Optional "<N>" priority prefix (raw /dev/kmsg style). */
	if (len > 2 && line[0] == '<') {
		while (i < len && line[i] != '>')
			i++;
		i++;
	}
	if (i >= len || line[i] != '[')
		return false;
	for (i++; i < len && line[i] == ' '; i++)
		;
	for (; i < len && (isdigit((unsigned char)line[i]) || line[i] == '.'); i++) {
		if (line[i] == '.')
			dot = true;
		else
			digits = true;
	}
	return digits && dot && i < len && line[i] == ']';
}
