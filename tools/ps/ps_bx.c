// SPDX-License-Identifier: GPL-2.0
/*
 * bxps over bx (libbx).
 *
 * Server: one /dev/bx handle; the pull service (cfg->service) gets NRECV
 * receive buffers of 4 KiB for requests, the push service (+1) NRECV/2
 * buffers large enough for the largest push, all posted up front and
 * reposted as soon as their message is handled. Two separate services
 * keep small requests from taking the big buffers (bx hands a message
 * the first posted buffer large enough). Replies come from two pools of
 * preallocated region buffers (sparse-sized and dense-sized); a request
 * that finds its pool empty is parked, holding its receive buffer, until
 * a reply completes. Several threads reap the one completion ring.
 *
 * Worker: one handle per process, shared by its threads (bx shares one
 * connection per peer host anyway), synchronous bx_pull()/bx_push() from
 * each thread; libbx dispatches completions to the waiting thread. With
 * --bx-handles thread every thread opens its own handle (own region and
 * ring, nothing shared in the process), like a socket per thread. A push
 * or pull that fails with ENOBUFS (no receive buffer posted at the
 * server) is retried after a short sleep and counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps.h"
#include "rpc_bx.h"

#define K_SHIFT		56
#define K_REQ		1ull
#define K_PUSH		2ull
#define K_REPLY		3ull	/* | pool << 55 */
#define IDX_MASK	((1ull << 48) - 1)
#define ENOBUFS_SLEEP_US 200
#define ENOBUFS_GIVEUP	(10 * 1000000 / ENOBUFS_SLEEP_US)	/* ~10 s */

/* ---- server ----------------------------------------------------------- */

struct parked {
	uint64_t	token;
	uint32_t	idx;
	uint32_t	len;
	uint32_t	resp_max;
};

struct pool {
	uint8_t		**buf;
	uint32_t	n, size;
	uint32_t	*free, nfree;
	struct parked	*park;		/* ring of parked requests */
	uint32_t	phead, ptail, pcap;
};

struct bxsrv {
	struct ps_server	*s;
	struct bx		*bx;
	struct rpc_bx_svc	req;		/* pull requests */
	struct rpc_bx_svc	push;		/* pushes */
	struct pool		pool[2];	/* 0: sparse-sized, 1: dense */
	pthread_mutex_t		lock;		/* pools and parked requests */
};

struct bxsrv_thread {
	struct bxsrv		*b;
	pthread_t		th;
	struct ps_srv_stats	st;
};

static int pool_init(struct bx *bx, struct pool *p, uint32_t n,
		     uint32_t size, uint32_t pcap)
{
	p->n = n;
	p->size = size;
	p->pcap = pcap;
	p->buf = calloc(n, sizeof(*p->buf));
	p->free = calloc(n, sizeof(*p->free));
	p->park = calloc(pcap, sizeof(*p->park));
	if (!p->buf || !p->free || !p->park)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		int ret = bx_buf_alloc(bx, size, (void **)&p->buf[i]);

		if (ret)
			return ret;
		p->free[p->nfree++] = i;
	}
	return 0;
}

static void pool_fini(struct pool *p)
{
	free(p->buf);
	free(p->free);
	free(p->park);
}

/*
 * An entry of answer() the kernel refused: a reply's buffer goes back to
 * its pool; a request buffer's repost is tried once more alone.
 */
static void refused(void *arg, const struct bx_sqe *e, int err)
{
	struct bxsrv_thread *t = arg;
	struct bxsrv *b = t->b;
	uint32_t idx = e->user_data & IDX_MASK;

	(void)err;
	if (e->user_data >> K_SHIFT == K_REPLY) {
		struct pool *p = &b->pool[(e->user_data >> 55) & 1];

		t->st.errors++;
		pthread_mutex_lock(&b->lock);
		p->free[p->nfree++] = idx & ((1u << 24) - 1);
		pthread_mutex_unlock(&b->lock);
	} else if (rpc_bx_svc_post(b->bx, &b->req, idx) && !*b->s->stop) {
		t->st.errors++;
	}
}

