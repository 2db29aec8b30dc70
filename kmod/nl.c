// SPDX-License-Identifier: GPL-2.0
/*
 * bx: generic netlink family "bx".
 *
 * The spec, Documentation/netlink/specs/bx.yaml, is the interface: the
 * kernel's ynl tools drive it (tools/net/ynl/cli.py --spec ...), and
 * tools/nl-regen.sh generates uapi/linux/bx_netlink.h and the policies
 * and ops table in nl-gen.c from it. Here: the handlers and the events,
 * and every attribute bx puts. The objects' owners hand over snapshots
 * (bx_*_snapshot(), and bx_*_each() to walk a list), each read from the
 * object in one place, which debugfs.c prints too.
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
#include "event.h"
#include "nl.h"
#include "nl-gen.h"
#include "params.h"
#include "stats.h"

/* ---- what each object puts ---------------------------------------------- */

static int nl_put_dev(struct sk_buff *skb, const struct bx_dev_info *di)
{
	if (nla_put_string(skb, BX_A_DEV_NAME, di->name) ||
	    nla_put_u32(skb, BX_A_DEV_PORT, di->port) ||
	    (di->netdev[0] && nla_put_string(skb, BX_A_DEV_NETDEV, di->netdev)))
		return -EMSGSIZE;
	return 0;
}

static int nl_put_conn_u64(struct sk_buff *skb, int type, u64 v)
{
	return nla_put_u64_64bit(skb, type, v, BX_A_CONN_PAD);
}

/*
 * A peer's attributes (BX_A_CONN_PEER_*, recovery counters): with its
 * connection's, and the whole of a recovery event.
 */
static int nl_put_peer(struct sk_buff *skb, const struct bx_peer_info *pi)
{
	struct in6_addr a6;

	bx_admit_addr_v6((const struct sockaddr *)&pi->addr, a6.s6_addr);
	if (nla_put_u32(skb, BX_A_CONN_PEER_ID, pi->id) ||
	    nla_put(skb, BX_A_CONN_PEER_ADDR, sizeof(a6), &a6) ||
	    nla_put_u32(skb, BX_A_CONN_PEER_RESTARTS, pi->restarts) ||
	    nla_put_u32(skb, BX_A_CONN_PARKED, pi->parked) ||
	    nla_put_u32(skb, BX_A_CONN_RECOVERIES, pi->recoveries) ||
	    nl_put_conn_u64(skb, BX_A_CONN_RECOVERED_OPS, pi->recovered) ||
	    nl_put_conn_u64(skb, BX_A_CONN_RECOVER_FAILED, pi->recover_failed) ||
	    nl_put_conn_u64(skb, BX_A_CONN_DUP_PUSHES, pi->dup_pushes) ||
	    nla_put_u32(skb, BX_A_CONN_PEER_VIOLATIONS, pi->violations) ||
	    nla_put_u32(skb, BX_A_CONN_PEER_REFUSED, pi->refused) ||
	    nla_put_u32(skb, BX_A_CONN_PEER_REFUSING_MS, pi->refusing_ms))
		return -EMSGSIZE;
	return 0;
}

