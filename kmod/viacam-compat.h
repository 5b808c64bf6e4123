/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * viacam-compat.h - viacam bridge: the kernel API differences between the
 * kernels it builds on (6.1 to 7.x), all in one place. Each entry says which
 * kernel changed what; the rest of the module uses only these names. Kbuild
 * tells which side a kernel is on from its headers (VIACAM_* defines), not
 * from its version: distributions backport such changes.
 */
#ifndef VIACAM_COMPAT_H
#define VIACAM_COMPAT_H

#include <media/videobuf2-core.h>

/*
 * Buffers allocated on a queue: q->num_buffers until 6.7; 6.8 replaced it
 * with a bitmap and vb2_get_num_buffers() (VIACAM_VB2_NUM_BUFFERS_FN).
 */
static inline unsigned int viacam_q_num_buffers(struct vb2_queue *q)
{
#ifdef VIACAM_VB2_NUM_BUFFERS_FN
	return vb2_get_num_buffers(q);
#else
	return q->num_buffers;
#endif
}

/*
 * A blocking DQBUF must not hold q->lock while it sleeps. Until 6.15 the
 * driver said so with wait_prepare/wait_finish (vb2_ops_wait_prepare and
 * _finish drop and retake q->lock); since then vb2 does it itself whenever
 * q->lock is set, and the callbacks are gone. Kbuild defines
 * VIACAM_VB2_WAIT_OPS where struct vb2_ops still has them.
 */
#ifdef VIACAM_VB2_WAIT_OPS
#define VIACAM_VB2_WAIT_CALLBACKS			\
	.wait_prepare		= vb2_ops_wait_prepare,	\
	.wait_finish		= vb2_ops_wait_finish,
#else
#define VIACAM_VB2_WAIT_CALLBACKS
#endif

/* Symbol namespaces are strings since 6.13 (VIACAM_NS_IDENT: before). */
#ifdef VIACAM_NS_IDENT
#define VIACAM_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS(DMA_BUF)
#else
#define VIACAM_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS("DMA_BUF")
#endif

#endif /* VIACAM_COMPAT_H */
