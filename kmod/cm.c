// SPDX-License-Identifier: GPL-2.0
/*
 * bx: connecting peers with rdma_cm.
 *
 * The first operation towards a peer connects: resolve address, resolve
 * route, connect, with bx's request in the private data (wire.h,
 * "Connection handshake"). The acceptor answers a first request with a
 * challenge (a reject carrying a cookie) and keeps nothing; the
 * initiator answers on a new id (bx_cm_redial()) with the cookie and,
 * with a cluster secret, its proof. Only a request whose cookie and
 * proof check out (admit.c) gets a peer, a connection and an accept,
 * which carries the acceptor's proof. The initiator checks that proof
 * before anything arriving on the connection counts, and then sends
 * READY first; the acceptor takes nothing but READY until it comes, and
 * only then takes the connection as its peer's (replacing any other) and
 * learns the peer's incarnation from it. A challenge's cookie is kept
 * (peer->ck) so that a reconnect within proof_ms skips the challenge.
 *
 * Simultaneous connects: when a connect request arrives while our own
 * attempt to the same peer is in progress, the side with the lower
 * address keeps its own attempt and rejects the request; the other side
 * accepts it and abandons its attempt. Both apply the same rule, so one
 * survives. An established connection sends a keepalive when idle, so
 * that a peer that lost it is noticed.
 *
 * Lanes: a peer has up to qps_per_peer connections, each made, accepted,
 * superseded and torn down on its own as above, per lane. A file's
 * operations go on the lane of its key (bx_cm_lane()); the request names
 * its lane and the acceptor refuses one at or above its own qps_per_peer
 * with a reject saying how many it takes (struct bx_wire_lanes), after
 * which we use no more (peer->lanes_max, until the peer restarts).
 */

#include <linux/in.h>
#include <linux/in6.h>

#include <linux/random.h>
#include <rdma/ib_cm.h>

#include "admit.h"
#include "conn.h"
#include "event.h"
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

/* The connection parameters of @conn's side of the handshake. */
static void conn_params(struct bx_conn *conn, struct rdma_conn_param *param)
{
	struct ib_device_attr *a = &bx_conn_ibdev(conn)->attrs;

	memset(param, 0, sizeof(*param));
	param->responder_resources = min(a->max_qp_rd_atom, 16);
	param->initiator_depth = min_t(int, a->max_qp_init_rd_atom,
				       READ_ONCE(bx_rd_depth));
	param->retry_count = BX_RC_RETRIES;
	param->rnr_retry_count = 0;
}

/* What both sides tell each other of themselves. */
static void conn_own(struct bx_conn_params *p)
{
	memset(p, 0, sizeof(*p));
	p->credits = BX_RX_BUFS;
	p->msg_size = BX_MSG_SIZE;
	p->epoch = bx_conn_epoch;
}

