// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/bx.yaml */
/* YNL-GEN user source */

#include <stdlib.h>
#include <string.h>
#include "bx-user.h"
#include "ynl.h"
#include <linux/bx_netlink.h>

#include <linux/genetlink.h>

/* Enums */
static const char * const bx_op_strmap[] = {
	[BX_CMD_DEV_GET] = "dev-get",
	[BX_CMD_CONN_GET] = "conn-get",
	[BX_CMD_PROC_GET] = "proc-get",
	[BX_CMD_STATS_GET] = "stats-get",
	[BX_CMD_TUNABLES_GET] = "tunables-get",
	[BX_CMD_TUNABLES_SET] = "tunables-set",
	[BX_CMD_CONN_UP_NTF] = "conn-up-ntf",
	[BX_CMD_CONN_DOWN_NTF] = "conn-down-ntf",
	[BX_CMD_PEER_RESTART_NTF] = "peer-restart-ntf",
	[BX_CMD_DEV_ADD_NTF] = "dev-add-ntf",
	[BX_CMD_DEV_DEL_NTF] = "dev-del-ntf",
	[BX_CMD_RECOVERING_NTF] = "recovering-ntf",
	[BX_CMD_RECOVERED_NTF] = "recovered-ntf",
	[BX_CMD_ADMIT_GET] = "admit-get",
	[BX_CMD_ALLOW_SET] = "allow-set",
	[BX_CMD_SECRET_SET] = "secret-set",
	[BX_CMD_KEYS_SET] = "keys-set",
};

const char *bx_op_str(int op)
{
	if (op < 0 || op >= (int)YNL_ARRAY_SIZE(bx_op_strmap))
		return NULL;
	return bx_op_strmap[op];
}

static const char * const bx_conn_state_strmap[] = {
	[0] = "connecting",
	[1] = "up",
	[2] = "down",
};

const char *bx_conn_state_str(enum bx_conn_state value)
{
	if (value < 0 || value >= (int)YNL_ARRAY_SIZE(bx_conn_state_strmap))
		return NULL;
	return bx_conn_state_strmap[value];
}

/* Policies */
const struct ynl_policy_attr bx_net_policy[BX_A_NET_MAX + 1] = {
	[BX_A_NET_ADDR] = { .name = "addr", .type = YNL_PT_BINARY,},
	[BX_A_NET_PREFIX_LEN] = { .name = "prefix-len", .type = YNL_PT_U8, },
};

const struct ynl_policy_nest bx_net_nest = {
	.max_attr = BX_A_NET_MAX,
	.table = bx_net_policy,
};

const struct ynl_policy_attr bx_pairkey_policy[BX_A_PAIRKEY_MAX + 1] = {
	[BX_A_PAIRKEY_ADDR] = { .name = "addr", .type = YNL_PT_BINARY,},
	[BX_A_PAIRKEY_KID] = { .name = "kid", .type = YNL_PT_BINARY,},
	[BX_A_PAIRKEY_KEY] = { .name = "key", .type = YNL_PT_BINARY,},
};

const struct ynl_policy_nest bx_pairkey_nest = {
	.max_attr = BX_A_PAIRKEY_MAX,
	.table = bx_pairkey_policy,
};

const struct ynl_policy_attr bx_dev_policy[BX_A_DEV_MAX + 1] = {
	[BX_A_DEV_NAME] = { .name = "name", .type = YNL_PT_NUL_STR, },
	[BX_A_DEV_PORT] = { .name = "port", .type = YNL_PT_U32, },
	[BX_A_DEV_NETDEV] = { .name = "netdev", .type = YNL_PT_NUL_STR, },
};

const struct ynl_policy_nest bx_dev_nest = {
	.max_attr = BX_A_DEV_MAX,
	.table = bx_dev_policy,
};

const struct ynl_policy_attr bx_conn_policy[BX_A_CONN_MAX + 1] = {
	[BX_A_CONN_PEER_ID] = { .name = "peer-id", .type = YNL_PT_U32, },
	[BX_A_CONN_PEER_ADDR] = { .name = "peer-addr", .type = YNL_PT_BINARY,},
	[BX_A_CONN_STATE] = { .name = "state", .type = YNL_PT_U32, },
	[BX_A_CONN_ACTIVE] = { .name = "active", .type = YNL_PT_FLAG, },
	[BX_A_CONN_DEV_NAME] = { .name = "dev-name", .type = YNL_PT_NUL_STR, },
	[BX_A_CONN_QPN] = { .name = "qpn", .type = YNL_PT_U32, },
	[BX_A_CONN_ERR] = { .name = "err", .type = YNL_PT_U32, },
	[BX_A_CONN_PEER_EPOCH] = { .name = "peer-epoch", .type = YNL_PT_U64, },
	[BX_A_CONN_AWAITING] = { .name = "awaiting", .type = YNL_PT_U32, },
	[BX_A_CONN_PEER_RESTARTS] = { .name = "peer-restarts", .type = YNL_PT_U32, },
	[BX_A_CONN_TX_MSGS] = { .name = "tx-msgs", .type = YNL_PT_U64, },
	[BX_A_CONN_RX_MSGS] = { .name = "rx-msgs", .type = YNL_PT_U64, },
	[BX_A_CONN_CREDITS] = { .name = "credits", .type = YNL_PT_U32, },
	[BX_A_CONN_CREDITS_MAX] = { .name = "credits-max", .type = YNL_PT_U32, },
	[BX_A_CONN_GRANT] = { .name = "grant", .type = YNL_PT_U32, },
	[BX_A_CONN_CREDIT_STALLS] = { .name = "credit-stalls", .type = YNL_PT_U64, },
	[BX_A_CONN_CREDIT_UPDATES] = { .name = "credit-updates", .type = YNL_PT_U64, },
	[BX_A_CONN_WND_BYTES_INFLIGHT] = { .name = "wnd-bytes-inflight", .type = YNL_PT_U64, },
	[BX_A_CONN_WND_OPS_INFLIGHT] = { .name = "wnd-ops-inflight", .type = YNL_PT_U32, },
	[BX_A_CONN_WND_PEAK_BYTES] = { .name = "wnd-peak-bytes", .type = YNL_PT_U64, },
	[BX_A_CONN_WND_WAITS] = { .name = "wnd-waits", .type = YNL_PT_U64, },
	[BX_A_CONN_RD_BYTES_INFLIGHT] = { .name = "rd-bytes-inflight", .type = YNL_PT_U64, },
	[BX_A_CONN_RD_READS_INFLIGHT] = { .name = "rd-reads-inflight", .type = YNL_PT_U32, },
	[BX_A_CONN_RD_PEAK_BYTES] = { .name = "rd-peak-bytes", .type = YNL_PT_U64, },
	[BX_A_CONN_BUSY_RETRIES] = { .name = "busy-retries", .type = YNL_PT_U64, },
	[BX_A_CONN_RNR] = { .name = "rnr", .type = YNL_PT_U64, },
	[BX_A_CONN_PARKED] = { .name = "parked", .type = YNL_PT_U32, },
	[BX_A_CONN_RECOVERIES] = { .name = "recoveries", .type = YNL_PT_U32, },
	[BX_A_CONN_RECOVERED_OPS] = { .name = "recovered-ops", .type = YNL_PT_U64, },
	[BX_A_CONN_RECOVER_FAILED] = { .name = "recover-failed", .type = YNL_PT_U64, },
	[BX_A_CONN_DUP_PUSHES] = { .name = "dup-pushes", .type = YNL_PT_U64, },
	[BX_A_CONN_PAD] = { .name = "pad", .type = YNL_PT_IGNORE, },
	[BX_A_CONN_WND_SMALL_INFLIGHT] = { .name = "wnd-small-inflight", .type = YNL_PT_U32, },
	[BX_A_CONN_SMALL_PASSES] = { .name = "small-passes", .type = YNL_PT_U64, },
	[BX_A_CONN_AUTH] = { .name = "auth", .type = YNL_PT_FLAG, },
	[BX_A_CONN_PEER_VIOLATIONS] = { .name = "peer-violations", .type = YNL_PT_U32, },
	[BX_A_CONN_PEER_REFUSED] = { .name = "peer-refused", .type = YNL_PT_U32, },
	[BX_A_CONN_PEER_REFUSING_MS] = { .name = "peer-refusing-ms", .type = YNL_PT_U32, },
	[BX_A_CONN_LANE] = { .name = "lane", .type = YNL_PT_U32, },
};

