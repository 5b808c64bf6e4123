// SPDX-License-Identifier: GPL-2.0-only
/*
 * be-v4l2.c - the "v4l2" backend: proxies another V4L2 capture device through libv4l2.
 *
 * Keys: device = /dev/videoN (required).
 * create() opens the device once to list its formats, sizes and rates (what it produces
 * natively, not libv4l2's emulated formats: the session converts with libv4lconvert itself)
 * and closes it again, so the device is idle until a consumer streams. start() opens it,
 * sets the format and rate, maps four buffers and streams; produce() takes the newest frame
 * the device has (without blocking) and copies it; stop() closes the device.
 * A device that disappears makes produce() return -ENODEV.
 * The device's controls of the user and camera classes (integer, boolean, button and menu
 * ones, up to VC_MAX_CTRLS) are the camera's: listed at create() with their ranges and
 * defaults. The camera's values rule: a value a consumer sets is set on the device at once
 * while streaming; at start() every value of the camera (the default, the config's
 * ctrl.NAME, what consumers set) that differs from what the device had is set on it.
 * The device sets the pace: clock_fd() is the device's fd, readable when it has filled a
 * buffer, so each frame is passed on when the device made it (produce() dequeues every
 * filled buffer, which consumes the readiness).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <libv4l2.h>
#include <linux/videodev2.h>

#include "backend.h"

#define NR_BUFS 4

struct v4l2_backend {
	char device[256];
	int line;		/* of the device key */
	int fd;
	struct vc_modes modes;
	struct vc_mode mode;
	struct v4l2_pix_format pix;	/* the device's format while streaming */
	struct {
		void *mem;
		size_t len;
	} bufs[NR_BUFS];
	unsigned int nbufs;
	struct viacam_ctrl ctrls[VC_MAX_CTRLS];
	int64_t values[VC_MAX_CTRLS];	/* what the consumers want */
	bool dirty[VC_MAX_CTRLS];	/* values[] differs from the device's */
	size_t nctrls;
};

static const char *const v4l2_keys[] = { "device", NULL };

static bool bridge_knows(uint32_t f)
{
	return vc_bytesperline(f, 16) || f == V4L2_PIX_FMT_MJPEG;
}

static void add_intervals(struct v4l2_backend *b, int fd, struct vc_mode m)
{
	static const uint32_t dflt[][2] = { { 1, 30 }, { 1, 15 } };
	struct v4l2_frmivalenum fi = { .pixel_format = m.pixelformat, .width = m.width,
				       .height = m.height };
	bool any = false;

	for (fi.index = 0; v4l2_ioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &fi) == 0; fi.index++) {
		if (fi.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
			m.interval_num = fi.discrete.numerator;
			m.interval_den = fi.discrete.denominator;
			if (m.interval_num && m.interval_den)
				any |= vc_modes_add(&b->modes, &m) == 0;
			continue;
		}
		/* continuous / stepwise: 30 and 15 fps where they fit */
		for (size_t i = 0; i < 2; i++) {
			const struct v4l2_fract *lo = &fi.stepwise.min, *hi = &fi.stepwise.max;

			/* lo <= 1/x <= hi, as fractions */
			if ((uint64_t)lo->numerator * dflt[i][1] <= (uint64_t)lo->denominator &&
			    (uint64_t)hi->numerator * dflt[i][1] >= (uint64_t)hi->denominator) {
				m.interval_num = dflt[i][0];
				m.interval_den = dflt[i][1];
				any |= vc_modes_add(&b->modes, &m) == 0;
			}
		}
		break;
	}
	if (!any) {
		m.interval_num = 1;
		m.interval_den = 30;
		vc_modes_add(&b->modes, &m);
	}
}

