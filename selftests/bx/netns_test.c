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

#include "bx-user.h"
#include "ynl.h"
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

static struct ynl_sock *bx_open(void)
{
	struct ynl_error err;

	return ynl_sock_create(&ynl_bx_family, &err);
}

/* -errno of the last failed request on @ys. */
static int ys_err(struct ynl_sock *ys)
{
	return ys->err.code ? -(int)ys->err.code : -EIO;
}

/* Objects of a dump of @cmd, or -errno; *@other: procs not of @pid. */
static int dump_count(struct ynl_sock *ys, uint8_t cmd, int pid, int *other)
{
	int n = 0, bad = 0;

	if (cmd == BX_CMD_PROC_GET) {
		struct bx_proc_get_rsp_list *l = bx_proc_get_dump(ys);

		if (!l)
			return ys_err(ys);
		ynl_dump_foreach(l, o) {
			n++;
			if (!o->_present.pid || (int)o->pid != pid)
				bad++;
		}
		bx_proc_get_rsp_list_free(l);
	} else if (cmd == BX_CMD_DEV_GET) {
		struct bx_dev_get_rsp_list *l = bx_dev_get_dump(ys);

		if (!l)
			return ys_err(ys);
		ynl_dump_foreach(l, o)
			n++;
		bx_dev_get_rsp_list_free(l);
	} else {
		struct bx_conn_get_list *l = bx_conn_get_dump(ys);

		if (!l)
			return ys_err(ys);
		ynl_dump_foreach(l, o)
			n++;
		bx_conn_get_list_free(l);
	}
	if (other)
		*other = bad;
	return n;
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
	struct bx_stats_get_rsp *stats;
	struct ynl_sock *ys;
	struct pollfd p;
	int fd, other, code = 0;
	char c = 'x';

	fd = open_setup();
	if (fd < 0)
		return 101;
	if (peer_of(fd, "1") != -ENETUNREACH)
		code |= 1;
	ys = bx_open();
	if (!ys)
		return 102;
	if (dump_count(ys, BX_CMD_PROC_GET, getpid(), &other) != 1 || other)
		code |= 2;
	if (dump_count(ys, BX_CMD_DEV_GET, 0, NULL) != 0 ||
	    dump_count(ys, BX_CMD_CONN_GET, 0, NULL) != 0)
		code |= 4;
	stats = bx_stats_get(ys);
	if (stats || ys_err(ys) != -EOPNOTSUPP)
		code |= 8;
	if (stats)
		bx_stats_get_rsp_free(stats);
	if (ynl_subscribe(ys, BX_MCGRP_EVENTS))
		code |= 16;
	/* Subscribed: the parent makes its event now; none may come. */
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		return 103;
	p.fd = ynl_socket_get_fd(ys);
	p.events = POLLIN;
	if (poll(&p, 1, 3000) != 0)
		code |= 64;
	ynl_sock_destroy(ys);
	close(fd);
	return code;
}

/* Connection events of the initial namespace's connection to nowhere. */
static int conn_events(struct ynl_sock *ys)
{
	struct ynl_ntf_base_type *ntf;
	int seen = 0;

	if (ynl_ntf_check(ys) < 0)
		return -1;
	while ((ntf = ynl_ntf_dequeue(ys))) {
		seen += ntf->cmd == BX_CMD_CONN_DOWN_NTF ||
			ntf->cmd == BX_CMD_CONN_UP_NTF;
		ynl_ntf_free(ntf);
	}
	return seen;
}

TEST(isolated_namespace)
{
	int status, fd, peer, ready[2], go[2], seen = 0;
	struct bx_sqe sqe = { .opcode = BX_OP_PUSH, .service = 7, .len = 64,
			      .timeout_ms = 5000 };
	struct bx_submit s = { .sqes = (unsigned long)&sqe, .nr = 1 };
	struct ynl_sock *ys;
	struct pollfd p;
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
	ys = bx_open();
	ASSERT_NE(NULL, ys);
	ASSERT_EQ(0, ynl_subscribe(ys, BX_MCGRP_EVENTS)) TH_LOG("%s", ys->err.msg);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* A connection attempt to an address nobody answers: events. */
	fd = open_setup();
	ASSERT_LE(0, fd);
	peer = peer_of(fd, "78");
	ASSERT_LT(0, peer);
	sqe.peer = peer;
	EXPECT_EQ(1, ioctl(fd, BX_IOC_SUBMIT, &s));
	ASSERT_EQ(1, write(go[1], "x", 1));
	p.fd = ynl_socket_get_fd(ys);
	p.events = POLLIN;
	while (!seen && poll(&p, 1, 3000) == 1) {
		int n = conn_events(ys);

		if (n < 0)
			break;
		seen += n;
	}
	EXPECT_LT(0, seen);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("in a namespace: %#x (1 peer not ENETUNREACH, 2 procs, 4 devs or conns, 8 stats not refused, 16 join, 64 an event came; 100+ setup)",
		       WEXITSTATUS(status));
	ynl_sock_destroy(ys);
	close(fd);
}

TEST_HARNESS_MAIN
