// SPDX-License-Identifier: GPL-2.0-only
/*
 * test-via-transport.c - the VIA backend's transports on fake sysfs/devfs trees: the pci
 * transport (device search, BARs, register and SR access through the mapped resource files,
 * camera area), the I2C adapter lookup and its messages, sensor register transfers over a
 * socket standing in for i2c-dev, and the drm transport's "not found" messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../backend/via/ov7670-regs.h"
#include "../../backend/via/via-drm.h"
#include "../../backend/via/via-i2c.h"
#include "../../backend/via/via-io.h"
#include "../../backend/via/via-pci.h"


#define MiB (1024u * 1024u)
#define KiB 1024u

static char tmpdir[64];	/* $TMPDIR/vt.XXXXXX (short: the drm messages print no root, others do) */

/* ---- fake trees ---- */

static void mkdirs(const char *path)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		assert_true(mkdir(buf, 0755) == 0 || errno == EEXIST);
		*s = '/';
	}
	assert_true(mkdir(buf, 0755) == 0 || errno == EEXIST);
}

/* A fresh root for one test: <tmpdir>/<name>. */
static const char *mkroot(const char *name, char buf[256])
{
	snprintf(buf, 256, "%s/%s", tmpdir, name);
	mkdirs(buf);
	return buf;
}

static void write_file(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void write_file(const char *path, const char *fmt, ...)
{
	FILE *f = fopen(path, "w");
	va_list ap;

	assert_non_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
}

/* A (sparse) file of @size bytes. */
static void sized_file(const char *path, off_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

/*
 * <root>/sys/bus/pci/devices/<bdf>/ with vendor, device, resource (BAR i sized bars[i],
 * 0 = unused) and a resourceN file of each used BAR's size.
 */
static void add_pci(const char *root, const char *bdf, unsigned int ven, unsigned int dev,
		    const size_t bars[6])
{
	char dir[512], path[600];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices/%s", root, bdf);
	mkdirs(dir);
	snprintf(path, sizeof(path), "%s/vendor", dir);
	write_file(path, "0x%04x\n", ven);
	snprintf(path, sizeof(path), "%s/device", dir);
	write_file(path, "0x%04x\n", dev);
	snprintf(path, sizeof(path), "%s/resource", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 13; i++) {
		unsigned long long start = 0xc0000000ull + (unsigned long long)i * 0x10000000ull;

		if (i < 6 && bars && bars[i])
			fprintf(f, "0x%016llx 0x%016llx 0x%016llx\n", start, start + bars[i] - 1,
				0x40200ull);
		else
			fprintf(f, "0x%016llx 0x%016llx 0x%016llx\n", 0ull, 0ull, 0ull);
	}
	fclose(f);
	for (int i = 0; i < 6 && bars; i++) {
		if (!bars[i])
			continue;
		snprintf(path, sizeof(path), "%s/resource%d", dir, i);
		sized_file(path, (off_t)bars[i]);
	}
}

static void pci_file(const char *root, const char *bdf, const char *name, char path[600])
{
	snprintf(path, 600, "%s/sys/bus/pci/devices/%s/%s", root, bdf, name);
}

static uint32_t file_u32(const char *path, off_t off)
{
	int fd = open(path, O_RDONLY);
	uint32_t v = 0;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, 4, off), 4);
	close(fd);
	return v;
}

static uint8_t file_u8(const char *path, off_t off)
{
	int fd = open(path, O_RDONLY);
	uint8_t v = 0;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, 1, off), 1);
	close(fd);
	return v;
}

