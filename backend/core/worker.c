// SPDX-License-Identifier: GPL-2.0-only
/*
 * worker.c - a backend in a sandboxed worker process (worker.h), both sides.
 *
 * READ THIS FIRST. The core keeps what needs a privilege (the bridge's nodes, the VIA
 * hardware); a backend that parses media or talks to a network runs in a process of its own
 * per camera, made by re-executing viacamd ("viacamd --worker", vc_worker_exe) with one end
 * of a SOCK_SEQPACKET socketpair on fd 3 and every other fd closed. The worker sandboxes
 * itself (sandbox.c) before it makes the instance, so nothing the config names is opened
 * with privileges. The core's side is an ordinary backend (the proxy ops): the session never
 * knows.
 *
 * Messages (struct wmsg, one per packet, in order): core -> worker CREATE (the backend's
 * name and its conf, packed), START (mode, generation, the ring's memfd), STOP, SET_CTRL,
 * PING, FREE (a slot is the worker's again); worker -> core CREATED (result, modes,
 * controls), STARTED (result), FRAME (slot, bytes, capture time, note), NOTE, PONG.
 * Everything the worker says is checked: slot numbers, sizes, counts, strings. A worker
 * that breaks the protocol is killed like one that crashed.
 *
 * Frames: a memfd ring of WORKER_SLOTS frames, made by the core at each start, its size
 * sealed (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) so the worker cannot make the core's
 * mapping fault. The worker makes a frame in a free slot (the backend's produce() writes
 * there as it wrote into the session's buffer) and sends FRAME; the core's produce() copies
 * the slot into the session's buffer (a consumer's lent capture buffer where the bridge lends
 * one) and sends FREE. So a frame costs the backend's own copy into the slot plus one copy in
 * the core; a frame that the backend made with a copy before (every gst sample) is copied
 * once more. Each start has a generation: FRAMEs of an earlier run are dropped.
 *
 * Pacing: a backend with a clock_fd is polled by the worker; one without (file) is paced by
 * a timerfd in the worker at the mode's interval. The core's clock_fd is an epoll fd over the
 * socket, the restart timer and the heartbeat timer.
 *
 * Failure: a worker that exits, is killed (a crash, SIGSYS from the seccomp filter), breaks
 * the protocol, or does not answer a PING within vc_worker_hang_ms (then SIGKILLed) is
 * reaped (or, if it does not die within 100 ms, left to reap later: the loop never waits for
 * a process stuck in a driver), reported once through the frame's note (the session logs it with the camera's name) and
 * made again after 0.5 s, 1 s, 2 s ... 8 s (reset once a worker lived WORKER_STABLE_MS); it
 * is then given the same CREATE and, while streaming, a START. Meanwhile produce() says
 * -EAGAIN and the bridge repeats the last frame (or a neutral one), as for any backend that
 * stalls.
 *
 * Threads: none of its own on the core's side; every op runs in the event loop (backend.h).
 * create() and start() wait for the worker's answer (at most WORKER_CREATE_MS and
 * vc_worker_hang_ms); the rest never waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "gst-source.h"
#include "sandbox.h"
#include "text.h"
#include "worker.h"

#define WORKER_SLOTS 3
#define WORKER_CREATE_MS 10000	/* a worker's GStreamer start and the backend's create */
#define WORKER_PING_MS 500
#define WORKER_STABLE_MS 10000
#define BACKOFF_FIRST_MS 500
#define BACKOFF_MAX_MS 8000
#define CREATE_MAX (256 * 1024)	/* a packed conf: keys are at most a config line each */

const char *vc_worker_exe;
unsigned int vc_worker_hang_ms = 3000;

enum {
	W_CREATE = 1, W_START, W_STOP, W_SET_CTRL, W_PING, W_FREE,
	W_CREATED = 100, W_STARTED, W_FRAME, W_NOTE, W_PONG,
};

/* Every packet but CREATE (packed conf) and CREATED (struct wcreated). */
struct wmsg {
	uint32_t type;
	int32_t rc;
	uint32_t slot;
	uint32_t gen;
	uint64_t a;		/* FRAME: bytesused; SET_CTRL: id; PING/PONG: sequence */
	uint64_t b;		/* FRAME: capture_ns; SET_CTRL: value; START: slot size */
	uint64_t c;		/* FRAME: when the worker sent it (CLOCK_MONOTONIC ns) */
	struct vc_mode mode;	/* START */
	struct vc_error err;	/* CREATED, STARTED */
	char note[256];		/* FRAME, NOTE */
};

