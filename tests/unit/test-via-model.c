// SPDX-License-Identifier: GPL-2.0-only
/* test-via-model.c - the VX855 capture engine + OV7670 model (transport "model"), fake clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../backend/via/ov7670-regs.h"
#include "../../backend/via/via-io.h"
#include "../../backend/via/via-model.h"

#define MS		1000000ull
#define VRAM		(8u << 20)
#define VGA_FRAME	(640u * 480u * 2u)

struct fx {
	struct via_io io;
	uint64_t now;		/* the fake clock, ns */
	uint32_t stride;
};

static uint64_t fake_clock(void *data)
{
	return ((struct fx *)data)->now;
}

static struct fx *fx_open_conf(struct via_model_conf *c)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->io.i2c_fd = -1;
	f->now = 1000 * MS;
	if (!c->vram_size)
		c->vram_size = VRAM;
	c->clock = fake_clock;
	c->clock_data = f;
	assert_int_equal(via_model_open(&f->io, c), 0);
	return f;
}

static int setup(void **state)
{
	struct via_model_conf c = { 0 };

	*state = fx_open_conf(&c);
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f) {
		f->io.ops->close(&f->io);
		free(f);
	}
	return 0;
}

static uint32_t rd(struct fx *f, uint32_t off)
{
	return f->io.ops->rd32(&f->io, off);
}

static void wr(struct fx *f, uint32_t off, uint32_t v)
{
	f->io.ops->wr32(&f->io, off, v);
}

static void sensor_set(struct fx *f, uint8_t reg, uint8_t val)
{
	assert_int_equal(via_sensor_write(&f->io, reg, val), 0);
}

static uint8_t sensor_get(struct fx *f, uint8_t reg)
{
	uint8_t v = 0;

	assert_int_equal(via_sensor_read(&f->io, reg, &v), 0);
	return v;
}

static void advance_ms(struct fx *f, uint64_t ms)
{
	f->now += ms * MS;
	f->io.ops->poll(&f->io);
}

static unsigned int actbuf(struct fx *f)
{
	return (rd(f, VIA_INTCTRL) & VIA_INT_ACTBUF_MASK) >> VIA_INT_ACTBUF_SHIFT;
}

/* The engine programmed the way the driver does it (facts 1.3), stopped. */
static void engine_setup(struct fx *f, uint32_t w, uint32_t h, unsigned int nbufs,
			 unsigned int order)
{
	uint32_t avs = 0, cap;

	if (w != 640)
		avs |= VIA_SCALE_H_EN | (w * 2048 / 640);
	if (h < 480)
		avs |= VIA_SCALE_V_EN | ((h * 1024 / 480) << 16);
	f->stride = (w * 2 + 15) & ~15u;
	wr(f, VIA_CAPINTC, ~(VIA_CAP_ENABLE | VIA_CAP_CLKEN));
	wr(f, VIA_HORRANGE, 0x06200120);
	wr(f, VIA_VERTRANGE, 0x01de0000);
	wr(f, VIA_AVSCALE, avs);
	wr(f, VIA_MAXDATA, 0x01e000a0);
	wr(f, VIA_MAXVBI, 0);
	wr(f, VIA_VSTRIDE, f->stride);
	cap = VIA_CAP_CLKEN | (8u << VIA_CAP_FIFO_SHIFT) | VIA_CAP_FLDINV | VIA_CAP_VREFINV |
	      (2u << VIA_CAP_DEINT_SHIFT) | (order << VIA_CAP_BYTEORDER_SHIFT);
	if (nbufs == 3)
		cap |= VIA_CAP_3BUFS;
	wr(f, VIA_CAPINTC, cap);
	for (unsigned int i = 0; i < 3; i++)
		wr(f, VIA_VBUF(i), f->io.cam_offset + i * VGA_FRAME);
}

/* Sensor: YUYV (neutral matrix) or RGB565 at CLKRC @clkrc. */
static void sensor_setup(struct fx *f, bool rgb, uint8_t clkrc)
{
	sensor_set(f, OV_COM7, rgb ? OV_COM7_RGB : 0);
	sensor_set(f, OV_MTX1, rgb ? 0xb3 : 0x80);
	sensor_set(f, OV_CLKRC, clkrc);
}

static void engine_start(struct fx *f)
{
	wr(f, VIA_CAPINTC, rd(f, VIA_CAPINTC) | VIA_CAP_ENABLE);
	wr(f, VIA_INTCTRL, VIA_INT_EAV | VIA_INT_EVBI | VIA_INT_FFULL);
}

static const uint8_t *buffer(struct fx *f, unsigned int i)
{
	return f->io.vram + rd(f, VIA_VBUF(i));
}

