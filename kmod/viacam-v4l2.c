// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacam-v4l2.c - viacam bridge: V4L2 ioctls of the capture and backend nodes,
 * declared formats and controls, and the events that tell the backend what
 * consumers asked for.
 *
 * Every function here runs with cam->lock held (the V4L2 core takes it for
 * ioctls, and open/release take it themselves) unless it says otherwise.
 * None of them waits for user space: requests are stored and forwarded.
 */
#include <linux/compat.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <media/v4l2-event.h>
#include <media/v4l2-ioctl.h>

#include "viacam.h"

/* ------------------------------------------------------------------------
 * Events to the backend node (any context; v4l2_event_queue takes a spinlock)
 */

void viacam_send_event(struct viacam_cam *cam, u32 type, const void *data, size_t len)
{
	struct v4l2_event ev = { .type = type };

	/*
	 * A capture node may be opened before ADD has registered the backend node
	 * (and set up its file handle list): pairs with viacam_cam_create().
	 */
	if (!smp_load_acquire(&cam->out_ready))
		return;
	if (data)
		memcpy(ev.u.data, data, min(len, sizeof(ev.u.data)));
	v4l2_event_queue(&cam->out_vdev, &ev);
}

static void viacam_fill_stream_event(struct viacam_cam *cam, struct viacam_event_stream *es)
{
	es->pixelformat = cam->fmt.pixelformat;
	es->width = cam->fmt.width;
	es->height = cam->fmt.height;
	es->bytesperline = cam->fmt.bytesperline;
	es->sizeimage = cam->fmt.sizeimage;
	es->interval_num = cam->interval.numerator;
	es->interval_den = cam->interval.denominator;
}

void viacam_send_stream_event(struct viacam_cam *cam, u32 type)
{
	struct viacam_event_stream es = {};

	lockdep_assert_held(&cam->lock);
	viacam_fill_stream_event(cam, &es);
	viacam_send_event(cam, type, &es, sizeof(es));
}

static void viacam_fill_consumers(struct viacam_cam *cam, struct viacam_event_consumers *ec)
{
	ec->streaming = cam->nactive;
	ec->open = cam->cap_open;
}

void viacam_notify_consumers(struct viacam_cam *cam)
{
	struct viacam_event_consumers ec = {};

	lockdep_assert_held(&cam->lock);
	viacam_fill_consumers(cam, &ec);
	viacam_send_event(cam, VIACAM_EVENT_CONSUMERS, &ec, sizeof(ec));
}

/* SEND_INITIAL for VIACAM_EVENT_CONSUMERS (called from SUBSCRIBE_EVENT, cam->lock held). */
static int viacam_consumers_ev_add(struct v4l2_subscribed_event *sev, unsigned int elems)
{
	struct viacam_cam *cam = vdev_to_cam(sev->fh->vdev);
	struct v4l2_event ev = { .type = VIACAM_EVENT_CONSUMERS };
	struct viacam_event_consumers ec = {};

	if (sev->flags & V4L2_EVENT_SUB_FL_SEND_INITIAL) {
		viacam_fill_consumers(cam, &ec);
		memcpy(ev.u.data, &ec, sizeof(ec));
		v4l2_event_queue_fh(sev->fh, &ev);
	}
	return 0;
}

static const struct v4l2_subscribed_event_ops viacam_consumers_ev_ops = {
	.add = viacam_consumers_ev_add,
};

/* ------------------------------------------------------------------------
 * Declared formats
 */

static bool viacam_declared(struct viacam_cam *cam)
{
	return !!cam->formats;
}

static bool viacam_fmt_listed_before(struct viacam_cam *cam, u32 i, u32 fourcc)
{
	u32 j;

	for (j = 0; j < i; j++)
		if (cam->formats[j].pixelformat == fourcc)
			return true;
	return false;
}

static bool viacam_size_listed_before(struct viacam_cam *cam, u32 i,
				      const struct viacam_format *f)
{
	u32 j;

	for (j = 0; j < i; j++)
		if (cam->formats[j].pixelformat == f->pixelformat &&
		    cam->formats[j].width == f->width && cam->formats[j].height == f->height)
			return true;
	return false;
}

/*
 * May the consumer on @file's capture node choose among the declared tuples?
 * Not in plain-producer mode, and not while another capture node of the camera
 * has buffers: the first node to allocate fixes the format and interval for
 * all of them, and the others then offer exactly that (as in plain mode).
 */
static bool viacam_cap_choice(struct viacam_cam *cam, struct file *file)
{
	return viacam_declared(cam) &&
	       !viacam_cap_busy(cam, vdev_to_cons(video_devdata(file)));
}

/* The declared tuple closest to @fourcc/@width/@height (the format wins over the size). */
static const struct viacam_format *viacam_nearest(struct viacam_cam *cam, u32 fourcc,
						  u32 width, u32 height)
{
	const struct viacam_format *best = NULL;
	u64 best_d = U64_MAX, d;
	u32 i;

	if (!viacam_fmt_listed_before(cam, cam->nformats, fourcc))
		fourcc = cam->formats[0].pixelformat;
	for (i = 0; i < cam->nformats; i++) {
		const struct viacam_format *f = &cam->formats[i];

		if (f->pixelformat != fourcc)
			continue;
		d = abs((s64)f->width - width) + abs((s64)f->height - height);
		if (d < best_d) {
			best = f;
			best_d = d;
		}
	}
	return best;
}

/* Is @iv offered for the tuple of @f? */
static bool viacam_interval_offered(struct viacam_cam *cam, const struct viacam_format *f,
				    const struct v4l2_fract *iv)
{
	u32 i;

	for (i = 0; i < cam->nformats; i++) {
		const struct viacam_format *e = &cam->formats[i];

		if (e->pixelformat == f->pixelformat && e->width == f->width &&
		    e->height == f->height &&
		    (u64)e->interval_num * iv->denominator == (u64)iv->numerator * e->interval_den)
			return true;
	}
	return false;
}

