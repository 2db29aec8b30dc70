// SPDX-License-Identifier: GPL-2.0
/*
 * Micro-benchmark of libbx/alloc.c (not a test): ns per bx_alloc_get() +
 * bx_alloc_put() pair, per thread, for a few sizes and thread counts.
 *
 *   cc -std=gnu11 -O2 -Wall -Wextra -Werror -o bench_alloc \
 *	tools/testing/unit/bench_alloc.c libbx/alloc.c -lpthread
 *   ./bench_alloc [iterations]
 *
 * "pair": get then put of one block, over and over. "batch": get 32 blocks,
 * then put them all, so slabs and the page heap hold many live blocks.
 * All threads share one allocator and use the same size (worst case for
 * the per-class lock).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../../../libbx/alloc.h"

#define REGION	(1ull << 30)
#define BATCH	32

struct run {
	struct bx_alloc		*a;
	pthread_barrier_t	*start;
	uint64_t		size;
	long			iters;
	int			batch;
	double			ns;	/* wall time per pair */
	double			cpu_ns;	/* thread CPU time per pair */
	int			err;
};

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *thread(void *arg)
{
	struct run *r = arg;
	uint64_t off[BATCH];
	double t0, c0;

	pthread_barrier_wait(r->start);
	t0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < r->iters; i += r->batch) {
		for (int j = 0; j < r->batch; j++)
			r->err |= bx_alloc_get(r->a, r->size, 1, &off[j]);
		for (int j = 0; j < r->batch; j++)
			r->err |= bx_alloc_put(r->a, off[j]);
	}
	r->ns = (now(CLOCK_MONOTONIC) - t0) / r->iters;
	r->cpu_ns = (now(CLOCK_THREAD_CPUTIME_ID) - c0) / r->iters;
	return NULL;
}

/* Mean wall and CPU ns per pair over nthreads threads of iters pairs. */
static void bench(uint64_t size, int nthreads, int batch, long iters,
		  double *ns, double *cpu_ns)
{
	struct run r[16];
	pthread_t t[16];
	pthread_barrier_t start;
	struct bx_alloc *a;

	if (bx_alloc_create(&a, REGION, 64, 64 << 10))
		exit(1);
	pthread_barrier_init(&start, NULL, nthreads);
	for (int i = 0; i < nthreads; i++) {
		r[i] = (struct run){ a, &start, size, iters, batch, 0, 0, 0 };
		pthread_create(&t[i], NULL, thread, &r[i]);
	}
	*ns = *cpu_ns = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		if (r[i].err) {
			fprintf(stderr, "bx_alloc error\n");
			exit(1);
		}
		*ns += r[i].ns / nthreads;
		*cpu_ns += r[i].cpu_ns / nthreads;
	}
	pthread_barrier_destroy(&start);
	bx_alloc_destroy(a);
}

int main(int argc, char **argv)
{
	static const uint64_t sizes[] = { 64, 4096, 64 << 10, 1 << 20 };
	static const char *const names[] = { "64 B", "4 KiB", "64 KiB",
					     "1 MiB" };
	static const int threads[] = { 1, 2, 4 };
	long iters = argc > 1 ? atol(argv[1]) : 2000000;

	if (iters < 4 * BATCH)
		iters = 4 * BATCH;
	printf("ns per get+put pair per thread, wall/cpu, mean over threads;"
	       " %ld pairs in all; %ld CPUs\n", iters,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("%-7s %-6s %13s %13s %13s\n", "size", "mode", "1 thread",
	       "2 threads", "4 threads");
	for (int i = 0; i < 4; i++) {
		for (int batch = 1; batch <= BATCH; batch += BATCH - 1) {
			printf("%-7s %-6s", names[i],
			       batch == 1 ? "pair" : "batch");
			for (int t = 0; t < 3; t++) {
				long n = iters / threads[t];
				double ns, cpu;

				bench(sizes[i], threads[t], batch,
				      n - n % BATCH, &ns, &cpu);
				printf(" %6.0f/%-6.0f", ns, cpu);
			}
			printf("\n");
		}
	}
	return 0;
}
