// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "bx" (Documentation/netlink/specs/bx.yaml):
 * the family and its group resolve; dumps and gets return every
 * attribute with the right size; tunables-set applies valid values and
 * refuses bad input (out of range, wrong length or type, truncated,
 * unknown attributes, nothing at all) with an extended ACK and without
 * changing anything; conn-get's do checks its peer id; setting needs
 * CAP_NET_ADMIN while reading does not; a dump longer than one message
 * resumes where it stopped; device events carry the dump's attributes.
 *
 * Runs as root in a rig guest with bx loaded and rxe0 on eth0. Speaks
 * netlink as bxctl does, through the client generated from the spec on
 * the kernel's YNL library (tools/lib/ynl); the malformed requests are
 * built with that library's lower-level helpers (ynl-priv.h), and the
 * two tests that look at single messages of a dump read them with
 * libmnl.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/bx_netlink.h>

#include "bx-user.h"
#include "ynl.h"
#include "../kselftest_harness.h"

#define NTUN		BX_A_TUNABLES_MAX
#define PARAMS		"/sys/module/bx/parameters/"

/* Module parameter of each tunable attribute. */
static const char *const tun_param[NTUN + 1] = {
	[BX_A_TUNABLES_WND_KB]		= "wnd_kb",
	[BX_A_TUNABLES_WND_OPS]		= "wnd_ops",
	[BX_A_TUNABLES_HOST_WND_KB]	= "host_wnd_kb",
	[BX_A_TUNABLES_HOST_WND_OPS]	= "host_wnd_ops",
	[BX_A_TUNABLES_RX_WND_KB]	= "rx_wnd_kb",
	[BX_A_TUNABLES_RD_MAX]		= "rd_max",
	[BX_A_TUNABLES_CREDIT_BATCH]	= "credit_batch",
	[BX_A_TUNABLES_RDV_THRESHOLD]	= "rdv_threshold",
	[BX_A_TUNABLES_DRR_QUANTUM]	= "drr_quantum",
	[BX_A_TUNABLES_FLOW_CONTROL]	= "flow_control",
	[BX_A_TUNABLES_PIECE_KB]	= "piece_kb",
	[BX_A_TUNABLES_CONNECT_TIMEOUT_MS] = "connect_timeout_ms",
	[BX_A_TUNABLES_ACK_TIMEOUT]	= "ack_timeout",
	[BX_A_TUNABLES_RECOVER_MS]	= "recover_ms",
	[BX_A_TUNABLES_RD_DEPTH]	= "rd_depth",
	[BX_A_TUNABLES_REFUSE_MS]	= "refuse_ms",
	[BX_A_TUNABLES_PEER_LINGER_MS]	= "peer_linger_ms",
	[BX_A_TUNABLES_USER_OPS_MAX]	= "user_ops_max",
	[BX_A_TUNABLES_USER_PEERS_MAX]	= "user_peers_max",
	[BX_A_TUNABLES_USER_SERVICES_MAX] = "user_services_max",
	[BX_A_TUNABLES_OP_TIMEOUT_MS]	= "op_timeout_ms",
	[BX_A_TUNABLES_REGION_CAP_MB]	= "region_cap_mb",
	[BX_A_TUNABLES_PROOF_MS]	= "proof_ms",
	[BX_A_TUNABLES_SECRET_OVERLAP_MS] = "secret_overlap_ms",
	[BX_A_TUNABLES_REMOTE_PEERS_MAX] = "remote_peers_max",
	[BX_A_TUNABLES_OP_TIMEOUT_MAX_MS] = "op_timeout_max_ms",
	[BX_A_TUNABLES_USER_WND_PCT]	= "user_wnd_pct",
	[BX_A_TUNABLES_QPS_PER_PEER]	= "qps_per_peer",
};

/* Two valid values of each tunable (one of them differs from any value). */
static const unsigned long tun_alt[NTUN + 1][2] = {
	[BX_A_TUNABLES_WND_KB]		= { 512, 1024 },
	[BX_A_TUNABLES_WND_OPS]		= { 64, 32 },
	[BX_A_TUNABLES_HOST_WND_KB]	= { 65536, 16384 },
	[BX_A_TUNABLES_HOST_WND_OPS]	= { 512, 256 },
	[BX_A_TUNABLES_RX_WND_KB]	= { 8192, 4096 },
	[BX_A_TUNABLES_RD_MAX]		= { 1, 2 },
	[BX_A_TUNABLES_CREDIT_BATCH]	= { 16, 8 },
	[BX_A_TUNABLES_RDV_THRESHOLD]	= { 2048, 1024 },
	[BX_A_TUNABLES_DRR_QUANTUM]	= { 32768, 16384 },
	[BX_A_TUNABLES_FLOW_CONTROL]	= { 0, 1 },
	[BX_A_TUNABLES_PIECE_KB]	= { 128, 64 },
	[BX_A_TUNABLES_CONNECT_TIMEOUT_MS] = { 20000, 5000 },
	[BX_A_TUNABLES_ACK_TIMEOUT]	= { 18, 16 },
	[BX_A_TUNABLES_RECOVER_MS]	= { 20000, 1000 },
	[BX_A_TUNABLES_RD_DEPTH]	= { 1, 2 },
	[BX_A_TUNABLES_REFUSE_MS]	= { 2000, 500 },
	[BX_A_TUNABLES_PEER_LINGER_MS]	= { 30000, 120000 },
	[BX_A_TUNABLES_USER_OPS_MAX]	= { 4096, 8192 },
	[BX_A_TUNABLES_USER_PEERS_MAX]	= { 128, 512 },
	[BX_A_TUNABLES_USER_SERVICES_MAX] = { 64, 128 },
	[BX_A_TUNABLES_OP_TIMEOUT_MS]	= { 30000, 120000 },
	[BX_A_TUNABLES_REGION_CAP_MB]	= { 1024, 2048 },
	[BX_A_TUNABLES_PROOF_MS]	= { 5000, 2000 },
	[BX_A_TUNABLES_SECRET_OVERLAP_MS] = { 60000, 0 },
	[BX_A_TUNABLES_REMOTE_PEERS_MAX] = { 128, 512 },
	[BX_A_TUNABLES_OP_TIMEOUT_MAX_MS] = { 600000, 120000 },
	[BX_A_TUNABLES_USER_WND_PCT]	= { 25, 75 },
	[BX_A_TUNABLES_QPS_PER_PEER]	= { 2, 4 },
};

/* A tunable's value from sysfs (flow_control: Y/N as 1/0), or -1. */
static long param_read(int attr)
{
	char path[128], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", tun_param[attr]);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	if (buf[0] == 'Y')
		return 1;
	if (buf[0] == 'N')
		return 0;
	return buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
}

static int param_write(int attr, long v)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), PARAMS "%s", tun_param[attr]);
	f = fopen(path, "w");
	if (!f)
		return -1;
	if (attr == BX_A_TUNABLES_FLOW_CONTROL)
		ret = fprintf(f, "%c\n", v ? 'Y' : 'N');
	else
		ret = fprintf(f, "%ld\n", v);
	return fclose(f) || ret < 0 ? -1 : 0;
}

static void params_snap(long v[NTUN + 1])
{
	for (int a = 1; a <= NTUN; a++)
		v[a] = param_read(a);
}