/* A connection's attributes (BX_A_CONN_*). */
static int nl_put_conn(struct sk_buff *skb, const struct bx_conn_info *c)
{
	if (nl_put_peer(skb, &c->peer) ||
	    nla_put_u32(skb, BX_A_CONN_LANE, c->lane) ||
	    (c->dev[0] && nla_put_string(skb, BX_A_CONN_DEV_NAME, c->dev)) ||
	    nl_put_conn_u64(skb, BX_A_CONN_PEER_EPOCH, c->peer_epoch) ||
	    nla_put_u32(skb, BX_A_CONN_AWAITING, c->awaiting) ||
	    nla_put_u32(skb, BX_A_CONN_STATE, c->state) ||
	    (c->active && nla_put_flag(skb, BX_A_CONN_ACTIVE)) ||
	    (c->auth && nla_put_flag(skb, BX_A_CONN_AUTH)) ||
	    nla_put_u32(skb, BX_A_CONN_QPN, c->qpn) ||
	    nla_put_s32(skb, BX_A_CONN_ERR, c->err) ||
	    nl_put_conn_u64(skb, BX_A_CONN_TX_MSGS, c->tx_msgs) ||
	    nl_put_conn_u64(skb, BX_A_CONN_RX_MSGS, c->rx_msgs) ||
	    nla_put_u32(skb, BX_A_CONN_CREDITS, c->cr.credits) ||
	    nla_put_u32(skb, BX_A_CONN_CREDITS_MAX, c->cr.max) ||
	    nla_put_u32(skb, BX_A_CONN_GRANT, c->cr.grant) ||
	    nl_put_conn_u64(skb, BX_A_CONN_CREDIT_STALLS, c->cr.stalls) ||
	    nl_put_conn_u64(skb, BX_A_CONN_CREDIT_UPDATES, c->cr.updates) ||
	    nl_put_conn_u64(skb, BX_A_CONN_WND_BYTES_INFLIGHT, c->wnd.bytes) ||
	    nla_put_u32(skb, BX_A_CONN_WND_OPS_INFLIGHT, c->wnd.ops) ||
	    nl_put_conn_u64(skb, BX_A_CONN_WND_PEAK_BYTES, c->wnd.peak_bytes) ||
	    nl_put_conn_u64(skb, BX_A_CONN_WND_WAITS, c->wnd.waits) ||
	    nl_put_conn_u64(skb, BX_A_CONN_RD_BYTES_INFLIGHT, c->rdwnd.bytes) ||
	    nla_put_u32(skb, BX_A_CONN_RD_READS_INFLIGHT, c->rdwnd.reads) ||
	    nl_put_conn_u64(skb, BX_A_CONN_RD_PEAK_BYTES, c->rdwnd.peak_bytes) ||
	    nl_put_conn_u64(skb, BX_A_CONN_BUSY_RETRIES, c->busy_retries) ||
	    nl_put_conn_u64(skb, BX_A_CONN_RNR, c->rnr_events) ||
	    nla_put_u32(skb, BX_A_CONN_WND_SMALL_INFLIGHT, c->wnd.small) ||
	    nl_put_conn_u64(skb, BX_A_CONN_SMALL_PASSES, c->small_passes))
		return -EMSGSIZE;
	return 0;
}

static int nl_put_file(struct sk_buff *skb, const struct bx_file_info *fi)
{
	if (nla_put_u32(skb, BX_A_PROC_PID, fi->pid) ||
	    nla_put_u64_64bit(skb, BX_A_PROC_BYTES_TX, fi->bytes_tx,
			      BX_A_PROC_PAD) ||
	    nla_put_u64_64bit(skb, BX_A_PROC_BYTES_RX, fi->bytes_rx,
			      BX_A_PROC_PAD) ||
	    nla_put_u32(skb, BX_A_PROC_INFLIGHT, fi->inflight) ||
	    nla_put_u64_64bit(skb, BX_A_PROC_REGION_BYTES, fi->region_bytes,
			      BX_A_PROC_PAD))
		return -EMSGSIZE;
	return 0;
}

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
	struct bx_conn_info ci;

	bx_conn_snapshot(conn, &ci);
	return nl_put_conn(skb, &ci);
}

static int nl_fill_peer(struct sk_buff *skb, void *peer)
{
	struct bx_peer_info pi;

	bx_peer_snapshot(peer, &pi);
	return nl_put_peer(skb, &pi);
}

static int nl_fill_dev(struct sk_buff *skb, void *bdev)
{
	struct bx_dev_info di;

	bx_dev_snapshot(bdev, &di);
	return nl_put_dev(skb, &di);
}

/* A connection's or peer's events go to its namespace only (net.c). */
static void nl_conn_event(struct bx_conn *conn, u8 cmd)
{
	nl_event(bx_peer_net(conn->peer), cmd, nl_fill_conn, conn);
}

/* Devices are the initial namespace's, where rxe's network devices are. */
static void nl_dev_event(struct bx_dev *bdev, u8 cmd)
{
	nl_event(&init_net, cmd, nl_fill_dev, bdev);
}

