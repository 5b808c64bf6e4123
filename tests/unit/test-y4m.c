// SPDX-License-Identifier: GPL-2.0-only
/* test-y4m.c - the YUV4MPEG2 parser, its error messages, and the file backend's ops. */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../backend/backend.h"
#include "../../backend/file/y4m.h"

/* backends.c's registry names every backend; the ones this test does not link are dummies. */
__attribute__((weak)) const struct vc_backend_ops vc_backend_pattern = { .name = "pattern" };
__attribute__((weak)) const struct vc_backend_ops vc_backend_v4l2 = { .name = "v4l2" };

static char tmpdir[200];	/* $TMPDIR/test-y4m.XXXXXX, removed at the end */

/* A path in the test's directory (one static buffer per call site is enough here). */
static const char *path_of(const char *name, char buf[256])
{
	snprintf(buf, 256, "%s/%s", tmpdir, name);
	return buf;
}

/* Byte j of frame i's planes in every generated clip. */
static uint8_t frame_byte(size_t i, size_t j)
{
	return (uint8_t)(i * 37 + j * 7 + j / 251);
}

/*
 * Writes @name: @header (with its newline), then @nframes frames of @frame_size bytes each
 * behind "FRAME\n", then @tail (@tail_len bytes, may be NULL). Returns the path.
 */
static const char *write_clip(const char *name, const char *header, size_t nframes,
			      size_t frame_size, const void *tail, size_t tail_len, char buf[256])
{
	const char *path = path_of(name, buf);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(header, 1, strlen(header), f), strlen(header));
	for (size_t i = 0; i < nframes; i++) {
		fputs("FRAME\n", f);
		for (size_t j = 0; j < frame_size; j++)
			fputc(frame_byte(i, j), f);
	}
	if (tail_len)
		assert_int_equal(fwrite(tail, 1, tail_len, f), tail_len);
	assert_int_equal(fclose(f), 0);
	return path;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	const char *base = getenv("TMPDIR");

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/test-y4m.XXXXXX", base && *base ? base : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

#define HDR_420 "YUV4MPEG2 W32 H16 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n"
#define SIZE_420 (32 * 16 * 3 / 2)

/* ---------------------------------------------------------------------------------------- */
/* Headers */

static void test_header_ffmpeg(void **state)
{
	static const char hdr[] = "YUV4MPEG2 W320 H240 F15:1 Ip A1:1 C420jpeg XYSCSS=420JPEG "
				  "XCOLORRANGE=LIMITED\nFRAME\n";
	struct vc_y4m_header h;
	char msg[256] = "";

	(void)state;
	assert_int_equal(vc_y4m_parse_header(hdr, sizeof(hdr) - 1, &h, msg, sizeof(msg)), 0);
	assert_int_equal(h.width, 320);
	assert_int_equal(h.height, 240);
	assert_int_equal(h.fps_num, 15);
	assert_int_equal(h.fps_den, 1);
	assert_int_equal(h.layout, VC_Y4M_420);
	assert_int_equal(h.pixelformat, V4L2_PIX_FMT_YUV420);
	assert_string_equal(h.colourspace, "420jpeg");
	assert_int_equal(h.length, sizeof(hdr) - 1 - strlen("FRAME\n"));
	assert_int_equal(h.frame_size, 320 * 240 * 3 / 2);
	assert_int_equal(h.output_size, h.frame_size);
}