static bool params_equal(const long a[NTUN + 1], const long b[NTUN + 1])
{
	for (int i = 1; i <= NTUN; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static struct ynl_sock *open_family(void)
{
	struct ynl_error err;

	return ynl_sock_create(&ynl_bx_family, &err);
}

/* -errno of the last failed request on @ys. */
static int ys_err(struct ynl_sock *ys)
{
	return ys->err.code ? -(int)ys->err.code : -EIO;
}

/*
 * The type of the attribute of @ys's last request (still in its buffer)
 * that starts at offset @off from its nlmsghdr (an extended ACK's
 * NLMSGERR_ATTR_OFFS, ys->err.attr_offs), or -1.
 */
static int attr_at(struct ynl_sock *ys, unsigned int off)
{
	const struct nlmsghdr *nlh = ys->nlh;
	const struct nlattr *a;

	ynl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if ((size_t)((const char *)a - (const char *)nlh) == off)
			return (int)ynl_attr_type(a);
	return -1;
}

/* ---- requests built by hand ----------------------------------------------- */

/*
 * A request of @cmd, its attributes put with ynl-priv.h's helpers (or
 * put_raw()), sent by req_do(): for requests no generated function would
 * build (wrong sizes and types, unknown attributes, bad lengths).
 */
static struct nlmsghdr *req_start(struct ynl_sock *ys, uint8_t cmd)
{
	ys->req_policy = NULL;
	return ynl_gemsg_start_req(ys, ys->family_id, cmd, BX_FAMILY_VERSION);
}

/* Bytes as they are, no alignment (bad attributes). */
static void put_raw(struct nlmsghdr *nlh, const void *data, size_t len)
{
	memcpy(ynl_nlmsg_end_addr(nlh), data, len);
	nlh->nlmsg_len += len;
}

/* The ACK's error (0, or -errno); a reply would be an error too. */
static int req_do(struct ynl_sock *ys, struct nlmsghdr *nlh)
{
	struct ynl_req_state yrs = { .yarg = { .ys = ys, }, };

	return ynl_exec(ys, nlh, &yrs) < 0 ? ys_err(ys) : 0;
}

/* ---- tunables through the generated struct --------------------------------- */

#define TUN_MEMBERS(X)							\
	X(WND_KB, wnd_kb) X(WND_OPS, wnd_ops) X(HOST_WND_KB, host_wnd_kb) \
	X(HOST_WND_OPS, host_wnd_ops) X(RX_WND_KB, rx_wnd_kb)		\
	X(RD_MAX, rd_max) X(CREDIT_BATCH, credit_batch)			\
	X(RDV_THRESHOLD, rdv_threshold) X(DRR_QUANTUM, drr_quantum)	\
	X(FLOW_CONTROL, flow_control) X(PIECE_KB, piece_kb)		\
	X(CONNECT_TIMEOUT_MS, connect_timeout_ms) X(ACK_TIMEOUT, ack_timeout) \
	X(RECOVER_MS, recover_ms) X(RD_DEPTH, rd_depth) X(REFUSE_MS, refuse_ms) \
	X(PEER_LINGER_MS, peer_linger_ms) X(USER_OPS_MAX, user_ops_max) \
	X(USER_PEERS_MAX, user_peers_max)				\
	X(USER_SERVICES_MAX, user_services_max) X(OP_TIMEOUT_MS, op_timeout_ms) \
	X(REGION_CAP_MB, region_cap_mb) X(PROOF_MS, proof_ms)		\
	X(SECRET_OVERLAP_MS, secret_overlap_ms)				\
	X(REMOTE_PEERS_MAX, remote_peers_max)				\
	X(OP_TIMEOUT_MAX_MS, op_timeout_max_ms) X(USER_WND_PCT, user_wnd_pct) \
	X(QPS_PER_PEER, qps_per_peer)

/* Every tunable of the spec is in the list: a new one must be added. */
#define TUN_ONE(A, m) + 1
_Static_assert(0 TUN_MEMBERS(TUN_ONE) == NTUN,
	       "TUN_MEMBERS lists every tunable of bx.yaml");
#undef TUN_ONE

/* Tunable @a := @v in @req (flow-control takes its low 8 bits). */
static void tun_req_set(struct bx_tunables_set_req *req, int a, unsigned long v)
{
	switch (a) {
#define TUN_SET(A, m)							\
	case BX_A_TUNABLES_##A:						\
		bx_tunables_set_req_set_##m(req, v);			\
		break;
	TUN_MEMBERS(TUN_SET)
#undef TUN_SET
	}
}

/* Tunable @a of a tunables-get reply, or -1 if absent. */
static long tun_rsp_get(const struct bx_tunables_get_rsp *rsp, int a)
{
	switch (a) {
#define TUN_GET(A, m)							\
	case BX_A_TUNABLES_##A:						\
		return rsp->_present.m ? (long)rsp->m : -1;
	TUN_MEMBERS(TUN_GET)
#undef TUN_GET
	}
	return -1;
}

/* tunables-set of the values @v[a] for which @use[a]; 0 or -errno. */
static int tun_set(struct ynl_sock *ys, const long v[NTUN + 1],
		   const bool use[NTUN + 1])
{
	struct bx_tunables_set_req *req = bx_tunables_set_req_alloc();
	int ret;

	if (!req)
		return -ENOMEM;
	for (int a = 1; a <= NTUN; a++)
		if (use[a])
			tun_req_set(req, a, (unsigned long)v[a]);
	ret = bx_tunables_set(ys, req) ? ys_err(ys) : 0;
	bx_tunables_set_req_free(req);
	return ret;
}

static int tun_set1(struct ynl_sock *ys, int a, long v)
{
	long vals[NTUN + 1] = { 0 };
	bool use[NTUN + 1] = { false };

	vals[a] = v;
	use[a] = true;
	return tun_set(ys, vals, use);
}

/* ---- admission through the generated structs -------------------------------- */

static int allow_set(struct ynl_sock *ys, struct bx_net *nets, unsigned int n)
{
	struct bx_allow_set_req *req = bx_allow_set_req_alloc();
	int ret;

	if (!req)
		return -ENOMEM;
	__bx_allow_set_req_set_net(req, nets, n);
	ret = bx_allow_set(ys, req) ? ys_err(ys) : 0;
	bx_allow_set_req_free(req);
	return ret;
}

/* A secret of @len bytes of @key, or none (@key NULL): clears it. */
static int secret_set(struct ynl_sock *ys, const void *key, size_t len)
{
	struct bx_secret_set_req *req = bx_secret_set_req_alloc();
	int ret;

	if (!req)
		return -ENOMEM;
	if (key)
		bx_secret_set_req_set_secret(req, key, len);
	ret = bx_secret_set(ys, req) ? ys_err(ys) : 0;
	bx_secret_set_req_free(req);
	return ret;
}

/*
 * Network @s/@plen (IPv4 /N as 96 + N) as @n: an address of @alen bytes
 * (0: none), a prefix length unless @plen < 0.
 */
static void make_net(struct bx_net *n, const char *s, int plen, size_t alen)
{
	struct in6_addr a = {};

	if (inet_pton(AF_INET, s, &a.s6_addr[12]) == 1)
		a.s6_addr[10] = a.s6_addr[11] = 0xff;
	else
		inet_pton(AF_INET6, s, &a);
	memset(n, 0, sizeof(*n));
	if (alen) {
		n->addr = malloc(alen);
		memcpy(n->addr, &a, alen);
		n->_present.addr_len = alen;
	}
	if (plen >= 0) {
		n->_present.prefix_len = 1;
		n->prefix_len = (uint8_t)plen;
	}
}

/* allow-set of the @n networks @s[]/@plen[] (each IPv4 /N as 96 + N). */
static int allow_nets(struct ynl_sock *ys, const char *const *s,
		      const int *plen, unsigned int n)
{
	struct bx_net *nets = n ? calloc(n, sizeof(*nets)) : NULL;

	for (unsigned int i = 0; i < n; i++)
		make_net(&nets[i], s[i], plen[i], 16);
	return allow_set(ys, nets, n);
}

/* ---- the fixture --------------------------------------------------------- */

FIXTURE(nl) {
	struct ynl_sock	*ys;
	long		saved[NTUN + 1];
	bool		root;
	bool		made_dev;	/* dev_events: rxe_nlt on nlt0 */
};

FIXTURE_SETUP(nl)
{
	self->ys = NULL;
	if (access("/sys/module/bx", F_OK))
		SKIP(return, "bx not loaded");
	self->ys = open_family();
	ASSERT_NE(NULL, self->ys) TH_LOG("resolving family bx");
	self->root = geteuid() == 0;
	params_snap(self->saved);
}

FIXTURE_TEARDOWN(nl)
{
	long now[NTUN + 1];

	if (!self->ys)
		return;
	if (self->root) {
		/* No secret, no allow-list: as every test found them. */
		secret_set(self->ys, NULL, 0);
		allow_set(self->ys, NULL, 0);
	}
	ynl_sock_destroy(self->ys);
	if (!self->root)
		return;
	/* Either may be gone already. */
	if (self->made_dev)
		sh("rdma link delete rxe_nlt 2>/dev/null; ip link del nlt0 2>/dev/null");
	/* Whatever a test did, the tunables are as they were. */
	params_snap(now);
	for (int a = 1; a <= NTUN; a++)
		if (now[a] != self->saved[a] && self->saved[a] >= 0)
			param_write(a, self->saved[a]);
}

TEST_F(nl, family_resolves)
{
	bool events = false;

	EXPECT_NE(0, self->ys->family_id);
	EXPECT_GE(self->ys->family_id, GENL_MIN_ID);
	for (unsigned int i = 0; i < self->ys->n_mcast_groups; i++)
		if (!strcmp(self->ys->mcast_groups[i].name, BX_MCGRP_EVENTS))
			events = self->ys->mcast_groups[i].id != 0;
	EXPECT_TRUE(events);
}

/*
 * The dumps and gets below need no check of each message's command or
 * of each integer's size: the library fails the request for a reply of
 * another command or an attribute of the wrong size.
 */
TEST_F(nl, dev_dump)
{
	struct bx_dev_get_rsp_list *l;
	bool rxe0 = false;
	int n = 0;

	l = bx_dev_get_dump(self->ys);
	ASSERT_NE(NULL, l) TH_LOG("%s", self->ys->err.msg);
	ynl_dump_foreach(l, o) {
		n++;
		ASSERT_TRUE(!!o->_present.name_len);
		ASSERT_TRUE(!!o->_present.port);
		EXPECT_LE(1, o->port);
		if (!strcmp(o->name, "rxe0")) {
			rxe0 = true;
			EXPECT_EQ(1, o->port);
			ASSERT_TRUE(!!o->_present.netdev_len);
			EXPECT_STREQ("eth0", o->netdev);
		}
	}
	EXPECT_LE(1, n);
	EXPECT_TRUE(rxe0);
	/* As many as debugfs lists (one line per bound device). */
	if (count_lines("/sys/kernel/debug/bx/devices") >= 0)
		EXPECT_EQ(count_lines("/sys/kernel/debug/bx/devices"), n);
	bx_dev_get_rsp_list_free(l);
}

/* Every attribute a connection always has (dev-name: when it has a device). */
#define CONN_ALWAYS(X)							\
	X(peer_id) X(state) X(qpn) X(err) X(peer_epoch) X(awaiting)	\
	X(peer_restarts) X(tx_msgs) X(rx_msgs) X(credits) X(credits_max) \
	X(grant) X(credit_stalls) X(credit_updates) X(wnd_bytes_inflight) \
	X(wnd_ops_inflight) X(wnd_peak_bytes) X(wnd_waits)		\
	X(rd_bytes_inflight) X(rd_reads_inflight) X(rd_peak_bytes)	\
	X(busy_retries) X(rnr) X(parked) X(recoveries) X(recovered_ops)	\
	X(recover_failed) X(dup_pushes) X(wnd_small_inflight)		\
	X(small_passes) X(peer_violations) X(peer_refused)		\
	X(peer_refusing_ms)

/*
 * A dump's messages as they came, for what the generated parser does
 * not check: the flags' length (the library lets a flag carry bytes).
 */
struct flags_obj {
	struct ynl_dump_list_type	*next;
	int				bad;
};

static int flags_cb(const struct nlmsghdr *nlh, struct ynl_parse_arg *yarg)
{
	int *bad = yarg->data;
	const struct nlattr *a;

	ynl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if ((ynl_attr_type(a) == BX_A_CONN_ACTIVE ||
		     ynl_attr_type(a) == BX_A_CONN_AUTH) &&
		    ynl_attr_data_len(a))
			++*bad;
	return YNL_PARSE_CB_OK;
}

/* Flags with a payload in a conn dump, or -errno. */
static int conn_flags_bad(struct ynl_sock *ys)
{
	struct ynl_dump_state yds = {};
	struct ynl_dump_list_type *o, *next;
	struct nlmsghdr *nlh;
	int bad = 0;

	yds.yarg.ys = ys;
	yds.yarg.rsp_policy = NULL;
	yds.alloc_sz = sizeof(struct ynl_dump_list_type) + 8;
	yds.cb = flags_cb;
	yds.rsp_cmd = BX_CMD_CONN_GET;
	nlh = ynl_gemsg_start_dump(ys, ys->family_id, BX_CMD_CONN_GET,
				   BX_FAMILY_VERSION);
	if (ynl_exec_dump(ys, nlh, &yds) < 0)
		bad = ys_err(ys);
	for (o = yds.first; (void *)o != YNL_LIST_END; o = next) {
		next = o->next;
		if (bad >= 0)
			bad += *(int *)o->data;
		free(o);
	}
	return bad;
}

TEST_F(nl, conn_dump)
{
	struct bx_conn_get_list *l;
	int n = 0;

	l = bx_conn_get_dump(self->ys);
	ASSERT_NE(NULL, l) TH_LOG("%s", self->ys->err.msg);
	ynl_dump_foreach(l, o) {
#define CONN_PRESENT(m)							\
		EXPECT_TRUE(!!o->_present.m) TH_LOG("conn %d: no %s", n, #m);
		CONN_ALWAYS(CONN_PRESENT)
#undef CONN_PRESENT
		EXPECT_EQ(16, o->_present.peer_addr_len);
		EXPECT_LE(1, o->peer_id);
		EXPECT_GE(BX_CONN_STATE_DOWN, o->state);
		n++;
	}
	if (count_lines("/sys/kernel/debug/bx/conns") >= 0)
		EXPECT_EQ(count_lines("/sys/kernel/debug/bx/conns"), n);
	bx_conn_get_list_free(l);
	/* The flags (active, auth) carry nothing. */
	EXPECT_EQ(0, conn_flags_bad(self->ys));
}

/* Own processes' files in a proc dump, or -1 if one lacks an attribute. */
static int proc_mine(struct ynl_sock *ys, int *total, bool *infl0)
{
	struct bx_proc_get_rsp_list *l = bx_proc_get_dump(ys);
	int mine = 0;

	*infl0 = true;
	if (!l)
		return ys_err(ys);
	*total = 0;
	ynl_dump_foreach(l, o) {
		++*total;
		if (!o->_present.pid || !o->_present.bytes_tx ||
		    !o->_present.bytes_rx || !o->_present.inflight ||
		    !o->_present.region_bytes) {
			mine = -1000000;
			continue;
		}
		if (o->pid == (uint32_t)getpid()) {
			mine++;
			/* No operation in flight, no region set up. */
			if (o->inflight || o->region_bytes)
				*infl0 = false;
		}
	}
	bx_proc_get_rsp_list_free(l);
	return mine;
}

/* Our own open files show up, each with every attribute. */
TEST_F(nl, proc_dump)
{
	int fd1, fd2, total;
	bool zero;

	fd1 = open("/dev/bx", O_RDWR | O_CLOEXEC);
	fd2 = open("/dev/bx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd1);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(2, proc_mine(self->ys, &total, &zero));
	EXPECT_TRUE(zero);
	close(fd1);
	close(fd2);
	EXPECT_EQ(0, proc_mine(self->ys, &total, &zero));
}

/* ---- single messages of a dump, with libmnl -------------------------------- */

/*
 * A dump of @cmd on its own libmnl socket, which reads into a buffer of
 * @bufsz bytes (the kernel sizes a dump's messages by the largest
 * buffer recvmsg() was given): the first part is filled when the
 * request is sent, the next at each mnl_dump_next().
 */
struct mnl_dump {
	struct mnl_socket	*nl;
	uint32_t		portid, seq;
	uint16_t		family;
	char			*buf;
	size_t			bufsz;
};

static int mnl_dump_start(struct mnl_dump *d, uint16_t family, uint8_t cmd,
			  size_t bufsz)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct genlmsghdr *g;
	struct nlmsghdr *nlh;

	memset(d, 0, sizeof(*d));
	d->family = family;
	d->bufsz = bufsz;
	d->buf = malloc(bufsz);
	d->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!d->buf || !d->nl || mnl_socket_bind(d->nl, 0, MNL_SOCKET_AUTOPID))
		return -1;
	d->portid = mnl_socket_get_portid(d->nl);
	d->seq = (uint32_t)time(NULL);
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = d->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = BX_FAMILY_VERSION;
	return mnl_socket_sendto(d->nl, nlh, nlh->nlmsg_len) < 0 ? -1 : 0;
}

/* The next datagram of the dump: its length, or <= 0. */
static ssize_t mnl_dump_next(struct mnl_dump *d)
{
	return mnl_socket_recvfrom(d->nl, d->buf, d->bufsz);
}

static void mnl_dump_end(struct mnl_dump *d)
{
	if (d->nl)
		mnl_socket_close(d->nl);
	free(d->buf);
}

/* Is @nlh an answer to the dump (our port, our sequence number)? */
static bool mnl_dump_ours(const struct mnl_dump *d, const struct nlmsghdr *nlh)
{
	return nlh->nlmsg_seq == d->seq && nlh->nlmsg_pid == d->portid;
}

/* The pid of a proc-get message, or 0. */
static uint32_t mnl_proc_pid(const struct nlmsghdr *nlh)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == BX_A_PROC_PID &&
		    mnl_attr_get_payload_len(a) == sizeof(uint32_t))
			return mnl_attr_get_u32(a);
	return 0;
}