static void nl_peer_event(struct bx_peer *peer, u8 cmd)
{
	nl_event(bx_peer_net(peer), cmd, nl_fill_peer, peer);
}

/* The objects' events (event.h) go to the "events" group. */
static const struct bx_event_ops nl_events = {
	.dev	= nl_dev_event,
	.conn	= nl_conn_event,
	.peer	= nl_peer_event,
};

/* ---- dumps -------------------------------------------------------------- */

/*
 * A dump part in progress. The objects' owners walk their lists
 * (bx_*_each(), which resume at cb->args[0] and set cb->seq to the list's
 * generation) and call back with each object's snapshot; those of @net
 * (and for files, of @uid unless @all_users) go into @skb, a message of
 * @cmd each.
 */
struct nl_dump {
	struct sk_buff		*skb;
	struct netlink_callback	*cb;
	u8			cmd;
	struct net		*net;
	bool			all_users;
	kuid_t			uid;
};

static void nl_dump_init(struct nl_dump *d, struct sk_buff *skb,
			 struct netlink_callback *cb, u8 cmd)
{
	d->skb = skb;
	d->cb = cb;
	d->cmd = cmd;
	d->net = sock_net(cb->skb->sk);
	d->all_users = false;
	d->uid = NETLINK_CB(cb->skb).creds.uid;
}

/* The header of the next object's message, or NULL when @d->skb is full. */
static void *nl_dump_start(struct nl_dump *d)
{
	struct netlink_callback *cb = d->cb;
	void *hdr;

	hdr = genlmsg_put(d->skb, NETLINK_CB(cb->skb).portid,
			  cb->nlh->nlmsg_seq, &bx_nl_family, NLM_F_MULTI,
			  d->cmd);
	if (hdr)
		genl_dump_check_consistent(cb, hdr);
	return hdr;
}

/*
 * End the message nl_dump_start() began and @err says how its attributes
 * went: -EMSGSIZE (nothing added) when they did not fit.
 */
static int nl_dump_end(struct nl_dump *d, void *hdr, int err)
{
	if (!hdr)
		return -EMSGSIZE;
	if (err) {
		genlmsg_cancel(d->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(d->skb, hdr);
	return 0;
}

/*
 * What a dump part returns: a full message ends the part (the next one
 * resumes), an empty one with an error is the error.
 */
static int nl_dump_done(struct sk_buff *skb, int ret)
{
	return ret == -EMSGSIZE && skb->len ? skb->len : ret;
}

static int nl_dump_dev(const struct bx_dev_info *di, void *arg)
{
	struct nl_dump *d = arg;
	void *hdr = nl_dump_start(d);

	return nl_dump_end(d, hdr, hdr ? nl_put_dev(d->skb, di) : 0);
}

/* The devices reachable from the caller's namespace (net.c). */
int bx_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long pos = cb->args[0];
	struct nl_dump d;
	int ret;

	nl_dump_init(&d, skb, cb, BX_CMD_DEV_GET);
	ret = bx_devs_each(d.net, false, &pos, &cb->seq, nl_dump_dev, &d);
	cb->args[0] = pos;
	return nl_dump_done(skb, ret);
}

static int nl_dump_conn(const struct bx_conn_info *ci, void *arg)
{
	struct nl_dump *d = arg;
	void *hdr;

	if (!net_eq(ci->peer.net, d->net) ||
	    (!d->all_users &&
	     !bx_files_user_holds(d->net, d->uid, ci->peer.id)))
		return 0;
	hdr = nl_dump_start(d);
	return nl_dump_end(d, hdr, hdr ? nl_put_conn(d->skb, ci) : 0);
}

/*
 * The connections of the caller's network namespace (net.c). Without
 * CAP_NET_ADMIN a caller sees only those to peers its own user's files
 * hold: other peers, their incarnations and QPs are not its business.
 */
int bx_nl_conn_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long pos = cb->args[0];
	struct nl_dump d;
	int ret;

	nl_dump_init(&d, skb, cb, BX_CMD_CONN_GET);
	d.all_users = netlink_capable(cb->skb, CAP_NET_ADMIN);
	ret = bx_conns_each(&pos, &cb->seq, nl_dump_conn, &d);
	cb->args[0] = pos;
	return nl_dump_done(skb, ret);
}

