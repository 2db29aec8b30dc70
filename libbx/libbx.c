// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * libbx implementation.
 *
 * Completions: the kernel produces entries into the mmap'd ring; this
 * library is its only consumer. bx->lock serializes consumption. A
 * completion of a synchronous call (user_data with the top bit set points
 * to its struct bx_sync) is handed to its waiter; any other goes to the
 * backlog that bx_reap() returns from. One thread at a time sleeps in
 * poll(2) (bx->polling); the others wait on bx->cond and are woken by
 * every drain.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/bx_netlink.h>

#include "alloc.h"
#include "internal.h"
#include "libbx.h"

#define SYNC_TAG	(1ULL << 63)

struct bx_sync {
	bool		done;
	bool		abandoned;
	struct bx_cqe	cqe;
};

struct bx {
	int			fd;
	void			*region;
	uint64_t		region_size;
	uint32_t		eager_max;
	struct bx_alloc		*alloc;
	void			*cq_map;
	size_t			cq_map_size;
	uint32_t		*khead;
	const uint32_t		*ktail;
	uint32_t		mask;
	const struct bx_cqe	*cqes;

	/* Protects ring consumption, the backlog and @polling. */
	pthread_mutex_t		lock;
	pthread_cond_t		cond;
	bool			polling;
	struct bx_cqe		*backlog;
	size_t			nbacklog;
	size_t			backlog_cap;
};