static void conn_set_peer(struct bx_conn *conn, const struct bx_conn_params *p)
{
	spin_lock(&conn->lock);
	bx_flow_credits_init(&conn->cr, p->credits, READ_ONCE(bx_credit_batch));
	bx_flow_credits_set_own(&conn->cr, BX_RX_BUFS);
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
	struct bx_lane *lane = &peer->lane[conn->lane];
	struct bx_op *op, *tmp;
	bool restarted;
	LIST_HEAD(list);
	int i;

	mutex_lock(&peer->lock);
	spin_lock(&conn->lock);
	if (conn->state != BX_CONN_STATE_CONNECTING) {
		spin_unlock(&conn->lock);
		mutex_unlock(&peer->lock);
		if (first)
			bx_qp_op_ops->put(first);
		return;
	}
	trace_bx_conn_state(conn, conn->state, BX_CONN_STATE_UP, 0);
	conn->state = BX_CONN_STATE_UP;
	conn->established = true;
	if (first) {
		first->conn = conn;
		bx_conn_get(conn);
		bx_op_move(first, BX_OP_QUEUED);
		list_add(&first->node, &conn->ctlq);
	}
	pr_info_ratelimited("connection %s %pISc lane %u up%s\n",
			    conn->active ? "to" : "from", &conn->peer->addr,
			    conn->lane, conn->auth ? " (authenticated)" : "");
	if (lane->conn == conn)
		list_splice_init(&lane->pending, &list);
	/* A new incarnation: nothing of the old one's state is valid. */
	restarted = peer->epoch && peer->epoch != conn->peer_epoch;
	if (restarted) {
		WRITE_ONCE(peer->restarts, peer->restarts + 1);
		/* Its qps_per_peer may be another now. */
		peer->lanes_max = BX_LANES_MAX;
	}
	peer->epoch = conn->peer_epoch;
	spin_unlock(&conn->lock);
	/*
	 * The other lanes that came up to the old incarnation are dead
	 * (its QPs went with it): end them now rather than at their
	 * keepalive, so that their operations are parked at once.
	 */
	for (i = 0; restarted && i < BX_LANES_MAX; i++) {
		struct bx_conn *old = peer->lane[i].conn;

		if (old && old != conn && READ_ONCE(old->established) &&
		    old->peer_epoch != conn->peer_epoch)
			bx_conn_fail(old, -ECONNRESET);
	}
	mutex_unlock(&peer->lock);
	bx_event_conn(conn, BX_CMD_CONN_UP_NTF);
	queue_delayed_work(bx_conn_wq, &conn->keepalive,
			   msecs_to_jiffies(BX_KEEPALIVE_MS));
	if (restarted) {
		pr_info("peer %pISc restarted (epoch %llx)\n", &peer->addr,
			conn->peer_epoch);
		bx_event_conn(conn, BX_CMD_PEER_RESTART_NTF);
	}
	list_for_each_entry_safe(op, tmp, &list, node) {
		list_del_init(&op->node);
		bx_conn_get(conn);
		op->conn = conn;
		bx_send_queue(conn, op);
	}
	bx_send_kick(conn);
	if (READ_ONCE(peer->recovering))
		mod_delayed_work(bx_conn_wq, &peer->recover_work, 0);
}

/*
 * Passive @conn becomes its peer's connection on its lane, superseding an
 * attempt of ours or a connection the peer lost (it restarted, or
 * reconnects after a failure we have not noticed yet). -EALREADY if our
 * own attempt wins the simultaneous connect instead (the peer accepts
 * that one).
 */
static int conn_install(struct bx_conn *conn, const struct sockaddr *local)
{
	struct bx_peer *peer = conn->peer;
	struct bx_lane *lane = &peer->lane[conn->lane];
	struct bx_conn *old;

	mutex_lock(&peer->lock);
	old = lane->conn;
	if (old && old->state == BX_CONN_STATE_CONNECTING && old->active &&
	    addr_cmp(local, (struct sockaddr *)&peer->addr) < 0) {
		mutex_unlock(&peer->lock);
		return -EALREADY;
	}
	if (old) {
		lane->conn = NULL;
		bx_conn_fail(old, -ECONNRESET);
		bx_conn_put(old);
	}
	bx_conn_get(conn);
	lane->conn = conn;
	mutex_unlock(&peer->lock);
	return 0;
}

/* A connect request from @remote is refused, @why; counted (admit.c). */
static int conn_refuse(struct net *net, const struct sockaddr *remote,
		       const char *why, int err)
{
	struct bx_peer *peer = bx_peer_lookup(net, remote);

	bx_admit_refused(remote, why);
	if (peer) {
		spin_lock(&peer->sess_lock);
		peer->refused++;
		spin_unlock(&peer->sess_lock);
		bx_peer_put(peer);
	}
	return err;
}

/*
 * Answer request @p with a challenge: a reject carrying a cookie, which
 * rdma_cm sends; nothing is kept. The non-zero return destroys the id.
 */
static int conn_challenge(struct rdma_cm_id *id, const struct sockaddr *remote,
			  const struct sockaddr *local,
			  const struct bx_conn_params *p)
{
	struct bx_wire_challenge w;
	struct bx_wire_chal c;

	bx_admit_challenge(remote, local, p, &c);
	bx_wire_challenge_build(&w, &c);
	rdma_reject(id, &w, sizeof(w), IB_CM_REJ_CONSUMER_DEFINED);
	return -ECONNREFUSED;
}

/*
 * Refuse request @p, whose lane is at or above our qps_per_peer @lanes:
 * a reject that says how many lanes we take, so that the peer uses no
 * more. Counted as a refusal; the non-zero return destroys the id.
 */