static void add_sizes(struct v4l2_backend *b, int fd, uint32_t f)
{
	static const uint32_t std[][2] = { { 160, 120 }, { 320, 240 }, { 640, 480 },
					   { 800, 600 }, { 1280, 720 }, { 1920, 1080 } };
	struct v4l2_frmsizeenum fs = { .pixel_format = f };
	struct vc_mode m = { .pixelformat = f };

	for (fs.index = 0; v4l2_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0; fs.index++) {
		if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
			m.width = fs.discrete.width;
			m.height = fs.discrete.height;
			if (m.width >= VIACAM_MIN_WIDTH && m.width <= VIACAM_MAX_WIDTH &&
			    m.height >= VIACAM_MIN_HEIGHT && m.height <= VIACAM_MAX_HEIGHT &&
			    !((m.width | m.height) & 1))
				add_intervals(b, fd, m);
			continue;
		}
		for (size_t i = 0; i < sizeof(std) / sizeof(std[0]); i++) {
			if (std[i][0] < fs.stepwise.min_width || std[i][0] > fs.stepwise.max_width ||
			    std[i][1] < fs.stepwise.min_height || std[i][1] > fs.stepwise.max_height)
				continue;
			m.width = std[i][0];
			m.height = std[i][1];
			add_intervals(b, fd, m);
		}
		break;
	}
}

/* The bridge's rules for a declared control (kmod/viacam-v4l2.c, viacam_check_ctrl). */
static bool ctrl_name_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* The device's controls the bridge can declare, into b->ctrls. */
static void list_ctrls(struct v4l2_backend *b, int fd)
{
	struct v4l2_queryctrl q = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };

	for (; v4l2_ioctl(fd, VIDIOC_QUERYCTRL, &q) == 0 && b->nctrls < VC_MAX_CTRLS;
	     q.id |= V4L2_CTRL_FLAG_NEXT_CTRL) {
		struct viacam_ctrl *c = &b->ctrls[b->nctrls];
		uint32_t which = V4L2_CTRL_ID2WHICH(q.id);
		struct v4l2_control cur = { .id = q.id };

		if ((which != V4L2_CTRL_CLASS_USER && which != V4L2_CTRL_CLASS_CAMERA) ||
		    (q.id & 0xffff) < 0x900 || (q.flags & (V4L2_CTRL_FLAG_DISABLED |
							    V4L2_CTRL_FLAG_WRITE_ONLY)))
			continue;
		memset(c, 0, sizeof(*c));
		c->id = q.id;
		c->type = q.type;
		snprintf(c->name, sizeof(c->name), "%s", (const char *)q.name);
		if (!ctrl_name_ok(c->name))
			continue;
		c->minimum = q.minimum;
		c->maximum = q.maximum;
		c->step = (uint64_t)q.step;
		c->default_value = q.default_value;
		c->flags = q.flags & (V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_SLIDER |
				      V4L2_CTRL_FLAG_INACTIVE);
		switch (q.type) {
		case V4L2_CTRL_TYPE_INTEGER:
			if (q.step < 1)
				continue;
			break;
		case V4L2_CTRL_TYPE_BOOLEAN:
		case V4L2_CTRL_TYPE_BUTTON:
			break;
		case V4L2_CTRL_TYPE_MENU: {
			struct v4l2_querymenu m = { .id = q.id };
			bool any = false;

			if (q.minimum < 0 || q.maximum >= VIACAM_MAX_MENU)
				continue;
			c->step = 0;
			c->menu_count = (uint32_t)q.maximum + 1;
			for (m.index = (uint32_t)q.minimum; m.index <= (uint32_t)q.maximum; m.index++) {
				if (v4l2_ioctl(fd, VIDIOC_QUERYMENU, &m) < 0)
					continue;	/* a gap: not offered */
				snprintf(c->menu[m.index], VIACAM_NAME_LEN, "%s", (const char *)m.name);
				if (!ctrl_name_ok(c->menu[m.index]))
					c->menu[m.index][0] = 0;
				any |= c->menu[m.index][0] != 0;
			}
			if (!any || !c->menu[q.default_value][0])
				continue;
			break;
		}
		default:	/* 64-bit, strings, arrays, compound: not declarable */
			continue;
		}
		if (q.type != V4L2_CTRL_TYPE_BUTTON && v4l2_ioctl(fd, VIDIOC_G_CTRL, &cur) == 0)
			b->values[b->nctrls] = cur.value;
		else
			b->values[b->nctrls] = q.default_value;
		b->nctrls++;
	}
}

