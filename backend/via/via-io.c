// SPDX-License-Identifier: GPL-2.0-only
/*
 * via-io.c - the transport-independent parts of via-io.h: the clock, sleeping, and the
 * OV7670's register access (i2c-dev, or the model's in-process sensor).
 *
 * Sensor transfers over i2c-dev (facts: ../../shared/via-hardware.md 2.1, 5.7):
 *   write  one message [reg, val]
 *   read   plain: two separate transfers, a write of [reg] (ends with STOP) and then a 1-byte
 *          read — no repeated start, which is what the XO-1.5's viafb bit-bang bus and the
 *          kernel's ov7670 driver do there;
 *          SMBus (io->smbus): "read byte data" through the I2C_SMBUS ioctl (for adapters such
 *          as i2c-stub that cannot do plain transfers).
 * The i2c-dev fd is bound to VIA_SENSOR_ADDR by via_i2c_open().
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/i2c-dev.h>
#include <linux/i2c.h>

#include "via-io.h"

uint64_t via_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void via_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	/* nanosleep leaves the remaining time in ts when a signal interrupts it */
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* "i2c-3 (viafb i2c io_port idx 0x31)" or "model transport": where the sensor is, for messages. */
static void where(const struct via_io *io, char *buf, size_t len)
{
	if (io->i2c_fd >= 0)
		snprintf(buf, len, "%s", io->i2c_name[0] ? io->i2c_name : "i2c-dev");
	else
		snprintf(buf, len, "%s transport",
			 io->ops && io->ops->name ? io->ops->name : "(no)");
}

static int sensor_fail(struct via_io *io, uint8_t reg, const char *what, int e)
{
	char w[128];

	where(io, w, sizeof(w));
	snprintf(io->error, sizeof(io->error),
		 "sensor at 0x%02x on %s: register 0x%02x: %s failed: %s",
		 VIA_SENSOR_ADDR, w, reg, what, strerror(e));
	return -e;
}

/* write() of exactly @len bytes as one transfer; 0 or an errno value. */
static int xfer_write(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno;
	return (size_t)n == len ? 0 : EIO;
}

static int xfer_read(int fd, uint8_t *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno;
	return (size_t)n == len ? 0 : EIO;
}

static int smbus_xfer(int fd, uint8_t rw, uint8_t reg, union i2c_smbus_data *data)
{
	struct i2c_smbus_ioctl_data args = {
		.read_write = rw,
		.command = reg,
		.size = I2C_SMBUS_BYTE_DATA,
		.data = data,
	};

	return ioctl(fd, I2C_SMBUS, &args) < 0 ? errno : 0;
}

int via_sensor_read(struct via_io *io, uint8_t reg, uint8_t *val)
{
	int e;

	if (io->i2c_fd >= 0) {
		if (io->smbus) {
			union i2c_smbus_data d = { .byte = 0 };

			e = smbus_xfer(io->i2c_fd, I2C_SMBUS_READ, reg, &d);
			if (!e)
				*val = d.byte;
		} else {
			e = xfer_write(io->i2c_fd, &reg, 1);
			if (!e)
				e = xfer_read(io->i2c_fd, val, 1);
		}
		return e ? sensor_fail(io, reg, "read", e) : 0;
	}
	if (!io->ops || !io->ops->sensor_read)
		return sensor_fail(io, reg, "read", ENODEV);
	e = io->ops->sensor_read(io, reg, val);
	return e < 0 ? sensor_fail(io, reg, "read", -e) : 0;
}

int via_sensor_write(struct via_io *io, uint8_t reg, uint8_t val)
{
	int e;

	if (io->i2c_fd >= 0) {
		if (io->smbus) {
			union i2c_smbus_data d = { .byte = val };

			e = smbus_xfer(io->i2c_fd, I2C_SMBUS_WRITE, reg, &d);
		} else {
			const uint8_t buf[2] = { reg, val };

			e = xfer_write(io->i2c_fd, buf, sizeof(buf));
		}
		if (e)
			return sensor_fail(io, reg, "write", e);
	} else {
		if (!io->ops || !io->ops->sensor_write)
			return sensor_fail(io, reg, "write", ENODEV);
		e = io->ops->sensor_write(io, reg, val);
		if (e < 0)
			return sensor_fail(io, reg, "write", -e);
	}
	if (io->ops && io->ops->poll)
		io->ops->poll(io);
	return 0;
}

/* ---- MMIO register access (pci, drm) ---- */

uint32_t via_mmio_rd32(struct via_io *io, uint32_t off)
{
	if (!io->mmio || (off & 3) || (size_t)off + 4 > io->mmio_len)
		return 0xffffffffu;	/* what a read from nowhere gives */
	return *(volatile uint32_t *)(io->mmio + off);
}

void via_mmio_wr32(struct via_io *io, uint32_t off, uint32_t val)
{
	if (!io->mmio || (off & 3) || (size_t)off + 4 > io->mmio_len)
		return;
	*(volatile uint32_t *)(io->mmio + off) = val;
}

uint8_t via_mmio_sr_read(struct via_io *io, uint8_t index)
{
	if (!io->mmio || io->mmio_len <= VIA_SR_DATA)
		return 0xff;
	io->mmio[VIA_SR_INDEX] = index;
	return io->mmio[VIA_SR_DATA];
}

void via_mmio_sr_write(struct via_io *io, uint8_t index, uint8_t val)
{
	if (!io->mmio || io->mmio_len <= VIA_SR_DATA)
		return;
	io->mmio[VIA_SR_INDEX] = index;
	io->mmio[VIA_SR_DATA] = val;
}

void via_io_forget_maps(struct via_io *io)
{
	io->priv = NULL;
	io->mmio = NULL;
	io->mmio_len = 0;
	io->vram = NULL;
	io->vram_size = 0;
}
