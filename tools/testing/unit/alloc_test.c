// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for libbx/alloc.c, the region allocator, under ASan and
 * UBSan (and, built by hand with -fsanitize=thread, TSan).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../../libbx/alloc.h"
#include "unit.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define PAGE 4096ull
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return unit_rnd(s) % n;
}

/* Log-uniform in [1, max]. */
static uint64_t rnd_size(uint64_t *s, uint64_t max)
{
	unsigned int bits = 64 - __builtin_clzll(max);
	uint64_t v = 1 + rnd_below(s, 1ull << rnd_below(s, bits));

	return v > max ? max : v;
}

static uint64_t rnd_align(uint64_t *s)
{
	return rnd_below(s, 4) ? 1 : 1ull << rnd_below(s, 13);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The alignment every block of usable size sz must have. */
static uint64_t natural_align(uint64_t sz)
{
	return min_u64(sz & -sz, PAGE);
}

static struct bx_alloc *mk(uint64_t region, uint32_t min_block,
			   uint32_t max_small)
{
	struct bx_alloc *a = NULL;

	if (bx_alloc_create(&a, region, min_block, max_small))
		return NULL;
	return a;
}

static struct bx_alloc_stats stats(struct bx_alloc *a)
{
	struct bx_alloc_stats st;

	bx_alloc_stats(a, &st);
	return st;
}

/* ---- a shadow bitmap of the region, one bit per 64 bytes ---------------- */

struct shadow {
	uint64_t	*bits;
	uint64_t	region;
};

static bool shadow_init(struct shadow *sh, uint64_t region)
{
	sh->region = region;
	sh->bits = calloc(region / 64 / 64 + 1, sizeof(uint64_t));
	return sh->bits;
}

/* Mark [off, off + len) used; false if out of range or already used. */
static bool shadow_claim(struct shadow *sh, uint64_t off, uint64_t len)
{
	if (off % 64 || len % 64 || !len || off > sh->region ||
	    len > sh->region - off)
		return false;
	for (uint64_t g = off / 64; g < (off + len) / 64; g++) {
		if (sh->bits[g / 64] & 1ull << g % 64)
			return false;
		sh->bits[g / 64] |= 1ull << g % 64;
	}
	return true;
}

static bool shadow_release(struct shadow *sh, uint64_t off, uint64_t len)
{
	for (uint64_t g = off / 64; g < (off + len) / 64; g++) {
		if (!(sh->bits[g / 64] & 1ull << g % 64))
			return false;
		sh->bits[g / 64] &= ~(1ull << g % 64);
	}
	return true;
}

/* ---- arguments ----------------------------------------------------------- */

UNIT_TEST(create_rejects_bad_args)
{
	struct bx_alloc *a = (struct bx_alloc *)&a;

	CHECK_EQ(bx_alloc_create(NULL, MiB, 64, 64 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, 0, 64, 64 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, 4095, 64, 64 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, MiB + 1, 64, 64 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, MiB + 2048, 64, 64 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, 1ull << 44, 64, 64 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, MiB, 0, 64 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, MiB, 32, 64 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, MiB, 96, 64 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, MiB, 64, 0), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, MiB, 64, 48 * KiB), -EINVAL);
	CHECK_EQ(bx_alloc_create(&a, MiB, 128, 64), -EINVAL);
	CHECK(a == (struct bx_alloc *)&a);

	CHECK_EQ(bx_alloc_create(&a, PAGE, 64, 64), 0);
	bx_alloc_destroy(a);
	CHECK_EQ(bx_alloc_create(&a, MiB, 4096, 1u << 31), 0);
	bx_alloc_destroy(a);
	bx_alloc_destroy(NULL);
}

UNIT_TEST(invalid_inputs)
{
	struct bx_alloc *a = mk(4 * MiB, 64, 64 * KiB);
	struct bx_alloc_stats st0, st1;
	uint64_t small, mid, large, off = 12345;

	CHECK(a);
	CHECK_EQ(bx_alloc_get(a, 0, 1, &off), -EINVAL);
	CHECK_EQ(bx_alloc_get(a, 4 * MiB + 1, 1, &off), -EINVAL);
	CHECK_EQ(bx_alloc_get(a, UINT64_MAX, 1, &off), -EINVAL);
	CHECK_EQ(bx_alloc_get(a, 64, 0, &off), -EINVAL);
	CHECK_EQ(bx_alloc_get(a, 64, 3, &off), -EINVAL);
	CHECK_EQ(bx_alloc_get(a, 64, 48, &off), -EINVAL);
	CHECK_EQ(bx_alloc_get(a, 64, 8192, &off), -EINVAL);
	CHECK_EQ(bx_alloc_get(a, 64, 1ull << 63, &off), -EINVAL);
	CHECK_EQ(bx_alloc_get(a, 64, 1, NULL), -EINVAL);
	CHECK_EQ(bx_alloc_get(NULL, 64, 1, &off), -EINVAL);
	CHECK_EQ(off, 12345);

	CHECK_EQ(bx_alloc_get(a, 128, 1, &small), 0);
	CHECK_EQ(bx_alloc_get(a, 8 * KiB, 1, &mid), 0);
	CHECK_EQ(bx_alloc_get(a, 256 * KiB, 1, &large), 0);
	st0 = stats(a);

	/* Interior, misaligned, never allocated, out of range. */
	const uint64_t bad[] = {
		small + 64, small + 1, small + 127, mid + 64, mid + PAGE,
		large + 1, large + 64, large + PAGE, large + 255 * KiB,
		small + 128 * 5, 4 * MiB, 4 * MiB + PAGE, UINT64_MAX,
		UINT64_MAX - PAGE + 1, 1ull << 63, 3 * MiB, 3 * MiB + 64,
	};
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK_EQ(bx_alloc_put(a, bad[i]), -EINVAL);
		CHECK_EQ(bx_alloc_size(a, bad[i]), -EINVAL);
	}
	CHECK_EQ(bx_alloc_put(NULL, small), -EINVAL);
	CHECK_EQ(bx_alloc_size(NULL, small), -EINVAL);
	st1 = stats(a);
	CHECK(!memcmp(&st0, &st1, sizeof(st0)));
	CHECK_EQ(bx_alloc_check(a), 0);

	/* Double frees, with other blocks around and without. */
	CHECK_EQ(bx_alloc_size(a, small), 128);
	CHECK_EQ(bx_alloc_put(a, small), 0);
	CHECK_EQ(bx_alloc_put(a, small), -EINVAL);
	CHECK_EQ(bx_alloc_size(a, small), -EINVAL);
	CHECK_EQ(bx_alloc_put(a, mid), 0);
	CHECK_EQ(bx_alloc_put(a, mid), -EINVAL);
	CHECK_EQ(bx_alloc_put(a, large), 0);
	CHECK_EQ(bx_alloc_put(a, large), -EINVAL);
	CHECK_EQ(bx_alloc_size(a, large), -EINVAL);
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK_EQ(bx_alloc_put(a, bad[i]), -EINVAL);
	st1 = stats(a);
	CHECK_EQ(st1.bytes_in_use, 0);
	CHECK_EQ(st1.blocks_in_use, 0);
	CHECK_EQ(st1.bytes_free, 4 * MiB);
	CHECK_EQ(bx_alloc_check(a), 0);

	/* Still fully usable. */
	CHECK_EQ(bx_alloc_get(a, 4 * MiB, 1, &off), 0);
	CHECK_EQ(off, 0);
	CHECK_EQ(bx_alloc_put(a, off), 0);

	bx_alloc_stats(NULL, &st1);
	CHECK_EQ(st1.bytes_in_use + st1.bytes_free + st1.largest_free, 0);
	bx_alloc_stats(a, NULL);
	CHECK_EQ(bx_alloc_check(NULL), -EINVAL);
	bx_alloc_destroy(a);
}

