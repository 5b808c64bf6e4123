// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacam-core.c - viacam bridge: module parameters, the /dev/viacam control
 * node, and the life of a camera (create, sysfs, remove, free).
 *
 * A camera's memory is owned by its v4l2_device: both video_devices hold a
 * reference until their last file handle is closed, so removing a camera
 * while applications hold it open is safe; they get ENODEV from then on.
 * The module itself cannot be unloaded while any node is open (the nodes'
 * fops carry THIS_MODULE).
 */
#include <linux/capability.h>
#include <linux/idr.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <media/v4l2-event.h>
#include <media/v4l2-ioctl.h>

#include "viacam.h"

static unsigned int devices = 1;
module_param(devices, uint, 0444);
MODULE_PARM_DESC(devices, "cameras to create at load time (default 1)");

static char *labels[VIACAM_MAX_CAMERAS];
module_param_array(labels, charp, NULL, 0444);
MODULE_PARM_DESC(labels, "labels of the cameras created at load time");

static int capture_nr[VIACAM_MAX_CAMERAS] = { [0 ... VIACAM_MAX_CAMERAS - 1] = -1 };
module_param_array(capture_nr, int, NULL, 0444);
MODULE_PARM_DESC(capture_nr, "wanted /dev/videoN of each capture node (-1: automatic)");

static int backend_nr[VIACAM_MAX_CAMERAS] = { [0 ... VIACAM_MAX_CAMERAS - 1] = -1 };
module_param_array(backend_nr, int, NULL, 0444);
MODULE_PARM_DESC(backend_nr, "wanted /dev/videoN of each backend node (-1: automatic)");

static unsigned int consumers[VIACAM_MAX_CAMERAS];
module_param_array(consumers, uint, NULL, 0444);
MODULE_PARM_DESC(consumers, "capture nodes of each camera created at load time, 1-8 (default 1)");

static unsigned int timeout_ms = VIACAM_DEFAULT_TIMEOUT;
module_param(timeout_ms, uint, 0644);
MODULE_PARM_DESC(timeout_ms, "default ms without frames before the bridge repeats the last one");

/* viacam_devices_lock protects viacam_cameras (id -> camera) and viacam_count. */
static DEFINE_MUTEX(viacam_devices_lock);
static DEFINE_IDR(viacam_cameras);
static unsigned int viacam_count;

/* ------------------------------------------------------------------------
 * sysfs: discoverability and counters, on both nodes
 */

static ssize_t viacam_id_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", vdev_to_cam(to_video_device(dev))->id);
}
static DEVICE_ATTR_RO(viacam_id);

static ssize_t viacam_role_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct video_device *vdev = to_video_device(dev);
	struct viacam_cam *cam = vdev_to_cam(vdev);

	return sysfs_emit(buf, "%s\n", vdev == &cam->out_vdev ? "backend" : "capture");
}
static DEVICE_ATTR_RO(viacam_role);

/* The node's counterpart, e.g. "video5": the backend node, or the first capture node. */
static ssize_t viacam_peer_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct video_device *vdev = to_video_device(dev);
	struct viacam_cam *cam = vdev_to_cam(vdev);
	struct video_device *peer = vdev == &cam->out_vdev ? &cam->cons[0].vdev : &cam->out_vdev;

	return sysfs_emit(buf, "video%d\n", peer->num);
}
static DEVICE_ATTR_RO(viacam_peer);

/* Which capture node of its camera this is, from 0 (capture nodes only). */
static ssize_t viacam_index_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct viacam_consumer *cons = vdev_to_cons(to_video_device(dev));

	return sysfs_emit(buf, "%u\n", cons ? cons->index : 0);
}
static DEVICE_ATTR_RO(viacam_index);

static ssize_t viacam_stats_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct video_device *vdev = to_video_device(dev);
	struct viacam_cam *cam = vdev_to_cam(vdev);
	struct viacam_consumer *cons = vdev_to_cons(vdev);
	struct viacam_counters c;
	int len;

	viacam_stats(cam, cons, &c);
	len = sysfs_emit(buf, "frames_in %llu\nframes_out %llu\nframes_dropped %llu\n"
			 "frames_repeated %llu\nrepeating %d\ncopies %llu\n",
			 c.in, c.out, c.dropped, c.repeated, c.repeating, c.copies);
	/* A capture node adds what it got itself (frames_out counts all nodes). */
	if (cons)
		len += sysfs_emit_at(buf, len, "node_frames_out %llu\n", c.node_out);
	return len;
}
static DEVICE_ATTR_RO(viacam_stats);

