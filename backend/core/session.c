// SPDX-License-Identifier: GPL-2.0-only
/*
 * session.c - one camera served by viacamd.
 *
 * A session owns the camera's backend node (opened non-blocking) and one backend instance.
 * It declares the backend's offer and controls to the bridge and listens to the node's
 * events (EPOLLPRI only: polling an idle output node for POLLOUT would start vb2's write()
 * emulation). On the first streaming consumer it starts the backend, allocates the node's
 * MMAP buffers and runs a timer at the negotiated interval; each tick takes a free buffer
 * (never queued yet, or dequeued without blocking), lets the backend fill it (directly, or
 * into a scratch frame that libv4lconvert converts) and queues it. A backend with its own
 * clock (backend.h, clock_fd) replaces the timer: the session fills a buffer whenever the
 * backend's fd is readable, and when every buffer is with the bridge the frame is taken
 * into the scratch frame and dropped, so the fd's readiness is always consumed. After the last consumer
 * stops, everything is released again: nothing runs while nobody watches.
 *
 * A backend swap while streaming keeps the node, its buffers and the timer: the old instance
 * is stopped, the new one started at the same format, and the consumer sees the next frame
 * from the new source. When the new instance cannot produce the streaming format, it waits
 * in s->pending until the stream stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "convert.h"
#include "log.h"
#include "offer.h"
#include "session.h"
#include "worker.h"

#define NR_BUFFERS 4
#define NR_LEND_MAPS 16	/* mappings of lent capture buffers kept, by lend id */

struct vc_session {
	sd_event *event;
	int ctl_fd;		/* /dev/viacam (the daemon's) */
	const struct vc_cam_conf *cc;	/* the section (in the daemon's current vc_conf) */
	char name[VC_NAME_LEN];
	struct viacam_camera cam;	/* as QUERY/ADD returned it */
	int fd;			/* backend node, O_NONBLOCK */
	sd_event_source *io;	/* EPOLLPRI on fd: the bridge's events */
	sd_event_source *timer;	/* frame slots while streaming (backends without a clock) */
	sd_event_source *clock;	/* the started backend's clock_fd, if it has one */

	struct vc_prepared *cur;	/* the backend in use */
	struct vc_prepared *pending;	/* a swap that waits for the stream to stop */
	bool formats_pending;	/* S_FORMATS said EBUSY: declare again when idle */
	bool ctrls_pending;	/* S_CTRLS said EBUSY: declare again when the node is closed */
	int64_t values[VC_MAX_CTRLS];	/* current control values, by cur->ctrls index */
	unsigned int open;	/* capture file handles, from VIACAM_EVENT_CONSUMERS */

	/* streaming */
	bool streaming;
	bool started;		/* cur's start() succeeded */
	bool source_gone;	/* produce() said -ENODEV; logged */
	const struct vc_offer *offer;
	struct vc_mode mode;	/* what the consumer gets */
	struct v4l2_pix_format pix;	/* the node's format */
	struct {
		void *mem;
		size_t len;
		bool queued;
	} bufs[NR_BUFFERS];
	unsigned int nbufs;
	uint8_t *scratch;	/* native frame before conversion */
	size_t scratch_len;
	struct vc_convert *conv;
	uint64_t sequence;
	uint64_t next_ns;
	uint64_t interval_ns;
	uint64_t produced, skipped, failed;
	/*
	 * Zero copies (VIACAM_IOC_LEND): frames are made straight into a consumer's capture
	 * buffer when the bridge can lend one. Its mappings are kept by lend id (the same id is
	 * the same memory) and dropped when the stream stops or the table is full.
	 */
	bool lend_off;		/* the bridge cannot lend (older module): copy path only */
	struct {
		uint32_t id;
		void *mem;
		size_t len;
	} lmaps[NR_LEND_MAPS];
	unsigned int nlmaps;
	uint64_t lent;		/* frames of this stream made in lent buffers */
};

bool vc_log_journal;

static int session_stream_start(struct vc_session *s, const struct viacam_event_stream *es);
static void session_stream_stop(struct vc_session *s, const char *why);
static void stop_backend(struct vc_session *s);
static int pace(struct vc_session *s);

const char *vc_session_name(const struct vc_session *s)
{
	return s->name;
}

const char *vc_session_backend_name(const struct vc_session *s)
{
	return s->cur->ops->name;
}

uint32_t vc_session_camera_id(const struct vc_session *s)
{
	return s->cam.id;
}

bool vc_session_streaming(const struct vc_session *s)
{
	return s->streaming;
}

unsigned int vc_session_open_count(const struct vc_session *s)
{
	return s->open;
}

