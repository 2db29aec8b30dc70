// SPDX-License-Identifier: GPL-2.0
/*
 * bx: operations.
 *
 * Requester side (BX_OP_PUSH, BX_OP_PULL):
 *
 *   bx_op_submit() -> bx_conn_submit() -> [connection up] bx_conn_queue():
 *     the op waits in its process's queue until the send windows admit it
 *     (send.c) -> bx_conn_kick()
 *     -> bx_op_transmit(): id in conn->ops, payload up to rdv_threshold
 *        copied into the send buffer; a larger push source or pull sink
 *        is registered per operation (FRWR, one MR per BX_SEG_MAX bytes),
 *        REG_MR WRs chained before the SEND that carries the descriptors
 *     -> response (PUSH_DONE, PULL_RESP, PULL_WRITTEN, NACK) in
 *        bx_op_recv(): inline response copied into the sink; MRs
 *        invalidated (LOCAL_INV) before the completion is posted, so the
 *        peer can touch the buffer only while the operation is in flight.
 *
 * Server side (messages for a service bound with BX_IOC_BIND):
 *
 *   PUSH      -> copied into a posted RECV buffer, completion, PUSH_DONE
 *   PUSH_RDV  -> once receiver admission lets it (send.c), RDMA READ
 *                (rdma_rw) from the sender's segments straight into a
 *                posted RECV buffer, completion, PUSH_DONE
 *   PULL_REQ  -> request copied into a RECV buffer; completion with a token
 *   BX_OP_REPLY(token) -> inline PULL_RESP, or RDMA WRITE (rdma_rw) into
 *                the requester's segments chained before PULL_WRITTEN.
 *
 * No RECV posted at all: the answer is BUSY and the sender's kernel sends
 * the operation again after a back-off (bx_conn_retry()), so a receiver
 * that stops consuming makes senders wait, without an error. RECVs posted
 * but none big enough: -ENOBUFS; no such service: -ECONNREFUSED. Every
 * operation ends with exactly one completion.
 */

#include <linux/slab.h>
#include <rdma/mr_pool.h>
#include <rdma/rw.h>

#include "conn.h"
#include "file.h"
#include "net.h"
#include "op.h"
#include "params.h"
#include "reg.h"

static_assert(BX_WIRE_XFER_MAX == BX_MSG_MAX);

atomic64_t bx_copied_bytes = ATOMIC64_INIT(0);
atomic64_t bx_ops_inflight = ATOMIC64_INIT(0);
atomic64_t bx_mrs_inuse = ATOMIC64_INIT(0);
atomic64_t bx_pieces = ATOMIC64_INIT(0);

/*
 * Bound services are per network namespace: number -> struct bx_service
 * in bx_net(net)->services (net.c). This lock serializes bind, unbind and
 * the receive path's service lookup with the RECV buffer it takes;
 * process context only.
 */
static DEFINE_MUTEX(bx_services_lock);

static struct xarray *services_of(const struct net *net)
{
	return &bx_net(net)->services;
}

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

struct bx_recv {
	struct list_head	node;
	u64			user_data;
	u64			off;
	u32			len;
};

/* A pull request awaiting BX_OP_REPLY, in file->reqs. */
struct bx_req {
	struct bx_conn		*conn;
	u64			req_id;
	u32			peer_id;
	u32			capacity;
	u8			nrdv;
	struct bx_rdv		rdv[BX_WIRE_MAX_RDV];
};

static const int status_errno[__BX_ST_MAX] = {
	[BX_ST_OK]		= 0,
	[BX_ST_NOSVC]		= -ECONNREFUSED,
	[BX_ST_NOBUFS]		= -ENOBUFS,
	[BX_ST_TOOBIG]		= -EMSGSIZE,
	[BX_ST_REMOTE_IO]	= -EREMOTEIO,
	[BX_ST_CANCELED]	= -ECONNABORTED,
	[BX_ST_BUSY]		= -EAGAIN,	/* never completes an op */
	[BX_ST_AGAIN]		= -EAGAIN,	/* nor does this */
};

/*
 * A new operation of @kind. Those a process submits are charged to its
 * memory cgroup (@gfp GFP_KERNEL_ACCOUNT); those the transport makes for
 * a peer (reads, control messages) to no one's.
 */
static struct bx_op *op_alloc(u8 kind, gfp_t gfp)
{
	struct bx_op *op = kzalloc(sizeof(*op), gfp);

	if (!op)
		return NULL;
	kref_init(&op->ref);
	INIT_LIST_HEAD(&op->node);
	INIT_LIST_HEAD(&op->unres);
	op->kind = kind;
	atomic64_inc(&bx_ops_inflight);
	return op;
}

static void op_release(struct kref *ref)
{
	struct bx_op *op = container_of(ref, struct bx_op, ref);

	if (op->kind == BX_K_PUSH)
		bx_push_resolved(op);
	/* A READ failed from a queue (connection down) delivered nothing. */
	if (op->kind == BX_K_SRV_READ && op->seq)
		bx_replay_done(op->conn, op->epoch, op->seq, false);
	kfree(op->rdma);
	if (op->conn)
		bx_conn_put(op->conn);
	if (op->peer)
		bx_peer_put(op->peer);
	if (op->file)
		bx_file_put(op->file);
	atomic64_dec(&bx_ops_inflight);
	kfree(op);
}

void bx_op_put(struct bx_op *op)
{
	kref_put(&op->ref, op_release);
}

struct bx_op *bx_op_ctl(u8 type)
{
	struct bx_op *op = op_alloc(BX_K_CTL, GFP_KERNEL);

	if (op)
		op->msg.type = type;
	return op;
}

/*
 * @op's connection failed: instead of completing, wait for a new
 * connection to the peer and go again (recover.c). Only a push or
 * pull of a live process, while recover_ms allows. Everything of the old
 * connection is gone (segments released, window uncharged); the op keeps
 * its number, so that the receiver recognises a push it delivered.
 */
static bool op_park(struct bx_op *op)
{
	struct bx_conn *conn = op->conn;

	op->lost = false;
	if ((op->kind != BX_K_PUSH && op->kind != BX_K_PULL) ||
	    bx_op_expired(op) || !bx_recover_allowed())
		return false;
	op->conn = NULL;
	op->req_id = 0;
	op->registered = false;
	op->retries = 0;
	memset(&op->msg, 0, sizeof(op->msg));
	kref_get(&op->ref);	/* peer->parked's */
	bx_peer_park(op->peer, op);
	if (conn)
		bx_conn_put(conn);
	return true;
}

