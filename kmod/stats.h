/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the host-wide counters, read at once for netlink's stats-get and
 * debugfs's stats (stats.c).
 */
#ifndef _BX_STATS_H
#define _BX_STATS_H

#include <linux/types.h>
#include <linux/bx_netlink.h>

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

int bx_stats_each(int (*fn)(const struct bx_stat *, u64, void *), void *arg);

#endif /* _BX_STATS_H */