struct wcreated {
	struct wmsg m;
	struct vc_modes modes;
	int32_t nctrls;
	struct viacam_ctrl ctrls[VC_MAX_CTRLS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sends @len bytes of @m, with @fd (if >= 0) as SCM_RIGHTS. */
static int send_msg(int sock, const void *m, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		return -errno ? -errno : -EIO;
	return 0;
}

/* Receives one packet into @buf; *@fd gets a passed fd (or -1). Returns its length, 0 at
 * EOF, -EAGAIN when none is queued, another negative errno on error. */
static ssize_t recv_msg(int sock, void *buf, size_t len, int *fd, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);

	if (fd)
		*fd = -1;
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int f;

			memcpy(&f, CMSG_DATA(c), sizeof(int));
			if (fd && *fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EMSGSIZE;
	return n;
}

/* ---------------------------------------------------------------------------
 * The packed conf: CREATE
 */
struct pack {
	uint8_t *p;
	size_t len, cap;
	bool bad;
};

static void put(struct pack *k, const void *d, size_t n)
{
	if (k->bad || n > k->cap - k->len) {
		k->bad = true;
		return;
	}
	memcpy(k->p + k->len, d, n);
	k->len += n;
}

static void put_u32(struct pack *k, uint32_t v)
{
	put(k, &v, sizeof(v));
}

static void put_str(struct pack *k, const char *s)
{
	size_t n = strlen(s);

	put_u32(k, (uint32_t)n);
	put(k, s, n + 1);
}

static const void *get(struct pack *k, size_t n)
{
	const void *d = k->p + k->len;

	if (k->bad || n > k->cap - k->len) {
		k->bad = true;
		return NULL;
	}
	k->len += n;
	return d;
}

static uint32_t get_u32(struct pack *k)
{
	const void *d = get(k, sizeof(uint32_t));
	uint32_t v = 0;

	if (d)
		memcpy(&v, d, sizeof(v));
	return v;
}

static const char *get_str(struct pack *k)
{
	uint32_t n = get_u32(k);
	const char *s = n < CREATE_MAX ? get(k, (size_t)n + 1) : NULL;

	if (!s || s[n] || strlen(s) != n) {
		k->bad = true;
		return "";
	}
	return s;
}

static int pack_conf(struct pack *k, const char *backend, const struct vc_backend_conf *c)
{
	k->cap = CREATE_MAX;
	k->p = malloc(k->cap);
	if (!k->p)
		return -ENOMEM;
	put_u32(k, W_CREATE);
	put_str(k, backend);
	put_str(k, c->camera ? c->camera : "");
	put_u32(k, c->check_only);
	put_u32(k, (uint32_t)c->nkeys);
	for (size_t i = 0; i < c->nkeys; i++) {
		put_u32(k, (uint32_t)c->keys[i].line);
		put_str(k, c->keys[i].key);
		put_str(k, c->keys[i].value);
	}
	put_u32(k, (uint32_t)c->nformats);
	put(k, c->formats, c->nformats * sizeof(uint32_t));
	put_u32(k, (uint32_t)c->nsizes);
	put(k, c->sizes, c->nsizes * 2 * sizeof(uint32_t));
	put_u32(k, (uint32_t)c->nintervals);
	put(k, c->intervals, c->nintervals * 2 * sizeof(uint32_t));
	put_u32(k, (uint32_t)c->formats_line);
	put_u32(k, (uint32_t)c->sizes_line);
	put_u32(k, (uint32_t)c->rates_line);
	return k->bad ? -E2BIG : 0;
}

/* The worker's side: @k over the received bytes; pointers into them. */
struct unpacked {
	const char *backend;
	struct vc_backend_conf c;
	struct vc_kv *keys;
};

static int unpack_conf(struct pack *k, struct unpacked *u)
{
	uint32_t n;

	memset(u, 0, sizeof(*u));
	if (get_u32(k) != W_CREATE)
		return -EPROTO;
	u->backend = get_str(k);
	u->c.camera = get_str(k);
	u->c.check_only = get_u32(k) != 0;
	n = get_u32(k);
	if (n > 4096)
		return -EPROTO;
	u->keys = calloc(n ? n : 1, sizeof(*u->keys));
	if (!u->keys)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		u->keys[i].line = (int)get_u32(k);
		u->keys[i].key = (char *)get_str(k);
		u->keys[i].value = (char *)get_str(k);
	}
	u->c.keys = u->keys;
	u->c.nkeys = n;
	u->c.nformats = get_u32(k);
	u->c.formats = u->c.nformats < 4096 ? get(k, u->c.nformats * sizeof(uint32_t)) : NULL;
	u->c.nsizes = get_u32(k);
	u->c.sizes = u->c.nsizes < 4096 ? get(k, u->c.nsizes * 2 * sizeof(uint32_t)) : NULL;
	u->c.nintervals = get_u32(k);
	u->c.intervals = u->c.nintervals < 4096 ?
			 get(k, u->c.nintervals * 2 * sizeof(uint32_t)) : NULL;
	u->c.formats_line = (int)get_u32(k);
	u->c.sizes_line = (int)get_u32(k);
	u->c.rates_line = (int)get_u32(k);
	if (k->bad || (u->c.nformats && !u->c.formats) || (u->c.nsizes && !u->c.sizes) ||
	    (u->c.nintervals && !u->c.intervals))
		return -EPROTO;
	return 0;
}

/* ---------------------------------------------------------------------------
 * The core's side: the proxy ops
 */
struct proxy {
	const struct vc_backend_ops *real;
	struct vc_backend_ops ops;
};

/* Filled once per backend at the first vc_worker_proxy() (the event loop's thread only). */
static struct proxy proxies[8];

struct winst {
	const struct vc_backend_ops *real;
	struct pack conf;	/* CREATE, kept for restarts */
	pid_t pid;
	int sock;
	int epfd;		/* clock_fd(): sock, rtfd, hbfd */
	int rtfd;		/* restart after the backoff */
	int hbfd;		/* heartbeat */
	uint64_t born_ns;	/* when the current worker was made */
	unsigned int backoff_ms;
	bool dead;		/* no worker: a restart is due (rtfd) */
	bool created;		/* the current worker answered CREATED with success */
	bool gone;		/* the backend said -ENODEV: the session hears it once */
	char pending[256];	/* a report made outside produce(), for the next produce() */
	/* the heartbeat: a PING without PONG since ping_ns */
	bool ping_out;
	uint64_t ping_ns, ping_seq;
	/* streaming */
	bool started;
	struct vc_mode mode;
	uint32_t gen;
	int memfd;
	uint8_t *ring;
	size_t slot_size;
	bool core_has[WORKER_SLOTS];	/* the core holds this slot (FRAME seen, no FREE sent) */
	/* what create() learnt */
	struct vc_modes modes;
	int nctrls;
	struct viacam_ctrl ctrls[VC_MAX_CTRLS];
	/* a pipewire backend's remote socket, and its owner when the current worker was made */
	char remote[256];
	uid_t remote_uid;
	/* counters, for the bench and tests */
	uint64_t frames, restarts;
	uint64_t lat_sum_ns, lat_n, lat_max_ns, lat_last_ns;	/* FRAME sent -> copied out */
};

static void set_timer(int tfd, unsigned int ms, unsigned int interval_ms)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 },
		.it_interval = { .tv_sec = interval_ms / 1000,
				 .tv_nsec = (long)(interval_ms % 1000) * 1000000 },
	};

	timerfd_settime(tfd, 0, &its, NULL);
}

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

