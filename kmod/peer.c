// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the peer table.
 *
 * A peer is a remote host, by the address of its RDMA interface, with
 * what bx remembers of it across connections: the numbering of our
 * pushes to it and the record of its pushes we delivered (replay.h), its
 * restarts, its violations. Peers come from BX_IOC_PEER and from connect
 * requests.
 *
 * Lifetime. The table holds one reference to every peer in it; each file
 * that resolved the peer (BX_IOC_PEER), each connection to it and each
 * push or pull towards it holds another. A peer that only the table
 * holds is idle; once it stayed idle for peer_linger_ms, and is not
 * being refused after a violation, bx_peers_reclaim() takes it out of the
 * table and frees it. The linger keeps the replay record of a peer that
 * will reconnect to send its pushes again (it gives up on them after its
 * recover_ms): peer_linger_ms should not be shorter than the peers'
 * recover_ms. Ids are handed out cyclically, so a reclaimed peer's id is
 * not soon given to another.
 *
 * The table is bounded (BX_PEERS_MAX); the last BX_PEERS_RESERVED
 * entries are for callers with CAP_NET_ADMIN, so that unprivileged users
 * (each also bounded, user.c) and remote hosts cannot take every entry
 * root needs.
 */

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <net/ipv6.h>

#include "admit.h"
#include "conn.h"
#include "params.h"

/* id -> peer; lookups by id under xa_lock, as is removal. */
static DEFINE_XARRAY_ALLOC1(bx_peers);
static u32 bx_peers_next;
/*
 * Serializes creation, lookups by address and reclaim, and walks that
 * look at every peer; process context only.
 */
static DEFINE_MUTEX(bx_peers_lock);
static unsigned int bx_npeers;	/* under bx_peers_lock */
static unsigned int bx_npeers_remote;	/* ...made by connect requests */

/*
 * A peer's recovery (recover.c, bx_recover_work()), registered at
 * load before any peer exists.
 */
static work_func_t peer_recover_fn __read_mostly;

void bx_peer_register_recover(work_func_t fn)
{
	peer_recover_fn = fn;
}

static void peers_reclaim_work(struct work_struct *work);
static DECLARE_DELAYED_WORK(bx_peers_gc, peers_reclaim_work);

bool bx_peer_addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr);
}

void bx_peer_hold(struct bx_peer *peer)
{
	refcount_inc(&peer->ref);
}

/* Drop a reference; the table's own is dropped by reclaim alone. */
void bx_peer_put(struct bx_peer *peer)
{
	refcount_dec(&peer->ref);
}

/* The peer of @addr in @net, with a reference; bx_peers_lock held. */
static struct bx_peer *peer_by_addr(struct net *net,
				    const struct sockaddr *addr)
{
	struct bx_peer *peer;
	unsigned long id;

	lockdep_assert_held(&bx_peers_lock);
	xa_for_each(&bx_peers, id, peer) {
		if (net_eq(bx_peer_net(peer), net) &&
		    bx_peer_addr_equal((struct sockaddr *)&peer->addr, addr)) {
			bx_peer_hold(peer);
			return peer;
		}
	}
	return NULL;
}

/*
 * The peer of @addr in @net, created if there is none, with a reference
 * for the caller. -ENOSPC when the table is full, or has only its reserve
 * left and @origin is not BX_PEER_ADMIN (a caller with CAP_NET_ADMIN),
 * or for a connect request when remote_peers_max peers come from connect
 * requests already: hosts that connect to us cannot take the entries
 * local users need. A new peer a file makes is charged to its user
 * @owner for as long as it stays in the table (-ENOSPC past
 * user_peers_max). The peer holds no reference to @net: a namespace's
 * peers are those of its files and of its listener, which hold it.
 */
struct bx_peer *bx_peer_find_or_create(struct net *net,
				       const struct sockaddr *addr,
				       enum bx_peer_origin origin,
				       struct bx_user *owner)
{
	unsigned int max = BX_PEERS_MAX -
			   (origin == BX_PEER_ADMIN ? 0 : BX_PEERS_RESERVED);
	struct bx_peer *peer;
	u32 new_id;
	int ret, i;

	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return ERR_PTR(-EAFNOSUPPORT);

