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
 * The client runs one cell per size (tools/lib/workload.h drives it):
 * PROCS processes (fork), each with its own bx handle or TCP connection,
 * each keeping DEPTH operations in flight (-o mix alternates pulls and
 * pushes). A cell first does WARMUP unmeasured operations per process at
 * depth 1 (one for sizes of 1 MiB and more), then all processes start
 * together (at a gate the parent opens) and each issues until it
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchrec.h"
#include "bxperf.h"

#define PER_OCT		32
#define REAP_TIMEOUT_MS	60000

volatile int bp_stop;

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
	st->proc_cpu_us = wl_proc_cpu_us();
	wl_machine_cpu(&st->guest_busy_us, &st->guest_total_us);
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
	return cfg->secs && wl_now_us() - t0 > cfg->secs * 1e6;
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

/* The parent's side of the run: the server's and the machines' counters
 * around each cell (g: wl_machine_cpu()'s busy and total, then the
 * retransmissions, before and after), and its own connection for STAT.
 */
struct client {
	const struct opts *o;
	struct bp_cli	*sc;
	bool		sc_tried;
	bool		have;		/* s0 and s1 of the cell */
	struct bp_stat	s0, s1;
	uint64_t	g[8];
	int		bad;
};

static int cli_open(void *arg, uint32_t worker, void **ctx)
{
	const struct opts *o = ((struct client *)arg)->o;
	uint32_t maxsize = 1;
	struct bp_cli *c = NULL;
	int ret;

	(void)worker;
	for (int i = 0; i < o->nsizes; i++)
		maxsize = o->sizes[i] > maxsize ? o->sizes[i] : maxsize;
	ret = o->tp->open(&o->cfg, maxsize, o->depth, &c);
	*ctx = c;
	return ret;
}

static void cli_close(void *arg, void *ctx)
{
	((struct client *)arg)->o->tp->close(ctx);
}

/* The server's counters, by a STAT on the parent's own connection. */
static int srv_stat(const struct opts *o, struct bp_cli *c,
		    struct bp_stat *st)
{
	struct wl_op op = { .kind = BP_STAT, .slot = 1 };
	struct wl_done d;
	int ret;

	if (!c)
		return -ENOTCONN;
	ret = o->tp->ops.issue(c, &op);
	if (!ret) {
		ret = o->tp->ops.reap(c, &d, 1, REAP_TIMEOUT_MS);
		if (!ret) {
			fprintf(stderr, "bxperf: no completion in %d s\n",
				REAP_TIMEOUT_MS / 1000);
			ret = -ETIMEDOUT;
		}
		ret = ret < 0 ? ret : d.res < 0 ? d.res : 0;
	}
	if (!ret)
		memcpy(st, o->tp->buf(c, 1), sizeof(*st));
	return ret;
}

/* Every worker is warm and waits to start cell @cell. */
static void cell_before(void *arg, struct wl_run *run, int cell)
{
	struct client *cl = arg;
	const struct opts *o = cl->o;

	(void)run;
	(void)cell;
	/* Opened after the workers started: they do not inherit it. */
	if (o->srvstat && !cl->sc_tried) {
		cl->sc_tried = true;
		if (o->tp->open(&o->cfg, 64, 1, &cl->sc))
			cl->sc = NULL;
	}
	cl->have = o->srvstat && !srv_stat(o, cl->sc, &cl->s0);
	wl_machine_cpu(&cl->g[0], &cl->g[1]);
	bp_net_counters(&cl->g[4], &cl->g[5]);
}

static void print_cell(struct client *cl, struct wl_run *run, int cell);

/* Every worker has ended cell @cell. */
static void cell_after(void *arg, struct wl_run *run, int cell)
{
	struct client *cl = arg;

	wl_machine_cpu(&cl->g[2], &cl->g[3]);
	bp_net_counters(&cl->g[6], &cl->g[7]);
	if (cl->have && srv_stat(cl->o, cl->sc, &cl->s1))
		cl->have = false;
	print_cell(cl, run, cell);
}

