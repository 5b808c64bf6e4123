/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * convert.h - pixel format conversion for sessions, through libv4lconvert.
 *
 * A consumer may pick an offered format that the backend does not produce natively; the
 * session then renders the native format into a scratch buffer and converts it into the
 * bridge's buffer here. libv4lconvert's destinations are RGB24, BGR24, YUV420 and YVU420;
 * its sources include every raw format the bridge knows and MJPEG.
 */
#ifndef VIACAM_CONVERT_H
#define VIACAM_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

struct vc_convert;

/* Can a frame of @src be converted to @dst (different fourccs, same size)? */
bool vc_convert_possible(uint32_t src, uint32_t dst);

/* A converter (libv4lconvert needs a device; it gets a stand-in that answers QUERYCAP). */
struct vc_convert *vc_convert_new(void);
void vc_convert_free(struct vc_convert *c);

/*
 * Converts one frame of @from (@src, @srclen bytes) into @to's layout at @dst (@dstlen bytes,
 * at least the frame size of @to). Sizes must match. Returns the bytes written or a negative
 * errno; vc_convert_error() then says why.
 */
int vc_convert_frame(struct vc_convert *c, const struct vc_mode *from, const uint8_t *src,
		     size_t srclen, const struct vc_mode *to, uint8_t *dst, size_t dstlen);
const char *vc_convert_error(struct vc_convert *c);

#endif /* VIACAM_CONVERT_H */
