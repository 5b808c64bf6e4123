// SPDX-License-Identifier: GPL-2.0-only
/*
 * vccompat.c - a 32-bit backend: built with gcc -m32 and run on the 64-bit guest kernel,
 * it declares formats, controls and a card name through the backend node's private ioctls
 * (compat_ioctl32), and checks what the capture node then offers.
 *
 *   vccompat CAPDEV OUTDEV
 * Every check prints "ok: ..." or "FAIL: ..."; the exit status is 1 if any failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/viacam.h>

static int failures;

#define CHECK(cond, ...) do {						\
	if (cond) { printf("ok: "); } else { printf("FAIL: "); failures++; }	\
	printf(__VA_ARGS__); printf("\n");				\
} while (0)

int main(int argc, char **argv)
{
	struct viacam_format fmt = { V4L2_PIX_FMT_YUYV, 320, 240, 1, 15, 0, { 0, 0 } };
	struct viacam_formats fs = { .count = 1, .formats = (unsigned long)&fmt };
	struct viacam_ctrl c = { .id = V4L2_CID_BRIGHTNESS, .type = V4L2_CTRL_TYPE_INTEGER,
				 .name = "Brightness", .minimum = 0, .maximum = 99, .step = 1,
				 .default_value = 42 };
	struct viacam_ctrls cs = { .count = 1, .ctrls = (unsigned long)&c };
	struct viacam_info info = { .card = "compat32 camera" };
	struct v4l2_capability cap;
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_queryctrl q = { .id = V4L2_CID_BRIGHTNESS };
	int capfd, outfd, r;

	if (argc != 3) {
		fprintf(stderr, "usage: vccompat CAPDEV OUTDEV\n");
		return 2;
	}
	printf("pointer size %zu\n", sizeof(void *));
	/* The capture node opens after the declarations: a new control set needs it closed. */
	outfd = open(argv[2], O_RDWR);
	if (outfd < 0) {
		perror("vccompat: open");
		return 2;
	}
	r = ioctl(outfd, VIACAM_IOC_S_FORMATS, &fs);
	CHECK(r == 0, "32-bit VIACAM_IOC_S_FORMATS (%s)", r ? strerror(errno) : "ok");
	r = ioctl(outfd, VIACAM_IOC_S_CTRLS, &cs);
	CHECK(r == 0, "32-bit VIACAM_IOC_S_CTRLS (%s)", r ? strerror(errno) : "ok");
	r = ioctl(outfd, VIACAM_IOC_S_INFO, &info);
	CHECK(r == 0, "32-bit VIACAM_IOC_S_INFO (%s)", r ? strerror(errno) : "ok");
	capfd = open(argv[1], O_RDWR);
	if (capfd < 0) {
		perror("vccompat: open");
		return 2;
	}
	CHECK(ioctl(capfd, VIDIOC_G_FMT, &f) == 0 && f.fmt.pix.width == 320 &&
	      f.fmt.pix.height == 240, "the capture node offers the declared 320x240 (%ux%u)",
	      f.fmt.pix.width, f.fmt.pix.height);
	CHECK(ioctl(capfd, VIDIOC_QUERYCTRL, &q) == 0 && q.maximum == 99 && q.default_value == 42,
	      "...and the declared brightness 0..99, default 42");
	CHECK(ioctl(capfd, VIDIOC_QUERYCAP, &cap) == 0 &&
	      !strcmp((char *)cap.card, "compat32 camera"), "...under the declared card name (%s)",
	      cap.card);
	r = ioctl(outfd, VIACAM_IOC_S_FORMATS + 0x100, &fs);
	CHECK(r < 0 && errno == ENOTTY, "an unknown private ioctl still gets ENOTTY");
	fs.count = 0;
	ioctl(outfd, VIACAM_IOC_S_FORMATS, &fs);
	close(capfd);
	close(outfd);
	return failures ? 1 : 0;
}
