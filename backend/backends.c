// SPDX-License-Identifier: GPL-2.0-only
/*
 * backends.c - the backend registry, and small helpers every backend uses.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "backend.h"
#include "text.h"

extern const struct vc_backend_ops vc_backend_pattern;
extern const struct vc_backend_ops vc_backend_file;
extern const struct vc_backend_ops vc_backend_v4l2;
extern const struct vc_backend_ops vc_backend_gst;
extern const struct vc_backend_ops vc_backend_pipewire;
extern const struct vc_backend_ops vc_backend_via;

/*
 * Siblings, in the order `viacamd --list-backends` shows them. The backends that need
 * libraries of their own are there when the build has them (meson's feature options gst,
 * pipewire, v4l2: VIACAM_WITH_*); a config naming one that is not is refused as an unknown
 * backend.
 */
static const struct vc_backend_ops *const registry[] = {
	&vc_backend_pattern,
	&vc_backend_file,
#if VIACAM_WITH_V4L2
	&vc_backend_v4l2,
#endif
#if VIACAM_WITH_GST
	&vc_backend_gst,
#endif
#if VIACAM_WITH_PIPEWIRE
	&vc_backend_pipewire,
#endif
	&vc_backend_via,
};

const struct vc_backend_ops *vc_backend_at(size_t i)
{
	return i < sizeof(registry) / sizeof(registry[0]) ? registry[i] : NULL;
}

const struct vc_backend_ops *vc_backend_find(const char *name)
{
	const struct vc_backend_ops *ops;

	for (size_t i = 0; (ops = vc_backend_at(i)); i++)
		if (strcmp(ops->name, name) == 0)
			return ops->abi == VC_BACKEND_ABI ? ops : NULL;
	return NULL;
}

int vc_modes_add(struct vc_modes *modes, const struct vc_mode *m)
{
	for (size_t i = 0; i < modes->n; i++)
		if (memcmp(&modes->v[i], m, sizeof(*m)) == 0)
			return 0;
	if (modes->n >= VC_MAX_MODES)
		return -ENOSPC;
	modes->v[modes->n++] = *m;
	return 0;
}

int vc_err(struct vc_error *err, int line, int errnum, const char *fmt, ...)
{
	char raw[sizeof(err->msg)];
	va_list ap;

	if (err) {
		err->line = line;
		va_start(ap, fmt);
		vsnprintf(raw, sizeof(raw), fmt, ap);
		va_end(ap);
		/* Messages echo values from the config file: no raw control bytes (text.h). */
		vc_escape(err->msg, sizeof(err->msg), raw, strlen(raw));
	}
	return errnum;
}

const struct vc_kv *vc_conf_key(const struct vc_backend_conf *conf, const char *key)
{
	for (size_t i = conf->nkeys; i-- > 0;)	/* the last one wins */
		if (strcmp(conf->keys[i].key, key) == 0)
			return &conf->keys[i];
	return NULL;
}

int vc_conf_bool(const struct vc_backend_conf *conf, const char *key, bool *ret,
		 struct vc_error *err)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	const struct vc_kv *kv = vc_conf_key(conf, key);

	if (!kv)
		return 0;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(kv->value, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(kv->value, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return vc_err(err, kv->line, -EINVAL, "bad value '%s' for '%s' (yes or no)", kv->value,
		      key);
}

bool vc_format_size_ok(uint32_t pixelformat, uint32_t width, uint32_t height)
{
	bool yuv420 = pixelformat == V4L2_PIX_FMT_NV12 || pixelformat == V4L2_PIX_FMT_YUV420 ||
		      pixelformat == V4L2_PIX_FMT_YVU420;

	if (width < VIACAM_MIN_WIDTH || width > VIACAM_MAX_WIDTH || height < VIACAM_MIN_HEIGHT ||
	    height > VIACAM_MAX_HEIGHT)
		return false;
	return !yuv420 || !((width | height) & 1);
}

void vc_kick(int efd)
{
	uint64_t one = 1;

	/* Only fails when the counter would overflow: it is readable then anyway. */
	if (write(efd, &one, sizeof(one)) < 0)
		return;
}

bool vc_interval_ok(uint32_t num, uint32_t den)
{
	return num && den && (uint64_t)den * VC_MIN_FPS_DIV >= num &&
	       den <= (uint64_t)VC_MAX_FPS * num;
}

uint32_t vc_bytesperline(uint32_t pixelformat, uint32_t width)
{
	switch (pixelformat) {
	case V4L2_PIX_FMT_YUYV:
	case V4L2_PIX_FMT_UYVY:
	case V4L2_PIX_FMT_RGB565:
		return width * 2;
	case V4L2_PIX_FMT_RGB24:
	case V4L2_PIX_FMT_BGR24:
		return width * 3;
	case V4L2_PIX_FMT_NV12:
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
	case V4L2_PIX_FMT_GREY:
		return width;
	default:
		return 0;
	}
}

uint32_t vc_sizeimage(uint32_t pixelformat, uint32_t width, uint32_t height)
{
	switch (pixelformat) {
	case V4L2_PIX_FMT_NV12:
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
		return width * height * 3 / 2;
	default:
		return vc_bytesperline(pixelformat, width) * height;
	}
}

