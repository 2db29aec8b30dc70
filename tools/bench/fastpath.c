// SPDX-License-Identifier: GPL-2.0
/*
 * fastpath: drive bx's portable fast-path code on the host, for counting
 * its instructions with callgrind (fastpath.sh). Not a timing benchmark.
 *
 *   fastpath [ITERATIONS]      (default 100000)
 *
 * Links the kernel's pure files kmod/wire.c and kmod/flow.c (through the
 * unit-test shims) and libbx/alloc.c, built with -O2 and no sanitizers.
 * Every measured step is a noinline function named fp_*; fastpath.sh
 * reads its inclusive instruction count and its number of calls from
 * callgrind's output, so a step's cost per call includes its own call
 * and return (a handful of instructions). The steps mirror what
 * kmod/send.c, kmod/conn.c and kmod/op.c call per message and per operation:
 *
 *   wire      bx_wire_build()/bx_wire_parse() of each message shape
 *   credits   sender: take a credit and the grant a message carries;
 *             receiver: add the grant, repost a buffer, check whether a
 *             bare update is due
 *   window    admission (connection and host window: fits, fits, charge,
 *             charge, as flow_admit()) and release on completion
 *   drr       enqueue + peek + pop with 1, 4 and 64 flows queued
 *   alloc     bx_alloc_get() + bx_alloc_put() per size; and a steady state
 *             of 64 live 4 KiB blocks (free the oldest, take a new one)
 *   op        one whole operation through all of the above, both hosts:
 *             an eager push (64 B) and a rendezvous pull (1 MiB)
 *
 * The callers' locks, the verbs calls and the copies are not counted:
 * this is the logic bx adds, not the cost of a message.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "../../kmod/flow.h"
#include "../../kmod/wire.h"
#include "../../libbx/alloc.h"

/* noipa: not inlined, not cloned, not merged with an identical twin, so
 * that every step keeps its own name in the profile.
 */
#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noipa))
#endif
#define MiB (1u << 20)

static u8 wbuf[8192], payload[4096];
static u32 sink;	/* results go here so nothing is optimized away */

/* ---- wire ---------------------------------------------------------------- */

static struct bx_msg msg_of(u8 type, u32 len, u8 nrdv)
{
	struct bx_msg m = { .type = type, .credits = 3, .service = 7,
			    .req_id = 0x1234, .seq = 99, .len = len,
			    .nrdv = nrdv };

	for (u8 i = 0; i < nrdv; i++) {
		m.rdv[i].addr = 0x7f0000000000ull + i * MiB;
		m.rdv[i].rkey = 0x100 + i;
		m.rdv[i].len = type == BX_MSG_PUSH_RDV ? len / nrdv : MiB;
	}
	if (type == BX_MSG_PUSH || type == BX_MSG_PULL_REQ ||
	    type == BX_MSG_PULL_RESP)
		m.payload = payload;
	return m;
}

static struct bx_msg m_credit, m_push64, m_push4k, m_rdv1, m_rdv16,
	m_pullreq, m_resp64, m_written, m_done;

#define WIRE_PAIR(name, m)						\
	static NOINLINE size_t fp_build_##name(void)			\
	{								\
		return bx_wire_build(wbuf, sizeof(wbuf), &(m));		\
	}								\
	static NOINLINE int fp_parse_##name(size_t n)			\
	{								\
		struct bx_msg p;					\
		int ret = bx_wire_parse(wbuf, n, 4096, &p);		\
									\
		sink += p.len;						\
		return ret;						\
	}

WIRE_PAIR(credit, m_credit)
WIRE_PAIR(push_64B, m_push64)
WIRE_PAIR(push_4KiB, m_push4k)
WIRE_PAIR(push_rdv_1seg, m_rdv1)
WIRE_PAIR(push_rdv_16seg, m_rdv16)
WIRE_PAIR(pull_req, m_pullreq)
WIRE_PAIR(pull_resp_64B, m_resp64)
WIRE_PAIR(pull_written, m_written)
WIRE_PAIR(push_done, m_done)

static int bench_wire(long n)
{
	int bad = 0;

#define RUN(name) do {							\
		for (long i = 0; i < n; i++) {				\
			size_t len = fp_build_##name();			\
			bad |= !len || fp_parse_##name(len);		\
		}							\
	} while (0)
	RUN(credit);
	RUN(push_64B);
	RUN(push_4KiB);
	RUN(push_rdv_1seg);
	RUN(push_rdv_16seg);
	RUN(pull_req);
	RUN(pull_resp_64B);
	RUN(pull_written);
	RUN(push_done);
#undef RUN
	return bad;
}

