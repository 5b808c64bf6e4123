/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * log.h - viacamd writes one line per event that matters to stderr (the journal keeps it).
 */
#ifndef VIACAM_LOG_H
#define VIACAM_LOG_H

#include <stdio.h>

#define vc_log(fmt, ...) fprintf(stderr, "viacamd: " fmt "\n", ##__VA_ARGS__)
#define vc_cam_log(s, fmt, ...) \
	fprintf(stderr, "viacamd: camera %s: " fmt "\n", vc_session_name(s), ##__VA_ARGS__)

#endif /* VIACAM_LOG_H */
