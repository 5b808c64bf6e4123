// SPDX-License-Identifier: GPL-2.0-only
/*
 * vchostile.c - a hostile consumer against a lending producer (issue 31), run inside the
 * test guest by tests/integration/TEST-19-hostile.
 *
 * Capture nodes are open to every user in group "video". A producer on the backend node
 * (root) writes frames straight into consumers' queued capture buffers (VIACAM_IOC_LEND,
 * DELIVER, UNLEND). This program plays all sides of that: a lending producer, unprivileged
 * consumers that do everything a consumer may do at the worst moment, an innocent consumer
 * on another capture node of the same camera that checks every frame it gets, and the
 * invariants afterwards.
 *
 *   vchostile produce -b BACKEND [-t SECONDS] [-s SEED] [-r FPS] [-p PAUSE_MS] [--calm]
 *   vchostile hostile -n CAPNODE [-n CAPNODE...] [-x EXPORTNODE...] [-k PEEKNODE]
 *                     [-P PROCS] [-t SECONDS] [-s SEED] [-u USER] [--recipes LIST] [-v]
 *   vchostile victim  -c CAPNODE [-t SECONDS] [-s SEED] [-a] [-f FRESH_MS] [-S STALL_S] [-u USER]
 *   vchostile check   -c CAPNODE [-c CAPNODE...] [-b BACKEND] [-a] [-u USER] [-T SECONDS]
 *   vchostile dmabufs [-e EXPECTED] [-W SECONDS]
 * Every mode also takes -w HANG_SECONDS (default 30): a call into the driver that has not
 * returned after that long is a hang ("vchostile: HANG: ..." with the call's name and node,
 * exit status 3). Calls blocked for more than 0.8 s get SIGUSR1 (no SA_RESTART) first, so
 * a blocking DQBUF, poll or read ends with EINTR instead of waiting forever.
 *
 * produce (root): opens BACKEND, S_FMT 640x480 YUYV on the output queue, REQBUFS MMAP 2-4
 *   buffers, STREAMON, and makes frames at FPS (default 30) for SECONDS (default: until
 *   SIGTERM/SIGINT), sometimes in unpaced bursts, sometimes pausing for PAUSE_MS..2*PAUSE_MS
 *   (default 2000: longer than the camera's timeout, so repeats happen). Each frame goes into
 *   a lent capture buffer (VIACAM_IOC_LEND; the dma-buf is mapped once per lend id, as the
 *   uapi allows, and the fd closed), else (EAGAIN) into a backend MMAP buffer (QBUF, DQBUF
 *   back). 1-3 lends may be out at once, some held for up to a few hundred ms before the
 *   frame is written and delivered; some are UNLENT instead, now and then after half a frame
 *   was written (a buffer given back unfilled must never reach a consumer). ESTALE is normal.
 *   Now and then STREAMOFF, a pause, STREAMON. --calm: one frame per slot, every lend
 *   delivered at once, no pauses or stops (what `check` runs). Never gives up on an error:
 *   counts it. A broken promise of the uapi (a lend id whose length changed, a lend shorter
 *   than the format, an unexpected errno from LEND/DELIVER/UNLEND) is a VIOLATION.
 *
 * Frames: 640x480 YUYV, 614400 bytes. Bytes 0-3 "VCHP", 4-7 the frame counter, 8-15 the
 *   CLOCK_MONOTONIC time it was handed to the bridge, 16-23 a check word of both, then
 *   64-bit words derived from the counter and their index: any frame can be verified on its
 *   own. The header is written last, just before DELIVER/QBUF.
 *
 * hostile: forks PROCS (default 3) processes; each drops to USER (getpwnam, setgroups of its
 *   groups (video among them), setresgid, setresuid; refuses to go on as root) before it
 *   opens anything, and runs for SECONDS (default 30) three threads: an actor that runs
 *   random "sessions" on the capture nodes given with -n, a poker that throws non-blocking
 *   calls (DQBUF, QUERYBUF, STREAMOFF/ON, EXPBUF, QBUF, poll) at the actor's current fd, and a
 *   scribbler that writes marker blocks into every writable mapping the process has of its
 *   own capture buffers and dma-bufs, queued or not (three markers: through an MMAP buffer's
 *   own mapping, through a dma-buf of another camera or of a freed buffer, through a dma-buf
 *   EXPBUF made of a buffer of the running queue). The first -n node should be the first
 *   capture node of the camera: the bridge lends from it first. Sessions (--recipes: a
 *   comma list of these names, default all):
 *     stream  REQBUFS or CREATE_BUFS with MMAP, USERPTR or DMABUF, QBUF (good memory, and
 *             now and then fd -1, /dev/null, a memfd, a too short dma-buf, another buffer's
 *             dma-buf, a closed fd, length 1, too short, bad or read-only addresses), STREAMON,
 *             DQBUF (O_NONBLOCK, or blocking after poll) and QBUF back, scribbling into MMAP
 *             buffers after DQBUF, STREAMOFF/ON, REQBUFS again, S_FMT/S_PARM, read(), EXPBUF,
 *             munmap, sleeps (lends go out meanwhile); it ends by close() with everything
 *             queued, by STREAMOFF + REQBUFS(0), or by STREAMOFF + a bad QBUF of every buffer
 *             + REQBUFS(0) or close();
 *     stale   a DMABUF stream of writable dma-bufs (the bridge lends them), then at a random
 *             moment STREAMOFF, QBUF of each buffer with a bad fd or length, REQBUFS(0);
 *             up to three rounds;
 *     churn   USERPTR buffers: rounds of QBUF of each with good memory, STREAMOFF (sometimes
 *             a short stream first), QBUF of each with length 1 (or short, bad, read-only);
 *     read    read() of random sizes, with poll or O_NONBLOCK;
 *     ctl     G/S/TRY_FMT, S_PARM with huge and zero intervals (67108864/1, 1/0, ...),
 *             ENUM_*, controls, events;
 *     peek    (with -k) the innocent consumer's node: calls that cannot take its queue.
 *   dma-bufs come from the capture nodes given with -x (MMAP buffers of other cameras,
 *   exported O_RDWR or O_RDONLY; a smaller camera's are too short), or from the session's own
 *   node (MMAP buffers exported, then REQBUFS(0), then imported). Process i draws from
 *   SEED + i; a seed replays the same decisions (outcomes depend on timing).
 *
 * victim: streams CAPNODE (MMAP, 4 buffers, DQBUF after poll) for SECONDS, restarting the
 *   stream every 0.3-3 s (STREAMOFF/STREAMON, or close and reopen; now and then after a
 *   break of 0.5-3 s, in which the bridge may lend to the hostile nodes). Every frame must be a
 *   whole producer frame (header and every byte of the body) or all neutral (every byte
 *   0x80), with bytesused the format's size, and must not be from before its stream's
 *   STREAMON (its time more than FRESH_MS, default 1500, before STREAMON). -a (any
 *   producer, e.g. viacamd): only bytesused and the markers are checked. Anything else is a
 *   VIOLATION (frame number, first bad offset, where a hostile marker was found); so is a
 *   stream that gets no frame for STALL_S (default 10) seconds, and ENOMEM from REQBUFS.
 *
 * check: the invariants after a hostile run. With -b, a --calm producer (root) runs first.
 *   Then, as USER (privileges dropped in a child), for each CAPNODE: a fresh open gets 4
 *   buffers from REQBUFS(4) MMAP and streams frames, at least 3 of them real ones (each
 *   verified as the victim does); CREATE_BUFS(2) gives 2; read() gives 2 whole frames. With
 *   -b the user must not be able to open BACKEND (EACCES). Waits at most SECONDS (default 40)
 *   for each.
 *
 * dmabufs (root): the number of dma-bufs in /sys/kernel/debug/dma_buf/bufinfo (mounts
 *   debugfs if needed). With -e, waits up to -W seconds (default 10) for it to be EXPECTED
 *   and fails if it is not; prints the objects left.
 *
 * Every mode ends with "vchostile: done, seed=S, N actions, M violations". Exit status: 0;
 * 1 on violations (or failed invariants); 2 on usage or setup errors; 3 on a hang; 5 when a
 * hostile process died of a signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/viacam.h>

#define WIDTH		640
#define HEIGHT		480
#define MAXB		32	/* capture buffers of one session */
#define MAXPOOL		24	/* dma-buf fds of one session */
#define MAXSMAPS	160	/* mappings the scribbler may write into */
#define PAGE		4096u
#define FRAME_MAGIC	0x50484356u	/* "VCHP" */
#define NEUTRAL64	0x8080808080808080ull
#define KICK_MS		800

static const char *const capnames[] = { "?", "MMAP", "USERPTR", "?", "DMABUF" };

/* ------------------------------------------------------------------------
 * Time, PRNG
 */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ms(void)
{
	return now_ns() / 1000000;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	if (ms > 0)
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* splitmix64: a counter through a finalizer; the state is one word. */
struct rng {
	uint64_t s;
};

static void rng_init(struct rng *r, uint64_t seed, uint64_t stream)
{
	r->s = mix64(seed ^ mix64(stream + 0x632be59bd9b4e019ull));
}

static uint64_t rnd(struct rng *r)
{
	return mix64(r->s += 0x9e3779b97f4a7c15ull);
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static uint32_t between(struct rng *r, uint32_t lo, uint32_t hi)
{
	return lo + below(r, hi - lo + 1);
}

static bool chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

/* ------------------------------------------------------------------------
 * Output, counters
 */

static uint64_t g_seed;
static const char *g_mode = "";
static char g_who[48] = "vchostile";
static volatile sig_atomic_t g_stop;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%s: ", g_who);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One write per line: several processes and threads share the output. */
	n = (int)strlen(line);
	if (n < (int)sizeof(line) - 1)
		line[n++] = '\n';
	else
		line[n - 1] = '\n';
	if (write(STDOUT_FILENO, line, (size_t)n) < 0)
		return;
}

/* Calls into the driver per (name, errno), per thread, merged at the end. */
struct stat_ent {
	const char *call;
	int err;
	uint64_t n;
};

struct stats {
	uint64_t actions;
	uint64_t violations;
	int ne;
	struct stat_ent e[128];
};

static _Thread_local struct stats *my_st;

static void count(const char *call, int err)
{
	struct stats *st = my_st;
	int i;

	if (!st)
		return;
	st->actions++;
	for (i = 0; i < st->ne; i++) {
		if (st->e[i].err == err && (st->e[i].call == call || !strcmp(st->e[i].call, call))) {
			st->e[i].n++;
			return;
		}
	}
	if (st->ne < (int)(sizeof(st->e) / sizeof(st->e[0])))
		st->e[st->ne++] = (struct stat_ent){ call, err, 1 };
}

static void stats_merge(struct stats *to, const struct stats *from)
{
	int i, j;

	to->actions += from->actions;
	to->violations += from->violations;
	for (i = 0; i < from->ne; i++) {
		for (j = 0; j < to->ne; j++)
			if (to->e[j].err == from->e[i].err && !strcmp(to->e[j].call, from->e[i].call))
				break;
		if (j < to->ne)
			to->e[j].n += from->e[i].n;
		else if (to->ne < (int)(sizeof(to->e) / sizeof(to->e[0])))
			to->e[to->ne++] = from->e[i];
	}
}

static int cmp_ent(const void *a, const void *b)
{
	const struct stat_ent *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

/* The errors seen, most frequent first: "QBUF:EINVAL=12 REQBUFS:ENOMEM=3 ..." */
static void stats_print(struct stats *st, const char *what)
{
	char line[900];
	size_t len = 0;
	int i, shown = 0;

	qsort(st->e, (size_t)st->ne, sizeof(st->e[0]), cmp_ent);
	line[0] = 0;
	for (i = 0; i < st->ne && shown < 24; i++) {
		const char *en = strerrorname_np(st->e[i].err);

		if (!st->e[i].err)
			continue;
		if (len + 64 > sizeof(line))
			break;
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %.20s:%.16s=%" PRIu64,
					st->e[i].call, en ? en : "?", st->e[i].n);
		shown++;
	}
	say("%s errors:%s", what, shown ? line : " none");
}

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (my_st)
		my_st->violations++;
	if (my_st && my_st->violations > 30) {
		if (my_st->violations == 31)
			say("VIOLATION: (more violations are counted, not printed)");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say("VIOLATION: %s", msg);
}

/* ------------------------------------------------------------------------
 * Hang watchdog: each thread says which call it is in; a call blocked for KICK_MS gets
 * SIGUSR1 (interrupting any interruptible wait), one blocked for wd_hang_ms fails the run.
 */

struct wd_slot {
	atomic_bool used;
	pthread_t tid;
	_Atomic int64_t since;		/* ms; 0: not in a call */
	_Atomic(const char *) what;
	_Atomic(const char *) where;
	int64_t kicked;
};

static struct wd_slot wd[16];
static _Thread_local struct wd_slot *my_wd;
static int64_t wd_hang_ms = 30000;

static void wd_register(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(wd) / sizeof(wd[0]); i++) {
		bool f = false;

		if (atomic_compare_exchange_strong(&wd[i].used, &f, true)) {
			wd[i].tid = pthread_self();
			atomic_store(&wd[i].since, 0);
			my_wd = &wd[i];
			return;
		}
	}
}

static void wd_enter(const char *what, const char *where)
{
	if (!my_wd)
		return;
	atomic_store(&my_wd->what, what);
	atomic_store(&my_wd->where, where ? where : "-");
	atomic_store(&my_wd->since, now_ms());
}

static void wd_leave(void)
{
	if (my_wd)
		atomic_store(&my_wd->since, 0);
}

