// SPDX-License-Identifier: GPL-2.0-only
/* test-pattern.c - the test-pattern renderer's pixels and controls, and the pattern backend. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../backend/backend.h"
#include "../../backend/pattern/pattern.h"

/* backends.c's registry names every backend; the ones this test does not link are dummies. */
__attribute__((weak)) const struct vc_backend_ops vc_backend_file = { .name = "file" };
__attribute__((weak)) const struct vc_backend_ops vc_backend_v4l2 = { .name = "v4l2" };

#define W 640
#define H 480

/* 75% bars, BT.601 limited range, written out here independently of pattern.c. */
static const uint8_t bar_yuv[8][3] = {
	{ 180, 128, 128 }, { 162, 44, 142 }, { 131, 156, 44 }, { 112, 72, 58 },
	{ 84, 184, 198 }, { 65, 100, 212 }, { 35, 212, 114 }, { 16, 128, 128 },
};

/* A rendered frame and its pixel accessor. */
struct frame {
	uint32_t fmt, w, h;
	uint8_t *buf;
	size_t size;
};

static struct frame render(const struct vc_pattern_params *p, uint32_t fmt, uint32_t w,
			   uint32_t h, uint64_t seq)
{
	struct frame f = { fmt, w, h, NULL, vc_pattern_frame_size(fmt, w, h) };
	long n;

	assert_true(f.size > 0);
	f.buf = malloc(f.size);	/* exact size: ASan catches any write past the frame */
	assert_non_null(f.buf);
	memset(f.buf, 0xa5, f.size);
	n = vc_pattern_render(p, fmt, w, h, seq, f.buf, f.size);
	assert_int_equal(n, (long)f.size);
	return f;
}

static struct vc_ycbcr px(const struct frame *f, uint32_t x, uint32_t y)
{
	struct vc_ycbcr c;

	if (f->fmt == V4L2_PIX_FMT_YUYV) {
		const uint8_t *l = f->buf + (size_t)y * f->w * 2;

		c.y = l[2 * x];
		c.cb = l[(x & ~1u) * 2 + 1];
		c.cr = l[(x & ~1u) * 2 + 3];
	} else {
		const uint8_t *uv = f->buf + (size_t)f->w * f->h + (size_t)(y / 2) * f->w;

		c.y = f->buf[(size_t)y * f->w + x];
		c.cb = uv[x & ~1u];
		c.cr = uv[(x & ~1u) + 1];
	}
	return c;
}

static void assert_px(const struct frame *f, uint32_t x, uint32_t y, int ey, int ecb, int ecr)
{
	struct vc_ycbcr c = px(f, x, y);

	if (c.y != ey || c.cb != ecb || c.cr != ecr)
		fail_msg("%ux%u %s (%u,%u): got Y %u Cb %u Cr %u, expected %d %d %d", f->w, f->h,
			 f->fmt == V4L2_PIX_FMT_YUYV ? "YUYV" : "NV12", x, y, c.y, c.cb, c.cr, ey,
			 ecb, ecr);
}

static void drop(struct frame *f)
{
	free(f->buf);
	f->buf = NULL;
}

static struct vc_pattern_params plain(enum vc_pattern_kind kind)
{
	struct vc_pattern_params p;

	vc_pattern_params_init(&p);
	p.pattern = kind;
	p.counter = false;
	p.moving = false;
	return p;
}

static const uint32_t fmts[] = { V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12 };

/* ---------------------------------------------------------------------------------------- */

static void test_bars(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_BARS);

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		struct frame fr = render(&p, fmts[f], W, H, 0);

		for (unsigned int i = 0; i < 8; i++) {
			uint32_t cx = i * W / 8 + W / 16;

			for (uint32_t y = 0; y < H; y += 97)
				assert_px(&fr, cx, y, bar_yuv[i][0], bar_yuv[i][1], bar_yuv[i][2]);
			/* the bar's edges: 640 / 8 = 80 pixels each */
			assert_px(&fr, i * 80, 200, bar_yuv[i][0], bar_yuv[i][1], bar_yuv[i][2]);
			assert_px(&fr, i * 80 + 79, 201, bar_yuv[i][0], bar_yuv[i][1], bar_yuv[i][2]);
		}
		drop(&fr);
	}
}

