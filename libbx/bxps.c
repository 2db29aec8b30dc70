// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * bxps nodes (bxps.h): configuration from the environment, rendezvous
 * at the scheduler, the watches that tell a dead node, barriers, the
 * progress thread, and sending a message in pieces. Requests and
 * handlers are bxps_kv.c's.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bxps_int.h"

uint64_t ps_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

unsigned int bxps_dtype_size(int dtype)
{
	return dtype < 0 ? 0 : psw_dtype_size((unsigned int)dtype);
}

static int env_int(const char *name, long min, long max, long *out)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (!v || !*v)
		return -ENOENT;
	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || *end || x < min || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

int bxps_cfg_env(struct bxps_cfg *cfg, const char **bad)
{
	const char *role = getenv("DMLC_ROLE");
	long v;

	memset(cfg, 0, sizeof(*cfg));
	*bad = "DMLC_ROLE";
	if (!role)
		return -EINVAL;
	if (!strcmp(role, "scheduler"))
		cfg->role = BXPS_SCHEDULER;
	else if (!strcmp(role, "server"))
		cfg->role = BXPS_SERVER;
	else if (!strcmp(role, "worker"))
		cfg->role = BXPS_WORKER;
	else
		return -EINVAL;
	*bad = "DMLC_NUM_SERVER";
	if (env_int(*bad, 1, PS_MAX_NODES / 2, &v))
		return -EINVAL;
	cfg->num_servers = (int)v;
	*bad = "DMLC_NUM_WORKER";
	if (env_int(*bad, 1, PS_MAX_NODES / 2 - 1, &v))
		return -EINVAL;
	cfg->num_workers = (int)v;
	*bad = "DMLC_PS_ROOT_URI";
	cfg->root_uri = getenv(*bad);
	if (!cfg->root_uri || !*cfg->root_uri)
		return -EINVAL;
	*bad = "DMLC_PS_ROOT_PORT";
	if (env_int(*bad, 1, 0xfffffffdl, &v))
		return -EINVAL;
	cfg->root_port = (uint32_t)v;
	cfg->host = getenv("DMLC_NODE_HOST");
	*bad = "BXPS_MSG_MAX";
	if (env_int(*bad, 65536, 16 << 20, &v) == 0)
		cfg->msg_max = (uint32_t)v;
	else if (getenv(*bad))
		return -EINVAL;
	*bad = "BXPS_REGION_MB";
	if (env_int(*bad, 4, 1 << 16, &v) == 0)
		cfg->region_mb = (uint32_t)v;
	else if (getenv(*bad))
		return -EINVAL;
	*bad = "BXPS_TIMEOUT_MS";
	if (env_int(*bad, 1, 1l << 30, &v) == 0)
		cfg->timeout_ms = (int)v;
	else if (getenv(*bad))
		return -EINVAL;
	*bad = NULL;
	return 0;
}

int ps_node_index(const struct bxps *n, uint32_t id)
{
	for (uint32_t i = 0; i < n->nnodes; i++)
		if (n->nodes[i].id == id)
			return (int)i;
	return -1;
}

/* ---- submitting ------------------------------------------------------- */

static int prep(struct bxps *n, struct io *io, struct bx_sqe *sqe)
{
	struct node *to = io->to >= 0 ? &n->nodes[io->to] : NULL;
	uint64_t ud = (uintptr_t)io;
	int ret = -EINVAL;

	switch (io->kind) {
	case IO_RECV:
		ret = bx_prep_recv(n->bx, sqe, n->service + io->which, io->buf,
				   io->cap, ud);
		break;
	case IO_SEND:
		ret = bx_prep_push(n->bx, sqe, to->peer,
				   to->service + (io->len > PS_SMALL_CAP),
				   io->scratch, 1, ud);
		if (ret)
			break;
		/* The pieces: off is the array's address (BX_SQE_F_VEC). */
		sqe->flags = BX_SQE_F_VEC;
		sqe->off = (uintptr_t)io->vec;
		sqe->len = io->nvec;
		break;
	case IO_CTRL:
	case IO_WATCH:
		ret = bx_prep_pull(n->bx, sqe, to->peer, to->service,
				   io->scratch, PSW_CTRL_LEN, io->resp,
				   io->resp_cap, ud);
		if (io->kind == IO_WATCH)
			sqe->timeout_ms = PS_WATCH_MS;
		else
			sqe->timeout_ms = n->cfg.timeout_ms;
		break;
	case IO_REPLY:
		ret = bx_prep_reply(n->bx, sqe, io->token, io->scratch, io->len,
				    ud);
		break;
	}
	return ret;
}

/*
 * Submit @io now or, if the ring is full, once the progress thread has
 * reaped. Return: 0, or the error that refused it (then @io is the
 * caller's).
 */
int ps_submit(struct bxps *n, struct io *io)
{
	struct bx_sqe sqe;
	int ret;

	/* A node of this host: bxps_local.c's path. */
	if (ps_local_io(n, io))
		return ps_local_submit(n, io);
	ret = prep(n, io, &sqe);
	if (ret)
		return ret;
	ret = bx_submit(n->bx, &sqe, 1);
	if (ret == -EBUSY) {
		pthread_mutex_lock(&n->lock);
		io->next = n->pending;
		n->pending = io;
		pthread_mutex_unlock(&n->lock);
		return 0;
	}
	return ret < 0 ? ret : 0;
}

