// SPDX-License-Identifier: GPL-2.0-only
/*
 * be-via.c - the "via" backend: the VX855/VX900 capture engine and the OV7670 sensor of the
 * OLPC XO-1.5, driven from user space. The logic (via-engine.c, ov7670.c) reaches the chip
 * only through struct via_io; the transport is chosen in the config:
 *
 *   transport = model | pci | drm     (default model: the built-in VX855 + OV7670 model)
 *   pci_device = 0000:00:01.0         (pci: default: the first VIA VX855/VX900 found)
 *   drm_node = /dev/dri/card0         (drm: default: the first card whose driver is "via")
 *   sensor_bus = NAME or /dev/i2c-N   (default for pci/drm: "viafb i2c io_port idx 0x31";
 *                                      model: none = the model's own sensor; a bus = the model
 *                                      acts as the chip on it, e.g. i2c-stub)
 *   sensor_smbus = no                 (yes: SMBus byte transfers instead of write-then-read)
 *   olpc_power = no                   (yes: XO-1.5 sensor power/reset through SR2C VGPIO2/3)
 *   model_vram_mb = 64                (model: VRAM size, 8..512, a power of two)
 *   model_sensor_id = 7f a2 76 73     (model: what the sensor answers to MIDH MIDL PID VER)
 *
 * create() opens the transport and checks the sensor (powered only for that moment); the
 * engine and sensor run only between start() and stop().
 *
 * One sensor, several instances: a reload makes a new instance while the old one streams,
 * and `viacamd --check` is another process. The sensor's check resets it (COM7), which would
 * undo a running stream's settings. So start() takes an exclusive flock on
 * VIA_LOCK_DIR/via-i2c-MAJ-MIN.lock (the sensor bus's device number) until stop(), and
 * create() skips the sensor check when that lock is held (the sensor is then known to be
 * there). The model without a bus has no shared chip and no lock. Without the directory (no
 * viacamd runs: its RuntimeDirectory) nothing can be streaming, and nothing is locked. Frames are found by polling the
 * engine's status (INTCTRL.EAV) in produce() and copied out of VRAM by the CPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "backend.h"
#include "ov7670.h"
#include "via-drm.h"
#include "via-engine.h"
#include "via-io.h"
#include "via-model.h"
#include "via-pci.h"

enum via_transport { T_MODEL, T_PCI, T_DRM };

#ifndef VIA_LOCK_DIR
#define VIA_LOCK_DIR "/run/viacamd"	/* viacamd.service's RuntimeDirectory */
#endif

struct via_backend {
	struct via_io io;
	bool io_open;
	enum via_transport transport;
	bool olpc_power;
	struct ov7670_state st;
	struct via_engine eng;
	bool started;
	bool model_error_logged;
	int lock_fd;		/* the sensor's lock file while started (else -1) */
	uint32_t sizes[VC_MAX_MODES][2];
	size_t nsizes;
};

static const char *const via_keys[] = {
	"transport", "pci_device", "drm_node", "sensor_bus", "sensor_smbus", "olpc_power",
	"model_vram_mb", "model_sensor_id", NULL
};

static const uint32_t default_sizes[][2] = { { 640, 480 }, { 352, 288 }, { 320, 240 },
					      { 176, 144 } };
static const unsigned int rates[] = { 30, 15, 10, 5, 1 };

/* XO-1.5 sensor power (VGPIO3, SR2C shift 0) and reset (VGPIO2, shift 1, active low). */
static void sensor_power(struct via_io *io, bool on)
{
	uint8_t v = io->ops->sr_read(io, 0x2c);

	v |= 0x02 | 0x40 | 0x80;	/* port enable, both outputs enabled */
	if (!on) {
		io->ops->sr_write(io, 0x2c, (uint8_t)(v & ~0x30));
		return;
	}
	io->ops->sr_write(io, 0x2c, (uint8_t)((v | 0x10) & ~0x20));	/* power 1, reset 0 */
	via_sleep_ms(20);
	io->ops->sr_write(io, 0x2c, (uint8_t)(v | 0x10 | 0x20));	/* out of reset */
	via_sleep_ms(20);
}

