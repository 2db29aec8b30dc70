/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: per-user accounting of operations, peers and services (user.c).
 */
#ifndef _BX_USER_H
#define _BX_USER_H

#include <linux/atomic.h>
#include <linux/uidgid.h>

/**
 * struct bx_user - what the open files of one user hold
 * @uid:	the user
 * @files:	its open files, each holding a reference (bx_users_lock)
 * @ops:	operations in flight, RECVs posted (user_ops_max)
 * @peers:	peer references its files took (user_peers_max)
 * @services:	services bound (user_services_max)
 */
struct bx_user {
	kuid_t		uid;
	unsigned int	files;
	atomic_t	ops;
	atomic_t	peers;
	atomic_t	services;
};

struct bx_user *bx_user_get(kuid_t uid);
void bx_user_put(struct bx_user *u);
bool bx_user_charge(atomic_t *count, unsigned int max);
void bx_user_uncharge(atomic_t *count);

#endif /* _BX_USER_H */
