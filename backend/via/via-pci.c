// SPDX-License-Identifier: GPL-2.0-only
/*
 * via-pci.c - the "pci" transport: the VIA IGP's register and frame-buffer BARs, mapped
 * through the sysfs resource files (facts: ../../shared/via-hardware.md 1.1, 1.5, 4.2, 5.3).
 *
 * Which device: vendor 1106, device 5122 (VX855, the XO-1.5) or 7122 (VX900) when searching;
 * a VX800 (1122) only when named explicitly (its capture engine is the same as far as the
 * drivers tell, but nobody has tried it). MMIO is BAR1 on all of them; VRAM is BAR0, on the
 * VX900 BAR2.
 *
 * How much VRAM: viafb takes the size from the chipset's "function 3" device (VX855: 1106:3409,
 * VX900: 1106:3410), config dword A0 bits 14:12, and reserves the camera area below the top of
 * that. We read the same register from that device's sysfs config file when it is there and
 * readable (bytes beyond 64 need root), and use the smaller of it and the BAR size; otherwise
 * the BAR size. viafb halves its mapping when ioremap fails; its camera area then sits lower
 * than ours — nothing to detect from here, and not expected on the 64 MiB+ machines in use.
 *
 * Access: resourceN files opened O_RDWR|O_SYNC and mapped MAP_SHARED (uncached); registers
 * are 32-bit volatile accesses, the sequencer registers (SR) 8-bit accesses through the VGA
 * mirror in MMIO (index 0x83C4, data 0x83C5) — no port I/O needed. The SR index/data pair
 * is not atomic against viafb (its I2C/GPIO code uses it too): see the facts, 5.5.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "via-pci.h"

#define VIA_VENDOR	0x1106
#define MMIO_MIN	0x9000		/* through the VGA mirror's CR pair at 0x83D4/5 */
#define VRAM_MIN	(8u << 20)
#define VBUF_LIMIT	0x20000000u	/* VBUFn hold offsets below 512 MiB */
#define PAGE		4096u

struct chip {
	uint16_t device;
	const char *name;
	int vram_bar;
	uint16_t fn3;		/* the device holding the VRAM size, 0 = unknown */
	bool search;		/* found by the search, not only when named */
};

static const struct chip chips[] = {
	{ 0x5122, "VX855", 0, 0x3409, true },
	{ 0x7122, "VX900", 2, 0x3410, true },
	{ 0x1122, "VX800", 0, 0, false },
};

struct pci_priv {
	volatile uint8_t *mmio;
	size_t mmio_len;
	void *vram;
	size_t vram_len;	/* mapped */
	char desc[160];
};

static int fail(struct via_io *io, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct via_io *io, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(io->error, sizeof(io->error), fmt, ap);
	va_end(ap);
	return -e;
}

int via_set_cam_area(struct via_io *io, size_t vram_len, const char *what)
{
	size_t off;

	if (vram_len < VRAM_MIN)
		return fail(io, ENOSPC, "via: %s: VRAM is only %zu KiB; the camera area needs at "
			    "least 8 MiB", what, vram_len >> 10);
	off = (vram_len - VIA_CAM_TOP_RESERVE - VIA_CAM_AREA) & ~(size_t)(PAGE - 1);
	if (off + VIA_CAM_AREA > VBUF_LIMIT)
		return fail(io, ENOSPC, "via: %s: the camera area at 0x%zx is beyond the capture "
			    "engine's 512 MiB buffer range", what, off);
	io->vram_size = vram_len;
	io->cam_offset = (uint32_t)off;
	io->cam_size = VIA_CAM_AREA;
	return 0;
}

/* ---- register access ---- */

static struct pci_priv *priv_of(struct via_io *io)
{
	return io->priv;
}

static void pci_close(struct via_io *io)
{
	struct pci_priv *p = priv_of(io);

	if (p) {
		if (p->mmio)
			munmap((void *)p->mmio, p->mmio_len);
		if (p->vram)
			munmap(p->vram, p->vram_len);
		free(p);
	}
	via_io_forget_maps(io);
}

static const struct via_io_ops pci_ops = {
	.name = "pci",
	.rd32 = via_mmio_rd32,
	.wr32 = via_mmio_wr32,
	.sr_read = via_mmio_sr_read,
	.sr_write = via_mmio_sr_write,
	.poll = NULL,
	.close = pci_close,
};

