// SPDX-License-Identifier: GPL-2.0
/*
 * The data path's user API on one guest: setup, mmap, peers, services and
 * submission, with every bad input answered by its documented errno and
 * nothing left behind.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bx.h>

#include "../kselftest_harness.h"

#define REGION	(1 << 20)

static int setup(int fd, unsigned long long size, unsigned int entries,
		 struct bx_setup *out)
{
	struct bx_setup s = { .size = sizeof(s), .region_size = size,
			      .cq_entries = entries };
	int ret = ioctl(fd, BX_IOC_SETUP, &s);

	if (out)
		*out = s;
	return ret;
}

static int submit(int fd, struct bx_sqe *sqe, unsigned int nr)
{
	struct bx_submit s = { .sqes = (unsigned long)sqe, .nr = nr };

	return ioctl(fd, BX_IOC_SUBMIT, &s);
}

static unsigned int peer_of(int fd, const char *addr)
{
	struct bx_peer_addr p = { .family = AF_INET };

	inet_pton(AF_INET, addr, p.addr);
	if (ioctl(fd, BX_IOC_PEER, &p))
		return 0;
	return p.id;
}

FIXTURE(fresh) {
	int fd;
};

FIXTURE_SETUP(fresh)
{
	self->fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(fresh)
{
	close(self->fd);
}

TEST_F(fresh, setup_args)
{
	struct bx_setup s;

	EXPECT_EQ(-1, setup(self->fd, 0, 64, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, 4097, 64, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, (1ULL << 32) + 4096, 64, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, REGION, 100, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, REGION, 4, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, REGION, 65536, NULL));
	EXPECT_EQ(EINVAL, errno);
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.region_size = REGION;
	s.cq_entries = 64;
	s.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_SETUP, &s));
	EXPECT_EQ(EINVAL, errno);
	s.flags = 0;
	s.resv1 = 1;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_SETUP, &s));
	EXPECT_EQ(EINVAL, errno);
	s.resv1 = 0;
	s.size = BX_SETUP_SIZE_VER0 - 8;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_SETUP, &s));
	EXPECT_EQ(EINVAL, errno);
	/* Nothing was created by the failures: a good setup works once. */
	ASSERT_EQ(0, setup(self->fd, REGION, 64, &s));
	EXPECT_EQ(-1, setup(self->fd, REGION, 64, NULL));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_TRUE(s.features & BX_FEAT_DATA);
	EXPECT_EQ(63, s.cq_off.ring_mask ? 63 : 0);
	EXPECT_LE(4096, s.eager_max);
}

static long long region_bytes(void)
{
	long long v = -1;
	char line[128];
	FILE *f = fopen("/sys/kernel/debug/bx/stats", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "region_bytes %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int cap_rw(long *old, long new)
{
	const char *path = "/sys/module/bx/parameters/region_cap_mb";
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%ld", old) == 1;
	fclose(f);
	f = fopen(path, "w");
	if (!ok || !f)
		return -1;
	ok = fprintf(f, "%ld\n", new) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/*
 * All regions of the host together stay within region_cap_mb: a setup
 * that would exceed it fails with ENOMEM and leaves nothing charged, and
 * closing a file returns its share.
 */
TEST_F(fresh, region_cap)
{
	long long base = region_bytes(), now;
	long saved, dummy;
	int fd2, tries;

	if (geteuid() || base < 0)
		SKIP(return, "needs root and bx's debugfs");
	/* Room for one 2 MiB region next to what others hold, not two. */
	ASSERT_EQ(0, cap_rw(&saved, (base >> 20) + 3));
	fd2 = open("/dev/bx", O_RDWR | O_CLOEXEC);
	EXPECT_LE(0, fd2);
	EXPECT_EQ(0, setup(self->fd, 2 << 20, 64, NULL));
	EXPECT_EQ(-1, setup(fd2, 2 << 20, 64, NULL));
	EXPECT_EQ(ENOMEM, errno);
	/* The region and the completion ring's pages. */
	now = region_bytes();
	EXPECT_LE(base + (2 << 20), now);
	EXPECT_GE((long long)((base >> 20) + 3) << 20, now);
	/* The first file's region goes with it; now the second fits. */
	close(self->fd);
	self->fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
	for (tries = 0; tries < 100 && region_bytes() != base; tries++)
		usleep(10000);
	EXPECT_EQ(base, region_bytes());
	EXPECT_EQ(0, setup(fd2, 2 << 20, 64, NULL));
	close(fd2);
	EXPECT_EQ(0, cap_rw(&dummy, saved));
}

/* A newer caller's larger struct: its unknown tail must be zero. */
TEST_F(fresh, setup_larger_struct)
{
	struct {
		struct bx_setup s;
		unsigned long long extra;
	} big;

	memset(&big, 0, sizeof(big));
	big.s.size = sizeof(big);
	big.s.region_size = REGION;
	big.s.cq_entries = 64;
	big.extra = 1;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_SETUP, &big));
	EXPECT_EQ(E2BIG, errno);
	big.extra = 0;
	EXPECT_EQ(0, ioctl(self->fd, BX_IOC_SETUP, &big));
	EXPECT_EQ(sizeof(struct bx_setup), big.s.size);
}

TEST_F(fresh, before_setup)
{
	struct bx_sqe sqe = { .opcode = BX_OP_RECV, .service = 1, .len = 8 };
	struct bx_bind b = { .service = 5 };

	EXPECT_EQ(MAP_FAILED, mmap(NULL, REGION, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->fd, 0));
	EXPECT_EQ(ENXIO, errno);
	EXPECT_EQ(-1, submit(self->fd, &sqe, 1));
	EXPECT_EQ(ENXIO, errno);
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_BIND, &b));
	EXPECT_EQ(ENXIO, errno);
}

