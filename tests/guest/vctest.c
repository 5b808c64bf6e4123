// SPDX-License-Identifier: GPL-2.0-only
/*
 * vctest.c - test client for the viacam bridge, run inside the test guest.
 *
 *   vctest produce OUTDEV [-n FRAMES] [-r FPS] [-s START] [-W W -H H] [-w] [-P] [-T FILE]
 *                 [-S AGE_MS]
 *       plain producer: numbered frames with a known pattern, via mmap (-w: write());
 *       -P: S_PARM the rate on the node (the capture node then offers only that interval);
 *       -T: a line "COUNTER MS STAMP_MS" (CLOCK_MONOTONIC) per frame handed to the bridge
 *       -S: QBUF each frame with the timestamp "captured AGE_MS ago" (negative: in the
 *           future), logged as STAMP_MS (0 without -S)
 *   vctest consume CAPDEV [-n FRAMES] [-t SECONDS] [-a] [-T FILE]
 *       consumer (until FRAMES, SECONDS or SIGTERM): checks every frame's pattern, counter
 *       order and sequence numbers; with -a any picture is fine (viacamd's backends), a frame
 *       equal to the one before counts as a repeat, a different one as real;
 *       prints "frames= real= repeats= neutral= first= last= max_gap_ms= resumed= skipped="
 *       (skipped: numbered frames between two real ones that this consumer never saw);
 *       -T: a line "COUNTER MS TS_MS" per new numbered frame dequeued (latency = MS - produce's
 *           MS; TS_MS is the buffer's timestamp). Any run fails when a buffer's timestamp is not
 *           after the previous one's or lies in the future.
 *   vctest verify-file FILE FRAMESIZE
 *       check a file of raw frames (from v4l2-ctl --stream-to) frame by frame
 *   vctest blocking CAPDEV OUTDEV
 *       the 2010 locking case: DQBUF blocks in one thread while other ioctls and
 *       the producer go on; then the blocked DQBUF gets the frame
 *   vctest declare CAPDEV OUTDEV
 *       declarations appear on the capture node as declared; consumer requests
 *       arrive as events; bad declarations are refused and change nothing
 *   vctest churn N CAMERAS       add N cameras and remove them, CAMERAS times... (see usage)
 *   vctest remove-busy MODE      remove a camera while a consumer streams / waits in DQBUF
 *   vctest stress SECONDS THREADS NODE...
 *       THREADS threads issue random valid ioctls on random NODEs (capture, backend nodes
 *       and /dev/viacam), reopening them now and then, for SECONDS; prints the counts
 *   vctest race held-stop|write-fault|small-src|qbuf-copy|qbuf-done CAPDEV OUTDEV
 *   vctest race fanout CAPDEV CAPDEV2 OUTDEV
 *       two capture nodes of one camera: one stops while the producer's QBUF copies a frame
 *       to the other (inject bit 3)
 *       hand-off races, each window made 200 ms wide by viacam's "inject" parameter
 *   vctest race stale-lend CAPDEV OUTDEV
 *       a write()'s copy into a capture buffer waits for user space while the consumer
 *       restarts: that buffer stays out of use until the write() is done with it
 *   vctest race uffd CAPDEV OUTDEV ID
 *       a producer's write() waits for a userfaultfd handler; consumers must not wait
 *   vctest race uffd-read CAPDEV OUTDEV ID
 *       a consumer's read() waits for a userfaultfd handler; the producer and the control
 *       node must not wait
 *   vctest race slow-stop CAPDEV OUTDEV ID
 *       a consumer's stop holds its camera's lock for 2 s (inject bit 4); the control node
 *       must answer for other cameras meanwhile
 *   vctest race uffd-declare CAPDEV OUTDEV ID
 *       a backend's S_FORMATS and S_CTRLS arrays wait for a userfaultfd handler; the
 *       consumer and the control node must not wait
 *   vctest limits CAPDEV OUTDEV
 *       buffer sizes and the max_queue_mb memory cap of a capture queue
 *   vctest reparm CAPDEV OUTDEV
 *       a consumer's S_PARM while it streams sets the rate of the bridge's repeats
 *   vctest mjpeg-write CAPDEV OUTDEV
 *       compressed frames through write(): one write() is one frame, of any length
 *   vctest repeats CAPDEV OUTDEV ID [userptr]
 *       repeats after a direct write() show that frame only (an MMAP consumer, or with
 *       "userptr" a USERPTR one); QUERY's BACKEND_STREAMING ends with the capture stream
 *       or the writer's handle (camera timeout 500 ms)
 *   vctest lend CAPDEV CAPDEV2 OUTDEV
 *       the zero-copy hand-off: frames written into lent capture buffers (0 copies for one
 *       consumer; nothing lent while two nodes stream), EBUSY/ESTALE/EAGAIN where the uapi
 *       says so
 *   vctest lend-dmabuf CAPDEV CAPDEV2 OUTDEV EXPORTDEV
 *       the same for a consumer whose capture buffers are dma-bufs (exported by EXPORTDEV,
 *       another camera's capture node): 0 copies for it, write() with one copy, a repeat of
 *       a lent frame after the consumer queued its buffer with another dma-buf, a new id
 *       for new memory, read-only dma-bufs never lent to user space
 *   vctest isolation CASE CAPDEV CAPDEV2 OUTDEV EXPORTDEV [ID...]
 *       what a hostile consumer tries against a lending producer, one CASE at a time:
 *       stale-free, userptr-enomem, dmabuf-leak, new-mem, scribble, old-picture, interval,
 *       add-open (see the iso_* functions)
 * Every check prints "ok: ..." or "FAIL: ..."; the exit status is 1 if any failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/userfaultfd.h>
#include <linux/viacam.h>

static int failures;

static void ok(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("ok: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	failures++;
}

#define CHECK(cond, ...) do { if (cond) ok(__VA_ARGS__); else fail(__VA_ARGS__); } while (0)

static int xopen(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "vctest: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	return fd;
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------------
 * The frame pattern: "VCAM", counter, ~counter, then bytes (counter * 7 + i)
 */

static void fill_frame(uint8_t *p, size_t len, uint32_t counter)
{
	uint32_t inv = ~counter;

	memcpy(p, "VCAM", 4);
	memcpy(p + 4, &counter, 4);
	memcpy(p + 8, &inv, 4);
	for (size_t i = 12; i < len; i++)
		p[i] = (uint8_t)(counter * 7 + i);
}

enum frame_kind { FRAME_REAL, FRAME_NEUTRAL, FRAME_BAD };

static enum frame_kind check_frame(const uint8_t *p, size_t len, uint32_t *counter)
{
	uint32_t c, inv;
	size_t i;

	if (len >= 12 && memcmp(p, "VCAM", 4) == 0) {
		memcpy(&c, p + 4, 4);
		memcpy(&inv, p + 8, 4);
		if (inv != ~c)
			return FRAME_BAD;
		for (i = 12; i < len; i++)
			if (p[i] != (uint8_t)(c * 7 + i))
				return FRAME_BAD;
		*counter = c;
		return FRAME_REAL;
	}
	for (i = 0; i < len; i++)
		if (p[i] != 0x80)
			return FRAME_BAD;
	return FRAME_NEUTRAL;
}

/* ------------------------------------------------------------------------
 * Minimal mmap streaming
 */

struct stream {
	int fd;
	enum v4l2_buf_type type;
	enum v4l2_memory memory;	/* MMAP, USERPTR (stream_setup_userptr) or DMABUF */
	unsigned int count;
	void *mem[32];
	size_t len[32];
	int dmafd[32];			/* DMABUF: the dma-buf queued as buffer i (mem: its map) */
};

/* REQBUFS of @count buffers of @memory; s->count is what the driver gave. */
static int stream_reqbufs(struct stream *s, int fd, enum v4l2_buf_type type, unsigned int count,
			  enum v4l2_memory memory)
{
	struct v4l2_requestbuffers req = { .count = count, .type = type, .memory = memory };

	s->fd = fd;
	s->type = type;
	s->memory = memory;
	if (xioctl(fd, VIDIOC_REQBUFS, &req) < 0)
		return -errno;
	s->count = req.count;
	return 0;
}

static int stream_setup(struct stream *s, int fd, enum v4l2_buf_type type, unsigned int count)
{
	if (stream_reqbufs(s, fd, type, count, V4L2_MEMORY_MMAP) < 0)
		return -errno;
	for (unsigned int i = 0; i < s->count; i++) {
		struct v4l2_buffer b = { .index = i, .type = type, .memory = V4L2_MEMORY_MMAP };

		if (xioctl(fd, VIDIOC_QUERYBUF, &b) < 0)
			return -errno;
		s->len[i] = b.length;
		s->mem[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				 b.m.offset);
		if (s->mem[i] == MAP_FAILED)
			return -errno;
	}
	return 0;
}

/* @count USERPTR buffers of @size bytes each, page-aligned memory of our own. */
static int stream_setup_userptr(struct stream *s, int fd, enum v4l2_buf_type type,
				unsigned int count, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);

	if (stream_reqbufs(s, fd, type, count, V4L2_MEMORY_USERPTR) < 0)
		return -errno;
	size = (size + (size_t)page - 1) / (size_t)page * (size_t)page;
	for (unsigned int i = 0; i < s->count; i++) {
		s->len[i] = size;
		if (posix_memalign(&s->mem[i], (size_t)page, size))
			return -ENOMEM;
		memset(s->mem[i], 0, size);
	}
	return 0;
}

/* Unmap the buffers: a mapping keeps the file (and the queue's ownership) alive past close(). */
static void stream_unmap(struct stream *s)
{
	for (unsigned int i = 0; i < s->count; i++) {
		if (s->memory == V4L2_MEMORY_USERPTR)
			free(s->mem[i]);
		else
			munmap(s->mem[i], s->len[i]);
		if (s->memory == V4L2_MEMORY_DMABUF)
			close(s->dmafd[i]);
	}
	s->count = 0;
}

static int qbuf(struct stream *s, unsigned int index, uint32_t bytesused)
{
	struct v4l2_buffer b = { .index = index, .type = s->type, .memory = s->memory,
				 .bytesused = bytesused, .field = V4L2_FIELD_NONE };

	if (s->memory == V4L2_MEMORY_USERPTR) {
		b.m.userptr = (unsigned long)s->mem[index];
		b.length = (uint32_t)s->len[index];
	}
	if (s->memory == V4L2_MEMORY_DMABUF)
		b.m.fd = s->dmafd[index];
	return xioctl(s->fd, VIDIOC_QBUF, &b) < 0 ? -errno : 0;
}

static int dqbuf(struct stream *s, struct v4l2_buffer *b)
{
	memset(b, 0, sizeof(*b));
	b->type = s->type;
	b->memory = s->memory;
	return xioctl(s->fd, VIDIOC_DQBUF, b) < 0 ? -errno : 0;
}

static int streamon(struct stream *s)
{
	int t = s->type;

	return xioctl(s->fd, VIDIOC_STREAMON, &t) < 0 ? -errno : 0;
}

static int set_out_fmt(int fd, uint32_t w, uint32_t h, uint32_t *sizeimage)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };

	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.width = w;
	f.fmt.pix.height = h;
	if (xioctl(fd, VIDIOC_S_FMT, &f) < 0)
		return -errno;
	*sizeimage = f.fmt.pix.sizeimage;
	return 0;
}

/* ------------------------------------------------------------------------
 * produce
 */

static volatile sig_atomic_t stop_flag;
static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int cmd_produce(int argc, char **argv)
{
	long frames = -1, fps = 30, start = 0, w = 640, h = 480;
	uint32_t size;
	struct stream s;
	struct v4l2_buffer b;
	bool use_write = false;
	uint8_t *wbuf = NULL;
	FILE *times = NULL;
	bool set_parm = false, stamp = false;
	double age_ms = 0;
	int fd, o;

	while ((o = getopt(argc, argv, "n:r:s:W:H:wPT:S:")) >= 0) {
		switch (o) {
		case 'S':
			stamp = true;
			age_ms = atof(optarg);
			break;
		case 'w': use_write = true; break;
		case 'P': set_parm = true; break;
		case 'T':
			times = fopen(optarg, "w");
			if (!times) {
				perror(optarg);
				return 1;
			}
			setvbuf(times, NULL, _IOLBF, 0);
			break;
		case 'n': frames = atol(optarg); break;
		case 'r': fps = atol(optarg); break;
		case 's': start = atol(optarg); break;
		case 'W': w = atol(optarg); break;
		case 'H': h = atol(optarg); break;
		default: return 2;
		}
	}
	if (optind >= argc)
		return 2;
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	fd = xopen(argv[optind], O_RDWR);
	if (set_out_fmt(fd, (uint32_t)w, (uint32_t)h, &size) < 0 ||
	    (use_write && !(wbuf = malloc(size))) ||
	    (!use_write && stream_setup(&s, fd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 4) < 0)) {
		fprintf(stderr, "vctest produce: setup failed: %s\n", strerror(errno));
		return 1;
	}
	if (set_parm && fps > 0) {
		struct v4l2_streamparm sp = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };

		sp.parm.output.timeperframe.numerator = 1;
		sp.parm.output.timeperframe.denominator = (uint32_t)fps;
		if (xioctl(fd, VIDIOC_S_PARM, &sp) < 0) {
			fprintf(stderr, "vctest produce: S_PARM: %s\n", strerror(errno));
			return 1;
		}
	}
	uint32_t counter = (uint32_t)start;
	unsigned int queued = 0;
	double next = now_ms();

	for (long n = 0; !stop_flag && (frames < 0 || n < frames); n++) {
		unsigned int idx;

		if (use_write) {
			ssize_t wr;

			fill_frame(wbuf, size, counter++);
			wr = write(fd, wbuf, size);
			if (wr != (ssize_t)size) {
				fprintf(stderr, "vctest produce: write: %s\n",
					wr < 0 ? strerror(errno) : "short write");
				return 1;
			}
			if (times)
				fprintf(times, "%u %.3f 0\n", counter - 1, now_ms());
			goto pace;
		}
		if (queued < s.count) {
			idx = queued++;
		} else {
			if (dqbuf(&s, &b) < 0) {
				fprintf(stderr, "vctest produce: DQBUF: %s\n", strerror(errno));
				return 1;
			}
			idx = b.index;
		}
		fill_frame(s.mem[idx], size, counter++);
		struct v4l2_buffer qb = { .index = idx, .type = s.type, .memory = s.memory,
					  .bytesused = size, .field = V4L2_FIELD_NONE };
		double stamp_ms = 0;

		if (stamp) {
			/* Whole microseconds, as struct timeval carries them. */
			long long us = (long long)((now_ms() - age_ms) * 1000.0);

			qb.timestamp.tv_sec = (time_t)(us / 1000000);
			qb.timestamp.tv_usec = (suseconds_t)(us % 1000000);
			stamp_ms = (double)us / 1000.0;
		}
		if (xioctl(fd, VIDIOC_QBUF, &qb) < 0) {
			fprintf(stderr, "vctest produce: QBUF: %s\n", strerror(errno));
			return 1;
		}
		if (times)
			fprintf(times, "%u %.3f %.3f\n", counter - 1, now_ms(), stamp_ms);
		if (n == 0 && streamon(&s) < 0) {
			fprintf(stderr, "vctest produce: STREAMON: %s\n", strerror(errno));
			return 1;
		}
pace:
		if (fps > 0) {
			next += 1000.0 / fps;
			double d = next - now_ms();

			if (d > 0)
				usleep((useconds_t)(d * 1000));
			else if (d < -100)
				next = now_ms();	/* stalled: go on at the rate, no burst */
		}
	}
	printf("produced %u frames\n", counter - (uint32_t)start);
	if (times)
		fclose(times);
	free(wbuf);
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------------
 * consume
 */

