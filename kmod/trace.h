/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: tracepoints (Documentation/bx.rst, "Tracepoints"), for perf,
 * bpftrace and tracefs (events/bx/).
 *
 * The events take bx's objects by pointer and read their fields only
 * while the event is enabled (TP_fast_assign), so a disabled event costs
 * its static branch alone. That code, and the printing, are compiled in
 * main.c only (CREATE_TRACE_POINTS), which sees every structure; other
 * files see the events' prototypes alone. So this header includes none of
 * bx's headers, and a file of any layer above the pure code may use it.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM bx

#if !defined(_BX_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _BX_TRACE_H

#include <linux/in6.h>
#include <linux/tracepoint.h>

struct bx_conn;
struct bx_op;
struct bx_peer;
struct bx_win;

/* The peer an operation goes to or came from (REPLY, SRV_READ: conn's). */
#define BX_TRACE_PEER(op) \
	((op)->peer ? (op)->peer->id : (op)->conn ? (op)->conn->peer->id : 0)

TRACE_DEFINE_ENUM(BX_K_PUSH);
TRACE_DEFINE_ENUM(BX_K_PULL);
TRACE_DEFINE_ENUM(BX_K_REPLY);
TRACE_DEFINE_ENUM(BX_K_CTL);
TRACE_DEFINE_ENUM(BX_K_SRV_READ);

#define show_bx_kind(k)						\
	__print_symbolic(k,						\
			 { BX_K_PUSH, "push" },				\
			 { BX_K_PULL, "pull" },				\
			 { BX_K_REPLY, "reply" },			\
			 { BX_K_CTL, "ctl" },				\
			 { BX_K_SRV_READ, "srv_read" })

TRACE_DEFINE_ENUM(BX_CONN_STATE_CONNECTING);
TRACE_DEFINE_ENUM(BX_CONN_STATE_UP);
TRACE_DEFINE_ENUM(BX_CONN_STATE_DOWN);

#define show_bx_conn_state(s)						\
	__print_symbolic(s,						\
			 { -1, "new" },					\
			 { BX_CONN_STATE_CONNECTING, "connecting" },	\
			 { BX_CONN_STATE_UP, "up" },			\
			 { BX_CONN_STATE_DOWN, "down" })

#define show_bx_wnd(w)							\
	__print_symbolic(w,						\
			 { 0, "none" },					\
			 { BX_WAITED_CONN, "conn" },			\
			 { BX_WAITED_HOST, "host" },			\
			 { BX_WAITED_CONN | BX_WAITED_HOST, "conn|host" })

/* ---- operations --------------------------------------------------------- */

/* A process submitted a push, pull or reply (submit.c). */
TRACE_EVENT(bx_op_submit,
	TP_PROTO(const struct bx_op *op),
	TP_ARGS(op),

	TP_STRUCT__entry(
		__field(const void *, op)
		__field(u64, user_data)
		__field(u32, peer)
		__field(u32, service)
		__field(u32, len)
		__field(u32, resp_len)
		__field(u8, kind)
	),

	TP_fast_assign(
		__entry->op = op;
		__entry->user_data = op->user_data;
		__entry->peer = BX_TRACE_PEER(op);
		__entry->service = op->service;
		__entry->len = op->len;
		__entry->resp_len = op->resp_len;
		__entry->kind = op->kind;
	),

	TP_printk("op=%p kind=%s peer=%u service=%u len=%u resp_len=%u user_data=%#llx",
		  __entry->op, show_bx_kind(__entry->kind), __entry->peer,
		  __entry->service, __entry->len, __entry->resp_len,
		  __entry->user_data)
);

/*
 * An operation's completion was posted to its file's ring (op.c), once:
 * a push, pull or reply, or a RECV a rendezvous push filled (srv_read).
 */
TRACE_EVENT(bx_op_complete,
	TP_PROTO(const struct bx_op *op, int res),
	TP_ARGS(op, res),

	TP_STRUCT__entry(
		__field(const void *, op)
		__field(u64, user_data)
		__field(u32, peer)
		__field(u32, len)
		__field(int, res)
		__field(u8, kind)
		__field(u8, retries)
	),

	TP_fast_assign(
		__entry->op = op;
		__entry->user_data = op->user_data;
		__entry->peer = BX_TRACE_PEER(op);
		__entry->len = op->len;
		__entry->res = res;
		__entry->kind = op->kind;
		__entry->retries = op->retries;
	),

	TP_printk("op=%p kind=%s peer=%u len=%u res=%d busy_retries=%u user_data=%#llx",
		  __entry->op, show_bx_kind(__entry->kind), __entry->peer,
		  __entry->len, __entry->res, __entry->retries,
		  __entry->user_data)
);

/* ---- connections -------------------------------------------------------- */

/*
 * A connection changed state; @old_state -1 ("new"): it was just made.
 * @err: why it went down.
 */
