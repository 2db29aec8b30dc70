// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * bx region allocator.
 *
 * The region is shared with DMA, the kernel and remote peers, so nothing
 * is ever stored in it: the allocator deals in offsets, and all metadata
 * is in malloc'ed memory, reached from an offset through a page map.
 *
 * Three layers:
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
 * Thread caches. Each thread has one cache, for the allocator it used
 * last: per size class a magazine of up to 16 blocks (at most 1 MiB of
 * them, but always room for one), and up to 4 freed large blocks of at
 * most 8 MiB in all. A put goes into the cache; a get of that class, or
 * of exactly that page count, takes from it, newest first, with no class
 * or page lock. A cached block stays allocated underneath: a small one
 * keeps its freemap bit clear (allocated) but its live byte is 0 (not
 * the program's); a large one stays a large span whose head's owner
 * entry (below) is LARGE_CACHED instead of LARGE_LIVE. A full magazine
 * returns its older half in one take of the class lock, and an empty one
 * is filled half full from the slabs in one take, so that a thread that
 * gets or puts many blocks in a row takes the class lock once every 8.
 * A full large cache lets a freed block go to the page heap; a get that
 * finds none of its size in a full one makes it give up its oldest, so
 * that it follows the sizes in use. A thread that uses another allocator
 * returns its whole cache and starts a new one; so does a thread at exit
 * (a pthread key's destructor). Blocks are never hidden from the program:
 * when the page heap cannot serve a slab or a large block, every cache of
 * the allocator is returned (and the empty slabs reclaimed) before
 * -ENOMEM; bx_alloc_stats() and bx_alloc_check() return them all first,
 * so "in use" is what the program holds; a cached block is free to
 * bx_alloc_put() and bx_alloc_size().
 *
 * Metadata: 24 bytes per region page (6 MiB for 1 GiB); per slab ever
 * needed ~220 bytes and a byte per block (1 KiB for 64 B blocks, so at
 * most 1/64 of the slab); ~260 bytes per size class per thread (3 KiB for
 * libbx's 11 classes); all malloc'ed.
 *
 * Alignment: a span starts on a page, a slab block on a multiple of its
 * size within its slab, so every block is aligned to min(size, 4096).
 *
 * Checking. Every offset is checked against the metadata before anything
 * is changed: out of range, interior, misaligned, free or cached is
 * -EINVAL. The page map's owner array says, per page, which live slab
 * owns it (NULL for none); the head page of a large block holds one of
 * two sentinel addresses instead, LARGE_LIVE or LARGE_CACHED, which are no
 * slab. A put reads the owner without a lock (acquire). For a slab it
 * checks the offset against the slab's geometry, then takes the block
 * back from the program with one atomic exchange of its live byte for 0:
 * a byte already 0 means free, cached or a double free. For a large block
 * it turns the head's owner from LARGE_LIVE to LARGE_CACHED with a
 * compare-and-exchange (or to NULL, under the page lock, when the block
 * goes to the page heap): anything else is not a live block's start.
 * Whoever wins the atomic owns the block, so these checks are exact for
 * any misuse by one thread, and for concurrent double frees too, a flush
 * of the same block included. (The design began with a "cached" bitmap
 * beside the freemap; a "held by the program" byte needs one atomic on a
 * put where that needed a load and an atomic, none on a get from the
 * cache, and closes the race of a double free with a flush.) Slab
 * descriptors are recycled within their class and never freed before
 * destroy, so a stale lookup only ever reaches a valid descriptor of the
 * right class, and a block index is always within its arrays. What the
 * program must not do is free a block that another thread may be getting
 * at the same time (a put racing the get that returns the same offset,
 * or racing the reuse of a slab whose blocks are all free): that is the
 * program's own race, as with any malloc. A flush re-validates each
 * block under its class lock, so the metadata stays consistent even then.
 *
 * Locking: one lock per size class, one for the page heap, one per thread
 * cache, and one registry lock for the lists of caches. The order is
 * registry -> cache -> class -> page; nothing holding a class or the page
 * lock takes a cache lock. A thread takes its own cache's lock on every
 * get and put (one atomic to take; to drop, a plain store: nobody sleeps
 * waiting for a cache lock, see spin_take()), and holds it while a full
 * magazine goes back to its slabs or an empty one is filled from them;
 * but a get drops it before it makes a new slab or goes to the page heap,
 * which may have to return every cache. Other threads take it only to
 * return the cache's blocks (drain, stats, check, thread exit, destroy).
 * The registry lock is one for all allocators because a cache can
 * outlive its allocator: the thread that frees it must find a lock still
 * there. A class lock is held while a slab's span comes from or goes back
 * to the page heap, so that no one holding both ever sees a slab span
 * without its slab. stats/check take every class lock in order, then the
 * page lock (after draining, not nested in it).
 *
 * Lifetimes. A thread's cache pointer (thread-local) starts at a shared
 * cache of no allocator, tc_none, so the fast paths need no test for
 * "none": they take its lock, see that its allocator is not theirs, and
 * go the slow way, which makes the thread a cache. The allocator of a
 * cache is read under its lock, so an allocator made at a destroyed
 * one's address is never taken for it. bx_alloc_destroy() marks every
 * cache of the allocator dead (its allocator pointer NULL, under registry
 * -> cache lock) and unlists it; the owner thread frees it on its next
 * call or at exit, without touching the allocator. fork(): the child
 * keeps the forking thread's cache; the other threads' caches stay listed
 * with their blocks, which the next drain (stats, check, a full region)
 * returns, and their few KiB are never freed. As for every lock here, a
 * fork while another thread is inside the allocator can leave a lock held
 * in the child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
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

#define MAG_SIZE	16		/* blocks per magazine (thread, class) */
#define MAG_BYTES	(1ull << 20)	/* and no more bytes, but one block */
#define LCACHE_N	4		/* large blocks per thread cache */
#define LCACHE_PAGES	(8u << (20 - PAGE_SHIFT)) /* 8 MiB of them at most */
#define NCLASSES_MAX	26		/* 64 B (min_block) .. 2 GiB (max_small) */

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
/* A fast path of its own, reached by a tail call: its own registers. */
#define FAST	__attribute__((noinline))

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

/* Take l if it is free; whether it was. */
static inline bool lock_try(struct lock *l)
{
	uint32_t c = 0;

	return atomic_compare_exchange_strong_explicit(&l->word, &c, 1,
						       memory_order_acquire,
						       memory_order_relaxed);
}

static inline void lock_take(struct lock *l)
{
	if (!lock_try(l))
		lock_take_slow(l);
}

static COLD void lock_wake(struct lock *l)
{
	futex(&l->word, FUTEX_WAKE, 1);
}

static inline void lock_drop(struct lock *l)
{
	if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
		lock_wake(l);
}

/*
 * A thread cache's lock: the same word, but nobody sleeps in the kernel
 * waiting for it: a waiter spins, then yields. Its owner thread takes and
 * drops it on every get and put, other threads seldom (drain, exit,
 * destroy), and then hold it briefly; so dropping it needs no atomic
 * exchange (to learn of sleepers) but a plain store (release).
 */
static COLD void spin_take_slow(struct lock *l)
{
	for (;;) {
		for (int i = 0; i < LOCK_SPINS; i++) {
			if (!atomic_load_explicit(&l->word,
						  memory_order_relaxed) &&
			    lock_try(l))
				return;
			cpu_relax();
		}
		sched_yield();
	}
}

static inline void spin_take(struct lock *l)
{
	if (!lock_try(l))
		spin_take_slow(l);
}

static inline void spin_drop(struct lock *l)
{
	atomic_store_explicit(&l->word, 0, memory_order_release);
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
	/* These two are read by a put without the lock: see READ_ONCE. */
	uint64_t	off;		/* region offset */
	uint64_t	bytes;		/* of its span; 0 in the pool */
	uint64_t	mask;		/* block size - 1 */
	uint32_t	page;		/* off / PAGE_SIZE */
	uint32_t	npages;
	uint32_t	cls;		/* these three set once, before first use */
	uint32_t	shift;		/* log2 of the block size */
	uint32_t	nblocks;
	uint32_t	nfree;
	uint32_t	hint;		/* no free block in words below */
	bool		listed;		/* on avail, iff nfree > 0 */
	/*
	 * Bit set: block free. Written under the class lock, read without
	 * it (relaxed) by a put's check.
	 */
	_Atomic uint64_t freemap[SLAB_WORDS];
	/*
	 * Per block, 1: held by the program (allocated in freemap, and in
	 * no thread cache), else 0. Set by slab_give() under the class lock
	 * and by a get from a cache, with a plain store: nobody else touches
	 * a block that is not the program's. Cleared by a put with an atomic
	 * exchange: the put owns the block only if it found 1. As many as
	 * the class's largest slab has blocks.
	 */
	_Atomic uint8_t	live[];
};

/*
 * The owner entry of a large block's head page: live, or in a thread
 * cache. Never slabs: owner_of()'s callers test is_slab(), or rely on
 * their bytes being 0, as for a slab in the pool.
 */
static struct slab large_mark[2];
#define LARGE_LIVE	(&large_mark[0])
#define LARGE_CACHED	(&large_mark[1])

static bool is_slab(const struct slab *s)
{
	return s && (uintptr_t)s - (uintptr_t)large_mark >= sizeof(large_mark);
}

struct klass {
	/*
	 * Protects everything in this struct and every field but ->cls,
	 * ->shift, ->mask (set once) and ->live of every slab of this class
	 * (live or pooled), including the owner entries of a live slab's
	 * pages, which are written only under it.
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
	uint32_t	max_blocks;	/* pref_bytes >> shift: of any slab */
};

/* A block in a magazine: its offset, and its slab's live byte for it. */
struct mag_slot {
	uint64_t	off;
	_Atomic uint8_t	*live;
};

struct tcache {
	/*
	 * Protects the blocks below. Taken by the owner thread on each get
	 * and put, by others only to return the blocks (drain, exit,
	 * destroy). Taken and dropped with spin_take()/spin_drop().
	 */
	struct lock	lock;
	/*
	 * The allocator, NULL once destroyed; written under registry_lock
	 * and lock, read under either.
	 */
	struct bx_alloc	*a;
	struct list	link;		/* on a->caches, under registry_lock */
	uint32_t	nlarge;		/* large blocks, oldest first */
	uint32_t	large_pages;	/* their pages */
	struct {
		uint32_t	page;
		uint32_t	npages;
	} large[LCACHE_N];
	struct {
		uint32_t	n;	/* blocks in the class's magazine */
		uint32_t	cap;	/* MAG_SIZE, or fewer for big blocks */
	} fill[NCLASSES_MAX];
	/* Per size class of a: its blocks, oldest first. */
	struct mag_slot	mag[][MAG_SIZE];
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
	 * without any lock (acquire) to find the slab of an offset. At the
	 * head page of a large block: LARGE_LIVE or LARGE_CACHED, set and
	 * cleared under the page lock, switched between the two by the thread
	 * that caches or takes the block (see the top comment).
	 */
	_Atomic(struct slab *) *owner;
	struct list	caches;		/* thread caches, under registry_lock */

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

/*
 * A field read without the lock that its writers hold: relaxed atomic
 * accesses there (as the kernel's READ_ONCE/WRITE_ONCE), plain ones under
 * the lock. Plain loads and stores on the machines we build for.
 */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

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

/* Who owns off's page: a live slab, a large mark or NULL; off < region_size. */
static struct slab *owner_of(struct bx_alloc *a, uint64_t off)
{
	return atomic_load_explicit(&a->owner[off >> PAGE_SHIFT],
				    memory_order_acquire);
}

/* The free bits of word w of s's freemap. */
static uint64_t freemap_word(const struct slab *s, uint32_t w)
{
	return atomic_load_explicit(&s->freemap[w], memory_order_relaxed);
}

/* Class lock held: the only writers. */
static void freemap_set_word(struct slab *s, uint32_t w, uint64_t m)
{
	atomic_store_explicit(&s->freemap[w], m, memory_order_relaxed);
}

static bool block_free(const struct slab *s, uint64_t idx)
{
	return freemap_word(s, idx / 64) & 1ull << idx % 64;
}

static bool block_live(const struct slab *s, uint64_t idx)
{
	return atomic_load_explicit(&s->live[idx], memory_order_relaxed);
}

/* Take block idx of s back from the program; whether it held it. */
static bool live_clear(struct slab *s, uint64_t idx)
{
	return atomic_exchange_explicit(&s->live[idx], 0,
					memory_order_relaxed);
}

/* Take a free block of s; class lock held, s->nfree > 0. Its index. */
static uint32_t slab_take(struct klass *c, struct slab *s)
{
	uint32_t w = s->hint, bit;
	uint64_t m;

	while (!(m = freemap_word(s, w)))
		w++;
	bit = __builtin_ctzll(m);
	freemap_set_word(s, w, m & (m - 1));
	s->hint = w;
	if (s->nfree-- == s->nblocks)
		c->nempty--;
	if (!s->nfree) {
		list_del(&s->link);
		s->listed = false;
	}
	c->blocks++;
	return w * 64 + bit;
}

/* Take a free block of s for the program; its offset. As slab_take(). */
static uint64_t slab_give(struct klass *c, struct slab *s)
{
	uint32_t idx = slab_take(c, s);

	atomic_store_explicit(&s->live[idx], 1, memory_order_relaxed);
	return s->off + ((uint64_t)idx << c->shift);
}

/*
 * Detach the fully free slab s from its class and its pages, and give its
 * span back to the page heap; class lock held (so that stats and check,
 * which take every lock, never see a slab span that no slab owns).
 */
static COLD void slab_retire(struct bx_alloc *a, struct klass *c,
			     struct slab *s)
{
	list_del(&s->link);
	s->listed = false;
	c->nempty--;
	c->slab_bytes -= s->bytes;
	WRITE_ONCE(s->bytes, 0);
	for (uint32_t i = 0; i < s->npages; i++)
		atomic_store_explicit(&a->owner[s->page + i], NULL,
				      memory_order_release);
	s->spare = c->pool;
	c->pool = s;
	page_free_locked(a, s->page);
}

/* Return every kept empty slab to the page heap; the number returned. */
static unsigned int reclaim(struct bx_alloc *a)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < a->nclasses; i++) {
		struct klass *c = &a->cls[i];

		lock_take(&c->lock);
		while (c->nempty) {
			slab_retire(a, c, container_of(c->avail.prev,
						       struct slab, link));
			n++;
		}
		lock_drop(&c->lock);
	}
	return n;
}

static unsigned int drain(struct bx_alloc *a);

/*
 * The page heap is out of room: return every thread cache, then the kept
 * empty slabs. Whether anything came back. No lock held.
 */
static COLD bool make_room(struct bx_alloc *a)
{
	unsigned int n = drain(a);

	return reclaim(a) + n > 0;
}

/* Serve one block of class ci from a new slab. No lock held. */
static COLD int slab_grow(struct bx_alloc *a, unsigned int ci, uint64_t *off)
{
	struct klass *c = &a->cls[ci];
	uint64_t min = 1ull << c->shift, bytes;
	bool retried = false;
	uint32_t p = NIL;
	struct slab *s;

	if (min < PAGE_SIZE)
		min = PAGE_SIZE;
	/* The span is taken under the class lock: see slab_retire(). */
	for (;;) {
		lock_take(&c->lock);
		lock_take(&a->page_lock);
		for (bytes = c->pref_bytes; bytes >= min; bytes >>= 1) {
			if (bytes > a->region_size)
				continue;
			p = page_alloc(a, bytes >> PAGE_SHIFT, PG_SLAB);
			if (p != NIL)
				break;
		}
		lock_drop(&a->page_lock);
		if (p != NIL || retried)
			break;
		lock_drop(&c->lock);
		if (!make_room(a)) {
			lock_take(&c->lock);
			break;
		}
		retried = true;
	}

	if (p == NIL) {
		/* Blocks may have been freed since we looked. */
		if (list_empty(&c->avail)) {
			lock_drop(&c->lock);
			return -ENOMEM;
		}
		s = container_of(c->avail.next, struct slab, link);
		*off = slab_give(c, s);
		lock_drop(&c->lock);
		return 0;
	}

	s = c->pool;
	if (s) {
		c->pool = s->spare;
	} else {
		s = calloc(1, sizeof(*s) + c->max_blocks);
		if (!s) {
			page_free_locked(a, p);
			lock_drop(&c->lock);
			return -ENOMEM;
		}
		s->cls = ci;
		s->shift = c->shift;
		s->mask = (1ull << c->shift) - 1;
		s->all = c->all;
		c->all = s;
	}
	WRITE_ONCE(s->off, (uint64_t)p << PAGE_SHIFT);
	WRITE_ONCE(s->bytes, bytes);
	s->page = p;
	s->npages = bytes >> PAGE_SHIFT;
	s->nblocks = bytes >> c->shift;
	s->nfree = s->nblocks;
	s->hint = 0;
	/* Word by word, never all clear: a stale reader sees free blocks. */
	for (uint32_t w = 0; w < SLAB_WORDS; w++) {
		uint32_t first = w * 64;

		freemap_set_word(s, w, first + 64 <= s->nblocks ? ~0ull :
				 first < s->nblocks ?
				 (1ull << (s->nblocks - first)) - 1 : 0);
	}
	for (uint32_t i = 0; i < s->nblocks; i++)
		atomic_store_explicit(&s->live[i], 0, memory_order_relaxed);
	for (uint32_t i = 0; i < s->npages; i++)
		atomic_store_explicit(&a->owner[p + i], s,
				      memory_order_release);
	list_insert(&s->link, &c->avail, c->avail.next);
	s->listed = true;
	c->nempty++;
	c->slab_bytes += bytes;
	*off = slab_give(c, s);
	lock_drop(&c->lock);
	return 0;
}

/* Take a block of class ci from the slabs. No lock held. */
static int slab_get(struct bx_alloc *a, unsigned int ci, uint64_t *off)
{
	struct klass *c = &a->cls[ci];

	lock_take(&c->lock);
	if (!list_empty(&c->avail)) {
		*off = slab_give(c, container_of(c->avail.next, struct slab,
						 link));
		lock_drop(&c->lock);
		return 0;
	}
	lock_drop(&c->lock);
	return slab_grow(a, ci, off);
}

/*
 * Whether off is the start of a block of s, then *idx its index. Needs no
 * lock: s may be stale or unrelated, but its bytes >> shift never exceeds
 * SLAB_MAX_BLOCKS. (rel wraps if off < s->off; bytes is 0 in the pool.)
 */
static inline bool slab_index(const struct slab *s, uint64_t off,
			      uint64_t *idx)
{
	uint64_t rel = off - READ_ONCE(s->off);

	if (rel >= READ_ONCE(s->bytes) || rel & s->mask)
		return false;
	*idx = rel >> s->shift;
	return true;
}

/*
 * Validate off as a block of s that the program holds, under s's class
 * lock; the block index or -EINVAL.
 */
static int64_t slab_block(const struct slab *s, uint64_t off)
{
	uint64_t idx;

	if (!slab_index(s, off, &idx) || !block_live(s, idx))
		return -EINVAL;
	return idx;
}

/* Mark the validated block idx of s free; class lock held. */
static void slab_release(struct bx_alloc *a, struct klass *c, struct slab *s,
			 uint64_t idx)
{
	uint32_t w = idx / 64;

	freemap_set_word(s, w, freemap_word(s, w) | 1ull << idx % 64);
	if (w < s->hint)
		s->hint = w;
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
			slab_retire(a, c, s);
		} else if (c->avail.prev != &s->link) {
			list_del(&s->link);
			list_insert(&s->link, c->avail.prev, &c->avail);
		}
	}
}

