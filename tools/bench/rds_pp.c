// SPDX-License-Identifier: GPL-2.0
/*
 * rds_pp: an AF_RDS ping-pong over RDS's RDMA transport (rds_rdma), the
 * in-kernel comparison for bx's small-message latency (issue: "bx faster
 * than RDS-over-rxe ping-pong").
 *
 *   rds_pp serve  -b LOCAL_IP [-p PORT]
 *   rds_pp client -b LOCAL_IP -a SERVER_IP [-p PORT] [-z SIZE] [-d SECS]
 *                 [-k KEY=VALUE]...
 *
 * The server echoes every message to its sender. The client sends one
 * message of SIZE bytes at a time and waits for the echo, for SECS
 * seconds after a warm-up of 20 round trips, then prints
 *   bench-rds size=S ops=N mean_us=M p50_us=A p99_us=B p999_us=C
 * and the same as a record (benchrec.h; tools/bench/README.md,
 * "Records"): bench "rds_pp", kind "result", cell {size, and each -k
 * KEY=VALUE}, metrics {ops, mean_us, p50_us, p99_us, p999_us}.
 * The socket is pinned to the IB transport (SO_RDS_TRANSPORT), so an
 * address without an RDMA device fails instead of falling back to TCP.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/rds.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "benchrec.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif

#define MAX_SIZE	(1u << 20)
#define MAX_SAMPLES	(1u << 20)

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "rds_pp: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int rds_socket(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	int t = RDS_TRANS_IB, fd;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0)
		die("socket(AF_RDS) (is rds_rdma loaded?)");
	if (setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &t, sizeof(t)))
		die("SO_RDS_TRANSPORT");
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		errno = EINVAL;
		die("local address");
	}
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind");
	return fd;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static _Noreturn void serve(int fd)
{
	static char buf[MAX_SIZE];
	struct sockaddr_in from;

	for (;;) {
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from, &fl);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("recvfrom");
		}
		if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from,
			   fl) != n)
			die("sendto");
	}
}

static int client(int fd, const char *server, uint16_t port, size_t size,
		  int secs, const char *const *kv, int nkv)
{
	struct benchrec r;
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	static char buf[MAX_SIZE];
	double *lat, end, sum = 0;
	size_t n = 0;
	int i;

	if (inet_pton(AF_INET, server, &to.sin_addr) != 1) {
		errno = EINVAL;
		die("server address");
	}
	lat = malloc(sizeof(*lat) * MAX_SAMPLES);
	if (!lat)
		die("malloc");
	memset(buf, 0x5a, size);
	end = now_us() + secs * 1e6;
	for (i = -20; n < MAX_SAMPLES; i++) {
		double t0 = now_us();

		if (sendto(fd, buf, size, 0, (struct sockaddr *)&to,
			   sizeof(to)) != (ssize_t)size)
			die("sendto");
		for (;;) {
			ssize_t r = recv(fd, buf, sizeof(buf), 0);

			if (r == (ssize_t)size)
				break;
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				die("recv");
		}
		if (i >= 0) {
			lat[n] = now_us() - t0;
			sum += lat[n++];
		}
		if (i >= 0 && now_us() >= end)
			break;
	}
	qsort(lat, n, sizeof(*lat), cmp);
	printf("bench-rds size=%zu ops=%zu mean_us=%.1f p50_us=%.1f p99_us=%.1f p999_us=%.1f\n",
	       size, n, sum / n, lat[n / 2], lat[n * 99 / 100],
	       lat[n * 999 / 1000]);
	benchrec_begin(&r, stdout, "rds_pp", "result");
	benchrec_uint(&r, "size", size);
	for (int k = 0; k < nkv; k++)
		benchrec_kv(&r, kv[k]);
	benchrec_metrics(&r);
	benchrec_uint(&r, "ops", n);
	benchrec_num(&r, "mean_us", "%.1f", sum / n);
	benchrec_num(&r, "p50_us", "%.1f", lat[n / 2]);
	benchrec_num(&r, "p99_us", "%.1f", lat[n * 99 / 100]);
	benchrec_num(&r, "p999_us", "%.1f", lat[n * 999 / 1000]);
	benchrec_end(&r);
	free(lat);
	return 0;
}

int main(int argc, char **argv)
{
	const char *local = NULL, *server = NULL;
	const char *kv[8];
	int secs = 3, nkv = 0, opt, fd;
	uint16_t port = 18634;
	size_t size = 64;

	if (argc < 2) {
usage:
		fprintf(stderr, "usage: rds_pp serve -b LOCAL_IP [-p PORT]\n"
			"       rds_pp client -b LOCAL_IP -a SERVER_IP [-p PORT] [-z SIZE] [-d SECS]\n"
			"                     [-k KEY=VALUE]...\n");
		return 2;
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "b:a:p:z:d:k:")) != -1) {
		switch (opt) {
		case 'b': local = optarg; break;
		case 'a': server = optarg; break;
		case 'p': port = (uint16_t)atoi(optarg); break;
		case 'z': size = strtoul(optarg, NULL, 0); break;
		case 'd': secs = atoi(optarg); break;
		case 'k':
			if (nkv == 8 || !strchr(optarg, '='))
				goto usage;
			kv[nkv++] = optarg;
			break;
		default: goto usage;
		}
	}
	if (!local || !size || size > MAX_SIZE || secs <= 0)
		goto usage;
	if (!strcmp(argv[1], "serve")) {
		fd = rds_socket(local, port);
		printf("rds_pp: serving on %s:%u\n", local, port);
		fflush(stdout);
		serve(fd);
	}
	if (!strcmp(argv[1], "client") && server) {
		fd = rds_socket(local, 0);
		return client(fd, server, port, size, secs, kv, nkv);
	}
	goto usage;
}