	mutex_lock(&bx_peers_lock);
	peer = peer_by_addr(net, addr);
	if (peer)
		goto out;
	if (bx_npeers >= max ||
	    (origin == BX_PEER_REMOTE &&
	     bx_npeers_remote >= READ_ONCE(bx_remote_peers_max))) {
		peer = ERR_PTR(-ENOSPC);
		goto out;
	}
	if (owner && !bx_user_charge(&owner->peers,
				     READ_ONCE(bx_user_peers_max))) {
		peer = ERR_PTR(-ENOSPC);
		goto out;
	}
	/* A remote host's is no one's: the table's bound is its bound. */
	peer = kzalloc(sizeof(*peer), owner ? BX_GFP_CHARGED : GFP_KERNEL);
	if (!peer) {
		if (owner)
			bx_user_uncharge(&owner->peers);
		peer = ERR_PTR(-ENOMEM);
		goto out;
	}
	/* The table's reference and the caller's. */
	refcount_set(&peer->ref, 2);
	write_pnet(&peer->net, net);
	mutex_init(&peer->lock);
	for (i = 0; i < BX_LANES_MAX; i++)
		INIT_LIST_HEAD(&peer->lane[i].pending);
	peer->lanes_max = BX_LANES_MAX;
	spin_lock_init(&peer->sess_lock);
	INIT_LIST_HEAD(&peer->unresolved);
	INIT_LIST_HEAD(&peer->parked);
	INIT_DELAYED_WORK(&peer->recover_work, peer_recover_fn);
	if (addr->sa_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&peer->addr;

		*sin = *(const struct sockaddr_in *)addr;
		sin->sin_port = htons(bx_port);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&peer->addr;

		*sin6 = *(const struct sockaddr_in6 *)addr;
		sin6->sin6_port = htons(bx_port);
	}
	ret = xa_alloc_cyclic(&bx_peers, &new_id, peer,
			      XA_LIMIT(1, BX_PEER_ID_MAX), &bx_peers_next,
			      GFP_KERNEL);
	if (ret < 0) {
		kfree(peer);
		if (owner)
			bx_user_uncharge(&owner->peers);
		peer = ERR_PTR(ret == -EBUSY ? -ENOSPC : ret);
		goto out;
	}
	peer->id = new_id;
	peer->origin = origin;
	if (owner) {
		bx_user_hold(owner);
		peer->owner = owner;
	}
	bx_npeers++;
	if (origin == BX_PEER_REMOTE)
		bx_npeers_remote++;
	mod_delayed_work(bx_conn_wq, &bx_peers_gc, 0);
out:
	mutex_unlock(&bx_peers_lock);
	return peer;
}

/* The peer of @addr in @net if there is one, with a reference; else NULL. */
struct bx_peer *bx_peer_lookup(struct net *net, const struct sockaddr *addr)
{
	struct bx_peer *peer;

	mutex_lock(&bx_peers_lock);
	peer = peer_by_addr(net, addr);
	mutex_unlock(&bx_peers_lock);
	return peer;
}

/* The peer with id @id, with a reference; else NULL. Any context. */
struct bx_peer *bx_peer_find(u32 id)
{
	struct bx_peer *peer;

	xa_lock(&bx_peers);
	peer = xa_load(&bx_peers, id);
	if (peer)
		bx_peer_hold(peer);
	xa_unlock(&bx_peers);
	return peer;
}

/* Call @fn on every peer (under bx_peers_lock): for counts and dumps. */
void bx_peers_each(void (*fn)(struct bx_peer *, void *), void *arg)
{
	struct bx_peer *peer;
	unsigned long id;

	mutex_lock(&bx_peers_lock);
	xa_for_each(&bx_peers, id, peer)
		fn(peer, arg);
	mutex_unlock(&bx_peers_lock);
}

unsigned int bx_peers_count(void)
{
	unsigned int n;

	mutex_lock(&bx_peers_lock);
	n = bx_npeers;
	mutex_unlock(&bx_peers_lock);
	return n;
}

/*
 * @peer as netlink and debugfs show it: with its connection, and alone
 * in a recovery event. Takes @sess_lock.
 */
void bx_peer_snapshot(struct bx_peer *peer, struct bx_peer_info *pi)
{
	pi->id = peer->id;
	pi->net = bx_peer_net(peer);
	pi->addr = peer->addr;
	pi->restarts = READ_ONCE(peer->restarts);
	spin_lock(&peer->sess_lock);
	pi->parked = list_count_nodes(&peer->parked);
	pi->recoveries = peer->recoveries;
	pi->recovered = peer->recovered;
	pi->recover_failed = peer->recover_failed;
	pi->dup_pushes = peer->rp.dups;
	pi->violations = peer->violations;
	pi->refused = peer->refused;
	spin_unlock(&peer->sess_lock);
	pi->refusing_ms = bx_admit_refusing((struct sockaddr *)&peer->addr);
}

/* @peer left the table: uncount it; bx_peers_lock held. */
static void peer_unlist(struct bx_peer *peer)
{
	lockdep_assert_held(&bx_peers_lock);
	bx_npeers--;
	if (peer->origin == BX_PEER_REMOTE)
		bx_npeers_remote--;
}

static void peer_free(struct bx_peer *peer)
{
	int i;

	cancel_delayed_work_sync(&peer->recover_work);
	for (i = 0; i < BX_LANES_MAX; i++)
		WARN_ON_ONCE(!list_empty(&peer->lane[i].pending));
	WARN_ON_ONCE(!list_empty(&peer->parked));
	if (peer->owner) {
		bx_user_uncharge(&peer->owner->peers);
		bx_user_put(peer->owner);
	}
	mutex_destroy(&peer->lock);
	kfree(peer);
}

/*
 * Has @peer never carried anything? No connection of it came up, none of
 * our pushes was numbered for it, it has no replay record and broke no
 * rule: there is nothing to keep of it. bx_peers_lock held.
 */
