// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * bxkv: the key-value layer (bxkv.h) on libbx; the wire format and the
 * key partitioning are in kv_wire.c.
 *
 * Server: one bx handle. Pull requests come to @service into @nrecv
 * buffers of KV_REQ_MAX bytes, pushes to @service + 1 into @npush
 * buffers of @msg_max (two services, so that small requests do not take
 * the big buffers: bx hands a message the first posted buffer large
 * enough). Each is posted again once its message is handled; a pull's
 * buffer goes back in the same bx_submit() as its reply. A pull of a
 * range is answered from the store itself; a list is gathered into one
 * of @nreply reply buffers, and waits (parked, holding its receive
 * buffer) when none is free. One poller at a time (@poll_lock) reaps
 * and handles, so requests are handled in the order they arrived.
 *
 * Worker: one bx handle; a call cuts its keys into requests (kv_split(),
 * kv_chunk()), submits as many as the per-server limit allows in one
 * bx_submit(), reaps, and submits more or again, until every request has
 * its answer or the call has failed and nothing is left in flight.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bxkv.h"
#include "internal.h"
#include "kv_wire.h"
#include "libbx.h"

#define K_SHIFT		56
#define K_REQ		1ull	/* a pull request buffer's receive */
#define K_PUSH		2ull	/* a push buffer's receive */
#define K_REPLY		3ull	/* a reply from reply buffer idx */
#define K_ZREPLY	4ull	/* a reply from the store or empty */
#define IDX_MASK	((1ull << 32) - 1)