/* The offered interval of @f's tuple nearest to @iv (compared as frame rates). */
static void viacam_nearest_interval(struct viacam_cam *cam, const struct viacam_format *f,
				    struct v4l2_fract *iv)
{
	const struct viacam_format *best = f;
	u64 want, rate, best_d = U64_MAX, d;
	u32 i;

	if (!iv->numerator || !iv->denominator) {
		iv->numerator = f->interval_num;
		iv->denominator = f->interval_den;
		return;
	}
	want = div_u64((u64)iv->denominator * 1000000, iv->numerator);	/* micro-fps */
	for (i = 0; i < cam->nformats; i++) {
		const struct viacam_format *e = &cam->formats[i];

		if (e->pixelformat != f->pixelformat || e->width != f->width ||
		    e->height != f->height)
			continue;
		rate = div_u64((u64)e->interval_den * 1000000, e->interval_num);
		d = rate > want ? rate - want : want - rate;
		if (d < best_d) {
			best = e;
			best_d = d;
		}
	}
	iv->numerator = best->interval_num;
	iv->denominator = best->interval_den;
}

/* Make cam->fmt/interval one of the declared tuples (after S_FORMATS). */
static void viacam_snap_to_declared(struct viacam_cam *cam)
{
	const struct viacam_format *f = viacam_nearest(cam, cam->fmt.pixelformat,
						       cam->fmt.width, cam->fmt.height);

	viacam_fill_pix(&cam->fmt, f->pixelformat, f->width, f->height, f->sizeimage);
	if (!viacam_interval_offered(cam, f, &cam->interval))
		viacam_nearest_interval(cam, f, &cam->interval);
}

static int viacam_check_format(const struct viacam_format *f)
{
	const struct viacam_fmtinfo *fi = viacam_fmtinfo(f->pixelformat);

	if (!fi || f->reserved[0] || f->reserved[1])
		return -EINVAL;
	if (f->width < VIACAM_MIN_WIDTH || f->width > VIACAM_MAX_WIDTH ||
	    f->height < VIACAM_MIN_HEIGHT || f->height > VIACAM_MAX_HEIGHT)
		return -EINVAL;
	if (fi->even && ((f->width | f->height) & 1))
		return -EINVAL;
	if (!f->interval_num || !f->interval_den)
		return -EINVAL;
	if (fi->bpp && f->sizeimage)
		return -EINVAL;
	if (!fi->bpp && f->sizeimage > f->width * f->height * 4)
		return -EINVAL;
	return 0;
}

/*
 * VIACAM_IOC_S_FORMATS, first half, with no lock held: the declared array copied from
 * user space and checked. The copy may wait for user space (a page fault that a
 * userfaultfd or FUSE mapping answers late), so it must not run under cam->lock, which
 * every ioctl of the camera's nodes takes. Returns the list (NULL for count 0) or an
 * ERR_PTR.
 */
static struct viacam_format *viacam_formats_copy(const struct viacam_formats *arg)
{
	struct viacam_format *list;
	u32 i;
	int ret;

	if (arg->reserved0 || memchr_inv(arg->reserved, 0, sizeof(arg->reserved)))
		return ERR_PTR(-EINVAL);
	if (arg->count > VIACAM_MAX_FORMATS)
		return ERR_PTR(-EINVAL);
	if (!arg->count)
		return NULL;
	list = memdup_user(u64_to_user_ptr(arg->formats), array_size(arg->count, sizeof(*list)));
	if (IS_ERR(list))
		return list;
	for (i = 0; i < arg->count; i++) {
		ret = viacam_check_format(&list[i]);
		if (ret) {
			kfree(list);
			return ERR_PTR(ret);
		}
	}
	return list;
}

/* The second half, cam->lock held: @list (@count entries, owned now) becomes the offer. */
static int viacam_s_formats(struct viacam_cam *cam, struct viacam_format *list, u32 count)
{
	struct viacam_format *old_list = cam->formats;
	u32 old_n = cam->nformats;
	int ret;

	lockdep_assert_held(&cam->lock);
	cam->formats = list;
	cam->nformats = count;
	if (list) {
		struct v4l2_pix_format old = cam->fmt;
		struct v4l2_fract old_iv = cam->interval;

		viacam_snap_to_declared(cam);
		if (viacam_cap_busy(cam, NULL) &&
		    (old.pixelformat != cam->fmt.pixelformat || old.width != cam->fmt.width ||
		     old.height != cam->fmt.height || old.sizeimage != cam->fmt.sizeimage)) {
			/* A consumer's buffers are sized for the old tuple: keep it. */
			cam->fmt = old;
			cam->interval = old_iv;
			cam->formats = old_list;
			cam->nformats = old_n;
			ret = -EBUSY;
			goto err_free;
		}
	}
	kfree(old_list);
	return 0;

err_free:
	kfree(list);
	return ret;
}

/* ------------------------------------------------------------------------
 * Declared controls
 */

static int viacam_s_ctrl(struct v4l2_ctrl *ctrl)
{
	struct viacam_cam *cam = ctrl->priv;
	struct viacam_event_ctrl ec = { .id = ctrl->id, .value = ctrl->val };

	viacam_send_event(cam, VIACAM_EVENT_CTRL, &ec, sizeof(ec));
	return 0;
}

static const struct v4l2_ctrl_ops viacam_ctrl_ops = {
	.s_ctrl = viacam_s_ctrl,
};

#define VIACAM_CTRL_FLAGS (V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_SLIDER | \
			   V4L2_CTRL_FLAG_INACTIVE)

