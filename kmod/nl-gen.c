// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/bx.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "nl-gen.h"

#include <uapi/linux/bx_netlink.h>

/* Integer value ranges */
static const struct netlink_range_validation bx_a_tunables_wnd_kb_range = {
	.min	= 64ULL,
	.max	= 1048576ULL,
};

static const struct netlink_range_validation bx_a_tunables_host_wnd_kb_range = {
	.min	= 64ULL,
	.max	= 4194304ULL,
};

static const struct netlink_range_validation bx_a_tunables_host_wnd_ops_range = {
	.min	= 1ULL,
	.max	= 65536ULL,
};

static const struct netlink_range_validation bx_a_tunables_rx_wnd_kb_range = {
	.min	= 64ULL,
	.max	= 4194304ULL,
};

static const struct netlink_range_validation bx_a_tunables_drr_quantum_range = {
	.min	= 512ULL,
	.max	= 16777216ULL,
};

static const struct netlink_range_validation bx_a_tunables_connect_timeout_ms_range = {
	.min	= 1000ULL,
	.max	= 120000ULL,
};

static const struct netlink_range_validation bx_a_tunables_recover_ms_range = {
	.max	= 600000ULL,
};

static const struct netlink_range_validation bx_a_tunables_refuse_ms_range = {
	.max	= 600000ULL,
};

static const struct netlink_range_validation bx_a_tunables_peer_linger_ms_range = {
	.max	= 3600000ULL,
};

static const struct netlink_range_validation bx_a_tunables_user_ops_max_range = {
	.min	= 16ULL,
	.max	= 1048576ULL,
};

static const struct netlink_range_validation bx_a_tunables_user_services_max_range = {
	.min	= 1ULL,
	.max	= 65536ULL,
};

static const struct netlink_range_validation bx_a_tunables_op_timeout_ms_range = {
	.max	= 3600000ULL,
};

static const struct netlink_range_validation bx_a_tunables_region_cap_mb_range = {
	.max	= 16777216ULL,
};

static const struct netlink_range_validation bx_a_tunables_secret_overlap_ms_range = {
	.max	= 86400000ULL,
};

static const struct netlink_range_validation bx_a_tunables_op_timeout_max_ms_range = {
	.min	= 1000ULL,
	.max	= 3600000ULL,
};

/* Common nested types */
const struct nla_policy bx_net_nl_policy[BX_A_NET_PREFIX_LEN + 1] = {
	[BX_A_NET_ADDR] = NLA_POLICY_EXACT_LEN(16),
	[BX_A_NET_PREFIX_LEN] = NLA_POLICY_MAX(NLA_U8, 128),
};

const struct nla_policy bx_pairkey_nl_policy[BX_A_PAIRKEY_KEY + 1] = {
	[BX_A_PAIRKEY_ADDR] = NLA_POLICY_EXACT_LEN(16),
	[BX_A_PAIRKEY_KID] = NLA_POLICY_EXACT_LEN(4),
	[BX_A_PAIRKEY_KEY] = NLA_POLICY_EXACT_LEN(32),
};

