/* SPDX-License-Identifier: ((GPL-2.0-only WITH Linux-syscall-note) OR MIT) */
/*
 * viacam.h - user-space interface of the viacam bridge module (stable uapi).
 *
 * READ THIS FIRST: every number and layout in this file is ABI. Event ids,
 * ioctl numbers and struct layouts never change meaning once released; new
 * things get new numbers, and structs grow only into their reserved fields
 * (which callers must zero). VIACAM_UAPI_VERSION's major part changes only
 * if that rule is ever broken; the minor part counts compatible additions.
 *
 * Three kinds of nodes:
 *  - /dev/viacam, the control node: add, remove and query cameras.
 *  - per camera a capture node (/dev/videoN): plain V4L2 video capture, for
 *    applications. Nothing in this file is needed to use it.
 *  - per camera a backend node (/dev/videoM): V4L2 video output. Frames
 *    queued there (QBUF or write()) are handed to the capture node's
 *    consumers. Plain producers (ffmpeg, gst v4l2sink, v4l2-ctl) use it like
 *    any output device. A backend that wants to drive the camera declares
 *    its formats, controls and card name with the VIACAM_IOC_S_* ioctls and
 *    subscribes to the VIACAM_EVENT_* events to hear what consumers ask for.
 *
 * All structures have the same layout on 32- and 64-bit user space.
 */
#ifndef _UAPI_LINUX_VIACAM_H
#define _UAPI_LINUX_VIACAM_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>
#include <linux/videodev2.h>

#define VIACAM_UAPI_VERSION_MAJOR	1
#define VIACAM_UAPI_VERSION_MINOR	2	/* 1.1: capture_count, capture_nrs; 1.2: LEND */
#define VIACAM_UAPI_VERSION \
	((VIACAM_UAPI_VERSION_MAJOR << 16) | VIACAM_UAPI_VERSION_MINOR)

/* Limits (the module refuses anything larger with EINVAL). */
#define VIACAM_MAX_CAMERAS	64	/* cameras at once */
#define VIACAM_MAX_CAPTURES	8	/* capture nodes of one camera */
#define VIACAM_LABEL_LEN	32	/* label and card name, NUL included */
#define VIACAM_MAX_FORMATS	256	/* format x size x interval tuples */
#define VIACAM_MAX_CTRLS	64	/* declared controls */
#define VIACAM_MAX_MENU		32	/* items of one menu control */
#define VIACAM_NAME_LEN		32	/* control and menu item names, NUL included */
#define VIACAM_MIN_WIDTH	16
#define VIACAM_MAX_WIDTH	8192
#define VIACAM_MIN_HEIGHT	16
#define VIACAM_MAX_HEIGHT	8192
#define VIACAM_MAX_TIMEOUT_MS	60000

#define VIACAM_ID_AUTO		0xffffffffu	/* "pick a free camera id" */
#define VIACAM_NR_AUTO		(-1)		/* "pick a free /dev/videoN" */

/* ---------------------------------------------------------------------------
 * Control node /dev/viacam
 */

/* VIACAM_IOC_VERSION: what this module speaks. */
struct viacam_version {
	__u32 version;		/* out: VIACAM_UAPI_VERSION */
	__u32 max_cameras;	/* out: VIACAM_MAX_CAMERAS */
	__u32 cameras;		/* out: cameras that exist now */
	__u32 reserved[5];
};

/* Camera state bits (viacam_camera.state). */
#define VIACAM_STATE_CAPTURE_STREAMING	_BITUL(0)	/* a consumer streams */
#define VIACAM_STATE_BACKEND_STREAMING	_BITUL(1)	/* a producer streams frames in */
#define VIACAM_STATE_DECLARED		_BITUL(2)	/* a backend declared formats */
#define VIACAM_STATE_REPEATING		_BITUL(3)	/* timed out: repeating frames */

/*
 * VIACAM_IOC_ADD (CAP_SYS_ADMIN): create a camera. In: id (or VIACAM_ID_AUTO),
 * capture_nr/backend_nr (or VIACAM_NR_AUTO; a taken number gives the next
 * free one), timeout_ms (0 = module default), label (NUL-terminated, may be
 * empty for "viacam N"), capture_count (0 = 1). Out: the whole struct as
 * VIACAM_IOC_QUERY gives it.
 * VIACAM_IOC_REMOVE (CAP_SYS_ADMIN): in: id. Open file handles of the camera
 * get ENODEV from then on; a blocked VIDIOC_DQBUF wakes up.
 * VIACAM_IOC_QUERY: in: id. Out: everything below.
 */
