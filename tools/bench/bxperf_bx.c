// SPDX-License-Identifier: GPL-2.0
/*
 * bxperf over bx (libbx).
 *
 * Server: one handle, one reaping thread. Services, from the base B:
 *
 *   B     pull and STAT requests: 256 receive buffers of 256 bytes
 *   B+1   pushes up to 64 KiB:     64 buffers of 64 KiB
 *   B+2   pushes up to 1 MiB:      -b buffers of 1 MiB (default 32)
 *   B+3   pushes up to 16 MiB:     2 buffers of 16 MiB
 *
 * (bx hands a message the first posted buffer large enough, so sizes get
 * their own services: small pushes never hold the big buffers.) Every
 * receive buffer is posted again as soon as its message is handled. A
 * pull is answered from one 16 MiB buffer shared by all replies (it is
 * only read); a STAT reply from a small buffer freed when it completes.
 *
 * Client: one handle per process; a slot owns a payload buffer of the
 * largest size and a 64-byte request buffer in the region; operations
 * are prepared (bx_prep_pull()/bx_prep_push()) and submitted by the next
 * reap with bx_submit_wait(), which also sleeps for the first completion;
 * completions come from bx_reap().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxperf.h"
#include "rpc_bx.h"

#define REQ_BUFS	256
#define REQ_CAP		256
#define SMALL_BUFS	64
#define SMALL_CAP	(64u << 10)
#define BIG_CAP		(1u << 20)
#define HUGE_BUFS	2
#define HUGE_CAP	BP_MAX_SIZE

/* user_data: kind in the top byte, then index or region offset. */
#define K_SHIFT		56
#define K_RECV		1ull	/* | service index << 48 | buffer index */
#define K_REPLY		2ull	/* shared pull buffer, nothing to free */
#define K_STATREPLY	3ull	/* | region offset of the buffer to free */
#define LOW48		((1ull << 48) - 1)

static uint32_t push_service(uint32_t base, uint32_t size)
{
	return base + (size <= SMALL_CAP ? 1 : size <= BIG_CAP ? 2 : 3);
}

/* ---- server ----------------------------------------------------------- */

/* What one reaped batch answers and posts again: two entries per message. */
struct batch {
	struct bx	*bx;
	unsigned int	n;
	struct bx_sqe	sqe[64];
};

/* The entry to prepare next; queued() keeps it if it was prepared. */
static struct bx_sqe *slot(struct batch *q)
{
	return &q->sqe[q->n];
}

static int queued(struct batch *q, int prep)
{
	q->n += !prep;
	return prep;
}

/* A STAT reply, from a small buffer freed when the reply completes. */
static int stat_reply(struct batch *q, uint64_t token, uint64_t ops)
{
	struct bp_stat st;
	uint8_t *b = NULL;
	int ret;

	ret = bx_buf_alloc(q->bx, sizeof(st), (void **)&b);
	if (ret)
		return ret;
	bp_server_stat(&st, ops);
	memcpy(b, &st, sizeof(st));
	ret = queued(q, bx_prep_reply(q->bx, slot(q), token, b, sizeof(st),
				      K_STATREPLY << K_SHIFT |
				      (uint64_t)(b - (uint8_t *)bx_region(q->bx))));
	if (ret)
		bx_buf_free(q->bx, b);
	return ret;
}

/* An entry the kernel refused is dropped (a STAT reply's buffer freed). */
static void refused(void *arg, const struct bx_sqe *e, int err)
{
	struct bx *bx = arg;

	if (!bp_stop)
		fprintf(stderr, "bxperf: submit (kind %llu): %s\n",
			(unsigned long long)(e->user_data >> K_SHIFT),
			strerror(-err));
	if (e->user_data >> K_SHIFT == K_STATREPLY)
		bx_buf_free(bx, (uint8_t *)bx_region(bx) +
			    (e->user_data & LOW48));
}

/* Submit the batch; refused entries are counted, the others go on. */
static unsigned int flush(struct batch *q)
{
	return rpc_bx_submit_all(q->bx, q->sqe, q->n, refused, q->bx);
}

