// SPDX-License-Identifier: GPL-2.0-only
/* ctrlname.c - see ctrlname.h. */
#include <ctype.h>
#include <errno.h>
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

/*
 * value and value64 share a union: a 32-bit control fills only value, and value64 then reads
 * 4 more bytes (-10 showed as 4294967286). Only INTEGER64 uses value64; the compound types
 * (strings, arrays) are not read or written by value at all.
 */
int64_t vc_ctrl_ext_value(uint32_t type, const struct v4l2_ext_control *c)
{
	return type == V4L2_CTRL_TYPE_INTEGER64 ? c->value64 : c->value;
}

int vc_ctrl_set_ext_value(uint32_t type, int64_t value, struct v4l2_ext_control *c)
{
	if (type == V4L2_CTRL_TYPE_INTEGER64) {
		c->value64 = value;
		return 0;
	}
	if (value < INT32_MIN || value > INT32_MAX)
		return -ERANGE;
	c->value = (int32_t)value;
	return 0;
}
