// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacam-format.c - the pixel formats the bridge knows, and their buffer sizes.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/videodev2.h>

#include "viacam.h"

static const struct viacam_fmtinfo viacam_formats[] = {
	{ V4L2_PIX_FMT_YUYV,	16, 16, 0, 1 },
	{ V4L2_PIX_FMT_UYVY,	16, 16, 0, 1 },
	{ V4L2_PIX_FMT_NV12,	 8, 12, 1, 1 },
	{ V4L2_PIX_FMT_YUV420,	 8, 12, 1, 1 },
	{ V4L2_PIX_FMT_YVU420,	 8, 12, 1, 1 },
	{ V4L2_PIX_FMT_RGB24,	24, 24, 0, 0 },
	{ V4L2_PIX_FMT_BGR24,	24, 24, 0, 0 },
	{ V4L2_PIX_FMT_RGB565,	16, 16, 0, 0 },
	{ V4L2_PIX_FMT_GREY,	 8,  8, 0, 0 },
	{ V4L2_PIX_FMT_MJPEG,	 0,  0, 0, 0 },
};

const struct viacam_fmtinfo *viacam_fmtinfo(u32 fourcc)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(viacam_formats); i++)
		if (viacam_formats[i].fourcc == fourcc)
			return &viacam_formats[i];
	return NULL;
}

const struct viacam_fmtinfo *viacam_fmtinfo_at(unsigned int index)
{
	return index < ARRAY_SIZE(viacam_formats) ? &viacam_formats[index] : NULL;
}

/*
 * Fill @pix for a frame of @fourcc at @width x @height. @sizeimage is only
 * used by compressed formats (the producer's maximum frame size; 0 picks
 * two bytes per pixel). The size must already be valid for the format.
 */
void viacam_fill_pix(struct v4l2_pix_format *pix, u32 fourcc, u32 width, u32 height,
		     u32 sizeimage)
{
	const struct viacam_fmtinfo *fi = viacam_fmtinfo(fourcc);

	memset(pix, 0, sizeof(*pix));
	pix->pixelformat = fourcc;
	pix->width = width;
	pix->height = height;
	pix->field = V4L2_FIELD_NONE;
	if (fi && fi->bpp) {
		pix->bytesperline = width * fi->bpp / 8;
		pix->sizeimage = width * height * fi->total_bpp / 8;
		pix->colorspace = V4L2_COLORSPACE_SRGB;
	} else {
		pix->bytesperline = 0;
		pix->sizeimage = sizeimage ? sizeimage : width * height * 2;
		pix->colorspace = V4L2_COLORSPACE_JPEG;
	}
	pix->xfer_func = V4L2_XFER_FUNC_DEFAULT;
	pix->ycbcr_enc = V4L2_YCBCR_ENC_DEFAULT;
	pix->quantization = V4L2_QUANTIZATION_DEFAULT;
}

/*
 * Text that reaches applications (labels, card names, control and menu
 * names): NUL-terminated within @len, not empty unless @may_be_empty, and
 * well-formed UTF-8 without control characters (no C0 byte, no DEL, no C1
 * code point, no overlong form, no surrogate, nothing above U+10FFFF).
 */
bool viacam_text_ok(const char *str, size_t len, bool may_be_empty)
{
	const u8 *s = (const u8 *)str;
	size_t n = strnlen(str, len), i = 0;

	if (n >= len || (!may_be_empty && !n))
		return false;
	while (i < n) {
		u32 c = s[i], min;
		unsigned int more, k;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return false;
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			more = 1;
		else if ((c & 0xf0) == 0xe0)
			more = 2;
		else if ((c & 0xf8) == 0xf0)
			more = 3;
		else
			return false;
		/* Smallest code point that needs this many bytes, and the lead's bits. */
		min = more == 1 ? 0x80 : more == 2 ? 0x800 : 0x10000;
		c &= 0x3f >> more;
		if (i + more >= n)
			return false;
		for (k = 1; k <= more; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			c = (c << 6) | (s[i + k] & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ||
		    (c >= 0x80 && c <= 0x9f))
			return false;
		i += more + 1;
	}
	return true;
}
