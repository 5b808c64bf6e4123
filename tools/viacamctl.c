// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacamctl.c - manage viacam cameras through the bridge's control node.
 *
 * Usage: viacamctl [-d /dev/viacam] COMMAND [ARGS]
 *   version                       uapi version of the loaded module  [VIACAM_IOC_VERSION]
 *   list                          one line per camera                [VIACAM_IOC_LIST, _QUERY]
 *   add [--label L] [--id N] [--capture-nr N] [--backend-nr N] [--timeout MS] [--consumers N]
 *                                 create a camera (root)             [VIACAM_IOC_ADD]
 *   remove ID                     delete a camera (root)             [VIACAM_IOC_REMOVE]
 *   query ID                      every field of one camera          [VIACAM_IOC_QUERY]
 *   reload [--wait [--timeout S]] make viacamd re-read its configuration (SIGHUP); --wait:
 *                                 until it has, exit 1 if it rejected the file
 *   get CAMERA [NAME...]          controls of a camera (all, or the named ones)
 *                                                          [VIDIOC_QUERY_EXT_CTRL, G_EXT_CTRLS]
 *   set CAMERA NAME=VALUE...      set controls               [VIDIOC_S_EXT_CTRLS]
 * CAMERA is a camera id or its capture node (/dev/videoN); control NAMEs are spelt as
 * v4l2-ctl spells them (brightness, horizontal_flip). `list` shows which viacamd backend
 * serves each camera, from viacamd's state file (--state FILE, default /run/viacamd/cameras).
 * `viacamctl COMMAND --help` (or `help COMMAND`) explains one command, --version prints the
 * tools' version. Exit status: 0 on success, 1 when a call failed, 2 on a usage error.
 *
 * Every argument is parsed and checked (parse_request) before any device is opened, so a
 * usage error is never hidden behind a device's error. A node is checked for what it must be:
 * /dev/viacam answers VIACAM_IOC_VERSION, a CAMERA node is a viacam capture node.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/viacam.h>

#include "ctrlname.h"
#include "statefile.h"
#include "text.h"
#include "version.h"

static const char *arg_device = "/dev/viacam";
static const char *arg_state = "/run/viacamd/cameras";

#define MAX_NAMES 64		/* control names of one get or set */
#define DRIVER "viacam"		/* the bridge's QUERYCAP driver name */

/* A parsed command line, complete before anything is opened. */
struct request {
	const char *cmd;
	struct viacam_camera cam;	/* add: what to create; remove, query: .id */
	const char *camera;	/* get, set: an id or a /dev/videoN path */
	uint32_t camera_id;	/* get, set: when camera is an id */
	const char *names[MAX_NAMES];	/* get: the controls to show (none: all) */
	int nnames;
	struct {
		char name[64];
		int64_t value;
	} sets[MAX_NAMES];	/* set: NAME=VALUE */
	int nsets;
	bool wait;	/* reload: until viacamd has reloaded */
	unsigned int wait_s;	/* reload --wait: for at most this long */
};

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

