/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: flow control logic -- receive credits, send windows and deficit
 * round robin. Pure: no locking, no allocation, no kernel services; the
 * callers (send.c, op.c) hold the locks. flow.c also compiles in user
 * space for the host unit tests (tools/testing/unit/flow_test.c).
 *
 * Credits. The receiver posts a fixed number of receive buffers and the
 * sender holds one credit per buffer it may fill. Every message carries
 * the buffers its sender reposted since its last message ("grant"). The
 * last credit is reserved for a bare credit update, so when both sides
 * are out of data credits each can still tell the other about the
 * buffers it reposted: the two peers never deadlock (net/rds/ib_send.c
 * does the same).
 *
 * Each side may post a different number of buffers (at least 3).
 *
 * The calls made per message and per operation (credits and windows)
 * are inline here; what runs per connection or per round is in flow.c.
 *
 * Windows. A window counts what is in flight -- bytes, operations and
 * RDMA READs -- against limits. An operation fits when every count stays
 * within its limit, or when the window is empty: an operation larger
 * than the window still runs, alone, so no size can wait forever. The
 * caller counts waits (bx_win.waits) where it knows what waited.
 *
 * DRR. Flows (one per process and connection) queue items with a cost in
 * bytes. The scheduler serves the active flows in turn: the flow whose
 * turn begins gains one quantum and sends while its deficit covers its
 * head item, so flows with equal demand get equal bytes and a flow waits
 * behind at most a quantum plus one item of any other.
 *
 * Lanes. A peer may have up to BX_LANES_MAX connections (qps_per_peer),
 * each with its own credits and window. A file's operations to a peer
 * all go on one lane, so that they keep their order; files spread over
 * the lanes by a number each is given at open (bx_flow_lane()).
 */
#ifndef _BX_FLOW_H
#define _BX_FLOW_H

#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/types.h>

/* ---- lanes ------------------------------------------------------------- */

/* Connections a peer may have at most (qps_per_peer's maximum). */
#define BX_LANES_MAX	8

u8 bx_flow_lane(u32 key, unsigned int want, unsigned int limit);

/* ---- send stalls --------------------------------------------------------- */

/* The least time a connection's sends may go without a completion. */
#define BX_STALL_MIN_MS	10000

u32 bx_flow_stall_ms(u8 ack_timeout, u8 retry_count);

/* ---- credits ----------------------------------------------------------- */

/**
 * struct bx_credits - one direction of a connection's receive credits
 * @credits:	messages we may send (peer's receive buffers we may fill)
 * @max:	the peer's receive buffers; @credits never exceeds it
 * @own:	our receive buffers (@grant never exceeds it); as @max
 *		unless bx_flow_credits_set_own() says otherwise
 * @grant:	our receive buffers reposted and not yet granted to the peer
 * @batch:	grant at least this many in a bare update
 * @update_queued: a bare update is on its way to being sent
 * @granted, @used, @stalls, @updates: counters (credits granted to the
 *		peer, credits spent, sends that had to wait, bare updates)
 */
struct bx_credits {
	u32	credits;
	u32	max;
	u32	own;
	u32	grant;
	u32	batch;
	bool	update_queued;
	u64	granted;
	u64	used;
	u64	stalls;
	u64	updates;
};

void bx_flow_credits_init(struct bx_credits *c, u32 peer_bufs, u32 batch);
/* The peer granted @n more; -EPROTO if that is more than it has. */
static inline int bx_flow_credits_add(struct bx_credits *c, u32 n)
{
	if (n > c->max - c->credits)
		return -EPROTO;
	c->credits += n;
	return 0;
}

/* Spend a credit on a data message (never the last one); false: wait. */
static inline bool bx_flow_credits_take(struct bx_credits *c)
{
	if (c->credits < 2) {
		c->stalls++;
		return false;
	}
	c->credits--;
	c->used++;
	return true;
}

