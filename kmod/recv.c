// SPDX-License-Identifier: GPL-2.0
/*
 * bx: what arrives on a connection: the receive handlers of each message
 * type (bx_recv_init() registers them with qp.c), called from the
 * receive completion with a message bx_wire_parse() accepted.
 *
 *   PUSH       copied into a posted RECV buffer of its service, completion,
 *              PUSH_DONE
 *   PUSH_RDV   a SRV_READ op takes a RECV buffer and waits for receiver
 *              admission (send.c) to RDMA READ the sender's segments
 *              into it (xfer.c); its end sends PUSH_DONE
 *   PULL_REQ   copied into a RECV buffer; completion with a token that
 *              BX_OP_REPLY answers (svc.c)
 *   responses  (PUSH_DONE, PULL_RESP, PULL_WRITTEN, NACK) end the op of
 *              conn->ops they name, or send it again (BUSY, AGAIN)
 *
 * No RECV posted at all: the answer is BUSY and the sender's kernel sends
 * the operation again after a back-off (bx_send_retry()), so a receiver
 * that stops consuming makes senders wait, without an error. RECVs posted
 * but none big enough: -ENOBUFS; no such service: -ECONNREFUSED.
 */

#include <linux/slab.h>

#include "conn.h"
#include "file.h"
#include "op.h"
#include "svc.h"

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
 * Whether to deliver the numbered push @msg (replay.h): if not, answer it
 * here -- delivered already, or later with the same number.
 */
static bool push_admit(struct bx_conn *conn, const struct bx_msg *msg)
{
	if (!msg->seq)
		return true;
	switch (bx_recover_replay_check(conn, msg)) {
	case BX_RP_NEW:
		return true;
	case BX_RP_DUP:
		bx_op_send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id, BX_ST_OK);
		return false;
	case BX_RP_BUSY:
		bx_op_send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id,
			       BX_ST_AGAIN);
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
	f = bx_svc_take_recv(conn, msg->service, msg->len, &rv, &st);
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
		bx_file_complete(f, &cqe);
		bx_file_put(f);
		kfree(rv);
		st = BX_ST_OK;
	}
	if (msg->seq)
		bx_recover_replay_done(conn, conn->peer_epoch, msg->seq,
				       st == BX_ST_OK);
	bx_op_send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id, st);
}

static void recv_push_rdv(struct bx_conn *conn, struct bx_msg *msg)
{
	struct mem_cgroup *old;
	struct bx_recv *rv;
	struct bx_file *f;
	struct bx_op *op;
	u8 st;

	if (!push_admit(conn, msg))
		return;
	f = bx_svc_take_recv(conn, msg->service, msg->len, &rv, &st);
	if (!f) {
		if (msg->seq)
			bx_recover_replay_done(conn, conn->peer_epoch,
					       msg->seq, false);
		bx_op_send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id, st);
		return;
	}
	/* The READ's state is the receiving file's to pay for. */
	old = bx_memcg_file(f);
	op = bx_op_alloc(BX_K_SRV_READ, BX_GFP_CHARGED);
	if (op)
		op->rdma = kzalloc(sizeof(*op->rdma), BX_GFP_CHARGED);
	bx_memcg_leave(old);
	if (!op || !op->rdma) {
		struct bx_cqe cqe = { .user_data = rv->user_data,
				      .res = -ENOMEM };

		bx_file_complete(f, &cqe);
		bx_file_put(f);
		kfree(rv);
		if (op)
			bx_op_put(op);
		if (msg->seq)
			bx_recover_replay_done(conn, conn->peer_epoch,
					       msg->seq, false);
		bx_op_send_ctl(conn, BX_MSG_PUSH_DONE, msg->req_id,
			       BX_ST_NOBUFS);
		return;
	}
	op->file = f;
	op->user = f->user;
	bx_conn_get(conn);
	op->conn = conn;
	op->user_data = rv->user_data;
	op->off = rv->off;
	op->len = msg->len;
	bx_span_flat(&op->buf, rv->off, msg->len);
	op->service = msg->service;
	op->peer_id = conn->peer->id;
	op->req_id = msg->req_id;
	op->seq = msg->seq;
	op->epoch = conn->peer_epoch;
	kfree(rv);
	memcpy(op->rdma->rdv, msg->rdv, sizeof(msg->rdv[0]) * msg->nrdv);
	op->rdma->nrdv = msg->nrdv;
	/* Receiver admission decides when to READ; the queue takes our ref. */
	bx_send_queue(conn, op);
}

static void recv_pull_req(struct bx_conn *conn, struct bx_msg *msg)
{
	struct bx_cqe cqe = {};
	struct mem_cgroup *old;
	struct bx_recv *rv;
	struct bx_req *req;
	struct bx_file *f;
	u32 capacity, token;
	u8 st;

	f = bx_svc_take_recv(conn, msg->service, msg->len, &rv, &st);
	if (!f) {
		bx_op_send_ctl(conn, BX_MSG_NACK, msg->req_id, st);
		return;
	}
	/* What the server keeps of the request is its file's to pay for. */
	old = bx_memcg_file(f);
	req = kzalloc(sizeof(*req), BX_GFP_CHARGED);
	bx_memcg_leave(old);
	if (!req) {
		cqe.user_data = rv->user_data;
		cqe.res = -ENOMEM;
		bx_file_complete(f, &cqe);
		bx_file_put(f);
		kfree(rv);
		bx_op_send_ctl(conn, BX_MSG_NACK, msg->req_id, BX_ST_NOBUFS);
		return;
	}
	if (msg->len) {
		memcpy(bx_region_ptr(f->region, rv->off), msg->payload,
		       msg->len);
		atomic64_add(msg->len, &bx_copied_bytes);
	}
	capacity = msg->rdv[0].rkey ? msg->rdv_total : msg->rdv[0].len;
	cqe.user_data = rv->user_data;
	if (bx_svc_add_req(f, req, conn, msg, capacity, &token)) {
		cqe.res = -ENOMEM;
		bx_file_complete(f, &cqe);
		bx_op_send_ctl(conn, BX_MSG_NACK, msg->req_id, BX_ST_CANCELED);
	} else {
		cqe.res = msg->len;
		cqe.flags = BX_CQE_F_REQUEST | BX_CQE_F_COPIED;
		cqe.off = rv->off;
		cqe.token = token;
		cqe.service = msg->service;
		cqe.peer = conn->peer->id;
		cqe.resp_max = capacity;
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
			atomic64_add(msg->len, &bx_copied_bytes);
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

/*
 * The handlers of what arrives on a connection, one per message type;
 * each message is valid until its handler returns.
 */
void bx_recv_init(void)
{
	bx_qp_register_rx(BX_MSG_PUSH, recv_push);
	bx_qp_register_rx(BX_MSG_PUSH_RDV, recv_push_rdv);
	bx_qp_register_rx(BX_MSG_PULL_REQ, recv_pull_req);
	bx_qp_register_rx(BX_MSG_PUSH_DONE, recv_response);
	bx_qp_register_rx(BX_MSG_PULL_RESP, recv_response);
	bx_qp_register_rx(BX_MSG_PULL_WRITTEN, recv_response);
	bx_qp_register_rx(BX_MSG_NACK, recv_response);
}
