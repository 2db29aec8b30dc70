/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _BX_REG_H
#define _BX_REG_H

#include <rdma/ib_verbs.h>

struct bx_dev;

int bx_reg_init(struct bx_dev *bdev);
void bx_reg_uninit(struct bx_dev *bdev);
int bx_reg_post(struct bx_dev *bdev, struct ib_send_wr *first);
struct ib_mr *bx_reg_mr_get(struct bx_dev *bdev);
void bx_reg_mr_put(struct bx_dev *bdev, struct ib_mr *mr);

#endif /* _BX_REG_H */
