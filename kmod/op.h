/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: operations (push, pull, receive, reply) and the messages they send.
 */
#ifndef _BX_OP_H
#define _BX_OP_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>
#include <linux/bx.h>

#include "flow.h"
#include "opstate.h"
#include "span.h"
#include "wire.h"

struct bx_conn;
struct bx_file;
struct bx_buf;

/* Kinds of operation; the uapi ones first. */
enum bx_op_kind {
	BX_K_PUSH	= BX_OP_PUSH,
	BX_K_PULL	= BX_OP_PULL,
	BX_K_REPLY	= BX_OP_REPLY,
	BX_K_CTL	= 16,	/* a bare control message (credit, ack, nack) */
	BX_K_SRV_READ,		/* server side of a rendezvous push */
};

/**
 * struct bx_seg - one registered segment of an operation's buffer
 * @mr:		FRWR MR from the connection's pool, or NULL
 * @valid:	its registration was posted and not yet invalidated
 * @sgt:	the pages of the segment
 * @nents:	DMA-mapped entries of @sgt (0: not mapped)
 * @off:	region offset of the segment
 * @len:	bytes
 */
struct bx_seg {
	struct ib_mr		*mr;
	bool			valid;
	struct sg_table		sgt;
	int			nents;
	u64			off;
	u32			len;
};

/*
 * rdma_rw contexts of a server's transfer: one per run of bytes inside one
 * remote descriptor and one local piece (a REPLY's buffer in pieces).
 */
#define BX_RW_MAX	(BX_WIRE_MAX_RDV + BX_VEC_MAX - 1)

/**
 * struct bx_rdma - the RDMA state of a rendezvous operation
 * @seg:	requester: registered segments; server: local segments of
 *		the RDMA READ/WRITE, one per rdma_rw context
 * @rw:		server: one rdma_rw context per segment
 * @reg:	requester: registration WRs, chained before the SEND
 * @inv:	requester: invalidation WRs after the response
 * @rdv:	server: the remote descriptors, @nrdv of them
 */
struct bx_rdma {
	u8			nseg;
	u8			nrdv;
	struct bx_seg		seg[BX_RW_MAX];
	struct rdma_rw_ctx	rw[BX_RW_MAX];
	struct ib_reg_wr	reg[BX_WIRE_MAX_RDV];
	struct ib_send_wr	inv[BX_WIRE_MAX_RDV];
	struct bx_rdv		rdv[BX_WIRE_MAX_RDV];
};

#define BX_WAITED_CONN	1
#define BX_WAITED_HOST	2