const char *vc_session_describe(const struct vc_session *s, char *buf, size_t len)
{
	uint32_t n = s->cam.capture_count ? s->cam.capture_count : 1;
	size_t o;

	/* The label as the bridge has it: checked printable at load (text.h), still escaped. */
	o = (size_t)snprintf(buf, len, "camera %u '", s->cam.id);
	if (o < len)
		vc_escape(buf + o, len - o, s->cam.label, strnlen(s->cam.label, sizeof(s->cam.label)));
	o = strlen(buf);
	if (o < len)
		snprintf(buf + o, len - o, "', capture /dev/video%d", s->cam.capture_nr);
	for (uint32_t i = 1; i < n && i < VIACAM_MAX_CAPTURES; i++) {
		o = strlen(buf);
		if (o < len)
			snprintf(buf + o, len - o, ", /dev/video%d", s->cam.capture_nrs[i - 1]);
	}
	return buf;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *mode_str(const struct vc_mode *m, char *buf, size_t len)
{
	char fc[5];

	snprintf(buf, len, "%s %ux%u at %g fps", vc_fourcc_str(m->pixelformat, fc), m->width,
		 m->height, m->interval_num ? (double)m->interval_den / m->interval_num : 0.0);
	return buf;
}

/* ---------------------------------------------------------------------------
 * Preparing a backend (the offer itself is computed in offer.c)
 */

static int apply_ctrl_defaults(struct vc_prepared *p, const struct vc_cam_conf *cc,
			       const char *path, struct vc_msgs *msgs)
{
	int r = 0;

	for (size_t i = 0; i < cc->nctrls; i++) {
		const struct vc_ctrl_default *d = &cc->ctrls[i];
		struct viacam_ctrl *c = NULL;
		char key[VIACAM_NAME_LEN * 2], names[512] = "";

		for (size_t k = 0; k < p->nctrls; k++) {
			vc_ctrl_key_name(p->ctrls[k].name, key, sizeof(key));
			if (strcmp(key, d->name) == 0)
				c = &p->ctrls[k];
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 k ? ", " : "", key);
		}
		if (!c) {
			vc_msgs_add_at(msgs, path, d->line, "camera %s: backend '%s' has no control '%s' (it has: %s)",
				    cc->name, cc->backend, d->name,
				    p->nctrls ? names : "none");
			r = -EINVAL;
			continue;
		}
		if (d->value < c->minimum || d->value > c->maximum ||
		    (c->type == V4L2_CTRL_TYPE_MENU && !c->menu[d->value][0]) ||
		    (c->type == V4L2_CTRL_TYPE_INTEGER && c->step > 1 &&
		     (uint64_t)(d->value - c->minimum) % c->step)) {
			vc_msgs_add_at(msgs, path, d->line, "camera %s: %" PRId64 " is out of range for %s (%" PRId64 "..%" PRId64 ")",
				    cc->name, d->value, d->name, (int64_t)c->minimum,
				    (int64_t)c->maximum);
			r = -EINVAL;
			continue;
		}
		c->default_value = d->value;
	}
	return r;
}

int vc_prepare(const struct vc_cam_conf *cc, const char *path, bool check_only,
	       struct vc_prepared **ret, struct vc_msgs *msgs)
{
	struct vc_backend_conf bc;
	struct vc_error err = { 0 };
	struct vc_prepared *p;
	int r;

	*ret = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ops = vc_backend_find(cc->backend);
	/* Media parsers and network clients run in a sandboxed worker process (worker.h). */
	if (p->ops && vc_worker_exe && vc_worker_isolates(p->ops))
		p->ops = vc_worker_proxy(p->ops);
	if (!p->ops) {
		vc_msgs_add_at(msgs, path, cc->backend_line ? cc->backend_line : cc->line,
			       "camera %s: unknown backend '%s'", cc->name, cc->backend);
		free(p);
		return -EINVAL;
	}
	vc_cam_backend_conf(cc, &bc);
	bc.check_only = check_only;
	r = p->ops->create(&bc, &p->priv, &err);
	if (r < 0) {
		vc_msgs_add_at(msgs, path, err.line ? err.line : cc->line, "camera %s: %s", cc->name,
			       err.msg[0] ? err.msg : strerror(-r));
		free(p);
		return r;
	}
	r = p->ops->describe(p->priv, &p->native);
	if (r < 0) {
		vc_msgs_add_at(msgs, path, cc->line, "camera %s: backend '%s' cannot describe its formats: %s",
			       cc->name, cc->backend, strerror(-r));
		goto fail;
	}
	if (p->ops->controls) {
		r = p->ops->controls(p->priv, p->ctrls);
		if (r < 0) {
			vc_msgs_add_at(msgs, path, cc->line, "camera %s: backend '%s' cannot list its controls: %s",
				       cc->name, cc->backend, strerror(-r));
			goto fail;
		}
		p->nctrls = (size_t)r > VC_MAX_CTRLS ? VC_MAX_CTRLS : (size_t)r;
	}
	r = vc_offer_build(p, cc, path, msgs);
	if (r < 0)
		goto fail;
	r = apply_ctrl_defaults(p, cc, path, msgs);
	if (r < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	p->ops->release(p->priv);
	free(p);
	return r;
}

void vc_prepared_free(struct vc_prepared *p)
{
	if (!p)
		return;
	p->ops->release(p->priv);
	free(p);
}

/* ---------------------------------------------------------------------------
 * Declarations
 */

static int declare_formats(struct vc_session *s)
{
	struct viacam_format list[VC_MAX_MODES];
	struct viacam_formats f = { .count = (uint32_t)s->cur->noffers };

	for (size_t i = 0; i < s->cur->noffers; i++)
		list[i] = s->cur->offers[i].fmt;
	f.formats = (uintptr_t)list;
	if (ioctl(s->fd, VIACAM_IOC_S_FORMATS, &f) < 0) {
		if (errno == EBUSY) {
			vc_cam_log(s, "the new offer drops the format being streamed; it applies when the stream stops");
			s->formats_pending = true;
			return -EBUSY;
		}
		vc_cam_warn(s, "declaring %zu formats failed: %s", s->cur->noffers, strerror(errno));
		return -errno;
	}
	s->formats_pending = false;
	return 0;
}

static int declare_ctrls(struct vc_session *s)
{
	struct viacam_ctrls c = { .count = (uint32_t)s->cur->nctrls,
				  .ctrls = (uintptr_t)s->cur->ctrls };

	if (ioctl(s->fd, VIACAM_IOC_S_CTRLS, &c) < 0) {
		if (errno == EBUSY) {
			vc_cam_log(s, "new controls wait until no application has the camera open");
			s->ctrls_pending = true;
			return -EBUSY;
		}
		vc_cam_warn(s, "declaring %zu controls failed: %s", s->cur->nctrls, strerror(errno));
		return -errno;
	}
	s->ctrls_pending = false;
	/*
	 * With the capture node closed the bridge built its controls anew: they hold the
	 * defaults. With it open, only ranges changed and the values the consumers set stay
	 * (clamped to the new range, as the bridge does).
	 */
	for (size_t i = 0; i < s->cur->nctrls; i++) {
		const struct viacam_ctrl *d = &s->cur->ctrls[i];

		if (!s->open)
			s->values[i] = d->default_value;
		else if (s->values[i] < d->minimum)
			s->values[i] = d->minimum;
		else if (s->values[i] > d->maximum)
			s->values[i] = d->maximum;
		if (s->cur->ops->set_ctrl)
			s->cur->ops->set_ctrl(s->cur->priv, s->cur->ctrls[i].id, s->values[i]);
	}
	return 0;
}

static void declare_info(struct vc_session *s)
{
	struct viacam_info info = { 0 };

	snprintf(info.card, sizeof(info.card), "%s", s->cc->label);
	if (ioctl(s->fd, VIACAM_IOC_S_INFO, &info) < 0)
		vc_cam_warn(s, "setting the card name failed: %s", strerror(errno));
}

/* ---------------------------------------------------------------------------
 * The frame pump
 */

static void lend_unmap_all(struct vc_session *s)
{
	for (unsigned int i = 0; i < s->nlmaps; i++)
		munmap(s->lmaps[i].mem, s->lmaps[i].len);
	s->nlmaps = 0;
}

static void release_buffers(struct vc_session *s)
{
	struct v4l2_requestbuffers rb = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					  .memory = V4L2_MEMORY_MMAP };
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;

