// SPDX-License-Identifier: GPL-2.0
/*
 * bx: what each user's processes hold of the host-wide transport.
 *
 * bx owns the RDMA connections of every process of the host, so every
 * shared table and window is also a way for one user to deny them to the
 * others. Each user (by uid, over all its open files) is bounded by its
 * own counts, kept here, never by a value user space can write:
 *
 *  - operations in flight (pushes, pulls, replies, posted RECVs):
 *    user_ops_max, else BX_IOC_SUBMIT fails with EBUSY;
 *  - peers its files resolved (BX_IOC_PEER): user_peers_max, else
 *    ENOSPC (and the peer table keeps a reserve for CAP_NET_ADMIN);
 *  - services bound: user_services_max, else ENOSPC.
 *
 * A file also bounds its own operations by its completion ring (bx.h).
 */

#include <linux/slab.h>
#include <linux/xarray.h>

#include "params.h"
#include "user.h"

/* uid -> struct bx_user, under bx_users_lock (open and release only). */
static DEFINE_XARRAY(bx_users);
static DEFINE_MUTEX(bx_users_lock);

/* The accounting of @uid, with a reference: one per open file. */
struct bx_user *bx_user_get(kuid_t uid)
{
	unsigned long key = __kuid_val(uid);
	struct bx_user *u;
	int ret;

	mutex_lock(&bx_users_lock);
	u = xa_load(&bx_users, key);
	if (u) {
		u->files++;
		goto out;
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u) {
		u = ERR_PTR(-ENOMEM);
		goto out;
	}
	u->uid = uid;
	u->files = 1;
	ret = xa_err(xa_store(&bx_users, key, u, GFP_KERNEL_ACCOUNT));
	if (ret) {
		kfree(u);
		u = ERR_PTR(ret);
	}
out:
	mutex_unlock(&bx_users_lock);
	return u;
}

/* A file of @u was released, with everything it held uncharged. */
void bx_user_put(struct bx_user *u)
{
	mutex_lock(&bx_users_lock);
	if (!--u->files) {
		WARN_ON_ONCE(atomic_read(&u->ops) || atomic_read(&u->peers) ||
			     atomic_read(&u->services));
		xa_erase(&bx_users, __kuid_val(u->uid));
		kfree(u);
	}
	mutex_unlock(&bx_users_lock);
}

/* Count one more in @count unless it is at @max; false if it is. */
bool bx_user_charge(atomic_t *count, unsigned int max)
{
	return atomic_add_unless(count, 1, max);
}

void bx_user_uncharge(atomic_t *count)
{
	WARN_ON_ONCE(atomic_dec_return(count) < 0);
}
