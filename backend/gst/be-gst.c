// SPDX-License-Identifier: GPL-2.0-only
/*
 * be-gst.c - the "gst" backend: any GStreamer source description as a camera.
 *
 * Keys: pipeline = a gst-launch-1.0 description of a source, e.g. "videotestsrc",
 *       "v4l2src device=/dev/video0", "libcamerasrc", "filesrc location=a.mkv ! decodebin",
 *       "rtspsrc location=rtsp://... ! decodebin" (required).
 *
 * The backend appends "videoconvert ! videoscale ! videorate ! capsfilter ! appsink" to the
 * description, so the source may produce any raw format, size and rate: the capsfilter is set
 * at start() to the mode the consumer chose, and GStreamer converts, scales and drops or
 * repeats frames where the source cannot. The pipeline runs only between start() and stop(),
 * i.e. while a consumer streams.
 *
 * Modes: the config's formats (those GStreamer can make: YUYV, UYVY, NV12, YU12, YV12, RGB3,
 * BGR3, RGBP, GREY; default YUYV and NV12), times the config's sizes and rates, or else the
 * sizes (up to 8) and rates (up to 4) the source's caps list when the pipeline is made ready
 * (v4l2src lists its device's), or else 640x480, 320x240, 1280x720 at 30 and 15 fps. A check
 * (vc_backend_conf.check_only, viacamd --check) never makes it ready: the description is
 * parsed and linked (unknown elements, properties and caps that cannot link are errors) and
 * stays in NULL, so it offers the config's or the default sizes and rates.
 *
 * The backend has its own clock: appsink's streaming thread signals an eventfd for every new
 * sample, and clock_fd() hands the session an epoll fd over that eventfd, the pipeline bus's
 * fd and a timerfd, so a frame reaches the consumer when the source made it, not at the
 * next tick of a timer.
 * produce() takes the newest sample without blocking.
 *
 * Each run (a start, a restart after a failure or at the end of the stream) plays a pipeline
 * made anew from the description: gst_parse_launch links a pad that appears later (decodebin,
 * rtspsrc) only once, so a pipeline taken to NULL and played again would stay unlinked.
 *
 * Failures: an error or end-of-stream on the pipeline's bus is reported once (frame->note)
 * with GStreamer's message; the pipeline is set to NULL and a new one started after 0.5 s,
 * 1 s, 2 s, ... up to 8 s (the timerfd) while the bridge repeats the last frame. The first frame after a
 * reported failure is reported as a recovery and resets the delay. End-of-stream restarts the
 * description from the beginning (a file loops); it is reported only the first time.
 *
 * The "pipewire" backend (backend/pipewire/) is this backend with the description
 * "pipewiresrc target-object=TARGET", through gst-source.h. With its remote key, each start
 * connects a new socket to that PipeWire for pipewiresrc's "fd", kept open until the
 * pipeline is NULL.
 *
 * Threads: GStreamer's streaming threads touch only the eventfd (write) and the appsink's own
 * queue. The instance's worker thread makes every state change (elements may wait in one, up
 * to 30 s for pipewiresrc), the caps probe's READY included, and owns pw_fd; it gets each
 * pipeline (with a reference of its own) in the command that probes, plays or stops it, and
 * drops it once it is NULL. create() waits for the probe's answer at most PROBE_WAIT_MS;
 * probe_mu guards that answer. Every other field is the event-loop thread's, which makes the
 * pipelines. release() hands @b to the worker, which frees it once its commands are done.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <linux/videodev2.h>

#include "backend.h"
#include "gst-source.h"

#define BACKOFF_FIRST_MS 500
#define BACKOFF_MAX_MS 8000
/* At most this many of the source's own sizes and rates are offered (2 formats x 8 x 4). */
#define PROBE_SIZES 8
#define PROBE_RATES 4
/*
 * How long create() waits for the probe, which the worker runs: create() runs on the event
 * loop, and a source can wait in READY for long (pipewiresrc 30 s for an unresponsive
 * PipeWire). A source that has not answered by then offers the defaults; the worker finishes
 * its probe on its own and drops the answer.
 */
#define PROBE_WAIT_MS 1000

static const uint32_t default_sizes[][2] = { { 640, 480 }, { 320, 240 }, { 1280, 720 } };
static const uint32_t default_intervals[][2] = { { 1, 30 }, { 1, 15 } };
static const uint32_t default_formats[] = { V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12 };

