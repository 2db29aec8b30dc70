// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kmod/opstate.c, the operation's state machine,
 * under ASan and UBSan: every transition the design allows (listed here
 * once more, independently of the table) is accepted, every other pair
 * of states is refused, and so is anything out of range.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../../kmod/opstate.h"
#include "unit.h"

#define N BX_OP_NSTATES

static const struct { enum bx_op_state from, to; } legal[] = {
	{ BX_OP_NEW,	BX_OP_QUEUED },	/* submitted, or made for a peer */
	{ BX_OP_NEW,	BX_OP_HELD },	/* submitted during a recovery */
	{ BX_OP_NEW,	BX_OP_ENDING },	/* no connection could be made */
	{ BX_OP_QUEUED,	BX_OP_QUEUED },	/* admitted, registered, to pieces */
	{ BX_OP_QUEUED,	BX_OP_WIRE },	/* posted */
	{ BX_OP_QUEUED,	BX_OP_ENDING },	/* expired, out of memory */
	{ BX_OP_QUEUED,	BX_OP_LOST },	/* its connection failed */
	{ BX_OP_WIRE,	BX_OP_QUEUED },	/* a piece done, the next queued */
	{ BX_OP_WIRE,	BX_OP_WAIT },	/* a request tracked */
	{ BX_OP_WIRE,	BX_OP_ENDING },	/* a reply or READ done */
	{ BX_OP_WIRE,	BX_OP_LOST },	/* flushed */
	{ BX_OP_WAIT,	BX_OP_QUEUED },	/* BUSY or AGAIN: sent again */
	{ BX_OP_WAIT,	BX_OP_ENDING },	/* answered */
	{ BX_OP_WAIT,	BX_OP_LOST },	/* its connection failed */
	{ BX_OP_HELD,	BX_OP_QUEUED },	/* the recovery sends it */
	{ BX_OP_HELD,	BX_OP_ENDING },	/* ...or gives up */
	{ BX_OP_PARKED,	BX_OP_QUEUED },
	{ BX_OP_PARKED,	BX_OP_ENDING },
	{ BX_OP_LOST,	BX_OP_PARKED },	/* recoverable */
	{ BX_OP_LOST,	BX_OP_ENDED },	/* not */
	{ BX_OP_ENDING,	BX_OP_ENDED },
};

static bool is_legal(int from, int to)
{
	for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++)
		if ((int)legal[i].from == from && (int)legal[i].to == to)
			return true;
	return false;
}

UNIT_TEST(every_legal_transition_accepted)
{
	for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++)
		CHECK(bx_opstate_legal(legal[i].from, legal[i].to));
}

UNIT_TEST(every_illegal_transition_refused)
{
	int refused = 0;

	for (int from = 0; from < N; from++)
		for (int to = 0; to < N; to++) {
			if (is_legal(from, to))
				continue;
			CHECK(!bx_opstate_legal(from, to));
			refused++;
		}
	CHECK_EQ(refused, N * N - (int)(sizeof(legal) / sizeof(legal[0])));
}

UNIT_TEST(ended_is_final)
{
	for (int to = 0; to < N; to++)
		CHECK(!bx_opstate_legal(BX_OP_ENDED, to));
	/* Nothing goes back to NEW. */
	for (int from = 0; from < N; from++)
		CHECK(!bx_opstate_legal(from, BX_OP_NEW));
}

/* Every state but ENDED can still end; every one is reachable. */
UNIT_TEST(every_state_reaches_ended)
{
	bool reach[N] = { [BX_OP_NEW] = true };
	bool more = true;

	while (more) {
		more = false;
		for (int from = 0; from < N; from++)
			for (int to = 0; to < N; to++)
				if (reach[from] && !reach[to] &&
				    bx_opstate_legal(from, to))
					reach[to] = more = true;
	}
	for (int s = 0; s < N; s++)
		CHECK(reach[s]);
	for (int s = 0; s < N; s++) {
		bool end[N] = { [BX_OP_ENDED] = true };

		more = true;
		while (more) {
			more = false;
			for (int from = 0; from < N; from++)
				for (int to = 0; to < N; to++)
					if (!end[from] && end[to] &&
					    bx_opstate_legal(from, to))
						end[from] = more = true;
		}
		CHECK(end[s]);
	}
}

UNIT_TEST(out_of_range_refused)
{
	CHECK(!bx_opstate_legal(N, BX_OP_ENDED));
	CHECK(!bx_opstate_legal(BX_OP_NEW, N));
	CHECK(!bx_opstate_legal((enum bx_op_state)-1, BX_OP_QUEUED));
	CHECK(!strcmp(bx_opstate_name(N), "?"));
	CHECK(!strcmp(bx_opstate_name(BX_OP_PARKED), "parked"));
	for (int s = 0; s < N; s++)
		CHECK(strcmp(bx_opstate_name(s), "?"));
}

int main(void)
{
	return unit_run();
}
