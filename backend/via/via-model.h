/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * via-model.h - the "model" transport: a register-level model of the VX855's capture engine 0
 * and of the OV7670 sensor, in-process (facts: ../../shared/via-hardware.md sections 1 and 2).
 * It is what viacamd drives when no VIA hardware exists (CI, QEMU guests).
 *
 * READ THIS FIRST. The model only moves when it is called: ops->poll, a write to the engine's
 * registers (0x200, 0x300..0x35c), a read of INTCTRL or 0x200, or a write to its in-process
 * sensor. Each time it takes the clock and completes every frame period that has elapsed
 * since the last completed frame. Everything runs in the caller's thread; nothing sleeps.
 *
 * Engine (MMIO, 32-bit accesses at offsets 0x0000..0x1ffc; anything else is reported):
 *   - plain storage, except:
 *     INTCTRL 0x300  EAV (0), EVBI (1), FFULL (7) are write-1-to-clear status bits; ACTBUF (4:3)
 *                    is read-only: the buffer the engine writes next. The model sets EAV at the
 *                    end of each frame, never EVBI or FFULL.
 *     0x200          status bits (0-10, 12-15, 27) are write-1-to-clear; the model sets bit 12
 *                    (CAP0 active-video end) with EAV [inf in the facts].
 *   - The engine runs while CAPINTC has ENABLE and CLKEN, no misprogramming persists (below),
 *     and the sensor is present, powered and out of reset. ENABLE going 0 -> 1 resets ACTBUF
 *     to 0 and starts the frame clock: the first frame completes one frame period later.
 *   - A frame completes every period = d / 90 s, d = CLKRC & 0x3f, with d = 0 or CLKRC bit 6
 *     (external clock used directly) counting as d = 1 (90 fps). Frame k after the clock
 *     started completes at floor(k * d * 1e9 / 90) ns. The backend's rates: d 3 = 30 fps,
 *     6 = 15, 9 = 10, 18 = 5, 63 = 1.43. A change of d applies from the last completed frame.
 *   - Completing a frame: it is rendered (via_model_render(), sequence = number of frames
 *     completed before it since open) into VBUF[ACTBUF], then ACTBUF advances (mod 3 with
 *     CAPINTC.3BUFS, else mod 2) and EAV is set. So, as in the facts, the newest complete
 *     frame is in VBUF[ACTBUF - 1] (ACTBUF 0 -> the last buffer). When several periods have
 *     elapsed, all of them count and advance ACTBUF, but only the newest is rendered.
 *   - Output geometry: the sensor's window (COM7: VGA 640x480, QVGA 320x240, CIF 352x288,
 *     QCIF 176x144) scaled by AVSCALE: width = ceil(sensor width * (AVSCALE 10:0) / 2048) when
 *     bit 11 is set, height = ceil(sensor height * (AVSCALE 25:16) / 1024) when bit 26 is set
 *     (06000c00 -> 320x240, 05330a33 -> 176x144, and every size the backend programs comes
 *     out exact). The scaler is ideal: the scene is drawn at the output size directly. Line y
 *     of a buffer is at VBUF + y * stride, width * 2 bytes; the bytes up to the stride and
 *     after the last line are not touched. Not modelled: HORRANGE/VERTRANGE (stored only),
 *     coring (VSTRIDE 23:16), de-interlacing, field bits, the VBI path, DMA (0xe00: storage).
 *
 * Misprogramming (via_model_error(), counted by via_model_error_count()). The model checks
 * all conditions whenever it moves; a condition that appears (or whose message changes)
 * counts once and, if none is recorded since open/clear, becomes the error string. While
 * one persists the engine makes no frames. Checked always:
 *   "GIRQ 0x%08x: interrupt enable bits 0x%08x set, but no kernel handler acknowledges them"
 *   "INTCTRL 0x%08x: INTEN (bit 8) set, but no kernel handler acknowledges the interrupt"
 *   "INTCTRL 0x%08x: VBI interrupt enable (bit 9) set, but no kernel handler acknowledges it"
 * checked while CAPINTC.ENABLE is set:
 *   "CAPINTC 0x%08x: ENABLE without CLKEN (bit 31)"
 *   "CAPINTC 0x%08x: input type %u is not CCIR601 8-bit (bits 5:4 must be 0 for the OV7670)"
 *   "COM7 0x%02x: raw Bayer output is not modelled"            (sensor register 0x12)
 *   "COM7 0x%02x: more than one size bit set"
 *   "MAXDATA 0x%08x: the sensor sends WxH, expected 0x%08x (lines << 16 | bytes per line / 8)"
 *   "AVSCALE 0x%08x: bits outside 26:16 and 11:0 set"
 *   "AVSCALE 0x%08x: horizontal scaling enabled with factor 0"   (and "vertical")
 *   "AVSCALE 0x%08x: scaling RGB565 data (COM7 0x%02x) garbles the colours on the real engine"
 *   "VSTRIDE 0x%08x: not a multiple of 16"
 *   "VSTRIDE 0x%08x: bits outside the stride (12:4) and coring (23:16) fields set"
 *   "VSTRIDE 0x%08x: %u bytes is less than an output line (%u pixels x 2 = %u bytes)"
 *   "VBUF%u 0x%08x: bits outside 28:4 set (a 16-byte aligned VRAM offset below 512 MiB)"
 *   "VBUF%u 0x%08x: the buffer (%u lines x %u bytes) ends at 0x%llx, beyond VRAM (0x%zx bytes)"
 *   "VBUF%u 0x%08x and VBUF%u 0x%08x: the buffers (%u bytes each) overlap"
 * (VBUF1..3 as the facts number them, i.e. VIA_VBUF(0..2); only the 2 or 3 buffers in use are
 * checked). One-shot reports (no effect on frames):
 *   "MMIO read 0x%x: outside the model (0x0000..0x1ffc)" / "MMIO write 0x%x (0x%08x): ..."
 *   "MMIO read 0x%x: not a 32-bit aligned access"        / "MMIO write ..."
 *   "sensor bus: SMBus read/write of register 0x%02x failed: %s"  (use_i2c only)
 *
 * Sensor: a 256-byte register file with the OV7670's power-on values (via-model.c lists
 * them), the identity registers 0x1c, 0x1d, 0x0a, 0x0b answering conf->sensor_id (read-only).
 * Writing COM7 with bit 7 set resets every register to its power-on value (COM7 = 0: the
 * reset bit self-clears). Absent (conf->sensor_absent), or with conf->olpc_power while SR2C
 * does not have VGPIO3 (power: bit 4 value + bit 6 output enable) high and VGPIO2 (reset,
 * active low: bit 5 value + bit 7 output enable) high, reads and writes fail with -ENXIO, no
 * frames are made, and powering up starts again from the power-on values. SR registers are
 * otherwise plain storage (256 bytes, all 0 at open).
 * With conf->use_i2c the chip is the i2c-stub register file behind io->i2c_fd (the caller
 * opened it, bound to 0x21, e.g. with via_i2c_open()): at open the model writes the power-on
 * values and the identity into it over SMBus; when it moves it reads COM7 and acts on the
 * reset bit, and reads the registers it renders from (11, 12, 1e, 4f, 55, 56, 70, 71).
 * The stub always answers, so olpc_power only gates the frames there.
 */
