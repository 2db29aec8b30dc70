// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * bx region allocator.
 *
 * The region is shared with DMA, the kernel and remote peers, so nothing
 * is ever stored in it: the allocator deals in offsets, and all metadata
 * is in malloc'ed memory, reached from an offset through a page map.
 *
 * Two layers:
 *
 * Page heap. The whole region is a set of page runs ("spans"), each free,
 * a large block, or a slab. Free spans are kept in 128 segregated bins
 * (TLSF-style: 4 linear sub-bins per power of two of the page count). An
 * allocation of n pages takes the first span of the lowest non-empty bin
 * whose every span is >= n pages (O(1) through a bitmap), falling back to
 * a first-fit scan of n's own bin, so it fails only if no free span has n
 * pages; it splits off the rest. A freed span merges at once with free
 * neighbours (boundary tags in the page map), so two free spans are never
 * adjacent. Trade-off: exact page-granular sizes (no buddy-style 2x
 * internal waste); picking a span up to ~25% larger than the best fit can
 * fragment more than true best fit, but there is no O(n) search.
 *
 * Size classes. Sizes up to max_small are rounded to a power of two
 * (>= min_block) and served from slabs of max(64 KiB, 8 blocks) taken from
 * the page heap (smaller, down to one page or one block, when the region
 * is too full). A slab's free blocks are a bitmap in its descriptor. One
 * fully free slab per class is kept to avoid thrashing; more are returned
 * at once, and kept ones are reclaimed whenever the page heap runs out.
 * Waste: up to ~50% inside a block for unlucky sizes, none between slabs.
 *
 * Metadata: 24 bytes per region page (6 MiB for 1 GiB), ~200 bytes per
 * slab ever needed, all malloc'ed.
 *
 * Alignment: a span starts on a page, a slab block on a multiple of its
 * size within its slab, so every block is aligned to min(size, 4096).
 *
 * Locking: one lock per size class, one for the page heap. No path holds
 * two at once, except stats/check, which take every class lock in order,
 * then the page lock. No thread cache: the fast path takes one lock per
 * call (an atomic each way when uncontended). Freeing a small block finds
 * its slab through a lockless read of the page's owner; slab descriptors are
 * recycled within their class and never freed before destroy, so a stale
 * or forged lookup only ever reaches a valid descriptor, which is then
 * re-validated under its class lock. Every offset is checked against the
 * metadata (bitmap bit, span head tag) before anything is changed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1ull << PAGE_SHIFT)

#define SLAB_PREF_BYTES	(64ull << 10)	/* preferred slab size floor */
#define SLAB_PREF_BLOCKS 8		/* preferred blocks per slab floor */
#define SLAB_MAX_BLOCKS	1024		/* 64 KiB / 64 B */
#define SLAB_WORDS	(SLAB_MAX_BLOCKS / 64)
#define EMPTY_KEEP	1		/* fully free slabs kept per class */

#define SL_BITS		2		/* log2 of sub-bins per power of two */
#define SL_COUNT	(1u << SL_BITS)
#define NBINS		128		/* bin_of(UINT32_MAX) == 123 */
#define NIL		UINT32_MAX	/* no page */

/*
 * The allocator's locks: one word each, free (0), held (1) or held with
 * waiters (2); a taker that finds it held spins briefly, then sleeps in
 * the kernel (FUTEX_WAIT) until the holder's release wakes one waiter
 * (U. Drepper, "Futexes Are Tricky", mutex 3). An uncontended take and
 * drop are one atomic each: glibc's pthread_mutex spent about 100
 * instructions on the pair (type dispatch, elision, owner), a third of a
 * small get + put. Private to this process: the metadata is malloc'ed.
 */
struct lock {
	_Atomic uint32_t	word;
};

/* Out of the fast path: kept out of line, so that it saves no registers. */
#define COLD	__attribute__((noinline, cold))

#define LOCK_SPINS	100

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