static int viacam_check_ctrl(struct viacam_ctrl_entry *e)
{
	struct viacam_ctrl *c = &e->d;
	u32 which = V4L2_CTRL_ID2WHICH(c->id);
	const char *std_name = v4l2_ctrl_get_name(c->id);
	u32 i;

	if (memchr_inv(c->reserved, 0, sizeof(c->reserved)))
		return -EINVAL;
	if (which != V4L2_CTRL_CLASS_USER && which != V4L2_CTRL_CLASS_CAMERA)
		return -EINVAL;
	if ((c->id & 0xffff) < 0x900 || !viacam_text_ok(c->name, sizeof(c->name), false))
		return -EINVAL;
	if (c->flags & ~VIACAM_CTRL_FLAGS)
		return -EINVAL;
	if (std_name) {
		const char *name;
		enum v4l2_ctrl_type type;
		s64 min, max, def;
		u64 step;
		u32 flags;

		v4l2_ctrl_fill(c->id, &name, &type, &min, &max, &step, &def, &flags);
		if (type != c->type)
			return -EINVAL;
	}
	switch (c->type) {
	case V4L2_CTRL_TYPE_INTEGER:
		if (c->minimum < S32_MIN || c->maximum > S32_MAX || c->step < 1 ||
		    c->step > U32_MAX)
			return -EINVAL;
		break;
	case V4L2_CTRL_TYPE_BOOLEAN:
		if (c->minimum != 0 || c->maximum != 1 || c->step != 1)
			return -EINVAL;
		break;
	case V4L2_CTRL_TYPE_BUTTON:
		if (c->minimum || c->maximum || c->step || c->default_value)
			return -EINVAL;
		return 0;
	case V4L2_CTRL_TYPE_MENU:
		if (c->minimum < 0 || c->maximum >= VIACAM_MAX_MENU ||
		    c->menu_count != c->maximum + 1 || c->step)
			return -EINVAL;
		for (i = 0; i < c->menu_count; i++) {
			if (!viacam_text_ok(c->menu[i], VIACAM_NAME_LEN, true))
				return -EINVAL;
			e->qmenu[i] = c->menu[i];
		}
		e->qmenu[i] = NULL;
		if (c->default_value >= c->minimum && c->default_value <= c->maximum &&
		    !c->menu[c->default_value][0])
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (c->minimum > c->maximum || c->default_value < c->minimum ||
	    c->default_value > c->maximum)
		return -EINVAL;
	return 0;
}

static u64 viacam_menu_skip_mask(const struct viacam_ctrl *c)
{
	u64 mask = 0;
	u32 i;

	for (i = 0; i < c->menu_count; i++)
		if (!c->menu[i][0])
			mask |= BIT_ULL(i);
	return mask;
}

static struct v4l2_ctrl_handler *viacam_build_ctrls(struct viacam_cam *cam,
						    struct viacam_ctrl_entry *list, u32 n)
{
	struct v4l2_ctrl_handler *hdl = kzalloc(sizeof(*hdl), GFP_KERNEL);
	u32 i;

	if (!hdl)
		return ERR_PTR(-ENOMEM);
	v4l2_ctrl_handler_init(hdl, n);
	for (i = 0; i < n; i++) {
		const struct viacam_ctrl *c = &list[i].d;
		struct v4l2_ctrl_config cfg = {
			.ops = &viacam_ctrl_ops,
			.id = c->id,
			.name = c->name,
			.type = c->type,
			.min = c->minimum,
			.max = c->maximum,
			.step = c->step,
			.def = c->default_value,
			.flags = c->flags,
		};

		if (c->type == V4L2_CTRL_TYPE_MENU) {
			cfg.qmenu = list[i].qmenu;
			cfg.menu_skip_mask = viacam_menu_skip_mask(c);
		}
		v4l2_ctrl_new_custom(hdl, &cfg, cam);
	}
	if (hdl->error) {
		int ret = hdl->error;

		v4l2_ctrl_handler_free(hdl);
		kfree(hdl);
		return ERR_PTR(ret);
	}
	return hdl;
}

/* Same ids, types and menu names in the same order: can be updated in place. */
static bool viacam_same_ctrl_set(struct viacam_cam *cam, struct viacam_ctrl_entry *list, u32 n)
{
	u32 i;

	if (n != cam->nctrls)
		return false;
	for (i = 0; i < n; i++) {
		const struct viacam_ctrl *a = &cam->ctrl_decl[i].d, *b = &list[i].d;

		if (a->id != b->id || a->type != b->type || a->flags != b->flags ||
		    strcmp(a->name, b->name))
			return false;
		if (a->type == V4L2_CTRL_TYPE_MENU &&
		    (a->menu_count != b->menu_count ||
		     memcmp(a->menu, b->menu, sizeof(a->menu))))
			return false;
	}
	return true;
}

/*
 * VIACAM_IOC_S_CTRLS, first half, with no lock held (see viacam_formats_copy()): the
 * declared controls copied from user space and checked. Returns the list (NULL for count
 * 0) or an ERR_PTR.
 */
static struct viacam_ctrl_entry *viacam_ctrls_copy(const struct viacam_ctrls *arg)
{
	struct viacam_ctrl_entry *list;
	u32 i, j;
	int ret;

	if (arg->reserved0 || memchr_inv(arg->reserved, 0, sizeof(arg->reserved)))
		return ERR_PTR(-EINVAL);
	if (arg->count > VIACAM_MAX_CTRLS)
		return ERR_PTR(-EINVAL);
	if (!arg->count)
		return NULL;
	list = kvcalloc(arg->count, sizeof(*list), GFP_KERNEL);
	if (!list)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < arg->count; i++) {
		ret = -EFAULT;
		if (copy_from_user(&list[i].d, u64_to_user_ptr(arg->ctrls) +
				   i * sizeof(struct viacam_ctrl), sizeof(list[i].d)))
			goto err_free;
		ret = viacam_check_ctrl(&list[i]);
		if (ret)
			goto err_free;
		ret = -EINVAL;
		for (j = 0; j < i; j++)
			if (list[j].d.id == list[i].d.id)
				goto err_free;
	}
	return list;

err_free:
	kvfree(list);
	return ERR_PTR(ret);
}

