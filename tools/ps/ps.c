// SPDX-License-Identifier: GPL-2.0
/*
 * bxps: a small parameter server over bx or kernel TCP (issue #6).
 *
 *   bxps server -T bx|tcp [-s SERVICE|PORT] [-k KEYS] [-v FLOATS]
 *               [-K DENSE_KEYS] [-V DENSE_FLOATS] [-B MAX_BATCH]
 *               [-D MAX_DENSE] [-t THREADS] [-d SECS] [-n NRECV]
 *               [-R REGION_MB]
 *   bxps worker -T bx|tcp -a ADDR [-s SERVICE|PORT] [-w THREADS]
 *               [-r ROUNDS | -d SECS] [-b BATCH] [-D DENSE]
 *               [--mode train|inference] [--warmup N] [--seed N]
 *               [--tag TEXT] [-R REGION_MB] [--bx-handles process|thread]
 *               [--ops OP,...]
 *
 * See tools/ps/README.md for the output format and ps.h for the protocol.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ps.h"
#include "workload.h"

#define STRIPES		256
#define HIST_PER_OCT	8	/* histogram buckets per power of two (us) */
#define HIST_N		(HIST_PER_OCT * 32)

static volatile sig_atomic_t stop;

static const char *const op_name[PS_NOPS] = {
	"info", "sparse_pull", "dense_pull", "sparse_push", "dense_push",
};

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

void ps_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Busy CPU seconds of the whole host (all CPUs) from /proc/stat. */
static double host_cpu(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	double hz = sysconf(_SC_CLK_TCK);

	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8) {
		fclose(f);
		return 0;
	}
	fclose(f);
	/* user nice system [idle iowait] irq softirq steal */
	return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (hz > 0 ? hz : 100);
}

/* Established TCP sockets of this host with @port at either end. */
void ps_count_tcp_conns(uint32_t port, struct ps_host *h)
{
	static const char *const files[] = { "/proc/net/tcp",
					     "/proc/net/tcp6" };
	long n = 0;

	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "r");
		char line[512], la[64], ra[64];
		unsigned int st;

		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f)) {
			fclose(f);
			continue;
		}
		while (fgets(line, sizeof(line), f)) {
			char *lp, *rp;

			if (sscanf(line, "%*s %63s %63s %x", la, ra, &st) != 3 ||
			    st != 1)
				continue;
			lp = strrchr(la, ':');
			rp = strrchr(ra, ':');
			if ((lp && strtoul(lp + 1, NULL, 16) == port) ||
			    (rp && strtoul(rp + 1, NULL, 16) == port))
				n++;
		}
		fclose(f);
	}
	h->conns = n;
	h->reg_bytes = 0;
}

/* ---- parameter store (server) ----------------------------------------- */

struct ps_store {
	float		*sparse;	/* keys * vfloats */
	float		*dense;		/* dkeys * dfloats */
	float		*dgrad;		/* dkeys * dfloats: expected gradients */
	pthread_mutex_t	slock[STRIPES];
	pthread_mutex_t	*dlock;
};

static int store_create(struct ps_server *s)
{
	const struct ps_info *in = &s->cfg->info;
	size_t ns = (size_t)in->keys * in->vfloats;
	size_t nd = (size_t)in->dkeys * in->dfloats;
	struct ps_store *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->sparse = malloc(ns * sizeof(float) + 1);
	st->dense = malloc(nd * sizeof(float) + 1);
	st->dgrad = malloc(nd * sizeof(float) + 1);
	st->dlock = calloc(in->dkeys + 1, sizeof(*st->dlock));
	if (!st->sparse || !st->dense || !st->dgrad || !st->dlock)
		return -ENOMEM;
	for (uint32_t k = 0; k < in->keys; k++)
		for (uint32_t i = 0; i < in->vfloats; i++)
			st->sparse[(size_t)k * in->vfloats + i] =
				ps_base(0, k, i);
	for (uint32_t k = 0; k < in->dkeys; k++) {
		for (uint32_t i = 0; i < in->dfloats; i++) {
			size_t j = (size_t)k * in->dfloats + i;

			st->dense[j] = ps_base(1, k, i);
			st->dgrad[j] = ps_grad(1, k, i);
		}
		pthread_mutex_init(&st->dlock[k], NULL);
	}
	for (int i = 0; i < STRIPES; i++)
		pthread_mutex_init(&st->slock[i], NULL);
	s->store = st;
	return 0;
}

static void store_destroy(struct ps_store *st)
{
	if (!st)
		return;
	free(st->sparse);
	free(st->dense);
	free(st->dgrad);
	free(st->dlock);
	free(st);
}

