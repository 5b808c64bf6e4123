// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacamctl.c - manage viacam cameras through the bridge's control node.
 *
 * Usage: viacamctl [-d /dev/viacam] COMMAND [ARGS]
 *   version                       uapi version of the loaded module  [VIACAM_IOC_VERSION]
 *   list                          one line per camera                [VIACAM_IOC_LIST, _QUERY]
 *   add [--label L] [--id N] [--capture-nr N] [--backend-nr N] [--timeout MS]
 *                                 create a camera (root)             [VIACAM_IOC_ADD]
 *   remove ID                     delete a camera (root)             [VIACAM_IOC_REMOVE]
 *   query ID                      every field of one camera          [VIACAM_IOC_QUERY]
 *   reload                        make viacamd re-read its configuration (SIGHUP)
 *   get CAMERA [NAME...]          controls of a camera (all, or the named ones)
 *                                                          [VIDIOC_QUERY_EXT_CTRL, G_EXT_CTRLS]
 *   set CAMERA NAME=VALUE...      set controls               [VIDIOC_S_EXT_CTRLS]
 * CAMERA is a camera id or its capture node (/dev/videoN); control NAMEs are spelt as
 * v4l2-ctl spells them (brightness, horizontal_flip). `list` shows which viacamd backend
 * serves each camera, from viacamd's state file (--state FILE, default /run/viacamd/cameras).
 * Exit status: 0 on success, 1 when a call failed, 2 on a usage error.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctrlname.h"
#include "viacam.h"

static const char *arg_device = "/dev/viacam";
static const char *arg_state = "/run/viacamd/cameras";

static int open_ctl(void)
{
	int fd = open(arg_device, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		fprintf(stderr, "viacamctl: %s: %s%s\n", arg_device, strerror(e),
			e == ENOENT ? " (is the viacam module loaded?)" :
			e == EACCES ? " (need root)" : "");
	}
	return fd;
}

/* One wrapper for every ioctl: names the call and the reason on failure. */
#define xioctl(fd, req, arg) do_ioctl(fd, req, arg, #req)
static int do_ioctl(int fd, unsigned long req, void *arg, const char *name)
{
	if (ioctl(fd, req, arg) == 0)
		return 0;
	fprintf(stderr, "viacamctl: %s: %s: %s%s\n", arg_device, name, strerror(errno),
		errno == EPERM ? " (need root)" : "");
	return -errno;
}

static int parse_u32(const char *s, const char *what, uint32_t *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > UINT32_MAX || s[0] == '-') {
		fprintf(stderr, "viacamctl: invalid %s '%s'\n", what, s);
		return -EINVAL;
	}
	*ret = (uint32_t)v;
	return 0;
}

static const char *fourcc(uint32_t f, char buf[5])
{
	for (int i = 0; i < 4; i++) {
		char c = (char)((f >> (8 * i)) & 0xff);

		buf[i] = (c >= 32 && c < 127) ? c : '.';
	}
	buf[4] = '\0';
	return buf;
}

/* viacamd's state file: the backend serving camera @id ("-" when none), its pid. */
static const char *state_source(uint32_t id, char *buf, size_t len)
{
	char line[256], name[64], backend[64];
	unsigned int cid;
	FILE *f = fopen(arg_state, "re");

	snprintf(buf, len, "-");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "camera %63s %u %63s", name, &cid, backend) == 3 && cid == id)
			snprintf(buf, len, "viacamd:%s:%s", name, backend);
	fclose(f);
	return buf;
}

