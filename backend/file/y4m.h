/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * y4m.h - YUV4MPEG2 (.y4m) reading for the file backend.
 *
 * A Y4M file is one header line, then frames, each a "FRAME" line and the raw planes:
 *   YUV4MPEG2 W<w> H<h> F<num>:<den> [I<p|t|b|m|?>] [A<n>:<d>] [C<colourspace>] [X<anything>]\n
 *   FRAME[ <params>]\n <planes> ...
 * What is read:
 *   W, H    required, 16..8192 (the bridge's limits)
 *   F       required, frames per second num:den, both > 0, from 1/60 to 1000 frames per
 *           second (VC_MIN_FPS_DIV, VC_MAX_FPS in backend.h)
 *   I       p or ? (progressive); t, b, m (interlaced) are refused
 *   C       420jpeg, 420paldv, 420mpeg2, 420 (the default when absent): planar 4:2:0, handed on
 *           as V4L2_PIX_FMT_YUV420 unchanged (the chroma siting differences are ignored);
 *           even width and height required.
 *           mono: V4L2_PIX_FMT_GREY unchanged.
 *           422: planar 4:2:2 (Y, Cb, Cr planes), repacked to V4L2_PIX_FMT_YUYV by
 *           vc_y4m_unpack(); even width and height required (the bridge's YUYV rule).
 *           Anything else (444, 411, 10-bit, alpha ...) is refused with the supported list.
 *   A, X, unknown tags, and FRAME line parameters are ignored.
 * Lines end in LF; a CR LF line is refused as such. Bytes of bad tags shown in messages are
 * escaped (text.h).
 * Frames are numbered from 1 in messages ("frame 1" is the first frame of the file).
 */
#ifndef VIACAM_Y4M_H
#define VIACAM_Y4M_H

#include <stddef.h>
#include <stdint.h>

#define VC_Y4M_MAX_HEADER	1024	/* stream header line, newline included */
#define VC_Y4M_MAX_FRAME_HEADER	256	/* FRAME line, newline included */

enum vc_y4m_layout {
	VC_Y4M_420,
	VC_Y4M_422,
	VC_Y4M_MONO,
};

struct vc_y4m_header {
	uint32_t width;
	uint32_t height;
	uint32_t fps_num;	/* F<num>:<den>: frames per second; frame interval = den/num s */
	uint32_t fps_den;
	enum vc_y4m_layout layout;
	uint32_t pixelformat;	/* what frames become: V4L2_PIX_FMT_YUV420, _YUYV or _GREY */
	char colourspace[16];	/* the C tag's value ("420jpeg" when absent) */
	size_t length;		/* bytes of the header line, newline included */
	size_t frame_size;	/* bytes of one frame's planes in the file */
	size_t output_size;	/* bytes of one frame as pixelformat (the bridge's layout) */
};

/*
 * Parses the stream header at the start of @buf (@len bytes: the file's first bytes, up to
 * VC_Y4M_MAX_HEADER). Returns 0 and fills *@ret, or -EINVAL with the problem in @msg
 * (without the file name), e.g. "bad frame rate F30:0".
 */
int vc_y4m_parse_header(const void *buf, size_t len, struct vc_y4m_header *ret,
			char *msg, size_t msgsize);

/*
 * Checks the FRAME line at the start of @buf (@len bytes available, up to
 * VC_Y4M_MAX_FRAME_HEADER). Returns 0 and its length (newline included) in *@ret_len;
 * -EINVAL when @buf does not start with a FRAME line, -ENODATA when it is cut off by the end
 * of @buf (a prefix of a FRAME line), -E2BIG when it is longer than VC_Y4M_MAX_FRAME_HEADER.
 */
int vc_y4m_parse_frame_header(const void *buf, size_t len, size_t *ret_len);

/* An open, indexed Y4M file. */
struct vc_y4m_file {
	int fd;
	struct vc_y4m_header hdr;
	uint64_t *offsets;	/* file offset of each frame's planes */
	size_t nframes;		/* >= 1 */
};

/*
 * Opens @path, parses its header and indexes every frame (so a damaged file fails here, not
 * while streaming). Returns 0, or a negative errno with "PATH: problem" in @msg, e.g.
 * "clip.y4m: frame 3 is truncated (got 1000 of 115200 bytes)" or
 * "clip.y4m: No such file or directory".
 */
int vc_y4m_open(struct vc_y4m_file *f, const char *path, char *msg, size_t msgsize);

/* Reads frame @index's planes as stored (hdr.frame_size bytes) into @buf. 0 or -errno
 * (-EIO when the file got shorter since it was opened). */
int vc_y4m_read_frame(const struct vc_y4m_file *f, size_t index, void *buf, size_t size);

/* Converts one frame's planes (@src, hdr->frame_size bytes) into hdr->pixelformat's layout
 * (@dst, hdr->output_size bytes): a copy, or the 4:2:2 planar to YUYV repacking. */
void vc_y4m_unpack(const struct vc_y4m_header *hdr, const uint8_t *src, uint8_t *dst);

/* Closes and frees @f. Harmless after a failed vc_y4m_open(), which leaves fd = -1. */
void vc_y4m_close(struct vc_y4m_file *f);

#endif /* VIACAM_Y4M_H */