/**
 * struct bx_op - one operation in flight
 * @ref:	held by the submitter until the op is queued, by the send in
 *		flight, by the wait for a response (conn->ops) and by RDMA
 *		work in flight; the op is freed with the last
 * @node:	in peer->pending or one of conn's ctlq, readyq, retryq, pieceq
 * @qi:		in a flow of conn->txq or conn->rdq, with its cost in bytes
 * @file:	owner (ref), NULL for control messages
 * @user:	@file's user (held by @file), for its shares of the windows
 * @conn:	connection (ref) once assigned
 * @kind:	enum bx_op_kind
 * @state:	enum bx_op_state (opstate.h); changed by bx_op_move() only,
 *		by whoever holds the op's progress: the queue it is taken
 *		from, its conn->ops entry, its completion handler
 * @msg:	the message to send (type, service, status, ...)
 * @result:	bytes or -errno for the completion
 * @user_data, @off, @len, @service, @resp_len: from the sqe (@off: a
 *		PULL's request; @len, @resp_len: a buffer's total bytes);
 *		for SRV_READ the RECV's buffer and user_data
 * @buf:	its data in its file's region, one piece or several
 *		(BX_SQE_F_VEC): a PUSH's or REPLY's source, a PULL's response
 *		sink, a SRV_READ's RECV buffer
 * @req_id:	requester: id in conn->ops
 * @needs_reg:	requester: its buffer must be registered before sending
 * @registered:	...and it is (see reg.c)
 * @rdma:	rendezvous state, NULL for eager operations
 * @cqe:	completion of RDMA work (READ/WRITE chain or invalidation)
 * @peer_id:	SRV_READ: sender, for the RECV completion
 * @charged:	counted in conn->wnd (or ->rdwnd for SRV_READ) and the host
 *		window; bx_window_release() undoes it when the op completes
 * @wreads:	RDMA READs charged
 * @wbytes:	bytes charged: the length (qi.cost), or a cut SRV_READ's piece
 * @small:	charged as a small operation (struct bx_win, @small)
 * @uslot:	charged to its user's share of its connection's window:
 *		conn->uwin[][@uslot] (-1: not)
 * @ushare:	charged to its user's share of the host's window
 * @waited:	counted in a window's @waits already: BX_WAITED_CONN,
 *		BX_WAITED_HOST (once per operation, however often it is
 *		tried again)
 * @retries:	times a busy receiver bounced it
 * @deadline:	PUSH, PULL, REPLY: jiffies past which it ends with
 *		-ETIMEDOUT (bx_op_expired()); 0: none
 * @peer:	PUSH, PULL: destination (peers live until unload)
 * @lane_key:	PUSH, PULL: its file's key, which picks the lane of @peer
 *		it goes on (bx_cm_lane())
 * @seq:	PUSH: its number once sent (0: none yet; replay.h); SRV_READ:
 *		the number of the push it reads
 * @epoch:	PUSH: the peer incarnation @seq was given for; SRV_READ: the
 *		sender's
 * @unres:	PUSH: in peer->unresolved while numbered
 * @answer:	REPLY, SRV_READ: its end answers the peer (bx_op_answer()):
 *		a NACK, a PUSH_DONE...
 * @answer_st:	...with this wire status
 * @cut:	REPLY (RDMA WRITE), SRV_READ: its transfer goes in pieces
 *		(bx_rw_plan_pieces())
 * @piece:	...of this many bytes (its length if not cut); a SRV_READ
 *		is charged one piece to the receive windows
 * @rw_off:	...of which this many bytes are done
 * @rw_len:	...and the piece in flight moves this many
 */
struct bx_op {
	struct kref		ref;
	struct list_head	node;
	struct bx_drr_item	qi;
	struct bx_file		*file;
	struct bx_user		*user;
	struct bx_conn		*conn;
	u8			kind;
	u8			state;
	struct bx_msg		msg;
	int			result;
	u64			user_data;
	u64			off;
	u32			len;
	u32			service;
	u32			resp_len;
	struct bx_spans		buf;
	u32			req_id;
	u32			peer_id;
	u32			wbytes;
	bool			needs_reg;
	bool			registered;
	bool			charged;
	bool			small;
	s8			uslot;
	bool			ushare;
	u8			waited;
	u8			wreads;
	u8			retries;
	unsigned long		deadline;
	struct bx_rdma		*rdma;
	struct ib_cqe		cqe;
	struct bx_peer		*peer;
	u32			lane_key;
	u64			seq;
	u64			epoch;
	struct list_head	unres;
	bool			answer;
	u8			answer_st;
	bool			cut;
	u32			piece;
	u32			rw_off;
	u32			rw_len;
};

/*
 * Move @op to state @to: the one place an op changes state. A move the
 * state machine does not allow (opstate.c) is a bug: refused, and
 * reported once.
 */
static inline bool bx_op_move(struct bx_op *op, enum bx_op_state to)
{
	if (WARN_ONCE(!bx_opstate_legal(op->state, to),
		      "bx: op kind %u: %s -> %s\n", op->kind,
		      bx_opstate_name(op->state), bx_opstate_name(to)))
		return false;
	op->state = to;
	return true;
}

/*
 * A message that could not be built or posted for want of memory, or as
 * malformed, leaves the connection up; anything else fails it.
 */
static inline bool bx_send_err_fatal(int err)
{
	return err != -EINVAL && err != -ENOMEM;
}

/*
 * When @op ends, answer its peer with @status: a REPLY that fails NACKs
 * its requester, whose PULL would otherwise wait for it forever; a
 * SRV_READ sends the pusher its PUSH_DONE. With the connection down the
 * answer goes nowhere, and recovery decides.
 */