static void test_bars_odd_split(void **state)
{
	/* 1000 / 8 = 125: bar edges go down to even x so chroma pairs never straddle two bars. */
	struct vc_pattern_params p = plain(VC_PATTERN_BARS);
	struct frame fr = render(&p, V4L2_PIX_FMT_YUYV, 1000, 64, 0);

	(void)state;
	assert_int_equal(vc_pattern_bar_x(1000, 1), 124);
	assert_int_equal(vc_pattern_bar_x(1000, 8), 1000);
	assert_px(&fr, 123, 0, 180, 128, 128);
	assert_px(&fr, 124, 0, 162, 44, 142);
	assert_px(&fr, 999, 63, 16, 128, 128);
	drop(&fr);
}

static void test_gradient(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_GRADIENT);

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		struct frame fr = render(&p, fmts[f], W, H, 0);

		assert_px(&fr, 0, 10, 16, 128, 128);
		assert_px(&fr, W - 1, 10, 235, 128, 128);
		for (uint32_t y = 0; y < H; y += 53) {
			for (uint32_t x = 1; x < W; x++) {
				assert_true(px(&fr, x, y).y >= px(&fr, x - 1, y).y);
				assert_int_equal(px(&fr, x, y).y, px(&fr, x, 0).y);	/* same rows */
				assert_int_equal(px(&fr, x, y).cb, 128);
				assert_int_equal(px(&fr, x, y).cr, 128);
			}
		}
		assert_true(px(&fr, W / 2, 0).y > 120 && px(&fr, W / 2, 0).y < 130);
		drop(&fr);
	}
}

static void test_checkerboard(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_CHECKERBOARD);
	uint32_t s = vc_pattern_square(W, H);

	(void)state;
	assert_int_equal(s, 60);
	for (size_t f = 0; f < 2; f++) {
		struct frame fr = render(&p, fmts[f], W, H, 0);

		for (uint32_t j = 0; j < H / s; j++)
			for (uint32_t i = 0; i < W / s; i++) {
				int y = (i + j) % 2 ? 16 : 235;

				assert_px(&fr, i * s + s / 2, j * s + s / 2, y, 128, 128);
				assert_px(&fr, i * s, j * s, y, 128, 128);
				assert_px(&fr, i * s + s - 1, j * s + s - 1, y, 128, 128);
			}
		/* 640 = 10 squares + 40 pixels: the partial column continues the alternation */
		assert_px(&fr, 639, 0, 235, 128, 128);
		drop(&fr);
	}
}

/* Every pixel of the fast renderer equals the slow per-pixel definition. */
static void check_all_pixels(const struct vc_pattern_params *p, uint32_t w, uint32_t h,
			     uint64_t seq)
{
	for (size_t f = 0; f < 2; f++) {
		struct frame fr = render(p, fmts[f], w, h, seq);

		for (uint32_t y = 0; y < h; y++)
			for (uint32_t x = 0; x < w; x++) {
				struct vc_ycbcr e = vc_pattern_pixel(p, w, h, seq, x, y);

				assert_px(&fr, x, y, e.y, e.cb, e.cr);
			}
		drop(&fr);
	}
}

static void test_render_matches_pixel(void **state)
{
	static const uint32_t sizes[][2] = {
		{ 16, 16 }, { 18, 30 }, { 160, 120 }, { 322, 242 }, { 1000, 64 }, { 64, 250 },
	};
	static const uint64_t seqs[] = { 0, 1, 77, 123456789, UINT64_MAX };

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int k = 0; k < _VC_PATTERN_MAX; k++)
			for (size_t q = 0; q < sizeof(seqs) / sizeof(seqs[0]); q++) {
				struct vc_pattern_params p;

				vc_pattern_params_init(&p);
				p.pattern = (enum vc_pattern_kind)k;
				p.hflip = q % 2;
				p.vflip = q % 3 == 1;
				p.brightness = (int)q * 7 - 10;
				p.contrast = 100 + (int)q * 20;
				p.saturation = 60 + (int)q * 40;
				p.hue = (int)q * 50 - 90;
				check_all_pixels(&p, sizes[s][0], sizes[s][1], seqs[q]);
			}
	/* the full-size defaults, with everything on */
	struct vc_pattern_params d;

	vc_pattern_params_init(&d);
	check_all_pixels(&d, W, H, 42);
}

