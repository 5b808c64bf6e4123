/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * backend.h - the interface between viacamd's sessions and its backends (ops table v2: v1 plus
 * clock_fd, frame notes and capture times).
 *
 * READ THIS FIRST. A backend is a source of frames for one camera: the pattern generator, a
 * Y4M file, another V4L2 device, the VIA capture engine. All of them implement the ops table
 * below and are found by name in the registry (backends.c); the session code never knows which
 * one it drives. Every op is called from viacamd's single event-loop thread: no op may block
 * for longer than a frame interval, none is called concurrently with another op of the same
 * instance, and none is called from a signal handler. Work that can take longer (opening and
 * starting a device, powering a sensor, a GStreamer state change) goes to a thread of the
 * instance's own, which reports back through clock_fd (gst, v4l2 and via do this).
 *
 * Life of an instance:
 *   create -> describe -> controls -> [set_ctrl]* -> (start -> produce* -> [set_ctrl]* -> stop)*
 *          -> release
 * Only create and release are mandatory to pair; stop is called before release whenever start
 * succeeded. "Produce" is called once per frame slot: at the negotiated interval by the
 * session's timer, or, for a backend with its own clock (clock_fd), whenever that fd is
 * readable: the source then sets the pace (a camera's sensor, a GStreamer pipeline).
 *
 * Errors are negative errno values. Messages for people go through vc_err() (create, start) or
 * the daemon's log with the camera's name (the session does that).
 */
#ifndef VIACAM_BACKEND_H
#define VIACAM_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/viacam.h>

#include "text.h"

#define VC_BACKEND_ABI 2	/* bump when an op changes meaning; sessions refuse other values */

#define VC_MAX_MODES VIACAM_MAX_FORMATS
#define VC_MAX_CTRLS VIACAM_MAX_CTRLS

/*
 * Frame rates viacamd offers and plays: 1/VC_MIN_FPS_DIV to VC_MAX_FPS frames per second.
 * The bridge repeats frames at most every millisecond (kmod/viacam-queue.c), and the session
 * runs one timer per frame: faster than that is a busy loop, slower a camera that looks dead.
 */
#define VC_MAX_FPS 1000
#define VC_MIN_FPS_DIV 60

/* One frame format a backend can produce natively: fourcc x size x interval. */
struct vc_mode {
	uint32_t pixelformat;	/* V4L2_PIX_FMT_* */
	uint32_t width;
	uint32_t height;
	uint32_t interval_num;	/* seconds per frame = num / den */
	uint32_t interval_den;
};

/* A growing list of modes (describe() appends with vc_modes_add). */
struct vc_modes {
	struct vc_mode v[VC_MAX_MODES];
	size_t n;
};

/* Appends @m unless present; -ENOSPC when the list is full. */
int vc_modes_add(struct vc_modes *modes, const struct vc_mode *m);

/* A backend key from the camera's config section, with its line for messages. */
struct vc_kv {
	char *key;
	char *value;
	int line;
};

/* What the session gives create(): the camera's section, already checked for generic keys. */
struct vc_backend_conf {
	const char *camera;	/* section name, for messages */
	const struct vc_kv *keys;	/* only keys listed in ops->keys */
	size_t nkeys;
	/* What the config asks to offer (0 entries = no restriction). Backends that can produce
	 * any size or rate (pattern) build their modes from these; others may ignore them, the
	 * session filters describe()'s result anyway. */
	const uint32_t *formats;
	size_t nformats;
	const uint32_t (*sizes)[2];	/* width, height */
	size_t nsizes;
	const uint32_t (*intervals)[2];	/* num, den */
	size_t nintervals;
	/* The lines of the formats, sizes and rates keys (0: absent), for vc_err() about them. */
	int formats_line;
	int sizes_line;
	int rates_line;
	/*
	 * viacamd --check: the instance is made to be checked and released, never started.
	 * create() then does nothing that only a running source does, which a check must not
	 * (it runs as root, outside the unit's sandbox): a GStreamer pipeline stays in NULL, so
	 * no element opens its file, socket or device. Reading what describes the source (a
	 * clip's header, a V4L2 device's formats) is still done.
	 */
	bool check_only;
};

/* Where create()/start() put a message for people: the config line it concerns (0: none). */
struct vc_error {
	int line;
	char msg[256];
};

/* Sets @err (if not NULL) and returns @errnum (negative errno). */
int vc_err(struct vc_error *err, int line, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A buffer to fill: exactly one frame of @mode, with the bridge's line layout. @data is, where
 * the bridge can lend one, a consumer's own capture buffer (VIACAM_IOC_LEND: what is written
 * there is what the application gets, with no copy), else one of the session's backend
 * buffers or its conversion scratch buffer. Valid only during the produce() call.
 */
struct vc_frame {
	uint8_t *data;
	size_t size;		/* bytes available = the mode's frame size */
	const struct vc_mode *mode;
	uint32_t bytesperline;	/* of the first plane (planes follow each other, no padding) */
	uint64_t sequence;	/* 0, 1, 2 ... since start */
	uint64_t time_ns;	/* CLOCK_MONOTONIC of this frame slot */
	size_t bytesused;	/* out: bytes written (the full frame for raw formats) */
	/* out: CLOCK_MONOTONIC ns when the source captured this frame (a sensor's, a proxied
	 * device's or a pipeline's time), passed on as the capture buffer's timestamp; 0 (the
	 * default): unknown, the bridge stamps the frame when it reaches a consumer. The bridge
	 * ignores a time in the future, older than a second, or not after the previous one. */
	uint64_t capture_ns;
	/* out: a line for people (a source failed, recovered), logged by the session with the
	 * camera's name, escaped (text.h); empty when nothing happened. Set at most once per
	 * event. */
	char note[256];
};

struct vc_backend_ops {
	unsigned int abi;	/* VC_BACKEND_ABI */
	const char *name;	/* registry name, the config's "backend = NAME" */
	const char *summary;	/* one line for viacamd --list-backends */
	const char *const *keys;	/* NULL-terminated config keys this backend accepts */

	/*
	 * create: make an instance from @conf. Checks every key and opens what it needs to
	 * describe itself (a file's header, a device's formats); it must not start a source
	 * (no hardware powered, no device streaming). Returns 0 and sets *ret_priv, or a
	 * negative errno with @err naming the key's line and the problem. Called at config
	 * load and reload, before anything of the running configuration changes: a failing
	 * create makes the whole new configuration invalid.
	 */
	int (*create)(const struct vc_backend_conf *conf, void **ret_priv, struct vc_error *err);

	/*
	 * describe: append every mode the backend produces natively to @modes. Returns 0 or a
	 * negative errno. The session adds converted formats and filters by the config
	 * (offer.c).
	 */
	int (*describe)(void *priv, struct vc_modes *modes);

	/*
	 * controls: fill @ctrls (up to VC_MAX_CTRLS) with the backend's controls, return how
	 * many (>= 0) or a negative errno. Standard V4L2_CID_* ids keep their meaning. May be
	 * NULL (no controls).
	 */
	int (*controls)(void *priv, struct viacam_ctrl *ctrls);

	/*
	 * start: power up / open / seek the source to deliver @mode (one of describe()'s) at its
	 * interval. Returns 0, or a negative errno with @err set. Called when the first consumer
	 * streams (or when this backend takes over a running stream).
	 */
	int (*start)(void *priv, const struct vc_mode *mode, struct vc_error *err);

	/*
	 * produce: fill @frame with the next frame. Returns 0 when a frame was written (set
	 * frame->bytesused), -EAGAIN when no new frame is available yet (the slot is skipped:
	 * the bridge repeats the last frame after its timeout), -ENODEV when the source is
	 * gone for good (logged once by the session; produce is not called again until the
	 * next start), other negative errno for a failed frame. Must not block.
	 */
	int (*produce)(void *priv, struct vc_frame *frame);

	/*
	 * clock_fd: a backend with its own clock returns a pollable fd (valid from start() to
	 * stop()) that becomes readable when produce() has something to do: a new frame, or news
	 * of the source (an error, a restart due). The session then calls produce() on each
	 * readiness instead of at its timer's ticks, and produce() must consume the readiness
	 * (read the eventfd, dequeue the buffer), or the session spins. Returns -1 for "use the
	 * timer". May be NULL (the timer paces the backend).
	 */
	int (*clock_fd)(void *priv);

	/* stop: stop the source (power down, close the device). Never fails. */
	void (*stop)(void *priv);

	/*
	 * set_ctrl: a control of controls() got a new value (a consumer set it, or the config's
	 * default at start). Returns 0 or a negative errno (logged, the value stays). May be
	 * called while stopped; it then takes effect at the next start. May be NULL.
	 */
	int (*set_ctrl)(void *priv, uint32_t id, int64_t value);

	/* release: free the instance (after stop, if started). */
	void (*release)(void *priv);
};

/* The registry (backends.c): the ops table called @name, or NULL. */
const struct vc_backend_ops *vc_backend_find(const char *name);
/* The @i-th registered backend, NULL past the end. */
const struct vc_backend_ops *vc_backend_at(size_t i);

/*
 * Whether the bridge takes a tuple of @pixelformat at @width x @height, as its
 * viacam_check_format() does: 16..8192 each way, even for the 4:2:0 formats (NV12, YUV420,
 * YVU420). One refused tuple makes the bridge refuse a whole VIACAM_IOC_S_FORMATS.
 */
bool vc_format_size_ok(uint32_t pixelformat, uint32_t width, uint32_t height);
/* Whether an interval of @num/@den seconds is within VC_MIN_FPS_DIV and VC_MAX_FPS. */
bool vc_interval_ok(uint32_t num, uint32_t den);

/* Frame sizes of the bridge's raw formats (same rules as the module); 0 if unknown. */
uint32_t vc_bytesperline(uint32_t pixelformat, uint32_t width);
uint32_t vc_sizeimage(uint32_t pixelformat, uint32_t width, uint32_t height);

/* vc_fourcc_str() ("YUYV" from a fourcc) is in lib/text.h, shared with the tools. */

/*
 * Make a backend's clock_fd (an eventfd) readable: a backend thread says "a frame, or an
 * answer, is ready" to the session's loop. Safe from any thread.
 */
void vc_kick(int efd);

/* Backend-key helpers for create(): the value of @key or NULL. */
const struct vc_kv *vc_conf_key(const struct vc_backend_conf *conf, const char *key);
/* A yes/no key (yes true on 1 / no false off 0): 0 and *@ret set (unchanged when the key is
 * absent), or -EINVAL with @err naming the line and the value. */
int vc_conf_bool(const struct vc_backend_conf *conf, const char *key, bool *ret,
		 struct vc_error *err);

#endif /* VIACAM_BACKEND_H */
