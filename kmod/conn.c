// SPDX-License-Identifier: GPL-2.0
/*
 * bx: peers and connections.
 *
 * Every process on the host reaches a peer host through one RC connection
 * that this file owns: the first operation towards a peer creates it
 * (rdma_cm: resolve address, resolve route, connect), later operations of
 * any process share it, and a peer connecting to us gets one on its
 * connect request. Messages of all processes are multiplexed on it with
 * the header of wire.h.
 *
 * Each connection has BX_RX_BUFS receive buffers and BX_TX_SLOTS send
 * buffers of BX_MSG_SIZE bytes. Receive credits (as in net/rds/ib_send.c):
 * the handshake tells each side how many buffers the other posted; every
 * message consumes one credit and carries back the credits for buffers
 * its sender reposted since its last message; an explicit CREDIT message
 * goes out when BX_CREDIT_BATCH credits are owed and nothing else is
 * queued. The last credit is reserved for CREDIT messages, so two peers
 * can never both wait for credits. QPs use rnr_retry_count 0: a credit bug
 * shows up as an error, never as a silent retry.
 *
 * Simultaneous connects: when a connect request arrives while our own
 * attempt to the same peer is in progress, the side with the lower address
 * keeps its own attempt and rejects the request; the other side accepts
 * it and abandons its attempt. Both apply the same rule, so one survives.
 *
 * Teardown (bx_conn_fail() -> conn_teardown(), in order): the state
 * becomes DOWN, so nothing new is queued; the peer forgets the connection
 * and its waiting operations fail; a kick still posting finishes
 * (conn_kick_wait()); the QP is drained (which moves it to the error
 * state), so every posted work request has run its completion handler;
 * operations still awaiting a response and those still queued fail or
 * are parked (their MRs are invalidated on the device's registration QP,
 * see reg.c); the QP, CQ and buffers are freed; then, once its port is up
 * (conn_cm_may_send()), the cm_id is disconnected and destroyed. A
 * connection is torn down when its peer disconnects or errors, when its
 * device goes away (bx_conn_remove_dev(), before ib_core frees the
 * device) and at unload.
 */

#include <linux/error-injection.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/mr_pool.h>

#include "conn.h"
#include "file.h"
#include "nl.h"
#include "nl-gen.h"
#include "op.h"
#include "params.h"
#include "wire.h"

u64 bx_epoch;

/* Peer table. Peers are never freed before unload, so ids stay valid. */
static DEFINE_XARRAY_ALLOC1(bx_peers);
/* Serializes lookups-or-creates of peers by address. */
static DEFINE_MUTEX(bx_peers_lock);

/* All connections not yet torn down; for debugfs and device removal. */
static LIST_HEAD(bx_conns);
static DEFINE_MUTEX(bx_conns_lock);	/* bx_conns, bx_conns_gen */
/* Changes with every add to or removal from bx_conns (netlink dumps). */
static unsigned int bx_conns_gen = 1;

/* Teardown and QP error work. */
static struct workqueue_struct *bx_wq;

static struct rdma_cm_id *bx_listener;

#define BX_CONN_F_QP_ERR	0

static bool addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr);
}

/* Compare the addresses of two sockaddrs of one family (memcmp order). */
static int addr_cmp(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family == AF_INET)
		return memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			      &((const struct sockaddr_in *)b)->sin_addr, 4);
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

static void peer_recover_work(struct work_struct *work);

struct bx_peer *bx_peer_get(const struct sockaddr *addr)
{
	struct bx_peer *peer;
	unsigned long id;
	u32 new_id;

	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return ERR_PTR(-EAFNOSUPPORT);

	mutex_lock(&bx_peers_lock);
	xa_for_each(&bx_peers, id, peer) {
		if (addr_equal((struct sockaddr *)&peer->addr, addr))
			goto out;
	}
	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer) {
		peer = ERR_PTR(-ENOMEM);
		goto out;
	}
	mutex_init(&peer->lock);
	INIT_LIST_HEAD(&peer->pending);
	spin_lock_init(&peer->sess_lock);
	INIT_LIST_HEAD(&peer->unresolved);
	INIT_LIST_HEAD(&peer->parked);
	INIT_DELAYED_WORK(&peer->recover_work, peer_recover_work);
	if (addr->sa_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&peer->addr;

		*sin = *(const struct sockaddr_in *)addr;
		sin->sin_port = htons(BX_PORT);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&peer->addr;

		*sin6 = *(const struct sockaddr_in6 *)addr;
		sin6->sin6_port = htons(BX_PORT);
	}
	if (xa_alloc(&bx_peers, &new_id, peer, XA_LIMIT(1, BX_PEERS_MAX),
		     GFP_KERNEL)) {
		kfree(peer);
		peer = ERR_PTR(-ENOSPC);
		goto out;
	}
	peer->id = new_id;
out:
	mutex_unlock(&bx_peers_lock);
	return peer;
}

struct bx_peer *bx_peer_find(u32 id)
{
	return xa_load(&bx_peers, id);
}

void bx_conn_get(struct bx_conn *conn)
{
	kref_get(&conn->ref);
}

static void conn_release(struct kref *ref)
{
	struct bx_conn *conn = container_of(ref, struct bx_conn, ref);

	if (conn->bdev)
		bx_dev_put(conn->bdev);
	xa_destroy(&conn->ops);
	kfree(conn);
}

void bx_conn_put(struct bx_conn *conn)
{
	kref_put(&conn->ref, conn_release);
}

static void conn_teardown(struct work_struct *work);
static bool conn_port_up(struct bx_conn *conn);
static void conn_cm_work(struct work_struct *work);
static void conn_qp_err_work(struct work_struct *work);
static void conn_retry_work(struct work_struct *work);
static void conn_connect_timeout(struct work_struct *work);
static void conn_keepalive(struct work_struct *work);

static struct bx_conn *conn_alloc(struct bx_peer *peer, bool active)
{
	struct bx_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return NULL;
	kref_init(&conn->ref);
	conn->peer = peer;
	conn->active = active;
	conn->state = BX_CONN_STATE_CONNECTING;
	spin_lock_init(&conn->lock);
	INIT_LIST_HEAD(&conn->flows);
	INIT_LIST_HEAD(&conn->ctlq);
	INIT_LIST_HEAD(&conn->readyq);
	INIT_LIST_HEAD(&conn->retryq);
	INIT_LIST_HEAD(&conn->pieceq);
	INIT_LIST_HEAD(&conn->host_node[BX_HW_TX]);
	INIT_LIST_HEAD(&conn->host_node[BX_HW_RX]);
	bx_drr_init(&conn->txq, READ_ONCE(bx_drr_quantum));
	bx_drr_init(&conn->rdq, READ_ONCE(bx_drr_quantum));
	INIT_DELAYED_WORK(&conn->retry_work, conn_retry_work);
	INIT_DELAYED_WORK(&conn->connect_work, conn_connect_timeout);
	INIT_DELAYED_WORK(&conn->keepalive, conn_keepalive);
	INIT_DELAYED_WORK(&conn->cm_work, conn_cm_work);
	xa_init_flags(&conn->ops, XA_FLAGS_ALLOC1);
	INIT_WORK(&conn->teardown, conn_teardown);
	INIT_WORK(&conn->qp_err, conn_qp_err_work);
	init_completion(&conn->torn_down);
	init_completion(&conn->set_up);

	mutex_lock(&bx_conns_lock);
	list_add_tail(&conn->node, &bx_conns);
	bx_conns_gen++;
	mutex_unlock(&bx_conns_lock);
	return conn;
}