static int post_recv(struct bxps *n, uint32_t which)
{
	uint32_t cap = which ? n->msg_max : PS_SMALL_CAP;
	struct io *io = calloc(1, sizeof(*io));
	int ret = -ENOMEM;

	if (!io)
		goto err;
	io->kind = IO_RECV;
	io->to = -1;
	io->which = which;
	io->cap = cap;
	ret = bx_buf_alloc(n->bx, cap, &io->buf);
	if (ret)
		goto err_free_io;
	ret = ps_submit(n, io);
	if (ret)
		goto err_free_buf;
	return 0;

err_free_buf:
	bx_buf_free(n->bx, io->buf);
err_free_io:
	free(io);
err:
	pthread_mutex_lock(&n->lock);
	n->recv_deficit[which]++;
	pthread_mutex_unlock(&n->lock);
	return ret;
}

/*
 * A received buffer is given back: free it, and post the receives that
 * could not be posted for want of memory.
 */
void ps_recv_done(struct bxps *n, uint32_t which, void *buf)
{
	int want;

	bx_buf_free(n->bx, buf);
	pthread_mutex_lock(&n->lock);
	want = n->recv_deficit[which];
	n->recv_deficit[which] = 0;
	pthread_mutex_unlock(&n->lock);
	while (want-- > 0)
		if (post_recv(n, which))
			break;
}

static bool send_again(int err);
static void later(struct bxps *n, struct io *io, int ms);

/*
 * Send one message made of @nseg pieces to node index @to. For a request
 * (@req), pieces in the region go as they are: the caller keeps them
 * until the request is done, which is after its sends are. The others,
 * and every piece of an answer (no @req), are copied, with the pieces
 * between them, into one scratch buffer of the region that the send
 * owns: bxps_respond()'s caller may free its keys and values, or release
 * the request whose buffer they point into, as soon as it returns, while
 * the kernel still reads the message (a queued eager push is gathered
 * when it goes, a rendezvous one read by the peer later), and a freed
 * block may be handed out again at once.
 */
int ps_send(struct bxps *n, int to, const void *const *seg,
	    const uint64_t *seglen, unsigned int nseg, struct preq *req,
	    uint32_t part)
{
	uint64_t total = 0, copy = 0, zc = 0;
	struct io *io;
	uint8_t *p;
	int ret;

	for (unsigned int i = 0; i < nseg; i++) {
		total += seglen[i];
		if (seglen[i] && (!req || !bxps_in_region(n, seg[i], seglen[i])))
			copy += seglen[i];
	}
	if (total > n->msg_max)
		return -EMSGSIZE;
	if (n->nodes[to].dead)
		return n->nodes[to].err ? n->nodes[to].err : -ECONNABORTED;
	io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	io->kind = IO_SEND;
	io->to = to;
	io->req = req;
	io->part = part;
	io->len = (uint32_t)total;
	ret = bx_buf_alloc(n->bx, copy ? copy : 8, &io->scratch);
	if (ret) {
		free(io);
		return ret;
	}
	p = io->scratch;
	for (unsigned int i = 0; i < nseg; i++) {
		struct bx_vec *v = io->nvec ? &io->vec[io->nvec - 1] : NULL;
		uint64_t off;
		bool in;

		if (!seglen[i])
			continue;
		in = req && bxps_in_region(n, seg[i], seglen[i]);
		if (in) {
			off = (uint64_t)((const uint8_t *)seg[i] -
					 (const uint8_t *)bx_region(n->bx));
			zc += seglen[i];
		} else {
			memcpy(p, seg[i], seglen[i]);
			off = (uint64_t)(p - (uint8_t *)bx_region(n->bx));
			p += seglen[i];
		}
		/* Pieces that follow each other in the region are one. */
		if (v && v->off + v->len == off &&
		    v->len + seglen[i] <= (1u << 20)) {
			v->len += (uint32_t)seglen[i];
			continue;
		}
		if (io->nvec == BX_VEC_MAX) {
			ret = -EMSGSIZE;
			goto err;
		}
		io->vec[io->nvec++] = (struct bx_vec){ .off = off,
						       .len = (uint32_t)seglen[i] };
	}
	pthread_mutex_lock(&n->lock);
	n->stats.copied += copy;
	n->stats.zero_copy += zc;
	/* The request outlives its sends (send_done() reads it). */
	if (req)
		req->ios++;
	pthread_mutex_unlock(&n->lock);
	ret = ps_submit(n, io);
	/* Refused at once but certainly not delivered: later, as any retry. */
	if (ret && send_again(ret)) {
		later(n, io, 1);
		ret = 0;
	}
	if (ret) {
		if (req) {
			pthread_mutex_lock(&n->lock);
			req->ios--;
			pthread_mutex_unlock(&n->lock);
		}
		goto err;
	}
	return 0;

err:
	bx_buf_free(n->bx, io->scratch);
	free(io);
	return ret;
}

/*
 * Should an operation refused with @err go again? It was not delivered:
 * no receive buffer free, no connection yet, or one refused while two
 * hosts connected to each other at once (ECONNREFUSED; a process that is
 * gone is told by its watch, which stops the retries).
 */
static bool send_again(int err)
{
	return err == -ENOBUFS || err == -ENOTCONN || err == -EHOSTUNREACH ||
	       err == -ENETUNREACH || err == -EBUSY || err == -ECONNREFUSED;
}

