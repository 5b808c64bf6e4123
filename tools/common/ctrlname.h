/* SPDX-License-Identifier: GPL-2.0-only */
/* ctrlname.h - control names as v4l2-ctl spells them ("Horizontal Flip" -> horizontal_flip). */
#ifndef VIACAM_CTRLNAME_H
#define VIACAM_CTRLNAME_H

#include <stddef.h>

/* Lower case; each run of characters other than letters and digits becomes one '_'. */
void vc_ctrl_key_name(const char *name, char *buf, size_t len);

#endif /* VIACAM_CTRLNAME_H */