const struct ynl_policy_nest bx_conn_nest = {
	.max_attr = BX_A_CONN_MAX,
	.table = bx_conn_policy,
};

const struct ynl_policy_attr bx_proc_policy[BX_A_PROC_MAX + 1] = {
	[BX_A_PROC_PID] = { .name = "pid", .type = YNL_PT_U32, },
	[BX_A_PROC_BYTES_TX] = { .name = "bytes-tx", .type = YNL_PT_U64, },
	[BX_A_PROC_BYTES_RX] = { .name = "bytes-rx", .type = YNL_PT_U64, },
	[BX_A_PROC_INFLIGHT] = { .name = "inflight", .type = YNL_PT_U32, },
	[BX_A_PROC_REGION_BYTES] = { .name = "region-bytes", .type = YNL_PT_U64, },
	[BX_A_PROC_PAD] = { .name = "pad", .type = YNL_PT_IGNORE, },
};

const struct ynl_policy_nest bx_proc_nest = {
	.max_attr = BX_A_PROC_MAX,
	.table = bx_proc_policy,
};

const struct ynl_policy_attr bx_stats_policy[BX_A_STATS_MAX + 1] = {
	[BX_A_STATS_CONNS] = { .name = "conns", .type = YNL_PT_U32, },
	[BX_A_STATS_OPS_INFLIGHT] = { .name = "ops-inflight", .type = YNL_PT_U64, },
	[BX_A_STATS_MRS_INUSE] = { .name = "mrs-inuse", .type = YNL_PT_U64, },
	[BX_A_STATS_REGION_BYTES] = { .name = "region-bytes", .type = YNL_PT_U64, },
	[BX_A_STATS_COPIED_BYTES] = { .name = "copied-bytes", .type = YNL_PT_U64, },
	[BX_A_STATS_TX_BYTES_INFLIGHT] = { .name = "tx-bytes-inflight", .type = YNL_PT_U64, },
	[BX_A_STATS_TX_PEAK_BYTES] = { .name = "tx-peak-bytes", .type = YNL_PT_U64, },
	[BX_A_STATS_RX_BYTES_INFLIGHT] = { .name = "rx-bytes-inflight", .type = YNL_PT_U64, },
	[BX_A_STATS_RX_PEAK_BYTES] = { .name = "rx-peak-bytes", .type = YNL_PT_U64, },
	[BX_A_STATS_BUSY_RETRIES] = { .name = "busy-retries", .type = YNL_PT_U64, },
	[BX_A_STATS_RNR_EVENTS] = { .name = "rnr-events", .type = YNL_PT_U64, },
	[BX_A_STATS_DUP_PUSHES] = { .name = "dup-pushes", .type = YNL_PT_U64, },
	[BX_A_STATS_RECOVERED_OPS] = { .name = "recovered-ops", .type = YNL_PT_U64, },
	[BX_A_STATS_RECOVER_FAILED] = { .name = "recover-failed", .type = YNL_PT_U64, },
	[BX_A_STATS_PAD] = { .name = "pad", .type = YNL_PT_IGNORE, },
	[BX_A_STATS_TX_SMALL_INFLIGHT] = { .name = "tx-small-inflight", .type = YNL_PT_U32, },
	[BX_A_STATS_SMALL_PASSES] = { .name = "small-passes", .type = YNL_PT_U64, },
	[BX_A_STATS_PEERS] = { .name = "peers", .type = YNL_PT_U32, },
	[BX_A_STATS_PIECES] = { .name = "pieces", .type = YNL_PT_U64, },
};

const struct ynl_policy_nest bx_stats_nest = {
	.max_attr = BX_A_STATS_MAX,
	.table = bx_stats_policy,
};

const struct ynl_policy_attr bx_tunables_policy[BX_A_TUNABLES_MAX + 1] = {
	[BX_A_TUNABLES_WND_KB] = { .name = "wnd-kb", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_WND_OPS] = { .name = "wnd-ops", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_HOST_WND_KB] = { .name = "host-wnd-kb", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_HOST_WND_OPS] = { .name = "host-wnd-ops", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_RX_WND_KB] = { .name = "rx-wnd-kb", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_RD_MAX] = { .name = "rd-max", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_CREDIT_BATCH] = { .name = "credit-batch", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_RDV_THRESHOLD] = { .name = "rdv-threshold", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_DRR_QUANTUM] = { .name = "drr-quantum", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_FLOW_CONTROL] = { .name = "flow-control", .type = YNL_PT_U8, },
	[BX_A_TUNABLES_PIECE_KB] = { .name = "piece-kb", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_CONNECT_TIMEOUT_MS] = { .name = "connect-timeout-ms", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_ACK_TIMEOUT] = { .name = "ack-timeout", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_RECOVER_MS] = { .name = "recover-ms", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_RD_DEPTH] = { .name = "rd-depth", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_REFUSE_MS] = { .name = "refuse-ms", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_PEER_LINGER_MS] = { .name = "peer-linger-ms", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_USER_OPS_MAX] = { .name = "user-ops-max", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_USER_PEERS_MAX] = { .name = "user-peers-max", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_USER_SERVICES_MAX] = { .name = "user-services-max", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_OP_TIMEOUT_MS] = { .name = "op-timeout-ms", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_REGION_CAP_MB] = { .name = "region-cap-mb", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_PROOF_MS] = { .name = "proof-ms", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_SECRET_OVERLAP_MS] = { .name = "secret-overlap-ms", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_REMOTE_PEERS_MAX] = { .name = "remote-peers-max", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_OP_TIMEOUT_MAX_MS] = { .name = "op-timeout-max-ms", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_USER_WND_PCT] = { .name = "user-wnd-pct", .type = YNL_PT_U32, },
	[BX_A_TUNABLES_QPS_PER_PEER] = { .name = "qps-per-peer", .type = YNL_PT_U32, },
};

