// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz-session.c - libFuzzer target: a viacamd session (backend/core/session.c) driven by any
 * sequence of what the bridge may tell it: stream start/stop with a valid or an arbitrary
 * mode, consumer counts, control values, interval changes, unknown events, interleaved with
 * frame slots and configuration swaps, while the bridge's ioctls fail now and then (EBUSY,
 * EINVAL, ENODEV, ...). The input's first 8 bytes seed those failures; each further byte
 * picks an operation and its arguments.
 *
 * The bridge is a stand-in here (no kernel runs in a host fuzzer): session.c is built with
 * tests/fuzz/fuzz-session-shim.h, so its ioctl(), open(), mmap() and munmap() calls come to
 * the fake_* functions below, which keep the rules the module keeps (a node's format is the
 * consumer's, buffers are sizeimage long, QBUF takes a dequeued buffer of ours with
 * bytesused <= length). The guest tests run the session against the real bridge; this finds
 * what no real run sends. A crash, a sanitizer report (ASan, UBSan: a division by zero
 * included), a leak, a broken rule of the uapi (abort) or a buffer left mapped fails it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/videodev2.h>
#include <linux/viacam.h>

#include "backend.h"
#include "config.h"
#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAKE_BUFS 8

static struct {
	int ctl_fd, node_fd;
	uint64_t rng;			/* failures and DQBUF readiness */
	/* the consumer's mode, as the bridge would report it */
	uint32_t pixelformat, width, height, num, den;
	/* the node's buffers */
	unsigned int nbufs;
	size_t buflen;
	bool queued[FAKE_BUFS];
	unsigned int fifo[FAKE_BUFS], nfifo;
	void *map[FAKE_BUFS];
	size_t maplen[FAKE_BUFS];
} fk;

static uint32_t rnd(void)
{
	fk.rng ^= fk.rng << 13;
	fk.rng ^= fk.rng >> 7;
	fk.rng ^= fk.rng << 17;
	return (uint32_t)(fk.rng >> 16);
}

/* One call in 16 fails, with an errno the bridge can give. */
static int injected(void)
{
	static const int errs[] = { EBUSY, EINVAL, ENOMEM, EIO, EAGAIN, ENODEV, ENOTTY, EPERM };
	uint32_t r = rnd();

	return (r & 15) ? 0 : errs[(r >> 4) % (sizeof(errs) / sizeof(errs[0]))];
}

static int fail_with(int e)
{
	errno = e;
	return -1;
}

static void fake_node_fmt(struct v4l2_pix_format *pix)
{
	memset(pix, 0, sizeof(*pix));
	pix->pixelformat = fk.pixelformat;
	pix->width = fk.width;
	pix->height = fk.height;
	pix->bytesperline = vc_bytesperline(fk.pixelformat, fk.width);
	pix->sizeimage = vc_sizeimage(fk.pixelformat, fk.width, fk.height);
	if (!pix->sizeimage || pix->sizeimage > (8u << 20))
		pix->sizeimage = 4096;	/* compressed, or absurd: a small bound */
	pix->field = V4L2_FIELD_NONE;
}

