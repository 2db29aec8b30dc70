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
 * Runs as root in a rig guest with bx loaded and rxe0 on eth0. Uses
 * bxctl's netlink client (tools/bxctl/bxnl.h).
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
#include <unistd.h>
#include <linux/bx_netlink.h>

#include "bxnl.h"
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

static int open_family(struct bxnl *nl)
{
	int ret = bxnl_open(nl);

	return ret ? ret : bxnl_resolve(nl, BX_FAMILY_NAME, BX_MCGRP_EVENTS);
}

/* ---- collecting replies -------------------------------------------------- */

#define MAXOBJ	1024
#define AMAX	64

struct obj {
	const struct nlattr	*tb[AMAX + 1];
	unsigned char		*copy;		/* the message, owned */
};

struct objs {
	int		n;
	int		bad;		/* malformed messages */
	uint8_t		cmd;		/* expected genl cmd */
	int		wrong_cmd;
	struct obj	o[MAXOBJ];
};

static int objs_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct objs *s = arg;
	struct obj *o;

	if (s->n == MAXOBJ)
		return -E2BIG;
	o = &s->o[s->n];
	o->copy = malloc(nlh->nlmsg_len);
	if (!o->copy)
		return -ENOMEM;
	memcpy(o->copy, nlh, nlh->nlmsg_len);
	if (bxnl_parse_genl((struct nlmsghdr *)o->copy, o->tb, AMAX)) {
		s->bad++;
		free(o->copy);
		return 0;
	}
	if (bxnl_genl_cmd(nlh) != s->cmd)
		s->wrong_cmd++;
	s->n++;
	return 0;
}

static void objs_free(struct objs *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->o[i].copy);
	s->n = 0;
}

static int dump(struct bxnl *nl, uint8_t cmd, struct objs *s)
{
	struct bxnl_msg m;

	memset(s, 0, sizeof(*s));
	s->cmd = cmd;
	bxnl_msg_init(&m, nl->family, cmd, BX_FAMILY_VERSION);
	return bxnl_dump(nl, &m, objs_cb, s);
}

static int get(struct bxnl *nl, uint8_t cmd, struct objs *s)
{
	struct bxnl_msg m;

	memset(s, 0, sizeof(*s));
	s->cmd = cmd;
	bxnl_msg_init(&m, nl->family, cmd, BX_FAMILY_VERSION);
	return bxnl_do(nl, &m, objs_cb, s);
}

/* Attribute sizes: 0 = flag, -1 = string, -2 = 16-byte address. */
static bool attr_ok(const struct nlattr *a, int size)
{
	if (!a)
		return false;
	if (size == -1)
		return bxnl_get_str(a) != NULL;
	if (size == -2)
		return bxnl_len(a) == 16;
	return bxnl_len(a) == (size_t)size;
}

static const int conn_size[BX_A_CONN_MAX + 1] = {
	[BX_A_CONN_PEER_ID] = 4, [BX_A_CONN_PEER_ADDR] = -2,
	[BX_A_CONN_STATE] = 4, [BX_A_CONN_DEV_NAME] = -1,
	[BX_A_CONN_QPN] = 4, [BX_A_CONN_ERR] = 4, [BX_A_CONN_PEER_EPOCH] = 8,
	[BX_A_CONN_AWAITING] = 4, [BX_A_CONN_PEER_RESTARTS] = 4,
	[BX_A_CONN_TX_MSGS] = 8,
	[BX_A_CONN_RX_MSGS] = 8, [BX_A_CONN_CREDITS] = 4,
	[BX_A_CONN_CREDITS_MAX] = 4, [BX_A_CONN_GRANT] = 4,
	[BX_A_CONN_CREDIT_STALLS] = 8, [BX_A_CONN_CREDIT_UPDATES] = 8,
	[BX_A_CONN_WND_BYTES_INFLIGHT] = 8, [BX_A_CONN_WND_OPS_INFLIGHT] = 4,
	[BX_A_CONN_WND_PEAK_BYTES] = 8, [BX_A_CONN_WND_WAITS] = 8,
	[BX_A_CONN_RD_BYTES_INFLIGHT] = 8, [BX_A_CONN_RD_READS_INFLIGHT] = 4,
	[BX_A_CONN_RD_PEAK_BYTES] = 8, [BX_A_CONN_BUSY_RETRIES] = 8,
	[BX_A_CONN_RNR] = 8, [BX_A_CONN_PARKED] = 4,
	[BX_A_CONN_RECOVERIES] = 4, [BX_A_CONN_RECOVERED_OPS] = 8,
	[BX_A_CONN_RECOVER_FAILED] = 8, [BX_A_CONN_DUP_PUSHES] = 8,
	[BX_A_CONN_WND_SMALL_INFLIGHT] = 4, [BX_A_CONN_SMALL_PASSES] = 8,
	[BX_A_CONN_PEER_VIOLATIONS] = 4, [BX_A_CONN_PEER_REFUSED] = 4,
	[BX_A_CONN_PEER_REFUSING_MS] = 4,
};

/* ---- the fixture --------------------------------------------------------- */

FIXTURE(nl) {
	struct bxnl	nl;
	long		saved[NTUN + 1];
	bool		root;
	bool		made_dev;	/* dev_events: rxe_nlt on nlt0 */
};

FIXTURE_SETUP(nl)
{
	int ret;

	self->nl.fd = -1;
	if (access("/sys/module/bx", F_OK))
		SKIP(return, "bx not loaded");
	ret = open_family(&self->nl);
	ASSERT_EQ(0, ret) TH_LOG("resolving family bx: %s", strerror(-ret));
	self->root = geteuid() == 0;
	params_snap(self->saved);
}

