/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * via-pci.h - the "pci" transport: the VIA IGP's BARs mapped through sysfs resource files
 * (via-pci.c).
 */
#ifndef VIACAM_VIA_PCI_H
#define VIACAM_VIA_PCI_H

#include "via-io.h"

/*
 * Finds the IGP under <@sysroot>/sys/bus/pci/devices (@sysroot "" on a real system):
 * @device "" searches for the first VX855 (1106:5122) or VX900 (1106:7122); @device
 * "0000:00:01.0" takes that device, which may also be a VX800 (1106:1122, untested).
 * Maps MMIO (BAR1) and VRAM (BAR0, VX900: BAR2) and fills io->ops ("pci"), io->priv,
 * io->vram, io->vram_size, io->cam_offset and io->cam_size; leaves the i2c fields alone.
 * 0, or -errno with io->error saying what was looked for. Needs root (CAP_SYS_ADMIN and
 * CAP_SYS_RAWIO for the resource files). Release with io->ops->close(io).
 */
int via_pci_open(struct via_io *io, const char *sysroot, const char *device);

/* "0000:00:01.0 VX855, VRAM 128 MiB (function 3 config), MMIO 16 MiB" for logs; NULL if @io is not a pci transport. */
const char *via_pci_describe(const struct via_io *io);

/*
 * Shared with via-drm.c: sets io->cam_offset/cam_size for a VRAM of @vram_len bytes the way
 * viafb reserves it (top of VRAM minus cursor and command queue, VIA_CAM_AREA bytes, page
 * aligned) and io->vram_size. Refuses (-ENOSPC, io->error "via: @what: ...") VRAM under
 * 8 MiB and areas beyond the engine's 512 MiB buffer address range.
 */
int via_set_cam_area(struct via_io *io, size_t vram_len, const char *what);

#endif /* VIACAM_VIA_PCI_H */
