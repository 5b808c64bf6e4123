// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-gst.c - the gst backend with real GStreamer pipelines: modes from the config and from
 * the source's caps, frames in the bridge's layout (strides removed), its own clock (the fd
 * is readable when a frame is ready), bad descriptions refused at create, and a pipeline that
 * fails or ends reported once and restarted.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <gst/gst.h>
#include <linux/videodev2.h>

#include "../../backend/backend.h"

extern const struct vc_backend_ops vc_backend_gst;
extern const struct vc_backend_ops vc_backend_pipewire;

struct conf {
	struct vc_kv kv[1];
	struct vc_backend_conf c;
};

static void conf_init(struct conf *cf, const char *pipeline)
{
	memset(cf, 0, sizeof(*cf));
	cf->kv[0] = (struct vc_kv){ (char *)"pipeline", (char *)pipeline, 7 };
	cf->c.camera = "test";
	cf->c.keys = cf->kv;
	cf->c.nkeys = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Runs the backend the way the session does: produce() whenever its clock fd is readable.
 * Returns the first frame's result (0) or -ETIMEDOUT; notes are appended to @notes. */
static int next_frame(void *priv, struct vc_frame *fr, unsigned int timeout_ms, char *notes,
		      size_t len)
{
	const struct vc_backend_ops *ops = &vc_backend_gst;
	struct pollfd p = { .fd = ops->clock_fd(priv), .events = POLLIN };
	uint64_t end = now_ms() + timeout_ms;
	int r;

	assert_true(p.fd >= 0);
	while (now_ms() < end) {
		if (poll(&p, 1, 100) <= 0)
			continue;
		fr->note[0] = 0;
		fr->bytesused = 0;
		r = ops->produce(priv, fr);
		if (fr->note[0] && notes)
			snprintf(notes + strlen(notes), len - strlen(notes), "%s\n", fr->note);
		if (r == 0)
			return 0;
		assert_int_equal(r, -EAGAIN);
	}
	return -ETIMEDOUT;
}

static bool has_mode(const struct vc_modes *m, uint32_t f, uint32_t w, uint32_t h, uint32_t num,
		     uint32_t den)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].pixelformat == f && m->v[i].width == w && m->v[i].height == h &&
		    m->v[i].interval_num == num && m->v[i].interval_den == den)
			return true;
	return false;
}

static void test_registered(void **state)
{
	(void)state;
	assert_ptr_equal(vc_backend_find("gst"), &vc_backend_gst);
	assert_string_equal(vc_backend_gst.keys[0], "pipeline");
	assert_non_null(vc_backend_gst.clock_fd);
}

static void test_bad_descriptions(void **state)
{
	struct vc_error err = { 0 };
	struct conf cf;
	void *priv = NULL;

	(void)state;
	conf_init(&cf, "nosuchelement-xyz");
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), -EINVAL);
	assert_int_equal(err.line, 7);
	assert_non_null(strstr(err.msg, "nosuchelement-xyz"));

	conf_init(&cf, "videotestsrc ! ! !");
	memset(&err, 0, sizeof(err));
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), -EINVAL);
	assert_true(err.msg[0]);

	cf.c.nkeys = 0;
	memset(&err, 0, sizeof(err));
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "pipeline"));

	/* a format GStreamer is not asked to make: MJPEG only */
	{
		static const uint32_t mjpg[] = { V4L2_PIX_FMT_MJPEG };

		conf_init(&cf, "videotestsrc");
		cf.c.formats = mjpg;
		cf.c.nformats = 1;
		cf.c.formats_line = 3;
		memset(&err, 0, sizeof(err));
		assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), -EINVAL);
		assert_int_equal(err.line, 3);
	}
}