static void test_brightness(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_BARS);
	struct frame fr;

	(void)state;
	p.brightness = 20;
	fr = render(&p, V4L2_PIX_FMT_YUYV, W, H, 0);
	for (unsigned int i = 0; i < 8; i++) {
		int y = bar_yuv[i][0] + 20;

		assert_px(&fr, i * 80 + 40, 100, y > 235 ? 235 : y, bar_yuv[i][1], bar_yuv[i][2]);
	}
	drop(&fr);

	p.brightness = -128;	/* down to black at most, chroma untouched */
	fr = render(&p, V4L2_PIX_FMT_NV12, W, H, 0);
	for (unsigned int i = 0; i < 8; i++) {
		int y = bar_yuv[i][0] - 128;

		assert_px(&fr, i * 80 + 40, 100, y < 16 ? 16 : y, bar_yuv[i][1], bar_yuv[i][2]);
	}
	assert_px(&fr, 40, 100, 52, 128, 128);
	drop(&fr);
}

static void test_contrast(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_BARS);
	struct frame fr;

	(void)state;
	p.contrast = 0;	/* flat grey luma */
	fr = render(&p, V4L2_PIX_FMT_YUYV, W, H, 0);
	for (unsigned int i = 0; i < 8; i++)
		assert_px(&fr, i * 80 + 40, 10, 128, bar_yuv[i][1], bar_yuv[i][2]);
	drop(&fr);

	p.contrast = 64;	/* x0.5 around 128: 180 -> 154, 16 -> 72, 65 -> 96.5 -> 96 */
	fr = render(&p, V4L2_PIX_FMT_NV12, W, H, 0);
	assert_px(&fr, 40, 10, 154, 128, 128);
	assert_px(&fr, 7 * 80 + 40, 10, 72, 128, 128);
	assert_int_equal(px(&fr, 5 * 80 + 40, 10).y, 96);
	drop(&fr);

	p.contrast = 255;	/* ~x2, clamped to 16..235 */
	fr = render(&p, V4L2_PIX_FMT_NV12, W, H, 0);
	assert_int_equal(px(&fr, 40, 10).y, 232);	/* 128 + 52 * 255 / 128 = 231.6 */
	assert_int_equal(px(&fr, 7 * 80 + 40, 10).y, 16);
	drop(&fr);
}

static void test_saturation(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_BARS);
	struct frame fr;

	(void)state;
	p.saturation = 0;
	fr = render(&p, V4L2_PIX_FMT_YUYV, W, H, 0);
	for (unsigned int i = 0; i < 8; i++)
		assert_px(&fr, i * 80 + 40, 300, bar_yuv[i][0], 128, 128);
	drop(&fr);

	p.saturation = 64;	/* half the chroma distance: yellow Cb 44 -> 86, Cr 142 -> 135 */
	fr = render(&p, V4L2_PIX_FMT_NV12, W, H, 0);
	assert_px(&fr, 80 + 40, 300, 162, 86, 135);
	drop(&fr);

	p.saturation = 255;	/* ~x2, clamped to 16..240: blue Cb 212 -> 240 */
	fr = render(&p, V4L2_PIX_FMT_NV12, W, H, 0);
	assert_int_equal(px(&fr, 6 * 80 + 40, 300).cb, 240);
	drop(&fr);
}

static void test_hue(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_BARS);
	struct frame fr;

	(void)state;
	p.hue = 180;	/* negates the chroma */
	fr = render(&p, V4L2_PIX_FMT_YUYV, W, H, 0);
	for (unsigned int i = 0; i < 8; i++)
		assert_px(&fr, i * 80 + 40, 300, bar_yuv[i][0], 256 - bar_yuv[i][1],
			  256 - bar_yuv[i][2]);
	drop(&fr);

	p.hue = -180;
	fr = render(&p, V4L2_PIX_FMT_NV12, W, H, 0);
	for (unsigned int i = 0; i < 8; i++)
		assert_px(&fr, i * 80 + 40, 300, bar_yuv[i][0], 256 - bar_yuv[i][1],
			  256 - bar_yuv[i][2]);
	drop(&fr);

	p.hue = 90;	/* (u, v) -> (-v, u): red (-28, 84) -> (-84, -28) */
	fr = render(&p, V4L2_PIX_FMT_NV12, W, H, 0);
	assert_px(&fr, 5 * 80 + 40, 300, 65, 44, 100);
	drop(&fr);
}

static void test_hflip(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_BARS);
	struct frame a, b;

	(void)state;
	a = render(&p, V4L2_PIX_FMT_YUYV, W, H, 0);
	p.hflip = true;
	b = render(&p, V4L2_PIX_FMT_YUYV, W, H, 0);
	assert_px(&b, 0, 0, 16, 128, 128);	/* black bar on the left now */
	assert_px(&b, W - 1, 0, 180, 128, 128);
	for (uint32_t x = 0; x < W; x += 13) {
		struct vc_ycbcr ca = px(&a, x, 5), cb = px(&b, W - 1 - x, 5);

		assert_memory_equal(&ca, &cb, sizeof(ca));
	}
	drop(&a);
	drop(&b);
}