static uint64_t page_up(uint64_t x)
{
	return (x + 4095) & ~4095ull;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static uint32_t pow2_up(uint32_t x)
{
	uint32_t p = 8;

	while (p < x && p < BX_CQ_ENTRIES_MAX)
		p <<= 1;
	return p;
}

/* ---- server ----------------------------------------------------------- */

struct parked {
	uint64_t	token;
	uint64_t	kind;
	uint32_t	idx;
	uint32_t	len;
	uint32_t	resp_max;
};

struct bxkv_server {
	struct bxkv_server_cfg	cfg;
	struct bx		*bx;
	float			*store;
	/* Per-key lengths: key begin + i at store[off[i] .. off[i + 1]). */
	uint64_t		*off;
	uint8_t			**req, **push, **reply;
	uint32_t		*reply_free, nreply_free;
	struct parked		*park;		/* FIFO of parked pulls */
	uint32_t		phead, ptail, pcap;
	struct bxkv_server_stats st;
	pthread_mutex_t		lock;		/* all of the above */
	/* One poller at a time: requests are handled in arrival order. */
	pthread_mutex_t		poll_lock;
	pthread_t		thread;
	bool			running;
	volatile bool		stop;
	/* A whole-request handler, and its arrays (one request's keys). */
	bxkv_handle_fn		handle;
	void			*handle_arg;
	uint64_t		*hkeys;
	uint32_t		*hlens;
};

static uint8_t *recv_buf(struct bxkv_server *s, uint64_t kind, uint32_t idx)
{
	return kind == K_REQ ? s->req[idx] : s->push[idx];
}

static int prep_repost(struct bxkv_server *s, struct bx_sqe *sqe,
		       uint64_t kind, uint32_t idx)
{
	if (kind == K_REQ)
		return bx_prep_recv(s->bx, sqe, s->cfg.service, s->req[idx],
				    KV_REQ_MAX, K_REQ << K_SHIFT | idx);
	return bx_prep_recv(s->bx, sqe, s->cfg.service + 1, s->push[idx],
			    s->cfg.msg_max, K_PUSH << K_SHIFT | idx);
}

static void repost(struct bxkv_server *s, uint64_t kind, uint32_t idx)
{
	struct bx_sqe sqe;
	int ret = prep_repost(s, &sqe, kind, idx);

	if (!ret)
		ret = bx_submit(s->bx, &sqe, 1);
	if (ret < 0 && !s->stop)
		s->st.errors++;
}

/*
 * Send the reply @sqe (prepared with result @prep) and post the request's
 * buffer again, in one call; reply buffer @reply_buf (-1: none) goes back
 * to the pool if the reply is not taken.
 */
static void reply_and_repost(struct bxkv_server *s, struct bx_sqe *sqe,
			     int prep, uint64_t kind, uint32_t idx,
			     long reply_buf)
{
	int ret = prep;

	if (!ret)
		ret = prep_repost(s, &sqe[1], kind, idx);
	if (!ret)
		ret = bx_submit(s->bx, sqe, 2);
	if (ret == 2)
		return;
	if (ret < 1) {		/* the reply was not taken */
		s->st.errors++;
		if (reply_buf >= 0)
			s->reply_free[s->nreply_free++] = (uint32_t)reply_buf;
	}
	repost(s, kind, idx);
}

/* Where @key's values are in the store, in floats, and how many. */
static uint64_t key_off(const struct bxkv_server *s, uint64_t key)
{
	uint64_t i = key - s->cfg.begin;

	return s->off ? s->off[i] : i * s->cfg.val_len;
}

static uint32_t key_len(const struct bxkv_server *s, uint64_t key)
{
	uint64_t i = key - s->cfg.begin;

	return s->off ? (uint32_t)(s->off[i + 1] - s->off[i]) :
			s->cfg.val_len;
}

static void apply_sum(uint64_t key, float *dst, const float *src,
		      uint32_t len, void *arg)
{
	(void)key;
	(void)arg;
	for (uint32_t j = 0; j < len; j++)
		dst[j] += src[j];
}

static void serve_push(struct bxkv_server *s, const uint8_t *buf,
		       uint32_t len)
{
	struct kv_limits lim = { KV_OP_PUSH, s->cfg.begin, s->cfg.end,
				 s->cfg.val_len, 0, s->off };
	bxkv_apply_fn apply = s->cfg.apply ? s->cfg.apply : apply_sum;
	const float *src;
	struct kv_req r;

	if (kv_decode(buf, len, &lim, &r)) {
		s->st.bad++;
		return;
	}
	if (s->handle) {
		struct bxkv_push p = { s->hkeys, s->hlens, r.vals, r.nkeys,
				       r.nvals };

		/* nkeys <= nvals <= msg_max / 4: the arrays' (kv_decode()). */
		for (uint32_t i = 0; i < r.nkeys; i++) {
			s->hkeys[i] = kv_req_key(&r, i);
			s->hlens[i] = key_len(s, s->hkeys[i]);
		}
		s->handle(s, &p, s->handle_arg);
		goto done;
	}
	src = r.vals;
	for (uint32_t i = 0; i < r.nkeys; i++) {
		uint64_t key = kv_req_key(&r, i);
		uint32_t n = key_len(s, key);	/* = kv_req_len(): decoded */

		apply(key, s->store + key_off(s, key), src, n,
		      s->cfg.apply_arg);
		src += n;
	}
done:
	s->st.pushes++;
	s->st.keys_pushed += r.nkeys;
}

/*
 * Answer pull @pk, still in its receive buffer. Returns false if it
 * needs a reply buffer and none is free (the caller parks it).
 */
static bool serve_pull(struct bxkv_server *s, const struct parked *pk)
{
	const uint8_t *buf = recv_buf(s, pk->kind, pk->idx);
	struct kv_limits lim = { KV_OP_PULL, s->cfg.begin, s->cfg.end,
				 s->cfg.val_len, pk->resp_max, s->off };
	struct bx_sqe sqe[2];
	struct kv_req r;
	uint64_t bytes;
	long bi;
	float *out;
	int ret;

	if (kv_decode(buf, pk->len, &lim, &r)) {
		/* Refused: an empty answer. */
		s->st.bad++;
		ret = bx_prep_reply(s->bx, &sqe[0], pk->token, NULL, 0,
				    K_ZREPLY << K_SHIFT);
		reply_and_repost(s, sqe, ret, pk->kind, pk->idx, -1);
		return true;
	}
	bytes = 4 * r.nvals;
	if (r.flags & KV_F_RANGE) {
		/* Straight from the store (bytes <= resp_max: kv_decode()). */
		ret = bx_prep_reply(s->bx, &sqe[0], pk->token,
				    s->store + key_off(s, r.first),
				    (uint32_t)bytes, K_ZREPLY << K_SHIFT);
		s->st.zero_copy++;
		bi = -1;
	} else {
		if (bytes > s->cfg.msg_max) {
			s->st.bad++;
			ret = bx_prep_reply(s->bx, &sqe[0], pk->token, NULL, 0,
					    K_ZREPLY << K_SHIFT);
			reply_and_repost(s, sqe, ret, pk->kind, pk->idx, -1);
			return true;
		}
		if (!s->nreply_free)
			return false;
		bi = s->reply_free[--s->nreply_free];
		out = (float *)(void *)s->reply[bi];
		for (uint32_t i = 0, at = 0; i < r.nkeys; i++) {
			uint64_t key = kv_req_key(&r, i);
			uint32_t n = key_len(s, key);

			memcpy(out + at, s->store + key_off(s, key), 4ull * n);
			at += n;	/* < msg_max / 4: checked above */
		}
		ret = bx_prep_reply(s->bx, &sqe[0], pk->token, out,
				    (uint32_t)bytes,
				    K_REPLY << K_SHIFT | (uint64_t)bi);
	}
	s->st.pulls++;
	s->st.keys_pulled += r.nkeys;
	reply_and_repost(s, sqe, ret, pk->kind, pk->idx, bi);
	return true;
}

static void serve_parked(struct bxkv_server *s)
{
	while (s->phead != s->ptail && s->nreply_free) {
		struct parked pk = s->park[s->phead % s->pcap];

		s->phead++;
		serve_pull(s, &pk);
	}
}

static void handle(struct bxkv_server *s, const struct bx_cqe *c)
{
	uint64_t kind = c->user_data >> K_SHIFT;
	uint32_t idx = c->user_data & IDX_MASK;

	if (kind == K_REPLY || kind == K_ZREPLY) {
		if (c->res < 0)
			s->st.errors++;
		if (kind == K_REPLY) {
			s->reply_free[s->nreply_free++] = idx;
			serve_parked(s);
		}
		return;
	}
	if (c->res == -ECANCELED)	/* unbound: closing */
		return;
	if (c->res < 0) {
		s->st.errors++;
	} else if (c->flags & BX_CQE_F_REQUEST) {
		struct parked pk = { c->token, kind, idx, (uint32_t)c->res,
				     c->resp_max };

		if (s->phead != s->ptail || !serve_pull(s, &pk)) {
			/* Cannot overflow: each parked pull holds a buffer. */
			s->park[s->ptail++ % s->pcap] = pk;
			s->st.parked++;
		}
		return;
	} else if (c->flags & BX_CQE_F_PUSH) {
		serve_push(s, recv_buf(s, kind, idx), (uint32_t)c->res);
	}
	repost(s, kind, idx);
}

static int poll_once(struct bxkv_server *s, int timeout_ms)
{
	struct bx_cqe cqes[32];
	int n;

	pthread_mutex_lock(&s->poll_lock);
	n = bx_reap(s->bx, cqes, 32, timeout_ms);
	if (n > 0) {
		pthread_mutex_lock(&s->lock);
		for (int i = 0; i < n; i++)
			handle(s, &cqes[i]);
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&s->poll_lock);
	return n;
}

int bxkv_server_poll(struct bxkv_server *s, int timeout_ms)
{
	if (s->running)
		return -EBUSY;
	return poll_once(s, timeout_ms);
}

static void *server_main(void *arg)
{
	struct bxkv_server *s = arg;

	while (!s->stop)
		if (poll_once(s, 100) < 0)
			break;
	return NULL;
}

int bxkv_server_set_handle(struct bxkv_server *s, bxkv_handle_fn fn,
			   void *arg)
{
	/* A pushed key has a float at least: at most this many a push. */
	size_t cap = s->cfg.msg_max / 4 + 1;

	if (s->running)
		return -EBUSY;
	if (fn && !s->hkeys) {
		s->hkeys = calloc(cap, sizeof(*s->hkeys));
		s->hlens = calloc(cap, sizeof(*s->hlens));
		if (!s->hkeys || !s->hlens) {
			free(s->hkeys);
			free(s->hlens);
			s->hkeys = NULL;
			s->hlens = NULL;
			return -ENOMEM;
		}
	}
	s->handle = fn;
	s->handle_arg = arg;
	return 0;
}

int bxkv_server_start(struct bxkv_server *s)
{
	if (s->running)
		return -EBUSY;
	s->stop = false;
	if (pthread_create(&s->thread, NULL, server_main, s))
		return -EAGAIN;
	s->running = true;
	return 0;
}

int bxkv_server_stop(struct bxkv_server *s)
{
	if (!s->running)
		return 0;
	s->stop = true;
	pthread_join(s->thread, NULL);
	s->running = false;
	return 0;
}

void bxkv_server_stats(struct bxkv_server *s, struct bxkv_server_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	pthread_mutex_unlock(&s->lock);
}

float *bxkv_server_value(struct bxkv_server *s, uint64_t key)
{
	if (key < s->cfg.begin || key >= s->cfg.end)
		return NULL;
	return s->store + key_off(s, key);
}

uint32_t bxkv_server_value_len(struct bxkv_server *s, uint64_t key)
{
	if (key < s->cfg.begin || key >= s->cfg.end)
		return 0;
	return key_len(s, key);
}

void bxkv_server_destroy(struct bxkv_server *s)
{
	if (!s)
		return;
	bxkv_server_stop(s);
	/* Closing cancels the posted receives and answers pending pulls. */
	bx_close(s->bx);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->poll_lock);
	free(s->req);
	free(s->push);
	free(s->reply);
	free(s->reply_free);
	free(s->park);
	free(s->off);
	free(s->hkeys);
	free(s->hlens);
	free(s);
}

