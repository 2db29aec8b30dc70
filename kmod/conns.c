// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the connections -- how one is made (bx_conn_alloc()) and torn down
 * (bx_conn_fail() -> conn_teardown(), in the order conn.c describes),
 * the list of those not yet torn down, the deadline sweep over them, the
 * snapshots that netlink and debugfs print, and the layer's bring-up
 * and teardown at load and unload. A connection's references and its
 * failure are conn.c's, below this, so that every file of the layer may
 * use them.
 */

#include <linux/in.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cache.h>

#include "conn.h"
#include "op.h"
#include "params.h"
#include "reg.h"
#include "trace.h"

/*
 * All connections not yet torn down; for device removal, the deadline
 * sweep and the dumps (bx_conns_each()).
 */
static LIST_HEAD(bx_conns);
/* bx_conns, bx_conns_gen, conn->cm_waiting; process context only */
static DEFINE_MUTEX(bx_conns_lock);
/* Changes with every add to or removal from bx_conns (netlink dumps). */
static unsigned int bx_conns_gen = 1;

static struct rdma_cm_id *bx_listener;

static void conn_teardown(struct work_struct *work);
static void conn_cm_work(struct work_struct *work);

/*
 * A new connection to @peer, on its lane @lane. One we make (@active: an
 * operation of the calling process asked for it) is charged, with its
 * buffers, to the caller's memory cgroup: a user cannot make connections
 * past its limit (ENOMEM, no OOM). One a proved peer asks for is no
 * user's; the handshake, remote_peers_max and qps_per_peer bound those.
 */
struct bx_conn *bx_conn_alloc(struct bx_peer *peer, bool active, u8 lane)
{
	struct bx_conn *conn = kzalloc(sizeof(*conn), active ?
				       BX_GFP_CHARGED : GFP_KERNEL);

	if (!conn)
		return NULL;
	if (active)
		conn->memcg = get_mem_cgroup_from_mm(current->mm);
	atomic_inc(&bx_conn_live);
	kref_init(&conn->ref);
	bx_peer_hold(peer);
	conn->peer = peer;
	conn->lane = lane;
	conn->active = active;
	conn->state = BX_CONN_STATE_CONNECTING;
	spin_lock_init(&conn->lock);
	INIT_LIST_HEAD(&conn->flows);
	INIT_LIST_HEAD(&conn->ctlq);
	INIT_LIST_HEAD(&conn->readyq);
	INIT_LIST_HEAD(&conn->retryq);
	INIT_LIST_HEAD(&conn->pieceq);
	INIT_LIST_HEAD(&conn->mrwaitq);
	INIT_LIST_HEAD(&conn->regq);
	INIT_LIST_HEAD(&conn->fenceq);
	spin_lock_init(&conn->mr_lock);
	INIT_LIST_HEAD(&conn->mr_free);
	INIT_LIST_HEAD(&conn->host_node[BX_HOSTWND_TX]);
	INIT_LIST_HEAD(&conn->host_node[BX_HOSTWND_RX]);
	bx_flow_drr_init(&conn->txq, READ_ONCE(bx_drr_quantum));
	bx_flow_drr_init(&conn->rdq, READ_ONCE(bx_drr_quantum));
	INIT_DELAYED_WORK(&conn->retry_work, bx_send_retry_work);
	INIT_DELAYED_WORK(&conn->connect_work, bx_cm_connect_timeout);
	INIT_DELAYED_WORK(&conn->keepalive, bx_cm_keepalive);
	INIT_DELAYED_WORK(&conn->cm_work, conn_cm_work);
	xa_init_flags(&conn->ops, XA_FLAGS_ALLOC1);
	INIT_WORK(&conn->teardown, conn_teardown);
	INIT_WORK(&conn->redial, bx_cm_redial);
	bx_qp_init(conn);
	init_completion(&conn->torn_down);
	init_completion(&conn->set_up);
	trace_bx_conn_state(conn, -1, conn->state, 0);

	mutex_lock(&bx_conns_lock);
	list_add_tail(&conn->node, &bx_conns);
	bx_conns_gen++;
	mutex_unlock(&bx_conns_lock);
	return conn;
}

/*
 * Give @conn its device @bdev (a reference, which it consumes; NULL: none),
 * unless the device is going: its removal marks it, then scans bx_conns
 * for its connections under bx_conns_lock (bx_conn_remove_dev()), so
 * either the scan sees @conn on it or we see the mark.
 */
int bx_conn_bind_dev(struct bx_conn *conn, struct bx_dev *bdev)
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

/* Take @conn's device away again (bx_cm_redial(): its QP is gone). */
void bx_conn_unbind_dev(struct bx_conn *conn)
{
	struct bx_dev *bdev;

	mutex_lock(&bx_conns_lock);
	bdev = conn->bdev;
	conn->bdev = NULL;
	mutex_unlock(&bx_conns_lock);
	if (bdev)
		bx_dev_put(bdev);
}

