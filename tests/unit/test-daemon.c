// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-daemon.c - what viacamd makes of a configuration before and while applying it:
 * backends prepared from sections (offers, errors at the lines that caused them), one check
 * pass over the whole file, and what a reload says and retries when a camera cannot be
 * created. Everything here runs without the bridge: /dev/null stands in for /dev/viacam, so
 * every VIACAM_IOC_ADD fails (ENOTTY) as it would when the bridge refuses a camera.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdatomic.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/videodev2.h>

#include "config.h"
#include "daemon.h"
#include "session.h"

static char path[64];		/* the config file of the test */
static char clip[64];		/* a Y4M clip some tests write */

static void write_config(const char *text)
{
	FILE *f;
	int fd;

	strcpy(path, "/tmp/test-daemon-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A mono clip of @w x @h, one frame; its path in clip[]. */
static void write_mono_clip(unsigned int w, unsigned int h)
{
	FILE *f;
	int fd;

	strcpy(clip, "/tmp/test-daemon-clip-XXXXXX");
	fd = mkstemp(clip);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "YUV4MPEG2 W%u H%u F30:1 Cmono\nFRAME\n", w, h);
	for (unsigned int i = 0; i < w * h; i++)
		fputc(i & 0xff, f);
	fclose(f);
}

/* Asserts that message @i is "PATH:LINE: ...WANT..." */
static void assert_msg(const struct vc_msgs *m, size_t i, int line, const char *want)
{
	char prefix[128];

	if (i >= m->n)
		fail_msg("no message %zu (there are %zu), expected '%s'", i, m->n, want);
	snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	if (strncmp(m->v[i], prefix, strlen(prefix)) != 0 || !strstr(m->v[i], want))
		fail_msg("message %zu is '%s', expected '%s...%s'", i, m->v[i], prefix, want);
}

/* Loads @text (which must be valid) and prepares camera @name's backend. */
static int prepare(const char *text, const char *name, struct vc_prepared **p,
		   struct vc_msgs *m)
{
	struct vc_msgs cm = { 0 };
	struct vc_conf *conf;
	int r;

	write_config(text);
	assert_int_equal(vc_conf_load(path, &conf, &cm), 0);
	r = vc_prepare(vc_conf_camera(conf, name), path, false, p, m);
	vc_conf_free(conf);
	unlink(path);
	return r;
}

/* A backend's complaint about a list is reported at that list's line, not the section's. */
static void test_backend_errors_at_the_key(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_prepared *p;

	(void)state;
	/* 10 sizes x 14 rates x 2 formats > 256 */
	assert_int_equal(prepare("[camera a]\n"
				 "label = A\n"
				 "sizes = 640x480 320x240 160x120 1280x720 32x32 64x64 96x96 128x128 200x200 300x300\n"
				 "rates = 1 2 3 4 5 6 7 8 9 10 11 12 13 14\n", "a", &p, &m), -EINVAL);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 3, "camera a: too many modes");
	vc_msgs_free(&m);

	/* the VIA engine's sizes */
	assert_int_equal(prepare("[camera v]\n"
				 "backend = via\n"
				 "sizes = 640x480 1280x720\n", "v", &p, &m), -EINVAL);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 3, "camera v: size 1280x720 is outside what the VIA engine makes");
	vc_msgs_free(&m);
}

/* Backend keys are numbers in plain digits too: strtoul took "-18446744073709551104" as 512. */
static void test_backend_numbers_are_strict(void **state)
{
	static const char *const bad[] = { "-18446744073709551104", "+64", " 64", "0x40", "64 " };
	struct vc_msgs m = { 0 };
	struct vc_prepared *p;
	char text[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[camera v]\nbackend = via\nmodel_vram_mb = %s\n",
			 bad[i]);
		/* inih trims the blanks around a value: " 64" and "64 " are plain 64 for us */
		if (bad[i][0] == ' ' || bad[i][strlen(bad[i]) - 1] == ' ') {
			assert_int_equal(prepare(text, "v", &p, &m), 0);
			vc_prepared_free(p);
			continue;
		}
		assert_int_equal(prepare(text, "v", &p, &m), -EINVAL);
		assert_int_equal(m.n, 1);
		assert_msg(&m, 0, 3, "camera v: bad model_vram_mb");
		vc_msgs_free(&m);
	}
}