const struct ynl_policy_nest bx_tunables_nest = {
	.max_attr = BX_A_TUNABLES_MAX,
	.table = bx_tunables_policy,
};

const struct ynl_policy_attr bx_admit_policy[BX_A_ADMIT_MAX + 1] = {
	[BX_A_ADMIT_NET] = { .name = "net", .type = YNL_PT_NEST, .nest = &bx_net_nest, },
	[BX_A_ADMIT_SECRET] = { .name = "secret", .type = YNL_PT_BINARY,},
	[BX_A_ADMIT_SECRET_ON] = { .name = "secret-on", .type = YNL_PT_U8, },
	[BX_A_ADMIT_REFUSED] = { .name = "refused", .type = YNL_PT_U64, },
	[BX_A_ADMIT_AUTH_FAILURES] = { .name = "auth-failures", .type = YNL_PT_U64, },
	[BX_A_ADMIT_VIOLATIONS] = { .name = "violations", .type = YNL_PT_U64, },
	[BX_A_ADMIT_PAD] = { .name = "pad", .type = YNL_PT_IGNORE, },
	[BX_A_ADMIT_CHALLENGES] = { .name = "challenges", .type = YNL_PT_U64, },
	[BX_A_ADMIT_STALE_COOKIES] = { .name = "stale-cookies", .type = YNL_PT_U64, },
	[BX_A_ADMIT_SECRET_PREV] = { .name = "secret-prev", .type = YNL_PT_U8, },
	[BX_A_ADMIT_PAIRKEY] = { .name = "pairkey", .type = YNL_PT_NEST, .nest = &bx_pairkey_nest, },
	[BX_A_ADMIT_PAIRKEYS] = { .name = "pairkeys", .type = YNL_PT_U32, },
};

const struct ynl_policy_nest bx_admit_nest = {
	.max_attr = BX_A_ADMIT_MAX,
	.table = bx_admit_policy,
};

/* Common nested types */
void bx_net_free(struct bx_net *obj)
{
	free(obj->addr);
}

int bx_net_put(struct nlmsghdr *nlh, unsigned int attr_type,
	       struct bx_net *obj)
{
	struct nlattr *nest;

	nest = ynl_attr_nest_start(nlh, attr_type);
	if (obj->_present.addr_len)
		ynl_attr_put(nlh, BX_A_NET_ADDR, obj->addr, obj->_present.addr_len);
	if (obj->_present.prefix_len)
		ynl_attr_put_u8(nlh, BX_A_NET_PREFIX_LEN, obj->prefix_len);
	ynl_attr_nest_end(nlh, nest);

	return 0;
}

int bx_net_parse(struct ynl_parse_arg *yarg, const struct nlattr *nested)
{
	struct bx_net *dst = yarg->data;
	const struct nlattr *attr;

	ynl_attr_for_each_nested(attr, nested) {
		unsigned int type = ynl_attr_type(attr);

		if (type == BX_A_NET_ADDR) {
			unsigned int len;

			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;

			len = ynl_attr_data_len(attr);
			dst->_present.addr_len = len;
			dst->addr = malloc(len);
			memcpy(dst->addr, ynl_attr_data(attr), len);
		} else if (type == BX_A_NET_PREFIX_LEN) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.prefix_len = 1;
			dst->prefix_len = ynl_attr_get_u8(attr);
		}
	}

	return 0;
}

void bx_pairkey_free(struct bx_pairkey *obj)
{
	free(obj->addr);
	free(obj->kid);
	free(obj->key);
}

int bx_pairkey_put(struct nlmsghdr *nlh, unsigned int attr_type,
		   struct bx_pairkey *obj)
{
	struct nlattr *nest;

	nest = ynl_attr_nest_start(nlh, attr_type);
	if (obj->_present.addr_len)
		ynl_attr_put(nlh, BX_A_PAIRKEY_ADDR, obj->addr, obj->_present.addr_len);
	if (obj->_present.kid_len)
		ynl_attr_put(nlh, BX_A_PAIRKEY_KID, obj->kid, obj->_present.kid_len);
	if (obj->_present.key_len)
		ynl_attr_put(nlh, BX_A_PAIRKEY_KEY, obj->key, obj->_present.key_len);
	ynl_attr_nest_end(nlh, nest);

	return 0;
}

/* ============== BX_CMD_DEV_GET ============== */
/* BX_CMD_DEV_GET - dump */
int bx_dev_get_rsp_dump_parse(const struct nlmsghdr *nlh,
			      struct ynl_parse_arg *yarg)
{
	struct bx_dev_get_rsp_dump *dst;
	const struct nlattr *attr;

	dst = yarg->data;

	ynl_attr_for_each(attr, nlh, yarg->ys->family->hdr_len) {
		unsigned int type = ynl_attr_type(attr);

		if (type == BX_A_DEV_NAME) {
			unsigned int len;

			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;

			len = strnlen(ynl_attr_get_str(attr), ynl_attr_data_len(attr));
			dst->_present.name_len = len;
			dst->name = malloc(len + 1);
			memcpy(dst->name, ynl_attr_get_str(attr), len);
			dst->name[len] = 0;
		} else if (type == BX_A_DEV_PORT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.port = 1;
			dst->port = ynl_attr_get_u32(attr);
		} else if (type == BX_A_DEV_NETDEV) {
			unsigned int len;

			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;

			len = strnlen(ynl_attr_get_str(attr), ynl_attr_data_len(attr));
			dst->_present.netdev_len = len;
			dst->netdev = malloc(len + 1);
			memcpy(dst->netdev, ynl_attr_get_str(attr), len);
			dst->netdev[len] = 0;
		}
	}

	return YNL_PARSE_CB_OK;
}

void bx_dev_get_rsp_list_free(struct bx_dev_get_rsp_list *rsp)
{
	struct bx_dev_get_rsp_list *next = rsp;

	while ((void *)next != YNL_LIST_END) {
		rsp = next;
		next = rsp->next;

		free(rsp->obj.name);
		free(rsp->obj.netdev);
		free(rsp);
	}
}

struct bx_dev_get_rsp_list *bx_dev_get_dump(struct ynl_sock *ys)
{
	struct ynl_dump_state yds = {};
	struct nlmsghdr *nlh;
	int err;

	yds.yarg.ys = ys;
	yds.yarg.rsp_policy = &bx_dev_nest;
	yds.yarg.data = NULL;
	yds.alloc_sz = sizeof(struct bx_dev_get_rsp_list);
	yds.cb = bx_dev_get_rsp_dump_parse;
	yds.rsp_cmd = BX_CMD_DEV_GET;