static int state_pid(void)
{
	char line[256];
	int pid = -1, p;
	FILE *f = fopen(arg_state, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pid %d", &p) == 1)
			pid = p;
	fclose(f);
	return pid;
}

static void print_camera(const struct viacam_camera *c, int verbose)
{
	char fcc[5], src[160];

	printf("%u\t/dev/video%d\t/dev/video%d\t%s\t%s\t%s %ux%u %.4gfps\tconsumers=%u in=%" PRIu64
	       " out=%" PRIu64 " dropped=%" PRIu64 " repeated=%" PRIu64 "\t%s\n",
	       c->id, c->capture_nr, c->backend_nr, c->label,
	       (c->state & VIACAM_STATE_CAPTURE_STREAMING) ? "streaming" : "idle",
	       fourcc(c->pixelformat, fcc), c->width, c->height,
	       c->interval_num ? (double)c->interval_den / c->interval_num : 0.0,
	       c->consumers, (uint64_t)c->frames_in, (uint64_t)c->frames_out,
	       (uint64_t)c->frames_dropped, (uint64_t)c->frames_repeated,
	       state_source(c->id, src, sizeof(src)));
	if (verbose)
		printf("  timeout_ms=%u backend=%s declared=%s repeating=%s\n", c->timeout_ms,
		       (c->state & VIACAM_STATE_BACKEND_STREAMING) ? "streaming" : "idle",
		       (c->state & VIACAM_STATE_DECLARED) ? "yes" : "no",
		       (c->state & VIACAM_STATE_REPEATING) ? "yes" : "no");
}

static int cmd_version(int fd)
{
	struct viacam_version v = { 0 };

	if (xioctl(fd, VIACAM_IOC_VERSION, &v) < 0)
		return 1;
	printf("uapi %u.%u, %u of %u cameras\n", v.version >> 16, v.version & 0xffff, v.cameras,
	       v.max_cameras);
	return 0;
}

static int cmd_list(int fd)
{
	struct viacam_list l = { 0 };
	int rc = 0;

	if (xioctl(fd, VIACAM_IOC_LIST, &l) < 0)
		return 1;
	for (uint32_t i = 0; i < l.count && i < VIACAM_MAX_CAMERAS; i++) {
		struct viacam_camera c = { .id = l.ids[i] };

		if (ioctl(fd, VIACAM_IOC_QUERY, &c) < 0) {
			if (errno == ENOENT)	/* removed meanwhile */
				continue;
			rc = 1;
			fprintf(stderr, "viacamctl: %s: VIACAM_IOC_QUERY %u: %s\n", arg_device,
				l.ids[i], strerror(errno));
			continue;
		}
		print_camera(&c, 0);
	}
	return rc;
}

static int cmd_add(int fd, int argc, char **argv)
{
	static const struct option options[] = {
		{ "label", required_argument, NULL, 'l' },
		{ "id", required_argument, NULL, 'i' },
		{ "capture-nr", required_argument, NULL, 'c' },
		{ "backend-nr", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 't' },
		{}
	};
	struct viacam_camera c = {
		.id = VIACAM_ID_AUTO, .capture_nr = VIACAM_NR_AUTO, .backend_nr = VIACAM_NR_AUTO,
	};
	uint32_t v;
	int o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "l:i:c:b:t:", options, NULL)) >= 0) {
		switch (o) {
		case 'l':
			if (strlen(optarg) >= sizeof(c.label)) {
				fprintf(stderr, "viacamctl: label '%s' is longer than %zu characters\n",
					optarg, sizeof(c.label) - 1);
				return 2;
			}
			strcpy(c.label, optarg);
			break;
		case 'i':
			if (parse_u32(optarg, "id", &c.id) < 0)
				return 2;
			break;
		case 'c':
		case 'b':
			if (parse_u32(optarg, "node number", &v) < 0 || v > INT32_MAX)
				return 2;
			*(o == 'c' ? &c.capture_nr : &c.backend_nr) = (int32_t)v;
			break;
		case 't':
			if (parse_u32(optarg, "timeout", &c.timeout_ms) < 0)
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "viacamctl: add: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (xioctl(fd, VIACAM_IOC_ADD, &c) < 0)
		return 1;
	print_camera(&c, 0);
	return 0;
}

static int cmd_id(int fd, int argc, char **argv, unsigned long req)
{
	struct viacam_camera c = { 0 };

	if (argc != 2) {
		fprintf(stderr, "viacamctl: %s needs exactly one camera id\n", argv[0]);
		return 2;
	}
	if (parse_u32(argv[1], "camera id", &c.id) < 0)
		return 2;
	if (req == VIACAM_IOC_REMOVE)
		return xioctl(fd, VIACAM_IOC_REMOVE, &c) < 0 ? 1 : 0;
	if (xioctl(fd, VIACAM_IOC_QUERY, &c) < 0)
		return 1;
	print_camera(&c, 1);
	return 0;
}

static int cmd_reload(void)
{
	char path[64], comm[64] = "";
	int pid = state_pid();
	FILE *f;

	if (pid <= 0) {
		fprintf(stderr, "viacamctl: viacamd is not running (no pid in %s)\n", arg_state);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
	}
	if (strncmp(comm, "viacamd", 7) != 0) {
		fprintf(stderr, "viacamctl: viacamd is not running (pid %d in %s is gone)\n", pid,
			arg_state);
		return 1;
	}
	if (kill(pid, SIGHUP) < 0) {
		fprintf(stderr, "viacamctl: viacamd (pid %d): %s%s\n", pid, strerror(errno),
			errno == EPERM ? " (need root)" : "");
		return 1;
	}
	printf("viacamd (pid %d) reloads its configuration; its log says what changed\n", pid);
	return 0;
}

/* The capture node of CAMERA (an id, or a /dev/videoN path), opened. */
static int open_capture(const char *camera, char *path, size_t len)
{
	struct viacam_camera c = { 0 };
	int fd;

	if (camera[0] == '/') {
		snprintf(path, len, "%s", camera);
	} else {
		int ctl;

		if (parse_u32(camera, "camera id", &c.id) < 0)
			return -2;
		ctl = open_ctl();
		if (ctl < 0)
			return -1;
		if (xioctl(ctl, VIACAM_IOC_QUERY, &c) < 0) {
			close(ctl);
			return -1;
		}
		close(ctl);
		snprintf(path, len, "/dev/video%d", c.capture_nr);
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "viacamctl: %s: %s%s\n", path, strerror(errno),
			errno == EACCES ? " (need the video group)" : "");
	return fd;
}

/* Calls @fn for each control of @fd (not the class headings). */
static int for_each_ctrl(int fd, int (*fn)(int fd, const struct v4l2_query_ext_ctrl *q,
					   void *data), void *data)
{
	struct v4l2_query_ext_ctrl q = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };
	int rc = 0;

	while (ioctl(fd, VIDIOC_QUERY_EXT_CTRL, &q) == 0) {
		if (q.type != V4L2_CTRL_TYPE_CTRL_CLASS && !(q.flags & V4L2_CTRL_FLAG_DISABLED))
			rc |= fn(fd, &q, data);
		q.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
	}
	return rc;
}