/*
 * Free block idx at off of s, which the caller took back from the program
 * (live_clear()), straight into s, with no cache. No lock held.
 */
static int slab_put(struct bx_alloc *a, struct slab *s, uint64_t off,
		    uint64_t idx)
{
	struct klass *c = &a->cls[s->cls];
	uint64_t i;

	lock_take(&c->lock);
	/* Only a racing misuse can have changed s since: then drop it. */
	if (slab_index(s, off, &i) && i == idx && !block_free(s, idx))
		slab_release(a, c, s, idx);
	lock_drop(&c->lock);
	return 0;
}

/* ---- large blocks -------------------------------------------------------- */

/* Allocate npages from the page heap. No lock held. */
static int large_alloc(struct bx_alloc *a, uint64_t npages, uint64_t *off)
{
	bool retried = false;
	uint32_t p;

	for (;;) {
		lock_take(&a->page_lock);
		p = page_alloc(a, npages, PG_LARGE);
		if (p != NIL) {
			a->large_pages += npages;
			a->large_blocks++;
			atomic_store_explicit(&a->owner[p], LARGE_LIVE,
					      memory_order_release);
		}
		lock_drop(&a->page_lock);
		if (p != NIL) {
			*off = (uint64_t)p << PAGE_SHIFT;
			return 0;
		}
		if (retried || !make_room(a))
			return -ENOMEM;
		retried = true;
	}
}