static int server_buffers(struct bxkv_server *s)
{
	const struct bxkv_server_cfg *c = &s->cfg;
	uint64_t store = 4 * key_off(s, c->end);
	int ret;

	ret = bx_buf_alloc(s->bx, store, (void **)&s->store);
	if (ret)
		return ret;
	memset(s->store, 0, store);
	for (uint32_t i = 0; i < c->nreply; i++) {
		ret = bx_buf_alloc(s->bx, c->msg_max, (void **)&s->reply[i]);
		if (ret)
			return ret;
		s->reply_free[s->nreply_free++] = i;
	}
	for (uint32_t i = 0; i < c->nrecv; i++) {
		ret = bx_buf_alloc(s->bx, KV_REQ_MAX, (void **)&s->req[i]);
		if (ret)
			return ret;
	}
	for (uint32_t i = 0; i < c->npush; i++) {
		ret = bx_buf_alloc(s->bx, c->msg_max, (void **)&s->push[i]);
		if (ret)
			return ret;
	}
	ret = bx_bind(s->bx, c->service);
	if (!ret)
		ret = bx_bind(s->bx, c->service + 1);
	for (uint32_t i = 0; !ret && i < c->nrecv; i++) {
		struct bx_sqe sqe;

		ret = prep_repost(s, &sqe, K_REQ, i);
		if (!ret)
			ret = bx_submit(s->bx, &sqe, 1);
		ret = ret < 0 ? ret : 0;
	}
	for (uint32_t i = 0; !ret && i < c->npush; i++) {
		struct bx_sqe sqe;

		ret = prep_repost(s, &sqe, K_PUSH, i);
		if (!ret)
			ret = bx_submit(s->bx, &sqe, 1);
		ret = ret < 0 ? ret : 0;
	}
	return ret;
}

