// SPDX-License-Identifier: GPL-2.0
/*
 * workload: the push/pull load of bxperf, bxps and bx_pp (workload.h).
 *
 * The workers' results live in one shared anonymous mapping made before
 * the workers start, so that forked processes and threads leave them in
 * the same place: per worker its gate counter and latencies, per cell
 * and worker a struct wl_res.
 *
 * Gates: worker w arrives at its g-th gate by setting at[w] = g, then
 * sleeps on the futex "opened" until the parent has set it to g. The
 * parent waits (futex "arrivals", woken at each arrival) until every
 * worker has arrived or has ended (reaped with waitpid(), so that a
 * process killed or crashed before a gate never holds up the others),
 * runs its hook and opens the gate. A worker process whose parent has
 * gone leaves instead of waiting for ever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

#define REAP_MAX	64

struct shared {
	_Atomic uint32_t	opened;		/* gates opened so far */
	_Atomic uint32_t	arrivals;	/* bumped at every arrival */
};

/* A worker's own part of the mapping. */
struct wstate {
	_Atomic uint32_t	at;		/* gates it has arrived at */
	uint64_t		nlat, cap;	/* latencies of its cell last run */
	double			*us;
	uint8_t			*kind;
};

struct wl_run {
	const struct wl_cfg	*cfg;
	void			*map;
	size_t			mapsize;
	struct shared		*sh;
	struct wstate		*ws;
	struct wl_res		*res;		/* [cell][worker] */
	pid_t			parent;
	pid_t			*pid;		/* processes */
	pthread_t		*th;		/* threads */
	struct worker		*w;		/* threads */
	bool			*gone;		/* ended and reaped, or never ran */
	int			failed;
};

/* A worker, in its own process or thread. */
struct worker {
	struct wl_run		*run;
	const struct wl_cfg	*cfg;
	uint32_t		idx;
	void			*ctx;
	uint32_t		gates;		/* passed */
	int			status;		/* its exit status */
	unsigned short		xs[3];		/* Poisson arrivals */
	struct wl_op		*op;		/* per slot */
	double			*t_issue;	/* per slot */
	uint32_t		*freeslots;
	struct wl_done		d[REAP_MAX];
};

/* One phase of a cell: the warm-up or the measured part. */
struct phase {
	const struct wl_cell	*cell;
	struct wl_stats		*st;
	long			limit;		/* ops; <0: none */
	double			secs;		/* <0: none */
	long			minops;
	double			rate;
	uint32_t		depth;
	bool			measured;
	int			nfail;		/* failures printed */
};

/* ---- clocks ----------------------------------------------------------- */

static double ts_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

double wl_now_us(void)
{
	return ts_us(CLOCK_MONOTONIC);
}

double wl_thread_cpu_us(void)
{
	return ts_us(CLOCK_THREAD_CPUTIME_ID);
}

double wl_proc_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

void wl_machine_cpu(uint64_t *busy, uint64_t *total)
{
	unsigned long long v[5] = { 0 };
	double us = 1e6 / sysconf(_SC_CLK_TCK);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	FILE *f = fopen("/proc/stat", "r");

	*busy = *total = 0;
	if (!f)
		return;
	*total = wl_now_us() * (ncpu > 0 ? ncpu : 1);
	/* user nice system idle iowait */
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4]) == 5)
		*busy = *total - (uint64_t)((v[3] + v[4]) * us);
	fclose(f);
}

/* ---- gates -------------------------------------------------------------- */

static void futex_wait(_Atomic uint32_t *word, uint32_t val, int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL,
		0);
}

/* In the worker: arrive at the next gate and wait until it opens. */
static void gate_pass(struct worker *w)
{
	struct wl_run *run = w->run;
	uint32_t g = ++w->gates;

	atomic_store_explicit(&run->ws[w->idx].at, g, memory_order_release);
	atomic_fetch_add_explicit(&run->sh->arrivals, 1, memory_order_release);
	futex_wake(&run->sh->arrivals);
	for (;;) {
		uint32_t o = atomic_load_explicit(&run->sh->opened,
						  memory_order_acquire);

		if (o >= g)
			return;
		futex_wait(&run->sh->opened, o, 1000);
		if (!w->cfg->threads && getppid() != run->parent)
			_exit(3);
	}
}