/*
 * More objects than fit in one message: the dump goes on where the last
 * part ended, with every object exactly once. A small receive buffer
 * keeps the kernel's dump messages at one page.
 */
TEST_F(nl, dump_resumes)
{
	enum { NFD = 200 };
	int fds[NFD], mine = 0, objs = 0, parts = 0;
	struct mnl_dump d;
	struct rlimit rl;
	bool done = false;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < NFD + 32) {
		rl.rlim_cur = rl.rlim_max < NFD + 32 ? rl.rlim_max : NFD + 32;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (int i = 0; i < NFD; i++) {
		fds[i] = open("/dev/bx", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]) TH_LOG("open %d: %s", i, strerror(errno));
	}
	/* A fresh socket that only ever reads 4 KiB. */
	ASSERT_EQ(0, mnl_dump_start(&d, self->ys->family_id, BX_CMD_PROC_GET,
				    4096));
	while (!done) {
		ssize_t n = mnl_dump_next(&d);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)d.buf;
		int len = (int)n;
		bool any = false;

		ASSERT_LT(0, n);
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			if (!mnl_dump_ours(&d, nlh))
				continue;
			any = true;
			ASSERT_NE(NLMSG_ERROR, nlh->nlmsg_type);
			if (nlh->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			ASSERT_EQ(d.family, nlh->nlmsg_type);
			objs++;
			mine += mnl_proc_pid(nlh) == (uint32_t)getpid();
		}
		ASSERT_TRUE(done || len == 0) TH_LOG("trailing bytes");
		parts += any;
	}
	EXPECT_EQ(NFD, mine);
	EXPECT_LE(2, parts);
	TH_LOG("%d objects in %d messages", objs, parts);
	mnl_dump_end(&d);
	for (int i = 0; i < NFD; i++)
		close(fds[i]);
}

