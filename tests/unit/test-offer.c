// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-offer.c - the offer a camera declares to the bridge, computed from a config section
 * and a backend's native modes (backend/core/offer.c). No backend instance and no bridge: the
 * modes and sections are made by hand, and each test checks the exact tuples that come out,
 * in their order, with the native mode each is made from and whether it is converted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/videodev2.h>

#include "config.h"
#include "offer.h"

#define PATH "test.conf"
#define NOTHING "camera cam: nothing to offer: backend 'test' produces no format, size and rate that the section allows (and the bridge takes)"

#define YUYV V4L2_PIX_FMT_YUYV
#define GREY V4L2_PIX_FMT_GREY
#define MJPEG V4L2_PIX_FMT_MJPEG
#define YUV420 V4L2_PIX_FMT_YUV420
#define YVU420 V4L2_PIX_FMT_YVU420
#define RGB24 V4L2_PIX_FMT_RGB24
#define BGR24 V4L2_PIX_FMT_BGR24
#define NV12 V4L2_PIX_FMT_NV12

/* A section "[camera cam]" at line 2 with backend "test" and no filter. */
static struct vc_cam_conf *section(void)
{
	struct vc_cam_conf *cc = calloc(1, sizeof(*cc));

	assert_non_null(cc);
	snprintf(cc->name, sizeof(cc->name), "cam");
	snprintf(cc->backend, sizeof(cc->backend), "test");
	cc->line = 2;
	return cc;
}

static void set_formats(struct vc_cam_conf *cc, int line, size_t n, const uint32_t *f)
{
	memcpy(cc->formats, f, n * sizeof(f[0]));
	cc->nformats = n;
	cc->formats_line = line;
}

static void set_sizes(struct vc_cam_conf *cc, int line, size_t n, const uint32_t (*wh)[2])
{
	memcpy(cc->sizes, wh, n * sizeof(wh[0]));
	cc->nsizes = n;
	cc->sizes_line = line;
}

static void set_rates(struct vc_cam_conf *cc, int line, size_t n, const uint32_t (*iv)[2])
{
	memcpy(cc->intervals, iv, n * sizeof(iv[0]));
	cc->nintervals = n;
	cc->rates_line = line;
}

/* What describe() would have returned: @n modes, no backend behind them. */
static struct vc_prepared *modes(size_t n, const struct vc_mode *m)
{
	struct vc_prepared *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(vc_modes_add(&p->native, &m[i]), 0);
	assert_int_equal(p->native.n, n);
	return p;
}

/* Builds the offer, which must not be empty. */
static void build(struct vc_prepared *p, const struct vc_cam_conf *cc)
{
	struct vc_msgs m = { 0 };

	assert_int_equal(vc_offer_build(p, cc, PATH, &m), 0);
	assert_int_equal(m.n, 0);
	vc_msgs_free(&m);
}

/* Asserts that the offer is empty and the one message is NOTHING at @line. */
static void assert_nothing(struct vc_prepared *p, const struct vc_cam_conf *cc, int line)
{
	struct vc_msgs m = { 0 };
	char want[512];

	assert_int_equal(vc_offer_build(p, cc, PATH, &m), -EINVAL);
	assert_int_equal(p->noffers, 0);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.lines[0], line);
	snprintf(want, sizeof(want), PATH ":%d: " NOTHING, line);
	assert_string_equal(m.v[0], want);
	vc_msgs_free(&m);
}

/* Asserts offer @i: @f at @w x @h, interval @num/@den, from native mode @native (@convert). */
static void assert_offer_(const struct vc_prepared *p, size_t i, uint32_t f, uint32_t w,
			  uint32_t h, uint32_t num, uint32_t den, size_t native, bool convert,
			  int line)
{
	const struct vc_offer *o;
	char a[5], b[5];

	if (i >= p->noffers)
		fail_msg("line %d: no offer %zu (there are %zu)", line, i, p->noffers);
	o = &p->offers[i];
	if (o->fmt.pixelformat != f || o->fmt.width != w || o->fmt.height != h ||
	    o->fmt.interval_num != num || o->fmt.interval_den != den || o->native != native ||
	    o->convert != convert)
		fail_msg("line %d: offer %zu is %s %ux%u %u/%u from native %zu%s, "
			 "expected %s %ux%u %u/%u from native %zu%s",
			 line, i, vc_fourcc_str(o->fmt.pixelformat, a), o->fmt.width,
			 o->fmt.height, o->fmt.interval_num, o->fmt.interval_den, o->native,
			 o->convert ? " converted" : "", vc_fourcc_str(f, b), w, h, num, den,
			 native, convert ? " converted" : "");
	/* Only compressed formats carry a frame size; raw ones leave it to the bridge. */
	assert_int_equal(o->fmt.sizeimage, f == MJPEG ? w * h * 2 : 0);
}
#define assert_offer(p, i, f, w, h, num, den, native, convert) \
	assert_offer_(p, i, f, w, h, num, den, native, convert, __LINE__)