static int conn_refuse_lane(struct rdma_cm_id *id, struct net *net,
			    const struct sockaddr *remote,
			    const struct bx_conn_params *p, unsigned int lanes)
{
	struct bx_wire_lanes w;

	bx_wire_lanes_build(&w, lanes);
	rdma_reject(id, &w, sizeof(w), IB_CM_REJ_CONSUMER_DEFINED);
	pr_info_ratelimited("peer %pISc asked for lane %u, qps_per_peer is %u\n",
			    remote, p->lane, lanes);
	return conn_refuse(net, remote, "a lane at or above qps_per_peer",
			   -ECONNREFUSED);
}

/*
 * A connect request on the listener; non-zero return destroys @id. A
 * first request gets a challenge and costs nothing more. One with a
 * valid cookie comes from @remote: only then can it commit a violation
 * (a missing or wrong proof), and only once its proof checked out (or no
 * secret is set) does it get a peer and a connection, held until its
 * READY for at most proof_ms.
 */
static int conn_request(struct rdma_cm_id *id, const struct rdma_cm_event *ev)
{
	struct sockaddr *remote = (struct sockaddr *)&id->route.addr.dst_addr;
	struct sockaddr *local = (struct sockaddr *)&id->route.addr.src_addr;
	struct net *net = id->route.addr.dev_addr.net;
	const void *pd = ev->param.conn.private_data;
	struct rdma_conn_param param;
	struct bx_wire_accept acc;
	struct bx_conn_params p;
	struct bx_conn *conn, *old;
	struct bx_peer *peer;
	struct bx_dev *bdev;
	unsigned int lanes;
	const char *why;
	int ret;

	ret = bx_wire_req_parse(pd, ev->param.conn.private_data_len, &p);
	if (ret)
		return conn_refuse(net, remote, "not bx's handshake", ret);
	if (!bx_admit_allowed(remote))
		return conn_refuse(net, remote, "not in the allow-list", -EACCES);
	/* Our own request reflected back at us. */
	if (p.epoch == bx_conn_epoch)
		return conn_refuse(net, remote, "our own incarnation", -EACCES);
	if (bx_admit_refusing(remote))
		return conn_refuse(net, remote, "refused after a violation",
				   -EACCES);
	if (!bx_admit_cookie_ok(remote, local, &p))
		return conn_challenge(id, remote, local, &p);
	/* It receives at @remote: what it does wrong from here is its own. */
	ret = bx_admit_check_req(remote, local, pd, &p, &why);
	if (ret) {
		if (bx_admit_auth())
			bx_admit_violation(remote, why);
		return conn_refuse(net, remote, why, ret);
	}
	/* Never trusted from the wire: a lane beyond our own limit. */
	lanes = READ_ONCE(bx_qps_per_peer);
	if (p.lane >= lanes)
		return conn_refuse_lane(id, net, remote, &p, lanes);
	bdev = conn_dev(id->device);
	if (!bdev)
		return -ENODEV;
	/*
	 * A remote host cannot take the table's reserve, nor more than
	 * remote_peers_max entries in all (peer.c).
	 */
	peer = bx_peer_find_or_create(net, remote, BX_PEER_REMOTE, NULL);
	if (IS_ERR(peer)) {
		bx_dev_put(bdev);
		return conn_refuse(net, remote, "the peer table is full",
				   PTR_ERR(peer));
	}
	conn = bx_conn_alloc(peer, false, p.lane);
	/* The connection holds the peer now, if there is one. */
	bx_peer_put(peer);
	if (!conn) {
		bx_dev_put(bdev);
		return -ENOMEM;
	}
	conn->cm_id = id;
	WRITE_ONCE(conn->cm_begun, true);
	id->context = conn;
	conn->auth = p.flags & BX_WIRE_REQ_F_PROOF;
	memcpy(&conn->hs_req, pd, sizeof(conn->hs_req));
	conn_set_peer(conn, &p);
	ret = bx_conn_bind_dev(conn, bdev);
	if (ret)
		goto err_fail;

	/* Checked now, applied once its READY comes (cm_ready_recv()). */
	mutex_lock(&peer->lock);
	old = peer->lane[p.lane].conn;
	if (old && old->state == BX_CONN_STATE_CONNECTING && old->active &&
	    addr_cmp(local, remote) < 0)
		ret = -EALREADY;
	mutex_unlock(&peer->lock);
	if (ret)
		goto err_fail;
	WRITE_ONCE(conn->ready_wait, true);

	WRITE_ONCE(conn->ack_timeout, READ_ONCE(bx_ack_timeout));
	rdma_set_ack_timeout(id, READ_ONCE(conn->ack_timeout));
	ret = bx_qp_setup(conn);
	if (ret)
		goto err_fail;
	conn_params(conn, &param);
	conn_own(&p);
	p.flags = conn->hs_req.flags & BX_WIRE_REQ_F_PROOF;
	p.lane = conn->lane;
	bx_wire_accept_build(&acc, &p);
	if (conn->auth) {
		ret = bx_admit_accept_mac(remote, local, &conn->hs_req, &acc);
		if (ret)
			goto err_fail;
	}
	param.private_data = &acc;
	param.private_data_len = sizeof(acc);
	param.responder_resources = min_t(u8, param.responder_resources,
					  ev->param.conn.initiator_depth);
	param.initiator_depth = min_t(u8, param.initiator_depth,
				      ev->param.conn.responder_resources);
	/* Our reference keeps it until its READY (or its end). */
	conn->ready_ref = true;
	ret = rdma_accept(id, &param);
	if (ret)
		goto err_fail;
	/* Nothing but READY until it comes, and not for ever. */
	queue_delayed_work(bx_conn_wq, &conn->connect_work,
			   msecs_to_jiffies(READ_ONCE(bx_proof_ms)));
	complete_all(&conn->set_up);
	return 0;

err_fail:
	/* rdma_cm destroys @id when we return an error. */
	conn->ready_ref = false;
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
 * A message on passive @conn before the initiator's READY: it must be
 * READY. Then the connection counts: it becomes its peer's and comes up.
 */
static void cm_ready_recv(struct bx_conn *conn, struct bx_msg *msg)
{
	struct sockaddr *local;
	int ret;

	if (msg->type != BX_MSG_READY) {
		bx_conn_violation(conn, "a message before its READY");
		return;
	}
	local = (struct sockaddr *)&conn->cm_id->route.addr.src_addr;
	WRITE_ONCE(conn->ready_wait, false);
	ret = conn_install(conn, local);
	if (ret) {
		bx_conn_fail(conn, ret);
		return;
	}
	conn_established(conn, NULL);
	/* Its peer holds it now. */
	conn->ready_ref = false;
	bx_conn_put(conn);
}

/* Until its READY came, a passive connection's messages come here. */
void bx_cm_init(void)
{
	bx_qp_register_rx(BX_MSG_READY, cm_ready_recv);
}

/*
 * @peer takes at most @lanes of our connections: files use no more
 * (bx_cm_lane()) until it restarts, and the operations of a lane it
 * refused take another (conn_teardown()).
 */
static void peer_lanes_max(struct bx_peer *peer, u8 lanes)
{
	mutex_lock(&peer->lock);
	peer->lanes_max = min(peer->lanes_max, lanes);
	mutex_unlock(&peer->lock);
}

/*
 * The initiator's side of an established handshake: check the acceptor's
 * parameters in @ev and, if we proved a secret, its proof; then go up,
 * READY first. Nothing that arrived before counted (qp.c).
 */
static int conn_accepted(struct bx_conn *conn, const struct rdma_cm_event *ev)
{
	const struct bx_wire_accept *acc = ev->param.conn.private_data;
	struct sockaddr *local = (struct sockaddr *)&conn->cm_id->route.addr.src_addr;
	struct sockaddr *remote = (struct sockaddr *)&conn->cm_id->route.addr.dst_addr;
	struct bx_conn_params p;
	struct bx_op *ready;
	int ret;

	ret = bx_wire_accept_parse(acc, ev->param.conn.private_data_len, &p);
	if (ret || !bx_admit_check_accept(local, remote, &conn->hs_req, acc,
					  &p)) {
		bx_conn_violation(conn, ret ? "a malformed accept" :
				  "a wrong proof in its accept");
		return 0;
	}
	if (p.lane != conn->lane) {
		/* An acceptor that predates lanes: it takes one. */
		pr_info_ratelimited("peer %pISc has no lanes: one connection\n",
				    &conn->peer->addr);
		peer_lanes_max(conn->peer, 1);
		return -ECONNREFUSED;
	}
	ready = bx_qp_op_ops->ctl(BX_MSG_READY);
	if (!ready)
		return -ENOMEM;
	conn_set_peer(conn, &p);
	conn_established(conn, ready);
	return 0;
}

/*
 * Our request to @conn's peer: with the cookie of the peer's last
 * challenge while it is young enough (and our proof, if the two hosts
 * share a secret), else a first request, which it will challenge.
 */
static void conn_req(struct bx_conn *conn, struct bx_wire_req *w)
{
	struct sockaddr *local = (struct sockaddr *)&conn->cm_id->route.addr.src_addr;
	struct bx_peer *peer = conn->peer;
	struct bx_wire_chal ck;
	struct bx_conn_params p;
	bool have;

	conn_own(&p);
	p.lane = conn->lane;
	get_random_bytes(p.nonce, sizeof(p.nonce));
	spin_lock(&peer->sess_lock);
	have = peer->ck_until && time_before(jiffies, peer->ck_until);
	ck = peer->ck;
	spin_unlock(&peer->sess_lock);
	if (have && bx_admit_answer((struct sockaddr *)&peer->addr, &ck, &p))
		have = false;
	if (!have)
		p.flags = 0;
	bx_wire_req_build(w, &p);
	if ((w->flags & BX_WIRE_REQ_F_PROOF) &&
	    bx_admit_req_mac(local, (struct sockaddr *)&peer->addr, w)) {
		/* The secret went meanwhile: ask afresh. */
		p.flags = 0;
		bx_wire_req_build(w, &p);
	}
	conn->auth = w->flags & BX_WIRE_REQ_F_PROOF;
}

static int conn_route_resolved(struct bx_conn *conn)
{
	struct rdma_conn_param param;
	int ret;

	/* Torn down meanwhile (see conn_teardown()): nothing to set up. */
	if (READ_ONCE(conn->state) == BX_CONN_STATE_DOWN)
		return -ECONNRESET;
	/* A request sent on a port that is down kills rxe's QP1. */
	if (!bx_conn_port_up(conn))
		return -ENETDOWN;
	ret = bx_qp_setup(conn);
	if (ret)
		return ret;
	conn_params(conn, &param);
	conn_req(conn, &conn->hs_req);
	param.private_data = &conn->hs_req;
	param.private_data_len = sizeof(conn->hs_req);
	WRITE_ONCE(conn->cm_begun, true);
	return rdma_connect_locked(conn->cm_id, &param);
}

/*
 * @conn's request was rejected. A challenge is answered (at most twice
 * per attempt: a cookie may age on the way) by a new request on a new id
 * (bx_cm_redial()), unless the two hosts cannot agree on a secret; any
 * other reject refuses the connection.
 */
static int conn_rejected(struct bx_conn *conn, const struct rdma_cm_event *ev)
{
	const void *pd = ev->param.conn.private_data;
	u8 len = ev->param.conn.private_data_len;
	struct bx_peer *peer = conn->peer;
	struct bx_conn_params p = {};
	struct bx_wire_chal c;
	u8 lanes;

	if (ev->status != IB_CM_REJ_CONSUMER_DEFINED)
		return -ECONNREFUSED;
	if (!bx_wire_lanes_parse(pd, len, &lanes)) {
		/* Its operations take a lane it does (conn_teardown()). */
		pr_info_ratelimited("peer %pISc takes %u lanes, not lane %u\n",
				    &peer->addr, lanes, conn->lane);
		peer_lanes_max(peer, lanes);
		/* Not sent: safe to submit again, if it comes to that. */
		bx_conn_fail(conn, -ECONNREFUSED);
		return 0;
	}
	if (bx_wire_challenge_parse(pd, len, &c))
		return -ECONNREFUSED;
	if (bx_admit_answer((struct sockaddr *)&peer->addr, &c, &p)) {
		pr_info_ratelimited("peer %pISc: %s\n", &peer->addr,
				    c.nkid ? "no cluster secret in common" :
				    "it has no cluster secret, this host has one");
		return -EACCES;
	}
	if (conn->challenged >= 2)
		return -ECONNREFUSED;
	conn->challenged++;
	spin_lock(&peer->sess_lock);
	peer->ck = c;
	peer->ck_until = (jiffies + msecs_to_jiffies(READ_ONCE(bx_proof_ms))) ?: 1;
	spin_unlock(&peer->sess_lock);
	/* The work's reference: the teardown may pass before it runs. */
	bx_conn_get(conn);
	if (!queue_work(bx_conn_wq, &conn->redial))
		bx_conn_put(conn);
	return 0;
}

/*
 * Answer the challenge @conn's last request got: the rejected id is done
 * (rdma_cm took its QP to the error state), so the attempt starts again
 * on a new one, with the peer's cookie (conn_req()). The teardown waits
 * for this to finish before it looks at the id.
 */
void bx_cm_redial(struct work_struct *work)
{
	struct bx_conn *conn = container_of(work, struct bx_conn, redial);
	struct bx_peer *peer = conn->peer;
	struct rdma_cm_id *old = conn->cm_id, *id;
	struct net *net = bx_peer_net(peer);
	int ret;

	if (READ_ONCE(conn->state) != BX_CONN_STATE_CONNECTING)
		goto out;
	if (!net) {
		bx_conn_fail(conn, -ENETUNREACH);
		goto out;
	}
	if (conn->qp)
		ib_drain_qp(conn->qp);
	bx_qp_free(conn);
	/* The next route may be through another device. */
	bx_conn_unbind_dev(conn);
	id = rdma_create_id(net, bx_cm_handler, conn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		bx_conn_fail(conn, PTR_ERR(id));
		goto out;
	}
	WRITE_ONCE(conn->cm_begun, false);
	conn->cm_id = id;
	rdma_destroy_id(old);
	rdma_set_ack_timeout(id, READ_ONCE(conn->ack_timeout));
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&peer->addr,
				2000);
	if (ret)
		bx_conn_fail(conn, ret);
out:
	bx_conn_put(conn);
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
		/* else: its READY brings it up (cm_ready_recv()) */
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
		ret = conn_rejected(conn, ev);
		if (ret == -ECONNREFUSED)
			peer_hold(conn);
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
 * submission starts afresh. An accepted one whose READY did not come
 * within proof_ms is its initiator's violation. (Teardown cancels this
 * before the last put.)
 */