/*
 * The store's layout: @lens (one per key, >= 1) into s->off, or val_len
 * each; at most 2^46 floats in all. *@max_len: the longest value.
 */
static int server_lens(struct bxkv_server *s, const uint32_t *lens,
		       uint32_t *max_len)
{
	const uint64_t limit = (UINT64_MAX >> 16) / 4;
	uint64_t n = s->cfg.end - s->cfg.begin;

	*max_len = s->cfg.val_len;
	if (!lens)
		return n > limit / s->cfg.val_len ? -EINVAL : 0;
	if (n > limit)
		return -EINVAL;
	s->off = malloc((n + 1) * sizeof(*s->off));
	if (!s->off)
		return -ENOMEM;
	s->off[0] = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (!lens[i] || lens[i] > UINT32_MAX / 4)
			return -EINVAL;
		s->off[i + 1] = s->off[i] + lens[i];
		if (s->off[i + 1] > limit)
			return -EINVAL;
		if (lens[i] > *max_len)
			*max_len = lens[i];
	}
	return 0;
}

int bxkv_server_create(struct bxkv_server **out,
		       const struct bxkv_server_cfg *cfg)
{
	struct bxkv_server *s;
	struct bxkv_server_cfg *c;
	uint64_t region, store;
	uint32_t max_len;
	int ret;

	if (!cfg->val_len == !cfg->lens || cfg->end <= cfg->begin ||
	    !cfg->service || cfg->service == UINT32_MAX ||
	    cfg->val_len > UINT32_MAX / 4)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	c = &s->cfg;
	*c = *cfg;
	c->msg_max = c->msg_max ? c->msg_max : BXKV_MSG_MAX_DEFAULT;
	c->nrecv = c->nrecv ? c->nrecv : 64;
	c->npush = c->npush ? c->npush : 8;
	c->nreply = c->nreply ? c->nreply : 8;
	c->lens = NULL;		/* copied into s->off */
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->poll_lock, NULL);
	ret = server_lens(s, cfg->lens, &max_len);
	if (ret)
		goto fail;
	ret = -EINVAL;
	if (c->msg_max < KV_HDR_LEN + 8 + (s->off ? 8 : 0) + 4ull * max_len ||
	    c->msg_max > BX_MSG_MAX || c->nrecv > 4096 ||
	    c->npush > 4096 || c->nreply > 4096)
		goto fail;
	store = page_up(4 * key_off(s, c->end));
	s->pcap = c->nrecv + c->npush;
	s->req = calloc(c->nrecv, sizeof(*s->req));
	s->push = calloc(c->npush, sizeof(*s->push));
	s->reply = calloc(c->nreply, sizeof(*s->reply));
	s->reply_free = calloc(c->nreply, sizeof(*s->reply_free));
	s->park = calloc(s->pcap, sizeof(*s->park));
	ret = -ENOMEM;
	if (!s->req || !s->push || !s->reply || !s->reply_free || !s->park)
		goto fail;
	ret = bx_open(&s->bx, 0);
	if (ret)
		goto fail;
	/* Slack for the allocator's slabs of small buffers. */
	region = store + c->nrecv * (uint64_t)KV_REQ_MAX +
		 (c->npush + c->nreply) * page_up(c->msg_max) + (1u << 20);
	/*
	 * The ring bounds the operations in flight: the posted receives
	 * and the replies, which from the store need no reply buffer.
	 */
	ret = bx_setup(s->bx, page_up(region),
		       pow2_up(4 * (c->nrecv + c->npush + c->nreply)));
	if (!ret)
		ret = server_buffers(s);
	if (ret)
		goto fail;
	*out = s;
	return 0;
