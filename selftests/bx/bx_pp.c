// SPDX-License-Identifier: GPL-2.0
/*
 * bx_pp: push/pull workload with verified data, for bx's selftests.
 *
 *   bx_pp serve  -s SERVICE [-r REGION_MB] [-n SMALL_RECVS] [-b BIG_RECVS]
 *                [-t SECS] [-D] [-N] [-V PIECES]
 *   bx_pp client -a ADDR -s SERVICE [-z SIZE,...] [-i ITERS] [-q INFLIGHT]
 *                [-P PROCS] [-r REGION_MB] [-m push|pull|both] [-t SECS]
 *                [-T MS] [-v] [-S] [-V PIECES]
 *
 * Payloads are a pseudo-random stream: a payload of 8 bytes or more starts
 * with its 64-bit seed, shorter ones use their length as seed. The server
 * verifies every push; a pull request names a size and a seed, the server
 * answers with that payload and the client verifies it (a response of 8
 * bytes or more must carry its request's seed: an answer to another
 * request is bad). The server runs
 * until SIGTERM or -t and prints "bx_pp serve: pushes N pulls N bad N
 * errors N dups N"; the client prints "bx_pp client: ok N failed N bad N"
 * (errors by errno on stderr), with -v also "bx_pp proc P: ok N bytes B"
 * per process, and exits non-zero on any failure or bad data. With -t the
 * client stops issuing after SECS, its operations cycling through the
 * sizes (without -t it runs ITERS of each size in turn). With -S each
 * process runs synchronous bx_push()/bx_pull() calls (libbx's recovery:
 * see libbx.h) and the client also prints "bx_pp sync: pull_failed N
 * push_unknown N push_failed N push_ok N"; pushes whose fate is unknown
 * (the connection failed after they were sent) do not fail the run.
 *
 * -T gives every push and pull of the client a deadline of MS ms
 * (bx_sqe.timeout_ms), which ends it with ETIMEDOUT (or ECONNRESET for a
 * push that was sent) if it has not completed by then.
 *
 * Exactly once: the seed of every push of 8 bytes or more is unique, a
 * random 32-bit id of the client run, the process's index and a counter
 * (seed_of()); the server keeps every seed it saw and counts the ones it
 * sees again as "dups". So across one server run, with the clients'
 * push_ok, push_unknown and push_failed summed: push_ok <= pushes <=
 * push_ok + push_unknown + push_failed, and dups is 0.
 *
 * -V gives bx every buffer of the client's pushes and pulls (the pull's
 * response sink) and of the server's replies in PIECES pieces
 * (BX_SQE_F_VEC; fewer for payloads shorter than that), laid out in the
 * buffer in reverse order: the bytes arrive in order only if bx follows
 * the pieces. Not with -S.
 *
 * serve -N takes pull requests and never answers them (a stuck server
 * application, for the requesters' deadlines).
 *
 * serve -D races every reply: a second thread submits the same REPLY
 * (same token) at the same moment (a barrier). Exactly one of the two must
 * be accepted and the other refused with ENOENT; a pair that is not counts
 * as bad. Before its summary the server prints "bx_pp serve: races N
 * refused N" (the pairs, and the refusals with ENOENT).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "libbx.h"
#include "pp_payload.h"
#include "workload.h"

#define SMALL		65536
#define BIG		(16u << 20)

static volatile sig_atomic_t stop;
/* -T: each push's and pull's deadline (bx_sqe.timeout_ms), 0: bx's. */
static uint32_t op_timeout_ms;

static int pp_submit(struct bx *bx, struct bx_sqe *sqe, int prep)
{
	int ret;

	if (prep)
		return prep;
	sqe->timeout_ms = op_timeout_ms;
	ret = bx_submit(bx, sqe, 1);
	return ret < 0 ? ret : 0;
}

static unsigned int vec_pieces;
static int vec_prep(struct bx *bx, struct bx_sqe *sqe, struct bx_vec *v,
		    uint8_t opcode, const void *buf, uint32_t len);

