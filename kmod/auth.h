/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the handshake's cryptography (wire.h, "Connection handshake") --
 * HMAC-SHA256 over the kernel's SHA-256 library, the names of cluster
 * secrets, each host's key, the acceptor's cookies and both proofs. Pure:
 * no locking, no allocation; also compiled into the host unit tests and
 * the selftests' hostile peer.
 *
 * Keys. A cluster secret is 32 random bytes (admit.c takes nothing
 * else: the proofs are MACs an eavesdropper sees, and only a secret of
 * full strength cannot be guessed from them offline). Its kid names it
 * in a challenge without telling anything of it. A handshake proves the
 * key of its pair of hosts, derived from the secret and both addresses:
 * a host holding the secret derives any pair's, a host given only its
 * own pairs' keys (bxctl keys) cannot act as another member (bx.rst,
 * "Trust model"). The cookie key is the acceptor's alone, random at each
 * load.
 */
#ifndef _BX_AUTH_H
#define _BX_AUTH_H

#include <linux/types.h>

#include "wire.h"

#define BX_AUTH_KEY_LEN		32
#define BX_AUTH_HMAC_LEN	32

void bx_auth_hmac(const u8 *key, unsigned int klen, const void *data,
		  unsigned int len, u8 out[BX_AUTH_HMAC_LEN]);
void bx_auth_kid(const u8 secret[BX_AUTH_KEY_LEN], u8 kid[BX_WIRE_KID_LEN]);
void bx_auth_pair_key(const u8 secret[BX_AUTH_KEY_LEN], const u8 a[16],
		      const u8 b[16], u8 key[BX_AUTH_KEY_LEN]);
void bx_auth_cookie(const u8 ckey[BX_AUTH_KEY_LEN], u64 bucket,
		    const u8 init[16], const u8 acc[16],
		    const struct bx_conn_params *p,
		    u8 cookie[BX_WIRE_COOKIE_LEN]);
bool bx_auth_cookie_ok(const u8 ckey[BX_AUTH_KEY_LEN], u64 now,
		       u32 max_age, const u8 init[16], const u8 acc[16],
		       const struct bx_conn_params *p);
void bx_auth_init_mac(const u8 pk[BX_AUTH_KEY_LEN], const u8 init[16],
		      const u8 acc[16], const struct bx_wire_req *req,
		      u8 mac[BX_WIRE_MAC_LEN]);
void bx_auth_acc_mac(const u8 pk[BX_AUTH_KEY_LEN], const u8 init[16],
		     const u8 acc[16], const struct bx_wire_req *req,
		     const struct bx_wire_accept *accept,
		     u8 mac[BX_WIRE_MAC_LEN]);
bool bx_auth_mac_eq(const u8 *a, const u8 *b, unsigned int len);

#endif /* _BX_AUTH_H */
