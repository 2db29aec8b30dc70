// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kmod/replay.c, the receiver's record of delivered
 * pushes, under ASan and UBSan: directed cases, then a randomized model
 * of a sender whose connections fail at random points, checked for
 * "every push delivered exactly once" after every run.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../../kmod/replay.h"
#include "unit.h"

UNIT_TEST(new_then_dup)
{
	static struct bx_replay r;

	bx_replay_reset(&r, 7);
	CHECK_EQ(bx_replay_begin(&r, 7, 1, 1), BX_RP_NEW);
	/* Sent again while the first delivery runs: later. */
	CHECK_EQ(bx_replay_begin(&r, 7, 1, 1), BX_RP_BUSY);
	bx_replay_end(&r, 7, 1, true);
	CHECK_EQ(bx_replay_begin(&r, 7, 1, 1), BX_RP_DUP);
	CHECK_EQ(r.dups, 1);
	/* Not delivered (no buffer, READ failed): may come again. */
	CHECK_EQ(bx_replay_begin(&r, 7, 2, 1), BX_RP_NEW);
	bx_replay_end(&r, 7, 2, false);
	CHECK_EQ(bx_replay_begin(&r, 7, 2, 1), BX_RP_NEW);
}

UNIT_TEST(new_epoch_forgets)
{
	static struct bx_replay r;

	bx_replay_reset(&r, 1);
	CHECK_EQ(bx_replay_begin(&r, 1, 5, 5), BX_RP_NEW);
	bx_replay_end(&r, 1, 5, true);
	/* A restarted sender numbers afresh; the old record is void. */
	CHECK_EQ(bx_replay_begin(&r, 2, 5, 5), BX_RP_NEW);
	CHECK_EQ(r.epoch, 2);
	/* The old incarnation's late end changes nothing. */
	bx_replay_end(&r, 1, 5, true);
	bx_replay_end(&r, 2, 5, true);
	CHECK_EQ(bx_replay_begin(&r, 2, 5, 5), BX_RP_DUP);
}

/*
 * A floor below the record's base (an unknown lag is floor 0) must not
 * move the window backwards: once it did, slide() computed floor - base
 * in u64, cleared both maps and put the base back to 0, and a push sent
 * again after a reconnect was delivered twice.
 */
UNIT_TEST(floor_below_base_keeps_record)
{
	static struct bx_replay r;

	bx_replay_reset(&r, 9);
	CHECK_EQ(bx_replay_begin(&r, 9, 70000, 69990), BX_RP_NEW);
	bx_replay_end(&r, 9, 70000, true);
	CHECK_EQ(bx_replay_begin(&r, 9, 70100, 0), BX_RP_NEW);
	CHECK_EQ(bx_replay_begin(&r, 9, 70000, 69990), BX_RP_DUP);
	/* The base never went down. */
	CHECK(r.base >= 69990 - BX_REPLAY_WINDOW);
	CHECK(r.base <= 69990);
}

UNIT_TEST(window_and_floor)
{
	static struct bx_replay r;
	uint64_t far = BX_REPLAY_WINDOW + 100;

	bx_replay_reset(&r, 3);
	CHECK_EQ(bx_replay_begin(&r, 3, 1, 1), BX_RP_NEW);
	/* Seq 1 is unresolved at the sender: the window cannot move. */
	CHECK_EQ(bx_replay_begin(&r, 3, far, 1), BX_RP_BUSY);
	bx_replay_end(&r, 3, 1, true);
	/* Once the sender's floor passed it, the window follows. */
	CHECK_EQ(bx_replay_begin(&r, 3, far, far - 10), BX_RP_NEW);
	CHECK(r.base <= far - 10);
	CHECK(r.base + BX_REPLAY_WINDOW > far);
	/* Below the base: the sender said it would never ask again. */
	CHECK_EQ(bx_replay_begin(&r, 3, 1, 1), BX_RP_STALE);
	/* A floor above the seq is a lie. */
	CHECK_EQ(bx_replay_begin(&r, 3, far + 1, far + 2), BX_RP_STALE);
	/* Records survive the slide. */
	bx_replay_end(&r, 3, far, true);
	CHECK_EQ(bx_replay_begin(&r, 3, far + 3000, far), BX_RP_NEW);
	CHECK_EQ(bx_replay_begin(&r, 3, far, far), BX_RP_DUP);
	/* A far jump of the floor clears everything. */
	CHECK_EQ(bx_replay_begin(&r, 3, far * 9, far * 9), BX_RP_NEW);
	CHECK_EQ(bx_replay_begin(&r, 3, far * 9, far * 9), BX_RP_BUSY);
}

/* ---- randomized model ------------------------------------------------------ */

static uint64_t rs;

static uint64_t rnd(uint64_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs % n;
}

#define NPUSH	600
#define NFLY	64

/*
 * One sender, one receiver. A push in flight is at the receiver in one
 * of these stages; a connection failure loses every answer not yet
 * received, and the sender then sends its in-doubt pushes again with
 * their seq, its others (answered BUSY) with a new one.
 */
struct push {
	uint64_t	seq;		/* 0: needs a new number */
	int		delivered;	/* times the receiver delivered it */
	bool		resolved;	/* the sender knows the outcome */
};

