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
#include <sys/stat.h>
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
			      "consumers = 3\n"
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
	assert_int_equal(a->consumers, 3);
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
	assert_int_equal(a->keys[0].line, 12);
	assert_int_equal(a->nctrls, 2);
	assert_string_equal(a->ctrls[0].name, "brightness");
	assert_int_equal(a->ctrls[0].value, -20);
	assert_int_equal(a->ctrls[0].line, 13);
	assert_int_equal(a->ctrls[1].value, 1);
	b = vc_conf_camera(c, "back");
	assert_non_null(b);
	assert_string_equal(b->label, "back");	/* the name by default */
	assert_string_equal(b->backend, "file");
	b = vc_conf_camera(c, "empty");	/* a section without keys is a camera too */
	assert_non_null(b);
	assert_string_equal(b->backend, "pattern");
	assert_int_equal(b->line, 19);
	assert_int_equal(b->video_nr, -1);
	assert_int_equal(b->consumers, 1);	/* one capture node by default */
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
			      "ctrl.x = big\n"			/* 14 */
			      "consumers = 9\n",		/* 15 */
			      &c, &m), -EINVAL);
	assert_null(c);
	/* one list, sorted by line, each at the line of the key that caused it */
	assert_int_equal(m.n, 11);
	assert_msg(&m, 0, 2, "bad value '300' for video_nr");
	assert_msg(&m, 1, 3, "size '640x481' in sizes is odd");
	assert_msg(&m, 2, 4, "rate '0' in rates has a zero");
	assert_msg(&m, 3, 5, "unknown format 'H264' in formats");
	assert_msg(&m, 4, 7, "unknown key 'colour' (for backend 'pattern')");
	assert_msg(&m, 5, 9, "duplicate key 'label' (first at line 8)");
	assert_msg(&m, 6, 10, "bad value '99999999' for timeout_ms");
	assert_msg(&m, 7, 11, "unknown section [cam b]");
	assert_msg(&m, 8, 13, "unknown backend 'nosuch' (known: pattern, file, v4l2, gst, pipewire, via)");
	assert_msg(&m, 9, 14, "bad value 'big' for ctrl.x");
	assert_msg(&m, 10, 15, "bad value '9' for consumers (1-8: capture nodes, one application each)");
	vc_msgs_free(&m);
}

/* Every syntax error is reported (libinih itself names only the first one). */
static void test_every_syntax_error(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c;

	(void)state;
	assert_int_equal(load("[camera a]\n"		/* 1 */
			      "no equals sign\n"	/* 2 */
			      "[camera b\n"		/* 3 */
			      "also none ; x = 1\n"	/* 4: '=' only in the comment */
			      "label = fine\n"		/* 5 */
			      "video_nr = x\n",		/* 6 */
			      &c, &m), -EINVAL);
	assert_int_equal(m.n, 4);
	assert_msg(&m, 0, 2, "syntax error");
	assert_msg(&m, 1, 3, "syntax error");
	assert_msg(&m, 2, 4, "syntax error");
	assert_msg(&m, 3, 6, "bad value 'x' for video_nr");
	vc_msgs_free(&m);
}

/*
 * libinih reads an indented line as more of the previous key's value, which came out as
 * "duplicate key 'label'": say what is wrong, at the indented line.
 */
static void test_indented_lines(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c;

	(void)state;
	assert_int_equal(load("[camera a]\n"		/* 1 */
			      "label = x\n"		/* 2 */
			      "  video_nr = 3\n"	/* 3 */
			      "\tsizes = 1x1\n"		/* 4 */
			      "  ; an indented comment is fine\n"
			      "   \n"			/* so is a line of blanks */
			      "rates = 30\n",		/* 7 */
			      &c, &m), -EINVAL);
	assert_int_equal(m.n, 2);
	assert_msg(&m, 0, 3, "indented line");
	assert_msg(&m, 1, 4, "indented line");
	for (size_t i = 0; i < m.n; i++)
		assert_null(strstr(m.v[i], "duplicate"));
	vc_msgs_free(&m);
}

