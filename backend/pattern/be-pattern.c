// SPDX-License-Identifier: GPL-2.0-only
/*
 * be-pattern.c - the pattern backend: synthetic frames from pattern.c, at any size and rate.
 *
 * Config keys:
 *   pattern = bars | gradient | checkerboard   the initial pattern (default bars), also the
 *                                              "Test Pattern" control's default
 *   counter = yes | no                         draw the frame counter (default yes)
 *   moving  = yes | no                         draw the moving box (default yes)
 *
 * Modes: YUYV and NV12 (the renderer's native formats; the session adds converted ones) for
 * every size of the config (default 640x480, 320x240, 160x120, 1280x720) times every interval
 * (default 1/30, 1/15). Sizes the renderer cannot do (odd, or outside 16..8192) are skipped;
 * create fails only when none is left. The config's format list is not looked at.
 *
 * Frame N of a stream (frame->sequence, 0 at each start) shows the box at step N and the
 * counter N, so frozen or repeated video is obvious and every frame is reproducible.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/videodev2.h>

#include "backend.h"
#include "pattern.h"

static const uint32_t default_sizes[][2] = {
	{ 640, 480 }, { 320, 240 }, { 160, 120 }, { 1280, 720 },
};
static const uint32_t default_intervals[][2] = { { 1, 30 }, { 1, 15 } };
static const uint32_t native_formats[] = { V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12 };

#define NFORMATS (sizeof(native_formats) / sizeof(native_formats[0]))

struct pattern {
	struct vc_pattern_params params;	/* current control values */
	enum vc_pattern_kind default_pattern;	/* from the config */
	uint32_t sizes[VC_MAX_MODES][2];
	size_t nsizes;
	uint32_t intervals[VC_MAX_MODES][2];
	size_t nintervals;
	struct vc_mode mode;	/* valid while started */
	bool started;
};

static const char *const pattern_keys[] = { "pattern", "counter", "moving", NULL };

/* A yes/no key into *@ret (left alone when the key is absent). */
static int pattern_create(const struct vc_backend_conf *conf, void **ret_priv,
			  struct vc_error *err)
{
	const uint32_t (*sizes)[2] = conf->nsizes ? conf->sizes : default_sizes;
	size_t nsizes = conf->nsizes ? conf->nsizes : sizeof(default_sizes) / sizeof(default_sizes[0]);
	const uint32_t (*intervals)[2] = conf->nintervals ? conf->intervals : default_intervals;
	size_t nintervals = conf->nintervals ? conf->nintervals :
			    sizeof(default_intervals) / sizeof(default_intervals[0]);
	const struct vc_kv *kv;
	struct pattern *pat;
	int r;

	pat = calloc(1, sizeof(*pat));
	if (!pat)
		return vc_err(err, 0, -ENOMEM, "out of memory");
	vc_pattern_params_init(&pat->params);

	kv = vc_conf_key(conf, "pattern");
	if (kv) {
		r = vc_pattern_from_name(kv->value);
		if (r < 0) {
			r = vc_err(err, kv->line, -EINVAL, "unknown pattern '%s' (bars, gradient, checkerboard)",
				   kv->value);
			goto fail;
		}
		pat->params.pattern = (enum vc_pattern_kind)r;
	}
	pat->default_pattern = pat->params.pattern;
	r = vc_conf_bool(conf, "counter", &pat->params.counter, err);
	if (r < 0)
		goto fail;
	r = vc_conf_bool(conf, "moving", &pat->params.moving, err);
	if (r < 0)
		goto fail;