/*
 * Objects going away in the middle of a dump: either the dump is marked
 * NLM_F_DUMP_INTR (the caller starts over) or every object that existed
 * all along is in it. 100 files of this process come first, then one
 * file each of 50 children (told apart by pid); the 100 files are closed
 * once the dump's first message is filled.
 */
TEST_F(nl, proc_dump_consistent)
{
	enum { NOWN = 100, NCHILD = 50 };
	int fds[NOWN], ready[2], hold[2], seen[NCHILD] = { 0 };
	pid_t kids[NCHILD];
	struct mnl_dump d;
	bool intr = false, done = false;
	int missing = 0, twice = 0, parts = 0;

	for (int i = 0; i < NOWN; i++) {
		fds[i] = open("/dev/bx", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]);
	}
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(hold));
	for (int i = 0; i < NCHILD; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (kids[i] == 0) {
			char c = 1;
			int fd;

			close(hold[1]);
			for (int j = 0; j < NOWN; j++)
				close(fds[j]);
			fd = open("/dev/bx", O_RDWR);
			if (fd < 0 || write(ready[1], &c, 1) != 1)
				_exit(1);
			while (read(hold[0], &c, 1) > 0)
				;
			_exit(0);
		}
	}
	close(hold[0]);
	for (int i = 0; i < NCHILD; i++) {
		char c;

		ASSERT_EQ(1, read(ready[0], &c, 1));
	}

	ASSERT_EQ(0, mnl_dump_start(&d, self->ys->family_id, BX_CMD_PROC_GET,
				    4096));
	/*
	 * The first message was filled in sendmsg(); every recvmsg() fills
	 * the next. So the 100 files go after the first message and before
	 * all the others.
	 */
	for (int i = 0; i < NOWN; i++)
		close(fds[i]);
	while (!done) {
		ssize_t n = mnl_dump_next(&d);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)d.buf;
		int len = (int)n;

		ASSERT_LT(0, n);
		parts++;
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			uint32_t pid;

			if (!mnl_dump_ours(&d, nlh))
				continue;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = true;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			ASSERT_EQ(d.family, nlh->nlmsg_type);
			pid = mnl_proc_pid(nlh);
			ASSERT_NE(0, pid);
			for (int i = 0; i < NCHILD; i++)
				if ((pid_t)pid == kids[i])
					seen[i]++;
		}
		ASSERT_TRUE(done || len == 0) TH_LOG("trailing bytes");
	}
	for (int i = 0; i < NCHILD; i++) {
		missing += !seen[i];
		twice += seen[i] > 1;
	}
	close(hold[1]);
	for (int i = 0; i < NCHILD; i++)
		waitpid(kids[i], NULL, 0);
	mnl_dump_end(&d);
	TH_LOG("%d messages, NLM_F_DUMP_INTR %s, %d of %d steady objects missing, %d twice",
	       parts, intr ? "set" : "not set", missing, NCHILD, twice);
	EXPECT_TRUE(intr || (!missing && !twice))
		TH_LOG("objects skipped without NLM_F_DUMP_INTR: the proc dump has no generation count (cb->seq)");
}

TEST_F(nl, stats_get)
{
	struct bx_stats_get_rsp *r = bx_stats_get(self->ys);

	ASSERT_NE(NULL, r) TH_LOG("%s", self->ys->err.msg);
	EXPECT_TRUE(!!r->_present.conns);
	EXPECT_TRUE(!!r->_present.ops_inflight && r->_present.mrs_inuse &&
		    r->_present.region_bytes && r->_present.copied_bytes &&
		    r->_present.tx_bytes_inflight && r->_present.tx_peak_bytes &&
		    r->_present.rx_bytes_inflight && r->_present.rx_peak_bytes &&
		    r->_present.busy_retries && r->_present.rnr_events &&
		    r->_present.dup_pushes && r->_present.recovered_ops &&
		    r->_present.recover_failed);
	EXPECT_TRUE(!!r->_present.tx_small_inflight);
	EXPECT_TRUE(!!r->_present.small_passes);
	EXPECT_TRUE(!!r->_present.peers);
	EXPECT_TRUE(!!r->_present.pieces);
	bx_stats_get_rsp_free(r);
}

