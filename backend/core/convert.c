// SPDX-License-Identifier: GPL-2.0-only
/*
 * convert.c - libv4lconvert behind a small interface (see convert.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <libv4l-plugin.h>
#include <libv4lconvert.h>
#include <linux/videodev2.h>

#include "convert.h"

struct vc_convert {
	struct v4lconvert_data *data;
	char error[128];
};

/*
 * libv4lconvert asks its device a few questions (capabilities, controls for its software
 * processing). Our stand-in is a capture device without controls, so no processing (white
 * balance, gamma, quirk flips) is ever switched on: conversions are exact format changes.
 */
static int standin_ioctl(void *priv, int fd, unsigned long int request, void *arg)
{
	(void)priv;
	(void)fd;
	if (request == VIDIOC_QUERYCAP) {
		struct v4l2_capability *cap = arg;

		memset(cap, 0, sizeof(*cap));
		strcpy((char *)cap->driver, "viacamd");
		strcpy((char *)cap->card, "viacamd converter");
		strcpy((char *)cap->bus_info, "platform:viacamd");
		cap->device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING;
		cap->capabilities = cap->device_caps | V4L2_CAP_DEVICE_CAPS;
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

static const struct libv4l_dev_ops standin_ops = {
	.ioctl = standin_ioctl,
};

static bool known_source(uint32_t f)
{
	switch (f) {
	case V4L2_PIX_FMT_YUYV:
	case V4L2_PIX_FMT_UYVY:
	case V4L2_PIX_FMT_NV12:
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
	case V4L2_PIX_FMT_RGB24:
	case V4L2_PIX_FMT_BGR24:
	case V4L2_PIX_FMT_RGB565:
	case V4L2_PIX_FMT_GREY:
	case V4L2_PIX_FMT_MJPEG:
		return true;
	default:
		return false;
	}
}

bool vc_convert_possible(uint32_t src, uint32_t dst)
{
	return src != dst && known_source(src) && v4lconvert_supported_dst_format(dst);
}

struct vc_convert *vc_convert_new(void)
{
	struct vc_convert *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->data = v4lconvert_create_with_dev_ops(-1, NULL, &standin_ops);
	if (!c->data) {
		free(c);
		return NULL;
	}
	return c;
}

void vc_convert_free(struct vc_convert *c)
{
	if (!c)
		return;
	v4lconvert_destroy(c->data);
	free(c);
}

static void to_v4l2(const struct vc_mode *m, struct v4l2_format *f)
{
	memset(f, 0, sizeof(*f));
	f->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	f->fmt.pix.pixelformat = m->pixelformat;
	f->fmt.pix.width = m->width;
	f->fmt.pix.height = m->height;
	f->fmt.pix.field = V4L2_FIELD_NONE;
	f->fmt.pix.bytesperline = vc_bytesperline(m->pixelformat, m->width);
	f->fmt.pix.sizeimage = vc_sizeimage(m->pixelformat, m->width, m->height);
}

int vc_convert_frame(struct vc_convert *c, const struct vc_mode *from, const uint8_t *src,
		     size_t srclen, const struct vc_mode *to, uint8_t *dst, size_t dstlen)
{
	struct v4l2_format sf, df;
	int r;

	if (from->width != to->width || from->height != to->height ||
	    !vc_convert_possible(from->pixelformat, to->pixelformat)) {
		strcpy(c->error, "unsupported conversion");
		return -EINVAL;
	}
	to_v4l2(from, &sf);
	to_v4l2(to, &df);
	if (dstlen < df.fmt.pix.sizeimage) {
		strcpy(c->error, "destination buffer too small");
		return -ENOSPC;
	}
	r = v4lconvert_convert(c->data, &sf, &df, (unsigned char *)src, (int)srclen, dst,
			       (int)dstlen);
	if (r < 0) {
		const char *m = v4lconvert_get_error_message(c->data);

		snprintf(c->error, sizeof(c->error), "%s", m && *m ? m : "conversion failed");
		return -EIO;
	}
	return r;
}

const char *vc_convert_error(struct vc_convert *c)
{
	return c->error;
}
