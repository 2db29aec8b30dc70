/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libbx: user-space library for bx, the host-wide RDMA transport.
 *
 * All functions are thread-safe unless noted and return 0 (or a
 * non-negative count) on success and a negative errno on failure; they
 * never set errno for the caller.
 */
#ifndef LIBBX_H
#define LIBBX_H

#include <stdint.h>
#include <linux/bx.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One open /dev/bx. Opaque; create with bx_open(), free with bx_close(). */
struct bx;

/**
 * bx_open() - open /dev/bx
 * @out:   receives the new handle
 * @flags: must be 0
 *
 * Return: 0; -EINVAL for unknown flags; -ENOENT if bx is not loaded;
 * -ENOMEM; or the errno of open(2).
 */
int bx_open(struct bx **out, unsigned int flags);

/** bx_close() - close a handle; NULL is ignored. */
void bx_close(struct bx *bx);

/** bx_fd() - the file descriptor of a handle, for poll(2)/epoll(7). */
int bx_fd(const struct bx *bx);

/**
 * bx_get_info() - describe the module (BX_IOC_GET_INFO)
 * @bx:   handle
 * @info: filled in; any previous content is ignored
 *
 * Return: 0, or -EFAULT/-EINVAL from the kernel.
 */
int bx_get_info(struct bx *bx, struct bx_info *info);

#ifdef __cplusplus
}
#endif

#endif /* LIBBX_H */