static void test_vflip(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_CHECKERBOARD);
	struct frame a, b;
	uint32_t bx, by, bs;

	(void)state;
	p.moving = true;
	a = render(&p, V4L2_PIX_FMT_NV12, W, H, 5);
	p.vflip = true;
	b = render(&p, V4L2_PIX_FMT_NV12, W, H, 5);
	/* 8 rows of 60: the top-left square is row 7's, black */
	assert_px(&a, 0, 0, 235, 128, 128);
	assert_px(&b, 0, 0, 16, 128, 128);
	for (uint32_t y = 0; y < H; y += 7) {
		struct vc_ycbcr ca = px(&a, 300, y), cb = px(&b, 300, H - 1 - y);

		assert_memory_equal(&ca, &cb, sizeof(ca));
	}
	/* the box moves with the scene */
	vc_pattern_box(W, H, 5, &bx, &by, &bs);
	assert_px(&a, bx, by, 146, 53, 193);
	assert_px(&b, bx, H - 1 - by, 146, 53, 193);
	drop(&a);
	drop(&b);
}

static void test_moving_box(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_GRADIENT);
	uint32_t x0, y0, x1, y1, s, x2, y2;
	struct frame a, b;

	(void)state;
	p.moving = true;
	vc_pattern_box(W, H, 0, &x0, &y0, &s);
	vc_pattern_box(W, H, 1, &x1, &y1, &s);
	assert_int_equal(s, 48);
	assert_int_equal(x0, 0);
	assert_int_equal(y0, 0);
	assert_int_equal(x1, 4);	/* 4 pixels per frame at 640x480 */
	assert_int_equal(y1, 4);
	/* bounces: the vertical range is 432 = 108 steps */
	vc_pattern_box(W, H, 110, &x2, &y2, &s);
	assert_int_equal(y2, 432 - 8);
	assert_int_equal(x2, 440);

	a = render(&p, V4L2_PIX_FMT_YUYV, W, H, 0);
	b = render(&p, V4L2_PIX_FMT_YUYV, W, H, 1);
	assert_px(&a, 0, 0, 146, 53, 193);
	assert_px(&a, 47, 47, 146, 53, 193);
	assert_true(px(&a, 48, 48).cb == 128);
	assert_true(px(&b, 0, 0).cb == 128);	/* moved away */
	assert_px(&b, 4, 4, 146, 53, 193);
	assert_px(&b, 51, 51, 146, 53, 193);
	assert_memory_not_equal(a.buf, b.buf, a.size);
	drop(&a);
	drop(&b);

	p.moving = false;	/* without the box and counter, frames do not change */
	a = render(&p, V4L2_PIX_FMT_YUYV, W, H, 0);
	b = render(&p, V4L2_PIX_FMT_YUYV, W, H, 1);
	assert_memory_equal(a.buf, b.buf, a.size);
	drop(&a);
	drop(&b);
}

static void test_counter(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_BARS);
	uint32_t cx, cy, cw, ch;
	struct frame a, b;
	bool differ = false;

	(void)state;
	p.counter = true;
	vc_pattern_counter_rect(W, H, 0, &cx, &cy, &cw, &ch);
	assert_int_equal(cx, 4);
	assert_int_equal(cy, 4);
	assert_int_equal(cw, 37 * 4);	/* 6 digits */
	assert_int_equal(ch, 36);

	a = render(&p, V4L2_PIX_FMT_NV12, W, H, 0);
	b = render(&p, V4L2_PIX_FMT_NV12, W, H, 1);
	for (uint32_t y = 0; y < H; y++)
		for (uint32_t x = 0; x < W; x++) {
			struct vc_ycbcr ca = px(&a, x, y), cb = px(&b, x, y);
			bool inside = x >= cx && x < cx + cw && y >= cy && y < cy + ch;

			if (memcmp(&ca, &cb, sizeof(ca))) {
				assert_true(inside);
				differ = true;
			}
			if (inside) {	/* white on black, no chroma */
				assert_true(ca.y == 235 || ca.y == 16);
				assert_int_equal(ca.cb, 128);
			}
		}
	assert_true(differ);
	/* the box's border is black; "000000": the first digit's top row is .###. */
	assert_px(&a, 4, 4, 16, 128, 128);
	assert_px(&a, 4 + 4 + 1, 4 + 4 + 1, 16, 128, 128);
	assert_px(&a, 4 + 4 + 4 + 1, 4 + 4 + 1, 235, 128, 128);
	drop(&a);
	drop(&b);

	/* more than 6 digits widen the box */
	vc_pattern_counter_rect(W, H, 1234567, &cx, &cy, &cw, &ch);
	assert_int_equal(cw, 43 * 4);
}

