// SPDX-License-Identifier: GPL-2.0
/*
 * bx: what goes on a connection's wire next.
 *
 * Operations wait in per-process queues on their connection (deficit
 * round robin, flow.h), pass the connection's and the host's windows
 * (flow_admit()), and bx_conn_kick() posts what the windows, the peer's
 * credits and the send buffers allow: control messages first, then what
 * was admitted, the next piece of a cut transfer, the RDMA READs of
 * rendezvous pushes (receiver admission), and a bare credit update when
 * one is owed.
 */

#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "conn.h"
#include "file.h"
#include "op.h"
#include "xfer.h"
#include "params.h"
#include "trace.h"

/*
 * The host's windows, shared by every connection. Lock order: a
 * connection's lock, then bx_host.lock.
 */
static struct {
	spinlock_t		lock;	/* everything in bx_host */
	struct bx_win		tx;	/* requests and replies in flight */
	struct bx_win		rx;	/* rendezvous data we are READing */
	u32			rd_conns; /* connections with READs queued or in flight */
	/* connections a host window stopped, in line (flow_admit()) */
	struct list_head	waiters[BX_HOSTWND_N];
	/*
	 * Operations each host window admitted, and the most it admitted
	 * for others while one connection waited for it.
	 */
	u64			admits[BX_HOSTWND_N];
	u64			passed_max[BX_HOSTWND_N];
	u64			busy_retries;
	u64			small_passes;	/* flow_admit_small() */
} bx_host = {
	.lock		= __SPIN_LOCK_UNLOCKED(bx_host.lock),
	.waiters	= {
		LIST_HEAD_INIT(bx_host.waiters[BX_HOSTWND_TX]),
		LIST_HEAD_INIT(bx_host.waiters[BX_HOSTWND_RX]),
	},
};

atomic64_t bx_rnr_events = ATOMIC64_INIT(0);

static const struct bx_win_lim bx_unlimited = {
	.bytes = U64_MAX, .ops = U32_MAX, .reads = U32_MAX,
};

/* Limits of a connection's send window (@rd false) or READ window, and of
 * the host's matching window.
 */
static void flow_limits(bool rd, struct bx_win_lim *c, struct bx_win_lim *h)
{
	u32 n;

	if (!READ_ONCE(bx_flow_control)) {
		/* rd_max stays: it stands for what the device can take. */
		*c = bx_unlimited;
		*h = bx_unlimited;
		if (rd)
			c->reads = READ_ONCE(bx_rd_max);
		return;
	}
	if (!rd) {
		c->bytes = (u64)READ_ONCE(bx_wnd_kb) << 10;
		c->ops = READ_ONCE(bx_wnd_ops);
		c->reads = U32_MAX;
		h->bytes = (u64)READ_ONCE(bx_host_wnd_kb) << 10;
		h->ops = READ_ONCE(bx_host_wnd_ops);
		h->reads = U32_MAX;
		return;
	}
	/* Receiver admission: an equal share of rx_wnd per active peer. */
	h->bytes = (u64)READ_ONCE(bx_rx_wnd_kb) << 10;
	h->ops = U32_MAX;
	h->reads = U32_MAX;
	n = max_t(u32, READ_ONCE(bx_host.rd_conns), 1);
	c->bytes = h->bytes / n;
	c->ops = U32_MAX;
	c->reads = READ_ONCE(bx_rd_max);
}

/* Keep bx_host.rd_conns in step with @conn; conn->lock held. */
static void flow_rd_update(struct bx_conn *conn)
{
	bool active = !bx_drr_empty(&conn->rdq) || !bx_win_idle(&conn->rdwnd);

	lockdep_assert_held(&conn->lock);
	if (active == conn->rd_active)
		return;
	conn->rd_active = active;
	spin_lock(&bx_host.lock);
	if (active)
		bx_host.rd_conns++;
	else
		bx_host.rd_conns--;
	spin_unlock(&bx_host.lock);
}

/* Count @op's wait in @w once (BX_WAITED_*: @bit). */
static void flow_waited(struct bx_op *op, struct bx_win *w, u8 bit)
{
	if (!(op->waited & bit)) {
		op->waited |= bit;
		w->waits++;
		trace_bx_wnd_wait(op, w, bit);
	}
}

/*
 * @conn waits for host window @k: join its line (at the head if @head),
 * unless it is in it. bx_host.lock held.
 */