static void futex(_Atomic uint32_t *w, int op, uint32_t val)
{
	syscall(SYS_futex, w, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

static COLD void lock_take_slow(struct lock *l)
{
	uint32_t c;

	/* Try only when it looks free: a failed exchange still takes the line. */
	for (int i = 0; i < LOCK_SPINS; i++) {
		c = 0;
		if (!atomic_load_explicit(&l->word, memory_order_relaxed) &&
		    atomic_compare_exchange_weak_explicit(&l->word, &c, 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			return;
		cpu_relax();
	}
	/* Mark it contended; sleep while someone else holds it. */
	while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire))
		futex(&l->word, FUTEX_WAIT, 2);
}

static inline void lock_take(struct lock *l)
{
	uint32_t c = 0;

	if (!atomic_compare_exchange_strong_explicit(&l->word, &c, 1,
						     memory_order_acquire,
						     memory_order_relaxed))
		lock_take_slow(l);
}

static inline void lock_drop(struct lock *l)
{
	if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
		futex(&l->word, FUTEX_WAKE, 1);
}

/* Page map tags; only span heads, and the tails of free spans, have any. */
enum {
	PG_FREE_HEAD	= 1,
	PG_FREE_TAIL	= 2,		/* both for a one-page free span */
	PG_LARGE	= 4,
	PG_SLAB		= 8,
};

/* Page map entry, under the page lock. */
struct span {
	uint32_t	kind;
	uint32_t	npages;		/* span length, at tagged pages */
	uint32_t	next;		/* bin list links of a free head */
	uint32_t	prev;
};

struct list {
	struct list	*next, *prev;
};

struct slab {
	struct list	link;		/* on the class's avail list */
	struct slab	*spare;		/* next on the class's pool */
	struct slab	*all;		/* next of all the class's slabs */
	uint64_t	off;		/* region offset */
	uint64_t	bytes;
	uint32_t	page;		/* off / PAGE_SIZE */
	uint32_t	npages;
	uint32_t	cls;		/* set once, before first use */
	uint32_t	nblocks;
	uint32_t	nfree;
	uint32_t	hint;		/* no free block in words below */
	bool		live;		/* owns its span */
	bool		listed;		/* on avail, iff nfree > 0 */
	uint64_t	freemap[SLAB_WORDS]; /* bit set: block free */
};

struct klass {
	/*
	 * Protects everything in this struct and every field but ->cls of
	 * every slab of this class (live or pooled), including the owner
	 * entries of a live slab's pages, which are written only under it.
	 */
	_Alignas(64) struct lock lock;
	struct list	avail;		/* partial slabs, then empty ones */
	struct slab	*pool;		/* descriptors with no slab */
	struct slab	*all;		/* every descriptor, for destroy */
	uint64_t	blocks;		/* live blocks */
	uint64_t	slab_bytes;	/* bytes in live slabs */
	uint64_t	pref_bytes;	/* preferred slab size */
	uint32_t	nempty;		/* fully free slabs on avail */
	uint32_t	shift;		/* log2 of the block size */
};

struct bx_alloc {
	/* Set at create, then read-only. */
	uint64_t	region_size;
	uint32_t	npages;
	unsigned int	min_shift;
	uint64_t	max_small;
	unsigned int	nclasses;
	struct klass	*cls;
	/*
	 * Per page: the live slab the page belongs to, else NULL. Written
	 * under that slab's class lock while the slab owns the page, read
	 * without any lock (acquire) to find the slab of an offset.
	 */
	_Atomic(struct slab *) *owner;

	/*
	 * Protects the page map (pg), the bins and the counters below, that
	 * is the page heap. Only stats/check take it with class locks held.
	 */
	_Alignas(64) struct lock page_lock;
	struct span	*pg;
	uint32_t	bin[NBINS];	/* first free span head, or NIL */
	uint64_t	binmap[NBINS / 64];
	uint64_t	free_pages;
	uint64_t	large_pages;
	uint64_t	large_blocks;
};

#define container_of(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))

static void list_init(struct list *h)
{
	h->next = h;
	h->prev = h;
}

static bool list_empty(const struct list *h)
{
	return h->next == h;
}

static void list_insert(struct list *n, struct list *prev, struct list *next)
{
	n->next = next;
	n->prev = prev;
	prev->next = n;
	next->prev = n;
}

static void list_del(struct list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n;
	n->prev = n;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static unsigned int ilog2(uint64_t v)
{
	return 63 - __builtin_clzll(v);
}

/* ---- page heap (all under page_lock) ------------------------------------ */

static unsigned int bin_of(uint32_t n)
{
	unsigned int msb = 31 - __builtin_clz(n);

	if (msb < SL_BITS)
		return n;
	return (msb - SL_BITS + 1) << SL_BITS |
	       ((n >> (msb - SL_BITS)) & (SL_COUNT - 1));
}

/* The smallest page count in bin b. */
static uint32_t bin_min(unsigned int b)
{
	unsigned int msb;

	if (b < SL_COUNT)
		return b;
	msb = (b >> SL_BITS) + SL_BITS - 1;
	return 1u << msb | (b & (SL_COUNT - 1)) << (msb - SL_BITS);
}

static void bin_insert(struct bx_alloc *a, uint32_t p)
{
	unsigned int b = bin_of(a->pg[p].npages);
	uint32_t h = a->bin[b];

	a->pg[p].prev = NIL;
	a->pg[p].next = h;
	if (h != NIL)
		a->pg[h].prev = p;
	a->bin[b] = p;
	a->binmap[b / 64] |= 1ull << (b % 64);
}

static void bin_remove(struct bx_alloc *a, uint32_t p)
{
	struct span *s = &a->pg[p];
	unsigned int b = bin_of(s->npages);

	if (s->prev != NIL)
		a->pg[s->prev].next = s->next;
	else
		a->bin[b] = s->next;
	if (s->next != NIL)
		a->pg[s->next].prev = s->prev;
	if (a->bin[b] == NIL)
		a->binmap[b / 64] &= ~(1ull << (b % 64));
}

/* The first non-empty bin >= from, or NBINS. */
static unsigned int bin_next(const struct bx_alloc *a, unsigned int from)
{
	for (unsigned int w = from / 64; w < NBINS / 64; w++) {
		uint64_t m = a->binmap[w];

		if (w == from / 64)
			m &= ~0ull << (from % 64);
		if (m)
			return w * 64 + __builtin_ctzll(m);
	}
	return NBINS;
}

/* Tag [p, p + n) as one free span and bin it. */
static void span_make_free(struct bx_alloc *a, uint32_t p, uint32_t n)
{
	if (n == 1) {
		a->pg[p].kind = PG_FREE_HEAD | PG_FREE_TAIL;
	} else {
		a->pg[p].kind = PG_FREE_HEAD;
		a->pg[p + n - 1].kind = PG_FREE_TAIL;
		a->pg[p + n - 1].npages = n;
	}
	a->pg[p].npages = n;
	bin_insert(a, p);
}

/* Unbin the free span at p and drop its tags. */
static void span_unfree(struct bx_alloc *a, uint32_t p)
{
	uint32_t n = a->pg[p].npages;

	bin_remove(a, p);
	a->pg[p].kind = 0;
	a->pg[p + n - 1].kind = 0;
}

/* Allocate n pages as a span of kind; NIL if no free span is that big. */
static uint32_t page_alloc(struct bx_alloc *a, uint32_t n, uint32_t kind)
{
	unsigned int b = bin_of(n);
	unsigned int f = bin_next(a, bin_min(b) == n ? b : b + 1);
	uint32_t p, m;

	if (f < NBINS) {
		p = a->bin[f];
	} else {
		for (p = a->bin[b]; p != NIL; p = a->pg[p].next)
			if (a->pg[p].npages >= n)
				break;
		if (p == NIL)
			return NIL;
	}
	m = a->pg[p].npages;
	span_unfree(a, p);
	if (m > n)
		span_make_free(a, p + n, m - n);
	a->pg[p].kind = kind;
	a->pg[p].npages = n;
	a->free_pages -= n;
	return p;
}

/* Free the allocated span at p, merging it with free neighbours. */
static void page_free(struct bx_alloc *a, uint32_t p)
{
	uint32_t n = a->pg[p].npages, start = p, len = n;

	a->pg[p].kind = 0;
	if (p > 0 && (a->pg[p - 1].kind & PG_FREE_TAIL)) {
		uint32_t l = p - a->pg[p - 1].npages;

		len += a->pg[l].npages;
		start = l;
		span_unfree(a, l);
	}
	if (p + n < a->npages && (a->pg[p + n].kind & PG_FREE_HEAD)) {
		len += a->pg[p + n].npages;
		span_unfree(a, p + n);
	}
	span_make_free(a, start, len);
	a->free_pages += n;
}

static void page_free_locked(struct bx_alloc *a, uint32_t p)
{
	lock_take(&a->page_lock);
	page_free(a, p);
	lock_drop(&a->page_lock);
}

/* ---- slabs --------------------------------------------------------------- */

/* Take a free block of s; class lock held, s->nfree > 0. */
static uint64_t slab_take(struct klass *c, struct slab *s)
{
	uint32_t w = s->hint, bit;

	while (!s->freemap[w])
		w++;
	bit = __builtin_ctzll(s->freemap[w]);
	s->freemap[w] &= s->freemap[w] - 1;
	s->hint = w;
	if (s->nfree-- == s->nblocks)
		c->nempty--;
	if (!s->nfree) {
		list_del(&s->link);
		s->listed = false;
	}
	c->blocks++;
	return s->off + ((uint64_t)(w * 64 + bit) << c->shift);
}

/*
 * Detach the fully free slab s from its class and its pages; class lock
 * held. The caller then frees the span at the returned page.
 */
static COLD uint32_t slab_retire(struct bx_alloc *a, struct klass *c,
				 struct slab *s)
{
	list_del(&s->link);
	s->listed = false;
	s->live = false;
	c->nempty--;
	c->slab_bytes -= s->bytes;
	for (uint32_t i = 0; i < s->npages; i++)
		atomic_store_explicit(&a->owner[s->page + i], NULL,
				      memory_order_release);
	s->spare = c->pool;
	c->pool = s;
	return s->page;
}

/* Return every kept empty slab to the page heap; the number returned. */
static unsigned int reclaim(struct bx_alloc *a)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < a->nclasses; i++) {
		struct klass *c = &a->cls[i];
		uint32_t pages[EMPTY_KEEP];
		unsigned int k = 0;

		lock_take(&c->lock);
		while (c->nempty && k < EMPTY_KEEP) {
			struct slab *s = container_of(c->avail.prev,
						      struct slab, link);

			pages[k++] = slab_retire(a, c, s);
		}
		lock_drop(&c->lock);
		for (unsigned int j = 0; j < k; j++)
			page_free_locked(a, pages[j]);
		n += k;
	}
	return n;
}

/* Serve one block of class ci from a new slab. No lock held. */
static COLD int slab_grow(struct bx_alloc *a, unsigned int ci, uint64_t *off)
{
	struct klass *c = &a->cls[ci];
	uint64_t min = 1ull << c->shift, bytes;
	bool reclaimed = false;
	uint32_t p = NIL;
	struct slab *s;

	if (min < PAGE_SIZE)
		min = PAGE_SIZE;
	for (;;) {
		lock_take(&a->page_lock);
		for (bytes = c->pref_bytes; bytes >= min; bytes >>= 1) {
			if (bytes > a->region_size)
				continue;
			p = page_alloc(a, bytes >> PAGE_SHIFT, PG_SLAB);
			if (p != NIL)
				break;
		}
		lock_drop(&a->page_lock);
		if (p != NIL || reclaimed || !reclaim(a))
			break;
		reclaimed = true;
	}

	lock_take(&c->lock);
	if (p == NIL) {
		/* Blocks may have been freed since we looked. */
		if (list_empty(&c->avail)) {
			lock_drop(&c->lock);
			return -ENOMEM;
		}
		s = container_of(c->avail.next, struct slab, link);
		*off = slab_take(c, s);
		lock_drop(&c->lock);
		return 0;
	}

	s = c->pool;
	if (s) {
		c->pool = s->spare;
	} else {
		s = calloc(1, sizeof(*s));
		if (!s) {
			lock_drop(&c->lock);
			page_free_locked(a, p);
			return -ENOMEM;
		}
		s->cls = ci;
		s->all = c->all;
		c->all = s;
	}
	s->off = (uint64_t)p << PAGE_SHIFT;
	s->bytes = bytes;
	s->page = p;
	s->npages = bytes >> PAGE_SHIFT;
	s->nblocks = bytes >> c->shift;
	s->nfree = s->nblocks;
	s->hint = 0;
	s->live = true;
	memset(s->freemap, 0, sizeof(s->freemap));
	for (uint32_t i = 0; i < s->nblocks / 64; i++)
		s->freemap[i] = ~0ull;
	if (s->nblocks % 64)
		s->freemap[s->nblocks / 64] = (1ull << s->nblocks % 64) - 1;
	for (uint32_t i = 0; i < s->npages; i++)
		atomic_store_explicit(&a->owner[p + i], s,
				      memory_order_release);
	list_insert(&s->link, &c->avail, c->avail.next);
	s->listed = true;
	c->nempty++;
	c->slab_bytes += bytes;
	*off = slab_take(c, s);
	lock_drop(&c->lock);
	return 0;
}

static int small_get(struct bx_alloc *a, unsigned int ci, uint64_t *off)
{
	struct klass *c = &a->cls[ci];

	lock_take(&c->lock);
	if (!list_empty(&c->avail)) {
		*off = slab_take(c, container_of(c->avail.next, struct slab,
						 link));
		lock_drop(&c->lock);
		return 0;
	}
	lock_drop(&c->lock);
	return slab_grow(a, ci, off);
}

/*
 * Validate off as a live block of s under s's class lock; the block index
 * or -EINVAL. s may be stale or unrelated: it is only a valid descriptor.
 */
static int64_t slab_block(const struct klass *c, const struct slab *s,
			  uint64_t off)
{
	uint64_t rel, idx;

	if (!s->live || off < s->off || off - s->off >= s->bytes)
		return -EINVAL;
	rel = off - s->off;
	if (rel & ((1ull << c->shift) - 1))
		return -EINVAL;
	idx = rel >> c->shift;
	if (s->freemap[idx / 64] & 1ull << idx % 64)
		return -EINVAL;
	return idx;
}

static int small_put(struct bx_alloc *a, struct slab *s, uint64_t off)
{
	struct klass *c = &a->cls[s->cls];
	uint32_t page = NIL;
	int64_t idx;

	lock_take(&c->lock);
	idx = slab_block(c, s, off);
	if (idx < 0) {
		lock_drop(&c->lock);
		return -EINVAL;
	}
	s->freemap[idx / 64] |= 1ull << idx % 64;
	if (idx / 64 < s->hint)
		s->hint = idx / 64;
	c->blocks--;
	if (!s->nfree++) {
		/* Was full: partial slabs go first. */
		list_insert(&s->link, &c->avail, c->avail.next);
		s->listed = true;
	}
	if (s->nfree == s->nblocks) {
		/* Now empty: empty slabs go last, or back to the heap. */
		c->nempty++;
		if (c->nempty > EMPTY_KEEP) {
			page = slab_retire(a, c, s);
		} else if (c->avail.prev != &s->link) {
			list_del(&s->link);
			list_insert(&s->link, c->avail.prev, &c->avail);
		}
	}
	lock_drop(&c->lock);
	if (page != NIL)
		page_free_locked(a, page);
	return 0;
}

/* ---- large blocks -------------------------------------------------------- */

static int large_get(struct bx_alloc *a, uint64_t npages, uint64_t *off)
{
	bool reclaimed = false;
	uint32_t p;

	for (;;) {
		lock_take(&a->page_lock);
		p = page_alloc(a, npages, PG_LARGE);
		if (p != NIL) {
			a->large_pages += npages;
			a->large_blocks++;
		}
		lock_drop(&a->page_lock);
		if (p != NIL) {
			*off = (uint64_t)p << PAGE_SHIFT;
			return 0;
		}
		if (reclaimed || !reclaim(a))
			return -ENOMEM;
		reclaimed = true;
	}
}

/* ---- API ----------------------------------------------------------------- */

int bx_alloc_create(struct bx_alloc **out, uint64_t region_size,
		    uint32_t min_block, uint32_t max_small)
{
	struct bx_alloc *a;

	if (!out || !region_size || region_size % PAGE_SIZE ||
	    region_size / PAGE_SIZE >= NIL || !is_pow2(min_block) ||
	    min_block < 64 || !is_pow2(max_small) || max_small < min_block)
		return -EINVAL;
	a = aligned_alloc(64, sizeof(*a));
	if (!a)
		return -ENOMEM;
	memset(a, 0, sizeof(*a));
	a->region_size = region_size;
	a->npages = region_size / PAGE_SIZE;
	a->min_shift = ilog2(min_block);
	a->max_small = max_small;
	a->nclasses = ilog2(max_small) - a->min_shift + 1;
	a->cls = aligned_alloc(64, a->nclasses * sizeof(*a->cls));
	a->owner = calloc(a->npages, sizeof(*a->owner));
	a->pg = calloc(a->npages, sizeof(*a->pg));
	if (!a->cls || !a->owner || !a->pg)
		goto nomem;
	for (unsigned int i = 0; i < a->nclasses; i++) {
		struct klass *c = &a->cls[i];

		memset(c, 0, sizeof(*c));
		list_init(&c->avail);
		c->shift = a->min_shift + i;
		c->pref_bytes = (uint64_t)SLAB_PREF_BLOCKS << c->shift;
		if (c->pref_bytes < SLAB_PREF_BYTES)
			c->pref_bytes = SLAB_PREF_BYTES;
	}
	for (unsigned int b = 0; b < NBINS; b++)
		a->bin[b] = NIL;
	span_make_free(a, 0, a->npages);
	a->free_pages = a->npages;
	*out = a;
	return 0;
nomem:
	free(a->pg);
	free(a->owner);
	free(a->cls);
	free(a);
	return -ENOMEM;
}

void bx_alloc_destroy(struct bx_alloc *a)
{
	if (!a)
		return;
	for (unsigned int i = 0; i < a->nclasses; i++) {
		struct klass *c = &a->cls[i];

		while (c->all) {
			struct slab *s = c->all;

			c->all = s->all;
			free(s);
		}
	}
	free(a->pg);
	free(a->owner);
	free(a->cls);
	free(a);
}

int bx_alloc_get(struct bx_alloc *a, uint64_t size, uint64_t align,
		 uint64_t *off)
{
	uint64_t need;
	unsigned int shift;

	if (!a || !off || !size || size > a->region_size ||
	    !is_pow2(align) || align > PAGE_SIZE)
		return -EINVAL;
	need = size > align ? size : align;
	if (need > a->max_small)
		return large_get(a, (size + PAGE_SIZE - 1) >> PAGE_SHIFT, off);
	shift = need > 1 ? ilog2(need - 1) + 1 : 0;
	if (shift < a->min_shift)
		shift = a->min_shift;
	return small_get(a, shift - a->min_shift, off);
}

/* The live slab that owns off's page, if any; off < region_size. */
static struct slab *owner_of(struct bx_alloc *a, uint64_t off)
{
	return atomic_load_explicit(&a->owner[off >> PAGE_SHIFT],
				    memory_order_acquire);
}

int bx_alloc_put(struct bx_alloc *a, uint64_t off)
{
	struct slab *s;
	uint32_t p;

	if (!a || off >= a->region_size)
		return -EINVAL;
	s = owner_of(a, off);
	if (s)
		return small_put(a, s, off);
	if (off % PAGE_SIZE)
		return -EINVAL;
	p = off >> PAGE_SHIFT;
	lock_take(&a->page_lock);
	if (a->pg[p].kind != PG_LARGE) {
		lock_drop(&a->page_lock);
		return -EINVAL;
	}
	a->large_pages -= a->pg[p].npages;
	a->large_blocks--;
	page_free(a, p);
	lock_drop(&a->page_lock);
	return 0;
}

int64_t bx_alloc_size(struct bx_alloc *a, uint64_t off)
{
	struct slab *s;
	int64_t ret;

	if (!a || off >= a->region_size)
		return -EINVAL;
	s = owner_of(a, off);
	if (s) {
		struct klass *c = &a->cls[s->cls];

		lock_take(&c->lock);
		ret = slab_block(c, s, off);
		if (ret >= 0)
			ret = 1ll << c->shift;
		lock_drop(&c->lock);
		return ret;
	}
	if (off % PAGE_SIZE)
		return -EINVAL;
	lock_take(&a->page_lock);
	ret = -EINVAL;
	if (a->pg[off >> PAGE_SHIFT].kind == PG_LARGE)
		ret = (int64_t)a->pg[off >> PAGE_SHIFT].npages << PAGE_SHIFT;
	lock_drop(&a->page_lock);
	return ret;
}

static void lock_all(struct bx_alloc *a)
{
	for (unsigned int i = 0; i < a->nclasses; i++)
		lock_take(&a->cls[i].lock);
	lock_take(&a->page_lock);
}

static void unlock_all(struct bx_alloc *a)
{
	lock_drop(&a->page_lock);
	for (unsigned int i = a->nclasses; i--; )
		lock_drop(&a->cls[i].lock);
}

void bx_alloc_stats(struct bx_alloc *a, struct bx_alloc_stats *st)
{
	uint32_t largest = 0;
	unsigned int b;

	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!a)
		return;
	lock_all(a);
	for (unsigned int i = 0; i < a->nclasses; i++) {
		const struct klass *c = &a->cls[i];

		st->blocks_in_use += c->blocks;
		st->bytes_in_use += c->blocks << c->shift;
	}
	st->blocks_in_use += a->large_blocks;
	st->bytes_in_use += a->large_pages << PAGE_SHIFT;
	for (b = NBINS; b--; )
		if (a->bin[b] != NIL)
			break;
	if (b < NBINS)
		for (uint32_t p = a->bin[b]; p != NIL; p = a->pg[p].next)
			if (a->pg[p].npages > largest)
				largest = a->pg[p].npages;
	unlock_all(a);
	st->bytes_free = a->region_size - st->bytes_in_use;
	st->largest_free = (uint64_t)largest << PAGE_SHIFT;
}

