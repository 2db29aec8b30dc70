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

/* ---- devices ------------------------------------------------------------ */

static const char *port_state_name(enum ib_port_state state)
{
	switch (state) {
	case IB_PORT_DOWN:		return "DOWN";
	case IB_PORT_INIT:		return "INIT";
	case IB_PORT_ARMED:		return "ARMED";
	case IB_PORT_ACTIVE:		return "ACTIVE";
	case IB_PORT_ACTIVE_DEFER:	return "ACTIVE_DEFER";
	default:			return "NOP";
	}
}

static int dev_show_one(const struct bx_dev_info *di, void *m)
{
	seq_printf(m, "%s index %u port %u state %s mtu %d netdev %s\n",
		   di->name, di->index, di->port, port_state_name(di->state),
		   di->mtu, di->netdev[0] ? di->netdev : "-");
	return 0;
}

/* "devices": one line per bound device and port. */
static int dev_show(struct seq_file *m, void *unused)
{
	return bx_devs_each(NULL, true, NULL, NULL, dev_show_one, m);
}

/* ---- connections -------------------------------------------------------- */

static const char *state_name(enum bx_conn_state s)
{
	return s == BX_CONN_STATE_UP ? "up" :
	       s == BX_CONN_STATE_CONNECTING ? "connecting" : "down";
}

static int conn_show_one(const struct bx_conn_info *c, void *m)
{
	seq_printf(m, "peer %pISc id %u lane %u state %s %s dev %s qp %u awaiting %lu tx %llu rx %llu tx_free %d",
		   &c->peer.addr, c->peer.id, c->lane, state_name(c->state),
		   c->active ? "active" : "passive",
		   c->dev[0] ? c->dev : "-", c->qpn, c->awaiting, c->tx_msgs,
		   c->rx_msgs, c->tx_free);
	seq_printf(m, " credits %u credits_max %u grant %u granted %llu used %llu stalls %llu updates %llu",
		   c->cr.credits, c->cr.max, c->cr.grant, c->cr.granted,
		   c->cr.used, c->cr.stalls, c->cr.updates);
	seq_printf(m, " wnd_bytes %llu wnd_ops %u wnd_peak_bytes %llu wnd_peak_ops %u wnd_waits %llu wnd_small %u small_passes %llu",
		   c->wnd.bytes, c->wnd.ops, c->wnd.peak_bytes,
		   c->wnd.peak_ops, c->wnd.waits, c->wnd.small,
		   c->small_passes);
	seq_printf(m, " rd_bytes %llu rd_reads %u rd_peak_bytes %llu rd_peak_reads %u rd_waits %llu",
		   c->rdwnd.bytes, c->rdwnd.reads, c->rdwnd.peak_bytes,
		   c->rdwnd.peak_reads, c->rdwnd.waits);
	seq_printf(m, " queued %u rd_queued %u busy_retries %llu rnr %llu restarts %u ack_timeout %u wpieces %u",
		   c->queued, c->rd_queued, c->busy_retries, c->rnr_events,
		   c->peer.restarts, c->ack_timeout, c->wpieces);
	seq_printf(m, " readyq %zu retryq %zu mrwaitq %zu regq %zu mrs %u mrs_free %u\n",
		   c->readyq, c->retryq, c->mrwaitq, c->regq, c->mrs,
		   c->mrs - c->mrs_inuse);
	return 0;
}

/*
 * "conns": one line per connection, "key value" pairs after the peer
 * address; the credit, window and READ window counters of flow.h.
 */
static int conn_show(struct seq_file *m, void *unused)
{
	return bx_conns_each(NULL, NULL, conn_show_one, m);
}

/* ---- the host ----------------------------------------------------------- */

/* "flow": the host's windows, "key value" per line. */
static int flow_show(struct seq_file *m, void *unused)
{
	const struct bx_win *tx, *rx;
	struct bx_host_info hi;

	bx_window_host_snapshot(&hi);
	tx = &hi.tx;
	rx = &hi.rx;
	seq_printf(m, "tx_bytes %llu\ntx_ops %u\ntx_peak_bytes %llu\ntx_peak_ops %u\ntx_waits %llu\ntx_small %u\n",
		   tx->bytes, tx->ops, tx->peak_bytes, tx->peak_ops, tx->waits,
		   tx->small);
	seq_printf(m, "rx_bytes %llu\nrx_reads %u\nrx_peak_bytes %llu\nrx_peak_reads %u\nrx_waits %llu\n",
		   rx->bytes, rx->reads, rx->peak_bytes, rx->peak_reads,
		   rx->waits);
	seq_printf(m, "rd_conns %u\nbusy_retries %llu\nrnr_events %lld\n",
		   hi.rd_conns, hi.busy_retries, hi.rnr_events);
	seq_printf(m, "tx_passed_max %llu\nrx_passed_max %llu\nsmall_passes %llu\n",
		   hi.passed_max[BX_HOSTWND_TX], hi.passed_max[BX_HOSTWND_RX],
		   hi.small_passes);
	return 0;
}

static int stat_show_one(const struct bx_stat *s, u64 v, void *m)
{
	seq_printf(m, "%s %llu\n", s->name, v);
	return 0;
}

/* "stats": "name value" lines, the table of stats.c. */
static int stats_show(struct seq_file *m, void *unused)
{
	return bx_stats_each(stat_show_one, m);
}

/* ---- files -------------------------------------------------------------- */

static int file_show_one(const struct bx_file_info *fi, void *m)
{
	seq_printf(m, "pid %d bytes_tx %lld bytes_rx %lld inflight %u\n",
		   fi->pid, fi->bytes_tx, fi->bytes_rx, fi->inflight);
	return 0;
}

/* "procs": one line per open /dev/bx. */
static int files_show(struct seq_file *m, void *unused)
{
	return bx_files_each(NULL, NULL, file_show_one, m);
}

/* ---- the files ---------------------------------------------------------- */

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
	debugfs_create_file("devices", 0444, bx_debugfs_root, dev_show,
			    &show_fops);
	debugfs_create_file("conns", 0444, bx_debugfs_root, conn_show,
			    &show_fops);
	debugfs_create_file("stats", 0444, bx_debugfs_root, stats_show,
			    &show_fops);
	debugfs_create_file("flow", 0444, bx_debugfs_root, flow_show,
			    &show_fops);
	debugfs_create_file("procs", 0444, bx_debugfs_root, files_show,
			    &show_fops);
}

void bx_debugfs_uninit(void)
{
	debugfs_remove(bx_debugfs_root);
}
