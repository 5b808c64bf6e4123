// SPDX-License-Identifier: GPL-2.0-only
/*
 * ov7670.c - OV7670 sensor logic for the VIA backend (see ov7670.h). Register values are
 * the facts in ../../shared/via-hardware.md section 2, written as data here.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <linux/videodev2.h>

#include "ov7670-regs.h"
#include "ov7670.h"

struct reg {
	uint8_t reg, val;
};

/* The init table (gives VGA YUYV); a reset and then everything in order. */
static const struct reg init_table[] = {
	{ 0x11, 0x01 }, { 0x3a, 0x04 }, { 0x12, 0x00 },
	{ 0x17, 0x13 }, { 0x18, 0x01 }, { 0x32, 0xb6 }, { 0x19, 0x02 }, { 0x1a, 0x7a },
	{ 0x03, 0x0a }, { 0x0c, 0x00 }, { 0x3e, 0x00 },
	{ 0x70, 0x3a }, { 0x71, 0x35 }, { 0x72, 0x11 }, { 0x73, 0xf0 }, { 0xa2, 0x02 },
	{ 0x15, 0x00 },
	/* gamma */
	{ 0x7a, 0x20 }, { 0x7b, 0x10 }, { 0x7c, 0x1e }, { 0x7d, 0x35 }, { 0x7e, 0x5a },
	{ 0x7f, 0x69 }, { 0x80, 0x76 }, { 0x81, 0x80 }, { 0x82, 0x88 }, { 0x83, 0x8f },
	{ 0x84, 0x96 }, { 0x85, 0xa3 }, { 0x86, 0xaf }, { 0x87, 0xc4 }, { 0x88, 0xd7 },
	{ 0x89, 0xe8 },
	/* AGC/AEC parameters first, then switch them on (COM8 e0 -> e5 -> e7) */
	{ 0x13, 0xe0 }, { 0x00, 0x00 }, { 0x10, 0x00 }, { 0x0d, 0x40 }, { 0x14, 0x18 },
	{ 0xa5, 0x05 }, { 0xab, 0x07 }, { 0x24, 0x95 }, { 0x25, 0x33 }, { 0x26, 0xe3 },
	{ 0x9f, 0x78 }, { 0xa0, 0x68 }, { 0xa1, 0x03 }, { 0xa6, 0xd8 }, { 0xa7, 0xd8 },
	{ 0xa8, 0xf0 }, { 0xa9, 0x90 }, { 0xaa, 0x94 }, { 0x13, 0xe5 },
	{ 0x0e, 0x61 }, { 0x0f, 0x4b }, { 0x16, 0x02 }, { 0x1e, 0x07 }, { 0x21, 0x02 },
	{ 0x22, 0x91 }, { 0x29, 0x07 }, { 0x33, 0x0b }, { 0x35, 0x0b }, { 0x37, 0x1d },
	{ 0x38, 0x71 }, { 0x39, 0x2a }, { 0x3c, 0x78 }, { 0x4d, 0x40 }, { 0x4e, 0x20 },
	{ 0x69, 0x00 }, { 0x6b, 0x4a }, { 0x74, 0x10 }, { 0x8d, 0x4f }, { 0x8e, 0x00 },
	{ 0x8f, 0x00 }, { 0x90, 0x00 }, { 0x91, 0x00 }, { 0x96, 0x00 }, { 0x9a, 0x00 },
	{ 0xb0, 0x84 }, { 0xb1, 0x0c }, { 0xb2, 0x0e }, { 0xb3, 0x82 }, { 0xb8, 0x0a },
	{ 0x43, 0x0a }, { 0x44, 0xf0 }, { 0x45, 0x34 }, { 0x46, 0x58 }, { 0x47, 0x28 },
	{ 0x48, 0x3a }, { 0x59, 0x88 }, { 0x5a, 0x88 }, { 0x5b, 0x44 }, { 0x5c, 0x67 },
	{ 0x5d, 0x49 }, { 0x5e, 0x0e }, { 0x6c, 0x0a }, { 0x6d, 0x55 }, { 0x6e, 0x11 },
	{ 0x6f, 0x9f }, { 0x6a, 0x40 }, { 0x01, 0x40 }, { 0x02, 0x60 }, { 0x13, 0xe7 },
	{ 0x4f, 0x80 }, { 0x50, 0x80 }, { 0x51, 0x00 }, { 0x52, 0x22 }, { 0x53, 0x5e },
	{ 0x54, 0x80 }, { 0x58, 0x9e },
	{ 0x41, 0x08 }, { 0x3f, 0x00 }, { 0x75, 0x05 }, { 0x76, 0xe1 }, { 0x4c, 0x00 },
	{ 0x77, 0x01 }, { 0x3d, 0xc3 }, { 0x4b, 0x09 }, { 0xc9, 0x60 }, { 0x41, 0x38 },
	{ 0x56, 0x40 },
	{ 0x34, 0x11 }, { 0x3b, 0x12 }, { 0xa4, 0x88 }, { 0x96, 0x00 }, { 0x97, 0x30 },
	{ 0x98, 0x20 }, { 0x99, 0x30 }, { 0x9a, 0x84 }, { 0x9b, 0x29 }, { 0x9c, 0x03 },
	{ 0x9d, 0x4c }, { 0x9e, 0x3f }, { 0x78, 0x04 },
	/* indexed pairs: 0x79 = index, 0xc8 = data */
	{ 0x79, 0x01 }, { 0xc8, 0xf0 }, { 0x79, 0x0f }, { 0xc8, 0x00 }, { 0x79, 0x10 },
	{ 0xc8, 0x7e }, { 0x79, 0x0a }, { 0xc8, 0x80 }, { 0x79, 0x0b }, { 0xc8, 0x01 },
	{ 0x79, 0x0c }, { 0xc8, 0x0f }, { 0x79, 0x0d }, { 0xc8, 0x20 }, { 0x79, 0x09 },
	{ 0xc8, 0x80 }, { 0x79, 0x02 }, { 0xc8, 0xc0 }, { 0x79, 0x03 }, { 0xc8, 0x40 },
	{ 0x79, 0x05 }, { 0xc8, 0x30 }, { 0x79, 0x26 },
};

