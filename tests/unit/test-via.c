// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-via.c - the VIA backend's logic (ov7670.c, via-engine.c) against the register-level
 * model, on a simulated clock: every size and format comes out as the model renders it, the
 * frame rates follow CLKRC, a missed frame is noticed, each control lands in its registers
 * with the sensor's side effects, and the sensor checks report what they found.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <linux/videodev2.h>

#include "backend.h"
#include "ov7670-regs.h"
#include "ov7670.h"
#include "via-engine.h"
#include "via-model.h"

static uint64_t fake_ns;

static uint64_t fake_clock(void *data)
{
	(void)data;
	return fake_ns;
}

static void open_model(struct via_io *io, const uint8_t *id)
{
	struct via_model_conf mc = { .vram_size = 64u << 20, .clock = fake_clock };

	if (id)
		memcpy(mc.sensor_id, id, 4);
	memset(io, 0, sizeof(*io));
	io->i2c_fd = -1;
	fake_ns = 1000000000ull;
	assert_int_equal(via_model_open(io, &mc), 0);
}

static uint8_t reg(struct via_io *io, uint8_t r)
{
	uint8_t v = 0;

	assert_int_equal(via_sensor_read(io, r, &v), 0);
	return v;
}

/* Compares @frame with the model's reference render outside the per-frame rectangles. */
static void assert_matches_model(struct via_io *io, const uint8_t *frame, uint32_t w,
				 uint32_t h)
{
	struct via_model_scene sc;
	size_t total;
	long same;

	assert_int_equal(via_model_scene_get(io, &sc), 0);
	assert_int_equal(sc.width, w);
	assert_int_equal(sc.height, h);
	same = via_model_compare(&sc, frame, &total);
	assert_true(total > (size_t)w * h / 2);
	if ((size_t)same != total)
		fail_msg("%zu of %zu static pixels differ from the model's render",
			 total - (size_t)same, total);
}

extern const struct vc_backend_ops vc_backend_via;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The backend as the session drives it, on the model with the real clock: start() returns at
 * once although the XO-1.5's sensor power-up alone sleeps 40 ms (the worker does it), the
 * engine's own clock wakes the session (clock_fd) about 30 times a second, every frame
 * carries the time the engine finished it, and controls are checked at once and set by the
 * worker while it streams.
 */
static void test_backend_own_clock(void **state)
{
	struct vc_kv kv[] = { { (char *)"transport", (char *)"model", 1 },
			      { (char *)"olpc_power", (char *)"yes", 2 } };
	struct vc_backend_conf conf = { .camera = "t", .keys = kv, .nkeys = 2 };
	struct vc_mode mode = { V4L2_PIX_FMT_YUYV, 320, 240, 1, 30 };
	static uint8_t buf[320 * 240 * 2];
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .mode = &mode,
			       .bytesperline = 640 };
	struct vc_error err = { 0 };
	uint64_t t0, prev = 0;
	int frames = 0, stamped = 0, wakeups = 0;
	void *priv;

	(void)state;
	assert_int_equal(vc_backend_via.create(&conf, &priv, &err), 0);
	assert_non_null(vc_backend_via.clock_fd);
	t0 = mono_ns();
	assert_int_equal(vc_backend_via.start(priv, &mode, &err), 0);
	if (mono_ns() - t0 > 20000000)
		fail_msg("start() took %llu ms", (unsigned long long)((mono_ns() - t0) / 1000000));
	assert_true(vc_backend_via.clock_fd(priv) >= 0);
	t0 = mono_ns();
	while (mono_ns() - t0 < 1500000000) {
		struct pollfd p = { .fd = vc_backend_via.clock_fd(priv), .events = POLLIN };

		if (poll(&p, 1, 200) <= 0)
			continue;
		wakeups++;
		fr.capture_ns = 0;
		fr.note[0] = 0;
		if (vc_backend_via.produce(priv, &fr) != 0)
			continue;
		frames++;
		assert_int_equal(fr.bytesused, sizeof(buf));
		if (fr.capture_ns > prev && fr.capture_ns <= mono_ns() &&
		    fr.capture_ns + 100000000 > mono_ns())
			stamped++;
		prev = fr.capture_ns;
		if (frames == 5) {
			assert_int_equal(vc_backend_via.set_ctrl(priv, V4L2_CID_CONTRAST, 100), 0);
			assert_int_equal(vc_backend_via.set_ctrl(priv, V4L2_CID_BRIGHTNESS, 999),
					 -EINVAL);
		}
	}
	/* 1.5 s at 30 fps, less the sensor's setup; a spinning clock would wake far more often */
	assert_in_range(frames, 30, 46);
	assert_int_equal(stamped, frames);
	assert_in_range(wakeups, frames, frames + 10);
	vc_backend_via.stop(priv);
	/* stopped: no frame comes any more */
	{
		struct pollfd p = { .fd = vc_backend_via.clock_fd(priv), .events = POLLIN };

		if (poll(&p, 1, 200) > 0)
			assert_int_equal(vc_backend_via.produce(priv, &fr), -EAGAIN);
	}
	/* and it starts again */
	assert_int_equal(vc_backend_via.start(priv, &mode, &err), 0);
	frames = 0;
	t0 = mono_ns();
	while (mono_ns() - t0 < 1000000000 && frames < 3) {
		struct pollfd p = { .fd = vc_backend_via.clock_fd(priv), .events = POLLIN };

		if (poll(&p, 1, 200) > 0 && vc_backend_via.produce(priv, &fr) == 0)
			frames++;
	}
	assert_int_equal(frames, 3);
	vc_backend_via.stop(priv);
	vc_backend_via.release(priv);
}