/* Opens /dev/viacam (or -d DEVICE) and checks that it is the bridge's control node. */
static int open_ctl(void)
{
	struct viacam_version v = { 0 };
	int fd = open(arg_device, O_RDWR | O_CLOEXEC), e;

	if (fd < 0) {
		e = errno;
		fprintf(stderr, "viacamctl: %s: %s%s\n", arg_device, strerror(e),
			e == ENOENT ? " (is the viacam module loaded?)" :
			e == EACCES ? " (need root)" : "");
		return -1;
	}
	if (ioctl(fd, VIACAM_IOC_VERSION, &v) < 0) {
		e = errno;
		fprintf(stderr, "viacamctl: %s: not the viacam control node (VIACAM_IOC_VERSION: %s)\n",
			arg_device, strerror(e));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A number in decimal digits, at most @max; no sign, no blanks, no 0x. Decimal only: with
 * base 0, "010" was 8 and "09" invalid.
 */
static int parse_num(const char *s, const char *what, uint32_t max, uint32_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || errno || *end || v > max) {
		char esc[128];

		fprintf(stderr, "viacamctl: invalid %s '%s'\n", what,
			vc_escape(esc, sizeof(esc), s, strlen(s)));
		return -EINVAL;
	}
	*ret = (uint32_t)v;
	return 0;
}

static int parse_u32(const char *s, const char *what, uint32_t *ret)
{
	return parse_num(s, what, UINT32_MAX, ret);
}

/* viacamd's state file (lib/statefile.h), read afresh each time. */
static struct vc_state state;

/* The backend serving camera @id ("-" when none). */
static const char *state_source(uint32_t id, char *buf, size_t len)
{
	const char *name = NULL, *backend;

	vc_state_read(arg_state, &state);
	backend = vc_state_backend_of(&state, id, &name);
	if (backend)
		snprintf(buf, len, "viacamd:%s:%s", name, backend);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* viacamd's pid from its state file: -1 when it has none, -2 after saying why it cannot be read. */
static int state_pid(void)
{
	int r = vc_state_read(arg_state, &state);

	if (r < 0 && r != -ENOENT) {
		fprintf(stderr, "viacamctl: %s: cannot read: %s\n", arg_state,
			r == -EINVAL ? "not a regular file" : strerror(-r));
		return -2;
	}
	return state.pid;
}

/* viacamd's reload counters and the first problem of its last rejected reload. */
static bool state_reloads(unsigned long *applied, unsigned long *rejected, char *why, size_t len)
{
	vc_state_read(arg_state, &state);
	if (why && len)
		snprintf(why, len, "%s", state.rejected_why);
	if (!state.have_reloads)
		return false;
	*applied = state.reloads_applied;
	*rejected = state.reloads_rejected;
	return true;
}

static void print_camera(const struct viacam_camera *c, int verbose)
{
	char fcc[5], src[160], label[sizeof(c->label) * 4];

	/* The bridge takes any label from root: shown escaped (text.h). */
	vc_escape(label, sizeof(label), c->label, strnlen(c->label, sizeof(c->label)));
	printf("%u\t/dev/video%d\t/dev/video%d\t%s\t%s\t%s %ux%u %.4gfps\tconsumers=%u in=%" PRIu64
	       " out=%" PRIu64 " dropped=%" PRIu64 " repeated=%" PRIu64 "\t%s\n",
	       c->id, c->capture_nr, c->backend_nr, label,
	       (c->state & VIACAM_STATE_CAPTURE_STREAMING) ? "streaming" : "idle",
	       vc_fourcc_str(c->pixelformat, fcc), c->width, c->height,
	       c->interval_num ? (double)c->interval_den / c->interval_num : 0.0,
	       c->consumers, (uint64_t)c->frames_in, (uint64_t)c->frames_out,
	       (uint64_t)c->frames_dropped, (uint64_t)c->frames_repeated,
	       state_source(c->id, src, sizeof(src)));
	if (verbose)
		printf("  timeout_ms=%u backend=%s declared=%s repeating=%s\n", c->timeout_ms,
		       (c->state & VIACAM_STATE_BACKEND_STREAMING) ? "streaming" : "idle",
		       (c->state & VIACAM_STATE_DECLARED) ? "yes" : "no",
		       (c->state & VIACAM_STATE_REPEATING) ? "yes" : "no");
	for (uint32_t i = 1; verbose && i < c->capture_count && i < VIACAM_MAX_CAPTURES; i++)
		printf("  capture node %u: /dev/video%d\n", i + 1, c->capture_nrs[i - 1]);
}

/* ---------------------------------------------------------------------------
 * Parsing (nothing is opened here)
 */

/* After a command's options: anything left over is an error (exit status 2). */
static int no_more_args(const char *cmd, int argc, char **argv)
{
	char esc[256];

	if (optind >= argc)
		return 0;
	fprintf(stderr, "viacamctl: %s: unexpected argument '%s'\n", cmd,
		vc_escape(esc, sizeof(esc), argv[optind], strlen(argv[optind])));
	return 2;
}

static int parse_add(int argc, char **argv, struct request *rq)
{
	static const struct option options[] = {
		{ "label", required_argument, NULL, 'l' },
		{ "id", required_argument, NULL, 'i' },
		{ "capture-nr", required_argument, NULL, 'c' },
		{ "backend-nr", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 't' },
		{ "consumers", required_argument, NULL, 'n' },
		{}
	};
	struct viacam_camera *c = &rq->cam;
	const char *problem;
	char esc[256];
	uint32_t v;
	int o;

	*c = (struct viacam_camera){
		.id = VIACAM_ID_AUTO, .capture_nr = VIACAM_NR_AUTO, .backend_nr = VIACAM_NR_AUTO,
	};
	optind = 1;
	while ((o = getopt_long(argc, argv, "l:i:c:b:t:n:", options, NULL)) >= 0) {
		switch (o) {
		case 'l':
			/* The label is the capture node's card name: printable UTF-8, never cut. */
			problem = vc_text_problem(optarg, strlen(optarg));
			if (problem) {
				vc_escape(esc, sizeof(esc), optarg, strlen(optarg));
				fprintf(stderr, "viacamctl: label '%s' %s\n", esc, problem);
				return 2;
			}
			if (strlen(optarg) >= sizeof(c->label)) {
				fprintf(stderr, "viacamctl: label is too long (%zu bytes; at most %zu)\n",
					strlen(optarg), sizeof(c->label) - 1);
				return 2;
			}
			strcpy(c->label, optarg);
			break;
		/* The bridge's limits (viacam_check_add): known here, before anything opens. */
		case 'i':
			if (parse_num(optarg, "id", VIACAM_MAX_CAMERAS - 1, &c->id) < 0)
				return 2;
			break;
		case 'c':
		case 'b':
			if (parse_num(optarg, "node number", 255, &v) < 0)
				return 2;
			*(o == 'c' ? &c->capture_nr : &c->backend_nr) = (int32_t)v;
			break;
		case 't':
			if (parse_num(optarg, "timeout", VIACAM_MAX_TIMEOUT_MS, &c->timeout_ms) < 0)
				return 2;
			break;
		case 'n':
			if (parse_num(optarg, "consumers", VIACAM_MAX_CAPTURES, &c->capture_count) < 0)
				return 2;
			if (!c->capture_count) {
				fprintf(stderr, "viacamctl: consumers must be 1-%d\n", VIACAM_MAX_CAPTURES);
				return 2;
			}
			break;
		default:	/* getopt said what */
			return 2;
		}
	}
	if (no_more_args("add", argc, argv))
		return 2;
	return 0;
}

/* CAMERA: an id (checked now) or a node path (opened later). */
static int parse_camera(const char *camera, struct request *rq)
{
	rq->camera = camera;
	if (camera[0] == '/')
		return 0;
	return parse_u32(camera, "camera id", &rq->camera_id) < 0 ? 2 : 0;
}

static int parse_set(int argc, char **argv, struct request *rq)
{
	char esc[256];

	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '='), *end;
		size_t len = eq ? (size_t)(eq - argv[i]) : 0;

		if (!eq || !len || len >= sizeof(rq->sets[0].name)) {
			fprintf(stderr, "viacamctl: '%s' is not NAME=VALUE\n",
				vc_escape(esc, sizeof(esc), argv[i], strlen(argv[i])));
			return 2;
		}
		memcpy(rq->sets[rq->nsets].name, argv[i], len);
		rq->sets[rq->nsets].name[len] = 0;
		errno = 0;
		/* decimal, an optional '-': strtoll() alone takes blanks and '+' too */
		rq->sets[rq->nsets].value = strtoll(eq + 1, &end, 10);
		if (errno || end == eq + 1 || *end ||
		    !(isdigit((unsigned char)eq[1]) ||
		      (eq[1] == '-' && isdigit((unsigned char)eq[2])))) {
			fprintf(stderr, "viacamctl: %s: value '%s' is not an integer\n",
				vc_escape(esc, sizeof(esc), rq->sets[rq->nsets].name, len),
				eq + 1);
			return 2;
		}
		rq->nsets++;
	}
	return 0;
}

