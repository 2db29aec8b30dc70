/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the states of an operation (struct bx_op) and the transitions
 * between them. Pure; also compiled into the host unit tests.
 *
 *   NEW -> QUEUED -> WIRE -> WAIT ---------.
 *            ^  |      |      | (BUSY)     |
 *            |  '------'<-----'            v
 *            |  (next piece, retry)     ENDING -> ENDED
 *            |                             ^
 *   HELD ----+---- PARKED <-- LOST --------'
 *
 * An op is NEW until it is handed to a connection or its peer. QUEUED,
 * it waits in a queue of either (pending, send queues, ready, retry, MR
 * wait, pieces). WIRE: its work is posted (a message, RDMA READs or
 * WRITEs); a request then waits for its answer in conn->ops (WAIT). A
 * BUSY answer, a piece done or a registration sends it back to a queue.
 * An op submitted while its peer recovers is HELD for the recovery;
 * one whose connection failed is LOST: it is PARKED for the recovery if
 * it may be, else it ends. ENDING, it revokes its peer's access to its
 * buffer; ENDED, its completion is posted (or it had none to post).
 */
#ifndef _BX_OPSTATE_H
#define _BX_OPSTATE_H

#include <linux/types.h>

enum bx_op_state {
	BX_OP_NEW,	/* allocated, not handed to a connection or peer */
	BX_OP_QUEUED,	/* in a queue of its peer or connection */
	BX_OP_WIRE,	/* its message, READs or WRITEs are posted */
	BX_OP_WAIT,	/* a request in conn->ops: waits for its answer */
	BX_OP_HELD,	/* submitted during its peer's recovery, never sent */
	BX_OP_PARKED,	/* lost with its connection, waits for the recovery */
	BX_OP_LOST,	/* its connection failed: ending, parked if it may be */
	BX_OP_ENDING,	/* ending: its peer's access is being revoked */
	BX_OP_ENDED,	/* its completion is posted: nothing more happens */
	BX_OP_NSTATES
};

bool bx_opstate_legal(enum bx_op_state from, enum bx_op_state to);
const char *bx_opstate_name(enum bx_op_state s);

#endif /* _BX_OPSTATE_H */