static int pp_push(struct bx *bx, uint32_t peer, uint32_t service,
		   const void *buf, uint32_t len, uint64_t user_data)
{
	struct bx_vec v[BX_VEC_MAX];
	struct bx_sqe sqe;
	int ret;

	ret = bx_prep_push(bx, &sqe, peer, service, buf, len, user_data);
	if (!ret && vec_pieces)
		ret = vec_prep(bx, &sqe, v, BX_OP_PUSH, buf, len);
	return pp_submit(bx, &sqe, ret);
}

static int pp_pull(struct bx *bx, uint32_t peer, uint32_t service,
		   const void *req, uint32_t req_len, void *resp,
		   uint32_t resp_cap, uint64_t user_data)
{
	struct bx_vec v[BX_VEC_MAX];
	struct bx_sqe sqe;
	int ret;

	ret = bx_prep_pull(bx, &sqe, peer, service, req, req_len, resp,
			   resp_cap, user_data);
	if (!ret && vec_pieces)
		ret = vec_prep(bx, &sqe, v, BX_OP_PULL, resp, resp_cap);
	return pp_submit(bx, &sqe, ret);
}

/*
 * -V: buffers in pieces. The payload's piece k (of @n, about equal)
 * lies in the buffer at the place mirrored from its place in the payload,
 * so that piece 0 is last. vec_layout() lists them for bx (region
 * offsets); vec_place() lays a payload out so, vec_gather() reads one
 * back.
 */

static unsigned int vec_layout(struct bx *bx, const void *buf, uint32_t len,
			       struct bx_vec *v)
{
	uint64_t base = (const uint8_t *)buf - (const uint8_t *)bx_region(bx);
	unsigned int n = vec_pieces < len ? vec_pieces : len, k;
	uint32_t pos = len;

	for (k = 0; k < n; k++) {
		uint32_t plen = (uint32_t)((uint64_t)(k + 1) * len / n -
					   (uint64_t)k * len / n);

		pos -= plen;
		v[k] = (struct bx_vec){ .off = base + pos, .len = plen };
	}
	return n;
}

static void vec_place(struct bx *bx, void *buf, const uint8_t *payload,
		      uint32_t len)
{
	struct bx_vec v[BX_VEC_MAX];
	unsigned int n = vec_layout(bx, buf, len, v), k;
	uint32_t done = 0;

	for (k = 0; k < n; done += v[k].len, k++)
		memcpy((uint8_t *)bx_region(bx) + v[k].off, payload + done,
		       v[k].len);
}

static void vec_gather(struct bx *bx, const void *buf, uint32_t len,
		       uint32_t got, uint8_t *out)
{
	struct bx_vec v[BX_VEC_MAX];
	unsigned int n = vec_layout(bx, buf, len, v), k;
	uint32_t done = 0;

	for (k = 0; k < n && done < got; done += v[k].len, k++)
		memcpy(out + done, (uint8_t *)bx_region(bx) + v[k].off,
		       got - done < v[k].len ? got - done : v[k].len);
}

/* A scratch buffer of @len bytes (the process's, grown as needed). */
static uint8_t *scratch(uint32_t len)
{
	static uint8_t *buf;
	static uint32_t cap;

	if (len > cap) {
		free(buf);
		buf = malloc(len);
		if (!buf) {
			fprintf(stderr, "bx_pp: out of memory\n");
			exit(2);
		}
		cap = len;
	}
	return buf;
}

/* bx_prep_push()/_pull()/_reply() with -V's pieces (empty: flat). */
static int vec_prep(struct bx *bx, struct bx_sqe *sqe, struct bx_vec *v,
		    uint8_t opcode, const void *buf, uint32_t len)
{
	unsigned int n = vec_layout(bx, buf, len, v);

	if (!n)
		return 0;
	sqe->flags = BX_SQE_F_VEC;
	if (opcode == BX_OP_PULL) {
		sqe->resp_off = (uintptr_t)v;
		sqe->resp_len = n;
	} else {
		sqe->off = (uintptr_t)v;
		sqe->len = n;
	}
	return 0;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}


/*
 * The seed of a client's N-th push: the run's id in the high 32 bits,
 * the process's index in the next 8, N in the low 24 (a push counter
 * wrapping within one run would need 16 M pushes per process).
 */
static uint32_t run_id;

static uint64_t seed_of(int proc, uint32_t n)
{
	return (uint64_t)run_id << 32 | (uint64_t)(proc & 0xff) << 24 |
	       (n & 0xffffff);
}