	nlh = ynl_gemsg_start_dump(ys, ys->family_id, BX_CMD_DEV_GET, 1);

	err = ynl_exec_dump(ys, nlh, &yds);
	if (err < 0)
		goto free_list;

	return yds.first;

free_list:
	bx_dev_get_rsp_list_free(yds.first);
	return NULL;
}

/* ============== BX_CMD_CONN_GET ============== */
/* BX_CMD_CONN_GET - do */
void bx_conn_get_req_free(struct bx_conn_get_req *req)
{
	free(req);
}

void bx_conn_get_rsp_free(struct bx_conn_get_rsp *rsp)
{
	free(rsp->peer_addr);
	free(rsp->dev_name);
	free(rsp);
}

int bx_conn_get_rsp_parse(const struct nlmsghdr *nlh,
			  struct ynl_parse_arg *yarg)
{
	struct bx_conn_get_rsp *dst;
	const struct nlattr *attr;

	dst = yarg->data;

	ynl_attr_for_each(attr, nlh, yarg->ys->family->hdr_len) {
		unsigned int type = ynl_attr_type(attr);

		if (type == BX_A_CONN_PEER_ID) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.peer_id = 1;
			dst->peer_id = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_PEER_ADDR) {
			unsigned int len;

			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;

			len = ynl_attr_data_len(attr);
			dst->_present.peer_addr_len = len;
			dst->peer_addr = malloc(len);
			memcpy(dst->peer_addr, ynl_attr_data(attr), len);
		} else if (type == BX_A_CONN_STATE) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.state = 1;
			dst->state = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_ACTIVE) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.active = 1;
		} else if (type == BX_A_CONN_DEV_NAME) {
			unsigned int len;

			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;

			len = strnlen(ynl_attr_get_str(attr), ynl_attr_data_len(attr));
			dst->_present.dev_name_len = len;
			dst->dev_name = malloc(len + 1);
			memcpy(dst->dev_name, ynl_attr_get_str(attr), len);
			dst->dev_name[len] = 0;
		} else if (type == BX_A_CONN_QPN) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.qpn = 1;
			dst->qpn = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_ERR) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.err = 1;
			dst->err = ynl_attr_get_s32(attr);
		} else if (type == BX_A_CONN_PEER_EPOCH) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.peer_epoch = 1;
			dst->peer_epoch = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_AWAITING) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.awaiting = 1;
			dst->awaiting = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_PEER_RESTARTS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.peer_restarts = 1;
			dst->peer_restarts = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_TX_MSGS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.tx_msgs = 1;
			dst->tx_msgs = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_RX_MSGS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rx_msgs = 1;
			dst->rx_msgs = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_CREDITS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.credits = 1;
			dst->credits = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_CREDITS_MAX) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.credits_max = 1;
			dst->credits_max = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_GRANT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.grant = 1;
			dst->grant = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_CREDIT_STALLS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.credit_stalls = 1;
			dst->credit_stalls = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_CREDIT_UPDATES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.credit_updates = 1;
			dst->credit_updates = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_WND_BYTES_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.wnd_bytes_inflight = 1;
			dst->wnd_bytes_inflight = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_WND_OPS_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.wnd_ops_inflight = 1;
			dst->wnd_ops_inflight = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_WND_PEAK_BYTES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.wnd_peak_bytes = 1;
			dst->wnd_peak_bytes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_WND_WAITS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.wnd_waits = 1;
			dst->wnd_waits = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_RD_BYTES_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rd_bytes_inflight = 1;
			dst->rd_bytes_inflight = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_RD_READS_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rd_reads_inflight = 1;
			dst->rd_reads_inflight = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_RD_PEAK_BYTES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rd_peak_bytes = 1;
			dst->rd_peak_bytes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_BUSY_RETRIES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.busy_retries = 1;
			dst->busy_retries = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_RNR) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rnr = 1;
			dst->rnr = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_PARKED) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.parked = 1;
			dst->parked = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_RECOVERIES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.recoveries = 1;
			dst->recoveries = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_RECOVERED_OPS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.recovered_ops = 1;
			dst->recovered_ops = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_RECOVER_FAILED) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.recover_failed = 1;
			dst->recover_failed = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_DUP_PUSHES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.dup_pushes = 1;
			dst->dup_pushes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_WND_SMALL_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.wnd_small_inflight = 1;
			dst->wnd_small_inflight = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_SMALL_PASSES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.small_passes = 1;
			dst->small_passes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_CONN_AUTH) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.auth = 1;
		} else if (type == BX_A_CONN_PEER_VIOLATIONS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.peer_violations = 1;
			dst->peer_violations = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_PEER_REFUSED) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.peer_refused = 1;
			dst->peer_refused = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_PEER_REFUSING_MS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.peer_refusing_ms = 1;
			dst->peer_refusing_ms = ynl_attr_get_u32(attr);
		} else if (type == BX_A_CONN_LANE) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.lane = 1;
			dst->lane = ynl_attr_get_u32(attr);
		}
	}

	return YNL_PARSE_CB_OK;
}

struct bx_conn_get_rsp *
bx_conn_get(struct ynl_sock *ys, struct bx_conn_get_req *req)
{
	struct ynl_req_state yrs = { .yarg = { .ys = ys, }, };
	struct bx_conn_get_rsp *rsp;
	struct nlmsghdr *nlh;
	int err;

	nlh = ynl_gemsg_start_req(ys, ys->family_id, BX_CMD_CONN_GET, 1);
	ys->req_policy = &bx_conn_nest;
	yrs.yarg.rsp_policy = &bx_conn_nest;

	if (req->_present.peer_id)
		ynl_attr_put_u32(nlh, BX_A_CONN_PEER_ID, req->peer_id);
	if (req->_present.lane)
		ynl_attr_put_u32(nlh, BX_A_CONN_LANE, req->lane);

	rsp = calloc(1, sizeof(*rsp));
	yrs.yarg.data = rsp;
	yrs.cb = bx_conn_get_rsp_parse;
	yrs.rsp_cmd = BX_CMD_CONN_GET;

	err = ynl_exec(ys, nlh, &yrs);
	if (err < 0)
		goto err_free;

	return rsp;

err_free:
	bx_conn_get_rsp_free(rsp);
	return NULL;
}

/* BX_CMD_CONN_GET - dump */
void bx_conn_get_list_free(struct bx_conn_get_list *rsp)
{
	struct bx_conn_get_list *next = rsp;

	while ((void *)next != YNL_LIST_END) {
		rsp = next;
		next = rsp->next;

		free(rsp->obj.peer_addr);
		free(rsp->obj.dev_name);
		free(rsp);
	}
}

struct bx_conn_get_list *bx_conn_get_dump(struct ynl_sock *ys)
{
	struct ynl_dump_state yds = {};
	struct nlmsghdr *nlh;
	int err;

