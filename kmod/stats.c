// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the host-wide counters. One table names each: its netlink
 * attribute (Documentation/netlink/specs/bx.yaml) and, with "_" for "-",
 * its line in /sys/kernel/debug/bx/stats. bx_stats_read() takes one
 * snapshot of all of them, which both print.
 */

#include <linux/seq_file.h>
#include <net/netlink.h>

#include "conn.h"
#include "nl.h"
#include "op.h"
#include "region.h"
#include "stats.h"
#include "xfer.h"

/**
 * struct bx_stat - one counter
 * @name:	its debugfs name
 * @attr:	its netlink attribute, BX_A_STATS_*
 * @u32:	a u32 attribute (else u64)
 */
struct bx_stat {
	const char	*name;
	u16		attr;
	bool		u32;
};

static const struct bx_stat bx_stats[] = {
	{ "conns",		BX_A_STATS_CONNS,		true },
	{ "peers",		BX_A_STATS_PEERS,		true },
	{ "ops_inflight",	BX_A_STATS_OPS_INFLIGHT,	false },
	{ "mrs_inuse",		BX_A_STATS_MRS_INUSE,		false },
	{ "region_bytes",	BX_A_STATS_REGION_BYTES,	false },
	{ "copied_bytes",	BX_A_STATS_COPIED_BYTES,	false },
	{ "pieces",		BX_A_STATS_PIECES,		false },
	{ "tx_bytes",		BX_A_STATS_TX_BYTES,		false },
	{ "tx_peak_bytes",	BX_A_STATS_TX_PEAK_BYTES,	false },
	{ "rx_bytes",		BX_A_STATS_RX_BYTES,		false },
	{ "rx_peak_bytes",	BX_A_STATS_RX_PEAK_BYTES,	false },
	{ "busy_retries",	BX_A_STATS_BUSY_RETRIES,	false },
	{ "rnr_events",		BX_A_STATS_RNR_EVENTS,		false },
	{ "dup_pushes",		BX_A_STATS_DUP_PUSHES,		false },
	{ "recovered_ops",	BX_A_STATS_RECOVERED_OPS,	false },
	{ "recover_failed",	BX_A_STATS_RECOVER_FAILED,	false },
	{ "tx_small",		BX_A_STATS_TX_SMALL,		true },
	{ "small_passes",	BX_A_STATS_SMALL_PASSES,	false },
};

/* Every counter, by attribute, at one moment. */
static void bx_stats_read(u64 v[BX_A_STATS_MAX + 1])
{
	struct bx_flow_stats st;

	bx_flow_nl_stats(&st);
	v[BX_A_STATS_CONNS] = bx_conn_count();
	v[BX_A_STATS_PEERS] = bx_peers_count();
	v[BX_A_STATS_OPS_INFLIGHT] = atomic64_read(&bx_ops_inflight);
	v[BX_A_STATS_MRS_INUSE] = atomic64_read(&bx_mrs_inuse);
	v[BX_A_STATS_REGION_BYTES] = atomic64_read(&bx_region_bytes);
	v[BX_A_STATS_COPIED_BYTES] = atomic64_read(&bx_copied_bytes);
	v[BX_A_STATS_PIECES] = atomic64_read(&bx_pieces);
	v[BX_A_STATS_TX_BYTES] = st.tx;
	v[BX_A_STATS_TX_PEAK_BYTES] = st.tx_peak;
	v[BX_A_STATS_RX_BYTES] = st.rx;
	v[BX_A_STATS_RX_PEAK_BYTES] = st.rx_peak;
	v[BX_A_STATS_BUSY_RETRIES] = st.busy;
	v[BX_A_STATS_RNR_EVENTS] = atomic64_read(&bx_rnr_events);
	v[BX_A_STATS_DUP_PUSHES] = atomic64_read(&bx_dup_pushes);
	v[BX_A_STATS_RECOVERED_OPS] = atomic64_read(&bx_recovered_ops);
	v[BX_A_STATS_RECOVER_FAILED] = atomic64_read(&bx_recover_failed);
	v[BX_A_STATS_TX_SMALL] = st.tx_small;
	v[BX_A_STATS_SMALL_PASSES] = st.small_passes;
}

/* stats-get's reply. */
int bx_stats_nl_fill(struct sk_buff *msg, void *unused)
{
	u64 v[BX_A_STATS_MAX + 1] = {};
	const struct bx_stat *s;

	bx_stats_read(v);
	for (s = bx_stats; s < bx_stats + ARRAY_SIZE(bx_stats); s++)
		if (s->u32 ? nla_put_u32(msg, s->attr, v[s->attr]) :
		    nla_put_u64_64bit(msg, s->attr, v[s->attr],
				      BX_A_STATS_PAD))
			return -EMSGSIZE;
	return 0;
}

/* /sys/kernel/debug/bx/stats: "name value" lines. */
int bx_stats_show(struct seq_file *m, void *unused)
{
	u64 v[BX_A_STATS_MAX + 1] = {};
	const struct bx_stat *s;

	bx_stats_read(v);
	for (s = bx_stats; s < bx_stats + ARRAY_SIZE(bx_stats); s++)
		seq_printf(m, "%s %llu\n", s->name, v[s->attr]);
	return 0;
}