	lend_unmap_all(s);
	if (s->fd >= 0)
		ioctl(s->fd, VIDIOC_STREAMOFF, &type);
	for (unsigned int i = 0; i < s->nbufs; i++)
		if (s->bufs[i].mem)
			munmap(s->bufs[i].mem, s->bufs[i].len);
	memset(s->bufs, 0, sizeof(s->bufs));
	s->nbufs = 0;
	if (s->fd >= 0)
		ioctl(s->fd, VIDIOC_REQBUFS, &rb);
}

static int setup_buffers(struct vc_session *s)
{
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2_requestbuffers rb = { .count = NR_BUFFERS,
					  .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					  .memory = V4L2_MEMORY_MMAP };
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;

	/* In declared mode the node's format is the consumer's: S_FMT just confirms it. */
	if (ioctl(s->fd, VIDIOC_G_FMT, &fmt) < 0 || ioctl(s->fd, VIDIOC_S_FMT, &fmt) < 0)
		return -errno;
	s->pix = fmt.fmt.pix;
	if (s->pix.pixelformat != s->mode.pixelformat || s->pix.width != s->mode.width ||
	    s->pix.height != s->mode.height)
		return -EPROTO;
	if (ioctl(s->fd, VIDIOC_REQBUFS, &rb) < 0)
		return -errno;
	if (rb.count < 2 || rb.count > NR_BUFFERS)
		return -ENOMEM;
	s->nbufs = rb.count;
	for (unsigned int i = 0; i < s->nbufs; i++) {
		struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP };
		void *mem;

		if (ioctl(s->fd, VIDIOC_QUERYBUF, &b) < 0)
			return -errno;
		mem = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, b.m.offset);
		if (mem == MAP_FAILED)
			return -errno;
		s->bufs[i].mem = mem;
		s->bufs[i].len = b.length;
		s->bufs[i].queued = false;
	}
	if (ioctl(s->fd, VIDIOC_STREAMON, &type) < 0)
		return -errno;
	return 0;
}

/* A buffer the session may fill: never queued, or dequeued now without blocking. */
static int free_buffer(struct vc_session *s)
{
	for (;;) {
		struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP };

		if (ioctl(s->fd, VIDIOC_DQBUF, &b) < 0) {
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		if (b.index < s->nbufs)
			s->bufs[b.index].queued = false;
	}
	for (unsigned int i = 0; i < s->nbufs; i++)
		if (!s->bufs[i].queued)
			return (int)i;
	return -EAGAIN;
}

static void camera_gone(struct vc_session *s)
{
	vc_cam_warn(s, "the camera was removed from the bridge (ENODEV); the session stops");
	session_stream_stop(s, NULL);
	sd_event_source_set_enabled(s->io, SD_EVENT_OFF);
	release_buffers(s);
	close(s->fd);
	s->fd = -1;
}

/*
 * Logs what the backend had to say with this frame (backend.h: vc_frame.note), escaped: a note
 * may quote its source (a server's reason phrase, a device's name), which must not act in the
 * log or forge a line there (text.h).
 */
static int noted(struct vc_session *s, struct vc_frame *fr, int r)
{
	char esc[sizeof(fr->note) * 4];

	if (fr->note[0]) {
		fr->note[sizeof(fr->note) - 1] = 0;
		vc_cam_warn(s, "%s", vc_escape(esc, sizeof(esc), fr->note, strlen(fr->note)));
	}
	return r;
}

