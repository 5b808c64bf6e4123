// SPDX-License-Identifier: GPL-2.0-only
/*
 * via-engine.c - capture engine 0 of the VX855 (see via-engine.h; register facts in
 * ../../shared/via-hardware.md section 1).
 */
#include <errno.h>
#include <string.h>

#include "via-engine.h"

static uint32_t rd(struct via_engine *e, uint32_t off)
{
	return e->io->ops->rd32(e->io, off);
}

static void wr(struct via_engine *e, uint32_t off, uint32_t v)
{
	e->io->ops->wr32(e->io, off, v);
}

uint32_t via_engine_avscale(uint32_t width, uint32_t height)
{
	uint32_t v = 0;

	if (width != 640)
		v |= VIA_SCALE_H_EN | ((width * 2048 / 640) & 0x7ff);
	if (height < 480)
		v |= VIA_SCALE_V_EN | (((height * 1024 / 480) & 0x3ff) << 16);
	return v;
}

int via_engine_configure(struct via_engine *e, struct via_io *io, uint32_t width,
			 uint32_t height, bool rgb565)
{
	uint32_t capintc, frame;

	memset(e, 0, sizeof(*e));
	e->io = io;
	if (width < VIA_MIN_WIDTH || width > VIA_MAX_WIDTH || height < VIA_MIN_HEIGHT ||
	    height > VIA_MAX_HEIGHT || (width & 1))
		return -EINVAL;
	/* RGB565 colours break in the scaler: VGA only. */
	if (rgb565 && (width != 640 || height != 480))
		return -EINVAL;
	e->width = width;
	e->height = height;
	e->rgb565 = rgb565;
	/* The driver ANDs the line length with 1FF0; rounding up keeps odd multiples valid. */
	e->stride = (width * 2 + 15) & ~15u;
	/* Buffers spaced by a full VGA frame in the reserved area, as many as fit (2 or 3). */
	e->nbufs = io->cam_size / VIA_CAM_FRAME;
	if (e->nbufs > 3)
		e->nbufs = 3;
	if (e->nbufs < 2)
		return -ENOSPC;
	frame = e->stride * height;
	if (frame > VIA_CAM_FRAME)
		return -ENOSPC;
	for (unsigned int i = 0; i < e->nbufs; i++)
		e->vbuf[i] = io->cam_offset + i * VIA_CAM_FRAME;

	/* Clock off and everything quiet before touching the engine. */
	wr(e, VIA_CAPINTC, ~(VIA_CAP_ENABLE | VIA_CAP_CLKEN));
	wr(e, VIA_HORRANGE, 0x06200120);
	wr(e, VIA_VERTRANGE, 0x01de0000);
	wr(e, VIA_AVSCALE, via_engine_avscale(width, height));
	wr(e, VIA_MAXDATA, (480u << 16) | (1280u >> 3));
	wr(e, VIA_MAXVBI, 0);
	wr(e, VIA_VSTRIDE, e->stride & VIA_VSTRIDE_MASK);
	capintc = VIA_CAP_CLKEN | (8u << VIA_CAP_FIFO_SHIFT) | VIA_CAP_FLDINV | VIA_CAP_VREFINV |
		  (2u << VIA_CAP_DEINT_SHIFT);
	if (e->nbufs == 3)
		capintc |= VIA_CAP_3BUFS;
	if (rgb565)
		capintc |= 1u << VIA_CAP_BYTEORDER_SHIFT;	/* byte swap for RGB */
	wr(e, VIA_CAPINTC, capintc);
	for (unsigned int i = 0; i < e->nbufs; i++)
		wr(e, VIA_VBUF(i), e->vbuf[i] & VIA_VBUF_MASK);
	return 0;
}

void via_engine_start(struct via_engine *e)
{
	wr(e, VIA_CAPINTC, rd(e, VIA_CAPINTC) | VIA_CAP_ENABLE);
	/* Clear stale status; the interrupt itself stays off (INTEN never set). */
	wr(e, VIA_INTCTRL, VIA_INT_EAV | VIA_INT_EVBI | VIA_INT_FFULL);
	(void)rd(e, VIA_CAPINTC);	/* flush */
	e->running = true;
	e->frames = e->missed = 0;
	e->last = e->nbufs - 1;
}

void via_engine_stop(struct via_engine *e)
{
	if (!e->io)
		return;
	wr(e, VIA_INTCTRL, 0);
	wr(e, VIA_CAPINTC, rd(e, VIA_CAPINTC) & ~VIA_CAP_ENABLE);
	(void)rd(e, VIA_CAPINTC);
	e->running = false;
}

int via_engine_poll(struct via_engine *e, uint8_t *dst, size_t len, uint32_t bytesperline,
		    unsigned int wait_ms)
{
	uint64_t deadline = via_now_ns() + (uint64_t)wait_ms * 1000000ull;
	uint32_t st, line = e->width * 2;
	unsigned int act, done;

	if (!e->running)
		return 0;
	for (;;) {
		if (e->io->ops->poll)
			e->io->ops->poll(e->io);
		st = rd(e, VIA_INTCTRL);
		if (st & VIA_INT_EAV)
			break;
		if (via_now_ns() >= deadline)
			return 0;
		via_sleep_ms(1);
	}
	wr(e, VIA_INTCTRL, st | VIA_INT_EAV | VIA_INT_EVBI | VIA_INT_FFULL);	/* W1C */
	act = (st & VIA_INT_ACTBUF_MASK) >> VIA_INT_ACTBUF_SHIFT;
	done = act ? act - 1 : e->nbufs - 1;
	/* The buffer after the last one taken should be this one; else frames went by. */
	if (done != (e->last + 1) % e->nbufs)
		e->missed++;
	e->last = done;
	if (bytesperline < line || len < (size_t)bytesperline * e->height)
		return -EINVAL;
	for (uint32_t y = 0; y < e->height; y++)
		memcpy(dst + (size_t)y * bytesperline,
		       e->io->vram + e->vbuf[done] + (size_t)y * e->stride, line);
	e->frames++;
	return 1;
}
