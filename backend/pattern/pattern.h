/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pattern.h - the test-pattern renderer of the pattern backend (pure functions, no I/O).
 *
 * READ THIS FIRST. Everything here is deterministic: the same parameters, size, format and
 * sequence number give the same bytes on every machine (integer arithmetic only, no libm).
 * Guest tests may compile pattern.c in and ask vc_pattern_pixel() what a pixel must be.
 *
 * Colour: Y'CbCr, BT.601, limited range (Y 16..235, Cb/Cr 16..240, neutral chroma 128).
 *
 * Geometry (w x h: even, 16..8192 each). A frame is a "scene" plus an on-screen counter:
 *  - The scene is the pattern with the moving box on top. Flips and the colour controls
 *    apply to the scene only.
 *      bars          8 vertical bars at 75% amplitude, left to right: white, yellow, cyan,
 *                    green, magenta, red, blue, black (values: vc_pattern_bar()); bar i covers
 *                    x in [vc_pattern_bar_x(w, i), vc_pattern_bar_x(w, i + 1)), where
 *                    vc_pattern_bar_x(w, i) = (i * w / 8) rounded down to even.
 *      gradient      grey horizontal luma ramp, Y = 16 + (219 * x + (w - 1) / 2) / (w - 1)
 *                    (16 at the left edge, 235 at the right edge), Cb = Cr = 128.
 *      checkerboard  squares of side s = max(2, even(min(w, h) / 8)); the square at
 *                    (x / s, y / s) is white (Y 235) when the sum is even, else black (Y 16).
 *    The moving box (vc_pattern_box()) is a solid orange square (Y 146, Cb 53, Cr 193) of
 *    side b = max(4, even(min(w, h) / 10)). It bounces diagonally: with d = 2 * max(1,
 *    min(w, h) / 240) pixels per frame, its top-left corner is (tri(seq * d, w - b),
 *    tri(seq * d, h - b)), where tri(t, r) = t mod 2r, mirrored to 2r - (t mod 2r) when
 *    above r. Its position is given in scene (unflipped) coordinates.
 *  - The counter is the sequence number in decimal (at least 6 digits, zero-padded) drawn
 *    with a 5x7 pixel font scaled by k = 2 * max(1, min(w, h) / 240), white digits (Y 235)
 *    on a black box (Y 16), chroma 128. The box starts at (k, k) of the *output* frame, is
 *    (digits * 6 + 1) * k wide and 9 * k high, clipped at the frame's edges; digit i's 5x7
 *    glyph starts at (k + (1 + 6 * i) * k, 2 * k), each font dot being k x k pixels. It is an
 *    on-screen display: neither flipped nor touched by the colour controls, so it stays
 *    readable whatever the controls are (vc_pattern_counter_rect()).
 * All edges lie on even coordinates, so every 2x2 block has one chroma value and YUYV and
 * NV12 carry every pixel's Cb/Cr exactly: rendered frames match vc_pattern_pixel() exactly.
 *
 * Controls, applied to each scene pixel in this order (rdiv rounds half away from zero):
 *   Y'  = clamp(128 + rdiv((Y - 128) * contrast, 128) + brightness, 16, 235)
 *   (u, v) = (Cb - 128, Cr - 128) rotated by hue degrees (cos/sin in Q14 from an integer table):
 *   Cb' = clamp(128 + rdiv((u * cos - v * sin) * saturation, 16384 * 128), 16, 240)
 *   Cr' = clamp(128 + rdiv((u * sin + v * cos) * saturation, 16384 * 128), 16, 240)
 * The defaults (0, 128, 128, 0) leave every pixel unchanged; saturation 0 gives Cb = Cr = 128;
 * hue 180 gives Cb' = 256 - Cb, Cr' = 256 - Cr. Then hflip / vflip mirror the scene.
 */
#ifndef VIACAM_PATTERN_H
#define VIACAM_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/videodev2.h>

enum vc_pattern_kind {
	VC_PATTERN_BARS,
	VC_PATTERN_GRADIENT,
	VC_PATTERN_CHECKERBOARD,
	_VC_PATTERN_MAX,
};

/*
 * The "Test Pattern" menu control. V4L2_CID_TEST_PATTERN belongs to the image-processing
 * class, which the bridge refuses (viacam_check_ctrl() accepts the user and camera classes
 * only), so the pattern backend declares this private user-class id instead. set_ctrl accepts
 * both ids.
 */