/* End every op of @list with @err, or recover it (@lost, op_park()). */
static void fail_list(struct list_head *list, int err, bool lost)
{
	struct bx_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, list, node) {
		list_del_init(&op->node);
		if (lost)
			bx_qp_op_ops->lost(op, err);
		else
			bx_qp_op_ops->end(op, err);
		bx_qp_op_ops->put(op);
	}
}

/* How often a teardown waiting for its port looks again (events aside). */
#define BX_PORT_POLL	HZ

/*
 * May @conn's id send its last CM message now? Soft-RoCE puts a QP in the
 * error state for good when it cannot build or send a packet, and its GSI
 * QP (QP1) carries every CM message of the device: one disconnect request
 * or reject sent while the link is down ends all connection management to
 * and from this host until the rxe device is re-created. So an id that
 * began a CM exchange is destroyed only once its port is up again, or
 * when waiting is pointless: its device or bx is going.
 *
 * Its QP waits with it. rxe holds a reference on a QP for each packet
 * the QP sent until the NIC frees that packet (Debian's 6.1 and 6.12
 * alike), and a NIC
 * whose link is set down keeps what it has not freed until the link is up
 * again (virtio-net stops reclaiming with its NAPI): destroying the QP
 * meanwhile waits 200 jiffies for those references and then WARNs.
 */
static bool conn_cm_may_send(struct bx_conn *conn)
{
	return !READ_ONCE(conn->cm_begun) || !conn->bdev ||
	       READ_ONCE(conn->bdev->removing) || READ_ONCE(bx_conn_closing) ||
	       bx_conn_port_up(conn);
}

/* A port went up or down, a device or bx is going: waiters look again. */
void bx_conn_port_event(void)
{
	struct bx_conn *conn;

	mutex_lock(&bx_conns_lock);
	list_for_each_entry(conn, &bx_conns, node)
		if (conn->cm_waiting)
			mod_delayed_work(bx_conn_wq, &conn->cm_work, 0);
	mutex_unlock(&bx_conns_lock);
}

