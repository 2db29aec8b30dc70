// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * bxps requests (bxps.h): a worker's push, pull and push-pull split over
 * the servers, SimpleApp requests, their answers and completion; the
 * server's side: handlers (in the progress thread or threads of their
 * own by key range), answers, errors. The node itself is bxps.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bxps_int.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bxps sends keys and lengths as they are: little-endian hosts only"
#endif

/* A request held for a handler (not there yet, or in a thread's queue). */
struct qreq {
	struct bxps_req	req;
	struct qreq	*next;
};

/*
 * A handler thread. It keeps its own copy of the handler, so that the
 * requests it holds when the app stops are still handled by it.
 */
struct hthread {
	struct bxps	*n;
	bxps_handler_fn	fn;
	void		*arg;
	pthread_t	thread;
	pthread_mutex_t	lock;
	pthread_cond_t	cv;
	struct qreq	*head, **tail;
	bool		stop;
};

/*
 * An app's handler. @fn and @arg change under n->lock; @nthreads and @th
 * only once @busy is 0: @busy counts the progress thread's calls in
 * dispatch() (which use @th unlocked, and the handler as it was when
 * counted), so that stopping the app never frees what a dispatch uses.
 */
struct app {
	int		id;
	bxps_handler_fn	fn;
	void		*arg;
	unsigned int	nthreads;
	unsigned int	busy;
	struct hthread	*th;
	struct app	*next;
};

#define ST_DONE		(1ull << 63)

/* ---- the request table ------------------------------------------------ */

static struct preq *lookup(struct bxps *n, int64_t id)
{
	struct preq *r;

	for (r = n->hash[(uint64_t)id % PS_HASH]; r; r = r->hnext)
		if (r->id == id)
			return r;
	return NULL;
}

static void unhash(struct bxps *n, struct preq *r)
{
	struct preq **pp = &n->hash[(uint64_t)r->id % PS_HASH];

	while (*pp && *pp != r)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = r->hnext;
}

/* A new request of @nparts parts, numbered and in the table. */
static struct preq *preq_new(struct bxps *n, uint32_t nparts,
			     const struct bxps_opts *o, uint8_t flags)
{
	struct preq *r = calloc(1, sizeof(*r) + nparts * sizeof(r->parts[0]));

	if (!r)
		return NULL;
	r->flags = flags;
	r->dtype = o->dtype;
	r->done = o->done;
	r->each = o->each;
	r->arg = o->arg;
	r->out = o->out;
	r->out_cap = o->out_cap;
	r->out_lens = o->out_lens;
	r->nparts = nparts;
	r->left = (int)nparts;
	r->rank = -1;
	pthread_mutex_lock(&n->lock);
	if (n->next_id >= n->status_len) {
		int64_t len = n->status_len ? n->status_len * 2 : 1024;
		uint64_t *st = realloc(n->status, (size_t)len * sizeof(*st));

		if (!st) {
			pthread_mutex_unlock(&n->lock);
			free(r);
			return NULL;
		}
		memset(st + n->status_len, 0,
		       (size_t)(len - n->status_len) * sizeof(*st));
		n->status = st;
		n->status_len = len;
	}
	r->id = n->next_id++;
	r->hnext = n->hash[(uint64_t)r->id % PS_HASH];
	n->hash[(uint64_t)r->id % PS_HASH] = r;
	pthread_mutex_unlock(&n->lock);
	return r;
}

static void free_parts(struct bxps *n, struct preq *r)
{
	for (uint32_t i = 0; i < r->nparts; i++)
		if (r->parts[i].msgbuf) {
			ps_recv_done(n, 1, r->parts[i].msgbuf);
			r->parts[i].msgbuf = NULL;
		}
}