/*
 * Is @op past its deadline (bx_sqe.timeout_ms), or its file closed? Then
 * it is not to be sent (again), nor recovered.
 */
bool bx_op_expired(const struct bx_op *op)
{
	return (op->deadline && time_after_eq(jiffies, op->deadline)) ||
	       (op->file && READ_ONCE(op->file->dead));
}

/* The errno of an operation that bx_op_expired(). */
int bx_op_expiry_errno(const struct bx_op *op)
{
	return op->file && READ_ONCE(op->file->dead) ? -ECANCELED :
	       -ETIMEDOUT;
}

/* Post the operation's completion, exactly once. */
static void op_complete(struct bx_op *op, int res)
{
	struct bx_cqe cqe = {};

	bx_flow_release(op);
	if (op->completed || !op->file)
		return;
	if (op->lost) {
		if (op_park(op))
			return;
		/* A numbered push may have been delivered: not "unsent". */
		if (op->kind == BX_K_PUSH && op->seq &&
		    (res == -ENOTCONN || res == -ETIMEDOUT))
			res = -ECONNRESET;
		/* Not recovered for its deadline: say so. */
		else if (res == -ENOTCONN && bx_op_expired(op))
			res = -ETIMEDOUT;
	}
	if (op->kind == BX_K_PUSH)
		bx_push_resolved(op);
	op->completed = true;
	cqe.user_data = op->user_data;
	cqe.res = res;
	if (op->kind == BX_K_SRV_READ) {
		cqe.flags = BX_CQE_F_PUSH;
		cqe.off = op->off;
		cqe.service = op->service;
		cqe.peer = op->peer_id;
	}
	if (res > 0)
		atomic64_add(res, op->kind == BX_K_SRV_READ ?
			     &op->file->bytes_rx : &op->file->bytes_tx);
	bx_file_complete(op->file, &cqe);
}

/* Queue a bare control message on @conn. */
static void send_ctl(struct bx_conn *conn, u8 type, u64 req_id, u8 status)
{
	struct bx_op *op = bx_op_ctl(type);

	if (!op) {
		/* The peer's operation would hang: give up the connection. */
		bx_conn_fail(conn, -ENOMEM);
		return;
	}
	op->msg.req_id = req_id;
	op->msg.status = status;
	bx_conn_get(conn);
	op->conn = conn;
	bx_conn_queue(conn, op);
}

/* ---- registration of a requester's segments -------------------------- */

/*
 * Registration WRs are unsignaled; a completion comes only if one fails,
 * and then the QP is in error: say why, the teardown does the rest.
 */
static void reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("memory registration failed: %s\n",
				    ib_wc_status_msg(wc->status));
}

static struct ib_cqe reg_cqe = { .done = reg_done };

/*
 * Unmap @seg and give its MR back. A valid MR goes back only once its
 * connection is fenced: the pool is then freed with the PD, never used
 * again (reg.c).
 */
static void seg_release(struct bx_op *op, struct bx_seg *seg,
			enum dma_data_direction dir)
{
	struct ib_device *dev = op->conn->bdev->ibdev;

	if (seg->nents)
		ib_dma_unmap_sg(dev, seg->sgt.sgl, seg->sgt.orig_nents, dir);
	seg->nents = 0;
	if (seg->mr) {
		seg->valid = false;
		bx_mr_put(op->conn, seg->mr);
		atomic64_dec(&bx_mrs_inuse);
		seg->mr = NULL;
	}
	sg_free_table(&seg->sgt);
}

static enum dma_data_direction op_dir(struct bx_op *op)
{
	return op->kind == BX_K_PUSH ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
}

static void segs_release(struct bx_op *op)
{
	u8 i;

	if (!op->rdma)
		return;
	for (i = 0; i < op->rdma->nseg; i++)
		seg_release(op, &op->rdma->seg[i], op_dir(op));
	op->rdma->nseg = 0;
}

/*
 * Map [off, off + len) of the region in segments of at most BX_SEG_MAX
 * bytes, each with an MR of the connection's PD, a fresh random key byte
 * and a random iova (reg.c); fill msg->rdv and chain the REG_MR WRs.
 * Returns the last WR of the chain (its first is &rdma->reg[0].wr), or an
 * ERR_PTR: -EAGAIN when the connection has no MR left.
 */
static struct ib_send_wr *segs_register(struct bx_op *op, u64 off, u32 len,
					int access)
{
	struct bx_conn *conn = op->conn;
	struct bx_region *r = op->file->region;
	struct bx_rdma *rd = op->rdma;
	u32 done = 0;
	int ret;

	rd->nseg = 0;
	while (done < len) {
		struct bx_seg *seg = &rd->seg[rd->nseg];
		struct ib_reg_wr *reg = &rd->reg[rd->nseg];
		u32 n = min(len - done, BX_SEG_MAX);

		seg->off = off + done;
		seg->len = n;
		ret = bx_region_sg(r, seg->off, n, &seg->sgt);
		if (ret)
			goto err;
		rd->nseg++;
		seg->nents = ib_dma_map_sg(conn->bdev->ibdev, seg->sgt.sgl,
					   seg->sgt.orig_nents, op_dir(op));
		if (!seg->nents) {
			ret = -ENOMEM;
			goto err;
		}
		seg->mr = bx_mr_get(conn);
		if (!seg->mr) {
			ret = -EAGAIN;
			goto err;
		}
		atomic64_inc(&bx_mrs_inuse);
		ib_update_fast_reg_key(seg->mr, bx_mr_key(seg->mr->rkey));
		ret = ib_map_mr_sg(seg->mr, seg->sgt.sgl, seg->nents, NULL,
				   PAGE_SIZE);
		if (ret != seg->nents) {
			ret = ret < 0 ? ret : -EINVAL;
			goto err;
		}
		seg->mr->iova = bx_mr_iova(seg->mr->iova);
		*reg = (struct ib_reg_wr){
			.wr.opcode	= IB_WR_REG_MR,
			.wr.wr_cqe	= &reg_cqe,
			.mr		= seg->mr,
			.key		= seg->mr->rkey,
			.access		= access,
		};
		if (rd->nseg > 1)
			rd->reg[rd->nseg - 2].wr.next = &reg->wr;
		op->msg.rdv[rd->nseg - 1] = (struct bx_rdv){
			.addr	= seg->mr->iova,
			.rkey	= seg->mr->rkey,
			.len	= n,
		};
		done += n;
	}
	op->msg.nrdv = rd->nseg;
	return &rd->reg[rd->nseg - 1].wr;

err:
	segs_release(op);
	return ERR_PTR(ret);
}

