// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the file object -- what one open /dev/bx is (struct bx_file,
 * file.h): its lifetime, its completions, the list of open files.
 *
 * Lifetime: the open file holds the first reference; every operation in
 * flight holds another, and the region and ring memory have their own
 * references held by the mappings. Closing the file (even by a killed
 * process) releases services and pending requests at once; the memory
 * goes when the last DMA that may touch it has completed.
 */

#include <linux/capability.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>

#include "conn.h"
#include "file.h"
#include "op.h"

static void file_release(struct kref *ref)
{
	struct bx_file *f = container_of(ref, struct bx_file, ref);

	bx_cq_uninit(&f->cq);
	if (f->region)
		bx_region_put(f->region);
	xa_destroy(&f->reqs);
	xa_destroy(&f->peers);
	bx_user_put(f->user);
	mem_cgroup_put(f->memcg);
	put_net(f->net);
	kfree(f);
}

void bx_file_get(struct bx_file *f)
{
	kref_get(&f->ref);
}

void bx_file_put(struct bx_file *f)
{
	kref_put(&f->ref, file_release);
}

/*
 * Post a completion (unless the file is closed) and retire its slot: the
 * one way into a process's completion ring, for what it sent and what it
 * received alike. Bytes a completion reports count as received for a
 * push or request that arrived (BX_CQE_F_PUSH, BX_CQE_F_REQUEST), as
 * sent otherwise; counted before the completion is seen.
 */
void bx_file_complete(struct bx_file *f, const struct bx_cqe *cqe)
{
	bool dead;

	if (cqe->res > 0)
		atomic64_add(cqe->res, cqe->flags &
			     (BX_CQE_F_PUSH | BX_CQE_F_REQUEST) ?
			     &f->bytes_rx : &f->bytes_tx);
	spin_lock(&f->lock);
	dead = f->dead;
	spin_unlock(&f->lock);
	/* Post before retiring, so the ring can never be over-committed. */
	if (!dead)
		bx_cq_post(&f->cq, cqe);
	spin_lock(&f->lock);
	f->inflight--;
	spin_unlock(&f->lock);
	bx_user_uncharge(&f->user->ops);
}

/* Open files, for debugfs "procs" and netlink's proc-get. */
static LIST_HEAD(bx_files);
/* bx_files, bx_files_gen; process context only (open, release, dumps) */
static DEFINE_MUTEX(bx_files_lock);
/* Changes with every open and release (netlink dump consistency). */
static unsigned int bx_files_gen = 1;
/* The last lane key given to a file (struct bx_file, @lane_key). */
static atomic_t bx_files_lanes = ATOMIC_INIT(0);

/* Files open, for sysfs. */
unsigned int bx_files_count(void)
{
	struct bx_file *f;
	unsigned int n = 0;

	mutex_lock(&bx_files_lock);
	list_for_each_entry(f, &bx_files, node)
		n++;
	mutex_unlock(&bx_files_lock);
	return n;
}

/* @f as netlink and debugfs show it. */
static void file_snapshot(struct bx_file *f, struct bx_file_info *fi)
{
	struct bx_region *r = bx_file_region(f);

	fi->pid = f->tgid;
	fi->uid = f->uid;
	fi->net = f->net;
	fi->bytes_tx = atomic64_read(&f->bytes_tx);
	fi->bytes_rx = atomic64_read(&f->bytes_rx);
	spin_lock(&f->lock);
	fi->inflight = f->inflight;
	spin_unlock(&f->lock);
	fi->region_bytes = r ? r->size : 0;
}

/**
 * bx_files_each - call @fn on a snapshot of each open file
 * @pos:	files of the list to skip, then how many are done (a dump
 *		resumes there); NULL: from the first
 * @gen:	if not NULL, set to the list's generation, which changes
 *		with every open and release (a dump's consistency)
 * @fn:		returns nonzero to stop: that file is not done
 * @arg:	for @fn
 *
 * Runs under bx_files_lock, in process context: @fn may sleep. Returns
 * what @fn returned to stop, else 0.
 */