static int fake_node_ioctl(unsigned long req, void *arg)
{
	int e;

	switch (req) {
	case VIDIOC_SUBSCRIBE_EVENT:
		return 0;
	case VIDIOC_DQEVENT:
		return fail_with(EAGAIN);	/* events come through vc_session_event() */
	case VIACAM_IOC_S_INFO:
		return (e = injected()) ? fail_with(e) : 0;
	case VIACAM_IOC_S_FORMATS: {
		const struct viacam_formats *f = arg;
		struct viacam_format copy[VC_MAX_MODES];

		if (f->count > VC_MAX_MODES)
			abort();	/* more than the daemon can hold */
		memcpy(copy, (const void *)(uintptr_t)f->formats, f->count * sizeof(copy[0]));
		for (uint32_t i = 0; i < f->count; i++)
			if (!copy[i].interval_num || !copy[i].interval_den)
				abort();	/* the uapi wants both > 0 */
		return (e = injected()) ? fail_with(e) : 0;
	}
	case VIACAM_IOC_S_CTRLS: {
		const struct viacam_ctrls *c = arg;
		struct viacam_ctrl copy[VC_MAX_CTRLS];

		if (c->count > VC_MAX_CTRLS)
			abort();
		memcpy(copy, (const void *)(uintptr_t)c->ctrls, c->count * sizeof(copy[0]));
		return (e = injected()) ? fail_with(e) : 0;
	}
	case VIDIOC_G_FMT:
	case VIDIOC_S_FMT: {
		struct v4l2_format *f = arg;

		if (f->type != V4L2_BUF_TYPE_VIDEO_OUTPUT)
			return fail_with(EINVAL);
		if ((e = injected()))
			return fail_with(e);
		fake_node_fmt(&f->fmt.pix);
		return 0;
	}
	case VIDIOC_REQBUFS: {
		struct v4l2_requestbuffers *rb = arg;
		struct v4l2_pix_format pix;

		if (rb->memory != V4L2_MEMORY_MMAP)
			return fail_with(EINVAL);
		for (unsigned int i = 0; i < FAKE_BUFS; i++)
			if (fk.map[i])
				return fail_with(EBUSY);	/* vb2: buffers still mapped */
		fk.nbufs = 0;
		fk.nfifo = 0;
		memset(fk.queued, 0, sizeof(fk.queued));
		if (!rb->count)
			return 0;
		if ((e = injected()))
			return fail_with(e);
		fake_node_fmt(&pix);
		fk.buflen = pix.sizeimage;
		/* vb2 may give fewer or (the queue's minimum) more than asked */
		rb->count = rb->count > FAKE_BUFS ? FAKE_BUFS : rb->count;
		if (!(rnd() & 7))
			rb->count = 1 + rnd() % FAKE_BUFS;
		fk.nbufs = rb->count;
		return 0;
	}
	case VIDIOC_QUERYBUF: {
		struct v4l2_buffer *b = arg;

		if (b->index >= fk.nbufs || b->memory != V4L2_MEMORY_MMAP)
			return fail_with(EINVAL);
		b->length = (uint32_t)fk.buflen;
		b->m.offset = b->index << 20;
		return 0;
	}
	case VIDIOC_STREAMON:
	case VIDIOC_STREAMOFF:
		fk.nfifo = 0;
		memset(fk.queued, 0, sizeof(fk.queued));
		return (e = injected()) && req == VIDIOC_STREAMON ? fail_with(e) : 0;
	case VIDIOC_QBUF: {
		struct v4l2_buffer *b = arg;

		if (b->index >= fk.nbufs || fk.queued[b->index] || !fk.map[b->index])
			abort();	/* a buffer that is not ours to queue */
		if (b->bytesused > fk.buflen)
			abort();	/* more than the buffer holds */
		if ((e = injected()))
			return fail_with(e);
		fk.queued[b->index] = true;
		fk.fifo[fk.nfifo++] = b->index;
		return 0;
	}
	case VIDIOC_DQBUF: {
		struct v4l2_buffer *b = arg;

		if ((e = injected()))
			return fail_with(e);
		if (!fk.nfifo || (rnd() & 1))
			return fail_with(EAGAIN);
		b->index = fk.fifo[0];
		memmove(fk.fifo, fk.fifo + 1, --fk.nfifo * sizeof(fk.fifo[0]));
		fk.queued[b->index] = false;
		return 0;
	}
	default:
		return fail_with(ENOTTY);
	}
}

static int fake_ctl_ioctl(unsigned long req, void *arg)
{
	struct viacam_camera *c = arg;
	int e;

	switch (req) {
	case VIACAM_IOC_ADD:
		if ((e = injected()))
			return fail_with(e);
		c->id = 3;
		if (c->capture_nr < 0)
			c->capture_nr = 10;
		if (c->backend_nr < 0)
			c->backend_nr = 11;
		return 0;
	case VIACAM_IOC_QUERY:
		if ((e = injected()))
			return fail_with(e);
		c->pixelformat = fk.pixelformat;
		c->width = fk.width;
		c->height = fk.height;
		c->interval_num = fk.num;
		c->interval_den = fk.den;
		return 0;
	case VIACAM_IOC_REMOVE:
		return 0;
	default:
		return fail_with(ENOTTY);
	}
}

int fuzz_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == fk.node_fd)
		return fake_node_ioctl(request, arg);
	if (fd >= 0 && fd == fk.ctl_fd)
		return fake_ctl_ioctl(request, arg);
	return (int)syscall(SYS_ioctl, fd, request, arg);
}