static void file_put(const char *path, off_t off, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static struct via_io new_io(void)
{
	return (struct via_io){ .i2c_fd = -1 };
}

static void not_found_msg(const char *root, char *buf, size_t len)
{
	snprintf(buf, len, "via: no VIA VX855/VX900 found (looked for PCI 1106:5122/7122 under "
		 "%s/sys/bus/pci/devices); set transport = model to use the built-in VX855 model",
		 root);
}

/* ---- pci ---- */

static void test_pci_vx855(void **state)
{
	const size_t bars[6] = { 16 * MiB, 64 * KiB };
	const size_t host[6] = { 0 };
	char root[256], path[600], sr[600];
	struct via_io io = new_io();
	uint32_t v = 0x12345678;

	(void)state;
	mkroot("vx855", root);
	add_pci(root, "0000:00:00.0", 0x1106, 0x0353, host);
	add_pci(root, "0000:00:01.0", 0x1106, 0x5122, bars);
	add_pci(root, "0000:00:1f.0", 0x8086, 0x2a42, bars);

	assert_int_equal(via_pci_open(&io, root, ""), 0);
	assert_string_equal(io.ops->name, "pci");
	assert_non_null(io.ops->rd32);
	assert_null(io.ops->poll);
	assert_int_equal(io.i2c_fd, -1);
	assert_int_equal(io.vram_size, 16 * MiB);
	assert_int_equal(io.cam_offset, 16 * MiB - 0x204000);
	assert_int_equal(io.cam_offset % 4096, 0);
	assert_int_equal(io.cam_size, 3 * 640 * 480 * 2);
	assert_non_null(via_pci_describe(&io));
	assert_non_null(strstr(via_pci_describe(&io), "0000:00:01.0 VX855"));

	/* registers land in resource1 at their offset, and read back from it */
	pci_file(root, "0000:00:01.0", "resource1", path);
	io.ops->wr32(&io, VIA_CAPINTC, 0x88502004);
	assert_int_equal(file_u32(path, VIA_CAPINTC), 0x88502004);
	file_put(path, VIA_INTCTRL, &v, 4);
	assert_int_equal(io.ops->rd32(&io, VIA_INTCTRL), 0x12345678);
	assert_int_equal(io.ops->rd32(&io, 64 * KiB), 0xffffffff);	/* out of range */
	io.ops->wr32(&io, 64 * KiB - 2, 1);				/* ignored */

	/* SR through the VGA mirror: index 0x83C4, data 0x83C5 */
	io.ops->sr_write(&io, 0x2c, 0x5a);
	assert_int_equal(file_u8(path, 0x83c4), 0x2c);
	assert_int_equal(file_u8(path, 0x83c5), 0x5a);
	file_put(path, 0x83c5, "\x77", 1);
	assert_int_equal(io.ops->sr_read(&io, 0x1e), 0x77);
	assert_int_equal(file_u8(path, 0x83c4), 0x1e);

	/* VRAM = resource0 */
	pci_file(root, "0000:00:01.0", "resource0", sr);
	io.vram[io.cam_offset] = 0xab;
	io.vram[io.vram_size - 1] = 0xcd;
	assert_int_equal(file_u8(sr, io.cam_offset), 0xab);
	assert_int_equal(file_u8(sr, (off_t)io.vram_size - 1), 0xcd);

	io.ops->close(&io);
	assert_null(io.priv);
	assert_null(io.vram);
}

static void test_pci_vx900(void **state)
{
	const size_t bars[6] = { 4 * KiB, 64 * KiB, 32 * MiB };
	char root[256], path[600];
	struct via_io io = new_io();

	(void)state;
	mkroot("vx900", root);
	add_pci(root, "0000:00:01.0", 0x1106, 0x7122, bars);

	assert_int_equal(via_pci_open(&io, root, ""), 0);
	assert_int_equal(io.vram_size, 32 * MiB);
	assert_int_equal(io.cam_offset, 32 * MiB - 0x204000);
	assert_non_null(strstr(via_pci_describe(&io), "VX900"));
	io.vram[io.cam_offset + 5] = 0x42;
	pci_file(root, "0000:00:01.0", "resource2", path);
	assert_int_equal(file_u8(path, io.cam_offset + 5), 0x42);
	io.ops->close(&io);
}

/* The VRAM size from function 3 (1106:3409, config A0 bits 14:12) wins over a larger BAR. */
static void test_pci_fn3_size(void **state)
{
	const size_t bars[6] = { 32 * MiB, 64 * KiB };
	char root[256], path[600];
	unsigned char cfg[256] = { 0 };
	struct via_io io = new_io();
	FILE *f;

	(void)state;
	mkroot("fn3", root);
	add_pci(root, "0000:00:00.3", 0x1106, 0x3409, NULL);
	add_pci(root, "0000:00:01.0", 0x1106, 0x5122, bars);
	cfg[0xa1] = 0x20;	/* bits 14:12 = 2: 16 MiB */
	pci_file(root, "0000:00:00.3", "config", path);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(cfg, 1, sizeof(cfg), f), sizeof(cfg));
	fclose(f);

	assert_int_equal(via_pci_open(&io, root, ""), 0);
	assert_int_equal(io.vram_size, 16 * MiB);
	assert_int_equal(io.cam_offset, 16 * MiB - 0x204000);
	io.ops->close(&io);

	/* code 0: viafb's 32 MiB fallback, then the BAR (32 MiB) */
	cfg[0xa1] = 0x00;
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(cfg, 1, sizeof(cfg), f), sizeof(cfg));
	fclose(f);
	assert_int_equal(via_pci_open(&io, root, ""), 0);
	assert_int_equal(io.vram_size, 32 * MiB);
	io.ops->close(&io);
}

