// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the handshake's cryptography (see auth.h). Pure; also compiled into
 * the host unit tests and the selftests' hostile peer.
 */
#include <crypto/sha2.h>
#include <linux/string.h>

#include "auth.h"

/* Labels: every MAC of the handshake says what it is, 8 bytes each. */
static const char label_kid[8] = "bx-kid";
static const char label_pair[8] = "bx-pair";
static const char label_cookie[8] = "bx-cook";
static const char label_init[8] = "bx-init";
static const char label_acc[8] = "bx-acc";

/* HMAC-SHA256 (RFC 2104) of @len bytes at @data under @klen bytes of @key. */
void bx_auth_hmac(const u8 *key, unsigned int klen, const void *data,
		  unsigned int len, u8 out[BX_AUTH_HMAC_LEN])
{
	u8 k[SHA256_BLOCK_SIZE] = {}, pad[SHA256_BLOCK_SIZE];
	struct sha256_state s;
	unsigned int i;

	if (klen > SHA256_BLOCK_SIZE) {
		sha256_init(&s);
		sha256_update(&s, key, klen);
		sha256_final(&s, k);
	} else {
		memcpy(k, key, klen);
	}
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	sha256_update(&s, data, len);
	sha256_final(&s, out);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	sha256_update(&s, out, BX_AUTH_HMAC_LEN);
	sha256_final(&s, out);
	memzero_explicit(k, sizeof(k));
	memzero_explicit(pad, sizeof(pad));
}

/* @secret's name in a challenge: a MAC of a label, so it tells nothing. */
void bx_auth_kid(const u8 secret[BX_AUTH_KEY_LEN], u8 kid[BX_WIRE_KID_LEN])
{
	u8 h[BX_AUTH_HMAC_LEN];

	bx_auth_hmac(secret, BX_AUTH_KEY_LEN, label_kid, sizeof(label_kid), h);
	memcpy(kid, h, BX_WIRE_KID_LEN);
	memzero_explicit(h, sizeof(h));
}

/*
 * The key of the pair of hosts @a and @b (addresses, IPv4 v4-mapped;
 * either order): what their handshakes prove. Derived from the cluster
 * secret, by each host that holds it or once by the admin (bxctl keys),
 * so that a host given only its own pairs' keys cannot prove another
 * pair's.
 */
void bx_auth_pair_key(const u8 secret[BX_AUTH_KEY_LEN], const u8 a[16],
		      const u8 b[16], u8 key[BX_AUTH_KEY_LEN])
{
	u8 in[sizeof(label_pair) + 32];
	bool swap = memcmp(a, b, 16) > 0;

	memcpy(in, label_pair, sizeof(label_pair));
	memcpy(in + 8, swap ? b : a, 16);
	memcpy(in + 24, swap ? a : b, 16);
	bx_auth_hmac(secret, BX_AUTH_KEY_LEN, in, sizeof(in), key);
}

static void put_be(u8 *p, u64 v, unsigned int n)
{
	while (n--) {
		p[n] = (u8)v;
		v >>= 8;
	}
}

/*
 * The cookie of a request from @init to @acc, from the initiator's
 * incarnation @p->epoch, in time bucket @bucket: the bucket's low byte,
 * then a MAC under the acceptor's @ckey of the bucket, both addresses and
 * the epoch. It proves that the initiator receives at its address; a
 * later request of the same incarnation may send it again with a new
 * nonce while it is young enough.
 */
void bx_auth_cookie(const u8 ckey[BX_AUTH_KEY_LEN], u64 bucket,
		    const u8 init[16], const u8 acc[16],
		    const struct bx_conn_params *p,
		    u8 cookie[BX_WIRE_COOKIE_LEN])
{
	u8 in[sizeof(label_cookie) + 8 + 32 + 8];
	u8 h[BX_AUTH_HMAC_LEN];

	memcpy(in, label_cookie, sizeof(label_cookie));
	put_be(in + 8, bucket, 8);
	memcpy(in + 16, init, 16);
	memcpy(in + 32, acc, 16);
	put_be(in + 48, p->epoch, 8);
	bx_auth_hmac(ckey, BX_AUTH_KEY_LEN, in, sizeof(in), h);
	cookie[0] = (u8)bucket;
	memcpy(cookie + 1, h, BX_WIRE_COOKIE_LEN - 1);
	memzero_explicit(h, sizeof(h));
}

/*
 * Is @p->cookie one of ours for this request, made at most @max_age
 * buckets before bucket @now (max_age below 256)?
 */
bool bx_auth_cookie_ok(const u8 ckey[BX_AUTH_KEY_LEN], u64 now,
		       u32 max_age, const u8 init[16], const u8 acc[16],
		       const struct bx_conn_params *p)
{
	/* The latest bucket up to @now with the cookie's low byte. */
	u8 age = (u8)now - p->cookie[0], want[BX_WIRE_COOKIE_LEN];

	if (age > max_age || age > now)
		return false;
	bx_auth_cookie(ckey, now - age, init, acc, p, want);
	return bx_auth_mac_eq(want, p->cookie, BX_WIRE_COOKIE_LEN);
}

/*
 * The initiator's proof: a MAC under the pair's key (@pk) of both
 * addresses and its request up to the proof (kid and cookie included).
 */
void bx_auth_init_mac(const u8 pk[BX_AUTH_KEY_LEN], const u8 init[16],
		      const u8 acc[16], const struct bx_wire_req *req,
		      u8 mac[BX_WIRE_MAC_LEN])
{
	u8 in[sizeof(label_init) + 32 + BX_WIRE_REQ_SIGNED];
	u8 h[BX_AUTH_HMAC_LEN];

	memcpy(in, label_init, sizeof(label_init));
	memcpy(in + 8, init, 16);
	memcpy(in + 24, acc, 16);
	memcpy(in + 40, req, BX_WIRE_REQ_SIGNED);
	bx_auth_hmac(pk, BX_AUTH_KEY_LEN, in, sizeof(in), h);
	memcpy(mac, h, BX_WIRE_MAC_LEN);
	memzero_explicit(h, sizeof(h));
}

/*
 * The acceptor's proof: a MAC under the pair's key of both addresses,
 * the whole request (the initiator's proof and nonce: fresh) and its
 * accept up to the proof.
 */
void bx_auth_acc_mac(const u8 pk[BX_AUTH_KEY_LEN], const u8 init[16],
		     const u8 acc[16], const struct bx_wire_req *req,
		     const struct bx_wire_accept *accept,
		     u8 mac[BX_WIRE_MAC_LEN])
{
	u8 in[sizeof(label_acc) + 32 + BX_WIRE_REQ_LEN + BX_WIRE_ACCEPT_SIGNED];
	u8 h[BX_AUTH_HMAC_LEN];

	memcpy(in, label_acc, sizeof(label_acc));
	memcpy(in + 8, init, 16);
	memcpy(in + 24, acc, 16);
	memcpy(in + 40, req, BX_WIRE_REQ_LEN);
	memcpy(in + 40 + BX_WIRE_REQ_LEN, accept, BX_WIRE_ACCEPT_SIGNED);
	bx_auth_hmac(pk, BX_AUTH_KEY_LEN, in, sizeof(in), h);
	memcpy(mac, h, BX_WIRE_MAC_LEN);
	memzero_explicit(h, sizeof(h));
}

/* Compare MACs in constant time. */
bool bx_auth_mac_eq(const u8 *a, const u8 *b, unsigned int len)
{
	u8 d = 0;

	while (len--)
		d |= a[len] ^ b[len];
	return !d;
}
