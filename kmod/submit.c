// SPDX-License-Identifier: GPL-2.0
/*
 * bx: what a process submits (BX_IOC_SUBMIT, one sqe at a time): checked
 * against its file (region bounds, reserved fields, sizes), counted
 * against the room in its completion ring and its user's share of
 * operations in flight, and turned into an operation (op.c) or a posted
 * RECV (svc.c). Every accepted sqe ends with exactly one completion.
 */

#include <linux/slab.h>
#include <linux/uaccess.h>

#include "conn.h"
#include "file.h"
#include "op.h"
#include "params.h"
#include "svc.h"
#include "trace.h"

/*
 * The deadline of @sqe's operation in jiffies (never 0), or 0: none. A
 * file whose opener lacked CAP_NET_ADMIN gets one in any case, at most
 * op_timeout_max_ms away: what it holds of the shared windows, MRs and
 * the peer's buffers comes back in bounded time.
 */
static unsigned long op_deadline(const struct bx_file *f,
				 const struct bx_sqe *sqe)
{
	unsigned int ms = sqe->timeout_ms ?: READ_ONCE(bx_op_timeout_ms);
	unsigned int max = READ_ONCE(bx_op_timeout_max_ms);

	if (!f->cap_admin && (!ms || ms > max))
		ms = max;
	if (!ms)
		return 0;
	return (jiffies + msecs_to_jiffies(ms)) ?: 1;
}

/*
 * What every op takes from its sqe and its checked buffer @sp, and a
 * reference to its file.
 */
static void op_from_sqe(struct bx_op *op, struct bx_file *f,
			const struct bx_sqe *sqe, const struct bx_spans *sp)
{
	bx_file_get(f);
	op->file = f;
	op->user = f->user;
	op->deadline = op_deadline(f, sqe);
	op->user_data = sqe->user_data;
	op->buf = *sp;
	if (op->kind == BX_K_PULL) {
		op->off = sqe->off;
		op->len = sqe->len;
		op->resp_len = sp->total;
	} else {
		op->len = sp->total;
	}
}

static int submit_reply(struct bx_file *f, const struct bx_sqe *sqe,
			const struct bx_spans *sp)
{
	struct bx_req *req;
	struct bx_op *op;
	int ret;

	if (sqe->token > U32_MAX)
		return -ENOENT;
	op = bx_op_alloc(BX_K_REPLY, BX_GFP_CHARGED);
	if (!op)
		return -ENOMEM;
	op->rdma = kzalloc(sizeof(*op->rdma), BX_GFP_CHARGED);
	if (!op->rdma) {
		bx_op_put(op);
		return -ENOMEM;
	}
	req = bx_svc_take_req(f, sqe->token, sp->total, &ret);
	if (!req) {
		bx_op_put(op);
		return ret;
	}
	op_from_sqe(op, f, sqe, sp);
	op->conn = req->conn;
	op->msg.req_id = req->req_id;
	op->rdma->nrdv = req->nrdv;
	memcpy(op->rdma->rdv, req->rdv, sizeof(req->rdv[0]) * req->nrdv);
	kfree(req);
	op->cqe.done = NULL;
	trace_bx_op_submit(op);
	bx_send_queue(op->conn, op);
	bx_conns_sweep(false);
	return 0;
}

static int submit_request(struct bx_file *f, const struct bx_sqe *sqe,
			  const struct bx_spans *sp)
{
	struct bx_peer *peer;
	struct bx_op *op;

	peer = bx_peer_find(sqe->peer);
	/* A peer of the file's network namespace (net.c). */
	if (peer && !net_eq(bx_peer_net(peer), f->net)) {
		bx_peer_put(peer);
		peer = NULL;
	}
	if (!peer)
		return -EINVAL;
	op = bx_op_alloc(sqe->opcode, BX_GFP_CHARGED);
	if (!op) {
		bx_peer_put(peer);
		return -ENOMEM;
	}
	op_from_sqe(op, f, sqe, sp);
	op->service = sqe->service;
	op->peer = peer;
	op->lane_key = f->lane_key;
	op->needs_reg = (op->kind == BX_K_PUSH ? op->len :
			 op->resp_len) > READ_ONCE(bx_rdv_threshold);
	trace_bx_op_submit(op);
	bx_cm_submit(peer, op);
	bx_conns_sweep(false);
	return 0;
}

/*
 * @sp from the array of @n struct bx_vec at user address @uptr
 * (BX_SQE_F_VEC), copied once: what the process changes there later
 * changes nothing. A buffer the peer is to reach (@reg: a push's source,
 * a pull's sink) takes at most BX_WIRE_MAX_RDV registered segments, so
 * that it can go by RDMA whatever rdv_threshold says; a REPLY's source
 * is only ever read locally.
 */
static int sqe_vec(struct bx_region *r, u64 uptr, u64 n, bool reg,
		   struct bx_spans *sp)
{
	struct bx_vec v[BX_VEC_MAX];
	int ret;

