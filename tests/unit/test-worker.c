// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-worker.c - backends in sandboxed worker processes (backend/core/worker.c, sandbox.c):
 * the worker of a gst camera runs without root, capabilities, new privileges, /sys or device
 * nodes, under seccomp, with none of the core's fds; frames cross the shared ring; a killed
 * worker is reported and restarted with backoff and frames come again; a hung worker is
 * detected and replaced; a forbidden system call kills the worker, not the core.
 *
 * Run as root (as the unit tests are): the worker drops from root to viacam or nobody. This
 * binary is its own worker: the proxy re-executes /proc/self/exe with "--worker", and main()
 * serves then, with the test backend "tbad" besides the real ones.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/videodev2.h>

#include "../../backend/backend.h"
#include "worker.h"

extern const struct vc_backend_ops vc_backend_gst;
extern const struct vc_backend_ops vc_backend_file;

/* ---- "tbad": a backend that misbehaves on its first frame, as its key "do" says. ---- */
struct tbad {
	char what[16];
	bool done;
};

static const char *const tbad_keys[] = { "do", NULL };

static int tbad_create(const struct vc_backend_conf *conf, void **ret, struct vc_error *err)
{
	const struct vc_kv *kv = vc_conf_key(conf, "do");
	struct tbad *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	if (kv)
		snprintf(t->what, sizeof(t->what), "%s", kv->value);
	(void)err;
	*ret = t;
	return 0;
}

static int tbad_describe(void *priv, struct vc_modes *modes)
{
	struct vc_mode m = { V4L2_PIX_FMT_YUYV, 64, 48, 1, 50 };

	(void)priv;
	return vc_modes_add(modes, &m);
}

static int tbad_start(void *priv, const struct vc_mode *mode, struct vc_error *err)
{
	(void)priv;
	(void)mode;
	(void)err;
	return 0;
}

static int tbad_produce(void *priv, struct vc_frame *fr)
{
	struct tbad *t = priv;

	if (!t->done && strcmp(t->what, "hang") == 0)
		for (;;)
			pause();	/* the worker's loop never comes back */
	if (!t->done && strcmp(t->what, "ptrace") == 0)
		syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0);	/* the filter kills here */
	if (!t->done && strcmp(t->what, "unshare") == 0)
		syscall(SYS_unshare, 0x10000000 /* CLONE_NEWUSER */);
	t->done = true;
	memset(fr->data, 0x5a, fr->size);
	fr->bytesused = fr->size;
	return 0;
}

static void tbad_stop(void *priv)
{
	(void)priv;
}

static void tbad_release(void *priv)
{
	free(priv);
}

static const struct vc_backend_ops tbad_ops = {
	.abi = VC_BACKEND_ABI,
	.name = "tbad",
	.summary = "test",
	.keys = tbad_keys,
	.create = tbad_create,
	.describe = tbad_describe,
	.start = tbad_start,
	.produce = tbad_produce,
	.stop = tbad_stop,
	.release = tbad_release,
};

static const struct vc_backend_ops *find(const char *name)
{
	return strcmp(name, "tbad") == 0 ? &tbad_ops : vc_backend_find(name);
}

/* ---- helpers ---- */
struct conf {
	struct vc_kv kv[2];
	struct vc_backend_conf c;
};

