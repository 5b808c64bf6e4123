// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz-config.c - libFuzzer target: viacamd's configuration parser on arbitrary files.
 * Any input must give either a configuration or a list of messages, never a crash, a leak
 * or undefined behaviour (built with ASan and UBSan). Messages are sorted by line and carry
 * no raw control bytes (the file's bytes are escaped).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;
	struct vc_msgs msgs = { 0 };
	struct vc_conf *conf = NULL;

	if (fd < 0) {
		fd = memfd_create("fuzz-config", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (vc_conf_load(path, &conf, &msgs) == 0) {
		if (msgs.n)
			abort();	/* success comes without messages */
		for (size_t i = 0; i < conf->ncams; i++)
			if (!vc_conf_camera(conf, conf->cams[i].name))
				abort();
		vc_conf_free(conf);
	} else if (!msgs.n || conf) {
		abort();	/* a failure says why, and returns nothing */
	}
	for (size_t i = 0; i < msgs.n; i++) {
		if (i && msgs.lines[i] < msgs.lines[i - 1])
			abort();
		for (const unsigned char *p = (const unsigned char *)msgs.v[i]; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				abort();
	}
	vc_msgs_free(&msgs);
	return 0;
}