/*
 * Free the large block at page p whose head's owner entry is mark; -EINVAL,
 * with no effect, if it is not a large block's head or its entry is not
 * mark.
 */
static int large_free(struct bx_alloc *a, uint32_t p, struct slab *mark)
{
	int ret = -EINVAL;

	lock_take(&a->page_lock);
	if (a->pg[p].kind == PG_LARGE &&
	    atomic_compare_exchange_strong_explicit(&a->owner[p], &mark, NULL,
						    memory_order_relaxed,
						    memory_order_relaxed)) {
		a->large_pages -= a->pg[p].npages;
		a->large_blocks--;
		page_free(a, p);
		ret = 0;
	}
	lock_drop(&a->page_lock);
	return ret;
}

/* ---- thread caches ------------------------------------------------------- */

/* Nests outside every cache lock; see "Locking" at the top. */
static struct lock registry_lock;

/*
 * The cache of threads that have none (yet, or no memory for one): the
 * fast paths take its lock, find that its a is not theirs, and go the
 * slow way, which makes them one. Its a stays NULL; it is never listed.
 */
static struct tcache tc_none;

/*
 * In libbx.so, initial-exec: an offset from the thread pointer instead of
 * a __tls_get_addr() call on every get and put (and no dependency on
 * ld.so's); dlopen() finds a pointer's room in glibc's static TLS
 * reserve. Built into a program, the compiler's local-exec is better.
 */