/* Put the parts' answers where the caller wants them. */
static int assemble(struct bxps *n, struct preq *r)
{
	uint64_t total = 0, nk = 0, off = 0, koff = 0, copied;
	unsigned int esize = psw_dtype_size((unsigned int)r->dtype);
	uint8_t *vals;
	int32_t *lens;

	if (r->flags & PSW_F_SIMPLE) {
		if (r->each)
			return 0;
		for (uint32_t i = 0; i < r->nparts; i++)
			total += r->parts[i].msg.blen;
		r->res.body = malloc(total ? total : 1);
		if (!r->res.body)
			return -ENOMEM;
		for (uint32_t i = 0; i < r->nparts; i++) {
			memcpy((uint8_t *)r->res.body + off,
			       r->parts[i].msg.body, r->parts[i].msg.blen);
			off += r->parts[i].msg.blen;
		}
		r->res.blen = (uint32_t)total;
		r->has_result = true;
		return 0;
	}
	if (!(r->flags & PSW_F_PULL))
		return 0;
	for (uint32_t i = 0; i < r->nparts; i++) {
		const struct psw_msg *m = &r->parts[i].msg;

		/* Values of the request's type; lengths, or even ones. */
		if (m->vbytes && m->dtype != r->dtype)
			return -EPROTO;
		if (!m->lens && m->nkeys && m->vbytes % ((uint64_t)m->nkeys * esize))
			return -EPROTO;
		total += m->vbytes;
		nk += m->nkeys;
	}
	if (r->out) {
		if (total > r->out_cap)
			return -EMSGSIZE;
		vals = r->out;
	} else {
		vals = malloc(total ? total : 1);
		if (!vals)
			return -ENOMEM;
	}
	lens = r->out_lens;
	if (!lens && !r->out) {
		lens = malloc(nk ? nk * sizeof(*lens) : 1);
		if (!lens) {
			free(vals);
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < r->nparts; i++) {
		const struct psw_msg *m = &r->parts[i].msg;

		if (m->vbytes)
			memcpy(vals + off, m->vals, m->vbytes);
		off += m->vbytes;
		for (uint32_t k = 0; lens && k < m->nkeys; k++)
			lens[koff + k] = m->lens ? psw_len(m, k) :
				(int32_t)(m->vbytes / esize / m->nkeys);
		koff += m->nkeys;
	}
	copied = total;
	pthread_mutex_lock(&n->lock);
	n->stats.pull_copied += copied;
	pthread_mutex_unlock(&n->lock);
	if (!r->out) {
		r->res.vals = vals;
		r->res.val_bytes = total;
		r->res.lens = lens;
		r->res.nkeys = (uint32_t)nk;
		r->has_result = true;
	}
	return 0;
}

/* Every part answered: results, callback, then waiters. */
static void finish(struct bxps *n, struct preq *r)
{
	bool gone;
	int ret;

	if (!r->status) {
		ret = assemble(n, r);
		if (ret) {
			r->status = ret;
			r->rank = -1;
		}
	}
	free_parts(n, r);
	if (r->done)
		r->done(n, r->id, r->status, r->rank, r->arg);
	pthread_mutex_lock(&n->lock);
	n->status[r->id] = ST_DONE | (uint32_t)r->status |
			   ((uint64_t)(uint32_t)(r->rank + 1) & 0x7fffffffu) << 32;
	r->finished = true;
	if (!r->has_result)
		unhash(n, r);
	pthread_cond_broadcast(&n->cv);
	gone = !r->has_result && !r->ios;
	pthread_mutex_unlock(&n->lock);
	if (gone)
		free(r);
}

/* A send of @r is done with it: free @r if nothing else holds it. */
void ps_req_put_io(struct bxps *n, struct preq *r)
{
	bool gone;

	pthread_mutex_lock(&n->lock);
	gone = --r->ios == 0 && r->finished && !r->has_result;
	pthread_mutex_unlock(&n->lock);
	if (gone)
		free(r);
}

static int fail_rank(const struct preq *r, const struct node *nd)
{
	return r->flags & PSW_F_SIMPLE ? (int)nd->id : (int)psw_id_rank(nd->id);
}

/* Part @part of @r ends with @err (and no answer). */
void ps_part_fail(struct bxps *n, struct preq *r, uint32_t part, int err)
{
	bool last;

	if (getenv("BXPS_DEBUG"))
		fprintf(stderr, "bxps: request %lld part %u to node %u failed: %d\n",
			(long long)r->id, part, n->nodes[r->parts[part].node].id, err);
	pthread_mutex_lock(&n->lock);
	if (r->parts[part].answered) {
		pthread_mutex_unlock(&n->lock);
		return;
	}
	r->parts[part].answered = true;
	if (!r->status) {
		r->status = err;
		r->rank = fail_rank(r, &n->nodes[r->parts[part].node]);
	}
	last = --r->left == 0;
	pthread_mutex_unlock(&n->lock);
	if (last)
		finish(n, r);
}

/* Fail every unanswered part matching @idx (-1: all) with @err. */
static void fail_where(struct bxps *n, int idx, int err)
{
	struct preq *done = NULL, *r;

	pthread_mutex_lock(&n->lock);
	for (uint32_t h = 0; h < PS_HASH; h++) {
		for (r = n->hash[h]; r; r = r->hnext) {
			bool hit = false;

			if (r->finished || !r->left)
				continue;
			for (uint32_t i = 0; i < r->nparts; i++) {
				struct part *p = &r->parts[i];

				if (p->answered || (idx >= 0 && p->node != idx))
					continue;
				p->answered = true;
				hit = true;
				if (!r->status) {
					r->status = err;
					r->rank = fail_rank(r, &n->nodes[p->node]);
				}
				r->left--;
			}
			if (!hit || r->left)
				continue;
			/* This pass took its last part: it finishes here. */
			r->dnext = done;
			done = r;
		}
	}
	pthread_mutex_unlock(&n->lock);
	while ((r = done)) {
		done = r->dnext;
		finish(n, r);
	}
}

void ps_node_died(struct bxps *n, int idx)
{
	fail_where(n, idx, n->nodes[idx].err ? n->nodes[idx].err :
		   -ECONNABORTED);
}

void ps_fail_all(struct bxps *n, int err)
{
	fail_where(n, -1, err);
}

/* ---- worker: sending requests ----------------------------------------- */

/* The header of a request to node index @to. */
static void req_hdr(struct bxps *n, struct psw_msg *h, const struct bxps_opts *o,
		    struct preq *r, uint32_t part)
{
	memset(h, 0, sizeof(*h));
	h->type = PSW_T_REQ;
	h->dtype = (uint8_t)o->dtype;
	h->flags = r->flags;
	h->cmd = o->cmd;
	h->sender = n->id;
	h->app = (uint16_t)o->app;
	h->customer = (uint16_t)o->customer;
	h->id = (uint64_t)r->id;
	h->priority = o->priority;
	h->part = part;
}

/*
 * Check one server's part: keys ascending and below the last key, the
 * values as long as the lengths say (a push); its value bytes in *@vb.
 */
static int slice_ok(const struct bxps_kv *kv, unsigned int esize, bool push,
		    uint64_t *vb)
{
	uint64_t total = 0;

	if (kv->nkeys && !kv->keys)
		return -EINVAL;
	for (uint32_t i = 0; i < kv->nkeys; i++)
		if ((i && kv->keys[i] <= kv->keys[i - 1]) ||
		    kv->keys[i] == UINT64_MAX)
			return -EINVAL;
	if (kv->lens) {
		for (uint32_t i = 0; i < kv->nkeys; i++) {
			if (kv->lens[i] < 0)
				return -EINVAL;
			total += (uint64_t)kv->lens[i];
		}
		if (push && total * esize != kv->val_bytes)
			return -EINVAL;
	} else if (push && kv->nkeys &&
		   kv->val_bytes % ((uint64_t)kv->nkeys * esize)) {
		/* The same length for every key. */
		return -EINVAL;
	}
	if (push && kv->val_bytes && !kv->vals)
		return -EINVAL;
	*vb = push ? kv->val_bytes : 0;
	return 0;
}

/* Send each slice (checked, none empty) as part i of one request. */
static int64_t send_slices(struct bxps *n, const struct bxps_opts *o,
			   uint8_t flags, const struct bxps_slice *sl,
			   uint32_t nsl)
{
	struct preq *r;
	int64_t id;

	r = preq_new(n, nsl, o, flags);
	if (!r)
		return -ENOMEM;
	id = r->id;
	if (!nsl) {
		finish(n, r);
		return id;
	}
	/* Each part's node first: an answer may come before the loop ends. */
	for (uint32_t p = 0; p < nsl; p++)
		r->parts[p].node = ps_node_index(n,
			psw_node_id(PSW_ROLE_SERVER, (uint32_t)sl[p].server));
	pthread_mutex_lock(&n->lock);
	n->stats.requests += nsl;
	pthread_mutex_unlock(&n->lock);
	for (uint32_t p = 0; p < nsl; p++) {
		const struct bxps_kv *kv = &sl[p].kv;
		bool push = flags & PSW_F_PUSH;
		uint8_t hdr[PSW_HDR_LEN];
		static const uint8_t pad[8];
		const void *seg[5];
		uint64_t len[5];
		struct psw_msg h;
		int ret;

		req_hdr(n, &h, o, r, p);
		h.flags = flags | (kv->lens ? PSW_F_LENS : 0);
		h.nkeys = kv->nkeys;
		h.vbytes = push ? kv->val_bytes : 0;
		psw_encode_hdr(hdr, &h);
		seg[0] = hdr;
		len[0] = PSW_HDR_LEN;
		seg[1] = kv->keys;
		len[1] = 8ull * kv->nkeys;
		seg[2] = kv->lens;
		len[2] = kv->lens ? 4ull * kv->nkeys : 0;
		seg[3] = pad;
		len[3] = kv->lens && (kv->nkeys & 1) ? 4 : 0;
		seg[4] = push ? kv->vals : NULL;
		len[4] = h.vbytes;
		/* After the last send @r may be gone: use nothing of it. */
		ret = ps_send(n, r->parts[p].node, seg, len, 5, r, p);
		if (ret)
			ps_part_fail(n, r, p, ret);
	}
	return id;
}

static int64_t kv_request(struct bxps *n, const struct bxps_opts *o,
			  const struct bxps_kv *kv, uint8_t flags)
{
	uint32_t S = (uint32_t)n->cfg.num_servers, nsl = 0;
	unsigned int esize = psw_dtype_size((unsigned int)o->dtype);
	bool push = flags & PSW_F_PUSH;
	struct bxps_slice sl[PS_MAX_NODES];
	size_t first[PS_MAX_NODES + 1];
	uint64_t per = 0, voff = 0, vb;
	int ret;

	if (!esize)
		return -EINVAL;
	ret = slice_ok(kv, esize, push, &vb);
	if (ret)
		return ret;
	if (push && !kv->lens && !kv->nkeys && kv->val_bytes)
		return -EINVAL;
	if (push && !kv->lens && kv->nkeys)
		per = kv->val_bytes / kv->nkeys;
	if (psw_split(S, kv->keys, kv->nkeys, first))
		return -EINVAL;
	/* Each server's keys, and the values from its first key's. */
	for (uint32_t s = 0; s < S; s++) {
		size_t a = first[s], b = first[s + 1];
		struct bxps_kv *k = &sl[nsl].kv;

		if (a == b)
			continue;
		vb = 0;
		if (kv->lens) {
			for (size_t i = a; i < b; i++)
				vb += (uint64_t)kv->lens[i] * esize;
		} else {
			vb = per * (b - a);
		}
		sl[nsl].server = (int)s;
		k->keys = kv->keys + a;
		k->nkeys = (uint32_t)(b - a);
		k->lens = kv->lens ? kv->lens + a : NULL;
		k->vals = push ? (const uint8_t *)kv->vals + voff : NULL;
		k->val_bytes = push ? vb : 0;
		voff += vb;
		nsl++;
	}
	return send_slices(n, o, flags, sl, nsl);
}

int64_t bxps_sliced(struct bxps *n, const struct bxps_opts *o, int what,
		    const struct bxps_slice *sl, uint32_t nslices)
{
	unsigned int esize = psw_dtype_size((unsigned int)o->dtype);
	uint8_t flags = (what & BXPS_OP_PUSH ? PSW_F_PUSH : 0) |
			(what & BXPS_OP_PULL ? PSW_F_PULL : 0);
	uint64_t vb;

	if (!esize || !flags || (what & ~(BXPS_OP_PUSH | BXPS_OP_PULL)) ||
	    nslices > PS_MAX_NODES || (nslices && !sl))
		return -EINVAL;
	for (uint32_t i = 0; i < nslices; i++) {
		if (sl[i].server < 0 || sl[i].server >= n->cfg.num_servers ||
		    !sl[i].kv.nkeys)
			return -EINVAL;
		if (slice_ok(&sl[i].kv, esize, flags & PSW_F_PUSH, &vb))
			return -EINVAL;
	}
	return send_slices(n, o, flags, sl, nslices);
}

int64_t bxps_push(struct bxps *n, const struct bxps_opts *o,
		  const struct bxps_kv *kv)
{
	return kv_request(n, o, kv, PSW_F_PUSH);
}

int64_t bxps_pull(struct bxps *n, const struct bxps_opts *o,
		  const struct bxps_kv *kv)
{
	return kv_request(n, o, kv, PSW_F_PULL);
}

int64_t bxps_pushpull(struct bxps *n, const struct bxps_opts *o,
		      const struct bxps_kv *kv)
{
	return kv_request(n, o, kv, PSW_F_PUSH | PSW_F_PULL);
}

int64_t bxps_request(struct bxps *n, const struct bxps_opts *o, int head,
		     const void *body, uint32_t blen, int to)
{
	int idx[PS_MAX_NODES];
	uint32_t cnt = 0;
	struct preq *r;
	int64_t id;

	if (to <= 0)
		return -EINVAL;
	for (uint32_t i = 0; i < n->nnodes; i++) {
		const struct node *nd = &n->nodes[i];

		/* A group (not this node itself), or one node. */
		if (to < 8 ? (nd->role & (uint32_t)to) && (int)i != n->self &&
			     !nd->dead && !nd->gone :
			     nd->id == (uint32_t)to)
			idx[cnt++] = (int)i;
	}
	if (to >= 8 && !cnt)
		return -ENOENT;
	r = preq_new(n, cnt, o, PSW_F_SIMPLE);
	if (!r)
		return -ENOMEM;
	id = r->id;
	if (!cnt) {
		finish(n, r);
		return id;
	}
	for (uint32_t p = 0; p < cnt; p++)
		r->parts[p].node = idx[p];
	pthread_mutex_lock(&n->lock);
	n->stats.requests += cnt;
	pthread_mutex_unlock(&n->lock);
	for (uint32_t p = 0; p < cnt; p++) {
		uint8_t hdr[PSW_HDR_LEN];
		const void *seg[2] = { hdr, body };
		uint64_t len[2] = { PSW_HDR_LEN, blen };
		struct psw_msg h;
		int ret;

		req_hdr(n, &h, o, r, p);
		h.dtype = 0;
		h.cmd = head;
		h.blen = blen;
		psw_encode_hdr(hdr, &h);
		ret = ps_send(n, idx[p], seg, len, 2, r, p);
		if (ret)
			ps_part_fail(n, r, p, ret);
	}
	return id;
}

int bxps_test(struct bxps *n, int64_t id, int *status, int *rank)
{
	uint64_t st;

	pthread_mutex_lock(&n->lock);
	if (id < 0 || id >= n->next_id) {
		pthread_mutex_unlock(&n->lock);
		return -ENOENT;
	}
	st = n->status[id];
	pthread_mutex_unlock(&n->lock);
	if (!(st & ST_DONE))
		return 0;
	if (status)
		*status = (int32_t)(uint32_t)st;
	if (rank)
		*rank = (int)((st >> 32) & 0x7fffffffu) - 1;
	return 1;
}

int bxps_wait(struct bxps *n, int64_t id, int *rank)
{
	uint64_t st;

	pthread_mutex_lock(&n->lock);
	if (id < 0 || id >= n->next_id) {
		pthread_mutex_unlock(&n->lock);
		return -ENOENT;
	}
	while (!((st = n->status[id]) & ST_DONE)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 30;
		if (pthread_cond_timedwait(&n->cv, &n->lock, &ts) == ETIMEDOUT &&
		    getenv("BXPS_DEBUG")) {
			/* Still waiting: say for whom. */
			struct preq *r = lookup(n, id);

			for (uint32_t i = 0; r && i < r->nparts; i++)
				fprintf(stderr, "bxps: request %lld waits 30 s: part %u to node %u %s (sends not done %d; node: requests %llu responses %llu retries %llu errors %llu)\n",
					(long long)id, i, n->nodes[r->parts[i].node].id,
					r->parts[i].answered ? "answered" : "open",
					r->ios,
					(unsigned long long)n->stats.requests,
					(unsigned long long)n->stats.responses,
					(unsigned long long)n->stats.retries,
					(unsigned long long)n->stats.errors);
		}
	}
	pthread_mutex_unlock(&n->lock);
	if (rank)
		*rank = (int)((st >> 32) & 0x7fffffffu) - 1;
	return (int32_t)(uint32_t)st;
}

int bxps_result(struct bxps *n, int64_t id, struct bxps_result *res)
{
	struct preq *r;

	pthread_mutex_lock(&n->lock);
	r = lookup(n, id);
	/* The done callback may take it before the request is marked done. */
	if (!r || !r->has_result) {
		pthread_mutex_unlock(&n->lock);
		return -ENOENT;
	}
	*res = r->res;
	r->has_result = false;
	if (r->finished) {
		bool gone = !r->ios;

		unhash(n, r);
		pthread_mutex_unlock(&n->lock);
		if (gone)
			free(r);
		return 0;
	}
	pthread_mutex_unlock(&n->lock);
	return 0;
}

/* An answer came. */
static void on_response(struct bxps *n, void *buf, const struct psw_msg *m,
			int from)
{
	struct preq *r;
	struct part *p;
	bool last, keep;

	pthread_mutex_lock(&n->lock);
	r = lookup(n, (int64_t)m->id);
	if (!r || r->finished || m->part >= r->nparts ||
	    r->parts[m->part].node != from || r->parts[m->part].answered) {
		/* Late (the request failed already), or not ours. */
		pthread_mutex_unlock(&n->lock);
		ps_recv_done(n, 1, buf);
		return;
	}
	p = &r->parts[m->part];
	p->answered = true;
	if (m->status && getenv("BXPS_DEBUG"))
		fprintf(stderr, "bxps: request %lld part %u: node %u answered %d\n",
			(long long)r->id, m->part, m->sender, m->status);
	keep = !m->status && (r->flags & (PSW_F_PULL | PSW_F_SIMPLE));
	if (m->status && !r->status) {
		r->status = m->status;
		r->rank = fail_rank(r, &n->nodes[from]);
	}
	if (keep) {
		p->msgbuf = buf;
		p->msg = *m;
	}
	last = --r->left == 0;
	pthread_mutex_unlock(&n->lock);
	if (keep && r->each) {
		struct bxps_req resp = {
			.sender = (int)m->sender, .id = (int64_t)m->id,
			.app = m->app, .customer = m->customer, .cmd = m->cmd,
			.simple = 1, .body = m->body, .blen = m->blen,
		};

		resp.sender_rank = (int)psw_id_rank(m->sender);
		r->each(n, &resp, r->arg);
	}
	if (!keep)
		ps_recv_done(n, 1, buf);
	if (last)
		finish(n, r);
}

/* ---- server: handlers ------------------------------------------------- */

static void *hthread_main(void *arg)
{
	struct hthread *t = arg;
	struct qreq *q;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		while (!t->head && !t->stop)
			pthread_cond_wait(&t->cv, &t->lock);
		if (!t->head)
			break;
		q = t->head;
		t->head = q->next;
		if (!t->head)
			t->tail = &t->head;
		pthread_mutex_unlock(&t->lock);
		t->fn(t->n, &q->req, t->arg);
		free(q);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static struct app *find_app(struct bxps *n, int id)
{
	struct app *a;

	for (a = n->apps; a; a = a->next)
		if (a->id == id)
			return a;
	return NULL;
}

/* Run @req's handler now, or queue it for its thread. */
static void dispatch(struct bxps *n, struct app *a, bxps_handler_fn fn,
		     void *arg, const struct bxps_req *req)
{
	struct hthread *t;
	struct qreq *q;
	uint32_t i = 0;

	pthread_mutex_lock(&n->lock);
	n->stats.handled++;
	pthread_mutex_unlock(&n->lock);
	if (a->nthreads <= 1) {
		fn(n, req, arg);
		return;
	}
	if (req->kv.nkeys) {
		uint64_t b, e, k = req->kv.keys[0], span;

		psw_range((uint32_t)n->cfg.num_servers, n->rank, &b, &e);
		span = (e - b) / a->nthreads;
		i = k < b || !span ? 0 : (uint32_t)((k - b) / span);
		if (i >= a->nthreads)
			i = a->nthreads - 1;
	}
	q = malloc(sizeof(*q));
	if (!q) {
		bxps_respond_err(n, req, -ENOMEM);
		bxps_req_release(n, req->buf);
		return;
	}
	q->req = *req;
	q->next = NULL;
	t = &a->th[i];
	pthread_mutex_lock(&t->lock);
	*t->tail = q;
	t->tail = &q->next;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->lock);
}

/* Does a request for @app wait for its handler (n->lock held)? */
static bool waiting(const struct bxps *n, int app)
{
	for (const struct qreq *q = n->unclaimed; q; q = q->next)
		if (q->req.app == app)
			return true;
	return false;
}

static void on_request(struct bxps *n, void *buf, const struct psw_msg *m,
		       int from)
{
	struct bxps_req req = {
		.sender = (int)m->sender,
		.sender_rank = (int)psw_id_rank(m->sender),
		.id = (int64_t)m->id, .app = m->app, .customer = m->customer,
		.cmd = m->cmd, .priority = m->priority, .dtype = m->dtype,
		.push = !!(m->flags & PSW_F_PUSH),
		.pull = !!(m->flags & PSW_F_PULL),
		.simple = !!(m->flags & PSW_F_SIMPLE),
		.kv = {
			.keys = (const uint64_t *)m->keys, .nkeys = m->nkeys,
			.vals = m->vals, .val_bytes = m->vbytes,
			.lens = (const int32_t *)m->lens,
		},
		.body = m->body, .blen = m->blen, .buf = buf, .part = m->part,
	};
	bxps_handler_fn fn;
	struct app *a;
	void *arg;
	struct qreq *q;

	(void)from;
	pthread_mutex_lock(&n->lock);
	a = find_app(n, m->app);
	/* No handler yet, or requests before this one wait: behind them. */
	if (!a || !a->fn || waiting(n, m->app)) {
		bool ready = a && a->fn;

		q = malloc(sizeof(*q));
		if (q) {
			q->req = req;
			q->next = NULL;
			*n->unclaimed_tail = q;
			n->unclaimed_tail = &q->next;
		}
		pthread_mutex_unlock(&n->lock);
		if (!q) {
			bxps_respond_err(n, &req, -ENOMEM);
			ps_recv_done(n, 1, buf);
		} else if (ready) {
			ps_apps_drain(n);
		}
		return;
	}
	a->busy++;
	fn = a->fn;
	arg = a->arg;
	pthread_mutex_unlock(&n->lock);
	dispatch(n, a, fn, arg, &req);
	pthread_mutex_lock(&n->lock);
	if (!--a->busy)
		pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->lock);
}

