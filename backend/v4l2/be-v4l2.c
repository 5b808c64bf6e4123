// SPDX-License-Identifier: GPL-2.0-only
/*
 * be-v4l2.c - the "v4l2" backend: proxies another V4L2 capture device through libv4l2.
 *
 * Keys: device = /dev/videoN (required).
 * viacamd runs as root and the path comes from the config, so the backend opens nothing but a
 * V4L2 video capture node (open_capture()): it looks at what the path names first and refuses
 * a regular file, a directory, a FIFO, a socket, a block device and a character device of
 * another driver without opening it (opening a tty, a watchdog or a tape does things); a
 * V4L2 node is opened O_NOCTTY, checked again by fstat() and refused unless QUERYCAP says it
 * captures video, single-planar (a viacam backend node does not; another viacam camera's
 * capture node may feed this one).
 * create() opens the device once to list its formats, sizes and rates (what it produces
 * natively, not libv4l2's emulated formats: the session converts with libv4lconvert itself)
 * and closes it again, so the device is idle until a consumer streams. Opening it, setting
 * the format and rate, mapping four buffers and STREAMON, and later STREAMOFF and close, can
 * take a real camera hundreds of milliseconds: they run in the instance's worker thread, so
 * start() and stop() return at once (backend.h: no op blocks longer than a frame interval).
 * produce() takes the device over once the worker has it streaming (or reports why it could
 * not, once, and returns -ENODEV), then takes the newest frame the device has (without
 * blocking) and copies it. A device that disappears makes produce() return -ENODEV.
 * The device's controls of the user and camera classes (integer, boolean, button and menu
 * ones, up to VC_MAX_CTRLS) are the camera's: listed at create() with their ranges and
 * defaults. The camera's values rule: a value a consumer sets is set on the device at once
 * while streaming; at start() every value of the camera (the default, the config's
 * ctrl.NAME, what consumers set) that differs from what the device had is set on it.
 * The device sets the pace: clock_fd() is an epoll fd over the worker's eventfd and, once
 * streaming, the device's fd, readable when it has filled a buffer, so each frame is passed
 * on when the device made it (produce() dequeues every filled buffer, which consumes the
 * readiness), with the device's capture time when it is on CLOCK_MONOTONIC.
 *
 * Threads: the event loop calls every op; the worker runs the commands start() and stop()
 * queue. struct v4l2_dev (the open device) belongs to the worker, except between produce()
 * taking it over (state ST_OPEN) and stop() handing it back with CMD_STOP. mu guards the
 * command queue and the worker's answer (done_gen, result, msg). release() queues CMD_QUIT:
 * the worker closes the device and frees the instance, so release() never waits for a
 * device either.
 *
 * Test hook: VIACAMD_TEST_V4L2_START_MS (environment) makes the worker wait that long before
 * STREAMON, standing in for a slow camera.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <libv4l2.h>
#include <linux/videodev2.h>

#include "backend.h"
#include "be-v4l2.h"

#define NR_BUFS 4
/* The character major of every V4L2 node (the kernel's VIDEO_MAJOR, include/media/v4l2-dev.h). */
#define V4L2_MAJOR 81

/* The open, streaming device. */
struct v4l2_dev {
	int fd;			/* -1: closed */
	struct v4l2_pix_format pix;	/* the device's format while streaming */
	struct {
		void *mem;
		size_t len;
	} bufs[NR_BUFS];
	unsigned int nbufs;
};

enum v4l2_state {
	ST_IDLE,	/* not started */
	ST_OPENING,	/* CMD_START queued; the worker has the device */
	ST_OPEN,	/* produce() took the streaming device over */
	ST_FAILED,	/* the worker could not start it (reported) */
};

enum { CMD_START, CMD_STOP, CMD_QUIT };

struct v4l2_backend {
	char device[256];
	int line;		/* of the device key */
	int fd;			/* dev.fd while ST_OPEN, else -1 (the event loop's view) */
	struct vc_modes modes;
	struct vc_mode mode;
	struct v4l2_dev dev;
	enum v4l2_state state;
	uint64_t gen;		/* of the newest CMD_START */
	bool worker;		/* the thread runs */
	pthread_t thread;
	int efd;		/* the worker's "start done" eventfd */
	int epfd;		/* clock_fd(): efd + the device */
	/* mu: the command queue, and done_gen/result/msg, the answer to a CMD_START */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct {
		int op;
		uint64_t gen;
		struct vc_mode mode;
		/* CMD_START: the controls to set before STREAMON */
		struct v4l2_control ctrls[VC_MAX_CTRLS];
		unsigned int nctrls;
	} cmds[4];
	unsigned int ncmds;
	uint64_t done_gen;
	int result;
	char msg[200];
	struct viacam_ctrl ctrls[VC_MAX_CTRLS];
	int64_t values[VC_MAX_CTRLS];	/* what the consumers want */
	bool dirty[VC_MAX_CTRLS];	/* values[] differs from the device's */
	size_t nctrls;
};

