// SPDX-License-Identifier: GPL-2.0
/*
 * bxperf over kernel TCP: the same operations as over bx, done the way a
 * careful RPC library does them.
 *
 * Framing: every request and every response starts with a struct bp_msg
 * (16 bytes); a push carries its payload after it, a pull's response
 * carries size bytes, a push is answered by a bare header as soon as the
 * server has received all of it (which is when bx completes a push too).
 *
 * Server: one thread, one epoll instance, non-blocking sockets with
 * TCP_NODELAY. Each connection has a receive buffer that grows to its
 * largest request; a pull's response is sent straight from one shared
 * 16 MiB buffer with writev() (header and payload in one call). While a
 * connection's response is still going out it is not read (its interest
 * is EPOLLOUT), which bounds what it buffers; pipelined requests wait in
 * the socket.
 *
 * Client: one persistent connection per process, non-blocking, with
 * TCP_NODELAY and epoll; up to DEPTH requests pipelined on it, answered
 * in order. A response is read with one readv() of the rest of its header
 * and its payload, straight into the slot's buffer.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bxperf.h"

#define HDR	((uint32_t)sizeof(struct bp_msg))

static int set_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---- server ----------------------------------------------------------- */

struct sconn {
	int		fd;
	uint8_t		*rx;
	uint32_t	cap, len;	/* buffer size, bytes buffered */
	struct bp_msg	txh;
	const uint8_t	*txdata;
	uint32_t	txlen, txoff;	/* payload bytes; hdr + payload sent */
	bool		txbusy, want_out;
	struct bp_stat	st;
};

static const uint8_t *pull_data;

static int interest(int ep, struct sconn *c, bool out)
{
	struct epoll_event ev = { .events = out ? EPOLLOUT : EPOLLIN,
				  .data.ptr = c };

	if (c->want_out == out)
		return 0;
	c->want_out = out;
	return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* 1: response sent, 0: would block, <0: error. */
static int sflush(struct sconn *c)
{
	while (c->txbusy) {
		struct iovec iov[2];
		int n = 0;
		ssize_t r;

		if (c->txoff < HDR) {
			iov[n].iov_base = (uint8_t *)&c->txh + c->txoff;
			iov[n++].iov_len = HDR - c->txoff;
			iov[n].iov_base = (void *)c->txdata;
			iov[n++].iov_len = c->txlen;
		} else {
			iov[n].iov_base = (void *)(c->txdata + c->txoff - HDR);
			iov[n++].iov_len = c->txlen - (c->txoff - HDR);
		}
		r = writev(c->fd, iov, n);
		if (r < 0)
			return errno == EAGAIN ? 0 : -errno;
		c->txoff += r;
		if (c->txoff == HDR + c->txlen)
			c->txbusy = false;
	}
	return 1;
}

/* Handle every complete request buffered; read more. <0: close. */
static int sprocess(int ep, struct sconn *c, uint64_t *ops)
{
	for (;;) {
		struct bp_msg m;
		uint32_t need;
		ssize_t r;
		int ret;

		if (c->txbusy) {
			ret = sflush(c);
			if (ret < 0)
				return ret;
			if (!ret)
				return interest(ep, c, true);
			if (interest(ep, c, false))
				return -errno;
		}
		if (c->len >= HDR) {
			memcpy(&m, c->rx, HDR);
			if (m.magic != BP_MAGIC || m.size > BP_MAX_SIZE)
				return -EBADMSG;
			need = HDR + (m.op == BP_PUSH ? m.size : 0);
			if (c->len >= need) {
				c->txh = (struct bp_msg){ BP_MAGIC, m.op, 0, m.id };
				c->txdata = pull_data;
				if (m.op == BP_PULL) {
					c->txh.size = m.size;
					(*ops)++;
				} else if (m.op == BP_STAT) {
					bp_server_stat(&c->st, *ops);
					c->txdata = (const uint8_t *)&c->st;
					c->txh.size = sizeof(c->st);
				} else if (m.op == BP_PUSH) {
					(*ops)++;
				} else {
					return -EBADMSG;
				}
				c->txlen = c->txh.size;
				c->txoff = 0;
				c->txbusy = true;
				c->len -= need;
				memmove(c->rx, c->rx + need, c->len);
				continue;
			}
			if (need > c->cap) {
				uint8_t *p = realloc(c->rx, need);

				if (!p)
					return -ENOMEM;
				c->rx = p;
				c->cap = need;
			}
		}
		r = read(c->fd, c->rx + c->len, c->cap - c->len);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0)
			return errno == EAGAIN ? 0 : -errno;
		c->len += r;
	}
}

