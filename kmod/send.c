// SPDX-License-Identifier: GPL-2.0
/*
 * bx: what goes on a connection's wire next.
 *
 * Operations wait in per-process queues on their connection (deficit
 * round robin, flow.h), pass the connection's and the host's windows
 * (bx_window_admit(), window.c), and bx_send_kick() posts what the
 * windows, the peer's credits and the send buffers allow: control
 * messages first, then what was admitted, the next piece of a cut
 * transfer, the RDMA READs of rendezvous pushes (receiver admission),
 * and a bare credit update when one is owed. An operation that finds no
 * process queued and nothing admitted waiting is admitted at once
 * (send_direct()): the round robin would have served it alone.
 */

#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "conn.h"
#include "file.h"
#include "op.h"
#include "xfer.h"
#include "params.h"
#include "trace.h"

static struct bx_flowq *flowq_find(struct bx_conn *conn, struct bx_file *f,
				   bool rd)
{
	struct bx_flowq *fq;

	list_for_each_entry(fq, &conn->flows, node)
		if (fq->file == f && fq->rd == rd)
			return fq;
	return NULL;
}

/* @fq's last operation left it. */
static void flowq_put(struct bx_flowq *fq)
{
	if (!fq->drr.queued) {
		list_del(&fq->node);
		kfree(fq);
	}
}

/*
 * Where admitted @op waits for a credit and a send buffer: readyq, or
 * pieceq if it is a REPLY to be written in pieces; conn->lock held.
 */
static void send_admitted(struct bx_conn *conn, struct bx_op *op)
{
	if (op->kind == BX_K_REPLY && bx_qp_op_ops->plan_pieces(op))
		list_add_tail(&op->node, &conn->pieceq);
	else
		list_add_tail(&op->node, &conn->readyq);
}

/*
 * Admit @op at once, past the round robin, when no process waits in it
 * and nothing admitted waits for a credit: the round would serve @op
 * alone, first, with the same admission, and at most one admitted op
 * waits for credits either way. Not one that needs an MR first (the kick
 * registers those). False if @op must queue; conn->lock held.
 */
static bool send_direct(struct bx_conn *conn, struct bx_op *op)
{
	if (conn->state != BX_CONN_STATE_UP || !bx_flow_drr_empty(&conn->txq) ||
	    !list_empty(&conn->readyq) || (op->needs_reg && !op->registered))
		return false;
	op->qi.cost = bx_op_cost(op);
	if (bx_window_admit(conn, op, false) != BX_ADMIT_OK)
		return false;
	send_admitted(conn, op);
	return true;
}

/*
 * Queue @op (whose reference passes to the queue) and send what the
 * windows, credits and send buffers allow. Control messages go first;
 * everything else waits in its process's queue for admission.
 */
void bx_send_queue(struct bx_conn *conn, struct bx_op *op)
{
	bool rd = op->kind == BX_K_SRV_READ;
	struct bx_flowq *fq, *spare = NULL;
	struct mem_cgroup *old;
	int err;

	bx_op_move(op, BX_OP_QUEUED);
	spin_lock(&conn->lock);
	for (;;) {
		if (conn->state == BX_CONN_STATE_DOWN) {
			/* Never sent: safe to send again. */
			err = -ENOTCONN;
			goto fail;
		}
		if (op->kind == BX_K_CTL) {
			list_add_tail(&op->node, &conn->ctlq);
			break;
		}
		if (!rd && send_direct(conn, op))
			break;
		fq = flowq_find(conn, op->file, rd);
		if (!fq && spare) {
			fq = spare;
			spare = NULL;
			bx_flow_drr_flow_init(&fq->drr);
			fq->file = op->file;
			fq->rd = rd;
			list_add_tail(&fq->node, &conn->flows);
		}
		if (fq) {
			op->qi.cost = bx_op_cost(op);
			bx_flow_drr_enqueue(rd ? &conn->rdq : &conn->txq, &fq->drr,
					    &op->qi);
			if (rd)
				bx_window_rd_update(conn);
			break;
		}
		spin_unlock(&conn->lock);
		old = bx_memcg_file(op->file);
		spare = kzalloc(sizeof(*spare), BX_GFP_CHARGED);
		bx_memcg_leave(old);
		if (!spare) {
			/* A push's sender must hear of it. */
			if (rd)
				bx_op_answer(op, BX_ST_NOBUFS);
			bx_qp_op_ops->end(op, -ENOMEM);
			bx_qp_op_ops->put(op);
			return;
		}
		spin_lock(&conn->lock);
	}
	spin_unlock(&conn->lock);
	kfree(spare);
	bx_send_kick(conn);
	return;

fail:
	spin_unlock(&conn->lock);
	kfree(spare);
	bx_qp_op_ops->lost(op, err);
	bx_qp_op_ops->put(op);
}