/* A push (a data message) came to this node. */
void ps_on_message(struct bxps *n, void *buf, uint32_t len, uint32_t which)
{
	struct psw_msg m;
	int from;

	(void)which;
	if (psw_decode(buf, len, &m)) {
		pthread_mutex_lock(&n->lock);
		n->stats.bad++;
		pthread_mutex_unlock(&n->lock);
		/* Answer a request we can tell, so that it fails, not hangs. */
		if (psw_peek(buf, len, &m) == 0 && m.type == PSW_T_REQ &&
		    ps_node_index(n, m.sender) >= 0) {
			struct bxps_req req = {
				.sender = (int)m.sender, .id = (int64_t)m.id,
				.app = m.app, .customer = m.customer,
				.cmd = m.cmd, .part = m.part,
				.push = !!(m.flags & PSW_F_PUSH),
				.pull = !!(m.flags & PSW_F_PULL),
				.simple = !!(m.flags & PSW_F_SIMPLE),
			};

			bxps_respond_err(n, &req, -EBADMSG);
		}
		ps_recv_done(n, 1, buf);
		return;
	}
	from = ps_node_index(n, m.sender);
	if (from < 0) {
		ps_recv_done(n, 1, buf);
		return;
	}
	if (m.type == PSW_T_RESP)
		on_response(n, buf, &m, from);
	else
		on_request(n, buf, &m, from);
}