struct viacam_camera {
	__u32 id;
	__s32 capture_nr;	/* /dev/videoN of the capture node */
	__s32 backend_nr;	/* /dev/videoM of the backend node */
	__u32 timeout_ms;	/* repeat the last frame after this long without one */
	__u32 state;		/* out: VIACAM_STATE_* */
	__u32 consumers;	/* out: open file handles on the capture nodes */
	__u32 pixelformat;	/* out: negotiated capture format */
	__u32 width;
	__u32 height;
	__u32 interval_num;	/* out: negotiated frame interval, seconds */
	__u32 interval_den;
	__u32 reserved0;
	__u64 frames_in;	/* out: frames the backend queued */
	__u64 frames_out;	/* out: capture buffers filled (incl. repeats) */
	__u64 frames_dropped;	/* out: backend frames no consumer took */
	__u64 frames_repeated;	/* out: capture buffers filled by the timeout */
	char label[VIACAM_LABEL_LEN];
	/*
	 * Since 1.1: capture nodes of the camera, each a capture node of its
	 * own that one application streams at a time (in: 0 means 1, at most
	 * VIACAM_MAX_CAPTURES; out: how many). capture_nr is the first one;
	 * capture_nrs (out only; zero them in ADD) the others, in order.
	 */
	__u32 capture_count;
	__s32 capture_nrs[VIACAM_MAX_CAPTURES - 1];
};

/* VIACAM_IOC_LIST: ids of all cameras. */
struct viacam_list {
	__u32 count;		/* out: cameras that exist */
	__u32 reserved;
	__u32 ids[VIACAM_MAX_CAMERAS];	/* out: the first min(count, VIACAM_MAX_CAMERAS) */
};

/* ---------------------------------------------------------------------------
 * Backend node: declarations
 */

/* One offered tuple. Formats are listed in the order of their first tuple. */
struct viacam_format {
	__u32 pixelformat;	/* V4L2_PIX_FMT_*, one of those the bridge knows */
	__u32 width;
	__u32 height;
	__u32 interval_num;	/* frame interval = num/den seconds, both > 0 */
	__u32 interval_den;
	__u32 sizeimage;	/* compressed formats: max frame size; 0 otherwise */
	__u32 reserved[2];
};

/*
 * VIACAM_IOC_S_FORMATS: replace the offered formats. count == 0 goes back to
 * "plain producer" mode, where the backend node's own S_FMT decides what the
 * capture node offers. Bad entries (unknown fourcc, size out of range, zero
 * interval, too many) give EINVAL and change nothing. While the capture
 * queue has buffers (a consumer set up streaming), the list must keep
 * offering the negotiated format and size (else EBUSY).
 */
struct viacam_formats {
	__u32 count;
	__u32 reserved0;
	__u64 formats;		/* user pointer to count struct viacam_format */
	__u32 reserved[4];
};

/* Control types accepted (a subset of enum v4l2_ctrl_type). */
/* V4L2_CTRL_TYPE_INTEGER, _BOOLEAN, _MENU, _BUTTON */

struct viacam_ctrl {
	/* V4L2_CID_*: standard ids keep their meaning and type; others in the user/camera class */
	__u32 id;
	__u32 type;		/* V4L2_CTRL_TYPE_* */
	char name[VIACAM_NAME_LEN];
	__s64 minimum;
	__s64 maximum;
	__u64 step;
	__s64 default_value;
	__u32 flags;		/* V4L2_CTRL_FLAG_* that make sense: READ_ONLY, SLIDER, ... */
	__u32 menu_count;	/* menu: number of items (== maximum + 1) */
	char menu[VIACAM_MAX_MENU][VIACAM_NAME_LEN];	/* "" = item not offered */
	__u32 reserved[4];
};

/*
 * VIACAM_IOC_S_CTRLS: replace the declared controls (count == 0: none).
 * Checked: count <= VIACAM_MAX_CTRLS, ids unique and in the user/camera
 * class, standard ids with their standard type, min <= default <= max,
 * step > 0 for integers, NUL-terminated names, menu_count == max + 1.
 * Invalid declarations give EINVAL and change nothing. While the capture
 * node is open, only ranges and defaults of the same set of controls may
 * change (else EBUSY).
 */
struct viacam_ctrls {
	__u32 count;
	__u32 reserved0;
	__u64 ctrls;		/* user pointer to count struct viacam_ctrl */
	__u32 reserved[4];
};

/* VIACAM_IOC_S_INFO: card name of the capture node (the label if unset). */
struct viacam_info {
	char card[VIACAM_LABEL_LEN];
	__u32 reserved[8];
};