static bool offers(const struct vc_prepared *p, uint32_t fourcc)
{
	for (size_t i = 0; i < p->noffers; i++)
		if (p->offers[i].fmt.pixelformat == fourcc)
			return true;
	return false;
}

/*
 * A 33x17 mono clip: GREY and RGB24 can be that size, 4:2:0 cannot (the bridge refuses odd
 * 4:2:0 sizes, and one refused tuple fails the whole declaration at run time).
 */
static void test_no_offer_the_bridge_refuses(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_prepared *p;
	char text[256];

	(void)state;
	write_mono_clip(33, 17);
	snprintf(text, sizeof(text), "[camera f]\nbackend = file\nfile = %s\n", clip);
	assert_int_equal(prepare(text, "f", &p, &m), 0);
	assert_int_equal(m.n, 0);
	assert_true(offers(p, V4L2_PIX_FMT_GREY));
	assert_true(offers(p, V4L2_PIX_FMT_RGB24));
	for (size_t i = 0; i < p->noffers; i++) {
		const struct viacam_format *f = &p->offers[i].fmt;

		if (f->pixelformat == V4L2_PIX_FMT_YUV420 ||
		    f->pixelformat == V4L2_PIX_FMT_YVU420 || f->pixelformat == V4L2_PIX_FMT_NV12)
			fail_msg("offer %zu is 4:2:0 at the odd size %ux%u", i, f->width, f->height);
	}
	vc_prepared_free(p);

	/* asked for 4:2:0 only: nothing is left, and --check says so */
	snprintf(text, sizeof(text), "[camera f]\nbackend = file\nfile = %s\nformats = YUV420\n",
		 clip);
	assert_int_equal(prepare(text, "f", &p, &m), -EINVAL);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 4, "camera f: nothing to offer");
	vc_msgs_free(&m);
	unlink(clip);
}

/*
 * The consumer's mode in a stream event picks the offer the session starts. A zero
 * interval (0/0 matched every offer, as 0 * den == num * 0) must pick none: the session
 * divides by the event's denominator once it has an offer.
 */
static void test_offer_for_a_zero_interval(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_prepared *p;

	(void)state;
	assert_int_equal(prepare("[camera a]\nlabel = A\nformats = YUYV\nsizes = 640x480\n"
				 "rates = 30 15\n", "a", &p, &m), 0);
	assert_non_null(vc_offer_find(p, V4L2_PIX_FMT_YUYV, 640, 480, 1, 30));
	assert_non_null(vc_offer_find(p, V4L2_PIX_FMT_YUYV, 640, 480, 2, 30));
	assert_null(vc_offer_find(p, V4L2_PIX_FMT_YUYV, 640, 480, 1, 25));
	assert_null(vc_offer_find(p, V4L2_PIX_FMT_YUYV, 640, 480, 0, 0));
	assert_null(vc_offer_find(p, V4L2_PIX_FMT_YUYV, 640, 480, 1, 0));
	assert_null(vc_offer_find(p, V4L2_PIX_FMT_YUYV, 640, 480, 0, 30));
	vc_prepared_free(p);
}