/*
 * Put @op (with its reference) on @q of @conn, unless the connection is
 * down: then @op is lost. A request is recovered, or fails with ENOTCONN
 * (it was never delivered: never sent, or answered BUSY); a REPLY or READ
 * between two pieces fails, its peer's operation with the connection.
 * Returns whether it was queued.
 */
static bool conn_requeue(struct bx_conn *conn, struct list_head *q,
			 struct bx_op *op)
{
	spin_lock(&conn->lock);
	if (conn->state == BX_CONN_STATE_DOWN) {
		spin_unlock(&conn->lock);
		bx_qp_op_ops->lost(op, -ENOTCONN);
		bx_qp_op_ops->put(op);
		return false;
	}
	bx_op_move(op, BX_OP_QUEUED);
	list_add_tail(&op->node, q);
	spin_unlock(&conn->lock);
	return true;
}

/* @op was admitted and is registered: next in line for a send buffer. */
void bx_send_ready(struct bx_conn *conn, struct bx_op *op)
{
	if (conn_requeue(conn, &conn->readyq, op))
		bx_send_kick(conn);
}

/*
 * Admitted @op found no MR left on @conn (reg.c): it waits until one is
 * given back (bx_send_mr_freed()), keeping its window charge. If no
 * operation holds one (the pool could not grow for want of memory),
 * none will come back: it fails with -ENOMEM. Takes over the caller's
 * reference.
 */
void bx_send_mr_wait(struct bx_conn *conn, struct bx_op *op)
{
	bool idle;

	spin_lock(&conn->mr_lock);
	idle = !conn->mr_inuse;
	spin_unlock(&conn->mr_lock);
	if (idle) {
		bx_qp_op_ops->end(op, -ENOMEM);
		bx_qp_op_ops->put(op);
		return;
	}
	if (!conn_requeue(conn, &conn->mrwaitq, op))
		return;
	/* One given back before we were in line found nobody waiting. */
	spin_lock(&conn->mr_lock);
	idle = list_empty(&conn->mr_free);
	spin_unlock(&conn->mr_lock);
	if (!idle)
		bx_send_mr_freed(conn);
}

/* An MR of @conn was given back: those waiting for one try again. */
void bx_send_mr_freed(struct bx_conn *conn)
{
	bool kick;

	spin_lock(&conn->lock);
	kick = !list_empty(&conn->mrwaitq);
	list_splice_tail_init(&conn->mrwaitq, &conn->regq);
	spin_unlock(&conn->lock);
	if (kick)
		bx_send_kick(conn);
}

/* Cut @op finished a piece and has more: queue its next one. */
void bx_send_pieceq(struct bx_conn *conn, struct bx_op *op)
{
	if (conn_requeue(conn, &conn->pieceq, op))
		bx_send_kick(conn);
}

/*
 * A piece of a REPLY's RDMA WRITEs completed, or was never posted. The
 * caller requeues or completes its op, which kicks the connection.
 */
void bx_send_piece_end(struct bx_conn *conn)
{
	spin_lock(&conn->lock);
	conn->wpieces--;
	spin_unlock(&conn->lock);
}

/*
 * The receiver had no buffer posted for @op (or could not decide on a
 * push yet): send it again later, still registered. Backs off from 1 to
 * 64 jiffies. Meanwhile it is not in flight: it gives its window back
 * and queues for admission again in its process's turn
 * (bx_send_retry_work()), so that a process whose receiver never takes
 * its messages cannot keep the shared connection's window from the
 * others.
 */
void bx_send_retry(struct bx_conn *conn, struct bx_op *op)
{
	unsigned long delay = 1UL << min_t(u8, op->retries, 6);

	/* Not again past its deadline, or for a closed file. */
	if (bx_qp_op_ops->expired(op)) {
		bx_qp_op_ops->expire(op);
		return;
	}
	bx_window_release(op);

	if (op->retries < U8_MAX)
		op->retries++;
	if (!conn_requeue(conn, &conn->retryq, op))
		return;
	bx_window_host_busy_retry();
	spin_lock(&conn->lock);
	conn->busy_retries++;
	spin_unlock(&conn->lock);
	/* An earlier, shorter timer wins; the ops behind it wait a bit less. */
	queue_delayed_work(bx_conn_wq, &conn->retry_work, delay);
}