int fuzz_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int e;

	va_start(ap, flags);
	mode = (flags & O_CREAT) ? (mode_t)va_arg(ap, int) : 0;
	va_end(ap);
	if (strncmp(path, "/dev/video", 10) != 0)
		return open(path, flags, mode);
	if ((e = injected()))
		return fail_with(e == ENOTTY ? ENOENT : e);
	if (fk.node_fd >= 0)
		abort();	/* one node per session */
	/* Pollable, like the node (the session watches it with sd-event). */
	fk.node_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return fk.node_fd;
}

void *fuzz_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	unsigned int i = (unsigned int)(offset >> 20);
	int e;

	if (fd < 0 || fd != fk.node_fd)
		return mmap(addr, len, prot, flags, fd, offset);
	if (i >= fk.nbufs || len != fk.buflen || fk.map[i])
		abort();	/* not a buffer QUERYBUF described, or mapped twice */
	if ((e = injected())) {
		errno = e;
		return MAP_FAILED;
	}
	fk.map[i] = calloc(1, len);
	fk.maplen[i] = len;
	return fk.map[i] ? fk.map[i] : MAP_FAILED;
}

int fuzz_munmap(void *addr, size_t len)
{
	for (unsigned int i = 0; i < FAKE_BUFS; i++) {
		if (fk.map[i] != addr)
			continue;
		if (len != fk.maplen[i])
			abort();
		free(fk.map[i]);
		fk.map[i] = NULL;
		return 0;
	}
	return munmap(addr, len);
}

/* ------------------------------------------------------------------------
 * The input
 */

struct input {
	const uint8_t *p;
	size_t left;
};

static uint32_t take(struct input *in, unsigned int bytes)
{
	uint32_t v = 0;

	while (bytes--) {
		v = v << 8 | (in->left ? *in->p : 0);
		if (in->left) {
			in->p++;
			in->left--;
		}
	}
	return v;
}

static const char conf_text[] =
	"[camera a]\n"
	"label = Fuzz A\n"
	"formats = YUYV RGB24 YUV420 GREY\n"
	"sizes = 64x48 32x32\n"
	"rates = 30 15 1\n"
	"[camera b]\n"
	"label = Fuzz B\n"
	"formats = GREY YUYV\n"
	"sizes = 32x32\n"
	"rates = 15\n";

static struct vc_conf *conf;

static void load_conf(void)
{
	struct vc_msgs msgs = { 0 };
	char path[64];
	int fd = memfd_create("fuzz-session", 0);

	if (fd < 0 || write(fd, conf_text, sizeof(conf_text) - 1) != sizeof(conf_text) - 1)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (vc_conf_load(path, &conf, &msgs) != 0)
		abort();
	close(fd);
}

static struct vc_prepared *prepare(const char *name)
{
	struct vc_msgs msgs = { 0 };
	struct vc_prepared *p;

	if (vc_prepare(vc_conf_camera(conf, name), "fuzz", false, &p, &msgs) != 0)
		abort();
	return p;
}

static void send(struct vc_session *s, uint32_t type, const void *payload, size_t len)
{
	struct v4l2_event ev = { .type = type };

	if (len)
		memcpy(ev.u.data, payload, len);
	vc_session_event(s, &ev);
}

/* A mode for an event: one the session offers (@valid), or anything. */
static void pick_mode(struct input *in, const struct vc_prepared *p, bool valid,
		      struct viacam_event_stream *es)
{
	static const uint32_t fourccs[] = { V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_RGB24,
					    V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_GREY,
					    V4L2_PIX_FMT_MJPEG, 0, 0x20202020 };

	memset(es, 0, sizeof(*es));
	if (valid && p->noffers) {
		const struct viacam_format *f = &p->offers[take(in, 1) % p->noffers].fmt;

		es->pixelformat = f->pixelformat;
		es->width = f->width;
		es->height = f->height;
		es->interval_num = f->interval_num;
		es->interval_den = f->interval_den;
	} else {
		es->pixelformat = fourccs[take(in, 1) % (sizeof(fourccs) / sizeof(fourccs[0]))];
		es->width = take(in, 1) & 1 ? 64 : take(in, 2);
		es->height = take(in, 1) & 1 ? 48 : take(in, 2);
		es->interval_num = take(in, 1);
		es->interval_den = take(in, 1) & 1 ? 30 : take(in, 4);
	}
	es->bytesperline = vc_bytesperline(es->pixelformat, es->width);
	es->sizeimage = vc_sizeimage(es->pixelformat, es->width, es->height);
}