void bx_conn_fail(struct bx_conn *conn, int err)
{
	spin_lock(&conn->lock);
	if (conn->state == BX_CONN_STATE_DOWN) {
		spin_unlock(&conn->lock);
		return;
	}
	conn->state = BX_CONN_STATE_DOWN;
	conn->err = err;
	/*
	 * The teardown's reference, taken with the state: whoever sees DOWN
	 * may drop its own (bx_conn_submit(), the recovery work) at once.
	 */
	bx_conn_get(conn);
	spin_unlock(&conn->lock);
	pr_info("connection %s %pISc down: %d (%pS)\n",
		conn->active ? "to" : "from", &conn->peer->addr, err,
		__builtin_return_address(0));
	bx_nl_conn_event(conn, BX_CMD_CONN_DOWN_NTF);
	queue_work(bx_wq, &conn->teardown);
}

static void conn_qp_err_work(struct work_struct *work)
{
	struct bx_conn *conn = container_of(work, struct bx_conn, qp_err);

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
	default:
		break;
	}
	if (!test_and_set_bit(BX_CONN_F_QP_ERR, &conn->flags)) {
		bx_conn_get(conn);
		queue_work(bx_wq, &conn->qp_err);
	}
}

static struct ib_device *conn_ibdev(struct bx_conn *conn)
{
	return conn->bdev->ibdev;
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
	b->sge.lkey = conn->bdev->pd->local_dma_lkey;
	ib_dma_sync_single_for_device(conn_ibdev(conn), b->dma, BX_MSG_SIZE,
				      DMA_BIDIRECTIONAL);
	return ib_post_recv(conn->qp, &wr, NULL);
}

static void rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct bx_buf *b = container_of(wc->wr_cqe, struct bx_buf, cqe);
	struct bx_conn *conn = b->conn;
	struct bx_msg msg;
	int ret;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("receive error %s on qp %u\n",
					    ib_wc_status_msg(wc->status),
					    conn->qp->qp_num);
		bx_conn_fail(conn, -EIO);
		return;
	}
	ib_dma_sync_single_for_cpu(conn_ibdev(conn), b->dma, BX_MSG_SIZE,
				   DMA_BIDIRECTIONAL);
	if (bx_wire_parse(b->data, wc->byte_len, BX_EAGER_MAX, &msg)) {
		pr_warn_ratelimited("malformed message (%u bytes) on qp %u\n",
				    wc->byte_len, conn->qp->qp_num);
		bx_conn_fail(conn, -EPROTO);
		return;
	}

	spin_lock(&conn->lock);
	conn->rx_msgs++;
	/* A peer cannot grant more buffers than it said it posted. */
	ret = bx_credits_add(&conn->cr, msg.credits);
	spin_unlock(&conn->lock);
	if (ret) {
		pr_warn_ratelimited("peer granted too many credits\n");
		bx_conn_fail(conn, -EPROTO);
		return;
	}

	if (msg.type != BX_MSG_CREDIT)
		bx_op_recv(conn, &msg);

	if (post_rx(conn, b)) {
		bx_conn_fail(conn, -EIO);
		return;
	}
	spin_lock(&conn->lock);
	bx_credits_posted(&conn->cr);
	spin_unlock(&conn->lock);
	bx_conn_kick(conn);
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
	if (wc->status == IB_WC_RNR_RETRY_EXC_ERR)
		conn->rnr_events++;
	spin_unlock(&conn->lock);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		err = wc->status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
		if (wc->status == IB_WC_RNR_RETRY_EXC_ERR)
			atomic64_inc(&bx_rnr_events);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("send error %s on qp %u\n",
					    ib_wc_status_msg(wc->status),
					    conn->qp->qp_num);
		bx_conn_fail(conn, err);
	}
	if (op)
		bx_op_sent(op, req_id, err);
	if (!err)
		bx_conn_kick(conn);
}

/* Prepare the SEND of @slot, @len bytes already built in it. */
struct ib_send_wr *bx_conn_prep_send(struct bx_conn *conn, struct bx_buf *slot,
				     u32 len)
{
	slot->sge.addr = slot->dma;
	slot->sge.length = len;
	slot->sge.lkey = conn->bdev->pd->local_dma_lkey;
	slot->wr = (struct ib_send_wr){
		.wr_cqe		= &slot->cqe,
		.sg_list	= &slot->sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	ib_dma_sync_single_for_device(conn_ibdev(conn), slot->dma, len,
				      DMA_BIDIRECTIONAL);
	return &slot->wr;
}

/*
 * Post a chain of work requests, unless the connection is going down:
 * once teardown set DOWN under the lock, nothing reaches the QP it drains.
 */
int bx_conn_post(struct bx_conn *conn, struct ib_send_wr *first)
{
	int ret;

	spin_lock(&conn->lock);
	if (conn->state != BX_CONN_STATE_UP)
		ret = -ECONNRESET;
	else
		ret = ib_post_send(conn->qp, first, NULL);
	spin_unlock(&conn->lock);
	return ret;
}

/* ---- flow control: windows, admission, scheduling ---------------------- */

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
	struct list_head	waiters[BX_HW_N];
	/*
	 * Operations each host window admitted, and the most it admitted
	 * for others while one connection waited for it.
	 */
	u64			admits[BX_HW_N];
	u64			passed_max[BX_HW_N];
	u64			busy_retries;
	u64			small_passes;	/* flow_admit_small() */
} bx_host = {
	.lock		= __SPIN_LOCK_UNLOCKED(bx_host.lock),
	.waiters	= {
		LIST_HEAD_INIT(bx_host.waiters[BX_HW_TX]),
		LIST_HEAD_INIT(bx_host.waiters[BX_HW_RX]),
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
	}
}

/*
 * @conn waits for host window @k: join its line (at the head if @head),
 * unless it is in it. bx_host.lock held.
 */
