// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for kv_decode() (libbx/kv_wire.c): hostile requests,
 * as a bxkv server receives them. The first 16 bytes of the input pick
 * the server's limits (op, range, val_len, answer cap), the rest is the
 * message. No crash, no sanitizer report, and anything accepted is
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
	lim.resp_max = (span >> 4) & 0xfffff;
	span >>= 24;
	lim.begin = begin;
	lim.end = begin + (span ? span : 1);
	if (lim.end < lim.begin)
		lim.end = UINT64_MAX;
	data += 16;
	size -= 16;
	/* An exact-size heap copy (malloc: aligned), so ASan sees overruns. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (kv_decode(copy, size, &lim, &r) == 0) {
		k = r.flags & KV_F_RANGE ? 1 : r.nkeys;
		if (r.op != lim.op || r.val_len != lim.val_len ||
		    kv_msg_size(r.op, r.nkeys, r.val_len,
				r.flags & KV_F_RANGE) != size)
			abort();
		if (k > sizeof(keys) / sizeof(keys[0]))
			abort();	/* cannot fit in a 128 KiB input */
		for (uint32_t i = 0; i < r.nkeys; i++) {
			uint64_t key = kv_req_key(&r, i);

			if (key < lim.begin || key >= lim.end)
				abort();
			if (i < k)
				keys[i] = key;
		}
		/* Copy every value: ASan checks they are inside. */
		if (r.vals)
			memcpy(vals, r.vals, 4ull * r.nkeys * r.val_len);
		n = kv_encode(again, sizeof(again), r.op, keys, r.nkeys,
			      r.val_len, r.flags & KV_F_RANGE, r.vals);
		if (n != size || memcmp(again, copy, size))
			abort();
	}
	free(copy);
	return 0;
}
