/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * config.h - viacamd's configuration file (INI, read with libinih).
 *
 * One section per camera, "[camera NAME]". Generic keys are checked here; every other key
 * belongs to the camera's backend (its ops->keys list decides) and is checked by the backend's
 * create() when the configuration is applied. Every problem is reported as "FILE:LINE: reason"
 * at the line of the key that caused it, sorted by line; a file with any problem is refused as
 * a whole. Only regular files of at most VC_CONF_MAX_SIZE bytes are read. conf/viacam.conf
 * documents each key.
 */
#ifndef VIACAM_CONFIG_H
#define VIACAM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "backend.h"
#include "ctrlname.h"

#define VC_MAX_CAMERAS VIACAM_MAX_CAMERAS
#define VC_NAME_LEN 32
#define VC_MAX_LIST 32		/* entries of formats/sizes/rates */
#define VC_MAX_KEYS 32		/* backend keys of one section */
#define VC_CONF_MAX_SIZE (1 << 20)	/* bytes: a config file is a few KiB; this is not one */
#define VC_MAX_MSGS 100		/* messages kept; a binary file would give thousands */

struct vc_ctrl_default {
	char *name;		/* as v4l2-ctl spells it: "horizontal_flip" */
	int64_t value;
	int line;
};

struct vc_cam_conf {
	char name[VC_NAME_LEN];	/* the section's NAME */
	int line;		/* of the section header */
	char label[VIACAM_LABEL_LEN];	/* default: NAME; UTF-8 without control characters */
	int label_line;
	int video_nr;		/* capture node /dev/videoN, -1 = automatic */
	int video_nr_line;
	int backend_nr;		/* backend node, -1 = automatic */
	int backend_nr_line;
	uint32_t timeout_ms;	/* 0 = the module's default */
	uint32_t consumers;	/* capture nodes, 1..VIACAM_MAX_CAPTURES (default 1) */
	char backend[VC_NAME_LEN];	/* default "pattern"; "" after a bad backend name */
	int backend_line;
	/* A list with a bad word is kept empty: a backend must not judge half of it. */
	uint32_t formats[VC_MAX_LIST];
	size_t nformats;
	int formats_line;
	uint32_t sizes[VC_MAX_LIST][2];
	size_t nsizes;
	int sizes_line;
	uint32_t intervals[VC_MAX_LIST][2];	/* from "rates": num/den seconds per frame */
	size_t nintervals;
	int rates_line;
	struct vc_kv keys[VC_MAX_KEYS];	/* backend keys */
	size_t nkeys;
	struct vc_ctrl_default ctrls[VC_MAX_CTRLS];
	size_t nctrls;
	/*
	 * optional = yes: a camera whose source is absent (its backend fails with ENODEV or
	 * ENOENT: no such chip, device or file) is not an error: it is not served, the log says
	 * why once, and a reload tries it again. @absent is that reason (vc_daemon_check).
	 */
	bool optional;
	int optional_line;
	char absent[256];
};

/*
 * What a file was when it was read (fstat() after the read): a change of any field means it
 * was written meanwhile. Writes update mtime and ctime, a truncation the size, a file renamed
 * over it the inode; ctime also changes on utimensat(), so a tool that writes and then puts
 * back an old mtime (cp -p, rsync -t) is seen too.
 */
struct vc_file_stamp {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};
bool vc_file_stamp_equal(const struct vc_file_stamp *a, const struct vc_file_stamp *b);

struct vc_conf {
	char *path;
	struct vc_cam_conf *cams;
	size_t ncams;
	struct vc_file_stamp stamp;	/* the file as it was read */
};

/*
 * A list of messages "FILE:LINE: reason", each with its line for sorting (0: about the whole
 * file). Messages are escaped as they are added (text.h): they echo bytes from the file. At
 * most VC_MAX_MSGS are kept; @dropped counts the others.
 */
struct vc_msgs {
	char **v;
	int *lines;
	size_t n;
	size_t dropped;
};
void vc_msgs_add(struct vc_msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds "PATH:LINE: " and the formatted text. */
void vc_msgs_add_at(struct vc_msgs *m, const char *path, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Drops the messages after the first @n (what a step added, when it was not an error). */
void vc_msgs_truncate(struct vc_msgs *m, size_t n);
/* Sorts by line; messages of one line keep their order. */
void vc_msgs_sort(struct vc_msgs *m);
void vc_msgs_free(struct vc_msgs *m);

/*
 * Reads @path into a new *ret. Returns 0, or -EINVAL with every problem in @msgs, sorted by
 * line (or another negative errno when the file cannot be read, also in @msgs). Backend keys
 * are checked only for their names here (vc_prepare() in session.c does the rest). -EAGAIN:
 * the file changed while it was read (its stamp before and after differ, it was not read to
 * the size it has, or the path names another file now); nothing of it is returned.
 */
int vc_conf_load(const char *path, struct vc_conf **ret, struct vc_msgs *msgs);

/*
 * Like vc_conf_load(), but on -EINVAL *ret is still set: every camera section that could be
 * started, with the keys that were good (a bad generic key keeps its default, a list with a
 * bad word stays empty, a bad backend name leaves backend ""). So that the backends of the
 * sound sections can be checked in the same pass. Messages are not sorted.
 */
int vc_conf_parse(const char *path, struct vc_conf **ret, struct vc_msgs *msgs);
void vc_conf_free(struct vc_conf *conf);

/* The camera section called @name, or NULL. */
const struct vc_cam_conf *vc_conf_camera(const struct vc_conf *conf, const char *name);

/* The backend's part of a camera section, for create(). Points into @cam. */
void vc_cam_backend_conf(const struct vc_cam_conf *cam, struct vc_backend_conf *bc);

/* What changed between two versions of a camera section. */
bool vc_cam_same_backend(const struct vc_cam_conf *a, const struct vc_cam_conf *b);
bool vc_cam_same_offer(const struct vc_cam_conf *a, const struct vc_cam_conf *b);
bool vc_cam_same_ctrls(const struct vc_cam_conf *a, const struct vc_cam_conf *b);
bool vc_cam_same_nodes(const struct vc_cam_conf *a, const struct vc_cam_conf *b);

/* Fourcc from a config word ("YUYV", "yuyv", "NV12", "YUV420"/"I420"/"YU12", "RGB24"...). */
int vc_parse_fourcc(const char *word, uint32_t *ret);


#endif /* VIACAM_CONFIG_H */