	yds.yarg.ys = ys;
	yds.yarg.rsp_policy = &bx_conn_nest;
	yds.yarg.data = NULL;
	yds.alloc_sz = sizeof(struct bx_conn_get_list);
	yds.cb = bx_conn_get_rsp_parse;
	yds.rsp_cmd = BX_CMD_CONN_GET;

	nlh = ynl_gemsg_start_dump(ys, ys->family_id, BX_CMD_CONN_GET, 1);

	err = ynl_exec_dump(ys, nlh, &yds);
	if (err < 0)
		goto free_list;

	return yds.first;

free_list:
	bx_conn_get_list_free(yds.first);
	return NULL;
}

/* BX_CMD_CONN_GET - notify */
void bx_conn_get_ntf_free(struct bx_conn_get_ntf *rsp)
{
	free(rsp->obj.peer_addr);
	free(rsp->obj.dev_name);
	free(rsp);
}

/* ============== BX_CMD_PROC_GET ============== */
/* BX_CMD_PROC_GET - dump */
int bx_proc_get_rsp_dump_parse(const struct nlmsghdr *nlh,
			       struct ynl_parse_arg *yarg)
{
	struct bx_proc_get_rsp_dump *dst;
	const struct nlattr *attr;

	dst = yarg->data;

	ynl_attr_for_each(attr, nlh, yarg->ys->family->hdr_len) {
		unsigned int type = ynl_attr_type(attr);

		if (type == BX_A_PROC_PID) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.pid = 1;
			dst->pid = ynl_attr_get_u32(attr);
		} else if (type == BX_A_PROC_BYTES_TX) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.bytes_tx = 1;
			dst->bytes_tx = ynl_attr_get_u64(attr);
		} else if (type == BX_A_PROC_BYTES_RX) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.bytes_rx = 1;
			dst->bytes_rx = ynl_attr_get_u64(attr);
		} else if (type == BX_A_PROC_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.inflight = 1;
			dst->inflight = ynl_attr_get_u32(attr);
		} else if (type == BX_A_PROC_REGION_BYTES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.region_bytes = 1;
			dst->region_bytes = ynl_attr_get_u64(attr);
		}
	}

	return YNL_PARSE_CB_OK;
}

void bx_proc_get_rsp_list_free(struct bx_proc_get_rsp_list *rsp)
{
	struct bx_proc_get_rsp_list *next = rsp;

	while ((void *)next != YNL_LIST_END) {
		rsp = next;
		next = rsp->next;

		free(rsp);
	}
}

struct bx_proc_get_rsp_list *bx_proc_get_dump(struct ynl_sock *ys)
{
	struct ynl_dump_state yds = {};
	struct nlmsghdr *nlh;
	int err;

	yds.yarg.ys = ys;
	yds.yarg.rsp_policy = &bx_proc_nest;
	yds.yarg.data = NULL;
	yds.alloc_sz = sizeof(struct bx_proc_get_rsp_list);
	yds.cb = bx_proc_get_rsp_dump_parse;
	yds.rsp_cmd = BX_CMD_PROC_GET;

	nlh = ynl_gemsg_start_dump(ys, ys->family_id, BX_CMD_PROC_GET, 1);

	err = ynl_exec_dump(ys, nlh, &yds);
	if (err < 0)
		goto free_list;

	return yds.first;

free_list:
	bx_proc_get_rsp_list_free(yds.first);
	return NULL;
}

/* ============== BX_CMD_STATS_GET ============== */
/* BX_CMD_STATS_GET - do */
void bx_stats_get_rsp_free(struct bx_stats_get_rsp *rsp)
{
	free(rsp);
}

int bx_stats_get_rsp_parse(const struct nlmsghdr *nlh,
			   struct ynl_parse_arg *yarg)
{
	struct bx_stats_get_rsp *dst;
	const struct nlattr *attr;

	dst = yarg->data;

	ynl_attr_for_each(attr, nlh, yarg->ys->family->hdr_len) {
		unsigned int type = ynl_attr_type(attr);

		if (type == BX_A_STATS_CONNS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.conns = 1;
			dst->conns = ynl_attr_get_u32(attr);
		} else if (type == BX_A_STATS_OPS_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.ops_inflight = 1;
			dst->ops_inflight = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_MRS_INUSE) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.mrs_inuse = 1;
			dst->mrs_inuse = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_REGION_BYTES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.region_bytes = 1;
			dst->region_bytes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_COPIED_BYTES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.copied_bytes = 1;
			dst->copied_bytes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_TX_BYTES_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.tx_bytes_inflight = 1;
			dst->tx_bytes_inflight = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_TX_PEAK_BYTES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.tx_peak_bytes = 1;
			dst->tx_peak_bytes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_RX_BYTES_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rx_bytes_inflight = 1;
			dst->rx_bytes_inflight = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_RX_PEAK_BYTES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rx_peak_bytes = 1;
			dst->rx_peak_bytes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_BUSY_RETRIES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.busy_retries = 1;
			dst->busy_retries = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_RNR_EVENTS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rnr_events = 1;
			dst->rnr_events = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_DUP_PUSHES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.dup_pushes = 1;
			dst->dup_pushes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_RECOVERED_OPS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.recovered_ops = 1;
			dst->recovered_ops = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_RECOVER_FAILED) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.recover_failed = 1;
			dst->recover_failed = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_TX_SMALL_INFLIGHT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.tx_small_inflight = 1;
			dst->tx_small_inflight = ynl_attr_get_u32(attr);
		} else if (type == BX_A_STATS_SMALL_PASSES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.small_passes = 1;
			dst->small_passes = ynl_attr_get_u64(attr);
		} else if (type == BX_A_STATS_PEERS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.peers = 1;
			dst->peers = ynl_attr_get_u32(attr);
		} else if (type == BX_A_STATS_PIECES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.pieces = 1;
			dst->pieces = ynl_attr_get_u64(attr);
		}
	}

	return YNL_PARSE_CB_OK;
}

struct bx_stats_get_rsp *bx_stats_get(struct ynl_sock *ys)
{
	struct ynl_req_state yrs = { .yarg = { .ys = ys, }, };
	struct bx_stats_get_rsp *rsp;
	struct nlmsghdr *nlh;
	int err;

	nlh = ynl_gemsg_start_req(ys, ys->family_id, BX_CMD_STATS_GET, 1);
	ys->req_policy = &bx_stats_nest;
	yrs.yarg.rsp_policy = &bx_stats_nest;

	rsp = calloc(1, sizeof(*rsp));
	yrs.yarg.data = rsp;
	yrs.cb = bx_stats_get_rsp_parse;
	yrs.rsp_cmd = BX_CMD_STATS_GET;

	err = ynl_exec(ys, nlh, &yrs);
	if (err < 0)
		goto err_free;

