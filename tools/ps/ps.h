/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bxps: a small parameter server over bx or kernel TCP.
 *
 * ps.c holds what is common: options, the parameter store, the message
 * format, verification, the worker's rounds (on tools/lib/workload.h's
 * driver) and its output. A transport
 * (ps_bx.c, ps_tcp.c) provides the server's event loop, which calls
 * ps_srv_pull() / ps_srv_push() for every message, and the worker's
 * per-thread connection with a blocking pull and push.
 *
 * Messages are the same bytes on both transports. A request is a
 * struct ps_hdr, then nkeys u32 keys, then (pushes) nkeys * value-size
 * float gradients. A pull response is a struct ps_hdr (status, op, nkeys
 * and seq echoed), then the values of the keys, concatenated. On TCP
 * every message is preceded by its length (u32, little-endian host
 * order; the protocol is host-local in what it measures) and a push is
 * answered with a bare header; on bx a push is acknowledged by bx itself.
 *
 * Values are deterministic so that any wrong byte is detected: element i
 * of key k in table t starts at ps_base(t, k, i), a small integer, and
 * every push carries the gradient ps_grad(t, k, i) (2 or 4), applied as
 * value -= PS_LR * grad. After v pushes the value is exactly
 * ps_base - v * PS_LR * ps_grad (all integers below 2^24, so exact in
 * float); a reader checks that every element of a key yields the same
 * non-negative integer v.
 */
#ifndef PS_H
#define PS_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PS_MAGIC	0x31535042u	/* "BPS1" */
#define PS_LR		0.5f
#define PS_REQ_MAX	4096u		/* a bx pull request is at most 4 KiB */

enum ps_op {
	PS_OP_INFO,
	PS_OP_SPARSE_PULL,
	PS_OP_DENSE_PULL,
	PS_OP_SPARSE_PUSH,
	PS_OP_DENSE_PUSH,
	PS_NOPS
};

enum ps_status {
	PS_ST_OK,
	PS_ST_BADREQ,		/* malformed request, key out of range */
	PS_ST_TOOBIG,		/* response larger than the requester's buffer */
	PS_ST_BADGRAD,		/* a gradient that is not ps_grad() */
};

struct ps_hdr {
	uint32_t	magic;
	uint16_t	op;
	uint16_t	status;
	uint32_t	nkeys;
	uint32_t	seq;
};

/* Response payload of PS_OP_INFO: the server's configuration. */
struct ps_info {
	uint32_t	keys;		/* sparse keys */
	uint32_t	vfloats;	/* floats per sparse value */
	uint32_t	dkeys;		/* dense keys */
	uint32_t	dfloats;	/* floats per dense value */
	uint32_t	max_batch;	/* sparse keys per message */
	uint32_t	max_dense;	/* dense keys per message */
	uint32_t	resv[2];
};

/* Everything the command line sets; server and worker use parts. */
struct ps_cfg {
	const struct ps_transport *tp;
	bool		server;
	const char	*addr;		/* worker: server address */
	uint32_t	service;	/* bx: pull service (push: +1); tcp: port */
	struct ps_info	info;		/* server: its table; worker: from INFO */
	int		threads;	/* server threads / worker threads */
	double		secs;		/* run time (0: rounds / until SIGTERM) */
	long		rounds;		/* worker rounds per thread */
	long		warmup;		/* worker rounds not measured */
	uint32_t	batch;		/* worker: sparse keys per round */
	uint32_t	dense;		/* worker: dense keys per round */
	bool		inference;	/* worker: pulls only */
	unsigned int	ops;		/* worker: 1 << PS_OP_* run per round */
	uint64_t	seed;
	uint32_t	region_mb;	/* bx: region size (0: computed) */
	uint32_t	nrecv;		/* bx server: receive buffers per kind */
	uint64_t	thread_bytes;	/* worker: buffer bytes per thread */
	bool		bx_per_thread;	/* worker: a bx handle per thread */
	const char	*tag;		/* free text copied to the output */
};

/* Byte sizes implied by a configuration. */
static inline uint32_t ps_sparse_resp_max(const struct ps_info *in)
{
	return sizeof(struct ps_hdr) + in->max_batch * in->vfloats * 4;
}

static inline uint32_t ps_dense_resp_max(const struct ps_info *in)
{
	return sizeof(struct ps_hdr) + in->max_dense * in->dfloats * 4;
}

static inline uint32_t ps_resp_max(const struct ps_info *in)
{
	uint32_t s = ps_sparse_resp_max(in), d = ps_dense_resp_max(in);
	uint32_t i = sizeof(struct ps_hdr) + sizeof(struct ps_info);

	s = s > d ? s : d;
	return s > i ? s : i;
}

