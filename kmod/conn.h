/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the connection layer's header: struct bx_conn, then what each file
 * of the layer offers, one section per file (conn.c, conns.c, qp.c,
 * window.c, send.c, recover.c, cm.c; reg.c and peer.c have their own).
 */
#ifndef _BX_CONN_H
#define _BX_CONN_H

#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/refcount.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <net/net_namespace.h>

#include <linux/bx_netlink.h>

#include "dev.h"
#include "flow.h"
#include "peer.h"
#include "params.h"
#include "replay.h"
#include "user.h"
#include "wire.h"

#define BX_RX_BUFS	128	/* receive buffers = initial peer credits */
#define BX_TX_SLOTS	64	/* send buffers per connection */
#define BX_MSG_SIZE	8192	/* bytes of each send/receive buffer */
#define BX_EAGER_MAX	BX_WIRE_INLINE_MAX /* largest payload sent inline */
#define BX_SEG_MAX	SZ_1M	/* bytes per registered segment */
#define BX_SEG_PAGES	(BX_SEG_MAX / PAGE_SIZE + 1)

/* A batch of credits never exceeds half the window; nor inline, its max. */
static_assert(BX_RX_BUFS / 2 == BX_TUNABLE_MAX_CREDIT_BATCH);
static_assert(BX_EAGER_MAX == BX_TUNABLE_MAX_RDV_THRESHOLD);
/* The handshake carries the buffers' size in 16 bits, a lane in 8. */
static_assert(BX_MSG_SIZE <= U16_MAX);
static_assert(BX_LANES_MAX == BX_TUNABLE_MAX_QPS_PER_PEER);
#define BX_KEEPALIVE_MS	2000	/* see struct bx_conn, @keepalive */
#define BX_RC_RETRIES	6	/* RC retry_count of every QP */
#define BX_WPIECES_MAX	2	/* see struct bx_conn, @wpieces */
/* How long past its deadline an op on the wire may await its answer. */
#define BX_ANSWER_GRACE_MS	1000	/* see bx_send_sweep() */
/* Operations of at most this many bytes in all pass the byte windows. */
#define BX_SMALL_OP	(2 * BX_EAGER_MAX)

struct bx_op;
struct bx_op_ops;
struct bx_msg;

/* What bx_window_admit() decided about an operation. */
enum bx_admit {
	BX_ADMIT_OK,	/* charged to the windows: it may go */
	BX_ADMIT_WAIT,	/* a window has no room: it waits */
	BX_ADMIT_SHARE,	/* its user holds its share: another user's may go */
};

/* Users a connection keeps shares of, per window (window.c). */
#define BX_CONN_USERS	16

/**
 * struct bx_uwin - one user's operations in flight in one of a
 *	connection's windows, against user_wnd_pct of it
 * @user:	whose; compared, never followed (a slot whose @w is idle is
 *		free, and may name a user that is gone)
 * @w:		what it has in flight
 */
struct bx_uwin {
	const struct bx_user	*user;
	struct bx_win		w;
};

/**
 * struct bx_buf - a send or receive buffer of a connection
 * @cqe:	completion callback
 * @conn:	owner
 * @data:	BX_MSG_SIZE bytes, DMA-mapped at @dma
 * @op:		send: the operation whose message this is (ref), or NULL
 * @req_id:	send: @op's id in conn->ops when the request was posted
 *		(0: none), which a response may have ended since
 */
struct bx_buf {
	struct ib_cqe		cqe;
	struct bx_conn		*conn;
	void			*data;
	u64			dma;
	struct bx_op		*op;
	u32			req_id;
	struct ib_sge		sge;
	struct ib_send_wr	wr;
};

/**
 * struct bx_flowq - one process's queue on one connection (deficit round
 * robin); exists while it holds operations
 * @drr:	the scheduler's view
 * @node:	in conn->flows
 * @file:	the process (no reference: each queued op holds one)
 * @rd:		a queue of RDMA READ work (conn->rdq), else of sends
 */
struct bx_flowq {
	struct bx_drr_flow	drr;
	struct list_head	node;
	struct bx_file		*file;
	bool			rd;
};

