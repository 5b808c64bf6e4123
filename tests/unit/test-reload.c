// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-reload.c - what an applied reload says about the cameras it removes, and a gst
 * camera whose worker process is killed while it streams, with sessions
 * that run against a stand-in for the bridge. The whole test is built with
 * tests/fuzz/fuzz-session-shim.h (test-reload_CFLAGS in the Makefile), so the ioctl(), open(),
 * mmap() and munmap() calls of daemon.c and session.c on the control node and the backend
 * nodes come to the fuzz_* functions below; every other file and fd is the system's. The
 * stand-in gives each camera the next id and node numbers, answers what a session asks to
 * declare and to stream, and records REMOVE.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/videodev2.h>
#include <linux/viacam.h>

#include "daemon.h"
#include "offer.h"
#include "session.h"
#include "worker.h"

#define FAKE_CAMS 4
#define FAKE_BUFS 4

static struct {
	int ctl_fd;
	unsigned int ncams;
	struct {
		uint32_t id;
		int capture_nr, backend_nr;
		int node_fd;	/* an eventfd: pollable, like the node */
		struct viacam_format fmt;	/* what its consumer streams */
		void *map[FAKE_BUFS];
		size_t buflen;
		bool removed;
		unsigned long qbufs;	/* frames the session handed to the bridge */
		uint32_t queued[FAKE_BUFS], nqueued;	/* QBUF'd, given back by DQBUF */
	} cam[FAKE_CAMS];
} fk;

static int fail_with(int e)
{
	errno = e;
	return -1;
}

static int cam_of_node(int fd)
{
	for (unsigned int i = 0; i < fk.ncams; i++)
		if (fk.cam[i].node_fd == fd)
			return (int)i;
	return -1;
}

static int fake_node_ioctl(unsigned int i, unsigned long req, void *arg)
{
	const struct viacam_format *m = &fk.cam[i].fmt;

	switch (req) {
	case VIDIOC_SUBSCRIBE_EVENT:
	case VIACAM_IOC_S_INFO:
	case VIACAM_IOC_S_FORMATS:
	case VIACAM_IOC_S_CTRLS:
	case VIDIOC_STREAMON:
	case VIDIOC_STREAMOFF:
		return 0;
	case VIDIOC_QBUF:
		fk.cam[i].qbufs++;
		if (fk.cam[i].nqueued < FAKE_BUFS)
			fk.cam[i].queued[fk.cam[i].nqueued++] = ((struct v4l2_buffer *)arg)->index;
		return 0;
	case VIDIOC_DQBUF:	/* the bridge took the frame: the buffer is the session's again */
		if (!fk.cam[i].nqueued)
			return fail_with(EAGAIN);
		((struct v4l2_buffer *)arg)->index = fk.cam[i].queued[0];
		memmove(fk.cam[i].queued, fk.cam[i].queued + 1,
			--fk.cam[i].nqueued * sizeof(fk.cam[i].queued[0]));
		return 0;
	case VIDIOC_G_FMT:
	case VIDIOC_S_FMT: {
		struct v4l2_pix_format *pix = &((struct v4l2_format *)arg)->fmt.pix;

		memset(pix, 0, sizeof(*pix));
		pix->pixelformat = m->pixelformat;
		pix->width = m->width;
		pix->height = m->height;
		pix->bytesperline = vc_bytesperline(m->pixelformat, m->width);
		pix->sizeimage = vc_sizeimage(m->pixelformat, m->width, m->height);
		pix->field = V4L2_FIELD_NONE;
		return 0;
	}
	case VIDIOC_REQBUFS: {
		struct v4l2_requestbuffers *rb = arg;

		if (rb->count > FAKE_BUFS)
			rb->count = FAKE_BUFS;
		fk.cam[i].buflen = vc_sizeimage(m->pixelformat, m->width, m->height);
		return 0;
	}
	case VIDIOC_QUERYBUF: {
		struct v4l2_buffer *b = arg;

		if (b->index >= FAKE_BUFS)
			return fail_with(EINVAL);
		b->length = (uint32_t)fk.cam[i].buflen;
		b->m.offset = b->index << 20;
		return 0;
	}
	default:	/* DQEVENT: nothing happens on its own here */
		return fail_with(req == VIDIOC_DQEVENT ? EAGAIN : ENOTTY);
	}
}