/* Submit @io again after @ms (the progress thread's retry list). */
static void later(struct bxps *n, struct io *io, int ms)
{
	io->tries++;
	io->retry_at = ps_now_ms() + (uint64_t)ms;
	pthread_mutex_lock(&n->lock);
	n->stats.retries++;
	io->next = n->retry;
	n->retry = io;
	pthread_mutex_unlock(&n->lock);
}

/*
 * May @io go again after @err, which says it may have been delivered (a
 * connection failed under it)? An answer may: the requester takes the
 * first of each part and drops the others. A pull may: it changes
 * nothing. A push may not (it would be applied twice).
 */
static bool resend_unknown(const struct io *io, int err)
{
	bool conn = err == -ECONNRESET || err == -EIO || err == -EPROTO ||
		    err == -ECONNABORTED;

	return conn && (!io->req || !(io->req->flags & PSW_F_PUSH));
}

static void send_done(struct bxps *n, struct io *io, int res)
{
	if (res < 0 && (send_again(res) || resend_unknown(io, res)) &&
	    io->tries < PS_RETRY_MAX && !n->nodes[io->to].dead && !n->stop) {
		/* Back off 1 ms, then up to 16 ms: the peer is short. */
		later(n, io, io->tries < 4 ? 1 : io->tries < 64 ? 4 : 16);
		return;
	}
	if (res < 0 && getenv("BXPS_DEBUG"))
		fprintf(stderr, "bxps: send to node %u failed: %d after %d tries (%s)\n",
			n->nodes[io->to].id, res, io->tries,
			n->nodes[io->to].dead ? "dead" : "alive");
	if (res < 0) {
		pthread_mutex_lock(&n->lock);
		n->stats.errors++;
		pthread_mutex_unlock(&n->lock);
		if (io->req)
			ps_part_fail(n, io->req, io->part, res);
	}
	if (io->req)
		ps_req_put_io(n, io->req);
	bx_buf_free(n->bx, io->scratch);
	free(io);
}

static void watch_done(struct bxps *n, struct io *io, int res);

/* Submit what waited for room in the ring, and retries that are due. */
static void flush(struct bxps *n)
{
	struct io *list, *io, *keep = NULL;
	uint64_t now = ps_now_ms();

	pthread_mutex_lock(&n->lock);
	list = n->pending;
	n->pending = NULL;
	for (io = n->retry; io; ) {
		struct io *next = io->next;

		if (io->retry_at <= now) {
			io->next = list;
			list = io;
		} else {
			io->next = keep;
			keep = io;
		}
		io = next;
	}
	n->retry = keep;
	pthread_mutex_unlock(&n->lock);
	while (list) {
		int ret;

		io = list;
		list = io->next;
		ret = ps_submit(n, io);
		if (ret && io->kind == IO_SEND)
			send_done(n, io, ret);
		else if (ret && io->kind == IO_WATCH)
			watch_done(n, io, ret);
		else if (ret && io->kind == IO_RECV)
			ps_recv_done(n, io->which, io->buf), free(io);
	}
}

/* ---- control: replies, watches --------------------------------------- */

/* Answer pull request @token with the @len bytes at @buf (region). */
static int reply(struct bxps *n, uint64_t token, void *buf, uint32_t len,
		 bool own)
{
	struct io *io = calloc(1, sizeof(*io));
	int ret;

	if (!io)
		return -ENOMEM;
	io->kind = IO_REPLY;
	io->to = -1;
	io->token = token;
	io->scratch = buf;
	io->len = len;
	io->tries = own;	/* free @buf when sent */
	ret = ps_submit(n, io);
	if (ret)
		free(io);
	return ret;
}

static int reply_ctrl(struct bxps *n, uint64_t token, uint8_t op, int32_t arg)
{
	void *buf;
	int ret = bx_buf_alloc(n->bx, PSW_CTRL_LEN, &buf);

	if (ret)
		return ret;
	psw_ctrl_encode(buf, op, arg, 0, NULL);
	ret = reply(n, token, buf, PSW_CTRL_LEN, true);
	if (ret)
		bx_buf_free(n->bx, buf);
	return ret;
}

static int ctrl_io(struct bxps *n, struct io **out, int to, enum io_kind kind,
		   uint32_t resp_cap)
{
	struct io *io = calloc(1, sizeof(*io));
	int ret;

	if (!io)
		return -ENOMEM;
	io->kind = kind;
	io->to = to;
	io->resp_cap = resp_cap;
	ret = bx_buf_alloc(n->bx, PSW_CTRL_LEN, &io->scratch);
	if (ret)
		goto err_free_io;
	ret = bx_buf_alloc(n->bx, resp_cap, &io->resp);
	if (ret)
		goto err_free_scratch;
	*out = io;
	return 0;

err_free_scratch:
	bx_buf_free(n->bx, io->scratch);
err_free_io:
	free(io);
	return ret;
}

static void io_free(struct bxps *n, struct io *io)
{
	if (!io)
		return;
	bx_buf_free(n->bx, io->scratch);
	bx_buf_free(n->bx, io->resp);
	free(io);
}

static int watch(struct bxps *n, int to)
{
	struct io *io;
	int ret = ctrl_io(n, &io, to, IO_WATCH, PSW_CTRL_LEN);

	if (ret)
		return ret;
	psw_ctrl_encode(io->scratch, PSW_C_WATCH, 0, n->id, NULL);
	ret = ps_submit(n, io);
	if (ret)
		io_free(n, io);
	return ret;
}

