// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for kv_decode() (libbx/kv_wire.c): hostile requests,
 * as a bxkv server receives them. The first 16 bytes of the input pick
 * the server's limits (op, range, val_len or a per-key table, answer
 * cap), the rest is the message. No crash, no sanitizer report, and anything accepted is
 * within the message and the range, and encodes back to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../libbx/kv_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t keys[1 << 13];
	static uint64_t again[1 << 14];
	static float vals[1 << 15];
	static uint32_t lens[1 << 14];
	static uint64_t off[257];
	struct kv_limits lim;
	struct kv_req r;
	uint64_t begin, span, n;
	uint32_t k;
	uint8_t *copy;

	if (size < 16 || size - 16 > sizeof(again))
		return 0;
	memcpy(&begin, data, 8);
	memcpy(&span, data + 8, 8);
	lim.op = span & 1 ? KV_OP_PUSH : KV_OP_PULL;
	lim.val_len = 1 + ((span >> 1) & 7);
	lim.off = NULL;
	if (span & (1u << 23)) {
		/* A per-key table over up to 256 keys: 1 + key % 3 floats. */
		lim.val_len = 0;
		lim.off = off;
		for (int i = 0; i < 256; i++)
			off[i + 1] = off[i] + 1 + (uint64_t)(begin + i) % 3;
	}
	lim.resp_max = (span >> 4) & 0x7ffff;
	span >>= 24;
	lim.begin = begin;
	lim.end = begin + (span ? span : 1);
	if (lim.end < lim.begin)
		lim.end = UINT64_MAX;
	if (lim.off && lim.end - lim.begin > 256)
		lim.end = lim.begin + 256;
	data += 16;
	size -= 16;
	/* An exact-size heap copy (malloc: aligned), so ASan sees overruns. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (kv_decode(copy, size, &lim, &r) == 0) {
		k = r.flags & KV_F_RANGE ? 1 : r.nkeys;
		if (r.op != lim.op ||
		    kv_msg_size(r.op, r.nkeys, r.nvals, r.flags & KV_F_RANGE,
				r.flags & KV_F_LENS) != size)
			abort();
		if (r.lens && r.nkeys > sizeof(lens) / sizeof(lens[0]))
			abort();	/* cannot fit either */
		if (k > sizeof(keys) / sizeof(keys[0]))
			abort();	/* cannot fit in a 128 KiB input */
		for (uint32_t i = 0; i < r.nkeys; i++) {
			uint64_t key = kv_req_key(&r, i);

			uint64_t len = lim.off ? off[key - lim.begin + 1] -
					   off[key - lim.begin] : lim.val_len;

			if (key < lim.begin || key >= lim.end ||
			    kv_req_len(&r, i) != len)
				abort();
			if (i < k)
				keys[i] = key;
			if (r.lens)
				lens[i] = kv_req_len(&r, i);
		}
		/* Copy every value: ASan checks they are inside. */
		if (r.vals)
			memcpy(vals, r.vals, 4 * r.nvals);
		n = kv_encode(again, sizeof(again), r.op, keys, r.nkeys,
			      r.lens ? lens : NULL, r.val_len,
			      r.flags & KV_F_RANGE, r.vals);
		if (n != size || memcmp(again, copy, size))
			abort();
	}
	free(copy);
	return 0;
}
