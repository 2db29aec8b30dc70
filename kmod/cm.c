// SPDX-License-Identifier: GPL-2.0
/*
 * bx: connecting peers with rdma_cm.
 *
 * The first operation towards a peer connects (resolve address, resolve
 * route, connect, with bx's parameters in the private data, wire.h); a
 * peer's connect request is accepted on the listener, if admit.c admits
 * it: an address in the allow-list, not refused after a violation, and
 * with a cluster secret set, a proof of it. Then the acceptor proves the
 * secret in its accept and the initiator in its first message
 * (BX_MSG_AUTH); only once that checked out does the acceptor take the
 * connection as its peer's (replacing any other) and learn the peer's
 * incarnation from it. Simultaneous
 * connects: when a connect request arrives while our own attempt to the
 * same peer is in progress, the side with the lower address keeps its own
 * attempt and rejects the request; the other side accepts it and abandons
 * its attempt. Both apply the same rule, so one survives. An established
 * connection sends a keepalive when idle, so that a peer that lost it is
 * noticed.
 */

#include <linux/in.h>
#include <linux/in6.h>

#include <linux/random.h>

#include "admit.h"
#include "conn.h"
#include "nl.h"
#include "op.h"
#include "params.h"
#include "trace.h"
#include "wire.h"

/* Compare the addresses of two sockaddrs of one family (memcmp order). */
static int addr_cmp(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family == AF_INET)
		return memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			      &((const struct sockaddr_in *)b)->sin_addr, 4);
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

/*
 * Our side of the handshake in @w (with a fresh nonce when @conn proves
 * the secret), and the connection parameters around it.
 */
static void conn_params(struct bx_conn *conn, struct bx_wire_conn *w,
			struct rdma_conn_param *param)
{
	struct bx_conn_params p = {
		.flags		= conn->auth ? BX_WIRE_CONN_F_AUTH : 0,
		.credits	= BX_RX_BUFS,
		.msg_size	= BX_MSG_SIZE,
		.epoch		= bx_epoch,
	};
	struct ib_device_attr *a = &bx_conn_ibdev(conn)->attrs;

	if (conn->auth)
		get_random_bytes(p.nonce, sizeof(p.nonce));
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

/*
 * @conn is up: it takes its peer's waiting operations. @first (the
 * initiator's proof, or NULL) goes on the wire before anything else: it
 * is queued in the same step that lets others queue.
 */
static void conn_established(struct bx_conn *conn, struct bx_op *first)
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
		if (first)
			bx_op_put(first);
		return;
	}
	trace_bx_conn_state(conn, conn->state, BX_CONN_STATE_UP, 0);
	conn->state = BX_CONN_STATE_UP;
	conn->established = true;
	if (first) {
		first->conn = conn;
		bx_conn_get(conn);
		list_add(&first->node, &conn->ctlq);
	}
	pr_info_ratelimited("connection %s %pISc up%s\n",
			    conn->active ? "to" : "from", &conn->peer->addr,
			    conn->auth ? " (authenticated)" : "");
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
 * Passive @conn becomes its peer's connection, superseding an attempt of
 * ours or a connection the peer lost (it restarted, or reconnects after
 * a failure we have not noticed yet). -EALREADY if our own attempt wins
 * the simultaneous connect instead (the peer accepts that one).
 */
static int conn_install(struct bx_conn *conn, const struct sockaddr *local)
{
	struct bx_peer *peer = conn->peer;
	struct bx_conn *old;

	mutex_lock(&peer->lock);
	old = peer->conn;
	if (old && old->state == BX_CONN_STATE_CONNECTING && old->active &&
	    addr_cmp(local, (struct sockaddr *)&peer->addr) < 0) {
		mutex_unlock(&peer->lock);
		return -EALREADY;
	}
	if (old) {
		peer->conn = NULL;
		bx_conn_fail(old, -ECONNRESET);
		bx_conn_put(old);
	}
	bx_conn_get(conn);
	peer->conn = conn;
	mutex_unlock(&peer->lock);
	return 0;
}

/* A connect request from @remote is refused, @why; counted (admit.c). */
static int conn_refuse(struct net *net, const struct sockaddr *remote,
		       const char *why, int err)
{
	struct bx_peer *peer = bx_peer_lookup(net, remote);

	bx_refused(remote, why);
	if (peer) {
		spin_lock(&peer->sess_lock);
		peer->refused++;
		spin_unlock(&peer->sess_lock);
		bx_peer_put(peer);
	}
	return err;
}