/* ---- sizes and alignment ------------------------------------------------- */

UNIT_TEST(every_size_class)
{
	static const uint32_t mins[] = { 64, 256, 4096 };

	for (unsigned int m = 0; m < 3; m++) {
		struct bx_alloc *a = mk(16 * MiB, mins[m], 64 * KiB);
		struct shadow sh;
		uint64_t offs[64];
		unsigned int n = 0;

		CHECK(a && shadow_init(&sh, 16 * MiB));
		for (uint64_t cls = mins[m]; cls <= 64 * KiB; cls *= 2) {
			const uint64_t sizes[] = {
				cls / 2 + 1, cls - 1, cls, cls / 2 + 1,
			};

			for (unsigned int i = 0; i < 4; i++) {
				uint64_t off, sz = sizes[i];

				if (sz <= mins[m] / 2)
					sz = 1;
				CHECK_EQ(bx_alloc_get(a, sz, 1, &off), 0);
				CHECK_EQ(bx_alloc_size(a, off), cls);
				CHECK_EQ(off % min_u64(cls, PAGE), 0);
				CHECK(shadow_claim(&sh, off, cls));
				offs[n++] = off;
			}
			/* The class boundary. */
			if (cls < 64 * KiB) {
				uint64_t off;

				CHECK_EQ(bx_alloc_get(a, cls + 1, 1, &off), 0);
				CHECK_EQ(bx_alloc_size(a, off), cls * 2);
				CHECK(shadow_claim(&sh, off, cls * 2));
				offs[n++] = off;
			}
		}
		CHECK_EQ(stats(a).blocks_in_use, n);
		CHECK_EQ(bx_alloc_check(a), 0);
		for (unsigned int i = 0; i < n; i++) {
			int64_t sz = bx_alloc_size(a, offs[i]);

			CHECK(sz > 0 && shadow_release(&sh, offs[i], sz));
			CHECK_EQ(bx_alloc_put(a, offs[i]), 0);
		}
		CHECK_EQ(stats(a).bytes_in_use, 0);
		CHECK_EQ(bx_alloc_check(a), 0);
		free(sh.bits);
		bx_alloc_destroy(a);
	}
}

UNIT_TEST(large_sizes)
{
	const uint64_t region = 16 * MiB;
	const uint64_t sizes[] = {
		64 * KiB + 1, 100000, 128 * KiB, MiB, MiB + 1, 3 * MiB + 5,
		5 * MiB - 1,
	};
	struct bx_alloc *a = mk(region, 64, 64 * KiB);
	struct shadow sh;
	uint64_t offs[8], off, total = 0;

	CHECK(a && shadow_init(&sh, region));
	for (unsigned int i = 0; i < 7; i++) {
		uint64_t want = (sizes[i] + PAGE - 1) / PAGE * PAGE;

		CHECK_EQ(bx_alloc_get(a, sizes[i], 1, &offs[i]), 0);
		CHECK_EQ(bx_alloc_size(a, offs[i]), want);
		CHECK_EQ(offs[i] % PAGE, 0);
		CHECK(shadow_claim(&sh, offs[i], want));
		total += want;
	}
	CHECK_EQ(stats(a).bytes_in_use, total);
	CHECK_EQ(stats(a).blocks_in_use, 7);
	CHECK_EQ(bx_alloc_check(a), 0);
	for (unsigned int i = 0; i < 7; i++)
		CHECK_EQ(bx_alloc_put(a, offs[i]), 0);

	/* The whole region as one block. */
	CHECK_EQ(bx_alloc_get(a, region, PAGE, &off), 0);
	CHECK_EQ(off, 0);
	CHECK_EQ(bx_alloc_size(a, off), region);
	CHECK_EQ(stats(a).bytes_free, 0);
	CHECK_EQ(stats(a).largest_free, 0);
	CHECK_EQ(bx_alloc_get(a, 1, 1, &offs[0]), -ENOMEM);
	CHECK_EQ(bx_alloc_get(a, MiB, 1, &offs[0]), -ENOMEM);
	CHECK_EQ(bx_alloc_put(a, off), 0);
	CHECK_EQ(stats(a).largest_free, region);
	free(sh.bits);
	bx_alloc_destroy(a);
}

