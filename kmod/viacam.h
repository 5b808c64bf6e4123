/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * viacam.h - viacam bridge: the per-camera state shared by the module's files.
 *
 * Locking in short (the full rules are at the top of viacam-queue.c):
 *   viacam_devices_lock (core) -> [one queue lock ->] cam->lock -> ctrl handler
 *     lock -> cam->copy_lock -> cam->slock
 */
#ifndef VIACAM_H
#define VIACAM_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <media/v4l2-ctrls.h>
#include <media/v4l2-dev.h>
#include <media/v4l2-device.h>
#include <media/videobuf2-v4l2.h>

#include "uapi/linux/viacam.h"
#include "viacam-compat.h"

#define VIACAM_DRIVER		"viacam"
#define VIACAM_DEFAULT_TIMEOUT	1000	/* ms */
/* Backend buffers a stream needs: the bridge holds one, the producer fills another. */
#define VIACAM_OUT_MIN_BUFS	2

/* Pixel format facts the bridge needs to size buffers. */
struct viacam_fmtinfo {
	u32 fourcc;
	u8 bpp;			/* bits per pixel of the first plane's line, 0: compressed */
	u8 total_bpp;		/* bits per pixel of the whole image (planar 4:2:0 = 12) */
	u8 even;		/* width and height must be even */
	u8 yuv;			/* YCbCr (neutral = grey Y/Cb/Cr 0x80) */
};

/*
 * A lend that a capture node's stop ended while the producer may still write
 * into its memory (on cam->stale_lends, slock), or, while the lend is out,
 * the record that stop turns into one (viacam_buf.rec). It holds a reference
 * of its own to the lent memory, so a capture buffer queued again with that
 * memory is known and parked, whatever vb2 did to the buffer meanwhile. It is
 * the bridge's, never a vb2 buffer's: vb2 may free a buffer, or take its
 * memory away, without calling buf_cleanup (see viacam_buf_cleanup()).
 */
struct viacam_lendrec {
	struct list_head link;
	struct dma_buf *dbuf;		/* a reference to the lent memory */
	u32 id;
};

/* A vb2 buffer with the list link used while the driver owns it. */
struct viacam_buf {
	struct vb2_v4l2_buffer vb;	/* must be first */
	struct list_head list;
	/*
	 * Capture buffers: its id in VIACAM_IOC_LEND, new in every buf_init
	 * (vb2 calls it whenever the buffer gets memory: an id always names
	 * the same memory).
	 */
	u32 lend_id;
	bool lent;			/* on cam->lent (slock) */
	struct viacam_lendrec *rec;	/* while lent: its record (slock) */
	/*
	 * An MMAP capture buffer's memory, exported on its first lend and put in
	 * buf_cleanup (vb2 calls it for every MMAP buffer it frees). Never set
	 * for DMABUF memory: a lend takes a reference to the consumer's
	 * dma-buf of its own (viacam_buf_mem()).
	 */
	struct dma_buf *dbuf;
};

static inline struct viacam_buf *to_viacam_buf(struct vb2_buffer *vb)
{
	return container_of(to_vb2_v4l2_buffer(vb), struct viacam_buf, vb);
}

/* A declared control, with the menu item table the control framework points into. */
struct viacam_ctrl_entry {
	struct viacam_ctrl d;
	const char *qmenu[VIACAM_MAX_MENU + 1];
};

/* What a stream carries: enough to tell whether a frame fits a capture buffer. */
struct viacam_streamfmt {
	u32 pixelformat;
	u32 width;
	u32 height;
	u32 sizeimage;
};

/*
 * One capture node of a camera and its queue. A camera has 1 to
 * VIACAM_MAX_CAPTURES of them; each is streamed by one application at a time
 * (vb2's one-owner rule), and every one gets each frame (one copy each).
 */
struct viacam_consumer {
	struct viacam_cam *cam;
	unsigned int index;		/* 0: the first node */
	struct video_device vdev;
	struct vb2_queue q;
	/*
	 * qlock: q->lock of this node's queue (unless queue_lock=0: then
	 * cam->lock is). A consumer's copy to its own user space (vb2's read()
	 * emulation, USERPTR pinning) waits under this lock only.
	 */
	struct mutex qlock;
	/* The hand-off state of this node, under cam->slock: */
	struct list_head queued;	/* capture buffers waiting for a frame */
	/*
	 * Buffers queued by the QBUF under way (in_qbuf, set by viacam_qbuf
	 * with qlock held): not filled before that QBUF has returned, so it
	 * never reports its own buffer as DONE.
	 */
	struct list_head staged;
	bool in_qbuf;
	bool active;			/* streaming */
	bool want;			/* the held frame is still owed to this node */
	ktime_t start;			/* STREAMON: no frame from before it is shown */
	u32 sequence;			/* next capture buffer's sequence number */
	struct viacam_streamfmt sfmt;	/* format while streaming */
	u64 frames_out;			/* buffers of this node filled (incl. repeats) */
	u64 last_ts;			/* newest capture timestamp given (copy_lock) */
};