/* BX_CMD_CONN_GET - do */
static const struct nla_policy bx_conn_get_nl_policy[BX_A_CONN_LANE + 1] = {
	[BX_A_CONN_PEER_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[BX_A_CONN_LANE] = NLA_POLICY_MAX(NLA_U32, 7),
};

/* BX_CMD_TUNABLES_SET - do */
static const struct nla_policy bx_tunables_set_nl_policy[BX_A_TUNABLES_QPS_PER_PEER + 1] = {
	[BX_A_TUNABLES_WND_KB] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_wnd_kb_range),
	[BX_A_TUNABLES_WND_OPS] = NLA_POLICY_RANGE(NLA_U32, 1, 4096),
	[BX_A_TUNABLES_HOST_WND_KB] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_host_wnd_kb_range),
	[BX_A_TUNABLES_HOST_WND_OPS] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_host_wnd_ops_range),
	[BX_A_TUNABLES_RX_WND_KB] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_rx_wnd_kb_range),
	[BX_A_TUNABLES_RD_MAX] = NLA_POLICY_RANGE(NLA_U32, 1, 16),
	[BX_A_TUNABLES_CREDIT_BATCH] = NLA_POLICY_RANGE(NLA_U32, 1, 64),
	[BX_A_TUNABLES_RDV_THRESHOLD] = NLA_POLICY_MAX(NLA_U32, 4096),
	[BX_A_TUNABLES_DRR_QUANTUM] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_drr_quantum_range),
	[BX_A_TUNABLES_FLOW_CONTROL] = NLA_POLICY_MAX(NLA_U8, 1),
	[BX_A_TUNABLES_PIECE_KB] = NLA_POLICY_MAX(NLA_U32, 16384),
	[BX_A_TUNABLES_CONNECT_TIMEOUT_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_connect_timeout_ms_range),
	[BX_A_TUNABLES_ACK_TIMEOUT] = NLA_POLICY_RANGE(NLA_U32, 8, 24),
	[BX_A_TUNABLES_RECOVER_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_recover_ms_range),
	[BX_A_TUNABLES_RD_DEPTH] = NLA_POLICY_RANGE(NLA_U32, 1, 16),
	[BX_A_TUNABLES_REFUSE_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_refuse_ms_range),
	[BX_A_TUNABLES_PEER_LINGER_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_peer_linger_ms_range),
	[BX_A_TUNABLES_USER_OPS_MAX] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_user_ops_max_range),
	[BX_A_TUNABLES_USER_PEERS_MAX] = NLA_POLICY_RANGE(NLA_U32, 1, 1024),
	[BX_A_TUNABLES_USER_SERVICES_MAX] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_user_services_max_range),
	[BX_A_TUNABLES_OP_TIMEOUT_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_op_timeout_ms_range),
	[BX_A_TUNABLES_REGION_CAP_MB] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_region_cap_mb_range),
	[BX_A_TUNABLES_PROOF_MS] = NLA_POLICY_RANGE(NLA_U32, 1000, 30000),
	[BX_A_TUNABLES_SECRET_OVERLAP_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_secret_overlap_ms_range),
	[BX_A_TUNABLES_REMOTE_PEERS_MAX] = NLA_POLICY_RANGE(NLA_U32, 1, 960),
	[BX_A_TUNABLES_OP_TIMEOUT_MAX_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &bx_a_tunables_op_timeout_max_ms_range),
	[BX_A_TUNABLES_USER_WND_PCT] = NLA_POLICY_RANGE(NLA_U32, 1, 100),
	[BX_A_TUNABLES_QPS_PER_PEER] = NLA_POLICY_RANGE(NLA_U32, 1, 8),
};

/* BX_CMD_ALLOW_SET - do */
static const struct nla_policy bx_allow_set_nl_policy[BX_A_ADMIT_NET + 1] = {
	[BX_A_ADMIT_NET] = NLA_POLICY_NESTED(bx_net_nl_policy),
};

/* BX_CMD_SECRET_SET - do */
static const struct nla_policy bx_secret_set_nl_policy[BX_A_ADMIT_SECRET + 1] = {
	[BX_A_ADMIT_SECRET] = NLA_POLICY_EXACT_LEN(32),
};

/* BX_CMD_KEYS_SET - do */
static const struct nla_policy bx_keys_set_nl_policy[BX_A_ADMIT_PAIRKEY + 1] = {
	[BX_A_ADMIT_PAIRKEY] = NLA_POLICY_NESTED(bx_pairkey_nl_policy),
};

/* Ops table for bx */
static const struct genl_split_ops bx_nl_ops[] = {
	{
		.cmd	= BX_CMD_DEV_GET,
		.dumpit	= bx_nl_dev_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= BX_CMD_CONN_GET,
		.doit		= bx_nl_conn_get_doit,
		.policy		= bx_conn_get_nl_policy,
		.maxattr	= BX_A_CONN_LANE,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= BX_CMD_CONN_GET,
		.dumpit	= bx_nl_conn_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd	= BX_CMD_PROC_GET,
		.dumpit	= bx_nl_proc_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd	= BX_CMD_STATS_GET,
		.doit	= bx_nl_stats_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= BX_CMD_TUNABLES_GET,
		.doit	= bx_nl_tunables_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= BX_CMD_TUNABLES_SET,
		.doit		= bx_nl_tunables_set_doit,
		.policy		= bx_tunables_set_nl_policy,
		.maxattr	= BX_A_TUNABLES_QPS_PER_PEER,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd	= BX_CMD_ADMIT_GET,
		.doit	= bx_nl_admit_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= BX_CMD_ALLOW_SET,
		.doit		= bx_nl_allow_set_doit,
		.policy		= bx_allow_set_nl_policy,
		.maxattr	= BX_A_ADMIT_NET,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= BX_CMD_SECRET_SET,
		.doit		= bx_nl_secret_set_doit,
		.policy		= bx_secret_set_nl_policy,
		.maxattr	= BX_A_ADMIT_SECRET,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= BX_CMD_KEYS_SET,
		.doit		= bx_nl_keys_set_doit,
		.policy		= bx_keys_set_nl_policy,
		.maxattr	= BX_A_ADMIT_PAIRKEY,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group bx_nl_mcgrps[] = {
	[BX_NLGRP_EVENTS] = { "events", .flags = GENL_MCAST_CAP_NET_ADMIN, },
};

struct genl_family bx_nl_family __ro_after_init = {
	.name		= BX_FAMILY_NAME,
	.version	= BX_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= bx_nl_ops,
	.n_split_ops	= ARRAY_SIZE(bx_nl_ops),
	.mcgrps		= bx_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(bx_nl_mcgrps),
};