TEST_F(nl, tunables_get)
{
	struct bx_tunables_get_rsp *r = bx_tunables_get(self->ys);

	ASSERT_NE(NULL, r) TH_LOG("%s", self->ys->err.msg);
	for (int a = 1; a <= NTUN; a++) {
		long v = tun_rsp_get(r, a);

		ASSERT_LE(0, v) TH_LOG("%s", tun_param[a]);
		EXPECT_EQ(param_read(a), v) TH_LOG("%s", tun_param[a]);
	}
	bx_tunables_get_rsp_free(r);
}

/* Put @v as tunable @a at its proper size (a request built by hand). */
static void put_tun(struct nlmsghdr *nlh, int a, unsigned long v)
{
	if (a == BX_A_TUNABLES_FLOW_CONTROL)
		ynl_attr_put_u8(nlh, a, (uint8_t)v);
	else
		ynl_attr_put_u32(nlh, a, (uint32_t)v);
}

/* Every tunable changed in one message, then back in another. */
TEST_F(nl, set_valid)
{
	long want[NTUN + 1], now[NTUN + 1];
	bool all[NTUN + 1];

	if (!self->root)
		SKIP(return, "needs root");
	for (int a = 1; a <= NTUN; a++) {
		want[a] = self->saved[a] == (long)tun_alt[a][0] ?
			  (long)tun_alt[a][1] : (long)tun_alt[a][0];
		all[a] = true;
	}
	ASSERT_EQ(0, tun_set(self->ys, want, all)) TH_LOG("%s", self->ys->err.ext.msg);
	params_snap(now);
	for (int a = 1; a <= NTUN; a++) {
		EXPECT_EQ(want[a], now[a]) TH_LOG("%s", tun_param[a]);
	}

	/* One alone, and then all back. */
	ASSERT_EQ(0, tun_set1(self->ys, BX_A_TUNABLES_WND_KB, 2048));
	EXPECT_EQ(2048, param_read(BX_A_TUNABLES_WND_KB));
	EXPECT_EQ(want[BX_A_TUNABLES_WND_OPS], param_read(BX_A_TUNABLES_WND_OPS));

	ASSERT_EQ(0, tun_set(self->ys, self->saved, all));
	params_snap(now);
	EXPECT_TRUE(params_equal(self->saved, now));
}

struct bad_case {
	const char	*what;
	int		attr;		/* the attribute at fault */
	unsigned long	v;		/* out of range value */
	unsigned long	min, max;
};

/* Out of range: refused by the policy, with a message and the range. */
TEST_F(nl, set_out_of_range)
{
	static const struct bad_case cases[] = {
		{ "wnd-kb 1", BX_A_TUNABLES_WND_KB, 1, 64, 1048576 },
		{ "wnd-kb max+1", BX_A_TUNABLES_WND_KB, 1048577, 64, 1048576 },
		{ "wnd-ops 0", BX_A_TUNABLES_WND_OPS, 0, 1, 4096 },
		{ "wnd-ops 4097", BX_A_TUNABLES_WND_OPS, 4097, 1, 4096 },
		{ "host-wnd-kb 63", BX_A_TUNABLES_HOST_WND_KB, 63, 64, 4194304 },
		{ "host-wnd-ops 65537", BX_A_TUNABLES_HOST_WND_OPS, 65537, 1, 65536 },
		{ "rx-wnd-kb 0", BX_A_TUNABLES_RX_WND_KB, 0, 64, 4194304 },
		{ "rd-max 17", BX_A_TUNABLES_RD_MAX, 17, 1, 16 },
		{ "credit-batch 0", BX_A_TUNABLES_CREDIT_BATCH, 0, 1, 64 },
		{ "rdv-threshold 4097", BX_A_TUNABLES_RDV_THRESHOLD, 4097, 0, 4096 },
		{ "drr-quantum 511", BX_A_TUNABLES_DRR_QUANTUM, 511, 512, 16777216 },
		{ "drr-quantum u32 max", BX_A_TUNABLES_DRR_QUANTUM, 0xffffffffUL, 512, 16777216 },
		{ "flow-control 2", BX_A_TUNABLES_FLOW_CONTROL, 2, 0, 1 },
		{ "piece-kb 16385", BX_A_TUNABLES_PIECE_KB, 16385, 0, 16384 },
		{ "connect-timeout-ms 999", BX_A_TUNABLES_CONNECT_TIMEOUT_MS, 999, 1000, 120000 },
		{ "ack-timeout 7", BX_A_TUNABLES_ACK_TIMEOUT, 7, 8, 24 },
		{ "ack-timeout 25", BX_A_TUNABLES_ACK_TIMEOUT, 25, 8, 24 },
		{ "recover-ms 600001", BX_A_TUNABLES_RECOVER_MS, 600001, 0, 600000 },
		{ "rd-depth 0", BX_A_TUNABLES_RD_DEPTH, 0, 1, 16 },
		{ "refuse-ms 600001", BX_A_TUNABLES_REFUSE_MS, 600001, 0, 600000 },
		{ "peer-linger-ms 3600001", BX_A_TUNABLES_PEER_LINGER_MS, 3600001, 0, 3600000 },
		{ "user-ops-max 15", BX_A_TUNABLES_USER_OPS_MAX, 15, 16, 1048576 },
		{ "user-peers-max 0", BX_A_TUNABLES_USER_PEERS_MAX, 0, 1, 1024 },
		{ "user-services-max 65537", BX_A_TUNABLES_USER_SERVICES_MAX, 65537, 1, 65536 },
		{ "op-timeout-ms 3600001", BX_A_TUNABLES_OP_TIMEOUT_MS, 3600001, 0, 3600000 },
		{ "region-cap-mb 16777217", BX_A_TUNABLES_REGION_CAP_MB, 16777217, 0, 16777216 },
	};
	long now[NTUN + 1], v[NTUN + 1] = { 0 };
	bool use[NTUN + 1];
	struct ynl_sock *ys = self->ys;

	if (!self->root)
		SKIP(return, "needs root");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		int other = c->attr == BX_A_TUNABLES_WND_OPS ?
			    BX_A_TUNABLES_RD_MAX : BX_A_TUNABLES_WND_OPS;
		int ret;

		/* A valid value too: all or nothing. */
		memset(use, 0, sizeof(use));
		use[other] = use[c->attr] = true;
		v[other] = self->saved[other] == (long)tun_alt[other][0] ?
			   (long)tun_alt[other][1] : (long)tun_alt[other][0];
		v[c->attr] = (long)c->v;
		ret = tun_set(ys, v, use);
		EXPECT_TRUE(ret == -ERANGE || ret == -EINVAL)
			TH_LOG("%s: %d", c->what, ret);
		EXPECT_NE(0, ys->err.ext.msg[0]) TH_LOG("%s: no message", c->what);
		EXPECT_TRUE(strstr(ys->err.ext.msg, "range") != NULL)
			TH_LOG("%s: \"%s\"", c->what, ys->err.ext.msg);
		ASSERT_NE(0, ys->err.attr_offs) TH_LOG("%s", c->what);
		EXPECT_EQ(c->attr, attr_at(ys, ys->err.attr_offs))
			TH_LOG("%s", c->what);
		if (ys->err.ext.has_range) {
			EXPECT_EQ(c->min, ys->err.ext.min) TH_LOG("%s", c->what);
			EXPECT_EQ(c->max, ys->err.ext.max) TH_LOG("%s", c->what);
		}
		params_snap(now);
		EXPECT_TRUE(params_equal(self->saved, now)) TH_LOG("%s", c->what);
	}
}