UNIT_TEST(alignment)
{
	const uint64_t sizes[] = {
		1, 63, 64, 100, 1000, 4095, 4096, 4097, 65535, 65536, 65537,
		300000,
	};
	struct bx_alloc *a = mk(64 * MiB, 64, 64 * KiB);
	static uint64_t offs[12 * 13 + 1];
	unsigned int n = 0;
	struct shadow sh;

	CHECK(a && shadow_init(&sh, 64 * MiB));
	for (uint64_t align = 1; align <= PAGE; align *= 2) {
		for (unsigned int i = 0; i < 12; i++) {
			uint64_t off;
			int64_t sz;

			CHECK_EQ(bx_alloc_get(a, sizes[i], align, &off), 0);
			sz = bx_alloc_size(a, off);
			CHECK(sz >= (int64_t)sizes[i] && sz >= (int64_t)align);
			CHECK_EQ(off % align, 0);
			CHECK_EQ(off % natural_align(sz), 0);
			CHECK(shadow_claim(&sh, off, sz));
			offs[n++] = off;
		}
	}
	/* A small size with page alignment is a page-sized block. */
	CHECK_EQ(bx_alloc_get(a, 64, PAGE, &offs[n]), 0);
	CHECK_EQ(bx_alloc_size(a, offs[n]), PAGE);
	CHECK_EQ(offs[n] % PAGE, 0);
	n++;
	CHECK_EQ(bx_alloc_check(a), 0);
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(bx_alloc_put(a, offs[i]), 0);
	CHECK_EQ(stats(a).bytes_in_use, 0);
	free(sh.bits);
	bx_alloc_destroy(a);

	/* With max_small below a page, page alignment goes large. */
	a = mk(MiB, 64, 1024);
	CHECK(a);
	CHECK_EQ(bx_alloc_get(a, 64, 2048, &offs[0]), 0);
	CHECK_EQ(bx_alloc_size(a, offs[0]), PAGE);
	CHECK_EQ(offs[0] % 2048, 0);
	CHECK_EQ(bx_alloc_get(a, 64, 512, &offs[1]), 0);
	CHECK_EQ(bx_alloc_size(a, offs[1]), 512);
	CHECK_EQ(offs[1] % 512, 0);
	bx_alloc_destroy(a);
}

/* ---- exhaustion and coalescing ------------------------------------------- */

/* Fill a with blocks of size sz until -ENOMEM; the count, or -1. */
static long fill(struct bx_alloc *a, uint64_t sz, uint64_t *offs, long max)
{
	long n = 0;
	int ret;

	while ((ret = bx_alloc_get(a, sz, 1, &offs[n])) == 0)
		if (++n == max)
			return -1;
	return ret == -ENOMEM ? n : -1;
}

UNIT_TEST(exhaustion_and_recovery)
{
	static const uint64_t regions[] = { 4 * MiB, 4 * MiB + 12 * KiB };
	static uint64_t offs[70000];

	for (unsigned int r = 0; r < 2; r++) {
		uint64_t region = regions[r], off;
		struct bx_alloc *a = mk(region, 64, 64 * KiB);

		CHECK(a);
		for (uint64_t cls = 64; cls <= 64 * KiB; cls *= 2) {
			long n = fill(a, cls, offs, 70000);

			/* Slabs shrink to use every last page. */
			CHECK(n > 0);
			CHECK_EQ((uint64_t)n * cls,
				 cls <= PAGE ? region : region / cls * cls);
			CHECK_EQ(stats(a).bytes_in_use, n * cls);
			CHECK_EQ(stats(a).bytes_free, region - n * cls);
			CHECK_EQ(bx_alloc_check(a), 0);
			if ((uint64_t)n * cls == region)
				CHECK_EQ(bx_alloc_get(a, 1, 1, &off), -ENOMEM);
			CHECK_EQ(bx_alloc_get(a, 128 * KiB, 1, &off),
				 -ENOMEM);

			/* Recovery: a freed block is handed out again. */
			CHECK_EQ(bx_alloc_put(a, offs[n / 2]), 0);
			CHECK_EQ(bx_alloc_get(a, cls, 1, &off), 0);
			CHECK_EQ(off, offs[n / 2]);
			CHECK_EQ(bx_alloc_get(a, cls, 1, &off), -ENOMEM);

			for (long i = 0; i < n; i++)
				CHECK_EQ(bx_alloc_put(a, offs[i]), 0);
			CHECK_EQ(stats(a).bytes_in_use, 0);
			CHECK_EQ(stats(a).bytes_free, region);
			CHECK_EQ(bx_alloc_check(a), 0);
			/* Kept empty slabs are reclaimed for a big block. */
			CHECK_EQ(bx_alloc_get(a, region, 1, &off), 0);
			CHECK_EQ(bx_alloc_put(a, off), 0);
			CHECK_EQ(stats(a).largest_free, region);
		}

		/* Large blocks, then small ones fill the tail. */
		long n = fill(a, MiB + PAGE, offs, 1000), m;

		CHECK_EQ(n, region / (MiB + PAGE));
		m = fill(a, 64, offs + n, 70000 - n);
		CHECK_EQ((uint64_t)m * 64, region - n * (MiB + PAGE));
		CHECK_EQ(stats(a).bytes_free, 0);
		CHECK_EQ(bx_alloc_put(a, offs[1]), 0);
		CHECK_EQ(bx_alloc_get(a, MiB, 1, &off), 0);
		CHECK_EQ(off, offs[1]);
		CHECK_EQ(bx_alloc_get(a, PAGE, 1, &off), 0);
		CHECK_EQ(bx_alloc_get(a, PAGE, 1, &off), -ENOMEM);
		CHECK_EQ(bx_alloc_check(a), 0);
		bx_alloc_destroy(a);
	}
}

UNIT_TEST(empty_slabs_are_reclaimed)
{
	struct bx_alloc *a = mk(MiB, 64, 64 * KiB);
	uint64_t off[12], big;

	CHECK(a);
	/* One empty slab kept in each of several classes. */
	for (unsigned int i = 0; i < 11; i++)
		CHECK_EQ(bx_alloc_get(a, 64ull << i, 1, &off[i]), 0);
	for (unsigned int i = 0; i < 11; i++)
		CHECK_EQ(bx_alloc_put(a, off[i]), 0);
	CHECK_EQ(stats(a).bytes_in_use, 0);
	CHECK_EQ(stats(a).bytes_free, MiB);
	CHECK_EQ(bx_alloc_check(a), 0);
	CHECK_EQ(bx_alloc_get(a, MiB, 1, &big), 0);
	CHECK_EQ(big, 0);
	CHECK_EQ(bx_alloc_put(a, big), 0);
	/* And a slab the kept one shadows is reclaimed for small classes. */
	CHECK_EQ(bx_alloc_get(a, 64, 1, &off[0]), 0);
	CHECK_EQ(bx_alloc_put(a, off[0]), 0);
	CHECK_EQ(bx_alloc_get(a, MiB - 64 * KiB, 1, &big), 0);
	CHECK_EQ(bx_alloc_get(a, 64 * KiB, 1, &off[1]), 0);
	CHECK_EQ(bx_alloc_get(a, 1, 1, &off[2]), -ENOMEM);
	CHECK_EQ(bx_alloc_check(a), 0);
	bx_alloc_destroy(a);
}