static void test_header_variants(void **state)
{
	static const struct {
		const char *hdr;
		uint32_t fourcc;
		size_t frame_size;
		const char *cs;
	} ok[] = {
		{ "YUV4MPEG2 W32 H16 F30:1\n", V4L2_PIX_FMT_YUV420, 768, "420jpeg" },
		{ "YUV4MPEG2 W32 H16 F30:1 C420paldv\n", V4L2_PIX_FMT_YUV420, 768, "420paldv" },
		{ "YUV4MPEG2 W32 H16 F30:1 C420mpeg2\n", V4L2_PIX_FMT_YUV420, 768, "420mpeg2" },
		{ "YUV4MPEG2 W32 H16 F30:1 C420\n", V4L2_PIX_FMT_YUV420, 768, "420" },
		{ "YUV4MPEG2 W21 H17 F30:1 Cmono XCOLORRANGE=FULL\n", V4L2_PIX_FMT_GREY, 357, "mono" },
		{ "YUV4MPEG2 W32 H16 F25:1 C422 XYSCSS=422\n", V4L2_PIX_FMT_YUYV, 1024, "422" },
		/* order, I?, repeated spaces, unknown tags and X values with odd bytes */
		{ "YUV4MPEG2 F30000:1001  I? H16 Zfuture X:weird=1:2 W32 A0:0\n",
		  V4L2_PIX_FMT_YUV420, 768, "420jpeg" },
		{ "YUV4MPEG2 W8192 H8192 F1:1\n", V4L2_PIX_FMT_YUV420, 8192 * 8192 * 3 / 2, "420jpeg" },
	};
	char msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct vc_y4m_header h;
		int r = vc_y4m_parse_header(ok[i].hdr, strlen(ok[i].hdr), &h, msg, sizeof(msg));

		if (r)
			fail_msg("'%s': %s", ok[i].hdr, msg);
		assert_int_equal(h.pixelformat, ok[i].fourcc);
		assert_int_equal(h.frame_size, ok[i].frame_size);
		assert_string_equal(h.colourspace, ok[i].cs);
		assert_int_equal(h.length, strlen(ok[i].hdr));
	}
}

static void test_header_errors(void **state)
{
	static const struct {
		const char *hdr;
		const char *msg;
	} bad[] = {
		{ "", "not a YUV4MPEG2 file (empty)" },
		{ "YUV4MPEG W32 H16 F30:1\n", "not a YUV4MPEG2 file (bad magic)" },
		{ "\x1a\x45\xdf\xa3 matroska", "not a YUV4MPEG2 file (bad magic)" },
		{ "YUV4MPEG2 W32 H16 F30:1", "header line is cut off (no newline before the end of the file)" },
		{ "YUV4MPEG2 H16 F30:1\n", "header has no width (W)" },
		{ "YUV4MPEG2 W32 F30:1\n", "header has no height (H)" },
		{ "YUV4MPEG2 W32 H16\n", "header has no frame rate (F)" },
		{ "YUV4MPEG2 W32 H16 F30:0\n", "bad frame rate F30:0" },
		{ "YUV4MPEG2 W32 H16 F0:1\n", "bad frame rate F0:1" },
		{ "YUV4MPEG2 W32 H16 F30\n", "bad frame rate F30" },
		{ "YUV4MPEG2 W32 H16 F30:1x\n", "bad frame rate F30:1x" },
		{ "YUV4MPEG2 W32 H16 F:1\n", "bad frame rate F:1" },
		{ "YUV4MPEG2 W-32 H16 F30:1\n", "bad width W-32" },
		{ "YUV4MPEG2 W32 H99999999999 F30:1\n", "bad height H99999999999" },
		{ "YUV4MPEG2 W W32 H16 F30:1\n", "bad width W" },
		{ "YUV4MPEG2 W8 H16 F30:1\n", "width 8 out of range (16..8192)" },
		{ "YUV4MPEG2 W32 H8194 F30:1\n", "height 8194 out of range (16..8192)" },
		{ "YUV4MPEG2 W32 H16 F30:1 It\n", "interlaced Y4M is not supported (It)" },
		{ "YUV4MPEG2 W32 H16 F30:1 Ib\n", "interlaced Y4M is not supported (Ib)" },
		{ "YUV4MPEG2 W32 H16 F30:1 Im\n", "interlaced Y4M is not supported (Im)" },
		{ "YUV4MPEG2 W32 H16 F30:1 Ix\n", "bad interlacing Ix" },
		{ "YUV4MPEG2 W32 H16 F30:1 C444\n",
		  "unsupported colourspace C444 (supported: 420jpeg, 420paldv, 420mpeg2, 420, 422, mono)" },
		{ "YUV4MPEG2 W32 H16 F30:1 C420p10 XYSCSS=420P10\n",
		  "unsupported colourspace C420p10 (supported: 420jpeg, 420paldv, 420mpeg2, 420, 422, mono)" },
		{ "YUV4MPEG2 W33 H16 F30:1 C420jpeg\n",
		  "odd size 33x16: C420jpeg needs an even width and height" },
		{ "YUV4MPEG2 W32 H17 F30:1\n", "odd size 32x17: C420jpeg needs an even width and height" },
		{ "YUV4MPEG2 W32 H17 F30:1 C422\n",
		  "odd size 32x17: C422 (played as YUYV) needs an even width and height" },
	};
	char msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vc_y4m_header h;

		msg[0] = 0;
		assert_int_equal(vc_y4m_parse_header(bad[i].hdr, strlen(bad[i].hdr), &h, msg,
						     sizeof(msg)), -EINVAL);
		assert_string_equal(msg, bad[i].msg);
	}
}