static struct attribute *viacam_attrs[] = {
	&dev_attr_viacam_id.attr,
	&dev_attr_viacam_role.attr,
	&dev_attr_viacam_peer.attr,
	&dev_attr_viacam_index.attr,
	&dev_attr_viacam_stats.attr,
	NULL,
};
ATTRIBUTE_GROUPS(viacam);

/* ------------------------------------------------------------------------
 * Camera life
 */

/* Last reference gone: no file handle of either node is left. */
static void viacam_cam_free(struct v4l2_device *v4l2_dev)
{
	struct viacam_cam *cam = container_of(v4l2_dev, struct viacam_cam, v4l2_dev);

	viacam_queues_cleanup(cam);
	v4l2_ctrl_handler_free(cam->ctrls);
	kfree(cam->ctrls);
	kvfree(cam->ctrl_decl);
	kfree(cam->formats);
	v4l2_device_unregister(&cam->v4l2_dev);
	kfree(cam);
}

/* The memory is freed by viacam_cam_free, through the v4l2_device's refcount. */
static void viacam_vdev_release(struct video_device *vdev)
{
}

static void viacam_vdev_setup(struct viacam_cam *cam, struct video_device *vdev,
			      struct viacam_consumer *cons)
{
	bool capture = cons;

	if (cons && cons->index)
		snprintf(vdev->name, sizeof(vdev->name), "%.*s #%u",
			 (int)sizeof(vdev->name) - 5, cam->label, cons->index + 1);
	else if (capture)
		strscpy(vdev->name, cam->label, sizeof(vdev->name));
	else
		snprintf(vdev->name, sizeof(vdev->name), "viacam backend %u", cam->id);
	vdev->v4l2_dev = &cam->v4l2_dev;
	vdev->fops = capture ? &viacam_cap_fops : &viacam_out_fops;
	vdev->ioctl_ops = capture ? &viacam_cap_ioctl_ops : &viacam_out_ioctl_ops;
	vdev->release = viacam_vdev_release;
	vdev->lock = &cam->lock;
	vdev->queue = capture ? &cons->q : &cam->out_q;
	vdev->vfl_dir = capture ? VFL_DIR_RX : VFL_DIR_TX;
	vdev->device_caps = V4L2_CAP_STREAMING | V4L2_CAP_READWRITE |
		(capture ? V4L2_CAP_VIDEO_CAPTURE : V4L2_CAP_VIDEO_OUTPUT);
	vdev->dev.groups = viacam_groups;
	video_set_drvdata(vdev, cam);
}

/* Create a camera from @req (validated by the caller). Called with viacam_devices_lock held. */
static struct viacam_cam *viacam_cam_create(struct viacam_camera *req)
{
	struct viacam_cam *cam;
	unsigned int i;
	int id, ret;

	lockdep_assert_held(&viacam_devices_lock);
	if (viacam_count >= VIACAM_MAX_CAMERAS)
		return ERR_PTR(-ENOSPC);
	cam = kzalloc(sizeof(*cam), GFP_KERNEL);
	if (!cam)
		return ERR_PTR(-ENOMEM);
	if (req->id == VIACAM_ID_AUTO)
		id = idr_alloc(&viacam_cameras, cam, 0, VIACAM_MAX_CAMERAS, GFP_KERNEL);
	else
		id = idr_alloc(&viacam_cameras, cam, req->id, req->id + 1, GFP_KERNEL);
	if (id < 0) {
		kfree(cam);
		return ERR_PTR(id == -ENOSPC ? -EEXIST : id);
	}
	cam->id = id;
	if (req->label[0])
		strscpy(cam->label, req->label, sizeof(cam->label));
	else
		snprintf(cam->label, sizeof(cam->label), "viacam %u", id);
	strscpy(cam->card, cam->label, sizeof(cam->card));
	cam->timeout_ms = req->timeout_ms ? req->timeout_ms : clamp(timeout_ms, 1u,
								      VIACAM_MAX_TIMEOUT_MS);
	mutex_init(&cam->lock);
	viacam_fill_pix(&cam->fmt, V4L2_PIX_FMT_YUYV, 640, 480, 0);
	cam->interval = (struct v4l2_fract){ 1, 30 };