/*
 * Killed workers not reaped yet: a process in an uninterruptible sleep (a driver's ioctl)
 * dies only when it leaves it, and the event loop must not wait for that. Event loop only.
 */
static pid_t orphans[64];
static size_t norphans;

static void reap_orphans(void)
{
	for (size_t i = 0; i < norphans;) {
		if (waitpid(orphans[i], NULL, WNOHANG) != 0)	/* reaped, or not ours (ECHILD) */
			orphans[i] = orphans[--norphans];
		else
			i++;
	}
}

/* SIGKILLs @pid and reaps it if it dies within 100 ms (its status in *@status): true. */
static bool kill_reap(pid_t pid, int *status)
{
	kill(pid, SIGKILL);
	for (int i = 0; i < 100; i++) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return r == pid;
		usleep(1000);
	}
	if (norphans < sizeof(orphans) / sizeof(orphans[0]))
		orphans[norphans++] = pid;
	return false;
}

/* Forks and executes the worker; the instance's sock and pid. */
/*
 * The user a worker for the PipeWire socket @path runs as: the socket's owner (root's viacamd
 * reaches a desktop user's PipeWire; its directory is 0700), or (uid_t)-1 (the workers' own
 * user) while there is no such socket or root owns it. Never root.
 */
static uid_t socket_owner(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid != 0)
		return st.st_uid;
	return (uid_t)-1;
}

static int spawn(struct winst *w)
{
	int sv[2];
	pid_t pid;

	if (!vc_worker_exe)
		return -ENOSYS;
	reap_orphans();
	if (w->remote[0])	/* what the worker will find (sandbox_for) */
		w->remote_uid = socket_owner(w->remote);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	if (pid == 0) {
		/* The child of a process that may have threads: only async-signal-safe calls. */
		static char *const argv_tmpl[] = { (char *)"viacamd-worker", (char *)VC_WORKER_ARG,
						   NULL };
		sigset_t none;
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);	/* the core blocks its signals */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);	/* the core's end is the worker's */
		/* dup2 onto itself keeps FD_CLOEXEC: clear it then */
		if (null >= 0 && (null == 0 ? fcntl(0, F_SETFD, 0) : dup2(null, 0)) < 0)
			_exit(127);
		if ((sv[1] == VC_WORKER_FD ? fcntl(sv[1], F_SETFD, 0) :
		     dup2(sv[1], VC_WORKER_FD)) < 0)
			_exit(127);
		/* every fd but stdin (/dev/null), stdout, stderr (the journal) and the socket */
		if (syscall(__NR_close_range, VC_WORKER_FD + 1, ~0u, 0) < 0) {
			for (int fd = VC_WORKER_FD + 1; fd < 65536; fd++)
				close(fd);
		}
		execv(vc_worker_exe, argv_tmpl);
		_exit(127);
	}
	close(sv[1]);
	w->sock = sv[0];
	w->pid = pid;
	w->born_ns = mono_ns();
	w->ping_out = false;
	w->created = false;
	w->dead = false;
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = w->sock };

		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->sock, &ev) < 0)
			return -errno;
	}
	return send_msg(w->sock, w->conf.p, w->conf.len, -1);
}

/* A sentence about how worker @pid ended, from waitpid's @status. */
static void how_it_ended(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		snprintf(buf, len, "killed by signal %d (%s)%s", sig, strsignal(sig),
			 sig == SIGSYS ? ": a system call its sandbox forbids" : "");
	} else if (WIFEXITED(status)) {
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	} else {
		snprintf(buf, len, "ended");
	}
}

/* The worker is gone or must go: kill, reap, say why in @note, arm the restart. */
static void worker_lost(struct winst *w, const char *why, char *note, size_t nlen)
{
	char how[160] = "";
	int status = 0;
	pid_t pid = w->pid;

	if (w->pid > 0 && kill_reap(w->pid, &status))
		how_it_ended(status, how, sizeof(how));
	if (w->sock >= 0) {
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->sock, NULL);
		close(w->sock);
	}
	w->sock = -1;
	w->pid = -1;
	w->dead = true;
	w->created = false;
	set_timer(w->hbfd, 0, 0);
	if (mono_ns() - w->born_ns >= (uint64_t)WORKER_STABLE_MS * 1000000u)
		w->backoff_ms = BACKOFF_FIRST_MS;
	if (!note) {	/* outside produce(): the next one says it */
		note = w->pending;
		nlen = sizeof(w->pending);
	}
	snprintf(note, nlen, "%s: worker (pid %d) %s%s%s; starting a new one in %u ms",
		 w->real->name, (int)pid, why, how[0] ? ", " : "", how, w->backoff_ms);
	set_timer(w->rtfd, w->backoff_ms, 0);
	w->backoff_ms = w->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : w->backoff_ms * 2;
}

static int send_start(struct winst *w)
{
	struct wmsg m = { .type = W_START, .gen = ++w->gen, .mode = w->mode, .b = w->slot_size };

	for (size_t i = 0; i < WORKER_SLOTS; i++)
		w->core_has[i] = false;
	return send_msg(w->sock, &m, sizeof(m), w->memfd);
}