/* Answer request @pk (in its receive buffer) from pool @pi's buffer @bi. */
static void answer(struct bxsrv_thread *t, int pi, uint32_t bi,
		   const struct parked *pk)
{
	struct bxsrv *b = t->b;
	struct pool *p = &b->pool[pi];
	uint32_t cap = pk->resp_max < p->size ? pk->resp_max : p->size;
	uint64_t ud = K_REPLY << K_SHIFT | (uint64_t)pi << 55 | bi;
	struct bx_sqe sqe[2];
	uint32_t n;
	int ret;

	n = ps_srv_pull(b->s, b->req.buf[pk->idx], pk->len, p->buf[bi], cap,
			&t->st);
	/* The reply and the repost of the request's buffer in one call. */
	ret = bx_prep_reply(b->bx, &sqe[0], pk->token, p->buf[bi], n, ud);
	if (!ret)
		ret = rpc_bx_svc_prep(b->bx, &b->req, &sqe[1], pk->idx);
	if (!ret) {
		rpc_bx_submit_all(b->bx, sqe, 2, refused, t);
		return;
	}
	/* Not prepared: as if both were refused. */
	sqe[0].user_data = ud;
	sqe[1].user_data = b->req.tag | pk->idx;
	refused(t, &sqe[0], ret);
	refused(t, &sqe[1], ret);
}

static void on_request(struct bxsrv_thread *t, const struct bx_cqe *c,
		       uint32_t idx)
{
	struct bxsrv *b = t->b;
	struct parked pk = { c->token, idx, (uint32_t)c->res, c->resp_max };
	uint32_t need = ps_srv_resp_size(b->s, b->req.buf[idx], pk.len);
	int pi = need <= b->pool[0].size ? 0 : 1;
	struct pool *p = &b->pool[pi];
	uint32_t bi;

	pthread_mutex_lock(&b->lock);
	if (!p->nfree) {
		/* Cannot overflow: each parked request holds a receive. */
		p->park[p->ptail++ % p->pcap] = pk;
		pthread_mutex_unlock(&b->lock);
		return;
	}
	bi = p->free[--p->nfree];
	pthread_mutex_unlock(&b->lock);
	answer(t, pi, bi, &pk);
}

static void on_reply_done(struct bxsrv_thread *t, int pi, uint32_t bi)
{
	struct bxsrv *b = t->b;
	struct pool *p = &b->pool[pi];
	struct parked pk;

	pthread_mutex_lock(&b->lock);
	if (p->phead == p->ptail) {
		p->free[p->nfree++] = bi;
		pthread_mutex_unlock(&b->lock);
		return;
	}
	pk = p->park[p->phead++ % p->pcap];
	pthread_mutex_unlock(&b->lock);
	answer(t, pi, bi, &pk);
}

static void *bxsrv_main(void *arg)
{
	struct bxsrv_thread *t = arg;
	struct bxsrv *b = t->b;
	struct bx_cqe cqes[16];

	while (!*b->s->stop) {
		int n = bx_reap(b->bx, cqes, 16, 100);

		if (n < 0) {
			t->st.errors++;
			break;
		}
		for (int i = 0; i < n; i++) {
			const struct bx_cqe *c = &cqes[i];
			uint64_t kind = c->user_data >> K_SHIFT;
			uint32_t idx = c->user_data & IDX_MASK;

			if (c->res < 0 && c->res != -ECANCELED) {
				t->st.errors++;
				if (t->st.errors < 5)
					fprintf(stderr, "bxps server: %s: %s\n",
						kind == K_REPLY ? "reply" :
						"receive", strerror(-c->res));
			}
			if (kind == K_REPLY) {
				on_reply_done(t, (c->user_data >> 55) & 1,
					      idx & ((1u << 24) - 1));
			} else if (kind == K_REQ) {
				if (c->res >= 0 &&
				    (c->flags & BX_CQE_F_REQUEST)) {
					on_request(t, c, idx);
					continue;
				}
				if (c->res >= 0)	/* a push to the pull svc */
					t->st.errors++;
				if (c->res != -ECANCELED &&
				    rpc_bx_svc_post(b->bx, &b->req, idx) &&
				    !*b->s->stop)
					t->st.errors++;
			} else if (kind == K_PUSH) {
				if (c->res >= 0 &&
				    (c->flags & BX_CQE_F_PUSH))
					ps_srv_push(b->s, b->push.buf[idx],
						    c->res, &t->st);
				else if (c->res >= 0)
					t->st.errors++;
				if (c->res != -ECANCELED &&
				    rpc_bx_svc_post(b->bx, &b->push, idx) &&
				    !*b->s->stop)
					t->st.errors++;
			}
		}
	}
	return NULL;
}

