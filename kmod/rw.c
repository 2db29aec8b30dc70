// SPDX-License-Identifier: GPL-2.0
/*
 * bx: rendezvous transfers, the server's side (the requester's is
 * xfer.c).
 *
 * A REPLY larger than the inline limit, to a sink with keys, is RDMA
 * WRITEs (rdma_rw) into the requester's segments followed by the
 * PULL_WRITTEN SEND; a SRV_READ (the server side of a rendezvous push) is
 * RDMA READs from the pusher's segments into a RECV buffer. Transfers
 * longer than piece_kb go in pieces, one admitted at a time
 * (bx_rw_plan_pieces(), send.c), so that small messages do not wait
 * behind a whole transfer.
 */

#include <linux/slab.h>
#include <rdma/rw.h>

#include "conn.h"
#include "file.h"
#include "op.h"
#include "params.h"
#include "rw.h"

atomic64_t bx_rw_pieces = ATOMIC64_INIT(0);

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
 * rendezvous transfer: its buffer (op->buf) from byte @from, the peer's
 * segments rd->rdv from byte @from of their concatenation, in at most
 * @maxseg rdma_rw contexts, each within one local piece and one remote
 * segment. Returns the first WR of the chain, whose last WR is linked to
 * @next (or signals op->cqe if NULL), and in *@setlen (unless NULL) the
 * bytes it moves: all @len, unless @setlen takes a part.
 */
static struct ib_send_wr *rw_setup(struct bx_op *op, u32 from, u32 len,
				   u8 maxseg, enum dma_data_direction dir,
				   struct ib_send_wr *next, u32 *setlen)
{
	struct bx_conn *conn = op->conn;
	struct bx_rdma *rd = op->rdma;
	struct ib_send_wr *chain = next;
	struct mem_cgroup *old;
	u32 done = 0, in, n;
	u64 loff;
	int ret, i;
	u8 d;

