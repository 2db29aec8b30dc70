// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for libbx/kv_wire.c, bxkv's wire format and key
 * partitioning, under ASan and UBSan: round trips, every malformed
 * header field refused, keys out of the server's range refused, sizes
 * that do not add up refused (truncated, padded, overflowing counts),
 * the even split and kv_split() against a linear scan, kv_chunk()'s
 * requests within the limits and covering every key once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../../libbx/kv_wire.h"
#include "unit.h"

#define BUF_MAX (1u << 20)

/* 8-byte aligned buffers, as bx's region buffers are. */
static uint64_t msgbuf[BUF_MAX / 8];
static uint64_t keys[65536];
static float vals[65536 * 4];

static struct kv_limits lim(uint8_t op, uint64_t begin, uint64_t end,
			    uint32_t val_len)
{
	struct kv_limits l = { op, begin, end, val_len, UINT32_MAX };

	return l;
}

UNIT_TEST(push_roundtrip_list)
{
	struct kv_limits l = lim(KV_OP_PUSH, 100, 200, 3);
	struct kv_req r;
	uint64_t k[] = { 100, 105, 150, 199 };
	float v[12];
	uint64_t n;

	for (int i = 0; i < 12; i++)
		v[i] = (float)i;
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 4, 3, false, v);
	CHECK_EQ(n, KV_HDR_LEN + 4 * 8 + 12 * 4);
	CHECK_EQ(n, kv_msg_size(KV_OP_PUSH, 4, 3, false));
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
	CHECK_EQ(r.nkeys, 4);
	CHECK_EQ(r.val_len, 3);
	for (uint32_t i = 0; i < 4; i++)
		CHECK_EQ(kv_req_key(&r, i), k[i]);
	CHECK(!memcmp(r.vals, v, sizeof(v)));
	/* Every shorter and one longer length is refused. */
	for (uint64_t len = 0; len < n; len++)
		CHECK_EQ(kv_decode(msgbuf, len, &l, &r), -EBADMSG);
	CHECK_EQ(kv_decode(msgbuf, n + 4, &l, &r), -EBADMSG);
}

UNIT_TEST(pull_roundtrip_range)
{
	struct kv_limits l = lim(KV_OP_PULL, 0, 1000, 2);
	uint64_t k[] = { 10 };
	struct kv_req r;
	uint64_t n;

	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 990, 2, true,
		      NULL);
	CHECK_EQ(n, KV_HDR_LEN + 8);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
	CHECK(r.flags & KV_F_RANGE);
	CHECK_EQ(r.nkeys, 990);
	CHECK_EQ(kv_req_key(&r, 0), 10);
	CHECK_EQ(kv_req_key(&r, 989), 999);
	/* One key past the end of the server's range. */
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 991, 2, true,
		      NULL);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -ERANGE);
	/* An answer larger than the requester can take. */
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 100, 2, true,
		      NULL);
	l.resp_max = 799;
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -EMSGSIZE);
	l.resp_max = 800;
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
}

UNIT_TEST(encode_refuses)
{
	uint64_t k[] = { 1, 2 };
	float v[2] = { 0 };

	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 0, 1,
			   false, v), 0);
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 2, 0,
			   false, v), 0);
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 2, 1,
			   false, NULL), 0);
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 2, 1,
			   false, v), 0);
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), 3, k, 2, 1, false, NULL),
		 0);
	CHECK_EQ(kv_encode(msgbuf, KV_HDR_LEN + 15, KV_OP_PULL, k, 2, 1,
			   false, NULL), 0);
	CHECK_EQ(kv_encode(msgbuf, KV_HDR_LEN + 16, KV_OP_PULL, k, 2, 1,
			   false, NULL), KV_HDR_LEN + 16);
	/* Sizes past 2^64 are refused, below computed exactly. */
	CHECK_EQ(kv_msg_size(KV_OP_PUSH, UINT32_MAX, UINT32_MAX, true), 0);
	CHECK(kv_msg_size(KV_OP_PUSH, UINT32_MAX, 1u << 20, true) ==
	      ((uint64_t)UINT32_MAX << 22) + KV_HDR_LEN + 8);
}

/* Decode a header with one field changed: refused with @err. */
static int bad_field(size_t off, const void *val, size_t len,
		     const struct kv_limits *l, uint64_t n)
{
	static uint64_t copy[64];
	struct kv_req r;

	memcpy(copy, msgbuf, n);
	memcpy((uint8_t *)copy + off, val, len);
	return kv_decode(copy, n, l, &r);
}

