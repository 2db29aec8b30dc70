// SPDX-License-Identifier: GPL-2.0
/*
 * bx: generic netlink family "bx".
 *
 * The spec, Documentation/netlink/specs/bx.yaml, is the interface: the
 * kernel's ynl tools drive it (tools/net/ynl/cli.py --spec ...), and
 * tools/nl-regen.sh generates uapi/linux/bx_netlink.h and the policies
 * and ops table in nl-gen.c from it. Here: the handlers and the events.
 *
 * Dumps resume where the last message ended (cb->args[0] counts objects
 * already sent) and are marked inconsistent (NLM_F_DUMP_INTR) when the
 * set of objects changed between two parts. Setting tunables needs
 * CAP_NET_ADMIN (GENL_ADMIN_PERM); values out of range are rejected by
 * the policy with an extended ACK naming the attribute.
 */
#include <linux/bx.h>
#include <net/genetlink.h>

#include "admit.h"
#include "conn.h"
#include "dev.h"
#include "file.h"
#include "nl.h"
#include "nl-gen.h"
#include "op.h"
#include "params.h"
#include "stats.h"

/* ---- events ------------------------------------------------------------- */

/* Multicast @cmd with what @fill puts for @obj, in @net only. */
static void nl_event(struct net *net, u8 cmd,
		     int (*fill)(struct sk_buff *, void *), void *obj)
{
	struct sk_buff *skb;
	void *hdr;

	if (!genl_has_listeners(&bx_nl_family, net, BX_NLGRP_EVENTS))
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &bx_nl_family, 0, cmd);
	if (!hdr || fill(skb, obj)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&bx_nl_family, net, skb, 0, BX_NLGRP_EVENTS,
				GFP_KERNEL);
}

static int nl_fill_conn(struct sk_buff *skb, void *conn)
{
	return bx_conn_nl_fill(skb, conn);
}

static int nl_fill_peer(struct sk_buff *skb, void *peer)
{
	return bx_peer_nl_fill(skb, peer);
}

static int nl_fill_dev(struct sk_buff *skb, void *bdev)
{
	return bx_dev_nl_fill(skb, bdev);
}

/* A connection's or peer's events go to its namespace only (net.c). */
void bx_nl_conn_event(struct bx_conn *conn, u8 cmd)
{
	nl_event(bx_peer_net(conn->peer), cmd, nl_fill_conn, conn);
}

/* Devices are the initial namespace's, where rxe's network devices are. */
void bx_nl_dev_event(struct bx_dev *bdev, u8 cmd)
{
	nl_event(&init_net, cmd, nl_fill_dev, bdev);
}

void bx_nl_peer_event(struct bx_peer *peer, u8 cmd)
{
	nl_event(bx_peer_net(peer), cmd, nl_fill_peer, peer);
}

/*
 * One object of a dump: a message of @cmd with what @fill puts for @obj.
 * Returns -EMSGSIZE (nothing added) when @skb is full.
 */
int bx_nl_dump_one(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd,
		   int (*fill)(struct sk_buff *, void *), void *obj)
{
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &bx_nl_family, NLM_F_MULTI, cmd);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(cb, hdr);
	if (fill(skb, obj)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* What a dump part returns: a full message ends the part (the next one
 * resumes), an empty one with an error is the error.
 */
int bx_nl_dump_done(struct sk_buff *skb, int ret)
{
	return ret == -EMSGSIZE && skb->len ? skb->len : ret;
}

/* ---- requests ----------------------------------------------------------- */

/*
 * The dumps and events answer in every network namespace, with its own
 * objects (net.c). What is host-wide -- the counters, the tunables, the
 * admission settings -- is read and set from the initial namespace only.
 */
static int nl_check_ns(struct net *net, struct netlink_ext_ack *extack)
{
	if (net_eq(net, &init_net))
		return 0;
	NL_SET_ERR_MSG(extack, "host-wide: initial network namespace only");
	return -EOPNOTSUPP;
}

static int nl_check_dump(struct netlink_callback *cb)
{
	return 0;
}

static int nl_check_do(struct genl_info *info)
{
	return nl_check_ns(genl_info_net(info), info->extack);
}

int bx_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return nl_check_dump(cb) ?: bx_dev_nl_dump(skb, cb);
}

int bx_nl_conn_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return nl_check_dump(cb) ?: bx_conn_nl_dump(skb, cb);
}

/* Reply to @info with what @fill puts for @obj. */
static int nl_reply(struct genl_info *info,
		    int (*fill)(struct sk_buff *, void *), void *obj)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr || fill(msg, obj)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int conn_reply(struct bx_conn *conn, void *info)
{
	return nl_reply(info, nl_fill_conn, conn);
}

int bx_nl_conn_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, BX_A_CONN_PEER_ID))
		return -EINVAL;
	/* Filled under the peer's lock, which keeps the device's name. */
	ret = bx_conn_with_peer(genl_info_net(info),
				nla_get_u32(info->attrs[BX_A_CONN_PEER_ID]),
				conn_reply, info);
	if (ret == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[BX_A_CONN_PEER_ID],
				    "no connection to this peer");
	return ret;
}

int bx_nl_proc_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return nl_check_dump(cb) ?: bx_files_nl_dump(skb, cb);
}

int bx_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return nl_check_do(info) ?: nl_reply(info, bx_stats_nl_fill, NULL);
}