void bx_cm_connect_timeout(struct work_struct *work)
{
	struct bx_conn *conn = container_of(to_delayed_work(work),
					    struct bx_conn, connect_work);

	if (READ_ONCE(conn->state) != BX_CONN_STATE_CONNECTING)
		return;
	if (!conn->active && READ_ONCE(conn->ready_wait))
		bx_conn_violation(conn, "no READY after its accept");
	else
		bx_conn_fail(conn, -ETIMEDOUT);
}

/* See struct bx_conn, @keepalive. Teardown cancels it. */
void bx_cm_keepalive(struct work_struct *work)
{
	struct bx_conn *conn = container_of(to_delayed_work(work),
					    struct bx_conn, keepalive);
	bool kick = false, stalled;

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
	/* Sends outstanding, none completed since the last tick. */
	if (conn->ntx_free < BX_TX_SLOTS && conn->tx_cqes == conn->ka_cqes)
		conn->ka_stall_ms += BX_KEEPALIVE_MS;
	else
		conn->ka_stall_ms = 0;
	conn->ka_cqes = conn->tx_cqes;
	stalled = conn->ka_stall_ms >=
		  bx_flow_stall_ms(READ_ONCE(conn->ack_timeout), BX_RC_RETRIES);
	spin_unlock(&conn->lock);
	if (stalled) {
		pr_info_ratelimited("connection %s %pISc lane %u: no send completed for %u ms\n",
				    conn->active ? "to" : "from",
				    &conn->peer->addr, conn->lane,
				    conn->ka_stall_ms);
		bx_conn_fail(conn, -ETIMEDOUT);
		return;
	}
	if (kick)
		bx_send_kick(conn);
	queue_delayed_work(bx_conn_wq, &conn->keepalive,
			   msecs_to_jiffies(BX_KEEPALIVE_MS));
}