/* A frame of a clocked backend that no buffer can take: consumed and dropped. */
static void drop_one(struct vc_session *s)
{
	const struct vc_prepared *p = s->cur;
	struct vc_frame fr = {
		.data = s->scratch,
		.size = s->scratch_len,
		.mode = &p->native.v[s->offer->native],
		.sequence = s->sequence,
		.time_ns = now_ns(),
	};

	fr.bytesperline = vc_bytesperline(fr.mode->pixelformat, fr.mode->width);
	noted(s, &fr, p->ops->produce(p->priv, &fr));
}

/*
 * A consumer's capture buffer to make the next frame in (VIACAM_IOC_LEND), mapped: its
 * address, or NULL when none can be lent now (the frame then takes a backend buffer). A
 * bridge that does not know the call (ENOTTY, EINVAL) is not asked again.
 */
static void *lend_take(struct vc_session *s, struct viacam_lend *l)
{
	void *mem;

	if (s->lend_off)
		return NULL;
	memset(l, 0, sizeof(*l));
	if (ioctl(s->fd, VIACAM_IOC_LEND, l) < 0) {
		if (errno == ENOTTY || errno == EINVAL)
			s->lend_off = true;
		return NULL;	/* EAGAIN, EBUSY, ENODEV...: the copy path says what it must */
	}
	for (unsigned int i = 0; i < s->nlmaps; i++) {
		if (s->lmaps[i].id == l->id) {
			close(l->fd);
			return s->lmaps[i].mem;
		}
	}
	if (s->nlmaps == NR_LEND_MAPS)
		lend_unmap_all(s);	/* consumers came and went: start afresh */
	mem = l->length < s->pix.sizeimage ? MAP_FAILED :
	      mmap(NULL, l->length, PROT_READ | PROT_WRITE, MAP_SHARED, l->fd, 0);
	close(l->fd);
	if (mem == MAP_FAILED) {
		ioctl(s->fd, VIACAM_IOC_UNLEND, l);
		return NULL;
	}
	s->lmaps[s->nlmaps].id = l->id;
	s->lmaps[s->nlmaps].mem = mem;
	s->lmaps[s->nlmaps++].len = l->length;
	return mem;
}

/*
 * Fills @dst (a backend buffer, or a lent capture buffer) with the next frame and sets
 * *@capture_ns to the source's capture time (0: unknown). Returns the bytes used, -EAGAIN
 * (no frame this slot) or an error.
 */
static int fill(struct vc_session *s, void *dst, uint64_t *capture_ns)
{
	const struct vc_prepared *p = s->cur;
	const struct vc_mode *native = &p->native.v[s->offer->native];
	struct vc_frame fr = {
		.sequence = s->sequence,
		.time_ns = s->next_ns,
	};
	int r;

	if (!s->offer->convert) {
		fr.data = dst;
		fr.size = s->pix.sizeimage;
		fr.mode = native;
		fr.bytesperline = s->pix.bytesperline;
		r = noted(s, &fr, p->ops->produce(p->priv, &fr));
		*capture_ns = fr.capture_ns;
		return r < 0 ? r : (int)fr.bytesused;
	}
	fr.data = s->scratch;
	fr.size = s->scratch_len;
	fr.mode = native;
	fr.bytesperline = vc_bytesperline(native->pixelformat, native->width);
	r = noted(s, &fr, p->ops->produce(p->priv, &fr));
	if (r < 0)
		return r;
	*capture_ns = fr.capture_ns;
	r = vc_convert_frame(s->conv, native, s->scratch, fr.bytesused, &s->mode,
			     dst, s->pix.sizeimage);
	if (r < 0 && s->failed++ == 0)
		vc_cam_warn(s, "frame conversion failed: %s", vc_convert_error(s->conv));
	return r;
}

/* The frame in lent buffer @l is made (@r bytes, 0: the format's size): hand it over. */
static void lend_deliver(struct vc_session *s, struct viacam_lend *l, int r, uint64_t capture_ns)
{
	l->bytesused = r > 0 ? (uint32_t)r : s->pix.sizeimage;
	l->timestamp = capture_ns;
	if (ioctl(s->fd, VIACAM_IOC_DELIVER, l) == 0) {
		s->produced++;
		s->lent++;
		return;
	}
	if (errno == ENODEV) {
		camera_gone(s);
		return;
	}
	/* ESTALE: its consumer stopped meanwhile, and the frame with it. */
	if (errno != ESTALE && s->failed++ == 0)
		vc_cam_warn(s, "handing over a frame failed: %s", strerror(errno));
	s->skipped++;
}

