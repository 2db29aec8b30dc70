/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the state of one open /dev/bx.
 */
#ifndef _BX_FILE_H
#define _BX_FILE_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include "cq.h"
#include "region.h"
#include "user.h"

/**
 * struct bx_file - one open /dev/bx
 * @ref:	held by the open file and by every operation, pending
 *		request and service lookup in progress; see bx_file_put()
 * @node:	in the list of open files (debugfs "procs")
 * @tgid:	process that opened it
 * @uid:	its user: unprivileged dumps show a user's own files only
 * @net:	the network namespace it was opened in (a reference): its
 *		services, peers and connections are there (net.c)
 * @user:	its user's accounting (user.c), held until the file is freed
 * @cap_admin:	its opener had CAP_NET_ADMIN (initial user namespace): the
 *		peer table's reserve, operations without a deadline
 * @cap_ipc_lock: its opener had CAP_IPC_LOCK: a region not charged to
 *		RLIMIT_MEMLOCK
 * @cap_bind:	its opener had CAP_NET_BIND_SERVICE in the user namespace
 *		of @net: services below BX_SERVICE_PRIV
 * @memcg:	the memory cgroup of its opener (a reference): what bx
 *		allocates on the file's behalf outside its system calls (flow
 *		queues, scatter lists, RDMA state, server-side requests) is
 *		charged there (bx_memcg_enter())
 * @peers:	peer id -> peer this file resolved (BX_IOC_PEER), each with
 *		a reference; released with the file
 * @setup_lock:	serializes BX_IOC_SETUP against mmap
 * @region:	registered memory, NULL before BX_IOC_SETUP
 * @cq:		completion ring, valid once @region is set
 * @lock:	protects @inflight, @dead, @services and the RECV lists of
 *		those services; process context only
 * @inflight:	operations submitted whose completion is not posted yet
 * @dead:	the file was released; completions are dropped
 * @services:	struct bx_service bound by this file
 * @reqs:	pull requests awaiting BX_OP_REPLY, by token (own lock)
 * @next_token:	where the search for the next token starts (under @lock):
 *		tokens go round all 2^31 values before one is reused, so a
 *		late or repeated REPLY finds its token gone (-ENOENT)
 *		instead of answering a newer request
 * @bytes_tx:	payload bytes sent by this file's operations
 * @bytes_rx:	payload bytes received by this file's services
 * @lane_key:	given at open, one after the other: picks the lane of
 *		each peer its operations go on (bx_flow_lane()), so that a
 *		file keeps to one and files take the lanes in turn
 */
struct bx_file {
	struct kref		ref;
	struct list_head	node;
	pid_t			tgid;
	kuid_t			uid;
	struct net		*net;
	struct bx_user		*user;
	bool			cap_admin;
	bool			cap_ipc_lock;
	bool			cap_bind;
	struct mem_cgroup	*memcg;
	struct xarray		peers;
	struct mutex		setup_lock;	/* BX_IOC_SETUP */
	struct bx_region	*region;
	struct bx_cq		cq;
	spinlock_t		lock;	/* see @lock above */
	u32			inflight;
	bool			dead;
	struct list_head	services;
	struct xarray		reqs;
	u32			next_token;
	atomic64_t		bytes_tx;
	atomic64_t		bytes_rx;
	u32			lane_key;
};

struct file;

struct bx_file *bx_file_new(struct file *filp);

/*
 * Charge what is allocated with __GFP_ACCOUNT from here on to @f's
 * memory cgroup (NULL: a transport object no file asked for: the
 * caller's own), until bx_memcg_leave() (user.h).
 */
static inline struct mem_cgroup *bx_memcg_file(struct bx_file *f)
{
	return bx_memcg_enter(f ? f->memcg : NULL);
}

void bx_file_unlist(struct bx_file *f);
void bx_file_close(struct bx_file *f);
void bx_file_get(struct bx_file *f);
void bx_file_put(struct bx_file *f);
void bx_file_complete(struct bx_file *f, const struct bx_cqe *cqe);
struct bx_region *bx_file_region(struct bx_file *f);

/**
 * struct bx_file_info - an open file at one moment (netlink, debugfs)
 * @pid:	the process that opened it
 * @uid:	its user
 * @net:	its network namespace, to compare with (no reference)
 * @bytes_tx, @bytes_rx: payload bytes sent and received, since the open
 * @inflight:	operations in flight
 * @region_bytes: its region's size (0: no BX_IOC_SETUP yet)
 */
struct bx_file_info {
	pid_t		pid;
	kuid_t		uid;
	struct net	*net;
	s64		bytes_tx;
	s64		bytes_rx;
	u32		inflight;
	u64		region_bytes;
};

unsigned int bx_files_count(void);
bool bx_files_user_holds(struct net *net, kuid_t uid, u32 peer_id);
int bx_files_each(unsigned long *pos, unsigned int *gen,
		  int (*fn)(const struct bx_file_info *, void *), void *arg);

#endif /* _BX_FILE_H */