/* Processes that have ended, reaped: they arrive nowhere any more. */
static void reap_ended(struct wl_run *run, bool block)
{
	for (uint32_t i = 0; i < run->cfg->workers; i++) {
		int st;
		pid_t p;

		if (run->gone[i])
			continue;
		do
			p = waitpid(run->pid[i], &st, block ? 0 : WNOHANG);
		while (p < 0 && errno == EINTR);
		if (p == 0)
			continue;
		run->gone[i] = true;
		if (p < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			run->failed++;
	}
}

/* In the parent: wait until every worker has arrived at gate @g. */
static void gate_wait_all(struct wl_run *run, uint32_t g)
{
	for (;;) {
		uint32_t a = atomic_load_explicit(&run->sh->arrivals,
						  memory_order_acquire);
		bool all = true;

		for (uint32_t i = 0; all && i < run->cfg->workers; i++)
			all = run->gone[i] ||
			      atomic_load_explicit(&run->ws[i].at,
						   memory_order_acquire) >= g;
		if (all)
			return;
		futex_wait(&run->sh->arrivals, a, 100);
		if (!run->cfg->threads)
			reap_ended(run, false);
	}
}

static void gate_open(struct wl_run *run, uint32_t g)
{
	atomic_store_explicit(&run->sh->opened, g, memory_order_release);
	futex_wake(&run->sh->opened);
}

/* ---- a worker's operations ------------------------------------------- */

static struct wl_op op_at(const struct worker *w, const struct phase *ph,
			  uint64_t i, uint32_t slot)
{
	const struct wl_cfg *cfg = w->cfg;
	const struct wl_cell *c = ph->cell;
	uint64_t every = cfg->size_every ? cfg->size_every :
			 (uint64_t)cfg->nkinds;
	struct wl_op op = {
		.kind = cfg->kinds[i % cfg->nkinds], .slot = slot, .seq = i,
		.measured = ph->measured,
	};

	if (c->nsizes)
		op.size = c->sizes[i / every % c->nsizes];
	return op;
}

/* Issue no more? (@now: the time; @t0: the phase's start) */
static bool phase_over(const struct worker *w, const struct phase *ph,
		       uint64_t issued, double now, double t0)
{
	const struct wl_cfg *cfg = w->cfg;

	if (ph->limit >= 0 && issued >= (uint64_t)ph->limit)
		return true;
	if (cfg->whole_cycles && issued % cfg->nkinds)
		return false;
	if (cfg->stop && *cfg->stop)
		return true;
	return ph->secs >= 0 && issued >= (uint64_t)ph->minops &&
	       now - t0 >= ph->secs * 1e6;
}

/* Exponential gap of mean 1/rate, in µs. */
static double gap_us(struct worker *w, double rate)
{
	return -log(1 - erand48(w->xs)) * 1e6 / rate;
}

static void lat_add(struct worker *w, uint32_t kind, double us)
{
	struct wstate *ws = &w->run->ws[w->idx];

	if (ws->nlat == ws->cap) {
		uint64_t cap = ws->cap ? ws->cap * 2 : 4096;
		double *v;
		uint8_t *k;

		if (w->cfg->samples != WL_GROW)
			return;
		v = realloc(ws->us, cap * sizeof(*v));
		if (!v)
			return;
		ws->us = v;
		k = realloc(ws->kind, cap);
		if (!k)
			return;
		ws->kind = k;
		ws->cap = cap;
	}
	ws->us[ws->nlat] = us;
	ws->kind[ws->nlat++] = kind;
}

/* Count a completion; @us and @cpu: its latency and CPU time. */
static void account(struct worker *w, struct phase *ph,
		    const struct wl_op *op, const struct wl_done *d,
		    double us, double cpu)
{
	const struct wl_cfg *cfg = w->cfg;
	struct wl_stats *st = ph->st;
	uint32_t k = op->kind;

	if (d->res < 0) {
		int e = -d->res < WL_NERRNO ? -d->res : 0;

		if (d->fate == WL_DOUBT) {
			st->doubt[k]++;
			st->doubt_err[e]++;
			return;
		}
		st->failed[k]++;
		st->err[e]++;
		if (ph->measured && ph->nfail < cfg->err_msgs) {
			ph->nfail++;
			fprintf(stderr, "%s: %s %u: %s\n", cfg->prog,
				cfg->kind_names ? cfg->kind_names[k] : "op",
				op->size, strerror(-d->res));
		}
		return;
	}
	if (d->fate == WL_BAD)
		st->bad[k]++;
	else
		st->ok[k]++;
	st->bytes[k] += d->res;
	if (!ph->measured)
		return;
	st->cpu_us[k] += cpu;
	lat_add(w, k, us);
}

/* Asynchronous: up to ph->depth in flight. Returns 0 or the fatal errno. */
static int async_phase(struct worker *w, struct phase *ph, struct wl_res *r)
{
	const struct wl_cfg *cfg = w->cfg;
	const struct wl_ops *ops = cfg->ops;
	uint32_t nfree = ph->depth;
	uint64_t issued = 0, done = 0;
	double t0 = wl_now_us(), due = t0, last = t0;
	bool stop = false;
	int fatal = 0;

	for (uint32_t i = 0; i < ph->depth; i++)
		w->freeslots[i] = ph->depth - 1 - i;
	while (!stop || done < issued) {
		int wait_ms = cfg->timeout_ms, n;
		double now;

		while (!stop && nfree) {
			uint32_t s = w->freeslots[nfree - 1];
			struct wl_op *op = &w->op[s];
			double t;
			int ret;

			now = wl_now_us();
			if (phase_over(w, ph, issued, now, t0)) {
				stop = true;
				break;
			}
			if (ph->rate > 0 && now < due) {
				wait_ms = (int)((due - now) / 1000) + 1;
				break;
			}
			*op = op_at(w, ph, issued, s);
			if (ops->prep) {
				ret = ops->prep(w->ctx, op);
				if (ret < 0) {
					fatal = ret;
					stop = true;
					break;
				}
				now = wl_now_us();
			}
			t = ph->rate > 0 ? due : now;
			ret = ops->issue(w->ctx, op);
			if (ret == WL_AGAIN) {
				if (done < issued)
					break;
				fprintf(stderr, "%s: no room to issue with nothing in flight\n",
					cfg->prog);
				ret = -ENOBUFS;
			}
			if (ret < 0 && !cfg->issue_fails_op) {
				fprintf(stderr, "%s: issue: %s\n", cfg->prog,
					strerror(-ret));
				fatal = ret;
				stop = true;
				break;
			}
			/* The stall clock runs only while something is in flight. */
			if (done == issued)
				last = now;
			/* Poisson arrivals: exponential gaps of mean 1/rate. */
			if (ph->rate > 0)
				due += gap_us(w, ph->rate);
			issued++;
			if (ret < 0) {
				struct wl_done d = { s, ret, WL_OK };

				account(w, ph, op, &d, 0, 0);
				done++;
				continue;
			}
			w->t_issue[s] = t;
			nfree--;
		}
		if (stop && done == issued)
			break;
		n = ops->reap(w->ctx, w->d, REAP_MAX, wait_ms);
		now = wl_now_us();
		/* Open load: nothing may be due or in flight for a while. */
		if (!n && (done == issued || now - last < cfg->timeout_ms * 1e3))
			continue;
		if (n <= 0) {
			if (n)
				fprintf(stderr, "%s: reap: %s\n", cfg->prog,
					strerror(-n));
			else
				fprintf(stderr, "%s: no completion in %d s\n",
					cfg->prog, cfg->timeout_ms / 1000);
			fatal = n ? n : -ETIMEDOUT;
			r->lost += issued - done;
			break;
		}
		last = now;
		for (int i = 0; i < n; i++) {
			struct wl_done *d = &w->d[i];
			const struct wl_op *op = &w->op[d->slot];

			if (ops->check)
				ops->check(w->ctx, op, d);
			account(w, ph, op, d, now - w->t_issue[d->slot], 0);
			w->freeslots[nfree++] = d->slot;
			done++;
		}
	}
	return fatal;
}

/* Synchronous: one call() at a time. Returns 0 or the fatal errno. */
static int sync_phase(struct worker *w, struct phase *ph)
{
	const struct wl_cfg *cfg = w->cfg;
	const struct wl_ops *ops = cfg->ops;
	double t0 = wl_now_us();

	for (uint64_t i = 0;; i++) {
		struct wl_done d = { 0 };
		struct wl_op op;
		double t, c0 = 0, cpu = 0, now;
		int ret;

		if (phase_over(w, ph, i, wl_now_us(), t0))
			return 0;
		op = op_at(w, ph, i, 0);
		if (ops->prep) {
			ret = ops->prep(w->ctx, &op);
			if (ret < 0)
				return ret;
		}
		if (cfg->op_cpu)
			c0 = wl_thread_cpu_us();
		t = wl_now_us();
		ret = ops->call(w->ctx, &op, &d);
		if (ret < 0)
			return ret;
		now = wl_now_us();
		if (cfg->op_cpu)
			cpu = wl_thread_cpu_us() - c0;
		d.slot = 0;
		if (ops->check)
			ops->check(w->ctx, &op, &d);
		account(w, ph, &op, &d, now - t, cpu);
	}
}

static int run_phase(struct worker *w, struct phase *ph, struct wl_res *r)
{
	return w->cfg->ops->call ? sync_phase(w, ph) : async_phase(w, ph, r);
}

static double worker_cpu_us(const struct worker *w)
{
	return w->cfg->threads ? wl_thread_cpu_us() : wl_proc_cpu_us();
}

/* A worker's life: open, every cell (warm-up, gate, measured, gate). */
static int worker_main(struct worker *w)
{
	const struct wl_cfg *cfg = w->cfg;
	struct wl_run *run = w->run;
	uint32_t depth = cfg->ops->call ? 1 : cfg->depth;
	int ret = 0;

	w->xs[0] = (unsigned short)getpid();
	w->xs[1] = (unsigned short)(getpid() >> 16);
	w->xs[2] = 0x5bd1 ^ (unsigned short)(cfg->threads ? w->idx : 0);
	if (cfg->open)
		ret = cfg->open(cfg->arg, w->idx, &w->ctx);
	if (ret)
		w->status = 2;
	w->op = calloc(depth, sizeof(*w->op));
	w->t_issue = calloc(depth, sizeof(*w->t_issue));
	w->freeslots = calloc(depth, sizeof(*w->freeslots));
	if (!ret && (!w->op || !w->t_issue || !w->freeslots))
		ret = -ENOMEM;
	for (int c = 0; c < cfg->ncells; c++) {
		struct wl_res *r = &run->res[(size_t)c * cfg->workers + w->idx];
		const struct wl_cell *cell = &cfg->cells[c];

		if (!ret && cell->warmup > 0) {
			struct phase ph = {
				.cell = cell, .st = &r->warm,
				.limit = cell->warmup, .secs = -1, .depth = 1,
			};

			ret = run_phase(w, &ph, r);
		}
		if (c == 0 || cfg->sync_cells)
			gate_pass(w);
		r->fatal = ret;
		if (!ret) {
			struct phase ph = {
				.cell = cell, .st = &r->run,
				.limit = cfg->iters, .secs = cfg->secs,
				.minops = cfg->minops, .rate = cfg->rate,
				.depth = depth, .measured = true,
			};
			double c0 = worker_cpu_us(w);

			run->ws[w->idx].nlat = 0;
			r->t0 = wl_now_us();
			ret = run_phase(w, &ph, r);
			r->t1 = wl_now_us();
			r->cpu_us = worker_cpu_us(w) - c0;
			r->fatal = ret;
		}
		if (cfg->sync_cells)
			gate_pass(w);
	}
	if (cfg->close && w->ctx)
		cfg->close(cfg->arg, w->ctx);
	free(w->op);
	free(w->t_issue);
	free(w->freeslots);
	return w->status;
}

static void *worker_thread(void *arg)
{
	worker_main(arg);
	return NULL;
}

/* ---- the parent --------------------------------------------------------- */

static size_t up64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/* The mapping: shared, then wstate per worker, res, latencies. */
static int map_run(struct wl_run *run)
{
	const struct wl_cfg *cfg = run->cfg;
	uint64_t cap = cfg->threads ? 0 : cfg->samples;
	size_t o_ws = up64(sizeof(struct shared));
	size_t o_res = up64(o_ws + cfg->workers * sizeof(struct wstate));
	size_t o_us = up64(o_res + (size_t)cfg->ncells * cfg->workers *
			   sizeof(struct wl_res));
	size_t o_kind = up64(o_us + cfg->workers * cap * sizeof(double));
	uint8_t *m;

	run->mapsize = o_kind + cfg->workers * cap;
	m = mmap(NULL, run->mapsize, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	run->map = m;
	run->sh = (struct shared *)m;
	run->ws = (struct wstate *)(m + o_ws);
	run->res = (struct wl_res *)(m + o_res);
	for (uint32_t i = 0; i < cfg->workers; i++) {
		run->ws[i].cap = cap;
		if (cap) {
			run->ws[i].us = (double *)(m + o_us) + i * cap;
			run->ws[i].kind = m + o_kind + i * cap;
		}
	}
	return 0;
}

static int check_cfg(const struct wl_cfg *cfg)
{
	if (!cfg->workers || !cfg->ncells || !cfg->nkinds || !cfg->ops ||
	    (cfg->ops->call && cfg->rate > 0) ||
	    (!cfg->ops->call && (!cfg->ops->issue || !cfg->ops->reap ||
				 !cfg->depth || cfg->timeout_ms <= 0)) ||
	    (!cfg->threads && cfg->samples == WL_GROW))
		return -EINVAL;
	for (int i = 0; i < cfg->nkinds; i++)
		if (cfg->kinds[i] >= WL_KINDS)
			return -EINVAL;
	return 0;
}

/* Start the workers; one that cannot start is gone from the start. */
static void start_workers(struct wl_run *run)
{
	const struct wl_cfg *cfg = run->cfg;

	fflush(NULL);
	for (uint32_t i = 0; i < cfg->workers; i++) {
		struct worker *w = cfg->threads ? &run->w[i] :
				   &(struct worker){ 0 };
		int err;

		w->run = run;
		w->cfg = cfg;
		w->idx = i;
		if (cfg->threads) {
			err = pthread_create(&run->th[i], NULL, worker_thread, w);
			if (!err)
				continue;
			fprintf(stderr, "%s: pthread_create: %s\n", cfg->prog,
				strerror(err));
		} else {
			run->pid[i] = fork();
			if (!run->pid[i]) {
				int st = worker_main(w);

				fflush(NULL);
				_exit(st);
			}
			if (run->pid[i] > 0)
				continue;
			perror("fork");
		}
		run->gone[i] = true;
		run->failed++;
	}
}

static void end_workers(struct wl_run *run)
{
	if (!run->cfg->threads) {
		reap_ended(run, true);
		return;
	}
	for (uint32_t i = 0; i < run->cfg->workers; i++) {
		if (run->gone[i])
			continue;
		pthread_join(run->th[i], NULL);
		run->gone[i] = true;
		if (run->w[i].status)
			run->failed++;
	}
}

int wl_drive(const struct wl_cfg *cfg, struct wl_run **out)
{
	struct wl_run *run = calloc(1, sizeof(*run));
	uint32_t g = 0;
	int ret = check_cfg(cfg);

	if (!run)
		return -ENOMEM;
	run->cfg = cfg;
	run->parent = getpid();
	run->gone = calloc(cfg->workers, sizeof(*run->gone));
	if (cfg->threads) {
		run->th = calloc(cfg->workers, sizeof(*run->th));
		run->w = calloc(cfg->workers, sizeof(*run->w));
	} else {
		run->pid = calloc(cfg->workers, sizeof(*run->pid));
	}
	if (!ret && (!run->gone || (!run->th && !run->pid) ||
		     (cfg->threads && !run->w)))
		ret = -ENOMEM;
	if (!ret)
		ret = map_run(run);
	if (ret) {
		wl_free(run);
		return ret;
	}
	start_workers(run);
	for (int c = 0; c < cfg->ncells; c++) {
		if (c == 0 || cfg->sync_cells) {
			gate_wait_all(run, ++g);
			if (cfg->before)
				cfg->before(cfg->arg, run, c);
			gate_open(run, g);
		}
		if (cfg->sync_cells) {
			gate_wait_all(run, ++g);
			if (cfg->after)
				cfg->after(cfg->arg, run, c);
			gate_open(run, g);
		}
	}
	end_workers(run);
	*out = run;
	return 0;
}

void wl_free(struct wl_run *run)
{
	if (!run)
		return;
	if (run->map) {
		for (uint32_t i = 0; run->cfg->threads && i < run->cfg->workers;
		     i++) {
			free(run->ws[i].us);
			free(run->ws[i].kind);
		}
		munmap(run->map, run->mapsize);
	}
	free(run->gone);
	free(run->pid);
	free(run->th);
	free(run->w);
	free(run);
}

const struct wl_res *wl_res(const struct wl_run *run, int cell,
			    uint32_t worker)
{
	return &run->res[(size_t)cell * run->cfg->workers + worker];
}

int wl_failed(const struct wl_run *run)
{
	return run->failed;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double *wl_latencies(const struct wl_run *run, uint32_t kind, uint64_t *n)
{
	uint64_t tot = 0, k = 0;
	double *v;

	for (uint32_t i = 0; i < run->cfg->workers; i++)
		tot += run->ws[i].nlat;
	v = malloc((tot + 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < run->cfg->workers; i++) {
		const struct wstate *ws = &run->ws[i];

		for (uint64_t j = 0; j < ws->nlat; j++)
			if (ws->kind[j] == kind)
				v[k++] = ws->us[j];
	}
	qsort(v, k, sizeof(*v), cmp_double);
	*n = k;
	return v;
}

/* ---- figures ------------------------------------------------------------ */

void wl_stats_add(struct wl_stats *to, const struct wl_stats *from)
{
	for (int k = 0; k < WL_KINDS; k++) {
		to->ok[k] += from->ok[k];
		to->bad[k] += from->bad[k];
		to->failed[k] += from->failed[k];
		to->doubt[k] += from->doubt[k];
		to->bytes[k] += from->bytes[k];
		to->cpu_us[k] += from->cpu_us[k];
	}
	for (int e = 0; e < WL_NERRNO; e++) {
		to->err[e] += from->err[e];
		to->doubt_err[e] += from->doubt_err[e];
	}
}

double wl_pctl(const double *v, uint64_t n, double p)
{
	uint64_t i = (uint64_t)ceil(p * n);

	return n ? v[i ? i - 1 : 0] : 0;
}

int wl_hist_bucket(double us, int per_oct)
{
	return us >= 1 ? (int)floor(per_oct * log2(us)) : 0;
}

int wl_parse_sizes(const char *list, uint32_t *out, int max, uint32_t min,
		   uint64_t maxsize)
{
	const char *s = list;
	int n = 0;

	for (;; s++) {
		unsigned long long v;
		char *end;

		s += strspn(s, ",");
		if (!*s)
			return n ? n : -1;
		v = strtoull(s, &end, 0);
		if (end == s || *s == '-' || n == max)
			return -1;
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if ((*end && *end != ',') || v < min || v > maxsize)
			return -1;
		out[n++] = v;
		s = end;
		if (!*s)
			return n;
	}
}
