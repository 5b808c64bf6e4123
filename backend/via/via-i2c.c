// SPDX-License-Identifier: GPL-2.0-only
/*
 * via-i2c.c - opens the sensor's I2C bus through i2c-dev (facts: ../../shared/via-hardware.md
 * 4.3, 5.7).
 *
 * The bus is named in the config either as a device node ("/dev/i2c-3") or by adapter name:
 * viafb registers its ports as "viafb i2c io_port idx 0x%02x", the OV7670 sits on port SR31,
 * so on an XO-1.5 the name is "viafb i2c io_port idx 0x31". Adapter numbers depend on probe
 * order, names do not. Device nodes given as paths are taken relative to @sysroot too (""
 * on a real system), so tests can point everything at a fake tree.
 *
 * The address is bound with I2C_SLAVE, never I2C_SLAVE_FORCE: EBUSY means a kernel driver
 * (ov7670, loaded by via-camera) owns the sensor, and talking to it behind that driver's
 * back would break both.
 *
 * io->i2c_name becomes "i2c-N (adapter name)" — the label every sensor error message uses.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/i2c-dev.h>
#include <linux/i2c.h>

#include "via-i2c.h"
#include "via-io.h"

#define MAX_ADAPTERS	256
#define ADAPTER_NAME	64	/* the kernel's limit is 48 */
#define NOT_FOUND	"no I2C bus named '%s' (is viafb loaded? is i2c-dev loaded?); available: %s"

struct adapter {
	int nr;
	char name[ADAPTER_NAME];
};

/* The first line of @path without its newline; 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* N for "i2c-N" (N decimal, nothing after it), else -1. */
static int adapter_nr(const char *s)
{
	char *end;
	long n;

	if (strncmp(s, "i2c-", 4) || s[4] < '0' || s[4] > '9')
		return -1;
	errno = 0;
	n = strtol(s + 4, &end, 10);
	if (*end || errno || n > INT_MAX)
		return -1;
	return (int)n;
}

static bool have_nr(const struct adapter *a, size_t n, int nr)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].nr == nr)
			return true;
	return false;
}

/* Adds the adapters listed in <sysroot>/<dir> that @a does not have yet; returns the new count. */
static size_t scan_dir(const char *sysroot, const char *dir, struct adapter *a, size_t n)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s%s", sysroot, dir);
	d = opendir(path);
	if (!d)
		return n;
	while (n < MAX_ADAPTERS && (de = readdir(d))) {
		int nr = adapter_nr(de->d_name);

		if (nr < 0 || have_nr(a, n, nr))
			continue;
		if (snprintf(path, sizeof(path), "%s%s/%s/name", sysroot, dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		if (read_line(path, a[n].name, sizeof(a[n].name)) < 0)
			continue;
		a[n++].nr = nr;
	}
	closedir(d);
	return n;
}

static int cmp_adapter(const void *x, const void *y)
{
	const struct adapter *a = x, *b = y;

	return (a->nr > b->nr) - (a->nr < b->nr);
}

int via_i2c_find(const char *sysroot, const char *name, char *path, size_t len,
		 char *avail, size_t availlen)
{
	struct adapter *a = calloc(MAX_ADAPTERS, sizeof(*a));
	size_t n = 0, used = 0;
	int r = -ENOENT;

	if (!a)
		return -ENOMEM;
	if (!sysroot)
		sysroot = "";
	n = scan_dir(sysroot, "/sys/class/i2c-dev", a, n);
	n = scan_dir(sysroot, "/sys/bus/i2c/devices", a, n);
	qsort(a, n, sizeof(*a), cmp_adapter);

	if (avail && availlen) {
		avail[0] = '\0';
		for (size_t i = 0; i < n && used < availlen; i++) {
			int w = snprintf(avail + used, availlen - used, "%si2c-%d (%s)",
					 i ? ", " : "", a[i].nr, a[i].name);

			used += w > 0 ? (size_t)w : 0;
		}
		if (!n)
			snprintf(avail, availlen, "none");
		else if (used >= availlen && availlen > 4)
			memcpy(avail + availlen - 4, "...", 4);	/* truncated */
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(a[i].name, name))
			continue;
		if (snprintf(path, len, "%s/dev/i2c-%d", sysroot, a[i].nr) >= (int)len)
			r = -ENAMETOOLONG;
		else
			r = a[i].nr;
		break;
	}
	free(a);
	return r;
}

static int fail(struct via_io *io, int fd, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct via_io *io, int fd, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(io->error, sizeof(io->error), fmt, ap);
	va_end(ap);
	if (fd >= 0)
		close(fd);
	io->i2c_fd = -1;
	return -e;
}

