/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * via-drm.h - the "drm" transport: MMIO and VRAM through the legacy VIA DRM driver's maps
 * (via-drm.c). The driver left the kernel in 6.3 and is not built in Debian 12's 6.1.
 */
#ifndef VIACAM_VIA_DRM_H
#define VIACAM_VIA_DRM_H

#include "via-io.h"

/*
 * Opens @node (e.g. "/dev/dri/card0"), or with @node "" the first <@sysroot>/dev/dri/card*
 * whose driver is "via" (@sysroot "" on a real system; @node is taken relative to it too),
 * and maps its REGISTERS and FRAME_BUFFER maps (added by the X driver with DRI). Fills
 * io->ops ("drm"), io->priv, io->vram, io->vram_size, io->cam_offset, io->cam_size.
 * 0, or -errno with io->error. Release with io->ops->close(io).
 */
int via_drm_open(struct via_io *io, const char *sysroot, const char *node);

/* "/dev/dri/card0: REGISTERS 0xfd000000 (16 MiB), FRAME_BUFFER ... " for logs; NULL if not drm. */
const char *via_drm_describe(const struct via_io *io);

#endif /* VIACAM_VIA_DRM_H */
