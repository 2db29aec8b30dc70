/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * bxkv's wire format and key partitioning: pure C, no libbx call, so
 * that the host unit tests and the fuzzer run it as it is. Internal to
 * libbx (not installed).
 *
 * A request is one bx message:
 *
 *   offset  size  field
 *   0       4     magic    KV_MAGIC, little-endian
 *   4       1     version  KV_VERSION
 *   5       1     op       KV_OP_PUSH or KV_OP_PULL
 *   6       2     flags    KV_F_RANGE, KV_F_LENS, little-endian
 *   8       4     nkeys    keys in the request, >= 1, little-endian
 *   12      4     val_len  floats per key; 0 with KV_F_LENS
 *   16      8*k   keys     little-endian uint64, strictly ascending;
 *                          k = nkeys, or 1 with KV_F_RANGE: the keys are
 *                          key[0], key[0] + 1, ..., key[0] + nkeys - 1
 *   ..      4*n   lens     with KV_F_LENS only: each key's floats (>= 1),
 *                          little-endian uint32, zero-padded to a
 *                          multiple of 8 bytes
 *   ..      4*v   values   push only: v = nkeys * val_len, or the sum of
 *                          lens, floats in key order (host float format:
 *                          IEEE 754, the byte order of both ends)
 *
 * Every key's length must be the one the server stores for it (its
 * val_len, or its entry of a per-key table): a request does not resize
 * values. A pull's answer is the values alone (v floats), so that it
 * lands in the caller's array as it is; an empty answer means the
 * server refused the request. Nothing of a received request is trusted:
 * kv_decode() checks every count and length against the message's size,
 * every key against the server's range and every key's length against
 * the server's before anything is used.
 */
#ifndef BX_KV_WIRE_H
#define BX_KV_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KV_MAGIC	0x564b5842u	/* "BXKV" */
#define KV_VERSION	1
#define KV_OP_PUSH	1
#define KV_OP_PULL	2
#define KV_F_RANGE	0x0001u
#define KV_F_LENS	0x0002u
#define KV_HDR_LEN	16u
/* bx's limit on a pull request (Documentation/bx.rst, "Limits"). */
#define KV_REQ_MAX	4096u
/* A run of consecutive keys at least this long goes as a range. */
#define KV_RUN_MIN	16u

/* A decoded request; @keys and @vals point into the message. */
struct kv_req {
	uint8_t		op;
	uint16_t	flags;
	uint32_t	nkeys;
	uint32_t	val_len;	/* 0 with KV_F_LENS */
	uint64_t	first;		/* key 0 */
	uint64_t	nvals;		/* floats of all keys */
	const uint8_t	*keys;		/* nkeys (1 with KV_F_RANGE) keys */
	const uint8_t	*lens;		/* KV_F_LENS: nkeys lengths */
	const float	*vals;		/* push: nvals floats */
};

/* What the server accepts. */
struct kv_limits {
	uint8_t		op;		/* the op expected (push or pull) */
	uint64_t	begin, end;	/* the server's keys: [begin, end) */
	uint32_t	val_len;	/* floats per key, without @off */
	uint64_t	resp_max;	/* pull: bytes the answer may have */
	/*
	 * Or per-key lengths: key begin + i has floats [off[i], off[i + 1])
	 * of the store (end - begin + 1 entries, ascending); NULL: none.
	 */
	const uint64_t	*off;
};

/* Key @i of a decoded request (i < nkeys). */
uint64_t kv_req_key(const struct kv_req *r, uint32_t i);

/* The floats of key @i of a decoded request (i < nkeys). */
uint32_t kv_req_len(const struct kv_req *r, uint32_t i);

/**
 * kv_msg_size() - bytes of a request of @nkeys keys with @nvals floats
 * of values in all (counted for a push only), with a lengths table if
 * @lens (0: too large)
 */
uint64_t kv_msg_size(uint8_t op, uint32_t nkeys, uint64_t nvals,
		     bool range, bool lens);

/**
 * kv_encode() - write a request into @buf (@cap bytes)
 * @lens: NULL: every key has @val_len floats (>= 1); or each key's
 *        (each >= 1; then @val_len must be 0): sent as KV_F_LENS
 * @vals: push: the keys' floats back to back; pull: NULL
 * Return: its size, or 0 if it does not fit or an argument is bad.
 */
uint64_t kv_encode(void *buf, uint64_t cap, uint8_t op,
		   const uint64_t *keys, uint32_t nkeys,
		   const uint32_t *lens, uint32_t val_len, bool range,
		   const float *vals);

/**
 * kv_decode() - check and decode a received request
 * @buf: the message, 8-byte aligned; @len: its size
 * Return: 0; -EBADMSG (not a request of this version, sizes that do not
 * add up, keys not ascending, a key's length not the server's, the
 * wrong op); -ERANGE (a key outside [begin, end)); -EMSGSIZE (a pull
 * whose answer would exceed @lim->resp_max).
 */
int kv_decode(const void *buf, uint64_t len, const struct kv_limits *lim,
	      struct kv_req *r);

/**
 * kv_bounds_even() - split [0, key_max) evenly over @n servers
 * @bounds: n + 1 entries out: server s owns [bounds[s], bounds[s + 1])
 * Return: 0; -EINVAL if n is 0 or key_max < n.
 */
int kv_bounds_even(uint64_t key_max, unsigned int n, uint64_t *bounds);

/** kv_bounds_check() - n + 1 bounds, strictly ascending: 0 or -EINVAL. */
int kv_bounds_check(const uint64_t *bounds, unsigned int n);

/**
 * kv_split() - which keys go to which server
 * @first: n + 1 entries out: server s gets keys[first[s] .. first[s + 1])
 * Return: 0; -EINVAL (keys not strictly ascending); -ERANGE (a key
 * outside [bounds[0], bounds[n])).
 */
int kv_split(const uint64_t *bounds, unsigned int n, const uint64_t *keys,
	     size_t nkeys, size_t *first);

/**
 * kv_chunk() - how many of @keys (ascending, @n of them) the next request
 * takes, and whether as a range, so that the push message, the pull
 * request (KV_REQ_MAX) and the pull's answer stay within @msg_max bytes.
 * @lens: each key's floats (each >= 1), or NULL: @val_len each
 * @nvals: out, the floats of the keys taken
 * Return: keys taken, 0 if not even one key fits.
 */
uint32_t kv_chunk(const uint64_t *keys, const uint32_t *lens, size_t n,
		  uint8_t op, uint32_t val_len, uint32_t msg_max, bool *range,
		  uint64_t *nvals);

#endif /* BX_KV_WIRE_H */