/* Every capture node shares the camera's control handler. */
static void viacam_set_handler(struct viacam_cam *cam)
{
	unsigned int i;

	for (i = 0; i < cam->ncons; i++)
		cam->cons[i].vdev.ctrl_handler = cam->ctrls;
}

/* The second half, cam->lock held: @list (@count entries, owned now) becomes the set. */
static int viacam_s_ctrls(struct viacam_cam *cam, struct viacam_ctrl_entry *list, u32 count)
{
	struct v4l2_ctrl_handler *hdl;
	u32 i;
	int ret = 0;

	lockdep_assert_held(&cam->lock);
	if (cam->cap_open) {
		/* Consumers hold references into the handler: update it in place. */
		if (!viacam_same_ctrl_set(cam, list, count)) {
			ret = -EBUSY;
			goto out_free;
		}
		for (i = 0; i < count; i++) {
			const struct viacam_ctrl *c = &list[i].d;
			struct v4l2_ctrl *ctrl = v4l2_ctrl_find(cam->ctrls, c->id);
			u64 step = c->type == V4L2_CTRL_TYPE_MENU ?
				viacam_menu_skip_mask(c) : c->step;

			/*
			 * A button has no range (v4l2_ctrl_modify_range refuses it):
			 * nothing to update. Every other type was validated above,
			 * so no control can fail after earlier ones changed.
			 */
			if (c->type == V4L2_CTRL_TYPE_BUTTON)
				continue;
			if (!ctrl || v4l2_ctrl_modify_range(ctrl, c->minimum, c->maximum, step,
							    c->default_value)) {
				ret = -EINVAL;	/* validated above: cannot happen */
				goto out_free;
			}
			/* Keep the old entry: the handler's menu table points into it. */
			cam->ctrl_decl[i].d.minimum = c->minimum;
			cam->ctrl_decl[i].d.maximum = c->maximum;
			cam->ctrl_decl[i].d.step = c->step;
			cam->ctrl_decl[i].d.default_value = c->default_value;
		}
		goto out_free;
	}

	hdl = viacam_build_ctrls(cam, list, count);
	if (IS_ERR(hdl)) {
		ret = PTR_ERR(hdl);
		goto out_free;
	}
	/* No capture file handle is open, so nothing references the old handler. */
	v4l2_ctrl_handler_free(cam->ctrls);
	kfree(cam->ctrls);
	cam->ctrls = hdl;
	viacam_set_handler(cam);
	kvfree(cam->ctrl_decl);
	cam->ctrl_decl = list;
	cam->nctrls = count;
	return 0;

out_free:
	kvfree(list);
	return ret;
}

int viacam_ctrls_init(struct viacam_cam *cam)
{
	struct v4l2_ctrl_handler *hdl = viacam_build_ctrls(cam, NULL, 0);

	if (IS_ERR(hdl))
		return PTR_ERR(hdl);
	cam->ctrls = hdl;
	viacam_set_handler(cam);
	return 0;
}

/* ------------------------------------------------------------------------
 * Ioctls common to both nodes
 */

static int viacam_querycap(struct file *file, void *fh, struct v4l2_capability *cap)
{
	struct video_device *vdev = video_devdata(file);
	struct viacam_cam *cam = vdev_to_cam(vdev);
	struct viacam_consumer *cons = vdev_to_cons(vdev);

	strscpy(cap->driver, VIACAM_DRIVER, sizeof(cap->driver));
	/*
	 * Extra capture nodes are told apart in camera pickers by their card
	 * name ("Label #2") and bus_info (a device per bus_info, for apps that
	 * group nodes by it).
	 */
	if (!cons)
		snprintf(cap->card, sizeof(cap->card), "viacam backend %u", cam->id);
	else if (!cons->index)
		strscpy(cap->card, cam->card, sizeof(cap->card));
	else
		snprintf(cap->card, sizeof(cap->card), "%.*s #%u",
			 (int)sizeof(cap->card) - 5, cam->card, cons->index + 1);
	if (cons && cons->index)
		snprintf(cap->bus_info, sizeof(cap->bus_info), "platform:viacam-%u.%u", cam->id,
			 cons->index);
	else
		snprintf(cap->bus_info, sizeof(cap->bus_info), "platform:viacam-%u", cam->id);
	return 0;
}

static int viacam_g_fmt(struct file *file, void *fh, struct v4l2_format *f)
{
	struct viacam_cam *cam = video_drvdata(file);

	f->fmt.pix = cam->fmt;
	return 0;
}

/* DQBUF that says ENODEV, not EIO, when the wait ended because the camera was removed. */
static int viacam_dqbuf(struct file *file, void *fh, struct v4l2_buffer *b)
{
	struct viacam_cam *cam = video_drvdata(file);
	int ret = vb2_ioctl_dqbuf(file, fh, b);

	return ret && cam->gone ? -ENODEV : ret;
}

/* ------------------------------------------------------------------------
 * Capture node
 */

static int viacam_enum_fmt_cap(struct file *file, void *fh, struct v4l2_fmtdesc *f)
{
	struct viacam_cam *cam = video_drvdata(file);
	u32 i, n = 0;

	if (!viacam_cap_choice(cam, file)) {
		if (f->index)
			return -EINVAL;
		f->pixelformat = cam->fmt.pixelformat;
	} else {
		for (i = 0; i < cam->nformats; i++) {
			if (viacam_fmt_listed_before(cam, i, cam->formats[i].pixelformat))
				continue;
			if (n++ == f->index)
				break;
		}
		if (i == cam->nformats)
			return -EINVAL;
		f->pixelformat = cam->formats[i].pixelformat;
	}
	f->flags = viacam_fmtinfo(f->pixelformat)->bpp ? 0 : V4L2_FMT_FLAG_COMPRESSED;
	return 0;
}

