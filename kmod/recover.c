// SPDX-License-Identifier: GPL-2.0
/*
 * bx: recovery of the operations of a failed connection.
 *
 * When a connection fails, the pushes and pulls that were on it -- queued,
 * in flight, or awaiting their response -- are parked on their peer
 * instead of failing (op.c, op_park()). The peer's recover_work connects
 * again, with back-off, and hands them to the new connection:
 *
 *  - a pull is sent again (the application's pull handler may see it
 *    twice: pulls are reads);
 *  - a push keeps its number: the receiver delivers it only if it did not
 *    already (replay.h), so it is delivered exactly once;
 *  - a push numbered for an incarnation of the peer that restarted since
 *    fails with ECONNRESET: the old one may have delivered it.
 *
 * If no connection comes up within recover_ms, what is parked fails:
 * a numbered push with EHOSTDOWN (outcome unknown), everything else with
 * ETIMEDOUT (never delivered). Events: recovering-ntf when a round
 * starts, recovered-ntf when it ends either way.
 */

#include "conn.h"
#include "event.h"
#include "file.h"
#include "op.h"
#include "params.h"
#include "trace.h"

atomic64_t bx_dup_pushes = ATOMIC64_INIT(0);
atomic64_t bx_recovered_ops = ATOMIC64_INIT(0);
atomic64_t bx_recover_failed = ATOMIC64_INIT(0);

bool bx_recover_allowed(void)
{
	return READ_ONCE(bx_recover_ms) && !READ_ONCE(bx_conn_closing);
}

/*
 * Number the push @op, about to be sent on @conn, unless it has a number
 * (sent again after a connection failure); set its msg.seq and msg.lag.
 */
void bx_recover_number(struct bx_conn *conn, struct bx_op *op)
{
	struct bx_peer *peer = conn->peer;
	struct bx_op *first;
	u64 lag;

	spin_lock(&peer->sess_lock);
	if (!op->seq) {
		op->seq = ++peer->tx_seq;
		op->epoch = conn->peer_epoch;
		list_add_tail(&op->unres, &peer->unresolved);
	}
	first = list_first_entry(&peer->unresolved, struct bx_op, unres);
	lag = op->seq - first->seq;
	spin_unlock(&peer->sess_lock);
	op->msg.seq = op->seq;
	op->msg.lag = min_t(u64, lag, BX_WIRE_LAG_UNKNOWN);
}

/* The outcome of push @op's number is known (or it never had one). */
void bx_recover_resolved(struct bx_op *op)
{
	struct bx_peer *peer = op->peer;

	if (!op->seq || !peer)
		return;
	spin_lock(&peer->sess_lock);
	list_del_init(&op->unres);
	spin_unlock(&peer->sess_lock);
	op->seq = 0;
}

/* Numbered push @msg arrived on @conn: deliver it? */
enum bx_replay_verdict bx_recover_replay_check(struct bx_conn *conn,
					       const struct bx_msg *msg)
{
	struct bx_peer *peer = conn->peer;
	u64 floor = msg->lag == BX_WIRE_LAG_UNKNOWN ? 0 : msg->seq - msg->lag;
	enum bx_replay_verdict v;

	spin_lock(&peer->sess_lock);
	v = bx_replay_begin(&peer->rp, conn->peer_epoch, msg->seq, floor);
	spin_unlock(&peer->sess_lock);
	if (v == BX_RP_DUP)
		atomic64_inc(&bx_dup_pushes);
	return v;
}

/* The delivery bx_recover_replay_check() allowed ended. */
void bx_recover_replay_done(struct bx_conn *conn, u64 epoch, u64 seq,
			    bool delivered)
{
	struct bx_peer *peer = conn->peer;

	spin_lock(&peer->sess_lock);
	bx_replay_end(&peer->rp, epoch, seq, delivered);
	spin_unlock(&peer->sess_lock);
}