static void flow_line_join(struct bx_conn *conn, enum bx_host_wnd k, bool head)
{
	lockdep_assert_held(&bx_host.lock);
	if (!conn->host_timed[k]) {
		conn->host_timed[k] = true;
		conn->host_since[k] = bx_host.admits[k];
	}
	if (conn->host_wait[k])
		return;
	conn->host_wait[k] = true;
	bx_conn_get(conn);
	if (head)
		list_add(&conn->host_node[k], &bx_host.waiters[k]);
	else
		list_add_tail(&conn->host_node[k], &bx_host.waiters[k]);
}

/*
 * Charge @op to @conn's window and the host's, if both have room.
 *
 * Each host window serves the connections it stopped in line
 * (bx_host.waiters[k]). While the line is not empty, a connection may
 * take from the window only with a turn, which a release gives the
 * connections of the line in order, or when the window is empty (so the
 * line always moves); any other connection joins the end of the line. A
 * turn that finds too little room keeps its place at the head. Without
 * this a connection whose own completions kick it took every release,
 * and one that had to wait could wait for as long as the others kept it
 * busy (a push's READ waited 21 s of a 20 s incast, rx_wnd_kb=2048).
 *
 * A send of at most BX_SMALL_OP that does not fit neither counts as a
 * wait nor joins the line here: kick_next() tries flow_admit_small()
 * next, which does either if it cannot admit it.
 *
 * A SRV_READ cut in pieces has one piece on the wire at a time, and the
 * READ windows bound what is on the wire towards this host: it is
 * charged one piece and one READ. Charged its length, a push larger
 * than rx_wnd_kb ran alone on the whole host, and the link idled
 * between its pieces (performance.rst, "Findings").
 */
static bool flow_admit(struct bx_conn *conn, struct bx_op *op, bool rd)
{
	struct bx_win *w = rd ? &conn->rdwnd : &conn->wnd;
	enum bx_host_wnd k = rd ? BX_HOSTWND_RX : BX_HOSTWND_TX;
	bool small = !rd && op->qi.cost <= BX_SMALL_OP;
	u64 cost = op->qi.cost;
	struct bx_win_lim cl, hl;
	bool ok, turn, put = false;
	struct bx_win *hw;
	u32 reads = 0;

	lockdep_assert_held(&conn->lock);
	if (rd) {
		/*
		 * One READ per peer segment (a piece never spans two); more
		 * work requests if rdma_rw must split one for max_sge_rd.
		 */
		reads = bx_op_plan_pieces(op) ? 1 : op->rdma->nrdv;
		cost = op->piece;
	}
	flow_limits(rd, &cl, &hl);
	if (!bx_win_fits(w, &cl, cost, reads)) {
		/* Our own completions will call us again. */
		if (!small)
			flow_waited(op, w, BX_WAITED_CONN);
		return false;
	}
	spin_lock(&bx_host.lock);
	hw = rd ? &bx_host.rx : &bx_host.tx;
	turn = conn->host_turn[k];
	ok = (list_empty(&bx_host.waiters[k]) || turn || !hw->ops) &&
	     bx_win_fits(hw, &hl, cost, reads);
	if (ok || !small)
		conn->host_turn[k] = false;
	if (ok) {
		bx_win_charge(hw, cost, reads);
		if (conn->host_timed[k]) {
			bx_host.passed_max[k] =
				max(bx_host.passed_max[k], bx_host.admits[k] -
				    conn->host_since[k]);
			conn->host_timed[k] = false;
		}
		bx_host.admits[k]++;
		/* In line but let in by an empty window: leave the line. */
		if (conn->host_wait[k]) {
			conn->host_wait[k] = false;
			list_del_init(&conn->host_node[k]);
			put = true;
		}
	} else if (!small) {
		/*
		 * Something is in flight in @hw (else it would fit), and
		 * its release wakes the line, this connection included.
		 */
		flow_waited(op, hw, BX_WAITED_HOST);
		flow_line_join(conn, k, turn);
	}
	spin_unlock(&bx_host.lock);
	/* The line's reference; never the last, bx_conn_kick() holds one. */
	if (put)
		bx_conn_put(conn);
	if (ok) {
		bx_win_charge(w, cost, reads);
		op->charged = true;
		op->wbytes = cost;
		op->wreads = reads;
		trace_bx_wnd_admit(op, w, op->waited);
	}
	return ok;
}