/*
 * The connection of @op is fenced (its QP drained): its peer reaches
 * nothing any more. Release the segments, whatever state their MRs are
 * in, and complete; takes over the caller's reference.
 */
void bx_op_fenced(struct bx_op *op)
{
	segs_release(op);
	op_complete(op, op->result);
	bx_op_put(op);
}

/*
 * @op's MRs may still be valid and could not be invalidated: its peer
 * could still reach them. It completes only once the connection, which
 * this fails, is fenced. Takes over the caller's reference.
 */
static void op_fence(struct bx_op *op)
{
	if (bx_conn_fence(op->conn, op))
		bx_op_fenced(op);
}

static void inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bx_op *op = container_of(wc->wr_cqe, struct bx_op, cqe);
	u8 i;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("invalidation failed: %s\n",
					    ib_wc_status_msg(wc->status));
		op_fence(op);
		return;
	}
	for (i = 0; i < op->rdma->nseg; i++)
		op->rdma->seg[i].valid = false;
	segs_release(op);
	op_complete(op, op->result);
	bx_op_put(op);
}

/*
 * End an operation with @res: revoke the peer's access to every
 * registered segment first (LOCAL_INV on the registration QP), then
 * complete; on a fenced connection there is nothing left to revoke. The
 * caller keeps its reference.
 */
static void op_end(struct bx_op *op, int res)
{
	struct bx_rdma *rd = op->rdma;
	u8 i, n = 0;

	op->result = res;
	if (rd)
		for (i = 0; i < rd->nseg; i++)
			if (rd->seg[i].valid)
				rd->inv[n++] = (struct ib_send_wr){
					.opcode = IB_WR_LOCAL_INV,
					.wr_cqe = &reg_cqe,
					.ex.invalidate_rkey = rd->seg[i].mr->rkey,
				};
	if (!n || READ_ONCE(op->conn->fenced)) {
		if (op->conn)
			segs_release(op);
		op_complete(op, res);
		return;
	}
	for (i = 0; i + 1 < n; i++)
		rd->inv[i].next = &rd->inv[i + 1];
	op->cqe.done = inv_done;
	rd->inv[n - 1].wr_cqe = &op->cqe;
	rd->inv[n - 1].send_flags = IB_SEND_SIGNALED;
	kref_get(&op->ref);
	/* Not posted: the teardown drains (fenced), or the QP failed. */
	if (bx_reg_post(op->conn, &rd->inv[0]))
		op_fence(op);
}

/* The response arrived; takes over the caller's reference on @op. */
static void op_finish(struct bx_op *op)
{
	op_end(op, op->result);
	bx_op_put(op);
}

void bx_op_fail(struct bx_op *op, int err)
{
	op_end(op, err);
}

/*
 * @op's connection failed while it was queued, in flight or awaiting its
 * response: recover it if it may be (op_park()), else fail it with @err.
 */
void bx_op_lost(struct bx_op *op, int err)
{
	op->lost = true;
	op_end(op, err);
}

static void reg_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bx_op *op = container_of(wc->wr_cqe, struct bx_op, cqe);
	u8 i;

	if (wc->status != IB_WC_SUCCESS) {
		/*
		 * The registration QP is in the error state: the connection
		 * cannot go on. Nothing of the op reached the peer (its
		 * descriptors go out after this): it was never sent.
		 */
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("memory registration failed: %s\n",
					    ib_wc_status_msg(wc->status));
		bx_conn_fail(op->conn, -EIO);
		bx_op_lost(op, -ENOTCONN);
		bx_op_put(op);
		return;
	}
	for (i = 0; i < op->rdma->nseg; i++)
		op->rdma->seg[i].valid = true;
	op->registered = true;
	/* Admitted already: next in line for a send buffer. */
	bx_conn_ready(op->conn, op);
}

/*
 * Register the buffer of a rendezvous push or pull on the connection's
 * registration QP; the operation re-enters the send queue once that
 * completed, or waits for MRs if the connection has none left. Takes over
 * the caller's (queue) reference.
 */
void bx_op_register(struct bx_op *op)
{
	u32 rlen = op->kind == BX_K_PUSH ? op->len : op->resp_len;
	u64 roff = op->kind == BX_K_PUSH ? op->off : op->resp_off;
	struct ib_send_wr *last;
	int access, ret;

	if (!op->rdma)
		op->rdma = kzalloc(sizeof(*op->rdma), GFP_KERNEL);
	if (!op->rdma) {
		ret = -ENOMEM;
		goto err;
	}
	access = IB_ACCESS_LOCAL_WRITE | (op->kind == BX_K_PUSH ?
		 IB_ACCESS_REMOTE_READ : IB_ACCESS_REMOTE_WRITE);
	last = segs_register(op, roff, rlen, access);
	if (IS_ERR(last)) {
		ret = PTR_ERR(last);
		if (ret == -EAGAIN) {
			bx_conn_mr_wait(op->conn, op);
			return;
		}
		goto err;
	}
	op->cqe.done = reg_op_done;
	last->wr_cqe = &op->cqe;
	last->send_flags = IB_SEND_SIGNALED;
	ret = bx_reg_post(op->conn, &op->rdma->reg[0].wr);
	if (ret) {
		segs_release(op);
		goto err;
	}
	return;

err:
	op_complete(op, ret);
	bx_op_put(op);
}

/* ---- sending ------------------------------------------------------------ */

static int build_send(struct bx_op *op, struct bx_buf *slot,
		      struct ib_send_wr *first, struct ib_send_wr *last)
{
	struct bx_conn *conn = op->conn;
	struct ib_send_wr *send;
	size_t n;

	n = bx_wire_build(slot->data, BX_MSG_SIZE, &op->msg);
	if (!n || n > conn->peer_msg_size)
		return -EMSGSIZE;
	send = bx_conn_prep_send(conn, slot, n);
	if (first) {
		last->next = send;
		return bx_conn_post(conn, first);
	}
	return bx_conn_post(conn, send);
}

