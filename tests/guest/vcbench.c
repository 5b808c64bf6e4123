// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcbench.c - `make bench`: drive one (producer node, capture node) pair of a V4L2 loopback
 * bridge and measure it. Runs in the test guest; the same code drives viacam (backend node +
 * capture node) and v4l2loopback (one node opened twice), so every figure can be put side by
 * side with the peer's.
 *
 *   vcbench stream OPTIONS --mode fps       unpaced producer for --seconds; frames/s at the
 *                                           consumer, CPU per delivered frame
 *   vcbench stream OPTIONS --mode latency   producer paced at --rate for --frames frames;
 *                                           latency from QBUF/write() to DQBUF (p50/p99/max),
 *                                           CPU per frame, kernel copies per frame
 *   vcbench idle --prod X --cap X [--seconds T]
 *                                           the idle guest's CPU use (µs per second): the
 *                                           floor under every CPU-per-frame figure
 *   vcbench ctrl OPTIONS --load stream|blocked
 *                                           QUERYCAP / G_CTRL / S_CTRL latency on a third fd of
 *                                           the capture node while a stream runs at --rate, or
 *                                           while the consumer is blocked in DQBUF (the producer
 *                                           gave one frame and then nothing)
 * OPTIONS:
 *   --prod DEV --cap DEV        producer (OUTPUT) node and capture node (may be the same node)
 *   --size WxH                  YUYV frame size (default 640x480)
 *   --path write|mmap|lend      producer: write() of whole frames, or MMAP buffers + QBUF/DQBUF,
 *                               or (viacam) frames written into lent capture buffers
 *                               (VIACAM_IOC_LEND/DELIVER: no kernel copy), through an MMAP
 *                               backend buffer when nothing can be lent
 *   --seconds T --rate F --frames N --warmup N
 *   --buffers N                 buffers on each side (default 4)
 *   --stats FILE                viacam_stats sysfs file of the camera: frame and copy counters
 *   --declare                   viacam: declare a brightness control on the backend node first
 *   --torn                      stream: the consumer copies each whole frame out of its buffer
 *                               (as an encoder or a display would read it) and counts the frames
 *                               whose header and trailer (the frame counter, written by the
 *                               producer at the top and at the bottom of each frame) differ in
 *                               that copy: torn frames, a producer writing into memory a
 *                               consumer still reads
 *   --cap-read                  the consumer read()s each frame into freshly mapped memory, as a
 *                               reader that malloc()s a buffer per frame does (vb2's read()
 *                               emulation copies it to user space, faulting its pages in, under
 *                               the capture queue's lock) instead of streaming mmap buffers
 *   --extra DEV                 stream --mode fps: one more consumer, in a thread of its own, on
 *                               DEV (another capture node of the camera, or for v4l2loopback
 *                               the same node opened again); repeatable, at most 3. Adds
 *                               fps_min (the slowest consumer's frames/s) and consumers=N
 *   --ctrl ID                   control for G_CTRL/S_CTRL (default: the first writable integer
 *                               or boolean control of the capture node)
 *   --impl NAME --kernel K --tag KEY=VAL (repeatable): labels copied into every result line
 *
 * Output: one line per figure, "result impl=... kernel=... size=... path=... [tags]
 * metric=NAME value=V" (value "n/a" when the figure does not exist), plus "info ..." lines.
 * Exit status 0 on success, 1 on a failed measurement (with "vcbench: error: ..." on stderr),
 * 2 on bad usage.
 *
 * Frame contents: each producer buffer (and write()'s user buffer) is filled with a grey
 * pattern once, at setup; per frame only a 16-byte header changes (magic, frame counter), so
 * user space does no per-frame work proportional to the frame size. Every byte that reaches
 * the consumer is moved by the kernel.
 *
 * CPU per frame is the system-wide busy time (all CPUs: producer, consumer, the bridge's
 * kernel workers) across the measured window divided by the frames the consumer received; the
 * guest runs nothing else. It comes from /proc/schedstat (ns that tasks other than the idle
 * task ran) where the kernel has it, else from /proc/stat's busy ticks (10 ms resolution,
 * interrupts included); the tick figure is printed as well. getrusage() of this process gives
 * the user/sys split of producer + consumer alone (kernel threads are not in it).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <linux/viacam.h>

#define MAX_BUFS 32
#define RING 8192		/* send timestamps kept, by frame counter */
#define MAGIC 0x48434e42u	/* "BNCH" */
#define MAX_TAGS 8
#define MAX_EXTRA 3

/* ------------------------------------------------------------------------
 * Options, output, errors
 */

static struct {
	const char *prod, *cap, *impl, *kernel, *stats, *mode, *load;
	const char *tags[MAX_TAGS];
	int ntags;
	const char *extra[MAX_EXTRA];
	int nextra;
	uint32_t w, h;
	bool path_mmap, path_lend, declare, torn, cap_read;
	const char *path;		/* "write", "mmap" or "lend" */
	double seconds, rate;
	long frames, warmup;
	unsigned int buffers;
	uint32_t ctrl_id;
} opt = {
	.impl = "?", .kernel = "?", .mode = "fps", .load = "stream", .w = 640, .h = 480, .path = "write",
	.seconds = 3, .rate = 30, .frames = 150, .warmup = 10, .buffers = 4,
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "vcbench: error: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " [impl=%s size=%ux%u path=%s]\n", opt.impl, opt.w, opt.h, opt.path);
	va_end(ap);
	fflush(stdout);
	_exit(1);
}

static void result(const char *metric, const char *fmt, ...)
{
	va_list ap;

	printf("result impl=%s kernel=%s size=%ux%u path=%s", opt.impl, opt.kernel, opt.w, opt.h,
	       opt.path);
	for (int i = 0; i < opt.ntags; i++)
		printf(" %s", opt.tags[i]);
	if (opt.nextra)
		printf(" consumers=%d", opt.nextra + 1);
	printf(" metric=%s value=", metric);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000u),
			       .tv_nsec = (long)(t % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static double pct(const double *v, size_t n, double p)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* ------------------------------------------------------------------------
 * CPU accounting
 */

struct cpu_snap {
	unsigned long long busy, total;	/* /proc/stat ticks, all CPUs */
	unsigned long long run_ns;	/* /proc/schedstat: time non-idle tasks ran, all CPUs */
	bool have_run_ns;
	struct rusage ru;
};

/* Sum of rq_cpu_time (the 7th counter of each "cpuN" line) of /proc/schedstat: nanoseconds
 * every CPU spent running tasks other than its idle task, kernel threads included. */
static bool schedstat_run_ns(unsigned long long *sum)
{
	char line[512];
	FILE *f = fopen("/proc/schedstat", "r");
	bool any = false;

	*sum = 0;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[9];
		int cpu;

		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0],
			   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 10) {
			*sum += v[6];
			any = true;
		}
	}
	fclose(f);
	return any;
}

