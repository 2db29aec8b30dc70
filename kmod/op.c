// SPDX-License-Identifier: GPL-2.0
/*
 * bx: operations -- their lifetime, how each one ends, and the requests
 * they send.
 *
 * Kinds (enum bx_op_kind): PUSH and PULL a process submitted (submit.c),
 * REPLY its answer to a pull request, SRV_READ the server side of a
 * rendezvous push (recv.c), CTL a bare control message. A kind is fixed
 * for the op's life.
 *
 * Requester side (PUSH, PULL):
 *
 *   bx_submit_sqe() -> bx_cm_submit() -> [connection up] bx_send_queue():
 *     the op waits in its process's queue until the send windows admit it
 *     (send.c); a rendezvous one is registered first (bx_xfer_register(),
 *     xfer.c) -> bx_send_kick()
 *     -> bx_op_transmit(): id in conn->ops, payload up to rdv_threshold
 *        copied into the send buffer, else the descriptors of its
 *        registered segments
 *     -> the response ends it (recv_response(), below).
 *
 * The answers (PUSH_DONE, PULL_RESP, PULL_WRITTEN, NACK) end the op of
 * conn->ops they name, or send it again (BUSY, AGAIN): op.c registers
 * their receive handler (recv_response()); what arrives for this host's
 * services is recv.c's.
 *
 * Every op ends in bx_op_end() (ENDING), whatever ends it: its response,
 * an error, its deadline, its connection's failure (bx_op_lost(): LOST).
 * That revokes the peer's access to the op's registered buffer first
 * (LOCAL_INV; xfer.c), and only then, in op_ended(), releases the
 * buffer's mappings, posts the completion (ENDED, which no state
 * follows: once) or parks the op for recovery (PARKED), and answers the
 * peer where the op owes it an answer (bx_op_answer(): a REPLY's NACK, a
 * SRV_READ's PUSH_DONE). Its states are opstate.h's; bx_op_move() is
 * the one place an op changes state.
 */

#include <linux/slab.h>

#include "conn.h"
#include "file.h"
#include "op.h"
#include "params.h"
#include "rw.h"
#include "trace.h"
#include "xfer.h"

static_assert(BX_WIRE_XFER_MAX == BX_MSG_MAX);

atomic64_t bx_op_copied_bytes = ATOMIC64_INIT(0);

/*
 * A new operation of @kind. Those a process submits are charged to its
 * memory cgroup (@gfp BX_GFP_CHARGED); those the transport makes for
 * a peer (reads, control messages) to no one's.
 */
struct bx_op *bx_op_alloc(u8 kind, gfp_t gfp)
{
	struct bx_op *op = kzalloc(sizeof(*op), gfp);

	if (!op)
		return NULL;
	kref_init(&op->ref);
	INIT_LIST_HEAD(&op->node);
	INIT_LIST_HEAD(&op->unres);
	op->kind = kind;
	op->uslot = -1;
	atomic64_inc(&bx_conn_ops_inflight);
	return op;
}

static void op_release(struct kref *ref)
{
	struct bx_op *op = container_of(ref, struct bx_op, ref);

	if (op->kind == BX_K_PUSH)
		bx_recover_resolved(op);
	/* A READ failed from a queue (connection down) delivered nothing. */
	if (op->kind == BX_K_SRV_READ && op->seq)
		bx_recover_replay_done(op->conn, op->epoch, op->seq, false);
	kfree(op->rdma);
	if (op->conn)
		bx_conn_put(op->conn);
	if (op->peer)
		bx_peer_put(op->peer);
	if (op->file)
		bx_file_put(op->file);
	atomic64_dec(&bx_conn_ops_inflight);
	kfree(op);
}

void bx_op_put(struct bx_op *op)
{
	kref_put(&op->ref, op_release);
}

struct bx_op *bx_op_ctl(u8 type)
{
	struct bx_op *op = bx_op_alloc(BX_K_CTL, GFP_KERNEL);

	if (op)
		op->msg.type = type;
	return op;
}

/* Queue a bare control message on @conn. */
void bx_op_send_ctl(struct bx_conn *conn, u8 type, u64 req_id, u8 status)
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
	bx_send_queue(conn, op);
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

	if ((op->kind != BX_K_PUSH && op->kind != BX_K_PULL) ||
	    bx_op_expired(op) || !bx_recover_allowed())
		return false;
	bx_op_move(op, BX_OP_PARKED);
	op->conn = NULL;
	op->req_id = 0;
	op->registered = false;
	op->retries = 0;
	memset(&op->msg, 0, sizeof(op->msg));
	kref_get(&op->ref);	/* peer->parked's */
	bx_recover_park(op->peer, op);
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