/*
 * Without a filter: the native format first, in the backend's order, then YUV420 and RGB24
 * converted from it, each for every native mode.
 */
static void test_no_filter(void **state)
{
	static const struct vc_mode m[] = {
		{ YUYV, 640, 480, 1, 30 },
		{ YUYV, 320, 240, 1, 15 },
	};
	struct vc_cam_conf *cc = section();
	struct vc_prepared *p = modes(2, m);

	(void)state;
	build(p, cc);
	assert_int_equal(p->noffers, 6);
	assert_offer(p, 0, YUYV, 640, 480, 1, 30, 0, false);
	assert_offer(p, 1, YUYV, 320, 240, 1, 15, 1, false);
	assert_offer(p, 2, YUV420, 640, 480, 1, 30, 0, true);
	assert_offer(p, 3, YUV420, 320, 240, 1, 15, 1, true);
	assert_offer(p, 4, RGB24, 640, 480, 1, 30, 0, true);
	assert_offer(p, 5, RGB24, 320, 240, 1, 15, 1, true);
	/* Building again replaces the offer rather than appending to it. */
	build(p, cc);
	assert_int_equal(p->noffers, 6);
	assert_offer(p, 5, RGB24, 320, 240, 1, 15, 1, true);
	free(p);
	free(cc);
}

/*
 * The section's lists: formats in the section's order (and only those: no YUV420 added),
 * sizes and rates as filters; a rate matches as a fraction (2/60 is 1/30).
 */
static void test_filters(void **state)
{
	static const struct vc_mode m[] = {
		{ YUYV, 640, 480, 1, 30 },
		{ YUYV, 640, 480, 1, 15 },
		{ YUYV, 320, 240, 1, 30 },
		{ YUYV, 320, 240, 1, 15 },
		{ YUYV, 160, 120, 1, 30 },
		{ YUYV, 160, 120, 1, 15 },
	};
	static const uint32_t formats[] = { RGB24, YUYV };
	static const uint32_t sizes[][2] = { { 160, 120 }, { 320, 240 } };
	static const uint32_t rates[][2] = { { 2, 60 } };
	struct vc_cam_conf *cc = section();
	struct vc_prepared *p = modes(6, m);

	(void)state;
	/* each list alone */
	set_formats(cc, 3, 1, &formats[1]);
	build(p, cc);
	assert_int_equal(p->noffers, 6);
	for (size_t i = 0; i < 6; i++)
		assert_offer(p, i, YUYV, m[i].width, m[i].height, 1, m[i].interval_den, i, false);

	memset(cc->formats, 0, sizeof(cc->formats));
	cc->nformats = 0;
	set_sizes(cc, 4, 1, &sizes[1]);
	build(p, cc);
	assert_int_equal(p->noffers, 6);
	assert_offer(p, 0, YUYV, 320, 240, 1, 30, 2, false);
	assert_offer(p, 1, YUYV, 320, 240, 1, 15, 3, false);
	assert_offer(p, 2, YUV420, 320, 240, 1, 30, 2, true);
	assert_offer(p, 3, YUV420, 320, 240, 1, 15, 3, true);
	assert_offer(p, 4, RGB24, 320, 240, 1, 30, 2, true);
	assert_offer(p, 5, RGB24, 320, 240, 1, 15, 3, true);

	cc->nsizes = 0;
	set_rates(cc, 5, 1, rates);
	build(p, cc);
	assert_int_equal(p->noffers, 9);
	assert_offer(p, 0, YUYV, 640, 480, 1, 30, 0, false);
	assert_offer(p, 1, YUYV, 320, 240, 1, 30, 2, false);
	assert_offer(p, 2, YUYV, 160, 120, 1, 30, 4, false);
	assert_offer(p, 3, YUV420, 640, 480, 1, 30, 0, true);
	assert_offer(p, 8, RGB24, 160, 120, 1, 30, 4, true);

	/* all three: the section's format order, the backend's mode order within a format */
	set_formats(cc, 3, 2, formats);
	set_sizes(cc, 4, 2, sizes);
	build(p, cc);
	assert_int_equal(p->noffers, 4);
	assert_offer(p, 0, RGB24, 320, 240, 1, 30, 2, true);
	assert_offer(p, 1, RGB24, 160, 120, 1, 30, 4, true);
	assert_offer(p, 2, YUYV, 320, 240, 1, 30, 2, false);
	assert_offer(p, 3, YUYV, 160, 120, 1, 30, 4, false);
	free(p);
	free(cc);
}