/* Modes: the config's when given; else the caps (a fixed-size source); else the defaults. */
static void test_modes(void **state)
{
	static const uint32_t sizes[][2] = { { 176, 144 } };
	static const uint32_t rates[][2] = { { 1, 10 } };
	static const uint32_t fmts[] = { V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_RGB24 };
	struct vc_modes m = { .n = 0 };
	struct vc_error err = { 0 };
	struct conf cf;
	void *priv;

	(void)state;
	conf_init(&cf, "videotestsrc");
	cf.c.sizes = sizes;
	cf.c.nsizes = 1;
	cf.c.intervals = rates;
	cf.c.nintervals = 1;
	cf.c.formats = fmts;
	cf.c.nformats = 2;
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	assert_int_equal(vc_backend_gst.describe(priv, &m), 0);
	assert_int_equal(m.n, 2);
	assert_true(has_mode(&m, V4L2_PIX_FMT_YUV420, 176, 144, 1, 10));
	assert_true(has_mode(&m, V4L2_PIX_FMT_RGB24, 176, 144, 1, 10));
	vc_backend_gst.release(priv);

	/* caps with a fixed size and rate: what the source makes is what is offered */
	conf_init(&cf, "videotestsrc ! video/x-raw,width=352,height=288,framerate=25/1");
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	m.n = 0;
	vc_backend_gst.describe(priv, &m);
	assert_int_equal(m.n, 2);	/* YUYV and NV12 */
	assert_true(has_mode(&m, V4L2_PIX_FMT_YUYV, 352, 288, 1, 25));
	assert_true(has_mode(&m, V4L2_PIX_FMT_NV12, 352, 288, 1, 25));
	vc_backend_gst.release(priv);

	/* any size, any rate: the defaults */
	conf_init(&cf, "videotestsrc");
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	m.n = 0;
	vc_backend_gst.describe(priv, &m);
	assert_true(has_mode(&m, V4L2_PIX_FMT_YUYV, 640, 480, 1, 30));
	assert_true(has_mode(&m, V4L2_PIX_FMT_NV12, 1280, 720, 1, 15));
	vc_backend_gst.release(priv);
}

/* A solid colour in each layout: the bridge's packing, no stride padding, right values. */
static void check_frame(uint32_t fourcc, uint32_t w, uint32_t h, const uint8_t *expect,
			size_t nexpect)
{
	struct vc_mode mode = { fourcc, w, h, 1, 30 };
	size_t size = vc_sizeimage(fourcc, w, h);
	struct vc_frame fr = { .size = size, .mode = &mode };
	struct vc_error err = { 0 };
	char notes[1024] = "";
	struct conf cf;
	void *priv;

	/* white: Y 235, Cb/Cr 128 in limited range; RGB 255 */
	conf_init(&cf, "videotestsrc pattern=white");
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	fr.data = malloc(size);	/* exact size: ASan catches a write past the frame */
	assert_non_null(fr.data);
	memset(fr.data, 0x5a, size);
	fr.bytesperline = vc_bytesperline(fourcc, w);
	assert_int_equal(vc_backend_gst.start(priv, &mode, &err), 0);
	assert_int_equal(next_frame(priv, &fr, 10000, notes, sizeof(notes)), 0);
	assert_int_equal(fr.bytesused, size);
	for (size_t i = 0; i < size; i++)
		if (fr.data[i] != expect[i % nexpect])
			fail_msg("byte %zu of %zu is %u, want %u", i, size, fr.data[i],
				 expect[i % nexpect]);
	assert_string_equal(notes, "");
	vc_backend_gst.stop(priv);
	vc_backend_gst.release(priv);
	free(fr.data);
}

static void test_frames(void **state)
{
	static const uint8_t yuyv[] = { 235, 128 };
	static const uint8_t rgb[] = { 255 };

	(void)state;
	check_frame(V4L2_PIX_FMT_YUYV, 322, 40, yuyv, 2);	/* 644-byte rows */
	check_frame(V4L2_PIX_FMT_RGB24, 18, 30, rgb, 1);	/* 54-byte rows, GStreamer pads to 56 */
}

