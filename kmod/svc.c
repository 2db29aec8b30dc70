// SPDX-License-Identifier: GPL-2.0
/*
 * bx: services.
 *
 * A file binds service numbers (BX_IOC_BIND) in its network namespace and
 * posts RECV buffers to them (BX_OP_RECV). A message for a service takes
 * the first posted buffer large enough (bx_svc_take_recv()): a push's
 * payload lands there, and so does a pull request, which then waits in
 * the file's table of requests under a token until the application
 * answers it with BX_OP_REPLY (bx_svc_take_req()). Unbinding a service,
 * or closing its file, completes its RECVs as canceled and NACKs the
 * requests nobody will answer.
 */

#include <linux/slab.h>

#include "conn.h"
#include "file.h"
#include "net.h"
#include "op.h"
#include "params.h"
#include "svc.h"

/*
 * Bound services are per network namespace: number -> struct bx_service
 * in bx_net(net)->services (net.c). This lock serializes bind, unbind and
 * the receive path's service lookup with the RECV buffer it takes;
 * process context only.
 */
static DEFINE_MUTEX(bx_services_lock);

/**
 * struct bx_service - a service number bound by a file
 * @id:		the number
 * @file:	owner; services are unbound before their file is freed
 * @node:	in file->services
 * @recvs:	posted RECV buffers (struct bx_recv), under file->lock
 */
struct bx_service {
	u32			id;
	struct bx_file		*file;
	struct list_head	node;
	struct list_head	recvs;
};

static struct xarray *services_of(const struct net *net)
{
	return &bx_net(net)->services;
}

/*
 * Own @service in the file's network namespace. Numbers below
 * BX_SERVICE_PRIV are for processes with CAP_NET_BIND_SERVICE, as TCP's
 * ports below 1024 are: an unprivileged process cannot take a system
 * parameter server's number before it starts.
 */
int bx_svc_bind(struct bx_file *f, u32 service)
{
	struct bx_service *svc;
	int ret;

	if (!service)
		return -EINVAL;
	if (service < BX_SERVICE_PRIV && !f->cap_bind)
		return -EACCES;
	if (!bx_user_charge(&f->user->services,
			    READ_ONCE(bx_user_services_max)))
		return -ENOSPC;
	svc = kzalloc(sizeof(*svc), BX_GFP_CHARGED);
	if (!svc) {
		bx_user_uncharge(&f->user->services);
		return -ENOMEM;
	}
	svc->id = service;
	svc->file = f;
	INIT_LIST_HEAD(&svc->recvs);

	mutex_lock(&bx_services_lock);
	ret = xa_insert(services_of(f->net), service, svc, GFP_KERNEL);
	if (!ret) {
		spin_lock(&f->lock);
		list_add(&svc->node, &f->services);
		spin_unlock(&f->lock);
	}
	mutex_unlock(&bx_services_lock);
	if (ret) {
		kfree(svc);
		bx_user_uncharge(&f->user->services);
		return ret == -EBUSY ? -EADDRINUSE : ret;
	}
	return 0;
}

/* Called with bx_services_lock held. */
static void service_free(struct bx_service *svc)
{
	struct bx_file *f = svc->file;
	struct bx_recv *rv, *tmp;
	LIST_HEAD(recvs);

	lockdep_assert_held(&bx_services_lock);
	xa_erase(services_of(f->net), svc->id);
	spin_lock(&f->lock);
	list_del(&svc->node);
	list_splice_init(&svc->recvs, &recvs);
	spin_unlock(&f->lock);
	/* RECVs offered to a service that is gone end as canceled. */
	list_for_each_entry_safe(rv, tmp, &recvs, node) {
		struct bx_cqe cqe = {
			.user_data	= rv->user_data,
			.res		= -ECANCELED,
			.service	= svc->id,
		};

		bx_file_complete(f, &cqe);
		kfree(rv);
	}
	kfree(svc);
	bx_user_uncharge(&f->user->services);
}

int bx_svc_unbind(struct bx_file *f, u32 service)
{
	struct bx_service *svc;
	int ret = -ENOENT;

	mutex_lock(&bx_services_lock);
	svc = xa_load(services_of(f->net), service);
	if (svc && svc->file == f) {
		service_free(svc);
		ret = 0;
	}
	mutex_unlock(&bx_services_lock);
	return ret;
}

/* BX_OP_RECV: offer a buffer to one of the file's services. */
int bx_svc_post_recv(struct bx_file *f, const struct bx_sqe *sqe)
{
	struct bx_service *svc;
	struct bx_recv *rv;
	int ret = 0;

	rv = kzalloc(sizeof(*rv), BX_GFP_CHARGED);
	if (!rv)
		return -ENOMEM;
	rv->user_data = sqe->user_data;
	rv->off = sqe->off;
	rv->len = sqe->len;

	mutex_lock(&bx_services_lock);
	svc = xa_load(services_of(f->net), sqe->service);
	if (!svc || svc->file != f) {
		ret = -ENOTCONN;
	} else {
		spin_lock(&f->lock);
		list_add_tail(&rv->node, &svc->recvs);
		spin_unlock(&f->lock);
	}
	mutex_unlock(&bx_services_lock);
	if (ret)
		kfree(rv);
	return ret;
}