FIXTURE_TEARDOWN(nl)
{
	long now[NTUN + 1];

	if (self->root) {
		/* No secret, no allow-list: as every test found them. */
		struct bxnl_msg m;

		bxnl_msg_init(&m, self->nl.family, BX_CMD_SECRET_SET,
			      BX_FAMILY_VERSION);
		bxnl_do(&self->nl, &m, NULL, NULL);
		bxnl_msg_init(&m, self->nl.family, BX_CMD_ALLOW_SET,
			      BX_FAMILY_VERSION);
		bxnl_do(&self->nl, &m, NULL, NULL);
	}
	bxnl_close(&self->nl);
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
	EXPECT_NE(0, self->nl.family);
	EXPECT_NE(0, self->nl.mcgrp);
	EXPECT_GE(self->nl.family, GENL_MIN_ID);
}

TEST_F(nl, dev_dump)
{
	bool rxe0 = false;
	struct objs *s = calloc(1, sizeof(*s));
	uint32_t port;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, dump(&self->nl, BX_CMD_DEV_GET, s));
	EXPECT_EQ(0, s->bad);
	EXPECT_EQ(0, s->wrong_cmd);
	EXPECT_LE(1, s->n);
	for (int i = 0; i < s->n; i++) {
		const char *name = bxnl_get_str(s->o[i].tb[BX_A_DEV_NAME]);

		ASSERT_NE(NULL, name);
		ASSERT_TRUE(bxnl_get_u32(s->o[i].tb[BX_A_DEV_PORT], &port));
		EXPECT_LE(1, port);
		if (!strcmp(name, "rxe0")) {
			rxe0 = true;
			EXPECT_EQ(1, port);
			ASSERT_NE(NULL, bxnl_get_str(s->o[i].tb[BX_A_DEV_NETDEV]));
			EXPECT_STREQ("eth0", bxnl_get_str(s->o[i].tb[BX_A_DEV_NETDEV]));
		}
	}
	EXPECT_TRUE(rxe0);
	/* As many as debugfs lists (one line per bound device). */
	if (count_lines("/sys/kernel/debug/bx/devices") >= 0)
		EXPECT_EQ(count_lines("/sys/kernel/debug/bx/devices"), s->n);
	objs_free(s);
	free(s);
}

TEST_F(nl, conn_dump)
{
	struct objs *s = calloc(1, sizeof(*s));

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, dump(&self->nl, BX_CMD_CONN_GET, s));
	EXPECT_EQ(0, s->bad);
	EXPECT_EQ(0, s->wrong_cmd);
	for (int i = 0; i < s->n; i++) {
		uint32_t id, st;

		for (int a = 1; a <= BX_A_CONN_MAX; a++) {
			if (!conn_size[a] || a == BX_A_CONN_DEV_NAME)
				continue;
			EXPECT_TRUE(attr_ok(s->o[i].tb[a], conn_size[a]))
				TH_LOG("conn %d: attribute %d", i, a);
		}
		ASSERT_TRUE(bxnl_get_u32(s->o[i].tb[BX_A_CONN_PEER_ID], &id));
		EXPECT_LE(1, id);
		ASSERT_TRUE(bxnl_get_u32(s->o[i].tb[BX_A_CONN_STATE], &st));
		EXPECT_GE(BX_CONN_STATE_DOWN, st);
		if (s->o[i].tb[BX_A_CONN_ACTIVE])
			EXPECT_EQ(0, bxnl_len(s->o[i].tb[BX_A_CONN_ACTIVE]));
	}
	if (count_lines("/sys/kernel/debug/bx/conns") >= 0)
		EXPECT_EQ(count_lines("/sys/kernel/debug/bx/conns"), s->n);
	objs_free(s);
	free(s);
}