/* One check pass: the parser's problems and the backends' together, sorted by line. */
static void test_one_pass(void **state)
{
	struct vc_daemon d = { .ctl_fd = -1 };
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_msgs m = { 0 };
	struct vc_conf *conf = (void *)1;

	(void)state;
	write_config("[camera a]\n"			/* 1 */
		     "video_nr = x\n"			/* 2: the parser's */
		     "pattern = nosuch\n"		/* 3: the pattern backend's */
		     "[camera b]\n"			/* 4 */
		     "backend = file\n"			/* 5 */
		     "file = /nonexistent.y4m\n"	/* 6: the file backend's */
		     "[camera c]\n"			/* 7 */
		     "label = a\n"			/* 8 */
		     "ctrl.nosuch = 1\n"		/* 9: the session's */
		     "[camera d]\n"			/* 10 */
		     "backend = nosuch\n"		/* 11: the parser's, no backend check */
		     "sizes = 64x64 1x1\n");		/* 12: the parser's */
	/* c's label clashes with a's (line 8); d gets no backend check (no backend) */
	strcpy(d.config_path, path);
	assert_int_equal(vc_daemon_check(&d, &conf, prep, &m), -EINVAL);
	assert_null(conf);
	assert_int_equal(m.n, 7);
	assert_msg(&m, 0, 2, "bad value 'x' for video_nr");
	assert_msg(&m, 1, 3, "camera a: unknown pattern 'nosuch'");
	assert_msg(&m, 2, 6, "camera b: /nonexistent.y4m: No such file or directory");
	assert_msg(&m, 3, 8, "camera 'c' has the label 'a' of camera 'a'");
	assert_msg(&m, 4, 9, "camera c: backend 'pattern' has no control 'nosuch'");
	assert_msg(&m, 5, 11, "unknown backend 'nosuch'");
	assert_msg(&m, 6, 12, "size '1x1' in sizes is out of range");
	vc_msgs_free(&m);
	unlink(path);
}

/* Runs @fn(@d, @why) with stderr in @log (the daemon logs there). */
static void logged(int (*fn)(struct vc_daemon *, const char *), struct vc_daemon *d,
		   const char *why, char *log, size_t size)
{
	char name[] = "/tmp/test-daemon-log-XXXXXX";
	int fd = mkstemp(name), saved = dup(2);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	fn(d, why);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, log, size - 1, 0);
	log[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(name);
}

static void assert_logged(const char *log, const char *want)
{
	if (!strstr(log, want))
		fail_msg("the log lacks '%s'; it is:\n%s", want, log);
}

static void assert_not_logged(const char *log, const char *unwanted)
{
	if (strstr(log, unwanted))
		fail_msg("the log has '%s'; it is:\n%s", unwanted, log);
}

/* The state file goes in a directory of its own, as /run/viacamd (only its owner writes it). */
static void daemon_init(struct vc_daemon *d, char *state_path)
{
	memset(d, 0, sizeof(*d));
	assert_int_equal(sd_event_new(&d->event), 0);
	d->ctl_fd = open("/dev/null", O_RDWR | O_CLOEXEC);	/* VIACAM_IOC_*: ENOTTY */
	assert_true(d->ctl_fd >= 0);
	strcpy(state_path, "/tmp/test-daemon-run-XXXXXX");
	assert_non_null(mkdtemp(state_path));
	strcat(state_path, "/cameras");
	d->state_path = state_path;
	strcpy(d->config_path, path);
}

static void daemon_fini(struct vc_daemon *d)
{
	char dir[64];

	vc_daemon_stop(d);
	close(d->ctl_fd);
	sd_event_unref(d->event);
	unlink(d->state_path);
	snprintf(dir, sizeof(dir), "%s", d->state_path);
	*strrchr(dir, '/') = 0;
	assert_int_equal(rmdir(dir), 0);	/* nothing else was left there */
}

static int run_once(struct vc_daemon *d, const char *why)
{
	(void)why;
	return sd_event_run(d->event, 5000000);
}

/* One pass of the event loop, waiting at most 3 ms. */
static int run_once_briefly(struct vc_daemon *d, const char *why)
{
	(void)why;
	return sd_event_run(d->event, 3000);
}

static int retry_now(struct vc_daemon *d, const char *why)
{
	(void)why;
	vc_daemon_retry(d);
	return 0;
}

/*
 * A camera the bridge does not create: the reload says "applied" for what it applied only,
 * names the camera and why, and the next reload tries again even if the file did not change.
 */
static void test_reload_says_what_is_served_and_retries(void **state)
{
	struct vc_daemon d;
	char state_path[64], log[8192];

	(void)state;
	write_config("[camera a]\n[camera b]\nlabel = B\n");
	daemon_init(&d, state_path);
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_not_logged(log, "configuration applied: 2 cameras");
	assert_logged(log, "configuration applied: 0 of 2 cameras served; not served: "
		      "a (VIACAM_IOC_ADD: Inappropriate ioctl for device), "
		      "b (VIACAM_IOC_ADD: Inappropriate ioctl for device)");

	/* the same file again: both are tried again */
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_logged(log, "camera a: /dev/viacam: VIACAM_IOC_ADD");
	assert_logged(log, "camera b: /dev/viacam: VIACAM_IOC_ADD");
	assert_logged(log, "configuration applied: 0 of 2 cameras served");
	assert_int_equal(vc_daemon_served(&d), 0);
	daemon_fini(&d);
	unlink(path);
}

