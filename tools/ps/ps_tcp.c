// SPDX-License-Identifier: GPL-2.0
/*
 * bxps over kernel TCP: the fair baseline for bx, on the shared framed
 * RPC of tools/lib/rpc_tcp.c (u32 length prefix, an epoll server with a
 * thread per SO_REUSEPORT listener, responses sent with writev()).
 *
 * A pull is answered by its response, built in the connection's transmit
 * buffer (sized for the largest response); a push by a bare struct
 * ps_hdr, sent as soon as the push has been received in full and applied
 * only then (rpc_tcp's after() hook), which is when bx acknowledges a
 * push too. The receive buffer holds the largest request from the start.
 *
 * Worker: one persistent blocking connection per worker thread with
 * TCP_NODELAY: a writev() of prefix and request, then a readv() of
 * prefix and response straight into the caller's buffer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps.h"
#include "rpc_tcp.h"

/* ---- server ----------------------------------------------------------- */

struct tsrv {
	struct ps_server	*s;
	struct ps_srv_stats	*st;	/* per server thread */
};

static bool is_push(const void *msg)
{
	struct ps_hdr h;

	memcpy(&h, msg, sizeof(h));
	return h.op == PS_OP_SPARSE_PUSH || h.op == PS_OP_DENSE_PUSH;
}

static int tsrv_handle(void *ctx, int thread, const void *msg, uint32_t len,
		       void *tx, uint32_t tx_cap, struct rpc_tcp_resp *r)
{
	struct tsrv *ts = ctx;
	struct ps_hdr *a = tx;

	if (is_push(msg)) {
		/* Acknowledge delivery first, then apply (tsrv_after). */
		memcpy(a, msg, sizeof(*a));
		a->status = PS_ST_OK;
		r->iov[0].iov_len = sizeof(*a);
	} else {
		r->iov[0].iov_len = ps_srv_pull(ts->s, msg, len, tx, tx_cap,
						&ts->st[thread]);
	}
	r->iov[0].iov_base = tx;
	r->n = 1;
	return 0;
}

static void tsrv_after(void *ctx, int thread, const void *msg, uint32_t len)
{
	struct tsrv *ts = ctx;

	if (is_push(msg))
		ps_srv_push(ts->s, msg, len, &ts->st[thread]);
}

static bool tsrv_running(void *ctx)
{
	return !*((struct tsrv *)ctx)->s->stop;
}

static void tsrv_ready(void *ctx)
{
	ps_srv_ready(((struct tsrv *)ctx)->s);
}

static const struct rpc_tcp_srv_ops tsrv_ops = {
	.handle		= tsrv_handle,
	.after		= tsrv_after,
	.running	= tsrv_running,
	.ready		= tsrv_ready,
};

static int tcp_serve(struct ps_server *s, struct ps_srv_stats *tot)
{
	const struct ps_cfg *cfg = s->cfg;
	uint32_t rx = RPC_TCP_PFX + (ps_push_max(&cfg->info) > PS_REQ_MAX ?
				     ps_push_max(&cfg->info) : PS_REQ_MAX);
	struct rpc_tcp_srv_cfg rc = {
		.prog = "bxps", .port = cfg->service, .threads = cfg->threads,
		.poll_ms = 100, .min_len = sizeof(struct ps_hdr),
		.rx_init = rx, .rx_max = rx, .tx_cap = ps_resp_max(&cfg->info),
	};
	struct tsrv ts = { s, calloc(cfg->threads, sizeof(*ts.st)) };
	struct rpc_tcp_srv_stats rst = { 0 };
	int ret;

	if (!ts.st)
		return -ENOMEM;
	ret = rpc_tcp_serve(&rc, &tsrv_ops, &ts, &rst);
	for (int i = 0; i < cfg->threads; i++)
		ps_srv_stats_add(tot, &ts.st[i]);
	tot->errors += rst.errors;
	tot->conns += rst.conns;
	free(ts.st);
	return ret;
}

/* ---- worker ----------------------------------------------------------- */

struct ps_client {
	struct sockaddr_in	sa;
};

#define CONN_BUFS	8

struct ps_conn {
	int		fd;
	void		*bufs[CONN_BUFS];
	int		nbufs;
};

static int tcp_client_init(const struct ps_cfg *cfg, struct ps_client **out)
{
	struct ps_client *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (rpc_tcp_addr(cfg->addr, cfg->service, &c->sa)) {
		fprintf(stderr, "bxps: bad IPv4 address %s\n", cfg->addr);
		free(c);
		return -EINVAL;
	}
	*out = c;
	return 0;
}

static void tcp_client_fini(struct ps_client *c)
{
	free(c);
}

static int tcp_conn_open(struct ps_client *c, struct ps_conn **out)
{
	struct ps_conn *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return -ENOMEM;
	pc->fd = rpc_tcp_connect(&c->sa, PS_OP_TIMEOUT_MS, false);
	if (pc->fd < 0) {
		int err = pc->fd;

		free(pc);
		return err;
	}
	*out = pc;
	return 0;
}

static void tcp_conn_close(struct ps_conn *pc)
{
	close(pc->fd);
	for (int i = 0; i < pc->nbufs; i++)
		free(pc->bufs[i]);
	free(pc);
}

static void *tcp_alloc(struct ps_conn *pc, size_t len)
{
	void *p;

	if (pc->nbufs == CONN_BUFS)
		return NULL;
	p = aligned_alloc(64, (len + 63) & ~(size_t)63);
	if (p)
		pc->bufs[pc->nbufs++] = p;
	return p;
}

static int tcp_pull(struct ps_conn *pc, const void *req, uint32_t len,
		    void *resp, uint32_t cap, uint64_t *retries)
{
	int r;

	(void)retries;
	r = rpc_tcp_send(pc->fd, req, len);
	return r ? r : rpc_tcp_recv(pc->fd, resp, cap);
}

static int tcp_push(struct ps_conn *pc, const void *msg, uint32_t len,
		    uint64_t *retries)
{
	struct ps_hdr ack, h;
	int r;

	(void)retries;
	r = rpc_tcp_send(pc->fd, msg, len);
	if (!r)
		r = rpc_tcp_recv(pc->fd, &ack, sizeof(ack));
	if (r < 0)
		return r;
	memcpy(&h, msg, sizeof(h));
	if (r != sizeof(ack) || ack.magic != PS_MAGIC || ack.op != h.op ||
	    ack.seq != h.seq || ack.status != PS_ST_OK)
		return -EBADMSG;
	return 0;
}

static void tcp_host_sample(const struct ps_cfg *cfg, struct ps_host *h)
{
	ps_count_tcp_conns(cfg->service, h);
}

const struct ps_transport ps_tcp_transport = {
	.name		= "tcp",
	.serve		= tcp_serve,
	.client_init	= tcp_client_init,
	.client_fini	= tcp_client_fini,
	.conn_open	= tcp_conn_open,
	.conn_close	= tcp_conn_close,
	.buf_alloc	= tcp_alloc,
	.pull		= tcp_pull,
	.push		= tcp_push,
	.host_sample	= tcp_host_sample,
};
