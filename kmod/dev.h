/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: per-RDMA-device context.
 */
#ifndef _BX_DEV_H
#define _BX_DEV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

/**
 * struct bx_dev - bx's context for one RDMA device
 * @ibdev:	the device; valid until our ib_client remove() returns
 * @node:	entry in bx_devs, under bx_devs_lock
 * @ref:	lifetime; the ib_client holds one reference from add() to
 *		remove(), every user (connection, file) holds its own
 * @pd:		protection domain shared by everything bx does on @ibdev
 * @index:	stable small number for names and debugfs
 * @reg_qp:	registration QP (reg.c) and its CQ @reg_cq
 * @mrs:	FRWR MR pool of the device (ib_mr_pool on @reg_qp)
 * @reg_lock:	protects @reg_live against posts; any context
 * @reg_live:	registrations may be posted
 * @event_handler: port events, which kick teardowns waiting for a port
 *		(bx_conn_port_event())
 * @removing:	remove() began: no teardown waits for a port any more
 */
struct bx_dev {
	struct ib_device	*ibdev;
	struct list_head	node;
	struct kref		ref;
	struct ib_pd		*pd;
	u32			index;
	struct ib_qp		*reg_qp;
	struct ib_cq		*reg_cq;
	struct list_head	mrs;
	spinlock_t		reg_lock;	/* @reg_live vs. posts */
	bool			reg_live;
	struct ib_event_handler	event_handler;
	bool			removing;
};

int bx_dev_init(void);
void bx_dev_uninit(void);
void bx_dev_put(struct bx_dev *bdev);
struct bx_dev *bx_dev_get(struct ib_device *ibdev);
unsigned int bx_dev_count(void);
int bx_dev_show(struct seq_file *m, void *unused);

#endif /* _BX_DEV_H */