	snprintf(cam->v4l2_dev.name, sizeof(cam->v4l2_dev.name), "viacam-%u", id);
	ret = v4l2_device_register(NULL, &cam->v4l2_dev);
	if (ret)
		goto err_idr;
	/* From here on, viacam_cam_free (via v4l2_device_put) undoes everything. */
	cam->v4l2_dev.release = viacam_cam_free;

	ret = viacam_queues_init(cam, req->capture_count ? req->capture_count : 1);
	if (ret)
		goto err_put;
	for (i = 0; i < cam->ncons; i++)
		viacam_vdev_setup(cam, &cam->cons[i].vdev, &cam->cons[i]);
	viacam_vdev_setup(cam, &cam->out_vdev, NULL);
	ret = viacam_ctrls_init(cam);
	if (ret)
		goto err_put;
	/* The first capture node, then the backend node, then the others. */
	ret = video_register_device(&cam->cons[0].vdev, VFL_TYPE_VIDEO, req->capture_nr);
	if (ret)
		goto err_put;
	viacam_inject_delay(VIACAM_INJECT_ADD);
	ret = video_register_device(&cam->out_vdev, VFL_TYPE_VIDEO, req->backend_nr);
	if (ret)
		goto err_unreg_cap;
	/* Pairs with viacam_send_event(): events may go to its file handles now. */
	smp_store_release(&cam->out_ready, true);
	for (i = 1; i < cam->ncons; i++) {
		ret = video_register_device(&cam->cons[i].vdev, VFL_TYPE_VIDEO, VIACAM_NR_AUTO);
		if (ret)
			goto err_unreg_out;
	}
	v4l2_info(&cam->v4l2_dev, "camera %u '%s': capture %s (%u nodes), backend %s\n", id,
		  cam->label, video_device_node_name(&cam->cons[0].vdev), cam->ncons,
		  video_device_node_name(&cam->out_vdev));
	viacam_count++;
	return cam;

err_unreg_out:
	while (--i > 0)
		video_unregister_device(&cam->cons[i].vdev);
	video_unregister_device(&cam->out_vdev);
err_unreg_cap:
	video_unregister_device(&cam->cons[0].vdev);
err_put:
	idr_remove(&viacam_cameras, id);
	v4l2_device_put(&cam->v4l2_dev);
	return ERR_PTR(ret);
err_idr:
	idr_remove(&viacam_cameras, id);
	kfree(cam);
	return ERR_PTR(ret);
}

/*
 * Remove a camera, first half: it leaves the id table, so that no request of
 * the control node finds it any more. Called with viacam_devices_lock held;
 * the table's reference passes to the caller, who calls viacam_cam_teardown()
 * after letting go of that lock.
 */
static void viacam_cam_unlink(struct viacam_cam *cam)
{
	lockdep_assert_held(&viacam_devices_lock);
	idr_remove(&viacam_cameras, cam->id);
	viacam_count--;
}

/*
 * Second half, without viacam_devices_lock: it may wait for the camera's lock
 * (a stop in progress), and nothing else of the control node waits with it.
 * Open file handles stay valid but every further call fails with ENODEV;
 * waiters in DQBUF, read() or poll are woken.
 *
 * The nodes are unregistered first: an ioctl that is waiting for cam->lock
 * meanwhile sees that once it has the lock and says ENODEV, instead of
 * reaching vb2 after the queue error below and getting EIO from it.
 */
static void viacam_cam_teardown(struct viacam_cam *cam)
{
	unsigned int i;

	v4l2_info(&cam->v4l2_dev, "camera %u '%s' removed\n", cam->id, cam->label);
	video_unregister_device(&cam->out_vdev);
	for (i = 0; i < cam->ncons; i++)
		video_unregister_device(&cam->cons[i].vdev);

	mutex_lock(&cam->lock);
	WRITE_ONCE(cam->gone, true);
	for (i = 0; i < cam->ncons; i++)
		vb2_queue_error(&cam->cons[i].q);
	vb2_queue_error(&cam->out_q);
	mutex_unlock(&cam->lock);

	v4l2_device_put(&cam->v4l2_dev);
}

/* ------------------------------------------------------------------------
 * Control node
 */