/* The worker's modes and controls, checked: a worker is not trusted with the bridge. */
static int take_created(struct winst *w, const struct wcreated *c, struct vc_error *err)
{
	if (c->m.rc < 0) {
		if (err) {
			*err = c->m.err;
			err->msg[sizeof(err->msg) - 1] = 0;
		}
		return c->m.rc;
	}
	w->modes.n = 0;
	for (size_t i = 0; i < c->modes.n && i < VC_MAX_MODES; i++) {
		const struct vc_mode *m = &c->modes.v[i];

		if (vc_format_size_ok(m->pixelformat, m->width, m->height) &&
		    vc_interval_ok(m->interval_num, m->interval_den) &&
		    vc_sizeimage(m->pixelformat, m->width, m->height))
			vc_modes_add(&w->modes, m);
	}
	w->nctrls = c->nctrls < 0 ? 0 : c->nctrls > VC_MAX_CTRLS ? VC_MAX_CTRLS : c->nctrls;
	memcpy(w->ctrls, c->ctrls, sizeof(w->ctrls));
	for (int i = 0; i < w->nctrls; i++) {
		w->ctrls[i].name[VIACAM_NAME_LEN - 1] = 0;
		for (size_t k = 0; k < VIACAM_MAX_MENU; k++)
			w->ctrls[i].menu[k][VIACAM_NAME_LEN - 1] = 0;
	}
	w->created = true;
	return 0;
}

/* Waits up to @ms for a packet of @type (others are handled as produce() would not: dropped);
 * returns its length in @buf or a negative errno (-ETIMEDOUT). */
static ssize_t wait_for(struct winst *w, uint32_t type, void *buf, size_t len, unsigned int ms)
{
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000u;

	for (;;) {
		struct pollfd p = { .fd = w->sock, .events = POLLIN };
		uint64_t now = mono_ns();
		ssize_t n;
		int fd;

		if (now >= end)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)((end - now) / 1000000u) + 1) < 0 && errno != EINTR)
			return -errno;
		n = recv_msg(w->sock, buf, len, &fd, MSG_DONTWAIT);
		if (fd >= 0)
			close(fd);
		if (n == -EAGAIN)
			continue;
		if (n <= 0)
			return n ? n : -EPIPE;
		if ((size_t)n >= sizeof(uint32_t) && *(uint32_t *)buf == type)
			return n;
	}
}

static void proxy_free(struct winst *w)
{
	int status;

	if (w->pid > 0)
		kill_reap(w->pid, &status);
	reap_orphans();
	if (w->sock >= 0)
		close(w->sock);
	if (w->ring)
		munmap(w->ring, w->slot_size * WORKER_SLOTS);
	if (w->memfd >= 0)
		close(w->memfd);
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->rtfd >= 0)
		close(w->rtfd);
	if (w->hbfd >= 0)
		close(w->hbfd);
	free(w->conf.p);
	free(w);
}

static int proxy_create_for(const struct vc_backend_ops *real, const struct vc_backend_conf *conf,
			    void **ret, struct vc_error *err)
{
	struct winst *w = calloc(1, sizeof(*w));
	struct wcreated *c = NULL;
	ssize_t n;
	int r;

	if (!w)
		return -ENOMEM;
	w->real = real;
	w->sock = w->memfd = -1;
	w->pid = -1;
	w->backoff_ms = BACKOFF_FIRST_MS;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->rtfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	w->hbfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->epfd < 0 || w->rtfd < 0 || w->hbfd < 0) {
		r = vc_err(err, 0, -errno, "%s: cannot make the worker's timers: %s", real->name,
			   strerror(errno));
		goto fail;
	}
	for (int i = 0; i < 2; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = i ? w->hbfd : w->rtfd };

		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0) {
			r = vc_err(err, 0, -errno, "epoll: %s", strerror(errno));
			goto fail;
		}
	}
	if (strcmp(real->name, "pipewire") == 0) {
		const struct vc_kv *kv = vc_conf_key(conf, "remote");

		if (kv)
			snprintf(w->remote, sizeof(w->remote), "%s", kv->value);
	}
	r = pack_conf(&w->conf, real->name, conf);
	if (r < 0) {
		vc_err(err, 0, r, "%s: the section is too large for a worker", real->name);
		goto fail;
	}
	r = spawn(w);
	if (r < 0) {
		vc_err(err, 0, r, "%s: cannot start a worker process (%s): %s", real->name,
		       vc_worker_exe ? vc_worker_exe : "none", strerror(-r));
		goto fail;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		r = -ENOMEM;
		goto fail;
	}
	n = wait_for(w, W_CREATED, c, sizeof(*c), WORKER_CREATE_MS);
	if (n != (ssize_t)sizeof(*c)) {
		char how[160] = "";
		int status;

		if (kill_reap(w->pid, &status))
			how_it_ended(status, how, sizeof(how));
		w->pid = -1;
		r = vc_err(err, 0, -EIO, "%s: the worker process did not answer%s%s", real->name,
			   how[0] ? ": " : "", how);
		goto fail;
	}
	r = take_created(w, c, err);
	if (r < 0)
		goto fail;
	free(c);
	*ret = w;
	return 0;
fail:
	free(c);
	proxy_free(w);
	return r;
}

static int proxy_describe(void *priv, struct vc_modes *modes)
{
	struct winst *w = priv;

	for (size_t i = 0; i < w->modes.n; i++) {
		int r = vc_modes_add(modes, &w->modes.v[i]);

		if (r < 0)
			return r;
	}
	return 0;
}

static int proxy_controls(void *priv, struct viacam_ctrl *ctrls)
{
	struct winst *w = priv;

	memcpy(ctrls, w->ctrls, (size_t)w->nctrls * sizeof(*ctrls));
	return w->nctrls;
}