/* The bridge's raw formats and GStreamer's names for the same memory layout. */
static const struct {
	uint32_t fourcc;
	GstVideoFormat gst;
} format_map[] = {
	{ V4L2_PIX_FMT_YUYV, GST_VIDEO_FORMAT_YUY2 },
	{ V4L2_PIX_FMT_UYVY, GST_VIDEO_FORMAT_UYVY },
	{ V4L2_PIX_FMT_NV12, GST_VIDEO_FORMAT_NV12 },
	{ V4L2_PIX_FMT_YUV420, GST_VIDEO_FORMAT_I420 },
	{ V4L2_PIX_FMT_YVU420, GST_VIDEO_FORMAT_YV12 },
	{ V4L2_PIX_FMT_RGB24, GST_VIDEO_FORMAT_RGB },
	{ V4L2_PIX_FMT_BGR24, GST_VIDEO_FORMAT_BGR },
	{ V4L2_PIX_FMT_RGB565, GST_VIDEO_FORMAT_RGB16 },
	{ V4L2_PIX_FMT_GREY, GST_VIDEO_FORMAT_GRAY8 },
};

#define NMAP (sizeof(format_map) / sizeof(format_map[0]))

struct gst_backend {
	const struct vc_backend_ops *ops;	/* gst or pipewire, for messages */
	char *desc;		/* the pipeline key (or the pipewire backend's pipewiresrc) */
	int line;
	char *remote;		/* pipewire: the PipeWire socket to connect to (NULL: the default) */
	GstElement *pwsrc;	/* pipewire with a remote: "vc_pw" */
	int pw_fd;		/* pipewire with a remote: our connection while not NULL (worker's) */
	GstElement *pipe;	/* the current run's (or the next one's) */
	GstElement *filter;	/* "vc_caps" */
	GstElement *sink;	/* "vc_sink" */
	GstBus *bus;
	int bus_fd;		/* the bus's poll fd, in epfd */
	bool used;		/* @pipe has left NULL once: the next run needs a new one */
	GstCaps *caps;		/* the mode's caps for vc_caps, from start() */
	struct vc_modes modes;
	struct vc_mode mode;
	bool started;
	bool running;		/* PLAYING requested, no failure seen since */
	GThread *worker;	/* makes every state change (worker()) */
	GAsyncQueue *cmds;	/* CMD_* for the worker */
	int efd;		/* eventfd: a sample is waiting */
	int tfd;		/* timerfd: restart after a failure */
	int epfd;		/* epoll over both: clock_fd() */
	unsigned int backoff_ms;
	bool failure_reported;	/* a failure was reported; the next frame is a recovery */
	bool eos_reported;
	GstVideoInfo info;	/* of the last sample's caps */
	GstCaps *info_caps;	/* the caps @info was made from */
	/* probe_mu guards the probe's answer: the worker makes it, create() waits for it */
	GMutex probe_mu;
	GCond probe_cv;
	bool probe_done;	/* the worker has answered */
	bool probe_abandoned;	/* create() stopped waiting: the answer is dropped */
	uint32_t psizes[PROBE_SIZES][2], prates[PROBE_RATES][2];
	size_t npsizes, nprates;
};

static const char *const gst_keys[] = { "pipeline", NULL };

static GstVideoFormat gst_format(uint32_t fourcc)
{
	for (size_t i = 0; i < NMAP; i++)
		if (format_map[i].fourcc == fourcc)
			return format_map[i].gst;
	return GST_VIDEO_FORMAT_UNKNOWN;
}

/* appsink's streaming thread: a sample is ready. */
static GstFlowReturn on_new_sample(GstAppSink *sink, gpointer data)
{
	(void)sink;
	vc_kick(((struct gst_backend *)data)->efd);
	return GST_FLOW_OK;
}

