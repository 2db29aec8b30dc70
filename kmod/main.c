// SPDX-License-Identifier: GPL-2.0
/*
 * bx: host-wide RDMA transport for parameter servers -- module entry.
 *
 * Bring-up order: debugfs (so devices can appear in it), the ib_client
 * (binds every RDMA device), the rdma_cm listener, then /dev/bx (users
 * may arrive only once everything they can reach exists). Teardown runs
 * in reverse: no file is open at unload, so the connections torn down by
 * bx_conn_uninit() carry no one's operations but orphans of closed files.
 * The peers, and bx's workqueue, go only after the devices: removing one
 * drains its registration QP, whose last completions end such orphans.
 */

#include <linux/module.h>
#include <net/genetlink.h>

#include <linux/bx_netlink.h>

#include "admit.h"
#include "chrdev.h"
#include "conn.h"
#include "debugfs.h"
#include "dev.h"
#include "net.h"
#include "nl.h"
#include "op.h"

/* The events' code (trace.h), which reads the structures above. */
#define CREATE_TRACE_POINTS
#include "trace.h"

static int __init bx_init(void)
{
	int ret;

	bx_admit_init();
	bx_debugfs_init();

	ret = bx_net_init();
	if (ret)
		goto err_debugfs;

	/* First in, last out: device and connection events go through it. */
	ret = bx_nl_init();
	if (ret)
		goto err_net;

	ret = bx_dev_init();
	if (ret)
		goto err_nl;

	/* The upper layers' handlers, before any connection can exist. */
	bx_op_init();
	bx_recv_init();
	bx_cm_init();

	ret = bx_conn_init();
	if (ret)
		goto err_dev;

	ret = bx_chrdev_init();
	if (ret)
		goto err_conn;

	pr_info("loaded\n");
	return 0;

err_conn:
	bx_conn_uninit();
	bx_dev_uninit();
	bx_conn_uninit_peers();
	bx_admit_uninit();
	goto err_nl;
err_dev:
	bx_dev_uninit();
err_nl:
	bx_nl_uninit();
err_net:
	bx_net_uninit();
err_debugfs:
	bx_debugfs_uninit();
	return ret;
}

static void __exit bx_exit(void)
{
	bx_chrdev_uninit();
	bx_conn_uninit();
	bx_dev_uninit();
	bx_conn_uninit_peers();
	bx_admit_uninit();
	bx_nl_uninit();
	bx_net_uninit();
	bx_debugfs_uninit();
	pr_info("unloaded\n");
}

module_init(bx_init);
module_exit(bx_exit);

MODULE_LICENSE("GPL");
/* bxctl (or any netlink client) asking for the family loads bx. */
MODULE_ALIAS_GENL_FAMILY(BX_FAMILY_NAME);
MODULE_DESCRIPTION("bx: host-wide RDMA transport for parameter servers");
MODULE_AUTHOR("The bx authors");