static int nl_dump_file(const struct bx_file_info *fi, void *arg)
{
	struct nl_dump *d = arg;
	void *hdr;

	if (!net_eq(fi->net, d->net) ||
	    (!d->all_users && !uid_eq(fi->uid, d->uid)))
		return 0;
	hdr = nl_dump_start(d);
	return nl_dump_end(d, hdr, hdr ? nl_put_file(d->skb, fi) : 0);
}

/*
 * Processes with /dev/bx open in the caller's network namespace. Without
 * CAP_NET_ADMIN a caller sees the files of its own user only: pids and
 * byte counts of others are theirs.
 */
int bx_nl_proc_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long pos = cb->args[0];
	struct nl_dump d;
	int ret;

	nl_dump_init(&d, skb, cb, BX_CMD_PROC_GET);
	d.all_users = netlink_capable(cb->skb, CAP_NET_ADMIN);
	ret = bx_files_each(&pos, &cb->seq, nl_dump_file, &d);
	cb->args[0] = pos;
	return nl_dump_done(skb, ret);
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

static int nl_check_do(struct genl_info *info)
{
	return nl_check_ns(genl_info_net(info), info->extack);
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

static int nl_put_conn_obj(struct sk_buff *skb, void *ci)
{
	return nl_put_conn(skb, ci);
}

int bx_nl_conn_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *lane = info->attrs[BX_A_CONN_LANE];
	struct bx_conn_info ci;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, BX_A_CONN_PEER_ID))
		return -EINVAL;
	/* Taken under the peer's lock, which keeps the device's name. */
	ret = bx_conn_snapshot_by_id(genl_info_net(info),
				     nla_get_u32(info->attrs[BX_A_CONN_PEER_ID]),
				     lane ? nla_get_u32(lane) : 0, &ci);
	/* As the dump: a peer of the caller's files, unless an admin. */
	if (!ret && !netlink_capable(skb, CAP_NET_ADMIN) &&
	    !bx_files_user_holds(genl_info_net(info),
				 NETLINK_CB(skb).creds.uid, ci.peer.id))
		ret = -ENOENT;
	if (ret == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[BX_A_CONN_PEER_ID],
				    "no connection to this peer");
	return ret ?: nl_reply(info, nl_put_conn_obj, &ci);
}

static int nl_put_stat(const struct bx_stat *s, u64 v, void *msg)
{
	if (s->u32 ? nla_put_u32(msg, s->attr, v) :
	    nla_put_u64_64bit(msg, s->attr, v, BX_A_STATS_PAD))
		return -EMSGSIZE;
	return 0;
}

/* The counters of stats.c's table, from one snapshot. */
static int nl_fill_stats(struct sk_buff *msg, void *unused)
{
	return bx_stats_each(nl_put_stat, msg);
}

int bx_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return nl_check_do(info) ?: nl_reply(info, nl_fill_stats, NULL);
}

/*
 * The tunables, by attribute (bx_params_by_attr, params.c): u32s,
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
		} else if (bx_params_by_attr[a] &&
			   nla_put_u32(msg, a, READ_ONCE(*bx_params_by_attr[a]))) {
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
		if (info->attrs[a] && bx_params_by_attr[a])
			WRITE_ONCE(*bx_params_by_attr[a],
				   nla_get_u32(info->attrs[a]));
	if (info->attrs[BX_A_TUNABLES_FLOW_CONTROL])
		WRITE_ONCE(bx_flow_control,
			   nla_get_u8(info->attrs[BX_A_TUNABLES_FLOW_CONTROL]));
	return 0;
}

/* ---- admission ---------------------------------------------------------- */

