// SPDX-License-Identifier: GPL-2.0-only
/*
 * via-model.c - the "model" transport: VX855 capture engine 0 and an OV7670, register by
 * register, plus the reference renderer of what the engine writes. Behaviour, conventions
 * and messages: via-model.h. Facts: ../../shared/via-hardware.md sections 1 and 2.
 *
 * Layout: the sensor chip (in-process register file or the i2c-stub on the bus), the
 * misprogramming checks, the frame clock, the MMIO/SR ops, then the renderer (pure
 * functions of struct via_model_scene and the sequence number, no model state).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/i2c-dev.h>
#include <linux/i2c.h>

#include "ov7670-regs.h"
#include "via-model.h"

#define MIB			(1024u * 1024u)
#define NS_PER_S		1000000000ull
#define SENSOR_CLOCK_MHZ	90u	/* XO-1.5: fps = 90 / d */

#define MMIO_SIZE		0x2000u	/* what the model stores: 2D, IRQ, both engines, DMA */
#define ENGINE_FIRST		VIA_INTCTRL
#define ENGINE_LAST		0x35cu

/* 0x200: status bits (write 1 to clear) and the one the model sets. */
#define GIRQ_STATUS		0x0800f7ffu	/* 0-10, 12-15, 27 */
#define GIRQ_C0AV		(1u << 12)

#define INT_W1C			(VIA_INT_EAV | VIA_INT_EVBI | VIA_INT_FFULL)
#define INT_VBI_EN		(1u << 9)
#define CAP_INPUT_SHIFT		4		/* 5:4 input type, 0 = CCIR601 8-bit */
#define CAP_INPUT_MASK		(3u << CAP_INPUT_SHIFT)
#define SCALE_H_MASK		0x7ffu
#define SCALE_V_SHIFT		16
#define SCALE_V_MASK		0x3ffu
#define SCALE_VALID		(VIA_SCALE_V_EN | (SCALE_V_MASK << SCALE_V_SHIFT) | VIA_SCALE_H_EN | \
				 SCALE_H_MASK)
#define VSTRIDE_VALID		(VIA_VSTRIDE_MASK | 0x00ff0000u)	/* stride + coring */

/* SR2C on the XO-1.5: VGPIO3 (power) value bit 4 / output enable bit 6, VGPIO2 (reset, active
 * low) value bit 5 / output enable bit 7. */
#define SR_GPIO			0x2c
#define SR_POWER_ON		0x50u
#define SR_RESET_OFF		0xa0u

/*
 * OV7670 power-on register values (the datasheet's register table, as far as we know them;
 * anything not listed reads 0). The model uses 11 (CLKRC 80: d = 0 -> 90 fps), 12, 1e, 4f,
 * 55, 56 (contrast 1.0), 70, 71 (no test pattern); the rest only make a read-back plausible.
 * The identity registers come from the configuration.
 */
static const uint8_t power_on[][2] = {
	{ 0x01, 0x80 }, { 0x02, 0x80 }, { 0x09, 0x01 }, { 0x0e, 0x01 }, { 0x0f, 0x43 },
	{ 0x10, 0x40 }, { 0x11, 0x80 }, { 0x13, 0x8f }, { 0x14, 0x4a }, { 0x17, 0x11 },
	{ 0x18, 0x61 }, { 0x19, 0x03 }, { 0x1a, 0x7b }, { 0x20, 0x04 }, { 0x21, 0x02 },
	{ 0x22, 0x01 }, { 0x24, 0x75 }, { 0x25, 0x63 }, { 0x26, 0xd4 }, { 0x27, 0x80 },
	{ 0x28, 0x80 }, { 0x2c, 0x80 }, { 0x30, 0x08 }, { 0x31, 0x30 }, { 0x32, 0x80 },
	{ 0x33, 0x08 }, { 0x34, 0x11 }, { 0x37, 0x3f }, { 0x38, 0x01 }, { 0x3a, 0x0d },
	{ 0x3c, 0x68 }, { 0x3d, 0x88 }, { 0x40, 0xc0 }, { 0x41, 0x08 }, { 0x43, 0x14 },
	{ 0x44, 0xf0 }, { 0x45, 0x45 }, { 0x46, 0x61 }, { 0x47, 0x51 }, { 0x48, 0x79 },
	{ 0x4f, 0x40 }, { 0x50, 0x34 }, { 0x51, 0x0c }, { 0x52, 0x17 }, { 0x53, 0x29 },
	{ 0x54, 0x40 }, { 0x56, 0x40 }, { 0x57, 0x80 }, { 0x58, 0x1e }, { 0x64, 0x50 },
	{ 0x65, 0x30 }, { 0x67, 0x80 }, { 0x68, 0x80 }, { 0x6b, 0x0a }, { 0x6c, 0x02 },
	{ 0x6d, 0x55 }, { 0x6e, 0xc0 }, { 0x6f, 0x9a }, { 0x70, 0x3a }, { 0x71, 0x35 },
	{ 0x72, 0x11 }, { 0x75, 0x0f }, { 0x76, 0x01 }, { 0x77, 0x10 }, { 0x7a, 0x24 },
	{ 0x7b, 0x04 }, { 0x7c, 0x07 }, { 0x7d, 0x10 }, { 0x7e, 0x28 }, { 0x7f, 0x36 },
	{ 0x80, 0x44 }, { 0x81, 0x52 }, { 0x82, 0x60 }, { 0x83, 0x6c }, { 0x84, 0x78 },
	{ 0x85, 0x8c }, { 0x86, 0x9e }, { 0x87, 0xbb }, { 0x88, 0xd2 }, { 0x89, 0xe5 },
	{ 0x9f, 0xc0 }, { 0xa0, 0x90 }, { 0xa2, 0x02 }, { 0xa5, 0x0f }, { 0xa6, 0xf0 },
	{ 0xa7, 0xc1 }, { 0xa8, 0xf0 }, { 0xa9, 0xc1 }, { 0xaa, 0x14 }, { 0xab, 0x0f },
	{ 0xad, 0x80 }, { 0xae, 0x80 }, { 0xaf, 0x80 }, { 0xb3, 0x80 }, { 0xb5, 0x04 },
	{ 0xc9, 0xc0 },
};