/* Park @op (with a reference for the list) until @peer reconnects. */
void bx_recover_park(struct bx_peer *peer, struct bx_op *op)
{
	bool start;

	trace_bx_op_park(op);
	spin_lock(&peer->sess_lock);
	list_add_tail(&op->node, &peer->parked);
	start = !peer->recovering;
	if (start) {
		peer->recovering = true;
		peer->recover_end = jiffies +
			msecs_to_jiffies(READ_ONCE(bx_recover_ms));
		peer->backoff = 0;
		peer->recoveries++;
	}
	spin_unlock(&peer->sess_lock);
	if (start)
		queue_delayed_work(bx_wq, &peer->recover_work, 0);
}

/* How a parked @op ends when it cannot be sent again. */
static int parked_errno(const struct bx_op *op, bool restarted)
{
	if (op->kind == BX_K_PUSH && op->seq)
		return restarted ? -ECONNRESET : -EHOSTDOWN;
	return -ETIMEDOUT;
}

void bx_recover_work(struct work_struct *work)
{
	struct bx_peer *peer = container_of(to_delayed_work(work),
					    struct bx_peer, recover_work);
	unsigned int resent = 0, failed = 0;
	struct bx_conn *conn, *up = NULL;
	struct bx_op *op, *tmp;
	bool expired, first, hold;
	LIST_HEAD(list);

	mutex_lock(&peer->lock);
	conn = peer->conn;
	if (conn && READ_ONCE(conn->state) == BX_CONN_STATE_UP) {
		up = conn;
		bx_conn_get(up);
	}
	spin_lock(&peer->sess_lock);
	if (!peer->recovering) {
		spin_unlock(&peer->sess_lock);
		mutex_unlock(&peer->lock);
		if (up)
			bx_conn_put(up);
		return;
	}
	first = !peer->backoff;
	peer->backoff = clamp(peer->backoff * 2, 100U, 2000U);
	hold = peer->held;
	peer->held = false;
	if (hold)
		peer->backoff = max(peer->backoff, BX_HOLD_MS);
	expired = time_after_eq(jiffies, peer->recover_end);
	if (up || expired) {
		list_splice_init(&peer->parked, &list);
		peer->recovering = false;
	}
	spin_unlock(&peer->sess_lock);
	if (!up && !expired && !hold)
		/* Failures: the next round tries again. */
		bx_cm_peer_conn(peer);
	mutex_unlock(&peer->lock);

	trace_bx_recover_round(peer, peer->backoff, up, expired);
	if (first)
		bx_event_peer(peer, BX_CMD_RECOVERING_NTF);
	if (!up && !expired) {
		/* conn_established() calls us as soon as one is up. */
		queue_delayed_work(bx_wq, &peer->recover_work,
				   msecs_to_jiffies(peer->backoff));
		return;
	}

	list_for_each_entry_safe(op, tmp, &list, node) {
		list_del_init(&op->node);
		if (!up || bx_op_ops->expired(op) ||
		    (op->kind == BX_K_PUSH && op->seq &&
		     op->epoch != up->peer_epoch)) {
			int err = parked_errno(op, !!up);

			if (op->state != BX_OP_HELD)
				failed++;
			trace_bx_op_giveup(op);
			/* Never sent, and past its deadline or closed. */
			if (up && err == -ETIMEDOUT && bx_op_ops->expired(op))
				err = bx_op_ops->expiry_errno(op);
			bx_op_ops->end(op, err);
			bx_op_ops->put(op);
			continue;
		}
		bx_conn_get(up);
		op->conn = up;
		trace_bx_op_resend(op);
		if (op->state != BX_OP_HELD)
			resent++;
		bx_send_queue(up, op);
	}
	spin_lock(&peer->sess_lock);
	peer->recovered += resent;
	peer->recover_failed += failed;
	spin_unlock(&peer->sess_lock);
	atomic64_add(resent, &bx_recovered_ops);
	atomic64_add(failed, &bx_recover_failed);
	trace_bx_recover_done(peer, up, resent, failed);
	pr_info("peer %pISc: recovery %s: %u operations sent again, %u failed\n",
		&peer->addr, up ? "done" : "gave up", resent, failed);
	bx_event_peer(peer, BX_CMD_RECOVERED_NTF);
	if (up) {
		bx_send_kick(up);
		bx_conn_put(up);
	}
}
