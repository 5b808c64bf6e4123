// SPDX-License-Identifier: GPL-2.0-only
/*
 * via-drm.c - the "drm" transport: MMIO and VRAM through the legacy VIA DRM driver
 * (facts: ../../shared/via-hardware.md 3.1, 3.4).
 *
 * The driver ("via", CONFIG_DRM_VIA) creates no maps itself: the X server's VIA driver adds a
 * REGISTERS map (type 1, = MMIO BAR1) and a FRAME_BUFFER map (type 0, = the VRAM BAR) when it
 * runs with DRI. We list the maps with drmGetMap() and mmap both through the DRM fd with
 * drmMap(). That needs an authenticated fd (root fds are, on legacy DRM) and, for these two
 * map types, CAP_SYS_ADMIN when they are marked restricted.
 * The camera area is placed as viafb does, below the top of the FRAME_BUFFER map
 * (size - 0x204000) — [unsure] whether the X driver's map always covers all of VRAM.
 * The sequencer registers go through the VGA mirror in MMIO (0x83C4/0x83C5) as in via-pci.c.
 *
 * Messages name /dev/dri as it is on the real system even when @sysroot moves the search
 * (tests): io->error has room for the full hint only that way.
 *
 * The driver was removed in Linux 6.3 and is not built in Debian 12's 6.1 kernels, so this
 * mostly ends in the "not found" message; Debian's via_drm.h does not compile as shipped
 * and is not needed here (only the core libdrm calls are).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "via-drm.h"
#include "via-pci.h"

#define MMIO_MIN	0x9000
#define MAX_MAPS	256	/* drmGetMap indexes tried before giving up */

static const char hint[] =
	"the legacy via DRM driver is not in kernels since 6.3 (and not built in Debian 12): "
	"set transport = pci, or transport = model to use the built-in VX855 model";

struct drm_priv {
	int fd;
	volatile uint8_t *mmio;
	drmSize mmio_len;
	void *fb;
	drmSize fb_len;
	char desc[200];
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

/* ---- register access ---- */

static void drm_release(struct drm_priv *p)
{
	if (p->mmio)
		drmUnmap((drmAddress)p->mmio, p->mmio_len);
	if (p->fb)
		drmUnmap(p->fb, p->fb_len);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

static void drm_close(struct via_io *io)
{
	if (io->priv)
		drm_release(io->priv);
	via_io_forget_maps(io);
}

static const struct via_io_ops drm_ops = {
	.name = "drm",
	.rd32 = via_mmio_rd32,
	.wr32 = via_mmio_wr32,
	.sr_read = via_mmio_sr_read,
	.sr_write = via_mmio_sr_write,
	.poll = NULL,
	.close = drm_close,
};

const char *via_drm_describe(const struct via_io *io)
{
	return io->ops == &drm_ops && io->priv ? ((const struct drm_priv *)io->priv)->desc : NULL;
}

/* ---- finding and mapping ---- */

/* drmMap returns -errno (older libdrm: -1 with errno set). */
static int map_err(int r)
{
	return r < -1 ? -r : (errno ? errno : EIO);
}

static int map_one(struct via_io *io, int fd, const char *path, const char *kind,
		   drm_handle_t handle, drmSize size, void **ret)
{
	drmAddress a = NULL;
	int r, e;

	errno = 0;
	r = drmMap(fd, handle, size, &a);
	if (r == 0) {
		*ret = a;
		return 0;
	}
	e = map_err(r);
	if (e == EACCES)
		return fail(io, e, "via: %s: cannot map the %s map: %s (not authenticated: run as "
			    "root)", path, kind, strerror(e));
	return fail(io, e, "via: %s: cannot map the %s map: %s%s", path, kind, strerror(e),
		    e == EPERM ? " (need root)" : "");
}

/* @fd is a "via" DRM device: find and map its maps. Takes @fd (closed on failure). */
static int open_maps(struct via_io *io, int fd, const char *path)
{
	drm_handle_t reg_off = 0, reg_handle = 0, fb_off = 0, fb_handle = 0;
	drmSize reg_size = 0, fb_size = 0;
	bool have_reg = false, have_fb = false;
	struct drm_priv *p;
	char what[PATH_MAX + 32];
	void *m = NULL;
	int r;

	for (int idx = 0; idx < MAX_MAPS; idx++) {
		drm_handle_t off, handle;
		drmSize size;
		drmMapType type;
		drmMapFlags flags;
		int mtrr;

		if (drmGetMap(fd, idx, &off, &size, &type, &flags, &handle, &mtrr))
			break;
		if (type == DRM_REGISTERS && !have_reg) {
			have_reg = true;
			reg_off = off;
			reg_size = size;
			reg_handle = handle;
		} else if (type == DRM_FRAME_BUFFER && !have_fb) {
			have_fb = true;
			fb_off = off;
			fb_size = size;
			fb_handle = handle;
		}
	}
	if (!have_reg || !have_fb) {
		close(fd);
		return fail(io, ENODEV, "via: %s (driver \"via\") has no %s map; the X server's VIA "
			    "driver adds it when it runs with DRI. Set transport = pci instead", path,
			    !have_reg ? "REGISTERS" : "FRAME_BUFFER");
	}
	if (reg_size < MMIO_MIN) {
		close(fd);
		return fail(io, ENODEV, "via: %s: the REGISTERS map is %u bytes, expected at least "
			    "0x%x", path, (unsigned int)reg_size, MMIO_MIN);
	}
	snprintf(what, sizeof(what), "%s FRAME_BUFFER map", path);
	r = via_set_cam_area(io, fb_size, what);
	if (r) {
		close(fd);
		return r;
	}

	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return fail(io, ENOMEM, "via: out of memory");
	}
	p->fd = fd;
	r = map_one(io, fd, path, "REGISTERS", reg_handle, reg_size, &m);
	if (!r) {
		p->mmio = m;
		p->mmio_len = reg_size;
		r = map_one(io, fd, path, "FRAME_BUFFER", fb_handle, fb_size, &p->fb);
	}
	if (r) {
		drm_release(p);
		io->vram_size = 0;
		io->cam_offset = 0;
		io->cam_size = 0;
		return r;
	}
	p->fb_len = fb_size;
	snprintf(p->desc, sizeof(p->desc), "%s: REGISTERS at 0x%llx (%u KiB), FRAME_BUFFER at "
		 "0x%llx (%u MiB)", path, (unsigned long long)reg_off, (unsigned int)reg_size >> 10,
		 (unsigned long long)fb_off, (unsigned int)fb_size >> 20);

	io->ops = &drm_ops;
	io->priv = p;
	io->mmio = p->mmio;
	io->mmio_len = (size_t)p->mmio_len;
	io->vram = p->fb;
	return 0;
}

/*
 * Opens @path and checks the driver name. Returns the fd of a "via" device, -1 otherwise
 * with a note about what it is in @note.
 */
static int probe_node(const char *path, char *note, size_t notelen)
{
	drmVersionPtr v;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		snprintf(note, notelen, "%s", strerror(errno));
		return -1;
	}
	v = drmGetVersion(fd);
	if (!v) {
		snprintf(note, notelen, "not a DRM device");
		close(fd);
		return -1;
	}
	if (!v->name || strcmp(v->name, "via")) {
		snprintf(note, notelen, "driver \"%s\"", v->name ? v->name : "?");
		drmFreeVersion(v);
		close(fd);
		return -1;
	}
	drmFreeVersion(v);
	return fd;
}