#define VC_CID_TEST_PATTERN	(V4L2_CID_USER_BASE + 0x1f00)

/* Control ranges (all steps are 1). */
#define VC_PATTERN_BRIGHTNESS_MIN	(-128)
#define VC_PATTERN_BRIGHTNESS_MAX	127
#define VC_PATTERN_CONTRAST_MAX		255	/* 128 = x1.0 around Y 128 */
#define VC_PATTERN_SATURATION_MAX	255	/* 128 = x1.0 around Cb/Cr 128 */
#define VC_PATTERN_HUE_MIN		(-180)	/* degrees */
#define VC_PATTERN_HUE_MAX		180

#define VC_PATTERN_MIN_SIZE	16
#define VC_PATTERN_MAX_SIZE	8192

struct vc_pattern_params {
	enum vc_pattern_kind pattern;
	int brightness;		/* added to Y' */
	int contrast;		/* 0..255 */
	int saturation;		/* 0..255 */
	int hue;		/* -180..180 */
	bool hflip;
	bool vflip;
	bool counter;		/* draw the frame counter */
	bool moving;		/* draw the moving box */
};

struct vc_ycbcr {
	uint8_t y;
	uint8_t cb;
	uint8_t cr;
};

/* Defaults: bars, neutral controls, no flips, counter and moving box on. */
void vc_pattern_params_init(struct vc_pattern_params *p);
/* 0, or -EINVAL when a field is out of range. */
int vc_pattern_params_check(const struct vc_pattern_params *p);

/* "bars", "gradient", "checkerboard" (config values), NULL when out of range. */
const char *vc_pattern_name(enum vc_pattern_kind kind);
/* "Colour Bars", "Gradient", "Checkerboard" (menu items), NULL when out of range. */
const char *vc_pattern_label(enum vc_pattern_kind kind);
/* The kind called @name (a config value), or -EINVAL. */
int vc_pattern_from_name(const char *name);

/* 0 when @width x @height can be rendered (even, 16..8192 each), else -EINVAL. */
int vc_pattern_check_size(uint32_t width, uint32_t height);
/* Bytes of one frame (YUYV or NV12, the bridge's layout), 0 for anything unsupported. */
size_t vc_pattern_frame_size(uint32_t pixelformat, uint32_t width, uint32_t height);

/* Geometry, see the top of this file. */
struct vc_ycbcr vc_pattern_bar(unsigned int i);	/* i < 8, unprocessed */
uint32_t vc_pattern_bar_x(uint32_t width, unsigned int i);	/* i <= 8 */
uint32_t vc_pattern_square(uint32_t width, uint32_t height);	/* checkerboard side */
void vc_pattern_box(uint32_t width, uint32_t height, uint64_t sequence,
		    uint32_t *ret_x, uint32_t *ret_y, uint32_t *ret_size);
void vc_pattern_counter_rect(uint32_t width, uint32_t height, uint64_t sequence,
			     uint32_t *ret_x, uint32_t *ret_y, uint32_t *ret_w, uint32_t *ret_h);

/* The controls applied to one scene colour (hue, saturation, contrast, brightness). */
struct vc_ycbcr vc_pattern_apply(const struct vc_pattern_params *p, struct vc_ycbcr c);

/* The exact colour of output pixel (@x, @y) of frame @sequence. Slow; for tests. */
struct vc_ycbcr vc_pattern_pixel(const struct vc_pattern_params *p, uint32_t width,
				 uint32_t height, uint64_t sequence, uint32_t x, uint32_t y);

/*
 * Renders frame @sequence into @buf (@size bytes) as @pixelformat (V4L2_PIX_FMT_YUYV or
 * _NV12, the bridge's layout: YUYV lines of width * 2 bytes; NV12 a Y plane of width bytes
 * per line followed by the half-height interleaved CbCr plane). Returns the bytes written,
 * or -EINVAL for an unsupported format, size or parameter, or a too small @buf.
 */
long vc_pattern_render(const struct vc_pattern_params *p, uint32_t pixelformat,
		       uint32_t width, uint32_t height, uint64_t sequence, uint8_t *buf,
		       size_t size);

#endif /* VIACAM_PATTERN_H */
