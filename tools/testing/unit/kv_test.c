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
	struct kv_limits l = { op, begin, end, val_len, UINT32_MAX, NULL };

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
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 4, NULL, 3,
		      false, v);
	CHECK_EQ(n, KV_HDR_LEN + 4 * 8 + 12 * 4);
	CHECK_EQ(n, kv_msg_size(KV_OP_PUSH, 4, 12, false, false));
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

	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 990, NULL, 2,
		      true, NULL);
	CHECK_EQ(n, KV_HDR_LEN + 8);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
	CHECK(r.flags & KV_F_RANGE);
	CHECK_EQ(r.nkeys, 990);
	CHECK_EQ(kv_req_key(&r, 0), 10);
	CHECK_EQ(kv_req_key(&r, 989), 999);
	/* One key past the end of the server's range. */
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 991, NULL, 2,
		      true, NULL);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -ERANGE);
	/* An answer larger than the requester can take. */
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 100, NULL, 2,
		      true, NULL);
	l.resp_max = 799;
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -EMSGSIZE);
	l.resp_max = 800;
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
}

UNIT_TEST(encode_refuses)
{
	uint64_t k[] = { 1, 2 };
	float v[2] = { 0 };

	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 0, NULL, 1,
			   false, v), 0);
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 2, NULL, 0,
			   false, v), 0);
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 2, NULL, 1,
			   false, NULL), 0);
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 2, NULL, 1,
			   false, v), 0);
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), 3, k, 2, NULL, 1, false,
			   NULL), 0);
	CHECK_EQ(kv_encode(msgbuf, KV_HDR_LEN + 15, KV_OP_PULL, k, 2, NULL, 1,
			   false, NULL), 0);
	CHECK_EQ(kv_encode(msgbuf, KV_HDR_LEN + 16, KV_OP_PULL, k, 2, NULL, 1,
			   false, NULL), KV_HDR_LEN + 16);
	/* Sizes past 2^64 are refused, below computed exactly. */
	CHECK_EQ(kv_msg_size(KV_OP_PUSH, UINT32_MAX, UINT64_MAX / 4, true,
			     false), 0);
	CHECK(kv_msg_size(KV_OP_PUSH, UINT32_MAX, (uint64_t)UINT32_MAX << 20,
			  true, false) ==
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
	uint64_t n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3,
			       NULL, 1, false, v);
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
	u16 = 4;
	CHECK_EQ(bad_field(6, &u16, 2, &l, n), -EBADMSG);	/* flags */
	u16 = KV_F_LENS;	/* with a val_len: refused */
	CHECK_EQ(bad_field(6, &u16, 2, &l, n), -EBADMSG);
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
	kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, NULL, 1, false,
		  v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -EBADMSG);
	k[1] = 0;
	kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, NULL, 1, false,
		  v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -EBADMSG);
	k[0] = 1, k[1] = 2, k[2] = 100;
	kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, NULL, 1, false,
		  v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -ERANGE);
	l.begin = 2;
	k[2] = 3;
	kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, NULL, 1, false,
		  v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -ERANGE);
	/* A range that wraps around 2^64. */
	l = lim(KV_OP_PULL, 0, UINT64_MAX, 1);
	k[0] = UINT64_MAX - 1;
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 3, NULL, 1, true,
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

/*
 * Cut @n keys (with lengths @ln, or @vl floats each) as the worker does;
 * each request within the limits, decoded by a server whose table @off
 * (or @vl) says the same lengths.
 */