static void test_planar(void **state)
{
	/* 4:2:0 with rows GStreamer pads (170 -> 172, 85 -> 88): Y plane then chroma. */
	struct vc_mode mode = { V4L2_PIX_FMT_YUV420, 170, 100, 1, 30 };
	size_t size = vc_sizeimage(mode.pixelformat, mode.width, mode.height);
	struct vc_frame fr = { .size = size, .mode = &mode, .bytesperline = 170 };
	struct vc_error err = { 0 };
	struct conf cf;
	void *priv;

	(void)state;
	conf_init(&cf, "videotestsrc pattern=white");
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	fr.data = malloc(size);
	assert_non_null(fr.data);
	assert_int_equal(vc_backend_gst.start(priv, &mode, &err), 0);
	assert_int_equal(next_frame(priv, &fr, 10000, NULL, 0), 0);
	assert_int_equal(fr.bytesused, size);
	for (size_t i = 0; i < 170 * 100; i++)
		assert_int_equal(fr.data[i], 235);
	for (size_t i = 170 * 100; i < size; i++)
		assert_int_equal(fr.data[i], 128);
	vc_backend_gst.stop(priv);
	vc_backend_gst.release(priv);
	free(fr.data);
}

/* Its own clock: frames come at the source's rate, each produce() consumes the readiness. */
static void test_clock(void **state)
{
	struct vc_mode mode = { V4L2_PIX_FMT_YUYV, 64, 48, 1, 50 };
	uint8_t buf[64 * 48 * 2];
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .mode = &mode, .bytesperline = 128 };
	struct vc_error err = { 0 };
	struct conf cf;
	uint64_t t0, prev_ns = 0;
	int frames = 0, wakeups = 0, stamped = 0;
	void *priv;

	(void)state;
	conf_init(&cf, "videotestsrc is-live=true");
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	assert_int_equal(vc_backend_gst.start(priv, &mode, &err), 0);
	assert_int_equal(next_frame(priv, &fr, 10000, NULL, 0), 0);
	t0 = now_ms();
	while (now_ms() - t0 < 1000) {
		struct pollfd p = { .fd = vc_backend_gst.clock_fd(priv), .events = POLLIN };

		if (poll(&p, 1, 200) <= 0)
			continue;
		wakeups++;
		fr.capture_ns = 0;
		if (vc_backend_gst.produce(priv, &fr) == 0) {
			uint64_t now_ns = now_ms() * 1000000 + 1000000;

			frames++;
			/* The capture time: in the past, recent, later than the last one. */
			if (fr.capture_ns && fr.capture_ns <= now_ns &&
			    fr.capture_ns + 500000000 > now_ns && fr.capture_ns > prev_ns)
				stamped++;
			else
				print_message("frame %d: capture_ns %llu, previous %llu, now %llu\n",
					      frames, (unsigned long long)fr.capture_ns,
					      (unsigned long long)prev_ns, (unsigned long long)now_ns);
			prev_ns = fr.capture_ns;
		}
	}
	assert_int_equal(stamped, frames);
	/* 50 fps for one second; generous bounds for a loaded machine, but a timer-less
	 * backend that spins (readiness not consumed) would wake up far more often. */
	assert_in_range(frames, 25, 60);
	assert_in_range(wakeups, frames, frames * 2 + 5);
	vc_backend_gst.stop(priv);
	vc_backend_gst.release(priv);
}

/* End of stream: reported once, the pipeline starts again, frames come back. */
static void test_eos_restarts(void **state)
{
	struct vc_mode mode = { V4L2_PIX_FMT_YUYV, 64, 48, 1, 30 };
	uint8_t buf[64 * 48 * 2];
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .mode = &mode, .bytesperline = 128 };
	struct vc_error err = { 0 };
	char notes[2048] = "";
	struct conf cf;
	void *priv;
	int frames = 0;

	(void)state;
	conf_init(&cf, "videotestsrc num-buffers=5");
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	assert_int_equal(vc_backend_gst.start(priv, &mode, &err), 0);
	/* three runs of five frames: two ends of stream and restarts in between */
	while (frames < 12 && next_frame(priv, &fr, 10000, notes, sizeof(notes)) == 0)
		frames++;
	assert_int_equal(frames, 12);
	assert_non_null(strstr(notes, "end of the stream"));
	/* reported once, not at every loop */
	assert_null(strstr(strstr(notes, "end of the stream") + 1, "end of the stream"));
	vc_backend_gst.stop(priv);
	vc_backend_gst.release(priv);
}