const char *via_pci_describe(const struct via_io *io)
{
	return io->ops == &pci_ops && io->priv ? ((const struct pci_priv *)io->priv)->desc : NULL;
}

/* ---- sysfs ---- */

/* A hex number from the first line of <dir>/<name>; -1 if unreadable. */
static long read_hex(const char *dir, const char *name)
{
	char path[PATH_MAX], buf[32];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		char *end;

		errno = 0;
		v = strtol(buf, &end, 16);
		if (errno || end == buf || v < 0)
			v = -1;
	}
	fclose(f);
	return v;
}

static const struct chip *chip_of(long vendor, long device)
{
	if (vendor != VIA_VENDOR)
		return NULL;
	for (size_t i = 0; i < sizeof(chips) / sizeof(chips[0]); i++)
		if (chips[i].device == device)
			return &chips[i];
	return NULL;
}

static int is_entry(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/*
 * The size of BAR @bar from <dir>/resource ("start end flags" per line, hex); 0 if the
 * BAR is unused, -errno if the file cannot be read.
 */
static int64_t bar_size(const char *dir, int bar)
{
	char path[PATH_MAX], line[128];
	int64_t size = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/resource", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (int i = 0; fgets(line, sizeof(line), f); i++) {
		unsigned long long start, end;

		if (i < bar)
			continue;
		if (sscanf(line, "%llx %llx", &start, &end) == 2 && end > start)
			size = (int64_t)(end - start + 1);
		break;
	}
	fclose(f);
	return size;
}

/*
 * The VRAM size the chipset is configured for, from function 3's config dword A0, bits
 * 14:12 (as viafb reads it); 0 if that device or its config bytes are not available.
 */
static size_t fn3_vram(const char *devdir, const struct chip *c)
{
	struct dirent **de;
	size_t size = 0;
	int n;

	if (!c->fn3)
		return 0;
	n = scandir(devdir, &de, is_entry, alphasort);
	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		char dir[PATH_MAX], path[PATH_MAX];
		unsigned char cfg[4];
		int fd;

		if (size || snprintf(dir, sizeof(dir), "%s/%s", devdir, de[i]->d_name) >=
		    (int)sizeof(dir))
			continue;
		if (read_hex(dir, "vendor") != VIA_VENDOR || read_hex(dir, "device") != c->fn3)
			continue;
		if (snprintf(path, sizeof(path), "%s/config", dir) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (pread(fd, cfg, sizeof(cfg), 0xa0) == (ssize_t)sizeof(cfg)) {
			unsigned int code = (cfg[1] >> 4) & 7;	/* dword bits 14:12 */

			if (code >= 1 && code <= 6)
				size = (size_t)4 << (20 + code);	/* 1 = 8 MiB ... 6 = 256 MiB */
			else if (code == 7 && c->device == 0x5122)
				size = (size_t)512 << 20;
			else
				size = (size_t)32 << 20;
		}
		close(fd);
	}
	for (int i = 0; i < n; i++)
		free(de[i]);
	free(de);
	return size;
}

/* Maps <dir>/resource<bar> (@len bytes); 0 or -errno with io->error set. */
static int map_bar(struct via_io *io, const char *dir, int bar, size_t len, void **ret)
{
	char path[PATH_MAX];
	struct stat st;
	void *p;
	int fd, e;

	snprintf(path, sizeof(path), "%s/resource%d", dir, bar);
	fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return fail(io, e, "via: cannot open %s: %s%s", path, strerror(e),
			    e == EACCES || e == EPERM ? " (need root)" : "");
	}
	if (fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size < len) {
		close(fd);
		return fail(io, EINVAL, "via: %s is only %jd bytes, BAR%d is %zu", path,
			    (intmax_t)st.st_size, bar, len);
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	e = errno;
	close(fd);
	if (p == MAP_FAILED)
		return fail(io, e, "via: cannot map %s: %s%s", path, strerror(e),
			    e == EACCES || e == EPERM ? " (need root)" : "");
	*ret = p;
	return 0;
}