/* Give the op an id in conn->ops; that entry holds a reference. */
static int op_track(struct bx_op *op)
{
	u32 id;
	int ret;

	kref_get(&op->ref);
	ret = xa_alloc_cyclic(&op->conn->ops, &id, op, xa_limit_32b,
			      &op->conn->seq_alloc, GFP_KERNEL);
	if (ret < 0) {
		bx_op_put(op);
		return ret;
	}
	op->req_id = id;
	op->msg.req_id = id;
	return 0;
}

/*
 * Take @op out of @conn's ops if entry @id (not 0) still holds it. @conn
 * is the connection the request was sent on, not op->conn: by the time a
 * late SEND completion comes, the op may have been parked (op->conn NULL)
 * or sent again on another connection, where @id means something else.
 */
static bool op_untrack(struct bx_op *op, struct bx_conn *conn, u32 id)
{
	if (xa_cmpxchg(&conn->ops, id, op, NULL, GFP_KERNEL) != op)
		return false;
	bx_op_put(op);
	return true;
}

static int transmit_request(struct bx_op *op, struct bx_buf *slot)
{
	struct bx_region *r = op->file->region;
	bool rdv = op->needs_reg;
	int ret;

	op->msg.service = op->service;
	if (op->kind == BX_K_PUSH) {
		op->msg.type = rdv ? BX_MSG_PUSH_RDV : BX_MSG_PUSH;
		op->msg.len = op->len;
		bx_push_number(op->conn, op);
	} else {
		op->msg.type = BX_MSG_PULL_REQ;
		op->msg.len = op->len;
		if (!rdv) {
			/* An eager sink grants nothing: capacity only. */
			op->msg.nrdv = 1;
			op->msg.rdv[0] = (struct bx_rdv){ .len = op->resp_len };
		}
	}
	if (!rdv || op->kind == BX_K_PULL)
		op->msg.payload = op->len ? bx_region_ptr(r, op->off) : NULL;

	/* The registration (bx_op_register()) filled msg.rdv already. */
	if (rdv && !op->registered)
		return -EINVAL;
	ret = op_track(op);
	if (ret)
		return ret;
	/* Before the post: its completion may run before we return. */
	slot->req_id = op->req_id;
	if (op->msg.payload)
		atomic64_add(op->len, &bx_copied_bytes);
	/* On failure bx_op_sent() takes @op out of conn->ops again. */
	return build_send(op, slot, NULL, NULL);
}

static void rw_release(struct bx_op *op, enum dma_data_direction dir)
{
	struct bx_rdma *rd = op->rdma;
	u8 i;

	if (!rd)
		return;
	for (i = 0; i < rd->nseg; i++) {
		struct bx_seg *seg = &rd->seg[i];

		if (seg->nents)
			rdma_rw_ctx_destroy(&rd->rw[i], op->conn->qp,
					    op->conn->cm_id->port_num,
					    seg->sgt.sgl, seg->sgt.orig_nents,
					    dir);
		seg->nents = 0;
		sg_free_table(&seg->sgt);
	}
	rd->nseg = 0;
}

/*
 * Set up RDMA READs or WRITEs for bytes [@from, @from + @len) of @op's
 * rendezvous transfer: the file's region from op->off + @from, the peer's
 * segments rd->rdv from byte @from of their concatenation, at most
 * @maxseg of them. Returns the first WR of the chain, whose last WR is
 * linked to @next (or signals op->cqe if NULL), and in *@setlen (unless
 * NULL) the bytes it moves.
 */
static struct ib_send_wr *rw_setup(struct bx_op *op, u32 from, u32 len,
				   u8 maxseg, enum dma_data_direction dir,
				   struct ib_send_wr *next, u32 *setlen)
{
	struct bx_conn *conn = op->conn;
	struct bx_rdma *rd = op->rdma;
	struct ib_send_wr *chain = next;
	u32 done = 0, in, n;
	int ret, i;
	u8 d;

	while (done < len && rd->nseg < maxseg) {
		struct bx_seg *seg = &rd->seg[rd->nseg];
		u64 at = (u64)from + done;

		n = bx_rdv_piece(rd->rdv, rd->nrdv, at, len - done, &d, &in);
		if (!n)
			break;
		ret = bx_region_sg(op->file->region, op->off + at, n,
				   &seg->sgt);
		if (ret)
			goto err;
		ret = rdma_rw_ctx_init(&rd->rw[rd->nseg], conn->qp,
				       conn->cm_id->port_num, seg->sgt.sgl,
				       seg->sgt.orig_nents, 0,
				       rd->rdv[d].addr + in, rd->rdv[d].rkey,
				       dir);
		if (ret < 0) {
			sg_free_table(&seg->sgt);
			goto err;
		}
		seg->nents = ret;
		rd->nseg++;
		done += n;
	}
	/* Nothing to post cannot happen: lengths were checked at parse. */
	if (!rd->nseg)
		return ERR_PTR(-EINVAL);
	for (i = rd->nseg - 1; i >= 0; i--)
		chain = rdma_rw_ctx_wrs(&rd->rw[i], conn->qp,
					conn->cm_id->port_num,
					chain ? NULL : &op->cqe, chain);
	if (setlen)
		*setlen = done;
	return chain;

err:
	rw_release(op, dir);
	return ERR_PTR(ret);
}

static void read_end(struct bx_op *op, bool ok);
static void write_piece_done(struct ib_cq *cq, struct ib_wc *wc);

/*
 * REPLY @op failed before its PULL_WRITTEN went out (@err): complete it,
 * and tell the requester, whose PULL would otherwise wait for it forever
 * (with the connection down, the NACK goes nowhere and recovery decides).
 */
static void reply_fail(struct bx_op *op, int err)
{
	send_ctl(op->conn, BX_MSG_NACK, op->msg.req_id, BX_ST_REMOTE_IO);
	op_complete(op, err);
}

/*
 * @op, taken off a queue of its connection (its reference passes here),
 * passed its deadline or lost its file before it went out: end it. A
 * push or pull never sent, or answered BUSY, certainly did not reach the
 * peer's application; a numbered push the peer could not decide on yet
 * (AGAIN) may have: ECONNRESET. A reply tells its requester.
 */
void bx_op_expire(struct bx_op *op)
{
	int err = bx_op_expiry_errno(op);

	if (op->kind == BX_K_REPLY) {
		send_ctl(op->conn, BX_MSG_NACK, op->msg.req_id,
			 BX_ST_CANCELED);
		op_complete(op, err);
	} else {
		if (op->kind == BX_K_PUSH && op->seq)
			err = -ECONNRESET;
		bx_op_fail(op, err);
	}
	bx_op_put(op);
}