/*
 * Stop @a: no dispatch uses it once this returns, and its threads have
 * handled what they held. Called with n->lock held, which it drops while
 * it waits; never from @a's own handler (it would wait for itself).
 */
static void app_stop(struct bxps *n, struct app *a)
{
	struct hthread *th;
	unsigned int nt;

	a->fn = NULL;
	while (a->busy)
		pthread_cond_wait(&n->cv, &n->lock);
	th = a->th;
	nt = a->nthreads;
	a->th = NULL;
	a->nthreads = 0;
	pthread_mutex_unlock(&n->lock);
	for (unsigned int i = 0; th && i < nt; i++) {
		struct hthread *t = &th[i];

		pthread_mutex_lock(&t->lock);
		t->stop = true;
		pthread_cond_signal(&t->cv);
		pthread_mutex_unlock(&t->lock);
		pthread_join(t->thread, NULL);
		pthread_mutex_destroy(&t->lock);
		pthread_cond_destroy(&t->cv);
	}
	free(th);
	pthread_mutex_lock(&n->lock);
}

/* Start @nt handler threads for @a (n->lock held, @a not dispatched to). */
static int app_threads(struct bxps *n, struct app *a, bxps_handler_fn fn,
		       void *arg, unsigned int nt)
{
	struct hthread *th = calloc(nt, sizeof(*th));
	unsigned int i;

	if (!th)
		return -ENOMEM;
	for (i = 0; i < nt; i++) {
		struct hthread *t = &th[i];

		t->n = n;
		t->fn = fn;
		t->arg = arg;
		t->tail = &t->head;
		pthread_mutex_init(&t->lock, NULL);
		pthread_cond_init(&t->cv, NULL);
		if (pthread_create(&t->thread, NULL, hthread_main, t))
			break;
	}
	a->th = th;
	a->nthreads = i;
	if (i == nt)
		return 0;
	/* What started stops again; the one that did not is undone here. */
	pthread_mutex_destroy(&th[i].lock);
	pthread_cond_destroy(&th[i].cv);
	app_stop(n, a);
	return -EAGAIN;
}