static int viacam_try_fmt_cap(struct file *file, void *fh, struct v4l2_format *f)
{
	struct viacam_cam *cam = video_drvdata(file);
	struct v4l2_pix_format *pix = &f->fmt.pix;
	const struct viacam_format *e;

	if (!viacam_cap_choice(cam, file)) {
		*pix = cam->fmt;
		return 0;
	}
	e = viacam_nearest(cam, pix->pixelformat, pix->width, pix->height);
	viacam_fill_pix(pix, e->pixelformat, e->width, e->height, e->sizeimage);
	return 0;
}

static int viacam_s_fmt_cap(struct file *file, void *fh, struct v4l2_format *f)
{
	struct viacam_cam *cam = video_drvdata(file);
	const struct viacam_format *e;
	bool changed;
	int ret;

	ret = viacam_try_fmt_cap(file, fh, f);
	if (ret)
		return ret;
	if (vb2_is_busy(vdev_to_cons(video_devdata(file))->vdev.queue))
		return -EBUSY;
	if (!viacam_cap_choice(cam, file))
		return 0;
	changed = memcmp(&cam->fmt, &f->fmt.pix, sizeof(cam->fmt));
	cam->fmt = f->fmt.pix;
	e = viacam_nearest(cam, cam->fmt.pixelformat, cam->fmt.width, cam->fmt.height);
	if (!viacam_interval_offered(cam, e, &cam->interval)) {
		viacam_nearest_interval(cam, e, &cam->interval);
		changed = true;
	}
	if (changed)
		viacam_send_stream_event(cam, VIACAM_EVENT_FORMAT);
	return 0;
}

static int viacam_enum_framesizes(struct file *file, void *fh, struct v4l2_frmsizeenum *fs)
{
	struct viacam_cam *cam = video_drvdata(file);
	u32 i, n = 0;

	if (!viacam_cap_choice(cam, file)) {
		if (fs->index || fs->pixel_format != cam->fmt.pixelformat)
			return -EINVAL;
		fs->type = V4L2_FRMSIZE_TYPE_DISCRETE;
		fs->discrete.width = cam->fmt.width;
		fs->discrete.height = cam->fmt.height;
		return 0;
	}
	for (i = 0; i < cam->nformats; i++) {
		const struct viacam_format *e = &cam->formats[i];

		if (e->pixelformat != fs->pixel_format || viacam_size_listed_before(cam, i, e))
			continue;
		if (n++ == fs->index) {
			fs->type = V4L2_FRMSIZE_TYPE_DISCRETE;
			fs->discrete.width = e->width;
			fs->discrete.height = e->height;
			return 0;
		}
	}
	return -EINVAL;
}

static int viacam_enum_frameintervals(struct file *file, void *fh,
				      struct v4l2_frmivalenum *fi)
{
	struct viacam_cam *cam = video_drvdata(file);
	u32 i, n = 0;

	if (!viacam_cap_choice(cam, file)) {
		if (fi->index || fi->pixel_format != cam->fmt.pixelformat ||
		    fi->width != cam->fmt.width || fi->height != cam->fmt.height)
			return -EINVAL;
		fi->type = V4L2_FRMIVAL_TYPE_DISCRETE;
		fi->discrete = cam->interval;
		return 0;
	}
	for (i = 0; i < cam->nformats; i++) {
		const struct viacam_format *e = &cam->formats[i];

		if (e->pixelformat != fi->pixel_format || e->width != fi->width ||
		    e->height != fi->height)
			continue;
		if (n++ == fi->index) {
			fi->type = V4L2_FRMIVAL_TYPE_DISCRETE;
			fi->discrete.numerator = e->interval_num;
			fi->discrete.denominator = e->interval_den;
			return 0;
		}
	}
	return -EINVAL;
}

static int viacam_g_parm_cap(struct file *file, void *fh, struct v4l2_streamparm *sp)
{
	struct viacam_cam *cam = video_drvdata(file);

	if (sp->type != V4L2_BUF_TYPE_VIDEO_CAPTURE)
		return -EINVAL;
	memset(&sp->parm.capture, 0, sizeof(sp->parm.capture));
	sp->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
	sp->parm.capture.timeperframe = cam->interval;
	sp->parm.capture.readbuffers = 2;
	return 0;
}

static int viacam_s_parm_cap(struct file *file, void *fh, struct v4l2_streamparm *sp)
{
	struct viacam_cam *cam = video_drvdata(file);
	struct v4l2_fract iv = sp->parm.capture.timeperframe;
	const struct viacam_format *e;

	if (sp->type != V4L2_BUF_TYPE_VIDEO_CAPTURE)
		return -EINVAL;
	if (viacam_cap_choice(cam, file)) {
		e = viacam_nearest(cam, cam->fmt.pixelformat, cam->fmt.width, cam->fmt.height);
		viacam_nearest_interval(cam, e, &iv);
		if (iv.numerator != cam->interval.numerator ||
		    iv.denominator != cam->interval.denominator) {
			cam->interval = iv;
			viacam_stream_interval(cam);
			viacam_send_stream_event(cam, VIACAM_EVENT_INTERVAL);
		}
	}
	return viacam_g_parm_cap(file, fh, sp);
}

static int viacam_enum_input(struct file *file, void *fh, struct v4l2_input *inp)
{
	if (inp->index)
		return -EINVAL;
	inp->type = V4L2_INPUT_TYPE_CAMERA;
	strscpy(inp->name, "Camera", sizeof(inp->name));
	return 0;
}

static int viacam_g_input(struct file *file, void *fh, unsigned int *i)
{
	*i = 0;
	return 0;
}

static int viacam_s_input(struct file *file, void *fh, unsigned int i)
{
	return i ? -EINVAL : 0;
}