int bx_open(struct bx **out, unsigned int flags)
{
	struct bx *bx;

	if (flags)
		return -EINVAL;
	bx = calloc(1, sizeof(*bx));
	if (!bx)
		return -ENOMEM;
	bx->fd = open("/dev/" BX_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (bx->fd < 0) {
		int err = -errno;

		free(bx);
		return err;
	}
	pthread_mutex_init(&bx->lock, NULL);
	pthread_cond_init(&bx->cond, NULL);
	*out = bx;
	return 0;
}

void bx_close(struct bx *bx)
{
	if (!bx)
		return;
	if (bx->region)
		munmap(bx->region, bx->region_size);
	if (bx->cq_map)
		munmap(bx->cq_map, bx->cq_map_size);
	if (bx->alloc)
		bx_alloc_destroy(bx->alloc);
	close(bx->fd);
	pthread_mutex_destroy(&bx->lock);
	pthread_cond_destroy(&bx->cond);
	free(bx->backlog);
	free(bx);
}

int bx_fd(const struct bx *bx)
{
	return bx->fd;
}

int bx_get_info(struct bx *bx, struct bx_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(bx->fd, BX_IOC_GET_INFO, info) ? -errno : 0;
}

int bx_setup(struct bx *bx, uint64_t region_size, uint32_t cq_entries)
{
	struct bx_setup s = { .size = sizeof(s) };
	void *region, *cq;
	int ret;

	s.region_size = region_size;
	s.cq_entries = cq_entries;
	if (ioctl(bx->fd, BX_IOC_SETUP, &s))
		return -errno;
	region = mmap(NULL, s.region_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      bx->fd, s.region_mmap_off);
	if (region == MAP_FAILED)
		return -errno;
	cq = mmap(NULL, s.cq_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		  bx->fd, s.cq_mmap_off);
	if (cq == MAP_FAILED) {
		ret = -errno;
		munmap(region, s.region_size);
		return ret;
	}
	ret = bx_alloc_create(&bx->alloc, s.region_size, 64, 65536);
	if (ret) {
		munmap(region, s.region_size);
		munmap(cq, s.cq_mmap_size);
		return ret;
	}
	bx->region = region;
	bx->region_size = s.region_size;
	bx->eager_max = s.eager_max;
	bx->cq_map = cq;
	bx->cq_map_size = s.cq_mmap_size;
	bx->khead = (uint32_t *)((char *)cq + s.cq_off.head);
	bx->ktail = (const uint32_t *)((char *)cq + s.cq_off.tail);
	bx->mask = *(const uint32_t *)((char *)cq + s.cq_off.ring_mask);
	bx->cqes = (const struct bx_cqe *)((char *)cq + s.cq_off.cqes);
	return 0;
}

void *bx_region(const struct bx *bx)
{
	return bx->region;
}

uint64_t bx_region_size(const struct bx *bx)
{
	return bx->region_size;
}

uint32_t bx_eager_max(const struct bx *bx)
{
	return bx->eager_max;
}

int bx_buf_alloc(struct bx *bx, size_t size, void **out)
{
	uint64_t off;
	int ret;

	if (!bx->alloc)
		return -ENXIO;
	ret = bx_alloc_get(bx->alloc, size, size >= 4096 ? 4096 : 64, &off);
	if (ret)
		return ret;
	*out = (char *)bx->region + off;
	return 0;
}

int bx_buf_free(struct bx *bx, void *buf)
{
	uintptr_t p = (uintptr_t)buf, base = (uintptr_t)bx->region;

	if (!bx->alloc || p < base || p >= base + bx->region_size)
		return -EINVAL;
	return bx_alloc_put(bx->alloc, p - base);
}

int bx_peer(struct bx *bx, const char *addr, uint32_t *peer)
{
	struct bx_peer_addr p = { 0 };

	if (inet_pton(AF_INET, addr, p.addr) == 1)
		p.family = AF_INET;
	else if (inet_pton(AF_INET6, addr, p.addr) == 1)
		p.family = AF_INET6;
	else
		return -EINVAL;
	if (ioctl(bx->fd, BX_IOC_PEER, &p))
		return -errno;
	*peer = p.id;
	return 0;
}

static int bind_ioc(struct bx *bx, unsigned long cmd, uint32_t service)
{
	struct bx_bind b = { .service = service };

	return ioctl(bx->fd, cmd, &b) ? -errno : 0;
}

int bx_bind(struct bx *bx, uint32_t service)
{
	return bind_ioc(bx, BX_IOC_BIND, service);
}

int bx_unbind(struct bx *bx, uint32_t service)
{
	return bind_ioc(bx, BX_IOC_UNBIND, service);
}

static int submit_raw(struct bx *bx, const struct bx_sqe *sqes,
		      unsigned int nr, unsigned int wait)
{
	struct bx_submit s = { .sqes = (uintptr_t)sqes, .nr = nr,
			       .wait = wait };
	int ret = ioctl(bx->fd, BX_IOC_SUBMIT, &s);

	return ret < 0 ? -errno : ret;
}

/* User data with the top bit set would be taken for a synchronous call's. */
int bx_submit_wait(struct bx *bx, const struct bx_sqe *sqes, unsigned int nr,
		   unsigned int wait)
{
	for (unsigned int i = 0; i < nr; i++)
		if (sqes[i].user_data & SYNC_TAG)
			return i ? submit_raw(bx, sqes, i, 0) : -EINVAL;
	return submit_raw(bx, sqes, nr, wait);
}

int bx_submit(struct bx *bx, const struct bx_sqe *sqes, unsigned int nr)
{
	return bx_submit_wait(bx, sqes, nr, 0);
}

/* Region offset of [p, p + len), or -EINVAL if it is not inside. */
static int region_off(const struct bx *bx, const void *p, uint32_t len,
		      __u64 *off)
{
	uintptr_t a = (uintptr_t)p, base = (uintptr_t)bx->region;

	if (!bx->region)
		return -ENXIO;
	if (!len && !p) {
		*off = 0;
		return 0;
	}
	if (a < base || a - base > bx->region_size ||
	    len > bx->region_size - (a - base))
		return -EINVAL;
	*off = a - base;
	return 0;
}

static int submit_one(struct bx *bx, struct bx_sqe *sqe)
{
	int ret = submit_raw(bx, sqe, 1, 0);

	return ret < 0 ? ret : 0;
}

int bx_prep_push(struct bx *bx, struct bx_sqe *sqe, uint32_t peer,
		 uint32_t service, const void *buf, uint32_t len,
		 uint64_t user_data)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = BX_OP_PUSH;
	sqe->peer = peer;
	sqe->service = service;
	sqe->len = len;
	sqe->user_data = user_data;
	return region_off(bx, buf, len, &sqe->off);
}

