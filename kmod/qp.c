// SPDX-License-Identifier: GPL-2.0
/*
 * bx: a connection's QP, its buffers and their completions.
 *
 * bx_qp_setup() gives a connection its CQ, its PD with the
 * registration QP (reg.c), its RC QP and BX_RX_BUFS receive and
 * BX_TX_SLOTS send buffers of BX_MSG_SIZE bytes, DMA-mapped once, and
 * posts the receives. rx_done() takes each message in: the header is
 * parsed (wire.c) before anything of it is used, its credits are added
 * (flow.c), the message goes to the receive handler its type has
 * (registered by the layer above: recv.c, cm.c) and the buffer is posted
 * again. tx_done() returns a send slot and tells the op its SEND went
 * (struct bx_op_ops, registered by op.c). bx_qp_post() is the one way onto
 * the send queue: nothing is posted once the teardown (conn.c) has set
 * the connection DOWN. A QP's async events and the failures of our own
 * unsignaled work requests end the connection here too.
 */

#include <rdma/rdma_cm.h>
#include <linux/error-injection.h>
#include <linux/slab.h>

#include "conn.h"
#include "op.h"
#include "reg.h"
#include "trace.h"
#include "wire.h"

/*
 * What the layers above registered at load (bx_qp_register_rx(),
 * bx_qp_register_ops()), before any connection exists; read-only after.
 */
static bx_rx_fn qp_rx[__BX_MSG_MAX] __read_mostly;
const struct bx_op_ops *bx_qp_op_ops __read_mostly;

void bx_qp_register_rx(u8 type, bx_rx_fn fn)
{
	if (!WARN_ON_ONCE(type >= __BX_MSG_MAX))
		qp_rx[type] = fn;
}

void bx_qp_register_ops(const struct bx_op_ops *ops)
{
	bx_qp_op_ops = ops;
}

/* SENDs that found no receive posted (rnr_retry_count 0): a credit bug. */
atomic64_t bx_qp_rnr_events = ATOMIC64_INIT(0);

/*
 * Whoever sends on connections (send.c, bx_send_kick()) registered here
 * to hear that one may go on: a send slot or credit came back.
 */
static void (*qp_kick)(struct bx_conn *conn) __read_mostly;

void bx_qp_register_kick(void (*kick)(struct bx_conn *conn))
{
	qp_kick = kick;
}

/* @conn may go on (a completion, a window opened): kick it. */
void bx_qp_kick(struct bx_conn *conn)
{
	qp_kick(conn);
}

#define BX_CONN_F_QP_ERR	0
#define BX_CONN_F_QP_ACCESS	1

static void conn_qp_err_work(struct work_struct *work)
{
	struct bx_conn *conn = container_of(work, struct bx_conn, qp_err);

	if (test_bit(BX_CONN_F_QP_ACCESS, &conn->flags))
		bx_conn_violation(conn, "an RDMA access it was not granted");
	else
		bx_conn_fail(conn, -EIO);
	bx_conn_put(conn);
}

/* May run in atomic context: defer everything. */
static void conn_qp_event(struct ib_event *ev, void *ctx)
{
	struct bx_conn *conn = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
	case IB_EVENT_SQ_DRAINED:
	case IB_EVENT_QP_LAST_WQE_REACHED:
		return;
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_QP_REQ_ERR:
		/* The peer's request broke the rules (hardware says so). */
		set_bit(BX_CONN_F_QP_ACCESS, &conn->flags);
		break;
	default:
		break;
	}
	if (!test_and_set_bit(BX_CONN_F_QP_ERR, &conn->flags)) {
		bx_conn_get(conn);
		queue_work(bx_conn_wq, &conn->qp_err);
	}
}

static int post_rx(struct bx_conn *conn, struct bx_buf *b)
{
	struct ib_recv_wr wr = {
		.wr_cqe		= &b->cqe,
		.sg_list	= &b->sge,
		.num_sge	= 1,
	};

	b->sge.addr = b->dma;
	b->sge.length = BX_MSG_SIZE;
	b->sge.lkey = conn->pd->local_dma_lkey;
	ib_dma_sync_single_for_device(bx_conn_ibdev(conn), b->dma, BX_MSG_SIZE,
				      DMA_BIDIRECTIONAL);
	return ib_post_recv(conn->qp, &wr, NULL);
}

/*
 * A receive of @conn failed. Flushed receives are how the QP's error
 * state shows: after our teardown began (DOWN) that is its drain; while
 * connecting, rdma_cm moved the QP there (a reject) and its event ends
 * the connection with the reason, or the connect timeout does. On a
 * connection that is up, the QP failed by itself on a request of the
 * peer (on rxe, an RDMA access outside what it was granted, or a message
 * larger than our buffers, moves the responder's QP to the error
 * state): our own requests' failures complete ahead of the flush and
 * take the connection down first, and rdma_cm leaves the QP of an
 * established connection alone until we disconnect it.
 */