/*
 * Converted formats come from libv4lconvert's destinations (YUV420, YVU420, RGB24, BGR24),
 * never to a format it cannot make (NV12), and a tuple the backend makes natively is offered
 * once, as native.
 */
static void test_converted(void **state)
{
	static const struct vc_mode m[] = {
		{ YUYV, 640, 480, 1, 30 },
		{ YUV420, 640, 480, 1, 30 },
		{ YUYV, 320, 240, 1, 30 },
	};
	static const uint32_t formats[] = { YVU420, BGR24, NV12 };
	struct vc_cam_conf *cc = section();
	struct vc_prepared *p = modes(3, m);

	(void)state;
	build(p, cc);
	assert_int_equal(p->noffers, 6);
	assert_offer(p, 0, YUYV, 640, 480, 1, 30, 0, false);
	assert_offer(p, 1, YUYV, 320, 240, 1, 30, 2, false);
	assert_offer(p, 2, YUV420, 640, 480, 1, 30, 1, false);	/* native, not from YUYV */
	assert_offer(p, 3, YUV420, 320, 240, 1, 30, 2, true);
	assert_offer(p, 4, RGB24, 640, 480, 1, 30, 0, true);	/* from the first native */
	assert_offer(p, 5, RGB24, 320, 240, 1, 30, 2, true);
	free(p);

	p = modes(1, m);
	set_formats(cc, 3, 3, formats);
	build(p, cc);
	assert_int_equal(p->noffers, 2);
	assert_offer(p, 0, YVU420, 640, 480, 1, 30, 0, true);
	assert_offer(p, 1, BGR24, 640, 480, 1, 30, 0, true);

	/* NV12 alone: libv4lconvert does not make it, so nothing is left */
	set_formats(cc, 3, 1, &formats[2]);
	assert_nothing(p, cc, 3);
	free(p);
	free(cc);
}

/*
 * Sizes and rates the bridge refuses are not offered: 16..8192 each way, even sizes for the
 * 4:2:0 formats, 1/60 to 1000 frames per second. The other formats keep an odd size.
 */
static void test_what_the_bridge_refuses(void **state)
{
	static const struct vc_mode m[] = {
		{ GREY, 33, 17, 1, 30 },	/* odd: not as YUV420 */
		{ GREY, 15, 16, 1, 30 },	/* too narrow */
		{ GREY, 16, 15, 1, 30 },	/* too low */
		{ GREY, 8194, 16, 1, 30 },	/* too wide */
		{ GREY, 16, 8194, 1, 30 },	/* too high */
		{ GREY, 16, 16, 1, 30 },
		{ GREY, 8192, 8192, 1, 30 },
		{ GREY, 64, 64, 1, 1001 },	/* faster than 1000 fps */
		{ GREY, 64, 64, 61, 1 },	/* slower than one frame a minute */
		{ GREY, 64, 64, 60, 1 },
	};
	struct vc_cam_conf *cc = section();
	struct vc_prepared *p = modes(10, m);

	(void)state;
	build(p, cc);
	assert_int_equal(p->noffers, 11);
	assert_offer(p, 0, GREY, 33, 17, 1, 30, 0, false);
	assert_offer(p, 1, GREY, 16, 16, 1, 30, 5, false);
	assert_offer(p, 2, GREY, 8192, 8192, 1, 30, 6, false);
	assert_offer(p, 3, GREY, 64, 64, 60, 1, 9, false);
	assert_offer(p, 4, YUV420, 16, 16, 1, 30, 5, true);
	assert_offer(p, 5, YUV420, 8192, 8192, 1, 30, 6, true);
	assert_offer(p, 6, YUV420, 64, 64, 60, 1, 9, true);
	assert_offer(p, 7, RGB24, 33, 17, 1, 30, 0, true);
	assert_offer(p, 8, RGB24, 16, 16, 1, 30, 5, true);
	assert_offer(p, 9, RGB24, 8192, 8192, 1, 30, 6, true);
	assert_offer(p, 10, RGB24, 64, 64, 60, 1, 9, true);
	free(p);

	/* only refused modes: nothing to offer, at the section's header */
	p = modes(4, m + 1);
	assert_nothing(p, cc, 2);
	free(p);
	free(cc);
}