TEST_F(fresh, mmap_rules)
{
	struct bx_setup s;
	char *p;

	ASSERT_EQ(0, setup(self->fd, REGION, 64, &s));
	/* Wrong size, wrong offset, private. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, REGION / 2, PROT_READ, MAP_SHARED,
				   self->fd, s.region_mmap_off));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, REGION, PROT_READ, MAP_SHARED,
				   self->fd, 4096));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, REGION, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, self->fd, s.region_mmap_off));
	EXPECT_EQ(EINVAL, errno);
	/* The right one, twice; both see the same zeroed memory. */
	p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 s.region_mmap_off);
	ASSERT_NE(MAP_FAILED, p);
	{
		char *q = mmap(NULL, REGION, PROT_READ, MAP_SHARED, self->fd,
			       s.region_mmap_off);

		ASSERT_NE(MAP_FAILED, q);
		EXPECT_EQ(0, q[12345]);
		p[12345] = 42;
		EXPECT_EQ(42, q[12345]);
		munmap(q, REGION);
	}
	/* The ring: the kernel's layout, entries as asked. */
	{
		char *c = mmap(NULL, s.cq_mmap_size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, self->fd, s.cq_mmap_off);

		ASSERT_NE(MAP_FAILED, c);
		EXPECT_EQ(64, *(unsigned int *)(c + s.cq_off.ring_entries));
		EXPECT_EQ(63, *(unsigned int *)(c + s.cq_off.ring_mask));
		EXPECT_EQ(0, *(unsigned int *)(c + s.cq_off.tail));
		munmap(c, s.cq_mmap_size);
	}
	/* Not inherited by a child. */
	if (!fork())
		_exit(mincore(p, 4096, (unsigned char[1]){ 0 }) == 0 ? 1 : 0);
	{
		int st;

		wait(&st);
		EXPECT_EQ(0, WEXITSTATUS(st));
	}
	munmap(p, REGION);
}

TEST_F(fresh, peer_args)
{
	struct bx_peer_addr p = { .family = AF_INET };

	p.family = AF_UNIX;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_PEER, &p));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	p.family = AF_INET;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_PEER, &p));	/* 0.0.0.0 */
	EXPECT_EQ(EINVAL, errno);
	inet_pton(AF_INET, "224.0.0.1", p.addr);
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_PEER, &p));
	EXPECT_EQ(EINVAL, errno);
	inet_pton(AF_INET, "192.0.2.77", p.addr);
	p.addr[9] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_PEER, &p));
	EXPECT_EQ(EINVAL, errno);
	p.addr[9] = 0;
	p.resv0 = 1;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_PEER, &p));
	EXPECT_EQ(EINVAL, errno);
	p.resv0 = 0;
	ASSERT_EQ(0, ioctl(self->fd, BX_IOC_PEER, &p));
	EXPECT_NE(0, p.id);
	/* The same address is the same peer, from any file. */
	{
		int fd2 = open("/dev/bx", O_RDWR);

		EXPECT_EQ(p.id, peer_of(fd2, "192.0.2.77"));
		close(fd2);
	}
}

