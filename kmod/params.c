// SPDX-License-Identifier: GPL-2.0
/*
 * bx: tunables. Each is a module parameter with a range, writable at
 * runtime by root through /sys/module/bx/parameters/NAME; a write out of
 * range fails with -EINVAL and changes nothing. New values apply to the
 * next admission decision: nothing already in flight is recalled.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/sysfs.h>

#include <linux/bx_netlink.h>

#include "params.h"

struct bx_tunable {
	unsigned int	*val;
	unsigned int	min;
	unsigned int	max;
};

static int tunable_set(const char *val, const struct kernel_param *kp)
{
	const struct bx_tunable *t = kp->arg;
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v < t->min || v > t->max)
		return -EINVAL;
	WRITE_ONCE(*t->val, v);
	return 0;
}

static int tunable_get(char *buf, const struct kernel_param *kp)
{
	const struct bx_tunable *t = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(*t->val));
}

static const struct kernel_param_ops tunable_ops = {
	.set	= tunable_set,
	.get	= tunable_get,
};

/*
 * Why some defaults are what they are (Documentation/bx.rst, "Tunables"):
 *
 * rd_max 1: Debian 6.12's rxe breaks with several RDMA READs in flight on
 * a QP: it takes a READ response for the wrong WQE (rxe_completer() WARNs
 * at COMPST_ERROR with a successful WQE and the QP dies). Hardware can
 * have more.
 *
 * rd_depth: the initiator depth asked of the device for new connections
 * (at most what it has). With rd_max above it, bx posts the next READ
 * early and the device sends it as soon as the last one's response is
 * in, without waiting for bx to handle the completion.
 */
#define BX_TUNABLE_DEFINE(name, ATTR, def, lo, hi, desc)		\
	unsigned int bx_##name = (def);					\
	static struct bx_tunable bx_t_##name = { &bx_##name, lo, hi };	\
	module_param_cb(name, &tunable_ops, &bx_t_##name, 0644);	\
	MODULE_PARM_DESC(name, desc " [" #lo ".." #hi ", default " #def "]");
BX_TUNABLES(BX_TUNABLE_DEFINE)
#undef BX_TUNABLE_DEFINE

/* Each by its netlink attribute (nl.c); flow_control's slot stays NULL. */
#define BX_TUNABLE_ATTR(name, ATTR, def, lo, hi, desc)			\
	[BX_A_TUNABLES_##ATTR] = &bx_##name,
unsigned int *const bx_params_by_attr[BX_A_TUNABLES_MAX + 1] = {
	BX_TUNABLES(BX_TUNABLE_ATTR)
};

#undef BX_TUNABLE_ATTR

/*
 * The rdma_cm port bx listens on and connects to, the same on every host
 * of a cluster. Read when a namespace's listener starts (module load):
 * not writable at runtime.
 */
unsigned int bx_port = BX_PORT_DEFAULT;
static struct bx_tunable bx_t_port = { &bx_port, 1, 65535 };
module_param_cb(port, &tunable_ops, &bx_t_port, 0444);
MODULE_PARM_DESC(port,
		 "rdma_cm port bx listens on and connects to, the same on all hosts [1..65535, default 7471]");

bool bx_flow_control = true;
module_param_named(flow_control, bx_flow_control, bool, 0644);
MODULE_PARM_DESC(flow_control,
		 "enforce the send windows and receiver admission (off: only credits and rd_max; for benchmarks)");