/* REPLY @op goes inline (copied): small, or a sink without keys. */
static bool reply_inline(const struct bx_op *op)
{
	return (op->len <= READ_ONCE(bx_rdv_threshold) &&
		op->len <= BX_EAGER_MAX) || !op->rdma->rdv[0].rkey;
}

/*
 * Is rendezvous @op (a REPLY that WRITEs, or a SRV_READ) cut into pieces,
 * and of what size (@piece)? Decided when it is admitted, so that a
 * SRV_READ is charged the piece it then posts: transfers longer than
 * piece_kb are cut.
 */
bool bx_op_cut(struct bx_op *op)
{
	u32 piece = READ_ONCE(bx_piece_kb) << 10;

	op->cut = false;
	op->piece = op->len;
	if (!op->rdma || (op->kind == BX_K_REPLY && reply_inline(op)))
		return false;
	if (piece && op->len > piece) {
		op->cut = true;
		op->piece = piece;
	}
	return op->cut;
}

/*
 * Post the next piece of cut @op: RDMA WRITEs of a REPLY or READs of a
 * SRV_READ, up to piece_kb and never across two of the peer's segments,
 * signalled to op->cqe. Takes over the caller's (queue) reference; on
 * failure ends the op.
 */
void bx_op_piece(struct bx_op *op)
{
	bool rd = op->kind == BX_K_SRV_READ;
	enum dma_data_direction dir = rd ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	struct ib_send_wr *first;
	int ret;

	if (!rd)
		op->cqe.done = write_piece_done;
	first = rw_setup(op, op->rw_off,
			 min(op->piece, op->len - op->rw_off), 1, dir, NULL,
			 &op->rw_len);
	ret = IS_ERR(first) ? PTR_ERR(first) : bx_conn_post(op->conn, first);
	if (!ret) {
		atomic64_inc(&bx_pieces);
		return;
	}
	if (!IS_ERR(first))
		rw_release(op, dir);
	if (rd) {
		read_end(op, false);
		return;
	}
	bx_conn_piece_end(op->conn);
	reply_fail(op, ret);
	bx_op_put(op);
}

/* A piece of cut REPLY @op was written (or not); takes its reference. */
static void write_piece_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bx_op *op = container_of(wc->wr_cqe, struct bx_op, cqe);
	struct bx_conn *conn = op->conn;

	rw_release(op, DMA_TO_DEVICE);
	bx_conn_piece_end(conn);
	if (wc->status != IB_WC_SUCCESS) {
		bool flush = wc->status == IB_WC_WR_FLUSH_ERR;

		if (!flush) {
			pr_warn_ratelimited("RDMA WRITE to %pISc failed: %s\n",
					    &conn->peer->addr,
					    ib_wc_status_msg(wc->status));
			bx_conn_fail(conn, -EIO);
		}
		op_complete(op, flush ? -ECONNRESET : -EIO);
		bx_op_put(op);
		return;
	}
	op->rw_off += op->rw_len;
	/* All written: the PULL_WRITTEN SEND is all that is left. */
	if (op->rw_off >= op->len)
		bx_conn_ready(conn, op);
	else
		bx_conn_pieceq(conn, op);
}

static int transmit_reply(struct bx_op *op, struct bx_buf *slot)
{
	struct bx_region *r = op->file->region;
	struct ib_send_wr *first, *last;

	/* Small, or a sink without keys: inline (never once cut). */
	if (!op->cut && reply_inline(op)) {
		op->msg.type = BX_MSG_PULL_RESP;
		op->msg.len = op->len;
		op->msg.payload = op->len ? bx_region_ptr(r, op->off) : NULL;
		atomic64_add(op->len, &bx_copied_bytes);
		return build_send(op, slot, NULL, NULL);
	}
	op->msg.type = BX_MSG_PULL_WRITTEN;
	op->msg.len = op->len;
	/* Cut: its pieces were written, one after another. */
	if (op->cut)
		return build_send(op, slot, NULL, NULL);
	/* RDMA WRITEs then the SEND: RC delivers them in this order. */
	first = rw_setup(op, 0, op->len, BX_WIRE_MAX_RDV, DMA_TO_DEVICE, NULL,
			 NULL);
	if (IS_ERR(first))
		return PTR_ERR(first);
	for (last = first; last->next; last = last->next)
		;
	/* rw_setup() signalled the last WRITE; the SEND completes the op. */
	last->send_flags &= ~IB_SEND_SIGNALED;
	last->wr_cqe = NULL;
	return build_send(op, slot, first, last);
}

/* What @op counts in a window: the payload bytes it moves either way. */
u32 bx_op_cost(const struct bx_op *op)
{
	return op->kind == BX_K_PULL ? op->len + op->resp_len : op->len;
}

/* Send @op in @slot; the connection set msg.credits and msg.seq. */
int bx_op_transmit(struct bx_op *op, struct bx_buf *slot)
{
	switch (op->kind) {
	case BX_K_PUSH:
	case BX_K_PULL:
		return transmit_request(op, slot);
	case BX_K_REPLY:
		return transmit_reply(op, slot);
	default:
		return build_send(op, slot, NULL, NULL);
	}
}

/*
 * The SEND of @op on @conn completed (or was never posted): drop its
 * reference. A request tracked as @req_id when posted (0: never tracked)
 * whose SEND failed ends here, unless its response came first: RC may
 * complete the SEND after the response (its ACK lost or late), and then
 * the response already took the entry and decided (ended the op, or
 * queued it again under a new id).
 */
void bx_op_sent(struct bx_op *op, struct bx_conn *conn, u32 req_id, int err)
{
	switch (op->kind) {
	case BX_K_PUSH:
	case BX_K_PULL:
		if (err && (!req_id || op_untrack(op, conn, req_id))) {
			/* Flushed, failed on the wire, or never posted. */
			if (err == -ECONNRESET || err == -EIO)
				bx_op_lost(op, err);
			else
				bx_op_fail(op, err);
		}
		break;
	case BX_K_REPLY:
		rw_release(op, DMA_TO_DEVICE);
		/* Not posted, and the connection stays up (kick_send()). */
		if (err && !bx_send_err_fatal(err))
			reply_fail(op, err);
		else
			op_complete(op, err ? err : op->len);
		break;
	default:
		break;
	}
	bx_op_put(op);
}

