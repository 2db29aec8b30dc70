// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the host-wide counters. One table names each: its netlink
 * attribute (Documentation/netlink/specs/bx.yaml) and its line in
 * /sys/kernel/debug/bx/stats: the attribute's name with "_" for "-",
 * but for the gauges, whose netlink names end in "-inflight" and whose
 * debugfs names do not (tx_bytes is tx-bytes-inflight). bx_stats_each()
 * takes one snapshot of all of them, which netlink's stats-get (nl.c)
 * and debugfs (debugfs.c) print.
 */

#include "conn.h"
#include "op.h"
#include "region.h"
#include "stats.h"
#include "rw.h"
#include "xfer.h"

static const struct bx_stat bx_stats[] = {
	{ "conns",		BX_A_STATS_CONNS,		true },
	{ "peers",		BX_A_STATS_PEERS,		true },
	{ "ops_inflight",	BX_A_STATS_OPS_INFLIGHT,	false },
	{ "mrs_inuse",		BX_A_STATS_MRS_INUSE,		false },
	{ "region_bytes",	BX_A_STATS_REGION_BYTES,	false },
	{ "copied_bytes",	BX_A_STATS_COPIED_BYTES,	false },
	{ "pieces",		BX_A_STATS_PIECES,		false },
	{ "tx_bytes",		BX_A_STATS_TX_BYTES_INFLIGHT,	false },
	{ "tx_peak_bytes",	BX_A_STATS_TX_PEAK_BYTES,	false },
	{ "rx_bytes",		BX_A_STATS_RX_BYTES_INFLIGHT,	false },
	{ "rx_peak_bytes",	BX_A_STATS_RX_PEAK_BYTES,	false },
	{ "busy_retries",	BX_A_STATS_BUSY_RETRIES,	false },
	{ "rnr_events",		BX_A_STATS_RNR_EVENTS,		false },
	{ "dup_pushes",		BX_A_STATS_DUP_PUSHES,		false },
	{ "recovered_ops",	BX_A_STATS_RECOVERED_OPS,	false },
	{ "recover_failed",	BX_A_STATS_RECOVER_FAILED,	false },
	{ "tx_small",		BX_A_STATS_TX_SMALL_INFLIGHT,	true },
	{ "small_passes",	BX_A_STATS_SMALL_PASSES,	false },
};

/* Every counter, by attribute, at one moment. */
static void stats_read(u64 v[BX_A_STATS_MAX + 1])
{
	struct bx_host_info hi;

	bx_window_host_snapshot(&hi);
	v[BX_A_STATS_CONNS] = bx_conn_count();
	v[BX_A_STATS_PEERS] = bx_peers_count();
	v[BX_A_STATS_OPS_INFLIGHT] = atomic64_read(&bx_conn_ops_inflight);
	v[BX_A_STATS_MRS_INUSE] = atomic64_read(&bx_xfer_mrs_inuse);
	v[BX_A_STATS_REGION_BYTES] = atomic64_read(&bx_region_bytes);
	v[BX_A_STATS_COPIED_BYTES] = atomic64_read(&bx_op_copied_bytes);
	v[BX_A_STATS_PIECES] = atomic64_read(&bx_rw_pieces);
	v[BX_A_STATS_TX_BYTES_INFLIGHT] = hi.tx.bytes;
	v[BX_A_STATS_TX_PEAK_BYTES] = hi.tx.peak_bytes;
	v[BX_A_STATS_RX_BYTES_INFLIGHT] = hi.rx.bytes;
	v[BX_A_STATS_RX_PEAK_BYTES] = hi.rx.peak_bytes;
	v[BX_A_STATS_BUSY_RETRIES] = hi.busy_retries;
	v[BX_A_STATS_RNR_EVENTS] = hi.rnr_events;
	v[BX_A_STATS_DUP_PUSHES] = atomic64_read(&bx_recover_dup_pushes);
	v[BX_A_STATS_RECOVERED_OPS] = atomic64_read(&bx_recover_ops_recovered);
	v[BX_A_STATS_RECOVER_FAILED] = atomic64_read(&bx_recover_failed);
	v[BX_A_STATS_TX_SMALL_INFLIGHT] = hi.tx.small;
	v[BX_A_STATS_SMALL_PASSES] = hi.small_passes;
}

/*
 * Call @fn on each counter in the table's order, with its value from one
 * snapshot of all of them, until it returns nonzero, which is returned.
 * Process context.
 */
int bx_stats_each(int (*fn)(const struct bx_stat *, u64, void *), void *arg)
{
	u64 v[BX_A_STATS_MAX + 1] = {};
	const struct bx_stat *s;
	int ret = 0;

	stats_read(v);
	for (s = bx_stats; s < bx_stats + ARRAY_SIZE(bx_stats) && !ret; s++)
		ret = fn(s, v[s->attr], arg);
	return ret;
}
