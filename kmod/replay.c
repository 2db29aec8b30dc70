// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the receiver's replay record (see replay.h). Pure; also compiled
 * into the host unit tests.
 */
#include <linux/string.h>

#include "replay.h"

#define BITS_PER_LONG_ (8 * sizeof(unsigned long))

static bool bit_test(const unsigned long *map, u64 i)
{
	return map[i / BITS_PER_LONG_] & (1UL << (i % BITS_PER_LONG_));
}

static void bit_assign(unsigned long *map, u64 i, bool v)
{
	unsigned long m = 1UL << (i % BITS_PER_LONG_);

	if (v)
		map[i / BITS_PER_LONG_] |= m;
	else
		map[i / BITS_PER_LONG_] &= ~m;
}

void bx_replay_reset(struct bx_replay *r, u64 epoch)
{
	memset(r, 0, sizeof(*r));
	r->epoch = epoch;
}

/*
 * Forget the seqs below @floor, in whole words of the maps. The window
 * only moves up: a floor below the base (a sender that does not know its
 * floor says 0) forgets nothing.
 */
static void slide(struct bx_replay *r, u64 floor)
{
	u64 words;
	size_t keep;

	if (floor <= r->base)
		return;
	words = (floor - r->base) / BITS_PER_LONG_;
	if (!words)
		return;
	if (words >= BX_REPLAY_LONGS) {
		memset(r->busy, 0, sizeof(r->busy));
		memset(r->done, 0, sizeof(r->done));
	} else {
		keep = BX_REPLAY_LONGS - words;
		memmove(r->busy, r->busy + words, keep * sizeof(r->busy[0]));
		memmove(r->done, r->done + words, keep * sizeof(r->done[0]));
		memset(r->busy + keep, 0, words * sizeof(r->busy[0]));
		memset(r->done + keep, 0, words * sizeof(r->done[0]));
	}
	r->base += words * BITS_PER_LONG_;
}

/*
 * Push @seq of incarnation @epoch arrived; its sender's floor is @floor
 * (<= @seq). A new incarnation starts a new record.
 */
enum bx_replay_verdict bx_replay_begin(struct bx_replay *r, u64 epoch,
				       u64 seq, u64 floor)
{
	u64 i;

	if (r->epoch != epoch)
		bx_replay_reset(r, epoch);
	if (floor > seq || seq < r->base)
		return BX_RP_STALE;
	slide(r, floor);
	i = seq - r->base;
	if (i >= BX_REPLAY_WINDOW)
		return BX_RP_BUSY;
	if (bit_test(r->done, i)) {
		r->dups++;
		return BX_RP_DUP;
	}
	if (bit_test(r->busy, i))
		return BX_RP_BUSY;
	bit_assign(r->busy, i, true);
	return BX_RP_NEW;
}

/* The delivery that bx_replay_begin() allowed ended. */
void bx_replay_end(struct bx_replay *r, u64 epoch, u64 seq, bool delivered)
{
	u64 i;

	if (r->epoch != epoch || seq < r->base)
		return;
	i = seq - r->base;
	if (i >= BX_REPLAY_WINDOW)
		return;
	bit_assign(r->busy, i, false);
	bit_assign(r->done, i, delivered);
}
