// SPDX-License-Identifier: GPL-2.0
/*
 * bxperf: latency and throughput of pull and push over bx and over a
 * kernel TCP RPC, with the CPU they cost on both sides.
 *
 *   bxperf server -T bx|tcp [-p PORT] [-d SECS] [-b BIG_BUFS]
 *   bxperf client -T bx|tcp -a ADDR [-p PORT] [-o pull|push|mix]
 *                 [-z SIZE,...] [-q DEPTH] [-P PROCS] [-i ITERS] [-d SECS]
 *                 [-m MIN_OPS] [-w WARMUP] [-r RATE] [-S] [-t TAG]
 *                 [-k KEY=VALUE]...
 *   bxperf cpu    print this machine's CPU counters (busy_us total_us)
 *
 * PORT is the bx base service (default 80; the server binds 80..83) or
 * the TCP port (default 7080). SIZE takes K and M suffixes (default
 * 64,4096,64K,1M,16M; at most 16M). The server runs until SIGTERM or -d.
 *
 * The client runs one cell per size: PROCS processes (fork), each with
 * its own bx handle or TCP connection, each keeping DEPTH operations in
 * flight (-o mix alternates pulls and pushes). A cell first does WARMUP
 * unmeasured operations per process at depth 1 (one for sizes of 1 MiB
 * and more), then all processes start together and each issues until it
 * has done ITERS operations or SECS have passed and it has issued at
 * least MIN_OPS (defaults: 100000, 3 s, 3). Latency is from issue to
 * completion; throughput is payload bytes over the time from the common
 * start to the last process's end.
 *
 * With -r, the load is open: each process issues RATE operations per
 * second on average, at exponentially distributed intervals (Poisson
 * arrivals), whatever the completions, with at most DEPTH in flight. An
 * operation's latency then runs from when it was due, so the time it
 * waited for a free slot counts.
 *
 * CPU per operation: "cpu" is user + system time of the client processes
 * (getrusage; with bx, rxe's work runs in kernel threads and softirqs and
 * is not charged to them), "guest" the busy time of the whole client
 * machine from /proc/stat, "srv"/"srv_guest" the same on the server, from
 * STAT requests before and after the cell (-S; with several client
 * machines at once the server's time is shared by all of them). Machine
 * time is wall time x CPUs less idle time: under emulation it includes
 * whatever the host took from the emulated CPUs while they were busy.
 *
 * Output, per cell and operation kind, a line for people
 *
 *   bxperf-result tag=T transport=bx op=pull size=65536 depth=1 procs=1
 *     mix=0 n=N errors=0 secs=S ops_s=X mb_s=X mean_us=X p50_us=X
 *     p99_us=X p999_us=X min_us=X max_us=X cpu_us_op=X guest_cpu_us_op=X
 *     srv_cpu_us_op=X srv_guest_cpu_us_op=X cli_busy_pct=X srv_busy_pct=X
 *
 * and a record (benchrec.h; tools/bench/README.md, "Records"): bench
 * "bxperf", kind "result", cell {tag, transport, op, size, depth, procs,
 * mix, and each -k KEY=VALUE}, metrics the line's figures (the server's
 * null when -S did not ask it: -1 in the line) and the histogram,
 * hist_per_oct and hist [[BUCKET, COUNT], ...].
 *
 * rxe_retry and tcp_retrans: retransmissions on this machine and (with
 * -S) the server during the cell: rxe's completer_retry_err (each a lost
 * packet or ACK, recovered after an ACK timeout) and TCP's RetransSegs.
 * They count the machines' traffic, not only this cell's.
 *
 * Percentiles are exact (nearest rank); the histogram has 32 buckets per
 * octave of microseconds (bucket = floor(32 * log2(us))) for merging runs
 * and drawing distributions. Exit status: 0, or 1 if any operation failed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchrec.h"
#include "bxperf.h"

#define PER_OCT		32
#define REAP_TIMEOUT_MS	60000

volatile int bp_stop;

double bp_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double proc_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/*
 * All CPUs of this machine, in µs: busy and total (only differences
 * mean anything). Total is monotonic time x online CPUs and busy is total
 * less idle and iowait from /proc/stat, which NO_HZ kernels account
 * exactly at idle entry and exit. (The busy columns of /proc/stat are
 * sampled by the tick, and a guest whose emulated CPU is descheduled by
 * an overloaded host loses ticks: they undercounted CPU time here.)
 */