struct ctrl_req {
	int argc;
	char **argv;
	int *found;
	const char *path;
};

static int get_value(int fd, uint32_t id, int64_t *v)
{
	struct v4l2_ext_control c = { .id = id };
	struct v4l2_ext_controls cs = { .which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1,
					.controls = &c };

	if (ioctl(fd, VIDIOC_G_EXT_CTRLS, &cs) < 0)
		return -errno;
	*v = c.value64;
	return 0;
}

static int print_ctrl(int fd, const struct v4l2_query_ext_ctrl *q, void *data)
{
	struct ctrl_req *r = data;
	char key[64];
	int64_t v = 0;
	int want = r->argc == 0;

	vc_ctrl_key_name(q->name, key, sizeof(key));
	for (int i = 0; i < r->argc; i++)
		if (!strcmp(r->argv[i], key)) {
			want = 1;
			r->found[i] = 1;
		}
	if (!want)
		return 0;
	if (get_value(fd, q->id, &v) < 0 && q->type != V4L2_CTRL_TYPE_BUTTON) {
		fprintf(stderr, "viacamctl: %s: VIDIOC_G_EXT_CTRLS %s: %s\n", r->path, key,
			strerror(errno));
		return 1;
	}
	printf("%s=%" PRId64 "\t(%" PRId64 "..%" PRId64 ", default %" PRId64 ")", key, v,
	       (int64_t)q->minimum, (int64_t)q->maximum, (int64_t)q->default_value);
	if (q->type == V4L2_CTRL_TYPE_MENU) {
		struct v4l2_querymenu m = { .id = q->id, .index = (uint32_t)v };

		if (ioctl(fd, VIDIOC_QUERYMENU, &m) == 0)
			printf("\t%s", (const char *)m.name);
	}
	printf("\n");
	return 0;
}

static int cmd_get(int argc, char **argv)
{
	char path[64];
	int found[64] = { 0 }, fd, rc;
	struct ctrl_req r = { argc - 2, argv + 2, found, path };

	if (argc < 2 || argc - 2 > 64) {
		fprintf(stderr, "viacamctl: get needs a camera (id or /dev/videoN) and at most 64 names\n");
		return 2;
	}
	fd = open_capture(argv[1], path, sizeof(path));
	if (fd < 0)
		return fd == -2 ? 2 : 1;
	rc = for_each_ctrl(fd, print_ctrl, &r);
	for (int i = 0; i < r.argc; i++)
		if (!found[i]) {
			fprintf(stderr, "viacamctl: %s: no control '%s'\n", path, r.argv[i]);
			rc = 1;
		}
	close(fd);
	return rc;
}