/*
 * Post the operation's completion (it is ENDING); or, for an op LOST with
 * its connection that may be recovered, park it instead (op_park()).
 * Only op_ended() calls this.
 */
static void op_complete(struct bx_op *op, int res)
{
	struct bx_cqe cqe = {};

	bx_window_release(op);
	if (op->state == BX_OP_LOST && op->file) {
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
	bx_op_move(op, BX_OP_ENDED);
	if (!op->file)
		return;
	if (op->kind == BX_K_PUSH)
		bx_recover_resolved(op);
	cqe.user_data = op->user_data;
	cqe.res = res;
	if (op->kind == BX_K_SRV_READ) {
		cqe.flags = BX_CQE_F_PUSH;
		cqe.off = op->off;
		cqe.service = op->service;
		cqe.peer = op->peer_id;
	}
	trace_bx_op_complete(op, res);
	bx_file_complete(op->file, &cqe);
}

/*
 * The second half of bx_op_end(): the peer reaches none of @op's buffers
 * any more. Release their mappings, complete (or park) the op with
 * op->result, then answer the peer if the op owes it an answer.
 */
static void op_ended(struct bx_op *op)
{
	struct bx_conn *conn = op->conn;

	if (conn && (op->kind == BX_K_PUSH || op->kind == BX_K_PULL))
		bx_xfer_release(op);
	else if (conn && op->rdma)
		bx_rw_release(op);
	op_complete(op, op->result);
	if (!op->answer)
		return;
	op->answer = false;
	if (op->kind == BX_K_SRV_READ) {
		if (op->seq)
			bx_recover_replay_done(conn, op->epoch, op->seq,
					       op->answer_st == BX_ST_OK);
		op->seq = 0;
		bx_op_send_ctl(conn, BX_MSG_PUSH_DONE, op->req_id,
			       op->answer_st);
	} else {
		bx_op_send_ctl(conn, BX_MSG_NACK, op->msg.req_id,
			       op->answer_st);
	}
}

/*
 * Begin to end @op (ENDING or LOST) with @res: a push or pull first
 * revokes its peer's access to its registered segments
 * (bx_xfer_revoke()); its completion follows once that is done, possibly
 * later, from the invalidation's completion or the connection's fence
 * (bx_op_revoked()). Everything else ends at once (op_ended()).
 */
static void op_finish(struct bx_op *op, int res)
{
	op->result = res;
	if ((op->kind == BX_K_PUSH || op->kind == BX_K_PULL) &&
	    bx_xfer_revoke(op))
		return;
	op_ended(op);
}

/**
 * bx_op_end() - end @op with @res (bytes, or -errno): how every op ends
 * @op:		the op; the caller keeps its reference
 * @res:	the result its completion carries
 *
 * Whatever ends it: its response, an error, its deadline. An op may end
 * once (bx_op_move()).
 */
void bx_op_end(struct bx_op *op, int res)
{
	if (bx_op_move(op, BX_OP_ENDING))
		op_finish(op, res);
}

/*
 * bx_op_end() of an op whose connection failed while it was queued, in
 * flight or awaiting its response (LOST): recovered if it may be
 * (op_park()), else completed with @err.
 */
void bx_op_lost(struct bx_op *op, int err)
{
	if (bx_op_move(op, BX_OP_LOST))
		op_finish(op, err);
}

/*
 * @op's access to its peer's memory was revoked (xfer.c), or its
 * connection is fenced: finish bx_op_end(). Takes over the caller's
 * reference.
 */
void bx_op_revoked(struct bx_op *op)
{
	op_ended(op);
	bx_op_put(op);
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

	if (op->kind == BX_K_REPLY)
		bx_op_answer(op, BX_ST_CANCELED);
	else if (op->kind == BX_K_PUSH && op->seq)
		err = -ECONNRESET;
	bx_op_end(op, err);
	bx_op_put(op);
}

/* ---- sending ------------------------------------------------------------ */

/*
 * Build @op's message in @slot and post its SEND, after the chain
 * @first..@last (RDMA WRITEs; NULL: none). The inline data of a PUSH or
 * PULL_RESP built without a payload pointer is the op's buffer,
 * gathered from its pieces.
 */
int bx_op_post_msg(struct bx_op *op, struct bx_buf *slot,
		   struct ib_send_wr *first, struct ib_send_wr *last)
{
	struct bx_conn *conn = op->conn;
	struct ib_send_wr *send;
	size_t n;

	n = bx_wire_build(slot->data, BX_MSG_SIZE, &op->msg);
	if (!n || n > conn->peer_msg_size)
		return -EMSGSIZE;
	if (!op->msg.payload && op->msg.len &&
	    (op->msg.type == BX_MSG_PUSH || op->msg.type == BX_MSG_PULL_RESP)) {
		/* Inline data comes last in a message. */
		bx_span_gather(&op->buf, bx_region_ptr(op->file->region, 0),
			       (u8 *)slot->data + n - op->msg.len,
			       op->msg.len);
		atomic64_add(op->msg.len, &bx_op_copied_bytes);
	}
	send = bx_qp_prep_send(conn, slot, n);
	if (first) {
		last->next = send;
		return bx_qp_post(conn, first);
	}
	return bx_qp_post(conn, send);
}

/*
 * Give the op an id in conn->ops; that entry holds a reference, and the
 * op waits for its answer (WAIT): from here its answer may end it.
 */
static int op_track(struct bx_op *op)
{
	u32 id;
	int ret;

	/* Before the entry is seen: its answer may end it. */
	bx_op_move(op, BX_OP_WAIT);
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
		bx_recover_number(op->conn, op);
	} else {
		op->msg.type = BX_MSG_PULL_REQ;
		op->msg.len = op->len;
		if (!rdv) {
			/* An eager sink grants nothing: capacity only. */
			op->msg.nrdv = 1;
			op->msg.rdv[0] = (struct bx_rdv){ .len = op->resp_len };
		}
	}
	/* A pull's request is inline; an eager push's is gathered. */
	if (op->kind == BX_K_PULL && op->len)
		op->msg.payload = bx_region_ptr(r, op->off);

	/* The registration (bx_xfer_register()) filled msg.rdv already. */
	if (rdv && !op->registered)
		return -EINVAL;
	ret = op_track(op);
	if (ret)
		return ret;
	/* Before the post: its completion may run before we return. */
	slot->req_id = op->req_id;
	if (op->kind == BX_K_PULL)
		atomic64_add(op->len, &bx_op_copied_bytes);
	/* On failure bx_op_sent() takes @op out of conn->ops again. */
	return bx_op_post_msg(op, slot, NULL, NULL);
}