static const char *const v4l2_keys[] = { "device", NULL };

static void free_instance(struct v4l2_backend *b)
{
	if (b->epfd >= 0)
		close(b->epfd);
	if (b->efd >= 0)
		close(b->efd);
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b);
}

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

/* Sets @msg and returns -@errnum. */
static int dev_fail(char *msg, size_t len, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int dev_fail(char *msg, size_t len, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -errnum;
}

const char *vc_v4l2_cap_problem(const struct v4l2_capability *cap)
{
	uint32_t caps = cap->capabilities & V4L2_CAP_DEVICE_CAPS ? cap->device_caps :
								    cap->capabilities;

	if (caps & V4L2_CAP_VIDEO_CAPTURE)
		return NULL;
	if (caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE)
		return "is a multi-planar capture device, which the v4l2 backend does not drive";
	return "is not a video capture device";
}

/* What @st is, for "PATH is not a V4L2 device: it is ...", or NULL for a V4L2 node. */
static const char *not_v4l2(const struct stat *st, char *buf, size_t len)
{
	if (S_ISCHR(st->st_mode) && major(st->st_rdev) == V4L2_MAJOR)
		return NULL;
	if (S_ISCHR(st->st_mode)) {
		snprintf(buf, len, "it is a character device of another driver (%u:%u)",
			 major(st->st_rdev), minor(st->st_rdev));
		return buf;
	}
	return S_ISREG(st->st_mode) ? "it is a regular file" :
	       S_ISDIR(st->st_mode) ? "it is a directory" :
	       S_ISFIFO(st->st_mode) ? "it is a FIFO" :
	       S_ISSOCK(st->st_mode) ? "it is a socket" :
	       S_ISBLK(st->st_mode) ? "it is a block device" : "it is not a device";
}

/*
 * Opens @path for libv4l2 as a V4L2 video capture node (non-blocking, close-on-exec, never a
 * controlling tty) and fills @cap. Returns the fd, or -errno with @msg saying why, naming
 * @path: -ENOENT (and other errors of stat and open) as the system says; -EINVAL for a path
 * that names something else, or a node the backend does not take (vc_v4l2_cap_problem()).
 * What is not a V4L2 node is never opened.
 */
static int open_capture(const char *path, struct v4l2_capability *cap, char *msg, size_t len)
{
	struct stat st, fst;
	const char *what;
	char buf[96];
	int fd, e;

	if (stat(path, &st) < 0)
		return dev_fail(msg, len, errno, "%s: %s", path, strerror(errno));
	what = not_v4l2(&st, buf, sizeof(buf));
	if (what)
		return dev_fail(msg, len, EINVAL, "%s is not a V4L2 device: %s", path, what);
	fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return dev_fail(msg, len, errno, "%s: %s", path, strerror(errno));
	/* The path may name another file by now: what was opened counts. */
	if (fstat(fd, &fst) < 0 || !S_ISCHR(fst.st_mode) || fst.st_rdev != st.st_rdev) {
		close(fd);
		return dev_fail(msg, len, EINVAL, "%s changed while it was opened", path);
	}
	if (v4l2_fd_open(fd, 0) < 0) {
		e = errno;
		close(fd);
		return dev_fail(msg, len, e, "%s: libv4l2: %s", path, strerror(e));
	}
	memset(cap, 0, sizeof(*cap));
	if (v4l2_ioctl(fd, VIDIOC_QUERYCAP, cap) < 0) {
		e = errno;
		v4l2_close(fd);
		return dev_fail(msg, len, EINVAL, "%s is not a V4L2 video device (VIDIOC_QUERYCAP: %s)",
				path, strerror(e));
	}
	what = vc_v4l2_cap_problem(cap);
	if (what) {
		v4l2_close(fd);
		return dev_fail(msg, len, EINVAL, "%s %s", path, what);
	}
	return fd;
}

static int v4l2_create(const struct vc_backend_conf *conf, void **ret, struct vc_error *err)
{
	const struct vc_kv *dev = vc_conf_key(conf, "device");
	struct v4l2_capability cap = { 0 };
	struct v4l2_fmtdesc fd_ = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_backend *b;
	char msg[sizeof(err->msg)];
	int fd;

	if (!dev)
		return vc_err(err, 0, -EINVAL, "missing key 'device' (the V4L2 device to proxy)");
	if (strlen(dev->value) >= sizeof(b->device))
		return vc_err(err, dev->line, -EINVAL, "device path too long");
	fd = open_capture(dev->value, &cap, msg, sizeof(msg));
	if (fd < 0)
		return vc_err(err, dev->line, fd, "%s", msg);
	b = calloc(1, sizeof(*b));
	if (!b) {
		v4l2_close(fd);
		return -ENOMEM;
	}
	strcpy(b->device, dev->value);
	b->line = dev->line;
	b->fd = -1;
	b->dev.fd = -1;
	b->efd = -1;
	b->epfd = -1;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	for (fd_.index = 0; v4l2_ioctl(fd, VIDIOC_ENUM_FMT, &fd_) == 0; fd_.index++)
		if (!(fd_.flags & V4L2_FMT_FLAG_EMULATED) && bridge_knows(fd_.pixelformat))
			add_sizes(b, fd, fd_.pixelformat);
	list_ctrls(b, fd);
	v4l2_close(fd);
	if (!b->modes.n) {
		free_instance(b);
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

/* Worker: stop and close the device, unmap its buffers. */
static void dev_close(struct v4l2_dev *d)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	if (d->fd < 0)
		return;
	v4l2_ioctl(d->fd, VIDIOC_STREAMOFF, &type);
	for (unsigned int i = 0; i < d->nbufs; i++)
		if (d->bufs[i].mem)
			v4l2_munmap(d->bufs[i].mem, d->bufs[i].len);
	memset(d->bufs, 0, sizeof(d->bufs));
	d->nbufs = 0;
	v4l2_close(d->fd);
	d->fd = -1;
}

static void test_delay(void)
{
	const char *e = getenv("VIACAMD_TEST_V4L2_START_MS");
	long ms = e ? strtol(e, NULL, 10) : 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	if (ms > 0 && ms < 60000)
		nanosleep(&ts, NULL);
}

/*
 * Worker: open @device, set @nctrls controls and stream @mode into mapped buffers. 0, or
 * -errno with @msg set.
 */
static int dev_open(struct v4l2_dev *d, const char *device, const struct vc_mode *mode,
		    struct v4l2_control *ctrls, unsigned int nctrls, char *msg, size_t len)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm sp = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_requestbuffers rb = { .count = NR_BUFS, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct v4l2_capability cap;
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE, r;

	d->fd = open_capture(device, &cap, msg, len);
	if (d->fd < 0)
		return d->fd;
	f.fmt.pix.pixelformat = mode->pixelformat;
	f.fmt.pix.width = mode->width;
	f.fmt.pix.height = mode->height;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	if (v4l2_ioctl(d->fd, VIDIOC_S_FMT, &f) < 0) {
		r = dev_fail(msg, len, errno, "%s: VIDIOC_S_FMT: %s", device, strerror(errno));
		goto fail;
	}
	if (f.fmt.pix.pixelformat != mode->pixelformat || f.fmt.pix.width != mode->width ||
	    f.fmt.pix.height != mode->height) {
		r = dev_fail(msg, len, EINVAL, "%s refused the format", device);
		goto fail;
	}
	d->pix = f.fmt.pix;
	sp.parm.capture.timeperframe.numerator = mode->interval_num;
	sp.parm.capture.timeperframe.denominator = mode->interval_den;
	v4l2_ioctl(d->fd, VIDIOC_S_PARM, &sp);	/* not every device has rates */
	if (v4l2_ioctl(d->fd, VIDIOC_REQBUFS, &rb) < 0 || rb.count < 1) {
		r = dev_fail(msg, len, errno ? errno : ENOMEM, "%s: VIDIOC_REQBUFS: %s", device,
			     strerror(errno ? errno : ENOMEM));
		goto fail;
	}
	d->nbufs = rb.count > NR_BUFS ? NR_BUFS : rb.count;
	for (unsigned int i = 0; i < d->nbufs; i++) {
		struct v4l2_buffer buf = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					   .memory = V4L2_MEMORY_MMAP };
		void *mem;

		if (v4l2_ioctl(d->fd, VIDIOC_QUERYBUF, &buf) < 0) {
			r = dev_fail(msg, len, errno, "%s: VIDIOC_QUERYBUF: %s", device,
				     strerror(errno));
			goto fail;
		}
		mem = v4l2_mmap(NULL, buf.length, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd,
				buf.m.offset);
		if (mem == MAP_FAILED) {
			r = dev_fail(msg, len, errno, "%s: mmap: %s", device, strerror(errno));
			goto fail;
		}
		d->bufs[i].mem = mem;
		d->bufs[i].len = buf.length;
		if (v4l2_ioctl(d->fd, VIDIOC_QBUF, &buf) < 0) {
			r = dev_fail(msg, len, errno, "%s: VIDIOC_QBUF: %s", device, strerror(errno));
			goto fail;
		}
	}
	for (unsigned int i = 0; i < nctrls; i++)	/* failures: the session logs them later */
		v4l2_ioctl(d->fd, VIDIOC_S_CTRL, &ctrls[i]);
	test_delay();
	if (v4l2_ioctl(d->fd, VIDIOC_STREAMON, &type) < 0) {
		r = dev_fail(msg, len, errno, "%s: VIDIOC_STREAMON: %s", device, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	dev_close(d);
	return r;
}

static void *worker(void *arg)
{
	struct v4l2_backend *b = arg;

	for (;;) {
		struct v4l2_control ctrls[VC_MAX_CTRLS];
		unsigned int nctrls;
		int op;
		uint64_t gen;
		struct vc_mode mode;
		char msg[sizeof(b->msg)] = "";
		int r;

		pthread_mutex_lock(&b->mu);
		while (!b->ncmds)
			pthread_cond_wait(&b->cv, &b->mu);
		op = b->cmds[0].op;
		gen = b->cmds[0].gen;
		mode = b->cmds[0].mode;
		nctrls = b->cmds[0].nctrls;
		memcpy(ctrls, b->cmds[0].ctrls, sizeof(ctrls[0]) * nctrls);
		memmove(b->cmds, b->cmds + 1, --b->ncmds * sizeof(b->cmds[0]));
		pthread_mutex_unlock(&b->mu);
		switch (op) {
		case CMD_START:
			r = dev_open(&b->dev, b->device, &mode, ctrls, nctrls, msg, sizeof(msg));
			pthread_mutex_lock(&b->mu);
			b->done_gen = gen;
			b->result = r;
			memcpy(b->msg, msg, sizeof(msg));
			pthread_mutex_unlock(&b->mu);
			vc_kick(b->efd);
			break;
		case CMD_STOP:
			dev_close(&b->dev);
			break;
		default:	/* CMD_QUIT: release() left the instance to us */
			dev_close(&b->dev);
			free_instance(b);
			return NULL;
		}
	}
}

/*
 * Queues a command for the worker; CMD_START takes the controls whose values the device
 * does not have yet. The queue is never full (see the cancelling below).
 */
static void request(struct v4l2_backend *b, int op, const struct vc_mode *mode)
{
	pthread_mutex_lock(&b->mu);
	/*
	 * A stop cancels a start the worker has not taken yet (consumers that come and go while
	 * a slow device opens): the queue then never holds more than a stop, a start and a quit.
	 * The controls the start carried are due again.
	 */
	if (op == CMD_STOP && b->ncmds && b->cmds[b->ncmds - 1].op == CMD_START) {
		b->ncmds--;
		for (unsigned int k = 0; k < b->cmds[b->ncmds].nctrls; k++)
			for (size_t i = 0; i < b->nctrls; i++)
				if (b->ctrls[i].id == b->cmds[b->ncmds].ctrls[k].id)
					b->dirty[i] = true;
		pthread_mutex_unlock(&b->mu);
		return;
	}
	if (b->ncmds < sizeof(b->cmds) / sizeof(b->cmds[0])) {
		b->cmds[b->ncmds].op = op;
		b->cmds[b->ncmds].gen = b->gen;
		b->cmds[b->ncmds].nctrls = 0;
		if (mode)
			b->cmds[b->ncmds].mode = *mode;
		for (size_t i = 0; op == CMD_START && i < b->nctrls; i++) {
			if (!b->dirty[i] || b->ctrls[i].type == V4L2_CTRL_TYPE_BUTTON)
				continue;
			b->cmds[b->ncmds].ctrls[b->cmds[b->ncmds].nctrls++] =
				(struct v4l2_control){ .id = b->ctrls[i].id,
						       .value = (int32_t)b->values[i] };
			b->dirty[i] = false;
		}
		b->ncmds++;
	}
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

static void v4l2_stop(void *priv)
{
	struct v4l2_backend *b = priv;

	if (b->state == ST_IDLE)
		return;
	if (b->state == ST_OPEN)
		epoll_ctl(b->epfd, EPOLL_CTL_DEL, b->fd, NULL);
	b->fd = -1;
	b->state = ST_IDLE;
	request(b, CMD_STOP, NULL);	/* the device goes back to the worker */
}

static int v4l2_start(void *priv, const struct vc_mode *mode, struct vc_error *err)
{
	struct v4l2_backend *b = priv;
	struct epoll_event ev = { .events = EPOLLIN };
	int r;

	if (b->state != ST_IDLE)
		v4l2_stop(b);
	if (b->efd < 0) {
		b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		b->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (b->efd < 0 || b->epfd < 0)
			return vc_err(err, 0, -errno, "eventfd/epoll: %s", strerror(errno));
		ev.data.fd = b->efd;
		if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->efd, &ev) < 0)
			return vc_err(err, 0, -errno, "epoll: %s", strerror(errno));
	}
	if (!b->worker) {
		r = pthread_create(&b->thread, NULL, worker, b);
		if (r)
			return vc_err(err, 0, -r, "cannot start a thread: %s", strerror(r));
		b->worker = true;
	}
	b->mode = *mode;
	b->gen++;
	b->state = ST_OPENING;
	request(b, CMD_START, mode);
	return 0;
}

/*
 * produce() while the worker opens the device: -EAGAIN until it answers; then the device is
 * ours (0), or the failure is reported once (-ENODEV).
 */
static int take_device(struct v4l2_backend *b, struct vc_frame *fr)
{
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t v;
	bool ready;
	int r;

	if (read(b->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&b->mu);
	ready = b->done_gen == b->gen;
	r = b->result;
	if (ready && r < 0)
		snprintf(fr->note, sizeof(fr->note), "v4l2: cannot stream %ux%u from %s",
			 b->mode.width, b->mode.height, b->msg);
	pthread_mutex_unlock(&b->mu);
	if (!ready)
		return -EAGAIN;
	if (r < 0) {
		/* The device may not have the values the start carried: again at the next one. */
		for (size_t i = 0; i < b->nctrls; i++)
			b->dirty[i] = b->ctrls[i].type != V4L2_CTRL_TYPE_BUTTON;
		b->state = ST_FAILED;
		return -ENODEV;
	}
	b->state = ST_OPEN;
	b->fd = b->dev.fd;
	ev.data.fd = b->fd;
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->fd, &ev) < 0) {
		snprintf(fr->note, sizeof(fr->note), "v4l2: epoll: %s", strerror(errno));
		b->state = ST_FAILED;
		return -ENODEV;
	}
	for (size_t i = 0; i < b->nctrls; i++)	/* what consumers set while it was starting */
		if (b->dirty[i] && b->ctrls[i].type != V4L2_CTRL_TYPE_BUTTON)
			apply_ctrl(b, i);
	return 0;
}

/* Copies a frame whose lines may be padded into the bridge's layout. */
static size_t copy_frame(const struct v4l2_backend *b, const uint8_t *src, size_t srclen,
			 struct vc_frame *fr)
{
	uint32_t dbpl = vc_bytesperline(b->mode.pixelformat, b->mode.width);
	uint32_t sbpl = b->dev.pix.bytesperline;
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

	if (b->state == ST_OPENING) {
		int r = take_device(b, fr);

		if (r < 0)
			return r;
	}
	if (b->state != ST_OPEN)
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
	if (last.index < b->dev.nbufs && !(last.flags & V4L2_BUF_FLAG_ERROR))
		fr->bytesused = copy_frame(b, b->dev.bufs[last.index].mem, last.bytesused, fr);
	else
		fr->bytesused = 0;
	/* The device's capture time, if it is on our clock (a UVC camera's, a sensor's). */
	if ((last.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) == V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
		fr->capture_ns = (uint64_t)last.timestamp.tv_sec * 1000000000u +
				 (uint64_t)last.timestamp.tv_usec * 1000u;
	v4l2_ioctl(b->fd, VIDIOC_QBUF, &last);
	return fr->bytesused ? 0 : -EAGAIN;
}

static int v4l2_clock_fd(void *priv)
{
	return ((struct v4l2_backend *)priv)->epfd;
}

static void v4l2_release(void *priv)
{
	struct v4l2_backend *b = priv;

	if (!b)
		return;
	v4l2_stop(b);
	if (!b->worker) {
		free_instance(b);
		return;
	}
	request(b, CMD_QUIT, NULL);
	pthread_detach(b->thread);
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