/* ---- self-check ---------------------------------------------------------- */

#define VERIFY(cond) do { if (!(cond)) return -EUCLEAN; } while (0)

static int check_slab(struct bx_alloc *a, uint32_t p, uint32_t n,
		      uint64_t *blocks, uint64_t *bytes, uint32_t *nempty)
{
	struct slab *s = atomic_load_explicit(&a->owner[p],
					      memory_order_relaxed);
	uint32_t nfree = 0, w;

	VERIFY(s && s->live && s->page == p && s->npages == n);
	VERIFY(s->cls < a->nclasses);
	VERIFY(s->off == (uint64_t)p << PAGE_SHIFT);
	VERIFY(s->bytes == (uint64_t)n << PAGE_SHIFT);
	VERIFY(s->nblocks == s->bytes >> a->cls[s->cls].shift);
	VERIFY(s->nblocks >= 1 && s->nblocks <= SLAB_MAX_BLOCKS);
	for (uint32_t i = 0; i < n; i++)
		VERIFY(atomic_load_explicit(&a->owner[p + i],
					    memory_order_relaxed) == s);
	for (w = 0; w < SLAB_WORDS; w++) {
		uint64_t m = s->freemap[w];

		if (w * 64 + 64 > s->nblocks)
			VERIFY(w * 64 >= s->nblocks ? !m :
			       !(m >> (s->nblocks % 64)));
		VERIFY(!m || w >= s->hint);
		nfree += __builtin_popcountll(m);
	}
	VERIFY(nfree == s->nfree && s->listed == (nfree > 0));
	blocks[s->cls] += s->nblocks - s->nfree;
	bytes[s->cls] += s->bytes;
	nempty[s->cls] += s->nfree == s->nblocks;
	return 0;
}