static void shuffle(uint64_t *v, long n, uint64_t *seed)
{
	for (long i = n - 1; i > 0; i--) {
		long j = rnd_below(seed, i + 1);
		uint64_t t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

UNIT_TEST(coalescing)
{
	const uint64_t region = 64 * MiB;
	static uint64_t offs[16384];

	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct bx_alloc *a = mk(region, 64, 64);
		uint64_t s = seed * 0x9e3779b97f4a7c15ull, off;
		long n = 0, m;

		CHECK(a);
		/*
		 * Random sizes (page multiples for odd seeds) until one fails,
		 * then pages; max_small 64 makes them all large blocks.
		 */
		for (;;) {
			uint64_t sz = 65 + rnd_below(&s, 2 * MiB);
			int ret;

			if (seed % 2)
				sz = (sz + PAGE - 1) / PAGE * PAGE;
			ret = bx_alloc_get(a, sz, 1, &offs[n]);
			if (ret == -ENOMEM)
				break;
			CHECK_EQ(ret, 0);
			n++;
		}
		m = fill(a, PAGE, offs + n, 16384 - n);
		CHECK(m >= 0);
		n += m;
		CHECK_EQ(stats(a).bytes_free, 0);
		CHECK_EQ(stats(a).blocks_in_use, n);
		CHECK_EQ(bx_alloc_check(a), 0);

		shuffle(offs, n, &s);
		for (long i = 0; i < n; i++) {
			CHECK_EQ(bx_alloc_put(a, offs[i]), 0);
			if (i % 7 == 0 || i == n - 1)
				CHECK_EQ(bx_alloc_check(a), 0);
		}
		CHECK_EQ(stats(a).largest_free, region);
		CHECK_EQ(bx_alloc_get(a, region, 1, &off), 0);
		CHECK_EQ(off, 0);
		CHECK_EQ(bx_alloc_put(a, off), 0);
		bx_alloc_destroy(a);
	}
}

/* ---- randomized ---------------------------------------------------------- */

UNIT_TEST(no_overlap_shadow_bitmap)
{
	const uint64_t region = 8 * MiB;
	static uint64_t offs[512], lens[512];
	struct bx_alloc *a = mk(region, 64, 32 * KiB);
	uint64_t s = 42;
	struct shadow sh;
	int n = 0, enomem = 0;

	CHECK(a && shadow_init(&sh, region));
	for (int step = 0; step < 40000; step++) {
		bool get = n == 0 || (n < 512 && rnd_below(&s, 100) <
				      ((step / 4000) % 2 ? 40 : 65));

		if (get) {
			uint64_t sz = rnd_size(&s, rnd_below(&s, 8) ?
					       64 * KiB : 2 * MiB);
			uint64_t align = rnd_align(&s), off;
			int ret = bx_alloc_get(a, sz, align, &off);
			int64_t len;

			if (ret == -ENOMEM) {
				enomem++;
				continue;
			}
			CHECK_EQ(ret, 0);
			len = bx_alloc_size(a, off);
			CHECK(len >= (int64_t)sz);
			CHECK_EQ(off % align, 0);
			CHECK_EQ(off % natural_align(len), 0);
			CHECK(shadow_claim(&sh, off, len));
			offs[n] = off;
			lens[n++] = len;
		} else {
			int i = rnd_below(&s, n);

			CHECK(shadow_release(&sh, offs[i], lens[i]));
			CHECK_EQ(bx_alloc_put(a, offs[i]), 0);
			offs[i] = offs[--n];
			lens[i] = lens[n];
		}
		if (step % 1000 == 0)
			CHECK_EQ(bx_alloc_check(a), 0);
	}
	CHECK(enomem > 0);
	while (n--)
		CHECK_EQ(bx_alloc_put(a, offs[n]), 0);
	CHECK_EQ(bx_alloc_check(a), 0);
	CHECK_EQ(stats(a).bytes_free, region);
	free(sh.bits);
	bx_alloc_destroy(a);
}

/* The reference model: live blocks, in no order. */
struct model {
	uint64_t	off[256];
	uint64_t	len[256];
	int		n;
};

static int model_find(const struct model *m, uint64_t off)
{
	for (int i = 0; i < m->n; i++)
		if (m->off[i] == off)
			return i;
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every invariant between a and m; a description of the first broken. */
static const char *model_check(struct bx_alloc *a, const struct model *m,
			       uint64_t region)
{
	static uint64_t sorted[256 * 2];
	struct bx_alloc_stats st = stats(a);
	uint64_t sum = 0;

	for (int i = 0; i < m->n; i++) {
		if (m->off[i] >= region || m->len[i] > region - m->off[i])
			return "out of bounds";
		if (bx_alloc_size(a, m->off[i]) != (int64_t)m->len[i])
			return "size changed";
		/* Pack offset and index: blocks are >= 64 bytes apart. */
		sorted[i] = m->off[i] << 8 | i;
		sum += m->len[i];
	}
	qsort(sorted, m->n, sizeof(sorted[0]), cmp_u64);
	for (int i = 1; i < m->n; i++) {
		int p = sorted[i - 1] & 255;

		if (m->off[p] + m->len[p] > sorted[i] >> 8)
			return "overlap";
	}
	if (st.bytes_in_use != sum || st.blocks_in_use != (uint64_t)m->n)
		return "stats in use";
	if (st.bytes_in_use + st.bytes_free != region)
		return "stats free";
	if (st.largest_free > st.bytes_free || st.largest_free % PAGE)
		return "stats largest";
	if (bx_alloc_check(a))
		return "bx_alloc_check";
	return NULL;
}

static void model_run(int *unit_failed, uint64_t region, uint32_t min_block,
		      uint32_t max_small, uint64_t seed, int steps)
{
	struct bx_alloc *a = mk(region, min_block, max_small);
	struct model *m = calloc(1, sizeof(*m));
	int gets = 0, enomem = 0, bad = 0;
	const char *err;
	uint64_t off;

	CHECK(a && m);
	for (int step = 0; step < steps; step++) {
		uint64_t r = rnd_below(&seed, 100);
		int i;

		if (r < 12) {
			/* Any offset at all: put succeeds iff live start. */
			off = rnd_below(&seed, 3) ? rnd_below(&seed, region) :
			      rnd_below(&seed, region / 64) * 64;
			if (!rnd_below(&seed, 20))
				off = region + rnd_below(&seed, 1ull << 40);
			i = model_find(m, off);
			if (r < 6) {
				CHECK_EQ(bx_alloc_size(a, off),
					 i < 0 ? -EINVAL : (int64_t)m->len[i]);
			} else {
				CHECK_EQ(bx_alloc_put(a, off), i < 0 ? -EINVAL
								      : 0);
				if (i >= 0) {
					m->off[i] = m->off[--m->n];
					m->len[i] = m->len[m->n];
				}
			}
			bad += i < 0;
		} else if (r < 16 && m->n) {
			/* Interior offsets of a live block. */
			i = rnd_below(&seed, m->n);
			off = m->off[i] + 1 + rnd_below(&seed, m->len[i] - 1);
			CHECK_EQ(bx_alloc_put(a, off), -EINVAL);
			CHECK_EQ(bx_alloc_size(a, off), -EINVAL);
		} else if (m->n < 256 && (m->n == 0 || r < ((step / 3000) % 2 ?
							   45 : 65))) {
			uint64_t sz = rnd_size(&seed, rnd_below(&seed, 4) ?
					       2 * (uint64_t)max_small :
					       region);
			uint64_t align = rnd_align(&seed), need, want;
			struct bx_alloc_stats st = stats(a);
			int ret = bx_alloc_get(a, sz, align, &off);

			need = sz > align ? sz : align;
			if (need <= max_small) {
				want = min_block;
				while (want < need)
					want *= 2;
			} else {
				want = (sz + PAGE - 1) / PAGE * PAGE;
			}
			gets++;
			if (ret == -ENOMEM) {
				/* Only if no free page run could serve it. */
				CHECK(st.largest_free <
				      (want > PAGE ? want : PAGE));
				enomem++;
				continue;
			}
			CHECK_EQ(ret, 0);
			CHECK_EQ(off % align, 0);
			CHECK_EQ(bx_alloc_size(a, off), want);
			CHECK(model_find(m, off) < 0);
			m->off[m->n] = off;
			m->len[m->n++] = want;
		} else if (m->n) {
			i = rnd_below(&seed, m->n);
			CHECK_EQ(bx_alloc_put(a, m->off[i]), 0);
			CHECK_EQ(bx_alloc_put(a, m->off[i]), -EINVAL);
			m->off[i] = m->off[--m->n];
			m->len[i] = m->len[m->n];
		}
		err = model_check(a, m, region);
		if (err) {
			printf("# step %d: %s\n", step, err);
			CHECK(!err);
		}
	}
	printf("# model %llu/%u/%u: %d gets, %d -ENOMEM, %d bad offsets\n",
	       (unsigned long long)region, min_block, max_small, gets, enomem,
	       bad);
	CHECK(enomem > 0 && bad > 0);
	while (m->n)
		CHECK_EQ(bx_alloc_put(a, m->off[--m->n]), 0);
	CHECK(!model_check(a, m, region));
	CHECK_EQ(stats(a).bytes_free, region);
	CHECK_EQ(bx_alloc_get(a, region, 1, &off), 0);
	CHECK_EQ(off, 0);
	free(m);
	bx_alloc_destroy(a);
}

UNIT_TEST(model_random)
{
	model_run(unit_failed, 4 * MiB, 64, 16 * KiB, 1, 20000);
	if (*unit_failed)
		return;
	model_run(unit_failed, MiB + 8 * KiB, 128, 64 * KiB, 2, 20000);
	if (*unit_failed)
		return;
	model_run(unit_failed, 8 * MiB, 64, 4096, 3, 20000);
	if (*unit_failed)
		return;
	model_run(unit_failed, 2 * MiB, 64, 256 * KiB, 4, 20000);
}

/* ---- thread caches ------------------------------------------------------- */

UNIT_TEST(cache_reuses_freed_blocks)
{
	struct bx_alloc *a = mk(64 * MiB, 64, 64 * KiB);
	uint64_t x, y, l, m, off;

	CHECK(a);
	/* Small: the block just freed comes back, newest first. */
	CHECK_EQ(bx_alloc_get(a, 100, 1, &x), 0);
	CHECK_EQ(bx_alloc_get(a, 128, 1, &y), 0);
	CHECK_EQ(bx_alloc_put(a, x), 0);
	CHECK_EQ(bx_alloc_put(a, y), 0);
	CHECK_EQ(bx_alloc_get(a, 65, 1, &off), 0);
	CHECK_EQ(off, y);
	CHECK_EQ(bx_alloc_get(a, 128, 64, &off), 0);
	CHECK_EQ(off, x);
	CHECK_EQ(bx_alloc_size(a, x), 128);
	CHECK_EQ(stats(a).blocks_in_use, 2);

	/* Large: only the same page count. */
	CHECK_EQ(bx_alloc_get(a, MiB, PAGE, &l), 0);
	CHECK_EQ(bx_alloc_put(a, l), 0);
	CHECK_EQ(bx_alloc_get(a, 2 * MiB, PAGE, &m), 0);
	CHECK(m != l);
	CHECK_EQ(bx_alloc_get(a, MiB - PAGE + 1, 1, &off), 0);
	CHECK_EQ(off, l);
	CHECK_EQ(bx_alloc_size(a, l), MiB);
	CHECK_EQ(stats(a).blocks_in_use, 4);
	CHECK_EQ(bx_alloc_check(a), 0);

	/* Many of one class: magazines fill up and spill into the slabs. */
	static uint64_t offs[4096];
	for (int i = 0; i < 4096; i++)
		CHECK_EQ(bx_alloc_get(a, 64, 1, &offs[i]), 0);
	for (int i = 0; i < 4096; i++)
		CHECK_EQ(bx_alloc_put(a, offs[i]), 0);
	for (int i = 0; i < 4096; i++)
		CHECK_EQ(bx_alloc_get(a, 64, 1, &offs[i]), 0);
	for (int i = 0; i < 4096; i++)
		CHECK_EQ(bx_alloc_put(a, offs[i]), 0);
	CHECK_EQ(bx_alloc_check(a), 0);
	CHECK_EQ(stats(a).blocks_in_use, 4);
	bx_alloc_destroy(a);
}

UNIT_TEST(cache_rejects_double_and_bad_puts)
{
	struct bx_alloc *a = mk(16 * MiB, 64, 64 * KiB);
	uint64_t x, y, l, k, off;

	CHECK(a);
	CHECK_EQ(bx_alloc_get(a, 128, 1, &x), 0);
	CHECK_EQ(bx_alloc_get(a, 128, 1, &y), 0);
	CHECK_EQ(bx_alloc_get(a, 3 * MiB, 1, &l), 0);
	CHECK_EQ(bx_alloc_get(a, 3 * MiB, 1, &k), 0);
	CHECK_EQ(bx_alloc_put(a, x), 0);
	CHECK_EQ(bx_alloc_put(a, l), 0);

	/* Cached: free to put and size. */
	CHECK_EQ(bx_alloc_put(a, x), -EINVAL);
	CHECK_EQ(bx_alloc_size(a, x), -EINVAL);
	CHECK_EQ(bx_alloc_put(a, l), -EINVAL);
	CHECK_EQ(bx_alloc_size(a, l), -EINVAL);

	/* Interior, misaligned, never allocated, out of range. */
	const uint64_t bad[] = {
		x + 64, x + 1, x + 127, y + 64, y + 1, y + 128 * 7,
		l + 64, l + PAGE, l + 3 * MiB - PAGE, k + 1, k + PAGE,
		k + 3 * MiB, 16 * MiB, UINT64_MAX,
	};
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK_EQ(bx_alloc_put(a, bad[i]), -EINVAL);
		CHECK_EQ(bx_alloc_size(a, bad[i]), -EINVAL);
	}

	/* Nothing changed: y and k live, x and l still in the cache. */
	CHECK_EQ(bx_alloc_size(a, y), 128);
	CHECK_EQ(bx_alloc_size(a, k), 3 * MiB);
	CHECK_EQ(bx_alloc_get(a, 128, 1, &off), 0);
	CHECK_EQ(off, x);
	CHECK_EQ(bx_alloc_get(a, 3 * MiB, 1, &off), 0);
	CHECK_EQ(off, l);
	CHECK_EQ(bx_alloc_check(a), 0);
	CHECK_EQ(stats(a).blocks_in_use, 4);

	/* Double puts once the blocks are out of the cache, too. */
	CHECK_EQ(bx_alloc_put(a, x), 0);
	CHECK_EQ(bx_alloc_put(a, l), 0);
	CHECK_EQ(stats(a).blocks_in_use, 2);
	CHECK_EQ(bx_alloc_put(a, x), -EINVAL);
	CHECK_EQ(bx_alloc_put(a, l), -EINVAL);
	CHECK_EQ(bx_alloc_put(a, y), 0);
	CHECK_EQ(bx_alloc_put(a, k), 0);
	CHECK_EQ(bx_alloc_put(a, y), -EINVAL);
	CHECK_EQ(bx_alloc_put(a, k), -EINVAL);
	CHECK_EQ(bx_alloc_check(a), 0);
	CHECK_EQ(stats(a).bytes_in_use, 0);
	CHECK_EQ(bx_alloc_get(a, 16 * MiB, 1, &off), 0);
	bx_alloc_destroy(a);
}

UNIT_TEST(cache_of_large_blocks_is_bounded)
{
	struct bx_alloc *a = mk(64 * MiB, 64, 64 * KiB);
	uint64_t l[5], big, off;

	CHECK(a);
	/* Five sizes; the cache takes four, the fifth goes back at once. */
	for (int i = 0; i < 5; i++)
		CHECK_EQ(bx_alloc_get(a, MiB + i * PAGE, 1, &l[i]), 0);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(bx_alloc_put(a, l[i]), 0);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(bx_alloc_put(a, l[i]), -EINVAL);
	/* (No check or stats here: they would empty the cache.) */
	/* A size it does not have: its oldest block goes. */
	CHECK_EQ(bx_alloc_get(a, 5 * MiB, 1, &big), 0);
	CHECK_EQ(bx_alloc_get(a, MiB + 3 * PAGE, 1, &off), 0);
	CHECK_EQ(off, l[3]);
	CHECK_EQ(bx_alloc_get(a, MiB + PAGE, 1, &off), 0);
	CHECK_EQ(off, l[1]);
	CHECK_EQ(bx_alloc_put(a, l[1]), 0);
	CHECK_EQ(bx_alloc_put(a, l[3]), 0);
	/* Too big for it (8 MiB in all): straight to the page heap. */
	CHECK_EQ(bx_alloc_put(a, big), 0);
	CHECK_EQ(bx_alloc_get(a, 7 * MiB, 1, &big), 0);
	CHECK_EQ(bx_alloc_put(a, big), 0);
	CHECK_EQ(bx_alloc_put(a, big), -EINVAL);
	CHECK_EQ(bx_alloc_size(a, big), -EINVAL);
	CHECK_EQ(bx_alloc_check(a), 0);
	CHECK_EQ(stats(a).blocks_in_use, 0);
	CHECK_EQ(bx_alloc_get(a, 64 * MiB, 1, &off), 0);
	bx_alloc_destroy(a);
}

/* Threads that free blocks into their caches and wait. */
struct holder {
	pthread_t		thread;
	struct bx_alloc		*a;
	pthread_barrier_t	*freed, *done;
	uint64_t		size, n;
	int			bad;
	bool			use_other;	/* get and put on another allocator */
};

static void *holder(void *arg)
{
	struct holder *h = arg;
	uint64_t offs[64];

	for (uint64_t i = 0; i < h->n; i++)
		h->bad |= bx_alloc_get(h->a, h->size, 1, &offs[i]);
	for (uint64_t i = 0; i < h->n; i++)
		h->bad |= bx_alloc_put(h->a, offs[i]);
	pthread_barrier_wait(h->freed);
	pthread_barrier_wait(h->done);
	if (h->use_other) {
		struct bx_alloc *b = mk(MiB, 64, 64 * KiB);

		h->bad |= !b;
		for (int i = 0; b && i < 3; i++) {
			h->bad |= bx_alloc_get(b, 64 << (i * 5), 1, &offs[i]);
			h->bad |= bx_alloc_put(b, offs[i]);
		}
		h->bad |= stats(b).blocks_in_use != 0 || bx_alloc_check(b);
		bx_alloc_destroy(b);
	}
	return NULL;
}

/* Start n holders of a: each frees blocks of size[i % 3] and waits. */
static bool holders_start(struct holder *h, int n, struct bx_alloc *a,
			  pthread_barrier_t *freed, pthread_barrier_t *done)
{
	static const uint64_t size[] = { 4 * KiB, 64, 256 * KiB };

	pthread_barrier_init(freed, NULL, n + 1);
	pthread_barrier_init(done, NULL, n + 1);
	for (int i = 0; i < n; i++) {
		h[i] = (struct holder){ .a = a, .freed = freed, .done = done,
					.size = size[i % 3], .n = 12 + i % 3 };
		if (pthread_create(&h[i].thread, NULL, holder, &h[i]))
			return false;
	}
	pthread_barrier_wait(freed);
	return true;
}

static int holders_end(struct holder *h, int n, pthread_barrier_t *freed,
		       pthread_barrier_t *done)
{
	int bad = 0;

	pthread_barrier_wait(done);
	for (int i = 0; i < n; i++) {
		pthread_join(h[i].thread, NULL);
		bad |= h[i].bad;
	}
	pthread_barrier_destroy(freed);
	pthread_barrier_destroy(done);
	return bad;
}

UNIT_TEST(cache_of_other_threads_is_drained)
{
	static uint64_t offs[1025];
	pthread_barrier_t freed, done;
	struct bx_alloc_stats st;
	struct holder h[6];
	struct bx_alloc *a;
	uint64_t off = 1;
	int check, big, ends;
	long n;

	/*
	 * 6 threads hold 2 x 12 4 KiB blocks, 2 x 13 64 B and 2 x 14 256 KiB
	 * in their caches, and wait (the holders are let go before any
	 * CHECK). The whole region, page by page, then as one block.
	 */
	a = mk(4 * MiB, 64, 64 * KiB);
	CHECK(a);
	CHECK(holders_start(h, 6, a, &freed, &done));
	n = fill(a, PAGE, offs, 1025);
	st = stats(a);
	check = bx_alloc_check(a);
	for (long i = 0; i < n; i++)
		check |= bx_alloc_put(a, offs[i]);
	big = bx_alloc_get(a, 4 * MiB, 1, &off);
	check |= bx_alloc_put(a, off);
	ends = holders_end(h, 6, &freed, &done);
	CHECK_EQ(n, 1024);
	CHECK_EQ(st.bytes_free, 0);
	CHECK_EQ(check, 0);
	CHECK_EQ(big, 0);
	CHECK_EQ(off, 0);
	CHECK_EQ(ends, 0);
	CHECK_EQ(stats(a).bytes_in_use, 0);
	CHECK_EQ(bx_alloc_check(a), 0);
	bx_alloc_destroy(a);

	/* Again with nothing but the big block asked for. */
	a = mk(4 * MiB, 64, 64 * KiB);
	CHECK(a);
	CHECK(holders_start(h, 6, a, &freed, &done));
	big = bx_alloc_get(a, 4 * MiB, 1, &off);
	check = bx_alloc_put(a, off);
	ends = holders_end(h, 6, &freed, &done);
	CHECK_EQ(big, 0);
	CHECK_EQ(check, 0);
	CHECK_EQ(ends, 0);
	bx_alloc_destroy(a);
}

UNIT_TEST(cache_returned_at_thread_exit)
{
	pthread_barrier_t freed, done;
	struct bx_alloc *a = mk(8 * MiB, 64, 64 * KiB);
	struct holder h[3];
	uint64_t off;

	CHECK(a);
	CHECK(holders_start(h, 3, a, &freed, &done));
	CHECK_EQ(holders_end(h, 3, &freed, &done), 0);
	/*
	 * The caches are gone with their threads (were they not freed then,
	 * LeakSanitizer would find them once destroy unlists them).
	 */
	CHECK_EQ(bx_alloc_check(a), 0);
	CHECK_EQ(stats(a).blocks_in_use, 0);
	CHECK_EQ(bx_alloc_get(a, 8 * MiB, 1, &off), 0);
	bx_alloc_destroy(a);
}

UNIT_TEST(cache_outlives_allocator)
{
	pthread_barrier_t freed, done;
	struct bx_alloc *a = mk(8 * MiB, 64, 64 * KiB);
	struct holder h[4];

	CHECK(a);
	CHECK(holders_start(h, 4, a, &freed, &done));
	/* Destroyed under their caches: they exit, or use another one. */
	bx_alloc_destroy(a);
	h[1].use_other = true;
	h[3].use_other = true;
	CHECK_EQ(holders_end(h, 4, &freed, &done), 0);
	/* And this thread, whose cache was for a too. */
	a = mk(MiB, 64, 64 * KiB);
	CHECK(a);
	for (int i = 0; i < 3; i++) {
		uint64_t off;

		CHECK_EQ(bx_alloc_get(a, 64 << (i * 5), 1, &off), 0);
		CHECK_EQ(bx_alloc_put(a, off), 0);
		CHECK_EQ(bx_alloc_put(a, off), -EINVAL);
	}
	CHECK_EQ(bx_alloc_check(a), 0);
	bx_alloc_destroy(a);
}

/*
 * Random gets and puts of mixed sizes while a checker drains the caches.
 * (No double puts: once put, a block may be drained and handed to another
 * thread at any time. Bad offsets are within blocks still held.)
 */
#define CSTRESS_THREADS	4
#define CSTRESS_OPS	60000

static struct bx_alloc *cs_alloc;
static _Atomic bool cs_stop;

static void *cs_worker(void *arg)
{
	uint64_t s = 0x9e3779b97f4a7c15ull * (uintptr_t)arg, off[32], o;
	static const uint64_t sizes[] = {
		64, 100, 4096, 60000, 64 * KiB + 1, 300 * KiB, MiB,
	};
	long bad = 0;
	int n = 0;

	for (int op = 0; op < CSTRESS_OPS; op++) {
		uint64_t r = rnd_below(&s, 100);

		if (n < 32 && (n == 0 || r < 50)) {
			uint64_t sz = sizes[rnd_below(&s, ARRAY_SIZE(sizes))];
			int ret = bx_alloc_get(cs_alloc, sz, 1, &o);

			if (ret == -ENOMEM)
				continue;
			bad += ret || bx_alloc_size(cs_alloc, o) < (int64_t)sz;
			off[n++] = o;
		} else {
			int i = rnd_below(&s, n);

			o = off[i];
			off[i] = off[--n];
			bad += bx_alloc_put(cs_alloc, o + 1) != -EINVAL;
			if (bx_alloc_size(cs_alloc, o) > (int64_t)PAGE)
				bad += bx_alloc_put(cs_alloc, o + PAGE) !=
				       -EINVAL;
			bad += bx_alloc_put(cs_alloc, o) != 0;
		}
	}
	while (n)
		bad += bx_alloc_put(cs_alloc, off[--n]) != 0;
	return (void *)bad;
}

static void *cs_checker(void *arg)
{
	long bad = 0;

	(void)arg;
	while (!atomic_load(&cs_stop)) {
		struct bx_alloc_stats st;

		bad += bx_alloc_check(cs_alloc) != 0;
		bx_alloc_stats(cs_alloc, &st);
		bad += st.bytes_in_use + st.bytes_free != 16 * MiB;
	}
	return (void *)bad;
}

UNIT_TEST(cache_stress)
{
	pthread_t w[CSTRESS_THREADS], c;
	long bad = 0;
	void *ret;

	cs_alloc = mk(16 * MiB, 64, 64 * KiB);
	CHECK(cs_alloc);
	atomic_store(&cs_stop, false);
	CHECK_EQ(pthread_create(&c, NULL, cs_checker, NULL), 0);
	for (uintptr_t i = 0; i < CSTRESS_THREADS; i++)
		CHECK_EQ(pthread_create(&w[i], NULL, cs_worker,
					(void *)(i + 1)), 0);
	for (int i = 0; i < CSTRESS_THREADS; i++) {
		pthread_join(w[i], &ret);
		bad += (long)ret;
	}
	atomic_store(&cs_stop, true);
	pthread_join(c, &ret);
	bad += (long)ret;
	CHECK_EQ(bad, 0);
	CHECK_EQ(bx_alloc_check(cs_alloc), 0);
	CHECK_EQ(stats(cs_alloc).bytes_in_use, 0);
	bx_alloc_destroy(cs_alloc);
}

/* ---- threads ------------------------------------------------------------- */

#define NTHREADS	8
#define NOPS		100000
#define TLIVE		64
#define TREGION		(16 * MiB)

static struct bx_alloc *t_alloc;
static uint64_t *t_shadow;	/* one word per 64 bytes of the region */

/* Blocks handed from one thread to another. */
static struct {
	pthread_mutex_t	lock;
	uint64_t	off[64], tag[64];
	int		n;
} mailbox = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct worker {
	pthread_t	thread;
	unsigned int	id;
	long		failures, enomem, handed;
};

static void t_fill(uint64_t off, uint64_t len, uint64_t tag)
{
	for (uint64_t g = off / 64; g < (off + len) / 64; g++)
		t_shadow[g] = tag;
}

static bool t_verify(uint64_t off, uint64_t len, uint64_t tag)
{
	for (uint64_t g = off / 64; g < (off + len) / 64; g++)
		if (t_shadow[g] != tag)
			return false;
	return true;
}

/* Verify and free a block; false on any mismatch. */
static bool t_free(uint64_t off, uint64_t tag)
{
	int64_t len = bx_alloc_size(t_alloc, off);

	if (len <= 0 || !t_verify(off, len, tag))
		return false;
	return bx_alloc_put(t_alloc, off) == 0;
}

static void *worker(void *arg)
{
	struct worker *w = arg;
	uint64_t s = 0x2545f4914f6cdd1dull * (w->id + 1), serial = 0;
	uint64_t off[TLIVE], tag[TLIVE];
	int n = 0;

	for (int op = 0; op < NOPS; op++) {
		uint64_t r = rnd_below(&s, 100), o;

		if (r < 3) {
			/* Always invalid: misaligned or out of range. */
			o = rnd_below(&s, TREGION / 64) * 64 + 32;
			if (r == 2)
				o = TREGION + rnd_below(&s, TREGION);
			w->failures += bx_alloc_put(t_alloc, o) != -EINVAL;
			w->failures += bx_alloc_size(t_alloc, o) != -EINVAL;
			/* Anything: must just not crash or race. */
			(void)bx_alloc_size(t_alloc,
					    rnd_below(&s, TREGION / 64) * 64);
		} else if (r < 8) {
			/* Trade a block through the mailbox. */
			pthread_mutex_lock(&mailbox.lock);
			if (n && mailbox.n < 64 && r < 6) {
				mailbox.off[mailbox.n] = off[--n];
				mailbox.tag[mailbox.n++] = tag[n];
				w->handed++;
				o = UINT64_MAX;
			} else if (mailbox.n) {
				mailbox.n--;
				o = mailbox.off[mailbox.n];
				r = mailbox.tag[mailbox.n];
			} else {
				o = UINT64_MAX;
			}
			pthread_mutex_unlock(&mailbox.lock);
			if (o != UINT64_MAX)
				w->failures += !t_free(o, r);
		} else if (n < TLIVE && (n == 0 || r < 55)) {
			uint64_t sz = rnd_below(&s, 10) ?
				      rnd_size(&s, 64 * KiB) :
				      64 * KiB + rnd_below(&s, 448 * KiB);
			uint64_t align = rnd_align(&s);
			int ret = bx_alloc_get(t_alloc, sz, align, &o);
			int64_t len;

			if (ret == -ENOMEM) {
				w->enomem++;
				continue;
			}
			len = bx_alloc_size(t_alloc, o);
			if (ret || o % align || len < (int64_t)sz ||
			    o + len > TREGION) {
				w->failures++;
				continue;
			}
			tag[n] = (uint64_t)w->id << 56 | ++serial;
			off[n] = o;
			t_fill(o, len, tag[n++]);
		} else if (n) {
			int i = rnd_below(&s, n);

			w->failures += !t_free(off[i], tag[i]);
			off[i] = off[--n];
			tag[i] = tag[n];
		}
	}
	while (n--)
		w->failures += !t_free(off[n], tag[n]);
	return NULL;
}

UNIT_TEST(threads)
{
	struct worker w[NTHREADS];
	long failures = 0, enomem = 0, handed = 0;
	uint64_t off;

	t_alloc = mk(TREGION, 64, 64 * KiB);
	t_shadow = calloc(TREGION / 64, sizeof(*t_shadow));
	CHECK(t_alloc && t_shadow);
	for (unsigned int i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ .id = i };
		CHECK_EQ(pthread_create(&w[i].thread, NULL, worker, &w[i]), 0);
	}
	for (unsigned int i = 0; i < NTHREADS; i++) {
		pthread_join(w[i].thread, NULL);
		failures += w[i].failures;
		enomem += w[i].enomem;
		handed += w[i].handed;
	}
	while (mailbox.n) {
		mailbox.n--;
		failures += !t_free(mailbox.off[mailbox.n],
				    mailbox.tag[mailbox.n]);
	}
	printf("# threads: %d x %d ops, %ld handed over, %ld -ENOMEM\n",
	       NTHREADS, NOPS, handed, enomem);
	CHECK_EQ(failures, 0);
	CHECK(handed > 0);
	CHECK_EQ(bx_alloc_check(t_alloc), 0);
	CHECK_EQ(stats(t_alloc).bytes_in_use, 0);
	CHECK_EQ(stats(t_alloc).blocks_in_use, 0);
	CHECK_EQ(bx_alloc_get(t_alloc, TREGION, 1, &off), 0);
	CHECK_EQ(bx_alloc_put(t_alloc, off), 0);
	bx_alloc_destroy(t_alloc);
	free(t_shadow);
}

int main(void)
{
	return unit_run();
}