#ifndef VIACAM_VIA_MODEL_H
#define VIACAM_VIA_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "via-io.h"

struct via_model_conf {
	size_t vram_size;	/* bytes, 8..512 MiB, a power of two; 0 = 64 MiB */
	uint8_t sensor_id[4];	/* MIDH MIDL PID VER the chip answers; all 0 = 7f a2 76 73 */
	bool sensor_absent;	/* nothing answers at 0x21: sensor accesses fail with -ENXIO */
	bool olpc_power;	/* the sensor answers only while SR2C powers it (see above) */
	bool use_i2c;		/* the chip is the i2c-stub behind io->i2c_fd */
	bool chip_running;	/* use_i2c: the chip is powered and in use (another instance
				 * streams from it): open does not write its power-on values */
	uint64_t (*clock)(void *data);	/* ns; NULL = via_now_ns() (tests inject a fake) */
	void *clock_data;
};

/*
 * Fills @io: ops ("model"), priv, vram (zeroed, vram_size bytes), vram_size, cam_offset =
 * vram_size - 0x204000, cam_size = VIA_CAM_AREA; io->i2c_fd is set to -1 unless use_i2c
 * (then it must be >= 0). @conf may be NULL (all defaults). 0, or -EINVAL / -ENOMEM / -errno
 * of the first SMBus write, with io->error saying why. ops->close frees everything (it does
 * not close io->i2c_fd).
 */