/* A malformed attribute after a valid one: refused, nothing changed. */
static void expect_refused(struct __test_metadata *_metadata,
			   struct ynl_sock *ys, struct nlmsghdr *nlh,
			   const long saved[NTUN + 1], const char *what, int err)
{
	long now[NTUN + 1];
	int ret = req_do(ys, nlh);

	EXPECT_EQ(err, ret) TH_LOG("%s: %d (%s)", what, ret, ys->err.ext.msg);
	EXPECT_NE(0, ys->err.ext.msg[0]) TH_LOG("%s: no extack message", what);
	params_snap(now);
	EXPECT_TRUE(params_equal(saved, now)) TH_LOG("%s: changed", what);
}

static struct nlmsghdr *begin_set(struct ynl_sock *ys, const long saved[])
{
	int a = BX_A_TUNABLES_WND_OPS;
	struct nlmsghdr *nlh = req_start(ys, BX_CMD_TUNABLES_SET);

	put_tun(nlh, a, saved[a] == (long)tun_alt[a][0] ? tun_alt[a][1] : tun_alt[a][0]);
	return nlh;
}

TEST_F(nl, set_wrong_length)
{
	struct ynl_sock *ys = self->ys;
	struct nlmsghdr *m;

	if (!self->root)
		SKIP(return, "needs root");
	m = begin_set(ys, self->saved);
	ynl_attr_put_u8(m, BX_A_TUNABLES_WND_KB, 128);
	expect_refused(_metadata, ys, m, self->saved, "u8 for a u32", -EINVAL);

	m = begin_set(ys, self->saved);
	ynl_attr_put_u16(m, BX_A_TUNABLES_WND_KB, 128);
	expect_refused(_metadata, ys, m, self->saved, "u16 for a u32", -EINVAL);

	m = begin_set(ys, self->saved);
	ynl_attr_put_u64(m, BX_A_TUNABLES_WND_KB, 128);
	expect_refused(_metadata, ys, m, self->saved, "u64 for a u32", -EINVAL);

	m = begin_set(ys, self->saved);
	ynl_attr_put(m, BX_A_TUNABLES_DRR_QUANTUM, NULL, 0);
	expect_refused(_metadata, ys, m, self->saved, "empty for a u32", -EINVAL);

	m = begin_set(ys, self->saved);
	ynl_attr_put_u32(m, BX_A_TUNABLES_FLOW_CONTROL, 0);
	expect_refused(_metadata, ys, m, self->saved, "u32 for a u8", -EINVAL);

	m = begin_set(ys, self->saved);
	ynl_attr_put_str(m, BX_A_TUNABLES_RD_MAX, "4");
	expect_refused(_metadata, ys, m, self->saved, "string for a u32", -EINVAL);

	/* A u32 marked as nested. */
	m = begin_set(ys, self->saved);
	ynl_attr_put_u32(m, BX_A_TUNABLES_RD_MAX | NLA_F_NESTED, 1);
	expect_refused(_metadata, ys, m, self->saved, "NLA_F_NESTED", -EINVAL);
}

TEST_F(nl, set_truncated)
{
	/* nla_len 8 (a u32) but only 2 payload bytes follow. */
	const unsigned char short_payload[6] = { 8, 0, BX_A_TUNABLES_WND_KB, 0, 0, 2 };
	/* nla_len below the header. */
	const unsigned char tiny[4] = { 2, 0, BX_A_TUNABLES_WND_KB, 0 };
	/* Half a header at the end. */
	const unsigned char half[2] = { 8, 0 };
	/* nla_len far beyond the message. */
	const unsigned char huge[8] = { 0xff, 0xff, BX_A_TUNABLES_WND_KB, 0, 0, 2, 0, 0 };
	struct ynl_sock *ys = self->ys;
	struct nlmsghdr *m;

	if (!self->root)
		SKIP(return, "needs root");
	m = begin_set(ys, self->saved);
	put_raw(m, short_payload, sizeof(short_payload));
	expect_refused(_metadata, ys, m, self->saved, "short payload", -EINVAL);

	m = begin_set(ys, self->saved);
	put_raw(m, tiny, sizeof(tiny));
	expect_refused(_metadata, ys, m, self->saved, "nla_len 2", -EINVAL);

	m = begin_set(ys, self->saved);
	put_raw(m, half, sizeof(half));
	expect_refused(_metadata, ys, m, self->saved, "half a header", -EINVAL);

	m = begin_set(ys, self->saved);
	put_raw(m, huge, sizeof(huge));
	expect_refused(_metadata, ys, m, self->saved, "nla_len 65535", -EINVAL);
}

TEST_F(nl, set_unknown_attr)
{
	struct ynl_sock *ys = self->ys;
	struct nlmsghdr *m;

	if (!self->root)
		SKIP(return, "needs root");
	m = begin_set(ys, self->saved);
	ynl_attr_put_u32(m, BX_A_TUNABLES_MAX + 1, 1);
	expect_refused(_metadata, ys, m, self->saved, "type max+1", -EINVAL);
	EXPECT_NE(0, ys->err.attr_offs);
	EXPECT_EQ(BX_A_TUNABLES_MAX + 1, attr_at(ys, ys->err.attr_offs));

	m = begin_set(ys, self->saved);
	ynl_attr_put_u32(m, 1000, 1);
	expect_refused(_metadata, ys, m, self->saved, "type 1000", -EINVAL);

	m = begin_set(ys, self->saved);
	ynl_attr_put_u32(m, 0, 1);
	expect_refused(_metadata, ys, m, self->saved, "type 0", -EINVAL);
}

TEST_F(nl, set_nothing)
{
	long now[NTUN + 1];
	bool none[NTUN + 1] = { false };

	if (!self->root)
		SKIP(return, "needs root");
	EXPECT_EQ(-EINVAL, tun_set(self->ys, self->saved, none));
	EXPECT_STREQ("no tunable given", self->ys->err.ext.msg);
	params_snap(now);
	EXPECT_TRUE(params_equal(self->saved, now));
}

/* conn-get's do of peer @id (or none, if @id is 0 and not @put0). */
static int conn_get(struct ynl_sock *ys, uint32_t id, bool put0,
		    uint32_t *got)
{
	struct bx_conn_get_req *req = bx_conn_get_req_alloc();
	struct bx_conn_get_rsp *rsp;

	if (!req)
		return -ENOMEM;
	if (id || put0)
		bx_conn_get_req_set_peer_id(req, id);
	rsp = bx_conn_get(ys, req);
	bx_conn_get_req_free(req);
	if (!rsp)
		return ys_err(ys);
	if (got)
		*got = rsp->_present.peer_id ? rsp->peer_id : 0;
	bx_conn_get_rsp_free(rsp);
	return 0;
}

TEST_F(nl, conn_get_bad_peer)
{
	struct ynl_sock *ys = self->ys;
	struct nlmsghdr *m;
	int ret;

	/* Nonexistent. */
	EXPECT_EQ(-ENOENT, conn_get(ys, 0x7ffffff0, false, NULL));
	EXPECT_NE(0, ys->err.ext.msg[0]);
	EXPECT_NE(0, ys->err.attr_offs);
	EXPECT_EQ(BX_A_CONN_PEER_ID, attr_at(ys, ys->err.attr_offs));

	/* 0: below the policy's minimum. */
	ret = conn_get(ys, 0, true, NULL);
	EXPECT_TRUE(ret == -ERANGE || ret == -EINVAL) TH_LOG("%d", ret);
	EXPECT_NE(0, ys->err.ext.msg[0]);
	EXPECT_NE(0, ys->err.attr_offs);
	EXPECT_EQ(BX_A_CONN_PEER_ID, attr_at(ys, ys->err.attr_offs));

	/* None: the missing attribute is named. */
	EXPECT_EQ(-EINVAL, conn_get(ys, 0, false, NULL));
	EXPECT_TRUE(ys->err.ext.has_miss);
	EXPECT_EQ(BX_A_CONN_PEER_ID, ys->err.ext.miss_type);

	/* Wrong size. */
	m = req_start(ys, BX_CMD_CONN_GET);
	ynl_attr_put_u64(m, BX_A_CONN_PEER_ID, 1);
	EXPECT_EQ(-EINVAL, req_do(ys, m));
}