fail:
	bxkv_server_destroy(s);
	return ret;
}

/* ---- worker ----------------------------------------------------------- */

enum { CH_NEW, CH_FLIGHT, CH_WAIT, CH_DONE };

/*
 * One request of a call: keys[start .. start + n) to @server, their
 * values the call's floats [voff, voff + nvals).
 */
struct chunk {
	size_t		start;
	uint64_t	voff, nvals;
	uint32_t	n;
	unsigned int	server;
	bool		range;
	uint8_t		state;
	int		backoff;
	int64_t		not_before;
	void		*msg;		/* the request, in the region */
	void		*resp;		/* pull: its answer's own buffer */
};

struct bxkv_worker {
	struct bx	*bx;
	unsigned int	n;
	uint32_t	*peers;
	uint64_t	*bounds;
	uint32_t	val_len, service, msg_max, max_inflight;
	int		timeout_ms;
	size_t		*first;
	uint32_t	*inflight;	/* per server */
	struct chunk	*ch;
	size_t		ch_cap;
	int		last_err, last_server;
	pthread_mutex_t	lock;		/* one call at a time */
};

void bxkv_worker_destroy(struct bxkv_worker *w)
{
	if (!w)
		return;
	bx_close(w->bx);
	pthread_mutex_destroy(&w->lock);
	free(w->peers);
	free(w->bounds);
	free(w->first);
	free(w->inflight);
	free(w->ch);
	free(w);
}