/* Our own open files show up, each with every attribute. */
TEST_F(nl, proc_dump)
{
	struct objs *s = calloc(1, sizeof(*s));
	int fd1, fd2, mine = 0;

	ASSERT_NE(NULL, s);
	fd1 = open("/dev/bx", O_RDWR | O_CLOEXEC);
	fd2 = open("/dev/bx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd1);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, dump(&self->nl, BX_CMD_PROC_GET, s));
	EXPECT_EQ(0, s->bad);
	EXPECT_EQ(0, s->wrong_cmd);
	for (int i = 0; i < s->n; i++) {
		uint32_t pid, infl = 1;
		uint64_t v = 1;

		ASSERT_TRUE(bxnl_get_u32(s->o[i].tb[BX_A_PROC_PID], &pid));
		EXPECT_TRUE(bxnl_get_u64(s->o[i].tb[BX_A_PROC_BYTES_TX], &v));
		EXPECT_TRUE(bxnl_get_u64(s->o[i].tb[BX_A_PROC_BYTES_RX], &v));
		EXPECT_TRUE(bxnl_get_u32(s->o[i].tb[BX_A_PROC_INFLIGHT], &infl));
		EXPECT_TRUE(bxnl_get_u64(s->o[i].tb[BX_A_PROC_REGION_BYTES], &v));
		if (pid == (uint32_t)getpid()) {
			mine++;
			EXPECT_EQ(0, infl);
			EXPECT_EQ(0, v);	/* no region set up */
		}
	}
	EXPECT_EQ(2, mine);
	close(fd1);
	close(fd2);
	objs_free(s);
	s->n = 0;
	ASSERT_EQ(0, dump(&self->nl, BX_CMD_PROC_GET, s));
	for (int i = 0; i < s->n; i++) {
		uint32_t pid = 0;

		bxnl_get_u32(s->o[i].tb[BX_A_PROC_PID], &pid);
		EXPECT_NE((uint32_t)getpid(), pid);
	}
	objs_free(s);
	free(s);
}

/*
 * More objects than fit in one message: the dump goes on where the last
 * part ended, with every object exactly once. A small receive buffer
 * keeps the kernel's dump messages at one page.
 */
TEST_F(nl, dump_resumes)
{
	enum { NFD = 200 };
	struct objs *s = calloc(1, sizeof(*s));
	struct bxnl small;
	struct rlimit rl;
	int fds[NFD], mine = 0;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < NFD + 32) {
		rl.rlim_cur = rl.rlim_max < NFD + 32 ? rl.rlim_max : NFD + 32;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (int i = 0; i < NFD; i++) {
		fds[i] = open("/dev/bx", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]) TH_LOG("open %d: %s", i, strerror(errno));
	}
	/*
	 * The kernel sizes dump messages by the largest buffer recvmsg()
	 * ever got on the socket: a fresh one that only ever reads 4 KiB.
	 */
	ASSERT_EQ(0, bxnl_open(&small));
	free(small.buf);
	small.bufsz = 4096;
	small.buf = malloc(small.bufsz);
	ASSERT_NE(NULL, small.buf);
	ASSERT_EQ(0, bxnl_resolve(&small, BX_FAMILY_NAME, NULL));
	ASSERT_EQ(0, dump(&small, BX_CMD_PROC_GET, s));
	EXPECT_EQ(0, s->bad);
	for (int i = 0; i < s->n; i++) {
		uint32_t pid = 0;

		EXPECT_TRUE(bxnl_get_u32(s->o[i].tb[BX_A_PROC_PID], &pid));
		mine += pid == (uint32_t)getpid();
	}
	EXPECT_EQ(NFD, mine);
	EXPECT_LE(2, small.dump_parts);
	TH_LOG("%d objects in %u messages", s->n, small.dump_parts);
	bxnl_close(&small);
	for (int i = 0; i < NFD; i++)
		close(fds[i]);
	objs_free(s);
	free(s);
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
	struct bxnl small;
	struct bxnl_msg m;
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

	ASSERT_EQ(0, bxnl_open(&small));
	free(small.buf);
	small.bufsz = 4096;
	small.buf = malloc(small.bufsz);
	ASSERT_NE(NULL, small.buf);
	ASSERT_EQ(0, bxnl_resolve(&small, BX_FAMILY_NAME, NULL));
	bxnl_msg_init(&m, small.family, BX_CMD_PROC_GET, BX_FAMILY_VERSION);
	ASSERT_EQ(0, bxnl_send(&small, &m, NLM_F_REQUEST | NLM_F_DUMP));
	/*
	 * The first message was filled in sendmsg(); every recvmsg() fills
	 * the next. So the 100 files go after the first message and before
	 * all the others.
	 */
	for (int i = 0; i < NOWN; i++)
		close(fds[i]);
	while (!done) {
		const struct nlmsghdr *nlh;
		size_t at = 0;
		ssize_t n = bxnl_recv(&small);
		bool bad;

		ASSERT_LT(0, n);
		parts++;
		while ((nlh = bxnl_next(&small, &at, (size_t)n, &bad))) {
			const struct nlattr *tb[BX_A_PROC_MAX + 1];
			uint32_t pid;

			if (!bxnl_ours(&small, nlh))
				continue;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = true;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			ASSERT_EQ(small.family, nlh->nlmsg_type);
			ASSERT_EQ(0, bxnl_parse_genl(nlh, tb, BX_A_PROC_MAX));
			ASSERT_TRUE(bxnl_get_u32(tb[BX_A_PROC_PID], &pid));
			for (int i = 0; i < NCHILD; i++)
				if ((pid_t)pid == kids[i])
					seen[i]++;
		}
		ASSERT_FALSE(bad);
	}
	for (int i = 0; i < NCHILD; i++) {
		missing += !seen[i];
		twice += seen[i] > 1;
	}
	close(hold[1]);
	for (int i = 0; i < NCHILD; i++)
		waitpid(kids[i], NULL, 0);
	bxnl_close(&small);
	TH_LOG("%d messages, NLM_F_DUMP_INTR %s, %d of %d steady objects missing, %d twice",
	       parts, intr ? "set" : "not set", missing, NCHILD, twice);
	EXPECT_TRUE(intr || (!missing && !twice))
		TH_LOG("objects skipped without NLM_F_DUMP_INTR: the proc dump has no generation count (cb->seq)");
}

TEST_F(nl, stats_get)
{
	struct objs *s = calloc(1, sizeof(*s));
	uint32_t conns;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, get(&self->nl, BX_CMD_STATS_GET, s));
	ASSERT_EQ(1, s->n);
	EXPECT_EQ(0, s->wrong_cmd);
	EXPECT_TRUE(bxnl_get_u32(s->o[0].tb[BX_A_STATS_CONNS], &conns));
	for (int a = BX_A_STATS_OPS_INFLIGHT; a <= BX_A_STATS_RECOVER_FAILED; a++) {
		EXPECT_TRUE(attr_ok(s->o[0].tb[a], 8)) TH_LOG("stats attribute %d", a);
	}
	EXPECT_TRUE(attr_ok(s->o[0].tb[BX_A_STATS_TX_SMALL_INFLIGHT], 4));
	EXPECT_TRUE(attr_ok(s->o[0].tb[BX_A_STATS_SMALL_PASSES], 8));
	EXPECT_TRUE(attr_ok(s->o[0].tb[BX_A_STATS_PEERS], 4));
	EXPECT_TRUE(attr_ok(s->o[0].tb[BX_A_STATS_PIECES], 8));
	objs_free(s);
	free(s);
}

