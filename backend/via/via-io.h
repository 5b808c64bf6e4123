/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * via-io.h - how the VIA backend reaches the hardware: one small I/O interface, three
 * transports (../../shared/via-hardware.md has the facts this code is built on).
 *
 * READ THIS FIRST. The VIA backend's logic (via-engine.c: capture-engine setup, buffer
 * rotation, frame-done polling; ov7670.c: sensor bring-up, formats, rates, controls) talks to
 * the chip only through struct via_io. A transport fills it in:
 *   drm    libdrm: the legacy VIA DRM device's REGISTERS and FRAME_BUFFER maps (via-drm.c)
 *   pci    the IGP's PCI BARs through sysfs resource files (via-pci.c)
 *   model  the register-level model of the VX855 capture engine and OV7670 (via-model.c)
 * The sensor is reached through i2c-dev on every transport (via-i2c.c); the model acts as the
 * chip on that bus too when it has one (i2c-stub in the guest tests) and keeps an in-process
 * register file otherwise.
 *
 * Everything runs in viacamd's event-loop thread: no function here may block for longer than
 * a few milliseconds (sensor register writes sleep at most the 10 ms the OV7670 needs).
 * Errors are negative errno values with a message for people in via_io.error.
 */
#ifndef VIACAM_VIA_IO_H
#define VIACAM_VIA_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Capture engine 0 (MMIO offsets). */
#define VIA_INTCTRL	0x300
#define VIA_CAPINTC	0x310
#define VIA_HORRANGE	0x314
#define VIA_VERTRANGE	0x318
#define VIA_AVSCALE	0x31c
#define VIA_MAXDATA	0x334
#define VIA_MAXVBI	0x338
#define VIA_VBUF(i)	(0x340 + 4 * (i))	/* i = 0..2 */
#define VIA_VSTRIDE	0x350
#define VIA_GIRQ	0x200		/* global interrupt register: never enabled by us */

/* INTCTRL bits */
#define VIA_INT_EAV		(1u << 0)	/* end of active video, W1C */
#define VIA_INT_EVBI		(1u << 1)	/* W1C */
#define VIA_INT_ACTBUF_SHIFT	3		/* 4:3 buffer being written */
#define VIA_INT_ACTBUF_MASK	(3u << 3)
#define VIA_INT_FFULL		(1u << 7)	/* W1C */
#define VIA_INT_INTEN		(1u << 8)	/* the interrupt: never set (no kernel handler) */

/* CAPINTC bits */
#define VIA_CAP_ENABLE		(1u << 0)
#define VIA_CAP_3BUFS		(1u << 2)
#define VIA_CAP_BYTEORDER_SHIFT	8		/* 9:8: 0 YUYV, 1 UYVY, 2 YVYU, 3 VYUY */
#define VIA_CAP_BYTEORDER_MASK	(3u << 8)
#define VIA_CAP_DEINT_SHIFT	12		/* 13:12 */
#define VIA_CAP_FIFO_SHIFT	24		/* 27:24 */
#define VIA_CAP_VREFINV		(1u << 20)
#define VIA_CAP_FLDINV		(1u << 22)
#define VIA_CAP_CLKEN		(1u << 31)

/* AVSCALE */
#define VIA_SCALE_H_EN		(1u << 11)
#define VIA_SCALE_V_EN		(1u << 26)

#define VIA_VBUF_MASK		0x1ffffff0u
#define VIA_VSTRIDE_MASK	0x1ff0u

/* The camera area viafb reserves at the top of VRAM: 3 VGA YUYV frames. */
#define VIA_CAM_FRAME		(640u * 480u * 2u)
#define VIA_CAM_AREA		(3u * VIA_CAM_FRAME)
#define VIA_CAM_TOP_RESERVE	(0x2000u + 0x40000u)	/* cursor + command queue above it */

/* OV7670 on the bus */
#define VIA_SENSOR_ADDR		0x21

struct via_io;

struct via_io_ops {
	const char *name;	/* "drm", "pci", "model" */
	uint32_t (*rd32)(struct via_io *io, uint32_t off);
	void (*wr32)(struct via_io *io, uint32_t off, uint32_t val);
	uint8_t (*sr_read)(struct via_io *io, uint8_t index);	/* sequencer register */
	void (*sr_write)(struct via_io *io, uint8_t index, uint8_t val);
	/*
	 * Called whenever the logic polls the engine, and after every sensor register write:
	 * the model advances its clock, renders due frames and acts as the sensor chip here
	 * (self-clearing the reset bit). NULL for real hardware.
	 */
	void (*poll)(struct via_io *io);
	/* The model's in-process sensor (used when i2c_fd < 0); NULL otherwise. 0 or -errno. */
	int (*sensor_read)(struct via_io *io, uint8_t reg, uint8_t *val);
	int (*sensor_write)(struct via_io *io, uint8_t reg, uint8_t val);
	void (*close)(struct via_io *io);	/* unmaps, closes; io->priv freed */
};

struct via_io {
	const struct via_io_ops *ops;
	void *priv;
	volatile uint8_t *mmio;	/* pci, drm: the register BAR mapping (via_mmio_*) */
	size_t mmio_len;
	uint8_t *vram;		/* VRAM mapping (CPU reads of finished frames) */
	size_t vram_size;
	uint32_t cam_offset;	/* the reserved camera area inside VRAM */
	uint32_t cam_size;
	int i2c_fd;		/* /dev/i2c-N with the sensor, -1 for the model's own */
	char i2c_name[96];	/* adapter name, for messages */
	bool smbus;		/* SMBus byte transfers instead of write-then-read */
	char error[256];
};

/*
 * Sensor registers (via-i2c.c): over i2c-dev when io->i2c_fd >= 0 (plain write-then-read,
 * or SMBus byte data when io->smbus), else through ops->sensor_read/write. A write is
 * followed by ops->poll. 0, or -errno with io->error naming the bus, address and register.
 */
int via_sensor_read(struct via_io *io, uint8_t reg, uint8_t *val);
int via_sensor_write(struct via_io *io, uint8_t reg, uint8_t val);

/*
 * Opens the i2c-dev bus given as "/dev/i2c-N" or by adapter name ("viafb i2c io_port idx
 * 0x31", matched against /sys/class/i2c-dev/i2c-N/name under @sysroot, "" for the real root)
 * and binds it to the sensor address. Sets io->i2c_fd and io->i2c_name, or returns -errno
 * with io->error saying what was looked for.
 */
int via_i2c_open(struct via_io *io, const char *bus, bool smbus, const char *sysroot);
void via_i2c_close(struct via_io *io);

/*
 * Register access through io->mmio, shared by the pci and drm transports: 32-bit accesses
 * (an unaligned or out-of-range offset reads as 0xffffffff and writes nothing) and the
 * sequencer registers through the VGA mirror at MMIO 0x83c4 (index) / 0x83c5 (data).
 */
#define VIA_SR_INDEX	0x83c4
#define VIA_SR_DATA	0x83c5
uint32_t via_mmio_rd32(struct via_io *io, uint32_t off);
void via_mmio_wr32(struct via_io *io, uint32_t off, uint32_t val);
uint8_t via_mmio_sr_read(struct via_io *io, uint8_t index);
void via_mmio_sr_write(struct via_io *io, uint8_t index, uint8_t val);

/* After a transport unmapped everything: priv, mmio and vram pointers and sizes back to 0. */
void via_io_forget_maps(struct via_io *io);

/* Monotonic time and sleeping (the model's clock follows the same time). */
uint64_t via_now_ns(void);
void via_sleep_ms(unsigned int ms);

#endif /* VIACAM_VIA_IO_H */