/* A ring of WORKER_SLOTS frames of @mode, its size sealed. */
static int make_ring(struct winst *w, const struct vc_mode *mode)
{
	size_t fsize = vc_sizeimage(mode->pixelformat, mode->width, mode->height);
	long page = sysconf(_SC_PAGESIZE);
	size_t slot = (fsize + (size_t)page - 1) / (size_t)page * (size_t)page;
	int fd;
	void *mem;

	if (!fsize)
		return -EINVAL;
	if (w->ring && slot == w->slot_size)
		return 0;
	fd = memfd_create("viacam-frames", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)(slot * WORKER_SLOTS)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	mem = mmap(NULL, slot * WORKER_SLOTS, PROT_READ, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		int e = errno;

		close(fd);
		return -e;
	}
	if (w->ring)
		munmap(w->ring, w->slot_size * WORKER_SLOTS);
	if (w->memfd >= 0)
		close(w->memfd);
	w->ring = mem;
	w->memfd = fd;
	w->slot_size = slot;
	return 0;
}

static int proxy_start(void *priv, const struct vc_mode *mode, struct vc_error *err)
{
	struct winst *w = priv;
	struct wmsg m;
	ssize_t n;
	int r;

	r = make_ring(w, mode);
	if (r < 0)
		return vc_err(err, 0, r, "%s: cannot make the frame ring: %s", w->real->name,
			      strerror(-r));
	w->mode = *mode;
	w->started = true;
	w->gone = false;
	drain(w->hbfd);
	if (w->dead)	/* a restart is due: it starts the stream then */
		return 0;
	/*
	 * The PipeWire socket appeared (or changed hands) since this worker was made (viacamd
	 * starts at boot, the desktop user's PipeWire at login): this worker runs as a user who
	 * cannot reach it. A new one, made as the socket's owner, starts the stream.
	 */
	if (w->remote[0] && socket_owner(w->remote) != w->remote_uid) {
		worker_lost(w, "was made before its PipeWire socket belonged to its user", NULL, 0);
		return 0;
	}
	r = send_start(w);
	if (r < 0) {
		worker_lost(w, "cannot be told to start", NULL, 0);
		return 0;
	}
	n = wait_for(w, W_STARTED, &m, sizeof(m), vc_worker_hang_ms);
	if (n != (ssize_t)sizeof(m)) {
		/* crashed or hung: the stream starts on repeats, the restart comes with backoff */
		worker_lost(w, n == -ETIMEDOUT ? "did not answer the start" :
			    "ended during the start", NULL, 0);
		return 0;
	}
	if (m.rc < 0) {
		w->started = false;
		if (err) {
			*err = m.err;
			err->msg[sizeof(err->msg) - 1] = 0;
		}
		return m.rc;
	}
	set_timer(w->hbfd, WORKER_PING_MS, WORKER_PING_MS);
	return 0;
}

static void proxy_stop(void *priv)
{
	struct winst *w = priv;
	struct wmsg m = { .type = W_STOP };

	if (!w->started)
		return;
	w->started = false;
	w->gen++;	/* FRAMEs still queued belong to the stopped run */
	set_timer(w->hbfd, 0, 0);
	if (w->sock >= 0 && send_msg(w->sock, &m, sizeof(m), -1) < 0)
		worker_lost(w, "cannot be told to stop", NULL, 0);
}

static int proxy_set_ctrl(void *priv, uint32_t id, int64_t value)
{
	struct winst *w = priv;
	struct wmsg m = { .type = W_SET_CTRL, .a = id, .b = (uint64_t)value };

	if (w->sock < 0)
		return 0;	/* the next worker gets the values at its start (session) */
	return send_msg(w->sock, &m, sizeof(m), -1);
}

static int proxy_clock_fd(void *priv)
{
	return ((struct winst *)priv)->epfd;
}

static void append_note(struct vc_frame *fr, const char *note)
{
	size_t l = strlen(fr->note);

	if (!note[0])
		return;
	snprintf(fr->note + l, sizeof(fr->note) - l, "%s%s", l ? "; " : "", note);
}

/* The restart timer fired: a new worker, with the same conf, and the stream if started. */
static void restart(struct winst *w, struct vc_frame *fr)
{
	char why[200];
	int r;

	drain(w->rtfd);
	r = spawn(w);
	if (r >= 0 && w->started) {
		r = send_start(w);
		if (r >= 0)
			set_timer(w->hbfd, WORKER_PING_MS, WORKER_PING_MS);
	}
	w->restarts++;
	if (r < 0) {
		snprintf(why, sizeof(why), "could not be started: %s", strerror(-r));
		worker_lost(w, why, fr->note[0] ? NULL : fr->note, fr->note[0] ? 0 : sizeof(fr->note));
	}
}