static int parse_reload(int argc, char **argv, struct request *rq)
{
	static const struct option options[] = {
		{ "wait", no_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{}
	};
	bool timeout_set = false;
	uint32_t v;
	int o;

	rq->wait_s = 30;
	optind = 1;
	while ((o = getopt_long(argc, argv, "wt:", options, NULL)) >= 0) {
		switch (o) {
		case 'w':
			rq->wait = true;
			break;
		case 't':
			if (parse_num(optarg, "timeout", 3600, &v) < 0)
				return 2;
			if (v == 0) {
				fprintf(stderr, "viacamctl: reload: --timeout is 1 to 3600 seconds\n");
				return 2;
			}
			rq->wait_s = v;
			timeout_set = true;
			break;
		default:	/* getopt said what */
			return 2;
		}
	}
	if (no_more_args("reload", argc, argv))
		return 2;
	if (timeout_set && !rq->wait) {
		fprintf(stderr, "viacamctl: reload: --timeout goes with --wait\n");
		return 2;
	}
	return 0;
}

static int no_args(int argc, char **argv)
{
	if (argc == 1)
		return 0;
	fprintf(stderr, "viacamctl: %s takes no arguments\n", argv[0]);
	return 2;
}

/* Checks the command and its arguments (@argv[0] is the command). 0, or 2 after a message. */
static int parse_request(int argc, char **argv, struct request *rq)
{
	const char *cmd = argv[0];
	char esc[128];

	rq->cmd = cmd;
	if (!strcmp(cmd, "version") || !strcmp(cmd, "list"))
		return no_args(argc, argv);
	if (!strcmp(cmd, "reload"))
		return parse_reload(argc, argv, rq);
	if (!strcmp(cmd, "add"))
		return parse_add(argc, argv, rq);
	if (!strcmp(cmd, "remove") || !strcmp(cmd, "query")) {
		if (argc != 2) {
			fprintf(stderr, "viacamctl: %s needs exactly one camera id\n", cmd);
			return 2;
		}
		return parse_u32(argv[1], "camera id", &rq->cam.id) < 0 ? 2 : 0;
	}
	if (!strcmp(cmd, "get")) {
		if (argc < 2 || argc - 2 > MAX_NAMES) {
			fprintf(stderr, "viacamctl: get needs a camera (id or /dev/videoN) and at most %d names\n",
				MAX_NAMES);
			return 2;
		}
		for (int i = 2; i < argc; i++)
			rq->names[rq->nnames++] = argv[i];
		return parse_camera(argv[1], rq);
	}
	if (!strcmp(cmd, "set")) {
		if (argc < 3 || argc - 2 > MAX_NAMES) {
			fprintf(stderr, "viacamctl: set needs a camera (id or /dev/videoN) and 1-%d NAME=VALUE\n",
				MAX_NAMES);
			return 2;
		}
		if (parse_camera(argv[1], rq))
			return 2;
		return parse_set(argc - 2, argv + 2, rq);
	}
	fprintf(stderr, "viacamctl: unknown command '%s'\n",
		vc_escape(esc, sizeof(esc), cmd, strlen(cmd)));
	return 2;
}

/* ---------------------------------------------------------------------------
 * Commands on /dev/viacam
 */

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

static int cmd_add(int fd, struct request *rq)
{
	if (xioctl(fd, VIACAM_IOC_ADD, &rq->cam) < 0)
		return 1;
	print_camera(&rq->cam, 0);
	return 0;
}

static int cmd_remove(int fd, struct request *rq)
{
	return xioctl(fd, VIACAM_IOC_REMOVE, &rq->cam) < 0 ? 1 : 0;
}

static int cmd_query(int fd, struct request *rq)
{
	if (xioctl(fd, VIACAM_IOC_QUERY, &rq->cam) < 0)
		return 1;
	print_camera(&rq->cam, 1);
	return 0;
}

/*
 * Whether @pid is viacamd: its program (/proc/PID/exe) is named exactly "viacamd" (with
 * " (deleted)" after an upgrade replaced it), and every uid of it (real, effective, saved,
 * file system) is root's or the caller's, who could signal it anyway. Says why not. A name
 * starting with "viacamd" was enough: a forged state file made root's viacamctl signal a
 * nobody-owned viacamd-impostor.
 */
static bool is_viacamd(int pid)
{
	char p[64], exe[PATH_MAX], esc[256], line[256];
	unsigned int uid[4];
	const char *name;
	bool uids = false;
	ssize_t n;
	size_t len;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/exe", pid);
	n = readlink(p, exe, sizeof(exe) - 1);
	if (n < 0) {
		if (errno == ENOENT || errno == ESRCH)
			fprintf(stderr, "viacamctl: viacamd is not running (pid %d in %s is gone)\n",
				pid, arg_state);
		else
			fprintf(stderr, "viacamctl: cannot check pid %d in %s: %s: %s%s\n", pid,
				arg_state, p, strerror(errno), errno == EACCES ? " (need root)" : "");
		return false;
	}
	exe[n] = 0;
	len = strlen(exe);
	if (len > 10 && !strcmp(exe + len - 10, " (deleted)"))
		exe[len - 10] = 0;
	name = strrchr(exe, '/');
	name = name ? name + 1 : exe;
	if (strcmp(name, "viacamd")) {
		fprintf(stderr, "viacamctl: pid %d in %s is not viacamd (its program is '%s'); not signalling it\n",
			pid, arg_state, vc_escape(esc, sizeof(esc), exe, strlen(exe)));
		return false;
	}
	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	f = fopen(p, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u %u %u", &uid[0], &uid[1], &uid[2], &uid[3]) == 4)
			uids = true;
	if (f)
		fclose(f);
	if (!uids) {
		fprintf(stderr, "viacamctl: cannot check pid %d in %s: %s has no Uid line\n", pid,
			arg_state, p);
		return false;
	}
	for (int i = 0; i < 4; i++) {
		if (uid[i] && uid[i] != getuid()) {
			fprintf(stderr, "viacamctl: pid %d in %s is not root's viacamd: it runs as uid %u; not signalling it\n",
				pid, arg_state, uid[i]);
			return false;
		}
	}
	return true;
}

/*
 * Signals go through a pidfd where the kernel has them (5.3): opened before the checks, it
 * names the process they checked, or one that is gone (the signal fails) - never a process
 * that got the pid meanwhile.
 */
static int pidfd_open_(int pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int signal_pid(int pidfd, int pid, int sig)
{
#ifdef SYS_pidfd_send_signal
	if (pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#endif
	return kill(pid, sig);
}

/* Waits 50 ms; false if the process ended (the pidfd is readable then). */
static bool still_runs(int pidfd, int pid)
{
	struct pollfd pf = { .fd = pidfd, .events = POLLIN };

	if (pidfd >= 0)
		return poll(&pf, 1, 50) <= 0;
	usleep(50000);
	return !(kill(pid, 0) < 0 && errno == ESRCH);
}

static int cmd_reload(const struct request *rq)
{
	unsigned long applied = 0, rejected = 0, a, r;
	int pid = state_pid(), pidfd, rc = 1;
	char why[512];

	if (pid == -2)
		return 1;
	if (pid <= 0) {
		fprintf(stderr, "viacamctl: viacamd is not running (no pid in %s)\n", arg_state);
		return 1;
	}
	pidfd = pidfd_open_(pid);
	if (pidfd < 0 && errno == ESRCH) {
		fprintf(stderr, "viacamctl: viacamd is not running (pid %d in %s is gone)\n", pid,
			arg_state);
		return 1;
	}
	if (!is_viacamd(pid))
		goto out;
	if (rq->wait && !state_reloads(&applied, &rejected, NULL, 0)) {
		fprintf(stderr, "viacamctl: %s has no reload count (a viacamd older than this viacamctl?)\n",
			arg_state);
		goto out;
	}
	if (signal_pid(pidfd, pid, SIGHUP) < 0) {
		if (errno == ESRCH)
			fprintf(stderr, "viacamctl: viacamd is not running (pid %d in %s is gone)\n",
				pid, arg_state);
		else
			fprintf(stderr, "viacamctl: viacamd (pid %d): %s%s\n", pid, strerror(errno),
				errno == EPERM ? " (need root)" : "");
		goto out;
	}
	if (!rq->wait) {
		printf("viacamd (pid %d) reloads its configuration; its log says what changed\n", pid);
		rc = 0;
		goto out;
	}
	/*
	 * The first reload to end after the signal answers (viacamd also reloads when the file is
	 * saved: that one read the same file, or an older one if the editor is still writing).
	 */
	for (unsigned int i = 0; i < rq->wait_s * 20; i++) {
		bool runs = still_runs(pidfd, pid);

		if (!state_reloads(&a, &r, why, sizeof(why)) || (a == applied && r == rejected)) {
			if (!runs) {
				fprintf(stderr, "viacamctl: viacamd (pid %d) ended before it reloaded\n", pid);
				goto out;
			}
			continue;
		}
		if (r != rejected) {
			fprintf(stderr, "viacamctl: viacamd rejected its configuration and keeps the running one: %s\n",
				why[0] ? why : "(no reason given; see its log)");
			goto out;
		}
		printf("viacamd (pid %d) applied its configuration; its log says what changed\n", pid);
		rc = 0;
		goto out;
	}
	fprintf(stderr, "viacamctl: viacamd (pid %d) did not finish reloading within %u s\n", pid,
		rq->wait_s);
out:
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}

/* ---------------------------------------------------------------------------
 * Controls on a capture node
 */

/* Checks that @fd (@path) is a viacam capture node; says what it is otherwise. */
static int check_capture_node(int fd, const char *path)
{
	struct v4l2_capability cap = { 0 };
	char card[sizeof(cap.card) * 4], driver[sizeof(cap.driver) * 4];
	uint32_t caps;

	if (ioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
		fprintf(stderr, "viacamctl: %s: not a V4L2 device (VIDIOC_QUERYCAP: %s)\n", path,
			strerror(errno));
		return -1;
	}
	vc_escape(driver, sizeof(driver), (const char *)cap.driver,
		  strnlen((const char *)cap.driver, sizeof(cap.driver)));
	vc_escape(card, sizeof(card), (const char *)cap.card,
		  strnlen((const char *)cap.card, sizeof(cap.card)));
	if (strcmp(driver, DRIVER) != 0) {
		fprintf(stderr, "viacamctl: %s: not a viacam node (driver '%s', card '%s')\n", path,
			driver, card);
		return -1;
	}
	caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
	if (!(caps & V4L2_CAP_VIDEO_CAPTURE)) {
		fprintf(stderr, "viacamctl: %s: a viacam backend node ('%s'); controls are on the capture node\n",
			path, card);
		return -1;
	}
	return 0;
}

/* The capture node of rq->camera (an id, or a /dev/videoN path), opened and checked. */
static int open_capture(const struct request *rq, char *path, size_t len)
{
	struct viacam_camera c = { .id = rq->camera_id };
	int fd, ctl;

	if (rq->camera[0] == '/') {
		snprintf(path, len, "%s", rq->camera);
	} else {
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
	/* Non-blocking: a FIFO or a terminal given as CAMERA must not hang the open. */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		fprintf(stderr, "viacamctl: %s: %s%s\n", path, strerror(errno),
			errno == EACCES ? " (need the video group)" : "");
		return -1;
	}
	if (check_capture_node(fd, path) < 0) {
		close(fd);
		return -1;
	}
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
	const struct request *rq;
	int *found;
	const char *path;
};

static int get_value(int fd, uint32_t id, uint32_t type, int64_t *v)
{
	struct v4l2_ext_control c = { .id = id };
	struct v4l2_ext_controls cs = { .which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1,
					.controls = &c };

	if (ioctl(fd, VIDIOC_G_EXT_CTRLS, &cs) < 0)
		return -errno;
	*v = vc_ctrl_ext_value(type, &c);
	return 0;
}

static int print_ctrl(int fd, const struct v4l2_query_ext_ctrl *q, void *data)
{
	struct ctrl_req *r = data;
	char key[64];
	int64_t v = 0;
	int want = r->rq->nnames == 0;

	vc_ctrl_key_name(q->name, key, sizeof(key));
	for (int i = 0; i < r->rq->nnames; i++)
		if (!strcmp(r->rq->names[i], key)) {
			want = 1;
			r->found[i] = 1;
		}
	if (!want)
		return 0;
	if (get_value(fd, q->id, q->type, &v) < 0 && q->type != V4L2_CTRL_TYPE_BUTTON) {
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

static int cmd_get(const struct request *rq)
{
	char path[PATH_MAX], esc[256];
	int found[MAX_NAMES] = { 0 }, fd, rc;
	struct ctrl_req r = { rq, found, path };

	fd = open_capture(rq, path, sizeof(path));
	if (fd < 0)
		return 1;
	rc = for_each_ctrl(fd, print_ctrl, &r);
	for (int i = 0; i < rq->nnames; i++)
		if (!found[i]) {
			fprintf(stderr, "viacamctl: %s: no control '%s'\n", path,
				vc_escape(esc, sizeof(esc), rq->names[i], strlen(rq->names[i])));
			rc = 1;
		}
	close(fd);
	return rc;
}

struct set_req {
	const char *name;
	uint32_t id;
	uint32_t type;
};

static int find_ctrl(int fd, const struct v4l2_query_ext_ctrl *q, void *data)
{
	struct set_req *r = data;
	char key[64];

	(void)fd;
	vc_ctrl_key_name(q->name, key, sizeof(key));
	if (!strcmp(key, r->name)) {
		r->id = q->id;
		r->type = q->type;
	}
	return 0;
}

static int cmd_set(const struct request *rq)
{
	char path[PATH_MAX], esc[256];
	int fd, rc = 0;

	fd = open_capture(rq, path, sizeof(path));
	if (fd < 0)
		return 1;
	for (int i = 0; i < rq->nsets; i++) {
		const char *name = rq->sets[i].name;
		int64_t value = rq->sets[i].value;
		struct set_req r = { name, 0, 0 };
		struct v4l2_ext_control c = { 0 };
		struct v4l2_ext_controls cs = { .which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1,
						.controls = &c };

		vc_escape(esc, sizeof(esc), name, strlen(name));
		for_each_ctrl(fd, find_ctrl, &r);
		if (!r.id) {
			fprintf(stderr, "viacamctl: %s: no control '%s'\n", path, esc);
			rc = 1;
			continue;
		}
		c.id = r.id;
		if (vc_ctrl_set_ext_value(r.type, value, &c) < 0) {
			fprintf(stderr, "viacamctl: %s: %s=%" PRId64 ": out of range for a 32-bit control (see viacamctl get)\n",
				path, esc, value);
			rc = 1;
			continue;
		}
		if (ioctl(fd, VIDIOC_S_EXT_CTRLS, &cs) < 0) {
			fprintf(stderr, "viacamctl: %s: VIDIOC_S_EXT_CTRLS %s=%" PRId64 ": %s%s\n", path,
				esc, value, strerror(errno),
				errno == ERANGE ? " (out of range; see viacamctl get)" : "");
			rc = 1;
		}
	}
	close(fd);
	return rc;
}

/* Each command: its synopsis and what it does (`viacamctl COMMAND --help`). */
static const struct command {
	const char *name, *synopsis, *text;
} commands[] = {
	{ "version", "version", "Print the uapi version of the loaded bridge module." },
	{ "list", "list", "One line per camera: id, nodes, label, consumers and state, and the\n"
	  "viacamd backend serving it (from viacamd's state file, --state)." },
	{ "query", "query ID", "Print every field of camera ID." },
	{ "add", "add [--label L] [--id N] [--capture-nr N] [--backend-nr N] [--timeout MS] [--consumers N]",
	  "Create a camera (root). --id 0-63, node numbers 0-255, --timeout 0-60000 ms (repeat\n"
	  "the last frame after this long without a new one; 0: the module's default),\n"
	  "--consumers 1-8 capture nodes (one application streams each; default 1)." },
	{ "remove", "remove ID", "Delete camera ID (root); its consumers get ENODEV." },
	{ "reload", "reload [--wait [--timeout S]]",
	  "Make viacamd re-read its configuration (SIGHUP to the pid in its state file).\n"
	  "--wait: until it has (at most S seconds, default 30); exit 1 if it rejected the file\n"
	  "(the first problem is printed; its log has them all). viacamd.service's ExecReload." },
	{ "get", "get CAMERA [NAME...]", "Show a camera's controls (all, or the named ones) with\n"
	  "their ranges. CAMERA: a camera id or its capture node (/dev/videoN)." },
	{ "set", "set CAMERA NAME=VALUE...", "Set controls. NAME as v4l2-ctl spells it\n"
	  "(brightness, horizontal_flip); VALUE an integer." },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: viacamctl [-d DEVICE] [--state FILE] COMMAND [ARGS]\n"
		   "       viacamctl --help | --version | COMMAND --help\n"
		   "Manage viacam cameras through the bridge's control node (default /dev/viacam).\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s\n", commands[i].synopsis);
	fprintf(f, "\nExit status: 0 success, 1 a call failed, 2 a usage error.\n");
}

static void command_help(const struct command *c)
{
	printf("Usage: viacamctl [-d DEVICE] [--state FILE] %s\n%s\n", c->synopsis, c->text);
}

/*
 * "COMMAND ... --help" or "-h" after the command, but not as the value of an option of add
 * (`add --label --help` names a camera "--help").
 */
static bool wants_help(int argc, char **argv)
{
	bool add = !strcmp(argv[0], "add");

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
		if (add && argv[i][0] == '-' && !strchr(argv[i], '=') &&
		    (strlen(argv[i]) == 2 || argv[i][1] == '-'))
			i++;	/* its value */
	}
	return false;
}

int main(int argc, char **argv)
{
	struct request rq = { 0 };
	int fd, rc, i = 1;

	while (i < argc && (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--state"))) {
		if (i + 1 >= argc) {
			fprintf(stderr, "viacamctl: %s needs %s\n", argv[i],
				argv[i][1] == 'd' ? "a device" : "a file");
			usage(stderr);
			return 2;
		}
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
	if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") ||
	    (!strcmp(argv[i], "help") && i + 1 >= argc)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
		printf("viacamctl %s (bridge uapi %d.%d)\n", VIACAM_VERSION,
		       VIACAM_UAPI_VERSION_MAJOR, VIACAM_UAPI_VERSION_MINOR);
		return 0;
	}
	if (!strcmp(argv[i], "help") || find_command(argv[i])) {
		bool topic = !strcmp(argv[i], "help");
		const struct command *c = find_command(argv[topic ? i + 1 : i]);
		char esc[128];

		if (topic && (!c || i + 2 < argc)) {
			fprintf(stderr, "viacamctl: help: unknown command '%s'\n",
				vc_escape(esc, sizeof(esc), argv[i + 1], strlen(argv[i + 1])));
			return 2;
		}
		if (topic || wants_help(argc - i, argv + i)) {
			command_help(c);
			return 0;
		}
	}
	/* Everything is checked before anything is opened. */
	rc = parse_request(argc - i, argv + i, &rq);
	if (rc)
		return rc;
	if (!strcmp(rq.cmd, "reload"))
		return cmd_reload(&rq);
	if (!strcmp(rq.cmd, "get"))
		return cmd_get(&rq);
	if (!strcmp(rq.cmd, "set"))
		return cmd_set(&rq);
	fd = open_ctl();
	if (fd < 0)
		return 1;
	if (!strcmp(rq.cmd, "version"))
		rc = cmd_version(fd);
	else if (!strcmp(rq.cmd, "list"))
		rc = cmd_list(fd);
	else if (!strcmp(rq.cmd, "add"))
		rc = cmd_add(fd, &rq);
	else if (!strcmp(rq.cmd, "remove"))
		rc = cmd_remove(fd, &rq);
	else
		rc = cmd_query(fd, &rq);
	close(fd);
	return rc;
}
