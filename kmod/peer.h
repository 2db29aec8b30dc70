/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: peers -- the remote hosts, one struct bx_peer each, in a table by
 * id and by (namespace, address) (peer.c), with what recovery keeps of
 * them across connections (recover.c).
 */
#ifndef _BX_PEER_H
#define _BX_PEER_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "flow.h"
#include "replay.h"
#include "wire.h"

#define BX_PEERS_MAX	1024
/* Entries of the peer table only CAP_NET_ADMIN may take (peer.c). */
#define BX_PEERS_RESERVED	64
/* Peer ids go round up to this before one is used again. */
#define BX_PEER_ID_MAX	BIT(20)
#define BX_HOLD_MS	1000U	/* see struct bx_peer, @held */

struct bx_conn;
struct bx_op;

/**
 * struct bx_lane - one of a peer's connections (qps_per_peer of them)
 * @conn:	the connection or connection attempt (ref), or NULL
 * @pending:	operations of this lane waiting for @conn to come up
 */
struct bx_lane {
	struct bx_conn		*conn;
	struct list_head	pending;
};

/**
 * struct bx_peer - a remote host, by the address of its RDMA interface
 * @ref:	the table's, and one per file that resolved it, connection
 *		to it and push or pull towards it (peer.c)
 * @id:		id for BX_IOC_PEER users, and in completions
 * @idle_since:	when reclaim first found only the table holding it (0: not
 *		idle); under bx_peers_lock
 * @gone:	on reclaim's list of peers to free
 * @origin:	who made it (enum bx_peer_origin): a connect request's
 *		count against remote_peers_max while it exists
 * @owner:	the user whose file made it, charged for it until it is
 *		freed (a reference), or NULL
 * @net:	its network namespace: that of the files that resolved it, or
 *		of the listener its connect request came to (net.c)
 * @addr:	address, port bx_port
 * @lock:	protects @lane, @lanes_max, @epoch and @restarts; process
 *		context only
 * @lane:	its connections, by lane (struct bx_lane): a file's
 *		operations go on lane bx_flow_lane() of the file's key
 *		(bx_cm_lane()); the session below is the peer's, shared by
 *		all of them
 * @lanes_max:	lanes the peer takes: BX_LANES_MAX, or fewer once it
 *		refused a lane (its qps_per_peer is lower), until it
 *		restarts
 * @epoch:	the peer's incarnation as its last connection reported it
 *		(0: never connected); a new value means it restarted
 * @restarts:	times a connection found a new incarnation
 * @sess_lock:	a leaf lock, any context: protects the fields below it
 * @tx_seq:	the last number given to a push to this peer
 * @unresolved:	our numbered pushes whose outcome we do not know yet, in
 *		order of number: the first is the floor (replay.h)
 * @parked:	operations in doubt (or not yet sent) after a connection
 *		failure, waiting for @recover_work to send them again
 * @recovering:	@parked is in use; ends at @recover_end (jiffies)
 * @backoff:	delay of the next attempt of @recover_work (ms)
 * @held:	the peer closed or refused our last connection: the next
 *		round of @recover_work waits BX_HOLD_MS before it tries
 * @rp:		which of this peer's pushes we delivered (replay.h)
 * @recoveries, @recovered, @recover_failed: recovery rounds, operations
 *		sent again, and operations that could not be
 * @rec_resent, @rec_failed: ...of those, the current recovery's so far
 *		(its rounds may each send the operations of a lane)
 * @violations:	its connections that ended in a protocol violation (the
 *		refusal that follows is by address: admit.c)
 * @refused:	its connect requests refused
 * @ck:		the last challenge its host sent us: a reconnect within
 *		@ck_until (jiffies; 0: none) answers it at once (cm.c)
 * @recover_work: reconnects with back-off and hands @parked over
 */
struct bx_peer {
	refcount_t		ref;
	u32			id;
	unsigned long		idle_since;
	struct list_head	gone;
	u8			origin;
	struct bx_user		*owner;
	possible_net_t		net;
	struct sockaddr_storage	addr;
	struct mutex		lock;	/* see above */
	struct bx_lane		lane[BX_LANES_MAX];
	u8			lanes_max;
	u64			epoch;
	u32			restarts;

	spinlock_t		sess_lock;	/* see above */
	u64			tx_seq;
	struct list_head	unresolved;
	struct list_head	parked;
	bool			recovering;
	unsigned long		recover_end;
	unsigned int		backoff;
	bool			held;
	struct bx_replay	rp;
	u32			recoveries;
	u64			recovered;
	u64			recover_failed;
	u32			rec_resent;
	u32			rec_failed;
	u32			violations;
	u32			refused;
	struct bx_wire_chal	ck;
	unsigned long		ck_until;

	struct delayed_work	recover_work;
};

/**
 * struct bx_peer_info - a peer at one moment (netlink, debugfs)
 * @id, @addr, @restarts: struct bx_peer's
 * @net:	its network namespace, to compare with (no reference)
 * @parked:	operations parked for recovery now
 * @recoveries, @recovered, @recover_failed: struct bx_peer's
 * @dup_pushes:	its pushes acknowledged and not delivered again
 * @violations, @refused: struct bx_peer's
 * @refusing_ms: how much longer its connect requests are refused
 */
struct bx_peer_info {
	u32			id;
	struct net		*net;
	struct sockaddr_storage	addr;
	u32			restarts;
	u32			parked;
	u32			recoveries;
	u64			recovered;
	u64			recover_failed;
	u64			dup_pushes;
	u32			violations;
	u32			refused;
	u32			refusing_ms;
};

/* Who asks for a peer that may be new (bx_peer_find_or_create()). */
enum bx_peer_origin {
	BX_PEER_LOCAL,	/* a file (BX_IOC_PEER) */
	BX_PEER_ADMIN,	/* a file with CAP_NET_ADMIN: may take the reserve */
	BX_PEER_REMOTE,	/* a connect request, proved (cm.c) */
};

/* The peer table (peer.c). */
bool bx_peer_addr_equal(const struct sockaddr *a, const struct sockaddr *b);
struct bx_user;

struct bx_peer *bx_peer_find_or_create(struct net *net,
				       const struct sockaddr *addr,
				       enum bx_peer_origin origin,
				       struct bx_user *owner);
void bx_peer_put_unused(struct bx_peer *peer);
struct bx_peer *bx_peer_lookup(struct net *net, const struct sockaddr *addr);
struct bx_peer *bx_peer_find(u32 id);
void bx_peer_hold(struct bx_peer *peer);
void bx_peer_put(struct bx_peer *peer);
void bx_peers_each(void (*fn)(struct bx_peer *, void *), void *arg);
unsigned int bx_peers_count(void);
void bx_peer_snapshot(struct bx_peer *peer, struct bx_peer_info *pi);
void bx_peers_stop(void);
void bx_peers_uninit(void);
void bx_peers_net_exit(struct net *net);
void bx_peer_register_recover(work_func_t fn);

static inline struct net *bx_peer_net(const struct bx_peer *peer)
{
	return read_pnet(&peer->net);
}

#endif /* _BX_PEER_H */