static void test_pci_not_found(void **state)
{
	const size_t bars[6] = { 16 * MiB, 64 * KiB };
	char root[256], want[512];
	struct via_io io = new_io();

	(void)state;
	/* no sysfs at all */
	mkroot("none", root);
	assert_int_equal(via_pci_open(&io, root, ""), -ENODEV);
	not_found_msg(root, want, sizeof(want));
	assert_string_equal(io.error, want);
	assert_null(io.ops);

	/* other VIA chips and other vendors */
	mkroot("wrongchip", root);
	add_pci(root, "0000:00:01.0", 0x1106, 0x3371, bars);	/* P4M900 */
	add_pci(root, "0000:00:02.0", 0x8086, 0x5122, bars);
	add_pci(root, "0000:00:03.0", 0x1106, 0x1122, bars);	/* VX800: only when named */
	assert_int_equal(via_pci_open(&io, root, ""), -ENODEV);
	not_found_msg(root, want, sizeof(want));
	assert_string_equal(io.error, want);
	assert_null(io.ops);
}

static void test_pci_explicit(void **state)
{
	const size_t bars[6] = { 16 * MiB, 64 * KiB };
	char root[256], want[512];
	struct via_io io = new_io();

	(void)state;
	mkroot("explicit", root);
	add_pci(root, "0000:00:01.0", 0x1106, 0x5122, bars);
	add_pci(root, "0000:00:03.0", 0x1106, 0x1122, bars);
	add_pci(root, "0000:00:02.0", 0x8086, 0x2a42, bars);

	assert_int_equal(via_pci_open(&io, root, "0000:00:01.0"), 0);
	io.ops->close(&io);
	assert_int_equal(via_pci_open(&io, root, "0000:00:03.0"), 0);
	assert_non_null(strstr(via_pci_describe(&io), "VX800"));
	io.ops->close(&io);

	io = new_io();
	assert_int_equal(via_pci_open(&io, root, "0000:00:02.0"), -ENODEV);
	assert_string_equal(io.error, "via: PCI device 0000:00:02.0 is 8086:2a42, not a VIA "
			    "VX855/VX900 (1106:5122/7122) or VX800 (1106:1122)");
	assert_int_equal(via_pci_open(&io, root, "0000:00:09.0"), -ENODEV);
	snprintf(want, sizeof(want), "via: no PCI device '0000:00:09.0' under %s/sys/bus/pci/devices",
		 root);
	assert_string_equal(io.error, want);
	assert_int_equal(via_pci_open(&io, root, "../../x"), -ENODEV);
	assert_null(io.ops);
}