/* The end of a teardown: the verbs objects go, the id, the connection. */
static void conn_teardown_end(struct bx_conn *conn)
{
	bx_qp_free(conn);
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
	/* Passive, and its READY never came: conn_request()'s reference. */
	if (conn->ready_ref)
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
		queue_delayed_work(bx_conn_wq, &conn->cm_work, BX_PORT_POLL);
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
	struct bx_lane *lane = &peer->lane[conn->lane];
	bool peer_ref = false, relane;
	struct bx_op *op, *tmp;
	unsigned long id;
	LIST_HEAD(list);
	int err = conn->err;

	/*
	 * An answer to a challenge swaps the id: let it finish first. One
	 * queued later (by a reject still on its way) holds its own
	 * reference and finds the connection down.
	 */
	if (conn->active && cancel_work_sync(&conn->redial))
		bx_conn_put(conn);

	/*
	 * 1. The peer forgets us; operations waiting for us fail. The
	 * other lanes go on: what they carry was never on this one.
	 */
	mutex_lock(&peer->lock);
	if (lane->conn == conn) {
		lane->conn = NULL;
		peer_ref = true;
		list_splice_init(&lane->pending, &list);
	}
	/* The peer refused the lane: its operations take another. */
	relane = conn->lane >= peer->lanes_max;
	mutex_unlock(&peer->lock);
	/* During a recovery, waiting ones wait for the next attempt. */
	fail_list(&list, err, READ_ONCE(peer->recovering) || relane);

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
	bx_send_kick_wait(conn);
	if (conn->qp)
		ib_drain_qp(conn->qp);

	/*
	 * The QP is in the error state for good: the peer reaches none of
	 * the connection's MRs any more. Operations that could not revoke
	 * their MRs complete now; the rest no longer need to.
	 */
	spin_lock(&conn->lock);
	conn->fenced = true;
	list_splice_init(&conn->fenceq, &list);
	spin_unlock(&conn->lock);
	list_for_each_entry_safe(op, tmp, &list, node) {
		list_del_init(&op->node);
		bx_qp_op_ops->revoked(op);
	}

	/* 3. Nothing more can arrive: fail what waits for a response. */
	xa_for_each(&conn->ops, id, op) {
		xa_erase(&conn->ops, id);
		bx_qp_op_ops->lost(op, err);
		bx_qp_op_ops->put(op);
	}
	cancel_delayed_work_sync(&conn->retry_work);
	cancel_delayed_work_sync(&conn->connect_work);
	cancel_delayed_work_sync(&conn->keepalive);
	bx_send_flush_queues(conn, &list);
	/* Queued ones never reached the peer (or it answered BUSY). */
	fail_list(&list, -ENOTCONN, true);
	/*
	 * Registrations and invalidations still in flight complete (their
	 * operations end), so that every MR is back before the PD goes.
	 */
	bx_reg_drain(conn);

	/*
	 * 4. Free the verbs objects, then the id, whose disconnect request
	 * (or reject, mid-handshake) is CM traffic: both may have to wait
	 * for their port (conn_cm_may_send()). The QP is drained and in the
	 * error state: waiting, it holds memory, not work.
	 */
	conn->peer_ref = peer_ref;
	if (conn->cm_id && !conn_cm_may_send(conn)) {
		pr_info("connection %s %pISc waits for %s port %u to come up\n",
			conn->active ? "to" : "from", &conn->peer->addr,
			dev_name(&conn->cm_id->device->dev),
			conn->cm_id->port_num);
		mutex_lock(&bx_conns_lock);
		conn->cm_waiting = true;
		mutex_unlock(&bx_conns_lock);
		queue_delayed_work(bx_conn_wq, &conn->cm_work, BX_PORT_POLL);
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

static void count_recovering(struct bx_peer *peer, void *n)
{
	*(unsigned int *)n += READ_ONCE(peer->recovering);
}

/* How often deadlines are looked at while operations are in flight. */
#define BX_SWEEP_MS	100

static void conns_sweep_work(struct work_struct *work);
static DECLARE_DELAYED_WORK(bx_sweep, conns_sweep_work);

/*
 * bx_send_sweep() every connection, every BX_SWEEP_MS while operations
 * are in flight (bx_conns_sweep() starts it).
 */
static void conns_sweep_work(struct work_struct *work)
{
	struct bx_conn *conn, *tmp;
	LIST_HEAD(list);

	mutex_lock(&bx_conns_lock);
	list_for_each_entry(conn, &bx_conns, node) {
		bx_conn_get(conn);
		list_add_tail(&conn->sweep_node, &list);
	}
	mutex_unlock(&bx_conns_lock);
	list_for_each_entry_safe(conn, tmp, &list, sweep_node) {
		list_del(&conn->sweep_node);
		bx_send_sweep(conn);
		bx_conn_put(conn);
	}
	if (atomic64_read(&bx_conn_ops_inflight) && !READ_ONCE(bx_conn_closing))
		queue_delayed_work(bx_conn_wq, &bx_sweep,
				   msecs_to_jiffies(BX_SWEEP_MS));
}

/* Deadlines are to be watched (@now: a file closed, look at once). */
void bx_conns_sweep(bool now)
{
	if (now)
		mod_delayed_work(bx_conn_wq, &bx_sweep, 0);
	else
		queue_delayed_work(bx_conn_wq, &bx_sweep,
				   msecs_to_jiffies(BX_SWEEP_MS));
}

/* Peers whose operations wait for a new connection (sysfs). */
unsigned int bx_conn_peers_recovering(void)
{
	unsigned int n = 0;

	bx_peers_each(count_recovering, &n);
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

/*
 * @c as netlink and debugfs show it. Process context; takes its peer's
 * @sess_lock, then its @lock, then its @mr_lock, one at a time. Its
 * device's name is read too: the caller holds what keeps the device (a
 * connection on bx_conns, or its peer's, is not torn down yet, and
 * bx_conn_remove_dev() waits for that).
 */
void bx_conn_snapshot(struct bx_conn *c, struct bx_conn_info *ci)
{
	struct bx_op *op;
	unsigned long id;

	memset(ci, 0, sizeof(*ci));
	bx_peer_snapshot(c->peer, &ci->peer);
	ci->lane = c->lane;
	if (c->bdev)
		strscpy(ci->dev, dev_name(&c->bdev->ibdev->dev), sizeof(ci->dev));
	ci->peer_epoch = c->peer_epoch;
	ci->qpn = READ_ONCE(c->qpn);
	xa_for_each(&c->ops, id, op)
		ci->awaiting++;

	spin_lock(&c->lock);
	ci->state = c->state;
	ci->active = c->active;
	ci->auth = c->auth;
	ci->ack_timeout = READ_ONCE(c->ack_timeout);
	ci->err = c->err;
	ci->tx_msgs = c->tx_msgs;
	ci->rx_msgs = c->rx_msgs;
	ci->tx_free = c->ntx_free;
	ci->cr = c->cr;
	ci->wnd = c->wnd;
	ci->small_passes = c->small_passes;
	ci->rdwnd = c->rdwnd;
	ci->queued = c->txq.nactive;
	ci->rd_queued = c->rdq.nactive;
	ci->busy_retries = c->busy_retries;
	ci->rnr_events = c->rnr_events;
	ci->wpieces = c->wpieces;
	ci->readyq = list_count_nodes(&c->readyq);
	ci->retryq = list_count_nodes(&c->retryq);
	ci->mrwaitq = list_count_nodes(&c->mrwaitq);
	ci->regq = list_count_nodes(&c->regq);
	spin_unlock(&c->lock);

	spin_lock(&c->mr_lock);
	ci->mrs = c->mr_count;
	ci->mrs_inuse = c->mr_inuse;
	spin_unlock(&c->mr_lock);
}

/**
 * bx_conns_each - call @fn on a snapshot of each connection
 * @pos:	connections of the list to skip, then how many are done (a
 *		dump resumes there); NULL: from the first
 * @gen:	if not NULL, set to the list's generation, which changes
 *		with every add and removal (a dump's consistency)
 * @fn:		returns nonzero to stop: that connection is not done
 * @arg:	for @fn
 *
 * Runs under bx_conns_lock, in process context, and calls @fn with no
 * spinlock held: @fn may sleep. Returns what @fn returned to stop, else 0.
 */
int bx_conns_each(unsigned long *pos, unsigned int *gen,
		  int (*fn)(const struct bx_conn_info *, void *), void *arg)
{
	unsigned long i = 0, skip = pos ? *pos : 0;
	struct bx_conn_info ci;
	struct bx_conn *c;
	int ret = 0;

	mutex_lock(&bx_conns_lock);
	if (gen)
		*gen = bx_conns_gen;
	list_for_each_entry(c, &bx_conns, node) {
		if (i++ < skip)
			continue;
		bx_conn_snapshot(c, &ci);
		ret = fn(&ci, arg);
		if (ret)
			break;
		if (pos)
			*pos = i;
	}
	mutex_unlock(&bx_conns_lock);
	return ret;
}

/*
 * A snapshot of the connection on lane @lane to peer @peer_id of @net, or
 * -ENOENT. It is taken under the peer's lock: a connection its peer still
 * holds has not begun its teardown, so its device, whose name it reads,
 * is not removed meanwhile (bx_conn_remove_dev() waits for the teardown).
 */
int bx_conn_snapshot_by_id(struct net *net, u32 peer_id, u8 lane,
			   struct bx_conn_info *ci)
{
	struct bx_peer *peer = bx_peer_find(peer_id);
	int ret = -ENOENT;

	if (!peer)
		return -ENOENT;
	/* Another namespace's peer is not there. */
	if (!net_eq(bx_peer_net(peer), net)) {
		bx_peer_put(peer);
		return -ENOENT;
	}
	mutex_lock(&peer->lock);
	if (lane < BX_LANES_MAX && peer->lane[lane].conn) {
		bx_conn_snapshot(peer->lane[lane].conn, ci);
		ret = 0;
	}
	mutex_unlock(&peer->lock);
	bx_peer_put(peer);
	return ret;
}

static const struct bx_dev_ops conn_dev_ops = {
	.port_event	= bx_conn_port_event,
	.remove		= bx_conn_remove_dev,
};

int bx_conn_init(void)
{
	struct sockaddr_in any = {
		.sin_family	= AF_INET,
		.sin_port	= htons(bx_port),
	};
	int ret;

	bx_conn_epoch = get_random_u64();
	bx_dev_register(&conn_dev_ops);
	bx_qp_register_kick(bx_send_kick);
	bx_peer_register_recover(bx_recover_work);
	bx_conn_wq = alloc_workqueue("bx", WQ_MEM_RECLAIM, 0);
	if (!bx_conn_wq)
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
	destroy_workqueue(bx_conn_wq);
	return ret;
}

static void peer_stop_recovery(struct bx_peer *peer, void *unused)
{
	cancel_delayed_work_sync(&peer->recover_work);
}

static void peer_fail_parked(struct bx_peer *peer, void *unused)
{
	LIST_HEAD(list);

	spin_lock(&peer->sess_lock);
	list_splice_init(&peer->parked, &list);
	peer->recovering = false;
	spin_unlock(&peer->sess_lock);
	fail_list(&list, -ESHUTDOWN, false);
}

void bx_conn_uninit(void)
{
	/* No recovery, no new connections, then none at all. */
	WRITE_ONCE(bx_conn_closing, true);
	cancel_delayed_work_sync(&bx_sweep);
	bx_peers_stop();
	bx_conn_port_event();
	bx_peers_each(peer_stop_recovery, NULL);
	rdma_destroy_id(bx_listener);
	bx_conn_remove_dev(NULL);
	/* Torn down is not released: the last references go after. */
	wait_var_event(&bx_conn_live, !atomic_read(&bx_conn_live));
	bx_peers_each(peer_fail_parked, NULL);
}

/*
 * Last: every connection is torn down (its registrations drained with it)
 * and every operation ended; the peers go, then bx's workqueue.
 */
void bx_conn_uninit_peers(void)
{
	bx_peers_uninit();
	destroy_workqueue(bx_conn_wq);
}