/* Buffer @i holds frame @seq of scene @sc, line by line. */
static void assert_frame(struct fx *f, unsigned int i, const struct via_model_scene *sc,
			 uint64_t seq)
{
	size_t size = (size_t)f->stride * sc->height;
	uint8_t *exp = calloc(1, size);
	const uint8_t *got = buffer(f, i);

	assert_non_null(exp);
	via_model_render(sc, seq, exp, f->stride);
	for (uint32_t y = 0; y < sc->height; y++)
		assert_memory_equal(got + (size_t)y * f->stride, exp + (size_t)y * f->stride,
				    sc->width * 2);
	free(exp);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* ----- open, identity, sensor register file ----- */

static void test_open(void **state)
{
	struct fx *f = *state;
	struct via_io io;
	struct via_model_conf c = { .vram_size = 48u << 20 };

	assert_string_equal(f->io.ops->name, "model");
	assert_int_equal(f->io.vram_size, VRAM);
	assert_int_equal(f->io.cam_offset, VRAM - 0x204000);
	assert_int_equal(f->io.cam_offset % 4096, 0);
	assert_int_equal(f->io.cam_size, 3 * 640 * 480 * 2);
	assert_int_equal(f->io.i2c_fd, -1);
	assert_true(all_zero(f->io.vram, VRAM));
	assert_null(via_model_error(&f->io));
	assert_int_equal(via_model_frames(&f->io), 0);

	memset(&io, 0, sizeof(io));
	io.i2c_fd = -1;
	assert_int_equal(via_model_open(&io, &c), -EINVAL);
	assert_non_null(strstr(io.error, "power of two"));
	c.vram_size = 4u << 20;
	assert_int_equal(via_model_open(&io, &c), -EINVAL);
	c = (struct via_model_conf){ .use_i2c = true };
	assert_int_equal(via_model_open(&io, &c), -EINVAL);
	/* acting as the chip on a bus that is no i2c-dev: the first SMBus write fails */
	c = (struct via_model_conf){ .use_i2c = true };
	io.i2c_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	assert_true(io.i2c_fd >= 0);
	assert_int_equal(via_model_open(&io, &c), -ENOTTY);
	assert_non_null(strstr(io.error, "SMBus write of register 0x00 failed"));
	close(io.i2c_fd);
	io.i2c_fd = 5;	/* without use_i2c the model's own sensor: i2c_fd becomes -1 */
	/* NULL conf: 64 MiB, the real clock */
	assert_int_equal(via_model_open(&io, NULL), 0);
	assert_int_equal(io.vram_size, 64u << 20);
	assert_int_equal(io.cam_offset, (64u << 20) - 0x204000);
	assert_int_equal(io.i2c_fd, -1);
	io.ops->close(&io);
	assert_null(io.vram);
}

static void test_sensor_identity_and_defaults(void **state)
{
	struct fx *f = *state;

	assert_int_equal(sensor_get(f, OV_MIDH), 0x7f);
	assert_int_equal(sensor_get(f, OV_MIDL), 0xa2);
	assert_int_equal(sensor_get(f, OV_PID), 0x76);
	assert_int_equal(sensor_get(f, OV_VER), 0x73);
	assert_int_equal(sensor_get(f, OV_COM7), 0x00);
	assert_int_equal(sensor_get(f, OV_CLKRC), 0x80);
	assert_int_equal(sensor_get(f, OV_CONTRAS), 0x40);
	assert_int_equal(sensor_get(f, OV_MVFP), 0x00);
	/* identity is read-only */
	sensor_set(f, OV_PID, 0x12);
	assert_int_equal(sensor_get(f, OV_PID), 0x76);
	/* plain storage */
	sensor_set(f, 0x9e, 0x3f);
	assert_int_equal(sensor_get(f, 0x9e), 0x3f);
}

static void test_sensor_reset(void **state)
{
	struct fx *f = *state;

	sensor_set(f, OV_CLKRC, 0x03);
	sensor_set(f, OV_MVFP, 0x37);
	sensor_set(f, OV_BRIGHT, 0x99);
	sensor_set(f, OV_COM7, OV_COM7_RGB | OV_COM7_QVGA);
	assert_int_equal(sensor_get(f, OV_COM7), OV_COM7_RGB | OV_COM7_QVGA);
	sensor_set(f, OV_COM7, OV_COM7_RESET | OV_COM7_RGB);
	assert_int_equal(sensor_get(f, OV_COM7), 0x00);	/* self-cleared, RGB gone too */
	assert_int_equal(sensor_get(f, OV_CLKRC), 0x80);
	assert_int_equal(sensor_get(f, OV_MVFP), 0x00);
	assert_int_equal(sensor_get(f, OV_BRIGHT), 0x00);
	assert_int_equal(sensor_get(f, OV_MTX1), 0x40);
	assert_int_equal(sensor_get(f, OV_SCALING_XSC), 0x3a);
	assert_int_equal(sensor_get(f, OV_MIDH), 0x7f);
	assert_int_equal(sensor_get(f, OV_VER), 0x73);
}

static void test_sensor_absent(void **state)
{
	struct via_model_conf c = { .sensor_absent = true };
	struct fx *f = fx_open_conf(&c);
	uint8_t v;

	(void)state;
	assert_int_equal(f->io.ops->sensor_read(&f->io, OV_PID, &v), -ENXIO);
	assert_int_equal(f->io.ops->sensor_write(&f->io, OV_CLKRC, 3), -ENXIO);
	assert_int_equal(via_sensor_read(&f->io, OV_PID, &v), -ENXIO);
	assert_non_null(strstr(f->io.error, "0x0a"));
	/* no pixel clock, no frames, and that is not a misprogramming */
	engine_setup(f, 640, 480, 3, 0);
	engine_start(f);
	advance_ms(f, 1000);
	assert_int_equal(via_model_frames(&f->io), 0);
	assert_false(rd(f, VIA_INTCTRL) & VIA_INT_EAV);
	assert_null(via_model_error(&f->io));
	f->io.ops->close(&f->io);
	free(f);
}

static void test_sensor_custom_id(void **state)
{
	struct via_model_conf c = { .sensor_id = { 0x7f, 0xa2, 0x76, 0x91 } };
	struct fx *f = fx_open_conf(&c);

	(void)state;
	assert_int_equal(sensor_get(f, OV_MIDH), 0x7f);
	assert_int_equal(sensor_get(f, OV_PID), 0x76);
	assert_int_equal(sensor_get(f, OV_VER), 0x91);
	sensor_set(f, OV_COM7, OV_COM7_RESET);
	assert_int_equal(sensor_get(f, OV_VER), 0x91);
	f->io.ops->close(&f->io);
	free(f);
}

static void test_sensor_olpc_power(void **state)
{
	struct via_model_conf c = { .olpc_power = true };
	struct fx *f = fx_open_conf(&c);
	uint8_t v;

	(void)state;
	assert_int_equal(f->io.ops->sensor_read(&f->io, OV_PID, &v), -ENXIO);
	f->io.ops->sr_write(&f->io, 0x2c, 0x02 | 0x40 | 0x80 | 0x10);	/* power, in reset */
	assert_int_equal(f->io.ops->sensor_read(&f->io, OV_PID, &v), -ENXIO);
	f->io.ops->sr_write(&f->io, 0x2c, 0x02 | 0x40 | 0x80 | 0x10 | 0x20);
	assert_int_equal(sensor_get(f, OV_PID), 0x76);
	sensor_set(f, OV_CLKRC, 3);
	assert_int_equal(f->io.ops->sr_read(&f->io, 0x2c), 0xf2);
	/* a power cycle starts again from the power-on values */
	f->io.ops->sr_write(&f->io, 0x2c, 0xc2);
	assert_int_equal(f->io.ops->sensor_read(&f->io, OV_CLKRC, &v), -ENXIO);
	f->io.ops->sr_write(&f->io, 0x2c, 0xf2);
	assert_int_equal(sensor_get(f, OV_CLKRC), 0x80);
	f->io.ops->close(&f->io);
	free(f);
}

/* ----- registers ----- */

static void test_registers(void **state)
{
	struct fx *f = *state;

	/* plain storage */
	wr(f, VIA_HORRANGE, 0x06200120);
	assert_int_equal(rd(f, VIA_HORRANGE), 0x06200120);
	wr(f, 0x0e00, 0x12345678);	/* DMA area: storage */
	assert_int_equal(rd(f, 0x0e00), 0x12345678);
	f->io.ops->sr_write(&f->io, 0x1e, 0xc0);
	assert_int_equal(f->io.ops->sr_read(&f->io, 0x1e), 0xc0);

	/* ACTBUF is read-only, other non-status bits are storage */
	wr(f, VIA_INTCTRL, VIA_INT_ACTBUF_MASK | (1u << 2));
	assert_int_equal(rd(f, VIA_INTCTRL), 1u << 2);
	wr(f, VIA_INTCTRL, 0);

	/* EAV appears with a frame and is write-1-to-clear */
	sensor_setup(f, false, 3);
	engine_setup(f, 176, 144, 3, 0);
	engine_start(f);
	assert_int_equal(rd(f, VIA_INTCTRL), 0);
	advance_ms(f, 34);
	assert_int_equal(rd(f, VIA_INTCTRL), VIA_INT_EAV | (1u << VIA_INT_ACTBUF_SHIFT));
	assert_true(rd(f, VIA_GIRQ) & (1u << 12));
	wr(f, VIA_INTCTRL, 0);	/* writing 0 clears nothing */
	assert_true(rd(f, VIA_INTCTRL) & VIA_INT_EAV);
	wr(f, VIA_INTCTRL, VIA_INT_EVBI | VIA_INT_FFULL);	/* other W1C bits: EAV stays */
	assert_true(rd(f, VIA_INTCTRL) & VIA_INT_EAV);
	wr(f, VIA_INTCTRL, VIA_INT_EAV | VIA_INT_ACTBUF_MASK);
	assert_int_equal(rd(f, VIA_INTCTRL), 1u << VIA_INT_ACTBUF_SHIFT);
	/* 0x200 status is W1C too */
	wr(f, VIA_GIRQ, 0);
	assert_true(rd(f, VIA_GIRQ) & (1u << 12));
	wr(f, VIA_GIRQ, 1u << 12);
	assert_int_equal(rd(f, VIA_GIRQ), 0);
	assert_null(via_model_error(&f->io));
}

static void rotation(struct fx *f, unsigned int nbufs)
{
	struct via_model_scene sc;
	const unsigned int frame = 176 * 2;

	sensor_setup(f, false, 3);
	engine_setup(f, 176, 144, nbufs, 0);
	engine_start(f);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_int_equal(sc.width, 176);
	assert_int_equal(sc.height, 144);
	assert_int_equal(actbuf(f), 0);
	for (unsigned int n = 1; n <= 7; n++) {
		unsigned int act, done;

		advance_ms(f, 34);
		assert_int_equal(via_model_frames(&f->io), n);
		act = actbuf(f);
		assert_int_equal(act, n % nbufs);
		done = act ? act - 1 : nbufs - 1;	/* the facts' rule */
		assert_int_equal(done, (n - 1) % nbufs);
		assert_frame(f, done, &sc, n - 1);
		wr(f, VIA_INTCTRL, VIA_INT_EAV);
	}
	if (nbufs == 2)	/* VBUF3 is never written */
		assert_true(all_zero(buffer(f, 2), (size_t)frame * 144));
	/* ENABLE 0 -> 1 starts again at buffer 0 */
	wr(f, VIA_CAPINTC, rd(f, VIA_CAPINTC) & ~VIA_CAP_ENABLE);
	advance_ms(f, 100);
	assert_int_equal(via_model_frames(&f->io), 7);
	engine_start(f);
	assert_int_equal(actbuf(f), 0);
	advance_ms(f, 34);
	assert_int_equal(actbuf(f), 1);
	assert_null(via_model_error(&f->io));
}

static void test_rotation_3(void **state)
{
	rotation(*state, 3);
}

static void test_rotation_2(void **state)
{
	rotation(*state, 2);
}

/* ----- timing ----- */

static void test_timing(void **state)
{
	static const struct {
		uint8_t clkrc;
		unsigned long fps;
	} rates[] = { { 3, 30 }, { 6, 15 }, { 9, 10 }, { 18, 5 }, { 63, 1 }, { 0x80, 90 },
		      { 0x43, 90 } };
	struct fx *f = *state;

	engine_setup(f, 176, 144, 3, 0);
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		unsigned long before;

		sensor_setup(f, false, rates[i].clkrc);
		engine_start(f);
		before = via_model_frames(&f->io);
		for (int ms = 0; ms < 1000; ms++)
			advance_ms(f, 1);
		assert_int_equal(via_model_frames(&f->io) - before, rates[i].fps);
		wr(f, VIA_CAPINTC, rd(f, VIA_CAPINTC) & ~VIA_CAP_ENABLE);
	}
	/* the first frame completes one period after ENABLE: 33.33 ms at 30 fps */
	sensor_setup(f, false, 3);
	engine_start(f);
	f->now += 33333333;
	f->io.ops->poll(&f->io);
	assert_false(rd(f, VIA_INTCTRL) & VIA_INT_EAV);
	f->now += 1;
	f->io.ops->poll(&f->io);
	assert_true(rd(f, VIA_INTCTRL) & VIA_INT_EAV);
	/* a new rate counts from the last completed frame: 30 -> 10 fps */
	sensor_set(f, OV_CLKRC, 9);
	{
		unsigned long before = via_model_frames(&f->io);

		advance_ms(f, 99);
		assert_int_equal(via_model_frames(&f->io), before);
		advance_ms(f, 1);
		assert_int_equal(via_model_frames(&f->io), before + 1);
	}
	assert_null(via_model_error(&f->io));
}

