// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-v4l2.c - what the v4l2 backend, which runs as root with a path from the config, agrees
 * to open: only a V4L2 video capture device. A tty, /dev/null, a regular file, a directory
 * and a FIFO are refused with the path and what it is, and are never opened (inotify sees no
 * IN_OPEN: opening a tty, a watchdog or a tape has effects of its own); a viacam node, a
 * device that does not capture and a multi-planar one are refused by what QUERYCAP says.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/videodev2.h>

#include "backend.h"
#include "be-v4l2.h"

extern const struct vc_backend_ops vc_backend_v4l2;

/* create() with "device = @path" at line 7: its result, the message in @err. */
static int create(const char *path, struct vc_error *err)
{
	struct vc_kv kv = { (char *)"device", (char *)path, 7 };
	struct vc_backend_conf c = { .camera = "test", .keys = &kv, .nkeys = 1 };
	void *priv = NULL;
	int r;

	memset(err, 0, sizeof(*err));
	r = vc_backend_v4l2.create(&c, &priv, err);
	if (r == 0)
		vc_backend_v4l2.release(priv);
	return r;
}

/*
 * create() on @path, which must be refused with -EINVAL, a message at line 7 that says
 * "@path is not a V4L2 device: @what", and without opening @path (inotify on it).
 */
static void assert_refused_unopened(const char *path, const char *what)
{
	char want[512], ev[4096];
	struct vc_error err;
	int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ssize_t n;

	assert_true(ifd >= 0);
	assert_true(inotify_add_watch(ifd, path, IN_OPEN) >= 0);
	assert_int_equal(create(path, &err), -EINVAL);
	assert_int_equal(err.line, 7);
	snprintf(want, sizeof(want), "%s is not a V4L2 device: %s", path, what);
	if (strcmp(err.msg, want) != 0)
		fail_msg("create(%s) says '%s', expected '%s'", path, err.msg, want);
	n = read(ifd, ev, sizeof(ev));
	if (n > 0)
		fail_msg("create(%s) opened it", path);
	assert_int_equal(errno, EAGAIN);
	close(ifd);
}

static void test_char_devices_of_other_drivers(void **state)
{
	struct stat st;
	char what[128];

	(void)state;
	/* /dev/null: a character device that answers no V4L2 ioctl */
	assert_int_equal(stat("/dev/null", &st), 0);
	snprintf(what, sizeof(what), "it is a character device of another driver (%u:%u)",
		 major(st.st_rdev), minor(st.st_rdev));
	assert_refused_unopened("/dev/null", what);
	/* a tty: opened as root without O_NOCTTY it could become viacamd's controlling tty */
	if (stat("/dev/tty", &st) == 0) {
		snprintf(what, sizeof(what), "it is a character device of another driver (%u:%u)",
			 major(st.st_rdev), minor(st.st_rdev));
		assert_refused_unopened("/dev/tty", what);
	}
}

static void test_files_directories_fifos(void **state)
{
	char dir[] = "/tmp/test-v4l2-XXXXXX", file[64], fifo[64], link[64], buf[16];
	struct stat before, after;
	struct vc_error err;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/passwd", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "root:x:0:0", 10), 10);
	close(fd);
	assert_int_equal(stat(file, &before), 0);

	assert_refused_unopened(file, "it is a regular file");
	assert_int_equal(stat(file, &after), 0);
	assert_int_equal(after.st_size, 10);
	assert_true(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
		    after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	assert_int_equal(read(fd, buf, sizeof(buf)), 10);
	close(fd);
	assert_memory_equal(buf, "root:x:0:0", 10);

	assert_refused_unopened(dir, "it is a directory");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_refused_unopened(fifo, "it is a FIFO");
	/* a symlink is followed (/dev/v4l/by-id/ are symlinks): what it names counts */
	assert_int_equal(symlink(file, link), 0);
	assert_int_equal(create(link, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is not a V4L2 device: it is a regular file"));
	/* a path that does not exist: an absent device, as before */
	unlink(link);
	assert_int_equal(create(link, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "No such file or directory"));

	unlink(fifo);
	unlink(file);
	rmdir(dir);
}

/* What QUERYCAP must say for the backend to use a device. */
static void test_capabilities(void **state)
{
	struct v4l2_capability cap = { .driver = "uvcvideo", .card = "Integrated Camera",
				       .capabilities = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING |
						       V4L2_CAP_DEVICE_CAPS,
				       .device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING };

	(void)state;
	assert_null(vc_v4l2_cap_problem(&cap));
	/* another viacam camera's capture node may feed a camera (a proxy); its backend node not */
	memcpy(cap.driver, "viacam", 7);
	assert_null(vc_v4l2_cap_problem(&cap));
	cap.device_caps = V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_STREAMING;
	assert_string_equal(vc_v4l2_cap_problem(&cap), "is not a video capture device");
	cap.device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING;
	/* the device's own caps count, not the whole device's (a metadata node of a UVC camera) */
	memcpy(cap.driver, "uvcvideo", 9);
	cap.capabilities |= V4L2_CAP_META_CAPTURE;
	cap.device_caps = V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING;
	assert_string_equal(vc_v4l2_cap_problem(&cap), "is not a video capture device");
	cap.device_caps = V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_STREAMING;
	assert_string_equal(vc_v4l2_cap_problem(&cap), "is not a video capture device");
	cap.device_caps = V4L2_CAP_VIDEO_CAPTURE_MPLANE | V4L2_CAP_STREAMING;
	assert_string_equal(vc_v4l2_cap_problem(&cap),
			    "is a multi-planar capture device, which the v4l2 backend does not drive");
	/* without V4L2_CAP_DEVICE_CAPS, the capabilities are the node's */
	cap.capabilities = V4L2_CAP_VIDEO_CAPTURE;
	cap.device_caps = 0;
	assert_null(vc_v4l2_cap_problem(&cap));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_char_devices_of_other_drivers),
		cmocka_unit_test(test_files_directories_fifos),
		cmocka_unit_test(test_capabilities),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