/* Finds the device; writes its directory to @dir. 0 or -errno with io->error set. */
static int find_device(struct via_io *io, const char *devdir, const char *device,
		       char *dir, size_t dirlen, const struct chip **ret)
{
	struct dirent **de;
	int n, r = -ENODEV;

	if (device && device[0]) {
		struct stat st;
		long ven, dev;

		if (strchr(device, '/') || snprintf(dir, dirlen, "%s/%s", devdir, device) >=
		    (int)dirlen || stat(dir, &st) < 0)
			return fail(io, ENODEV, "via: no PCI device '%s' under %s", device, devdir);
		ven = read_hex(dir, "vendor");
		dev = read_hex(dir, "device");
		*ret = chip_of(ven, dev);
		if (!*ret)
			return fail(io, ENODEV, "via: PCI device %s is %04lx:%04lx, not a VIA "
				    "VX855/VX900 (1106:5122/7122) or VX800 (1106:1122)",
				    device, ven & 0xffff, dev & 0xffff);
		return 0;
	}

	n = scandir(devdir, &de, is_entry, alphasort);
	for (int i = 0; i < n; i++) {
		const struct chip *c;

		if (r == 0 || snprintf(dir, dirlen, "%s/%s", devdir, de[i]->d_name) >= (int)dirlen)
			continue;
		c = chip_of(read_hex(dir, "vendor"), read_hex(dir, "device"));
		if (c && c->search) {
			*ret = c;
			r = 0;
		}
	}
	for (int i = 0; i < n; i++)
		free(de[i]);
	if (n >= 0)
		free(de);
	if (r)
		fail(io, ENODEV, "via: no VIA VX855/VX900 found (looked for PCI 1106:5122/7122 "
		     "under %s); set transport = model to use the built-in VX855 model", devdir);
	return r;
}

int via_pci_open(struct via_io *io, const char *sysroot, const char *device)
{
	char devdir[PATH_MAX], dir[PATH_MAX], what[96];
	const struct chip *c = NULL;
	struct pci_priv *p;
	const char *bdf;
	int64_t mmio_len, bar_len;
	size_t vram_len, cfg_len;
	void *m;
	int r;

	snprintf(devdir, sizeof(devdir), "%s/sys/bus/pci/devices", sysroot ? sysroot : "");
	r = find_device(io, devdir, device, dir, sizeof(dir), &c);
	if (r)
		return r;
	bdf = strrchr(dir, '/') + 1;

	mmio_len = bar_size(dir, 1);
	bar_len = bar_size(dir, c->vram_bar);
	if (mmio_len < 0 || bar_len < 0)
		return fail(io, (int)-(mmio_len < 0 ? mmio_len : bar_len),
			    "via: %s (%s): cannot read %s/resource: %s", bdf, c->name, dir,
			    strerror((int)-(mmio_len < 0 ? mmio_len : bar_len)));
	if (mmio_len < MMIO_MIN)
		return fail(io, ENODEV, "via: %s (%s): MMIO BAR1 is %" PRId64 " bytes, expected at "
			    "least 0x%x", bdf, c->name, mmio_len, MMIO_MIN);
	if ((uint64_t)bar_len > SIZE_MAX / 2)
		bar_len = SIZE_MAX / 2;
	vram_len = (size_t)bar_len;
	cfg_len = fn3_vram(devdir, c);
	if (cfg_len && cfg_len < vram_len)
		vram_len = cfg_len;

	snprintf(what, sizeof(what), "%s (%s) BAR%d", bdf, c->name, c->vram_bar);
	r = via_set_cam_area(io, vram_len, what);
	if (r)
		return r;

	p = calloc(1, sizeof(*p));
	if (!p) {
		r = fail(io, ENOMEM, "via: out of memory");
		goto undo;
	}
	r = map_bar(io, dir, 1, (size_t)mmio_len, &m);
	if (r) {
		free(p);
		goto undo;
	}
	p->mmio = m;
	p->mmio_len = (size_t)mmio_len;
	r = map_bar(io, dir, c->vram_bar, vram_len, &p->vram);
	if (r) {
		munmap(m, p->mmio_len);
		free(p);
		goto undo;
	}
	p->vram_len = vram_len;
	snprintf(p->desc, sizeof(p->desc), "%s %s, VRAM %zu MiB (%s), MMIO %zu KiB", bdf, c->name,
		 vram_len >> 20, cfg_len && cfg_len <= (size_t)bar_len ? "function 3 config" :
		 "BAR size", p->mmio_len >> 10);

	io->ops = &pci_ops;
	io->priv = p;
	io->mmio = p->mmio;
	io->mmio_len = (size_t)p->mmio_len;
	io->vram = p->vram;
	return 0;

undo:
	io->vram_size = 0;
	io->cam_offset = 0;
	io->cam_size = 0;
	return r;
}