static int cut_all(size_t n, const uint32_t *ln, const uint64_t *off,
		   uint8_t op, uint32_t vl, uint32_t msg_max, size_t *nreq,
		   size_t *nrange)
{
	struct kv_limits l = lim(op, 0, UINT64_MAX, off ? 0 : vl);
	size_t p = 0;

	*nreq = *nrange = 0;
	l.resp_max = msg_max;
	l.off = off;
	if (off)
		l.end = n ? keys[n - 1] + 1 : 1;
	while (p < n) {
		struct kv_req r;
		bool range;
		uint64_t nvals, size;
		uint32_t m = kv_chunk(keys + p, ln ? ln + p : NULL, n - p, op,
				      ln ? 0 : vl, msg_max, &range, &nvals);

		if (!m || m > n - p)
			return -1;
		size = kv_encode(msgbuf, sizeof(msgbuf), op, keys + p, m,
				 ln ? ln + p : NULL, ln ? 0 : vl, range,
				 op == KV_OP_PUSH ? vals : NULL);
		if (!size || size > (op == KV_OP_PUSH ? msg_max : KV_REQ_MAX))
			return -2;
		if (kv_decode(msgbuf, size, &l, &r))
			return -3;
		if (r.nvals != nvals || 4 * nvals > msg_max)
			return -5;
		for (uint32_t i = 0; i < m; i++)
			if (kv_req_key(&r, i) != keys[p + i] ||
			    kv_req_len(&r, i) != (ln ? ln[p + i] : vl))
				return -4;
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
	CHECK_EQ(cut_all(65536, NULL, NULL, KV_OP_PULL, 4, 1u << 20, &nreq, &nrange), 0);
	CHECK_EQ(nreq, 1);
	CHECK_EQ(nrange, 1);
	CHECK_EQ(cut_all(65536, NULL, NULL, KV_OP_PULL, 4, 65536, &nreq, &nrange), 0);
	CHECK_EQ(nreq, 16);
	CHECK_EQ(nrange, 16);
	CHECK_EQ(cut_all(65536, NULL, NULL, KV_OP_PUSH, 4, 65536, &nreq, &nrange), 0);
	CHECK_EQ(nrange, nreq);
	/* Sparse keys: lists, a pull request at most 4 KiB. */
	for (size_t i = 0; i < 65536; i++)
		keys[i] = 2 * i;
	CHECK_EQ(cut_all(65536, NULL, NULL, KV_OP_PULL, 1, 1u << 20, &nreq, &nrange), 0);
	CHECK_EQ(nrange, 0);
	CHECK_EQ(nreq, (65536 + 509) / 510);
	CHECK_EQ(cut_all(65536, NULL, NULL, KV_OP_PUSH, 1, 1u << 20, &nreq, &nrange), 0);
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
		CHECK_EQ(cut_all(n, NULL, NULL, KV_OP_PUSH, vl, mm, &nreq, &nrange), 0);
		CHECK_EQ(cut_all(n, NULL, NULL, KV_OP_PULL, vl, mm, &nreq, &nrange), 0);
	}
	/* A value larger than a message: nothing fits. */
	{
		bool range;

		uint64_t nv;

		CHECK_EQ(kv_chunk(keys, NULL, 1, KV_OP_PUSH, 64, 256, &range,
				  &nv), 0);
		CHECK_EQ(kv_chunk(keys, NULL, 1, KV_OP_PULL, 65, 256, &range,
				  &nv), 0);
	}
}

/* Per-key lengths: a server storing 1, 2, 3, ... floats for keys 10... */
static uint64_t tbl[65];

static struct kv_limits lim_lens(uint8_t op)
{
	struct kv_limits l = lim(op, 10, 74, 0);

	tbl[0] = 0;
	for (int i = 0; i < 64; i++)
		tbl[i + 1] = tbl[i] + 1 + i % 5;
	l.off = tbl;
	return l;
}

