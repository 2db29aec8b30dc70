/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * What bxps's files share (bxps.c: nodes, rendezvous, the progress
 * thread, sending; bxps_kv.c: requests and handlers; bxps_store.c: the
 * default handler's store). Not installed.
 */
#ifndef BX_BXPS_INT_H
#define BX_BXPS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bxps.h"
#include "libbx.h"
#include "ps_wire.h"

/* Receive buffers: small ones on service, msg_max ones on service + 1. */
#define PS_SMALL_CAP	16384u
#define PS_NSMALL	32u
#define PS_NLARGE	8u
#define PS_MAX_NODES	256u
#define PS_WATCH_MS	120000u		/* a watch pull's deadline */
#define PS_ALIVE_MS	30000u		/* a parked watch is answered after */
#define PS_RETRY_MAX	20000		/* sends of one message without a buffer */
#define PS_LOCAL_MAX	(2 * PS_MAX_NODES)	/* same-host connections */
#define PS_LOCAL_QMAX	4u	/* messages of msg_max queued per connection */
#define PS_LOCAL_RETRY_MS 10	/* a starved frame's next try for memory */

enum io_kind { IO_RECV = 1, IO_SEND, IO_CTRL, IO_WATCH, IO_REPLY };

/* One bx operation in flight; its user_data. */
struct io {
	enum io_kind	kind;
	struct io	*next;		/* pending/retry lists */
	/* RECV: the buffer; which service (0 small, 1 large) */
	void		*buf;
	uint32_t	cap;
	uint32_t	which;
	/* SEND: message to node @to; what to free when sent */
	int		to;		/* node index */
	struct bx_vec	vec[BX_VEC_MAX];
	unsigned int	nvec;
	uint32_t	len;
	void		*scratch;	/* region buffer: header and copies */
	struct preq	*req;		/* a request's part, or NULL */
	uint32_t	part;
	int		tries;
	uint64_t	retry_at;	/* ms, CLOCK_MONOTONIC */
	/* CTRL, WATCH: request buffer (scratch), answer buffer */
	void		*resp;
	uint32_t	resp_cap;
	struct ctrl_wait *wait;
	/* REPLY: token */
	uint64_t	token;
	/* Same-host (bxps_local.c): its request number, completion list */
	uint32_t	lid;
	int		lres;
	struct io	*lnext;
};

/* A synchronous control call (register, barrier) waiting for its answer. */
struct ctrl_wait {
	bool		done;
	int		res;
};

struct node {
	uint32_t	id;
	uint32_t	role;
	uint32_t	service;
	char		addr[PSW_ADDR_LEN];
	uint32_t	peer;		/* bx peer id */
	bool		dead;
	bool		gone;		/* finalized (said bye) */
	bool		local;		/* another node of this host */
	int		lconn;		/* its connection (bxps_local.c) + 1; 0: none */
	int		err;		/* why dead */
};

struct lout;

/* A Unix stream connection to or from a node of this host. */
struct lconn {
	int		fd;		/* -1: a free slot */
	uint16_t	gen;		/* counts the slot's connections */
	int		node;		/* ours: its node index; theirs: -1 */
	/* the frame being read (the progress thread's) */
	uint8_t		hdr[16];
	uint32_t	hgot;
	void		*body;		/* region buffer */
	uint32_t	bgot;
	bool		starved;	/* its body found no region memory */
	/* frames to write, our requests waiting for their replies */
	struct lout	*out, **out_tail;
	uint32_t	out_off;
	uint64_t	out_bytes;	/* queued: messages wait past PS_LOCAL_QMAX */
	struct io	*reqs;
};

/* A parked watch (another node's pull) or barrier arrival (scheduler). */
struct parked {
	uint64_t	token;
	int		node;		/* index; -1: the scheduler itself */
	uint32_t	group;
	struct parked	*next;
};

/* One part of a request: the messages to and from one node. */
struct part {
	int		node;		/* index */
	bool		answered;
	void		*msgbuf;	/* the answer's receive buffer, kept */
	struct psw_msg	msg;
};

struct preq {
	int64_t		id;
	struct preq	*hnext;
	struct preq	*dnext;		/* fail_where()'s list */
	uint8_t		flags;		/* PSW_F_* */
	int		dtype;
	bxps_done_fn	done;
	bxps_each_fn	each;
	void		*arg;
	void		*out;
	uint64_t	out_cap;
	int32_t		*out_lens;
	int		left;		/* parts not answered */
	int		status;
	int		rank;
	bool		finished;	/* result assembled, callback run */
	int		ios;		/* its sends in flight: keep it */
	bool		has_result;
	struct bxps_result res;
	uint32_t	nparts;
	struct part	parts[];
};

