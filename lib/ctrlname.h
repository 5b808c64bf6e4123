/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ctrlname.h - control names as v4l2-ctl spells them ("Horizontal Flip" -> horizontal_flip),
 * and control values in struct v4l2_ext_control.
 */
#ifndef VIACAM_CTRLNAME_H
#define VIACAM_CTRLNAME_H

#include <stddef.h>
#include <stdint.h>

#include <linux/videodev2.h>

/* Lower case; each run of characters other than letters and digits becomes one '_'. */
void vc_ctrl_key_name(const char *name, char *buf, size_t len);

/* The value of @c, a control of @type as VIDIOC_G_EXT_CTRLS returned it. */
int64_t vc_ctrl_ext_value(uint32_t type, const struct v4l2_ext_control *c);

/* Puts @value into @c for VIDIOC_S_EXT_CTRLS on a control of @type. 0 or -ERANGE. */
int vc_ctrl_set_ext_value(uint32_t type, int64_t value, struct v4l2_ext_control *c);

#endif /* VIACAM_CTRLNAME_H */