/*
 * Admit small @op while the operation the round serves next waits, as
 * a small one (struct bx_win, @small): outside both windows' bytes and
 * operations and the host window's line, at most wnd_ops (host_wnd_ops)
 * of them. Each adds at most BX_SMALL_OP bytes. Waiting for room behind
 * 1 MiB operations instead cost a 4 KiB pull a median 340 to 390 ms in
 * the lossless incast (performance.rst).
 */
static bool flow_admit_small(struct bx_conn *conn, struct bx_op *op)
{
	struct bx_win_lim cl, hl;
	bool ok;

	lockdep_assert_held(&conn->lock);
	flow_limits(false, &cl, &hl);
	if (!bx_win_fits_small(&conn->wnd, &cl)) {
		/* Its small ones in flight: their completions kick it. */
		flow_waited(op, &conn->wnd, BX_WAITED_CONN);
		return false;
	}
	spin_lock(&bx_host.lock);
	ok = bx_win_fits_small(&bx_host.tx, &hl);
	if (ok) {
		bx_win_charge_small(&bx_host.tx);
		bx_host.small_passes++;
	} else {
		/* Others' small ones: their release wakes the line. */
		flow_waited(op, &bx_host.tx, BX_WAITED_HOST);
		flow_line_join(conn, BX_HOSTWND_TX, conn->host_turn[BX_HOSTWND_TX]);
		conn->host_turn[BX_HOSTWND_TX] = false;
	}
	spin_unlock(&bx_host.lock);
	if (ok) {
		bx_win_charge_small(&conn->wnd);
		op->charged = true;
		op->small = true;
		op->wreads = 0;
		conn->small_passes++;
		trace_bx_wnd_admit(op, &conn->wnd, op->waited);
	}
	return ok;
}

/*
 * Give the connections waiting for host window @k their turns, in line
 * order, until one finds too little room: it keeps the head, and the
 * others wait behind it for the next release. A connection that lines
 * up again, or anew, while this runs may be counted in @n; popping it
 * early only gives it its turn early.
 */
static void flow_wake_host(enum bx_host_wnd k)
{
	unsigned int n = 0;
	struct bx_conn *c;
	bool head;

	spin_lock(&bx_host.lock);
	list_for_each_entry(c, &bx_host.waiters[k], host_node[k])
		n++;
	spin_unlock(&bx_host.lock);

	while (n--) {
		spin_lock(&bx_host.lock);
		c = list_first_entry_or_null(&bx_host.waiters[k],
					     struct bx_conn, host_node[k]);
		if (c) {
			list_del_init(&c->host_node[k]);
			c->host_wait[k] = false;
			c->host_turn[k] = true;
		}
		spin_unlock(&bx_host.lock);
		if (!c)
			break;
		bx_conn_kick(c);
		spin_lock(&bx_host.lock);
		head = c->host_wait[k] &&
		       list_first_entry(&bx_host.waiters[k], struct bx_conn,
					host_node[k]) == c;
		spin_unlock(&bx_host.lock);
		bx_conn_put(c);
		if (head)
			break;
	}
}

/*
 * @op completed: return what it held in its connection's and the host's
 * windows, and let waiting work in.
 */
void bx_flow_release(struct bx_op *op)
{
	struct bx_conn *conn = op->conn;
	bool rd = op->kind == BX_K_SRV_READ;
	bool ok, wake = true;

	if (!op->charged)
		return;
	op->charged = false;
	spin_lock(&conn->lock);
	spin_lock(&bx_host.lock);
	if (op->small) {
		/*
		 * Frees no bytes or operations: the line needs waking only
		 * if the host's small ones were at their limit.
		 */
		op->small = false;
		wake = bx_host.tx.small >= READ_ONCE(bx_host_wnd_ops);
		ok = bx_win_release_small(&conn->wnd);
		ok &= bx_win_release_small(&bx_host.tx);
	} else {
		ok = bx_win_release(rd ? &conn->rdwnd : &conn->wnd,
				    op->wbytes, op->wreads);
		ok &= bx_win_release(rd ? &bx_host.rx : &bx_host.tx,
				     op->wbytes, op->wreads);
	}
	spin_unlock(&bx_host.lock);
	if (rd)
		flow_rd_update(conn);
	spin_unlock(&conn->lock);
	WARN_ON_ONCE(!ok);
	/* The line first, then this connection (flow_admit()). */
	if (wake)
		flow_wake_host(rd ? BX_HOSTWND_RX : BX_HOSTWND_TX);
	bx_conn_kick(conn);
}

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
 * Queue @op (whose reference passes to the queue) and send what the
 * windows, credits and send buffers allow. Control messages go first;
 * everything else waits in its process's queue for admission.
 */