static void mark_dead(struct bxps *n, int idx, int err)
{
	pthread_mutex_lock(&n->lock);
	if (n->nodes[idx].dead || n->nodes[idx].gone) {
		pthread_mutex_unlock(&n->lock);
		return;
	}
	n->nodes[idx].dead = true;
	n->nodes[idx].err = err;
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->lock);
	fprintf(stderr, "bxps: node %u (%s) is dead: %s\n", n->nodes[idx].id,
		n->nodes[idx].addr, strerror(-err));
	ps_node_died(n, idx);
}

static void barrier_check(struct bxps *n, uint32_t group);

static void watch_done(struct bxps *n, struct io *io, int res)
{
	struct psw_ctrl c;
	int to = io->to;

	if (res >= 0 && psw_ctrl_decode(io->resp, (uint64_t)res, &c) == 0 &&
	    c.op == PSW_C_BYE) {
		pthread_mutex_lock(&n->lock);
		n->nodes[to].gone = true;
		pthread_mutex_unlock(&n->lock);
	} else if (res < 0 && send_again(res) && io->tries < 100 && !n->stop) {
		/* Not delivered (a connection coming up): ask again soon. */
		later(n, io, 100);
		return;
	} else if ((res >= 0 || res == -ETIMEDOUT) && !n->stop) {
		/* Alive (or no answer in time: ask again). */
		io_free(n, io);
		if (watch(n, to))
			mark_dead(n, to, -ENOMEM);
		return;
	} else if (!n->stop) {
		mark_dead(n, to, res < 0 ? res : -EBADMSG);
		if (n->role == PSW_ROLE_SCHEDULER)
			for (uint32_t g = 1; g < 8; g++)
				barrier_check(n, g);
	}
	io_free(n, io);
}

/* Answer every watch parked here with @op (ALIVE, or BYE at the end). */
static void answer_watches(struct bxps *n, bool bye)
{
	struct parked *list, *p;

	pthread_mutex_lock(&n->lock);
	list = n->watches;
	n->watches = NULL;
	n->alive_at = ps_now_ms() + PS_ALIVE_MS;
	pthread_mutex_unlock(&n->lock);
	while ((p = list)) {
		list = p->next;
		reply(n, p->token, bye ? n->bye_buf : n->alive_buf,
		      PSW_CTRL_LEN, false);
		free(p);
	}
}

/* ---- the scheduler: registrations and barriers ------------------------ */

static uint32_t group_size(struct bxps *n, uint32_t group)
{
	uint32_t cnt = 0;

	for (uint32_t i = 0; i < n->nnodes; i++)
		if ((n->nodes[i].role & group) && !n->nodes[i].dead &&
		    !n->nodes[i].gone)
			cnt++;
	return cnt;
}

/*
 * The live members of @group that wait at its barrier (n->lock held): a
 * member that arrived and died since is not counted, or the barrier
 * would let the others through before every live member came.
 */
static uint32_t arrived(struct bxps *n, uint32_t group)
{
	uint32_t cnt = 0;

	for (struct parked *p = n->barrier[group]; p; p = p->next)
		if (p->node < 0 || (!n->nodes[p->node].dead &&
				    !n->nodes[p->node].gone))
			cnt++;
	return cnt;
}

/* Release the barrier of @group if every live member arrived. */
static void barrier_check(struct bxps *n, uint32_t group)
{
	struct parked *list = NULL, *p;

	pthread_mutex_lock(&n->lock);
	if (n->barrier[group] &&
	    arrived(n, group) >= group_size(n, group)) {
		list = n->barrier[group];
		n->barrier[group] = NULL;
		n->barrier_gen[group]++;
		pthread_cond_broadcast(&n->cv);
	}
	pthread_mutex_unlock(&n->lock);
	while ((p = list)) {
		list = p->next;
		if (p->node >= 0)
			reply_ctrl(n, p->token, PSW_C_DONE, 0);
		free(p);
	}
}

static void barrier_arrive(struct bxps *n, uint32_t group, uint64_t token,
			   int node)
{
	struct parked *p = calloc(1, sizeof(*p));

	if (!p) {
		if (node >= 0)
			reply_ctrl(n, token, PSW_C_DONE, -ENOMEM);
		return;
	}
	p->token = token;
	p->node = node;
	pthread_mutex_lock(&n->lock);
	/* Asked again (its wait timed out): the same arrival, a new token. */
	for (struct parked *q = n->barrier[group]; node >= 0 && q; q = q->next)
		if (q->node == node) {
			q->token = token;
			pthread_mutex_unlock(&n->lock);
			free(p);
			return;
		}
	p->next = n->barrier[group];
	n->barrier[group] = p;
	pthread_mutex_unlock(&n->lock);
	barrier_check(n, group);
}

