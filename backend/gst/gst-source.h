/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gst-source.h - the gst backend's instance, for backends that are a GStreamer source
 * description of their own (the pipewire backend). be-gst.c says how it works.
 */
#ifndef VIACAM_GST_SOURCE_H
#define VIACAM_GST_SOURCE_H

#include <stdbool.h>

#include "backend.h"

/*
 * An instance for the source description @desc (from the config line @line, for messages).
 * @remote: a PipeWire socket to connect pipewiresrc "vc_pw" to at each start, or NULL.
 * @probe_caps: ask the source's caps (in READY) when the section sets no sizes or rates, unless
 * @conf is a check (check_only).
 * @ops: the backend's ops table, whose name starts the messages. Returns as create().
 */
int vc_gst_create_desc(const struct vc_backend_conf *conf, const char *desc, int line,
		       const char *remote, bool probe_caps, const struct vc_backend_ops *ops,
		       void **ret, struct vc_error *err);

/* GStreamer's own setup (its registry, new plugins scanned), before a worker's sandbox. */
void vc_gst_init(void);

/* The ops of such an instance (backend.h). */
int vc_gst_describe(void *priv, struct vc_modes *modes);
int vc_gst_start(void *priv, const struct vc_mode *mode, struct vc_error *err);
int vc_gst_produce(void *priv, struct vc_frame *frame);
void vc_gst_stop(void *priv);
int vc_gst_clock_fd(void *priv);
void vc_gst_release(void *priv);

#endif /* VIACAM_GST_SOURCE_H */