int via_model_open(struct via_io *io, const struct via_model_conf *conf);

/* The first misprogramming since open or the last clear, or NULL (also for a non-model io). */
const char *via_model_error(struct via_io *io);
/* Detections since open (not reset by via_model_clear_error()). */
unsigned long via_model_error_count(struct via_io *io);
void via_model_clear_error(struct via_io *io);
/* Frames completed since open (rendered or skipped). */
unsigned long via_model_frames(struct via_io *io);

/*
 * What the engine writes for a frame. The pixel conventions, all integer arithmetic:
 *
 * Colours are Y'CbCr, BT.601, full range (as the OV7670 sends with COM15 = c0). A pixel pair
 * (2i, 2i + 1) goes out as the sensor sends it, Y0 Cb Y1 Cr, with the Cb/Cr of the even
 * pixel. RGB565 (rgb565): each pixel is converted, u = Cb - 128, v = Cr - 128:
 *   R = Y + rdiv(359 v, 256), G = Y - rdiv(88 u + 183 v, 256), B = Y + rdiv(454 u, 256),
 * each clamped to 0..255 (rdiv rounds half away from zero), packed R>>3 << 11 | G>>2 << 5 |
 * B>>3 and sent high byte first, so a pair is H0 L0 H1 L1.
 * The engine's byte order (CAPINTC 9:8) then permutes each 4-byte group: memory byte i =
 * sent byte p[i], p = 0123 (0), 1032 (1), 0321 (2), 3012 (3). YUYV: 0 -> YUYV, 1 -> UYVY,
 * 2 -> YVYU, 3 -> VYUY. RGB565: 1 -> little-endian pixels (V4L2 RGB565, what the backend
 * wants), 0 -> big-endian (RGB565X). An odd width ends with the first 2 bytes of a group
 * whose missing pixel repeats the last one.
 *
 * test_pattern 0, the scene (W x H = width x height; even(v) = v & ~1):
 *   background  Y = 40 + 160 x / W, Cb = 96 + 64 y / H, Cr = 160 - 64 y / H
 *   three squares, drawn in this order over it, tri(t, r) = t mod 2r, mirrored to
 *   2r - (t mod 2r) above r (0 when r = 0); s = max(4, even(min(W, H) / 8)):
 *     C green   (125, 94, 39)  side max(2, even(s / 2)), bouncing inside the track
 *               [even(W/4), even(W/2)) x [even(H/4), even(H/2)): top-left = track origin +
 *               (even(tri(seq * max(2, even(W/160)), tw - side)),
 *                tri(seq * max(1, H/160), th - side)), tw x th = the track's size
 *     A orange  (151, 43, 202) side s, track x [0, W), y [even(5H/8), +s):
 *               x = even(tri(seq * max(2, even(W/80)), W - s))
 *     B blue    (142, 192, 72) side s, track x [even(3W/4), +s), y [0, H):
 *               y = tri(seq * max(1, H/60), H - s)
 *   Controls (scene only): Y' = clamp(128 + rdiv((Y - 128) contrast, 64) + brightness),
 *   C' = clamp(128 + rdiv((C - 128) saturation, 128)) for Cb and Cr, clamps to 0..255.
 *   Then hflip (x -> W-1-x) and vflip (y -> H-1-y) mirror the scene.
 *   The frame counter is an on-screen display over that, never mirrored or adjusted: the
 *   sequence mod 10^8 as 8 decimal digits (leading zeros), k = max(1, min(W/160, H/120)),
 *   a box (16, 128, 128) at (2k, 2k) of 33k x 7k pixels (clipped), digit i's 3x5 glyph
 *   at (3k + 4k i, 3k), each dot k x k, colour (235, 128, 128). Font: via-model.c.
 * test_pattern 1..3 are the sensor's own patterns: static, never mirrored, no controls, no
 * counter. Bars: bar i (0..7) covers x in [even(i W / 8), even((i + 1) W / 8)):
 *   1 "shifting 1": byte j of sensor line y (as sent, before the byte order) = 1 << ((j + y) % 8)
 *   2 8 colour bars, 100 %: white, yellow, cyan, green, magenta, red, blue, black =
 *     YCbCr (255,128,128) (226,1,149) (179,171,1) (150,44,21) (105,212,235) (76,85,255)
 *           (29,255,107) (0,128,128);
 *     RGB565 ffff ffe0 07ff 07e0 f81f f800 001f 0000 (R, G, B = 255 or 0)
 *   3 fade to grey: the bars of 2, each 8-bit component c (Y, Cb, Cr, or R, G, B before
 *     packing) of line y becomes (c (256 - t) + 128 t + 128) / 256, t = 256 y / H.
 */
