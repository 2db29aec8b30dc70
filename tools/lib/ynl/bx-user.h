/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/bx.yaml */
/* YNL-GEN user header */

#ifndef _LINUX_BX_GEN_H
#define _LINUX_BX_GEN_H

#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include <linux/bx_netlink.h>

struct ynl_sock;

extern const struct ynl_family ynl_bx_family;

/* Enums */
const char *bx_op_str(int op);
const char *bx_conn_state_str(enum bx_conn_state value);

/* Common nested types */
struct bx_net {
	struct {
		__u32 addr_len;
		__u32 prefix_len:1;
	} _present;

	void *addr;
	__u8 prefix_len;
};

struct bx_pairkey {
	struct {
		__u32 addr_len;
		__u32 kid_len;
		__u32 key_len;
	} _present;

	void *addr;
	void *kid;
	void *key;
};

/* ============== BX_CMD_DEV_GET ============== */
/* BX_CMD_DEV_GET - dump */
struct bx_dev_get_rsp_dump {
	struct {
		__u32 name_len;
		__u32 port:1;
		__u32 netdev_len;
	} _present;

	char *name;
	__u32 port;
	char *netdev;
};

struct bx_dev_get_rsp_list {
	struct bx_dev_get_rsp_list *next;
	struct bx_dev_get_rsp_dump obj __attribute__((aligned(8)));
};

void bx_dev_get_rsp_list_free(struct bx_dev_get_rsp_list *rsp);

struct bx_dev_get_rsp_list *bx_dev_get_dump(struct ynl_sock *ys);

/* ============== BX_CMD_CONN_GET ============== */
/* BX_CMD_CONN_GET - do */
struct bx_conn_get_req {
	struct {
		__u32 peer_id:1;
		__u32 lane:1;
	} _present;

	__u32 peer_id;
	__u32 lane;
};

static inline struct bx_conn_get_req *bx_conn_get_req_alloc(void)
{
	return calloc(1, sizeof(struct bx_conn_get_req));
}
void bx_conn_get_req_free(struct bx_conn_get_req *req);

static inline void
bx_conn_get_req_set_peer_id(struct bx_conn_get_req *req, __u32 peer_id)
{
	req->_present.peer_id = 1;
	req->peer_id = peer_id;
}
static inline void
bx_conn_get_req_set_lane(struct bx_conn_get_req *req, __u32 lane)
{
	req->_present.lane = 1;
	req->lane = lane;
}

struct bx_conn_get_rsp {
	struct {
		__u32 peer_id:1;
		__u32 peer_addr_len;
		__u32 state:1;
		__u32 active:1;
		__u32 dev_name_len;
		__u32 qpn:1;
		__u32 err:1;
		__u32 peer_epoch:1;
		__u32 awaiting:1;
		__u32 peer_restarts:1;
		__u32 tx_msgs:1;
		__u32 rx_msgs:1;
		__u32 credits:1;
		__u32 credits_max:1;
		__u32 grant:1;
		__u32 credit_stalls:1;
		__u32 credit_updates:1;
		__u32 wnd_bytes_inflight:1;
		__u32 wnd_ops_inflight:1;
		__u32 wnd_peak_bytes:1;
		__u32 wnd_waits:1;
		__u32 rd_bytes_inflight:1;
		__u32 rd_reads_inflight:1;
		__u32 rd_peak_bytes:1;
		__u32 busy_retries:1;
		__u32 rnr:1;
		__u32 parked:1;
		__u32 recoveries:1;
		__u32 recovered_ops:1;
		__u32 recover_failed:1;
		__u32 dup_pushes:1;
		__u32 wnd_small_inflight:1;
		__u32 small_passes:1;
		__u32 auth:1;
		__u32 peer_violations:1;
		__u32 peer_refused:1;
		__u32 peer_refusing_ms:1;
		__u32 lane:1;
	} _present;