/* Validate a request header; returns the number of keys or -1. */
static long req_keys(const struct ps_server *s, const void *msg,
		     uint32_t len, struct ps_hdr *h)
{
	const struct ps_info *in = &s->cfg->info;
	uint32_t n, lim, vf, nk;
	const uint32_t *keys;

	if (len < sizeof(*h))
		return -1;
	memcpy(h, msg, sizeof(*h));
	if (h->magic != PS_MAGIC)
		return -1;
	n = h->nkeys;
	switch (h->op) {
	case PS_OP_INFO:
		return len == sizeof(*h) && n == 0 ? 0 : -1;
	case PS_OP_SPARSE_PULL:
	case PS_OP_SPARSE_PUSH:
		lim = in->max_batch;
		vf = in->vfloats;
		nk = in->keys;
		break;
	case PS_OP_DENSE_PULL:
	case PS_OP_DENSE_PUSH:
		lim = in->max_dense;
		vf = in->dfloats;
		nk = in->dkeys;
		break;
	default:
		return -1;
	}
	if (n == 0 || n > lim)
		return -1;
	if (h->op == PS_OP_SPARSE_PULL || h->op == PS_OP_DENSE_PULL) {
		if (len != sizeof(*h) + 4ull * n)
			return -1;
	} else if (len != sizeof(*h) + 4ull * n * (1 + vf)) {
		return -1;
	}
	keys = (const uint32_t *)((const char *)msg + sizeof(*h));
	for (uint32_t i = 0; i < n; i++)
		if (keys[i] >= nk)
			return -1;
	return n;
}

uint32_t ps_srv_resp_size(const struct ps_server *s, const void *req,
			  uint32_t len)
{
	const struct ps_info *in = &s->cfg->info;
	struct ps_hdr h;
	long n = req_keys(s, req, len, &h);

	if (n < 0)
		return sizeof(h);
	switch (h.op) {
	case PS_OP_INFO:
		return sizeof(h) + sizeof(struct ps_info);
	case PS_OP_SPARSE_PULL:
		return sizeof(h) + n * in->vfloats * 4;
	case PS_OP_DENSE_PULL:
		return sizeof(h) + n * in->dfloats * 4;
	}
	return sizeof(h);
}

uint32_t ps_srv_pull(struct ps_server *s, const void *req, uint32_t len,
		     void *out, uint32_t cap, struct ps_srv_stats *st)
{
	const struct ps_info *in = &s->cfg->info;
	struct ps_store *sto = s->store;
	struct ps_hdr h, *rh = out;
	long n = req_keys(s, req, len, &h);
	uint32_t size = ps_srv_resp_size(s, req, len);
	const uint32_t *keys = (const uint32_t *)((const char *)req +
						  sizeof(h));
	float *v = (float *)(rh + 1);

	st->bytes_in += len;
	if (cap < sizeof(h))
		goto bad;
	rh->magic = PS_MAGIC;
	rh->op = h.op;
	rh->nkeys = n > 0 ? n : 0;
	rh->seq = h.seq;
	rh->status = PS_ST_OK;
	if (n < 0 || h.op == PS_OP_SPARSE_PUSH || h.op == PS_OP_DENSE_PUSH) {
		rh->status = PS_ST_BADREQ;
		goto bad;
	}
	if (size > cap) {
		rh->status = PS_ST_TOOBIG;
		goto bad;
	}
	st->ops[h.op]++;
	st->bytes_out += size;
	switch (h.op) {
	case PS_OP_INFO:
		memcpy(v, in, sizeof(*in));
		break;
	case PS_OP_SPARSE_PULL:
		for (long j = 0; j < n; j++) {
			pthread_mutex_t *l = &sto->slock[keys[j] % STRIPES];

			pthread_mutex_lock(l);
			memcpy(v + j * in->vfloats,
			       sto->sparse + (size_t)keys[j] * in->vfloats,
			       in->vfloats * 4);
			pthread_mutex_unlock(l);
		}
		break;
	case PS_OP_DENSE_PULL:
		for (long j = 0; j < n; j++) {
			pthread_mutex_lock(&sto->dlock[keys[j]]);
			memcpy(v + (size_t)j * in->dfloats,
			       sto->dense + (size_t)keys[j] * in->dfloats,
			       (size_t)in->dfloats * 4);
			pthread_mutex_unlock(&sto->dlock[keys[j]]);
		}
		break;
	}
	return size;
bad:
	st->errors++;
	st->bytes_out += sizeof(h);
	return sizeof(h);
}

int ps_srv_push(struct ps_server *s, const void *msg, uint32_t len,
		struct ps_srv_stats *st)
{
	const struct ps_info *in = &s->cfg->info;
	struct ps_store *sto = s->store;
	struct ps_hdr h;
	long n = req_keys(s, msg, len, &h);
	const uint32_t *keys = (const uint32_t *)((const char *)msg +
						  sizeof(h));
	const float *g = (const float *)(keys + (n > 0 ? n : 0));

	st->bytes_in += len;
	if (n < 0 || (h.op != PS_OP_SPARSE_PUSH && h.op != PS_OP_DENSE_PUSH)) {
		st->errors++;
		return PS_ST_BADREQ;
	}
	/* Check every gradient first: a bad message changes nothing. */
	if (h.op == PS_OP_SPARSE_PUSH) {
		for (long j = 0; j < n; j++)
			for (uint32_t i = 0; i < in->vfloats; i++)
				if (g[j * in->vfloats + i] !=
				    ps_grad(0, keys[j], i))
					goto badgrad;
		for (long j = 0; j < n; j++) {
			pthread_mutex_t *l = &sto->slock[keys[j] % STRIPES];
			float *v = sto->sparse + (size_t)keys[j] * in->vfloats;

			pthread_mutex_lock(l);
			for (uint32_t i = 0; i < in->vfloats; i++)
				v[i] -= PS_LR * g[j * in->vfloats + i];
			pthread_mutex_unlock(l);
		}
	} else {
		size_t df = in->dfloats;

		for (long j = 0; j < n; j++)
			if (memcmp(g + j * df, sto->dgrad + keys[j] * df,
				   df * 4))
				goto badgrad;
		for (long j = 0; j < n; j++) {
			float *v = sto->dense + keys[j] * df;
			const float *gj = g + j * df;

			pthread_mutex_lock(&sto->dlock[keys[j]]);
			for (size_t i = 0; i < df; i++)
				v[i] -= PS_LR * gj[i];
			pthread_mutex_unlock(&sto->dlock[keys[j]]);
		}
	}
	st->ops[h.op]++;
	return PS_ST_OK;
badgrad:
	st->errors++;
	return PS_ST_BADGRAD;
}

