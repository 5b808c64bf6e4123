// SPDX-License-Identifier: GPL-2.0-only
/*
 * daemon.c - viacamd's configuration in force and its sessions (see daemon.h).
 *
 * A reload first checks the whole new file - generic keys, then a fresh backend instance for
 * every section whose backend, offer or control defaults changed or whose camera is not
 * served - and only then applies it; a file with any problem changes nothing and every
 * problem is logged as FILE:LINE: reason, in one list sorted by line.
 *
 * A camera the bridge does not create (no room, no permission, a node that does not open) is
 * not served, and the log names it and says why. It is tried again on every reload, and on a
 * timer after 1 s, 2 s, 4 s ... (VC_RETRY_MIN_US to VC_RETRY_MAX_US).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <linux/viacam.h>

#include "daemon.h"
#include "log.h"
#include "statefile.h"

/* ---------------------------------------------------------------------------
 * The state file (its format and reader: lib/statefile.h), read by viacamctl too.
 */

static uint32_t state_lookup(const struct vc_daemon *d, const char *name)
{
	static struct vc_state st;	/* 40 KB: not on the stack */
	uint32_t id;

	if (vc_state_read(d->state_path, &st) < 0 || vc_state_id_of(&st, name, &id) < 0)
		return VIACAM_ID_AUTO;
	return id;
}

static const char *file_kind(mode_t mode)
{
	return S_ISLNK(mode) ? "a symbolic link" : S_ISDIR(mode) ? "a directory" :
	       S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device" :
	       S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a file";
}

int vc_state_dir_open(const char *state_path, char *base, size_t len, char *why, size_t wlen)
{
	const char *slash = strrchr(state_path, '/');
	char dir[PATH_MAX];
	struct stat st;
	int fd, r;

	if (!slash || !slash[1] || (size_t)(slash - state_path) >= sizeof(dir) ||
	    strlen(slash + 1) >= len) {
		snprintf(why, wlen, "not an absolute path of a file");
		return -EINVAL;
	}
	memcpy(dir, state_path, (size_t)(slash - state_path));
	dir[slash - state_path] = 0;
	if (!dir[0])
		strcpy(dir, "/");
	strcpy(base, slash + 1);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(why, wlen, "cannot make its directory '%s': %s", dir, strerror(-r));
		return r;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(why, wlen, "its directory '%s': %s", dir, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(why, wlen, "its directory '%s': %s", dir, strerror(-r));
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		r = -EPERM;
		snprintf(why, wlen, "its directory '%s' belongs to uid %u", dir, (unsigned)st.st_uid);
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		r = -EPERM;
		snprintf(why, wlen, "its directory '%s' is writable by others (mode %04o)", dir,
			 (unsigned)(st.st_mode & 07777));
	} else {
		return fd;
	}
	close(fd);
	return r;
}

int vc_daemon_lock(const char *state_path, pid_t *holder, char *why, size_t wlen)
{
	char base[NAME_MAX + 1], name[NAME_MAX + 8], buf[32];
	struct stat st;
	int dfd, fd, r;
	ssize_t n;

	*holder = 0;
	dfd = vc_state_dir_open(state_path, base, sizeof(base), why, wlen);
	if (dfd < 0)
		return dfd;
	snprintf(name, sizeof(name), "%s.lock", base);
	/* O_NONBLOCK: a FIFO planted there must not block; it is refused right after. */
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
		    0644);
	r = fd < 0 ? -errno : 0;
	close(dfd);
	if (r < 0) {
		snprintf(why, wlen, "'%s.lock': %s", state_path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(why, wlen, "'%s.lock': %s", state_path, strerror(-r));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		snprintf(why, wlen, "'%s.lock' is %s, not a regular file", state_path,
			 file_kind(st.st_mode));
		goto fail;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		if (r == -EBUSY)
			*holder = (pid_t)atoi(buf);
		snprintf(why, wlen, "'%s.lock': %s", state_path, strerror(-r));
		goto fail;
	}
	/* Who holds it, for the message of the next one that tries. */
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		vc_warn("cannot write the pid into '%s.lock', ignoring: %s", state_path,
			strerror(errno));
	return fd;
fail:
	close(fd);
	return r;
}