	__u32 peer_id;
	void *peer_addr;
	enum bx_conn_state state;
	char *dev_name;
	__u32 qpn;
	__s32 err;
	__u64 peer_epoch;
	__u32 awaiting;
	__u32 peer_restarts;
	__u64 tx_msgs;
	__u64 rx_msgs;
	__u32 credits;
	__u32 credits_max;
	__u32 grant;
	__u64 credit_stalls;
	__u64 credit_updates;
	__u64 wnd_bytes_inflight;
	__u32 wnd_ops_inflight;
	__u64 wnd_peak_bytes;
	__u64 wnd_waits;
	__u64 rd_bytes_inflight;
	__u32 rd_reads_inflight;
	__u64 rd_peak_bytes;
	__u64 busy_retries;
	__u64 rnr;
	__u32 parked;
	__u32 recoveries;
	__u64 recovered_ops;
	__u64 recover_failed;
	__u64 dup_pushes;
	__u32 wnd_small_inflight;
	__u64 small_passes;
	__u32 peer_violations;
	__u32 peer_refused;
	__u32 peer_refusing_ms;
	__u32 lane;
};

void bx_conn_get_rsp_free(struct bx_conn_get_rsp *rsp);

/*
 * Get one connection by peer id, or dump all.
 */
struct bx_conn_get_rsp *
bx_conn_get(struct ynl_sock *ys, struct bx_conn_get_req *req);

/* BX_CMD_CONN_GET - dump */
struct bx_conn_get_list {
	struct bx_conn_get_list *next;
	struct bx_conn_get_rsp obj __attribute__((aligned(8)));
};

void bx_conn_get_list_free(struct bx_conn_get_list *rsp);

struct bx_conn_get_list *bx_conn_get_dump(struct ynl_sock *ys);

/* BX_CMD_CONN_GET - notify */
struct bx_conn_get_ntf {
	__u16 family;
	__u8 cmd;
	struct ynl_ntf_base_type *next;
	void (*free)(struct bx_conn_get_ntf *ntf);
	struct bx_conn_get_rsp obj __attribute__((aligned(8)));
};

void bx_conn_get_ntf_free(struct bx_conn_get_ntf *rsp);

/* ============== BX_CMD_PROC_GET ============== */
/* BX_CMD_PROC_GET - dump */
struct bx_proc_get_rsp_dump {
	struct {
		__u32 pid:1;
		__u32 bytes_tx:1;
		__u32 bytes_rx:1;
		__u32 inflight:1;
		__u32 region_bytes:1;
	} _present;

	__u32 pid;
	__u64 bytes_tx;
	__u64 bytes_rx;
	__u32 inflight;
	__u64 region_bytes;
};

struct bx_proc_get_rsp_list {
	struct bx_proc_get_rsp_list *next;
	struct bx_proc_get_rsp_dump obj __attribute__((aligned(8)));
};

void bx_proc_get_rsp_list_free(struct bx_proc_get_rsp_list *rsp);

struct bx_proc_get_rsp_list *bx_proc_get_dump(struct ynl_sock *ys);

/* ============== BX_CMD_STATS_GET ============== */
/* BX_CMD_STATS_GET - do */

struct bx_stats_get_rsp {
	struct {
		__u32 conns:1;
		__u32 ops_inflight:1;
		__u32 mrs_inuse:1;
		__u32 region_bytes:1;
		__u32 copied_bytes:1;
		__u32 tx_bytes_inflight:1;
		__u32 tx_peak_bytes:1;
		__u32 rx_bytes_inflight:1;
		__u32 rx_peak_bytes:1;
		__u32 busy_retries:1;
		__u32 rnr_events:1;
		__u32 dup_pushes:1;
		__u32 recovered_ops:1;
		__u32 recover_failed:1;
		__u32 tx_small_inflight:1;
		__u32 small_passes:1;
		__u32 peers:1;
		__u32 pieces:1;
	} _present;

	__u32 conns;
	__u64 ops_inflight;
	__u64 mrs_inuse;
	__u64 region_bytes;
	__u64 copied_bytes;
	__u64 tx_bytes_inflight;
	__u64 tx_peak_bytes;
	__u64 rx_bytes_inflight;
	__u64 rx_peak_bytes;
	__u64 busy_retries;
	__u64 rnr_events;
	__u64 dup_pushes;
	__u64 recovered_ops;
	__u64 recover_failed;
	__u32 tx_small_inflight;
	__u64 small_passes;
	__u32 peers;
	__u64 pieces;
};

void bx_stats_get_rsp_free(struct bx_stats_get_rsp *rsp);

/*
 * Host-wide counters.
 */
struct bx_stats_get_rsp *bx_stats_get(struct ynl_sock *ys);