UNIT_TEST(lens_roundtrip)
{
	struct kv_limits l = lim_lens(KV_OP_PUSH);
	uint64_t k[] = { 10, 12, 13, 40 };
	uint32_t ln[] = { 1, 3, 4, 1 };
	struct kv_req r;
	float v[9];
	uint64_t n;

	for (int i = 0; i < 9; i++)
		v[i] = (float)i;
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 4, ln, 0,
		      false, v);
	CHECK_EQ(n, KV_HDR_LEN + 4 * 8 + 16 + 9 * 4);
	CHECK_EQ(n, kv_msg_size(KV_OP_PUSH, 4, 9, false, true));
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
	CHECK(r.flags & KV_F_LENS);
	CHECK_EQ(r.val_len, 0);
	CHECK_EQ(r.nvals, 9);
	for (uint32_t i = 0; i < 4; i++) {
		CHECK_EQ(kv_req_key(&r, i), k[i]);
		CHECK_EQ(kv_req_len(&r, i), ln[i]);
	}
	CHECK(!memcmp(r.vals, v, sizeof(v)));
	for (uint64_t len = 0; len < n; len++)
		CHECK_EQ(kv_decode(msgbuf, len, &l, &r), -EBADMSG);
	CHECK_EQ(kv_decode(msgbuf, n + 4, &l, &r), -EBADMSG);
	/* An odd count: the table is padded to 8 bytes. */
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, ln, 0,
		      false, v);
	CHECK_EQ(n, KV_HDR_LEN + 3 * 8 + 16 + 8 * 4);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
	/* A range with lengths, pulled: keys 11..14 have 2, 3, 4, 5. */
	l = lim_lens(KV_OP_PULL);
	l.resp_max = 14 * 4;
	k[0] = 11;
	ln[0] = 2, ln[1] = 3, ln[2] = 4;
	{
		uint32_t ln4[] = { 2, 3, 4, 5 };

		n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 4, ln4,
			      0, true, NULL);
	}
	CHECK_EQ(n, KV_HDR_LEN + 8 + 16);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
	CHECK_EQ(r.nvals, 14);
	CHECK_EQ(kv_req_len(&r, 3), 5);
	l.resp_max = 14 * 4 - 1;
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -EMSGSIZE);
	/* Without lengths, to a table whose keys have val_len each. */
	l.resp_max = UINT32_MAX;
	k[0] = 15;	/* key 15 has 1 float, key 16 2 */
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 1, NULL, 1,
		      false, NULL);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);	/* key 15: 1 */
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PULL, k, 2, NULL, 1,
		      true, NULL);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -EBADMSG); /* key 16: 2 */
}

UNIT_TEST(lens_refused)
{
	struct kv_limits l = lim_lens(KV_OP_PUSH);
	struct kv_limits u = lim(KV_OP_PUSH, 0, 100, 2);
	uint64_t k[] = { 10, 11, 12 };
	uint32_t ln[] = { 1, 2, 3 }, u32;
	float v[6] = { 0 };
	uint64_t n;
	struct kv_req r;

	/* Encode refuses a zero length, and lengths with a val_len. */
	ln[1] = 0;
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, ln, 0,
			   false, v), 0);
	ln[1] = 2;
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, ln, 1,
			   false, v), 0);
	CHECK_EQ(kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, NULL, 0,
			   false, v), 0);
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, ln, 0, false,
		      v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), 0);
	/* Lengths not the server's, the same in all: refused. */
	ln[0] = 2, ln[1] = 1;
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, ln, 0, false,
		      v);
	CHECK_EQ(kv_decode(msgbuf, n, &l, &r), -EBADMSG);
	ln[0] = 1, ln[1] = 2;
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, ln, 0, false,
		      v);
	/* A zero length; a length that makes the sizes not add up. */
	u32 = 0;
	CHECK_EQ(bad_field(KV_HDR_LEN + 24, &u32, 4, &l, n), -EBADMSG);
	u32 = UINT32_MAX;
	CHECK_EQ(bad_field(KV_HDR_LEN + 24, &u32, 4, &l, n), -EBADMSG);
	/* Padding not zero. */
	u32 = 1;
	CHECK_EQ(bad_field(KV_HDR_LEN + 24 + 12, &u32, 4, &l, n), -EBADMSG);
	/* A val_len beside the table. */
	u32 = 1;
	CHECK_EQ(bad_field(12, &u32, 4, &l, n), -EBADMSG);
	/* Lengths to a server of val_len 2 each: only if all are 2. */
	CHECK_EQ(kv_decode(msgbuf, n, &u, &r), -EBADMSG);
	ln[0] = 2, ln[2] = 2;
	n = kv_encode(msgbuf, sizeof(msgbuf), KV_OP_PUSH, k, 3, ln, 0, false,
		      v);
	CHECK_EQ(kv_decode(msgbuf, n, &u, &r), 0);
	CHECK_EQ(r.nvals, 6);
	/* A table of 2^32 - 1 keys whose lengths sum past 2^64 / 4. */
	memset(msgbuf, 0, 64);
	((uint32_t *)msgbuf)[0] = KV_MAGIC;	/* host: little-endian */
	((uint8_t *)msgbuf)[4] = KV_VERSION;
	((uint8_t *)msgbuf)[5] = KV_OP_PUSH;
	((uint16_t *)msgbuf)[3] = KV_F_LENS | KV_F_RANGE;
	((uint32_t *)msgbuf)[2] = UINT32_MAX;
	CHECK_EQ(kv_decode(msgbuf, 64, &l, &r), -EBADMSG);
}