static int bx_serve(struct ps_server *s, struct ps_srv_stats *tot)
{
	const struct ps_cfg *cfg = s->cfg;
	const struct ps_info *in = &cfg->info;
	struct bxsrv b = { .s = s };
	struct bxsrv_thread *th = NULL;
	uint32_t small = ps_sparse_resp_max(in), big = ps_resp_max(in);
	uint32_t npool0, npool1;
	uint64_t region;
	int ret, started = 0;

	if (small < sizeof(struct ps_hdr) + sizeof(struct ps_info))
		small = sizeof(struct ps_hdr) + sizeof(struct ps_info);
	b.req = (struct rpc_bx_svc){ cfg->service, cfg->nrecv, PS_REQ_MAX,
				     K_REQ << K_SHIFT, NULL };
	b.push = (struct rpc_bx_svc){ cfg->service + 1, cfg->nrecv / 2,
				      ps_push_max(in), K_PUSH << K_SHIFT, NULL };
	npool0 = cfg->nrecv;
	npool1 = cfg->nrecv / 4 < 8 ? 8 : cfg->nrecv / 4;
	region = cfg->region_mb ? (uint64_t)cfg->region_mb << 20 :
		 b.req.n * rpc_bx_page_up(PS_REQ_MAX) +
		 b.push.n * rpc_bx_page_up(b.push.cap) +
		 npool0 * rpc_bx_page_up(small) +
		 npool1 * rpc_bx_page_up(big) + (4u << 20);
	pthread_mutex_init(&b.lock, NULL);
	ret = rpc_bx_open("bxps", region, 4096, NULL, &b.bx, NULL);
	if (ret)
		return ret;
	s->reg_bytes = bx_region_size(b.bx);
	th = calloc(cfg->threads, sizeof(*th));
	ret = -ENOMEM;
	if (!th)
		goto out;
	ret = pool_init(b.bx, &b.pool[0], npool0, small, b.req.n);
	if (!ret)
		ret = pool_init(b.bx, &b.pool[1], npool1, big, b.req.n);
	if (!ret)
		ret = rpc_bx_svc_init(b.bx, &b.req);
	if (!ret)
		ret = rpc_bx_svc_init(b.bx, &b.push);
	if (ret) {
		fprintf(stderr, "bxps: services %u/%u and their buffers: %s\n",
			b.req.service, b.push.service, strerror(-ret));
		goto out;
	}
	for (; started < cfg->threads; started++) {
		th[started].b = &b;
		if (pthread_create(&th[started].th, NULL, bxsrv_main,
				   &th[started])) {
			ret = -EAGAIN;
			*s->stop = 1;
			break;
		}
	}
	if (started == cfg->threads)
		ps_srv_ready(s);
	for (int i = 0; i < started; i++) {
		pthread_join(th[i].th, NULL);
		ps_srv_stats_add(tot, &th[i].st);
	}
out:
	/* Closing cancels posted receives and answers pending pulls. */
	bx_close(b.bx);
	pool_fini(&b.pool[0]);
	pool_fini(&b.pool[1]);
	rpc_bx_svc_fini(&b.req);
	rpc_bx_svc_fini(&b.push);
	free(th);
	return ret;
}

/* ---- worker ----------------------------------------------------------- */

struct ps_client {
	const struct ps_cfg *cfg;
	struct bx	*bx;		/* shared handle, NULL: one per thread */
	uint32_t	peer;
	uint32_t	svc;
};

struct ps_conn {
	struct ps_client *c;
	struct bx	*bx;
	uint32_t	peer;
	bool		own;		/* @bx is this thread's */
};

static int open_handle(const struct ps_cfg *cfg, uint64_t region,
		       struct bx **bx, uint32_t *peer)
{
	return rpc_bx_open("bxps", region, 1024, cfg->addr, bx, peer);
}