/* ============== BX_CMD_TUNABLES_GET ============== */
/* BX_CMD_TUNABLES_GET - do */

struct bx_tunables_get_rsp {
	struct {
		__u32 wnd_kb:1;
		__u32 wnd_ops:1;
		__u32 host_wnd_kb:1;
		__u32 host_wnd_ops:1;
		__u32 rx_wnd_kb:1;
		__u32 rd_max:1;
		__u32 credit_batch:1;
		__u32 rdv_threshold:1;
		__u32 drr_quantum:1;
		__u32 flow_control:1;
		__u32 piece_kb:1;
		__u32 connect_timeout_ms:1;
		__u32 ack_timeout:1;
		__u32 recover_ms:1;
		__u32 rd_depth:1;
		__u32 refuse_ms:1;
		__u32 peer_linger_ms:1;
		__u32 user_ops_max:1;
		__u32 user_peers_max:1;
		__u32 user_services_max:1;
		__u32 op_timeout_ms:1;
		__u32 region_cap_mb:1;
		__u32 proof_ms:1;
		__u32 secret_overlap_ms:1;
		__u32 remote_peers_max:1;
		__u32 op_timeout_max_ms:1;
		__u32 user_wnd_pct:1;
		__u32 qps_per_peer:1;
	} _present;

	__u32 wnd_kb;
	__u32 wnd_ops;
	__u32 host_wnd_kb;
	__u32 host_wnd_ops;
	__u32 rx_wnd_kb;
	__u32 rd_max;
	__u32 credit_batch;
	__u32 rdv_threshold;
	__u32 drr_quantum;
	__u8 flow_control;
	__u32 piece_kb;
	__u32 connect_timeout_ms;
	__u32 ack_timeout;
	__u32 recover_ms;
	__u32 rd_depth;
	__u32 refuse_ms;
	__u32 peer_linger_ms;
	__u32 user_ops_max;
	__u32 user_peers_max;
	__u32 user_services_max;
	__u32 op_timeout_ms;
	__u32 region_cap_mb;
	__u32 proof_ms;
	__u32 secret_overlap_ms;
	__u32 remote_peers_max;
	__u32 op_timeout_max_ms;
	__u32 user_wnd_pct;
	__u32 qps_per_peer;
};

void bx_tunables_get_rsp_free(struct bx_tunables_get_rsp *rsp);

/*
 * Current values of the tunables.
 */
struct bx_tunables_get_rsp *bx_tunables_get(struct ynl_sock *ys);

/* ============== BX_CMD_TUNABLES_SET ============== */
/* BX_CMD_TUNABLES_SET - do */
struct bx_tunables_set_req {
	struct {
		__u32 wnd_kb:1;
		__u32 wnd_ops:1;
		__u32 host_wnd_kb:1;
		__u32 host_wnd_ops:1;
		__u32 rx_wnd_kb:1;
		__u32 rd_max:1;
		__u32 credit_batch:1;
		__u32 rdv_threshold:1;
		__u32 drr_quantum:1;
		__u32 flow_control:1;
		__u32 piece_kb:1;
		__u32 connect_timeout_ms:1;
		__u32 ack_timeout:1;
		__u32 recover_ms:1;
		__u32 rd_depth:1;
		__u32 refuse_ms:1;
		__u32 peer_linger_ms:1;
		__u32 user_ops_max:1;
		__u32 user_peers_max:1;
		__u32 user_services_max:1;
		__u32 op_timeout_ms:1;
		__u32 region_cap_mb:1;
		__u32 proof_ms:1;
		__u32 secret_overlap_ms:1;
		__u32 remote_peers_max:1;
		__u32 op_timeout_max_ms:1;
		__u32 user_wnd_pct:1;
		__u32 qps_per_peer:1;
	} _present;