#if defined(__PIC__) && !defined(__PIE__)
#define TC_TLS_MODEL	__attribute__((tls_model("initial-exec")))
#else
#define TC_TLS_MODEL
#endif
static _Thread_local struct tcache *tc_mine TC_TLS_MODEL = &tc_none; /* this thread's */

static pthread_once_t tc_once = PTHREAD_ONCE_INIT;
static pthread_key_t tc_key;	/* its value: the thread's cache */
static bool tc_key_made;

/*
 * Return the oldest n blocks of t's magazine of class ci to their slabs
 * in one take of the class lock; t's lock held. A block that no longer
 * validates (only after a racing misuse) is dropped.
 */
static void mag_flush(struct bx_alloc *a, struct tcache *t, unsigned int ci,
		      uint32_t n)
{
	struct klass *c = &a->cls[ci];
	struct mag_slot *m = t->mag[ci];

	lock_take(&c->lock);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = m[i].off, idx;
		struct slab *s = owner_of(a, off);

		if (!is_slab(s) || s->cls != ci || !slab_index(s, off, &idx) ||
		    block_live(s, idx) || block_free(s, idx))
			continue;
		slab_release(a, c, s, idx);
	}
	lock_drop(&c->lock);
	t->fill[ci].n -= n;
	memmove(m, m + n, t->fill[ci].n * sizeof(m[0]));
}