static void guest_cpu(uint64_t *busy, uint64_t *total)
{
	unsigned long long v[5] = { 0 };
	double us = 1e6 / sysconf(_SC_CLK_TCK);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	FILE *f = fopen("/proc/stat", "r");

	*busy = *total = 0;
	if (!f)
		return;
	*total = bp_now_us() * (ncpu > 0 ? ncpu : 1);
	/* user nice system idle iowait */
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4]) == 5)
		*busy = *total - (uint64_t)((v[3] + v[4]) * us);
	fclose(f);
}

/*
 * Retransmissions of this machine: rxe's requester retries (a packet or
 * its ACK was lost; each costs an ACK timeout) over every device, and
 * TCP's retransmitted segments.
 */
void bp_net_counters(uint64_t *rxe_retry, uint64_t *tcp_retrans)
{
	DIR *d = opendir("/sys/class/infiniband");
	char line[1024], hdr[1024];
	struct dirent *e;
	FILE *f;

	*rxe_retry = *tcp_retrans = 0;
	while (d && (e = readdir(d))) {
		unsigned long long v;
		char path[512];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/"
			 "hw_counters/completer_retry_err", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &v) == 1)
			*rxe_retry += v;
		fclose(f);
	}
	if (d)
		closedir(d);
	f = fopen("/proc/net/snmp", "r");
	if (!f)
		return;
	hdr[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		char *hs, *vs, *h, *v;
		int i = 0, at = -1;

		if (strncmp(line, "Tcp:", 4))
			continue;
		if (!hdr[0]) {
			snprintf(hdr, sizeof(hdr), "%s", line);
			continue;
		}
		for (h = strtok_r(hdr, " \n", &hs); h; h = strtok_r(NULL, " \n", &hs), i++)
			if (!strcmp(h, "RetransSegs"))
				at = i;
		i = 0;
		for (v = strtok_r(line, " \n", &vs); v; v = strtok_r(NULL, " \n", &vs), i++)
			if (i == at)
				*tcp_retrans = strtoull(v, NULL, 10);
		break;
	}
	fclose(f);
}

void bp_server_stat(struct bp_stat *st, uint64_t ops)
{
	st->proc_cpu_us = proc_cpu_us();
	guest_cpu(&st->guest_busy_us, &st->guest_total_us);
	st->ops = ops;
	bp_net_counters(&st->rxe_retry, &st->tcp_retrans);
}

void bp_server_ready(const char *name, const struct bp_cfg *cfg)
{
	printf("bxperf-server-ready transport=%s port=%u\n", name, cfg->port);
	fflush(stdout);
}

bool bp_server_done(const struct bp_cfg *cfg, double t0)
{
	return cfg->secs && bp_now_us() - t0 > cfg->secs * 1e6;
}

static void on_term(int sig)
{
	(void)sig;
	bp_stop = 1;
}

/* ---- client ----------------------------------------------------------- */

struct opts {
	const struct bp_transport *tp;
	struct bp_cfg	cfg;
	int		mode;		/* BP_PULL, BP_PUSH, or 0: mix */
	uint32_t	sizes[16];
	int		nsizes;
	uint32_t	depth, procs;
	long		iters, minops;
	double		secs;
	int		warmup;
	double		rate;		/* -r: operations/s per process; 0: closed */
	bool		srvstat;
	const char	*tag;
	const char	*kv[8];		/* -k KEY=VALUE: the records' cells */
	int		nkv;
};

/* What one process did in the measured part of a cell. */
struct pres {
	double		t0, t1, cpu_us;
	uint64_t	n[2], err[2], bytes[2];
	uint64_t	nsamp;
	int		fatal;
};

struct shared {
	pthread_barrier_t bar;
	struct pres	res[];		/* then float samples[procs][iters] */
};