static int proxy_produce(void *priv, struct vc_frame *fr)
{
	struct winst *w = priv;
	struct wcreated *buf = NULL;
	int have = -1;
	uint64_t bytes = 0, cap = 0, sent = 0;
	char note[sizeof(fr->note)];
	uint64_t v;

	if (w->pending[0]) {
		snprintf(fr->note, sizeof(fr->note), "%s", w->pending);
		w->pending[0] = 0;
	}
	if (read(w->rtfd, &v, sizeof(v)) == sizeof(v) && w->dead)
		restart(w, fr);
	if (read(w->hbfd, &v, sizeof(v)) == sizeof(v) && !w->dead) {
		/* a restarted worker answers once it made its instance (GStreamer's start) */
		unsigned int limit = w->created || vc_worker_hang_ms > WORKER_CREATE_MS ?
				     vc_worker_hang_ms : WORKER_CREATE_MS;

		if (w->ping_out && mono_ns() - w->ping_ns > (uint64_t)limit * 1000000u) {
			snprintf(note, sizeof(note), "did not answer for %u ms (hung)", limit);
			worker_lost(w, note, fr->note, sizeof(fr->note));
		} else if (!w->ping_out) {
			struct wmsg m = { .type = W_PING, .a = ++w->ping_seq };

			w->ping_out = true;
			w->ping_ns = mono_ns();
			send_msg(w->sock, &m, sizeof(m), -1);	/* a dead one shows at recv */
		}
	}
	if (w->dead)
		return -EAGAIN;
	buf = malloc(sizeof(*buf));
	if (!buf)
		return -EAGAIN;
	for (;;) {
		struct wmsg *m = &buf->m;
		ssize_t n;
		int fd;

		n = recv_msg(w->sock, buf, sizeof(*buf), &fd, MSG_DONTWAIT);
		if (fd >= 0)
			close(fd);	/* a worker sends no fds */
		if (n == -EAGAIN)
			break;
		if (n <= 0 || (size_t)n < sizeof(*m)) {
			worker_lost(w, n == 0 || n == -ECONNRESET ? "ended" : "broke the protocol",
				    fr->note, sizeof(fr->note));
			break;
		}
		m->note[sizeof(m->note) - 1] = 0;
		if (m->type == W_PONG && (size_t)n == sizeof(*m)) {
			if (m->a == w->ping_seq)
				w->ping_out = false;
		} else if (m->type == W_CREATED && (size_t)n == sizeof(*buf)) {
			struct vc_error err = { 0 };

			/* a restarted worker: its modes must be the ones the camera offers */
			if (take_created(w, buf, &err) < 0) {
				snprintf(note, sizeof(note), "cannot make the backend again (%.160s)",
					 err.msg);
				worker_lost(w, note, fr->note, sizeof(fr->note));
				break;
			}
		} else if (m->type == W_STARTED && (size_t)n == sizeof(*m)) {
			if (m->rc < 0) {
				m->err.msg[sizeof(m->err.msg) - 1] = 0;
				snprintf(note, sizeof(note), "cannot start the source again (%.160s)",
					 m->err.msg);
				worker_lost(w, note, fr->note, sizeof(fr->note));
				break;
			}
		} else if (m->type == W_NOTE && (size_t)n == sizeof(*m)) {
			append_note(fr, m->note);
			if (m->rc == -ENODEV && m->gen == w->gen && w->started)
				w->gone = true;
		} else if (m->type == W_FRAME && (size_t)n == sizeof(*m)) {
			if (m->gen != w->gen || !w->started)
				continue;	/* an earlier run's */
			if (m->slot >= WORKER_SLOTS || w->core_has[m->slot] ||
			    m->a > w->slot_size || m->a > fr->size) {
				worker_lost(w, "broke the protocol (a bad frame)", fr->note,
					    sizeof(fr->note));
				break;
			}
			append_note(fr, m->note);
			w->core_has[m->slot] = true;
			if (have >= 0) {	/* latest wins: the older one goes back */
				struct wmsg f = { .type = W_FREE, .slot = (uint32_t)have, .gen = w->gen };

				w->core_has[have] = false;
				send_msg(w->sock, &f, sizeof(f), -1);
			}
			have = (int)m->slot;
			bytes = m->a;
			cap = m->b;
			sent = m->c;
		} else {
			worker_lost(w, "broke the protocol", fr->note, sizeof(fr->note));
			break;
		}
	}
	free(buf);
	if (w->gone && have < 0)
		return -ENODEV;
	if (have < 0 || w->dead)
		return -EAGAIN;
	memcpy(fr->data, w->ring + (size_t)have * w->slot_size, bytes);
	fr->bytesused = bytes;
	fr->capture_ns = cap;
	{
		struct wmsg f = { .type = W_FREE, .slot = (uint32_t)have, .gen = w->gen };
		uint64_t now = mono_ns();

		w->core_has[have] = false;
		send_msg(w->sock, &f, sizeof(f), -1);
		if (sent && now >= sent) {
			w->lat_sum_ns += now - sent;
			w->lat_n++;
			w->lat_last_ns = now - sent;
			if (now - sent > w->lat_max_ns)
				w->lat_max_ns = now - sent;
		}
	}
	w->frames++;
	return bytes ? 0 : -EAGAIN;
}

static void proxy_release(void *priv)
{
	if (priv)
		proxy_free(priv);
}

pid_t vc_worker_pid(void *priv)
{
	return ((struct winst *)priv)->pid;
}

void vc_worker_stats(void *priv, struct vc_worker_stats *st)
{
	const struct winst *w = priv;

	st->frames = w->frames;
	st->restarts = w->restarts;
	st->lat_sum_ns = w->lat_sum_ns;
	st->lat_n = w->lat_n;
	st->lat_max_ns = w->lat_max_ns;
	st->lat_last_ns = w->lat_last_ns;
}

/* The proxy's create for each slot of proxies[]: the ops table names no instance. */
#define PROXY_CREATE(i) \
	static int proxy_create_##i(const struct vc_backend_conf *conf, void **ret, \
				    struct vc_error *err) \
	{ \
		return proxy_create_for(proxies[i].real, conf, ret, err); \
	}
PROXY_CREATE(0)
PROXY_CREATE(1)
PROXY_CREATE(2)
PROXY_CREATE(3)
PROXY_CREATE(4)
PROXY_CREATE(5)
PROXY_CREATE(6)
PROXY_CREATE(7)

static int (*const proxy_creates[8])(const struct vc_backend_conf *, void **, struct vc_error *) = {
	proxy_create_0, proxy_create_1, proxy_create_2, proxy_create_3,
	proxy_create_4, proxy_create_5, proxy_create_6, proxy_create_7,
};

bool vc_worker_isolates(const struct vc_backend_ops *ops)
{
	static const char *const isolated[] = { "gst", "pipewire", "file" };

	for (size_t i = 0; i < sizeof(isolated) / sizeof(isolated[0]); i++)
		if (strcmp(ops->name, isolated[i]) == 0)
			return true;
	return false;
}