/* Spend a credit on a bare credit update (may be the last one). */
static inline bool bx_flow_credits_take_update(struct bx_credits *c)
{
	if (!c->credits)
		return false;
	c->credits--;
	c->used++;
	c->updates++;
	c->update_queued = false;
	return true;
}

/*
 * Set the batch, kept within [1, min(max, own) / 2]: the peer must be
 * able to owe it to us, and we must be able to owe it to the peer (an
 * idle update waits for a batch of our own buffers).
 */
void bx_flow_credits_set_batch(struct bx_credits *c, u32 batch);
/* Our receive buffer count, when it differs from the peer's. */
void bx_flow_credits_set_own(struct bx_credits *c, u32 own);
/* Take the grant a message carries (all of it, up to 16 bits). */
static inline u16 bx_flow_credits_grant_take(struct bx_credits *c)
{
	u16 g = c->grant > U16_MAX ? U16_MAX : c->grant;

	c->grant -= g;
	c->granted += g;
	return g;
}

/* Put back what take()/grant_take() took, when the send failed. */
static inline void bx_flow_credits_untake(struct bx_credits *c, u16 grant)
{
	c->credits++;
	c->used--;
	c->grant += grant;
	c->granted -= grant;
}

/* One of our receive buffers was reposted. */
static inline void bx_flow_credits_posted(struct bx_credits *c)
{
	c->grant++;
}

/*
 * Should a bare credit update be sent now (@data_queued: data messages
 * wait to be sent)? Never when a data message can go (it carries the
 * grant). When data is blocked on credits, as soon as 2 are owed: the
 * peer then hears from us with our last credit, so two blocked peers
 * never wait for each other. When idle, once max(batch, 2) are owed. An
 * update grants at least 2 because it uses one of the peer's buffers,
 * which the peer grants back: updates of 1 would bounce forever.
 * Requires max >= 3 (with 2 buffers, two blocked peers could only trade
 * updates). Marks the update queued.
 */
static inline bool bx_flow_credits_update_due(struct bx_credits *c,
					      bool data_queued)
{
	u32 need;

	if (c->update_queued || (data_queued && c->credits >= 2))
		return false;
	need = data_queued ? 2 : c->batch < 2 ? 2 : c->batch;
	if (c->grant < need)
		return false;
	c->update_queued = true;
	return true;
}

/* ---- windows ----------------------------------------------------------- */

struct bx_win_lim {
	u64	bytes;
	u32	ops;
	u32	reads;
};

/**
 * struct bx_win - what is in flight against a struct bx_win_lim
 * @bytes, @ops, @reads: in flight now
 * @small:	small operations in flight, outside @bytes and @ops: they
 *		pass the byte limit (and a window kept busy by them never
 *		looks empty to an operation larger than the limit, which
 *		goes only alone); at most lim->ops of them
 * @peak_*:	their maxima since the last reset
 * @waits:	operations that did not fit (each counted once, however
 *		often it is tried again)
 */
struct bx_win {
	u64	bytes;
	u32	ops;
	u32	reads;
	u32	small;
	u64	peak_bytes;
	u32	peak_ops;
	u32	peak_reads;
	u64	waits;
};

static inline bool bx_flow_win_fits(const struct bx_win *w,
				    const struct bx_win_lim *lim, u64 bytes, u32 reads)
{
	if (!w->ops)
		return true;
	return w->ops < lim->ops && bytes <= lim->bytes &&
	       w->bytes <= lim->bytes - bytes && reads <= lim->reads &&
	       w->reads <= lim->reads - reads;
}

static inline void bx_flow_win_charge(struct bx_win *w, u64 bytes, u32 reads)
{
	w->bytes += bytes;
	w->ops++;
	w->reads += reads;
	if (w->bytes > w->peak_bytes)
		w->peak_bytes = w->bytes;
	if (w->ops > w->peak_ops)
		w->peak_ops = w->ops;
	if (w->reads > w->peak_reads)
		w->peak_reads = w->reads;
}