static int bx_serve(const struct bp_cfg *cfg)
{
	struct rpc_bx_svc svcs[4] = {
		{ cfg->port, REQ_BUFS, REQ_CAP, 0, NULL },
		{ cfg->port + 1, SMALL_BUFS, SMALL_CAP, 0, NULL },
		{ cfg->port + 2, cfg->nbig, BIG_CAP, 0, NULL },
		{ cfg->port + 3, HUGE_BUFS, HUGE_CAP, 0, NULL },
	};
	uint64_t region = rpc_bx_page_up(HUGE_CAP) + (4u << 20), ops = 0;
	uint64_t errs = 0;
	struct bx_cqe cqes[32];
	uint8_t *reply;
	double t0 = wl_now_us();
	struct bx *bx;
	int ret;

	for (int i = 0; i < 4; i++) {
		region += (uint64_t)svcs[i].n * rpc_bx_page_up(svcs[i].cap);
		svcs[i].tag = K_RECV << K_SHIFT | (uint64_t)i << 48;
	}
	if (rpc_bx_open("bxperf", region, 4096, NULL, &bx, NULL))
		return 1;
	ret = bx_buf_alloc(bx, HUGE_CAP, (void **)&reply);
	for (int i = 0; !ret && i < 4; i++)
		ret = rpc_bx_svc_init(bx, &svcs[i]);
	if (ret) {
		fprintf(stderr, "bxperf: server setup: %s\n", strerror(-ret));
		goto out;
	}
	bp_server_ready("bx", cfg);

	while (!bp_stop && !bp_server_done(cfg, t0)) {
		int n = bx_reap(bx, cqes, 32, 200);
		struct batch q = { .bx = bx };

		if (n < 0) {
			fprintf(stderr, "bxperf: reap: %s\n", strerror(-n));
			errs++;
			break;
		}
		for (int i = 0; i < n; i++) {
			const struct bx_cqe *c = &cqes[i];
			uint64_t kind = c->user_data >> K_SHIFT;
			int si = (c->user_data >> 48) & 0xff;
			uint32_t idx = c->user_data & LOW48;
			struct bp_msg rq;

			if (kind == K_STATREPLY) {
				bx_buf_free(bx, (uint8_t *)bx_region(bx) +
					    (c->user_data & LOW48));
				errs += c->res < 0;
				continue;
			}
			if (kind == K_REPLY) {
				errs += c->res < 0;
				continue;
			}
			if (c->res == -ECANCELED)
				continue;
			if (c->res < 0) {
				errs++;
			} else if (c->flags & BX_CQE_F_REQUEST) {
				memcpy(&rq, svcs[si].buf[idx], sizeof(rq));
				if ((size_t)c->res < sizeof(rq) ||
				    rq.magic != BP_MAGIC) {
					errs++;
					ret = queued(&q, bx_prep_reply(bx,
						slot(&q), c->token, reply, 0,
						K_REPLY << K_SHIFT));
				} else if (rq.op == BP_STAT) {
					ret = stat_reply(&q, c->token, ops);
				} else {
					uint32_t sz = rq.size;

					if (sz > c->resp_max)
						sz = c->resp_max;
					if (sz > HUGE_CAP)
						sz = HUGE_CAP;
					ops++;
					ret = queued(&q, bx_prep_reply(bx,
						slot(&q), c->token, reply, sz,
						K_REPLY << K_SHIFT));
				}
				errs += ret < 0;
			} else {
				ops++;		/* a push */
			}
			ret = queued(&q, rpc_bx_svc_prep(bx, &svcs[si],
							 slot(&q), idx));
			errs += ret < 0;
		}
		/* Replies and reposts of the whole batch in one system call. */
		errs += flush(&q);
	}
	printf("bxperf-server transport=bx ops=%llu errors=%llu\n",
	       (unsigned long long)ops, (unsigned long long)errs);
	ret = errs ? -EIO : 0;
out:
	bx_close(bx);
	for (int i = 0; i < 4; i++)
		rpc_bx_svc_fini(&svcs[i]);
	return ret ? 1 : 0;
}

/* ---- client ----------------------------------------------------------- */

struct bp_cli {
	struct bx	*bx;
	uint32_t	peer, base, depth;
	uint8_t		**buf;		/* depth + 1 payload buffers */
	uint8_t		**req;		/* depth + 1 request buffers */
	uint32_t	*want;		/* bytes the op should move */
	struct bx_sqe	*pend;		/* issued, submitted by the next reap */
	uint32_t	npend;
	struct bx_cqe	cqes[64];
};

static void bxc_close(struct bp_cli *c)
{
	if (!c)
		return;
	bx_close(c->bx);
	free(c->buf);
	free(c->req);
	free(c->want);
	free(c->pend);
	free(c);
}

