// SPDX-License-Identifier: GPL-2.0-only
/*
 * be-file.c - the file backend: plays a YUV4MPEG2 (.y4m) file (parsing: y4m.c).
 *
 * Config keys:
 *   file = PATH      the clip (required; relative paths are relative to viacamd's working
 *                    directory)
 *   loop = yes | no  start again at the first frame after the last (default yes); with no,
 *                    the last frame is delivered again and again (the picture freezes, the
 *                    stream keeps its rate)
 *
 * create() opens the file and indexes every frame, so a missing, malformed or truncated file
 * is refused at config load, naming the file and the problem. The file stays open until
 * release; frames are read with pread() from it (regular files: the page cache, no waiting).
 *
 * One mode: the file's format (C420* -> YUV420, mono -> GREY, C422 -> YUYV repacked from the
 * planes), size, and frame interval (F<num>:<den> -> den/num, reduced). Frame N of a stream
 * (frame->sequence, 0 at each start) is the file's frame N mod count (loop) or min(N, count-1).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "y4m.h"

struct file_be {
	struct vc_y4m_file y4m;
	bool loop;
	uint8_t *planes;	/* one frame as stored, when it needs repacking (C422) */
	struct vc_mode mode;	/* the one mode */
	bool started;
};

static const char *const file_keys[] = { "file", "loop", NULL };

static uint32_t gcd_u32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static void file_release(void *priv)
{
	struct file_be *fb = priv;

	if (!fb)
		return;
	vc_y4m_close(&fb->y4m);
	free(fb->planes);
	free(fb);
}

static int file_create(const struct vc_backend_conf *conf, void **ret_priv, struct vc_error *err)
{
	const struct vc_kv *file = vc_conf_key(conf, "file");
	const struct vc_y4m_header *h;
	struct file_be *fb;
	char msg[sizeof(err->msg)];
	uint32_t g;
	int r;

	if (!file)
		return vc_err(err, 0, -EINVAL, "missing key 'file' (the .y4m clip to play)");
	fb = calloc(1, sizeof(*fb));
	if (!fb)
		return vc_err(err, 0, -ENOMEM, "out of memory");
	fb->y4m.fd = -1;
	fb->loop = true;
	r = vc_conf_bool(conf, "loop", &fb->loop, err);
	if (r < 0)
		goto fail;

	r = vc_y4m_open(&fb->y4m, file->value, msg, sizeof(msg));
	if (r < 0) {
		vc_err(err, file->line, r, "%s", msg);
		goto fail;
	}
	h = &fb->y4m.hdr;
	if (h->layout == VC_Y4M_422) {
		fb->planes = malloc(h->frame_size);
		if (!fb->planes) {
			r = vc_err(err, file->line, -ENOMEM, "%s: out of memory", file->value);
			goto fail;
		}
	}
	g = gcd_u32(h->fps_num, h->fps_den);
	fb->mode = (struct vc_mode){
		.pixelformat = h->pixelformat,
		.width = h->width,
		.height = h->height,
		.interval_num = h->fps_den / g,
		.interval_den = h->fps_num / g,
	};
	*ret_priv = fb;
	return 0;
fail:
	file_release(fb);
	return r;
}

static int file_describe(void *priv, struct vc_modes *modes)
{
	struct file_be *fb = priv;

	return vc_modes_add(modes, &fb->mode);
}

static int file_start(void *priv, const struct vc_mode *mode, struct vc_error *err)
{
	struct file_be *fb = priv;
	char a[5], b[5];

	/* The interval is not checked: frames follow the sequence, whatever the rate. */
	if (mode->pixelformat != fb->mode.pixelformat || mode->width != fb->mode.width ||
	    mode->height != fb->mode.height)
		return vc_err(err, 0, -EINVAL, "the file gives %s %ux%u only, not %s %ux%u",
			      vc_fourcc_str(fb->mode.pixelformat, a), fb->mode.width,
			      fb->mode.height, vc_fourcc_str(mode->pixelformat, b), mode->width,
			      mode->height);
	fb->started = true;
	return 0;
}

static int file_produce(void *priv, struct vc_frame *frame)
{
	struct file_be *fb = priv;
	const struct vc_y4m_header *h = &fb->y4m.hdr;
	size_t n = fb->y4m.nframes, index;
	int r;

	if (!fb->started)
		return -EINVAL;
	if (frame->size < h->output_size ||
	    frame->bytesperline != vc_bytesperline(h->pixelformat, h->width))
		return -EINVAL;
	if (fb->loop)
		index = (size_t)(frame->sequence % n);
	else
		index = frame->sequence < n ? (size_t)frame->sequence : n - 1;

	if (fb->planes) {
		r = vc_y4m_read_frame(&fb->y4m, index, fb->planes, h->frame_size);
		if (r < 0)
			return r;
		vc_y4m_unpack(h, fb->planes, frame->data);
	} else {
		r = vc_y4m_read_frame(&fb->y4m, index, frame->data, frame->size);
		if (r < 0)
			return r;
	}
	frame->bytesused = h->output_size;
	return 0;
}

static void file_stop(void *priv)
{
	struct file_be *fb = priv;

	fb->started = false;
}

const struct vc_backend_ops vc_backend_file = {
	.abi = VC_BACKEND_ABI,
	.name = "file",
	.summary = "plays a YUV4MPEG2 (.y4m) clip: 4:2:0, 4:2:2 or mono, looped",
	.keys = file_keys,
	.create = file_create,
	.describe = file_describe,
	.controls = NULL,
	.start = file_start,
	.produce = file_produce,
	.stop = file_stop,
	.set_ctrl = NULL,
	.release = file_release,
};