static int tcp_serve(const struct bp_cfg *cfg)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(cfg->port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct epoll_event evs[64], ev = { .events = EPOLLIN };
	uint64_t ops = 0, errs = 0, conns = 0;
	double t0 = bp_now_us();
	int one = 1, lfd, ep;

	pull_data = calloc(1, BP_MAX_SIZE);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!pull_data || lfd < 0 || ep < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 128) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev)) {
		perror("bxperf: tcp server setup");
		return 1;
	}
	bp_server_ready("tcp", cfg);
	while (!bp_stop && !bp_server_done(cfg, t0)) {
		int n = epoll_wait(ep, evs, 64, 200);

		for (int i = 0; i < n; i++) {
			struct sconn *c = evs[i].data.ptr;
			int ret;

			if (!c) {
				int fd;

				while ((fd = accept4(lfd, NULL, NULL,
						     SOCK_NONBLOCK |
						     SOCK_CLOEXEC)) >= 0) {
					c = calloc(1, sizeof(*c));
					if (c)
						c->rx = malloc(64 << 10);
					if (!c || !c->rx || set_nodelay(fd)) {
						if (c)
							free(c->rx);
						free(c);
						close(fd);
						errs++;
						continue;
					}
					c->fd = fd;
					c->cap = 64 << 10;
					ev.events = EPOLLIN;
					ev.data.ptr = c;
					if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
						close(fd);
						free(c->rx);
						free(c);
						errs++;
						continue;
					}
					conns++;
				}
				continue;
			}
			ret = sprocess(ep, c, &ops);
			if (ret < 0) {
				if (ret != -ECONNRESET)
					errs++;
				close(c->fd);
				free(c->rx);
				free(c);
			}
		}
	}
	printf("bxperf-server transport=tcp ops=%llu conns=%llu errors=%llu\n",
	       (unsigned long long)ops, (unsigned long long)conns,
	       (unsigned long long)errs);
	return errs ? 1 : 0;
}

/* ---- client ----------------------------------------------------------- */

struct bp_cli {
	int		fd, ep;
	uint32_t	depth, nslots;
	uint8_t		**buf;
	struct bp_msg	*req;		/* per slot */
	uint32_t	*want;		/* response payload bytes per slot */
	uint32_t	*txq, txh, txt;	/* slots to send (ring of nslots) */
	uint32_t	txoff;		/* bytes of the head sent */
	uint32_t	*rxq, rxh, rxt;	/* slots awaiting a response */
	uint32_t	rxoff;		/* bytes of the head received */
	struct bp_msg	rxm;
	struct bp_done	*done;		/* completed, not yet reaped */
	uint32_t	ndone;
	bool		want_out;
};

static void tcpc_close(struct bp_cli *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->ep >= 0)
		close(c->ep);
	for (uint32_t i = 0; c->buf && i < c->nslots; i++)
		free(c->buf[i]);
	free(c->buf);
	free(c->req);
	free(c->want);
	free(c->txq);
	free(c->rxq);
	free(c->done);
	free(c);
}

static int tcpc_open(const struct bp_cfg *cfg, uint32_t maxsize,
		     uint32_t depth, struct bp_cli **out)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(cfg->port) };
	struct epoll_event ev = { .events = EPOLLIN };
	struct bp_cli *c = calloc(1, sizeof(*c));
	int ret = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->fd = c->ep = -1;
	c->depth = depth;
	c->nslots = depth + 1;
	c->buf = calloc(c->nslots, sizeof(*c->buf));
	c->req = calloc(c->nslots, sizeof(*c->req));
	c->want = calloc(c->nslots, sizeof(*c->want));
	c->txq = calloc(c->nslots, sizeof(*c->txq));
	c->rxq = calloc(c->nslots, sizeof(*c->rxq));
	c->done = calloc(c->nslots, sizeof(*c->done));
	if (!c->buf || !c->req || !c->want || !c->txq || !c->rxq || !c->done)
		goto err;
	for (uint32_t i = 0; i < c->nslots; i++) {
		/* calloc: the pages are touched by the first transfer. */
		c->buf[i] = calloc(1, i < depth ? (maxsize ? maxsize : 1) :
				   BP_STAT_SLOT_BYTES);
		if (!c->buf[i])
			goto err;
	}
	if (inet_pton(AF_INET, cfg->addr, &sa.sin_addr) != 1) {
		ret = -EINVAL;
		goto err;
	}
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	if (c->fd < 0 || c->ep < 0 || set_nodelay(c->fd) ||
	    connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    set_nonblock(c->fd)) {
		ret = -errno;
		fprintf(stderr, "bxperf: tcp connect %s:%u: %s\n", cfg->addr,
			cfg->port, strerror(errno));
		goto err;
	}
	ev.data.fd = c->fd;
	if (epoll_ctl(c->ep, EPOLL_CTL_ADD, c->fd, &ev)) {
		ret = -errno;
		goto err;
	}
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