/* ---- services and receiving --------------------------------------------- */

/*
 * Own @service on this host. Numbers below BX_SERVICE_PRIV are for
 * processes with CAP_NET_BIND_SERVICE, as TCP's ports below 1024 are: an
 * unprivileged process cannot take a system parameter server's number
 * before it starts.
 */
int bx_service_bind(struct bx_file *f, u32 service)
{
	struct bx_service *svc;
	int ret;

	if (!service)
		return -EINVAL;
	if (service < BX_SERVICE_PRIV && !capable(CAP_NET_BIND_SERVICE))
		return -EACCES;
	if (!bx_user_charge(&f->user->services,
			    READ_ONCE(bx_user_services_max)))
		return -ENOSPC;
	svc = kzalloc(sizeof(*svc), GFP_KERNEL_ACCOUNT);
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

int bx_service_unbind(struct bx_file *f, u32 service)
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

/*
 * Take a posted RECV buffer of at least @need bytes from @service. Returns
 * its file with a reference, or NULL with the wire status in @st.
 */
static struct bx_file *take_recv(struct bx_conn *conn, u32 service, u32 need,
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
 * Whether to deliver the numbered push @msg (replay.h): if not, answer it
 * here -- delivered already, or later with the same number.
 */
static bool push_admit(struct bx_conn *conn, const struct bx_msg *msg)
{
	if (!msg->seq)
		return true;
	switch (bx_replay_check(conn, msg)) {
	case BX_RP_NEW:
		return true;
	case BX_RP_DUP:
		send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id, BX_ST_OK);
		return false;
	case BX_RP_BUSY:
		send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id, BX_ST_AGAIN);
		return false;
	default:
		bx_conn_violation(conn, "a push below its own floor");
		return false;
	}
}

static void recv_push(struct bx_conn *conn, struct bx_msg *msg)
{
	struct bx_recv *rv;
	struct bx_file *f;
	u8 st;

	if (!push_admit(conn, msg))
		return;
	f = take_recv(conn, msg->service, msg->len, &rv, &st);
	if (f) {
		struct bx_cqe cqe = {
			.user_data	= rv->user_data,
			.res		= msg->len,
			.flags		= BX_CQE_F_PUSH | BX_CQE_F_COPIED,
			.off		= rv->off,
			.service	= msg->service,
			.peer		= conn->peer->id,
		};

		memcpy(bx_region_ptr(f->region, rv->off), msg->payload,
		       msg->len);
		atomic64_add(msg->len, &bx_copied_bytes);
		atomic64_add(msg->len, &f->bytes_rx);
		bx_file_complete(f, &cqe);
		bx_file_put(f);
		kfree(rv);
		st = BX_ST_OK;
	}
	if (msg->seq)
		bx_replay_done(conn, conn->peer_epoch, msg->seq,
			       st == BX_ST_OK);
	send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id, st);
}

/*
 * The READ of rendezvous push @op (SRV_READ) ended, @res its length or
 * why it failed: complete the RECV, then tell the sender with @st; the
 * op becomes that PUSH_DONE message, with its reference.
 */
static void read_end_st(struct bx_op *op, int res, u8 st)
{
	op_complete(op, res);
	if (op->seq)
		bx_replay_done(op->conn, op->epoch, op->seq, st == BX_ST_OK);
	op->seq = 0;
	op->kind = BX_K_CTL;
	memset(&op->msg, 0, sizeof(op->msg));
	op->msg.type = BX_MSG_PUSH_DONE;
	op->msg.req_id = op->req_id;
	op->msg.status = st;
	bx_conn_queue(op->conn, op);
}

static void read_end(struct bx_op *op, bool ok)
{
	read_end_st(op, ok ? op->len : -EREMOTEIO,
		    ok ? BX_ST_OK : BX_ST_REMOTE_IO);
}

/*
 * SRV_READ @op could not even be queued for its READ (no memory): the
 * receive fails, the sender learns the push was not delivered. Takes
 * over the caller's reference, as bx_conn_queue() does.
 */
void bx_op_read_abort(struct bx_op *op, int err)
{
	read_end_st(op, err, BX_ST_NOBUFS);
}

static void read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bx_op *op = container_of(wc->wr_cqe, struct bx_op, cqe);
	bool ok = wc->status == IB_WC_SUCCESS;

	if (!ok && wc->status != IB_WC_WR_FLUSH_ERR) {
		pr_warn_ratelimited("RDMA READ from %pISc failed: %s\n",
				    &op->conn->peer->addr,
				    ib_wc_status_msg(wc->status));
		/* Our QP is in the error state: the connection ends. */
		bx_conn_fail(op->conn, -EIO);
	}
	rw_release(op, DMA_FROM_DEVICE);
	if (ok && op->cut) {
		op->rw_off += op->rw_len;
		if (op->rw_off < op->len) {
			bx_conn_pieceq(op->conn, op);
			return;
		}
	}
	read_end(op, ok);
}

static void recv_push_rdv(struct bx_conn *conn, struct bx_msg *msg)
{
	struct bx_recv *rv;
	struct bx_file *f;
	struct bx_op *op;
	u8 st;

	if (!push_admit(conn, msg))
		return;
	f = take_recv(conn, msg->service, msg->len, &rv, &st);
	if (!f) {
		if (msg->seq)
			bx_replay_done(conn, conn->peer_epoch, msg->seq, false);
		send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id, st);
		return;
	}
	op = op_alloc(BX_K_SRV_READ, GFP_KERNEL);
	if (op)
		op->rdma = kzalloc(sizeof(*op->rdma), GFP_KERNEL);
	if (!op || !op->rdma) {
		struct bx_cqe cqe = { .user_data = rv->user_data,
				      .res = -ENOMEM };

		bx_file_complete(f, &cqe);
		bx_file_put(f);
		kfree(rv);
		if (op)
			bx_op_put(op);
		if (msg->seq)
			bx_replay_done(conn, conn->peer_epoch, msg->seq, false);
		send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id, BX_ST_NOBUFS);
		return;
	}
	op->file = f;
	bx_conn_get(conn);
	op->conn = conn;
	op->user_data = rv->user_data;
	op->off = rv->off;
	op->len = msg->len;
	op->service = msg->service;
	op->peer_id = conn->peer->id;
	op->req_id = msg->req_id;
	op->seq = msg->seq;
	op->epoch = conn->peer_epoch;
	op->cqe.done = read_done;
	kfree(rv);
	memcpy(op->rdma->rdv, msg->rdv, sizeof(msg->rdv[0]) * msg->nrdv);
	op->rdma->nrdv = msg->nrdv;
	/* Receiver admission decides when to READ; the queue takes our ref. */
	bx_conn_queue(conn, op);
}