void bx_send_retry_work(struct work_struct *work)
{
	struct bx_conn *conn = container_of(to_delayed_work(work),
					    struct bx_conn, retry_work);
	struct bx_op *op, *tmp;
	LIST_HEAD(list);

	spin_lock(&conn->lock);
	list_splice_tail_init(&conn->retryq, &list);
	spin_unlock(&conn->lock);
	/* Back to admission, each with the retryq's reference. */
	list_for_each_entry_safe(op, tmp, &list, node) {
		list_del_init(&op->node);
		bx_send_queue(conn, op);
	}
}

enum kick_act {
	KICK_NONE,
	KICK_SEND,	/* *op in *slot */
	KICK_CREDIT,	/* a bare credit update in *slot */
	KICK_REG,	/* register *op (admitted) */
	KICK_READ,	/* issue *op's RDMA READs (admitted) */
	KICK_PIECE,	/* post the next piece of cut *op (admitted) */
};

/* Take a send buffer and the grant for a message. */
static struct bx_buf *kick_slot(struct bx_conn *conn, struct bx_msg *msg)
{
	msg->credits = bx_flow_credits_grant_take(&conn->cr);
	conn->tx_msgs++;
	return conn->tx_free[--conn->ntx_free];
}

/*
 * Admit the next operation of the send queues, or if it must wait, a
 * small one queued behind another (bx_window_admit_small()); conn->lock held.
 * An admitted op goes to readyq (or pieceq, a REPLY to be written in
 * pieces), unless it must be registered first: then it is returned in
 * *@reg. Returns false if nothing could be admitted.
 */
/* bx_flow_drr_find_if(): the first op another user's share lets go. */
static bool admit_send(struct bx_drr_item *it, void *conn)
{
	return bx_window_admit(conn, container_of(it, struct bx_op, qi),
			     false) == BX_ADMIT_OK;
}

static bool admit_read(struct bx_drr_item *it, void *conn)
{
	return bx_window_admit(conn, container_of(it, struct bx_op, qi),
			     true) == BX_ADMIT_OK;
}

static bool kick_admit_send(struct bx_conn *conn, struct bx_op **reg)
{
	struct bx_drr_flow *flow;
	struct bx_drr_item *it;
	struct bx_op *op;

	*reg = NULL;
	it = bx_flow_drr_peek(&conn->txq, &flow);
	if (!it)
		return false;
	op = container_of(it, struct bx_op, qi);
	switch (bx_window_admit(conn, op, false)) {
	case BX_ADMIT_OK:
		break;
	case BX_ADMIT_SHARE:
		/* Its user holds its share: the next flow whose may go. */
		it = bx_flow_drr_find_if(&conn->txq, admit_send, conn, &flow);
		if (!it)
			return false;
		op = container_of(it, struct bx_op, qi);
		break;
	case BX_ADMIT_WAIT:
		it = bx_flow_drr_find(&conn->txq, BX_SMALL_OP, &flow);
		if (!it)
			return false;
		op = container_of(it, struct bx_op, qi);
		if (!bx_window_admit_small(conn, op))
			return false;
		break;
	}
	bx_flow_drr_pop(&conn->txq, flow);
	flowq_put(container_of(flow, struct bx_flowq, drr));
	if (op->needs_reg && !op->registered)
		*reg = op;
	else
		send_admitted(conn, op);
	return true;
}

/*
 * The cut transfer whose next piece may be posted now (a REPLY's WRITEs
 * only while fewer than BX_WPIECES_MAX are in flight), taken off pieceq;
 * conn->lock held.
 */
static struct bx_op *kick_next_piece(struct bx_conn *conn)
{
	struct bx_op *op;

	list_for_each_entry(op, &conn->pieceq, node) {
		if (op->kind == BX_K_REPLY) {
			if (conn->wpieces >= BX_WPIECES_MAX)
				continue;
			conn->wpieces++;
		}
		list_del_init(&op->node);
		return op;
	}
	return NULL;
}

/*
 * The next rendezvous push whose RDMA READs receiver admission lets go,
 * taken off rdq; conn->lock held.
 */