static void conf_init(struct conf *cf, const char *key, const char *value)
{
	static const uint32_t sizes[][2] = { { 160, 120 } };
	static const uint32_t rates[][2] = { { 1, 30 } };
	static const uint32_t formats[] = { V4L2_PIX_FMT_YUYV };

	memset(cf, 0, sizeof(*cf));
	cf->kv[0] = (struct vc_kv){ (char *)key, (char *)value, 4 };
	cf->c.camera = "test";
	cf->c.keys = cf->kv;
	cf->c.nkeys = 1;
	cf->c.formats = formats;
	cf->c.nformats = 1;
	cf->c.sizes = sizes;
	cf->c.nsizes = 1;
	cf->c.intervals = rates;
	cf->c.nintervals = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct cam {
	const struct vc_backend_ops *ops;
	void *priv;
	struct vc_modes modes;
	uint8_t *buf;
	size_t size;
	char notes[4096];
};

static void cam_open(struct cam *c, const struct vc_backend_ops *real, const char *key,
		     const char *value)
{
	struct vc_error err = { 0 };
	struct conf cf;
	int r;

	memset(c, 0, sizeof(*c));
	c->ops = vc_worker_proxy(real);
	assert_non_null(c->ops);
	assert_string_equal(c->ops->name, real->name);
	conf_init(&cf, key, value);
	r = c->ops->create(&cf.c, &c->priv, &err);
	if (r < 0)
		fail_msg("create: %s", err.msg);
	assert_int_equal(c->ops->describe(c->priv, &c->modes), 0);
	assert_true(c->modes.n > 0);
	c->size = vc_sizeimage(c->modes.v[0].pixelformat, c->modes.v[0].width,
			       c->modes.v[0].height);
	c->buf = malloc(c->size);
	assert_non_null(c->buf);
	r = c->ops->start(c->priv, &c->modes.v[0], &err);
	if (r < 0)
		fail_msg("start: %s", err.msg);
}

static void cam_close(struct cam *c)
{
	c->ops->stop(c->priv);
	c->ops->release(c->priv);
	free(c->buf);
}

/* As the session: produce() whenever clock_fd is readable. 0 at a frame, -ETIMEDOUT. */
static int cam_frame(struct cam *c, unsigned int timeout_ms)
{
	struct pollfd p = { .fd = c->ops->clock_fd(c->priv), .events = POLLIN };
	uint64_t end = now_ms() + timeout_ms;

	assert_true(p.fd >= 0);
	while (now_ms() < end) {
		struct vc_frame fr = {
			.data = c->buf,
			.size = c->size,
			.mode = &c->modes.v[0],
			.bytesperline = vc_bytesperline(c->modes.v[0].pixelformat,
							c->modes.v[0].width),
		};
		int r;

		if (poll(&p, 1, 50) <= 0)
			continue;
		r = c->ops->produce(c->priv, &fr);
		if (fr.note[0])
			snprintf(c->notes + strlen(c->notes), sizeof(c->notes) - strlen(c->notes),
				 "%s\n", fr.note);
		if (r == 0) {
			assert_int_equal(fr.bytesused, c->size);
			return 0;
		}
		assert_int_equal(r, -EAGAIN);
	}
	return -ETIMEDOUT;
}

/* Drives the camera until its worker's pid is neither -1 nor @old; ms it took, or -1. */
static long wait_new_worker(struct cam *c, pid_t old, unsigned int timeout_ms)
{
	uint64_t t0 = now_ms();

	while (now_ms() - t0 < timeout_ms) {
		pid_t p = vc_worker_pid(c->priv);

		if (p > 0 && p != old)
			return (long)(now_ms() - t0);
		cam_frame(c, 20);
	}
	return -1;
}

/* The value of "@key:" in /proc/@pid/status, or "" */
static char *status_field(pid_t pid, const char *key, char *out, size_t len)
{
	char path[64], line[256];
	FILE *f;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		size_t k = strlen(key);

		if (strncmp(line, key, k) == 0 && line[k] == ':') {
			const char *v = line + k + 1;

			v += strspn(v, " \t");
			snprintf(out, len, "%.*s", (int)strcspn(v, "\n"), v);
			break;
		}
	}
	fclose(f);
	return out;
}

/* ---- tests ---- */

/* The worker of a gst camera: no root, no capabilities, no new privileges, seccomp. */
static void test_gst_worker_sandboxed(void **state)
{
	char v[256], path[256];
	int canary = open("/etc/hostname", O_RDONLY);	/* an fd of the core's, inheritable */
	struct dirent *de;
	struct cam c;
	DIR *dir;
	pid_t pid;
	int n;

	(void)state;
	assert_true(geteuid() == 0);
	assert_true(canary >= 0);
	cam_open(&c, &vc_backend_gst, "pipeline", "videotestsrc is-live=true");
	assert_int_equal(cam_frame(&c, 5000), 0);
	pid = vc_worker_pid(c.priv);
	assert_true(pid > 0 && pid != getpid());

	/* real, effective, saved and filesystem ids: none of them root */
	for (int k = 0; k < 2; k++) {
		char *p = status_field(pid, k ? "Gid" : "Uid", v, sizeof(v)), *end;

		for (int i = 0; i < 4; i++, p = end) {
			unsigned long id = strtoul(p, &end, 10);

			assert_true(end != p);
			assert_true(id != 0);
		}
	}
	status_field(pid, "Groups", v, sizeof(v));
	assert_string_equal(v, "");
	assert_string_equal(status_field(pid, "Name", v, sizeof(v)), "viacamd-worker");
	assert_string_equal(status_field(pid, "CapInh", v, sizeof(v)), "0000000000000000");
	assert_string_equal(status_field(pid, "CapPrm", v, sizeof(v)), "0000000000000000");
	assert_string_equal(status_field(pid, "CapEff", v, sizeof(v)), "0000000000000000");
	assert_string_equal(status_field(pid, "CapBnd", v, sizeof(v)), "0000000000000000");
	assert_string_equal(status_field(pid, "CapAmb", v, sizeof(v)), "0000000000000000");
	assert_string_equal(status_field(pid, "NoNewPrivs", v, sizeof(v)), "1");
	assert_string_equal(status_field(pid, "Seccomp", v, sizeof(v)), "2");

	/* none of the core's fds: only the socket and what GStreamer opened itself */
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		char target[256] = "";
		char link[600];

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, de->d_name);
		n = (int)readlink(link, target, sizeof(target) - 1);
		assert_true(n > 0);
		target[n] = 0;
		if (strcmp(target, "/etc/hostname") == 0)
			fail_msg("the worker has the core's fd %s -> %s", de->d_name, target);
	}
	closedir(dir);

	/* its own /sys is empty; its /dev holds the five harmless nodes only */
	snprintf(path, sizeof(path), "/proc/%d/root/sys", (int)pid);
	dir = opendir(path);
	assert_non_null(dir);
	n = 0;
	while ((de = readdir(dir)))
		n += de->d_name[0] != '.';
	closedir(dir);
	assert_int_equal(n, 0);
	snprintf(path, sizeof(path), "/proc/%d/root/dev", (int)pid);
	dir = opendir(path);
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		static const char *const ok[] = { ".", "..", "null", "zero", "full", "random",
						  "urandom", "shm", "pts" };
		bool known = false;

		for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			known |= strcmp(de->d_name, ok[i]) == 0;
		if (!known)
			fail_msg("the worker sees /dev/%s", de->d_name);
	}
	closedir(dir);

	/* frames keep coming through the ring */
	for (int i = 0; i < 5; i++)
		assert_int_equal(cam_frame(&c, 2000), 0);
	cam_close(&c);
	close(canary);
	/* released: the worker is gone and reaped */
	assert_true(kill(pid, 0) < 0 && errno == ESRCH);
}

