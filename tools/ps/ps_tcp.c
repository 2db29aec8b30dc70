// SPDX-License-Identifier: GPL-2.0
/*
 * bxps over kernel TCP: a small epoll RPC, the fair baseline for bx.
 *
 * Framing: every message is a u32 length followed by that many bytes (the
 * bxps message, see ps.h). A pull is answered by its response, a push by
 * a bare struct ps_hdr sent as soon as the push has been received in
 * full (before it is applied), which is when bx acknowledges a push too.
 *
 * Server: THREADS threads, each with its own epoll instance and its own
 * listening socket on the same port (SO_REUSEPORT: the kernel spreads
 * connections over them). Sockets are non-blocking with TCP_NODELAY;
 * each connection has a receive buffer for the largest request and a
 * transmit buffer for the largest response, allocated once when it is
 * accepted; the length prefix and the response leave in one writev().
 * A connection with a response still in flight is not read (its interest
 * switches to EPOLLOUT), which bounds the buffering per connection.
 *
 * Worker: one persistent blocking connection per worker thread with
 * TCP_NODELAY, a writev() of prefix and request, then a readv() of prefix
 * and response straight into the caller's buffer.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ps.h"

#define MAX_EVENTS	64
#define CONN_MAX	1024	/* per server thread */

static int set_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- server ----------------------------------------------------------- */

struct tconn {
	int		fd;
	uint8_t		*rx;		/* length prefixes and messages */
	uint32_t	rx_len;
	uint8_t		*tx;		/* one response */
	uint32_t	tx_pfx;		/* its length prefix */
	uint32_t	tx_len;		/* response bytes (0: idle) */
	uint32_t	tx_off;		/* bytes of prefix + response sent */
	bool		want_out;	/* interest is EPOLLOUT */
};