static void pick_run_id(void)
{
	struct timeval tv;

	if (getrandom(&run_id, sizeof(run_id), GRND_NONBLOCK) !=
	    sizeof(run_id)) {
		/* No entropy yet: time and pid differ between runs. */
		gettimeofday(&tv, NULL);
		run_id = (uint32_t)(tv.tv_sec * 1000003u) ^
			 (uint32_t)tv.tv_usec ^ (uint32_t)getpid() << 16;
	}
}

/* ---- the server's set of push seeds seen (open addressing) ---------- */

struct seen {
	uint64_t	*slot;		/* 0: empty */
	size_t		cap, n;		/* cap: a power of two */
	bool		zero;		/* seed 0 seen */
};

static size_t seen_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return (size_t)k;
}

static void seen_put(uint64_t *slot, size_t cap, uint64_t k)
{
	size_t i = seen_hash(k) & (cap - 1);

	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = k;
}

/* Record @k; returns true if it was there already. */
static bool seen_add(struct seen *s, uint64_t k)
{
	size_t i;

	if (!k) {
		if (s->zero)
			return true;
		s->zero = true;
		return false;
	}
	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		uint64_t *slot = calloc(cap, sizeof(*slot));

		if (!slot) {
			fprintf(stderr, "bx_pp: out of memory for seeds\n");
			exit(2);
		}
		for (i = 0; i < s->cap; i++)
			if (s->slot[i])
				seen_put(slot, cap, s->slot[i]);
		free(s->slot);
		s->slot = slot;
		s->cap = cap;
	}
	for (i = seen_hash(k) & (s->cap - 1); s->slot[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == k)
			return true;
	s->slot[i] = k;
	s->n++;
	return false;
}

static bool sync_mode;

static void die(const char *what, int err)
{
	fprintf(stderr, "bx_pp: %s: %s\n", what, strerror(-err));
	exit(2);
}

/* ---- server ----------------------------------------------------------- */

/* user_data of a reply: its buffer's offset, or none (an empty reply). */
#define REPLY_TAG	(1ULL << 62)
#define REPLY_NOBUF	(1ULL << 61)

/* serve -D: the second thread of each raced reply (reply_raced()). */
static struct {
	pthread_barrier_t	start, done;
	struct bx		*bx;
	struct bx_sqe		sqe;
	int			res;
	bool			quit;
} race;

static void *racer(void *arg)
{
	for (;;) {
		pthread_barrier_wait(&race.start);
		if (race.quit)
			return NULL;
		race.res = bx_submit(race.bx, &race.sqe, 1);
		pthread_barrier_wait(&race.done);
	}
}

/*
 * Submit REPLY @sqe from this thread and the racer at once. Returns 0 if
 * one was accepted, else the errno this thread got; counts the pair, the
 * ENOENT refusals and, in @bad, a pair other than one accepted and one
 * refused with ENOENT.
 */
static int reply_raced(struct bx *bx, const struct bx_sqe *sqe,
		       long *races, long *refused, long *bad)
{
	int res[2];

	race.sqe = *sqe;
	pthread_barrier_wait(&race.start);
	res[0] = bx_submit(bx, sqe, 1);
	pthread_barrier_wait(&race.done);
	res[1] = race.res;
	(*races)++;
	*refused += (res[0] == -ENOENT) + (res[1] == -ENOENT);
	if (!((res[0] == 1 && res[1] == -ENOENT) ||
	      (res[0] == -ENOENT && res[1] == 1))) {
		fprintf(stderr, "bx_pp serve: raced reply: %d and %d\n",
			res[0], res[1]);
		(*bad)++;
	}
	return res[0] == 1 || res[1] == 1 ? 0 : res[0];
}

/* serve -N: pull requests are taken and never answered. */
static bool no_replies;