/* Issue the RDMA READs of an admitted SRV_READ (flow_admit() cut it or
 * not); takes over the caller's (queue) reference.
 */
void bx_op_read(struct bx_op *op)
{
	struct ib_send_wr *first;

	if (op->cut) {
		bx_op_piece(op);
		return;
	}
	first = rw_setup(op, 0, op->len, BX_WIRE_MAX_RDV, DMA_FROM_DEVICE,
			 NULL, NULL);
	if (IS_ERR(first) || bx_conn_post(op->conn, first)) {
		if (!IS_ERR(first))
			rw_release(op, DMA_FROM_DEVICE);
		read_end(op, false);
	}
}

static void recv_pull_req(struct bx_conn *conn, struct bx_msg *msg)
{
	struct bx_cqe cqe = {};
	struct bx_recv *rv;
	struct bx_req *req;
	struct bx_file *f;
	u32 token;
	u8 st;
	int ret;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req) {
		send_ctl(conn, BX_MSG_NACK, msg->req_id, BX_ST_NOBUFS);
		return;
	}
	f = take_recv(conn, msg->service, msg->len, &rv, &st);
	if (!f) {
		kfree(req);
		send_ctl(conn, BX_MSG_NACK, msg->req_id, st);
		return;
	}
	bx_conn_get(conn);
	req->conn = conn;
	req->req_id = msg->req_id;
	req->peer_id = conn->peer->id;
	req->nrdv = msg->nrdv;
	req->capacity = msg->rdv[0].rkey ? msg->rdv_total : msg->rdv[0].len;
	memcpy(req->rdv, msg->rdv, sizeof(msg->rdv[0]) * msg->nrdv);
	if (msg->len) {
		memcpy(bx_region_ptr(f->region, rv->off), msg->payload,
		       msg->len);
		atomic64_add(msg->len, &bx_copied_bytes);
	}

	/* A released file must not gain requests nobody will answer. */
	spin_lock(&f->lock);
	ret = f->dead ? -ESHUTDOWN :
	      xa_alloc_cyclic(&f->reqs, &token, req, xa_limit_31b,
			      &f->next_token, GFP_ATOMIC);
	spin_unlock(&f->lock);
	/* 1: the tokens wrapped round, which is fine. */
	if (ret < 0) {
		bx_conn_put(conn);
		kfree(req);
		cqe.user_data = rv->user_data;
		cqe.res = -ENOMEM;
		bx_file_complete(f, &cqe);
		send_ctl(conn, BX_MSG_NACK, msg->req_id, BX_ST_CANCELED);
	} else {
		cqe.user_data = rv->user_data;
		cqe.res = msg->len;
		cqe.flags = BX_CQE_F_REQUEST | BX_CQE_F_COPIED;
		cqe.off = rv->off;
		cqe.token = token;
		cqe.service = msg->service;
		cqe.peer = conn->peer->id;
		cqe.resp_max = req->capacity;
		atomic64_add(msg->len, &f->bytes_rx);
		bx_file_complete(f, &cqe);
	}
	bx_file_put(f);
	kfree(rv);
}

/* A response to one of our operations. */
static void recv_response(struct bx_conn *conn, struct bx_msg *msg)
{
	struct bx_op *op = NULL;
	int res;

	if (msg->req_id && msg->req_id <= U32_MAX)
		op = xa_erase(&conn->ops, msg->req_id);
	/* Unknown id, or a response that does not fit the request. */
	if (!op ||
	    (msg->type == BX_MSG_PUSH_DONE && op->kind != BX_K_PUSH) ||
	    ((msg->type == BX_MSG_PULL_RESP ||
	      msg->type == BX_MSG_PULL_WRITTEN) && op->kind != BX_K_PULL) ||
	    (msg->type == BX_MSG_PULL_WRITTEN &&
	     (msg->len > op->resp_len || !op->rdma || !op->rdma->nseg))) {
		bx_conn_violation(conn, "a response to no request of ours");
		if (op) {
			bx_op_fail(op, -EPROTO);
			bx_op_put(op);
		}
		return;
	}
	if ((msg->status == BX_ST_BUSY || msg->status == BX_ST_AGAIN) &&
	    msg->type != BX_MSG_PULL_WRITTEN && msg->type != BX_MSG_PULL_RESP) {
		/*
		 * No buffer at the receiver yet (not delivered: the next try
		 * gets a new number), or a push it cannot decide on now (the
		 * same number): again later; keeps the ref.
		 */
		if (msg->status == BX_ST_BUSY && op->kind == BX_K_PUSH)
			bx_push_resolved(op);
		bx_conn_retry(conn, op);
		return;
	}
	res = status_errno[msg->status];
	if (!res) {
		switch (msg->type) {
		case BX_MSG_PUSH_DONE:
			res = op->len;
			break;
		case BX_MSG_PULL_RESP:
			if (msg->len > op->resp_len) {
				res = -EMSGSIZE;
				break;
			}
			if (msg->len)
				memcpy(bx_region_ptr(op->file->region,
						     op->resp_off),
				       msg->payload, msg->len);
			atomic64_add(msg->len, &bx_copied_bytes);
			res = msg->len;
			break;
		case BX_MSG_PULL_WRITTEN:
			res = msg->len;
			break;
		}
	}
	op->result = res;
	op_finish(op);
}

/* A message arrived on @conn; @msg is valid until this returns. */
void bx_op_recv(struct bx_conn *conn, struct bx_msg *msg)
{
	switch (msg->type) {
	case BX_MSG_PUSH:
		recv_push(conn, msg);
		break;
	case BX_MSG_PUSH_RDV:
		recv_push_rdv(conn, msg);
		break;
	case BX_MSG_PULL_REQ:
		recv_pull_req(conn, msg);
		break;
	default:
		recv_response(conn, msg);
		break;
	}
}

/* ---- submission ------------------------------------------------------------ */