struct via_model_scene {
	uint32_t width, height;		/* output pixels, >= 1 */
	bool rgb565;			/* the sensor sends RGB565 (COM7 bit 2), else YUYV */
	unsigned int byteorder;		/* CAPINTC 9:8 */
	bool hflip, vflip;		/* MVFP 0x1e bits 5 and 4 */
	int brightness;			/* -127..127: reg 0x55, bit 7 = negative, 6:0 magnitude */
	unsigned int contrast;		/* reg 0x56, 64 = x1.0 */
	unsigned int saturation;	/* 128 = x1.0: |MTX1| * 128 / (128 YUV, 179 RGB), rounded */
	unsigned int test_pattern;	/* (reg 0x70 bit 7) | (reg 0x71 bit 7) << 1 */
};

/* width x height, YUYV, byte order 0, no flips, neutral controls, no test pattern. */
void via_model_scene_init(struct via_model_scene *sc, uint32_t width, uint32_t height);

/* The scene the engine would render now (from the registers), or -ENXIO (sensor silent). */
int via_model_scene_get(struct via_io *io, struct via_model_scene *sc);

/* Frame @sequence: height lines of width * 2 bytes, line y at @dst + y * @stride. */
void via_model_render(const struct via_model_scene *sc, uint64_t sequence, uint8_t *dst,
		      uint32_t stride);

/*
 * The parts of the output that change from frame to frame (in output coordinates: the
 * counter box and the tracks of the three squares, mirrored with the scene), so a checker
 * without the sequence can skip them. Returns how many (0 for test patterns 1..3).
 */
struct via_model_rect {
	uint32_t x, y, w, h;
};
#define VIA_MODEL_MAX_RECTS 4
unsigned int via_model_dynamic_rects(const struct via_model_scene *sc,
				     struct via_model_rect rects[VIA_MODEL_MAX_RECTS]);

/*
 * Compares a captured YUYV frame (@sc->width x @sc->height, lines of width * 2 bytes) with
 * the reference render of @sc outside the dynamic rectangles (and 2 pixels around them, for
 * chroma pairs). Returns how many of those static pixels are equal; *@total says how many
 * were compared. -ENOMEM if the reference cannot be allocated.
 */
long via_model_compare(const struct via_model_scene *sc, const uint8_t *frame, size_t *total);

#endif /* VIACAM_VIA_MODEL_H */
