// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * bxkv's wire format and key partitioning (kv_wire.h). Pure C: no libbx
 * call, no allocation; host-tested by tools/testing/unit/kv_test.c and
 * fuzz_kv.c.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <string.h>

#include "kv_wire.h"
#include "wire_le.h"

uint64_t kv_req_key(const struct kv_req *r, uint32_t i)
{
	return r->flags & KV_F_RANGE ? r->first + i : get64(r->keys + 8ull * i);
}

uint32_t kv_req_len(const struct kv_req *r, uint32_t i)
{
	return r->lens ? get32(r->lens + 4ull * i) : r->val_len;
}

/* Bytes of a lengths table of @nkeys entries, padded to 8. */
static uint64_t lens_size(uint32_t nkeys)
{
	return (4ull * nkeys + 7) & ~7ull;
}

uint64_t kv_msg_size(uint8_t op, uint32_t nkeys, uint64_t nvals,
		     bool range, bool lens)
{
	uint64_t size = KV_HDR_LEN + (range ? 8 : 8ull * nkeys) +
			(lens ? lens_size(nkeys) : 0);

	if (op != KV_OP_PUSH)
		return size;
	if (nvals > (UINT64_MAX - size) / 4)
		return 0;
	return size + 4 * nvals;
}

uint64_t kv_encode(void *buf, uint64_t cap, uint8_t op,
		   const uint64_t *keys, uint32_t nkeys,
		   const uint32_t *lens, uint32_t val_len, bool range,
		   const float *vals)
{
	uint64_t nvals = (uint64_t)nkeys * val_len, size;
	uint8_t *p = buf;
	uint32_t k = range ? 1 : nkeys;

	if (!nkeys || !lens == !val_len ||
	    (op != KV_OP_PUSH && op != KV_OP_PULL) ||
	    (op == KV_OP_PUSH) != (vals != NULL))
		return 0;
	if (lens) {
		nvals = 0;
		for (uint32_t i = 0; i < nkeys; i++) {
			if (!lens[i])
				return 0;
			nvals += lens[i];	/* < 2^32 * 2^32 */
		}
	}
	size = kv_msg_size(op, nkeys, nvals, range, lens);
	if (!size || size > cap)
		return 0;
	put32(p, KV_MAGIC);
	p[4] = KV_VERSION;
	p[5] = op;
	put16(p + 6, (range ? KV_F_RANGE : 0) | (lens ? KV_F_LENS : 0));
	put32(p + 8, nkeys);
	put32(p + 12, val_len);
	p += KV_HDR_LEN;
	for (uint32_t i = 0; i < k; i++, p += 8)
		put64(p, keys[i]);
	if (lens) {
		memset(p, 0, lens_size(nkeys));
		for (uint32_t i = 0; i < nkeys; i++)
			put32(p + 4ull * i, lens[i]);
		p += lens_size(nkeys);
	}
	if (vals)
		memcpy(p, vals, 4 * nvals);
	return size;
}

/* Whether every key of @r has the length the server stores for it. */
static bool lens_match(const struct kv_req *r, const struct kv_limits *lim)
{
	if (!lim->off && !r->lens)
		return r->val_len == lim->val_len;
	for (uint32_t i = 0; i < r->nkeys; i++) {
		uint64_t j = kv_req_key(r, i) - lim->begin;
		uint64_t want = lim->off ? lim->off[j + 1] - lim->off[j] :
				lim->val_len;

		if (kv_req_len(r, i) != want)
			return false;
	}
	return true;
}

int kv_decode(const void *buf, uint64_t len, const struct kv_limits *lim,
	      struct kv_req *r)
{
	const uint8_t *p = buf;
	uint64_t keys_len, lens_len = 0, vals_len, want, prev = 0;
	uint32_t k;