TEST_F(nl, tunables_get)
{
	struct objs *s = calloc(1, sizeof(*s));

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, get(&self->nl, BX_CMD_TUNABLES_GET, s));
	ASSERT_EQ(1, s->n);
	EXPECT_EQ(0, s->wrong_cmd);
	for (int a = 1; a <= NTUN; a++) {
		const struct nlattr *at = s->o[0].tb[a];
		long v = -1;
		uint32_t u32;
		uint8_t u8;

		if (a == BX_A_TUNABLES_FLOW_CONTROL) {
			ASSERT_TRUE(bxnl_get_u8(at, &u8)) TH_LOG("%s", tun_param[a]);
			v = u8;
		} else {
			ASSERT_TRUE(bxnl_get_u32(at, &u32)) TH_LOG("%s", tun_param[a]);
			v = u32;
		}
		EXPECT_EQ(param_read(a), v) TH_LOG("%s", tun_param[a]);
	}
	objs_free(s);
	free(s);
}

/* Put @v as tunable @a at its proper size. */
static void put_tun(struct bxnl_msg *m, int a, unsigned long v)
{
	if (a == BX_A_TUNABLES_FLOW_CONTROL)
		bxnl_put_u8(m, a, (uint8_t)v);
	else
		bxnl_put_u32(m, a, (uint32_t)v);
}

/* Every tunable changed in one message, then back in another. */
TEST_F(nl, set_valid)
{
	long want[NTUN + 1], now[NTUN + 1];
	struct bxnl_msg m;

	if (!self->root)
		SKIP(return, "needs root");
	bxnl_msg_init(&m, self->nl.family, BX_CMD_TUNABLES_SET, BX_FAMILY_VERSION);
	for (int a = 1; a <= NTUN; a++) {
		want[a] = self->saved[a] == (long)tun_alt[a][0] ?
			  (long)tun_alt[a][1] : (long)tun_alt[a][0];
		put_tun(&m, a, (unsigned long)want[a]);
	}
	ASSERT_EQ(0, bxnl_do(&self->nl, &m, NULL, NULL)) TH_LOG("%s", self->nl.ext.msg);
	params_snap(now);
	for (int a = 1; a <= NTUN; a++) {
		EXPECT_EQ(want[a], now[a]) TH_LOG("%s", tun_param[a]);
	}

	/* One alone, and then all back. */
	bxnl_msg_init(&m, self->nl.family, BX_CMD_TUNABLES_SET, BX_FAMILY_VERSION);
	put_tun(&m, BX_A_TUNABLES_WND_KB, 2048);
	ASSERT_EQ(0, bxnl_do(&self->nl, &m, NULL, NULL));
	EXPECT_EQ(2048, param_read(BX_A_TUNABLES_WND_KB));
	EXPECT_EQ(want[BX_A_TUNABLES_WND_OPS], param_read(BX_A_TUNABLES_WND_OPS));

	bxnl_msg_init(&m, self->nl.family, BX_CMD_TUNABLES_SET, BX_FAMILY_VERSION);
	for (int a = 1; a <= NTUN; a++)
		put_tun(&m, a, (unsigned long)self->saved[a]);
	ASSERT_EQ(0, bxnl_do(&self->nl, &m, NULL, NULL));
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
	long now[NTUN + 1];
	struct bxnl_msg m;

	if (!self->root)
		SKIP(return, "needs root");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		int other = c->attr == BX_A_TUNABLES_WND_OPS ?
			    BX_A_TUNABLES_RD_MAX : BX_A_TUNABLES_WND_OPS;
		int ret;

		/* A valid value first: all or nothing. */
		bxnl_msg_init(&m, self->nl.family, BX_CMD_TUNABLES_SET,
			      BX_FAMILY_VERSION);
		put_tun(&m, other, self->saved[other] == (long)tun_alt[other][0] ?
			tun_alt[other][1] : tun_alt[other][0]);
		put_tun(&m, c->attr, c->v);
		ret = bxnl_do(&self->nl, &m, NULL, NULL);
		EXPECT_TRUE(ret == -ERANGE || ret == -EINVAL)
			TH_LOG("%s: %d", c->what, ret);
		EXPECT_NE(0, self->nl.ext.msg[0]) TH_LOG("%s: no message", c->what);
		EXPECT_TRUE(strstr(self->nl.ext.msg, "range") != NULL)
			TH_LOG("%s: \"%s\"", c->what, self->nl.ext.msg);
		ASSERT_TRUE(self->nl.ext.has_off) TH_LOG("%s", c->what);
		EXPECT_EQ(c->attr, bxnl_attr_at(&m, self->nl.ext.off))
			TH_LOG("%s", c->what);
		if (self->nl.ext.has_range) {
			EXPECT_EQ(c->min, self->nl.ext.min) TH_LOG("%s", c->what);
			EXPECT_EQ(c->max, self->nl.ext.max) TH_LOG("%s", c->what);
		}
		params_snap(now);
		EXPECT_TRUE(params_equal(self->saved, now)) TH_LOG("%s", c->what);
	}
}

/* A malformed attribute after a valid one: refused, nothing changed. */
static void expect_refused(struct __test_metadata *_metadata, struct bxnl *nl,
			   struct bxnl_msg *m, const long saved[NTUN + 1],
			   const char *what, int err)
{
	long now[NTUN + 1];
	int ret = bxnl_do(nl, m, NULL, NULL);

	EXPECT_EQ(err, ret) TH_LOG("%s: %d (%s)", what, ret, nl->ext.msg);
	EXPECT_NE(0, nl->ext.msg[0]) TH_LOG("%s: no extack message", what);
	params_snap(now);
	EXPECT_TRUE(params_equal(saved, now)) TH_LOG("%s: changed", what);
}