	while (done < len && rd->nseg < maxseg) {
		struct bx_seg *seg = &rd->seg[rd->nseg];
		u64 at = (u64)from + done;

		n = bx_wire_rdv_piece(rd->rdv, rd->nrdv, at, len - done, &d, &in);
		if (n)
			n = bx_span_run(&op->buf, at, n, &loff);
		if (!n)
			break;
		old = bx_memcg_file(op->file);
		ret = bx_region_sg(op->file->region, loff, n, &seg->sgt);
		bx_memcg_leave(old);
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
	/*
	 * Nothing to post, or a whole transfer that did not fit, cannot
	 * happen: lengths were checked at parse and submission.
	 */
	if (!rd->nseg || (!setlen && done < len)) {
		ret = -EINVAL;
		goto err;
	}
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

static void write_piece_done(struct ib_cq *cq, struct ib_wc *wc);

static enum dma_data_direction rw_dir(const struct bx_op *op)
{
	return op->kind == BX_K_SRV_READ ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
}

/* Release the rdma_rw contexts of @op's transfer (REPLY, SRV_READ). */
void bx_rw_release(struct bx_op *op)
{
	rw_release(op, rw_dir(op));
}

/*
 * The READ of rendezvous push @op (SRV_READ) ended: @ok, all of it was
 * read. Its RECV completes and its sender hears PUSH_DONE. Takes over the
 * caller's reference.
 */
static void read_end(struct bx_op *op, bool ok)
{
	bx_op_answer(op, ok ? BX_ST_OK : BX_ST_REMOTE_IO);
	bx_op_end(op, ok ? op->len : -EREMOTEIO);
	bx_op_put(op);
}

/* REPLY @op goes inline (copied): small, or a sink without keys. */
static bool reply_inline(const struct bx_op *op)
{
	return (op->len <= READ_ONCE(bx_rdv_threshold) &&
		op->len <= BX_EAGER_MAX) || !op->rdma->rdv[0].rkey;
}

/*
 * Decide whether admitted rendezvous @op (a REPLY that WRITEs, or a
 * SRV_READ) goes in pieces, and of what size: transfers longer than
 * piece_kb do. Sets op->cut and op->piece (its length if not cut), so
 * that a SRV_READ is charged the piece it then posts; returns op->cut.
 */
bool bx_rw_plan_pieces(struct bx_op *op)
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
void bx_rw_piece(struct bx_op *op)
{
	bool rd = op->kind == BX_K_SRV_READ;
	enum dma_data_direction dir = rw_dir(op);
	struct ib_send_wr *first;
	int ret;

	if (!rd)
		op->cqe.done = write_piece_done;
	first = rw_setup(op, op->rw_off,
			 min(op->piece, op->len - op->rw_off), 1, dir, NULL,
			 &op->rw_len);
	ret = IS_ERR(first) ? PTR_ERR(first) : bx_qp_post(op->conn, first);
	if (!ret) {
		atomic64_inc(&bx_rw_pieces);
		return;
	}
	if (!IS_ERR(first))
		rw_release(op, dir);
	if (rd) {
		read_end(op, false);
		return;
	}
	bx_send_piece_end(op->conn);
	bx_op_answer(op, BX_ST_REMOTE_IO);
	bx_op_end(op, ret);
	bx_op_put(op);
}

/* A piece of cut REPLY @op was written (or not); takes its reference. */
static void write_piece_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bx_op *op = container_of(wc->wr_cqe, struct bx_op, cqe);
	struct bx_conn *conn = op->conn;

	rw_release(op, DMA_TO_DEVICE);
	bx_send_piece_end(conn);
	if (wc->status != IB_WC_SUCCESS) {
		bool flush = wc->status == IB_WC_WR_FLUSH_ERR;

		if (!flush) {
			pr_warn_ratelimited("RDMA WRITE to %pISc failed: %s\n",
					    &conn->peer->addr,
					    ib_wc_status_msg(wc->status));
			bx_conn_fail(conn, -EIO);
		}
		bx_op_end(op, flush ? -ECONNRESET : -EIO);
		bx_op_put(op);
		return;
	}
	op->rw_off += op->rw_len;
	/* All written: the PULL_WRITTEN SEND is all that is left. */
	if (op->rw_off >= op->len)
		bx_send_ready(conn, op);
	else
		bx_send_pieceq(conn, op);
}

/* REPLY @op in @slot: inline, or its WRITEs (if not cut) then the SEND. */
int bx_rw_transmit_reply(struct bx_op *op, struct bx_buf *slot)
{
	struct ib_send_wr *first, *last;

	/* Small, or a sink without keys: inline (never once cut). */
	if (!op->cut && reply_inline(op)) {
		op->msg.type = BX_MSG_PULL_RESP;
		op->msg.len = op->len;
		/* bx_op_post_msg() gathers the buffer into the message. */
		return bx_op_post_msg(op, slot, NULL, NULL);
	}
	op->msg.type = BX_MSG_PULL_WRITTEN;
	op->msg.len = op->len;
	/* Cut: its pieces were written, one after another. */
	if (op->cut)
		return bx_op_post_msg(op, slot, NULL, NULL);
	/* RDMA WRITEs then the SEND: RC delivers them in this order. */
	first = rw_setup(op, 0, op->len, BX_RW_MAX, DMA_TO_DEVICE, NULL, NULL);
	if (IS_ERR(first))
		return PTR_ERR(first);
	for (last = first; last->next; last = last->next)
		;
	/* rw_setup() signalled the last WRITE; the SEND completes the op. */
	last->send_flags &= ~IB_SEND_SIGNALED;
	last->wr_cqe = NULL;
	return bx_op_post_msg(op, slot, first, last);
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
			bx_send_pieceq(op->conn, op);
			return;
		}
	}
	read_end(op, ok);
}

/*
 * Issue the RDMA READs of an admitted SRV_READ (bx_rw_plan_pieces() cut
 * it or not); takes over the caller's (queue) reference.
 */
void bx_rw_read(struct bx_op *op)
{
	struct ib_send_wr *first;

	op->cqe.done = read_done;
	if (op->cut) {
		bx_rw_piece(op);
		return;
	}
	first = rw_setup(op, 0, op->len, BX_RW_MAX, DMA_FROM_DEVICE, NULL,
			 NULL);
	if (IS_ERR(first) || bx_qp_post(op->conn, first)) {
		if (!IS_ERR(first))
			rw_release(op, DMA_FROM_DEVICE);
		read_end(op, false);
	}
}
