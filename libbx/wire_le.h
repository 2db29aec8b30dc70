/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Little-endian fields at any alignment, for the pure wire formats of
 * bxkv (kv_wire.c) and bxps (ps_wire.c).
 */
#ifndef BX_WIRE_LE_H
#define BX_WIRE_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

#endif /* BX_WIRE_LE_H */