static void begin_set(struct bxnl_msg *m, struct bxnl *nl, const long saved[])
{
	int a = BX_A_TUNABLES_WND_OPS;

	bxnl_msg_init(m, nl->family, BX_CMD_TUNABLES_SET, BX_FAMILY_VERSION);
	put_tun(m, a, saved[a] == (long)tun_alt[a][0] ? tun_alt[a][1] : tun_alt[a][0]);
}

TEST_F(nl, set_wrong_length)
{
	struct bxnl_msg m;

	if (!self->root)
		SKIP(return, "needs root");
	begin_set(&m, &self->nl, self->saved);
	bxnl_put_u8(&m, BX_A_TUNABLES_WND_KB, 128);
	expect_refused(_metadata, &self->nl, &m, self->saved, "u8 for a u32", -EINVAL);

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_u16(&m, BX_A_TUNABLES_WND_KB, 128);
	expect_refused(_metadata, &self->nl, &m, self->saved, "u16 for a u32", -EINVAL);

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_u64(&m, BX_A_TUNABLES_WND_KB, 128);
	expect_refused(_metadata, &self->nl, &m, self->saved, "u64 for a u32", -EINVAL);

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_flag(&m, BX_A_TUNABLES_DRR_QUANTUM);
	expect_refused(_metadata, &self->nl, &m, self->saved, "empty for a u32", -EINVAL);

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_u32(&m, BX_A_TUNABLES_FLOW_CONTROL, 0);
	expect_refused(_metadata, &self->nl, &m, self->saved, "u32 for a u8", -EINVAL);

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_str(&m, BX_A_TUNABLES_RD_MAX, "4");
	expect_refused(_metadata, &self->nl, &m, self->saved, "string for a u32", -EINVAL);

	/* A u32 marked as nested. */
	begin_set(&m, &self->nl, self->saved);
	bxnl_put_u32(&m, BX_A_TUNABLES_RD_MAX | NLA_F_NESTED, 1);
	expect_refused(_metadata, &self->nl, &m, self->saved, "NLA_F_NESTED", -EINVAL);
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
	struct bxnl_msg m;

	if (!self->root)
		SKIP(return, "needs root");
	begin_set(&m, &self->nl, self->saved);
	bxnl_put_raw(&m, short_payload, sizeof(short_payload));
	expect_refused(_metadata, &self->nl, &m, self->saved, "short payload", -EINVAL);

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_raw(&m, tiny, sizeof(tiny));
	expect_refused(_metadata, &self->nl, &m, self->saved, "nla_len 2", -EINVAL);

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_raw(&m, half, sizeof(half));
	expect_refused(_metadata, &self->nl, &m, self->saved, "half a header", -EINVAL);

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_raw(&m, huge, sizeof(huge));
	expect_refused(_metadata, &self->nl, &m, self->saved, "nla_len 65535", -EINVAL);
}

TEST_F(nl, set_unknown_attr)
{
	struct bxnl_msg m;

	if (!self->root)
		SKIP(return, "needs root");
	begin_set(&m, &self->nl, self->saved);
	bxnl_put_u32(&m, BX_A_TUNABLES_MAX + 1, 1);
	expect_refused(_metadata, &self->nl, &m, self->saved, "type max+1", -EINVAL);
	EXPECT_TRUE(self->nl.ext.has_off);
	EXPECT_EQ(BX_A_TUNABLES_MAX + 1, bxnl_attr_at(&m, self->nl.ext.off));

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_u32(&m, 1000, 1);
	expect_refused(_metadata, &self->nl, &m, self->saved, "type 1000", -EINVAL);

	begin_set(&m, &self->nl, self->saved);
	bxnl_put_u32(&m, 0, 1);
	expect_refused(_metadata, &self->nl, &m, self->saved, "type 0", -EINVAL);
}

TEST_F(nl, set_nothing)
{
	long now[NTUN + 1];
	struct bxnl_msg m;

	if (!self->root)
		SKIP(return, "needs root");
	bxnl_msg_init(&m, self->nl.family, BX_CMD_TUNABLES_SET, BX_FAMILY_VERSION);
	EXPECT_EQ(-EINVAL, bxnl_do(&self->nl, &m, NULL, NULL));
	EXPECT_STREQ("no tunable given", self->nl.ext.msg);
	params_snap(now);
	EXPECT_TRUE(params_equal(self->saved, now));
}

TEST_F(nl, conn_get_bad_peer)
{
	struct bxnl_msg m;
	int ret;

	/* Nonexistent. */
	bxnl_msg_init(&m, self->nl.family, BX_CMD_CONN_GET, BX_FAMILY_VERSION);
	bxnl_put_u32(&m, BX_A_CONN_PEER_ID, 0x7ffffff0);
	EXPECT_EQ(-ENOENT, bxnl_do(&self->nl, &m, NULL, NULL));
	EXPECT_NE(0, self->nl.ext.msg[0]);
	EXPECT_TRUE(self->nl.ext.has_off);
	EXPECT_EQ(BX_A_CONN_PEER_ID, bxnl_attr_at(&m, self->nl.ext.off));

	/* 0: below the policy's minimum. */
	bxnl_msg_init(&m, self->nl.family, BX_CMD_CONN_GET, BX_FAMILY_VERSION);
	bxnl_put_u32(&m, BX_A_CONN_PEER_ID, 0);
	ret = bxnl_do(&self->nl, &m, NULL, NULL);
	EXPECT_TRUE(ret == -ERANGE || ret == -EINVAL) TH_LOG("%d", ret);
	EXPECT_NE(0, self->nl.ext.msg[0]);
	EXPECT_TRUE(self->nl.ext.has_off);
	EXPECT_EQ(BX_A_CONN_PEER_ID, bxnl_attr_at(&m, self->nl.ext.off));

	/* None: the missing attribute is named. */
	bxnl_msg_init(&m, self->nl.family, BX_CMD_CONN_GET, BX_FAMILY_VERSION);
	EXPECT_EQ(-EINVAL, bxnl_do(&self->nl, &m, NULL, NULL));
	EXPECT_TRUE(self->nl.ext.has_miss);
	EXPECT_EQ(BX_A_CONN_PEER_ID, self->nl.ext.miss_type);

	/* Wrong size. */
	bxnl_msg_init(&m, self->nl.family, BX_CMD_CONN_GET, BX_FAMILY_VERSION);
	bxnl_put_u64(&m, BX_A_CONN_PEER_ID, 1);
	EXPECT_EQ(-EINVAL, bxnl_do(&self->nl, &m, NULL, NULL));
}