static void test_pci_refused(void **state)
{
	const size_t small[6] = { 4 * MiB, 64 * KiB };
	const size_t nommio[6] = { 16 * MiB, 0 };
	char root[256], path[600];
	struct via_io io = new_io();

	(void)state;
	mkroot("small", root);
	add_pci(root, "0000:00:01.0", 0x1106, 0x5122, small);
	assert_int_equal(via_pci_open(&io, root, ""), -ENOSPC);
	assert_string_equal(io.error, "via: 0000:00:01.0 (VX855) BAR0: VRAM is only 4096 KiB; "
			    "the camera area needs at least 8 MiB");
	assert_null(io.ops);
	assert_int_equal(io.cam_size, 0);

	mkroot("nommio", root);
	add_pci(root, "0000:00:01.0", 0x1106, 0x5122, nommio);
	assert_int_equal(via_pci_open(&io, root, ""), -ENODEV);
	assert_string_equal(io.error, "via: 0000:00:01.0 (VX855): MMIO BAR1 is 0 bytes, expected "
			    "at least 0x9000");

	/* a resource file shorter than its BAR is not mapped (it would SIGBUS) */
	mkroot("short", root);
	add_pci(root, "0000:00:01.0", 0x1106, 0x5122, (const size_t[6]){ 16 * MiB, 64 * KiB });
	pci_file(root, "0000:00:01.0", "resource0", path);
	sized_file(path, 8 * MiB);
	assert_true(via_pci_open(&io, root, "") < 0);
	assert_non_null(strstr(io.error, "resource0 is only 8388608 bytes"));
	assert_null(io.ops);
	assert_int_equal(io.vram_size, 0);

	/* unreadable resource files: the permission message (skipped as root) */
	if (geteuid() != 0) {
		mkroot("perm", root);
		add_pci(root, "0000:00:01.0", 0x1106, 0x5122,
			(const size_t[6]){ 16 * MiB, 64 * KiB });
		pci_file(root, "0000:00:01.0", "resource1", path);
		assert_int_equal(chmod(path, 0400), 0);
		assert_int_equal(via_pci_open(&io, root, ""), -EACCES);
		assert_non_null(strstr(io.error, "resource1: Permission denied (need root)"));
	}
}

/* ---- i2c ---- */

static void add_adapter(const char *root, const char *dir, int nr, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s%s/i2c-%d", root, dir, nr);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s%s/i2c-%d/name", root, dir, nr);
	write_file(path, "%s\n", name);
}

static const char *const avail_list =
	"i2c-0 (SMBus I801 adapter at f000), i2c-1 (viafb i2c io_port idx 0x26), "
	"i2c-3 (viafb i2c io_port idx 0x31), i2c-4 (i915 gmbus dpb), i2c-10 (SMBus stub driver)";

static void make_i2c_tree(const char *root)
{
	char path[512];

	add_adapter(root, "/sys/class/i2c-dev", 0, "SMBus I801 adapter at f000");
	add_adapter(root, "/sys/class/i2c-dev", 10, "SMBus stub driver");
	add_adapter(root, "/sys/class/i2c-dev", 3, "viafb i2c io_port idx 0x31");
	add_adapter(root, "/sys/class/i2c-dev", 1, "viafb i2c io_port idx 0x26");
	/* the bus directory has the same adapters, a client, and one i2c-dev does not list */
	add_adapter(root, "/sys/bus/i2c/devices", 3, "viafb i2c io_port idx 0x31");
	add_adapter(root, "/sys/bus/i2c/devices", 4, "i915 gmbus dpb");
	snprintf(path, sizeof(path), "%s/sys/bus/i2c/devices/3-0021", root);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/sys/bus/i2c/devices/3-0021/name", root);
	write_file(path, "ov7670\n");
}