/* Connect to @peer on lane @lane; called with peer->lock held. */
static struct bx_conn *conn_connect(struct bx_peer *peer, u8 lane)
{
	struct rdma_cm_id *id;
	struct bx_conn *conn;
	int ret;

	lockdep_assert_held(&peer->lock);
	/* An address we would not accept a connection from. */
	if (!bx_admit_allowed((struct sockaddr *)&peer->addr))
		return ERR_PTR(-EACCES);
	/* Its namespace is gone (bx_peers_net_exit()). */
	if (!bx_peer_net(peer))
		return ERR_PTR(-ENETUNREACH);
	conn = bx_conn_alloc(peer, true, lane);
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
	queue_delayed_work(bx_conn_wq, &conn->connect_work,
			   msecs_to_jiffies(READ_ONCE(bx_connect_timeout_ms)));
	return conn;

err_fail:
	bx_conn_fail(conn, ret);
	bx_conn_put(conn);
	return ERR_PTR(ret);
}

/*
 * The lane of @peer that push or pull @op goes on: its file's
 * (op->lane_key), among qps_per_peer lanes as it is now and at most those
 * the peer takes; peer->lock held. A file's operations keep to one lane
 * while the two counts stay; a change applies to what is submitted or
 * recovered after it.
 */
u8 bx_cm_lane(struct bx_peer *peer, const struct bx_op *op)
{
	lockdep_assert_held(&peer->lock);
	return bx_flow_lane(op->lane_key, READ_ONCE(bx_qps_per_peer),
			    peer->lanes_max);
}

