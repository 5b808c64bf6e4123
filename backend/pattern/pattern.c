// SPDX-License-Identifier: GPL-2.0-only
/*
 * pattern.c - the test-pattern renderer: colour bars, gradient, checkerboard, a moving box and
 * a frame counter, in YUYV and NV12. Conventions and formulas: pattern.h.
 *
 * Two independent paths compute the same pixels: vc_pattern_pixel() evaluates one pixel from
 * the definitions, vc_pattern_render() builds whole lines (the pattern's lines are computed
 * once per frame, then copied and overlaid). The unit tests check that they agree everywhere.
 */
#include <errno.h>
#include <string.h>

#include "pattern.h"

#define NBARS 8

/* 75% bars, BT.601 limited range. */
static const struct vc_ycbcr bars[NBARS] = {
	{ 180, 128, 128 },	/* white */
	{ 162, 44, 142 },	/* yellow */
	{ 131, 156, 44 },	/* cyan */
	{ 112, 72, 58 },	/* green */
	{ 84, 184, 198 },	/* magenta */
	{ 65, 100, 212 },	/* red */
	{ 35, 212, 114 },	/* blue */
	{ 16, 128, 128 },	/* black */
};

static const struct vc_ycbcr box_colour = { 146, 53, 193 };	/* orange: RGB 1, 0.5, 0 */
static const struct vc_ycbcr white = { 235, 128, 128 };
static const struct vc_ycbcr black = { 16, 128, 128 };

static const char *const names[_VC_PATTERN_MAX] = {
	[VC_PATTERN_BARS] = "bars",
	[VC_PATTERN_GRADIENT] = "gradient",
	[VC_PATTERN_CHECKERBOARD] = "checkerboard",
};

static const char *const labels[_VC_PATTERN_MAX] = {
	[VC_PATTERN_BARS] = "Colour Bars",
	[VC_PATTERN_GRADIENT] = "Gradient",
	[VC_PATTERN_CHECKERBOARD] = "Checkerboard",
};

/* sin(0..90 degrees) * 16384, rounded. */
static const int16_t sin_q14[91] = {
	0, 286, 572, 857, 1143, 1428, 1713, 1997, 2280, 2563,
	2845, 3126, 3406, 3686, 3964, 4240, 4516, 4790, 5063, 5334,
	5604, 5872, 6138, 6402, 6664, 6924, 7182, 7438, 7692, 7943,
	8192, 8438, 8682, 8923, 9162, 9397, 9630, 9860, 10087, 10311,
	10531, 10749, 10963, 11174, 11381, 11585, 11786, 11982, 12176, 12365,
	12551, 12733, 12911, 13085, 13255, 13421, 13583, 13741, 13894, 14044,
	14189, 14330, 14466, 14598, 14726, 14849, 14968, 15082, 15191, 15296,
	15396, 15491, 15582, 15668, 15749, 15826, 15897, 15964, 16026, 16083,
	16135, 16182, 16225, 16262, 16294, 16322, 16344, 16362, 16374, 16382,
	16384,
};

/*
 * The digits 0-9 in a 5x7 font: 7 rows, bit 4 is the leftmost column.
 */
static const uint8_t font[10][7] = {
	{ 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e },	/* 0 */
	{ 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e },	/* 1 */
	{ 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f },	/* 2 */
	{ 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e },	/* 3 */
	{ 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02 },	/* 4 */
	{ 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e },	/* 5 */
	{ 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e },	/* 6 */
	{ 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 },	/* 7 */
	{ 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e },	/* 8 */
	{ 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c },	/* 9 */
};

#define COUNTER_MIN_DIGITS 6
#define COUNTER_MAX_DIGITS 20	/* UINT64_MAX */

/* ------------------------------------------------------------------------------------------
 * Names, checks, geometry
 */

void vc_pattern_params_init(struct vc_pattern_params *p)
{
	*p = (struct vc_pattern_params){
		.pattern = VC_PATTERN_BARS,
		.brightness = 0,
		.contrast = 128,
		.saturation = 128,
		.hue = 0,
		.counter = true,
		.moving = true,
	};
}