/* Sizes and rates the source's caps list (fixed values; ranges take the defaults inside). */
static void probe_structure(const GstStructure *st, uint32_t sizes[][2], size_t *nsizes,
			    uint32_t rates[][2], size_t *nrates)
{
	const GValue *w = gst_structure_get_value(st, "width");
	const GValue *h = gst_structure_get_value(st, "height");
	const GValue *fr = gst_structure_get_value(st, "framerate");
	uint32_t cand[8][2];
	size_t ncand = 0;

	if (w && h && G_VALUE_HOLDS_INT(w) && G_VALUE_HOLDS_INT(h)) {
		cand[ncand][0] = (uint32_t)g_value_get_int(w);
		cand[ncand][1] = (uint32_t)g_value_get_int(h);
		ncand++;
	} else if (w && h && GST_VALUE_HOLDS_INT_RANGE(w) && GST_VALUE_HOLDS_INT_RANGE(h)) {
		for (size_t i = 0; i < sizeof(default_sizes) / sizeof(default_sizes[0]); i++) {
			if ((int)default_sizes[i][0] < gst_value_get_int_range_min(w) ||
			    (int)default_sizes[i][0] > gst_value_get_int_range_max(w) ||
			    (int)default_sizes[i][1] < gst_value_get_int_range_min(h) ||
			    (int)default_sizes[i][1] > gst_value_get_int_range_max(h))
				continue;
			cand[ncand][0] = default_sizes[i][0];
			cand[ncand][1] = default_sizes[i][1];
			ncand++;
		}
	}
	for (size_t i = 0; i < ncand; i++) {
		bool dup = false;

		if (!vc_format_size_ok(V4L2_PIX_FMT_NV12, cand[i][0], cand[i][1]))
			continue;
		for (size_t k = 0; k < *nsizes; k++)
			dup |= sizes[k][0] == cand[i][0] && sizes[k][1] == cand[i][1];
		if (!dup && *nsizes < PROBE_SIZES) {
			sizes[*nsizes][0] = cand[i][0];
			sizes[*nsizes][1] = cand[i][1];
			(*nsizes)++;
		}
	}
	if (!fr)
		return;
	if (GST_VALUE_HOLDS_FRACTION(fr) || GST_VALUE_HOLDS_LIST(fr)) {
		guint n = GST_VALUE_HOLDS_LIST(fr) ? gst_value_list_get_size(fr) : 1;

		for (guint i = 0; i < n; i++) {
			const GValue *v = GST_VALUE_HOLDS_LIST(fr) ? gst_value_list_get_value(fr, i) : fr;
			uint32_t num, den;
			bool dup = false;

			if (!GST_VALUE_HOLDS_FRACTION(v))
				continue;
			/* a rate of n/d frames per second is an interval of d/n */
			num = (uint32_t)gst_value_get_fraction_denominator(v);
			den = (uint32_t)gst_value_get_fraction_numerator(v);
			if (!vc_interval_ok(num, den))
				continue;
			for (size_t k = 0; k < *nrates; k++)
				dup |= (uint64_t)rates[k][0] * den == (uint64_t)rates[k][1] * num;
			if (!dup && *nrates < PROBE_RATES) {
				rates[*nrates][0] = num;
				rates[*nrates][1] = den;
				(*nrates)++;
			}
		}
	}
}

/*
 * What the source offers, asked upstream of videoconvert with the pipeline in READY (devices
 * open, nothing streams). Sources with sometimes-pads (decodebin) answer nothing yet.
 */
static void probe(GstElement *pipe, uint32_t sizes[][2], size_t *nsizes,
		  uint32_t rates[][2], size_t *nrates)
{
	GstElement *conv = gst_bin_get_by_name(GST_BIN(pipe), "vc_convert");
	GstPad *pad = conv ? gst_element_get_static_pad(conv, "sink") : NULL;
	GstCaps *caps = NULL;

	if (pad && gst_element_set_state(pipe, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE &&
	    gst_pad_is_linked(pad))
		caps = gst_pad_peer_query_caps(pad, NULL);
	if (caps && !gst_caps_is_any(caps))
		for (guint i = 0; i < gst_caps_get_size(caps); i++)
			probe_structure(gst_caps_get_structure(caps, i), sizes, nsizes, rates,
					nrates);
	if (caps)
		gst_caps_unref(caps);
	if (pad)
		gst_object_unref(pad);
	if (conv)
		gst_object_unref(conv);
	gst_element_set_state(pipe, GST_STATE_NULL);
}

static gpointer worker(gpointer data);
extern const struct vc_backend_ops vc_backend_gst;
static void free_instance(struct gst_backend *b);
static void request(struct gst_backend *b, int op);

/* The worker's commands (worker()). */
enum { CMD_PLAY = 1, CMD_NULL, CMD_QUIT, CMD_PROBE };

/*
 * The probe, run by the worker (CMD_PROBE) on the current pipeline, which is then spent (the
 * first start makes a new one): its answer if it comes within PROBE_WAIT_MS, else none (the
 * defaults apply) and the worker drops the late answer.
 */
static void wait_probe(struct gst_backend *b, uint32_t sizes[][2], size_t *nsizes,
		       uint32_t rates[][2], size_t *nrates)
{
	gint64 end = g_get_monotonic_time() + PROBE_WAIT_MS * G_TIME_SPAN_MILLISECOND;

	b->used = true;
	request(b, CMD_PROBE);
	g_mutex_lock(&b->probe_mu);
	while (!b->probe_done)
		if (!g_cond_wait_until(&b->probe_cv, &b->probe_mu, end))
			break;
	if (b->probe_done) {
		memcpy(sizes, b->psizes, sizeof(b->psizes));
		memcpy(rates, b->prates, sizeof(b->prates));
		*nsizes = b->npsizes;
		*nrates = b->nprates;
	} else {
		b->probe_abandoned = true;
	}
	g_mutex_unlock(&b->probe_mu);
}

static int make_fds(struct gst_backend *b)
{
	struct epoll_event ev = { .events = EPOLLIN };

	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	b->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (b->efd < 0 || b->tfd < 0 || b->epfd < 0)
		return -errno;
	ev.data.fd = b->efd;
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->efd, &ev) < 0)
		return -errno;
	ev.data.fd = b->tfd;
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->tfd, &ev) < 0)
		return -errno;
	return 0;
}

