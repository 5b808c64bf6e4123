// SPDX-License-Identifier: GPL-2.0-only
/*
 * via-drm-none.c - the "drm" transport of a viacamd built without libdrm (meson -Ddrm=disabled,
 * or libdrm absent): the transport is still a valid config value and fails with a message
 * that says why, like a machine without the legacy VIA DRM driver.
 */
#include <errno.h>
#include <stdio.h>

#include "via-drm.h"

int via_drm_open(struct via_io *io, const char *sysroot, const char *node)
{
	(void)sysroot;
	(void)node;
	snprintf(io->error, sizeof(io->error), "via: transport drm: this viacamd was built "
		 "without libdrm; set transport = pci, or transport = model to use the built-in "
		 "VX855 model");
	return -ENOTSUP;
}

const char *via_drm_describe(const struct via_io *io)
{
	(void)io;
	return NULL;
}