int via_i2c_open(struct via_io *io, const char *bus, bool smbus, const char *sysroot)
{
	char path[PATH_MAX], label[sizeof(io->i2c_name)], aname[ADAPTER_NAME] = "";
	unsigned long funcs = 0;
	int nr, fd;

	io->i2c_fd = -1;
	if (!sysroot)
		sysroot = "";
	if (!bus || !bus[0])
		return fail(io, -1, EINVAL, "no I2C bus given for the sensor");

	if (bus[0] == '/') {
		const char *base = strrchr(bus, '/') + 1;

		if (snprintf(path, sizeof(path), "%s%s", sysroot, bus) >= (int)sizeof(path))
			return fail(io, -1, ENAMETOOLONG, "I2C bus path too long: '%s'", bus);
		nr = adapter_nr(base);
		if (nr >= 0) {
			/* the adapter's name, for messages only */
			char np[PATH_MAX];

			snprintf(np, sizeof(np), "%s/sys/class/i2c-dev/i2c-%d/name", sysroot, nr);
			if (read_line(np, aname, sizeof(aname)) < 0) {
				snprintf(np, sizeof(np), "%s/sys/bus/i2c/devices/i2c-%d/name",
					 sysroot, nr);
				if (read_line(np, aname, sizeof(aname)) < 0)
					aname[0] = '\0';
			}
		}
	} else {
		char avail[sizeof(io->error)];
		/* the list gets the room the rest of the message leaves in io->error */
		int room = (int)sizeof(io->error) - snprintf(NULL, 0, NOT_FOUND, bus, "");

		nr = via_i2c_find(sysroot, bus, path, sizeof(path), avail,
				  room < 8 ? 8 : room > (int)sizeof(avail) ? sizeof(avail) :
				  (size_t)room);
		if (nr == -ENOENT)
			return fail(io, -1, ENODEV, NOT_FOUND, bus, avail);
		if (nr < 0)
			return fail(io, -1, -nr, "I2C bus '%s': %s", bus, strerror(-nr));
		snprintf(aname, sizeof(aname), "%s", bus);
	}

	if (nr < 0)
		snprintf(label, sizeof(label), "%s", bus);
	else if (aname[0])
		snprintf(label, sizeof(label), "i2c-%d (%s)", nr, aname);
	else
		snprintf(label, sizeof(label), "i2c-%d", nr);

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			return fail(io, -1, e, "%s: %s does not exist (is i2c-dev loaded? "
				    "modprobe i2c-dev)", label, path);
		if (e == EACCES || e == EPERM)
			return fail(io, -1, e, "%s: cannot open %s: %s (need root, or write "
				    "access to the device node)", label, path, strerror(e));
		return fail(io, -1, e, "%s: cannot open %s: %s", label, path, strerror(e));
	}

	if (ioctl(fd, I2C_SLAVE, (unsigned long)VIA_SENSOR_ADDR) < 0) {
		int e = errno;

		if (e == EBUSY)
			return fail(io, fd, e, "%s: address 0x%02x is in use by a kernel driver "
				    "(ov7670, loaded with via-camera?); unload it first "
				    "(modprobe -r via-camera ov7670)", label, VIA_SENSOR_ADDR);
		if (e == ENOTTY || e == EINVAL)
			return fail(io, fd, e, "%s: %s is not an i2c-dev device (I2C_SLAVE: %s)",
				    label, path, strerror(e));
		return fail(io, fd, e, "%s: cannot bind address 0x%02x: %s", label,
			    VIA_SENSOR_ADDR, strerror(e));
	}
	if (ioctl(fd, I2C_FUNCS, &funcs) < 0) {
		int e = errno;

		return fail(io, fd, e, "%s: cannot read the adapter's functionality (I2C_FUNCS): %s",
			    label, strerror(e));
	}
	if (!smbus && !(funcs & I2C_FUNC_I2C))
		return fail(io, fd, EOPNOTSUPP, "%s cannot do plain I2C transfers; "
			    "set sensor_smbus = yes", label);
	if (smbus && (funcs & I2C_FUNC_SMBUS_BYTE_DATA) != I2C_FUNC_SMBUS_BYTE_DATA)
		return fail(io, fd, EOPNOTSUPP, "%s cannot do SMBus byte-data transfers; "
			    "set sensor_smbus = no", label);

	io->i2c_fd = fd;
	io->smbus = smbus;
	snprintf(io->i2c_name, sizeof(io->i2c_name), "%s", label);
	return 0;
}

void via_i2c_close(struct via_io *io)
{
	if (io->i2c_fd >= 0)
		close(io->i2c_fd);
	io->i2c_fd = -1;
}