static void test_i2c_find(void **state)
{
	char root[256], path[512], want[512], avail[256];

	(void)state;
	mkroot("i2c", root);
	make_i2c_tree(root);

	assert_int_equal(via_i2c_find(root, "viafb i2c io_port idx 0x31", path, sizeof(path),
				      avail, sizeof(avail)), 3);
	snprintf(want, sizeof(want), "%s/dev/i2c-3", root);
	assert_string_equal(path, want);
	assert_string_equal(avail, avail_list);

	/* found through /sys/bus/i2c only */
	assert_int_equal(via_i2c_find(root, "i915 gmbus dpb", path, sizeof(path), NULL, 0), 4);
	/* exact match only */
	assert_int_equal(via_i2c_find(root, "viafb i2c io_port idx 0x3", path, sizeof(path),
				      avail, sizeof(avail)), -ENOENT);
	assert_int_equal(via_i2c_find(root, "ov7670", path, sizeof(path), avail, sizeof(avail)),
			 -ENOENT);
	assert_string_equal(avail, avail_list);
	/* a path buffer too small */
	assert_int_equal(via_i2c_find(root, "SMBus stub driver", path, 8, NULL, 0), -ENAMETOOLONG);
	/* a short list is cut with "..." */
	assert_int_equal(via_i2c_find(root, "x", path, sizeof(path), avail, 20), -ENOENT);
	assert_string_equal(avail, "i2c-0 (SMBus I80...");

	mkroot("i2c-empty", root);
	assert_int_equal(via_i2c_find(root, "x", path, sizeof(path), avail, sizeof(avail)), -ENOENT);
	assert_string_equal(avail, "none");
}

static void test_i2c_open_errors(void **state)
{
	char root[256], path[512], want[512];
	struct via_io io = new_io();

	(void)state;
	/* the full list does not fit in io->error: cut with "..." */
	mkroot("i2c-open", root);
	make_i2c_tree(root);
	add_adapter(root, "/sys/class/i2c-dev", 11, "i915 gmbus dpc");
	assert_int_equal(via_i2c_open(&io, "viafb i2c io_port idx 0x3f", false, root), -ENODEV);
	snprintf(want, sizeof(want), "no I2C bus named 'viafb i2c io_port idx 0x3f' (is viafb "
		 "loaded? is i2c-dev loaded?); available: %s, i2c-11 (i915 gmbus dpc)", avail_list);
	assert_int_equal(strlen(io.error), sizeof(io.error) - 1);
	assert_memory_equal(io.error, want, sizeof(io.error) - 4);
	assert_string_equal(io.error + sizeof(io.error) - 4, "...");
	assert_int_equal(io.i2c_fd, -1);

	mkroot("i2c-open2", root);
	add_adapter(root, "/sys/class/i2c-dev", 0, "SMBus I801 adapter at f000");
	add_adapter(root, "/sys/class/i2c-dev", 3, "viafb i2c io_port idx 0x31");
	assert_int_equal(via_i2c_open(&io, "viafb i2c io_port idx 0x3f", false, root), -ENODEV);
	assert_string_equal(io.error, "no I2C bus named 'viafb i2c io_port idx 0x3f' (is viafb "
			    "loaded? is i2c-dev loaded?); available: i2c-0 (SMBus I801 adapter "
			    "at f000), i2c-3 (viafb i2c io_port idx 0x31)");

	/* the adapter exists, its device node does not */
	assert_int_equal(via_i2c_open(&io, "viafb i2c io_port idx 0x31", false, root), -ENOENT);
	snprintf(want, sizeof(want), "i2c-3 (viafb i2c io_port idx 0x31): %s/dev/i2c-3 does not "
		 "exist (is i2c-dev loaded? modprobe i2c-dev)", root);
	assert_string_equal(io.error, want);

	/* a regular file stands in for the node: I2C_SLAVE fails with ENOTTY */
	snprintf(path, sizeof(path), "%s/dev", root);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/dev/i2c-3", root);
	sized_file(path, 0);
	assert_int_equal(via_i2c_open(&io, "viafb i2c io_port idx 0x31", false, root), -ENOTTY);
	snprintf(want, sizeof(want), "i2c-3 (viafb i2c io_port idx 0x31): %s/dev/i2c-3 is not an "
		 "i2c-dev device (I2C_SLAVE: Inappropriate ioctl for device)", root);
	assert_string_equal(io.error, want);
	assert_int_equal(io.i2c_fd, -1);

	/* by path: the adapter's name is looked up for the message */
	assert_int_equal(via_i2c_open(&io, "/dev/i2c-3", true, root), -ENOTTY);
	assert_string_equal(io.error, want);

	assert_int_equal(via_i2c_open(&io, "", false, root), -EINVAL);
	assert_string_equal(io.error, "no I2C bus given for the sensor");
	via_i2c_close(&io);
	assert_int_equal(io.i2c_fd, -1);
}