/* Reads the counter's digit @d back as 7 rows of 5 bits. */
static void read_glyph(const struct frame *f, uint32_t k, unsigned int d, uint8_t rows[7])
{
	for (unsigned int r = 0; r < 7; r++) {
		rows[r] = 0;
		for (unsigned int c = 0; c < 5; c++) {
			uint32_t x = k + (1 + 6 * d + c) * k + k / 2;
			uint32_t y = k + (1 + r) * k + k / 2;

			if (px(f, x, y).y == 235)
				rows[r] |= (uint8_t)(0x10 >> c);
		}
	}
}

static void test_counter_digits(void **state)
{
	struct vc_pattern_params p = plain(VC_PATTERN_BARS);
	uint8_t glyphs[10][7], again[7];
	struct frame a, b;

	(void)state;
	p.counter = true;
	/* 1234567890: ten different digits give ten different, non-empty glyphs */
	a = render(&p, V4L2_PIX_FMT_YUYV, W, H, 1234567890);
	for (unsigned int d = 0; d < 10; d++) {
		read_glyph(&a, 4, d, glyphs[d]);
		assert_memory_not_equal(glyphs[d], (uint8_t[7]){ 0 }, 7);
		for (unsigned int e = 0; e < d; e++)
			assert_memory_not_equal(glyphs[d], glyphs[e], 7);
	}
	/* 987654: the same digits at other places look the same (9 is digit 8 of the first) */
	b = render(&p, V4L2_PIX_FMT_NV12, W, H, 987654);
	for (unsigned int d = 0; d < 6; d++) {
		read_glyph(&b, 4, d, again);
		assert_memory_equal(again, glyphs[(18 - d) % 10], 7);
	}
	drop(&a);
	drop(&b);
}

static void test_counter_ignores_controls(void **state)
{
	struct vc_pattern_params p, q;
	uint32_t cx, cy, cw, ch;
	struct frame a, b;

	(void)state;
	vc_pattern_params_init(&p);
	p.moving = false;
	q = p;
	q.brightness = 100;
	q.contrast = 0;
	q.hflip = true;
	q.vflip = true;
	a = render(&p, V4L2_PIX_FMT_YUYV, W, H, 31337);
	b = render(&q, V4L2_PIX_FMT_YUYV, W, H, 31337);
	vc_pattern_counter_rect(W, H, 31337, &cx, &cy, &cw, &ch);
	for (uint32_t y = cy; y < cy + ch; y++)
		assert_memory_equal(a.buf + ((size_t)y * W + cx) * 2, b.buf + ((size_t)y * W + cx) * 2,
				    cw * 2);
	drop(&a);
	drop(&b);
}

static void test_deterministic(void **state)
{
	struct vc_pattern_params p;
	size_t size = vc_pattern_frame_size(V4L2_PIX_FMT_NV12, 320, 240);
	uint8_t *a = malloc(size), *b = malloc(size);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	vc_pattern_params_init(&p);
	p.hue = 33;
	p.saturation = 200;
	memset(a, 0x00, size);
	memset(b, 0xff, size);	/* every byte is written */
	assert_int_equal(vc_pattern_render(&p, V4L2_PIX_FMT_NV12, 320, 240, 999, a, size), size);
	assert_int_equal(vc_pattern_render(&p, V4L2_PIX_FMT_NV12, 320, 240, 999, b, size), size);
	assert_memory_equal(a, b, size);
	free(a);
	free(b);
}

