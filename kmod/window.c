// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the windows, a connection's and the host's.
 *
 * An operation goes on the wire only once it is charged to its
 * connection's window and the host's (bx_window_admit(); the READs of
 * rendezvous pushes to the READ windows, receiver admission), and gives
 * both back when it completes (bx_window_release()). The arithmetic is
 * flow.c's (pure, host-tested); this file holds the host's windows, the
 * line of connections a host window stopped and the turns a release
 * gives them, and the small operations let past a large one. send.c
 * asks it, from bx_send_kick(), what may go.
 */

#include <linux/wait_bit.h>

#include "conn.h"
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
	/* connections a host window stopped, in line (bx_window_admit()) */
	struct list_head	waiters[BX_HOSTWND_N];
	/*
	 * Operations each host window admitted, and the most it admitted
	 * for others while one connection waited for it.
	 */
	u64			admits[BX_HOSTWND_N];
	u64			passed_max[BX_HOSTWND_N];
	u64			busy_retries;
	u64			small_passes;	/* bx_window_admit_small() */
} bx_host = {
	.lock		= __SPIN_LOCK_UNLOCKED(bx_host.lock),
	.waiters	= {
		LIST_HEAD_INIT(bx_host.waiters[BX_HOSTWND_TX]),
		LIST_HEAD_INIT(bx_host.waiters[BX_HOSTWND_RX]),
	},
};

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

/*
 * A user's part of a window's limits @lim in @l: user_wnd_pct of them,
 * while another user has bx open and flow control is on. False if no
 * share applies.
 */
static bool user_share(struct bx_win_lim *l, const struct bx_win_lim *lim)
{
	unsigned int pct = READ_ONCE(bx_user_wnd_pct);

	if (pct >= 100 || bx_users_active() < 2 || lim->bytes == U64_MAX)
		return false;
	l->bytes = div_u64(lim->bytes * pct, 100);
	l->ops = max_t(u32, 1, div_u64((u64)lim->ops * pct, 100));
	l->reads = lim->reads == U32_MAX ? U32_MAX :
		   max_t(u32, 1, div_u64((u64)lim->reads * pct, 100));
	return true;
}

/*
 * The slot of @u's share of @conn's window @rd, or a free one, which it
 * takes; -1 if every slot is another user's in use (then no share is
 * kept for it: the connection's own window still bounds it). conn->lock
 * held.
 */
static int uwin_slot(struct bx_conn *conn, bool rd, const struct bx_user *u)
{
	struct bx_uwin *uw = conn->uwin[rd];
	int i, free = -1;

	lockdep_assert_held(&conn->lock);
	for (i = 0; i < BX_CONN_USERS; i++) {
		if (uw[i].user == u)
			return i;
		if (free < 0 && bx_flow_win_idle(&uw[i].w))
			free = i;
	}
	if (free >= 0)
		uw[free].user = u;
	return free;
}

/* The user @op is charged to: its file's (a CTL message has none). */
static struct bx_user *op_user(const struct bx_op *op)
{
	return op->user;
}

