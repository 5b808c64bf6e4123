// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-convert.c - the libv4lconvert wrapper: which conversions exist, and that converted
 * frames carry the source's colours (no software processing sneaks in).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/videodev2.h>

#include "convert.h"

#define W 32
#define H 16

/* A YUYV frame of one colour. */
static void fill_yuyv(uint8_t *p, uint8_t y, uint8_t u, uint8_t v)
{
	for (size_t i = 0; i < (size_t)W * H / 2; i++) {
		p[4 * i] = y;
		p[4 * i + 1] = u;
		p[4 * i + 2] = y;
		p[4 * i + 3] = v;
	}
}

static void test_possible(void **state)
{
	(void)state;
	assert_true(vc_convert_possible(V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_YUV420));
	assert_true(vc_convert_possible(V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_RGB24));
	assert_true(vc_convert_possible(V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_BGR24));
	assert_true(vc_convert_possible(V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_YUV420));
	/* libv4lconvert makes neither YUYV nor NV12; and a format is not converted to itself */
	assert_false(vc_convert_possible(V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_YUYV));
	assert_false(vc_convert_possible(V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12));
	assert_false(vc_convert_possible(V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_RGB24));
}

static void test_yuyv_to_yuv420_keeps_values(void **state)
{
	struct vc_mode from = { V4L2_PIX_FMT_YUYV, W, H, 1, 30 };
	struct vc_mode to = { V4L2_PIX_FMT_YUV420, W, H, 1, 30 };
	uint8_t src[W * H * 2], dst[W * H * 3 / 2];
	struct vc_convert *c = vc_convert_new();
	int r;

	(void)state;
	assert_non_null(c);
	fill_yuyv(src, 81, 90, 240);
	memset(dst, 0, sizeof(dst));
	r = vc_convert_frame(c, &from, src, sizeof(src), &to, dst, sizeof(dst));
	assert_int_equal(r, sizeof(dst));
	for (size_t i = 0; i < (size_t)W * H; i++)
		assert_int_equal(dst[i], 81);
	for (size_t i = 0; i < (size_t)W * H / 4; i++) {
		assert_int_equal(dst[W * H + i], 90);		/* U plane */
		assert_int_equal(dst[W * H * 5 / 4 + i], 240);	/* V plane */
	}
	vc_convert_free(c);
}

/*
 * libv4lconvert reads Y'CbCr as full range (Y 235 gives grey 235, not white 255): greys keep
 * their level, and each primary comes out as its own channel clearly dominating.
 */
static void test_yuyv_to_rgb24_colours(void **state)
{
	static const struct {
		uint8_t y, u, v;
		int channel;	/* -1: grey of level y; else the dominant channel */
	} cases[] = {
		{ 235, 128, 128, -1 },	/* BT.601 white */
		{ 16, 128, 128, -1 },	/* black */
		{ 126, 128, 128, -1 },	/* mid grey */
		{ 81, 90, 240, 0 },	/* red */
		{ 145, 54, 34, 1 },	/* green */
		{ 41, 240, 110, 2 },	/* blue */
	};
	struct vc_mode from = { V4L2_PIX_FMT_YUYV, W, H, 1, 30 };
	struct vc_mode to = { V4L2_PIX_FMT_RGB24, W, H, 1, 30 };
	uint8_t src[W * H * 2], dst[W * H * 3];
	struct vc_convert *c = vc_convert_new();

	(void)state;
	assert_non_null(c);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		fill_yuyv(src, cases[k].y, cases[k].u, cases[k].v);
		assert_int_equal(vc_convert_frame(c, &from, src, sizeof(src), &to, dst, sizeof(dst)),
				 sizeof(dst));
		for (size_t i = 0; i < (size_t)W * H; i += 37) {
			const uint8_t *px = &dst[3 * i];

			if (cases[k].channel < 0) {
				for (int ch = 0; ch < 3; ch++)
					assert_in_range(px[ch], cases[k].y - 2, cases[k].y + 2);
				continue;
			}
			for (int ch = 0; ch < 3; ch++)
				if (ch != cases[k].channel)
					assert_true(px[cases[k].channel] > px[ch] + 180);
		}
	}
	vc_convert_free(c);
}

static void test_refusals(void **state)
{
	struct vc_mode from = { V4L2_PIX_FMT_YUYV, W, H, 1, 30 };
	struct vc_mode other = { V4L2_PIX_FMT_RGB24, W * 2, H, 1, 30 };
	struct vc_mode to = { V4L2_PIX_FMT_RGB24, W, H, 1, 30 };
	uint8_t src[W * H * 2], dst[W * H * 3];
	struct vc_convert *c = vc_convert_new();

	(void)state;
	memset(src, 128, sizeof(src));
	assert_int_equal(vc_convert_frame(c, &from, src, sizeof(src), &other, dst, sizeof(dst)),
			 -EINVAL);
	assert_string_equal(vc_convert_error(c), "unsupported conversion");
	assert_int_equal(vc_convert_frame(c, &from, src, sizeof(src), &to, dst, sizeof(dst) - 1),
			 -ENOSPC);
	vc_convert_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_possible),
		cmocka_unit_test(test_yuyv_to_yuv420_keeps_values),
		cmocka_unit_test(test_yuyv_to_rgb24_colours),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