/* A new file for @base's next version in @dfd, its name in @tmp: O_EXCL, never a link. */
static int state_temp(int dfd, const char *base, char *tmp, size_t len)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[6];

	for (int tries = 0; tries < 100; tries++) {
		int fd;

		if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
			for (size_t i = 0; i < sizeof(rnd); i++)
				rnd[i] = (unsigned char)(random() >> 8);
		snprintf(tmp, len, ".%s.%c%c%c%c%c%c", base, chars[rnd[0] % 36], chars[rnd[1] % 36],
			 chars[rnd[2] % 36], chars[rnd[3] % 36], chars[rnd[4] % 36],
			 chars[rnd[5] % 36]);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

static void state_save(struct vc_daemon *d, bool running)
{
	char base[NAME_MAX + 1], tmp[NAME_MAX + 16], why[PATH_MAX + 128];
	int dfd, fd, r;
	struct stat st;
	FILE *f;

	/*
	 * Root writes it: only in a directory that root (or we) alone can write, through a new
	 * file (O_EXCL, O_NOFOLLOW) renamed over the old one, never over what is not a regular
	 * file. A symlink planted in a directory others could write made root overwrite the file
	 * it named; a --state naming a device node replaced the node.
	 */
	dfd = vc_state_dir_open(d->state_path, base, sizeof(base), why, sizeof(why));
	if (dfd < 0)
		goto fail;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(why, sizeof(why), "it is %s, not a regular file; not replacing it",
			 file_kind(st.st_mode));
		goto fail_dir;
	}
	fd = state_temp(dfd, base, tmp, sizeof(tmp));
	if (fd < 0) {
		snprintf(why, sizeof(why), "cannot make a new file next to it: %s", strerror(-fd));
		goto fail_dir;
	}
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		goto fail_tmp;
	}
	if (running)
		fprintf(f, "pid %d\n", (int)getpid());
	fprintf(f, "reloads %lu %lu\n", d->reloads, d->rejected);
	if (d->rejected_why[0])
		fprintf(f, "rejected-because %s\n", d->rejected_why);
	for (size_t i = 0; d->conf && i < d->conf->ncams; i++)
		if (d->sessions[i])
			fprintf(f, "camera %s %u %s\n", d->conf->cams[i].name,
				vc_session_camera_id(d->sessions[i]),
				vc_session_backend_name(d->sessions[i]));
	r = fflush(f) != 0 || fsync(fileno(f)) < 0 ? -errno : 0;
	if (fclose(f) != 0 && !r)
		r = -errno;
	if (!r && renameat(dfd, tmp, dfd, base) < 0)
		r = -errno;
	if (r < 0)
		goto fail_tmp;
	fsync(dfd);	/* the rename itself, where that means something (not on /run's tmpfs) */
	close(dfd);
	return;
fail_tmp:
	snprintf(why, sizeof(why), "%s", strerror(-r));
	unlinkat(dfd, tmp, 0);
fail_dir:
	close(dfd);
fail:
	vc_warn("cannot write the state file '%s', ignoring: %s (a restarted viacamd adopts cameras by label)",
		d->state_path, why);
}

/* The id of a camera to adopt for @cc: from the state file, else by label. */
static uint32_t find_camera(struct vc_daemon *d, const struct vc_cam_conf *cc)
{
	struct viacam_list list = { 0 };
	struct viacam_camera c = { .id = state_lookup(d, cc->name) };

	if (c.id != VIACAM_ID_AUTO && ioctl(d->ctl_fd, VIACAM_IOC_QUERY, &c) == 0)
		return c.id;
	if (ioctl(d->ctl_fd, VIACAM_IOC_LIST, &list) < 0)
		return VIACAM_ID_AUTO;
	for (uint32_t i = 0; i < list.count && i < VIACAM_MAX_CAMERAS; i++) {
		memset(&c, 0, sizeof(c));
		c.id = list.ids[i];
		if (ioctl(d->ctl_fd, VIACAM_IOC_QUERY, &c) == 0 &&
		    strncmp(c.label, cc->label, sizeof(c.label)) == 0)
			return c.id;
	}
	return VIACAM_ID_AUTO;
}

/* ---------------------------------------------------------------------------
 * Checking and applying a configuration
 */