/*
 * Headers from Windows tools (CR LF), absurd frame rates (F1000000000:1 made a busy-looping
 * timer) and bytes that a terminal would act on: each a clear, printable message.
 */
static void test_header_crlf_rates_and_escapes(void **state)
{
	static const struct {
		const char *hdr;
		const char *msg;
	} bad[] = {
		{ "YUV4MPEG2 W32 H16 F30:1 Ip\r\n",
		  "header line ends in CR LF (a Windows line ending): Y4M lines end in LF only" },
		{ "YUV4MPEG2 W32 H16 F30:1\r\n",
		  "header line ends in CR LF (a Windows line ending): Y4M lines end in LF only" },
		{ "YUV4MPEG2 W32 H16 F1000000000:1\n",
		  "frame rate F1000000000:1 out of range (1/60 to 1000 frames per second)" },
		{ "YUV4MPEG2 W32 H16 F1001:1\n",
		  "frame rate F1001:1 out of range (1/60 to 1000 frames per second)" },
		{ "YUV4MPEG2 W32 H16 F1:61\n",
		  "frame rate F1:61 out of range (1/60 to 1000 frames per second)" },
		{ "YUV4MPEG2 W32 H16 F30:1 C4\x1b[2J\n",
		  "unsupported colourspace C4\\x1b[2J (supported: 420jpeg, 420paldv, 420mpeg2, 420, 422, mono)" },
		{ "YUV4MPEG2 W\xff\x01 H16 F30:1\n", "bad width W\\xff\\x01" },
		{ "YUV4MPEG2 W32 H16 F30:1 I\r\n", "header line ends in CR LF (a Windows line ending): Y4M lines end in LF only" },
	};
	static const char *const good[] = {
		"YUV4MPEG2 W32 H16 F1000:1\n",
		"YUV4MPEG2 W32 H16 F1:60\n",
		"YUV4MPEG2 W32 H16 F30000000:1000000\n",	/* 30 fps, big numbers */
	};
	struct vc_y4m_header h;
	char msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		msg[0] = 0;
		assert_int_equal(vc_y4m_parse_header(bad[i].hdr, strlen(bad[i].hdr), &h, msg,
						     sizeof(msg)), -EINVAL);
		assert_string_equal(msg, bad[i].msg);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(vc_y4m_parse_header(good[i], strlen(good[i]), &h, msg,
						     sizeof(msg)), 0);
}

