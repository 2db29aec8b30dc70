// SPDX-License-Identifier: GPL-2.0
/*
 * bxkv (libbx's key-value layer) for kv.sh: a server, or a worker that
 * checks what the servers hold.
 *
 *   bx_kv serve -s SVC -b BEGIN -e END [-l VAL_LEN] [-M MSG_MAX] [-N] [-L]
 *	serve keys [BEGIN, END) until SIGTERM; prints "ready", then its
 *	counters. -N: pushes subtract (an SGD step of rate 1, through the
 *	apply callback) instead of adding. -L: key k has 1 + k % 7
 *	floats (a table of lengths) instead of VAL_LEN.
 *
 *   bx_kv check -s SVC -a ADDR,ADDR... -k KEY_MAX [-l VAL_LEN] [-M MSG_MAX]
 *	[-r ROUNDS] [-N] [-L]
 *	pushes key sets that span the servers (a dense run across the
 *	boundary, every third key, a random tenth, the two ends), then
 *	pulls each set into a region buffer and into the heap: every value
 *	exactly what was pushed (integers, so float sums are exact); keys
 *	not ascending or outside the partition are refused. -L: the calls
 *	name each key's length (bxkv_push_lens(), _pull_lens()), as -L
 *	servers store them; a pull of key 0 with a length not its own is
 *	refused by server 0 (EREMOTEIO), a call without lengths by the
 *	worker (EINVAL).
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
	int		lens;
};

/* Key @k's floats: 1 + k % 7 with -L, else -l's. */
static uint32_t key_len(const struct opts *o, uint64_t k)
{
	return o->lens ? 1 + k % 7 : o->val_len;
}