	__u32 wnd_kb;
	__u32 wnd_ops;
	__u32 host_wnd_kb;
	__u32 host_wnd_ops;
	__u32 rx_wnd_kb;
	__u32 rd_max;
	__u32 credit_batch;
	__u32 rdv_threshold;
	__u32 drr_quantum;
	__u8 flow_control;
	__u32 piece_kb;
	__u32 connect_timeout_ms;
	__u32 ack_timeout;
	__u32 recover_ms;
	__u32 rd_depth;
	__u32 refuse_ms;
	__u32 peer_linger_ms;
	__u32 user_ops_max;
	__u32 user_peers_max;
	__u32 user_services_max;
	__u32 op_timeout_ms;
	__u32 region_cap_mb;
	__u32 proof_ms;
	__u32 secret_overlap_ms;
	__u32 remote_peers_max;
	__u32 op_timeout_max_ms;
	__u32 user_wnd_pct;
	__u32 qps_per_peer;
};

static inline struct bx_tunables_set_req *bx_tunables_set_req_alloc(void)
{
	return calloc(1, sizeof(struct bx_tunables_set_req));
}
void bx_tunables_set_req_free(struct bx_tunables_set_req *req);

static inline void
bx_tunables_set_req_set_wnd_kb(struct bx_tunables_set_req *req, __u32 wnd_kb)
{
	req->_present.wnd_kb = 1;
	req->wnd_kb = wnd_kb;
}
static inline void
bx_tunables_set_req_set_wnd_ops(struct bx_tunables_set_req *req, __u32 wnd_ops)
{
	req->_present.wnd_ops = 1;
	req->wnd_ops = wnd_ops;
}
static inline void
bx_tunables_set_req_set_host_wnd_kb(struct bx_tunables_set_req *req,
				    __u32 host_wnd_kb)
{
	req->_present.host_wnd_kb = 1;
	req->host_wnd_kb = host_wnd_kb;
}
static inline void
bx_tunables_set_req_set_host_wnd_ops(struct bx_tunables_set_req *req,
				     __u32 host_wnd_ops)
{
	req->_present.host_wnd_ops = 1;
	req->host_wnd_ops = host_wnd_ops;
}
static inline void
bx_tunables_set_req_set_rx_wnd_kb(struct bx_tunables_set_req *req,
				  __u32 rx_wnd_kb)
{
	req->_present.rx_wnd_kb = 1;
	req->rx_wnd_kb = rx_wnd_kb;
}
static inline void
bx_tunables_set_req_set_rd_max(struct bx_tunables_set_req *req, __u32 rd_max)
{
	req->_present.rd_max = 1;
	req->rd_max = rd_max;
}
static inline void
bx_tunables_set_req_set_credit_batch(struct bx_tunables_set_req *req,
				     __u32 credit_batch)
{
	req->_present.credit_batch = 1;
	req->credit_batch = credit_batch;
}
static inline void
bx_tunables_set_req_set_rdv_threshold(struct bx_tunables_set_req *req,
				      __u32 rdv_threshold)
{
	req->_present.rdv_threshold = 1;
	req->rdv_threshold = rdv_threshold;
}
static inline void
bx_tunables_set_req_set_drr_quantum(struct bx_tunables_set_req *req,
				    __u32 drr_quantum)
{
	req->_present.drr_quantum = 1;
	req->drr_quantum = drr_quantum;
}
static inline void
bx_tunables_set_req_set_flow_control(struct bx_tunables_set_req *req,
				     __u8 flow_control)
{
	req->_present.flow_control = 1;
	req->flow_control = flow_control;
}
static inline void
bx_tunables_set_req_set_piece_kb(struct bx_tunables_set_req *req,
				 __u32 piece_kb)
{
	req->_present.piece_kb = 1;
	req->piece_kb = piece_kb;
}
static inline void
bx_tunables_set_req_set_connect_timeout_ms(struct bx_tunables_set_req *req,
					   __u32 connect_timeout_ms)
{
	req->_present.connect_timeout_ms = 1;
	req->connect_timeout_ms = connect_timeout_ms;
}
static inline void
bx_tunables_set_req_set_ack_timeout(struct bx_tunables_set_req *req,
				    __u32 ack_timeout)
{
	req->_present.ack_timeout = 1;
	req->ack_timeout = ack_timeout;
}
static inline void
bx_tunables_set_req_set_recover_ms(struct bx_tunables_set_req *req,
				   __u32 recover_ms)
{
	req->_present.recover_ms = 1;
	req->recover_ms = recover_ms;
}
static inline void
bx_tunables_set_req_set_rd_depth(struct bx_tunables_set_req *req,
				 __u32 rd_depth)
{
	req->_present.rd_depth = 1;
	req->rd_depth = rd_depth;
}
static inline void
bx_tunables_set_req_set_refuse_ms(struct bx_tunables_set_req *req,
				  __u32 refuse_ms)
{
	req->_present.refuse_ms = 1;
	req->refuse_ms = refuse_ms;
}
static inline void
bx_tunables_set_req_set_peer_linger_ms(struct bx_tunables_set_req *req,
				       __u32 peer_linger_ms)
{
	req->_present.peer_linger_ms = 1;
	req->peer_linger_ms = peer_linger_ms;
}
static inline void
bx_tunables_set_req_set_user_ops_max(struct bx_tunables_set_req *req,
				     __u32 user_ops_max)
{
	req->_present.user_ops_max = 1;
	req->user_ops_max = user_ops_max;
}
static inline void
bx_tunables_set_req_set_user_peers_max(struct bx_tunables_set_req *req,
				       __u32 user_peers_max)
{
	req->_present.user_peers_max = 1;
	req->user_peers_max = user_peers_max;
}
static inline void
bx_tunables_set_req_set_user_services_max(struct bx_tunables_set_req *req,
					  __u32 user_services_max)
{
	req->_present.user_services_max = 1;
	req->user_services_max = user_services_max;
}
static inline void
bx_tunables_set_req_set_op_timeout_ms(struct bx_tunables_set_req *req,
				      __u32 op_timeout_ms)
{
	req->_present.op_timeout_ms = 1;
	req->op_timeout_ms = op_timeout_ms;
}
static inline void
bx_tunables_set_req_set_region_cap_mb(struct bx_tunables_set_req *req,
				      __u32 region_cap_mb)
{
	req->_present.region_cap_mb = 1;
	req->region_cap_mb = region_cap_mb;
}
static inline void
bx_tunables_set_req_set_proof_ms(struct bx_tunables_set_req *req,
				 __u32 proof_ms)
{
	req->_present.proof_ms = 1;
	req->proof_ms = proof_ms;
}
static inline void
bx_tunables_set_req_set_secret_overlap_ms(struct bx_tunables_set_req *req,
					  __u32 secret_overlap_ms)
{
	req->_present.secret_overlap_ms = 1;
	req->secret_overlap_ms = secret_overlap_ms;
}
static inline void
bx_tunables_set_req_set_remote_peers_max(struct bx_tunables_set_req *req,
					 __u32 remote_peers_max)
{
	req->_present.remote_peers_max = 1;
	req->remote_peers_max = remote_peers_max;
}
static inline void
bx_tunables_set_req_set_op_timeout_max_ms(struct bx_tunables_set_req *req,
					  __u32 op_timeout_max_ms)
{
	req->_present.op_timeout_max_ms = 1;
	req->op_timeout_max_ms = op_timeout_max_ms;
}
static inline void
bx_tunables_set_req_set_user_wnd_pct(struct bx_tunables_set_req *req,
				     __u32 user_wnd_pct)
{
	req->_present.user_wnd_pct = 1;
	req->user_wnd_pct = user_wnd_pct;
}
static inline void
bx_tunables_set_req_set_qps_per_peer(struct bx_tunables_set_req *req,
				     __u32 qps_per_peer)
{
	req->_present.qps_per_peer = 1;
	req->qps_per_peer = qps_per_peer;
}