static void cpu_snap(struct cpu_snap *s)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			 &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) < 8)
		die("cannot read /proc/stat");
	fclose(f);
	/* user nice system idle iowait irq softirq steal (guest, guest_nice are in user) */
	s->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	s->busy = s->total - v[3] - v[4];
	s->have_run_ns = schedstat_run_ns(&s->run_ns);
	getrusage(RUSAGE_SELF, &s->ru);
}

static double tv_us(struct timeval t)
{
	return t.tv_sec * 1e6 + t.tv_usec;
}

static void cpu_report(const struct cpu_snap *a, const struct cpu_snap *b, long frames,
		       const char *suffix)
{
	double tick_us = 1e6 / (double)sysconf(_SC_CLK_TCK);
	char m[64];

	if (frames <= 0) {
		snprintf(m, sizeof(m), "cpu_us_per_frame%s", suffix);
		result(m, "n/a");
		return;
	}
	/* The ns counter when the kernel has it, else the 10 ms ticks of /proc/stat. */
	snprintf(m, sizeof(m), "cpu_us_per_frame%s", suffix);
	if (a->have_run_ns && b->have_run_ns)
		result(m, "%.1f", (double)(b->run_ns - a->run_ns) / 1e3 / (double)frames);
	else
		result(m, "%.1f", (double)(b->busy - a->busy) * tick_us / (double)frames);
	snprintf(m, sizeof(m), "cpu_tick_us_per_frame%s", suffix);
	result(m, "%.1f", (double)(b->busy - a->busy) * tick_us / (double)frames);
	snprintf(m, sizeof(m), "proc_user_us_per_frame%s", suffix);
	result(m, "%.1f", (tv_us(b->ru.ru_utime) - tv_us(a->ru.ru_utime)) / (double)frames);
	snprintf(m, sizeof(m), "proc_sys_us_per_frame%s", suffix);
	result(m, "%.1f", (tv_us(b->ru.ru_stime) - tv_us(a->ru.ru_stime)) / (double)frames);
	snprintf(m, sizeof(m), "cpu_busy_pct%s", suffix);
	result(m, "%.1f", b->total > a->total ?
	       100.0 * (double)(b->busy - a->busy) / (double)(b->total - a->total) : 0.0);
}

/* The camera's viacam_stats counters ("copies" may be missing: -1). */
struct stats {
	long long in, out, dropped, repeated, copies;
};

static bool read_stats(struct stats *s)
{
	char key[64];
	long long v;
	FILE *f;

	s->in = s->out = s->dropped = s->repeated = s->copies = -1;
	if (!opt.stats)
		return false;
	f = fopen(opt.stats, "r");
	if (!f)
		die("%s: %s", opt.stats, strerror(errno));
	while (fscanf(f, "%63s %lld", key, &v) == 2) {
		if (!strcmp(key, "frames_in"))
			s->in = v;
		else if (!strcmp(key, "frames_out"))
			s->out = v;
		else if (!strcmp(key, "frames_dropped"))
			s->dropped = v;
		else if (!strcmp(key, "frames_repeated"))
			s->repeated = v;
		else if (!strcmp(key, "copies"))
			s->copies = v;
	}
	fclose(f);
	return true;
}

/* ------------------------------------------------------------------------
 * The two sides
 */

struct side {
	int fd;
	enum v4l2_buf_type type;
	unsigned int count;
	uint8_t *mem[MAX_BUFS];
	size_t len[MAX_BUFS];
};

static struct side prod, cons;
/* --extra: more consumers, each in its own thread, counting the new frames they get. */
static struct side extra[MAX_EXTRA];
static pthread_t extra_th[MAX_EXTRA];
static atomic_long extra_got[MAX_EXTRA];
static uint8_t *wbuf;		/* write(): the frame in user space */
static uint32_t frame_size;
static unsigned int prod_next;	/* mmap: buffers never queued yet */

/* Send times by frame counter (ns, CLOCK_MONOTONIC), written before QBUF/write(). */
static _Atomic uint64_t sent_ns[RING];
static atomic_bool stop_prod, stop_cons;
static atomic_long produced;
static atomic_int cons_state;	/* ctrl --load blocked: 1 = about to block in DQBUF */
static atomic_long cons_returns;

struct frame_hdr {
	uint32_t magic;
	uint32_t counter;
	uint64_t spare;
};

static int open_node(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	return fd;
}

