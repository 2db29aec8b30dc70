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
 * The files of the connection layer: this one (a connection's
 * references and its failure, which every file of the layer may cause),
 * conns.c (its creation and teardown, the list of connections, the
 * snapshots that netlink and debugfs print), qp.c (its QP, buffers and
 * completions), cm.c (rdma_cm: connecting, accepting, the
 * handshake, keepalives), send.c (the windows, admission and queues, and
 * bx_send_kick(), which decides what goes on the wire next) and
 * recover.c (pushes numbered, parked and sent again after a failure).
 *
 * Teardown (bx_conn_fail() -> conn_teardown(), in order): the state
 * becomes DOWN, so nothing new is queued; the peer forgets the connection
 * and its waiting operations fail; a kick still posting finishes
 * (bx_send_kick_wait()); the QP is drained (which moves it to the error
 * state), so every posted work request has run its completion handler,
 * and the connection is fenced: its peer reaches none of its MRs any
 * more (reg.c); operations still awaiting a response and those still
 * queued fail or are parked, without invalidating; the registration QP
 * is drained; the QPs, MRs, PD, CQ and buffers are freed; then, once its
 * port is up
 * (conn_cm_may_send()), the cm_id is disconnected and destroyed. A
 * connection is torn down when its peer disconnects or errors, when its
 * device goes away (bx_conn_remove_dev(), before ib_core frees the
 * device) and at unload.
 */

#include <linux/in.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cache.h>

#include "admit.h"
#include "conn.h"
#include "event.h"
#include "op.h"
#include "trace.h"

u64 bx_conn_epoch;

/* Teardown, QP error, retry, keepalive and recovery work. */
struct workqueue_struct *bx_conn_wq;
/* Operations alive (op.c counts them): the sweep runs while there are. */
atomic64_t bx_conn_ops_inflight = ATOMIC64_INIT(0);

void bx_conn_get(struct bx_conn *conn)
{
	kref_get(&conn->ref);
}

/*
 * Connections allocated and not yet released. A torn-down connection
 * (conn->torn_down) can still be referenced, by the end of its own
 * teardown among others, and its release puts its peer and device: the
 * module waits for this to reach zero before they go (bx_conn_uninit()).
 */
atomic_t bx_conn_live = ATOMIC_INIT(0);

static void conn_release(struct kref *ref)
{
	struct bx_conn *conn = container_of(ref, struct bx_conn, ref);

	if (conn->bdev)
		bx_dev_put(conn->bdev);
	bx_peer_put(conn->peer);
	xa_destroy(&conn->ops);
	mem_cgroup_put(conn->memcg);
	kfree(conn);
	if (atomic_dec_and_test(&bx_conn_live))
		wake_up_var(&bx_conn_live);
}

void bx_conn_put(struct bx_conn *conn)
{
	kref_put(&conn->ref, conn_release);
}

/*
 * @conn's peer broke the protocol (@what): it is counted, refused for a
 * while (admit.c), and this connection ends.
 */
void bx_conn_violation(struct bx_conn *conn, const char *what)
{
	struct bx_peer *peer = conn->peer;

	spin_lock(&peer->sess_lock);
	peer->violations++;
	spin_unlock(&peer->sess_lock);
	bx_admit_violation((struct sockaddr *)&peer->addr, what);
	bx_conn_fail(conn, -EPROTO);
}

/*
 * @op (with a reference) has MRs its peer may still reach: fail @conn,
 * whose teardown completes the op once the QP is drained (fenced). True
 * if that happened already: the caller completes it now.
 */
bool bx_conn_fence(struct bx_conn *conn, struct bx_op *op)
{
	spin_lock(&conn->lock);
	if (conn->fenced) {
		spin_unlock(&conn->lock);
		return true;
	}
	list_add_tail(&op->node, &conn->fenceq);
	spin_unlock(&conn->lock);
	bx_conn_fail(conn, -EIO);
	return false;
}

void bx_conn_fail(struct bx_conn *conn, int err)
{
	spin_lock(&conn->lock);
	if (conn->state == BX_CONN_STATE_DOWN) {
		spin_unlock(&conn->lock);
		return;
	}
	trace_bx_conn_state(conn, conn->state, BX_CONN_STATE_DOWN, err);
	conn->state = BX_CONN_STATE_DOWN;
	conn->err = err;
	/*
	 * The teardown's reference, taken with the state: whoever sees DOWN
	 * may drop its own (bx_cm_submit(), the recovery work) at once.
	 */
	bx_conn_get(conn);
	spin_unlock(&conn->lock);
	/* A peer can make this happen: at a limited rate. */
	pr_info_ratelimited("connection %s %pISc down: %d (%pS)\n",
			    conn->active ? "to" : "from", &conn->peer->addr,
			    err, __builtin_return_address(0));
	bx_event_conn(conn, BX_CMD_CONN_DOWN_NTF);
	queue_work(bx_conn_wq, &conn->teardown);
}

/* Set once the module is going: nothing is parked any more. */
bool bx_conn_closing;

/*
 * Is the port of @conn's id up? The netdev's own state changes first: a
 * send can fail (and a connection with it) before ib_core's port cache
 * learns of the link going down. The cache is ACTIVE again only once the
 * port-up event went out, which is what kicks the waiters.
 */
bool bx_conn_port_up(struct bx_conn *conn)
{
	struct rdma_cm_id *id = conn->cm_id;
	enum ib_port_state state;
	struct net_device *ndev;
	bool up;

	if (!id->device || ib_get_cached_port_state(id->device, id->port_num,
						    &state))
		return true;
	ndev = bx_compat_ib_port_netdev(id->device, id->port_num);
	if (!ndev)
		return state == IB_PORT_ACTIVE;
	up = netif_running(ndev) && netif_carrier_ok(ndev);
	dev_put(ndev);
	return up && state == IB_PORT_ACTIVE;
}