static int serve(uint32_t service, int region_mb, int nsmall, int nbig,
		 int secs, bool racing)
{
	long races = 0, refused = 0;
	pthread_t racer_thread;
	long pushes = 0, pulls = 0, bad = 0, errs = 0, dups = 0;
	struct seen seen = { 0 };
	struct bx_cqe cqes[64];
	time_t end = secs ? time(NULL) + secs : 0;
	struct bx *bx;
	int ret;

	ret = bx_open(&bx, 0);
	if (ret)
		die("open", ret);
	ret = bx_setup(bx, (uint64_t)region_mb << 20, 4096);
	if (ret)
		die("setup", ret);
	ret = bx_bind(bx, service);
	if (ret)
		die("bind", ret);
	if (racing) {
		race.bx = bx;
		pthread_barrier_init(&race.start, NULL, 2);
		pthread_barrier_init(&race.done, NULL, 2);
		ret = -pthread_create(&racer_thread, NULL, racer, NULL);
		if (ret)
			die("racer thread", ret);
	}
	for (int i = 0; i < nsmall + nbig; i++) {
		uint32_t cap = i < nsmall ? SMALL : BIG;
		void *buf;

		ret = bx_buf_alloc(bx, cap, &buf);
		if (ret)
			die("alloc recv", ret);
		ret = bx_recv_async(bx, service, buf, cap,
				    (uintptr_t)buf - (uintptr_t)bx_region(bx));
		if (ret)
			die("recv", ret);
	}
	printf("bx_pp serve: ready service %u\n", service);
	fflush(stdout);

	while (!stop && (!end || time(NULL) < end)) {
		int n = bx_reap(bx, cqes, 64, 200);

		for (int i = 0; i < n; i++) {
			struct bx_cqe *c = &cqes[i];
			uint8_t *region = bx_region(bx);

			if (c->user_data & REPLY_TAG) {
				/* A reply finished: free its buffer, if any. */
				if (!(c->user_data & REPLY_NOBUF))
					bx_buf_free(bx, region + (c->user_data &
							~REPLY_TAG));
				if (c->res < 0)
					errs++;
				continue;
			}
			/* A RECV completed: handle, then offer it again. */
			if (c->res >= 0 && (c->flags & BX_CQE_F_PUSH)) {
				uint64_t seed;

				pushes++;
				if (!check(region + c->off, c->res)) {
					bad++;
				} else if (c->res >= 8) {
					memcpy(&seed, region + c->off, 8);
					dups += seen_add(&seen, seed);
				}
			} else if (c->res >= 0 &&
				   (c->flags & BX_CQE_F_REQUEST)) {
				uint64_t tag = REPLY_TAG;
				struct pp_req rq;
				void *out = NULL;
				uint32_t size = 0;

				pulls++;
				if (no_replies)
					goto repost;
				memcpy(&rq, region + c->off, sizeof(rq));
				if (c->res == sizeof(rq) &&
				    rq.magic == PP_MAGIC &&
				    rq.size <= c->resp_max)
					size = rq.size;
				else
					bad++;
				if (bx_buf_alloc(bx, size ? size : 1, &out)) {
					/*
					 * An empty reply, from no buffer of
					 * ours: offset 0 is a RECV's.
					 */
					errs++;
					size = 0;
					out = region;
					tag |= REPLY_NOBUF;
				} else if (vec_pieces) {
					uint8_t *p = scratch(size);

					fill(p, size, rq.seed);
					vec_place(bx, out, p, size);
					tag |= (uint8_t *)out - region;
				} else {
					fill(out, size, rq.seed);
					tag |= (uint8_t *)out - region;
				}
				if (racing || vec_pieces) {
					struct bx_vec v[BX_VEC_MAX];
					struct bx_sqe sqe;

					ret = bx_prep_reply(bx, &sqe, c->token,
							    out, size, tag);
					if (!ret && vec_pieces)
						ret = vec_prep(bx, &sqe, v,
							       BX_OP_REPLY,
							       out, size);
					if (!ret && racing)
						ret = reply_raced(bx, &sqe,
								  &races,
								  &refused,
								  &bad);
					else if (!ret)
						ret = pp_submit(bx, &sqe, 0);
				} else {
					ret = bx_reply_async(bx, c->token, out,
							     size, tag);
				}
				if (ret) {
					errs++;
					if (!(tag & REPLY_NOBUF))
						bx_buf_free(bx, out);
				}
			} else if (c->res < 0) {
				errs++;
			}
repost:
			ret = bx_recv_async(bx, service, region + c->user_data,
					    c->user_data < (uint64_t)nsmall *
					    SMALL ? SMALL : BIG, c->user_data);
			if (ret && ret != -ENOTCONN)
				errs++;
		}
	}
	if (racing) {
		race.quit = true;
		pthread_barrier_wait(&race.start);
		pthread_join(racer_thread, NULL);
		printf("bx_pp serve: races %ld refused %ld\n", races, refused);
	}
	printf("bx_pp serve: pushes %ld pulls %ld bad %ld errors %ld dups %ld\n",
	       pushes, pulls, bad, errs, dups);
	free(seen.slot);
	bx_close(bx);
	/* The tests judge the run by that line: say if it was lost. */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "bx_pp serve: writing the summary: %s\n",
			strerror(errno));
		return 3;
	}
	return bad ? 1 : 0;
}