int bx_prep_pull(struct bx *bx, struct bx_sqe *sqe, uint32_t peer,
		 uint32_t service, const void *req, uint32_t req_len,
		 void *resp, uint32_t resp_cap, uint64_t user_data)
{
	int ret;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = BX_OP_PULL;
	sqe->peer = peer;
	sqe->service = service;
	sqe->len = req_len;
	sqe->resp_len = resp_cap;
	sqe->user_data = user_data;
	ret = region_off(bx, req, req_len, &sqe->off);
	return ret ? ret : region_off(bx, resp, resp_cap, &sqe->resp_off);
}

int bx_prep_recv(struct bx *bx, struct bx_sqe *sqe, uint32_t service,
		 void *buf, uint32_t cap, uint64_t user_data)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = BX_OP_RECV;
	sqe->service = service;
	sqe->len = cap;
	sqe->user_data = user_data;
	return region_off(bx, buf, cap, &sqe->off);
}

int bx_prep_reply(struct bx *bx, struct bx_sqe *sqe, uint64_t token,
		  const void *buf, uint32_t len, uint64_t user_data)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = BX_OP_REPLY;
	sqe->token = token;
	sqe->len = len;
	sqe->user_data = user_data;
	return region_off(bx, buf, len, &sqe->off);
}

/* Submit one prepared operation whose completion goes to bx_reap(). */
static int submit_async(struct bx *bx, struct bx_sqe *sqe, int prep)
{
	int ret;

	if (prep)
		return prep;
	ret = bx_submit(bx, sqe, 1);
	return ret < 0 ? ret : 0;
}

int bx_push_async(struct bx *bx, uint32_t peer, uint32_t service,
		  const void *buf, uint32_t len, uint64_t user_data)
{
	struct bx_sqe sqe;

	return submit_async(bx, &sqe, bx_prep_push(bx, &sqe, peer, service,
						   buf, len, user_data));
}

int bx_pull_async(struct bx *bx, uint32_t peer, uint32_t service,
		  const void *req, uint32_t req_len, void *resp,
		  uint32_t resp_cap, uint64_t user_data)
{
	struct bx_sqe sqe;

	return submit_async(bx, &sqe, bx_prep_pull(bx, &sqe, peer, service,
						   req, req_len, resp,
						   resp_cap, user_data));
}

int bx_recv_async(struct bx *bx, uint32_t service, void *buf, uint32_t cap,
		  uint64_t user_data)
{
	struct bx_sqe sqe;

	return submit_async(bx, &sqe, bx_prep_recv(bx, &sqe, service, buf,
						   cap, user_data));
}

int bx_reply_async(struct bx *bx, uint64_t token, const void *buf,
		   uint32_t len, uint64_t user_data)
{
	struct bx_sqe sqe;

	return submit_async(bx, &sqe, bx_prep_reply(bx, &sqe, token, buf, len,
						    user_data));
}

/* Move every available completion to its waiter or the backlog. */
static void drain_locked(struct bx *bx)
{
	uint32_t head = *bx->khead;
	uint32_t tail = __atomic_load_n(bx->ktail, __ATOMIC_ACQUIRE);
	bool wake = false;

	while (head != tail) {
		const struct bx_cqe *c = &bx->cqes[head & bx->mask];

		if (c->user_data & SYNC_TAG) {
			struct bx_sync *s = (void *)(uintptr_t)
					    (c->user_data & ~SYNC_TAG);

			if (s->abandoned) {
				free(s);
			} else {
				s->cqe = *c;
				s->done = true;
			}
		} else {
			if (bx->nbacklog == bx->backlog_cap) {
				size_t cap = bx->backlog_cap ?
					     bx->backlog_cap * 2 : 64;
				struct bx_cqe *nb = realloc(bx->backlog,
							    cap * sizeof(*nb));

				/* Leave it in the ring for the next try. */
				if (!nb)
					break;
				bx->backlog = nb;
				bx->backlog_cap = cap;
			}
			bx->backlog[bx->nbacklog++] = *c;
		}
		head++;
		wake = true;
	}
	/* Return the entries to the kernel only after reading them. */
	__atomic_store_n(bx->khead, head, __ATOMIC_RELEASE);
	if (wake)
		pthread_cond_broadcast(&bx->cond);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Wait, with bx->lock held, until @ready(bx, arg) or the deadline. One
 * thread polls the file; the others sleep on the condition variable.
 * Returns false on timeout.
 */
static bool wait_locked(struct bx *bx, bool (*ready)(struct bx *, void *),
			void *arg, int timeout_ms)
{
	int64_t end = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

	for (;;) {
		int left;

		drain_locked(bx);
		if (ready(bx, arg))
			return true;
		left = end < 0 ? -1 : (int)(end - now_ms());
		if (end >= 0 && left <= 0)
			return false;
		if (bx->polling) {
			struct timespec ts;

			if (end < 0) {
				pthread_cond_wait(&bx->cond, &bx->lock);
				continue;
			}
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += left / 1000;
			ts.tv_nsec += (left % 1000) * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&bx->cond, &bx->lock, &ts);
			continue;
		}
		bx->polling = true;
		pthread_mutex_unlock(&bx->lock);
		{
			struct pollfd p = { .fd = bx->fd, .events = POLLIN };

			poll(&p, 1, left);
		}
		pthread_mutex_lock(&bx->lock);
		bx->polling = false;
		pthread_cond_broadcast(&bx->cond);
	}
}