/* ---- sensor transfers ---- */

static int polls;
static uint8_t model_regs[256];

static void count_poll(struct via_io *io)
{
	(void)io;
	polls++;
}

static int model_read(struct via_io *io, uint8_t reg, uint8_t *val)
{
	(void)io;
	if (reg == 0xff)
		return -EIO;
	*val = model_regs[reg];
	return 0;
}

static int model_write(struct via_io *io, uint8_t reg, uint8_t val)
{
	(void)io;
	if (reg == 0xff)
		return -EIO;
	model_regs[reg] = val;
	return 0;
}

static const struct via_io_ops poll_ops = { .name = "pci", .poll = count_poll };
static const struct via_io_ops model_ops = { .name = "model", .poll = count_poll,
					     .sensor_read = model_read,
					     .sensor_write = model_write };
static const struct via_io_ops nosensor_ops = { .name = "model" };

/* A SEQPACKET socket keeps each write() a separate message, like i2c-dev transfers. */
static void test_sensor_i2c(void **state)
{
	struct via_io io = new_io();
	uint8_t buf[8], v = 0;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	io.i2c_fd = sv[0];
	io.ops = &poll_ops;
	snprintf(io.i2c_name, sizeof(io.i2c_name), "i2c-3 (viafb i2c io_port idx 0x31)");
	polls = 0;

	/* write: one transfer [reg, val], then poll */
	assert_int_equal(via_sensor_write(&io, 0x12, 0x80), 0);
	assert_int_equal(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), 2);
	assert_int_equal(buf[0], 0x12);
	assert_int_equal(buf[1], 0x80);
	assert_int_equal(polls, 1);

	/* read: a 1-byte write [reg], then a 1-byte read; no poll */
	assert_int_equal(send(sv[1], "\x76", 1, 0), 1);
	assert_int_equal(via_sensor_read(&io, OV_PID, &v), 0);
	assert_int_equal(v, 0x76);
	assert_int_equal(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), 1);
	assert_int_equal(buf[0], 0x0a);
	assert_int_equal(polls, 1);

	/* the read transfer comes back empty: EIO */
	assert_int_equal(shutdown(sv[1], SHUT_WR), 0);
	assert_int_equal(via_sensor_read(&io, 0x0a, &v), -EIO);
	assert_string_equal(io.error, "sensor at 0x21 on i2c-3 (viafb i2c io_port idx 0x31): "
			    "register 0x0a: read failed: Input/output error");

	/* the other end is gone */
	assert_int_equal(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), 1);
	close(sv[1]);
	assert_int_equal(via_sensor_write(&io, 0x11, 0x01), -EPIPE);
	assert_string_equal(io.error, "sensor at 0x21 on i2c-3 (viafb i2c io_port idx 0x31): "
			    "register 0x11: write failed: Broken pipe");
	assert_int_equal(polls, 1);

	/* SMBus byte data goes through an ioctl, which a socket does not have */
	io.smbus = true;
	assert_true(via_sensor_read(&io, 0x1c, &v) < 0);
	assert_non_null(strstr(io.error, "register 0x1c: read failed: "));
	assert_true(via_sensor_write(&io, 0x1c, 1) < 0);
	assert_non_null(strstr(io.error, "register 0x1c: write failed: "));
	close(sv[0]);
}