static void test_missed_frames(void **state)
{
	struct fx *f = *state;
	struct via_model_scene sc;
	size_t size;

	sensor_setup(f, false, 3);
	engine_setup(f, 320, 240, 3, 0);
	engine_start(f);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	size = (size_t)f->stride * 240;
	advance_ms(f, 101);	/* 3 periods: frames 0, 1, 2 */
	assert_int_equal(via_model_frames(&f->io), 3);
	assert_int_equal(actbuf(f), 0);	/* completed = 2 */
	assert_frame(f, 2, &sc, 2);
	assert_true(all_zero(buffer(f, 0), size));	/* skipped frames are not rendered */
	assert_true(all_zero(buffer(f, 1), size));
	advance_ms(f, 5 * 34);	/* 5 more: 3..7, newest (7) in buffer 1 */
	assert_int_equal(via_model_frames(&f->io), 8);
	assert_int_equal(actbuf(f), 2);
	assert_frame(f, 1, &sc, 7);
	assert_true(all_zero(buffer(f, 0), size));
}

/* ----- geometry and pixels ----- */

static void scaled(struct fx *f, uint32_t w, uint32_t h, uint32_t avscale, uint32_t stride)
{
	struct via_model_scene sc;
	uint32_t line = w * 2;
	const uint8_t *b;

	sensor_setup(f, false, 3);
	engine_setup(f, w, h, 3, 0);
	assert_int_equal(rd(f, VIA_AVSCALE), avscale);
	f->stride = stride;
	wr(f, VIA_VSTRIDE, stride);
	memset(f->io.vram + f->io.cam_offset, 0xaa, f->io.cam_size);
	engine_start(f);
	advance_ms(f, 34);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_int_equal(sc.width, w);
	assert_int_equal(sc.height, h);
	assert_frame(f, 0, &sc, 0);
	b = buffer(f, 0);
	for (uint32_t y = 0; y < h; y++) {
		/* the line is written (the background is never 0xaa aa) ... */
		assert_false(b[(size_t)y * stride + line - 1] == 0xaa &&
			     b[(size_t)y * stride + line - 2] == 0xaa);
		/* ... and nothing between its end and the stride */
		for (uint32_t x = line; x < stride; x++)
			assert_int_equal(b[(size_t)y * stride + x], 0xaa);
	}
	for (size_t i = (size_t)h * stride; i < VGA_FRAME; i++)	/* nor after the last line */
		assert_int_equal(b[i], 0xaa);
	assert_int_equal(buffer(f, 1)[0], 0xaa);
	assert_null(via_model_error(&f->io));
}