static bool backlog_ready(struct bx *bx, void *arg)
{
	(void)arg;
	return bx->nbacklog > 0;
}

int bx_reap(struct bx *bx, struct bx_cqe *cqes, unsigned int max,
	    int timeout_ms)
{
	unsigned int n;

	if (!bx->region)
		return -ENXIO;
	pthread_mutex_lock(&bx->lock);
	if (max)
		wait_locked(bx, backlog_ready, NULL, timeout_ms);
	n = bx->nbacklog < max ? bx->nbacklog : max;
	memcpy(cqes, bx->backlog, n * sizeof(*cqes));
	memmove(bx->backlog, bx->backlog + n,
		(bx->nbacklog - n) * sizeof(*cqes));
	bx->nbacklog -= n;
	pthread_mutex_unlock(&bx->lock);
	return n;
}

static bool sync_ready(struct bx *bx, void *arg)
{
	(void)bx;
	return ((struct bx_sync *)arg)->done;
}

/* Submit @sqe and wait for its completion; fills @cqe if non-NULL. */
static int run_sync(struct bx *bx, struct bx_sqe *sqe, int prep,
		    struct bx_cqe *cqe, int timeout_ms)
{
	struct bx_sync *s;
	int ret;

	if (prep)
		return prep;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	sqe->user_data = (uintptr_t)s | SYNC_TAG;
	ret = submit_one(bx, sqe);
	if (ret) {
		free(s);
		return ret;
	}
	pthread_mutex_lock(&bx->lock);
	if (!wait_locked(bx, sync_ready, s, timeout_ms)) {
		/* The completion will come; whoever drains it frees @s. */
		s->abandoned = true;
		pthread_mutex_unlock(&bx->lock);
		return -ETIMEDOUT;
	}
	pthread_mutex_unlock(&bx->lock);
	ret = s->cqe.res;
	if (cqe)
		*cqe = s->cqe;
	free(s);
	return ret;
}

/*
 * The operation certainly did not reach the peer's application. (A
 * -ETIMEDOUT of the connection attempt or of bx's recovery of a push that
 * was never sent; run_sync_retry() stops at its own deadline, which also
 * reads -ETIMEDOUT.)
 */
bool bx_err_not_delivered(int err)
{
	return err == -ENOTCONN || err == -EHOSTUNREACH ||
	       err == -ENETUNREACH || err == -ECONNREFUSED ||
	       err == -ETIMEDOUT;
}

/* A connection failure: the peer may or may not have seen it. */
bool bx_err_conn_failed(int err)
{
	return bx_err_not_delivered(err) || err == -ECONNRESET || err == -EIO ||
	       err == -ECONNABORTED || err == -EPROTO || err == -ENODEV ||
	       err == -EHOSTDOWN;
}

/*
 * bx's connection events, while a synchronous call waits to try again: a
 * connection to the peer coming up (or bx's own recovery ending) ends the
 * wait at once instead of after the back-off. Opened on the first failure
 * of a call and closed with it; without the family (no permission, older
 * module) the wait is a plain sleep.
 */
struct peer_watch {
	struct mnl_socket *nl;
	uint16_t	family;
	bool		tried;
	bool		ok;
};

/* Generic netlink's controller: @family's id and its events group. */
struct family_ids {
	uint16_t	family;
	uint32_t	mcgrp;
};