const struct v4l2_ioctl_ops viacam_cap_ioctl_ops = {
	.vidioc_querycap		= viacam_querycap,

	.vidioc_enum_fmt_vid_cap	= viacam_enum_fmt_cap,
	.vidioc_g_fmt_vid_cap		= viacam_g_fmt,
	.vidioc_try_fmt_vid_cap		= viacam_try_fmt_cap,
	.vidioc_s_fmt_vid_cap		= viacam_s_fmt_cap,
	.vidioc_enum_framesizes		= viacam_enum_framesizes,
	.vidioc_enum_frameintervals	= viacam_enum_frameintervals,
	.vidioc_g_parm			= viacam_g_parm_cap,
	.vidioc_s_parm			= viacam_s_parm_cap,

	.vidioc_enum_input		= viacam_enum_input,
	.vidioc_g_input			= viacam_g_input,
	.vidioc_s_input			= viacam_s_input,

	.vidioc_reqbufs			= vb2_ioctl_reqbufs,
	.vidioc_create_bufs		= vb2_ioctl_create_bufs,
	.vidioc_prepare_buf		= vb2_ioctl_prepare_buf,
	.vidioc_querybuf		= vb2_ioctl_querybuf,
	.vidioc_qbuf			= viacam_qbuf,
	.vidioc_dqbuf			= viacam_dqbuf,
	.vidioc_expbuf			= vb2_ioctl_expbuf,
	.vidioc_streamon		= vb2_ioctl_streamon,
	.vidioc_streamoff		= vb2_ioctl_streamoff,

	.vidioc_log_status		= v4l2_ctrl_log_status,
	.vidioc_subscribe_event		= v4l2_ctrl_subscribe_event,
	.vidioc_unsubscribe_event	= v4l2_event_unsubscribe,
};

/* ------------------------------------------------------------------------
 * Backend node
 */

static int viacam_enum_fmt_out(struct file *file, void *fh, struct v4l2_fmtdesc *f)
{
	struct viacam_cam *cam = video_drvdata(file);
	const struct viacam_fmtinfo *fi;

	if (viacam_declared(cam)) {
		/* The consumer chose: the producer must deliver exactly that. */
		if (f->index)
			return -EINVAL;
		fi = viacam_fmtinfo(cam->fmt.pixelformat);
	} else {
		fi = viacam_fmtinfo_at(f->index);
		if (!fi)
			return -EINVAL;
	}
	f->pixelformat = fi->fourcc;
	f->flags = fi->bpp ? 0 : V4L2_FMT_FLAG_COMPRESSED;
	return 0;
}

static int viacam_try_fmt_out(struct file *file, void *fh, struct v4l2_format *f)
{
	struct viacam_cam *cam = video_drvdata(file);
	struct v4l2_pix_format *pix = &f->fmt.pix;
	const struct viacam_fmtinfo *fi;
	u32 w, h, size = 0;

	if (viacam_declared(cam)) {
		*pix = cam->fmt;
		return 0;
	}
	fi = viacam_fmtinfo(pix->pixelformat);
	if (!fi)
		fi = viacam_fmtinfo(V4L2_PIX_FMT_YUYV);
	w = clamp_t(u32, pix->width, VIACAM_MIN_WIDTH, VIACAM_MAX_WIDTH);
	h = clamp_t(u32, pix->height, VIACAM_MIN_HEIGHT, VIACAM_MAX_HEIGHT);
	if (fi->even) {
		w &= ~1u;
		h &= ~1u;
	}
	if (!fi->bpp && pix->sizeimage)
		size = clamp_t(u32, pix->sizeimage, w * h / 8 + 1024, w * h * 4);
	viacam_fill_pix(pix, fi->fourcc, w, h, size);
	return 0;
}

static int viacam_s_fmt_out(struct file *file, void *fh, struct v4l2_format *f)
{
	struct viacam_cam *cam = video_drvdata(file);
	int ret = viacam_try_fmt_out(file, fh, f);

	if (ret || viacam_declared(cam))
		return ret;
	if (vb2_is_busy(&cam->out_q))
		return -EBUSY;
	/* In plain mode the capture node offers what the producer sets. */
	if (viacam_cap_busy(cam, NULL) && memcmp(&cam->fmt, &f->fmt.pix, sizeof(cam->fmt)))
		return -EBUSY;
	cam->fmt = f->fmt.pix;
	return 0;
}

static int viacam_g_parm_out(struct file *file, void *fh, struct v4l2_streamparm *sp)
{
	struct viacam_cam *cam = video_drvdata(file);

	if (sp->type != V4L2_BUF_TYPE_VIDEO_OUTPUT)
		return -EINVAL;
	memset(&sp->parm.output, 0, sizeof(sp->parm.output));
	sp->parm.output.capability = V4L2_CAP_TIMEPERFRAME;
	sp->parm.output.timeperframe = cam->interval;
	sp->parm.output.writebuffers = 2;
	return 0;
}

static int viacam_s_parm_out(struct file *file, void *fh, struct v4l2_streamparm *sp)
{
	struct viacam_cam *cam = video_drvdata(file);
	struct v4l2_fract iv = sp->parm.output.timeperframe;

	if (sp->type != V4L2_BUF_TYPE_VIDEO_OUTPUT)
		return -EINVAL;
	/* 1/1000 s .. 60 s; the consumer's choice rules in declared mode. */
	if (!viacam_declared(cam) && iv.numerator && iv.denominator &&
	    (u64)iv.numerator * 1000 >= iv.denominator &&
	    iv.numerator <= (u64)iv.denominator * 60)
		cam->interval = iv;
	return viacam_g_parm_out(file, fh, sp);
}

/* Plain mode takes any size and rate; declared mode only the consumer's choice. */
static int viacam_enum_framesizes_out(struct file *file, void *fh, struct v4l2_frmsizeenum *fs)
{
	struct viacam_cam *cam = video_drvdata(file);
	const struct viacam_fmtinfo *fi = viacam_fmtinfo(fs->pixel_format);

	if (fs->index || !fi)
		return -EINVAL;
	if (viacam_declared(cam)) {
		if (fs->pixel_format != cam->fmt.pixelformat)
			return -EINVAL;
		fs->type = V4L2_FRMSIZE_TYPE_DISCRETE;
		fs->discrete.width = cam->fmt.width;
		fs->discrete.height = cam->fmt.height;
		return 0;
	}
	fs->type = V4L2_FRMSIZE_TYPE_STEPWISE;
	fs->stepwise.min_width = VIACAM_MIN_WIDTH;
	fs->stepwise.max_width = VIACAM_MAX_WIDTH;
	fs->stepwise.step_width = fi->even ? 2 : 1;
	fs->stepwise.min_height = VIACAM_MIN_HEIGHT;
	fs->stepwise.max_height = VIACAM_MAX_HEIGHT;
	fs->stepwise.step_height = fi->even ? 2 : 1;
	return 0;
}