/* The bridge takes at most 256 tuples; the offer stops there, in its usual order. */
static void test_limit(void **state)
{
	struct vc_mode m[VC_MAX_MODES];
	struct vc_cam_conf *cc = section();
	struct vc_prepared *p;

	(void)state;
	assert_int_equal(VC_MAX_MODES, 256);
	for (size_t i = 0; i < VC_MAX_MODES; i++)
		m[i] = (struct vc_mode){ YUYV, 16 + 2 * (uint32_t)i, 16, 1, 30 };

	/* 100 native modes: 100 YUYV, 100 YUV420, then only 56 of the 100 RGB24 */
	p = modes(100, m);
	build(p, cc);
	assert_int_equal(p->noffers, 256);
	assert_offer(p, 0, YUYV, 16, 16, 1, 30, 0, false);
	assert_offer(p, 99, YUYV, 214, 16, 1, 30, 99, false);
	assert_offer(p, 100, YUV420, 16, 16, 1, 30, 0, true);
	assert_offer(p, 199, YUV420, 214, 16, 1, 30, 99, true);
	assert_offer(p, 200, RGB24, 16, 16, 1, 30, 0, true);
	assert_offer(p, 255, RGB24, 126, 16, 1, 30, 55, true);
	free(p);

	/* 256 native modes fill the offer alone */
	p = modes(VC_MAX_MODES, m);
	build(p, cc);
	assert_int_equal(p->noffers, 256);
	for (size_t i = 0; i < VC_MAX_MODES; i++)
		assert_offer(p, i, YUYV, m[i].width, 16, 1, 30, i, false);
	free(p);
	free(cc);
}

/*
 * An empty offer is an error at the line that emptied it: the formats key, else sizes, else
 * rates, else the section's header.
 */
static void test_nothing_to_offer(void **state)
{
	static const struct vc_mode m[] = { { YUYV, 640, 480, 1, 30 } };
	static const uint32_t nv12[] = { NV12 }, yuyv[] = { YUYV };
	static const uint32_t hd[][2] = { { 1280, 720 } }, vga[][2] = { { 640, 480 } };
	static const uint32_t fifth[][2] = { { 1, 5 } }, thirtieth[][2] = { { 1, 30 } };
	struct vc_cam_conf *cc;
	struct vc_prepared *p = modes(1, m);

	(void)state;
	/* formats, sizes and rates all set: the formats line, whichever emptied it */
	cc = section();
	set_formats(cc, 3, 1, nv12);
	set_sizes(cc, 4, 1, vga);
	set_rates(cc, 5, 1, thirtieth);
	assert_nothing(p, cc, 3);
	set_formats(cc, 3, 1, yuyv);
	set_rates(cc, 5, 1, fifth);
	assert_nothing(p, cc, 3);
	free(cc);

	/* no formats key: the sizes line */
	cc = section();
	set_sizes(cc, 4, 1, hd);
	set_rates(cc, 5, 1, thirtieth);
	assert_nothing(p, cc, 4);
	free(cc);

	/* only rates */
	cc = section();
	set_rates(cc, 7, 1, fifth);
	assert_nothing(p, cc, 7);
	free(cc);
	free(p);

	/* no filter, no native mode: the header */
	cc = section();
	p = modes(0, m);
	assert_nothing(p, cc, 2);
	free(p);
	free(cc);
}

/*
 * MJPEG is offered only where the backend makes it (libv4lconvert decodes it but does not
 * encode it), with a frame size for the bridge; decoded, it gives the raw formats.
 */
