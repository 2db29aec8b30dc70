/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _BX_CQ_H
#define _BX_CQ_H

#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/bx.h>

#include "region.h"

/**
 * struct bx_cq - the completion ring of one file
 * @mem:	ring memory, mapped by user space (a small region)
 * @head:	consumer index, written by user space only
 * @tail:	producer index as user space sees it
 * @overflow:	entries dropped because user space corrupted @head
 * @cqes:	the entries
 * @ktail:	the kernel's private producer index
 * @mask:	entries - 1
 * @lock:	serializes producers and protects @ktail; taken in process
 *		context (ioctls, CQ workqueue, rdma_cm handlers)
 * @wait:	poll(2) waiters
 */
struct bx_cq {
	struct bx_region	*mem;
	u32			*head;
	u32			*tail;
	u32			*overflow;
	struct bx_cqe		*cqes;
	u32			ktail;
	u32			mask;
	spinlock_t		lock;	/* producers, @ktail */
	wait_queue_head_t	wait;
};

#define BX_CQ_OFF_HEAD		0
#define BX_CQ_OFF_TAIL		64
#define BX_CQ_OFF_MASK		128
#define BX_CQ_OFF_ENTRIES	132
#define BX_CQ_OFF_OVERFLOW	192
#define BX_CQ_OFF_CQES		256

int bx_cq_init(struct bx_cq *cq, u32 entries, struct bx_cq_offsets *off,
	       u64 *mmap_size, bool ipc_lock);
void bx_cq_uninit(struct bx_cq *cq);
void bx_cq_post(struct bx_cq *cq, const struct bx_cqe *cqe);
u32 bx_cq_pending(struct bx_cq *cq);
bool bx_cq_readable(struct bx_cq *cq);

#endif /* _BX_CQ_H */