/* ---- client ----------------------------------------------------------- */

/*
 * The load itself is tools/lib/workload's: PROCS processes that start
 * together, each with its own handle, INFLIGHT operations in flight (or
 * one bx_push()/bx_pull() at a time with -S); here is what an operation
 * does (pp_issue(), pp_reap(), pp_check_async(); with -S pp_prep(),
 * pp_call(), pp_check_sync()) and the summary.
 */
enum { PP_PUSH = 1, PP_PULL = 2 };	/* the operations' kinds */

/* A pull's response: @len intact bytes, made for request @req (its seed). */
static bool pull_ok(const uint8_t *p, uint32_t len, const void *req)
{
	struct pp_req rq;

	memcpy(&rq, req, sizeof(rq));
	return check(p, len) && (len < 8 || !memcmp(p, &rq.seed, 8));
}

struct slot {
	void		*buf;
	void		*req;
};

struct client_cfg {
	const char	*addr;
	uint32_t	service;
	int		region_mb;
	int		q;
	uint32_t	max;		/* the largest size */
};

/* A client process's own. */
struct proc {
	const struct client_cfg *cc;
	struct bx	*bx;
	uint32_t	peer;
	int		idx;
	uint32_t	npush;
	uint64_t	seed;
	struct slot	*slots;		/* -q of them */
	void		*buf, *req;	/* -S: one of each */
	struct bx_cqe	cqes[64];
};

static int pp_open(void *arg, uint32_t worker, void **ctx)
{
	const struct client_cfg *cc = arg;
	struct proc *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	p->cc = cc;
	p->idx = worker;
	p->seed = (uint64_t)getpid() << 32 | 12345;
	*ctx = p;
	ret = bx_open(&p->bx, 0);
	if (ret) {
		fprintf(stderr, "bx_pp: open: %s\n", strerror(-ret));
		return ret;
	}
	ret = bx_setup(p->bx, (uint64_t)cc->region_mb << 20, 1024);
	if (ret) {
		fprintf(stderr, "bx_pp: setup: %s\n", strerror(-ret));
		return ret;
	}
	ret = bx_peer(p->bx, cc->addr, &p->peer);
	if (ret) {
		fprintf(stderr, "bx_pp: peer: %s\n", strerror(-ret));
		return ret;
	}
	if (sync_mode) {
		if (bx_buf_alloc(p->bx, cc->max, &p->buf) ||
		    bx_buf_alloc(p->bx, sizeof(struct pp_req), &p->req)) {
			fprintf(stderr, "bx_pp: alloc: %s\n", strerror(ENOMEM));
			return -ENOMEM;
		}
		return 0;
	}
	p->slots = calloc(cc->q, sizeof(*p->slots));
	return p->slots ? 0 : -ENOMEM;
}

static void pp_close(void *arg, void *ctx)
{
	struct proc *p = ctx;

	(void)arg;
	if (p->bx)
		bx_close(p->bx);
	free(p->slots);
	free(p);
}

static void free_slot(struct proc *p, struct slot *s)
{
	bx_buf_free(p->bx, s->buf);
	if (s->req)
		bx_buf_free(p->bx, s->req);
}