static void pump_one(struct vc_session *s)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP };
	struct viacam_lend l;
	uint64_t capture_ns = 0;
	void *dst;
	int i = -1, r;

	if (!s->started || s->source_gone)
		return;
	/* Zero copies: straight into a consumer's buffer when the bridge lends one. */
	dst = lend_take(s, &l);
	if (!dst) {
		i = free_buffer(s);
		if (i == -ENODEV) {
			camera_gone(s);
			return;
		}
		if (i < 0) {	/* every buffer is with the bridge: skip the slot */
			if (s->clock)
				drop_one(s);
			s->skipped++;
			return;
		}
		dst = s->bufs[i].mem;
	}
	r = fill(s, dst, &capture_ns);
	if (r < 0 && i < 0)	/* no frame for the lent buffer: it goes back unfilled */
		ioctl(s->fd, VIACAM_IOC_UNLEND, &l);
	if (r >= 0 && i < 0) {
		lend_deliver(s, &l, r, capture_ns);
		return;
	}
	if (r == -ENODEV) {
		vc_cam_warn(s, "the source is gone; consumers get repeated frames until the backend changes or the stream restarts");
		s->source_gone = true;
		if (s->clock)	/* its fd may stay readable: stop listening */
			sd_event_source_set_enabled(s->clock, SD_EVENT_OFF);
		return;
	}
	if (r < 0) {
		if (r != -EAGAIN && s->failed++ == 0)
			vc_cam_warn(s, "the backend failed to produce a frame: %s", strerror(-r));
		/* A clock's wake-up without a frame (news of the source) is no lost slot. */
		if (!s->clock || r != -EAGAIN)
			s->skipped++;
		return;
	}
	b.index = (unsigned int)i;
	b.bytesused = r > 0 ? (uint32_t)r : s->pix.sizeimage;
	b.field = V4L2_FIELD_NONE;
	/* The backend queue copies this time to the capture buffer (uapi.md, "Timestamps"). */
	b.timestamp.tv_sec = (time_t)(capture_ns / 1000000000u);
	b.timestamp.tv_usec = (suseconds_t)(capture_ns % 1000000000u / 1000u);
	if (ioctl(s->fd, VIDIOC_QBUF, &b) < 0) {
		if (errno == ENODEV) {
			camera_gone(s);
			return;
		}
		if (s->failed++ == 0)
			vc_cam_warn(s, "queueing a frame failed: %s", strerror(errno));
		return;
	}
	s->bufs[i].queued = true;
	s->produced++;
}

/* The backend's clock: a frame (or news of the source) is ready. */
static int on_clock(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct vc_session *s = userdata;

	(void)src;
	(void)fd;
	(void)revents;
	s->next_ns = now_ns();
	pump_one(s);
	s->sequence++;
	return 0;
}

static int on_tick(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct vc_session *s = userdata;
	uint64_t now = now_ns();

	(void)usec;
	pump_one(s);
	if (s->fd < 0 || !s->streaming)
		return 0;
	s->sequence++;
	s->next_ns += s->interval_ns;
	/* Fell behind by more than two slots (a stall): start counting from now. */
	if (s->next_ns + 2 * s->interval_ns < now)
		s->next_ns = now + s->interval_ns;
	sd_event_source_set_time(src, s->next_ns / 1000);
	sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
	return 0;
}

/* Starts s->cur at s->offer. */
static int start_backend(struct vc_session *s)
{
	const struct vc_mode *native = &s->cur->native.v[s->offer->native];
	struct vc_error err = { 0 };
	char buf[64];
	int fd, r;

	for (size_t i = 0; i < s->cur->nctrls && s->cur->ops->set_ctrl; i++)
		s->cur->ops->set_ctrl(s->cur->priv, s->cur->ctrls[i].id, s->values[i]);
	r = s->cur->ops->start(s->cur->priv, native, &err);
	if (r < 0) {
		vc_cam_warn(s, "backend '%s' failed to start at %s: %s", s->cur->ops->name,
			   mode_str(native, buf, sizeof(buf)), err.msg[0] ? err.msg : strerror(-r));
		return r;
	}
	s->started = true;
	s->source_gone = false;
	free(s->scratch);
	s->scratch = NULL;
	fd = s->cur->ops->clock_fd ? s->cur->ops->clock_fd(s->cur->priv) : -1;
	if (fd >= 0) {
		r = sd_event_add_io(s->event, &s->clock, fd, EPOLLIN, on_clock, s);
		if (r < 0) {
			vc_cam_warn(s, "cannot listen to the backend's clock: %s", strerror(-r));
			stop_backend(s);
			return r;
		}
	}
	if (s->offer->convert || s->clock) {
		s->scratch_len = vc_sizeimage(native->pixelformat, native->width, native->height);
		if (!s->scratch_len)
			s->scratch_len = (size_t)native->width * native->height * 4;
		s->scratch = malloc(s->scratch_len);
		if (!s->conv && s->offer->convert)
			s->conv = vc_convert_new();
		if (!s->scratch || (s->offer->convert && !s->conv)) {
			stop_backend(s);
			return -ENOMEM;
		}
	}
	return 0;
}

static void stop_backend(struct vc_session *s)
{
	s->clock = sd_event_source_disable_unref(s->clock);
	if (s->started)
		s->cur->ops->stop(s->cur->priv);
	s->started = false;
}

/* Frame slots come from the backend's clock, or from the session's timer from now on. */
static int pace(struct vc_session *s)
{
	int r;

	s->next_ns = now_ns();
	if (s->clock) {
		if (s->timer)
			sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
		return 0;
	}
	if (!s->timer) {
		r = sd_event_add_time(s->event, &s->timer, CLOCK_MONOTONIC, s->next_ns / 1000, 1,
				      on_tick, s);
		if (r < 0)
			return r;
	} else {
		sd_event_source_set_time(s->timer, s->next_ns / 1000);
	}
	sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
	return 0;
}

