// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcpix.c - checks that captured frames show the pattern backend's picture.
 *
 *   vcpix FILE FOURCC WIDTH HEIGHT [-p PATTERN] [-c NAME=VALUE]... [-n FRAME]
 *
 * FILE holds raw frames as a client captured them (v4l2-ctl --stream-to, ffmpeg -f rawvideo);
 * frame FRAME (default: the last one) is compared on a grid of 48 points with what
 * backend/pattern/pattern.c says the scene is for the given pattern and controls (-c brightness=20,
 * -c horizontal_flip=1, ...). Points under the frame counter are skipped, and a point may
 * show the moving box instead. FOURCC: YUYV, NV12 and YU12 compare Y'CbCr exactly; RGB3
 * compares with libv4lconvert's full-range conversion within +-24 per channel.
 * Prints one line and exits 0 when at least 44 of the points match, else 1.
 *
 *   vcpix --via FILE YUYV WIDTH HEIGHT [-c horizontal_flip=1] [-c vertical_flip=1]
 *         [-c test_pattern=N]
 *
 * compares every pixel of the frame, outside the areas that change per frame, with the VIA
 * model's reference render (backend/via/via-model.c) for those sensor settings; exits 0
 * when at least 99% of them are equal.
 *
 *   vcpix --same FILE REF FRAMESIZE [MAXDIFF [PERCENT]]
 *
 * compares the last frame of FILE byte for byte with the first frame of REF (both raw, any
 * format, FRAMESIZE bytes each): a reference the source made itself (gst-launch-1.0 with the
 * same conversion), for sources other than the pattern backend. Exits 0 when at least PERCENT
 * (default 99) per cent of the bytes differ by at most MAXDIFF (default 3).
 *
 *   vcpix --real FILE FRAMESIZE
 *
 * counts the frames of FILE (raw, FRAMESIZE bytes each) that are not neutral grey: more than
 * 1000 of their bytes differ from 0x80 (what the bridge sends before a producer's first frame
 * for a stream). Prints "REAL LAST": how many, and the number (from 1) of the last such frame
 * (0: none). Exits 0 when FILE could be read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "backend.h"
#include "pattern.h"
#include "via-model.h"

static int clamp8(int v)
{
	return v < 0 ? 0 : v > 255 ? 255 : v;
}

static void to_rgb(struct vc_ycbcr c, int rgb[3])
{
	int y = c.y, u = c.cb - 128, v = c.cr - 128;

	rgb[0] = clamp8(y + (1402 * v) / 1000);
	rgb[1] = clamp8(y - (344 * u + 714 * v) / 1000);
	rgb[2] = clamp8(y + (1772 * u) / 1000);
}

/* The pixel at (x, y) of @f as Y'CbCr (yuv formats) or RGB in rgb[]. */
static void read_px(const uint8_t *f, uint32_t fourcc, uint32_t w, uint32_t h, uint32_t x,
		    uint32_t y, struct vc_ycbcr *c, int rgb[3])
{
	switch (fourcc) {
	case V4L2_PIX_FMT_YUYV: {
		const uint8_t *p = f + (size_t)y * w * 2 + (x & ~1u) * 2;

		c->y = p[(x & 1) * 2];
		c->cb = p[1];
		c->cr = p[3];
		break;
	}
	case V4L2_PIX_FMT_NV12: {
		const uint8_t *uv = f + (size_t)w * h + (size_t)(y / 2) * w + (x & ~1u);

		c->y = f[(size_t)y * w + x];
		c->cb = uv[0];
		c->cr = uv[1];
		break;
	}
	case V4L2_PIX_FMT_YUV420:
		c->y = f[(size_t)y * w + x];
		c->cb = f[(size_t)w * h + (size_t)(y / 2) * (w / 2) + x / 2];
		c->cr = f[(size_t)w * h * 5 / 4 + (size_t)(y / 2) * (w / 2) + x / 2];
		break;
	default: {		/* RGB24 */
		const uint8_t *p = f + ((size_t)y * w + x) * 3;

		rgb[0] = p[0];
		rgb[1] = p[1];
		rgb[2] = p[2];
	}
	}
}