static void side_mmap(struct side *s, int fd, enum v4l2_buf_type type, unsigned int count)
{
	struct v4l2_requestbuffers req = { .count = count, .type = type,
					   .memory = V4L2_MEMORY_MMAP };

	s->fd = fd;
	s->type = type;
	if (xioctl(fd, VIDIOC_REQBUFS, &req) < 0)
		die("REQBUFS %s: %s", type == V4L2_BUF_TYPE_VIDEO_OUTPUT ? "output" : "capture",
		    strerror(errno));
	if (req.count < 1 || req.count > MAX_BUFS)
		die("REQBUFS gave %u buffers", req.count);
	s->count = req.count;
	for (unsigned int i = 0; i < req.count; i++) {
		struct v4l2_buffer b = { .index = i, .type = type, .memory = V4L2_MEMORY_MMAP };

		if (xioctl(fd, VIDIOC_QUERYBUF, &b) < 0)
			die("QUERYBUF %u: %s", i, strerror(errno));
		s->len[i] = b.length;
		s->mem[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				 b.m.offset);
		if (s->mem[i] == MAP_FAILED)
			die("mmap buffer %u: %s", i, strerror(errno));
	}
}

static int qbuf(struct side *s, unsigned int index, uint32_t bytesused)
{
	struct v4l2_buffer b = { .index = index, .type = s->type, .memory = V4L2_MEMORY_MMAP,
				 .bytesused = bytesused, .field = V4L2_FIELD_NONE };

	return xioctl(s->fd, VIDIOC_QBUF, &b);
}

static void streamon(struct side *s)
{
	int t = s->type;

	if (xioctl(s->fd, VIDIOC_STREAMON, &t) < 0)
		die("STREAMON %s: %s", s->type == V4L2_BUF_TYPE_VIDEO_OUTPUT ? "output" : "capture",
		    strerror(errno));
}

static void streamoff(struct side *s)
{
	int t = s->type;

	xioctl(s->fd, VIDIOC_STREAMOFF, &t);
}

/* Producer setup: S_FMT on the OUTPUT node, then its buffers (or write()'s buffer). */
static void producer_setup(void)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };

	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.width = opt.w;
	f.fmt.pix.height = opt.h;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	f.fmt.pix.bytesperline = opt.w * 2;
	f.fmt.pix.sizeimage = opt.w * opt.h * 2;
	f.fmt.pix.colorspace = V4L2_COLORSPACE_SRGB;
	if (xioctl(prod.fd, VIDIOC_S_FMT, &f) < 0)
		die("S_FMT output %ux%u YUYV: %s", opt.w, opt.h, strerror(errno));
	if (f.fmt.pix.width != opt.w || f.fmt.pix.height != opt.h ||
	    f.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV)
		die("S_FMT output gave %ux%u %.4s", f.fmt.pix.width, f.fmt.pix.height,
		    (char *)&f.fmt.pix.pixelformat);
	frame_size = f.fmt.pix.sizeimage ? f.fmt.pix.sizeimage : opt.w * opt.h * 2;
	prod.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	if (opt.path_mmap) {
		side_mmap(&prod, prod.fd, V4L2_BUF_TYPE_VIDEO_OUTPUT, opt.buffers);
		for (unsigned int i = 0; i < prod.count; i++) {
			if (prod.len[i] < frame_size)
				die("output buffer %u is %zu bytes, frame %u", i, prod.len[i],
				    frame_size);
			memset(prod.mem[i], 0x80, frame_size);	/* once: grey */
		}
	} else {
		wbuf = malloc(frame_size);
		if (!wbuf)
			die("out of memory");
		memset(wbuf, 0x80, frame_size);
	}
}

/* --path lend: one mapping per lent capture buffer, by its id. */
static struct {
	uint32_t id[64];
	uint8_t *mem[64];
	size_t len[64];
	int n;
} lend_maps;
static long lent_frames, unlent_frames;
static bool prod_streaming;
static bool opt_rate_paced;	/* the producer runs paced (latency, ctrl): no waiting for a lend */

static uint8_t *lend_map(const struct viacam_lend *l)
{
	for (int i = 0; i < lend_maps.n; i++) {
		if (lend_maps.id[i] == l->id) {
			close(l->fd);
			return lend_maps.mem[i];
		}
	}
	if (lend_maps.n == 64)
		die("more than 64 lent buffers");
	lend_maps.mem[lend_maps.n] = mmap(NULL, l->length, PROT_READ | PROT_WRITE, MAP_SHARED,
					  l->fd, 0);
	close(l->fd);
	if (lend_maps.mem[lend_maps.n] == MAP_FAILED)
		die("mmap of lent buffer %u: %s", l->id, strerror(errno));
	lend_maps.id[lend_maps.n] = l->id;
	lend_maps.len[lend_maps.n] = l->length;
	return lend_maps.mem[lend_maps.n++];
}

/*
 * --path lend: write frame @counter's header and trailer straight into a lent capture
 * buffer and deliver it (no kernel copy). False when nothing can be lent now: the frame then
 * takes the mmap path.
 */