static const uint8_t id_regs[4] = { OV_MIDH, OV_MIDL, OV_PID, OV_VER };

/* What the engine needs from the sensor, read when the model moves. */
struct sensor_view {
	bool ok;		/* answering, powered, out of reset: it sends frames */
	uint8_t com7, clkrc, mvfp, mtx1, bright, contrast, xsc, ysc;
};

struct model {
	struct via_io *io;
	struct via_model_conf conf;
	uint32_t mmio[MMIO_SIZE / 4];
	uint8_t sr[256];
	uint8_t chip[256];	/* the in-process sensor's registers (!use_i2c) */
	bool chip_live;		/* it was answering at the last look (power cycle = reset) */

	/* Frame clock: frame k after base completes at base + floor(k * div * 1e9 / 90). */
	bool running;
	uint64_t base_ns;
	uint64_t done;		/* frames completed since base */
	unsigned int div;
	unsigned long frames;	/* since open */

	char fault[200];	/* the misprogramming that persists now, "" = none */
	char first[200];	/* the first one since open / clear, "" = none */
	unsigned long nfaults;
};

#define REG(m, off) ((m)->mmio[(off) / 4])

static const struct via_io_ops model_ops;

static struct model *model_of(struct via_io *io)
{
	return io && io->ops == &model_ops ? io->priv : NULL;
}

/* A detection: counted; kept when it is the first since open/clear. */
static void note(struct model *m, const char *msg)
{
	m->nfaults++;
	if (!m->first[0])
		snprintf(m->first, sizeof(m->first), "%s", msg);
}

