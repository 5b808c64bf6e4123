// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcfuzz.c - seeded ioctl/file-operation fuzzer for the viacam bridge, run inside the
 * test guest (as root: it drives /dev/viacam too).
 *
 *   vcfuzz [-s SEED] [-t SECONDS] [-j THREADS] [-c CAMERAS] [-w HANG_SECONDS] [-v]
 *
 *   -s SEED     PRNG seed (default: time-based); printed first ("vcfuzz: seed=N"). Fuzz
 *               thread i draws its decisions from seed+i, so a seed replays the same
 *               decision sequence per thread (the outcomes still depend on timing).
 *   -t SECONDS  how long to fuzz (default 60)
 *   -j THREADS  fuzz threads (default 4); a producer and a consumer thread keep the
 *               first camera's data path busy on top of them
 *   -c CAMERAS  at most this many cameras may exist at once (default: cameras at start + 4);
 *               VIACAM_IOC_ADD is only issued below that
 *   -w SECONDS  a system call that has not returned after this long is a hang (default 20)
 *   -v          print every action (very verbose)
 *
 * Targets: every capture and backend node of the cameras listed by /dev/viacam, and
 * /dev/viacam itself. Actions: open/close with random flags, ioctls with random command
 * numbers (V4L2 'V' range and the driver-private range, random sizes and directions) and
 * with every ioctl the nodes implement (random bytes, or structurally valid payloads with
 * random fields), stream set-up recipes, mmap/munmap of random offsets and lengths,
 * read()/write() of random sizes, poll, EXPBUF and DMABUF import, camera ADD/REMOVE.
 *
 * Pointers handed to the kernel are either into memory that exists only for the kernel to
 * scribble on (a per-thread payload arena, a shared scratch area for USERPTR buffers and
 * read(), our mmaps of driver buffers) or deliberately bad ones (NULL, low, kernel,
 * non-canonical, PROT_NONE guard pages, read-only page, an unmapped hole (where a later
 * driver mapping may land), ranges that run off the end of the arena). Never into the PRNG
 * state, the stack or the heap. ADD and REMOVE only ever get arguments whose content we
 * know (or that cannot be read), so the camera bound and the protected camera hold.
 *
 * Blocking calls (DQBUF/DQEVENT/read on fds without O_NONBLOCK) are interrupted by the
 * watchdog thread with SIGUSR1 after a moment; a call that still has not returned after
 * -w seconds is reported as a hang (seed, thread, its last action) and vcfuzz exits 3.
 *
 * At the end it removes the cameras it added, re-adds the ones it removed, clears the
 * declarations, prints action counts and the errno distribution, and "vcfuzz: done,
 * seed=N". Exit status: 0 when nothing went wrong from user space's point of view; 1 when
 * a user-space-visible rule was broken (an internal kernel errno such as ERESTARTSYS or
 * ENOIOCTLCMD leaked, EIO instead of ENODEV from a removed camera, an unknown ioctl did not
 * give ENOTTY, ioctl returned > 0, capture sequence numbers out of order or bytesused >
 * length, the camera set could not be restored); 3 on a hang (5 if vcfuzz itself crashed). The kernel log is judged
 * by the test harness.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/viacam.h>

#define MAX_THREADS	32
#define MAX_NODES	(2 * VIACAM_MAX_CAMERAS + 1)
#define NSLOTS		32	/* shared pool of open file descriptors */
#define NMAPS		64	/* shared table of our mmaps */
#define NDMABUFS	16	/* exported dmabuf fds kept for import */
#define ARENA_LEN	(256u << 10)
#define SCRATCH_LEN	(16u << 20)
#define NERRNO		600
#define PAGE		4096u
#define KICK_MS		300	/* a call blocked this long gets SIGUSR1 */

/* ------------------------------------------------------------------------
 * PRNG: xorshift64*, seeded through splitmix64. Its state lives in the heap-allocated thread
 * context, which is never handed to the kernel.
 */

struct rng {
	uint64_t s;
};

static void rng_seed(struct rng *r, uint64_t seed)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	r->s = (z ^ (z >> 31)) | 1;
}

static uint64_t rnd(struct rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

static const uint32_t interesting32[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 257,
	1023, 1024, 4095, 4096, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000u,
	0xfffffffeu, 0xffffffffu,
};

/* An "interesting" 32-bit value: boundaries, small numbers, or anything. */
static uint32_t r32(struct rng *r)
{
	switch (below(r, 4)) {
	case 0:
		return interesting32[below(r, sizeof(interesting32) / sizeof(interesting32[0]))];
	case 1:
		return below(r, 16);
	case 2:
		return (uint32_t)rnd(r);
	default:
		return below(r, 2048);
	}
}

static void fill_random(struct rng *r, void *p, size_t len)
{
	uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)rnd(r);
}

/* Random bytes, zeros, or a sequence of interesting 32-bit words. */
static void fill_payload(struct rng *r, void *p, size_t len)
{
	uint8_t *b = p;

	switch (below(r, 3)) {
	case 0:
		memset(p, 0, len);
		break;
	case 1:
		fill_random(r, p, len);
		break;
	default:
		for (size_t i = 0; i < len; i += 4) {
			uint32_t v = r32(r);

			memcpy(b + i, &v, len - i < 4 ? len - i : 4);
		}
	}
}

/* ------------------------------------------------------------------------
 * Global state
 */

enum kind { K_CTL, K_CAP, K_OUT };
static const char *const kind_name[] = { "ctl", "cap", "out" };

struct node {
	enum kind kind;
	uint32_t cam;
	char path[32];
};

struct slot {
	int fd;			/* -1: free */
	int users;		/* threads using fd right now */
	bool closing;		/* close when the last user is done */
	struct node node;
	int flags;
};

struct map {
	void *addr;		/* NULL: free */
	size_t len;
	int prot;
};

struct tctx;

static struct {
	uint64_t seed;
	double end_ms;
	int nthreads;
	unsigned int max_cams;
	int hang_s;
	bool verbose;
	atomic_bool stop;

	pthread_mutex_t nodes_lock;
	struct node nodes[MAX_NODES];
	int nnodes;
	int ctl_fd;			/* discovery only, under nodes_lock */
	uint32_t protected_cam;		/* the data path's camera: never removed */
	char protected_path[32];	/* its capture node at the start */
	uint32_t initial_ids[VIACAM_MAX_CAMERAS];
	unsigned int ninitial;

	pthread_mutex_t add_lock;	/* ADD is checked against max_cams under it */

	pthread_mutex_t slots_lock;
	struct slot slots[NSLOTS];

	pthread_mutex_t maps_lock;
	struct map maps[NMAPS];

	pthread_mutex_t dmabuf_lock;
	int dmabufs[NDMABUFS];

	/* Memory that exists only for the kernel: */
	uint8_t *scratch;		/* USERPTR buffers and read() targets (async writes) */
	uint8_t *ro_page;		/* PROT_READ */
	uint8_t *hole;			/* an unmapped page between two PROT_NONE pages */
	uint8_t *none_page;		/* PROT_NONE */

	atomic_long errnos[NERRNO];
	atomic_long violations;
	atomic_long frames_in, frames_out, seq_bad, data_restarts;
	pthread_mutex_t print_lock;

	struct tctx *threads[MAX_THREADS + 2];
	int nctx;
} g = {
	.nodes_lock = PTHREAD_MUTEX_INITIALIZER,
	.add_lock = PTHREAD_MUTEX_INITIALIZER,
	.slots_lock = PTHREAD_MUTEX_INITIALIZER,
	.maps_lock = PTHREAD_MUTEX_INITIALIZER,
	.dmabuf_lock = PTHREAD_MUTEX_INITIALIZER,
	.print_lock = PTHREAD_MUTEX_INITIALIZER,
	.ctl_fd = -1,
	.hang_s = 20,
};

enum action {
	A_OPEN, A_CLOSE, A_IOCTL_RANDOM, A_IOCTL_BYTES, A_IOCTL_STRUCT, A_RECIPE, A_STREAM,
	A_DQBUF, A_MMAP, A_MUNMAP, A_TOUCH, A_READ, A_WRITE, A_POLL, A_DMABUF, A_CTL,
	A_COUNT
};
static const char *const action_name[A_COUNT] = {
	"open", "close", "ioctl-rand", "ioctl-bytes", "ioctl-struct", "recipe", "stream",
	"dqbuf", "mmap", "munmap", "touch", "read", "write", "poll", "dmabuf", "ctl",
};
static const unsigned int action_weight[A_COUNT] = {
	6, 5, 12, 10, 40, 4, 4, 5, 5, 4, 2, 3, 3, 3, 3, 4,
};
static atomic_long action_count[A_COUNT];

struct tctx {
	int idx;
	const char *role;
	pthread_t th;
	pid_t tid;
	struct rng rng;
	uint8_t *arena;			/* ARENA_LEN bytes between two PROT_NONE pages */
	long ops;

	/* Watchdog view: when the current call started (0: none), what it is. */
	pthread_mutex_t what_lock;
	char what[256];
	char lastfail[300];		/* data threads: why the last set-up failed */
	atomic_uint_fast64_t call_start_ns;
	atomic_uint_fast64_t last_kick_ns;
};

/*
 * The fuzzing calls go straight to the kernel: a sanitizer's interceptors would check our
 * deliberately bad buffers themselves and abort (the ASan build of vcfuzz).
 */
static long sys_ioctl(int fd, unsigned long cmd, uintptr_t arg)
{
	return syscall(SYS_ioctl, fd, cmd, arg);
}

static long sys_read(int fd, uintptr_t buf, size_t len)
{
	return syscall(SYS_read, fd, buf, len);
}

static long sys_write(int fd, uintptr_t buf, size_t len)
{
	return syscall(SYS_write, fd, buf, len);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double now_ms(void)
{
	return (double)now_ns() / 1e6;
}

static bool stopping(void)
{
	return atomic_load(&g.stop);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&g.print_lock);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	pthread_mutex_unlock(&g.print_lock);
}

static const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "ok";

	return n ? n : "E?";
}

