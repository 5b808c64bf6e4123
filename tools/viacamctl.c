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
 * Exit status: 0 on success, 1 when a call failed, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "viacam.h"

static const char *arg_device = "/dev/viacam";

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

static void print_camera(const struct viacam_camera *c, int verbose)
{
	char fcc[5];

	printf("%u\t/dev/video%d\t/dev/video%d\t%s\t%s\t%s %ux%u@%u/%u\tconsumers=%u in=%" PRIu64
	       " out=%" PRIu64 " dropped=%" PRIu64 " repeated=%" PRIu64 "\n",
	       c->id, c->capture_nr, c->backend_nr, c->label,
	       (c->state & VIACAM_STATE_CAPTURE_STREAMING) ? "streaming" : "idle",
	       fourcc(c->pixelformat, fcc), c->width, c->height, c->interval_num, c->interval_den,
	       c->consumers, (uint64_t)c->frames_in, (uint64_t)c->frames_out,
	       (uint64_t)c->frames_dropped, (uint64_t)c->frames_repeated);
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

static void usage(FILE *f)
{
	fprintf(f, "Usage: viacamctl [-d DEVICE] COMMAND [ARGS]\n"
		   "  version | list | query ID | remove ID\n"
		   "  add [--label L] [--id N] [--capture-nr N] [--backend-nr N] [--timeout MS]\n");
}

int main(int argc, char **argv)
{
	int fd, rc, i = 1;

	if (i + 1 < argc && strcmp(argv[i], "-d") == 0) {
		arg_device = argv[i + 1];
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