/* ---- credits and windows --------------------------------------------------- */

static struct bx_credits cr_a, cr_b;	/* the two ends of a connection */
static struct bx_win w_conn, w_host;
static const struct bx_win_lim lim_conn = { 8192u << 10, 128, ~0u };
static const struct bx_win_lim lim_host = { 32768u << 10, 1024, ~0u };

/* Sender: a data message takes a credit and carries the grant. */
static NOINLINE int fp_credits_send(struct bx_credits *c, u16 *grant)
{
	if (!bx_flow_credits_take(c))
		return -1;
	*grant = bx_flow_credits_grant_take(c);
	return 0;
}

/*
 * Receiver: take the message's grant, repost its buffer; true if a bare
 * update is now due (idle connection: once credit_batch are owed).
 */
static NOINLINE bool fp_credits_recv(struct bx_credits *c, u16 grant,
				     int *bad)
{
	*bad |= bx_flow_credits_add(c, grant);
	bx_flow_credits_posted(c);
	return bx_flow_credits_update_due(c, false);
}

/* A bare update from @from to @to, when one is due. */
static NOINLINE int fp_credits_update(struct bx_credits *from,
				      struct bx_credits *to)
{
	int ret;

	if (!bx_flow_credits_take_update(from))
		return -1;
	ret = bx_flow_credits_add(to, bx_flow_credits_grant_take(from));
	bx_flow_credits_posted(to);	/* the update's buffer, reposted */
	return ret;
}

/* flow_admit(): the connection's window, then the host's. */
static NOINLINE bool fp_win_admit(u64 bytes)
{
	if (!bx_flow_win_fits(&w_conn, &lim_conn, bytes, 0) ||
	    !bx_flow_win_fits(&w_host, &lim_host, bytes, 0))
		return false;
	bx_flow_win_charge(&w_host, bytes, 0);
	bx_flow_win_charge(&w_conn, bytes, 0);
	return true;
}

/* bx_flow_release(). */
static NOINLINE bool fp_win_release(u64 bytes)
{
	bool ok = bx_flow_win_release(&w_conn, bytes, 0);

	/* Both, as bx_flow_release() does, whatever the first said. */
	return bx_flow_win_release(&w_host, bytes, 0) && ok;
}

static void credits_reset(void)
{
	bx_flow_credits_init(&cr_a, 128, 32);
	bx_flow_credits_init(&cr_b, 128, 32);
}

/* One data message from @from to @to, with what follows from it. */
static int message(struct bx_credits *from, struct bx_credits *to)
{
	int bad = 0;
	u16 g = 0;

	bad |= fp_credits_send(from, &g);
	if (fp_credits_recv(to, g, &bad))
		bad |= fp_credits_update(to, from);
	return bad;
}

static int bench_credits_windows(long n)
{
	int bad = 0;

	/* Request and response: one message each way per round. */
	credits_reset();
	for (long i = 0; i < n; i++) {
		bad |= message(&cr_a, &cr_b);
		bad |= message(&cr_b, &cr_a);
	}
	/* One way only (pushes): bare updates flow back every batch. */
	credits_reset();
	for (long i = 0; i < n; i++)
		bad |= message(&cr_a, &cr_b);
	/* Keep 8 operations in flight, as a busy connection does. */
	for (int i = 0; i < 8; i++)
		bad |= !fp_win_admit(65536);
	for (long i = 0; i < n; i++) {
		bad |= !fp_win_admit(65536);
		bad |= !fp_win_release(65536);
	}
	return bad;
}

/* ---- DRR ------------------------------------------------------------------ */

#define MAXFLOWS 64
#define PERFLOW	4

static struct bx_drr drr;
static struct bx_drr_flow flows[MAXFLOWS];
static struct bx_drr_item items[MAXFLOWS * PERFLOW + 1];

/*
 * Queue one item, serve one (what kick_next() does per operation);
 * returns the item served. One copy per number of flows, so that the
 * profile tells them apart.
 */
#define DRR_CYCLE(name)							\
	static NOINLINE struct bx_drr_item *				\
	fp_drr_cycle_##name(struct bx_drr_flow *f, struct bx_drr_item *it) \
	{								\
		struct bx_drr_flow *sf;					\
									\
		bx_flow_drr_enqueue(&drr, f, it);				\
		it = bx_flow_drr_peek(&drr, &sf);				\
		if (it)							\
			bx_flow_drr_pop(&drr, sf);				\
		return it;						\
	}

DRR_CYCLE(1flow)
DRR_CYCLE(4flows)
DRR_CYCLE(64flows)