void vc_daemon_log_msgs(const struct vc_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		fprintf(stderr, "%s%s\n", vc_log_prio(LOG_ERR), m->v[i]);
	if (m->dropped)
		fprintf(stderr, "%s(%zu more problems not shown)\n", vc_log_prio(LOG_ERR), m->dropped);
}

/* Whether @cc's camera runs with the same backend instance settings already. */
static bool running_unchanged(const struct vc_daemon *d, const struct vc_cam_conf *cc)
{
	for (size_t k = 0; d->conf && k < d->conf->ncams; k++) {
		const struct vc_cam_conf *old = &d->conf->cams[k];

		if (strcmp(old->name, cc->name) == 0)
			return d->sessions[k] && vc_cam_same_backend(old, cc) &&
			       vc_cam_same_ctrls(old, cc);
	}
	return false;
}

/* vc_daemon_check() after the parser: @conf (taken) is what it made of the file, @r its result. */
static int check_backends(struct vc_daemon *d, struct vc_conf *conf, int r, struct vc_conf **ret,
			  struct vc_prepared **prep, struct vc_msgs *msgs)
{
	*ret = NULL;
	if (!conf) {		/* the file could not be read */
		vc_msgs_sort(msgs);
		return r;
	}
	/*
	 * The backends too when the parser found problems: one pass reports everything, or
	 * fixing one list of errors would reveal the next. Sections with a bad or unknown
	 * backend name were reported by the parser.
	 */
	for (size_t i = 0; i < conf->ncams; i++) {
		struct vc_cam_conf *cc = &conf->cams[i];
		size_t before = msgs->n;
		int pr;

		prep[i] = NULL;
		cc->absent[0] = 0;
		if (!vc_backend_find(cc->backend) || running_unchanged(d, cc))
			continue;
		pr = vc_prepare(cc, d->config_path, d->check_only, &prep[i], msgs);
		if (pr < 0 && cc->optional && (pr == -ENODEV || pr == -ENOENT)) {
			/* Not an error: the reason, without "FILE:LINE: camera NAME: ". */
			const char *m = msgs->n > before ? msgs->v[before] : strerror(-pr);
			char tag[VC_NAME_LEN + 16];
			const char *at;

			snprintf(tag, sizeof(tag), ": camera %s: ", cc->name);
			at = strstr(m, tag);
			snprintf(cc->absent, sizeof(cc->absent), "%s", at ? at + strlen(tag) : m);
			vc_msgs_truncate(msgs, before);
		} else if (pr < 0) {
			r = -EINVAL;
		}
	}
	vc_msgs_sort(msgs);
	if (r < 0) {
		for (size_t i = 0; i < conf->ncams; i++) {
			vc_prepared_free(prep[i]);
			prep[i] = NULL;
		}
		vc_conf_free(conf);
	} else {
		*ret = conf;
	}
	return r;
}

int vc_daemon_check(struct vc_daemon *d, struct vc_conf **ret, struct vc_prepared **prep,
		    struct vc_msgs *msgs)
{
	struct vc_conf *conf;
	int r = vc_conf_parse(d->config_path, &conf, msgs);

	return check_backends(d, conf, r, ret, prep, msgs);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	vc_daemon_retry(userdata);
	return 0;
}

/* Tries the cameras that are not served again in @delay_us (or never: @delay_us 0). */
static void schedule_retry(struct vc_daemon *d, uint64_t delay_us)
{
	uint64_t now;
	int r;

	d->retry_us = delay_us;
	if (!delay_us || !d->event) {
		if (d->retry_timer)
			sd_event_source_set_enabled(d->retry_timer, SD_EVENT_OFF);
		return;
	}
	r = sd_event_now(d->event, CLOCK_MONOTONIC, &now);
	if (r >= 0 && !d->retry_timer)
		r = sd_event_add_time(d->event, &d->retry_timer, CLOCK_MONOTONIC, now + delay_us,
				      0, on_retry, d);
	else if (r >= 0)
		r = sd_event_source_set_time(d->retry_timer, now + delay_us);
	if (r >= 0)
		r = sd_event_source_set_enabled(d->retry_timer, SD_EVENT_ONESHOT);
	if (r < 0) {
		vc_warn("cannot schedule a retry: %s (a reload tries again)", strerror(-r));
		d->retry_us = 0;
	}
}

