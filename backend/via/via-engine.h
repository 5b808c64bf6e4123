/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * via-engine.h - the VX855 capture engine 0 as the VIA backend drives it: configuration for
 * an output size and format, start/stop, and frame completion by polling (never by the
 * interrupt: user space has no handler for it).
 */
#ifndef VIACAM_VIA_ENGINE_H
#define VIACAM_VIA_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "via-io.h"

#define VIA_MIN_WIDTH 176
#define VIA_MIN_HEIGHT 144
#define VIA_MAX_WIDTH 640
#define VIA_MAX_HEIGHT 480

struct via_engine {
	struct via_io *io;
	uint32_t width, height;	/* output */
	bool rgb565;
	uint32_t stride;	/* VSTRIDE: bytes per output line in VRAM */
	unsigned int nbufs;	/* 2 or 3 */
	uint32_t vbuf[3];	/* VRAM offsets */
	bool running;
	uint64_t frames, missed;	/* frames taken; frames the engine finished that we never saw */
	unsigned int last;	/* index of the last buffer taken */
};

/* The AVSCALE value for @width x @height from the sensor's 640x480 (0: no scaling). */
uint32_t via_engine_avscale(uint32_t width, uint32_t height);

/* Programs the engine (stopped) for @width x @height YUYV or (640x480 only) RGB565. 0 or
 * -EINVAL (size/format the engine cannot make) / -ENOSPC (camera area too small). */
int via_engine_configure(struct via_engine *e, struct via_io *io, uint32_t width,
			 uint32_t height, bool rgb565);
void via_engine_start(struct via_engine *e);
void via_engine_stop(struct via_engine *e);

/*
 * Polls for a finished frame, waiting at most @wait_ms. When the engine has finished one
 * since the last call (EAV), copies the newest finished buffer into @dst (@bytesperline per
 * line, height lines) and returns 1; 0 when none is ready yet.
 */
int via_engine_poll(struct via_engine *e, uint8_t *dst, size_t len, uint32_t bytesperline,
		    unsigned int wait_ms);

#endif /* VIACAM_VIA_ENGINE_H */