	/* Odd or out-of-range sizes are skipped (see the top of this file). */
	for (size_t i = 0; i < nsizes && pat->nsizes < VC_MAX_MODES; i++) {
		if (vc_pattern_check_size(sizes[i][0], sizes[i][1]))
			continue;
		pat->sizes[pat->nsizes][0] = sizes[i][0];
		pat->sizes[pat->nsizes][1] = sizes[i][1];
		pat->nsizes++;
	}
	for (size_t i = 0; i < nintervals && pat->nintervals < VC_MAX_MODES; i++) {
		if (!intervals[i][0] || !intervals[i][1])
			continue;
		pat->intervals[pat->nintervals][0] = intervals[i][0];
		pat->intervals[pat->nintervals][1] = intervals[i][1];
		pat->nintervals++;
	}
	if (!pat->nsizes) {
		r = vc_err(err, conf->sizes_line, -EINVAL,
			   "no usable size: the pattern needs even sizes from %ux%u to %ux%u",
			   VC_PATTERN_MIN_SIZE, VC_PATTERN_MIN_SIZE, VC_PATTERN_MAX_SIZE,
			   VC_PATTERN_MAX_SIZE);
		goto fail;
	}
	if (!pat->nintervals) {
		r = vc_err(err, conf->rates_line, -EINVAL,
			   "no usable frame interval (both parts must be > 0)");
		goto fail;
	}
	if (pat->nsizes * pat->nintervals * NFORMATS > VC_MAX_MODES) {
		/* sizes x rates: at the sizes key (the rates key without one) */
		r = vc_err(err, conf->sizes_line ? conf->sizes_line : conf->rates_line, -EINVAL,
			   "too many modes: %zu sizes x %zu intervals x %zu formats is more than %d",
			   pat->nsizes, pat->nintervals, NFORMATS, VC_MAX_MODES);
		goto fail;
	}

	*ret_priv = pat;
	return 0;
fail:
	free(pat);
	return r;
}

static int pattern_describe(void *priv, struct vc_modes *modes)
{
	struct pattern *pat = priv;
	int r;

	for (size_t f = 0; f < NFORMATS; f++)
		for (size_t s = 0; s < pat->nsizes; s++)
			for (size_t i = 0; i < pat->nintervals; i++) {
				struct vc_mode m = {
					.pixelformat = native_formats[f],
					.width = pat->sizes[s][0],
					.height = pat->sizes[s][1],
					.interval_num = pat->intervals[i][0],
					.interval_den = pat->intervals[i][1],
				};

				r = vc_modes_add(modes, &m);
				if (r < 0)
					return r;
			}
	return 0;
}

static void int_ctrl(struct viacam_ctrl *c, uint32_t id, const char *name, int64_t min,
		     int64_t max, int64_t def)
{
	*c = (struct viacam_ctrl){
		.id = id,
		.type = V4L2_CTRL_TYPE_INTEGER,
		.minimum = min,
		.maximum = max,
		.step = 1,
		.default_value = def,
		.flags = V4L2_CTRL_FLAG_SLIDER,
	};
	strncpy(c->name, name, sizeof(c->name) - 1);
}

static void bool_ctrl(struct viacam_ctrl *c, uint32_t id, const char *name)
{
	*c = (struct viacam_ctrl){
		.id = id,
		.type = V4L2_CTRL_TYPE_BOOLEAN,
		.minimum = 0,
		.maximum = 1,
		.step = 1,
		.default_value = 0,
	};
	strncpy(c->name, name, sizeof(c->name) - 1);
}

static int pattern_controls(void *priv, struct viacam_ctrl *ctrls)
{
	struct pattern *pat = priv;
	struct viacam_ctrl *menu = &ctrls[6];

	int_ctrl(&ctrls[0], V4L2_CID_BRIGHTNESS, "Brightness", VC_PATTERN_BRIGHTNESS_MIN,
		 VC_PATTERN_BRIGHTNESS_MAX, 0);
	int_ctrl(&ctrls[1], V4L2_CID_CONTRAST, "Contrast", 0, VC_PATTERN_CONTRAST_MAX, 128);
	int_ctrl(&ctrls[2], V4L2_CID_SATURATION, "Saturation", 0, VC_PATTERN_SATURATION_MAX, 128);
	int_ctrl(&ctrls[3], V4L2_CID_HUE, "Hue", VC_PATTERN_HUE_MIN, VC_PATTERN_HUE_MAX, 0);
	bool_ctrl(&ctrls[4], V4L2_CID_HFLIP, "Horizontal Flip");
	bool_ctrl(&ctrls[5], V4L2_CID_VFLIP, "Vertical Flip");

	*menu = (struct viacam_ctrl){
		.id = VC_CID_TEST_PATTERN,
		.type = V4L2_CTRL_TYPE_MENU,
		.minimum = 0,
		.maximum = _VC_PATTERN_MAX - 1,
		.step = 0,
		.default_value = pat->default_pattern,
		.menu_count = _VC_PATTERN_MAX,
	};
	strncpy(menu->name, "Test Pattern", sizeof(menu->name) - 1);
	for (int i = 0; i < _VC_PATTERN_MAX; i++)
		strncpy(menu->menu[i], vc_pattern_label((enum vc_pattern_kind)i),
			sizeof(menu->menu[i]) - 1);
	return 7;
}

