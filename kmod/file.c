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

#include <linux/nsproxy.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "conn.h"
#include "file.h"
#include "nl.h"
#include "nl-gen.h"
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

/* Post a completion (unless the file is closed) and retire its slot. */
void bx_file_complete(struct bx_file *f, const struct bx_cqe *cqe)
{
	bool dead;

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

/* Open files, for debugfs "procs". */
static LIST_HEAD(bx_files);
static DEFINE_MUTEX(bx_files_lock);	/* bx_files, bx_files_gen */
/* Changes with every open and release (netlink dump consistency). */
static unsigned int bx_files_gen = 1;

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

int bx_files_show(struct seq_file *m, void *unused)
{
	struct bx_file *f;

	mutex_lock(&bx_files_lock);
	list_for_each_entry(f, &bx_files, node) {
		u32 inflight;

		spin_lock(&f->lock);
		inflight = f->inflight;
		spin_unlock(&f->lock);
		seq_printf(m, "pid %d bytes_tx %lld bytes_rx %lld inflight %u\n",
			   f->tgid, atomic64_read(&f->bytes_tx),
			   atomic64_read(&f->bytes_rx), inflight);
	}
	mutex_unlock(&bx_files_lock);
	return 0;
}

static int file_nl_fill(struct sk_buff *skb, void *file)
{
	struct bx_file *f = file;
	struct bx_region *r = bx_file_region(f);
	u32 inflight;

	spin_lock(&f->lock);
	inflight = f->inflight;
	spin_unlock(&f->lock);
	if (nla_put_u32(skb, BX_A_PROC_PID, f->tgid) ||
	    nla_put_u64_64bit(skb, BX_A_PROC_BYTES_TX,
			      atomic64_read(&f->bytes_tx), BX_A_PROC_PAD) ||
	    nla_put_u64_64bit(skb, BX_A_PROC_BYTES_RX,
			      atomic64_read(&f->bytes_rx), BX_A_PROC_PAD) ||
	    nla_put_u32(skb, BX_A_PROC_INFLIGHT, inflight) ||
	    nla_put_u64_64bit(skb, BX_A_PROC_REGION_BYTES, r ? r->size : 0,
			      BX_A_PROC_PAD))
		return -EMSGSIZE;
	return 0;
}

/*
 * Processes with /dev/bx open in the caller's network namespace. Without
 * CAP_NET_ADMIN a caller sees the files of its own user only: pids and
 * byte counts of others are theirs.
 */
int bx_files_nl_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	bool all = netlink_capable(cb->skb, CAP_NET_ADMIN);
	kuid_t uid = NETLINK_CB(cb->skb).creds.uid;
	struct net *net = sock_net(cb->skb->sk);
	unsigned long i = 0;
	struct bx_file *f;
	int ret = 0;

	mutex_lock(&bx_files_lock);
	cb->seq = bx_files_gen;
	list_for_each_entry(f, &bx_files, node) {
		if (i++ < cb->args[0])
			continue;
		if (!net_eq(f->net, net) || (!all && !uid_eq(f->uid, uid))) {
			cb->args[0] = i;
			continue;
		}
		ret = bx_nl_dump_one(skb, cb, BX_CMD_PROC_GET, file_nl_fill, f);
		if (ret)
			break;
		cb->args[0] = i;
	}
	mutex_unlock(&bx_files_lock);
	return bx_nl_dump_done(skb, ret);
}

/* A new file of the calling process, in its user's and namespace's name. */
struct bx_file *bx_file_new(void)
{
	struct bx_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
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
	f->tgid = task_tgid_nr(current);
	f->net = get_net(current->nsproxy->net_ns);
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

/* The peers @f resolved: its references and its user's charges go. */
static void file_drop_peers(struct bx_file *f)
{
	struct bx_peer *peer;
	unsigned long id;

	xa_for_each(&f->peers, id, peer) {
		xa_erase(&f->peers, id);
		bx_peer_put(peer);
		bx_user_uncharge(&f->user->peers);
	}
}

/*
 * The process closed @f (or died): it leaves the list, its services and
 * requests go (bx_op_file_release()), its peers too; what is in flight
 * keeps the rest until it ends.
 */
void bx_file_close(struct bx_file *f)
{
	mutex_lock(&bx_files_lock);
	list_del(&f->node);
	bx_files_gen++;
	mutex_unlock(&bx_files_lock);
	bx_op_file_release(f);
	file_drop_peers(f);
	bx_file_put(f);
}

/* The region once BX_IOC_SETUP published it, else NULL. */
struct bx_region *bx_file_region(struct bx_file *f)
{
	/* Pairs with the store-release in bx_ioc_setup(). */
	return smp_load_acquire(&f->region);
}

