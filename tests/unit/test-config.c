// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-config.c - viacamd's configuration parser: good files give the values they say, bad
 * ones give every problem with its exact line, and nothing of a bad file is kept.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/videodev2.h>

#include "config.h"

static char path[64];

static void write_file(const char *text)
{
	FILE *f;

	strcpy(path, "/tmp/test-config-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Loads @text; returns the result, messages in @m. */
static int load(const char *text, struct vc_conf **conf, struct vc_msgs *m)
{
	int r;

	write_file(text);
	r = vc_conf_load(path, conf, m);
	unlink(path);
	return r;
}

/* Asserts that message @i is "PATH:LINE: ...WANT..." */
static void assert_msg(const struct vc_msgs *m, size_t i, int line, const char *want)
{
	char prefix[128];

	assert_true(i < m->n);
	snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	if (strncmp(m->v[i], prefix, strlen(prefix)) != 0 || !strstr(m->v[i], want))
		fail_msg("message %zu is '%s', expected '%s...%s'", i, m->v[i], prefix, want);
}

static void test_good_file(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c;
	const struct vc_cam_conf *a, *b;

	(void)state;
	assert_int_equal(load("; a comment\n"
			      "[camera front]\n"
			      "label = Front camera   ; inline comment\n"
			      "video_nr = 10\n"
			      "backend_nr = auto\n"
			      "timeout_ms = 500\n"
			      "backend = pattern\n"
			      "formats = yuyv, NV12 I420 rgb24\n"
			      "sizes = 640x480 320x240\n"
			      "rates = 30 7.5 30000/1001\n"
			      "pattern = gradient\n"
			      "ctrl.brightness = -20\n"
			      "ctrl.horizontal_flip = yes\n"
			      "\n"
			      "[camera back]\n"
			      "backend = file\n"
			      "file = /tmp/x.y4m\n"
			      "[camera empty]\n", &c, &m), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(c->ncams, 3);
	a = vc_conf_camera(c, "front");
	assert_non_null(a);
	assert_string_equal(a->label, "Front camera");
	assert_int_equal(a->line, 2);
	assert_int_equal(a->video_nr, 10);
	assert_int_equal(a->backend_nr, -1);
	assert_int_equal(a->timeout_ms, 500);
	assert_string_equal(a->backend, "pattern");
	assert_int_equal(a->nformats, 4);
	assert_int_equal(a->formats[0], V4L2_PIX_FMT_YUYV);
	assert_int_equal(a->formats[1], V4L2_PIX_FMT_NV12);
	assert_int_equal(a->formats[2], V4L2_PIX_FMT_YUV420);
	assert_int_equal(a->formats[3], V4L2_PIX_FMT_RGB24);
	assert_int_equal(a->nsizes, 2);
	assert_int_equal(a->sizes[1][0], 320);
	assert_int_equal(a->sizes[1][1], 240);
	assert_int_equal(a->nintervals, 3);
	assert_int_equal(a->intervals[0][0], 1);	/* 30 fps = 1/30 s */
	assert_int_equal(a->intervals[0][1], 30);
	assert_int_equal(a->intervals[1][0], 10);	/* 7.5 fps = 10/75 s */
	assert_int_equal(a->intervals[1][1], 75);
	assert_int_equal(a->intervals[2][0], 1001);
	assert_int_equal(a->intervals[2][1], 30000);
	assert_int_equal(a->nkeys, 1);
	assert_string_equal(a->keys[0].key, "pattern");
	assert_string_equal(a->keys[0].value, "gradient");
	assert_int_equal(a->keys[0].line, 11);
	assert_int_equal(a->nctrls, 2);
	assert_string_equal(a->ctrls[0].name, "brightness");
	assert_int_equal(a->ctrls[0].value, -20);
	assert_int_equal(a->ctrls[0].line, 12);
	assert_int_equal(a->ctrls[1].value, 1);
	b = vc_conf_camera(c, "back");
	assert_non_null(b);
	assert_string_equal(b->label, "back");	/* the name by default */
	assert_string_equal(b->backend, "file");
	b = vc_conf_camera(c, "empty");	/* a section without keys is a camera too */
	assert_non_null(b);
	assert_string_equal(b->backend, "pattern");
	assert_int_equal(b->line, 18);
	assert_int_equal(b->video_nr, -1);
	vc_conf_free(c);
}

static void test_every_error_with_its_line(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c = (void *)1;

	(void)state;
	assert_int_equal(load("[camera a]\n"			/* 1 */
			      "video_nr = 300\n"		/* 2 */
			      "sizes = 640x481\n"		/* 3 */
			      "rates = 0\n"			/* 4 */
			      "formats = YUYV H264\n"		/* 5 */
			      "pattern = bars\n"		/* 6 */
			      "colour = blue\n"			/* 7: not a pattern key */
			      "label = x\n"			/* 8 */
			      "label = y\n"			/* 9: duplicate */
			      "timeout_ms = 99999999\n"		/* 10 */
			      "[cam b]\n"			/* 11: unknown section */
			      "[camera c]\n"			/* 12 */
			      "backend = nosuch\n"		/* 13 */
			      "ctrl.x = big\n",			/* 14 */
			      &c, &m), -EINVAL);
	assert_null(c);
	assert_int_equal(m.n, 10);
	assert_msg(&m, 0, 2, "bad value '300' for video_nr");
	assert_msg(&m, 1, 3, "even widths and heights");
	assert_msg(&m, 2, 4, "bad rates '0'");
	assert_msg(&m, 3, 5, "bad formats 'YUYV H264'");
	assert_msg(&m, 4, 9, "duplicate key 'label' (first at line 8)");
	assert_msg(&m, 5, 10, "bad value '99999999' for timeout_ms");
	/* the end of section a: its backend keys */
	assert_msg(&m, 6, 7, "unknown key 'colour' (for backend 'pattern')");
	assert_msg(&m, 7, 11, "unknown section [cam b]");
	assert_msg(&m, 8, 14, "bad value 'big' for ctrl.x");
	assert_msg(&m, 9, 13, "unknown backend 'nosuch' (known: pattern, file, v4l2, via)");
	vc_msgs_free(&m);
}

static void test_cross_checks(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c;

	(void)state;
	assert_int_equal(load("[camera a]\nvideo_nr = 5\n"
			      "[camera b]\nbackend_nr = 5\nlabel = a\n"
			      "[camera a]\n"
			      "[camera bad/name]\n"
			      "key = outside\n", &c, &m), -EINVAL);
	assert_int_equal(m.n, 4);
	assert_msg(&m, 0, 6, "camera 'a' is defined twice (first at line 1)");
	assert_msg(&m, 1, 7, "bad camera name 'bad/name'");
	assert_msg(&m, 2, 3, "camera 'b' has the label 'a' of camera 'a' (line 1)");
	assert_msg(&m, 3, 3, "camera 'b' wants /dev/video5, which camera 'a' (line 1) wants too");
	vc_msgs_free(&m);

	assert_int_equal(load("label = x\n[camera a]\n", &c, &m), -EINVAL);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 1, "key 'label' outside a section");
	vc_msgs_free(&m);
}

static void test_syntax_and_long_lines(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c;
	char text[1024];

	(void)state;
	assert_int_equal(load("[camera a]\nthis line has no equals sign\n", &c, &m), -EINVAL);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 2, "syntax error");
	vc_msgs_free(&m);

	snprintf(text, sizeof(text), "[camera a]\nlabel = %0400d\nvideo_nr = x\n", 7);
	assert_int_equal(load(text, &c, &m), -EINVAL);
	assert_int_equal(m.n, 2);
	assert_msg(&m, 0, 2, "line too long");
	assert_msg(&m, 1, 3, "bad value 'x' for video_nr");
	vc_msgs_free(&m);
}

static void test_missing_file(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c;

	(void)state;
	assert_int_equal(vc_conf_load("/nonexistent/viacam.conf", &c, &m), -ENOENT);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.v[0], "/nonexistent/viacam.conf: cannot read: No such file or directory");
	vc_msgs_free(&m);
}