static void *wd_thread(void *arg)
{
	unsigned int i;

	(void)arg;
	for (;;) {
		int64_t t;

		sleep_ms(50);
		t = now_ms();
		for (i = 0; i < sizeof(wd) / sizeof(wd[0]); i++) {
			int64_t since = atomic_load(&wd[i].since);

			if (!atomic_load(&wd[i].used) || !since)
				continue;
			if (t - since > wd_hang_ms) {
				say("HANG: %s on %s has not returned for %" PRId64 " s (seed=%" PRIu64
				    ", pid %d)", atomic_load(&wd[i].what), atomic_load(&wd[i].where),
				    (t - since) / 1000, g_seed, (int)getpid());
				_exit(3);
			}
			if (t - since > KICK_MS && t - wd[i].kicked > 200) {
				wd[i].kicked = t;
				pthread_kill(wd[i].tid, SIGUSR1);
			}
		}
	}
	return NULL;
}

static void on_kick(int sig)
{
	(void)sig;
}

static void on_stop(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* Signals and the watchdog thread of this process (after a fork, again in the child). */
static void wd_start(void)
{
	struct sigaction sa = { 0 };
	pthread_t t;

	sa.sa_handler = on_kick;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	memset(wd, 0, sizeof(wd));
	my_wd = NULL;
	wd_register();
	if (pthread_create(&t, NULL, wd_thread, NULL) == 0)
		pthread_detach(t);
}

/* ------------------------------------------------------------------------
 * Calls into the driver, each counted and watched
 */

static int xioctl(int fd, unsigned long req, void *arg, const char *name, const char *node)
{
	int r, e;

	wd_enter(name, node);
	r = ioctl(fd, req, arg);
	e = r < 0 ? errno : 0;
	wd_leave();
	count(name, e);
	errno = e;
	return r;
}

#define IO(fd, req, arg, node) xioctl((fd), VIDIOC_##req, (arg), #req, (node))

static int xopen(const char *node, int flags)
{
	int fd, e;

	wd_enter("open", node);
	fd = open(node, flags);
	e = fd < 0 ? errno : 0;
	wd_leave();
	count("open", e);
	errno = e;
	return fd;
}

static void xclose(int fd, const char *node)
{
	int e;

	if (fd < 0)
		return;
	wd_enter("close", node);
	e = close(fd) ? errno : 0;
	wd_leave();
	count("close", e);
}

static void *xmmap(size_t len, int prot, int fd, off_t off, const char *node)
{
	void *p;
	int e;

	wd_enter("mmap", node);
	p = mmap(NULL, len, prot, MAP_SHARED, fd, off);
	e = p == MAP_FAILED ? errno : 0;
	wd_leave();
	count(prot & PROT_WRITE ? "mmap-rw" : "mmap-r", e);
	errno = e;
	return p;
}

static int xpoll(int fd, short events, int timeout_ms, const char *node)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r, e;

	wd_enter("poll", node);
	r = poll(&p, 1, timeout_ms);
	e = r < 0 ? errno : 0;
	wd_leave();
	count("poll", e);
	errno = e;
	return r > 0 ? p.revents : r;
}

static ssize_t xread(int fd, void *buf, size_t len, const char *node)
{
	ssize_t r;
	int e;

	wd_enter("read", node);
	r = read(fd, buf, len);
	e = r < 0 ? errno : 0;
	wd_leave();
	count("read", e);
	errno = e;
	return r;
}

static int streamon(int fd, const char *node, int type)
{
	return IO(fd, STREAMON, &type, node);
}

static int streamoff(int fd, const char *node, int type)
{
	return IO(fd, STREAMOFF, &type, node);
}

static int reqbufs(int fd, const char *node, int type, int memory, unsigned int n)
{
	struct v4l2_requestbuffers rb = { .count = n, .type = (uint32_t)type,
					  .memory = (uint32_t)memory };

	return IO(fd, REQBUFS, &rb, node) < 0 ? -1 : (int)rb.count;
}

/* ------------------------------------------------------------------------
 * Frames: made by the producer, verified by the victim and the checks
 */

static uint64_t body_word(uint32_t counter, size_t j)
{
	return mix64(((uint64_t)counter << 32) ^ (uint64_t)j ^ 0x5851f42d4c957f2dull);
}

static uint64_t seal_word(uint32_t counter, uint64_t stamp)
{
	return mix64(stamp ^ ((uint64_t)counter * 0xd6e8feb86659fd93ull) ^ 0xa0761d6478bd642full);
}

/* Everything but the header (size >= 24; @p 8-byte aligned: mmap memory). */
static void frame_body(uint8_t *p, size_t size, uint32_t counter, size_t upto)
{
	uint64_t *w = (uint64_t *)(void *)p;
	size_t nw = size / 8, j;

	if (upto > nw)
		upto = nw;
	for (j = 3; j < upto; j++)
		w[j] = body_word(counter, j);
	if (upto == nw)
		for (j = nw * 8; j < size; j++)
			p[j] = (uint8_t)(counter + j);
}

/* The header, written last: the time the frame is handed over. */
static void frame_seal(uint8_t *p, uint32_t counter)
{
	uint64_t *w = (uint64_t *)(void *)p;
	uint64_t stamp = (uint64_t)now_ns();

	w[1] = stamp;
	w[2] = seal_word(counter, stamp);
	w[0] = FRAME_MAGIC | (uint64_t)counter << 32;
}

/* The hostile consumers' scribbles: 16-byte blocks at 16-byte aligned offsets. */
static const uint8_t mark_mmap[16] = { 'H', '0', 'S', 'T', '1', 'L', 'E', '-',
				       'm', 'm', 'a', 'p', '-', 'b', 'u', 'f' };
static const uint8_t mark_dmabuf[16] = { 'H', '0', 'S', 'T', '1', 'L', 'E', '-',
					 'd', 'm', 'a', 'b', 'u', 'f', '!', '!' };
/* ...through a dma-buf exported (EXPBUF) from one of its own queued MMAP buffers */
static const uint8_t mark_expbuf[16] = { 'H', '0', 'S', 'T', '1', 'L', 'E', '-',
					 'e', 'x', 'p', 'b', 'u', 'f', '!', '!' };

enum fkind { F_NEUTRAL, F_PRODUCER, F_OTHER, F_BAD };

struct verdict {
	enum fkind kind;
	uint32_t counter;
	int64_t stamp;
	long bad;		/* first bad byte, or -1 */
	long mark;		/* first hostile marker, or -1 */
	const char *mark_name;
	const char *why;
};

static void find_marker(const uint8_t *p, size_t used, struct verdict *v)
{
	uint64_t a, m0;
	size_t off;

	/* The three markers share their first 8 bytes. */
	memcpy(&m0, mark_mmap, 8);
	v->mark = -1;
	for (off = 0; off + 16 <= used; off += 16) {
		memcpy(&a, p + off, 8);
		if (a != m0)
			continue;
		v->mark_name = !memcmp(p + off, mark_mmap, 16) ? "MMAP scribble" :
			       !memcmp(p + off, mark_dmabuf, 16) ? "DMABUF scribble" :
			       !memcmp(p + off, mark_expbuf, 16) ? "EXPBUF scribble" : NULL;
		if (v->mark_name) {
			v->mark = (long)off;
			return;
		}
	}
}

/* First byte where 64-bit word @got differs from @want (little endian). */
static long word_diff(size_t j, uint64_t got, uint64_t want)
{
	return (long)(j * 8 + (size_t)(__builtin_ctzll(got ^ want) / 8));
}

/*
 * Judge a frame of @used bytes (the format says @size). @any: frames of some other producer
 * (viacamd): only the length and hostile markers count.
 */
static void verify_frame(const uint8_t *p, size_t used, size_t size, bool any, struct verdict *v)
{
	const uint64_t *w = (const uint64_t *)(const void *)p;
	size_t nw, j;

	memset(v, 0, sizeof(*v));
	v->bad = -1;
	find_marker(p, used, v);
	if (!used || used > size || (!any && used != size)) {
		v->kind = F_BAD;
		v->why = "bytesused is not the format's size";
		return;
	}
	nw = used / 8;
	if (used >= 24 && w[0] == NEUTRAL64 && w[1] == NEUTRAL64) {
		v->kind = F_NEUTRAL;
		for (j = 2; j < nw; j++) {
			if (w[j] != NEUTRAL64) {
				v->bad = word_diff(j, w[j], NEUTRAL64);
				break;
			}
		}
		for (j = nw * 8; v->bad < 0 && j < used; j++)
			if (p[j] != 0x80)
				v->bad = (long)j;
		if (v->bad >= 0) {
			v->kind = F_BAD;
			v->why = "a neutral frame with other bytes";
		}
		return;
	}
	if (any) {
		v->kind = v->mark >= 0 ? F_BAD : F_OTHER;
		v->bad = v->mark;
		v->why = "a hostile consumer's bytes";
		return;
	}
	if (used < 24 || (uint32_t)w[0] != FRAME_MAGIC) {
		v->kind = F_BAD;
		v->bad = 0;
		v->why = "neither a producer frame nor a neutral one";
		return;
	}
	v->counter = (uint32_t)(w[0] >> 32);
	v->stamp = (int64_t)w[1];
	if (w[2] != seal_word(v->counter, w[1])) {
		v->kind = F_BAD;
		v->bad = word_diff(2, w[2], seal_word(v->counter, w[1]));
		v->why = "a producer frame with a broken header";
		return;
	}
	for (j = 3; j < nw; j++) {
		uint64_t want = body_word(v->counter, j);

		if (w[j] != want) {
			v->bad = word_diff(j, w[j], want);
			break;
		}
	}
	for (j = nw * 8; v->bad < 0 && j < used; j++)
		if (p[j] != (uint8_t)(v->counter + j))
			v->bad = (long)j;
	v->kind = v->bad >= 0 ? F_BAD : F_PRODUCER;
	v->why = "a producer frame with a corrupt body";
}

/* "frame 12 (counter 345): a producer frame with a corrupt body at offset 4096 (MMAP ...)" */
static void describe(char *out, size_t len, const struct verdict *v)
{
	char mark[96] = "";

	if (v->mark >= 0)
		snprintf(mark, sizeof(mark), "; %s marker at offset %ld", v->mark_name, v->mark);
	if (v->kind == F_BAD && v->counter)
		snprintf(out, len, "%s (counter %u) at offset %ld%s", v->why, v->counter, v->bad,
			 mark);
	else
		snprintf(out, len, "%s at offset %ld%s", v->why, v->bad, mark);
}

/* ------------------------------------------------------------------------
 * Privileges
 */

static void drop_privileges(const char *user)
{
	struct passwd *pw;
	struct group *gr;
	gid_t groups[64];
	int n = 64, i;
	bool video = false;

	if (!user) {
		if (getuid() == 0 || geteuid() == 0) {
			say("refusing to play a consumer as root: give -u USER");
			exit(2);
		}
		return;
	}
	pw = getpwnam(user);
	if (!pw) {
		say("no user '%s'", user);
		exit(2);
	}
	if (getgrouplist(user, pw->pw_gid, groups, &n) < 0) {
		say("user '%s' is in too many groups", user);
		exit(2);
	}
	if (setgroups((size_t)n, groups) || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid)) {
		say("dropping privileges to %s: %s", user, strerror(errno));
		exit(2);
	}
	if (getuid() == 0 || geteuid() == 0 || getgid() == 0 || setresuid(0, 0, 0) == 0) {
		say("still privileged after dropping to %s", user);
		exit(2);
	}
	gr = getgrnam("video");
	for (i = 0; gr && i < n; i++)
		video |= groups[i] == gr->gr_gid;
	if (!video)
		say("note: user %s is not in group video", user);
}

/* ------------------------------------------------------------------------
 * The producer
 */

struct lmap {
	uint32_t id;
	uint8_t *p;
	size_t len;
	int64_t used;
	bool out;		/* lent now */
};

struct lout {
	uint32_t id;
	struct lmap *m;
	int64_t due;		/* ms: deliver (or unlend) then */
	int64_t since;
};

struct prod {
	const char *node;
	int fd;
	size_t size;
	struct rng r;
	bool calm;
	bool streaming;
	struct {
		uint8_t *p;
		size_t len;
		bool queued;
	} b[4];
	unsigned int nb;
	struct lmap maps[40];
	unsigned int nmaps;
	struct lout out[4];
	unsigned int nout;
	uint32_t counter;
	/* what happened */
	uint64_t lends, delivered, unlent, estale, eagain, backend, dqbufs, restarts, pauses,
		 bursts, mmap_fail, evicted, partial;
};

static void prod_unmap(struct lmap *m)
{
	if (m->p)
		munmap(m->p, m->len);
	memset(m, 0, sizeof(*m));
}

/* The mapping of lend @id (length @len), mapping @fd if it is new; the fd is closed. */
static struct lmap *prod_map(struct prod *pr, uint32_t id, int fd, size_t len)
{
	struct lmap *m = NULL, *lru = NULL;
	unsigned int i;
	void *p;

	for (i = 0; i < pr->nmaps; i++)
		if (pr->maps[i].p && pr->maps[i].id == id)
			m = &pr->maps[i];
	if (m) {
		close(fd);
		if (m->out)
			violation("producer: LEND gave id %u, which is lent already", id);
		if (m->len != len) {
			violation("producer: lend id %u came back with length %zu, was %zu: the "
				  "uapi promises an id is always the same memory", id, len, m->len);
			prod_unmap(m);
			return NULL;
		}
		m->used = now_ms();
		return m;
	}
	p = xmmap(len, PROT_READ | PROT_WRITE, fd, 0, pr->node);
	close(fd);
	if (p == MAP_FAILED) {
		pr->mmap_fail++;
		return NULL;
	}
	for (i = 0; i < pr->nmaps && !m; i++)
		if (!pr->maps[i].p)
			m = &pr->maps[i];
	if (!m && pr->nmaps < sizeof(pr->maps) / sizeof(pr->maps[0]))
		m = &pr->maps[pr->nmaps++];
	for (i = 0; i < pr->nmaps && !m; i++)
		if (!pr->maps[i].out && (!lru || pr->maps[i].used < lru->used))
			lru = &pr->maps[i];
	if (!m) {
		if (!lru) {
			munmap(p, len);
			return NULL;
		}
		prod_unmap(lru);
		pr->evicted++;
		m = lru;
	}
	m->id = id;
	m->p = p;
	m->len = len;
	m->used = now_ms();
	m->out = false;
	return m;
}

