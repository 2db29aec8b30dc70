/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bxperf: micro-benchmarks of bx and of a kernel TCP RPC (see bxperf.c).
 *
 * Both transports carry the same operations:
 *
 *   PULL  a 16-byte request naming a size; the server answers with that
 *         many bytes (from one preallocated buffer, never touched)
 *   PUSH  SIZE bytes to the server; complete when the server has them
 *   STAT  the server's CPU counters (struct bp_stat), for CPU per op
 *
 * A transport's client is asynchronous, the workload driver's operations
 * (tools/lib/workload.h): issue() starts an operation of kind enum bp_op
 * in a slot (0..depth-1 for data, slot depth for STAT with a small
 * buffer), reap() returns the slots that completed, res the bytes moved
 * (-EBADMSG if not the size asked for).
 */
#ifndef BXPERF_H
#define BXPERF_H

#include <stdbool.h>
#include <stdint.h>

#include "workload.h"

#define BP_MAGIC	0x42585046u	/* "BXPF" */
#define BP_MAX_SIZE	(16u << 20)	/* largest pull or push */
#define BP_STAT_SLOT_BYTES 4096

enum bp_op { BP_PULL = 1, BP_PUSH = 2, BP_STAT = 3 };

/* A request (bx: a pull's inline payload; TCP: every request's start, a
 * push's payload after it). A TCP response is the payload alone.
 */
struct bp_msg {
	uint32_t	magic;
	uint32_t	op;
	uint32_t	size;
	uint32_t	id;
};

/* The server's counters, cumulative. */
struct bp_stat {
	uint64_t	proc_cpu_us;	/* getrusage(RUSAGE_SELF) user + sys */
	uint64_t	guest_busy_us;	/* /proc/stat: all CPUs, not idle */
	uint64_t	guest_total_us;	/* /proc/stat: all CPUs, everything */
	uint64_t	ops;		/* operations served */
	uint64_t	rxe_retry;	/* rxe completer_retry_err, all devices */
	uint64_t	tcp_retrans;	/* TCP RetransSegs */
};

struct bp_cfg {
	const char	*addr;		/* client: server address */
	uint32_t	port;		/* bx: base service; tcp: port */
	/* server */
	int		secs;		/* 0: until SIGTERM */
	uint32_t	nbig;		/* 1 MiB push buffers (bx) */
};

struct bp_cli;

struct bp_transport {
	const char	*name;
	int	(*serve)(const struct bp_cfg *cfg);
	int	(*open)(const struct bp_cfg *cfg, uint32_t maxsize,
			uint32_t depth, struct bp_cli **out);
	void	*(*buf)(struct bp_cli *c, uint32_t slot);
	void	(*close)(struct bp_cli *c);
	/* issue() and reap(), their context a struct bp_cli */
	struct wl_ops ops;
};

extern const struct bp_transport bp_bx;
extern const struct bp_transport bp_tcp;

extern volatile int bp_stop;	/* servers: SIGTERM/SIGINT seen */

void bp_server_stat(struct bp_stat *st, uint64_t ops);
void bp_net_counters(uint64_t *rxe_retry, uint64_t *tcp_retrans);
void bp_server_ready(const char *name, const struct bp_cfg *cfg);
bool bp_server_done(const struct bp_cfg *cfg, double t0);

#endif /* BXPERF_H */