static bool send_lent(uint32_t counter, const struct frame_hdr *h)
{
	struct viacam_lend l = { 0 };
	uint8_t *m;

	if (!prod_streaming)
		return false;
	/*
	 * EAGAIN: every capture buffer is with the consumer. An unpaced producer waits for one
	 * (yielding the CPU to the consumer), as a paced one would at its next frame, so that the
	 * unpaced figure is the zero-copy path's; after a while it takes the copy path. With
	 * several consumers nothing is ever lent (docs/uapi.md): one try, then the copy path.
	 */
	for (int tries = 0; ioctl(prod.fd, VIACAM_IOC_LEND, &l) < 0; tries++) {
		if (errno != EAGAIN)
			die("VIACAM_IOC_LEND: %s", strerror(errno));
		if (opt_rate_paced || opt.nextra > 0 || tries == 20000 || atomic_load(&stop_prod))
			return false;
		sched_yield();
	}
	if (l.length < frame_size)
		die("lent buffer %u is %u bytes, frame %u", l.id, l.length, frame_size);
	m = lend_map(&l);
	memcpy(m, h, sizeof(*h));
	memcpy(m + frame_size - sizeof(*h), h, sizeof(*h));
	atomic_store_explicit(&sent_ns[counter % RING], now_ns(), memory_order_relaxed);
	l.bytesused = frame_size;
	/* ESTALE: the consumer stopped meanwhile; the frame is gone, as with any drop. */
	if (ioctl(prod.fd, VIACAM_IOC_DELIVER, &l) < 0 && errno != ESTALE)
		die("VIACAM_IOC_DELIVER: %s", strerror(errno));
	lent_frames++;
	return true;
}

/* Send frame @counter: header, time stamp right before QBUF/write(). */
static void send_frame(uint32_t counter)
{
	struct frame_hdr h = { .magic = MAGIC, .counter = counter };

	if (opt.path_lend && send_lent(counter, &h)) {
		atomic_fetch_add(&produced, 1);
		return;
	}
	if (opt.path_lend)
		unlent_frames++;
	if (!opt.path_mmap) {
		size_t done = 0;

		memcpy(wbuf, &h, sizeof(h));
		memcpy(wbuf + frame_size - sizeof(h), &h, sizeof(h));
		atomic_store_explicit(&sent_ns[counter % RING], now_ns(), memory_order_relaxed);
		while (done < frame_size) {
			ssize_t n = write(prod.fd, wbuf + done, frame_size - done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				die("write() of frame %u: %s", counter, n < 0 ? strerror(errno) :
				    "returned 0");
			done += (size_t)n;
		}
	} else {
		unsigned int idx;

		if (prod_next < prod.count) {
			idx = prod_next++;
		} else {
			struct v4l2_buffer b = { .type = prod.type, .memory = V4L2_MEMORY_MMAP };

			if (xioctl(prod.fd, VIDIOC_DQBUF, &b) < 0)
				die("output DQBUF: %s", strerror(errno));
			idx = b.index;
		}
		/* Top first, bottom last: a reader that sees both alike saw one frame. */
		memcpy(prod.mem[idx], &h, sizeof(h));
		memcpy((uint8_t *)prod.mem[idx] + frame_size - sizeof(h), &h, sizeof(h));
		atomic_store_explicit(&sent_ns[counter % RING], now_ns(), memory_order_relaxed);
		if (qbuf(&prod, idx, frame_size) < 0)
			die("output QBUF: %s", strerror(errno));
		if (idx == 0 && prod_next == 1) {
			streamon(&prod);
			prod_streaming = true;
		}
	}
	atomic_fetch_add(&produced, 1);
}

static uint32_t next_counter = 1;

/* Producer thread: paced at opt.rate (0 = unpaced) until stop_prod. */
static void *producer_main(void *arg)
{
	double rate = *(double *)arg;
	uint64_t period = rate > 0 ? (uint64_t)(1e9 / rate) : 0, next = now_ns();

	opt_rate_paced = period != 0;
	while (!atomic_load(&stop_prod)) {
		if (period) {
			next += period;
			sleep_until(next);
		}
		send_frame(next_counter++);
	}
	return NULL;
}

static uint8_t *copy_buf;	/* --torn: the consumer's copy of each frame */
static long torn_checked, torn_frames;

static void consumer_setup(void)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	if (xioctl(cons.fd, VIDIOC_G_FMT, &f) < 0)
		die("G_FMT capture: %s", strerror(errno));
	if (f.fmt.pix.width != opt.w || f.fmt.pix.height != opt.h ||
	    f.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV)
		die("capture node offers %ux%u %.4s, not the producer's %ux%u YUYV",
		    f.fmt.pix.width, f.fmt.pix.height, (char *)&f.fmt.pix.pixelformat, opt.w, opt.h);
	if (opt.torn && !(copy_buf = malloc(frame_size)))
		die("out of memory");
	if (opt.cap_read)
		return;	/* read() sets its own buffers up */
	side_mmap(&cons, cons.fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, opt.buffers);
	for (unsigned int i = 0; i < cons.count; i++)
		if (qbuf(&cons, i, 0) < 0)
			die("capture QBUF %u: %s", i, strerror(errno));
	streamon(&cons);
}

static void extra_setup(struct side *s, const char *dev)
{
	s->fd = open_node(dev);
	/* Polled with a timeout, so that the thread sees the stop flag in time. */
	if (fcntl(s->fd, F_SETFL, O_NONBLOCK) < 0)
		die("%s: O_NONBLOCK: %s", dev, strerror(errno));
	side_mmap(s, s->fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, opt.buffers);
	for (unsigned int i = 0; i < s->count; i++)
		if (qbuf(s, i, 0) < 0)
			die("capture QBUF %u on %s: %s", i, dev, strerror(errno));
	streamon(s);
}