/*
 * Set any of the tunables (CAP_NET_ADMIN); all or nothing.
 */
int bx_tunables_set(struct ynl_sock *ys, struct bx_tunables_set_req *req);

/* ============== BX_CMD_ADMIT_GET ============== */
/* BX_CMD_ADMIT_GET - do */

struct bx_admit_get_rsp {
	struct {
		__u32 secret_on:1;
		__u32 refused:1;
		__u32 auth_failures:1;
		__u32 violations:1;
		__u32 challenges:1;
		__u32 stale_cookies:1;
		__u32 secret_prev:1;
		__u32 pairkeys:1;
	} _present;

	unsigned int n_net;
	struct bx_net *net;
	__u8 secret_on;
	__u64 refused;
	__u64 auth_failures;
	__u64 violations;
	__u64 challenges;
	__u64 stale_cookies;
	__u8 secret_prev;
	__u32 pairkeys;
};

void bx_admit_get_rsp_free(struct bx_admit_get_rsp *rsp);

/*
 * Who may be a peer: the allow-list, whether a cluster secret is set,
and the refusal and violation counters.

 */
struct bx_admit_get_rsp *bx_admit_get(struct ynl_sock *ys);

/* ============== BX_CMD_ALLOW_SET ============== */
/* BX_CMD_ALLOW_SET - do */
struct bx_allow_set_req {
	unsigned int n_net;
	struct bx_net *net;
};