static int v4l2_create(const struct vc_backend_conf *conf, void **ret, struct vc_error *err)
{
	const struct vc_kv *dev = vc_conf_key(conf, "device");
	struct v4l2_capability cap = { 0 };
	struct v4l2_fmtdesc fd_ = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_backend *b;
	int fd, r;

	if (!dev)
		return vc_err(err, 0, -EINVAL, "missing key 'device' (the V4L2 device to proxy)");
	if (strlen(dev->value) >= sizeof(b->device))
		return vc_err(err, dev->line, -EINVAL, "device path too long");
	fd = v4l2_open(dev->value, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return vc_err(err, dev->line, -errno, "%s: %s", dev->value, strerror(errno));
	if (v4l2_ioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
		r = vc_err(err, dev->line, -errno, "%s: not a V4L2 device (%s)", dev->value,
			   strerror(errno));
		v4l2_close(fd);
		return r;
	}
	if (!((cap.capabilities & V4L2_CAP_DEVICE_CAPS ? cap.device_caps : cap.capabilities) &
	      V4L2_CAP_VIDEO_CAPTURE)) {
		v4l2_close(fd);
		return vc_err(err, dev->line, -EINVAL, "%s (%s): not a video capture device",
			      dev->value, cap.card);
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		v4l2_close(fd);
		return -ENOMEM;
	}
	strcpy(b->device, dev->value);
	b->line = dev->line;
	b->fd = -1;
	for (fd_.index = 0; v4l2_ioctl(fd, VIDIOC_ENUM_FMT, &fd_) == 0; fd_.index++)
		if (!(fd_.flags & V4L2_FMT_FLAG_EMULATED) && bridge_knows(fd_.pixelformat))
			add_sizes(b, fd, fd_.pixelformat);
	list_ctrls(b, fd);
	v4l2_close(fd);
	if (!b->modes.n) {
		free(b);
		return vc_err(err, dev->line, -EINVAL,
			      "%s (%s): offers no format the bridge can pass on", dev->value,
			      cap.card);
	}
	*ret = b;
	return 0;
}

static int v4l2_describe(void *priv, struct vc_modes *modes)
{
	struct v4l2_backend *b = priv;

	for (size_t i = 0; i < b->modes.n; i++)
		if (vc_modes_add(modes, &b->modes.v[i]) < 0)
			break;
	return 0;
}

static int v4l2_controls(void *priv, struct viacam_ctrl *ctrls)
{
	struct v4l2_backend *b = priv;

	memcpy(ctrls, b->ctrls, sizeof(b->ctrls[0]) * b->nctrls);
	return (int)b->nctrls;
}

/* Sets control @i on the open device; logs nothing (the session logs a failure). */
static int apply_ctrl(struct v4l2_backend *b, size_t i)
{
	struct v4l2_control c = { .id = b->ctrls[i].id, .value = (int32_t)b->values[i] };

	if (v4l2_ioctl(b->fd, VIDIOC_S_CTRL, &c) < 0)
		return -errno;
	b->dirty[i] = false;
	return 0;
}

static int v4l2_set_ctrl(void *priv, uint32_t id, int64_t value)
{
	struct v4l2_backend *b = priv;

	for (size_t i = 0; i < b->nctrls; i++) {
		if (b->ctrls[i].id != id)
			continue;
		if (b->ctrls[i].flags & V4L2_CTRL_FLAG_READ_ONLY)
			return 0;
		/* The session passes every value before each start: only changes count
		 * (a button is a change each time it is pressed). */
		if (value == b->values[i] && b->ctrls[i].type != V4L2_CTRL_TYPE_BUTTON)
			return 0;
		b->values[i] = value;
		b->dirty[i] = true;
		return b->fd >= 0 ? apply_ctrl(b, i) : 0;
	}
	return -EINVAL;
}

static void v4l2_stop(void *priv)
{
	struct v4l2_backend *b = priv;
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	if (b->fd < 0)
		return;
	v4l2_ioctl(b->fd, VIDIOC_STREAMOFF, &type);
	for (unsigned int i = 0; i < b->nbufs; i++)
		if (b->bufs[i].mem)
			v4l2_munmap(b->bufs[i].mem, b->bufs[i].len);
	memset(b->bufs, 0, sizeof(b->bufs));
	b->nbufs = 0;
	v4l2_close(b->fd);
	b->fd = -1;
}

static int v4l2_start(void *priv, const struct vc_mode *mode, struct vc_error *err)
{
	struct v4l2_backend *b = priv;
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm sp = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_requestbuffers rb = { .count = NR_BUFS, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE, r;

	b->fd = v4l2_open(b->device, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (b->fd < 0)
		return vc_err(err, b->line, -errno, "%s: %s", b->device, strerror(errno));
	f.fmt.pix.pixelformat = mode->pixelformat;
	f.fmt.pix.width = mode->width;
	f.fmt.pix.height = mode->height;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	if (v4l2_ioctl(b->fd, VIDIOC_S_FMT, &f) < 0) {
		r = vc_err(err, b->line, -errno, "%s: VIDIOC_S_FMT: %s", b->device, strerror(errno));
		goto fail;
	}
	if (f.fmt.pix.pixelformat != mode->pixelformat || f.fmt.pix.width != mode->width ||
	    f.fmt.pix.height != mode->height) {
		r = vc_err(err, b->line, -EINVAL, "%s refused the format", b->device);
		goto fail;
	}
	b->pix = f.fmt.pix;
	sp.parm.capture.timeperframe.numerator = mode->interval_num;
	sp.parm.capture.timeperframe.denominator = mode->interval_den;
	v4l2_ioctl(b->fd, VIDIOC_S_PARM, &sp);	/* not every device has rates */
	if (v4l2_ioctl(b->fd, VIDIOC_REQBUFS, &rb) < 0 || rb.count < 1) {
		r = vc_err(err, b->line, -errno, "%s: VIDIOC_REQBUFS: %s", b->device,
			   strerror(errno));
		goto fail;
	}
	b->nbufs = rb.count > NR_BUFS ? NR_BUFS : rb.count;
	for (unsigned int i = 0; i < b->nbufs; i++) {
		struct v4l2_buffer buf = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					   .memory = V4L2_MEMORY_MMAP };
		void *mem;

		if (v4l2_ioctl(b->fd, VIDIOC_QUERYBUF, &buf) < 0) {
			r = vc_err(err, b->line, -errno, "%s: VIDIOC_QUERYBUF: %s", b->device,
				   strerror(errno));
			goto fail;
		}
		mem = v4l2_mmap(NULL, buf.length, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd,
				buf.m.offset);
		if (mem == MAP_FAILED) {
			r = vc_err(err, b->line, -errno, "%s: mmap: %s", b->device, strerror(errno));
			goto fail;
		}
		b->bufs[i].mem = mem;
		b->bufs[i].len = buf.length;
		if (v4l2_ioctl(b->fd, VIDIOC_QBUF, &buf) < 0) {
			r = vc_err(err, b->line, -errno, "%s: VIDIOC_QBUF: %s", b->device,
				   strerror(errno));
			goto fail;
		}
	}
	for (size_t i = 0; i < b->nctrls; i++)	/* what consumers set while it was closed */
		if (b->dirty[i] && b->ctrls[i].type != V4L2_CTRL_TYPE_BUTTON)
			apply_ctrl(b, i);
	if (v4l2_ioctl(b->fd, VIDIOC_STREAMON, &type) < 0) {
		r = vc_err(err, b->line, -errno, "%s: VIDIOC_STREAMON: %s", b->device,
			   strerror(errno));
		goto fail;
	}
	b->mode = *mode;
	return 0;
fail:
	v4l2_stop(b);
	return r;
}

/* Copies a frame whose lines may be padded into the bridge's layout. */
static size_t copy_frame(const struct v4l2_backend *b, const uint8_t *src, size_t srclen,
			 struct vc_frame *fr)
{
	uint32_t dbpl = vc_bytesperline(b->mode.pixelformat, b->mode.width);
	uint32_t sbpl = b->pix.bytesperline;
	size_t need = vc_sizeimage(b->mode.pixelformat, b->mode.width, b->mode.height);
	size_t rows, o = 0;

	if (!dbpl || !sbpl || sbpl == dbpl) {	/* compressed, or the same layout */
		size_t n = srclen < fr->size ? srclen : fr->size;

		memcpy(fr->data, src, n);
		return n;
	}
	/* Rows of all planes: luma rows, then chroma rows at the same stride ratio. */
	rows = need / dbpl;
	for (size_t r = 0; r < rows && o + dbpl <= fr->size; r++) {
		size_t so = r * sbpl;

		if (so + dbpl > srclen)
			break;
		memcpy(fr->data + o, src + so, dbpl);
		o += dbpl;
	}
	return o;
}

static int v4l2_produce(void *priv, struct vc_frame *fr)
{
	struct v4l2_backend *b = priv;
	struct v4l2_buffer last = { 0 };
	bool have = false;

	if (b->fd < 0)
		return -ENODEV;
	for (;;) {
		/* Ask first: libv4l2 logs every failed DQBUF, EAGAIN included. */
		struct pollfd p = { .fd = b->fd, .events = POLLIN };

		if (poll(&p, 1, 0) < 0 || (p.revents & POLLHUP)) {	/* unplugged */
			if (have)
				v4l2_ioctl(b->fd, VIDIOC_QBUF, &last);
			return -ENODEV;
		}
		if (!(p.revents & POLLIN)) {
			/* POLLERR alone: no buffer queued, the device cannot deliver (and its
			 * fd would stay readable for the session's clock) */
			if ((p.revents & POLLERR) && !have)
				return -ENODEV;
			break;
		}
		struct v4l2_buffer buf = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					   .memory = V4L2_MEMORY_MMAP };

		if (v4l2_ioctl(b->fd, VIDIOC_DQBUF, &buf) < 0) {
			if (errno == EAGAIN)
				break;
			if (have)
				v4l2_ioctl(b->fd, VIDIOC_QBUF, &last);
			return errno == ENODEV || errno == EIO || errno == EPIPE ? -ENODEV : -errno;
		}
		if (have)	/* an older frame: give it back */
			v4l2_ioctl(b->fd, VIDIOC_QBUF, &last);
		last = buf;
		have = true;
	}
	if (!have)
		return -EAGAIN;
	if (last.index < b->nbufs && !(last.flags & V4L2_BUF_FLAG_ERROR))
		fr->bytesused = copy_frame(b, b->bufs[last.index].mem, last.bytesused, fr);
	else
		fr->bytesused = 0;
	v4l2_ioctl(b->fd, VIDIOC_QBUF, &last);
	return fr->bytesused ? 0 : -EAGAIN;
}

static int v4l2_clock_fd(void *priv)
{
	return ((struct v4l2_backend *)priv)->fd;
}

static void v4l2_release(void *priv)
{
	v4l2_stop(priv);
	free(priv);
}

const struct vc_backend_ops vc_backend_v4l2 = {
	.abi = VC_BACKEND_ABI,
	.name = "v4l2",
	.summary = "proxy of another V4L2 capture device (through libv4l2)",
	.keys = v4l2_keys,
	.create = v4l2_create,
	.describe = v4l2_describe,
	.start = v4l2_start,
	.produce = v4l2_produce,
	.stop = v4l2_stop,
	.controls = v4l2_controls,
	.set_ctrl = v4l2_set_ctrl,
	.clock_fd = v4l2_clock_fd,
	.release = v4l2_release,
};