static void test_header_length_limit(void **state)
{
	char buf[VC_Y4M_MAX_HEADER + 64];
	struct vc_y4m_header h;
	char msg[256];
	size_t n;

	(void)state;
	/* a newline as the 1024th byte is fine */
	n = (size_t)snprintf(buf, sizeof(buf), "YUV4MPEG2 W32 H16 F30:1 X");
	memset(buf + n, 'x', VC_Y4M_MAX_HEADER - 1 - n);
	buf[VC_Y4M_MAX_HEADER - 1] = '\n';
	assert_int_equal(vc_y4m_parse_header(buf, sizeof(buf), &h, msg, sizeof(msg)), 0);
	assert_int_equal(h.length, VC_Y4M_MAX_HEADER);
	/* one more byte is not */
	memset(buf + n, 'x', VC_Y4M_MAX_HEADER - n);
	buf[VC_Y4M_MAX_HEADER] = '\n';
	assert_int_equal(vc_y4m_parse_header(buf, sizeof(buf), &h, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "header line too long (more than 1024 bytes)");
}

static void test_frame_header(void **state)
{
	char big[VC_Y4M_MAX_FRAME_HEADER + 8];
	size_t len = 0;

	(void)state;
	assert_int_equal(vc_y4m_parse_frame_header("FRAME\nxyz", 9, &len), 0);
	assert_int_equal(len, 6);
	assert_int_equal(vc_y4m_parse_frame_header("FRAME Ip XA=b\n\x01", 15, &len), 0);
	assert_int_equal(len, 14);
	assert_int_equal(vc_y4m_parse_frame_header("FRAMES\n", 7, &len), -EINVAL);
	assert_int_equal(vc_y4m_parse_frame_header("frame\n", 6, &len), -EINVAL);
	assert_int_equal(vc_y4m_parse_frame_header("\x10\x10\x10\x10\x10\x10", 6, &len), -EINVAL);
	assert_int_equal(vc_y4m_parse_frame_header("XR", 2, &len), -EINVAL);
	assert_int_equal(vc_y4m_parse_frame_header("FRA", 3, &len), -ENODATA);
	assert_int_equal(vc_y4m_parse_frame_header("FRAME", 5, &len), -ENODATA);
	assert_int_equal(vc_y4m_parse_frame_header("FRAME Ip", 8, &len), -ENODATA);
	assert_int_equal(vc_y4m_parse_frame_header("", 0, &len), -ENODATA);
	memcpy(big, "FRAME ", 6);
	memset(big + 6, 'x', sizeof(big) - 6);
	assert_int_equal(vc_y4m_parse_frame_header(big, sizeof(big), &len), -E2BIG);
}

/* ---------------------------------------------------------------------------------------- */
/* Files */

static void check_frame(const struct vc_y4m_file *f, size_t index, size_t want_frame)
{
	size_t n = f->hdr.frame_size;
	uint8_t *buf = malloc(n);

	assert_non_null(buf);
	assert_int_equal(vc_y4m_read_frame(f, index, buf, n), 0);
	for (size_t j = 0; j < n; j++)
		if (buf[j] != frame_byte(want_frame, j))
			fail_msg("frame %zu byte %zu: %u, expected %u", index, j, buf[j],
				 frame_byte(want_frame, j));
	free(buf);
}

static void test_open_420(void **state)
{
	struct vc_y4m_file f;
	char msg[256] = "", p[256];
	const char *path = write_clip("ok420.y4m", HDR_420, 3, SIZE_420, NULL, 0, p);

	(void)state;
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), 0);
	assert_int_equal(f.nframes, 3);
	assert_int_equal(f.hdr.pixelformat, V4L2_PIX_FMT_YUV420);
	assert_int_equal(f.offsets[0], strlen(HDR_420) + 6);
	assert_int_equal(f.offsets[2], strlen(HDR_420) + 3 * 6 + 2 * SIZE_420);
	for (size_t i = 0; i < 3; i++)
		check_frame(&f, i, i);
	assert_int_equal(vc_y4m_read_frame(&f, 3, (uint8_t[SIZE_420]){ 0 }, SIZE_420), -EINVAL);
	assert_int_equal(vc_y4m_read_frame(&f, 0, (uint8_t[SIZE_420]){ 0 }, SIZE_420 - 1), -EINVAL);
	vc_y4m_close(&f);
	assert_int_equal(f.fd, -1);
	vc_y4m_close(&f);	/* twice is harmless */
}

static void test_open_mono_and_frame_params(void **state)
{
	/* FRAME lines may carry parameters; odd sizes are fine for mono */
	static const char hdr[] = "YUV4MPEG2 W21 H17 F15:1 Ip Cmono XCOLORRANGE=FULL\n";
	size_t fs = 21 * 17;
	char p[256], msg[256] = "";
	const char *path = path_of("mono.y4m", p);
	FILE *file = fopen(path, "wb");
	struct vc_y4m_file f;

	(void)state;
	assert_non_null(file);
	fputs(hdr, file);
	for (size_t i = 0; i < 2; i++) {
		fputs(i ? "FRAME Ip XFOO=bar\n" : "FRAME\n", file);
		for (size_t j = 0; j < fs; j++)
			fputc(frame_byte(i, j), file);
	}
	fclose(file);

	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), 0);
	assert_int_equal(f.nframes, 2);
	assert_int_equal(f.hdr.pixelformat, V4L2_PIX_FMT_GREY);
	assert_int_equal(f.hdr.frame_size, fs);
	check_frame(&f, 0, 0);
	check_frame(&f, 1, 1);
	vc_y4m_close(&f);
}