/* Asynchronous: a push or pull from buffers of its own. */
static int pp_issue(void *ctx, const struct wl_op *op)
{
	struct proc *p = ctx;
	struct slot *s = &p->slots[op->slot];
	uint32_t size = op->size, service = p->cc->service;
	int ret;

	if (bx_buf_alloc(p->bx, size ? size : 1, &s->buf))
		return WL_AGAIN;
	s->req = NULL;
	if (op->kind == PP_PULL) {
		struct pp_req rq = { PP_MAGIC, size, 0 };

		if (bx_buf_alloc(p->bx, sizeof(rq), &s->req)) {
			bx_buf_free(p->bx, s->buf);
			return WL_AGAIN;
		}
		rq.seed = next(&p->seed);
		memcpy(s->req, &rq, sizeof(rq));
		memset(s->buf, 0, size);
		ret = pp_pull(p->bx, p->peer, service, s->req, sizeof(rq),
			      s->buf, size, op->slot);
	} else if (vec_pieces) {
		uint8_t *b = scratch(size);

		fill(b, size, seed_of(p->idx, p->npush++));
		vec_place(p->bx, s->buf, b, size);
		ret = pp_push(p->bx, p->peer, service, s->buf, size, op->slot);
	} else {
		fill(s->buf, size, seed_of(p->idx, p->npush++));
		ret = pp_push(p->bx, p->peer, service, s->buf, size, op->slot);
	}
	if (ret)
		free_slot(p, s);
	return ret;
}

static int pp_reap(void *ctx, struct wl_done *d, int max, int timeout_ms)
{
	struct proc *p = ctx;
	int n = bx_reap(p->bx, p->cqes, max < 64 ? max : 64, timeout_ms);

	for (int i = 0; i < n; i++)
		d[i] = (struct wl_done){ p->cqes[i].user_data, p->cqes[i].res,
					 WL_OK };
	return n;
}

/* Verify a completion: the size asked for, a pull's bytes intact. */
static void pp_check_async(void *ctx, const struct wl_op *op,
			   struct wl_done *d)
{
	struct proc *p = ctx;
	struct slot *s = &p->slots[d->slot];
	const uint8_t *got = s->buf;

	if (op->kind == PP_PULL && vec_pieces && d->res > 0) {
		uint8_t *b = scratch(d->res);

		vec_gather(p->bx, s->buf, op->size, d->res, b);
		got = b;
	}
	if (d->res >= 0) {
		if ((uint32_t)d->res != op->size ||
		    (op->kind == PP_PULL && !pull_ok(got, op->size, s->req))) {
			d->fate = WL_BAD;
			d->res = 0;
		}
	}
	free_slot(p, s);
}

/*
 * A push that failed after it may have been sent: the connection failed
 * (or the peer restarted) with it outstanding. Only libbx's "certainly
 * not delivered" errnos (-ENOTCONN, -EHOSTUNREACH, -ENETUNREACH,
 * -ECONNREFUSED, -ETIMEDOUT), which it sends again itself, and errors of
 * the push itself are failures.
 */
static bool in_doubt(int res)
{
	return res == -ECONNRESET || res == -EIO || res == -ECONNABORTED ||
	       res == -ENODEV || res == -EHOSTDOWN || res == -EPROTO;
}

/*
 * Sync mode (-S): bx_push()/bx_pull() one at a time, with libbx's
 * recovery (a pull is sent again after a connection failure, a push only
 * when it was certainly not delivered) within a 60 s deadline per call.
 */
static int pp_prep(void *ctx, const struct wl_op *op)
{
	struct proc *p = ctx;

	if (op->kind == PP_PULL) {
		struct pp_req rq = { PP_MAGIC, op->size, next(&p->seed) };

		memcpy(p->req, &rq, sizeof(rq));
		memset(p->buf, 0, op->size);
	} else {
		fill(p->buf, op->size, seed_of(p->idx, p->npush++));
	}
	return 0;
}

static int pp_call(void *ctx, const struct wl_op *op, struct wl_done *d)
{
	struct proc *p = ctx;

	if (op->kind == PP_PULL)
		d->res = bx_pull(p->bx, p->peer, p->cc->service, p->req,
				 sizeof(struct pp_req), p->buf, op->size, 60000);
	else
		d->res = bx_push(p->bx, p->peer, p->cc->service, p->buf,
				 op->size, 60000);
	return 0;
}

static void pp_check_sync(void *ctx, const struct wl_op *op,
			  struct wl_done *d)
{
	struct proc *p = ctx;

