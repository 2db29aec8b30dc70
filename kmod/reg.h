/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: what a connection's peer can reach -- the connection's own
 * protection domain, its registration QP and its MRs (reg.c).
 */
#ifndef _BX_REG_H
#define _BX_REG_H

#include <rdma/ib_verbs.h>

struct bx_conn;

/*
 * MRs one connection may have (each maps up to BX_SEG_MAX bytes); an
 * operation that finds none free waits for one (bx_reg_mr_get()).
 */
#define BX_CONN_MRS_MAX	512

int bx_reg_init(struct bx_conn *conn);
void bx_reg_drain(struct bx_conn *conn);
void bx_reg_free(struct bx_conn *conn);
int bx_reg_post(struct bx_conn *conn, struct ib_send_wr *first);
struct ib_mr *bx_reg_mr_get(struct bx_conn *conn);
void bx_reg_mr_put(struct bx_conn *conn, struct ib_mr *mr);
u32 bx_reg_mr_key(u32 old);
u64 bx_reg_mr_iova(u64 iova);

#endif /* _BX_REG_H */