/* Capture port enable (any system) and the OLPC-specific SR78 bit. */
static void port_enable(struct via_io *io)
{
	io->ops->sr_write(io, 0x78, (uint8_t)(io->ops->sr_read(io, 0x78) & ~0x80));
	io->ops->sr_write(io, 0x1e, (uint8_t)(io->ops->sr_read(io, 0x1e) | 0xc0));
}

/*
 * The sensor's lock file, opened (created), or -1: no shared sensor (the model's own), or no
 * lock directory.
 */
static int open_lock(const struct via_backend *b)
{
	struct stat st;
	char path[128];

	if (b->io.i2c_fd < 0 || fstat(b->io.i2c_fd, &st) < 0)
		return -1;
	snprintf(path, sizeof(path), VIA_LOCK_DIR "/via-i2c-%u-%u.lock", major(st.st_rdev),
		 minor(st.st_rdev));
	return open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/* Whether an instance (of any process) streams from this sensor now. */
static bool sensor_busy(const struct via_backend *b)
{
	int fd = open_lock(b);
	bool busy;

	if (fd < 0)
		return false;
	busy = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

static int open_transport(struct via_backend *b, const struct vc_backend_conf *conf,
			  struct vc_error *err)
{
	const struct vc_kv *t = vc_conf_key(conf, "transport");
	const struct vc_kv *bus = vc_conf_key(conf, "sensor_bus");
	const struct vc_kv *kv;
	bool smbus = false;
	int r, line = t ? t->line : 0;

	b->transport = T_MODEL;
	if (t && !strcmp(t->value, "pci"))
		b->transport = T_PCI;
	else if (t && !strcmp(t->value, "drm"))
		b->transport = T_DRM;
	else if (t && strcmp(t->value, "model"))
		return vc_err(err, t->line, -EINVAL, "unknown transport '%s' (model, pci or drm)",
			      t->value);
	r = vc_conf_bool(conf, "sensor_smbus", &smbus, err);
	if (r >= 0)
		r = vc_conf_bool(conf, "olpc_power", &b->olpc_power, err);
	if (r < 0)
		return r;
	memset(&b->io, 0, sizeof(b->io));
	b->io.i2c_fd = -1;

	if (b->transport == T_MODEL) {
		struct via_model_conf mc = { .vram_size = 64u << 20,
					     .sensor_id = { 0x7f, 0xa2, 0x76, 0x73 } };
		unsigned int id[4];
		char tail;

		kv = vc_conf_key(conf, "model_vram_mb");
		if (kv) {
			/* Digits only: strtoul takes a sign and wraps ("-18446744073709551104" = 512). */
			size_t len = strlen(kv->value);
			unsigned long mb = len && len <= 3 &&
					   strspn(kv->value, "0123456789") == len ?
					   strtoul(kv->value, NULL, 10) : 0;

			if (mb < 8 || mb > 512 || (mb & (mb - 1)))
				return vc_err(err, kv->line, -EINVAL,
					      "bad model_vram_mb '%s' (8..512, a power of two)",
					      kv->value);
			mc.vram_size = mb << 20;
		}
		kv = vc_conf_key(conf, "model_sensor_id");
		if (kv) {
			if (sscanf(kv->value, "%x %x %x %x%c", &id[0], &id[1], &id[2], &id[3],
				   &tail) != 4 || (id[0] | id[1] | id[2] | id[3]) > 0xff)
				return vc_err(err, kv->line, -EINVAL,
					      "bad model_sensor_id '%s' (four hex bytes: 7f a2 76 73)",
					      kv->value);
			for (int i = 0; i < 4; i++)
				mc.sensor_id[i] = (uint8_t)id[i];
		}
		mc.use_i2c = bus != NULL;
		mc.olpc_power = b->olpc_power;
		if (bus) {
			r = via_i2c_open(&b->io, bus->value, smbus, "");
			if (r < 0)
				return vc_err(err, bus->line, r, "%s", b->io.error);
			/* The model is the chip: powering it on again would reset a running one. */
			mc.chip_running = sensor_busy(b);
		}
		r = via_model_open(&b->io, &mc);
		if (r < 0) {
			via_i2c_close(&b->io);
			return vc_err(err, line, r, "%s", b->io.error);
		}
	} else {
		kv = vc_conf_key(conf, b->transport == T_PCI ? "pci_device" : "drm_node");
		r = b->transport == T_PCI ? via_pci_open(&b->io, "", kv ? kv->value : "") :
					    via_drm_open(&b->io, "", kv ? kv->value : "");
		if (r < 0)
			return vc_err(err, kv ? kv->line : line, r, "%s", b->io.error);
		r = via_i2c_open(&b->io, bus ? bus->value : "viafb i2c io_port idx 0x31", smbus,
				 "");
		if (r < 0) {
			b->io.ops->close(&b->io);
			return vc_err(err, bus ? bus->line : line, r, "%s", b->io.error);
		}
	}
	b->io_open = true;
	return 0;
}

static void close_transport(struct via_backend *b)
{
	if (!b->io_open)
		return;
	via_i2c_close(&b->io);
	b->io.ops->close(&b->io);
	b->io_open = false;
}

static int via_create(const struct vc_backend_conf *conf, void **ret, struct vc_error *err)
{
	struct via_backend *b = calloc(1, sizeof(*b));
	char msg[256];
	int r;

	if (!b)
		return -ENOMEM;
	ov7670_state_init(&b->st);
	for (size_t i = 0; i < conf->nsizes; i++) {
		uint32_t w = conf->sizes[i][0], h = conf->sizes[i][1];

		if (w < VIA_MIN_WIDTH || w > VIA_MAX_WIDTH || h < VIA_MIN_HEIGHT ||
		    h > VIA_MAX_HEIGHT) {
			free(b);
			return vc_err(err, conf->sizes_line, -EINVAL,
				      "size %ux%u is outside what the VIA engine makes (%ux%u to %ux%u)",
				      w, h, VIA_MIN_WIDTH, VIA_MIN_HEIGHT, VIA_MAX_WIDTH,
				      VIA_MAX_HEIGHT);
		}
		b->sizes[b->nsizes][0] = w;
		b->sizes[b->nsizes][1] = h;
		b->nsizes++;
	}
	if (!b->nsizes) {
		memcpy(b->sizes, default_sizes, sizeof(default_sizes));
		b->nsizes = sizeof(default_sizes) / sizeof(default_sizes[0]);
	}
	r = open_transport(b, conf, err);
	if (r < 0) {
		free(b);
		return r;
	}
	b->lock_fd = -1;
	/* A sensor another instance streams from is there, and its check would reset it. */
	if (sensor_busy(b)) {
		*ret = b;
		return 0;
	}
	/* Is the sensor there? (powered just for the check, as the kernel driver does) */
	port_enable(&b->io);
	if (b->olpc_power)
		sensor_power(&b->io, true);
	r = ov7670_probe(&b->io, msg, sizeof(msg));
	if (b->olpc_power)
		sensor_power(&b->io, false);
	if (r < 0) {
		const struct vc_kv *bus = vc_conf_key(conf, "sensor_bus");

		close_transport(b);
		free(b);
		return vc_err(err, bus ? bus->line : 0, r, "%s", msg);
	}
	*ret = b;
	return 0;
}

static int via_describe(void *priv, struct vc_modes *modes)
{
	struct via_backend *b = priv;

	for (size_t i = 0; i < b->nsizes; i++) {
		for (size_t k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
			struct vc_mode m = { V4L2_PIX_FMT_YUYV, b->sizes[i][0], b->sizes[i][1], 1,
					     rates[k] };

			if (vc_modes_add(modes, &m) < 0)
				return 0;
		}
	}
	for (size_t i = 0; i < b->nsizes; i++) {
		if (b->sizes[i][0] != 640 || b->sizes[i][1] != 480)
			continue;
		for (size_t k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
			struct vc_mode m = { V4L2_PIX_FMT_RGB565, 640, 480, 1, rates[k] };

			vc_modes_add(modes, &m);
		}
	}
	return 0;
}

static int via_controls(void *priv, struct viacam_ctrl *ctrls)
{
	(void)priv;
	ov7670_ctrls(ctrls);
	return OV_NCTRLS;
}

static int via_start(void *priv, const struct vc_mode *mode, struct vc_error *err)
{
	struct via_backend *b = priv;
	int r;

	b->lock_fd = open_lock(b);
	if (b->lock_fd >= 0 && flock(b->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		close(b->lock_fd);
		b->lock_fd = -1;
		return vc_err(err, 0, -EBUSY,
			      "the sensor on %s is streaming for another camera of viacamd",
			      b->io.i2c_name);
	}
	b->st.rgb565 = mode->pixelformat == V4L2_PIX_FMT_RGB565;
	b->st.fps = mode->interval_num ? mode->interval_den / mode->interval_num : 30;
	port_enable(&b->io);
	if (b->olpc_power)
		sensor_power(&b->io, true);
	r = ov7670_setup(&b->io, &b->st);
	if (r < 0) {
		r = vc_err(err, 0, r, "sensor setup failed: %s", b->io.error);
		goto fail;
	}
	r = via_engine_configure(&b->eng, &b->io, mode->width, mode->height, b->st.rgb565);
	if (r < 0) {
		r = vc_err(err, 0, r, "the capture engine cannot make %ux%u%s", mode->width,
			   mode->height, b->st.rgb565 ? " RGB565" : "");
		goto fail;
	}
	via_engine_start(&b->eng);
	b->started = true;
	b->model_error_logged = false;
	return 0;
fail:
	if (b->olpc_power)
		sensor_power(&b->io, false);
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	b->lock_fd = -1;
	return r;
}

static int via_produce(void *priv, struct vc_frame *fr)
{
	struct via_backend *b = priv;
	int r;

	if (!b->started)
		return -EAGAIN;
	r = via_engine_poll(&b->eng, fr->data, fr->size, fr->bytesperline, 3);
	if (b->transport == T_MODEL && via_model_error(&b->io) && !b->model_error_logged) {
		fprintf(stderr, "viacamd: via: the model reports a misprogrammed engine: %s\n",
			via_model_error(&b->io));
		b->model_error_logged = true;
	}
	if (r < 0)
		return r;
	if (r == 0)
		return -EAGAIN;
	fr->bytesused = (size_t)fr->bytesperline * fr->mode->height;
	return 0;
}

static void via_stop(void *priv)
{
	struct via_backend *b = priv;

	if (!b->started)
		return;
	via_engine_stop(&b->eng);
	if (b->olpc_power)
		sensor_power(&b->io, false);
	b->started = false;
	if (b->lock_fd >= 0)	/* the sensor is free for another instance's check */
		close(b->lock_fd);
	b->lock_fd = -1;
}

static int via_set_ctrl(void *priv, uint32_t id, int64_t value)
{
	struct via_backend *b = priv;

	/* Stopped: the sensor is off; the state is kept for the next start. */
	return ov7670_set_ctrl(b->started ? &b->io : NULL, &b->st, id, value);
}

static void via_release(void *priv)
{
	struct via_backend *b = priv;

	via_stop(b);
	close_transport(b);
	free(b);
}

const struct vc_backend_ops vc_backend_via = {
	.abi = VC_BACKEND_ABI,
	.name = "via",
	.summary = "VIA VX855/VX900 capture engine + OV7670 (transport model, pci or drm)",
	.keys = via_keys,
	.create = via_create,
	.describe = via_describe,
	.controls = via_controls,
	.start = via_start,
	.produce = via_produce,
	.stop = via_stop,
	.set_ctrl = via_set_ctrl,
	.release = via_release,
};
