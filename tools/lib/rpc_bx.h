/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rpc_bx: what bxperf and bxps do the same way over bx (libbx).
 *
 * A handle: rpc_bx_open() opens /dev/bx, sets up a region (rounded up to
 * pages) and, for a client, resolves its peer, saying what failed.
 *
 * A service's receive buffers (struct rpc_bx_svc): bound, allocated in
 * the region and posted up front, each posted again as soon as its
 * message is handled (rpc_bx_svc_prep() for a batch, rpc_bx_svc_post()
 * alone). Buffer i's completions carry user_data tag | i.
 *
 * A batch of entries (replies and reposts of one reaped batch) goes in
 * as few bx_submit() calls as the kernel takes (rpc_bx_submit_all()); an
 * entry it refuses is handed to the caller's refused() and the ones
 * after it still go.
 */
#ifndef RPC_BX_H
#define RPC_BX_H

#include <stdint.h>

#include "libbx.h"

static inline uint64_t rpc_bx_page_up(uint64_t x)
{
	return (x + 4095) & ~4095ull;
}

/*
 * Open /dev/bx into *@out with a region of @region bytes (rounded up to
 * pages) and @cq_entries completions; with @addr, resolve it into *@peer.
 * Failures are printed, prefixed with @prog. 0 or a negative errno.
 */
int rpc_bx_open(const char *prog, uint64_t region, uint32_t cq_entries,
		const char *addr, struct bx **out, uint32_t *peer);

struct rpc_bx_svc {
	uint32_t	service;
	uint32_t	n, cap;		/* buffers and their bytes */
	uint64_t	tag;		/* buffer i's user_data: tag | i */
	uint8_t		**buf;
};

/* Bind @s->service, allocate @s->n buffers and post them. */
int rpc_bx_svc_init(struct bx *bx, struct rpc_bx_svc *s);
void rpc_bx_svc_fini(struct rpc_bx_svc *s);
/* Prepare @sqe to post buffer @i again. */
int rpc_bx_svc_prep(struct bx *bx, const struct rpc_bx_svc *s,
		    struct bx_sqe *sqe, uint32_t i);
/* Post buffer @i again now. */
int rpc_bx_svc_post(struct bx *bx, const struct rpc_bx_svc *s, uint32_t i);

/*
 * Submit @n entries; each refused one goes to @refused (with the errno)
 * and the rest go on. Returns how many were refused.
 */
unsigned int rpc_bx_submit_all(struct bx *bx, const struct bx_sqe *sqe,
			       unsigned int n,
			       void (*refused)(void *arg,
					       const struct bx_sqe *e,
					       int err),
			       void *arg);

#endif /* RPC_BX_H */
