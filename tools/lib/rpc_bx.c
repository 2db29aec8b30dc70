// SPDX-License-Identifier: GPL-2.0
/*
 * rpc_bx: handles, receive services and batched submission over libbx,
 * shared by bxperf and bxps (see rpc_bx.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_bx.h"

int rpc_bx_open(const char *prog, uint64_t region, uint32_t cq_entries,
		const char *addr, struct bx **out, uint32_t *peer)
{
	struct bx *bx;
	int ret = bx_open(&bx, 0);

	if (ret) {
		fprintf(stderr, "%s: open /dev/bx: %s\n", prog, strerror(-ret));
		return ret;
	}
	ret = bx_setup(bx, rpc_bx_page_up(region), cq_entries);
	if (ret) {
		fprintf(stderr, "%s: setup %llu MiB: %s\n", prog,
			(unsigned long long)rpc_bx_page_up(region) >> 20,
			strerror(-ret));
		goto err;
	}
	if (addr) {
		ret = bx_peer(bx, addr, peer);
		if (ret) {
			fprintf(stderr, "%s: peer %s: %s\n", prog, addr,
				strerror(-ret));
			goto err;
		}
	}
	*out = bx;
	return 0;
err:
	bx_close(bx);
	return ret;
}

int rpc_bx_svc_prep(struct bx *bx, const struct rpc_bx_svc *s,
		    struct bx_sqe *sqe, uint32_t i)
{
	return bx_prep_recv(bx, sqe, s->service, s->buf[i], s->cap,
			    s->tag | i);
}

int rpc_bx_svc_post(struct bx *bx, const struct rpc_bx_svc *s, uint32_t i)
{
	struct bx_sqe sqe;
	int ret = rpc_bx_svc_prep(bx, s, &sqe, i);

	if (!ret)
		ret = bx_submit(bx, &sqe, 1);
	return ret < 0 ? ret : 0;
}

int rpc_bx_svc_init(struct bx *bx, struct rpc_bx_svc *s)
{
	int ret;

	s->buf = calloc(s->n ? s->n : 1, sizeof(*s->buf));
	if (!s->buf)
		return -ENOMEM;
	ret = bx_bind(bx, s->service);
	for (uint32_t i = 0; !ret && i < s->n; i++) {
		ret = bx_buf_alloc(bx, s->cap, (void **)&s->buf[i]);
		if (!ret)
			ret = rpc_bx_svc_post(bx, s, i);
	}
	return ret;
}

void rpc_bx_svc_fini(struct rpc_bx_svc *s)
{
	/* The buffers go with the region. */
	free(s->buf);
	s->buf = NULL;
}

unsigned int rpc_bx_submit_all(struct bx *bx, const struct bx_sqe *sqe,
			       unsigned int n,
			       void (*refused)(void *arg,
					       const struct bx_sqe *e,
					       int err),
			       void *arg)
{
	unsigned int i = 0, errs = 0;

	while (i < n) {
		int ret = bx_submit(bx, &sqe[i], n - i);

		if (ret > 0) {
			i += ret;
			continue;
		}
		refused(arg, &sqe[i], ret ? ret : -EAGAIN);
		errs++;
		i++;
	}
	return errs;
}
