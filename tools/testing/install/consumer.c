// SPDX-License-Identifier: GPL-2.0
/*
 * A program built the way users build theirs: against an installed libbx
 * (make install), through pkg-config, shared or static. It uses only the
 * installed header <bx/libbx.h>.
 *
 *   consumer        open /dev/bx, set up a region, allocate a buffer,
 *                   bind and unbind a service; "consumer: ok" and exit 0
 *
 * Without /dev/bx (a host without the module) it says so and exits 3, so
 * that the host side of the install test can run it too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bx/libbx.h>

#define SERVICE	4242

int main(void)
{
	struct bx_info info = { .size = sizeof(info) };
	struct bx *bx;
	void *buf;
	int ret;

	ret = bx_open(&bx, 0);
	if (ret == -ENOENT) {
		printf("consumer: no /dev/bx\n");
		return 3;
	}
	if (ret) {
		printf("consumer: bx_open: %s\n", strerror(-ret));
		return 1;
	}
	ret = bx_get_info(bx, &info);
	if (!ret)
		ret = bx_setup(bx, 1 << 20, 64);
	if (!ret)
		ret = bx_buf_alloc(bx, 4096, &buf);
	if (!ret)
		ret = bx_bind(bx, SERVICE);
	if (!ret)
		ret = bx_unbind(bx, SERVICE);
	bx_close(bx);
	if (ret) {
		printf("consumer: %s\n", strerror(-ret));
		return 1;
	}
	printf("consumer: ok (%u devices)\n", info.ndevs);
	return 0;
}