/* Drops the loop thread's references to the current pipeline (the worker keeps its own). */
static void drop_pipeline(struct gst_backend *b)
{
	if (b->bus_fd >= 0)
		epoll_ctl(b->epfd, EPOLL_CTL_DEL, b->bus_fd, NULL);
	b->bus_fd = -1;
	g_clear_object(&b->bus);
	g_clear_object(&b->filter);
	g_clear_object(&b->sink);
	g_clear_object(&b->pwsrc);
	g_clear_object(&b->pipe);
	b->used = false;
}

/* Makes the pipeline from the description; the current one, if any, is dropped first. */
static int build(struct gst_backend *b, struct vc_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN };
	GError *gerr = NULL;
	GPollFD pfd;
	GstAppSinkCallbacks cb = { .new_sample = on_new_sample };
	char *full;

	drop_pipeline(b);

	full = g_strdup_printf("%s ! videoconvert name=vc_convert ! videoscale ! videorate ! "
			       "capsfilter name=vc_caps ! appsink name=vc_sink", b->desc);
	b->pipe = gst_parse_launch_full(full, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &gerr);
	g_free(full);
	if (!b->pipe || gerr) {
		int r = vc_err(err, b->line, -EINVAL, "pipeline: %s",
			       gerr ? gerr->message : "GStreamer could not make it");

		g_clear_error(&gerr);
		return r;
	}
	if (!GST_IS_PIPELINE(b->pipe))	/* a single element: not possible with our tail */
		return vc_err(err, b->line, -EINVAL, "pipeline: not a pipeline");
	b->filter = gst_bin_get_by_name(GST_BIN(b->pipe), "vc_caps");
	b->sink = gst_bin_get_by_name(GST_BIN(b->pipe), "vc_sink");
	if (!b->filter || !b->sink)
		return vc_err(err, b->line, -EINVAL,
			      "pipeline: names vc_caps and vc_sink are taken by the backend");
	g_object_set(b->sink, "max-buffers", 1, "drop", TRUE, "sync", TRUE, NULL);
	gst_app_sink_set_callbacks(GST_APP_SINK(b->sink), &cb, b, NULL);
	b->bus = gst_element_get_bus(b->pipe);
	/*
	 * The bus's own fd is readable while messages are queued (a sync handler would run
	 * before the message is queued, and the loop could look too early). check_bus()
	 * pops every message, so it does not stay readable.
	 */
	gst_bus_get_pollfd(b->bus, &pfd);
	ev.data.fd = pfd.fd;
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, pfd.fd, &ev) < 0)
		return vc_err(err, b->line, -errno, "cannot watch the pipeline's bus: %s",
			      strerror(errno));
	b->bus_fd = pfd.fd;
	if (b->remote)
		b->pwsrc = gst_bin_get_by_name(GST_BIN(b->pipe), "vc_pw");
	if (b->caps)
		g_object_set(b->filter, "caps", b->caps, NULL);
	return 0;
}

void vc_gst_init(void)
{
	gst_init_check(NULL, NULL, NULL);	/* a failure is create()'s to report */
}

