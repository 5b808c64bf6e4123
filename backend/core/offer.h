/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * offer.h - what a camera offers its consumers: the tuples (fourcc x size x interval) that
 * viacamd declares to the bridge, computed from the camera's config section and the modes its
 * backend's describe() returned.
 *
 * Pure logic: no ioctls, no sd-event, no file descriptors, no backend calls. A section and a
 * list of native modes go in; the offer comes out, each tuple with the native mode it is made
 * from and whether libv4lconvert makes it. The session (session.c) creates the backend,
 * declares the offer and streams it; the unit test (tests/unit/test-offer.c) calls this with
 * hand-made modes and sections.
 */
#ifndef VIACAM_OFFER_H
#define VIACAM_OFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "config.h"

/* One offered tuple and how the session makes it: a native mode, converted or not. */
struct vc_offer {
	struct viacam_format fmt;
	size_t native;		/* index into vc_prepared.native */
	bool convert;
};

/*
 * A backend instance made from a camera section, with everything derived from it: its
 * native modes, the offer (filtered by the section, plus conversions), its controls with the
 * section's defaults. Made while a configuration is checked, before any of it is applied
 * (vc_prepare() in session.h). The offer functions below use only native, offers and noffers:
 * a caller without a backend leaves ops and priv NULL.
 */
struct vc_prepared {
	const struct vc_backend_ops *ops;
	void *priv;
	struct vc_modes native;
	struct vc_offer offers[VC_MAX_MODES];
	size_t noffers;
	struct viacam_ctrl ctrls[VC_MAX_CTRLS];
	size_t nctrls;
};

/*
 * Computes @p->offers and @p->noffers from @p->native and section @cc (its formats, sizes and
 * rates lists; an empty list allows everything). The order: the section's formats in its
 * order, or without a formats list the native fourccs in the backend's order followed by
 * YUV420 and RGB24. For each format, the native modes in their order that the lists allow:
 * as they are when the backend makes that fourcc, else converted by libv4lconvert when it can
 * (and the backend does not make that tuple itself). Tuples the bridge would refuse (size,
 * interval) are left out, and the offer stops at VC_MAX_MODES tuples. An earlier offer of
 * @p is replaced.
 *
 * Returns 0, or -EINVAL when nothing is left to offer, with "PATH:LINE: camera NAME: nothing
 * to offer: ..." in @msgs, at the line of the section's formats key, else of its sizes key,
 * else of its rates key, else of its header.
 */
int vc_offer_build(struct vc_prepared *p, const struct vc_cam_conf *cc, const char *path,
		   struct vc_msgs *msgs);

/*
 * The offer of @p that makes pixelformat @f at @w x @h with frame interval @num/@den
 * seconds (equal fractions match: 2/60 finds a 1/30 offer), or NULL (also for a zero
 * interval).
 */
const struct vc_offer *vc_offer_find(const struct vc_prepared *p, uint32_t f, uint32_t w,
				     uint32_t h, uint32_t num, uint32_t den);

#endif /* VIACAM_OFFER_H */