struct tsrv_thread {
	struct ps_server	*s;
	pthread_t		th;
	int			ep, lfd;
	uint32_t		rx_cap, tx_cap;
	struct tconn		*conns[CONN_MAX];
	int			nconns;
	struct ps_srv_stats	st;
	int			rc;
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

static void conn_free(struct tsrv_thread *t, struct tconn *c)
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

static int set_interest(struct tsrv_thread *t, struct tconn *c, bool out)
{
	struct epoll_event ev = { .events = out ? EPOLLOUT : EPOLLIN,
				  .data.ptr = c };

	if (c->want_out == out)
		return 0;
	c->want_out = out;
	return epoll_ctl(t->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Send what is pending. 1: all sent, 0: would block, <0: error. */
static int flush_tx(struct tconn *c)
{
	while (c->tx_len) {
		struct iovec iov[2];
		int n = 0;
		ssize_t w;

		if (c->tx_off < 4) {
			iov[n].iov_base = (uint8_t *)&c->tx_pfx + c->tx_off;
			iov[n++].iov_len = 4 - c->tx_off;
			iov[n].iov_base = c->tx;
			iov[n++].iov_len = c->tx_len;
		} else {
			iov[n].iov_base = c->tx + (c->tx_off - 4);
			iov[n++].iov_len = c->tx_len - (c->tx_off - 4);
		}
		w = writev(c->fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		c->tx_off += w;
		if (c->tx_off == c->tx_len + 4)
			c->tx_len = c->tx_off = 0;
	}
	return 1;
}

/*
 * Handle every complete message in the receive buffer while nothing is
 * in flight. Returns <0 to drop the connection.
 */
static int process(struct tsrv_thread *t, struct tconn *c)
{
	uint32_t off = 0;
	int ret = 0;

	while (!c->tx_len && c->rx_len - off >= 4) {
		uint8_t *m = c->rx + off + 4;
		struct ps_hdr h;
		uint32_t flen;

		memcpy(&flen, c->rx + off, 4);
		if (flen < sizeof(h) || flen > t->rx_cap - 4) {
			t->st.errors++;
			return -EPROTO;
		}
		if (c->rx_len - off < 4 + flen)
			break;
		memcpy(&h, m, sizeof(h));
		if (h.op == PS_OP_SPARSE_PUSH || h.op == PS_OP_DENSE_PUSH) {
			struct ps_hdr *a = (struct ps_hdr *)c->tx;

			/* Acknowledge delivery first, then apply. */
			*a = h;
			a->status = PS_ST_OK;
			a->nkeys = h.nkeys;
			c->tx_len = sizeof(*a);
			c->tx_pfx = sizeof(*a);
			ret = flush_tx(c);
			if (ret < 0)
				return ret;
			ps_srv_push(t->s, m, flen, &t->st);
		} else {
			c->tx_len = ps_srv_pull(t->s, m, flen, c->tx, t->tx_cap,
						&t->st);
			c->tx_pfx = c->tx_len;
			ret = flush_tx(c);
			if (ret < 0)
				return ret;
		}
		off += 4 + flen;
	}
	if (off) {
		/* Clients do not pipeline, so this rarely moves anything. */
		memmove(c->rx, c->rx + off, c->rx_len - off);
		c->rx_len -= off;
	}
	return set_interest(t, c, c->tx_len != 0) ? -errno : 0;
}

static int on_readable(struct tsrv_thread *t, struct tconn *c)
{
	for (;;) {
		ssize_t r;

		if (c->rx_len == t->rx_cap) {
			/* Full: only a complete message can be in it. */
			return process(t, c);
		}
		r = read(c->fd, c->rx + c->rx_len, t->rx_cap - c->rx_len);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			return process(t, c);
		}
		c->rx_len += r;
	}
}

static void on_accept(struct tsrv_thread *t)
{
	for (;;) {
		int fd = accept4(t->lfd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN };
		struct tconn *c;

		if (fd < 0)
			return;
		c = calloc(1, sizeof(*c));
		if (c) {
			c->rx = malloc(t->rx_cap);
			c->tx = malloc(t->tx_cap);
		}
		if (!c || !c->rx || !c->tx || t->nconns == CONN_MAX ||
		    set_nodelay(fd)) {
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
		ev.data.ptr = c;
		if (epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev)) {
			t->st.errors++;
			close(fd);
			free(c->rx);
			free(c->tx);
			free(c);
			continue;
		}
		t->conns[t->nconns++] = c;
		t->st.conns++;
	}
}

static void *tsrv_main(void *arg)
{
	struct tsrv_thread *t = arg;
	struct epoll_event evs[MAX_EVENTS];

	while (!*t->s->stop) {
		int n = epoll_wait(t->ep, evs, MAX_EVENTS, 100);

		if (n < 0 && errno != EINTR) {
			t->rc = -errno;
			break;
		}
		for (int i = 0; i < n; i++) {
			struct tconn *c = evs[i].data.ptr;
			int ret;

			if (!c) {
				on_accept(t);
				continue;
			}
			if (evs[i].events & EPOLLOUT) {
				ret = flush_tx(c);
				if (ret > 0)	/* sent: next message */
					ret = process(t, c);
			} else {
				ret = on_readable(t, c);
			}
			/* A worker that closes between rounds is not an
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

static int tcp_serve(struct ps_server *s, struct ps_srv_stats *tot)
{
	const struct ps_cfg *cfg = s->cfg;
	struct tsrv_thread *th = calloc(cfg->threads, sizeof(*th));
	int ret = 0, started = 0;

	if (!th)
		return -ENOMEM;
	for (int i = 0; i < cfg->threads; i++) {
		struct tsrv_thread *t = &th[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

		t->s = s;
		t->ep = -1;
		t->rx_cap = 4 + (ps_push_max(&cfg->info) > PS_REQ_MAX ?
				 ps_push_max(&cfg->info) : PS_REQ_MAX);
		t->tx_cap = ps_resp_max(&cfg->info);
		t->lfd = listen_on(cfg->service);
		if (t->lfd < 0) {
			ret = t->lfd;
			fprintf(stderr, "bxps: listen on port %u: %s\n",
				cfg->service, strerror(-ret));
			break;
		}
		t->ep = epoll_create1(EPOLL_CLOEXEC);
		if (t->ep < 0 || epoll_ctl(t->ep, EPOLL_CTL_ADD, t->lfd, &ev)) {
			ret = -errno;
			break;
		}
	}
	for (; !ret && started < cfg->threads; started++) {
		if (pthread_create(&th[started].th, NULL, tsrv_main,
				   &th[started])) {
			ret = -EAGAIN;
			*s->stop = 1;
		}
	}
	if (!ret)
		ps_srv_ready(s);
	for (int i = 0; i < started; i++) {
		pthread_join(th[i].th, NULL);
		ps_srv_stats_add(tot, &th[i].st);
		if (th[i].rc && !ret)
			ret = th[i].rc;
	}
	for (int i = 0; i < cfg->threads; i++) {
		if (th[i].lfd > 0)
			close(th[i].lfd);
		if (th[i].ep > 0)
			close(th[i].ep);
	}
	free(th);
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
	c->sa.sin_family = AF_INET;
	c->sa.sin_port = htons(cfg->service);
	if (inet_pton(AF_INET, cfg->addr, &c->sa.sin_addr) != 1) {
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
	struct timeval tv = { PS_OP_TIMEOUT_MS / 1000, 0 };
	struct ps_conn *pc = calloc(1, sizeof(*pc));
	int err;

	if (!pc)
		return -ENOMEM;
	pc->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (pc->fd < 0) {
		err = -errno;
		free(pc);
		return err;
	}
	if (set_nodelay(pc->fd) ||
	    setsockopt(pc->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(pc->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(pc->fd, (struct sockaddr *)&c->sa, sizeof(c->sa))) {
		err = -errno;
		close(pc->fd);
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

static int io_err(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
}

/* Send prefix and message in as few writev() calls as the socket takes. */
static int send_msg(struct ps_conn *pc, const void *msg, uint32_t len)
{
	uint32_t pfx = len;
	size_t off = 0, total = 4 + (size_t)len;

	while (off < total) {
		struct iovec iov[2];
		int n = 0;
		ssize_t w;

		if (off < 4) {
			iov[n].iov_base = (uint8_t *)&pfx + off;
			iov[n++].iov_len = 4 - off;
			iov[n].iov_base = (void *)msg;
			iov[n++].iov_len = len;
		} else {
			iov[n].iov_base = (uint8_t *)msg + (off - 4);
			iov[n++].iov_len = total - off;
		}
		w = writev(pc->fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return io_err();
		}
		off += w;
	}
	return 0;
}

/* Receive one framed message into @buf; returns its length. */
static int recv_msg(struct ps_conn *pc, void *buf, uint32_t cap)
{
	uint32_t pfx = 0;
	size_t got = 0, want = 4;

	while (got < want) {
		struct iovec iov[2];
		int n = 0;
		ssize_t r;

		if (got < 4) {
			iov[n].iov_base = (uint8_t *)&pfx + got;
			iov[n++].iov_len = 4 - got;
			/* Only one response is ever in flight: reading into
			 * the whole buffer cannot take the next one's bytes.
			 */
			iov[n].iov_base = buf;
			iov[n++].iov_len = cap;
		} else {
			iov[n].iov_base = (uint8_t *)buf + (got - 4);
			iov[n++].iov_len = want - got;
		}
		r = readv(pc->fd, iov, n);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return io_err();
		}
		got += r;
		if (got >= 4 && want == 4) {
			if (pfx > cap)
				return -EMSGSIZE;
			want = 4 + (size_t)pfx;
		}
		if (got > want)
			return -EPROTO;
	}
	return (int)pfx;
}

static int tcp_pull(struct ps_conn *pc, const void *req, uint32_t len,
		    void *resp, uint32_t cap, uint64_t *retries)
{
	int r;

	(void)retries;
	r = send_msg(pc, req, len);
	return r ? r : recv_msg(pc, resp, cap);
}

static int tcp_push(struct ps_conn *pc, const void *msg, uint32_t len,
		    uint64_t *retries)
{
	struct ps_hdr ack, h;
	int r;

	(void)retries;
	r = send_msg(pc, msg, len);
	if (!r)
		r = recv_msg(pc, &ack, sizeof(ack));
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