UNIT_TEST(decode_refuses_fields)
{
	struct kv_limits l = lim(KV_OP_PUSH, 0, 100, 1);
	uint64_t k[] = { 1, 2, 3 };
	float v[3] = { 1, 2, 3 };
	uint32_t u32;
	uint16_t u16;
	uint8_t u8;
	uint64_t n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, 1,
			       false, v);
	struct kv_req r;

	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
	u32 = 0x12345678;
	CHECK_EQ(bad_field(0, &u32, 4, &l, n), -EBADMSG);	/* magic */
	u8 = 2;
	CHECK_EQ(bad_field(4, &u8, 1, &l, n), -EBADMSG);	/* version */
	u8 = KV_OP_PULL;
	CHECK_EQ(bad_field(5, &u8, 1, &l, n), -EBADMSG);	/* op */
	u8 = 0;
	CHECK_EQ(bad_field(5, &u8, 1, &l, n), -EBADMSG);
	u16 = 2;
	CHECK_EQ(bad_field(6, &u16, 2, &l, n), -EBADMSG);	/* flags */
	u32 = 0;
	CHECK_EQ(bad_field(8, &u32, 4, &l, n), -EBADMSG);	/* nkeys */
	u32 = 4;
	CHECK_EQ(bad_field(8, &u32, 4, &l, n), -EBADMSG);
	u32 = UINT32_MAX;
	CHECK_EQ(bad_field(8, &u32, 4, &l, n), -EBADMSG);
	u32 = 2;
	CHECK_EQ(bad_field(12, &u32, 4, &l, n), -EBADMSG);	/* val_len */
	u32 = 0;
	CHECK_EQ(bad_field(12, &u32, 4, &l, n), -EBADMSG);
	/* Keys not ascending; equal; outside the range. */
	k[1] = 1;
	kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, 1, false, v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -EBADMSG);
	k[1] = 0;
	kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, 1, false, v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -EBADMSG);
	k[0] = 1, k[1] = 2, k[2] = 100;
	kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, 1, false, v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -ERANGE);
	l.begin = 2;
	k[2] = 3;
	kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, 1, false, v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -ERANGE);
	/* A range that wraps around 2^64. */
	l = lim(KV_OP_PULL, 0, UINT64_MAX, 1);
	k[0] = UINT64_MAX - 1;
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 3, 1, true,
		      NULL);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -ERANGE);
	/* A misaligned message. */
	CHECK_EQ(kv_decode((uint8_t *)msgbuf + 4, n, &l, &r), -EBADMSG);
}

UNIT_TEST(bounds_even)
{
	uint64_t b[8];

	CHECK_EQ(kv_bounds_even(10, 0, b), -EINVAL);
	CHECK_EQ(kv_bounds_even(2, 3, b), -EINVAL);
	CHECK_EQ(kv_bounds_even(10, 3, b), 0);
	CHECK_EQ(b[0], 0);
	CHECK_EQ(b[1], 4);
	CHECK_EQ(b[2], 7);
	CHECK_EQ(b[3], 10);
	CHECK_EQ(kv_bounds_check(b, 3), 0);
	CHECK_EQ(kv_bounds_even(UINT64_MAX, 7, b), 0);
	CHECK_EQ(b[7], UINT64_MAX);
	CHECK_EQ(kv_bounds_check(b, 7), 0);
	b[2] = b[1];
	CHECK_EQ(kv_bounds_check(b, 7), -EINVAL);
}

UNIT_TEST(split_against_scan)
{
	uint64_t seed = 42, b[6] = { 5, 100, 101, 5000, 70000, 1u << 20 };
	size_t first[6];

	for (int round = 0; round < 200; round++) {
		size_t n = 0;
		uint64_t k = 5 + unit_rnd(&seed) % 50;

		while (k < b[5] && n < 10000) {
			keys[n++] = k;
			k += 1 + unit_rnd(&seed) % (1 + unit_rnd(&seed) % 400);
		}
		CHECK_EQ(kv_split(b, 5, keys, n, first), 0);
		CHECK_EQ(first[0], 0);
		CHECK_EQ(first[5], n);
		for (unsigned int s = 0; s < 5; s++)
			for (size_t i = first[s]; i < first[s + 1]; i++)
				CHECK(keys[i] >= b[s] && keys[i] < b[s + 1]);
	}
	keys[0] = 4;
	CHECK_EQ(kv_split(b, 5, keys, 1, first), -ERANGE);
	keys[0] = 1u << 20;
	CHECK_EQ(kv_split(b, 5, keys, 1, first), -ERANGE);
	keys[0] = 7, keys[1] = 7;
	CHECK_EQ(kv_split(b, 5, keys, 2, first), -EINVAL);
	keys[0] = 8, keys[1] = 7;
	CHECK_EQ(kv_split(b, 5, keys, 2, first), -EINVAL);
	CHECK_EQ(kv_split(b, 5, keys, 0, first), 0);
	CHECK_EQ(first[5], 0);
}

