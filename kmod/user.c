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
 *  - peers its files made (BX_IOC_PEER of an address the table did not
 *    hold), for as long as they stay in the table, also after the files
 *    closed: user_peers_max, else ENOSPC (and the peer table keeps a
 *    reserve for CAP_NET_ADMIN);
 *  - services bound: user_services_max, else ENOSPC;
 *  - its share of every window while another user has bx open
 *    (user_wnd_pct; window.c keeps the counts).
 *
 * A count is charged only while it is below its limit, so a limit that
 * is lowered binds at once. A file also bounds its own operations by
 * its completion ring (bx.h).
 */

#include <linux/slab.h>
#include <linux/xarray.h>

#include "params.h"
#include "user.h"

/* uid -> struct bx_user, under bx_users_lock. */
static DEFINE_XARRAY(bx_users);
static DEFINE_MUTEX(bx_users_lock);
/* Users with a file open (bx_user_get() ... bx_user_close()). */
static atomic_t bx_users_open = ATOMIC_INIT(0);

/* The accounting of @uid for a new file of it, with a reference. */
struct bx_user *bx_user_get(kuid_t uid)
{
	unsigned long key = __kuid_val(uid);
	struct bx_user *u;
	int ret;

	mutex_lock(&bx_users_lock);
	u = xa_load(&bx_users, key);
	if (u) {
		if (!u->files++)
			atomic_inc(&bx_users_open);
		u->refs++;
		goto out;
	}
	u = kzalloc(sizeof(*u), BX_GFP_CHARGED);
	if (!u) {
		u = ERR_PTR(-ENOMEM);
		goto out;
	}
	u->uid = uid;
	u->files = 1;
	u->refs = 1;
	ret = xa_err(xa_store(&bx_users, key, u, BX_GFP_CHARGED));
	if (ret) {
		kfree(u);
		u = ERR_PTR(ret);
		goto out;
	}
	atomic_inc(&bx_users_open);
out:
	mutex_unlock(&bx_users_lock);
	return u;
}

/* One more reference to @u (a peer charged to it: peer.c). */
void bx_user_hold(struct bx_user *u)
{
	mutex_lock(&bx_users_lock);
	u->refs++;
	mutex_unlock(&bx_users_lock);
}

/*
 * A file of @u closed: it may still hold operations (and so charges and
 * this reference) until they end; it no longer counts as a user with bx
 * open.
 */
void bx_user_close(struct bx_user *u)
{
	mutex_lock(&bx_users_lock);
	if (!--u->files)
		atomic_dec(&bx_users_open);
	mutex_unlock(&bx_users_lock);
}

/* Drop a reference; with the last, everything it held was uncharged. */
void bx_user_put(struct bx_user *u)
{
	mutex_lock(&bx_users_lock);
	if (!--u->refs) {
		WARN_ON_ONCE(atomic_read(&u->ops) || atomic_read(&u->peers) ||
			     atomic_read(&u->services) || u->files);
		xa_erase(&bx_users, __kuid_val(u->uid));
		kfree(u);
	}
	mutex_unlock(&bx_users_lock);
}

/* How many users have bx open now. */
unsigned int bx_users_active(void)
{
	return atomic_read(&bx_users_open);
}

/*
 * Count one more in @count if it is below @max; false if not (it may be
 * above, after @max was lowered: nothing more until it is below).
 */
bool bx_user_charge(atomic_t *count, unsigned int max)
{
	int old = atomic_read(count);

	do {
		if (old < 0 || (unsigned int)old >= max)
			return false;
	} while (!atomic_try_cmpxchg(count, &old, old + 1));
	return true;
}

void bx_user_uncharge(atomic_t *count)
{
	WARN_ON_ONCE(atomic_dec_return(count) < 0);
}