/* Cameras not served are tried again on a timer: after 1 s, 2 s, 4 s ... at most 5 min. */
static void test_retry_timer_backs_off(void **state)
{
	struct vc_daemon d;
	char state_path[64], log[8192];
	uint64_t now, when;

	(void)state;
	write_config("[camera a]\n[camera b]\nlabel = B\n");
	daemon_init(&d, state_path);
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_logged(log, "; next try in 1 s");
	assert_non_null(d.retry_timer);
	assert_int_equal(d.retry_us, VC_RETRY_MIN_US);
	assert_true(sd_event_now(d.event, CLOCK_MONOTONIC, &now) >= 0);
	assert_int_equal(sd_event_source_get_time(d.retry_timer, &when), 0);
	assert_true(when > now && when <= now + VC_RETRY_MIN_US);

	/* the event loop runs the retry */
	logged(run_once, &d, NULL, log, sizeof(log));
	assert_logged(log, "trying again the cameras not served");
	assert_logged(log, "camera a: /dev/viacam: VIACAM_IOC_ADD");
	assert_logged(log, "after trying again: 0 of 2 cameras served; not served: "
		      "a (VIACAM_IOC_ADD: Inappropriate ioctl for device), "
		      "b (VIACAM_IOC_ADD: Inappropriate ioctl for device); next try in 2 s");
	assert_int_equal(d.retry_us, 2 * VC_RETRY_MIN_US);

	/* doubling up to the cap */
	for (int i = 0; i < 12; i++)
		logged(retry_now, &d, NULL, log, sizeof(log));
	assert_int_equal(d.retry_us, VC_RETRY_MAX_US);
	assert_logged(log, "next try in 300 s");

	/* a reload starts again at 1 s */
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_int_equal(d.retry_us, VC_RETRY_MIN_US);

	/* nothing left to serve: no retry */
	unlink(path);
	write_config("; no cameras\n");	/* an empty file is refused (test-config) */
	strcpy(d.config_path, path);
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_logged(log, "configuration applied: 0 cameras");
	assert_int_equal(d.retry_us, 0);
	daemon_fini(&d);
	unlink(path);
}

/*
 * optional = yes: a camera whose source is absent (a missing clip: ENOENT; no VIA chip:
 * ENODEV) does not make the file invalid. It is not served, the summary says why once, the
 * timer does not retry it, and a reload tries it again. Without optional it is an error, and
 * other failures of an optional camera (a bad key) are errors too.
 */
static void test_optional_camera_absent(void **state)
{
	struct vc_prepared *prep[VC_MAX_CAMERAS] = { 0 };
	struct vc_msgs m = { 0 };
	struct vc_conf *conf;
	struct vc_daemon d;
	char state_path[64], log[8192];

	(void)state;
	write_config("[camera clip]\nbackend = file\nfile = /nonexistent/clip.y4m\noptional = yes\n"
		     "[camera via]\nbackend = via\ntransport = pci\n"
		     "pci_device = 0000:ff:1f.7\noptional = yes\n");
	daemon_init(&d, state_path);
	assert_int_equal(vc_daemon_check(&d, &conf, prep, &m), 0);
	assert_int_equal(m.n, 0);
	assert_non_null(strstr(conf->cams[0].absent, "/nonexistent/clip.y4m"));
	assert_true(conf->cams[1].absent[0] != 0);
	assert_null(prep[0]);
	assert_null(prep[1]);
	vc_conf_free(conf);

	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_logged(log, "configuration applied: 0 of 2 cameras served; not served: "
		      "clip (optional, absent: ");
	assert_logged(log, "via (optional, absent: ");
	assert_not_logged(log, "next try");
	assert_int_equal(d.retry_us, 0);
	/* the reason is not logged as a problem of the file */
	assert_not_logged(log, "is invalid");
	/* a reload tries them again (and says so again, once) */
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_logged(log, "not served: clip (optional, absent: ");
	daemon_fini(&d);
	unlink(path);

	/* without optional: an error at the section */
	write_config("[camera clip]\nbackend = file\nfile = /nonexistent/clip.y4m\n");
	daemon_init(&d, state_path);
	assert_int_equal(vc_daemon_check(&d, &conf, prep, &m), -EINVAL);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 3, "camera clip: ");
	vc_msgs_free(&m);
	daemon_fini(&d);
	unlink(path);

	/* optional does not excuse a bad key */
	write_config("[camera p]\noptional = yes\npattern = stripes\n");
	daemon_init(&d, state_path);
	assert_int_equal(vc_daemon_check(&d, &conf, prep, &m), -EINVAL);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 3, "stripes");
	vc_msgs_free(&m);
	daemon_fini(&d);
	unlink(path);
}