void bx_conn_queue(struct bx_conn *conn, struct bx_op *op)
{
	bool rd = op->kind == BX_K_SRV_READ;
	struct bx_flowq *fq, *spare = NULL;
	int err;

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
		fq = flowq_find(conn, op->file, rd);
		if (!fq && spare) {
			fq = spare;
			spare = NULL;
			bx_drr_flow_init(&fq->drr);
			fq->file = op->file;
			fq->rd = rd;
			list_add_tail(&fq->node, &conn->flows);
		}
		if (fq) {
			op->qi.cost = bx_op_cost(op);
			bx_drr_enqueue(rd ? &conn->rdq : &conn->txq, &fq->drr,
				       &op->qi);
			if (rd)
				flow_rd_update(conn);
			break;
		}
		spin_unlock(&conn->lock);
		spare = kzalloc(sizeof(*spare), GFP_KERNEL);
		if (!spare) {
			/* A push's sender must hear of it. */
			if (rd)
				bx_op_answer(op, BX_ST_NOBUFS);
			bx_op_end(op, -ENOMEM);
			bx_op_put(op);
			return;
		}
		spin_lock(&conn->lock);
	}
	spin_unlock(&conn->lock);
	kfree(spare);
	bx_conn_kick(conn);
	return;

fail:
	spin_unlock(&conn->lock);
	kfree(spare);
	bx_op_lost(op, err);
	bx_op_put(op);
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
		bx_op_lost(op, -ENOTCONN);
		bx_op_put(op);
		return false;
	}
	list_add_tail(&op->node, q);
	spin_unlock(&conn->lock);
	return true;
}

/* @op was admitted and is registered: next in line for a send buffer. */
void bx_conn_ready(struct bx_conn *conn, struct bx_op *op)
{
	if (conn_requeue(conn, &conn->readyq, op))
		bx_conn_kick(conn);
}

/*
 * Admitted @op found no MR left on @conn (reg.c): it waits until one is
 * given back (bx_conn_mr_freed()), keeping its window charge. If no
 * operation holds one (the pool could not grow for want of memory),
 * none will come back: it fails with -ENOMEM. Takes over the caller's
 * reference.
 */
void bx_conn_mr_wait(struct bx_conn *conn, struct bx_op *op)
{
	bool idle;

	spin_lock(&conn->mr_lock);
	idle = !conn->mr_inuse;
	spin_unlock(&conn->mr_lock);
	if (idle) {
		bx_op_end(op, -ENOMEM);
		bx_op_put(op);
		return;
	}
	if (!conn_requeue(conn, &conn->mrwaitq, op))
		return;
	/* One given back before we were in line found nobody waiting. */
	spin_lock(&conn->mr_lock);
	idle = list_empty(&conn->mr_free);
	spin_unlock(&conn->mr_lock);
	if (!idle)
		bx_conn_mr_freed(conn);
}

/* An MR of @conn was given back: those waiting for one try again. */
void bx_conn_mr_freed(struct bx_conn *conn)
{
	bool kick;

	spin_lock(&conn->lock);
	kick = !list_empty(&conn->mrwaitq);
	list_splice_tail_init(&conn->mrwaitq, &conn->regq);
	spin_unlock(&conn->lock);
	if (kick)
		bx_conn_kick(conn);
}

/* Cut @op finished a piece and has more: queue its next one. */
void bx_conn_pieceq(struct bx_conn *conn, struct bx_op *op)
{
	if (conn_requeue(conn, &conn->pieceq, op))
		bx_conn_kick(conn);
}

/*
 * A piece of a REPLY's RDMA WRITEs completed, or was never posted. The
 * caller requeues or completes its op, which kicks the connection.
 */
void bx_conn_piece_end(struct bx_conn *conn)
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
 * (bx_conn_retry_work()), so that a process whose receiver never takes
 * its messages cannot keep the shared connection's window from the
 * others.
 */