/*
 * The tunables, by attribute (bx_tunables_by_attr, params.c): u32s,
 * except bx_flow_control, a bool that travels as a u8. nl_test's
 * tunables_get checks that every attribute is in the reply, so a slot
 * left out shows there.
 */
static int nl_fill_tunables(struct sk_buff *msg, void *unused)
{
	int a;

	for (a = 1; a <= BX_A_TUNABLES_MAX; a++) {
		if (a == BX_A_TUNABLES_FLOW_CONTROL) {
			if (nla_put_u8(msg, a, READ_ONCE(bx_flow_control)))
				return -EMSGSIZE;
		} else if (bx_tunables_by_attr[a] &&
			   nla_put_u32(msg, a, READ_ONCE(*bx_tunables_by_attr[a]))) {
			return -EMSGSIZE;
		}
	}
	return 0;
}

int bx_nl_tunables_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return nl_check_do(info) ?: nl_reply(info, nl_fill_tunables, NULL);
}

/* The policy checked every range, so this applies all or nothing. */
int bx_nl_tunables_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	bool any = false;
	int a;

	if (nl_check_do(info))
		return -EOPNOTSUPP;
	for (a = 1; a <= BX_A_TUNABLES_MAX; a++)
		any |= !!info->attrs[a];
	if (!any) {
		NL_SET_ERR_MSG(info->extack, "no tunable given");
		return -EINVAL;
	}
	for (a = 1; a <= BX_A_TUNABLES_MAX; a++)
		if (info->attrs[a] && bx_tunables_by_attr[a])
			WRITE_ONCE(*bx_tunables_by_attr[a],
				   nla_get_u32(info->attrs[a]));
	if (info->attrs[BX_A_TUNABLES_FLOW_CONTROL])
		WRITE_ONCE(bx_flow_control,
			   nla_get_u8(info->attrs[BX_A_TUNABLES_FLOW_CONTROL]));
	return 0;
}

/* ---- admission ---------------------------------------------------------- */

static int nl_fill_admit(struct sk_buff *msg, void *unused)
{
	if (bx_allow_nl_fill(msg, BX_A_ADMIT_NET) ||
	    nla_put_u8(msg, BX_A_ADMIT_SECRET_ON, bx_secret_on()) ||
	    nla_put_u64_64bit(msg, BX_A_ADMIT_REFUSED,
			      atomic64_read(&bx_refused_connects),
			      BX_A_ADMIT_PAD) ||
	    nla_put_u64_64bit(msg, BX_A_ADMIT_AUTH_FAILURES,
			      atomic64_read(&bx_auth_failures),
			      BX_A_ADMIT_PAD) ||
	    nla_put_u64_64bit(msg, BX_A_ADMIT_VIOLATIONS,
			      atomic64_read(&bx_violations), BX_A_ADMIT_PAD))
		return -EMSGSIZE;
	return 0;
}

int bx_nl_admit_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return nl_check_do(info) ?: nl_reply(info, nl_fill_admit, NULL);
}

int bx_nl_allow_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[BX_A_NET_PREFIX_LEN + 1];
	struct bx_allow_net *nets;
	unsigned int n = 0;
	struct nlattr *a;
	int rem, ret;

	ret = nl_check_do(info);
	if (ret)
		return ret;
	nets = kcalloc(BX_ALLOW_MAX, sizeof(*nets), GFP_KERNEL);
	if (!nets)
		return -ENOMEM;
	nlmsg_for_each_attr(a, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(a) != BX_A_ADMIT_NET)
			continue;
		if (n == BX_ALLOW_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "too many networks (at most 64)");
			ret = -E2BIG;
			goto out;
		}
		ret = nla_parse_nested(tb, BX_A_NET_PREFIX_LEN, a,
				       bx_net_nl_policy, info->extack);
		if (ret)
			goto out;
		if (!tb[BX_A_NET_ADDR] || !tb[BX_A_NET_PREFIX_LEN]) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "a network needs addr and prefix-len");
			ret = -EINVAL;
			goto out;
		}
		nla_memcpy(&nets[n].addr, tb[BX_A_NET_ADDR], 16);
		nets[n].plen = nla_get_u8(tb[BX_A_NET_PREFIX_LEN]);
		n++;
	}
	ret = bx_allow_set(nets, n);
	if (ret == -EINVAL)
		NL_SET_ERR_MSG(info->extack,
			       "a network's address has bits set past its prefix");
out:
	kfree(nets);
	return ret;
}

int bx_nl_secret_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *a = info->attrs[BX_A_ADMIT_SECRET];
	int ret;

	ret = nl_check_do(info);
	if (ret)
		return ret;
	if (a && (nla_len(a) < BX_SECRET_MIN || nla_len(a) > BX_SECRET_MAX)) {
		NL_SET_ERR_MSG_ATTR(info->extack, a,
				    "a secret has 16 to 64 bytes");
		return -EINVAL;
	}
	ret = bx_secret_set(a ? nla_data(a) : NULL, a ? nla_len(a) : 0);
	if (ret == -ENOENT)
		NL_SET_ERR_MSG(info->extack, "the kernel has no hmac(sha256)");
	return ret;
}

int bx_nl_init(void)
{
	bx_nl_compat_ops();
	return genl_register_family(&bx_nl_family);
}

void bx_nl_uninit(void)
{
	genl_unregister_family(&bx_nl_family);
}
