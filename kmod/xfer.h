/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: rendezvous transfers -- a requester's registered segments and a
 * server's RDMA READs and WRITEs into or out of them.
 */
#ifndef _BX_XFER_H
#define _BX_XFER_H

#include <linux/types.h>

struct bx_buf;
struct bx_op;

/* The requester's segments (PUSH, PULL). */
void bx_xfer_register(struct bx_op *op);
bool bx_xfer_revoke(struct bx_op *op);
void bx_xfer_release(struct bx_op *op);

/* The server's READs and WRITEs (SRV_READ, REPLY). */
bool bx_xfer_plan_pieces(struct bx_op *op);
void bx_xfer_piece(struct bx_op *op);
void bx_xfer_read(struct bx_op *op);
int bx_xfer_transmit_reply(struct bx_op *op, struct bx_buf *slot);
void bx_xfer_rw_release(struct bx_op *op);

extern atomic64_t bx_mrs_inuse;
extern atomic64_t bx_pieces;

#endif /* _BX_XFER_H */
