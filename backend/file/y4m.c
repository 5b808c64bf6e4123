// SPDX-License-Identifier: GPL-2.0-only
/*
 * y4m.c - YUV4MPEG2 header and frame parsing, file indexing and frame reading (see y4m.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/videodev2.h>
#include <linux/viacam.h>

#include "backend.h"
#include "text.h"
#include "y4m.h"

#define MAGIC "YUV4MPEG2 "
#define MAGIC_LEN (sizeof(MAGIC) - 1)
#define FRAME_TAG "FRAME"
#define FRAME_TAG_LEN (sizeof(FRAME_TAG) - 1)
#define MAX_FRAMES (1u << 20)	/* 9.7 hours at 30 frames/s: bounds the index's memory */
#define SHOW 32			/* at most this many bytes of a bad token in messages */

static const struct {
	const char *name;
	enum vc_y4m_layout layout;
} colourspaces[] = {
	{ "420jpeg", VC_Y4M_420 },
	{ "420paldv", VC_Y4M_420 },
	{ "420mpeg2", VC_Y4M_420 },
	{ "420", VC_Y4M_420 },
	{ "422", VC_Y4M_422 },
	{ "mono", VC_Y4M_MONO },
};

static int fail(char *msg, size_t msgsize, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *msg, size_t msgsize, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (msg && msgsize) {
		va_start(ap, fmt);
		vsnprintf(msg, msgsize, fmt, ap);
		va_end(ap);
	}
	return errnum;
}

/*
 * A bad token for a message: its first SHOW bytes, escaped (text.h). A file's bytes may be
 * anything; a CR or an escape sequence printed raw would hide or rewrite the message.
 */
static const char *shown(const char *v, size_t len, char *buf, size_t size)
{
	return vc_escape(buf, size, v, len < SHOW ? len : SHOW);
}

/* A decimal number of exactly @len digits into *@ret; false if not one or above UINT32_MAX. */
static bool parse_u32(const char *s, size_t len, uint32_t *ret)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*ret = (uint32_t)v;
	return true;
}

/* "<num>:<den>" with both > 0. */
static bool parse_ratio(const char *s, size_t len, uint32_t *ret_num, uint32_t *ret_den)
{
	const char *colon = memchr(s, ':', len);

	if (!colon)
		return false;
	if (!parse_u32(s, (size_t)(colon - s), ret_num) ||
	    !parse_u32(colon + 1, len - (size_t)(colon - s) - 1, ret_den))
		return false;
	return *ret_num > 0 && *ret_den > 0;
}

static int parse_colourspace(const char *v, size_t len, struct vc_y4m_header *h, char *msg,
			     size_t msgsize)
{
	char esc[SHOW * 4 + 1];

	for (size_t i = 0; i < sizeof(colourspaces) / sizeof(colourspaces[0]); i++) {
		if (strlen(colourspaces[i].name) == len &&
		    memcmp(colourspaces[i].name, v, len) == 0) {
			h->layout = colourspaces[i].layout;
			memcpy(h->colourspace, v, len);
			h->colourspace[len] = 0;
			return 0;
		}
	}
	return fail(msg, msgsize, -EINVAL, "unsupported colourspace C%s (supported: 420jpeg, "
		    "420paldv, 420mpeg2, 420, 422, mono)", shown(v, len, esc, sizeof(esc)));
}