struct fly {
	int		p;		/* index into pushes */
	uint64_t	seq;
	int		stage;		/* 0 sent, 1 delivering, 2 answered */
	int		answer;		/* ANS_* */
};

enum { ANS_OK, ANS_AGAIN, ANS_UNDELIVERED };

/* The receiver's answer to a verdict of bx_replay_begin(). */
static int answer_of(int verdict)
{
	return verdict == BX_RP_DUP ? ANS_OK : ANS_AGAIN;
}

static uint64_t model_floor(struct push *ps, uint64_t next)
{
	uint64_t f = next;
	int i;

	for (i = 0; i < NPUSH; i++)
		if (!ps[i].resolved && ps[i].seq && ps[i].seq < f)
			f = ps[i].seq;
	return f;
}

static void model_run(uint64_t seed, int *failed_out)
{
	static struct bx_replay r;
	static struct push ps[NPUSH];
	static struct fly fl[NFLY], orph[NPUSH];
	int nfly = 0, norph = 0, next_p = 0, resolved = 0, steps = 0, i;
	uint64_t next_seq = 1, epoch = seed + 1;
	int *unit_failed = failed_out;

	rs = seed * 0x9e3779b97f4a7c15ull | 1;
	memset(ps, 0, sizeof(ps));
	bx_replay_reset(&r, 0);
	while ((resolved < NPUSH || norph) && steps++ < 400000) {
		uint64_t k = rnd(100);

		if (k < 30 && nfly < NFLY) {
			/* Send: a new push, or one waiting to go again. */
			int p = -1, v;

			for (i = 0; i < 8 && p < 0 && next_p; i++) {
				int j = (int)rnd(next_p), m;

				for (m = 0; m < nfly && fl[m].p != j; m++)
					;
				if (!ps[j].resolved && m == nfly)
					p = j;
			}
			if (p < 0 && next_p < NPUSH)
				p = next_p++;
			if (p < 0)
				continue;
			for (i = 0; i < nfly; i++)
				if (fl[i].p == p)
					break;
			if (i < nfly)
				continue;	/* already in flight */
			if (!ps[p].seq)
				ps[p].seq = next_seq++;
			fl[nfly++] = (struct fly){ .p = p, .seq = ps[p].seq };
			/* Arrival, in order of sending per connection. */
			v = bx_replay_begin(&r, epoch, ps[p].seq,
					    model_floor(ps, next_seq));
			CHECK(v != BX_RP_STALE);
			fl[nfly - 1].stage = v == BX_RP_NEW ? 1 : 2;
			fl[nfly - 1].answer = answer_of(v);
		} else if (k < 60 && nfly) {
			/* A delivery in progress ends. */
			struct fly *f = &fl[rnd(nfly)];

			if (f->stage == 1) {
				bool ok = rnd(10) < 8;

				bx_replay_end(&r, epoch, f->seq, ok);
				if (ok)
					ps[f->p].delivered++;
				f->answer = ok ? ANS_OK : ANS_UNDELIVERED;
				f->stage = 2;
			}
		} else if (k < 65 && norph) {
			/* A delivery on a failed connection ends, unheard. */
			int n = (int)rnd(norph);
			bool ok = rnd(2);

			bx_replay_end(&r, epoch, orph[n].seq, ok);
			if (ok)
				ps[orph[n].p].delivered++;
			orph[n] = orph[--norph];
		} else if (k < 95 && nfly) {
			/* An answer reaches the sender. */
			int n = (int)rnd(nfly);
			struct fly *f = &fl[n];
			struct push *p = &ps[f->p];

			if (f->stage != 2)
				continue;
			if (f->answer == ANS_OK) {
				p->resolved = true;
				resolved++;
			} else if (f->answer == ANS_UNDELIVERED) {
				p->seq = 0;	/* proven: a new number */
			}			/* AGAIN: the same seq */
			fl[n] = fl[--nfly];
		} else {
			/*
			 * The connection fails: answers are lost, deliveries
			 * in progress end (delivered or not) on the old one,
			 * possibly after the resends arrive. Every push in
			 * flight is in doubt and keeps its seq.
			 */
			for (i = 0; i < nfly; i++) {
				if (fl[i].stage == 1 && rnd(2)) {
					bool ok = rnd(2);

					bx_replay_end(&r, epoch, fl[i].seq, ok);
					if (ok)
						ps[fl[i].p].delivered++;
				} else if (fl[i].stage == 1) {
					orph[norph++] = fl[i];	/* ends later */
				}
				fl[i] = fl[--nfly];
				i--;
			}
		}
		for (i = 0; i < NPUSH; i++)
			CHECK(ps[i].delivered <= 1);
	}
	CHECK_EQ(resolved, NPUSH);
	for (i = 0; i < NPUSH; i++)
		CHECK_EQ(ps[i].delivered, 1);
}

UNIT_TEST(model_exactly_once)
{
	uint64_t seed;

	for (seed = 1; seed <= 300; seed++) {
		int before = *unit_failed;

		model_run(seed, unit_failed);
		if (*unit_failed != before) {
			printf("# model seed %llu failed\n",
			       (unsigned long long)seed);
			break;
		}
	}
}

int main(void)
{
	return unit_run();
}