	if (op->kind == PP_PUSH) {
		/* Sent, and the connection went: unknown. */
		if (in_doubt(d->res))
			d->fate = WL_DOUBT;
		else if (d->res >= 0)
			d->res = op->size;
	} else if (d->res >= 0) {
		if ((uint32_t)d->res != op->size ||
		    !pull_ok(p->buf, op->size, p->req)) {
			d->fate = WL_BAD;
			d->res = 0;
		}
	}
}

static const struct wl_ops pp_async_ops = {
	.issue = pp_issue, .reap = pp_reap, .check = pp_check_async,
};

static const struct wl_ops pp_sync_ops = {
	.prep = pp_prep, .call = pp_call, .check = pp_check_sync,
};

/* The errnos counted apart, in the order printed; then all others. */
static const int errs_seen[] = {
	ENOBUFS, ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH, EMSGSIZE,
	EIO, ENOTCONN, ENETUNREACH, ECONNABORTED, ENODEV, EHOSTDOWN, EPROTO,
	EREMOTEIO, EACCES,
};

#define NSEEN	(int)(sizeof(errs_seen) / sizeof(errs_seen[0]))

/* @err's count of errs_seen[i], or (i == NSEEN) of every other errno. */
static long err_count(const uint32_t *err, int i)
{
	long n = 0;

	if (i < NSEEN)
		return err[errs_seen[i]];
	for (int e = 0; e < WL_NERRNO; e++) {
		int k = 0;

		while (k < NSEEN && errs_seen[k] != e)
			k++;
		if (k == NSEEN)
			n += err[e];
	}
	return n;
}

static int client(const struct client_cfg *cc, uint32_t *sizes, int nsizes,
		  int iters, int procs, int mode, int secs, bool verbose)
{
	static const uint32_t cycle[3][2] = {
		{ PP_PUSH }, { PP_PULL }, { PP_PUSH, PP_PULL },
	};
	struct wl_cell cells[32];
	struct wl_cfg cfg = {
		.prog = "bx_pp", .workers = procs, .depth = cc->q,
		.cells = cells, .kinds = cycle[mode - 1],
		.nkinds = mode == 3 ? 2 : 1, .secs = secs ? secs : -1,
		.issue_fails_op = true,
		/* Generous: 16 MiB under KASAN on a busy TCG host can take
		 * minutes.
		 */
		.timeout_ms = 180000,
		.arg = (void *)cc, .open = pp_open, .close = pp_close,
	};
	struct wl_stats tot = { 0 };
	long ok = 0, failed = 0, bad = 0;
	struct wl_run *run;
	int crashed, ret;

	if (sync_mode) {
		/* One run, its operations cycling through the sizes. */
		cfg.ops = &pp_sync_ops;
		cfg.size_every = 1;
		cfg.iters = secs ? -1 : (long)iters * nsizes;
		cells[0] = (struct wl_cell){ sizes, nsizes, 0 };
		cfg.ncells = 1;
	} else {
		/* ITERS of each size in turn; with -t one timed run (no
		 * count) whose operations (both of a push and pull) cycle
		 * through them.
		 */
		cfg.ops = &pp_async_ops;
		cfg.iters = secs ? -1 : (long)iters * cfg.nkinds;
		for (int i = 0; i < (secs ? 1 : nsizes); i++)
			cells[i] = (struct wl_cell){ secs ? sizes : &sizes[i],
						     secs ? nsizes : 1, 0 };
		cfg.ncells = secs ? 1 : nsizes;
	}
	pick_run_id();
	ret = wl_drive(&cfg, &run);
	if (ret) {
		fprintf(stderr, "bx_pp: %s\n", strerror(-ret));
		return 2;
	}
	crashed = wl_failed(run);
	for (int p = 0; p < procs; p++) {
		for (int c = 0; c < cfg.ncells; c++) {
			const struct wl_res *r = wl_res(run, c, p);

			wl_stats_add(&tot, &r->run);
			failed += r->lost;
		}
	}
	ok = tot.ok[PP_PUSH] + tot.ok[PP_PULL];
	failed += tot.failed[PP_PUSH] + tot.failed[PP_PULL];
	bad = tot.bad[PP_PUSH] + tot.bad[PP_PULL];
	printf("bx_pp client: ok %ld failed %ld bad %ld crashed %d\n",
	       ok, failed, bad, crashed);
	if (sync_mode)
		printf("bx_pp sync: pull_failed %llu push_unknown %llu push_failed %llu push_ok %llu\n",
		       (unsigned long long)tot.failed[PP_PULL],
		       (unsigned long long)tot.doubt[PP_PUSH],
		       (unsigned long long)tot.failed[PP_PUSH],
		       (unsigned long long)tot.ok[PP_PUSH]);
	for (int p = 0; verbose && p < procs; p++) {
		struct wl_stats st = { 0 };

		for (int c = 0; c < cfg.ncells; c++)
			wl_stats_add(&st, &wl_res(run, c, p)->run);
		printf("bx_pp proc %d: ok %llu bytes %llu\n", p,
		       (unsigned long long)(st.ok[PP_PUSH] + st.ok[PP_PULL]),
		       (unsigned long long)(st.bytes[PP_PUSH] +
					    st.bytes[PP_PULL]));
	}
	for (int i = 0; i <= NSEEN; i++) {
		const char *e = i < NSEEN ? strerror(errs_seen[i]) : "other";
		long n = err_count(tot.err, i), u = err_count(tot.doubt_err, i);

		if (n)
			fprintf(stderr, "bx_pp client: %ld x %s\n", n, e);
		if (u)
			fprintf(stderr, "bx_pp sync: unknown %ld x %s\n", u, e);
	}
	wl_free(run);
	return failed || bad || crashed ? 1 : 0;
}

