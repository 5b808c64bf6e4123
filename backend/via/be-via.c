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
 * viacamd runs: its RuntimeDirectory) nothing can be streaming, and nothing is locked.
 *
 * The engine keeps its own clock. Once the instance has started, a worker thread owns the
 * hardware: it powers and sets up the sensor and the engine (tens of milliseconds of sleeps
 * and I2C writes), polls the engine's status (INTCTRL.EAV) every millisecond, copies each
 * finished frame out of VRAM with the time it was seen (the capture time), and wakes the
 * session through an eventfd (clock_fd). produce() hands over the newest frame; start(),
 * stop() and set_ctrl() only queue commands, so no op waits for the hardware (backend.h).
 *
 * Threads: create(), describe() and controls() run before the worker exists and may use the
 * hardware. After that, io, st, eng and lock_fd are the worker's alone; the event loop keeps
 * its own copy of the control values (shadow) to check them. mu guards the command queue,
 * the answer to the newest start (done_gen, result, msg), news for people (note) and the
 * newest frame (ready, ready_new, ready_ns). release() queues CMD_QUIT: the worker stops
 * the hardware, closes the transport and frees the instance.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
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

enum { CMD_START, CMD_STOP, CMD_CTRL, CMD_QUIT };
#define VIA_NCMDS 64
/* How long a start waits for another instance (a reload's old one) to let go of the sensor. */
#define VIA_LOCK_WAIT_MS 2000

enum via_state { VS_IDLE, VS_STARTING, VS_RUNNING, VS_FAILED };

struct via_cmd {
	int op;
	uint64_t gen;		/* CMD_START: its number */
	struct vc_mode mode;	/* CMD_START */
	uint32_t id;		/* CMD_CTRL */
	int64_t value;
};

struct via_backend {
	/* the hardware: create()'s, then the worker's alone */
	struct via_io io;
	bool io_open;
	enum via_transport transport;
	bool olpc_power;
	struct ov7670_state st;
	struct via_engine eng;
	bool started;		/* engine and sensor running */
	bool model_error_logged;
	int lock_fd;		/* the sensor's lock file while started (else -1) */
	uint8_t *wbuf;		/* the frame being copied out of VRAM */
	uint32_t bpl;		/* the bridge's bytes per line of the running mode */
	size_t frame_len;
	uint32_t sizes[VC_MAX_MODES][2];
	size_t nsizes;

	/* the event loop's */
	enum via_state state;
	struct ov7670_state shadow;	/* control values, to check them */
	uint64_t gen;		/* of the newest CMD_START */
	bool worker;
	pthread_t thread;
	int efd;		/* clock_fd(): a frame, a start's answer or a note is waiting */

	/* mu: cmds/ncmds, done_gen/result/msg, note, ready/ready_new/ready_ns */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct via_cmd cmds[VIA_NCMDS];
	unsigned int ncmds;
	uint64_t done_gen;
	int result;
	char msg[200];
	char note[200];
	uint8_t *ready;		/* the newest complete frame */
	bool ready_new;		/* not handed to produce() yet */
	uint64_t ready_ns;	/* when the engine had finished it */
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

static void free_instance(struct via_backend *b)
{
	close_transport(b);
	if (b->efd >= 0)
		close(b->efd);
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b->wbuf);
	free(b->ready);
	free(b);
}