static struct bx_op *kick_admit_read(struct bx_conn *conn)
{
	struct bx_drr_flow *flow;
	struct bx_drr_item *it;
	struct bx_op *op;

	it = bx_flow_drr_peek(&conn->rdq, &flow);
	if (!it)
		return NULL;
	op = container_of(it, struct bx_op, qi);
	switch (bx_window_admit(conn, op, true)) {
	case BX_ADMIT_OK:
		break;
	case BX_ADMIT_SHARE:
		it = bx_flow_drr_find_if(&conn->rdq, admit_read, conn, &flow);
		if (!it)
			return NULL;
		op = container_of(it, struct bx_op, qi);
		break;
	case BX_ADMIT_WAIT:
		return NULL;
	}
	bx_flow_drr_pop(&conn->rdq, flow);
	flowq_put(container_of(flow, struct bx_flowq, drr));
	return op;
}

/*
 * A bare credit update in *@slotp, if one is owed and nothing queued will
 * carry it, or as a keepalive; conn->lock held.
 */
static bool kick_credit_update(struct bx_conn *conn, struct bx_msg *credit,
			       struct bx_buf **slotp)
{
	bool queued = !list_empty(&conn->ctlq) || !list_empty(&conn->readyq);

	if (!conn->ntx_free ||
	    !(bx_flow_credits_update_due(&conn->cr, queued) || conn->ka_due))
		return false;
	conn->ka_due = false;
	if (!bx_flow_credits_take_update(&conn->cr)) {
		conn->cr.update_queued = false;
		return false;
	}
	memset(credit, 0, sizeof(*credit));
	credit->type = BX_MSG_CREDIT;
	*slotp = kick_slot(conn, credit);
	return true;
}

/*
 * Decide the next thing to do on @conn, in this order: an admitted op
 * that waited for an MR; control messages, then admitted ones (each
 * needs a send buffer and a credit), admitting more while none waits;
 * the next piece of a cut transfer; the READs of a rendezvous push; a
 * bare credit update. conn->lock held.
 */
static enum kick_act kick_next(struct bx_conn *conn, struct bx_op **opp,
			       struct bx_buf **slotp, struct bx_msg *credit)
{
	struct bx_op *op;

	if (conn->state != BX_CONN_STATE_UP)
		return KICK_NONE;
	bx_flow_credits_set_batch(&conn->cr, READ_ONCE(bx_credit_batch));
	conn->txq.quantum = READ_ONCE(bx_drr_quantum);
	conn->rdq.quantum = conn->txq.quantum;

	op = list_first_entry_or_null(&conn->regq, struct bx_op, node);
	if (op) {
		list_del_init(&op->node);
		*opp = op;
		return KICK_REG;
	}
	for (;;) {
		struct list_head *q = !list_empty(&conn->ctlq) ? &conn->ctlq :
				      !list_empty(&conn->readyq) ?
				      &conn->readyq : NULL;

		if (q && conn->ntx_free && bx_flow_credits_take(&conn->cr)) {
			op = list_first_entry(q, struct bx_op, node);
			list_del_init(&op->node);
			*opp = op;
			*slotp = kick_slot(conn, &op->msg);
			return KICK_SEND;
		}
		/* Waiting for a buffer or a credit: nothing else is sent. */
		if (q) {
			trace_bx_tx_stall(conn);
			break;
		}
		if (!kick_admit_send(conn, &op))
			break;
		if (op) {
			*opp = op;
			return KICK_REG;
		}
	}
	/* Pieces also go while messages wait for credits or buffers. */
	op = kick_next_piece(conn);
	if (op) {
		*opp = op;
		return KICK_PIECE;
	}
	op = kick_admit_read(conn);
	if (op) {
		*opp = op;
		return KICK_READ;
	}
	return kick_credit_update(conn, credit, slotp) ? KICK_CREDIT :
	       KICK_NONE;
}

static void kick_send(struct bx_conn *conn, struct bx_op *op,
		      struct bx_buf *slot)
{
	u16 grant = op->msg.credits;
	u32 req_id;
	int ret;

