// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Nodes of one host (bxps.h): bx has no loopback path, so two nodes of
 * the same host talk over Unix stream sockets instead, with the same
 * operations as over bx. Each node listens on the abstract name
 * "bxps.SERVICE" (its bx service, unique on the host) and connects to
 * another the first time it sends to it. What goes over a connection is
 * frames: a 16-byte header (struct lhdr) and a body of at most msg_max
 * bytes:
 *
 *   PUSH   a message (which: 0 small, 1 large), as a bx push
 *   REQ    a control request (register, barrier, watch), as a bx pull;
 *          id: the requester's number for it
 *   REPLY  the answer of REQ @id, on the connection it came on
 *
 * Sends complete once their frame is queued (its bytes are copied; at
 * most PS_LOCAL_QMAX * msg_max bytes of messages wait per connection,
 * more are refused with -ENOBUFS and sent again later);
 * requests once their reply came, or with -ECONNABORTED when the
 * connection ends (a node that exits or dies closes its sockets, which
 * is how its watches learn of it). Only a process of the same user (or
 * root) may connect; a frame that breaks these rules ends its
 * connection. The progress thread does all reading, all closing and the
 * writing that could not be done at once; senders write what fits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bxps_int.h"

enum { L_PUSH = 1, L_REQ, L_REPLY };

struct lhdr {
	uint32_t	type;
	uint32_t	which;
	uint32_t	id;
	uint32_t	len;
};

/* A frame waiting to be written. */
struct lout {
	struct lout	*next;
	uint32_t	len;
	uint8_t		data[];
};

#define LTOKEN		(1ull << 63)	/* bx's tokens are 31 bits */

static socklen_t lname(uint32_t service, struct sockaddr_un *sun)
{
	int len;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	/* Abstract: sun_path[0] is 0, the name follows, no terminator. */
	len = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
		       "bxps.%u", service);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   (size_t)len);
}

static void wake(struct bxps *n)
{
	uint64_t one = 1;

	if (write(n->lwake, &one, sizeof(one)) < 0) {
		/* The counter is full: the thread is awake anyway. */
	}
}

int ps_local_init(struct bxps *n)
{
	struct sockaddr_un sun;
	socklen_t sl = lname(n->service, &sun);

	for (unsigned int i = 0; i < PS_LOCAL_MAX; i++)
		n->lc[i].fd = -1;
	n->ldone_tail = &n->ldone;
	pthread_mutex_init(&n->llock, NULL);
	n->lwake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n->lwake < 0)
		return -errno;
	n->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);
	if (n->lfd < 0)
		goto err;
	if (bind(n->lfd, (struct sockaddr *)&sun, sl) ||
	    listen(n->lfd, 64))
		goto err;
	return 0;

err:
	{
		int ret = -errno;

		if (n->lfd >= 0)
			close(n->lfd);
		close(n->lwake);
		n->lfd = n->lwake = -1;
		return ret;
	}
}

/* Complete @io with @res in the progress thread; llock held. */
static void done_locked(struct bxps *n, struct io *io, int res)
{
	io->lres = res;
	io->lnext = NULL;
	*n->ldone_tail = io;
	n->ldone_tail = &io->lnext;
}