/* An extra consumer: DQBUF, note a new frame counter, QBUF, until stop_cons. */
static void *extra_main(void *arg)
{
	int k = (int)(intptr_t)arg;
	struct side *s = &extra[k];
	uint32_t last = 0;

	while (!atomic_load(&stop_cons)) {
		struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP };
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		struct frame_hdr h;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (ioctl(s->fd, VIDIOC_DQBUF, &b) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die("capture DQBUF (extra consumer %d): %s", k + 1, strerror(errno));
		}
		if (b.index >= s->count)
			die("capture DQBUF gave index %u", b.index);
		memcpy(&h, s->mem[b.index], sizeof(h));
		if (h.magic == MAGIC && h.counter > last) {
			last = h.counter;
			atomic_fetch_add(&extra_got[k], 1);
		}
		if (qbuf(s, b.index, 0) < 0)
			die("capture QBUF (extra consumer %d): %s", k + 1, strerror(errno));
	}
	return NULL;
}

/* One DQBUF + QBUF on the capture side. Returns the frame's counter (0: not ours, e.g. a
 * neutral frame), -1 on EINTR (stop requested). */
static long consume_one(uint64_t *t_dq)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				 .memory = V4L2_MEMORY_MMAP };
	struct frame_hdr h;

	if (opt.cap_read) {
		/*
		 * Into fresh memory each time, as a reader that malloc()s and free()s a
		 * frame-sized buffer per frame does (glibc maps and unmaps one that big):
		 * the kernel's copy to it faults its pages in.
		 */
		uint8_t *m = mmap(NULL, frame_size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ssize_t n;

		if (m == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		n = read(cons.fd, m, frame_size);
		if (n >= (ssize_t)sizeof(h))
			memcpy(&h, m, sizeof(h));
		munmap(m, frame_size);
		if (n < 0 && errno == EINTR)
			return -1;
		if (n < (ssize_t)sizeof(h))
			die("capture read(): %s", n < 0 ? strerror(errno) : "short");
		*t_dq = now_ns();
		return h.magic == MAGIC ? (long)h.counter : 0;
	}
	if (ioctl(cons.fd, VIDIOC_DQBUF, &b) < 0) {
		if (errno == EINTR)
			return -1;
		die("capture DQBUF: %s", strerror(errno));
	}
	*t_dq = now_ns();
	if (b.index >= cons.count)
		die("capture DQBUF gave index %u", b.index);
	memcpy(&h, cons.mem[b.index], sizeof(h));
	if (opt.torn && h.magic == MAGIC && b.bytesused >= frame_size) {
		struct frame_hdr t;

		memcpy(copy_buf, cons.mem[b.index], frame_size);
		memcpy(&h, copy_buf, sizeof(h));
		memcpy(&t, copy_buf + frame_size - sizeof(t), sizeof(t));
		torn_checked++;
		if (t.magic != h.magic || t.counter != h.counter)
			torn_frames++;
	}
	if (qbuf(&cons, b.index, 0) < 0)
		die("capture QBUF: %s", strerror(errno));
	return h.magic == MAGIC ? (long)h.counter : 0;
}

static void on_signal(int sig)
{
	(void)sig;
}

static void on_alarm(int sig)
{
	static const char msg[] = "vcbench: error: watchdog: the measurement hangs\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static void setup_signals(unsigned int watchdog_s)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART: wakes a blocked DQBUF */
	signal(SIGALRM, on_alarm);
	alarm(watchdog_s);
}

/* Open both sides in the order every peer accepts: producer format and first frame, then
 * the consumer (v4l2loopback 0.12.7 refuses a capture STREAMON before a producer started). */
static void open_pair(void)
{
	prod.fd = open_node(opt.prod);
	if (opt.declare) {
		struct viacam_ctrl c = {
			.id = V4L2_CID_BRIGHTNESS, .type = V4L2_CTRL_TYPE_INTEGER,
			.name = "Brightness", .minimum = 0, .maximum = 255, .step = 1,
			.default_value = 128,
		};
		struct viacam_ctrls cs = { .count = 1, .ctrls = (uintptr_t)&c };

		if (xioctl(prod.fd, VIACAM_IOC_S_CTRLS, &cs) < 0)
			die("VIACAM_IOC_S_CTRLS (brightness): %s", strerror(errno));
	}
	producer_setup();
	send_frame(next_counter++);
	cons.fd = open_node(opt.cap);
	consumer_setup();
	for (int k = 0; k < opt.nextra; k++)
		extra_setup(&extra[k], opt.extra[k]);
}

static void close_pair(void)
{
	for (int k = 0; k < opt.nextra; k++) {
		streamoff(&extra[k]);
		for (unsigned int i = 0; i < extra[k].count; i++)
			munmap(extra[k].mem[i], extra[k].len[i]);
		close(extra[k].fd);
	}
	if (!opt.cap_read)
		streamoff(&cons);
	if (opt.path_mmap)
		streamoff(&prod);
	for (unsigned int i = 0; i < cons.count; i++)
		munmap(cons.mem[i], cons.len[i]);
	for (unsigned int i = 0; i < prod.count; i++)
		munmap(prod.mem[i], prod.len[i]);
	for (int i = 0; i < lend_maps.n; i++)
		munmap(lend_maps.mem[i], lend_maps.len[i]);
	lend_maps.n = 0;
	close(cons.fd);
	close(prod.fd);
	free(wbuf);
}

/* ------------------------------------------------------------------------
 * stream: throughput and latency
 */

static int cmd_stream(void)
{
	bool latency = !strcmp(opt.mode, "latency");
	double rate = latency ? opt.rate : 0;
	long want = latency ? opt.frames : 0, got = 0, repeats = 0, foreign = 0, late = 0;
	double *lat = NULL;
	struct cpu_snap c0, c1;
	struct stats s0, s1;
	uint64_t t0 = 0, t1, tdq, window_ns = (uint64_t)(opt.seconds * 1e9);
	long p0 = 0, last = 0, first_counter = 0, e0[MAX_EXTRA] = { 0 }, e1[MAX_EXTRA] = { 0 };
	pthread_t th;

	if (strcmp(opt.mode, "fps") && strcmp(opt.mode, "latency"))
		die("unknown --mode %s", opt.mode);
	if (latency && (opt.rate <= 0 || opt.frames <= 0))
		die("--mode latency needs --rate > 0 and --frames > 0");
	/* A chain that cannot keep up with the rate stops after twice the nominal time. */
	if (latency)
		window_ns = (uint64_t)((2.0 * (double)opt.frames / opt.rate + 5) * 1e9);
	setup_signals((unsigned int)(latency ? (double)(opt.frames + opt.warmup) / opt.rate * 3 + 40 :
				     opt.seconds * 3 + 30));
	open_pair();
	if (latency) {
		lat = calloc((size_t)want, sizeof(*lat));
		if (!lat)
			die("out of memory");
	}
	pthread_create(&th, NULL, producer_main, &rate);
	for (int k = 0; k < opt.nextra; k++)
		pthread_create(&extra_th[k], NULL, extra_main, (void *)(intptr_t)k);

	/* Warm-up: the first frames (and any from before STREAMON) are not measured. */
	for (long n = 0; n < opt.warmup;) {
		long c = consume_one(&tdq);

		if (c > last) {
			last = c;
			n++;
		}
	}
	first_counter = last;
	read_stats(&s0);
	cpu_snap(&c0);
	p0 = atomic_load(&produced);
	for (int k = 0; k < opt.nextra; k++)
		e0[k] = atomic_load(&extra_got[k]);
	torn_checked = torn_frames = 0;
	t0 = now_ns();
	for (;;) {
		long c = consume_one(&tdq);

		if (c <= 0) {
			foreign++;
		} else if (c <= last) {
			repeats++;
		} else {
			if (latency) {
				uint64_t ts = atomic_load_explicit(&sent_ns[c % RING],
								   memory_order_relaxed);

				if (c - first_counter > RING / 2 || ts == 0 || ts > tdq)
					late++;
				else
					lat[got] = (double)(tdq - ts) / 1e3;
			}
			last = c;
			got++;
		}
		if (latency ? got >= want || now_ns() - t0 >= window_ns : now_ns() - t0 >= window_ns)
			break;
	}
	t1 = now_ns();
	cpu_snap(&c1);
	read_stats(&s1);
	long sent = atomic_load(&produced) - p0;

	for (int k = 0; k < opt.nextra; k++)
		e1[k] = atomic_load(&extra_got[k]);
	atomic_store(&stop_prod, true);
	pthread_join(th, NULL);
	atomic_store(&stop_cons, true);
	for (int k = 0; k < opt.nextra; k++)
		pthread_join(extra_th[k], NULL);
	close_pair();

	double secs = (double)(t1 - t0) / 1e9;

	if (latency) {
		char m[64];
		int r = (int)(opt.rate + 0.5);

		qsort(lat, (size_t)got, sizeof(*lat), cmp_double);
		snprintf(m, sizeof(m), "lat%d_p50_us", r);
		result(m, "%.0f", pct(lat, (size_t)got, 50));
		snprintf(m, sizeof(m), "lat%d_p99_us", r);
		result(m, "%.0f", pct(lat, (size_t)got, 99));
		snprintf(m, sizeof(m), "lat%d_max_us", r);
		result(m, "%.0f", got ? lat[got - 1] : 0);
		snprintf(m, sizeof(m), "lat%d_frames", r);
		result(m, "%ld", got);
		snprintf(m, sizeof(m), "lat%d_missed", r);
		result(m, "%ld", (long)(last - first_counter) - got);
		snprintf(m, sizeof(m), "_%d", r);
		cpu_report(&c0, &c1, got, m);
		snprintf(m, sizeof(m), "copies_per_frame_%d", r);
		if (s0.copies >= 0 && s1.copies >= 0 && s1.out > s0.out)
			result(m, "%.2f", (double)(s1.copies - s0.copies) / (double)(s1.out - s0.out));
		else
			result(m, "n/a");
		if (late)
			printf("info: %ld frames without a usable send time\n", late);
	} else if (opt.torn) {
		/* Only the tearing is this run's figure: the copy-out slows the consumer. */
		result("torn_frames", "%ld", torn_frames);
		result("torn_checked", "%ld", torn_checked);
	} else {
		result("fps", "%.1f", (double)got / secs);
		result("producer_fps", "%.1f", (double)sent / secs);
		if (opt.nextra) {
			double min = (double)got / secs;

			for (int k = 0; k < opt.nextra; k++)
				if ((double)(e1[k] - e0[k]) / secs < min)
					min = (double)(e1[k] - e0[k]) / secs;
			result("fps_min", "%.1f", min);
		}
		cpu_report(&c0, &c1, got, "_unpaced");
		if (s0.copies >= 0 && s1.copies >= 0 && s1.out > s0.out)
			result("copies_per_frame_unpaced", "%.2f",
			       (double)(s1.copies - s0.copies) / (double)(s1.out - s0.out));
		else
			result("copies_per_frame_unpaced", "n/a");
		/*
		 * Several consumers: the kernel's copies per frame the first consumer got (all
		 * consumers' copies counted), comparable with copies_per_frame_unpaced of a
		 * single consumer.
		 */
		if (opt.nextra && s0.copies >= 0 && s1.copies >= 0 && got)
			result("copies_per_first_frame", "%.2f",
			       (double)(s1.copies - s0.copies) / (double)got);
	}
	if (s0.in >= 0)
		printf("info: impl=%s size=%ux%u path=%s mode=%s kernel counters: in=%lld out=%lld "
		       "dropped=%lld repeated=%lld copies=%lld\n", opt.impl, opt.w, opt.h,
		       opt.path, opt.mode, s1.in - s0.in, s1.out - s0.out,
		       s1.dropped - s0.dropped, s1.repeated - s0.repeated,
		       s1.copies >= 0 ? s1.copies - s0.copies : -1);
	printf("info: impl=%s size=%ux%u path=%s mode=%s frames=%ld repeats=%ld foreign=%ld "
	       "sent=%ld seconds=%.2f\n", opt.impl, opt.w, opt.h, opt.path,
	       opt.mode, got, repeats, foreign, sent, secs);
	free(lat);
	if (opt.path_lend)
		printf("info: impl=%s size=%ux%u path=lend frames lent %ld, through backend buffers %ld\n",
		       opt.impl, opt.w, opt.h, lent_frames, unlent_frames);
	if (!got)
		die("the consumer received no frames");
	return 0;
}

/* ------------------------------------------------------------------------
 * ctrl: control-ioctl latency under load
 */

static void *consumer_main(void *arg)
{
	uint64_t t;

	(void)arg;
	while (!atomic_load(&stop_cons)) {
		atomic_store(&cons_state, 1);
		if (consume_one(&t) < 0)
			continue;
		atomic_fetch_add(&cons_returns, 1);
	}
	return NULL;
}

/* The first writable integer/boolean control of @fd (0: none). */
static uint32_t find_ctrl(int fd, struct v4l2_queryctrl *out)
{
	struct v4l2_queryctrl q = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };

	while (xioctl(fd, VIDIOC_QUERYCTRL, &q) == 0) {
		if ((q.type == V4L2_CTRL_TYPE_INTEGER || q.type == V4L2_CTRL_TYPE_BOOLEAN) &&
		    !(q.flags & (V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_DISABLED |
				 V4L2_CTRL_FLAG_INACTIVE | V4L2_CTRL_FLAG_GRABBED))) {
			*out = q;
			return q.id;
		}
		q.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
	}
	return 0;
}