/* One nested BX_A_ADMIT_NET: BX_A_NET_ADDR, BX_A_NET_PREFIX_LEN. */
static int nl_put_allow_net(const struct bx_allow_net *net, void *msg)
{
	struct nlattr *nest = nla_nest_start(msg, BX_A_ADMIT_NET);

	if (!nest ||
	    nla_put(msg, BX_A_NET_ADDR, sizeof(net->addr), &net->addr) ||
	    nla_put_u8(msg, BX_A_NET_PREFIX_LEN, net->plen))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int nl_fill_admit(struct sk_buff *msg, void *unused)
{
	if (bx_admit_allow_each(nl_put_allow_net, msg) ||
	    nla_put_u8(msg, BX_A_ADMIT_SECRET_ON, bx_admit_secret_on()) ||
	    nla_put_u64_64bit(msg, BX_A_ADMIT_REFUSED,
			      atomic64_read(&bx_admit_refused_connects),
			      BX_A_ADMIT_PAD) ||
	    nla_put_u64_64bit(msg, BX_A_ADMIT_AUTH_FAILURES,
			      atomic64_read(&bx_admit_auth_failures),
			      BX_A_ADMIT_PAD) ||
	    nla_put_u64_64bit(msg, BX_A_ADMIT_VIOLATIONS,
			      atomic64_read(&bx_admit_violations), BX_A_ADMIT_PAD) ||
	    nla_put_u64_64bit(msg, BX_A_ADMIT_CHALLENGES,
			      atomic64_read(&bx_admit_challenges), BX_A_ADMIT_PAD) ||
	    nla_put_u64_64bit(msg, BX_A_ADMIT_STALE_COOKIES,
			      atomic64_read(&bx_admit_stale_cookies),
			      BX_A_ADMIT_PAD) ||
	    nla_put_u8(msg, BX_A_ADMIT_SECRET_PREV, bx_admit_secret_prev_on()) ||
	    nla_put_u32(msg, BX_A_ADMIT_PAIRKEYS, bx_admit_pairkeys_count()))
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
	ret = bx_admit_allow_set(nets, n);
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
	/* The policy took exactly BX_SECRET_LEN bytes. */
	return bx_admit_secret_set(a ? nla_data(a) : NULL, a ? nla_len(a) : 0);
}

int bx_nl_keys_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[BX_A_PAIRKEY_MAX + 1];
	struct bx_pairkey *keys;
	unsigned int n = 0;
	struct nlattr *a;
	int rem, ret;

	ret = nl_check_do(info);
	if (ret)
		return ret;
	keys = kvcalloc(BX_PAIRKEYS_MAX, sizeof(*keys), GFP_KERNEL);
	if (!keys)
		return -ENOMEM;
	nlmsg_for_each_attr(a, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(a) != BX_A_ADMIT_PAIRKEY)
			continue;
		if (n == BX_PAIRKEYS_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "too many pair keys (at most 2048)");
			ret = -E2BIG;
			goto out;
		}
		ret = nla_parse_nested(tb, BX_A_PAIRKEY_MAX, a,
				       bx_pairkey_nl_policy, info->extack);
		if (ret)
			goto out;
		if (!tb[BX_A_PAIRKEY_ADDR] || !tb[BX_A_PAIRKEY_KID] ||
		    !tb[BX_A_PAIRKEY_KEY]) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "a pair key needs addr, kid and key");
			ret = -EINVAL;
			goto out;
		}
		nla_memcpy(keys[n].addr, tb[BX_A_PAIRKEY_ADDR], 16);
		nla_memcpy(keys[n].kid, tb[BX_A_PAIRKEY_KID], 4);
		nla_memcpy(keys[n].key, tb[BX_A_PAIRKEY_KEY], 32);
		n++;
	}
	ret = bx_admit_pairkeys_set(keys, n);
out:
	memzero_explicit(keys, BX_PAIRKEYS_MAX * sizeof(*keys));
	kvfree(keys);
	return ret;
}

int bx_nl_init(void)
{
	int ret;

	bx_nl_compat_ops();
	ret = genl_register_family(&bx_nl_family);
	if (!ret)
		bx_event_register(&nl_events);
	return ret;
}

void bx_nl_uninit(void)
{
	bx_event_register(NULL);
	genl_unregister_family(&bx_nl_family);
}
