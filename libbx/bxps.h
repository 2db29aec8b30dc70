/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * bxps: ps-lite's model over bx, asynchronous, in C; part of libbx (link
 * with -lbx; installed as <bx/bxps.h>). The C++ headers <ps/ps.h> are
 * built on it (Documentation/pslite.rst has the mapping).
 *
 * Nodes. A job is one scheduler, S servers and W workers, each a process
 * with a struct bxps (bxps_start()). The scheduler's address and port
 * are known to all (DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT): it binds the
 * bx services PORT and PORT + 1; every other node binds the first free
 * pair PORT + 2k, PORT + 2k + 1 (k >= 1) of its host, registers with the
 * scheduler (a bx pull), and gets when all S + W have registered the
 * table of nodes, its id and rank (ps-lite's: scheduler 1, server r
 * 8 + 2r, worker r 9 + 2r; ranks in the order of registration). Server r
 * owns keys [r * (2^64 - 1) / S, (r + 1) * (2^64 - 1) / S) (the last up
 * to 2^64 - 1, ps-lite's kMaxKey, itself no key).
 *
 * Every node watches every other: a pull parked at the other node, which
 * answers it when it finalizes (or every 30 s, to be asked again). A
 * node whose process dies has its pulls refused by its kernel at once
 * (ECONNABORTED), a node whose host is gone is given up by bx after its
 * recovery time: either way it is marked dead, its requests in flight
 * fail with its rank, new ones to it fail at once, and barriers stop
 * waiting for it.
 *
 * Requests. bxps_push(), _pull() and _pushpull() split their keys
 * (strictly ascending) over the servers, send one message to each server
 * concerned and return a request id at once; the request is done when
 * every server answered (or failed). Then its callback runs (in the
 * node's progress thread), and bxps_wait() / bxps_test() return its
 * status: 0, or the first error with the rank of the server that gave
 * it. Any thread may have any number of requests outstanding. Values are
 * raw bytes of an element type (BXPS_F32, ...), with a length per key
 * (lens) or the same for all (val_bytes / nkeys). A message larger than
 * the node's msg_max (bxps_cfg) is refused (-EMSGSIZE).
 *
 * Servers. A handler per application id gets each request whole (struct
 * bxps_req: sender, id, cmd, push/pull, keys, values, lens) and answers
 * it with bxps_respond() or bxps_respond_err(), then or later, from any
 * thread; it releases the request's buffer with bxps_req_release() when
 * done with its keys and values (which point into the received message:
 * no copy). Handlers run in the progress thread, or in @nthreads threads
 * of their own, a request going to the thread of its first key's part of
 * the server's range. bxps_handle_sum() is the default handler: it sums
 * pushes into a store and answers pulls from it.
 *
 * Copies. A push's keys and values are sent from where they are when
 * they lie in the node's bx region (bxps_alloc()), else copied once into
 * it; an answer is always copied once (its sender frees what it
 * answered from at once); a received message is read where it landed; a
 * pull's answer is copied once from its receive buffer to the caller's
 * memory. The counters (bxps_stats()) count the bytes copied and not.
 *
 * Functions return 0 (or a non-negative id or count) or a negative errno.
 */
#ifndef LIBBX_BXPS_H
#define LIBBX_BXPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Roles; as groups (bxps_barrier()) they may be or'ed. */
#define BXPS_SCHEDULER	1
#define BXPS_SERVER	2
#define BXPS_WORKER	4
#define BXPS_ALL	7

/* Element types. */
#define BXPS_F32	1
#define BXPS_F64	2
#define BXPS_F16	3
#define BXPS_BF16	4
#define BXPS_I32	5
#define BXPS_I64	6
#define BXPS_U8		7
#define BXPS_U64	8

/** bxps_dtype_size() - bytes of one element; 0: no such type. */
unsigned int bxps_dtype_size(int dtype);

/**
 * struct bxps_cfg - a node
 * @role:        BXPS_SCHEDULER, _SERVER or _WORKER
 * @num_servers, @num_workers: of the job (>= 1 each)
 * @root_uri:    the scheduler's address (IPv4 or IPv6, text)
 * @root_port:   the scheduler's bx service (1..2^32 - 3)
 * @host:        this node's address as the others reach it; NULL: the
 *               address the host routes to @root_uri from
 * @msg_max:     bytes of the largest message; 0: 2 MiB + 64 KiB
 * @region_mb:   the node's bx region; 0: 64 (MiB)
 * @timeout_ms:  bxps_start()'s wait for the job to assemble; 0: 120 s
 */
struct bxps_cfg {
	int		role;
	int		num_servers;
	int		num_workers;
	const char	*root_uri;
	uint32_t	root_port;
	const char	*host;
	uint32_t	msg_max;
	uint32_t	region_mb;
	int		timeout_ms;
};

/**
 * bxps_cfg_env() - fill @cfg from ps-lite's environment: DMLC_ROLE
 * (scheduler, server, worker), DMLC_NUM_SERVER, DMLC_NUM_WORKER,
 * DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT, DMLC_NODE_HOST (optional), and
 * bx's BXPS_MSG_MAX, BXPS_REGION_MB, BXPS_TIMEOUT_MS (optional).
 * The strings point into the environment. Return: 0; -EINVAL naming
 * nothing (a variable missing or malformed: *@bad is its name).
 */
int bxps_cfg_env(struct bxps_cfg *cfg, const char **bad);

struct bxps;

/**
 * bxps_start() - open /dev/bx, bind, register with the scheduler and
 * wait until every node has (the scheduler: until all registered).
 * Return: 0; -EINVAL; -ETIMEDOUT; bx errors.
 */
int bxps_start(struct bxps **out, const struct bxps_cfg *cfg);

/**
 * bxps_finalize() - with @barrier, meet every live node at a barrier;
 * then answer the watches (others see this node leave, not die), stop
 * and free everything (requests still in flight fail -ECANCELED).
 */
int bxps_finalize(struct bxps *n, int barrier);

/**
 * bxps_barrier() - wait until every live node of @group (BXPS_* or'ed;
 * this node must be in it) called it. Return: 0, -ECONNABORTED when the
 * scheduler is gone.
 */
int bxps_barrier(struct bxps *n, int group);

int bxps_role(const struct bxps *n);
/** bxps_id() - this node's id; bxps_rank() - its rank in its role. */
int bxps_id(const struct bxps *n);
int bxps_rank(const struct bxps *n);
int bxps_num_servers(const struct bxps *n);
int bxps_num_workers(const struct bxps *n);
/** bxps_server_range() - server @rank's keys: [*begin, *end). */
void bxps_server_range(const struct bxps *n, int rank, uint64_t *begin,
		       uint64_t *end);
/** bxps_node_dead() - 1 if node @id is dead (0 alive, -ENOENT). */
int bxps_node_dead(struct bxps *n, int id);
/** bxps_node_ids() - the ids of @group (up to @max); returns the count. */
int bxps_node_ids(const struct bxps *n, int group, int *ids, int max);

/** bxps_alloc() - a buffer in the node's region (sent without a copy). */
void *bxps_alloc(struct bxps *n, size_t size);
/** bxps_free() - free it (NULL is ignored). */
void bxps_free(struct bxps *n, void *buf);
/** bxps_region() - the region's start; its bytes in *@size. */
void *bxps_region(const struct bxps *n, uint64_t *size);
/** bxps_in_region() - 1 if [@p, @p + @len) lies in the region. */
int bxps_in_region(const struct bxps *n, const void *p, size_t len);

/**
 * struct bxps_kv - keys and values
 * @keys:      @nkeys keys, strictly ascending
 * @vals:      @val_bytes bytes of values in key order
 * @lens:      NULL (each key val_bytes / nkeys bytes), or each key's
 *             elements (>= 0)
 */
struct bxps_kv {
	const uint64_t	*keys;
	uint32_t	nkeys;
	const void	*vals;
	uint64_t	val_bytes;
	const int32_t	*lens;
};

/*
 * A request is done: @status 0 or a negative errno, @rank the rank of
 * the server (or node id of a SimpleApp receiver) that failed, -1: none.
 */
typedef void (*bxps_done_fn)(struct bxps *n, int64_t id, int status,
			     int rank, void *arg);

struct bxps_req;
/*
 * One answer of a SimpleApp request, as it comes (in the progress
 * thread): @resp's sender, cmd (the head), body, id.
 */
typedef void (*bxps_each_fn)(struct bxps *n, const struct bxps_req *resp,
			     void *arg);

/**
 * struct bxps_opts - what a request carries besides its keys
 * @app, @customer: ps-lite's app_id and customer_id
 * @dtype:     element type
 * @cmd:       passed to the server's handler
 * @priority:  passed to the server's handler
 * @done:      called when the request is done (NULL: none)
 * @each:      SimpleApp: called for each answer (NULL: none; the bodies
 *             are then kept for bxps_result())
 * @arg:       for @done and @each
 * @out:       pull: where the values go (@out_cap bytes), or NULL: the
 *             library keeps them for bxps_result()
 * @out_lens:  pull: where each key's length goes (nkeys), or NULL
 */
struct bxps_opts {
	int		app;
	int		customer;
	int		dtype;
	int		cmd;
	int		priority;
	bxps_done_fn	done;
	bxps_each_fn	each;
	void		*arg;
	void		*out;
	uint64_t	out_cap;
	int32_t		*out_lens;
};

/**
 * bxps_push() - send @kv to the servers owning its keys; they apply it
 * bxps_pull() - ask them for the values of @kv's keys (@kv->vals unused;
 *               @kv->lens, if set, the lengths expected)
 * bxps_pushpull() - push, then answer with the values after it
 * Return: the request id (>= 0), at once; -EINVAL (keys not ascending,
 * values not matching the lengths), -EMSGSIZE, -ENOMEM. Errors of the
 * servers come with the request's completion.
 */
int64_t bxps_push(struct bxps *n, const struct bxps_opts *o,
		  const struct bxps_kv *kv);
int64_t bxps_pull(struct bxps *n, const struct bxps_opts *o,
		  const struct bxps_kv *kv);
int64_t bxps_pushpull(struct bxps *n, const struct bxps_opts *o,
		      const struct bxps_kv *kv);

/* bxps_sliced()'s @what: or'ed */
#define BXPS_OP_PUSH	1
#define BXPS_OP_PULL	2

/**
 * struct bxps_slice - one server's part of a request (bxps_sliced())
 * @server:    the server's rank
 * @kv:        its keys (at least one, ascending), values and lengths
 */
struct bxps_slice {
	int		server;
	struct bxps_kv	kv;
};

/**
 * bxps_sliced() - a push (@what BXPS_OP_PUSH), pull (BXPS_OP_PULL) or
 * push-pull (both) whose keys the caller split: each of the @nslices
 * slices goes to its server, whatever key ranges the servers own (ps-lite's
 * KVWorker::set_slicer). A pull's answers are put together in the order
 * of the slices. Return: as bxps_push(); -EINVAL also for a server rank
 * out of range, an empty slice or more than 256 slices.
 */
int64_t bxps_sliced(struct bxps *n, const struct bxps_opts *o, int what,
		    const struct bxps_slice *slices, uint32_t nslices);

/**
 * bxps_request() - a SimpleApp request: @head and @body to node @to, or
 * to every live node of group @to (BXPS_* or'ed, a value below 8)
 * Return: the request id; it is done when every receiver answered.
 */
int64_t bxps_request(struct bxps *n, const struct bxps_opts *o, int head,
		     const void *body, uint32_t blen, int to);

/**
 * bxps_wait() - wait until request @id is done. Return: its status;
 * *@rank (if not NULL): as the done callback's. -ENOENT: no such id.
 */
int bxps_wait(struct bxps *n, int64_t id, int *rank);
/** bxps_test() - 1 if done (then as bxps_wait()'s in *status), else 0. */
int bxps_test(struct bxps *n, int64_t id, int *status, int *rank);

/**
 * struct bxps_result - a pull's values kept by the library (@out NULL)
 * @vals, @val_bytes: malloc()ed: free() them
 * @lens, @nkeys: each key's elements, malloc()ed (free()), in key order
 * @body, @blen: a SimpleApp request's answers' bodies, concatenated in
 *               the order of the receivers' ids (malloc()ed)
 */
struct bxps_result {
	void		*vals;
	uint64_t	val_bytes;
	int32_t		*lens;
	uint32_t	nkeys;
	void		*body;
	uint32_t	blen;
};

/**
 * bxps_result() - take request @id's result (once, after it is done:
 * from its done callback, or after bxps_wait()). -ENOENT: none.
 */
int bxps_result(struct bxps *n, int64_t id, struct bxps_result *r);

/**
 * struct bxps_req - a request as a handler gets it
 * @sender:    node id of the requester; @sender_rank its rank
 * @id:        the requester's request id (ps-lite's timestamp)
 * @app, @customer, @cmd, @priority, @dtype: as sent
 * @push, @pull, @simple: what it asks
 * @kv:        its keys, values, lengths (lens NULL if it sent none);
 *             they point into the received message
 * @body, @blen: a SimpleApp request's body; @cmd its head
 * @buf:       the received message, for bxps_req_release()
 */
struct bxps_req {
	int		sender;
	int		sender_rank;
	int64_t		id;
	int		app, customer;
	int		cmd, priority, dtype;
	int		push, pull, simple;
	struct bxps_kv	kv;
	const void	*body;
	uint32_t	blen;
	void		*buf;
	/* internal */
	uint32_t	part;
	uint32_t	svc;
};

/* The handler: @req is valid only during the call (copy it to keep). */
typedef void (*bxps_handler_fn)(struct bxps *n, const struct bxps_req *req,
				void *arg);

/**
 * bxps_set_handler() - handle app @app's requests with @fn (NULL: stop)
 * in the progress thread (@nthreads 0 or 1) or @nthreads threads by key
 * range. Requests that came before are handed to it by the progress
 * thread, in order, before later ones. Stopping waits for the calls in
 * progress and lets the threads handle what they hold; never stop an app
 * from its own handler. Return: 0, -EINVAL (@nthreads > 64), -EBUSY (a
 * handler is set), -ENOMEM, -EAGAIN (a thread could not start).
 */
int bxps_set_handler(struct bxps *n, int app, bxps_handler_fn fn, void *arg,
		     unsigned int nthreads);

/**
 * bxps_respond() - answer @req (a copy made during the handler is fine)
 * with @kv (pull: the values; push: may be empty) or, for SimpleApp,
 * @body. bxps_respond_err() - answer with @err (< 0) instead. The answer
 * is copied into a buffer of its own, region memory or not: @kv, @body
 * and @req->buf may be freed (bxps_free(), bxps_req_release()) as soon
 * as it returns.
 */
int bxps_respond(struct bxps *n, const struct bxps_req *req,
		 const struct bxps_kv *kv, const void *body, uint32_t blen);
int bxps_respond_err(struct bxps *n, const struct bxps_req *req, int err);

/** bxps_req_release() - give back @buf (a request's) once done with it. */
void bxps_req_release(struct bxps *n, void *buf);

/*
 * The default handler's store: pushes sum into it element-wise (f16 and
 * bf16 in float), pulls read it; a key first pushed is set, a key never
 * pushed reads as zeros of the length the pull expects (1 without). A
 * push or pull whose length for a key is not the stored one is answered
 * -EINVAL, as is a request whose type is not the store's.
 */
struct bxps_store;

int bxps_store_create(struct bxps_store **out, int dtype);
void bxps_store_destroy(struct bxps_store *st);
/**
 * bxps_store_handle() - do @req against @st and answer it (respond); the
 * caller releases @req->buf. Usable as a handler's whole body.
 */
int bxps_store_handle(struct bxps *n, struct bxps_store *st,
		      const struct bxps_req *req);
/** bxps_handle_sum() - a handler over bxps_store_handle() (@arg: store). */
void bxps_handle_sum(struct bxps *n, const struct bxps_req *req, void *arg);

/**
 * struct bxps_stats - a node's counters
 * @requests, @responses: sent; @handled: requests handed to handlers
 * @copied, @zero_copy: bytes of keys and values sent after a copy into
 *                      the region, and straight from where they were
 * @pull_copied: bytes of answers copied to the caller
 * @retries: messages sent again (no receive buffer free at the peer)
 * @bad: messages refused as malformed; @errors: failed sends
 */
struct bxps_stats {
	uint64_t	requests, responses, handled;
	uint64_t	copied, zero_copy, pull_copied;
	uint64_t	retries, bad, errors;
};

void bxps_stats(struct bxps *n, struct bxps_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* LIBBX_BXPS_H */
