// SPDX-License-Identifier: GPL-2.0
/*
 * rpc_tcp: a framed-message RPC over kernel TCP, the baseline bxperf and
 * bxps measure bx against (see rpc_tcp.h).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "rpc_tcp.h"

#define PFX		RPC_TCP_PFX
#define MAX_EVENTS	64
#define CONN_MAX	1024	/* per server thread */

static int set_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/*
 * @in[0 .. n) less its first @off bytes, into @out (as many pieces);
 * returns how many pieces are left (empty ones dropped).
 */
static int iov_skip(struct iovec *out, const struct iovec *in, int n,
		    size_t off)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		if (off >= in[i].iov_len) {
			off -= in[i].iov_len;
			continue;
		}
		out[k].iov_base = (uint8_t *)in[i].iov_base + off;
		out[k++].iov_len = in[i].iov_len - off;
		off = 0;
	}
	return k;
}

/* ---- server ----------------------------------------------------------- */

struct rconn {
	int		fd;
	uint8_t		*rx;		/* length prefixes and messages */
	uint32_t	rx_len, rx_cap;
	uint8_t		*tx;		/* the transmit buffer */
	uint32_t	tx_pfx;		/* the response's length prefix */
	struct iovec	txv[3];		/* prefix and response */
	int		txn;
	size_t		tx_total;	/* prefix + response (0: idle) */
	size_t		tx_off;		/* bytes of it sent */
	bool		want_out;	/* interest is EPOLLOUT */
};

struct srv;

struct srv_thread {
	struct srv		*srv;
	int			idx;
	pthread_t		th;
	int			ep, lfd;
	struct rconn		*conns[CONN_MAX];
	int			nconns;
	struct rpc_tcp_srv_stats st;
	int			rc;
};

struct srv {
	const struct rpc_tcp_srv_cfg	*cfg;
	const struct rpc_tcp_srv_ops	*ops;
	void				*ctx;
	volatile int			stop;	/* setup failed */
};