const struct vc_backend_ops *vc_worker_proxy(const struct vc_backend_ops *real)
{
	for (size_t i = 0; i < sizeof(proxies) / sizeof(proxies[0]); i++) {
		struct proxy *p = &proxies[i];

		if (p->real == real)
			return &p->ops;
		if (p->real)
			continue;
		p->real = real;
		p->ops = (struct vc_backend_ops){
			.abi = VC_BACKEND_ABI,
			.name = real->name,
			.summary = real->summary,
			.keys = real->keys,
			.create = proxy_creates[i],
			.describe = proxy_describe,
			.controls = proxy_controls,
			.start = proxy_start,
			.produce = proxy_produce,
			.clock_fd = proxy_clock_fd,
			.stop = proxy_stop,
			.set_ctrl = real->set_ctrl ? proxy_set_ctrl : NULL,
			.release = proxy_release,
		};
		return &p->ops;
	}
	return NULL;
}

/* ---------------------------------------------------------------------------
 * The worker's side
 */
struct wstate {
	int sock;
	const struct vc_backend_ops *ops;
	void *priv;
	bool started;
	uint32_t gen;
	struct vc_mode mode;
	uint8_t *ring;
	size_t slot_size;
	bool mine[WORKER_SLOTS];	/* free for the next frame */
	uint8_t *scratch;	/* a frame nobody takes (no free slot) */
	int clock;		/* the backend's clock_fd, or tfd */
	int tfd;		/* pacing of a backend without a clock */
	uint64_t sequence;
};

/* Sends @m; false when the core's queue is full (it is slow: the message is dropped). */
static bool w_send(struct wstate *s, struct wmsg *m)
{
	int r = send_msg(s->sock, m, sizeof(*m), -1);

	if (r < 0 && r != -EAGAIN)
		_exit(0);	/* the core is gone */
	return r == 0;
}

static void w_stop(struct wstate *s)
{
	if (!s->started)
		return;
	s->ops->stop(s->priv);
	s->started = false;
	s->clock = -1;
	set_timer(s->tfd, 0, 0);
}

static void w_start(struct wstate *s, const struct wmsg *m, int memfd)
{
	struct wmsg a = { .type = W_STARTED, .gen = m->gen };
	size_t fsize = vc_sizeimage(m->mode.pixelformat, m->mode.width, m->mode.height);
	struct stat st;

	w_stop(s);
	if (s->ring)
		munmap(s->ring, s->slot_size * WORKER_SLOTS);
	s->ring = NULL;
	free(s->scratch);
	s->scratch = NULL;
	if (memfd < 0 || fstat(memfd, &st) < 0 || !fsize || m->b < fsize ||
	    (uint64_t)st.st_size < m->b * WORKER_SLOTS) {
		a.rc = vc_err(&a.err, 0, -EPROTO, "worker: a start without a frame ring");
		goto out;
	}
	s->slot_size = m->b;
	s->ring = mmap(NULL, s->slot_size * WORKER_SLOTS, PROT_READ | PROT_WRITE, MAP_SHARED,
		       memfd, 0);
	s->scratch = malloc(s->slot_size);
	if (s->ring == MAP_FAILED || !s->scratch) {
		s->ring = NULL;
		a.rc = vc_err(&a.err, 0, -ENOMEM, "worker: cannot map the frame ring");
		goto out;
	}
	for (size_t i = 0; i < WORKER_SLOTS; i++)
		s->mine[i] = true;
	s->mode = m->mode;
	s->gen = m->gen;
	s->sequence = 0;
	a.rc = s->ops->start(s->priv, &s->mode, &a.err);
	if (a.rc == 0) {
		s->started = true;
		s->clock = s->ops->clock_fd ? s->ops->clock_fd(s->priv) : -1;
		if (s->clock < 0) {	/* paced here, at the mode's interval */
			uint64_t ns = (uint64_t)s->mode.interval_num * 1000000000u /
				      s->mode.interval_den;
			struct itimerspec its = {
				.it_value = { .tv_sec = (time_t)(ns / 1000000000u),
					      .tv_nsec = (long)(ns % 1000000000u) },
			};

			its.it_interval = its.it_value;
			timerfd_settime(s->tfd, 0, &its, NULL);
			s->clock = s->tfd;
		}
	}
out:
	if (memfd >= 0)
		close(memfd);
	w_send(s, &a);
}

/* The clock is readable: one produce(), into a free slot if there is one. */
static void w_produce(struct wstate *s)
{
	struct wmsg m = { .type = W_FRAME, .gen = s->gen };
	int slot = -1;
	struct vc_frame fr = {
		.size = vc_sizeimage(s->mode.pixelformat, s->mode.width, s->mode.height),
		.mode = &s->mode,
		.bytesperline = vc_bytesperline(s->mode.pixelformat, s->mode.width),
		.sequence = s->sequence,
		.time_ns = mono_ns(),
	};
	int r;

	if (s->clock == s->tfd)
		drain(s->tfd);
	for (int i = 0; i < WORKER_SLOTS; i++)
		if (s->mine[i]) {
			slot = i;
			break;
		}
	fr.data = slot >= 0 ? s->ring + (size_t)slot * s->slot_size : s->scratch;
	r = s->ops->produce(s->priv, &fr);
	fr.note[sizeof(fr.note) - 1] = 0;
	if (r == 0 && slot >= 0 && fr.bytesused <= fr.size) {
		s->mine[slot] = false;
		s->sequence++;
		m.slot = (uint32_t)slot;
		m.a = fr.bytesused;
		m.b = fr.capture_ns;
		memcpy(m.note, fr.note, sizeof(m.note));
		m.c = mono_ns();
		if (!w_send(s, &m))
			s->mine[slot] = true;	/* not sent: the slot is still ours */
		return;
	}
	if (r == 0)
		s->sequence++;
	if (r == -ENODEV) {	/* gone for good: said once, then quiet until the next start */
		s->clock = -1;
		set_timer(s->tfd, 0, 0);
		if (!fr.note[0])
			snprintf(fr.note, sizeof(fr.note), "%s: the source is gone", s->ops->name);
	}
	if (fr.note[0]) {
		struct wmsg n = { .type = W_NOTE, .gen = s->gen, .rc = r == -ENODEV ? r : 0 };

		memcpy(n.note, fr.note, sizeof(n.note));
		w_send(s, &n);
	}
}

