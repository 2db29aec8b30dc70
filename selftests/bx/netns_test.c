// SPDX-License-Identifier: GPL-2.0
/*
 * bx in network namespaces, on one guest (kmod/net.c): two namespaces
 * bind the same service number independently of each other and of the
 * initial one; a namespace without an RDMA device of its own gets
 * ENETUNREACH for a peer instead of the host's connections; its netlink
 * dumps show its own files only, no device and no connection, the
 * host-wide gets are refused there, and the initial namespace's events
 * do not reach it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bx.h>
#include <linux/bx_netlink.h>

#include "bxnl.h"
#include "../kselftest_harness.h"

#define SVC	5000

static int open_setup(void)
{
	struct bx_setup s = { .size = sizeof(s), .region_size = 1 << 20,
			      .cq_entries = 8 };
	int fd = open("/dev/bx", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, BX_IOC_SETUP, &s)) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int bind_svc(int fd, unsigned int svc)
{
	struct bx_bind b = { .service = svc };

	return ioctl(fd, BX_IOC_BIND, &b) ? -errno : 0;
}

static int peer_of(int fd, const char *a)
{
	struct bx_peer_addr p = { .family = AF_INET };

	p.addr[0] = 192;
	p.addr[1] = 0;
	p.addr[2] = 2;
	p.addr[3] = atoi(a);
	return ioctl(fd, BX_IOC_PEER, &p) ? -errno : (int)p.id;
}

/* Objects of a dump of @cmd, or -errno; *@pid_ok: each is process @pid. */
static int count_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[BX_A_PROC_MAX + 1];
	int *c = arg;
	uint32_t pid;

	c[0]++;
	if (bxnl_genl_cmd(nlh) == BX_CMD_PROC_GET &&
	    (bxnl_parse_genl(nlh, tb, BX_A_PROC_MAX) ||
	     !bxnl_get_u32(tb[BX_A_PROC_PID], &pid) || (int)pid != c[1]))
		c[2]++;
	return 0;
}

static int dump_count(struct bxnl *nl, uint8_t cmd, int pid, int *other)
{
	struct bxnl_msg m;
	int c[3] = { 0, pid, 0 }, ret;

	bxnl_msg_init(&m, nl->family, cmd, BX_FAMILY_VERSION);
	ret = bxnl_dump(nl, &m, count_cb, c);
	if (other)
		*other = c[2];
	return ret ? ret : c[0];
}

/*
 * In a new network namespace: bind SVC (0 expected), and a second file
 * there gets EADDRINUSE for it. Exit status 0 when both held.
 */
static int bind_twice(void)
{
	int fd = open_setup(), fd2 = open_setup(), code = 0;

	if (fd < 0 || fd2 < 0)
		return 101;
	if (bind_svc(fd, SVC))
		code |= 1;
	if (bind_svc(fd2, SVC) != -EADDRINUSE)
		code |= 2;
	close(fd2);
	close(fd);
	return code;
}

TEST(services_per_namespace)
{
	int fd, fd2, go[2], status[2];
	pid_t pid[2];
	char c;

	if (geteuid())
		SKIP(return, "needs root for namespaces");
	fd = open_setup();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind_svc(fd, SVC));
	ASSERT_EQ(0, pipe(go));
	/* Two namespaces, each binding SVC while the other holds it. */
	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i] == 0) {
			int code;

			close(go[1]);
			if (unshare(CLONE_NEWNET))
				_exit(100);
			code = bind_twice();
			/* Both in at once: wait for the parent. */
			if (read(go[0], &c, 1) < 0)
				_exit(102);
			_exit(code);
		}
	}
	/* The initial namespace still has it taken. */
	fd2 = open_setup();
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-EADDRINUSE, bind_svc(fd2, SVC));
	close(fd2);
	close(go[1]);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status[i], 0));
		EXPECT_TRUE(WIFEXITED(status[i]));
		EXPECT_EQ(0, WEXITSTATUS(status[i]))
			TH_LOG("namespace %d: %#x (1 bind, 2 no EADDRINUSE)", i,
			       WEXITSTATUS(status[i]));
	}
	close(fd);
}