/* Write what @c has queued, as far as the socket takes it; llock held. */
static int lflush(struct lconn *c)
{
	while (c->out) {
		struct lout *o = c->out;
		ssize_t w = send(c->fd, o->data + c->out_off,
				 o->len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		c->out_off += (uint32_t)w;
		if (c->out_off < o->len)
			return 0;
		c->out = o->next;
		if (!c->out)
			c->out_tail = &c->out;
		c->out_off = 0;
		c->out_bytes -= o->len;
		free(o);
	}
	return 0;
}

/*
 * The end of connection @c: what it still had to write is dropped, our
 * requests on it fail with -ECONNABORTED. llock held; the progress
 * thread only (or the node's end), so that a slot it reads from is not
 * given to another connection meanwhile.
 */
static void lclose(struct bxps *n, struct lconn *c)
{
	struct io *io;

	close(c->fd);
	c->fd = -1;
	c->gen++;
	while (c->out) {
		struct lout *o = c->out;

		c->out = o->next;
		free(o);
	}
	c->out_tail = &c->out;
	c->out_off = 0;
	c->out_bytes = 0;
	while ((io = c->reqs)) {
		c->reqs = io->lnext;
		done_locked(n, io, -ECONNABORTED);
	}
	if (c->node >= 0 && n->nodes[c->node].lconn == (int)(c - n->lc) + 1)
		n->nodes[c->node].lconn = 0;
	c->node = -1;
	c->hgot = c->bgot = 0;
	c->starved = false;
	if (c->body) {
		bx_buf_free(n->bx, c->body);
		c->body = NULL;
	}
}

static struct lconn *lslot(struct bxps *n, int fd, int node)
{
	for (unsigned int i = 0; i < PS_LOCAL_MAX; i++) {
		struct lconn *c = &n->lc[i];

		if (c->fd >= 0)
			continue;
		c->fd = fd;
		c->node = node;
		c->out = NULL;
		c->out_tail = &c->out;
		c->out_off = 0;
		c->out_bytes = 0;
		c->reqs = NULL;
		c->hgot = c->bgot = 0;
		c->body = NULL;
		c->starved = false;
		return c;
	}
	return NULL;
}

/* Our connection to local node @to, made if need be; llock held. */
static struct lconn *lconn_to(struct bxps *n, int to, int *err)
{
	struct node *nd = &n->nodes[to];
	struct sockaddr_un sun;
	socklen_t sl = lname(nd->service, &sun);
	struct lconn *c;
	int fd;

	if (nd->lconn)
		return &n->lc[nd->lconn - 1];
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	/* A node not listening yet refuses: sent again later (send_again()). */
	if (connect(fd, (struct sockaddr *)&sun, sl)) {
		*err = errno == ENOENT ? -ECONNREFUSED : -errno;
		close(fd);
		return NULL;
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK)) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	c = lslot(n, fd, to);
	if (!c) {
		*err = -EMFILE;
		close(fd);
		return NULL;
	}
	nd->lconn = (int)(c - n->lc) + 1;
	return c;
}

/* Queue a frame of @type on @c: the header, then @nseg pieces. */
static int lqueue(struct bxps *n, struct lconn *c, uint32_t type,
		  uint32_t which, uint32_t id, const void *const *seg,
		  const uint32_t *seglen, unsigned int nseg)
{
	struct lhdr h = { .type = type, .which = which, .id = id };
	struct lout *o;
	uint8_t *p;
	int ret;

	for (unsigned int i = 0; i < nseg; i++)
		h.len += seglen[i];
	o = malloc(sizeof(*o) + sizeof(h) + h.len);
	if (!o)
		return -ENOMEM;
	o->next = NULL;
	o->len = (uint32_t)sizeof(h) + h.len;
	memcpy(o->data, &h, sizeof(h));
	p = o->data + sizeof(h);
	for (unsigned int i = 0; i < nseg; i++) {
		memcpy(p, seg[i], seglen[i]);
		p += seglen[i];
	}
	*c->out_tail = o;
	c->out_tail = &o->next;
	c->out_bytes += o->len;
	ret = lflush(c);
	if (ret)
		/* Broken: the progress thread sees it end and closes it. */
		shutdown(c->fd, SHUT_RDWR);
	if (ret || c->out)
		wake(n);	/* the rest: the progress thread, on POLLOUT */
	return ret;
}

bool ps_local_io(const struct bxps *n, const struct io *io)
{
	if (io->kind == IO_REPLY)
		return io->token & LTOKEN;
	return io->kind != IO_RECV && io->to >= 0 && n->nodes[io->to].local;
}

