/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ov7670-regs.h - OV7670 register numbers and bits used by the VIA backend and its model
 * (facts: ../../shared/via-hardware.md section 2).
 */
#ifndef VIACAM_OV7670_REGS_H
#define VIACAM_OV7670_REGS_H

#define OV_GAIN		0x00
#define OV_VREF		0x03
#define OV_COM1		0x04	/* bits 1:0: exposure bits 1:0 */
#define OV_PID		0x0a	/* 0x76 */
#define OV_VER		0x0b	/* 0x73 */
#define OV_AECH		0x10	/* exposure bits 9:2 */
#define OV_CLKRC	0x11	/* bit 6: external clock direct; 5:0 divider */
#define OV_COM7		0x12
#define   OV_COM7_RESET	0x80
#define   OV_COM7_CIF	0x20
#define   OV_COM7_QVGA	0x10
#define   OV_COM7_QCIF	0x08
#define   OV_COM7_RGB	0x04
#define   OV_COM7_BAYER	0x01
#define OV_COM8		0x13
#define   OV_COM8_AGC	0x04
#define   OV_COM8_AWB	0x02
#define   OV_COM8_AEC	0x01
#define OV_COM10	0x15
#define OV_HSTART	0x17
#define OV_HSTOP	0x18
#define OV_VSTART	0x19
#define OV_VSTOP	0x1a
#define OV_MIDH		0x1c	/* 0x7f */
#define OV_MIDL		0x1d	/* 0xa2 */
#define OV_MVFP		0x1e
#define   OV_MVFP_MIRROR	0x20	/* horizontal flip */
#define   OV_MVFP_VFLIP	0x10
#define OV_AECHH	0x07	/* exposure bits 15:10 in 5:0 */
#define OV_HREF		0x32
#define OV_COM15	0x40
#define OV_MTX1		0x4f	/* colour matrix 0x4f..0x54, signs in 0x58 */
#define OV_MTXS		0x58
#define OV_BRIGHT	0x55	/* sign-magnitude */
#define OV_CONTRAS	0x56
#define OV_SCALING_XSC	0x70	/* bit 7: test pattern bit 0 */
#define OV_SCALING_YSC	0x71	/* bit 7: test pattern bit 1 */

#define OV_ID_MIDH	0x7f
#define OV_ID_MIDL	0xa2
#define OV_ID_PID	0x76
#define OV_ID_VER	0x73

#endif /* VIACAM_OV7670_REGS_H */