/* A rule of the user-space interface was broken: say so (first few times) and count it. */
static void violation(struct tctx *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void violation(struct tctx *t, const char *fmt, ...)
{
	va_list ap;
	long n = atomic_fetch_add(&g.violations, 1);

	if (n >= 20)
		return;
	pthread_mutex_lock(&g.print_lock);
	printf("vcfuzz: VIOLATION (seed=%" PRIu64 ", %s thread %d): ", g.seed, t->role, t->idx);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	pthread_mutex_unlock(&g.print_lock);
}

/* Errnos the fuzzer's calls provoke all the time. */
static bool common_errno(int e)
{
	switch (e) {
	case EINVAL: case ENOTTY: case ENODEV: case EBUSY: case ENOENT: case EFAULT: case EBADF:
	case EACCES: case EEXIST: case EINTR: case EAGAIN: case ENXIO: case EPERM: case ERANGE:
	case ESTALE:	/* DELIVER, UNLEND of a lend that ended */
		return true;
	default:
		return false;
	}
}

/* Bracket every system call that might block with begin()/end(). */
static void begin(struct tctx *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void begin(struct tctx *t, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&t->what_lock);
	va_start(ap, fmt);
	vsnprintf(t->what, sizeof(t->what), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&t->what_lock);
	if (g.verbose)
		say("  [%s%d] %s\n", t->role, t->idx, t->what);
	atomic_store(&t->last_kick_ns, 0);
	atomic_store(&t->call_start_ns, now_ns());
}

/* End of a call with result @ret (errno when < 0): record it and check the errno rules. */
static long end(struct tctx *t, long ret)
{
	int e = ret < 0 ? errno : 0;

	atomic_store(&t->call_start_ns, 0);
	long seen = atomic_fetch_add(&g.errnos[e < NERRNO ? e : NERRNO - 1], 1);

	/* The first few calls that end in an unusual errno are worth a look: show them. */
	if (e && seen < 3 && !common_errno(e)) {
		pthread_mutex_lock(&t->what_lock);
		say("vcfuzz: note: %s from: %s\n", errname(e), t->what);
		pthread_mutex_unlock(&t->what_lock);
	}
	/* Kernel-internal codes (ERESTARTSYS 512 ... ENOIOCTLCMD 515 ...) must never leak. */
	if (e >= 512) {
		pthread_mutex_lock(&t->what_lock);
		violation(t, "kernel-internal errno %d leaked to user space in: %s", e, t->what);
		pthread_mutex_unlock(&t->what_lock);
	}
	/*
	 * vb2 says EIO only for a queue in error, which here means a removed camera: the
	 * interface promises ENODEV for those (VIACAM_IOC_REMOVE in viacam.h).
	 */
	if (e == EIO) {
		pthread_mutex_lock(&t->what_lock);
		violation(t, "EIO (a removed camera's calls must fail with ENODEV) in: %s", t->what);
		pthread_mutex_unlock(&t->what_lock);
	}
	errno = e;
	return ret;
}

/* ------------------------------------------------------------------------
 * Nodes
 */

/* Rebuild the node list from VIACAM_IOC_LIST/QUERY. Called with nodes_lock held. */
static void refresh_nodes_locked(void)
{
	static struct viacam_list l;	/* only under nodes_lock */
	struct viacam_camera c;
	int n = 0;

	g.nodes[n].kind = K_CTL;
	g.nodes[n].cam = 0;
	snprintf(g.nodes[n].path, sizeof(g.nodes[n].path), "/dev/viacam");
	n++;
	memset(&l, 0, sizeof(l));
	if (ioctl(g.ctl_fd, VIACAM_IOC_LIST, &l) < 0) {
		g.nnodes = n;
		return;
	}
	for (uint32_t i = 0; i < l.count && i < VIACAM_MAX_CAMERAS; i++) {
		memset(&c, 0, sizeof(c));
		c.id = l.ids[i];
		if (ioctl(g.ctl_fd, VIACAM_IOC_QUERY, &c) < 0)
			continue;
		g.nodes[n].kind = K_CAP;
		g.nodes[n].cam = c.id;
		snprintf(g.nodes[n].path, sizeof(g.nodes[n].path), "/dev/video%d", c.capture_nr);
		n++;
		g.nodes[n].kind = K_OUT;
		g.nodes[n].cam = c.id;
		snprintf(g.nodes[n].path, sizeof(g.nodes[n].path), "/dev/video%d", c.backend_nr);
		n++;
	}
	g.nnodes = n;
}

static void refresh_nodes(void)
{
	pthread_mutex_lock(&g.nodes_lock);
	refresh_nodes_locked();
	pthread_mutex_unlock(&g.nodes_lock);
}

static void pick_node(struct tctx *t, struct node *out)
{
	pthread_mutex_lock(&g.nodes_lock);
	*out = g.nodes[below(&t->rng, 64) % (uint32_t)g.nnodes];
	pthread_mutex_unlock(&g.nodes_lock);
}

/* The node of @kind of camera @cam; false if it is gone. */
static bool find_node(uint32_t cam, enum kind kind, struct node *out)
{
	bool found = false;

	pthread_mutex_lock(&g.nodes_lock);
	for (int i = 0; i < g.nnodes && !found; i++) {
		if (g.nodes[i].kind == kind && g.nodes[i].cam == cam) {
			*out = g.nodes[i];
			found = true;
		}
	}
	pthread_mutex_unlock(&g.nodes_lock);
	return found;
}

/* ------------------------------------------------------------------------
 * The shared fd pool: fds are used by several threads at once (same struct file from
 * many threads); a close waits for the last user, so an fd number is never stale.
 */

struct ref {
	int slot;
	int fd;
	struct node node;
	int flags;
};

/* Take the fd out of the slot (slots_lock held); the caller closes it after unlocking. */
static int slot_take_locked(struct slot *s)
{
	int fd = s->fd;

	s->fd = -1;
	s->closing = false;
	return fd;
}

static void do_open(struct tctx *t, int si)
{
	static const int accmodes[] = { O_RDWR, O_RDWR, O_RDWR, O_RDONLY, O_WRONLY };
	struct node n;
	int flags, fd;

	pick_node(t, &n);
	flags = accmodes[below(&t->rng, 5)] | O_CLOEXEC;
	if (chance(&t->rng, 75))
		flags |= O_NONBLOCK;
	begin(t, "open %s (%s %u) flags=0x%x", n.path, kind_name[n.kind], n.cam, flags);
	fd = (int)end(t, open(n.path, flags));
	if (fd < 0)
		return;
	pthread_mutex_lock(&g.slots_lock);
	if (g.slots[si].fd < 0) {
		g.slots[si] = (struct slot){ .fd = fd, .node = n, .flags = flags };
		fd = -1;
	}
	pthread_mutex_unlock(&g.slots_lock);
	if (fd >= 0)
		close(fd);	/* someone else filled the slot meanwhile */
}

/* Take a reference on a random open fd (opening one if the slot is empty). */
static bool get_ref(struct tctx *t, struct ref *r)
{
	int si = (int)below(&t->rng, NSLOTS);
	struct slot *s = &g.slots[si];

	for (int tries = 0; tries < 2; tries++) {
		pthread_mutex_lock(&g.slots_lock);
		if (s->fd >= 0 && !s->closing) {
			s->users++;
			*r = (struct ref){ .slot = si, .fd = s->fd, .node = s->node,
					   .flags = s->flags };
			pthread_mutex_unlock(&g.slots_lock);
			return true;
		}
		pthread_mutex_unlock(&g.slots_lock);
		if (tries == 0)
			do_open(t, si);
	}
	return false;
}

/* Close @r's slot once the last user is done with it. */
static void drop_slot(struct ref *r)
{
	pthread_mutex_lock(&g.slots_lock);
	g.slots[r->slot].closing = true;
	pthread_mutex_unlock(&g.slots_lock);
}

static void put_ref(struct tctx *t, struct ref *r)
{
	struct slot *s;
	int fd = -1;

	if (r->slot < 0)
		return;
	s = &g.slots[r->slot];
	pthread_mutex_lock(&g.slots_lock);
	if (--s->users == 0 && s->closing)
		fd = slot_take_locked(s);
	pthread_mutex_unlock(&g.slots_lock);
	if (fd >= 0) {
		/* close() runs the driver's release: it may block, so watch it. */
		begin(t, "close fd=%d (%s %s, last user)", fd, kind_name[r->node.kind], r->node.path);
		end(t, close(fd));
	}
}

static void do_close(struct tctx *t)
{
	struct slot *s = &g.slots[below(&t->rng, NSLOTS)];
	struct node n;
	int fd = -1;

	pthread_mutex_lock(&g.slots_lock);
	if (s->fd >= 0 && !s->closing) {
		n = s->node;
		if (s->users)
			s->closing = true;	/* the last user closes it */
		else
			fd = slot_take_locked(s);
	}
	pthread_mutex_unlock(&g.slots_lock);
	if (fd >= 0) {
		begin(t, "close fd=%d (%s %s)", fd, kind_name[n.kind], n.path);
		end(t, close(fd));
	}
}

/* ------------------------------------------------------------------------
 * Pointers for the kernel
 */

/* A pointer to @need bytes in the arena, at a random 8-byte aligned offset (for structs). */
static uint8_t *arena_ptr(struct tctx *t, size_t need)
{
	size_t room = need < ARENA_LEN ? ARENA_LEN - need : 0;
	size_t off = room ? below(&t->rng, (uint32_t)room + 1) : 0;

	return t->arena + (off & ~(size_t)7);
}

/* The same, now and then misaligned: for payloads we only fill byte-wise. */
static uint8_t *arena_bytes(struct tctx *t, size_t need)
{
	uint8_t *p = arena_ptr(t, need + 8);

	return chance(&t->rng, 10) ? p + 1 + below(&t->rng, 7) : p;
}

/*
 * A pointer to @need bytes inside one of our mmaps of driver buffers (0 if none is big
 * enough). The whole range must lie inside the mapping: the kernel pins or writes all of
 * it, and whatever is mapped next to a driver buffer (a thread's stack, say) is not ours to
 * give away. If another thread unmaps it meanwhile, the range can only ever be taken again
 * by another driver mapping: nothing else of ours is mapped after the start.
 */
static uintptr_t map_ptr(struct tctx *t, size_t need)
{
	struct map *m = &g.maps[below(&t->rng, NMAPS)];
	uintptr_t p = 0;

	pthread_mutex_lock(&g.maps_lock);
	if (m->addr && m->len >= need && need)
		p = (uintptr_t)m->addr + below(&t->rng, (uint32_t)(m->len - need + 1));
	pthread_mutex_unlock(&g.maps_lock);
	return p;
}

/*
 * A deliberately doubtful pointer for @need bytes of an ioctl argument or an array that the
 * kernel copies with copy_from_user()/copy_to_user() (never for USERPTR buffers: see
 * user_buf()). Every one of them either cannot be accessed at all, or its first
 * inaccessible byte comes before anything that is not there for the kernel to scribble on
 * (guard pages around the arena and the hole; the range of a driver mapping stays inside it).
 */
static uintptr_t bad_ptr(struct tctx *t, size_t need)
{
	uint8_t *base = t->arena;
	size_t len = ARENA_LEN;
	uintptr_t p;

	switch (below(&t->rng, 12)) {
	case 0:
		return 0;
	case 1:
		return below(&t->rng, 0x10000);
	case 2:
		return 0xffff888000000000ull + (rnd(&t->rng) & 0xffffff000ull);
	case 3:
		return chance(&t->rng, 50) ? 0xffffffff81000000ull : 0x0000800000000000ull;
	case 4:
		return (0xdead000000000000ull | (rnd(&t->rng) & 0xfffffff0ull));
	case 5:		/* starts inside the region, runs into the guard page after it */
		p = need < len ? need : len;
		return (uintptr_t)base + len - (p > 1 ? below(&t->rng, (uint32_t)p) + 1 : 1);
	case 6:		/* starts in the guard page before it */
		return (uintptr_t)base - PAGE + below(&t->rng, PAGE);
	case 7:
		return (uintptr_t)g.ro_page + below(&t->rng, PAGE);
	case 8:
		return (uintptr_t)g.hole + below(&t->rng, PAGE);
	case 9:
		return (uintptr_t)g.none_page;
	case 10:
		p = map_ptr(t, need);
		if (p)
			return p;
		return ~(uintptr_t)0 - below(&t->rng, 4096);
	default:
		return ~(uintptr_t)0;
	}
}

/* An address whose first page has no mapping at all (or is not user space). */
static uintptr_t unmapped_ptr(struct tctx *t)
{
	switch (below(&t->rng, 5)) {
	case 0: return 0;
	case 1: return below(&t->rng, 0x10000);		/* below mmap_min_addr */
	case 2: return 0xffff888000000000ull + (rnd(&t->rng) & 0xffffff000ull);
	case 3: return 0x0000800000000000ull - below(&t->rng, 64);	/* crosses the top */
	default: return 0xdead000000000000ull | (rnd(&t->rng) & 0xfffffff0ull);
	}
}

/*
 * A user buffer of @need bytes (at most SCRATCH_LEN) the kernel may write to at any time:
 * USERPTR buffers, read(). vb2 pins USERPTR memory with FOLL_FORCE | FOLL_WRITE, which goes
 * through PROT_NONE and read-only mappings (copy-on-write), so here a guard page is no
 * barrier: every range lies inside memory that is there to be scribbled on (the scratch
 * area and its SCRATCH_LEN guard zones on both sides, a driver mapping, the read-only or
 * PROT_NONE page when it fits), or starts where nothing is mapped at all.
 */
static uintptr_t user_buf(struct tctx *t, size_t need)
{
	uintptr_t p;

	if (need > SCRATCH_LEN)
		need = SCRATCH_LEN;
	switch (below(&t->rng, 20)) {
	case 15:	/* runs from the scratch area into the guard zone after it */
		return (uintptr_t)g.scratch + SCRATCH_LEN - (need > 1 ? below(&t->rng, (uint32_t)need) : 0);
	case 16:	/* starts in the guard zone before it */
		return (uintptr_t)g.scratch - (need > 1 ? below(&t->rng, (uint32_t)need) + 1 : 1);
	case 17:
		p = map_ptr(t, need);
		return p ? p : unmapped_ptr(t);
	case 18:
		return unmapped_ptr(t);
	case 19:
		if (need > PAGE)
			return unmapped_ptr(t);
		return (uintptr_t)(chance(&t->rng, 50) ? g.ro_page : g.none_page) +
			below(&t->rng, PAGE - (uint32_t)need + 1);
	default: {
		size_t room = SCRATCH_LEN - need;
		size_t off = room ? (rnd(&t->rng) % (room + 1)) : 0;

		if (chance(&t->rng, 70))
			off &= ~(size_t)(PAGE - 1);
		return (uintptr_t)g.scratch + off;
	}
	}
}

/*
 * A USERPTR buffer: sets *len (mostly a plausible length) and returns the pointer. Absurd
 * lengths only go with pointers where nothing is mapped, see user_buf().
 */
static uintptr_t userptr_buf(struct tctx *t, uint32_t *len)
{
	switch (below(&t->rng, 10)) {
	case 0:
		*len = r32(&t->rng);
		return unmapped_ptr(t);
	case 1:
		*len = below(&t->rng, 8192);
		break;
	case 2:
		*len = below(&t->rng, 4u << 20);
		break;
	default:
		*len = (uint32_t[]){ 160 * 120 * 2, 320 * 240 * 2, 640 * 480 * 2, 640 * 480 * 3 / 2,
				     1280 * 720 * 2 }[below(&t->rng, 5)];
		break;
	}
	return user_buf(t, *len);
}

/* ------------------------------------------------------------------------
 * mmaps and exported dmabufs
 */

static void map_add(void *addr, size_t len, int prot)
{
	struct map *victim = NULL;

	pthread_mutex_lock(&g.maps_lock);
	for (int i = 0; i < NMAPS && !victim; i++)
		if (!g.maps[i].addr)
			victim = &g.maps[i];
	if (!victim) {
		victim = &g.maps[(uintptr_t)addr / PAGE % NMAPS];
		munmap(victim->addr, victim->len);
	}
	*victim = (struct map){ .addr = addr, .len = len, .prot = prot };
	pthread_mutex_unlock(&g.maps_lock);
}

static void do_munmap(struct tctx *t)
{
	struct map *m = &g.maps[below(&t->rng, NMAPS)];
	bool part = chance(&t->rng, 30);

	pthread_mutex_lock(&g.maps_lock);
	if (m->addr) {
		size_t pages = (m->len + PAGE - 1) / PAGE;

		if (part && pages > 1) {
			/* Unmap the tail: the driver's VMA gets split. */
			size_t keep = 1 + below(&t->rng, (uint32_t)pages - 1);

			begin(t, "munmap tail %p+%zu", (void *)m->addr, keep * PAGE);
			end(t, munmap((uint8_t *)m->addr + keep * PAGE, (pages - keep) * PAGE));
			m->len = keep * PAGE;
		} else {
			begin(t, "munmap %p len %zu", m->addr, m->len);
			end(t, munmap(m->addr, m->len));
			m->addr = NULL;
		}
	}
	pthread_mutex_unlock(&g.maps_lock);
}

/* Read (and write, if allowed) a byte of a mapping: faults the driver's pages in. */
static void do_touch(struct tctx *t)
{
	struct map *m = &g.maps[below(&t->rng, NMAPS)];
	volatile uint8_t *p;

	pthread_mutex_lock(&g.maps_lock);
	if (m->addr && (m->prot & PROT_READ)) {
		p = (volatile uint8_t *)m->addr + below(&t->rng, (uint32_t)m->len);
		begin(t, "touch %p", (void *)p);
		uint8_t v = *p;

		if (m->prot & PROT_WRITE)
			*p = (uint8_t)(v + 1);
		end(t, 0);
	}
	pthread_mutex_unlock(&g.maps_lock);
}

static void dmabuf_add(int fd)
{
	static unsigned int next;

	pthread_mutex_lock(&g.dmabuf_lock);
	unsigned int i = next++ % NDMABUFS;

	if (g.dmabufs[i] >= 0)
		close(g.dmabufs[i]);
	g.dmabufs[i] = fd;
	pthread_mutex_unlock(&g.dmabuf_lock);
}

/*
 * An fd for V4L2_MEMORY_DMABUF: one of our exported dmabufs (duplicated, so a concurrent
 * close cannot make the number stale; the caller closes it), or a random number.
 */
static int dmabuf_fd(struct tctx *t, bool *dup_out)
{
	int fd = -1;

	*dup_out = false;
	if (chance(&t->rng, 70)) {
		pthread_mutex_lock(&g.dmabuf_lock);
		int src = g.dmabufs[below(&t->rng, NDMABUFS)];

		if (src >= 0)
			fd = fcntl(src, F_DUPFD_CLOEXEC, 0);
		pthread_mutex_unlock(&g.dmabuf_lock);
		if (fd >= 0) {
			*dup_out = true;
			return fd;
		}
	}
	/* 0-2 are ours; other small numbers are whatever fd happens to be there. */
	return chance(&t->rng, 50) ? -1 : (int)r32(&t->rng);
}

/* ------------------------------------------------------------------------
 * Ioctl tables
 */

struct ioc {
	unsigned long cmd;
	const char *name;
	unsigned int nodes;	/* bit per enum kind: where it is implemented */
};

#define CAPOUT	((1u << K_CAP) | (1u << K_OUT))
#define IOC(c, n)	{ c, #c, n }

#ifndef VIDIOC_REMOVE_BUFS
struct vcfuzz_remove_buffers {
	uint32_t index, count, type, reserved[13];
};
#define VIDIOC_REMOVE_BUFS	_IOWR('V', 104, struct vcfuzz_remove_buffers)
#endif

static const struct ioc iocs[] = {
	IOC(VIDIOC_QUERYCAP, CAPOUT),
	IOC(VIDIOC_ENUM_FMT, CAPOUT),
	IOC(VIDIOC_G_FMT, CAPOUT),
	IOC(VIDIOC_S_FMT, CAPOUT),
	IOC(VIDIOC_TRY_FMT, CAPOUT),
	IOC(VIDIOC_REQBUFS, CAPOUT),
	IOC(VIDIOC_QUERYBUF, CAPOUT),
	IOC(VIDIOC_QBUF, CAPOUT),
	IOC(VIDIOC_DQBUF, CAPOUT),
	IOC(VIDIOC_EXPBUF, CAPOUT),
	IOC(VIDIOC_STREAMON, CAPOUT),
	IOC(VIDIOC_STREAMOFF, CAPOUT),
	IOC(VIDIOC_CREATE_BUFS, CAPOUT),
	IOC(VIDIOC_PREPARE_BUF, CAPOUT),
	IOC(VIDIOC_REMOVE_BUFS, CAPOUT),
	IOC(VIDIOC_G_PARM, CAPOUT),
	IOC(VIDIOC_S_PARM, CAPOUT),
	IOC(VIDIOC_ENUM_FRAMESIZES, CAPOUT),
	IOC(VIDIOC_ENUM_FRAMEINTERVALS, CAPOUT),
	IOC(VIDIOC_ENUMINPUT, CAPOUT),
	IOC(VIDIOC_G_INPUT, CAPOUT),
	IOC(VIDIOC_S_INPUT, CAPOUT),
	IOC(VIDIOC_ENUMOUTPUT, CAPOUT),
	IOC(VIDIOC_G_OUTPUT, CAPOUT),
	IOC(VIDIOC_S_OUTPUT, CAPOUT),
	IOC(VIDIOC_G_PRIORITY, CAPOUT),
	IOC(VIDIOC_S_PRIORITY, CAPOUT),
	IOC(VIDIOC_LOG_STATUS, CAPOUT),
	IOC(VIDIOC_QUERYCTRL, CAPOUT),
	IOC(VIDIOC_QUERY_EXT_CTRL, CAPOUT),
	IOC(VIDIOC_QUERYMENU, CAPOUT),
	IOC(VIDIOC_G_CTRL, CAPOUT),
	IOC(VIDIOC_S_CTRL, CAPOUT),
	IOC(VIDIOC_G_EXT_CTRLS, CAPOUT),
	IOC(VIDIOC_S_EXT_CTRLS, CAPOUT),
	IOC(VIDIOC_TRY_EXT_CTRLS, CAPOUT),
	IOC(VIDIOC_SUBSCRIBE_EVENT, CAPOUT),
	IOC(VIDIOC_UNSUBSCRIBE_EVENT, CAPOUT),
	IOC(VIDIOC_DQEVENT, CAPOUT),
	IOC(VIDIOC_G_SELECTION, CAPOUT),
	IOC(VIDIOC_CROPCAP, CAPOUT),
	IOC(VIDIOC_G_STD, CAPOUT),
	IOC(VIDIOC_ENUMSTD, CAPOUT),
	IOC(VIACAM_IOC_S_FORMATS, 1u << K_OUT),
	IOC(VIACAM_IOC_S_CTRLS, 1u << K_OUT),
	IOC(VIACAM_IOC_S_INFO, 1u << K_OUT),
	IOC(VIACAM_IOC_LEND, 1u << K_OUT),
	IOC(VIACAM_IOC_DELIVER, 1u << K_OUT),
	IOC(VIACAM_IOC_UNLEND, 1u << K_OUT),
	IOC(VIACAM_IOC_VERSION, 1u << K_CTL),
	IOC(VIACAM_IOC_LIST, 1u << K_CTL),
	IOC(VIACAM_IOC_QUERY, 1u << K_CTL),
	IOC(VIACAM_IOC_ADD, 1u << K_CTL),
	IOC(VIACAM_IOC_REMOVE, 1u << K_CTL),
};
#define NIOCS (sizeof(iocs) / sizeof(iocs[0]))

static const char *ioc_name(unsigned long cmd)
{
	for (size_t i = 0; i < NIOCS; i++)
		if (iocs[i].cmd == cmd)
			return iocs[i].name;
	return "?";
}

/* ------------------------------------------------------------------------
 * The ioctl wrapper: the ADD bound, REMOVE of the protected camera, and the rules
 */

/*
 * Is @cmd certainly unknown on a node of @kind (so the answer must be ENOTTY, or EFAULT from
 * the V4L2 core's copy-in)? The control node knows exactly its five commands; the video
 * nodes hand everything that is not a standard V4L2 number (0..104 on these kernels) to
 * the driver, which knows only the backend's six private commands.
 */
static bool unknown_cmd(enum kind kind, unsigned long cmd)
{
	if (kind == K_CTL)
		return cmd != VIACAM_IOC_VERSION && cmd != VIACAM_IOC_ADD &&
		       cmd != VIACAM_IOC_REMOVE && cmd != VIACAM_IOC_QUERY && cmd != VIACAM_IOC_LIST;
	if (_IOC_TYPE(cmd) != 'V')
		return true;
	if (_IOC_NR(cmd) <= 104)
		return false;
	return kind == K_CAP || (cmd != VIACAM_IOC_S_FORMATS && cmd != VIACAM_IOC_S_CTRLS &&
				 cmd != VIACAM_IOC_S_INFO && cmd != VIACAM_IOC_LEND &&
				 cmd != VIACAM_IOC_DELIVER && cmd != VIACAM_IOC_UNLEND);
}

/* Does [p, p + len) lie within [base, base + size)? (No overflow for wild p.) */
static bool within(uintptr_t p, size_t len, const void *base, size_t size)
{
	uintptr_t b = (uintptr_t)base;

	return len <= size && p >= b && p - b <= size - len;
}

static bool in_arena(struct tctx *t, uintptr_t p, size_t len)
{
	return within(p, len, t->arena, ARENA_LEN);
}

static unsigned int camera_count(void)
{
	struct viacam_version *v;
	unsigned int n = VIACAM_MAX_CAMERAS;
	static struct viacam_version vbuf;	/* only under add_lock */

	v = &vbuf;
	memset(v, 0, sizeof(*v));
	pthread_mutex_lock(&g.nodes_lock);
	if (ioctl(g.ctl_fd, VIACAM_IOC_VERSION, v) == 0)
		n = v->cameras;
	pthread_mutex_unlock(&g.nodes_lock);
	return n;
}

/*
 * ioctl(@r->fd, @cmd, @arg) with bookkeeping. On the control node an ADD only goes through
 * below the camera bound and a REMOVE never names the protected camera; for both, an
 * argument whose content we cannot see (a driver buffer mapping) is replaced by NULL.
 */
static long fuzz_ioctl(struct tctx *t, struct ref *r, unsigned long cmd, uintptr_t arg)
{
	bool locked = false, added = false, removed = false;
	const size_t csz = sizeof(struct viacam_camera);
	long ret;

	if (r->node.kind == K_CTL && (cmd == VIACAM_IOC_ADD || cmd == VIACAM_IOC_REMOVE)) {
		/*
		 * Only the arena's content is known: the read-only page may have been
		 * replaced by a frame (USERPTR pins it copy-on-write), and a driver mapping
		 * may have landed in the hole.
		 */
		bool readable = in_arena(t, arg, csz);
		bool unreadable = arg < 0x10000 || arg >= 0x0000800000000000ull ||
			within(arg, 1, g.none_page, PAGE);

		if (!readable && !unreadable)
			arg = 0;
		if (cmd == VIACAM_IOC_ADD) {
			pthread_mutex_lock(&g.add_lock);
			locked = true;
			if (camera_count() >= g.max_cams) {
				pthread_mutex_unlock(&g.add_lock);
				return 0;
			}
			added = true;
		} else if (readable) {
			struct viacam_camera c;

			memcpy(&c, (void *)arg, sizeof(c));
			if (c.id == g.protected_cam)
				return 0;
			removed = true;
		}
	}
	begin(t, "ioctl fd=%d (%s %s%s) cmd=0x%08lx %s arg=0x%" PRIxPTR, r->fd,
	      kind_name[r->node.kind], r->node.path, r->flags & O_NONBLOCK ? " nonblock" : "",
	      cmd, ioc_name(cmd), arg);
	ret = end(t, sys_ioctl(r->fd, cmd, arg));
	int e = errno;

	if (locked)
		pthread_mutex_unlock(&g.add_lock);
	if ((added || removed) && ret == 0)
		refresh_nodes();
	else if (added && e == EFAULT)
		refresh_nodes();	/* the camera may exist although the copy-out failed */

	if (unknown_cmd(r->node.kind, cmd) && (ret == 0 ||
		(e != ENOTTY && e != EFAULT && e != ENODEV && e != EINTR))) {
		violation(t, "unknown ioctl 0x%08lx on %s node %s gave %s (want ENOTTY)", cmd,
			  kind_name[r->node.kind], r->node.path, ret ? errname(e) : "success");
	}
	if (ret > 0)
		violation(t, "ioctl 0x%08lx (%s) on %s returned %ld", cmd, ioc_name(cmd),
			  r->node.path, ret);
	errno = e;
	return ret;
}

/* ------------------------------------------------------------------------
 * Structured payloads
 */

static const uint32_t fourccs[] = {
	V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_UYVY, V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_YUV420,
	V4L2_PIX_FMT_YVU420, V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_BGR24, V4L2_PIX_FMT_RGB565,
	V4L2_PIX_FMT_GREY, V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_H264, V4L2_PIX_FMT_NV16, 0,
	0xffffffffu,
};

static uint32_t r_fourcc(struct rng *r)
{
	if (chance(r, 10))
		return (uint32_t)rnd(r);
	return fourccs[below(r, sizeof(fourccs) / sizeof(fourccs[0]))];
}

/* A buffer type: mostly the node's own, sometimes anything. */
static uint32_t r_type(struct tctx *t, const struct ref *r)
{
	static const uint32_t types[] = {
		V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_BUF_TYPE_VIDEO_OUTPUT,
		V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE, V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE,
		V4L2_BUF_TYPE_VIDEO_OVERLAY, V4L2_BUF_TYPE_META_CAPTURE, 0, 0x80, 0xffffffffu,
	};

	if (chance(&t->rng, 80))
		return r->node.kind == K_OUT ? V4L2_BUF_TYPE_VIDEO_OUTPUT :
					       V4L2_BUF_TYPE_VIDEO_CAPTURE;
	return types[below(&t->rng, sizeof(types) / sizeof(types[0]))];
}

static uint32_t r_memory(struct tctx *t)
{
	static const uint32_t mem[] = {
		V4L2_MEMORY_MMAP, V4L2_MEMORY_MMAP, V4L2_MEMORY_MMAP, V4L2_MEMORY_USERPTR,
		V4L2_MEMORY_USERPTR, V4L2_MEMORY_DMABUF, V4L2_MEMORY_OVERLAY, 0, 7, 0xffffffffu,
	};

	return mem[below(&t->rng, sizeof(mem) / sizeof(mem[0]))];
}

/*
 * Frame sizes that keep the guest's memory safe: 32 buffers on each of a few queues must
 * fit in 2 GiB, so mostly up to VGA, now and then up to 1280x720, and the limits (16,
 * 8192) only where nothing gets allocated (TRY_FMT, ENUM_*).
 */
static uint32_t r_dim(struct tctx *t, bool alloc, uint32_t maxv)
{
	uint32_t v;

	if (!alloc && chance(&t->rng, 20))
		return chance(&t->rng, 50) ? r32(&t->rng) :
			(uint32_t[]){ 0, 15, 16, 17, 8191, 8192, 8193 }[below(&t->rng, 7)];
	if (chance(&t->rng, 30))
		return (uint32_t[]){ 16, 32, 160, 176, 320, 352, 640 }[below(&t->rng, 7)];
	v = 16 + below(&t->rng, chance(&t->rng, 90) ? 640 : maxv);
	if (chance(&t->rng, 50))
		v &= ~1u;
	return v;
}

static void r_pix(struct tctx *t, struct v4l2_pix_format *pix, bool alloc)
{
	pix->pixelformat = r_fourcc(&t->rng);
	pix->width = r_dim(t, alloc, 1280);
	pix->height = r_dim(t, alloc, 720);
	pix->field = chance(&t->rng, 80) ? V4L2_FIELD_NONE : r32(&t->rng);
	pix->bytesperline = chance(&t->rng, 70) ? 0 : r32(&t->rng);
	pix->sizeimage = chance(&t->rng, 60) ? 0 :
		(alloc ? below(&t->rng, 1280 * 720 * 4) : r32(&t->rng));
	pix->colorspace = chance(&t->rng, 70) ? 0 : r32(&t->rng);
	pix->priv = chance(&t->rng, 80) ? 0 : r32(&t->rng);
}

static void r_fract(struct tctx *t, struct v4l2_fract *f)
{
	static const struct v4l2_fract fr[] = {
		{ 1, 30 }, { 1, 15 }, { 1, 60 }, { 1, 1000 }, { 1, 1001 }, { 60, 1 }, { 61, 1 },
		{ 0, 0 }, { 0, 1 }, { 1, 0 }, { 0xffffffffu, 1 }, { 1, 0xffffffffu },
		{ 0xffffffffu, 0xffffffffu }, { 1001, 30000 },
	};

	if (chance(&t->rng, 70)) {
		*f = fr[below(&t->rng, sizeof(fr) / sizeof(fr[0]))];
	} else {
		f->numerator = r32(&t->rng);
		f->denominator = r32(&t->rng);
	}
}

static const uint32_t ctrl_ids[] = {
	V4L2_CID_BRIGHTNESS, V4L2_CID_CONTRAST, V4L2_CID_SATURATION, V4L2_CID_HUE,
	V4L2_CID_AUTO_WHITE_BALANCE, V4L2_CID_GAIN, V4L2_CID_HFLIP, V4L2_CID_VFLIP,
	V4L2_CID_POWER_LINE_FREQUENCY, V4L2_CID_SHARPNESS, V4L2_CID_BACKLIGHT_COMPENSATION,
	V4L2_CID_EXPOSURE_AUTO, V4L2_CID_EXPOSURE_ABSOLUTE, V4L2_CID_FOCUS_AUTO,
	V4L2_CID_ZOOM_ABSOLUTE, V4L2_CID_USER_BASE + 0x1000, V4L2_CID_USER_BASE + 0x1001,
	V4L2_CID_CAMERA_CLASS_BASE + 0x1000, V4L2_CID_DO_WHITE_BALANCE, V4L2_CID_USER_CLASS,
	V4L2_CID_CAMERA_CLASS, V4L2_CID_BASE, V4L2_CID_MPEG_VIDEO_BITRATE, 0, 0xffffffffu,
};

static uint32_t r_ctrl_id(struct tctx *t)
{
	uint32_t id = ctrl_ids[below(&t->rng, sizeof(ctrl_ids) / sizeof(ctrl_ids[0]))];

	if (chance(&t->rng, 10))
		id = (uint32_t)rnd(&t->rng);
	if (chance(&t->rng, 10))
		id |= V4L2_CTRL_FLAG_NEXT_CTRL;
	if (chance(&t->rng, 5))
		id |= V4L2_CTRL_FLAG_NEXT_COMPOUND;
	return id;
}

static void r_name(struct tctx *t, char *s, size_t len, bool may_be_empty)
{
	size_t n;

	if (chance(&t->rng, 5)) {
		fill_random(&t->rng, s, len);	/* maybe unterminated */
		return;
	}
	memset(s, 0, len);
	n = below(&t->rng, (uint32_t)len);
	if (!n && !may_be_empty && chance(&t->rng, 80))
		n = 1;
	for (size_t i = 0; i < n; i++)
		s[i] = (char)(chance(&t->rng, 95) ? 'a' + below(&t->rng, 26) : rnd(&t->rng));
}

/* A declared control, mostly one that passes the module's checks. */
static void r_viacam_ctrl(struct tctx *t, struct viacam_ctrl *c)
{
	static const struct { uint32_t id, type; } known[] = {
		{ V4L2_CID_BRIGHTNESS, V4L2_CTRL_TYPE_INTEGER },
		{ V4L2_CID_CONTRAST, V4L2_CTRL_TYPE_INTEGER },
		{ V4L2_CID_GAIN, V4L2_CTRL_TYPE_INTEGER },
		{ V4L2_CID_HFLIP, V4L2_CTRL_TYPE_BOOLEAN },
		{ V4L2_CID_VFLIP, V4L2_CTRL_TYPE_BOOLEAN },
		{ V4L2_CID_AUTO_WHITE_BALANCE, V4L2_CTRL_TYPE_BOOLEAN },
		{ V4L2_CID_POWER_LINE_FREQUENCY, V4L2_CTRL_TYPE_MENU },
		{ V4L2_CID_EXPOSURE_AUTO, V4L2_CTRL_TYPE_MENU },
		{ V4L2_CID_DO_WHITE_BALANCE, V4L2_CTRL_TYPE_BUTTON },
		{ V4L2_CID_USER_BASE + 0x1000, V4L2_CTRL_TYPE_INTEGER },
		{ V4L2_CID_USER_BASE + 0x1001, V4L2_CTRL_TYPE_MENU },
		{ V4L2_CID_USER_BASE + 0x1002, V4L2_CTRL_TYPE_BOOLEAN },
		{ V4L2_CID_CAMERA_CLASS_BASE + 0x1000, V4L2_CTRL_TYPE_BUTTON },
		{ V4L2_CID_USER_BASE + 0x1003, V4L2_CTRL_TYPE_STRING },
	};
	unsigned int k = below(&t->rng, sizeof(known) / sizeof(known[0]));

	memset(c, 0, sizeof(*c));
	c->id = chance(&t->rng, 90) ? known[k].id : r_ctrl_id(t);
	c->type = chance(&t->rng, 90) ? known[k].type : r32(&t->rng);
	r_name(t, c->name, sizeof(c->name), false);
	switch (c->type) {
	case V4L2_CTRL_TYPE_INTEGER:
		c->minimum = chance(&t->rng, 80) ? -(int64_t)below(&t->rng, 256) : (int64_t)rnd(&t->rng);
		/* Unsigned arithmetic: minimum may be anything. */
		c->maximum = (int64_t)((uint64_t)c->minimum + below(&t->rng, 1000));
		c->step = 1 + below(&t->rng, chance(&t->rng, 90) ? 4 : 0xffff);
		c->default_value = (int64_t)((uint64_t)c->minimum +
			below(&t->rng, (uint32_t)((uint64_t)c->maximum - (uint64_t)c->minimum + 1)));
		break;
	case V4L2_CTRL_TYPE_BOOLEAN:
		c->maximum = 1;
		c->step = 1;
		c->default_value = below(&t->rng, 2);
		break;
	case V4L2_CTRL_TYPE_MENU:
		c->maximum = below(&t->rng, chance(&t->rng, 90) ? 8 : VIACAM_MAX_MENU + 2);
		c->menu_count = (uint32_t)c->maximum + 1;
		for (uint32_t i = 0; i < c->menu_count && i < VIACAM_MAX_MENU; i++)
			r_name(t, c->menu[i], VIACAM_NAME_LEN, true);
		c->default_value = below(&t->rng, (uint32_t)c->maximum + 1);
		break;
	default:
		break;
	}
	if (chance(&t->rng, 15)) {
		/* Break one field. */
		switch (below(&t->rng, 7)) {
		case 0: c->minimum = (int64_t)rnd(&t->rng); break;
		case 1: c->maximum = (int64_t)rnd(&t->rng); break;
		case 2: c->step = rnd(&t->rng); break;
		case 3: c->default_value = (int64_t)rnd(&t->rng); break;
		case 4: c->menu_count = r32(&t->rng); break;
		case 5: c->flags = r32(&t->rng); break;
		default: c->reserved[below(&t->rng, 4)] = r32(&t->rng); break;
		}
	} else if (chance(&t->rng, 20)) {
		c->flags = (uint32_t[]){ V4L2_CTRL_FLAG_READ_ONLY, V4L2_CTRL_FLAG_SLIDER,
					 V4L2_CTRL_FLAG_INACTIVE }[below(&t->rng, 3)];
	}
}

static void r_viacam_format(struct tctx *t, struct viacam_format *f)
{
	memset(f, 0, sizeof(*f));
	f->pixelformat = chance(&t->rng, 90) ? fourccs[below(&t->rng, 10)] : r_fourcc(&t->rng);
	f->width = r_dim(t, true, 1280);
	f->height = r_dim(t, true, 720);
	f->interval_num = chance(&t->rng, 90) ? 1 : r32(&t->rng);
	f->interval_den = chance(&t->rng, 90) ? (uint32_t[]){ 5, 15, 25, 30, 60 }[below(&t->rng, 5)] :
						r32(&t->rng);
	if (f->pixelformat == V4L2_PIX_FMT_MJPEG && chance(&t->rng, 70))
		f->sizeimage = f->width * f->height / 4 + below(&t->rng, 4096);
	else if (chance(&t->rng, 5))
		f->sizeimage = r32(&t->rng);
	if (chance(&t->rng, 3))
		f->reserved[below(&t->rng, 2)] = r32(&t->rng);
}

/* Fill a struct v4l2_buffer for QBUF/PREPARE_BUF/QUERYBUF/DQBUF. */
static void r_buffer(struct tctx *t, const struct ref *r, struct v4l2_buffer *b,
		     int *dmafd, bool *dmadup)
{
	memset(b, 0, sizeof(*b));
	b->type = r_type(t, r);
	b->memory = r_memory(t);
	b->index = chance(&t->rng, 85) ? below(&t->rng, 8) : r32(&t->rng);
	b->bytesused = chance(&t->rng, 50) ? 0 : r32(&t->rng);
	b->field = chance(&t->rng, 80) ? V4L2_FIELD_NONE : r32(&t->rng);
	if (chance(&t->rng, 20))
		b->flags = r32(&t->rng);
	if (chance(&t->rng, 10)) {
		b->flags |= V4L2_BUF_FLAG_REQUEST_FD;
		b->request_fd = (int32_t)r32(&t->rng);
	}
	b->timestamp.tv_sec = chance(&t->rng, 90) ? 1 : (long)rnd(&t->rng);
	b->timestamp.tv_usec = chance(&t->rng, 90) ? 0 : (long)rnd(&t->rng);
	b->length = chance(&t->rng, 60) ? 640 * 480 * 2 : r32(&t->rng);
	*dmafd = -1;
	*dmadup = false;
	if (b->type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE ||
	    b->type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE) {
		/* m.planes: an array of b->length planes, or a bad pointer. */
		b->length = chance(&t->rng, 80) ? below(&t->rng, 10) : r32(&t->rng);
		size_t need = sizeof(struct v4l2_plane) * (b->length < 16 ? b->length : 16);
		uint8_t *planes = t->arena + ARENA_LEN / 2 + below(&t->rng, 64) * 8;

		fill_payload(&t->rng, planes, need);
		for (size_t i = 0; i < need / sizeof(struct v4l2_plane); i++)
			((struct v4l2_plane *)planes)[i].m.userptr =
				userptr_buf(t, &((struct v4l2_plane *)planes)[i].length);
		b->m.planes = chance(&t->rng, 80) ? (struct v4l2_plane *)planes :
			(struct v4l2_plane *)bad_ptr(t, need);
	} else if (b->memory == V4L2_MEMORY_USERPTR) {
		b->m.userptr = userptr_buf(t, &b->length);
	} else if (b->memory == V4L2_MEMORY_DMABUF) {
		*dmafd = dmabuf_fd(t, dmadup);
		b->m.fd = *dmafd;
	} else {
		b->m.offset = r32(&t->rng);
	}
}

/*
 * The argument of a valid ioctl with structurally valid, random fields, built in the arena.
 * Returns the pointer to pass; *cleanup_fd is an fd to close afterwards (or -1).
 */
static uintptr_t build_struct(struct tctx *t, const struct ref *r, unsigned long cmd,
			      int *cleanup_fd)
{
	size_t size = _IOC_SIZE(cmd);
	uint8_t *p = arena_ptr(t, size < 64 ? 64 : size);
	bool dup = false;

	/* Commands with arrays: the struct low in the arena, the array above it. */
	if (cmd == VIDIOC_G_EXT_CTRLS || cmd == VIDIOC_S_EXT_CTRLS || cmd == VIDIOC_TRY_EXT_CTRLS ||
	    cmd == VIACAM_IOC_S_FORMATS || cmd == VIACAM_IOC_S_CTRLS)
		p = t->arena + below(&t->rng, 4) * 8;

	*cleanup_fd = -1;
	memset(p, 0, size);
	switch (cmd) {
	case VIDIOC_ENUM_FMT: {
		struct v4l2_fmtdesc *f = (void *)p;

		f->index = chance(&t->rng, 80) ? below(&t->rng, 12) : r32(&t->rng);
		f->type = r_type(t, r);
		f->mbus_code = chance(&t->rng, 90) ? 0 : r32(&t->rng);
		break;
	}
	case VIDIOC_G_FMT:
	case VIDIOC_S_FMT:
	case VIDIOC_TRY_FMT: {
		struct v4l2_format *f = (void *)p;

		f->type = r_type(t, r);
		if (f->type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE ||
		    f->type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE)
			fill_payload(&t->rng, &f->fmt, sizeof(f->fmt));
		else
			r_pix(t, &f->fmt.pix, cmd == VIDIOC_S_FMT);
		break;
	}
	case VIDIOC_REQBUFS: {
		struct v4l2_requestbuffers *q = (void *)p;
		static const uint32_t counts[] = { 0, 1, 2, 3, 4, 8, 16, 31, 32, 33, 64, 1000,
						   0xffffffffu };

		q->count = counts[below(&t->rng, sizeof(counts) / sizeof(counts[0]))];
		q->type = r_type(t, r);
		q->memory = r_memory(t);
		if (chance(&t->rng, 10))
			q->flags = (uint8_t)rnd(&t->rng);
		break;
	}
	case VIDIOC_CREATE_BUFS: {
		struct v4l2_create_buffers *c = (void *)p;

		c->count = below(&t->rng, 40);
		c->memory = r_memory(t);
		c->format.type = r_type(t, r);
		r_pix(t, &c->format.fmt.pix, true);
		if (chance(&t->rng, 50) && c->format.fmt.pix.sizeimage > 1280 * 720 * 2)
			c->format.fmt.pix.sizeimage = 1280 * 720 * 2;
		break;
	}
	case VIDIOC_QUERYBUF:
	case VIDIOC_QBUF:
	case VIDIOC_DQBUF:
	case VIDIOC_PREPARE_BUF: {
		int dfd;

		r_buffer(t, r, (void *)p, &dfd, &dup);
		if (dup)
			*cleanup_fd = dfd;
		break;
	}
	case VIDIOC_EXPBUF: {
		struct v4l2_exportbuffer *e = (void *)p;

		e->type = r_type(t, r);
		e->index = chance(&t->rng, 85) ? below(&t->rng, 8) : r32(&t->rng);
		e->plane = chance(&t->rng, 90) ? 0 : r32(&t->rng);
		e->flags = chance(&t->rng, 80) ? (O_CLOEXEC | (chance(&t->rng, 50) ? O_RDWR : 0)) :
						r32(&t->rng);
		break;
	}
	case VIDIOC_REMOVE_BUFS: {
		uint32_t *w = (void *)p;

		w[0] = below(&t->rng, 40);
		w[1] = below(&t->rng, 40);
		w[2] = r_type(t, r);
		break;
	}
	case VIDIOC_STREAMON:
	case VIDIOC_STREAMOFF:
		*(uint32_t *)p = r_type(t, r);
		break;
	case VIDIOC_G_PARM:
	case VIDIOC_S_PARM: {
		struct v4l2_streamparm *s = (void *)p;

		s->type = r_type(t, r);
		if (chance(&t->rng, 10))
			fill_payload(&t->rng, &s->parm, sizeof(s->parm));
		r_fract(t, s->type == V4L2_BUF_TYPE_VIDEO_OUTPUT ? &s->parm.output.timeperframe :
								   &s->parm.capture.timeperframe);
		break;
	}
	case VIDIOC_ENUM_FRAMESIZES: {
		struct v4l2_frmsizeenum *f = (void *)p;

		f->index = chance(&t->rng, 80) ? below(&t->rng, 8) : r32(&t->rng);
		f->pixel_format = r_fourcc(&t->rng);
		break;
	}
	case VIDIOC_ENUM_FRAMEINTERVALS: {
		struct v4l2_frmivalenum *f = (void *)p;

		f->index = chance(&t->rng, 80) ? below(&t->rng, 8) : r32(&t->rng);
		f->pixel_format = r_fourcc(&t->rng);
		f->width = r_dim(t, false, 1280);
		f->height = r_dim(t, false, 720);
		break;
	}
	case VIDIOC_ENUMINPUT:
	case VIDIOC_ENUMOUTPUT:
	case VIDIOC_S_INPUT:
	case VIDIOC_S_OUTPUT:
	case VIDIOC_S_PRIORITY:
		*(uint32_t *)p = chance(&t->rng, 70) ? below(&t->rng, 4) : r32(&t->rng);
		break;
	case VIDIOC_QUERYCTRL:
	case VIDIOC_QUERY_EXT_CTRL:
	case VIDIOC_G_CTRL:
	case VIDIOC_S_CTRL:
		((uint32_t *)p)[0] = r_ctrl_id(t);
		if (cmd == VIDIOC_S_CTRL)
			((int32_t *)p)[1] = (int32_t)r32(&t->rng);
		break;
	case VIDIOC_QUERYMENU: {
		struct v4l2_querymenu *m = (void *)p;

		m->id = r_ctrl_id(t);
		m->index = chance(&t->rng, 80) ? below(&t->rng, 34) : r32(&t->rng);
		break;
	}
	case VIDIOC_G_EXT_CTRLS:
	case VIDIOC_S_EXT_CTRLS:
	case VIDIOC_TRY_EXT_CTRLS: {
		struct v4l2_ext_controls *c = (void *)p;
		static const uint32_t which[] = {
			V4L2_CTRL_WHICH_CUR_VAL, V4L2_CTRL_WHICH_DEF_VAL, V4L2_CTRL_WHICH_REQUEST_VAL,
			V4L2_CTRL_CLASS_USER, V4L2_CTRL_CLASS_CAMERA, V4L2_CTRL_CLASS_MPEG,
		};
		uint32_t n;

		c->which = chance(&t->rng, 90) ? which[below(&t->rng, 6)] : r32(&t->rng);
		n = chance(&t->rng, 80) ? below(&t->rng, 6) :
			(uint32_t[]){ 0, 64, V4L2_CID_MAX_CTRLS, V4L2_CID_MAX_CTRLS + 1,
				      0xffffffffu }[below(&t->rng, 5)];
		c->count = n;
		if (c->which == V4L2_CTRL_WHICH_REQUEST_VAL || chance(&t->rng, 5))
			c->request_fd = (int32_t)r32(&t->rng);
		if (n <= 64 && chance(&t->rng, 85)) {
			size_t need = n * sizeof(struct v4l2_ext_control);
			/* The array goes into the upper half, *c is in the lower quarter. */
			struct v4l2_ext_control *a = (void *)(t->arena + ARENA_LEN / 2);

			memset(a, 0, need);
			for (uint32_t i = 0; i < n; i++) {
				a[i].id = r_ctrl_id(t) & ~(V4L2_CTRL_FLAG_NEXT_CTRL |
							   V4L2_CTRL_FLAG_NEXT_COMPOUND);
				a[i].value = (int32_t)r32(&t->rng);
				if (chance(&t->rng, 10)) {
					a[i].size = r32(&t->rng);
					a[i].ptr = (void *)bad_ptr(t, a[i].size);
				}
			}
			c->controls = a;
		} else {
			c->controls = (void *)bad_ptr(t, n * sizeof(struct v4l2_ext_control));
		}
		break;
	}
	case VIDIOC_SUBSCRIBE_EVENT:
	case VIDIOC_UNSUBSCRIBE_EVENT: {
		struct v4l2_event_subscription *s = (void *)p;
		static const uint32_t types[] = {
			V4L2_EVENT_ALL, V4L2_EVENT_CTRL, V4L2_EVENT_EOS, V4L2_EVENT_SOURCE_CHANGE,
			VIACAM_EVENT_CONSUMERS, VIACAM_EVENT_STREAM_START, VIACAM_EVENT_STREAM_STOP,
			VIACAM_EVENT_CTRL, VIACAM_EVENT_INTERVAL, VIACAM_EVENT_FORMAT,
			VIACAM_EVENT_BASE, VIACAM_EVENT_BASE + 7, 0xffffffffu,
		};

		s->type = types[below(&t->rng, sizeof(types) / sizeof(types[0]))];
		s->id = s->type == V4L2_EVENT_CTRL ? r_ctrl_id(t) :
			(chance(&t->rng, 80) ? 0 : r32(&t->rng));
		s->flags = chance(&t->rng, 80) ? below(&t->rng, 4) : r32(&t->rng);
		break;
	}
	case VIACAM_IOC_S_FORMATS: {
		struct viacam_formats *fs = (void *)p;
		uint32_t n = chance(&t->rng, 85) ? below(&t->rng, 9) :
			(uint32_t[]){ 0, VIACAM_MAX_FORMATS - 1, VIACAM_MAX_FORMATS,
				      VIACAM_MAX_FORMATS + 1, 0x10000, 0xffffffffu }[below(&t->rng, 6)];
		size_t need = (size_t)(n <= VIACAM_MAX_FORMATS + 1 ? n : 0) *
			sizeof(struct viacam_format);

		fs->count = n;
		if (chance(&t->rng, 3))
			fs->reserved0 = r32(&t->rng);
		if (chance(&t->rng, 3))
			fs->reserved[below(&t->rng, 4)] = r32(&t->rng);
		if (chance(&t->rng, 85) && need) {
			struct viacam_format *a = (void *)(p + 64);

			/* Mostly a few tuples repeated, so they share formats and sizes. */
			for (uint32_t i = 0; i < n; i++) {
				if (i && chance(&t->rng, 50)) {
					a[i] = a[below(&t->rng, i)];
					if (chance(&t->rng, 50))
						a[i].interval_den = 1 + below(&t->rng, 60);
				} else {
					r_viacam_format(t, &a[i]);
				}
			}
			if (chance(&t->rng, 10) && n) {
				/* The same entries, but the last one runs off the arena. */
				uint8_t *end_at = t->arena + ARENA_LEN - need + below(&t->rng, 32) + 1;

				memmove(end_at, a, need - (size_t)(end_at + need - (t->arena + ARENA_LEN)));
				a = (void *)end_at;
			}
			fs->formats = (uintptr_t)a;
		} else {
			fs->formats = bad_ptr(t, need ? need : 32);
		}
		return (uintptr_t)p;
	}
	case VIACAM_IOC_S_CTRLS: {
		struct viacam_ctrls *cs = (void *)p;
		uint32_t n = chance(&t->rng, 85) ? below(&t->rng, 6) :
			(uint32_t[]){ 0, VIACAM_MAX_CTRLS - 1, VIACAM_MAX_CTRLS,
				      VIACAM_MAX_CTRLS + 1, 0xffffffffu }[below(&t->rng, 5)];
		size_t need = (size_t)(n <= VIACAM_MAX_CTRLS + 1 ? n : 0) *
			sizeof(struct viacam_ctrl);

		cs->count = n;
		if (chance(&t->rng, 3))
			cs->reserved0 = r32(&t->rng);
		if (chance(&t->rng, 85) && need && need + 64 <= ARENA_LEN) {
			struct viacam_ctrl *a = (void *)(p + 64);

			for (uint32_t i = 0; i < n; i++) {
				if (i && chance(&t->rng, 10))
					a[i] = a[below(&t->rng, i)];	/* duplicate id */
				else
					r_viacam_ctrl(t, &a[i]);
			}
			cs->ctrls = (uintptr_t)a;
		} else {
			cs->ctrls = bad_ptr(t, need ? need : 64);
		}
		return (uintptr_t)p;
	}
	case VIACAM_IOC_LEND:
	case VIACAM_IOC_DELIVER:
	case VIACAM_IOC_UNLEND: {
		/* Ids are small numbers given out in order: near ones hit real lends now and then. */
		struct viacam_lend *l = (void *)p;

		l->id = chance(&t->rng, 85) ? below(&t->rng, 200) : r32(&t->rng);
		l->bytesused = (uint32_t[]){ 0, 614400, 153600, 1, r32(&t->rng) }[below(&t->rng, 5)];
		l->timestamp = chance(&t->rng, 50) ? 0 : rnd(&t->rng);
		if (chance(&t->rng, 5))
			l->reserved[below(&t->rng, 4)] = r32(&t->rng);
		break;
	}
	case VIACAM_IOC_S_INFO: {
		struct viacam_info *in = (void *)p;

		r_name(t, in->card, sizeof(in->card), true);
		if (chance(&t->rng, 5))
			in->reserved[below(&t->rng, 8)] = r32(&t->rng);
		break;
	}
	case VIACAM_IOC_QUERY:
	case VIACAM_IOC_REMOVE:
	case VIACAM_IOC_ADD: {
		struct viacam_camera *c = (void *)p;

		c->id = chance(&t->rng, 50) ? VIACAM_ID_AUTO :
			(chance(&t->rng, 80) ? below(&t->rng, 8) : r32(&t->rng));
		c->capture_nr = chance(&t->rng, 70) ? VIACAM_NR_AUTO : (int32_t)below(&t->rng, 260) - 2;
		c->backend_nr = chance(&t->rng, 70) ? VIACAM_NR_AUTO : (int32_t)below(&t->rng, 260) - 2;
		c->timeout_ms = chance(&t->rng, 70) ? below(&t->rng, 2000) : r32(&t->rng);
		r_name(t, c->label, sizeof(c->label), true);
		if (chance(&t->rng, 5))
			c->capture_nrs[below(&t->rng, 7)] = r32(&t->rng);
		if (chance(&t->rng, 10))
			c->capture_count = below(&t->rng, 10);
		break;
	}
	default:
		/* No fields worth choosing (QUERYCAP, G_*, LIST, VERSION...): random bytes. */
		fill_payload(&t->rng, p, size);
		break;
	}
	return (uintptr_t)p;
}

/*
 * Random bytes for a command that carries user pointers: replace the pointers by ours.
 * (The V4L2 core copies such arrays back even when the call fails, and a pointer made of
 * small random words could name memory of ours, e.g. a stack.)
 */
static void sanitize_payload(struct tctx *t, unsigned long cmd, uint8_t *payload)
{
	union {
		struct v4l2_buffer b;
		struct v4l2_ext_controls c;
	} u;	/* an aligned copy: the payload may be misaligned on purpose */
	uint8_t *p = (uint8_t *)&u;

	if (_IOC_SIZE(cmd) > sizeof(u))
		return;
	memcpy(&u, payload, _IOC_SIZE(cmd));
	if (cmd == VIDIOC_QUERYBUF || cmd == VIDIOC_QBUF || cmd == VIDIOC_DQBUF ||
	    cmd == VIDIOC_PREPARE_BUF) {
		struct v4l2_buffer *b = (void *)p;

		if (b->type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE ||
		    b->type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE) {
			uint32_t n = b->length < 16 ? b->length : 16;
			struct v4l2_plane *pl = (void *)(t->arena + ARENA_LEN / 2);

			for (uint32_t i = 0; i < n; i++) {
				fill_payload(&t->rng, &pl[i], sizeof(pl[i]));
				pl[i].m.userptr = userptr_buf(t, &pl[i].length);
			}
			b->m.planes = chance(&t->rng, 80) ? pl :
				(void *)bad_ptr(t, n * sizeof(*pl));
		} else if (b->memory == V4L2_MEMORY_USERPTR) {
			b->m.userptr = userptr_buf(t, &b->length);
		}
	} else if (cmd == VIDIOC_G_EXT_CTRLS || cmd == VIDIOC_S_EXT_CTRLS ||
		   cmd == VIDIOC_TRY_EXT_CTRLS) {
		struct v4l2_ext_controls *c = (void *)p;
		uint32_t n = c->count <= 64 ? c->count : 0;
		struct v4l2_ext_control *a = (void *)(t->arena + ARENA_LEN / 2);

		for (uint32_t i = 0; i < n; i++) {
			fill_payload(&t->rng, &a[i], sizeof(a[i]));
			a[i].ptr = (void *)bad_ptr(t, a[i].size);
		}
		c->controls = c->count <= 64 && chance(&t->rng, 80) ? a :
			(void *)bad_ptr(t, (size_t)c->count * sizeof(*a));
	}
	memcpy(payload, &u, _IOC_SIZE(cmd));
}

/* After an ioctl: keep what it created (exported dmabuf fds). */
static void after_ioctl(unsigned long cmd, long ret, uintptr_t arg, struct tctx *t)
{
	if (cmd == VIDIOC_EXPBUF && ret == 0 && in_arena(t, arg, sizeof(struct v4l2_exportbuffer))) {
		int fd = ((struct v4l2_exportbuffer *)arg)->fd;

		if (fd > 2)
			dmabuf_add(fd);
	}
	/* A lent capture buffer's dma-buf: kept for DMABUF imports, like EXPBUF's. */
	if (cmd == VIACAM_IOC_LEND && ret == 0 && in_arena(t, arg, sizeof(struct viacam_lend))) {
		int fd = ((struct viacam_lend *)arg)->fd;

		if (fd > 2)
			dmabuf_add(fd);
	}
}

/* ------------------------------------------------------------------------
 * Actions
 */

static const struct ioc *pick_ioc(struct tctx *t, const struct ref *r)
{
	for (;;) {
		const struct ioc *i = &iocs[below(&t->rng, NIOCS)];

		if ((i->nodes & (1u << r->node.kind)) || chance(&t->rng, 5))
			return i;
	}
}

/* A random command number in the 'V' space: standard or private, random size/direction. */
static unsigned long random_cmd(struct tctx *t)
{
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	unsigned int nr, size, type = 'V';

	if (chance(&t->rng, 50))
		nr = below(&t->rng, 110);
	else if (chance(&t->rng, 80))
		nr = BASE_VIDIOC_PRIVATE + below(&t->rng, 32);
	else
		nr = below(&t->rng, 256);
	if (chance(&t->rng, 5))
		type = (uint8_t)rnd(&t->rng);
	if (chance(&t->rng, 40)) {
		/* A known command's size with another direction or number: near misses. */
		const struct ioc *i = &iocs[below(&t->rng, NIOCS)];

		size = _IOC_SIZE(i->cmd);
		if (chance(&t->rng, 50))
			nr = _IOC_NR(i->cmd);
	} else {
		size = chance(&t->rng, 70) ? below(&t->rng, 512) : below(&t->rng, 1u << 14);
	}
	return _IOC(dirs[below(&t->rng, 4)], type, nr, size);
}

static void act_ioctl(struct tctx *t, enum action a)
{
	struct ref r;
	unsigned long cmd;
	uintptr_t arg;
	int cleanup = -1;
	long ret;

	if (!get_ref(t, &r))
		return;
	if (a == A_IOCTL_RANDOM) {
		cmd = random_cmd(t);
		size_t size = _IOC_SIZE(cmd);

		if (chance(&t->rng, 80)) {
			uint8_t *p = arena_bytes(t, size);

			fill_payload(&t->rng, p, size);
			sanitize_payload(t, cmd, p);
			arg = (uintptr_t)p;
		} else {
			arg = bad_ptr(t, size);
		}
	} else {
		const struct ioc *i = pick_ioc(t, &r);
		size_t size = _IOC_SIZE(i->cmd);

		cmd = i->cmd;
		if (a == A_IOCTL_BYTES) {
			uint8_t *p = arena_bytes(t, size);

			fill_payload(&t->rng, p, size);
			sanitize_payload(t, cmd, p);
			arg = chance(&t->rng, 85) ? (uintptr_t)p : bad_ptr(t, size);
		} else {
			arg = build_struct(t, &r, cmd, &cleanup);
			if (chance(&t->rng, 3))
				arg = bad_ptr(t, size);
		}
	}
	ret = fuzz_ioctl(t, &r, cmd, arg);
	after_ioctl(cmd, ret, arg, t);
	if (cleanup >= 0)
		close(cleanup);
	if (ret < 0 && errno == ENODEV && r.node.kind != K_CTL && chance(&t->rng, 50))
		drop_slot(&r);	/* its camera is gone: make room for live nodes */
	put_ref(t, &r);
}

/* Set up streaming on one fd in one go (deeper states than single random calls reach). */
static void act_recipe(struct tctx *t)
{
	struct ref r;
	uint32_t type, mem, count;
	int cleanup;

	if (!get_ref(t, &r))
		return;
	if (r.node.kind == K_CTL) {
		put_ref(t, &r);
		return;
	}
	type = r.node.kind == K_OUT ? V4L2_BUF_TYPE_VIDEO_OUTPUT : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	mem = (uint32_t[]){ V4L2_MEMORY_MMAP, V4L2_MEMORY_MMAP, V4L2_MEMORY_USERPTR,
			    V4L2_MEMORY_DMABUF }[below(&t->rng, 4)];
	count = 1 + below(&t->rng, 6);

	if (chance(&t->rng, 40)) {
		uintptr_t arg = build_struct(t, &r, VIDIOC_S_FMT, &cleanup);

		fuzz_ioctl(t, &r, VIDIOC_S_FMT, arg);
	}
	struct v4l2_format *f = (void *)arena_ptr(t, sizeof(*f));

	memset(f, 0, sizeof(*f));
	f->type = type;
	if (fuzz_ioctl(t, &r, VIDIOC_G_FMT, (uintptr_t)f) < 0)
		goto out;
	uint32_t sizeimage = f->fmt.pix.sizeimage;
	struct v4l2_requestbuffers *rb = (void *)arena_ptr(t, sizeof(*rb));

	memset(rb, 0, sizeof(*rb));
	rb->count = count;
	rb->type = type;
	rb->memory = mem;
	if (fuzz_ioctl(t, &r, VIDIOC_REQBUFS, (uintptr_t)rb) < 0)
		goto out;
	count = rb->count;
	for (uint32_t i = 0; i < count && i < 32; i++) {
		struct v4l2_buffer *b = (void *)arena_ptr(t, sizeof(*b));
		bool dup = false;
		int dfd = -1;

		memset(b, 0, sizeof(*b));
		b->type = type;
		b->memory = mem;
		b->index = i;
		if (fuzz_ioctl(t, &r, VIDIOC_QUERYBUF, (uintptr_t)b) < 0)
			break;
		size_t len = b->length;
		uint32_t off = b->m.offset;

		if (mem == V4L2_MEMORY_MMAP && chance(&t->rng, 70)) {
			int prot = r.node.kind == K_OUT ? PROT_READ | PROT_WRITE : PROT_READ;

			begin(t, "mmap fd=%d (%s) len %zu off 0x%x", r.fd, r.node.path, len, off);
			void *m = mmap(NULL, len, prot, MAP_SHARED, r.fd, off);

			end(t, m == MAP_FAILED ? -1 : 0);
			if (m != MAP_FAILED) {
				if (r.node.kind == K_OUT)
					memset(m, (int)below(&t->rng, 256), len < 64 ? len : 64);
				map_add(m, len, prot);
			}
		}
		memset(b, 0, sizeof(*b));
		b->type = type;
		b->memory = mem;
		b->index = i;
		b->bytesused = r.node.kind == K_OUT ? sizeimage : 0;
		b->field = V4L2_FIELD_NONE;
		if (mem == V4L2_MEMORY_USERPTR) {
			b->m.userptr = user_buf(t, sizeimage);
			b->length = sizeimage;
		} else if (mem == V4L2_MEMORY_DMABUF) {
			dfd = dmabuf_fd(t, &dup);
			b->m.fd = dfd;
			b->length = sizeimage;
		}
		fuzz_ioctl(t, &r, VIDIOC_QBUF, (uintptr_t)b);
		if (dup)
			close(dfd);
	}
	if (chance(&t->rng, 80)) {
		uint32_t *tp = (void *)arena_ptr(t, 4);

		*tp = type;
		fuzz_ioctl(t, &r, VIDIOC_STREAMON, (uintptr_t)tp);
	}
out:
	put_ref(t, &r);
}

static void act_stream(struct tctx *t)
{
	struct ref r;
	uint32_t *tp;

	if (!get_ref(t, &r))
		return;
	tp = (void *)arena_ptr(t, 4);
	*tp = r.node.kind == K_OUT ? V4L2_BUF_TYPE_VIDEO_OUTPUT : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	fuzz_ioctl(t, &r, chance(&t->rng, 50) ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, (uintptr_t)tp);
	put_ref(t, &r);
}

/* DQBUF (and requeue what comes back), or DQEVENT. Blocking fds get kicked by the watchdog. */
static void act_dqbuf(struct tctx *t)
{
	struct ref r;

	if (!get_ref(t, &r))
		return;
	if (chance(&t->rng, 25)) {
		struct v4l2_event *ev = (void *)arena_ptr(t, sizeof(*ev));

		fuzz_ioctl(t, &r, VIDIOC_DQEVENT, (uintptr_t)ev);
		put_ref(t, &r);
		return;
	}
	for (int n = 1 + (int)below(&t->rng, 4); n > 0; n--) {
		struct v4l2_buffer *b = (void *)arena_ptr(t, sizeof(*b));
		uint32_t mem = chance(&t->rng, 80) ? V4L2_MEMORY_MMAP : r_memory(t);

		memset(b, 0, sizeof(*b));
		b->type = r.node.kind == K_OUT ? V4L2_BUF_TYPE_VIDEO_OUTPUT :
						 V4L2_BUF_TYPE_VIDEO_CAPTURE;
		b->memory = mem;
		if (fuzz_ioctl(t, &r, VIDIOC_DQBUF, (uintptr_t)b) < 0)
			break;
		if (b->bytesused > b->length && b->memory == V4L2_MEMORY_MMAP)
			violation(t, "DQBUF on %s: bytesused %u > length %u", r.node.path,
				  b->bytesused, b->length);
		if (chance(&t->rng, 80)) {
			if (b->memory == V4L2_MEMORY_USERPTR) {
				b->m.userptr = userptr_buf(t, &b->length);
			} else if (b->memory == V4L2_MEMORY_DMABUF) {
				put_ref(t, &r);
				return;	/* the dmabuf fd number is not ours to reuse */
			}
			fuzz_ioctl(t, &r, VIDIOC_QBUF, (uintptr_t)b);
		}
	}
	put_ref(t, &r);
}

static void act_mmap(struct tctx *t)
{
	static const size_t lens[] = { 0, 1, PAGE, 2 * PAGE, 640 * 480 * 2, 320 * 240 * 2,
				       160 * 120 * 2, 1 << 20, 64 << 20, (size_t)1 << 40 };
	int prots[] = { PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
			PROT_READ | PROT_EXEC };
	int flags = chance(&t->rng, 85) ? MAP_SHARED : MAP_PRIVATE;
	int prot = prots[below(&t->rng, 5)];
	bool dmabuf = chance(&t->rng, 15);
	size_t len = lens[below(&t->rng, sizeof(lens) / sizeof(lens[0]))];
	off_t off;
	struct ref r;
	int fd;
	void *m;

	if (chance(&t->rng, 30))
		len = (size_t)below(&t->rng, 1u << 20);
	switch (below(&t->rng, 4)) {
	case 0: off = 0; break;
	case 1: off = (off_t)below(&t->rng, 64) * PAGE; break;	/* vb2 buffer offsets */
	case 2: off = (off_t)((uint64_t)below(&t->rng, 32) << 24) * PAGE; break;
	default: off = (off_t)(rnd(&t->rng) & ~(uint64_t)(PAGE - 1) & 0x7fffffffffffull); break;
	}
	if (dmabuf) {
		bool dup;

		fd = dmabuf_fd(t, &dup);
		if (!dup)
			return;
		begin(t, "mmap dmabuf fd=%d len %zu off 0x%llx prot %d flags %d", fd, len,
		      (unsigned long long)off, prot, flags);
		m = mmap(NULL, len, prot, flags, fd, off);
		end(t, m == MAP_FAILED ? -1 : 0);
		close(fd);
	} else {
		if (!get_ref(t, &r))
			return;
		begin(t, "mmap fd=%d (%s %s) len %zu off 0x%llx prot %d flags %d", r.fd,
		      kind_name[r.node.kind], r.node.path, len, (unsigned long long)off, prot, flags);
		m = mmap(NULL, len, prot, flags, r.fd, off);
		end(t, m == MAP_FAILED ? -1 : 0);
		put_ref(t, &r);
	}
	if (m != MAP_FAILED)
		map_add(m, len, prot);
}

static size_t r_iolen(struct tctx *t)
{
	static const size_t lens[] = { 0, 1, 4, 4095, 4096, 160 * 120 * 2, 320 * 240 * 2,
				       640 * 480 * 2, 640 * 480 * 3 / 2, 1 << 20, SCRATCH_LEN,
				       (size_t)1 << 31, SIZE_MAX };

	if (chance(&t->rng, 30))
		return below(&t->rng, 1u << 20);
	return lens[below(&t->rng, sizeof(lens) / sizeof(lens[0]))];
}

static void act_rw(struct tctx *t, bool wr)
{
	struct ref r;
	size_t len = r_iolen(t);
	uintptr_t buf = user_buf(t, len > SCRATCH_LEN ? SCRATCH_LEN : len);

	if (!get_ref(t, &r))
		return;
	begin(t, "%s fd=%d (%s %s%s) buf 0x%" PRIxPTR " len %zu", wr ? "write" : "read", r.fd,
	      kind_name[r.node.kind], r.node.path, r.flags & O_NONBLOCK ? " nonblock" : "", buf, len);
	if (wr)
		end(t, sys_write(r.fd, buf, len));
	else
		end(t, sys_read(r.fd, buf, len));
	put_ref(t, &r);
}

static void act_poll(struct tctx *t)
{
	static const short evs[] = { POLLIN, POLLOUT, POLLPRI, POLLERR, POLLHUP, POLLRDNORM,
				     POLLWRNORM };
	struct ref refs[3];
	struct pollfd pfd[3];
	int n = 0;

	for (int i = 0; i < 3; i++) {
		if (i && chance(&t->rng, 50))
			break;
		if (!get_ref(t, &refs[n]))
			continue;
		pfd[n].fd = refs[n].fd;
		pfd[n].events = 0;
		for (int k = 0; k < 3; k++)
			pfd[n].events |= evs[below(&t->rng, 7)];
		if (chance(&t->rng, 10))
			pfd[n].events = (short)rnd(&t->rng);
		pfd[n].revents = 0;
		n++;
	}
	if (!n)
		return;
	int timeout = (int)below(&t->rng, 50);

	begin(t, "poll %d fds (first %s events 0x%x) timeout %d", n, refs[0].node.path,
	      (unsigned int)pfd[0].events, timeout);
	end(t, poll(pfd, (nfds_t)n, timeout));
	for (int i = 0; i < n; i++)
		put_ref(t, &refs[i]);
}

/* Export a buffer of one node and import it into another queue (or the same). */
static void act_dmabuf(struct tctx *t)
{
	struct ref r;

	if (!get_ref(t, &r))
		return;
	struct v4l2_exportbuffer *e = (void *)arena_ptr(t, sizeof(*e));

	memset(e, 0, sizeof(*e));
	e->type = r.node.kind == K_OUT ? V4L2_BUF_TYPE_VIDEO_OUTPUT : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	e->index = below(&t->rng, 6);
	e->flags = O_CLOEXEC | (chance(&t->rng, 50) ? O_RDWR : 0);
	long ret = fuzz_ioctl(t, &r, VIDIOC_EXPBUF, (uintptr_t)e);

	after_ioctl(VIDIOC_EXPBUF, ret, (uintptr_t)e, t);
	put_ref(t, &r);
}

static void act_ctl(struct tctx *t)
{
	struct ref r = { .slot = -1, .fd = g.ctl_fd, .node = { .kind = K_CTL, .path = "/dev/viacam" } };
	unsigned long cmd;
	int cleanup = -1;

	/* The long-lived fd (the pool's fds of /dev/viacam come and go with random calls). */
	switch (below(&t->rng, 10)) {
	case 0: case 1: cmd = VIACAM_IOC_ADD; break;
	case 2: cmd = VIACAM_IOC_REMOVE; break;
	case 3: case 4: case 5: case 6: cmd = VIACAM_IOC_QUERY; break;
	case 7: cmd = VIACAM_IOC_LIST; break;
	default: cmd = VIACAM_IOC_VERSION; break;
	}
	uintptr_t arg = build_struct(t, &r, cmd, &cleanup);

	if (cmd == VIACAM_IOC_REMOVE && chance(&t->rng, 70)) {
		/* Aim at a camera that exists: pick one from the node list. */
		struct node c;

		pick_node(t, &c);
		if (c.kind != K_CTL)
			((struct viacam_camera *)arg)->id = c.cam;
	}
	if (chance(&t->rng, 5))
		arg = bad_ptr(t, _IOC_SIZE(cmd));
	fuzz_ioctl(t, &r, cmd, arg);
	put_ref(t, &r);
}

static enum action pick_action(struct tctx *t)
{
	unsigned int total = 0, x;

	for (int i = 0; i < A_COUNT; i++)
		total += action_weight[i];
	x = below(&t->rng, total);
	for (int i = 0; i < A_COUNT; i++) {
		if (x < action_weight[i])
			return (enum action)i;
		x -= action_weight[i];
	}
	return A_IOCTL_STRUCT;
}

/* ------------------------------------------------------------------------
 * Threads
 */

static void on_kick(int sig)
{
	(void)sig;
}

static pthread_barrier_t start_barrier;

/*
 * Every thread (and its glibc malloc arena) exists before any fuzzing starts: nothing of
 * ours gets mapped after that, so a stale pointer into one of our unmapped driver mappings
 * can only ever land in another driver mapping, never in a stack or heap.
 */
static void thread_start(struct tctx *t)
{
	t->tid = (pid_t)syscall(SYS_gettid);
	free(malloc(64));
	pthread_barrier_wait(&start_barrier);
}

static void *fuzz_main(void *arg)
{
	struct tctx *t = arg;

	thread_start(t);
	while (!stopping() && now_ms() < g.end_ms) {
		enum action a = pick_action(t);

		atomic_fetch_add(&action_count[a], 1);
		switch (a) {
		case A_OPEN: do_open(t, (int)below(&t->rng, NSLOTS)); break;
		case A_CLOSE: do_close(t); break;
		case A_IOCTL_RANDOM:
		case A_IOCTL_BYTES:
		case A_IOCTL_STRUCT: act_ioctl(t, a); break;
		case A_RECIPE: act_recipe(t); break;
		case A_STREAM: act_stream(t); break;
		case A_DQBUF: act_dqbuf(t); break;
		case A_MMAP: act_mmap(t); break;
		case A_MUNMAP: do_munmap(t); break;
		case A_TOUCH: do_touch(t); break;
		case A_READ: act_rw(t, false); break;
		case A_WRITE: act_rw(t, true); break;
		case A_POLL: act_poll(t); break;
		case A_DMABUF: act_dmabuf(t); break;
		case A_CTL: act_ctl(t); break;
		default: break;
		}
		t->ops++;
	}
	return NULL;
}

/*
 * The data path: a producer on the protected camera's backend node (mmap, 30 fps) and a
 * consumer on its capture node, each restarting after any error and now and then on
 * purpose. The consumer checks what V4L2 promises: consecutive sequence numbers,
 * bytesused <= length.
 */
struct dstream {
	int fd;
	uint32_t type;
	unsigned int count;
	void *mem[8];
	size_t len[8];
	uint32_t sizeimage;
};

static void dstream_close(struct tctx *t, struct dstream *s)
{
	for (unsigned int i = 0; i < s->count; i++)
		if (s->mem[i] && s->mem[i] != MAP_FAILED)
			munmap(s->mem[i], s->len[i]);
	s->count = 0;
	if (s->fd >= 0) {
		begin(t, "data: close fd=%d", s->fd);
		end(t, close(s->fd));
	}
	s->fd = -1;
}

static int dstream_open(struct tctx *t, struct dstream *s, bool out)
{
	struct node n;
	struct v4l2_format f = { .type = out ? V4L2_BUF_TYPE_VIDEO_OUTPUT :
					       V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_requestbuffers rb = { .type = f.type, .memory = V4L2_MEMORY_MMAP, .count = 4 };

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->type = f.type;
	if (!find_node(g.protected_cam, out ? K_OUT : K_CAP, &n))
		return -1;
	begin(t, "data: open %s", n.path);
	s->fd = (int)end(t, open(n.path, O_RDWR | O_NONBLOCK | O_CLOEXEC));
	if (s->fd < 0)
		return -1;
	if (out && chance(&t->rng, 50)) {
		/* A new size; while a consumer streams another one that gives EBUSY. */
		f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
		f.fmt.pix.width = chance(&t->rng, 50) ? 320 : 160;
		f.fmt.pix.height = f.fmt.pix.width * 3 / 4;
		begin(t, "data: S_FMT %s", n.path);
		if (end(t, ioctl(s->fd, VIDIOC_S_FMT, &f)) < 0)
			memset(&f.fmt, 0, sizeof(f.fmt));
	}
	if (!f.fmt.pix.sizeimage) {
		begin(t, "data: G_FMT %s", n.path);
		if (end(t, ioctl(s->fd, VIDIOC_G_FMT, &f)) < 0)
			return -1;
	}
	s->sizeimage = f.fmt.pix.sizeimage;
	begin(t, "data: REQBUFS %s", n.path);
	if (end(t, ioctl(s->fd, VIDIOC_REQBUFS, &rb)) < 0 || rb.count > 8)
		return -1;
	for (unsigned int i = 0; i < rb.count; i++) {
		struct v4l2_buffer b = { .type = f.type, .memory = V4L2_MEMORY_MMAP, .index = i };

		begin(t, "data: QUERYBUF %s", n.path);
		if (end(t, ioctl(s->fd, VIDIOC_QUERYBUF, &b)) < 0)
			return -1;
		s->len[i] = b.length;
		s->mem[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
				 b.m.offset);
		s->count = i + 1;
		if (s->mem[i] == MAP_FAILED)
			return -1;
		b.bytesused = out ? s->sizeimage : 0;
		if (out && s->sizeimage <= b.length)
			memset(s->mem[i], 0x40 + (int)i, s->sizeimage);
		begin(t, "data: QBUF %s", n.path);
		if (end(t, ioctl(s->fd, VIDIOC_QBUF, &b)) < 0)
			return -1;
	}
	int type = (int)f.type;

	begin(t, "data: STREAMON %s", n.path);
	return (int)end(t, ioctl(s->fd, VIDIOC_STREAMON, &type));
}

static void *data_main(void *arg)
{
	struct tctx *t = arg;
	bool out = !strcmp(t->role, "producer");
	struct dstream s = { .fd = -1 };
	uint32_t expect = 0;
	bool have_seq = false;
	double restart_at = 0;

	thread_start(t);
	while (!stopping()) {
		if (s.fd < 0 || now_ms() > restart_at) {
			dstream_close(t, &s);
			have_seq = false;
			if (dstream_open(t, &s, out) < 0) {
				int e = errno;

				pthread_mutex_lock(&t->what_lock);
				snprintf(t->lastfail, sizeof(t->lastfail), "%s: %s", t->what, errname(e));
				pthread_mutex_unlock(&t->what_lock);
				dstream_close(t, &s);
				atomic_fetch_add(&g.data_restarts, 1);
				usleep(50000);
				continue;
			}
			restart_at = now_ms() + 2000 + below(&t->rng, 8000);
		}
		struct pollfd p = { .fd = s.fd, .events = out ? POLLOUT : POLLIN };

		begin(t, "data: poll");
		if (end(t, poll(&p, 1, 200)) <= 0)
			continue;
		struct v4l2_buffer b = { .type = s.type, .memory = V4L2_MEMORY_MMAP };

		begin(t, "data: DQBUF");
		if (end(t, ioctl(s.fd, VIDIOC_DQBUF, &b)) < 0) {
			if (errno != EAGAIN)
				dstream_close(t, &s);
			continue;
		}
		if (b.index >= s.count) {
			violation(t, "DQBUF gave index %u of %u buffers", b.index, s.count);
			dstream_close(t, &s);
			continue;
		}
		if (!out) {
			if (b.bytesused > b.length)
				violation(t, "capture DQBUF: bytesused %u > length %u", b.bytesused,
					  b.length);
			if (have_seq && b.sequence != expect && !(b.flags & V4L2_BUF_FLAG_ERROR)) {
				atomic_fetch_add(&g.seq_bad, 1);
				violation(t, "capture sequence %u after %u", b.sequence, expect - 1);
			}
			expect = b.sequence + 1;
			have_seq = true;
			atomic_fetch_add(&g.frames_out, 1);
		} else {
			atomic_fetch_add(&g.frames_in, 1);
			b.bytesused = s.sizeimage;
			usleep(33000);
		}
		begin(t, "data: QBUF");
		if (end(t, ioctl(s.fd, VIDIOC_QBUF, &b)) < 0)
			dstream_close(t, &s);
	}
	dstream_close(t, &s);
	return NULL;
}

/* Kick blocked calls with SIGUSR1; a call that stays stuck for hang_s seconds is a hang. */
static void *watchdog_main(void *arg)
{
	(void)arg;
	free(malloc(64));
	pthread_barrier_wait(&start_barrier);
	for (;;) {
		uint64_t now = now_ns();

		for (int i = 0; i < g.nctx; i++) {
			struct tctx *t = g.threads[i];
			uint64_t start = atomic_load(&t->call_start_ns);
			uint64_t kick = atomic_load(&t->last_kick_ns);

			if (!start || now < start)
				continue;
			if (now - start > (uint64_t)g.hang_s * 1000000000ull) {
				char what[256];

				pthread_mutex_lock(&t->what_lock);
				memcpy(what, t->what, sizeof(what));
				pthread_mutex_unlock(&t->what_lock);
				pthread_mutex_lock(&g.print_lock);
				printf("vcfuzz: HANG: %s thread %d (tid %d) has been in one call for "
				       "%.1f s: %s\n", t->role, t->idx, (int)t->tid,
				       (double)(now - start) / 1e9, what);
				printf("vcfuzz: HANG found with seed=%" PRIu64 "\n", g.seed);
				char path[64], buf[4096];

				snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)t->tid);
				int fd = open(path, O_RDONLY);

				if (fd >= 0) {
					ssize_t n = read(fd, buf, sizeof(buf) - 1);

					if (n > 0) {
						buf[n] = 0;
						printf("vcfuzz: kernel stack of tid %d:\n%s", (int)t->tid,
						       buf);
					}
					close(fd);
				}
				fflush(stdout);
				/* All blocked tasks into the kernel log, for the harness's logs. */
				fd = open("/proc/sysrq-trigger", O_WRONLY);
				if (fd >= 0) {
					if (write(fd, "w", 1) < 0)
						perror("sysrq");
					close(fd);
				}
				_exit(3);
			}
			if (now - start > KICK_MS * 1000000ull &&
			    (!kick || now - kick > KICK_MS * 1000000ull)) {
				atomic_store(&t->last_kick_ns, now);
				pthread_kill(t->th, SIGUSR1);
			}
		}
		usleep(50000);
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * Set-up and the end
 */

static void *map_or_die(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		perror("vcfuzz: mmap");
		exit(2);
	}
	return p;
}

/* @len bytes of RW memory between two PROT_NONE guard pages. */
static uint8_t *guarded(size_t len)
{
	uint8_t *p = map_or_die(len + 2 * PAGE, PROT_NONE);

	if (mprotect(p + PAGE, len, PROT_READ | PROT_WRITE) < 0) {
		perror("vcfuzz: mprotect");
		exit(2);
	}
	return p + PAGE;
}

static void setup_memory(void)
{
	struct viacam_camera *c;
	uint8_t *h;

	/* SCRATCH_LEN of PROT_NONE on either side: see user_buf(). */
	g.scratch = map_or_die(3 * (size_t)SCRATCH_LEN, PROT_NONE) + SCRATCH_LEN;
	if (mprotect(g.scratch, SCRATCH_LEN, PROT_READ | PROT_WRITE) < 0) {
		perror("vcfuzz: mprotect");
		exit(2);
	}
	/* The read-only page holds a harmless ADD request (an automatic id, label "ro"). */
	g.ro_page = map_or_die(PAGE, PROT_READ | PROT_WRITE);
	c = (void *)g.ro_page;
	c->id = VIACAM_ID_AUTO;
	c->capture_nr = VIACAM_NR_AUTO;
	c->backend_nr = VIACAM_NR_AUTO;
	strcpy(c->label, "ro");
	mprotect(g.ro_page, PAGE, PROT_READ);
	g.none_page = map_or_die(PAGE, PROT_NONE);
	h = map_or_die(3 * PAGE, PROT_NONE);
	munmap(h + PAGE, PAGE);
	g.hole = h + PAGE;
}

static struct tctx *new_ctx(int idx, const char *role, uint64_t seed)
{
	struct tctx *t = calloc(1, sizeof(*t));

	if (!t)
		exit(2);
	t->idx = idx;
	t->role = role;
	rng_seed(&t->rng, seed);
	t->arena = guarded(ARENA_LEN);
	pthread_mutex_init(&t->what_lock, NULL);
	g.threads[g.nctx++] = t;
	return t;
}

/* Close everything we hold, so that the module is idle again. */
static void release_all(void)
{
	for (int i = 0; i < NSLOTS; i++)
		if (g.slots[i].fd >= 0)
			close(slot_take_locked(&g.slots[i]));
	for (int i = 0; i < NMAPS; i++)
		if (g.maps[i].addr) {
			munmap(g.maps[i].addr, g.maps[i].len);
			g.maps[i].addr = NULL;
		}
	for (int i = 0; i < NDMABUFS; i++)
		if (g.dmabufs[i] >= 0) {
			close(g.dmabufs[i]);
			g.dmabufs[i] = -1;
		}
}

/* Back to the camera set of the start, without declarations. Returns problems found. */
static int restore_cameras(void)
{
	static struct viacam_list l;
	int problems = 0;

	struct node pn;

	/* A fuzzer self-check: the data path's camera must have survived. */
	if (!find_node(g.protected_cam, K_CAP, &pn) || strcmp(pn.path, g.protected_path)) {
		printf("vcfuzz: restore: camera %u (the data path's) was removed during the run\n",
		       g.protected_cam);
		problems++;
	}
	memset(&l, 0, sizeof(l));
	if (ioctl(g.ctl_fd, VIACAM_IOC_LIST, &l) < 0) {
		printf("vcfuzz: restore: LIST: %s\n", strerror(errno));
		return 1;
	}
	for (uint32_t i = 0; i < l.count && i < VIACAM_MAX_CAMERAS; i++) {
		bool initial = false;

		for (unsigned int k = 0; k < g.ninitial; k++)
			initial |= g.initial_ids[k] == l.ids[i];
		if (initial)
			continue;
		struct viacam_camera c = { .id = l.ids[i] };

		if (ioctl(g.ctl_fd, VIACAM_IOC_REMOVE, &c) < 0) {
			printf("vcfuzz: restore: REMOVE %u: %s\n", l.ids[i], strerror(errno));
			problems++;
		}
	}
	for (unsigned int k = 0; k < g.ninitial; k++) {
		struct viacam_camera c = { .id = g.initial_ids[k] };

		if (ioctl(g.ctl_fd, VIACAM_IOC_QUERY, &c) == 0)
			continue;
		c = (struct viacam_camera){ .id = g.initial_ids[k], .capture_nr = VIACAM_NR_AUTO,
					    .backend_nr = VIACAM_NR_AUTO };
		if (ioctl(g.ctl_fd, VIACAM_IOC_ADD, &c) < 0) {
			printf("vcfuzz: restore: ADD %u: %s\n", g.initial_ids[k], strerror(errno));
			problems++;
		}
	}
	refresh_nodes();
	for (int i = 0; i < g.nnodes; i++) {
		if (g.nodes[i].kind != K_OUT)
			continue;
		int fd = open(g.nodes[i].path, O_RDWR | O_CLOEXEC);
		struct viacam_formats fs = { 0 };
		struct viacam_ctrls cs = { 0 };
		struct viacam_info info = { .card = "" };

		if (fd < 0 || ioctl(fd, VIACAM_IOC_S_FORMATS, &fs) < 0 ||
		    ioctl(fd, VIACAM_IOC_S_CTRLS, &cs) < 0 || ioctl(fd, VIACAM_IOC_S_INFO, &info) < 0) {
			printf("vcfuzz: restore: clearing the declarations of %s: %s\n",
			       g.nodes[i].path, strerror(errno));
			problems++;
		}
		if (fd >= 0)
			close(fd);
	}
	return problems;
}

struct ecount {
	int e;
	long n;
};

static int cmp_ecount(const void *a, const void *b)
{
	const struct ecount *x = a, *y = b;

	return (y->n > x->n) - (y->n < x->n);
}

static void print_summary(double secs)
{
	static struct ecount ec[NERRNO];
	char line[2048];
	size_t o = 0;
	long total = 0, calls = 0;
	int n = 0;

	for (int i = 0; i < A_COUNT; i++)
		total += atomic_load(&action_count[i]);
	o += (size_t)snprintf(line + o, sizeof(line) - o, "vcfuzz: %ld actions in %.0f s:", total,
			      secs);
	for (int i = 0; i < A_COUNT && o < sizeof(line); i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, " %s=%ld", action_name[i],
				      atomic_load(&action_count[i]));
	printf("%s\n", line);
	for (int e = 0; e < NERRNO; e++) {
		long c = atomic_load(&g.errnos[e]);

		calls += c;
		if (c)
			ec[n++] = (struct ecount){ e, c };
	}
	qsort(ec, (size_t)n, sizeof(ec[0]), cmp_ecount);
	o = 0;
	o += (size_t)snprintf(line + o, sizeof(line) - o, "vcfuzz: %ld calls, results:", calls);
	for (int i = 0; i < n && o < sizeof(line); i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, " %s=%ld", errname(ec[i].e),
				      ec[i].n);
	printf("%s\n", line);
	printf("vcfuzz: data path: %ld frames in, %ld frames out, %ld stream restarts, "
	       "%ld sequence errors\n", atomic_load(&g.frames_in), atomic_load(&g.frames_out),
	       atomic_load(&g.data_restarts), atomic_load(&g.seq_bad));
	for (int i = g.nthreads; i < g.nctx; i++)
		if (g.threads[i]->lastfail[0])
			printf("vcfuzz: %s: last failed set-up: %s\n", g.threads[i]->role,
			       g.threads[i]->lastfail);
}

/* The fuzzer itself crashed: say where (seed, thread, last action, backtrace). */
static void on_crash(int sig, siginfo_t *si, void *uc)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	void *bt[32];
	int n;

	(void)uc;
	printf("vcfuzz: CRASH: signal %d at address %p in tid %d (seed=%" PRIu64 ")\n", sig,
	       si->si_addr, (int)tid, g.seed);
	for (int i = 0; i < g.nctx; i++)
		if (g.threads[i]->tid == tid)
			printf("vcfuzz: CRASH: %s thread %d, last action: %s\n", g.threads[i]->role,
			       g.threads[i]->idx, g.threads[i]->what);
	fflush(stdout);
	n = backtrace(bt, 32);
	backtrace_symbols_fd(bt, n, 1);
	_exit(5);
}