void ps_srv_stats_add(struct ps_srv_stats *to, const struct ps_srv_stats *st)
{
	for (int i = 0; i < PS_NOPS; i++)
		to->ops[i] += st->ops[i];
	to->bytes_in += st->bytes_in;
	to->bytes_out += st->bytes_out;
	to->errors += st->errors;
	to->conns += st->conns;
}

void ps_srv_ready(struct ps_server *s)
{
	printf("ps-server-ready transport=%s service=%u\n",
	       s->cfg->tp->name, s->cfg->service);
	fflush(stdout);
}

struct serve_arg {
	struct ps_server	*s;
	struct ps_srv_stats	tot;
	int			rc;
	volatile int		done;
};

static void *serve_main(void *p)
{
	struct serve_arg *a = p;

	a->rc = a->s->cfg->tp->serve(a->s, &a->tot);
	a->done = 1;
	stop = 1;
	return NULL;
}

static int run_server(struct ps_cfg *cfg)
{
	struct ps_server s = { .cfg = cfg, .stop = &stop };
	struct serve_arg a = { .s = &s };
	struct ps_host h, max = { 0, 0 };
	double t0, c0, hc0, end, dt, cpu, hcpu;
	uint64_t ops = 0;
	pthread_t th;
	int ret;

	ret = store_create(&s);
	if (ret) {
		fprintf(stderr, "bxps: store: %s\n", strerror(-ret));
		return 2;
	}
	t0 = wl_now_us() / 1e6;
	c0 = wl_proc_cpu_us() / 1e6;
	hc0 = host_cpu();
	end = cfg->secs > 0 ? t0 + cfg->secs : 0;
	if (pthread_create(&th, NULL, serve_main, &a)) {
		fprintf(stderr, "bxps: pthread_create failed\n");
		return 2;
	}
	/* Sample host-wide connections and registered memory meanwhile. */
	while (!stop && !a.done) {
		ps_sleep_us(250000);
		cfg->tp->host_sample(cfg, &h);
		if (h.conns > max.conns)
			max.conns = h.conns;
		if (h.reg_bytes > max.reg_bytes)
			max.reg_bytes = h.reg_bytes;
		if (end && wl_now_us() / 1e6 >= end)
			stop = 1;
	}
	pthread_join(th, NULL);
	dt = wl_now_us() / 1e6 - t0;
	cpu = wl_proc_cpu_us() / 1e6 - c0;
	hcpu = host_cpu() - hc0;
	store_destroy(s.store);
	if (a.rc) {
		fprintf(stderr, "bxps server: %s\n", strerror(-a.rc));
		return 2;
	}
	for (int i = 0; i < PS_NOPS; i++)
		ops += a.tot.ops[i];
	printf("ps-server transport=%s threads=%d secs=%.1f ops=%llu",
	       cfg->tp->name, cfg->threads, dt, (unsigned long long)ops);
	for (int i = 0; i < PS_NOPS; i++)
		printf(" %s=%llu", op_name[i],
		       (unsigned long long)a.tot.ops[i]);
	printf(" bytes_in=%llu bytes_out=%llu errors=%llu cpu_us=%.0f"
	       " cpu_us_per_op=%.1f host_cpu_us_per_op=%.1f conns=%ld"
	       " reg_bytes=%lld accepted=%llu",
	       (unsigned long long)a.tot.bytes_in,
	       (unsigned long long)a.tot.bytes_out,
	       (unsigned long long)a.tot.errors, cpu * 1e6,
	       ops ? cpu * 1e6 / ops : 0.0, ops ? hcpu * 1e6 / ops : 0.0,
	       max.conns, max.reg_bytes, (unsigned long long)a.tot.conns);
	printf("%s%s\n", cfg->tag ? " tag=" : "", cfg->tag ? cfg->tag : "");
	fflush(stdout);
	return a.tot.errors ? 1 : 0;
}

/* ---- worker ----------------------------------------------------------- */

/*
 * The worker's load is tools/lib/workload's: THREADS threads, each with
 * its own connection, run WARMUP unmeasured rounds, start together and
 * run ROUNDS rounds (or SECS); a round is a cycle of the operations of
 * --ops in the order of enum ps_op, one at a time. Here is what an
 * operation does: op_prep() builds the request (a round's first also
 * picks its keys), op_call() sends it and waits for the answer (timed),
 * op_check() verifies it.
 */