static int viacam_enum_frameintervals_out(struct file *file, void *fh,
					  struct v4l2_frmivalenum *fi)
{
	struct viacam_cam *cam = video_drvdata(file);

	if (fi->index || !viacam_fmtinfo(fi->pixel_format))
		return -EINVAL;
	if (viacam_declared(cam)) {
		if (fi->pixel_format != cam->fmt.pixelformat || fi->width != cam->fmt.width ||
		    fi->height != cam->fmt.height)
			return -EINVAL;
		fi->type = V4L2_FRMIVAL_TYPE_DISCRETE;
		fi->discrete = cam->interval;
		return 0;
	}
	if (fi->width < VIACAM_MIN_WIDTH || fi->width > VIACAM_MAX_WIDTH ||
	    fi->height < VIACAM_MIN_HEIGHT || fi->height > VIACAM_MAX_HEIGHT)
		return -EINVAL;
	fi->type = V4L2_FRMIVAL_TYPE_CONTINUOUS;
	fi->stepwise.min = (struct v4l2_fract){ 1, 1000 };
	fi->stepwise.max = (struct v4l2_fract){ 60, 1 };
	fi->stepwise.step = (struct v4l2_fract){ 1, 1 };
	return 0;
}

static int viacam_enum_output(struct file *file, void *fh, struct v4l2_output *out)
{
	if (out->index)
		return -EINVAL;
	out->type = V4L2_OUTPUT_TYPE_ANALOG;
	strscpy(out->name, "Bridge", sizeof(out->name));
	return 0;
}

static int viacam_g_output(struct file *file, void *fh, unsigned int *i)
{
	*i = 0;
	return 0;
}

static int viacam_s_output(struct file *file, void *fh, unsigned int i)
{
	return i ? -EINVAL : 0;
}

static int viacam_subscribe_out(struct v4l2_fh *fh, const struct v4l2_event_subscription *sub)
{
	switch (sub->type) {
	case VIACAM_EVENT_CONSUMERS:
		return v4l2_event_subscribe(fh, sub, 8, &viacam_consumers_ev_ops);
	case VIACAM_EVENT_CTRL:
		return v4l2_event_subscribe(fh, sub, 64, NULL);
	case VIACAM_EVENT_STREAM_START:
	case VIACAM_EVENT_STREAM_STOP:
	case VIACAM_EVENT_INTERVAL:
	case VIACAM_EVENT_FORMAT:
		return v4l2_event_subscribe(fh, sub, 8, NULL);
	default:
		return -EINVAL;
	}
}

static long viacam_out_default(struct file *file, void *fh, bool valid_prio,
			       unsigned int cmd, void *arg)
{
	struct viacam_cam *cam = video_drvdata(file);
	struct viacam_info *info;

	switch (cmd) {
	case VIACAM_IOC_S_INFO:
		info = arg;
		if (!viacam_text_ok(info->card, sizeof(info->card), true) ||
		    memchr_inv(info->reserved, 0, sizeof(info->reserved)))
			return -EINVAL;
		strscpy(cam->card, info->card[0] ? info->card : cam->label, sizeof(cam->card));
		return 0;
	default:
		return -ENOTTY;
	}
}

/*
 * VIDIOC_STREAMON of the backend node: the bridge holds one buffer, so a
 * queue of fewer than two (CREATE_BUFS makes as many as asked) would stall
 * the producer; EINVAL, as for a queue without buffers.
 */
static int viacam_out_streamon(struct file *file, void *fh, enum v4l2_buf_type type)
{
	struct video_device *vdev = video_devdata(file);

	if (!vb2_queue_is_busy(vdev->queue, file) &&
	    viacam_q_num_buffers(vdev->queue) < VIACAM_OUT_MIN_BUFS)
		return -EINVAL;
	return vb2_ioctl_streamon(file, fh, type);
}

const struct v4l2_ioctl_ops viacam_out_ioctl_ops = {
	.vidioc_querycap		= viacam_querycap,

	.vidioc_enum_fmt_vid_out	= viacam_enum_fmt_out,
	.vidioc_g_fmt_vid_out		= viacam_g_fmt,
	.vidioc_try_fmt_vid_out		= viacam_try_fmt_out,
	.vidioc_s_fmt_vid_out		= viacam_s_fmt_out,
	.vidioc_enum_framesizes		= viacam_enum_framesizes_out,
	.vidioc_enum_frameintervals	= viacam_enum_frameintervals_out,
	.vidioc_g_parm			= viacam_g_parm_out,
	.vidioc_s_parm			= viacam_s_parm_out,

	.vidioc_enum_output		= viacam_enum_output,
	.vidioc_g_output		= viacam_g_output,
	.vidioc_s_output		= viacam_s_output,

	.vidioc_reqbufs			= vb2_ioctl_reqbufs,
	.vidioc_create_bufs		= vb2_ioctl_create_bufs,
	.vidioc_prepare_buf		= vb2_ioctl_prepare_buf,
	.vidioc_querybuf		= vb2_ioctl_querybuf,
	.vidioc_qbuf			= vb2_ioctl_qbuf,
	.vidioc_dqbuf			= viacam_dqbuf,
	.vidioc_expbuf			= vb2_ioctl_expbuf,
	.vidioc_streamon		= viacam_out_streamon,
	.vidioc_streamoff		= vb2_ioctl_streamoff,

	.vidioc_subscribe_event		= viacam_subscribe_out,
	.vidioc_unsubscribe_event	= v4l2_event_unsubscribe,
	.vidioc_default			= viacam_out_default,
};

