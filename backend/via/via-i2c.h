/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * via-i2c.h - finding the sensor's I2C adapter by name (via-i2c.c; via_i2c_open() and
 * via_i2c_close() are declared in via-io.h). Separate so the lookup can be tested on a fake
 * sysfs tree.
 */
#ifndef VIACAM_VIA_I2C_H
#define VIACAM_VIA_I2C_H

#include <stddef.h>

/*
 * Looks for the I2C adapter whose name is exactly @name (trailing newline ignored) in
 * <sysroot>/sys/class/i2c-dev/i2c-N/name and <sysroot>/sys/bus/i2c/devices/i2c-N/name.
 * Returns N and writes "<sysroot>/dev/i2c-N" to @path, or -ENOENT (nothing matches) or
 * -ENAMETOOLONG (@path too short). @avail (may be NULL) gets the adapters that exist, in
 * number order, for messages: "i2c-0 (SMBus I801 adapter at f000), i2c-1 (...)" or "none".
 * The lowest-numbered adapter wins if several share the name.
 */
int via_i2c_find(const char *sysroot, const char *name, char *path, size_t len,
		 char *avail, size_t availlen);

#endif /* VIACAM_VIA_I2C_H */
