// SPDX-License-Identifier: LGPL-2.1 OR MIT
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libbx.h"

struct bx {
	int	fd;
};

int bx_open(struct bx **out, unsigned int flags)
{
	struct bx *bx;

	if (flags)
		return -EINVAL;
	bx = calloc(1, sizeof(*bx));
	if (!bx)
		return -ENOMEM;
	bx->fd = open("/dev/" BX_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (bx->fd < 0) {
		int err = -errno;

		free(bx);
		return err;
	}
	*out = bx;
	return 0;
}

void bx_close(struct bx *bx)
{
	if (!bx)
		return;
	close(bx->fd);
	free(bx);
}

int bx_fd(const struct bx *bx)
{
	return bx->fd;
}

int bx_get_info(struct bx *bx, struct bx_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(bx->fd, BX_IOC_GET_INFO, info) ? -errno : 0;
}