static void test_bad_sizes(void **state)
{
	static const uint32_t bad[][2] = {
		{ 0, 0 }, { 14, 16 }, { 16, 14 }, { 17, 16 }, { 16, 17 }, { 8194, 16 },
		{ 16, 8194 }, { 641, 480 },
	};
	struct vc_pattern_params p;
	uint8_t buf[16 * 16 * 2];

	(void)state;
	vc_pattern_params_init(&p);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(vc_pattern_check_size(bad[i][0], bad[i][1]), -EINVAL);
		assert_int_equal(vc_pattern_frame_size(V4L2_PIX_FMT_YUYV, bad[i][0], bad[i][1]), 0);
		assert_int_equal(vc_pattern_render(&p, V4L2_PIX_FMT_YUYV, bad[i][0], bad[i][1], 0,
						   buf, sizeof(buf)), -EINVAL);
	}
	/* formats it does not render natively */
	assert_int_equal(vc_pattern_render(&p, V4L2_PIX_FMT_RGB24, 16, 16, 0, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(vc_pattern_render(&p, V4L2_PIX_FMT_YUV420, 16, 16, 0, buf, sizeof(buf)),
			 -EINVAL);
	/* a buffer one byte short */
	assert_int_equal(vc_pattern_render(&p, V4L2_PIX_FMT_YUYV, 16, 16, 0, buf, sizeof(buf) - 1),
			 -EINVAL);
	/* bad parameters */
	p.hue = 181;
	assert_int_equal(vc_pattern_render(&p, V4L2_PIX_FMT_YUYV, 16, 16, 0, buf, sizeof(buf)),
			 -EINVAL);
	vc_pattern_params_init(&p);
	assert_int_equal(vc_pattern_render(&p, V4L2_PIX_FMT_NV12, 16, 16, 0, buf, sizeof(buf)),
			 16 * 16 * 3 / 2);
}

static void test_extreme_sizes(void **state)
{
	static const uint32_t sizes[][2] = { { 8192, 16 }, { 16, 8192 }, { 8192, 8192 } };
	struct vc_pattern_params p;

	(void)state;
	vc_pattern_params_init(&p);
	p.hflip = true;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct frame f = render(&p, V4L2_PIX_FMT_NV12, sizes[i][0], sizes[i][1], 7);
		uint32_t x = sizes[i][0] - 3, y = sizes[i][1] - 1;
		struct vc_ycbcr e = vc_pattern_pixel(&p, sizes[i][0], sizes[i][1], 7, x, y);

		assert_px(&f, x, y, e.y, e.cb, e.cr);
		drop(&f);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* The backend */

static int create(const struct vc_kv *keys, size_t nkeys, const uint32_t (*sizes)[2],
		  size_t nsizes, void **priv, struct vc_error *err)
{
	struct vc_backend_conf conf = {
		.camera = "test", .keys = keys, .nkeys = nkeys, .sizes = sizes, .nsizes = nsizes,
	};
	const struct vc_backend_ops *ops = vc_backend_find("pattern");

	assert_non_null(ops);
	memset(err, 0, sizeof(*err));
	return ops->create(&conf, priv, err);
}

static void test_backend_modes(void **state)
{
	const struct vc_backend_ops *ops = vc_backend_find("pattern");
	static const uint32_t sizes[][2] = { { 320, 240 }, { 321, 240 }, { 8, 8 }, { 16, 16 } };
	struct vc_modes modes = { .n = 0 };
	struct vc_error err;
	void *priv;
	size_t yuyv = 0, nv12 = 0;

	(void)state;
	assert_int_equal(ops->abi, VC_BACKEND_ABI);
	assert_int_equal(create(NULL, 0, NULL, 0, &priv, &err), 0);
	assert_int_equal(ops->describe(priv, &modes), 0);
	assert_int_equal(modes.n, 2 * 4 * 2);	/* formats x default sizes x default intervals */
	for (size_t i = 0; i < modes.n; i++) {
		yuyv += modes.v[i].pixelformat == V4L2_PIX_FMT_YUYV;
		nv12 += modes.v[i].pixelformat == V4L2_PIX_FMT_NV12;
		assert_int_equal(modes.v[i].interval_num, 1);
		assert_true(modes.v[i].interval_den == 30 || modes.v[i].interval_den == 15);
	}
	assert_int_equal(yuyv, 8);
	assert_int_equal(nv12, 8);
	assert_int_equal(modes.v[0].width, 640);
	assert_int_equal(modes.v[0].height, 480);
	assert_int_equal(modes.v[0].interval_den, 30);
	ops->release(priv);

	/* odd and too small sizes are skipped */
	modes.n = 0;
	assert_int_equal(create(NULL, 0, sizes, 4, &priv, &err), 0);
	assert_int_equal(ops->describe(priv, &modes), 0);
	assert_int_equal(modes.n, 2 * 2 * 2);
	for (size_t i = 0; i < modes.n; i++)
		assert_true(modes.v[i].width == 320 || modes.v[i].width == 16);
	ops->release(priv);

	/* nothing usable is an error */
	assert_int_equal(create(NULL, 0, sizes + 1, 2, &priv, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no usable size"));
}

static void test_backend_keys(void **state)
{
	struct vc_kv bad_pattern[] = { { "pattern", "plaid", 12 } };
	struct vc_kv bad_counter[] = { { "pattern", "gradient", 3 }, { "counter", "maybe", 4 } };
	struct vc_kv good[] = { { "pattern", "checkerboard", 3 }, { "counter", "no", 4 },
				{ "moving", "off", 5 } };
	const struct vc_backend_ops *ops = vc_backend_find("pattern");
	struct viacam_ctrl ctrls[VC_MAX_CTRLS];
	struct vc_error err;
	void *priv;
	int n;

	(void)state;
	assert_int_equal(create(bad_pattern, 1, NULL, 0, &priv, &err), -EINVAL);
	assert_int_equal(err.line, 12);
	assert_string_equal(err.msg, "unknown pattern 'plaid' (bars, gradient, checkerboard)");
	assert_int_equal(create(bad_counter, 2, NULL, 0, &priv, &err), -EINVAL);
	assert_int_equal(err.line, 4);
	assert_string_equal(err.msg, "bad value 'maybe' for 'counter' (yes or no)");

	assert_int_equal(create(good, 3, NULL, 0, &priv, &err), 0);
	n = ops->controls(priv, ctrls);
	assert_int_equal(n, 7);
	assert_int_equal(ctrls[6].default_value, VC_PATTERN_CHECKERBOARD);
	ops->release(priv);

	/* every listed key, and only those */
	for (size_t i = 0; ops->keys[i]; i++)
		assert_true(!strcmp(ops->keys[i], "pattern") || !strcmp(ops->keys[i], "counter") ||
			    !strcmp(ops->keys[i], "moving"));
}

static void test_backend_controls(void **state)
{
	static const struct {
		uint32_t id, type;
		const char *name;
		int64_t min, max, def;
	} want[] = {
		{ V4L2_CID_BRIGHTNESS, V4L2_CTRL_TYPE_INTEGER, "Brightness", -128, 127, 0 },
		{ V4L2_CID_CONTRAST, V4L2_CTRL_TYPE_INTEGER, "Contrast", 0, 255, 128 },
		{ V4L2_CID_SATURATION, V4L2_CTRL_TYPE_INTEGER, "Saturation", 0, 255, 128 },
		{ V4L2_CID_HUE, V4L2_CTRL_TYPE_INTEGER, "Hue", -180, 180, 0 },
		{ V4L2_CID_HFLIP, V4L2_CTRL_TYPE_BOOLEAN, "Horizontal Flip", 0, 1, 0 },
		{ V4L2_CID_VFLIP, V4L2_CTRL_TYPE_BOOLEAN, "Vertical Flip", 0, 1, 0 },
		{ VC_CID_TEST_PATTERN, V4L2_CTRL_TYPE_MENU, "Test Pattern", 0, 2, 0 },
	};
	const struct vc_backend_ops *ops = vc_backend_find("pattern");
	struct viacam_ctrl ctrls[VC_MAX_CTRLS];
	struct vc_error err;
	void *priv;

	(void)state;
	memset(ctrls, 0x5a, sizeof(ctrls));
	assert_int_equal(create(NULL, 0, NULL, 0, &priv, &err), 0);
	assert_int_equal(ops->controls(priv, ctrls), 7);
	for (size_t i = 0; i < 7; i++) {
		const struct viacam_ctrl *c = &ctrls[i];

		assert_int_equal(c->id, want[i].id);
		assert_int_equal(c->type, want[i].type);
		assert_string_equal(c->name, want[i].name);
		assert_int_equal(c->minimum, want[i].min);
		assert_int_equal(c->maximum, want[i].max);
		assert_int_equal(c->default_value, want[i].def);
		assert_int_equal(c->step, c->type == V4L2_CTRL_TYPE_MENU ? 0 : 1);
		assert_memory_equal(c->reserved, (uint32_t[4]){ 0 }, sizeof(c->reserved));
		/* the bridge's class rule: user or camera class only */
		assert_true(V4L2_CTRL_ID2WHICH(c->id) == V4L2_CTRL_CLASS_USER ||
			    V4L2_CTRL_ID2WHICH(c->id) == V4L2_CTRL_CLASS_CAMERA);
	}
	assert_int_equal(ctrls[6].menu_count, ctrls[6].maximum + 1);
	assert_string_equal(ctrls[6].menu[0], "Colour Bars");
	assert_string_equal(ctrls[6].menu[1], "Gradient");
	assert_string_equal(ctrls[6].menu[2], "Checkerboard");

	/* ranges are enforced, unknown ids refused */
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_BRIGHTNESS, 127), 0);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_BRIGHTNESS, 128), -EINVAL);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_BRIGHTNESS, -129), -EINVAL);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_CONTRAST, 256), -EINVAL);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_SATURATION, -1), -EINVAL);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_HUE, -181), -EINVAL);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_HFLIP, 2), -EINVAL);
	assert_int_equal(ops->set_ctrl(priv, VC_CID_TEST_PATTERN, 3), -EINVAL);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_TEST_PATTERN, 2), 0);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_GAIN, 1), -EINVAL);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_HUE, (int64_t)1 << 40), -EINVAL);
	ops->release(priv);
}