/* Format deltas after COM7 (the matrix is written from the saturation/hue state). */
static const struct reg fmt_yuyv[] = {
	{ 0x8c, 0x00 }, { 0x04, 0x00 }, { 0x40, 0xc0 }, { 0x14, 0x48 }, { 0x3d, 0xc0 },
};
static const struct reg fmt_rgb565[] = {
	{ 0x8c, 0x00 }, { 0x04, 0x00 }, { 0x40, 0x10 }, { 0x14, 0x38 }, { 0x3d, 0xc0 },
};

/* Base colour matrices: v-red, v-green, v-blue, u-red, u-green, u-blue. */
static const int matrix_yuv[6] = { 128, -128, 0, -34, -94, 128 };
static const int matrix_rgb[6] = { 179, -179, 0, -61, -176, 228 };

static int wr(struct via_io *io, uint8_t reg, uint8_t val)
{
	return via_sensor_write(io, reg, val);
}

static int write_list(struct via_io *io, const struct reg *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ret = wr(io, r[i].reg, r[i].val);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Read-modify-write of @mask bits; the sensor wants 10 ms before such a write. */
static int rmw(struct via_io *io, uint8_t reg, uint8_t mask, uint8_t bits, bool pause)
{
	uint8_t v;
	int r = via_sensor_read(io, reg, &v);

	if (r < 0)
		return r;
	if (pause)
		via_sleep_ms(10);
	return wr(io, reg, (uint8_t)((v & ~mask) | (bits & mask)));
}

void ov7670_state_init(struct ov7670_state *st)
{
	memset(st, 0, sizeof(*st));
	st->brightness = 128;
	st->contrast = 64;
	st->saturation = 128;
	st->gain = 128;
	st->autogain = true;
	st->exposure = 500;
	st->exposure_auto = V4L2_EXPOSURE_AUTO;
	st->fps = 30;
}

int ov7670_probe(struct via_io *io, char *msg, size_t len)
{
	static const uint8_t regs[4] = { OV_MIDH, OV_MIDL, OV_PID, OV_VER };
	static const uint8_t want[4] = { OV_ID_MIDH, OV_ID_MIDL, OV_ID_PID, OV_ID_VER };
	uint8_t got[4];
	int r = wr(io, OV_COM7, OV_COM7_RESET);

	if (r < 0) {
		snprintf(msg, len, "the OV7670 does not answer: %s", io->error);
		return r;
	}
	via_sleep_ms(5);
	for (int i = 0; i < 4; i++) {
		r = via_sensor_read(io, regs[i], &got[i]);
		if (r < 0) {
			snprintf(msg, len, "the OV7670 does not answer: %s", io->error);
			return r;
		}
	}
	if (memcmp(got, want, 4) != 0) {
		snprintf(msg, len, "the sensor at 0x%02x on %s is not an OV7670: MIDH/MIDL/PID/VER read %02x %02x %02x %02x, expected %02x %02x %02x %02x",
			 VIA_SENSOR_ADDR, io->i2c_fd >= 0 ? io->i2c_name : "the model's bus", got[0],
			 got[1], got[2], got[3], want[0], want[1], want[2], want[3]);
		return -ENODEV;
	}
	return 0;
}

uint8_t ov7670_clkrc(unsigned int fps)
{
	unsigned int d = fps ? 90 / fps : 63;

	if (d < 1)
		d = 1;
	if (d > 63)
		d = 63;
	return (uint8_t)d;
}

/* Rotation by @hue degrees of the (v, u) pairs, then saturation; magnitudes and signs. */
void ov7670_matrix(bool rgb, int saturation, int hue, uint8_t mag[6], uint8_t *signs)
{
	const int *base = rgb ? matrix_rgb : matrix_yuv;
	double s = sin(hue * M_PI / 180.0), c = cos(hue * M_PI / 180.0);
	int m[6];

	for (int i = 0; i < 6; i++)
		m[i] = base[i] * saturation / 128;
	for (int i = 0; i < 3; i++) {
		int v = m[i], u = m[i + 3];

		m[i] = (int)lround(v * c + u * s);
		m[i + 3] = (int)lround(u * c - v * s);
	}
	*signs = 0;
	for (int i = 0; i < 6; i++) {
		int a = m[i] < 0 ? -m[i] : m[i];

		mag[i] = (uint8_t)(a > 255 ? 255 : a);
		if (m[i] < 0)
			*signs |= (uint8_t)(1u << i);
	}
}

static int write_matrix(struct via_io *io, const struct ov7670_state *st)
{
	uint8_t mag[6], signs;
	int r = 0;

	ov7670_matrix(st->rgb565, st->saturation, st->hue, mag, &signs);
	for (int i = 0; i < 6 && r >= 0; i++)
		r = wr(io, (uint8_t)(OV_MTX1 + i), mag[i]);
	if (r >= 0)
		r = rmw(io, OV_MTXS, 0x3f, signs, false);
	return r;
}

static uint8_t bright_reg(int v)
{
	return v > 127 ? (uint8_t)(v & 0x7f) : (uint8_t)((128 - v) | 0x80);
}

static int write_exposure(struct via_io *io, int e)
{
	int r = rmw(io, OV_COM1, 0x03, (uint8_t)(e & 3), false);

	if (r >= 0)
		r = wr(io, OV_AECH, (uint8_t)((e >> 2) & 0xff));
	if (r >= 0)
		r = rmw(io, OV_AECHH, 0x3f, (uint8_t)((e >> 10) & 0x3f), false);
	return r;
}

int ov7670_setup(struct via_io *io, const struct ov7670_state *st)
{
	uint8_t com8;
	int r;

	r = wr(io, OV_COM7, OV_COM7_RESET);
	if (r < 0)
		return r;
	via_sleep_ms(5);
	r = write_list(io, init_table, sizeof(init_table) / sizeof(init_table[0]));
	/* Format: COM7, COM10, the deltas, the VGA window, the rate. */
	if (r >= 0)
		r = wr(io, OV_COM7, st->rgb565 ? OV_COM7_RGB : 0);
	if (r >= 0)
		r = wr(io, OV_COM10, 0);
	if (r >= 0)
		r = st->rgb565 ? write_list(io, fmt_rgb565, 5) : write_list(io, fmt_yuyv, 5);
	if (r >= 0)
		r = write_matrix(io, st);
	/* VGA window: hstart 158, hstop 14, vstart 10, vstop 490 */
	if (r >= 0)
		r = wr(io, OV_HSTART, 158 >> 3);
	if (r >= 0)
		r = wr(io, OV_HSTOP, 14 >> 3);
	if (r >= 0)
		r = rmw(io, OV_HREF, 0x3f, (uint8_t)(((14 & 7) << 3) | (158 & 7)), true);
	if (r >= 0)
		r = wr(io, OV_VSTART, 10 >> 2);
	if (r >= 0)
		r = wr(io, OV_VSTOP, 490 >> 2);
	if (r >= 0)
		r = rmw(io, OV_VREF, 0x0f, (uint8_t)(((490 & 3) << 2) | (10 & 3)), true);
	if (r >= 0)
		r = rmw(io, OV_CLKRC, 0x7f, ov7670_clkrc(st->fps), false);
	/* Flips after the format ("weird things" otherwise), then the controls. */
	if (r >= 0)
		r = rmw(io, OV_MVFP, OV_MVFP_MIRROR | OV_MVFP_VFLIP,
			(uint8_t)((st->hflip ? OV_MVFP_MIRROR : 0) | (st->vflip ? OV_MVFP_VFLIP : 0)),
			true);
	if (r >= 0)
		r = wr(io, OV_CONTRAS, (uint8_t)st->contrast);
	if (r >= 0)
		r = wr(io, 0x70, st->test_pattern & 1 ? 0xba : 0x3a);
	if (r >= 0)
		r = wr(io, 0x71, st->test_pattern & 2 ? 0xb5 : 0x35);
	if (r < 0)
		return r;
	/* Manual values only where the automatic ones are off, as the sensor behaves. */
	com8 = 0xe7;
	if (!st->autogain) {
		com8 &= (uint8_t)~OV_COM8_AGC;
		r = wr(io, OV_GAIN, (uint8_t)st->gain);
	}
	if (r >= 0 && st->exposure_auto == V4L2_EXPOSURE_MANUAL) {
		com8 &= (uint8_t)~OV_COM8_AEC;
		r = write_exposure(io, st->exposure);
	}
	if (r >= 0 && st->brightness != 128)
		r = wr(io, OV_BRIGHT, bright_reg(st->brightness));
	if (r >= 0)
		r = wr(io, OV_COM8, com8);
	return r;
}

int ov7670_set_ctrl(struct via_io *io, struct ov7670_state *st, uint32_t id, int64_t value)
{
	int v = (int)value;

	switch (id) {
	case V4L2_CID_BRIGHTNESS:
		if (value < 0 || value > 255)
			return -EINVAL;
		st->brightness = v;
		/* Side effect of the sensor: manual brightness turns auto exposure off. */
		st->exposure_auto = V4L2_EXPOSURE_MANUAL;
		if (!io)
			return 0;
		if (rmw(io, OV_COM8, OV_COM8_AEC, 0, false) < 0)
			return -EIO;
		return wr(io, OV_BRIGHT, bright_reg(v));
	case V4L2_CID_CONTRAST:
		if (value < 0 || value > 127)
			return -EINVAL;
		st->contrast = v;
		if (!io)
			return 0;
		return wr(io, OV_CONTRAS, (uint8_t)v);
	case V4L2_CID_SATURATION:
		if (value < 0 || value > 256)
			return -EINVAL;
		st->saturation = v;
		if (!io)
			return 0;
		return write_matrix(io, st);
	case V4L2_CID_HUE:
		if (value < -180 || value > 180 || v % 5)
			return -EINVAL;
		st->hue = v;
		if (!io)
			return 0;
		return write_matrix(io, st);
	case V4L2_CID_HFLIP:
	case V4L2_CID_VFLIP:
		if (value < 0 || value > 1)
			return -EINVAL;
		if (id == V4L2_CID_HFLIP)
			st->hflip = v;
		else
			st->vflip = v;
		if (!io)
			return 0;
		return rmw(io, OV_MVFP, id == V4L2_CID_HFLIP ? OV_MVFP_MIRROR : OV_MVFP_VFLIP,
			   v ? 0xff : 0, true);
	case V4L2_CID_GAIN:
		if (value < 0 || value > 255)
			return -EINVAL;
		st->gain = v;
		st->autogain = false;	/* a manual gain turns AGC off */
		if (!io)
			return 0;
		if (rmw(io, OV_COM8, OV_COM8_AGC, 0, false) < 0)
			return -EIO;
		return wr(io, OV_GAIN, (uint8_t)v);
	case V4L2_CID_AUTOGAIN:
		if (value < 0 || value > 1)
			return -EINVAL;
		st->autogain = v;
		if (!io)
			return 0;
		return rmw(io, OV_COM8, OV_COM8_AGC, v ? OV_COM8_AGC : 0, false);
	case V4L2_CID_EXPOSURE:
		if (value < 0 || value > 65535)
			return -EINVAL;
		st->exposure = v;
		st->exposure_auto = V4L2_EXPOSURE_MANUAL;	/* and AEC goes off */
		if (!io)
			return 0;
		if (rmw(io, OV_COM8, OV_COM8_AEC, 0, false) < 0)
			return -EIO;
		return write_exposure(io, v);
	case V4L2_CID_EXPOSURE_AUTO:
		if (value != V4L2_EXPOSURE_AUTO && value != V4L2_EXPOSURE_MANUAL)
			return -EINVAL;
		st->exposure_auto = v;
		if (!io)
			return 0;
		return rmw(io, OV_COM8, OV_COM8_AEC,
			   v == V4L2_EXPOSURE_AUTO ? OV_COM8_AEC : 0, false);
	case OV_CID_TEST_PATTERN:
		if (value < 0 || value > 3)
			return -EINVAL;
		st->test_pattern = v;
		if (!io)
			return 0;
		if (rmw(io, 0x70, 0x80, v & 1 ? 0x80 : 0, false) < 0)
			return -EIO;
		return rmw(io, 0x71, 0x80, v & 2 ? 0x80 : 0, false);
	default:
		return -EINVAL;
	}
}

static void int_ctrl(struct viacam_ctrl *c, uint32_t id, uint32_t type, const char *name,
		     int64_t min, int64_t max, uint64_t step, int64_t def)
{
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->type = type;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->minimum = min;
	c->maximum = max;
	c->step = step;
	c->default_value = def;
	if (type == V4L2_CTRL_TYPE_INTEGER)
		c->flags = V4L2_CTRL_FLAG_SLIDER;
}

void ov7670_ctrls(struct viacam_ctrl c[OV_NCTRLS])
{
	static const char *const patterns[] = { "Disabled", "Shifting 1", "8-Bar Colour Bars",
						"Fade to Grey Colour Bars" };

	int_ctrl(&c[0], V4L2_CID_BRIGHTNESS, V4L2_CTRL_TYPE_INTEGER, "Brightness", 0, 255, 1, 128);
	int_ctrl(&c[1], V4L2_CID_CONTRAST, V4L2_CTRL_TYPE_INTEGER, "Contrast", 0, 127, 1, 64);
	int_ctrl(&c[2], V4L2_CID_SATURATION, V4L2_CTRL_TYPE_INTEGER, "Saturation", 0, 256, 1, 128);
	int_ctrl(&c[3], V4L2_CID_HUE, V4L2_CTRL_TYPE_INTEGER, "Hue", -180, 180, 5, 0);
	int_ctrl(&c[4], V4L2_CID_HFLIP, V4L2_CTRL_TYPE_BOOLEAN, "Horizontal Flip", 0, 1, 1, 0);
	int_ctrl(&c[5], V4L2_CID_VFLIP, V4L2_CTRL_TYPE_BOOLEAN, "Vertical Flip", 0, 1, 1, 0);
	int_ctrl(&c[6], V4L2_CID_GAIN, V4L2_CTRL_TYPE_INTEGER, "Gain", 0, 255, 1, 128);
	int_ctrl(&c[7], V4L2_CID_AUTOGAIN, V4L2_CTRL_TYPE_BOOLEAN, "Gain, Automatic", 0, 1, 1, 1);
	int_ctrl(&c[8], V4L2_CID_EXPOSURE, V4L2_CTRL_TYPE_INTEGER, "Exposure", 0, 65535, 1, 500);
	int_ctrl(&c[9], V4L2_CID_EXPOSURE_AUTO, V4L2_CTRL_TYPE_MENU, "Auto Exposure", 0, 1, 1,
		 V4L2_EXPOSURE_AUTO);
	c[9].menu_count = 2;
	c[9].step = 0;		/* menus: no step */
	snprintf(c[9].menu[0], sizeof(c[9].menu[0]), "Auto Mode");
	snprintf(c[9].menu[1], sizeof(c[9].menu[1]), "Manual Mode");
	int_ctrl(&c[10], OV_CID_TEST_PATTERN, V4L2_CTRL_TYPE_MENU, "Test Pattern", 0, 3, 1, 0);
	c[10].menu_count = 4;
	c[10].step = 0;
	for (int i = 0; i < 4; i++)
		snprintf(c[10].menu[i], sizeof(c[10].menu[i]), "%s", patterns[i]);
}