/* Each existing connection can be fetched alone, as the dump shows it. */
TEST_F(nl, conn_get_each)
{
	struct objs *s = calloc(1, sizeof(*s)), *one = calloc(1, sizeof(*one));

	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, one);
	ASSERT_EQ(0, dump(&self->nl, BX_CMD_CONN_GET, s));
	for (int i = 0; i < s->n; i++) {
		struct bxnl_msg m;
		uint32_t id, id2;
		int ret;

		ASSERT_TRUE(bxnl_get_u32(s->o[i].tb[BX_A_CONN_PEER_ID], &id));
		memset(one, 0, sizeof(*one));
		one->cmd = BX_CMD_CONN_GET;
		bxnl_msg_init(&m, self->nl.family, BX_CMD_CONN_GET, BX_FAMILY_VERSION);
		bxnl_put_u32(&m, BX_A_CONN_PEER_ID, id);
		ret = bxnl_do(&self->nl, &m, objs_cb, one);
		if (ret == -ENOENT)	/* went away meanwhile */
			continue;
		ASSERT_EQ(0, ret);
		ASSERT_EQ(1, one->n);
		ASSERT_TRUE(bxnl_get_u32(one->o[0].tb[BX_A_CONN_PEER_ID], &id2));
		EXPECT_EQ(id, id2);
		objs_free(one);
	}
	if (!s->n)
		TH_LOG("no connections to fetch");
	objs_free(s);
	free(s);
	free(one);
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
		struct objs *s = calloc(1, sizeof(*s));
		struct bxnl mine;
		struct bxnl_msg m;
		int code = 0, ret;

		if (!s || setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
		    geteuid() != 65534)
			_exit(100);
		if (open_family(&mine))
			_exit(101);
		if (dump(&mine, BX_CMD_DEV_GET, s) || s->n < 1)
			code |= 1;
		objs_free(s);
		if (dump(&mine, BX_CMD_CONN_GET, s))
			code |= 2;
		objs_free(s);
		if (dump(&mine, BX_CMD_PROC_GET, s))
			code |= 4;
		objs_free(s);
		if (get(&mine, BX_CMD_STATS_GET, s) || s->n != 1)
			code |= 8;
		objs_free(s);
		if (get(&mine, BX_CMD_TUNABLES_GET, s) || s->n != 1)
			code |= 16;
		objs_free(s);
		bxnl_msg_init(&m, mine.family, BX_CMD_TUNABLES_SET, BX_FAMILY_VERSION);
		bxnl_put_u32(&m, BX_A_TUNABLES_WND_KB, 512);
		ret = bxnl_do(&mine, &m, NULL, NULL);
		if (ret != -EPERM)
			code |= 32;
		/* The socket root opened: the caller's capability counts. */
		bxnl_msg_init(&m, self->nl.family, BX_CMD_TUNABLES_SET,
			      BX_FAMILY_VERSION);
		bxnl_put_u32(&m, BX_A_TUNABLES_WND_KB, 512);
		ret = bxnl_do(&self->nl, &m, NULL, NULL);
		if (ret != -EPERM)
			code |= 64;
		bxnl_close(&mine);
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

static int admit_cb(const struct nlmsghdr *nlh, void *arg)
{
	const unsigned char *p = (const unsigned char *)nlh + NLMSG_HDRLEN +
				 GENL_HDRLEN;
	size_t len = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, off;
	const struct nlattr *tb[BX_A_ADMIT_MAX + 1], *nt[BX_A_NET_MAX + 1];
	struct admit *ad = arg;
	uint64_t u64;

	if (bxnl_parse_genl(nlh, tb, BX_A_ADMIT_MAX)) {
		ad->bad = true;
		return 0;
	}
	ad->counters = bxnl_get_u64(tb[BX_A_ADMIT_REFUSED], &u64) &&
		       bxnl_get_u64(tb[BX_A_ADMIT_AUTH_FAILURES], &u64) &&
		       bxnl_get_u64(tb[BX_A_ADMIT_VIOLATIONS], &u64);
	if (!bxnl_get_u8(tb[BX_A_ADMIT_SECRET_ON], &ad->secret_on))
		ad->bad = true;
	/* bxnl_parse keeps the last of a repeated attribute: walk them. */
	for (off = 0; off + NLA_HDRLEN <= len;) {
		const struct nlattr *a = (const struct nlattr *)(p + off);

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len - off)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == BX_A_ADMIT_NET) {
			if (ad->nets >= 4 ||
			    bxnl_parse(bxnl_data(a), bxnl_len(a), nt, BX_A_NET_MAX) ||
			    !bxnl_get(nt[BX_A_NET_ADDR], &ad->addr[ad->nets], 16) ||
			    !bxnl_get_u8(nt[BX_A_NET_PREFIX_LEN], &ad->plen[ad->nets]))
				ad->bad = true;
			else
				ad->nets++;
		}
		off += NLA_ALIGN(a->nla_len);
	}
	return 0;
}