static inline void bx_op_answer(struct bx_op *op, u8 status)
{
	op->answer = true;
	op->answer_st = status;
}

/* What @op counts in a window: the payload bytes it moves either way. */
static inline u32 bx_op_cost(const struct bx_op *op)
{
	return op->kind == BX_K_PULL ? op->len + op->resp_len : op->len;
}

/**
 * struct bx_op_ops - what the transport asks of the operations layer
 * @put:	drop a reference (bx_op_put())
 * @ctl:	a new bare control message of a type (bx_op_ctl())
 * @end:	end an op with a result (bx_op_end())
 * @lost:	...lost with its connection: recovered if it may be
 *		(bx_op_lost())
 * @expire:	end an op taken off a queue past its deadline, with the
 *		queue's reference (bx_op_expire())
 * @revoked:	its peer's access was revoked, or its connection fenced:
 *		finish ending it, with a reference (bx_op_revoked())
 * @expired:	past its deadline or its file closed (bx_op_expired())
 * @expiry_errno: ...and how it then ends (bx_op_expiry_errno())
 * @transmit:	build and post its message in a send buffer
 *		(bx_op_transmit())
 * @sent:	its SEND completed or was never posted (bx_op_sent())
 * @reg:	register its buffer, admitted (bx_xfer_register())
 * @read:	issue a SRV_READ's RDMA READs, admitted (bx_rw_read())
 * @piece:	post the next piece of a cut transfer (bx_rw_piece())
 * @plan_pieces: decide whether an admitted transfer goes in pieces
 *		(bx_rw_plan_pieces())
 *
 * Registered once at load (bx_op_init()), before any connection exists;
 * the transport calls the operations layer through it only, as the
 * messages that arrive go through its receive handlers (qp.c).
 */
struct bx_op_ops {
	void	(*put)(struct bx_op *op);
	struct bx_op *(*ctl)(u8 type);
	void	(*end)(struct bx_op *op, int res);
	void	(*lost)(struct bx_op *op, int err);
	void	(*expire)(struct bx_op *op);
	void	(*revoked)(struct bx_op *op);
	bool	(*expired)(const struct bx_op *op);
	int	(*expiry_errno)(const struct bx_op *op);
	int	(*transmit)(struct bx_op *op, struct bx_buf *slot);
	void	(*sent)(struct bx_op *op, struct bx_conn *conn, u32 req_id,
			int err);
	void	(*reg)(struct bx_op *op);
	void	(*read)(struct bx_op *op);
	void	(*piece)(struct bx_op *op);
	bool	(*plan_pieces)(struct bx_op *op);
};

/* Set by bx_op_init(), in qp.c: the transport's one way up. */
extern const struct bx_op_ops *bx_qp_op_ops;
void bx_op_init(void);

/* Lifetime and the one end path (op.c). */
struct bx_op *bx_op_alloc(u8 kind, gfp_t gfp);
struct bx_op *bx_op_ctl(u8 type);
void bx_op_put(struct bx_op *op);
void bx_op_end(struct bx_op *op, int res);
void bx_op_lost(struct bx_op *op, int err);
void bx_op_revoked(struct bx_op *op);
bool bx_op_expired(const struct bx_op *op);
int bx_op_expiry_errno(const struct bx_op *op);
void bx_op_expire(struct bx_op *op);

/* Sending (op.c), called by the connection layer (send.c, conn.c). */
void bx_op_send_ctl(struct bx_conn *conn, u8 type, u64 req_id, u8 status);
int bx_op_post_msg(struct bx_op *op, struct bx_buf *slot,
		   struct ib_send_wr *first, struct ib_send_wr *last);
int bx_op_transmit(struct bx_op *op, struct bx_buf *slot);
void bx_op_sent(struct bx_op *op, struct bx_conn *conn, u32 req_id, int err);

/* What arrives on a connection (recv.c): its receive handlers. */
void bx_recv_init(void);

/* What a process submits (submit.c), called by the file layer. */
int bx_submit_sqe(struct bx_file *f, const struct bx_sqe *sqe);
void bx_submit_release(struct bx_file *f);

extern atomic64_t bx_op_copied_bytes;

#endif /* _BX_OP_H */