/*
 * Numbers are plain decimal digits: no signs (strtoul/sscanf took "-4294966656" as 640), no
 * overflow, no zero where it means nothing, and each list word is checked on its own.
 */
static void test_numbers_are_strict(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c = (void *)1;

	(void)state;
	assert_int_equal(load("[camera a]\n"				/* 1 */
			      "sizes = -4294966656x480\n"		/* 2 */
			      "[camera b]\n"				/* 3 */
			      "rates = +30 -4294967266\n"		/* 4 */
			      "[camera c]\n"				/* 5 */
			      "sizes = 640x480 4294967936x480\n"	/* 6: wraps to 640 */
			      "[camera d]\n"				/* 7 */
			      "sizes = 0x0\n"				/* 8 */
			      "[camera e]\n"				/* 9 */
			      "rates = 4294967326\n"			/* 10: wraps to 30 */
			      "[camera f]\n"				/* 11 */
			      "rates = 30/0\n"				/* 12 */
			      "[camera g]\n"				/* 13 */
			      "rates = 0/1\n"				/* 14 */
			      "[camera h]\n"				/* 15 */
			      "rates = 1001\n"				/* 16 */
			      "[camera i]\n"				/* 17 */
			      "video_nr = +5\n"				/* 18 */
			      "timeout_ms = -0\n"			/* 19 */
			      "ctrl.brightness = +3\n"			/* 20 */
			      "[camera j]\n"				/* 21 */
			      "sizes = 640x 480\n"			/* 22 */
			      "rates = 7.5.1\n",			/* 23 */
			      &c, &m), -EINVAL);
	assert_null(c);
	/* every bad word, in its own message */
	assert_int_equal(m.n, 15);
	assert_msg(&m, 0, 2, "bad size '-4294966656x480' in sizes");
	assert_msg(&m, 1, 4, "bad rate '+30' in rates");
	assert_msg(&m, 2, 4, "bad rate '-4294967266' in rates");
	assert_msg(&m, 3, 6, "size '4294967936x480' in sizes is out of range");
	assert_msg(&m, 4, 8, "size '0x0' in sizes is out of range");
	assert_msg(&m, 5, 10, "rate '4294967326' in rates is out of range");
	assert_msg(&m, 6, 12, "rate '30/0' in rates has a zero");
	assert_msg(&m, 7, 14, "rate '0/1' in rates has a zero");
	assert_msg(&m, 8, 16, "rate '1001' in rates is out of range");
	assert_msg(&m, 9, 18, "bad value '+5' for video_nr");
	assert_msg(&m, 10, 19, "bad value '-0' for timeout_ms");
	assert_msg(&m, 11, 20, "bad value '+3' for ctrl.brightness");
	assert_msg(&m, 12, 22, "bad size '640x' in sizes");
	assert_msg(&m, 13, 22, "bad size '480' in sizes");
	assert_msg(&m, 14, 23, "bad rate '7.5.1' in rates");
	vc_msgs_free(&m);
}

/* No message may carry a raw control character or invalid UTF-8 (a terminal would act on it). */
static void assert_printable(const struct vc_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		for (const unsigned char *p = (const unsigned char *)m->v[i]; *p; p++)
			if (*p < 0x20 || *p == 0x7f || *p >= 0x80)
				fail_msg("message %zu has the raw byte 0x%02x: '%s'", i, *p, m->v[i]);
}

/*
 * A label becomes the capture node's card name (32 bytes with the NUL in struct
 * v4l2_capability): valid UTF-8 without control characters, at most 31 bytes, never cut.
 */