/* All nodes registered: number them and send each the table. */
static void regs_complete(struct bxps *n)
{
	uint32_t rank[8] = { 0 };
	struct parked *p, *list = n->regs;
	int ret;

	n->regs = NULL;
	/* Ranks in the order of registration; the list is newest first. */
	for (uint32_t i = 0; i < n->nregs; i++) {
		struct psw_node *nd = &n->reg_nodes[i];

		nd->id = psw_node_id(nd->role, rank[nd->role]++);
	}
	n->nnodes = n->nregs + 1;
	for (uint32_t i = 0; i < n->nnodes; i++) {
		struct psw_node *src = i ? &n->reg_nodes[i - 1] : NULL;
		struct node *nd = &n->nodes[i];

		if (!src)
			continue;
		nd->id = src->id;
		nd->role = src->role;
		nd->service = src->service;
		memcpy(nd->addr, src->addr, PSW_ADDR_LEN);
		nd->local = !strcmp(nd->addr, n->host);
		ret = nd->local ? 0 : bx_peer(n->bx, nd->addr, &nd->peer);
		if (ret) {
			nd->dead = true;
			nd->err = ret;
		}
	}
	for (uint32_t i = 0; (p = list); i++) {
		struct psw_node all[PS_MAX_NODES];
		uint64_t size = psw_table_size(n->nnodes);
		void *buf;

		list = p->next;
		for (uint32_t j = 0; j < n->nnodes; j++) {
			all[j].id = n->nodes[j].id;
			all[j].role = n->nodes[j].role;
			all[j].service = n->nodes[j].service;
			memcpy(all[j].addr, n->nodes[j].addr, PSW_ADDR_LEN);
		}
		if (bx_buf_alloc(n->bx, size, &buf) == 0) {
			psw_table_encode(buf, size, all, n->nnodes,
					 n->reg_nodes[p->node].id);
			if (reply(n, p->token, buf, (uint32_t)size, true))
				bx_buf_free(n->bx, buf);
		}
		free(p);
	}
	pthread_mutex_lock(&n->lock);
	n->nregs = 0;	/* done: the table is the nodes' */
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->lock);
	for (uint32_t i = 1; i < n->nnodes; i++)
		if (!n->nodes[i].dead && watch(n, (int)i))
			mark_dead(n, (int)i, -ENOMEM);
}

static void on_register(struct bxps *n, const struct psw_ctrl *c,
			uint64_t token)
{
	uint32_t want = (uint32_t)(n->cfg.num_servers + n->cfg.num_workers);
	struct parked *p;
	uint32_t i;

	if (n->nnodes > 1 || (c->arg != PSW_ROLE_SERVER &&
			      c->arg != PSW_ROLE_WORKER)) {
		/* Too late (the job is complete), or not a role. */
		reply_ctrl(n, token, PSW_C_DONE, -EINVAL);
		return;
	}
	/* A pull sent again: the same node, a new token. */
	for (i = 0; i < n->nregs; i++)
		if (n->reg_nodes[i].service == c->service &&
		    !strcmp(n->reg_nodes[i].addr, c->addr))
			break;
	for (p = n->regs; p; p = p->next)
		if (p->node == (int)i)
			break;
	if (i == n->nregs) {
		struct psw_node *nd = &n->reg_nodes[n->nregs];
		uint32_t roles = 0;

		for (uint32_t j = 0; j < n->nregs; j++)
			roles += n->reg_nodes[j].role == (uint32_t)c->arg;
		if (roles >= (uint32_t)(c->arg == PSW_ROLE_SERVER ?
					n->cfg.num_servers : n->cfg.num_workers)) {
			reply_ctrl(n, token, PSW_C_DONE, -EEXIST);
			return;
		}
		nd->role = (uint32_t)c->arg;
		nd->service = c->service;
		memcpy(nd->addr, c->addr, PSW_ADDR_LEN);
		n->nregs++;
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return;
		p->node = (int)i;
		p->next = n->regs;
		n->regs = p;
	}
	p->token = token;
	if (n->nregs == want)
		regs_complete(n);
}

/* A pull request (a control message) came to this node. */
static void on_ctrl(struct bxps *n, const void *buf, uint32_t len,
		    uint64_t token, uint32_t peer)
{
	struct psw_ctrl c;
	struct parked *p;

	(void)peer;
	if (psw_ctrl_decode(buf, len, &c)) {
		pthread_mutex_lock(&n->lock);
		n->stats.bad++;
		pthread_mutex_unlock(&n->lock);
		reply_ctrl(n, token, PSW_C_DONE, -EBADMSG);
		return;
	}
	switch (c.op) {
	case PSW_C_REGISTER:
		if (n->role == PSW_ROLE_SCHEDULER) {
			on_register(n, &c, token);
			return;
		}
		break;
	case PSW_C_BARRIER:
		if (n->role == PSW_ROLE_SCHEDULER && c.arg > 0 && c.arg < 8) {
			barrier_arrive(n, (uint32_t)c.arg, token,
				       ps_node_index(n, c.service));
			return;
		}
		break;
	case PSW_C_WATCH:
		p = calloc(1, sizeof(*p));
		if (!p)
			break;
		p->token = token;
		p->node = ps_node_index(n, c.service);
		pthread_mutex_lock(&n->lock);
		p->next = n->watches;
		n->watches = p;
		pthread_mutex_unlock(&n->lock);
		if (n->stop)
			answer_watches(n, true);
		return;
	}
	reply_ctrl(n, token, PSW_C_DONE, -EINVAL);
}

/* ---- the progress thread ------------------------------------------------ */

void ps_on_request(struct bxps *n, const void *buf, uint32_t len,
		   uint64_t token)
{
	if (n->stop)
		reply_ctrl(n, token, PSW_C_BYE, 0);
	else
		on_ctrl(n, buf, len, token, 0);
}

