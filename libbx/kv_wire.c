// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * bxkv's wire format and key partitioning (kv_wire.h). Pure C: no libbx
 * call, no allocation; host-tested by tools/testing/unit/kv_test.c and
 * fuzz_kv.c.
 */
#define _DEFAULT_SOURCE
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "kv_wire.h"

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

uint64_t kv_req_key(const struct kv_req *r, uint32_t i)
{
	return r->flags & KV_F_RANGE ? r->first + i : get64(r->keys + 8ull * i);
}

uint64_t kv_msg_size(uint8_t op, uint32_t nkeys, uint32_t val_len,
		     bool range)
{
	uint64_t keys = range ? 8 : 8ull * nkeys, vals = 0, size;

	if (op == KV_OP_PUSH &&
	    __builtin_mul_overflow((uint64_t)nkeys * 4, val_len, &vals))
		return 0;
	if (__builtin_add_overflow(KV_HDR_LEN + keys, vals, &size))
		return 0;
	return size;
}

uint64_t kv_encode(void *buf, uint64_t cap, uint8_t op,
		   const uint64_t *keys, uint32_t nkeys, uint32_t val_len,
		   bool range, const float *vals)
{
	uint64_t size = kv_msg_size(op, nkeys, val_len, range);
	uint8_t *p = buf;
	uint32_t k = range ? 1 : nkeys;

	if (!size || size > cap || !nkeys || !val_len ||
	    (op != KV_OP_PUSH && op != KV_OP_PULL) ||
	    (op == KV_OP_PUSH) != (vals != NULL))
		return 0;
	put32(p, KV_MAGIC);
	p[4] = KV_VERSION;
	p[5] = op;
	put16(p + 6, range ? KV_F_RANGE : 0);
	put32(p + 8, nkeys);
	put32(p + 12, val_len);
	p += KV_HDR_LEN;
	for (uint32_t i = 0; i < k; i++, p += 8)
		put64(p, keys[i]);
	if (vals)
		memcpy(p, vals, size - KV_HDR_LEN - 8ull * k);
	return size;
}

int kv_decode(const void *buf, uint64_t len, const struct kv_limits *lim,
	      struct kv_req *r)
{
	const uint8_t *p = buf;
	uint64_t keys_len, vals_len, want, prev = 0;
	uint32_t k;

	if (len < KV_HDR_LEN || ((uintptr_t)buf & 7))
		return -EBADMSG;
	memset(r, 0, sizeof(*r));
	r->op = p[5];
	r->flags = get16(p + 6);
	r->nkeys = get32(p + 8);
	r->val_len = get32(p + 12);
	if (get32(p) != KV_MAGIC || p[4] != KV_VERSION ||
	    r->op != lim->op || (r->flags & ~KV_F_RANGE) || !r->nkeys ||
	    !r->val_len || r->val_len != lim->val_len)
		return -EBADMSG;
	k = r->flags & KV_F_RANGE ? 1 : r->nkeys;
	keys_len = 8ull * k;
	/* nkeys < 2^32, val_len < 2^32: the product fits in 64 bits. */
	vals_len = (uint64_t)r->nkeys * r->val_len;
	if (vals_len > UINT64_MAX / 4)
		return -EBADMSG;
	vals_len *= 4;
	want = KV_HDR_LEN + keys_len;
	if (r->op == KV_OP_PUSH) {
		if (__builtin_add_overflow(want, vals_len, &want))
			return -EBADMSG;
	} else if (vals_len > lim->resp_max) {
		return -EMSGSIZE;
	}
	if (len != want)
		return -EBADMSG;
	r->keys = p + KV_HDR_LEN;
	r->first = get64(r->keys);
	if (r->op == KV_OP_PUSH)
		r->vals = (const float *)(const void *)(r->keys + keys_len);
	if (r->flags & KV_F_RANGE) {
		if (r->first < lim->begin || r->first >= lim->end ||
		    r->nkeys > lim->end - r->first)
			return -ERANGE;
		return 0;
	}
	for (uint32_t i = 0; i < k; i++) {
		uint64_t key = get64(r->keys + 8ull * i);

		if (i && key <= prev)
			return -EBADMSG;
		if (key < lim->begin || key >= lim->end)
			return -ERANGE;
		prev = key;
	}
	return 0;
}

int kv_bounds_even(uint64_t key_max, unsigned int n, uint64_t *bounds)
{
	uint64_t q, rem;

	if (!n || key_max < n)
		return -EINVAL;
	q = key_max / n;
	rem = key_max % n;
	/* The first rem servers get one key more. */
	for (unsigned int s = 0; s <= n; s++)
		bounds[s] = q * s + (s < rem ? s : rem);
	return 0;
}

int kv_bounds_check(const uint64_t *bounds, unsigned int n)
{
	if (!n)
		return -EINVAL;
	for (unsigned int s = 0; s < n; s++)
		if (bounds[s] >= bounds[s + 1])
			return -EINVAL;
	return 0;
}

/* First index in keys[lo, hi) whose key is >= @key. */
static size_t lower_bound(const uint64_t *keys, size_t lo, size_t hi,
			  uint64_t key)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int kv_split(const uint64_t *bounds, unsigned int n, const uint64_t *keys,
	     size_t nkeys, size_t *first)
{
	for (size_t i = 1; i < nkeys; i++)
		if (keys[i] <= keys[i - 1])
			return -EINVAL;
	if (nkeys && (keys[0] < bounds[0] || keys[nkeys - 1] >= bounds[n]))
		return -ERANGE;
	first[0] = 0;
	for (unsigned int s = 1; s < n; s++)
		first[s] = lower_bound(keys, first[s - 1], nkeys, bounds[s]);
	first[n] = nkeys;
	return 0;
}

/* Length of the run of consecutive keys at @keys, at most @max. */
static size_t run_len(const uint64_t *keys, size_t n, size_t max)
{
	size_t r = 1;

	while (r < n && r < max && keys[r] == keys[0] + r)
		r++;
	return r;
}

uint32_t kv_chunk(const uint64_t *keys, size_t n, uint8_t op,
		  uint32_t val_len, uint32_t msg_max, bool *range)
{
	uint64_t vb = 4ull * val_len, range_cap, list_cap, run;
	size_t i;

	*range = false;
	if (!n || !val_len || msg_max < KV_HDR_LEN + 8)
		return 0;
	if (op == KV_OP_PUSH) {
		range_cap = (msg_max - KV_HDR_LEN - 8) / vb;
		list_cap = (msg_max - KV_HDR_LEN) / (8 + vb);
	} else {
		range_cap = msg_max / vb;
		list_cap = (KV_REQ_MAX - KV_HDR_LEN) / 8;
		if (list_cap > range_cap)
			list_cap = range_cap;
	}
	if (range_cap > UINT32_MAX)
		range_cap = UINT32_MAX;
	if (!list_cap && !range_cap)
		return 0;
	run = run_len(keys, n, range_cap ? range_cap : 1);
	if (range_cap && run > 1 && (run == n || run >= KV_RUN_MIN)) {
		*range = true;
		return (uint32_t)run;
	}
	if (!list_cap)
		return 0;
	/* A list, up to the next run worth a request of its own. */
	for (i = 1; i < n && i < list_cap; i++)
		if (range_cap && run_len(keys + i, n - i, KV_RUN_MIN) >=
				  KV_RUN_MIN)
			break;
	return (uint32_t)i;
}
