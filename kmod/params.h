/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: tunables (module parameters, writable at runtime through
 * /sys/module/bx/parameters/ and netlink's tunables-set). Readers use
 * READ_ONCE(); every value is range-checked when written.
 */
#ifndef _BX_PARAMS_H
#define _BX_PARAMS_H

#include <linux/types.h>

/*
 * The one list of the u32 tunables: X(name, ATTR, default, min, max,
 * description). It makes the variables bx_<name>, the module parameters
 * (with "[min..max, default D]" after the description), and netlink's
 * attribute BX_A_TUNABLES_<ATTR> of each (nl.c). tools/tunables.sh
 * checks that the netlink spec's ranges and Documentation/bx.rst agree
 * with it (make style).
 */
#define BX_TUNABLES(X)							\
	X(wnd_kb, WND_KB, 8192, 64, 1048576,				\
	  "send window per connection, KiB in flight")			\
	X(wnd_ops, WND_OPS, 128, 1, 4096,				\
	  "send window per connection, operations in flight")		\
	X(host_wnd_kb, HOST_WND_KB, 32768, 64, 4194304,			\
	  "send window of the host, KiB in flight over all connections") \
	X(host_wnd_ops, HOST_WND_OPS, 1024, 1, 65536,			\
	  "send window of the host, operations in flight")		\
	X(rx_wnd_kb, RX_WND_KB, 16384, 64, 4194304,			\
	  "receiver admission: KiB of rendezvous data all peers "	\
	  "together may have in flight towards this host")		\
	X(rd_max, RD_MAX, 1, 1, 16,					\
	  "RDMA READ operations in flight per connection")		\
	X(rd_depth, RD_DEPTH, 16, 1, 16,				\
	  "RDMA READs a connection's QP has on the wire at once, for "	\
	  "new connections")						\
	X(credit_batch, CREDIT_BATCH, 32, 1, 64,			\
	  "receive credits owed before a bare credit update is sent")	\
	X(rdv_threshold, RDV_THRESHOLD, 4096, 0, 4096,			\
	  "largest payload sent inline (copied); larger ones go by "	\
	  "rendezvous")							\
	X(drr_quantum, DRR_QUANTUM, 65536, 512, 16777216,		\
	  "bytes a process may send per round on a shared connection")	\
	X(piece_kb, PIECE_KB, 256, 0, 16384,				\
	  "rendezvous transfers larger than this are posted in pieces "	\
	  "of this many KiB, so that messages queued meanwhile pass "	\
	  "between them (0: all at once)")				\
	X(connect_timeout_ms, CONNECT_TIMEOUT_MS, 10000, 1000, 120000,	\
	  "a connection attempt fails after this long")			\
	X(ack_timeout, ACK_TIMEOUT, 17, 8, 24,				\
	  "RC ACK timeout of new connections, 4.096 us * 2^N (17: 0.54 s)") \
	X(recover_ms, RECOVER_MS, 15000, 0, 600000,			\
	  "operations in doubt after a connection failure wait this "	\
	  "long for a new connection to the peer (0: fail them at "	\
	  "once)")							\
	X(proof_ms, PROOF_MS, 3000, 1000, 30000,			\
	  "a challenge's cookie is good this long, and an accepted "	\
	  "connection waits this long for its initiator's READY")	\
	X(secret_overlap_ms, SECRET_OVERLAP_MS, 600000, 0, 86400000,	\
	  "after a new cluster secret is set, the one before is still "	\
	  "accepted this long (a rolling change)")			\
	X(remote_peers_max, REMOTE_PEERS_MAX, 256, 1, 960,		\
	  "peers that hosts connecting to this one may add to the peer "	\
	  "table; the other entries stay for local users")		\
	X(refuse_ms, REFUSE_MS, 1000, 0, 600000,			\
	  "a peer's connect requests are refused this long after a "	\
	  "protocol violation, twice as long after each further one, "	\
	  "up to 64 times (0: not at all)")				\
	X(peer_linger_ms, PEER_LINGER_MS, 60000, 0, 3600000,		\
	  "a peer nothing holds stays in the table this long, keeping "	\
	  "its replay record (no shorter than the peers' recover_ms)")	\
	X(user_ops_max, USER_OPS_MAX, 65536, 16, 1048576,		\
	  "operations (and posted RECVs) one user's files may have in flight") \
	X(user_peers_max, USER_PEERS_MAX, 256, 1, 1024,			\
	  "peers one user's files may hold")				\
	X(user_services_max, USER_SERVICES_MAX, 256, 1, 65536,		\
	  "services one user's files may bind")				\
	X(op_timeout_ms, OP_TIMEOUT_MS, 60000, 0, 3600000,		\
	  "deadline of a push, pull or reply whose submission gives "	\
	  "none (0: none)")						\
	X(region_cap_mb, REGION_CAP_MB, 0, 0, 16777216,			\
	  "cap on all regions together, MiB (0: a quarter of the "	\
	  "machine's memory)")						\
	X(op_timeout_max_ms, OP_TIMEOUT_MAX_MS, 300000, 1000, 3600000,	\
	  "the longest deadline an operation of a file opened without "	\
	  "CAP_NET_ADMIN may have; such an operation always has one")	\
	X(user_wnd_pct, USER_WND_PCT, 50, 1, 100,			\
	  "the share, in percent, of each window (a connection's or the " \
	  "host's) one user's operations may hold while another user "	\
	  "has bx open")					\
	X(qps_per_peer, QPS_PER_PEER, 1, 1, 8,				\
	  "connections (RC QPs, lanes) to each peer host, for connections " \
	  "made after it is set; also the most a peer may make to this " \
	  "host")

#define BX_TUNABLE_EXTERN(name, ATTR, def, min, max, desc)		\
	extern unsigned int bx_##name;
BX_TUNABLES(BX_TUNABLE_EXTERN)
#undef BX_TUNABLE_EXTERN

/* Each tunable's maximum, BX_TUNABLE_MAX_<ATTR>, for static_assert(). */
#define BX_TUNABLE_MAX(name, ATTR, def, min, max, desc)			\
	BX_TUNABLE_MAX_##ATTR = (max),
enum { BX_TUNABLES(BX_TUNABLE_MAX) };
#undef BX_TUNABLE_MAX

extern unsigned int *const bx_params_by_attr[];

/* The rdma_cm port: a load-time parameter, not a runtime tunable. */
#define BX_PORT_DEFAULT	7471
extern unsigned int bx_port;

/* Not a number: on, or off for benchmarks (a u8 in netlink). */
extern bool bx_flow_control;

#endif /* _BX_PARAMS_H */