/* Return t's oldest large block to the page heap; t's lock held. */
static void large_evict(struct bx_alloc *a, struct tcache *t)
{
	uint32_t p = t->large[0].page;

	t->large_pages -= t->large[0].npages;
	t->nlarge--;
	memmove(t->large, t->large + 1, t->nlarge * sizeof(t->large[0]));
	large_free(a, p, LARGE_CACHED);
}

/* Return every block of t; t's lock held. The number of blocks. */
static unsigned int cache_flush(struct bx_alloc *a, struct tcache *t)
{
	unsigned int n = t->nlarge;

	for (unsigned int ci = 0; ci < a->nclasses; ci++) {
		n += t->fill[ci].n;
		if (t->fill[ci].n)
			mag_flush(a, t, ci, t->fill[ci].n);
	}
	while (t->nlarge)
		large_evict(a, t);
	return n;
}

/* Return every thread's cache of a; the number of blocks. No lock held. */
static COLD unsigned int drain(struct bx_alloc *a)
{
	unsigned int n = 0;

	lock_take(&registry_lock);
	for (struct list *l = a->caches.next; l != &a->caches; l = l->next) {
		struct tcache *t = container_of(l, struct tcache, link);

		spin_take(&t->lock);
		n += cache_flush(a, t);
		spin_drop(&t->lock);
	}
	lock_drop(&registry_lock);
	return n;
}

/* Return t's blocks, if its allocator lives, unlist it and free it. */
static void cache_free(struct tcache *t)
{
	lock_take(&registry_lock);
	spin_take(&t->lock);
	if (t->a) {
		cache_flush(t->a, t);
		list_del(&t->link);
		t->a = NULL;
	}
	spin_drop(&t->lock);
	lock_drop(&registry_lock);
	free(t);
}

/* tc_key's destructor: the thread exits. */
static void cache_exit(void *arg)
{
	if (tc_mine == arg)
		tc_mine = &tc_none;
	cache_free(arg);
}