/* ------------------------------------------------------------------------
 * File operations
 */

static int viacam_cap_open(struct file *file)
{
	struct viacam_cam *cam = video_drvdata(file);
	int ret;

	if (mutex_lock_interruptible(&cam->lock))
		return -ERESTARTSYS;
	ret = cam->gone ? -ENODEV : v4l2_fh_open(file);
	if (!ret) {
		cam->cap_open++;
		viacam_notify_consumers(cam);
	}
	mutex_unlock(&cam->lock);
	return ret;
}

static int viacam_cap_release(struct file *file)
{
	struct viacam_cam *cam = video_drvdata(file);
	struct vb2_queue *q = video_devdata(file)->queue;
	int ret;

	if (q->lock != &cam->lock) {
		/* The queue's own lock first, as for any buffer call. */
		ret = _vb2_fop_release(file, q->lock);
		mutex_lock(&cam->lock);
	} else {
		mutex_lock(&cam->lock);
		/* Stops streaming if this handle owned the queue; the lock is ours already. */
		ret = _vb2_fop_release(file, NULL);
	}
	cam->cap_open--;
	viacam_notify_consumers(cam);
	mutex_unlock(&cam->lock);
	return ret;
}

/*
 * read() and write() that say ENODEV, not vb2's EIO, when the camera was
 * removed while they waited for the lock or for a buffer (as DQBUF does).
 */
static ssize_t viacam_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	struct viacam_cam *cam = video_drvdata(file);
	ssize_t ret = vb2_fop_read(file, buf, count, ppos);

	return ret < 0 && READ_ONCE(cam->gone) ? -ENODEV : ret;
}

const struct v4l2_file_operations viacam_cap_fops = {
	.owner		= THIS_MODULE,
	.open		= viacam_cap_open,
	.release	= viacam_cap_release,
	.read		= viacam_read,
	.poll		= vb2_fop_poll,
	.mmap		= vb2_fop_mmap,
	.unlocked_ioctl	= video_ioctl2,
};

/*
 * The declarations, S_FORMATS and S_CTRLS, copy an array from user space. That copy
 * runs here, before the core's locking, and only the result is applied under
 * cam->lock (the node's vdev->lock, taken as the core would take it), so that no
 * ioctl of the camera waits for a backend's page faults. TEST-13 uffd-declare.
 */
static long viacam_out_declare(struct file *file, unsigned int cmd, void __user *uarg)
{
	struct viacam_cam *cam = video_drvdata(file);
	struct viacam_formats fa;
	struct viacam_ctrls ca;
	void *list;
	u32 count;
	long ret;

	if (cmd == VIACAM_IOC_S_FORMATS) {
		if (copy_from_user(&fa, uarg, sizeof(fa)))
			return -EFAULT;
		list = viacam_formats_copy(&fa);
		count = fa.count;
	} else {
		if (copy_from_user(&ca, uarg, sizeof(ca)))
			return -EFAULT;
		list = viacam_ctrls_copy(&ca);
		count = ca.count;
	}
	if (IS_ERR(list))
		return PTR_ERR(list);
	if (mutex_lock_interruptible(&cam->lock)) {
		ret = -ERESTARTSYS;
		goto err_free;
	}
	if (cam->gone) {
		mutex_unlock(&cam->lock);
		ret = -ENODEV;
		goto err_free;
	}
	/* Both take @list over, freeing it on failure. */
	if (cmd == VIACAM_IOC_S_FORMATS)
		ret = viacam_s_formats(cam, list, count);
	else
		ret = viacam_s_ctrls(cam, list, count);
	mutex_unlock(&cam->lock);
	return ret;

err_free:
	if (cmd == VIACAM_IOC_S_FORMATS)
		kfree(list);
	else
		kvfree(list);
	return ret;
}

static long viacam_out_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	if (cmd == VIACAM_IOC_S_FORMATS || cmd == VIACAM_IOC_S_CTRLS)
		return viacam_out_declare(file, cmd, (void __user *)arg);
	/* The zero-copy calls take the backend queue's lock themselves. */
	if (cmd == VIACAM_IOC_LEND || cmd == VIACAM_IOC_DELIVER || cmd == VIACAM_IOC_UNLEND)
		return viacam_lend_ioctl(file, cmd, (void __user *)arg);
	return video_ioctl2(file, cmd, arg);
}

#ifdef CONFIG_COMPAT
/*
 * 32-bit backends: the V4L2 core converts the standard ioctls and passes the
 * private ones here. Their structs are laid out alike for 32- and 64-bit
 * callers (fixed-width fields, 64-bit members at 8-byte offsets, user
 * pointers as __u64), so only the argument pointer needs converting.
 */
static long viacam_compat_ioctl32(struct file *file, unsigned int cmd, unsigned long arg)
{
	return viacam_out_ioctl(file, cmd, (unsigned long)compat_ptr(arg));
}
#endif

/*
 * The backend node's release. A writer whose frames went straight into
 * capture buffers (direct write()) owns the queue without streaming it, so
 * no stop_streaming tells the bridge it is gone: say so here.
 */
static int viacam_out_release(struct file *file)
{
	struct viacam_cam *cam = video_drvdata(file);
	bool owner;
	int ret;

	mutex_lock(cam->out_q.lock);
	owner = cam->out_q.owner == file->private_data;
	mutex_unlock(cam->out_q.lock);
	ret = vb2_fop_release(file);
	if (owner)
		viacam_writer_gone(cam);
	return ret;
}

const struct v4l2_file_operations viacam_out_fops = {
	.owner		= THIS_MODULE,
	.open		= v4l2_fh_open,
	.release	= viacam_out_release,
	.write		= viacam_write,
	.poll		= vb2_fop_poll,
	.mmap		= vb2_fop_mmap,
	.unlocked_ioctl	= viacam_out_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl32	= viacam_compat_ioctl32,
#endif
};