static bool same(uint32_t fourcc, struct vc_ycbcr got, const int rgb[3], struct vc_ycbcr want)
{
	int w[3];

	if (fourcc != V4L2_PIX_FMT_RGB24)
		return got.y == want.y && got.cb == want.cb && got.cr == want.cr;
	to_rgb(want, w);
	for (int i = 0; i < 3; i++)
		if (abs(rgb[i] - w[i]) > 24)
			return false;
	return true;
}

static int set_ctrl(struct vc_pattern_params *p, const char *arg)
{
	char name[64];
	const char *eq = strchr(arg, '=');
	int v;

	if (!eq || (size_t)(eq - arg) >= sizeof(name))
		return -EINVAL;
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = 0;
	v = atoi(eq + 1);
	if (!strcmp(name, "brightness"))
		p->brightness = v;
	else if (!strcmp(name, "contrast"))
		p->contrast = v;
	else if (!strcmp(name, "saturation"))
		p->saturation = v;
	else if (!strcmp(name, "hue"))
		p->hue = v;
	else if (!strcmp(name, "horizontal_flip"))
		p->hflip = v;
	else if (!strcmp(name, "vertical_flip"))
		p->vflip = v;
	else if (!strcmp(name, "test_pattern"))
		p->pattern = (enum vc_pattern_kind)v;
	else
		return -EINVAL;
	return 0;
}