size_t vc_daemon_served(const struct vc_daemon *d)
{
	size_t n = 0;

	for (size_t i = 0; d->conf && i < d->conf->ncams; i++)
		n += d->sessions[i] != NULL;
	return n;
}

const char *vc_daemon_summary(const struct vc_daemon *d, char *buf, size_t size)
{
	size_t ncams = d->conf ? d->conf->ncams : 0, served = vc_daemon_served(d), len;
	const char *sep = "";

	if (served == ncams) {
		snprintf(buf, size, "%zu cameras", ncams);
		return buf;
	}
	snprintf(buf, size, "%zu of %zu cameras served; not served: ", served, ncams);
	for (size_t i = 0; i < ncams; i++) {
		if (d->sessions[i])
			continue;
		len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s (%s%s)", sep, d->conf->cams[i].name,
			 d->conf->cams[i].absent[0] ? "optional, absent: " : "",
			 d->why[i][0] ? d->why[i] : "not created");
		sep = ", ";
	}
	len = strlen(buf);
	if (d->retry_us)
		snprintf(buf + len, size - len, "; next try in %llu s",
			 (unsigned long long)(d->retry_us / 1000000));
	return buf;
}

/* Cameras not served that the timer tries again: all but the optional ones that are absent. */
static size_t to_retry(const struct vc_daemon *d)
{
	size_t n = 0;

	for (size_t i = 0; d->conf && i < d->conf->ncams; i++)
		n += !d->sessions[i] && !d->conf->cams[i].absent[0];
	return n;
}

/* Creates the session of camera @i of d->conf from @p (taken); its reason if it fails. */
static struct vc_session *serve(struct vc_daemon *d, size_t i, struct vc_prepared *p)
{
	const struct vc_cam_conf *cc = &d->conf->cams[i];
	struct vc_error err = { 0 };
	struct vc_session *s = NULL;
	int r;

	r = vc_session_new(d->event, d->ctl_fd, cc, p, find_camera(d, cc), &s, &err);
	if (r < 0)
		snprintf(d->why[i], sizeof(d->why[i]), "%s", err.msg[0] ? err.msg : strerror(-r));
	else
		d->why[i][0] = 0;
	return s;
}

/*
 * Says which camera a reload removes (@why: "section removed", ...), and what its applications
 * get: from REMOVE on every call on their handles fails with ENODEV and a blocked DQBUF or
 * read() wakes with it (docs/uapi.md); a warning when one streams it or has it open.
 */
static void log_removal(struct vc_session *s, const char *name, const char *why)
{
	unsigned int open = vc_session_open_count(s);
	char what[256];

	vc_session_describe(s, what, sizeof(what));
	if (vc_session_streaming(s))
		vc_warn("camera %s: %s while an application streams it: removing %s; its consumers get ENODEV on every call from now on (a blocked DQBUF wakes with it) and must close the node",
			name, why, what);
	else if (open)
		vc_warn("camera %s: %s: removing %s, which %u application%s open: %s ENODEV on every call from now on",
			name, why, what, open, open == 1 ? " has" : "s have",
			open == 1 ? "it gets" : "they get");
	else
		vc_log("camera %s: %s: removing %s", name, why, what);
}