static int bxc_open(const struct bp_cfg *cfg, uint32_t maxsize,
		    uint32_t depth, struct bp_cli **out)
{
	struct bp_cli *c = calloc(1, sizeof(*c));
	uint64_t region;
	int ret;

	if (!c)
		return -ENOMEM;
	c->depth = depth;
	c->base = cfg->port;
	c->buf = calloc(depth + 1, sizeof(*c->buf));
	c->req = calloc(depth + 1, sizeof(*c->req));
	c->want = calloc(depth + 1, sizeof(*c->want));
	c->pend = calloc(depth + 1, sizeof(*c->pend));
	if (!c->buf || !c->req || !c->want || !c->pend) {
		bxc_close(c);
		return -ENOMEM;
	}
	region = (uint64_t)depth * rpc_bx_page_up(maxsize ? maxsize : 1) +
		 rpc_bx_page_up(BP_STAT_SLOT_BYTES) + (1u << 20);
	ret = rpc_bx_open("bxperf", region, 1024, cfg->addr, &c->bx,
			  &c->peer);
	if (ret) {
		bxc_close(c);
		return ret;
	}
	for (uint32_t i = 0; !ret && i <= depth; i++) {
		uint32_t sz = i < depth ? maxsize : BP_STAT_SLOT_BYTES;

		ret = bx_buf_alloc(c->bx, sz ? sz : 1, (void **)&c->buf[i]);
		if (!ret)
			ret = bx_buf_alloc(c->bx, 64, (void **)&c->req[i]);
	}
	if (ret) {
		fprintf(stderr, "bxperf: bx client setup (%llu MiB region): %s\n",
			(unsigned long long)region >> 20, strerror(-ret));
		bxc_close(c);
		return ret;
	}
	*out = c;
	return 0;
}

static void *bxc_buf(struct bp_cli *c, uint32_t slot)
{
	return c->buf[slot];
}

/*
 * Operations are only prepared here; the next reap submits them and
 * sleeps for the first completion in one system call, as a client that
 * waits for its answers anyway should (bx_submit_wait()).
 */
static int bxc_issue(void *ctx, const struct wl_op *o)
{
	struct bp_cli *c = ctx;
	uint32_t op = o->kind, size = o->size, slot = o->slot;
	struct bp_msg rq = { BP_MAGIC, op, size, slot };
	struct bx_sqe *sqe = &c->pend[c->npend];
	int ret;

	if (c->npend > c->depth)
		return -EBUSY;
	if (op == BP_STAT)
		size = sizeof(struct bp_stat);
	c->want[slot] = size;
	if (op == BP_PUSH) {
		ret = bx_prep_push(c->bx, sqe, c->peer,
				   push_service(c->base, size), c->buf[slot],
				   size, slot);
	} else {
		memcpy(c->req[slot], &rq, sizeof(rq));
		ret = bx_prep_pull(c->bx, sqe, c->peer, c->base, c->req[slot],
				   sizeof(rq), c->buf[slot], size, slot);
	}
	c->npend += !ret;
	return ret;
}

static int bxc_reap(void *ctx, struct wl_done *d, int max, int timeout_ms)
{
	struct bp_cli *c = ctx;
	uint32_t i = 0;
	int n;

	/* A refused entry is an error of the cell, as a refused issue was. */
	while (i < c->npend) {
		n = bx_submit_wait(c->bx, &c->pend[i], c->npend - i, 1);
		if (n < 0) {
			c->npend = 0;
			return n;
		}
		i += n;
	}
	c->npend = 0;
	n = bx_reap(c->bx, c->cqes, max < 64 ? max : 64, timeout_ms);
	for (int k = 0; k < n; k++) {
		uint32_t slot = c->cqes[k].user_data;

		d[k].slot = slot;
		d[k].res = c->cqes[k].res;
		d[k].fate = WL_OK;
		if (d[k].res >= 0 && (uint32_t)d[k].res != c->want[slot])
			d[k].res = -EBADMSG;
	}
	return n;
}

const struct bp_transport bp_bx = {
	.name	= "bx",
	.serve	= bx_serve,
	.open	= bxc_open,
	.buf	= bxc_buf,
	.close	= bxc_close,
	.ops	= { .issue = bxc_issue, .reap = bxc_reap },
};