static float *samples_of(struct shared *sh, const struct opts *o, int p)
{
	return (float *)&sh->res[o->procs] + (size_t)p * o->iters;
}

static enum bp_op kind_at(const struct opts *o, uint64_t i)
{
	return o->mode ? (enum bp_op)o->mode : (i & 1) ? BP_PUSH : BP_PULL;
}

/* Wait for the one operation in flight to complete. */
static int wait_one(const struct bp_transport *tp, struct bp_cli *c,
		    struct bp_done *d)
{
	int n = tp->reap(c, d, 1, REAP_TIMEOUT_MS);

	if (n == 0) {
		fprintf(stderr, "bxperf: no completion in %d s\n",
			REAP_TIMEOUT_MS / 1000);
		return -ETIMEDOUT;
	}
	return n < 0 ? n : 0;
}

/* Unmeasured operations at depth 1, so connections and buffers exist. */
static int warm(const struct opts *o, struct bp_cli *c, uint32_t size)
{
	int n = size >= (1u << 20) ? 1 : o->warmup;

	for (int i = 0; i < n; i++) {
		struct bp_done d;
		int ret = o->tp->issue(c, kind_at(o, i), size, 0);

		if (!ret)
			ret = wait_one(o->tp, c, &d);
		if (ret)
			return ret;
	}
	return 0;
}

/* One process's measured part of a cell. */
static void run_cell(const struct opts *o, struct bp_cli *c, uint32_t size,
		     struct pres *r, float *lat)
{
	double *t_issue = calloc(o->depth, sizeof(double));
	uint32_t *freeslots = calloc(o->depth, sizeof(uint32_t));
	enum bp_op *kinds = calloc(o->depth, sizeof(enum bp_op));
	uint32_t nfree = o->depth;
	struct bp_done d[64];
	uint64_t issued = 0, done = 0;
	bool stop = false;
	double c0, due, last;
	unsigned short xs[3] = { (unsigned short)getpid(),
				 (unsigned short)(getpid() >> 16), 0x5bd1 };

	if (!t_issue || !freeslots || !kinds) {
		r->fatal = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < o->depth; i++)
		freeslots[i] = o->depth - 1 - i;
	c0 = proc_cpu_us();
	r->t0 = bp_now_us();
	due = r->t0;
	last = r->t0;
	while (!stop || done < issued) {
		int wait_ms = REAP_TIMEOUT_MS;

		while (!stop && nfree) {
			double now = bp_now_us();
			uint32_t s;
			int ret;

			if (issued >= (uint64_t)o->iters ||
			    (issued >= (uint64_t)o->minops &&
			     now - r->t0 >= o->secs * 1e6)) {
				stop = true;
				break;
			}
			if (o->rate > 0 && now < due) {
				wait_ms = (int)((due - now) / 1000) + 1;
				break;
			}
			s = freeslots[--nfree];
			kinds[s] = kind_at(o, issued);
			/* The stall clock runs only while something is in flight. */
			if (done == issued)
				last = now;
			t_issue[s] = o->rate > 0 ? due : now;
			/* Poisson arrivals: exponential gaps of mean 1/rate. */
			if (o->rate > 0)
				due += -log(1 - erand48(xs)) * 1e6 / o->rate;
			ret = o->tp->issue(c, kinds[s], size, s);
			if (ret) {
				fprintf(stderr, "bxperf: issue: %s\n",
					strerror(-ret));
				r->fatal = ret;
				stop = true;
				freeslots[nfree++] = s;
				break;
			}
			issued++;
		}
		if (stop && done == issued)
			break;
		int n = o->tp->reap(c, d, 64, wait_ms);
		double now = bp_now_us();

		/* Open load: nothing may be due or in flight for a while. */
		if (!n && (done == issued || now - last < REAP_TIMEOUT_MS * 1e3))
			continue;
		if (n <= 0) {
			fprintf(stderr, "bxperf: reap: %s\n",
				n ? strerror(-n) : "no completion in 60 s");
			r->fatal = n ? n : -ETIMEDOUT;
			break;
		}
		last = now;

		for (int i = 0; i < n; i++) {
			uint32_t s = d[i].slot;
			int k = kinds[s] == BP_PUSH;

			if (d[i].res < 0) {
				r->err[k]++;
				if (r->err[0] + r->err[1] <= 3)
					fprintf(stderr, "bxperf: %s %u: %s\n",
						k ? "push" : "pull", size,
						strerror(-d[i].res));
			} else {
				r->n[k]++;
				r->bytes[k] += size;
				if (r->nsamp < (uint64_t)o->iters) {
					float us = now - t_issue[s];

					lat[r->nsamp++] = k ? -us : us;
				}
			}
			freeslots[nfree++] = s;
			done++;
		}
	}
	r->t1 = bp_now_us();
	r->cpu_us = proc_cpu_us() - c0;
out:
	free(t_issue);
	free(freeslots);
	free(kinds);
}