/* ---------------------------------------------------------------------------
 * A reload never applies half a file
 */

#define NCAMS 64
#define SECTION 64		/* bytes per section: a 1 KiB write ends between two */
static char whole[NCAMS * SECTION + 1];

static void make_whole(void)
{
	for (unsigned int i = 0; i < NCAMS; i++)
		snprintf(whole + i * SECTION, SECTION + 1,
			 "[camera c%02u]\nrates = 30 15\nsizes = 640x480 320x240\n; 0123456789\n",
			 i % 100);
	assert_int_equal(strlen(whole), NCAMS * SECTION);
}

/* The configuration in force is the whole file: every camera, every value complete. */
static void assert_whole(const struct vc_daemon *d)
{
	assert_non_null(d->conf);
	if (d->conf->ncams != NCAMS)
		fail_msg("a reload applied %zu of the %d cameras", d->conf->ncams, NCAMS);
	for (size_t i = 0; i < NCAMS; i++) {
		const struct vc_cam_conf *c = &d->conf->cams[i];

		if (c->nintervals != 2 || c->intervals[1][1] != 15 || c->nsizes != 2 ||
		    c->sizes[1][1] != 240)
			fail_msg("camera %s was applied cut: %zu rates (the second 1/%u), %zu sizes",
				 c->name, c->nintervals, c->intervals[1][1], c->nsizes);
	}
}

/* Runs @fn with stderr thrown away (64 cameras not served log a lot). */
static int quiet(int (*fn)(struct vc_daemon *, const char *), struct vc_daemon *d,
		 const char *why)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC), saved = dup(2), r;

	assert_true(null >= 0 && saved >= 0);
	fflush(stderr);
	dup2(null, 2);
	r = fn(d, why);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(null);
	return r;
}

/* Reloads ended so far, applied or rejected. */
static unsigned long ended(const struct vc_daemon *d)
{
	return d->reloads + d->rejected;
}

static unsigned long settle_from;

/* Runs the event loop until more than settle_from reloads ended, at most 5 s. */
static int settle(struct vc_daemon *d, const char *why)
{
	(void)why;
	for (int i = 0; i < 50 && ended(d) <= settle_from; i++)
		sd_event_run(d->event, 100000);
	return ended(d) > settle_from ? 0 : -ETIMEDOUT;
}

static void write_all(int fd, const char *p, size_t len)
{
	assert_int_equal(write(fd, p, len), (ssize_t)len);
}

struct rewriter {
	int rewrites;
	atomic_int done;
};

/* The writer: the file rewritten in place, O_TRUNC then 1 KiB writes. */
static void *rewrite(void *arg)
{
	struct rewriter *w = arg;

	for (int r = 0; r < w->rewrites; r++) {
		int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

		assert_true(fd >= 0);
		for (size_t off = 0; off < NCAMS * SECTION; off += 1024) {
			write_all(fd, whole + off, 1024);
			usleep(10000);
		}
		close(fd);
		usleep(10000);
	}
	atomic_store(&w->done, 1);
	return NULL;
}