/**
 * struct bx_conn - one RC connection to a peer, shared by every process
 * @ref:	held by the peer while it points here (bx_conn_alloc()'s reference
 *		becomes that one), by every operation assigned to it, by
 *		each host window's line it is in and by the teardown work;
 *		bx_conns holds none: teardown takes the connection off it
 * @host_node:	on bx_host.waiters[w] while @host_wait[w] (w: enum bx_host_wnd)
 * @node:	in bx_conns, under bx_conns_lock
 * @sweep_node:	on the deadline sweep's list of connections (conn.c)
 * @peer:	the remote host
 * @lane:	which of @peer's connections it is (peer->lane[]): ours
 *		from the lane asked for, a passive one from the request
 * @bdev:	local device (ref) from address resolution on
 * @cm_id:	rdma_cm id; owned by us (destroyed by teardown)
 * @qp, @cq:	created on route resolution / connect request
 * @memcg:	whose memory cgroup its buffers are charged to (a
 *		reference; NULL: no one's, a connection a peer asked for)
 * @pd:		the connection's own protection domain: @qp, @reg_qp and
 *		every MR registered for its operations, nothing else (reg.c)
 * @reg_qp:	registers and invalidates those MRs; completes on @cq
 * @mr_lock:	a leaf lock, any context: @mr_free, @mr_count, @mr_inuse,
 *		@reg_live
 * @mr_free:	MRs not in use, least recently used first
 * @mr_count:	MRs of @pd (in use or free), at most BX_CONN_MRS_MAX
 * @mr_inuse:	...of which operations hold this many
 * @reg_live:	registrations may be posted (until the teardown drains)
 * @qpn:	@qp's number while it exists, else 0 (READ_ONCE): for the
 *		debugfs and netlink dumps, which may race with its free
 * @lock:	protects the fields below it; process context only (ioctls,
 *		CQ workqueue, rdma_cm handlers)
 * @state:	enum bx_conn_state (uapi, bx_netlink.h); DOWN is final
 * @active:	we initiated the connection
 * @ack_timeout: the RC ACK timeout exponent its QP was given (ack_timeout
 *		when the connection was set up)
 * @err:	why it went down
 * @cr:		receive credits, both ways (flow.h)
 * @txq:	requests and replies not yet admitted to the send window, one
 *		DRR flow per process
 * @rdq:	RDMA READs of rendezvous pushes not yet admitted, per process
 * @flows:	the struct bx_flowq of @txq and @rdq
 * @ctlq:	control messages; sent first, outside the windows
 * @readyq:	admitted and registered, waiting for a send buffer or credit
 * @retryq:	bounced by a busy receiver, resent by @retry_work
 * @pieceq:	admitted rendezvous transfers cut in pieces (bx_rw_plan_pieces())
 *		whose next piece is to be posted (a REPLY's first, too); it
 *		goes after the messages that are ready, so that they need
 *		not wait for all of the transfer
 * @wpieces:	pieces of RDMA WRITEs of cut replies posted, not completed;
 *		at most BX_WPIECES_MAX. A message waits behind those and
 *		behind uncut rendezvous replies (at most piece_kb each) the
 *		window admitted. READ pieces: one per SRV_READ in flight,
 *		whose READ descriptors rd_max bounds.
 * @keepalive:	every BX_KEEPALIVE_MS while up: if operations await a
 *		response and nothing was sent since the last tick (@ka_tx),
 *		sets @ka_due so that a bare credit message goes out. A peer
 *		that lost the connection (its QP is gone) never acknowledges
 *		it, our QP errors, and the waiting operations fail instead of
 *		waiting forever on a half-open connection. It also fails a
 *		connection whose sends stalled: some outstanding and none
 *		completed (@tx_cqes, @ka_cqes) for @ka_stall_ms reaching
 *		bx_flow_stall_ms() (flow.h, "Send stalls").
 * @connect_work: fails an attempt still connecting after
 *		connect_timeout_ms (the CM's own retries last a minute)
 * @wnd:	what we sent and await: requests and replies (bytes, ops)
 * @small_passes: small operations admitted past a window's bytes or line
 * @rdwnd:	RDMA READs we issued (bytes, ops, READs)
 * @uwin:	the users' shares of @wnd ([0]) and @rdwnd ([1])
 * @kicking:	a bx_send_kick() runs; others set @kick_again and leave;
 *		the teardown waits for it to clear (bx_send_kick_wait())
 * @host_wait:	on bx_host.waiters[w] (holds a reference); under
 *		bx_host.lock, like @host_node and @host_turn
 * @host_turn:	a release gave it its turn: at its next try it may take
 *		from host window w ahead of the connections in line
 * @host_timed:	it waits for host window w, since...
 * @host_since:	...that window's admission count was this (under
 *		bx_host.lock; for debugfs "flow", *_passed_max)
 * @tx_free:	stack of free send buffers, @ntx_free entries
 * @ops:	req_id -> operation awaiting a response (own lock)
 * @mrwaitq:	admitted operations waiting for an MR (bx_reg_mr_get())
 * @regq:	...and those an MR freed since is to be offered to
 * @fenced:	the QP is drained: the peer reaches nothing any more, and
 *		an operation may complete without invalidating its MRs
 * @fenceq:	operations whose invalidation failed: they complete once
 *		@fenced
 * @err_cqe:	the completion of our unsignaled work requests, which come
 *		only when one failed (bx_qp_post())
 * @teardown:	work that drains and frees the connection
 * @torn_down:	completed when @teardown finished
 * @cm_begun:	a CM exchange began (we sent a request, or got one): the
 *		id's destruction sends a CM message (conn_cm_may_send())
 * @cm_work:	ends a teardown whose id had to wait for its port
 * @cm_waiting:	@cm_work waits for a port (under bx_conns_lock)
 * @peer_ref:	the teardown holds the peer's reference, too
 * @set_up:	a passive connection: completed when conn_request() is
 *		done with its id and QP (the teardown waits for it)
 * @auth:	its handshake proved the cluster secret (admit.c)
 * @ready_wait:	passive: the initiator's READY has not come yet; until it
 *		does, the connection carries nothing and stands in for no
 *		one (not its peer's connection)
 * @ready_ref:	conn_request()'s reference, which holds a passive
 *		connection while its READY is awaited: cm_ready_recv() or
 *		the end of its teardown drops it
 * @hs_req:	the connect request as it went on the wire (the proofs
 *		cover it)
 * @challenged:	active: challenges answered by this attempt (at most 2)
 * @redial:	active: answers a challenge with a new request, on a new id
 *		(the rejected one is done)
 */