static void test_mjpeg_passthrough(void **state)
{
	static const struct vc_mode m[] = {
		{ MJPEG, 1280, 720, 1, 30 },
		{ YUYV, 640, 480, 1, 30 },
	};
	static const uint32_t formats[] = { MJPEG, YUV420 };
	struct vc_cam_conf *cc = section();
	struct vc_prepared *p = modes(2, m);

	(void)state;
	set_formats(cc, 3, 2, formats);
	build(p, cc);
	assert_int_equal(p->noffers, 3);
	assert_offer(p, 0, MJPEG, 1280, 720, 1, 30, 0, false);
	assert_offer(p, 1, YUV420, 1280, 720, 1, 30, 0, true);
	assert_offer(p, 2, YUV420, 640, 480, 1, 30, 1, true);
	free(p);

	/* without a filter: MJPEG, YUYV, then both sizes as YUV420 and RGB24 */
	free(cc);
	cc = section();
	p = modes(2, m);
	build(p, cc);
	assert_int_equal(p->noffers, 6);
	assert_offer(p, 0, MJPEG, 1280, 720, 1, 30, 0, false);
	assert_offer(p, 1, YUYV, 640, 480, 1, 30, 1, false);
	assert_offer(p, 2, YUV420, 1280, 720, 1, 30, 0, true);
	assert_offer(p, 3, YUV420, 640, 480, 1, 30, 1, true);
	assert_offer(p, 4, RGB24, 1280, 720, 1, 30, 0, true);
	assert_offer(p, 5, RGB24, 640, 480, 1, 30, 1, true);
	free(p);

	/* a YUYV backend asked for MJPEG: nothing */
	p = modes(1, m + 1);
	set_formats(cc, 6, 1, formats);
	assert_nothing(p, cc, 6);
	free(p);
	free(cc);
}

/*
 * vc_offer_find: the format, size and interval of a consumer's stream pick an offer; an
 * interval matches as a fraction, and a zero interval matches nothing.
 */
static void test_find(void **state)
{
	static const struct vc_mode m[] = {
		{ YUYV, 640, 480, 1, 30 },
		{ YUYV, 640, 480, 1001, 30000 },
	};
	struct vc_cam_conf *cc = section();
	struct vc_prepared *p = modes(2, m);

	(void)state;
	assert_null(vc_offer_find(p, YUYV, 640, 480, 1, 30));	/* nothing built yet */
	build(p, cc);
	assert_int_equal(p->noffers, 6);
	assert_ptr_equal(vc_offer_find(p, YUYV, 640, 480, 1, 30), &p->offers[0]);
	assert_ptr_equal(vc_offer_find(p, YUYV, 640, 480, 2, 60), &p->offers[0]);
	assert_ptr_equal(vc_offer_find(p, YUYV, 640, 480, 1000, 30000), &p->offers[0]);
	assert_ptr_equal(vc_offer_find(p, YUYV, 640, 480, 1001, 30000), &p->offers[1]);
	assert_ptr_equal(vc_offer_find(p, YUYV, 640, 480, 2002, 60000), &p->offers[1]);
	assert_ptr_equal(vc_offer_find(p, YUV420, 640, 480, 1, 30), &p->offers[2]);
	assert_ptr_equal(vc_offer_find(p, RGB24, 640, 480, 1001, 30000), &p->offers[5]);
	assert_true(p->offers[2].convert);
	assert_int_equal(p->offers[2].native, 0);
	/* another rate, size or format */
	assert_null(vc_offer_find(p, YUYV, 640, 480, 1, 25));
	assert_null(vc_offer_find(p, YUYV, 640, 360, 1, 30));
	assert_null(vc_offer_find(p, YUYV, 480, 640, 1, 30));
	assert_null(vc_offer_find(p, BGR24, 640, 480, 1, 30));
	/* a zero interval: 0/0 is 0 * den == num * 0 for every offer, yet none may match */
	assert_null(vc_offer_find(p, YUYV, 640, 480, 0, 0));
	assert_null(vc_offer_find(p, YUYV, 640, 480, 1, 0));
	assert_null(vc_offer_find(p, YUYV, 640, 480, 0, 30));
	/* 2^30/2^31 s is half a second; only products cut to 32 bits would make it 1/30 */
	assert_null(vc_offer_find(p, YUYV, 640, 480, 1u << 30, 1u << 31));
	free(p);
	free(cc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_filter),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_converted),
		cmocka_unit_test(test_what_the_bridge_refuses),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_nothing_to_offer),
		cmocka_unit_test(test_mjpeg_passthrough),
		cmocka_unit_test(test_find),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