static void print_cell(struct client *cl, struct wl_run *run, int cell)
{
	static const uint32_t kind[2] = { BP_PULL, BP_PUSH };
	const struct opts *o = cl->o;
	const struct bp_stat *s0 = cl->have ? &cl->s0 : NULL;
	const struct bp_stat *s1 = cl->have ? &cl->s1 : NULL;
	const uint64_t *g = cl->g;
	uint32_t size = o->sizes[cell];
	uint64_t ntot = 0, n[2] = { 0 }, err[2] = { 0 }, bytes[2] = { 0 };
	double t0 = 0, t1 = 0, cpu = 0, secs;

	for (uint32_t p = 0; p < o->procs; p++) {
		const struct wl_res *r = wl_res(run, cell, p);

		if (r->fatal)
			cl->bad = 1;
		for (int k = 0; k < 2; k++) {
			n[k] += r->run.ok[kind[k]];
			err[k] += r->run.failed[kind[k]];
			bytes[k] += r->run.bytes[kind[k]];
		}
		cpu += r->cpu_us;
		if (!p || r->t0 < t0)
			t0 = r->t0;
		if (r->t1 > t1)
			t1 = r->t1;
	}
	ntot = n[0] + n[1];
	secs = (t1 - t0) / 1e6;
	for (int k = 0; k < 2; k++) {
		static const char *const name[2] = { "pull", "push" };
		double sum = 0, srv_cpu = -1, srv_guest = -1, srv_pct = -1;
		double mean, p50, p99, p999, ops_s, mb_s, cli_cpu, cli_guest;
		double cli_pct, *v;
		long long rxe, tcp;
		struct benchrec r;
		char meta[256];
		uint64_t nv;

		if (!n[k] && !err[k])
			continue;
		if (err[k])
			cl->bad = 1;
		v = wl_latencies(run, kind[k], &nv);
		if (!v) {
			cl->bad = 1;
			continue;
		}
		for (uint64_t i = 0; i < nv; i++)
			sum += v[i];
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
		mean = nv ? sum / nv : 0;
		p50 = wl_pctl(v, nv, 0.5);
		p99 = wl_pctl(v, nv, 0.99);
		p999 = wl_pctl(v, nv, 0.999);
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
		       p50, p99, p999, nv ? v[0] : 0, nv ? v[nv - 1] : 0,
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
		benchrec_num(&r, "min_us", "%.1f", nv ? v[0] : 0);
		benchrec_num(&r, "max_us", "%.1f", nv ? v[nv - 1] : 0);
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
		for (uint64_t i = 0; i < nv;) {
			int b = wl_hist_bucket(v[i], PER_OCT);
			uint64_t j = i;

			while (j < nv && wl_hist_bucket(v[j], PER_OCT) == b)
				j++;
			benchrec_pair(&r, b, (long long)(j - i));
			i = j;
		}
		benchrec_list_end(&r);
		benchrec_end(&r);
		free(v);
	}
	fflush(stdout);
}

/*
 * One cell per size, PROCS processes each keeping DEPTH in flight
 * (workload.h), the parent printing each cell between its gates.
 */
static int client(const struct opts *o)
{
	static const char *const names[] = { NULL, "pull", "push" };
	/* -o mix alternates pulls and pushes, from a pull. */
	uint32_t kinds[2] = { o->mode ? (uint32_t)o->mode : BP_PULL, BP_PUSH };
	struct client cl = { .o = o };
	struct wl_cell cells[16];
	struct wl_cfg cfg = {
		.prog = "bxperf", .ops = &o->tp->ops,
		.workers = o->procs, .depth = o->depth,
		.cells = cells, .ncells = o->nsizes,
		.kinds = kinds, .nkinds = o->mode ? 1 : 2,
		.iters = o->iters, .secs = o->secs, .minops = o->minops,
		.rate = o->rate, .timeout_ms = REAP_TIMEOUT_MS,
		.err_msgs = 3, .kind_names = names, .samples = o->iters,
		.sync_cells = true, .arg = &cl,
		.open = cli_open, .close = cli_close,
		.before = cell_before, .after = cell_after,
	};
	struct wl_run *run;
	int crashed, ret;

	/* Unmeasured operations at depth 1 first, so that connections and
	 * buffers exist (one for sizes of 1 MiB and more).
	 */
	for (int i = 0; i < o->nsizes; i++)
		cells[i] = (struct wl_cell){ &o->sizes[i], 1,
			o->sizes[i] >= (1u << 20) ? 1 : o->warmup };
	ret = wl_drive(&cfg, &run);
	if (ret) {
		fprintf(stderr, "bxperf: %s\n", strerror(-ret));
		return 2;
	}
	crashed = wl_failed(run);
	wl_free(run);
	if (cl.sc)
		o->tp->close(cl.sc);
	if (crashed)
		fprintf(stderr, "bxperf: %d client processes failed\n", crashed);
	return cl.bad || crashed ? 1 : 0;
}

/* ---- main ------------------------------------------------------------- */

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

		wl_machine_cpu(&b, &t);
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
		o.nsizes = wl_parse_sizes(sizes, o.sizes, 16, 1, BP_MAX_SIZE);
		if (o.nsizes < 0)
			usage();
	} else {
		memcpy(o.sizes, defsizes, sizeof(defsizes));
		o.nsizes = 5;
	}
	return client(&o);
}
