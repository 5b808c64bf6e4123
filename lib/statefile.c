// SPDX-License-Identifier: GPL-2.0-only
/*
 * statefile.c - reads viacamd's state file (the format is in statefile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "statefile.h"

/* @path opened for reading if it is a regular file of at most VC_STATE_MAX_SIZE bytes. */
static int open_state(const char *path, FILE **ret)
{
	struct stat s;
	int fd, r;

	/* O_NONBLOCK: a FIFO must not block the open; it is refused right after. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &s) < 0)
		r = -errno;
	else if (!S_ISREG(s.st_mode))
		r = S_ISDIR(s.st_mode) ? -EISDIR : -EINVAL;
	else if (s.st_size > VC_STATE_MAX_SIZE)
		r = -EFBIG;
	else if (!(*ret = fdopen(fd, "r")))
		r = -errno;
	else
		return 0;
	close(fd);
	return r;
}

int vc_state_read(const char *path, struct vc_state *st)
{
	char line[640];
	size_t bytes = 0;
	FILE *f;
	int err;

	memset(st, 0, sizeof(*st));
	st->pid = -1;
	err = open_state(path, &f);
	if (err < 0)
		return err;
	/* At most the size limit, even from a file that grows while it is read. */
	while (bytes < VC_STATE_MAX_SIZE && fgets(line, sizeof(line), f)) {
		bytes += strlen(line) + 1;
		unsigned long a, r;
		unsigned int id;
		int pid;

		if (sscanf(line, "pid %d", &pid) == 1) {
			st->pid = pid;
		} else if (sscanf(line, "reloads %lu %lu", &a, &r) == 2) {
			st->have_reloads = true;
			st->reloads_applied = a;
			st->reloads_rejected = r;
		} else if (!strncmp(line, "rejected-because ", 17)) {
			snprintf(st->rejected_why, sizeof(st->rejected_why), "%.*s",
				 (int)strcspn(line + 17, "\n"), line + 17);
		} else if (st->ncams < VC_STATE_CAMERAS) {
			char name[VC_STATE_WORD], backend[VC_STATE_WORD];

			if (sscanf(line, "camera %63s %u %63s", name, &id, backend) != 3)
				continue;
			memcpy(st->cams[st->ncams].name, name, sizeof(name));
			st->cams[st->ncams].id = id;
			memcpy(st->cams[st->ncams].backend, backend, sizeof(backend));
			st->ncams++;
		}
	}
	fclose(f);
	return 0;
}

const char *vc_state_backend_of(const struct vc_state *st, uint32_t id, const char **name)
{
	const char *b = NULL;

	for (unsigned int i = 0; i < st->ncams; i++)	/* the last line wins */
		if (st->cams[i].id == id) {
			b = st->cams[i].backend;
			if (name)
				*name = st->cams[i].name;
		}
	return b;
}

int vc_state_id_of(const struct vc_state *st, const char *name, uint32_t *id)
{
	int r = -ENOENT;

	for (unsigned int i = 0; i < st->ncams; i++)
		if (!strcmp(st->cams[i].name, name)) {
			*id = st->cams[i].id;
			r = 0;
		}
	return r;
}