/* Returns false (and changes nothing) on underflow: a caller bug. */
static inline bool bx_flow_win_release(struct bx_win *w, u64 bytes, u32 reads)
{
	if (!w->ops || w->bytes < bytes || w->reads < reads)
		return false;
	w->bytes -= bytes;
	w->ops--;
	w->reads -= reads;
	return true;
}

static inline bool bx_flow_win_idle(const struct bx_win *w)
{
	return !w->ops && !w->bytes && !w->reads && !w->small;
}

/* A small operation (of a few bytes, whatever they are) fits. */
static inline bool bx_flow_win_fits_small(const struct bx_win *w,
					  const struct bx_win_lim *lim)
{
	return w->small < lim->ops;
}

static inline void bx_flow_win_charge_small(struct bx_win *w)
{
	w->small++;
}

static inline bool bx_flow_win_release_small(struct bx_win *w)
{
	if (!w->small)
		return false;
	w->small--;
	return true;
}

/* ---- deficit round robin ------------------------------------------------ */

struct bx_drr_item {
	struct bx_drr_item	*next;
	u32			cost;
};

/**
 * struct bx_drr_flow - one flow's queue
 * @next:	in the scheduler's active list
 * @head, @tail: queued items, FIFO
 * @deficit:	bytes the flow may still send this round
 * @served:	bytes dequeued in total
 * @queued:	items queued
 * @active:	on the active list (iff @queued)
 * @in_turn:	at the head of the round and received its quantum
 */
struct bx_drr_flow {
	struct bx_drr_flow	*next;
	struct bx_drr_item	*head;
	struct bx_drr_item	**tail;
	u64			deficit;
	u64			served;
	u32			queued;
	bool			active;
	bool			in_turn;
};

struct bx_drr {
	struct bx_drr_flow	*head;
	struct bx_drr_flow	**tail;
	u32			quantum;
	u32			nactive;
};

void bx_flow_drr_init(struct bx_drr *d, u32 quantum);
void bx_flow_drr_flow_init(struct bx_drr_flow *f);
void bx_flow_drr_enqueue(struct bx_drr *d, struct bx_drr_flow *f,
			 struct bx_drr_item *it);
/*
 * The item to serve next and its flow, without dequeuing it. The flow at
 * the head of the round gets a quantum when its turn begins and sends
 * while its deficit covers its head item; then the next flow's turn
 * begins. NULL when nothing is queued.
 */
struct bx_drr_item *bx_flow_drr_peek(struct bx_drr *d, struct bx_drr_flow **flow);
/* Dequeue what bx_flow_drr_peek() returned. The flow leaves the active list
 * (deficit reset) when it becomes empty.
 */
void bx_flow_drr_pop(struct bx_drr *d, struct bx_drr_flow *f);
/*
 * The head item of the first flow in the round whose head costs at most
 * @max_cost, and its flow, leaving the round as it is: how a small item
 * passes a large one that cannot go yet. Dequeue it with bx_flow_drr_pop().
 * NULL if no flow's head is that small.
 */
struct bx_drr_item *bx_flow_drr_find(struct bx_drr *d, u32 max_cost,
				     struct bx_drr_flow **flow);
/*
 * The head item of the first flow in the round that @take takes (it
 * returned true; it is called on heads in round order until it does),
 * and its flow, leaving the round as it is; dequeue it with
 * bx_flow_drr_pop(). NULL if @take took none.
 */
struct bx_drr_item *bx_flow_drr_find_if(struct bx_drr *d,
					bool (*take)(struct bx_drr_item *, void *),
					void *arg, struct bx_drr_flow **flow);
/* Remove every item of @f (for failing them); @f becomes inactive. */
struct bx_drr_item *bx_flow_drr_drain(struct bx_drr *d, struct bx_drr_flow *f);
static inline bool bx_flow_drr_empty(const struct bx_drr *d)
{
	return !d->head;
}

#endif /* _BX_FLOW_H */