struct bx_conn {
	struct kref		ref;
	struct list_head	node;
	struct list_head	sweep_node;
	struct bx_peer		*peer;
	u8			lane;
	struct bx_dev		*bdev;
	struct rdma_cm_id	*cm_id;
	struct ib_qp		*qp;
	u32			qpn;
	struct ib_cq		*cq;
	struct mem_cgroup	*memcg;
	struct ib_pd		*pd;
	struct ib_qp		*reg_qp;
	spinlock_t		mr_lock;	/* see above */
	struct list_head	mr_free;
	u32			mr_count;
	u32			mr_inuse;
	bool			reg_live;
	u32			peer_msg_size;
	u64			peer_epoch;
	bool			cm_begun;
	bool			cm_waiting;
	bool			peer_ref;
	struct delayed_work	cm_work;
	struct completion	set_up;
	bool			auth;
	bool			ready_wait;
	bool			ready_ref;
	struct bx_wire_req	hs_req;
	u8			challenged;
	struct work_struct	redial;

	spinlock_t		lock;	/* everything below up to @seq_alloc */
	enum bx_conn_state	state;
	bool			active;
	u8			ack_timeout;
	bool			established;
	bool			kicking;
	bool			kick_again;
	bool			host_wait[BX_HOSTWND_N];
	bool			host_turn[BX_HOSTWND_N];
	bool			host_timed[BX_HOSTWND_N];
	u64			host_since[BX_HOSTWND_N];
	bool			rd_active;
	unsigned long		flags;
	struct work_struct	qp_err;
	int			err;
	struct bx_credits	cr;
	struct bx_drr		txq;
	struct bx_drr		rdq;
	struct list_head	flows;
	struct list_head	ctlq;
	struct list_head	readyq;
	struct list_head	retryq;
	struct list_head	pieceq;
	struct list_head	mrwaitq;
	struct list_head	regq;
	bool			fenced;
	struct list_head	fenceq;
	struct ib_cqe		err_cqe;
	u8			wpieces;
	struct list_head	host_node[BX_HOSTWND_N];
	struct bx_win		wnd;
	u64			small_passes;
	struct bx_win		rdwnd;
	struct bx_uwin		uwin[2][BX_CONN_USERS];
	struct bx_buf		*tx_free[BX_TX_SLOTS];
	int			ntx_free;
	u64			tx_msgs;
	u64			rx_msgs;
	u64			busy_retries;
	u64			rnr_events;
	u32			seq_alloc;