/* Each existing connection can be fetched alone, as the dump shows it. */
TEST_F(nl, conn_get_each)
{
	struct bx_conn_get_list *l = bx_conn_get_dump(self->ys);
	int n = 0;

	ASSERT_NE(NULL, l) TH_LOG("%s", self->ys->err.msg);
	ynl_dump_foreach(l, o) {
		uint32_t id2 = 0;
		int ret;

		ASSERT_TRUE(!!o->_present.peer_id);
		n++;
		ret = conn_get(self->ys, o->peer_id, true, &id2);
		if (ret == -ENOENT)	/* went away meanwhile */
			continue;
		ASSERT_EQ(0, ret);
		EXPECT_EQ(o->peer_id, id2);
	}
	if (!n)
		TH_LOG("no connections to fetch");
	bx_conn_get_list_free(l);
}

/* Objects of a dump of @cmd, or -errno. */
static int dump_n(struct ynl_sock *ys, uint8_t cmd)
{
	int n = 0;

	if (cmd == BX_CMD_DEV_GET) {
		struct bx_dev_get_rsp_list *l = bx_dev_get_dump(ys);

		if (!l)
			return ys_err(ys);
		ynl_dump_foreach(l, o)
			n++;
		bx_dev_get_rsp_list_free(l);
	} else if (cmd == BX_CMD_CONN_GET) {
		struct bx_conn_get_list *l = bx_conn_get_dump(ys);

		if (!l)
			return ys_err(ys);
		ynl_dump_foreach(l, o)
			n++;
		bx_conn_get_list_free(l);
	} else {
		struct bx_proc_get_rsp_list *l = bx_proc_get_dump(ys);

		if (!l)
			return ys_err(ys);
		ynl_dump_foreach(l, o)
			n++;
		bx_proc_get_rsp_list_free(l);
	}
	return n;
}

/*
 * Without CAP_NET_ADMIN: every read works, tunables-set is refused with
 * EPERM -- on a new socket and on one root opened.
 */
TEST_F(nl, unprivileged)
{
	long now[NTUN + 1];
	pid_t pid;
	int status;

	if (!self->root)
		SKIP(return, "needs root to drop privileges");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* No harness macros here: they would run the teardown. */
		struct bx_tunables_get_rsp *tun;
		struct bx_stats_get_rsp *stats;
		struct ynl_sock *mine;
		int code = 0;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
		    geteuid() != 65534)
			_exit(100);
		mine = open_family();
		if (!mine)
			_exit(101);
		if (dump_n(mine, BX_CMD_DEV_GET) < 1)
			code |= 1;
		if (dump_n(mine, BX_CMD_CONN_GET) < 0)
			code |= 2;
		if (dump_n(mine, BX_CMD_PROC_GET) < 0)
			code |= 4;
		stats = bx_stats_get(mine);
		if (!stats)
			code |= 8;
		else
			bx_stats_get_rsp_free(stats);
		tun = bx_tunables_get(mine);
		if (!tun)
			code |= 16;
		else
			bx_tunables_get_rsp_free(tun);
		if (tun_set1(mine, BX_A_TUNABLES_WND_KB, 512) != -EPERM)
			code |= 32;
		/* The socket root opened: the caller's capability counts. */
		if (tun_set1(self->ys, BX_A_TUNABLES_WND_KB, 512) != -EPERM)
			code |= 64;
		ynl_sock_destroy(mine);
		_exit(code);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("failed as nobody: %#x (1 dev, 2 conn, 4 proc dump, 8 stats, 16 tunables, 32/64 set not EPERM; 100+ setup)",
		       WEXITSTATUS(status));
	params_snap(now);
	EXPECT_TRUE(params_equal(self->saved, now));
}

/* ---- admission ------------------------------------------------------------ */

/* admit-get: the allow-list's networks, secret-on and the counters. */
struct admit {
	int		nets;
	struct in6_addr	addr[4];
	uint8_t		plen[4];
	uint8_t		secret_on;
	bool		counters;
	bool		bad;
};

static int admit_get(struct ynl_sock *ys, struct admit *ad)
{
	struct bx_admit_get_rsp *r = bx_admit_get(ys);

	memset(ad, 0, sizeof(*ad));
	if (!r)
		return ys_err(ys);
	ad->counters = r->_present.refused && r->_present.auth_failures &&
		       r->_present.violations;
	if (!r->_present.secret_on)
		ad->bad = true;
	ad->secret_on = r->secret_on;
	for (unsigned int i = 0; i < r->n_net; i++) {
		const struct bx_net *n = &r->net[i];

		if (ad->nets >= 4 || n->_present.addr_len != 16 ||
		    !n->_present.prefix_len) {
			ad->bad = true;
			continue;
		}
		memcpy(&ad->addr[ad->nets], n->addr, 16);
		ad->plen[ad->nets++] = n->prefix_len;
	}
	bx_admit_get_rsp_free(r);
	return 0;
}

/* allow-set and secret-set take effect, read back through admit-get. */
TEST_F(nl, admit_set_get)
{
	static const char *const nets[] = { "10.1.0.0", "fd00::" };
	static const int plens[] = { 96 + 16, 8 };
	struct ynl_sock *ys = self->ys;
	unsigned char key[32];
	struct admit ad;

	if (!self->root)
		SKIP(return, "needs root");
	ASSERT_EQ(0, admit_get(ys, &ad));
	EXPECT_FALSE(ad.bad);
	EXPECT_TRUE(ad.counters);
	EXPECT_EQ(0, ad.nets);
	EXPECT_EQ(0, ad.secret_on);

	ASSERT_EQ(0, allow_nets(ys, nets, plens, 2)) TH_LOG("%s", ys->err.ext.msg);
	memset(key, 0x5a, sizeof(key));
	ASSERT_EQ(0, secret_set(ys, key, sizeof(key))) TH_LOG("%s", ys->err.ext.msg);
	ASSERT_EQ(0, admit_get(ys, &ad));
	EXPECT_FALSE(ad.bad);
	ASSERT_EQ(2, ad.nets);
	EXPECT_EQ(112, ad.plen[0]);
	EXPECT_EQ(10, ad.addr[0].s6_addr[12]);
	EXPECT_EQ(1, ad.addr[0].s6_addr[13]);
	EXPECT_EQ(8, ad.plen[1]);
	EXPECT_EQ(0xfd, ad.addr[1].s6_addr[0]);
	EXPECT_EQ(1, ad.secret_on);
	EXPECT_EQ(0, sh("grep -qx '10.1.0.0/16,fd00::/8' " PARAMS "allow"));

	/* Empty requests clear both. */
	ASSERT_EQ(0, allow_set(ys, NULL, 0));
	ASSERT_EQ(0, secret_set(ys, NULL, 0));
	ASSERT_EQ(0, admit_get(ys, &ad));
	EXPECT_EQ(0, ad.nets);
	EXPECT_EQ(0, ad.secret_on);
}