/* Writes a 5-frame AVI clip of 64x48 to @path (GStreamer's own muxer). */
static void make_clip(const char *path)
{
	char desc[256];
	GstElement *p;
	GstBus *bus;
	GstMessage *m;

	snprintf(desc, sizeof(desc),
		 "videotestsrc num-buffers=5 ! video/x-raw,format=YUY2,width=64,height=48,framerate=30/1 ! avimux ! filesink location=%s",
		 path);
	p = gst_parse_launch(desc, NULL);
	assert_non_null(p);
	bus = gst_element_get_bus(p);
	gst_element_set_state(p, GST_STATE_PLAYING);
	m = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
	assert_non_null(m);
	assert_int_equal(GST_MESSAGE_TYPE(m), GST_MESSAGE_EOS);
	gst_message_unref(m);
	gst_element_set_state(p, GST_STATE_NULL);
	gst_object_unref(bus);
	gst_object_unref(p);
}

/*
 * A description whose source links later (decodebin's sometimes-pads): it plays again after
 * its end of stream, and after a stop and a start. gst_parse_launch links such a pad once;
 * a pipeline taken to NULL and played again would stay unlinked ("not-linked").
 */
static void test_sometimes_pads_restart(void **state)
{
	char path[] = "/tmp/test-gst-clip-XXXXXX";
	char desc[256], notes[4096] = "";
	struct vc_mode mode = { V4L2_PIX_FMT_YUYV, 64, 48, 1, 30 };
	uint8_t buf[64 * 48 * 2];
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .mode = &mode, .bytesperline = 128 };
	struct vc_error err = { 0 };
	struct conf cf;
	void *priv;
	int frames = 0, fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_true(gst_init_check(NULL, NULL, NULL));
	make_clip(path);
	snprintf(desc, sizeof(desc), "filesrc location=%s ! decodebin", path);
	conf_init(&cf, desc);
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	assert_int_equal(vc_backend_gst.start(priv, &mode, &err), 0);
	/* three runs of the clip: two ends of stream and restarts in between */
	while (frames < 12 && next_frame(priv, &fr, 10000, notes, sizeof(notes)) == 0)
		frames++;
	print_message("notes: %s", notes);
	assert_int_equal(frames, 12);
	assert_null(strstr(notes, "failed"));
	/* a new stream: the clip plays again */
	vc_backend_gst.stop(priv);
	assert_int_equal(vc_backend_gst.start(priv, &mode, &err), 0);
	assert_int_equal(next_frame(priv, &fr, 10000, notes, sizeof(notes)), 0);
	assert_null(strstr(notes, "failed"));
	vc_backend_gst.stop(priv);
	vc_backend_gst.release(priv);
	unlink(path);
}

/* A source that fails: reported once with GStreamer's message, retried, recovered. */
static void test_failure_reported_and_recovered(void **state)
{
	static const uint32_t size64[][2] = { { 64, 48 } };
	char path[] = "/tmp/test-gst-XXXXXX";
	char desc[256], notes[4096] = "";
	struct vc_mode mode = { V4L2_PIX_FMT_YUYV, 64, 48, 1, 30 };
	uint8_t buf[64 * 48 * 2];
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .mode = &mode, .bytesperline = 128 };
	struct vc_error err = { 0 };
	struct conf cf;
	void *priv;
	FILE *f;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);	/* the source's file is missing at first */
	snprintf(desc, sizeof(desc),
		 "filesrc location=%s ! rawvideoparse width=64 height=48 format=yuy2 framerate=30/1",
		 path);
	conf_init(&cf, desc);
	cf.c.sizes = size64;
	cf.c.nsizes = 1;
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	assert_int_equal(vc_backend_gst.start(priv, &mode, &err), 0);
	/* a second and a half of failures: one report, not one per retry */
	assert_int_equal(next_frame(priv, &fr, 1500, notes, sizeof(notes)), -ETIMEDOUT);
	print_message("notes: %s", notes);
	assert_non_null(strstr(notes, "the pipeline failed: Resource not found"));
	assert_non_null(strstr(notes, path));
	assert_null(strstr(strstr(notes, "failed") + 1, "failed"));
	/* the file appears: the next retry plays it (the delay is at most 8 s) */
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 64 * 48 * 60; i++)
		fputc(i & 1 ? 128 : 81, f);
	fclose(f);
	assert_int_equal(next_frame(priv, &fr, 10000, notes, sizeof(notes)), 0);
	assert_non_null(strstr(notes, "delivers frames again"));
	assert_int_equal(buf[0], 81);
	vc_backend_gst.stop(priv);
	vc_backend_gst.release(priv);
	unlink(path);
}