static int grp_cb(const struct nlattr *grp, void *arg)
{
	const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1] = { NULL };
	const struct nlattr *a;
	struct family_ids *ids = arg;

	mnl_attr_for_each_nested(a, grp) {
		uint16_t type = mnl_attr_get_type(a);

		if (type <= CTRL_ATTR_MCAST_GRP_MAX)
			tb[type] = a;
	}
	if (!tb[CTRL_ATTR_MCAST_GRP_NAME] || !tb[CTRL_ATTR_MCAST_GRP_ID] ||
	    mnl_attr_validate(tb[CTRL_ATTR_MCAST_GRP_NAME], MNL_TYPE_NUL_STRING) ||
	    mnl_attr_validate(tb[CTRL_ATTR_MCAST_GRP_ID], MNL_TYPE_U32))
		return MNL_CB_OK;
	if (!strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
		    BX_MCGRP_EVENTS))
		ids->mcgrp = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct family_ids *ids = arg;
	const struct nlattr *a, *grp;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			if (!mnl_attr_validate(a, MNL_TYPE_U16))
				ids->family = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			if (mnl_attr_validate(a, MNL_TYPE_NESTED))
				break;
			mnl_attr_for_each_nested(grp, a)
				if (!mnl_attr_validate(grp, MNL_TYPE_NESTED))
					grp_cb(grp, ids);
			break;
		}
	}
	return MNL_CB_OK;
}

/* Ask the controller for bx's family id and events group; 0 or -1. */
static int family_resolve(struct mnl_socket *nl, struct family_ids *ids)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int portid = mnl_socket_get_portid(nl), seq = 1;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;
	ssize_t n;
	int ret;

	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = CTRL_CMD_GETFAMILY;
	genl->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, BX_FAMILY_NAME);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n <= 0)
			return -1;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, family_cb, ids);
	} while (ret > MNL_CB_STOP);
	return ret < 0 || !ids->family || !ids->mcgrp ? -1 : 0;
}

static void watch_open(struct peer_watch *w)
{
	struct family_ids ids = { 0 };
	int grp;

	w->tried = true;
	w->nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!w->nl)
		return;
	if (mnl_socket_bind(w->nl, 0, MNL_SOCKET_AUTOPID) ||
	    family_resolve(w->nl, &ids))
		goto fail;
	grp = (int)ids.mcgrp;
	if (mnl_socket_setsockopt(w->nl, NETLINK_ADD_MEMBERSHIP, &grp,
				  sizeof(grp)))
		goto fail;
	w->family = ids.family;
	w->ok = true;
	return;
fail:
	mnl_socket_close(w->nl);
	w->nl = NULL;
}

static void watch_close(struct peer_watch *w)
{
	if (w->nl)
		mnl_socket_close(w->nl);
	w->nl = NULL;
	w->ok = false;
}

struct watch_arg {
	uint16_t	family;
	uint32_t	peer;
};

/* An event: MNL_CB_STOP if it says a connection to our peer is up. */
static int watch_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct watch_arg *wa = arg;
	const struct genlmsghdr *genl;
	const struct nlattr *a;

	if (nlh->nlmsg_type != wa->family ||
	    !mnl_nlmsg_ok(nlh, (int)nlh->nlmsg_len) ||
	    nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(*genl))
		return MNL_CB_OK;
	genl = mnl_nlmsg_get_payload(nlh);
	if (genl->cmd != BX_CMD_CONN_UP_NTF &&
	    genl->cmd != BX_CMD_RECOVERED_NTF)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*genl))
		if (mnl_attr_get_type(a) == BX_A_CONN_PEER_ID &&
		    !mnl_attr_validate(a, MNL_TYPE_U32) &&
		    mnl_attr_get_u32(a) == wa->peer)
			return MNL_CB_STOP;
	return MNL_CB_OK;
}