static int session_stream_start(struct vc_session *s, const struct viacam_event_stream *es)
{
	char buf[64], conv[32] = "";
	int r;

	if (s->streaming)
		session_stream_stop(s, NULL);
	s->offer = vc_offer_find(s->cur, es->pixelformat, es->width, es->height,
				 es->interval_num, es->interval_den);
	if (!s->offer) {
		char fc[5];

		vc_cam_warn(s, "a consumer streams %s %ux%u, which this backend does not offer; not feeding it",
			   vc_fourcc_str(es->pixelformat, fc), es->width, es->height);
		return -EINVAL;
	}
	s->mode = (struct vc_mode){ es->pixelformat, es->width, es->height, es->interval_num,
				    es->interval_den };
	r = start_backend(s);
	if (r < 0)
		return r;
	r = setup_buffers(s);
	if (r < 0) {
		vc_cam_warn(s, "cannot set up the backend node's buffers: %s", strerror(-r));
		release_buffers(s);
		stop_backend(s);
		return r;
	}
	s->streaming = true;
	s->sequence = 0;
	s->produced = s->skipped = s->failed = s->lent = 0;
	s->interval_ns = (uint64_t)es->interval_num * 1000000000ull / es->interval_den;
	if (!s->interval_ns)
		s->interval_ns = 33333333;
	r = pace(s);
	if (r < 0) {
		vc_cam_warn(s, "cannot add a timer: %s", strerror(-r));
		session_stream_stop(s, NULL);
		return r;
	}
	if (s->offer->convert) {
		char fc[5];

		snprintf(conv, sizeof(conv), ", converted from %s",
			 vc_fourcc_str(s->cur->native.v[s->offer->native].pixelformat, fc));
	}
	vc_cam_log(s, "streaming %s from backend '%s'%s", mode_str(&s->mode, buf, sizeof(buf)),
		   s->cur->ops->name, conv);
	return 0;
}

/* Applies what waited for the stream to stop. */
static void apply_pending_idle(struct vc_session *s)
{
	if (s->pending) {
		vc_cam_log(s, "switching to backend '%s' now that the stream stopped",
			   s->pending->ops->name);
		vc_prepared_free(s->cur);
		s->cur = s->pending;
		s->pending = NULL;
		s->formats_pending = s->ctrls_pending = true;
	}
	if (s->formats_pending)
		declare_formats(s);
	if (s->ctrls_pending)
		declare_ctrls(s);
}

static void session_stream_stop(struct vc_session *s, const char *why)
{
	if (!s->streaming)
		return;
	if (s->timer)
		sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
	stop_backend(s);
	release_buffers(s);
	s->streaming = false;
	free(s->scratch);
	s->scratch = NULL;
	if (why)
		vc_cam_log(s, "%s (%" PRIu64 " frames sent, %" PRIu64 " slots skipped), %" PRIu64
			   " of them made in a consumer's own buffer", why, s->produced, s->skipped,
			   s->lent);
}

/* The consumer changed the frame interval while streaming. */
static void session_interval(struct vc_session *s, const struct viacam_event_stream *es)
{
	const struct vc_offer *o;
	char buf[64];

	if (!s->streaming)
		return;
	o = vc_offer_find(s->cur, es->pixelformat, es->width, es->height, es->interval_num,
			  es->interval_den);
	if (!o)
		return;
	stop_backend(s);
	s->offer = o;
	s->mode.interval_num = es->interval_num;
	s->mode.interval_den = es->interval_den;
	if (start_backend(s) < 0 || pace(s) < 0)
		return;
	s->interval_ns = (uint64_t)es->interval_num * 1000000000ull / es->interval_den;
	vc_cam_log(s, "now %s", mode_str(&s->mode, buf, sizeof(buf)));
}

static void session_ctrl(struct vc_session *s, const struct viacam_event_ctrl *ec)
{
	for (size_t i = 0; i < s->cur->nctrls; i++) {
		if (s->cur->ctrls[i].id != ec->id)
			continue;
		s->values[i] = ec->value;
		if (s->cur->ops->set_ctrl) {
			int r = s->cur->ops->set_ctrl(s->cur->priv, ec->id, ec->value);

			if (r < 0)
				vc_cam_warn(s, "control '%s' = %" PRId64 " failed: %s",
					   s->cur->ctrls[i].name, (int64_t)ec->value, strerror(-r));
		}
		return;
	}
}

/* Streaming consumers but no stream here (adopted a busy camera, or missed the start). */
static void start_from_query(struct vc_session *s)
{
	struct viacam_camera c = { .id = s->cam.id };
	struct viacam_event_stream es = { 0 };

	if (ioctl(s->ctl_fd, VIACAM_IOC_QUERY, &c) < 0)
		return;
	es.pixelformat = c.pixelformat;
	es.width = c.width;
	es.height = c.height;
	es.interval_num = c.interval_num;
	es.interval_den = c.interval_den;
	vc_cam_log(s, "a consumer is already streaming; feeding it");
	session_stream_start(s, &es);
}

void vc_session_event(struct vc_session *s, const struct v4l2_event *ev)
{
	switch (ev->type) {
	case VIACAM_EVENT_CONSUMERS: {
		const struct viacam_event_consumers *c = (const void *)ev->u.data;

		s->open = c->open;
		if (c->streaming && !s->streaming)
			start_from_query(s);
		else if (!c->streaming && s->streaming)
			session_stream_stop(s, "the last consumer stopped");
		if (!c->streaming)
			apply_pending_idle(s);
		if (!c->open && s->ctrls_pending)
			declare_ctrls(s);
		break;
	}
	case VIACAM_EVENT_STREAM_START:
		session_stream_start(s, (const void *)ev->u.data);
		break;
	case VIACAM_EVENT_STREAM_STOP:
		session_stream_stop(s, "the last consumer stopped");
		apply_pending_idle(s);
		break;
	case VIACAM_EVENT_CTRL:
		session_ctrl(s, (const void *)ev->u.data);
		break;
	case VIACAM_EVENT_INTERVAL:
		session_interval(s, (const void *)ev->u.data);
		break;
	default:
		break;
	}
}