int vc_pattern_params_check(const struct vc_pattern_params *p)
{
	if ((unsigned int)p->pattern >= _VC_PATTERN_MAX ||
	    p->brightness < VC_PATTERN_BRIGHTNESS_MIN || p->brightness > VC_PATTERN_BRIGHTNESS_MAX ||
	    p->contrast < 0 || p->contrast > VC_PATTERN_CONTRAST_MAX ||
	    p->saturation < 0 || p->saturation > VC_PATTERN_SATURATION_MAX ||
	    p->hue < VC_PATTERN_HUE_MIN || p->hue > VC_PATTERN_HUE_MAX)
		return -EINVAL;
	return 0;
}

const char *vc_pattern_name(enum vc_pattern_kind kind)
{
	return (unsigned int)kind < _VC_PATTERN_MAX ? names[kind] : NULL;
}

const char *vc_pattern_label(enum vc_pattern_kind kind)
{
	return (unsigned int)kind < _VC_PATTERN_MAX ? labels[kind] : NULL;
}

int vc_pattern_from_name(const char *name)
{
	for (int i = 0; i < _VC_PATTERN_MAX; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -EINVAL;
}

int vc_pattern_check_size(uint32_t width, uint32_t height)
{
	if (width < VC_PATTERN_MIN_SIZE || width > VC_PATTERN_MAX_SIZE || width % 2 ||
	    height < VC_PATTERN_MIN_SIZE || height > VC_PATTERN_MAX_SIZE || height % 2)
		return -EINVAL;
	return 0;
}

size_t vc_pattern_frame_size(uint32_t pixelformat, uint32_t width, uint32_t height)
{
	if (vc_pattern_check_size(width, height))
		return 0;
	switch (pixelformat) {
	case V4L2_PIX_FMT_YUYV:
		return (size_t)width * height * 2;
	case V4L2_PIX_FMT_NV12:
		return (size_t)width * height * 3 / 2;
	default:
		return 0;
	}
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

struct vc_ycbcr vc_pattern_bar(unsigned int i)
{
	return bars[i < NBARS ? i : NBARS - 1];
}

uint32_t vc_pattern_bar_x(uint32_t width, unsigned int i)
{
	return (uint32_t)((uint64_t)min_u32(i, NBARS) * width / NBARS) & ~1u;
}

uint32_t vc_pattern_square(uint32_t width, uint32_t height)
{
	return max_u32(2, (min_u32(width, height) / 8) & ~1u);
}

/* Pixels per frame of the box, and the counter's scale: both even. */
static uint32_t step_of(uint32_t width, uint32_t height)
{
	return 2 * max_u32(1, min_u32(width, height) / 240);
}

/* A triangle wave over 0..@range: @sequence steps of @step, bouncing at both ends. */
static uint32_t bounce(uint64_t sequence, uint32_t step, uint32_t range)
{
	uint64_t period = 2 * (uint64_t)range;
	uint64_t t = (sequence % period) * step % period;

	return (uint32_t)(t <= range ? t : period - t);
}

void vc_pattern_box(uint32_t width, uint32_t height, uint64_t sequence,
		    uint32_t *ret_x, uint32_t *ret_y, uint32_t *ret_size)
{
	uint32_t b = max_u32(4, (min_u32(width, height) / 10) & ~1u);
	uint32_t d = step_of(width, height);

	*ret_size = b;
	*ret_x = bounce(sequence, d, width - b);
	*ret_y = bounce(sequence, d, height - b);
}

static unsigned int counter_digits(uint64_t sequence, uint8_t digits[COUNTER_MAX_DIGITS])
{
	unsigned int n = 0;
	uint8_t rev[COUNTER_MAX_DIGITS];

	do {
		rev[n++] = (uint8_t)(sequence % 10);
		sequence /= 10;
	} while (sequence);
	while (n < COUNTER_MIN_DIGITS)
		rev[n++] = 0;
	for (unsigned int i = 0; i < n; i++)
		digits[i] = rev[n - 1 - i];
	return n;
}

/* The counter's box before clipping. */
static void counter_box(uint32_t width, uint32_t height, uint64_t sequence, uint32_t *ret_k,
			uint32_t *ret_w, uint32_t *ret_h, uint8_t digits[COUNTER_MAX_DIGITS],
			unsigned int *ret_n)
{
	uint32_t k = step_of(width, height);
	unsigned int n = counter_digits(sequence, digits);

	*ret_k = k;
	*ret_n = n;
	*ret_w = (n * 6 + 1) * k;
	*ret_h = 9 * k;
}

void vc_pattern_counter_rect(uint32_t width, uint32_t height, uint64_t sequence,
			     uint32_t *ret_x, uint32_t *ret_y, uint32_t *ret_w, uint32_t *ret_h)
{
	uint8_t digits[COUNTER_MAX_DIGITS];
	uint32_t k, w, h;
	unsigned int n;

	counter_box(width, height, sequence, &k, &w, &h, digits, &n);
	*ret_x = k;
	*ret_y = k;
	*ret_w = min_u32(w, width - k);
	*ret_h = min_u32(h, height - k);
}

/* Is font unit (@fx, @fy) of the counter box lit (a digit's pixel)? */
static bool counter_lit(const uint8_t *digits, unsigned int n, uint32_t fx, uint32_t fy)
{
	uint32_t col, d;

	if (fx < 1 || fy < 1 || fy > 7)
		return false;
	d = (fx - 1) / 6;
	col = (fx - 1) % 6;
	if (d >= n || col >= 5)
		return false;
	return font[digits[d]][fy - 1] & (0x10 >> col);
}

/* ------------------------------------------------------------------------------------------
 * Colour controls
 */

static int clamp_int(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* @n / @d rounded half away from zero (@d > 0). */
static int64_t rdiv(int64_t n, int64_t d)
{
	return n >= 0 ? (n + d / 2) / d : -((-n + d / 2) / d);
}

static void hue_q14(int degrees, int *ret_cos, int *ret_sin)
{
	int a = ((degrees % 360) + 360) % 360;	/* 0..359 */
	int s, c;

	if (a <= 90) {
		s = sin_q14[a];
		c = sin_q14[90 - a];
	} else if (a <= 180) {
		s = sin_q14[180 - a];
		c = -sin_q14[a - 90];
	} else if (a <= 270) {
		s = -sin_q14[a - 180];
		c = -sin_q14[270 - a];
	} else {
		s = -sin_q14[360 - a];
		c = sin_q14[a - 270];
	}
	*ret_cos = c;
	*ret_sin = s;
}

static uint8_t apply_luma(const struct vc_pattern_params *p, uint8_t y)
{
	int v = 128 + (int)rdiv((int64_t)(y - 128) * p->contrast, 128) + p->brightness;

	return (uint8_t)clamp_int(v, 16, 235);
}

static void apply_chroma(const struct vc_pattern_params *p, int hcos, int hsin,
			 uint8_t *cb, uint8_t *cr)
{
	int64_t u = *cb - 128, v = *cr - 128;
	int64_t d = 16384 * 128;
	int64_t u2 = rdiv((u * hcos - v * hsin) * p->saturation, d);
	int64_t v2 = rdiv((u * hsin + v * hcos) * p->saturation, d);

	*cb = (uint8_t)clamp_int(128 + (int)u2, 16, 240);
	*cr = (uint8_t)clamp_int(128 + (int)v2, 16, 240);
}

struct vc_ycbcr vc_pattern_apply(const struct vc_pattern_params *p, struct vc_ycbcr c)
{
	int hcos, hsin;

	hue_q14(p->hue, &hcos, &hsin);
	c.y = apply_luma(p, c.y);
	apply_chroma(p, hcos, hsin, &c.cb, &c.cr);
	return c;
}

/* ------------------------------------------------------------------------------------------
 * One pixel from the definitions
 */

static uint8_t gradient_y(uint32_t width, uint32_t x)
{
	return (uint8_t)(16 + (219 * x + (width - 1) / 2) / (width - 1));
}

static struct vc_ycbcr pattern_at(enum vc_pattern_kind kind, uint32_t width, uint32_t height,
				  uint32_t x, uint32_t y)
{
	uint32_t s;

	switch (kind) {
	case VC_PATTERN_GRADIENT:
		return (struct vc_ycbcr){ gradient_y(width, x), 128, 128 };
	case VC_PATTERN_CHECKERBOARD:
		s = vc_pattern_square(width, height);
		return ((x / s + y / s) % 2) ? black : white;
	case VC_PATTERN_BARS:
	default:
		for (unsigned int i = 0; i < NBARS; i++)
			if (x < vc_pattern_bar_x(width, i + 1))
				return bars[i];
		return bars[NBARS - 1];
	}
}

struct vc_ycbcr vc_pattern_pixel(const struct vc_pattern_params *p, uint32_t width,
				 uint32_t height, uint64_t sequence, uint32_t x, uint32_t y)
{
	uint32_t sx = p->hflip ? width - 1 - x : x;
	uint32_t sy = p->vflip ? height - 1 - y : y;
	struct vc_ycbcr c;

	if (p->counter) {
		uint8_t digits[COUNTER_MAX_DIGITS];
		uint32_t k, cw, ch;
		unsigned int n;

		counter_box(width, height, sequence, &k, &cw, &ch, digits, &n);
		if (x >= k && x - k < cw && y >= k && y - k < ch)
			return counter_lit(digits, n, (x - k) / k, (y - k) / k) ? white : black;
	}

	c = pattern_at(p->pattern, width, height, sx, sy);
	if (p->moving) {
		uint32_t bx, by, b;

		vc_pattern_box(width, height, sequence, &bx, &by, &b);
		if (sx >= bx && sx < bx + b && sy >= by && sy < by + b)
			c = box_colour;
	}
	return vc_pattern_apply(p, c);
}

/* ------------------------------------------------------------------------------------------
 * Whole frames
 */

/* One output line: Y per pixel, and Cb, Cr interleaved per pixel pair (NV12's UV layout). */
struct line {
	uint8_t y[VC_PATTERN_MAX_SIZE];
	uint8_t c[VC_PATTERN_MAX_SIZE];
};

/* Fills output x in [@x0, @x1) of @l (even bounds) with @c. */
static void line_fill(struct line *l, uint32_t x0, uint32_t x1, struct vc_ycbcr c)
{
	memset(l->y + x0, c.y, x1 - x0);
	for (uint32_t x = x0; x < x1; x += 2) {
		l->c[x] = c.cb;
		l->c[x + 1] = c.cr;
	}
}

/* Scene x range [@sx0, @sx1) to output x range, for even bounds. */
static void map_span(const struct vc_pattern_params *p, uint32_t width, uint32_t sx0,
		     uint32_t sx1, uint32_t *ret_x0, uint32_t *ret_x1)
{
	*ret_x0 = p->hflip ? width - sx1 : sx0;
	*ret_x1 = p->hflip ? width - sx0 : sx1;
}

/* Pattern line variant @v (checkerboard: 0 = starting white, 1 = black), with the controls. */
static void pattern_line(const struct vc_pattern_params *p, uint32_t width, uint32_t height,
			 unsigned int v, struct line *l)
{
	uint32_t x0, x1, s;

	switch (p->pattern) {
	case VC_PATTERN_GRADIENT: {
		struct vc_ycbcr grey = vc_pattern_apply(p, (struct vc_ycbcr){ 16, 128, 128 });

		for (uint32_t sx = 0; sx < width; sx++) {
			uint32_t x = p->hflip ? width - 1 - sx : sx;

			l->y[x] = apply_luma(p, gradient_y(width, sx));
		}
		for (uint32_t x = 0; x < width; x += 2) {
			l->c[x] = grey.cb;
			l->c[x + 1] = grey.cr;
		}
		break;
	}
	case VC_PATTERN_CHECKERBOARD: {
		struct vc_ycbcr c[2] = { vc_pattern_apply(p, white), vc_pattern_apply(p, black) };

		s = vc_pattern_square(width, height);
		for (uint32_t sx = 0; sx < width; sx += s) {
			map_span(p, width, sx, min_u32(sx + s, width), &x0, &x1);
			line_fill(l, x0, x1, c[(sx / s + v) % 2]);
		}
		break;
	}
	case VC_PATTERN_BARS:
	default:
		for (unsigned int i = 0; i < NBARS; i++) {
			map_span(p, width, vc_pattern_bar_x(width, i), vc_pattern_bar_x(width, i + 1),
				 &x0, &x1);
			line_fill(l, x0, x1, vc_pattern_apply(p, bars[i]));
		}
		break;
	}
}

/* Draws output line @y of the counter into @l. */
static void counter_line(uint32_t width, uint32_t height, uint64_t sequence, uint32_t y,
			 struct line *l)
{
	uint8_t digits[COUNTER_MAX_DIGITS];
	uint32_t k, cw, ch, fy, xend;
	unsigned int n;

	counter_box(width, height, sequence, &k, &cw, &ch, digits, &n);
	if (y < k || y - k >= ch)
		return;
	fy = (y - k) / k;
	xend = k + min_u32(cw, width - k);
	/* Font units are k (even) pixels wide and start at even x: fill by units. */
	for (uint32_t x = k; x < xend; x += k) {
		struct vc_ycbcr c = counter_lit(digits, n, (x - k) / k, fy) ? white : black;

		line_fill(l, x, min_u32(x + k, xend), c);
	}
}

long vc_pattern_render(const struct vc_pattern_params *p, uint32_t pixelformat,
		       uint32_t width, uint32_t height, uint64_t sequence, uint8_t *buf,
		       size_t size)
{
	_Static_assert(VC_PATTERN_MAX_SIZE % 2 == 0, "lines hold whole pixel pairs");
	struct line rows[2], out;	/* ~48 KiB of stack */
	size_t need = vc_pattern_frame_size(pixelformat, width, height);
	uint32_t bx = 0, by = 0, b = 0, obx0 = 0, obx1 = 0, oby0 = 0, oby1 = 0, s;
	struct vc_ycbcr boxc = { 0, 0, 0 };
	unsigned int nvariants;

	if (!need || size < need || !buf || vc_pattern_params_check(p))
		return -EINVAL;

	nvariants = p->pattern == VC_PATTERN_CHECKERBOARD ? 2 : 1;
	for (unsigned int v = 0; v < nvariants; v++)
		pattern_line(p, width, height, v, &rows[v]);
	s = vc_pattern_square(width, height);

	if (p->moving) {
		vc_pattern_box(width, height, sequence, &bx, &by, &b);
		map_span(p, width, bx, bx + b, &obx0, &obx1);
		oby0 = p->vflip ? height - by - b : by;
		oby1 = oby0 + b;
		boxc = vc_pattern_apply(p, box_colour);
	}

	for (uint32_t y = 0; y < height; y++) {
		uint32_t sy = p->vflip ? height - 1 - y : y;
		const struct line *base = &rows[nvariants == 2 ? (sy / s) % 2 : 0];
		const struct line *l = base;

		if ((p->moving && y >= oby0 && y < oby1) ||
		    (p->counter && y < (uint32_t)(11 * step_of(width, height)))) {
			memcpy(out.y, base->y, width);
			memcpy(out.c, base->c, width);
			if (p->moving && y >= oby0 && y < oby1)
				line_fill(&out, obx0, obx1, boxc);
			if (p->counter)
				counter_line(width, height, sequence, y, &out);
			l = &out;
		}

		if (pixelformat == V4L2_PIX_FMT_YUYV) {
			uint8_t *d = buf + (size_t)y * width * 2;

			for (uint32_t x = 0; x < width; x += 2) {
				d[2 * x] = l->y[x];
				d[2 * x + 1] = l->c[x];
				d[2 * x + 2] = l->y[x + 1];
				d[2 * x + 3] = l->c[x + 1];
			}
		} else {
			memcpy(buf + (size_t)y * width, l->y, width);
			/* Chroma is uniform on 2x2 blocks: the even line carries it. */
			if (y % 2 == 0)
				memcpy(buf + (size_t)width * height + (size_t)y / 2 * width, l->c,
				       width);
		}
	}
	return (long)need;
}
