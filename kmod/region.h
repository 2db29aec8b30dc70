/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: regions, the memory a process shares with the transport.
 */
#ifndef _BX_REGION_H
#define _BX_REGION_H

#include <linux/kref.h>
#include <linux/mm_types.h>
#include <linux/scatterlist.h>

struct user_struct;

/**
 * struct bx_region - kernel-allocated memory mapped into one process
 * @ref:	held by the owning file, by every VMA mapping it and by every
 *		operation whose DMA may touch it; the memory is freed only
 *		with the last reference, so a killed process cannot free
 *		pages a device still writes
 * @vaddr:	@pages mapped contiguously (vmap(), VM_USERMAP)
 * @pages:	the pages, zeroed at allocation and charged to the memory
 *		cgroup of the process that set the region up
 * @size:	bytes, a multiple of PAGE_SIZE
 * @user:	charged for @size against RLIMIT_MEMLOCK (NULL: not charged)
 */
struct bx_region {
	struct kref		ref;
	void			*vaddr;
	struct page		**pages;
	u64			size;
	struct user_struct	*user;
};

int bx_region_create(u64 size, bool ipc_lock, struct bx_region **out);
void bx_region_get(struct bx_region *r);
void bx_region_put(struct bx_region *r);
bool bx_region_valid(const struct bx_region *r, u64 off, u64 len);
int bx_region_mmap(struct bx_region *r, struct vm_area_struct *vma);
int bx_region_sg(struct bx_region *r, u64 off, u32 len,
		 struct sg_table *sgt);
void *bx_region_ptr(struct bx_region *r, u64 off);
int bx_region_vmalloc_mmap(void *vaddr, size_t size, struct vm_area_struct *vma,
			   const struct vm_operations_struct *ops, void *priv);

extern atomic64_t bx_region_bytes;

#endif /* _BX_REGION_H */