static void flow_line_join(struct bx_conn *conn, enum bx_hw k, bool head)
{
	lockdep_assert_held(&bx_host.lock);
	if (!conn->host_since[k])
		conn->host_since[k] = bx_host.admits[k] + 1;
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
 * between its pieces (performance.rst, "Smaller pieces through a lossy
 * switch").
 */
static bool flow_admit(struct bx_conn *conn, struct bx_op *op, bool rd)
{
	struct bx_win *w = rd ? &conn->rdwnd : &conn->wnd;
	enum bx_hw k = rd ? BX_HW_RX : BX_HW_TX;
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
		reads = bx_op_cut(op) ? 1 : op->rdma->nrdv;
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
		if (conn->host_since[k]) {
			bx_host.passed_max[k] =
				max(bx_host.passed_max[k], bx_host.admits[k] -
				    (conn->host_since[k] - 1));
			conn->host_since[k] = 0;
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
		flow_line_join(conn, BX_HW_TX, conn->host_turn[BX_HW_TX]);
		conn->host_turn[BX_HW_TX] = false;
	}
	spin_unlock(&bx_host.lock);
	if (ok) {
		bx_win_charge_small(&conn->wnd);
		op->charged = true;
		op->small = true;
		op->wreads = 0;
		conn->small_passes++;
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
static void flow_wake_host(enum bx_hw k)
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
		flow_wake_host(rd ? BX_HW_RX : BX_HW_TX);
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
			/*
			 * A push's sender must hear of it: the op becomes
			 * its PUSH_DONE, queued with our reference.
			 */
			if (rd) {
				bx_op_read_abort(op, -ENOMEM);
				return;
			}
			bx_op_fail(op, -ENOMEM);
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
 * The receiver had no buffer posted for @op: send it again later, still
 * admitted and registered. Backs off from 1 to 64 jiffies.
 */
void bx_conn_retry(struct bx_conn *conn, struct bx_op *op)
{
	unsigned long delay = 1UL << min_t(u8, op->retries, 6);

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

static void conn_retry_work(struct work_struct *work)
{
	struct bx_conn *conn = container_of(to_delayed_work(work),
					    struct bx_conn, retry_work);

	spin_lock(&conn->lock);
	list_splice_tail_init(&conn->retryq, &conn->readyq);
	spin_unlock(&conn->lock);
	bx_conn_kick(conn);
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

/* Decide the next thing to do on @conn; conn->lock held. */
static enum kick_act kick_next(struct bx_conn *conn, struct bx_op **opp,
			       struct bx_buf **slotp, struct bx_msg *credit)
{
	struct bx_drr_flow *flow;
	struct bx_drr_item *it;
	struct bx_flowq *fq;
	struct bx_op *op;
	bool queued;

	if (conn->state != BX_CONN_STATE_UP)
		return KICK_NONE;
	bx_credits_set_batch(&conn->cr, READ_ONCE(bx_credit_batch));
	conn->txq.quantum = READ_ONCE(bx_drr_quantum);
	conn->rdq.quantum = conn->txq.quantum;

	/* 1. Control messages, then what is admitted: need a buffer and a
	 * credit, never the last one.
	 */
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
		if (q)
			break;

		/*
		 * 2. Nothing admitted waits: admit the next send, or if it
		 * must wait, a small one queued behind another.
		 */
		it = bx_drr_peek(&conn->txq, &flow);
		if (!it)
			break;
		op = container_of(it, struct bx_op, qi);
		if (!flow_admit(conn, op, false)) {
			it = bx_drr_find(&conn->txq, BX_SMALL_OP, &flow);
			if (!it)
				break;
			op = container_of(it, struct bx_op, qi);
			if (!flow_admit_small(conn, op))
				break;
		}
		bx_drr_pop(&conn->txq, flow);
		fq = container_of(flow, struct bx_flowq, drr);
		flowq_put(fq);
		if (op->needs_reg && !op->registered) {
			*opp = op;
			return KICK_REG;
		}
		if (op->kind == BX_K_REPLY && bx_op_cut(op))
			list_add_tail(&op->node, &conn->pieceq);
		else
			list_add_tail(&op->node, &conn->readyq);
	}

	/*
	 * 2b. The next piece of a cut transfer: after the messages that
	 * could go, and also while they wait for credits or buffers.
	 */
	list_for_each_entry(op, &conn->pieceq, node) {
		if (op->kind == BX_K_REPLY) {
			if (conn->wpieces >= BX_WPIECES_MAX)
				continue;
			conn->wpieces++;
		}
		list_del_init(&op->node);
		*opp = op;
		return KICK_PIECE;
	}

	/* 3. RDMA READs of rendezvous pushes: receiver admission. */
	it = bx_drr_peek(&conn->rdq, &flow);
	if (it) {
		op = container_of(it, struct bx_op, qi);
		if (flow_admit(conn, op, true)) {
			bx_drr_pop(&conn->rdq, flow);
			fq = container_of(flow, struct bx_flowq, drr);
			flowq_put(fq);
			*opp = op;
			return KICK_READ;
		}
	}

	/* 4. A bare credit update, if owed and nothing will carry it, or
	 * as a keepalive.
	 */
	queued = !list_empty(&conn->ctlq) || !list_empty(&conn->readyq);
	if (conn->ntx_free &&
	    (bx_credits_update_due(&conn->cr, queued) || conn->ka_due)) {
		conn->ka_due = false;
		if (bx_credits_take_update(&conn->cr)) {
			memset(credit, 0, sizeof(*credit));
			credit->type = BX_MSG_CREDIT;
			*slotp = kick_slot(conn, credit);
			return KICK_CREDIT;
		}
		conn->cr.update_queued = false;
	}
	return KICK_NONE;
}

static void kick_send(struct bx_conn *conn, struct bx_op *op,
		      struct bx_buf *slot)
{
	u16 grant = op->msg.credits;
	int ret;

	u32 req_id;

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
	bx_op_sent(op, req_id, ret);
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
			/* The teardown may wait for us (conn_kick_wait()). */
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

static void conn_kick_wait(struct bx_conn *conn)
{
	wait_var_event(&conn->kicking, conn_kick_idle(conn));
}

static void bufs_free(struct bx_conn *conn, struct bx_buf *bufs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!bufs[i].data)
			continue;
		if (bufs[i].dma)
			ib_dma_unmap_single(conn_ibdev(conn), bufs[i].dma,
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
		b->data = kmalloc(BX_MSG_SIZE, GFP_KERNEL);
		if (!b->data)
			return -ENOMEM;
		b->dma = ib_dma_map_single(conn_ibdev(conn), b->data,
					   BX_MSG_SIZE, DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(conn_ibdev(conn), b->dma)) {
			b->dma = 0;
			return -ENOMEM;
		}
	}
	return 0;
}

/* Free what conn_setup_qp() created; tolerates partial setup. */
static void conn_free_qp(struct bx_conn *conn)
{
	WRITE_ONCE(conn->qpn, 0);
	if (conn->qp) {
		if (conn->cm_id && conn->cm_id->qp)
			rdma_destroy_qp(conn->cm_id);
		else
			ib_destroy_qp(conn->qp);
		conn->qp = NULL;
	}
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	if (conn->bdev) {
		bufs_free(conn, conn->rx, BX_RX_BUFS);
		bufs_free(conn, conn->tx, BX_TX_SLOTS);
	}
}

/* Create CQ, QP, MR pool and buffers on conn->bdev; post the receives. */
static int conn_setup_qp(struct bx_conn *conn)
{
	struct ib_device *dev = conn_ibdev(conn);
	struct ib_qp_init_attr attr = {};
	int ret, i, nsge;

	conn->cq = ib_alloc_cq(dev, conn, 4096 + BX_RX_BUFS, 0,
			       IB_POLL_WORKQUEUE);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return ret;
	}
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
	ret = rdma_create_qp(conn->cm_id, conn->bdev->pd, &attr);
	if (ret)
		return ret;
	conn->qp = conn->cm_id->qp;
	WRITE_ONCE(conn->qpn, conn->qp->qp_num);

	ret = bufs_alloc(conn, conn->rx, BX_RX_BUFS, rx_done);
	if (ret)
		return ret;
	ret = bufs_alloc(conn, conn->tx, BX_TX_SLOTS, tx_done);
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
ALLOW_ERROR_INJECTION(conn_setup_qp, ERRNO);

static void conn_params(struct bx_conn *conn, struct bx_wire_conn *w,
			struct rdma_conn_param *param)
{
	struct bx_conn_params p = {
		.credits	= BX_RX_BUFS,
		.msg_size	= BX_MSG_SIZE,
		.epoch		= bx_epoch,
	};
	struct ib_device_attr *a = &conn_ibdev(conn)->attrs;

	bx_wire_conn_build(w, &p);
	memset(param, 0, sizeof(*param));
	param->private_data = w;
	param->private_data_len = sizeof(*w);
	param->responder_resources = min(a->max_qp_rd_atom, 16);
	param->initiator_depth = min_t(int, a->max_qp_init_rd_atom,
				       READ_ONCE(bx_rd_depth));
	param->retry_count = 6;
	param->rnr_retry_count = 0;
}

static void conn_set_peer(struct bx_conn *conn, const struct bx_conn_params *p)
{
	spin_lock(&conn->lock);
	bx_credits_init(&conn->cr, p->credits, READ_ONCE(bx_credit_batch));
	bx_credits_set_own(&conn->cr, BX_RX_BUFS);
	spin_unlock(&conn->lock);
	conn->peer_msg_size = p->msg_size;
	conn->peer_epoch = p->epoch;
}

/* Find the bx_dev of @ibdev and take a reference, unless it is going. */
static struct bx_dev *conn_dev(struct ib_device *ibdev)
{
	return ibdev ? bx_dev_get(ibdev) : NULL;
}

static void conn_established(struct bx_conn *conn)
{
	struct bx_peer *peer = conn->peer;
	struct bx_op *op, *tmp;
	bool restarted;
	LIST_HEAD(list);

	mutex_lock(&peer->lock);
	spin_lock(&conn->lock);
	if (conn->state != BX_CONN_STATE_CONNECTING) {
		spin_unlock(&conn->lock);
		mutex_unlock(&peer->lock);
		return;
	}
	conn->state = BX_CONN_STATE_UP;
	conn->established = true;
	pr_info("connection %s %pISc up\n", conn->active ? "to" : "from",
		&conn->peer->addr);
	if (peer->conn == conn)
		list_splice_init(&peer->pending, &list);
	/* A new incarnation: nothing of the old one's state is valid. */
	restarted = peer->epoch && peer->epoch != conn->peer_epoch;
	if (restarted)
		WRITE_ONCE(peer->restarts, peer->restarts + 1);
	peer->epoch = conn->peer_epoch;
	spin_unlock(&conn->lock);
	mutex_unlock(&peer->lock);
	bx_nl_conn_event(conn, BX_CMD_CONN_UP_NTF);
	queue_delayed_work(bx_wq, &conn->keepalive,
			   msecs_to_jiffies(BX_KEEPALIVE_MS));
	if (restarted) {
		pr_info("peer %pISc restarted (epoch %llx)\n", &peer->addr,
			conn->peer_epoch);
		bx_nl_conn_event(conn, BX_CMD_PEER_RESTART_NTF);
	}
	list_for_each_entry_safe(op, tmp, &list, node) {
		list_del_init(&op->node);
		bx_conn_get(conn);
		op->conn = conn;
		bx_conn_queue(conn, op);
	}
	bx_conn_kick(conn);
	if (READ_ONCE(peer->recovering))
		mod_delayed_work(bx_wq, &peer->recover_work, 0);
}

/*
 * Give @conn its device @bdev (a reference, which it consumes; NULL: none),
 * unless the device is going: its removal marks it, then scans bx_conns
 * for its connections under bx_conns_lock (bx_conn_remove_dev()), so
 * either the scan sees @conn on it or we see the mark.
 */
static int conn_bind_dev(struct bx_conn *conn, struct bx_dev *bdev)
{
	int ret = 0;

	if (!bdev)
		return -ENODEV;
	mutex_lock(&bx_conns_lock);
	if (READ_ONCE(bdev->removing))
		ret = -ENODEV;
	else
		conn->bdev = bdev;
	mutex_unlock(&bx_conns_lock);
	if (ret)
		bx_dev_put(bdev);
	return ret;
}

/* A connect request on the listener; non-zero return destroys @id. */
static int conn_request(struct rdma_cm_id *id, const struct rdma_cm_event *ev)
{
	struct sockaddr *remote = (struct sockaddr *)&id->route.addr.dst_addr;
	struct sockaddr *local = (struct sockaddr *)&id->route.addr.src_addr;
	struct rdma_conn_param param;
	struct bx_conn_params p;
	struct bx_wire_conn w;
	struct bx_conn *conn, *old;
	struct bx_peer *peer;
	struct bx_dev *bdev;
	int ret;

	ret = bx_wire_conn_parse(ev->param.conn.private_data,
				 ev->param.conn.private_data_len, &p);
	if (ret)
		return ret;
	bdev = conn_dev(id->device);
	if (!bdev)
		return -ENODEV;
	peer = bx_peer_get(remote);
	if (IS_ERR(peer)) {
		bx_dev_put(bdev);
		return PTR_ERR(peer);
	}
	conn = conn_alloc(peer, false);
	if (!conn) {
		bx_dev_put(bdev);
		return -ENOMEM;
	}
	conn->cm_id = id;
	WRITE_ONCE(conn->cm_begun, true);
	id->context = conn;
	conn_set_peer(conn, &p);
	ret = conn_bind_dev(conn, bdev);
	if (ret)
		goto err_fail;

	mutex_lock(&peer->lock);
	old = peer->conn;
	if (old && old->state == BX_CONN_STATE_CONNECTING && old->active &&
	    addr_cmp(local, remote) < 0) {
		/* Our own attempt wins; the peer accepts it instead. */
		mutex_unlock(&peer->lock);
		ret = -EALREADY;
		goto err_fail;
	}
	if (old) {
		/* Superseded attempt, or the peer restarted. */
		peer->conn = NULL;
		bx_conn_fail(old, -ECONNRESET);
		bx_conn_put(old);
	}
	bx_conn_get(conn);
	peer->conn = conn;
	mutex_unlock(&peer->lock);

	WRITE_ONCE(conn->ack_timeout, READ_ONCE(bx_ack_timeout));
	rdma_set_ack_timeout(id, READ_ONCE(conn->ack_timeout));
	ret = conn_setup_qp(conn);
	if (ret)
		goto err_fail;
	conn_params(conn, &w, &param);
	param.responder_resources = min_t(u8, param.responder_resources,
					  ev->param.conn.initiator_depth);
	param.initiator_depth = min_t(u8, param.initiator_depth,
				      ev->param.conn.responder_resources);
	ret = rdma_accept(id, &param);
	if (ret)
		goto err_fail;
	/*
	 * The QP is ready to send once accepted, and the peer may start
	 * before our ESTABLISHED event arrives: we are up now.
	 */
	conn_established(conn);
	complete_all(&conn->set_up);
	/* The peer's reference keeps it; ours (from conn_alloc()) goes. */
	bx_conn_put(conn);
	return 0;

err_fail:
	/* rdma_cm destroys @id when we return an error. */
	WRITE_ONCE(conn->qpn, 0);
	if (conn->qp && id->qp)
		rdma_destroy_qp(id);
	conn->qp = NULL;
	conn->cm_id = NULL;
	complete_all(&conn->set_up);
	bx_conn_fail(conn, ret);
	bx_conn_put(conn);
	return ret;
}

static int conn_route_resolved(struct bx_conn *conn)
{
	struct rdma_conn_param param;
	struct bx_wire_conn w;
	int ret;

	/* Torn down meanwhile (see conn_teardown()): nothing to set up. */
	if (READ_ONCE(conn->state) == BX_CONN_STATE_DOWN)
		return -ECONNRESET;
	/* A request sent on a port that is down kills rxe's QP1. */
	if (!conn_port_up(conn))
		return -ENETDOWN;
	ret = conn_setup_qp(conn);
	if (ret)
		return ret;
	conn_params(conn, &w, &param);
	WRITE_ONCE(conn->cm_begun, true);
	return rdma_connect_locked(conn->cm_id, &param);
}

/*
 * The peer refused @conn or closed it while it was still ours: it may be
 * going away (its device removed, bx unloading, the host rebooting). The
 * next round of recovery waits before it tries again; a peer that is back
 * sooner connects to us itself. rxe gives a reason of its own: a connect
 * request arriving while the peer's device goes away may meet ib_core's
 * MAD layer destroying its QP under a receive it just completed.
 */
static void peer_hold(struct bx_conn *conn)
{
	struct bx_peer *peer = conn->peer;

	if (READ_ONCE(conn->state) == BX_CONN_STATE_DOWN)
		return;		/* we closed it first */
	spin_lock(&peer->sess_lock);
	peer->held = true;
	spin_unlock(&peer->sess_lock);
}

static int bx_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct bx_conn *conn = id->context;
	struct bx_conn_params p;
	int ret = 0;

	if (!conn) {
		/* The listener: only connect requests concern us. */
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return conn_request(id, ev);
		return 0;
	}

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (READ_ONCE(conn->state) == BX_CONN_STATE_DOWN)
			break;	/* torn down meanwhile */
		ret = conn_bind_dev(conn, conn_dev(id->device));
		if (!ret)
			ret = rdma_resolve_route(id, 2000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = conn_route_resolved(conn);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (conn->active) {
			ret = bx_wire_conn_parse(ev->param.conn.private_data,
						 ev->param.conn.private_data_len,
						 &p);
			if (ret)
				break;
			conn_set_peer(conn, &p);
		}
		conn_established(conn);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		ret = -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		ret = ev->status ? ev->status : -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_REJECTED:
		peer_hold(conn);
		ret = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		peer_hold(conn);
		fallthrough;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		ret = -ECONNRESET;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* Handled through the ib_client (bx_conn_remove_dev()). */
	default:
		break;
	}
	if (ret) {
		pr_info("cm event %s (status %d) on connection %s %pISc\n",
			rdma_event_msg(ev->event), ev->status,
			conn->active ? "to" : "from", &conn->peer->addr);
		bx_conn_fail(conn, ret < 0 ? ret : -EIO);
	}
	/* We own every id but the ones conn_request() refuses. */
	return 0;
}

/*
 * An attempt still connecting after connect_timeout_ms fails with
 * -ETIMEDOUT: its waiting operations were never sent, and the next
 * submission starts afresh. (Teardown cancels this before the last put.)
 */
static void conn_connect_timeout(struct work_struct *work)
{
	struct bx_conn *conn = container_of(to_delayed_work(work),
					    struct bx_conn, connect_work);

	if (READ_ONCE(conn->state) == BX_CONN_STATE_CONNECTING)
		bx_conn_fail(conn, -ETIMEDOUT);
}

/* See struct bx_conn, @keepalive. Teardown cancels it. */
static void conn_keepalive(struct work_struct *work)
{
	struct bx_conn *conn = container_of(to_delayed_work(work),
					    struct bx_conn, keepalive);
	bool kick = false;

	spin_lock(&conn->lock);
	if (conn->state != BX_CONN_STATE_UP) {
		spin_unlock(&conn->lock);
		return;
	}
	if (!xa_empty(&conn->ops) && conn->tx_msgs == conn->ka_tx) {
		conn->ka_due = true;
		kick = true;
	}
	conn->ka_tx = conn->tx_msgs;
	spin_unlock(&conn->lock);
	if (kick)
		bx_conn_kick(conn);
	queue_delayed_work(bx_wq, &conn->keepalive,
			   msecs_to_jiffies(BX_KEEPALIVE_MS));
}

/* Connect to @peer; called with peer->lock held. */
static struct bx_conn *conn_connect(struct bx_peer *peer)
{
	struct rdma_cm_id *id;
	struct bx_conn *conn;
	int ret;

	lockdep_assert_held(&peer->lock);
	conn = conn_alloc(peer, true);
	if (!conn)
		return ERR_PTR(-ENOMEM);
	id = rdma_create_id(&init_net, bx_cm_handler, conn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto err_fail;
	}
	conn->cm_id = id;
	WRITE_ONCE(conn->ack_timeout, READ_ONCE(bx_ack_timeout));
	rdma_set_ack_timeout(id, READ_ONCE(conn->ack_timeout));
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&peer->addr,
				2000);
	if (ret)
		goto err_fail;
	queue_delayed_work(bx_wq, &conn->connect_work,
			   msecs_to_jiffies(READ_ONCE(bx_connect_timeout_ms)));
	return conn;

err_fail:
	bx_conn_fail(conn, ret);
	bx_conn_put(conn);
	return ERR_PTR(ret);
}

/*
 * @peer's connection or connection attempt, starting one if there is none
 * (or only a dead one not yet torn down); peer->lock held. An ERR_PTR if
 * an attempt could not even start.
 */
static struct bx_conn *peer_conn(struct bx_peer *peer)
{
	struct bx_conn *conn = peer->conn;

	lockdep_assert_held(&peer->lock);
	if (conn && READ_ONCE(conn->state) == BX_CONN_STATE_DOWN) {
		/* Dead and not yet torn down: start afresh. */
		peer->conn = NULL;
		bx_conn_put(conn);
		conn = NULL;
	}
	if (!conn) {
		conn = conn_connect(peer);
		if (!IS_ERR(conn))
			peer->conn = conn;
	}
	return conn;
}

/* ---- recovery ------------------------------------------------------------ */

/*
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

atomic64_t bx_dup_pushes = ATOMIC64_INIT(0);
atomic64_t bx_recovered_ops = ATOMIC64_INIT(0);
atomic64_t bx_recover_failed = ATOMIC64_INIT(0);

/* Set once the module is going: nothing is parked any more. */
static bool bx_conn_closing;

bool bx_recover_allowed(void)
{
	return READ_ONCE(bx_recover_ms) && !READ_ONCE(bx_conn_closing);
}

/*
 * Number the push @op, about to be sent on @conn, unless it has a number
 * (sent again after a connection failure); set its msg.seq and msg.lag.
 */
void bx_push_number(struct bx_conn *conn, struct bx_op *op)
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
void bx_push_resolved(struct bx_op *op)
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
enum bx_replay_verdict bx_replay_check(struct bx_conn *conn,
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

/* The delivery bx_replay_check() allowed ended. */
void bx_replay_done(struct bx_conn *conn, u64 epoch, u64 seq, bool delivered)
{
	struct bx_peer *peer = conn->peer;

	spin_lock(&peer->sess_lock);
	bx_replay_end(&peer->rp, epoch, seq, delivered);
	spin_unlock(&peer->sess_lock);
}

/* Park @op (with a reference for the list) until @peer reconnects. */
void bx_peer_park(struct bx_peer *peer, struct bx_op *op)
{
	bool start;

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

static void peer_recover_work(struct work_struct *work)
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
		peer_conn(peer);	/* failures: the next round tries again */
	mutex_unlock(&peer->lock);

	if (first)
		bx_nl_peer_event(peer, BX_CMD_RECOVERING_NTF);
	if (!up && !expired) {
		/* conn_established() calls us as soon as one is up. */
		queue_delayed_work(bx_wq, &peer->recover_work,
				   msecs_to_jiffies(peer->backoff));
		return;
	}

	list_for_each_entry_safe(op, tmp, &list, node) {
		list_del_init(&op->node);
		if (!up || READ_ONCE(op->file->dead) ||
		    (op->kind == BX_K_PUSH && op->seq &&
		     op->epoch != up->peer_epoch)) {
			if (!op->fresh)
				failed++;
			bx_op_fail(op, parked_errno(op, !!up));
			bx_op_put(op);
			continue;
		}
		bx_conn_get(up);
		op->conn = up;
		if (!op->fresh)
			resent++;
		op->fresh = false;
		bx_conn_queue(up, op);
	}
	spin_lock(&peer->sess_lock);
	peer->recovered += resent;
	peer->recover_failed += failed;
	spin_unlock(&peer->sess_lock);
	atomic64_add(resent, &bx_recovered_ops);
	atomic64_add(failed, &bx_recover_failed);
	pr_info("peer %pISc: recovery %s: %u operations sent again, %u failed\n",
		&peer->addr, up ? "done" : "gave up", resent, failed);
	bx_nl_peer_event(peer, BX_CMD_RECOVERED_NTF);
	if (up) {
		bx_conn_kick(up);
		bx_conn_put(up);
	}
}

/*
 * Send @op (whose reference passes here) to @peer: on the connection if it
 * is up, else once a connection comes up, creating one if there is none.
 */
void bx_conn_submit(struct bx_peer *peer, struct bx_op *op)
{
	struct bx_conn *conn;

	mutex_lock(&peer->lock);
	conn = peer->conn;
	if ((!conn || READ_ONCE(conn->state) == BX_CONN_STATE_DOWN) &&
	    (op->kind == BX_K_PUSH || op->kind == BX_K_PULL) &&
	    READ_ONCE(peer->recovering)) {
		/*
		 * The recovery's back-off decides when to try again: a
		 * submission does not start an attempt of its own.
		 */
		mutex_unlock(&peer->lock);
		op->fresh = true;
		bx_peer_park(peer, op);
		return;
	}
	conn = peer_conn(peer);
	if (IS_ERR(conn)) {
		mutex_unlock(&peer->lock);
		bx_op_fail(op, PTR_ERR(conn));
		bx_op_put(op);
		return;
	}
	if (READ_ONCE(conn->state) == BX_CONN_STATE_UP) {
		bx_conn_get(conn);
		op->conn = conn;
		mutex_unlock(&peer->lock);
		bx_conn_queue(conn, op);
		return;
	}
	list_add_tail(&op->node, &peer->pending);
	mutex_unlock(&peer->lock);
}

/* End every op of @list with @err, or recover it (@lost, op_park()). */
static void fail_list(struct list_head *list, int err, bool lost)
{
	struct bx_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, list, node) {
		list_del_init(&op->node);
		if (lost)
			bx_op_lost(op, err);
		else
			bx_op_fail(op, err);
		bx_op_put(op);
	}
}

/* Move every operation still queued on @conn to @list. */
static void conn_flush_queues(struct bx_conn *conn, struct list_head *list)
{
	struct bx_flowq *fq, *tmp;
	struct bx_drr_item *it;
	int k, puts = 0;

	spin_lock(&conn->lock);
	list_splice_tail_init(&conn->ctlq, list);
	list_splice_tail_init(&conn->readyq, list);
	list_splice_tail_init(&conn->retryq, list);
	list_splice_tail_init(&conn->pieceq, list);
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
	for (k = 0; k < BX_HW_N; k++) {
		conn->host_turn[k] = false;
		conn->host_since[k] = 0;
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

/* How often a teardown waiting for its port looks again (events aside). */
#define BX_PORT_POLL	HZ

/*
 * Is the port of @conn's id up? The netdev's own state changes first: a
 * send can fail (and a connection with it) before ib_core's port cache
 * learns of the link going down. The cache is ACTIVE again only once the
 * port-up event went out, which is what kicks the waiters.
 */
static bool conn_port_up(struct bx_conn *conn)
{
	struct rdma_cm_id *id = conn->cm_id;
	enum ib_port_state state;
	struct net_device *ndev;
	bool up;

	if (!id->device || ib_get_cached_port_state(id->device, id->port_num,
						    &state))
		return true;
	ndev = ib_device_get_netdev(id->device, id->port_num);
	if (!ndev)
		return state == IB_PORT_ACTIVE;
	up = netif_running(ndev) && netif_carrier_ok(ndev);
	dev_put(ndev);
	return up && state == IB_PORT_ACTIVE;
}

/*
 * May @conn's id send its last CM message now? Soft-RoCE puts a QP in the
 * error state for good when it cannot build or send a packet, and its GSI
 * QP (QP1) carries every CM message of the device: one disconnect request
 * or reject sent while the link is down ends all connection management to
 * and from this host until the rxe device is re-created. So an id that
 * began a CM exchange is destroyed only once its port is up again, or
 * when waiting is pointless: its device or bx is going.
 */
static bool conn_cm_may_send(struct bx_conn *conn)
{
	return !READ_ONCE(conn->cm_begun) || !conn->bdev ||
	       READ_ONCE(conn->bdev->removing) || READ_ONCE(bx_conn_closing) ||
	       conn_port_up(conn);
}

/* A port went up or down, a device or bx is going: waiters look again. */
void bx_conn_port_event(void)
{
	struct bx_conn *conn;

	mutex_lock(&bx_conns_lock);
	list_for_each_entry(conn, &bx_conns, node)
		if (conn->cm_waiting)
			mod_delayed_work(bx_wq, &conn->cm_work, 0);
	mutex_unlock(&bx_conns_lock);
}

/* The end of a teardown: the id goes, then the connection. */
static void conn_teardown_end(struct bx_conn *conn)
{
	if (conn->cm_id) {
		if (conn->established)
			rdma_disconnect(conn->cm_id);
		rdma_destroy_id(conn->cm_id);
	}
	conn->cm_id = NULL;

	mutex_lock(&bx_conns_lock);
	list_del_init(&conn->node);
	bx_conns_gen++;
	mutex_unlock(&bx_conns_lock);
	complete_all(&conn->torn_down);

	if (conn->peer_ref)
		bx_conn_put(conn);
	bx_conn_put(conn);
}

/*
 * A teardown whose id may not send yet continues here: every BX_PORT_POLL,
 * and at once on a port event (bx_conn_port_event()). It holds the
 * teardown's references and occupies no worker while it waits.
 */
static void conn_cm_work(struct work_struct *work)
{
	struct bx_conn *conn = container_of(to_delayed_work(work),
					    struct bx_conn, cm_work);
	bool go;

	mutex_lock(&bx_conns_lock);
	go = conn_cm_may_send(conn);
	if (go)
		conn->cm_waiting = false;
	mutex_unlock(&bx_conns_lock);
	if (!go) {
		queue_delayed_work(bx_wq, &conn->cm_work, BX_PORT_POLL);
		return;
	}
	/* An event may have queued us again before we cleared cm_waiting. */
	cancel_delayed_work(&conn->cm_work);
	conn_teardown_end(conn);
}

static void conn_teardown(struct work_struct *work)
{
	struct bx_conn *conn = container_of(work, struct bx_conn, teardown);
	struct bx_peer *peer = conn->peer;
	bool peer_ref = false;
	struct bx_op *op;
	unsigned long id;
	LIST_HEAD(list);
	int err = conn->err;

	/* 1. The peer forgets us; operations waiting for us fail. */
	mutex_lock(&peer->lock);
	if (peer->conn == conn) {
		peer->conn = NULL;
		peer_ref = true;
		list_splice_init(&peer->pending, &list);
	}
	mutex_unlock(&peer->lock);
	/* During a recovery, waiting ones wait for the next attempt. */
	fail_list(&list, err, READ_ONCE(peer->recovering));

	/*
	 * An active attempt's CM handler may be setting up its QP right now
	 * (a connect request from the peer superseded it): let it finish;
	 * once we hold its lock it sees the connection DOWN and stops. We own
	 * an active id (the handler never returns an error for it), so it
	 * cannot go meanwhile.
	 */
	if (conn->active && conn->cm_id) {
		rdma_lock_handler(conn->cm_id);
		rdma_unlock_handler(conn->cm_id);
	}
	/*
	 * A passive one's may still be in conn_request() (device removal
	 * fails it meanwhile); on an error there, rdma_cm destroys the id
	 * once the handler returns, and conn_request() clears @cm_id first.
	 */
	if (!conn->active)
		wait_for_completion(&conn->set_up);

	/*
	 * 2. No kick works on the QP or @ops any more; then flush the QP:
	 * every posted WR runs its completion handler. (Draining moves the
	 * QP to the error state; the peer learns of the end from its own QP,
	 * or from our disconnect request in step 4.)
	 */
	conn_kick_wait(conn);
	if (conn->qp)
		ib_drain_qp(conn->qp);

	/* 3. Nothing more can arrive: fail what waits for a response. */
	xa_for_each(&conn->ops, id, op) {
		xa_erase(&conn->ops, id);
		bx_op_lost(op, err);
		bx_op_put(op);
	}
	cancel_delayed_work_sync(&conn->retry_work);
	cancel_delayed_work_sync(&conn->connect_work);
	cancel_delayed_work_sync(&conn->keepalive);
	conn_flush_queues(conn, &list);
	/* Queued ones never reached the peer (or it answered BUSY). */
	fail_list(&list, -ENOTCONN, true);

	/*
	 * 4. Free the verbs objects, then the id, whose disconnect request
	 * (or reject, mid-handshake) is CM traffic: it may have to wait for
	 * its port (conn_cm_may_send()).
	 */
	conn_free_qp(conn);
	conn->peer_ref = peer_ref;
	if (conn->cm_id && !conn_cm_may_send(conn)) {
		pr_info("connection %s %pISc waits for %s port %u to come up\n",
			conn->active ? "to" : "from", &conn->peer->addr,
			dev_name(&conn->cm_id->device->dev),
			conn->cm_id->port_num);
		mutex_lock(&bx_conns_lock);
		conn->cm_waiting = true;
		mutex_unlock(&bx_conns_lock);
		queue_delayed_work(bx_wq, &conn->cm_work, BX_PORT_POLL);
		return;
	}
	conn_teardown_end(conn);
}

/* Tear down, and wait for, every connection on @bdev (device removal). */
void bx_conn_remove_dev(struct bx_dev *bdev)
{
	for (;;) {
		struct bx_conn *conn = NULL, *c;

		mutex_lock(&bx_conns_lock);
		list_for_each_entry(c, &bx_conns, node) {
			if (c->bdev == bdev || !bdev) {
				conn = c;
				bx_conn_get(conn);
				break;
			}
		}
		mutex_unlock(&bx_conns_lock);
		if (!conn)
			return;
		bx_conn_fail(conn, bdev ? -ENODEV : -ESHUTDOWN);
		wait_for_completion(&conn->torn_down);
		bx_conn_put(conn);
	}
}

/* Peers whose operations wait for a new connection (sysfs). */
unsigned int bx_peers_recovering(void)
{
	struct bx_peer *peer;
	unsigned int n = 0;
	unsigned long id;

	xa_for_each(&bx_peers, id, peer)
		n += READ_ONCE(peer->recovering);
	return n;
}

unsigned int bx_conn_count(void)
{
	struct bx_conn *c;
	unsigned int n = 0;

	mutex_lock(&bx_conns_lock);
	list_for_each_entry(c, &bx_conns, node)
		n++;
	mutex_unlock(&bx_conns_lock);
	return n;
}

static const char *state_name(enum bx_conn_state s)
{
	return s == BX_CONN_STATE_UP ? "up" :
	       s == BX_CONN_STATE_CONNECTING ? "connecting" : "down";
}

/*
 * debugfs "conns": one line per connection, "key value" pairs after the
 * peer address; the credit, window and READ window counters of flow.h.
 */
int bx_conn_show(struct seq_file *m, void *unused)
{
	struct bx_conn *c;

	mutex_lock(&bx_conns_lock);
	list_for_each_entry(c, &bx_conns, node) {
		unsigned long id, nops = 0;
		struct bx_op *op;

		xa_for_each(&c->ops, id, op)
			nops++;
		spin_lock(&c->lock);
		seq_printf(m, "peer %pISc id %u state %s %s dev %s qp %u awaiting %lu tx %llu rx %llu tx_free %d",
			   &c->peer->addr, c->peer->id, state_name(c->state),
			   c->active ? "active" : "passive",
			   c->bdev ? dev_name(&c->bdev->ibdev->dev) : "-",
			   READ_ONCE(c->qpn), nops, c->tx_msgs,
			   c->rx_msgs, c->ntx_free);
		seq_printf(m, " credits %u credits_max %u grant %u granted %llu used %llu stalls %llu updates %llu",
			   c->cr.credits, c->cr.max, c->cr.grant, c->cr.granted,
			   c->cr.used, c->cr.stalls, c->cr.updates);
		seq_printf(m, " wnd_bytes %llu wnd_ops %u wnd_peak_bytes %llu wnd_peak_ops %u wnd_waits %llu wnd_small %u small_passes %llu",
			   c->wnd.bytes, c->wnd.ops, c->wnd.peak_bytes,
			   c->wnd.peak_ops, c->wnd.waits, c->wnd.small,
			   c->small_passes);
		seq_printf(m, " rd_bytes %llu rd_reads %u rd_peak_bytes %llu rd_peak_reads %u rd_waits %llu",
			   c->rdwnd.bytes, c->rdwnd.reads, c->rdwnd.peak_bytes,
			   c->rdwnd.peak_reads, c->rdwnd.waits);
		seq_printf(m, " queued %u rd_queued %u busy_retries %llu rnr %llu restarts %u ack_timeout %u wpieces %u\n",
			   c->txq.nactive, c->rdq.nactive, c->busy_retries,
			   c->rnr_events, READ_ONCE(c->peer->restarts),
			   READ_ONCE(c->ack_timeout), c->wpieces);
		spin_unlock(&c->lock);
	}
	mutex_unlock(&bx_conns_lock);
	return 0;
}

/* ---- netlink ------------------------------------------------------------ */

static int nl_put_u64(struct sk_buff *skb, int type, u64 v)
{
	return nla_put_u64_64bit(skb, type, v, BX_A_CONN_PAD);
}

/*
 * Put @peer's attributes (BX_A_CONN_PEER_*, recovery counters) into @skb;
 * also the whole of a recovery event.
 */
int bx_peer_nl_fill(struct sk_buff *skb, struct bx_peer *peer)
{
	struct sockaddr *sa = (struct sockaddr *)&peer->addr;
	u64 recovered, failed, dups;
	u32 parked = 0, rounds;
	struct in6_addr a6;
	struct bx_op *op;

	if (sa->sa_family == AF_INET)
		ipv6_addr_set_v4mapped(((struct sockaddr_in *)sa)->sin_addr.s_addr,
				       &a6);
	else
		a6 = ((struct sockaddr_in6 *)sa)->sin6_addr;
	spin_lock(&peer->sess_lock);
	list_for_each_entry(op, &peer->parked, node)
		parked++;
	rounds = peer->recoveries;
	recovered = peer->recovered;
	failed = peer->recover_failed;
	dups = peer->rp.dups;
	spin_unlock(&peer->sess_lock);

	if (nla_put_u32(skb, BX_A_CONN_PEER_ID, peer->id) ||
	    nla_put(skb, BX_A_CONN_PEER_ADDR, sizeof(a6), &a6) ||
	    nla_put_u32(skb, BX_A_CONN_PEER_RESTARTS,
			READ_ONCE(peer->restarts)) ||
	    nla_put_u32(skb, BX_A_CONN_PARKED, parked) ||
	    nla_put_u32(skb, BX_A_CONN_RECOVERIES, rounds) ||
	    nl_put_u64(skb, BX_A_CONN_RECOVERED_OPS, recovered) ||
	    nl_put_u64(skb, BX_A_CONN_RECOVER_FAILED, failed) ||
	    nl_put_u64(skb, BX_A_CONN_DUP_PUSHES, dups))
		return -EMSGSIZE;
	return 0;
}

/* Put @conn's attributes (BX_A_CONN_*) into @skb. */
int bx_conn_nl_fill(struct sk_buff *skb, struct bx_conn *c)
{
	unsigned long id, nops = 0;
	struct bx_op *op;
	int ret;

	xa_for_each(&c->ops, id, op)
		nops++;

	if (bx_peer_nl_fill(skb, c->peer) ||
	    (c->bdev && nla_put_string(skb, BX_A_CONN_DEV_NAME,
				       dev_name(&c->bdev->ibdev->dev))) ||
	    nl_put_u64(skb, BX_A_CONN_PEER_EPOCH, c->peer_epoch) ||
	    nla_put_u32(skb, BX_A_CONN_AWAITING, nops))
		return -EMSGSIZE;

	spin_lock(&c->lock);
	ret = nla_put_u32(skb, BX_A_CONN_STATE, c->state) ||
	      (c->active && nla_put_flag(skb, BX_A_CONN_ACTIVE)) ||
	      nla_put_u32(skb, BX_A_CONN_QPN, READ_ONCE(c->qpn)) ||
	      nla_put_s32(skb, BX_A_CONN_ERR, c->err) ||
	      nl_put_u64(skb, BX_A_CONN_TX_MSGS, c->tx_msgs) ||
	      nl_put_u64(skb, BX_A_CONN_RX_MSGS, c->rx_msgs) ||
	      nla_put_u32(skb, BX_A_CONN_CREDITS, c->cr.credits) ||
	      nla_put_u32(skb, BX_A_CONN_CREDITS_MAX, c->cr.max) ||
	      nla_put_u32(skb, BX_A_CONN_GRANT, c->cr.grant) ||
	      nl_put_u64(skb, BX_A_CONN_CREDIT_STALLS, c->cr.stalls) ||
	      nl_put_u64(skb, BX_A_CONN_CREDIT_UPDATES, c->cr.updates) ||
	      nl_put_u64(skb, BX_A_CONN_WND_BYTES, c->wnd.bytes) ||
	      nla_put_u32(skb, BX_A_CONN_WND_OPS, c->wnd.ops) ||
	      nl_put_u64(skb, BX_A_CONN_WND_PEAK_BYTES, c->wnd.peak_bytes) ||
	      nl_put_u64(skb, BX_A_CONN_WND_WAITS, c->wnd.waits) ||
	      nl_put_u64(skb, BX_A_CONN_RD_BYTES, c->rdwnd.bytes) ||
	      nla_put_u32(skb, BX_A_CONN_RD_READS, c->rdwnd.reads) ||
	      nl_put_u64(skb, BX_A_CONN_RD_PEAK_BYTES, c->rdwnd.peak_bytes) ||
	      nl_put_u64(skb, BX_A_CONN_BUSY_RETRIES, c->busy_retries) ||
	      nl_put_u64(skb, BX_A_CONN_RNR, c->rnr_events) ||
	      nla_put_u32(skb, BX_A_CONN_WND_SMALL, c->wnd.small) ||
	      nl_put_u64(skb, BX_A_CONN_SMALL_PASSES, c->small_passes);
	spin_unlock(&c->lock);
	return ret ? -EMSGSIZE : 0;
}

static int conn_nl_fill(struct sk_buff *skb, void *conn)
{
	return bx_conn_nl_fill(skb, conn);
}

int bx_conn_nl_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long i = 0;
	struct bx_conn *c;
	int ret = 0;

	mutex_lock(&bx_conns_lock);
	cb->seq = bx_conns_gen;
	list_for_each_entry(c, &bx_conns, node) {
		if (i++ < cb->args[0])
			continue;
		ret = bx_nl_dump_one(skb, cb, BX_CMD_CONN_GET, conn_nl_fill, c);
		if (ret)
			break;
		cb->args[0] = i;
	}
	mutex_unlock(&bx_conns_lock);
	return bx_nl_dump_done(skb, ret);
}

/*
 * Call @fn on the connection to peer @peer_id, or return -ENOENT. It runs
 * under the peer's lock: a connection its peer still holds has not begun
 * its teardown, so its device, whose name @fn may read, is not removed
 * meanwhile (bx_conn_remove_dev() waits for the teardown).
 */
int bx_conn_with_peer(u32 peer_id, int (*fn)(struct bx_conn *, void *),
		      void *arg)
{
	struct bx_peer *peer = bx_peer_find(peer_id);
	int ret = -ENOENT;

	if (!peer)
		return -ENOENT;
	mutex_lock(&peer->lock);
	if (peer->conn)
		ret = fn(peer->conn, arg);
	mutex_unlock(&peer->lock);
	return ret;
}

void bx_flow_nl_stats(struct bx_flow_stats *st)
{
	spin_lock(&bx_host.lock);
	st->tx = bx_host.tx.bytes;
	st->tx_peak = bx_host.tx.peak_bytes;
	st->rx = bx_host.rx.bytes;
	st->rx_peak = bx_host.rx.peak_bytes;
	st->busy = bx_host.busy_retries;
	st->small_passes = bx_host.small_passes;
	st->tx_small = bx_host.tx.small;
	spin_unlock(&bx_host.lock);
}

/* debugfs "flow": the host's windows, "key value" per line. */
int bx_flow_show(struct seq_file *m, void *unused)
{
	u64 busy, small_passes, passed[BX_HW_N];
	struct bx_win tx, rx;
	u32 rd_conns;

	spin_lock(&bx_host.lock);
	tx = bx_host.tx;
	rx = bx_host.rx;
	rd_conns = bx_host.rd_conns;
	busy = bx_host.busy_retries;
	small_passes = bx_host.small_passes;
	memcpy(passed, bx_host.passed_max, sizeof(passed));
	spin_unlock(&bx_host.lock);
	seq_printf(m, "tx_bytes %llu\ntx_ops %u\ntx_peak_bytes %llu\ntx_peak_ops %u\ntx_waits %llu\ntx_small %u\n",
		   tx.bytes, tx.ops, tx.peak_bytes, tx.peak_ops, tx.waits,
		   tx.small);
	seq_printf(m, "rx_bytes %llu\nrx_reads %u\nrx_peak_bytes %llu\nrx_peak_reads %u\nrx_waits %llu\n",
		   rx.bytes, rx.reads, rx.peak_bytes, rx.peak_reads, rx.waits);
	seq_printf(m, "rd_conns %u\nbusy_retries %llu\nrnr_events %lld\n",
		   rd_conns, busy, atomic64_read(&bx_rnr_events));
	seq_printf(m, "tx_passed_max %llu\nrx_passed_max %llu\nsmall_passes %llu\n",
		   passed[BX_HW_TX], passed[BX_HW_RX], small_passes);
	return 0;
}

int bx_conn_init(void)
{
	struct sockaddr_in any = {
		.sin_family	= AF_INET,
		.sin_port	= htons(BX_PORT),
	};
	int ret;

	bx_epoch = get_random_u64();
	bx_wq = alloc_workqueue("bx", WQ_MEM_RECLAIM, 0);
	if (!bx_wq)
		return -ENOMEM;

	bx_listener = rdma_create_id(&init_net, bx_cm_handler, NULL,
				     RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(bx_listener)) {
		ret = PTR_ERR(bx_listener);
		goto err_wq;
	}
	ret = rdma_bind_addr(bx_listener, (struct sockaddr *)&any);
	if (ret)
		goto err_id;
	ret = rdma_listen(bx_listener, 128);
	if (ret)
		goto err_id;
	return 0;

err_id:
	rdma_destroy_id(bx_listener);
err_wq:
	destroy_workqueue(bx_wq);
	return ret;
}

void bx_conn_uninit(void)
{
	struct bx_peer *peer;
	unsigned long id;

	/* No recovery, no new connections, then none at all. */
	WRITE_ONCE(bx_conn_closing, true);
	bx_conn_port_event();
	xa_for_each(&bx_peers, id, peer)
		cancel_delayed_work_sync(&peer->recover_work);
	rdma_destroy_id(bx_listener);
	bx_conn_remove_dev(NULL);
	xa_for_each(&bx_peers, id, peer) {
		LIST_HEAD(list);

		spin_lock(&peer->sess_lock);
		list_splice_init(&peer->parked, &list);
		peer->recovering = false;
		spin_unlock(&peer->sess_lock);
		fail_list(&list, -ESHUTDOWN, false);
	}
}

/*
 * After bx_dev_uninit(), whose drain of every registration QP runs the
 * last completions of the operations bx_conn_uninit() ended (LOCAL_INV
 * of a push's MRs): they may still use their peer (bx_push_resolved())
 * and queue work.
 */
void bx_conn_uninit_peers(void)
{
	struct bx_peer *peer;
	unsigned long id;

	destroy_workqueue(bx_wq);
	xa_for_each(&bx_peers, id, peer) {
		WARN_ON(!list_empty(&peer->pending));
		kfree(peer);
	}
	xa_destroy(&bx_peers);
}