/* start + produce through the ops, with controls set before and while streaming. */
static void test_backend_produce(void **state)
{
	const struct vc_backend_ops *ops = vc_backend_find("pattern");
	struct vc_mode mode = { V4L2_PIX_FMT_YUYV, 320, 240, 1, 30 };
	struct vc_mode bad = { V4L2_PIX_FMT_RGB24, 320, 240, 1, 30 };
	size_t size = 320 * 240 * 2;
	uint8_t *buf = malloc(size), *want = malloc(size);
	struct vc_frame fr = { .data = buf, .size = size, .mode = &mode, .bytesperline = 640 };
	struct vc_pattern_params p;
	struct vc_error err;
	void *priv;

	(void)state;
	assert_non_null(buf);
	assert_non_null(want);
	assert_int_equal(create(NULL, 0, NULL, 0, &priv, &err), 0);
	assert_int_equal(ops->start(priv, &bad, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "RGB3"));
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_SATURATION, 0), 0);	/* while stopped */
	assert_int_equal(ops->start(priv, &mode, &err), 0);

	vc_pattern_params_init(&p);
	p.saturation = 0;
	for (uint64_t seq = 0; seq < 3; seq++) {
		fr.sequence = seq;
		fr.bytesused = 0;
		assert_int_equal(ops->produce(priv, &fr), 0);
		assert_int_equal(fr.bytesused, size);
		assert_int_equal(vc_pattern_render(&p, mode.pixelformat, 320, 240, seq, want, size),
				 size);
		assert_memory_equal(buf, want, size);
	}

	/* the menu switches the pattern while streaming */
	assert_int_equal(ops->set_ctrl(priv, VC_CID_TEST_PATTERN, VC_PATTERN_GRADIENT), 0);
	assert_int_equal(ops->set_ctrl(priv, V4L2_CID_HFLIP, 1), 0);
	p.pattern = VC_PATTERN_GRADIENT;
	p.hflip = true;
	assert_int_equal(ops->produce(priv, &fr), 0);
	vc_pattern_render(&p, mode.pixelformat, 320, 240, fr.sequence, want, size);
	assert_memory_equal(buf, want, size);
	assert_int_equal(buf[(239 * 320 + 319) * 2], 16);	/* flipped ramp: dark on the right */

	/* a short buffer or a different line length is refused */
	fr.size = size - 1;
	assert_int_equal(ops->produce(priv, &fr), -EINVAL);
	fr.size = size;
	fr.bytesperline = 320;
	assert_int_equal(ops->produce(priv, &fr), -EINVAL);
	ops->stop(priv);
	ops->release(priv);
	free(buf);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bars),
		cmocka_unit_test(test_bars_odd_split),
		cmocka_unit_test(test_gradient),
		cmocka_unit_test(test_checkerboard),
		cmocka_unit_test(test_render_matches_pixel),
		cmocka_unit_test(test_brightness),
		cmocka_unit_test(test_contrast),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_hue),
		cmocka_unit_test(test_hflip),
		cmocka_unit_test(test_vflip),
		cmocka_unit_test(test_moving_box),
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_counter_digits),
		cmocka_unit_test(test_counter_ignores_controls),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_bad_sizes),
		cmocka_unit_test(test_extreme_sizes),
		cmocka_unit_test(test_backend_modes),
		cmocka_unit_test(test_backend_keys),
		cmocka_unit_test(test_backend_controls),
		cmocka_unit_test(test_backend_produce),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
