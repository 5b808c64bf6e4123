/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * daemon.h - viacamd's configuration in force and the sessions that serve it: checking a
 * file, applying it, reloading, the state file. viacamd.c adds the command line, the signals
 * and the inotify watch. All functions run in the daemon's event-loop thread.
 */
#ifndef VIACAM_DAEMON_H
#define VIACAM_DAEMON_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "session.h"

/* Cameras that could not be served are tried again after 1 s, 2 s, 4 s ... at most 5 min. */
#define VC_RETRY_MIN_US 1000000ull
#define VC_RETRY_MAX_US 300000000ull

/*
 * A reload applies a file only once it holds still (vc_daemon_reload()): viacamd waits until
 * it has not changed for VC_SETTLE_US, trying VC_SETTLE_TRIES times at most (10 s).
 */
#define VC_SETTLE_US 200000ull
#define VC_SETTLE_TRIES 50

struct vc_daemon {
	sd_event *event;
	int ctl_fd;		/* /dev/viacam */
	char config_path[PATH_MAX];
	const char *state_path;	/* where camera ids are kept for the next start */
	bool check_only;	/* viacamd --check: backends are made to be checked only */
	struct vc_conf *conf;	/* the configuration in force */
	struct vc_session *sessions[VC_MAX_CAMERAS];	/* by index of conf->cams */
	/*
	 * A camera of conf without a session could not be created (the bridge refused it, its
	 * node did not open, its backend failed when tried again): why, by index of conf->cams.
	 * Every reload tries such cameras again, changed or not, and so does retry_timer.
	 */
	char why[VC_MAX_CAMERAS][256];
	sd_event_source *retry_timer;	/* NULL until a camera was not served */
	uint64_t retry_us;	/* the delay of the next try */
	unsigned long reloads, rejected;
	char rejected_why[256];	/* the first problem of the last rejected reload */
	/*
	 * A reload waiting for the file to hold still: settle_timer reads it again every
	 * settle_us (VC_SETTLE_US in viacamd; 0, no wait, in tests of other things). stamp is
	 * the file as a read found it at stamp_at (CLOCK_MONOTONIC, us).
	 */
	uint64_t settle_us;
	sd_event_source *settle_timer;
	bool reloading;
	unsigned int settle_tries;
	bool have_stamp;
	struct vc_file_stamp stamp;
	uint64_t stamp_at;
};

/*
 * The directory of the state file @state_path (absolute), made if missing and opened, when
 * only root or we can write it; its last name in @base (@len bytes). A negative errno with
 * the reason in @why otherwise. The state file and the lock live there.
 */
int vc_state_dir_open(const char *state_path, char *base, size_t len, char *why, size_t wlen);

/*
 * One viacamd per state file: an exclusive flock() on STATE.lock, next to the state file (in
 * a directory vc_state_dir_open() accepts), which holds the pid of its holder. Returns the
 * lock's descriptor (O_CLOEXEC; keep it open), -EBUSY with the holder's pid in @holder when
 * another viacamd has it, another negative errno otherwise; the reason in @why.
 */
int vc_daemon_lock(const char *state_path, pid_t *holder, char *why, size_t wlen);

/* Writes every message of @m to stderr (and says how many were left out). */
void vc_daemon_log_msgs(const struct vc_msgs *m);

/*
 * Loads the file and makes the backends it needs (into @prep, by index of the new conf's
 * cameras; NULL where a running session's backend stays). One pass: the backends of sound
 * sections are made even when the parser found problems, and @msgs gets every problem of
 * both, sorted by line. Returns 0, or -EINVAL (or another negative errno when the file
 * cannot be read); nothing is kept then.
 */
int vc_daemon_check(struct vc_daemon *d, struct vc_conf **ret, struct vc_prepared **prep,
		    struct vc_msgs *msgs);

/*
 * Makes @conf the configuration in force (takes it and @prep's backends). A camera that
 * cannot be created keeps its reason in d->why, and a retry is scheduled (VC_RETRY_MIN_US).
 */
void vc_daemon_apply(struct vc_daemon *d, struct vc_conf *conf, struct vc_prepared **prep);

/* Tries the cameras that are not served again; reschedules itself (doubling) if any is left. */
void vc_daemon_retry(struct vc_daemon *d);

/* How many cameras are served, and the ones that are not with why: for the log. */
size_t vc_daemon_served(const struct vc_daemon *d);
const char *vc_daemon_summary(const struct vc_daemon *d, char *buf, size_t size);

/*
 * Checks the file again and applies it if it is good; logs what happened. 0 or < 0 when the
 * reload ended (applied, or rejected: the running configuration stays), -EINPROGRESS when it
 * waits for the file to hold still. The file is applied only when it did not change while it
 * was read and its last change (ctime) is settle_us old, or a read settle_us earlier found it
 * the same: an in-place rewrite (O_TRUNC, then writes) is never applied half-written. While
 * it keeps changing it is read again every settle_us; after VC_SETTLE_TRIES reads the reload
 * is rejected. A reload asked for meanwhile (SIGHUP) is the one that waits.
 */
int vc_daemon_reload(struct vc_daemon *d, const char *why);

/* Stops every session; cameras stay in the bridge for the next viacamd. */
void vc_daemon_stop(struct vc_daemon *d);

#endif /* VIACAM_DAEMON_H */
