// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacam-queue.c - viacam bridge: the two vb2 queues and the frame hand-off.
 *
 * READ THIS FIRST - locking rules of the bridge
 *
 * 1. cam->lock (mutex) is vdev->lock of the capture and the backend node and
 *    q->lock of both vb2 queues. The V4L2 core takes it around every ioctl,
 *    and the vb2 fop helpers take it around read/write/mmap/poll/release, so
 *    every vb2 callback below runs with it held. A blocking VIDIOC_DQBUF does
 *    not hold it while it sleeps: vb2 calls wait_prepare/wait_finish
 *    (vb2_ops_wait_prepare/finish unlock and relock q->lock), so other ioctls
 *    and the producer keep going. No code path waits for user space with it
 *    held: consumer requests are stored and forwarded as events.
 * 2. cam->slock (spinlock) protects the hand-off state (lists, held buffer,
 *    active flags, stream formats, counters). It is held only for pointer
 *    and counter updates: never across a copy, an allocation or a wait.
 * 3. Every frame copy runs in the camera's ordered workqueue (frame_work,
 *    repeat_work), so copies never overlap and capture buffers complete in
 *    sequence order. A stop_streaming callback first detaches its buffers
 *    under slock, then flushes the workqueue: after that no copy can still
 *    touch them, and it returns them to vb2.
 * 4. Lock order: viacam_devices_lock -> cam->lock -> control handler lock ->
 *    cam->slock. The worker takes only slock.
 *
 * The hand-off keeps the newest backend frame ("held") instead of returning
 * it at once. That gives "latest wins" when no capture buffer is waiting,
 * and a frame to repeat when the producer stalls, without a second copy per
 * frame. The backend queue therefore has at least two buffers.
 */
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <media/videobuf2-vmalloc.h>

#include "viacam.h"

/* ------------------------------------------------------------------------
 * Helpers
 */

static void viacam_streamfmt_from_pix(struct viacam_streamfmt *s,
				      const struct v4l2_pix_format *pix)
{
	s->pixelformat = pix->pixelformat;
	s->width = pix->width;
	s->height = pix->height;
	s->sizeimage = pix->sizeimage;
}

static bool viacam_is_compressed(u32 fourcc)
{
	const struct viacam_fmtinfo *fi = viacam_fmtinfo(fourcc);

	return !fi || !fi->bpp;
}

/* Can a frame of format @src fill a buffer negotiated as @dst? */
static bool viacam_sfmt_fits(const struct viacam_streamfmt *src,
			     const struct viacam_streamfmt *dst)
{
	if (src->pixelformat != dst->pixelformat || src->width != dst->width ||
	    src->height != dst->height)
		return false;
	return viacam_is_compressed(dst->pixelformat) || src->sizeimage == dst->sizeimage;
}

/* Neutral grey in @fourcc: YCbCr 0x80/0x80/0x80 or RGB 0x80, 0x80 for GREY. */
static void viacam_fill_neutral(void *dst, u32 len)
{
	memset(dst, 0x80, len);
}

/* Take the oldest waiting capture buffer. Called with slock held. */
static struct viacam_buf *viacam_take_cap(struct viacam_cam *cam)
{
	struct viacam_buf *buf;

	lockdep_assert_held(&cam->slock);
	if (!cam->cap_active || list_empty(&cam->cap_queued))
		return NULL;
	buf = list_first_entry(&cam->cap_queued, struct viacam_buf, list);
	list_del(&buf->list);
	buf->vb.sequence = cam->cap_sequence++;
	return buf;
}

/*
 * Complete a capture buffer with @len bytes copied from @src (NULL: a neutral
 * frame). Runs in the worker, without locks; the buffer was taken off the
 * list under slock, so nothing else touches it.
 */
static void viacam_cap_complete(struct viacam_cam *cam, struct viacam_buf *buf,
				const void *src, u32 len, bool repeat)
{
	struct vb2_buffer *vb = &buf->vb.vb2_buf;
	void *dst = vb2_plane_vaddr(vb, 0);
	unsigned long flags;

	if (len > vb2_plane_size(vb, 0))
		len = vb2_plane_size(vb, 0);
	if (src)
		memcpy(dst, src, len);
	else
		viacam_fill_neutral(dst, len);
	vb2_set_plane_payload(vb, 0, len);
	buf->vb.field = V4L2_FIELD_NONE;
	vb->timestamp = ktime_get_ns();
	spin_lock_irqsave(&cam->slock, flags);
	cam->frames_out++;
	if (repeat)
		cam->frames_repeated++;
	spin_unlock_irqrestore(&cam->slock, flags);
	vb2_buffer_done(vb, VB2_BUF_STATE_DONE);
}

