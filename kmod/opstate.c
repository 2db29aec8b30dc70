// SPDX-License-Identifier: GPL-2.0
/*
 * bx: which state of an operation may follow which (see opstate.h).
 * Pure; also compiled into the host unit tests.
 */
#include <linux/types.h>

#include "opstate.h"

#define S(x)	(1U << BX_OP_##x)

/* For each state, the states it may move to. */
static const u16 next[BX_OP_NSTATES] = {
	/* submitted, queued, a control message or a READ made for a peer */
	[BX_OP_NEW]	= S(QUEUED) | S(HELD) | S(ENDING),
	/* moved between queues (admitted, registered, retried) or posted */
	[BX_OP_QUEUED]	= S(QUEUED) | S(WIRE) | S(ENDING) | S(LOST),
	/* a request tracked; a piece done; its completion */
	[BX_OP_WIRE]	= S(QUEUED) | S(WAIT) | S(ENDING) | S(LOST),
	/* a BUSY or AGAIN answer sends it again; its answer ends it */
	[BX_OP_WAIT]	= S(QUEUED) | S(ENDING) | S(LOST),
	/* the recovery sends it, or gives up on it */
	[BX_OP_HELD]	= S(QUEUED) | S(ENDING),
	[BX_OP_PARKED]	= S(QUEUED) | S(ENDING),
	/* recovered if it may be, else completed */
	[BX_OP_LOST]	= S(PARKED) | S(ENDED),
	[BX_OP_ENDING]	= S(ENDED),
	[BX_OP_ENDED]	= 0,
};

bool bx_opstate_legal(enum bx_op_state from, enum bx_op_state to)
{
	if ((unsigned int)from >= BX_OP_NSTATES ||
	    (unsigned int)to >= BX_OP_NSTATES)
		return false;
	return next[from] & (1U << to);
}

static const char *const names[BX_OP_NSTATES] = {
	[BX_OP_NEW]	= "new",
	[BX_OP_QUEUED]	= "queued",
	[BX_OP_WIRE]	= "wire",
	[BX_OP_WAIT]	= "wait",
	[BX_OP_HELD]	= "held",
	[BX_OP_PARKED]	= "parked",
	[BX_OP_LOST]	= "lost",
	[BX_OP_ENDING]	= "ending",
	[BX_OP_ENDED]	= "ended",
};

const char *bx_opstate_name(enum bx_op_state s)
{
	return (unsigned int)s < BX_OP_NSTATES ? names[s] : "?";
}