static void test_labels(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c = (void *)1;
	char text[512];

	(void)state;
	assert_int_equal(load("[camera a]\n"
			      "label = Caméra ☺ avant\n"
			      "[camera b]\n"
			      "label = 0123456789012345678901234567890\n", &c, &m), 0);
	assert_string_equal(vc_conf_camera(c, "a")->label, "Caméra ☺ avant");
	assert_int_equal(strlen(vc_conf_camera(c, "b")->label), 31);
	vc_conf_free(c);

	/* 30 ASCII bytes and a 2-byte character: 32 bytes, refused rather than cut mid-character */
	snprintf(text, sizeof(text), "[camera a]\n"		/* 1 */
		 "label = \x01" "bad\n"				/* 2 */
		 "[camera b]\n"					/* 3 */
		 "label = bad\xff" "byte\n"			/* 4 */
		 "[camera c]\n"					/* 5 */
		 "label = %s\n"					/* 6 */
		 "[camera d]\n"					/* 7 */
		 "label = del\x7f\n"				/* 8 */
		 "[camera e]\n"					/* 9 */
		 "label = c1\xc2\x85" "x\n"			/* 10 */
		 "[camera f]\n"					/* 11 */
		 "label = over\xc0\xaflong\n"			/* 12 */
		 "[camera g]\n"					/* 13 */
		 "sizes = 64x64\x1b[2J\n"			/* 14 */
		 "p\x1bttern = x\n",				/* 15 */
		 "012345678901234567890123456789é");
	assert_int_equal(load(text, &c, &m), -EINVAL);
	assert_null(c);
	assert_printable(&m);
	assert_int_equal(m.n, 8);
	assert_msg(&m, 0, 2, "label '\\x01bad' has a control character");
	assert_msg(&m, 1, 4, "label 'bad\\xffbyte' is not valid UTF-8");
	assert_msg(&m, 2, 6, "label is too long (32 bytes; at most 31)");
	assert_msg(&m, 3, 8, "label 'del\\x7f' has a control character");
	assert_msg(&m, 4, 10, "label 'c1\\xc2\\x85x' has a control character");
	assert_msg(&m, 5, 12, "label 'over\\xc0\\xaflong' is not valid UTF-8");
	assert_msg(&m, 6, 14, "bad size '64x64\\x1b[2J' in sizes");
	assert_msg(&m, 7, 15, "unknown key 'p\\x1bttern'");
	vc_msgs_free(&m);
}

/*
 * Characters that show nothing or reorder what follows (zero-width, bidi embeddings and
 * overrides, isolates, the BOM, the soft hyphen) make a label that reads as another one, or
 * a message that reads backwards: refused, at the label's line, and escaped as \\uXXXX in
 * the message, so it cannot act there either.
 */
static void test_labels_invisible(void **state)
{
	static const struct {
		const char *utf8;
		const char *esc;
	} bad[] = {
		{ "\xe2\x80\x8b", "\\u200b" },	/* zero width space */
		{ "\xe2\x80\x8d", "\\u200d" },	/* zero width joiner */
		{ "\xe2\x80\x8f", "\\u200f" },	/* right-to-left mark */
		{ "\xe2\x80\xaa", "\\u202a" },	/* left-to-right embedding */
		{ "\xe2\x80\xae", "\\u202e" },	/* right-to-left override */
		{ "\xe2\x81\xa6", "\\u2066" },	/* left-to-right isolate */
		{ "\xe2\x81\xa9", "\\u2069" },	/* pop directional isolate */
		{ "\xef\xbb\xbf", "\\ufeff" },	/* byte order mark */
		{ "\xc2\xad", "\\u00ad" },		/* soft hyphen */
	};
	struct vc_msgs m = { 0 };
	struct vc_conf *c = (void *)1;
	char text[256], want[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[camera a]\n"
			 "backend = pattern\n"
			 "label = Front%scam\n", bad[i].utf8);
		assert_int_equal(load(text, &c, &m), -EINVAL);
		assert_null(c);
		assert_printable(&m);
		assert_int_equal(m.n, 1);
		snprintf(want, sizeof(want), "label 'Front%scam' has an invisible or bidi control character",
			 bad[i].esc);
		assert_msg(&m, 0, 3, want);
		vc_msgs_free(&m);
	}
	/* their neighbours are ordinary characters: an en dash, a left single quote, a-umlaut */
	assert_int_equal(load("[camera a]\nlabel = A\xe2\x80\x93" "B\xe2\x80\x98" "C\xc3\xa4\n", &c, &m),
			 0);
	assert_string_equal(vc_conf_camera(c, "a")->label, "A\xe2\x80\x93" "B\xe2\x80\x98" "C\xc3\xa4");
	vc_conf_free(c);
}

