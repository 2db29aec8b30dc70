// SPDX-License-Identifier: GPL-2.0
/*
 * bx: debugfs, /sys/kernel/debug/bx/. Detailed state for tests and humans;
 * not a stable interface (the generic netlink family is).
 *
 *   devices	one line per bound RDMA device port
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "debugfs.h"
#include "dev.h"

static struct dentry *bx_debugfs_root;

static int devices_open(struct inode *inode, struct file *file)
{
	return single_open(file, bx_dev_show, NULL);
}

static const struct file_operations devices_fops = {
	.owner		= THIS_MODULE,
	.open		= devices_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* debugfs failures are not fatal: the module works without it. */
void bx_debugfs_init(void)
{
	bx_debugfs_root = debugfs_create_dir("bx", NULL);
	debugfs_create_file("devices", 0444, bx_debugfs_root, NULL,
			    &devices_fops);
}

void bx_debugfs_uninit(void)
{
	debugfs_remove(bx_debugfs_root);
}