	return rsp;

err_free:
	bx_stats_get_rsp_free(rsp);
	return NULL;
}

/* ============== BX_CMD_TUNABLES_GET ============== */
/* BX_CMD_TUNABLES_GET - do */
void bx_tunables_get_rsp_free(struct bx_tunables_get_rsp *rsp)
{
	free(rsp);
}

int bx_tunables_get_rsp_parse(const struct nlmsghdr *nlh,
			      struct ynl_parse_arg *yarg)
{
	struct bx_tunables_get_rsp *dst;
	const struct nlattr *attr;

	dst = yarg->data;

	ynl_attr_for_each(attr, nlh, yarg->ys->family->hdr_len) {
		unsigned int type = ynl_attr_type(attr);

		if (type == BX_A_TUNABLES_WND_KB) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.wnd_kb = 1;
			dst->wnd_kb = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_WND_OPS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.wnd_ops = 1;
			dst->wnd_ops = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_HOST_WND_KB) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.host_wnd_kb = 1;
			dst->host_wnd_kb = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_HOST_WND_OPS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.host_wnd_ops = 1;
			dst->host_wnd_ops = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_RX_WND_KB) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rx_wnd_kb = 1;
			dst->rx_wnd_kb = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_RD_MAX) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rd_max = 1;
			dst->rd_max = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_CREDIT_BATCH) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.credit_batch = 1;
			dst->credit_batch = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_RDV_THRESHOLD) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rdv_threshold = 1;
			dst->rdv_threshold = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_DRR_QUANTUM) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.drr_quantum = 1;
			dst->drr_quantum = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_FLOW_CONTROL) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.flow_control = 1;
			dst->flow_control = ynl_attr_get_u8(attr);
		} else if (type == BX_A_TUNABLES_PIECE_KB) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.piece_kb = 1;
			dst->piece_kb = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_CONNECT_TIMEOUT_MS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.connect_timeout_ms = 1;
			dst->connect_timeout_ms = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_ACK_TIMEOUT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.ack_timeout = 1;
			dst->ack_timeout = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_RECOVER_MS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.recover_ms = 1;
			dst->recover_ms = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_RD_DEPTH) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.rd_depth = 1;
			dst->rd_depth = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_REFUSE_MS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.refuse_ms = 1;
			dst->refuse_ms = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_PEER_LINGER_MS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.peer_linger_ms = 1;
			dst->peer_linger_ms = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_USER_OPS_MAX) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.user_ops_max = 1;
			dst->user_ops_max = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_USER_PEERS_MAX) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.user_peers_max = 1;
			dst->user_peers_max = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_USER_SERVICES_MAX) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.user_services_max = 1;
			dst->user_services_max = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_OP_TIMEOUT_MS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.op_timeout_ms = 1;
			dst->op_timeout_ms = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_REGION_CAP_MB) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.region_cap_mb = 1;
			dst->region_cap_mb = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_PROOF_MS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.proof_ms = 1;
			dst->proof_ms = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_SECRET_OVERLAP_MS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.secret_overlap_ms = 1;
			dst->secret_overlap_ms = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_REMOTE_PEERS_MAX) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.remote_peers_max = 1;
			dst->remote_peers_max = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_OP_TIMEOUT_MAX_MS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.op_timeout_max_ms = 1;
			dst->op_timeout_max_ms = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_USER_WND_PCT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.user_wnd_pct = 1;
			dst->user_wnd_pct = ynl_attr_get_u32(attr);
		} else if (type == BX_A_TUNABLES_QPS_PER_PEER) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.qps_per_peer = 1;
			dst->qps_per_peer = ynl_attr_get_u32(attr);
		}
	}

	return YNL_PARSE_CB_OK;
}

struct bx_tunables_get_rsp *bx_tunables_get(struct ynl_sock *ys)
{
	struct ynl_req_state yrs = { .yarg = { .ys = ys, }, };
	struct bx_tunables_get_rsp *rsp;
	struct nlmsghdr *nlh;
	int err;

	nlh = ynl_gemsg_start_req(ys, ys->family_id, BX_CMD_TUNABLES_GET, 1);
	ys->req_policy = &bx_tunables_nest;
	yrs.yarg.rsp_policy = &bx_tunables_nest;

	rsp = calloc(1, sizeof(*rsp));
	yrs.yarg.data = rsp;
	yrs.cb = bx_tunables_get_rsp_parse;
	yrs.rsp_cmd = BX_CMD_TUNABLES_GET;

	err = ynl_exec(ys, nlh, &yrs);
	if (err < 0)
		goto err_free;

	return rsp;

err_free:
	bx_tunables_get_rsp_free(rsp);
	return NULL;
}

/* ============== BX_CMD_TUNABLES_SET ============== */
/* BX_CMD_TUNABLES_SET - do */
void bx_tunables_set_req_free(struct bx_tunables_set_req *req)
{
	free(req);
}

int bx_tunables_set(struct ynl_sock *ys, struct bx_tunables_set_req *req)
{
	struct ynl_req_state yrs = { .yarg = { .ys = ys, }, };
	struct nlmsghdr *nlh;
	int err;

	nlh = ynl_gemsg_start_req(ys, ys->family_id, BX_CMD_TUNABLES_SET, 1);
	ys->req_policy = &bx_tunables_nest;

	if (req->_present.wnd_kb)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_WND_KB, req->wnd_kb);
	if (req->_present.wnd_ops)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_WND_OPS, req->wnd_ops);
	if (req->_present.host_wnd_kb)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_HOST_WND_KB, req->host_wnd_kb);
	if (req->_present.host_wnd_ops)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_HOST_WND_OPS, req->host_wnd_ops);
	if (req->_present.rx_wnd_kb)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_RX_WND_KB, req->rx_wnd_kb);
	if (req->_present.rd_max)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_RD_MAX, req->rd_max);
	if (req->_present.credit_batch)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_CREDIT_BATCH, req->credit_batch);
	if (req->_present.rdv_threshold)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_RDV_THRESHOLD, req->rdv_threshold);
	if (req->_present.drr_quantum)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_DRR_QUANTUM, req->drr_quantum);
	if (req->_present.flow_control)
		ynl_attr_put_u8(nlh, BX_A_TUNABLES_FLOW_CONTROL, req->flow_control);
	if (req->_present.piece_kb)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_PIECE_KB, req->piece_kb);
	if (req->_present.connect_timeout_ms)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_CONNECT_TIMEOUT_MS, req->connect_timeout_ms);
	if (req->_present.ack_timeout)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_ACK_TIMEOUT, req->ack_timeout);
	if (req->_present.recover_ms)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_RECOVER_MS, req->recover_ms);
	if (req->_present.rd_depth)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_RD_DEPTH, req->rd_depth);
	if (req->_present.refuse_ms)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_REFUSE_MS, req->refuse_ms);
	if (req->_present.peer_linger_ms)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_PEER_LINGER_MS, req->peer_linger_ms);
	if (req->_present.user_ops_max)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_USER_OPS_MAX, req->user_ops_max);
	if (req->_present.user_peers_max)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_USER_PEERS_MAX, req->user_peers_max);
	if (req->_present.user_services_max)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_USER_SERVICES_MAX, req->user_services_max);
	if (req->_present.op_timeout_ms)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_OP_TIMEOUT_MS, req->op_timeout_ms);
	if (req->_present.region_cap_mb)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_REGION_CAP_MB, req->region_cap_mb);
	if (req->_present.proof_ms)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_PROOF_MS, req->proof_ms);
	if (req->_present.secret_overlap_ms)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_SECRET_OVERLAP_MS, req->secret_overlap_ms);
	if (req->_present.remote_peers_max)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_REMOTE_PEERS_MAX, req->remote_peers_max);
	if (req->_present.op_timeout_max_ms)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_OP_TIMEOUT_MAX_MS, req->op_timeout_max_ms);
	if (req->_present.user_wnd_pct)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_USER_WND_PCT, req->user_wnd_pct);
	if (req->_present.qps_per_peer)
		ynl_attr_put_u32(nlh, BX_A_TUNABLES_QPS_PER_PEER, req->qps_per_peer);

	err = ynl_exec(ys, nlh, &yrs);
	if (err < 0)
		return -1;

	return 0;
}

