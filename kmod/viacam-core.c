// SPDX-License-Identifier: GPL-2.0-only
/*
 * viacam-core.c - viacam bridge: module parameters, control node, camera lifetime.
 */
#include <linux/miscdevice.h>
#include <linux/module.h>

static struct miscdevice viacam_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "viacam",
};

static int __init viacam_init(void)
{
	return misc_register(&viacam_misc);
}

static void __exit viacam_exit(void)
{
	misc_deregister(&viacam_misc);
}

module_init(viacam_init);
module_exit(viacam_exit);

MODULE_DESCRIPTION("viacam: V4L2 camera bridge between a user-space backend and capture applications");
MODULE_LICENSE("GPL");