/*
 * @peer's connection or connection attempt on lane @lane, starting one if
 * there is none (or only a dead one not yet torn down); peer->lock held.
 * An ERR_PTR if an attempt could not even start.
 */
struct bx_conn *bx_cm_lane_conn(struct bx_peer *peer, u8 lane)
{
	struct bx_conn *conn = peer->lane[lane].conn;

	lockdep_assert_held(&peer->lock);
	if (conn && READ_ONCE(conn->state) == BX_CONN_STATE_DOWN) {
		/* Dead and not yet torn down: start afresh. */
		peer->lane[lane].conn = NULL;
		bx_conn_put(conn);
		conn = NULL;
	}
	if (!conn) {
		conn = conn_connect(peer, lane);
		if (!IS_ERR(conn))
			peer->lane[lane].conn = conn;
	}
	return conn;
}

/*
 * Send @op (whose reference passes here) to @peer: on its lane's
 * connection if it is up, else once one comes up, creating one if there
 * is none.
 */
void bx_cm_submit(struct bx_peer *peer, struct bx_op *op)
{
	struct bx_conn *conn;
	u8 lane;

	mutex_lock(&peer->lock);
	lane = bx_cm_lane(peer, op);
	conn = peer->lane[lane].conn;
	if ((!conn || READ_ONCE(conn->state) == BX_CONN_STATE_DOWN) &&
	    (op->kind == BX_K_PUSH || op->kind == BX_K_PULL) &&
	    READ_ONCE(peer->recovering)) {
		/*
		 * The recovery's back-off decides when to try again: a
		 * submission does not start an attempt of its own.
		 */
		mutex_unlock(&peer->lock);
		bx_op_move(op, BX_OP_HELD);
		bx_recover_park(peer, op);
		return;
	}
	conn = bx_cm_lane_conn(peer, lane);
	if (IS_ERR(conn)) {
		mutex_unlock(&peer->lock);
		bx_qp_op_ops->end(op, PTR_ERR(conn));
		bx_qp_op_ops->put(op);
		return;
	}
	if (READ_ONCE(conn->state) == BX_CONN_STATE_UP) {
		bx_conn_get(conn);
		op->conn = conn;
		mutex_unlock(&peer->lock);
		bx_send_queue(conn, op);
		return;
	}
	bx_op_move(op, BX_OP_QUEUED);
	list_add_tail(&op->node, &peer->lane[lane].pending);
	mutex_unlock(&peer->lock);
}
