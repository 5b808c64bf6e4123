/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ov7670.h - OmniVision OV7670 logic of the VIA backend: reset, identity, the init table,
 * output format, frame rate and controls, all through via_sensor_read/write (any transport).
 */
#ifndef VIACAM_OV7670_H
#define VIACAM_OV7670_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/viacam.h>

#include "via-io.h"

/* The "Test Pattern" menu: V4L2_CID_TEST_PATTERN is in the image-processing class, which the
 * bridge does not accept, so a private user-class id (the pattern backend's) stands in. */
#define OV_CID_TEST_PATTERN	(V4L2_CID_USER_BASE + 0x1f00)

#define OV_NCTRLS 11

/* Control values as the sensor has them (V4L2 ranges of the kernel's ov7670 driver). */
struct ov7670_state {
	int brightness;		/* 0..255, 128 */
	int contrast;		/* 0..127, 64 */
	int saturation;		/* 0..256, 128 */
	int hue;		/* -180..180 step 5, 0 */
	bool hflip, vflip;
	int gain;		/* 0..255, 128 */
	bool autogain;		/* 1 */
	int exposure;		/* 0..65535, 500 */
	int exposure_auto;	/* V4L2_EXPOSURE_AUTO (0) or _MANUAL (1) */
	int test_pattern;	/* 0..3 */
	bool rgb565;
	unsigned int fps;	/* 30, 15, 10, 5, 1 */
};

void ov7670_state_init(struct ov7670_state *st);

/* Soft reset and identity check (MIDH MIDL PID VER). 0, -ENXIO/-EIO (no answer) or
 * -ENODEV (another chip); @msg says which bus, address and values. */
int ov7670_probe(struct via_io *io, char *msg, size_t len);

/* Init table, then format (VGA, YUYV or RGB565), flips, rate and every control of @st. */
int ov7670_setup(struct via_io *io, const struct ov7670_state *st);

/* The CLKRC divider for @fps at the XO-1.5's 90 MHz clock (3 = 30 fps ... 63). */
uint8_t ov7670_clkrc(unsigned int fps);

/* Applies control @id = @value to the sensor and @st (with the sensor's side effects, e.g.
 * brightness and exposure switch auto exposure off). -EINVAL for an unknown id or value.
 * With @io NULL only @st changes (the sensor is off; ov7670_setup applies it later). */
int ov7670_set_ctrl(struct via_io *io, struct ov7670_state *st, uint32_t id, int64_t value);

/* The controls to declare to the bridge. */
void ov7670_ctrls(struct viacam_ctrl ctrls[OV_NCTRLS]);

/* The colour-matrix registers (0x4f..0x54 magnitudes, 0x58 signs in bits 5:0) for a format,
 * saturation and hue. */
void ov7670_matrix(bool rgb, int saturation, int hue, uint8_t mag[6], uint8_t *signs);

#endif /* VIACAM_OV7670_H */
