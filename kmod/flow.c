// SPDX-License-Identifier: GPL-2.0
/*
 * bx: flow control logic (see flow.h). Pure: compiles in the kernel and
 * in user space.
 */
#include "flow.h"

/* ---- credits ----------------------------------------------------------- */

void bx_flow_credits_set_batch(struct bx_credits *c, u32 batch)
{
	u32 n = c->own < c->max ? c->own : c->max;
	u32 hi = n / 2 ? n / 2 : 1;

	c->batch = batch < 1 ? 1 : batch > hi ? hi : batch;
}

void bx_flow_credits_set_own(struct bx_credits *c, u32 own)
{
	c->own = own;
	bx_flow_credits_set_batch(c, c->batch);
}

void bx_flow_credits_init(struct bx_credits *c, u32 peer_bufs, u32 batch)
{
	*c = (struct bx_credits){
		.credits	= peer_bufs,
		.max		= peer_bufs,
		.own		= peer_bufs,
	};
	bx_flow_credits_set_batch(c, batch);
}

/* ---- windows ----------------------------------------------------------- */

/* ---- lanes -------------------------------------------------------------- */

/*
 * The lane of a file whose key (given at open, one after the other) is
 * @key, towards a peer with @want lanes (qps_per_peer) of which it takes
 * @limit (what it refused above; BX_LANES_MAX: no refusal): files opened
 * one after the other take the lanes in turn, and a file's lane stays
 * while the two counts do.
 */
u8 bx_flow_lane(u32 key, unsigned int want, unsigned int limit)
{
	unsigned int n = want < limit ? want : limit;

	if (n > BX_LANES_MAX)
		n = BX_LANES_MAX;
	if (!n)
		n = 1;
	return key % n;
}

/* ---- send stalls --------------------------------------------------------- */

/*
 * How long a connection's sends may go without one completing, if the QP
 * has @ack_timeout (RC ACK timeout exponent: 4.096 us x 2^@ack_timeout a
 * try) and @retry_count: twice what the tries can last, at least
 * BX_STALL_MIN_MS, at most U32_MAX.
 */
u32 bx_flow_stall_ms(u8 ack_timeout, u8 retry_count)
{
	u64 try_us, ms;

	if (ack_timeout > 31)
		ack_timeout = 31;
	try_us = (4096ULL << ack_timeout) / 1000;
	ms = 2 * try_us * (retry_count + 1ULL) / 1000;
	if (ms < BX_STALL_MIN_MS)
		ms = BX_STALL_MIN_MS;
	return ms > U32_MAX ? U32_MAX : (u32)ms;
}

/* ---- deficit round robin ------------------------------------------------ */

void bx_flow_drr_init(struct bx_drr *d, u32 quantum)
{
	d->head = NULL;
	d->tail = &d->head;
	d->quantum = quantum ? quantum : 1;
	d->nactive = 0;
}

void bx_flow_drr_flow_init(struct bx_drr_flow *f)
{
	*f = (struct bx_drr_flow){ .tail = &f->head };
}

static void drr_append(struct bx_drr *d, struct bx_drr_flow *f)
{
	f->next = NULL;
	*d->tail = f;
	d->tail = &f->next;
}

static void drr_unlink(struct bx_drr *d, struct bx_drr_flow *f)
{
	struct bx_drr_flow **pp;

	for (pp = &d->head; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			if (d->tail == &f->next)
				d->tail = pp;
			break;
		}
	}
	f->next = NULL;
	f->active = false;
	f->in_turn = false;
	f->deficit = 0;
	d->nactive--;
}

void bx_flow_drr_enqueue(struct bx_drr *d, struct bx_drr_flow *f,
			 struct bx_drr_item *it)
{
	it->next = NULL;
	*f->tail = it;
	f->tail = &it->next;
	f->queued++;
	if (!f->active) {
		f->active = true;
		f->deficit = 0;
		d->nactive++;
		drr_append(d, f);
	}
}

struct bx_drr_item *bx_flow_drr_peek(struct bx_drr *d, struct bx_drr_flow **flow)
{
	for (;;) {
		struct bx_drr_flow *f = d->head;
		struct bx_drr_item *it;

		if (!f)
			return NULL;
		it = f->head;
		if (d->nactive == 1 && f->deficit < it->cost)
			/* Alone: no one to be fair to. */
			f->deficit = it->cost;
		if (!f->in_turn) {
			f->in_turn = true;
			f->deficit += d->quantum;
		}
		if (f->deficit >= it->cost) {
			*flow = f;
			return it;
		}
		/* Its turn is over: to the back of the round. */
		f->in_turn = false;
		d->head = f->next;
		if (!d->head)
			d->tail = &d->head;
		drr_append(d, f);
	}
}

void bx_flow_drr_pop(struct bx_drr *d, struct bx_drr_flow *f)
{
	struct bx_drr_item *it = f->head;

	f->head = it->next;
	if (!f->head)
		f->tail = &f->head;
	it->next = NULL;
	f->queued--;
	f->deficit = f->deficit > it->cost ? f->deficit - it->cost : 0;
	f->served += it->cost;
	if (!f->queued)
		drr_unlink(d, f);
}

struct bx_drr_item *bx_flow_drr_find(struct bx_drr *d, u32 max_cost,
				     struct bx_drr_flow **flow)
{
	struct bx_drr_flow *f;

	for (f = d->head; f; f = f->next) {
		if (f->head->cost <= max_cost) {
			*flow = f;
			return f->head;
		}
	}
	return NULL;
}

struct bx_drr_item *bx_flow_drr_find_if(struct bx_drr *d,
					bool (*take)(struct bx_drr_item *, void *),
					void *arg, struct bx_drr_flow **flow)
{
	struct bx_drr_flow *f;

	for (f = d->head; f; f = f->next) {
		if (take(f->head, arg)) {
			*flow = f;
			return f->head;
		}
	}
	return NULL;
}

struct bx_drr_item *bx_flow_drr_drain(struct bx_drr *d, struct bx_drr_flow *f)
{
	struct bx_drr_item *items = f->head;

	f->head = NULL;
	f->tail = &f->head;
	f->queued = 0;
	if (f->active)
		drr_unlink(d, f);
	return items;
}