static void cache_key_make(void)
{
	tc_key_made = !pthread_key_create(&tc_key, cache_exit);
}

/*
 * Give this thread a cache for a, freeing the one it had; the new one
 * locked, or NULL (no memory: the caller goes without). No lock held.
 */
static COLD struct tcache *cache_bind(struct bx_alloc *a)
{
	struct tcache *t = tc_mine;

	if (t != &tc_none) {
		tc_mine = &tc_none;
		pthread_setspecific(tc_key, NULL);
		cache_free(t);
	}
	pthread_once(&tc_once, cache_key_make);
	if (!tc_key_made)
		return NULL;
	t = calloc(1, sizeof(*t) + a->nclasses * sizeof(t->mag[0]));
	if (!t)
		return NULL;
	if (pthread_setspecific(tc_key, t)) {
		free(t);
		return NULL;
	}
	for (unsigned int ci = 0; ci < a->nclasses; ci++) {
		uint64_t cap = MAG_BYTES >> a->cls[ci].shift;

		t->fill[ci].cap = cap > MAG_SIZE ? MAG_SIZE : cap ? cap : 1;
	}
	lock_take(&registry_lock);
	t->a = a;
	list_insert(&t->link, &a->caches, a->caches.next);
	lock_drop(&registry_lock);
	tc_mine = t;
	spin_take(&t->lock);
	return t;
}

/*
 * This thread's cache for a, locked, waiting for its lock or making it
 * if need be; NULL if it cannot have one. t: this thread's cache if the
 * caller holds its lock, else NULL.
 */
static COLD struct tcache *cache_lock(struct bx_alloc *a, struct tcache *t)
{
	if (!t) {
		t = tc_mine;
		spin_take(&t->lock);
	}
	/* Not if a was destroyed and this is another at its address. */
	if (t->a == a)
		return t;
	spin_drop(&t->lock);
	return cache_bind(a);
}

/* ---- get and put --------------------------------------------------------- */

/*
 * The fast paths take tc_mine's lock if it is free and check that
 * tc_mine->a is a; else they go the slow way, through cache_lock(). Every
 * way out of them is a return or a tail call, so that they save no
 * registers.
 */

/* Take the newest block of class ci from t, which has one; drops t's lock. */
static inline int small_uncache(struct tcache *t, unsigned int ci,
				uint64_t *off)
{
	struct mag_slot *slot = &t->mag[ci][--t->fill[ci].n];

	atomic_store_explicit(slot->live, 1, memory_order_relaxed);
	*off = slot->off;
	spin_drop(&t->lock);
	return 0;
}

/*
 * Fill t's empty magazine of class ci half full from the slabs that have
 * free blocks, in one take of the class lock; t's lock held. Whether it
 * got any. (Never a new slab: that may have to drain every cache.)
 */
static bool mag_refill(struct bx_alloc *a, struct tcache *t, unsigned int ci)
{
	struct klass *c = &a->cls[ci];
	uint32_t n = 0, want = (t->fill[ci].cap + 1) / 2;

	lock_take(&c->lock);
	while (n < want && !list_empty(&c->avail)) {
		struct slab *s = container_of(c->avail.next, struct slab,
					      link);
		uint32_t idx = slab_take(c, s);

		t->mag[ci][n].off = s->off + ((uint64_t)idx << c->shift);
		t->mag[ci][n++].live = &s->live[idx];
	}
	lock_drop(&c->lock);
	t->fill[ci].n = n;
	return n;
}

static COLD int small_get_slow(struct bx_alloc *a, struct tcache *t,
			       unsigned int ci, uint64_t *off)
{
	t = cache_lock(a, t);
	if (!t)
		return slab_get(a, ci, off);
	if (!t->fill[ci].n && !mag_refill(a, t, ci)) {
		spin_drop(&t->lock);
		return slab_get(a, ci, off);
	}
	return small_uncache(t, ci, off);
}

static inline int small_get(struct bx_alloc *a, unsigned int ci,
			    uint64_t *off)
{
	struct tcache *t = tc_mine;

	if (!lock_try(&t->lock))
		return small_get_slow(a, NULL, ci, off);
	if (t->a != a || !t->fill[ci].n)
		return small_get_slow(a, t, ci, off);
	return small_uncache(t, ci, off);
}

/*
 * Cache block idx of s at off in t, whose magazine has room, if the
 * program held it; drops t's lock.
 */
static inline int small_cache(struct tcache *t, struct slab *s, uint64_t off,
			      uint64_t idx)
{
	uint32_t ci = s->cls;
	struct mag_slot *slot = &t->mag[ci][t->fill[ci].n];

	if (!live_clear(s, idx)) {
		spin_drop(&t->lock);
		return -EINVAL;
	}
	slot->off = off;
	slot->live = &s->live[idx];
	t->fill[ci].n++;
	spin_drop(&t->lock);
	return 0;
}

static COLD int small_put_slow(struct bx_alloc *a, struct tcache *t,
			       struct slab *s, uint64_t off, uint64_t idx)
{
	t = cache_lock(a, t);
	if (!t)
		return live_clear(s, idx) ? slab_put(a, s, off, idx) : -EINVAL;
	if (t->fill[s->cls].n == t->fill[s->cls].cap)
		mag_flush(a, t, s->cls, (t->fill[s->cls].n + 1) / 2);
	return small_cache(t, s, off, idx);
}