static void child(const struct opts *o, struct shared *sh, int p)
{
	uint32_t maxsize = 1;
	struct bp_cli *c = NULL;
	int ret;

	for (int i = 0; i < o->nsizes; i++)
		maxsize = o->sizes[i] > maxsize ? o->sizes[i] : maxsize;
	ret = o->tp->open(&o->cfg, maxsize, o->depth, &c);
	/* The parent reads sh->res between C and the next A: write it only
	 * between B and C.
	 */
	for (int i = 0; i < o->nsizes; i++) {
		struct pres *r = &sh->res[p];

		if (!ret)
			ret = warm(o, c, o->sizes[i]);
		pthread_barrier_wait(&sh->bar);		/* A: ready */
		pthread_barrier_wait(&sh->bar);		/* B: go */
		memset(r, 0, sizeof(*r));
		r->fatal = ret;
		if (!r->fatal)
			run_cell(o, c, o->sizes[i], r, samples_of(sh, o, p));
		ret = r->fatal;
		pthread_barrier_wait(&sh->bar);		/* C: done */
	}
	if (c)
		o->tp->close(c);
	_exit(0);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static double pctl(const float *v, uint64_t n, double p)
{
	uint64_t i = (uint64_t)ceil(p * n);

	return n ? v[i ? i - 1 : 0] : 0;
}

/* The server's counters, by a STAT on the parent's own connection. */
static int srv_stat(const struct opts *o, struct bp_cli *c,
		    struct bp_stat *st)
{
	struct bp_done d;
	int ret;

	if (!c)
		return -ENOTCONN;
	ret = o->tp->issue(c, BP_STAT, 0, 1);
	if (!ret)
		ret = wait_one(o->tp, c, &d);
	if (!ret && d.res < 0)
		ret = d.res;
	if (!ret)
		memcpy(st, o->tp->buf(c, 1), sizeof(*st));
	return ret;
}

static void print_cell(const struct opts *o, struct shared *sh,
		       uint32_t size, const uint64_t g[8],
		       const struct bp_stat *s0, const struct bp_stat *s1,
		       int *bad)
{
	uint64_t ntot = 0, nsamp = 0, n[2] = { 0 }, err[2] = { 0 };
	uint64_t bytes[2] = { 0 };
	double t0 = 0, t1 = 0, cpu = 0, secs;
	float *v[2];
	uint64_t nv[2] = { 0 };

	for (uint32_t p = 0; p < o->procs; p++) {
		struct pres *r = &sh->res[p];

		if (r->fatal)
			*bad = 1;
		for (int k = 0; k < 2; k++) {
			n[k] += r->n[k];
			err[k] += r->err[k];
			bytes[k] += r->bytes[k];
		}
		nsamp += r->nsamp;
		cpu += r->cpu_us;
		if (!p || r->t0 < t0)
			t0 = r->t0;
		if (r->t1 > t1)
			t1 = r->t1;
	}
	ntot = n[0] + n[1];
	secs = (t1 - t0) / 1e6;
	v[0] = malloc((nsamp + 1) * sizeof(float));
	v[1] = malloc((nsamp + 1) * sizeof(float));
	if (!v[0] || !v[1]) {
		*bad = 1;
		free(v[0]);
		free(v[1]);
		return;
	}
	for (uint32_t p = 0; p < o->procs; p++) {
		const float *s = samples_of(sh, o, p);

		for (uint64_t i = 0; i < sh->res[p].nsamp; i++) {
			int k = s[i] < 0;

			v[k][nv[k]++] = k ? -s[i] : s[i];
		}
	}
	for (int k = 0; k < 2; k++) {
		static const char *const name[2] = { "pull", "push" };
		double sum = 0, srv_cpu = -1, srv_guest = -1, srv_pct = -1;
		double mean, p50, p99, p999, ops_s, mb_s, cli_cpu, cli_guest;
		double cli_pct;
		long long rxe, tcp;
		struct benchrec r;
		char meta[256];

		if (!n[k] && !err[k])
			continue;
		if (err[k])
			*bad = 1;
		qsort(v[k], nv[k], sizeof(float), cmp_float);
		for (uint64_t i = 0; i < nv[k]; i++)
			sum += v[k][i];
		if (s0 && s1 && ntot) {
			srv_cpu = (double)(s1->proc_cpu_us - s0->proc_cpu_us) / ntot;
			srv_guest = (double)(s1->guest_busy_us -
					     s0->guest_busy_us) / ntot;
			if (s1->guest_total_us > s0->guest_total_us)
				srv_pct = 100.0 * (s1->guest_busy_us -
						   s0->guest_busy_us) /
					  (s1->guest_total_us -
					   s0->guest_total_us);
		}
		snprintf(meta, sizeof(meta),
			 "tag=%s transport=%s op=%s size=%u depth=%u procs=%u mix=%d",
			 o->tag, o->tp->name, name[k], size, o->depth,
			 o->procs, !o->mode);
		mean = nv[k] ? sum / nv[k] : 0;
		p50 = pctl(v[k], nv[k], 0.5);
		p99 = pctl(v[k], nv[k], 0.99);
		p999 = pctl(v[k], nv[k], 0.999);
		ops_s = secs > 0 ? n[k] / secs : 0;
		mb_s = secs > 0 ? bytes[k] / secs / 1e6 : 0;
		cli_cpu = ntot ? cpu / ntot : 0;
		cli_guest = ntot ? (double)(g[2] - g[0]) / ntot : 0;
		cli_pct = g[3] > g[1] ? 100.0 * (g[2] - g[0]) / (g[3] - g[1]) : 0;
		rxe = (long long)(g[6] - g[4] + (s0 && s1 ? s1->rxe_retry -
						   s0->rxe_retry : 0));
		tcp = (long long)(g[7] - g[5] + (s0 && s1 ? s1->tcp_retrans -
						   s0->tcp_retrans : 0));
		printf("bxperf-result %s n=%llu errors=%llu secs=%.3f "
		       "ops_s=%.2f mb_s=%.3f mean_us=%.1f p50_us=%.1f "
		       "p99_us=%.1f p999_us=%.1f min_us=%.1f max_us=%.1f "
		       "cpu_us_op=%.1f guest_cpu_us_op=%.1f "
		       "srv_cpu_us_op=%.1f srv_guest_cpu_us_op=%.1f "
		       "cli_busy_pct=%.1f srv_busy_pct=%.1f "
		       "rxe_retry=%lld tcp_retrans=%lld\n",
		       meta, (unsigned long long)n[k],
		       (unsigned long long)err[k], secs, ops_s, mb_s, mean,
		       p50, p99, p999,
		       nv[k] ? v[k][0] : 0, nv[k] ? v[k][nv[k] - 1] : 0,
		       cli_cpu, cli_guest, srv_cpu, srv_guest, cli_pct,
		       srv_pct, rxe, tcp);
		/* The record: the same figures, -1 (the server not asked)
		 * as null, and the histogram: runs of equal buckets from
		 * the sorted samples.
		 */
		benchrec_begin(&r, stdout, "bxperf", "result");
		benchrec_str(&r, "tag", o->tag);
		benchrec_str(&r, "transport", o->tp->name);
		benchrec_str(&r, "op", name[k]);
		benchrec_uint(&r, "size", size);
		benchrec_uint(&r, "depth", o->depth);
		benchrec_uint(&r, "procs", o->procs);
		benchrec_int(&r, "mix", !o->mode);
		for (int i = 0; i < o->nkv; i++)
			benchrec_kv(&r, o->kv[i]);
		benchrec_metrics(&r);
		benchrec_uint(&r, "n", n[k]);
		benchrec_uint(&r, "errors", err[k]);
		benchrec_num(&r, "secs", "%.3f", secs);
		benchrec_num(&r, "ops_s", "%.2f", ops_s);
		benchrec_num(&r, "mb_s", "%.3f", mb_s);
		benchrec_num(&r, "mean_us", "%.1f", mean);
		benchrec_num(&r, "p50_us", "%.1f", p50);
		benchrec_num(&r, "p99_us", "%.1f", p99);
		benchrec_num(&r, "p999_us", "%.1f", p999);
		benchrec_num(&r, "min_us", "%.1f", nv[k] ? v[k][0] : 0);
		benchrec_num(&r, "max_us", "%.1f", nv[k] ? v[k][nv[k] - 1] : 0);
		benchrec_num(&r, "cpu_us_op", "%.1f", cli_cpu);
		benchrec_num(&r, "guest_cpu_us_op", "%.1f", cli_guest);
		benchrec_num(&r, "srv_cpu_us_op", "%.1f", srv_cpu < 0 ? NAN : srv_cpu);
		benchrec_num(&r, "srv_guest_cpu_us_op", "%.1f",
			     srv_guest < 0 ? NAN : srv_guest);
		benchrec_num(&r, "cli_busy_pct", "%.1f", cli_pct);
		benchrec_num(&r, "srv_busy_pct", "%.1f", srv_pct < 0 ? NAN : srv_pct);
		benchrec_int(&r, "rxe_retry", rxe);
		benchrec_int(&r, "tcp_retrans", tcp);
		benchrec_int(&r, "hist_per_oct", PER_OCT);
		benchrec_list(&r, "hist");
		for (uint64_t i = 0; i < nv[k];) {
			int b = v[k][i] >= 1 ?
				(int)floor(PER_OCT * log2(v[k][i])) : 0;
			uint64_t j = i;

			while (j < nv[k] && (v[k][j] >= 1 ?
			       (int)floor(PER_OCT * log2(v[k][j])) : 0) == b)
				j++;
			benchrec_pair(&r, b, (long long)(j - i));
			i = j;
		}
		benchrec_list_end(&r);
		benchrec_end(&r);
	}
	fflush(stdout);
	free(v[0]);
	free(v[1]);
}

static int client(const struct opts *o)
{
	size_t shsize = sizeof(struct shared) + o->procs * sizeof(struct pres) +
			(size_t)o->procs * o->iters * sizeof(float);
	pthread_barrierattr_t ba;
	struct bp_cli *sc = NULL;
	struct shared *sh;
	int bad = 0, crashed = 0;

	sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("bxperf: mmap");
		return 2;
	}
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&sh->bar, &ba, o->procs + 1);
	fflush(stdout);
	for (uint32_t p = 0; p < o->procs; p++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("bxperf: fork");
			exit(2);	/* the others wait at a barrier: no way out */
		}
		if (!pid)
			child(o, sh, p);
	}
	/* The parent's own connection, for STAT only, opened after fork. */
	if (o->srvstat && o->tp->open(&o->cfg, 64, 1, &sc))
		sc = NULL;
	for (int i = 0; i < o->nsizes; i++) {
		struct bp_stat s0, s1;
		bool have = o->srvstat;
		uint64_t g[8];

		pthread_barrier_wait(&sh->bar);		/* A */
		if (have && srv_stat(o, sc, &s0))
			have = false;
		guest_cpu(&g[0], &g[1]);
		bp_net_counters(&g[4], &g[5]);
		pthread_barrier_wait(&sh->bar);		/* B */
		pthread_barrier_wait(&sh->bar);		/* C */
		guest_cpu(&g[2], &g[3]);
		bp_net_counters(&g[6], &g[7]);
		if (have && srv_stat(o, sc, &s1))
			have = false;
		print_cell(o, sh, o->sizes[i], g, have ? &s0 : NULL,
			   have ? &s1 : NULL, &bad);
	}
	for (uint32_t p = 0; p < o->procs; p++) {
		int ws;

		if (wait(&ws) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws))
			crashed++;
	}
	if (sc)
		o->tp->close(sc);
	if (crashed)
		fprintf(stderr, "bxperf: %d client processes failed\n", crashed);
	return bad || crashed ? 1 : 0;
}