__attribute__((format(printf, 2, 3)))
static void notef(struct model *m, const char *fmt, ...)
{
	char msg[sizeof(m->first)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	note(m, msg);
}

static uint64_t now_ns(struct model *m)
{
	return m->conf.clock(m->conf.clock_data);
}

/* ----- The sensor chip ----- */

static void power_on_values(const struct model *m, uint8_t file[256])
{
	memset(file, 0, 256);
	for (size_t i = 0; i < sizeof(power_on) / sizeof(power_on[0]); i++)
		file[power_on[i][0]] = power_on[i][1];
	for (int i = 0; i < 4; i++)
		file[id_regs[i]] = m->conf.sensor_id[i];
}

static bool is_id_reg(uint8_t reg)
{
	return reg == OV_MIDH || reg == OV_MIDL || reg == OV_PID || reg == OV_VER;
}

/* SR2C powers the chip and holds it out of reset (only with olpc_power). */
static bool sr_powered(const struct model *m)
{
	uint8_t g = m->sr[SR_GPIO];

	return !m->conf.olpc_power ||
	       ((g & SR_POWER_ON) == SR_POWER_ON && (g & SR_RESET_OFF) == SR_RESET_OFF);
}

/* The in-process chip answers; coming (back) to life it starts from its power-on values. */
static bool chip_answers(struct model *m)
{
	bool live = !m->conf.sensor_absent && sr_powered(m);

	if (live && !m->chip_live)
		power_on_values(m, m->chip);
	m->chip_live = live;
	return live;
}

static int bus_xfer(struct model *m, uint8_t rw, uint8_t reg, uint8_t *val)
{
	union i2c_smbus_data d = { .byte = rw == I2C_SMBUS_WRITE ? *val : 0 };
	struct i2c_smbus_ioctl_data args = {
		.read_write = rw,
		.command = reg,
		.size = I2C_SMBUS_BYTE_DATA,
		.data = &d,
	};
	int e;

	if (ioctl(m->io->i2c_fd, I2C_SMBUS, &args) < 0) {
		e = errno;
		notef(m, "sensor bus: SMBus %s of register 0x%02x failed: %s",
		      rw == I2C_SMBUS_WRITE ? "write" : "read", reg, strerror(e));
		return -e;
	}
	if (rw == I2C_SMBUS_READ)
		*val = d.byte;
	return 0;
}

static int chip_get(struct model *m, uint8_t reg, uint8_t *val)
{
	if (m->conf.use_i2c)
		return bus_xfer(m, I2C_SMBUS_READ, reg, val);
	if (!chip_answers(m))
		return -ENXIO;
	*val = m->chip[reg];
	return 0;
}

/* Writes the power-on values (and the identity) into the i2c-stub. */
static int bus_reset(struct model *m)
{
	uint8_t file[256];
	int r;

	power_on_values(m, file);
	for (unsigned int reg = 0; reg < 256; reg++) {
		r = bus_xfer(m, I2C_SMBUS_WRITE, (uint8_t)reg, &file[reg]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Looks at the sensor: on the bus, acts on the reset bit first. */
static void sensor_look(struct model *m, struct sensor_view *v)
{
	static const uint8_t regs[] = { OV_COM7, OV_CLKRC, OV_MVFP, OV_MTX1, OV_BRIGHT,
					OV_CONTRAS, OV_SCALING_XSC, OV_SCALING_YSC };
	uint8_t val[sizeof(regs)];

	memset(v, 0, sizeof(*v));
	if (m->conf.use_i2c) {
		uint8_t com7;

		if (bus_xfer(m, I2C_SMBUS_READ, OV_COM7, &com7) < 0)
			return;
		if ((com7 & OV_COM7_RESET) && bus_reset(m) < 0)
			return;
	}
	for (size_t i = 0; i < sizeof(regs); i++)
		if (chip_get(m, regs[i], &val[i]) < 0)
			return;
	v->com7 = val[0];
	v->clkrc = val[1];
	v->mvfp = val[2];
	v->mtx1 = val[3];
	v->bright = val[4];
	v->contrast = val[5];
	v->xsc = val[6];
	v->ysc = val[7];
	v->ok = sr_powered(m);
}

/* The sensor's window from COM7 (-1: more than one size bit). */
static int sensor_window(uint8_t com7, uint32_t *w, uint32_t *h)
{
	switch (com7 & (OV_COM7_CIF | OV_COM7_QVGA | OV_COM7_QCIF)) {
	case 0:
		*w = 640, *h = 480;
		return 0;
	case OV_COM7_CIF:
		*w = 352, *h = 288;
		return 0;
	case OV_COM7_QVGA:
		*w = 320, *h = 240;
		return 0;
	case OV_COM7_QCIF:
		*w = 176, *h = 144;
		return 0;
	}
	*w = 640, *h = 480;
	return -1;
}

static uint32_t scaled(uint32_t in, uint32_t factor, uint32_t one)
{
	return (uint32_t)(((uint64_t)in * factor + one - 1) / one);
}

static int rdiv(int a, int b)
{
	return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b);
}

/* The scene the engine renders from the registers (the sensor's state in @v). */
static void scene_of(const struct model *m, const struct sensor_view *v,
		     struct via_model_scene *sc)
{
	uint32_t avs = REG(m, VIA_AVSCALE), sw, sh;

	(void)sensor_window(v->com7, &sw, &sh);
	via_model_scene_init(sc, sw, sh);
	if (avs & VIA_SCALE_H_EN)
		sc->width = scaled(sw, avs & SCALE_H_MASK, 2048);
	if (avs & VIA_SCALE_V_EN)
		sc->height = scaled(sh, (avs >> SCALE_V_SHIFT) & SCALE_V_MASK, 1024);
	sc->rgb565 = v->com7 & OV_COM7_RGB;
	sc->byteorder = (REG(m, VIA_CAPINTC) & VIA_CAP_BYTEORDER_MASK) >> VIA_CAP_BYTEORDER_SHIFT;
	sc->hflip = v->mvfp & OV_MVFP_MIRROR;
	sc->vflip = v->mvfp & OV_MVFP_VFLIP;
	sc->brightness = (v->bright & 0x80) ? -(int)(v->bright & 0x7f) : (int)(v->bright & 0x7f);
	sc->contrast = v->contrast;
	sc->saturation = (unsigned int)rdiv(v->mtx1 * 128, sc->rgb565 ? 179 : 128);
	sc->test_pattern = (v->xsc >> 7) | ((v->ysc >> 7) << 1);
}

/* ----- Misprogramming ----- */

/* The first misprogramming in the current state, written to @msg; false when there is none. */
static bool find_fault(const struct model *m, const struct sensor_view *v, char *msg, size_t len)
{
	uint32_t girq = REG(m, VIA_GIRQ), ictl = REG(m, VIA_INTCTRL), cap = REG(m, VIA_CAPINTC);
	uint32_t avs = REG(m, VIA_AVSCALE), maxd = REG(m, VIA_MAXDATA), vs = REG(m, VIA_VSTRIDE);
	uint32_t sw, sh, expect, stride = vs & VIA_VSTRIDE_MASK, size, vbuf[3];
	unsigned int nbufs = (cap & VIA_CAP_3BUFS) ? 3 : 2;
	struct via_model_scene sc;
	uint8_t com7 = v->ok ? v->com7 : 0;

	if (girq & ~GIRQ_STATUS) {
		snprintf(msg, len, "GIRQ 0x%08x: interrupt enable bits 0x%08x set, but no kernel "
			 "handler acknowledges them", girq, girq & ~GIRQ_STATUS);
		return true;
	}
	if (ictl & VIA_INT_INTEN) {
		snprintf(msg, len, "INTCTRL 0x%08x: INTEN (bit 8) set, but no kernel handler "
			 "acknowledges the interrupt", ictl);
		return true;
	}
	if (ictl & INT_VBI_EN) {
		snprintf(msg, len, "INTCTRL 0x%08x: VBI interrupt enable (bit 9) set, but no kernel "
			 "handler acknowledges it", ictl);
		return true;
	}
	if (!(cap & VIA_CAP_ENABLE))
		return false;
	if (!(cap & VIA_CAP_CLKEN)) {
		snprintf(msg, len, "CAPINTC 0x%08x: ENABLE without CLKEN (bit 31)", cap);
		return true;
	}
	if (cap & CAP_INPUT_MASK) {
		snprintf(msg, len, "CAPINTC 0x%08x: input type %u is not CCIR601 8-bit (bits 5:4 "
			 "must be 0 for the OV7670)", cap, (cap & CAP_INPUT_MASK) >> CAP_INPUT_SHIFT);
		return true;
	}
	if (com7 & OV_COM7_BAYER) {
		snprintf(msg, len, "COM7 0x%02x: raw Bayer output is not modelled", com7);
		return true;
	}
	if (sensor_window(com7, &sw, &sh) < 0) {
		snprintf(msg, len, "COM7 0x%02x: more than one size bit set", com7);
		return true;
	}
	expect = (sh << 16) | (sw * 2 / 8);
	if (maxd != expect) {
		snprintf(msg, len, "MAXDATA 0x%08x: the sensor sends %ux%u, expected 0x%08x "
			 "(lines << 16 | bytes per line / 8)", maxd, sw, sh, expect);
		return true;
	}
	if (avs & ~SCALE_VALID) {
		snprintf(msg, len, "AVSCALE 0x%08x: bits outside 26:16 and 11:0 set", avs);
		return true;
	}
	if ((avs & VIA_SCALE_H_EN) && !(avs & SCALE_H_MASK)) {
		snprintf(msg, len, "AVSCALE 0x%08x: horizontal scaling enabled with factor 0", avs);
		return true;
	}
	if ((avs & VIA_SCALE_V_EN) && !((avs >> SCALE_V_SHIFT) & SCALE_V_MASK)) {
		snprintf(msg, len, "AVSCALE 0x%08x: vertical scaling enabled with factor 0", avs);
		return true;
	}
	if ((avs & (VIA_SCALE_H_EN | VIA_SCALE_V_EN)) && (com7 & OV_COM7_RGB)) {
		snprintf(msg, len, "AVSCALE 0x%08x: scaling RGB565 data (COM7 0x%02x) garbles the "
			 "colours on the real engine", avs, com7);
		return true;
	}
	if (vs & 0xf) {
		snprintf(msg, len, "VSTRIDE 0x%08x: not a multiple of 16", vs);
		return true;
	}
	if (vs & ~VSTRIDE_VALID) {
		snprintf(msg, len, "VSTRIDE 0x%08x: bits outside the stride (12:4) and coring "
			 "(23:16) fields set", vs);
		return true;
	}
	scene_of(m, v, &sc);
	if (stride < sc.width * 2) {
		snprintf(msg, len, "VSTRIDE 0x%08x: %u bytes is less than an output line (%u pixels "
			 "x 2 = %u bytes)", vs, stride, sc.width, sc.width * 2);
		return true;
	}
	size = stride * sc.height;
	for (unsigned int i = 0; i < nbufs; i++) {
		unsigned long long end;

		vbuf[i] = REG(m, VIA_VBUF(i));
		if (vbuf[i] & ~VIA_VBUF_MASK) {
			snprintf(msg, len, "VBUF%u 0x%08x: bits outside 28:4 set (a 16-byte aligned "
				 "VRAM offset below 512 MiB)", i + 1, vbuf[i]);
			return true;
		}
		end = (unsigned long long)vbuf[i] + size;
		if (end > m->io->vram_size) {
			snprintf(msg, len, "VBUF%u 0x%08x: the buffer (%u lines x %u bytes) ends at "
				 "0x%llx, beyond VRAM (0x%zx bytes)", i + 1, vbuf[i], sc.height,
				 stride, end, m->io->vram_size);
			return true;
		}
	}
	for (unsigned int i = 0; i < nbufs; i++)
		for (unsigned int j = i + 1; j < nbufs; j++)
			if (size && vbuf[i] < vbuf[j] + size && vbuf[j] < vbuf[i] + size) {
				snprintf(msg, len, "VBUF%u 0x%08x and VBUF%u 0x%08x: the buffers "
					 "(%u bytes each) overlap", i + 1, vbuf[i], j + 1, vbuf[j],
					 size);
				return true;
			}
	return false;
}

/* ----- The frame clock ----- */

static unsigned int clk_divider(uint8_t clkrc)
{
	unsigned int d = clkrc & 0x3f;

	return (clkrc & 0x40) || !d ? 1 : d;
}

/* Completes @n frames: the newest is rendered, all of them rotate the buffers. */
static void complete(struct model *m, const struct sensor_view *v, uint64_t n)
{
	uint32_t ictl = REG(m, VIA_INTCTRL);
	unsigned int nbufs = (REG(m, VIA_CAPINTC) & VIA_CAP_3BUFS) ? 3 : 2;
	unsigned int act = (ictl & VIA_INT_ACTBUF_MASK) >> VIA_INT_ACTBUF_SHIFT;
	unsigned int last;
	struct via_model_scene sc;
	uint32_t off;

	if (act >= nbufs)	/* 3BUFS dropped while ACTBUF was 2 */
		act = 0;
	last = (unsigned int)((act + (n - 1) % nbufs) % nbufs);
	scene_of(m, v, &sc);
	off = REG(m, VIA_VBUF(last)) & VIA_VBUF_MASK;	/* checked by find_fault() */
	via_model_render(&sc, m->frames + n - 1, m->io->vram + off,
			 REG(m, VIA_VSTRIDE) & VIA_VSTRIDE_MASK);
	m->frames += n;
	m->done += n;
	act = (unsigned int)((act + n % nbufs) % nbufs);
	REG(m, VIA_INTCTRL) = (ictl & ~VIA_INT_ACTBUF_MASK) | (act << VIA_INT_ACTBUF_SHIFT) |
			      VIA_INT_EAV;
	REG(m, VIA_GIRQ) |= GIRQ_C0AV;
}

/* Brings the model up to the clock: checks, starts/stops the engine, completes frames. */
static void advance(struct model *m)
{
	uint32_t cap = REG(m, VIA_CAPINTC);
	struct sensor_view v;
	char msg[sizeof(m->fault)];
	uint64_t now, due;
	unsigned int d;
	bool bad;

	sensor_look(m, &v);
	bad = find_fault(m, &v, msg, sizeof(msg));
	if (!bad) {
		m->fault[0] = '\0';
	} else if (strcmp(msg, m->fault)) {
		snprintf(m->fault, sizeof(m->fault), "%s", msg);
		note(m, msg);
	}
	now = now_ns(m);
	if (bad || !v.ok || (cap & (VIA_CAP_ENABLE | VIA_CAP_CLKEN)) !=
			    (VIA_CAP_ENABLE | VIA_CAP_CLKEN)) {
		m->running = false;
		return;
	}
	d = clk_divider(v.clkrc);
	if (!m->running) {
		m->running = true;
		m->base_ns = now;
		m->done = 0;
		m->div = d;
		return;
	}
	/* A new rate counts from the last completed frame; rebasing also keeps numbers small. */
	if (d != m->div || m->done >= (1u << 20)) {
		m->base_ns += m->done * m->div * NS_PER_S / SENSOR_CLOCK_MHZ;
		m->done = 0;
		m->div = d;
	}
	if (now < m->base_ns)
		return;
	due = (now - m->base_ns) * SENSOR_CLOCK_MHZ / (m->div * NS_PER_S);
	if (due > m->done)
		complete(m, &v, due - m->done);
}

/* ----- via_io_ops ----- */

static bool mmio_ok(struct model *m, const char *what, uint32_t off, uint32_t val)
{
	char v[24] = "";

	if (!strcmp(what, "write"))
		snprintf(v, sizeof(v), " (0x%08x)", val);
	if (off & 3) {
		notef(m, "MMIO %s 0x%x%s: not a 32-bit aligned access", what, off, v);
		return false;
	}
	if (off >= MMIO_SIZE) {
		notef(m, "MMIO %s 0x%x%s: outside the model (0x0000..0x%04x)", what, off, v,
		      MMIO_SIZE - 4);
		return false;
	}
	return true;
}

static bool engine_reg(uint32_t off)
{
	return off == VIA_GIRQ || (off >= ENGINE_FIRST && off <= ENGINE_LAST);
}

static uint32_t model_rd32(struct via_io *io, uint32_t off)
{
	struct model *m = io->priv;

	if (!mmio_ok(m, "read", off, 0))
		return 0;
	if (off == VIA_INTCTRL || off == VIA_GIRQ)
		advance(m);
	return REG(m, off);
}

static void model_wr32(struct via_io *io, uint32_t off, uint32_t val)
{
	struct model *m = io->priv;
	uint32_t old;

	if (!mmio_ok(m, "write", off, val))
		return;
	if (engine_reg(off))
		advance(m);	/* frames due so far use the old state */
	old = REG(m, off);
	switch (off) {
	case VIA_INTCTRL:
		val = (val & ~(INT_W1C | VIA_INT_ACTBUF_MASK)) | (old & VIA_INT_ACTBUF_MASK) |
		      (old & INT_W1C & ~val);
		break;
	case VIA_GIRQ:
		val = (val & ~GIRQ_STATUS) | (old & GIRQ_STATUS & ~val);
		break;
	case VIA_CAPINTC:
		if ((val & VIA_CAP_ENABLE) && !(old & VIA_CAP_ENABLE)) {
			REG(m, VIA_INTCTRL) &= ~VIA_INT_ACTBUF_MASK;
			m->running = false;
		}
		break;
	}
	REG(m, off) = val;
	if (engine_reg(off))
		advance(m);
}

static uint8_t model_sr_read(struct via_io *io, uint8_t index)
{
	struct model *m = io->priv;

	return m->sr[index];
}

static void model_sr_write(struct via_io *io, uint8_t index, uint8_t val)
{
	struct model *m = io->priv;

	m->sr[index] = val;
	if (index == SR_GPIO && !m->conf.use_i2c)
		(void)chip_answers(m);	/* a power cycle resets the chip */
}

static void model_poll(struct via_io *io)
{
	advance(io->priv);
}

static int model_sensor_read(struct via_io *io, uint8_t reg, uint8_t *val)
{
	return chip_get(io->priv, reg, val);
}

static int model_sensor_write(struct via_io *io, uint8_t reg, uint8_t val)
{
	struct model *m = io->priv;

	if (m->conf.use_i2c)
		return bus_xfer(m, I2C_SMBUS_WRITE, reg, &val);
	if (!chip_answers(m))
		return -ENXIO;
	advance(m);	/* frames due so far use the old settings */
	if (reg == OV_COM7 && (val & OV_COM7_RESET))
		power_on_values(m, m->chip);	/* COM7 = 0: the bit clears itself */
	else if (!is_id_reg(reg))
		m->chip[reg] = val;
	return 0;
}

static void model_close(struct via_io *io)
{
	struct model *m = model_of(io);

	if (!m)
		return;
	free(io->vram);
	free(m);
	io->vram = NULL;
	io->vram_size = 0;
	io->priv = NULL;
}

static const struct via_io_ops model_ops = {
	.name = "model",
	.rd32 = model_rd32,
	.wr32 = model_wr32,
	.sr_read = model_sr_read,
	.sr_write = model_sr_write,
	.poll = model_poll,
	.sensor_read = model_sensor_read,
	.sensor_write = model_sensor_write,
	.close = model_close,
};

static uint64_t default_clock(void *data)
{
	(void)data;
	return via_now_ns();
}

int via_model_open(struct via_io *io, const struct via_model_conf *conf)
{
	static const uint8_t default_id[4] = { OV_ID_MIDH, OV_ID_MIDL, OV_ID_PID, OV_ID_VER };
	struct model *m;
	size_t vsize;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(io->error, sizeof(io->error), "model: out of memory");
		return -ENOMEM;
	}
	if (conf)
		m->conf = *conf;
	vsize = m->conf.vram_size ? m->conf.vram_size : 64u * MIB;
	if (vsize < 8u * MIB || vsize > 512u * MIB || (vsize & (vsize - 1))) {
		snprintf(io->error, sizeof(io->error),
			 "model: VRAM size %zu bytes: not a power of two from 8 to 512 MiB", vsize);
		r = -EINVAL;
		goto fail;
	}
	if (m->conf.use_i2c && (io->i2c_fd < 0 || m->conf.sensor_absent)) {
		snprintf(io->error, sizeof(io->error), "model: %s",
			 io->i2c_fd < 0 ? "acting as the sensor on i2c needs an open bus" :
					  "an absent sensor cannot be on the i2c bus");
		r = -EINVAL;
		goto fail;
	}
	m->conf.vram_size = vsize;
	if (!memcmp(m->conf.sensor_id, "\0\0\0\0", 4))
		memcpy(m->conf.sensor_id, default_id, 4);
	if (!m->conf.clock)
		m->conf.clock = default_clock;
	m->io = io;
	io->vram = calloc(1, vsize);
	if (!io->vram) {
		snprintf(io->error, sizeof(io->error), "model: cannot allocate %zu bytes of VRAM",
			 vsize);
		r = -ENOMEM;
		goto fail;
	}
	if (m->conf.use_i2c) {
		r = m->conf.chip_running ? 0 : bus_reset(m);
		if (r < 0) {
			snprintf(io->error, sizeof(io->error), "model: %s", m->first);
			free(io->vram);
			io->vram = NULL;
			goto fail;
		}
	} else {
		io->i2c_fd = -1;
		(void)chip_answers(m);
	}
	io->ops = &model_ops;
	io->priv = m;
	io->vram_size = vsize;
	io->cam_offset = (uint32_t)(vsize - VIA_CAM_TOP_RESERVE - VIA_CAM_AREA);
	io->cam_size = VIA_CAM_AREA;
	return 0;
fail:
	free(m);
	return r;
}

const char *via_model_error(struct via_io *io)
{
	struct model *m = model_of(io);

	return m && m->first[0] ? m->first : NULL;
}

unsigned long via_model_error_count(struct via_io *io)
{
	struct model *m = model_of(io);

	return m ? m->nfaults : 0;
}

void via_model_clear_error(struct via_io *io)
{
	struct model *m = model_of(io);

	if (m)
		m->first[0] = '\0';
}

unsigned long via_model_frames(struct via_io *io)
{
	struct model *m = model_of(io);

	return m ? m->frames : 0;
}

int via_model_scene_get(struct via_io *io, struct via_model_scene *sc)
{
	struct model *m = model_of(io);
	struct sensor_view v;

	if (!m)
		return -EINVAL;
	sensor_look(m, &v);
	if (!v.ok)
		return -ENXIO;
	scene_of(m, &v, sc);
	return 0;
}

/* ----- The renderer ----- */

struct ycc {
	uint8_t y, cb, cr;
};

struct rgb {
	uint8_t r, g, b;
};

static const struct ycc bar_ycc[8] = {
	{ 255, 128, 128 }, { 226, 1, 149 }, { 179, 171, 1 }, { 150, 44, 21 },
	{ 105, 212, 235 }, { 76, 85, 255 }, { 29, 255, 107 }, { 0, 128, 128 },
};

static const struct rgb bar_rgb[8] = {
	{ 255, 255, 255 }, { 255, 255, 0 }, { 0, 255, 255 }, { 0, 255, 0 },
	{ 255, 0, 255 }, { 255, 0, 0 }, { 0, 0, 255 }, { 0, 0, 0 },
};

static const struct ycc osd_box = { 16, 128, 128 };
static const struct ycc osd_digit = { 235, 128, 128 };

/* 3x5 digits, one row per entry, bit 2 = left column. */
static const uint8_t font[10][5] = {
	{ 7, 5, 5, 5, 7 }, { 2, 6, 2, 2, 7 }, { 7, 1, 7, 4, 7 }, { 7, 1, 7, 1, 7 },
	{ 5, 5, 7, 1, 1 }, { 7, 4, 7, 1, 7 }, { 7, 4, 7, 5, 7 }, { 7, 1, 1, 2, 2 },
	{ 7, 5, 7, 5, 7 }, { 7, 5, 7, 1, 7 },
};

/* Memory byte i of a group = sent byte perm[order][i]. */
static const uint8_t perm[4][4] = {
	{ 0, 1, 2, 3 }, { 1, 0, 3, 2 }, { 0, 3, 2, 1 }, { 3, 0, 1, 2 },
};

#define COUNTER_DIGITS	8

/* Per-frame geometry and the controls as tables. Squares in drawing order: C, A, B. */
struct layout {
	const struct via_model_scene *sc;
	uint32_t w, h;
	struct square {
		uint32_t x, y, side;
		struct ycc c;	/* controls applied */
	} sq[3];
	uint32_t k;
	uint8_t digit[COUNTER_DIGITS];
	uint8_t ylut[256], clut[256];	/* Y -> Y', Cb/Cr -> Cb'/Cr' */
};

/* What is constant along an output line. */
struct row {
	uint32_t y;
	bool osd;		/* the line crosses the counter box */
	unsigned int nsq;
	uint8_t sq[3];		/* the squares crossing the scene line, in drawing order */
	uint8_t cb, cr;		/* the background's chroma on the scene line, controls applied */
};

static uint32_t even(uint32_t v)
{
	return v & ~1u;
}

static uint32_t umax(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static uint32_t umin(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint8_t clamp8(int v)
{
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* A triangle wave: 0 .. r .. 0 with period 2r. */
static uint32_t tri(uint64_t t, uint32_t r)
{
	uint64_t p;

	if (!r)
		return 0;
	p = t % (2ull * r);
	return (uint32_t)(p <= r ? p : 2ull * r - p);
}

static uint32_t counter_k(uint32_t w, uint32_t h)
{
	return umax(1, umin(w / 160, h / 120));
}

/* The tracks of squares C, A, B (scene coordinates, may stick out of tiny frames). */
static void tracks(uint32_t w, uint32_t h, struct via_model_rect tr[3], uint32_t side[3])
{
	uint32_t s = umax(4, even(umin(w, h) / 8));

	side[0] = umax(2, even(s / 2));
	tr[0] = (struct via_model_rect){ even(w / 4), even(h / 4), even(w / 2) - even(w / 4),
					 even(h / 2) - even(h / 4) };
	side[1] = s;
	tr[1] = (struct via_model_rect){ 0, even(5 * h / 8), w, s };
	side[2] = s;
	tr[2] = (struct via_model_rect){ even(3 * w / 4), 0, s, h };
}

/* The controls (brightness, contrast, saturation) as per-component tables. */
static void controls_init(struct layout *l, const struct via_model_scene *sc)
{
	for (int v = 0; v < 256; v++) {
		l->ylut[v] = clamp8(128 + rdiv((v - 128) * (int)sc->contrast, 64) + sc->brightness);
		l->clut[v] = clamp8(128 + rdiv((v - 128) * (int)sc->saturation, 128));
	}
}

static struct ycc controls(const struct layout *l, struct ycc c)
{
	return (struct ycc){ l->ylut[c.y], l->clut[c.cb], l->clut[c.cr] };
}

static void layout_init(struct layout *l, const struct via_model_scene *sc, uint64_t seq)
{
	static const struct ycc colour[3] = { { 125, 94, 39 }, { 151, 43, 202 }, { 142, 192, 72 } };
	struct via_model_rect tr[3];
	uint32_t side[3], w = sc->width, h = sc->height;
	uint64_t n = seq % 100000000u;

	l->sc = sc;
	l->w = w;
	l->h = h;
	controls_init(l, sc);
	tracks(w, h, tr, side);
	for (int i = 0; i < 3; i++) {
		l->sq[i].side = side[i];
		l->sq[i].c = controls(l, colour[i]);
	}
	l->sq[0].x = tr[0].x + even(tri(seq * umax(2, even(w / 160)),
					tr[0].w > side[0] ? tr[0].w - side[0] : 0));
	l->sq[0].y = tr[0].y + tri(seq * umax(1, h / 160),
				   tr[0].h > side[0] ? tr[0].h - side[0] : 0);
	l->sq[1].x = even(tri(seq * umax(2, even(w / 80)), w > side[1] ? w - side[1] : 0));
	l->sq[1].y = tr[1].y;
	l->sq[2].x = tr[2].x;
	l->sq[2].y = tri(seq * umax(1, h / 60), h > side[2] ? h - side[2] : 0);
	l->k = counter_k(w, h);
	for (int i = COUNTER_DIGITS - 1; i >= 0; i--) {
		l->digit[i] = (uint8_t)(n % 10);
		n /= 10;
	}
}

/* The counter display at output pixel (x, y), if it covers it. */
static bool osd_at(const struct layout *l, uint32_t x, uint32_t y, struct ycc *c)
{
	uint32_t k = l->k, bx = 2 * k, by = 2 * k, dx, dy, d;

	if (x < bx || y < by || x >= bx + 33 * k || y >= by + 7 * k)
		return false;
	*c = osd_box;
	if (x < bx + k || y < by + k)
		return true;
	dx = (x - bx - k) / k;
	dy = (y - by - k) / k;
	d = dx / 4;
	if (d < COUNTER_DIGITS && dx % 4 < 3 && dy < 5 &&
	    (font[l->digit[d]][dy] & (4u >> (dx % 4))))
		*c = osd_digit;
	return true;
}

static void row_init(const struct layout *l, struct row *r, uint32_t y)
{
	uint32_t ys = l->sc->vflip ? l->h - 1 - y : y;

	r->y = y;
	r->osd = y >= 2 * l->k && y < 9 * l->k;
	r->nsq = 0;
	for (uint8_t i = 0; i < 3; i++)
		if (ys >= l->sq[i].y && ys < l->sq[i].y + l->sq[i].side)
			r->sq[r->nsq++] = i;
	r->cb = l->clut[96 + 64 * ys / l->h];
	r->cr = l->clut[160 - 64 * ys / l->h];
}

/* The scene (background and squares, controls applied) at scene column @x of line @r. */
static struct ycc scene_at(const struct layout *l, const struct row *r, uint32_t x)
{
	for (unsigned int i = r->nsq; i-- > 0;) {
		const struct square *q = &l->sq[r->sq[i]];

		if (x >= q->x && x < q->x + q->side)
			return q->c;
	}
	return (struct ycc){ l->ylut[40 + 160 * x / l->w], r->cb, r->cr };
}

static uint8_t fade(uint8_t c, uint32_t t)
{
	return (uint8_t)((c * (256 - t) + 128 * t + 128) / 256);
}

static unsigned int bar_of(uint32_t w, uint32_t x)
{
	unsigned int i = 0;

	while (i < 7 && x >= even((i + 1) * w / 8))
		i++;
	return i;
}

/* Output pixel (x, y) as Y'CbCr: test patterns 0, 2, 3. */
static struct ycc pixel_ycc(const struct layout *l, const struct row *r, uint32_t x)
{
	uint32_t y = r->y;
	const struct via_model_scene *sc = l->sc;
	struct ycc c;

	if (sc->test_pattern >= 2) {
		c = bar_ycc[bar_of(l->w, x)];
		if (sc->test_pattern == 3) {
			uint32_t t = 256 * y / l->h;

			c = (struct ycc){ fade(c.y, t), fade(c.cb, t), fade(c.cr, t) };
		}
		return c;
	}
	if (r->osd && osd_at(l, x, y, &c))
		return c;
	return scene_at(l, r, sc->hflip ? l->w - 1 - x : x);
}

static uint16_t rgb565(struct rgb c)
{
	return (uint16_t)(((c.r >> 3) << 11) | ((c.g >> 2) << 5) | (c.b >> 3));
}

static uint16_t pixel_rgb(const struct layout *l, const struct row *r, uint32_t x)
{
	uint32_t y = r->y;
	const struct via_model_scene *sc = l->sc;
	struct ycc c;
	int u, v;

	if (sc->test_pattern >= 2) {
		struct rgb p = bar_rgb[bar_of(l->w, x)];

		if (sc->test_pattern == 3) {
			uint32_t t = 256 * y / l->h;

			p = (struct rgb){ fade(p.r, t), fade(p.g, t), fade(p.b, t) };
		}
		return rgb565(p);
	}
	c = pixel_ycc(l, r, x);
	u = c.cb - 128;
	v = c.cr - 128;
	return rgb565((struct rgb){ clamp8(c.y + rdiv(359 * v, 256)),
				    clamp8(c.y - rdiv(88 * u + 183 * v, 256)),
				    clamp8(c.y + rdiv(454 * u, 256)) });
}

/* The 4 bytes the sensor sends for pixels x, x + 1 of line y (x even). */
static void sent_group(const struct layout *l, const struct row *r, uint32_t x, uint8_t out[4])
{
	uint32_t x1 = x + 1 < l->w ? x + 1 : x, y = r->y;

	if (l->sc->test_pattern == 1) {
		for (uint32_t j = 0; j < 4; j++)
			out[j] = (uint8_t)(1u << ((2 * x + j + y) % 8));
	} else if (l->sc->rgb565) {
		uint16_t p0 = pixel_rgb(l, r, x), p1 = pixel_rgb(l, r, x1);

		out[0] = (uint8_t)(p0 >> 8);
		out[1] = (uint8_t)p0;
		out[2] = (uint8_t)(p1 >> 8);
		out[3] = (uint8_t)p1;
	} else {
		struct ycc a = pixel_ycc(l, r, x), b = pixel_ycc(l, r, x1);

		out[0] = a.y;
		out[1] = a.cb;
		out[2] = b.y;
		out[3] = a.cr;
	}
}

void via_model_scene_init(struct via_model_scene *sc, uint32_t width, uint32_t height)
{
	memset(sc, 0, sizeof(*sc));
	sc->width = width;
	sc->height = height;
	sc->contrast = 64;
	sc->saturation = 128;
}

void via_model_render(const struct via_model_scene *sc, uint64_t sequence, uint8_t *dst,
		      uint32_t stride)
{
	const uint8_t *p = perm[sc->byteorder & 3];
	struct layout l;

	if (!sc->width || !sc->height)
		return;
	layout_init(&l, sc, sequence);
	for (uint32_t y = 0; y < sc->height; y++) {
		uint8_t *line = dst + (size_t)y * stride;
		struct row r;

		row_init(&l, &r, y);
		for (uint32_t x = 0; x < sc->width; x += 2) {
			uint8_t in[4], out[4];

			sent_group(&l, &r, x, in);
			for (int i = 0; i < 4; i++)
				out[i] = in[p[i]];
			memcpy(line + 2 * x, out, x + 1 < sc->width ? 4 : 2);
		}
	}
}

unsigned int via_model_dynamic_rects(const struct via_model_scene *sc,
				     struct via_model_rect rects[VIA_MODEL_MAX_RECTS])
{
	uint32_t w = sc->width, h = sc->height, k = counter_k(w, h), side[3];
	struct via_model_rect tr[3];
	unsigned int n = 0;

	if (sc->test_pattern || !w || !h)
		return 0;
	if (2 * k < w && 2 * k < h)
		rects[n++] = (struct via_model_rect){ 2 * k, 2 * k, umin(33 * k, w - 2 * k),
						      umin(7 * k, h - 2 * k) };
	tracks(w, h, tr, side);
	for (int i = 0; i < 3; i++) {
		struct via_model_rect r = tr[i];

		if (r.x >= w || r.y >= h || !r.w || !r.h)
			continue;
		r.w = umin(r.w, w - r.x);
		r.h = umin(r.h, h - r.y);
		if (sc->hflip)
			r.x = w - r.x - r.w;
		if (sc->vflip)
			r.y = h - r.y - r.h;
		rects[n++] = r;
	}
	return n;
}

long via_model_compare(const struct via_model_scene *sc, const uint8_t *frame, size_t *total)
{
	struct via_model_rect rects[VIA_MODEL_MAX_RECTS];
	uint32_t w = sc->width, h = sc->height;
	uint8_t *ref = malloc((size_t)w * h * 2);
	unsigned int nr;
	long same = 0;

	*total = 0;
	if (!ref)
		return -ENOMEM;
	via_model_render(sc, 0, ref, w * 2);
	nr = via_model_dynamic_rects(sc, rects);
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++) {
			bool dyn = false;
			size_t o = ((size_t)y * w + x) * 2;

			for (unsigned int i = 0; i < nr; i++)
				dyn |= x + 2 >= rects[i].x && x < rects[i].x + rects[i].w + 2 &&
				       y >= rects[i].y && y < rects[i].y + rects[i].h;
			if (dyn)
				continue;
			(*total)++;
			same += !memcmp(frame + o, ref + o, 2);
		}
	}
	free(ref);
	return same;
}