/*
 * In a namespace without an RDMA device: a peer is refused with
 * ENETUNREACH; the dumps show its own file only, no device and no
 * connection; the host-wide gets are refused; the initial namespace's
 * events (a connection attempt's) do not arrive.
 */
static int isolated(int ready, int go)
{
	struct pollfd p;
	struct bxnl nl;
	int fd, other, code = 0;
	char c = 'x';

	fd = open_setup();
	if (fd < 0)
		return 101;
	if (peer_of(fd, "1") != -ENETUNREACH)
		code |= 1;
	if (bxnl_open(&nl) || bxnl_resolve(&nl, BX_FAMILY_NAME,
					    BX_MCGRP_EVENTS))
		return 102;
	if (dump_count(&nl, BX_CMD_PROC_GET, getpid(), &other) != 1 || other)
		code |= 2;
	if (dump_count(&nl, BX_CMD_DEV_GET, 0, NULL) != 0 ||
	    dump_count(&nl, BX_CMD_CONN_GET, 0, NULL) != 0)
		code |= 4;
	{
		struct bxnl_msg m;

		bxnl_msg_init(&m, nl.family, BX_CMD_STATS_GET,
			      BX_FAMILY_VERSION);
		if (bxnl_do(&nl, &m, NULL, NULL) != -EOPNOTSUPP)
			code |= 8;
	}
	if (bxnl_join(&nl, nl.mcgrp))
		code |= 16;
	/* Subscribed: the parent makes its event now; none may come. */
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		return 103;
	p.fd = nl.fd;
	p.events = POLLIN;
	if (poll(&p, 1, 3000) != 0)
		code |= 64;
	bxnl_close(&nl);
	close(fd);
	return code;
}

/* The events of the initial namespace's connection to nowhere. */
static int conn_event_cb(const struct nlmsghdr *nlh, void *arg)
{
	uint8_t cmd = bxnl_genl_cmd(nlh);

	if (cmd != BX_CMD_CONN_DOWN_NTF && cmd != BX_CMD_CONN_UP_NTF)
		return 0;
	*(int *)arg += 1;
	return 1;
}

TEST(isolated_namespace)
{
	int status, fd, peer, ready[2], go[2], seen = 0;
	struct bx_sqe sqe = { .opcode = BX_OP_PUSH, .service = 7, .len = 64,
			      .timeout_ms = 5000 };
	struct bx_submit s = { .sqes = (unsigned long)&sqe, .nr = 1 };
	struct pollfd p;
	struct bxnl nl;
	pid_t pid;
	char c;

	if (geteuid())
		SKIP(return, "needs root for namespaces");
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(100);
		_exit(isolated(ready[1], go[0]));
	}
	/* Here, in the initial namespace, the same event does come. */
	ASSERT_EQ(0, bxnl_open(&nl));
	ASSERT_EQ(0, bxnl_resolve(&nl, BX_FAMILY_NAME, BX_MCGRP_EVENTS));
	ASSERT_EQ(0, bxnl_join(&nl, nl.mcgrp));
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* A connection attempt to an address nobody answers: events. */
	fd = open_setup();
	ASSERT_LE(0, fd);
	peer = peer_of(fd, "78");
	ASSERT_LT(0, peer);
	sqe.peer = peer;
	EXPECT_EQ(1, ioctl(fd, BX_IOC_SUBMIT, &s));
	ASSERT_EQ(1, write(go[1], "x", 1));
	p.fd = nl.fd;
	p.events = POLLIN;
	while (!seen && poll(&p, 1, 3000) == 1)
		if (bxnl_recv_events(&nl, nl.family, conn_event_cb, &seen) < 0)
			break;
	EXPECT_LT(0, seen);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("in a namespace: %#x (1 peer not ENETUNREACH, 2 procs, 4 devs or conns, 8 stats not refused, 16 join, 64 an event came; 100+ setup)",
		       WEXITSTATUS(status));
	bxnl_close(&nl);
	close(fd);
}

TEST_HARNESS_MAIN
