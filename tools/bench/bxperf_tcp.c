// SPDX-License-Identifier: GPL-2.0
/*
 * bxperf over kernel TCP: the same operations as over bx, on the shared
 * framed RPC of tools/lib/rpc_tcp.c (a u32 length prefix before every
 * message, persistent connections with TCP_NODELAY, epoll).
 *
 * A request is a struct bp_msg, followed by its payload for a push. A
 * pull is answered by size bytes straight from one shared 16 MiB buffer
 * (prefix and payload in one writev()), a STAT by a struct bp_stat, a
 * push by an empty message as soon as the server has received all of it
 * (which is when bx completes a push too).
 *
 * Server: one thread; a connection's receive buffer grows to its largest
 * request. While a connection's response is still going out it is not
 * read, which bounds what it buffers; pipelined requests wait in the
 * socket.
 *
 * Client: one persistent connection per process, non-blocking; up to
 * DEPTH requests pipelined on it, answered in order. A response is read
 * with one readv() of the rest of its prefix and its payload, straight
 * into the slot's buffer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxperf.h"
#include "rpc_tcp.h"

#define HDR	((uint32_t)sizeof(struct bp_msg))

/* ---- server ----------------------------------------------------------- */

struct tsrv {
	const struct bp_cfg	*cfg;
	const uint8_t		*pull_data;
	uint64_t		ops;
	double			t0;
};

static int tsrv_handle(void *ctx, int thread, const void *msg, uint32_t len,
		       void *tx, uint32_t tx_cap, struct rpc_tcp_resp *r)
{
	struct tsrv *ts = ctx;
	struct bp_msg m;

	(void)thread;
	(void)tx_cap;
	memcpy(&m, msg, HDR);
	if (m.magic != BP_MAGIC || m.size > BP_MAX_SIZE ||
	    len != HDR + (m.op == BP_PUSH ? m.size : 0))
		return -EBADMSG;
	if (m.op == BP_PULL) {
		r->iov[0].iov_base = (void *)ts->pull_data;
		r->iov[0].iov_len = m.size;
		r->n = 1;
		ts->ops++;
	} else if (m.op == BP_STAT) {
		bp_server_stat(tx, ts->ops);
		r->iov[0].iov_base = tx;
		r->iov[0].iov_len = sizeof(struct bp_stat);
		r->n = 1;
	} else if (m.op == BP_PUSH) {
		ts->ops++;
	} else {
		return -EBADMSG;
	}
	return 0;
}

static bool tsrv_running(void *ctx)
{
	struct tsrv *ts = ctx;

	return !bp_stop && !bp_server_done(ts->cfg, ts->t0);
}

static void tsrv_ready(void *ctx)
{
	bp_server_ready("tcp", ((struct tsrv *)ctx)->cfg);
}

static const struct rpc_tcp_srv_ops tsrv_ops = {
	.handle		= tsrv_handle,
	.running	= tsrv_running,
	.ready		= tsrv_ready,
};

static int tcp_serve(const struct bp_cfg *cfg)
{
	struct rpc_tcp_srv_cfg rc = {
		.prog = "bxperf", .port = cfg->port, .threads = 1,
		.poll_ms = 200, .min_len = HDR, .rx_init = 64 << 10,
		.rx_max = RPC_TCP_PFX + HDR + BP_MAX_SIZE,
		.tx_cap = sizeof(struct bp_stat),
	};
	struct tsrv ts = { cfg, calloc(1, BP_MAX_SIZE), 0, wl_now_us() };
	struct rpc_tcp_srv_stats st = { 0 };
	int ret;

	if (!ts.pull_data) {
		fprintf(stderr, "bxperf: tcp server setup: %s\n",
			strerror(ENOMEM));
		return 1;
	}
	ret = rpc_tcp_serve(&rc, &tsrv_ops, &ts, &st);
	free((void *)ts.pull_data);
	if (ret)
		return 1;
	printf("bxperf-server transport=tcp ops=%llu conns=%llu errors=%llu\n",
	       (unsigned long long)ts.ops, (unsigned long long)st.conns,
	       (unsigned long long)st.errors);
	return st.errors ? 1 : 0;
}

