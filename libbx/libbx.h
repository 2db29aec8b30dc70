/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libbx: user-space library for bx, the host-wide RDMA transport.
 *
 * A struct bx is one open /dev/bx. After bx_setup() it owns a region of
 * registered memory mapped into the process; buffers for every operation
 * must lie inside it (bx_buf_alloc()). Payloads move between regions of
 * different hosts without copies above bx_eager_max() bytes.
 *
 *   struct bx *bx;
 *   bx_open(&bx, 0);
 *   bx_setup(bx, 64 << 20, 256);
 *   bx_peer(bx, "192.0.2.1", &peer);
 *   bx_buf_alloc(bx, 1 << 20, &buf);
 *   n = bx_pull(bx, peer, 7, req, req_len, buf, 1 << 20, 5000);
 *
 * Every function is thread-safe and returns 0 (or a non-negative count)
 * on success and a negative errno on failure; none sets errno.
 *
 * Asynchronous operations end with exactly one struct bx_cqe, returned by
 * bx_reap() with the caller's user_data, which must be below 2^63 (the
 * top bit is the library's). Synchronous calls may be mixed with them
 * freely, from any thread.
 */
#ifndef LIBBX_H
#define LIBBX_H

#include <stddef.h>
#include <stdint.h>
/*
 * bx's uapi header, next to this one: installed as <bx/linux/bx.h>, so
 * that it never collides with the distribution's <linux/...> headers.
 */
#include "linux/bx.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bx;

/** bx_open() - open /dev/bx. @flags must be 0. -ENOENT: bx not loaded. */
int bx_open(struct bx **out, unsigned int flags);

/** bx_close() - close a handle (NULL is ignored); frees its region. */
void bx_close(struct bx *bx);

/** bx_fd() - the file descriptor, readable when completions wait. */
int bx_fd(const struct bx *bx);

/** bx_get_info() - describe the module (BX_IOC_GET_INFO). */
int bx_get_info(struct bx *bx, struct bx_info *info);

/**
 * bx_setup() - create and map the region and the completion ring
 * @region_size: bytes, a multiple of 4096
 * @cq_entries:  power of two, 8..32768: bound on operations in flight
 *
 * Return: 0; -EBUSY if already set up; -EINVAL; -ENOMEM (cap/memlock).
 */
int bx_setup(struct bx *bx, uint64_t region_size, uint32_t cq_entries);

/** bx_region() - start of the region (NULL before bx_setup()). */
void *bx_region(const struct bx *bx);
/** bx_region_size() - bytes in the region. */
uint64_t bx_region_size(const struct bx *bx);
/** bx_eager_max() - payloads up to this size are copied, larger not. */
uint32_t bx_eager_max(const struct bx *bx);

/**
 * bx_buf_alloc() - a buffer of @size bytes in the region, 64-byte aligned
 * (page-aligned from 4 KiB). Return: 0, -ENOMEM, -EINVAL, -ENXIO (no
 * region).
 */
int bx_buf_alloc(struct bx *bx, size_t size, void **out);
/** bx_buf_free() - free a buffer; -EINVAL if it is not one. */
int bx_buf_free(struct bx *bx, void *buf);

/**
 * bx_peer() - peer id of an IPv4 or IPv6 address (text form)
 * Return: 0; -EINVAL (unparsable or unusable address); -ENOSPC.
 */
int bx_peer(struct bx *bx, const char *addr, uint32_t *peer);

/** bx_bind() - receive pushes and pulls sent to @service on this host. */
int bx_bind(struct bx *bx, uint32_t service);
/** bx_unbind() - stop; posted receive buffers complete -ECANCELED. */
int bx_unbind(struct bx *bx, uint32_t service);

/**
 * bx_submit() - submit raw operations in one system call
 * Return: number accepted (>= 1) or the error of the first one. Their
 * completions come from bx_reap(). An entry whose @user_data has the top
 * bit set (reserved for the synchronous calls) is refused with -EINVAL.
 */