/*
 * GStreamer's error texts carry what a source chose (a file name here; a server's reason
 * phrase for rtspsrc or souphttpsrc): the note that goes to the log has them escaped, so a
 * stream cannot write an escape sequence, a BEL or a CR that hides the line, or a line of its
 * own, into viacamd's log.
 */
static void test_error_text_escaped(void **state)
{
	static const uint32_t size64[][2] = { { 64, 48 } };
	char desc[256], notes[4096] = "";
	struct vc_mode mode = { V4L2_PIX_FMT_YUYV, 64, 48, 1, 30 };
	uint8_t buf[64 * 48 * 2];
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .mode = &mode, .bytesperline = 128 };
	struct vc_error err = { 0 };
	struct conf cf;
	void *priv;

	(void)state;
	/* a file that does not exist, named with ESC, BEL, CR and a right-to-left override */
	snprintf(desc, sizeof(desc),
		 "filesrc location=\"/nonexistent/a\x1b[2Jb\x07" "c\rviacamd: forged\xe2\x80\xae" "d\" ! "
		 "rawvideoparse width=64 height=48 format=yuy2 framerate=30/1");
	conf_init(&cf, desc);
	cf.c.sizes = size64;
	cf.c.nsizes = 1;
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	assert_int_equal(vc_backend_gst.start(priv, &mode, &err), 0);
	assert_int_equal(next_frame(priv, &fr, 1000, notes, sizeof(notes)), -ETIMEDOUT);
	print_message("notes: %s", notes);
	assert_non_null(strstr(notes, "the pipeline failed: Resource not found"));
	assert_non_null(strstr(notes, "/nonexistent/a\\x1b[2Jb\\x07c\\rviacamd: forged\\u202ed"));
	/* one line per note (next_frame() adds the \n), nothing raw */
	for (const unsigned char *p = (const unsigned char *)notes; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f || *p >= 0x80)
			fail_msg("a note has the raw byte 0x%02x: '%s'", *p, notes);
	assert_ptr_equal(strchr(notes, '\n'), notes + strlen(notes) - 1);
	vc_backend_gst.stop(priv);
	vc_backend_gst.release(priv);
}

/*
 * create() runs on viacamd's event loop and asks the source's caps in READY, where a source
 * can wait for long: pipewiresrc waits 30 s for a PipeWire that accepts and never answers.
 * create() waits at most a second for that answer, offers the defaults without it, and the
 * instance is released at once (its thread finishes the state change on its own).
 */
static void test_hung_source_does_not_hold_create(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/test-gst-XXXXXX";
	struct vc_error err = { 0 };
	struct vc_modes modes = { 0 };
	struct conf cf;
	uint64_t t0, ms;
	void *priv;
	int lfd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/pipewire-0", dir);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 8), 0);	/* connections wait in the backlog, unanswered */
	setenv("PIPEWIRE_REMOTE", sa.sun_path, 1);
	conf_init(&cf, "pipewiresrc");
	t0 = now_ms();
	assert_int_equal(vc_backend_gst.create(&cf.c, &priv, &err), 0);
	ms = now_ms() - t0;
	print_message("create() took %llu ms\n", (unsigned long long)ms);
	assert_true(ms < 1500);
	/* the defaults: 640x480 320x240 1280x720 at 30 and 15 fps, YUYV and NV12 */
	vc_backend_gst.describe(priv, &modes);
	assert_int_equal(modes.n, 12);
	assert_true(has_mode(&modes, V4L2_PIX_FMT_YUYV, 1280, 720, 1, 15));
	t0 = now_ms();
	vc_backend_gst.release(priv);
	assert_true(now_ms() - t0 < 100);
	unsetenv("PIPEWIRE_REMOTE");
	close(lfd);
	unlink(sa.sun_path);
	rmdir(dir);
}