/* An instance for the source description @desc (from the key on line @line). */
int vc_gst_create_desc(const struct vc_backend_conf *conf, const char *desc, int line,
		       const char *remote, bool probe_caps, const struct vc_backend_ops *ops,
		       void **ret, struct vc_error *err)
{
	uint32_t psizes[PROBE_SIZES][2], prates[PROBE_RATES][2];
	size_t npsizes = 0, nprates = 0;
	const uint32_t (*sizes)[2], (*rates)[2];
	size_t nsizes, nrates, nformats;
	uint32_t formats[NMAP];
	struct gst_backend *b;
	GError *gerr = NULL;
	int r;

	if (!gst_init_check(NULL, NULL, &gerr)) {
		r = vc_err(err, line, -ENOSYS, "GStreamer: %s",
			   gerr ? gerr->message : "cannot initialise");
		g_clear_error(&gerr);
		return r;
	}
	nformats = 0;
	for (size_t i = 0; i < conf->nformats; i++)
		if (gst_format(conf->formats[i]) != GST_VIDEO_FORMAT_UNKNOWN)
			formats[nformats++] = conf->formats[i];
	if (conf->nformats && !nformats)
		return vc_err(err, conf->formats_line, -EINVAL,
			      "no format the gst backend makes (YUYV UYVY NV12 YU12 YV12 RGB3 BGR3 RGBP GREY)");
	if (!nformats) {
		memcpy(formats, default_formats, sizeof(default_formats));
		nformats = sizeof(default_formats) / sizeof(default_formats[0]);
	}

	b = calloc(1, sizeof(*b));
	if (!b)
		return vc_err(err, line, -ENOMEM, "out of memory");
	b->efd = b->tfd = b->epfd = b->pw_fd = b->bus_fd = -1;
	g_mutex_init(&b->probe_mu);
	g_cond_init(&b->probe_cv);
	b->line = line;
	b->ops = ops;
	b->desc = strdup(desc);
	b->remote = remote ? strdup(remote) : NULL;
	b->backoff_ms = BACKOFF_FIRST_MS;
	if (!b->desc || (remote && !b->remote)) {
		r = vc_err(err, line, -ENOMEM, "out of memory");
		goto fail;
	}
	r = make_fds(b);
	if (r < 0) {
		r = vc_err(err, line, r, "cannot make the backend's clock fds: %s", strerror(-r));
		goto fail;
	}
	r = build(b, err);
	if (r < 0)
		goto fail;
	b->cmds = g_async_queue_new();
	b->worker = g_thread_try_new("viacamd-gst", worker, b, &gerr);
	if (!b->worker) {
		r = vc_err(err, line, -ENOMEM, "cannot start the pipeline's thread: %s",
			   gerr ? gerr->message : "?");
		g_clear_error(&gerr);
		goto fail;
	}

	sizes = conf->sizes;
	nsizes = conf->nsizes;
	rates = conf->intervals;
	nrates = conf->nintervals;
	/* Not for a check: READY opens what the elements open (a filesink truncates its file,
	 * a tcpserversink listens), and a check must change nothing. */
	if (probe_caps && !conf->check_only && (!nsizes || !nrates))
		wait_probe(b, psizes, &npsizes, prates, &nprates);
	if (!nsizes) {
		sizes = npsizes ? (const uint32_t (*)[2])psizes : default_sizes;
		nsizes = npsizes ? npsizes : sizeof(default_sizes) / sizeof(default_sizes[0]);
	}
	if (!nrates) {
		rates = nprates ? (const uint32_t (*)[2])prates : default_intervals;
		nrates = nprates ? nprates : sizeof(default_intervals) / sizeof(default_intervals[0]);
	}
	for (size_t f = 0; f < nformats; f++)
		for (size_t s = 0; s < nsizes; s++)
			for (size_t i = 0; i < nrates; i++) {
				struct vc_mode m = { formats[f], sizes[s][0], sizes[s][1], rates[i][0],
						     rates[i][1] };

				if (!vc_format_size_ok(m.pixelformat, m.width, m.height) ||
				    !vc_interval_ok(m.interval_num, m.interval_den))
					continue;
				if (vc_modes_add(&b->modes, &m) < 0) {
					r = vc_err(err, conf->sizes_line ? conf->sizes_line : b->line,
						   -EINVAL, "too many modes: %zu formats x %zu sizes x %zu rates is more than %d (set formats, sizes or rates)",
						   nformats, nsizes, nrates, VC_MAX_MODES);
					goto fail;
				}
			}
	if (!b->modes.n) {
		r = vc_err(err, conf->sizes_line ? conf->sizes_line : b->line, -EINVAL,
			   "no usable mode (sizes 16..8192, even for 4:2:0; rates 1/60..1000 fps)");
		goto fail;
	}
	*ret = b;
	return 0;
fail:
	vc_gst_release(b);
	return r;
}

static int gst_create(const struct vc_backend_conf *conf, void **ret, struct vc_error *err)
{
	const struct vc_kv *kv = vc_conf_key(conf, "pipeline");

	if (!kv || !kv->value[0])
		return vc_err(err, kv ? kv->line : 0, -EINVAL,
			      "missing key 'pipeline' (a GStreamer source, e.g. videotestsrc)");
	return vc_gst_create_desc(conf, kv->value, kv->line, NULL, true, &vc_backend_gst, ret, err);
}

int vc_gst_describe(void *priv, struct vc_modes *modes)
{
	struct gst_backend *b = priv;

	for (size_t i = 0; i < b->modes.n; i++)
		if (vc_modes_add(modes, &b->modes.v[i]) < 0)
			break;
	return 0;
}

static void arm_restart(struct gst_backend *b)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = b->backoff_ms / 1000,
			      .tv_nsec = (long)(b->backoff_ms % 1000) * 1000000 },
	};

	timerfd_settime(b->tfd, 0, &its, NULL);
	b->backoff_ms = b->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : b->backoff_ms * 2;
}

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

/*
 * The worker thread: every state change of the pipeline. Some elements wait in a state change
 * (pipewiresrc for its stream to connect, up to 30 s; v4l2src and rtspsrc for their device or
 * server), and the event loop that serves every camera must not wait with them. Commands
 * come in order through b->cmds: a stop followed by a start is a NULL followed by a PLAYING.
 */
struct cmd {
	int op;
	GstElement *pipe;	/* a reference of the worker's (NULL for CMD_QUIT) */
	GstElement *pwsrc;	/* pipewire with a remote: the pipeline's "vc_pw" */
};

/* Sends @op for the current pipeline (its elements referenced for the worker). */
static void request(struct gst_backend *b, int op)
{
	struct cmd *c = g_new0(struct cmd, 1);

	c->op = op;
	if (op != CMD_QUIT && b->pipe) {
		c->pipe = gst_object_ref(b->pipe);
		c->pwsrc = b->pwsrc ? gst_object_ref(b->pwsrc) : NULL;
	}
	g_async_queue_push(b->cmds, c);
}

