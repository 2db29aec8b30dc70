/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: which peers may connect -- the allow-list of peer networks, the
 * cluster secret of the authenticated handshake, and the refusal of
 * peers that broke the protocol (admit.c; Documentation/bx.rst, "Trust
 * model").
 */
#ifndef _BX_ADMIT_H
#define _BX_ADMIT_H

#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/types.h>

#include "wire.h"

struct bx_peer;

#define BX_ALLOW_MAX		64	/* networks in the allow-list */
#define BX_SECRET_MIN		16	/* bytes of a cluster secret */
#define BX_SECRET_MAX		64

/* A network of the allow-list: IPv4 as v4-mapped, @plen of 128 bits. */
struct bx_allow_net {
	struct in6_addr	addr;
	u8		plen;
};

void bx_admit_uninit(void);

void bx_addr_v6(const struct sockaddr *sa, u8 out[16]);
bool bx_allowed(const struct sockaddr *sa);
int bx_allow_set(const struct bx_allow_net *nets, unsigned int n);
int bx_allow_each(int (*fn)(const struct bx_allow_net *, void *), void *arg);

int bx_secret_set(const u8 *key, unsigned int len);
bool bx_secret_on(void);
int bx_auth_mac(u8 mac[BX_WIRE_MAC_LEN], enum bx_wire_auth_role role,
		const struct sockaddr *init, const struct sockaddr *acc,
		const struct bx_wire_conn *req, const struct bx_wire_conn *rep);
bool bx_auth_check(const u8 mac[BX_WIRE_MAC_LEN], enum bx_wire_auth_role role,
		   const struct sockaddr *init, const struct sockaddr *acc,
		   const struct bx_wire_conn *req,
		   const struct bx_wire_conn *rep);

void bx_peer_violation(struct bx_peer *peer, const char *what);
unsigned int bx_peer_refusing(struct bx_peer *peer);
void bx_refused(const struct sockaddr *sa, const char *why);

extern atomic64_t bx_refused_connects;
extern atomic64_t bx_auth_failures;
extern atomic64_t bx_violations;

#endif /* _BX_ADMIT_H */