struct viacam_cam {
	u32 id;
	char label[VIACAM_LABEL_LEN];
	char card[VIACAM_LABEL_LEN];
	u32 timeout_ms;

	struct v4l2_device v4l2_dev;	/* its release frees this struct */
	struct viacam_consumer *cons;	/* capture nodes, for applications */
	unsigned int ncons;
	struct video_device out_vdev;	/* backend node, for the producer */
	struct vb2_queue out_q;

	/*
	 * lock: vdev->lock of every node of the camera, so the V4L2 core holds
	 * it around every non-buffer ioctl of each node. Protects everything
	 * from here to slock: the negotiated format and interval (one for all
	 * capture nodes), the declarations, the control handler pointer,
	 * cap_open and gone.
	 */
	struct mutex lock;
	/*
	 * out_qlock: q->lock of the backend queue. It serializes the backend
	 * node's buffer ioctls, write() and release; its vb2 callbacks take
	 * cam->lock inside it. A producer's copy from its own user space (vb2's
	 * write() emulation, USERPTR pinning) waits under this lock only, so a
	 * producer whose memory faults slowly (userfaultfd, FUSE) stalls nobody
	 * but itself.
	 * Each capture node's queue has its own lock (viacam_consumer.qlock).
	 */
	struct mutex out_qlock;		/* q->lock of out_q */
	/*
	 * copy_lock: owns the right to take a capture buffer off a node's queued
	 * list and fill it. Held by the worker and out_buf_queue around each
	 * copy, and around a lend's take and delivery (LEND, DELIVER, write()),
	 * so capture buffers complete in sequence order and the repeat source
	 * cannot be overwritten while it is read. Never held while waiting for
	 * user space or anything else.
	 */
	struct mutex copy_lock;
	u32 wr_partial;			/* bytes of a frame begun with vb2's write() */
	u32 wr_len;			/* bytes of the write() under way (out_qlock) */
	struct v4l2_pix_format fmt;	/* negotiated (capture) format */
	struct v4l2_fract interval;	/* negotiated frame interval */
	struct viacam_format *formats;	/* declared tuples, NULL: plain producer mode */
	u32 nformats;
	struct v4l2_ctrl_handler *ctrls;	/* cap_vdev.ctrl_handler */
	struct viacam_ctrl_entry *ctrl_decl;	/* what was declared; backs menu names */
	u32 nctrls;
	u32 cap_open;			/* open file handles on the capture nodes */
	bool gone;			/* removed: calls end in ENODEV (also read locklessly) */
	/*
	 * The backend node is registered, so events can be queued on it (its
	 * file handle list exists). Set once, with release semantics; read
	 * with acquire semantics, under no lock.
	 */
	bool out_ready;

	/*
	 * slock: the hand-off state shared between the queues' callbacks (process
	 * context, cam->lock held) and the frame worker (no lock held). Held only
	 * for list and pointer updates, never during a copy or a wait.
	 */
	spinlock_t slock;
	struct list_head out_pending;	/* backend frames not yet seen by the worker */
	struct list_head lent;		/* capture buffers lent to the producer (LEND) */
	struct list_head stale_lends;	/* struct viacam_lendrec of ended lends */
	struct list_head parked;	/* buffers queued with such memory: not filled yet */
	struct viacam_buf *held;	/* newest backend frame, kept by the bridge */
	ktime_t held_in;		/* when held arrived */
	bool held_shown;		/* held was copied to a capture buffer */
	/*
	 * The repeat source: after a direct write() or a DELIVER (there is no
	 * held frame then) the newest frame exists only in a capture buffer of
	 * src_cons, the only node streaming then; src_dbuf is a reference of
	 * our own to that memory (the buffer may be freed, or queued with
	 * another dma-buf, first). Repeats from it go to src_cons only: its
	 * consumer may have written into that buffer. The first repeat copies
	 * it to last_frame and ends it; a buffer with that memory is never lent
	 * meanwhile. Whoever ends it owns src_dbuf's reference (viacam_src_end).
	 */
	struct dma_buf *src_dbuf;
	struct viacam_consumer *src_cons;
	u32 src_len;			/* bytes of the frame in src_dbuf */
	ktime_t src_in;			/* when that frame arrived */
	u32 nactive;			/* capture nodes streaming (also under cam->lock) */
	bool out_active;		/* backend queue streaming */
	bool repeating;			/* timeout passed: the worker repeats frames */
	/* Frames come by direct write(): until a timeout, capture stop or close. */
	bool wr_direct;
	struct viacam_streamfmt out_sfmt;	/* backend format while streaming */
	struct viacam_streamfmt last_sfmt;	/* format of last_frame */
	bool last_valid;		/* last_frame holds a frame */
	u32 last_len;
	ktime_t last_frame_in;		/* when the frame in last_frame arrived */
	/* last_frame came from a buffer of this node (src): for it alone */
	struct viacam_consumer *last_owner;
	u32 out_sequence;		/* next backend buffer's sequence number */
	u32 cap_interval_num;		/* frame interval while streaming */
	u32 cap_interval_den;
	ktime_t last_in;		/* when the newest real frame arrived */
	u64 frames_in, frames_out, frames_dropped, frames_repeated;
	u64 copies;			/* frame copies made by the kernel (all paths) */
	atomic_t lend_ids;		/* last lend id handed out to a capture buffer */