FIXTURE(ready) {
	int fd;
	char *region;
	struct bx_setup s;
	unsigned int peer;
};

FIXTURE_SETUP(ready)
{
	struct bx_bind b = { .service = 4242 };

	self->fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, setup(self->fd, REGION, 8, &self->s));
	self->region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED,
			    self->fd, self->s.region_mmap_off);
	ASSERT_NE(MAP_FAILED, self->region);
	ASSERT_EQ(0, ioctl(self->fd, BX_IOC_BIND, &b));
	self->peer = peer_of(self->fd, "192.0.2.78");
	ASSERT_NE(0, self->peer);
}

FIXTURE_TEARDOWN(ready)
{
	if (self->region)
		munmap(self->region, REGION);
	close(self->fd);
}

static int sub1(int fd, struct bx_sqe sqe)
{
	return submit(fd, &sqe, 1);
}

TEST_F(ready, submit_args)
{
	struct bx_sqe ok = { .opcode = BX_OP_RECV, .service = 4242,
			     .len = 4096 }, sqe;

	sqe = ok; sqe.opcode = 0;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = ok; sqe.opcode = 99;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = ok; sqe.flags = 1;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = ok; sqe.flags = 2;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = ok; sqe.resv0 = 1;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = ok; sqe.timeout_ms = 1;	/* a RECV has no deadline */
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = ok; sqe.resv2 = 1;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	/* Buffers outside the region, and offsets that overflow. */
	sqe = ok; sqe.off = REGION - 100;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = ok; sqe.off = ~0ULL - 10;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = ok; sqe.len = BX_MSG_MAX + 1;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EMSGSIZE, errno);
	/* Push and pull: peer, service, sizes. */
	sqe = (struct bx_sqe){ .opcode = BX_OP_PUSH, .peer = self->peer,
			       .service = 1, .len = 64 };
	sqe.peer = 0;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe.peer = 100000;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe.peer = self->peer;
	sqe.service = 0;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe.service = 1;
	sqe.resp_len = 8;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = (struct bx_sqe){ .opcode = BX_OP_PULL, .peer = self->peer,
			       .service = 1, .len = 8192, .resp_len = 64 };
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EMSGSIZE, errno);
	sqe.len = 16;
	sqe.resp_off = REGION - 32;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe.resp_off = 0;
	sqe.resp_len = BX_MSG_MAX + 1;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EMSGSIZE, errno);
	/* RECV only for a service bound here; REPLY only for a request. */
	sqe = ok; sqe.service = 4243;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(ENOTCONN, errno);
	sqe = (struct bx_sqe){ .opcode = BX_OP_REPLY, .token = 12345 };
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(ENOENT, errno);
	sqe.token = 1ULL << 40;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(ENOENT, errno);
	/* Batch size. */
	EXPECT_EQ(-1, submit(self->fd, &ok, 0)); EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, submit(self->fd, &ok, BX_SUBMIT_MAX + 1));
	EXPECT_EQ(EINVAL, errno);
	{
		struct bx_submit s = { .sqes = 8, .nr = 1 };

		EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_SUBMIT, &s));
		EXPECT_EQ(EFAULT, errno);
	}
}