static void test_scaled_320x240(void **state)
{
	scaled(*state, 320, 240, 0x06000c00, 0x280);
}

static void test_scaled_176x144(void **state)
{
	scaled(*state, 176, 144, 0x05330a33, 0x160);
}

static void test_scaled_wide_stride(void **state)
{
	scaled(*state, 176, 144, 0x05330a33, 0x200);
}

static void test_scaled_every_size(void **state)
{
	struct fx *f = *state;
	struct via_model_scene sc;

	/* the driver's integer factors come out exact for every size it allows */
	sensor_setup(f, false, 3);
	for (uint32_t w = 176; w <= 640; w++) {
		uint32_t h = w * 3 / 4 < 144 ? 144 : w * 3 / 4;

		engine_setup(f, w, h, 3, 0);
		assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
		assert_int_equal(sc.width, w);
		assert_int_equal(sc.height, h);
	}
	for (uint32_t h = 144; h <= 480; h++) {
		engine_setup(f, 640, h, 3, 0);
		assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
		assert_int_equal(sc.height, h);
	}
}

/* Bars: bar i of a 640 line covers x 80 i .. 80 i + 79. */
static const uint8_t yuv_bars[8][3] = {
	{ 255, 128, 128 }, { 226, 1, 149 }, { 179, 171, 1 }, { 150, 44, 21 },
	{ 105, 212, 235 }, { 76, 85, 255 }, { 29, 255, 107 }, { 0, 128, 128 },
};
static const uint16_t rgb_bars[8] = { 0xffff, 0xffe0, 0x07ff, 0x07e0, 0xf81f, 0xf800, 0x001f, 0 };

static void test_rgb565_byteorder(void **state)
{
	struct fx *f = *state;
	struct via_model_scene sc;
	const uint8_t *b;

	sensor_setup(f, true, 3);
	sensor_set(f, OV_SCALING_YSC, 0x35 | 0x80);	/* test pattern 2: colour bars */
	for (unsigned int order = 0; order < 4; order++) {
		engine_setup(f, 640, 480, 3, order);
		engine_start(f);
		advance_ms(f, 34);
		assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
		assert_true(sc.rgb565);
		assert_int_equal(sc.byteorder, order);
		assert_int_equal(sc.test_pattern, 2);
		assert_frame(f, 0, &sc, via_model_frames(&f->io) - 1);
		b = buffer(f, 0) + 200 * f->stride;
		for (unsigned int i = 0; i < 8; i++) {
			const uint8_t *p = b + (80 * i + 40) * 2;
			uint8_t hi = rgb_bars[i] >> 8, lo = rgb_bars[i] & 0xff;

			if (order == 1) {	/* 1032: little-endian pixels (V4L2 RGB565) */
				assert_int_equal(p[0], lo);
				assert_int_equal(p[1], hi);
				assert_int_equal(p[0] | p[1] << 8, rgb_bars[i]);
			} else if (order == 0) {	/* as sent: big-endian */
				assert_int_equal(p[0], hi);
				assert_int_equal(p[1], lo);
			}
		}
		wr(f, VIA_CAPINTC, rd(f, VIA_CAPINTC) & ~VIA_CAP_ENABLE);
	}
	/* the scene in RGB565: white counter digits / black box convert like everything else */
	sensor_set(f, OV_SCALING_YSC, 0x35);
	engine_setup(f, 640, 480, 3, 1);
	engine_start(f);
	advance_ms(f, 34);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_int_equal(sc.saturation, 128);	/* MTX1 0xb3 = x1.0 for RGB */
	assert_frame(f, 0, &sc, via_model_frames(&f->io) - 1);
	b = buffer(f, 0) + 8 * f->stride + 8 * 2;	/* box corner (2k, 2k), k = 4 */
	assert_int_equal(b[0] | b[1] << 8, (16 >> 3) << 11 | (16 >> 2) << 5 | (16 >> 3));
	assert_null(via_model_error(&f->io));
}

