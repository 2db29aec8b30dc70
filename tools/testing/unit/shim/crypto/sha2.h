/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space shim of the kernel's SHA-256 library (<crypto/sha2.h>): the
 * same names and state, implemented after FIPS 180-4, for the pure files
 * that use it (kmod/auth.c) in the host tests and the selftests' tools.
 * auth_test checks it against the standard's vectors through HMAC.
 */
#ifndef _SHIM_CRYPTO_SHA2_H
#define _SHIM_CRYPTO_SHA2_H

#include <linux/types.h>
#include <string.h>

#define SHA256_DIGEST_SIZE	32
#define SHA256_BLOCK_SIZE	64

struct sha256_state {
	u32	state[8];
	u64	count;
	u8	buf[SHA256_BLOCK_SIZE];
};

static const u32 shim_sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline u32 shim_ror32(u32 x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static inline void shim_sha256_block(u32 st[8], const u8 *p)
{
	u32 w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (u32)p[4 * i] << 24 | (u32)p[4 * i + 1] << 16 |
		       (u32)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = w[i - 16] + w[i - 7] +
		       (shim_ror32(w[i - 15], 7) ^ shim_ror32(w[i - 15], 18) ^
			(w[i - 15] >> 3)) +
		       (shim_ror32(w[i - 2], 17) ^ shim_ror32(w[i - 2], 19) ^
			(w[i - 2] >> 10));
	a = st[0]; b = st[1]; c = st[2]; d = st[3];
	e = st[4]; f = st[5]; g = st[6]; h = st[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (shim_ror32(e, 6) ^ shim_ror32(e, 11) ^
			  shim_ror32(e, 25)) + ((e & f) ^ (~e & g)) +
		     shim_sha256_k[i] + w[i];
		t2 = (shim_ror32(a, 2) ^ shim_ror32(a, 13) ^
		      shim_ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	st[0] += a; st[1] += b; st[2] += c; st[3] += d;
	st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

static inline void sha256_init(struct sha256_state *s)
{
	static const u32 iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->state, iv, sizeof(iv));
	s->count = 0;
}

static inline void sha256_update(struct sha256_state *s, const u8 *data,
				 unsigned int len)
{
	while (len) {
		unsigned int at = s->count % SHA256_BLOCK_SIZE;
		unsigned int n = SHA256_BLOCK_SIZE - at < len ?
				 SHA256_BLOCK_SIZE - at : len;

		memcpy(s->buf + at, data, n);
		s->count += n;
		data += n;
		len -= n;
		if (at + n == SHA256_BLOCK_SIZE)
			shim_sha256_block(s->state, s->buf);
	}
}

static inline void sha256_final(struct sha256_state *s, u8 *out)
{
	u64 bits = s->count * 8;
	u8 pad = 0x80, len[8];
	int i;

	sha256_update(s, &pad, 1);
	pad = 0;
	while (s->count % SHA256_BLOCK_SIZE != 56)
		sha256_update(s, &pad, 1);
	for (i = 0; i < 8; i++)
		len[i] = (u8)(bits >> (56 - 8 * i));
	sha256_update(s, len, 8);
	for (i = 0; i < 32; i++)
		out[i] = (u8)(s->state[i / 4] >> (24 - 8 * (i % 4)));
	memset(s, 0, sizeof(*s));
}

#endif /* _SHIM_CRYPTO_SHA2_H */