int bxkv_worker_create(struct bxkv_worker **out,
		       const struct bxkv_worker_cfg *cfg)
{
	struct bxkv_worker *w;
	unsigned int n = cfg->nservers;
	int ret;

	if (!n || !cfg->servers || !cfg->service ||
	    cfg->service == UINT32_MAX || cfg->val_len > UINT32_MAX / 4 ||
	    cfg->timeout_ms < 0)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	w->n = n;
	w->val_len = cfg->val_len;
	w->service = cfg->service;
	w->msg_max = cfg->msg_max ? cfg->msg_max : BXKV_MSG_MAX_DEFAULT;
	if (w->msg_max > BX_MSG_MAX) {
		bxkv_worker_destroy(w);
		return -EINVAL;
	}
	w->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 30000;
	w->max_inflight = cfg->max_inflight ? cfg->max_inflight : 8;
	w->last_server = -1;
	w->peers = calloc(n, sizeof(*w->peers));
	w->bounds = calloc(n + 1, sizeof(*w->bounds));
	w->first = calloc(n + 1, sizeof(*w->first));
	w->inflight = calloc(n, sizeof(*w->inflight));
	ret = -ENOMEM;
	if (!w->peers || !w->bounds || !w->first || !w->inflight)
		goto fail;
	if (cfg->bounds) {
		memcpy(w->bounds, cfg->bounds, (n + 1) * sizeof(*w->bounds));
		ret = kv_bounds_check(w->bounds, n);
	} else {
		ret = kv_bounds_even(cfg->key_max, n, w->bounds);
	}
	if (ret)
		goto fail;
	ret = bx_open(&w->bx, 0);
	if (ret)
		goto fail;
	ret = bx_setup(w->bx, page_up(cfg->region_size ? cfg->region_size :
				      64u << 20), 1024);
	for (unsigned int s = 0; !ret && s < n; s++)
		ret = bx_peer(w->bx, cfg->servers[s], &w->peers[s]);
	if (ret)
		goto fail;
	*out = w;
	return 0;
fail:
	bxkv_worker_destroy(w);
	return ret;
}

int bxkv_buf_alloc(struct bxkv_worker *w, size_t size, void **out)
{
	return bx_buf_alloc(w->bx, size, out);
}

int bxkv_buf_free(struct bxkv_worker *w, void *buf)
{
	return bx_buf_free(w->bx, buf);
}

int bxkv_last_error(struct bxkv_worker *w, int *server)
{
	int ret;

	pthread_mutex_lock(&w->lock);
	ret = w->last_err;
	if (server)
		*server = w->last_server;
	pthread_mutex_unlock(&w->lock);
	return ret;
}

/* Cut the call's keys into requests: w->ch[0 .. *nch). */
static int make_chunks(struct bxkv_worker *w, uint8_t op,
		       const uint64_t *keys, const uint32_t *lens,
		       size_t *nch)
{
	uint64_t voff = 0;
	size_t k = 0;

	for (unsigned int s = 0; s < w->n; s++) {
		for (size_t p = w->first[s]; p < w->first[s + 1];) {
			struct chunk *c;
			uint64_t nvals;
			bool range;
			uint32_t m = kv_chunk(keys + p, lens ? lens + p : NULL,
					      w->first[s + 1] - p, op,
					      w->val_len, w->msg_max, &range,
					      &nvals);

			if (!m)
				return -EMSGSIZE;
			if (k == w->ch_cap) {
				size_t cap = w->ch_cap ? w->ch_cap * 2 : 64;
				struct chunk *nc = realloc(w->ch,
							   cap * sizeof(*nc));

				if (!nc)
					return -ENOMEM;
				w->ch = nc;
				w->ch_cap = cap;
			}
			c = &w->ch[k++];
			memset(c, 0, sizeof(*c));
			c->start = p;
			c->voff = voff;
			c->nvals = nvals;
			c->n = m;
			c->server = s;
			c->range = range;
			c->backoff = 1;
			p += m;
			voff += nvals;
		}
	}
	*nch = k;
	return 0;
}

static void chunk_free(struct bxkv_worker *w, struct chunk *c)
{
	if (c->msg)
		bx_buf_free(w->bx, c->msg);
	if (c->resp)
		bx_buf_free(w->bx, c->resp);
	c->msg = c->resp = NULL;
}

struct call {
	uint8_t		op;
	const uint64_t	*keys;
	const uint32_t	*lens;		/* or w->val_len each */
	const float	*in;		/* push */
	float		*out;		/* pull */
	bool		zero_copy;	/* pull: @out is in the region */
	int64_t		deadline;
	int		err;
	int		err_server;
};

static void call_fail(struct call *k, int err, int server)
{
	if (!k->err) {
		k->err = err;
		k->err_server = server;
	}
}

/* Prepare @c's sqe; allocates its buffers the first time. */
static int chunk_prep(struct bxkv_worker *w, struct call *k, size_t i,
		      struct bx_sqe *sqe, int64_t now)
{
	struct chunk *c = &w->ch[i];
	uint64_t size = kv_msg_size(k->op, c->n, c->nvals, c->range,
				    k->lens != NULL);
	uint64_t bytes = 4 * c->nvals;
	int64_t left = k->deadline - now;
	void *resp;
	int ret;