/* A killed worker: reported, a new one after 0.5 s, then 1 s if it dies again; frames come. */
static void test_killed_worker_restarted(void **state)
{
	struct cam c;
	pid_t first, second;
	long t1, t2;

	(void)state;
	cam_open(&c, &vc_backend_gst, "pipeline", "videotestsrc is-live=true");
	assert_int_equal(cam_frame(&c, 5000), 0);
	first = vc_worker_pid(c.priv);
	assert_int_equal(kill(first, SIGKILL), 0);
	t1 = wait_new_worker(&c, first, 5000);
	assert_true(t1 >= 400);
	assert_non_null(strstr(c.notes, "killed by signal 9"));
	assert_non_null(strstr(c.notes, "starting a new one in 500 ms"));
	second = vc_worker_pid(c.priv);
	/* dies again at once: the next delay doubles */
	assert_int_equal(kill(second, SIGKILL), 0);
	t2 = wait_new_worker(&c, second, 5000);
	assert_true(t2 >= 900);
	assert_non_null(strstr(c.notes, "starting a new one in 1000 ms"));
	/* the camera keeps delivering */
	for (int i = 0; i < 5; i++)
		assert_int_equal(cam_frame(&c, 5000), 0);
	cam_close(&c);
}

/* A worker whose loop hangs: no answer to the heartbeat, killed and replaced. */
static void test_hung_worker_detected(void **state)
{
	struct cam c;
	pid_t first;
	long t;

	(void)state;
	vc_worker_hang_ms = 700;
	cam_open(&c, &tbad_ops, "do", "hang");
	first = vc_worker_pid(c.priv);
	t = wait_new_worker(&c, first, 6000);
	assert_true(t > 0);
	assert_non_null(strstr(c.notes, "did not answer for 700 ms (hung)"));
	assert_true(kill(first, 0) < 0);	/* killed and reaped */
	vc_worker_hang_ms = 3000;
	cam_close(&c);
}

/* A forbidden system call kills the worker (SIGSYS), reported; the core goes on. */
static void test_forbidden_syscall_kills_worker(void **state)
{
	static const char *const what[] = { "ptrace", "unshare" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct cam c;
		pid_t first;

		cam_open(&c, &tbad_ops, "do", what[i]);
		first = vc_worker_pid(c.priv);
		assert_true(wait_new_worker(&c, first, 5000) > 0);
		assert_non_null(strstr(c.notes, "killed by signal 31"));
		assert_non_null(strstr(c.notes, "a system call its sandbox forbids"));
		/* the new worker misbehaves again at its first frame: the core still serves */
		cam_close(&c);
	}
}

/* The file backend in a worker: frames of a clip the worker's user may read. */
static void test_file_worker(void **state)
{
	char path[] = "/tmp/test-worker-XXXXXX";
	const char hdr[] = "YUV4MPEG2 W160 H120 F30:1 Ip A1:1 C422\n";
	int fd = mkstemp(path);
	uint8_t frame[160 * 120 * 2];
	struct cam c;

	(void)state;
	assert_true(fd >= 0);
	assert_true(write(fd, hdr, strlen(hdr)) == (ssize_t)strlen(hdr));
	for (int i = 0; i < 3; i++) {
		assert_true(write(fd, "FRAME\n", 6) == 6);
		memset(frame, 0x40 + i, sizeof(frame));
		assert_true(write(fd, frame, sizeof(frame)) == (ssize_t)sizeof(frame));
	}
	close(fd);
	assert_int_equal(chmod(path, 0644), 0);
	cam_open(&c, &vc_backend_file, "file", path);
	assert_int_equal(cam_frame(&c, 3000), 0);
	cam_close(&c);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gst_worker_sandboxed),
		cmocka_unit_test(test_killed_worker_restarted),
		cmocka_unit_test(test_hung_worker_detected),
		cmocka_unit_test(test_forbidden_syscall_kills_worker),
		cmocka_unit_test(test_file_worker),
	};

	if (argc == 2 && strcmp(argv[1], VC_WORKER_ARG) == 0)
		return vc_worker_main(VC_WORKER_FD, find);
	vc_worker_exe = "/proc/self/exe";
	return cmocka_run_group_tests(tests, NULL, NULL);
}
