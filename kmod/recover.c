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

atomic64_t bx_recover_dup_pushes = ATOMIC64_INIT(0);
atomic64_t bx_recover_ops_recovered = ATOMIC64_INIT(0);
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
		atomic64_inc(&bx_recover_dup_pushes);
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
		peer->rec_resent = 0;
		peer->rec_failed = 0;
	}
	spin_unlock(&peer->sess_lock);
	if (start)
		queue_delayed_work(bx_conn_wq, &peer->recover_work, 0);
}

/* How a parked @op ends when it cannot be sent again. */
static int parked_errno(const struct bx_op *op, bool restarted)
{
	if (op->kind == BX_K_PUSH && op->seq)
		return restarted ? -ECONNRESET : -EHOSTDOWN;
	return -ETIMEDOUT;
}

/*
 * Send parked @op again on @conn, its lane's connection, which is up; or
 * end it, if it is past its deadline or numbered for an incarnation of
 * the peer that restarted since. True if it was sent again.
 */
static bool recover_resend(struct bx_conn *conn, struct bx_op *op,
			   unsigned int *failed)
{
	bool again;

	if (bx_qp_op_ops->expired(op) ||
	    (op->kind == BX_K_PUSH && op->seq &&
	     op->epoch != conn->peer_epoch)) {
		int err = parked_errno(op, true);

		if (op->state != BX_OP_HELD)
			(*failed)++;
		trace_bx_op_giveup(op);
		/* Never sent, and past its deadline or closed. */
		if (err == -ETIMEDOUT && bx_qp_op_ops->expired(op))
			err = bx_qp_op_ops->expiry_errno(op);
		bx_qp_op_ops->end(op, err);
		bx_qp_op_ops->put(op);
		return false;
	}
	/* One submitted during the recovery was never sent: not "again". */
	again = op->state != BX_OP_HELD;
	bx_conn_get(conn);
	op->conn = conn;
	trace_bx_op_resend(op);
	bx_send_queue(conn, op);
	return again;
}

/*
 * A round of @peer's recovery. Each parked operation goes on its own
 * lane (bx_cm_lane()): those whose lane is up are sent again now, the
 * rest wait for theirs, which the round connects, until recover_ms
 * expires. A lane that failed thus recovers on its own while the others
 * carry on; what its operations were is known by the peer's session
 * (numbers, replay record), whichever lane they go on.
 */
void bx_recover_work(struct work_struct *work)
{
	struct bx_peer *peer = container_of(to_delayed_work(work),
					    struct bx_peer, recover_work);
	struct bx_conn *up[BX_LANES_MAX] = {};
	struct list_head go[BX_LANES_MAX];
	unsigned int resent = 0, failed = 0, prev_resent, prev_failed;
	bool expired, first, hold, more, gave_up, any = false;
	bool need[BX_LANES_MAX] = {};
	struct bx_op *op, *tmp;
	LIST_HEAD(list);
	LIST_HEAD(keep);
	int i;

	for (i = 0; i < BX_LANES_MAX; i++)
		INIT_LIST_HEAD(&go[i]);
	mutex_lock(&peer->lock);
	spin_lock(&peer->sess_lock);
	if (!peer->recovering) {
		spin_unlock(&peer->sess_lock);
		mutex_unlock(&peer->lock);
		return;
	}
	first = !peer->backoff;
	peer->backoff = clamp(peer->backoff * 2, 100U, 2000U);
	hold = peer->held;
	peer->held = false;
	if (hold)
		peer->backoff = max(peer->backoff, BX_HOLD_MS);
	expired = time_after_eq(jiffies, peer->recover_end);
	list_splice_init(&peer->parked, &list);
	spin_unlock(&peer->sess_lock);

	/* Sort them: to a lane that is up, to wait, or (expired) to fail. */
	list_for_each_entry_safe(op, tmp, &list, node) {
		u8 lane = bx_cm_lane(peer, op);
		struct bx_conn *conn = peer->lane[lane].conn;

		if (conn && READ_ONCE(conn->state) == BX_CONN_STATE_UP) {
			if (!up[lane]) {
				bx_conn_get(conn);
				up[lane] = conn;
			}
			list_move_tail(&op->node, &go[lane]);
			any = true;
		} else if (!expired) {
			list_move_tail(&op->node, &keep);
			need[lane] = true;
		}
	}
	/* Those parked meanwhile came after: they stay behind. */
	spin_lock(&peer->sess_lock);
	list_splice(&keep, &peer->parked);
	more = !list_empty(&peer->parked) && !expired;
	peer->recovering = more;
	/* Ended: a recovery that starts now counts afresh. */
	prev_resent = peer->rec_resent;
	prev_failed = peer->rec_failed;
	spin_unlock(&peer->sess_lock);
	/* Failures: this round tries again the lanes still needed. */
	for (i = 0; more && !hold && i < BX_LANES_MAX; i++)
		if (need[i])
			bx_cm_lane_conn(peer, i);
	mutex_unlock(&peer->lock);

	trace_bx_recover_round(peer, peer->backoff, any, expired);
	if (first)
		bx_event_peer(peer, BX_CMD_RECOVERING_NTF);

	for (i = 0; i < BX_LANES_MAX; i++)
		list_for_each_entry_safe(op, tmp, &go[i], node) {
			list_del_init(&op->node);
			if (recover_resend(up[i], op, &failed))
				resent++;
		}
	/*
	 * No connection within recover_ms: what is left fails, and the
	 * recovery gave up (unless every lane it needed came up).
	 */
	gave_up = !list_empty(&list);
	list_for_each_entry_safe(op, tmp, &list, node) {
		list_del_init(&op->node);
		if (op->state != BX_OP_HELD)
			failed++;
		trace_bx_op_giveup(op);
		bx_qp_op_ops->end(op, parked_errno(op, false));
		bx_qp_op_ops->put(op);
	}
	spin_lock(&peer->sess_lock);
	peer->recovered += resent;
	peer->recover_failed += failed;
	if (more) {
		peer->rec_resent += resent;
		peer->rec_failed += failed;
	}
	spin_unlock(&peer->sess_lock);
	atomic64_add(resent, &bx_recover_ops_recovered);
	atomic64_add(failed, &bx_recover_failed);
	for (i = 0; i < BX_LANES_MAX; i++) {
		if (!up[i])
			continue;
		bx_send_kick(up[i]);
		bx_conn_put(up[i]);
	}
	if (more) {
		/* conn_established() calls us as soon as a lane is up. */
		queue_delayed_work(bx_conn_wq, &peer->recover_work,
				   msecs_to_jiffies(peer->backoff));
		return;
	}
	/* The recovery's totals, over its rounds. */
	resent += prev_resent;
	failed += prev_failed;
	trace_bx_recover_done(peer, !gave_up, resent, failed);
	pr_info("peer %pISc: recovery %s: %u operations sent again, %u failed\n",
		&peer->addr, gave_up ? "gave up" : "done", resent, failed);
	bx_event_peer(peer, BX_CMD_RECOVERED_NTF);
}
