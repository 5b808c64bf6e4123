/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * worker.h - backends that parse media or talk to a network (gst, pipewire, file) run in a
 * worker process of their own, one per camera, in a sandbox (sandbox.h). worker.c says how.
 *
 * The core side is a backend like any other: vc_worker_proxy() gives an ops table that
 * forwards each op to the worker over a socketpair and takes the frames from a shared-memory
 * ring. The worker side is vc_worker_main(): viacamd re-executes itself as
 * "viacamd --worker" with the socket on fd VC_WORKER_FD.
 */
#ifndef VIACAM_WORKER_H
#define VIACAM_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"

#define VC_WORKER_FD 3		/* the worker's end of the socketpair, after the exec */
#define VC_WORKER_ARG "--worker"

/*
 * The program the core executes as a worker ("/proc/self/exe" in viacamd: the very binary
 * that runs, even when a package upgrade replaced the file meanwhile). NULL: no workers, every
 * backend runs in the daemon (the unit tests of other things; viacamd --in-process).
 */
extern const char *vc_worker_exe;
/* A worker that does not answer a heartbeat within this many ms is killed and restarted. */
extern unsigned int vc_worker_hang_ms;

/* Whether @ops is a backend that runs in a worker when vc_worker_exe is set. */
bool vc_worker_isolates(const struct vc_backend_ops *ops);

/* The ops table that runs @real in a worker (same name, keys and summary); NULL if too many. */
const struct vc_backend_ops *vc_worker_proxy(const struct vc_backend_ops *real);

/* The worker process of an instance of a proxy's ops (for tests and the log); -1 if none. */
pid_t vc_worker_pid(void *priv);

/* What an instance measured (make bench): frames taken from the ring, restarts, and the time
 * from the worker's FRAME to the frame copied out in the core (sum, count, maximum, in ns). */
struct vc_worker_stats {
	uint64_t frames, restarts;
	uint64_t lat_sum_ns, lat_n, lat_max_ns;
	uint64_t lat_last_ns;	/* of the last frame copied out */
};
void vc_worker_stats(void *priv, struct vc_worker_stats *st);

/*
 * The worker: serves one backend instance on socket @fd, the backend found by name with
 * @find. Sandboxes itself before it makes the instance. Returns the process's exit status.
 */
int vc_worker_main(int fd, const struct vc_backend_ops *(*find)(const char *name));

#endif /* VIACAM_WORKER_H */
