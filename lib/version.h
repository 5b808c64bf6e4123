/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * version.h - the version of viacam's user-space programs (viacamd, viacamctl). The Makefile
 * reads it too (make dist, dkms.conf), so this line is the one place it is written.
 */
#ifndef VIACAM_VERSION_H
#define VIACAM_VERSION_H

#define VIACAM_VERSION "0.3.0"

#endif
