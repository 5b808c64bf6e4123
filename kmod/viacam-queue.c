// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacam-queue.c - viacam bridge: the vb2 queues (the backend node's, one per
 * capture node) and the frame hand-off.
 *
 * READ THIS FIRST - locking rules of the bridge
 *
 * A camera has one backend node and 1..VIACAM_MAX_CAPTURES capture nodes
 * (struct viacam_consumer): each capture node is an ordinary capture device
 * with its own vb2 queue, streamed by one application at a time, and every
 * streaming node gets each frame (one copy per node).
 *
 * 1. cam->lock (mutex) is vdev->lock of every node of the camera. The V4L2
 *    core takes it around every non-buffer ioctl (and a capture node's
 *    release takes it). Each vb2 queue has a lock of its own as q->lock:
 *    cons->qlock for a capture node's queue, cam->out_qlock for the backend
 *    queue. The core takes a queue's lock for its node's buffer ioctls and the
 *    vb2 fop helpers for read/write/mmap/poll/release; the queue callbacks
 *    take cam->lock inside it (viacam_cb_lock) for the format, counts and
 *    events. No path holds two queue locks. A blocking VIDIOC_DQBUF does not
 *    hold its queue lock while it sleeps (vb2_ops_wait_prepare/finish).
 *    Whatever waits for user space waits under a queue lock alone: the
 *    producer's (a write() copying from it, into a lent capture buffer or by
 *    vb2's write() emulation, USERPTR pinning its pages) under out_qlock, a
 *    consumer's (vb2's read() emulation copying to it, USERPTR pinning) under
 *    its node's qlock. So no consumer waits for the producer's user space or
 *    another consumer's, and neither the producer
 *    nor the control node (QUERY takes cam->lock) waits for a consumer's. No
 *    path waits for user space with cam->lock held: consumer requests are
 *    stored and forwarded as events, and a backend's declarations
 *    (S_FORMATS, S_CTRLS) copy their arrays from user space before cam->lock
 *    is taken (viacam_out_declare).
 *    Order: one queue lock (a cons->qlock or out_qlock) -> cam->lock.
 *    Measurement mode (module parameter queue_lock=0, the 2010 arrangement):
 *    cam->lock is the capture queues' q->lock too, so a consumer's read() or
 *    USERPTR pinning holds it while it waits for the consumer's user space
 *    (TEST-13's uffd-read shows the producer and QUERY waiting then).
 * 2. cam->copy_lock (mutex) is held by whoever takes a capture buffer off a
 *    node's queued list to fill it, until the buffer is done (the worker,
 *    out_buf_queue, DELIVER) or lent (LEND, write()). So fills never
 *    overlap, each node's buffers complete in sequence order, the held frame
 *    is not replaced while it is copied to node after node, and a buffer
 *    read as a repeat source (src_dbuf) is not overwritten meanwhile. A
 *    capture stop_streaming takes it once after detaching its node's
 *    buffers, to wait for a copy in flight. Nothing holding it waits for user
 *    space: the producer fills a lent buffer with copy_lock dropped, holding
 *    a reference to its memory (see "Lending capture buffers" below).
 *    last_frame, the bridge's own copy of a frame to repeat, is read and
 *    written only with copy_lock held.
 * 3. cam->slock (spinlock) protects the hand-off state (each node's queued
 *    list, active, want, sequence and format; held, the repeat source, nactive, the
 *    backend's state, counters). It is held only for pointer and counter
 *    updates: never across a copy, an allocation or a wait.
 * 4. A backend frame queued while every streaming node has had the held frame
 *    (and nothing older is pending) becomes the held frame in out_buf_queue,
 *    and each node with a buffer waiting gets its copy there, in the
 *    producer's QBUF; every other copy from a backend buffer runs in the
 *    camera's ordered workqueue (frame_work, repeat_work). A stop_streaming
 *    callback first detaches its buffers under slock, then flushes the
 *    workqueue (and takes copy_lock once): after that no copy can still touch
 *    them, and it returns them to vb2.
 * 5. Lock order: viacam_devices_lock -> [one queue lock ->] cam->lock ->
 *    control handler lock -> cam->copy_lock -> cam->slock. The worker takes
 *    only copy_lock and slock; out_buf_queue, a lend and write() (out_qlock
 *    held) copy_lock and slock. Completing a buffer of another node's queue
 *    (vb2_buffer_done) needs no queue lock. Mapping a dma-buf (the repeat
 *    source, under copy_lock; write()'s lent buffer, under out_qlock alone)
 *    takes the dma-buf's own lock (6.1: dmabuf->lock, later its reservation
 *    lock) innermost but for slock, as vb2 does under a queue lock when a
 *    DMABUF buffer is queued; nothing of ours is taken inside it.
 *
 * The hand-off keeps the newest backend frame ("held") instead of returning
 * it at once. That gives "latest wins" when no capture buffer is waiting,
 * and a frame to repeat when the producer stalls, without a second copy per
 * frame. The backend queue therefore has at least two buffers. Each
 * streaming node is owed the held frame once (cons->want): a node with no
 * buffer waiting gets it when it queues one, unless a newer frame came.
 * A write() of one whole raw frame while the one streaming node has a
 * buffer waiting skips the backend queue: the bridge lends itself that
 * buffer (MMAP or DMABUF memory), copies the frame from user space straight
 * into it and delivers it as DELIVER does (one copy; vb2's write() emulation
 * and the hand-off would make two). That buffer, or a lent one after
 * DELIVER, then holds the only copy of the newest frame (src_dbuf): the
 * first repeat copies it to last_frame for that node, whether the consumer
 * holds it or not.
 *
 * Consumer isolation (the rules; docs/architecture.md says why):
 *  - no node's frame is ever read from another node's buffer: a consumer
 *    may write into its own buffers at any time (lending is for one
 *    streaming node; a repeat of a frame from a capture buffer goes to that
 *    buffer's node only, last_owner);
 *  - no stream is shown a frame that arrived before its STREAMON (cons->start
 *    against held_in, last_frame_in): a neutral frame, or nothing, instead;
 *  - what a consumer's queue takes is capped by max_queue_mb, counted from
 *    vb2's own buffer count and never from buf_init/buf_cleanup pairs,
 *    which vb2 does not keep (see viacam_buf_init()).
 */
#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/iosys-map.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <media/videobuf2-vmalloc.h>

#include "viacam.h"

static bool queue_lock = true;
module_param(queue_lock, bool, 0444);
MODULE_PARM_DESC(queue_lock,
		 "each capture queue has its own lock (default); 0: the camera's lock, as one lock per camera (measurement mode: a consumer's read() then stalls the camera while it faults)");

/*
 * Fault injection for the tests: bits 0, 1 and 3 each widen one race window
 * to 200 ms, so that tests/integration/TEST-13-races hits it every time; bit 2
 * loses one allocation per camera, so that tests/harness/test-vm-verdicts can
 * show that a leak fails the run on the kmemleak kernel; bit 4 makes a capture
 * stream's stop hold the camera's lock for 2 s (a slow stop: TEST-13 shows
 * that it holds up only that camera, not the control node); bit 5 delays the
 * end of a capture buffer's queueing (cap_buf_queue) by 200 ms, the window in
 * which a frame copied into it would make the consumer's QBUF return DONE;
 * bit 6 makes ADD wait 200 ms between registering a camera's first capture
 * node and its backend node (a consumer may open the capture node then).
 */
static uint inject;
module_param(inject, uint, 0644);
MODULE_PARM_DESC(inject,
		 "tests only: bit 0 delays the worker's copy, bit 1 a direct write()'s copy from user space, bit 3 the copy in a producer's QBUF, bit 5 the end of a capture buffer's queueing, bit 6 an ADD between its capture and backend node, by 200 ms; bit 2 leaks 64 bytes per camera; bit 4 delays a capture stop by 2 s (default 0)");

/*
 * Buffer memory is vmalloc memory that no cgroup is charged for, and anyone
 * who may open a capture node may ask for it: cap what one queue may hold.
 */
static uint max_queue_mb = 1024;
module_param(max_queue_mb, uint, 0644);
MODULE_PARM_DESC(max_queue_mb,
		 "most memory the buffers of one queue may take, in MiB (default 1024)");

void viacam_inject_delay(u32 site)
{
	if (READ_ONCE(inject) & site)
		msleep(site == VIACAM_INJECT_STOP ? 2000 : 200);
}

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

/*
 * Bytes to copy from backend buffer @src into a capture buffer negotiated as
 * @cap, or 0 when @src cannot supply a whole frame: a buffer prepared before
 * a format change may be smaller than the format the stream started with.
 */
static u32 viacam_src_len(struct viacam_buf *src, const struct viacam_streamfmt *cap)
{
	struct vb2_buffer *vb = &src->vb.vb2_buf;
	u32 len = viacam_is_compressed(cap->pixelformat) ?
		  vb2_get_plane_payload(vb, 0) : cap->sizeimage;

	return len <= vb2_plane_size(vb, 0) ? len : 0;
}

/*
 * vb2 callbacks run with q->lock held: cap_qlock or out_qlock (or cam->lock
 * for the capture queue with queue_lock=0). Where q->lock is not cam->lock,
 * a callback takes cam->lock for the format, counts and events.
 */
static void viacam_cb_lock(struct viacam_cam *cam, struct vb2_queue *q)
{
	if (q->lock != &cam->lock)
		mutex_lock(&cam->lock);
	lockdep_assert_held(&cam->lock);
}

static void viacam_cb_unlock(struct viacam_cam *cam, struct vb2_queue *q)
{
	if (q->lock != &cam->lock)
		mutex_unlock(&cam->lock);
}

/* Undo viacam_dbuf_vmap(). */
static void viacam_dbuf_vunmap(struct dma_buf *dbuf, struct iosys_map *map)
{
#ifdef VIACAM_VMAP_UNLOCKED
	dma_buf_vunmap_unlocked(dbuf, map);
#else
	dma_buf_vunmap(dbuf, map);
#endif
}

/*
 * A kernel mapping of dma-buf @dbuf, of our own: a DMABUF capture buffer's
 * memory may be unmapped by vb2 (its consumer queues it with another
 * dma-buf, or frees it) while the bridge still reads or writes it through a
 * reference of its own. Since 6.2 dma_buf_vmap() wants the reservation lock
 * held, and the _unlocked variant takes it (Kbuild defines
 * VIACAM_VMAP_UNLOCKED where it exists). Never called under slock.
 */
static void *viacam_dbuf_vmap(struct dma_buf *dbuf, struct iosys_map *map)
{
#ifdef VIACAM_VMAP_UNLOCKED
	int ret = dma_buf_vmap_unlocked(dbuf, map);
#else
	int ret = dma_buf_vmap(dbuf, map);
#endif

	/* vb2's and our exporters map system memory, never I/O memory. */
	if (!ret && map->is_iomem) {
		viacam_dbuf_vunmap(dbuf, map);
		ret = -EINVAL;
	}
	return ret ? NULL : map->vaddr;
}

/* Neutral grey in @fourcc: YCbCr 0x80/0x80/0x80 or RGB 0x80, 0x80 for GREY. */
static void viacam_fill_neutral(void *dst, u32 len)
{
	memset(dst, 0x80, len);
}

/* Take the oldest waiting capture buffer of @cons. Called with slock held. */
static struct viacam_buf *viacam_take_cap(struct viacam_consumer *cons)
{
	struct viacam_buf *buf;

	lockdep_assert_held(&cons->cam->slock);
	if (!cons->active || list_empty(&cons->queued))
		return NULL;
	buf = list_first_entry(&cons->queued, struct viacam_buf, list);
	list_del(&buf->list);
	buf->vb.sequence = cons->sequence++;
	return buf;
}

/* Undo viacam_take_cap() (slock held); false if the stream stopped meanwhile. */
static bool viacam_untake_cap(struct viacam_consumer *cons, struct viacam_buf *buf)
{
	lockdep_assert_held(&cons->cam->slock);
	if (!cons->active)
		return false;
	list_add(&buf->list, &cons->queued);
	cons->sequence--;
	return true;
}

/* The capture node a capture buffer belongs to. */
static struct viacam_consumer *viacam_buf_cons(struct viacam_buf *buf)
{
	return vb2_get_drv_priv(buf->vb.vb2_buf.vb2_queue);
}

static void viacam_dbuf_put(struct dma_buf *dbuf)
{
	if (dbuf)
		dma_buf_put(dbuf);
}

/*
 * The memory of capture buffer @buf as a lend hands it out: a DMABUF
 * buffer's dma-buf, an MMAP buffer's export (NULL if it was never lent), never
 * a USERPTR buffer's. No reference is taken: the buffer must be the driver's
 * (queued, lent or being filled), so vb2 cannot change its memory meanwhile.
 */
static struct dma_buf *viacam_buf_mem(struct viacam_buf *buf)
{
	struct vb2_buffer *vb = &buf->vb.vb2_buf;

	return vb->memory == VB2_MEMORY_DMABUF ? vb->planes[0].dbuf : buf->dbuf;
}

/* Under slock: may the producer still be writing into @mem (a stale lend of it)? */
static bool viacam_mem_stale(struct viacam_cam *cam, struct dma_buf *mem)
{
	struct viacam_lendrec *rec;

	lockdep_assert_held(&cam->slock);
	if (!mem)
		return false;
	list_for_each_entry(rec, &cam->stale_lends, link)
		if (rec->dbuf == mem)
			return true;
	return false;
}

/*
 * A capture buffer queued by its consumer may be filled now (slock held):
 * onto its node's list, unless the producer may still be writing into its
 * memory (a stale lend of it, whatever the buffer's lend id is now): then it
 * waits on cam->parked until the producer is done.
 */
static void viacam_cap_ready(struct viacam_cam *cam, struct viacam_consumer *cons,
			     struct viacam_buf *buf)
{
	lockdep_assert_held(&cam->slock);
	list_add_tail(&buf->list, viacam_mem_stale(cam, viacam_buf_mem(buf)) ?
		      &cam->parked : &cons->queued);
}

/*
 * Under slock: the stale lend @rec ends (the producer let go of it, or
 * stopped). It moves to @done, which the caller frees after dropping slock
 * (viacam_recs_free), and buffers parked for its memory may be filled again.
 * Returns true if the worker has a frame for one of them.
 */
static bool viacam_stale_end(struct viacam_cam *cam, struct viacam_lendrec *rec,
			     struct list_head *done)
{
	struct viacam_buf *buf, *tmp;
	bool kick = false;

	lockdep_assert_held(&cam->slock);
	list_move_tail(&rec->link, done);
	list_for_each_entry_safe(buf, tmp, &cam->parked, list) {
		struct viacam_consumer *cons = viacam_buf_cons(buf);

		if (viacam_mem_stale(cam, viacam_buf_mem(buf)))
			continue;
		list_move_tail(&buf->list, &cons->queued);
		kick |= cons->active && cons->want && cam->held;
	}
	return kick;
}

/* Free lend records (no lock of ours held): their references to the memory go. */
static void viacam_recs_free(struct list_head *recs)
{
	struct viacam_lendrec *rec, *tmp;

	list_for_each_entry_safe(rec, tmp, recs, link) {
		list_del(&rec->link);
		viacam_dbuf_put(rec->dbuf);
		kfree(rec);
	}
}

/* Does a streaming capture node still want the held frame? slock held. */
static bool viacam_held_wanted(struct viacam_cam *cam)
{
	unsigned int i;

	lockdep_assert_held(&cam->slock);
	for (i = 0; i < cam->ncons; i++)
		if (cam->cons[i].active && cam->cons[i].want)
			return true;
	return false;
}

/*
 * Under slock: the repeat source (src_dbuf) ends. Returns its reference to the
 * frame's memory (src_dbuf), which the caller now owns: it reads the frame
 * through it, or just puts it (viacam_dbuf_put, after dropping slock).
 */
static struct dma_buf *viacam_src_end(struct viacam_cam *cam)
{
	struct dma_buf *dbuf = cam->src_dbuf;

	lockdep_assert_held(&cam->slock);
	cam->src_cons = NULL;
	cam->src_dbuf = NULL;
	return dbuf;
}

/*
 * @buf becomes the held frame (slock held): every streaming node is owed it.
 * Returns the frame held before, for the caller to give back to the producer,
 * and in *@src_put the repeat source's reference, for it to put.
 */
static struct viacam_buf *viacam_hold(struct viacam_cam *cam, struct viacam_buf *buf,
				      struct dma_buf **src_put)
{
	struct viacam_buf *old = cam->held;
	unsigned int i;

	lockdep_assert_held(&cam->slock);
	if (old && !cam->held_shown)
		cam->frames_dropped++;
	cam->held = buf;
	cam->held_shown = false;
	for (i = 0; i < cam->ncons; i++)
		cam->cons[i].want = cam->cons[i].active;
	*src_put = viacam_src_end(cam);	/* held is newer than a lent frame */
	cam->last_in = ktime_get();
	cam->held_in = cam->last_in;
	cam->repeating = false;
	return old;
}

/*
 * The timestamp of the next capture buffer: the producer's own capture time
 * @producer (CLOCK_MONOTONIC ns, given in its QBUF) when it is plausible,
 * else now. Plausible means not in the future, at most VIACAM_TS_MAX_AGE_NS
 * old, and later than the last one this node was given (every node gets the
 * same frame with the same time), so that a producer whose
 * timestamps are stream times (gst's v4l2sink) or 0 (write()) cannot make
 * the capture node's timestamps jump or run backwards. copy_lock held: it
 * orders every capture completion and guards last_ts.
 */
#define VIACAM_TS_MAX_AGE_NS	NSEC_PER_SEC

static u64 viacam_cap_time(struct viacam_cam *cam, struct viacam_consumer *cons, u64 producer)
{
	u64 now = ktime_get_ns();
	u64 ts = now;

	lockdep_assert_held(&cam->copy_lock);
	if (producer && producer <= now && now - producer <= VIACAM_TS_MAX_AGE_NS &&
	    producer > cons->last_ts)
		ts = producer;
	if (ts <= cons->last_ts)
		ts = cons->last_ts + 1;
	cons->last_ts = ts;
	return ts;
}

/*
 * Complete a capture buffer with @len bytes copied from @src (NULL: a neutral
 * frame), captured at @producer_ts by the producer's clock (0: unknown, see
 * viacam_cap_time()). Runs with copy_lock held (worker or out_buf_queue) and
 * no other lock of ours; the buffer was taken off the list under slock, so
 * nothing else touches it.
 */
static void viacam_cap_complete(struct viacam_cam *cam, struct viacam_buf *buf,
				const void *src, u32 len, u64 producer_ts, bool repeat)
{
	struct vb2_buffer *vb = &buf->vb.vb2_buf;
	void *dst = vb2_plane_vaddr(vb, 0);
	unsigned long flags;

	bool copied = src && src != dst;

	if (len > vb2_plane_size(vb, 0))
		len = vb2_plane_size(vb, 0);
	if (copied)
		memcpy(dst, src, len);
	else if (!src)
		viacam_fill_neutral(dst, len);
	/* src == dst: the buffer already holds the frame to repeat. */
	vb2_set_plane_payload(vb, 0, len);
	buf->vb.field = V4L2_FIELD_NONE;
	vb->timestamp = viacam_cap_time(cam, viacam_buf_cons(buf), producer_ts);
	spin_lock_irqsave(&cam->slock, flags);
	cam->frames_out++;
	viacam_buf_cons(buf)->frames_out++;
	if (copied)
		cam->copies++;
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

/* What last_frame is to hold: the frame's format, when it arrived, whose it is. */
struct viacam_keep {
	const struct viacam_streamfmt *sfmt;
	ktime_t in;
	struct viacam_consumer *owner;	/* NULL: a backend buffer's frame, for every node */
};

/*
 * Copy a frame to last_frame, the bridge's own frame to repeat while no
 * backend frame can be shown. copy_lock held, so no repeat reads last_frame
 * meanwhile; the caller made last_valid false under slock first.
 */
static void viacam_keep_frame(struct viacam_cam *cam, const void *src, u32 len,
			      const struct viacam_keep *k)
{
	unsigned long flags;

	lockdep_assert_held(&cam->copy_lock);
	if (len > cam->last_size) {
		kvfree(cam->last_frame);
		cam->last_size = 0;
		cam->last_frame = kvmalloc(len, GFP_KERNEL);
		if (cam->last_frame)
			cam->last_size = len;
	}
	if (!cam->last_frame)
		return;
	memcpy(cam->last_frame, src, len);
	spin_lock_irqsave(&cam->slock, flags);
	cam->copies++;
	cam->last_sfmt = *k->sfmt;
	cam->last_len = len;
	cam->last_frame_in = k->in;
	cam->last_owner = k->owner;
	cam->last_valid = true;
	spin_unlock_irqrestore(&cam->slock, flags);
}

/*
 * viacam_keep_frame() of the frame in the repeat source, read through the
 * reference to its memory taken at DELIVER (src_dbuf), mapped here: the
 * capture buffer itself may have been freed or, for DMABUF, queued with
 * another dma-buf since. copy_lock held.
 */
static void viacam_keep_dbuf(struct viacam_cam *cam, struct dma_buf *dbuf, u32 len,
			     const struct viacam_keep *k)
{
	struct iosys_map map;
	void *vaddr;

	lockdep_assert_held(&cam->copy_lock);
	vaddr = viacam_dbuf_vmap(dbuf, &map);
	if (!vaddr)
		return;
	viacam_keep_frame(cam, vaddr, len, k);
	viacam_dbuf_vunmap(dbuf, &map);
}

/* ------------------------------------------------------------------------
 * The worker: every copy happens here
 */

/*
 * Give the held frame @src to every streaming node that is owed it and has a
 * buffer waiting: one copy each, in node order. copy_lock held, so nothing
 * else fills a capture buffer or replaces the held frame meanwhile, except
 * the producer's stop_streaming, which clears held under slock alone and then
 * waits for this copy (it flushes the worker; in out_buf_queue it cannot run
 * at all, both hold out_qlock). So @src is read, never cam->held.
 */
static void viacam_deliver_held(struct viacam_cam *cam, struct viacam_buf *src, u32 site)
{
	struct viacam_buf *cap;
	unsigned long flags;
	unsigned int i;
	u32 len;

	lockdep_assert_held(&cam->copy_lock);
	for (i = 0; i < cam->ncons; i++) {
		struct viacam_consumer *cons = &cam->cons[i];

		cap = NULL;
		len = 0;
		spin_lock_irqsave(&cam->slock, flags);
		if (cam->held == src && cons->active && cons->want &&
		    viacam_sfmt_fits(&cam->out_sfmt, &cons->sfmt)) {
			len = viacam_src_len(src, &cons->sfmt);
			cap = len ? viacam_take_cap(cons) : NULL;
		}
		if (cap) {
			cons->want = false;
			cam->held_shown = true;
		}
		spin_unlock_irqrestore(&cam->slock, flags);
		if (!cap)
			continue;
		viacam_inject_delay(site);
		viacam_cap_complete(cam, cap, vb2_plane_vaddr(&src->vb.vb2_buf, 0), len,
				    src->vb.vb2_buf.timestamp, false);
	}
}

static void viacam_frame_work(struct work_struct *work)
{
	struct viacam_cam *cam = container_of(work, struct viacam_cam, frame_work);
	struct viacam_buf *src, *newest, *old, *buf, *tmp;
	struct dma_buf *src_put = NULL;
	LIST_HEAD(done);
	unsigned long flags;

	mutex_lock(&cam->copy_lock);
	spin_lock_irqsave(&cam->slock, flags);
	if (cam->out_active && !list_empty(&cam->out_pending)) {
		/* Latest wins: only the newest pending frame can still be shown. */
		newest = list_last_entry(&cam->out_pending, struct viacam_buf, list);
		list_del(&newest->list);
		/* Oldest first, so the producer dequeues in sequence order. */
		old = viacam_hold(cam, newest, &src_put);
		if (old)
			list_add_tail(&old->list, &done);
		list_for_each_entry_safe(buf, tmp, &cam->out_pending, list) {
			list_move_tail(&buf->list, &done);
			cam->frames_dropped++;
		}
	}
	src = cam->held;
	spin_unlock_irqrestore(&cam->slock, flags);
	viacam_dbuf_put(src_put);

	/* Frames nobody will see go back to the producer. */
	viacam_return_list(&done, VB2_BUF_STATE_DONE);
	if (src)
		viacam_deliver_held(cam, src, VIACAM_INJECT_WORKER);
	mutex_unlock(&cam->copy_lock);
}

/*
 * One repeat for @cons (copy_lock held): its oldest waiting buffer gets the
 * best frame there is that arrived after its STREAMON (a stream never starts
 * with a picture taken before it, perhaps for another user). The source is,
 * in order: the held frame if it fits; last_frame if it fits and is not
 * another node's (viacam_repeat_work put there a frame that only a capture
 * buffer held, which its consumer may have written into); else a neutral
 * frame (none exists for a compressed format: the buffer waits).
 */
static void viacam_repeat_one(struct viacam_cam *cam, struct viacam_consumer *cons)
{
	struct viacam_buf *cap;
	const void *src = NULL;
	unsigned long flags;
	bool wait = false;
	u32 len;

	spin_lock_irqsave(&cam->slock, flags);
	cap = viacam_take_cap(cons);
	if (!cap) {
		spin_unlock_irqrestore(&cam->slock, flags);
		return;
	}
	len = cons->sfmt.sizeimage;
	if (cam->held && !ktime_before(cam->held_in, cons->start) &&
	    viacam_sfmt_fits(&cam->out_sfmt, &cons->sfmt) &&
	    viacam_src_len(cam->held, &cons->sfmt)) {
		src = vb2_plane_vaddr(&cam->held->vb.vb2_buf, 0);
		len = viacam_src_len(cam->held, &cons->sfmt);
	} else if (cam->last_valid && !ktime_before(cam->last_frame_in, cons->start) &&
		   (!cam->last_owner || cam->last_owner == cons) &&
		   viacam_sfmt_fits(&cam->last_sfmt, &cons->sfmt)) {
		src = cam->last_frame;
		len = cam->last_len;
	} else if (viacam_is_compressed(cons->sfmt.pixelformat)) {
		/* No neutral frame exists for a compressed format. */
		wait = true;
	}
	if (wait) {
		viacam_untake_cap(cons, cap);
		cap = NULL;
	}
	spin_unlock_irqrestore(&cam->slock, flags);

	if (cap)
		viacam_cap_complete(cam, cap, src, len, 0, true);
}

/*
 * Once the timeout has passed without a real frame, every streaming node gets
 * one repeated frame per negotiated interval: at least 1 ms apart, at most
 * VIACAM_REPEAT_MAX_US (usecs_to_jiffies() takes 32 bits: a declared
 * interval of 2^26 s made that 0, and the work ran without pause).
 */
#define VIACAM_REPEAT_MAX_US	((u64)U32_MAX)

static void viacam_repeat_work(struct work_struct *work)
{
	struct viacam_cam *cam = container_of(to_delayed_work(work), struct viacam_cam,
					      repeat_work);
	unsigned long flags, delay;
	ktime_t now = ktime_get(), due;
	struct viacam_streamfmt sfmt;
	struct dma_buf *src = NULL;
	struct viacam_keep keep;
	u64 interval_us;
	unsigned int i;
	u32 len = 0;

	mutex_lock(&cam->copy_lock);
	spin_lock_irqsave(&cam->slock, flags);
	if (!cam->nactive) {
		spin_unlock_irqrestore(&cam->slock, flags);
		mutex_unlock(&cam->copy_lock);
		return;
	}
	due = ktime_add_ms(cam->last_in, cam->timeout_ms);
	if (ktime_after(due, now) && !cam->repeating) {
		delay = msecs_to_jiffies(ktime_ms_delta(due, now) + 1);
		spin_unlock_irqrestore(&cam->slock, flags);
		mutex_unlock(&cam->copy_lock);
		queue_delayed_work(cam->wq, &cam->repeat_work, delay);
		return;
	}
	cam->repeating = true;
	cam->wr_direct = false;
	/*
	 * The newest frame exists only in a capture buffer (a direct write()'s or
	 * a lent one's, the repeat source): keep a copy of it (last_frame) to
	 * repeat to that buffer's node. Its consumer may hold that buffer, or
	 * have freed it; the memory stays ours to read (src_dbuf, a reference of
	 * our own), and reading it does not disturb the consumer.
	 */
	if (cam->src_dbuf) {
		len = cam->src_len;
		sfmt = cam->src_cons->sfmt;
		keep = (struct viacam_keep){ &sfmt, cam->src_in, cam->src_cons };
		src = viacam_src_end(cam);
		cam->last_valid = false;
	}
	interval_us = div_u64((u64)cam->cap_interval_num * USEC_PER_SEC,
			      max_t(u32, cam->cap_interval_den, 1));
	spin_unlock_irqrestore(&cam->slock, flags);

	if (src) {
		viacam_keep_dbuf(cam, src, len, &keep);
		dma_buf_put(src);
	}
	for (i = 0; i < cam->ncons; i++)
		viacam_repeat_one(cam, &cam->cons[i]);
	mutex_unlock(&cam->copy_lock);
	delay = usecs_to_jiffies(clamp_t(u64, interval_us, 1000, VIACAM_REPEAT_MAX_US));
	queue_delayed_work(cam->wq, &cam->repeat_work, delay);
}

/* ------------------------------------------------------------------------
 * Buffer sizes and the memory cap (queue_setup of both queues)
 */

/* The biggest frame the camera can be switched to. Called with cam->lock held. */
static u32 viacam_max_frame(struct viacam_cam *cam)
{
	struct v4l2_pix_format pix;
	u32 i, max = cam->fmt.sizeimage;

	lockdep_assert_held(&cam->lock);
	for (i = 0; i < cam->nformats; i++) {
		const struct viacam_format *f = &cam->formats[i];

		viacam_fill_pix(&pix, f->pixelformat, f->width, f->height, f->sizeimage);
		max = max(max, pix.sizeimage);
	}
	return max;
}

/*
 * The camera of a queue: the backend queue's drv_priv is the camera, a
 * capture queue's its node (struct viacam_consumer).
 */
static struct viacam_cam *viacam_q_cam(struct vb2_queue *q)
{
	return q->type == V4L2_BUF_TYPE_VIDEO_OUTPUT ? vb2_get_drv_priv(q) :
	       ((struct viacam_consumer *)vb2_get_drv_priv(q))->cam;
}

/*
 * READ THIS before keeping state in buf_init/buf_cleanup: vb2 does not pair
 * them for USERPTR and DMABUF memory (seen in 6.1 and 6.12). A QBUF whose
 * dma-buf fd is bad or too short, or whose USERPTR length is too short,
 * releases the buffer's memory without buf_cleanup; the next QBUF calls
 * buf_init again; __vb2_queue_free() calls buf_cleanup only for buffers that
 * still have memory. So nothing that must be undone lives here: the number of
 * buffers is vb2's own (viacam_q_num_buffers()), a lend's reference to the
 * memory is the lend record's. Only an MMAP buffer's export (buf->dbuf) is
 * put here: vb2 calls buf_init right after allocating MMAP memory and
 * buf_cleanup before freeing it, always.
 */
static int viacam_buf_init(struct vb2_buffer *vb)
{
	struct viacam_cam *cam = viacam_q_cam(vb->vb2_queue);

	/* A capture buffer's id for VIACAM_IOC_LEND: never reused while the camera exists. */
	if (vb->vb2_queue->type == V4L2_BUF_TYPE_VIDEO_CAPTURE)
		to_viacam_buf(vb)->lend_id = atomic_inc_return(&cam->lend_ids);
	return 0;
}

static void viacam_buf_cleanup(struct vb2_buffer *vb)
{
	struct viacam_buf *buf = to_viacam_buf(vb);

	/* A producer that still maps a lend of it keeps the memory until it lets go. */
	viacam_dbuf_put(buf->dbuf);
	buf->dbuf = NULL;
}

/*
 * The biggest plane a buffer may have: CREATE_BUFS may ask for up to twice
 * the current format's size, the format's size and 1 MiB (what V4L2 lets an
 * application add, as v4l2-compliance checks) or the biggest frame the camera
 * offers, whichever is most; a USERPTR QBUF may pin no more than that.
 * cam->lock held.
 */
static u32 viacam_plane_max(struct viacam_cam *cam)
{
	u64 size = cam->fmt.sizeimage;

	lockdep_assert_held(&cam->lock);
	size = max3(2 * size, size + SZ_1M, (u64)viacam_max_frame(cam));
	return min_t(u64, size, U32_MAX - PAGE_SIZE);
}

/*
 * queue_setup of both queues: REQBUFS gets the current format's size;
 * CREATE_BUFS (*nplanes set) may ask for more, up to viacam_plane_max().
 * *nbuffers is cut so that all buffers of the queue fit in max_queue_mb
 * (a USERPTR buffer counted at the most a QBUF may pin); -ENOMEM when not
 * even one does.
 */
static int viacam_queue_sizes(struct vb2_queue *q, unsigned int *nbuffers,
			      unsigned int *nplanes, unsigned int sizes[])
{
	struct viacam_cam *cam = viacam_q_cam(q);
	u64 budget = (u64)READ_ONCE(max_queue_mb) << 20;
	unsigned int have = viacam_q_num_buffers(q);
	u32 fmt_size, plane_max;
	u64 size, fit;

	viacam_cb_lock(cam, q);
	fmt_size = cam->fmt.sizeimage;
	plane_max = viacam_plane_max(cam);
	viacam_cb_unlock(cam, q);

	if (*nplanes) {
		if (*nplanes != 1 || sizes[0] < fmt_size || sizes[0] > plane_max)
			return -EINVAL;
	} else {
		*nplanes = 1;
		sizes[0] = fmt_size;
	}
	size = PAGE_ALIGN((u64)(q->memory == VB2_MEMORY_USERPTR ? plane_max : sizes[0]));
	fit = div64_u64(budget, size);
	if (fit <= have)
		return -ENOMEM;
	if (*nbuffers > fit - have)
		*nbuffers = fit - have;
	return 0;
}

/* ------------------------------------------------------------------------
 * Capture queue (consumer side)
 */

static int cap_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
			   unsigned int *nplanes, unsigned int sizes[],
			   struct device *alloc_devs[])
{
	return viacam_queue_sizes(q, nbuffers, nplanes, sizes);
}

static int cap_buf_prepare(struct vb2_buffer *vb)
{
	struct viacam_cam *cam = viacam_q_cam(vb->vb2_queue);
	u32 size;

	viacam_cb_lock(cam, vb->vb2_queue);
	size = cam->fmt.sizeimage;
	viacam_cb_unlock(cam, vb->vb2_queue);
	return vb2_plane_size(vb, 0) < size ? -EINVAL : 0;
}

static void cap_buf_queue(struct vb2_buffer *vb)
{
	struct viacam_consumer *cons = vb2_get_drv_priv(vb->vb2_queue);
	struct viacam_cam *cam = cons->cam;
	struct viacam_buf *buf = to_viacam_buf(vb);
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&cam->slock, flags);
	if (cons->in_qbuf) {
		/* viacam_qbuf makes it fillable once the QBUF is done. */
		list_add_tail(&buf->list, &cons->staged);
		spin_unlock_irqrestore(&cam->slock, flags);
		viacam_inject_delay(VIACAM_INJECT_CAPQ);
		return;
	}
	viacam_cap_ready(cam, cons, buf);
	kick = cons->active && cam->held && cons->want;
	spin_unlock_irqrestore(&cam->slock, flags);
	if (kick)
		queue_work(cam->wq, &cam->frame_work);
	viacam_inject_delay(VIACAM_INJECT_CAPQ);
}

/*
 * VIDIOC_QBUF of a capture node (its queue's lock held by the core). The
 * buffer is staged while vb2 fills in what QBUF returns, and only then may a
 * frame be copied into it: otherwise the producer's QBUF or the worker could
 * complete it in between, and the consumer's QBUF would return it as DONE.
 * A USERPTR buffer longer than viacam_plane_max() is refused before vb2 pins
 * it: queue_setup counted each buffer at that size against max_queue_mb.
 */
int viacam_qbuf(struct file *file, void *fh, struct v4l2_buffer *b)
{
	struct viacam_consumer *cons = vdev_to_cons(video_devdata(file));
	struct viacam_cam *cam = cons->cam;
	struct viacam_buf *buf, *tmp;
	unsigned long flags;
	bool kick = false;
	u32 plane_max;
	int ret;

	if (b->memory == V4L2_MEMORY_USERPTR) {
		viacam_cb_lock(cam, &cons->q);
		plane_max = viacam_plane_max(cam);
		viacam_cb_unlock(cam, &cons->q);
		if (b->length > PAGE_ALIGN(plane_max))
			return -EINVAL;
	}
	spin_lock_irqsave(&cam->slock, flags);
	cons->in_qbuf = true;
	spin_unlock_irqrestore(&cam->slock, flags);
	ret = vb2_ioctl_qbuf(file, fh, b);
	spin_lock_irqsave(&cam->slock, flags);
	cons->in_qbuf = false;
	list_for_each_entry_safe(buf, tmp, &cons->staged, list) {
		list_del(&buf->list);
		viacam_cap_ready(cam, cons, buf);
		kick = true;
	}
	kick = kick && cons->active && cam->held && cons->want;
	spin_unlock_irqrestore(&cam->slock, flags);
	if (kick)
		queue_work(cam->wq, &cam->frame_work);
	return ret;
}

static int cap_start_streaming(struct vb2_queue *q, unsigned int count)
{
	struct viacam_consumer *cons = vb2_get_drv_priv(q);
	struct viacam_cam *cam = cons->cam;
	unsigned long flags;
	ktime_t now = ktime_get();
	bool first;

	viacam_cb_lock(cam, q);
	spin_lock_irqsave(&cam->slock, flags);
	viacam_streamfmt_from_pix(&cons->sfmt, &cam->fmt);
	cons->sequence = 0;
	cons->active = true;
	cons->start = now;
	/*
	 * A new stream starts with the producer's next frame, not with one that
	 * arrived before it: that frame may be old, and handing it out at once
	 * would make the first (non-blocking) DQBUF or read() succeed or fail
	 * depending on timing. It is still repeated if the producer stalls.
	 */
	cons->want = false;
	first = !cam->nactive++;
	if (first) {
		cam->cap_interval_num = cam->interval.numerator;
		cam->cap_interval_den = cam->interval.denominator;
		/* The timeout counts from now if the backend has been quiet for longer. */
		if (ktime_before(cam->last_in, now) && !cam->out_active)
			cam->last_in = now;
		cam->repeating = false;
	}
	spin_unlock_irqrestore(&cam->slock, flags);

	/* The backend hears of the first stream only; the others share it. */
	if (first)
		viacam_send_stream_event(cam, VIACAM_EVENT_STREAM_START);
	viacam_notify_consumers(cam);
	queue_work(cam->wq, &cam->frame_work);
	if (first)
		queue_delayed_work(cam->wq, &cam->repeat_work, msecs_to_jiffies(cam->timeout_ms));
	viacam_cb_unlock(cam, q);
	return 0;
}

/*
 * A capture node stops (STREAMOFF, close, its consumer's death). Only its own
 * buffers are touched: the other nodes stream on, and the backend hears
 * STREAM_STOP when the last one stops.
 */
static void cap_stop_streaming(struct vb2_queue *q)
{
	struct viacam_consumer *cons = vb2_get_drv_priv(q);
	struct viacam_cam *cam = cons->cam;
	struct viacam_buf *buf, *tmp;
	struct dma_buf *src = NULL;
	unsigned long flags;
	LIST_HEAD(queued);
	bool last;

	viacam_cb_lock(cam, q);
	spin_lock_irqsave(&cam->slock, flags);
	cons->active = false;
	cons->want = false;
	list_splice_init(&cons->queued, &queued);
	list_splice_tail_init(&cons->staged, &queued);
	/*
	 * Its lent buffers come back too, without waiting for the producer: a
	 * DELIVER or UNLEND of them says ESTALE. Until then the producer may
	 * still write into their memory: their lend records become stale
	 * lends, and a buffer queued with that memory is parked, not filled
	 * (viacam_cap_ready). Parked ones come back as well.
	 */
	list_for_each_entry_safe(buf, tmp, &cam->lent, list) {
		if (viacam_buf_cons(buf) != cons)
			continue;
		buf->lent = false;
		list_add_tail(&buf->rec->link, &cam->stale_lends);
		buf->rec = NULL;
		list_move_tail(&buf->list, &queued);
	}
	list_for_each_entry_safe(buf, tmp, &cam->parked, list)
		if (viacam_buf_cons(buf) == cons)
			list_move_tail(&buf->list, &queued);
	/* Frames from its buffers were for it alone: no later stream gets them. */
	if (cam->src_cons == cons)
		src = viacam_src_end(cam);
	if (cam->last_owner == cons)
		cam->last_valid = false;
	last = !--cam->nactive;
	/* No capture buffer waits now: a write() goes through vb2's queue. */
	cam->wr_direct = false;
	spin_unlock_irqrestore(&cam->slock, flags);
	viacam_dbuf_put(src);

	/* A copy in flight completes its own buffer; wait for it. */
	viacam_inject_delay(VIACAM_INJECT_STOP);
	if (last)
		cancel_delayed_work_sync(&cam->repeat_work);
	flush_workqueue(cam->wq);
	mutex_lock(&cam->copy_lock);
	mutex_unlock(&cam->copy_lock);
	viacam_return_list(&queued, VB2_BUF_STATE_ERROR);

	if (last)
		viacam_send_event(cam, VIACAM_EVENT_STREAM_STOP, NULL, 0);
	viacam_notify_consumers(cam);
	viacam_cb_unlock(cam, q);
}

static const struct vb2_ops viacam_cap_qops = {
	.queue_setup		= cap_queue_setup,
	.buf_init		= viacam_buf_init,
	.buf_cleanup		= viacam_buf_cleanup,
	.buf_prepare		= cap_buf_prepare,
	.buf_queue		= cap_buf_queue,
	.start_streaming	= cap_start_streaming,
	.stop_streaming		= cap_stop_streaming,
	VIACAM_VB2_WAIT_CALLBACKS
};

/* ------------------------------------------------------------------------
 * Backend queue (producer side)
 */

static int out_queue_setup(struct vb2_queue *q, unsigned int *nbuffers,
			   unsigned int *nplanes, unsigned int sizes[],
			   struct device *alloc_devs[])
{
	/*
	 * One buffer stays with the bridge (held): the producer needs another.
	 * REQBUFS (no *nplanes) gets two; CREATE_BUFS gets what it asks for,
	 * and STREAMON refuses a queue of fewer (viacam_out_streamon()).
	 */
	if (!*nplanes && *nbuffers < VIACAM_OUT_MIN_BUFS)
		*nbuffers = VIACAM_OUT_MIN_BUFS;
	return viacam_queue_sizes(q, nbuffers, nplanes, sizes);
}

static int out_buf_prepare(struct vb2_buffer *vb)
{
	struct viacam_cam *cam = vb2_get_drv_priv(vb->vb2_queue);
	struct vb2_v4l2_buffer *vbuf = to_vb2_v4l2_buffer(vb);
	unsigned long payload = vb2_get_plane_payload(vb, 0);
	bool compressed;
	u32 size;

	viacam_cb_lock(cam, vb->vb2_queue);
	size = cam->fmt.sizeimage;
	compressed = viacam_is_compressed(cam->fmt.pixelformat);
	viacam_cb_unlock(cam, vb->vb2_queue);
	if (vb2_plane_size(vb, 0) < size)
		return -EINVAL;
	/*
	 * write() (vb2's file I/O emulation) queues its buffers with a payload
	 * of 0 on these kernels: the v4l2 layer overwrites the byte count the
	 * emulation set. A raw frame is always a full frame, so take it as one.
	 */
	if (!payload && !compressed) {
		payload = size;
		vb2_set_plane_payload(vb, 0, size);
	}
	/* A compressed frame through write(): as long as the write() (wr_len). */
	if (!payload && compressed && vb->vb2_queue->fileio) {
		payload = min_t(unsigned long, cam->wr_len, vb2_plane_size(vb, 0));
		vb2_set_plane_payload(vb, 0, payload);
	}
	if (compressed) {
		if (!payload || payload > size)
			return -EINVAL;
	} else if (payload < size) {
		return -EINVAL;
	}
	vbuf->field = V4L2_FIELD_NONE;
	return 0;
}

/*
 * A backend frame is queued (QBUF, or vb2's write() emulation). When nothing
 * older is pending and every streaming node has had the held frame, it
 * becomes the held frame right here, and each node with a buffer waiting gets
 * its copy in the producer's call: no hand-over to the worker, so consumers
 * wake at once. A node with no buffer waiting gets it when it queues one.
 * Otherwise the worker takes the frame in order.
 */
static void out_buf_queue(struct vb2_buffer *vb)
{
	struct viacam_cam *cam = vb2_get_drv_priv(vb->vb2_queue);
	struct viacam_buf *buf = to_viacam_buf(vb), *old = NULL;
	struct dma_buf *src_put = NULL;
	unsigned long flags;
	bool now = false, kick = false;

	mutex_lock(&cam->copy_lock);
	spin_lock_irqsave(&cam->slock, flags);
	buf->vb.sequence = cam->out_sequence++;
	cam->frames_in++;
	/* vb2's write() emulation copied this frame from user space. */
	if (vb->vb2_queue->fileio)
		cam->copies++;
	if (cam->out_active && list_empty(&cam->out_pending) && !viacam_held_wanted(cam)) {
		old = viacam_hold(cam, buf, &src_put);
		now = true;
	} else {
		list_add_tail(&buf->list, &cam->out_pending);
		kick = cam->out_active;
	}
	spin_unlock_irqrestore(&cam->slock, flags);
	viacam_dbuf_put(src_put);
	if (now)
		viacam_deliver_held(cam, buf, VIACAM_INJECT_QBUF);
	mutex_unlock(&cam->copy_lock);
	/* The frame held before was shown already: the producer gets it back. */
	if (old)
		vb2_buffer_done(&old->vb.vb2_buf, VB2_BUF_STATE_DONE);
	if (kick)
		queue_work(cam->wq, &cam->frame_work);
}

static int out_start_streaming(struct vb2_queue *q, unsigned int count)
{
	struct viacam_cam *cam = vb2_get_drv_priv(q);
	unsigned long flags;

	viacam_cb_lock(cam, q);
	spin_lock_irqsave(&cam->slock, flags);
	viacam_streamfmt_from_pix(&cam->out_sfmt, &cam->fmt);
	cam->out_active = true;
	spin_unlock_irqrestore(&cam->slock, flags);
	queue_work(cam->wq, &cam->frame_work);
	viacam_cb_unlock(cam, q);
	return 0;
}

/*
 * The producer stops (STREAMOFF, close, or its death): keep a copy of its
 * newest frame so consumers can be shown it while it is away.
 */
static void out_stop_streaming(struct vb2_queue *q)
{
	struct viacam_cam *cam = vb2_get_drv_priv(q);
	struct viacam_buf *held, *buf, *tmp;
	struct viacam_lendrec *rec, *rtmp;
	struct viacam_keep keep;
	unsigned long flags;
	LIST_HEAD(pending);
	LIST_HEAD(recs);

	viacam_cb_lock(cam, q);
	cam->wr_partial = 0;
	spin_lock_irqsave(&cam->slock, flags);
	cam->out_active = false;
	list_splice_init(&cam->out_pending, &pending);
	/* Lends end: their buffers wait for frames on their nodes again. */
	list_for_each_entry_safe(buf, tmp, &cam->lent, list) {
		buf->lent = false;
		list_add_tail(&buf->rec->link, &recs);
		buf->rec = NULL;
		list_move(&buf->list, &viacam_buf_cons(buf)->queued);
	}
	/* So do the stale ones: the producer no longer writes into any buffer. */
	list_for_each_entry_safe(rec, rtmp, &cam->stale_lends, link)
		viacam_stale_end(cam, rec, &recs);
	held = cam->held;
	cam->held = NULL;
	if (held)
		cam->last_valid = false;
	keep = (struct viacam_keep){ &cam->out_sfmt, cam->held_in, NULL };
	cam->out_sequence = 0;
	spin_unlock_irqrestore(&cam->slock, flags);
	viacam_recs_free(&recs);

	/* After this no worker can be reading held or last_frame. */
	flush_workqueue(cam->wq);

	/* Its newest frame, to show while it is away (to streams begun before it came). */
	if (held) {
		mutex_lock(&cam->copy_lock);
		viacam_keep_frame(cam, vb2_plane_vaddr(&held->vb.vb2_buf, 0),
				  vb2_get_plane_payload(&held->vb.vb2_buf, 0), &keep);
		mutex_unlock(&cam->copy_lock);
		list_add(&held->list, &pending);
	}
	viacam_return_list(&pending, VB2_BUF_STATE_ERROR);
	viacam_cb_unlock(cam, q);
}

static const struct vb2_ops viacam_out_qops = {
	.queue_setup		= out_queue_setup,
	.buf_init		= viacam_buf_init,
	.buf_cleanup		= viacam_buf_cleanup,
	.buf_prepare		= out_buf_prepare,
	.buf_queue		= out_buf_queue,
	.start_streaming	= out_start_streaming,
	.stop_streaming		= out_stop_streaming,
	VIACAM_VB2_WAIT_CALLBACKS
};

/* ------------------------------------------------------------------------
 * Lending capture buffers: VIACAM_IOC_LEND, _DELIVER, _UNLEND, and write()
 *
 * A lent capture buffer is off its node's queued list and on cam->lent
 * (slock); only the producer writes it until DELIVER or UNLEND, and nothing
 * of ours fills, completes or reads it meanwhile. Each lend has a record of
 * the bridge's own (struct viacam_lendrec, buf->rec while lent) with a
 * reference to the buffer's memory, taken for that lend: so the producer may
 * go on writing into it after the node has stopped and freed the buffer, and
 * a buffer queued again with that memory waits (parked) until the producer
 * lets go. The buffer itself is found again by its id only. The calls run
 * under out_qlock (so they are ordered with the producer's STREAMOFF, which
 * ends all lends) and take copy_lock around the take and the delivery, never
 * while user space is accessed. A node's stop takes its lent buffers back
 * (ERROR, like its queued ones) without waiting for the producer; the lend
 * then answers ESTALE.
 *
 * Consumers are kept apart: a consumer can always write into its own
 * buffers (mmap, its own dma-buf), so no other node's frame is ever copied
 * from one. A buffer is lent only while its node is the one streaming; with
 * several, frames come through backend buffers (one copy per node), and a
 * lent frame delivered after a second node started goes to its own node
 * only.
 *
 * write() of a whole raw frame uses the same lend inside the kernel: the
 * frame is copied from user space straight into a lent buffer (its only
 * copy) and delivered as DELIVER delivers (viacam_write_lent).
 */

/*
 * Under slock: a buffer to lend, moved to cam->lent: the first waiting buffer
 * of the streaming node, if it is the only one and may take a frame of format
 * @sfmt. MMAP memory (the bridge exports it) or DMABUF memory (the
 * consumer's dma-buf is lent itself); a USERPTR buffer's pages are the
 * consumer's process's, and cannot be handed on. @uapi: for VIACAM_IOC_LEND,
 * which hands the memory to user space: vb2 exports no buffer of a read()
 * queue, and a consumer's dma-buf opened read-only, or whose exporter has no
 * mmap, cannot be mapped for writing. write() fills the buffer in the
 * kernel, so those serve it.
 */
static struct viacam_buf *viacam_lend_take(struct viacam_cam *cam,
					   const struct viacam_streamfmt *sfmt, bool uapi)
{
	struct viacam_buf *buf;
	unsigned int i;

	lockdep_assert_held(&cam->slock);
	if (cam->nactive != 1)
		return NULL;
	for (i = 0; i < cam->ncons; i++) {
		struct viacam_consumer *cons = &cam->cons[i];

		if (!cons->active || (uapi && cons->q.fileio) ||
		    cons->q.memory == VB2_MEMORY_USERPTR || !viacam_sfmt_fits(sfmt, &cons->sfmt))
			continue;
		list_for_each_entry(buf, &cons->queued, list) {
			struct dma_buf *theirs = buf->vb.vb2_buf.planes[0].dbuf;

			/* The repeat source stays as it is until a newer frame exists. */
			if (cam->src_dbuf && viacam_buf_mem(buf) == cam->src_dbuf)
				continue;
			if (uapi && cons->q.memory == VB2_MEMORY_DMABUF &&
			    (!(theirs->file->f_mode & FMODE_WRITE) || !theirs->ops->mmap))
				continue;
			list_move_tail(&buf->list, &cam->lent);
			buf->lent = true;
			return buf;
		}
	}
	return NULL;
}

/*
 * A new reference to the memory of @buf, just lent (copy_lock held, so its
 * node's stop cannot have returned it to vb2 yet): a DMABUF buffer's is the
 * consumer's own dma-buf; an MMAP buffer's is exported on its first lend and
 * kept in buf->dbuf until buf_cleanup, so that every lend of it hands out
 * the same dma-buf.
 */
static struct dma_buf *viacam_lend_mem(struct viacam_buf *buf)
{
	struct vb2_buffer *vb = &buf->vb.vb2_buf;
	struct dma_buf *dbuf;

	if (vb->memory == VB2_MEMORY_MMAP && !buf->dbuf) {
		dbuf = vb->vb2_queue->mem_ops->get_dmabuf(vb, vb->planes[0].mem_priv, O_RDWR);
		if (IS_ERR_OR_NULL(dbuf))
			return dbuf ? dbuf : ERR_PTR(-EINVAL);
		buf->dbuf = dbuf;
	}
	dbuf = viacam_buf_mem(buf);
	get_dma_buf(dbuf);
	return dbuf;
}

/*
 * Under slock: the lent buffer @id, taken off cam->lent, or NULL. Its lend
 * record goes to *@rec: the caller frees it (viacam_recs_free), or takes its
 * reference to the memory.
 */
static struct viacam_buf *viacam_lend_find(struct viacam_cam *cam, u32 id,
					   struct viacam_lendrec **rec)
{
	struct viacam_buf *buf;

	lockdep_assert_held(&cam->slock);
	list_for_each_entry(buf, &cam->lent, list) {
		if (buf->lend_id == id) {
			list_del(&buf->list);
			buf->lent = false;
			*rec = buf->rec;
			buf->rec = NULL;
			return buf;
		}
	}
	return NULL;
}

/*
 * Under slock: the producer has let go of the lend @id, which its node's stop
 * ended (it said DELIVER or UNLEND and hears ESTALE): its record goes to
 * @done. True: kick the worker.
 */
static bool viacam_lend_stale_end(struct viacam_cam *cam, u32 id, struct list_head *done)
{
	struct viacam_lendrec *rec;

	lockdep_assert_held(&cam->slock);
	list_for_each_entry(rec, &cam->stale_lends, link)
		if (rec->id == id)
			return viacam_stale_end(cam, rec, done);
	return false;
}

/* Under slock: a buffer whose lend ends unfilled goes back to its node's list. */
static void viacam_lend_return(struct viacam_cam *cam, struct viacam_buf *buf)
{
	lockdep_assert_held(&cam->slock);
	list_add(&buf->list, &viacam_buf_cons(buf)->queued);
}

/* End the lend @id unfilled: -ESTALE if it ended already. */
static long viacam_unlend(struct viacam_cam *cam, u32 id)
{
	struct viacam_lendrec *rec = NULL;
	struct viacam_buf *buf;
	unsigned long flags;
	bool kick = false;
	LIST_HEAD(recs);

	mutex_lock(&cam->copy_lock);
	spin_lock_irqsave(&cam->slock, flags);
	buf = viacam_lend_find(cam, id, &rec);
	if (buf) {
		list_add(&rec->link, &recs);
		viacam_lend_return(cam, buf);
		kick = cam->held && viacam_buf_cons(buf)->want;
	} else {
		kick = viacam_lend_stale_end(cam, id, &recs);
	}
	spin_unlock_irqrestore(&cam->slock, flags);
	mutex_unlock(&cam->copy_lock);
	viacam_recs_free(&recs);
	if (kick)
		queue_work(cam->wq, &cam->frame_work);
	return buf ? 0 : -ESTALE;
}

/* A lend as the kernel side sees it: what viacam_lend_one() took. */
struct viacam_lent {
	struct dma_buf *dbuf;	/* a reference to the buffer's memory */
	u32 id;
	u32 length;
};

/*
 * Lend a buffer of the only streaming node, if it has one waiting, taking a
 * reference to its memory for the caller and one for the lend's record;
 * -EAGAIN if none can be lent. copy_lock taken here. The buffer is not touched
 * again once it is dropped (its node's stop may free it): only its id, and the
 * memory through the reference.
 */
static int viacam_lend_one(struct viacam_cam *cam, const struct viacam_streamfmt *sfmt,
			   bool uapi, struct viacam_lent *lt)
{
	struct dma_buf *dbuf = ERR_PTR(-EAGAIN);
	struct viacam_lendrec *rec;
	struct viacam_buf *buf;
	unsigned long flags;

	rec = kzalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	mutex_lock(&cam->copy_lock);
	spin_lock_irqsave(&cam->slock, flags);
	buf = viacam_lend_take(cam, sfmt, uapi);
	if (buf)
		buf->rec = rec;
	spin_unlock_irqrestore(&cam->slock, flags);
	if (buf) {
		dbuf = viacam_lend_mem(buf);
		rec->id = buf->lend_id;
		lt->id = buf->lend_id;
		lt->length = vb2_plane_size(&buf->vb.vb2_buf, 0);
		if (!IS_ERR(dbuf)) {
			rec->dbuf = dbuf;
			get_dma_buf(dbuf);
		}
	}
	mutex_unlock(&cam->copy_lock);
	if (!buf)
		kfree(rec);
	if (IS_ERR(dbuf)) {
		if (buf)
			viacam_unlend(cam, lt->id);
		return PTR_ERR(dbuf);
	}
	lt->dbuf = dbuf;
	return 0;
}

static long viacam_lend(struct viacam_cam *cam, struct viacam_lend __user *uarg)
{
	struct viacam_lend l = {};
	struct viacam_lent lt;
	int fd, ret;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	ret = viacam_lend_one(cam, &cam->out_sfmt, true, &lt);
	if (ret) {
		put_unused_fd(fd);
		return ret;
	}
	l.id = lt.id;
	l.length = lt.length;
	l.fd = fd;
	if (copy_to_user(uarg, &l, sizeof(l))) {
		put_unused_fd(fd);
		dma_buf_put(lt.dbuf);
		viacam_unlend(cam, l.id);
		return -EFAULT;
	}
	/* The producer's fd holds the reference taken for the lend. */
	fd_install(fd, lt.dbuf->file);
	return 0;
}

/*
 * The frame in the lent buffer @l->id is done: it becomes the newest frame
 * and goes to its consumer as it is; it is the repeat source (src_dbuf: the
 * lend record's reference to its memory). Other nodes that began streaming
 * while it was lent do not get it: the consumer may write into that buffer
 * (see "Lending capture buffers"). @written: write() copied the frame in
 * from user space (one copy, counted here).
 */
static long viacam_deliver(struct viacam_cam *cam, const struct viacam_lend *l, bool written)
{
	struct viacam_lendrec *rec = NULL;
	struct viacam_consumer *cons;
	struct viacam_buf *buf, *old;
	struct dma_buf *src_put;
	unsigned long flags;
	unsigned int i;
	LIST_HEAD(recs);
	u32 len;

	mutex_lock(&cam->copy_lock);
	spin_lock_irqsave(&cam->slock, flags);
	buf = viacam_lend_find(cam, l->id, &rec);
	if (!buf) {
		bool kick = viacam_lend_stale_end(cam, l->id, &recs);

		spin_unlock_irqrestore(&cam->slock, flags);
		mutex_unlock(&cam->copy_lock);
		viacam_recs_free(&recs);
		if (kick)
			queue_work(cam->wq, &cam->frame_work);
		return -ESTALE;
	}
	list_add(&rec->link, &recs);
	cons = viacam_buf_cons(buf);
	len = cons->sfmt.sizeimage;
	if (l->bytesused && (viacam_is_compressed(cons->sfmt.pixelformat) ?
			     l->bytesused > len : l->bytesused != len)) {
		viacam_lend_return(cam, buf);
		spin_unlock_irqrestore(&cam->slock, flags);
		mutex_unlock(&cam->copy_lock);
		viacam_recs_free(&recs);
		return -EINVAL;
	}
	if (l->bytesused)
		len = l->bytesused;
	/* The newest frame now; a held backend frame is older and goes back. */
	old = cam->held;
	cam->held = NULL;
	for (i = 0; i < cam->ncons; i++)
		cam->cons[i].want = false;
	cam->frames_in++;
	cam->out_sequence++;
	cam->last_in = ktime_get();
	cam->repeating = false;
	if (written) {
		cam->copies++;
		cam->wr_direct = true;
	}
	buf->vb.sequence = cons->sequence++;
	/* The lent buffer is the frame's only copy: the repeat source, for its node. */
	src_put = viacam_src_end(cam);
	cam->src_cons = cons;
	cam->src_len = len;
	cam->src_in = cam->last_in;
	cam->src_dbuf = rec->dbuf;
	rec->dbuf = NULL;
	spin_unlock_irqrestore(&cam->slock, flags);
	viacam_dbuf_put(src_put);
	viacam_recs_free(&recs);

	/* The frame is in place already: no copy (src == dst). */
	viacam_cap_complete(cam, buf, vb2_plane_vaddr(&buf->vb.vb2_buf, 0), len, l->timestamp,
			    false);
	mutex_unlock(&cam->copy_lock);
	if (old)
		vb2_buffer_done(&old->vb.vb2_buf, VB2_BUF_STATE_DONE);
	return 0;
}

/* ------------------------------------------------------------------------
 * write() on the backend node
 */

/*
 * May the write() of @count bytes go straight into a capture buffer? Only a
 * whole raw frame, with no frame begun by vb2's write() emulation and the
 * backend queue not set up for streaming I/O. cam->lock and out_qlock held.
 */
static bool viacam_write_whole(struct viacam_cam *cam, size_t count)
{
	struct vb2_queue *q = &cam->out_q;

	lockdep_assert_held(&cam->lock);
	if (!vb2_is_busy(q))
		cam->wr_partial = 0;
	/* Buffers set up for streaming I/O: vb2_write() says EBUSY. */
	if (vb2_is_busy(q) && !q->fileio)
		return false;
	return !cam->wr_partial && !viacam_is_compressed(cam->fmt.pixelformat) &&
	       count == cam->fmt.sizeimage;
}

/* Under slock: has every streaming node a buffer waiting for a frame of @sfmt? */
static bool viacam_all_waiting(struct viacam_cam *cam, const struct viacam_streamfmt *sfmt)
{
	unsigned int i;

	lockdep_assert_held(&cam->slock);
	for (i = 0; i < cam->ncons; i++) {
		struct viacam_consumer *cons = &cam->cons[i];

		if (cons->active && (list_empty(&cons->queued) ||
				     !viacam_sfmt_fits(sfmt, &cons->sfmt)))
			return false;
	}
	return cam->nactive;
}

/*
 * A whole raw frame by write(), with exactly one copy: it goes from user
 * space straight into a lent capture buffer of the only streaming node, and
 * is then delivered as VIACAM_IOC_DELIVER delivers it. The
 * copy may fault and wait for user space: only out_qlock is held then, and
 * the lend keeps the buffer's memory alive should its node stop meanwhile
 * (the frame is then taken, and nobody sees it). Taken only when nothing
 * older is pending or owed and every streaming node has a buffer waiting, so
 * that every node gets this frame at once; -EAGAIN otherwise (vb2's write()
 * emulation and the hand-off take the frame then: a copy into a backend
 * buffer, then one to each node). out_qlock held.
 */
static ssize_t viacam_write_lent(struct viacam_cam *cam, const char __user *ubuf, size_t count,
				 const struct viacam_streamfmt *sfmt)
{
	struct viacam_lend l = { .bytesused = count };
	struct iosys_map map;
	struct viacam_lent lt;
	unsigned long flags;
	void *vaddr = NULL;
	bool ready;
	long ret;

	spin_lock_irqsave(&cam->slock, flags);
	ready = list_empty(&cam->out_pending) && !viacam_held_wanted(cam) &&
		viacam_all_waiting(cam, sfmt);
	spin_unlock_irqrestore(&cam->slock, flags);
	if (!ready || viacam_lend_one(cam, sfmt, false, &lt))
		return -EAGAIN;
	l.id = lt.id;
	/* A mapping of our own: vb2 may unmap a DMABUF buffer once its node stops. */
	if (count <= lt.length)
		vaddr = viacam_dbuf_vmap(lt.dbuf, &map);
	if (!vaddr) {
		dma_buf_put(lt.dbuf);
		viacam_unlend(cam, l.id);
		return -EAGAIN;
	}

	viacam_inject_delay(VIACAM_INJECT_WRITE);
	ret = copy_from_user(vaddr, ubuf, count) ? -EFAULT : 0;
	viacam_dbuf_vunmap(lt.dbuf, &map);
	dma_buf_put(lt.dbuf);
	if (ret) {
		viacam_unlend(cam, l.id);
		return ret;
	}
	/* ESTALE: its node stopped meanwhile; the frame is taken all the same. */
	viacam_deliver(cam, &l, true);
	return count;
}

/*
 * vb2's write() emulation, as vb2_fop_write() runs it, under the backend
 * queue's lock alone while it copies (out_qlock held by the caller). A raw
 * frame may come in pieces (wr_partial counts them). A compressed frame has
 * no fixed size, so each write() is one frame: the emulation queues a buffer
 * per write() (write_immediately, set before it starts; S_FMT cannot change
 * the format while it runs), and wr_len keeps the frame's length, which
 * out_buf_prepare needs where the v4l2 layer drops the emulation's byte
 * count (6.1).
 */
static ssize_t viacam_write_queued(struct viacam_cam *cam, struct file *file,
				   const char __user *ubuf, size_t count, loff_t *ppos)
{
	struct vb2_queue *q = &cam->out_q;
	bool compressed;
	ssize_t ret;

	if (vb2_queue_is_busy(q, file))
		return -EBUSY;
	viacam_cb_lock(cam, q);
	compressed = viacam_is_compressed(cam->fmt.pixelformat);
	viacam_cb_unlock(cam, q);
	if (!q->fileio)
		q->fileio_write_immediately = compressed;
	cam->wr_len = min_t(size_t, count, U32_MAX);
	ret = vb2_write(q, ubuf, count, ppos, file->f_flags & O_NONBLOCK);
	if (q->fileio)
		q->owner = file->private_data;
	if (ret > 0 && !compressed) {
		viacam_cb_lock(cam, q);
		if (cam->fmt.sizeimage)
			cam->wr_partial = (cam->wr_partial + ret) % cam->fmt.sizeimage;
		viacam_cb_unlock(cam, q);
	}
	return ret;
}

/*
 * write() on the backend node, under the backend queue's lock. A whole raw
 * frame written while every streaming node has a buffer waiting goes
 * straight into one of them (viacam_write_lent); anything else goes through
 * vb2's write() emulation. Says ENODEV, not vb2's EIO, when the camera was
 * removed meanwhile.
 */
ssize_t viacam_write(struct file *file, const char __user *ubuf, size_t count, loff_t *ppos)
{
	struct viacam_cam *cam = video_drvdata(file);
	struct vb2_queue *q = &cam->out_q;
	struct viacam_streamfmt sfmt;
	bool whole = false;
	ssize_t ret = 0;

	if (mutex_lock_interruptible(q->lock))
		return -ERESTARTSYS;
	viacam_cb_lock(cam, q);
	if (READ_ONCE(cam->gone))
		ret = -ENODEV;
	else if (q->owner && q->owner != file->private_data)
		ret = -EBUSY;
	else
		whole = viacam_write_whole(cam, count);
	viacam_streamfmt_from_pix(&sfmt, &cam->fmt);
	viacam_cb_unlock(cam, q);

	if (whole) {
		ret = viacam_write_lent(cam, ubuf, count, &sfmt);
		if (ret > 0 && !q->owner)
			q->owner = file->private_data;	/* as vb2_fop_write() does */
	}
	if (!ret || ret == -EAGAIN)
		ret = viacam_write_queued(cam, file, ubuf, count, ppos);
	mutex_unlock(q->lock);
	return ret < 0 && READ_ONCE(cam->gone) ? -ENODEV : ret;
}

/*
 * VIACAM_IOC_LEND, _DELIVER and _UNLEND on the backend node, before the core's
 * locking (viacam_out_ioctl): the owner of the streaming backend queue only.
 */
long viacam_lend_ioctl(struct file *file, unsigned int cmd, void __user *uarg)
{
	struct viacam_cam *cam = video_drvdata(file);
	struct vb2_queue *q = &cam->out_q;
	struct viacam_lend l;
	unsigned long flags;
	bool active;
	long ret;

	if (cmd != VIACAM_IOC_LEND) {
		if (copy_from_user(&l, uarg, sizeof(l)))
			return -EFAULT;
		if (memchr_inv(l.reserved, 0, sizeof(l.reserved)))
			return -EINVAL;
	}
	if (mutex_lock_interruptible(q->lock))
		return -ERESTARTSYS;
	spin_lock_irqsave(&cam->slock, flags);
	active = cam->out_active;
	spin_unlock_irqrestore(&cam->slock, flags);
	if (READ_ONCE(cam->gone))
		ret = -ENODEV;
	else if (!active || q->owner != file->private_data || q->fileio)
		ret = -EBUSY;
	else if (cmd == VIACAM_IOC_LEND)
		ret = viacam_lend(cam, uarg);
	else if (cmd == VIACAM_IOC_DELIVER)
		ret = viacam_deliver(cam, &l, false);
	else
		ret = viacam_unlend(cam, l.id);
	mutex_unlock(q->lock);
	return ret;
}

/* ------------------------------------------------------------------------
 * Setup and state queries
 */

/* @priv: the camera for the backend queue, the node for a capture queue. */
static int viacam_queue_init(struct viacam_cam *cam, void *priv, struct vb2_queue *q,
			     struct mutex *qlock, enum v4l2_buf_type type,
			     const struct vb2_ops *ops)
{
	bool capture = type == V4L2_BUF_TYPE_VIDEO_CAPTURE;

	q->type = type;
	q->io_modes = VB2_MMAP | VB2_USERPTR | VB2_DMABUF | (capture ? VB2_READ : VB2_WRITE);
	q->drv_priv = priv;
	q->buf_struct_size = sizeof(struct viacam_buf);
	q->ops = ops;
	q->mem_ops = &vb2_vmalloc_memops;
	q->timestamp_flags = capture ?
		V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF :
		V4L2_BUF_FLAG_TIMESTAMP_COPY;
	q->lock = !capture || queue_lock ? qlock : &cam->lock;
	return vb2_queue_init(q);
}

/* The queues of a camera with @ncons capture nodes (1..VIACAM_MAX_CAPTURES). */
int viacam_queues_init(struct viacam_cam *cam, unsigned int ncons)
{
	unsigned int i;
	int ret;

	mutex_init(&cam->out_qlock);
	mutex_init(&cam->copy_lock);
	spin_lock_init(&cam->slock);
	INIT_LIST_HEAD(&cam->out_pending);
	INIT_LIST_HEAD(&cam->lent);
	INIT_LIST_HEAD(&cam->stale_lends);
	INIT_LIST_HEAD(&cam->parked);
	INIT_WORK(&cam->frame_work, viacam_frame_work);
	INIT_DELAYED_WORK(&cam->repeat_work, viacam_repeat_work);
	cam->last_in = ktime_get();
	if (READ_ONCE(inject) & VIACAM_INJECT_LEAK) {
		void *lost = kmalloc(64, GFP_KERNEL);

		barrier_data(lost);
	}
	cam->wq = alloc_ordered_workqueue("viacam%u", 0, cam->id);
	if (!cam->wq)
		return -ENOMEM;
	cam->cons = kcalloc(ncons, sizeof(*cam->cons), GFP_KERNEL);
	if (!cam->cons)
		return -ENOMEM;
	cam->ncons = ncons;
	for (i = 0; i < ncons; i++) {
		struct viacam_consumer *cons = &cam->cons[i];

		cons->cam = cam;
		cons->index = i;
		mutex_init(&cons->qlock);
		INIT_LIST_HEAD(&cons->queued);
		INIT_LIST_HEAD(&cons->staged);
		ret = viacam_queue_init(cam, cons, &cons->q, &cons->qlock,
					V4L2_BUF_TYPE_VIDEO_CAPTURE, &viacam_cap_qops);
		if (ret)
			return ret;
	}
	return viacam_queue_init(cam, cam, &cam->out_q, &cam->out_qlock,
				 V4L2_BUF_TYPE_VIDEO_OUTPUT, &viacam_out_qops);
}

/*
 * Is the queue of a capture node other than @except (NULL: of any) set up
 * (buffers allocated)? cam->lock held.
 */
bool viacam_cap_busy(struct viacam_cam *cam, const struct viacam_consumer *except)
{
	unsigned int i;

	for (i = 0; i < cam->ncons; i++)
		if (&cam->cons[i] != except && vb2_is_busy(&cam->cons[i].q))
			return true;
	return false;
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
	/* Every capture stop ends the repeat source; this is for safety's sake. */
	viacam_dbuf_put(cam->src_dbuf);
	cam->src_dbuf = NULL;
	/* The producer's stop ended every lend; what is left is for safety's sake too. */
	viacam_recs_free(&cam->stale_lends);
	kfree(cam->cons);
	cam->cons = NULL;
}

/* The camera's counters; with @cons, also that capture node's (else node_out is 0). */
void viacam_stats(struct viacam_cam *cam, struct viacam_consumer *cons,
		  struct viacam_counters *c)
{
	unsigned long flags;

	spin_lock_irqsave(&cam->slock, flags);
	c->node_out = cons ? cons->frames_out : 0;
	c->in = cam->frames_in;
	c->out = cam->frames_out;
	c->dropped = cam->frames_dropped;
	c->repeated = cam->frames_repeated;
	c->copies = cam->copies;
	c->repeating = cam->repeating && cam->nactive;
	spin_unlock_irqrestore(&cam->slock, flags);
}

/*
 * The consumer set a new frame interval (S_PARM, cam->lock held): a stream
 * under way repeats frames at the new rate from the next repeat on.
 */
void viacam_stream_interval(struct viacam_cam *cam)
{
	unsigned long flags;

	lockdep_assert_held(&cam->lock);
	spin_lock_irqsave(&cam->slock, flags);
	if (cam->nactive) {
		cam->cap_interval_num = cam->interval.numerator;
		cam->cap_interval_den = cam->interval.denominator;
	}
	spin_unlock_irqrestore(&cam->slock, flags);
}

/* The file that wrote frames by direct write() is closed. */
void viacam_writer_gone(struct viacam_cam *cam)
{
	unsigned long flags;

	spin_lock_irqsave(&cam->slock, flags);
	cam->wr_direct = false;
	spin_unlock_irqrestore(&cam->slock, flags);
}

bool viacam_out_streaming(struct viacam_cam *cam)
{
	unsigned long flags;
	bool active;

	spin_lock_irqsave(&cam->slock, flags);
	active = cam->out_active || cam->wr_direct;
	spin_unlock_irqrestore(&cam->slock, flags);
	return active;
}