/* ---- client ----------------------------------------------------------- */

struct bp_cli {
	struct rpc_tcp_async	*a;
	uint32_t		nslots;
	uint8_t			**buf;
	struct bp_msg		*req;	/* per slot */
	uint32_t		*want;	/* response payload bytes per slot */
	uint32_t		*done;	/* reaped slots */
};

static void tcpc_close(struct bp_cli *c)
{
	if (!c)
		return;
	rpc_tcp_async_close(c->a);
	for (uint32_t i = 0; c->buf && i < c->nslots; i++)
		free(c->buf[i]);
	free(c->buf);
	free(c->req);
	free(c->want);
	free(c->done);
	free(c);
}

static int tcpc_open(const struct bp_cfg *cfg, uint32_t maxsize,
		     uint32_t depth, struct bp_cli **out)
{
	struct bp_cli *c = calloc(1, sizeof(*c));
	struct sockaddr_in sa;
	int ret = -ENOMEM, fd;

	if (!c)
		return -ENOMEM;
	c->nslots = depth + 1;
	c->buf = calloc(c->nslots, sizeof(*c->buf));
	c->req = calloc(c->nslots, sizeof(*c->req));
	c->want = calloc(c->nslots, sizeof(*c->want));
	c->done = calloc(c->nslots, sizeof(*c->done));
	if (!c->buf || !c->req || !c->want || !c->done)
		goto err;
	for (uint32_t i = 0; i < c->nslots; i++) {
		/* calloc: the pages are touched by the first transfer. */
		c->buf[i] = calloc(1, i < depth ? (maxsize ? maxsize : 1) :
				   BP_STAT_SLOT_BYTES);
		if (!c->buf[i])
			goto err;
	}
	ret = rpc_tcp_addr(cfg->addr, cfg->port, &sa);
	if (ret)
		goto err;
	fd = rpc_tcp_connect(&sa, 0, true);
	if (fd < 0) {
		ret = fd;
		fprintf(stderr, "bxperf: tcp connect %s:%u: %s\n", cfg->addr,
			cfg->port, strerror(-ret));
		goto err;
	}
	ret = rpc_tcp_async_open(fd, c->nslots, &c->a);
	if (ret)
		goto err;
	*out = c;
	return 0;
err:
	tcpc_close(c);
	return ret;
}

static void *tcpc_buf(struct bp_cli *c, uint32_t slot)
{
	return c->buf[slot];
}

static int tcpc_issue(void *ctx, const struct wl_op *o)
{
	struct bp_cli *c = ctx;
	uint32_t op = o->kind, size = o->size, slot = o->slot;

	c->req[slot] = (struct bp_msg){ BP_MAGIC, op, size, slot };
	c->want[slot] = op == BP_PULL ? size :
			op == BP_STAT ? sizeof(struct bp_stat) : 0;
	return rpc_tcp_async_issue(c->a, slot, &c->req[slot], HDR,
				   c->buf[slot], op == BP_PUSH ? size : 0,
				   c->buf[slot], c->want[slot]);
}

static int tcpc_reap(void *ctx, struct wl_done *d, int max, int timeout_ms)
{
	struct bp_cli *c = ctx;
	int n = rpc_tcp_async_reap(c->a, c->done, max, timeout_ms);

	for (int i = 0; i < n; i++) {
		uint32_t s = c->done[i];

		d[i].slot = s;
		d[i].res = c->req[s].op == BP_STAT ? (int32_t)c->want[s] :
			   (int32_t)c->req[s].size;
		d[i].fate = WL_OK;
	}
	return n;
}

const struct bp_transport bp_tcp = {
	.name	= "tcp",
	.serve	= tcp_serve,
	.open	= tcpc_open,
	.buf	= tcpc_buf,
	.close	= tcpc_close,
	.ops	= { .issue = tcpc_issue, .reap = tcpc_reap },
};