TRACE_EVENT(bx_conn_state,
	TP_PROTO(const struct bx_conn *conn, int old_state, int new_state,
		 int err),
	TP_ARGS(conn, old_state, new_state, err),

	TP_STRUCT__entry(
		__field(const void *, conn)
		__field(u32, peer)
		__field(u32, qpn)
		__field(int, old_state)
		__field(int, new_state)
		__field(int, err)
		__field(bool, active)
		__array(u8, addr, sizeof(struct sockaddr_in6))
	),

	TP_fast_assign(
		__entry->conn = conn;
		__entry->peer = conn->peer->id;
		__entry->qpn = conn->qpn;
		__entry->old_state = old_state;
		__entry->new_state = new_state;
		__entry->err = err;
		__entry->active = conn->active;
		memcpy(__entry->addr, &conn->peer->addr,
		       sizeof(struct sockaddr_in6));
	),

	TP_printk("conn=%p peer=%u addr=%pISc dir=%s qp=%u %s -> %s err=%d",
		  __entry->conn, __entry->peer, __entry->addr,
		  __entry->active ? "out" : "in", __entry->qpn,
		  show_bx_conn_state(__entry->old_state),
		  show_bx_conn_state(__entry->new_state), __entry->err)
);

/* ---- flow control ------------------------------------------------------- */

/*
 * A message waits to be sent: the connection's admitted messages wait for
 * a credit of the peer's (or a send buffer), and nothing more is admitted
 * meanwhile (send.c). Each kick that finds them waiting says so.
 */
TRACE_EVENT(bx_tx_stall,
	TP_PROTO(const struct bx_conn *conn),
	TP_ARGS(conn),

	TP_STRUCT__entry(
		__field(const void *, conn)
		__field(u32, peer)
		__field(u32, qpn)
		__field(u32, credits)
		__field(int, tx_free)
	),

	TP_fast_assign(
		__entry->conn = conn;
		__entry->peer = conn->peer->id;
		__entry->qpn = conn->qpn;
		__entry->credits = conn->cr.credits;
		__entry->tx_free = conn->ntx_free;
	),

	TP_printk("conn=%p peer=%u qp=%u waits=%s credits=%u tx_free=%d",
		  __entry->conn, __entry->peer, __entry->qpn,
		  __entry->tx_free ? "credit" : "buffer",
		  __entry->credits, __entry->tx_free)
);

/*
 * A message of the peer's grants @n credits (conn.c); @credits: those we
 * had before. Messages that grant none are not traced.
 */
TRACE_EVENT_CONDITION(bx_credit_grant,
	TP_PROTO(const struct bx_conn *conn, u32 n),
	TP_ARGS(conn, n),
	TP_CONDITION(n),

	TP_STRUCT__entry(
		__field(const void *, conn)
		__field(u32, peer)
		__field(u32, qpn)
		__field(u32, n)
		__field(u32, credits)
	),

	TP_fast_assign(
		__entry->conn = conn;
		__entry->peer = conn->peer->id;
		__entry->qpn = conn->qpn;
		__entry->n = n;
		__entry->credits = conn->cr.credits;
	),

	TP_printk("conn=%p peer=%u qp=%u granted=%u credits=%u",
		  __entry->conn, __entry->peer, __entry->qpn, __entry->n,
		  __entry->credits)
);

/*
 * An operation and a window (send.c): a request or reply (tx) in the send
 * windows, or a rendezvous push's READ (rx, srv_read) in the READ windows.
 * The class prints as bx_wnd_wait.
 */
DECLARE_EVENT_CLASS(bx_wnd_class,
	TP_PROTO(const struct bx_op *op, const struct bx_win *w, u8 wnd),
	TP_ARGS(op, w, wnd),

	TP_STRUCT__entry(
		__field(const void *, op)
		__field(u64, bytes)
		__field(u32, peer)
		__field(u32, cost)
		__field(u32, ops)
		__field(u32, small)
		__field(u8, kind)
		__field(u8, wnd)
		__field(bool, small_op)
	),

	TP_fast_assign(
		__entry->op = op;
		__entry->bytes = w->bytes;
		__entry->peer = BX_TRACE_PEER(op);
		__entry->cost = op->kind == BX_K_SRV_READ ? op->piece :
				op->qi.cost;
		__entry->ops = w->ops;
		__entry->small = w->small;
		__entry->kind = op->kind;
		__entry->wnd = wnd;
		__entry->small_op = op->small;
	),

	TP_printk("op=%p kind=%s peer=%u cost=%u wnd=%s bytes=%llu ops=%u small=%u",
		  __entry->op, show_bx_kind(__entry->kind), __entry->peer,
		  __entry->cost, show_bx_wnd(__entry->wnd), __entry->bytes,
		  __entry->ops, __entry->small)
);

/*
 * @op does not fit window @wnd (BX_WAITED_CONN: its connection's, or
 * BX_WAITED_HOST: the host's), whose contents @w are: it waits. Once per
 * operation and window, however often it is tried again.
 */