void bx_conn_retry(struct bx_conn *conn, struct bx_op *op)
{
	unsigned long delay = 1UL << min_t(u8, op->retries, 6);

	/* Not again past its deadline, or for a closed file. */
	if (bx_op_expired(op)) {
		bx_op_expire(op);
		return;
	}
	bx_flow_release(op);

	if (op->retries < U8_MAX)
		op->retries++;
	if (!conn_requeue(conn, &conn->retryq, op))
		return;
	spin_lock(&bx_host.lock);
	bx_host.busy_retries++;
	spin_unlock(&bx_host.lock);
	spin_lock(&conn->lock);
	conn->busy_retries++;
	spin_unlock(&conn->lock);
	/* An earlier, shorter timer wins; the ops behind it wait a bit less. */
	queue_delayed_work(bx_wq, &conn->retry_work, delay);
}

void bx_conn_retry_work(struct work_struct *work)
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
		bx_conn_queue(conn, op);
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
	msg->credits = bx_credits_grant_take(&conn->cr);
	conn->tx_msgs++;
	return conn->tx_free[--conn->ntx_free];
}

/*
 * Admit the next operation of the send queues, or if it must wait, a
 * small one queued behind another (flow_admit_small()); conn->lock held.
 * An admitted op goes to readyq (or pieceq, a REPLY to be written in
 * pieces), unless it must be registered first: then it is returned in
 * *@reg. Returns false if nothing could be admitted.
 */
static bool kick_admit_send(struct bx_conn *conn, struct bx_op **reg)
{
	struct bx_drr_flow *flow;
	struct bx_drr_item *it;
	struct bx_op *op;

	*reg = NULL;
	it = bx_drr_peek(&conn->txq, &flow);
	if (!it)
		return false;
	op = container_of(it, struct bx_op, qi);
	if (!flow_admit(conn, op, false)) {
		it = bx_drr_find(&conn->txq, BX_SMALL_OP, &flow);
		if (!it)
			return false;
		op = container_of(it, struct bx_op, qi);
		if (!flow_admit_small(conn, op))
			return false;
	}
	bx_drr_pop(&conn->txq, flow);
	flowq_put(container_of(flow, struct bx_flowq, drr));
	if (op->needs_reg && !op->registered)
		*reg = op;
	else if (op->kind == BX_K_REPLY && bx_op_plan_pieces(op))
		list_add_tail(&op->node, &conn->pieceq);
	else
		list_add_tail(&op->node, &conn->readyq);
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

	it = bx_drr_peek(&conn->rdq, &flow);
	if (!it)
		return NULL;
	op = container_of(it, struct bx_op, qi);
	if (!flow_admit(conn, op, true))
		return NULL;
	bx_drr_pop(&conn->rdq, flow);
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
	    !(bx_credits_update_due(&conn->cr, queued) || conn->ka_due))
		return false;
	conn->ka_due = false;
	if (!bx_credits_take_update(&conn->cr)) {
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
	bx_credits_set_batch(&conn->cr, READ_ONCE(bx_credit_batch));
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

		if (q && conn->ntx_free && bx_credits_take(&conn->cr)) {
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
	ret = bx_op_transmit(op, slot);
	if (!ret)
		return;
	req_id = slot->req_id;
	slot->op = NULL;
	spin_lock(&conn->lock);
	conn->tx_free[conn->ntx_free++] = slot;
	bx_credits_untake(&conn->cr, grant);
	spin_unlock(&conn->lock);
	bx_op_sent(op, conn, req_id, ret);
	if (bx_send_err_fatal(ret))
		bx_conn_fail(conn, ret);
}

static void kick_credit(struct bx_conn *conn, struct bx_buf *slot,
			struct bx_msg *msg)
{
	size_t n = bx_wire_build(slot->data, BX_MSG_SIZE, msg);

	slot->op = NULL;
	if (!n || bx_conn_post(conn, bx_conn_prep_send(conn, slot, n))) {
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
void bx_conn_kick(struct bx_conn *conn)
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
			/* The teardown may wait for us (bx_conn_kick_wait()). */
			if (down)
				wake_up_var(&conn->kicking);
			bx_conn_put(conn);
			return;
		}
		spin_unlock(&conn->lock);
		switch (act) {
		case KICK_SEND:
			kick_send(conn, op, slot);
			break;
		case KICK_CREDIT:
			kick_credit(conn, slot, &credit);
			break;
		case KICK_REG:
			bx_op_register(op);
			break;
		case KICK_READ:
			bx_op_read(op);
			break;
		case KICK_PIECE:
			bx_op_piece(op);
			break;
		default:
			break;
		}
		spin_lock(&conn->lock);
	}
}

