// SPDX-License-Identifier: GPL-2.0
/*
 * bx: regions.
 *
 * A region is memory the module allocates for one open file at
 * BX_IOC_SETUP and the process maps with mmap(2). Applications build their
 * payloads in it and the transport moves them by DMA straight from and
 * into it, so the data is never copied between application and transport
 * buffers for rendezvous transfers.
 *
 * The memory is vmalloc_user() pages: zeroed, never swapped, and owned by
 * the module, not by the process, so nothing needs pinning. It is charged
 * twice: against the module-wide cap bx_region_cap and, unless the caller
 * has CAP_IPC_LOCK, against its user's RLIMIT_MEMLOCK (the same atomic
 * scheme io_uring uses, so that the charge can be dropped from any
 * context). Mappings are VM_DONTCOPY (a child of fork(2) does not get
 * them) and VM_DONTEXPAND.
 *
 * Lifetime: see struct bx_region. Per-operation DMA uses a scatterlist
 * over the pages of exactly the operation's byte range (bx_region_sg()).
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/error-injection.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "region.h"

atomic64_t bx_region_bytes = ATOMIC64_INIT(0);

/* Module-wide cap on region memory, MiB. */
unsigned long bx_region_cap = 1024;
module_param_named(region_cap_mb, bx_region_cap, ulong, 0644);
MODULE_PARM_DESC(region_cap_mb, "Cap on all regions together, MiB (default 1024)");

static int charge_memlock(struct user_struct *user, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long cur = atomic_long_read(&user->locked_vm);

	do {
		if (cur + pages > limit || cur + pages < cur)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, cur + pages));
	return 0;
}

int bx_region_create(u64 size, struct bx_region **out)
{
	unsigned long pages = size >> PAGE_SHIFT;
	struct bx_region *r;
	int ret;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	kref_init(&r->ref);
	r->size = size;

	/* The module-wide cap first: it bounds what any user can pin. */
	if (atomic64_add_return(size, &bx_region_bytes) >
	    (s64)bx_region_cap << 20) {
		ret = -ENOMEM;
		goto err_uncap;
	}
	if (!capable(CAP_IPC_LOCK)) {
		r->user = get_uid(current_user());
		ret = charge_memlock(r->user, pages);
		if (ret)
			goto err_put_user;
	}
	r->vaddr = vmalloc_user(size);
	if (!r->vaddr) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	*out = r;
	return 0;

err_uncharge:
	if (r->user)
		atomic_long_sub(pages, &r->user->locked_vm);
err_put_user:
	if (r->user)
		free_uid(r->user);
err_uncap:
	atomic64_sub(size, &bx_region_bytes);
	kfree(r);
	return ret;
}
ALLOW_ERROR_INJECTION(bx_region_create, ERRNO);

static void region_release(struct kref *ref)
{
	struct bx_region *r = container_of(ref, struct bx_region, ref);

	vfree(r->vaddr);
	if (r->user) {
		atomic_long_sub(r->size >> PAGE_SHIFT, &r->user->locked_vm);
		free_uid(r->user);
	}
	atomic64_sub(r->size, &bx_region_bytes);
	kfree(r);
}

void bx_region_get(struct bx_region *r)
{
	kref_get(&r->ref);
}

void bx_region_put(struct bx_region *r)
{
	kref_put(&r->ref, region_release);
}

/* Whether [off, off + len) lies inside the region, without overflow. */
bool bx_region_valid(const struct bx_region *r, u64 off, u64 len)
{
	return off <= r->size && len <= r->size - off;
}

void *bx_region_ptr(struct bx_region *r, u64 off)
{
	return r->vaddr + off;
}

static void region_vm_open(struct vm_area_struct *vma)
{
	bx_region_get(vma->vm_private_data);
}

static void region_vm_close(struct vm_area_struct *vma)
{
	bx_region_put(vma->vm_private_data);
}

static const struct vm_operations_struct region_vm_ops = {
	.open	= region_vm_open,
	.close	= region_vm_close,
};

/*
 * Map vmalloc_user() memory into @vma, which must cover it exactly and be
 * shared. @ops->open is called here for the new mapping.
 */
int bx_vmalloc_mmap(void *vaddr, size_t size, struct vm_area_struct *vma,
		    const struct vm_operations_struct *ops, void *priv)
{
	int ret;

	if (vma->vm_end - vma->vm_start != size)
		return -EINVAL;
	/* Private (copy-on-write) mappings would detach from the region. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vm_flags_clear(vma, VM_MAYEXEC);
	ret = remap_vmalloc_range(vma, vaddr, 0);
	if (ret)
		return ret;
	vma->vm_ops = ops;
	vma->vm_private_data = priv;
	ops->open(vma);
	return 0;
}

int bx_region_mmap(struct bx_region *r, struct vm_area_struct *vma)
{
	return bx_vmalloc_mmap(r->vaddr, r->size, vma, &region_vm_ops, r);
}

/*
 * A scatterlist over the pages backing [off, off + len) of the region; the
 * caller checked the range. One entry per page: vmalloc pages are not
 * contiguous. Free with sg_free_table(). Injectable: data.sh fails it
 * to reach the NACK of a reply that cannot be set up.
 */
int bx_region_sg(struct bx_region *r, u64 off, u32 len, struct sg_table *sgt)
{
	u64 first = off >> PAGE_SHIFT, last = (off + len - 1) >> PAGE_SHIFT;
	struct scatterlist *sg;
	u32 done = 0;
	int ret;

	if (!len)
		return -EINVAL;
	ret = sg_alloc_table(sgt, last - first + 1, GFP_KERNEL);
	if (ret)
		return ret;
	for (sg = sgt->sgl; done < len; sg = sg_next(sg)) {
		u32 pgoff = offset_in_page(off + done);
		u32 n = min_t(u32, PAGE_SIZE - pgoff, len - done);

		sg_set_page(sg, vmalloc_to_page(r->vaddr + off + done), n,
			    pgoff);
		done += n;
	}
	return 0;
}
ALLOW_ERROR_INJECTION(bx_region_sg, ERRNO);