	if (len < KV_HDR_LEN || ((uintptr_t)buf & 7))
		return -EBADMSG;
	memset(r, 0, sizeof(*r));
	r->op = p[5];
	r->flags = get16(p + 6);
	r->nkeys = get32(p + 8);
	r->val_len = get32(p + 12);
	if (get32(p) != KV_MAGIC || p[4] != KV_VERSION ||
	    r->op != lim->op || (r->flags & ~(KV_F_RANGE | KV_F_LENS)) ||
	    !r->nkeys || !(r->flags & KV_F_LENS) != !!r->val_len)
		return -EBADMSG;
	k = r->flags & KV_F_RANGE ? 1 : r->nkeys;
	keys_len = 8ull * k;
	if (r->flags & KV_F_LENS)
		lens_len = lens_size(r->nkeys);
	/* Both < 2^36: no overflow. */
	want = KV_HDR_LEN + keys_len + lens_len;
	if (len < want)
		return -EBADMSG;
	r->keys = p + KV_HDR_LEN;
	r->first = get64(r->keys);
	if (r->flags & KV_F_LENS) {
		r->lens = r->keys + keys_len;
		for (uint32_t i = 0; i < r->nkeys; i++) {
			uint32_t l = get32(r->lens + 4ull * i);

			if (!l)
				return -EBADMSG;
			r->nvals += l;		/* < 2^32 * 2^32 */
		}
		/* The padding is zero: one encoding per request. */
		for (uint64_t b = 4ull * r->nkeys; b < lens_len; b++)
			if (r->lens[b])
				return -EBADMSG;
	} else {
		/* nkeys < 2^32, val_len < 2^32: the product fits. */
		r->nvals = (uint64_t)r->nkeys * r->val_len;
	}
	if (r->nvals > UINT64_MAX / 4)
		return -EBADMSG;
	vals_len = 4 * r->nvals;
	if (r->op == KV_OP_PUSH) {
		if (__builtin_add_overflow(want, vals_len, &want))
			return -EBADMSG;
	} else if (vals_len > lim->resp_max) {
		return -EMSGSIZE;
	}
	if (len != want)
		return -EBADMSG;
	if (r->op == KV_OP_PUSH)
		r->vals = (const float *)(const void *)(p + want - vals_len);
	if (r->flags & KV_F_RANGE) {
		if (r->first < lim->begin || r->first >= lim->end ||
		    r->nkeys > lim->end - r->first)
			return -ERANGE;
	} else {
		for (uint32_t i = 0; i < k; i++) {
			uint64_t key = get64(r->keys + 8ull * i);

			if (i && key <= prev)
				return -EBADMSG;
			if (key < lim->begin || key >= lim->end)
				return -ERANGE;
			prev = key;
		}
	}
	return lens_match(r, lim) ? 0 : -EBADMSG;
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

/* Whether a request of @m keys with @nvals floats stays within limits. */
static bool fits(uint8_t op, uint32_t m, uint64_t nvals, bool range,
		 bool lens, uint32_t msg_max)
{
	uint64_t req = kv_msg_size(op, m, nvals, range, lens);

	if (op == KV_OP_PUSH)
		return req && req <= msg_max;
	return req <= KV_REQ_MAX && nvals <= msg_max / 4;
}

/*
 * How many of @keys (from 0, at most @max) one request takes, as a range
 * or a list; a list stops before a run of KV_RUN_MIN consecutive keys
 * (that goes better as a range of its own). The floats in *@nvals.
 */
static uint32_t take(const uint64_t *keys, const uint32_t *lens, size_t max,
		     uint8_t op, uint32_t val_len, uint32_t msg_max,
		     bool range, uint64_t *nvals)
{
	uint64_t v = 0;
	uint32_t m = 0;

	while (m < max && m < UINT32_MAX) {
		uint64_t l = lens ? lens[m] : val_len;

		if (range ? m && keys[m] != keys[0] + m :
		    m && run_len(keys + m, max - m, KV_RUN_MIN) >= KV_RUN_MIN)
			break;
		/* v stays below msg_max / 4 + 2^32: no overflow. */
		if (!fits(op, m + 1, v + l, range, lens, msg_max))
			break;
		v += l;
		m++;
	}
	*nvals = v;
	return m;
}

uint32_t kv_chunk(const uint64_t *keys, const uint32_t *lens, size_t n,
		  uint8_t op, uint32_t val_len, uint32_t msg_max, bool *range,
		  uint64_t *nvals)
{
	uint32_t m;

	*range = false;
	*nvals = 0;
	if (!n || (!lens && !val_len))
		return 0;
	m = take(keys, lens, n, op, val_len, msg_max, true, nvals);
	/* A range if the run is long, all there is, or cut by the size. */
	if (m > 1 && (m == n || m >= KV_RUN_MIN || keys[m] == keys[0] + m)) {
		*range = true;
		return m;
	}
	return take(keys, lens, n, op, val_len, msg_max, false, nvals);
}