static void report_lat(const char *name, double *v, size_t n)
{
	char m[64];

	qsort(v, n, sizeof(*v), cmp_double);
	snprintf(m, sizeof(m), "%s_p50_us", name);
	result(m, n ? "%.0f" : "n/a", pct(v, n, 50));
	snprintf(m, sizeof(m), "%s_p99_us", name);
	result(m, n ? "%.0f" : "n/a", pct(v, n, 99));
	snprintf(m, sizeof(m), "%s_max_us", name);
	result(m, n ? "%.0f" : "n/a", n ? v[n - 1] : 0);
}

static int cmd_ctrl(void)
{
	bool blocked = !strcmp(opt.load, "blocked");
	struct v4l2_queryctrl q = { 0 };
	size_t cap = 200000, n = 0;
	double *lq, *lg, *ls;
	uint32_t id;
	pthread_t pth, cth;
	long ret0, frames0;
	uint64_t t0, t1;
	int cfd, val[2];
	double rate = opt.rate;

	if (!blocked && strcmp(opt.load, "stream"))
		die("unknown --load %s", opt.load);
	setup_signals((unsigned int)(opt.seconds * 3 + 40));
	open_pair();
	cfd = open_node(opt.cap);
	if (opt.ctrl_id) {
		q.id = opt.ctrl_id;
		if (xioctl(cfd, VIDIOC_QUERYCTRL, &q) < 0)
			die("QUERYCTRL 0x%x: %s", opt.ctrl_id, strerror(errno));
		id = q.id;
	} else {
		id = find_ctrl(cfd, &q);
	}
	if (id) {
		val[0] = q.default_value;
		val[1] = q.default_value < q.maximum ? q.default_value + (int)(q.step ? q.step : 1) :
						       q.minimum;
		printf("info: control 0x%x '%s' %d <-> %d\n", id, (char *)q.name, val[0], val[1]);
	} else {
		printf("info: the capture node has no writable integer/boolean control\n");
	}
	lq = calloc(cap, sizeof(double));
	lg = calloc(cap, sizeof(double));
	ls = calloc(cap, sizeof(double));
	if (!lq || !lg || !ls)
		die("out of memory");

	pthread_create(&cth, NULL, consumer_main, NULL);
	if (blocked) {
		/* The consumer takes a frame, then blocks in DQBUF: no frame comes after it. */
		for (int i = 0; atomic_load(&cons_returns) < 1; i++) {
			if (i % 100 == 99)
				send_frame(next_counter++);
			usleep(1000);
		}
		usleep(300000);
	} else {
		pthread_create(&pth, NULL, producer_main, &rate);
		usleep(500000);
	}
	ret0 = atomic_load(&cons_returns);
	frames0 = atomic_load(&produced);
	t0 = now_ns();
	while (n < cap && now_ns() - t0 < (uint64_t)(opt.seconds * 1e9)) {
		struct v4l2_capability c;
		struct v4l2_control ctl = { .id = id };
		uint64_t a, b;

		a = now_ns();
		if (xioctl(cfd, VIDIOC_QUERYCAP, &c) < 0)
			die("QUERYCAP: %s", strerror(errno));
		b = now_ns();
		lq[n] = (double)(b - a) / 1e3;
		if (id) {
			a = now_ns();
			if (xioctl(cfd, VIDIOC_G_CTRL, &ctl) < 0)
				die("G_CTRL: %s", strerror(errno));
			b = now_ns();
			lg[n] = (double)(b - a) / 1e3;
			ctl.value = val[n & 1];
			a = now_ns();
			if (xioctl(cfd, VIDIOC_S_CTRL, &ctl) < 0)
				die("S_CTRL: %s", strerror(errno));
			b = now_ns();
			ls[n] = (double)(b - a) / 1e3;
		}
		n++;
		usleep(1000);	/* sample, do not flood */
	}
	t1 = now_ns();
	long returns = atomic_load(&cons_returns) - ret0, frames = atomic_load(&produced) - frames0;

	if (id) {	/* leave the control as we found it */
		struct v4l2_control ctl = { .id = id, .value = val[0] };

		xioctl(cfd, VIDIOC_S_CTRL, &ctl);
	}
	atomic_store(&stop_cons, true);
	if (!blocked) {
		atomic_store(&stop_prod, true);
		pthread_join(pth, NULL);
	}
	/* Wake the consumer: a signal interrupts its DQBUF (both bridges sleep interruptibly). */
	while (pthread_tryjoin_np(cth, NULL) == EBUSY) {
		pthread_kill(cth, SIGUSR1);
		usleep(10000);
	}
	close(cfd);
	close_pair();

	report_lat("querycap", lq, n);
	report_lat("g_ctrl", lg, id ? n : 0);
	report_lat("s_ctrl", ls, id ? n : 0);
	result("ctrl_rounds", "%zu", n);
	result("load_fps", "%.1f", (double)returns / ((double)(t1 - t0) / 1e9));
	printf("info: impl=%s load=%s rounds=%zu consumer_frames=%ld producer_frames=%ld\n",
	       opt.impl, opt.load, n, returns, blocked ? 0 : frames);
	if (blocked && returns)
		printf("info: the consumer was not blocked the whole time (%ld DQBUF returns)\n",
		       returns);
	free(lq);
	free(lg);
	free(ls);
	return 0;
}