/*
 * Consumers that come and go faster than the worker powers the sensor up (40 ms each time
 * with olpc_power): 200 start/stop pairs are all accepted, and after the last start the
 * camera streams.
 */
static void test_backend_start_stop_storm(void **state)
{
	struct vc_kv kv[] = { { (char *)"transport", (char *)"model", 1 },
			      { (char *)"olpc_power", (char *)"yes", 2 } };
	struct vc_backend_conf conf = { .camera = "t", .keys = kv, .nkeys = 2 };
	struct vc_mode mode = { V4L2_PIX_FMT_YUYV, 320, 240, 1, 30 };
	static uint8_t buf[320 * 240 * 2];
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .mode = &mode,
			       .bytesperline = 640 };
	struct vc_error err = { 0 };
	int frames = 0;
	uint64_t t0;
	void *priv;

	(void)state;
	assert_int_equal(vc_backend_via.create(&conf, &priv, &err), 0);
	for (int i = 0; i < 200; i++) {
		if (vc_backend_via.start(priv, &mode, &err) != 0)
			fail_msg("start %d refused: %s", i, err.msg);
		vc_backend_via.stop(priv);
	}
	assert_int_equal(vc_backend_via.start(priv, &mode, &err), 0);
	t0 = mono_ns();
	while (mono_ns() - t0 < 3000000000u && frames < 3) {
		struct pollfd p = { .fd = vc_backend_via.clock_fd(priv), .events = POLLIN };

		if (poll(&p, 1, 200) > 0 && vc_backend_via.produce(priv, &fr) == 0)
			frames++;
	}
	assert_int_equal(frames, 3);
	vc_backend_via.stop(priv);
	vc_backend_via.release(priv);
}

static void test_probe(void **state)
{
	static const uint8_t other[4] = { 0x7f, 0xa2, 0x77, 0x73 };
	struct via_io io;
	char msg[256];

	(void)state;
	open_model(&io, NULL);
	assert_int_equal(ov7670_probe(&io, msg, sizeof(msg)), 0);
	io.ops->close(&io);

	open_model(&io, other);
	assert_int_equal(ov7670_probe(&io, msg, sizeof(msg)), -ENODEV);
	assert_non_null(strstr(msg, "not an OV7670: MIDH/MIDL/PID/VER read 7f a2 77 73, expected 7f a2 76 73"));
	io.ops->close(&io);
}

