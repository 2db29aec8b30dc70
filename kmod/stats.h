/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the host-wide counters, read once for netlink's stats-get and
 * debugfs's stats.
 */
#ifndef _BX_STATS_H
#define _BX_STATS_H

#include <linux/types.h>
#include <linux/bx_netlink.h>

struct seq_file;
struct sk_buff;

int bx_stats_nl_fill(struct sk_buff *msg, void *unused);
int bx_stats_show(struct seq_file *m, void *unused);

#endif /* _BX_STATS_H */