static void cmd_free(struct cmd *c)
{
	if (c->pipe)
		gst_object_unref(c->pipe);
	if (c->pwsrc)
		gst_object_unref(c->pwsrc);
	g_free(c);
}

/* An error of our own on @pipe's bus, handled like the elements' (check_bus). */
static void post_error(GstElement *pipe, const char *fmt, ...)
{
	GError *gerr;
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	gerr = g_error_new_literal(GST_CORE_ERROR, GST_CORE_ERROR_STATE_CHANGE, text);
	gst_element_post_message(pipe, gst_message_new_error(GST_OBJECT(pipe), gerr, NULL));
	g_error_free(gerr);
	g_free(text);
}

/*
 * pipewire with a remote: a connection to that socket for pipewiresrc's "fd". A new one for
 * each start (one PipeWire client per run); it stays open until the pipeline is NULL again.
 */
static bool connect_remote(struct gst_backend *b, struct cmd *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", b->remote);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		post_error(c->pipe, "cannot reach PipeWire at %s: %s", b->remote, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	b->pw_fd = fd;
	g_object_set(c->pwsrc, "fd", fd, NULL);
	return true;
}

static void worker_null(struct gst_backend *b, struct cmd *c)
{
	if (c->pipe)
		gst_element_set_state(c->pipe, GST_STATE_NULL);
	if (b->pw_fd >= 0)
		close(b->pw_fd);
	b->pw_fd = -1;
}