static int is_card(const struct dirent *de)
{
	const char *s = de->d_name;

	if (strncmp(s, "card", 4) || !s[4])
		return 0;
	for (s += 4; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int via_drm_open(struct via_io *io, const char *sysroot, const char *node)
{
	char dir[PATH_MAX], path[PATH_MAX], note[64];
	struct dirent **de;
	int n, fd = -1;

	if (!sysroot)
		sysroot = "";
	if (node && node[0]) {
		if (snprintf(path, sizeof(path), "%s%s", sysroot, node) >= (int)sizeof(path))
			return fail(io, ENAMETOOLONG, "via: DRM node path too long: '%s'", node);
		fd = probe_node(path, note, sizeof(note));
		if (fd < 0)
			return fail(io, ENODEV, "via: %s is not a VIA DRM device (%s); %s", path,
				    note, hint);
		return open_maps(io, fd, path);
	}

	snprintf(dir, sizeof(dir), "%s/dev/dri", sysroot);
	n = scandir(dir, &de, is_card, versionsort);
	if (n < 0) {
		int e = errno;

		if (e == ENOENT)
			return fail(io, ENODEV, "via: no VIA DRM device found (looked for driver "
				    "\"via\" on /dev/dri/card*; there is no /dev/dri); %s", hint);
		return fail(io, ENODEV, "via: no VIA DRM device found (looked for driver \"via\" "
			    "on /dev/dri/card*: %s); %s", strerror(e), hint);
	}
	/* (what the other cards are would not fit in io->error next to the hint) */
	for (int i = 0; i < n; i++) {
		if (fd < 0 && snprintf(path, sizeof(path), "%s/%s", dir, de[i]->d_name) <
		    (int)sizeof(path))
			fd = probe_node(path, note, sizeof(note));
		free(de[i]);
	}
	free(de);
	if (fd < 0)
		return fail(io, ENODEV, "via: no VIA DRM device found (looked for driver \"via\" on "
			    "/dev/dri/card*); %s", hint);
	return open_maps(io, fd, path);
}