int ps_local_submit(struct bxps *n, struct io *io)
{
	const void *seg[BX_VEC_MAX];
	uint32_t seglen[BX_VEC_MAX];
	const uint8_t *base = bx_region(n->bx);
	struct lconn *c;
	unsigned int slot;
	int ret = 0;

	pthread_mutex_lock(&n->llock);
	switch (io->kind) {
	case IO_SEND:
		c = lconn_to(n, io->to, &ret);
		if (!c)
			break;
		/*
		 * A node that does not read holds back our messages (sent
		 * again later, as with no receive buffer over bx), not our
		 * memory; control requests and answers are small and go.
		 */
		if (c->out_bytes + io->len >
		    (uint64_t)PS_LOCAL_QMAX * n->msg_max) {
			ret = -ENOBUFS;
			break;
		}
		for (unsigned int i = 0; i < io->nvec; i++) {
			seg[i] = base + io->vec[i].off;
			seglen[i] = io->vec[i].len;
		}
		ret = lqueue(n, c, L_PUSH, io->len > PS_SMALL_CAP, 0, seg,
			     seglen, io->nvec);
		if (!ret)
			done_locked(n, io, (int)io->len);
		break;
	case IO_CTRL:
	case IO_WATCH:
		c = lconn_to(n, io->to, &ret);
		if (!c)
			break;
		io->lid = ++n->lnext_id;
		seg[0] = io->scratch;
		seglen[0] = PSW_CTRL_LEN;
		ret = lqueue(n, c, L_REQ, 0, io->lid, seg, seglen, 1);
		if (!ret) {
			io->lnext = c->reqs;
			c->reqs = io;
		}
		break;
	case IO_REPLY:
		slot = (unsigned int)(io->token >> 32) & 0xffff;
		c = slot < PS_LOCAL_MAX ? &n->lc[slot] : NULL;
		/* The requester is gone (the connection ended): dropped. */
		if (c && c->fd >= 0 &&
		    (c->gen & 0x7fff) == (io->token >> 48 & 0x7fff)) {
			seg[0] = io->scratch;
			seglen[0] = io->len;
			ret = lqueue(n, c, L_REPLY, 0, (uint32_t)io->token, seg,
				     seglen, 1);
		}
		if (!ret)
			done_locked(n, io, (int)io->len);
		break;
	default:
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&n->llock);
	if (!ret)
		wake(n);
	return ret;
}

/* A whole frame came on @c: hand it on. Progress thread. */
static void lframe(struct bxps *n, struct lconn *c, const struct lhdr *h,
		   void *body)
{
	struct io *io, **pp;
	uint64_t token;

	switch (h->type) {
	case L_PUSH:
		ps_on_message(n, body, h->len, h->which);
		return;
	case L_REQ:
		token = LTOKEN | (uint64_t)(c->gen & 0x7fff) << 48 |
			(uint64_t)(c - n->lc) << 32 | h->id;
		ps_on_request(n, body, h->len, token);
		ps_recv_done(n, 0, body);
		return;
	case L_REPLY:
		pthread_mutex_lock(&n->llock);
		for (pp = &c->reqs; (io = *pp); pp = &io->lnext)
			if (io->lid == h->id)
				break;
		if (io) {
			*pp = io->lnext;
			if (h->len <= io->resp_cap) {
				memcpy(io->resp, body, h->len);
				done_locked(n, io, (int)h->len);
			} else {
				done_locked(n, io, -EMSGSIZE);
			}
		}
		pthread_mutex_unlock(&n->llock);
		ps_recv_done(n, 0, body);
		return;
	}
}

/*
 * Read into @buf until *@got of @want bytes are there: 1 when they are,
 * 0 when the socket has no more for now, -1 when the connection ended.
 */
static int lrecv(int fd, void *buf, uint32_t want, uint32_t *got)
{
	while (*got < want) {
		ssize_t r = recv(fd, (uint8_t *)buf + *got, want - *got,
				 MSG_DONTWAIT);

		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			return -1;
		if (r < 0)
			return 0;
		*got += (uint32_t)r;
	}
	return 1;
}

/*
 * Read what @c has for us; false when it ended or broke the rules (then
 * it is closed). A body that finds no region memory waits in the socket,
 * its connection starved: not polled for input (its bytes are still
 * there, poll() would report them at once, round after round) but tried
 * again every PS_LOCAL_RETRY_MS until memory is free.
 */
static bool lread(struct bxps *n, struct lconn *c)
{
	struct lhdr h;
	int r;

	for (;;) {
		r = lrecv(c->fd, c->hdr, sizeof(h), &c->hgot);
		if (r <= 0)
			return r == 0;
		memcpy(&h, c->hdr, sizeof(h));
		if (h.type < L_PUSH || h.type > L_REPLY || h.which > 1 ||
		    h.len > n->msg_max || (h.type != L_PUSH && h.which) ||
		    (h.type == L_REQ && h.len > PS_SMALL_CAP))
			return false;
		if (!c->body) {
			c->starved = bx_buf_alloc(n->bx, h.len ? h.len : 8,
						  &c->body) != 0;
			if (c->starved)
				return true;
			c->bgot = 0;
		}
		r = lrecv(c->fd, c->body, h.len, &c->bgot);
		if (r <= 0)
			return r == 0;
		{
			void *body = c->body;

			c->body = NULL;
			c->hgot = c->bgot = 0;
			lframe(n, c, &h, body);
		}
		if (c->fd < 0)
			return true;
	}
}