static void test_absent_sensor(void **state)
{
	struct via_model_conf mc = { .sensor_absent = true, .clock = fake_clock };
	struct via_io io = { .i2c_fd = -1 };
	char msg[256];

	(void)state;
	assert_int_equal(via_model_open(&io, &mc), 0);
	assert_true(ov7670_probe(&io, msg, sizeof(msg)) < 0);
	assert_non_null(strstr(msg, "the OV7670 does not answer"));
	io.ops->close(&io);
}

/* Sets up sensor + engine for a mode and takes one frame. */
static void one_mode(uint32_t w, uint32_t h, bool rgb)
{
	struct ov7670_state st;
	struct via_engine e;
	struct via_io io;
	size_t len = (size_t)w * h * 2;
	uint8_t *frame = malloc(len);

	open_model(&io, NULL);
	ov7670_state_init(&st);
	st.rgb565 = rgb;
	assert_int_equal(ov7670_setup(&io, &st), 0);
	assert_int_equal(via_engine_configure(&e, &io, w, h, rgb), 0);
	via_engine_start(&e);
	assert_int_equal(via_engine_poll(&e, frame, len, w * 2, 0), 0);	/* nothing yet */
	fake_ns += 34000000;
	assert_int_equal(via_engine_poll(&e, frame, len, w * 2, 0), 1);
	assert_null(via_model_error(&io));
	assert_matches_model(&io, frame, w, h);
	via_engine_stop(&e);
	fake_ns += 100000000;
	assert_int_equal(via_engine_poll(&e, frame, len, w * 2, 0), 0);	/* stopped */
	/* and again: a restart gives frames as before */
	assert_int_equal(via_engine_configure(&e, &io, w, h, rgb), 0);
	via_engine_start(&e);
	fake_ns += 34000000;
	assert_int_equal(via_engine_poll(&e, frame, len, w * 2, 0), 1);
	assert_matches_model(&io, frame, w, h);
	assert_null(via_model_error(&io));
	io.ops->close(&io);
	free(frame);
}

static void test_sizes_and_formats(void **state)
{
	(void)state;
	one_mode(640, 480, false);
	one_mode(352, 288, false);
	one_mode(320, 240, false);
	one_mode(176, 144, false);
	one_mode(200, 150, false);	/* any size in range: stride rounded up to 16 */
	one_mode(640, 480, true);
}

static void test_refused_modes(void **state)
{
	struct via_engine e;
	struct via_io io;

	(void)state;
	open_model(&io, NULL);
	assert_int_equal(via_engine_configure(&e, &io, 320, 240, true), -EINVAL);	/* RGB scaled */
	assert_int_equal(via_engine_configure(&e, &io, 160, 120, false), -EINVAL);
	assert_int_equal(via_engine_configure(&e, &io, 800, 600, false), -EINVAL);
	assert_int_equal(via_engine_avscale(320, 240), 0x06000c00);
	assert_int_equal(via_engine_avscale(176, 144), 0x05330a33);
	assert_int_equal(via_engine_avscale(640, 480), 0);
	io.ops->close(&io);
}

/* Frames in one simulated second, polling every millisecond. */
static unsigned int frames_per_second(unsigned int fps)
{
	struct ov7670_state st;
	struct via_engine e;
	struct via_io io;
	uint8_t *frame = malloc(176 * 144 * 2);
	unsigned int n = 0;

	open_model(&io, NULL);
	ov7670_state_init(&st);
	st.fps = fps;
	assert_int_equal(ov7670_setup(&io, &st), 0);
	assert_int_equal(reg(&io, OV_CLKRC) & 0x3f, ov7670_clkrc(fps));
	assert_int_equal(via_engine_configure(&e, &io, 176, 144, false), 0);
	via_engine_start(&e);
	for (int ms = 0; ms < 1000; ms++) {
		fake_ns += 1000000;
		n += (unsigned int)via_engine_poll(&e, frame, 176 * 144 * 2, 352, 0);
	}
	assert_int_equal(e.missed, 0);
	io.ops->close(&io);
	free(frame);
	return n;
}

