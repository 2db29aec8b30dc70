/* SPDX-License-Identifier: GPL-2.0 */
/*
 * workload: the push/pull load that bxperf, bxps and the selftests' bx_pp
 * put on a transport, driven one way.
 *
 * Workers: cfg->workers forked processes (or threads, cfg->threads), each
 * with its own transport context from cfg->open(), run the cells in turn.
 * A cell is a list of sizes its operations cycle through. Its kinds
 * cycle through cfg->kinds (a "cycle", e.g. one push and one pull): the
 * op with index i has kind kinds[i % nkinds] and size
 * sizes[i / size_every % nsizes] (size_every 0: a whole cycle).
 *
 * A cell first runs cell->warmup unmeasured operations at depth 1, then
 * all workers start together (a gate: every worker has arrived, or has
 * died, before the parent opens it), and each issues until it has issued
 * cfg->iters operations, or cfg->secs have passed and it has issued at
 * least cfg->minops, or *cfg->stop is set (with cfg->whole_cycles the
 * time and *stop are looked at only between cycles); it then waits for
 * what it has in flight. With cfg->sync_cells there is a gate after
 * every cell as well, and one before each, and the parent runs
 * cfg->before() and cfg->after() while the workers wait there; without,
 * there is the first cell's start gate only (before() of cell 0) and the
 * workers run their cells back to back.
 *
 * Operations (struct wl_ops): asynchronous, issue() starts one in a slot
 * (0..depth-1) and reap() returns the slots that completed, with up to
 * cfg->depth in flight; or synchronous, call() runs one to its end (the
 * depth is then 1). prep(), if given, comes before the clock starts,
 * check(), if given, after it stops, for every completion: that is where
 * requests are built and data is verified. With cfg->rate (asynchronous
 * only) the load is open: each worker issues RATE operations per second
 * on average at exponentially distributed intervals (Poisson arrivals),
 * with at most DEPTH in flight; an operation's latency then runs from
 * when it was due.
 *
 * What is kept, per worker and cell (struct wl_res): completions by kind
 * and fate, bytes, failures by errno, the measured phase's times and CPU
 * time, and up to cfg->samples latencies (of the cell last run; merged
 * by wl_latencies()).
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#define WL_KINDS	8	/* operation kinds: the program's numbers 0..7 */
#define WL_NERRNO	134	/* failures counted by errno 1..133; others at 0 */
#define WL_AGAIN	1	/* issue(): not now; again after a completion */
#define WL_GROW		UINT64_MAX	/* cfg->samples: all (threads only) */

struct wl_op {
	uint32_t	kind;		/* cfg->kinds[seq % nkinds] */
	uint32_t	size;		/* from the cell's sizes (0: none) */
	uint32_t	slot;		/* 0..depth-1, free until it completes */
	uint64_t	seq;		/* index in its phase, from 0 */
	bool		measured;	/* false: warm-up */
};

/* A completion's fate beside res. */
enum wl_fate {
	WL_OK,		/* res >= 0: done */
	WL_BAD,		/* res >= 0: done, but the data was wrong */
	WL_DOUBT,	/* res < 0: failed, but it may have taken effect */
};

struct wl_done {
	uint32_t	slot;
	int32_t		res;		/* bytes to count, or -errno */
	uint32_t	fate;		/* enum wl_fate (res < 0: failed or doubt) */
};

/* @ctx is what cfg->open() gave the worker. */
struct wl_ops {
	/* Optional, before the clock starts: build the request. <0 ends
	 * the worker's cell (and the cells after it) with that errno.
	 */
	int	(*prep)(void *ctx, const struct wl_op *op);
	/* 0, WL_AGAIN, or -errno (cfg->issue_fails_op: the op failed;
	 * else the cell ends).
	 */
	int	(*issue)(void *ctx, const struct wl_op *op);
	/* Completed slots, 0 after @timeout_ms, <0: the cell ends. */
	int	(*reap)(void *ctx, struct wl_done *d, int max, int timeout_ms);
	/* Synchronous instead of issue() and reap(): 0 and *@d, or <0 as
	 * from prep().
	 */
	int	(*call)(void *ctx, const struct wl_op *op, struct wl_done *d);
	/* Optional, after the clock stops: verify, set fate and res. */
	void	(*check)(void *ctx, const struct wl_op *op, struct wl_done *d);
};

struct wl_cell {
	const uint32_t	*sizes;
	int		nsizes;		/* 0: every op's size is 0 */
	long		warmup;		/* unmeasured ops first, at depth 1 */
};