static void test_sensor_model(void **state)
{
	struct via_io io = new_io();
	uint8_t v = 0;

	(void)state;
	io.ops = &model_ops;
	polls = 0;
	assert_int_equal(via_sensor_write(&io, 0x13, 0xe7), 0);
	assert_int_equal(model_regs[0x13], 0xe7);
	assert_int_equal(polls, 1);
	assert_int_equal(via_sensor_read(&io, 0x13, &v), 0);
	assert_int_equal(v, 0xe7);
	assert_int_equal(via_sensor_write(&io, 0xff, 0), -EIO);
	assert_string_equal(io.error, "sensor at 0x21 on model transport: register 0xff: write "
			    "failed: Input/output error");
	assert_int_equal(polls, 1);

	io.ops = &nosensor_ops;
	assert_int_equal(via_sensor_read(&io, 0x0a, &v), -ENODEV);
	assert_string_equal(io.error, "sensor at 0x21 on model transport: register 0x0a: read "
			    "failed: No such device");
	assert_int_equal(via_sensor_write(&io, 0x0a, 0), -ENODEV);
	io.ops = NULL;
	assert_int_equal(via_sensor_read(&io, 0x0a, &v), -ENODEV);
}

static void test_clock(void **state)
{
	uint64_t t0 = via_now_ns(), t1;

	(void)state;
	via_sleep_ms(3);
	t1 = via_now_ns();
	assert_true(t1 - t0 >= 3000000u);
	assert_true(t1 - t0 < 1000000000u);
	via_sleep_ms(0);
}

/* ---- drm ---- */

#define DRM_HINT "the legacy via DRM driver is not in kernels since 6.3 (and not built in " \
	"Debian 12): set transport = pci, or transport = model to use the built-in VX855 model"

static void test_drm_not_found(void **state)
{
	char root[256], path[512];
	struct via_io io = new_io();

	(void)state;
	mkroot("drm-none", root);
	assert_int_equal(via_drm_open(&io, root, ""), -ENODEV);
	assert_string_equal(io.error, "via: no VIA DRM device found (looked for driver \"via\" on "
			    "/dev/dri/card*; there is no /dev/dri); " DRM_HINT);
	assert_true(strlen(io.error) < sizeof(io.error) - 1);

	snprintf(path, sizeof(path), "%s/dev/dri", root);
	mkdirs(path);
	assert_int_equal(via_drm_open(&io, root, ""), -ENODEV);
	assert_string_equal(io.error, "via: no VIA DRM device found (looked for driver \"via\" on "
			    "/dev/dri/card*); " DRM_HINT);

	/* something that is not a DRM device; render nodes are not looked at */
	snprintf(path, sizeof(path), "%s/dev/dri/card0", root);
	sized_file(path, 0);
	snprintf(path, sizeof(path), "%s/dev/dri/renderD128", root);
	sized_file(path, 0);
	assert_int_equal(via_drm_open(&io, root, ""), -ENODEV);
	assert_string_equal(io.error, "via: no VIA DRM device found (looked for driver \"via\" on "
			    "/dev/dri/card*); " DRM_HINT);
	assert_null(io.ops);

	assert_int_equal(via_drm_open(&io, root, "/dev/dri/card0"), -ENODEV);
	assert_non_null(strstr(io.error, "/dev/dri/card0 is not a VIA DRM device (not a DRM "
			       "device); "));
	assert_null(io.ops);
}

/* ---- setup ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "%s/vt.XXXXXX", t && t[0] && strlen(t) < 40 ? t : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pci_vx855),
		cmocka_unit_test(test_pci_vx900),
		cmocka_unit_test(test_pci_fn3_size),
		cmocka_unit_test(test_pci_not_found),
		cmocka_unit_test(test_pci_explicit),
		cmocka_unit_test(test_pci_refused),
		cmocka_unit_test(test_i2c_find),
		cmocka_unit_test(test_i2c_open_errors),
		cmocka_unit_test(test_sensor_i2c),
		cmocka_unit_test(test_sensor_model),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_drm_not_found),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
