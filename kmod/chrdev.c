// SPDX-License-Identifier: GPL-2.0
/*
 * bx: /dev/bx, the user API.
 *
 * Each open file is a struct bx_file. The misc device's fops carry
 * THIS_MODULE as owner, so an open file pins the module and rmmod fails
 * with -EWOULDBLOCK until the last file is closed.
 */

#include <linux/error-injection.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/bx.h>

#include "chrdev.h"
#include "dev.h"

/**
 * struct bx_file - one open /dev/bx
 * @tgid: process that opened it (for accounting and debugfs)
 */
struct bx_file {
	pid_t	tgid;
};

static int bx_open(struct inode *inode, struct file *filp)
{
	struct bx_file *bf;

	bf = kzalloc(sizeof(*bf), GFP_KERNEL);
	if (!bf)
		return -ENOMEM;
	bf->tgid = task_tgid_nr(current);
	filp->private_data = bf;
	return 0;
}
ALLOW_ERROR_INJECTION(bx_open, ERRNO);

static int bx_release(struct inode *inode, struct file *filp)
{
	kfree(filp->private_data);
	return 0;
}

static long bx_ioc_get_info(void __user *uarg)
{
	struct bx_info info = {};
	u32 usize, ksize = sizeof(info);

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < BX_INFO_SIZE_VER0)
		return -EINVAL;
	if (copy_from_user(&info, uarg, min(usize, ksize)))
		return -EFAULT;
	if (info.resv0 || info.resv1)
		return -EINVAL;

	info.size = min(usize, ksize);
	info.features = BX_FEAT_INFO;
	info.ndevs = bx_dev_count();

	if (copy_to_user(uarg, &info, info.size))
		return -EFAULT;
	/* A newer caller's tail that we do not know reads as zero. */
	if (usize > ksize && clear_user(uarg + ksize, usize - ksize))
		return -EFAULT;
	return 0;
}

static long bx_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case BX_IOC_GET_INFO:
		return bx_ioc_get_info(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations bx_fops = {
	.owner		= THIS_MODULE,
	.open		= bx_open,
	.release	= bx_release,
	.unlocked_ioctl	= bx_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice bx_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= BX_DEVICE_NAME,
	.fops	= &bx_fops,
	.mode	= 0666,
};

int bx_chrdev_init(void)
{
	return misc_register(&bx_misc);
}

void bx_chrdev_uninit(void)
{
	misc_deregister(&bx_misc);
}