UNIT_TEST(chunks_lens)
{
	static uint32_t ln[65536];
	static uint64_t off[65537];
	uint64_t seed = 11;
	size_t nreq, nrange;

	for (int round = 0; round < 60; round++) {
		size_t n = 1 + unit_rnd(&seed) % 20000;
		uint32_t mm = 512 + unit_rnd(&seed) % (1u << 18);
		uint32_t lmax = 1 + unit_rnd(&seed) % (round % 3 ? 16 : 100);

		/* Keys from 0, some gaps; the server's table covers them. */
		off[0] = 0;
		for (size_t i = 0, j = 0; i < n; j++) {
			uint64_t len = 1 + unit_rnd(&seed) % lmax;

			off[j + 1] = off[j] + len;
			if (unit_rnd(&seed) % 4) {
				keys[i] = j;
				ln[i++] = (uint32_t)len;
			}
		}
		CHECK_EQ(cut_all(n, ln, off, KV_OP_PUSH, 0, mm, &nreq,
				 &nrange), 0);
		CHECK_EQ(cut_all(n, ln, off, KV_OP_PULL, 0, mm, &nreq,
				 &nrange), 0);
	}
	/* One dense run of 3 floats each: ranges, as without lengths. */
	for (size_t i = 0; i < 4096; i++) {
		keys[i] = i;
		ln[i] = 3;
		off[i + 1] = 3 * (i + 1);
	}
	off[0] = 0;
	CHECK_EQ(cut_all(4096, ln, off, KV_OP_PUSH, 0, 1u << 20, &nreq,
			 &nrange), 0);
	CHECK_EQ(nreq, 1);
	CHECK_EQ(nrange, 1);
	/* A pull's table of lengths is bounded by the 4 KiB request. */
	CHECK_EQ(cut_all(4096, ln, off, KV_OP_PULL, 0, 1u << 20, &nreq,
			 &nrange), 0);
	CHECK_EQ(nrange, nreq);
	CHECK_EQ(nreq, (4096 + 1017) / 1018);
	/* A key too long for a message: nothing fits. */
	{
		bool range;
		uint64_t nv;

		ln[0] = 60;
		CHECK_EQ(kv_chunk(keys, ln, 1, KV_OP_PUSH, 0, 256, &range,
				  &nv), 0);
		ln[0] = 65;
		CHECK_EQ(kv_chunk(keys, ln, 1, KV_OP_PULL, 0, 256, &range,
				  &nv), 0);
		ln[0] = 64;
		CHECK_EQ(kv_chunk(keys, ln, 1, KV_OP_PULL, 0, 256, &range,
				  &nv), 1);
		CHECK_EQ(nv, 64);
	}
}

int main(void)
{
	return unit_run();
}