int bxps_set_handler(struct bxps *n, int app, bxps_handler_fn fn, void *arg,
		     unsigned int nthreads)
{
	struct app *a;
	int ret = 0;

	if (nthreads > 64)
		return -EINVAL;
	pthread_mutex_lock(&n->lock);
	a = find_app(n, app);
	if (!fn) {
		/* Stop: later requests wait for the next handler. */
		if (a)
			app_stop(n, a);
		goto out;
	}
	if (a && a->fn) {
		ret = -EBUSY;
		goto out;
	}
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a) {
			ret = -ENOMEM;
			goto out;
		}
		a->id = app;
		a->next = n->apps;
		n->apps = a;
	}
	if (nthreads > 1) {
		ret = app_threads(n, a, fn, arg, nthreads);
		if (ret)
			goto out;
	}
	a->arg = arg;
	a->fn = fn;
	/* The progress thread hands it what waited (ps_apps_drain()). */
	n->drain = true;
out:
	pthread_mutex_unlock(&n->lock);
	return ret;
}

/*
 * Dispatch, oldest first, the requests that wait for an app that now has
 * a handler. The progress thread's: it alone adds to and takes from
 * n->unclaimed, so the list holds still while n->lock is dropped.
 */
void ps_apps_drain(struct bxps *n)
{
	struct qreq **pp, *q;
	bxps_handler_fn fn;
	struct app *a;
	void *arg;

	pthread_mutex_lock(&n->lock);
	n->drain = false;
	pp = &n->unclaimed;
	while ((q = *pp)) {
		a = find_app(n, q->req.app);
		if (!a || !a->fn) {
			pp = &q->next;
			continue;
		}
		*pp = q->next;
		if (!*pp)
			n->unclaimed_tail = pp;
		a->busy++;
		fn = a->fn;
		arg = a->arg;
		pthread_mutex_unlock(&n->lock);
		dispatch(n, a, fn, arg, &q->req);
		free(q);
		pthread_mutex_lock(&n->lock);
		if (!--a->busy)
			pthread_cond_broadcast(&n->cv);
	}
	pthread_mutex_unlock(&n->lock);
}