/* Whether any page of [p, p + n) has an owner. */
static bool owned(struct bx_alloc *a, uint32_t p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (atomic_load_explicit(&a->owner[p + i],
					 memory_order_relaxed))
			return true;
	return false;
}

static int check_locked(struct bx_alloc *a, uint64_t *blocks,
			uint64_t *bytes, uint32_t *nempty)
{
	uint64_t free_pages = 0, large_pages = 0, large_blocks = 0;
	uint64_t nfree_spans = 0, binned = 0;
	bool prev_free = false;
	uint32_t p, n;

	for (p = 0; p < a->npages; p += n) {
		uint32_t kind = a->pg[p].kind;

		n = a->pg[p].npages;
		VERIFY(n >= 1 && n <= a->npages - p);
		for (uint32_t i = 1; i + 1 < n; i++)
			VERIFY(!a->pg[p + i].kind);
		if (kind & PG_FREE_HEAD) {
			VERIFY(!prev_free);
			if (n == 1)
				VERIFY(kind == (PG_FREE_HEAD | PG_FREE_TAIL));
			else
				VERIFY(kind == PG_FREE_HEAD &&
				       a->pg[p + n - 1].kind == PG_FREE_TAIL &&
				       a->pg[p + n - 1].npages == n);
			VERIFY(!owned(a, p, n));
			free_pages += n;
			nfree_spans++;
			prev_free = true;
			continue;
		}
		prev_free = false;
		VERIFY(n == 1 || !a->pg[p + n - 1].kind);
		if (kind == PG_LARGE) {
			VERIFY(!owned(a, p, n));
			large_pages += n;
			large_blocks++;
		} else {
			VERIFY(kind == PG_SLAB);
			if (check_slab(a, p, n, blocks, bytes, nempty))
				return -EUCLEAN;
		}
	}
	VERIFY(free_pages == a->free_pages);
	VERIFY(large_pages == a->large_pages);
	VERIFY(large_blocks == a->large_blocks);

	for (unsigned int b = 0; b < NBINS; b++) {
		uint32_t prev = NIL;

		VERIFY(!(a->binmap[b / 64] & 1ull << b % 64) ==
		       (a->bin[b] == NIL));
		for (p = a->bin[b]; p != NIL; p = a->pg[p].next) {
			VERIFY(p < a->npages && binned++ < nfree_spans);
			VERIFY(a->pg[p].kind & PG_FREE_HEAD);
			VERIFY(a->pg[p].prev == prev);
			VERIFY(bin_of(a->pg[p].npages) == b);
			prev = p;
		}
	}
	VERIFY(binned == nfree_spans);

	for (unsigned int i = 0; i < a->nclasses; i++) {
		const struct klass *c = &a->cls[i];
		bool seen_empty = false;
		uint32_t listed = 0;

		VERIFY(c->blocks == blocks[i] && c->slab_bytes == bytes[i]);
		VERIFY(c->nempty == nempty[i] && c->nempty <= EMPTY_KEEP);
		for (struct list *l = c->avail.next; l != &c->avail;
		     l = l->next) {
			const struct slab *s = container_of(l, struct slab,
							    link);
			bool empty = s->nfree == s->nblocks;

			VERIFY(s->live && s->listed && s->cls == i);
			VERIFY(empty || !seen_empty);
			seen_empty |= empty;
			listed++;
		}
		for (const struct slab *s = c->all; s; s = s->all) {
			VERIFY(s->cls == i);
			listed -= s->live && s->listed;
		}
		VERIFY(!listed);
		for (const struct slab *s = c->pool; s; s = s->spare)
			VERIFY(!s->live);
	}
	return 0;
}

int bx_alloc_check(struct bx_alloc *a)
{
	uint64_t *blocks, *bytes;
	uint32_t *nempty;
	int ret = -ENOMEM;

	if (!a)
		return -EINVAL;
	blocks = calloc(a->nclasses, sizeof(*blocks));
	bytes = calloc(a->nclasses, sizeof(*bytes));
	nempty = calloc(a->nclasses, sizeof(*nempty));
	if (blocks && bytes && nempty) {
		lock_all(a);
		ret = check_locked(a, blocks, bytes, nempty);
		unlock_all(a);
	}
	free(blocks);
	free(bytes);
	free(nempty);
	return ret;
}
