/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * be-v4l2.h - the v4l2 backend's check of what a device's VIDIOC_QUERYCAP says (be-v4l2.c).
 */
#ifndef VIACAM_BE_V4L2_H
#define VIACAM_BE_V4L2_H

#include <linux/videodev2.h>

/*
 * Why the backend does not take a device whose QUERYCAP answer is @cap ("is a viacam node:
 * a camera cannot feed from viacam", "is not a video capture device", ...), or NULL when it
 * does: a single-planar video capture node of any driver but viacam.
 */
const char *vc_v4l2_cap_problem(const struct v4l2_capability *cap);

#endif /* VIACAM_BE_V4L2_H */
