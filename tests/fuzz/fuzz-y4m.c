// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz-y4m.c - libFuzzer target: the Y4M parser (stream header, FRAME lines, and whole files
 * through vc_y4m_open) on arbitrary bytes. A refusal says why, in printable text: the file's
 * bytes are escaped (no control character reaches a terminal).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "y4m.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_msg(const char *msg)
{
	if (!msg[0])
		abort();	/* a refusal says why */
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort();	/* ... without raw control bytes */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;
	struct vc_y4m_header hdr;
	struct vc_y4m_file f;
	char msg[256];
	size_t len;

	msg[0] = 0;
	if (vc_y4m_parse_header(data, size, &hdr, msg, sizeof(msg)) < 0)
		check_msg(msg);
	if (vc_y4m_parse_frame_header(data, size, &len) == 0 && (len == 0 || len > size))
		abort();
	if (fd < 0) {
		fd = memfd_create("fuzz-y4m", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	msg[0] = 0;
	if (vc_y4m_open(&f, path, msg, sizeof(msg)) == 0) {
		uint8_t *buf = malloc(f.hdr.frame_size ? f.hdr.frame_size : 1);

		if (!buf || !f.nframes)
			abort();
		if (vc_y4m_read_frame(&f, f.nframes - 1, buf, f.hdr.frame_size) < 0)
			abort();
		free(buf);
		vc_y4m_close(&f);
	} else {
		check_msg(msg);
	}
	return 0;
}