/*
 * A 64-camera file rewritten in place (O_TRUNC, 1 KiB writes) while SIGHUPs arrive: 13, 25,
 * 31, 38 and 44 of the 64 cameras were applied, the rest removed under their consumers, and
 * a cut inside a value applied as written ("rates = 30 15" cut after "30 1"). A reload
 * applies a file only once it did not change while it was read and has held still since.
 */
static void test_reload_never_applies_half_a_file(void **state)
{
	struct rewriter w = { .rewrites = 20 };
	char state_path[64];
	struct vc_daemon d;
	pthread_t writer;
	size_t cut;
	int fd, hups = 0;

	(void)state;
	make_whole();
	write_config(whole);
	daemon_init(&d, state_path);
	d.settle_us = VC_SETTLE_US;
	settle_from = ended(&d);
	quiet(vc_daemon_reload, &d, "start");
	assert_int_equal(quiet(settle, &d, NULL), 0);
	assert_int_equal(d.reloads, 1);
	assert_whole(&d);

	/* caught after the first 1 KiB (16 whole sections): nothing is applied yet */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	write_all(fd, whole, 1024);
	settle_from = ended(&d);
	quiet(vc_daemon_reload, &d, "SIGHUP");
	assert_whole(&d);
	write_all(fd, whole + 1024, sizeof(whole) - 1 - 1024);
	close(fd);
	assert_int_equal(quiet(settle, &d, NULL), 0);
	assert_int_equal(d.reloads, 2);
	assert_whole(&d);

	/* caught inside a value: "rates = 30 1" */
	cut = (size_t)(strstr(whole + 2048, "rates = 30 15") - whole) + strlen("rates = 30 1");
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	write_all(fd, whole, cut);
	settle_from = ended(&d);
	quiet(vc_daemon_reload, &d, "SIGHUP");
	assert_whole(&d);
	write_all(fd, whole + cut, sizeof(whole) - 1 - cut);
	close(fd);
	assert_int_equal(quiet(settle, &d, NULL), 0);
	assert_whole(&d);

	/* the measurement: 20 rewrites under 40 SIGHUPs */
	assert_int_equal(pthread_create(&writer, NULL, rewrite, &w), 0);
	while (!atomic_load(&w.done)) {
		if (hups++ < 40)
			quiet(vc_daemon_reload, &d, "SIGHUP");
		for (int i = 0; i < 8; i++)	/* about 25 ms */
			quiet(run_once_briefly, &d, NULL);
		assert_whole(&d);
	}
	pthread_join(writer, NULL);
	settle_from = ended(&d);
	quiet(vc_daemon_reload, &d, "SIGHUP");
	assert_int_equal(quiet(settle, &d, NULL), 0);
	assert_whole(&d);
	/*
	 * The SIGHUPs during the rewrites joined one reload, applied once the writer stopped; no
	 * half file was rejected either (systemctl reload would have failed).
	 */
	assert_int_equal(d.reloads, 4);
	assert_int_equal(d.rejected, 0);
	daemon_fini(&d);
	unlink(path);
}

/* @p's text in @buf ("" when it cannot be read). */
static void read_text(const char *p, char *buf, size_t size)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : 0;

	buf[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
}

/*
 * The state file is root's, in a directory only root writes: written whole (a temporary file
 * made with O_EXCL|O_NOFOLLOW in that directory, fsync, rename), never through a symlink,
 * never over what is not a regular file, never in a directory others can write. A symlink
 * planted at the old temporary name STATE.new made root overwrite the file it named, and a
 * --state naming a device node replaced the node with a regular file.
 */