/* ============== BX_CMD_ADMIT_GET ============== */
/* BX_CMD_ADMIT_GET - do */
void bx_admit_get_rsp_free(struct bx_admit_get_rsp *rsp)
{
	unsigned int i;

	for (i = 0; i < rsp->n_net; i++)
		bx_net_free(&rsp->net[i]);
	free(rsp->net);
	free(rsp);
}

int bx_admit_get_rsp_parse(const struct nlmsghdr *nlh,
			   struct ynl_parse_arg *yarg)
{
	struct bx_admit_get_rsp *dst;
	const struct nlattr *attr;
	struct ynl_parse_arg parg;
	unsigned int n_net = 0;
	int i;

	dst = yarg->data;
	parg.ys = yarg->ys;

	if (dst->net)
		return ynl_error_parse(yarg, "attribute already present (admit.net)");

	ynl_attr_for_each(attr, nlh, yarg->ys->family->hdr_len) {
		unsigned int type = ynl_attr_type(attr);

		if (type == BX_A_ADMIT_NET) {
			n_net++;
		} else if (type == BX_A_ADMIT_SECRET_ON) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.secret_on = 1;
			dst->secret_on = ynl_attr_get_u8(attr);
		} else if (type == BX_A_ADMIT_REFUSED) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.refused = 1;
			dst->refused = ynl_attr_get_u64(attr);
		} else if (type == BX_A_ADMIT_AUTH_FAILURES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.auth_failures = 1;
			dst->auth_failures = ynl_attr_get_u64(attr);
		} else if (type == BX_A_ADMIT_VIOLATIONS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.violations = 1;
			dst->violations = ynl_attr_get_u64(attr);
		} else if (type == BX_A_ADMIT_CHALLENGES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.challenges = 1;
			dst->challenges = ynl_attr_get_u64(attr);
		} else if (type == BX_A_ADMIT_STALE_COOKIES) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.stale_cookies = 1;
			dst->stale_cookies = ynl_attr_get_u64(attr);
		} else if (type == BX_A_ADMIT_SECRET_PREV) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.secret_prev = 1;
			dst->secret_prev = ynl_attr_get_u8(attr);
		} else if (type == BX_A_ADMIT_PAIRKEYS) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.pairkeys = 1;
			dst->pairkeys = ynl_attr_get_u32(attr);
		}
	}

	if (n_net) {
		dst->net = calloc(n_net, sizeof(*dst->net));
		dst->n_net = n_net;
		i = 0;
		parg.rsp_policy = &bx_net_nest;
		ynl_attr_for_each(attr, nlh, yarg->ys->family->hdr_len) {
			if (ynl_attr_type(attr) == BX_A_ADMIT_NET) {
				parg.data = &dst->net[i];
				if (bx_net_parse(&parg, attr))
					return YNL_PARSE_CB_ERROR;
				i++;
			}
		}
	}

	return YNL_PARSE_CB_OK;
}

struct bx_admit_get_rsp *bx_admit_get(struct ynl_sock *ys)
{
	struct ynl_req_state yrs = { .yarg = { .ys = ys, }, };
	struct bx_admit_get_rsp *rsp;
	struct nlmsghdr *nlh;
	int err;

	nlh = ynl_gemsg_start_req(ys, ys->family_id, BX_CMD_ADMIT_GET, 1);
	ys->req_policy = &bx_admit_nest;
	yrs.yarg.rsp_policy = &bx_admit_nest;

	rsp = calloc(1, sizeof(*rsp));
	yrs.yarg.data = rsp;
	yrs.cb = bx_admit_get_rsp_parse;
	yrs.rsp_cmd = BX_CMD_ADMIT_GET;

	err = ynl_exec(ys, nlh, &yrs);
	if (err < 0)
		goto err_free;

	return rsp;

err_free:
	bx_admit_get_rsp_free(rsp);
	return NULL;
}

/* ============== BX_CMD_ALLOW_SET ============== */
/* BX_CMD_ALLOW_SET - do */
void bx_allow_set_req_free(struct bx_allow_set_req *req)
{
	unsigned int i;

	for (i = 0; i < req->n_net; i++)
		bx_net_free(&req->net[i]);
	free(req->net);
	free(req);
}

int bx_allow_set(struct ynl_sock *ys, struct bx_allow_set_req *req)
{
	struct ynl_req_state yrs = { .yarg = { .ys = ys, }, };
	struct nlmsghdr *nlh;
	int err;

	nlh = ynl_gemsg_start_req(ys, ys->family_id, BX_CMD_ALLOW_SET, 1);
	ys->req_policy = &bx_admit_nest;

	for (unsigned int i = 0; i < req->n_net; i++)
		bx_net_put(nlh, BX_A_ADMIT_NET, &req->net[i]);

	err = ynl_exec(ys, nlh, &yrs);
	if (err < 0)
		return -1;

	return 0;
}

/* ============== BX_CMD_SECRET_SET ============== */
/* BX_CMD_SECRET_SET - do */
void bx_secret_set_req_free(struct bx_secret_set_req *req)
{
	free(req->secret);
	free(req);
}

int bx_secret_set(struct ynl_sock *ys, struct bx_secret_set_req *req)
{
	struct ynl_req_state yrs = { .yarg = { .ys = ys, }, };
	struct nlmsghdr *nlh;
	int err;

	nlh = ynl_gemsg_start_req(ys, ys->family_id, BX_CMD_SECRET_SET, 1);
	ys->req_policy = &bx_admit_nest;

	if (req->_present.secret_len)
		ynl_attr_put(nlh, BX_A_ADMIT_SECRET, req->secret, req->_present.secret_len);

	err = ynl_exec(ys, nlh, &yrs);
	if (err < 0)
		return -1;

	return 0;
}

