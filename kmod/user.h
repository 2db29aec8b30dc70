/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: per-user accounting of operations, peers, services and window
 * shares (user.c).
 */
#ifndef _BX_USER_H
#define _BX_USER_H

#include <linux/atomic.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/uidgid.h>

#include "flow.h"

/* The host's windows a user has a share of (window.c). */
enum bx_host_wnd {
	BX_HOSTWND_TX,	/* requests and replies we send */
	BX_HOSTWND_RX,	/* rendezvous data we READ */
	BX_HOSTWND_N,
};

/**
 * struct bx_user - what the open files of one user hold
 * @uid:	the user
 * @files:	its open files (bx_users_lock)
 * @refs:	its files, until each is freed, and the peers charged to it
 *		(bx_users_lock); the last frees it
 * @ops:	operations in flight, RECVs posted (user_ops_max)
 * @peers:	peers its files made, while in the table (user_peers_max)
 * @services:	services bound (user_services_max)
 * @wnd:	its operations' share of each host window (bx_host.lock)
 */
struct bx_user {
	kuid_t		uid;
	unsigned int	files;
	unsigned int	refs;
	atomic_t	ops;
	atomic_t	peers;
	atomic_t	services;
	struct bx_win	wnd[BX_HOSTWND_N];
};

/*
 * What bx allocates for a user: charged to its memory cgroup, and at the
 * cgroup's limit a failure (ENOMEM) rather than the OOM killer, in the
 * process's system calls and in bx's workers alike.
 */
#define BX_GFP_CHARGED	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/*
 * Charge what is allocated with __GFP_ACCOUNT from here on to @memcg
 * (NULL: the caller's own), until bx_memcg_leave() with what this
 * returned; process context.
 */
static inline struct mem_cgroup *bx_memcg_enter(struct mem_cgroup *memcg)
{
	return set_active_memcg(memcg);
}

static inline void bx_memcg_leave(struct mem_cgroup *old)
{
	set_active_memcg(old);
}

struct bx_user *bx_user_get(kuid_t uid);
void bx_user_hold(struct bx_user *u);
void bx_user_close(struct bx_user *u);
void bx_user_put(struct bx_user *u);
unsigned int bx_users_active(void);
bool bx_user_charge(atomic_t *count, unsigned int max);
void bx_user_uncharge(atomic_t *count);

#endif /* _BX_USER_H */
