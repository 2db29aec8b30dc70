// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kmod/auth.c, the handshake's cryptography, under
 * ASan and UBSan: HMAC-SHA256 against RFC 4231's vectors (which also
 * checks the user-space SHA-256 shim), the names of secrets, host keys,
 * the acceptor's cookies (their age, what they bind) and both proofs,
 * each changed by any byte it covers and by nothing else.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../../kmod/auth.h"
#include "unit.h"

static void unhex(const char *h, u8 *out)
{
	for (; h[0] && h[1]; h += 2)
		*out++ = (u8)((h[0] % 32 + 9) % 25 * 16 + (h[1] % 32 + 9) % 25);
}

UNIT_TEST(rfc4231)
{
	u8 key[131], data[160], want[32], got[32];

	/* Test case 1. */
	memset(key, 0x0b, 20);
	unhex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
	      want);
	bx_auth_hmac(key, 20, "Hi There", 8, got);
	CHECK(!memcmp(got, want, 32));
	/* Test case 2: a key shorter than the block. */
	unhex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
	      want);
	bx_auth_hmac((const u8 *)"Jefe", 4, "what do ya want for nothing?",
		     28, got);
	CHECK(!memcmp(got, want, 32));
	/* Test case 6: a key longer than the block (hashed first). */
	memset(key, 0xaa, sizeof(key));
	unhex("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
	      want);
	bx_auth_hmac(key, 131,
		     "Test Using Larger Than Block-Size Key - Hash Key First",
		     54, got);
	CHECK(!memcmp(got, want, 32));
	/* Test case 4: 50 bytes of 0xcd under 25 counting bytes. */
	for (int i = 0; i < 25; i++)
		key[i] = (u8)(i + 1);
	memset(data, 0xcd, 50);
	unhex("82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
	      want);
	bx_auth_hmac(key, 25, data, 50, got);
	CHECK(!memcmp(got, want, 32));
}

UNIT_TEST(kids_and_pair_keys)
{
	u8 s1[32], s2[32], k1[4], k2[4];
	u8 a[16] = { 1 }, b[16] = { 2 }, c[16] = { 3 };
	u8 ab[32], ba[32], ac[32], ab2[32];

	memset(s1, 1, sizeof(s1));
	memset(s2, 2, sizeof(s2));
	bx_auth_kid(s1, k1);
	bx_auth_kid(s2, k2);
	CHECK(memcmp(k1, k2, 4));
	/* A pair's key, whichever side derives it. */
	bx_auth_pair_key(s1, a, b, ab);
	bx_auth_pair_key(s1, b, a, ba);
	CHECK(!memcmp(ab, ba, 32));
	bx_auth_pair_key(s1, a, c, ac);
	bx_auth_pair_key(s2, a, b, ab2);
	CHECK(memcmp(ab, ac, 32));
	CHECK(memcmp(ab, ab2, 32));
	/* The key is not the secret, nor tells its kid. */
	CHECK(memcmp(ab, s1, 32));
	CHECK(memcmp(ab, k1, 4));
}

static const struct bx_conn_params params = {
	.credits = 128, .msg_size = 8192, .epoch = 0x1234,
	.nonce = { 1, 2, 3, 4, 5, 6, 7, 8 },
};