static void test_changes(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *a, *b;
	const struct vc_cam_conf *x, *y;

	(void)state;
	assert_int_equal(load("[camera a]\nlabel = one\npattern = bars\nctrl.hue = 5\n", &a, &m), 0);
	assert_int_equal(load("[camera a]\nlabel = two\npattern = bars\nctrl.hue = 6\n", &b, &m), 0);
	x = vc_conf_camera(a, "a");
	y = vc_conf_camera(b, "a");
	assert_true(vc_cam_same_backend(x, y));
	assert_false(vc_cam_same_ctrls(x, y));
	assert_true(vc_cam_same_nodes(x, y));
	vc_conf_free(b);
	assert_int_equal(load("[camera a]\nlabel = one\npattern = gradient\nvideo_nr = 3\n", &b, &m), 0);
	y = vc_conf_camera(b, "a");
	assert_false(vc_cam_same_backend(x, y));
	assert_false(vc_cam_same_nodes(x, y));
	vc_conf_free(a);
	vc_conf_free(b);
}

static void test_fourcc_and_ctrl_names(void **state)
{
	uint32_t f;
	char buf[64];

	(void)state;
	assert_int_equal(vc_parse_fourcc("yuy2", &f), 0);
	assert_int_equal(f, V4L2_PIX_FMT_YUYV);
	assert_int_equal(vc_parse_fourcc("MJPG", &f), 0);
	assert_int_equal(f, V4L2_PIX_FMT_MJPEG);
	assert_int_equal(vc_parse_fourcc("H264", &f), -EINVAL);
	vc_ctrl_key_name("Horizontal Flip", buf, sizeof(buf));
	assert_string_equal(buf, "horizontal_flip");
	vc_ctrl_key_name("White Balance, Auto", buf, sizeof(buf));
	assert_string_equal(buf, "white_balance_auto");
	vc_ctrl_key_name("  Test   Pattern ", buf, sizeof(buf));
	assert_string_equal(buf, "test_pattern");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_file),
		cmocka_unit_test(test_every_error_with_its_line),
		cmocka_unit_test(test_cross_checks),
		cmocka_unit_test(test_syntax_and_long_lines),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_fourcc_and_ctrl_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
