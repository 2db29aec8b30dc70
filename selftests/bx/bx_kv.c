// SPDX-License-Identifier: GPL-2.0
/*
 * bxkv (libbx's key-value layer) for kv.sh: a server, or a worker that
 * checks what the servers hold.
 *
 *   bx_kv serve -s SVC -b BEGIN -e END [-l VAL_LEN] [-M MSG_MAX] [-N]
 *	serve keys [BEGIN, END) until SIGTERM; prints "ready", then its
 *	counters. -N: pushes subtract (an SGD step of rate 1, through the
 *	apply callback) instead of adding.
 *
 *   bx_kv check -s SVC -a ADDR,ADDR... -k KEY_MAX [-l VAL_LEN] [-M MSG_MAX]
 *	[-r ROUNDS] [-N]
 *	pushes key sets that span the servers (a dense run across the
 *	boundary, every third key, a random tenth, the two ends), then
 *	pulls each set into a region buffer and into the heap: every value
 *	exactly what was pushed (integers, so float sums are exact); keys
 *	not ascending or outside the partition are refused.
 *
 *   bx_kv loop ... -d SECS [-T TIMEOUT_MS]
 *	pushes 1 to a key set spanning the servers again and again for
 *	SECS seconds, pulling and checking it every fifth time, while kv.sh
 *	breaks a server's connection: every push must succeed and have
 *	been applied exactly once (the last pull reads the number of
 *	pushes); prints the slowest call, which shows the outage was met.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bxkv.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void sgd(uint64_t key, float *dst, const float *src, uint32_t len,
		void *arg)
{
	(void)key;
	(void)arg;
	for (uint32_t j = 0; j < len; j++)
		dst[j] -= src[j];
}

struct opts {
	uint32_t	svc, val_len, msg_max, rounds, secs;
	uint64_t	begin, end, key_max;
	const char	*addrs[8];
	unsigned int	naddr;
	int		timeout_ms;
	int		neg;
};

static int serve(const struct opts *o)
{
	struct bxkv_server_cfg c = {
		.begin = o->begin, .end = o->end, .val_len = o->val_len,
		.service = o->svc, .msg_max = o->msg_max,
		.apply = o->neg ? sgd : NULL,
	};
	struct bxkv_server_stats st;
	struct bxkv_server *s;
	int ret;

	ret = bxkv_server_create(&s, &c);
	if (ret) {
		fprintf(stderr, "bx_kv serve: create: %s\n", strerror(-ret));
		return 1;
	}
	ret = bxkv_server_start(s);
	if (ret) {
		fprintf(stderr, "bx_kv serve: start: %s\n", strerror(-ret));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		usleep(50000);
	bxkv_server_stop(s);
	bxkv_server_stats(s, &st);
	bxkv_server_destroy(s);
	printf("bx_kv serve: pulls %" PRIu64 " pushes %" PRIu64
	       " keys_pulled %" PRIu64 " keys_pushed %" PRIu64
	       " zero_copy %" PRIu64 " parked %" PRIu64 " bad %" PRIu64
	       " errors %" PRIu64 "\n", st.pulls, st.pushes, st.keys_pulled,
	       st.keys_pushed, st.zero_copy, st.parked, st.bad, st.errors);
	return 0;
}

static struct bxkv_worker *worker(const struct opts *o)
{
	struct bxkv_worker_cfg c = {
		.servers = o->addrs, .nservers = o->naddr,
		.key_max = o->key_max, .val_len = o->val_len,
		.service = o->svc, .msg_max = o->msg_max,
		.timeout_ms = o->timeout_ms,
	};
	struct bxkv_worker *w;
	int ret = bxkv_worker_create(&w, &c);

	if (ret) {
		fprintf(stderr, "bx_kv: worker: %s\n", strerror(-ret));
		return NULL;
	}
	return w;
}

static int failed(struct bxkv_worker *w, const char *what, int ret)
{
	int server;

	bxkv_last_error(w, &server);
	printf("# FAIL: %s: %s (server %d)\n", what, strerror(-ret), server);
	return 1;
}

/* Pull @n keys into @buf and compare with @want (key-indexed). */
static int pull_check(struct bxkv_worker *w, const struct opts *o,
		      const uint64_t *keys, size_t n, float *buf,
		      const float *want, const char *what)
{
	uint32_t vl = o->val_len;
	int ret;

	memset(buf, 0xff, n * vl * sizeof(float));
	ret = bxkv_pull(w, keys, n, buf);
	if (ret)
		return failed(w, what, ret);
	for (size_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < vl; j++)
			if (buf[i * vl + j] != want[keys[i] * vl + j]) {
				printf("# FAIL: %s: key %" PRIu64 "[%u] = %g, want %g\n",
				       what, keys[i], j, buf[i * vl + j],
				       want[keys[i] * vl + j]);
				return 1;
			}
	return 0;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

#define NSETS 4

static int check(const struct opts *o)
{
	struct bxkv_worker *w = worker(o);
	uint64_t km = o->key_max, seed = 1, *set[NSETS], bad[2];
	size_t nset[NSETS] = { 0 }, most = 0;
	uint32_t vl = o->val_len;
	float *want, *vals, *zc, *heap, sign = o->neg ? -1 : 1;
	int ret, err = 0, server;

	if (!w)
		return 1;
	want = calloc(km * vl, sizeof(float));
	for (int s = 0; s < NSETS; s++)
		set[s] = calloc(km, sizeof(uint64_t));
	/* A dense run across the middle (the boundary of two servers). */
	for (uint64_t k = km * 9 / 20; k < km * 13 / 20; k++)
		set[0][nset[0]++] = k;
	for (uint64_t k = 0; k < km; k += 3)
		set[1][nset[1]++] = k;
	for (uint64_t k = 0; k < km; k++)
		if (rnd(&seed) % 10 == 0)
			set[2][nset[2]++] = k;
	set[3][nset[3]++] = 0;
	set[3][nset[3]++] = km - 1;
	for (int s = 0; s < NSETS; s++)
		most = nset[s] > most ? nset[s] : most;
	vals = malloc(most * vl * sizeof(float));
	heap = malloc(most * vl * sizeof(float));
	ret = bxkv_buf_alloc(w, most * vl * sizeof(float), (void **)&zc);
	if (!want || !vals || !heap || ret) {
		printf("# FAIL: no memory\n");
		return 1;
	}
	/* Everything starts at 0. */
	err |= pull_check(w, o, set[1], nset[1], zc, want, "initial pull");
	for (uint32_t r = 1; r <= o->rounds && !err; r++) {
		for (int s = 0; s < NSETS && !err; s++) {
			for (size_t i = 0; i < nset[s]; i++)
				for (uint32_t j = 0; j < vl; j++) {
					float v = (float)((set[s][i] * 7 + j + r) % 5 + 1);

					vals[i * vl + j] = v;
					want[set[s][i] * vl + j] += sign * v;
				}
			ret = bxkv_push(w, set[s], nset[s], vals);
			if (ret)
				err = failed(w, "push", ret);
		}
		for (int s = 0; s < NSETS && !err; s++) {
			err |= pull_check(w, o, set[s], nset[s], zc, want,
					  "pull (region)");
			err |= pull_check(w, o, set[s], nset[s], heap, want,
					  "pull (heap)");
		}
		printf("# round %u: %zu, %zu, %zu, %zu keys: %s\n", r,
		       nset[0], nset[1], nset[2], nset[3], err ? "FAIL" : "ok");
	}
	/* Refused: not ascending, outside the partition. */
	bad[0] = 5, bad[1] = 5;
	ret = bxkv_pull(w, bad, 2, heap);
	if (ret != -EINVAL || bxkv_last_error(w, &server) != -EINVAL ||
	    server != -1) {
		printf("# FAIL: keys not ascending: %d, server %d\n", ret,
		       server);
		err = 1;
	}
	bad[0] = 5, bad[1] = km;
	ret = bxkv_push(w, bad, 2, vals);
	if (ret != -ERANGE) {
		printf("# FAIL: key past key_max: %d\n", ret);
		err = 1;
	}
	/* The refused calls changed nothing. */
	err |= pull_check(w, o, set[3], nset[3], zc, want, "final pull");
	bxkv_worker_destroy(w);
	return err;
}

static int loop(const struct opts *o)
{
	struct bxkv_worker *w = worker(o);
	uint64_t km = o->key_max, *keys;
	uint32_t vl = o->val_len;
	size_t n = 0;
	float *want, *ones, *zc;
	int64_t end, worst = 0;
	uint64_t pushes = 0, pulls = 0;
	int ret, err = 0;

	if (!w)
		return 1;
	keys = calloc(km, sizeof(*keys));
	want = calloc(km * vl, sizeof(float));
	ones = malloc(km * vl * sizeof(float));
	if (!keys || !want || !ones)
		return 1;
	/* A run across the boundary and every 50th key elsewhere. */
	for (uint64_t k = 0; k < km; k++)
		if ((k >= km / 2 - 1000 && k < km / 2 + 1000) || k % 50 == 0)
			keys[n++] = k;
	for (size_t i = 0; i < n * vl; i++)
		ones[i] = 1;
	ret = bxkv_buf_alloc(w, n * vl * sizeof(float), (void **)&zc);
	if (ret)
		return failed(w, "buffer", ret);
	end = now_ms() + o->secs * 1000LL;
	while (!err && now_ms() < end) {
		int64_t t0 = now_ms(), dt;

		ret = bxkv_push(w, keys, n, ones);
		dt = now_ms() - t0;
		worst = dt > worst ? dt : worst;
		if (ret) {
			err = failed(w, "push", ret);
			break;
		}
		pushes++;
		for (size_t i = 0; i < n; i++)
			for (uint32_t j = 0; j < vl; j++)
				want[keys[i] * vl + j] += 1;
		if (pushes % 5 == 0) {
			t0 = now_ms();
			err |= pull_check(w, o, keys, n, zc, want, "pull");
			dt = now_ms() - t0;
			worst = dt > worst ? dt : worst;
			pulls++;
		}
	}
	if (!err)
		err |= pull_check(w, o, keys, n, zc, want, "final pull");
	printf("# %zu keys: %" PRIu64 " pushes, %" PRIu64
	       " pulls, slowest call %" PRId64 " ms: %s\n", n, pushes, pulls,
	       worst, err ? "FAIL" : "ok");
	printf("bx_kv loop: pushes %" PRIu64 " slowest_ms %" PRId64 "\n",
	       pushes, worst);
	bxkv_worker_destroy(w);
	return err;
}

int main(int argc, char **argv)
{
	struct opts o = { .val_len = 4, .rounds = 3, .secs = 20 };
	const char *mode = argc > 1 ? argv[1] : "";
	char *addrs = NULL, *tok, *save;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	optind = 2;
	while ((c = getopt(argc, argv, "s:b:e:l:M:Na:k:r:d:T:")) != -1) {
		switch (c) {
		case 's': o.svc = strtoul(optarg, NULL, 0); break;
		case 'b': o.begin = strtoull(optarg, NULL, 0); break;
		case 'e': o.end = strtoull(optarg, NULL, 0); break;
		case 'l': o.val_len = strtoul(optarg, NULL, 0); break;
		case 'M': o.msg_max = strtoul(optarg, NULL, 0); break;
		case 'N': o.neg = 1; break;
		case 'a': addrs = optarg; break;
		case 'k': o.key_max = strtoull(optarg, NULL, 0); break;
		case 'r': o.rounds = strtoul(optarg, NULL, 0); break;
		case 'd': o.secs = strtoul(optarg, NULL, 0); break;
		case 'T': o.timeout_ms = atoi(optarg); break;
		default: return 2;
		}
	}
	for (tok = addrs ? strtok_r(addrs, ",", &save) : NULL;
	     tok && o.naddr < 8; tok = strtok_r(NULL, ",", &save))
		o.addrs[o.naddr++] = tok;
	if (!strcmp(mode, "serve")) {
		signal(SIGTERM, on_term);
		signal(SIGINT, on_term);
		return serve(&o);
	}
	if (!strcmp(mode, "check"))
		return check(&o);
	if (!strcmp(mode, "loop"))
		return loop(&o);
	fprintf(stderr, "usage: bx_kv serve|check|loop [options] (see the source)\n");
	return 2;
}