/* The node ends: stop every handler (before the progress thread). */
void ps_apps_stop(struct bxps *n)
{
	pthread_mutex_lock(&n->lock);
	for (struct app *a = n->apps; a; a = a->next)
		app_stop(n, a);
	pthread_mutex_unlock(&n->lock);
}

/*
 * The node is gone (the progress thread has ended): answer what no
 * handler took with -ECANCELED, so that its senders do not wait, and
 * free the apps.
 */
void ps_apps_free(struct bxps *n)
{
	struct qreq *q;
	struct app *a;

	while ((q = n->unclaimed)) {
		n->unclaimed = q->next;
		bxps_respond_err(n, &q->req, -ECANCELED);
		bxps_req_release(n, q->req.buf);
		free(q);
	}
	n->unclaimed_tail = &n->unclaimed;
	while ((a = n->apps)) {
		n->apps = a->next;
		free(a);
	}
}

/* Send an answer to @req's sender. */
static int respond(struct bxps *n, const struct bxps_req *req, int status,
		   const struct bxps_kv *kv, const void *body, uint32_t blen)
{
	static const struct bxps_kv none;
	int to = ps_node_index(n, (uint32_t)req->sender);
	static const uint8_t pad[8];
	uint8_t hdr[PSW_HDR_LEN];
	const void *seg[6];
	uint64_t len[6];
	struct psw_msg h;
	int ret;

	if (to < 0)
		return -ENOENT;
	if (!kv)
		kv = &none;
	memset(&h, 0, sizeof(h));
	h.type = PSW_T_RESP;
	h.dtype = kv->val_bytes ? (uint8_t)req->dtype : 0;
	h.flags = (uint8_t)((req->push ? PSW_F_PUSH : 0) |
			    (req->pull ? PSW_F_PULL : 0) |
			    (req->simple ? PSW_F_SIMPLE : 0) |
			    (kv->lens && !status ? PSW_F_LENS : 0));
	h.cmd = req->cmd;
	h.status = status;
	h.sender = n->id;
	h.app = (uint16_t)req->app;
	h.customer = (uint16_t)req->customer;
	h.id = (uint64_t)req->id;
	h.part = req->part;
	if (!status) {
		h.nkeys = kv->nkeys;
		h.vbytes = kv->val_bytes;
		h.blen = blen;
	}
	psw_encode_hdr(hdr, &h);
	seg[0] = hdr;
	len[0] = PSW_HDR_LEN;
	seg[1] = kv->keys;
	len[1] = 8ull * h.nkeys;
	seg[2] = kv->lens;
	len[2] = h.flags & PSW_F_LENS ? 4ull * h.nkeys : 0;
	seg[3] = pad;
	len[3] = h.flags & PSW_F_LENS && (h.nkeys & 1) ? 4 : 0;
	seg[4] = kv->vals;
	len[4] = h.vbytes;
	seg[5] = body;
	len[5] = h.blen;
	ret = ps_send(n, to, seg, len, 6, NULL, 0);
	pthread_mutex_lock(&n->lock);
	if (ret)
		n->stats.errors++;
	else
		n->stats.responses++;
	pthread_mutex_unlock(&n->lock);
	if (ret && getenv("BXPS_DEBUG"))
		fprintf(stderr, "bxps: answer to request %lld of node %d not sent: %d\n",
			(long long)req->id, req->sender, ret);
	return ret;
}

int bxps_respond(struct bxps *n, const struct bxps_req *req,
		 const struct bxps_kv *kv, const void *body, uint32_t blen)
{
	int ret = respond(n, req, 0, kv, body, blen);

	/* Too large to answer: say so instead. */
	if (ret == -EMSGSIZE)
		respond(n, req, -EMSGSIZE, NULL, NULL, 0);
	return ret;
}

int bxps_respond_err(struct bxps *n, const struct bxps_req *req, int err)
{
	if (err >= 0)
		return -EINVAL;
	return respond(n, req, err, NULL, NULL, 0);
}

void bxps_req_release(struct bxps *n, void *buf)
{
	if (buf)
		ps_recv_done(n, 1, buf);
}