typedef struct bx_drr_item *(*cycle_fn)(struct bx_drr_flow *,
					struct bx_drr_item *);

/* @nflows flows (processes) with work queued: PERFLOW items each. */
static int bench_drr(long n, int nflows, cycle_fn cycle)
{
	struct bx_drr_item *spare = &items[nflows * PERFLOW];

	bx_flow_drr_init(&drr, 65536);
	for (int f = 0; f < nflows; f++)
		bx_flow_drr_flow_init(&flows[f]);
	for (int f = 0; f < nflows; f++)
		for (int k = 0; k < PERFLOW; k++) {
			struct bx_drr_item *it = &items[f * PERFLOW + k];

			it->cost = 4096u << k;
			bx_flow_drr_enqueue(&drr, &flows[f], it);
		}
	/* The item served is queued again next, on the next flow in turn. */
	for (long i = 0; i < n; i++) {
		spare = cycle(&flows[i % nflows], spare);
		if (!spare)
			return 1;
	}
	return 0;
}

/* ---- allocator ------------------------------------------------------------- */

static struct bx_alloc *heap;

/* bx_buf_alloc()'s call: 64-byte aligned, page-aligned from 4 KiB. */
static NOINLINE int fp_alloc_get(uint64_t size, uint64_t *off)
{
	return bx_alloc_get(heap, size, size >= 4096 ? 4096 : 64, off);
}

static NOINLINE int fp_alloc_put(uint64_t off)
{
	return bx_alloc_put(heap, off);
}

#define ALLOC_PAIR(name, size)						\
	static NOINLINE int fp_alloc_pair_##name(void)			\
	{								\
		uint64_t off;						\
		int ret = bx_alloc_get(heap, size,			\
				       size >= 4096 ? 4096 : 64, &off);	\
									\
		return ret ? ret : bx_alloc_put(heap, off);		\
	}

ALLOC_PAIR(64B, 64)
ALLOC_PAIR(4KiB, 4096)
ALLOC_PAIR(64KiB, 65536)
ALLOC_PAIR(1MiB, 1048576)

static int bench_alloc(long n)
{
	uint64_t ring[64];
	int bad = 0;

	for (long i = 0; i < n; i++) {
		bad |= fp_alloc_pair_64B();
		bad |= fp_alloc_pair_4KiB();
		bad |= fp_alloc_pair_64KiB();
		bad |= fp_alloc_pair_1MiB();
	}
	/* Steady state: 64 live blocks, the oldest freed for a new one. */
	for (int k = 0; k < 64; k++)
		bad |= fp_alloc_get(4096, &ring[k]);
	for (long i = 0; i < n; i++) {
		bad |= fp_alloc_put(ring[i % 64]);
		bad |= fp_alloc_get(4096, &ring[i % 64]);
	}
	for (int k = 0; k < 64; k++)
		bad |= fp_alloc_put(ring[k]);
	return bad;
}

/* ---- whole operations --------------------------------------------------------- */

static struct bx_drr_item op_item;

/*
 * The send queue's choice (send.c, send_direct()): with no process
 * queued, an op is admitted at once; else it takes its turn in the round
 * robin. True if @it is the one to admit.
 */
static NOINLINE bool fp_send_pick(struct bx_drr_flow *f,
				  struct bx_drr_item *it)
{
	if (bx_flow_drr_empty(&drr))
		return true;
	return fp_drr_cycle_1flow(f, it) == it;
}

/*
 * Build on one side, parse on the other. The sender builds from the
 * message its op carries (op->msg), setting only the grant, as
 * kick_slot() does: no copy of struct bx_msg is part of the path.
 */
static int wire(struct bx_msg *m, u16 credits, struct bx_msg *rx)
{
	size_t len;

	m->credits = credits;
	len = bx_wire_build(wbuf, sizeof(wbuf), m);
	return !len || bx_wire_parse(wbuf, len, 4096, rx);
}

/*
 * An eager push of 64 bytes, both hosts: libbx allocates the buffer; the
 * sender's kernel finds no process queued (so no DRR round), admits it
 * (windows), takes a credit,
 * builds the PUSH; the receiver parses it, takes its grant, reposts the
 * buffer and sends a bare credit update every credit_batch messages. The
 * push completes when its SEND does: windows released, buffer freed.
 */
static NOINLINE int fp_op_push_eager(void)
{
	struct bx_msg rx;
	uint64_t off;
	int bad;
	u16 g = 0;

	bad = bx_alloc_get(heap, 64, 64, &off);
	bad |= !fp_send_pick(&flows[0], &op_item);
	bad |= !fp_win_admit(64);
	bad |= fp_credits_send(&cr_a, &g);
	bad |= wire(&m_push64, g, &rx);
	if (fp_credits_recv(&cr_b, rx.credits, &bad))
		bad |= fp_credits_update(&cr_b, &cr_a);
	bad |= !fp_win_release(64);
	bad |= bx_alloc_put(heap, off);
	return bad;
}