/* Cut @n keys as the worker does; each request within the limits. */
static int cut_all(size_t n, uint8_t op, uint32_t vl, uint32_t msg_max,
		   size_t *nreq, size_t *nrange)
{
	struct kv_limits l = lim(op, 0, UINT64_MAX, vl);
	size_t p = 0;

	*nreq = *nrange = 0;
	l.resp_max = msg_max;
	while (p < n) {
		struct kv_req r;
		bool range;
		uint32_t m = kv_chunk(keys + p, n - p, op, vl, msg_max, &range);
		uint64_t size;

		if (!m || m > n - p)
			return -1;
		size = kv_encode(msgbuf, sizeof(msgbuf), op, keys + p, m, vl,
				 range, op == KV_OP_PUSH ? vals : NULL);
		if (!size || size > (op == KV_OP_PUSH ? msg_max : KV_REQ_MAX))
			return -2;
		if (kv_decode(msgbuf, size, &l, &r))
			return -3;
		for (uint32_t i = 0; i < m; i++)
			if (kv_req_key(&r, i) != keys[p + i])
				return -4;
		if ((uint64_t)m * vl * 4 > msg_max)
			return -5;
		(*nreq)++;
		*nrange += range;
		p += m;
	}
	return 0;
}

UNIT_TEST(chunks)
{
	uint64_t seed = 7;
	size_t nreq, nrange;

	/* One dense run: a few range requests. */
	for (size_t i = 0; i < 65536; i++)
		keys[i] = 1000 + i;
	CHECK_EQ(cut_all(65536, KV_OP_PULL, 4, 1u << 20, &nreq, &nrange), 0);
	CHECK_EQ(nreq, 1);
	CHECK_EQ(nrange, 1);
	CHECK_EQ(cut_all(65536, KV_OP_PULL, 4, 65536, &nreq, &nrange), 0);
	CHECK_EQ(nreq, 16);
	CHECK_EQ(nrange, 16);
	CHECK_EQ(cut_all(65536, KV_OP_PUSH, 4, 65536, &nreq, &nrange), 0);
	CHECK_EQ(nrange, nreq);
	/* Sparse keys: lists, a pull request at most 4 KiB. */
	for (size_t i = 0; i < 65536; i++)
		keys[i] = 2 * i;
	CHECK_EQ(cut_all(65536, KV_OP_PULL, 1, 1u << 20, &nreq, &nrange), 0);
	CHECK_EQ(nrange, 0);
	CHECK_EQ(nreq, (65536 + 509) / 510);
	CHECK_EQ(cut_all(65536, KV_OP_PUSH, 1, 1u << 20, &nreq, &nrange), 0);
	CHECK_EQ(nreq, 1);
	/* Mixed runs and gaps, random sizes. */
	for (int round = 0; round < 50; round++) {
		uint64_t k = unit_rnd(&seed) % 1000;
		size_t n = 1 + unit_rnd(&seed) % 65536;
		uint32_t vl = 1 + unit_rnd(&seed) % 4;
		uint32_t mm = 256 + unit_rnd(&seed) % (1u << 18);

		for (size_t i = 0; i < n; i++) {
			keys[i] = k;
			k += unit_rnd(&seed) % 4 ? 1 : 2 + unit_rnd(&seed) % 100;
		}
		CHECK_EQ(cut_all(n, KV_OP_PUSH, vl, mm, &nreq, &nrange), 0);
		CHECK_EQ(cut_all(n, KV_OP_PULL, vl, mm, &nreq, &nrange), 0);
	}
	/* A value larger than a message: nothing fits. */
	{
		bool range;

		CHECK_EQ(kv_chunk(keys, 1, KV_OP_PUSH, 64, 256, &range), 0);
		CHECK_EQ(kv_chunk(keys, 1, KV_OP_PULL, 65, 256, &range), 0);
	}
}

int main(void)
{
	return unit_run();
}