static void viacam_return_list(struct list_head *list, enum vb2_buffer_state state)
{
	struct viacam_buf *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, list, list) {
		list_del(&buf->list);
		vb2_buffer_done(&buf->vb.vb2_buf, state);
	}
}

/* ------------------------------------------------------------------------
 * The worker: every copy happens here
 */

static void viacam_frame_work(struct work_struct *work)
{
	struct viacam_cam *cam = container_of(work, struct viacam_cam, frame_work);
	struct viacam_buf *cap = NULL, *newest = NULL, *buf, *tmp;
	LIST_HEAD(done);
	unsigned long flags;
	u32 len = 0;

	spin_lock_irqsave(&cam->slock, flags);
	if (cam->out_active && !list_empty(&cam->out_pending)) {
		/* Latest wins: only the newest pending frame can still be shown. */
		newest = list_last_entry(&cam->out_pending, struct viacam_buf, list);
		list_del(&newest->list);
		/* Oldest first, so the producer dequeues in sequence order. */
		if (cam->held) {
			if (!cam->held_delivered)
				cam->frames_dropped++;
			list_add_tail(&cam->held->list, &done);
		}
		list_for_each_entry_safe(buf, tmp, &cam->out_pending, list) {
			list_move_tail(&buf->list, &done);
			cam->frames_dropped++;
		}
		cam->held = newest;
		cam->held_delivered = false;
		cam->last_in = ktime_get();
		cam->repeating = false;
	}
	if (cam->held && !cam->held_delivered &&
	    viacam_sfmt_fits(&cam->out_sfmt, &cam->cap_sfmt)) {
		cap = viacam_take_cap(cam);
		if (cap) {
			cam->held_delivered = true;
			len = vb2_get_plane_payload(&cam->held->vb.vb2_buf, 0);
			if (!viacam_is_compressed(cam->cap_sfmt.pixelformat))
				len = cam->cap_sfmt.sizeimage;
		}
	}
	spin_unlock_irqrestore(&cam->slock, flags);

	/* Frames nobody will see go back to the producer. */
	viacam_return_list(&done, VB2_BUF_STATE_DONE);
	/* held stays ours until a stop_streaming, which flushes this worker first. */
	if (cap)
		viacam_cap_complete(cam, cap, vb2_plane_vaddr(&cam->held->vb.vb2_buf, 0), len,
				    false);
}

static void viacam_repeat_work(struct work_struct *work)
{
	struct viacam_cam *cam = container_of(to_delayed_work(work), struct viacam_cam,
					      repeat_work);
	struct viacam_buf *cap = NULL;
	const void *src = NULL;
	unsigned long flags, delay;
	ktime_t now = ktime_get(), due;
	u32 len = 0;
	s64 interval_us;

	spin_lock_irqsave(&cam->slock, flags);
	if (!cam->cap_active) {
		spin_unlock_irqrestore(&cam->slock, flags);
		return;
	}
	due = ktime_add_ms(cam->last_in, cam->timeout_ms);
	if (ktime_after(due, now) && !cam->repeating) {
		delay = msecs_to_jiffies(ktime_ms_delta(due, now) + 1);
		spin_unlock_irqrestore(&cam->slock, flags);
		queue_delayed_work(cam->wq, &cam->repeat_work, delay);
		return;
	}
	cam->repeating = true;
	cap = viacam_take_cap(cam);
	if (cap) {
		len = cam->cap_sfmt.sizeimage;
		if (cam->held && viacam_sfmt_fits(&cam->out_sfmt, &cam->cap_sfmt)) {
			src = vb2_plane_vaddr(&cam->held->vb.vb2_buf, 0);
			if (viacam_is_compressed(cam->cap_sfmt.pixelformat))
				len = vb2_get_plane_payload(&cam->held->vb.vb2_buf, 0);
		} else if (cam->last_valid && viacam_sfmt_fits(&cam->last_sfmt, &cam->cap_sfmt)) {
			src = cam->last_frame;
			len = cam->last_len;
		} else if (viacam_is_compressed(cam->cap_sfmt.pixelformat)) {
			/* No neutral frame exists for a compressed format. */
			list_add(&cap->list, &cam->cap_queued);
			cam->cap_sequence--;
			cap = NULL;
		}
	}
	interval_us = div_u64((u64)cam->cap_interval_num * USEC_PER_SEC,
			      max_t(u32, cam->cap_interval_den, 1));
	spin_unlock_irqrestore(&cam->slock, flags);

	if (cap)
		viacam_cap_complete(cam, cap, src, len, true);
	delay = usecs_to_jiffies(max_t(s64, interval_us, 1000));
	queue_delayed_work(cam->wq, &cam->repeat_work, delay);
}

