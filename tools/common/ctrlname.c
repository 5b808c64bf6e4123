// SPDX-License-Identifier: GPL-2.0-only
/* ctrlname.c - see ctrlname.h. */
#include <ctype.h>
#include <stdbool.h>

#include "ctrlname.h"

void vc_ctrl_key_name(const char *name, char *buf, size_t len)
{
	size_t o = 0;
	bool sep = false;

	if (!len)
		return;
	for (const char *p = name; *p && o + 1 < len; p++) {
		if (isalnum((unsigned char)*p)) {
			if (sep && o > 0 && o + 2 < len)
				buf[o++] = '_';
			buf[o++] = (char)tolower((unsigned char)*p);
			sep = false;
		} else {
			sep = true;
		}
	}
	buf[o] = 0;
}
