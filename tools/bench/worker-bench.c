// SPDX-License-Identifier: GPL-2.0-only
/*
 * worker-bench.c - what the worker process boundary costs (make bench, on the host).
 *
 * For each case (a backend, a mode, a frame count) it runs the backend twice the way a
 * session does (produce() whenever its clock is readable; a backend without a clock paced by
 * a timerfd at the mode's interval), once in this process and once in a sandboxed worker
 * (backend/core/worker.c), and prints per frame: CPU time of all processes involved (user +
 * system; the worker's is counted when it is reaped), wall time, and for the worker the time
 * from its FRAME message to the frame copied out in the core ("hop": mean, median, 99th
 * percentile, maximum, in microseconds).
 *
 * Usage: worker-bench [FRAMES]   (as root: the worker drops to viacam or nobody)
 * This binary is its own worker (main() with --worker), as viacamd is.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "backend.h"
#include "worker.h"

extern const struct vc_backend_ops vc_backend_gst;
extern const struct vc_backend_ops vc_backend_file;

static uint64_t ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct rusage s, c;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return ((uint64_t)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec +
			   c.ru_stime.tv_sec)) * 1000000000u +
	       ((uint64_t)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec +
			   c.ru_stime.tv_usec)) * 1000u;
}

/* A Y4M clip of @w x @h 4:2:2 (YUYV), @n frames, readable by the worker's user. */
static int make_clip(const char *path, unsigned int w, unsigned int h, int n)
{
	size_t len = (size_t)w * h * 2;
	uint8_t *f = malloc(len);
	FILE *out = fopen(path, "we");

	if (!f || !out) {
		free(f);
		if (out)
			fclose(out);
		return -1;
	}
	fprintf(out, "YUV4MPEG2 W%u H%u F1000:1 Ip A1:1 C422\n", w, h);
	for (int i = 0; i < n; i++) {
		memset(f, 0x20 + i * 7, len);
		fprintf(out, "FRAME\n");
		fwrite(f, 1, len, out);
	}
	free(f);
	fclose(out);
	return chmod(path, 0644);
}