/* BX_SQE_F_VEC: the pieces are checked as the flat buffer is. */
TEST_F(ready, vec_args)
{
	struct bx_vec v[BX_VEC_MAX + 1];
	struct bx_sqe push = { .opcode = BX_OP_PUSH, .flags = BX_SQE_F_VEC,
			       .peer = self->peer, .service = 1,
			       .off = (unsigned long)v, .len = 2 }, sqe;
	int i;

	EXPECT_TRUE(self->s.features & BX_FEAT_VEC);
	for (i = 0; i <= BX_VEC_MAX; i++)
		v[i] = (struct bx_vec){ .off = i * 4096, .len = 100 };
	sqe = push; sqe.flags = BX_SQE_F_VEC | 2;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = push; sqe.len = 0;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = push; sqe.len = BX_VEC_MAX + 1;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe = push; sqe.off = 8;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EFAULT, errno);
	v[1].resv = 1;
	EXPECT_EQ(-1, sub1(self->fd, push)); EXPECT_EQ(EINVAL, errno);
	v[1].resv = 0;
	v[1].len = 0;
	EXPECT_EQ(-1, sub1(self->fd, push)); EXPECT_EQ(EINVAL, errno);
	v[1] = (struct bx_vec){ .off = REGION - 50, .len = 100 };
	EXPECT_EQ(-1, sub1(self->fd, push)); EXPECT_EQ(EINVAL, errno);
	v[1] = (struct bx_vec){ .off = ~0ULL - 10, .len = 100 };
	EXPECT_EQ(-1, sub1(self->fd, push)); EXPECT_EQ(EINVAL, errno);
	v[1] = (struct bx_vec){ .off = 4096, .len = 100 };
	/* A push has no response sink, flat or in pieces. */
	sqe = push; sqe.resp_len = 1;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	/* A pull's request stays flat; its sink is the vector. */
	sqe = (struct bx_sqe){ .opcode = BX_OP_PULL, .flags = BX_SQE_F_VEC,
			       .peer = self->peer, .service = 1, .len = 16,
			       .resp_off = (unsigned long)v, .resp_len = 0 };
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe.resp_len = 2;
	sqe.len = 8192;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EMSGSIZE, errno);
	/* Not for a RECV. */
	sqe = (struct bx_sqe){ .opcode = BX_OP_RECV, .flags = BX_SQE_F_VEC,
			       .service = 4242, .off = (unsigned long)v,
			       .len = 2 };
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	/* A REPLY's pieces are checked before its token. */
	sqe = (struct bx_sqe){ .opcode = BX_OP_REPLY, .flags = BX_SQE_F_VEC,
			       .token = 12345, .off = (unsigned long)v,
			       .len = BX_VEC_MAX + 1 };
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(EINVAL, errno);
	sqe.len = 2;
	EXPECT_EQ(-1, sub1(self->fd, sqe)); EXPECT_EQ(ENOENT, errno);
}

/*
 * Pieces that would take more than 16 registered segments of 1 MiB: a
 * region of 32 MiB, three pieces of 5 MiB + 1 (six segments each).
 */
TEST(vec_segments)
{
	struct bx_vec v[3];
	struct bx_sqe sqe = { .opcode = BX_OP_PUSH, .flags = BX_SQE_F_VEC,
			      .service = 1, .off = (unsigned long)v, .len = 3 };
	int fd = open("/dev/bx", O_RDWR | O_CLOEXEC), i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setup(fd, 32 << 20, 8, NULL));
	sqe.peer = peer_of(fd, "192.0.2.78");
	ASSERT_NE(0, sqe.peer);
	for (i = 0; i < 3; i++)
		v[i] = (struct bx_vec){ .off = i * (6 << 20),
					.len = (5 << 20) + 1 };
	EXPECT_EQ(-1, sub1(fd, sqe)); EXPECT_EQ(EMSGSIZE, errno);
	close(fd);
}

/* A batch stops at the first bad entry and says how many it took. */
TEST_F(ready, batch_partial_and_ring_full)
{
	struct bx_sqe sqe[10];

	for (int i = 0; i < 10; i++)
		sqe[i] = (struct bx_sqe){ .opcode = BX_OP_RECV,
					  .service = 4242, .len = 4096,
					  .off = i * 4096, .user_data = i };
	sqe[3].resv0 = 1;
	EXPECT_EQ(3, submit(self->fd, sqe, 10));
	sqe[3].resv0 = 0;
	/* The ring has 8 entries: 3 + 5 more fit, the next does not. */
	EXPECT_EQ(5, submit(self->fd, sqe + 3, 7));
	EXPECT_EQ(-1, submit(self->fd, sqe + 8, 1));
	EXPECT_EQ(EBUSY, errno);
}

/*
 * The bound on operations in flight is the kernel's own count: a ring
 * head that user space moved past the tail (claiming to have consumed
 * entries that never came) earns no room. Before, head = tail +
 * submitted before each submit got 200,000 RECVs accepted on a ring of
 * 8 entries.
 */