/* ------------------------------------------------------------------------
 * Capture queue (consumer side)
 */

static int cap_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
			   unsigned int *nplanes, unsigned int sizes[],
			   struct device *alloc_devs[])
{
	struct viacam_cam *cam = vb2_get_drv_priv(q);
	u32 size = cam->fmt.sizeimage;

	if (*nplanes)
		return sizes[0] < size ? -EINVAL : 0;
	*nplanes = 1;
	sizes[0] = size;
	return 0;
}

static int cap_buf_prepare(struct vb2_buffer *vb)
{
	struct viacam_cam *cam = vb2_get_drv_priv(vb->vb2_queue);

	if (vb2_plane_size(vb, 0) < cam->fmt.sizeimage)
		return -EINVAL;
	return 0;
}

static void cap_buf_queue(struct vb2_buffer *vb)
{
	struct viacam_cam *cam = vb2_get_drv_priv(vb->vb2_queue);
	struct viacam_buf *buf = to_viacam_buf(vb);
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&cam->slock, flags);
	list_add_tail(&buf->list, &cam->cap_queued);
	kick = cam->cap_active && cam->held && !cam->held_delivered;
	spin_unlock_irqrestore(&cam->slock, flags);
	if (kick)
		queue_work(cam->wq, &cam->frame_work);
}

static int cap_start_streaming(struct vb2_queue *q, unsigned int count)
{
	struct viacam_cam *cam = vb2_get_drv_priv(q);
	unsigned long flags;
	ktime_t now = ktime_get();

	lockdep_assert_held(&cam->lock);
	spin_lock_irqsave(&cam->slock, flags);
	viacam_streamfmt_from_pix(&cam->cap_sfmt, &cam->fmt);
	cam->cap_interval_num = cam->interval.numerator;
	cam->cap_interval_den = cam->interval.denominator;
	cam->cap_sequence = 0;
	cam->cap_active = true;
	/*
	 * A new stream starts with the producer's next frame, not with one that
	 * arrived before it: that frame may be old, and handing it out at once
	 * would make the first (non-blocking) DQBUF or read() succeed or fail
	 * depending on timing. It is still repeated if the producer stalls.
	 */
	cam->held_delivered = true;
	/* The timeout counts from now if the backend has been quiet for longer. */
	if (ktime_before(cam->last_in, now) && !cam->out_active)
		cam->last_in = now;
	cam->repeating = false;
	spin_unlock_irqrestore(&cam->slock, flags);

	viacam_send_stream_event(cam, VIACAM_EVENT_STREAM_START);
	viacam_notify_consumers(cam);
	queue_work(cam->wq, &cam->frame_work);
	queue_delayed_work(cam->wq, &cam->repeat_work, msecs_to_jiffies(cam->timeout_ms));
	return 0;
}

static void cap_stop_streaming(struct vb2_queue *q)
{
	struct viacam_cam *cam = vb2_get_drv_priv(q);
	unsigned long flags;
	LIST_HEAD(queued);

	lockdep_assert_held(&cam->lock);
	spin_lock_irqsave(&cam->slock, flags);
	cam->cap_active = false;
	list_splice_init(&cam->cap_queued, &queued);
	spin_unlock_irqrestore(&cam->slock, flags);

	/* A copy in flight completes its own buffer; wait for it. */
	cancel_delayed_work_sync(&cam->repeat_work);
	flush_workqueue(cam->wq);
	viacam_return_list(&queued, VB2_BUF_STATE_ERROR);

	viacam_send_event(cam, VIACAM_EVENT_STREAM_STOP, NULL, 0);
	viacam_notify_consumers(cam);
}