/* Sleep @ms, or less if a connection to @peer comes up meanwhile. */
static void watch_wait(struct peer_watch *w, uint32_t peer, int ms)
{
	int64_t end = now_ms() + ms;
	struct watch_arg wa = { .peer = peer };
	char buf[MNL_SOCKET_BUFFER_SIZE];

	if (!w->tried)
		watch_open(w);
	if (!w->ok) {
		usleep((useconds_t)ms * 1000);
		return;
	}
	wa.family = w->family;
	for (;;) {
		struct pollfd pfd = { .fd = mnl_socket_get_fd(w->nl),
				      .events = POLLIN };
		int left = (int)(end - now_ms()), n;
		ssize_t len;

		if (left <= 0)
			return;
		n = poll(&pfd, 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		len = mnl_socket_recvfrom(w->nl, buf, sizeof(buf));
		if (len < 0 && errno == ENOBUFS)
			return;		/* events lost: maybe ours; go */
		if (len <= 0) {
			watch_close(w);
			return;
		}
		/* Events: sequence 0, port 0 (the kernel); no ACKs here. */
		if (mnl_cb_run(buf, (size_t)len, 0, 0, watch_cb, &wa) ==
		    MNL_CB_STOP)
			return;
	}
}

/*
 * Run a push (@pull false) or pull synchronously, sending it again after
 * a connection failure until @timeout_ms: a pull whatever the failure
 * (pulls are idempotent by contract), a push only when it certainly was
 * not delivered. Between attempts it waits for bx's event that the
 * connection to the peer is up again, at most a back-off of 1 to 100 ms.
 * (bx itself already sends parked operations again after a reconnect;
 * this covers what it gave up on, and the next submission reconnects.)
 */
static int run_sync_retry(struct bx *bx, const struct bx_sqe *proto,
			  bool pull, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms, t0;
	int backoff = 1, ret, left = timeout_ms, refusal = 0, margin, took;
	struct peer_watch w = { .tried = false };

	for (;;) {
		struct bx_sqe sqe = *proto;

		t0 = now_ms();
		ret = run_sync(bx, &sqe, 0, NULL, left);
		if (ret >= 0 || !(pull ? bx_err_conn_failed(ret) :
				   bx_err_not_delivered(ret)))
			break;
		/*
		 * A refusal is the peer's answer, and the next comes as
		 * slowly: an attempt with less than twice the slowest one's
		 * time left would end at the deadline still under way
		 * (-ETIMEDOUT, a push's fate unknown) instead of refused.
		 * After a connection failure the next attempt may be quick
		 * (the peer is back): it goes while any time is left.
		 */
		took = (int)(now_ms() - t0);
		if (ret == -ECONNREFUSED && 2 * took > refusal)
			refusal = 2 * took;
		margin = ret == -ECONNREFUSED ? refusal : 0;
		if (timeout_ms >= 0) {
			left = (int)(deadline - now_ms());
			if (left <= backoff + margin)
				break;
			left -= backoff;
		}
		watch_wait(&w, proto->peer, backoff);
		backoff = backoff * 2 > 100 ? 100 : backoff * 2;
	}
	watch_close(&w);
	return ret;
}

int bx_push(struct bx *bx, uint32_t peer, uint32_t service, const void *buf,
	    uint32_t len, int timeout_ms)
{
	struct bx_sqe sqe;
	int ret = bx_prep_push(bx, &sqe, peer, service, buf, len, 0);

	return ret ? ret : run_sync_retry(bx, &sqe, false, timeout_ms);
}

int bx_pull(struct bx *bx, uint32_t peer, uint32_t service, const void *req,
	    uint32_t req_len, void *resp, uint32_t resp_cap, int timeout_ms)
{
	struct bx_sqe sqe;
	int ret = bx_prep_pull(bx, &sqe, peer, service, req, req_len, resp,
			       resp_cap, 0);

	return ret ? ret : run_sync_retry(bx, &sqe, true, timeout_ms);
}

int bx_recv(struct bx *bx, uint32_t service, void *buf, uint32_t cap,
	    struct bx_cqe *cqe, int timeout_ms)
{
	struct bx_sqe sqe;

	return run_sync(bx, &sqe, bx_prep_recv(bx, &sqe, service, buf, cap, 0),
			cqe, timeout_ms);
}

int bx_reply(struct bx *bx, uint64_t token, const void *buf, uint32_t len,
	     int timeout_ms)
{
	struct bx_sqe sqe;

	return run_sync(bx, &sqe, bx_prep_reply(bx, &sqe, token, buf, len, 0),
			NULL, timeout_ms);
}
