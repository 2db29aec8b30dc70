// SPDX-License-Identifier: GPL-2.0
/*
 * bx: tunables. Each is a module parameter with a range, writable at
 * runtime by root through /sys/module/bx/parameters/NAME; a write out of
 * range fails with -EINVAL and changes nothing. New values apply to the
 * next admission decision: nothing already in flight is recalled.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>

#include "conn.h"
#include "params.h"

/* The literal ranges below must agree with these. */
static_assert(BX_RX_BUFS / 2 == 64);
static_assert(BX_EAGER_MAX == 4096);

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

unsigned int bx_wnd_kb = 8192;
static struct bx_tunable bx_t_wnd_kb = { &bx_wnd_kb, 64, 1048576 };
module_param_cb(wnd_kb, &tunable_ops, &bx_t_wnd_kb, 0644);
MODULE_PARM_DESC(wnd_kb, "send window per connection, KiB in flight [64..1048576, default 8192]");

unsigned int bx_wnd_ops = 128;
static struct bx_tunable bx_t_wnd_ops = { &bx_wnd_ops, 1, 4096 };
module_param_cb(wnd_ops, &tunable_ops, &bx_t_wnd_ops, 0644);
MODULE_PARM_DESC(wnd_ops, "send window per connection, operations in flight [1..4096, default 128]");

unsigned int bx_host_wnd_kb = 32768;
static struct bx_tunable bx_t_host_wnd_kb = { &bx_host_wnd_kb, 64, 4194304 };
module_param_cb(host_wnd_kb, &tunable_ops, &bx_t_host_wnd_kb, 0644);
MODULE_PARM_DESC(host_wnd_kb, "send window of the host, KiB in flight over all connections [64..4194304, default 32768]");

unsigned int bx_host_wnd_ops = 1024;
static struct bx_tunable bx_t_host_wnd_ops = { &bx_host_wnd_ops, 1, 65536 };
module_param_cb(host_wnd_ops, &tunable_ops, &bx_t_host_wnd_ops, 0644);
MODULE_PARM_DESC(host_wnd_ops, "send window of the host, operations in flight [1..65536, default 1024]");

unsigned int bx_rx_wnd_kb = 16384;
static struct bx_tunable bx_t_rx_wnd_kb = { &bx_rx_wnd_kb, 64, 4194304 };
module_param_cb(rx_wnd_kb, &tunable_ops, &bx_t_rx_wnd_kb, 0644);
MODULE_PARM_DESC(rx_wnd_kb, "receiver admission: KiB of rendezvous data all peers together may have in flight towards this host [64..4194304, default 16384]");

/*
 * Debian 6.12's rxe breaks with several RDMA READs in flight on a QP: it
 * takes a READ response for the wrong WQE (rxe_completer() WARNs at
 * COMPST_ERROR with a successful WQE and the QP dies). With 4 that was
 * reliable, with 2 it happened in one of about eight runs of data.sh.
 * Hardware can have more.
 */
unsigned int bx_rd_max = 1;
static struct bx_tunable bx_t_rd_max = { &bx_rd_max, 1, 16 };
module_param_cb(rd_max, &tunable_ops, &bx_t_rd_max, 0644);
MODULE_PARM_DESC(rd_max, "RDMA READ operations in flight per connection [1..16, default 1]");

/*
 * RDMA READs a connection's QP has on the wire at once: the initiator
 * depth asked of the device for new connections (at most what it has).
 * With rd_max above it, bx posts the next READ early and the device
 * sends it as soon as the last one's response is in, without waiting
 * for bx to handle the completion.
 */
unsigned int bx_rd_depth = 16;
static struct bx_tunable bx_t_rd_depth = { &bx_rd_depth, 1, 16 };
module_param_cb(rd_depth, &tunable_ops, &bx_t_rd_depth, 0644);
MODULE_PARM_DESC(rd_depth, "RDMA READs a connection's QP has on the wire at once, for new connections [1..16, default 16]");

unsigned int bx_credit_batch = 32;
static struct bx_tunable bx_t_credit_batch = { &bx_credit_batch, 1, 64 };
module_param_cb(credit_batch, &tunable_ops, &bx_t_credit_batch, 0644);
MODULE_PARM_DESC(credit_batch, "receive credits owed before a bare credit update is sent [1..64, default 32]");

unsigned int bx_rdv_threshold = 4096;
static struct bx_tunable bx_t_rdv_threshold = { &bx_rdv_threshold, 0, 4096 };
module_param_cb(rdv_threshold, &tunable_ops, &bx_t_rdv_threshold, 0644);
MODULE_PARM_DESC(rdv_threshold, "largest payload sent inline (copied); larger ones go by rendezvous [0..4096, default 4096]");