static const struct vb2_ops viacam_cap_qops = {
	.queue_setup		= cap_queue_setup,
	.buf_prepare		= cap_buf_prepare,
	.buf_queue		= cap_buf_queue,
	.start_streaming	= cap_start_streaming,
	.stop_streaming		= cap_stop_streaming,
	.wait_prepare		= vb2_ops_wait_prepare,
	.wait_finish		= vb2_ops_wait_finish,
};

/* ------------------------------------------------------------------------
 * Backend queue (producer side)
 */

static int out_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
			   unsigned int *nplanes, unsigned int sizes[],
			   struct device *alloc_devs[])
{
	struct viacam_cam *cam = vb2_get_drv_priv(q);
	u32 size = cam->fmt.sizeimage;

	/* One buffer stays with the bridge (held): the producer needs another. */
	if (*nbuffers < 2)
		*nbuffers = 2;
	if (*nplanes)
		return sizes[0] < size ? -EINVAL : 0;
	*nplanes = 1;
	sizes[0] = size;
	return 0;
}

static int out_buf_prepare(struct vb2_buffer *vb)
{
	struct viacam_cam *cam = vb2_get_drv_priv(vb->vb2_queue);
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);
	unsigned long payload = vb2_get_plane_payload(vb, 0);
	u32 size = cam->fmt.sizeimage;

	if (vb2_plane_size(vb, 0) < size)
		return -EINVAL;
	/*
	 * write() (vb2's file I/O emulation) queues its buffers with a payload
	 * of 0 on these kernels: the v4l2 layer overwrites the byte count the
	 * emulation set. A raw frame is always a full frame, so take it as one.
	 */
	if (!payload && !viacam_is_compressed(cam->fmt.pixelformat)) {
		payload = size;
		vb2_set_plane_payload(vb, 0, size);
	}
	if (viacam_is_compressed(cam->fmt.pixelformat)) {
		if (!payload || payload > size)
			return -EINVAL;
	} else if (payload < size) {
		return -EINVAL;
	}
	vbuf->field = V4L2_FIELD_NONE;
	return 0;
}

static void out_buf_queue(struct vb2_buffer *vb)
{
	struct viacam_cam *cam = vb2_get_drv_priv(vb->vb2_queue);
	struct viacam_buf *buf = to_viacam_buf(vb);
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&cam->slock, flags);
	list_add_tail(&buf->list, &cam->out_pending);
	buf->vb.sequence = cam->out_sequence++;
	cam->frames_in++;
	kick = cam->out_active;
	spin_unlock_irqrestore(&cam->slock, flags);
	if (kick)
		queue_work(cam->wq, &cam->frame_work);
}

static int out_start_streaming(struct vb2_queue *q, unsigned int count)
{
	struct viacam_cam *cam = vb2_get_drv_priv(q);
	unsigned long flags;

	lockdep_assert_held(&cam->lock);
	spin_lock_irqsave(&cam->slock, flags);
	viacam_streamfmt_from_pix(&cam->out_sfmt, &cam->fmt);
	cam->out_active = true;
	spin_unlock_irqrestore(&cam->slock, flags);
	queue_work(cam->wq, &cam->frame_work);
	return 0;
}

/*
 * The producer stops (STREAMOFF, close, or its death): keep a copy of its
 * newest frame so consumers can be shown it while it is away.
 */