/* Send @op in @slot; the connection set msg.credits and msg.seq. */
int bx_op_transmit(struct bx_op *op, struct bx_buf *slot)
{
	switch (op->kind) {
	case BX_K_PUSH:
	case BX_K_PULL:
		return transmit_request(op, slot);
	case BX_K_REPLY:
		return bx_rw_transmit_reply(op, slot);
	default:
		return bx_op_post_msg(op, slot, NULL, NULL);
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
				bx_op_end(op, err);
		}
		break;
	case BX_K_REPLY:
		bx_rw_release(op);
		/* Not posted, and the connection stays up (kick_send()). */
		if (err && !bx_send_err_fatal(err))
			bx_op_answer(op, BX_ST_REMOTE_IO);
		bx_op_end(op, err ? err : op->len);
		break;
	default:
		break;
	}
	bx_op_put(op);
}

/* ---- answers to our requests ------------------------------------------- */

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
			bx_op_end(op, -EPROTO);
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
			bx_recover_resolved(op);
		bx_send_retry(conn, op);
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
			bx_span_scatter(&op->buf,
					bx_region_ptr(op->file->region, 0),
					msg->payload, msg->len);
			atomic64_add(msg->len, &bx_op_copied_bytes);
			res = msg->len;
			break;
		case BX_MSG_PULL_WRITTEN:
			res = msg->len;
			break;
		}
	}
	/* conn->ops' reference, which the entry no longer holds. */
	bx_op_end(op, res);
	bx_op_put(op);
}

/* What the transport calls of operations (struct bx_op_ops). */
static const struct bx_op_ops op_ops = {
	.put		= bx_op_put,
	.ctl		= bx_op_ctl,
	.end		= bx_op_end,
	.lost		= bx_op_lost,
	.expire		= bx_op_expire,
	.revoked	= bx_op_revoked,
	.expired	= bx_op_expired,
	.expiry_errno	= bx_op_expiry_errno,
	.transmit	= bx_op_transmit,
	.sent		= bx_op_sent,
	.reg		= bx_xfer_register,
	.read		= bx_rw_read,
	.piece		= bx_rw_piece,
	.plan_pieces	= bx_rw_plan_pieces,
};

/*
 * At load, before any connection exists: the transport's way up, and the
 * handlers of the answers to our requests.
 */
void bx_op_init(void)
{
	bx_qp_register_ops(&op_ops);
	bx_qp_register_rx(BX_MSG_PUSH_DONE, recv_response);
	bx_qp_register_rx(BX_MSG_PULL_RESP, recv_response);
	bx_qp_register_rx(BX_MSG_PULL_WRITTEN, recv_response);
	bx_qp_register_rx(BX_MSG_NACK, recv_response);
}