/* ------------------------------------------------------------------------
 * main
 */

static void usage(void)
{
	fprintf(stderr,
		"usage: vcbench stream|ctrl|idle --prod DEV --cap DEV [--size WxH] [--path write|mmap|lend]\n"
		"         [--mode fps|latency] [--load stream|blocked] [--seconds T] [--rate F]\n"
		"         [--frames N] [--warmup N] [--buffers N] [--stats FILE] [--declare] [--cap-read]\n"
		"         [--ctrl ID] [--extra DEV]... [--impl NAME] [--kernel K] [--tag KEY=VAL]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2)
		usage();
	cmd = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

#define ARG(name) (!strcmp(a, name) && (v || (usage(), 0)) && ++i)
		if (ARG("--prod"))
			opt.prod = v;
		else if (ARG("--cap"))
			opt.cap = v;
		else if (ARG("--impl"))
			opt.impl = v;
		else if (ARG("--kernel"))
			opt.kernel = v;
		else if (ARG("--stats"))
			opt.stats = v;
		else if (ARG("--mode"))
			opt.mode = v;
		else if (ARG("--load"))
			opt.load = v;
		else if (ARG("--size")) {
			if (sscanf(v, "%ux%u", &opt.w, &opt.h) != 2 || !opt.w || !opt.h)
				usage();
		} else if (ARG("--path")) {
			if (strcmp(v, "write") && strcmp(v, "mmap") && strcmp(v, "lend"))
				usage();
			opt.path = v;
			/* lend: MMAP backend buffers too, for frames when nothing can be lent */
			opt.path_lend = !strcmp(v, "lend");
			opt.path_mmap = opt.path_lend || !strcmp(v, "mmap");
		} else if (ARG("--seconds"))
			opt.seconds = atof(v);
		else if (ARG("--rate"))
			opt.rate = atof(v);
		else if (ARG("--frames"))
			opt.frames = atol(v);
		else if (ARG("--warmup"))
			opt.warmup = atol(v);
		else if (ARG("--buffers"))
			opt.buffers = (unsigned int)atoi(v);
		else if (ARG("--extra")) {
			if (opt.nextra == MAX_EXTRA)
				usage();
			opt.extra[opt.nextra++] = v;
		} else if (ARG("--ctrl"))
			opt.ctrl_id = (uint32_t)strtoul(v, NULL, 0);
		else if (ARG("--tag")) {
			if (opt.ntags == MAX_TAGS || !strchr(v, '='))
				usage();
			opt.tags[opt.ntags++] = v;
		} else if (!strcmp(a, "--declare"))
			opt.declare = true;
		else if (!strcmp(a, "--torn"))
			opt.torn = true;
		else if (!strcmp(a, "--cap-read"))
			opt.cap_read = true;
		else
			usage();
#undef ARG
	}
	if (!opt.prod || !opt.cap || opt.buffers < 2 || opt.buffers > MAX_BUFS ||
	    opt.seconds <= 0)
		usage();
	if (!strcmp(cmd, "stream"))
		return cmd_stream();
	if (!strcmp(cmd, "ctrl"))
		return cmd_ctrl();
	if (!strcmp(cmd, "idle")) {	/* the guest's background CPU use, the floor of CPU/frame */
		struct cpu_snap a, b;
		uint64_t t0 = now_ns();

		cpu_snap(&a);
		usleep((useconds_t)(opt.seconds * 1e6));
		cpu_snap(&b);
		double secs = (double)(now_ns() - t0) / 1e9;

		result("idle_cpu_us_per_s", "%.0f", a.have_run_ns && b.have_run_ns ?
		       (double)(b.run_ns - a.run_ns) / 1e3 / secs :
		       (double)(b.busy - a.busy) * 1e6 / (double)sysconf(_SC_CLK_TCK) / secs);
		return 0;
	}
	usage();
	return 2;
}