static int admit_get(struct bxnl *nl, struct admit *ad)
{
	struct bxnl_msg m;

	memset(ad, 0, sizeof(*ad));
	bxnl_msg_init(&m, nl->family, BX_CMD_ADMIT_GET, BX_FAMILY_VERSION);
	return bxnl_do(nl, &m, admit_cb, ad);
}

/* Add network @s/@plen (IPv4 /N as 96 + N) to allow-set request @m. */
static void put_net(struct bxnl_msg *m, const char *s, uint8_t plen)
{
	struct in6_addr a = {};
	uint32_t at;

	if (inet_pton(AF_INET, s, &a.s6_addr[12]) == 1)
		a.s6_addr[10] = a.s6_addr[11] = 0xff;
	else
		inet_pton(AF_INET6, s, &a);
	bxnl_nest_start(m, BX_A_ADMIT_NET, &at);
	bxnl_put(m, BX_A_NET_ADDR, &a, sizeof(a));
	bxnl_put_u8(m, BX_A_NET_PREFIX_LEN, plen);
	bxnl_nest_end(m, at);
}

/* allow-set and secret-set take effect, read back through admit-get. */
TEST_F(nl, admit_set_get)
{
	unsigned char key[32];
	struct bxnl_msg m;
	struct admit ad;

	if (!self->root)
		SKIP(return, "needs root");
	ASSERT_EQ(0, admit_get(&self->nl, &ad));
	EXPECT_FALSE(ad.bad);
	EXPECT_TRUE(ad.counters);
	EXPECT_EQ(0, ad.nets);
	EXPECT_EQ(0, ad.secret_on);

	bxnl_msg_init(&m, self->nl.family, BX_CMD_ALLOW_SET, BX_FAMILY_VERSION);
	put_net(&m, "10.1.0.0", 96 + 16);
	put_net(&m, "fd00::", 8);
	ASSERT_EQ(0, bxnl_do(&self->nl, &m, NULL, NULL)) TH_LOG("%s", self->nl.ext.msg);
	memset(key, 0x5a, sizeof(key));
	bxnl_msg_init(&m, self->nl.family, BX_CMD_SECRET_SET, BX_FAMILY_VERSION);
	bxnl_put(&m, BX_A_ADMIT_SECRET, key, sizeof(key));
	ASSERT_EQ(0, bxnl_do(&self->nl, &m, NULL, NULL)) TH_LOG("%s", self->nl.ext.msg);
	ASSERT_EQ(0, admit_get(&self->nl, &ad));
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
	bxnl_msg_init(&m, self->nl.family, BX_CMD_ALLOW_SET, BX_FAMILY_VERSION);
	ASSERT_EQ(0, bxnl_do(&self->nl, &m, NULL, NULL));
	bxnl_msg_init(&m, self->nl.family, BX_CMD_SECRET_SET, BX_FAMILY_VERSION);
	ASSERT_EQ(0, bxnl_do(&self->nl, &m, NULL, NULL));
	ASSERT_EQ(0, admit_get(&self->nl, &ad));
	EXPECT_EQ(0, ad.nets);
	EXPECT_EQ(0, ad.secret_on);
}

