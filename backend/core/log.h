/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * log.h - viacamd writes one line per event that matters to stderr (the journal keeps it).
 * When stderr is the journal (systemd sets JOURNAL_STREAM to its device:inode), each line
 * starts with a syslog priority, "<3>" for an error, so journald files it at that priority;
 * on a terminal or in a file the lines are plain. vc_log_journal says which (viacamd's main).
 */
#ifndef VIACAM_LOG_H
#define VIACAM_LOG_H

#include <stdbool.h>
#include <stdio.h>
#include <syslog.h>

extern bool vc_log_journal;	/* set once at start, before the event loop */

static inline const char *vc_log_prio(int prio)
{
	static const char *const tag[8] = { "<0>", "<1>", "<2>", "<3>", "<4>", "<5>", "<6>", "<7>" };

	return vc_log_journal ? tag[prio & 7] : "";
}

#define vc_logp(prio, fmt, ...) \
	fprintf(stderr, "%sviacamd: " fmt "\n", vc_log_prio(prio), ##__VA_ARGS__)
#define vc_log(fmt, ...) vc_logp(LOG_INFO, fmt, ##__VA_ARGS__)
#define vc_warn(fmt, ...) vc_logp(LOG_WARNING, fmt, ##__VA_ARGS__)
#define vc_cam_logp(prio, s, fmt, ...) \
	fprintf(stderr, "%sviacamd: camera %s: " fmt "\n", vc_log_prio(prio), vc_session_name(s), \
		##__VA_ARGS__)
#define vc_cam_log(s, fmt, ...) vc_cam_logp(LOG_INFO, s, fmt, ##__VA_ARGS__)
#define vc_cam_warn(s, fmt, ...) vc_cam_logp(LOG_WARNING, s, fmt, ##__VA_ARGS__)

#endif /* VIACAM_LOG_H */