static void test_yuyv_byteorder(void **state)
{
	static const uint8_t p[4][4] = { { 0, 1, 2, 3 }, { 1, 0, 3, 2 }, { 0, 3, 2, 1 },
					 { 3, 0, 1, 2 } };
	struct fx *f = *state;
	struct via_model_scene sc;

	sensor_setup(f, false, 3);
	sensor_set(f, OV_SCALING_YSC, 0x35 | 0x80);
	for (unsigned int order = 0; order < 4; order++) {
		engine_setup(f, 640, 480, 3, order);
		engine_start(f);
		advance_ms(f, 34);
		assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
		assert_frame(f, 0, &sc, via_model_frames(&f->io) - 1);
		for (unsigned int i = 0; i < 8; i++) {
			const uint8_t *g = buffer(f, 0) + 100 * f->stride + (80 * i + 40) * 2;
			const uint8_t sent[4] = { yuv_bars[i][0], yuv_bars[i][1], yuv_bars[i][0],
						  yuv_bars[i][2] };

			for (int j = 0; j < 4; j++)
				assert_int_equal(g[j], sent[p[order][j]]);
		}
		wr(f, VIA_CAPINTC, rd(f, VIA_CAPINTC) & ~VIA_CAP_ENABLE);
	}
}

static void test_test_patterns(void **state)
{
	struct fx *f = *state;
	struct via_model_scene sc;
	const uint8_t *b, *last;

	sensor_setup(f, false, 3);
	engine_setup(f, 640, 480, 3, 0);
	engine_start(f);

	sensor_set(f, OV_SCALING_XSC, 0x3a | 0x80);	/* 1: shifting 1 */
	advance_ms(f, 34);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_int_equal(sc.test_pattern, 1);
	assert_frame(f, 0, &sc, 0);
	b = buffer(f, 0);
	for (uint32_t y = 0; y < 480; y += 37)
		for (uint32_t j = 0; j < 1280; j += 13)
			assert_int_equal(b[y * f->stride + j], 1u << ((j + y) % 8));

	sensor_set(f, OV_SCALING_XSC, 0x3a);
	sensor_set(f, OV_SCALING_YSC, 0x35 | 0x80);	/* 2: colour bars */
	sensor_set(f, OV_MVFP, OV_MVFP_MIRROR);	/* never mirrored */
	sensor_set(f, OV_BRIGHT, 0x40);	/* nor adjusted */
	advance_ms(f, 34);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_int_equal(sc.test_pattern, 2);
	assert_frame(f, 1, &sc, 1);
	b = buffer(f, 1);
	for (unsigned int i = 0; i < 8; i++)
		for (uint32_t y = 0; y < 480; y += 59) {
			const uint8_t *g = b + y * f->stride + 80 * i * 2;
			const uint8_t *e = g + 78 * 2;	/* the bar's last pair */

			assert_int_equal(g[0], yuv_bars[i][0]);
			assert_int_equal(g[1], yuv_bars[i][1]);
			assert_int_equal(g[3], yuv_bars[i][2]);
			assert_int_equal(e[2], yuv_bars[i][0]);
			assert_int_equal(e[3], yuv_bars[i][2]);
		}
	/* no dynamic parts in a test pattern: two sequences give the same frame */
	{
		struct via_model_rect r[VIA_MODEL_MAX_RECTS];
		uint8_t *a = malloc(VGA_FRAME), *c = malloc(VGA_FRAME);

		assert_non_null(a);
		assert_non_null(c);
		assert_int_equal(via_model_dynamic_rects(&sc, r), 0);
		via_model_render(&sc, 5, a, 1280);
		via_model_render(&sc, 99999, c, 1280);
		assert_memory_equal(a, c, VGA_FRAME);
		free(a);
		free(c);
	}

	sensor_set(f, OV_SCALING_XSC, 0x3a | 0x80);	/* 3: fade to grey */
	advance_ms(f, 34);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_int_equal(sc.test_pattern, 3);
	assert_frame(f, 2, &sc, 2);
	b = buffer(f, 2);
	last = b + 479 * f->stride;
	assert_int_equal(b[0], 255);	/* top line: the bars themselves */
	assert_int_equal(b[80 * 2 + 1], 1);
	/* last line: t = 255, white -> (255 * 1 + 128 * 255 + 128) / 256 = 128 */
	assert_int_equal(last[0], 128);
	assert_int_equal(last[80 * 2 + 1], (1 * 1 + 128 * 255 + 128) / 256);
	/* line 240: t = 128, yellow Y 226 -> (226 * 128 + 128 * 128 + 128) / 256 = 177 */
	assert_int_equal(b[240 * f->stride + 80 * 2], 177);
}

/* Background luma, independent of the model: Y = 40 + 160 x / W. */
static uint8_t bg_y(uint32_t x, uint32_t w)
{
	return (uint8_t)(40 + 160 * x / w);
}