UNIT_TEST(cookies)
{
	u8 ckey[32], other[32], ia[16] = { 0xa }, aa[16] = { 0xb };
	struct bx_conn_params p = params;

	memset(ckey, 7, sizeof(ckey));
	memset(other, 8, sizeof(other));
	bx_auth_cookie(ckey, 1000, ia, aa, &p, p.cookie);
	CHECK_EQ(p.cookie[0], 1000 & 0xff);
	/* Valid from its bucket on, for max_age buckets. */
	CHECK(bx_auth_cookie_ok(ckey, 1000, 3, ia, aa, &p));
	CHECK(bx_auth_cookie_ok(ckey, 1003, 3, ia, aa, &p));
	CHECK(!bx_auth_cookie_ok(ckey, 1004, 3, ia, aa, &p));
	/* 256 buckets later the low byte matches again: too old anyway. */
	CHECK(!bx_auth_cookie_ok(ckey, 1000 + 256, 3, ia, aa, &p));
	/* Made in the future (a bucket not reached yet): refused. */
	CHECK(!bx_auth_cookie_ok(ckey, 999, 3, ia, aa, &p));
	/* Only for this acceptor, these addresses, these parameters. */
	CHECK(!bx_auth_cookie_ok(other, 1001, 3, ia, aa, &p));
	CHECK(!bx_auth_cookie_ok(ckey, 1001, 3, aa, ia, &p));
	ia[15] ^= 1;
	CHECK(!bx_auth_cookie_ok(ckey, 1001, 3, ia, aa, &p));
	ia[15] ^= 1;
	p.epoch++;
	CHECK(!bx_auth_cookie_ok(ckey, 1001, 3, ia, aa, &p));
	p.epoch--;
	/* A later request of the incarnation, with a new nonce: valid. */
	p.nonce[7] ^= 1;
	CHECK(bx_auth_cookie_ok(ckey, 1001, 3, ia, aa, &p));
	p.cookie[5] ^= 1;
	CHECK(!bx_auth_cookie_ok(ckey, 1001, 3, ia, aa, &p));
	p.cookie[5] ^= 1;
	/* Early after boot: no bucket before 0. */
	bx_auth_cookie(ckey, 1, ia, aa, &p, p.cookie);
	CHECK(bx_auth_cookie_ok(ckey, 2, 3, ia, aa, &p));
	p.cookie[0] = 0xff;
	CHECK(!bx_auth_cookie_ok(ckey, 2, 3, ia, aa, &p));
}

UNIT_TEST(proofs_cover_their_bytes)
{
	u8 s[32], s2[32], ia[16] = { 0xa }, aa[16] = { 0xb };
	u8 m1[16], m2[16], a1[16], a2[16];
	struct bx_conn_params p = params;
	struct bx_wire_accept acc;
	struct bx_wire_req req;
	u8 *rb = (u8 *)&req, *ab = (u8 *)&acc;

	memset(s, 3, sizeof(s));
	memset(s2, 4, sizeof(s2));
	p.flags = BX_WIRE_REQ_F_COOKIE | BX_WIRE_REQ_F_PROOF;
	memset(p.cookie, 9, sizeof(p.cookie));
	bx_auth_kid(s, p.kid);
	bx_wire_req_build(&req, &p);
	bx_auth_init_mac(s, ia, aa, &req, m1);
	memcpy(req.mac, m1, sizeof(m1));
	bx_wire_accept_build(&acc, &(struct bx_conn_params){
		.flags = BX_WIRE_REQ_F_PROOF, .credits = 64,
		.msg_size = 8192, .epoch = 77 });
	bx_auth_acc_mac(s, ia, aa, &req, &acc, a1);
	/* Every byte up to the initiator's proof is covered; not the proof. */
	for (int i = 0; i < BX_WIRE_REQ_LEN; i++) {
		rb[i] ^= 1;
		bx_auth_init_mac(s, ia, aa, &req, m2);
		CHECK(i < BX_WIRE_REQ_SIGNED ? memcmp(m1, m2, 16) != 0 :
		      !memcmp(m1, m2, 16));
		/* The acceptor's covers the whole request. */
		bx_auth_acc_mac(s, ia, aa, &req, &acc, a2);
		CHECK(memcmp(a1, a2, 16));
		rb[i] ^= 1;
	}
	for (int i = 0; i < BX_WIRE_ACCEPT_LEN; i++) {
		ab[i] ^= 1;
		bx_auth_acc_mac(s, ia, aa, &req, &acc, a2);
		CHECK(i < BX_WIRE_ACCEPT_SIGNED ? memcmp(a1, a2, 16) != 0 :
		      !memcmp(a1, a2, 16));
		ab[i] ^= 1;
	}
	/* Addresses, the secret, the role: each gives another proof. */
	bx_auth_init_mac(s, aa, ia, &req, m2);
	CHECK(memcmp(m1, m2, 16));
	bx_auth_init_mac(s2, ia, aa, &req, m2);
	CHECK(memcmp(m1, m2, 16));
	CHECK(memcmp(m1, a1, 16));
	/*
	 * The initiator's proof is under its own host key: the same
	 * request proved as another host (its address as initiator) differs.
	 */
	ia[0] ^= 0x40;
	bx_auth_init_mac(s, ia, aa, &req, m2);
	CHECK(memcmp(m1, m2, 16));
	CHECK(bx_auth_mac_eq(m1, m1, 16));
	CHECK(!bx_auth_mac_eq(m1, m2, 16));
}

int main(void)
{
	return unit_run();
}