static int bx_client_init(const struct ps_cfg *cfg, struct ps_client **out)
{
	struct ps_client *c = calloc(1, sizeof(*c));
	uint64_t region = cfg->region_mb ? (uint64_t)cfg->region_mb << 20 :
			  cfg->thread_bytes * cfg->threads + (1u << 20);
	int ret;

	if (!c)
		return -ENOMEM;
	c->cfg = cfg;
	c->svc = cfg->service;
	/* The INFO exchange (no thread_bytes yet) always shares. */
	if (!cfg->bx_per_thread || !cfg->thread_bytes) {
		ret = open_handle(cfg, region, &c->bx, &c->peer);
		if (ret) {
			free(c);
			return ret;
		}
	}
	*out = c;
	return 0;
}

static void bx_client_fini(struct ps_client *c)
{
	bx_close(c->bx);
	free(c);
}

static int bx_conn_open(struct ps_client *c, struct ps_conn **out)
{
	struct ps_conn *pc = calloc(1, sizeof(*pc));
	int ret;

	if (!pc)
		return -ENOMEM;
	pc->c = c;
	pc->bx = c->bx;
	pc->peer = c->peer;
	if (!c->bx) {
		/* libbx serves buffers up to 64 KiB from slabs of 8 blocks
		 * (256 KiB for the sparse response's 32 KiB class).
		 */
		ret = open_handle(c->cfg, c->cfg->thread_bytes + (1u << 20),
				  &pc->bx, &pc->peer);
		if (ret) {
			free(pc);
			return ret;
		}
		pc->own = true;
	}
	*out = pc;
	return 0;
}

static void bx_conn_close(struct ps_conn *pc)
{
	/* Buffers go with the region. */
	if (pc->own)
		bx_close(pc->bx);
	free(pc);
}

static void *bx_alloc(struct ps_conn *pc, size_t len)
{
	void *p;

	return bx_buf_alloc(pc->bx, len, &p) ? NULL : p;
}

static int bx_do_pull(struct ps_conn *pc, const void *req, uint32_t len,
		      void *resp, uint32_t cap, uint64_t *retries)
{
	for (int i = 0;; i++) {
		int r = bx_pull(pc->bx, pc->peer, pc->c->svc, req, len, resp,
				cap, PS_OP_TIMEOUT_MS);

		if (r != -ENOBUFS || i == ENOBUFS_GIVEUP)
			return r;
		(*retries)++;
		ps_sleep_us(ENOBUFS_SLEEP_US);
	}
}

static int bx_do_push(struct ps_conn *pc, const void *msg, uint32_t len,
		      uint64_t *retries)
{
	for (int i = 0;; i++) {
		int r = bx_push(pc->bx, pc->peer, pc->c->svc + 1, msg, len,
				PS_OP_TIMEOUT_MS);

		if (r != -ENOBUFS || i == ENOBUFS_GIVEUP)
			return r < 0 ? r : 0;
		(*retries)++;
		ps_sleep_us(ENOBUFS_SLEEP_US);
	}
}

/* Host-wide: bx connections and registered region bytes (debugfs). */
static void bx_host_sample(const struct ps_cfg *cfg, struct ps_host *h)
{
	FILE *f = fopen("/sys/kernel/debug/bx/stats", "r");
	char key[64];
	long long v;

	(void)cfg;
	h->conns = -1;
	h->reg_bytes = -1;
	if (!f)
		return;
	while (fscanf(f, "%63s %lld", key, &v) == 2) {
		if (!strcmp(key, "conns"))
			h->conns = v;
		else if (!strcmp(key, "region_bytes"))
			h->reg_bytes = v;
	}
	fclose(f);
}

const struct ps_transport ps_bx_transport = {
	.name		= "bx",
	.serve		= bx_serve,
	.client_init	= bx_client_init,
	.client_fini	= bx_client_fini,
	.conn_open	= bx_conn_open,
	.conn_close	= bx_conn_close,
	.buf_alloc	= bx_alloc,
	.pull		= bx_do_pull,
	.push		= bx_do_push,
	.host_sample	= bx_host_sample,
};