/* Free block idx at off of s, the slab that owns off's page. */
static inline int small_put(struct bx_alloc *a, struct slab *s, uint64_t off,
			    uint64_t idx)
{
	struct tcache *t = tc_mine;

	if (!lock_try(&t->lock))
		return small_put_slow(a, NULL, s, off, idx);
	if (t->a != a || t->fill[s->cls].n == t->fill[s->cls].cap)
		return small_put_slow(a, t, s, off, idx);
	return small_cache(t, s, off, idx);
}

/* Take t's large block i (of npages) for the program; drops t's lock. */
static inline int large_take(struct bx_alloc *a, struct tcache *t,
			     uint32_t i, uint32_t npages, uint64_t *off)
{
	uint32_t p = t->large[i].page;

	t->large_pages -= npages;
	t->nlarge--;
	atomic_store_explicit(&a->owner[p], LARGE_LIVE, memory_order_release);
	*off = (uint64_t)p << PAGE_SHIFT;
	spin_drop(&t->lock);
	return 0;
}

/*
 * large_uncache() when the newest block is not of npages: an older one,
 * whose newer ones then move down, or the page heap. A full cache that
 * has none of npages gives up its oldest block, so that it takes to
 * the sizes now in use.
 */
static COLD int large_uncache_older(struct bx_alloc *a, struct tcache *t,
				    uint32_t npages, uint64_t *off)
{
	uint32_t i = t->nlarge, p;

	do {
		if (!i--) {
			if (t->nlarge == LCACHE_N)
				large_evict(a, t);
			spin_drop(&t->lock);
			return large_alloc(a, npages, off);
		}
	} while (t->large[i].npages != npages);
	p = t->large[i].page;
	memmove(t->large + i, t->large + i + 1,
		(t->nlarge - i - 1) * sizeof(t->large[0]));
	t->large[t->nlarge - 1].page = p;
	t->large[t->nlarge - 1].npages = npages;
	return large_take(a, t, t->nlarge - 1, npages, off);
}

/* Take a block of npages from t, else from the page heap; drops t's lock. */
static inline int large_uncache(struct bx_alloc *a, struct tcache *t,
				uint32_t npages, uint64_t *off)
{
	uint32_t i = t->nlarge - 1;

	if (!t->nlarge || t->large[i].npages != npages)
		return large_uncache_older(a, t, npages, off);
	return large_take(a, t, i, npages, off);
}

static COLD int large_get_slow(struct bx_alloc *a, struct tcache *t,
			       uint32_t npages, uint64_t *off)
{
	t = cache_lock(a, t);
	if (!t)
		return large_alloc(a, npages, off);
	return large_uncache(a, t, npages, off);
}

static FAST int large_get(struct bx_alloc *a, uint32_t npages, uint64_t *off)
{
	struct tcache *t = tc_mine;

	if (!lock_try(&t->lock))
		return large_get_slow(a, NULL, npages, off);
	if (t->a != a)
		return large_get_slow(a, t, npages, off);
	return large_uncache(a, t, npages, off);
}

/*
 * Cache the large block at p, if it is live, in t; drops t's lock. A
 * cache that is full (4 blocks) or would hold too much (8 MiB) lets the
 * block go to the page heap, as if there were none.
 */
static inline int large_cache(struct bx_alloc *a, struct tcache *t,
			      uint32_t p)
{
	struct slab *live = LARGE_LIVE;
	uint32_t n;

	if (t->nlarge == LCACHE_N) {
		spin_drop(&t->lock);
		return large_free(a, p, LARGE_LIVE);
	}
	if (!atomic_compare_exchange_strong_explicit(&a->owner[p], &live,
						     LARGE_CACHED,
						     memory_order_acquire,
						     memory_order_relaxed)) {
		spin_drop(&t->lock);
		return -EINVAL;
	}
	/* The block is this thread's now: nothing else writes pg[p]. */
	n = a->pg[p].npages;
	if (t->large_pages + n > LCACHE_PAGES) {
		spin_drop(&t->lock);
		return large_free(a, p, LARGE_CACHED);
	}
	t->large[t->nlarge].page = p;
	t->large[t->nlarge++].npages = n;
	t->large_pages += n;
	spin_drop(&t->lock);
	return 0;
}

static COLD int large_put_slow(struct bx_alloc *a, struct tcache *t,
			       uint32_t p)
{
	t = cache_lock(a, t);
	if (!t)
		return large_free(a, p, LARGE_LIVE);
	return large_cache(a, t, p);
}

