// SPDX-License-Identifier: GPL-2.0
/*
 * bx: debugfs, /sys/kernel/debug/bx/. Detailed state for tests and humans;
 * not a stable interface (the generic netlink family is).
 *
 *   devices	one line per bound RDMA device port
 *   conns	one line per connection: peer, state, then "key value"
 *		pairs (credits, send window, READ window, counters)
 *   flow	the host's windows and flow-control counters
 *   procs	one line per open /dev/bx: pid, payload bytes served
 *   stats	module-wide counters; all return to 0 when idle except
 *		copied_bytes (payload bytes moved by CPU copy, ever) and
 *		pieces (pieces of rendezvous transfers posted, ever)
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "debugfs.h"
#include "conn.h"
#include "dev.h"
#include "file.h"
#include "stats.h"

static struct dentry *bx_debugfs_root;

/* The files below all print with a show function kept in i_private. */
static int show_open(struct inode *inode, struct file *file)
{
	return single_open(file, inode->i_private, NULL);
}

static const struct file_operations show_fops = {
	.owner		= THIS_MODULE,
	.open		= show_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* debugfs failures are not fatal: the module works without it. */
void bx_debugfs_init(void)
{
	bx_debugfs_root = debugfs_create_dir("bx", NULL);
	debugfs_create_file("devices", 0444, bx_debugfs_root, bx_dev_show,
			    &show_fops);
	debugfs_create_file("conns", 0444, bx_debugfs_root, bx_conn_show,
			    &show_fops);
	debugfs_create_file("stats", 0444, bx_debugfs_root, bx_stats_show,
			    &show_fops);
	debugfs_create_file("flow", 0444, bx_debugfs_root, bx_flow_show,
			    &show_fops);
	debugfs_create_file("procs", 0444, bx_debugfs_root, bx_files_show,
			    &show_fops);
}

void bx_debugfs_uninit(void)
{
	debugfs_remove(bx_debugfs_root);
}