/* ============== BX_CMD_KEYS_SET ============== */
/* BX_CMD_KEYS_SET - do */
void bx_keys_set_req_free(struct bx_keys_set_req *req)
{
	unsigned int i;

	for (i = 0; i < req->n_pairkey; i++)
		bx_pairkey_free(&req->pairkey[i]);
	free(req->pairkey);
	free(req);
}

int bx_keys_set(struct ynl_sock *ys, struct bx_keys_set_req *req)
{
	struct ynl_req_state yrs = { .yarg = { .ys = ys, }, };
	struct nlmsghdr *nlh;
	int err;

	nlh = ynl_gemsg_start_req(ys, ys->family_id, BX_CMD_KEYS_SET, 1);
	ys->req_policy = &bx_admit_nest;

	for (unsigned int i = 0; i < req->n_pairkey; i++)
		bx_pairkey_put(nlh, BX_A_ADMIT_PAIRKEY, &req->pairkey[i]);

	err = ynl_exec(ys, nlh, &yrs);
	if (err < 0)
		return -1;

	return 0;
}

/* BX_CMD_DEV_ADD_NTF - event */
int bx_dev_add_ntf_rsp_parse(const struct nlmsghdr *nlh,
			     struct ynl_parse_arg *yarg)
{
	struct bx_dev_add_ntf_rsp *dst;
	const struct nlattr *attr;

	dst = yarg->data;

	ynl_attr_for_each(attr, nlh, yarg->ys->family->hdr_len) {
		unsigned int type = ynl_attr_type(attr);

		if (type == BX_A_DEV_NAME) {
			unsigned int len;

			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;

			len = strnlen(ynl_attr_get_str(attr), ynl_attr_data_len(attr));
			dst->_present.name_len = len;
			dst->name = malloc(len + 1);
			memcpy(dst->name, ynl_attr_get_str(attr), len);
			dst->name[len] = 0;
		} else if (type == BX_A_DEV_PORT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.port = 1;
			dst->port = ynl_attr_get_u32(attr);
		} else if (type == BX_A_DEV_NETDEV) {
			unsigned int len;

			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;

			len = strnlen(ynl_attr_get_str(attr), ynl_attr_data_len(attr));
			dst->_present.netdev_len = len;
			dst->netdev = malloc(len + 1);
			memcpy(dst->netdev, ynl_attr_get_str(attr), len);
			dst->netdev[len] = 0;
		}
	}

	return YNL_PARSE_CB_OK;
}

void bx_dev_add_ntf_free(struct bx_dev_add_ntf *rsp)
{
	free(rsp->obj.name);
	free(rsp->obj.netdev);
	free(rsp);
}

/* BX_CMD_DEV_DEL_NTF - event */
int bx_dev_del_ntf_rsp_parse(const struct nlmsghdr *nlh,
			     struct ynl_parse_arg *yarg)
{
	struct bx_dev_del_ntf_rsp *dst;
	const struct nlattr *attr;

	dst = yarg->data;

	ynl_attr_for_each(attr, nlh, yarg->ys->family->hdr_len) {
		unsigned int type = ynl_attr_type(attr);

		if (type == BX_A_DEV_NAME) {
			unsigned int len;

			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;

			len = strnlen(ynl_attr_get_str(attr), ynl_attr_data_len(attr));
			dst->_present.name_len = len;
			dst->name = malloc(len + 1);
			memcpy(dst->name, ynl_attr_get_str(attr), len);
			dst->name[len] = 0;
		} else if (type == BX_A_DEV_PORT) {
			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;
			dst->_present.port = 1;
			dst->port = ynl_attr_get_u32(attr);
		} else if (type == BX_A_DEV_NETDEV) {
			unsigned int len;

			if (ynl_attr_validate(yarg, attr))
				return YNL_PARSE_CB_ERROR;

			len = strnlen(ynl_attr_get_str(attr), ynl_attr_data_len(attr));
			dst->_present.netdev_len = len;
			dst->netdev = malloc(len + 1);
			memcpy(dst->netdev, ynl_attr_get_str(attr), len);
			dst->netdev[len] = 0;
		}
	}

	return YNL_PARSE_CB_OK;
}

void bx_dev_del_ntf_free(struct bx_dev_del_ntf *rsp)
{
	free(rsp->obj.name);
	free(rsp->obj.netdev);
	free(rsp);
}

static const struct ynl_ntf_info bx_ntf_info[] =  {
	[BX_CMD_CONN_UP_NTF] =  {
		.alloc_sz	= sizeof(struct bx_conn_get_ntf),
		.cb		= bx_conn_get_rsp_parse,
		.policy		= &bx_conn_nest,
		.free		= (void *)bx_conn_get_ntf_free,
	},
	[BX_CMD_CONN_DOWN_NTF] =  {
		.alloc_sz	= sizeof(struct bx_conn_get_ntf),
		.cb		= bx_conn_get_rsp_parse,
		.policy		= &bx_conn_nest,
		.free		= (void *)bx_conn_get_ntf_free,
	},
	[BX_CMD_PEER_RESTART_NTF] =  {
		.alloc_sz	= sizeof(struct bx_conn_get_ntf),
		.cb		= bx_conn_get_rsp_parse,
		.policy		= &bx_conn_nest,
		.free		= (void *)bx_conn_get_ntf_free,
	},
	[BX_CMD_DEV_ADD_NTF] =  {
		.alloc_sz	= sizeof(struct bx_dev_add_ntf),
		.cb		= bx_dev_add_ntf_rsp_parse,
		.policy		= &bx_dev_nest,
		.free		= (void *)bx_dev_add_ntf_free,
	},
	[BX_CMD_DEV_DEL_NTF] =  {
		.alloc_sz	= sizeof(struct bx_dev_del_ntf),
		.cb		= bx_dev_del_ntf_rsp_parse,
		.policy		= &bx_dev_nest,
		.free		= (void *)bx_dev_del_ntf_free,
	},
	[BX_CMD_RECOVERING_NTF] =  {
		.alloc_sz	= sizeof(struct bx_conn_get_ntf),
		.cb		= bx_conn_get_rsp_parse,
		.policy		= &bx_conn_nest,
		.free		= (void *)bx_conn_get_ntf_free,
	},
	[BX_CMD_RECOVERED_NTF] =  {
		.alloc_sz	= sizeof(struct bx_conn_get_ntf),
		.cb		= bx_conn_get_rsp_parse,
		.policy		= &bx_conn_nest,
		.free		= (void *)bx_conn_get_ntf_free,
	},
};

const struct ynl_family ynl_bx_family =  {
	.name		= "bx",
	.hdr_len	= sizeof(struct genlmsghdr),
	.ntf_info	= bx_ntf_info,
	.ntf_info_size	= YNL_ARRAY_SIZE(bx_ntf_info),
};