static void prod_forget_lends(struct prod *pr)
{
	unsigned int i;

	for (i = 0; i < pr->nout; i++)
		if (pr->out[i].m)
			pr->out[i].m->out = false;
	pr->nout = 0;
}

/* An errno of LEND/DELIVER/UNLEND that the uapi does not explain. */
static void prod_odd(struct prod *pr, const char *call, int err)
{
	if (err == EAGAIN || err == ESTALE || err == EBUSY || err == ENODEV || err == EINTR)
		return;
	violation("producer: %s on %s failed with %s (%s)", call, pr->node,
		  strerrorname_np(err) ? strerrorname_np(err) : "?", strerror(err));
}

static int prod_start(struct prod *pr)
{
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;

	if (streamon(pr->fd, pr->node, type) < 0)
		return -1;
	pr->streaming = true;
	return 0;
}

static void prod_stop(struct prod *pr)
{
	unsigned int i;

	streamoff(pr->fd, pr->node, V4L2_BUF_TYPE_VIDEO_OUTPUT);
	pr->streaming = false;
	prod_forget_lends(pr);
	for (i = 0; i < pr->nb; i++)
		pr->b[i].queued = false;
}

static int prod_setup(struct prod *pr)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2_streamparm sp = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	int64_t until = now_ms() + 20000;
	unsigned int i, want;
	int n;

	pr->fd = xopen(pr->node, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (pr->fd < 0) {
		say("producer: open %s: %s", pr->node, strerror(errno));
		return -1;
	}
	for (;;) {
		memset(&f.fmt, 0, sizeof(f.fmt));
		f.fmt.pix.width = WIDTH;
		f.fmt.pix.height = HEIGHT;
		f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
		f.fmt.pix.field = V4L2_FIELD_NONE;
		if (IO(pr->fd, S_FMT, &f, pr->node) == 0)
			break;
		if (errno != EBUSY || now_ms() > until) {
			say("producer: S_FMT 640x480 YUYV on %s: %s", pr->node, strerror(errno));
			return -1;
		}
		sleep_ms(50);
	}
	if (f.fmt.pix.width != WIDTH || f.fmt.pix.height != HEIGHT ||
	    f.fmt.pix.sizeimage < 24) {
		say("producer: %s took %ux%u, %u bytes", pr->node, f.fmt.pix.width,
		    f.fmt.pix.height, f.fmt.pix.sizeimage);
		return -1;
	}
	pr->size = f.fmt.pix.sizeimage;
	sp.parm.output.timeperframe.numerator = 1;
	sp.parm.output.timeperframe.denominator = 30;
	IO(pr->fd, S_PARM, &sp, pr->node);
	want = pr->calm ? 3 : between(&pr->r, 2, 4);
	n = reqbufs(pr->fd, pr->node, V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_MEMORY_MMAP, want);
	if (n < 2) {
		say("producer: REQBUFS %u on %s: %s", want, pr->node, n < 0 ? strerror(errno) :
		    "too few");
		return -1;
	}
	pr->nb = (unsigned int)n > 4 ? 4 : (unsigned int)n;
	for (i = 0; i < pr->nb; i++) {
		struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP };

		if (IO(pr->fd, QUERYBUF, &b, pr->node) < 0 || b.length < pr->size)
			return -1;
		pr->b[i].p = xmmap(b.length, PROT_READ | PROT_WRITE, pr->fd, b.m.offset, pr->node);
		if (pr->b[i].p == MAP_FAILED) {
			say("producer: mmap of backend buffer %u: %s", i, strerror(errno));
			return -1;
		}
		pr->b[i].len = b.length;
	}
	if (prod_start(pr) < 0) {
		say("producer: STREAMON on %s: %s", pr->node, strerror(errno));
		return -1;
	}
	return 0;
}

static void prod_dqbuf(struct prod *pr)
{
	for (;;) {
		struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP };

		if (IO(pr->fd, DQBUF, &b, pr->node) < 0)
			return;
		pr->dqbufs++;
		if (b.index < pr->nb)
			pr->b[b.index].queued = false;
	}
}

/* A frame through a backend buffer (no lend to be had). */
static bool prod_backend(struct prod *pr)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT, .memory = V4L2_MEMORY_MMAP };
	unsigned int i;
	int64_t t;

	prod_dqbuf(pr);
	for (i = 0; i < pr->nb && pr->b[i].queued; i++)
		;
	if (i == pr->nb)
		return false;
	pr->counter++;
	frame_body(pr->b[i].p, pr->size, pr->counter, SIZE_MAX);
	frame_seal(pr->b[i].p, pr->counter);
	t = now_ns();
	b.index = i;
	b.bytesused = (uint32_t)pr->size;
	b.field = V4L2_FIELD_NONE;
	b.timestamp.tv_sec = t / 1000000000;
	b.timestamp.tv_usec = (t % 1000000000) / 1000;
	if (IO(pr->fd, QBUF, &b, pr->node) < 0)
		return false;
	pr->b[i].queued = true;
	pr->backend++;
	return true;
}

/* Write the frame into lend @o and DELIVER it. */
static bool prod_deliver(struct prod *pr, struct lout *o)
{
	struct viacam_lend l = { .id = o->id };
	int err;

	pr->counter++;
	frame_body(o->m->p, pr->size, pr->counter, SIZE_MAX);
	frame_seal(o->m->p, pr->counter);
	l.bytesused = chance(&pr->r, 50) ? (uint32_t)pr->size : 0;
	l.timestamp = chance(&pr->r, 70) ? (uint64_t)now_ns() : 0;
	o->m->out = false;
	if (xioctl(pr->fd, VIACAM_IOC_DELIVER, &l, "DELIVER", pr->node) == 0) {
		pr->delivered++;
		return true;
	}
	err = errno;
	if (err == ESTALE)
		pr->estale++;
	prod_odd(pr, "DELIVER", err);
	return false;
}

static void prod_unlend(struct prod *pr, struct lout *o)
{
	struct viacam_lend l = { .id = o->id };
	int err;

	/* Now and then half a frame first: a buffer given back unfilled must not be shown. */
	if (chance(&pr->r, 40)) {
		frame_body(o->m->p, pr->size, pr->counter + 1000000, pr->size / 16);
		pr->partial++;
	}
	o->m->out = false;
	if (xioctl(pr->fd, VIACAM_IOC_UNLEND, &l, "UNLEND", pr->node) == 0) {
		pr->unlent++;
		return;
	}
	err = errno;
	if (err == ESTALE)
		pr->estale++;
	prod_odd(pr, "UNLEND", err);
}

static void prod_drop_out(struct prod *pr, unsigned int i)
{
	pr->out[i] = pr->out[--pr->nout];
}

/* LEND one buffer: 1 lent (in pr->out), 0 none to be had (EAGAIN), -1 other error. */
static int prod_lend(struct prod *pr, int64_t hold_ms)
{
	struct viacam_lend l = { 0 };
	struct lmap *m;
	int err;

	if (pr->nout >= sizeof(pr->out) / sizeof(pr->out[0]))
		return 0;
	if (xioctl(pr->fd, VIACAM_IOC_LEND, &l, "LEND", pr->node) < 0) {
		err = errno;
		if (err == EAGAIN) {
			pr->eagain++;
			return 0;
		}
		if (err == ENODEV)
			g_stop = 1;
		if (err == EBUSY && !pr->streaming)
			return -1;
		prod_odd(pr, "LEND", err);
		return -1;
	}
	pr->lends++;
	if (l.length < pr->size) {
		violation("producer: lend id %u is %u bytes, the format needs %zu", l.id, l.length,
			  pr->size);
		close(l.fd);
		xioctl(pr->fd, VIACAM_IOC_UNLEND, &l, "UNLEND", pr->node);
		return -1;
	}
	m = prod_map(pr, l.id, l.fd, l.length);
	if (!m) {
		/* As the uapi says: a lend we cannot map goes back. */
		xioctl(pr->fd, VIACAM_IOC_UNLEND, &l, "UNLEND", pr->node);
		return -1;
	}
	m->out = true;
	pr->out[pr->nout++] = (struct lout){ .id = l.id, .m = m, .due = now_ms() + hold_ms,
					     .since = now_ms() };
	return 1;
}

/* One frame slot. */
static void prod_tick(struct prod *pr)
{
	int64_t t = now_ms();
	bool made = false;
	unsigned int i;
	int r;

	if (!pr->streaming && prod_start(pr) < 0)
		return;
	/* Lends that are due: mostly delivered, some given back, some held longer. */
	for (i = 0; i < pr->nout;) {
		struct lout *o = &pr->out[i];

		if (o->due > t) {
			i++;
			continue;
		}
		if (!pr->calm && chance(&pr->r, 8) && t - o->since < 2500) {
			o->due = t + between(&pr->r, 50, 500);
			i++;
			continue;
		}
		if (pr->calm || chance(&pr->r, 86))
			made |= prod_deliver(pr, o);
		else
			prod_unlend(pr, o);
		prod_drop_out(pr, i);
	}
	if (!made) {
		int64_t hold = pr->calm || chance(&pr->r, 70) ? 0 : between(&pr->r, 10, 400);

		r = prod_lend(pr, hold);
		if (r == 1 && !hold) {
			prod_deliver(pr, &pr->out[pr->nout - 1]);
			prod_drop_out(pr, pr->nout - 1);
		} else if (r == 0) {
			prod_backend(pr);
		}
	}
	/* More lends out at once, held for a while. */
	if (!pr->calm && pr->streaming && chance(&pr->r, 25))
		for (i = between(&pr->r, 1, 2); i && pr->nout < 3; i--)
			if (prod_lend(pr, between(&pr->r, 20, 600)) != 1)
				break;
	prod_dqbuf(pr);
}

static int run_produce(const char *node, int secs, int fps, int pause_ms, bool calm)
{
	struct prod *pr = calloc(1, sizeof(*pr));
	struct stats st = { 0 };
	int64_t period = 1000 / (fps > 0 ? fps : 30), next, end, burst_end = 0;
	unsigned int i;

	if (!pr)
		return 2;
	my_st = &st;
	pr->node = node;
	pr->calm = calm;
	rng_init(&pr->r, g_seed, 0x70726f64);
	say("producer: seed=%" PRIu64 " on %s%s, %d fps, pauses %d-%d ms", g_seed, node,
	    calm ? " (calm)" : "", fps, pause_ms, 2 * pause_ms);
	if (prod_setup(pr) < 0)
		return 2;
	end = secs > 0 ? now_ms() + secs * 1000LL : INT64_MAX;
	next = now_ms();
	while (!g_stop && now_ms() < end) {
		prod_tick(pr);
		if (pr->calm) {
			next += period;
		} else if (burst_end > now_ms()) {
			next = now_ms();
			continue;
		} else {
			next += period;
			if (chance(&pr->r, 1) && chance(&pr->r, 30)) {
				/* Unpaced for a moment. */
				burst_end = now_ms() + between(&pr->r, 200, 1000);
				pr->bursts++;
				continue;
			}
			if (below(&pr->r, 1000) < 6) {
				/* A stall longer than the camera's timeout: repeats begin. */
				next = now_ms() + between(&pr->r, (uint32_t)pause_ms,
							  2 * (uint32_t)pause_ms);
				pr->pauses++;
			} else if (below(&pr->r, 1000) < 2) {
				prod_stop(pr);
				pr->restarts++;
				sleep_ms(between(&pr->r, 100, 2 * (uint32_t)pause_ms));
				next = now_ms();
			}
		}
		if (next < now_ms() - 500)
			next = now_ms();
		while (!g_stop && now_ms() < next)
			sleep_ms(next - now_ms() < 20 ? next - now_ms() : 20);
	}
	for (i = 0; i < pr->nout; i++)
		prod_unlend(pr, &pr->out[i]);
	pr->nout = 0;
	prod_stop(pr);
	for (i = 0; i < pr->nmaps; i++)
		prod_unmap(&pr->maps[i]);
	for (i = 0; i < pr->nb; i++)
		munmap(pr->b[i].p, pr->b[i].len);
	reqbufs(pr->fd, node, V4L2_BUF_TYPE_VIDEO_OUTPUT, V4L2_MEMORY_MMAP, 0);
	close(pr->fd);
	say("producer: %u frames: %" PRIu64 " delivered in lent buffers, %" PRIu64
	    " through backend buffers; %" PRIu64 " lends, %" PRIu64 " unlent (%" PRIu64
	    " half written first), %" PRIu64 " ESTALE, %" PRIu64 " EAGAIN, %" PRIu64
	    " backend DQBUFs, %" PRIu64 " stream restarts, %" PRIu64 " pauses, %" PRIu64
	    " bursts, %" PRIu64 " mappings evicted, %" PRIu64 " lends not mappable",
	    pr->counter, pr->delivered, pr->backend, pr->lends, pr->unlent, pr->partial,
	    pr->estale, pr->eagain, pr->dqbufs, pr->restarts, pr->pauses, pr->bursts,
	    pr->evicted, pr->mmap_fail);
	stats_print(&st, "producer");
	say("done, seed=%" PRIu64 ", %" PRIu64 " actions, %" PRIu64 " violations", g_seed,
	    st.actions, st.violations);
	free(pr);
	return st.violations ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * Consumer side shared by the victim and the checks: one MMAP stream
 */

struct cstream {
	const char *node;
	int fd;
	size_t size;		/* the format's sizeimage */
	unsigned int n;
	uint8_t *p[8];
	size_t len[8];
	int64_t on_ns;		/* STREAMON */
	bool any;
	bool old_seen;		/* this stream had a frame from before its STREAMON */
	/* what it got */
	uint64_t frames, real, neutral, bad, old;
};

static int cs_open(struct cstream *c)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	c->fd = xopen(c->node, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->fd < 0)
		return -1;
	/* Plain mode: the producer's format whatever we ask; declared (viacamd): ours. */
	f.fmt.pix.width = WIDTH;
	f.fmt.pix.height = HEIGHT;
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	IO(c->fd, S_FMT, &f, c->node);
	return 0;
}

