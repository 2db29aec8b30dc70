/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * bx region allocator: carves buffers out of a registered bx region.
 *
 * The allocator works purely in offsets within a region of region_size
 * bytes; it never touches the region's memory, and all of its metadata
 * lives in ordinary malloc'ed memory. All functions are thread-safe,
 * return 0 (or a non-negative value) on success and a negative errno on
 * failure, and never set errno. No argument is trusted: a bad offset is
 * reported, never acted upon. See alloc.c for the design.
 *
 * Each thread keeps a small cache of free blocks (those it freed, and
 * small ones taken ahead) for the allocator it used last: a get of the
 * same size takes no lock but the cache's own. It is returned when the
 * thread uses another allocator, when the thread exits, when the region
 * is too full for a get, and by bx_alloc_stats() and bx_alloc_check(). A
 * cached block is free: putting it again is -EINVAL.
 */
#ifndef BX_ALLOC_H
#define BX_ALLOC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Page granularity of the region and of large blocks. */
#define BX_ALLOC_PAGE_SIZE	4096u

/* An allocator over one region. Opaque. */
struct bx_alloc;

struct bx_alloc_stats {
	uint64_t	bytes_in_use;	/* sum of bx_alloc_size() of live blocks */
	uint64_t	blocks_in_use;	/* live blocks */
	uint64_t	bytes_free;	/* region_size - bytes_in_use */
	uint64_t	largest_free;	/* largest free page run, in bytes */
};

/**
 * bx_alloc_create() - make an allocator for a region
 * @out:         receives the allocator
 * @region_size: bytes; a non-zero multiple of 4096, below 16 TiB
 * @min_block:   smallest block size; a power of two >= 64
 * @max_small:   largest size served from size classes; a power of two
 *               >= @min_block (e.g. 65536). Larger sizes are page runs.
 *
 * Return: 0; -EINVAL for a bad argument; -ENOMEM.
 */
int bx_alloc_create(struct bx_alloc **out, uint64_t region_size,
		    uint32_t min_block, uint32_t max_small);

/**
 * bx_alloc_get() - allocate a block
 * @a:     allocator
 * @size:  bytes, 1..region_size
 * @align: a power of two <= 4096 (1 for no constraint). Independently of
 *         @align, every block is aligned to min(its block size, 4096).
 * @off:   receives the block's offset in the region
 *
 * The block's usable size (bx_alloc_size()) is @size rounded up to the
 * size class (a power of two >= min_block) when that is <= max_small, else
 * to a multiple of 4096.
 *
 * Return: 0; -EINVAL for a bad argument; -ENOMEM when the region (or
 * malloc, for metadata) has no room.
 */
int bx_alloc_get(struct bx_alloc *a, uint64_t size, uint64_t align,
		 uint64_t *off);

/**
 * bx_alloc_put() - free a block
 * @a:   allocator
 * @off: the offset bx_alloc_get() returned
 *
 * Return: 0; -EINVAL, with no effect, when @off is not the start of a live
 * block (a double free, an interior or misaligned offset, out of range).
 */
int bx_alloc_put(struct bx_alloc *a, uint64_t off);

/**
 * bx_alloc_size() - the usable size of a live block
 * Return: the size in bytes, or -EINVAL as for bx_alloc_put().
 */
int64_t bx_alloc_size(struct bx_alloc *a, uint64_t off);

/**
 * bx_alloc_stats() - a consistent snapshot of the allocator's counters
 *
 * Returns every thread's cache first, so that the blocks in use are those
 * the program holds. largest_free counts only free page runs: an
 * allocation of that many bytes (above max_small) succeeds if nothing
 * else runs concurrently; the free space inside partly used slabs is in
 * bytes_free but not in it. Both are zeroed for a NULL @a.
 */
void bx_alloc_stats(struct bx_alloc *a, struct bx_alloc_stats *st);

/**
 * bx_alloc_check() - verify every internal invariant (a debugging aid)
 *
 * Returns every thread's cache, then takes every lock and walks all
 * metadata: O(region pages + slabs).
 * Return: 0, or -EUCLEAN if the metadata is inconsistent (a bug).
 */
int bx_alloc_check(struct bx_alloc *a);

/**
 * bx_alloc_destroy() - free the allocator; live blocks are forgotten.
 *
 * No other call on @a may run or follow. Threads that still have a cache
 * for @a free it on their next call or at exit, without touching @a.
 */
void bx_alloc_destroy(struct bx_alloc *a);

#ifdef __cplusplus
}
#endif

#endif /* BX_ALLOC_H */