static void test_flips(void **state)
{
	struct fx *f = *state;
	struct via_model_scene sc, plain;
	struct via_model_rect r[VIA_MODEL_MAX_RECTS];
	uint8_t *ref;
	const uint8_t *b;
	unsigned int n;

	sensor_setup(f, false, 3);
	engine_setup(f, 320, 240, 3, 0);
	engine_start(f);
	sensor_set(f, OV_MVFP, OV_MVFP_MIRROR | OV_MVFP_VFLIP);
	advance_ms(f, 34);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_true(sc.hflip);
	assert_true(sc.vflip);
	assert_frame(f, 0, &sc, 0);
	b = buffer(f, 0);

	/* static background, mirrored both ways, against the unflipped render */
	plain = sc;
	plain.hflip = plain.vflip = false;
	ref = calloc(1, (size_t)f->stride * 240);
	assert_non_null(ref);
	via_model_render(&plain, 0, ref, f->stride);
	n = via_model_dynamic_rects(&sc, r);
	assert_int_equal(n, 4);
	for (uint32_t y = 0; y < 240; y += 3)
		for (uint32_t x = 0; x < 320; x += 5) {
			bool skip = false;

			for (unsigned int i = 0; i < n; i++)
				if (x >= r[i].x && x < r[i].x + r[i].w && y >= r[i].y &&
				    y < r[i].y + r[i].h)
					skip = true;
			/* the plain frame's counter (never mirrored) at the mirrored position */
			if (319 - x >= r[0].x && 319 - x < r[0].x + r[0].w && 239 - y >= r[0].y &&
			    239 - y < r[0].y + r[0].h)
				skip = true;
			if (skip)
				continue;
			assert_int_equal(b[y * f->stride + 2 * x],
					 ref[(239 - y) * f->stride + 2 * (319 - x)]);
		}
	/* mirrored: the bright end of the luma ramp is on the left */
	assert_int_equal(b[120 * f->stride + 2 * 100], bg_y(319 - 100, 320));
	assert_int_equal(ref[120 * f->stride + 2 * 100], bg_y(100, 320));
	free(ref);
}

static void test_brightness(void **state)
{
	struct fx *f = *state;
	struct via_model_scene sc;
	const uint32_t x = 200, y = 100;	/* background, outside every dynamic part */
	uint8_t base;

	sensor_setup(f, false, 3);
	engine_setup(f, 320, 240, 3, 0);
	engine_start(f);
	advance_ms(f, 34);
	base = buffer(f, 0)[y * f->stride + 2 * x];
	assert_int_equal(base, bg_y(x, 320));

	sensor_set(f, OV_BRIGHT, 0x20);	/* +32 */
	advance_ms(f, 34);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_int_equal(sc.brightness, 32);
	assert_frame(f, 1, &sc, 1);
	assert_int_equal(buffer(f, 1)[y * f->stride + 2 * x], base + 32);

	sensor_set(f, OV_BRIGHT, 0x80 | 0x20);	/* sign-magnitude: -32 */
	advance_ms(f, 34);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_int_equal(sc.brightness, -32);
	assert_frame(f, 2, &sc, 2);
	assert_int_equal(buffer(f, 2)[y * f->stride + 2 * x], base - 32);

	/* brightness does not touch the counter display: box corner stays Y 16 */
	assert_int_equal(buffer(f, 2)[4 * f->stride + 2 * 4], 16);

	/* contrast x2 around 128, saturation from MTX1 */
	sensor_set(f, OV_BRIGHT, 0);
	sensor_set(f, OV_CONTRAS, 0x80);
	sensor_set(f, OV_MTX1, 0x40);
	advance_ms(f, 34);
	assert_int_equal(via_model_scene_get(&f->io, &sc), 0);
	assert_int_equal(sc.contrast, 0x80);
	assert_int_equal(sc.saturation, 64);
	assert_frame(f, 0, &sc, 3);
	assert_int_equal(buffer(f, 0)[y * f->stride + 2 * x], 128 + 2 * (base - 128));
	/* Cb at line 100: 96 + 64 * 100 / 240 = 122 -> 128 + (122 - 128) / 2 = 125 */
	assert_int_equal(buffer(f, 0)[y * f->stride + 2 * x + 1], 125);
}

static void test_counter_and_dynamic_rects(void **state)
{
	struct via_model_scene sc;
	struct via_model_rect r[VIA_MODEL_MAX_RECTS];
	const uint32_t stride = 1280;
	uint8_t *a = malloc(VGA_FRAME), *c = malloc(VGA_FRAME);
	unsigned int n;

	(void)state;
	assert_non_null(a);
	assert_non_null(c);
	via_model_scene_init(&sc, 640, 480);
	n = via_model_dynamic_rects(&sc, r);
	assert_int_equal(n, 4);
	/* counter box: (2k, 2k), 33k x 7k, k = 4 */
	assert_int_equal(r[0].x, 8);
	assert_int_equal(r[0].y, 8);
	assert_int_equal(r[0].w, 132);
	assert_int_equal(r[0].h, 28);
	via_model_render(&sc, 11111111, a, stride);
	via_model_render(&sc, 40, c, stride);
	/* outside the dynamic rects, every frame is the same */
	for (uint32_t y = 0; y < 480; y++)
		for (uint32_t x = 0; x < 640; x++) {
			bool dyn = false;

			for (unsigned int i = 0; i < n; i++)
				if (x >= r[i].x && x < r[i].x + r[i].w && y >= r[i].y &&
				    y < r[i].y + r[i].h)
					dyn = true;
			if (!dyn) {
				/* Y, and the chroma of its pair where the pair is static too */
				assert_int_equal(a[y * stride + 2 * x], c[y * stride + 2 * x]);
			}
		}
	/* digit "1" (3x5: 010 110 010 010 111): the last digit of 11111111 at (3k + 28k, 3k) */
	{
		const uint32_t k = 4, x0 = 3 * k + 7 * 4 * k, y0 = 3 * k;

		assert_int_equal(a[(y0 + 1) * stride + 2 * (x0 + k + 1)], 235);	/* row 0 centre */
		assert_int_equal(a[(y0 + 1) * stride + 2 * (x0 + 1)], 16);	/* row 0 left */
		assert_int_equal(a[(y0 + k + 1) * stride + 2 * (x0 + 1)], 235);	/* row 1 left */
		/* "0" in the 40 frame's first digit: 111 101 101 101 111, centre of row 2 dark */
		assert_int_equal(c[(3 * k + 2 * k + 1) * stride + 2 * (3 * k + k + 1)], 16);
		assert_int_equal(c[(3 * k + 2 * k + 1) * stride + 2 * (3 * k + 1)], 235);
	}
	/* the squares move: the frames differ inside the tracks */
	assert_memory_not_equal(a + 320 * stride, c + 320 * stride, stride * 40);
	/* mirrored rects */
	sc.hflip = sc.vflip = true;
	{
		struct via_model_rect m[VIA_MODEL_MAX_RECTS];

		assert_int_equal(via_model_dynamic_rects(&sc, m), 4);
		assert_memory_equal(&m[0], &r[0], sizeof(m[0]));	/* the counter is not */
		for (unsigned int i = 1; i < 4; i++) {
			assert_int_equal(m[i].x, 640 - r[i].x - r[i].w);
			assert_int_equal(m[i].y, 480 - r[i].y - r[i].h);
		}
	}
	free(a);
	free(c);
}