struct wl_run;

struct wl_cfg {
	const char		*prog;		/* prefix of messages */
	const struct wl_ops	*ops;
	uint32_t		workers;
	bool			threads;	/* else forked processes */
	uint32_t		depth;		/* ops in flight per worker */
	const struct wl_cell	*cells;
	int			ncells;
	const uint32_t		*kinds;		/* a cycle of kinds */
	int			nkinds;
	uint32_t		size_every;	/* ops per size step; 0: a cycle */
	long			iters;		/* ops per cell; <0: no limit */
	double			secs;		/* time per cell; <0: no limit */
	long			minops;		/* before secs may end a cell */
	bool			whole_cycles;
	const volatile sig_atomic_t *stop;	/* optional */
	double			rate;		/* ops/s per worker; 0: closed */
	bool			issue_fails_op;
	int			timeout_ms;	/* no completion: the cell ends */
	int			err_msgs;	/* failures printed per phase */
	const char *const	*kind_names;	/* for them */
	uint64_t		samples;	/* latencies kept per worker */
	bool			op_cpu;		/* call(): thread CPU per op */
	bool			sync_cells;
	void			*arg;
	/* In the worker: its context; <0 fails its cells, and it exits 2. */
	int	(*open)(void *arg, uint32_t worker, void **ctx);
	void	(*close)(void *arg, void *ctx);
	/* In the parent, the workers at a gate (see above). */
	void	(*before)(void *arg, struct wl_run *run, int cell);
	void	(*after)(void *arg, struct wl_run *run, int cell);
};

/* One phase of a cell in one worker. */
struct wl_stats {
	uint64_t	ok[WL_KINDS], bad[WL_KINDS], failed[WL_KINDS];
	uint64_t	doubt[WL_KINDS];
	uint64_t	bytes[WL_KINDS];	/* res of ok and bad ones */
	double		cpu_us[WL_KINDS];	/* cfg->op_cpu */
	uint32_t	err[WL_NERRNO];		/* failed, by errno */
	uint32_t	doubt_err[WL_NERRNO];	/* doubt, by errno */
};

/* One worker's cell. */
struct wl_res {
	double		t0, t1;		/* measured phase, wl_now_us() */
	double		cpu_us;		/* the worker's CPU time in it */
	int		fatal;		/* 0, or the -errno that ended it */
	uint64_t	lost;		/* in flight when it ended so */
	struct wl_stats	warm, run;
};

/*
 * Run everything cfg describes; returns when every worker has ended.
 * *@out holds the results until wl_free(). 0 or a negative errno (no
 * run at all).
 */
int wl_drive(const struct wl_cfg *cfg, struct wl_run **out);
void wl_free(struct wl_run *run);
const struct wl_res *wl_res(const struct wl_run *run, int cell,
			    uint32_t worker);
/* Workers that exited with a status other than 0 or died. */
int wl_failed(const struct wl_run *run);
/*
 * The latencies (µs) of kind @kind of every worker's cell last run,
 * sorted; *@n of them. malloc()ed, NULL if out of memory.
 */
double *wl_latencies(const struct wl_run *run, uint32_t kind, uint64_t *n);

void wl_stats_add(struct wl_stats *to, const struct wl_stats *from);
/* Nearest-rank percentile @p (0..1] of sorted @v. */
double wl_pctl(const double *v, uint64_t n, double p);
/* Histogram bucket of @us: floor(@per_oct * log2(us)), 0 below 1 µs. */
int wl_hist_bucket(double us, int per_oct);

/*
 * A list of sizes, "64,4K,1M" (K and M: 2^10, 2^20), into @out (at most
 * @max of them, each @min..@maxsize). Their number, or -1.
 */
int wl_parse_sizes(const char *list, uint32_t *out, int max, uint32_t min,
		   uint64_t maxsize);

double wl_now_us(void);			/* CLOCK_MONOTONIC */
double wl_proc_cpu_us(void);		/* this process: user + system */
double wl_thread_cpu_us(void);		/* this thread */
/*
 * All CPUs of this machine, in µs: busy and total (only differences mean
 * anything). Total is monotonic time x online CPUs and busy is total less
 * idle and iowait from /proc/stat, which NO_HZ kernels account exactly at
 * idle entry and exit. (The busy columns of /proc/stat are sampled by the
 * tick, and a guest whose emulated CPU is descheduled by an overloaded
 * host loses ticks: they undercounted CPU time here.)
 */
void wl_machine_cpu(uint64_t *busy, uint64_t *total);

#endif /* WORKLOAD_H */