	if (!c->msg) {
		ret = bx_buf_alloc(w->bx, size, &c->msg);
		if (ret)
			return ret;
		kv_encode(c->msg, size, k->op, k->keys + c->start, c->n,
			  k->lens ? k->lens + c->start : NULL,
			  k->lens ? 0 : w->val_len, c->range,
			  k->op == KV_OP_PUSH ? k->in + c->voff : NULL);
	}
	if (k->op == KV_OP_PUSH) {
		ret = bx_prep_push(w->bx, sqe, w->peers[c->server],
				   w->service + 1, c->msg, (uint32_t)size, i);
	} else {
		if (k->zero_copy) {
			resp = k->out + c->voff;
		} else {
			if (!c->resp) {
				ret = bx_buf_alloc(w->bx, bytes, &c->resp);
				if (ret)
					return ret;
			}
			resp = c->resp;
		}
		ret = bx_prep_pull(w->bx, sqe, w->peers[c->server],
				   w->service, c->msg, (uint32_t)size, resp,
				   (uint32_t)bytes, i);
	}
	sqe->timeout_ms = left < 1 ? 1 : left > UINT32_MAX ? UINT32_MAX :
			  (uint32_t)left;
	return ret;
}

/* A request's completion: done, to be sent again, or the call failed. */
static void chunk_done(struct bxkv_worker *w, struct call *k,
		       struct chunk *c, int res)
{
	uint64_t bytes = 4 * c->nvals;
	int64_t now = now_ms();
	bool again;

	w->inflight[c->server]--;
	if (res >= 0 && k->op == KV_OP_PULL) {
		if (res == 0)
			res = -EREMOTEIO;
		else if ((uint64_t)res != bytes)
			res = -EPROTO;
		else if (!k->zero_copy)
			memcpy(k->out + c->voff, c->resp, bytes);
	}
	if (res >= 0) {
		c->state = CH_DONE;
		chunk_free(w, c);
		return;
	}
	/* ENOBUFS: the server had no buffer posted; it never saw it. */
	again = res == -ENOBUFS ||
		(k->op == KV_OP_PUSH ? bx_err_not_delivered(res) :
		 bx_err_conn_failed(res));
	if (again && !k->err && now + c->backoff < k->deadline) {
		c->state = CH_WAIT;
		c->not_before = now + c->backoff;
		c->backoff = c->backoff * 2 > 100 ? 100 : c->backoff * 2;
		return;
	}
	call_fail(k, res, (int)c->server);
	c->state = CH_DONE;
	chunk_free(w, c);
}

static int run_call(struct bxkv_worker *w, struct call *k, size_t nch)
{
	struct bx_sqe sqes[64];
	size_t idx[64], left = nch, total_inflight = 0;
	struct bx_cqe cqes[64];

	while (left) {
		int64_t now = now_ms(), wake = k->deadline;
		unsigned int nb = 0;
		int n, ret = 0, timeout;
		bool stalled = false;

		/* Submit what may go: new requests and those due again. */
		for (size_t i = 0; i < nch && nb < 64 && !k->err; i++) {
			struct chunk *c = &w->ch[i];

			if (c->state == CH_WAIT && c->not_before > now) {
				if (c->not_before < wake)
					wake = c->not_before;
				continue;
			}
			if ((c->state != CH_NEW && c->state != CH_WAIT) ||
			    w->inflight[c->server] >= w->max_inflight)
				continue;
			if (now >= k->deadline) {
				call_fail(k, -ETIMEDOUT, (int)c->server);
				break;
			}
			ret = chunk_prep(w, k, i, &sqes[nb], now);
			if (ret == -ENOMEM && (total_inflight || nb)) {
				stalled = true;	/* wait for buffers to free */
				break;
			}
			if (ret) {
				call_fail(k, ret, (int)c->server);
				break;
			}
			idx[nb++] = i;
		}
		if (nb) {
			ret = bx_submit(w->bx, sqes, nb);
			if (ret < 0 && ret != -EBUSY)
				call_fail(k, ret, (int)w->ch[idx[0]].server);
			stalled |= ret < (int)nb;
			for (int j = 0; j < ret; j++) {
				struct chunk *c = &w->ch[idx[j]];

				c->state = CH_FLIGHT;
				w->inflight[c->server]++;
				total_inflight++;
			}
		}
		if (k->err) {
			/* Nothing new goes; what waits to go again fails. */
			for (size_t i = 0; i < nch; i++) {
				struct chunk *c = &w->ch[i];

				if (c->state == CH_NEW || c->state == CH_WAIT) {
					c->state = CH_DONE;
					chunk_free(w, c);
				}
			}
			if (!total_inflight)
				break;
		}
		left = 0;
		for (size_t i = 0; i < nch; i++)
			left += w->ch[i].state != CH_DONE;
		if (!left)
			break;
		now = now_ms();
		if (stalled && wake > now + 1)
			wake = now + 1;
		timeout = total_inflight ? 1000 : 0;
		if (wake > now && wake - now < timeout)
			timeout = (int)(wake - now);
		if (!total_inflight) {
			/* Only requests waiting to go again. */
			if (wake > now)
				usleep((useconds_t)(wake - now) * 1000);
			continue;
		}
		n = bx_reap(w->bx, cqes, 64, timeout);
		if (n < 0)
			return n;
		for (int j = 0; j < n; j++) {
			uint64_t i = cqes[j].user_data;

			if (i >= nch || w->ch[i].state != CH_FLIGHT)
				continue;	/* not ours */
			total_inflight--;
			chunk_done(w, k, &w->ch[i], cqes[j].res);
		}
	}
	return k->err;
}

