// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacam-format.c - the pixel formats the bridge knows, and their buffer sizes.
 */
#include <linux/kernel.h>
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