/* Backends' messages echo values from the file: they are escaped as well. */
static void test_backend_messages_are_escaped(void **state)
{
	struct vc_error err;

	(void)state;
	assert_int_equal(vc_err(&err, 3, -EINVAL, "unknown pattern '%s'", "\x1b[31mred\r"), -EINVAL);
	assert_int_equal(err.line, 3);
	assert_string_equal(err.msg, "unknown pattern '\\x1b[31mred\\r'");
	/* valid UTF-8 stays readable */
	vc_err(&err, 3, -EINVAL, "unknown pattern '%s'", "damier ☺");
	assert_string_equal(err.msg, "unknown pattern 'damier ☺'");
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
	/* sorted by line; the clashes at the keys that clash */
	assert_msg(&m, 0, 4, "camera 'b' wants /dev/video5, which camera 'a' (line 2) wants too");
	assert_msg(&m, 1, 5, "camera 'b' has the label 'a' of camera 'a' (line 1)");
	assert_msg(&m, 2, 6, "camera 'a' is defined twice (first at line 1)");
	assert_msg(&m, 3, 7, "bad camera name 'bad/name'");
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

/* A binary file would give a message per line: the first VC_MAX_MSGS are kept, the rest counted. */
static void test_message_limit(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c;
	char text[2048] = "";

	(void)state;
	for (int i = 0; i < VC_MAX_MSGS + 50; i++)
		strcat(text, "?\n");
	assert_int_equal(load(text, &c, &m), -EINVAL);
	assert_int_equal(m.n, VC_MAX_MSGS);
	assert_int_equal(m.dropped, 50);
	assert_msg(&m, 0, 1, "syntax error");
	assert_msg(&m, VC_MAX_MSGS - 1, VC_MAX_MSGS, "syntax error");
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

/* Asserts that loading @p fails at once with one message "P: cannot read: ...WANT...". */
static void assert_refused(const char *p, const char *want)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c = (void *)1;

	/* The old reader blocked on a FIFO and spun on /dev/zero: fail instead of hanging. */
	alarm(10);
	assert_true(vc_conf_load(p, &c, &m) < 0);
	alarm(0);
	assert_null(c);
	assert_int_equal(m.n, 1);
	if (strncmp(m.v[0], p, strlen(p)) != 0 || !strstr(m.v[0], want))
		fail_msg("message is '%s', expected '%s: ...%s'", m.v[0], p, want);
	vc_msgs_free(&m);
}

/* Only regular files are configuration files; anything else is refused without reading it. */
static void test_only_regular_files(void **state)
{
	char dir[64] = "/tmp/test-config-dir-XXXXXX", fifo[80], big[80];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_refused(dir, "a directory, not a regular file");
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_refused(fifo, "a FIFO, not a regular file");
	assert_refused("/dev/zero", "a character device, not a regular file");
	assert_refused("/dev/urandom", "a character device, not a regular file");
	/* A regular file above the size limit (1 MiB): refused before it is parsed. */
	snprintf(big, sizeof(big), "%s/big.conf", dir);
	f = fopen(big, "w");
	assert_non_null(f);
	fputs("[camera a]\n", f);
	for (int i = 0; i < 1024 * 1024 / 64 + 1; i++)
		fprintf(f, "; %061d\n", i);
	fclose(f);
	assert_refused(big, "too big");
	unlink(big);
	unlink(fifo);
	rmdir(dir);
}

/*
 * Input that libinih drops without a word: text after the ']' of a section header, and a
 * file with CR line ends (libinih reads it as one line: "[camera a]" and nothing else, so a
 * file camera became a pattern camera). Both passed with every key lost.
 */
static void test_no_input_dropped(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c = (void *)1;

	(void)state;
	assert_int_equal(load("[camera a] backend = file\n"		/* 1 */
			      "file = /x.y4m\n"				/* 2 */
			      "[camera b]]\n"				/* 3 */
			      "[camera c]   ; a comment is fine\n"	/* 4 */
			      "[camera d]\t# so is this one\n"		/* 5 */
			      "[camera e]  \n",				/* 6 */
			      &c, &m), -EINVAL);
	assert_null(c);
	assert_printable(&m);
	/* the section still starts: its keys are not blamed on the one before */
	assert_int_equal(m.n, 3);
	assert_msg(&m, 0, 1, "text after the section header: 'backend = file'");
	assert_msg(&m, 1, 2, "unknown key 'file' (for backend 'pattern')");
	assert_msg(&m, 2, 3, "text after the section header: ']'");
	vc_msgs_free(&m);

	/* CR line ends: one line for libinih, so reported at line 1 */
	assert_int_equal(load("[camera a]\rbackend = file\rfile = /x.y4m\r", &c, &m), -EINVAL);
	assert_null(c);
	assert_printable(&m);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 1, "carriage return inside a line");
	vc_msgs_free(&m);
	/* ...and a stray CR inside one line of a normal file */
	assert_int_equal(load("[camera a]\nlabel = A\rB\n", &c, &m), -EINVAL);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 2, "carriage return inside a line");
	vc_msgs_free(&m);

	/* CRLF line ends (a file from Windows) are fine */
	assert_int_equal(load("[camera a]\r\nlabel = A b\r\nrates = 30 15\r\n[camera b]\r\n", &c, &m), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(c->ncams, 2);
	assert_string_equal(vc_conf_camera(c, "a")->label, "A b");
	assert_int_equal(vc_conf_camera(c, "a")->nintervals, 2);
	vc_conf_free(c);
}