void ps_on_cqe(struct bxps *n, const struct bx_cqe *cqe)
{
	struct io *io = (struct io *)(uintptr_t)cqe->user_data;

	switch (io->kind) {
	case IO_RECV:
		if (cqe->res < 0) {
			/* Unbound (the end), or the buffer refused. */
			bx_buf_free(n->bx, io->buf);
			free(io);
			return;
		}
		if (n->stop) {
			if (cqe->flags & BX_CQE_F_REQUEST)
				reply_ctrl(n, cqe->token, PSW_C_BYE, 0);
			bx_buf_free(n->bx, io->buf);
			free(io);
			return;
		}
		/* A fresh buffer takes this one's place at once. */
		post_recv(n, io->which);
		if (cqe->flags & BX_CQE_F_REQUEST) {
			on_ctrl(n, io->buf, (uint32_t)cqe->res, cqe->token,
				cqe->peer);
			ps_recv_done(n, io->which, io->buf);
		} else {
			ps_on_message(n, io->buf, (uint32_t)cqe->res,
				      io->which);
		}
		free(io);
		return;
	case IO_SEND:
		send_done(n, io, cqe->res);
		return;
	case IO_CTRL:
		pthread_mutex_lock(&n->lock);
		io->wait->res = cqe->res;
		io->wait->done = true;
		pthread_cond_broadcast(&n->cv);
		pthread_mutex_unlock(&n->lock);
		return;
	case IO_WATCH:
		watch_done(n, io, cqe->res);
		return;
	case IO_REPLY:
		if (io->tries)
			bx_buf_free(n->bx, io->scratch);
		free(io);
		return;
	}
}

static void *progress(void *arg)
{
	struct bxps *n = arg;
	struct bx_cqe cqes[64];

	while (!n->stop) {
		int got;

		flush(n);
		if (__atomic_load_n(&n->drain, __ATOMIC_RELAXED))
			ps_apps_drain(n);
		if (n->watches && ps_now_ms() >= n->alive_at)
			answer_watches(n, false);
		/* bx's completions and the same-host connections' traffic. */
		ps_local_poll(n, n->retry || n->pending ? 1 : 20);
		got = bx_reap(n->bx, cqes, 64, 0);
		for (int i = 0; i < got; i++)
			ps_on_cqe(n, &cqes[i]);
	}
	return NULL;
}

/* ---- start, barrier, finalize ----------------------------------------- */

/* A control call to node index @to, waited for; the answer in *@iop. */
static int ctrl_call(struct bxps *n, int to, uint8_t op, int32_t arg,
		     uint32_t resp_cap, struct io **iop)
{
	struct ctrl_wait w = { 0 };
	struct io *io;
	int ret = ctrl_io(n, &io, to, IO_CTRL, resp_cap);

	*iop = NULL;
	if (ret)
		return ret;
	psw_ctrl_encode(io->scratch, op, arg,
			op == PSW_C_REGISTER ? n->service : n->id, n->host);
	io->wait = &w;
	ret = ps_submit(n, io);
	if (ret) {
		io_free(n, io);
		return ret;
	}
	pthread_mutex_lock(&n->lock);
	while (!w.done)
		pthread_cond_wait(&n->cv, &n->lock);
	pthread_mutex_unlock(&n->lock);
	*iop = io;
	return w.res;
}

/* The address this host reaches @uri from (a UDP socket, nothing sent). */
static int local_addr(const char *uri, char *out)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	int fd, ret = -EINVAL;

	if (inet_pton(AF_INET, uri, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(9);
		sl = sizeof(*a4);
	} else if (inet_pton(AF_INET6, uri, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(9);
		sl = sizeof(*a6);
	} else {
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, sl) ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		ret = -errno;
		goto out;
	}
	ret = 0;
	if (!inet_ntop(ss.ss_family, ss.ss_family == AF_INET ?
		       (void *)&a4->sin_addr : (void *)&a6->sin6_addr,
		       out, PSW_ADDR_LEN))
		ret = -EINVAL;
out:
	close(fd);
	return ret;
}

static int bind_services(struct bxps *n)
{
	uint32_t base = n->cfg.root_port;
	int ret;

	for (uint32_t k = n->role == PSW_ROLE_SCHEDULER ? 0 : 1; k < 4096;
	     k++) {
		uint32_t svc = base + 2 * k;

		if (svc < base || svc + 1 < svc)
			break;
		ret = bx_bind(n->bx, svc);
		if (ret == -EADDRINUSE && k)
			continue;
		if (ret)
			return ret;
		ret = bx_bind(n->bx, svc + 1);
		if (ret == -EADDRINUSE && k) {
			bx_unbind(n->bx, svc);
			continue;
		}
		if (ret)
			return ret;
		n->service = svc;
		return 0;
	}
	return -EADDRINUSE;
}