/* ---- main ------------------------------------------------------------- */

static int parse_size(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || !v || v > BP_MAX_SIZE)
		return -1;
	*out = v;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: see the comment at the top of "
		"tools/bench/bxperf.c\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "tag", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.mode = BP_PULL, .depth = 1, .procs = 1, .iters = 100000,
		.minops = 3, .secs = 3, .warmup = 5, .tag = "-",
		.cfg = { .nbig = 32 },
	};
	static const uint32_t defsizes[] = { 64, 4096, 65536, 1u << 20,
					     16u << 20 };
	struct sigaction sa = { .sa_handler = on_term };
	const char *tpname = "bx", *sizes = NULL;
	bool port_set = false;
	int opt;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "cpu")) {
		uint64_t b, t;

		guest_cpu(&b, &t);
		printf("busy_us=%llu total_us=%llu\n", (unsigned long long)b,
		       (unsigned long long)t);
		return 0;
	}
	optind = 2;
	while ((opt = getopt_long(argc, argv, "T:a:p:o:z:q:P:i:d:m:w:b:r:St:k:",
				  lopts, NULL)) != -1) {
		switch (opt) {
		case 'T': tpname = optarg; break;
		case 'a': o.cfg.addr = optarg; break;
		case 'p': o.cfg.port = strtoul(optarg, NULL, 0); port_set = true; break;
		case 'o':
			o.mode = !strcmp(optarg, "pull") ? BP_PULL :
				 !strcmp(optarg, "push") ? BP_PUSH :
				 !strcmp(optarg, "mix") ? 0 : -1;
			if (o.mode < 0)
				usage();
			break;
		case 'z': sizes = optarg; break;
		case 'q': o.depth = strtoul(optarg, NULL, 0); break;
		case 'P': o.procs = strtoul(optarg, NULL, 0); break;
		case 'i': o.iters = atol(optarg); break;
		case 'd': o.secs = atof(optarg); o.cfg.secs = atoi(optarg); break;
		case 'm': o.minops = atol(optarg); break;
		case 'w': o.warmup = atoi(optarg); break;
		case 'b': o.cfg.nbig = strtoul(optarg, NULL, 0); break;
		case 'r': o.rate = atof(optarg); break;
		case 'S': o.srvstat = true; break;
		case 't': o.tag = optarg; break;
		case 'k':
			if (o.nkv == 8 || !strchr(optarg, '='))
				usage();
			o.kv[o.nkv++] = optarg;
			break;
		default: usage();
		}
	}
	if (!strcmp(tpname, "bx"))
		o.tp = &bp_bx;
	else if (!strcmp(tpname, "tcp"))
		o.tp = &bp_tcp;
	else
		usage();
	if (!port_set)
		o.cfg.port = o.tp == &bp_bx ? 80 : 7080;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (!strcmp(argv[1], "server"))
		return o.tp->serve(&o.cfg);
	if (strcmp(argv[1], "client") || !o.cfg.addr || !o.depth ||
	    o.depth > 512 || !o.procs || o.procs > 64 || o.iters < 1 ||
	    o.minops < 1 || !(o.rate >= 0))
		usage();
	if (sizes) {
		char *dup = strdup(sizes);

		for (char *t = strtok(dup, ","); t; t = strtok(NULL, ",")) {
			if (o.nsizes == 16 || parse_size(t, &o.sizes[o.nsizes++]))
				usage();
		}
		free(dup);
	} else {
		memcpy(o.sizes, defsizes, sizeof(defsizes));
		o.nsizes = 5;
	}
	return client(&o);
}