static void test_state_file_written_safely(void **state)
{
	char state_path[64], dir[64], victim[64] = "/tmp/test-daemon-victim-XXXXXX", other[80];
	char text[1024], log[8192], want[64];
	struct vc_daemon d;
	struct stat st;
	int fd;

	(void)state;
	write_config("[camera a]\n");
	daemon_init(&d, state_path);
	snprintf(dir, sizeof(dir), "%s", state_path);
	*strrchr(dir, '/') = 0;
	fd = mkstemp(victim);
	assert_true(fd >= 0);
	write_all(fd, "precious\n", 9);
	close(fd);

	/* written, and nothing else left in its directory */
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	read_text(state_path, text, sizeof(text));
	snprintf(want, sizeof(want), "pid %d\nreloads 1 0\n", (int)getpid());
	assert_string_equal(text, want);
	assert_int_equal(lstat(state_path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal((int)st.st_mode & 022, 0);

	/* a symlink where the temporary file used to be written */
	snprintf(other, sizeof(other), "%s.new", state_path);
	assert_int_equal(symlink(victim, other), 0);
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	read_text(victim, text, sizeof(text));
	assert_string_equal(text, "precious\n");
	read_text(state_path, text, sizeof(text));
	assert_non_null(strstr(text, "reloads 2 0\n"));
	unlink(other);

	/* the state file a symlink: refused, the symlink and the file it names stay */
	unlink(state_path);
	assert_int_equal(symlink(victim, state_path), 0);
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_logged(log, "cannot write the state file");
	assert_logged(log, "a symbolic link, not a regular file");
	assert_int_equal(lstat(state_path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	read_text(victim, text, sizeof(text));
	assert_string_equal(text, "precious\n");
	unlink(state_path);

	/* not a regular file (a FIFO here, a device node alike): refused, left as it is */
	assert_int_equal(mkfifo(state_path, 0600), 0);
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_logged(log, "a FIFO, not a regular file");
	assert_int_equal(lstat(state_path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	unlink(state_path);

	/* a directory others can write (even with the sticky bit): nothing is written there */
	assert_int_equal(chmod(dir, 01777), 0);
	logged(vc_daemon_reload, &d, "test", log, sizeof(log));
	assert_logged(log, "writable by others");
	assert_int_equal(lstat(state_path, &st), -1);
	assert_int_equal(chmod(dir, 0700), 0);

	daemon_fini(&d);
	unlink(victim);
	unlink(path);
}

/*
 * One viacamd per state file: a second one adopted the first one's cameras. The lock is an
 * flock() on STATE.lock next to the state file, with the holder's pid in it.
 */
static void test_single_instance_lock(void **state)
{
	char state_path[64], lock[80], why[256], text[64], want[32], dir[64];
	struct vc_daemon d;
	pid_t holder = 0;
	int a, b;

	(void)state;
	write_config("; no cameras\n");
	daemon_init(&d, state_path);
	snprintf(lock, sizeof(lock), "%s.lock", state_path);
	snprintf(dir, sizeof(dir), "%s", state_path);
	*strrchr(dir, '/') = 0;

	a = vc_daemon_lock(state_path, &holder, why, sizeof(why));
	assert_true(a >= 0);
	assert_true(fcntl(a, F_GETFD) & FD_CLOEXEC);
	read_text(lock, text, sizeof(text));
	snprintf(want, sizeof(want), "%d\n", (int)getpid());
	assert_string_equal(text, want);
	/* a second open file description does not get it (flock), and learns who has it */
	assert_int_equal(vc_daemon_lock(state_path, &holder, why, sizeof(why)), -EBUSY);
	assert_int_equal(holder, getpid());
	close(a);
	b = vc_daemon_lock(state_path, &holder, why, sizeof(why));
	assert_true(b >= 0);
	close(b);

	/* a lock file that is a symlink is not followed */
	unlink(lock);
	assert_int_equal(symlink("/nonexistent", lock), 0);
	assert_true(vc_daemon_lock(state_path, &holder, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, ".lock'"));
	unlink(lock);
	/* nor is one made in a directory others can write */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(vc_daemon_lock(state_path, &holder, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "writable by others"));
	assert_int_equal(chmod(dir, 0700), 0);
	daemon_fini(&d);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backend_errors_at_the_key),
		cmocka_unit_test(test_backend_numbers_are_strict),
		cmocka_unit_test(test_no_offer_the_bridge_refuses),
		cmocka_unit_test(test_offer_for_a_zero_interval),
		cmocka_unit_test(test_one_pass),
		cmocka_unit_test(test_reload_says_what_is_served_and_retries),
		cmocka_unit_test(test_retry_timer_backs_off),
		cmocka_unit_test(test_optional_camera_absent),
		cmocka_unit_test(test_reload_never_applies_half_a_file),
		cmocka_unit_test(test_state_file_written_safely),
		cmocka_unit_test(test_single_instance_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