struct result {
	double cpu_us, wall_us, lat_us, lat_p50_us, lat_p99_us, lat_max_us;
	uint64_t frames;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int run(const struct vc_backend_ops *ops, const char *key, const char *value,
	       const struct vc_mode *mode, uint64_t nframes, struct result *res, bool worker)
{
	static const uint32_t formats[] = { V4L2_PIX_FMT_YUYV };
	uint32_t sizes[1][2] = { { mode->width, mode->height } };
	uint32_t rates[1][2] = { { mode->interval_num, mode->interval_den } };
	struct vc_kv kv = { (char *)key, (char *)value, 1 };
	struct vc_backend_conf bc = {
		.camera = "bench", .keys = &kv, .nkeys = 1, .formats = formats, .nformats = 1,
		.sizes = (const uint32_t (*)[2])sizes, .nsizes = 1,
		.intervals = (const uint32_t (*)[2])rates, .nintervals = 1,
	};
	size_t size = vc_sizeimage(mode->pixelformat, mode->width, mode->height);
	uint8_t *buf = malloc(size);
	uint64_t *lat = calloc(nframes + 1, sizeof(*lat));
	size_t nlat = 0;
	struct vc_error err = { 0 };
	uint64_t got = 0, c0, t0;
	struct pollfd p = { .events = POLLIN };
	int tfd = -1;
	void *priv;

	if (!buf || !lat) {
		free(buf);
		free(lat);
		return -ENOMEM;
	}
	if (worker)
		ops = vc_worker_proxy(ops);
	if (ops->create(&bc, &priv, &err) < 0 || ops->start(priv, mode, &err) < 0) {
		fprintf(stderr, "worker-bench: %s: %s\n", ops->name, err.msg);
		free(buf);
		free(lat);
		return -EINVAL;
	}
	p.fd = ops->clock_fd ? ops->clock_fd(priv) : -1;
	if (p.fd < 0) {
		uint64_t ns = (uint64_t)mode->interval_num * 1000000000u / mode->interval_den;
		struct itimerspec its = { .it_value = { 0, (long)ns }, .it_interval = { 0, (long)ns } };

		tfd = timerfd_create(CLOCK_MONOTONIC, 0);
		timerfd_settime(tfd, 0, &its, NULL);
		p.fd = tfd;
	}
	/* the first frame: the worker's start-up is not the boundary's cost per frame */
	c0 = cpu_ns();
	t0 = ns_now();
	while (got <= nframes) {
		struct vc_frame fr = {
			.data = buf, .size = size, .mode = mode,
			.bytesperline = vc_bytesperline(mode->pixelformat, mode->width),
		};
		uint64_t v;

		if (poll(&p, 1, 5000) <= 0) {
			fprintf(stderr, "worker-bench: %s: no frame for 5 s\n", ops->name);
			break;
		}
		if (tfd >= 0 && read(tfd, &v, sizeof(v)) < 0)
			break;
		if (ops->produce(priv, &fr) == 0) {
			if (got++ == 0) {
				c0 = cpu_ns();
				t0 = ns_now();
			} else if (worker) {
				struct vc_worker_stats st;

				vc_worker_stats(priv, &st);
				lat[nlat++] = st.lat_last_ns;
			}
		}
	}
	res->wall_us = (double)(ns_now() - t0) / 1000.0 / (double)(got - 1);
	res->frames = got - 1;
	res->lat_us = res->lat_p50_us = res->lat_p99_us = res->lat_max_us = 0;
	if (nlat) {
		uint64_t sum = 0;

		qsort(lat, nlat, sizeof(*lat), cmp_u64);
		for (size_t i = 0; i < nlat; i++)
			sum += lat[i];
		res->lat_us = (double)sum / 1000.0 / (double)nlat;
		res->lat_p50_us = (double)lat[nlat / 2] / 1000.0;
		res->lat_p99_us = (double)lat[nlat * 99 / 100] / 1000.0;
		res->lat_max_us = (double)lat[nlat - 1] / 1000.0;
	}
	ops->stop(priv);
	ops->release(priv);	/* reaps the worker: its CPU time is in RUSAGE_CHILDREN now */
	res->cpu_us = (double)(cpu_ns() - c0) / 1000.0 / (double)res->frames;
	if (tfd >= 0)
		close(tfd);
	free(buf);
	free(lat);
	return got > 1 ? 0 : -EIO;
}

int main(int argc, char **argv)
{
	static const char clip[] = "/tmp/viacam-worker-bench.y4m";
	uint64_t n;
	int rc = 0;
	struct {
		const char *label;
		const struct vc_backend_ops *ops;
		const char *key, *value;
		struct vc_mode mode;
	} cases[] = {
		{ "file 640x480 YUYV", &vc_backend_file, "file", clip,
		  { V4L2_PIX_FMT_YUYV, 640, 480, 1, 1000 } },
		{ "gst videotestsrc 640x480 YUYV", &vc_backend_gst, "pipeline",
		  "videotestsrc pattern=solid-color is-live=false",
		  { V4L2_PIX_FMT_YUYV, 640, 480, 1, 1000 } },
		{ "gst videotestsrc 1280x720 YUYV", &vc_backend_gst, "pipeline",
		  "videotestsrc pattern=solid-color is-live=false",
		  { V4L2_PIX_FMT_YUYV, 1280, 720, 1, 1000 } },
	};

	if (argc == 2 && strcmp(argv[1], VC_WORKER_ARG) == 0)
		return vc_worker_main(VC_WORKER_FD, vc_backend_find);
	vc_worker_exe = "/proc/self/exe";
	n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000;
	if (n < 10)
		n = 10;
	if (make_clip(clip, 640, 480, 8) < 0) {
		perror("worker-bench: the clip");
		return 1;
	}
	printf("# worker-bench: %llu frames per run, frames taken as fast as the source makes them "
	       "(rate 1000/s asked)\n", (unsigned long long)n);
	printf("# %-32s %-10s %12s %12s %9s %9s %9s %9s\n", "case", "where", "cpu_us/frame",
	       "wall_us/frame", "hop_mean", "hop_p50", "hop_p99", "hop_max");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int wk = 0; wk < 2; wk++) {
			struct result r;

			if (run(cases[i].ops, cases[i].key, cases[i].value, &cases[i].mode, n, &r,
				wk) < 0) {
				rc = 1;
				continue;
			}
			printf("  %-32s %-10s %12.1f %12.1f %9.1f %9.1f %9.1f %9.1f\n",
			       cases[i].label, wk ? "worker" : "in-process", r.cpu_us, r.wall_us,
			       r.lat_us, r.lat_p50_us, r.lat_p99_us, r.lat_max_us);
		}
	}
	unlink(clip);
	return rc;
}