DEFINE_EVENT(bx_wnd_class, bx_wnd_wait,
	TP_PROTO(const struct bx_op *op, const struct bx_win *w, u8 wnd),
	TP_ARGS(op, w, wnd)
);

/*
 * @op was admitted to the windows (its connection's @w, charged now); it
 * had waited for @wnd (0: for none). small: admitted as a small
 * operation, outside the byte windows.
 */
DEFINE_EVENT_PRINT(bx_wnd_class, bx_wnd_admit,
	TP_PROTO(const struct bx_op *op, const struct bx_win *w, u8 wnd),
	TP_ARGS(op, w, wnd),

	TP_printk("op=%p kind=%s peer=%u cost=%u small_op=%d waited=%s bytes=%llu ops=%u small=%u",
		  __entry->op, show_bx_kind(__entry->kind), __entry->peer,
		  __entry->cost, __entry->small_op, show_bx_wnd(__entry->wnd),
		  __entry->bytes, __entry->ops, __entry->small)
);

/* ---- recovery ----------------------------------------------------------- */

/*
 * A push or pull and its peer's recovery (recover.c): parked when its
 * connection failed (or, fresh, submitted while the peer recovers),
 * handed to a new connection, or given up (its completion follows, with
 * its errno). seq: a push's number (0: never sent).
 */
DECLARE_EVENT_CLASS(bx_recover_op_class,
	TP_PROTO(const struct bx_op *op),
	TP_ARGS(op),

	TP_STRUCT__entry(
		__field(const void *, op)
		__field(u64, user_data)
		__field(u64, seq)
		__field(u32, peer)
		__field(u32, len)
		__field(u8, kind)
		__field(bool, fresh)
	),

	TP_fast_assign(
		__entry->op = op;
		__entry->user_data = op->user_data;
		__entry->seq = op->seq;
		__entry->peer = BX_TRACE_PEER(op);
		__entry->len = op->len;
		__entry->kind = op->kind;
		__entry->fresh = op->state == BX_OP_HELD;
	),

	TP_printk("op=%p kind=%s peer=%u len=%u seq=%llu fresh=%d user_data=%#llx",
		  __entry->op, show_bx_kind(__entry->kind), __entry->peer,
		  __entry->len, __entry->seq, __entry->fresh,
		  __entry->user_data)
);

#define DEFINE_BX_RECOVER_OP_EVENT(name)				\
	DEFINE_EVENT(bx_recover_op_class, name,				\
		     TP_PROTO(const struct bx_op *op),			\
		     TP_ARGS(op))

DEFINE_BX_RECOVER_OP_EVENT(bx_op_park);
DEFINE_BX_RECOVER_OP_EVENT(bx_op_resend);
DEFINE_BX_RECOVER_OP_EVENT(bx_op_giveup);

/*
 * A round of @peer's recovery work: a connection is @up (the parked
 * operations go to it), or recover_ms @expired (they fail), or it tries
 * (again) and looks again in @backoff ms.
 */
TRACE_EVENT(bx_recover_round,
	TP_PROTO(const struct bx_peer *peer, unsigned int backoff, bool up,
		 bool expired),
	TP_ARGS(peer, backoff, up, expired),

	TP_STRUCT__entry(
		__field(u32, peer)
		__field(u32, round)
		__field(unsigned int, backoff)
		__field(bool, up)
		__field(bool, expired)
		__array(u8, addr, sizeof(struct sockaddr_in6))
	),

	TP_fast_assign(
		__entry->peer = peer->id;
		__entry->round = peer->recoveries;
		__entry->backoff = up || expired ? 0 : backoff;
		__entry->up = up;
		__entry->expired = expired;
		memcpy(__entry->addr, &peer->addr, sizeof(struct sockaddr_in6));
	),

	TP_printk("peer=%u addr=%pISc recovery=%u up=%d expired=%d backoff_ms=%u",
		  __entry->peer, __entry->addr, __entry->round, __entry->up,
		  __entry->expired, __entry->backoff)
);

/* @peer's recovery ended: @resent operations sent again, @failed not. */
TRACE_EVENT(bx_recover_done,
	TP_PROTO(const struct bx_peer *peer, bool up, unsigned int resent,
		 unsigned int failed),
	TP_ARGS(peer, up, resent, failed),

	TP_STRUCT__entry(
		__field(u32, peer)
		__field(u32, round)
		__field(unsigned int, resent)
		__field(unsigned int, failed)
		__field(bool, up)
	),

	TP_fast_assign(
		__entry->peer = peer->id;
		__entry->round = peer->recoveries;
		__entry->resent = resent;
		__entry->failed = failed;
		__entry->up = up;
	),

	TP_printk("peer=%u recovery=%u up=%d resent=%u failed=%u",
		  __entry->peer, __entry->round, __entry->up,
		  __entry->resent, __entry->failed)
);

#endif /* _BX_TRACE_H */

/* main.c defines the events: kmod/trace.h, through Kbuild's -I$(src). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH kmod
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace

#include <trace/define_trace.h>