	struct delayed_work	retry_work;
	struct delayed_work	connect_work;
	struct delayed_work	keepalive;
	u64			ka_tx;
	u64			tx_cqes;
	u64			ka_cqes;
	u32			ka_stall_ms;
	bool			ka_due;
	struct xarray		ops;
	struct work_struct	teardown;
	struct completion	torn_down;

	struct bx_buf		rx[BX_RX_BUFS];
	struct bx_buf		tx[BX_TX_SLOTS];
};

/**
 * struct bx_conn_info - a connection at one moment (netlink, debugfs)
 * @peer:	its peer's
 * @lane:	its lane (struct bx_conn's)
 * @dev:	its device's name, "" before address resolution
 * @peer_epoch, @qpn, @state, @active, @auth, @ack_timeout, @err,
 * @tx_msgs, @rx_msgs, @cr, @small_passes, @busy_retries, @rnr_events,
 * @wpieces: struct bx_conn's
 * @awaiting:	operations awaiting a response
 * @tx_free:	free send buffers
 * @wnd, @rdwnd: the send and READ windows: in flight now, peaks, waits
 * @queued, @rd_queued: processes with sends, READs queued
 * @readyq, @retryq, @mrwaitq, @regq: operations on those queues
 * @mrs, @mrs_inuse: MRs of its PD, of which operations hold these
 */
struct bx_conn_info {
	struct bx_peer_info	peer;
	u8			lane;
	char			dev[IB_DEVICE_NAME_MAX];
	u64			peer_epoch;
	unsigned long		awaiting;
	u32			qpn;
	enum bx_conn_state	state;
	bool			active;
	bool			auth;
	u8			ack_timeout;
	u8			wpieces;
	int			err;
	u64			tx_msgs;
	u64			rx_msgs;
	int			tx_free;
	struct bx_credits	cr;
	struct bx_win		wnd;
	u64			small_passes;
	struct bx_win		rdwnd;
	u32			queued;
	u32			rd_queued;
	u64			busy_retries;
	u64			rnr_events;
	size_t			readyq;
	size_t			retryq;
	size_t			mrwaitq;
	size_t			regq;
	u32			mrs;
	u32			mrs_inuse;
};

/**
 * struct bx_host_info - the host's windows at one moment (send.c; netlink
 * stats-get, debugfs "flow" and "stats")
 * @tx:		its send window: in flight now, peaks, waits
 * @rx:		its receive window (rendezvous READs), likewise
 * @rd_conns:	connections with READs queued or in flight
 * @passed_max:	per window (enum bx_host_wnd): the most operations it
 *		admitted for others while one connection waited
 * @busy_retries: operations a busy receiver bounced, since load
 * @small_passes: small operations admitted past a window, since load
 * @rnr_events:	RNR errors, since load
 */
struct bx_host_info {
	struct bx_win	tx;
	struct bx_win	rx;
	u32		rd_conns;
	u64		passed_max[BX_HOSTWND_N];
	u64		busy_retries;
	u64		small_passes;
	s64		rnr_events;
};

static inline struct ib_device *bx_conn_ibdev(struct bx_conn *conn)
{
	return conn->bdev->ibdev;
}

/* conn.c: what every file of the transport may do to a connection */
void bx_conn_fail(struct bx_conn *conn, int err);
void bx_conn_violation(struct bx_conn *conn, const char *what);
void bx_conn_get(struct bx_conn *conn);
void bx_conn_put(struct bx_conn *conn);
bool bx_conn_port_up(struct bx_conn *conn);
bool bx_conn_fence(struct bx_conn *conn, struct bx_op *op);
extern struct workqueue_struct *bx_conn_wq;
extern bool bx_conn_closing;
extern atomic_t bx_conn_live;
extern u64 bx_conn_epoch;
extern atomic64_t bx_conn_ops_inflight;

/* conns.c: creation, teardown, the list, the sweep, snapshots, init */
int bx_conn_init(void);
void bx_conn_uninit(void);
void bx_conn_uninit_peers(void);
void bx_conn_remove_dev(struct bx_dev *bdev);
void bx_conn_port_event(void);
unsigned int bx_conn_count(void);
void bx_conn_snapshot(struct bx_conn *conn, struct bx_conn_info *ci);
int bx_conns_each(unsigned long *pos, unsigned int *gen,
		  int (*fn)(const struct bx_conn_info *, void *), void *arg);