static int fake_ctl_ioctl(unsigned long req, void *arg)
{
	struct viacam_camera *c = arg;

	switch (req) {
	case VIACAM_IOC_ADD:
		if (fk.ncams == FAKE_CAMS)
			return fail_with(ENOSPC);
		c->id = 3 + fk.ncams;
		c->capture_nr = 10 + 2 * (int)fk.ncams;
		c->backend_nr = 11 + 2 * (int)fk.ncams;
		fk.cam[fk.ncams].id = c->id;
		fk.cam[fk.ncams].capture_nr = c->capture_nr;
		fk.cam[fk.ncams].backend_nr = c->backend_nr;
		fk.cam[fk.ncams].node_fd = -1;
		fk.ncams++;
		return 0;
	case VIACAM_IOC_REMOVE:
		for (unsigned int i = 0; i < fk.ncams; i++)
			if (fk.cam[i].id == c->id)
				fk.cam[i].removed = true;
		return 0;
	default:	/* LIST, QUERY: no camera to adopt */
		return fail_with(ENOTTY);
	}
}

int fuzz_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int i;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == fk.ctl_fd)
		return fake_ctl_ioctl(request, arg);
	i = fd >= 0 ? cam_of_node(fd) : -1;
	if (i >= 0)
		return fake_node_ioctl((unsigned int)i, request, arg);
	return (int)syscall(SYS_ioctl, fd, request, arg);
}

int fuzz_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int nr;

	va_start(ap, flags);
	mode = (flags & O_CREAT) ? (mode_t)va_arg(ap, int) : 0;
	va_end(ap);
	if (sscanf(path, "/dev/video%d", &nr) != 1)
		return (open)(path, flags, mode);	/* the system's: not the shim's macro */
	for (unsigned int i = 0; i < fk.ncams; i++) {
		if (fk.cam[i].backend_nr != nr)
			continue;
		fk.cam[i].node_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		return fk.cam[i].node_fd;
	}
	return fail_with(ENOENT);
}

void *fuzz_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	int i = fd >= 0 ? cam_of_node(fd) : -1;
	unsigned int b = (unsigned int)(offset >> 20);

	if (i < 0)
		return (mmap)(addr, len, prot, flags, fd, offset);
	assert_true(b < FAKE_BUFS && !fk.cam[i].map[b]);
	fk.cam[i].map[b] = calloc(1, len);
	return fk.cam[i].map[b] ? fk.cam[i].map[b] : MAP_FAILED;
}

int fuzz_munmap(void *addr, size_t len)
{
	for (unsigned int i = 0; i < fk.ncams; i++)
		for (unsigned int b = 0; b < FAKE_BUFS; b++)
			if (fk.cam[i].map[b] == addr) {
				free(addr);
				fk.cam[i].map[b] = NULL;
				return 0;
			}
	return (munmap)(addr, len);
}

static char dir[] = "/tmp/test-reload-XXXXXX";
static char conf_path[128], state_path[128];

