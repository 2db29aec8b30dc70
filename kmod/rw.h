/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: rendezvous transfers -- a server's RDMA READs and WRITEs (SRV_READ,
 * REPLY) into or out of a requester's segments (xfer.h).
 */
#ifndef _BX_RW_H
#define _BX_RW_H

#include <linux/types.h>

struct bx_buf;
struct bx_op;

bool bx_rw_plan_pieces(struct bx_op *op);
void bx_rw_piece(struct bx_op *op);
void bx_rw_read(struct bx_op *op);
int bx_rw_transmit_reply(struct bx_op *op, struct bx_buf *slot);
void bx_rw_release(struct bx_op *op);

extern atomic64_t bx_rw_pieces;

#endif /* _BX_RW_H */