static void rx_error(struct bx_conn *conn, struct ib_wc *wc)
{
	enum bx_conn_state state;

	spin_lock(&conn->lock);
	state = conn->state;
	spin_unlock(&conn->lock);
	if (state == BX_CONN_STATE_DOWN)
		return;
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("receive error %s on qp %u\n",
				    ib_wc_status_msg(wc->status),
				    conn->qp->qp_num);
	if (state == BX_CONN_STATE_UP)
		bx_conn_violation(conn, "a request that failed our QP");
	else if (wc->status != IB_WC_WR_FLUSH_ERR)
		bx_conn_fail(conn, -EIO);
	/* else: the CM event that flushed it says why (REJECTED, ...). */
}

static void rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bx_buf *b = container_of(wc->wr_cqe, struct bx_buf, cqe);
	struct bx_conn *conn = b->conn;
	bool established;
	struct bx_msg msg;
	int ret;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rx_error(conn, wc);
		return;
	}
	ib_dma_sync_single_for_cpu(bx_conn_ibdev(conn), b->dma, BX_MSG_SIZE,
				   DMA_BIDIRECTIONAL);
	if (bx_wire_parse(b->data, wc->byte_len, BX_EAGER_MAX, &msg)) {
		bx_conn_violation(conn, "a malformed message");
		return;
	}

	spin_lock(&conn->lock);
	conn->rx_msgs++;
	established = conn->established;
	/* A peer cannot grant more buffers than it said it posted. */
	trace_bx_credit_grant(conn, msg.credits);
	ret = bx_flow_credits_add(&conn->cr, msg.credits);
	spin_unlock(&conn->lock);
	if (ret) {
		bx_conn_violation(conn, "more credits than it has buffers");
		return;
	}

	/*
	 * Nothing counts before the handshake is done on our side: a
	 * passive connection takes READY alone, an active one nothing until
	 * it checked the acceptor's proof (and so queued its READY), which a
	 * peer that follows the protocol waits for.
	 */
	if (unlikely(READ_ONCE(conn->ready_wait)))
		qp_rx[BX_MSG_READY](conn, &msg);
	else if (unlikely(!established))
		bx_conn_violation(conn, "a message before the handshake ended");
	else if (unlikely(msg.type == BX_MSG_READY))
		bx_conn_violation(conn, "READY after the handshake");
	else if (msg.type != BX_MSG_CREDIT)
		qp_rx[msg.type](conn, &msg);

	if (post_rx(conn, b)) {
		bx_conn_fail(conn, -EIO);
		return;
	}
	spin_lock(&conn->lock);
	bx_flow_credits_posted(&conn->cr);
	spin_unlock(&conn->lock);
	bx_qp_kick(conn);
}

static void tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bx_buf *b = container_of(wc->wr_cqe, struct bx_buf, cqe);
	struct bx_conn *conn = b->conn;
	struct bx_op *op = b->op;
	u32 req_id = b->req_id;
	int err = 0;

	b->op = NULL;
	spin_lock(&conn->lock);
	conn->tx_free[conn->ntx_free++] = b;
	conn->tx_cqes++;
	if (wc->status == IB_WC_RNR_RETRY_EXC_ERR)
		conn->rnr_events++;
	spin_unlock(&conn->lock);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		err = wc->status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
		if (wc->status == IB_WC_RNR_RETRY_EXC_ERR)
			atomic64_inc(&bx_qp_rnr_events);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("send error %s on qp %u\n",
					    ib_wc_status_msg(wc->status),
					    conn->qp->qp_num);
		bx_conn_fail(conn, err);
	}
	if (op)
		bx_qp_op_ops->sent(op, conn, req_id, err);
	if (!err)
		bx_qp_kick(conn);
}

/* Prepare the SEND of @slot, @len bytes already built in it. */
struct ib_send_wr *bx_qp_prep_send(struct bx_conn *conn, struct bx_buf *slot,
				   u32 len)
{
	slot->sge.addr = slot->dma;
	slot->sge.length = len;
	slot->sge.lkey = conn->pd->local_dma_lkey;
	slot->wr = (struct ib_send_wr){
		.wr_cqe		= &slot->cqe,
		.sg_list	= &slot->sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	ib_dma_sync_single_for_device(bx_conn_ibdev(conn), slot->dma, len,
				      DMA_BIDIRECTIONAL);
	return &slot->wr;
}

/*
 * An unsignaled work request of ours failed (it completes only then):
 * the QP is in the error state because of our request, not the peer's.
 */
static void wr_error(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bx_conn *conn = cq->cq_context;

	if (wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	pr_warn_ratelimited("RDMA work request %u on qp %u failed: %s\n",
			    wc->opcode, wc->qp->qp_num,
			    ib_wc_status_msg(wc->status));
	bx_conn_fail(conn, -EIO);
}

/*
 * Post a chain of work requests, unless the connection is going down:
 * once teardown set DOWN under the lock, nothing reaches the QP it drains.
 * A work request without a completion handler (rdma_rw's unsignaled
 * READs and WRITEs) gets wr_error(): the failure of our own request must
 * fail the connection before the QP's flushed receives are taken for a
 * peer's violation (rx_error()).
 */
int bx_qp_post(struct bx_conn *conn, struct ib_send_wr *first)
{
	struct ib_send_wr *wr;
	int ret;

	for (wr = first; wr; wr = wr->next)
		if (!wr->wr_cqe)
			wr->wr_cqe = &conn->err_cqe;

	spin_lock(&conn->lock);
	if (conn->state != BX_CONN_STATE_UP)
		ret = -ECONNRESET;
	else
		ret = ib_post_send(conn->qp, first, NULL);
	spin_unlock(&conn->lock);
	return ret;
}

static void bufs_free(struct bx_conn *conn, struct bx_buf *bufs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!bufs[i].data)
			continue;
		if (bufs[i].dma)
			ib_dma_unmap_single(bx_conn_ibdev(conn), bufs[i].dma,
					    BX_MSG_SIZE, DMA_BIDIRECTIONAL);
		kfree(bufs[i].data);
		bufs[i].data = NULL;
	}
}