/* Keep bx_host.rd_conns in step with @conn; conn->lock held. */
void bx_window_rd_update(struct bx_conn *conn)
{
	bool active = !bx_flow_drr_empty(&conn->rdq) || !bx_flow_win_idle(&conn->rdwnd);

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
 * wait nor joins the line here: kick_next() tries bx_window_admit_small()
 * next, which does either if it cannot admit it.
 *
 * A SRV_READ cut in pieces has one piece on the wire at a time, and the
 * READ windows bound what is on the wire towards this host: it is
 * charged one piece and one READ. Charged its length, a push larger
 * than rx_wnd_kb ran alone on the whole host, and the link idled
 * between its pieces (performance.rst, "Findings").
 *
 * While another user has bx open, each user's operations hold at most
 * user_wnd_pct of each window, the connection's and the host's
 * (user_share()): one user's pulls from a service that never answers
 * cannot hold a window for everyone until their deadlines. An op whose
 * user is at its share gets BX_ADMIT_SHARE: it neither counts as a wait
 * nor joins the host's line (it must not hold up other users), and the
 * caller may serve another user's op; it is tried again when its
 * connection is kicked (its own completions, or the deadline sweep's
 * every BX_SWEEP_MS).
 */
enum bx_admit bx_window_admit(struct bx_conn *conn, struct bx_op *op, bool rd)
{
	struct bx_win *w = rd ? &conn->rdwnd : &conn->wnd;
	enum bx_host_wnd k = rd ? BX_HOSTWND_RX : BX_HOSTWND_TX;
	bool small = !rd && op->qi.cost <= BX_SMALL_OP;
	struct bx_win_lim cl, hl, ucl, uhl;
	struct bx_user *u = op_user(op);
	bool ok, turn, put = false;
	bool share, hshare = false;
	u64 cost = op->qi.cost;
	struct bx_win *hw;
	int slot = -1;
	u32 reads = 0;

	lockdep_assert_held(&conn->lock);
	if (rd) {
		/*
		 * One READ per peer segment (a piece never spans two); more
		 * work requests if rdma_rw must split one for max_sge_rd.
		 */
		reads = bx_qp_op_ops->plan_pieces(op) ? 1 : op->rdma->nrdv;
		cost = op->piece;
	}
	flow_limits(rd, &cl, &hl);
	if (!bx_flow_win_fits(w, &cl, cost, reads)) {
		/* Our own completions will call us again. */
		if (!small)
			flow_waited(op, w, BX_WAITED_CONN);
		return BX_ADMIT_WAIT;
	}
	share = u && user_share(&ucl, &cl);
	if (share) {
		slot = uwin_slot(conn, rd, u);
		if (slot >= 0 &&
		    !bx_flow_win_fits(&conn->uwin[rd][slot].w, &ucl, cost, reads))
			return BX_ADMIT_SHARE;
		hshare = user_share(&uhl, &hl);
	}
	spin_lock(&bx_host.lock);
	if (hshare && !bx_flow_win_fits(&u->wnd[k], &uhl, cost, reads)) {
		spin_unlock(&bx_host.lock);
		return BX_ADMIT_SHARE;
	}
	hw = rd ? &bx_host.rx : &bx_host.tx;
	turn = conn->host_turn[k];
	ok = (list_empty(&bx_host.waiters[k]) || turn || !hw->ops) &&
	     bx_flow_win_fits(hw, &hl, cost, reads);
	if (ok || !small)
		conn->host_turn[k] = false;
	if (ok) {
		bx_flow_win_charge(hw, cost, reads);
		if (hshare)
			bx_flow_win_charge(&u->wnd[k], cost, reads);
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
	/* The line's reference; never the last, bx_send_kick() holds one. */
	if (put)
		bx_conn_put(conn);
	if (ok) {
		bx_flow_win_charge(w, cost, reads);
		if (slot >= 0)
			bx_flow_win_charge(&conn->uwin[rd][slot].w, cost, reads);
		op->charged = true;
		op->wbytes = cost;
		op->wreads = reads;
		op->uslot = slot;
		op->ushare = hshare;
		trace_bx_wnd_admit(op, w, op->waited);
	}
	return ok ? BX_ADMIT_OK : BX_ADMIT_WAIT;
}

/*
 * Admit small @op while the operation the round serves next waits, as
 * a small one (struct bx_win, @small): outside both windows' bytes and
 * operations and the host window's line, at most wnd_ops (host_wnd_ops)
 * of them. Each adds at most BX_SMALL_OP bytes. Waiting for room behind
 * 1 MiB operations instead cost a 4 KiB pull a median 340 to 390 ms in
 * the lossless incast (performance.rst).
 */
bool bx_window_admit_small(struct bx_conn *conn, struct bx_op *op)
{
	struct bx_win_lim cl, hl;
	bool ok;

	lockdep_assert_held(&conn->lock);
	flow_limits(false, &cl, &hl);
	if (!bx_flow_win_fits_small(&conn->wnd, &cl)) {
		/* Its small ones in flight: their completions kick it. */
		flow_waited(op, &conn->wnd, BX_WAITED_CONN);
		return false;
	}
	spin_lock(&bx_host.lock);
	ok = bx_flow_win_fits_small(&bx_host.tx, &hl);
	if (ok) {
		bx_flow_win_charge_small(&bx_host.tx);
		bx_host.small_passes++;
	} else {
		/* Others' small ones: their release wakes the line. */
		flow_waited(op, &bx_host.tx, BX_WAITED_HOST);
		flow_line_join(conn, BX_HOSTWND_TX, conn->host_turn[BX_HOSTWND_TX]);
		conn->host_turn[BX_HOSTWND_TX] = false;
	}
	spin_unlock(&bx_host.lock);
	if (ok) {
		bx_flow_win_charge_small(&conn->wnd);
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
		bx_qp_kick(c);
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
 * Return what @op held in @conn's and the host's windows, if it holds
 * anything there (once: its completion and its file's close may both
 * ask), and let waiting work in.
 */
static void flow_release(struct bx_conn *conn, struct bx_op *op)
{
	bool rd = op->kind == BX_K_SRV_READ;
	bool ok, wake = true;

	if (!READ_ONCE(op->charged))
		return;
	spin_lock(&conn->lock);
	if (!op->charged || op->conn != conn) {
		spin_unlock(&conn->lock);
		return;
	}
	op->charged = false;
	spin_lock(&bx_host.lock);
	if (op->small) {
		/*
		 * Frees no bytes or operations: the line needs waking only
		 * if the host's small ones were at their limit.
		 */
		op->small = false;
		wake = bx_host.tx.small >= READ_ONCE(bx_host_wnd_ops);
		ok = bx_flow_win_release_small(&conn->wnd);
		ok &= bx_flow_win_release_small(&bx_host.tx);
	} else {
		ok = bx_flow_win_release(rd ? &conn->rdwnd : &conn->wnd,
					 op->wbytes, op->wreads);
		ok &= bx_flow_win_release(rd ? &bx_host.rx : &bx_host.tx,
				     op->wbytes, op->wreads);
		if (op->uslot >= 0)
			ok &= bx_flow_win_release(&conn->uwin[rd][op->uslot].w,
					     op->wbytes, op->wreads);
		if (op->ushare)
			ok &= bx_flow_win_release(&op_user(op)->wnd[rd ?
						BX_HOSTWND_RX : BX_HOSTWND_TX],
					     op->wbytes, op->wreads);
		op->uslot = -1;
		op->ushare = false;
	}
	spin_unlock(&bx_host.lock);
	if (rd)
		bx_window_rd_update(conn);
	spin_unlock(&conn->lock);
	WARN_ON_ONCE(!ok);
	/* The line first, then this connection (bx_window_admit()). */
	if (wake)
		flow_wake_host(rd ? BX_HOSTWND_RX : BX_HOSTWND_TX);
	bx_qp_kick(conn);
}

/* @op completed: what it held of the windows goes back. */
void bx_window_release(struct bx_op *op)
{
	if (op->conn)
		flow_release(op->conn, op);
}

/*
 * The file of @op, which awaits its answer on @conn, closed: the windows
 * it held go back now, for the other processes. The op itself stays
 * until its answer or its deadline: the peer may still be reading or
 * writing its buffer, and revoking that would fail the peer's work on
 * the shared connection.
 */
void bx_window_cancel(struct bx_conn *conn, struct bx_op *op)
{
	flow_release(conn, op);
}

/* A BUSY answer sends @op again later (bx_send_retry()): counted. */
void bx_window_host_busy_retry(void)
{
	spin_lock(&bx_host.lock);
	bx_host.busy_retries++;
	spin_unlock(&bx_host.lock);
}

/*
 * @conn is going (bx_send_flush_queues()): it leaves the host windows'
 * lines, dropping their references, and forgets its turns.
 */
void bx_window_host_leave(struct bx_conn *conn)
{
	unsigned int puts = 0;
	int k;

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
void bx_window_host_snapshot(struct bx_host_info *hi)
{
	spin_lock(&bx_host.lock);
	hi->tx = bx_host.tx;
	hi->rx = bx_host.rx;
	hi->rd_conns = bx_host.rd_conns;
	memcpy(hi->passed_max, bx_host.passed_max, sizeof(hi->passed_max));
	hi->busy_retries = bx_host.busy_retries;
	hi->small_passes = bx_host.small_passes;
	spin_unlock(&bx_host.lock);
	hi->rnr_events = atomic64_read(&bx_qp_rnr_events);
}