static void viacam_query(struct viacam_cam *cam, struct viacam_camera *c)
{
	struct viacam_counters n;
	unsigned int i;

	mutex_lock(&cam->lock);
	memset(c, 0, sizeof(*c));
	c->id = cam->id;
	c->capture_nr = cam->cons[0].vdev.num;
	c->capture_count = cam->ncons;
	for (i = 1; i < cam->ncons; i++)
		c->capture_nrs[i - 1] = cam->cons[i].vdev.num;
	c->backend_nr = cam->out_vdev.num;
	c->timeout_ms = cam->timeout_ms;
	c->consumers = cam->cap_open;
	c->pixelformat = cam->fmt.pixelformat;
	c->width = cam->fmt.width;
	c->height = cam->fmt.height;
	c->interval_num = cam->interval.numerator;
	c->interval_den = cam->interval.denominator;
	strscpy(c->label, cam->label, sizeof(c->label));
	if (cam->formats)
		c->state |= VIACAM_STATE_DECLARED;
	for (i = 0; i < cam->ncons; i++)
		if (vb2_is_streaming(&cam->cons[i].q))
			c->state |= VIACAM_STATE_CAPTURE_STREAMING;
	mutex_unlock(&cam->lock);

	if (viacam_out_streaming(cam))
		c->state |= VIACAM_STATE_BACKEND_STREAMING;
	viacam_stats(cam, NULL, &n);
	if (n.repeating)
		c->state |= VIACAM_STATE_REPEATING;
	c->frames_in = n.in;
	c->frames_out = n.out;
	c->frames_dropped = n.dropped;
	c->frames_repeated = n.repeated;
}

static int viacam_check_add(struct viacam_camera *c)
{
	if (!viacam_text_ok(c->label, sizeof(c->label), true))
		return -EINVAL;
	if (c->id != VIACAM_ID_AUTO && c->id >= VIACAM_MAX_CAMERAS)
		return -EINVAL;
	if (c->capture_nr < VIACAM_NR_AUTO || c->backend_nr < VIACAM_NR_AUTO ||
	    c->capture_nr >= 256 || c->backend_nr >= 256)
		return -EINVAL;
	if (c->timeout_ms > VIACAM_MAX_TIMEOUT_MS)
		return -EINVAL;
	if (c->reserved0 || c->capture_count > VIACAM_MAX_CAPTURES ||
	    memchr_inv(c->capture_nrs, 0, sizeof(c->capture_nrs)))
		return -EINVAL;
	return 0;
}

static long viacam_ctl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct viacam_version v = {};
	struct viacam_list *l;
	struct viacam_camera c;
	struct viacam_cam *cam;
	long ret = 0;
	int id;

	switch (cmd) {
	case VIACAM_IOC_VERSION:
		mutex_lock(&viacam_devices_lock);
		v.cameras = viacam_count;
		mutex_unlock(&viacam_devices_lock);
		v.version = VIACAM_UAPI_VERSION;
		v.max_cameras = VIACAM_MAX_CAMERAS;
		return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;

	case VIACAM_IOC_LIST:
		l = kzalloc(sizeof(*l), GFP_KERNEL);
		if (!l)
			return -ENOMEM;
		mutex_lock(&viacam_devices_lock);
		idr_for_each_entry(&viacam_cameras, cam, id)
			l->ids[l->count++] = id;
		mutex_unlock(&viacam_devices_lock);
		ret = copy_to_user(uarg, l, sizeof(*l)) ? -EFAULT : 0;
		kfree(l);
		return ret;

	case VIACAM_IOC_ADD:
	case VIACAM_IOC_REMOVE:
	case VIACAM_IOC_QUERY:
		break;
	default:
		return -ENOTTY;
	}

	if (cmd != VIACAM_IOC_QUERY && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;

	mutex_lock(&viacam_devices_lock);
	if (cmd == VIACAM_IOC_QUERY) {
		/*
		 * Not under viacam_devices_lock: the query waits for the camera's
		 * lock, which a slow stop or copy may hold, and every other
		 * request of the control node would wait with it. A reference
		 * keeps the camera while it is queried.
		 */
		cam = c.id < VIACAM_MAX_CAMERAS ? idr_find(&viacam_cameras, c.id) : NULL;
		if (cam)
			v4l2_device_get(&cam->v4l2_dev);
		mutex_unlock(&viacam_devices_lock);
		if (!cam)
			return -ENOENT;
		viacam_query(cam, &c);
		/* Removed meanwhile: it is gone for the caller too. */
		ret = READ_ONCE(cam->gone) ? -ENOENT : 0;
		v4l2_device_put(&cam->v4l2_dev);
		if (!ret && copy_to_user(uarg, &c, sizeof(c)))
			ret = -EFAULT;
		return ret;
	}
	if (cmd == VIACAM_IOC_ADD) {
		ret = viacam_check_add(&c);
		if (!ret) {
			cam = viacam_cam_create(&c);
			if (IS_ERR(cam))
				ret = PTR_ERR(cam);
			else
				viacam_query(cam, &c);
		}
	} else {
		cam = c.id < VIACAM_MAX_CAMERAS ? idr_find(&viacam_cameras, c.id) : NULL;
		if (!cam)
			ret = -ENOENT;
		else
			viacam_cam_unlink(cam);
	}
	mutex_unlock(&viacam_devices_lock);
	if (cmd == VIACAM_IOC_REMOVE && !ret)
		viacam_cam_teardown(cam);

	if (!ret && cmd != VIACAM_IOC_REMOVE && copy_to_user(uarg, &c, sizeof(c)))
		ret = -EFAULT;
	return ret;
}