void vc_daemon_apply(struct vc_daemon *d, struct vc_conf *conf, struct vc_prepared **prep)
{
	struct vc_session *old[VC_MAX_CAMERAS];
	struct vc_conf *old_conf = d->conf;

	/* Sections that went away: their cameras go (consumers get ENODEV), streaming or not. */
	for (size_t i = 0; old_conf && i < old_conf->ncams; i++) {
		if (d->sessions[i] && !vc_conf_camera(conf, old_conf->cams[i].name)) {
			log_removal(d->sessions[i], old_conf->cams[i].name, "section removed");
			vc_session_free(d->sessions[i], true);
			d->sessions[i] = NULL;
		}
	}
	memcpy(old, d->sessions, sizeof(old));
	memset(d->sessions, 0, sizeof(d->sessions));
	memset(d->why, 0, sizeof(d->why));
	d->conf = conf;
	for (size_t i = 0; i < conf->ncams; i++) {
		const struct vc_cam_conf *cc = &conf->cams[i];
		struct vc_session *s = NULL;

		for (size_t k = 0; old_conf && k < old_conf->ncams; k++) {
			if (old[k] && strcmp(old_conf->cams[k].name, cc->name) == 0) {
				s = old[k];
				old[k] = NULL;
			}
		}
		if (s && cc->absent[0]) {
			/* Its changed section names a source that is not there: the camera goes. */
			char why[sizeof(cc->absent) + 32];

			snprintf(why, sizeof(why), "its source is absent (%s)", cc->absent);
			log_removal(s, cc->name, why);
			vc_session_free(s, true);
			s = NULL;
		}
		if (cc->absent[0]) {
			snprintf(d->why[i], sizeof(d->why[i]), "%s", cc->absent);
		} else if (s) {
			vc_session_update(s, cc, prep[i]);
		} else if (prep[i]) {
			s = serve(d, i, prep[i]);
			if (!s)
				vc_warn("camera %s: not served: %s", cc->name, d->why[i]);
		}
		prep[i] = NULL;
		d->sessions[i] = s;
	}
	vc_conf_free(old_conf);
	/* A new or changed configuration: its unserved cameras start the backoff again. */
	schedule_retry(d, to_retry(d) ? VC_RETRY_MIN_US : 0);
	state_save(d, true);
}

void vc_daemon_retry(struct vc_daemon *d)
{
	uint64_t next = d->retry_us * 2 < VC_RETRY_MAX_US ? d->retry_us * 2 : VC_RETRY_MAX_US;
	size_t tried = 0;
	char summary[4096];

	for (size_t i = 0; d->conf && i < d->conf->ncams; i++) {
		const struct vc_cam_conf *cc = &d->conf->cams[i];
		struct vc_msgs msgs = { 0 };
		struct vc_prepared *p;

		if (d->sessions[i] || cc->absent[0])
			continue;
		if (!tried++)
			vc_log("trying again the cameras not served");
		/* A fresh backend instance: the one of the failed attempt went with it. */
		if (vc_prepare(cc, d->config_path, false, &p, &msgs) < 0) {
			vc_daemon_log_msgs(&msgs);
			snprintf(d->why[i], sizeof(d->why[i]), "%s",
				 msgs.n ? msgs.v[0] : "its backend failed");
			vc_msgs_free(&msgs);
			continue;
		}
		d->sessions[i] = serve(d, i, p);
	}
	if (!tried)
		return;
	schedule_retry(d, to_retry(d) ? (next ? next : VC_RETRY_MIN_US) : 0);
	state_save(d, true);
	vc_log("after trying again: %s", vc_daemon_summary(d, summary, sizeof(summary)));
}

static uint64_t now_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Whether the file as read (@conf, parser result @r) holds still: it did not change while it
 * was read, and either its last change (ctime) is settle_us old, or a read settle_us ago or
 * more found it the same (the clock-independent way: a clock set back makes a ctime look
 * recent). If not, @how says when it changed.
 */
static bool holds_still(struct vc_daemon *d, int r, const struct vc_conf *conf, char *how,
			size_t len)
{
	uint64_t mono = now_us(CLOCK_MONOTONIC), real = now_us(CLOCK_REALTIME), changed;

	if (r == -EAGAIN) {
		snprintf(how, len, "while it was read");
		return false;
	}
	if (!conf || !d->settle_us)
		return true;	/* unreadable: rejected at once */
	changed = (uint64_t)conf->stamp.ctime.tv_sec * 1000000 +
		  (uint64_t)conf->stamp.ctime.tv_nsec / 1000;
	if (changed <= real && real - changed >= d->settle_us)
		return true;
	if (d->have_stamp && vc_file_stamp_equal(&d->stamp, &conf->stamp)) {
		if (mono - d->stamp_at >= d->settle_us)
			return true;
	} else {
		d->stamp = conf->stamp;
		d->stamp_at = mono;
		d->have_stamp = true;
	}
	if (changed <= real)
		snprintf(how, len, "%llu ms ago", (unsigned long long)(real - changed) / 1000);
	else
		snprintf(how, len, "at a time ahead of the clock");
	return false;
}

static int reload_try(struct vc_daemon *d);

static int on_settle(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	reload_try(userdata);
	return 0;
}