void vc_session_pump(struct vc_session *s)
{
	if (s->fd >= 0 && s->streaming)
		pump_one(s);
}

bool vc_session_attached(const struct vc_session *s)
{
	return s->fd >= 0;
}

static int on_event(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct vc_session *s = userdata;
	struct v4l2_event ev;

	(void)src;
	(void)revents;
	for (;;) {
		memset(&ev, 0, sizeof(ev));
		if (ioctl(fd, VIDIOC_DQEVENT, &ev) < 0) {
			if (errno == ENODEV)
				camera_gone(s);
			return 0;
		}
		vc_session_event(s, &ev);
		if (s->fd < 0)
			return 0;
	}
}

/* ---------------------------------------------------------------------------
 * Life
 */

static int open_node(struct vc_session *s, struct vc_error *err)
{
	static const uint32_t events[] = {
		VIACAM_EVENT_STREAM_START, VIACAM_EVENT_STREAM_STOP, VIACAM_EVENT_CTRL,
		VIACAM_EVENT_INTERVAL, VIACAM_EVENT_CONSUMERS,
	};
	char path[32];
	int r;

	snprintf(path, sizeof(path), "/dev/video%d", s->cam.backend_nr);
	s->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (s->fd < 0) {
		r = -errno;
		vc_cam_warn(s, "%s: %s", path, strerror(-r));
		return vc_err(err, 0, r, "%s: %s", path, strerror(-r));
	}
	/* The consumer count last, with its initial value: a stream already running shows. */
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		struct v4l2_event_subscription sub = { .type = events[i] };

		if (events[i] == VIACAM_EVENT_CONSUMERS)
			sub.flags = V4L2_EVENT_SUB_FL_SEND_INITIAL;
		if (ioctl(s->fd, VIDIOC_SUBSCRIBE_EVENT, &sub) < 0) {
			r = -errno;
			vc_cam_warn(s, "%s: subscribing to events: %s", path, strerror(-r));
			return vc_err(err, 0, r, "%s: subscribing to events: %s", path,
				      strerror(-r));
		}
	}
	r = sd_event_add_io(s->event, &s->io, s->fd, EPOLLPRI, on_event, s);
	if (r < 0) {
		vc_cam_warn(s, "cannot watch %s: %s", path, strerror(-r));
		return vc_err(err, 0, r, "cannot watch %s: %s", path, strerror(-r));
	}
	return 0;
}

static int create_camera(struct vc_session *s, uint32_t adopt_id, struct vc_error *err)
{
	struct viacam_camera c = { 0 };

	if (adopt_id != VIACAM_ID_AUTO) {
		c.id = adopt_id;
		if (ioctl(s->ctl_fd, VIACAM_IOC_QUERY, &c) == 0) {
			uint32_t n = c.capture_count ? c.capture_count : 1;

			s->cam = c;
			vc_cam_log(s, "adopted camera %u: capture /dev/video%d, backend /dev/video%d",
				   c.id, c.capture_nr, c.backend_nr);
			if (n != s->cc->consumers)
				vc_cam_log(s, "note: the camera has %u capture node%s; consumers = %u applies when it is created anew (remove its section, reload, add it back)",
					   n, n == 1 ? "" : "s", s->cc->consumers);
			return 0;
		}
	}
	memset(&c, 0, sizeof(c));
	c.id = VIACAM_ID_AUTO;
	c.capture_nr = s->cc->video_nr;
	c.backend_nr = s->cc->backend_nr;
	c.timeout_ms = s->cc->timeout_ms;
	c.capture_count = s->cc->consumers;
	snprintf(c.label, sizeof(c.label), "%s", s->cc->label);
	if (ioctl(s->ctl_fd, VIACAM_IOC_ADD, &c) < 0) {
		int r = -errno;

		vc_cam_warn(s, "/dev/viacam: VIACAM_IOC_ADD: %s%s", strerror(-r),
			   r == -EPERM ? " (need CAP_SYS_ADMIN)" : "");
		return vc_err(err, 0, r, "VIACAM_IOC_ADD: %s%s", strerror(-r),
			      r == -EPERM ? " (need CAP_SYS_ADMIN)" : "");
	}
	s->cam = c;
	vc_cam_log(s, "created camera %u '%s': capture /dev/video%d, backend /dev/video%d", c.id,
		   c.label, c.capture_nr, c.backend_nr);
	for (uint32_t i = 1; i < c.capture_count && i < VIACAM_MAX_CAPTURES; i++)
		vc_cam_log(s, "capture node %u of camera %u: /dev/video%d", i + 1, c.id,
			   c.capture_nrs[i - 1]);
	if ((s->cc->video_nr >= 0 && c.capture_nr != s->cc->video_nr) ||
	    (s->cc->backend_nr >= 0 && c.backend_nr != s->cc->backend_nr))
		vc_cam_log(s, "note: the wanted node numbers were taken (asked video_nr=%d backend_nr=%d)",
			   s->cc->video_nr, s->cc->backend_nr);
	return 0;
}

static int session_attach(struct vc_session *s, uint32_t adopt_id, struct vc_error *err)
{
	int r = create_camera(s, adopt_id, err);

	if (r < 0)
		return r;
	r = open_node(s, err);
	if (r < 0)
		return r;
	declare_info(s);
	declare_ctrls(s);
	declare_formats(s);
	return 0;
}