TEST_F(ready, ring_head_lie)
{
	volatile unsigned int *head, *tail;
	struct bx_sqe sqe = { .opcode = BX_OP_RECV, .service = 4242,
			      .len = 4096 };
	unsigned int accepted = 0;
	char *ring;

	ring = mmap(NULL, self->s.cq_mmap_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, self->fd, self->s.cq_mmap_off);
	ASSERT_NE(MAP_FAILED, ring);
	head = (unsigned int *)(ring + self->s.cq_off.head);
	tail = (unsigned int *)(ring + self->s.cq_off.tail);
	for (int i = 0; i < 1000; i++) {
		*head = *tail + accepted;
		if (sub1(self->fd, sqe) != 1) {
			EXPECT_EQ(EBUSY, errno);
			break;
		}
		accepted++;
	}
	EXPECT_LE(accepted, 8) TH_LOG("%u RECVs accepted on a ring of 8", accepted);
	/* Nor does a head far behind the tail. */
	*head = *tail - 100;
	EXPECT_EQ(-1, sub1(self->fd, sqe));
	EXPECT_EQ(EBUSY, errno);
	*head = *tail;
	munmap(ring, self->s.cq_mmap_size);
}

/*
 * Services below BX_SERVICE_PRIV need CAP_NET_BIND_SERVICE: a process
 * without it gets EACCES for them, and binds others as before.
 */
TEST(unprivileged_bind)
{
	int status;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct bx_bind low = { .service = 7 };
		struct bx_bind edge = { .service = BX_SERVICE_PRIV - 1 };
		struct bx_bind high = { .service = BX_SERVICE_PRIV + 4242 };
		int fd, code = 0;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
		if (fd < 0 || setup(fd, REGION, 8, NULL))
			_exit(101);
		if (ioctl(fd, BX_IOC_BIND, &low) != -1 || errno != EACCES)
			code |= 1;
		if (ioctl(fd, BX_IOC_BIND, &edge) != -1 || errno != EACCES)
			code |= 2;
		if (ioctl(fd, BX_IOC_BIND, &high))
			code |= 4;
		close(fd);
		_exit(code);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("as nobody: %#x (1/2 a privileged service bound, 4 an unprivileged one refused; 100+ setup)",
		       WEXITSTATUS(status));
}

static int submit_wait(int fd, struct bx_sqe *sqe, unsigned int nr,
		       unsigned int wait)
{
	struct bx_submit s = { .sqes = (unsigned long)sqe, .nr = nr,
			       .wait = wait };

	return ioctl(fd, BX_IOC_SUBMIT, &s);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * BX_IOC_SUBMIT with @wait sleeps, after taking all, until the ring holds
 * that many completions: here a RECV that another process cancels.
 */
TEST_F(ready, submit_wait)
{
	struct bx_sqe sqe[2] = {
		{ .opcode = BX_OP_RECV, .service = 4242, .len = 4096,
		  .user_data = 1 },
		{ .opcode = BX_OP_RECV, .service = 4242, .len = 4096,
		  .resv0 = 1 },
	};
	struct sigaction sa = { .sa_handler = on_alarm };
	char *c = mmap(NULL, self->s.cq_mmap_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, self->fd, self->s.cq_mmap_off);
	volatile unsigned int *tail;
	struct bx_cqe *cqe;
	int status;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, c);
	tail = (unsigned int *)(c + self->s.cq_off.tail);
	cqe = (struct bx_cqe *)(c + self->s.cq_off.cqes);
	/* More than the ring's 8 entries: refused before taking any. */
	EXPECT_EQ(-1, submit_wait(self->fd, sqe, 1, 9));
	EXPECT_EQ(EINVAL, errno);
	/* Not all taken: no sleep, though nothing will complete. */
	EXPECT_EQ(1, submit_wait(self->fd, sqe, 2, 1));
	EXPECT_EQ(0, *tail);
	/* A signal ends the sleep; the call still says what it took. */
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	alarm(1);
	EXPECT_EQ(1, submit_wait(self->fd, sqe, 1, 1));
	EXPECT_EQ(0, *tail);
	/* Woken by the completion itself: no poll(2) needed after it. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct bx_bind b = { .service = 4242 };

		usleep(200000);
		_exit(ioctl(self->fd, BX_IOC_UNBIND, &b) ? 1 : 0);
	}
	EXPECT_EQ(1, submit_wait(self->fd, sqe, 1, 3));
	EXPECT_EQ(3, *tail);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(1, cqe[i].user_data);
		EXPECT_EQ(-ECANCELED, cqe[i].res);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	munmap(c, self->s.cq_mmap_size);
}

TEST_F(ready, bind_rules)
{
	struct bx_bind b = { .service = 4242 };
	int fd2 = open("/dev/bx", O_RDWR);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, setup(fd2, 4096 * 4, 8, NULL));
	EXPECT_EQ(-1, ioctl(fd2, BX_IOC_BIND, &b));
	EXPECT_EQ(EADDRINUSE, errno);
	EXPECT_EQ(-1, ioctl(fd2, BX_IOC_UNBIND, &b));
	EXPECT_EQ(ENOENT, errno);
	b.service = 0;
	EXPECT_EQ(-1, ioctl(fd2, BX_IOC_BIND, &b));
	EXPECT_EQ(EINVAL, errno);
	b.service = 1;
	b.resv0 = 1;
	EXPECT_EQ(-1, ioctl(fd2, BX_IOC_BIND, &b));
	EXPECT_EQ(EINVAL, errno);
	/*
	 * Releasing the owner frees the service for others. A mapping
	 * holds the file like a descriptor does: both must go.
	 */
	close(self->fd);
	self->fd = open("/dev/null", O_RDONLY);
	b.service = 4242;
	b.resv0 = 0;
	EXPECT_EQ(-1, ioctl(fd2, BX_IOC_BIND, &b));
	EXPECT_EQ(EADDRINUSE, errno);
	munmap(self->region, REGION);
	self->region = NULL;
	b.service = 4242;
	b.resv0 = 0;
	EXPECT_EQ(0, ioctl(fd2, BX_IOC_BIND, &b));
	close(fd2);
}