/* Reads frame @frame (-1: the last) of @path into a new buffer of @fsize bytes. */
static uint8_t *read_frame(const char *path, size_t fsize, long *frame, size_t *nframes)
{
	struct stat st;
	uint8_t *buf;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st) < 0) {
		fprintf(stderr, "vcpix: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	*nframes = (size_t)st.st_size / fsize;
	if (!*nframes || (size_t)st.st_size % fsize) {
		fprintf(stderr, "vcpix: %s: %lld bytes is not a whole number of %zu-byte frames\n",
			path, (long long)st.st_size, fsize);
		fclose(f);
		return NULL;
	}
	if (*frame < 0)
		*frame = (long)*nframes - 1;
	buf = malloc(fsize);
	if (!buf || (size_t)*frame >= *nframes || fseek(f, *frame * (long)fsize, SEEK_SET) ||
	    fread(buf, 1, fsize, f) != fsize) {
		fprintf(stderr, "vcpix: %s: cannot read frame %ld of %zu\n", path, *frame, *nframes);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	return buf;
}

static int via_main(int argc, char **argv)
{
	struct via_model_scene sc;
	uint32_t w, h;
	long frame = -1, same_px;
	size_t nframes, total = 0;
	uint8_t *buf;
	int o;

	if (argc < 5) {
		fprintf(stderr, "usage: vcpix --via FILE YUYV WIDTH HEIGHT [-c NAME=VALUE]...\n");
		return 2;
	}
	w = (uint32_t)atoi(argv[3]);
	h = (uint32_t)atoi(argv[4]);
	if (strcmp(argv[2], "YUYV") || w < 16 || h < 16 || w > 640 || h > 480) {
		fprintf(stderr, "vcpix: --via checks YUYV frames up to 640x480\n");
		return 2;
	}
	via_model_scene_init(&sc, w, h);
	optind = 5;
	while ((o = getopt(argc, argv, "c:n:")) >= 0) {
		const char *v = optarg ? strchr(optarg, '=') : NULL;

		if (o == 'n') {
			frame = atol(optarg);
		} else if (o == 'c' && v && !strncmp(optarg, "horizontal_flip=", 16)) {
			sc.hflip = atoi(v + 1);
		} else if (o == 'c' && v && !strncmp(optarg, "vertical_flip=", 14)) {
			sc.vflip = atoi(v + 1);
		} else if (o == 'c' && v && !strncmp(optarg, "test_pattern=", 13)) {
			sc.test_pattern = (unsigned int)atoi(v + 1);
		} else {
			fprintf(stderr, "vcpix: --via: bad option\n");
			return 2;
		}
	}
	buf = read_frame(argv[1], (size_t)w * h * 2, &frame, &nframes);
	if (!buf)
		return 1;
	same_px = via_model_compare(&sc, buf, &total);
	printf("vcpix: %s frame %ld of %zu (VIA model, %ux%u%s%s, test pattern %u): %ld of %zu pixels match the model\n",
	       argv[1], frame + 1, nframes, w, h, sc.hflip ? ", hflip" : "", sc.vflip ? ", vflip" : "",
	       sc.test_pattern, same_px, total);
	free(buf);
	return total && same_px >= 0 && (size_t)same_px * 100 >= total * 99 ? 0 : 1;
}

static int same_main(int argc, char **argv)
{
	long fa = -1, fb = 0;
	size_t na, nb, size, close_ = 0, maxd = 3, pct = 99;
	uint8_t *a, *b;

	if (argc < 4 || !(size = strtoul(argv[3], NULL, 0))) {
		fprintf(stderr, "usage: vcpix --same FILE REF FRAMESIZE [MAXDIFF [PERCENT]]\n");
		return 2;
	}
	if (argc > 4)
		maxd = strtoul(argv[4], NULL, 0);
	if (argc > 5)
		pct = strtoul(argv[5], NULL, 0);
	a = read_frame(argv[1], size, &fa, &na);
	b = read_frame(argv[2], size, &fb, &nb);
	if (!a || !b) {
		free(a);
		free(b);
		return 1;
	}
	for (size_t i = 0; i < size; i++)
		close_ += (size_t)abs((int)a[i] - (int)b[i]) <= maxd;
	printf("vcpix: %s frame %ld of %zu: %zu of %zu bytes within %zu of %s\n", argv[1], fa + 1,
	       na, close_, size, maxd, argv[2]);
	free(a);
	free(b);
	return close_ * 100 >= size * pct ? 0 : 1;
}

static int real_main(int argc, char **argv)
{
	size_t size, n, real = 0, last = 0, grey;
	uint8_t *frame;
	FILE *f;

	if (argc != 3 || !(size = strtoul(argv[2], NULL, 0))) {
		fprintf(stderr, "usage: vcpix --real FILE FRAMESIZE\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	frame = malloc(size);
	if (!f || !frame) {
		fprintf(stderr, "vcpix: %s: %s\n", argv[1], strerror(errno));
		if (f)
			fclose(f);
		free(frame);
		return 1;
	}
	for (n = 1; fread(frame, 1, size, f) == size; n++) {
		grey = 0;
		for (size_t i = 0; i < size; i++)
			grey += frame[i] == 0x80;
		if (size - grey > 1000) {
			real++;
			last = n;
		}
	}
	fclose(f);
	free(frame);
	printf("%zu %zu\n", real, last);
	return 0;
}

int main(int argc, char **argv)
{
	struct vc_pattern_params p;
	uint32_t fourcc = 0, w, h, cx, cy, cw, ch;
	long frame = -1;
	size_t fsize, nframes;
	struct stat st;
	uint8_t *buf;
	FILE *f;
	int o, matched = 0, total = 0, shown = 0;

	if (argc > 1 && !strcmp(argv[1], "--via"))
		return via_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "--same"))
		return same_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "--real"))
		return real_main(argc - 1, argv + 1);
	vc_pattern_params_init(&p);
	while ((o = getopt(argc, argv, "p:c:n:")) >= 0) {
		switch (o) {
		case 'p':
			if (vc_pattern_from_name(optarg) < 0) {
				fprintf(stderr, "vcpix: unknown pattern '%s'\n", optarg);
				return 2;
			}
			p.pattern = (enum vc_pattern_kind)vc_pattern_from_name(optarg);
			break;
		case 'c':
			if (set_ctrl(&p, optarg) < 0) {
				fprintf(stderr, "vcpix: bad control '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n':
			frame = atol(optarg);
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 4 || strlen(argv[optind + 1]) != 4) {
		fprintf(stderr, "usage: vcpix FILE FOURCC WIDTH HEIGHT [-p PATTERN] [-c NAME=VALUE]... [-n FRAME]\n");
		return 2;
	}
	memcpy(&fourcc, argv[optind + 1], 4);
	w = (uint32_t)atoi(argv[optind + 2]);
	h = (uint32_t)atoi(argv[optind + 3]);
	fsize = vc_sizeimage(fourcc, w, h);
	if (!fsize || (fourcc != V4L2_PIX_FMT_YUYV && fourcc != V4L2_PIX_FMT_NV12 &&
		       fourcc != V4L2_PIX_FMT_YUV420 && fourcc != V4L2_PIX_FMT_RGB24)) {
		fprintf(stderr, "vcpix: unsupported format %s %ux%u\n", argv[optind + 1], w, h);
		return 2;
	}
	f = fopen(argv[optind], "rb");
	if (!f || fstat(fileno(f), &st) < 0) {
		fprintf(stderr, "vcpix: %s: %s\n", argv[optind], strerror(errno));
		return 2;
	}
	nframes = (size_t)st.st_size / fsize;
	if (!nframes || (size_t)st.st_size % fsize) {
		fprintf(stderr, "vcpix: %s: %lld bytes is not a whole number of %zu-byte frames\n",
			argv[optind], (long long)st.st_size, fsize);
		return 1;
	}
	if (frame < 0)
		frame = (long)nframes - 1;
	buf = malloc(fsize);
	if (!buf || (size_t)frame >= nframes || fseek(f, frame * (long)fsize, SEEK_SET) ||
	    fread(buf, 1, fsize, f) != fsize) {
		fprintf(stderr, "vcpix: %s: cannot read frame %ld of %zu\n", argv[optind], frame,
			nframes);
		return 1;
	}
	fclose(f);

	/* The counter is drawn at the same place for every sequence below a million. */
	vc_pattern_counter_rect(w, h, 0, &cx, &cy, &cw, &ch);
	struct vc_pattern_params scene = p;
	struct vc_ycbcr box;

	scene.counter = false;
	scene.moving = false;
	box = vc_pattern_apply(&p, (struct vc_ycbcr){ 146, 53, 193 });
	for (int gy = 0; gy < 6; gy++) {
		for (int gx = 0; gx < 8; gx++) {
			uint32_t x = (uint32_t)((2 * gx + 1) * (int)w / 16) & ~1u;
			uint32_t y = (uint32_t)((2 * gy + 1) * (int)h / 12) & ~1u;
			struct vc_ycbcr got = { 0 }, want;
			int rgb[3] = { 0 };

			if (x >= cx && x < cx + cw + 8 && y >= cy && y < cy + ch + 8)
				continue;
			total++;
			want = vc_pattern_pixel(&scene, w, h, 0, x, y);
			read_px(buf, fourcc, w, h, x, y, &got, rgb);
			if (same(fourcc, got, rgb, want) || same(fourcc, got, rgb, box)) {
				matched++;
			} else if (shown++ < 5) {
				if (fourcc == V4L2_PIX_FMT_RGB24)
					fprintf(stderr, "vcpix: (%u,%u): got RGB %d,%d,%d, want YCbCr %u,%u,%u\n",
						x, y, rgb[0], rgb[1], rgb[2], want.y, want.cb, want.cr);
				else
					fprintf(stderr, "vcpix: (%u,%u): got YCbCr %u,%u,%u, want %u,%u,%u\n",
						x, y, got.y, got.cb, got.cr, want.y, want.cb, want.cr);
			}
		}
	}
	free(buf);
	printf("vcpix: %s frame %ld of %zu (%.4s %ux%u, %s): %d of %d points match\n", argv[optind],
	       frame + 1, nframes, argv[optind + 1], w, h, vc_pattern_name(p.pattern), matched,
	       total);
	return matched >= total - 4 && total >= 40 ? 0 : 1;
}