static void worker_play(struct gst_backend *b, struct cmd *c)
{
	if (c->pwsrc && !connect_remote(b, c))
		return;
	/* An element that refuses posts its error first; ours says so when none did. */
	if (gst_element_set_state(c->pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
		post_error(c->pipe, "the pipeline does not start");
}

/* The probe for create(), which waits at most PROBE_WAIT_MS for the answer. */
static void worker_probe(struct gst_backend *b, struct cmd *c)
{
	uint32_t sizes[PROBE_SIZES][2], rates[PROBE_RATES][2];
	size_t nsizes = 0, nrates = 0;

	probe(c->pipe, sizes, &nsizes, rates, &nrates);
	g_mutex_lock(&b->probe_mu);
	if (!b->probe_abandoned) {
		memcpy(b->psizes, sizes, sizeof(sizes));
		memcpy(b->prates, rates, sizeof(rates));
		b->npsizes = nsizes;
		b->nprates = nrates;
	}
	b->probe_done = true;
	g_cond_signal(&b->probe_cv);
	g_mutex_unlock(&b->probe_mu);
}

static gpointer worker(gpointer data)
{
	struct gst_backend *b = data;

	for (;;) {
		struct cmd *c = g_async_queue_pop(b->cmds);
		int op = c->op;

		if (op == CMD_PLAY)
			worker_play(b, c);
		else if (op == CMD_PROBE)
			worker_probe(b, c);
		else
			worker_null(b, c);
		cmd_free(c);
		if (op == CMD_QUIT) {
			b->worker = NULL;
			free_instance(b);
			return NULL;
		}
	}
}

/*
 * Plays a run: a new pipeline when the current one has run before (its delayed links are
 * spent). A description that parsed once parses again; if it does not (a plugin removed
 * meanwhile), the run fails like a source would: reported, retried with backoff.
 */
static int play(struct gst_backend *b, struct vc_error *err)
{
	if (b->used) {
		int r = build(b, err);

		if (r < 0)
			return r;
	}
	b->used = true;
	request(b, CMD_PLAY);
	b->running = true;
	return 0;
}

/*
 * GStreamer's message of an error, with the detail it keeps in the debug string's last line
 * ("No such file ...") and the element's name: "Resource not found.: No such file "/x" (filesrc0)".
 * Escaped (text.h): the message and the detail carry what the source chose (a file name, an
 * RTSP or HTTP server's reason phrase), which must not act in the log or forge a line there.
 */
static void error_text(GstMessage *msg, char *buf, size_t len)
{
	GError *gerr = NULL;
	gchar *dbg = NULL, *raw;
	const char *detail;

	gst_message_parse_error(msg, &gerr, &dbg);
	detail = dbg ? strrchr(dbg, '\n') : NULL;
	detail = detail ? detail + 1 : NULL;
	raw = g_strdup_printf("%s%s%s (%s)", gerr ? gerr->message : "error", detail ? ": " : "",
			      detail ? detail : "",
			      GST_MESSAGE_SRC_NAME(msg) ? GST_MESSAGE_SRC_NAME(msg) : "?");
	vc_escape(buf, len, raw, strlen(raw));
	g_free(raw);
	g_clear_error(&gerr);
	g_free(dbg);
}

int vc_gst_start(void *priv, const struct vc_mode *mode, struct vc_error *err)
{
	struct gst_backend *b = priv;
	GstVideoFormat f = gst_format(mode->pixelformat);
	GstCaps *caps;
	int r;

	if (f == GST_VIDEO_FORMAT_UNKNOWN)
		return vc_err(err, b->line, -EINVAL, "format not made by the gst backend");
	caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
				   gst_video_format_to_string(f), "width", G_TYPE_INT,
				   (int)mode->width, "height", G_TYPE_INT, (int)mode->height,
				   "framerate", GST_TYPE_FRACTION, (int)mode->interval_den,
				   (int)mode->interval_num, "pixel-aspect-ratio", GST_TYPE_FRACTION,
				   1, 1, NULL);
	gst_caps_take(&b->caps, caps);
	if (b->filter)
		g_object_set(b->filter, "caps", caps, NULL);
	b->mode = *mode;
	b->started = true;
	b->backoff_ms = BACKOFF_FIRST_MS;
	b->failure_reported = b->eos_reported = false;
	drain(b->efd);
	/* A source that cannot start (a camera not plugged in yet) is reported by check_bus()
	 * and tried again with backoff; the stream starts anyway and the bridge repeats. */
	r = play(b, err);
	if (r < 0)
		b->started = false;
	return r;
}

void vc_gst_stop(void *priv)
{
	struct gst_backend *b = priv;
	struct itimerspec off = { 0 };

	if (!b->started)
		return;
	request(b, CMD_NULL);
	timerfd_settime(b->tfd, 0, &off, NULL);
	drain(b->efd);
	drain(b->tfd);
	b->started = b->running = false;
}

/* Errors and end-of-stream: the pipeline goes to NULL and restarts after the delay. */
static void check_bus(struct gst_backend *b, struct vc_frame *fr)
{
	GstMessage *msg;

	while ((msg = gst_bus_pop(b->bus))) {	/* all of them: the bus fd is level-triggered */
		bool eos = GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;

		if (!eos && GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ERROR) {
			gst_message_unref(msg);
			continue;
		}
		if (b->running) {	/* else: the rest of a run already being stopped */
			request(b, CMD_NULL);
			b->running = false;
			arm_restart(b);
			if (eos && !b->eos_reported) {
				snprintf(fr->note, sizeof(fr->note),
					 "%s: the pipeline reached the end of the stream; it starts again from the beginning",
					 b->ops->name);
				b->eos_reported = true;
			} else if (!eos && !b->failure_reported) {
				char why[160];

				error_text(msg, why, sizeof(why));
				snprintf(fr->note, sizeof(fr->note),
					 "%s: the pipeline failed: %s; restarting it with backoff while consumers get repeated frames",
					 b->ops->name, why);
				b->failure_reported = true;
			}
		}
		gst_message_unref(msg);
	}
}

/* Copies the sample into the bridge's layout: planes one after another, no line padding. */
static size_t copy_sample(struct gst_backend *b, GstSample *sample, struct vc_frame *fr)
{
	GstCaps *caps = gst_sample_get_caps(sample);
	GstBuffer *buf = gst_sample_get_buffer(sample);
	GstVideoFrame vf;
	size_t o = 0;

	if (!caps || !buf)
		return 0;
	if (!b->info_caps || !gst_caps_is_equal(caps, b->info_caps)) {
		if (!gst_video_info_from_caps(&b->info, caps))
			return 0;
		gst_caps_replace(&b->info_caps, caps);
	}
	if (GST_VIDEO_INFO_WIDTH(&b->info) != (int)fr->mode->width ||
	    GST_VIDEO_INFO_HEIGHT(&b->info) != (int)fr->mode->height ||
	    GST_VIDEO_INFO_FORMAT(&b->info) != gst_format(fr->mode->pixelformat))
		return 0;	/* caps of a previous mode, still in flight */
	if (!gst_video_frame_map(&vf, &b->info, buf, GST_MAP_READ))
		return 0;
	for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&vf); p++) {
		const uint8_t *src = GST_VIDEO_FRAME_PLANE_DATA(&vf, p);
		size_t stride = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(&vf, p);
		/* plane p holds component p for every format of format_map */
		size_t rows = (size_t)GST_VIDEO_FRAME_COMP_HEIGHT(&vf, p);
		size_t row = (size_t)GST_VIDEO_FRAME_COMP_WIDTH(&vf, p) *
			     (size_t)GST_VIDEO_FRAME_COMP_PSTRIDE(&vf, p);

		if (p == 0)
			row = fr->bytesperline;	/* packed YUYV: the component width is not the row */
		for (size_t r = 0; r < rows; r++) {
			if (o + row > fr->size)
				goto out;
			memcpy(fr->data + o, src + r * stride, row);
			o += row;
		}
	}
out:
	gst_video_frame_unmap(&vf);
	return o;
}