/* A connect request on the listener; non-zero return destroys @id. */
static int conn_request(struct rdma_cm_id *id, const struct rdma_cm_event *ev)
{
	struct sockaddr *remote = (struct sockaddr *)&id->route.addr.dst_addr;
	struct sockaddr *local = (struct sockaddr *)&id->route.addr.src_addr;
	struct net *net = id->route.addr.dev_addr.net;
	const struct bx_wire_conn *req = ev->param.conn.private_data;
	struct rdma_conn_param param;
	struct bx_wire_accept acc = {};
	struct bx_conn_params p;
	struct bx_conn *conn;
	struct bx_peer *peer;
	struct bx_dev *bdev;
	bool auth;
	int ret;

	ret = bx_wire_conn_parse(req, ev->param.conn.private_data_len, &p);
	if (ret)
		return conn_refuse(net, remote, "not bx's handshake", ret);
	if (!bx_allowed(remote))
		return conn_refuse(net, remote, "not in the allow-list", -EACCES);
	/* Our own request reflected back at us. */
	if (p.epoch == bx_epoch)
		return conn_refuse(net, remote, "our own incarnation", -EACCES);
	auth = bx_secret_on();
	if (auth != !!(p.flags & BX_WIRE_CONN_F_AUTH))
		return conn_refuse(net, remote, auth ?
				   "no proof of the cluster secret offered" :
				   "a proof offered, but no secret is set",
				   -EACCES);
	bdev = conn_dev(id->device);
	if (!bdev)
		return -ENODEV;
	/* A remote host cannot take the table's reserve (peer.c). */
	peer = bx_peer_find_or_create(net, remote, false);
	if (IS_ERR(peer)) {
		bx_dev_put(bdev);
		return PTR_ERR(peer);
	}
	if (bx_peer_refusing(peer)) {
		bx_peer_put(peer);
		bx_dev_put(bdev);
		return conn_refuse(net, remote, "refused after a violation",
				   -EACCES);
	}
	conn = bx_conn_alloc(peer, false);
	/* The connection holds the peer now, if there is one. */
	bx_peer_put(peer);
	if (!conn) {
		bx_dev_put(bdev);
		return -ENOMEM;
	}
	conn->cm_id = id;
	WRITE_ONCE(conn->cm_begun, true);
	id->context = conn;
	conn->auth = auth;
	conn->hs_req = *req;
	conn_set_peer(conn, &p);
	ret = bx_conn_bind_dev(conn, bdev);
	if (ret)
		goto err_fail;

	if (auth) {
		/* Checked now, applied once its proof comes (auth_recv). */
		mutex_lock(&peer->lock);
		if (peer->conn && peer->conn->state == BX_CONN_STATE_CONNECTING &&
		    peer->conn->active && addr_cmp(local, remote) < 0)
			ret = -EALREADY;
		mutex_unlock(&peer->lock);
		WRITE_ONCE(conn->auth_wait, true);
	} else {
		ret = conn_install(conn, local);
	}
	if (ret)
		goto err_fail;

	WRITE_ONCE(conn->ack_timeout, READ_ONCE(bx_ack_timeout));
	rdma_set_ack_timeout(id, READ_ONCE(conn->ack_timeout));
	ret = bx_conn_setup_qp(conn);
	if (ret)
		goto err_fail;
	conn_params(conn, &acc.conn, &param);
	conn->hs_acc = acc.conn;
	if (auth) {
		ret = bx_auth_mac(acc.mac, BX_WIRE_AUTH_ACCEPT, remote, local,
				  &conn->hs_req, &conn->hs_acc);
		if (ret)
			goto err_fail;
		param.private_data = &acc;
		param.private_data_len = sizeof(acc);
		/* Our reference keeps it until its proof (or its end). */
		conn->auth_ref = true;
	}
	param.responder_resources = min_t(u8, param.responder_resources,
					  ev->param.conn.initiator_depth);
	param.initiator_depth = min_t(u8, param.initiator_depth,
				      ev->param.conn.responder_resources);
	ret = rdma_accept(id, &param);
	if (ret)
		goto err_fail;
	if (auth) {
		/* Nothing but the proof until it comes, and not for ever. */
		queue_delayed_work(bx_wq, &conn->connect_work,
				   msecs_to_jiffies(READ_ONCE(bx_connect_timeout_ms)));
	} else {
		/*
		 * The QP is ready to send once accepted, and the peer may
		 * start before our ESTABLISHED event arrives: we are up now.
		 */
		conn_established(conn, NULL);
	}
	complete_all(&conn->set_up);
	/* The peer's reference keeps it; ours (from bx_conn_alloc()) goes. */
	if (!auth)
		bx_conn_put(conn);
	return 0;

err_fail:
	/* rdma_cm destroys @id when we return an error. */
	conn->auth_ref = false;
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

/*
 * A message on passive @conn before the initiator proved the secret: it
 * must be that proof (BX_MSG_AUTH). Then the connection counts: it
 * becomes its peer's and comes up.
 */
void bx_cm_auth_recv(struct bx_conn *conn, const struct bx_msg *msg)
{
	struct sockaddr *remote, *local;
	int ret;

	if (msg->type != BX_MSG_AUTH) {
		bx_conn_violation(conn, "a message before its proof");
		return;
	}
	remote = (struct sockaddr *)&conn->cm_id->route.addr.dst_addr;
	local = (struct sockaddr *)&conn->cm_id->route.addr.src_addr;
	if (!bx_auth_check(msg->payload, BX_WIRE_AUTH_INIT, remote, local,
			   &conn->hs_req, &conn->hs_acc)) {
		bx_conn_violation(conn, "a wrong proof of the cluster secret");
		return;
	}
	WRITE_ONCE(conn->auth_wait, false);
	ret = conn_install(conn, local);
	if (ret) {
		bx_conn_fail(conn, ret);
		return;
	}
	conn_established(conn, NULL);
	/* Its peer holds it now. */
	conn->auth_ref = false;
	bx_conn_put(conn);
}

/*
 * The initiator's side of an established handshake: check the acceptor's
 * parameters in @ev and, if we offered a proof, its proof; then go up,
 * our own proof first.
 */
static int conn_accepted(struct bx_conn *conn, const struct rdma_cm_event *ev)
{
	const struct bx_wire_accept *acc = ev->param.conn.private_data;
	struct sockaddr *local = (struct sockaddr *)&conn->cm_id->route.addr.src_addr;
	struct sockaddr *remote = (struct sockaddr *)&conn->cm_id->route.addr.dst_addr;
	struct bx_op *proof = NULL;
	struct bx_conn_params p;
	int ret;

	ret = bx_wire_conn_parse(acc, ev->param.conn.private_data_len, &p);
	if (ret)
		return ret;
	if (!!(p.flags & BX_WIRE_CONN_F_AUTH) != conn->auth)
		return -EPROTO;
	if (conn->auth) {
		if (ev->param.conn.private_data_len < BX_WIRE_ACCEPT_LEN ||
		    !bx_auth_check(acc->mac, BX_WIRE_AUTH_ACCEPT, local, remote,
				   &conn->hs_req, &acc->conn)) {
			bx_conn_violation(conn, "a wrong proof of the cluster secret");
			return -EACCES;
		}
		proof = bx_op_ctl(BX_MSG_AUTH);
		if (!proof)
			return -ENOMEM;
		ret = bx_auth_mac(conn->auth_mac, BX_WIRE_AUTH_INIT, local,
				  remote, &conn->hs_req, &acc->conn);
		if (ret) {
			bx_op_put(proof);
			return ret;
		}
		proof->msg.len = BX_WIRE_MAC_LEN;
		proof->msg.payload = conn->auth_mac;
	}
	conn_set_peer(conn, &p);
	conn_established(conn, proof);
	return 0;
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
	if (!bx_conn_port_up(conn))
		return -ENETDOWN;
	ret = bx_conn_setup_qp(conn);
	if (ret)
		return ret;
	conn->auth = bx_secret_on();
	conn_params(conn, &w, &param);
	conn->hs_req = w;
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

int bx_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct bx_conn *conn = id->context;
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
		ret = bx_conn_bind_dev(conn, conn_dev(id->device));
		if (!ret)
			ret = rdma_resolve_route(id, 2000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = conn_route_resolved(conn);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (conn->active)
			ret = conn_accepted(conn, ev);
		else if (!READ_ONCE(conn->auth_wait))
			conn_established(conn, NULL);
		/* else: its proof brings it up (bx_cm_auth_recv()) */
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
		pr_info_ratelimited("cm event %s (status %d) on connection %s %pISc\n",
				    rdma_event_msg(ev->event), ev->status,
				    conn->active ? "to" : "from",
				    &conn->peer->addr);
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
void bx_conn_connect_timeout(struct work_struct *work)
{
	struct bx_conn *conn = container_of(to_delayed_work(work),
					    struct bx_conn, connect_work);

	if (READ_ONCE(conn->state) == BX_CONN_STATE_CONNECTING)
		bx_conn_fail(conn, -ETIMEDOUT);
}

/* See struct bx_conn, @keepalive. Teardown cancels it. */
void bx_conn_keepalive(struct work_struct *work)
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
	/* An address we would not accept a connection from. */
	if (!bx_allowed((struct sockaddr *)&peer->addr))
		return ERR_PTR(-EACCES);
	/* Its namespace is gone (bx_peers_net_exit()). */
	if (!bx_peer_net(peer))
		return ERR_PTR(-ENETUNREACH);
	conn = bx_conn_alloc(peer, true);
	if (!conn)
		return ERR_PTR(-ENOMEM);
	id = rdma_create_id(bx_peer_net(peer), bx_cm_handler, conn,
			    RDMA_PS_TCP, IB_QPT_RC);
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
struct bx_conn *bx_peer_conn(struct bx_peer *peer)
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
	conn = bx_peer_conn(peer);
	if (IS_ERR(conn)) {
		mutex_unlock(&peer->lock);
		bx_op_end(op, PTR_ERR(conn));
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