static int via_create(const struct vc_backend_conf *conf, void **ret, struct vc_error *err)
{
	struct via_backend *b = calloc(1, sizeof(*b));
	char msg[256];
	int r;

	if (!b)
		return -ENOMEM;
	b->efd = -1;
	b->lock_fd = -1;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	ov7670_state_init(&b->st);
	b->shadow = b->st;
	for (size_t i = 0; i < conf->nsizes; i++) {
		uint32_t w = conf->sizes[i][0], h = conf->sizes[i][1];

		if (w < VIA_MIN_WIDTH || w > VIA_MAX_WIDTH || h < VIA_MIN_HEIGHT ||
		    h > VIA_MAX_HEIGHT) {
			free_instance(b);
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
		free_instance(b);
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
		free_instance(b);
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

/* Worker: news for people, handed to produce() (the first one wins until it is read). */
static void post_note(struct via_backend *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void post_note(struct via_backend *b, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&b->mu);
	if (!b->note[0]) {
		va_start(ap, fmt);
		vsnprintf(b->note, sizeof(b->note), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&b->mu);
	vc_kick(b->efd);
}

/* Worker: the sensor's lock, waiting a while for an instance that is letting go of it. */
static int take_lock(struct via_backend *b, char *msg, size_t len)
{
	b->lock_fd = open_lock(b);
	if (b->lock_fd < 0)
		return 0;
	for (int waited = 0; flock(b->lock_fd, LOCK_EX | LOCK_NB) < 0; waited += 10) {
		if (errno != EWOULDBLOCK || waited >= VIA_LOCK_WAIT_MS) {
			close(b->lock_fd);
			b->lock_fd = -1;
			snprintf(msg, len, "the sensor on %s is streaming for another camera of viacamd",
				 b->io.i2c_name);
			return -EBUSY;
		}
		via_sleep_ms(10);
	}
	return 0;
}

/* Worker: power and set up the sensor and the engine for @mode. 0 or -errno with @msg. */
static int hw_start(struct via_backend *b, const struct vc_mode *mode, char *msg, size_t len)
{
	int r = take_lock(b, msg, len);

	if (r < 0)
		return r;
	b->bpl = vc_bytesperline(mode->pixelformat, mode->width);
	b->frame_len = (size_t)b->bpl * mode->height;
	free(b->wbuf);
	b->wbuf = malloc(b->frame_len);
	pthread_mutex_lock(&b->mu);
	free(b->ready);
	b->ready = malloc(b->frame_len);
	b->ready_new = false;
	pthread_mutex_unlock(&b->mu);
	if (!b->wbuf || !b->ready) {
		r = -ENOMEM;
		snprintf(msg, len, "out of memory");
		goto fail;
	}
	b->st.rgb565 = mode->pixelformat == V4L2_PIX_FMT_RGB565;
	b->st.fps = mode->interval_num ? mode->interval_den / mode->interval_num : 30;
	port_enable(&b->io);
	if (b->olpc_power)
		sensor_power(&b->io, true);
	r = ov7670_setup(&b->io, &b->st);
	if (r < 0) {
		snprintf(msg, len, "sensor setup failed: %.170s", b->io.error);
		goto fail;
	}
	r = via_engine_configure(&b->eng, &b->io, mode->width, mode->height, b->st.rgb565);
	if (r < 0) {
		snprintf(msg, len, "the capture engine cannot make %ux%u%s", mode->width,
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

/* Worker: stop the engine, power the sensor down, let go of the sensor. */
static void hw_stop(struct via_backend *b)
{
	if (!b->started)
		return;
	via_engine_stop(&b->eng);
	if (b->olpc_power)
		sensor_power(&b->io, false);
	b->started = false;
	if (b->lock_fd >= 0)	/* the sensor is free for another instance's check */
		close(b->lock_fd);
	b->lock_fd = -1;
	pthread_mutex_lock(&b->mu);
	b->ready_new = false;
	pthread_mutex_unlock(&b->mu);
}

/* Worker: one frame slot; polls the engine for up to 10 ms. */
static void hw_poll(struct via_backend *b)
{
	struct timespec ts;
	uint8_t *t;
	int r = via_engine_poll(&b->eng, b->wbuf, b->frame_len, b->bpl, 10);

	if (b->transport == T_MODEL && via_model_error(&b->io) && !b->model_error_logged) {
		post_note(b, "via: the model reports a misprogrammed engine: %s",
			  via_model_error(&b->io));
		b->model_error_logged = true;
	}
	if (r <= 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&b->mu);
	t = b->ready;
	b->ready = b->wbuf;
	b->wbuf = t;
	b->ready_new = true;
	b->ready_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	pthread_mutex_unlock(&b->mu);
	vc_kick(b->efd);
}

static void *worker(void *arg)
{
	struct via_backend *b = arg;

	for (;;) {
		struct via_cmd c;
		char msg[sizeof(b->msg)] = "";
		int r;

		pthread_mutex_lock(&b->mu);
		while (!b->ncmds && !b->started)
			pthread_cond_wait(&b->cv, &b->mu);
		if (!b->ncmds) {
			pthread_mutex_unlock(&b->mu);
			hw_poll(b);
			continue;
		}
		c = b->cmds[0];
		memmove(b->cmds, b->cmds + 1, --b->ncmds * sizeof(b->cmds[0]));
		pthread_mutex_unlock(&b->mu);
		switch (c.op) {
		case CMD_START:
			hw_stop(b);
			r = hw_start(b, &c.mode, msg, sizeof(msg));
			pthread_mutex_lock(&b->mu);
			b->done_gen = c.gen;
			b->result = r;
			memcpy(b->msg, msg, sizeof(msg));
			pthread_mutex_unlock(&b->mu);
			vc_kick(b->efd);
			break;
		case CMD_STOP:
			hw_stop(b);
			break;
		case CMD_CTRL:
			/* Stopped: the sensor is off; the state is kept for the next start. */
			r = ov7670_set_ctrl(b->started ? &b->io : NULL, &b->st, c.id, c.value);
			if (r < 0)
				post_note(b, "via: setting control %#x to %lld failed: %s", c.id,
					  (long long)c.value, strerror(-r));
			break;
		default:	/* CMD_QUIT: release() left the instance to us */
			hw_stop(b);
			free_instance(b);
			return NULL;
		}
	}
}

/*
 * Queues a command. A control replaces a queued value of the same control; a stop cancels a
 * start the worker has not taken yet. So the queue holds at most a stop, a start, one entry
 * per control and a quit, however often consumers come and go while the worker is busy.
 */
static int request(struct via_backend *b, const struct via_cmd *c)
{
	int r = 0;

	pthread_mutex_lock(&b->mu);
	for (unsigned int i = 0; c->op == CMD_CTRL && i < b->ncmds; i++) {
		if (b->cmds[i].op == CMD_CTRL && b->cmds[i].id == c->id) {
			b->cmds[i].value = c->value;
			goto out;
		}
	}
	for (unsigned int i = b->ncmds; c->op == CMD_STOP && i-- > 0;) {
		if (b->cmds[i].op == CMD_STOP)
			break;
		if (b->cmds[i].op == CMD_START) {
			memmove(b->cmds + i, b->cmds + i + 1, (b->ncmds - i - 1) * sizeof(b->cmds[0]));
			b->ncmds--;
			goto out;
		}
	}
	if (b->ncmds < VIA_NCMDS)
		b->cmds[b->ncmds++] = *c;
	else
		r = -EBUSY;
out:
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return r;
}

static int via_start(void *priv, const struct vc_mode *mode, struct vc_error *err)
{
	struct via_backend *b = priv;
	struct via_cmd c = { .op = CMD_START, .mode = *mode };
	int r;

	if (!vc_bytesperline(mode->pixelformat, mode->width))
		return vc_err(err, 0, -EINVAL, "not a format of the engine");
	if (b->efd < 0) {
		b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (b->efd < 0)
			return vc_err(err, 0, -errno, "eventfd: %s", strerror(errno));
	}
	if (!b->worker) {
		r = pthread_create(&b->thread, NULL, worker, b);
		if (r)
			return vc_err(err, 0, -r, "cannot start a thread: %s", strerror(r));
		b->worker = true;
	}
	c.gen = ++b->gen;
	r = request(b, &c);
	if (r < 0)
		return vc_err(err, 0, r, "the worker is busy");
	b->state = VS_STARTING;
	return 0;
}

static int via_produce(void *priv, struct vc_frame *fr)
{
	struct via_backend *b = priv;
	uint64_t v;
	int r = -EAGAIN;

	if (b->state == VS_IDLE)
		return -EAGAIN;
	if (b->state == VS_FAILED)
		return -ENODEV;
	if (read(b->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&b->mu);
	if (b->note[0]) {
		snprintf(fr->note, sizeof(fr->note), "%s", b->note);
		b->note[0] = 0;
	}
	if (b->state == VS_STARTING && b->done_gen == b->gen) {
		if (b->result < 0) {
			snprintf(fr->note, sizeof(fr->note), "via: cannot start %ux%u: %s",
				 fr->mode->width, fr->mode->height, b->msg);
			b->state = VS_FAILED;
			r = -ENODEV;
		} else {
			b->state = VS_RUNNING;
		}
	}
	if (b->state == VS_RUNNING && b->ready_new && b->ready) {
		uint32_t line = b->bpl < fr->bytesperline ? b->bpl : fr->bytesperline;

		for (uint32_t y = 0; y < fr->mode->height &&
				     (size_t)(y + 1) * fr->bytesperline <= fr->size; y++)
			memcpy(fr->data + (size_t)y * fr->bytesperline, b->ready + (size_t)y * b->bpl,
			       line);
		fr->bytesused = (size_t)fr->bytesperline * fr->mode->height;
		fr->capture_ns = b->ready_ns;
		b->ready_new = false;
		r = 0;
	}
	pthread_mutex_unlock(&b->mu);
	return r;
}

static int via_clock_fd(void *priv)
{
	return ((struct via_backend *)priv)->efd;
}

static void via_stop(void *priv)
{
	struct via_backend *b = priv;
	struct via_cmd c = { .op = CMD_STOP };

	if (b->state == VS_IDLE)
		return;
	b->state = VS_IDLE;
	request(b, &c);
}

static int via_set_ctrl(void *priv, uint32_t id, int64_t value)
{
	struct via_backend *b = priv;
	struct via_cmd c = { .op = CMD_CTRL, .id = id, .value = value };
	int r;

	/* Checked against the loop's copy; the worker sets the sensor. */
	r = ov7670_set_ctrl(NULL, &b->shadow, id, value);
	if (r < 0)
		return r;
	if (!b->worker)	/* never started: the hardware is create()'s leftovers, idle */
		return ov7670_set_ctrl(NULL, &b->st, id, value);
	return request(b, &c);
}

static void via_release(void *priv)
{
	struct via_backend *b = priv;
	struct via_cmd c = { .op = CMD_QUIT };

	if (!b)
		return;
	if (!b->worker) {
		free_instance(b);
		return;
	}
	b->state = VS_IDLE;
	/* Never refused: the queue holds at most a few controls besides start and stop. */
	while (request(b, &c) < 0)
		via_sleep_ms(1);
	pthread_detach(b->thread);
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
	.clock_fd = via_clock_fd,
	.stop = via_stop,
	.set_ctrl = via_set_ctrl,
	.release = via_release,
};
