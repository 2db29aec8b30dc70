// SPDX-License-Identifier: GPL-2.0
/*
 * bx: completion rings.
 *
 * One ring per file, in memory shared with user space (see struct
 * bx_cq_offsets in the uapi header for the protocol). The kernel keeps its
 * own producer index and never reads its own index back from shared
 * memory; the consumer index written by user space is only used to
 * compute occupancy, clamped to the ring's size (bx_cq_pending()), so a
 * corrupt one can only cost that process its own completions (counted in
 * *overflow) and never admits more operations than the ring holds.
 */

#include <linux/bx.h>

#include "cq.h"

int bx_cq_init(struct bx_cq *cq, u32 entries, struct bx_cq_offsets *off,
	       u64 *mmap_size, bool ipc_lock)
{
	u64 size = PAGE_ALIGN(BX_CQ_OFF_CQES +
			      (u64)entries * sizeof(struct bx_cqe));
	void *base;
	int ret;

	ret = bx_region_create(size, ipc_lock, &cq->mem);
	if (ret)
		return ret;
	base = cq->mem->vaddr;
	cq->head = base + BX_CQ_OFF_HEAD;
	cq->tail = base + BX_CQ_OFF_TAIL;
	cq->overflow = base + BX_CQ_OFF_OVERFLOW;
	cq->cqes = base + BX_CQ_OFF_CQES;
	*(u32 *)(base + BX_CQ_OFF_MASK) = entries - 1;
	*(u32 *)(base + BX_CQ_OFF_ENTRIES) = entries;
	cq->ktail = 0;
	cq->mask = entries - 1;
	spin_lock_init(&cq->lock);
	init_waitqueue_head(&cq->wait);

	off->head = BX_CQ_OFF_HEAD;
	off->tail = BX_CQ_OFF_TAIL;
	off->ring_mask = BX_CQ_OFF_MASK;
	off->ring_entries = BX_CQ_OFF_ENTRIES;
	off->overflow = BX_CQ_OFF_OVERFLOW;
	off->cqes = BX_CQ_OFF_CQES;
	*mmap_size = size;
	return 0;
}

void bx_cq_uninit(struct bx_cq *cq)
{
	if (cq->mem)
		bx_region_put(cq->mem);
	cq->mem = NULL;
}

/*
 * Entries produced and not yet consumed, as far as user space tells. A
 * head anywhere but within the last ring's worth of what the kernel
 * produced (ahead of the tail, or further behind than the ring holds) is
 * a lie: it counts as a full ring, so that it never earns room.
 */
u32 bx_cq_pending(struct bx_cq *cq)
{
	u32 n = cq->ktail - READ_ONCE(*cq->head);

	return min(n, cq->mask + 1);
}

bool bx_cq_readable(struct bx_cq *cq)
{
	/* Acquire pairs with the store-release in bx_cq_post(). */
	return READ_ONCE(*cq->head) != smp_load_acquire(cq->tail);
}

void bx_cq_post(struct bx_cq *cq, const struct bx_cqe *cqe)
{
	spin_lock(&cq->lock);
	/* Acquire pairs with user space's store-release of *head. */
	if (cq->ktail - smp_load_acquire(cq->head) > cq->mask) {
		WRITE_ONCE(*cq->overflow, READ_ONCE(*cq->overflow) + 1);
		spin_unlock(&cq->lock);
		return;
	}
	cq->cqes[cq->ktail & cq->mask] = *cqe;
	cq->ktail++;
	/* Publish the entry before the index that makes it visible. */
	smp_store_release(cq->tail, cq->ktail);
	spin_unlock(&cq->lock);
	wake_up_all(&cq->wait);
}