/* REQBUFS(@want) MMAP, G_FMT, mmap read-only; the count, or -1 (errno). */
static int cs_buffers(struct cstream *c, unsigned int want)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	unsigned int i;
	int n;

	n = reqbufs(c->fd, c->node, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, want);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	/* The queue has buffers: the camera's format cannot change under us now. */
	if (IO(c->fd, G_FMT, &f, c->node) < 0)
		return -1;
	c->size = f.fmt.pix.sizeimage;
	c->n = (unsigned int)n > 8 ? 8 : (unsigned int)n;
	for (i = 0; i < c->n; i++) {
		struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP };

		if (IO(c->fd, QUERYBUF, &b, c->node) < 0)
			return -1;
		c->p[i] = xmmap(b.length, PROT_READ, c->fd, b.m.offset, c->node);
		if (c->p[i] == MAP_FAILED) {
			c->p[i] = NULL;
			return -1;
		}
		c->len[i] = b.length;
	}
	return n;
}

static int cs_qbuf(struct cstream *c, unsigned int i)
{
	struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				 .memory = V4L2_MEMORY_MMAP };

	return IO(c->fd, QBUF, &b, c->node);
}

static int cs_start(struct cstream *c)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		cs_qbuf(c, i);
	c->on_ns = now_ns();
	c->old_seen = false;
	return streamon(c->fd, c->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
}

static void cs_free(struct cstream *c)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (c->p[i])
			munmap(c->p[i], c->len[i]);
	c->n = 0;
	memset(c->p, 0, sizeof(c->p));
}

static void cs_close(struct cstream *c)
{
	cs_free(c);
	xclose(c->fd, c->node);
	c->fd = -1;
}

/*
 * Wait up to @timeout_ms for a frame, judge it and queue the buffer again. 1: a frame,
 * 0: none yet, -1: error (errno). @fresh_ms: a producer frame handed over more than this
 * long before STREAMON is a violation (0: not checked).
 */
static int cs_frame(struct cstream *c, int timeout_ms, int64_t fresh_ms, const char *who)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	struct verdict v;
	char what[256];
	int r;

	r = xpoll(c->fd, POLLIN, timeout_ms, c->node);
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	if (!r)
		return 0;
	if (IO(c->fd, DQBUF, &b, c->node) < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	c->frames++;
	if (b.index >= c->n || !c->p[b.index]) {
		violation("%s %s: DQBUF gave buffer %u of %u", who, c->node, b.index, c->n);
		return 1;
	}
	if (b.flags & V4L2_BUF_FLAG_ERROR)
		count("DQBUF-flag-error", 0);
	verify_frame(c->p[b.index], b.bytesused, c->size, c->any, &v);
	if (b.bytesused > c->len[b.index]) {
		v.kind = F_BAD;
		v.why = "bytesused is more than the buffer";
	}
	switch (v.kind) {
	case F_NEUTRAL:
		c->neutral++;
		break;
	case F_PRODUCER:
	case F_OTHER:
		c->real++;
		if (fresh_ms && v.kind == F_PRODUCER && v.stamp + fresh_ms * 1000000 < c->on_ns &&
		    !c->old_seen) {
			c->old_seen = true;
			violation("%s %s: frame %" PRIu64 " (sequence %u) is producer frame %u, "
				  "handed over %" PRId64 " ms before this stream's STREAMON: a new "
				  "stream got an old picture", who, c->node, c->frames, b.sequence,
				  v.counter, (c->on_ns - v.stamp) / 1000000);
			c->old++;
		}
		break;
	default:
		c->bad++;
		describe(what, sizeof(what), &v);
		violation("%s %s: frame %" PRIu64 " (sequence %u, buffer %u, bytesused %u of %zu) "
			  "is %s", who, c->node, c->frames, b.sequence, b.index, b.bytesused,
			  c->size, what);
		break;
	}
	cs_qbuf(c, b.index);
	return 1;
}

/* ------------------------------------------------------------------------
 * The victim
 */

