/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the generic netlink family "bx" (Documentation/netlink/specs/bx.yaml;
 * policies and ops in the generated nl-gen.c).
 */
#ifndef _BX_NL_H
#define _BX_NL_H

#include <net/genetlink.h>
#include <linux/bx_netlink.h>

struct bx_conn;
struct bx_dev;
struct bx_peer;

int bx_nl_init(void);
void bx_nl_uninit(void);

/* Events on the "events" group; from process context, never fail. */
void bx_nl_conn_event(struct bx_conn *conn, u8 cmd);
void bx_nl_dev_event(struct bx_dev *bdev, u8 cmd);
void bx_nl_peer_event(struct bx_peer *peer, u8 cmd);

int bx_nl_dump_one(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd,
		   int (*fill)(struct sk_buff *, void *), void *obj);
int bx_nl_dump_done(struct sk_buff *skb, int ret);

/* Fill helpers of the objects' owners (conn.c, dev.c, chrdev.c). */
int bx_conn_nl_fill(struct sk_buff *skb, struct bx_conn *conn);
int bx_peer_nl_fill(struct sk_buff *skb, struct bx_peer *peer);
int bx_conn_nl_dump(struct sk_buff *skb, struct netlink_callback *cb);
int bx_conn_with_peer(struct net *net, u32 peer_id,
		      int (*fn)(struct bx_conn *, void *), void *arg);
int bx_dev_nl_fill(struct sk_buff *skb, struct bx_dev *bdev);
int bx_dev_nl_dump(struct sk_buff *skb, struct netlink_callback *cb);
/* The host's window counters, for BX_CMD_STATS_GET. */
struct bx_flow_stats {
	u64	tx, tx_peak;	/* host send window: bytes, peak bytes */
	u64	rx, rx_peak;	/* host receive window: bytes, peak bytes */
	u64	busy;		/* busy retries */
	u64	small_passes;	/* small operations admitted past a window */
	u32	tx_small;	/* ...of which in flight */
};

void bx_flow_nl_stats(struct bx_flow_stats *st);

#endif /* _BX_NL_H */