static inline uint32_t ps_push_max(const struct ps_info *in)
{
	uint32_t s = sizeof(struct ps_hdr) + in->max_batch * 4 *
		     (1 + in->vfloats);
	uint32_t d = sizeof(struct ps_hdr) + in->max_dense * 4 *
		     (1 + in->dfloats);

	return s > d ? s : d;
}

/* ---- deterministic values -------------------------------------------- */

static inline uint32_t ps_mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* Initial value: an integer in 1 .. 16384. Table 0 sparse, 1 dense. */
static inline float ps_base(int table, uint32_t key, uint32_t i)
{
	return (float)((ps_mix(key * 0x9e3779b9u + (uint32_t)table) ^
			ps_mix(i + 0x51ed27u)) & 0x3fff) + 1.0f;
}

/* The gradient every push carries: 2 or 4. */
static inline float ps_grad(int table, uint32_t key, uint32_t i)
{
	return (ps_mix(key ^ (i * 0x85ebca6bu) ^ ((uint32_t)table << 30)) &
		0x100) ? 4.0f : 2.0f;
}

/* ---- server side ------------------------------------------------------ */

struct ps_srv_stats {
	uint64_t	ops[PS_NOPS];
	uint64_t	bytes_in;
	uint64_t	bytes_out;
	uint64_t	errors;
	uint64_t	conns;		/* tcp: connections accepted */
};

struct ps_store;

struct ps_server {
	struct ps_cfg		*cfg;
	struct ps_store		*store;
	volatile sig_atomic_t	*stop;
	uint64_t		reg_bytes;	/* bx: this process's region */
};

/*
 * Bytes of the response to @req (at least a header), so that a transport
 * can pick a buffer before building it.
 */
uint32_t ps_srv_resp_size(const struct ps_server *s, const void *req,
			  uint32_t len);
/*
 * Answer a pull request into @out (capacity @cap). Always writes at least
 * a header; returns the response's bytes. Counts into @st.
 */
uint32_t ps_srv_pull(struct ps_server *s, const void *req, uint32_t len,
		     void *out, uint32_t cap, struct ps_srv_stats *st);
/* Apply a push. Returns a PS_ST_* status; counts into @st. */
int ps_srv_push(struct ps_server *s, const void *msg, uint32_t len,
		struct ps_srv_stats *st);
void ps_srv_stats_add(struct ps_srv_stats *to, const struct ps_srv_stats *st);
/* The transport is ready for requests: tell whoever waits for it. */
void ps_srv_ready(struct ps_server *s);

/* ---- transports ------------------------------------------------------- */

struct ps_client;	/* transport's process-wide worker state */
struct ps_conn;		/* transport's per-thread worker state */

/* Host-wide figures sampled while connections are up. */
struct ps_host {
	long		conns;		/* bx: shared connections; tcp: sockets */
	long long	reg_bytes;	/* bx: registered region bytes; tcp: 0 */
};

struct ps_transport {
	const char	*name;
	/* Run the server until *s->stop; sums its threads' counters. */
	int	(*serve)(struct ps_server *s, struct ps_srv_stats *tot);
	int	(*client_init)(const struct ps_cfg *cfg, struct ps_client **out);
	void	(*client_fini)(struct ps_client *c);
	int	(*conn_open)(struct ps_client *c, struct ps_conn **out);
	void	(*conn_close)(struct ps_conn *pc);
	/* A buffer usable as request, response or push (bx: registered). */
	void	*(*buf_alloc)(struct ps_conn *pc, size_t len);
	/*
	 * Send @len bytes at @req, wait for the response into @resp. Return:
	 * response bytes, or a negative errno. *@retries counts ENOBUFS
	 * retries. -ETIMEDOUT leaves the connection unusable.
	 */
	int	(*pull)(struct ps_conn *pc, const void *req, uint32_t len,
			void *resp, uint32_t cap, uint64_t *retries);
	/* Deliver @len bytes at @msg; 0 or a negative errno. */
	int	(*push)(struct ps_conn *pc, const void *msg, uint32_t len,
			uint64_t *retries);
	void	(*host_sample)(const struct ps_cfg *cfg, struct ps_host *h);
};

extern const struct ps_transport ps_bx_transport;
extern const struct ps_transport ps_tcp_transport;

/* Helpers shared by the transports. */
void ps_sleep_us(long us);
void ps_count_tcp_conns(uint32_t port, struct ps_host *h);

#define PS_OP_TIMEOUT_MS	30000

#endif /* PS_H */