static void test_frame_rates(void **state)
{
	(void)state;
	assert_int_equal(ov7670_clkrc(30), 3);
	assert_int_equal(ov7670_clkrc(15), 6);
	assert_int_equal(ov7670_clkrc(10), 9);
	assert_int_equal(ov7670_clkrc(5), 18);
	assert_int_equal(ov7670_clkrc(1), 63);
	assert_in_range(frames_per_second(30), 29, 30);
	assert_in_range(frames_per_second(15), 14, 15);
	assert_in_range(frames_per_second(10), 9, 10);
	assert_in_range(frames_per_second(5), 4, 5);
}

static void test_missed_frame(void **state)
{
	struct ov7670_state st;
	struct via_engine e;
	struct via_io io;
	uint8_t *frame = malloc(640 * 480 * 2);

	(void)state;
	open_model(&io, NULL);
	ov7670_state_init(&st);
	assert_int_equal(ov7670_setup(&io, &st), 0);
	assert_int_equal(via_engine_configure(&e, &io, 640, 480, false), 0);
	via_engine_start(&e);
	fake_ns += 34000000;
	assert_int_equal(via_engine_poll(&e, frame, 640 * 480 * 2, 1280, 0), 1);
	assert_int_equal(e.missed, 0);
	fake_ns += 2 * 33333334;	/* two frames finish before the next poll */
	assert_int_equal(via_engine_poll(&e, frame, 640 * 480 * 2, 1280, 0), 1);
	assert_int_equal(e.missed, 1);
	assert_matches_model(&io, frame, 640, 480);
	assert_int_equal(via_engine_poll(&e, frame, 640 * 480 * 2, 1280, 0), 0);
	io.ops->close(&io);
	free(frame);
}

/* What the bridge accepts (kmod viacam_check_ctrl): menus without a step, one item per value. */
static void test_declared_controls(void **state)
{
	struct viacam_ctrl c[OV_NCTRLS];

	(void)state;
	ov7670_ctrls(c);
	for (int i = 0; i < OV_NCTRLS; i++) {
		assert_true(c[i].minimum <= c[i].default_value && c[i].default_value <= c[i].maximum);
		if (c[i].type == V4L2_CTRL_TYPE_MENU) {
			assert_int_equal(c[i].step, 0);
			assert_int_equal(c[i].menu_count, c[i].maximum + 1);
		} else {
			assert_true(c[i].step >= 1);
		}
		assert_true(V4L2_CTRL_ID2WHICH(c[i].id) == V4L2_CTRL_CLASS_USER ||
			    V4L2_CTRL_ID2WHICH(c[i].id) == V4L2_CTRL_CLASS_CAMERA);
	}
}

