// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kmod/span.c, an operation's buffer in pieces of the
 * region (BX_SQE_F_VEC), under ASan and UBSan: every refusal of
 * bx_span_set(), and gather, scatter, runs and segment counts against a
 * flat reference copy for random piece lists.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../../kmod/span.h"
#include "unit.h"

#define REGION	(1u << 16)

UNIT_TEST(set_refuses)
{
	struct bx_vec v[BX_VEC_MAX + 1] = {};
	struct bx_spans sp;
	unsigned int i;

	for (i = 0; i <= BX_VEC_MAX; i++)
		v[i] = (struct bx_vec){ .off = i * 100, .len = 10 };
	CHECK_EQ(bx_span_set(&sp, v, 0, REGION), -EINVAL);
	CHECK_EQ(bx_span_set(&sp, v, BX_VEC_MAX + 1, REGION), -EINVAL);
	CHECK_EQ(bx_span_set(&sp, v, BX_VEC_MAX, REGION), 0);
	CHECK_EQ(sp.n, BX_VEC_MAX);
	CHECK_EQ(sp.total, 10 * BX_VEC_MAX);
	v[1].resv = 1;
	CHECK_EQ(bx_span_set(&sp, v, 2, REGION), -EINVAL);
	v[1].resv = 0;
	v[1].len = 0;
	CHECK_EQ(bx_span_set(&sp, v, 2, REGION), -EINVAL);
	/* The last byte of the region, and one past it. */
	v[1] = (struct bx_vec){ .off = REGION - 1, .len = 1 };
	CHECK_EQ(bx_span_set(&sp, v, 2, REGION), 0);
	v[1].len = 2;
	CHECK_EQ(bx_span_set(&sp, v, 2, REGION), -EINVAL);
	/* An offset that would wrap around with its length. */
	v[1] = (struct bx_vec){ .off = UINT64_MAX - 4, .len = 10 };
	CHECK_EQ(bx_span_set(&sp, v, 2, REGION), -EINVAL);
	v[1] = (struct bx_vec){ .off = REGION + 1, .len = 1 };
	CHECK_EQ(bx_span_set(&sp, v, 2, REGION), -EINVAL);
	/* Pieces of a large region that add up past BX_MSG_MAX. */
	for (i = 0; i < 2; i++)
		v[i] = (struct bx_vec){ .off = 0, .len = BX_MSG_MAX / 2 + 1 };
	CHECK_EQ(bx_span_set(&sp, v, 2, 1ull << 32), -EMSGSIZE);
	v[1].len = BX_MSG_MAX / 2 - 1;
	CHECK_EQ(bx_span_set(&sp, v, 2, 1ull << 32), 0);
	CHECK_EQ(sp.total, BX_MSG_MAX);
}

UNIT_TEST(flat)
{
	struct bx_spans sp;
	u64 off = 0;

	bx_span_flat(&sp, 4096, 100);
	CHECK_EQ(sp.n, 1);
	CHECK_EQ(bx_span_run(&sp, 0, 1000, &off), 100);
	CHECK_EQ(off, 4096);
	CHECK_EQ(bx_span_run(&sp, 99, 1000, &off), 1);
	CHECK_EQ(off, 4195);
	CHECK_EQ(bx_span_run(&sp, 100, 1000, &off), 0);
	bx_span_flat(&sp, 4096, 0);
	CHECK_EQ(sp.n, 0);
	CHECK_EQ(bx_span_run(&sp, 0, 1000, &off), 0);
	CHECK_EQ(bx_span_segs(&sp, 1 << 20), 0);
}

UNIT_TEST(segs)
{
	struct bx_vec v[3] = {
		{ .off = 0, .len = 1 << 20 },		/* one segment */
		{ .off = 0, .len = (1 << 20) + 1 },	/* two */
		{ .off = 0, .len = 3 },			/* one */
	};
	struct bx_spans sp;

	CHECK_EQ(bx_span_set(&sp, v, 3, 1ull << 32), 0);
	CHECK_EQ(bx_span_segs(&sp, 1 << 20), 4);
	CHECK_EQ(bx_span_segs(&sp, 1), sp.total);
}

/*
 * Random pieces of a pattern-filled region (in disjoint slots, in random
 * order) against a flat reference: gather, runs, scatter.
 */
UNIT_TEST(random_gather_scatter)
{
	static u8 region[REGION], ref[REGION], out[REGION];
	const u32 slot = REGION / BX_VEC_MAX;
	uint64_t s = 0x5eed;
	int round;

	for (round = 0; round < 2000; round++) {
		unsigned int n = 1 + unit_rnd(&s) % BX_VEC_MAX, i, order[BX_VEC_MAX];
		struct bx_vec v[BX_VEC_MAX];
		struct bx_spans sp;
		u32 at, len, done, k;
		u64 off;

		for (i = 0; i < BX_VEC_MAX; i++)
			order[i] = i;
		for (i = BX_VEC_MAX - 1; i > 0; i--) {
			unsigned int j = unit_rnd(&s) % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < n; i++) {
			u32 l = 1 + unit_rnd(&s) % (slot - 1);

			v[i] = (struct bx_vec){ .len = l,
				.off = order[i] * slot + unit_rnd(&s) % (slot - l) };
		}
		CHECK_EQ(bx_span_set(&sp, v, n, REGION), 0);
		for (k = 0; k < REGION; k++)
			region[k] = (u8)unit_rnd(&s);
		/* The reference: the pieces back to back. */
		for (i = 0, done = 0; i < n; done += v[i].len, i++)
			memcpy(ref + done, region + v[i].off, v[i].len);
		CHECK_EQ(done, sp.total);
		len = unit_rnd(&s) % (sp.total + 1);
		bx_span_gather(&sp, region, out, len);
		CHECK(!memcmp(out, ref, len));
		/* A run lies inside one piece and holds the right bytes. */
		at = unit_rnd(&s) % sp.total;
		k = bx_span_run(&sp, at, 1 + unit_rnd(&s) % 5000, &off);
		CHECK(k >= 1);
		CHECK(!memcmp(region + off, ref + at, k));
		/* Scatter new bytes: each piece gets its part, nothing else
		 * of the region changes. */
		memcpy(ref, region, REGION);
		for (k = 0; k < len; k++)
			out[k] = (u8)unit_rnd(&s);
		bx_span_scatter(&sp, region, out, len);
		for (i = 0, done = 0; i < n; done += v[i].len, i++) {
			u32 m = done >= len ? 0 :
				len - done < v[i].len ? len - done : v[i].len;

			memcpy(ref + v[i].off, out + done, m);
		}
		CHECK(!memcmp(region, ref, REGION));
	}
}

int main(void)
{
	return unit_run();
}