/* A process of ours (the same user) or root. */
static bool lpeer_ok(int fd)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l))
		return false;
	return cr.uid == 0 || cr.uid == getuid();
}

static void laccept(struct bxps *n)
{
	for (;;) {
		int fd = accept4(n->lfd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		bool ok;

		pthread_mutex_lock(&n->llock);
		ok = lpeer_ok(fd) && lslot(n, fd, -1);
		pthread_mutex_unlock(&n->llock);
		if (!ok) {
			close(fd);
			pthread_mutex_lock(&n->lock);
			n->stats.bad++;
			pthread_mutex_unlock(&n->lock);
		}
	}
}

/* Complete what finished since the last round. */
static void ldone(struct bxps *n)
{
	struct io *list, *io;

	pthread_mutex_lock(&n->llock);
	list = n->ldone;
	n->ldone = NULL;
	n->ldone_tail = &n->ldone;
	pthread_mutex_unlock(&n->llock);
	while ((io = list)) {
		struct bx_cqe cqe = {
			.user_data = (uintptr_t)io,
			.res = io->lres,
		};

		list = io->lnext;
		ps_on_cqe(n, &cqe);
	}
}

void ps_local_poll(struct bxps *n, int timeout_ms)
{
	struct pollfd pfd[PS_LOCAL_MAX + 3];
	int idx[PS_LOCAL_MAX];
	unsigned int np = 0, nc = 0;
	uint64_t v;

	pfd[np++] = (struct pollfd){ .fd = bx_fd(n->bx), .events = POLLIN };
	pfd[np++] = (struct pollfd){ .fd = n->lwake, .events = POLLIN };
	pfd[np++] = (struct pollfd){ .fd = n->lfd, .events = POLLIN };
	pthread_mutex_lock(&n->llock);
	for (unsigned int i = 0; i < PS_LOCAL_MAX; i++) {
		struct lconn *c = &n->lc[i];

		if (c->fd < 0)
			continue;
		idx[nc++] = (int)i;
		pfd[np++] = (struct pollfd){
			.fd = c->fd,
			.events = (short)((c->starved ? 0 : POLLIN) |
					  (c->out ? POLLOUT : 0)),
		};
		if (c->starved &&
		    (timeout_ms < 0 || timeout_ms > PS_LOCAL_RETRY_MS))
			timeout_ms = PS_LOCAL_RETRY_MS;
	}
	pthread_mutex_unlock(&n->llock);
	if (n->ldone)
		timeout_ms = 0;
	if (poll(pfd, np, timeout_ms) < 0)
		return;
	if (pfd[1].revents && read(n->lwake, &v, sizeof(v)) < 0) {
		/* Nothing to read: another round found it. */
	}
	if (pfd[2].revents)
		laccept(n);
	for (unsigned int k = 0; k < nc; k++) {
		struct lconn *c = &n->lc[idx[k]];
		short rev = pfd[3 + k].revents;
		bool ok = true;

		/* Read first: a frame that fails to find memory waits. */
		if (c->starved || (rev & (POLLIN | POLLHUP | POLLERR)))
			ok = lread(n, c);
		pthread_mutex_lock(&n->llock);
		if (c->fd >= 0 && (!ok || (c->out && lflush(c))))
			lclose(n, c);
		pthread_mutex_unlock(&n->llock);
	}
	ldone(n);
}

void ps_local_fini(struct bxps *n)
{
	if (n->lwake < 0)
		return;
	pthread_mutex_lock(&n->llock);
	for (unsigned int i = 0; i < PS_LOCAL_MAX; i++) {
		struct lconn *c = &n->lc[i];

		if (c->fd < 0)
			continue;
		/* What is queued (byes, answers) goes if it can. */
		lflush(c);
		lclose(n, c);
	}
	pthread_mutex_unlock(&n->llock);
	/* What ended with the connections completes (the node is stopped). */
	ldone(n);
	close(n->lfd);
	close(n->lwake);
	n->lfd = n->lwake = -1;
	pthread_mutex_destroy(&n->llock);
}
