/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The payloads of bx_pp and of the peers that answer it (bx_hostile): a
 * pseudo-random stream whose first 8 bytes, for a payload of 8 or more,
 * are its seed (shorter ones use their length as seed), and the pull
 * request that names a response's size and seed.
 */
#ifndef _BX_PP_PAYLOAD_H
#define _BX_PP_PAYLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PP_MAGIC	0x50505842u	/* "BXPP" */

struct pp_req {
	uint32_t	magic;
	uint32_t	size;
	uint64_t	seed;
};

static inline uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static inline void fill(uint8_t *p, uint32_t len, uint64_t seed)
{
	uint64_t x = (len < 8 ? len : seed) | 1;
	uint32_t i = 0;

	if (len >= 8) {
		memcpy(p, &seed, 8);
		i = 8;
	}
	for (; i < len; i++)
		p[i] = (uint8_t)(next(&x) >> 24);
}

static inline bool check(const uint8_t *p, uint32_t len)
{
	uint64_t seed = 0, x;
	uint32_t i = 0;

	if (len >= 8) {
		memcpy(&seed, p, 8);
		i = 8;
	}
	x = (len < 8 ? len : seed) | 1;
	for (; i < len; i++)
		if (p[i] != (uint8_t)(next(&x) >> 24))
			return false;
	return true;
}

#endif /* _BX_PP_PAYLOAD_H */