static void consumer_mode(const struct viacam_event_stream *es)
{
	fk.pixelformat = es->pixelformat;
	fk.width = es->width;
	fk.height = es->height;
	fk.num = es->interval_num;
	fk.den = es->interval_den;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct vc_prepared *a, *offers[2];	/* offers: what sections a and b offer, to pick modes */
	struct vc_session *s = NULL;
	sd_event *event = NULL;
	const struct vc_cam_conf *cc;
	bool on_a = true;

	if (!conf)
		load_conf();
	memset(&fk, 0, sizeof(fk));
	fk.node_fd = -1;
	fk.rng = ((uint64_t)take(&in, 4) << 32 | take(&in, 4)) | 1;
	fk.ctl_fd = eventfd(0, EFD_CLOEXEC);
	if (fk.ctl_fd < 0 || sd_event_new(&event) < 0)
		abort();
	a = prepare("a");
	offers[0] = prepare("a");
	offers[1] = prepare("b");
	cc = vc_conf_camera(conf, "a");
	if (vc_session_new(event, fk.ctl_fd, cc, a, VIACAM_ID_AUTO, &s, NULL) < 0)
		goto out;
	while (in.left && vc_session_attached(s)) {
		uint32_t op = take(&in, 1);
		struct viacam_event_stream es;

		switch (op % 9) {
		case 0:	/* a consumer starts streaming an offered mode, or anything */
		case 1: {
			pick_mode(&in, offers[!on_a], op % 9 == 0, &es);
			consumer_mode(&es);
			send(s, VIACAM_EVENT_STREAM_START, &es, sizeof(es));
			break;
		}
		case 2:
			send(s, VIACAM_EVENT_STREAM_STOP, NULL, 0);
			break;
		case 3: {
			uint32_t v = take(&in, 1);
			struct viacam_event_consumers c = { .streaming = v & 3, .open = v >> 2 };

			send(s, VIACAM_EVENT_CONSUMERS, &c, sizeof(c));
			break;
		}
		case 4: {
			static const uint32_t ids[] = { V4L2_CID_BRIGHTNESS, V4L2_CID_CONTRAST,
							V4L2_CID_HFLIP, V4L2_CID_POWER_LINE_FREQUENCY,
							0, 0xffffffff };
			struct viacam_event_ctrl c = { 0 };

			c.id = ids[take(&in, 1) % (sizeof(ids) / sizeof(ids[0]))];
			c.value = (int64_t)((uint64_t)take(&in, 4) << 32 | take(&in, 4));
			send(s, VIACAM_EVENT_CTRL, &c, sizeof(c));
			break;
		}
		case 5: {	/* S_PARM while streaming */
			uint32_t v = take(&in, 1);

			pick_mode(&in, offers[!on_a], v & 1, &es);
			if (v & 2) {	/* the same format, another rate */
				es.pixelformat = fk.pixelformat;
				es.width = fk.width;
				es.height = fk.height;
			}
			consumer_mode(&es);
			send(s, VIACAM_EVENT_INTERVAL, &es, sizeof(es));
			break;
		}
		case 6:
			for (uint32_t n = take(&in, 1) % 8 + 1; n--;)
				vc_session_pump(s);
			break;
		case 7: {	/* the config was edited: the other section's backend */
			struct vc_prepared *p = (take(&in, 1) & 1) ? prepare(on_a ? "b" : "a") : NULL;

			if (p)
				on_a = !on_a;
			vc_session_update(s, cc, p);
			break;
		}
		default:
			send(s, take(&in, 4), NULL, 0);	/* an event it does not know */
			break;
		}
	}
out:
	vc_session_free(s, true);
	sd_event_unref(event);
	vc_prepared_free(offers[0]);
	vc_prepared_free(offers[1]);
	close(fk.ctl_fd);	/* the node's fd is the session's to close */
	for (unsigned int i = 0; i < FAKE_BUFS; i++)
		if (fk.map[i])
			abort();	/* a buffer the session left mapped */
	return 0;
}