int bx_submit(struct bx *bx, const struct bx_sqe *sqes, unsigned int nr);
/**
 * bx_submit_wait() - bx_submit(), then, if all were accepted, sleep in the
 * same system call until at least @wait completions (0: none, at most the
 * ring's entries) are ready for bx_reap(). Only a signal ends the sleep
 * early: wait for operations that complete on their own (pushes, pulls
 * and replies always do, at the latest when recovery gives up), not for
 * a message to arrive. Return: as bx_submit().
 */
int bx_submit_wait(struct bx *bx, const struct bx_sqe *sqes, unsigned int nr,
		   unsigned int wait);

/*
 * bx_prep_*() - fill @sqe for bx_submit(), to send several operations in
 * one system call (a server's reply and the receive buffer it posts
 * again, say). Return: 0, or -EINVAL if a buffer is not inside the region
 * (-ENXIO: no region yet). @user_data must not have its top bit set.
 */
int bx_prep_push(struct bx *bx, struct bx_sqe *sqe, uint32_t peer,
		 uint32_t service, const void *buf, uint32_t len,
		 uint64_t user_data);
int bx_prep_pull(struct bx *bx, struct bx_sqe *sqe, uint32_t peer,
		 uint32_t service, const void *req, uint32_t req_len,
		 void *resp, uint32_t resp_cap, uint64_t user_data);
int bx_prep_recv(struct bx *bx, struct bx_sqe *sqe, uint32_t service,
		 void *buf, uint32_t cap, uint64_t user_data);
int bx_prep_reply(struct bx *bx, struct bx_sqe *sqe, uint64_t token,
		  const void *buf, uint32_t len, uint64_t user_data);

/* Asynchronous operations; each ends with one completion. */
int bx_push_async(struct bx *bx, uint32_t peer, uint32_t service,
		  const void *buf, uint32_t len, uint64_t user_data);
int bx_pull_async(struct bx *bx, uint32_t peer, uint32_t service,
		  const void *req, uint32_t req_len, void *resp,
		  uint32_t resp_cap, uint64_t user_data);
int bx_recv_async(struct bx *bx, uint32_t service, void *buf, uint32_t cap,
		  uint64_t user_data);
int bx_reply_async(struct bx *bx, uint64_t token, const void *buf,
		   uint32_t len, uint64_t user_data);

/**
 * bx_reap() - harvest completions of asynchronous operations
 * @timeout_ms: 0 never blocks, -1 waits forever
 *
 * Return: number of entries written to @cqes (0 on timeout).
 */
int bx_reap(struct bx *bx, struct bx_cqe *cqes, unsigned int max,
	    int timeout_ms);

/*
 * Synchronous operations. They return the bytes transferred (pull: the
 * response's size) or a negative errno: the operation's own error, or
 * -ETIMEDOUT when @timeout_ms (-1: none) passed first; the operation then
 * still completes in the background and its buffers must stay allocated.
 *
 * Recovery: bx itself sends pushes and pulls again when their connection
 * fails and a new one comes up within its recover_ms, each push delivered
 * exactly once. On top of that, bx_pull() sends a pull again after any
 * connection error until @timeout_ms -- pulls may reach the server more
 * than once and must be idempotent -- and bx_push() sends a push again
 * only when it certainly was not delivered (-ENOTCONN, -EHOSTUNREACH,
 * -ENETUNREACH, -ECONNREFUSED, -ETIMEDOUT). Between attempts they wait
 * for bx's netlink event that a connection to the peer is up. Otherwise
 * (-ECONNRESET: the peer restarted; -EHOSTDOWN: it stayed unreachable;
 * -EIO, ...) a push's fate is unknown and it is returned to the caller.
 * Documentation/bx.rst, "Recovery semantics".
 */
int bx_push(struct bx *bx, uint32_t peer, uint32_t service, const void *buf,
	    uint32_t len, int timeout_ms);
int bx_pull(struct bx *bx, uint32_t peer, uint32_t service, const void *req,
	    uint32_t req_len, void *resp, uint32_t resp_cap, int timeout_ms);
/** bx_recv() - wait for one message on @service into @buf; see @cqe. */
int bx_recv(struct bx *bx, uint32_t service, void *buf, uint32_t cap,
	    struct bx_cqe *cqe, int timeout_ms);
int bx_reply(struct bx *bx, uint64_t token, const void *buf, uint32_t len,
	     int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* LIBBX_H */