/*
 * When the source captured @sample, on CLOCK_MONOTONIC: its running time on the pipeline's
 * clock, moved onto CLOCK_MONOTONIC by how long ago that was by the pipeline's clock (the
 * system clock is CLOCK_MONOTONIC itself by default; another clock still ticks at its
 * rate). 0 when the buffer has no time, or a time not yet reached (a source that is not
 * live and runs ahead).
 */
static uint64_t capture_time(struct gst_backend *b, GstSample *sample)
{
	GstBuffer *buf = gst_sample_get_buffer(sample);
	const GstSegment *seg = gst_sample_get_segment(sample);
	GstClockTime rt, at, now;
	struct timespec ts;
	GstClock *clock;
	uint64_t mono;

	if (!buf || !seg || !GST_BUFFER_PTS_IS_VALID(buf) || seg->format != GST_FORMAT_TIME)
		return 0;
	rt = gst_segment_to_running_time(seg, GST_FORMAT_TIME, GST_BUFFER_PTS(buf));
	clock = gst_element_get_clock(b->pipe);
	if (!GST_CLOCK_TIME_IS_VALID(rt) || !clock) {
		if (clock)
			gst_object_unref(clock);
		return 0;
	}
	now = gst_clock_get_time(clock);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	gst_object_unref(clock);
	at = gst_element_get_base_time(b->pipe) + rt;
	mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (!GST_CLOCK_TIME_IS_VALID(now) || at > now || now - at > mono)
		return 0;
	return mono - (now - at);
}

int vc_gst_produce(void *priv, struct vc_frame *fr)
{
	struct gst_backend *b = priv;
	GstSample *sample = NULL, *next;
	uint64_t v;

	if (!b->started)
		return -ENODEV;
	drain(b->efd);
	check_bus(b, fr);
	if (!b->running) {
		if (read(b->tfd, &v, sizeof(v)) == sizeof(v)) {	/* the delay is over */
			struct vc_error err = { 0 };

			if (play(b, &err) < 0) {
				arm_restart(b);
				if (!b->failure_reported) {
					snprintf(fr->note, sizeof(fr->note),
						 "%s: the pipeline cannot be made again: %.160s; retrying with backoff",
						 b->ops->name, err.msg);
					b->failure_reported = true;
				}
			}
		}
		return -EAGAIN;
	}
	while ((next = gst_app_sink_try_pull_sample(GST_APP_SINK(b->sink), 0))) {
		if (sample)
			gst_sample_unref(sample);
		sample = next;
	}
	if (!sample)
		return -EAGAIN;
	fr->bytesused = copy_sample(b, sample, fr);
	fr->capture_ns = capture_time(b, sample);
	gst_sample_unref(sample);
	if (!fr->bytesused)
		return -EAGAIN;
	if (b->failure_reported && !fr->note[0]) {
		snprintf(fr->note, sizeof(fr->note), "%s: the pipeline delivers frames again",
			 b->ops->name);
		b->failure_reported = false;
	}
	b->backoff_ms = BACKOFF_FIRST_MS;
	return 0;
}

int vc_gst_clock_fd(void *priv)
{
	return ((struct gst_backend *)priv)->epfd;
}

/* Frees @b: the pipeline is NULL, its worker gone or @b's worker itself. */
static void free_instance(struct gst_backend *b)
{
	if (b->cmds)
		g_async_queue_unref(b->cmds);
	if (b->pw_fd >= 0)
		close(b->pw_fd);
	drop_pipeline(b);
	if (b->caps)
		gst_caps_unref(b->caps);
	free(b->remote);
	if (b->info_caps)
		gst_caps_unref(b->info_caps);
	if (b->efd >= 0)
		close(b->efd);
	if (b->tfd >= 0)
		close(b->tfd);
	if (b->epfd >= 0)
		close(b->epfd);
	g_mutex_clear(&b->probe_mu);
	g_cond_clear(&b->probe_cv);
	free(b->desc);
	free(b);
}

/*
 * The worker takes the pipeline to NULL and frees the instance, so release() does not wait
 * for an element that is still in a state change (pipewiresrc waits up to 30 s for a node
 * that does not exist).
 */
void vc_gst_release(void *priv)
{
	struct gst_backend *b = priv;

	if (!b)
		return;
	if (b->worker) {
		GThread *t = b->worker;

		request(b, CMD_QUIT);
		g_thread_unref(t);	/* detached: the worker frees @b */
		return;
	}
	if (b->pipe)
		gst_element_set_state(b->pipe, GST_STATE_NULL);
	free_instance(b);
}

const struct vc_backend_ops vc_backend_gst = {
	.abi = VC_BACKEND_ABI,
	.name = "gst",
	.summary = "any GStreamer source description (converted, scaled and rated by GStreamer)",
	.keys = gst_keys,
	.create = gst_create,
	.describe = vc_gst_describe,
	.start = vc_gst_start,
	.produce = vc_gst_produce,
	.stop = vc_gst_stop,
	.clock_fd = vc_gst_clock_fd,
	.release = vc_gst_release,
};