/* Send what is queued. <0: error. */
static int cflush(struct bp_cli *c)
{
	while (c->txh != c->txt) {
		uint32_t s = c->txq[c->txh % c->nslots];
		uint32_t pay = c->req[s].op == BP_PUSH ? c->req[s].size : 0;
		struct iovec iov[2];
		int n = 0;
		ssize_t r;

		if (c->txoff < HDR) {
			iov[n].iov_base = (uint8_t *)&c->req[s] + c->txoff;
			iov[n++].iov_len = HDR - c->txoff;
			if (pay) {
				iov[n].iov_base = c->buf[s];
				iov[n++].iov_len = pay;
			}
		} else {
			iov[n].iov_base = c->buf[s] + (c->txoff - HDR);
			iov[n++].iov_len = pay - (c->txoff - HDR);
		}
		r = writev(c->fd, iov, n);
		if (r < 0)
			return errno == EAGAIN ? 0 : -errno;
		c->txoff += r;
		if (c->txoff < HDR + pay)
			return 0;
		c->txoff = 0;
		c->txh++;
	}
	return 0;
}

/* Read responses. <0: error. */
static int cread(struct bp_cli *c)
{
	while (c->rxh != c->rxt) {
		uint32_t s = c->rxq[c->rxh % c->nslots];
		uint32_t want = c->want[s];
		struct iovec iov[2];
		int n = 0;
		ssize_t r;

		if (c->rxoff < HDR) {
			iov[n].iov_base = (uint8_t *)&c->rxm + c->rxoff;
			iov[n++].iov_len = HDR - c->rxoff;
			if (want) {
				iov[n].iov_base = c->buf[s];
				iov[n++].iov_len = want;
			}
		} else {
			iov[n].iov_base = c->buf[s] + (c->rxoff - HDR);
			iov[n++].iov_len = want - (c->rxoff - HDR);
		}
		r = readv(c->fd, iov, n);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0)
			return errno == EAGAIN ? 0 : -errno;
		c->rxoff += r;
		if (c->rxoff >= HDR &&
		    (c->rxm.magic != BP_MAGIC || c->rxm.id != s ||
		     c->rxm.size != want))
			return -EBADMSG;
		if (c->rxoff < HDR + want)
			continue;
		c->rxoff = 0;
		c->rxh++;
		c->done[c->ndone].slot = s;
		c->done[c->ndone++].res = c->req[s].op == BP_STAT ?
					  (int32_t)want : (int32_t)c->req[s].size;
	}
	return 0;
}

static int set_out(struct bp_cli *c, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0),
				  .data.fd = c->fd };

	if (c->want_out == out)
		return 0;
	c->want_out = out;
	return epoll_ctl(c->ep, EPOLL_CTL_MOD, c->fd, &ev) ? -errno : 0;
}

static int tcpc_issue(struct bp_cli *c, enum bp_op op, uint32_t size,
		      uint32_t slot)
{
	c->req[slot] = (struct bp_msg){ BP_MAGIC, op, size, slot };
	c->want[slot] = op == BP_PULL ? size :
			op == BP_STAT ? sizeof(struct bp_stat) : 0;
	c->txq[c->txt++ % c->nslots] = slot;
	c->rxq[c->rxt++ % c->nslots] = slot;
	return cflush(c);
}

static int tcpc_reap(struct bp_cli *c, struct bp_done *d, int max,
		     int timeout_ms)
{
	struct epoll_event ev;
	int ret, n;

	for (;;) {
		ret = cflush(c);
		if (!ret)
			ret = cread(c);
		if (ret)
			return ret;
		if (c->ndone)
			break;
		ret = set_out(c, c->txh != c->txt);
		if (ret)
			return ret;
		ret = epoll_wait(c->ep, &ev, 1, timeout_ms);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret == 0)
			return 0;
	}
	n = (int)c->ndone < max ? (int)c->ndone : max;
	memcpy(d, c->done, n * sizeof(*d));
	memmove(c->done, c->done + n, (c->ndone - n) * sizeof(*d));
	c->ndone -= n;
	return n;
}

const struct bp_transport bp_tcp = {
	.name	= "tcp",
	.serve	= tcp_serve,
	.open	= tcpc_open,
	.buf	= tcpc_buf,
	.issue	= tcpc_issue,
	.reap	= tcpc_reap,
	.close	= tcpc_close,
};