int bx_conn_snapshot_by_id(struct net *net, u32 peer_id, u8 lane,
			   struct bx_conn_info *ci);
struct bx_conn *bx_conn_alloc(struct bx_peer *peer, bool active, u8 lane);
int bx_conn_bind_dev(struct bx_conn *conn, struct bx_dev *bdev);
void bx_conn_unbind_dev(struct bx_conn *conn);
void bx_conns_sweep(bool now);
unsigned int bx_conn_peers_recovering(void);

/* qp.c: the QP, its buffers and completions, the handlers registered */

/*
 * A receive handler of one message type, registered at load by
 * the layer the message is for: the operations (recv.c) and, for
 * BX_MSG_READY, the handshake (cm.c), which a passive connection gives
 * every message until its READY came.
 */
typedef void (*bx_rx_fn)(struct bx_conn *conn, struct bx_msg *msg);
struct ib_send_wr *bx_qp_prep_send(struct bx_conn *conn, struct bx_buf *slot,
				   u32 len);
int bx_qp_post(struct bx_conn *conn, struct ib_send_wr *first);
void bx_qp_init(struct bx_conn *conn);
void bx_qp_register_rx(u8 type, bx_rx_fn fn);
void bx_qp_register_ops(const struct bx_op_ops *ops);
void bx_qp_register_kick(void (*kick)(struct bx_conn *conn));
void bx_qp_kick(struct bx_conn *conn);
int bx_qp_setup(struct bx_conn *conn);
void bx_qp_free(struct bx_conn *conn);
extern atomic64_t bx_qp_rnr_events;

/* window.c: the connection's and the host's windows */
void bx_window_release(struct bx_op *op);
void bx_window_cancel(struct bx_conn *conn, struct bx_op *op);
void bx_window_host_snapshot(struct bx_host_info *hi);
enum bx_admit bx_window_admit(struct bx_conn *conn, struct bx_op *op, bool rd);
bool bx_window_admit_small(struct bx_conn *conn, struct bx_op *op);
void bx_window_rd_update(struct bx_conn *conn);
void bx_window_host_busy_retry(void);
void bx_window_host_leave(struct bx_conn *conn);

/* send.c: the queues and the kick */
void bx_send_queue(struct bx_conn *conn, struct bx_op *op);
void bx_send_retry(struct bx_conn *conn, struct bx_op *op);
void bx_send_ready(struct bx_conn *conn, struct bx_op *op);
void bx_send_pieceq(struct bx_conn *conn, struct bx_op *op);
void bx_send_piece_end(struct bx_conn *conn);
void bx_send_kick(struct bx_conn *conn);
void bx_send_retry_work(struct work_struct *work);
void bx_send_kick_wait(struct bx_conn *conn);
void bx_send_sweep(struct bx_conn *conn);
void bx_send_mr_wait(struct bx_conn *conn, struct bx_op *op);
void bx_send_mr_freed(struct bx_conn *conn);
void bx_send_flush_queues(struct bx_conn *conn, struct list_head *list);

/* recover.c: numbered pushes, parking and recovery */
void bx_recover_number(struct bx_conn *conn, struct bx_op *op);
void bx_recover_resolved(struct bx_op *op);
enum bx_replay_verdict bx_recover_replay_check(struct bx_conn *conn,
					       const struct bx_msg *msg);
void bx_recover_replay_done(struct bx_conn *conn, u64 epoch, u64 seq,
			    bool delivered);
bool bx_recover_allowed(void);
extern atomic64_t bx_recover_dup_pushes;
extern atomic64_t bx_recover_ops_recovered;
extern atomic64_t bx_recover_failed;
void bx_recover_park(struct bx_peer *peer, struct bx_op *op);
void bx_recover_work(struct work_struct *work);

/* cm.c: rdma_cm, the handshake, keepalives */
void bx_cm_submit(struct bx_peer *peer, struct bx_op *op);
int bx_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
void bx_cm_init(void);
void bx_cm_redial(struct work_struct *work);
void bx_cm_connect_timeout(struct work_struct *work);
void bx_cm_keepalive(struct work_struct *work);
u8 bx_cm_lane(struct bx_peer *peer, const struct bx_op *op);
struct bx_conn *bx_cm_lane_conn(struct bx_peer *peer, u8 lane);

#endif /* _BX_CONN_H */