static void test_unpack_422(void **state)
{
	struct vc_y4m_header h;
	static const char hdr[] = "YUV4MPEG2 W16 H16 F30:1 C422\n";
	uint8_t src[16 * 16 * 2], dst[16 * 16 * 2];
	char msg[256];

	(void)state;
	assert_int_equal(vc_y4m_parse_header(hdr, strlen(hdr), &h, msg, sizeof(msg)), 0);
	for (size_t i = 0; i < 256; i++)
		src[i] = (uint8_t)i;			/* Y */
	for (size_t i = 0; i < 128; i++) {
		src[256 + i] = (uint8_t)(100 + i / 8);	/* Cb: 8 per line */
		src[384 + i] = (uint8_t)(200 + i / 8);	/* Cr */
	}
	vc_y4m_unpack(&h, src, dst);
	/* line 3, pair 5: Y (3*16+10, 3*16+11), Cb/Cr of plane line 3 */
	assert_int_equal(dst[3 * 32 + 20], 58);
	assert_int_equal(dst[3 * 32 + 21], 103);
	assert_int_equal(dst[3 * 32 + 22], 59);
	assert_int_equal(dst[3 * 32 + 23], 203);
	assert_int_equal(dst[0], 0);
	assert_int_equal(dst[511], 215);
}

static void test_errors_name_the_file(void **state)
{
	uint8_t part[1000];
	char p[256], msg[256], want[512];
	struct vc_y4m_file f;
	const char *path;

	(void)state;
	memset(part, 0x80, sizeof(part));

	/* the last frame is short: 2 complete 32x16 (768-byte) frames, then FRAME + 100 bytes */
	path = write_clip("trunc.y4m", HDR_420, 2, SIZE_420, "FRAME\n", 6, p);
	{
		FILE *a = fopen(path, "ab");

		assert_non_null(a);
		fwrite(part, 1, 100, a);
		fclose(a);
	}
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: frame 3 is truncated (got 100 of 768 bytes)", path);
	assert_string_equal(msg, want);
	assert_int_equal(f.fd, -1);
	assert_null(f.offsets);

	/* one byte short */
	path = write_clip("short1.y4m", HDR_420, 1, SIZE_420, "FRAME\n", 6, p);
	{
		FILE *a = fopen(path, "ab");

		assert_non_null(a);
		fwrite(part, 1, SIZE_420 - 1, a);
		fclose(a);
	}
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: frame 2 is truncated (got 767 of 768 bytes)", path);
	assert_string_equal(msg, want);

	/* a larger frame: the message the issue quotes */
	path = write_clip("trunc2.y4m", "YUV4MPEG2 W640 H480 F30:1\n", 2, 460800, "FRAME\n", 6, p);
	{
		FILE *a = fopen(path, "ab");

		assert_non_null(a);
		fwrite(part, 1, 1000, a);
		fclose(a);
	}
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: frame 3 is truncated (got 1000 of 460800 bytes)", path);
	assert_string_equal(msg, want);

	/* the FRAME line itself cut off */
	path = write_clip("cut.y4m", HDR_420, 2, SIZE_420, "FRA", 3, p);
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: frame 3 is truncated (its FRAME line is cut off)", path);
	assert_string_equal(msg, want);

	/* FRAME and nothing else */
	path = write_clip("empty-frame.y4m", HDR_420, 1, SIZE_420, "FRAME\n", 6, p);
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: frame 2 is truncated (got 0 of 768 bytes)", path);
	assert_string_equal(msg, want);

	/* junk where the second frame's marker should be */
	path = write_clip("junk.y4m", HDR_420, 1, SIZE_420, "GARBAGE\n", 8, p);
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: frame 2: expected FRAME at byte %zu", path,
		 strlen(HDR_420) + 6 + SIZE_420);
	assert_string_equal(msg, want);

	/* a frame that is one byte too long shifts the next marker */
	path = write_clip("long.y4m", HDR_420, 1, SIZE_420 + 1, NULL, 0, p);
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "frame 2: expected FRAME at byte"));

	/* header only */
	path = write_clip("noframes.y4m", HDR_420, 0, 0, NULL, 0, p);
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: no frames (the file ends after the header)", path);
	assert_string_equal(msg, want);

	/* the header's problem, with the file name */
	path = write_clip("bad-f.y4m", "YUV4MPEG2 W32 H16 F30:0\n", 1, SIZE_420, NULL, 0, p);
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: bad frame rate F30:0", path);
	assert_string_equal(msg, want);

	path = write_clip("magic.y4m", "RIFF....WAVE\n", 0, 0, NULL, 0, p);
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a YUV4MPEG2 file (bad magic)", path);
	assert_string_equal(msg, want);

	path = write_clip("empty.y4m", "", 0, 0, NULL, 0, p);
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a YUV4MPEG2 file (empty)", path);
	assert_string_equal(msg, want);
}