static void test_controls(void **state)
{
	struct ov7670_state st;
	struct via_io io;
	uint8_t mag[6], signs;

	(void)state;
	open_model(&io, NULL);
	ov7670_state_init(&st);
	assert_int_equal(ov7670_setup(&io, &st), 0);
	assert_int_equal(reg(&io, OV_COM8) & (OV_COM8_AEC | OV_COM8_AGC), OV_COM8_AEC | OV_COM8_AGC);

	/* brightness: sign-magnitude, and auto exposure goes off */
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_BRIGHTNESS, 200), 0);
	assert_int_equal(reg(&io, OV_BRIGHT), 200 & 0x7f);
	assert_int_equal(reg(&io, OV_COM8) & OV_COM8_AEC, 0);
	assert_int_equal(st.exposure_auto, V4L2_EXPOSURE_MANUAL);
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_BRIGHTNESS, 28), 0);
	assert_int_equal(reg(&io, OV_BRIGHT), 0x80 | 100);

	/* exposure over three registers */
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_EXPOSURE_AUTO, V4L2_EXPOSURE_AUTO), 0);
	assert_int_equal(reg(&io, OV_COM8) & OV_COM8_AEC, OV_COM8_AEC);
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_EXPOSURE, 0x1237), 0);
	assert_int_equal(reg(&io, OV_COM1) & 3, 0x1237 & 3);
	assert_int_equal(reg(&io, OV_AECH), (0x1237 >> 2) & 0xff);
	assert_int_equal(reg(&io, OV_AECHH) & 0x3f, 0x1237 >> 10);
	assert_int_equal(reg(&io, OV_COM8) & OV_COM8_AEC, 0);

	/* gain turns AGC off; autogain turns it back on */
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_GAIN, 50), 0);
	assert_int_equal(reg(&io, OV_GAIN), 50);
	assert_int_equal(reg(&io, OV_COM8) & OV_COM8_AGC, 0);
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_AUTOGAIN, 1), 0);
	assert_int_equal(reg(&io, OV_COM8) & OV_COM8_AGC, OV_COM8_AGC);

	/* flips, contrast, test pattern */
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_HFLIP, 1), 0);
	assert_int_equal(reg(&io, OV_MVFP) & (OV_MVFP_MIRROR | OV_MVFP_VFLIP), OV_MVFP_MIRROR);
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_VFLIP, 1), 0);
	assert_int_equal(reg(&io, OV_MVFP) & OV_MVFP_VFLIP, OV_MVFP_VFLIP);
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_CONTRAST, 100), 0);
	assert_int_equal(reg(&io, OV_CONTRAS), 100);
	assert_int_equal(ov7670_set_ctrl(&io, &st, OV_CID_TEST_PATTERN, 2), 0);
	assert_int_equal(reg(&io, OV_SCALING_XSC) & 0x80, 0);
	assert_int_equal(reg(&io, OV_SCALING_YSC) & 0x80, 0x80);

	/* saturation and hue: the matrix registers; hue 180 flips every sign */
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_SATURATION, 64), 0);
	ov7670_matrix(false, 64, 0, mag, &signs);
	assert_int_equal(mag[0], 64);
	assert_int_equal(reg(&io, OV_MTX1), 64);
	assert_int_equal(reg(&io, OV_MTXS) & 0x3f, signs);
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_HUE, 180), 0);
	assert_int_equal(reg(&io, OV_MTX1), 64);
	assert_int_equal(reg(&io, OV_MTXS) & 0x3f, (~signs & 0x3f) & ~(1u << 2));	/* 0 stays 0 */

	/* bad values and ids change nothing */
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_HUE, 7), -EINVAL);
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_CONTRAST, 128), -EINVAL);
	assert_int_equal(ov7670_set_ctrl(&io, &st, V4L2_CID_SHARPNESS, 1), -EINVAL);
	/* with the sensor off only the state changes */
	assert_int_equal(ov7670_set_ctrl(NULL, &st, V4L2_CID_GAIN, 77), 0);
	assert_int_equal(st.gain, 77);
	assert_int_equal(reg(&io, OV_GAIN), 50);
	io.ops->close(&io);
}

static void test_flip_and_bars_in_frames(void **state)
{
	struct ov7670_state st;
	struct via_engine e;
	struct via_io io;
	struct via_model_scene sc;
	uint8_t *frame = malloc(320 * 240 * 2);

	(void)state;
	open_model(&io, NULL);
	ov7670_state_init(&st);
	st.hflip = true;
	st.test_pattern = 2;
	assert_int_equal(ov7670_setup(&io, &st), 0);
	assert_int_equal(via_model_scene_get(&io, &sc), 0);
	assert_true(sc.hflip);
	assert_int_equal(sc.test_pattern, 2);
	assert_int_equal(via_engine_configure(&e, &io, 320, 240, false), 0);
	via_engine_start(&e);
	fake_ns += 34000000;
	assert_int_equal(via_engine_poll(&e, frame, 320 * 240 * 2, 640, 0), 1);
	assert_matches_model(&io, frame, 320, 240);
	io.ops->close(&io);
	free(frame);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backend_own_clock),
		cmocka_unit_test(test_backend_start_stop_storm),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_absent_sensor),
		cmocka_unit_test(test_sizes_and_formats),
		cmocka_unit_test(test_refused_modes),
		cmocka_unit_test(test_frame_rates),
		cmocka_unit_test(test_missed_frame),
		cmocka_unit_test(test_declared_controls),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_flip_and_bars_in_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