static int bufs_alloc(struct bx_conn *conn, struct bx_buf *bufs, int n,
		      void (*done)(struct ib_cq *, struct ib_wc *))
{
	int i;

	for (i = 0; i < n; i++) {
		struct bx_buf *b = &bufs[i];

		b->conn = conn;
		b->cqe.done = done;
		b->data = kmalloc(BX_MSG_SIZE, BX_GFP_CHARGED);
		if (!b->data)
			return -ENOMEM;
		b->dma = ib_dma_map_single(bx_conn_ibdev(conn), b->data,
					   BX_MSG_SIZE, DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(bx_conn_ibdev(conn), b->dma)) {
			b->dma = 0;
			return -ENOMEM;
		}
	}
	return 0;
}

/* Free what bx_qp_setup() created; tolerates partial setup. */
void bx_qp_free(struct bx_conn *conn)
{
	WRITE_ONCE(conn->qpn, 0);
	if (conn->qp) {
		if (conn->cm_id && conn->cm_id->qp)
			rdma_destroy_qp(conn->cm_id);
		else
			ib_destroy_qp(conn->qp);
		conn->qp = NULL;
	}
	/* The MRs, the registration QP (on @cq) and the PD. */
	bx_reg_free(conn);
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	if (conn->bdev) {
		bufs_free(conn, conn->rx, BX_RX_BUFS);
		bufs_free(conn, conn->tx, BX_TX_SLOTS);
	}
}

/*
 * Create the CQ, the PD with its registration QP (reg.c), the QP and the
 * buffers on conn->bdev; post the receives.
 */
int bx_qp_setup(struct bx_conn *conn)
{
	struct ib_device *dev = bx_conn_ibdev(conn);
	struct ib_qp_init_attr attr = {};
	struct mem_cgroup *old;
	int ret, i, nsge;

	conn->cq = ib_alloc_cq(dev, conn, 4096 + BX_RX_BUFS +
			       2 * BX_CONN_MRS_MAX + 2, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return ret;
	}
	ret = bx_reg_init(conn);
	if (ret)
		return ret;
	nsge = min_t(int, 16, dev->attrs.max_send_sge);
	attr.event_handler = conn_qp_event;
	attr.qp_context = conn;
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = conn->cm_id->port_num;
	/* One more of each for ib_drain_qp()'s marker (conn_teardown()). */
	attr.cap.max_send_wr = 2048 + 1;
	attr.cap.max_recv_wr = BX_RX_BUFS + 1;
	attr.cap.max_send_sge = nsge;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_rdma_ctxs = 128;
	ret = rdma_create_qp(conn->cm_id, conn->pd, &attr);
	if (ret)
		return ret;
	conn->qp = conn->cm_id->qp;
	WRITE_ONCE(conn->qpn, conn->qp->qp_num);

	/* The buffers are charged as the connection is (bx_conn_alloc()). */
	old = bx_memcg_enter(conn->memcg);
	ret = bufs_alloc(conn, conn->rx, BX_RX_BUFS, rx_done) ?:
	      bufs_alloc(conn, conn->tx, BX_TX_SLOTS, tx_done);
	bx_memcg_leave(old);
	if (ret)
		return ret;
	for (i = 0; i < BX_TX_SLOTS; i++)
		conn->tx_free[i] = &conn->tx[i];
	conn->ntx_free = BX_TX_SLOTS;
	for (i = 0; i < BX_RX_BUFS; i++) {
		ret = post_rx(conn, &conn->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}
ALLOW_ERROR_INJECTION(bx_qp_setup, ERRNO);

/* The QP side of a new connection (bx_conn_alloc()). */
void bx_qp_init(struct bx_conn *conn)
{
	conn->err_cqe.done = wr_error;
	INIT_WORK(&conn->qp_err, conn_qp_err_work);
}