static void test_missing_file_and_directory(void **state)
{
	char p[256], msg[256], want[512];
	struct vc_y4m_file f;
	const char *path = path_of("does-not-exist.y4m", p);

	(void)state;
	assert_int_equal(vc_y4m_open(&f, path, msg, sizeof(msg)), -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(msg, want);
	assert_int_equal(f.fd, -1);

	assert_int_equal(vc_y4m_open(&f, tmpdir, msg, sizeof(msg)), -EISDIR);
	snprintf(want, sizeof(want), "%s: Is a directory", tmpdir);
	assert_string_equal(msg, want);

	assert_int_equal(vc_y4m_open(&f, "/dev/null", msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "/dev/null: not a regular file");
}

/* ---------------------------------------------------------------------------------------- */
/* The backend */

static int create(const struct vc_kv *keys, size_t nkeys, void **priv, struct vc_error *err)
{
	struct vc_backend_conf conf = { .camera = "test", .keys = keys, .nkeys = nkeys };
	const struct vc_backend_ops *ops = vc_backend_find("file");

	assert_non_null(ops);
	memset(err, 0, sizeof(*err));
	*priv = NULL;
	return ops->create(&conf, priv, err);
}

static void test_backend_create_errors(void **state)
{
	char p[256], want[512];
	struct vc_kv nofile[] = { { "loop", "yes", 3 } };
	struct vc_kv missing[] = { { "file", p, 7 } };
	struct vc_kv badloop[] = { { "file", p, 7 }, { "loop", "sometimes", 8 } };
	const struct vc_backend_ops *ops = vc_backend_find("file");
	struct vc_error err;
	void *priv;

	(void)state;
	assert_int_equal(ops->abi, VC_BACKEND_ABI);
	assert_string_equal(ops->keys[0], "file");
	assert_string_equal(ops->keys[1], "loop");
	assert_null(ops->keys[2]);

	assert_int_equal(create(nofile, 1, &priv, &err), -EINVAL);
	assert_int_equal(err.line, 0);
	assert_string_equal(err.msg, "missing key 'file' (the .y4m clip to play)");

	path_of("nope.y4m", p);
	assert_int_equal(create(missing, 1, &priv, &err), -ENOENT);
	assert_int_equal(err.line, 7);
	snprintf(want, sizeof(want), "%s: No such file or directory", p);
	assert_string_equal(err.msg, want);

	write_clip("loop.y4m", HDR_420, 1, SIZE_420, NULL, 0, p);
	assert_int_equal(create(badloop, 2, &priv, &err), -EINVAL);
	assert_int_equal(err.line, 8);
	assert_string_equal(err.msg, "bad value 'sometimes' for 'loop' (yes or no)");

	/* a damaged file fails create, at the file key's line */
	write_clip("trunc3.y4m", HDR_420, 1, SIZE_420, "FRAME\n\x01", 7, p);
	assert_int_equal(create(missing, 1, &priv, &err), -EINVAL);
	assert_int_equal(err.line, 7);
	snprintf(want, sizeof(want), "%s: frame 2 is truncated (got 1 of 768 bytes)", p);
	assert_string_equal(err.msg, want);
}

static void produce_expect(const struct vc_backend_ops *ops, void *priv, struct vc_frame *fr,
			   uint64_t seq, size_t want_frame)
{
	fr->sequence = seq;
	fr->bytesused = 0;
	memset(fr->data, 0, fr->size);
	assert_int_equal(ops->produce(priv, fr), 0);
	assert_int_equal(fr->bytesused, SIZE_420);
	for (size_t j = 0; j < SIZE_420; j++)
		if (fr->data[j] != frame_byte(want_frame, j))
			fail_msg("sequence %llu byte %zu: %u, expected frame %zu's %u",
				 (unsigned long long)seq, j, fr->data[j], want_frame,
				 frame_byte(want_frame, j));
}

static void test_backend_plays_and_loops(void **state)
{
	char p[256];
	struct vc_kv keys[] = { { "file", p, 2 } };
	struct vc_kv noloop[] = { { "file", p, 2 }, { "loop", "no", 3 } };
	const struct vc_backend_ops *ops = vc_backend_find("file");
	uint8_t buf[SIZE_420];
	struct vc_modes modes = { .n = 0 };
	struct vc_mode other = { V4L2_PIX_FMT_NV12, 32, 16, 1, 30 };
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .bytesperline = 32 };
	struct vc_error err;
	void *priv;

	(void)state;
	write_clip("play.y4m", "YUV4MPEG2 W32 H16 F30000:1001 Ip C420mpeg2\n", 3, SIZE_420, NULL,
		   0, p);
	assert_int_equal(create(keys, 1, &priv, &err), 0);
	assert_null(ops->controls);
	assert_int_equal(ops->describe(priv, &modes), 0);
	assert_int_equal(modes.n, 1);
	assert_int_equal(modes.v[0].pixelformat, V4L2_PIX_FMT_YUV420);
	assert_int_equal(modes.v[0].width, 32);
	assert_int_equal(modes.v[0].height, 16);
	assert_int_equal(modes.v[0].interval_num, 1001);
	assert_int_equal(modes.v[0].interval_den, 30000);

	assert_int_equal(ops->start(priv, &other, &err), -EINVAL);
	assert_string_equal(err.msg, "the file gives YU12 32x16 only, not NV12 32x16");
	fr.mode = &modes.v[0];
	assert_int_equal(ops->start(priv, &modes.v[0], &err), 0);
	for (uint64_t seq = 0; seq < 7; seq++)	/* 0 1 2 0 1 2 0 */
		produce_expect(ops, priv, &fr, seq, seq % 3);
	produce_expect(ops, priv, &fr, UINT64_MAX, UINT64_MAX % 3);

	/* refused: a short buffer, another line length */
	fr.size = sizeof(buf) - 1;
	assert_int_equal(ops->produce(priv, &fr), -EINVAL);
	fr.size = sizeof(buf);
	fr.bytesperline = 64;
	assert_int_equal(ops->produce(priv, &fr), -EINVAL);
	fr.bytesperline = 32;
	ops->stop(priv);

	/* a restart begins at the first frame again */
	assert_int_equal(ops->start(priv, &modes.v[0], &err), 0);
	produce_expect(ops, priv, &fr, 0, 0);
	ops->stop(priv);
	ops->release(priv);

	/* loop = no: the last frame stays */
	assert_int_equal(create(noloop, 2, &priv, &err), 0);
	assert_int_equal(ops->start(priv, &modes.v[0], &err), 0);
	for (uint64_t seq = 0; seq < 6; seq++)	/* 0 1 2 2 2 2 */
		produce_expect(ops, priv, &fr, seq, seq < 3 ? seq : 2);
	ops->stop(priv);
	ops->release(priv);
}

static void test_backend_422_and_rates(void **state)
{
	char p[256];
	struct vc_kv keys[] = { { "file", p, 2 } };
	const struct vc_backend_ops *ops = vc_backend_find("file");
	struct vc_modes modes = { .n = 0 };
	uint8_t buf[16 * 16 * 2], planes[16 * 16 * 2];
	struct vc_frame fr = { .data = buf, .size = sizeof(buf), .bytesperline = 32 };
	struct vc_y4m_header h;
	struct vc_error err;
	char msg[256];
	void *priv;
	static const char hdr[] = "YUV4MPEG2 W16 H16 F60:2 C422\n";

	(void)state;
	write_clip("yuv422.y4m", hdr, 2, sizeof(planes), NULL, 0, p);
	assert_int_equal(create(keys, 1, &priv, &err), 0);
	assert_int_equal(ops->describe(priv, &modes), 0);
	assert_int_equal(modes.v[0].pixelformat, V4L2_PIX_FMT_YUYV);
	assert_int_equal(modes.v[0].interval_num, 1);	/* 2/60 reduced */
	assert_int_equal(modes.v[0].interval_den, 30);
	fr.mode = &modes.v[0];
	assert_int_equal(ops->start(priv, &modes.v[0], &err), 0);
	fr.sequence = 1;
	assert_int_equal(ops->produce(priv, &fr), 0);
	assert_int_equal(fr.bytesused, sizeof(buf));

	/* the same as unpacking frame 1's planes by hand */
	for (size_t j = 0; j < sizeof(planes); j++)
		planes[j] = frame_byte(1, j);
	assert_int_equal(vc_y4m_parse_header(hdr, strlen(hdr), &h, msg, sizeof(msg)), 0);
	{
		uint8_t want[sizeof(buf)];

		vc_y4m_unpack(&h, planes, want);
		assert_memory_equal(buf, want, sizeof(buf));
		assert_int_equal(buf[1], planes[256]);	/* Cb of pair 0 */
		assert_int_equal(buf[3], planes[384]);	/* Cr of pair 0 */
	}
	ops->stop(priv);
	ops->release(priv);
}

/* What ffmpeg writes (C420jpeg, X parameters). */
static void test_ffmpeg_clip(void **state)
{
	char p[256], cmd[512], msg[256];
	struct vc_kv keys[] = { { "file", p, 2 } };
	const struct vc_backend_ops *ops = vc_backend_find("file");
	struct vc_modes modes = { .n = 0 };
	struct vc_y4m_file f;
	struct vc_error err;
	struct vc_frame fr;
	uint8_t *buf, *direct;
	size_t size = 320 * 240 * 3 / 2;
	void *priv;
	FILE *raw;

	(void)state;
	/* ffmpeg is one of the project's dependencies (scripts/deps.sh): its absence fails. */
	if (system("command -v ffmpeg >/dev/null 2>&1") != 0)
		fail_msg("ffmpeg is not installed (run scripts/deps.sh)");
	path_of("ffmpeg.y4m", p);
	snprintf(cmd, sizeof(cmd), "ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi "
		 "-i testsrc=size=320x240:rate=15 -frames 30 -pix_fmt yuv420p '%s'", p);
	if (system(cmd) != 0)
		fail_msg("ffmpeg could not write %s", p);

	assert_int_equal(vc_y4m_open(&f, p, msg, sizeof(msg)), 0);
	assert_int_equal(f.nframes, 30);
	assert_string_equal(f.hdr.colourspace, "420jpeg");
	vc_y4m_close(&f);

	assert_int_equal(create(keys, 1, &priv, &err), 0);
	assert_int_equal(ops->describe(priv, &modes), 0);
	assert_int_equal(modes.n, 1);
	assert_int_equal(modes.v[0].pixelformat, V4L2_PIX_FMT_YUV420);
	assert_int_equal(modes.v[0].width, 320);
	assert_int_equal(modes.v[0].height, 240);
	assert_int_equal(modes.v[0].interval_num, 1);
	assert_int_equal(modes.v[0].interval_den, 15);
	assert_int_equal(ops->start(priv, &modes.v[0], &err), 0);

	/* frame 31 (sequence 30) is frame 1 again; compare with the planes read from the file */
	buf = malloc(size);
	direct = malloc(size);
	assert_non_null(buf);
	assert_non_null(direct);
	raw = fopen(p, "rb");
	assert_non_null(raw);
	{
		char line[256];

		assert_non_null(fgets(line, sizeof(line), raw));	/* header */
		assert_non_null(fgets(line, sizeof(line), raw));	/* FRAME */
		assert_string_equal(line, "FRAME\n");
		assert_int_equal(fread(direct, 1, size, raw), size);
	}
	fclose(raw);
	fr = (struct vc_frame){ .data = buf, .size = size, .mode = &modes.v[0],
				.bytesperline = 320, .sequence = 30 };
	assert_int_equal(ops->produce(priv, &fr), 0);
	assert_int_equal(fr.bytesused, size);
	assert_memory_equal(buf, direct, size);
	fr.sequence = 1;
	assert_int_equal(ops->produce(priv, &fr), 0);
	assert_memory_not_equal(buf, direct, size);	/* testsrc moves */
	ops->stop(priv);
	ops->release(priv);
	free(buf);
	free(direct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_ffmpeg),
		cmocka_unit_test(test_header_variants),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_header_crlf_rates_and_escapes),
		cmocka_unit_test(test_header_length_limit),
		cmocka_unit_test(test_frame_header),
		cmocka_unit_test(test_open_420),
		cmocka_unit_test(test_open_mono_and_frame_params),
		cmocka_unit_test(test_unpack_422),
		cmocka_unit_test(test_errors_name_the_file),
		cmocka_unit_test(test_missing_file_and_directory),
		cmocka_unit_test(test_backend_create_errors),
		cmocka_unit_test(test_backend_plays_and_loops),
		cmocka_unit_test(test_backend_422_and_rates),
		cmocka_unit_test(test_ffmpeg_clip),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