static void test_odd_width(void **state)
{
	struct via_model_scene sc;
	const uint32_t w = 175, h = 12, stride = w * 2;
	uint8_t *b = malloc((size_t)stride * h);	/* exact: ASan sees any byte past a line */

	(void)state;
	assert_non_null(b);
	via_model_scene_init(&sc, w, h);
	for (unsigned int order = 0; order < 4; order++) {
		sc.byteorder = order;
		sc.rgb565 = order & 1;
		via_model_render(&sc, 3, b, stride);
	}
	/* RGB565, byte order 1: the last pixel is its own little-endian pair of bytes */
	sc.test_pattern = 2;
	via_model_render(&sc, 0, b, stride);
	assert_int_equal(b[stride - 2] | b[stride - 1] << 8, 0x0000);	/* black bar */
	assert_int_equal(b[0] | b[1] << 8, 0xffff);
	free(b);
}

/* ----- misprogramming ----- */

struct bad_case {
	uint32_t off, val;	/* the bad write */
	bool before_start;	/* written while stopped: detected at ENABLE */
	const char *msg;
};

static void test_misprogramming(void **state)
{
	const uint32_t cam = VRAM - 0x204000;
	char vbuf_end[160], overlap[160];
	const struct bad_case cases[] = {
		{ VIA_VSTRIDE, 0x284, true, "VSTRIDE 0x00000284: not a multiple of 16" },
		{ VIA_VSTRIDE, 0x284, false, "VSTRIDE 0x00000284: not a multiple of 16" },
		{ VIA_VSTRIDE, 0x4f0, true,
		  "VSTRIDE 0x000004f0: 1264 bytes is less than an output line (640 pixels x 2 = "
		  "1280 bytes)" },
		{ VIA_VSTRIDE, 0x01000500, false,
		  "VSTRIDE 0x01000500: bits outside the stride (12:4) and coring (23:16) fields "
		  "set" },
		{ VIA_VBUF(1), cam + 8, true,
		  NULL /* filled below */ },
		{ VIA_VBUF(2), VRAM - 0x1000, false, vbuf_end },
		{ VIA_VBUF(1), cam + 0x1000, false, overlap },
		{ VIA_CAPINTC, 0x08502005, false,
		  "CAPINTC 0x08502005: ENABLE without CLKEN (bit 31)" },
		{ VIA_CAPINTC, 0x88502015, false,
		  "CAPINTC 0x88502015: input type 1 is not CCIR601 8-bit (bits 5:4 must be 0 for "
		  "the OV7670)" },
		{ VIA_MAXDATA, 0x01e00140, true,
		  "MAXDATA 0x01e00140: the sensor sends 640x480, expected 0x01e000a0 (lines << 16 "
		  "| bytes per line / 8)" },
		{ VIA_AVSCALE, 0x00000800, true,
		  "AVSCALE 0x00000800: horizontal scaling enabled with factor 0" },
		{ VIA_AVSCALE, 0x04000000, false,
		  "AVSCALE 0x04000000: vertical scaling enabled with factor 0" },
		{ VIA_AVSCALE, 0x10000000, false, "AVSCALE 0x10000000: bits outside 26:16 and 11:0 set" },
		/* written after one frame: EAV stays set (written 0), ACTBUF = 1 */
		{ VIA_INTCTRL, VIA_INT_INTEN, false,
		  "INTCTRL 0x00000109: INTEN (bit 8) set, but no kernel handler acknowledges the "
		  "interrupt" },
		{ VIA_INTCTRL, 1u << 9, false,
		  "INTCTRL 0x00000209: VBI interrupt enable (bit 9) set, but no kernel handler "
		  "acknowledges it" },
		{ VIA_GIRQ, 0x90000000, true,
		  "GIRQ 0x90000000: interrupt enable bits 0x90000000 set, but no kernel handler "
		  "acknowledges them" },
		{ VIA_GIRQ, 1u << 28, false,	/* after a frame: status bit 12 is set */
		  "GIRQ 0x10001000: interrupt enable bits 0x10000000 set, but no kernel handler "
		  "acknowledges them" },
	};
	char unaligned[160];

	(void)state;
	snprintf(unaligned, sizeof(unaligned),
		 "VBUF2 0x%08x: bits outside 28:4 set (a 16-byte aligned VRAM offset below 512 MiB)",
		 cam + 8);
	snprintf(vbuf_end, sizeof(vbuf_end),
		 "VBUF3 0x%08x: the buffer (480 lines x 1280 bytes) ends at 0x%x, beyond VRAM "
		 "(0x%x bytes)", VRAM - 0x1000, VRAM - 0x1000 + 480 * 1280, VRAM);
	snprintf(overlap, sizeof(overlap),
		 "VBUF1 0x%08x and VBUF2 0x%08x: the buffers (614400 bytes each) overlap", cam,
		 cam + 0x1000);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct via_model_conf c = { 0 };
		struct fx *f = fx_open_conf(&c);
		const char *msg = cases[i].msg ? cases[i].msg : unaligned;
		unsigned long frames;
		uint32_t good;

		print_message("case %zu: %s\n", i, msg);
		sensor_setup(f, false, 3);
		engine_setup(f, 640, 480, 3, 0);
		good = rd(f, cases[i].off);
		if (cases[i].before_start) {
			wr(f, cases[i].off, cases[i].val);
			if (cases[i].off != VIA_INTCTRL && cases[i].off != VIA_GIRQ)
				assert_null(via_model_error(&f->io));	/* stopped: fine */
			engine_start(f);
		} else {
			engine_start(f);
			advance_ms(f, 34);
			assert_int_equal(via_model_frames(&f->io), 1);
			assert_null(via_model_error(&f->io));
			wr(f, cases[i].off, cases[i].val);
		}
		/* detected at once, counted once, no frames while it persists */
		assert_non_null(via_model_error(&f->io));
		assert_string_equal(via_model_error(&f->io), msg);
		assert_int_equal(via_model_error_count(&f->io), 1);
		frames = via_model_frames(&f->io);
		advance_ms(f, 500);
		assert_int_equal(via_model_frames(&f->io), frames);
		assert_int_equal(via_model_error_count(&f->io), 1);
		/* repaired: frames again; the error stays until cleared */
		if (cases[i].off == VIA_INTCTRL)
			wr(f, VIA_INTCTRL, 0);
		else if (cases[i].off == VIA_CAPINTC)
			wr(f, VIA_CAPINTC, 0x88502005);
		else
			wr(f, cases[i].off, good);
		advance_ms(f, 100);
		assert_true(via_model_frames(&f->io) >= frames + 2);
		assert_string_equal(via_model_error(&f->io), msg);
		via_model_clear_error(&f->io);
		assert_null(via_model_error(&f->io));
		assert_int_equal(via_model_error_count(&f->io), 1);
		f->io.ops->close(&f->io);
		free(f);
	}
}