/* Bad networks and secrets: refused with a message, nothing changed. */
TEST_F(nl, admit_bad)
{
	struct ynl_sock *ys = self->ys;
	unsigned char key[65];
	struct admit ad;
	struct bx_net *n;
	int ret;

	if (!self->root)
		SKIP(return, "needs root");
	memset(key, 1, sizeof(key));
	/* Host bits past the prefix. */
	n = calloc(1, sizeof(*n));
	make_net(n, "10.1.2.3", 96 + 16, 16);
	EXPECT_EQ(-EINVAL, allow_set(ys, n, 1));
	EXPECT_NE(0, ys->err.ext.msg[0]);
	/* A prefix longer than 128 bits, the policy says. */
	n = calloc(1, sizeof(*n));
	make_net(n, "fd00::", 129, 16);
	ret = allow_set(ys, n, 1);
	EXPECT_TRUE(ret == -ERANGE || ret == -EINVAL) TH_LOG("%d", ret);
	/* A network without its prefix length. */
	n = calloc(1, sizeof(*n));
	make_net(n, "::", -1, 16);
	EXPECT_EQ(-EINVAL, allow_set(ys, n, 1));
	/* An address of 4 bytes. */
	n = calloc(1, sizeof(*n));
	make_net(n, "::", 0, 4);
	ret = allow_set(ys, n, 1);
	EXPECT_TRUE(ret == -ERANGE || ret == -EINVAL) TH_LOG("%d", ret);
	/* 65 networks: one too many. */
	n = calloc(65, sizeof(*n));
	for (int i = 0; i < 65; i++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "10.%d.0.0", i);
		make_net(&n[i], buf, 96 + 16, 16);
	}
	EXPECT_EQ(-E2BIG, allow_set(ys, n, 65));
	/* A secret is exactly 32 bytes: 15, 31, 33 and 65 are refused. */
	{
		static const int lens[] = { 15, 31, 33, 65 };

		for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			ret = secret_set(ys, key, lens[i]);
			EXPECT_EQ(-ERANGE, ret) TH_LOG("%d bytes", lens[i]);
			EXPECT_NE(0, ys->err.ext.msg[0]);
		}
	}
	ASSERT_EQ(0, admit_get(ys, &ad));
	EXPECT_EQ(0, ad.nets);
	EXPECT_EQ(0, ad.secret_on);
}

/* Without CAP_NET_ADMIN: admit-get works, allow-set and secret-set do not. */
TEST_F(nl, admit_unprivileged)
{
	pid_t pid;
	int status;

	if (!self->root)
		SKIP(return, "needs root to drop privileges");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		static const char *const net[] = { "10.0.0.0" };
		static const int plen[] = { 104 };
		unsigned char key[32] = { 1 };
		struct ynl_sock *mine;
		struct admit ad;
		int code = 0;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		mine = open_family();
		if (!mine)
			_exit(100);
		if (admit_get(mine, &ad) || ad.bad)
			code |= 1;
		if (allow_nets(mine, net, plen, 1) != -EPERM)
			code |= 2;
		if (secret_set(mine, key, sizeof(key)) != -EPERM)
			code |= 4;
		ynl_sock_destroy(mine);
		_exit(code);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("failed as nobody: %#x (1 get, 2 allow-set, 4 secret-set not EPERM)",
		       WEXITSTATUS(status));
}

/*
 * Without CAP_NET_ADMIN a process sees its own user's /dev/bx files only
 * (no other user's pids or byte counts), and cannot join "events".
 */
TEST_F(nl, others_hidden)
{
	int rootfd, status;
	pid_t pid;

	if (!self->root)
		SKIP(return, "needs root to drop privileges");
	rootfd = open("/dev/bx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, rootfd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct bx_proc_get_rsp_list *l;
		struct ynl_sock *mine;
		int code = 0, fd, n = 0, own = 0;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		mine = open_family();
		if (!mine)
			_exit(100);
		fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(101);
		l = bx_proc_get_dump(mine);
		if (!l) {
			code |= 1;
		} else {
			/* Exactly its own file. */
			ynl_dump_foreach(l, o) {
				n++;
				if (!o->_present.pid || o->pid != (uint32_t)getpid())
					code |= 2;
				else if (own++)
					code |= 2;
			}
			bx_proc_get_rsp_list_free(l);
		}
		if (n != 1)
			code |= 4;
		if (!ynl_subscribe(mine, BX_MCGRP_EVENTS) ||
		    mine->err.code != EPERM)
			code |= 8;
		close(fd);
		ynl_sock_destroy(mine);
		_exit(code);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(rootfd);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("as nobody: %#x (1 dump, 2 saw another's file, 4 not exactly its own, 8 joined events; 100+ setup)",
		       WEXITSTATUS(status));
}

/* ---- events -------------------------------------------------------------- */

struct ev {
	uint8_t		cmd;
	char		name[64];
	char		netdev[64];
	uint32_t	port;
	bool		ok;
};

/*
 * The next device event within @ms, or false. Connection events of other
 * tests running on the peer guest at the same time are skipped.
 */
static bool next_event(struct ynl_sock *ys, struct ev *e, int ms)
{
	struct pollfd p = { .fd = ynl_socket_get_fd(ys), .events = POLLIN };

	for (int i = 0; i < 64; i++) {
		struct ynl_ntf_base_type *ntf;

		while ((ntf = ynl_ntf_dequeue(ys))) {
			/* Both events have the dump's attributes. */
			const struct bx_dev_add_ntf_rsp *o =
				&((struct bx_dev_add_ntf *)ntf)->obj;
			bool dev = ntf->cmd == BX_CMD_DEV_ADD_NTF ||
				   ntf->cmd == BX_CMD_DEV_DEL_NTF;

			_Static_assert(sizeof(struct bx_dev_add_ntf_rsp) ==
				       sizeof(struct bx_dev_del_ntf_rsp),
				       "dev-add and dev-del differ");
			if (dev) {
				memset(e, 0, sizeof(*e));
				e->cmd = ntf->cmd;
				e->ok = o->_present.port;
				e->port = o->port;
				snprintf(e->name, sizeof(e->name), "%s",
					 o->_present.name_len ? o->name : "");
				snprintf(e->netdev, sizeof(e->netdev), "%s",
					 o->_present.netdev_len ? o->netdev : "");
			}
			ynl_ntf_free(ntf);
			if (dev)
				return true;
		}
		if (poll(&p, 1, ms) != 1 || ynl_ntf_check(ys) < 0)
			return false;
	}
	return false;
}

/* A device added and deleted: dev-add and dev-del, with the dump's attributes. */
TEST_F(nl, dev_events)
{
	struct ev e;

	if (!self->root)
		SKIP(return, "needs root");
	if (sh("command -v rdma >/dev/null && command -v ip >/dev/null"))
		SKIP(return, "no rdma/ip");
	ASSERT_EQ(0, ynl_subscribe(self->ys, BX_MCGRP_EVENTS));
	sh("ip link del nlt0 2>/dev/null");
	self->made_dev = true;
	ASSERT_EQ(0, sh("ip link add nlt0 type veth peer name nlt1 && ip link set nlt0 up"));
	ASSERT_EQ(0, sh("rdma link add rxe_nlt type rxe netdev nlt0"));
	ASSERT_TRUE(next_event(self->ys, &e, 10000)) TH_LOG("no dev-add");
	EXPECT_EQ(BX_CMD_DEV_ADD_NTF, e.cmd);
	EXPECT_TRUE(e.ok);
	EXPECT_STREQ("rxe_nlt", e.name);
	EXPECT_STREQ("nlt0", e.netdev);
	EXPECT_EQ(1, e.port);

	EXPECT_EQ(0, sh("rdma link delete rxe_nlt"));
	sh("ip link del nlt0");
	ASSERT_TRUE(next_event(self->ys, &e, 10000)) TH_LOG("no dev-del");
	EXPECT_EQ(BX_CMD_DEV_DEL_NTF, e.cmd);
	EXPECT_TRUE(e.ok);
	EXPECT_STREQ("rxe_nlt", e.name);
	EXPECT_EQ(1, e.port);
}

TEST_HARNESS_MAIN
