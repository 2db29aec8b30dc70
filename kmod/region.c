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
 * The memory is pages the module allocates, zeroes and maps contiguously
 * for itself (vmap): never swapped, and owned by the module, not by the
 * process, so nothing needs pinning. They are charged to the memory
 * cgroup of the process that sets the region up (__GFP_ACCOUNT), and
 * allocated with __GFP_RETRY_MAYFAIL: when memory runs short the setup
 * fails with ENOMEM, it never wakes the OOM killer on others. The region
 * is also charged against the module-wide cap region_cap_mb (a quarter of
 * the machine's memory unless set) and, unless the caller has
 * CAP_IPC_LOCK, against its user's RLIMIT_MEMLOCK (the same atomic
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
#include <linux/sched.h>

#include "params.h"
#include "region.h"
#include "user.h"

atomic64_t bx_region_bytes = ATOMIC64_INIT(0);

/* The cap on region memory in bytes (region_cap_mb; 0: RAM / 4). */
static s64 region_cap(void)
{
	unsigned long mb = READ_ONCE(bx_region_cap_mb);

	if (!mb)
		return (s64)(totalram_pages() / 4) << PAGE_SHIFT;
	return (s64)mb << 20;
}

static void region_free_pages(struct bx_region *r, unsigned long n)
{
	while (n--)
		__free_page(r->pages[n]);
	kvfree(r->pages);
	r->pages = NULL;
}

/*
 * Serializes region allocations, so that each sees what the ones before
 * it left (region_alloc_pages()); they are rare (once per file).
 */
static DEFINE_MUTEX(bx_region_alloc_lock);

static int region_alloc_locked(struct bx_region *r, gfp_t gfp,
			       unsigned long n)
{
	unsigned long i;

	if ((long)(n + totalram_pages() / 8) > si_mem_available())
		return -ENOMEM;
	r->pages = kvcalloc(n, sizeof(*r->pages), GFP_KERNEL_ACCOUNT);
	if (!r->pages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		r->pages[i] = alloc_page(gfp);
		if (!r->pages[i])
			goto err;
		if (fatal_signal_pending(current)) {
			i++;
			goto err;
		}
		cond_resched();
	}
	/* VM_USERMAP: remap_vmalloc_range() maps it into the process. */
	r->vaddr = vmap(r->pages, n, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (!r->vaddr)
		goto err;
	return 0;

err:
	region_free_pages(r, i);
	return -ENOMEM;
}

/*
 * The region's pages, mapped at r->vaddr: charged to the caller's memory
 * cgroup, and failing rather than calling the OOM killer. A region may
 * not leave less than an eighth of the machine's memory available to
 * everything else: __GFP_RETRY_MAYFAIL alone stops at the watermarks,
 * where the next ordinary allocation of anyone would wake the OOM killer.
 */
static int region_alloc_pages(struct bx_region *r)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_ZERO |
			  __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	unsigned long n = r->size >> PAGE_SHIFT;
	int ret;

	mutex_lock(&bx_region_alloc_lock);
	ret = region_alloc_locked(r, gfp, n);
	mutex_unlock(&bx_region_alloc_lock);
	return ret;
}

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

/*
 * A region of @size bytes for a file whose opener had CAP_IPC_LOCK
 * (@ipc_lock: not charged to RLIMIT_MEMLOCK) or not.
 */
int bx_region_create(u64 size, bool ipc_lock, struct bx_region **out)
{
	unsigned long pages = size >> PAGE_SHIFT;
	struct bx_region *r;
	int ret;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	kref_init(&r->ref);
	r->size = size;

	/* The module-wide cap first: it bounds what any user can pin. */
	if (atomic64_add_return(size, &bx_region_bytes) > region_cap()) {
		ret = -ENOMEM;
		goto err_uncap;
	}
	if (!ipc_lock) {
		r->user = get_uid(current_user());
		ret = charge_memlock(r->user, pages);
		if (ret)
			goto err_put_user;
	}
	ret = region_alloc_pages(r);
	if (ret)
		goto err_uncharge;
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

	vunmap(r->vaddr);
	region_free_pages(r, r->size >> PAGE_SHIFT);
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
int bx_region_vmalloc_mmap(void *vaddr, size_t size, struct vm_area_struct *vma,
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
	return bx_region_vmalloc_mmap(r->vaddr, r->size, vma, &region_vm_ops, r);
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
	/* Charged where the caller says (bx_memcg_enter()). */
	ret = sg_alloc_table(sgt, last - first + 1, BX_GFP_CHARGED);
	if (ret)
		return ret;
	for (sg = sgt->sgl; done < len; sg = sg_next(sg)) {
		u32 pgoff = offset_in_page(off + done);
		u32 n = min_t(u32, PAGE_SIZE - pgoff, len - done);

		sg_set_page(sg, r->pages[(off + done) >> PAGE_SHIFT], n,
			    pgoff);
		done += n;
	}
	return 0;
}
ALLOW_ERROR_INJECTION(bx_region_sg, ERRNO);