/* Reads the file again in settle_us (10 ms when 0: it changed while it was read). */
static int schedule_settle(struct vc_daemon *d)
{
	uint64_t delay = d->settle_us ? d->settle_us : 10000, when;
	int r;

	if (!d->event)
		return -ENXIO;
	when = now_us(CLOCK_MONOTONIC) + delay;
	if (!d->settle_timer)
		r = sd_event_add_time(d->event, &d->settle_timer, CLOCK_MONOTONIC, when,
				      delay / 10, on_settle, d);
	else
		r = sd_event_source_set_time(d->settle_timer, when);
	if (r >= 0)
		r = sd_event_source_set_enabled(d->settle_timer, SD_EVENT_ONESHOT);
	return r;
}

int vc_daemon_reload(struct vc_daemon *d, const char *why)
{
	if (d->reloading)
		return -EINPROGRESS;	/* the waiting reload reads the file as it is by then */
	d->reloading = true;
	d->settle_tries = 0;
	d->have_stamp = false;
	sd_notify(0, "RELOADING=1");
	vc_log("reloading %s (%s)", d->config_path, why);
	return reload_try(d);
}

static int reload_try(struct vc_daemon *d)
{
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_msgs msgs = { 0 };
	struct vc_conf *conf;
	char summary[4096], how[64];
	int r;

	r = vc_conf_parse(d->config_path, &conf, &msgs);
	if (!holds_still(d, r, conf, how, sizeof(how))) {
		vc_conf_free(conf);
		vc_msgs_free(&msgs);
		conf = NULL;
		if (++d->settle_tries < VC_SETTLE_TRIES && (r = schedule_settle(d)) >= 0) {
			if (d->settle_tries == 1)
				vc_log("%s is being written (it changed %s); reading it again once it has not changed for %llu ms",
				       d->config_path, how,
				       (unsigned long long)(d->settle_us ? d->settle_us : 10000) / 1000);
			return -EINPROGRESS;
		}
		if (r >= 0)
			vc_msgs_add(&msgs, "%s: cannot read: it kept changing for %llu s (%u reads; the last change %s); not applied",
				    d->config_path,
				    (unsigned long long)(now_us(CLOCK_MONOTONIC) - d->stamp_at) / 1000000 + 1,
				    d->settle_tries, how);
		else
			vc_msgs_add(&msgs, "%s: cannot read: it is being written, and waiting failed: %s",
				    d->config_path, strerror(-r));
		r = -EAGAIN;
	}
	r = check_backends(d, conf, r, &conf, prep, &msgs);
	vc_daemon_log_msgs(&msgs);
	if (r < 0) {
		d->rejected++;
		/* One line in the state file: control characters of a message become spaces. */
		snprintf(d->rejected_why, sizeof(d->rejected_why), "%s",
			 msgs.n ? msgs.v[0] : strerror(-r));
		for (char *c = d->rejected_why; *c; c++)
			if ((unsigned char)*c < 0x20)
				*c = ' ';
		vc_warn("%s is invalid; the running configuration stays (%zu cameras)",
		       d->config_path, d->conf ? d->conf->ncams : 0);
		state_save(d, true);
	} else {
		d->reloads++;	/* before: vc_daemon_apply() writes the state file */
		vc_daemon_apply(d, conf, prep);
		vc_log("configuration applied: %s", vc_daemon_summary(d, summary, sizeof(summary)));
	}
	vc_msgs_free(&msgs);
	d->reloading = false;
	sd_notifyf(0, "READY=1\nSTATUS=%zu of %zu cameras served; %lu reloads, %lu rejected",
		   vc_daemon_served(d), d->conf ? d->conf->ncams : 0, d->reloads, d->rejected);
	return r;
}

void vc_daemon_stop(struct vc_daemon *d)
{
	/* Detach: sources stop, cameras stay (a restarted viacamd adopts them). */
	state_save(d, false);
	for (size_t i = 0; d->conf && i < d->conf->ncams; i++) {
		vc_session_free(d->sessions[i], false);
		d->sessions[i] = NULL;
	}
	vc_conf_free(d->conf);
	d->conf = NULL;
	d->retry_timer = sd_event_source_disable_unref(d->retry_timer);
	d->retry_us = 0;
	d->settle_timer = sd_event_source_disable_unref(d->settle_timer);
	d->reloading = false;
}