/* Posted RECVs of an unbound service complete with -ECANCELED. */
TEST_F(ready, unbind_cancels_recvs)
{
	struct bx_sqe sqe = { .opcode = BX_OP_RECV, .service = 4242,
			      .len = 4096, .user_data = 77 };
	struct bx_bind b = { .service = 4242 };
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	char *c = mmap(NULL, self->s.cq_mmap_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, self->fd, self->s.cq_mmap_off);
	struct bx_cqe *cqe;

	ASSERT_NE(MAP_FAILED, c);
	EXPECT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(1, sub1(self->fd, sqe));
	ASSERT_EQ(0, ioctl(self->fd, BX_IOC_UNBIND, &b));
	EXPECT_EQ(1, poll(&p, 1, 1000));
	EXPECT_EQ(1, *(unsigned int *)(c + self->s.cq_off.tail));
	cqe = (struct bx_cqe *)(c + self->s.cq_off.cqes);
	EXPECT_EQ(77, cqe->user_data);
	EXPECT_EQ(-ECANCELED, cqe->res);
	/* Consumed: the file is no longer readable. */
	*(unsigned int *)(c + self->s.cq_off.head) = 1;
	EXPECT_EQ(0, poll(&p, 1, 0));
	EXPECT_EQ(-1, sub1(self->fd, sqe));
	EXPECT_EQ(ENOTCONN, errno);
	munmap(c, self->s.cq_mmap_size);
}

/*
 * A peer that does not exist: the operation fails with a clear error
 * (after address resolution gives up), and closing everything with
 * operations outstanding leaves nothing behind.
 */
TEST_F(ready, unreachable_peer)
{
	struct bx_sqe sqe = { .opcode = BX_OP_PUSH, .peer = self->peer,
			      .service = 1, .len = 100000, .user_data = 5 };
	char *c = mmap(NULL, self->s.cq_mmap_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, self->fd, self->s.cq_mmap_off);
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	struct bx_cqe *cqe;

	ASSERT_NE(MAP_FAILED, c);
	ASSERT_EQ(1, sub1(self->fd, sqe));
	ASSERT_EQ(1, poll(&p, 1, 30000));
	cqe = (struct bx_cqe *)(c + self->s.cq_off.cqes);
	EXPECT_EQ(5, cqe->user_data);
	EXPECT_TRUE(cqe->res == -EHOSTUNREACH || cqe->res == -ETIMEDOUT ||
		    cqe->res == -ECONNREFUSED) TH_LOG("res %d", cqe->res);
	/* Again, then close with it in flight. */
	ASSERT_EQ(1, sub1(self->fd, sqe));
	munmap(c, self->s.cq_mmap_size);
}

TEST_HARNESS_MAIN