int vc_y4m_parse_header(const void *buf, size_t len, struct vc_y4m_header *ret,
			char *msg, size_t msgsize)
{
	const char *s = buf, *nl, *p;
	struct vc_y4m_header h = { .layout = VC_Y4M_420, .colourspace = "420jpeg" };
	bool have_w = false, have_h = false, have_f = false;
	int r;

	if (len == 0)
		return fail(msg, msgsize, -EINVAL, "not a YUV4MPEG2 file (empty)");
	if (len < MAGIC_LEN || memcmp(s, MAGIC, MAGIC_LEN) != 0)
		return fail(msg, msgsize, -EINVAL, "not a YUV4MPEG2 file (bad magic)");
	nl = memchr(s, '\n', len < VC_Y4M_MAX_HEADER ? len : VC_Y4M_MAX_HEADER);
	if (!nl) {
		if (len >= VC_Y4M_MAX_HEADER)
			return fail(msg, msgsize, -EINVAL, "header line too long (more than %d bytes)",
				    VC_Y4M_MAX_HEADER);
		return fail(msg, msgsize, -EINVAL, "header line is cut off (no newline before the end "
			    "of the file)");
	}
	/* Said plainly: the CR would otherwise stick to the last tag ("bad interlacing Ip"). */
	if (nl > s && nl[-1] == '\r')
		return fail(msg, msgsize, -EINVAL, "header line ends in CR LF (a Windows line "
			    "ending): Y4M lines end in LF only");

	for (p = s + MAGIC_LEN; p < nl;) {
		const char *end = memchr(p, ' ', (size_t)(nl - p));
		const char *v = p + 1;
		char show[SHOW * 4 + 1];
		size_t vlen;

		if (*p == ' ') {	/* tolerate repeated spaces */
			p++;
			continue;
		}
		if (!end)
			end = nl;
		vlen = (size_t)(end - v);
		shown(v, vlen, show, sizeof(show));
		switch (*p) {
		case 'W':
			if (!parse_u32(v, vlen, &h.width))
				return fail(msg, msgsize, -EINVAL, "bad width W%s", show);
			have_w = true;
			break;
		case 'H':
			if (!parse_u32(v, vlen, &h.height))
				return fail(msg, msgsize, -EINVAL, "bad height H%s", show);
			have_h = true;
			break;
		case 'F':
			if (!parse_ratio(v, vlen, &h.fps_num, &h.fps_den))
				return fail(msg, msgsize, -EINVAL, "bad frame rate F%s", show);
			/* F1000000000:1 would make a timer that never sleeps (backend.h) */
			if ((uint64_t)h.fps_num * VC_MIN_FPS_DIV < h.fps_den ||
			    h.fps_num > (uint64_t)VC_MAX_FPS * h.fps_den)
				return fail(msg, msgsize, -EINVAL, "frame rate F%s out of range (1/%d "
					    "to %d frames per second)", show, VC_MIN_FPS_DIV,
					    VC_MAX_FPS);
			have_f = true;
			break;
		case 'I':
			if (vlen == 1 && (*v == 'p' || *v == '?'))
				break;
			if (vlen == 1 && (*v == 't' || *v == 'b' || *v == 'm'))
				return fail(msg, msgsize, -EINVAL,
					    "interlaced Y4M is not supported (I%c)", *v);
			return fail(msg, msgsize, -EINVAL, "bad interlacing I%s", show);
		case 'C':
			r = parse_colourspace(v, vlen, &h, msg, msgsize);
			if (r < 0)
				return r;
			break;
		default:	/* A (aspect), X (extensions), anything newer: not needed */
			break;
		}
		p = end;
	}

	if (!have_w)
		return fail(msg, msgsize, -EINVAL, "header has no width (W)");
	if (!have_h)
		return fail(msg, msgsize, -EINVAL, "header has no height (H)");
	if (!have_f)
		return fail(msg, msgsize, -EINVAL, "header has no frame rate (F)");
	if (h.width < VIACAM_MIN_WIDTH || h.width > VIACAM_MAX_WIDTH)
		return fail(msg, msgsize, -EINVAL, "width %u out of range (%d..%d)", h.width,
			    VIACAM_MIN_WIDTH, VIACAM_MAX_WIDTH);
	if (h.height < VIACAM_MIN_HEIGHT || h.height > VIACAM_MAX_HEIGHT)
		return fail(msg, msgsize, -EINVAL, "height %u out of range (%d..%d)", h.height,
			    VIACAM_MIN_HEIGHT, VIACAM_MAX_HEIGHT);

	switch (h.layout) {
	case VC_Y4M_420:
		if (h.width % 2 || h.height % 2)
			return fail(msg, msgsize, -EINVAL, "odd size %ux%u: C%s needs an even width "
				    "and height", h.width, h.height, h.colourspace);
		h.pixelformat = V4L2_PIX_FMT_YUV420;
		h.frame_size = (size_t)h.width * h.height * 3 / 2;
		h.output_size = h.frame_size;
		break;
	case VC_Y4M_422:
		if (h.width % 2 || h.height % 2)	/* the bridge's rule for YUYV */
			return fail(msg, msgsize, -EINVAL, "odd size %ux%u: C422 (played as YUYV) "
				    "needs an even width and height", h.width, h.height);
		h.pixelformat = V4L2_PIX_FMT_YUYV;
		h.frame_size = (size_t)h.width * h.height * 2;
		h.output_size = h.frame_size;
		break;
	case VC_Y4M_MONO:
		h.pixelformat = V4L2_PIX_FMT_GREY;
		h.frame_size = (size_t)h.width * h.height;
		h.output_size = h.frame_size;
		break;
	}
	h.length = (size_t)(nl - s) + 1;
	*ret = h;
	return 0;
}

