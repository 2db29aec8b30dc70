// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/bx basics: open, BX_IOC_GET_INFO and its argument checks, and that
 * an open file pins the module.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bx.h>

#include "../kselftest_harness.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open("/dev/bx", O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, "bx not loaded");
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(dev, info)
{
	struct bx_info info = { .size = sizeof(info) };

	ASSERT_EQ(0, ioctl(self->fd, BX_IOC_GET_INFO, &info));
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_TRUE(info.features & BX_FEAT_INFO);
	/* The rig creates rxe0 before loading bx. */
	EXPECT_LE(1, info.ndevs);
}

TEST_F(dev, info_size_too_small)
{
	struct bx_info info = { .size = BX_INFO_SIZE_VER0 - 1 };

	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, info_resv_nonzero)
{
	struct bx_info info = { .size = sizeof(info), .resv0 = 1 };

	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	info.resv0 = 0;
	info.resv1 = 0x80000000u;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, info_bad_pointer)
{
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_GET_INFO, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_GET_INFO, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

/* A caller built against a larger struct gets zeros in the tail. */
TEST_F(dev, info_larger_caller)
{
	struct {
		struct bx_info info;
		unsigned char tail[40];
	} big;

	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	memset(big.tail, 0xa5, sizeof(big.tail));
	ASSERT_EQ(0, ioctl(self->fd, BX_IOC_GET_INFO, &big));
	EXPECT_EQ(sizeof(struct bx_info), big.info.size);
	for (size_t i = 0; i < sizeof(big.tail); i++)
		ASSERT_EQ(0, big.tail[i]);
}

/* The last bytes of the caller's struct sit on an unmapped page. */
TEST_F(dev, info_tail_unmapped)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct bx_info *info;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p + pg, pg));
	info = (struct bx_info *)(p + pg - sizeof(*info));
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info) + 16;
	EXPECT_EQ(-1, ioctl(self->fd, BX_IOC_GET_INFO, info));
	EXPECT_EQ(EFAULT, errno);
	munmap(p, pg);
}

TEST_F(dev, unknown_ioctl)
{
	struct bx_info info = { .size = sizeof(info) };

	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(BX_IOC_MAGIC, 0x7f, struct bx_info), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IO('x', 1)));
	EXPECT_EQ(ENOTTY, errno);
}

/* An open file pins the module; a refused rmmod leaves bx working. */
TEST_F(dev, rmmod_while_open)
{
	struct bx_info info = { .size = sizeof(info) };

	if (geteuid())
		SKIP(return, "needs root");
	EXPECT_EQ(-1, syscall(SYS_delete_module, "bx", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_EQ(0, access("/sys/module/bx", F_OK));
	ASSERT_EQ(0, ioctl(self->fd, BX_IOC_GET_INFO, &info));
	EXPECT_LE(1, info.ndevs);
}

/* debugfs lists the rig's rxe0, active, on eth0. */
TEST(debugfs_lists_rxe0)
{
	char line[256];
	int found = 0;
	FILE *f = fopen("/sys/kernel/debug/bx/devices", "r");

	if (!f && errno == ENOENT && access("/sys/kernel/debug/bx", F_OK))
		SKIP(return, "debugfs not mounted or bx not loaded");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "rxe0 ", 5) && strstr(line, "state ACTIVE") &&
		    strstr(line, "netdev eth0"))
			found = 1;
	fclose(f);
	EXPECT_TRUE(found);
}

TEST_HARNESS_MAIN
