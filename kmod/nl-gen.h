/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/bx.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_BX_GEN_H
#define _LINUX_BX_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/bx_netlink.h>

/* Common nested types */
extern const struct nla_policy bx_net_nl_policy[BX_A_NET_PREFIX_LEN + 1];
extern const struct nla_policy bx_pairkey_nl_policy[BX_A_PAIRKEY_KEY + 1];

int bx_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int bx_nl_conn_get_doit(struct sk_buff *skb, struct genl_info *info);
int bx_nl_conn_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int bx_nl_proc_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int bx_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info);
int bx_nl_tunables_get_doit(struct sk_buff *skb, struct genl_info *info);
int bx_nl_tunables_set_doit(struct sk_buff *skb, struct genl_info *info);
int bx_nl_admit_get_doit(struct sk_buff *skb, struct genl_info *info);
int bx_nl_allow_set_doit(struct sk_buff *skb, struct genl_info *info);
int bx_nl_secret_set_doit(struct sk_buff *skb, struct genl_info *info);
int bx_nl_keys_set_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	BX_NLGRP_EVENTS,
};

extern struct genl_family bx_nl_family;

#endif /* _LINUX_BX_GEN_H */