static void session_detach(struct vc_session *s, bool remove)
{
	session_stream_stop(s, NULL);
	release_buffers(s);
	if (s->io)
		s->io = sd_event_source_disable_unref(s->io);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (remove && s->cam.id != VIACAM_ID_AUTO) {
		struct viacam_camera c = { .id = s->cam.id };

		if (ioctl(s->ctl_fd, VIACAM_IOC_REMOVE, &c) < 0 && errno != ENOENT &&
		    errno != ENODEV)
			vc_cam_warn(s, "removing camera %u failed: %s", s->cam.id, strerror(errno));
		else
			vc_cam_log(s, "removed camera %u", s->cam.id);
		s->cam.id = VIACAM_ID_AUTO;
	}
}

int vc_session_new(sd_event *event, int ctl_fd, const struct vc_cam_conf *cc,
		   struct vc_prepared *p, uint32_t adopt_id, struct vc_session **ret,
		   struct vc_error *err)
{
	struct vc_session *s = calloc(1, sizeof(*s));
	int r;

	*ret = NULL;
	if (!s) {
		vc_prepared_free(p);
		return vc_err(err, 0, -ENOMEM, "out of memory");
	}
	s->event = event;
	s->ctl_fd = ctl_fd;
	s->cc = cc;
	s->fd = -1;
	s->cur = p;
	s->cam.id = VIACAM_ID_AUTO;
	snprintf(s->name, sizeof(s->name), "%s", cc->name);
	for (size_t i = 0; i < p->nctrls; i++)	/* even if the bridge refuses them */
		s->values[i] = p->ctrls[i].default_value;
	r = session_attach(s, adopt_id, err);
	if (r < 0) {
		vc_session_free(s, true);
		return r;
	}
	vc_cam_log(s, "ready: backend '%s', %zu formats offered, %zu controls", p->ops->name,
		   p->noffers, p->nctrls);
	*ret = s;
	return 0;
}

void vc_session_free(struct vc_session *s, bool remove)
{
	if (!s)
		return;
	session_detach(s, remove);
	if (s->timer)
		s->timer = sd_event_source_disable_unref(s->timer);
	s->clock = sd_event_source_disable_unref(s->clock);
	vc_prepared_free(s->cur);
	vc_prepared_free(s->pending);
	vc_convert_free(s->conv);
	free(s->scratch);
	free(s);
}

/* Control values the consumers set carry over to the new backend's controls of the same id. */
static void remap_values(struct vc_session *s, const struct vc_prepared *old,
			 const struct vc_prepared *p)
{
	int64_t values[VC_MAX_CTRLS];

	for (size_t i = 0; i < p->nctrls; i++) {
		values[i] = p->ctrls[i].default_value;
		for (size_t k = 0; k < old->nctrls; k++)
			if (old->ctrls[k].id == p->ctrls[i].id)
				values[i] = s->values[k];
	}
	memcpy(s->values, values, sizeof(values[0]) * p->nctrls);
}

/* Swaps in @p at once (idle, or it can make the streaming format) or keeps it pending. */
static void swap_backend(struct vc_session *s, struct vc_prepared *p)
{
	const struct vc_offer *o = NULL;
	struct vc_prepared *old = s->cur;
	char buf[64];

	vc_prepared_free(s->pending);
	s->pending = NULL;
	if (s->streaming)
		o = vc_offer_find(p, s->mode.pixelformat, s->mode.width, s->mode.height,
				  s->mode.interval_num, s->mode.interval_den);
	if (s->streaming && !o) {
		vc_cam_log(s, "backend '%s' cannot produce the streaming %s; the change waits until the stream stops",
			   p->ops->name, mode_str(&s->mode, buf, sizeof(buf)));
		s->pending = p;
		return;
	}
	if (s->streaming) {
		stop_backend(s);
		s->cur = p;
		s->offer = o;
		remap_values(s, old, p);
		if (start_backend(s) < 0 || pace(s) < 0)
			vc_cam_log(s, "consumers get repeated frames until the stream restarts");
		else
			vc_cam_log(s, "backend '%s' took over the running stream (%s)", p->ops->name,
				   mode_str(&s->mode, buf, sizeof(buf)));
		vc_prepared_free(old);
		declare_formats(s);
		/* The same set of controls re-declares at once; another waits for close. */
		declare_ctrls(s);
		return;
	}
	remap_values(s, old, p);
	s->cur = p;
	vc_prepared_free(old);
	declare_formats(s);
	declare_ctrls(s);
	vc_cam_log(s, "now served by backend '%s' (%zu formats offered)", p->ops->name, p->noffers);
}

void vc_session_update(struct vc_session *s, const struct vc_cam_conf *cc, struct vc_prepared *p)
{
	const struct vc_cam_conf *old = s->cc;
	bool label = strcmp(old->label, cc->label) != 0;
	bool nodes = !vc_cam_same_nodes(old, cc);

	s->cc = cc;
	if (s->fd < 0) {
		vc_prepared_free(p);
		return;
	}
	if (label) {
		declare_info(s);
		vc_cam_log(s, "card name is now '%s'", cc->label);
	}
	if (nodes)
		vc_cam_log(s, "note: node numbers, timeout_ms and consumers apply when the camera is created (restart viacamd with the camera removed, or remove and re-add its section)");
	if (p)
		swap_backend(s, p);
}