static int serve(const struct opts *o)
{
	struct bxkv_server_cfg c = {
		.begin = o->begin, .end = o->end, .val_len = o->val_len,
		.service = o->svc, .msg_max = o->msg_max,
		.apply = o->neg ? sgd : NULL,
	};
	struct bxkv_server_stats st;
	struct bxkv_server *s;
	uint32_t *lens = NULL;
	int ret;

	if (o->lens) {
		lens = calloc(o->end - o->begin, sizeof(*lens));
		if (!lens)
			return 1;
		for (uint64_t k = o->begin; k < o->end; k++)
			lens[k - o->begin] = key_len(o, k);
		c.lens = lens;
		c.val_len = 0;
	}
	ret = bxkv_server_create(&s, &c);
	free(lens);
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
		.key_max = o->key_max, .val_len = o->lens ? 0 : o->val_len,
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

/* A call's keys: their lengths (-L), and all their floats. */
struct set {
	uint64_t	*keys;
	uint32_t	*lens;
	size_t		n;
	size_t		nvals;
};

static void set_add(struct set *t, const struct opts *o, uint64_t k)
{
	t->keys[t->n] = k;
	t->lens[t->n++] = key_len(o, k);
	t->nvals += key_len(o, k);
}

static int push(struct bxkv_worker *w, const struct opts *o,
		const struct set *t, const float *vals)
{
	if (o->lens)
		return bxkv_push_lens(w, t->keys, t->n, vals, t->lens);
	return bxkv_push(w, t->keys, t->n, vals);
}

/*
 * Pull set @t into @buf and compare with @want: key k's values at
 * want[woff[k] ..].
 */
static int pull_check(struct bxkv_worker *w, const struct opts *o,
		      const struct set *t, float *buf, const float *want,
		      const uint64_t *woff, const char *what)
{
	const float *v = buf;
	int ret;

	memset(buf, 0xff, t->nvals * sizeof(float));
	if (o->lens)
		ret = bxkv_pull_lens(w, t->keys, t->n, buf, t->lens);
	else
		ret = bxkv_pull(w, t->keys, t->n, buf);
	if (ret)
		return failed(w, what, ret);
	for (size_t i = 0; i < t->n; i++) {
		uint64_t k = t->keys[i];

		for (uint32_t j = 0; j < t->lens[i]; j++, v++)
			if (*v != want[woff[k] + j]) {
				printf("# FAIL: %s: key %" PRIu64 "[%u] = %g, want %g\n",
				       what, k, j, *v, want[woff[k] + j]);
				return 1;
			}
	}
	return 0;
}

/* The offsets of keys [0, km) in a key-indexed array of their floats. */
static uint64_t *offsets(const struct opts *o, uint64_t km)
{
	uint64_t *woff = malloc((km + 1) * sizeof(*woff));

	if (!woff)
		return NULL;
	woff[0] = 0;
	for (uint64_t k = 0; k < km; k++)
		woff[k + 1] = woff[k] + key_len(o, k);
	return woff;
}

static int set_alloc(struct set *t, uint64_t n)
{
	memset(t, 0, sizeof(*t));
	t->keys = calloc(n, sizeof(*t->keys));
	t->lens = calloc(n, sizeof(*t->lens));
	return t->keys && t->lens ? 0 : -ENOMEM;
}

static void set_free(struct set *t)
{
	free(t->keys);
	free(t->lens);
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

/* -L: lengths not the servers' are refused, by them or the worker. */
static int check_lens_refused(struct bxkv_worker *w, float *buf)
{
	uint64_t key = 0;
	uint32_t len = 2;	/* key 0 has 1 */
	int ret, server = -1;

	ret = bxkv_pull_lens(w, &key, 1, buf, &len);
	bxkv_last_error(w, &server);
	if (ret != -EREMOTEIO || server != 0) {
		printf("# FAIL: pull of a length not the server's: %d, server %d\n",
		       ret, server);
		return 1;
	}
	len = 0;
	ret = bxkv_pull_lens(w, &key, 1, buf, &len);
	if (ret != -EINVAL) {
		printf("# FAIL: a length of 0: %d\n", ret);
		return 1;
	}
	ret = bxkv_pull(w, &key, 1, buf);
	if (ret != -EINVAL) {
		printf("# FAIL: no val_len and no lengths: %d\n", ret);
		return 1;
	}
	return 0;
}

static int check(const struct opts *o)
{
	struct bxkv_worker *w = worker(o);
	uint64_t km = o->key_max, seed = 1, bad[2], *woff;
	struct set set[NSETS];
	size_t most = 0;
	float *want, *vals, *zc, *heap, sign = o->neg ? -1 : 1;
	int ret = 0, err = 0, server;

	if (!w)
		return 1;
	woff = offsets(o, km);
	for (int s = 0; s < NSETS; s++)
		ret |= set_alloc(&set[s], km);
	if (!woff || ret) {
		printf("# FAIL: no memory\n");
		return 1;
	}
	want = calloc(woff[km], sizeof(float));
	/* A dense run across the middle (the boundary of two servers). */
	for (uint64_t k = km * 9 / 20; k < km * 13 / 20; k++)
		set_add(&set[0], o, k);
	for (uint64_t k = 0; k < km; k += 3)
		set_add(&set[1], o, k);
	for (uint64_t k = 0; k < km; k++)
		if (rnd(&seed) % 10 == 0)
			set_add(&set[2], o, k);
	set_add(&set[3], o, 0);
	set_add(&set[3], o, km - 1);
	for (int s = 0; s < NSETS; s++)
		most = set[s].nvals > most ? set[s].nvals : most;
	vals = malloc(most * sizeof(float));
	heap = malloc(most * sizeof(float));
	ret = bxkv_buf_alloc(w, most * sizeof(float), (void **)&zc);
	if (!want || !vals || !heap || ret) {
		printf("# FAIL: no memory\n");
		return 1;
	}
	/* Everything starts at 0. */
	err |= pull_check(w, o, &set[1], zc, want, woff, "initial pull");
	for (uint32_t r = 1; r <= o->rounds && !err; r++) {
		for (int s = 0; s < NSETS && !err; s++) {
			float *v = vals;

			for (size_t i = 0; i < set[s].n; i++) {
				uint64_t k = set[s].keys[i];

				for (uint32_t j = 0; j < set[s].lens[i]; j++) {
					float x = (float)((k * 7 + j + r) % 5 + 1);

					*v++ = x;
					want[woff[k] + j] += sign * x;
				}
			}
			ret = push(w, o, &set[s], vals);
			if (ret)
				err = failed(w, "push", ret);
		}
		for (int s = 0; s < NSETS && !err; s++) {
			err |= pull_check(w, o, &set[s], zc, want, woff,
					  "pull (region)");
			err |= pull_check(w, o, &set[s], heap, want, woff,
					  "pull (heap)");
		}
		printf("# round %u: %zu, %zu, %zu, %zu keys: %s\n", r,
		       set[0].n, set[1].n, set[2].n, set[3].n,
		       err ? "FAIL" : "ok");
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
	ret = o->lens ? bxkv_push_lens(w, bad, 2, vals, set[0].lens) :
	      bxkv_push(w, bad, 2, vals);
	if (ret != -ERANGE) {
		printf("# FAIL: key past key_max: %d\n", ret);
		err = 1;
	}
	if (o->lens)
		err |= check_lens_refused(w, heap);
	/* The refused calls changed nothing. */
	err |= pull_check(w, o, &set[3], zc, want, woff, "final pull");
	bxkv_worker_destroy(w);
	for (int s = 0; s < NSETS; s++)
		set_free(&set[s]);
	free(woff);
	free(want);
	free(vals);
	free(heap);
	return err;
}

static int loop(const struct opts *o)
{
	struct bxkv_worker *w = worker(o);
	uint64_t km = o->key_max, *woff = offsets(o, km);
	struct set t;
	float *want, *ones, *zc;
	int64_t end, worst = 0;
	uint64_t pushes = 0, pulls = 0;
	int ret, err = 0;

	if (!w || !woff || set_alloc(&t, km))
		return 1;
	want = calloc(woff[km], sizeof(float));
	ones = malloc(woff[km] * sizeof(float));
	if (!want || !ones)
		return 1;
	/* A run across the boundary and every 50th key elsewhere. */
	for (uint64_t k = 0; k < km; k++)
		if ((k >= km / 2 - 1000 && k < km / 2 + 1000) || k % 50 == 0)
			set_add(&t, o, k);
	for (size_t i = 0; i < t.nvals; i++)
		ones[i] = 1;
	ret = bxkv_buf_alloc(w, t.nvals * sizeof(float), (void **)&zc);
	if (ret)
		return failed(w, "buffer", ret);
	end = now_ms() + o->secs * 1000LL;
	while (!err && now_ms() < end) {
		int64_t t0 = now_ms(), dt;

		ret = push(w, o, &t, ones);
		dt = now_ms() - t0;
		worst = dt > worst ? dt : worst;
		if (ret) {
			err = failed(w, "push", ret);
			break;
		}
		pushes++;
		for (size_t i = 0; i < t.n; i++)
			for (uint32_t j = 0; j < t.lens[i]; j++)
				want[woff[t.keys[i]] + j] += 1;
		if (pushes % 5 == 0) {
			t0 = now_ms();
			err |= pull_check(w, o, &t, zc, want, woff, "pull");
			dt = now_ms() - t0;
			worst = dt > worst ? dt : worst;
			pulls++;
		}
	}
	if (!err)
		err |= pull_check(w, o, &t, zc, want, woff, "final pull");
	printf("# %zu keys: %" PRIu64 " pushes, %" PRIu64
	       " pulls, slowest call %" PRId64 " ms: %s\n", t.n, pushes, pulls,
	       worst, err ? "FAIL" : "ok");
	printf("bx_kv loop: pushes %" PRIu64 " slowest_ms %" PRId64 "\n",
	       pushes, worst);
	bxkv_worker_destroy(w);
	set_free(&t);
	free(woff);
	free(want);
	free(ones);
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
	while ((c = getopt(argc, argv, "s:b:e:l:M:NLa:k:r:d:T:")) != -1) {
		switch (c) {
		case 's': o.svc = strtoul(optarg, NULL, 0); break;
		case 'b': o.begin = strtoull(optarg, NULL, 0); break;
		case 'e': o.end = strtoull(optarg, NULL, 0); break;
		case 'l': o.val_len = strtoul(optarg, NULL, 0); break;
		case 'M': o.msg_max = strtoul(optarg, NULL, 0); break;
		case 'N': o.neg = 1; break;
		case 'L': o.lens = 1; break;
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
