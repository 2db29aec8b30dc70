// SPDX-License-Identifier: GPL-2.0
/*
 * bx: rendezvous transfers, the requester's side (the server's is rw.c).
 *
 * A push's source or a pull's sink larger than rdv_threshold
 * is registered before the request goes out (bx_xfer_register()): mapped in
 * segments of at most BX_SEG_MAX bytes, each with an FRWR MR of the
 * connection's PD, a random key byte and a random iova (reg.c), posted on
 * the connection's registration QP; the request then carries the
 * segments' descriptors. When the op ends, its segments are invalidated
 * (LOCAL_INV) before it completes (bx_xfer_revoke()), so the peer reaches
 * the buffer only while the operation is in flight; a failed
 * invalidation waits for the connection's fence.
 */

#include <linux/slab.h>
#include <rdma/mr_pool.h>

#include "conn.h"
#include "file.h"
#include "op.h"
#include "params.h"
#include "reg.h"
#include "xfer.h"

atomic64_t bx_xfer_mrs_inuse = ATOMIC64_INIT(0);

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
		bx_reg_mr_put(op->conn, seg->mr);
		/* Who waits for an MR tries again. */
		bx_send_mr_freed(op->conn);
		atomic64_dec(&bx_xfer_mrs_inuse);
		seg->mr = NULL;
	}
	sg_free_table(&seg->sgt);
}

static enum dma_data_direction op_dir(struct bx_op *op)
{
	return op->kind == BX_K_PUSH ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
}

/* Unmap and give back @op's segments (PUSH, PULL). */
void bx_xfer_release(struct bx_op *op)
{
	u8 i;

	if (!op->rdma)
		return;
	for (i = 0; i < op->rdma->nseg; i++)
		seg_release(op, &op->rdma->seg[i], op_dir(op));
	op->rdma->nseg = 0;
}

/*
 * Map the op's buffer (op->buf) in segments of at most BX_SEG_MAX bytes,
 * none across two of its pieces, each with an MR of the connection's PD,
 * a fresh random key byte and a random iova (reg.c); fill msg->rdv and
 * chain the REG_MR WRs. Returns the last WR of the chain (its first is
 * &rdma->reg[0].wr), or an ERR_PTR: -EAGAIN when the connection has no MR
 * left.
 */
static struct ib_send_wr *segs_register(struct bx_op *op, int access)
{
	struct bx_conn *conn = op->conn;
	struct bx_region *r = op->file->region;
	struct bx_rdma *rd = op->rdma;
	u32 done = 0, n;
	u64 off;
	int ret;

	rd->nseg = 0;
	while ((n = bx_span_run(&op->buf, done, BX_SEG_MAX, &off))) {
		struct bx_seg *seg = &rd->seg[rd->nseg];
		struct ib_reg_wr *reg = &rd->reg[rd->nseg];

		/* Submission checked the count (submit.c). */
		if (rd->nseg == BX_WIRE_MAX_RDV) {
			ret = -EMSGSIZE;
			goto err;
		}
		seg->off = off;
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
		seg->mr = bx_reg_mr_get(conn);
		if (!seg->mr) {
			ret = -EAGAIN;
			goto err;
		}
		atomic64_inc(&bx_xfer_mrs_inuse);
		ib_update_fast_reg_key(seg->mr, bx_reg_mr_key(seg->mr->rkey));
		ret = ib_map_mr_sg(seg->mr, seg->sgt.sgl, seg->nents, NULL,
				   PAGE_SIZE);
		if (ret != seg->nents) {
			ret = ret < 0 ? ret : -EINVAL;
			goto err;
		}
		seg->mr->iova = bx_reg_mr_iova(seg->mr->iova);
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
	bx_xfer_release(op);
	return ERR_PTR(ret);
}

/*
 * @op's MRs may still be valid and could not be invalidated: its peer
 * could still reach them. It completes only once the connection, which
 * this fails, is fenced. Takes over the caller's reference.
 */
static void op_fence(struct bx_op *op)
{
	if (bx_conn_fence(op->conn, op))
		bx_op_revoked(op);
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
	bx_op_revoked(op);
}

/*
 * Revoke the peer's access to every registered segment of ending @op
 * (LOCAL_INV on the registration QP). Returns false if there is nothing
 * to revoke -- nothing valid, or the connection is fenced -- and the
 * caller goes on ending the op; true if bx_op_revoked() will, once the
 * invalidation completed or the connection is fenced (with a reference
 * of its own).
 */
bool bx_xfer_revoke(struct bx_op *op)
{
	struct bx_rdma *rd = op->rdma;
	u8 i, n = 0;

	if (rd)
		for (i = 0; i < rd->nseg; i++)
			if (rd->seg[i].valid)
				rd->inv[n++] = (struct ib_send_wr){
					.opcode = IB_WR_LOCAL_INV,
					.wr_cqe = &reg_cqe,
					.ex.invalidate_rkey = rd->seg[i].mr->rkey,
				};
	if (!n || READ_ONCE(op->conn->fenced))
		return false;
	for (i = 0; i + 1 < n; i++)
		rd->inv[i].next = &rd->inv[i + 1];
	op->cqe.done = inv_done;
	rd->inv[n - 1].wr_cqe = &op->cqe;
	rd->inv[n - 1].send_flags = IB_SEND_SIGNALED;
	kref_get(&op->ref);
	/* Not posted: the teardown drains (fenced), or the QP failed. */
	if (bx_reg_post(op->conn, &rd->inv[0]))
		op_fence(op);
	return true;
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
	bx_send_ready(op->conn, op);
}

/*
 * Register the buffer of a rendezvous push or pull on the connection's
 * registration QP; the operation re-enters the send queue once that
 * completed, or waits for MRs if the connection has none left. Takes over
 * the caller's (queue) reference.
 */
void bx_xfer_register(struct bx_op *op)
{
	struct ib_send_wr *last;
	struct mem_cgroup *old;
	int access, ret;

	/* Its RDMA state and scatter lists are its file's to pay for. */
	old = bx_memcg_file(op->file);
	if (!op->rdma)
		op->rdma = kzalloc(sizeof(*op->rdma), BX_GFP_CHARGED);
	if (!op->rdma) {
		bx_memcg_leave(old);
		ret = -ENOMEM;
		goto err;
	}
	access = IB_ACCESS_LOCAL_WRITE | (op->kind == BX_K_PUSH ?
		 IB_ACCESS_REMOTE_READ : IB_ACCESS_REMOTE_WRITE);
	last = segs_register(op, access);
	bx_memcg_leave(old);
	if (IS_ERR(last)) {
		ret = PTR_ERR(last);
		if (ret == -EAGAIN) {
			bx_send_mr_wait(op->conn, op);
			return;
		}
		goto err;
	}
	op->cqe.done = reg_op_done;
	last->wr_cqe = &op->cqe;
	last->send_flags = IB_SEND_SIGNALED;
	ret = bx_reg_post(op->conn, &op->rdma->reg[0].wr);
	if (ret) {
		bx_xfer_release(op);
		goto err;
	}
	return;

err:
	bx_op_end(op, ret);
	bx_op_put(op);
}