static int run_victim(const char *node, int secs, bool any, int64_t fresh_ms, int stall_s)
{
	struct cstream c = { .node = node, .fd = -1, .any = any };
	struct stats st = { 0 };
	int64_t end = now_ms() + secs * 1000LL, stream_end, last_frame = now_ms();
	uint64_t streams = 0, busy = 0, stalls = 0, breaks = 0;
	struct rng r;
	int n;

	my_st = &st;
	rng_init(&r, g_seed, 0x76696374);
	say("victim: seed=%" PRIu64 " on %s for %d s%s", g_seed, node, secs,
	    any ? " (any producer: markers and lengths only)" : "");
	while (!g_stop && now_ms() < end) {
		if (c.fd < 0 && cs_open(&c) < 0) {
			sleep_ms(50);
			continue;
		}
		if (!c.n) {
			n = cs_buffers(&c, 4);
			if (n <= 0) {
				if (errno == ENOMEM)
					violation("victim %s: REQBUFS(4) MMAP: ENOMEM", node);
				busy++;
				cs_close(&c);
				sleep_ms(50);
				continue;
			}
		}
		if (cs_start(&c) < 0) {
			cs_close(&c);
			continue;
		}
		streams++;
		stream_end = now_ms() + between(&r, 300, 3000);
		while (!g_stop && now_ms() < stream_end && now_ms() < end) {
			int got = cs_frame(&c, 200, any ? 0 : fresh_ms, "victim");

			if (got > 0) {
				last_frame = now_ms();
			} else if (got < 0 && errno != EAGAIN) {
				say("victim: %s: %s", node, strerror(errno));
				break;
			} else if (now_ms() - last_frame > stall_s * 1000LL) {
				stalls++;
				violation("victim %s: no frame for %d s (stream %" PRIu64 ")", node,
					  stall_s, streams);
				last_frame = now_ms();
			}
		}
		streamoff(c.fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
		if (chance(&r, 50)) {
			reqbufs(c.fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, 0);
			cs_close(&c);
		}
		/*
		 * Now and then a break: a bridge that lends only while one node streams lends to
		 * the hostile consumers meanwhile, and the next stream starts while lends are out.
		 */
		if (chance(&r, 20)) {
			sleep_ms(between(&r, 500, 3000));
			breaks++;
			last_frame = now_ms();	/* a stall counts while streaming only */
		}
	}
	if (c.fd >= 0) {
		streamoff(c.fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
		cs_close(&c);
	}
	say("victim: %" PRIu64 " streams, %" PRIu64 " frames: %" PRIu64 " real, %" PRIu64
	    " neutral, %" PRIu64 " bad; %" PRIu64 " streams began with an old picture; %" PRIu64
	    " stalls, %" PRIu64 " times the queue was not to be had, %" PRIu64 " breaks", streams,
	    c.frames, c.real, c.neutral, c.bad, c.old, stalls, busy, breaks);
	stats_print(&st, "victim");
	say("done, seed=%" PRIu64 ", %" PRIu64 " actions, %" PRIu64 " violations", g_seed,
	    st.actions, st.violations);
	return st.violations ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * The hostile consumers
 */

enum { R_STREAM, R_STALE, R_CHURN, R_READ, R_CTL, R_PEEK, R_COUNT };
static const char *const recipe_names[R_COUNT] = { "stream", "stale", "churn", "read", "ctl",
						   "peek" };
static const unsigned int recipe_weight[R_COUNT] = { 34, 22, 22, 8, 7, 7 };

/* What the hostile processes tell the parent (shared memory). */
struct hshared {
	uint64_t actions, violations, sessions[R_COUNT], enomem, churn_rounds, stale_rounds,
		 bad_qbufs, scribbles, wr_refused;
	uint64_t refail[16];	/* per -n node: failed QBUFs of buffers that had memory */
	uint64_t ms[R_COUNT];	/* time spent per recipe */
	int done;
};

struct smap {
	uint8_t *p;
	size_t len;
	const uint8_t *mark;
	char what[96];		/* where the mapping came from */
};

/* For the crash report: this thread's part, and the mapping it is writing into. */
static _Thread_local const struct smap *t_scrib;
static _Thread_local const char *t_role = "main";

/* The line of /proc/self/maps that holds @addr, into @out (crash path: no stdio). */
static void crash_mapping(uintptr_t addr, char *out, size_t len)
{
	static char buf[65536];
	ssize_t n = 0, r;
	char *line, *end;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	snprintf(out, len, "in no mapping");
	if (fd < 0)
		return;
	while (n < (ssize_t)sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	buf[n] = 0;
	for (line = buf; line && *line; line = end ? end + 1 : NULL) {
		unsigned long lo, hi;

		end = strchr(line, '\n');
		if (end)
			*end = 0;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
			snprintf(out, len, "in mapping %.200s", line);
			return;
		}
	}
}

static void on_crash(int sig, siginfo_t *si, void *ucv)
{
	const ucontext_t *uc = ucv;
	const struct smap *m = t_scrib;
	char line[700], where[256], what[200] = "";
	int n;

	crash_mapping((uintptr_t)si->si_addr, where, sizeof(where));
	if (m)
		snprintf(what, sizeof(what), " while writing marker blocks into %s (mapped at %p, "
			 "%zu bytes)", m->what, (void *)m->p, m->len);
	n = snprintf(line, sizeof(line), "%s: CRASH: signal %d (code %d) in the %s thread at rip "
		     "%#llx, address %p %s%s (seed=%" PRIu64 ")\n", g_who, sig, si->si_code, t_role,
		     (unsigned long long)uc->uc_mcontext.gregs[REG_RIP], si->si_addr, where, what,
		     g_seed);
	if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) < 0)
		_exit(5);
	_exit(5);
}

static void crash_handler(void)
{
	struct sigaction sa = { 0 };

	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

struct hproc {
	int idx;
	struct rng r;
	char **nodes;
	int nnodes;
	char **exps;
	int nexps;
	const char *peek;
	unsigned int recipes;	/* bit per recipe */
	int64_t end;
	bool verbose;
	int devnull, memfd;
	uint8_t *guard, *ro;	/* PROT_NONE and read-only memory, a frame long */
	size_t badlen;
	/* the actor's current fd, for the poker */
	pthread_rwlock_t sl;
	int sfd, smem;
	unsigned int sn;
	const char *snode;
	/* the scribbler's mappings */
	pthread_mutex_t ml;
	struct smap maps[MAXSMAPS];
	int nmaps;
	struct hshared *sh;
	struct stats st[3];
};

struct pent {
	int fd;
	size_t len;
	bool rw;
	uint8_t *map;
	struct smap sm;		/* its writable mapping, for the actor's own scribbles */
};

struct hsess {
	struct hproc *h;
	const char *node;
	int fd;
	int mem;
	unsigned int n;
	size_t size;
	uint8_t *mm[MAXB];
	size_t mmlen[MAXB];
	struct smap mmw[MAXB];	/* writable mappings (.p set) */
	uint8_t *ua;		/* USERPTR memory */
	size_t ualen, stride;
	struct pent pool[MAXPOOL];
	int npool;
	int dof[MAXB];		/* pool entry of each DMABUF buffer */
	bool had[MAXB];		/* queued with good memory since its last failure */
	int nidx;		/* which -n node (-1: the peek node) */
	bool busy;		/* REQBUFS said EBUSY: another process has the queue */
};

static void scrib_add(struct hproc *h, const struct smap *m)
{
	pthread_mutex_lock(&h->ml);
	if (h->nmaps < MAXSMAPS)
		h->maps[h->nmaps++] = *m;
	pthread_mutex_unlock(&h->ml);
}

static void scrib_del(struct hproc *h, uint8_t *p)
{
	int i;

	pthread_mutex_lock(&h->ml);
	for (i = 0; i < h->nmaps; i++) {
		if (h->maps[i].p == p) {
			h->maps[i] = h->maps[--h->nmaps];
			break;
		}
	}
	pthread_mutex_unlock(&h->ml);
}

/* Marker blocks over [off, off+len) of a mapping (16-byte aligned). */
static void scribble(uint8_t *p, size_t maplen, size_t off, size_t len, const uint8_t *mark)
{
	size_t o;

	off &= ~(size_t)15;
	if (off >= maplen)
		return;
	if (len > maplen - off)
		len = maplen - off;
	for (o = off; o + 16 <= off + len; o += 16)
		memcpy(p + o, mark, 16);
}

static void scribble_some(struct rng *r, uint8_t *p, size_t len, const uint8_t *mark)
{
	unsigned int k = below(r, 100);

	if (k < 55)
		scribble(p, len, below(r, 4096), between(r, 16, 512), mark);
	else if (k < 95)
		scribble(p, len, below(r, (uint32_t)len), between(r, 16, 8192), mark);
	else
		scribble(p, len, 0, len, mark);
}

/*
 * The actor writes into its own writable buffers (MMAP buffers, dma-bufs) for @ms, queued
 * or not, as fast as it can: the first 4 KiB mostly, where a lend's frame is written first.
 */
static void scribble_own(struct hsess *s, int64_t ms)
{
	struct hproc *h = s->h;
	int64_t end = now_ms() + ms;
	const struct smap *all[MAXB + MAXPOOL];
	unsigned int n = 0, i;

	for (i = 0; i < MAXB; i++)
		if (s->mmw[i].p)
			all[n++] = &s->mmw[i];
	for (i = 0; i < (unsigned int)s->npool; i++)
		if (s->pool[i].sm.p)
			all[n++] = &s->pool[i].sm;
	if (!n) {
		sleep_ms(ms);
		return;
	}
	while (now_ms() < end) {
		for (i = 0; i < n; i++) {
			t_scrib = all[i];
			atomic_signal_fence(memory_order_seq_cst);
			scribble(all[i]->p, all[i]->len, below(&h->r, 4096), 64, all[i]->mark);
			t_scrib = NULL;
		}
		h->sh->scribbles += n;
		/* often, not all the time: the producer and the victim need the CPUs too */
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	}
}

static void *scribbler(void *arg)
{
	struct hproc *h = arg;
	struct rng r;

	my_st = &h->st[2];
	t_role = "scribbler";
	rng_init(&r, g_seed, 0x736372ull + (uint64_t)h->idx * 7919);
	while (now_ms() < h->end && !g_stop) {
		sleep_ms(between(&r, 1, 3));
		pthread_mutex_lock(&h->ml);
		if (h->nmaps) {
			struct smap *m = &h->maps[below(&r, (uint32_t)h->nmaps)];

			t_scrib = m;
			atomic_signal_fence(memory_order_seq_cst);
			scribble_some(&r, m->p, m->len, m->mark);
			t_scrib = NULL;
			h->sh->scribbles++;
		}
		pthread_mutex_unlock(&h->ml);
	}
	return NULL;
}

/* Calls at the actor's current fd from another thread, at any moment. */
static void *poker(void *arg)
{
	struct hproc *h = arg;
	struct rng r;

	my_st = &h->st[1];
	t_role = "poker";
	wd_register();
	rng_init(&r, g_seed, 0x706f6b ^ ((uint64_t)h->idx << 20));
	while (now_ms() < h->end && !g_stop) {
		sleep_ms(between(&r, 2, 40));
		if (pthread_rwlock_tryrdlock(&h->sl))
			continue;
		if (h->sfd >= 0) {
			int fd = h->sfd, mem = h->smem, k = (int)below(&r, 100);
			unsigned int idx = below(&r, h->sn + 2);
			const char *node = h->snode;
			struct v4l2_buffer b = { .index = idx, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						 .memory = (uint32_t)mem };

			if (k < 40) {
				/* Only when a buffer is there: the fd may be a blocking one. */
				if (xpoll(fd, POLLIN, 0, node) > 0)
					IO(fd, DQBUF, &b, node);
			} else if (k < 55) {
				IO(fd, QUERYBUF, &b, node);
			} else if (k < 63) {
				xpoll(fd, POLLIN | POLLPRI, (int)below(&r, 20), node);
			} else if (k < 71) {
				streamoff(fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
			} else if (k < 78) {
				streamon(fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
			} else if (k < 86) {
				struct v4l2_exportbuffer e = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
							       .index = idx, .flags = O_RDWR };

				if (IO(fd, EXPBUF, &e, node) == 0)
					close(e.fd);
			} else if (k < 93) {
				struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

				IO(fd, G_FMT, &f, node);
			} else if (mem == V4L2_MEMORY_MMAP) {
				IO(fd, QBUF, &b, node);
			}
		}
		pthread_rwlock_unlock(&h->sl);
	}
	return NULL;
}

static void sess_publish(struct hsess *s)
{
	struct hproc *h = s->h;

	pthread_rwlock_wrlock(&h->sl);
	h->sfd = s->fd;
	h->smem = s->mem;
	h->sn = s->n;
	h->snode = s->node;
	pthread_rwlock_unlock(&h->sl);
}

static int sess_open(struct hproc *h, struct hsess *s, const char *node)
{
	int flags = O_CLOEXEC | (chance(&h->r, 50) ? O_NONBLOCK : 0), i;

	flags |= chance(&h->r, 6) ? O_RDONLY : O_RDWR;
	memset(s, 0, sizeof(*s));
	s->h = h;
	s->node = node;
	s->nidx = -1;
	for (i = 0; i < h->nnodes; i++)
		if (h->nodes[i] == node)
			s->nidx = i;
	s->mem = V4L2_MEMORY_MMAP;
	for (i = 0; i < MAXB; i++)
		s->dof[i] = i;
	s->fd = xopen(node, flags);
	if (s->fd < 0)
		return -1;
	sess_publish(s);
	return 0;
}

static size_t sess_fmt_size(struct hsess *s)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	if (IO(s->fd, G_FMT, &f, s->node) < 0 || f.fmt.pix.sizeimage < 16)
		return (size_t)WIDTH * HEIGHT * 2;
	return f.fmt.pix.sizeimage;
}

static void pool_close(struct hsess *s)
{
	int i;

	for (i = 0; i < s->npool; i++) {
		if (s->pool[i].map) {
			scrib_del(s->h, s->pool[i].map);
			munmap(s->pool[i].map, s->pool[i].len);
		}
		close(s->pool[i].fd);
		s->pool[i].sm.p = NULL;
	}
	s->npool = 0;
}

static void pool_add(struct hsess *s, int fd, bool rw, const uint8_t *mark)
{
	struct hproc *h = s->h;
	struct pent *e;
	off_t len;

	if (s->npool >= MAXPOOL) {
		close(fd);
		return;
	}
	len = lseek(fd, 0, SEEK_END);
	e = &s->pool[s->npool++];
	*e = (struct pent){ .fd = fd, .len = len > 0 ? (size_t)len : 0, .rw = rw };
	/* Mapped (writable when it may be) for the scribbler, now and then. */
	if (e->len && chance(&h->r, 45)) {
		void *p = xmmap(e->len, PROT_READ | (rw ? PROT_WRITE : 0), fd, 0, "dma-buf");

		if (p != MAP_FAILED) {
			e->map = p;
			if (rw) {
				e->sm = (struct smap){ .p = e->map, .len = e->len, .mark = mark };
				snprintf(e->sm.what, sizeof(e->sm.what), "a dma-buf (%s) queued on %s",
					 mark == mark_expbuf ? "EXPBUF of its own buffer" :
					 "another camera's or a freed buffer", s->node);
				scrib_add(h, &e->sm);
			}
		}
	}
}

/* dma-bufs of MMAP buffers of @fd's queue (exported, then the queue freed). */
static void pool_export(struct hsess *s, int fd, const char *node, unsigned int want, bool free)
{
	struct hproc *h = s->h;
	unsigned int i;
	int n;

	n = reqbufs(fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, want);
	if (n < 0 && errno == ENOMEM)
		h->sh->enomem++;
	for (i = 0; n > 0 && i < (unsigned int)n; i++) {
		bool rw = chance(&h->r, 88);
		struct v4l2_exportbuffer e = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .index = i,
					       .flags = (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC };

		if (IO(fd, EXPBUF, &e, node) == 0)
			pool_add(s, e.fd, rw, mark_dmabuf);
	}
	if (free)
		reqbufs(fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, 0);
}

/* dma-bufs from another camera's capture node (-x). */
static void pool_from_exporter(struct hsess *s, unsigned int want)
{
	struct hproc *h = s->h;
	int tries, fd;

	for (tries = 0; tries < 3 && h->nexps; tries++) {
		const char *node = h->exps[below(&h->r, (uint32_t)h->nexps)];

		fd = xopen(node, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		pool_export(s, fd, node, want, chance(&h->r, 85));
		xclose(fd, node);
		if (s->npool)
			return;
	}
}

static const char *mem_name(int mem)
{
	return mem >= 1 && mem <= 4 ? capnames[mem] : "?";
}

enum { Q_GOOD, Q_BAD };

/* QBUF of buffer @i: good memory, or (Q_BAD) one of the ways to get it wrong. */
static int sess_qbuf(struct hsess *s, unsigned int i, int how)
{
	struct hproc *h = s->h;
	struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				 .memory = (uint32_t)s->mem };
	unsigned int k = below(&h->r, 100);
	int r;

	if (s->mem == V4L2_MEMORY_USERPTR && s->ua) {
		b.m.userptr = (unsigned long)(s->ua + (size_t)(i % s->n) * s->stride);
		b.length = (uint32_t)s->size;
		if (how == Q_BAD) {
			if (k < 55) {
				b.length = 1;
			} else if (k < 70) {
				b.length = between(&h->r, 2, (uint32_t)s->size - 1);
			} else if (k < 78) {
				b.m.userptr = (unsigned long)h->guard;
			} else if (k < 86) {
				b.m.userptr = (unsigned long)h->ro;
			} else if (k < 92) {
				static const unsigned long bad[] = { 4096, 0xdead0000ul,
								     0xffff888000000000ul,
								     0x00007ffffffff000ul };

				b.m.userptr = bad[below(&h->r, 4)];
			} else if (k < 96) {
				b.length = 0x7ffff000;
			} else {
				b.m.userptr += between(&h->r, 1, PAGE - 1);
			}
		} else if (k < 3) {
			b.m.userptr = (unsigned long)s->ua;	/* two buffers, one memory */
		}
	} else if (s->mem == V4L2_MEMORY_DMABUF) {
		int e = s->npool ? s->dof[i % MAXB] % s->npool : -1;

		b.m.fd = e >= 0 ? s->pool[e].fd : -1;
		b.length = chance(&h->r, 50) || e < 0 ? 0 : (uint32_t)s->pool[e].len;
		if (how == Q_BAD) {
			int j;

			if (k < 30) {
				b.m.fd = -1;
			} else if (k < 42) {
				b.m.fd = h->devnull;
			} else if (k < 52) {
				b.m.fd = h->memfd;
			} else if (k < 67) {
				/* A dma-buf too short for the format, if we have one. */
				b.m.fd = h->devnull;
				for (j = 0; j < s->npool; j++)
					if (s->pool[j].len < s->size)
						b.m.fd = s->pool[j].fd;
			} else if (k < 77) {
				b.m.fd = 900 + (int)below(&h->r, 100);	/* not open */
			} else if (k < 92) {
				b.length = between(&h->r, 1, (uint32_t)s->size - 1);
			} else {
				b.m.fd = s->fd;
			}
		} else if (k < 4 && s->npool) {
			b.m.fd = s->pool[below(&h->r, (uint32_t)s->npool)].fd;	/* another's */
		}
	} else if (how == Q_BAD) {
		b.index = s->n + below(&h->r, 3);
	}
	r = IO(s->fd, QBUF, &b, s->node);
	if (how == Q_BAD)
		h->sh->bad_qbufs++;
	if (s->mem != V4L2_MEMORY_MMAP && i < MAXB) {
		/* vb2 let go of the memory of a buffer whose QBUF failed */
		if (r < 0 && s->had[i] && s->nidx >= 0 && s->nidx < 16)
			h->sh->refail[s->nidx]++;
		if (b.index == i)
			s->had[i] = r == 0;
	}
	return r;
}

/* REQBUFS, or CREATE_BUFS now and then; buffers as the memory type needs them. */
static int sess_alloc(struct hsess *s, int mem, unsigned int want)
{
	struct hproc *h = s->h;
	unsigned int i;
	int n;

	s->mem = mem;
	s->size = sess_fmt_size(s);
	if (chance(&h->r, 25)) {
		struct v4l2_create_buffers cb = { .count = want, .memory = (uint32_t)mem };

		cb.format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		IO(s->fd, G_FMT, &cb.format, s->node);
		if (chance(&h->r, 30))
			cb.format.fmt.pix.sizeimage = (uint32_t)s->size *
						       (chance(&h->r, 50) ? 2 : 1) +
						       (chance(&h->r, 30) ? 4096 : 0);
		else if (chance(&h->r, 10))
			cb.format.fmt.pix.sizeimage = (uint32_t)(s->size / 2);
		n = IO(s->fd, CREATE_BUFS, &cb, s->node) < 0 ? -1 : (int)(cb.index + cb.count);
	} else {
		/* Another process's queue now: it may let go in a moment. */
		for (i = between(&h->r, 0, 4);; i--) {
			n = reqbufs(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE, mem, want);
			if (n >= 0 || errno != EBUSY || !i || now_ms() > h->end)
				break;
			sleep_ms(between(&h->r, 10, 80));
		}
	}
	if (n < 0 && errno == ENOMEM)
		h->sh->enomem++;
	s->busy = n < 0 && errno == EBUSY;
	if (n <= 0)
		return -1;
	s->n = (unsigned int)n > MAXB ? MAXB : (unsigned int)n;
	memset(s->had, 0, sizeof(s->had));
	sess_publish(s);
	if (mem == V4L2_MEMORY_MMAP) {
		bool rw = chance(&h->r, 75);

		for (i = 0; i < s->n; i++) {
			struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						 .memory = V4L2_MEMORY_MMAP };
			void *p;

			if (s->mm[i] || IO(s->fd, QUERYBUF, &b, s->node) < 0)
				continue;
			p = xmmap(b.length, PROT_READ | (rw ? PROT_WRITE : 0), s->fd, b.m.offset,
				  s->node);
			if (p == MAP_FAILED && rw) {
				h->sh->wr_refused++;
				p = xmmap(b.length, PROT_READ, s->fd, b.m.offset, s->node);
				rw = false;
			}
			if (p == MAP_FAILED)
				continue;
			s->mm[i] = p;
			s->mmlen[i] = b.length;
			if (rw) {
				struct smap *m = &s->mmw[i];

				*m = (struct smap){ .p = p, .len = b.length, .mark = mark_mmap };
				snprintf(m->what, sizeof(m->what), "MMAP buffer %u of %s", i, s->node);
				scrib_add(h, m);
			}
		}
	} else if (mem == V4L2_MEMORY_USERPTR && !s->ua) {
		s->stride = ((s->size + PAGE - 1) & ~(size_t)(PAGE - 1)) + PAGE;
		s->ualen = s->stride * MAXB;
		s->ua = mmap(NULL, s->ualen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
		if (s->ua == MAP_FAILED)
			s->ua = NULL;
	}
	return 0;
}

static void sess_unmap(struct hsess *s, unsigned int i)
{
	if (!s->mm[i])
		return;
	scrib_del(s->h, s->mm[i]);
	munmap(s->mm[i], s->mmlen[i]);
	s->mm[i] = NULL;
	s->mmw[i].p = NULL;
}

static void sess_end(struct hsess *s)
{
	struct hproc *h = s->h;
	bool close_first = chance(&h->r, 50);
	unsigned int i;
	int fd = s->fd;

	if (close_first) {
		pthread_rwlock_wrlock(&h->sl);
		h->sfd = -1;
		xclose(fd, s->node);
		pthread_rwlock_unlock(&h->sl);
	}
	for (i = 0; i < MAXB; i++)
		sess_unmap(s, i);
	pool_close(s);
	if (s->ua)
		munmap(s->ua, s->ualen);
	s->ua = NULL;
	if (!close_first) {
		pthread_rwlock_wrlock(&h->sl);
		h->sfd = -1;
		xclose(fd, s->node);
		pthread_rwlock_unlock(&h->sl);
	}
	s->fd = -1;
}

/*
 * A DQBUF (O_NONBLOCK, or blocking once poll says a buffer is there): its index, -1 if none
 * came, -2 if the queue does not stream (or is not ours).
 */
static int sess_dqbuf(struct hsess *s, int wait_ms)
{
	struct hproc *h = s->h;
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = (uint32_t)s->mem };
	int r = xpoll(s->fd, POLLIN | (chance(&h->r, 20) ? POLLPRI : 0), wait_ms, s->node);

	if (r <= 0 && chance(&h->r, 80))
		return -1;
	if (IO(s->fd, DQBUF, &b, s->node) < 0)
		return errno == EAGAIN || errno == EINTR ? -1 : -2;
	if (b.bytesused > b.length && s->mem != V4L2_MEMORY_DMABUF)
		violation("hostile %s: DQBUF of a %s buffer: bytesused %u > length %u", s->node,
			  mem_name(s->mem), b.bytesused, b.length);
	return (int)b.index;
}

static void ctl_one(struct hsess *s)
{
	struct hproc *h = s->h;
	static const uint32_t fourccs[] = { V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12,
					    V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_RGB24,
					    V4L2_PIX_FMT_YUV420, 0, 0xffffffffu };
	static const uint32_t sizes[] = { 0, 1, 16, 320, 240, 640, 480, 8192, 65535,
					  0xffffffffu };
	static const uint32_t ivals[][2] = { { 67108864, 1 }, { 1, 67108864 }, { 0, 0 },
					     { 1, 0 }, { 0, 1 }, { 0xffffffffu, 1 },
					     { 1, 0xffffffffu }, { 1, 30 }, { 1, 15 },
					     { 1001, 30000 } };
	unsigned int k = below(&h->r, 12);

	if (k < 3) {
		struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		f.fmt.pix.pixelformat = fourccs[below(&h->r, 7)];
		f.fmt.pix.width = chance(&h->r, 20) ? (uint32_t)rnd(&h->r) : sizes[below(&h->r, 10)];
		f.fmt.pix.height = chance(&h->r, 20) ? (uint32_t)rnd(&h->r) :
				   sizes[below(&h->r, 10)];
		f.fmt.pix.sizeimage = chance(&h->r, 30) ? (uint32_t)rnd(&h->r) : 0;
		if (k == 0)
			IO(s->fd, S_FMT, &f, s->node);
		else if (k == 1)
			IO(s->fd, TRY_FMT, &f, s->node);
		else
			IO(s->fd, G_FMT, &f, s->node);
	} else if (k < 6) {
		struct v4l2_streamparm sp = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
		unsigned int i = below(&h->r, 10);

		sp.parm.capture.timeperframe.numerator = ivals[i][0];
		sp.parm.capture.timeperframe.denominator = ivals[i][1];
		sp.parm.capture.readbuffers = below(&h->r, 64);
		if (k == 5)
			IO(s->fd, G_PARM, &sp, s->node);
		else
			IO(s->fd, S_PARM, &sp, s->node);
	} else if (k == 6) {
		struct v4l2_fmtdesc fd = { .index = below(&h->r, 4),
					   .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		IO(s->fd, ENUM_FMT, &fd, s->node);
	} else if (k == 7) {
		struct v4l2_frmsizeenum fs = { .index = below(&h->r, 3),
					       .pixel_format = fourccs[below(&h->r, 7)] };

		IO(s->fd, ENUM_FRAMESIZES, &fs, s->node);
	} else if (k == 8) {
		struct v4l2_frmivalenum fi = { .index = below(&h->r, 3),
					       .pixel_format = fourccs[below(&h->r, 2)],
					       .width = sizes[below(&h->r, 10)],
					       .height = sizes[below(&h->r, 10)] };

		IO(s->fd, ENUM_FRAMEINTERVALS, &fi, s->node);
	} else if (k == 9) {
		struct v4l2_capability cap;

		IO(s->fd, QUERYCAP, &cap, s->node);
	} else if (k == 10) {
		struct v4l2_queryctrl qc = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };
		struct v4l2_control c = { .id = V4L2_CID_BRIGHTNESS,
					  .value = (int32_t)rnd(&h->r) };

		IO(s->fd, QUERYCTRL, &qc, s->node);
		IO(s->fd, S_CTRL, &c, s->node);
	} else {
		struct v4l2_event_subscription sub = { .type = V4L2_EVENT_CTRL,
						       .id = V4L2_CID_BRIGHTNESS };
		struct v4l2_event ev;

		if (chance(&h->r, 50))
			sub.type = V4L2_EVENT_SOURCE_CHANGE;
		IO(s->fd, SUBSCRIBE_EVENT, &sub, s->node);
		if (xpoll(s->fd, POLLPRI, 0, s->node) > 0)
			IO(s->fd, DQEVENT, &ev, s->node);
	}
}

static void read_some(struct hsess *s, uint8_t *buf, size_t buflen)
{
	struct hproc *h = s->h;
	static const size_t lens[] = { 1, 100, 4096 };
	size_t len = chance(&h->r, 60) ? s->size : lens[below(&h->r, 3)];

	if (len > buflen)
		len = buflen;
	if (xpoll(s->fd, POLLIN, (int)below(&h->r, 150), s->node) > 0 || chance(&h->r, 20))
		xread(s->fd, buf, len, s->node);
}

static void requeue_all(struct hsess *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		sess_qbuf(s, i, chance(&s->h->r, 92) ? Q_GOOD : Q_BAD);
}

/* The dma-bufs a DMABUF session queues: another camera's, or its own node's. */
static void sess_pool(struct hsess *s, unsigned int want, bool writable_big)
{
	struct hproc *h = s->h;
	int i, j;

	if (chance(&h->r, 72))
		pool_from_exporter(s, want);
	if (!s->npool)
		pool_export(s, s->fd, s->node, want, true);
	if (!writable_big)
		return;
	/* Those the bridge can lend (writable, long enough) first. */
	for (i = 0, j = 0; i < s->npool; i++) {
		if (s->pool[i].rw && s->pool[i].len >= s->size) {
			struct pent t = s->pool[j];

			s->pool[j++] = s->pool[i];
			s->pool[i] = t;
		}
	}
	for (i = 0; i < MAXB; i++)
		s->dof[i] = j ? i % j : i;
}

static void recipe_stream(struct hsess *s)
{
	struct hproc *h = s->h;
	unsigned int k = below(&h->r, 100), want, steps, i;
	int mem = k < 40 ? V4L2_MEMORY_MMAP : k < 65 ? V4L2_MEMORY_USERPTR : V4L2_MEMORY_DMABUF;
	uint8_t *rbuf = NULL;

	if (chance(&h->r, 20))
		ctl_one(s);
	s->size = sess_fmt_size(s);
	want = chance(&h->r, 85) ? between(&h->r, 1, 8) : between(&h->r, 9, 40);
	if (mem == V4L2_MEMORY_DMABUF)
		sess_pool(s, want > 8 ? 8 : want, chance(&h->r, 70));
	if (sess_alloc(s, mem, want) < 0)
		return;
	if (chance(&h->r, 20))
		streamon(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
	requeue_all(s);
	streamon(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
	steps = between(&h->r, 10, 250);
	for (; steps && now_ms() < h->end && !g_stop; steps--) {
		k = below(&h->r, 100);
		if (k < 58) {
			int idx = sess_dqbuf(s, (int)below(&h->r, 120));

			if (idx == -2 && chance(&h->r, 50))
				sleep_ms(between(&h->r, 1, 20));
			if (idx < 0 || (unsigned int)idx >= s->n)
				continue;
			if (s->mmw[idx].p && chance(&h->r, 30)) {
				/* its own buffer, just dequeued: writable if mapped so */
				t_scrib = &s->mmw[idx];
				atomic_signal_fence(memory_order_seq_cst);
				scribble_some(&h->r, s->mmw[idx].p, s->mmw[idx].len, mark_mmap);
				t_scrib = NULL;
			}
			if (chance(&h->r, 4) && s->mem == V4L2_MEMORY_DMABUF && s->npool)
				s->dof[idx] = (int)below(&h->r, (uint32_t)s->npool);
			if (chance(&h->r, 93))
				sess_qbuf(s, (unsigned int)idx, chance(&h->r, 94) ? Q_GOOD : Q_BAD);
			if (chance(&h->r, 12))
				scribble_own(s, between(&h->r, 1, 10));
		} else if (k < 63) {
			streamoff(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
			if (chance(&h->r, 70)) {
				requeue_all(s);
				streamon(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
			}
		} else if (k < 68) {
			requeue_all(s);
		} else if (k < 72) {
			ctl_one(s);
		} else if (k < 75) {
			if (!rbuf)
				rbuf = malloc(s->size);
			if (rbuf)
				read_some(s, rbuf, s->size);
		} else if (k < 78) {
			struct v4l2_exportbuffer e = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						       .index = below(&h->r, s->n + 1),
						       .flags = O_RDWR | O_CLOEXEC };

			if (IO(s->fd, EXPBUF, &e, s->node) == 0) {
				if (chance(&h->r, 50))
					pool_add(s, e.fd, true, mark_expbuf);
				else
					close(e.fd);
			}
		} else if (k < 81) {
			struct v4l2_buffer b = { .index = below(&h->r, s->n + 1),
						 .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						 .memory = (uint32_t)s->mem };

			IO(s->fd, QUERYBUF, &b, s->node);
		} else if (k < 86) {
			/* Lends go out and come back meanwhile. */
			if (chance(&h->r, 50))
				sleep_ms(between(&h->r, 10, 300));
			else
				scribble_own(s, between(&h->r, 10, 300));
		} else if (k < 88) {
			struct v4l2_create_buffers cb = { .count = between(&h->r, 1, 4),
							  .memory = (uint32_t)s->mem };

			cb.format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
			IO(s->fd, G_FMT, &cb.format, s->node);
			if (IO(s->fd, CREATE_BUFS, &cb, s->node) == 0 && cb.index + cb.count > s->n &&
			    s->mem != V4L2_MEMORY_MMAP)
				s->n = cb.index + cb.count > MAXB ? MAXB : cb.index + cb.count;
		} else if (k < 90) {
			/* EBUSY while streaming; else a new set (the old memory goes). */
			if (chance(&h->r, 50))
				reqbufs(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE, s->mem, 0);
			else
				reqbufs(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE, s->mem,
					between(&h->r, 1, 8));
		} else if (k < 93) {
			sess_unmap(s, below(&h->r, s->n));
		} else if (k < 96 && s->mem == V4L2_MEMORY_DMABUF && s->npool) {
			i = below(&h->r, s->n);
			s->dof[i] = (int)below(&h->r, (uint32_t)s->npool);
			sess_qbuf(s, i, Q_GOOD);
		} else {
			xpoll(s->fd, POLLIN | POLLPRI | POLLOUT, 0, s->node);
		}
	}
	free(rbuf);
	/* How it ends: each of these has had a bug behind it. */
	k = below(&h->r, 100);
	if (k < 24)
		return;		/* close() with buffers queued, perhaps lent */
	if (k < 76)
		streamoff(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
	if (k >= 48 && k < 76)
		for (i = 0; i < s->n; i++)
			sess_qbuf(s, i, Q_BAD);
	if (k < 66 || k >= 76)
		reqbufs(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE, s->mem, 0);
}

/*
 * Issue 31's use-after-free: a DMABUF stream the producer lends from, then at a random
 * moment (a lend may be out) STREAMOFF, a failing QBUF of every buffer, REQBUFS(0).
 */
static void recipe_stale(struct hsess *s)
{
	struct hproc *h = s->h;
	unsigned int rounds = between(&h->r, 1, 3), i, want;
	int64_t until;

	s->size = sess_fmt_size(s);
	want = between(&h->r, 2, 6);
	sess_pool(s, want, true);
	for (; rounds && now_ms() < h->end && !g_stop; rounds--) {
		if (sess_alloc(s, V4L2_MEMORY_DMABUF, want) < 0)
			return;
		for (i = 0; i < s->n; i++)
			sess_qbuf(s, i, Q_GOOD);
		streamon(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
		until = now_ms() + between(&h->r, 30, 1500);
		while (now_ms() < until && now_ms() < h->end) {
			int idx = sess_dqbuf(s, (int)below(&h->r, 60));

			if (idx == -2)
				break;	/* the poker stopped it, or STREAMON failed */
			if (idx >= 0 && (unsigned int)idx < s->n)
				sess_qbuf(s, (unsigned int)idx, Q_GOOD);
			if (chance(&h->r, 25))
				scribble_own(s, between(&h->r, 1, 10));
		}
		streamoff(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
		for (i = 0; i < s->n; i++)
			sess_qbuf(s, i, Q_BAD);
		reqbufs(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_DMABUF, 0);
		h->sh->stale_rounds++;
		if (chance(&h->r, 30))
			break;	/* close() after */
	}
}

/*
 * Issue 31's denial of service: USERPTR (or DMABUF) buffers queued with good memory, the
 * stream stopped, then queued with a length of 1 (or too short, or bad memory, or a bad fd),
 * round after round. (A DMABUF QBUF costs little; a USERPTR one pins a frame's pages.)
 */
static void recipe_churn(struct hsess *s)
{
	struct hproc *h = s->h;
	unsigned int rounds = between(&h->r, 10, 150), i;
	int mem = chance(&h->r, 70) ? V4L2_MEMORY_DMABUF : V4L2_MEMORY_USERPTR;
	unsigned int want = chance(&h->r, 75) ? between(&h->r, 12, 32) : between(&h->r, 1, 11);

	s->size = sess_fmt_size(s);
	if (mem == V4L2_MEMORY_DMABUF) {
		sess_pool(s, between(&h->r, 1, 4), true);
		if (!s->npool || s->pool[0].len < s->size)
			mem = V4L2_MEMORY_USERPTR;
	}
	if (sess_alloc(s, mem, want) < 0 || (mem == V4L2_MEMORY_USERPTR && !s->ua))
		return;
	for (; rounds && now_ms() < h->end && !g_stop; rounds--) {
		for (i = 0; i < s->n; i++)
			sess_qbuf(s, i, Q_GOOD);
		if (chance(&h->r, 15)) {
			streamon(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
			for (i = between(&h->r, 0, 3); i; i--)
				sess_dqbuf(s, 40);
		}
		streamoff(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
		for (i = 0; i < s->n; i++)
			sess_qbuf(s, i, Q_BAD);
		h->sh->churn_rounds++;
	}
	if (chance(&h->r, 50))
		reqbufs(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE, mem, 0);
}

static void recipe_read(struct hsess *s)
{
	struct hproc *h = s->h;
	unsigned int n = between(&h->r, 2, 20);
	uint8_t *buf;

	s->size = sess_fmt_size(s);
	buf = malloc(s->size * 2);
	if (!buf)
		return;
	while (n-- && now_ms() < h->end) {
		read_some(s, buf, s->size * 2);
		if (chance(&h->r, 8))
			streamoff(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
		if (chance(&h->r, 8))
			reqbufs(s->fd, s->node, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, 2);
	}
	free(buf);
}

static void recipe_ctl(struct hsess *s)
{
	unsigned int n = between(&s->h->r, 5, 40);

	while (n--)
		ctl_one(s);
}

/* The innocent consumer's node: nothing that could take its queue (no REQBUFS, read, poll). */
static void recipe_peek(struct hsess *s)
{
	struct hproc *h = s->h;
	unsigned int n = between(&h->r, 3, 25);

	while (n--) {
		unsigned int k = below(&h->r, 10);

		if (k < 6) {
			ctl_one(s);
		} else if (k < 8) {
			struct v4l2_buffer b = { .index = below(&h->r, 6),
						 .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						 .memory = V4L2_MEMORY_MMAP };

			IO(s->fd, QUERYBUF, &b, s->node);
		} else {
			xpoll(s->fd, POLLPRI, 0, s->node);
		}
	}
}

static unsigned int pick_recipe(struct hproc *h)
{
	unsigned int total = 0, i, k;

	for (i = 0; i < R_COUNT; i++)
		if (h->recipes & (1u << i) && (i != R_PEEK || h->peek))
			total += recipe_weight[i];
	if (!total)
		return R_CTL;
	k = below(&h->r, total);
	for (i = 0; i < R_COUNT; i++) {
		if (!(h->recipes & (1u << i)) || (i == R_PEEK && !h->peek))
			continue;
		if (k < recipe_weight[i])
			return i;
		k -= recipe_weight[i];
	}
	return R_CTL;
}

static void actor(struct hproc *h)
{
	struct hsess s;
	int again = -1;		/* a recipe to run again on another node: its queue was busy */

	while (now_ms() < h->end && !g_stop) {
		unsigned int rec = again >= 0 ? (unsigned int)again : pick_recipe(h);
		const char *node;
		int64_t t0;

		/*
		 * The first node is the one the bridge lends from first (stale wants lends);
		 * churn goes more to the last; the rest to this process's own node mostly.
		 */
		if (rec == R_PEEK)
			node = h->peek;
		else if (again >= 0)
			node = h->nodes[(s.nidx + 1 + (int)below(&h->r, (uint32_t)h->nnodes - 1)) %
					h->nnodes];
		else if (rec == R_STALE && chance(&h->r, 80))
			node = h->nodes[0];
		else if (rec == R_CHURN && chance(&h->r, 85))
			node = h->nodes[h->nnodes - 1];
		else if (chance(&h->r, 70))
			node = h->nodes[h->idx % h->nnodes];
		else
			node = h->nodes[below(&h->r, (uint32_t)h->nnodes)];
		if (sess_open(h, &s, node) < 0) {
			sleep_ms(20);
			continue;
		}
		h->sh->sessions[rec]++;
		t0 = now_ms();
		if (h->verbose)
			say("hostile[%d]: %s on %s", h->idx, recipe_names[rec], node);
		switch (rec) {
		case R_STREAM:
			recipe_stream(&s);
			break;
		case R_STALE:
			recipe_stale(&s);
			break;
		case R_CHURN:
			recipe_churn(&s);
			break;
		case R_READ:
			recipe_read(&s);
			break;
		case R_PEEK:
			recipe_peek(&s);
			break;
		default:
			recipe_ctl(&s);
			break;
		}
		sess_end(&s);
		h->sh->ms[rec] += (uint64_t)(now_ms() - t0);
		again = s.busy && again < 0 && h->nnodes > 1 && s.nidx >= 0 ? (int)rec : -1;
		if (chance(&h->r, 15))
			sleep_ms(between(&h->r, 1, 100));
	}
}

static int hostile_child(struct hproc *h, const char *user)
{
	pthread_t ts, tp;
	struct stats all = { 0 };
	int i;

	drop_privileges(user);
	snprintf(g_who, sizeof(g_who), "vchostile[%d]", h->idx);
	wd_start();
	crash_handler();
	t_role = "actor";
	my_st = &h->st[0];
	rng_init(&h->r, g_seed + (uint64_t)h->idx, 0x686f73);
	h->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	h->memfd = memfd_create("vchostile", MFD_CLOEXEC);
	if (h->memfd >= 0 && ftruncate(h->memfd, 1 << 20) < 0)
		h->memfd = -1;
	h->badlen = ((size_t)WIDTH * HEIGHT * 2 + PAGE) & ~(size_t)(PAGE - 1);
	h->guard = mmap(NULL, h->badlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	h->ro = mmap(NULL, h->badlen, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->guard == MAP_FAILED || h->ro == MAP_FAILED) {
		say("no memory for the bad addresses");
		return 2;
	}
	pthread_rwlock_init(&h->sl, NULL);
	pthread_mutex_init(&h->ml, NULL);
	h->sfd = -1;
	say("hostile process %d (pid %d, uid %d, gid %d): seed %" PRIu64 "+%d, nodes from %s",
	    h->idx, (int)getpid(), (int)getuid(), (int)getgid(), g_seed, h->idx,
	    h->nodes[h->idx % h->nnodes]);
	if (pthread_create(&ts, NULL, scribbler, h) || pthread_create(&tp, NULL, poker, h)) {
		say("pthread_create failed");
		return 2;
	}
	actor(h);
	pthread_join(tp, NULL);
	pthread_join(ts, NULL);
	for (i = 0; i < 3; i++)
		stats_merge(&all, &h->st[i]);
	stats_print(&all, "hostile");
	h->sh->actions = all.actions;
	h->sh->violations = all.violations;
	h->sh->done = 1;
	return all.violations ? 1 : 0;
}

static int run_hostile(struct hproc *tmpl, int procs, int secs, const char *user)
{
	struct hshared *sh;
	uint64_t actions = 0, violations = 0, sess[R_COUNT] = { 0 }, enomem = 0, churn = 0,
		 stale = 0, bad = 0, scrib = 0, refused = 0, refail[16] = { 0 }, ms[R_COUNT] = { 0 };
	char per_node[512];
	size_t len = 0;
	int i, rc = 0, hung = 0, died = 0, status;
	pid_t pids[32];

	if (procs < 1 || procs > 32) {
		say("-P must be 1..32");
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh) * (size_t)procs, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	say("hostile: seed=%" PRIu64 ", %d processes for %d s on %d capture node(s) (%s first),"
	    " %d exporter node(s)%s%s, as %s", g_seed, procs, secs, tmpl->nnodes,
	    tmpl->nodes[0], tmpl->nexps, tmpl->peek ? ", peeking at " : "",
	    tmpl->peek ? tmpl->peek : "", user ? user : "the caller");
	tmpl->end = now_ms() + secs * 1000LL;
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			say("fork: %s", strerror(errno));
			return 2;
		}
		if (!pids[i]) {
			struct hproc *h = calloc(1, sizeof(*h));

			if (!h)
				_exit(2);
			*h = *tmpl;
			h->idx = i;
			h->sh = &sh[i];
			fflush(stdout);
			_exit(hostile_child(h, user));
		}
	}
	for (i = 0; i < procs; i++) {
		if (waitpid(pids[i], &status, 0) < 0)
			continue;
		if (WIFSIGNALED(status) || WEXITSTATUS(status) == 5) {
			say("hostile process %d died (%s %d)", i, WIFSIGNALED(status) ? "signal" :
			    "crash handler, exit", WIFSIGNALED(status) ? WTERMSIG(status) : 5);
			died++;
		} else if (WEXITSTATUS(status) == 3) {
			hung++;
		} else if (WEXITSTATUS(status) == 2) {
			rc = 2;
		}
	}
	for (i = 0; i < procs; i++) {
		unsigned int k;

		actions += sh[i].actions;
		violations += sh[i].violations;
		for (k = 0; k < R_COUNT; k++) {
			sess[k] += sh[i].sessions[k];
			ms[k] += sh[i].ms[k];
		}
		for (k = 0; k < 16; k++)
			refail[k] += sh[i].refail[k];
		enomem += sh[i].enomem;
		churn += sh[i].churn_rounds;
		stale += sh[i].stale_rounds;
		bad += sh[i].bad_qbufs;
		scrib += sh[i].scribbles;
		refused += sh[i].wr_refused;
	}
	say("hostile: sessions: stream %" PRIu64 ", stale %" PRIu64 ", churn %" PRIu64
	    ", read %" PRIu64 ", ctl %" PRIu64 ", peek %" PRIu64 "; %" PRIu64
	    " churn rounds, %" PRIu64 " stale rounds, %" PRIu64 " bad QBUFs, %" PRIu64
	    " scribbles, %" PRIu64 " writable mmaps refused, %" PRIu64 " ENOMEM from REQBUFS/"
	    "CREATE_BUFS", sess[R_STREAM], sess[R_STALE], sess[R_CHURN], sess[R_READ],
	    sess[R_CTL], sess[R_PEEK], churn, stale, bad, scrib, refused, enomem);
	say("hostile: seconds per session kind: stream %.1f, stale %.1f, churn %.1f, read %.1f, "
	    "ctl %.1f, peek %.1f", ms[R_STREAM] / 1e3, ms[R_STALE] / 1e3, ms[R_CHURN] / 1e3,
	    ms[R_READ] / 1e3, ms[R_CTL] / 1e3, ms[R_PEEK] / 1e3);
	per_node[0] = 0;
	for (i = 0; i < tmpl->nnodes && i < 16 && len + 64 < sizeof(per_node); i++)
		len += (size_t)snprintf(per_node + len, sizeof(per_node) - len, " %s %" PRIu64,
					tmpl->nodes[i], refail[i]);
	say("hostile: failed QBUFs of buffers that had memory (vb2 lets go of it):%s", per_node);
	say("done, seed=%" PRIu64 ", %" PRIu64 " actions, %" PRIu64 " violations", g_seed,
	    actions, violations);
	if (hung)
		return 3;
	if (died)
		return 5;
	return rc ? rc : violations ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * The invariants
 */

/* One capture node, as a fresh consumer: 0 if all is well. */
static int check_node(const char *node, bool any, int secs, struct stats *st)
{
	struct cstream c = { .node = node, .fd = -1, .any = any };
	struct v4l2_create_buffers cb = { .count = 2, .memory = V4L2_MEMORY_MMAP };
	char mmap_res[160] = "", read_res[160] = "", cb_res[96] = "";
	uint64_t v0 = st->violations;
	int64_t end;
	uint8_t *buf = NULL;
	int n, fails = 0, got = 0;
	ssize_t r;

	/* REQBUFS(4) MMAP and a stream. */
	if (cs_open(&c) < 0) {
		say("check %s: FAIL: open: %s", node, strerror(errno));
		return 1;
	}
	n = cs_buffers(&c, 4);
	if (n != 4) {
		say("check %s: FAIL: REQBUFS(4) MMAP of a fresh open: %s", node,
		    n < 0 ? strerror(errno) : "fewer buffers");
		if (n < 0)
			snprintf(mmap_res, sizeof(mmap_res), "REQBUFS(4) %s", strerrorname_np(errno));
		fails++;
	} else if (cs_start(&c) < 0) {
		say("check %s: FAIL: STREAMON: %s", node, strerror(errno));
		fails++;
	} else {
		end = now_ms() + secs * 1000LL;
		while (now_ms() < end && (c.real < 3 || c.frames < 5) && !g_stop)
			if (cs_frame(&c, 500, 0, "check") < 0)
				break;
		if (c.real < 3) {
			say("check %s: FAIL: %" PRIu64 " frames in %d s, %" PRIu64
			    " of them real (want 3)", node, c.frames, secs, c.real);
			fails++;
		}
		snprintf(mmap_res, sizeof(mmap_res), "REQBUFS(4) MMAP: %" PRIu64 " frames (%" PRIu64
			 " real, %" PRIu64 " neutral, %" PRIu64 " bad)", c.frames, c.real,
			 c.neutral, c.bad);
		streamoff(c.fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE);
	}
	cs_free(&c);
	reqbufs(c.fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, 0);
	cs_close(&c);

	/* CREATE_BUFS(2). */
	if (cs_open(&c) == 0) {
		cb.format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		IO(c.fd, G_FMT, &cb.format, node);
		n = IO(c.fd, CREATE_BUFS, &cb, node);
		if (n < 0 || cb.count != 2) {
			say("check %s: FAIL: CREATE_BUFS(2) MMAP of a fresh open: %s", node,
			    n < 0 ? strerror(errno) : "fewer buffers");
			snprintf(cb_res, sizeof(cb_res), "CREATE_BUFS(2) failed");
			fails++;
		} else {
			snprintf(cb_res, sizeof(cb_res), "CREATE_BUFS(2) ok");
		}
		reqbufs(c.fd, node, V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP, 0);
		cs_close(&c);
	}

	/* read(): two whole frames. */
	if (cs_open(&c) == 0) {
		struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		IO(c.fd, G_FMT, &f, node);
		c.size = f.fmt.pix.sizeimage;
		buf = c.size ? aligned_alloc(PAGE, (c.size + PAGE - 1) & ~(size_t)(PAGE - 1)) : NULL;
		end = now_ms() + secs * 1000LL;
		r = 0;
		while (buf && got < 2 && now_ms() < end && !g_stop) {
			struct verdict v;

			n = xpoll(c.fd, POLLIN, 500, node);
			if (n < 0 && errno != EINTR)
				break;
			if (n <= 0)
				continue;
			r = xread(c.fd, buf, c.size, node);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r != (ssize_t)c.size)
				break;
			got++;
			verify_frame(buf, (size_t)r, c.size, any, &v);
			if (v.kind == F_BAD) {
				char what[256];

				describe(what, sizeof(what), &v);
				violation("check %s: read() frame %d is %s", node, got, what);
			}
		}
		if (got < 2) {
			say("check %s: FAIL: read() of a fresh open: %d whole frames (last: %s)",
			    node, got, r < 0 ? strerror(errno) : "short or none");
			fails++;
		}
		snprintf(read_res, sizeof(read_res), "read(): %d frames", got);
		free(buf);
		cs_close(&c);
	}
	if (st->violations > v0)
		fails++;
	say("check %s: %s: %s; %s; %s", node, fails ? "FAIL" : "ok", mmap_res, cb_res, read_res);
	return fails ? 1 : 0;
}

static int run_check(char **nodes, int nnodes, const char *backend, bool any, int secs,
		     const char *user)
{
	struct stats st = { 0 };
	pid_t prod = -1, cons;
	int status, rc = 0, i;

	say("check: seed=%" PRIu64 ", %d capture node(s)%s%s, as %s", g_seed, nnodes,
	    backend ? ", producer on " : "", backend ? backend : "", user ? user : "the caller");
	if (backend) {
		prod = fork();
		if (prod == 0) {
			snprintf(g_who, sizeof(g_who), "vchostile[check-producer]");
			wd_start();
			_exit(run_produce(backend, 600, 30, 0, true));
		}
	}
	cons = fork();
	if (cons == 0) {
		drop_privileges(user);
		snprintf(g_who, sizeof(g_who), "vchostile[check]");
		wd_start();
		my_st = &st;
		if (backend) {
			int fd = open(backend, O_RDWR | O_CLOEXEC);

			if (fd >= 0 || errno != EACCES) {
				say("check: FAIL: uid %d opened the backend node %s: %s",
				    (int)getuid(), backend, fd >= 0 ? "it may" : strerror(errno));
				rc = 1;
			} else {
				say("check: uid %d cannot open the backend node (EACCES): as it "
				    "should be", (int)getuid());
			}
			if (fd >= 0)
				close(fd);
		}
		for (i = 0; i < nnodes; i++)
			rc |= check_node(nodes[i], any, secs, &st);
		stats_print(&st, "check");
		say("done, seed=%" PRIu64 ", %" PRIu64 " actions, %" PRIu64 " violations",
		    g_seed, st.actions, st.violations);
		_exit(rc);
	}
	if (cons < 0 || waitpid(cons, &status, 0) < 0) {
		rc = 2;
	} else if (WIFSIGNALED(status)) {
		say("check: the consumer died of signal %d", WTERMSIG(status));
		rc = 5;
	} else {
		rc = WEXITSTATUS(status);
	}
	if (prod > 0) {
		kill(prod, SIGTERM);
		if (waitpid(prod, &status, 0) == prod && (WIFSIGNALED(status) ||
							  WEXITSTATUS(status) == 3 ||
							  WEXITSTATUS(status) == 2)) {
			say("check: the producer failed (%s %d)", WIFSIGNALED(status) ?
			    "signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) :
			    WEXITSTATUS(status));
			rc = rc ? rc : 1;
		}
	}
	say("check: %s", rc ? "FAILED" : "every node works for a fresh unprivileged consumer");
	return rc;
}

/* dma-bufs the kernel knows of (debugfs), or -1; @detail gets the first objects' lines. */
static int dmabuf_count(char *detail, size_t dlen)
{
	static const char *path = "/sys/kernel/debug/dma_buf/bufinfo";
	char line[512];
	size_t used = 0;
	int n = -1, objs = 0;
	FILE *f = fopen(path, "re");

	if (!f && errno == ENOENT) {
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
		f = fopen(path, "re");
	}
	if (!f)
		return -1;
	if (detail && dlen)
		detail[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long size, flags, mode, cnt;
		char exp[64];

		if (!strncmp(line, "Total ", 6)) {
			if (strstr(line, " objects"))
				sscanf(line, "Total %d", &n);
			continue;
		}
		/* size (decimal), flags, mode (hex), file count (decimal), exporter, ... */
		if (sscanf(line, "%lu %lx %lx %lu %63s", &size, &flags, &mode, &cnt, exp) == 5) {
			objs++;
			if (detail && used + 80 < dlen)
				used += (size_t)snprintf(detail + used, dlen - used,
							 " [%s %lu bytes, %lu refs]", exp, size, cnt);
		}
	}
	fclose(f);
	return n >= 0 ? n : objs;
}

static int run_dmabufs(int expect, int wait_s)
{
	char detail[1024];
	int64_t end = now_ms() + wait_s * 1000LL;
	int n;

	for (;;) {
		n = dmabuf_count(detail, sizeof(detail));
		if (n < 0) {
			say("dma-bufs: cannot read /sys/kernel/debug/dma_buf/bufinfo: %s",
			    strerror(errno));
			return 2;
		}
		if (expect < 0 || n == expect || now_ms() >= end)
			break;
		sleep_ms(200);
	}
	if (expect < 0) {
		printf("%d\n", n);
		return 0;
	}
	if (n != expect) {
		say("dma-bufs: %d, expected %d: %d left behind:%s", n, expect, n - expect, detail);
		return 1;
	}
	say("dma-bufs: %d, as before", n);
	return 0;
}

/* ------------------------------------------------------------------------
 * main
 */

static void usage(void)
{
	fprintf(stderr,
		"usage: vchostile produce -b BACKEND [-t S] [-s SEED] [-r FPS] [-p PAUSE_MS] [--calm]\n"
		"       vchostile hostile -n CAPNODE... [-x EXPORTNODE...] [-k PEEKNODE] [-P PROCS]\n"
		"                         [-t S] [-s SEED] [-u USER] [--recipes LIST] [-v]\n"
		"       vchostile victim -c CAPNODE [-t S] [-s SEED] [-a] [-f FRESH_MS] [-S STALL_S]"
		" [-u USER]\n"
		"       vchostile check -c CAPNODE... [-b BACKEND] [-a] [-u USER] [-T S]\n"
		"       vchostile dmabufs [-e EXPECTED] [-W S]\n"
		"  every mode: -w HANG_SECONDS (default 30)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", 1, NULL, 'b' }, { "node", 1, NULL, 'n' }, { "capture", 1, NULL, 'c' },
		{ "export", 1, NULL, 'x' }, { "peek", 1, NULL, 'k' }, { "procs", 1, NULL, 'P' },
		{ "seconds", 1, NULL, 't' }, { "seed", 1, NULL, 's' }, { "user", 1, NULL, 'u' },
		{ "hang", 1, NULL, 'w' }, { "verbose", 0, NULL, 'v' }, { "any", 0, NULL, 'a' },
		{ "fresh-ms", 1, NULL, 'f' }, { "stall", 1, NULL, 'S' }, { "rate", 1, NULL, 'r' },
		{ "pause-ms", 1, NULL, 'p' }, { "calm", 0, NULL, 'C' }, { "expect", 1, NULL, 'e' },
		{ "wait", 1, NULL, 'W' }, { "recipes", 1, NULL, 'R' }, { "timeout", 1, NULL, 'T' },
		{ NULL, 0, NULL, 0 }
	};
	char *nodes[16], *exps[16];
	int nnodes = 0, nexps = 0, secs = -1, procs = 3, fps = 30, pause_ms = 2000,
	    stall = 10, expect = -1, wait_s = 10, tsecs = 40, o;
	const char *backend = NULL, *peek = NULL, *user = NULL, *recipes = NULL;
	bool verbose = false, any = false, calm = false, seeded = false;
	int64_t fresh = 1500;
	struct hproc tmpl;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	g_mode = argv[1];
	argv++;
	argc--;
	while ((o = getopt_long(argc, argv, "b:n:c:x:k:P:t:s:u:w:vaf:S:r:p:Ce:W:R:T:", opts,
				NULL)) != -1) {
		switch (o) {
		case 'b':
			backend = optarg;
			break;
		case 'n':
		case 'c':
			if (nnodes < 16)
				nodes[nnodes++] = optarg;
			break;
		case 'x':
			if (nexps < 16)
				exps[nexps++] = optarg;
			break;
		case 'k':
			peek = optarg;
			break;
		case 'P':
			procs = atoi(optarg);
			break;
		case 't':
			secs = atoi(optarg);
			break;
		case 's':
			g_seed = strtoull(optarg, NULL, 0);
			seeded = true;
			break;
		case 'u':
			user = optarg;
			break;
		case 'w':
			wd_hang_ms = atoll(optarg) * 1000;
			break;
		case 'v':
			verbose = true;
			break;
		case 'a':
			any = true;
			break;
		case 'f':
			fresh = atoll(optarg);
			break;
		case 'S':
			stall = atoi(optarg);
			break;
		case 'r':
			fps = atoi(optarg);
			break;
		case 'p':
			pause_ms = atoi(optarg);
			break;
		case 'C':
			calm = true;
			break;
		case 'e':
			expect = atoi(optarg);
			break;
		case 'W':
			wait_s = atoi(optarg);
			break;
		case 'R':
			recipes = optarg;
			break;
		case 'T':
			tsecs = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (!seeded)
		g_seed = (uint64_t)time(NULL) * 1000 + (uint64_t)(now_ns() / 1000000 % 1000);

	if (!strcmp(g_mode, "dmabufs"))
		return run_dmabufs(expect, wait_s);
	/* check and hostile start theirs in the processes they fork (none before a fork). */
	if (!strcmp(g_mode, "produce")) {
		if (!backend)
			usage();
		wd_start();
		return run_produce(backend, secs, fps, pause_ms, calm);
	}
	if (!strcmp(g_mode, "victim")) {
		if (nnodes != 1)
			usage();
		if (user && strcmp(user, "root"))
			drop_privileges(user);
		wd_start();
		return run_victim(nodes[0], secs > 0 ? secs : 30, any, any ? 0 : fresh, stall);
	}
	if (!strcmp(g_mode, "check")) {
		if (!nnodes)
			usage();
		return run_check(nodes, nnodes, backend, any, tsecs, user);
	}
	if (!strcmp(g_mode, "hostile")) {
		unsigned int i;

		if (!nnodes)
			usage();
		memset(&tmpl, 0, sizeof(tmpl));
		tmpl.nodes = nodes;
		tmpl.nnodes = nnodes;
		tmpl.exps = exps;
		tmpl.nexps = nexps;
		tmpl.peek = peek;
		tmpl.verbose = verbose;
		tmpl.recipes = (1u << R_COUNT) - 1;
		if (recipes) {
			tmpl.recipes = 0;
			for (i = 0; i < R_COUNT; i++) {
				const char *p = strstr(recipes, recipe_names[i]);
				size_t l = strlen(recipe_names[i]);

				if (p && (p == recipes || p[-1] == ',') && (!p[l] || p[l] == ','))
					tmpl.recipes |= 1u << i;
			}
			if (!tmpl.recipes)
				usage();
		}
		if (!user && (getuid() == 0 || geteuid() == 0)) {
			say("refusing to play a hostile consumer as root: give -u USER");
			return 2;
		}
		return run_hostile(&tmpl, procs, secs > 0 ? secs : 30, user);
	}
	usage();
	return 2;
}