static int join(struct bxps *n)
{
	uint64_t deadline = ps_now_ms() + (uint64_t)n->cfg.timeout_ms;
	struct psw_node tab[PS_MAX_NODES];
	uint32_t cnt, you;
	struct io *io;
	int ret;

	/* Node 0 is the scheduler until the table comes. */
	n->nnodes = 1;
	n->nodes[0].id = 1;
	n->nodes[0].role = PSW_ROLE_SCHEDULER;
	n->nodes[0].service = n->cfg.root_port;
	snprintf(n->nodes[0].addr, PSW_ADDR_LEN, "%s", n->cfg.root_uri);
	/* On this host: reached through bxps_local.c, not bx. */
	n->nodes[0].local = !strcmp(n->host, n->cfg.root_uri);
	if (!n->nodes[0].local) {
		ret = bx_peer(n->bx, n->cfg.root_uri, &n->nodes[0].peer);
		if (ret)
			return ret;
	}
	for (;;) {
		ret = ctrl_call(n, 0, PSW_C_REGISTER, (int32_t)n->role,
				(uint32_t)psw_table_size(PS_MAX_NODES), &io);
		/* The scheduler not up yet: try again until the deadline. */
		if (send_again(ret) && ps_now_ms() < deadline) {
			io_free(n, io);
			usleep(100000);
			continue;
		}
		break;
	}
	if (ret < 0)
		goto out;
	ret = psw_table_decode(io->resp, (uint64_t)ret, tab, PS_MAX_NODES,
			       &cnt, &you);
	if (ret) {
		struct psw_ctrl c;

		/* Refused: a control answer with the errno. */
		if (psw_ctrl_decode(io->resp, PSW_CTRL_LEN, &c) == 0 && c.arg)
			ret = c.arg;
		goto out;
	}
	/* Node 0 stays the scheduler (its local connection is kept). */
	n->nnodes = cnt;
	for (uint32_t i = 0; i < cnt; i++) {
		struct node *nd = &n->nodes[i];

		nd->id = tab[i].id;
		nd->role = tab[i].role;
		nd->service = tab[i].service;
		memcpy(nd->addr, tab[i].addr, PSW_ADDR_LEN);
		nd->local = !strcmp(nd->addr, n->host);
		if (nd->id == you) {
			n->self = (int)i;
			nd->local = false;
		}
		if (nd->local || (int)i == n->self)
			continue;
		ret = bx_peer(n->bx, nd->addr, &nd->peer);
		if (ret)
			goto out;
	}
	n->id = you;
	n->rank = psw_id_rank(you);
	for (uint32_t i = 0; i < cnt; i++)
		if ((int)i != n->self && watch(n, (int)i))
			mark_dead(n, (int)i, -ENOMEM);
	ret = 0;
out:
	io_free(n, io);
	return ret;
}

int bxps_start(struct bxps **out, const struct bxps_cfg *cfg)
{
	struct bxps *n;
	int ret;

	if (!cfg || !cfg->root_uri || cfg->num_servers < 1 ||
	    cfg->num_workers < 1 ||
	    cfg->num_servers + cfg->num_workers >= (int)PS_MAX_NODES ||
	    (cfg->role != BXPS_SCHEDULER && cfg->role != BXPS_SERVER &&
	     cfg->role != BXPS_WORKER) || !cfg->root_port)
		return -EINVAL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->cfg = *cfg;
	if (!n->cfg.timeout_ms)
		n->cfg.timeout_ms = 120000;
	n->msg_max = cfg->msg_max ? cfg->msg_max : (2u << 20) + 65536;
	if (n->msg_max < PS_SMALL_CAP * 2)
		n->msg_max = PS_SMALL_CAP * 2;
	n->role = (uint32_t)cfg->role;
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cv, NULL);
	n->unclaimed_tail = &n->unclaimed;
	n->alive_at = ps_now_ms() + PS_ALIVE_MS;
	if (cfg->host)
		snprintf(n->host, sizeof(n->host), "%s", cfg->host);
	else if (cfg->role == BXPS_SCHEDULER)
		snprintf(n->host, sizeof(n->host), "%s", cfg->root_uri);
	else if ((ret = local_addr(cfg->root_uri, n->host)))
		goto err_free;
	ret = bx_open(&n->bx, 0);
	if (ret)
		goto err_free;
	ret = bx_setup(n->bx, (uint64_t)(cfg->region_mb ? cfg->region_mb : 64)
		       << 20, 4096);
	if (ret)
		goto err_close;
	ret = -ENOMEM;
	if (bx_buf_alloc(n->bx, PSW_CTRL_LEN, &n->alive_buf) ||
	    bx_buf_alloc(n->bx, PSW_CTRL_LEN, &n->bye_buf))
		goto err_close;
	psw_ctrl_encode(n->alive_buf, PSW_C_ALIVE, 0, 0, NULL);
	psw_ctrl_encode(n->bye_buf, PSW_C_BYE, 0, 0, NULL);
	ret = bind_services(n);
	if (ret)
		goto err_close;
	ret = ps_local_init(n);
	if (ret)
		goto err_close;
	for (uint32_t i = 0; i < PS_NSMALL + PS_NLARGE; i++) {
		ret = post_recv(n, i >= PS_NSMALL);
		if (ret)
			goto err_local;
	}
	ret = pthread_create(&n->thread, NULL, progress, n);
	if (ret) {
		ret = -ret;
		goto err_local;
	}
	n->started = true;
	if (n->role == PSW_ROLE_SCHEDULER) {
		uint64_t deadline = ps_now_ms() + (uint64_t)n->cfg.timeout_ms;

		n->id = 1;
		n->self = 0;
		n->nnodes = 1;
		n->nodes[0].id = 1;
		n->nodes[0].role = PSW_ROLE_SCHEDULER;
		n->nodes[0].service = n->service;
		snprintf(n->nodes[0].addr, PSW_ADDR_LEN, "%s", n->host);
		pthread_mutex_lock(&n->lock);
		while (n->nnodes == 1 && ps_now_ms() < deadline) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&n->cv, &n->lock, &ts);
		}
		ret = n->nnodes == 1 ? -ETIMEDOUT : 0;
		pthread_mutex_unlock(&n->lock);
	} else {
		ret = join(n);
	}
	if (ret)
		goto err_stop;
	*out = n;
	return 0;

