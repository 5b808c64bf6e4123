/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * session.h - one camera served by viacamd: a backend instance, the bridge's backend node,
 * the frame pump. All functions run in the daemon's event-loop thread.
 */
#ifndef VIACAM_SESSION_H
#define VIACAM_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "backend.h"
#include "config.h"
#include "offer.h"

/*
 * Makes @cc's backend: create(), describe(), controls(), then the offer (vc_offer_build())
 * and the section's control defaults. Problems go to @msgs as "PATH:LINE: camera NAME:
 * reason". @check_only: for viacamd --check, never to be started (vc_backend_conf).
 */
int vc_prepare(const struct vc_cam_conf *cc, const char *path, bool check_only,
	       struct vc_prepared **ret, struct vc_msgs *msgs);
void vc_prepared_free(struct vc_prepared *p);

struct vc_session;

/*
 * Creates the camera (or adopts camera @adopt_id when it is not VIACAM_ID_AUTO), opens its
 * backend node, declares @p's offer and controls and waits for consumers. Takes @p. On
 * failure (logged) @err (may be NULL) says why in a few words, for the daemon's summary.
 */
int vc_session_new(sd_event *event, int ctl_fd, const struct vc_cam_conf *cc,
		   struct vc_prepared *p, uint32_t adopt_id, struct vc_session **ret,
		   struct vc_error *err);

/* Stops the source and closes the node; with @remove also deletes the camera. */
void vc_session_free(struct vc_session *s, bool remove);

/*
 * A new version of the session's section. @p is a new backend instance when the backend,
 * the offer or control defaults changed (NULL otherwise); the session takes it. Changes that
 * would break a streaming consumer wait until the stream stops, and the log says so.
 */
void vc_session_update(struct vc_session *s, const struct vc_cam_conf *cc, struct vc_prepared *p);

uint32_t vc_session_camera_id(const struct vc_session *s);
const char *vc_session_name(const struct vc_session *s);
/* The backend in use (a pending swap not yet counted). */
const char *vc_session_backend_name(const struct vc_session *s);
/* Whether an application streams the camera (removing it gives its consumers ENODEV). */
bool vc_session_streaming(const struct vc_session *s);
/* How many capture file handles are open on the camera (the bridge's last count). */
unsigned int vc_session_open_count(const struct vc_session *s);
/* "camera 3 'Label', capture /dev/video10[, /dev/video12...]" into @buf, for the log. */
const char *vc_session_describe(const struct vc_session *s, char *buf, size_t len);

/*
 * For tests/fuzz/fuzz-session.c, which drives a session without the bridge: one event as
 * VIDIOC_DQEVENT returned it (what the node's EPOLLPRI handler does with each), one frame
 * slot of the timer while streaming, and whether the session still has its node.
 */
struct v4l2_event;
void vc_session_event(struct vc_session *s, const struct v4l2_event *ev);
void vc_session_pump(struct vc_session *s);
bool vc_session_attached(const struct vc_session *s);
#endif /* VIACAM_SESSION_H */