/*
 * An empty file (or one of blanks only) is refused: an in-place rewrite, a "> file" by
 * mistake or a full disk leave one, and applying it would remove every camera. A file that
 * means to serve no camera says so with a comment.
 */
static void test_empty_file(void **state)
{
	struct vc_msgs m = { 0 };
	struct vc_conf *c = (void *)1;

	(void)state;
	assert_int_equal(load("", &c, &m), -EINVAL);
	assert_null(c);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 1, "the file is empty");
	vc_msgs_free(&m);
	assert_int_equal(load("\n  \n\t\n", &c, &m), -EINVAL);
	assert_int_equal(m.n, 1);
	assert_msg(&m, 0, 1, "the file is empty");
	vc_msgs_free(&m);

	assert_int_equal(load("; no cameras on this machine\n", &c, &m), 0);
	assert_int_equal(m.n, 0);
	assert_int_equal(c->ncams, 0);
	vc_conf_free(c);
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
		cmocka_unit_test(test_numbers_are_strict),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_labels_invisible),
		cmocka_unit_test(test_backend_messages_are_escaped),
		cmocka_unit_test(test_cross_checks),
		cmocka_unit_test(test_every_syntax_error),
		cmocka_unit_test(test_indented_lines),
		cmocka_unit_test(test_syntax_and_long_lines),
		cmocka_unit_test(test_message_limit),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_only_regular_files),
		cmocka_unit_test(test_no_input_dropped),
		cmocka_unit_test(test_empty_file),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_fourcc_and_ctrl_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