/*
 * Take a posted RECV buffer of at least @need bytes from @service, in the
 * namespace of @conn's peer. Returns its file with a reference, or NULL
 * with the wire status in @st: no such service, none posted (BUSY: the
 * sender tries again later) or none large enough.
 */
struct bx_file *bx_svc_take_recv(struct bx_conn *conn, u32 service, u32 need,
				 struct bx_recv **out, u8 *st)
{
	struct bx_service *svc;
	struct bx_file *f = NULL;
	struct bx_recv *rv;

	mutex_lock(&bx_services_lock);
	svc = xa_load(services_of(bx_peer_net(conn->peer)), service);
	if (!svc) {
		*st = BX_ST_NOSVC;
		goto out;
	}
	*st = list_empty(&svc->recvs) ? BX_ST_BUSY : BX_ST_NOBUFS;
	spin_lock(&svc->file->lock);
	list_for_each_entry(rv, &svc->recvs, node) {
		if (rv->len >= need) {
			list_del(&rv->node);
			f = svc->file;
			bx_file_get(f);
			*out = rv;
			break;
		}
	}
	spin_unlock(&svc->file->lock);
out:
	mutex_unlock(&bx_services_lock);
	return f;
}

/*
 * Pull request @msg from @conn was delivered to @f: keep in @req what its
 * REPLY needs (the requester's sink, @capacity bytes) under a new token.
 * @req is the caller's allocation, made before it took a RECV buffer (a
 * lack of memory then leaves the buffer posted); freed here on failure.
 * -ESHUTDOWN: the file is being released and would never answer.
 */
int bx_svc_add_req(struct bx_file *f, struct bx_req *req,
		   struct bx_conn *conn, const struct bx_msg *msg,
		   u32 capacity, u32 *token)
{
	int ret;

	bx_conn_get(conn);
	req->conn = conn;
	req->req_id = msg->req_id;
	req->peer_id = conn->peer->id;
	req->nrdv = msg->nrdv;
	req->capacity = capacity;
	memcpy(req->rdv, msg->rdv, sizeof(msg->rdv[0]) * msg->nrdv);

	/* A released file must not gain requests nobody will answer. */
	spin_lock(&f->lock);
	ret = f->dead ? -ESHUTDOWN :
	      xa_alloc_cyclic(&f->reqs, token, req, xa_limit_31b,
			      &f->next_token, GFP_ATOMIC);
	spin_unlock(&f->lock);
	/* 1: the tokens wrapped round, which is fine. */
	if (ret < 0) {
		bx_conn_put(conn);
		kfree(req);
		return ret;
	}
	return 0;
}

/*
 * The request of @token, for a REPLY of @len bytes: looked up, checked
 * and consumed at once, so that a racing REPLY with the same token finds
 * it gone (and never sees it freed), and a new request given the token
 * meanwhile stays. The caller owns the result (kfree(), and the
 * reference on ->conn); NULL with *@err: -ENOENT, or -EMSGSIZE (too big
 * for the requester's sink, the request stays).
 */
struct bx_req *bx_svc_take_req(struct bx_file *f, u64 token, u32 len,
			       int *err)
{
	struct bx_req *req;

	*err = 0;
	if (token > U32_MAX) {
		*err = -ENOENT;
		return NULL;
	}
	xa_lock(&f->reqs);
	req = xa_load(&f->reqs, token);
	if (!req)
		*err = -ENOENT;
	else if (len > req->capacity)
		*err = -EMSGSIZE;
	else
		__xa_erase(&f->reqs, token);
	xa_unlock(&f->reqs);
	return *err ? NULL : req;
}

/*
 * @f is going away (f->dead is set): its services stop receiving, posted
 * RECVs are dropped, requesters still waiting for a reply learn it will
 * not come.
 */
void bx_svc_release(struct bx_file *f)
{
	struct bx_service *svc;
	struct bx_req *req;
	unsigned long token;

	mutex_lock(&bx_services_lock);
	while (!list_empty(&f->services)) {
		svc = list_first_entry(&f->services, struct bx_service, node);
		service_free(svc);
	}
	mutex_unlock(&bx_services_lock);

	xa_for_each(&f->reqs, token, req) {
		xa_erase(&f->reqs, token);
		bx_op_send_ctl(req->conn, BX_MSG_NACK, req->req_id,
			       BX_ST_CANCELED);
		bx_conn_put(req->conn);
		kfree(req);
	}
}