static int cmd_consume(int argc, char **argv)
{
	long frames = 30, timeout_s = 20;
	struct stream s;
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_buffer b;
	uint32_t counter, first = 0, last = 0, seq_expect = 0;
	long real = 0, repeats = 0, neutral = 0, bad = 0, backwards = 0, seq_bad = 0, resumed = 0;
	long ts_bad = 0, skipped = 0;
	double last_t, max_gap = 0, deadline, last_ts = 0;
	bool have = false, any = false;
	uint64_t prev_hash = 0;
	FILE *times = NULL;
	int fd, o;

	while ((o = getopt(argc, argv, "n:t:aT:")) >= 0) {
		switch (o) {
		case 'T':
			times = fopen(optarg, "w");
			if (!times) {
				perror(optarg);
				return 1;
			}
			setvbuf(times, NULL, _IOLBF, 0);	/* tests watch it grow */
			break;
		case 'n': frames = atol(optarg); break;
		case 't': timeout_s = atol(optarg); break;
		case 'a': any = true; break;
		default: return 2;
		}
	}
	if (optind >= argc)
		return 2;
	signal(SIGTERM, on_stop);
	fd = xopen(argv[optind], O_RDWR | O_NONBLOCK);
	if (xioctl(fd, VIDIOC_G_FMT, &f) < 0 ||
	    stream_setup(&s, fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 4) < 0) {
		fprintf(stderr, "vctest consume: setup: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned int i = 0; i < s.count; i++)
		qbuf(&s, i, 0);
	if (streamon(&s) < 0) {
		fprintf(stderr, "vctest consume: STREAMON: %s\n", strerror(errno));
		return 1;
	}
	last_t = now_ms();
	deadline = last_t + timeout_s * 1000.0;
	for (long n = 0; n < frames && !stop_flag;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (now_ms() > deadline) {
			printf("timeout after %ld frames\n", n);
			break;
		}
		if (poll(&p, 1, 500) <= 0)
			continue;
		if (dqbuf(&s, &b) < 0) {
			if (errno == EAGAIN)
				continue;
			printf("DQBUF: %s\n", strerror(errno));
			return 1;
		}
		double t = now_ms();

		if (t - last_t > max_gap)
			max_gap = t - last_t;
		last_t = t;
		if (b.sequence != seq_expect)
			seq_bad++;
		seq_expect = b.sequence + 1;
		/* V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC: strictly later each time, never ahead of us. */
		double ts = b.timestamp.tv_sec * 1e3 + b.timestamp.tv_usec / 1e3;

		if (ts <= last_ts || ts > t) {
			if (ts_bad++ < 3)
				fprintf(stderr, "vctest consume: buffer %u timestamp %.3f ms (previous %.3f, now %.3f)\n",
					b.sequence, ts, last_ts, t);
		}
		last_ts = ts;
		if (any) {
			/* FNV-1a over every 61st byte: equal frames give equal hashes. */
			const uint8_t *m = s.mem[b.index];
			uint64_t hsh = 1469598103934665603ull;

			for (size_t k = 0; k < b.bytesused; k += 61)
				hsh = (hsh ^ m[k]) * 1099511628211ull;
			if (have && hsh == prev_hash)
				repeats++;
			else
				real++;
			prev_hash = hsh;
			have = true;
			n++;
			qbuf(&s, b.index, 0);
			continue;
		}
		switch (check_frame(s.mem[b.index], b.bytesused, &counter)) {
		case FRAME_REAL:
			if (!have)
				first = counter;
			else if (counter == last)
				repeats++;
			else if (counter < last)
				backwards++;
			else if (counter >= 1000000 && last < 1000000)
				resumed = 1;
			else
				skipped += counter - last - 1;
			if (counter != last || !have) {
				real++;
				if (times)
					fprintf(times, "%u %.3f %.3f\n", counter, t, ts);
			}
			last = counter;
			have = true;
			break;
		case FRAME_NEUTRAL:
			neutral++;
			break;
		default:
			bad++;
			break;
		}
		n++;
		qbuf(&s, b.index, 0);
	}
	if (times)
		fclose(times);
	printf("frames=%ld real=%ld repeats=%ld neutral=%ld bad=%ld backwards=%ld seq_bad=%ld "
	       "first=%u last=%u max_gap_ms=%.0f resumed=%ld ts_bad=%ld skipped=%ld\n",
	       real + repeats + neutral + bad, real, repeats, neutral, bad, backwards, seq_bad,
	       first, last, max_gap, resumed, ts_bad, skipped);
	close(fd);
	return (bad || backwards || seq_bad || ts_bad) ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * verify-file
 */

static int cmd_verify_file(int argc, char **argv)
{
	FILE *f;
	size_t size, n;
	uint8_t *buf;
	uint32_t c, first = 0, last = 0;
	long frames = 0, real = 0, bad = 0, backwards = 0, distinct = 0;

	if (argc != 3)
		return 2;
	size = strtoul(argv[2], NULL, 0);
	f = fopen(argv[1], "rb");
	if (!f || !size) {
		fprintf(stderr, "vctest verify-file: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	buf = malloc(size);
	while ((n = fread(buf, 1, size, f)) == size) {
		frames++;
		switch (check_frame(buf, size, &c)) {
		case FRAME_REAL:
			if (real && c < last)
				backwards++;
			if (!real)
				first = c;
			if (!real || c != last)
				distinct++;
			last = c;
			real++;
			break;
		case FRAME_NEUTRAL:
			break;
		default:
			bad++;
		}
	}
	free(buf);
	fclose(f);
	printf("frames=%ld real=%ld bad=%ld backwards=%ld partial=%zu first=%u last=%u distinct=%ld\n",
	       frames, real, bad, backwards, n, first, last, distinct);
	return (!frames || !real || bad || backwards || n) ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * blocking: the 2010 debate, as a test
 */

struct blocker {
	const char *dev;
	int fd;
	struct stream s;
	volatile int state;	/* 0 starting, 1 about to block, 2 returned */
	int ret;
	uint32_t counter;
	enum frame_kind kind;
};

static void *blocker_main(void *arg)
{
	struct blocker *bl = arg;
	struct v4l2_buffer b;

	bl->state = 1;
	bl->ret = dqbuf(&bl->s, &b);	/* blocking: the fd has no O_NONBLOCK */
	if (!bl->ret)
		bl->kind = check_frame(bl->s.mem[b.index], b.bytesused, &bl->counter);
	bl->state = 2;
	return NULL;
}

/* Run @what on @fd and check it came back within @ms. */
static void timed(const char *what, int fd, unsigned long req, void *arg, double ms)
{
	double t = now_ms();
	int r = xioctl(fd, req, arg);
	double d = now_ms() - t;

	if (r < 0)
		fail("%s while DQBUF blocks: %s", what, strerror(errno));
	else
		CHECK(d < ms, "%s completes while another thread blocks in DQBUF (%.1f ms)", what, d);
}

static int declare_brightness(int outfd)
{
	struct viacam_ctrl c = {
		.id = V4L2_CID_BRIGHTNESS, .type = V4L2_CTRL_TYPE_INTEGER, .name = "Brightness",
		.minimum = 0, .maximum = 255, .step = 1, .default_value = 128,
	};
	struct viacam_ctrls cs = { .count = 1, .ctrls = (uintptr_t)&c };

	return xioctl(outfd, VIACAM_IOC_S_CTRLS, &cs);
}

static int cmd_blocking(int argc, char **argv)
{
	struct blocker bl = { 0 };
	struct stream out;
	pthread_t th;
	uint32_t size;
	int outfd, other;

	if (argc != 3)
		return 2;
	outfd = xopen(argv[2], O_RDWR);
	CHECK(declare_brightness(outfd) == 0, "backend declares a brightness control");
	bl.fd = xopen(argv[1], O_RDWR);
	if (stream_setup(&bl.s, bl.fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0)
		return 1;
	qbuf(&bl.s, 0, 0);
	qbuf(&bl.s, 1, 0);
	CHECK(streamon(&bl.s) == 0, "consumer STREAMON");
	pthread_create(&th, NULL, blocker_main, &bl);
	usleep(300000);
	CHECK(bl.state == 1, "thread A is blocked in VIDIOC_DQBUF (no frame yet)");

	other = xopen(argv[1], O_RDWR);
	struct v4l2_capability cap;
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_fmtdesc fd = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_control c = { .id = V4L2_CID_BRIGHTNESS };

	timed("QUERYCAP", other, VIDIOC_QUERYCAP, &cap, 1000);
	timed("G_FMT", other, VIDIOC_G_FMT, &f, 1000);
	timed("ENUM_FMT", other, VIDIOC_ENUM_FMT, &fd, 1000);
	timed("G_CTRL", other, VIDIOC_G_CTRL, &c, 1000);
	c.value = 200;
	timed("S_CTRL", other, VIDIOC_S_CTRL, &c, 1000);
	CHECK(bl.state == 1, "thread A is still blocked after the other ioctls");

	/* The producer: S_FMT, buffers, QBUF, STREAMON on the backend node. */
	double t = now_ms();

	CHECK(set_out_fmt(outfd, 640, 480, &size) == 0, "producer S_FMT while DQBUF blocks");
	CHECK(stream_setup(&out, outfd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) == 0,
	      "producer REQBUFS while DQBUF blocks");
	fill_frame(out.mem[0], size, 4242);
	CHECK(qbuf(&out, 0, size) == 0, "producer QBUF while DQBUF blocks");
	CHECK(streamon(&out) == 0, "producer STREAMON while DQBUF blocks");
	while (bl.state != 2 && now_ms() - t < 3000)
		usleep(1000);
	CHECK(bl.state == 2 && bl.ret == 0, "thread A wakes up with a buffer (%.0f ms after the "
	      "producer started)", now_ms() - t);
	CHECK(bl.kind == FRAME_REAL && bl.counter == 4242, "the buffer holds the producer's frame "
	      "(counter %u)", bl.counter);
	if (bl.state != 2)
		pthread_cancel(th);
	pthread_join(th, NULL);
	close(other);
	close(bl.fd);
	close(outfd);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * declare
 */

static void sub(int fd, uint32_t type, uint32_t flags)
{
	struct v4l2_event_subscription s = { .type = type, .flags = flags };

	if (xioctl(fd, VIDIOC_SUBSCRIBE_EVENT, &s) < 0)
		fail("SUBSCRIBE_EVENT 0x%x: %s", type, strerror(errno));
}

/* Dequeue events until one of @type comes (or none is left). */
static bool get_event(int fd, uint32_t type, struct v4l2_event *ev)
{
	struct pollfd p = { .fd = fd, .events = POLLPRI };

	while (poll(&p, 1, 1000) > 0) {
		if (xioctl(fd, VIDIOC_DQEVENT, ev) < 0)
			return false;
		if (ev->type == type)
			return true;
	}
	return false;
}

static int set_formats(int fd, const struct viacam_format *f, uint32_t n)
{
	struct viacam_formats fs = { .count = n, .formats = (uintptr_t)f };

	return xioctl(fd, VIACAM_IOC_S_FORMATS, &fs) < 0 ? -errno : 0;
}

static int set_ctrls(int fd, const struct viacam_ctrl *c, uint32_t n)
{
	struct viacam_ctrls cs = { .count = n, .ctrls = (uintptr_t)c };

	return xioctl(fd, VIACAM_IOC_S_CTRLS, &cs) < 0 ? -errno : 0;
}

static int count_fmts(int capfd, uint32_t *list, int max)
{
	int n = 0;

	for (;; n++) {
		struct v4l2_fmtdesc d = { .index = (uint32_t)n, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		if (xioctl(capfd, VIDIOC_ENUM_FMT, &d) < 0)
			break;
		if (n < max)
			list[n] = d.pixelformat;
	}
	return n;
}

static int cmd_declare(int argc, char **argv)
{
	static const struct viacam_format fmts[] = {
		{ V4L2_PIX_FMT_YUYV, 640, 480, 1, 30, 0, { 0 } },
		{ V4L2_PIX_FMT_YUYV, 640, 480, 1, 15, 0, { 0 } },
		{ V4L2_PIX_FMT_YUYV, 320, 240, 1, 30, 0, { 0 } },
		{ V4L2_PIX_FMT_NV12, 640, 480, 1, 30, 0, { 0 } },
		{ V4L2_PIX_FMT_MJPEG, 1280, 720, 1, 30, 500000, { 0 } },
	};
	struct viacam_ctrl ctrls[3] = {
		{ .id = V4L2_CID_BRIGHTNESS, .type = V4L2_CTRL_TYPE_INTEGER, .name = "Brightness",
		  .minimum = 0, .maximum = 255, .step = 1, .default_value = 128 },
		{ .id = V4L2_CID_HFLIP, .type = V4L2_CTRL_TYPE_BOOLEAN, .name = "Horizontal Flip",
		  .minimum = 0, .maximum = 1, .step = 1, .default_value = 0 },
		{ .id = V4L2_CID_USER_BASE + 0x1000, .type = V4L2_CTRL_TYPE_MENU,
		  .name = "Test Pattern", .minimum = 0, .maximum = 2, .default_value = 0,
		  .menu_count = 3, .menu = { "Off", "Bars", "Gradient" } },
	};
	struct v4l2_event ev;
	int outfd, capfd;
	uint32_t list[16];

	if (argc != 3)
		return 2;
	capfd = xopen(argv[1], O_RDWR);
	outfd = xopen(argv[2], O_RDWR);
	sub(outfd, VIACAM_EVENT_CONSUMERS, V4L2_EVENT_SUB_FL_SEND_INITIAL);
	CHECK(get_event(outfd, VIACAM_EVENT_CONSUMERS, &ev) &&
	      ((struct viacam_event_consumers *)ev.u.data)->open == 1,
	      "SEND_INITIAL: a consumers event with open=1 arrives on subscription");
	sub(outfd, VIACAM_EVENT_FORMAT, 0);
	sub(outfd, VIACAM_EVENT_INTERVAL, 0);
	sub(outfd, VIACAM_EVENT_CTRL, 0);
	sub(outfd, VIACAM_EVENT_STREAM_START, 0);
	sub(outfd, VIACAM_EVENT_STREAM_STOP, 0);

	CHECK(set_formats(outfd, fmts, 5) == 0, "declare 5 format tuples");
	CHECK(count_fmts(capfd, list, 16) == 3 && list[0] == V4L2_PIX_FMT_YUYV &&
	      list[1] == V4L2_PIX_FMT_NV12 && list[2] == V4L2_PIX_FMT_MJPEG,
	      "ENUM_FMT lists YUYV, NV12, MJPEG in declaration order");
	struct v4l2_frmsizeenum fs = { .index = 0, .pixel_format = V4L2_PIX_FMT_YUYV };
	int nsizes = 0;

	while (xioctl(capfd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0) {
		if (fs.type != V4L2_FRMSIZE_TYPE_DISCRETE)
			fail("frame size %u is not DISCRETE", fs.index);
		nsizes++;
		fs.index++;
	}
	CHECK(nsizes == 2, "YUYV has 2 discrete sizes (got %d)", nsizes);
	struct v4l2_frmivalenum fi = { .pixel_format = V4L2_PIX_FMT_YUYV, .width = 640,
				       .height = 480 };
	int nivs = 0;

	while (xioctl(capfd, VIDIOC_ENUM_FRAMEINTERVALS, &fi) == 0) {
		nivs += fi.type == V4L2_FRMIVAL_TYPE_DISCRETE;
		fi.index++;
	}
	CHECK(nivs == 2, "YUYV 640x480 has 2 discrete intervals (got %d)", nivs);

	CHECK(set_ctrls(outfd, ctrls, 3) == -EBUSY,
	      "a new control set is refused with EBUSY while the capture node is open");
	close(capfd);
	CHECK(set_ctrls(outfd, ctrls, 3) == 0, "declare 3 controls with the capture node closed");
	capfd = xopen(argv[1], O_RDWR);
	struct v4l2_queryctrl q = { .id = V4L2_CID_BRIGHTNESS };

	CHECK(xioctl(capfd, VIDIOC_QUERYCTRL, &q) == 0 && q.maximum == 255 &&
	      q.default_value == 128 && !strcmp((char *)q.name, "Brightness"),
	      "brightness appears as declared");
	struct v4l2_querymenu qm = { .id = V4L2_CID_USER_BASE + 0x1000, .index = 2 };

	CHECK(xioctl(capfd, VIDIOC_QUERYMENU, &qm) == 0 && !strcmp((char *)qm.name, "Gradient"),
	      "menu item 2 is 'Gradient'");
	ctrls[0].default_value = 100;
	CHECK(set_ctrls(outfd, ctrls, 3) == 0, "a new default for the same set is accepted while open");
	q.id = V4L2_CID_BRIGHTNESS;
	CHECK(xioctl(capfd, VIDIOC_QUERYCTRL, &q) == 0 && q.default_value == 100,
	      "the new default is visible (%d)", q.default_value);

	/*
	 * A set with a button, re-declared while the capture node is open: a
	 * button has no range to update, and a failure must not leave the
	 * controls before it changed.
	 */
	struct viacam_ctrl withbtn[2] = { ctrls[0], {
		.id = V4L2_CID_USER_BASE + 0x1001, .type = V4L2_CTRL_TYPE_BUTTON,
		.name = "Snapshot" } };

	close(capfd);
	CHECK(set_ctrls(outfd, withbtn, 2) == 0, "declare brightness and a button");
	capfd = xopen(argv[1], O_RDWR);
	withbtn[0].default_value = 90;
	withbtn[0].maximum = 200;
	int redecl = set_ctrls(outfd, withbtn, 2);

	q.id = V4L2_CID_BRIGHTNESS;
	CHECK(redecl == 0 && xioctl(capfd, VIDIOC_QUERYCTRL, &q) == 0 && q.default_value == 90 &&
	      q.maximum == 200, "the same set with a button takes a new range while open (%s; "
	      "max %d, default %d)", redecl ? strerror(-redecl) : "ok", q.maximum, q.default_value);
	close(capfd);
	CHECK(set_ctrls(outfd, ctrls, 3) == 0, "the 3 controls again");
	capfd = xopen(argv[1], O_RDWR);

	/* Consumer requests become events. */
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.width = 330;
	f.fmt.pix.height = 250;
	CHECK(xioctl(capfd, VIDIOC_S_FMT, &f) == 0 && f.fmt.pix.width == 320 &&
	      f.fmt.pix.height == 240 && f.fmt.pix.sizeimage == 320 * 240 * 2 &&
	      f.fmt.pix.bytesperline == 640, "S_FMT 330x250 snaps to 320x240 with bpl 640");
	CHECK(get_event(outfd, VIACAM_EVENT_FORMAT, &ev) &&
	      ((struct viacam_event_stream *)ev.u.data)->width == 320,
	      "the backend gets a FORMAT event for 320x240");
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_NV12;
	f.fmt.pix.width = 640;
	f.fmt.pix.height = 480;
	CHECK(xioctl(capfd, VIDIOC_S_FMT, &f) == 0 && f.fmt.pix.sizeimage == 640 * 480 * 3 / 2 &&
	      f.fmt.pix.bytesperline == 640, "NV12 640x480: sizeimage 460800, bpl 640");
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_MJPEG;
	f.fmt.pix.width = 1280;
	f.fmt.pix.height = 720;
	CHECK(xioctl(capfd, VIDIOC_S_FMT, &f) == 0 && f.fmt.pix.sizeimage == 500000,
	      "MJPEG takes the producer-given sizeimage 500000");
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.width = 640;
	f.fmt.pix.height = 480;
	xioctl(capfd, VIDIOC_S_FMT, &f);
	struct v4l2_streamparm sp = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	sp.parm.capture.timeperframe.numerator = 1;
	sp.parm.capture.timeperframe.denominator = 14;
	CHECK(xioctl(capfd, VIDIOC_S_PARM, &sp) == 0 &&
	      sp.parm.capture.timeperframe.denominator == 15, "S_PARM 1/14 snaps to 1/15");
	CHECK(get_event(outfd, VIACAM_EVENT_INTERVAL, &ev) &&
	      ((struct viacam_event_stream *)ev.u.data)->interval_den == 15,
	      "the backend gets an INTERVAL event for 1/15");
	struct v4l2_control c = { .id = V4L2_CID_BRIGHTNESS, .value = 77 };

	CHECK(xioctl(capfd, VIDIOC_S_CTRL, &c) == 0, "consumer S_CTRL brightness=77");
	CHECK(get_event(outfd, VIACAM_EVENT_CTRL, &ev) &&
	      ((struct viacam_event_ctrl *)ev.u.data)->id == V4L2_CID_BRIGHTNESS &&
	      ((struct viacam_event_ctrl *)ev.u.data)->value == 77,
	      "the backend gets a CTRL event (brightness, 77)");
	struct stream s;

	stream_setup(&s, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2);
	CHECK(streamon(&s) == 0, "consumer STREAMON");
	CHECK(get_event(outfd, VIACAM_EVENT_STREAM_START, &ev) &&
	      ((struct viacam_event_stream *)ev.u.data)->pixelformat == V4L2_PIX_FMT_YUYV &&
	      ((struct viacam_event_stream *)ev.u.data)->interval_den == 15,
	      "STREAM_START carries YUYV at 1/15");

	/* Bad declarations: EINVAL, and nothing changes. */
	struct viacam_format bad = fmts[0];

	bad.width = 0;
	CHECK(set_formats(outfd, &bad, 1) == -EINVAL, "zero width is refused");
	bad = fmts[0];
	bad.pixelformat = 0x31323334;
	CHECK(set_formats(outfd, &bad, 1) == -EINVAL, "unknown fourcc is refused");
	bad = fmts[0];
	bad.interval_den = 0;
	CHECK(set_formats(outfd, &bad, 1) == -EINVAL, "zero interval is refused");
	struct viacam_formats toomany = { .count = VIACAM_MAX_FORMATS + 1,
					  .formats = (uintptr_t)fmts };

	CHECK(xioctl(outfd, VIACAM_IOC_S_FORMATS, &toomany) < 0 && errno == EINVAL,
	      "more than %d tuples are refused", VIACAM_MAX_FORMATS);
	struct viacam_ctrl bc = ctrls[0];

	bc.minimum = 300;
	CHECK(set_ctrls(outfd, &bc, 1) == -EINVAL, "control with min > max is refused");
	bc = ctrls[0];
	memset(bc.name, 'x', sizeof(bc.name));
	CHECK(set_ctrls(outfd, &bc, 1) == -EINVAL, "unterminated control name is refused");
	struct viacam_ctrl dup[2] = { ctrls[0], ctrls[0] };

	CHECK(set_ctrls(outfd, dup, 2) == -EINVAL, "duplicate control ids are refused");
	bc = ctrls[1];
	bc.type = V4L2_CTRL_TYPE_INTEGER;
	CHECK(set_ctrls(outfd, &bc, 1) == -EINVAL, "hflip declared as an integer is refused");
	struct viacam_ctrls toomanyc = { .count = VIACAM_MAX_CTRLS + 1, .ctrls = (uintptr_t)ctrls };

	CHECK(xioctl(outfd, VIACAM_IOC_S_CTRLS, &toomanyc) < 0 && errno == EINVAL,
	      "more than %d controls are refused", VIACAM_MAX_CTRLS);
	CHECK(count_fmts(capfd, list, 16) == 3, "formats unchanged after the refusals");
	q.id = V4L2_CID_BRIGHTNESS;
	CHECK(xioctl(capfd, VIDIOC_QUERYCTRL, &q) == 0 && q.maximum == 255,
	      "controls unchanged after the refusals");
	int t = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	xioctl(capfd, VIDIOC_STREAMOFF, &t);
	CHECK(get_event(outfd, VIACAM_EVENT_STREAM_STOP, &ev), "STREAM_STOP after STREAMOFF");

	/* A second file handle cannot take over a streaming queue. */
	int other = xopen(argv[1], O_RDWR);
	struct v4l2_requestbuffers rb = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };

	CHECK(xioctl(other, VIDIOC_REQBUFS, &rb) < 0 && errno == EBUSY,
	      "REQBUFS from a second file handle gets EBUSY");
	close(other);
	stream_unmap(&s);
	close(capfd);

	/* PipeWire asks for 16 buffers; up to 32 are allowed on both nodes. */
	const char *nodes[2] = { argv[1], argv[2] };

	for (int i = 0; i < 2; i++) {
		int nfd = xopen(nodes[i], O_RDWR);
		struct v4l2_requestbuffers r = {
			.count = 16, .memory = V4L2_MEMORY_MMAP,
			.type = i ? V4L2_BUF_TYPE_VIDEO_OUTPUT : V4L2_BUF_TYPE_VIDEO_CAPTURE,
		};

		int rr = xioctl(nfd, VIDIOC_REQBUFS, &r);

		CHECK(rr == 0 && r.count == 16, "%s: REQBUFS 16 gives 16 (%u, %s)", nodes[i],
		      r.count, rr ? strerror(errno) : "ok");
		r.count = 40;
		CHECK(xioctl(nfd, VIDIOC_REQBUFS, &r) == 0 && r.count == 32,
		      "%s: REQBUFS 40 gives 32 (%u)", nodes[i], r.count);
		close(nfd);
	}
	/* Names that reach applications are printable UTF-8 (the card name here). */
	static const char *const bad_text[] = {
		"tab\there", "bell\a", "del\x7f", "lone \xff byte", "cut \xc3",
		"overlong \xc0\xaf", "surrogate \xed\xa0\x80", "C1 \xc2\x85",
		"beyond \xf4\x90\x80\x80",
	};
	struct viacam_info info = { .card = "Kamera \xc3\xa4 \xe2\x9c\x93" };
	struct v4l2_capability vcap;
	int cfd = xopen(argv[1], O_RDWR);

	CHECK(xioctl(outfd, VIACAM_IOC_S_INFO, &info) == 0 &&
	      xioctl(cfd, VIDIOC_QUERYCAP, &vcap) == 0 &&
	      !strcmp((const char *)vcap.card, info.card),
	      "a UTF-8 card name reaches QUERYCAP (%s)", (const char *)vcap.card);
	for (size_t i = 0; i < sizeof(bad_text) / sizeof(bad_text[0]); i++) {
		struct viacam_info bi = { 0 };
		struct viacam_ctrl bn = ctrls[0];

		snprintf(bi.card, sizeof(bi.card), "%s", bad_text[i]);
		CHECK(xioctl(outfd, VIACAM_IOC_S_INFO, &bi) < 0 && errno == EINVAL,
		      "card name %zu (bad UTF-8 or a control character) is refused", i);
		snprintf(bn.name, sizeof(bn.name), "%s", bad_text[i]);
		CHECK(set_ctrls(outfd, &bn, 1) == -EINVAL, "control name %zu is refused", i);
	}
	CHECK(xioctl(cfd, VIDIOC_QUERYCAP, &vcap) == 0 && !strcmp((const char *)vcap.card, info.card),
	      "the card name is unchanged after the refusals");
	memset(&info, 0, sizeof(info));
	xioctl(outfd, VIACAM_IOC_S_INFO, &info);
	close(cfd);
	CHECK(set_formats(outfd, NULL, 0) == 0, "going back to plain mode");
	close(outfd);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * Camera management through /dev/viacam
 */

static int ctl_add(int ctl, const char *label, uint32_t timeout_ms, struct viacam_camera *c)
{
	memset(c, 0, sizeof(*c));
	c->id = VIACAM_ID_AUTO;
	c->capture_nr = VIACAM_NR_AUTO;
	c->backend_nr = VIACAM_NR_AUTO;
	c->timeout_ms = timeout_ms;
	snprintf(c->label, sizeof(c->label), "%s", label);
	return xioctl(ctl, VIACAM_IOC_ADD, c) < 0 ? -errno : 0;
}

static int ctl_remove(int ctl, uint32_t id)
{
	struct viacam_camera c = { .id = id };

	return xioctl(ctl, VIACAM_IOC_REMOVE, &c) < 0 ? -errno : 0;
}

static int cmd_churn(int argc, char **argv)
{
	int cams, rounds, ctl = xopen("/dev/viacam", O_RDWR);
	struct viacam_camera c[VIACAM_MAX_CAMERAS];
	int bad = 0;

	if (argc != 3)
		return 2;
	cams = atoi(argv[1]);
	rounds = atoi(argv[2]);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < cams; i++)
			if (ctl_add(ctl, "churn", 0, &c[i]) < 0)
				bad++;
		for (int i = 0; i < cams; i++)
			if (ctl_remove(ctl, c[i].id) < 0)
				bad++;
	}
	CHECK(bad == 0, "%d rounds of adding and removing %d cameras (%d errors)", rounds, cams,
	      bad);
	struct viacam_camera big;

	CHECK(ctl_add(ctl, "", 0, &big) == 0 && ctl_remove(ctl, big.id) == 0,
	      "the control node still works afterwards");
	memset(&big, 0, sizeof(big));
	big.id = VIACAM_ID_AUTO;
	big.capture_nr = big.backend_nr = VIACAM_NR_AUTO;
	memset(big.label, 'x', sizeof(big.label));
	CHECK(xioctl(ctl, VIACAM_IOC_ADD, &big) < 0 && errno == EINVAL,
	      "an unterminated label is refused with EINVAL");
	CHECK(ctl_add(ctl, "line\nbreak", 0, &big) == -EINVAL &&
	      ctl_add(ctl, "overlong \xc0\xaf", 0, &big) == -EINVAL,
	      "labels with a control character or bad UTF-8 are refused with EINVAL");
	CHECK(ctl_add(ctl, "K\xc3\xa4mera", 0, &big) == 0 && !strcmp(big.label, "K\xc3\xa4mera") &&
	      ctl_remove(ctl, big.id) == 0, "a UTF-8 label is taken as it is");
	CHECK(ctl_remove(ctl, 12345) == -ENOENT, "removing an unknown id gives ENOENT");
	close(ctl);
	return failures ? 1 : 0;
}

struct waiter {
	int fd;
	struct stream s;
	volatile int done;
	int err;
	long frames;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct v4l2_buffer b;

	for (;;) {
		if (dqbuf(&w->s, &b) < 0) {
			w->err = errno;
			break;
		}
		w->frames++;
		qbuf(&w->s, b.index, 0);
	}
	w->done = 1;
	return NULL;
}

/* MODE "streaming": frames flow (neutral repeats, 100 ms timeout); "blocked": nothing comes. */
static int cmd_remove_busy(int argc, char **argv)
{
	struct viacam_camera c;
	struct waiter w = { 0 };
	pthread_t th;
	char path[64];
	bool streaming;
	int ctl = xopen("/dev/viacam", O_RDWR);

	if (argc != 2)
		return 2;
	streaming = !strcmp(argv[1], "streaming");
	if (ctl_add(ctl, "remove-busy", streaming ? 100 : 60000, &c) < 0) {
		fail("add a camera: %s", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "/dev/video%d", c.capture_nr);
	w.fd = xopen(path, O_RDWR);
	stream_setup(&w.s, w.fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 4);
	for (unsigned int i = 0; i < w.s.count; i++)
		qbuf(&w.s, i, 0);
	streamon(&w.s);
	pthread_create(&th, NULL, waiter_main, &w);
	usleep(streaming ? 800000 : 300000);
	if (streaming)
		CHECK(w.frames > 0, "consumer receives (repeated) frames before removal (%ld)",
		      w.frames);
	else
		CHECK(w.frames == 0 && !w.done, "consumer is blocked in DQBUF");
	CHECK(ctl_remove(ctl, c.id) == 0, "remove the camera while its consumer is %s",
	      argv[1]);
	double t = now_ms();

	while (!w.done && now_ms() - t < 3000)
		usleep(1000);
	CHECK(w.done, "the consumer's DQBUF returns after the removal (%.0f ms)", now_ms() - t);
	CHECK(w.err == ENODEV, "...with ENODEV (%s)", strerror(w.err));
	if (!w.done)
		pthread_cancel(th);
	pthread_join(th, NULL);
	struct v4l2_capability cap;

	CHECK(xioctl(w.fd, VIDIOC_QUERYCAP, &cap) < 0 && errno == ENODEV,
	      "the next ioctl on the open fd fails with ENODEV");
	CHECK(access(path, F_OK) != 0, "%s is gone", path);
	close(w.fd);
	close(ctl);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * stress: random valid ioctls from many threads
 */

struct stress_ctx {
	char **nodes;
	int nnodes;
	double end;
	unsigned int seed;
	long ops, errors, opens;
	char lasterr[160];
};

static int stress_one(int fd, bool ctl, unsigned int *seed)
{
	union {
		struct v4l2_capability cap;
		struct v4l2_format f;
		struct v4l2_fmtdesc fd;
		struct v4l2_frmsizeenum fs;
		struct v4l2_streamparm sp;
		struct v4l2_queryctrl qc;
		struct v4l2_control c;
		struct v4l2_event_subscription sub;
		struct v4l2_event ev;
		struct viacam_version v;
		struct viacam_list l;
		struct viacam_camera cam;
		int prio;
	} u;
	struct v4l2_capability cap;
	enum v4l2_buf_type type;
	int r = rand_r(seed);

	memset(&u, 0, sizeof(u));
	if (ctl) {
		switch (r % 3) {
		case 0: return xioctl(fd, VIACAM_IOC_VERSION, &u.v);
		case 1: return xioctl(fd, VIACAM_IOC_LIST, &u.l);
		default:
			u.cam.id = (uint32_t)(r >> 4) % 4;
			if (xioctl(fd, VIACAM_IOC_QUERY, &u.cam) < 0 && errno != ENOENT)
				return -1;
			return 0;
		}
	}
	if (xioctl(fd, VIDIOC_QUERYCAP, &cap) < 0)
		return -1;
	type = (cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) ? V4L2_BUF_TYPE_VIDEO_CAPTURE :
							   V4L2_BUF_TYPE_VIDEO_OUTPUT;
	switch (r % 9) {
	case 0:
		u.f.type = type;
		return xioctl(fd, VIDIOC_G_FMT, &u.f);
	case 1:
		u.f.type = type;
		if (xioctl(fd, VIDIOC_G_FMT, &u.f) < 0)
			return -1;
		u.f.fmt.pix.width = 16 + (uint32_t)(r >> 8) % 2000;
		return xioctl(fd, VIDIOC_TRY_FMT, &u.f);
	case 2:
		u.fd.type = type;
		u.fd.index = (uint32_t)(r >> 8) % 4;
		if (xioctl(fd, VIDIOC_ENUM_FMT, &u.fd) < 0 && errno != EINVAL)
			return -1;
		return 0;
	case 3:
		u.fs.pixel_format = V4L2_PIX_FMT_YUYV;
		if (xioctl(fd, VIDIOC_ENUM_FRAMESIZES, &u.fs) < 0 && errno != EINVAL)
			return -1;
		return 0;
	case 4:
		u.sp.type = type;
		if (xioctl(fd, VIDIOC_G_PARM, &u.sp) < 0)
			return -1;
		return xioctl(fd, VIDIOC_S_PARM, &u.sp);
	case 5:
		/* The backend node has no controls: ENOTTY there is right. */
		u.qc.id = V4L2_CTRL_FLAG_NEXT_CTRL;
		if (xioctl(fd, VIDIOC_QUERYCTRL, &u.qc) < 0 && errno != EINVAL &&
		    !(type == V4L2_BUF_TYPE_VIDEO_OUTPUT && errno == ENOTTY))
			return -1;
		return 0;
	case 6:
		return xioctl(fd, VIDIOC_G_PRIORITY, &u.prio);
	case 7:
		u.sub.type = type == V4L2_BUF_TYPE_VIDEO_OUTPUT ? VIACAM_EVENT_CONSUMERS :
								V4L2_EVENT_CTRL;
		u.sub.flags = V4L2_EVENT_SUB_FL_SEND_INITIAL;
		if (xioctl(fd, VIDIOC_SUBSCRIBE_EVENT, &u.sub) < 0 && errno != EINVAL)
			return -1;
		return 0;
	default:
		/* Drain events without blocking (fds are O_NONBLOCK). */
		while (xioctl(fd, VIDIOC_DQEVENT, &u.ev) == 0)
			;
		return errno == ENOENT ? 0 : -1;
	}
}

static void *stress_main(void *arg)
{
	struct stress_ctx *c = arg;
	int fds[16];

	for (int i = 0; i < c->nnodes; i++)
		fds[i] = -1;
	while (now_ms() < c->end) {
		int n = rand_r(&c->seed) % c->nnodes;

		/* An open/close storm: about one call in eight reopens the node. */
		if (fds[n] < 0 || rand_r(&c->seed) % 8 == 0) {
			if (fds[n] >= 0)
				close(fds[n]);
			fds[n] = open(c->nodes[n], O_RDWR | O_NONBLOCK | O_CLOEXEC);
			c->opens++;
			if (fds[n] < 0) {
				snprintf(c->lasterr, sizeof(c->lasterr), "open %s: %s", c->nodes[n],
					 strerror(errno));
				c->errors++;
				continue;
			}
		}
		if (stress_one(fds[n], strstr(c->nodes[n], "viacam") != NULL, &c->seed) < 0) {
			snprintf(c->lasterr, sizeof(c->lasterr), "%s: %s", c->nodes[n], strerror(errno));
			c->errors++;
		}
		c->ops++;
	}
	for (int i = 0; i < c->nnodes; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return NULL;
}

static int cmd_stress(int argc, char **argv)
{
	struct stress_ctx ctx[32];
	pthread_t th[32];
	long ops = 0, errors = 0, opens = 0;
	int threads;

	if (argc < 4)
		return 2;
	threads = atoi(argv[2]);
	if (threads < 1 || threads > 32 || argc - 3 > 16)
		return 2;
	for (int i = 0; i < threads; i++) {
		ctx[i] = (struct stress_ctx){ .nodes = argv + 3, .nnodes = argc - 3,
					      .end = now_ms() + atof(argv[1]) * 1000,
					      .seed = 12345u + (unsigned int)i };
		pthread_create(&th[i], NULL, stress_main, &ctx[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		ops += ctx[i].ops;
		errors += ctx[i].errors;
		opens += ctx[i].opens;
		if (ctx[i].errors)
			printf("thread %d: last error: %s\n", i, ctx[i].lasterr);
	}
	printf("threads=%d ops=%ld opens=%ld errors=%ld\n", threads, ops, opens, errors);
	CHECK(errors == 0 && ops > 0, "%d threads, %ld random valid ioctls, %ld opens: no errors",
	      threads, ops, opens);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * race: hit a hand-off race window, made 200 ms wide by the module's "inject"
 * parameter, every time (tests/integration/TEST-13-races)
 */

static void set_inject(unsigned int bits)
{
	FILE *f = fopen("/sys/module/viacam/parameters/inject", "w");

	if (!f || fprintf(f, "%u\n", bits) < 0 || fclose(f) != 0) {
		fprintf(stderr, "vctest: cannot set viacam's inject parameter: %s\n",
			strerror(errno));
		exit(2);
	}
}

static int streamoff(struct stream *s)
{
	int t = s->type;

	return xioctl(s->fd, VIDIOC_STREAMOFF, &t) < 0 ? -errno : 0;
}

/* Wait up to @ms for a buffer on @s (non-blocking fd or not): 0, or -errno. */
static int dqbuf_wait(struct stream *s, struct v4l2_buffer *b, int ms)
{
	/* A capture queue polls readable, an output queue writable, with a buffer done. */
	struct pollfd p = { .fd = s->fd, .events = POLLIN | POLLOUT };

	if (poll(&p, 1, ms) <= 0)
		return -ETIMEDOUT;
	return dqbuf(s, b);
}

/*
 * held-stop: the worker has taken a capture buffer to fill from the held
 * backend frame when the producer stops streaming. The copy must finish
 * from that frame (the producer's stop waits for it).
 */
static int race_held_stop(int capfd, int outfd)
{
	struct stream cap, out;
	struct v4l2_buffer b;
	uint32_t size, counter = 0;
	double t;

	CHECK(set_out_fmt(outfd, 640, 480, &size) == 0, "producer S_FMT 640x480");
	if (stream_setup(&out, outfd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) < 0 ||
	    stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0)
		return 1;
	CHECK(streamon(&cap) == 0 && streamon(&out) == 0, "both nodes stream");
	/* No capture buffer waits: the frame becomes the held one. */
	fill_frame(out.mem[0], size, 777);
	CHECK(qbuf(&out, 0, size) == 0, "producer QBUF frame 777 (no capture buffer waits)");
	usleep(200000);
	set_inject(1);
	CHECK(qbuf(&cap, 0, 0) == 0, "consumer QBUF: the worker takes it and waits 200 ms");
	usleep(50000);
	t = now_ms();
	CHECK(streamoff(&out) == 0, "producer STREAMOFF while the worker copies (%.0f ms)",
	      now_ms() - t);
	set_inject(0);
	int r = dqbuf_wait(&cap, &b, 3000);

	CHECK(r == 0, "consumer DQBUF: %s", r ? strerror(-r) : "a buffer");
	if (!r) {
		enum frame_kind k = check_frame(cap.mem[b.index], b.bytesused, &counter);

		CHECK(k == FRAME_REAL && counter == 777 && b.bytesused == size,
		      "it holds the producer's frame 777 (kind %d, counter %u, %u bytes)",
		      k, counter, b.bytesused);
	}
	streamoff(&cap);
	stream_unmap(&cap);
	stream_unmap(&out);
	return failures ? 1 : 0;
}

struct write_job {
	int fd;
	const void *buf;
	size_t len;
	ssize_t ret;
	int err;
};

static void *write_main(void *arg)
{
	struct write_job *w = arg;

	w->ret = write(w->fd, w->buf, w->len);
	w->err = errno;
	return NULL;
}

/* The same job the other way: read() into buf (which is written, the const aside). */
static void *read_main(void *arg)
{
	struct write_job *w = arg;

	w->ret = read(w->fd, (void *)(uintptr_t)w->buf, w->len);
	w->err = errno;
	return NULL;
}

/*
 * write-fault: a write() of a whole frame goes straight into a waiting
 * capture buffer, but its user memory ends in an unmapped page, and the
 * consumer stops streaming while the copy is under way. The write fails with
 * EFAULT, the stop returns every buffer, and the next stream works.
 */
static int race_write_fault(int capfd, int outfd)
{
	struct stream cap;
	struct write_job w = { .fd = outfd };
	struct v4l2_buffer b;
	pthread_t th;
	uint32_t size, counter = 0;
	long pg = sysconf(_SC_PAGESIZE);
	size_t maplen;
	uint8_t *mem;

	CHECK(set_out_fmt(outfd, 640, 480, &size) == 0, "producer S_FMT 640x480");
	if (stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0)
		return 1;
	qbuf(&cap, 0, 0);
	qbuf(&cap, 1, 0);
	CHECK(streamon(&cap) == 0, "consumer streams, two buffers wait");
	/* A frame whose last page is not mapped. */
	maplen = ((size + pg - 1) / pg + 1) * pg;
	mem = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	fill_frame(mem, size, 99);
	munmap(mem + maplen - pg, pg);
	w.buf = mem + maplen - pg - size + 64;	/* the last 64 bytes are missing */
	w.len = size;
	set_inject(2);
	pthread_create(&th, NULL, write_main, &w);
	usleep(50000);
	CHECK(streamoff(&cap) == 0, "consumer STREAMOFF while the write() copies");
	pthread_join(th, NULL);
	set_inject(0);
	CHECK(w.ret < 0 && w.err == EFAULT, "the write() fails with EFAULT (%zd, %s)", w.ret,
	      w.ret < 0 ? strerror(w.err) : "no error");
	for (unsigned int i = 0; i < cap.count; i++) {
		struct v4l2_buffer q = { .index = i, .type = cap.type, .memory = V4L2_MEMORY_MMAP };

		CHECK(xioctl(capfd, VIDIOC_QUERYBUF, &q) == 0 &&
		      !(q.flags & (V4L2_BUF_FLAG_QUEUED | V4L2_BUF_FLAG_DONE)),
		      "after STREAMOFF capture buffer %u is the consumer's (flags 0x%x)", i, q.flags);
	}
	/* The next stream: every buffer can be queued again and gets a whole frame. */
	CHECK(qbuf(&cap, 0, 0) == 0 && qbuf(&cap, 1, 0) == 0, "both buffers queue again");
	CHECK(streamon(&cap) == 0, "consumer STREAMON again");
	fill_frame(mem, size, 100);
	w.buf = mem;
	write_main(&w);
	CHECK(w.ret == (ssize_t)size, "a good write() of frame 100 (%zd)", w.ret);
	int r = dqbuf_wait(&cap, &b, 3000);

	CHECK(r == 0 && check_frame(cap.mem[b.index], b.bytesused, &counter) == FRAME_REAL &&
	      counter == 100, "the consumer gets frame 100 (%s, counter %u)",
	      r ? strerror(-r) : "ok", counter);
	streamoff(&cap);
	stream_unmap(&cap);
	munmap(mem, maplen - pg);
	return failures ? 1 : 0;
}

/*
 * small-src: backend buffers queued for a small format, then a consumer picks
 * a bigger declared format and the producer starts streaming with the small
 * buffers. Their frames must not be read past their end (they do not fit, so
 * the consumer gets repeats instead).
 */
static int race_small_src(int capfd, int outfd)
{
	const struct viacam_format decl[] = {
		{ V4L2_PIX_FMT_YUYV, 320, 240, 1, 30, 0, { 0, 0 } },
		{ V4L2_PIX_FMT_YUYV, 640, 480, 1, 30, 0, { 0, 0 } },
	};
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct stream cap, out;
	struct v4l2_buffer b;
	uint32_t counter = 0;

	CHECK(set_formats(outfd, decl, 2) == 0, "backend declares YUYV 320x240 and 640x480");
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.width = 320;
	f.fmt.pix.height = 240;
	CHECK(xioctl(capfd, VIDIOC_S_FMT, &f) == 0 && f.fmt.pix.width == 320,
	      "consumer S_FMT 320x240");
	if (stream_setup(&out, outfd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) < 0)
		return 1;
	CHECK(out.len[0] < 640 * 480 * 2, "backend buffers sized for 320x240 (%zu bytes)",
	      out.len[0]);
	fill_frame(out.mem[0], out.len[0], 5);
	CHECK(qbuf(&out, 0, 320 * 240 * 2) == 0, "producer QBUF before STREAMON (320x240)");
	f.fmt.pix.width = 640;
	f.fmt.pix.height = 480;
	CHECK(xioctl(capfd, VIDIOC_S_FMT, &f) == 0 && f.fmt.pix.width == 640,
	      "consumer S_FMT 640x480 (its own queue is idle)");
	if (stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0)
		return 1;
	qbuf(&cap, 0, 0);
	qbuf(&cap, 1, 0);
	CHECK(streamon(&cap) == 0, "consumer STREAMON at 640x480");
	CHECK(streamon(&out) == 0, "producer STREAMON with its 320x240 buffer queued");
	int r = dqbuf_wait(&cap, &b, 3000);
	enum frame_kind k = r ? FRAME_BAD : check_frame(cap.mem[b.index], b.bytesused, &counter);

	CHECK(r == 0 && k == FRAME_NEUTRAL && b.bytesused == 640 * 480 * 2,
	      "the consumer gets a whole neutral repeat, not the short frame (%s, kind %d, %u bytes)",
	      r ? strerror(-r) : "ok", k, r ? 0 : b.bytesused);
	streamoff(&cap);
	streamoff(&out);
	stream_unmap(&cap);
	stream_unmap(&out);
	set_formats(outfd, NULL, 0);
	return failures ? 1 : 0;
}

/*
 * qbuf-copy: a backend frame queued while a capture buffer waits is copied
 * in the producer's QBUF. During that copy (made 200 ms long by inject bit
 * 3) the consumer stops streaming, or closes its handle, or the producer is
 * killed. Each returns at once after the copy, and the camera streams again
 * afterwards.
 */

/* The producer, in a child: QBUF of frame @frame when told, then report. */
static void qbuf_copy_producer(const char *outdev, uint32_t frame, int go[2], int done[2])
{
	struct stream out;
	uint32_t size;
	int fd = xopen(outdev, O_RDWR), r;
	char c;

	/* Only the parent writes to go and reads done: EOF on go means "exit". */
	close(go[1]);
	close(done[0]);

	if (set_out_fmt(fd, 640, 480, &size) < 0 ||
	    stream_setup(&out, fd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) < 0 || streamon(&out) < 0)
		_exit(3);
	fill_frame(out.mem[0], size, frame);
	if (write(done[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
		_exit(3);
	r = qbuf(&out, 0, size);
	c = r ? 'e' : 'q';
	if (write(done[1], &c, 1) != 1)
		_exit(3);
	/* Stay until told, so that the frame stays the held one. */
	if (read(go[0], &c, 1) < 0)
		_exit(3);
	_exit(0);
}

static int qbuf_copy_once(const char *capdev, const char *outdev, int how, uint32_t frame)
{
	static const char *const what[] = { "consumer STREAMOFF", "consumer close()",
					    "producer SIGKILL" };
	int go[2], done[2], capfd, status = 0;
	struct stream cap;
	struct v4l2_buffer b;
	uint32_t counter = 0;
	double t, ms;
	pid_t pid;
	char c = 0;

	/* The child first: it must not share the consumer's handle (close() below). */
	if (pipe(go) < 0 || pipe(done) < 0)
		return 1;
	pid = fork();
	if (pid == 0)
		qbuf_copy_producer(outdev, frame, go, done);
	CHECK(read(done[0], &c, 1) == 1 && c == 'r', "%s: producer streams", what[how]);
	capfd = xopen(capdev, O_RDWR | O_NONBLOCK);
	if (stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0)
		return 1;
	qbuf(&cap, 0, 0);
	qbuf(&cap, 1, 0);
	CHECK(streamon(&cap) == 0, "%s: consumer streams, two buffers wait", what[how]);
	set_inject(8);
	CHECK(write(go[1], "g", 1) == 1, "%s: producer QBUF (copied in its call, 200 ms)", what[how]);
	usleep(50000);
	t = now_ms();
	switch (how) {
	case 0:
		CHECK(streamoff(&cap) == 0, "consumer STREAMOFF during the copy");
		break;
	case 1:
		stream_unmap(&cap);
		CHECK(close(capfd) == 0, "consumer close() during the copy");
		capfd = -1;
		break;
	case 2:
		kill(pid, SIGKILL);
		CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status),
		      "producer killed during the copy");
		pid = -1;
		break;
	}
	ms = now_ms() - t;
	set_inject(0);
	CHECK(ms < 3000, "%s returned after %.0f ms", what[how], ms);
	if (pid > 0) {
		CHECK(read(done[0], &c, 1) == 1 && c == 'q', "the producer's QBUF succeeded (%c)", c);
		close(go[1]);
		waitpid(pid, &status, 0);
	} else {
		close(go[1]);
	}
	close(go[0]);
	close(done[0]);
	close(done[1]);
	if (capfd >= 0) {
		streamoff(&cap);
		stream_unmap(&cap);
		close(capfd);
	}

	/* The camera works on: a new consumer gets a new producer's frame. */
	capfd = xopen(capdev, O_RDWR | O_NONBLOCK);
	if (pipe(go) < 0 || pipe(done) < 0 ||
	    stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0)
		return 1;
	qbuf(&cap, 0, 0);
	qbuf(&cap, 1, 0);
	CHECK(streamon(&cap) == 0, "after %s: a new consumer streams", what[how]);
	pid = fork();
	if (pid == 0)
		qbuf_copy_producer(outdev, frame + 1, go, done);
	c = 0;
	CHECK(read(done[0], &c, 1) == 1 && c == 'r' && write(go[1], "g", 1) == 1 &&
	      read(done[0], &c, 1) == 1 && c == 'q', "after %s: a new producer queues frame %u",
	      what[how], frame + 1);
	int r = dqbuf_wait(&cap, &b, 3000);

	CHECK(r == 0 && check_frame(cap.mem[b.index], b.bytesused, &counter) == FRAME_REAL &&
	      counter == frame + 1, "after %s: the consumer gets frame %u (%s, counter %u)",
	      what[how], frame + 1, r ? strerror(-r) : "ok", counter);
	close(go[1]);
	waitpid(pid, &status, 0);
	close(go[0]);
	close(done[0]);
	close(done[1]);
	streamoff(&cap);
	stream_unmap(&cap);
	close(capfd);
	return failures ? 1 : 0;
}

static int race_qbuf_copy(const char *capdev, const char *outdev)
{
	int ret = 0;

	for (int how = 0; how < 3; how++)
		ret |= qbuf_copy_once(capdev, outdev, how, 100 * (how + 1));
	return ret;
}

/*
 * fanout: one frame, two capture nodes of a camera, each with two buffers
 * waiting. The producer's QBUF copies the frame to node 1, then node 2 (each
 * copy made 200 ms long by inject bit 3). During node 1's copy, node 2's
 * consumer stops (STREAMOFF, then on a second round close()): its stop
 * returns after the copy in flight at most, node 1 gets the frame, and node 2
 * gets the next one after it streams again.
 */
static int fanout_consumer(struct stream *cap, const char *capdev)
{
	int fd = xopen(capdev, O_RDWR | O_NONBLOCK);

	if (stream_setup(cap, fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0)
		return -1;
	qbuf(cap, 0, 0);
	qbuf(cap, 1, 0);
	return streamon(cap) == 0 ? fd : -1;
}

static int race_fanout(const char *cap1dev, const char *cap2dev, const char *outdev)
{
	static const char *const what[] = { "STREAMOFF", "close()" };

	for (int how = 0; how < 2; how++) {
		uint32_t frame = 500 + 10 * how, counter = 0;
		struct stream c1, c2;
		struct v4l2_buffer b;
		int go[2], done[2], fd1, fd2, status, r;
		double t, ms;
		pid_t pid;
		char c = 0;

		if (pipe(go) < 0 || pipe(done) < 0)
			return 1;
		pid = fork();
		if (pid == 0)
			qbuf_copy_producer(outdev, frame, go, done);
		CHECK(read(done[0], &c, 1) == 1 && c == 'r', "fanout %s: producer streams", what[how]);
		fd1 = fanout_consumer(&c1, cap1dev);
		fd2 = fanout_consumer(&c2, cap2dev);
		CHECK(fd1 >= 0 && fd2 >= 0, "fanout %s: both nodes stream, two buffers each",
		      what[how]);
		if (fd1 < 0 || fd2 < 0)
			return 1;
		set_inject(8);
		CHECK(write(go[1], "g", 1) == 1, "fanout %s: producer QBUF (two copies, 200 ms each)",
		      what[how]);
		usleep(50000);
		t = now_ms();
		if (how == 0) {
			CHECK(streamoff(&c2) == 0, "node 2's STREAMOFF during node 1's copy");
		} else {
			stream_unmap(&c2);
			CHECK(close(fd2) == 0, "node 2's close() during node 1's copy");
			fd2 = -1;
		}
		ms = now_ms() - t;
		CHECK(ms < 3000, "fanout %s: node 2's stop returned after %.0f ms", what[how], ms);
		CHECK(read(done[0], &c, 1) == 1 && c == 'q', "fanout %s: the producer's QBUF succeeded",
		      what[how]);
		set_inject(0);
		r = dqbuf_wait(&c1, &b, 3000);
		CHECK(r == 0 && check_frame(c1.mem[b.index], b.bytesused, &counter) == FRAME_REAL &&
		      counter == frame, "fanout %s: node 1 got frame %u (%s, counter %u)", what[how],
		      frame, r ? strerror(-r) : "ok", counter);
		close(go[1]);
		waitpid(pid, &status, 0);
		close(go[0]);
		close(done[0]);
		close(done[1]);

		/* Node 2 streams again; the next frame reaches both nodes. */
		if (fd2 < 0)
			fd2 = fanout_consumer(&c2, cap2dev);
		else if (stream_unmap(&c2), stream_setup(&c2, fd2, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) == 0) {
			qbuf(&c2, 0, 0);
			qbuf(&c2, 1, 0);
			if (streamon(&c2) < 0)
				fd2 = -1;
		}
		qbuf(&c1, b.index, 0);
		CHECK(fd2 >= 0, "fanout %s: node 2 streams again", what[how]);
		if (pipe(go) < 0 || pipe(done) < 0)
			return 1;
		pid = fork();
		if (pid == 0)
			qbuf_copy_producer(outdev, frame + 1, go, done);
		c = 0;
		CHECK(read(done[0], &c, 1) == 1 && c == 'r' && write(go[1], "g", 1) == 1 &&
		      read(done[0], &c, 1) == 1 && c == 'q', "fanout %s: a new producer queues frame %u",
		      what[how], frame + 1);
		/*
		 * A slow guest may pass the camera's timeout between the two producers: repeats
		 * of frame @frame (node 1) or neutral frames (node 2, restarted after it) may come
		 * first, and are skipped.
		 */
		for (int k = 0; k < 2; k++) {
			struct stream *cs = k ? &c2 : &c1;
			enum frame_kind fk = FRAME_BAD;

			r = fd2 >= 0 || !k ? 0 : -EBADF;
			for (int n = 0; !r && n < 20; n++) {
				counter = 0;
				r = dqbuf_wait(cs, &b, 3000);
				fk = r ? FRAME_BAD : check_frame(cs->mem[b.index], b.bytesused, &counter);
				if (r || (fk == FRAME_REAL && counter == frame + 1))
					break;
				if (fk == FRAME_BAD || (fk == FRAME_REAL && counter != frame))
					break;
				qbuf(cs, b.index, 0);
			}
			CHECK(r == 0 && fk == FRAME_REAL && counter == frame + 1,
			      "fanout %s: node %d got frame %u (%s, counter %u)", what[how], k + 1,
			      frame + 1, r ? strerror(-r) : "ok", counter);
		}
		close(go[1]);
		waitpid(pid, &status, 0);
		close(go[0]);
		close(done[0]);
		close(done[1]);
		streamoff(&c1);
		stream_unmap(&c1);
		close(fd1);
		if (fd2 >= 0) {
			streamoff(&c2);
			stream_unmap(&c2);
			close(fd2);
		}
	}
	return failures ? 1 : 0;
}

/*
 * qbuf-done: a consumer's QBUF never returns its buffer as DONE. The newest
 * frame arrives while the consumer has no buffer queued, so the bridge owes it
 * that frame; the consumer's next QBUF must return the buffer as QUEUED (the
 * frame is copied into it afterwards), even with the end of the queueing made
 * 200 ms long (inject bit 5), and the next DQBUF brings that frame.
 */
static int race_qbuf_done(int capfd, int outfd)
{
	struct stream cap, out;
	struct v4l2_buffer b, q;
	uint32_t size, counter = 0;
	int r;

	if (set_out_fmt(outfd, 640, 480, &size) < 0 ||
	    stream_setup(&out, outfd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) < 0 || streamon(&out) < 0 ||
	    stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0) {
		fail("qbuf-done: setup: %s", strerror(errno));
		return 1;
	}
	qbuf(&cap, 0, 0);
	qbuf(&cap, 1, 0);
	CHECK(streamon(&cap) == 0, "qbuf-done: consumer streams with two buffers");
	/* Frames 1 and 2 fill both capture buffers; frame 3 is owed. */
	for (uint32_t n = 1; n <= 3; n++) {
		unsigned int i = n - 1;

		if (n == 3) {
			r = dqbuf_wait(&out, &b, 3000);
			CHECK(r == 0, "qbuf-done: frame 1's backend buffer came back (%s)",
			      r ? strerror(-r) : "ok");
			i = b.index;
		}
		fill_frame(out.mem[i], size, n);
		CHECK(qbuf(&out, i, size) == 0, "qbuf-done: producer queues frame %u", n);
	}
	usleep(100000);
	r = dqbuf_wait(&cap, &b, 3000);
	CHECK(r == 0 && check_frame(cap.mem[b.index], b.bytesused, &counter) == FRAME_REAL &&
	      counter == 1, "qbuf-done: the consumer dequeues frame 1 (counter %u)", counter);
	set_inject(32);
	q = (struct v4l2_buffer){ .index = b.index, .type = cap.type, .memory = cap.memory };
	r = xioctl(capfd, VIDIOC_QBUF, &q) < 0 ? -errno : 0;
	set_inject(0);
	CHECK(r == 0 && !(q.flags & V4L2_BUF_FLAG_DONE),
	      "qbuf-done: QBUF of the buffer returns it queued, not DONE (flags 0x%x)", q.flags);
	/* Frame 2, then the owed frame 3. */
	r = dqbuf_wait(&cap, &b, 3000);
	CHECK(r == 0 && check_frame(cap.mem[b.index], b.bytesused, &counter) == FRAME_REAL &&
	      counter == 2, "qbuf-done: then frame 2 (counter %u)", counter);
	r = dqbuf_wait(&cap, &b, 3000);
	CHECK(r == 0 && check_frame(cap.mem[b.index], b.bytesused, &counter) == FRAME_REAL &&
	      counter == 3, "qbuf-done: then the owed frame 3 (counter %u)", counter);
	streamoff(&cap);
	streamoff(&out);
	stream_unmap(&cap);
	stream_unmap(&out);
	return failures ? 1 : 0;
}

struct consumer_ops {
	int capfd, ctl;
	uint32_t id;
	struct stream *cap;	/* STREAMOFF it too, when set */
	volatile int done;
	double ms;
	int err;
};

/* What consumers and the control node do while a producer's write() waits. */
static void *consumer_ops_main(void *arg)
{
	struct consumer_ops *o = arg;
	struct v4l2_capability caps;
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct viacam_camera c = { .id = o->id };
	double t = now_ms();

	if (xioctl(o->capfd, VIDIOC_QUERYCAP, &caps) < 0 ||
	    xioctl(o->capfd, VIDIOC_G_FMT, &f) < 0 ||
	    (o->cap && streamoff(o->cap) < 0) ||
	    xioctl(o->ctl, VIACAM_IOC_QUERY, &c) < 0)
		o->err = errno;
	o->ms = now_ms() - t;
	o->done = 1;
	return NULL;
}

/*
 * Anonymous memory for @size bytes whose pages nobody has supplied yet, registered with a new
 * userfaultfd: the first access to it waits until the caller answers the fault. Returns the
 * userfaultfd (and *@mem, *@maplen), or -1 after a failed check.
 */
static int uffd_buffer(size_t size, void **mem, size_t *maplen)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	long pg = sysconf(_SC_PAGESIZE);
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);

	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0) {
		fail("userfaultfd: %s", strerror(errno));
		return -1;
	}
	*maplen = (size + pg - 1) / pg * pg;
	*mem = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*mem == MAP_FAILED)
		return -1;
	reg.range.start = (uintptr_t)*mem;
	reg.range.len = *maplen;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0) {
		fail("UFFDIO_REGISTER: %s", strerror(errno));
		return -1;
	}
	return uffd;
}

/* A write() of a frame from memory a userfaultfd handler (this program) does not supply yet. */
struct uffd_write {
	struct write_job w;
	pthread_t th;
	void *mem;
	size_t maplen;
	int uffd;
};

/*
 * Start the write() of @size bytes on @outfd in a thread and wait (up to 5 s) until it
 * faults on a page of its memory: 1 when it does, 0 when it does not, -1 if the memory
 * could not be set up.
 */
static int uffd_write_start(struct uffd_write *u, int outfd, uint32_t size)
{
	struct pollfd p;
	struct uffd_msg msg;

	u->uffd = uffd_buffer(size, &u->mem, &u->maplen);
	if (u->uffd < 0)
		return -1;
	u->w = (struct write_job){ .fd = outfd, .buf = u->mem, .len = size };
	pthread_create(&u->th, NULL, write_main, &u->w);
	p = (struct pollfd){ .fd = u->uffd, .events = POLLIN };
	return poll(&p, 1, 5000) == 1 && read(u->uffd, &msg, sizeof(msg)) == sizeof(msg) &&
	       msg.event == UFFD_EVENT_PAGEFAULT;
}

/* Supply the pages (zeros): the write() goes on; wait for it, then let the memory go. */
static void uffd_write_finish(struct uffd_write *u)
{
	struct uffdio_zeropage zp = { .mode = 0 };

	zp.range.start = (uintptr_t)u->mem;
	zp.range.len = u->maplen;
	if (ioctl(u->uffd, UFFDIO_ZEROPAGE, &zp) < 0)
		fail("UFFDIO_ZEROPAGE: %s", strerror(errno));
	pthread_join(u->th, NULL);
	close(u->uffd);
	munmap(u->mem, u->maplen);
}

/*
 * uffd: a producer write()s a frame from memory whose pages a userfaultfd
 * handler (this program) does not supply yet, so the kernel's copy from user
 * space waits for user space. Meanwhile the consumer's QUERYCAP, G_FMT and
 * STREAMOFF and the control node's QUERY must complete: no path of a
 * consumer waits for a producer's user space. Twice: a whole frame while a
 * capture buffer waits (the direct copy), and one while none does (vb2's
 * write() emulation).
 */
static int race_uffd_one(int capfd, int outfd, int ctl, uint32_t id, bool direct)
{
	struct consumer_ops o = { .capfd = capfd, .ctl = ctl, .id = id };
	struct uffd_write u;
	struct stream cap;
	pthread_t ot;
	uint32_t size;
	int r;
	const char *how = direct ? "a capture buffer waits" : "no capture buffer waits";

	CHECK(set_out_fmt(outfd, 640, 480, &size) == 0, "producer S_FMT 640x480");
	if (direct) {
		if (stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0)
			return 1;
		qbuf(&cap, 0, 0);
		qbuf(&cap, 1, 0);
		CHECK(streamon(&cap) == 0, "consumer streams, two buffers wait");
		o.cap = &cap;
	}
	r = uffd_write_start(&u, outfd, size);
	if (r < 0)
		return 1;
	CHECK(r == 1, "%s: the producer's write() waits for a page of its buffer", how);
	pthread_create(&ot, NULL, consumer_ops_main, &o);
	for (int i = 0; i < 300 && !o.done; i++)
		usleep(10000);
	CHECK(o.done && !o.err,
	      "%s: consumer QUERYCAP, G_FMT%s and the control node's QUERY complete meanwhile (%s)",
	      how, direct ? ", STREAMOFF" : "",
	      !o.done ? "still blocked after 3 s" : o.err ? strerror(o.err) : "ok");
	/* Now supply the pages: everything that waited goes on. */
	uffd_write_finish(&u);
	pthread_join(ot, NULL);
	CHECK(u.w.ret == (ssize_t)size, "%s: the write() takes the frame once the pages come (%zd, %s)",
	      how, u.w.ret, u.w.ret < 0 ? strerror(u.w.err) : "ok");
	if (direct)
		stream_unmap(&cap);
	return failures ? 1 : 0;
}

/*
 * stale-lend: a write()'s copy into a capture buffer (the bridge lends it to
 * the write) waits for user space (userfaultfd) while the consumer stops,
 * queues its buffers again and streams on. The stop does not wait for the
 * write(); but the buffer the write() is still filling must not be filled
 * again or given to the consumer until the write() is done with it: no frame
 * the consumer holds may change under it when the copy goes on.
 */
static int race_stale_lend(int capfd, int outfd)
{
	uint8_t *snap[2] = { NULL, NULL }, *frame;
	struct uffd_write u;
	struct stream cap;
	struct v4l2_buffer b;
	uint32_t size, counter = 0;
	int got = 0, changed = 0, r;
	double t;

	CHECK(set_out_fmt(outfd, 640, 480, &size) == 0, "producer S_FMT 640x480");
	if (stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0 || cap.count != 2)
		return 1;
	CHECK(qbuf(&cap, 0, 0) == 0 && qbuf(&cap, 1, 0) == 0 && streamon(&cap) == 0,
	      "consumer streams, two buffers wait");
	frame = malloc(size);
	if (!frame)
		return 1;
	/* A first frame, so that the repeats show frame 5. */
	fill_frame(frame, size, 5);
	CHECK(write(outfd, frame, size) == (ssize_t)size, "write() of frame 5");
	r = dqbuf_wait(&cap, &b, 3000);
	CHECK(r == 0 && check_frame(cap.mem[b.index], b.bytesused, &counter) == FRAME_REAL &&
	      counter == 5, "the consumer gets frame 5");
	if (!r)
		qbuf(&cap, b.index, 0);

	r = uffd_write_start(&u, outfd, size);
	if (r < 0)
		return 1;
	CHECK(r == 1, "the write() of the next frame waits for a page of its memory");
	t = now_ms();
	CHECK(streamoff(&cap) == 0, "consumer STREAMOFF while the write() waits (%.0f ms)",
	      now_ms() - t);
	CHECK(qbuf(&cap, 0, 0) == 0 && qbuf(&cap, 1, 0) == 0 && streamon(&cap) == 0,
	      "consumer queues both buffers again and streams on");
	/* The bridge repeats frame 5 after its timeout: keep every buffer that comes. */
	for (t = now_ms(); now_ms() - t < 2000 && got < 2;) {
		if (dqbuf_wait(&cap, &b, 200) || b.index >= 2 || snap[b.index])
			continue;
		snap[b.index] = malloc(size);
		if (!snap[b.index])
			return 1;
		memcpy(snap[b.index], cap.mem[b.index], size);
		got++;
	}
	CHECK(got >= 1, "repeats come while the write() waits (%d buffers)", got);
	/* Let the write() go on: it copies zeros. */
	uffd_write_finish(&u);
	CHECK(u.w.ret == (ssize_t)size, "the write() takes its frame once the pages come (%zd, %s)",
	      u.w.ret, u.w.ret < 0 ? strerror(u.w.err) : "ok");
	for (int i = 0; i < 2; i++)
		if (snap[i] && memcmp(snap[i], cap.mem[i], size))
			changed++;
	CHECK(!changed, "no buffer the consumer holds changed when the write()'s copy went on "
	      "(%d of %d changed)", changed, got);
	/* The camera works on: both buffers go round again, and a new frame comes. */
	for (int i = 0; i < 2; i++)
		if (snap[i])
			qbuf(&cap, i, 0);
	fill_frame(frame, size, 6);
	CHECK(write(outfd, frame, size) == (ssize_t)size, "write() of frame 6");
	counter = 0;
	for (t = now_ms(); now_ms() - t < 3000 && counter != 6;) {
		if (dqbuf_wait(&cap, &b, 200))
			continue;
		check_frame(cap.mem[b.index], b.bytesused, &counter);
		qbuf(&cap, b.index, 0);
	}
	CHECK(counter == 6, "the consumer gets frame 6 (last counter %u)", counter);
	streamoff(&cap);
	stream_unmap(&cap);
	free(snap[0]);
	free(snap[1]);
	free(frame);
	return failures ? 1 : 0;
}

/* The producer and the control node while a consumer's read() waits (race_uffd_read). */
struct producer_ops {
	int ctl, capfd;
	uint32_t id;
	struct stream *out;
	uint32_t size;
	volatile int done;
	int err;
};

static void *producer_ops_main(void *arg)
{
	struct producer_ops *o = arg;
	struct viacam_camera c = { .id = o->id };
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	fill_frame(o->out->mem[1], o->size, 2);
	if (xioctl(o->ctl, VIACAM_IOC_QUERY, &c) < 0 || xioctl(o->capfd, VIDIOC_G_FMT, &f) < 0 ||
	    qbuf(o->out, 1, o->size) < 0)
		o->err = errno;
	o->done = 1;
	return NULL;
}

/*
 * uffd-read: the consumer side of uffd. A consumer read()s a frame into memory whose pages a
 * userfaultfd handler (this program) does not supply yet, so vb2's copy to user space waits
 * for user space. Meanwhile the producer's QBUF, the control node's QUERY and G_FMT on the
 * capture node must complete: nothing of the camera waits for a consumer's user space (the
 * capture queue's lock is its own, not the camera's).
 */
static int race_uffd_read(const char *capdev, const char *outdev, uint32_t id)
{
	struct write_job r = { 0 };
	struct producer_ops o = { .id = id };
	struct uffdio_zeropage zp = { .mode = 0 };
	struct uffd_msg msg;
	struct stream out;
	struct pollfd p;
	pthread_t rt, ot;
	uint32_t size;
	size_t maplen;
	void *mem;
	int uffd, outfd;

	o.ctl = xopen("/dev/viacam", O_RDWR);
	outfd = xopen(outdev, O_RDWR);
	o.capfd = xopen(capdev, O_RDWR);	/* blocking: read() waits for the frame */
	if (set_out_fmt(outfd, 640, 480, &size) < 0 ||
	    stream_setup(&out, outfd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) < 0) {
		fail("producer setup: %s", strerror(errno));
		return 1;
	}
	o.out = &out;
	o.size = size;
	uffd = uffd_buffer(size, &mem, &maplen);
	if (uffd < 0)
		return 1;
	/* read() into the missing pages: vb2 starts streaming and waits for a frame */
	r.fd = o.capfd;
	r.buf = mem;
	r.len = size;
	pthread_create(&rt, NULL, read_main, &r);
	usleep(200000);
	fill_frame(out.mem[0], size, 1);
	CHECK(qbuf(&out, 0, size) == 0 && streamon(&out) == 0, "the producer queues a frame");
	p = (struct pollfd){ .fd = uffd, .events = POLLIN };
	CHECK(poll(&p, 1, 5000) == 1 && read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
	      msg.event == UFFD_EVENT_PAGEFAULT,
	      "the consumer's read() copies the frame and waits for a page of its buffer");
	pthread_create(&ot, NULL, producer_ops_main, &o);
	for (int i = 0; i < 300 && !o.done; i++)
		usleep(10000);
	CHECK(o.done && !o.err,
	      "meanwhile the control node's QUERY, the capture node's G_FMT and the producer's QBUF complete (%s)",
	      !o.done ? "still blocked after 3 s" : o.err ? strerror(o.err) : "ok");
	zp.range.start = (uintptr_t)mem;
	zp.range.len = maplen;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp) < 0)
		fail("UFFDIO_ZEROPAGE: %s", strerror(errno));
	pthread_join(rt, NULL);
	pthread_join(ot, NULL);
	CHECK(r.ret == (ssize_t)size, "the read() returns the frame once the pages come (%zd, %s)",
	      r.ret, r.ret < 0 ? strerror(r.err) : "ok");
	close(uffd);
	close(o.capfd);
	streamoff(&out);
	stream_unmap(&out);
	close(outfd);
	close(o.ctl);
	munmap(mem, maplen);
	return failures ? 1 : 0;
}

struct ioctl_job {
	int fd;
	unsigned long req;
	void *arg;
	int ret, err;
};

static void *ioctl_main(void *arg)
{
	struct ioctl_job *j = arg;

	j->ret = ioctl(j->fd, j->req, j->arg);
	j->err = errno;
	return NULL;
}

/*
 * One declaration (VIACAM_IOC_S_FORMATS or _S_CTRLS, @req) whose array lies in pages a
 * userfaultfd handler does not supply yet: while the kernel's copy of it waits, the
 * consumer's QUERYCAP and G_FMT and the control node's QUERY must complete. Then
 * the pages come with @len bytes of @content and the declaration must succeed.
 */
static void uffd_declare_one(int outfd, int capfd, int ctl, uint32_t id, const char *what,
			     unsigned long req, void *arg, __u64 *arrayp, const void *content,
			     size_t len)
{
	struct consumer_ops o = { .ctl = ctl, .capfd = capfd, .id = id };
	struct ioctl_job j = { .fd = outfd, .req = req, .arg = arg };
	struct uffdio_copy cp = { .mode = 0 };
	long pg = sysconf(_SC_PAGESIZE);
	struct uffd_msg msg;
	struct pollfd p;
	pthread_t jt, ot;
	size_t maplen;
	void *mem, *src;
	int uffd = uffd_buffer(len, &mem, &maplen);

	if (uffd < 0)
		return;
	*arrayp = (uintptr_t)mem;
	pthread_create(&jt, NULL, ioctl_main, &j);
	p = (struct pollfd){ .fd = uffd, .events = POLLIN };
	CHECK(poll(&p, 1, 5000) == 1 && read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
	      msg.event == UFFD_EVENT_PAGEFAULT,
	      "%s: the kernel's copy of the array waits for a page", what);
	pthread_create(&ot, NULL, consumer_ops_main, &o);
	for (int i = 0; i < 300 && !o.done; i++)
		usleep(10000);
	CHECK(o.done && !o.err,
	      "%s: meanwhile the capture node's QUERYCAP and G_FMT and the control node's QUERY complete (%s)",
	      what, !o.done ? "still blocked after 3 s" : o.err ? strerror(o.err) : "ok");
	src = aligned_alloc((size_t)pg, maplen);
	memset(src, 0, maplen);
	memcpy(src, content, len);
	cp.dst = (uintptr_t)mem;
	cp.src = (uintptr_t)src;
	cp.len = maplen;
	if (ioctl(uffd, UFFDIO_COPY, &cp) < 0)
		fail("UFFDIO_COPY: %s", strerror(errno));
	pthread_join(jt, NULL);
	pthread_join(ot, NULL);
	CHECK(j.ret == 0, "%s: the declaration succeeds once the pages come (%s)", what,
	      j.ret ? strerror(j.err) : "ok");
	free(src);
	close(uffd);
	munmap(mem, maplen);
}

static int race_uffd_declare(const char *capdev, const char *outdev, uint32_t id)
{
	struct viacam_format fmts[2] = {
		{ .pixelformat = V4L2_PIX_FMT_YUYV, .width = 640, .height = 480,
		  .interval_num = 1, .interval_den = 30 },
		{ .pixelformat = V4L2_PIX_FMT_YUYV, .width = 320, .height = 240,
		  .interval_num = 1, .interval_den = 30 },
	};
	struct viacam_ctrl ctrl = { .id = V4L2_CID_BRIGHTNESS, .type = V4L2_CTRL_TYPE_INTEGER,
				    .minimum = 0, .maximum = 255, .step = 1,
				    .default_value = 128 };
	struct viacam_formats fa = { .count = 2 };
	struct viacam_ctrls ca = { .count = 1 };
	struct v4l2_frmsizeenum fs = { .pixel_format = V4L2_PIX_FMT_YUYV };
	struct v4l2_queryctrl qc = { .id = V4L2_CID_BRIGHTNESS };
	int ctl = xopen("/dev/viacam", O_RDWR);
	int outfd = xopen(outdev, O_RDWR);
	int capfd = xopen(capdev, O_RDWR | O_NONBLOCK);
	int sizes = 0;

	strcpy(ctrl.name, "Brightness");
	uffd_declare_one(outfd, capfd, ctl, id, "S_FORMATS", VIACAM_IOC_S_FORMATS, &fa,
			 &fa.formats, fmts, sizeof(fmts));
	for (fs.index = 0; ioctl(capfd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0; fs.index++)
		sizes++;
	CHECK(sizes == 2, "S_FORMATS: the capture node offers the 2 declared sizes (%d)", sizes);
	/*
	 * S_CTRLS makes a new control set only while no capture handle is open: declare it
	 * first, then the same set with a new default while the consumer has the node open.
	 */
	close(capfd);
	ca.ctrls = (uintptr_t)&ctrl;
	CHECK(ioctl(outfd, VIACAM_IOC_S_CTRLS, &ca) == 0, "S_CTRLS: brightness declared");
	capfd = xopen(capdev, O_RDWR | O_NONBLOCK);
	ctrl.default_value = 100;
	uffd_declare_one(outfd, capfd, ctl, id, "S_CTRLS", VIACAM_IOC_S_CTRLS, &ca, &ca.ctrls,
			 &ctrl, sizeof(ctrl));
	CHECK(ioctl(capfd, VIDIOC_QUERYCTRL, &qc) == 0 && qc.default_value == 100,
	      "S_CTRLS: the capture node has the new default (%d)", qc.default_value);
	close(capfd);
	close(outfd);
	close(ctl);
	return failures ? 1 : 0;
}

static void *streamoff_main(void *arg)
{
	streamoff(arg);
	return NULL;
}

struct ctl_job {
	int ctl;
	unsigned long req;
	uint32_t id;
	volatile int done;
	int ret, err;
	double ms;
};

static void *ctl_main(void *arg)
{
	struct ctl_job *j = arg;
	struct viacam_camera c = { .id = j->id };
	struct viacam_list l;
	double t = now_ms();

	j->ret = ioctl(j->ctl, j->req, j->req == VIACAM_IOC_LIST ? (void *)&l : (void *)&c);
	j->err = errno;
	j->ms = now_ms() - t;
	j->done = 1;
	return NULL;
}

/*
 * slow-stop: a consumer's STREAMOFF holds its camera's lock for 2 s (the module's inject bit
 * 4, standing in for any slow stop). Meanwhile a QUERY and a REMOVE of that camera wait, as
 * they must; but the control node's LIST, and a QUERY of another camera, must not wait with
 * them (they did: QUERY, then REMOVE, waited for the camera's lock while they held the
 * control node's lock). The camera is gone afterwards.
 */
static int race_slow_stop(const char *capdev, const char *outdev, uint32_t id)
{
	struct viacam_camera other = { .id = VIACAM_ID_AUTO, .capture_nr = VIACAM_NR_AUTO,
				       .backend_nr = VIACAM_NR_AUTO };
	struct ctl_job qa = { .req = VIACAM_IOC_QUERY, .id = id };
	struct ctl_job ra = { .req = VIACAM_IOC_REMOVE, .id = id };
	struct ctl_job list = { .req = VIACAM_IOC_LIST };
	struct ctl_job qb = { .req = VIACAM_IOC_QUERY };
	int ctl = xopen("/dev/viacam", O_RDWR);
	int outfd = xopen(outdev, O_RDWR);
	int capfd = xopen(capdev, O_RDWR | O_NONBLOCK);
	struct stream cap, out;
	pthread_t ta, tr, tl, tb, ts;
	uint32_t size;
	double t;

	strcpy(other.label, "slow-stop other");
	if (xioctl(ctl, VIACAM_IOC_ADD, &other) < 0) {
		fail("ADD: %s", strerror(errno));
		return 1;
	}
	qa.ctl = ra.ctl = list.ctl = qb.ctl = ctl;
	qb.id = other.id;
	if (set_out_fmt(outfd, 640, 480, &size) < 0 ||
	    stream_setup(&out, outfd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) < 0 ||
	    stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0) {
		fail("setup: %s", strerror(errno));
		return 1;
	}
	fill_frame(out.mem[0], size, 1);
	CHECK(qbuf(&out, 0, size) == 0 && streamon(&out) == 0 && qbuf(&cap, 0, 0) == 0 &&
	      streamon(&cap) == 0, "producer and consumer stream");
	set_inject(16);
	t = now_ms();
	pthread_create(&ts, NULL, streamoff_main, &cap);
	usleep(200000);
	pthread_create(&ta, NULL, ctl_main, &qa);	/* waits for the stop */
	usleep(100000);
	pthread_create(&tr, NULL, ctl_main, &ra);	/* so does this */
	usleep(200000);
	pthread_create(&tl, NULL, ctl_main, &list);
	pthread_create(&tb, NULL, ctl_main, &qb);
	pthread_join(tl, NULL);
	pthread_join(tb, NULL);
	pthread_join(ts, NULL);
	pthread_join(ta, NULL);
	pthread_join(tr, NULL);
	set_inject(0);
	CHECK(now_ms() - t >= 1500, "the consumer's STREAMOFF held its camera for 2 s (%.0f ms)",
	      now_ms() - t);
	CHECK(list.ret == 0 && list.ms < 500,
	      "meanwhile the control node's LIST answers at once (%.0f ms)", list.ms);
	CHECK(qb.ret == 0 && qb.ms < 500,
	      "...and so does a QUERY of another camera (%.0f ms)", qb.ms);
	CHECK(qa.ret == 0 || (qa.ret < 0 && qa.err == ENOENT),
	      "the QUERY of the stopping camera completes after the stop (%.0f ms, %s)", qa.ms,
	      qa.ret ? strerror(qa.err) : "ok");
	CHECK(ra.ret == 0, "...and so does its REMOVE (%.0f ms, %s)", ra.ms,
	      ra.ret ? strerror(ra.err) : "ok");
	{
		struct viacam_camera q = { .id = id };

		CHECK(ioctl(ctl, VIACAM_IOC_QUERY, &q) < 0 && errno == ENOENT,
		      "the camera is gone afterwards");
	}
	streamoff(&out);
	stream_unmap(&out);
	stream_unmap(&cap);
	close(capfd);
	close(outfd);
	if (xioctl(ctl, VIACAM_IOC_REMOVE, &other) < 0)
		fail("REMOVE: %s", strerror(errno));
	close(ctl);
	return failures ? 1 : 0;
}

static int cmd_race(int argc, char **argv)
{
	int capfd, outfd, ret;

	if (argc == 5 && !strcmp(argv[1], "uffd")) {
		int ctl = xopen("/dev/viacam", O_RDWR);
		uint32_t id = strtoul(argv[4], NULL, 0);

		ret = 0;
		for (int direct = 1; direct >= 0; direct--) {
			/* Fresh handles each time: a write() makes its fd the queue's owner. */
			capfd = xopen(argv[2], O_RDWR | O_NONBLOCK);
			outfd = xopen(argv[3], O_RDWR);
			ret |= race_uffd_one(capfd, outfd, ctl, id, direct);
			close(capfd);
			close(outfd);
		}
		close(ctl);
		return ret;
	}
	if (argc == 5 && !strcmp(argv[1], "uffd-read"))
		return race_uffd_read(argv[2], argv[3], strtoul(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "slow-stop"))
		return race_slow_stop(argv[2], argv[3], strtoul(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "uffd-declare"))
		return race_uffd_declare(argv[2], argv[3], strtoul(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "fanout"))
		return race_fanout(argv[2], argv[3], argv[4]);
	if (argc != 4)
		return 2;
	if (!strcmp(argv[1], "qbuf-copy"))
		return race_qbuf_copy(argv[2], argv[3]);
	capfd = xopen(argv[2], O_RDWR | O_NONBLOCK);
	outfd = xopen(argv[3], O_RDWR);
	if (!strcmp(argv[1], "held-stop"))
		ret = race_held_stop(capfd, outfd);
	else if (!strcmp(argv[1], "write-fault"))
		ret = race_write_fault(capfd, outfd);
	else if (!strcmp(argv[1], "small-src"))
		ret = race_small_src(capfd, outfd);
	else if (!strcmp(argv[1], "qbuf-done"))
		ret = race_qbuf_done(capfd, outfd);
	else if (!strcmp(argv[1], "stale-lend"))
		ret = race_stale_lend(capfd, outfd);
	else
		ret = 2;
	close(capfd);
	close(outfd);
	return ret;
}

/* ------------------------------------------------------------------------
 * repeats: what the bridge repeats after a direct write(), and what QUERY says
 */

static uint32_t cam_state(int ctl, uint32_t id)
{
	struct viacam_camera c = { .id = id };

	return xioctl(ctl, VIACAM_IOC_QUERY, &c) < 0 ? 0xffffffff : c.state;
}

/*
 * Frames that come in @ms; each must be frame @want. With @hold the consumer
 * acts as a video sink does: it keeps the newest buffer and gives back the
 * one before. Returns how many came; *bad counts the wrong ones.
 */
static int repeats_of(struct stream *s, uint32_t want, int ms, bool hold, int *prev, int *bad)
{
	double end = now_ms() + ms;
	struct v4l2_buffer b;
	uint32_t counter;
	int n = 0;

	for (double left; (left = end - now_ms()) > 0;) {
		if (dqbuf_wait(s, &b, (int)left + 1) < 0)
			continue;
		n++;
		if (check_frame(s->mem[b.index], b.bytesused, &counter) != FRAME_REAL ||
		    counter != want)
			(*bad)++;
		if (!hold) {
			qbuf(s, b.index, 0);
			continue;
		}
		if (*prev >= 0)
			qbuf(s, *prev, 0);
		*prev = b.index;
	}
	return n;
}

/*
 * A write()n frame goes straight into a capture buffer (MMAP), or through
 * vb2's write() emulation and the held frame (USERPTR). When the producer
 * then stalls (camera timeout 500 ms), the bridge repeats that frame, and
 * only that frame: not an older or neutral one while the consumer holds the
 * buffer (it waits for it), nor later while a sink-like consumer always
 * holds the newest buffer. QUERY stops saying BACKEND_STREAMING when the
 * consumer stops streaming (MMAP) and when the writer closes its handle.
 */
static int cmd_repeats(int argc, char **argv)
{
	struct stream cap;
	struct v4l2_buffer b;
	uint32_t size, counter = 0, st;
	int capfd, outfd, ctl, prev = -1, bad = 0, n, kept;
	bool userptr;
	uint32_t id;
	uint8_t *frame;

	if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "userptr")))
		return 2;
	userptr = argc == 5;
	capfd = xopen(argv[1], O_RDWR | O_NONBLOCK);
	outfd = xopen(argv[2], O_RDWR);
	ctl = xopen("/dev/viacam", O_RDWR);
	id = strtoul(argv[3], NULL, 0);
	CHECK(set_out_fmt(outfd, 320, 240, &size) == 0, "producer S_FMT 320x240");
	frame = malloc(size);
	if (!frame || (userptr ? stream_setup_userptr(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 4, size) :
		       stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 4)) < 0)
		return 1;
	for (unsigned int i = 0; i < cap.count; i++)
		qbuf(&cap, i, 0);
	CHECK(streamon(&cap) == 0, "consumer streams, %u %s buffers wait", cap.count,
	      userptr ? "USERPTR" : "MMAP");
	fill_frame(frame, size, 4242);
	CHECK(write(outfd, frame, size) == (ssize_t)size, "producer write()s frame 4242");
	CHECK(dqbuf_wait(&cap, &b, 3000) == 0 &&
	      check_frame(cap.mem[b.index], b.bytesused, &counter) == FRAME_REAL && counter == 4242,
	      "consumer gets frame 4242 (counter %u)", counter);
	kept = b.index;
	st = cam_state(ctl, id);
	CHECK(st != 0xffffffff && (st & VIACAM_STATE_BACKEND_STREAMING),
	      "QUERY: the writer counts as a streaming backend (state %#x)", st);

	/* The consumer keeps that buffer past the timeout. */
	n = repeats_of(&cap, 4242, 1500, false, &prev, &bad);
	CHECK(bad == 0, "while the consumer holds the newest frame's buffer, no other frame "
	      "is repeated (%d of %d wrong)", bad, n);
	qbuf(&cap, kept, 0);
	bad = 0;
	n = repeats_of(&cap, 4242, 2500, true, &prev, &bad);
	CHECK(n >= 5 && bad == 0, "once it is back, frame 4242 is repeated, also while the "
	      "consumer always holds the newest buffer (%d repeats, %d wrong)", n, bad);
	st = cam_state(ctl, id);
	CHECK(st & VIACAM_STATE_REPEATING, "QUERY says REPEATING (state %#x)", st);
	if (prev >= 0)
		qbuf(&cap, prev, 0);

	/* A new frame, then the consumer stops before the timeout. */
	fill_frame(frame, size, 4243);
	CHECK(write(outfd, frame, size) == (ssize_t)size, "producer write()s frame 4243");
	st = cam_state(ctl, id);
	CHECK(st & VIACAM_STATE_BACKEND_STREAMING, "QUERY: streaming backend again (state %#x)", st);
	CHECK(streamoff(&cap) == 0, "consumer STREAMOFF");
	/*
	 * Into USERPTR buffers a frame goes by vb2's write() emulation (the
	 * bridge cannot keep the consumer's memory while it waits for the
	 * writer), whose queue streams until the writer closes.
	 */
	st = cam_state(ctl, id);
	CHECK(userptr || !(st & VIACAM_STATE_BACKEND_STREAMING),
	      "QUERY: no streaming backend once no consumer streams (state %#x)", st);

	/* Again, and this time the writer closes its handle. */
	for (unsigned int i = 0; i < cap.count; i++)
		qbuf(&cap, i, 0);
	CHECK(streamon(&cap) == 0, "consumer streams again");
	fill_frame(frame, size, 4244);
	CHECK(write(outfd, frame, size) == (ssize_t)size, "producer write()s frame 4244");
	st = cam_state(ctl, id);
	CHECK(st & VIACAM_STATE_BACKEND_STREAMING, "QUERY: streaming backend (state %#x)", st);
	close(outfd);
	st = cam_state(ctl, id);
	CHECK(!(st & VIACAM_STATE_BACKEND_STREAMING),
	      "QUERY: no streaming backend once the writer closed its handle (state %#x)", st);
	streamoff(&cap);
	stream_unmap(&cap);
	free(frame);
	close(capfd);
	close(ctl);
	return failures ? 1 : 0;
}

/*
 * mjpeg-write: a producer write()s compressed frames of different lengths;
 * each write() is one frame, and the consumer gets it with its length
 * (vb2's write() emulation waited for a full buffer, and on 6.1 the v4l2
 * layer dropped its byte count: the frame was refused).
 */
static int cmd_mjpeg_write(int argc, char **argv)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2_format g = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct stream cap;
	struct v4l2_buffer b;
	uint8_t *frame;
	int capfd, outfd;

	if (argc != 3)
		return 2;
	capfd = xopen(argv[1], O_RDWR | O_NONBLOCK);
	outfd = xopen(argv[2], O_RDWR);
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_MJPEG;
	f.fmt.pix.width = 320;
	f.fmt.pix.height = 240;
	CHECK(xioctl(outfd, VIDIOC_S_FMT, &f) == 0 && f.fmt.pix.pixelformat == V4L2_PIX_FMT_MJPEG,
	      "producer S_FMT MJPEG 320x240 (sizeimage %u)", f.fmt.pix.sizeimage);
	CHECK(xioctl(capfd, VIDIOC_G_FMT, &g) == 0 && g.fmt.pix.pixelformat == V4L2_PIX_FMT_MJPEG,
	      "the capture node offers MJPEG");
	frame = malloc(f.fmt.pix.sizeimage);
	if (!frame || stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 4) < 0)
		return 1;
	for (unsigned int i = 0; i < cap.count; i++)
		qbuf(&cap, i, 0);
	CHECK(streamon(&cap) == 0, "consumer streams");
	for (uint32_t k = 0; k < 4; k++) {
		size_t len = 3000 + k * 1111;
		uint32_t counter = 0;
		ssize_t w;
		int r;

		fill_frame(frame, len, 7000 + k);
		w = write(outfd, frame, len);
		CHECK(w == (ssize_t)len, "write() of a %zu-byte frame: %zd (%s)", len, w,
		      w < 0 ? strerror(errno) : "ok");
		r = dqbuf_wait(&cap, &b, 3000);
		CHECK(r == 0 && b.bytesused == len &&
		      check_frame(cap.mem[b.index], b.bytesused, &counter) == FRAME_REAL &&
		      counter == 7000 + k,
		      "the consumer gets it whole: %s, %u bytes, frame %u",
		      r ? strerror(-r) : "a buffer", r ? 0 : b.bytesused, counter);
		if (!r)
			qbuf(&cap, b.index, 0);
	}
	streamoff(&cap);
	stream_unmap(&cap);
	free(frame);
	close(capfd);
	close(outfd);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * limits: what one consumer may make the kernel allocate
 */

static void set_param(const char *name, unsigned int val)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/viacam/parameters/%s", name);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%u\n", val) < 0 || fclose(f) != 0) {
		fprintf(stderr, "vctest: cannot set %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

static int create_bufs_type(int fd, uint32_t type, uint32_t count, uint32_t sizeimage,
			    uint32_t *got)
{
	struct v4l2_create_buffers cb = { .count = count, .memory = V4L2_MEMORY_MMAP };

	cb.format.type = type;
	if (xioctl(fd, VIDIOC_G_FMT, &cb.format) < 0)
		return -errno;
	cb.format.fmt.pix.sizeimage = sizeimage;
	if (xioctl(fd, VIDIOC_CREATE_BUFS, &cb) < 0)
		return -errno;
	*got = cb.count;
	return 0;
}

static int create_bufs(int fd, uint32_t count, uint32_t sizeimage, uint32_t *got)
{
	return create_bufs_type(fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, count, sizeimage, got);
}

/*
 * The backend queue's buffer count: REQBUFS gets at least two (the bridge holds one),
 * CREATE_BUFS exactly what it asks for (V4L2; v4l2-compliance 1.30 checks it), and STREAMON
 * refuses fewer than two with EINVAL.
 */
static void out_min_bufs(int outfd, uint32_t size)
{
	struct v4l2_requestbuffers rb = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					  .memory = V4L2_MEMORY_MMAP, .count = 1 };
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT, r;
	uint32_t got = 0;

	CHECK(xioctl(outfd, VIDIOC_REQBUFS, &rb) == 0 && rb.count >= 2,
	      "backend REQBUFS 1 gets %u buffers (at least 2)", rb.count);
	rb.count = 0;
	xioctl(outfd, VIDIOC_REQBUFS, &rb);
	r = create_bufs_type(outfd, type, 1, size, &got);
	CHECK(r == 0 && got == 1, "backend CREATE_BUFS 1 on an empty queue makes 1 (%s, %u)",
	      r ? strerror(-r) : "ok", got);
	r = xioctl(outfd, VIDIOC_STREAMON, &type) < 0 ? -errno : 0;
	CHECK(r == -EINVAL, "...and STREAMON with that one buffer is refused with EINVAL (%s)",
	      r ? strerror(-r) : "it streamed");
	if (!r)
		xioctl(outfd, VIDIOC_STREAMOFF, &type);
	r = create_bufs_type(outfd, type, 1, size, &got);
	CHECK(r == 0 && got == 1, "...a second CREATE_BUFS 1 makes 1 more (%s, %u)",
	      r ? strerror(-r) : "ok", got);
	r = xioctl(outfd, VIDIOC_STREAMON, &type) < 0 ? -errno : 0;
	CHECK(r == 0, "...and STREAMON with two works (%s)", r ? strerror(-r) : "ok");
	xioctl(outfd, VIDIOC_STREAMOFF, &type);
	rb.count = 0;
	xioctl(outfd, VIDIOC_REQBUFS, &rb);
}

/* Frames a streaming consumer gets in @ms (it drains and re-queues them). */
static int count_frames(struct stream *s, int ms)
{
	double end = now_ms() + ms;
	struct v4l2_buffer b;
	int n = 0;

	for (double left; (left = end - now_ms()) > 0;) {
		if (dqbuf_wait(s, &b, (int)left + 1) < 0)
			continue;
		n++;
		qbuf(s, b.index, 0);
	}
	return n;
}

/*
 * reparm: with no producer the bridge repeats frames at the stream's rate.
 * A consumer's S_PARM while it streams changes that rate at once (the
 * repeats kept the rate of STREAMON before).
 */
static int cmd_reparm(int argc, char **argv)
{
	const struct viacam_format decl[] = {
		{ V4L2_PIX_FMT_YUYV, 320, 240, 1, 30, 0, { 0, 0 } },
		{ V4L2_PIX_FMT_YUYV, 320, 240, 1, 4, 0, { 0, 0 } },
	};
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm sp = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct stream cap;
	int capfd, outfd, fast, slow;

	if (argc != 3)
		return 2;
	capfd = xopen(argv[1], O_RDWR | O_NONBLOCK);
	outfd = xopen(argv[2], O_RDWR);
	CHECK(set_formats(outfd, decl, 2) == 0, "backend declares YUYV 320x240 at 30 and 4 fps");
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.width = 320;
	f.fmt.pix.height = 240;
	CHECK(xioctl(capfd, VIDIOC_S_FMT, &f) == 0, "consumer S_FMT 320x240");
	sp.parm.capture.timeperframe = (struct v4l2_fract){ 1, 30 };
	CHECK(xioctl(capfd, VIDIOC_S_PARM, &sp) == 0 &&
	      sp.parm.capture.timeperframe.denominator == 30, "consumer S_PARM 30 fps");
	if (stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 4) < 0)
		return 1;
	for (unsigned int i = 0; i < cap.count; i++)
		qbuf(&cap, i, 0);
	CHECK(streamon(&cap) == 0, "consumer STREAMON (no producer: the bridge repeats)");
	count_frames(&cap, 1000);	/* past the repeat timeout */
	fast = count_frames(&cap, 2000);
	sp.parm.capture.timeperframe = (struct v4l2_fract){ 1, 4 };
	CHECK(xioctl(capfd, VIDIOC_S_PARM, &sp) == 0 &&
	      sp.parm.capture.timeperframe.denominator == 4, "consumer S_PARM 4 fps while streaming");
	count_frames(&cap, 500);
	slow = count_frames(&cap, 2000);
	/* 60 and 8 frames when the machine keeps up; TCG may lose some of the 60. */
	CHECK(fast >= 20, "repeats at 30 fps: %d frames in 2 s", fast);
	CHECK(slow >= 5 && slow <= 11, "repeats at 4 fps after S_PARM: %d frames in 2 s", slow);
	streamoff(&cap);
	stream_unmap(&cap);
	set_formats(outfd, NULL, 0);
	close(capfd);
	close(outfd);
	return failures ? 1 : 0;
}

static int cmd_limits(int argc, char **argv)
{
	struct v4l2_requestbuffers rb = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	uint32_t size, got = 0;
	int capfd, outfd, r;

	if (argc != 3)
		return 2;
	capfd = xopen(argv[1], O_RDWR);
	outfd = xopen(argv[2], O_RDWR);
	CHECK(set_out_fmt(outfd, 1920, 1080, &size) == 0, "producer S_FMT 1920x1080 (%u bytes)",
	      size);
	r = create_bufs(capfd, 1, 512u << 20, &got);
	CHECK(r == -EINVAL, "CREATE_BUFS of one 512 MiB buffer is refused with EINVAL (%s)",
	      r ? strerror(-r) : "it was allocated");
	rb.count = 0;
	xioctl(capfd, VIDIOC_REQBUFS, &rb);
	r = create_bufs(capfd, 1, 2 * size, &got);
	CHECK(r == 0 && got == 1, "CREATE_BUFS of twice the frame size works (%s)",
	      r ? strerror(-r) : "ok");
	rb.count = 0;
	xioctl(capfd, VIDIOC_REQBUFS, &rb);
	CHECK(set_out_fmt(outfd, 160, 120, &size) == 0, "producer S_FMT 160x120 (%u bytes)", size);
	r = create_bufs(capfd, 1, size + (1u << 20), &got);
	CHECK(r == 0 && got == 1, "CREATE_BUFS of the frame size and 1 MiB works (%s)",
	      r ? strerror(-r) : "ok");
	rb.count = 0;
	xioctl(capfd, VIDIOC_REQBUFS, &rb);
	out_min_bufs(outfd, size);
	CHECK(set_out_fmt(outfd, 1920, 1080, &size) == 0, "producer S_FMT 1920x1080 (%u bytes)",
	      size);

	set_param("max_queue_mb", 64);
	rb.count = 32;
	r = xioctl(capfd, VIDIOC_REQBUFS, &rb) < 0 ? -errno : 0;
	CHECK(r == 0 && rb.count >= 2 && rb.count <= (64u << 20) / size,
	      "with max_queue_mb=64, REQBUFS 32 of 1080p gets %u buffers (%s)", rb.count,
	      r ? strerror(-r) : "ok");
	r = create_bufs(capfd, 32, size, &got);
	CHECK(r == -ENOMEM || (r == 0 && got == 0),
	      "...and CREATE_BUFS beyond the cap gets none (%s, %u)", r ? strerror(-r) : "ok", got);
	rb.count = 0;
	xioctl(capfd, VIDIOC_REQBUFS, &rb);
	set_param("max_queue_mb", 1024);
	rb.count = 32;
	CHECK(xioctl(capfd, VIDIOC_REQBUFS, &rb) == 0 && rb.count == 32,
	      "with the default cap, 32 buffers of 1080p (%u)", rb.count);
	rb.count = 0;
	xioctl(capfd, VIDIOC_REQBUFS, &rb);
	close(capfd);
	close(outfd);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * lend: the zero-copy hand-off (VIACAM_IOC_LEND, _DELIVER, _UNLEND)
 */

/* The camera's kernel copy counter, from the capture node's sysfs viacam_stats. */
static long long cam_copies(const char *capdev)
{
	char path[256], line[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/video4linux/%s/viacam_stats",
		 strrchr(capdev, '/') ? strrchr(capdev, '/') + 1 : capdev);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "copies %lld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

struct lend_maps {
	uint32_t id[64];
	uint8_t *mem[64];
	size_t len[64];
	int n;
};

/* LEND, and the mapping of its buffer (kept per id: the same id is the same memory). */
static int lend_one(int outfd, struct lend_maps *m, struct viacam_lend *l, uint8_t **mem)
{
	memset(l, 0, sizeof(*l));
	if (xioctl(outfd, VIACAM_IOC_LEND, l) < 0)
		return -errno;
	for (int i = 0; i < m->n; i++) {
		if (m->id[i] == l->id) {
			close(l->fd);
			*mem = m->mem[i];
			return 0;
		}
	}
	if (m->n == 64)
		return -ENOSPC;
	*mem = mmap(NULL, l->length, PROT_READ | PROT_WRITE, MAP_SHARED, l->fd, 0);
	close(l->fd);
	if (*mem == MAP_FAILED)
		return -errno;
	m->id[m->n] = l->id;
	m->mem[m->n] = *mem;
	m->len[m->n++] = l->length;
	return 0;
}

static int deliver(int outfd, uint32_t id, uint32_t bytes, uint64_t ts_ns)
{
	struct viacam_lend l = { .id = id, .bytesused = bytes, .timestamp = ts_ns };

	return xioctl(outfd, VIACAM_IOC_DELIVER, &l) < 0 ? -errno : 0;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Each of @n consumers dequeues frame @counter (with timestamp @ts_ns, 0: any) and requeues. */
static bool lend_got(struct stream **cs, int n, uint32_t counter, uint64_t ts_ns)
{
	for (int k = 0; k < n; k++) {
		struct v4l2_buffer b;
		uint32_t c = 0;
		int r = dqbuf_wait(cs[k], &b, 3000);
		uint64_t got = (uint64_t)b.timestamp.tv_sec * 1000000000ull +
			       (uint64_t)b.timestamp.tv_usec * 1000ull;

		if (r || check_frame(cs[k]->mem[b.index], b.bytesused, &c) != FRAME_REAL ||
		    c != counter || (ts_ns && got != ts_ns / 1000 * 1000)) {
			fail("consumer %d: frame %u: %s, counter %u, timestamp %llu (wanted %llu)", k + 1,
			     counter, r ? strerror(-r) : "ok", c, (unsigned long long)got,
			     (unsigned long long)(ts_ns / 1000 * 1000));
			return false;
		}
		qbuf(cs[k], b.index, 0);
	}
	return true;
}

/*
 * Lend, write and deliver @n frames, numbered from *@counter on (with a capture time 5 ms
 * old if @ts), and check that each reaches the first @nc consumers of @cs.
 */
static bool lend_frames(int outfd, struct lend_maps *maps, uint32_t size, struct stream **cs,
			int nc, int n, uint32_t *counter, bool ts)
{
	struct viacam_lend l;
	uint8_t *mem;

	for (int k = 0; k < n; k++, (*counter)++) {
		uint64_t t = ts ? mono_ns() - 5000000 : 0;
		int r = lend_one(outfd, maps, &l, &mem);

		if (!r) {
			fill_frame(mem, size, *counter);
			r = deliver(outfd, l.id, size, t);
		}
		if (r) {
			fail("LEND/DELIVER of frame %u: %s", *counter, strerror(-r));
			return false;
		}
		if (!lend_got(cs, nc, *counter, t))
			return false;
	}
	return true;
}

/*
 * lend_frames() of @n frames, counting the camera's kernel copies meanwhile (read through
 * @capdev's viacam_stats): *@copies gets them, or -1 when the counter cannot be read.
 */
static bool lend_frames_counted(const char *capdev, int outfd, struct lend_maps *maps,
				uint32_t size, struct stream **cs, int nc, int n, uint32_t *counter,
				bool ts, long long *copies)
{
	long long k0 = cam_copies(capdev);
	bool good = lend_frames(outfd, maps, size, cs, nc, n, counter, ts);
	long long k1 = cam_copies(capdev);

	*copies = k0 < 0 || k1 < 0 ? -1 : k1 - k0;
	return good;
}

/*
 * vctest lend CAPDEV CAPDEV2 OUTDEV: a producer that writes each frame into a lent
 * capture buffer. One consumer: 0 kernel copies; two streaming: nothing lent (EAGAIN:
 * consumers are kept apart); the capture time given with DELIVER; EBUSY for a handle that is not
 * the streaming owner; ESTALE once the lender stops, or after UNLEND; EAGAIN with nothing
 * to lend; the producer's STREAMOFF ends its lends.
 */
static int cmd_lend(int argc, char **argv)
{
	struct stream out, c1, c2, *both[2] = { &c1, &c2 };
	struct lend_maps maps = { .n = 0 };
	struct viacam_lend l, lends[2];
	uint32_t size, counter = 1, stale, ids[2];
	uint8_t *mem;
	long long copies;
	int outfd, fd1, fd2, other, r, good;

	if (argc != 4)
		return 2;
	outfd = xopen(argv[3], O_RDWR);
	if (set_out_fmt(outfd, 640, 480, &size) < 0 ||
	    stream_setup(&out, outfd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) < 0) {
		fail("lend: producer setup: %s", strerror(errno));
		return 1;
	}
	r = xioctl(outfd, VIACAM_IOC_LEND, &l) < 0 ? errno : 0;
	CHECK(r == EBUSY, "LEND before the producer streams: EBUSY (%s)", strerror(r));
	CHECK(streamon(&out) == 0, "producer streams (MMAP, 2 buffers)");
	r = xioctl(outfd, VIACAM_IOC_LEND, &l) < 0 ? errno : 0;
	CHECK(r == EAGAIN, "LEND with no consumer: EAGAIN (%s)", strerror(r));
	fd1 = fanout_consumer(&c1, argv[1]);
	CHECK(fd1 >= 0, "consumer 1 streams (MMAP, 2 buffers)");
	other = xopen(argv[3], O_RDWR);
	r = xioctl(other, VIACAM_IOC_LEND, &l) < 0 ? errno : 0;
	CHECK(r == EBUSY, "LEND on another handle of the backend node: EBUSY (%s)", strerror(r));
	close(other);

	/* One consumer: each frame written into its own buffer, no kernel copy. */
	good = lend_frames_counted(argv[1], outfd, &maps, size, both, 1, 30, &counter, true, &copies);
	CHECK(good, "one consumer: 30 frames lent, written and delivered, each with its capture time");
	CHECK(copies == 0, "...with 0 kernel copies (%lld)", copies);
	CHECK(maps.n == 2, "...through 2 mappings, one per capture buffer (%d)", maps.n);

	/*
	 * Two consumers: nothing is lent (a consumer may write into its own buffers, and no
	 * other node's frame may come from them); frames go through backend buffers.
	 */
	fd2 = fanout_consumer(&c2, argv[2]);
	CHECK(fd2 >= 0, "consumer 2 streams on the second node");
	r = xioctl(outfd, VIACAM_IOC_LEND, &l) < 0 ? errno : 0;
	if (!r) {
		close(l.fd);
		xioctl(outfd, VIACAM_IOC_UNLEND, &l);
	}
	CHECK(r == EAGAIN, "two consumers: LEND says EAGAIN, consumers are kept apart (%s)",
	      strerror(r));
	CHECK(streamoff(&c2) == 0, "consumer 2 stops");

	/* UNLEND: the buffer goes back unfilled; then the lend is over. */
	r = lend_one(outfd, &maps, &l, &mem);
	CHECK(!r && xioctl(outfd, VIACAM_IOC_UNLEND, &l) == 0, "LEND, then UNLEND");
	r = xioctl(outfd, VIACAM_IOC_UNLEND, &l) < 0 ? errno : 0;
	CHECK(r == ESTALE, "a second UNLEND: ESTALE (%s)", strerror(r));
	r = deliver(outfd, l.id, size, 0);
	CHECK(r == -ESTALE, "DELIVER after UNLEND: ESTALE (%s)", strerror(-r));

	/* The lender stops: its lent buffer comes back to it, and DELIVER says ESTALE. */
	r = lend_one(outfd, &maps, &l, &mem);
	CHECK(!r, "LEND (node 1 lends)");
	CHECK(streamoff(&c1) == 0, "consumer 1 stops while its buffer is lent");
	fill_frame(mem, size, counter);
	r = deliver(outfd, l.id, size, 0);
	CHECK(r == -ESTALE, "DELIVER of that buffer: ESTALE (%s)", strerror(-r));
	/* Node 2 lends now, alone; node 1 streams again afterwards, alone. */
	CHECK(qbuf(&c2, 0, 0) == 0 && qbuf(&c2, 1, 0) == 0 && streamon(&c2) == 0,
	      "consumer 2 streams again");
	CHECK(lend_frames(outfd, &maps, size, both + 1, 1, 1, &counter, false),
	      "node 2 lends and gets frame %u", counter - 1);
	CHECK(streamoff(&c2) == 0, "consumer 2 stops");
	stream_unmap(&c1);
	close(fd1);
	fd1 = fanout_consumer(&c1, argv[1]);
	CHECK(fd1 >= 0, "consumer 1 streams again");

	/*
	 * A lend its node's stop ended is stale until the producer lets go of it (DELIVER or
	 * UNLEND, answered ESTALE): queued again meanwhile, that buffer is neither filled nor
	 * lent, for the producer may still be writing into it.
	 */
	r = lend_one(outfd, &maps, &l, &mem);
	stale = l.id;
	CHECK(!r && streamoff(&c1) == 0, "LEND (node 1), then consumer 1 stops");
	CHECK(qbuf(&c1, 0, 0) == 0 && qbuf(&c1, 1, 0) == 0 && streamon(&c1) == 0,
	      "...queues both buffers again and streams on, the lend still out");
	r = lend_one(outfd, &maps, &l, &mem);
	CHECK(!r && l.id != stale, "LEND gives node 1's other buffer, not the stale one (%u, %u)",
	      l.id, stale);
	CHECK(!r && xioctl(outfd, VIACAM_IOC_UNLEND, &l) == 0, "...UNLEND it");
	r = xioctl(outfd, VIACAM_IOC_LEND, &l) == 0 ? 0 : errno;
	if (!r)
		close(l.fd);
	CHECK(!r && l.id != stale && xioctl(outfd, VIACAM_IOC_UNLEND, &l) == 0,
	      "LEND again: still not the stale one (%u)", l.id);
	r = deliver(outfd, stale, size, 0);
	CHECK(r == -ESTALE, "the producer lets go: DELIVER of the ended lend says ESTALE (%s)",
	      strerror(-r));
	ids[0] = ids[1] = 0;
	for (int k = 0; k < 2; k++)
		if (xioctl(outfd, VIACAM_IOC_LEND, &lends[k]) == 0) {
			close(lends[k].fd);
			ids[k] = lends[k].id;
		}
	CHECK(ids[0] == stale || ids[1] == stale,
	      "now node 1's buffer is lent again (ids %u %u, stale %u)", ids[0], ids[1], stale);
	for (int k = 0; k < 2; k++)
		if (ids[k])
			xioctl(outfd, VIACAM_IOC_UNLEND, &lends[k]);

	/* The producer's STREAMOFF ends its lends: the buffer waits for frames again. */
	r = lend_one(outfd, &maps, &l, &mem);
	CHECK(!r, "LEND");
	CHECK(streamoff(&out) == 0, "producer STREAMOFF with a lend out");
	r = deliver(outfd, l.id, size, 0);
	CHECK(r == -EBUSY, "DELIVER after the producer's STREAMOFF: EBUSY (%s)", strerror(-r));
	CHECK(streamon(&out) == 0, "producer streams again");
	r = xioctl(outfd, VIACAM_IOC_UNLEND, &l) < 0 ? errno : 0;
	CHECK(r == ESTALE, "the old lend is over: UNLEND says ESTALE (%s)", strerror(r));
	CHECK(lend_frames(outfd, &maps, size, both, 1, 10, &counter, false),
	      "after all that, 10 more frames reach node 1");

	/* Neither consumer has a buffer queued: nothing to lend. */
	streamoff(&c1);
	streamoff(&c2);
	r = xioctl(outfd, VIACAM_IOC_LEND, &l) < 0 ? errno : 0;
	CHECK(r == EAGAIN, "LEND with no capture buffer queued: EAGAIN (%s)", strerror(r));
	for (int i = 0; i < maps.n; i++)
		munmap(maps.mem[i], maps.len[i]);
	stream_unmap(&c1);
	stream_unmap(&c2);
	close(fd1);
	close(fd2);
	streamoff(&out);
	stream_unmap(&out);
	close(outfd);
	return failures ? 1 : 0;
}

/* A dma-buf of buffer @index of MMAP stream @exp (VIDIOC_EXPBUF with @flags), mapped if @mem. */
static int export_buf(struct stream *exp, unsigned int index, int flags, void **mem)
{
	struct v4l2_exportbuffer e = { .type = exp->type, .index = index, .flags = flags };

	if (xioctl(exp->fd, VIDIOC_EXPBUF, &e) < 0)
		return -errno;
	if (mem) {
		*mem = mmap(NULL, exp->len[index], PROT_READ, MAP_SHARED, e.fd, 0);
		if (*mem == MAP_FAILED) {
			close(e.fd);
			return -errno;
		}
	}
	return e.fd;
}

/*
 * A DMABUF consumer on @capdev: 2 buffers, buffer i the dma-buf of @exp's buffer @first + i
 * (read-only dma-bufs if @ro), both queued, streaming. Returns the node's fd, or -1.
 */
static int dmabuf_consumer(struct stream *cap, const char *capdev, struct stream *exp,
			   unsigned int first, bool ro)
{
	int fd = xopen(capdev, O_RDWR | O_NONBLOCK);

	if (stream_reqbufs(cap, fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2, V4L2_MEMORY_DMABUF) < 0 ||
	    cap->count != 2)
		return -1;
	for (unsigned int i = 0; i < 2; i++) {
		cap->dmafd[i] = export_buf(exp, first + i, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC,
					   &cap->mem[i]);
		cap->len[i] = exp->len[first + i];
		if (cap->dmafd[i] < 0 || qbuf(cap, i, 0) < 0)
			return -1;
	}
	return streamon(cap) == 0 ? fd : -1;
}

/* @s's buffer @index is queued from now on with the dma-buf of @exp's buffer @src. */
static int dmabuf_swap(struct stream *s, unsigned int index, struct stream *exp, unsigned int src)
{
	void *mem;
	int fd = export_buf(exp, src, O_RDWR | O_CLOEXEC, &mem);

	if (fd < 0)
		return fd;
	munmap(s->mem[index], s->len[index]);
	close(s->dmafd[index]);
	s->mem[index] = mem;
	s->len[index] = exp->len[src];
	s->dmafd[index] = fd;
	return 0;
}

static bool lend_id_known(const struct lend_maps *m, uint32_t id, int upto)
{
	for (int i = 0; i < upto; i++)
		if (m->id[i] == id)
			return true;
	return false;
}

/*
 * vctest lend-dmabuf CAPDEV CAPDEV2 OUTDEV EXPORTDEV: the zero-copy hand-off to a consumer
 * whose capture buffers are dma-bufs of another device (EXPORTDEV's MMAP buffers, exported):
 * lent frames reach it with 0 kernel copies and a second (MMAP) node with one; a write()
 * producer's frames with exactly one; after the consumer queues a buffer with another
 * dma-buf, the repeat still shows the frame delivered in the old one, and the buffer's next
 * lend has a new id (its memory is new); a consumer's read-only dma-buf is never handed to
 * the producer to write into, but write() (in the kernel) fills it.
 */
static int cmd_lend_dmabuf(int argc, char **argv)
{
	struct stream out, exp, c1, c2, *both[2] = { &c1, &c2 };
	struct lend_maps maps = { .n = 0 };
	uint32_t size, counter = 1, c = 0, frame;
	struct v4l2_buffer b;
	struct viacam_lend l;
	long long copies, k0, k1;
	int outfd, expfd, fd1, fd2, r, good, known;
	unsigned int swapped;
	uint8_t *mem, *buf;

	if (argc != 5)
		return 2;
	outfd = xopen(argv[3], O_RDWR);
	expfd = xopen(argv[4], O_RDWR);
	{
		struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
		f.fmt.pix.width = 640;
		f.fmt.pix.height = 480;
		r = xioctl(expfd, VIDIOC_S_FMT, &f);
	}
	if (r < 0 || set_out_fmt(outfd, 640, 480, &size) < 0 ||
	    stream_setup(&exp, expfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 6) < 0 || exp.count != 6 ||
	    stream_setup(&out, outfd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) < 0 || streamon(&out) < 0) {
		fail("lend-dmabuf: setup: %s", strerror(errno));
		return 1;
	}
	printf("ok: exporter: 6 MMAP buffers of %zu bytes on %s; producer streams\n", exp.len[0],
	       argv[4]);

	/* Read-only dma-bufs: not lent to user space (it could not map them to write). */
	fd1 = dmabuf_consumer(&c1, argv[1], &exp, 4, true);
	CHECK(fd1 >= 0, "consumer 1 streams with 2 read-only dma-bufs (DMABUF)");
	r = xioctl(outfd, VIACAM_IOC_LEND, &l) < 0 ? errno : 0;
	CHECK(r == EAGAIN, "LEND: EAGAIN, a read-only dma-buf is not lent (%s)", strerror(r));
	stream_unmap(&c1);
	close(fd1);

	/* One DMABUF consumer: each frame written into its dma-buf, no kernel copy. */
	fd1 = dmabuf_consumer(&c1, argv[1], &exp, 0, false);
	CHECK(fd1 >= 0, "consumer 1 streams with 2 dma-bufs of the exporter (DMABUF)");
	good = lend_frames_counted(argv[1], outfd, &maps, size, both, 1, 30, &counter, true, &copies);
	CHECK(good, "one DMABUF consumer: 30 frames lent, written, delivered, right content");
	CHECK(copies == 0, "...with 0 kernel copies (%lld)", copies);
	CHECK(maps.n == 2, "...through 2 mappings, one per dma-buf (%d)", maps.n);

	/* A second node (MMAP): consumers are kept apart, nothing is lent while both stream. */
	fd2 = fanout_consumer(&c2, argv[2]);
	CHECK(fd2 >= 0, "consumer 2 streams on the second node (MMAP)");
	r = xioctl(outfd, VIACAM_IOC_LEND, &l) < 0 ? errno : 0;
	if (!r) {
		close(l.fd);
		xioctl(outfd, VIACAM_IOC_UNLEND, &l);
	}
	CHECK(r == EAGAIN, "two consumers: LEND says EAGAIN (%s)", strerror(r));
	streamoff(&c2);

	/*
	 * A frame delivered in a dma-buf that the consumer then queues its buffer without: the
	 * repeat shows that frame (read from the dma-buf it was lent in, not the new one).
	 */
	frame = counter;
	r = lend_one(outfd, &maps, &l, &mem);
	if (!r) {
		fill_frame(mem, size, counter++);
		r = deliver(outfd, l.id, size, 0);
	}
	CHECK(!r, "frame %u lent and delivered", frame);
	r = dqbuf_wait(&c1, &b, 3000);
	CHECK(!r && check_frame(c1.mem[b.index], b.bytesused, &c) == FRAME_REAL && c == frame,
	      "consumer 1 dequeues it (%s, counter %u, buffer %u)", strerror(-r), c, b.index);
	known = maps.n;
	swapped = b.index;
	r = r ? r : dmabuf_swap(&c1, b.index, &exp, 2);
	CHECK(!r && qbuf(&c1, b.index, 0) == 0,
	      "...and queues that buffer again with another dma-buf (exporter buffer 2)");
	good = 1;
	for (int k = 0; k < 3 && good; k++) {
		static const char *const kind[] = { "numbered", "neutral", "bad" };
		enum frame_kind fk = FRAME_BAD;

		c = 0;
		r = dqbuf_wait(&c1, &b, 3000);
		if (!r)
			fk = check_frame(c1.mem[b.index], b.bytesused, &c);
		good = !r && fk == FRAME_REAL && c == frame;
		if (!good) {
			const uint8_t *p = c1.mem[b.index];
			size_t bad = 0;

			for (size_t z = 0; !r && z < b.bytesused; z++)
				bad += p[z] != 0;
			fail("repeat %d: %s, buffer %u: a %s frame (counter %u), %zu of %u bytes not 0",
			     k + 1, r ? strerror(-r) : "dequeued", b.index, kind[fk], c, bad,
			     b.bytesused);
		}
		if (!r)
			qbuf(&c1, b.index, 0);
	}
	CHECK(good, "the producer pauses: 3 repeats of frame %u", frame);
	/* The other buffer gets new memory too: both lends now name memory never lent before. */
	for (int k = 0; k < 3 && !(r = dqbuf_wait(&c1, &b, 3000)) && b.index == swapped; k++)
		qbuf(&c1, b.index, 0);
	r = r ? r : b.index == swapped ? -EAGAIN : dmabuf_swap(&c1, b.index, &exp, 3);
	CHECK(!r && qbuf(&c1, b.index, 0) == 0, "the other buffer is queued with exporter buffer 3");
	/*
	 * The bridge repeats frame 31 while the producer pauses: a repeat may complete a buffer
	 * just before the next lend takes the other. One frame ends the pause; older repeats
	 * dequeued before it are fine.
	 */
	r = lend_one(outfd, &maps, &l, &mem);
	if (!r) {
		fill_frame(mem, size, counter);
		r = deliver(outfd, l.id, size, 0);
	}
	for (int k = 0; !r && k < 4; k++) {
		enum frame_kind fk;

		c = 0;
		r = dqbuf_wait(&c1, &b, 3000);
		if (r)
			break;
		fk = check_frame(c1.mem[b.index], b.bytesused, &c);
		qbuf(&c1, b.index, 0);
		if (fk == FRAME_REAL && c == counter)
			break;
		r = fk == FRAME_REAL && c == frame ? 0 : -EPROTO;
	}
	CHECK(!r && c == counter, "frame %u ends the pause (%s)", counter, strerror(-r));
	counter++;
	good = lend_frames(outfd, &maps, size, both, 1, 10, &counter, false);
	CHECK(good, "10 more frames lent and delivered into the new dma-bufs");
	CHECK(maps.n == known + 2 && !lend_id_known(&maps, maps.id[known], known) &&
	      !lend_id_known(&maps, maps.id[known + 1], known),
	      "...under 2 new lend ids (%d mappings, %d before)", maps.n, known);

	/* write(): the frame goes from user space straight into the dma-buf, one copy. */
	streamoff(&out);
	stream_unmap(&out);
	close(outfd);
	outfd = xopen(argv[3], O_RDWR);
	buf = malloc(size);
	good = buf && set_out_fmt(outfd, 640, 480, &size) == 0;
	k0 = cam_copies(argv[1]);
	for (int k = 0; k < 20 && good; k++, counter++) {
		fill_frame(buf, size, counter);
		good = write(outfd, buf, size) == (ssize_t)size && lend_got(both, 1, counter, 0);
	}
	k1 = cam_copies(argv[1]);
	CHECK(good, "write() producer: 20 frames reach the DMABUF consumer, right content");
	CHECK(k1 - k0 == 20, "...with one kernel copy per frame (%lld for 20)", k1 - k0);
	free(buf);

	for (int i = 0; i < maps.n; i++)
		munmap(maps.mem[i], maps.len[i]);
	streamoff(&c1);
	stream_unmap(&c1);
	stream_unmap(&c2);
	stream_unmap(&exp);
	close(fd1);
	close(fd2);
	close(expfd);
	close(outfd);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------
 * isolation: what a hostile consumer may try against a lending producer
 */

/* Objects in /sys/kernel/debug/dma_buf/bufinfo ("Total N objects"), or -1. */
static int count_dmabufs(void)
{
	FILE *f = fopen("/sys/kernel/debug/dma_buf/bufinfo", "r");
	char line[256];
	int n = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Total %d objects", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* QBUF of @s's buffer @index with dma-buf fd @fd (-1: none) or USERPTR length @len. */
static int qbuf_bad(struct stream *s, unsigned int index, int fd, uint32_t len)
{
	struct v4l2_buffer b = { .index = index, .type = s->type, .memory = s->memory,
				 .field = V4L2_FIELD_NONE };

	if (s->memory == V4L2_MEMORY_DMABUF)
		b.m.fd = fd;
	if (s->memory == V4L2_MEMORY_USERPTR) {
		b.m.userptr = (unsigned long)s->mem[index];
		b.length = len;
	}
	return xioctl(s->fd, VIDIOC_QBUF, &b) < 0 ? -errno : 0;
}

static int reqbufs0(struct stream *s)
{
	struct v4l2_requestbuffers req = { .type = s->type, .memory = s->memory };

	return xioctl(s->fd, VIDIOC_REQBUFS, &req) < 0 ? -errno : 0;
}

/* A fresh handle of @capdev can REQBUFS @n MMAP buffers (the node is usable): 0 or -errno. */
static int fresh_reqbufs(const char *capdev, unsigned int n)
{
	int fd = xopen(capdev, O_RDWR | O_NONBLOCK), r;
	struct stream s;

	r = stream_reqbufs(&s, fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, n, V4L2_MEMORY_MMAP);
	if (!r && s.count < 1)
		r = -ENOMEM;
	close(fd);
	return r;
}

/* A producer streaming MMAP buffers on @outdev at 640x480; *@size: the frame size. */
static int iso_producer(struct stream *out, const char *outdev, uint32_t *size)
{
	int fd = xopen(outdev, O_RDWR);

	if (set_out_fmt(fd, 640, 480, size) < 0 ||
	    stream_setup(out, fd, V4L2_BUF_TYPE_VIDEO_OUTPUT, 2) < 0 || streamon(out) < 0) {
		fail("producer setup: %s", strerror(errno));
		return -1;
	}
	return fd;
}

static void iso_close(struct stream *s)
{
	streamoff(s);
	stream_unmap(s);
	close(s->fd);
}

/*
 * stale-free: a DMABUF consumer's buffer is lent; the consumer stops, QBUFs its buffers with
 * a bad fd (vb2 drops their memory without buf_cleanup) and frees them (REQBUFS 0); the
 * producer's UNLEND then must say ESTALE (it walked the freed buffers: KASAN use-after-free),
 * and the node stays usable.
 */
static void iso_stale_free(const char *capdev, const char *outdev, const char *expdev)
{
	struct lend_maps maps = { .n = 0 };
	struct stream out, exp, c1;
	struct viacam_lend l;
	uint32_t size;
	uint8_t *mem;
	int r;

	if (iso_producer(&out, outdev, &size) < 0 ||
	    stream_setup(&exp, xopen(expdev, O_RDWR), V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0 ||
	    dmabuf_consumer(&c1, capdev, &exp, 0, false) < 0) {
		fail("stale-free: setup: %s", strerror(errno));
		return;
	}
	CHECK(lend_one(out.fd, &maps, &l, &mem) == 0, "stale-free: LEND of the consumer's buffer");
	CHECK(streamoff(&c1) == 0, "stale-free: the consumer stops while it is lent");
	for (unsigned int i = 0; i < 2; i++) {
		r = qbuf_bad(&c1, i, -1, 0);
		CHECK(r == -EINVAL, "stale-free: QBUF %u with dma-buf fd -1: EINVAL (%s)", i,
		      strerror(-r));
	}
	CHECK(reqbufs0(&c1) == 0, "stale-free: the consumer frees its buffers (REQBUFS 0)");
	fill_frame(mem, size, 1);
	r = deliver(out.fd, l.id, size, 0);
	CHECK(r == -ESTALE, "stale-free: the producer's DELIVER says ESTALE (%s)", strerror(-r));
	r = xioctl(out.fd, VIACAM_IOC_UNLEND, &l) < 0 ? errno : 0;
	CHECK(r == ESTALE, "stale-free: ...and UNLEND too (%s)", strerror(r));
	r = fresh_reqbufs(capdev, 4);
	CHECK(r == 0, "stale-free: a fresh open can REQBUFS (%s)", strerror(-r));
	for (int i = 0; i < maps.n; i++)
		munmap(maps.mem[i], maps.len[i]);
	stream_unmap(&c1);
	close(c1.fd);
	iso_close(&out);
	iso_close(&exp);
}

/*
 * userptr-enomem: rounds of "QBUF USERPTR, STREAMOFF, QBUF with length 1" (vb2 drops the
 * memory without buf_cleanup) must not use up the node's max_queue_mb: it counted buffers in
 * buf_init/buf_cleanup, and refused every later REQBUFS with ENOMEM, for every user.
 */
static void iso_userptr_enomem(const char *capdev)
{
	int fd = xopen(capdev, O_RDWR | O_NONBLOCK), bad = 0, r = 0;
	void *big = MAP_FAILED;
	struct stream c;

	set_param("max_queue_mb", 8);
	if (stream_setup_userptr(&c, fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2, 640 * 480 * 2) < 0) {
		fail("userptr-enomem: USERPTR REQBUFS: %s", strerror(errno));
		set_param("max_queue_mb", 1024);
		return;
	}
	for (int i = 0; i < 40; i++) {
		if (qbuf(&c, 0, 0) < 0 || streamoff(&c) < 0)
			bad++;
		if (qbuf_bad(&c, 0, -1, 1) != -EINVAL)
			bad++;
	}
	CHECK(!bad, "userptr-enomem: 40 rounds of QBUF, STREAMOFF, QBUF with length 1 (%d odd answers)",
	      bad);
	/* A USERPTR buffer may pin no more than max_queue_mb counted it at: 64 MiB is refused. */
	big = mmap(NULL, 64u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big != MAP_FAILED) {
		void *keep = c.mem[1];

		c.mem[1] = big;
		r = qbuf_bad(&c, 1, -1, 64u << 20);
		c.mem[1] = keep;
		munmap(big, 64u << 20);
	}
	CHECK(big != MAP_FAILED && r == -EINVAL,
	      "userptr-enomem: a USERPTR QBUF of 64 MiB is refused before it pins (%s)", strerror(-r));
	streamoff(&c);
	r = reqbufs0(&c);
	stream_unmap(&c);
	close(fd);
	r = r ? r : fresh_reqbufs(capdev, 4);
	CHECK(r == 0, "userptr-enomem: then a fresh open can REQBUFS 4 buffers (%s)", strerror(-r));
	set_param("max_queue_mb", 1024);
}

/*
 * dmabuf-leak: a DMABUF consumer's buffer, lent once, QBUF'd with a bad fd, then everything
 * closed: no dma-buf may stay (the bridge kept a reference only buf_cleanup put).
 */
static void iso_dmabuf_leak(const char *capdev, const char *outdev, const char *expdev)
{
	struct lend_maps maps = { .n = 0 };
	struct stream out, exp, c1;
	int n0 = count_dmabufs(), n1, r;
	struct v4l2_buffer b;
	struct viacam_lend l;
	uint32_t size, c = 0;
	uint8_t *mem;

	CHECK(n0 >= 0, "dmabuf-leak: /sys/kernel/debug/dma_buf/bufinfo says %d objects", n0);
	if (iso_producer(&out, outdev, &size) < 0 ||
	    stream_setup(&exp, xopen(expdev, O_RDWR), V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) < 0 ||
	    dmabuf_consumer(&c1, capdev, &exp, 0, false) < 0) {
		fail("dmabuf-leak: setup: %s", strerror(errno));
		return;
	}
	r = lend_one(out.fd, &maps, &l, &mem);
	if (!r) {
		fill_frame(mem, size, 7);
		r = deliver(out.fd, l.id, size, 0);
	}
	CHECK(!r && dqbuf_wait(&c1, &b, 3000) == 0 &&
	      check_frame(c1.mem[b.index], b.bytesused, &c) == FRAME_REAL && c == 7,
	      "dmabuf-leak: a frame lent, delivered and dequeued");
	r = qbuf_bad(&c1, b.index, -1, 0);
	CHECK(r == -EINVAL, "dmabuf-leak: that buffer QBUF'd with fd -1: EINVAL (%s)", strerror(-r));
	for (int i = 0; i < maps.n; i++)
		munmap(maps.mem[i], maps.len[i]);
	streamoff(&c1);
	reqbufs0(&c1);
	stream_unmap(&c1);
	close(c1.fd);
	iso_close(&out);
	streamoff(&exp);
	stream_unmap(&exp);
	reqbufs0(&exp);
	close(exp.fd);
	for (int i = 0; i < 20 && (n1 = count_dmabufs()) != n0; i++)
		usleep(100000);
	CHECK(n1 == n0, "dmabuf-leak: all closed: %d dma-bufs, as before (%d)", n1, n0);
}

/*
 * new-mem: a DMABUF buffer QBUF'd with a bad fd, then with another dma-buf: its next lend
 * must hand out that dma-buf (it handed out the old one under the new id).
 */
static void iso_new_mem(const char *capdev, const char *outdev, const char *expdev)
{
	struct lend_maps maps = { .n = 0 };
	struct viacam_lend l, l2 = { 0 };
	struct stream out, exp, c1;
	struct stat st1, st2;
	struct v4l2_buffer b;
	uint32_t size;
	uint8_t *mem;
	int r;

	if (iso_producer(&out, outdev, &size) < 0 ||
	    stream_setup(&exp, xopen(expdev, O_RDWR), V4L2_BUF_TYPE_VIDEO_CAPTURE, 4) < 0 ||
	    dmabuf_consumer(&c1, capdev, &exp, 0, false) < 0) {
		fail("new-mem: setup: %s", strerror(errno));
		return;
	}
	r = lend_one(out.fd, &maps, &l, &mem);
	if (!r) {
		fill_frame(mem, size, 3);
		r = deliver(out.fd, l.id, size, 0);
	}
	CHECK(!r && dqbuf_wait(&c1, &b, 3000) == 0, "new-mem: a frame lent, delivered, dequeued");
	CHECK(qbuf_bad(&c1, b.index, -1, 0) == -EINVAL, "new-mem: QBUF with fd -1: EINVAL");
	CHECK(dmabuf_swap(&c1, b.index, &exp, 2) == 0 && qbuf(&c1, b.index, 0) == 0,
	      "new-mem: QBUF with another dma-buf");
	/* The other buffer is first in line: lend it, then this one. */
	r = xioctl(out.fd, VIACAM_IOC_LEND, &l) < 0 ? -errno : 0;
	if (!r)
		close(l.fd);
	r = r ? r : (xioctl(out.fd, VIACAM_IOC_LEND, &l2) < 0 ? -errno : 0);
	CHECK(!r && !fstat(l2.fd, &st1) && !fstat(c1.dmafd[b.index], &st2) &&
	      st1.st_ino == st2.st_ino,
	      "new-mem: its next lend is the new dma-buf (inode %lu, queued %lu)",
	      r ? 0ul : (unsigned long)st1.st_ino, (unsigned long)st2.st_ino);
	if (!r)
		close(l2.fd);
	xioctl(out.fd, VIACAM_IOC_UNLEND, &l);
	xioctl(out.fd, VIACAM_IOC_UNLEND, &l2);
	for (int i = 0; i < maps.n; i++)
		munmap(maps.mem[i], maps.len[i]);
	iso_close(&c1);
	iso_close(&out);
	iso_close(&exp);
}

/* Frames @s gets in @ms; counts them by kind. */
static void frames_by_kind(struct stream *s, int ms, int *real, int *neutral, int *bad)
{
	double end = now_ms() + ms;
	struct v4l2_buffer b;
	uint32_t c;

	*real = *neutral = *bad = 0;
	for (double left; (left = end - now_ms()) > 0;) {
		if (dqbuf_wait(s, &b, (int)left + 1) < 0)
			continue;
		switch (check_frame(s->mem[b.index], b.bytesused, &c)) {
		case FRAME_REAL: (*real)++; break;
		case FRAME_NEUTRAL: (*neutral)++; break;
		default: (*bad)++; break;
		}
		qbuf(s, b.index, 0);
	}
}

/*
 * scribble: node 1's consumer writes into the buffer that holds the newest (lent) frame; a
 * consumer on node 2 must never see those bytes (its repeats were copied from that buffer);
 * and while two nodes stream, nothing is lent (a consumer can write into a lent buffer too).
 */
static void iso_scribble(const char *capdev, const char *cap2dev, const char *outdev)
{
	struct lend_maps maps = { .n = 0 };
	struct stream out, c1, c2;
	int real, neutral, bad, r;
	struct v4l2_buffer b;
	struct viacam_lend l;
	uint32_t size, c = 0;
	uint8_t *mem;

	if (iso_producer(&out, outdev, &size) < 0 || fanout_consumer(&c1, capdev) < 0) {
		fail("scribble: setup: %s", strerror(errno));
		return;
	}
	r = lend_one(out.fd, &maps, &l, &mem);
	if (!r) {
		fill_frame(mem, size, 9);
		r = deliver(out.fd, l.id, size, 0);
	}
	CHECK(!r && dqbuf_wait(&c1, &b, 3000) == 0 &&
	      check_frame(c1.mem[b.index], b.bytesused, &c) == FRAME_REAL && c == 9,
	      "scribble: node 1 gets a lent frame");
	memset(c1.mem[b.index], 0xEE, size);	/* and keeps the buffer */
	CHECK(fanout_consumer(&c2, cap2dev) >= 0, "scribble: node 2 streams");
	r = xioctl(out.fd, VIACAM_IOC_LEND, &l) < 0 ? errno : 0;
	if (!r) {
		close(l.fd);
		xioctl(out.fd, VIACAM_IOC_UNLEND, &l);
	}
	CHECK(r == EAGAIN, "scribble: LEND while two nodes stream: EAGAIN (%s)", strerror(r));
	frames_by_kind(&c2, 2000, &real, &neutral, &bad);
	CHECK(!bad && !real && neutral >= 1,
	      "scribble: node 2's repeats are neutral frames: %d neutral, %d real, %d foreign",
	      neutral, real, bad);
	for (int i = 0; i < maps.n; i++)
		munmap(maps.mem[i], maps.len[i]);
	iso_close(&c2);
	iso_close(&c1);
	iso_close(&out);
}

/*
 * old-picture: a new stream never starts with a frame from before its STREAMON: after a lent
 * frame, and after a held backend frame, a producer that stops and a consumer that stops, the
 * next stream gets neutral frames only (it got the last stream's picture).
 */
static void iso_old_picture(const char *capdev, const char *outdev)
{
	struct lend_maps maps = { .n = 0 };
	int real, neutral, bad, r;
	struct stream out, c1;
	struct v4l2_buffer b;
	struct viacam_lend l;
	uint32_t size;
	uint8_t *mem;

	for (int held = 0; held < 2; held++) {
		const char *how = held ? "a held backend frame" : "a lent frame";

		if (iso_producer(&out, outdev, &size) < 0 || fanout_consumer(&c1, capdev) < 0) {
			fail("old-picture: setup: %s", strerror(errno));
			return;
		}
		if (held) {
			fill_frame(out.mem[0], size, 21);
			r = qbuf(&out, 0, size);
		} else {
			r = lend_one(out.fd, &maps, &l, &mem);
			if (!r) {
				fill_frame(mem, size, 21);
				r = deliver(out.fd, l.id, size, 0);
			}
		}
		CHECK(!r && dqbuf_wait(&c1, &b, 3000) == 0, "old-picture: %s reaches the consumer",
		      how);
		iso_close(&out);
		iso_close(&c1);
		if (fanout_consumer(&c1, capdev) < 0) {
			fail("old-picture: a new consumer: %s", strerror(errno));
			return;
		}
		frames_by_kind(&c1, 1500, &real, &neutral, &bad);
		CHECK(!real && !bad && neutral >= 1,
		      "old-picture: after %s, a new stream gets neutral frames only (%d neutral, %d old, %d bad)",
		      how, neutral, real, bad);
		iso_close(&c1);
	}
	for (int i = 0; i < maps.n; i++)
		munmap(maps.mem[i], maps.len[i]);
}

/*
 * interval: a declared interval of 2^26 s: the bridge repeats once after the timeout, then
 * waits (usecs_to_jiffies() truncated the delay to 0: the repeat work ran without pause).
 */
static void iso_interval(const char *capdev, const char *outdev)
{
	const struct viacam_format decl[] = {
		{ V4L2_PIX_FMT_YUYV, 320, 240, 67108864, 1, 0, { 0, 0 } },
	};
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm sp = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	int capfd = xopen(capdev, O_RDWR | O_NONBLOCK), outfd = xopen(outdev, O_RDWR), n;
	struct stream cap;

	CHECK(set_formats(outfd, decl, 1) == 0, "interval: backend declares 320x240 at 67108864/1 s");
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.width = 320;
	f.fmt.pix.height = 240;
	sp.parm.capture.timeperframe = (struct v4l2_fract){ 67108864, 1 };
	CHECK(xioctl(capfd, VIDIOC_S_FMT, &f) == 0 && xioctl(capfd, VIDIOC_S_PARM, &sp) == 0 &&
	      sp.parm.capture.timeperframe.numerator == 67108864,
	      "interval: the consumer takes it (S_FMT, S_PARM)");
	if (stream_setup(&cap, capfd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 4) < 0) {
		fail("interval: REQBUFS: %s", strerror(errno));
		return;
	}
	for (unsigned int i = 0; i < cap.count; i++)
		qbuf(&cap, i, 0);
	CHECK(streamon(&cap) == 0, "interval: STREAMON, no producer");
	n = count_frames(&cap, 2500);
	CHECK(n >= 1 && n <= 2, "interval: %d repeated frames in 2.5 s (1 after the timeout)", n);
	iso_close(&cap);
	set_formats(outfd, NULL, 0);
	close(outfd);
}

struct add_ctx {
	int ctl;
	struct viacam_camera c;
	int ret;
	volatile int done;
};

static void *add_main(void *arg)
{
	struct add_ctx *a = arg;

	a->ret = ctl_add(a->ctl, "add-open", 500, &a->c);
	a->done = 1;
	return NULL;
}

/* A capture node of a camera not yet known (its id not in @known, @nknown ids): its path. */
static bool new_capture_node(const uint32_t *known, int nknown, char *path, size_t len)
{
	char p[128], v[32];
	bool found = false;

	for (int n = 0; n < 64 && !found; n++) {
		FILE *f;
		uint32_t id;

		snprintf(p, sizeof(p), "/sys/class/video4linux/video%d/viacam_role", n);
		f = fopen(p, "r");
		if (!f)
			continue;
		found = fgets(v, sizeof(v), f) && !strncmp(v, "capture", 7);
		fclose(f);
		snprintf(p, sizeof(p), "/sys/class/video4linux/video%d/viacam_id", n);
		f = fopen(p, "r");
		if (!f || fscanf(f, "%u", &id) != 1)
			found = false;
		if (f)
			fclose(f);
		for (int k = 0; found && k < nknown; k++)
			found = known[k] != id;
		if (found)
			snprintf(path, len, "/dev/video%d", n);
	}
	return found;
}

/*
 * add-open: ADD waits 200 ms between registering the new camera's capture node and its
 * backend node (inject bit 6) while a consumer opens the capture node and streams: the
 * bridge must not queue events on the backend node before it exists. IDS: the cameras that
 * exist already.
 */
static void iso_add_open(int nids, char **ids)
{
	struct add_ctx a = { .ctl = xopen("/dev/viacam", O_RDWR) };
	uint32_t known[16];
	char path[64];
	int early = 0;
	pthread_t th;

	for (int i = 0; i < nids && i < 16; i++)
		known[i] = (uint32_t)strtoul(ids[i], NULL, 0);
	set_inject(1u << 6);
	pthread_create(&th, NULL, add_main, &a);
	while (!a.done) {
		struct stream c;
		int fd;

		if (!new_capture_node(known, nids < 16 ? nids : 16, path, sizeof(path))) {
			usleep(1000);
			continue;
		}
		fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!a.done)
			early++;
		if (stream_setup(&c, fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, 2) == 0) {
			qbuf(&c, 0, 0);
			streamon(&c);
			streamoff(&c);
			stream_unmap(&c);
		}
		close(fd);
	}
	pthread_join(th, NULL);
	set_inject(0);
	CHECK(a.ret == 0, "add-open: ADD works (%s)", strerror(-a.ret));
	CHECK(early > 0, "add-open: the capture node was opened and streamed %d times before ADD returned",
	      early);
	if (!a.ret)
		ctl_remove(a.ctl, a.c.id);
	close(a.ctl);
}

/*
 * vctest isolation CASE CAPDEV CAPDEV2 OUTDEV EXPORTDEV [ID...]: one hostile-consumer case
 * (see each iso_* function), on a camera with two capture nodes (camera timeout 500 ms) and
 * EXPORTDEV, another camera's capture node, whose buffers serve as dma-bufs. add-open: IDs
 * are the cameras that exist.
 */
static int cmd_isolation(int argc, char **argv)
{
	const char *c = argv[1];

	if (argc < 6)
		return 2;
	if (!strcmp(c, "stale-free"))
		iso_stale_free(argv[2], argv[4], argv[5]);
	else if (!strcmp(c, "userptr-enomem"))
		iso_userptr_enomem(argv[2]);
	else if (!strcmp(c, "dmabuf-leak"))
		iso_dmabuf_leak(argv[2], argv[4], argv[5]);
	else if (!strcmp(c, "new-mem"))
		iso_new_mem(argv[2], argv[4], argv[5]);
	else if (!strcmp(c, "scribble"))
		iso_scribble(argv[2], argv[3], argv[4]);
	else if (!strcmp(c, "old-picture"))
		iso_old_picture(argv[2], argv[4]);
	else if (!strcmp(c, "interval"))
		iso_interval(argv[2], argv[4]);
	else if (!strcmp(c, "add-open"))
		iso_add_open(argc - 6, argv + 6);
	else
		return 2;
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		goto usage;
	argc--;
	argv++;
	if (!strcmp(argv[0], "produce"))
		return cmd_produce(argc, argv);
	if (!strcmp(argv[0], "consume"))
		return cmd_consume(argc, argv);
	if (!strcmp(argv[0], "verify-file"))
		return cmd_verify_file(argc, argv);
	if (!strcmp(argv[0], "blocking"))
		return cmd_blocking(argc, argv);
	if (!strcmp(argv[0], "declare"))
		return cmd_declare(argc, argv);
	if (!strcmp(argv[0], "churn"))
		return cmd_churn(argc, argv);
	if (!strcmp(argv[0], "remove-busy"))
		return cmd_remove_busy(argc, argv);
	if (!strcmp(argv[0], "stress"))
		return cmd_stress(argc, argv);
	if (!strcmp(argv[0], "race"))
		return cmd_race(argc, argv);
	if (!strcmp(argv[0], "limits"))
		return cmd_limits(argc, argv);
	if (!strcmp(argv[0], "reparm"))
		return cmd_reparm(argc, argv);
	if (!strcmp(argv[0], "repeats"))
		return cmd_repeats(argc, argv);
	if (!strcmp(argv[0], "mjpeg-write"))
		return cmd_mjpeg_write(argc, argv);
	if (!strcmp(argv[0], "lend"))
		return cmd_lend(argc, argv);
	if (!strcmp(argv[0], "lend-dmabuf"))
		return cmd_lend_dmabuf(argc, argv);
	if (!strcmp(argv[0], "isolation"))
		return cmd_isolation(argc, argv);
usage:
	fprintf(stderr, "usage: vctest produce|consume|verify-file|blocking|declare|churn|"
			"remove-busy|stress|race|limits|reparm|repeats|mjpeg-write|lend|lend-dmabuf|isolation ... (see the top of tests/guest/vctest.c)\n");
	return 2;
}