struct set_req {
	const char *name;
	int64_t value;
	uint32_t id;
};

static int find_ctrl(int fd, const struct v4l2_query_ext_ctrl *q, void *data)
{
	struct set_req *r = data;
	char key[64];

	(void)fd;
	vc_ctrl_key_name(q->name, key, sizeof(key));
	if (!strcmp(key, r->name))
		r->id = q->id;
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	char path[64];
	int fd, rc = 0;

	if (argc < 3) {
		fprintf(stderr, "viacamctl: set needs a camera (id or /dev/videoN) and NAME=VALUE...\n");
		return 2;
	}
	fd = open_capture(argv[1], path, sizeof(path));
	if (fd < 0)
		return fd == -2 ? 2 : 1;
	for (int i = 2; i < argc; i++) {
		char name[64], *eq = strchr(argv[i], '='), *end;
		struct set_req r = { name, 0, 0 };
		struct v4l2_ext_control c = { 0 };
		struct v4l2_ext_controls cs = { .which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1,
						.controls = &c };

		if (!eq || eq == argv[i] || (size_t)(eq - argv[i]) >= sizeof(name)) {
			fprintf(stderr, "viacamctl: '%s' is not NAME=VALUE\n", argv[i]);
			rc = 2;
			continue;
		}
		memcpy(name, argv[i], (size_t)(eq - argv[i]));
		name[eq - argv[i]] = 0;
		errno = 0;
		r.value = strtoll(eq + 1, &end, 0);
		if (errno || end == eq + 1 || *end) {
			fprintf(stderr, "viacamctl: %s: value '%s' is not an integer\n", name, eq + 1);
			rc = 2;
			continue;
		}
		for_each_ctrl(fd, find_ctrl, &r);
		if (!r.id) {
			fprintf(stderr, "viacamctl: %s: no control '%s'\n", path, name);
			rc = 1;
			continue;
		}
		c.id = r.id;
		c.value64 = r.value;
		c.value = (int32_t)r.value;
		if (ioctl(fd, VIDIOC_S_EXT_CTRLS, &cs) < 0) {
			fprintf(stderr, "viacamctl: %s: VIDIOC_S_EXT_CTRLS %s=%" PRId64 ": %s%s\n", path,
				name, r.value, strerror(errno),
				errno == ERANGE ? " (out of range; see viacamctl get)" : "");
			rc = 1;
		}
	}
	close(fd);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: viacamctl [-d DEVICE] [--state FILE] COMMAND [ARGS]\n"
		   "  version | list | query ID | remove ID | reload\n"
		   "  add [--label L] [--id N] [--capture-nr N] [--backend-nr N] [--timeout MS]\n"
		   "  get CAMERA [NAME...] | set CAMERA NAME=VALUE...   (CAMERA: id or /dev/videoN)\n");
}

int main(int argc, char **argv)
{
	int fd, rc, i = 1;

	while (i + 1 < argc && (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--state"))) {
		if (!strcmp(argv[i], "-d"))
			arg_device = argv[i + 1];
		else
			arg_state = argv[i + 1];
		i += 2;
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[i], "reload"))
		return cmd_reload();
	if (!strcmp(argv[i], "get"))
		return cmd_get(argc - i, argv + i);
	if (!strcmp(argv[i], "set"))
		return cmd_set(argc - i, argv + i);
	if (strcmp(argv[i], "version") && strcmp(argv[i], "list") && strcmp(argv[i], "add") &&
	    strcmp(argv[i], "remove") && strcmp(argv[i], "query")) {
		fprintf(stderr, "viacamctl: unknown command '%s'\n", argv[i]);
		return 2;
	}
	fd = open_ctl();
	if (fd < 0)
		return 1;
	if (!strcmp(argv[i], "version"))
		rc = cmd_version(fd);
	else if (!strcmp(argv[i], "list"))
		rc = cmd_list(fd);
	else if (!strcmp(argv[i], "add"))
		rc = cmd_add(fd, argc - i, argv + i);
	else
		rc = cmd_id(fd, argc - i, argv + i,
			    !strcmp(argv[i], "remove") ? VIACAM_IOC_REMOVE : VIACAM_IOC_QUERY);
	close(fd);
	return rc;
}
