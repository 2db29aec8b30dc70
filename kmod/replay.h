/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the receiver's record of which pushes of one sender incarnation it
 * delivered, so that a push sent again after a reconnect is delivered at
 * most once. Pure: no locking, no allocation; recover.c holds the lock and
 * op.c asks. replay.c also compiles in user space for the host unit tests
 * (tools/testing/unit/replay_test.c).
 *
 * The sender numbers its pushes to a peer (seq 1, 2, ...: a fresh number
 * each time a push is sent, except when it is sent again because its
 * connection failed before its outcome was known) and tells, with every
 * push, its floor: the lowest seq whose outcome it does not know yet.
 * The receiver keeps one bit pair per seq in [base, base + window):
 * "being delivered" and "delivered". Below the floor the sender will
 * never ask again, so the window slides up to it. A push beyond the
 * window, or one still being delivered (a READ on the old connection),
 * is answered BUSY: the sender sends it again later, nothing is lost.
 */
#ifndef _BX_REPLAY_H
#define _BX_REPLAY_H

#include <linux/types.h>

#define BX_REPLAY_WINDOW	8192	/* seqs remembered above the floor */
#define BX_REPLAY_LONGS		(BX_REPLAY_WINDOW / (8 * sizeof(unsigned long)))

enum bx_replay_verdict {
	BX_RP_NEW,	/* deliver it; report with bx_replay_end() */
	BX_RP_DUP,	/* delivered already: acknowledge, do not deliver */
	BX_RP_BUSY,	/* being delivered, or beyond the window: later */
	BX_RP_STALE,	/* below the sender's own floor: protocol error */
};

/**
 * struct bx_replay - delivered pushes of one sender incarnation
 * @epoch:	the incarnation (0: none yet)
 * @base:	the window starts here; every seq below is forgotten
 * @busy:	bit (seq - base): being delivered
 * @done:	bit (seq - base): delivered
 * @dups:	pushes acknowledged without delivery
 */
struct bx_replay {
	u64		epoch;
	u64		base;
	unsigned long	busy[BX_REPLAY_LONGS];
	unsigned long	done[BX_REPLAY_LONGS];
	u64		dups;
};

void bx_replay_reset(struct bx_replay *r, u64 epoch);
enum bx_replay_verdict bx_replay_begin(struct bx_replay *r, u64 epoch,
				       u64 seq, u64 floor);
void bx_replay_end(struct bx_replay *r, u64 epoch, u64 seq, bool delivered);

#endif /* _BX_REPLAY_H */
