// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for bx_wire_parse() and the handshake's parsers
 * (request, accept, challenge) on the same input: no crash, no sanitizer
 * report, and anything accepted is canonical (rebuilds to the same
 * bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../kmod/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t again[1 << 16];
	struct bx_msg msg;
	struct bx_conn_params cp;
	struct bx_wire_chal ch;
	union {
		struct bx_wire_req r;
		struct bx_wire_accept a;
		struct bx_wire_challenge c;
		struct bx_wire_lanes l;
	} w;
	uint8_t lanes;
	uint8_t *copy;

	if (size > sizeof(again))
		return 0;
	/* An exact-size heap copy, so ASan sees any read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!bx_wire_parse(copy, size, 8192, &msg)) {
		if (bx_wire_build(again, sizeof(again), &msg) != size ||
		    memcmp(again, copy, size))
			abort();
	}
	if (!bx_wire_req_parse(copy, size, &cp)) {
		bx_wire_req_build(&w.r, &cp);
		if (memcmp(&w.r, copy, sizeof(w.r)))
			abort();
	}
	if (!bx_wire_accept_parse(copy, size, &cp)) {
		bx_wire_accept_build(&w.a, &cp);
		if (memcmp(&w.a, copy, sizeof(w.a)))
			abort();
	}
	if (!bx_wire_challenge_parse(copy, size, &ch)) {
		bx_wire_challenge_build(&w.c, &ch);
		if (memcmp(&w.c, copy, sizeof(w.c)))
			abort();
	}
	if (!bx_wire_lanes_parse(copy, size, &lanes)) {
		bx_wire_lanes_build(&w.l, lanes);
		if (!lanes || memcmp(&w.l, copy, sizeof(w.l)))
			abort();
	}
	free(copy);
	return 0;
}