	if (!n || n > BX_VEC_MAX)
		return -EINVAL;
	if (copy_from_user(v, u64_to_user_ptr(uptr), n * sizeof(v[0])))
		return -EFAULT;
	ret = bx_span_set(sp, v, n, r->size);
	if (ret)
		return ret;
	if (reg && bx_span_segs(sp, BX_SEG_MAX) > BX_WIRE_MAX_RDV)
		return -EMSGSIZE;
	return 0;
}

/* @sp: @len bytes at @off of the region, checked. */
static int sqe_flat(struct bx_region *r, u64 off, u64 len,
		    struct bx_spans *sp)
{
	if (len > BX_MSG_MAX)
		return -EMSGSIZE;
	if (!bx_region_valid(r, off, len))
		return -EINVAL;
	bx_span_flat(sp, off, len);
	return 0;
}

/*
 * Check @sqe against its file; its buffer (a PUSH's or REPLY's source, a
 * PULL's response sink, a RECV's buffer) goes to @sp.
 */
static int check_sqe(struct bx_file *f, const struct bx_sqe *sqe,
		     struct bx_spans *sp)
{
	bool vec = sqe->flags & BX_SQE_F_VEC;
	struct bx_region *r = f->region;

	if ((sqe->flags & ~BX_SQE_F_VEC) || sqe->resv0 || sqe->resv2)
		return -EINVAL;
	switch (sqe->opcode) {
	case BX_OP_PUSH:
	case BX_OP_PULL:
		/* The peer itself is looked up by submit_request(). */
		if (!sqe->service || sqe->token || !sqe->peer)
			return -EINVAL;
		if (sqe->opcode == BX_OP_PUSH) {
			if (sqe->resp_off || sqe->resp_len)
				return -EINVAL;
			return vec ? sqe_vec(r, sqe->off, sqe->len, true, sp) :
			       sqe_flat(r, sqe->off, sqe->len, sp);
		}
		/* A request travels inline; its response may be large. */
		if (sqe->len > BX_EAGER_MAX)
			return -EMSGSIZE;
		if (!bx_region_valid(r, sqe->off, sqe->len))
			return -EINVAL;
		return vec ? sqe_vec(r, sqe->resp_off, sqe->resp_len, true, sp) :
		       sqe_flat(r, sqe->resp_off, sqe->resp_len, sp);
	case BX_OP_RECV:
		if (vec || sqe->peer || sqe->token || sqe->resp_off ||
		    sqe->resp_len || sqe->timeout_ms)
			return -EINVAL;
		return sqe_flat(r, sqe->off, sqe->len, sp);
	case BX_OP_REPLY:
		if (sqe->peer || sqe->service || sqe->resp_off || sqe->resp_len)
			return -EINVAL;
		return vec ? sqe_vec(r, sqe->off, sqe->len, false, sp) :
		       sqe_flat(r, sqe->off, sqe->len, sp);
	default:
		return -EINVAL;
	}
}

int bx_submit_sqe(struct bx_file *f, const struct bx_sqe *sqe)
{
	struct bx_spans sp;
	int ret;

	ret = check_sqe(f, sqe, &sp);
	if (ret)
		return ret;

	/*
	 * Room for this operation's completion, whatever happens, and in its
	 * user's share of operations in flight (user.c).
	 */
	spin_lock(&f->lock);
	if (f->inflight + bx_cq_pending(&f->cq) > f->cq.mask) {
		spin_unlock(&f->lock);
		return -EBUSY;
	}
	f->inflight++;
	spin_unlock(&f->lock);
	if (!bx_user_charge(&f->user->ops, READ_ONCE(bx_user_ops_max))) {
		ret = -EBUSY;
		goto out;
	}

	switch (sqe->opcode) {
	case BX_OP_RECV:
		ret = bx_svc_post_recv(f, sqe);
		break;
	case BX_OP_REPLY:
		ret = submit_reply(f, sqe, &sp);
		break;
	default:
		ret = submit_request(f, sqe, &sp);
		break;
	}
	if (ret)
		bx_user_uncharge(&f->user->ops);
out:
	if (ret) {
		spin_lock(&f->lock);
		f->inflight--;
		spin_unlock(&f->lock);
	}
	return ret;
}

/*
 * The file is going away: its services stop receiving, posted RECVs are
 * dropped, requesters still waiting for a reply learn it will not come
 * (svc.c), and what it queued on the connections is ended by the sweep
 * at once (-ECANCELED; bx_op_expired()). Operations on the wire finish
 * with their response, or at their deadline, and drop their references to
 * the file and its region.
 */
void bx_submit_release(struct bx_file *f)
{
	spin_lock(&f->lock);
	f->dead = true;
	spin_unlock(&f->lock);
	bx_svc_release(f);
	/*
	 * What it queued goes now, and what it has on the wire gives the
	 * windows back (bx_send_sweep()).
	 */
	bx_conns_sweep(true);
}