/*
 * A rendezvous pull of 1 MiB: the requester allocates request and sink,
 * queues (its sink needs an MR: the kick registers it, so no direct
 * admission), admits (len + resp_len), sends PULL_REQ with one
 * descriptor; the server parses it and replies: with no process queued
 * its REPLY is admitted at once, then
 * PULL_WRITTEN after the RDMA WRITEs; the requester parses that and
 * releases its windows, the server releases its own when the SEND
 * completes. Registration (FRWR) is verbs work, not counted here.
 */
static NOINLINE int fp_op_pull_rdv(void)
{
	struct bx_msg rx;
	uint64_t req, sink_off;
	int bad;
	u16 g = 0;

	bad = bx_alloc_get(heap, 64, 64, &req);
	bad |= bx_alloc_get(heap, MiB, 4096, &sink_off);
	/* requester */
	bad |= fp_drr_cycle_1flow(&flows[0], &op_item) != &op_item;
	bad |= !fp_win_admit(MiB + 16);
	bad |= fp_credits_send(&cr_a, &g);
	bad |= wire(&m_pullreq, g, &rx);
	/* server */
	if (fp_credits_recv(&cr_b, rx.credits, &bad))
		bad |= fp_credits_update(&cr_b, &cr_a);
	bad |= !fp_send_pick(&flows[1], &op_item);
	bad |= !fp_win_admit(MiB);
	bad |= fp_credits_send(&cr_b, &g);
	bad |= wire(&m_written, g, &rx);
	/* requester */
	if (fp_credits_recv(&cr_a, rx.credits, &bad))
		bad |= fp_credits_update(&cr_a, &cr_b);
	bad |= !fp_win_release(MiB + 16);
	/* server */
	bad |= !fp_win_release(MiB);
	bad |= bx_alloc_put(heap, sink_off);
	bad |= bx_alloc_put(heap, req);
	return bad;
}

static int bench_ops(long n)
{
	int bad = 0;

	credits_reset();
	memset(&w_conn, 0, sizeof(w_conn));
	memset(&w_host, 0, sizeof(w_host));
	bx_flow_drr_init(&drr, 65536);
	bx_flow_drr_flow_init(&flows[0]);
	bx_flow_drr_flow_init(&flows[1]);
	op_item.cost = 64;
	for (long i = 0; i < n; i++)
		bad |= fp_op_push_eager();
	op_item.cost = MiB + 16;
	for (long i = 0; i < n; i++)
		bad |= fp_op_pull_rdv();
	return bad;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int bad = 0;

	if (n < 1) {
		fprintf(stderr, "usage: fastpath [ITERATIONS]\n");
		return 2;
	}
	memset(payload, 0x5a, sizeof(payload));
	m_credit = msg_of(BX_MSG_CREDIT, 0, 0);
	m_push64 = msg_of(BX_MSG_PUSH, 64, 0);
	m_push4k = msg_of(BX_MSG_PUSH, 4096, 0);
	m_rdv1 = msg_of(BX_MSG_PUSH_RDV, MiB, 1);
	m_rdv16 = msg_of(BX_MSG_PUSH_RDV, 16 * MiB, 16);
	m_pullreq = msg_of(BX_MSG_PULL_REQ, 16, 1);
	m_resp64 = msg_of(BX_MSG_PULL_RESP, 64, 0);
	m_written = msg_of(BX_MSG_PULL_WRITTEN, MiB, 0);
	m_done = msg_of(BX_MSG_PUSH_DONE, 0, 0);
	if (bx_alloc_create(&heap, 256ull * MiB, 64, 65536)) {
		fprintf(stderr, "fastpath: bx_alloc_create failed\n");
		return 1;
	}
	bad |= bench_wire(n);
	bad |= bench_credits_windows(n);
	bad |= bench_drr(n, 1, fp_drr_cycle_1flow);
	bad |= bench_drr(n, 4, fp_drr_cycle_4flows);
	bad |= bench_drr(n, 64, fp_drr_cycle_64flows);
	bad |= bench_alloc(n);
	bad |= bench_ops(n);
	bx_alloc_destroy(heap);
	printf("fastpath: %ld iterations of each step%s (sink %u)\n", n,
	       bad ? ", ERRORS" : "", sink);
	return bad ? 1 : 0;
}