	/* The queue's reference on @op passes to the send. */
	slot->op = op;
	slot->req_id = 0;
	ret = bx_qp_op_ops->transmit(op, slot);
	if (!ret)
		return;
	req_id = slot->req_id;
	slot->op = NULL;
	spin_lock(&conn->lock);
	conn->tx_free[conn->ntx_free++] = slot;
	bx_flow_credits_untake(&conn->cr, grant);
	spin_unlock(&conn->lock);
	bx_qp_op_ops->sent(op, conn, req_id, ret);
	if (bx_send_err_fatal(ret))
		bx_conn_fail(conn, ret);
}

static void kick_credit(struct bx_conn *conn, struct bx_buf *slot,
			struct bx_msg *msg)
{
	size_t n = bx_wire_build(slot->data, BX_MSG_SIZE, msg);

	slot->op = NULL;
	if (!n || bx_qp_post(conn, bx_qp_prep_send(conn, slot, n))) {
		spin_lock(&conn->lock);
		conn->tx_free[conn->ntx_free++] = slot;
		spin_unlock(&conn->lock);
		bx_conn_fail(conn, -EIO);
	}
}

/*
 * Do what the queues, windows, credits and send buffers allow. One caller
 * at a time works on a connection; a concurrent caller leaves a note
 * (@kick_again) for it, so completions that kick from the middle of a
 * kick do not recurse.
 */
void bx_send_kick(struct bx_conn *conn)
{
	/* An action may drop the last reference its operation held. */
	bx_conn_get(conn);
	spin_lock(&conn->lock);
	if (conn->kicking) {
		conn->kick_again = true;
		spin_unlock(&conn->lock);
		bx_conn_put(conn);
		return;
	}
	conn->kicking = true;
	for (;;) {
		struct bx_op *op = NULL;
		struct bx_buf *slot = NULL;
		struct bx_msg credit;
		enum kick_act act;

		/* kick_next() sees all that a note could be about. */
		conn->kick_again = false;
		act = kick_next(conn, &op, &slot, &credit);
		if (act == KICK_NONE) {
			bool down = conn->state != BX_CONN_STATE_UP;

			conn->kicking = false;
			spin_unlock(&conn->lock);
			/* The teardown may wait for us (bx_send_kick_wait()). */
			if (down)
				wake_up_var(&conn->kicking);
			bx_conn_put(conn);
			return;
		}
		spin_unlock(&conn->lock);
		/* Taken off its queue to be posted. */
		if (act == KICK_SEND || act == KICK_READ || act == KICK_PIECE)
			bx_op_move(op, BX_OP_WIRE);
		switch (act) {
		case KICK_SEND:
			kick_send(conn, op, slot);
			break;
		case KICK_CREDIT:
			kick_credit(conn, slot, &credit);
			break;
		case KICK_REG:
			bx_qp_op_ops->reg(op);
			break;
		case KICK_READ:
			bx_qp_op_ops->read(op);
			break;
		case KICK_PIECE:
			bx_qp_op_ops->piece(op);
			break;
		default:
			break;
		}
		spin_lock(&conn->lock);
	}
}

/*
 * Wait until no bx_send_kick() runs on @conn, whose state is DOWN. A kick
 * that saw it UP may still be between kick_next() and its post, building
 * work requests on the QP (rdma_rw_ctx_init() in rw_setup()) or tracking
 * an operation in @ops; its post then fails, and seeing DOWN it decides
 * nothing more. The check under conn->lock pairs with the kick's clearing
 * of @kicking under it, so the wake-up cannot be missed.
 */
static bool conn_kick_idle(struct bx_conn *conn)
{
	bool idle;

	spin_lock(&conn->lock);
	idle = !conn->kicking;
	spin_unlock(&conn->lock);
	return idle;
}

void bx_send_kick_wait(struct bx_conn *conn)
{
	wait_var_event(&conn->kicking, conn_kick_idle(conn));
}

/* Move the operations of @q that bx_op_expired() to @done. */
static void sweep_list(struct list_head *q, struct list_head *done)
{
	struct bx_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, q, node)
		if (bx_qp_op_ops->expired(op))
			list_move_tail(&op->node, done);
}

/*
 * The same for the send queue of process @fq, in order: its items are
 * taken out and those that stay are queued again (which starts its
 * round anew: it loses at most a quantum).
 */
static void sweep_flow(struct bx_conn *conn, struct bx_flowq *fq,
		       struct list_head *done)
{
	struct bx_drr_item *it, *next;
	bool any = false;

