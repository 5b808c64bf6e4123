// SPDX-License-Identifier: GPL-2.0-only
/*
 * offer.c - a camera's offer from its config section and its backend's native modes
 * (see offer.h). Nothing here touches a device, a file or the event loop.
 */
#include <errno.h>
#include <string.h>

#include <linux/videodev2.h>

#include "convert.h"
#include "offer.h"

static bool in_sizes(const struct vc_cam_conf *cc, const struct vc_mode *m)
{
	if (!cc->nsizes)
		return true;
	for (size_t i = 0; i < cc->nsizes; i++)
		if (cc->sizes[i][0] == m->width && cc->sizes[i][1] == m->height)
			return true;
	return false;
}

static bool in_rates(const struct vc_cam_conf *cc, const struct vc_mode *m)
{
	if (!cc->nintervals)
		return true;
	for (size_t i = 0; i < cc->nintervals; i++)
		if ((uint64_t)cc->intervals[i][0] * m->interval_den ==
		    (uint64_t)cc->intervals[i][1] * m->interval_num)
			return true;
	return false;
}

static bool offered(const struct vc_prepared *p, uint32_t f, const struct vc_mode *m)
{
	for (size_t i = 0; i < p->noffers; i++) {
		const struct viacam_format *o = &p->offers[i].fmt;

		if (o->pixelformat == f && o->width == m->width && o->height == m->height &&
		    o->interval_num == m->interval_num && o->interval_den == m->interval_den)
			return true;
	}
	return false;
}

static bool native_has(const struct vc_prepared *p, uint32_t f, const struct vc_mode *m)
{
	for (size_t i = 0; i < p->native.n; i++) {
		const struct vc_mode *n = &p->native.v[i];

		if (n->pixelformat == f && n->width == m->width && n->height == m->height &&
		    n->interval_num == m->interval_num && n->interval_den == m->interval_den)
			return true;
	}
	return false;
}

static void add_offers_for(struct vc_prepared *p, const struct vc_cam_conf *cc, uint32_t f)
{
	for (size_t i = 0; i < p->native.n && p->noffers < VC_MAX_MODES; i++) {
		const struct vc_mode *m = &p->native.v[i];
		struct vc_offer *o;
		bool convert;

		if (!in_sizes(cc, m) || !in_rates(cc, m) || offered(p, f, m))
			continue;
		/*
		 * Nothing the bridge would refuse: one such tuple fails the whole declaration at
		 * run time (a 33x17 mono clip converted to YUV420), and a rate out of range makes
		 * a busy timer.
		 */
		if (!vc_format_size_ok(f, m->width, m->height) ||
		    !vc_interval_ok(m->interval_num, m->interval_den))
			continue;
		if (m->pixelformat == f)
			convert = false;
		else if (!native_has(p, f, m) && vc_convert_possible(m->pixelformat, f) &&
			 vc_sizeimage(f, m->width, m->height))
			convert = true;
		else
			continue;
		o = &p->offers[p->noffers++];
		memset(o, 0, sizeof(*o));
		o->fmt.pixelformat = f;
		o->fmt.width = m->width;
		o->fmt.height = m->height;
		o->fmt.interval_num = m->interval_num;
		o->fmt.interval_den = m->interval_den;
		if (f == V4L2_PIX_FMT_MJPEG)
			o->fmt.sizeimage = m->width * m->height * 2;
		o->native = i;
		o->convert = convert;
	}
}

int vc_offer_build(struct vc_prepared *p, const struct vc_cam_conf *cc, const char *path,
		   struct vc_msgs *msgs)
{
	uint32_t order[VC_MAX_LIST + 8];
	size_t n = 0;

	p->noffers = 0;
	if (cc->nformats) {
		memcpy(order, cc->formats, cc->nformats * sizeof(order[0]));
		n = cc->nformats;
	} else {
		for (size_t i = 0; i < p->native.n && n < VC_MAX_LIST; i++) {
			bool dup = false;

			for (size_t j = 0; j < n; j++)
				dup |= order[j] == p->native.v[i].pixelformat;
			if (!dup)
				order[n++] = p->native.v[i].pixelformat;
		}
		order[n++] = V4L2_PIX_FMT_YUV420;
		order[n++] = V4L2_PIX_FMT_RGB24;
	}
	for (size_t i = 0; i < n; i++)
		add_offers_for(p, cc, order[i]);
	if (!p->noffers) {
		int line = cc->formats_line ? cc->formats_line :
			   cc->sizes_line ? cc->sizes_line :
			   cc->rates_line ? cc->rates_line : cc->line;

		vc_msgs_add_at(msgs, path, line, "camera %s: nothing to offer: backend '%s' produces no format, size and rate that the section allows (and the bridge takes)",
			       cc->name, cc->backend);
		return -EINVAL;
	}
	return 0;
}

const struct vc_offer *vc_offer_find(const struct vc_prepared *p, uint32_t f, uint32_t w,
				     uint32_t h, uint32_t num, uint32_t den)
{
	/* 0/0 would match every rate below, and the caller divides by @den. */
	if (!num || !den)
		return NULL;
	for (size_t i = 0; i < p->noffers; i++) {
		const struct viacam_format *o = &p->offers[i].fmt;

		if (o->pixelformat == f && o->width == w && o->height == h &&
		    (uint64_t)o->interval_num * den == (uint64_t)o->interval_den * num)
			return &p->offers[i];
	}
	return NULL;
}