static int listen_on(uint32_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static void conn_free(struct srv_thread *t, struct rconn *c)
{
	for (int i = 0; i < t->nconns; i++) {
		if (t->conns[i] == c) {
			t->conns[i] = t->conns[--t->nconns];
			break;
		}
	}
	close(c->fd);	/* also leaves the epoll set */
	free(c->rx);
	free(c->tx);
	free(c);
}

static int set_interest(struct srv_thread *t, struct rconn *c, bool out)
{
	struct epoll_event ev = { .events = out ? EPOLLOUT : EPOLLIN,
				  .data.ptr = c };

	if (c->want_out == out)
		return 0;
	c->want_out = out;
	return epoll_ctl(t->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Send what is pending. 1: all sent, 0: would block, <0: error. */
static int flush_tx(struct rconn *c)
{
	while (c->tx_total) {
		struct iovec iov[3];
		int n = iov_skip(iov, c->txv, c->txn, c->tx_off);
		ssize_t w = writev(c->fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		c->tx_off += w;
		if (c->tx_off == c->tx_total)
			c->tx_total = c->tx_off = 0;
	}
	return 1;
}

/*
 * Answer every complete message in the receive buffer, each response
 * sent before the next message is looked at; stop at one that cannot go
 * out yet. <0: drop the connection.
 */
static int process(struct srv_thread *t, struct rconn *c)
{
	const struct rpc_tcp_srv_cfg *cfg = t->srv->cfg;
	const struct rpc_tcp_srv_ops *ops = t->srv->ops;
	uint32_t off = 0;
	int ret = 0;

	while (!c->tx_total && c->rx_len - off >= PFX) {
		const uint8_t *m = c->rx + off + PFX;
		struct rpc_tcp_resp r = { .n = 0 };
		uint32_t flen;

		memcpy(&flen, c->rx + off, PFX);
		if (flen < cfg->min_len || flen > cfg->rx_max - PFX)
			return -EPROTO;
		if (c->rx_len - off < PFX + flen)
			break;
		ret = ops->handle(t->srv->ctx, t->idx, m, flen, c->tx,
				  cfg->tx_cap, &r);
		if (ret < 0)
			return ret;
		c->tx_pfx = 0;
		c->txv[0].iov_base = &c->tx_pfx;
		c->txv[0].iov_len = PFX;
		for (int i = 0; i < r.n; i++) {
			c->txv[1 + i] = r.iov[i];
			c->tx_pfx += r.iov[i].iov_len;
		}
		c->txn = 1 + r.n;
		c->tx_total = PFX + (size_t)c->tx_pfx;
		ret = flush_tx(c);
		if (ret < 0)
			return ret;
		if (ops->after)
			ops->after(t->srv->ctx, t->idx, m, flen);
		off += PFX + flen;
	}
	if (off) {
		/* Pipelined requests: move the rest to the front. */
		memmove(c->rx, c->rx + off, c->rx_len - off);
		c->rx_len -= off;
	}
	return 0;
}

/*
 * The socket is readable or writable: send what is pending, answer what
 * is complete, read, until the socket would block. <0: drop it.
 */
static int on_ready(struct srv_thread *t, struct rconn *c)
{
	for (;;) {
		uint32_t need;
		ssize_t r;
		int ret;

		ret = flush_tx(c);
		if (ret < 0)
			return ret;
		if (!ret)
			return set_interest(t, c, true) ? -errno : 0;
		if (set_interest(t, c, false))
			return -errno;
		ret = process(t, c);
		if (ret < 0)
			return ret;
		if (c->tx_total)	/* would block: wait for EPOLLOUT */
			return set_interest(t, c, true) ? -errno : 0;
		if (c->rx_len >= PFX) {
			/* An incomplete message (process() checked its
			 * length): make room for all of it.
			 */
			memcpy(&need, c->rx, PFX);
			need += PFX;
			if (need > c->rx_cap) {
				uint8_t *p = realloc(c->rx, need);

				if (!p)
					return -ENOMEM;
				c->rx = p;
				c->rx_cap = need;
			}
		}
		r = read(c->fd, c->rx + c->rx_len, c->rx_cap - c->rx_len);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		c->rx_len += r;
	}
}

static void on_accept(struct srv_thread *t)
{
	const struct rpc_tcp_srv_cfg *cfg = t->srv->cfg;

	for (;;) {
		int fd = accept4(t->lfd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN };
		struct rconn *c;

		if (fd < 0)
			return;
		c = calloc(1, sizeof(*c));
		if (c) {
			c->rx = malloc(cfg->rx_init);
			c->tx = malloc(cfg->tx_cap ? cfg->tx_cap : 1);
			c->rx_cap = cfg->rx_init;
		}
		ev.data.ptr = c;
		if (!c || !c->rx || !c->tx || t->nconns == CONN_MAX ||
		    set_nodelay(fd) || epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev)) {
			t->st.errors++;
			if (c) {
				free(c->rx);
				free(c->tx);
			}
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		t->conns[t->nconns++] = c;
		t->st.conns++;
	}
}

static void *srv_main(void *arg)
{
	struct srv_thread *t = arg;
	const struct rpc_tcp_srv_ops *ops = t->srv->ops;
	struct epoll_event evs[MAX_EVENTS];

	while (!t->srv->stop && ops->running(t->srv->ctx)) {
		int n = epoll_wait(t->ep, evs, MAX_EVENTS,
				   t->srv->cfg->poll_ms);

		if (n < 0 && errno != EINTR) {
			t->rc = -errno;
			break;
		}
		for (int i = 0; i < n; i++) {
			struct rconn *c = evs[i].data.ptr;
			int ret;

			if (!c) {
				on_accept(t);
				continue;
			}
			ret = on_ready(t, c);
			/* A client that closes between requests is not an
			 * error; anything else on the socket is.
			 */
			if (ret < 0) {
				if (ret != -ECONNRESET || c->rx_len)
					t->st.errors++;
				conn_free(t, c);
			}
		}
	}
	while (t->nconns)
		conn_free(t, t->conns[0]);
	return NULL;
}

int rpc_tcp_serve(const struct rpc_tcp_srv_cfg *cfg,
		  const struct rpc_tcp_srv_ops *ops, void *ctx,
		  struct rpc_tcp_srv_stats *st)
{
	struct srv srv = { cfg, ops, ctx, 0 };
	struct srv_thread *th = calloc(cfg->threads, sizeof(*th));
	int ret = 0, started = 0;

	if (!th)
		return -ENOMEM;
	for (int i = 0; i < cfg->threads; i++) {
		th[i].lfd = -1;
		th[i].ep = -1;
	}
	for (int i = 0; i < cfg->threads; i++) {
		struct srv_thread *t = &th[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

		t->srv = &srv;
		t->idx = i;
		t->lfd = listen_on(cfg->port);
		if (t->lfd < 0) {
			ret = t->lfd;
			fprintf(stderr, "%s: listen on port %u: %s\n",
				cfg->prog, cfg->port, strerror(-ret));
			break;
		}
		t->ep = epoll_create1(EPOLL_CLOEXEC);
		if (t->ep < 0 || epoll_ctl(t->ep, EPOLL_CTL_ADD, t->lfd, &ev)) {
			ret = -errno;
			fprintf(stderr, "%s: epoll: %s\n", cfg->prog,
				strerror(-ret));
			break;
		}
	}
	for (; !ret && started < cfg->threads; started++) {
		if (pthread_create(&th[started].th, NULL, srv_main,
				   &th[started])) {
			ret = -EAGAIN;
			break;
		}
	}
	if (!ret)
		ops->ready(ctx);
	else
		srv.stop = 1;
	for (int i = 0; i < started; i++) {
		pthread_join(th[i].th, NULL);
		st->conns += th[i].st.conns;
		st->errors += th[i].st.errors;
		if (th[i].rc && !ret)
			ret = th[i].rc;
	}
	for (int i = 0; i < cfg->threads; i++) {
		if (th[i].lfd >= 0)
			close(th[i].lfd);
		if (th[i].ep >= 0)
			close(th[i].ep);
	}
	free(th);
	return ret;
}

/* ---- blocking client -------------------------------------------------- */

int rpc_tcp_addr(const char *addr, uint32_t port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	return inet_pton(AF_INET, addr, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

int rpc_tcp_connect(const struct sockaddr_in *sa, int timeout_ms,
		    bool nonblock)
{
	struct timeval tv = { timeout_ms / 1000, timeout_ms % 1000 * 1000 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), fl;

	if (fd < 0)
		return -errno;
	if (set_nodelay(fd) ||
	    (timeout_ms > 0 &&
	     (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))) ||
	    connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ||
	    (nonblock && ((fl = fcntl(fd, F_GETFL)) < 0 ||
			  fcntl(fd, F_SETFL, fl | O_NONBLOCK)))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int io_err(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
}

/* Prefix and message in as few writev() calls as the socket takes. */
int rpc_tcp_send(int fd, const void *msg, uint32_t len)
{
	uint32_t pfx = len;
	struct iovec v[2] = { { &pfx, PFX }, { (void *)msg, len } };
	size_t off = 0, total = PFX + (size_t)len;

	while (off < total) {
		struct iovec iov[2];
		int n = iov_skip(iov, v, 2, off);
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return io_err();
		}
		off += w;
	}
	return 0;
}

int rpc_tcp_recv(int fd, void *buf, uint32_t cap)
{
	uint32_t pfx = 0;
	size_t got = 0, want = PFX;
	/* Only one response is ever in flight: reading into the whole
	 * buffer cannot take the next one's bytes.
	 */
	struct iovec v[2] = { { &pfx, PFX }, { buf, cap } };

	while (got < want) {
		struct iovec iov[2];
		int n = iov_skip(iov, v, 2, got);
		ssize_t r;

		if (got >= PFX)
			iov[0].iov_len = want - got;
		r = readv(fd, iov, n);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return io_err();
		}
		got += r;
		if (got >= PFX && want == PFX) {
			if (pfx > cap)
				return -EMSGSIZE;
			want = PFX + (size_t)pfx;
		}
		if (got > want)
			return -EPROTO;
	}
	return (int)pfx;
}

/* ---- asynchronous client ---------------------------------------------- */

struct aslot {
	uint32_t	pfx;
	struct iovec	req[3];		/* prefix, header, payload */
	void		*resp;
	uint32_t	want;
};

struct rpc_tcp_async {
	int		fd, ep;
	uint32_t	nslots;
	struct aslot	*s;
	uint32_t	*txq, txh, txt;	/* slots to send (ring of nslots) */
	size_t		txoff;		/* bytes of the head sent */
	uint32_t	*rxq, rxh, rxt;	/* slots awaiting a response */
	size_t		rxoff;		/* bytes of the head received */
	uint32_t	rxpfx;
	uint32_t	*done, ndone;	/* completed, not yet reaped */
	bool		want_out;
};

void rpc_tcp_async_close(struct rpc_tcp_async *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	if (a->ep >= 0)
		close(a->ep);
	free(a->s);
	free(a->txq);
	free(a->rxq);
	free(a->done);
	free(a);
}

int rpc_tcp_async_open(int fd, uint32_t nslots, struct rpc_tcp_async **out)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	struct rpc_tcp_async *a = calloc(1, sizeof(*a));
	int ret = -ENOMEM;

	if (!a) {
		close(fd);
		return -ENOMEM;
	}
	a->fd = fd;
	a->nslots = nslots;
	a->s = calloc(nslots, sizeof(*a->s));
	a->txq = calloc(nslots, sizeof(*a->txq));
	a->rxq = calloc(nslots, sizeof(*a->rxq));
	a->done = calloc(nslots, sizeof(*a->done));
	a->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!a->s || !a->txq || !a->rxq || !a->done)
		goto err;
	if (a->ep < 0 || epoll_ctl(a->ep, EPOLL_CTL_ADD, fd, &ev)) {
		ret = -errno;
		goto err;
	}
	*out = a;
	return 0;
err:
	rpc_tcp_async_close(a);
	return ret;
}

/* Send what is queued. <0: error. */
static int aflush(struct rpc_tcp_async *a)
{
	while (a->txh != a->txt) {
		struct aslot *s = &a->s[a->txq[a->txh % a->nslots]];
		struct iovec iov[3];
		int n = iov_skip(iov, s->req, 3, a->txoff);
		ssize_t r = writev(a->fd, iov, n);

		if (r < 0)
			return errno == EAGAIN ? 0 : -errno;
		a->txoff += r;
		if (a->txoff < PFX + (size_t)s->pfx)
			return 0;
		a->txoff = 0;
		a->txh++;
	}
	return 0;
}

/* Read responses. <0: error. */
static int aread(struct rpc_tcp_async *a)
{
	while (a->rxh != a->rxt) {
		uint32_t slot = a->rxq[a->rxh % a->nslots];
		struct aslot *s = &a->s[slot];
		struct iovec v[2] = { { &a->rxpfx, PFX },
				      { s->resp, s->want } };
		struct iovec iov[2];
		int n = iov_skip(iov, v, 2, a->rxoff);
		ssize_t r = readv(a->fd, iov, n);

		if (r == 0)
			return -ECONNRESET;
		if (r < 0)
			return errno == EAGAIN ? 0 : -errno;
		a->rxoff += r;
		if (a->rxoff >= PFX && a->rxpfx != s->want)
			return -EBADMSG;
		if (a->rxoff < PFX + (size_t)s->want)
			continue;
		a->rxoff = 0;
		a->rxh++;
		a->done[a->ndone++] = slot;
	}
	return 0;
}

static int set_out(struct rpc_tcp_async *a, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0),
				  .data.fd = a->fd };

	if (a->want_out == out)
		return 0;
	a->want_out = out;
	return epoll_ctl(a->ep, EPOLL_CTL_MOD, a->fd, &ev) ? -errno : 0;
}

int rpc_tcp_async_issue(struct rpc_tcp_async *a, uint32_t slot,
			const void *hdr, uint32_t hlen, const void *pay,
			uint32_t plen, void *resp, uint32_t want)
{
	struct aslot *s = &a->s[slot];

	s->pfx = hlen + plen;
	s->req[0] = (struct iovec){ &s->pfx, PFX };
	s->req[1] = (struct iovec){ (void *)hdr, hlen };
	s->req[2] = (struct iovec){ (void *)pay, plen };
	s->resp = resp;
	s->want = want;
	a->txq[a->txt++ % a->nslots] = slot;
	a->rxq[a->rxt++ % a->nslots] = slot;
	return aflush(a);
}

int rpc_tcp_async_reap(struct rpc_tcp_async *a, uint32_t *slots, int max,
		       int timeout_ms)
{
	struct epoll_event ev;
	int ret, n;

	for (;;) {
		ret = aflush(a);
		if (!ret)
			ret = aread(a);
		if (ret)
			return ret;
		if (a->ndone)
			break;
		ret = set_out(a, a->txh != a->txt);
		if (ret)
			return ret;
		ret = epoll_wait(a->ep, &ev, 1, timeout_ms);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret == 0)
			return 0;
	}
	n = (int)a->ndone < max ? (int)a->ndone : max;
	memcpy(slots, a->done, n * sizeof(*slots));
	memmove(a->done, a->done + n, (a->ndone - n) * sizeof(*slots));
	a->ndone -= n;
	return n;
}