int main(int argc, char **argv)
{
	uint32_t sizes[32] = { 4096 }, service = 7;
	struct client_cfg cc = { 0 };
	int nsizes = 1, iters = 10, q = 8, procs = 1, region_mb = 0;
	int nsmall = 256, nbig = 0, secs = 0, mode = 3, opt;
	bool verbose = false, racing = false;
	const char *addr = NULL;

	if (argc < 2)
		goto usage;
	/*
	 * Line by line, as the tests read it: a crash must not take the
	 * lines before it along with a full buffer.
	 */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	optind = 2;
	while ((opt = getopt(argc, argv, "a:s:z:i:q:P:r:m:n:b:t:T:V:vSDN")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 's': service = strtoul(optarg, NULL, 0); break;
		case 'z':
			nsizes = wl_parse_sizes(optarg, sizes, 32, 0,
						UINT32_MAX);
			if (nsizes < 0)
				goto usage;
			break;
		case 'i': iters = atoi(optarg); break;
		case 'q': q = atoi(optarg); break;
		case 'P': procs = atoi(optarg); break;
		case 'r': region_mb = atoi(optarg); break;
		case 'm':
			mode = !strcmp(optarg, "push") ? 1 :
			       !strcmp(optarg, "pull") ? 2 : 3;
			break;
		case 'n': nsmall = atoi(optarg); break;
		case 'b': nbig = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		case 'v': verbose = true; break;
		case 'S': sync_mode = true; break;
		case 'T': op_timeout_ms = (uint32_t)atol(optarg); break;
		case 'V': vec_pieces = (unsigned int)atoi(optarg); break;
		case 'N': no_replies = true; break;
		case 'D': racing = true; break;
		default: goto usage;
		}
	}
	if (vec_pieces > BX_VEC_MAX || (vec_pieces && sync_mode))
		goto usage;
	if (!strcmp(argv[1], "serve"))
		return serve(service, region_mb ? region_mb : 32 + nbig * 32,
			     nsmall, nbig, secs, racing);
	if (!strcmp(argv[1], "client") && addr && q > 0 && q <= 512 &&
	    procs > 0 && procs <= 64) {
		cc = (struct client_cfg){ addr, service, region_mb, q, 1 };
		for (int i = 0; i < nsizes; i++)
			cc.max = sizes[i] > cc.max ? sizes[i] : cc.max;
		if (!cc.region_mb)
			cc.region_mb = (int)(((uint64_t)cc.max * 2 * q) >> 20) + 4;
		return client(&cc, sizes, nsizes, iters, procs, mode, secs,
			      verbose);
	}
usage:
	fprintf(stderr, "usage: see the comment at the top of bx_pp.c\n");
	return 2;
}