static int submit_recv(struct bx_file *f, const struct bx_sqe *sqe)
{
	struct bx_service *svc;
	struct bx_recv *rv;
	int ret = 0;

	rv = kzalloc(sizeof(*rv), GFP_KERNEL_ACCOUNT);
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

/* The deadline of @sqe's operation in jiffies (never 0), or 0: none. */
static unsigned long op_deadline(const struct bx_sqe *sqe)
{
	unsigned int ms = sqe->timeout_ms ?: READ_ONCE(bx_op_timeout_ms);

	if (!ms)
		return 0;
	return (jiffies + msecs_to_jiffies(ms)) ?: 1;
}

static int submit_reply(struct bx_file *f, const struct bx_sqe *sqe)
{
	struct bx_req *req;
	struct bx_op *op;
	int ret = 0;

	if (sqe->token > U32_MAX)
		return -ENOENT;
	op = op_alloc(BX_K_REPLY, GFP_KERNEL_ACCOUNT);
	if (!op)
		return -ENOMEM;
	op->rdma = kzalloc(sizeof(*op->rdma), GFP_KERNEL_ACCOUNT);
	if (!op->rdma) {
		bx_op_put(op);
		return -ENOMEM;
	}
	/*
	 * Look up, check and consume the token at once: a racing REPLY with
	 * the same token finds it gone (and never sees the request freed),
	 * and a new request given the token meanwhile stays.
	 */
	xa_lock(&f->reqs);
	req = xa_load(&f->reqs, sqe->token);
	if (!req)
		ret = -ENOENT;
	else if (sqe->len > req->capacity)
		ret = -EMSGSIZE;
	else
		__xa_erase(&f->reqs, sqe->token);
	xa_unlock(&f->reqs);
	if (ret) {
		bx_op_put(op);
		return ret;
	}
	bx_file_get(f);
	op->file = f;
	op->deadline = op_deadline(sqe);
	op->user_data = sqe->user_data;
	op->off = sqe->off;
	op->len = sqe->len;
	op->conn = req->conn;
	op->msg.req_id = req->req_id;
	op->rdma->nrdv = req->nrdv;
	memcpy(op->rdma->rdv, req->rdv, sizeof(req->rdv[0]) * req->nrdv);
	kfree(req);
	op->cqe.done = NULL;
	bx_conn_queue(op->conn, op);
	bx_conns_sweep(false);
	return 0;
}

static int check_sqe(struct bx_file *f, const struct bx_sqe *sqe)
{
	struct bx_region *r = f->region;

	if (sqe->flags || sqe->resv0 || sqe->resv2)
		return -EINVAL;
	switch (sqe->opcode) {
	case BX_OP_PUSH:
	case BX_OP_PULL:
		/* The peer itself is looked up by bx_op_submit(). */
		if (!sqe->service || sqe->token || !sqe->peer)
			return -EINVAL;
		if (sqe->len > BX_MSG_MAX)
			return -EMSGSIZE;
		if (!bx_region_valid(r, sqe->off, sqe->len))
			return -EINVAL;
		if (sqe->opcode == BX_OP_PUSH)
			return (sqe->resp_off || sqe->resp_len) ? -EINVAL : 0;
		/* A request travels inline; its response may be large. */
		if (sqe->len > BX_EAGER_MAX || sqe->resp_len > BX_MSG_MAX)
			return -EMSGSIZE;
		return bx_region_valid(r, sqe->resp_off, sqe->resp_len) ?
		       0 : -EINVAL;
	case BX_OP_RECV:
		if (sqe->peer || sqe->token || sqe->resp_off || sqe->resp_len ||
		    sqe->timeout_ms)
			return -EINVAL;
		if (sqe->len > BX_MSG_MAX)
			return -EMSGSIZE;
		return bx_region_valid(r, sqe->off, sqe->len) ? 0 : -EINVAL;
	case BX_OP_REPLY:
		if (sqe->peer || sqe->service || sqe->resp_off || sqe->resp_len)
			return -EINVAL;
		if (sqe->len > BX_MSG_MAX)
			return -EMSGSIZE;
		return bx_region_valid(r, sqe->off, sqe->len) ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

int bx_op_submit(struct bx_file *f, const struct bx_sqe *sqe)
{
	struct bx_peer *peer;
	struct bx_op *op;
	int ret;

	ret = check_sqe(f, sqe);
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
		ret = submit_recv(f, sqe);
		break;
	case BX_OP_REPLY:
		ret = submit_reply(f, sqe);
		break;
	default:
		peer = bx_peer_find(sqe->peer);
		/* A peer of the file's network namespace (net.c). */
		if (peer && !net_eq(bx_peer_net(peer), f->net)) {
			bx_peer_put(peer);
			peer = NULL;
		}
		if (!peer) {
			ret = -EINVAL;
			break;
		}
		op = op_alloc(sqe->opcode, GFP_KERNEL_ACCOUNT);
		if (!op) {
			bx_peer_put(peer);
			ret = -ENOMEM;
			break;
		}
		bx_file_get(f);
		op->file = f;
		op->deadline = op_deadline(sqe);
		op->user_data = sqe->user_data;
		op->off = sqe->off;
		op->len = sqe->len;
		op->service = sqe->service;
		op->peer = peer;
		op->resp_off = sqe->resp_off;
		op->resp_len = sqe->resp_len;
		op->needs_reg = (op->kind == BX_K_PUSH ? op->len :
				 op->resp_len) > READ_ONCE(bx_rdv_threshold);
		bx_conn_submit(peer, op);
		bx_conns_sweep(false);
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
 * dropped, requesters still waiting for a reply learn it will not come,
 * and what it queued on the connections is ended by the sweep at once
 * (-ECANCELED; bx_op_expired()). Operations on the wire finish with
 * their response, or at their deadline, and drop their references to the
 * file and its region.
 */
void bx_op_file_release(struct bx_file *f)
{
	struct bx_service *svc;
	struct bx_req *req;
	unsigned long token;

	spin_lock(&f->lock);
	f->dead = true;
	spin_unlock(&f->lock);

	mutex_lock(&bx_services_lock);
	while (!list_empty(&f->services)) {
		svc = list_first_entry(&f->services, struct bx_service, node);
		service_free(svc);
	}
	mutex_unlock(&bx_services_lock);

	xa_for_each(&f->reqs, token, req) {
		xa_erase(&f->reqs, token);
		send_ctl(req->conn, BX_MSG_NACK, req->req_id, BX_ST_CANCELED);
		bx_conn_put(req->conn);
		kfree(req);
	}
	/* What it queued goes now (bx_conn_sweep()). */
	bx_conns_sweep(true);
}
