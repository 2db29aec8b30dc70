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

#define BX_ALLOW_MAX		64	/* networks in the allow-list */
#define BX_SECRET_LEN		32	/* bytes of a cluster secret */

/* A network of the allow-list: IPv4 as v4-mapped, @plen of 128 bits. */
struct bx_allow_net {
	struct in6_addr	addr;
	u8		plen;
};

void bx_admit_init(void);
void bx_admit_uninit(void);

void bx_admit_addr_v6(const struct sockaddr *sa, u8 out[16]);
bool bx_admit_allowed(const struct sockaddr *sa);
int bx_admit_allow_set(const struct bx_allow_net *nets, unsigned int n);
int bx_admit_allow_each(int (*fn)(const struct bx_allow_net *, void *), void *arg);

int bx_admit_secret_set(const u8 *key, unsigned int len);
bool bx_admit_secret_on(void);

/*
 * A key of a pair of hosts (auth.c) an admin gave this host for the
 * peer at @addr (16 bytes, IPv4 v4-mapped), under the secret @kid names.
 */
struct bx_pairkey {
	u8	addr[16];
	u8	kid[BX_WIRE_KID_LEN];
	u8	key[32];
};

/* Two per peer of a full table: the old and the new during a change. */
#define BX_PAIRKEYS_MAX		2048

int bx_admit_pairkeys_set(const struct bx_pairkey *k, unsigned int n);
unsigned int bx_admit_pairkeys_count(void);
bool bx_admit_auth(void);
bool bx_admit_secret_prev_on(void);

/* The acceptor's side of the handshake (wire.h). */
void bx_admit_challenge(const struct sockaddr *init,
			const struct sockaddr *acc,
			const struct bx_conn_params *p, struct bx_wire_chal *c);
bool bx_admit_cookie_ok(const struct sockaddr *init,
			const struct sockaddr *acc,
			const struct bx_conn_params *p);
int bx_admit_check_req(const struct sockaddr *init, const struct sockaddr *acc,
		       const struct bx_wire_req *req,
		       const struct bx_conn_params *p, const char **why);
int bx_admit_accept_mac(const struct sockaddr *init, const struct sockaddr *acc,
			const struct bx_wire_req *req,
			struct bx_wire_accept *accept);
/* The initiator's. */
int bx_admit_answer(const struct sockaddr *acc, const struct bx_wire_chal *c,
		    struct bx_conn_params *p);
int bx_admit_req_mac(const struct sockaddr *init, const struct sockaddr *acc,
		     struct bx_wire_req *req);
bool bx_admit_check_accept(const struct sockaddr *init,
			   const struct sockaddr *acc,
			   const struct bx_wire_req *req,
			   const struct bx_wire_accept *accept,
			   const struct bx_conn_params *p);

void bx_admit_violation(const struct sockaddr *sa, const char *what);
unsigned int bx_admit_refusing(const struct sockaddr *sa);
void bx_admit_refused(const struct sockaddr *sa, const char *why);
void bx_admit_record(const struct sockaddr *sa, u32 *violations,
		     u32 *refused, u32 *refusing_ms);

extern atomic64_t bx_admit_refused_connects;
extern atomic64_t bx_admit_auth_failures;
extern atomic64_t bx_admit_violations;
extern atomic64_t bx_admit_challenges;
extern atomic64_t bx_admit_stale_cookies;

#endif /* _BX_ADMIT_H */