static void test_misprogramming_sensor(void **state)
{
	struct fx *f = *state;

	/* RGB565 through the scaler */
	sensor_setup(f, true, 3);
	engine_setup(f, 320, 240, 3, 1);
	engine_start(f);
	assert_string_equal(via_model_error(&f->io),
			    "AVSCALE 0x06000c00: scaling RGB565 data (COM7 0x04) garbles the "
			    "colours on the real engine");
	advance_ms(f, 100);
	assert_int_equal(via_model_frames(&f->io), 0);
	/* back to YUYV: runs */
	via_model_clear_error(&f->io);
	sensor_set(f, OV_COM7, 0);
	advance_ms(f, 100);
	assert_int_equal(via_model_frames(&f->io), 3);
	/* the sensor in QVGA while MAXDATA says VGA */
	sensor_set(f, OV_COM7, OV_COM7_QVGA);
	assert_string_equal(via_model_error(&f->io),
			    "MAXDATA 0x01e000a0: the sensor sends 320x240, expected 0x00f00050 "
			    "(lines << 16 | bytes per line / 8)");
	wr(f, VIA_MAXDATA, 0x00f00050);
	wr(f, VIA_AVSCALE, 0);	/* QVGA unscaled = 320x240 */
	via_model_clear_error(&f->io);
	advance_ms(f, 34);
	assert_null(via_model_error(&f->io));
	assert_int_equal(via_model_frames(&f->io), 4);
	sensor_set(f, OV_COM7, OV_COM7_QVGA | OV_COM7_CIF);
	assert_string_equal(via_model_error(&f->io), "COM7 0x30: more than one size bit set");
	via_model_clear_error(&f->io);
	sensor_set(f, OV_COM7, OV_COM7_BAYER);
	assert_string_equal(via_model_error(&f->io), "COM7 0x01: raw Bayer output is not modelled");
	assert_int_equal(via_model_error_count(&f->io), 4);
}

static void test_inten_while_stopped(void **state)
{
	struct fx *f = *state;

	wr(f, VIA_INTCTRL, VIA_INT_INTEN | VIA_INT_EAV);
	assert_string_equal(via_model_error(&f->io),
			    "INTCTRL 0x00000100: INTEN (bit 8) set, but no kernel handler "
			    "acknowledges the interrupt");
	wr(f, VIA_INTCTRL, 0);
	wr(f, VIA_GIRQ, 0);
	assert_int_equal(via_model_error_count(&f->io), 1);
}

static void test_mmio_bad_access(void **state)
{
	struct fx *f = *state;

	assert_int_equal(rd(f, 0x302), 0);
	assert_string_equal(via_model_error(&f->io), "MMIO read 0x302: not a 32-bit aligned access");
	via_model_clear_error(&f->io);
	wr(f, 0x8000, 5);
	assert_string_equal(via_model_error(&f->io),
			    "MMIO write 0x8000 (0x00000005): outside the model (0x0000..0x1ffc)");
	assert_int_equal(via_model_error_count(&f->io), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sensor_identity_and_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sensor_reset, setup, teardown),
		cmocka_unit_test(test_sensor_absent),
		cmocka_unit_test(test_sensor_custom_id),
		cmocka_unit_test(test_sensor_olpc_power),
		cmocka_unit_test_setup_teardown(test_registers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotation_3, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotation_2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missed_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scaled_320x240, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scaled_176x144, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scaled_wide_stride, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scaled_every_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rgb565_byteorder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_yuyv_byteorder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_test_patterns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flips, setup, teardown),
		cmocka_unit_test_setup_teardown(test_brightness, setup, teardown),
		cmocka_unit_test(test_counter_and_dynamic_rects),
		cmocka_unit_test(test_odd_width),
		cmocka_unit_test(test_misprogramming),
		cmocka_unit_test_setup_teardown(test_misprogramming_sensor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inten_while_stopped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mmio_bad_access, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