/* Free the large block whose head page is p. */
static FAST int large_put(struct bx_alloc *a, uint32_t p)
{
	struct tcache *t = tc_mine;

	if (!lock_try(&t->lock))
		return large_put_slow(a, NULL, p);
	if (t->a != a)
		return large_put_slow(a, t, p);
	return large_cache(a, t, p);
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
	list_init(&a->caches);
	for (unsigned int i = 0; i < a->nclasses; i++) {
		struct klass *c = &a->cls[i];

		memset(c, 0, sizeof(*c));
		list_init(&c->avail);
		c->shift = a->min_shift + i;
		c->pref_bytes = (uint64_t)SLAB_PREF_BLOCKS << c->shift;
		if (c->pref_bytes < SLAB_PREF_BYTES)
			c->pref_bytes = SLAB_PREF_BYTES;
		c->max_blocks = c->pref_bytes >> c->shift;
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
	/* Caches still in use are freed by their threads, a forgotten. */
	lock_take(&registry_lock);
	while (!list_empty(&a->caches)) {
		struct tcache *t = container_of(a->caches.next, struct tcache,
						link);

		spin_take(&t->lock);
		t->a = NULL;
		list_del(&t->link);
		spin_drop(&t->lock);
	}
	lock_drop(&registry_lock);
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
	uint64_t need, x;

	/* size in 1..region_size, align a power of two <= PAGE_SIZE */
	if (!a || !off || size - 1 >= a->region_size ||
	    align - 1 >= PAGE_SIZE || align & (align - 1))
		return -EINVAL;
	need = size > align ? size : align;
	if (need > a->max_small)
		return large_get(a, (size + PAGE_SIZE - 1) >> PAGE_SHIFT, off);
	/* The class: 0 up to min_block, then one per power of two. */
	x = (need - 1) >> a->min_shift;
	return small_get(a, x ? ilog2(x) + 1 : 0, off);
}

int bx_alloc_put(struct bx_alloc *a, uint64_t off)
{
	struct slab *s;
	uint64_t idx;

	if (!a || off >= a->region_size)
		return -EINVAL;
	s = owner_of(a, off);
	if (s == LARGE_LIVE)
		return off % PAGE_SIZE ? -EINVAL : large_put(a, off >> PAGE_SHIFT);
	/* LARGE_CACHED has no bytes: it fails slab_index() too. */
	if (!s || !slab_index(s, off, &idx))
		return -EINVAL;
	return small_put(a, s, off, idx);
}

int64_t bx_alloc_size(struct bx_alloc *a, uint64_t off)
{
	struct slab *s;
	uint32_t p;
	int64_t ret;

	if (!a || off >= a->region_size)
		return -EINVAL;
	s = owner_of(a, off);
	if (is_slab(s)) {
		struct klass *c = &a->cls[s->cls];

		lock_take(&c->lock);
		ret = slab_block(s, off);
		if (ret >= 0)
			ret = 1ll << c->shift;
		lock_drop(&c->lock);
		return ret;
	}
	if (s != LARGE_LIVE || off % PAGE_SIZE)
		return -EINVAL;
	p = off >> PAGE_SHIFT;
	lock_take(&a->page_lock);
	ret = -EINVAL;
	if (a->pg[p].kind == PG_LARGE &&
	    atomic_load_explicit(&a->owner[p], memory_order_relaxed) ==
	    LARGE_LIVE)
		ret = (int64_t)a->pg[p].npages << PAGE_SHIFT;
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
	drain(a);
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

	VERIFY(is_slab(s) && s->page == p && s->npages == n);
	VERIFY(s->cls < a->nclasses);
	VERIFY(s->off == (uint64_t)p << PAGE_SHIFT);
	VERIFY(s->bytes == (uint64_t)n << PAGE_SHIFT);
	VERIFY(s->shift == a->cls[s->cls].shift);
	VERIFY(s->mask == (1ull << s->shift) - 1);
	VERIFY(s->nblocks == s->bytes >> s->shift);
	VERIFY(s->nblocks >= 1 && s->nblocks <= SLAB_MAX_BLOCKS);
	for (uint32_t i = 0; i < n; i++)
		VERIFY(atomic_load_explicit(&a->owner[p + i],
					    memory_order_relaxed) == s);
	for (w = 0; w < SLAB_WORDS; w++) {
		uint64_t m = freemap_word(s, w);
		uint64_t valid = ~0ull;

		if (w * 64 + 64 > s->nblocks)
			valid = w * 64 >= s->nblocks ? 0 :
				(1ull << (s->nblocks % 64)) - 1;
		VERIFY(!(m & ~valid));
		VERIFY(!m || w >= s->hint);
		nfree += __builtin_popcountll(m);
	}
	VERIFY(nfree == s->nfree && s->listed == (nfree > 0));
	/* Only allocated blocks are live; live bytes are 0 or 1. */
	for (uint32_t i = 0; i < s->nblocks; i++)
		VERIFY(block_live(s, i) ? !block_free(s, i) :
		       !atomic_load_explicit(&s->live[i],
					     memory_order_relaxed));
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
			struct slab *o = atomic_load_explicit(&a->owner[p],
							      memory_order_relaxed);

			VERIFY(o == LARGE_LIVE || o == LARGE_CACHED);
			VERIFY(!owned(a, p + 1, n - 1));
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

			VERIFY(s->bytes && s->listed && s->cls == i);
			VERIFY(empty || !seen_empty);
			seen_empty |= empty;
			listed++;
		}
		for (const struct slab *s = c->all; s; s = s->all) {
			VERIFY(s->cls == i);
			listed -= s->bytes && s->listed;
		}
		VERIFY(!listed);
		for (const struct slab *s = c->pool; s; s = s->spare)
			VERIFY(!s->bytes);
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
		drain(a);
		lock_all(a);
		ret = check_locked(a, blocks, bytes, nempty);
		unlock_all(a);
	}
	free(blocks);
	free(bytes);
	free(nempty);
	return ret;
}
