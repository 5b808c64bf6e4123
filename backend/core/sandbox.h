/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sandbox.h - what a worker process (worker.h) gives up before it touches a source.
 */
#ifndef VIACAM_SANDBOX_H
#define VIACAM_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The user workers run as; "nobody" when it does not exist (sandbox.c says why). */
#define VC_SANDBOX_USER "viacam"
#define VC_SANDBOX_FALLBACK_USER "nobody"
#define VC_SANDBOX_MAX_DEVICES 8
/* RLIMIT_DATA of a worker: its heap and private writable mappings (decoders, queues). */
#define VC_SANDBOX_DATA_MB 1024

struct vc_sandbox {
	/* The device nodes the source names (v4l2src device=/dev/video0). None: its own /dev of
	 * null, zero, full, random and urandom. Some: the host's /dev (sandbox.c says why), and
	 * the video group. */
	char devices[VC_SANDBOX_MAX_DEVICES][128];
	size_t ndevices;
	bool needs_dev;	/* a device source without a device= (v4l2src, libcamerasrc): same */
	/* Run as this user instead of VC_SANDBOX_USER (-1: that one): a PipeWire socket's
	 * owner, whose PipeWire it connects to. */
	uid_t uid;
	gid_t gid;
	uint64_t data_limit;	/* bytes, 0: VC_SANDBOX_DATA_MB */
};

/*
 * Enters the sandbox, for good: a mount namespace of its own with an empty /sys and a /dev of
 * a few nodes (above; when we may make one: root), then an unprivileged uid and gid with no
 * supplementary groups but "video" when a device is named, every capability dropped (bounding
 * and ambient sets too), no new privileges, RLIMIT_DATA and RLIMIT_CORE, and the seccomp
 * filter. Returns 0, or a negative errno with the reason in @why.
 */
int vc_sandbox_enter(const struct vc_sandbox *sb, char *why, size_t len);

/* The device paths of a gst description ("device=/dev/..." properties) into @sb, and
 * needs_dev for the elements that open devices by themselves. */
void vc_sandbox_devices_of(struct vc_sandbox *sb, const char *desc);

#endif /* VIACAM_SANDBOX_H */