int vc_y4m_parse_frame_header(const void *buf, size_t len, size_t *ret_len)
{
	const char *s = buf, *nl;
	size_t n = len < VC_Y4M_MAX_FRAME_HEADER ? len : VC_Y4M_MAX_FRAME_HEADER;

	if (memcmp(s, FRAME_TAG, n < FRAME_TAG_LEN ? n : FRAME_TAG_LEN) != 0)
		return -EINVAL;
	if (n <= FRAME_TAG_LEN)
		return -ENODATA;
	if (s[FRAME_TAG_LEN] != '\n' && s[FRAME_TAG_LEN] != ' ')
		return -EINVAL;
	nl = memchr(s, '\n', n);
	if (!nl)
		return len >= VC_Y4M_MAX_FRAME_HEADER ? -E2BIG : -ENODATA;
	*ret_len = (size_t)(nl - s) + 1;
	return 0;
}

/* pread until @count bytes or the end of the file: the bytes read, or -errno. */
static ssize_t pread_full(int fd, void *buf, size_t count, uint64_t offset)
{
	size_t done = 0;

	while (done < count) {
		ssize_t n = pread(fd, (char *)buf + done, count - done, (off_t)(offset + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* Finds every frame after the header; fills f->offsets and f->nframes. */
static int index_frames(struct vc_y4m_file *f, const char *path, uint64_t size, char *msg,
			size_t msgsize)
{
	const struct vc_y4m_header *h = &f->hdr;
	uint64_t off = h->length;
	size_t cap = 0;

	while (off < size) {
		char line[VC_Y4M_MAX_FRAME_HEADER];
		size_t no = f->nframes + 1, hl = 0;
		ssize_t n;
		int r;

		if (f->nframes >= MAX_FRAMES)
			return fail(msg, msgsize, -EFBIG, "%s: more than %u frames", path, MAX_FRAMES);
		n = pread_full(f->fd, line, sizeof(line), off);
		if (n < 0)
			return fail(msg, msgsize, (int)n, "%s: reading frame %zu: %s", path, no,
				    strerror((int)-n));
		r = vc_y4m_parse_frame_header(line, (size_t)n, &hl);
		if (r == -EINVAL && n >= 7 && memcmp(line, FRAME_TAG "\r\n", 7) == 0)
			return fail(msg, msgsize, -EINVAL, "%s: frame %zu: its FRAME line ends in CR "
				    "LF (a Windows line ending): Y4M lines end in LF only", path, no);
		if (r == -EINVAL)
			return fail(msg, msgsize, -EINVAL, "%s: frame %zu: expected FRAME at byte %llu",
				    path, no, (unsigned long long)off);
		if (r == -ENODATA)
			return fail(msg, msgsize, -EINVAL,
				    "%s: frame %zu is truncated (its FRAME line is cut off)", path, no);
		if (r == -E2BIG)
			return fail(msg, msgsize, -EINVAL, "%s: frame %zu: FRAME line too long (more "
				    "than %d bytes)", path, no, VC_Y4M_MAX_FRAME_HEADER);
		off += hl;
		if (size - off < h->frame_size)
			return fail(msg, msgsize, -EINVAL,
				    "%s: frame %zu is truncated (got %llu of %zu bytes)", path, no,
				    (unsigned long long)(size - off), h->frame_size);
		if (f->nframes == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			uint64_t *o = realloc(f->offsets, ncap * sizeof(*o));

			if (!o)
				return fail(msg, msgsize, -ENOMEM, "%s: out of memory", path);
			f->offsets = o;
			cap = ncap;
		}
		f->offsets[f->nframes++] = off;
		off += h->frame_size;
	}
	if (!f->nframes)
		return fail(msg, msgsize, -EINVAL, "%s: no frames (the file ends after the header)",
			    path);
	return 0;
}

int vc_y4m_open(struct vc_y4m_file *f, const char *path, char *msg, size_t msgsize)
{
	char head[VC_Y4M_MAX_HEADER];
	char why[200];
	struct stat st;
	ssize_t n;
	int r;

	*f = (struct vc_y4m_file){ .fd = -1 };
	f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);	/* a FIFO must not block */
	if (f->fd < 0) {
		r = -errno;
		return fail(msg, msgsize, r, "%s: %s", path, strerror(-r));
	}
	if (fstat(f->fd, &st) < 0) {
		r = -errno;
		fail(msg, msgsize, r, "%s: %s", path, strerror(-r));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		r = fail(msg, msgsize, -EISDIR, "%s: %s", path, strerror(EISDIR));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		r = fail(msg, msgsize, -EINVAL, "%s: not a regular file", path);
		goto fail;
	}
	n = pread_full(f->fd, head, sizeof(head), 0);
	if (n < 0) {
		r = fail(msg, msgsize, (int)n, "%s: %s", path, strerror((int)-n));
		goto fail;
	}
	r = vc_y4m_parse_header(head, (size_t)n, &f->hdr, why, sizeof(why));
	if (r < 0) {
		fail(msg, msgsize, r, "%s: %s", path, why);
		goto fail;
	}
	r = index_frames(f, path, (uint64_t)st.st_size, msg, msgsize);
	if (r < 0)
		goto fail;
	return 0;
fail:
	vc_y4m_close(f);
	return r;
}

int vc_y4m_read_frame(const struct vc_y4m_file *f, size_t index, void *buf, size_t size)
{
	ssize_t n;

	if (index >= f->nframes || size < f->hdr.frame_size)
		return -EINVAL;
	n = pread_full(f->fd, buf, f->hdr.frame_size, f->offsets[index]);
	if (n < 0)
		return (int)n;
	return (size_t)n == f->hdr.frame_size ? 0 : -EIO;
}

void vc_y4m_unpack(const struct vc_y4m_header *hdr, const uint8_t *src, uint8_t *dst)
{
	size_t w = hdr->width, h = hdr->height;

	if (hdr->layout != VC_Y4M_422) {
		memcpy(dst, src, hdr->frame_size);
		return;
	}
	/* Planar 4:2:2 (Y w*h, Cb w/2*h, Cr w/2*h) to YUYV. */
	for (size_t y = 0; y < h; y++) {
		const uint8_t *py = src + y * w;
		const uint8_t *pu = src + w * h + y * (w / 2);
		const uint8_t *pv = src + w * h + (w / 2) * h + y * (w / 2);
		uint8_t *d = dst + y * w * 2;

		for (size_t i = 0; i < w / 2; i++) {
			d[4 * i] = py[2 * i];
			d[4 * i + 1] = pu[i];
			d[4 * i + 2] = py[2 * i + 1];
			d[4 * i + 3] = pv[i];
		}
	}
}

void vc_y4m_close(struct vc_y4m_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->offsets);
	*f = (struct vc_y4m_file){ .fd = -1 };
}