struct app;

#define PS_HASH		1024u

struct bxps {
	struct bx	*bx;
	struct bxps_cfg	cfg;
	char		host[PSW_ADDR_LEN];
	uint32_t	service;	/* own: small; + 1: large */
	uint32_t	id;
	uint32_t	role;
	uint32_t	rank;
	uint32_t	nnodes;
	struct node	nodes[PS_MAX_NODES];
	int		self;		/* index of this node */
	uint32_t	msg_max;
	void		*alive_buf, *bye_buf;	/* watch answers (region) */

	pthread_t	thread;
	bool		started;
	volatile bool	stop;

	/*
	 * @lock guards everything below, taken by callers and the progress
	 * thread; callbacks and handlers run without it. @cv: a request
	 * done, a control call answered, a node dead.
	 */
	pthread_mutex_t	lock;
	pthread_cond_t	cv;
	struct io	*pending;	/* to submit (the ring was full) */
	struct io	*retry;		/* to send again later */
	int		recv_deficit[2];	/* buffers not reposted */
	struct parked	*watches;	/* watches parked here */
	uint64_t	alive_at;
	/* requests */
	int64_t		next_id;
	struct preq	*hash[PS_HASH];
	uint64_t	*status;	/* per id: done, status, rank */
	int64_t		status_len;
	/*
	 * Apps and requests nobody handles yet (only the progress thread
	 * adds to or takes from @unclaimed); @drain: a handler came, the
	 * progress thread hands it what waited.
	 */
	struct app	*apps;
	struct qreq	*unclaimed, **unclaimed_tail;
	bool		drain;
	struct bxps_stats stats;
	/* scheduler */
	struct parked	*barrier[8];	/* per group: arrivals */
	uint64_t	barrier_gen[8];
	struct parked	*regs;		/* registrations parked */
	struct psw_node	reg_nodes[PS_MAX_NODES];
	uint32_t	nregs;

	/*
	 * Same-host nodes (bxps_local.c): @llock guards @lc's slots, their
	 * output and requests, @ldone and nodes' @lconn; the progress
	 * thread alone reads. @lfd listens; @lwake wakes the progress
	 * thread. Taken before @lock, never inside it.
	 */
	pthread_mutex_t	llock;
	int		lfd, lwake;
	struct lconn	lc[PS_LOCAL_MAX];
	struct io	*ldone, **ldone_tail;	/* completed, to report */
	uint32_t	lnext_id;
};

/* bxps.c */
uint64_t ps_now_ms(void);
int ps_submit(struct bxps *n, struct io *io);
/* Send @nseg pieces (in or out of the region) as one message to node @to. */
int ps_send(struct bxps *n, int to, const void *const *seg,
	    const uint64_t *seglen, unsigned int nseg, struct preq *req,
	    uint32_t part);
int ps_node_index(const struct bxps *n, uint32_t id);
void ps_recv_done(struct bxps *n, uint32_t which, void *buf);
void ps_on_cqe(struct bxps *n, const struct bx_cqe *cqe);
/* A control request (a pull) of @len bytes at @buf, answered by @token. */
void ps_on_request(struct bxps *n, const void *buf, uint32_t len,
		   uint64_t token);

/* bxps_local.c */
int ps_local_init(struct bxps *n);
void ps_local_fini(struct bxps *n);
bool ps_local_io(const struct bxps *n, const struct io *io);
int ps_local_submit(struct bxps *n, struct io *io);
void ps_local_poll(struct bxps *n, int timeout_ms);

/* bxps_kv.c */
void ps_on_message(struct bxps *n, void *buf, uint32_t len, uint32_t which);
void ps_part_fail(struct bxps *n, struct preq *r, uint32_t part, int err);
void ps_req_put_io(struct bxps *n, struct preq *r);
void ps_node_died(struct bxps *n, int idx);
void ps_fail_all(struct bxps *n, int err);
void ps_apps_stop(struct bxps *n);
void ps_apps_drain(struct bxps *n);
void ps_apps_free(struct bxps *n);

#endif /* BX_BXPS_INT_H */
