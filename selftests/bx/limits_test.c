// SPDX-License-Identifier: GPL-2.0
/*
 * What one user may hold of the host-wide transport (kmod/user.c,
 * kmod/peer.c), on one guest, as an unprivileged user (uid 65534) against
 * root: peers, the peer table's reserve, services, operations in flight,
 * peers reclaimed once nothing holds them, files that open, fill and
 * close, limits lowered under a user, what a descriptor may do by its
 * opener's credentials, and (with a second guest) connections charged to
 * a memory cgroup.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bx.h>

#include "../kselftest_harness.h"

#define PARAMS	"/sys/module/bx/parameters/"
#define STATS	"/sys/kernel/debug/bx/stats"

static long param_get(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int param_set(const char *name, long v)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* A counter of debugfs "stats". */
static long stat_of(const char *key)
{
	char k[64];
	long v, found = -1;
	FILE *f = fopen(STATS, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", k, &v) == 2)
		if (!strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

static int peer_add(int fd, unsigned int n)
{
	struct bx_peer_addr p = { .family = AF_INET };

	/* 198.18.0.0/15, benchmark space: nobody answers there. */
	p.addr[0] = 198;
	p.addr[1] = 18 + (n >> 16 & 1);
	p.addr[2] = n >> 8;
	p.addr[3] = n;
	return ioctl(fd, BX_IOC_PEER, &p) ? -errno : (int)p.id;
}

static int setup(int fd, unsigned int entries)
{
	struct bx_setup s = { .size = sizeof(s), .region_size = 1 << 20,
			      .cq_entries = entries };

	return ioctl(fd, BX_IOC_SETUP, &s);
}

static void drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		_exit(100);
}

/* Run @fn as nobody in a child; its exit status, or -1. */
static int as_nobody(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		drop_to_nobody();
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

FIXTURE(limits) {
	long saved[4];
};

static const char *const tunables[4] = {
	"user_peers_max", "user_services_max", "user_ops_max",
	"peer_linger_ms",
};

FIXTURE_SETUP(limits)
{
	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	if (access("/dev/bx", F_OK))
		SKIP(return, "bx not loaded");
	for (int i = 0; i < 4; i++)
		self->saved[i] = param_get(tunables[i]);
}

FIXTURE_TEARDOWN(limits)
{
	for (int i = 0; i < 4; i++)
		if (self->saved[i] >= 0)
			param_set(tunables[i], self->saved[i]);
}

/*
 * A child that, as nobody, asks for 1100 peers from address @first on
 * (past refusals, or stopping at the first), then holds what it got until
 * nobody_release(); its count and last refusal come back through a pipe.
 */
struct nobody {
	pid_t	pid;
	int	go[2], done[2];
	int	n, err;
};

static int nobody_fill(struct nobody *nb, int first, bool past)
{
	int res[2];

	if (pipe(nb->go) || pipe(nb->done))
		return -1;
	nb->pid = fork();
	if (nb->pid < 0)
		return -1;
	if (nb->pid == 0) {
		int fd, ret = 0;
		char c;

		drop_to_nobody();
		res[0] = res[1] = 0;
		fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(101);
		for (int i = 0; i < 1100; i++) {
			ret = peer_add(fd, first + i);
			if (ret < 0) {
				res[1] = -ret;
				if (!past || ret != -ENOSPC)
					break;
			} else {
				res[0]++;
			}
		}
		/* The same address again costs nothing. */
		if (res[0] && peer_add(fd, first) < 0)
			res[1] = -1;
		if (write(nb->done[1], res, sizeof(res)) != sizeof(res) ||
		    read(nb->go[0], &c, 1) != 1)
			_exit(102);
		_exit(0);
	}
	if (read(nb->done[0], res, sizeof(res)) != sizeof(res))
		return -1;
	nb->n = res[0];
	nb->err = res[1];
	printf("# nobody: %d peers, refused with %s\n", nb->n,
	       nb->err > 0 ? strerror(nb->err) : "nothing");
	return 0;
}

/* Let it go; its exit status. */
static int nobody_release(struct nobody *nb)
{
	int status;

	if (write(nb->go[1], "x", 1) != 1 ||
	    waitpid(nb->pid, &status, 0) != nb->pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Root adds a peer: 1, or cannot: 0. */
static int root_adds(int addr)
{
	int fd = open("/dev/bx", O_RDWR | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = peer_add(fd, addr) > 0;
	close(fd);
	return ok;
}

static long wait_reclaimed(long base)
{
	for (int i = 0; i < 150 && stat_of("peers") > base; i++)
		usleep(100 * 1000);
	return stat_of("peers");
}

/*
 * 1100 BX_IOC_PEER as nobody: user_peers_max of them go in, then
 * ENOSPC, and the refused ones do not grow the table either; root still
 * adds peers; once nobody's process is gone and the peers linger no
 * more, the table is back to what it was.
 */
TEST_F(limits, peers_per_user)
{
	long base = stat_of("peers"), held;
	struct nobody nb;

	ASSERT_LE(0, base);
	ASSERT_EQ(0, param_set("user_peers_max", 32));
	ASSERT_EQ(0, param_set("peer_linger_ms", 0));
	ASSERT_EQ(0, nobody_fill(&nb, 0, true));
	held = stat_of("peers");
	EXPECT_EQ(1, root_adds(5000));
	EXPECT_EQ(0, nobody_release(&nb));
	EXPECT_EQ(32, nb.n);
	EXPECT_EQ(ENOSPC, nb.err);
	/* Its 32, and nothing for the 1068 refused. */
	EXPECT_GE(base + 32, held) TH_LOG("table %ld, was %ld", held, base);
	EXPECT_GE(base, wait_reclaimed(base));
}

/*
 * With no per-user limit to stop it first, an unprivileged user stops at
 * the table's reserve (BX_PEERS_RESERVED of 1024): while it holds all it
 * got, root still gets in.
 */
TEST_F(limits, peer_table_reserve)
{
	long base = stat_of("peers"), full;
	struct nobody nb;

	ASSERT_LE(0, base);
	ASSERT_EQ(0, param_set("user_peers_max", 1024));
	ASSERT_EQ(0, param_set("peer_linger_ms", 0));
	ASSERT_EQ(0, nobody_fill(&nb, 10000, false));
	full = stat_of("peers");
	EXPECT_EQ(1, root_adds(20000));
	EXPECT_EQ(0, nobody_release(&nb));
	EXPECT_EQ(ENOSPC, nb.err);
	EXPECT_LE(1024 - 64 - base, nb.n);
	/* Nobody stopped where the reserve begins. */
	EXPECT_EQ(1024 - 64, full);
	EXPECT_GE(base, wait_reclaimed(base));
}

/*
 * Files that open, fill the peers they may, and close, over and over (as
 * nobody; peers linger a minute): no entry stays behind, and another
 * user and root still add theirs. Peers that never carried anything go
 * when their last file closes.
 */
TEST_F(limits, peer_churn)
{
	long base = stat_of("peers");
	struct nobody nb;

	ASSERT_LE(0, base);
	ASSERT_EQ(0, param_set("user_peers_max", 256));
	ASSERT_EQ(0, param_set("peer_linger_ms", 60000));
	for (int round = 0; round < 4; round++) {
		ASSERT_EQ(0, nobody_fill(&nb, 30000 + round * 1000, false));
		EXPECT_EQ(256, nb.n);
		EXPECT_EQ(0, nobody_release(&nb));
		EXPECT_EQ(base, stat_of("peers")) TH_LOG("round %d", round);
	}
	/* Another unprivileged user fills its share; root adds one. */
	{
		int fd, n = 0, pid = fork(), status;

		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (setgroups(0, NULL) || setgid(65533) || setuid(65533))
				_exit(100);
			fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
			for (int i = 0; fd >= 0 && i < 256; i++)
				n += peer_add(fd, 40000 + i) > 0;
			_exit(n == 256 ? 0 : 1);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	EXPECT_EQ(1, root_adds(45000));
	EXPECT_EQ(base, stat_of("peers"));
}

/* As nobody: 32 peers, then the limit lowered to 16 binds at once. */
static int lowered(void *arg)
{
	int fd = open("/dev/bx", O_RDWR | O_CLOEXEC), n = 0, code = 0;
	int go = ((int *)arg)[0], done = ((int *)arg)[1];
	char c;

	if (fd < 0)
		return 101;
	for (int i = 0; i < 32; i++)
		n += peer_add(fd, 50000 + i) > 0;
	if (n != 32)
		code |= 1;
	if (write(done, "x", 1) != 1 || read(go, &c, 1) != 1)
		return 102;
	/* 32 held, 16 allowed: no new one, not even the 33rd... */
	if (peer_add(fd, 50100) != -ENOSPC)
		code |= 2;
	/* ...while the ones it holds are still its. */
	if (peer_add(fd, 50000) <= 0)
		code |= 4;
	close(fd);
	return code;
}

TEST_F(limits, limit_lowered)
{
	int go[2], done[2], status;
	pid_t pid;
	char c;

	ASSERT_EQ(0, param_set("user_peers_max", 64));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fds[2] = { go[0], done[1] };

		drop_to_nobody();
		_exit(lowered(fds));
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	ASSERT_EQ(0, param_set("user_peers_max", 16));
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * What a descriptor may do is its opener's: one nobody opened and passed
 * to root stays unprivileged (no service below 1024), one root opened
 * and kept past dropping to nobody keeps root's (a service below 1024).
 */
static int send_fd(int sock, int fd)
{
	char buf[CMSG_SPACE(sizeof(int))] = {}, c = 'f';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char buf[CMSG_SPACE(sizeof(int))] = {}, c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

TEST(opener_credentials)
{
	struct bx_bind b = { .service = 700 };
	int sv[2], fd, status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		drop_to_nobody();
		fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
		_exit(fd < 0 || setup(fd, 8) || send_fd(sv[1], fd) ? 1 : 0);
	}
	fd = recv_fd(sv[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_LE(0, fd);
	/* Root holds it now: still nobody's rights. */
	EXPECT_EQ(-1, ioctl(fd, BX_IOC_BIND, &b));
	EXPECT_EQ(EACCES, errno);
	close(fd);
	/* The other way round. */
	fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setup(fd, 8));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		drop_to_nobody();
		_exit(ioctl(fd, BX_IOC_BIND, &b) ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

/* user_services_max services, then ENOSPC; one unbound makes room. */
static int bind_services(void *arg)
{
	int fd = open("/dev/bx", O_RDWR | O_CLOEXEC), fd2, code = 0;
	struct bx_bind b = { 0 };

	(void)arg;
	if (fd < 0 || setup(fd, 8))
		return 101;
	fd2 = open("/dev/bx", O_RDWR | O_CLOEXEC);
	if (fd2 < 0 || setup(fd2, 8))
		return 102;
	for (int i = 0; i < 3; i++) {
		b.service = 20000 + i;
		if (ioctl(fd, BX_IOC_BIND, &b))
			code |= 1;
	}
	/* The fourth, on another file of the same user. */
	b.service = 20003;
	if (ioctl(fd2, BX_IOC_BIND, &b))
		code |= 1;
	b.service = 20004;
	if (ioctl(fd2, BX_IOC_BIND, &b) != -1 || errno != ENOSPC)
		code |= 2;
	b.service = 20000;
	if (ioctl(fd, BX_IOC_UNBIND, &b))
		code |= 4;
	b.service = 20004;
	if (ioctl(fd2, BX_IOC_BIND, &b))
		code |= 8;
	close(fd);
	close(fd2);
	return code;
}

TEST_F(limits, services_per_user)
{
	struct bx_bind b = { .service = 20005 };
	int fd;

	ASSERT_EQ(0, param_set("user_services_max", 4));
	EXPECT_EQ(0, as_nobody(bind_services, NULL));
	/* Another user (root) is not held back by nobody's count. */
	fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setup(fd, 8));
	EXPECT_EQ(0, ioctl(fd, BX_IOC_BIND, &b));
	close(fd);
}

static int submit_recvs(int fd, unsigned int service, int n)
{
	struct bx_sqe sqe = { .opcode = BX_OP_RECV, .service = service,
			      .len = 4096 };
	struct bx_submit s = { .sqes = (unsigned long)&sqe, .nr = 1 };
	int i;

	for (i = 0; i < n; i++)
		if (ioctl(fd, BX_IOC_SUBMIT, &s) != 1)
			break;
	return i;
}

/*
 * user_ops_max over all of a user's files: 16 RECVs in flight, then
 * EBUSY on either file, although each ring has room; closing one file
 * gives its share back.
 */
static int fill_ops(void *arg)
{
	int fd = open("/dev/bx", O_RDWR | O_CLOEXEC), fd2, code = 0, n;
	struct bx_bind b = { .service = 21000 };
	struct bx_bind b2 = { .service = 21001 };

	(void)arg;
	if (fd < 0 || setup(fd, 64) || ioctl(fd, BX_IOC_BIND, &b))
		return 101;
	fd2 = open("/dev/bx", O_RDWR | O_CLOEXEC);
	if (fd2 < 0 || setup(fd2, 64) || ioctl(fd2, BX_IOC_BIND, &b2))
		return 102;
	n = submit_recvs(fd, 21000, 10);
	n += submit_recvs(fd2, 21001, 10);
	printf("# nobody: %d RECVs in flight over two files\n", n);
	if (n != 16)
		code |= 1;
	if (submit_recvs(fd2, 21001, 1) != 0 || errno != EBUSY)
		code |= 2;
	close(fd);
	if (submit_recvs(fd2, 21001, 10) != 10)
		code |= 4;
	close(fd2);
	return code;
}

TEST_F(limits, ops_per_user)
{
	ASSERT_EQ(0, param_set("user_ops_max", 16));
	EXPECT_EQ(0, as_nobody(fill_ops, NULL));
}

/* Limits are root's to set. */
static int set_limit(void *arg)
{
	(void)arg;
	return param_set("user_ops_max", 1000000) ? 0 : 1;
}

TEST_F(limits, tunables_root_only)
{
	EXPECT_EQ(0, as_nobody(set_limit, NULL));
	EXPECT_EQ(self->saved[2], param_get("user_ops_max"));
}

/* ---- memory ---------------------------------------------------------- */

#define CG	"/sys/fs/cgroup"

static int write_file(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, v, strlen(v)) == (ssize_t)strlen(v) ? 0 : -errno;
	close(fd);
	return ret;
}

/* A value of a "key value" file (memory.events, /proc/vmstat), or -1. */
static long file_key(const char *path, const char *key)
{
	char k[64];
	long v, found = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", k, &v) == 2)
		if (!strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

/*
 * How often the OOM killer ran: /proc/vmstat's oom_kill, or where the
 * kernel counts no VM events (the debug kernel), its log's "invoked
 * oom-killer" lines. -1: neither could be read.
 */
static long oom_runs(void)
{
	long n = file_key("/proc/vmstat", "oom_kill");
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf, *p;

	if (n >= 0)
		return n;
	if (len <= 0)
		return -1;
	buf = malloc(len + 1);
	if (!buf)
		return -1;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (len < 0) {
		free(buf);
		return -1;
	}
	buf[len] = 0;
	n = 0;
	for (p = buf; (p = strstr(p, "invoked oom-killer")); p++)
		n++;
	free(buf);
	return n;
}

static long mem_kb(const char *key)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) &&
		    sscanf(line + strlen(key), ": %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int setup_mb(int fd, long mb)
{
	struct bx_setup s = { .size = sizeof(s),
			      .region_size = (unsigned long long)mb << 20,
			      .cq_entries = 8 };

	return ioctl(fd, BX_IOC_SETUP, &s) ? -errno : 0;
}

/*
 * The default cap on all regions together is a quarter of the machine's
 * memory: more than that fails with ENOMEM, however much is free.
 */
TEST(region_cap_default)
{
	long quarter = mem_kb("MemTotal") / 4 / 1024;
	char buf[32] = "";
	int fd;
	FILE *f;

	f = fopen(PARAMS "region_cap_mb", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	if (atol(buf))
		SKIP(return, "region_cap_mb is set (%s)", buf);
	fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOMEM, setup_mb(fd, quarter + 16));
	EXPECT_EQ(0, setup_mb(fd, 4));
	close(fd);
}

/*
 * A process in a memory cgroup of 16 MiB cannot set up a region of 64:
 * the pages are charged to it and the setup fails with ENOMEM, with no
 * OOM kill; a smaller one works there, a larger one elsewhere.
 */
TEST(memcg_region)
{
	int status, fd;
	pid_t pid;

	if (access(CG "/cgroup.controllers", F_OK)) {
		mkdir(CG, 0755);
		if (mount("none", CG, "cgroup2", 0, NULL))
			SKIP(return, "no cgroup2: %s", strerror(errno));
	}
	if (write_file(CG "/cgroup.subtree_control", "+memory"))
		SKIP(return, "no memory controller");
	rmdir(CG "/bxt");
	ASSERT_EQ(0, mkdir(CG "/bxt", 0755));
	ASSERT_EQ(0, write_file(CG "/bxt/memory.max", "16M"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char me[32];
		int code = 0, ret;

		snprintf(me, sizeof(me), "%d", getpid());
		if (write_file(CG "/bxt/cgroup.procs", me))
			_exit(100);
		fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(101);
		ret = setup_mb(fd, 64);
		printf("# in 16 MiB: a region of 64 MiB: %s\n", strerror(-ret));
		if (ret != -ENOMEM)
			code |= 1;
		if (setup_mb(fd, 4))
			code |= 2;
		close(fd);
		_exit(code);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, file_key(CG "/bxt/memory.events", "oom_kill"));
	rmdir(CG "/bxt");
	/* Outside it, the same size works. */
	fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, setup_mb(fd, 64));
	close(fd);
}

/*
 * Ten processes together asking for more region than the machine has
 * (the cap lifted): some get ENOMEM, none is killed, and the OOM killer
 * never ran. (vmalloc_user() woke it, and it killed a shell and a
 * daemon rather than fail the setup.)
 */
TEST_F(limits, no_oom_kill)
{
	long each = mem_kb("MemTotal") / 1024 / 4, ooms, cap;
	int go[2], ready[2], status, nomem = 0, ok = 0, killed = 0;
	pid_t pids[10];
	char c;

	cap = param_get("region_cap_mb");
	ooms = oom_runs();
	ASSERT_LE(0, ooms);
	ASSERT_EQ(0, param_set("region_cap_mb", 1 << 20));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	for (int i = 0; i < 10; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			int fd = open("/dev/bx", O_RDWR | O_CLOEXEC), ret;
			char r;

			close(go[1]);
			ret = fd < 0 ? -EBADF : setup_mb(fd, each);
			r = ret == 0 ? 'y' : ret == -ENOMEM ? 'n' : 'e';
			/* Hold the region until all have tried. */
			if (write(ready[1], &r, 1) != 1 || read(go[0], &r, 1) < 0)
				_exit(2);
			_exit(0);
		}
	}
	for (int i = 0; i < 10; i++) {
		ASSERT_EQ(1, read(ready[0], &c, 1));
		ok += c == 'y';
		nomem += c == 'n';
	}
	close(go[1]);
	for (int i = 0; i < 10; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		killed += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	param_set("region_cap_mb", cap);
	printf("# 10 x %ld MiB: %d set up, %d ENOMEM\n", each, ok, nomem);
	EXPECT_EQ(10, ok + nomem);
	EXPECT_LT(0, nomem);
	EXPECT_EQ(0, killed);
	EXPECT_EQ(ooms, oom_runs());
}

/*
 * With a second guest (BXRIG_PEER1): a process in a memory cgroup with
 * half a MiB to spare makes a connection -- a struct, 192 buffers of
 * 8 KiB -- to it; the memory is charged there, so the push fails with
 * ENOMEM, and no OOM kill happens.
 */
TEST(memcg_conn)
{
	const char *peer = getenv("BXRIG_PEER1");
	struct bx_peer_addr p = { .family = AF_INET };
	int status, fd;
	pid_t pid;

	if (!peer || !getenv("BXRIG_ID") || strcmp(getenv("BXRIG_ID"), "0"))
		SKIP(return, "needs guest 0 of two or more");
	if (access(CG "/cgroup.controllers", F_OK)) {
		mkdir(CG, 0755);
		if (mount("none", CG, "cgroup2", 0, NULL))
			SKIP(return, "no cgroup2: %s", strerror(errno));
	}
	if (write_file(CG "/cgroup.subtree_control", "+memory"))
		SKIP(return, "no memory controller");
	ASSERT_EQ(1, inet_pton(AF_INET, peer, p.addr));
	/*
	 * The next connection must be made anew, inside the cgroup: the
	 * other guest's tests may have left one, so let idle peers go at
	 * once (peer_linger_ms 0) and wait for the table to empty.
	 */
	{
		long linger = param_get("peer_linger_ms");
		int i;

		ASSERT_EQ(0, param_set("peer_linger_ms", 0));
		for (i = 0; i < 300; i++) {
			if (!system("! grep -q . /sys/kernel/debug/bx/conns"))
				break;
			usleep(100000);
		}
		ASSERT_EQ(0, param_set("peer_linger_ms", linger));
		if (i == 300)
			SKIP(return, "a connection to the peer stayed in use 30 s");
	}
	rmdir(CG "/bxc");
	ASSERT_EQ(0, mkdir(CG "/bxc", 0755));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct bx_sqe sqe = { .opcode = BX_OP_PUSH, .service = 4321,
				      .len = 64 };
		struct bx_submit sub = { .sqes = (unsigned long)&sqe, .nr = 1,
					 .wait = 1 };
		struct bx_setup st = { .size = sizeof(st),
				       .region_size = 1 << 20, .cq_entries = 8 };
		struct bx_cqe *cqes;
		char me[32], lim[32], *ring;
		long cur;
		int ret;

		fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, BX_IOC_SETUP, &st) ||
		    ioctl(fd, BX_IOC_PEER, &p))
			_exit(101);
		ring = mmap(NULL, st.cq_mmap_size, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, st.cq_mmap_off);
		if (ring == MAP_FAILED)
			_exit(102);
		sqe.peer = p.id;
		/*
		 * The region is charged outside; what follows, inside, with
		 * 512 KiB to spare: this process's own pages fit, a
		 * connection's do not.
		 */
		printf("# moving into a memory cgroup\n");
		snprintf(me, sizeof(me), "%d", getpid());
		if (write_file(CG "/bxc/cgroup.procs", me))
			_exit(100);
		{
			FILE *f = fopen(CG "/bxc/memory.current", "r");

			if (!f || fscanf(f, "%ld", &cur) != 1)
				_exit(104);
			fclose(f);
		}
		snprintf(lim, sizeof(lim), "%ld", cur + (512 << 10));
		if (write_file(CG "/bxc/memory.max", lim))
			_exit(103);
		ret = ioctl(fd, BX_IOC_SUBMIT, &sub);
		if (ret == 1) {
			cqes = (struct bx_cqe *)(ring + st.cq_off.cqes);
			ret = cqes[0].res;
		} else {
			ret = -errno;
		}
		printf("# in 1 MiB: a push over a new connection: %s\n",
		       ret < 0 ? strerror(-ret) : "sent");
		_exit(ret == -ENOMEM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, file_key(CG "/bxc/memory.events", "oom_kill"));
	rmdir(CG "/bxc");
}

TEST_HARNESS_MAIN