static bool peer_unused(struct bx_peer *peer)
{
	bool unused;

	spin_lock(&peer->sess_lock);
	unused = !peer->tx_seq && !peer->rp.epoch && !peer->violations &&
		 !peer->recovering;
	spin_unlock(&peer->sess_lock);
	return unused && !READ_ONCE(peer->epoch);
}

/*
 * Drop a file's reference to @peer; if only the table holds it now and
 * it never carried anything, it goes at once rather than lingering
 * (peer_linger_ms keeps what a peer's recovery needs, and an unused one
 * has none): a user that opens, fills and closes files cannot keep
 * entries of the table.
 */
void bx_peer_put_unused(struct bx_peer *peer)
{
	bool gone = false;

	mutex_lock(&bx_peers_lock);
	bx_peer_put(peer);
	if (peer_unused(peer)) {
		xa_lock(&bx_peers);
		/* A lookup by id may have taken one meanwhile. */
		if (refcount_read(&peer->ref) == 1) {
			__xa_erase(&bx_peers, peer->id);
			peer_unlist(peer);
			gone = true;
		}
		xa_unlock(&bx_peers);
	}
	mutex_unlock(&bx_peers_lock);
	if (gone)
		peer_free(peer);
}

/*
 * Is @peer idle long enough to go? Only the table holds it, no recovery
 * runs, and it was so at the last look and for
 * peer_linger_ms. bx_peers_lock held.
 */
static bool peer_expired(struct bx_peer *peer, unsigned long linger)
{
	bool idle;

	spin_lock(&peer->sess_lock);
	idle = refcount_read(&peer->ref) == 1 && !peer->recovering;
	spin_unlock(&peer->sess_lock);
	if (!idle) {
		peer->idle_since = 0;
		return false;
	}
	if (!peer->idle_since) {
		/* 0 means busy: a jiffies value of 0 counts from 1. */
		peer->idle_since = jiffies ?: 1;
		return !linger;
	}
	return time_after_eq(jiffies, peer->idle_since + linger);
}

/*
 * Take the peers that stayed idle for peer_linger_ms out of the table and
 * free them; look again in a while if any peer is left.
 */
static void peers_reclaim_work(struct work_struct *work)
{
	unsigned long linger = msecs_to_jiffies(READ_ONCE(bx_peer_linger_ms));
	struct bx_peer *peer;
	unsigned long id;
	LIST_HEAD(gone);
	bool left;

	mutex_lock(&bx_peers_lock);
	xa_for_each(&bx_peers, id, peer) {
		if (!peer_expired(peer, linger))
			continue;
		xa_lock(&bx_peers);
		/* A lookup by id may have taken one meanwhile. */
		if (refcount_read(&peer->ref) == 1) {
			__xa_erase(&bx_peers, id);
			list_add(&peer->gone, &gone);
			peer_unlist(peer);
		}
		xa_unlock(&bx_peers);
	}
	left = bx_npeers;
	mutex_unlock(&bx_peers_lock);

	while (!list_empty(&gone)) {
		peer = list_first_entry(&gone, struct bx_peer, gone);
		list_del(&peer->gone);
		peer_free(peer);
	}
	if (left)
		queue_delayed_work(bx_conn_wq, &bx_peers_gc,
				   clamp(linger / 2, HZ / 10, 5UL * HZ));
}

/*
 * Network namespace @net is going (net.c): its files and connections'
 * ids, which held it, are gone. Its idle peers go now; one still held (a
 * connection's last operations ending) forgets the namespace, so that it
 * matches no other that may come where @net was, makes no connection
 * (bx_cm_lane_conn()), and is reclaimed once idle.
 */
void bx_peers_net_exit(struct net *net)
{
	struct bx_peer *peer;
	unsigned long id;
	LIST_HEAD(gone);

	mutex_lock(&bx_peers_lock);
	xa_for_each(&bx_peers, id, peer) {
		if (!net_eq(bx_peer_net(peer), net))
			continue;
		xa_lock(&bx_peers);
		if (refcount_read(&peer->ref) == 1) {
			__xa_erase(&bx_peers, id);
			list_add(&peer->gone, &gone);
			peer_unlist(peer);
		} else {
			write_pnet(&peer->net, NULL);
		}
		xa_unlock(&bx_peers);
	}
	mutex_unlock(&bx_peers_lock);
	while (!list_empty(&gone)) {
		peer = list_first_entry(&gone, struct bx_peer, gone);
		list_del(&peer->gone);
		peer_free(peer);
	}
}

/* At unload, after every connection and recovery ended: all of them. */
void bx_peers_uninit(void)
{
	struct bx_peer *peer;
	unsigned long id;

	cancel_delayed_work_sync(&bx_peers_gc);
	xa_for_each(&bx_peers, id, peer)
		peer_free(peer);
	xa_destroy(&bx_peers);
	bx_npeers = 0;
	bx_npeers_remote = 0;
}

/* At unload, before the connections go: stop reclaiming. */
void bx_peers_stop(void)
{
	cancel_delayed_work_sync(&bx_peers_gc);
}