int bx_files_each(unsigned long *pos, unsigned int *gen,
		  int (*fn)(const struct bx_file_info *, void *), void *arg)
{
	unsigned long i = 0, skip = pos ? *pos : 0;
	struct bx_file_info fi;
	struct bx_file *f;
	int ret = 0;

	mutex_lock(&bx_files_lock);
	if (gen)
		*gen = bx_files_gen;
	list_for_each_entry(f, &bx_files, node) {
		if (i++ < skip)
			continue;
		file_snapshot(f, &fi);
		ret = fn(&fi, arg);
		if (ret)
			break;
		if (pos)
			*pos = i;
	}
	mutex_unlock(&bx_files_lock);
	return ret;
}

/*
 * A new file of the calling process for @filp, in its user's and
 * namespace's name. What it may do beyond an unprivileged user's share
 * is decided now, by the opener's credentials (@filp's), never by those
 * of a later caller: a descriptor passed to a less privileged process
 * keeps what its opener had, and no more.
 */
struct bx_file *bx_file_new(struct file *filp)
{
	struct bx_file *f;

	f = kzalloc(sizeof(*f), BX_GFP_CHARGED);
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->uid = current_uid();
	f->user = bx_user_get(f->uid);
	if (IS_ERR(f->user)) {
		int ret = PTR_ERR(f->user);

		kfree(f);
		return ERR_PTR(ret);
	}
	kref_init(&f->ref);
	f->lane_key = atomic_inc_return(&bx_files_lanes);
	f->tgid = task_tgid_nr(current);
	f->net = get_net(current->nsproxy->net_ns);
	/* The host's tables and deadlines: the initial namespace's admin. */
	f->cap_admin = file_ns_capable(filp, &init_user_ns, CAP_NET_ADMIN);
	f->cap_ipc_lock = file_ns_capable(filp, &init_user_ns, CAP_IPC_LOCK);
	/* Services are the file's namespace's, as ports are. */
	f->cap_bind = file_ns_capable(filp, f->net->user_ns,
				      CAP_NET_BIND_SERVICE);
	f->memcg = get_mem_cgroup_from_mm(current->mm);
	xa_init(&f->peers);
	mutex_init(&f->setup_lock);
	spin_lock_init(&f->lock);
	INIT_LIST_HEAD(&f->services);
	xa_init_flags(&f->reqs, XA_FLAGS_ALLOC1);
	mutex_lock(&bx_files_lock);
	list_add_tail(&f->node, &bx_files);
	bx_files_gen++;
	mutex_unlock(&bx_files_lock);
	return f;
}

/*
 * The peers @f resolved: its references go, and a peer that nothing
 * holds any more and that never carried anything goes from the table at
 * once (peer.c), uncharging the user that made it.
 */
static void file_drop_peers(struct bx_file *f)
{
	struct bx_peer *peer;
	unsigned long id;

	xa_for_each(&f->peers, id, peer) {
		xa_erase(&f->peers, id);
		bx_peer_put_unused(peer);
	}
}

/*
 * The process closed @f (or died): it leaves the list of open files,
 * first of all (bx_release() then ends its services and requests).
 */
void bx_file_unlist(struct bx_file *f)
{
	mutex_lock(&bx_files_lock);
	list_del(&f->node);
	bx_files_gen++;
	mutex_unlock(&bx_files_lock);
}

/*
 * ...and once its services and requests went (bx_submit_release()),
 * its peers go too; what is in flight keeps the rest until it ends.
 */
void bx_file_close(struct bx_file *f)
{
	file_drop_peers(f);
	bx_user_close(f->user);
	bx_file_put(f);
}

/* Does a file of user @uid in @net hold peer @peer_id? (netlink) */
bool bx_files_user_holds(struct net *net, kuid_t uid, u32 peer_id)
{
	struct bx_file *f;
	bool holds = false;

	mutex_lock(&bx_files_lock);
	list_for_each_entry(f, &bx_files, node) {
		if (net_eq(f->net, net) && uid_eq(f->uid, uid) &&
		    xa_load(&f->peers, peer_id)) {
			holds = true;
			break;
		}
	}
	mutex_unlock(&bx_files_lock);
	return holds;
}

/* The region once BX_IOC_SETUP published it, else NULL. */
struct bx_region *bx_file_region(struct bx_file *f)
{
	/* Pairs with the store-release in bx_ioc_setup(). */
	return smp_load_acquire(&f->region);
}

