/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: rendezvous transfers -- a requester's registered segments (the
 * server's RDMA READs and WRITEs into or out of them: rw.h).
 */
#ifndef _BX_XFER_H
#define _BX_XFER_H

#include <linux/types.h>

struct bx_op;

/* The requester's segments (PUSH, PULL). */
void bx_xfer_register(struct bx_op *op);
bool bx_xfer_revoke(struct bx_op *op);
void bx_xfer_release(struct bx_op *op);

extern atomic64_t bx_xfer_mrs_inuse;

#endif /* _BX_XFER_H */