/* Sandbox settings for the backend of @u: its devices, and a PipeWire socket's owner. */
static void sandbox_for(const struct unpacked *u, struct vc_sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->uid = (uid_t)-1;
	sb->gid = (gid_t)-1;
	for (size_t i = 0; i < u->c.nkeys; i++) {
		const struct vc_kv *kv = &u->c.keys[i];
		struct stat st;

		if (strcmp(kv->key, "pipeline") == 0)
			vc_sandbox_devices_of(sb, kv->value);
		/*
		 * pipewire's remote (root's viacamd reaches a desktop user's PipeWire): the
		 * worker runs as the socket's owner, who may reach it (its directory is 0700)
		 * and whom that PipeWire's access control knows. Never as root.
		 */
		if (strcmp(u->backend, "pipewire") == 0 && strcmp(kv->key, "remote") == 0 &&
		    socket_owner(kv->value) != (uid_t)-1 && stat(kv->value, &st) == 0) {
			sb->uid = st.st_uid;
			sb->gid = st.st_gid;
		}
	}
}

int vc_worker_main(int fd, const struct vc_backend_ops *(*find)(const char *name))
{
	struct wstate s = { .sock = fd, .clock = -1, .tfd = -1 };
	struct wcreated *c = calloc(1, sizeof(*c));
	struct pack k = { .cap = CREATE_MAX };
	struct unpacked u;
	struct vc_sandbox sb;
	char why[256];
	ssize_t n;

	/* "exe" otherwise (the core runs /proc/self/exe): ps and the journal name it */
	prctl(PR_SET_NAME, "viacamd-worker", 0, 0, 0);
	k.p = malloc(CREATE_MAX);
	if (!c || !k.p)
		return 1;
	n = recv_msg(fd, k.p, CREATE_MAX, NULL, 0);
	if (n <= 0)
		return 0;
	k.cap = (size_t)n;
	c->m.type = W_CREATED;
	if (unpack_conf(&k, &u) < 0) {
		c->m.rc = vc_err(&c->m.err, 0, -EPROTO, "worker: a bad CREATE");
		goto answer;
	}
	s.ops = find(u.backend);
	if (!s.ops) {
		c->m.rc = vc_err(&c->m.err, 0, -ENOENT, "worker: no backend '%s'", u.backend);
		goto answer;
	}
	s.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	/*
	 * GStreamer reads its plugin registry (root's cache, GST_REGISTRY) and scans new
	 * plugins with its helper program before the sandbox: that is GStreamer's own setup,
	 * no source is made yet. Parsing the description and everything after runs sandboxed.
	 */
	if (strcmp(u.backend, "gst") == 0 || strcmp(u.backend, "pipewire") == 0)
		vc_gst_init();
	sandbox_for(&u, &sb);
	if (vc_sandbox_enter(&sb, why, sizeof(why)) < 0) {
		c->m.rc = vc_err(&c->m.err, 0, -EPERM, "worker: cannot enter its sandbox: %s", why);
		goto answer;
	}
	c->m.rc = s.ops->create(&u.c, &s.priv, &c->m.err);
	if (c->m.rc == 0) {
		c->m.rc = s.ops->describe(s.priv, &c->modes);
		if (c->m.rc == 0 && s.ops->controls) {
			c->nctrls = s.ops->controls(s.priv, c->ctrls);
			if (c->nctrls < 0)
				c->m.rc = c->nctrls;
		}
		if (c->m.rc < 0)
			vc_err(&c->m.err, 0, c->m.rc, "%s cannot describe itself: %s", u.backend,
			       strerror(-c->m.rc));
	}
answer:
	if (send_msg(fd, c, sizeof(*c), -1) < 0 || c->m.rc < 0)
		_exit(c->m.rc < 0 ? 2 : 0);
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = s.clock, .events = POLLIN } };
		struct wmsg m;
		int mfd;

		if (poll(p, s.started && s.clock >= 0 ? 2 : 1, -1) < 0)
			continue;
		if (p[0].revents) {
			n = recv_msg(fd, &m, sizeof(m), &mfd, MSG_DONTWAIT);
			if (n == -EAGAIN)
				continue;
			if (n != (ssize_t)sizeof(m))
				_exit(0);	/* EOF: the core released us (or died) */
			if (m.type == W_START) {
				w_start(&s, &m, mfd);
				continue;
			}
			if (mfd >= 0)
				close(mfd);
			if (m.type == W_STOP) {
				w_stop(&s);
			} else if (m.type == W_SET_CTRL && s.ops->set_ctrl) {
				s.ops->set_ctrl(s.priv, (uint32_t)m.a, (int64_t)m.b);
			} else if (m.type == W_PING) {
				struct wmsg a = { .type = W_PONG, .a = m.a };

				w_send(&s, &a);
			} else if (m.type == W_FREE && m.gen == s.gen && m.slot < WORKER_SLOTS) {
				s.mine[m.slot] = true;
			}
			continue;
		}
		if (s.started && s.clock >= 0 && p[1].revents)
			w_produce(&s);
	}
}
