// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the responder -- what arrives on a connection for this host's
 * services: the receive handlers of each message type (bx_recv_init()
 * registers them with qp.c), called from the receive completion with a
 * message bx_wire_parse() accepted. The requester's side, the answers to
 * our own requests, is op.c's.
 *
 *   PUSH       copied into a posted RECV buffer of its service, completion,
 *              PUSH_DONE
 *   PUSH_RDV   a SRV_READ op takes a RECV buffer and waits for receiver
 *              admission (send.c) to RDMA READ the sender's segments
 *              into it (xfer.c); its end sends PUSH_DONE
 *   PULL_REQ   copied into a RECV buffer; completion with a token that
 *              BX_OP_REPLY answers (svc.c)
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
		atomic64_add(msg->len, &bx_op_copied_bytes);
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
		atomic64_add(msg->len, &bx_op_copied_bytes);
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

/*
 * The handlers of what arrives for this host's services, one per message
 * type; each message is valid until its handler returns. The responses
 * to our own requests are op.c's.
 */
void bx_recv_init(void)
{
	bx_qp_register_rx(BX_MSG_PUSH, recv_push);
	bx_qp_register_rx(BX_MSG_PUSH_RDV, recv_push_rdv);
	bx_qp_register_rx(BX_MSG_PULL_REQ, recv_pull_req);
}