/* ---------------------------------------------------------------------------
 * Backend node: zero-copy hand-off (since 1.2)
 *
 * The producer writes a frame straight into a consumer's queued capture
 * buffer (MMAP or DMABUF memory), so the kernel copies nothing for that
 * consumer.
 * Only the handle that owns the backend queue, while that queue streams, may
 * use these (else EBUSY).
 *
 * VIACAM_IOC_LEND: out: id, fd, length. The bridge takes a queued capture
 * buffer that fits the stream and hands it to the producer: fd is a new
 * O_CLOEXEC fd of its dma-buf (an MMAP buffer's, or the dma-buf a DMABUF
 * consumer queued). mmap it; the same id is always the same memory (a DMABUF
 * buffer queued with another dma-buf gets a new id), so a producer may keep
 * one mapping per id and close the fd of an id it knows. A DMABUF consumer's
 * dma-buf is lent only if it is open for writing and its exporter has mmap;
 * should the mmap fail all the same, UNLEND it and queue a backend buffer.
 * EAGAIN: no capture buffer can be lent now (queue a backend buffer instead).
 * VIACAM_IOC_DELIVER: in: id, bytesused, timestamp (CLOCK_MONOTONIC ns of the
 * capture, 0: unknown). The frame goes to the consumer it was lent by (no
 * copy) and to every other streaming capture node with a buffer waiting (one
 * copy each). ESTALE: the lend ended meanwhile (its consumer stopped, or the
 * producer's stream did); the frame is dropped.
 * VIACAM_IOC_UNLEND: in: id. The buffer goes back unfilled. ESTALE as above.
 * The bridge does not take the mapping away after DELIVER or UNLEND: a
 * producer that writes through it later tears a consumer's frame.
 */
struct viacam_lend {
	__u32 id;		/* LEND: out; DELIVER, UNLEND: in */
	__s32 fd;		/* LEND: out, a new dma-buf fd of the buffer */
	__u32 length;		/* LEND: out, bytes of the buffer */
	__u32 bytesused;	/* DELIVER: in, bytes of the frame (0: the format's size) */
	__u64 timestamp;	/* DELIVER: in, capture time (CLOCK_MONOTONIC ns), 0: unknown */
	__u32 reserved[4];
};

/* ---------------------------------------------------------------------------
 * Backend node: events (VIDIOC_SUBSCRIBE_EVENT / VIDIOC_DQEVENT, id 0)
 */
#define VIACAM_EVENT_BASE		(V4L2_EVENT_PRIVATE_START + 0x5600)
/* Consumers changed; supports V4L2_EVENT_SUB_FL_SEND_INITIAL. */
#define VIACAM_EVENT_CONSUMERS		(VIACAM_EVENT_BASE + 1)
/* The first capture node started streaming: payload viacam_event_stream. */
#define VIACAM_EVENT_STREAM_START	(VIACAM_EVENT_BASE + 2)
/* The last capture node stopped streaming: no payload. */
#define VIACAM_EVENT_STREAM_STOP	(VIACAM_EVENT_BASE + 3)
/* A consumer changed a control: payload viacam_event_ctrl. */
#define VIACAM_EVENT_CTRL		(VIACAM_EVENT_BASE + 4)
/* A consumer changed the frame interval: payload viacam_event_stream. */
#define VIACAM_EVENT_INTERVAL		(VIACAM_EVENT_BASE + 5)
/* A consumer changed the format (S_FMT): payload viacam_event_stream. */
#define VIACAM_EVENT_FORMAT		(VIACAM_EVENT_BASE + 6)

/* Payloads overlay struct v4l2_event's u.data[64]. */
struct viacam_event_consumers {
	__u32 streaming;	/* capture nodes streaming now (0..capture_count) */
	__u32 open;		/* file handles open on the capture nodes, all of them */
};

struct viacam_event_stream {
	__u32 pixelformat;
	__u32 width;
	__u32 height;
	__u32 bytesperline;
	__u32 sizeimage;
	__u32 interval_num;
	__u32 interval_den;
};

struct viacam_event_ctrl {
	__u32 id;
	__u32 reserved;
	__s64 value;
};

/* ---------------------------------------------------------------------------
 * Ioctl numbers (driver-private range of the V4L2 'V' space)
 */
#define VIACAM_IOC_VERSION	_IOR('V', BASE_VIDIOC_PRIVATE + 0, struct viacam_version)
#define VIACAM_IOC_ADD		_IOWR('V', BASE_VIDIOC_PRIVATE + 1, struct viacam_camera)
#define VIACAM_IOC_REMOVE	_IOW('V', BASE_VIDIOC_PRIVATE + 2, struct viacam_camera)
#define VIACAM_IOC_QUERY	_IOWR('V', BASE_VIDIOC_PRIVATE + 3, struct viacam_camera)
#define VIACAM_IOC_LIST		_IOR('V', BASE_VIDIOC_PRIVATE + 4, struct viacam_list)
#define VIACAM_IOC_S_FORMATS	_IOW('V', BASE_VIDIOC_PRIVATE + 16, struct viacam_formats)
#define VIACAM_IOC_S_CTRLS	_IOW('V', BASE_VIDIOC_PRIVATE + 17, struct viacam_ctrls)
#define VIACAM_IOC_S_INFO	_IOW('V', BASE_VIDIOC_PRIVATE + 18, struct viacam_info)
#define VIACAM_IOC_LEND		_IOWR('V', BASE_VIDIOC_PRIVATE + 19, struct viacam_lend)
#define VIACAM_IOC_DELIVER	_IOW('V', BASE_VIDIOC_PRIVATE + 20, struct viacam_lend)
#define VIACAM_IOC_UNLEND	_IOW('V', BASE_VIDIOC_PRIVATE + 21, struct viacam_lend)

#endif /* _UAPI_LINUX_VIACAM_H */