static void out_stop_streaming(struct vb2_queue *q)
{
	struct viacam_cam *cam = vb2_get_drv_priv(q);
	struct viacam_buf *held;
	unsigned long flags;
	LIST_HEAD(pending);
	u32 len = 0;

	lockdep_assert_held(&cam->lock);
	spin_lock_irqsave(&cam->slock, flags);
	cam->out_active = false;
	list_splice_init(&cam->out_pending, &pending);
	held = cam->held;
	cam->held = NULL;
	if (held)
		cam->last_valid = false;
	cam->out_sequence = 0;
	spin_unlock_irqrestore(&cam->slock, flags);

	/* After this no worker can be reading held or last_frame. */
	flush_workqueue(cam->wq);

	if (held) {
		len = vb2_get_plane_payload(&held->vb.vb2_buf, 0);
		if (len > cam->last_size) {
			kvfree(cam->last_frame);
			cam->last_size = 0;
			cam->last_frame = kvmalloc(len, GFP_KERNEL);
			if (cam->last_frame)
				cam->last_size = len;
		}
		if (cam->last_frame) {
			memcpy(cam->last_frame, vb2_plane_vaddr(&held->vb.vb2_buf, 0), len);
			spin_lock_irqsave(&cam->slock, flags);
			cam->last_sfmt = cam->out_sfmt;
			cam->last_len = len;
			cam->last_valid = true;
			spin_unlock_irqrestore(&cam->slock, flags);
		}
		list_add(&held->list, &pending);
	}
	viacam_return_list(&pending, VB2_BUF_STATE_ERROR);
}

static const struct vb2_ops viacam_out_qops = {
	.queue_setup		= out_queue_setup,
	.buf_prepare		= out_buf_prepare,
	.buf_queue		= out_buf_queue,
	.start_streaming	= out_start_streaming,
	.stop_streaming		= out_stop_streaming,
	.wait_prepare		= vb2_ops_wait_prepare,
	.wait_finish		= vb2_ops_wait_finish,
};

/* ------------------------------------------------------------------------
 * Setup and state queries
 */

static int viacam_queue_init(struct viacam_cam *cam, struct vb2_queue *q,
			     enum v4l2_buf_type type, const struct vb2_ops *ops)
{
	bool capture = type == V4L2_BUF_TYPE_VIDEO_CAPTURE;

	q->type = type;
	q->io_modes = VB2_MMAP | VB2_USERPTR | VB2_DMABUF | (capture ? VB2_READ : VB2_WRITE);
	q->drv_priv = cam;
	q->buf_struct_size = sizeof(struct viacam_buf);
	q->ops = ops;
	q->mem_ops = &vb2_vmalloc_memops;
	q->timestamp_flags = capture ?
		V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF :
		V4L2_BUF_FLAG_TIMESTAMP_COPY;
	q->lock = &cam->lock;
	return vb2_queue_init(q);
}

int viacam_queues_init(struct viacam_cam *cam)
{
	int ret;

	spin_lock_init(&cam->slock);
	INIT_LIST_HEAD(&cam->cap_queued);
	INIT_LIST_HEAD(&cam->out_pending);
	INIT_WORK(&cam->frame_work, viacam_frame_work);
	INIT_DELAYED_WORK(&cam->repeat_work, viacam_repeat_work);
	cam->last_in = ktime_get();
	cam->wq = alloc_ordered_workqueue("viacam%u", 0, cam->id);
	if (!cam->wq)
		return -ENOMEM;
	ret = viacam_queue_init(cam, &cam->cap_q, V4L2_BUF_TYPE_VIDEO_CAPTURE,
				&viacam_cap_qops);
	if (!ret)
		ret = viacam_queue_init(cam, &cam->out_q, V4L2_BUF_TYPE_VIDEO_OUTPUT,
					&viacam_out_qops);
	return ret;
}

/* Final teardown: no file handle is left, so both queues are stopped. */
void viacam_queues_cleanup(struct viacam_cam *cam)
{
	if (cam->wq) {
		cancel_delayed_work_sync(&cam->repeat_work);
		destroy_workqueue(cam->wq);
		cam->wq = NULL;
	}
	kvfree(cam->last_frame);
	cam->last_frame = NULL;
}

void viacam_stats(struct viacam_cam *cam, u64 *in, u64 *out, u64 *dropped, u64 *repeated,
		  bool *repeating)
{
	unsigned long flags;

	spin_lock_irqsave(&cam->slock, flags);
	*in = cam->frames_in;
	*out = cam->frames_out;
	*dropped = cam->frames_dropped;
	*repeated = cam->frames_repeated;
	*repeating = cam->repeating && cam->cap_active;
	spin_unlock_irqrestore(&cam->slock, flags);
}

bool viacam_out_streaming(struct viacam_cam *cam)
{
	unsigned long flags;
	bool active;

	spin_lock_irqsave(&cam->slock, flags);
	active = cam->out_active;
	spin_unlock_irqrestore(&cam->slock, flags);
	return active;
}