/*
 * Wait until no bx_conn_kick() runs on @conn, whose state is DOWN. A kick
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

void bx_conn_kick_wait(struct bx_conn *conn)
{
	wait_var_event(&conn->kicking, conn_kick_idle(conn));
}

/* Move the operations of @q that bx_op_expired() to @done. */
static void sweep_list(struct list_head *q, struct list_head *done)
{
	struct bx_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, q, node)
		if (bx_op_expired(op))
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
		any = bx_op_expired(container_of(it, struct bx_op, qi));
	if (!any)
		return;
	it = bx_drr_flow_drain(&conn->txq, &fq->drr);
	for (; it; it = next) {
		struct bx_op *op = container_of(it, struct bx_op, qi);

		next = it->next;
		if (bx_op_expired(op))
			list_add_tail(&op->node, done);
		else
			bx_drr_enqueue(&conn->txq, &fq->drr, it);
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
 * of the shared connection a reconnect. bx_conns_sweep() calls this every
 * BX_SWEEP_MS while operations are in flight.
 */
void bx_conn_sweep(struct bx_conn *conn)
{
	struct bx_flowq *fq, *tmp;
	struct bx_op *op, *next;
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
	xa_for_each(&conn->ops, id, op)
		overdue |= op->deadline &&
			   time_after_eq(jiffies, op->deadline + grace);
	xa_unlock(&conn->ops);
	if (overdue)
		bx_conn_fail(conn, -ETIMEDOUT);

	list_for_each_entry_safe(op, next, &done, node) {
		list_del_init(&op->node);
		bx_op_expire(op);
	}
	/* What waited behind them may go now. */
	bx_conn_kick(conn);
}

/* Move every operation still queued on @conn to @list. */
void bx_conn_flush_queues(struct bx_conn *conn, struct list_head *list)
{
	struct bx_flowq *fq, *tmp;
	struct bx_drr_item *it;
	int k, puts = 0;

	spin_lock(&conn->lock);
	list_splice_tail_init(&conn->ctlq, list);
	list_splice_tail_init(&conn->readyq, list);
	list_splice_tail_init(&conn->retryq, list);
	list_splice_tail_init(&conn->pieceq, list);
	list_splice_tail_init(&conn->mrwaitq, list);
	list_splice_tail_init(&conn->regq, list);
	list_for_each_entry_safe(fq, tmp, &conn->flows, node) {
		it = bx_drr_flow_drain(fq->rd ? &conn->rdq : &conn->txq,
				       &fq->drr);
		while (it) {
			struct bx_op *op = container_of(it, struct bx_op, qi);

			it = it->next;
			list_add_tail(&op->node, list);
		}
		list_del(&fq->node);
		kfree(fq);
	}
	flow_rd_update(conn);
	spin_unlock(&conn->lock);

	spin_lock(&bx_host.lock);
	for (k = 0; k < BX_HOSTWND_N; k++) {
		conn->host_turn[k] = false;
		conn->host_timed[k] = false;
		if (conn->host_wait[k]) {
			conn->host_wait[k] = false;
			list_del_init(&conn->host_node[k]);
			puts++;
		}
	}
	spin_unlock(&bx_host.lock);
	while (puts--)
		bx_conn_put(conn);
}

/* The host's windows as netlink and debugfs show them. */
void bx_host_snapshot(struct bx_host_info *hi)
{
	spin_lock(&bx_host.lock);
	hi->tx = bx_host.tx;
	hi->rx = bx_host.rx;
	hi->rd_conns = bx_host.rd_conns;
	memcpy(hi->passed_max, bx_host.passed_max, sizeof(hi->passed_max));
	hi->busy_retries = bx_host.busy_retries;
	hi->small_passes = bx_host.small_passes;
	spin_unlock(&bx_host.lock);
	hi->rnr_events = atomic64_read(&bx_rnr_events);
}