/* The floats of a call's values (@lens, or val_len each); 0: bad. */
static uint64_t call_floats(const struct bxkv_worker *w,
			    const uint32_t *lens, size_t nkeys)
{
	uint64_t n = 0;

	if (!lens)
		return nkeys > UINT64_MAX / 4 / (w->val_len | 1) ? 0 :
		       nkeys * w->val_len;
	for (size_t i = 0; i < nkeys; i++)
		if (!lens[i] || __builtin_add_overflow(n, lens[i], &n))
			return 0;
	return n > UINT64_MAX / 4 ? 0 : n;
}

static int kv_call(struct bxkv_worker *w, uint8_t op, const uint64_t *keys,
		   const uint32_t *lens, size_t nkeys, const float *in,
		   float *out)
{
	struct call k = { .op = op, .keys = keys, .lens = lens, .in = in,
			  .out = out, .err_server = -1 };
	uint64_t bytes = 4 * call_floats(w, lens, nkeys);
	size_t nch = 0;
	int ret = 0;

	pthread_mutex_lock(&w->lock);
	if (nkeys && !bytes)
		ret = -EINVAL;	/* no val_len, a length 0, or too many */
	if (!ret)
		ret = kv_split(w->bounds, w->n, keys, nkeys, w->first);
	if (!ret)
		ret = make_chunks(w, op, keys, lens, &nch);
	if (!ret && nch) {
		uintptr_t base = (uintptr_t)bx_region(w->bx);
		uintptr_t p = (uintptr_t)out;

		k.zero_copy = out && p >= base &&
			      p - base <= bx_region_size(w->bx) &&
			      bytes <= bx_region_size(w->bx) - (p - base);
		k.deadline = now_ms() + w->timeout_ms;
		for (unsigned int s = 0; s < w->n; s++)
			w->inflight[s] = 0;
		ret = run_call(w, &k, nch);
		for (size_t i = 0; i < nch; i++)
			chunk_free(w, &w->ch[i]);
	}
	w->last_err = ret;
	w->last_server = ret ? k.err_server : -1;
	pthread_mutex_unlock(&w->lock);
	return ret;
}

int bxkv_push(struct bxkv_worker *w, const uint64_t *keys, size_t nkeys,
	      const float *vals)
{
	return kv_call(w, KV_OP_PUSH, keys, NULL, nkeys, vals, NULL);
}

int bxkv_pull(struct bxkv_worker *w, const uint64_t *keys, size_t nkeys,
	      float *vals)
{
	return kv_call(w, KV_OP_PULL, keys, NULL, nkeys, NULL, vals);
}

int bxkv_push_lens(struct bxkv_worker *w, const uint64_t *keys,
		   size_t nkeys, const float *vals, const uint32_t *lens)
{
	return kv_call(w, KV_OP_PUSH, keys, lens, nkeys, vals, NULL);
}

int bxkv_pull_lens(struct bxkv_worker *w, const uint64_t *keys,
		   size_t nkeys, float *vals, const uint32_t *lens)
{
	return kv_call(w, KV_OP_PULL, keys, lens, nkeys, NULL, vals);
}