	for (it = fq->drr.head; it && !any; it = it->next)
		any = bx_qp_op_ops->expired(container_of(it, struct bx_op, qi));
	if (!any)
		return;
	it = bx_flow_drr_drain(&conn->txq, &fq->drr);
	for (; it; it = next) {
		struct bx_op *op = container_of(it, struct bx_op, qi);

		next = it->next;
		if (bx_qp_op_ops->expired(op))
			list_add_tail(&op->node, done);
		else
			bx_flow_drr_enqueue(&conn->txq, &fq->drr, it);
	}
	flowq_put(fq);
}

/*
 * End the operations of @conn that passed their deadline or lost their
 * file (bx_op_expired()) before they went out: in a process's send queue,
 * admitted and waiting for a send buffer, an MR or a retry. Those on the
 * wire end with their response; one still awaiting it BX_ANSWER_GRACE_MS
 * past its deadline ends the connection (there is no way to tell the peer
 * to let go of its buffer; the other operations on it are recovered).
 * The grace lets a peer that answers (a busy bounce, a late response)
 * end an op sent shortly before its deadline without costing every user
 * of the shared connection a reconnect. Ops on the wire whose file closed
 * give their windows back (up to BX_CANCEL_BATCH a round, the rest at the
 * next). bx_conns_sweep() calls this every BX_SWEEP_MS while operations
 * are in flight, and at once when a file closes.
 */
#define BX_CANCEL_BATCH	32

void bx_send_sweep(struct bx_conn *conn)
{
	struct bx_op *op, *next, *cancel[BX_CANCEL_BATCH];
	unsigned int ncancel = 0, i;
	struct bx_flowq *fq, *tmp;
	unsigned long grace = msecs_to_jiffies(BX_ANSWER_GRACE_MS);
	bool overdue = false;
	unsigned long id;
	LIST_HEAD(done);

	spin_lock(&conn->lock);
	if (conn->state != BX_CONN_STATE_UP) {
		spin_unlock(&conn->lock);
		return;
	}
	sweep_list(&conn->readyq, &done);
	sweep_list(&conn->retryq, &done);
	sweep_list(&conn->mrwaitq, &done);
	sweep_list(&conn->regq, &done);
	list_for_each_entry_safe(fq, tmp, &conn->flows, node)
		if (!fq->rd)
			sweep_flow(conn, fq, &done);
	spin_unlock(&conn->lock);

	xa_lock(&conn->ops);
	xa_for_each(&conn->ops, id, op) {
		overdue |= op->deadline &&
			   time_after_eq(jiffies, op->deadline + grace);
		/* Its file closed: its windows go back (bx_window_cancel()). */
		if (op->file && READ_ONCE(op->file->dead) &&
		    READ_ONCE(op->charged) && ncancel < BX_CANCEL_BATCH) {
			kref_get(&op->ref);
			cancel[ncancel++] = op;
		}
	}
	xa_unlock(&conn->ops);
	for (i = 0; i < ncancel; i++) {
		bx_window_cancel(conn, cancel[i]);
		bx_qp_op_ops->put(cancel[i]);
	}
	if (overdue)
		bx_conn_fail(conn, -ETIMEDOUT);

	list_for_each_entry_safe(op, next, &done, node) {
		list_del_init(&op->node);
		bx_qp_op_ops->expire(op);
	}
	/* What waited behind them may go now. */
	bx_send_kick(conn);
}

/* Move every operation still queued on @conn to @list. */
void bx_send_flush_queues(struct bx_conn *conn, struct list_head *list)
{
	struct bx_flowq *fq, *tmp;
	struct bx_drr_item *it;

	spin_lock(&conn->lock);
	list_splice_tail_init(&conn->ctlq, list);
	list_splice_tail_init(&conn->readyq, list);
	list_splice_tail_init(&conn->retryq, list);
	list_splice_tail_init(&conn->pieceq, list);
	list_splice_tail_init(&conn->mrwaitq, list);
	list_splice_tail_init(&conn->regq, list);
	list_for_each_entry_safe(fq, tmp, &conn->flows, node) {
		it = bx_flow_drr_drain(fq->rd ? &conn->rdq : &conn->txq,
				       &fq->drr);
		while (it) {
			struct bx_op *op = container_of(it, struct bx_op, qi);

			it = it->next;
			list_add_tail(&op->node, list);
		}
		list_del(&fq->node);
		kfree(fq);
	}
	bx_window_rd_update(conn);
	spin_unlock(&conn->lock);

	bx_window_host_leave(conn);
}