	/*
	 * The bridge's own copy of a frame to repeat: the held frame of a backend
	 * that stopped, or the repeat source's frame once repeats begin. Read and
	 * written only with copy_lock held (last_valid, last_sfmt, last_frame_in
	 * and last_owner also under slock). A node is shown it only if the frame
	 * arrived after its STREAMON, and, when last_owner is set, only if it
	 * is that node.
	 */
	void *last_frame;
	size_t last_size;		/* allocated size of last_frame */

	/* All copies run here, one at a time (ordered workqueue). */
	struct workqueue_struct *wq;
	struct work_struct frame_work;
	struct delayed_work repeat_work;
};

static inline struct viacam_cam *vdev_to_cam(struct video_device *vdev)
{
	return video_get_drvdata(vdev);
}

/* The capture node @vdev is, or NULL for the backend node. */
static inline struct viacam_consumer *vdev_to_cons(struct video_device *vdev)
{
	struct viacam_cam *cam = vdev_to_cam(vdev);

	return vdev == &cam->out_vdev ? NULL : container_of(vdev, struct viacam_consumer, vdev);
}

bool viacam_cap_busy(struct viacam_cam *cam, const struct viacam_consumer *except);
int viacam_qbuf(struct file *file, void *fh, struct v4l2_buffer *b);
long viacam_lend_ioctl(struct file *file, unsigned int cmd, void __user *uarg);

/* viacam-format.c */
const struct viacam_fmtinfo *viacam_fmtinfo(u32 fourcc);
const struct viacam_fmtinfo *viacam_fmtinfo_at(unsigned int index);
void viacam_fill_pix(struct v4l2_pix_format *pix, u32 fourcc, u32 width, u32 height,
		     u32 sizeimage);
bool viacam_text_ok(const char *str, size_t len, bool may_be_empty);

/* viacam-queue.c */
#define VIACAM_INJECT_WORKER	BIT(0)
#define VIACAM_INJECT_WRITE	BIT(1)
#define VIACAM_INJECT_LEAK	BIT(2)
#define VIACAM_INJECT_QBUF	BIT(3)
#define VIACAM_INJECT_STOP	BIT(4)
#define VIACAM_INJECT_CAPQ	BIT(5)
#define VIACAM_INJECT_ADD	BIT(6)
void viacam_inject_delay(u32 site);
int viacam_queues_init(struct viacam_cam *cam, unsigned int ncons);
void viacam_queues_cleanup(struct viacam_cam *cam);
struct viacam_counters {
	u64 in, out, dropped, repeated, copies;
	u64 node_out;			/* of one capture node */
	bool repeating;
};

void viacam_stats(struct viacam_cam *cam, struct viacam_consumer *cons,
		  struct viacam_counters *c);
ssize_t viacam_write(struct file *file, const char __user *ubuf, size_t count, loff_t *ppos);
void viacam_stream_interval(struct viacam_cam *cam);
void viacam_writer_gone(struct viacam_cam *cam);
bool viacam_out_streaming(struct viacam_cam *cam);

/* viacam-v4l2.c */
extern const struct v4l2_file_operations viacam_cap_fops;
extern const struct v4l2_file_operations viacam_out_fops;
extern const struct v4l2_ioctl_ops viacam_cap_ioctl_ops;
extern const struct v4l2_ioctl_ops viacam_out_ioctl_ops;
int viacam_ctrls_init(struct viacam_cam *cam);
void viacam_notify_consumers(struct viacam_cam *cam);
void viacam_send_stream_event(struct viacam_cam *cam, u32 type);
void viacam_send_event(struct viacam_cam *cam, u32 type, const void *data, size_t len);

#endif /* VIACAM_H */