static const struct file_operations viacam_ctl_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= viacam_ctl_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice viacam_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "viacam",
	.fops	= &viacam_ctl_fops,
	.mode	= 0600,
};

/* ------------------------------------------------------------------------
 * Module
 */

static void viacam_remove_all(void)
{
	struct viacam_cam *cam, *gone[VIACAM_MAX_CAMERAS];
	unsigned int n = 0, i;
	int id;

	mutex_lock(&viacam_devices_lock);
	idr_for_each_entry(&viacam_cameras, cam, id) {
		viacam_cam_unlink(cam);
		gone[n++] = cam;
	}
	mutex_unlock(&viacam_devices_lock);
	for (i = 0; i < n; i++)
		viacam_cam_teardown(gone[i]);
}

static int __init viacam_init(void)
{
	unsigned int i;
	int ret;

	if (devices > VIACAM_MAX_CAMERAS) {
		pr_err("viacam: devices=%u is more than the limit of %u\n", devices,
		       VIACAM_MAX_CAMERAS);
		return -EINVAL;
	}
	for (i = 0; i < devices; i++) {
		struct viacam_camera c = {
			.id = i,
			.capture_nr = capture_nr[i],
			.backend_nr = backend_nr[i],
			.capture_count = consumers[i],
		};
		struct viacam_cam *cam;

		if (c.capture_count > VIACAM_MAX_CAPTURES) {
			pr_err("viacam: consumers=%u of camera %u is more than the limit of %u\n",
			       c.capture_count, i, VIACAM_MAX_CAPTURES);
			ret = -EINVAL;
			goto err_remove;
		}
		if (labels[i])
			strscpy(c.label, labels[i], sizeof(c.label));
		if (!viacam_text_ok(c.label, sizeof(c.label), true)) {
			pr_err("viacam: the label of camera %u is not printable UTF-8\n", i);
			ret = -EINVAL;
			goto err_remove;
		}
		mutex_lock(&viacam_devices_lock);
		cam = viacam_cam_create(&c);
		mutex_unlock(&viacam_devices_lock);
		if (IS_ERR(cam)) {
			ret = PTR_ERR(cam);
			pr_err("viacam: cannot create camera %u: %d\n", i, ret);
			goto err_remove;
		}
	}
	ret = misc_register(&viacam_misc);
	if (ret)
		goto err_remove;
	return 0;

err_remove:
	viacam_remove_all();
	return ret;
}

static void __exit viacam_exit(void)
{
	misc_deregister(&viacam_misc);
	viacam_remove_all();
	idr_destroy(&viacam_cameras);
}

module_init(viacam_init);
module_exit(viacam_exit);

MODULE_DESCRIPTION("viacam: V4L2 camera bridge between a user-space backend and capture applications");
MODULE_AUTHOR("viacam developers");
MODULE_LICENSE("GPL");
VIACAM_IMPORT_NS_DMA_BUF;	/* VIACAM_IOC_LEND exports capture buffers as dma-bufs */