static inline struct bx_allow_set_req *bx_allow_set_req_alloc(void)
{
	return calloc(1, sizeof(struct bx_allow_set_req));
}
void bx_allow_set_req_free(struct bx_allow_set_req *req);

static inline void
__bx_allow_set_req_set_net(struct bx_allow_set_req *req, struct bx_net *net,
			   unsigned int n_net)
{
	free(req->net);
	req->net = net;
	req->n_net = n_net;
}

/*
 * Replace the allow-list (CAP_NET_ADMIN); no net attribute clears it.
 */
int bx_allow_set(struct ynl_sock *ys, struct bx_allow_set_req *req);

/* ============== BX_CMD_SECRET_SET ============== */
/* BX_CMD_SECRET_SET - do */
struct bx_secret_set_req {
	struct {
		__u32 secret_len;
	} _present;

	void *secret;
};

static inline struct bx_secret_set_req *bx_secret_set_req_alloc(void)
{
	return calloc(1, sizeof(struct bx_secret_set_req));
}
void bx_secret_set_req_free(struct bx_secret_set_req *req);

static inline void
bx_secret_set_req_set_secret(struct bx_secret_set_req *req, const void *secret,
			     size_t len)
{
	free(req->secret);
	req->_present.secret_len = len;
	req->secret = malloc(req->_present.secret_len);
	memcpy(req->secret, secret, req->_present.secret_len);
}

/*
 * Set the cluster secret, or clear it without one (CAP_NET_ADMIN).
 */
int bx_secret_set(struct ynl_sock *ys, struct bx_secret_set_req *req);

/* ============== BX_CMD_KEYS_SET ============== */
/* BX_CMD_KEYS_SET - do */
struct bx_keys_set_req {
	unsigned int n_pairkey;
	struct bx_pairkey *pairkey;
};

static inline struct bx_keys_set_req *bx_keys_set_req_alloc(void)
{
	return calloc(1, sizeof(struct bx_keys_set_req));
}
void bx_keys_set_req_free(struct bx_keys_set_req *req);

static inline void
__bx_keys_set_req_set_pairkey(struct bx_keys_set_req *req,
			      struct bx_pairkey *pairkey,
			      unsigned int n_pairkey)
{
	free(req->pairkey);
	req->pairkey = pairkey;
	req->n_pairkey = n_pairkey;
}

/*
 * Replace the pair keys (CAP_NET_ADMIN); no pairkey attribute clears
them.

 */
int bx_keys_set(struct ynl_sock *ys, struct bx_keys_set_req *req);

/* BX_CMD_DEV_ADD_NTF - event */
struct bx_dev_add_ntf_rsp {
	struct {
		__u32 name_len;
		__u32 port:1;
		__u32 netdev_len;
	} _present;

	char *name;
	__u32 port;
	char *netdev;
};

struct bx_dev_add_ntf {
	__u16 family;
	__u8 cmd;
	struct ynl_ntf_base_type *next;
	void (*free)(struct bx_dev_add_ntf *ntf);
	struct bx_dev_add_ntf_rsp obj __attribute__((aligned(8)));
};

void bx_dev_add_ntf_free(struct bx_dev_add_ntf *rsp);

/* BX_CMD_DEV_DEL_NTF - event */
struct bx_dev_del_ntf_rsp {
	struct {
		__u32 name_len;
		__u32 port:1;
		__u32 netdev_len;
	} _present;

	char *name;
	__u32 port;
	char *netdev;
};

struct bx_dev_del_ntf {
	__u16 family;
	__u8 cmd;
	struct ynl_ntf_base_type *next;
	void (*free)(struct bx_dev_del_ntf *ntf);
	struct bx_dev_del_ntf_rsp obj __attribute__((aligned(8)));
};

void bx_dev_del_ntf_free(struct bx_dev_del_ntf *rsp);

#endif /* _LINUX_BX_GEN_H */