/* The pipewire backend's keys: a target without quoting tricks, an absolute socket path. */
static void test_pipewire_keys(void **state)
{
	static const uint32_t sz[][2] = { { 320, 240 } };
	static const uint32_t rt[][2] = { { 1, 15 } };
	struct vc_kv kv[2] = { { (char *)"target", (char *)"cam\" ! fakesrc", 4 },
			       { (char *)"remote", (char *)"run/pipewire-0", 5 } };
	struct vc_backend_conf c = { .camera = "t", .keys = kv, .nkeys = 1, .sizes = sz,
				     .nsizes = 1, .intervals = rt, .nintervals = 1 };
	struct vc_modes m = { .n = 0 };
	struct vc_error err = { 0 };
	void *priv = NULL;

	(void)state;
	assert_ptr_equal(vc_backend_find("pipewire"), &vc_backend_pipewire);
	/* a quote would end the name and append elements to the description */
	assert_int_equal(vc_backend_pipewire.create(&c, &priv, &err), -EINVAL);
	assert_int_equal(err.line, 4);
	kv[0].value = (char *)"vcprov";
	c.nkeys = 2;
	memset(&err, 0, sizeof(err));
	assert_int_equal(vc_backend_pipewire.create(&c, &priv, &err), -EINVAL);
	assert_int_equal(err.line, 5);
	assert_non_null(strstr(err.msg, "absolute"));
	c.keys = kv + 1;	/* no target */
	c.nkeys = 1;
	kv[1].value = (char *)"/nonexistent/pipewire-0";
	memset(&err, 0, sizeof(err));
	assert_int_equal(vc_backend_pipewire.create(&c, &priv, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "target"));
	/* PipeWire need not run at load: create touches nothing, the offer is the config's */
	c.keys = kv;
	c.nkeys = 2;
	memset(&err, 0, sizeof(err));
	assert_int_equal(vc_backend_pipewire.create(&c, &priv, &err), 0);
	assert_int_equal(vc_backend_pipewire.describe(priv, &m), 0);
	assert_int_equal(m.n, 2);	/* YUYV and NV12 at 320x240, 15 fps */
	vc_backend_pipewire.release(priv);
}

/* A socket nobody listens on: reported once when the stream starts, then retried. */
static void test_pipewire_unreachable(void **state)
{
	struct vc_kv kv[2] = { { (char *)"target", (char *)"vcprov", 4 },
			       { (char *)"remote", (char *)"/nonexistent/pipewire-0", 5 } };
	struct vc_backend_conf c = { .camera = "t", .keys = kv, .nkeys = 2 };
	struct vc_mode mode = { V4L2_PIX_FMT_YUYV, 640, 480, 1, 30 };
	static uint8_t buf[640 * 480 * 2];
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .mode = &mode, .bytesperline = 1280 };
	struct vc_error err = { 0 };
	char notes[2048] = "";
	void *priv;
	struct pollfd p;
	uint64_t end;

	(void)state;
	assert_int_equal(vc_backend_pipewire.create(&c, &priv, &err), 0);
	assert_int_equal(vc_backend_pipewire.start(priv, &mode, &err), 0);
	p = (struct pollfd){ .fd = vc_backend_pipewire.clock_fd(priv), .events = POLLIN };
	for (end = now_ms() + 2000; now_ms() < end;) {
		if (poll(&p, 1, 100) <= 0)
			continue;
		fr.note[0] = 0;
		assert_int_equal(vc_backend_pipewire.produce(priv, &fr), -EAGAIN);
		if (fr.note[0])
			snprintf(notes + strlen(notes), sizeof(notes) - strlen(notes), "%s\n", fr.note);
	}
	print_message("notes: %s", notes);
	assert_non_null(strstr(notes, "cannot reach PipeWire at /nonexistent/pipewire-0"));
	assert_null(strstr(strstr(notes, "cannot reach") + 1, "cannot reach"));
	vc_backend_pipewire.stop(priv);
	vc_backend_pipewire.release(priv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registered),
		cmocka_unit_test(test_bad_descriptions),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_planar),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_eos_restarts),
		cmocka_unit_test(test_sometimes_pads_restart),
		cmocka_unit_test(test_failure_reported_and_recovered),
		cmocka_unit_test(test_error_text_escaped),
		cmocka_unit_test(test_hung_source_does_not_hold_create),
		cmocka_unit_test(test_pipewire_keys),
		cmocka_unit_test(test_pipewire_unreachable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