err_stop:
	n->stop = true;
	pthread_join(n->thread, NULL);
err_local:
	ps_local_fini(n);
err_close:
	bx_close(n->bx);
err_free:
	free(n);
	return ret;
}

int bxps_barrier(struct bxps *n, int group)
{
	struct psw_ctrl c;
	struct io *io;
	uint64_t gen;
	int ret;

	if (group <= 0 || group > BXPS_ALL || !(group & (int)n->role))
		return -EINVAL;
	if (n->role == PSW_ROLE_SCHEDULER) {
		pthread_mutex_lock(&n->lock);
		gen = n->barrier_gen[group];
		pthread_mutex_unlock(&n->lock);
		barrier_arrive(n, (uint32_t)group, 0, -1);
		pthread_mutex_lock(&n->lock);
		while (n->barrier_gen[group] == gen)
			pthread_cond_wait(&n->cv, &n->lock);
		pthread_mutex_unlock(&n->lock);
		return 0;
	}
	for (int tries = 0;; tries++) {
		ret = ctrl_call(n, 0, PSW_C_BARRIER, group, PSW_CTRL_LEN, &io);
		/*
		 * Waited past the timeout: ask again, the scheduler counts it
		 * once (a barrier waits for the slowest live member). Not
		 * delivered: safe to send again.
		 */
		if (ret == -ETIMEDOUT && !n->nodes[0].dead) {
			io_free(n, io);
			continue;
		}
		if (ret >= 0 || !send_again(ret) || tries >= 100)
			break;
		io_free(n, io);
		usleep(100000);
	}
	if (ret >= 0)
		ret = psw_ctrl_decode(io->resp, (uint64_t)ret, &c) ? -EBADMSG :
		      c.arg;
	io_free(n, io);
	return ret;
}

int bxps_finalize(struct bxps *n, int barrier)
{
	int ret = 0;

	if (!n)
		return 0;
	if (barrier)
		ret = bxps_barrier(n, BXPS_ALL);
	if (getenv("BXPS_DEBUG")) {
		struct bxps_stats st;

		bxps_stats(n, &st);
		fprintf(stderr, "bxps: node %u ends: requests %llu responses %llu handled %llu retries %llu bad %llu errors %llu\n",
			n->id, (unsigned long long)st.requests,
			(unsigned long long)st.responses,
			(unsigned long long)st.handled,
			(unsigned long long)st.retries,
			(unsigned long long)st.bad,
			(unsigned long long)st.errors);
	}
	ps_apps_stop(n);
	n->stop = true;
	pthread_join(n->thread, NULL);
	answer_watches(n, true);
	ps_apps_free(n);
	ps_fail_all(n, -ECANCELED);
	/* Let the byes and answers go out before the file closes. */
	{
		struct bx_cqe cqes[64];
		uint64_t end = ps_now_ms() + 1000;
		int got;

		while (ps_now_ms() < end &&
		       (got = bx_reap(n->bx, cqes, 64, 50)) > 0)
			for (int i = 0; i < got; i++)
				ps_on_cqe(n, &cqes[i]);
	}
	ps_local_fini(n);
	bx_close(n->bx);
	free(n->status);
	free(n);
	return ret;
}

int bxps_role(const struct bxps *n)
{
	return (int)n->role;
}

int bxps_id(const struct bxps *n)
{
	return (int)n->id;
}

int bxps_rank(const struct bxps *n)
{
	return (int)n->rank;
}

int bxps_num_servers(const struct bxps *n)
{
	return n->cfg.num_servers;
}

int bxps_num_workers(const struct bxps *n)
{
	return n->cfg.num_workers;
}

void bxps_server_range(const struct bxps *n, int rank, uint64_t *begin,
		       uint64_t *end)
{
	psw_range((uint32_t)n->cfg.num_servers, (uint32_t)rank, begin, end);
}

int bxps_node_dead(struct bxps *n, int id)
{
	int i = ps_node_index(n, (uint32_t)id), dead;

	if (i < 0)
		return -ENOENT;
	pthread_mutex_lock(&n->lock);
	dead = n->nodes[i].dead;
	pthread_mutex_unlock(&n->lock);
	return dead;
}

int bxps_node_ids(const struct bxps *n, int group, int *ids, int max)
{
	int cnt = 0;

	for (uint32_t i = 0; i < n->nnodes; i++)
		if ((n->nodes[i].role & (uint32_t)group) && cnt < max)
			ids[cnt++] = (int)n->nodes[i].id;
	return cnt;
}

void *bxps_alloc(struct bxps *n, size_t size)
{
	void *p;

	return bx_buf_alloc(n->bx, size ? size : 1, &p) ? NULL : p;
}

void bxps_free(struct bxps *n, void *buf)
{
	if (buf)
		bx_buf_free(n->bx, buf);
}

void *bxps_region(const struct bxps *n, uint64_t *size)
{
	*size = bx_region_size(n->bx);
	return bx_region(n->bx);
}

int bxps_in_region(const struct bxps *n, const void *p, size_t len)
{
	const uint8_t *r = bx_region(n->bx), *q = p;
	uint64_t size = bx_region_size(n->bx);

	return r && q >= r && q <= r + size && len <= (uint64_t)(r + size - q);
}

void bxps_stats(struct bxps *n, struct bxps_stats *st)
{
	pthread_mutex_lock(&n->lock);
	*st = n->stats;
	pthread_mutex_unlock(&n->lock);
}