struct wthread {
	struct worker	*w;
	int		idx;
	struct ps_conn	*pc;
	uint8_t		*req, *sresp, *dresp, *pbuf;
	uint32_t	*keys, dkeys[64];
	uint64_t	rng;
	uint32_t	seq;
	uint32_t	len;		/* the op's request bytes */
	long		rounds;
	int		fatal;
	int		nerr_msgs;
	uint64_t	retries[PS_NOPS];
};

struct worker {
	struct ps_cfg		*cfg;
	struct ps_client	*cl;
	float			*dbase;		/* dkeys * dfloats */
	float			*dgrad;
	struct wthread		*t;
	double			t0, c0, hc0;	/* at the start */
	int			nkinds;
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void werr(struct wthread *t, int op, const char *what, int err)
{
	if (t->nerr_msgs++ < 5)
		fprintf(stderr, "bxps worker thread %d: %s %s: %s\n", t->idx,
			op_name[op], what, err ? strerror(-err) : "bad data");
}

/* Every element of each key must show the same number of updates. */
static bool check_values(int table, const uint32_t *keys, uint32_t n,
			 uint32_t vf, const float *v, const float *base,
			 const float *grad)
{
	for (uint32_t j = 0; j < n; j++) {
		const float *x = v + (size_t)j * vf;
		float b0, s0, upd;

		if (base) {
			const float *bj = base + (size_t)keys[j] * vf;
			const float *gj = grad + (size_t)keys[j] * vf;

			upd = (bj[0] - x[0]) / (PS_LR * gj[0]);
			if (!(upd >= 0) || !isfinite(upd) ||
			    upd != floorf(upd))
				return false;
			for (uint32_t i = 1; i < vf; i++)
				if (bj[i] - x[i] != upd * PS_LR * gj[i])
					return false;
			continue;
		}
		b0 = ps_base(table, keys[j], 0);
		s0 = PS_LR * ps_grad(table, keys[j], 0);
		upd = (b0 - x[0]) / s0;
		if (!(upd >= 0) || !isfinite(upd) || upd != floorf(upd))
			return false;
		for (uint32_t i = 1; i < vf; i++)
			if (ps_base(table, keys[j], i) - x[i] !=
			    upd * PS_LR * ps_grad(table, keys[j], i))
				return false;
	}
	return true;
}

static bool check_hdr(const void *resp, int len, uint32_t want_len, int op,
		      uint32_t nkeys, uint32_t seq)
{
	struct ps_hdr h;

	if (len < (int)sizeof(h))
		return false;
	memcpy(&h, resp, sizeof(h));
	return (uint32_t)len == want_len && h.magic == PS_MAGIC &&
	       h.op == op && h.status == PS_ST_OK && h.nkeys == nkeys &&
	       h.seq == seq;
}

static void put_hdr(void *buf, int op, uint32_t nkeys, uint32_t seq)
{
	struct ps_hdr h = { PS_MAGIC, (uint16_t)op, 0, nkeys, seq };

	memcpy(buf, &h, sizeof(h));
}

static bool is_pull(int op)
{
	return op == PS_OP_SPARSE_PULL || op == PS_OP_DENSE_PULL;
}

/* A push of @n keys of @vf floats: header and keys; where its gradients go. */
static float *push_start(struct wthread *t, int op, const uint32_t *keys,
			 uint32_t n, uint32_t vf)
{
	uint32_t *k = (uint32_t *)(t->pbuf + sizeof(struct ps_hdr));

	put_hdr(t->pbuf, op, n, ++t->seq);
	memcpy(k, keys, n * 4);
	t->len = sizeof(struct ps_hdr) + n * 4 * (1 + vf);
	return (float *)(k + n);
}

/* The request of @op; a round's first op picks the round's keys. */
static int op_prep(void *ctx, const struct wl_op *op)
{
	struct wthread *t = ctx;
	const struct ps_cfg *cfg = t->w->cfg;
	const struct ps_info *in = &cfg->info;
	uint32_t b = cfg->batch, d = cfg->dense;
	float *g;

	/* A timed-out operation left the connection unusable. */
	if (t->fatal)
		return -ETIMEDOUT;
	if (op->seq % t->w->nkinds == 0) {
		/* Keys of the round: a random batch, a rotating dense window. */
		for (uint32_t j = 0; j < b; j++)
			t->keys[j] = rnd(&t->rng) % in->keys;
		for (uint32_t j = 0; j < d; j++)
			t->dkeys[j] = (uint32_t)((t->idx + t->rounds * d + j) %
						 in->dkeys);
		t->rounds++;
	}
	switch (op->kind) {
	case PS_OP_SPARSE_PULL:
	case PS_OP_DENSE_PULL:
		if (op->kind == PS_OP_DENSE_PULL)
			b = d;
		put_hdr(t->req, op->kind, b, ++t->seq);
		memcpy(t->req + sizeof(struct ps_hdr),
		       op->kind == PS_OP_DENSE_PULL ? t->dkeys : t->keys, b * 4);
		t->len = sizeof(struct ps_hdr) + b * 4;
		break;
	case PS_OP_SPARSE_PUSH:
		/* Gradient pushes for what was pulled. */
		g = push_start(t, op->kind, t->keys, b, in->vfloats);
		for (uint32_t j = 0; j < b; j++)
			for (uint32_t i = 0; i < in->vfloats; i++)
				*g++ = ps_grad(0, t->keys[j], i);
		break;
	case PS_OP_DENSE_PUSH:
		g = push_start(t, op->kind, t->dkeys, d, in->dfloats);
		for (uint32_t j = 0; j < d; j++)
			memcpy(g + (size_t)j * in->dfloats,
			       t->w->dgrad + (size_t)t->dkeys[j] * in->dfloats,
			       (size_t)in->dfloats * 4);
		break;
	}
	return 0;
}

static uint32_t resp_len(const struct wthread *t, int op)
{
	const struct ps_cfg *cfg = t->w->cfg;

	return sizeof(struct ps_hdr) + (op == PS_OP_SPARSE_PULL ?
		cfg->batch * cfg->info.vfloats * 4 :
		cfg->dense * cfg->info.dfloats * 4);
}

static int op_call(void *ctx, const struct wl_op *op, struct wl_done *d)
{
	struct wthread *t = ctx;
	const struct ps_transport *tp = t->w->cfg->tp;

	if (op->kind == PS_OP_SPARSE_PULL)
		d->res = tp->pull(t->pc, t->req, t->len, t->sresp,
				  resp_len(t, op->kind), &t->retries[op->kind]);
	else if (op->kind == PS_OP_DENSE_PULL)
		d->res = tp->pull(t->pc, t->req, t->len, t->dresp,
				  resp_len(t, op->kind), &t->retries[op->kind]);
	else
		d->res = tp->push(t->pc, t->pbuf, t->len,
				  &t->retries[op->kind]);
	return 0;
}

/* Verify the answer; count the request's bytes and the response's. */
static void op_check(void *ctx, const struct wl_op *op, struct wl_done *d)
{
	struct wthread *t = ctx;
	const struct ps_cfg *cfg = t->w->cfg;
	const struct ps_info *in = &cfg->info;
	uint32_t want = resp_len(t, op->kind);
	int r = d->res;

	if (r < 0) {
		werr(t, op->kind, is_pull(op->kind) ? "pull" : "push", r);
		if (r == -ETIMEDOUT)
			t->fatal = 1;
		else
			ps_sleep_us(10000);
		return;
	}
	d->res = t->len + (is_pull(op->kind) ? (uint32_t)r : 0);
	if (op->kind == PS_OP_SPARSE_PULL &&
	    (!check_hdr(t->sresp, r, want, op->kind, cfg->batch, t->seq) ||
	     !check_values(0, t->keys, cfg->batch, in->vfloats,
			   (float *)(t->sresp + sizeof(struct ps_hdr)),
			   NULL, NULL)))
		d->fate = WL_BAD;
	if (op->kind == PS_OP_DENSE_PULL &&
	    (!check_hdr(t->dresp, r, want, op->kind, cfg->dense, t->seq) ||
	     !check_values(1, t->dkeys, cfg->dense, in->dfloats,
			   (float *)(t->dresp + sizeof(struct ps_hdr)),
			   t->w->dbase, t->w->dgrad)))
		d->fate = WL_BAD;
	if (d->fate == WL_BAD)
		werr(t, op->kind, "verify", 0);
}

static const struct wl_ops ps_ops = {
	.prep = op_prep, .call = op_call, .check = op_check,
};

static int thread_ctx(void *arg, uint32_t worker, void **ctx)
{
	*ctx = &((struct worker *)arg)->t[worker];
	return 0;
}

/* INFO from the server, retried while it is not up yet (20 s). */
static int fetch_info(struct ps_cfg *cfg)
{
	const struct ps_transport *tp = cfg->tp;
	double end = wl_now_us() + 20e6;
	int r = -ETIMEDOUT;

	while (wl_now_us() < end && !stop) {
		struct ps_client *cl;
		struct ps_conn *pc;
		uint8_t *req, *resp;
		uint64_t retries = 0;
		uint32_t want = sizeof(struct ps_hdr) + sizeof(struct ps_info);

		r = tp->client_init(cfg, &cl);
		if (r)
			return r;
		r = tp->conn_open(cl, &pc);
		if (!r) {
			req = tp->buf_alloc(pc, sizeof(struct ps_hdr));
			resp = tp->buf_alloc(pc, 4096);
			if (!req || !resp) {
				r = -ENOMEM;
			} else {
				put_hdr(req, PS_OP_INFO, 0, 1);
				r = tp->pull(pc, req, sizeof(struct ps_hdr),
					     resp, 4096, &retries);
				if (r >= 0 && !check_hdr(resp, r, want,
							 PS_OP_INFO, 0, 1))
					r = -EBADMSG;
				if (r >= 0)
					memcpy(&cfg->info,
					       resp + sizeof(struct ps_hdr),
					       sizeof(cfg->info));
			}
			tp->conn_close(pc);
		}
		tp->client_fini(cl);
		if (r >= 0)
			return 0;
		if (r != -ECONNREFUSED && r != -ECONNRESET &&
		    r != -EHOSTUNREACH && r != -ENOTCONN && r != -ENOBUFS &&
		    r != -ECONNABORTED)
			return r;
		ps_sleep_us(200000);
	}
	return r;
}

/* Every thread has warmed up: the measurement starts. */
static void measure_start(void *arg, struct wl_run *run, int cell)
{
	struct worker *w = arg;

	(void)run;
	(void)cell;
	w->t0 = wl_now_us();
	w->c0 = wl_proc_cpu_us();
	w->hc0 = host_cpu();
}

/* Errors of an op, warm-up included: failures and wrong answers. */
static uint64_t op_errors(const struct wl_res *r, int op)
{
	return r->warm.failed[op] + r->warm.bad[op] + r->run.failed[op] +
	       r->run.bad[op];
}

/* Every thread is done, its connection still up. */
static void measure_end(void *arg, struct wl_run *run, int cell)
{
	struct worker *w = arg;
	const struct ps_cfg *cfg = w->cfg;
	const char *mode = cfg->inference ? "inference" : "train";
	double dt = (wl_now_us() - w->t0) / 1e6;
	double cpu = (wl_proc_cpu_us() - w->c0) / 1e6;
	double hcpu = host_cpu() - w->hc0;
	struct ps_host h = { -1, -1 };
	uint64_t allops = 0;

	(void)cell;
	/* Connections are still up: sample the host. */
	cfg->tp->host_sample(cfg, &h);
	for (int t = 0; t < cfg->threads; t++)
		for (int op = 1; op < PS_NOPS; op++)
			allops += wl_res(run, 0, t)->run.ok[op] +
				  wl_res(run, 0, t)->run.bad[op];
	for (int op = 1; op < PS_NOPS; op++) {
		uint64_t n = 0, bytes = 0, errs = 0, retries = 0;
		uint64_t hist[HIST_N] = { 0 };
		double cpuop = 0, sum = 0, *v;
		bool first = true;

		if (!(cfg->ops & 1u << op))
			continue;
		for (int t = 0; t < cfg->threads; t++) {
			const struct wl_res *r = wl_res(run, 0, t);

			bytes += r->run.bytes[op];
			errs += op_errors(r, op);
			retries += w->t[t].retries[op];
			cpuop += r->run.cpu_us[op];
		}
		v = wl_latencies(run, op, &n);
		if (!v)
			continue;
		for (uint64_t i = 0; i < n; i++) {
			int b = wl_hist_bucket(v[i], HIST_PER_OCT);

			sum += v[i];
			hist[b < HIST_N ? b : HIST_N - 1]++;
		}
		printf("ps-result transport=%s mode=%s op=%s threads=%d"
		       " secs=%.2f n=%llu ops_s=%.1f mb_s=%.2f mean_us=%.1f"
		       " p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f"
		       " errors=%llu retries=%llu cpu_us_per_op=%.1f"
		       " proc_cpu_us_per_op=%.1f host_cpu_us_per_op=%.1f"
		       " conns=%ld reg_bytes=%lld bytes=%llu%s%s\n",
		       cfg->tp->name, mode, op_name[op], cfg->threads, dt,
		       (unsigned long long)n, dt > 0 ? n / dt : 0,
		       dt > 0 ? bytes / dt / 1e6 : 0, n ? sum / n : 0,
		       wl_pctl(v, n, 0.5), wl_pctl(v, n, 0.99),
		       wl_pctl(v, n, 0.999), n ? v[n - 1] : 0,
		       (unsigned long long)errs, (unsigned long long)retries,
		       n ? cpuop / n : 0, allops ? cpu * 1e6 / allops : 0,
		       allops ? hcpu * 1e6 / allops : 0, h.conns,
		       h.reg_bytes, (unsigned long long)bytes,
		       cfg->tag ? " tag=" : "", cfg->tag ? cfg->tag : "");
		/* Log-scale histogram (HIST_PER_OCT buckets per octave of
		 * microseconds) so that a driver can merge workers exactly
		 * enough for percentiles.
		 */
		printf("ps-hist transport=%s mode=%s op=%s per_oct=%d h=",
		       cfg->tp->name, mode, op_name[op], HIST_PER_OCT);
		for (int i = 0; i < HIST_N; i++) {
			if (!hist[i])
				continue;
			printf("%s%d:%llu", first ? "" : ",", i,
			       (unsigned long long)hist[i]);
			first = false;
		}
		printf("%s\n", first ? "-" : "");
		free(v);
	}
}

static int run_worker(struct ps_cfg *cfg)
{
	struct worker w = { .cfg = cfg };
	struct ps_info *in = &cfg->info;
	uint64_t errs = 0, rounds = 0, ops = 0;
	uint32_t kinds[PS_NOPS];
	struct wl_cell cell = { .warmup = 0 };
	struct wl_cfg wc = {
		.prog = "bxps", .ops = &ps_ops, .workers = cfg->threads,
		.threads = true, .cells = &cell, .ncells = 1, .kinds = kinds,
		.whole_cycles = true, .stop = &stop, .samples = WL_GROW,
		.op_cpu = true, .sync_cells = true, .arg = &w,
		.open = thread_ctx,
		.before = measure_start, .after = measure_end,
	};
	struct wl_run *run;
	size_t nd;
	int ret, rc = 0;

	ret = fetch_info(cfg);
	if (ret) {
		fprintf(stderr, "bxps worker: no answer from %s: %s\n",
			cfg->addr, strerror(-ret));
		return 2;
	}
	if (cfg->dense > in->max_dense)
		cfg->dense = in->max_dense;
	if (cfg->dense > in->dkeys)
		cfg->dense = in->dkeys;
	if (cfg->dense > 64)
		cfg->dense = 64;
	if (!cfg->batch || cfg->batch > in->max_batch || !cfg->dense ||
	    !in->keys || !in->vfloats || !in->dfloats ||
	    sizeof(struct ps_hdr) + 4 * cfg->batch > PS_REQ_MAX) {
		fprintf(stderr, "bxps worker: batch %u / dense %u do not fit"
			" the server (max batch %u, dense %u)\n", cfg->batch,
			cfg->dense, in->max_batch, in->max_dense);
		return 2;
	}
	/* Expected dense values and gradients, computed once. */
	nd = (size_t)in->dkeys * in->dfloats;
	w.dbase = malloc(nd * sizeof(float));
	w.dgrad = malloc(nd * sizeof(float));
	w.t = calloc(cfg->threads, sizeof(*w.t));
	if (!w.dbase || !w.dgrad || !w.t)
		return 2;
	for (uint32_t k = 0; k < in->dkeys; k++)
		for (uint32_t i = 0; i < in->dfloats; i++) {
			w.dbase[(size_t)k * in->dfloats + i] = ps_base(1, k, i);
			w.dgrad[(size_t)k * in->dfloats + i] = ps_grad(1, k, i);
		}

	cfg->thread_bytes = PS_REQ_MAX + 3 * 4096 +
		2 * (sizeof(struct ps_hdr) + (uint64_t)cfg->batch * 4 *
		     (1 + in->vfloats)) +
		2 * (sizeof(struct ps_hdr) + (uint64_t)cfg->dense * 4 *
		     (1 + in->dfloats));
	ret = cfg->tp->client_init(cfg, &w.cl);
	if (ret) {
		fprintf(stderr, "bxps worker: init: %s\n", strerror(-ret));
		return 2;
	}
	for (int i = 0; i < cfg->threads; i++) {
		struct wthread *t = &w.t[i];
		uint32_t sp = 4 * cfg->batch * (1 + in->vfloats);
		uint32_t dp = 4 * cfg->dense * (1 + in->dfloats);

		t->w = &w;
		t->idx = i;
		t->rng = (cfg->seed ^ ((uint64_t)getpid() << 20) ^
			  (0x9e3779b97f4a7c15ull * (i + 1))) | 1;
		ret = cfg->tp->conn_open(w.cl, &t->pc);
		if (ret) {
			fprintf(stderr, "bxps worker: connect: %s\n",
				strerror(-ret));
			return 2;
		}
		t->req = cfg->tp->buf_alloc(t->pc, PS_REQ_MAX);
		t->sresp = cfg->tp->buf_alloc(t->pc, sizeof(struct ps_hdr) +
					      cfg->batch * in->vfloats * 4);
		t->dresp = cfg->tp->buf_alloc(t->pc, sizeof(struct ps_hdr) +
					      (size_t)cfg->dense *
					      in->dfloats * 4);
		t->pbuf = cfg->tp->buf_alloc(t->pc, sizeof(struct ps_hdr) +
					     (sp > dp ? sp : dp));
		t->keys = calloc(cfg->batch, 4);
		if (!t->req || !t->sresp || !t->dresp || !t->pbuf || !t->keys) {
			fprintf(stderr, "bxps worker: out of buffer memory\n");
			return 2;
		}
	}
	/* A round: the operations of --ops, in the order of enum ps_op. */
	for (int op = 1; op < PS_NOPS; op++)
		if (cfg->ops & 1u << op)
			kinds[w.nkinds++] = op;
	wc.nkinds = w.nkinds;
	cell.warmup = cfg->warmup * w.nkinds;
	wc.iters = cfg->secs > 0 ? -1 : cfg->rounds * w.nkinds;
	wc.secs = cfg->secs > 0 ? cfg->secs : -1;
	ret = wl_drive(&wc, &run);
	if (ret) {
		fprintf(stderr, "bxps worker: %s\n", strerror(-ret));
		return 2;
	}
	rc = wl_failed(run);
	for (int i = 0; i < cfg->threads; i++) {
		const struct wl_res *r = wl_res(run, 0, i);
		struct wthread *t = &w.t[i];

		for (int op = 0; op < PS_NOPS; op++) {
			errs += op_errors(r, op);
			ops += r->run.ok[op] + r->run.bad[op];
		}
		rounds += t->rounds;
		rc |= t->fatal;
		cfg->tp->conn_close(t->pc);
		free(t->keys);
	}
	wl_free(run);
	cfg->tp->client_fini(w.cl);
	printf("ps-worker transport=%s mode=%s threads=%d rounds=%llu"
	       " ops=%llu errors=%llu status=%s%s%s\n", cfg->tp->name,
	       cfg->inference ? "inference" : "train", cfg->threads,
	       (unsigned long long)rounds, (unsigned long long)ops,
	       (unsigned long long)errs, errs || rc ? "FAIL" : "ok",
	       cfg->tag ? " tag=" : "", cfg->tag ? cfg->tag : "");
	fflush(stdout);
	free(w.dbase);
	free(w.dgrad);
	free(w.t);
	return errs || rc ? 1 : 0;
}

/* ---- main ------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
"usage: bxps server -T bx|tcp [-s SERVICE|PORT] [-k KEYS] [-v FLOATS]\n"
"                   [-K DENSE_KEYS] [-V DENSE_FLOATS] [-B MAX_BATCH]\n"
"                   [-D MAX_DENSE] [-t THREADS] [-d SECS] [-n NRECV]\n"
"                   [-R REGION_MB] [--tag TEXT]\n"
"       bxps worker -T bx|tcp -a ADDR [-s SERVICE|PORT] [-w THREADS]\n"
"                   [-r ROUNDS | -d SECS] [-b BATCH] [-D DENSE]\n"
"                   [--mode train|inference] [--warmup N] [--seed N]\n"
"                   [-R REGION_MB] [--bx-handles process|thread]\n"
"                   [--ops OP,...] [--tag TEXT]\n"
"       OP: sparse_pull dense_pull sparse_push dense_push\n");
	exit(2);
}

static unsigned long num(const char *s)
{
	char *e;
	unsigned long v = strtoul(s, &e, 0);

	if (*s == '\0' || *e != '\0')
		usage();
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "seed", required_argument, NULL, 'S' },
		{ "tag", required_argument, NULL, 'g' },
		{ "bx-handles", required_argument, NULL, 'H' },
		{ "ops", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ps_cfg cfg = {
		.info = { .keys = 100000, .vfloats = 16, .dkeys = 4,
			  .dfloats = 65536, .max_batch = 512, .max_dense = 2 },
		.threads = 2, .batch = 256, .dense = 1, .warmup = 2,
		.seed = 1, .nrecv = 64,
	};
	const char *tname = NULL;
	bool port_set = false;
	struct sigaction sa = { .sa_handler = on_signal };
	int opt;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "server"))
		cfg.server = true;
	else if (strcmp(argv[1], "worker"))
		usage();
	optind = 2;
	while ((opt = getopt_long(argc, argv,
				  "T:a:s:k:v:K:V:B:D:t:w:d:r:b:R:n:m:h",
				  lopts, NULL)) != -1) {
		switch (opt) {
		case 'T': tname = optarg; break;
		case 'a': cfg.addr = optarg; break;
		case 's': cfg.service = num(optarg); port_set = true; break;
		case 'k': cfg.info.keys = num(optarg); break;
		case 'v': cfg.info.vfloats = num(optarg); break;
		case 'K': cfg.info.dkeys = num(optarg); break;
		case 'V': cfg.info.dfloats = num(optarg); break;
		case 'B': cfg.info.max_batch = num(optarg); break;
		case 'D':
			cfg.info.max_dense = num(optarg);
			cfg.dense = cfg.info.max_dense;
			break;
		case 't':
		case 'w': cfg.threads = num(optarg); break;
		case 'd': cfg.secs = atof(optarg); break;
		case 'r': cfg.rounds = num(optarg); break;
		case 'b': cfg.batch = num(optarg); break;
		case 'R': cfg.region_mb = num(optarg); break;
		case 'n': cfg.nrecv = num(optarg); break;
		case 'm':
			if (!strcmp(optarg, "inference"))
				cfg.inference = true;
			else if (strcmp(optarg, "train"))
				usage();
			break;
		case 'W': cfg.warmup = num(optarg); break;
		case 'S': cfg.seed = num(optarg); break;
		case 'g': cfg.tag = optarg; break;
		case 'O':
			cfg.ops = 0;
			for (char *t = strtok(optarg, ","); t;
			     t = strtok(NULL, ",")) {
				int op = 1;

				while (op < PS_NOPS && strcmp(t, op_name[op]))
					op++;
				if (op == PS_NOPS)
					usage();
				cfg.ops |= 1u << op;
			}
			if (!cfg.ops)
				usage();
			break;
		case 'H':
			if (!strcmp(optarg, "thread"))
				cfg.bx_per_thread = true;
			else if (strcmp(optarg, "process"))
				usage();
			break;
		default: usage();
		}
	}
	if (optind != argc || !tname)
		usage();
	if (!strcmp(tname, "bx"))
		cfg.tp = &ps_bx_transport;
	else if (!strcmp(tname, "tcp"))
		cfg.tp = &ps_tcp_transport;
	else
		usage();
	if (!port_set)
		cfg.service = cfg.tp == &ps_bx_transport ? 60 : 7070;
	if (cfg.threads < 1 || cfg.threads > 256 || cfg.nrecv < 8 ||
	    cfg.nrecv > 4096 || !cfg.service ||
	    (cfg.tp == &ps_tcp_transport && cfg.service > 65535))
		usage();
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cfg.server) {
		const struct ps_info *in = &cfg.info;

		if (!in->keys || !in->vfloats || !in->dkeys || !in->dfloats ||
		    !in->max_batch || !in->max_dense ||
		    sizeof(struct ps_hdr) + 4ull * in->max_batch > PS_REQ_MAX ||
		    (uint64_t)in->max_batch * in->vfloats * 4 > (8u << 20) ||
		    (uint64_t)in->max_dense * in->dfloats * 4 > (16u << 20) -
		    1024)
			usage();
		return run_server(&cfg);
	}
	if (!cfg.addr)
		usage();
	if (!cfg.rounds && cfg.secs <= 0)
		cfg.rounds = 100;
	if (!cfg.ops)
		cfg.ops = cfg.inference ?
			  1u << PS_OP_SPARSE_PULL | 1u << PS_OP_DENSE_PULL :
			  (1u << PS_NOPS) - 2;
	return run_worker(&cfg);
}