static void on_alarm(int sig)
{
	static const char msg[] = "vcfuzz: HANG: closing the fds / restoring the cameras did not end\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(4);
	_exit(3);
}

static void usage(void)
{
	fprintf(stderr, "usage: vcfuzz [-s SEED] [-t SECONDS] [-j THREADS] [-c CAMERAS] "
			"[-w HANG_SECONDS] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double secs = 60, t0;
	pthread_t wd;
	int o, problems;
	long cams_max = -1;
	bool seeded = false;
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	g.nthreads = 4;
	while ((o = getopt(argc, argv, "s:t:j:c:w:v")) >= 0) {
		switch (o) {
		case 's': g.seed = strtoull(optarg, NULL, 0); seeded = true; break;
		case 't': secs = atof(optarg); break;
		case 'j': g.nthreads = atoi(optarg); break;
		case 'c': cams_max = atol(optarg); break;
		case 'w': g.hang_s = atoi(optarg); break;
		case 'v': g.verbose = true; break;
		default: usage();
		}
	}
	if (optind != argc || g.nthreads < 1 || g.nthreads > MAX_THREADS || secs < 0 ||
	    g.hang_s < 1)
		usage();
	if (!seeded)
		g.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	printf("vcfuzz: seed=%" PRIu64 "\n", g.seed);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_kick;	/* no SA_RESTART: blocked calls end with EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < NSLOTS; i++)
		g.slots[i].fd = -1;
	for (int i = 0; i < NDMABUFS; i++)
		g.dmabufs[i] = -1;

	g.ctl_fd = open("/dev/viacam", O_RDWR | O_CLOEXEC);
	if (g.ctl_fd < 0) {
		fprintf(stderr, "vcfuzz: /dev/viacam: %s\n", strerror(errno));
		return 2;
	}
	refresh_nodes();
	g.ninitial = 0;
	g.protected_cam = VIACAM_ID_AUTO;
	for (int i = 0; i < g.nnodes; i++) {
		if (g.nodes[i].kind != K_CAP)
			continue;
		g.initial_ids[g.ninitial++] = g.nodes[i].cam;
		if (g.nodes[i].cam < g.protected_cam) {
			g.protected_cam = g.nodes[i].cam;
			memcpy(g.protected_path, g.nodes[i].path, sizeof(g.protected_path));
		}
	}
	if (!g.ninitial) {
		fprintf(stderr, "vcfuzz: no cameras (load viacam with devices=N)\n");
		return 2;
	}
	g.max_cams = cams_max > 0 ? (unsigned int)cams_max : g.ninitial + 4;
	if (g.max_cams > VIACAM_MAX_CAMERAS)
		g.max_cams = VIACAM_MAX_CAMERAS;
	printf("vcfuzz: %u cameras (at most %u), %d nodes, %d threads for %.0f s; "
	       "data path on camera %u\n", g.ninitial, g.max_cams, g.nnodes, g.nthreads, secs,
	       g.protected_cam);
	setup_memory();

	for (int i = 0; i < g.nthreads; i++)
		new_ctx(i, "fuzz", g.seed + (uint64_t)i);
	new_ctx(0, "producer", g.seed + 1000);
	new_ctx(0, "consumer", g.seed + 1001);
	pthread_barrier_init(&start_barrier, NULL, (unsigned int)g.nctx + 2);
	for (int i = 0; i < g.nctx; i++) {
		struct tctx *t = g.threads[i];

		if (pthread_create(&t->th, NULL, i < g.nthreads ? fuzz_main : data_main, t)) {
			fprintf(stderr, "vcfuzz: pthread_create failed\n");
			return 2;
		}
	}
	pthread_create(&wd, NULL, watchdog_main, NULL);
	pthread_detach(wd);
	t0 = now_ms();
	g.end_ms = t0 + secs * 1000;
	pthread_barrier_wait(&start_barrier);

	for (int i = 0; i < g.nthreads; i++)
		pthread_join(g.threads[i]->th, NULL);
	atomic_store(&g.stop, true);
	for (int i = g.nthreads; i < g.nctx; i++)
		pthread_join(g.threads[i]->th, NULL);
	double elapsed = (now_ms() - t0) / 1000;

	/* Closing and restoring must not hang either. */
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)g.hang_s + 10);
	release_all();
	problems = restore_cameras();
	print_summary(elapsed);
	if (problems)
		printf("vcfuzz: FAIL: %d problem(s) restoring the cameras\n", problems);
	if (atomic_load(&g.violations))
		printf("vcfuzz: FAIL: %ld user-space-visible rule violation(s) (seed=%" PRIu64 ")\n",
		       atomic_load(&g.violations), g.seed);
	printf("vcfuzz: done, seed=%" PRIu64 "\n", g.seed);
	fflush(stdout);
	_exit(problems || atomic_load(&g.violations) ? 1 : 0);
}