unsigned int bx_drr_quantum = 65536;
static struct bx_tunable bx_t_drr_quantum = { &bx_drr_quantum, 512, 16777216 };
module_param_cb(drr_quantum, &tunable_ops, &bx_t_drr_quantum, 0644);
MODULE_PARM_DESC(drr_quantum, "bytes a process may send per round on a shared connection [512..16777216, default 65536]");

unsigned int bx_piece_kb = 256;
static struct bx_tunable bx_t_piece_kb = { &bx_piece_kb, 0, 16384 };
module_param_cb(piece_kb, &tunable_ops, &bx_t_piece_kb, 0644);
MODULE_PARM_DESC(piece_kb, "rendezvous transfers larger than this are posted in pieces of this many KiB, so that messages queued meanwhile pass between them (0: all at once) [0..16384, default 256]");

unsigned int bx_connect_timeout_ms = 10000;
static struct bx_tunable bx_t_connect_timeout_ms = { &bx_connect_timeout_ms, 1000, 120000 };
module_param_cb(connect_timeout_ms, &tunable_ops, &bx_t_connect_timeout_ms, 0644);
MODULE_PARM_DESC(connect_timeout_ms, "a connection attempt fails after this long [1000..120000, default 10000]");

unsigned int bx_ack_timeout = 17;
static struct bx_tunable bx_t_ack_timeout = { &bx_ack_timeout, 8, 24 };
module_param_cb(ack_timeout, &tunable_ops, &bx_t_ack_timeout, 0644);
MODULE_PARM_DESC(ack_timeout, "RC ACK timeout of new connections, 4.096 us * 2^N [8..24, default 17: 0.54 s]");

unsigned int bx_recover_ms = 15000;
static struct bx_tunable bx_t_recover_ms = { &bx_recover_ms, 0, 600000 };
module_param_cb(recover_ms, &tunable_ops, &bx_t_recover_ms, 0644);
MODULE_PARM_DESC(recover_ms, "operations in doubt after a connection failure wait this long for a new connection to the peer (0: fail them at once) [0..600000, default 15000]");

unsigned int bx_refuse_ms = 1000;
static struct bx_tunable bx_t_refuse_ms = { &bx_refuse_ms, 0, 600000 };
module_param_cb(refuse_ms, &tunable_ops, &bx_t_refuse_ms, 0644);
MODULE_PARM_DESC(refuse_ms, "a peer's connect requests are refused this long after a protocol violation, twice as long after each further one, up to 64 times (0: not at all) [0..600000, default 1000]");

unsigned int bx_peer_linger_ms = 60000;
static struct bx_tunable bx_t_peer_linger_ms = { &bx_peer_linger_ms, 0, 3600000 };
module_param_cb(peer_linger_ms, &tunable_ops, &bx_t_peer_linger_ms, 0644);
MODULE_PARM_DESC(peer_linger_ms, "a peer nothing holds stays in the table this long, keeping its replay record (no shorter than the peers' recover_ms) [0..3600000, default 60000]");

unsigned int bx_user_ops_max = 65536;
static struct bx_tunable bx_t_user_ops_max = { &bx_user_ops_max, 16, 1048576 };
module_param_cb(user_ops_max, &tunable_ops, &bx_t_user_ops_max, 0644);
MODULE_PARM_DESC(user_ops_max, "operations (and posted RECVs) one user's files may have in flight [16..1048576, default 65536]");

unsigned int bx_user_peers_max = 256;
static struct bx_tunable bx_t_user_peers_max = { &bx_user_peers_max, 1, 1024 };
module_param_cb(user_peers_max, &tunable_ops, &bx_t_user_peers_max, 0644);
MODULE_PARM_DESC(user_peers_max, "peers one user's files may hold [1..1024, default 256]");

unsigned int bx_user_services_max = 256;
static struct bx_tunable bx_t_user_services_max = { &bx_user_services_max, 1, 65536 };
module_param_cb(user_services_max, &tunable_ops, &bx_t_user_services_max, 0644);
MODULE_PARM_DESC(user_services_max, "services one user's files may bind [1..65536, default 256]");

unsigned int bx_op_timeout_ms = 60000;
static struct bx_tunable bx_t_op_timeout_ms = { &bx_op_timeout_ms, 0, 3600000 };
module_param_cb(op_timeout_ms, &tunable_ops, &bx_t_op_timeout_ms, 0644);
MODULE_PARM_DESC(op_timeout_ms, "deadline of a push, pull or reply whose submission gives none (0: none) [0..3600000, default 60000]");

bool bx_flow_control = true;
module_param_named(flow_control, bx_flow_control, bool, 0644);
MODULE_PARM_DESC(flow_control,
		 "enforce the send windows and receiver admission (off: only credits and rd_max; for benchmarks)");
