// SPDX-License-Identifier: GPL-2.0
/* libbx over the real module: handle lifetime and error returns. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "libbx.h"
#include "../kselftest_harness.h"

TEST(open_info_close)
{
	struct bx_info info;
	struct bx *bx = NULL;

	ASSERT_EQ(0, bx_open(&bx, 0));
	ASSERT_NE(NULL, bx);
	EXPECT_LE(0, bx_fd(bx));
	EXPECT_NE(0, fcntl(bx_fd(bx), F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, bx_get_info(bx, &info));
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_TRUE(info.features & BX_FEAT_INFO);
	EXPECT_LE(1, info.ndevs);
	bx_close(bx);
	bx_close(NULL);
}

TEST(open_bad_flags)
{
	struct bx *bx = NULL;

	EXPECT_EQ(-EINVAL, bx_open(&bx, 1));
	EXPECT_EQ(NULL, bx);
}

/* Many handles in one process are independent. */
TEST(many_handles)
{
	struct bx *bx[64];

	for (int i = 0; i < 64; i++)
		ASSERT_EQ(0, bx_open(&bx[i], 0));
	for (int i = 0; i < 64; i += 2)
		bx_close(bx[i]);
	for (int i = 1; i < 64; i += 2) {
		struct bx_info info;

		ASSERT_EQ(0, bx_get_info(bx[i], &info));
		bx_close(bx[i]);
	}
}

TEST_HARNESS_MAIN