static int pattern_set_ctrl(void *priv, uint32_t id, int64_t value)
{
	struct pattern *pat = priv;
	struct vc_pattern_params *p = &pat->params;

#define IN_RANGE(lo, hi) do { if (value < (lo) || value > (hi)) return -EINVAL; } while (0)
	switch (id) {
	case V4L2_CID_BRIGHTNESS:
		IN_RANGE(VC_PATTERN_BRIGHTNESS_MIN, VC_PATTERN_BRIGHTNESS_MAX);
		p->brightness = (int)value;
		return 0;
	case V4L2_CID_CONTRAST:
		IN_RANGE(0, VC_PATTERN_CONTRAST_MAX);
		p->contrast = (int)value;
		return 0;
	case V4L2_CID_SATURATION:
		IN_RANGE(0, VC_PATTERN_SATURATION_MAX);
		p->saturation = (int)value;
		return 0;
	case V4L2_CID_HUE:
		IN_RANGE(VC_PATTERN_HUE_MIN, VC_PATTERN_HUE_MAX);
		p->hue = (int)value;
		return 0;
	case V4L2_CID_HFLIP:
		IN_RANGE(0, 1);
		p->hflip = value;
		return 0;
	case V4L2_CID_VFLIP:
		IN_RANGE(0, 1);
		p->vflip = value;
		return 0;
	case VC_CID_TEST_PATTERN:
	case V4L2_CID_TEST_PATTERN:
		IN_RANGE(0, _VC_PATTERN_MAX - 1);
		p->pattern = (enum vc_pattern_kind)value;
		return 0;
	default:
		return -EINVAL;
	}
#undef IN_RANGE
}

static int pattern_start(void *priv, const struct vc_mode *mode, struct vc_error *err)
{
	struct pattern *pat = priv;
	char fcc[5];

	if (!vc_pattern_frame_size(mode->pixelformat, mode->width, mode->height))
		return vc_err(err, 0, -EINVAL, "pattern cannot produce %s %ux%u (YUYV or NV12, even "
			      "sizes from %ux%u to %ux%u)", vc_fourcc_str(mode->pixelformat, fcc),
			      mode->width, mode->height, VC_PATTERN_MIN_SIZE, VC_PATTERN_MIN_SIZE,
			      VC_PATTERN_MAX_SIZE, VC_PATTERN_MAX_SIZE);
	pat->mode = *mode;
	pat->started = true;
	return 0;
}

static int pattern_produce(void *priv, struct vc_frame *frame)
{
	struct pattern *pat = priv;
	const struct vc_mode *m = &pat->mode;
	long n;

	if (!pat->started)
		return -EINVAL;
	if (frame->mode && (frame->mode->pixelformat != m->pixelformat ||
			    frame->mode->width != m->width || frame->mode->height != m->height))
		return -EINVAL;
	if (frame->bytesperline != vc_bytesperline(m->pixelformat, m->width))
		return -EINVAL;
	n = vc_pattern_render(&pat->params, m->pixelformat, m->width, m->height, frame->sequence,
			      frame->data, frame->size);
	if (n < 0)
		return (int)n;
	frame->bytesused = (size_t)n;
	return 0;
}

static void pattern_stop(void *priv)
{
	struct pattern *pat = priv;

	pat->started = false;
}

static void pattern_release(void *priv)
{
	free(priv);
}

const struct vc_backend_ops vc_backend_pattern = {
	.abi = VC_BACKEND_ABI,
	.name = "pattern",
	.summary = "test patterns (bars, gradient, checkerboard) with a moving box and a frame counter",
	.keys = pattern_keys,
	.create = pattern_create,
	.describe = pattern_describe,
	.controls = pattern_controls,
	.start = pattern_start,
	.produce = pattern_produce,
	.stop = pattern_stop,
	.set_ctrl = pattern_set_ctrl,
	.release = pattern_release,
};