/* Bad networks and secrets: refused with a message, nothing changed. */
TEST_F(nl, admit_bad)
{
	unsigned char key[65];
	struct bxnl_msg m;
	struct admit ad;
	int ret;

	if (!self->root)
		SKIP(return, "needs root");
	memset(key, 1, sizeof(key));
	/* Host bits past the prefix. */
	bxnl_msg_init(&m, self->nl.family, BX_CMD_ALLOW_SET, BX_FAMILY_VERSION);
	put_net(&m, "10.1.2.3", 96 + 16);
	EXPECT_EQ(-EINVAL, bxnl_do(&self->nl, &m, NULL, NULL));
	EXPECT_NE(0, self->nl.ext.msg[0]);
	/* A prefix longer than 128 bits, the policy says. */
	bxnl_msg_init(&m, self->nl.family, BX_CMD_ALLOW_SET, BX_FAMILY_VERSION);
	put_net(&m, "fd00::", 129);
	ret = bxnl_do(&self->nl, &m, NULL, NULL);
	EXPECT_TRUE(ret == -ERANGE || ret == -EINVAL) TH_LOG("%d", ret);
	/* A network without its prefix length. */
	{
		struct in6_addr a = {};
		uint32_t at;

		bxnl_msg_init(&m, self->nl.family, BX_CMD_ALLOW_SET,
			      BX_FAMILY_VERSION);
		bxnl_nest_start(&m, BX_A_ADMIT_NET, &at);
		bxnl_put(&m, BX_A_NET_ADDR, &a, sizeof(a));
		bxnl_nest_end(&m, at);
		EXPECT_EQ(-EINVAL, bxnl_do(&self->nl, &m, NULL, NULL));
		/* An address of 4 bytes. */
		bxnl_msg_init(&m, self->nl.family, BX_CMD_ALLOW_SET,
			      BX_FAMILY_VERSION);
		bxnl_nest_start(&m, BX_A_ADMIT_NET, &at);
		bxnl_put(&m, BX_A_NET_ADDR, &a, 4);
		bxnl_put_u8(&m, BX_A_NET_PREFIX_LEN, 0);
		bxnl_nest_end(&m, at);
		ret = bxnl_do(&self->nl, &m, NULL, NULL);
		EXPECT_TRUE(ret == -ERANGE || ret == -EINVAL) TH_LOG("%d", ret);
	}
	/* 65 networks: one too many. */
	bxnl_msg_init(&m, self->nl.family, BX_CMD_ALLOW_SET, BX_FAMILY_VERSION);
	for (int i = 0; i < 65; i++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "10.%d.0.0", i);
		put_net(&m, buf, 96 + 16);
	}
	EXPECT_EQ(-E2BIG, bxnl_do(&self->nl, &m, NULL, NULL));
	/* A secret is exactly 32 bytes: 15, 31, 33 and 65 are refused. */
	{
		static const int lens[] = { 15, 31, 33, 65 };

		for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			bxnl_msg_init(&m, self->nl.family, BX_CMD_SECRET_SET,
				      BX_FAMILY_VERSION);
			bxnl_put(&m, BX_A_ADMIT_SECRET, key, lens[i]);
			ret = bxnl_do(&self->nl, &m, NULL, NULL);
			EXPECT_EQ(-ERANGE, ret) TH_LOG("%d bytes", lens[i]);
			EXPECT_NE(0, self->nl.ext.msg[0]);
		}
	}
	ASSERT_EQ(0, admit_get(&self->nl, &ad));
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
		unsigned char key[32] = { 1 };
		struct bxnl_msg m;
		struct admit ad;
		struct bxnl mine;
		int code = 0;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
		    open_family(&mine))
			_exit(100);
		if (admit_get(&mine, &ad) || ad.bad)
			code |= 1;
		bxnl_msg_init(&m, mine.family, BX_CMD_ALLOW_SET, BX_FAMILY_VERSION);
		put_net(&m, "10.0.0.0", 104);
		if (bxnl_do(&mine, &m, NULL, NULL) != -EPERM)
			code |= 2;
		bxnl_msg_init(&m, mine.family, BX_CMD_SECRET_SET, BX_FAMILY_VERSION);
		bxnl_put(&m, BX_A_ADMIT_SECRET, key, sizeof(key));
		if (bxnl_do(&mine, &m, NULL, NULL) != -EPERM)
			code |= 4;
		bxnl_close(&mine);
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
		struct objs *s = calloc(1, sizeof(*s));
		struct bxnl mine;
		int code = 0, fd;

		if (!s || setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
		    open_family(&mine))
			_exit(100);
		fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(101);
		if (dump(&mine, BX_CMD_PROC_GET, s))
			code |= 1;
		/* Exactly its own file. */
		for (int i = 0, own = 0; i < s->n; i++) {
			uint32_t p;

			if (!bxnl_get_u32(s->o[i].tb[BX_A_PROC_PID], &p) ||
			    p != (uint32_t)getpid())
				code |= 2;
			else if (own++)
				code |= 2;
		}
		if (s->n != 1)
			code |= 4;
		objs_free(s);
		if (bxnl_join(&mine, mine.mcgrp) != -EPERM)
			code |= 8;
		close(fd);
		bxnl_close(&mine);
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

static int ev_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[BX_A_DEV_MAX + 1];
	struct ev *e = arg;
	const char *s;

	e->cmd = bxnl_genl_cmd(nlh);
	if (e->cmd != BX_CMD_DEV_ADD_NTF && e->cmd != BX_CMD_DEV_DEL_NTF)
		return 1;
	e->ok = !bxnl_parse_genl(nlh, tb, BX_A_DEV_MAX) &&
		bxnl_get_u32(tb[BX_A_DEV_PORT], &e->port);
	s = bxnl_get_str(tb[BX_A_DEV_NAME]);
	snprintf(e->name, sizeof(e->name), "%s", s ? s : "");
	s = bxnl_get_str(tb[BX_A_DEV_NETDEV]);
	snprintf(e->netdev, sizeof(e->netdev), "%s", s ? s : "");
	return 1;
}

/*
 * The next device event within @ms, or false. Connection events of other
 * tests running on the peer guest at the same time are skipped.
 */
static bool next_event(struct bxnl *nl, struct ev *e, int ms)
{
	struct pollfd p = { .fd = nl->fd, .events = POLLIN };

	for (int i = 0; i < 64; i++) {
		memset(e, 0, sizeof(*e));
		if (poll(&p, 1, ms) != 1)
			return false;
		if (bxnl_recv_events(nl, nl->family, ev_cb, e) != 1)
			return false;
		if (e->cmd == BX_CMD_DEV_ADD_NTF || e->cmd == BX_CMD_DEV_DEL_NTF)
			return true;
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
	ASSERT_EQ(0, bxnl_join(&self->nl, self->nl.mcgrp));
	sh("ip link del nlt0 2>/dev/null");
	self->made_dev = true;
	ASSERT_EQ(0, sh("ip link add nlt0 type veth peer name nlt1 && ip link set nlt0 up"));
	ASSERT_EQ(0, sh("rdma link add rxe_nlt type rxe netdev nlt0"));
	ASSERT_TRUE(next_event(&self->nl, &e, 10000)) TH_LOG("no dev-add");
	EXPECT_EQ(BX_CMD_DEV_ADD_NTF, e.cmd);
	EXPECT_TRUE(e.ok);
	EXPECT_STREQ("rxe_nlt", e.name);
	EXPECT_STREQ("nlt0", e.netdev);
	EXPECT_EQ(1, e.port);

	EXPECT_EQ(0, sh("rdma link delete rxe_nlt"));
	sh("ip link del nlt0");
	ASSERT_TRUE(next_event(&self->nl, &e, 10000)) TH_LOG("no dev-del");
	EXPECT_EQ(BX_CMD_DEV_DEL_NTF, e.cmd);
	EXPECT_TRUE(e.ok);
	EXPECT_STREQ("rxe_nlt", e.name);
	EXPECT_EQ(1, e.port);
}

TEST_HARNESS_MAIN