static void write_config(const char *text)
{
	FILE *f = fopen(conf_path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Runs @fn with stderr (the daemon's log) going to a file; returns what it wrote. */
static char *logged(void (*fn)(struct vc_daemon *), struct vc_daemon *d)
{
	char path[160], *text;
	int saved = dup(STDERR_FILENO), fd;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/log", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	close(fd);
	fn(d);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unlink(path);
	return text;
}

static void reload(struct vc_daemon *d)
{
	assert_int_equal(vc_daemon_reload(d, "test"), 0);
}

/* The line of @log that mentions @what into @buf (@len bytes), or a failure. */
static const char *line_with(const char *log, const char *what, char *buf, size_t len)
{
	const char *at = strstr(log, what), *end;

	if (!at)
		fail_msg("the log does not say '%s':\n%s", what, log);
	while (at > log && at[-1] != '\n')
		at--;
	end = strchr(at, '\n');
	snprintf(buf, len, "%.*s", (int)(end ? end - at : (ptrdiff_t)strlen(at)), at);
	return buf;
}

/*
 * A reload that drops the sections of a streaming camera and of one that applications only
 * have open: the log names both with their labels and capture nodes, and says what their
 * applications get (ENODEV on every call, a blocked DQBUF woken), and the bridge removes
 * both; the camera whose section stays is kept.
 */
static void test_removed_streaming_camera_is_named(void **state)
{
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_daemon d = { .ctl_fd = -1 };
	struct vc_msgs msgs = { 0 };
	struct vc_conf *conf;
	struct v4l2_event ev = { .type = VIACAM_EVENT_STREAM_START };
	struct viacam_event_stream *es = (void *)ev.u.data;
	char *log, line[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(conf_path, sizeof(conf_path), "%s/viacam.conf", dir);
	snprintf(state_path, sizeof(state_path), "%s/run/cameras", dir);
	fk.ctl_fd = eventfd(0, EFD_CLOEXEC);
	d.ctl_fd = fk.ctl_fd;
	d.state_path = state_path;
	snprintf(d.config_path, sizeof(d.config_path), "%s", conf_path);
	assert_true(sd_event_new(&d.event) >= 0);
	write_config("[camera front]\nlabel = Front desk\nsizes = 320x240\nrates = 30\n"
		     "[camera back]\nlabel = Back door\n"
		     "[camera side]\n");
	assert_int_equal(vc_daemon_check(&d, &conf, prep, &msgs), 0);
	vc_daemon_apply(&d, conf, prep);
	assert_int_equal(vc_daemon_served(&d), 3);
	assert_int_equal(fk.ncams, 3);

	/* a consumer streams camera front (id 3, capture /dev/video10) */
	es->pixelformat = V4L2_PIX_FMT_YUYV;
	es->width = 320;
	es->height = 240;
	es->interval_num = 1;
	es->interval_den = 30;
	fk.cam[0].fmt = (struct viacam_format){ .pixelformat = V4L2_PIX_FMT_YUYV, .width = 320,
						.height = 240, .interval_num = 1,
						.interval_den = 30 };
	vc_session_event(d.sessions[0], &ev);
	assert_true(vc_session_streaming(d.sessions[0]));
	/* two applications have camera back open, none streams */
	ev.type = VIACAM_EVENT_CONSUMERS;
	memset(ev.u.data, 0, sizeof(ev.u.data));
	((struct viacam_event_consumers *)(void *)ev.u.data)->open = 2;
	vc_session_event(d.sessions[1], &ev);
	assert_false(vc_session_streaming(d.sessions[1]));

	write_config("[camera side]\n");
	log = logged(reload, &d);
	print_message("%s", log);
	line_with(log, "camera front: section removed", line, sizeof(line));
	assert_non_null(strstr(line, "streams it"));
	assert_non_null(strstr(line, "'Front desk'"));
	assert_non_null(strstr(line, "/dev/video10"));
	assert_non_null(strstr(line, "ENODEV"));
	line_with(log, "camera back: section removed", line, sizeof(line));
	assert_non_null(strstr(line, "'Back door'"));
	assert_non_null(strstr(line, "/dev/video12"));
	assert_non_null(strstr(line, "which 2 applications have open: they get ENODEV"));
	assert_null(strstr(line, "streams"));
	assert_true(fk.cam[0].removed);
	assert_true(fk.cam[1].removed);
	assert_false(fk.cam[2].removed);
	free(log);

	vc_daemon_stop(&d);
	sd_event_unref(d.event);
	close(fk.ctl_fd);
}

/* The pid of our child named viacamd-worker other than @not, or -1. */
static pid_t worker_child(pid_t not)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	pid_t found = -1;

	assert_non_null(proc);
	while ((de = readdir(proc)) && found < 0) {
		char path[300], line[128];
		bool name = false, child = false;
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			name |= strcmp(line, "Name:\tviacamd-worker\n") == 0;
			if (strncmp(line, "PPid:", 5) == 0)
				child = atoi(line + 5) == getpid();
		}
		fclose(f);
		if (name && child && atoi(de->d_name) != not)
			found = atoi(de->d_name);
	}
	closedir(proc);
	return found;
}

/* Runs the daemon's loop for up to @ms, until @cam handed the bridge @frames frames. */
static bool run_until_frames(struct vc_daemon *d, unsigned int cam, unsigned long frames,
			     unsigned int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (fk.cam[cam].qbufs >= frames)
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return false;
		sd_event_run(d->event, 50000);
	}
}

/*
 * A gst camera through the daemon and its session, its backend in a worker process: it
 * streams; its worker is SIGKILLed; a new worker comes and the session hands the bridge
 * frames again, without the consumer seeing an error (the bridge repeats meanwhile).
 */
static void test_killed_worker_camera_keeps_delivering(void **state)
{
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_daemon d = { .ctl_fd = -1 };
	struct vc_msgs msgs = { 0 };
	struct vc_conf *conf;
	struct v4l2_event ev = { .type = VIACAM_EVENT_STREAM_START };
	struct viacam_event_stream *es = (void *)ev.u.data;
	unsigned long before;
	pid_t first, second;
	unsigned int cam;

	(void)state;
	if (!conf_path[0]) {	/* run alone */
		assert_non_null(mkdtemp(dir));
		snprintf(conf_path, sizeof(conf_path), "%s/viacam.conf", dir);
		snprintf(state_path, sizeof(state_path), "%s/run/cameras", dir);
	}
	vc_worker_exe = "/proc/self/exe";
	fk.ctl_fd = eventfd(0, EFD_CLOEXEC);
	d.ctl_fd = fk.ctl_fd;
	d.state_path = state_path;
	snprintf(d.config_path, sizeof(d.config_path), "%s", conf_path);
	assert_true(sd_event_new(&d.event) >= 0);
	write_config("[camera live]\nbackend = gst\npipeline = videotestsrc is-live=true\n"
		     "formats = YUYV\nsizes = 320x240\nrates = 30\n");
	assert_int_equal(vc_daemon_check(&d, &conf, prep, &msgs), 0);
	vc_daemon_apply(&d, conf, prep);
	assert_int_equal(vc_daemon_served(&d), 1);
	cam = fk.ncams - 1;
	first = worker_child(-1);
	assert_true(first > 0);

	es->pixelformat = V4L2_PIX_FMT_YUYV;
	es->width = 320;
	es->height = 240;
	es->interval_num = 1;
	es->interval_den = 30;
	fk.cam[cam].fmt = (struct viacam_format){ .pixelformat = V4L2_PIX_FMT_YUYV, .width = 320,
						  .height = 240, .interval_num = 1,
						  .interval_den = 30 };
	vc_session_event(d.sessions[0], &ev);
	assert_true(vc_session_streaming(d.sessions[0]));
	assert_true(run_until_frames(&d, cam, 10, 5000));

	assert_int_equal(kill(first, SIGKILL), 0);
	before = fk.cam[cam].qbufs;
	/* a new worker within the backoff (0.5 s) and its start, then frames again */
	assert_true(run_until_frames(&d, cam, before + 20, 8000));
	second = worker_child(first);
	assert_true(second > 0 && second != first);
	assert_true(vc_session_streaming(d.sessions[0]));

	vc_daemon_stop(&d);
	sd_event_unref(d.event);
	close(fk.ctl_fd);
	vc_worker_exe = NULL;
	/* the session's release killed and reaped the worker */
	assert_true(kill(second, 0) < 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_removed_streaming_camera_is_named),
		cmocka_unit_test(test_killed_worker_camera_keeps_delivering),
	};

	/* the gst camera's worker: this binary again (worker.h) */
	if (argc == 2 && strcmp(argv[1], VC_WORKER_ARG) == 0)
		return vc_worker_main(VC_WORKER_FD, vc_backend_find);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
