// SPDX-License-Identifier: GPL-2.0
/*
 * bx_hostile: a hostile bx peer, for bx's remote-access selftests
 * (hostile.sh). It speaks bx's wire protocol (kmod/wire.h, linked from
 * kmod/wire.c) over rdma_cm and libibverbs, answers a real bx host's
 * operations the way bx_pp serve would, and misuses the rendezvous
 * descriptors (rkey, addr, len) it is given.
 *
 *   bx_hostile serve   [-p PORT] [-K FILE [-W]] [-A ATTACK] [-k FIRST]
 *                      [-e EVERY] [-n MAX] [-r REQS] [-t SECS] [-l LOG]
 *                      [-R HOST:PORT] [-S STRIDE] [-v]
 *   bx_hostile connect -a ADDR [-p PORT] [-K FILE | -J FILE] [-N] [-W]
 *                      [-b SRC] [-t SECS] [-X TCPPORT] [-v]
 *   bx_hostile flood   -a ADDR -F SRC,... [-q RATE] [-t SECS] [-B]
 *
 * serve: listen on 0.0.0.0:PORT (default 7471, bx's: unload bx first)
 * and accept bx connections. A PULL_REQ's inline payload is bx_pp's
 * struct pp_req {magic, size, seed}: the response is fill(size, seed),
 * RDMA-written into a keyed sink and announced with PULL_WRITTEN, or
 * sent inline (PULL_RESP) to a keyless one. A PUSH_RDV source is RDMA
 * READ and checked like bx_pp serve checks pushes, then PUSH_DONE; an
 * inline PUSH is checked and answered PUSH_DONE. Options:
 *
 *   -A ATTACK  stale | near | range | relay (default: none)
 *   -k FIRST   first keyed request attacked (1-based, counted across
 *              reconnects; default 1, stale 2)
 *   -e EVERY   then every EVERY-th keyed request (default 1)
 *   -n MAX     at most MAX attacks (default 32)
 *   -r REQS    exit after answering REQS requests (default: no limit)
 *   -t SECS    exit after SECS seconds (default: at SIGTERM/SIGINT)
 *   -l LOG     append every keyed descriptor received (a keyless pull
 *              sink grants nothing) to LOG, one a line:
 *              "RKEY ADDR LEN pull|push CONN REQ" (hex, hex, decimal)
 *   -R H:P     relay: the executor (connect -X) on TCP H:P
 *   -S STRIDE  near: rkey + d * STRIDE (default 1)
 *   -K FILE    the cluster secret (32 bytes): demand the initiator's
 *              proof; -W signs the accept with a wrong key instead
 *   -J FILE    pair keys instead ("ADDR KID KEY" lines, bxctl keys)
 *   -Y         a rogue acceptor: accept every request at once, no
 *              challenge and no proof checked, a made-up proof in the
 *              accept unless it holds the pair's key
 *   -P N       then, before the initiator's READY, send it N numbered
 *              pushes and N pull requests for service -s (default 7)
 *   -Z         an accept that names epoch 0
 *
 * Before answering an attacked request it posts one RDMA work request
 * of its own on the same QP, waits for its completion and prints it;
 * only if the QP survived does it answer. An attack against a pull sink
 * WRITEs (64 bytes at most, a marker), one against a push source READs:
 *
 *   stale  the first segment of the previous answered keyed request
 *          (with -q 1 at the victim, that operation has completed)
 *   near   this request's addr with rkey + d * STRIDE, d taking
 *          +1..+16 then -1..-16, one per attack
 *   range  this request's rkey at addr - 4096 (64 bytes), addr + len
 *          (1), addr + len - 1 (2) and addr - 1 (1), one per attack
 *   relay  the descriptor goes to the executor (-R), which tries it on
 *          its own connection to the victim; then this server answers
 *          with its own WRITE/READ: the positive control
 *
 * A failed attack leaves the QP in error: the connection is closed
 * (disconnect, then destroyed at DISCONNECTED or after 3 s) and the
 * server waits for the victim to connect again; its operation comes
 * again as a new request.
 *
 * Requests are answered as bx answers them (wire.h, "Connection
 * handshake"): a first one with a challenge, the answer checked (its
 * cookie; its proof with -K or -J), then READY awaited.
 *
 * connect: connect to the bx host ADDR as initiator as bx does (a first
 * request, then the answer to its challenge), with the secret (-K) or
 * pair keys (-J), without offering the proof (-N), or with a wrong key
 * under the right name (-W: the accept's MAC is then not held against
 * the acceptor, so that the victim's reaction to a wrong proof shows),
 * from address SRC (-b: one of our netdev's), hold the connection for
 * -t SECS (default 3) and print its outcome. -X TCPPORT instead makes
 * it the relay executor: it stays connected (reconnecting when its QP
 * dies, for up to 30 s per descriptor), takes descriptors on TCPPORT
 * ("W|R ADDR RKEY LEN\n"), posts the RDMA WRITE/READ against the
 * victim on its own QP and answers "ok", "fail STATUS" or "noconn
 * REASON"; it runs for -t SECS (default 600) or until SIGTERM.
 *
 * flood: connect requests at ADDR from the addresses SRC,... in turn,
 * RATE a second (default 200) for SECS (default 30), each silent after
 * its request (no QP behind it); with -B each challenge is answered with
 * a made-up proof. Prints a summary.
 *
 * Result lines, all starting "bx_hostile: " (hostile.sh greps them):
 *
 *   listening port P
 *   conn N up peer ADDR credits C msg_size M auth yes|no lane L
 *          (L: the lane the request asked for; the accept says lane 0
 *          whatever it is, as a bx that predates lanes: lanes.sh)
 *   conn N down peer ADDR: REASON
 *   accept auth-ok|auth-fail|rejected|challenged|ready peer ADDR [REASON]
 *   sprayed N peer ADDR
 *   attack NAME ok; req K conn N op write|read rkey R addr A len L [d D]
 *   attack NAME fail STATUS; req K ... (STATUS: ibv_wc_status_str(), or
 *          "timeout", "noconn REASON" for relay)
 *   control ok|fail STATUS; req K   (relay: our own answer afterwards)
 *   answer fail STATUS; req K        (our answer's WRITE/READ failed)
 *   summary conns N requests N answered N pulls N pushes N push_bad N
 *           attacks N attack_ok N attack_fail N controls_ok N
 *           controls_fail N answer_fail N
 *   connect accepted|rejected|disconnected|auth-mismatch|error peer ADDR
 *           ...   (connect; one per attempt)
 *   relayed write|read ok|fail STATUS; addr A rkey R len L   (executor)
 *   summary relayed N ok N fail N noconn N connects N    (executor)
 *   summary flood requests N challenges N rejects N accepts N proofs N
 *           timeouts N errors N                          (flood)
 *
 * Exit status: 0 when it ran to the end (whatever the attacks did), 2
 * on a usage or local setup error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "auth.h"
#include "wire.h"
#include "pp_payload.h"

#define H_PORT		7471
#define H_RX		32		/* our receive buffers: peer's credits */
#define H_TX		64		/* send slots */
#define H_MSG		8192		/* bytes per buffer */
#define H_DATA		BX_WIRE_XFER_MAX	/* response / push buffer */
#define H_ATK		4096		/* attack buffer */
#define H_ATK_LEN	64		/* bytes an attack moves at most */
#define H_CONNS		8
#define H_NPEND		(H_RX + 1)
#define H_CREDIT_AT	8		/* owe this many: a bare CREDIT */
#define H_ACK_TIMEOUT	17		/* as bx: 4.096 us * 2^17 = 0.54 s */
#define H_CLOSE_MS	3000
#define H_RDMA_MS	30000		/* an RDMA op: retries run out sooner */
#define H_RELAY_MS	60000		/* the executor's answer */
#define H_RECONNECT_MS	30000

enum { M_SERVE, M_CONNECT, M_FLOOD };
enum { A_NONE, A_STALE, A_NEAR, A_RANGE, A_RELAY };
static const char *const attack_name[] = {
	[A_NONE] = "none", [A_STALE] = "stale", [A_NEAR] = "near",
	[A_RANGE] = "range", [A_RELAY] = "relay",
};

static struct {
	int		mode;
	const char	*addr;
	int		port;
	const char	*keyfile, *pairfile, *bind_addr, *spray_addrs;
	bool		no_auth, wrong_key, verbose, yes, zero_epoch;
	bool		bad_proofs;
	int		spray, spray_svc, rate;
	int		attack, first, every, max_attacks;
	long		max_answered;
	int		secs;
	const char	*logfile;
	const char	*relay;
	long		stride;
	int		xport;
} o = { .port = H_PORT, .every = 1, .max_attacks = 32, .stride = 1,
	.spray_svc = 7, .rate = 200 };

static volatile sig_atomic_t stop;
/* -K: the cluster secret (-W: every byte changed); -J: pair keys. */
static uint8_t key[BX_AUTH_KEY_LEN];
static struct { uint8_t addr[16], kid[4], key[32]; } pairs[64];
static int npairs;
/* The serving side's cookie key: random, its own. */
static uint8_t ckey[BX_AUTH_KEY_LEN];
static uint64_t epoch;
static FILE *desc_log;

/* Shared verbs state: one device (rxe0), one PD, the data buffers. */
static struct ibv_context *g_ctx;
static struct ibv_pd *g_pd;
static uint8_t *g_data;
static struct ibv_mr *g_data_mr;
static uint8_t *g_atk;
static struct ibv_mr *g_atk_mr;
static struct rdma_event_channel *g_ch;

static struct {
	long conns, requests, answered, pulls, pushes, push_bad;
	long attacks, attack_ok, attack_fail, controls_ok, controls_fail;
	long answer_fail, keyed;
	long relayed, relay_ok, relay_fail, relay_noconn, connects;
	long challenged, sprayed;
	long flood_reqs, flood_challenges, flood_rejects, flood_accepts;
	long flood_proofs, flood_timeouts, flood_errors;
} st;

/* ---- small helpers ------------------------------------------------------ */

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;

	fputs("bx_hostile: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	fputs("bx_hostile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void rand_bytes(void *p, size_t n)
{
	uint8_t *b = p;
	size_t got = 0;

	while (got < n) {
		ssize_t r = getrandom(b + got, n - got, 0);

		if (r <= 0) {
			/* No entropy source at all: never, with virtio-rng. */
			struct timeval tv;

			gettimeofday(&tv, NULL);
			for (; got < n; got++)
				b[got] = (uint8_t)(tv.tv_usec * 131 + got * 7 +
						   getpid());
			return;
		}
		got += (size_t)r;
	}
}


/* An address as the handshake proofs take it: IPv4 v4-mapped in IPv6. */
static void addr16(const struct sockaddr *sa, uint8_t out16[16])
{
	memset(out16, 0, 16);
	if (sa->sa_family == AF_INET) {
		out16[10] = 0xff;
		out16[11] = 0xff;
		memcpy(out16 + 12,
		       &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(out16, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
	}
}

static const char *addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *a = sa->sa_family == AF_INET6 ?
		(const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr :
		(const void *)&((const struct sockaddr_in *)sa)->sin_addr;

	if (!inet_ntop(sa->sa_family, a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

static bool auth_on(void)
{
	return (o.keyfile || o.pairfile) && !o.no_auth;
}

static uint8_t key_kid[BX_WIRE_KID_LEN];

/*
 * The key of the pair (@self, @peer) under kid @kid, as this host holds
 * it: a -J pair key for @peer, else derived from the -K secret. False if
 * neither.
 */
static bool pair_key(const uint8_t kid[4], const uint8_t self[16],
		     const uint8_t peer[16], uint8_t out[32])
{
	for (int i = 0; i < npairs; i++)
		if (!memcmp(pairs[i].addr, peer, 16) &&
		    !memcmp(pairs[i].kid, kid, 4)) {
			memcpy(out, pairs[i].key, 32);
			return true;
		}
	if (!o.keyfile || memcmp(kid, key_kid, 4))
		return false;
	bx_auth_pair_key(key, self, peer, out);
	return true;
}

/* The kids this host can prove towards @peer: 0 or 1 (-J first). */
static int my_kid(const uint8_t peer[16], uint8_t kid[4])
{
	for (int i = 0; i < npairs; i++)
		if (!memcmp(pairs[i].addr, peer, 16)) {
			memcpy(kid, pairs[i].kid, 4);
			return 1;
		}
	if (!o.keyfile)
		return 0;
	memcpy(kid, key_kid, 4);
	return 1;
}

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/* ---- connections -------------------------------------------------------- */

enum cstate { C_FREE, C_UP, C_CLOSING };

#define WR_RECV		(1ULL << 56)
#define WR_SEND		(2ULL << 56)
#define WR_RDMA		(3ULL << 56)
#define WR_KIND(x)	((x) & (0xffULL << 56))
#define WR_IDX(x)	((x) & ((1ULL << 56) - 1))

struct pend {
	int		idx;
	struct bx_msg	msg;
};

struct conn {
	enum cstate		state;
	long			serial;
	struct rdma_cm_id	*id;
	struct ibv_comp_channel	*ch;
	struct ibv_cq		*cq;
	struct ibv_mr		*rx_mr, *tx_mr;
	uint8_t			*rx, *tx;
	int			tx_free[H_TX];
	int			ntx_free;
	uint32_t		credits;	/* peer's buffers we may fill */
	uint32_t		peer_max;
	uint32_t		peer_msg;
	uint32_t		grant;		/* reposted, not yet granted */
	struct pend		pend[H_NPEND];
	unsigned int		phead, ptail;
	uint64_t		rdma_seq;
	bool			qp_err;		/* the QP is unusable */
	bool			established;
	bool			peer_closed;
	bool			ready_wait;	/* acceptor: READY comes first */
	int64_t			close_at;
	char			peer[64];
	struct bx_wire_req	req_wire;	/* the connect request as sent */
};

static struct conn conns[H_CONNS];

static bool usable(const struct conn *c)
{
	return c->state == C_UP && !c->qp_err;
}

static int setup_verbs(struct ibv_context *ctx)
{
	if (g_ctx)
		return g_ctx == ctx ? 0 : -1;
	g_pd = ibv_alloc_pd(ctx);
	if (!g_pd)
		return -1;
	if (posix_memalign((void **)&g_data, 4096, H_DATA) ||
	    posix_memalign((void **)&g_atk, 4096, H_ATK))
		return -1;
	memset(g_data, 0, H_DATA);
	for (int i = 0; i < H_ATK; i++)
		g_atk[i] = "BXHOSTILE!"[i % 10];
	g_data_mr = ibv_reg_mr(g_pd, g_data, H_DATA, IBV_ACCESS_LOCAL_WRITE);
	g_atk_mr = ibv_reg_mr(g_pd, g_atk, H_ATK, IBV_ACCESS_LOCAL_WRITE);
	if (!g_data_mr || !g_atk_mr)
		return -1;
	g_ctx = ctx;
	return 0;
}

static int post_recv(struct conn *c, int i)
{
	struct ibv_sge sge = {
		.addr	= (uintptr_t)(c->rx + (size_t)i * H_MSG),
		.length	= H_MSG,
		.lkey	= c->rx_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id		= WR_RECV | (uint64_t)i,
		.sg_list	= &sge,
		.num_sge	= 1,
	}, *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

static void set_ack_timeout(struct rdma_cm_id *id)
{
	uint8_t t = H_ACK_TIMEOUT;

	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &t, sizeof(t)))
		note("ack timeout: %s", strerror(errno));
}

static struct conn *conn_alloc(struct rdma_cm_id *id)
{
	for (int i = 0; i < H_CONNS; i++) {
		struct conn *c = &conns[i];

		if (c->state != C_FREE)
			continue;
		memset(c, 0, sizeof(*c));
		c->id = id;
		c->serial = ++st.conns;
		id->context = c;
		addr_str(rdma_get_peer_addr(id), c->peer, sizeof(c->peer));
		return c;
	}
	return NULL;
}

/* CQ, QP and buffers of @c on its id's device; receives posted. */
static int conn_setup(struct conn *c)
{
	struct ibv_context *ctx = c->id->verbs;
	struct ibv_qp_init_attr a = {
		.qp_type	= IBV_QPT_RC,
		.cap		= {
			.max_send_wr	= H_TX + 16,
			.max_recv_wr	= H_RX + 1,
			.max_send_sge	= 1,
			.max_recv_sge	= 1,
		},
	};

	if (setup_verbs(ctx)) {
		note("verbs setup failed (a second device?)");
		return -1;
	}
	c->ch = ibv_create_comp_channel(ctx);
	if (!c->ch)
		return -1;
	fcntl(c->ch->fd, F_SETFL, fcntl(c->ch->fd, F_GETFL) | O_NONBLOCK);
	c->cq = ibv_create_cq(ctx, H_RX + H_TX + 32, c, c->ch, 0);
	if (!c->cq || ibv_req_notify_cq(c->cq, 0))
		return -1;
	a.send_cq = c->cq;
	a.recv_cq = c->cq;
	if (rdma_create_qp(c->id, g_pd, &a))
		return -1;
	if (posix_memalign((void **)&c->rx, 4096, (size_t)H_RX * H_MSG) ||
	    posix_memalign((void **)&c->tx, 4096, (size_t)H_TX * H_MSG))
		return -1;
	c->rx_mr = ibv_reg_mr(g_pd, c->rx, (size_t)H_RX * H_MSG,
			      IBV_ACCESS_LOCAL_WRITE);
	c->tx_mr = ibv_reg_mr(g_pd, c->tx, (size_t)H_TX * H_MSG, 0);
	if (!c->rx_mr || !c->tx_mr)
		return -1;
	for (int i = 0; i < H_TX; i++)
		c->tx_free[i] = i;
	c->ntx_free = H_TX;
	for (int i = 0; i < H_RX; i++)
		if (post_recv(c, i))
			return -1;
	return 0;
}

/*
 * Free everything of @c, the cm_id last (its events all acked) unless
 * @keep_id (the caller destroys it after acking the event in hand).
 */
static void conn_free(struct conn *c, bool keep_id)
{
	if (c->state == C_FREE && !c->id)
		return;
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	if (c->rx_mr)
		ibv_dereg_mr(c->rx_mr);
	if (c->tx_mr)
		ibv_dereg_mr(c->tx_mr);
	free(c->rx);
	free(c->tx);
	if (c->id && !keep_id)
		rdma_destroy_id(c->id);
	memset(c, 0, sizeof(*c));
	c->state = C_FREE;
}

static void conn_destroy(struct conn *c)
{
	conn_free(c, false);
}

/* Start closing @c: disconnect; destroyed at DISCONNECTED or later. */
static void conn_close(struct conn *c, const char *why)
{
	if (c->state != C_UP)
		return;
	out("conn %ld down peer %s: %s", c->serial, c->peer, why);
	c->state = C_CLOSING;
	c->close_at = now_ms() + H_CLOSE_MS;
	if (!c->peer_closed)
		rdma_disconnect(c->id);
	else
		c->close_at = now_ms();
}

static void protocol_error(struct conn *c, const char *what)
{
	note("conn %ld: protocol error: %s", c->serial, what);
	c->qp_err = true;
}

static void handle_wc(struct conn *c, const struct ibv_wc *wc, uint64_t want,
		      int *got)
{
	uint64_t idx = WR_IDX(wc->wr_id);
	struct pend *p;

	switch (WR_KIND(wc->wr_id)) {
	case WR_RECV:
		if (wc->status != IBV_WC_SUCCESS) {
			if (wc->status != IBV_WC_WR_FLUSH_ERR && o.verbose)
				note("conn %ld: receive: %s", c->serial,
				      ibv_wc_status_str(wc->status));
			c->qp_err = true;
			break;
		}
		p = &c->pend[c->ptail % H_NPEND];
		if (bx_wire_parse(c->rx + idx * H_MSG, wc->byte_len,
				  BX_WIRE_INLINE_MAX, &p->msg)) {
			protocol_error(c, "malformed message");
			break;
		}
		if (p->msg.credits > c->peer_max - c->credits) {
			protocol_error(c, "peer granted too many credits");
			break;
		}
		c->credits += p->msg.credits;
		p->idx = (int)idx;
		c->ptail++;
		break;
	case WR_SEND:
		c->tx_free[c->ntx_free++] = (int)idx;
		if (wc->status != IBV_WC_SUCCESS) {
			if (wc->status != IBV_WC_WR_FLUSH_ERR)
				note("conn %ld: send: %s", c->serial,
				      ibv_wc_status_str(wc->status));
			c->qp_err = true;
		}
		break;
	case WR_RDMA:
		if (want && wc->wr_id == want)
			*got = wc->status;
		else if (wc->status != IBV_WC_SUCCESS)
			c->qp_err = true;
		break;
	}
}

/*
 * Handle @c's completions until WR @want completes (returns its status)
 * or @ms pass (-1). With @want 0: return as soon as something was
 * handled and nothing more is there, or after @ms (0).
 */
static int wait_wc(struct conn *c, uint64_t want, int ms)
{
	int64_t end = now_ms() + ms;
	bool any = false;
	int got = -1;

	for (;;) {
		struct ibv_wc wc[16];
		struct pollfd pfd;
		int n, left;

		n = ibv_poll_cq(c->cq, 16, wc);
		if (n < 0) {
			c->qp_err = true;
			return -1;
		}
		for (int i = 0; i < n; i++)
			handle_wc(c, &wc[i], want, &got);
		if (want && got >= 0)
			return got;
		if (n > 0) {
			any = true;
			continue;
		}
		if (ibv_req_notify_cq(c->cq, 0)) {
			c->qp_err = true;
			return -1;
		}
		n = ibv_poll_cq(c->cq, 16, wc);
		for (int i = 0; i < n; i++)
			handle_wc(c, &wc[i], want, &got);
		if (want && got >= 0)
			return got;
		if (n > 0) {
			any = true;
			continue;
		}
		if (!want && any)
			return 0;
		left = (int)(end - now_ms());
		if (left <= 0 || (stop && !want))
			return want ? -1 : 0;
		pfd.fd = c->ch->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, left) > 0) {
			struct ibv_cq *cq;
			void *ctx;

			if (!ibv_get_cq_event(c->ch, &cq, &ctx))
				ibv_ack_cq_events(cq, 1);
		}
	}
}

/*
 * Send @m on @c with the grant we owe. A data message never takes the
 * peer's last credit; a bare CREDIT may (flow.h).
 */
static int send_msg(struct conn *c, struct bx_msg *m)
{
	uint32_t need = m->type == BX_MSG_CREDIT ? 1 : 2;
	int64_t end = now_ms() + 10000;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge;
	size_t n;
	int slot;

	while (usable(c) && (!c->ntx_free || c->credits < need)) {
		if (now_ms() > end) {
			note("conn %ld: no send credit from the peer",
			      c->serial);
			return -1;
		}
		wait_wc(c, 0, 100);
	}
	if (!usable(c))
		return -1;
	slot = c->tx_free[--c->ntx_free];
	m->credits = c->grant > 0xffff ? 0xffff : (uint16_t)c->grant;
	n = bx_wire_build(c->tx + (size_t)slot * H_MSG, H_MSG, m);
	if (!n || n > c->peer_msg) {
		c->tx_free[c->ntx_free++] = slot;
		note("conn %ld: message type %u does not fit", c->serial,
		      m->type);
		return -1;
	}
	sge.addr = (uintptr_t)(c->tx + (size_t)slot * H_MSG);
	sge.length = (uint32_t)n;
	sge.lkey = c->tx_mr->lkey;
	wr.wr_id = WR_SEND | (uint64_t)slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(c->id->qp, &wr, &bad)) {
		c->tx_free[c->ntx_free++] = slot;
		c->qp_err = true;
		return -1;
	}
	c->grant -= m->credits;
	c->credits--;
	return 0;
}

/*
 * One RDMA WRITE (from @local) or READ (into @local) of @len bytes at
 * (@raddr, @rkey) on @c's QP; waits for it. Returns the work
 * completion's status, or -1 if none came in @ms.
 */
static int rdma_op(struct conn *c, bool write, uint64_t raddr, uint32_t rkey,
		   void *local, uint32_t lkey, uint32_t len, int ms)
{
	struct ibv_sge sge = {
		.addr	= (uintptr_t)local,
		.length	= len,
		.lkey	= lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id		= WR_RDMA | ++c->rdma_seq,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.send_flags	= IBV_SEND_SIGNALED,
		.wr.rdma	= { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	int ret;

	if (!usable(c))
		return -1;
	if (ibv_post_send(c->id->qp, &wr, &bad)) {
		c->qp_err = true;
		return -1;
	}
	ret = wait_wc(c, wr.wr_id, ms);
	if (ret != IBV_WC_SUCCESS)
		c->qp_err = true;
	return ret;
}

static const char *wc_str(int status)
{
	return status < 0 ? "timeout" :
	       ibv_wc_status_str((enum ibv_wc_status)status);
}

/* ---- serve: answering ----------------------------------------------------- */

/* Move [0, @len) of g_data to or from the peer's segments. */
static int rdv_transfer(struct conn *c, const struct bx_msg *m, uint32_t len,
			bool write)
{
	uint64_t at = 0;

	while (at < len) {
		u8 i;
		u32 in, n;
		int ret;

		n = bx_wire_rdv_piece(m->rdv, m->nrdv, at, len - (uint32_t)at,
				      &i, &in);
		if (!n)
			return IBV_WC_LOC_LEN_ERR;
		ret = rdma_op(c, write, m->rdv[i].addr + in, m->rdv[i].rkey,
			      g_data + at, g_data_mr->lkey, n, H_RDMA_MS);
		if (ret != IBV_WC_SUCCESS)
			return ret;
		at += n;
	}
	return IBV_WC_SUCCESS;
}

/*
 * Answer request @m properly. Returns the status of our own RDMA
 * (IBV_WC_SUCCESS also for inline answers), -1 on a timeout, or -2 if
 * the response message could not be sent.
 */
static int answer(struct conn *c, const struct bx_msg *m)
{
	struct bx_msg r = { .req_id = m->req_id, .status = BX_ST_OK };
	int ret = IBV_WC_SUCCESS;

	if (m->type == BX_MSG_PULL_REQ) {
		bool keyed = m->rdv[0].rkey != 0;
		uint64_t cap = keyed ? m->rdv_total : m->rdv[0].len;
		struct pp_req rq;
		uint32_t size = 0;

		st.pulls++;
		if (m->len == sizeof(rq)) {
			memcpy(&rq, m->payload, sizeof(rq));
			if (rq.magic == PP_MAGIC && rq.size <= cap &&
			    rq.size <= H_DATA)
				size = rq.size;
			fill(g_data, size, rq.seed);
		}
		if (keyed) {
			ret = rdv_transfer(c, m, size, true);
			if (ret != IBV_WC_SUCCESS)
				return ret;
			r.type = BX_MSG_PULL_WRITTEN;
			r.len = size;
		} else {
			r.type = BX_MSG_PULL_RESP;
			r.len = size;
			r.payload = g_data;
		}
	} else if (m->type == BX_MSG_PUSH_RDV) {
		st.pushes++;
		if (m->len > H_DATA) {
			r.status = BX_ST_TOOBIG;
		} else {
			ret = rdv_transfer(c, m, m->len, false);
			if (ret != IBV_WC_SUCCESS)
				return ret;
			if (!check(g_data, m->len))
				st.push_bad++;
		}
		r.type = BX_MSG_PUSH_DONE;
	} else {
		st.pushes++;
		if (!check(m->payload, m->len))
			st.push_bad++;
		r.type = BX_MSG_PUSH_DONE;
	}
	if (send_msg(c, &r))
		return -2;
	st.answered++;
	return IBV_WC_SUCCESS;
}

/* ---- serve: attacks -------------------------------------------------------- */

struct target {
	uint64_t	addr;
	uint32_t	rkey;
	uint32_t	len;
	bool		write;
	bool		valid;
};

static struct target prev;	/* stale: the last answered keyed request */

static int near_d(long n)
{
	/* +1..+16, then -1..-16 */
	n %= 32;
	return n < 16 ? (int)n + 1 : -(int)(n - 15);
}

static int relay_fd = -1;

static int tcp_connect(const char *hostport, int ms)
{
	char host[128], *colon;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int64_t end = now_ms() + ms;

	snprintf(host, sizeof(host), "%s", hostport);
	colon = strrchr(host, ':');
	if (!colon)
		return -1;
	*colon = 0;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -1;
	while (!stop && now_ms() < end) {
		int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

		if (fd < 0)
			return -1;
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			return fd;
		}
		close(fd);
		usleep(200000);
	}
	return -1;
}

/* Read one line from @fd within @ms into @buf; its length or -1. */
static int read_line(int fd, char *buf, size_t len, int ms)
{
	int64_t end = now_ms() + ms;
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int left = (int)(end - now_ms());
		ssize_t r;

		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return -1;
		r = read(fd, buf + n, 1);
		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
	return (int)n;
}

/* Ask the executor to try @t; its answer in @res. */
static void relay_try(const struct target *t, char *res, size_t len)
{
	char line[160];

	for (int attempt = 0; attempt < 2; attempt++) {
		if (relay_fd < 0)
			relay_fd = tcp_connect(o.relay, 20000);
		if (relay_fd < 0) {
			snprintf(res, len, "noconn executor unreachable");
			return;
		}
		snprintf(line, sizeof(line), "%c 0x%llx 0x%x %u\n",
			 t->write ? 'W' : 'R', (unsigned long long)t->addr,
			 t->rkey, t->len);
		if (write(relay_fd, line, strlen(line)) ==
		    (ssize_t)strlen(line) &&
		    read_line(relay_fd, res, len, H_RELAY_MS) >= 0)
			return;
		close(relay_fd);
		relay_fd = -1;
	}
	snprintf(res, len, "noconn executor lost");
}

static void print_attack(const char *name, const char *result, long req,
			 const struct conn *c, const struct target *t,
			 const char *extra)
{
	out("attack %s %s; req %ld conn %ld op %s rkey 0x%x addr 0x%llx len %u%s",
	    name, result, req, c->serial, t->write ? "write" : "read",
	    t->rkey, (unsigned long long)t->addr, t->len, extra);
}

/*
 * The attack on keyed request @m (number @req). Returns false if @c's
 * QP did not survive it.
 */
static bool attack(struct conn *c, const struct bx_msg *m, long req)
{
	bool write = m->type == BX_MSG_PULL_REQ;
	const struct bx_rdv *r = &m->rdv[0];
	struct target t = { .write = write, .valid = true };
	char extra[64] = "", res[128];
	long n = st.attacks;
	int ret;

	switch (o.attack) {
	case A_STALE:
		t = prev;
		t.len = t.len < H_ATK_LEN ? t.len : H_ATK_LEN;
		break;
	case A_NEAR: {
		int d = near_d(n);

		t.addr = r->addr;
		t.rkey = (uint32_t)(r->rkey + (int64_t)d * o.stride);
		t.len = r->len < H_ATK_LEN ? r->len : H_ATK_LEN;
		snprintf(extra, sizeof(extra), " d %+d stride %ld", d,
			 o.stride);
		break;
	}
	case A_RANGE:
		t.rkey = r->rkey;
		switch (n % 4) {
		case 0:
			t.addr = r->addr - 4096;
			t.len = 64;
			snprintf(extra, sizeof(extra), " case below");
			break;
		case 1:
			t.addr = r->addr + r->len;
			t.len = 1;
			snprintf(extra, sizeof(extra), " case past-end");
			break;
		case 2:
			t.addr = r->addr + r->len - 1;
			t.len = 2;
			snprintf(extra, sizeof(extra), " case straddle-end");
			break;
		default:
			t.addr = r->addr - 1;
			t.len = 1;
			snprintf(extra, sizeof(extra), " case before-start");
			break;
		}
		break;
	case A_RELAY:
		t.addr = r->addr;
		t.rkey = r->rkey;
		t.len = r->len < H_ATK_LEN ? r->len : H_ATK_LEN;
		break;
	}
	st.attacks++;

	if (o.attack == A_RELAY) {
		relay_try(&t, res, sizeof(res));
		if (!strcmp(res, "ok")) {
			st.attack_ok++;
			print_attack("relay", "ok", req, c, &t, "");
		} else {
			st.attack_fail++;
			print_attack("relay",
				     !strncmp(res, "fail ", 5) ? res : "fail",
				     req, c, &t, "");
			if (strncmp(res, "fail ", 5))
				out("relay: executor said \"%s\"", res);
		}
		return true;
	}

	ret = rdma_op(c, t.write, t.addr, t.rkey, g_atk, g_atk_mr->lkey, t.len,
		      H_RDMA_MS);
	if (ret == IBV_WC_SUCCESS) {
		st.attack_ok++;
		print_attack(attack_name[o.attack], "ok", req, c, &t, extra);
		return true;
	}
	st.attack_fail++;
	snprintf(res, sizeof(res), "fail %s", wc_str(ret));
	print_attack(attack_name[o.attack], res, req, c, &t, extra);
	return false;
}

static bool attack_due(void)
{
	long k = st.keyed;

	if (o.attack == A_NONE || st.attacks >= o.max_attacks || k < o.first)
		return false;
	if ((k - o.first) % o.every)
		return false;
	return o.attack != A_STALE || prev.valid;
}

static void log_request(const struct conn *c, const struct bx_msg *m, long req)
{
	if (!desc_log)
		return;
	for (int i = 0; i < m->nrdv; i++)
		fprintf(desc_log, "0x%08x 0x%016llx %u %s %ld %ld\n",
			m->rdv[i].rkey, (unsigned long long)m->rdv[i].addr,
			m->rdv[i].len,
			m->type == BX_MSG_PULL_REQ ? "pull" : "push",
			c->serial, req);
}

static void handle_request(struct conn *c, const struct bx_msg *m)
{
	bool keyed = m->type == BX_MSG_PUSH_RDV ||
		     (m->type == BX_MSG_PULL_REQ && m->rdv[0].rkey);
	long req = ++st.requests;
	bool relayed = false;
	int ret;

	if (keyed) {
		st.keyed++;
		log_request(c, m, req);
	}
	if (o.verbose)
		out("req %ld conn %ld type %u len %u nrdv %u rkey 0x%x addr 0x%llx rlen %u",
		    req, c->serial, m->type, m->len, m->nrdv,
		    m->nrdv ? m->rdv[0].rkey : 0,
		    m->nrdv ? (unsigned long long)m->rdv[0].addr : 0ULL,
		    m->nrdv ? m->rdv[0].len : 0);
	if (keyed && attack_due()) {
		relayed = o.attack == A_RELAY;
		if (!attack(c, m, req)) {
			conn_close(c, "our QP died in the attack");
			return;
		}
	}
	ret = answer(c, m);
	if (relayed) {
		if (ret == IBV_WC_SUCCESS)
			st.controls_ok++;
		else
			st.controls_fail++;
		out("control %s%s; req %ld", ret == IBV_WC_SUCCESS ? "ok" :
		    "fail ", ret == IBV_WC_SUCCESS ? "" : wc_str(ret), req);
	}
	if (ret != IBV_WC_SUCCESS) {
		if (ret != -2) {
			st.answer_fail++;
			out("answer fail %s; req %ld", wc_str(ret), req);
		}
		conn_close(c, "answering failed");
		return;
	}
	if (keyed) {
		prev = (struct target){
			.addr	= m->rdv[0].addr,
			.rkey	= m->rdv[0].rkey,
			.len	= m->rdv[0].len,
			.write	= m->type == BX_MSG_PULL_REQ,
			.valid	= true,
		};
	}
}

static void handle_msg(struct conn *c, const struct bx_msg *m)
{
	if (c->ready_wait) {
		c->ready_wait = false;
		if (m->type != BX_MSG_READY) {
			out("accept auth-fail peer %s (first message not READY)",
			    c->peer);
			conn_close(c, "no READY");
			return;
		}
		out("accept ready peer %s", c->peer);
		return;
	}
	switch (m->type) {
	case BX_MSG_CREDIT:
		break;
	case BX_MSG_PULL_REQ:
	case BX_MSG_PUSH_RDV:
	case BX_MSG_PUSH:
		if (o.mode == M_SERVE) {
			handle_request(c, m);
			break;
		}
		/* The executor serves nothing: say so, as bx would. */
		{
			struct bx_msg r = {
				.type	= m->type == BX_MSG_PULL_REQ ?
					  BX_MSG_NACK : BX_MSG_PUSH_DONE,
				.req_id	= m->req_id,
				.status	= BX_ST_NOSVC,
			};

			send_msg(c, &r);
		}
		break;
	default:
		note("conn %ld: unexpected message type %u", c->serial,
		      m->type);
		break;
	}
}

/* Handle what @c received so far; repost each buffer once handled. */
static void process(struct conn *c)
{
	while (c->phead != c->ptail && usable(c)) {
		struct pend *p = &c->pend[c->phead % H_NPEND];
		struct bx_msg m = p->msg;
		int idx = p->idx;

		c->phead++;
		handle_msg(c, &m);
		if (!usable(c))
			break;
		if (post_recv(c, idx)) {
			c->qp_err = true;
			break;
		}
		c->grant++;
	}
	if (usable(c) && c->phead == c->ptail && c->grant >= H_CREDIT_AT) {
		struct bx_msg m = { .type = BX_MSG_CREDIT };

		send_msg(c, &m);
	}
}

/*
 * Handle everything @c has received, until nothing is left and its CQ
 * is armed again (wait_wc() arms it before it returns empty-handed).
 */
static void pump(struct conn *c)
{
	while (usable(c)) {
		wait_wc(c, 0, 0);
		if (c->phead == c->ptail)
			break;
		process(c);
	}
}

/* ---- serve: rdma_cm ------------------------------------------------------- */

/*
 * -P N: right after the accept, before the initiator's READY, N numbered
 * pushes and N pull requests to service -s on the initiator: what a
 * rogue acceptor would deliver to its bound services.
 */
static void spray(struct conn *c)
{
	static uint8_t payload[64];

	for (int i = 0; i < o.spray && usable(c); i++) {
		struct bx_msg push = {
			.type		= BX_MSG_PUSH,
			.service	= (uint32_t)o.spray_svc,
			.req_id		= 1000 + (uint64_t)i,
			.seq		= 1 + (uint64_t)i,
			.len		= sizeof(payload),
			.payload	= payload,
		}, req = {
			.type		= BX_MSG_PULL_REQ,
			.service	= (uint32_t)o.spray_svc,
			.req_id		= 2000 + (uint64_t)i,
			.nrdv		= 1,
			.rdv[0]		= { .len = 64 },
			.len		= sizeof(struct pp_req),
			.payload	= payload,
		};

		fill(payload, sizeof(payload), 0x5350524159ULL + (uint64_t)i);
		if (!send_msg(c, &push))
			st.sprayed++;
		if (!send_msg(c, &req))
			st.sprayed++;
	}
	out("sprayed %ld peer %s", st.sprayed, c->peer);
}

static void on_connect_request(struct rdma_cm_event *ev, bool *destroy)
{
	struct rdma_cm_id *id = ev->id;
	const void *pd = ev->param.conn.private_data;
	size_t pdlen = ev->param.conn.private_data_len;
	struct rdma_conn_param param = {};
	struct bx_wire_accept acc;
	struct ibv_device_attr da;
	struct bx_conn_params p, mine = {
		.credits	= H_RX,
		.msg_size	= H_MSG,
		.epoch		= epoch,
	};
	uint8_t ia[16], aa[16], pk[32], mac[BX_WIRE_MAC_LEN];
	char peer[64];
	struct conn *c;

	addr_str(rdma_get_peer_addr(id), peer, sizeof(peer));
	/* As the initiator sees them: it is the peer, we the local. */
	addr16(rdma_get_peer_addr(id), ia);
	addr16(rdma_get_local_addr(id), aa);
	if (bx_wire_req_parse(pd, pdlen, &p)) {
		out("accept rejected peer %s (bad handshake)", peer);
		rdma_reject(id, NULL, 0);
		*destroy = true;
		return;
	}
	/*
	 * A host that follows the protocol: a challenge first, and again
	 * for a cookie that is not ours (an earlier server's) or too old.
	 */
	if (!o.yes && (!(p.flags & BX_WIRE_REQ_F_COOKIE) ||
		       !bx_auth_cookie_ok(ckey, now_s(), 3, ia, aa, &p))) {
		struct bx_wire_challenge w;
		struct bx_wire_chal ch = {};

		bx_auth_cookie(ckey, now_s(), ia, aa, &p, ch.cookie);
		ch.nkid = (uint8_t)my_kid(ia, ch.kid[0]);
		bx_wire_challenge_build(&w, &ch);
		st.challenged++;
		out("accept challenged peer %s", peer);
		rdma_reject(id, &w, sizeof(w));
		*destroy = true;
		return;
	}
	/* -W: the proof is not checked (the accept's will be wrong). */
	if (!o.yes && !o.wrong_key && o.keyfile) {
		if (!(p.flags & BX_WIRE_REQ_F_PROOF)) {
			out("accept rejected peer %s (no proof offered)", peer);
			rdma_reject(id, NULL, 0);
			*destroy = true;
			return;
		}
		if (!pair_key(p.kid, aa, ia, pk)) {
			out("accept rejected peer %s (unknown kid)", peer);
			rdma_reject(id, NULL, 0);
			*destroy = true;
			return;
		}
		bx_auth_init_mac(pk, ia, aa, pd, mac);
		if (!bx_auth_mac_eq(mac, p.mac, sizeof(mac))) {
			out("accept auth-fail peer %s (wrong proof)", peer);
			rdma_reject(id, NULL, 0);
			*destroy = true;
			return;
		}
		out("accept auth-ok peer %s", peer);
	}
	c = conn_alloc(id);
	if (!c) {
		out("accept rejected peer %s (too many connections)", peer);
		rdma_reject(id, NULL, 0);
		*destroy = true;
		return;
	}
	c->state = C_UP;
	c->credits = p.credits;
	c->peer_max = p.credits;
	c->peer_msg = p.msg_size;
	memcpy(&c->req_wire, pd, sizeof(c->req_wire));
	set_ack_timeout(id);
	if (conn_setup(c)) {
		note("conn %ld: setup failed: %s", c->serial, strerror(errno));
		rdma_reject(id, NULL, 0);
		/* The caller destroys the id after the ack. */
		conn_free(c, true);
		*destroy = true;
		return;
	}
	if (o.zero_epoch)
		mine.epoch = 0;
	/* mine.lane stays 0: we know no lanes, as a bx before them. */
	mine.flags = p.flags & BX_WIRE_REQ_F_PROOF;
	bx_wire_accept_build(&acc, &mine);
	if (o.zero_epoch)
		acc.epoch = 0;	/* the builder would not, nor would bx */
	if (mine.flags) {
		/* -W or -Y without a key: a proof made up. */
		if (pair_key(p.kid, aa, ia, pk))
			bx_auth_acc_mac(pk, ia, aa, &c->req_wire, &acc,
					acc.mac);
		else
			rand_bytes(acc.mac, sizeof(acc.mac));
	}
	c->ready_wait = !o.yes;
	if (ibv_query_device(id->verbs, &da))
		memset(&da, 0, sizeof(da));
	param.private_data = &acc;
	param.private_data_len = sizeof(acc);
	param.responder_resources = (uint8_t)(da.max_qp_rd_atom < 16 ?
					      da.max_qp_rd_atom : 16);
	if (param.responder_resources > ev->param.conn.initiator_depth)
		param.responder_resources = ev->param.conn.initiator_depth;
	param.initiator_depth = (uint8_t)(da.max_qp_init_rd_atom < 16 ?
					  da.max_qp_init_rd_atom : 16);
	if (param.initiator_depth > ev->param.conn.responder_resources)
		param.initiator_depth = ev->param.conn.responder_resources;
	param.retry_count = 6;
	param.rnr_retry_count = 0;
	if (rdma_accept(id, &param)) {
		note("conn %ld: accept: %s", c->serial, strerror(errno));
		conn_free(c, true);
		*destroy = true;
		return;
	}
	out("conn %ld up peer %s credits %u msg_size %u auth %s lane %u",
	    c->serial, c->peer, p.credits, p.msg_size,
	    mine.flags ? "yes" : "no", p.lane);
	if (o.spray)
		spray(c);
}

/* One rdma_cm event of any of our ids (serve and connect). */
static void cm_event(struct rdma_cm_event *ev)
{
	struct conn *c = ev->id->context;
	struct rdma_cm_id *kill = NULL;
	bool destroy = false;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		on_connect_request(ev, &destroy);
		if (destroy)
			kill = ev->id;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c)
			c->established = true;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (!c)
			break;
		c->peer_closed = true;
		if (c->state == C_UP)
			conn_close(c, "disconnected by the peer");
		c->close_at = now_ms();
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (c && c->state == C_UP) {
			c->peer_closed = true;
			conn_close(c, rdma_event_str(ev->event));
		}
		if (c)
			c->close_at = now_ms();
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		note("device removed");
		stop = 1;
		break;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
	if (kill)
		rdma_destroy_id(kill);
}

static void cm_drain(void)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(g_ch, &ev))
		cm_event(ev);
}

/* Closing connections whose time came; broken ones start closing. */
static void conns_reap(void)
{
	for (int i = 0; i < H_CONNS; i++) {
		struct conn *c = &conns[i];

		if (c->state == C_UP && c->qp_err)
			conn_close(c, "QP error");
		if (c->state == C_CLOSING && now_ms() >= c->close_at)
			conn_destroy(c);
	}
}

static void close_all(void)
{
	int64_t end;
	bool left;

	for (int i = 0; i < H_CONNS; i++)
		if (conns[i].state == C_UP)
			conn_close(&conns[i], "exiting");
	end = now_ms() + 2000;
	do {
		struct pollfd pfd = { .fd = g_ch->fd, .events = POLLIN };

		poll(&pfd, 1, 100);
		cm_drain();
		left = false;
		for (int i = 0; i < H_CONNS; i++) {
			if (conns[i].state == C_CLOSING && conns[i].close_at <=
			    now_ms())
				conn_destroy(&conns[i]);
			left |= conns[i].state != C_FREE;
		}
	} while (left && now_ms() < end);
	for (int i = 0; i < H_CONNS; i++)
		conn_destroy(&conns[i]);
}

static int serve(void)
{
	struct sockaddr_in sa = {
		.sin_family	= AF_INET,
		.sin_port	= htons((uint16_t)o.port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int64_t end = o.secs ? now_ms() + (int64_t)o.secs * 1000 : 0;
	struct rdma_cm_id *lid;

	if (rdma_create_id(g_ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&sa) ||
	    rdma_listen(lid, 16)) {
		note("listen on port %d: %s (is bx still loaded?)", o.port,
		      strerror(errno));
		return 2;
	}
	out("listening port %d attack %s", o.port, attack_name[o.attack]);

	while (!stop && (!end || now_ms() < end) &&
	       (!o.max_answered || st.answered < o.max_answered)) {
		struct pollfd pfd[H_CONNS + 1];
		int n = 0;

		for (int i = 0; i < H_CONNS; i++) {
			struct conn *c = &conns[i];

			pump(c);
		}
		conns_reap();
		pfd[n].fd = g_ch->fd;
		pfd[n++].events = POLLIN;
		for (int i = 0; i < H_CONNS; i++) {
			if (!usable(&conns[i]))
				continue;
			pfd[n].fd = conns[i].ch->fd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, n, 200) > 0) {
			for (int i = 0; i < H_CONNS; i++) {
				struct ibv_cq *cq;
				void *ctx;

				if (usable(&conns[i]) &&
				    !ibv_get_cq_event(conns[i].ch, &cq, &ctx))
					ibv_ack_cq_events(cq, 1);
			}
		}
		cm_drain();
	}
	close_all();
	rdma_destroy_id(lid);
	if (relay_fd >= 0)
		close(relay_fd);
	out("summary conns %ld requests %ld answered %ld pulls %ld pushes %ld push_bad %ld attacks %ld attack_ok %ld attack_fail %ld controls_ok %ld controls_fail %ld answer_fail %ld",
	    st.conns, st.requests, st.answered, st.pulls, st.pushes,
	    st.push_bad, st.attacks, st.attack_ok, st.attack_fail,
	    st.controls_ok, st.controls_fail, st.answer_fail);
	return 0;
}

/* ---- connect ----------------------------------------------------------------- */

/* The next event of @id within @ms (others handled); NULL on a timeout. */
static struct rdma_cm_event *cm_wait(struct rdma_cm_id *id, int ms)
{
	int64_t end = now_ms() + ms;

	for (;;) {
		struct pollfd pfd = { .fd = g_ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;
		int left;

		while (!rdma_get_cm_event(g_ch, &ev)) {
			if (ev->id == id)
				return ev;
			cm_event(ev);
		}
		left = (int)(end - now_ms());
		if (left <= 0 || stop)
			return NULL;
		poll(&pfd, 1, left);
	}
}

enum outcome {
	O_ACCEPTED, O_REJECTED, O_DISCONNECTED, O_MISMATCH, O_ERROR,
	O_CHALLENGED,
};

static void settle(int ms);

/* The address to connect from (-b) or any. */
static struct sockaddr *src_addr(struct sockaddr_in *sa, const char *a)
{
	if (!a)
		return NULL;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (inet_pton(AF_INET, a, &sa->sin_addr) != 1) {
		note("bad address %s", a);
		exit(2);
	}
	return (struct sockaddr *)sa;
}

/*
 * Our request: a first one (@ch NULL), or the answer to challenge @ch
 * with its cookie and, with a key for the pair, our proof (-N: none;
 * -W: made with the wrong key).
 */
static void build_req(struct rdma_cm_id *id, const struct bx_wire_chal *ch,
		      struct bx_wire_req *w)
{
	struct bx_conn_params p = {
		.credits	= H_RX,
		.msg_size	= H_MSG,
		.epoch		= epoch,
	};
	uint8_t ia[16], aa[16], pk[32], kid[4];

	rand_bytes(p.nonce, sizeof(p.nonce));
	addr16(rdma_get_local_addr(id), ia);
	addr16(rdma_get_peer_addr(id), aa);
	if (ch) {
		p.flags = BX_WIRE_REQ_F_COOKIE;
		memcpy(p.cookie, ch->cookie, sizeof(p.cookie));
		if (auth_on() && my_kid(aa, kid)) {
			p.flags |= BX_WIRE_REQ_F_PROOF;
			memcpy(p.kid, kid, sizeof(kid));
		}
	}
	bx_wire_req_build(w, &p);
	if (!(p.flags & BX_WIRE_REQ_F_PROOF))
		return;
	if (pair_key(p.kid, ia, aa, pk))
		bx_auth_init_mac(pk, ia, aa, w, w->mac);
	else
		rand_bytes(w->mac, sizeof(w->mac));
}

/*
 * One attempt to connect to o.addr as initiator (answering challenge
 * @ch if not NULL), and hold the connection for @hold_ms watching for a
 * disconnect (0: do not hold). A challenge ends it with O_CHALLENGED and
 * the challenge in *@next. Prints the outcome otherwise; *@cp is the
 * connection if it is (still) up.
 */
static enum outcome connect_try(struct conn **cp, int hold_ms,
				const struct bx_wire_chal *ch,
				struct bx_wire_chal *next)
{
	struct sockaddr_in dst = {
		.sin_family	= AF_INET,
		.sin_port	= htons((uint16_t)o.port),
	}, src;
	struct rdma_conn_param param = {};
	struct ibv_device_attr da;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct bx_wire_accept acc = {};
	struct bx_conn_params p;
	uint8_t ia[16], aa[16], pk[32], mac[BX_WIRE_MAC_LEN];
	const char *auth = auth_on() ? "yes" : "no";
	struct conn *c = NULL;
	char why[96] = "";
	int64_t t0;
	int ret;

	*cp = NULL;
	if (inet_pton(AF_INET, o.addr, &dst.sin_addr) != 1) {
		note("bad address %s", o.addr);
		exit(2);
	}
	if (rdma_create_id(g_ch, &id, NULL, RDMA_PS_TCP)) {
		note("rdma_create_id: %s", strerror(errno));
		exit(2);
	}
	set_ack_timeout(id);
	if (rdma_resolve_addr(id, src_addr(&src, o.bind_addr),
			      (struct sockaddr *)&dst, 2000)) {
		snprintf(why, sizeof(why), "resolve_addr: %s", strerror(errno));
		goto err;
	}
	ev = cm_wait(id, 5000);
	ret = ev ? (int)ev->event : -1;
	if (ev)
		rdma_ack_cm_event(ev);
	if (ret != RDMA_CM_EVENT_ADDR_RESOLVED) {
		snprintf(why, sizeof(why), "address: %s",
			 ret < 0 ? "timeout" : rdma_event_str(ret));
		goto err;
	}
	if (rdma_resolve_route(id, 2000)) {
		snprintf(why, sizeof(why), "resolve_route: %s",
			 strerror(errno));
		goto err;
	}
	ev = cm_wait(id, 5000);
	ret = ev ? (int)ev->event : -1;
	if (ev)
		rdma_ack_cm_event(ev);
	if (ret != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		snprintf(why, sizeof(why), "route: %s",
			 ret < 0 ? "timeout" : rdma_event_str(ret));
		goto err;
	}
	c = conn_alloc(id);
	if (!c || conn_setup(c)) {
		note("connection setup failed: %s", strerror(errno));
		exit(2);
	}
	build_req(id, ch, &c->req_wire);
	if (ibv_query_device(id->verbs, &da))
		memset(&da, 0, sizeof(da));
	param.private_data = &c->req_wire;
	param.private_data_len = sizeof(c->req_wire);
	param.responder_resources = (uint8_t)(da.max_qp_rd_atom < 16 ?
					      da.max_qp_rd_atom : 16);
	param.initiator_depth = (uint8_t)(da.max_qp_init_rd_atom < 16 ?
					  da.max_qp_init_rd_atom : 16);
	param.retry_count = 6;
	param.rnr_retry_count = 0;
	if (rdma_connect(id, &param)) {
		snprintf(why, sizeof(why), "rdma_connect: %s", strerror(errno));
		goto err;
	}
	ev = cm_wait(id, 15000);
	if (!ev) {
		snprintf(why, sizeof(why), "no answer to the connect request");
		goto err;
	}
	if (ev->event == RDMA_CM_EVENT_REJECTED) {
		int status = ev->status;
		bool chal = !bx_wire_challenge_parse(ev->param.conn.private_data,
						     ev->param.conn.private_data_len,
						     next);

		rdma_ack_cm_event(ev);
		conn_destroy(c);
		if (chal && !ch)
			return O_CHALLENGED;
		out("connect rejected peer %s status %d auth %s%s", o.addr,
		    status, auth, chal ? " (challenged again)" : "");
		return O_REJECTED;
	}
	if (ev->event != RDMA_CM_EVENT_ESTABLISHED) {
		snprintf(why, sizeof(why), "%s (status %d)",
			 rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		goto err;
	}
	if (ev->param.conn.private_data)
		memcpy(&acc, ev->param.conn.private_data,
		       ev->param.conn.private_data_len < sizeof(acc) ?
		       ev->param.conn.private_data_len : sizeof(acc));
	ret = bx_wire_accept_parse(ev->param.conn.private_data,
				   ev->param.conn.private_data_len, &p);
	rdma_ack_cm_event(ev);
	if (ret) {
		snprintf(why, sizeof(why), "bad accept private data");
		goto err;
	}
	c->state = C_UP;
	c->established = true;
	c->credits = p.credits;
	c->peer_max = p.credits;
	c->peer_msg = p.msg_size;
	addr16(rdma_get_local_addr(id), ia);
	addr16(rdma_get_peer_addr(id), aa);
	if (c->req_wire.flags & BX_WIRE_REQ_F_PROOF) {
		if (!(p.flags & BX_WIRE_REQ_F_PROOF)) {
			out("connect auth-mismatch peer %s reason acceptor-no-auth",
			    o.addr);
			conn_close(c, "the acceptor did not prove the secret");
			return O_MISMATCH;
		}
		if (!pair_key(c->req_wire.kid, ia, aa, pk))
			memset(pk, 0, sizeof(pk));
		bx_auth_acc_mac(pk, ia, aa, &c->req_wire, &acc, mac);
		if (!bx_auth_mac_eq(mac, acc.mac, sizeof(mac))) {
			if (!o.wrong_key) {
				out("connect auth-mismatch peer %s reason bad-mac",
				    o.addr);
				conn_close(c, "the acceptor's proof is wrong");
				return O_MISMATCH;
			}
			if (o.verbose)
				out("accept mac does not verify with the wrong key (expected with -W)");
		}
	}
	{
		struct bx_msg m = { .type = BX_MSG_READY };

		if (send_msg(c, &m)) {
			snprintf(why, sizeof(why), "sending READY");
			goto err;
		}
	}
	if (o.verbose)
		out("established peer %s credits %u msg_size %u flags %u",
		    o.addr, p.credits, p.msg_size, p.flags);

	/* Hold it: a peer that refuses our proof disconnects meanwhile. */
	t0 = now_ms();
	while (usable(c) && now_ms() - t0 < hold_ms && !stop) {
		struct pollfd pfd[2] = {
			{ .fd = g_ch->fd, .events = POLLIN },
			{ .fd = c->ch->fd, .events = POLLIN },
		};

		pump(c);
		if (poll(pfd, 2, 100) > 0) {
			struct ibv_cq *cq;
			void *ctx;

			if (!ibv_get_cq_event(c->ch, &cq, &ctx))
				ibv_ack_cq_events(cq, 1);
		}
		cm_drain();
	}
	if (!usable(c)) {
		out("connect disconnected peer %s after %lld ms auth %s%s",
		    o.addr, (long long)(now_ms() - t0), auth,
		    o.wrong_key ? " key wrong" : "");
		conn_close(c, "lost");
		return O_DISCONNECTED;
	}
	out("connect accepted peer %s auth %s%s held %lld ms credits %u",
	    o.addr, auth, o.wrong_key ? " key wrong" : "",
	    (long long)(now_ms() - t0), p.credits);
	*cp = c;
	return O_ACCEPTED;

err:
	out("connect error peer %s: %s", o.addr, why);
	if (c) {
		conn_destroy(c);
	} else {
		rdma_destroy_id(id);
	}
	return O_ERROR;
}

/* Connect as bx does: a first request, then the answer to its challenge. */
static enum outcome connect_once(struct conn **cp, int hold_ms)
{
	struct bx_wire_chal ch;
	enum outcome r;

	st.connects++;
	r = connect_try(cp, hold_ms, NULL, &ch);
	if (r != O_CHALLENGED)
		return r;
	/* As bx does: a host with a key does not talk to one without. */
	if (auth_on() && !ch.nkid) {
		out("connect auth-mismatch peer %s reason acceptor-no-auth",
		    o.addr);
		return O_MISMATCH;
	}
	settle(200);
	return connect_try(cp, hold_ms, &ch, &ch);
}

/* Wait for closing connections to go (connect mode). */
static void settle(int ms)
{
	int64_t end = now_ms() + ms;

	for (;;) {
		bool left = false;

		cm_drain();
		conns_reap();
		for (int i = 0; i < H_CONNS; i++)
			left |= conns[i].state == C_CLOSING;
		if (!left || now_ms() >= end)
			return;
		usleep(50000);
	}
}

/* ---- the relay executor ---------------------------------------------------- */

static struct conn *relay_conn;
static int64_t relay_next_try;

static void relay_reconnect(int64_t until)
{
	while (!stop && (!relay_conn || !usable(relay_conn))) {
		if (relay_conn) {
			conn_close(relay_conn, "QP died");
			relay_conn = NULL;
			settle(H_CLOSE_MS);
		}
		if (connect_once(&relay_conn, 0) == O_ACCEPTED)
			return;
		relay_conn = NULL;
		settle(H_CLOSE_MS);
		if (now_ms() >= until)
			return;
		usleep(500000);
	}
}

/* One descriptor from the serving side: try it, answer on @fd. */
static void relay_line(int fd, const char *line)
{
	unsigned long long addr;
	unsigned int rkey, len;
	char op, res[128];
	int ret;

	if (sscanf(line, "%c %llx %x %u", &op, &addr, &rkey, &len) != 4 ||
	    (op != 'W' && op != 'R')) {
		snprintf(res, sizeof(res), "error bad request\n");
		goto reply;
	}
	st.relayed++;
	if (len > H_ATK)
		len = H_ATK;
	if (!relay_conn || !usable(relay_conn))
		relay_reconnect(now_ms() + H_RECONNECT_MS);
	if (!relay_conn || !usable(relay_conn)) {
		st.relay_noconn++;
		snprintf(res, sizeof(res), "noconn victim unreachable\n");
		out("relayed %s noconn; addr 0x%llx rkey 0x%x len %u",
		    op == 'W' ? "write" : "read", addr, rkey, len);
		goto reply;
	}
	ret = rdma_op(relay_conn, op == 'W', addr, rkey, g_atk,
		      g_atk_mr->lkey, len, H_RDMA_MS);
	if (ret == IBV_WC_SUCCESS) {
		st.relay_ok++;
		snprintf(res, sizeof(res), "ok\n");
	} else {
		st.relay_fail++;
		snprintf(res, sizeof(res), "fail %s\n", wc_str(ret));
	}
	out("relayed %s %s%s; addr 0x%llx rkey 0x%x len %u",
	    op == 'W' ? "write" : "read", ret == IBV_WC_SUCCESS ? "ok" :
	    "fail ", ret == IBV_WC_SUCCESS ? "" : wc_str(ret), addr, rkey, len);
	if (ret != IBV_WC_SUCCESS) {
		conn_close(relay_conn, "our QP died in the relayed attack");
		relay_conn = NULL;
		relay_next_try = now_ms() + 200;
	}
reply:
	if (write(fd, res, strlen(res)) < 0)
		note("relay reply: %s", strerror(errno));
}

static int relay_serve(void)
{
	struct sockaddr_in sa = {
		.sin_family	= AF_INET,
		.sin_port	= htons((uint16_t)o.xport),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int64_t end = now_ms() + (int64_t)(o.secs ? o.secs : 600) * 1000;
	int lfd, cfd = -1, one = 1;
	char buf[512];
	size_t blen = 0;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 4)) {
		note("relay: listen on %d: %s", o.xport, strerror(errno));
		return 2;
	}
	relay_reconnect(now_ms() + H_RECONNECT_MS);
	out("relay listening port %d", o.xport);

	while (!stop && now_ms() < end) {
		struct pollfd pfd[4];
		int n = 0, ci = -1, qi = -1;

		if (relay_conn)
			pump(relay_conn);
		conns_reap();
		if (relay_conn && relay_conn->state != C_UP)
			relay_conn = NULL;
		/* Up again before the next descriptor comes, if we can. */
		if (!relay_conn && now_ms() >= relay_next_try) {
			if (connect_once(&relay_conn, 0) != O_ACCEPTED) {
				relay_conn = NULL;
				relay_next_try = now_ms() + 1000;
			}
		}
		pfd[n].fd = lfd;
		pfd[n++].events = POLLIN;
		pfd[n].fd = g_ch->fd;
		pfd[n++].events = POLLIN;
		if (cfd >= 0) {
			ci = n;
			pfd[n].fd = cfd;
			pfd[n++].events = POLLIN;
		}
		if (relay_conn && usable(relay_conn)) {
			qi = n;
			pfd[n].fd = relay_conn->ch->fd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, n, 200) <= 0) {
			cm_drain();
			continue;
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);

			if (fd >= 0) {
				if (cfd >= 0)
					close(cfd);
				cfd = fd;
				blen = 0;
				setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one,
					   sizeof(one));
				continue;
			}
		}
		if (qi >= 0 && (pfd[qi].revents & POLLIN)) {
			struct ibv_cq *cq;
			void *ctx;

			if (!ibv_get_cq_event(relay_conn->ch, &cq, &ctx))
				ibv_ack_cq_events(cq, 1);
		}
		cm_drain();
		if (ci >= 0 && (pfd[ci].revents & (POLLIN | POLLHUP))) {
			ssize_t r = read(cfd, buf + blen, sizeof(buf) - 1 - blen);
			char *nl;

			if (r <= 0) {
				close(cfd);
				cfd = -1;
				continue;
			}
			blen += (size_t)r;
			buf[blen] = 0;
			while ((nl = strchr(buf, '\n'))) {
				*nl = 0;
				relay_line(cfd, buf);
				blen -= (size_t)(nl + 1 - buf);
				memmove(buf, nl + 1, blen + 1);
			}
			if (blen >= sizeof(buf) - 1)
				blen = 0;
		}
	}
	if (cfd >= 0)
		close(cfd);
	close(lfd);
	close_all();
	out("summary relayed %ld ok %ld fail %ld noconn %ld connects %ld",
	    st.relayed, st.relay_ok, st.relay_fail, st.relay_noconn,
	    st.connects);
	return 0;
}

static int do_connect(void)
{
	struct conn *c;

	if (o.xport)
		return relay_serve();
	connect_once(&c, (o.secs ? o.secs : 3) * 1000);
	close_all();
	return 0;
}

/* ---- flood ----------------------------------------------------------------- */

#define F_SLOTS		128
#define F_TIMEOUT_MS	5000

struct fslot {
	struct rdma_cm_id	*id;
	int64_t			born;
	int			src;
	bool			answer;	/* -B: this one answers a challenge */
	struct bx_wire_chal	ch;
};

static struct fslot fslots[F_SLOTS];
static char *fsrc[64];
static int nfsrc;

static void fslot_free(struct fslot *f)
{
	if (f->id)
		rdma_destroy_id(f->id);
	memset(f, 0, sizeof(*f));
}

/* Start a request from source @src (and @ch: its challenge's answer). */
static void fslot_start(struct fslot *f, int src, const struct bx_wire_chal *ch)
{
	struct sockaddr_in dst = {
		.sin_family	= AF_INET,
		.sin_port	= htons((uint16_t)o.port),
	}, sa;

	inet_pton(AF_INET, o.addr, &dst.sin_addr);
	memset(f, 0, sizeof(*f));
	f->src = src;
	f->born = now_ms();
	if (ch) {
		f->answer = true;
		f->ch = *ch;
	}
	if (rdma_create_id(g_ch, &f->id, f, RDMA_PS_TCP)) {
		st.flood_errors++;
		f->id = NULL;
		return;
	}
	if (rdma_resolve_addr(f->id, src_addr(&sa, fsrc[src]),
			      (struct sockaddr *)&dst, 2000)) {
		st.flood_errors++;
		fslot_free(f);
	}
}

/* A request without a QP: it names a made-up QP number. */
static void fslot_connect(struct fslot *f)
{
	struct rdma_conn_param param = { .retry_count = 6 };
	struct bx_wire_req w;
	uint32_t qpn;

	build_req(f->id, f->answer ? &f->ch : NULL, &w);
	if (f->answer) {
		/* -B: the proof is garbage, whatever keys we hold. */
		w.flags |= BX_WIRE_REQ_F_PROOF;
		memset(w.kid, 0x42, sizeof(w.kid));
		rand_bytes(w.mac, sizeof(w.mac));
		st.flood_proofs++;
	}
	rand_bytes(&qpn, sizeof(qpn));
	param.qp_num = 0x1000 + qpn % 0xef000;
	param.private_data = &w;
	param.private_data_len = sizeof(w);
	st.flood_reqs++;
	if (rdma_connect(f->id, &param)) {
		st.flood_errors++;
		fslot_free(f);
	}
}

static void flood_event(struct rdma_cm_event *ev)
{
	struct fslot *f = ev->id->context;
	struct bx_wire_chal ch;
	bool chal, done = true;
	int src;

	if (!f) {
		rdma_ack_cm_event(ev);
		return;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		done = rdma_resolve_route(ev->id, 2000) != 0;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		rdma_ack_cm_event(ev);
		fslot_connect(f);
		return;
	case RDMA_CM_EVENT_REJECTED:
		chal = !bx_wire_challenge_parse(ev->param.conn.private_data,
						ev->param.conn.private_data_len,
						&ch);
		if (chal)
			st.flood_challenges++;
		else
			st.flood_rejects++;
		rdma_ack_cm_event(ev);
		src = f->src;
		if (chal && o.bad_proofs && !f->answer) {
			fslot_free(f);
			fslot_start(f, src, &ch);
		} else {
			fslot_free(f);
		}
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		st.flood_accepts++;
		break;
	default:
		st.flood_errors++;
		break;
	}
	rdma_ack_cm_event(ev);
	if (done)
		fslot_free(f);
}

/*
 * flood: connect requests at the victim (-a) from the -F addresses in
 * turn (addresses of our netdev), -q a second for -t seconds (default
 * 30), silent after each: a first request, or with -B the answer to its
 * challenge with a made-up proof. No QP, no buffers: what a host without
 * the secret can send.
 */
static int flood(void)
{
	int64_t end = now_ms() + (int64_t)(o.secs ? o.secs : 30) * 1000;
	int64_t next = now_ms(), gap = o.rate > 0 ? 1000 / o.rate : 5;
	int k = 0;

	if (!gap)
		gap = 1;
	out("flood victim %s sources %d rate %d/s", o.addr, nfsrc, o.rate);
	while (!stop && now_ms() < end) {
		struct pollfd pfd = { .fd = g_ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;

		while (now_ms() >= next) {
			struct fslot *f = NULL;

			for (int i = 0; i < F_SLOTS && !f; i++)
				if (!fslots[i].id)
					f = &fslots[i];
			next += gap;
			if (!f)
				break;
			fslot_start(f, k++ % nfsrc, NULL);
		}
		for (int i = 0; i < F_SLOTS; i++)
			if (fslots[i].id &&
			    now_ms() - fslots[i].born > F_TIMEOUT_MS) {
				st.flood_timeouts++;
				fslot_free(&fslots[i]);
			}
		poll(&pfd, 1, 10);
		while (!rdma_get_cm_event(g_ch, &ev))
			flood_event(ev);
	}
	for (int i = 0; i < F_SLOTS; i++)
		fslot_free(&fslots[i]);
	out("summary flood requests %ld challenges %ld rejects %ld accepts %ld proofs %ld timeouts %ld errors %ld",
	    st.flood_reqs, st.flood_challenges, st.flood_rejects,
	    st.flood_accepts, st.flood_proofs, st.flood_timeouts,
	    st.flood_errors);
	return 0;
}

/* ---- main ------------------------------------------------------------------ */

/* -K: the cluster secret, exactly 32 bytes (-W: changed in every byte). */
static int read_key(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		note("%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(key, 1, sizeof(key), f);
	fclose(f);
	if (n != sizeof(key)) {
		note("%s: a secret has 32 bytes", path);
		return -1;
	}
	/* -W: the secret's name, and a key that is not the secret. */
	bx_auth_kid(key, key_kid);
	if (o.wrong_key)
		for (size_t i = 0; i < n; i++)
			key[i] ^= 0x5a;
	return 0;
}

/* -J: pair keys, "ADDR KID KEY" lines (bxctl keys derive). */
static int read_pairs(const char *path)
{
	char line[256], a[64], kid[16], k[80];
	FILE *f = fopen(path, "r");

	if (!f) {
		note("%s: %s", path, strerror(errno));
		return -1;
	}
	while (npairs < 64 && fgets(line, sizeof(line), f)) {
		struct in_addr a4;
		unsigned int v;

		if (sscanf(line, "%63s %15s %79s", a, kid, k) != 3 ||
		    inet_pton(AF_INET, a, &a4) != 1 || strlen(kid) != 8 ||
		    strlen(k) != 64)
			continue;
		memset(pairs[npairs].addr, 0, 16);
		pairs[npairs].addr[10] = pairs[npairs].addr[11] = 0xff;
		memcpy(pairs[npairs].addr + 12, &a4, 4);
		for (int i = 0; i < 4; i++)
			sscanf(kid + 2 * i, "%2x", &v), pairs[npairs].kid[i] = (uint8_t)v;
		for (int i = 0; i < 32; i++)
			sscanf(k + 2 * i, "%2x", &v), pairs[npairs].key[i] = (uint8_t)v;
		if (o.wrong_key)
			for (int i = 0; i < 32; i++)
				pairs[npairs].key[i] ^= 0x5a;
		npairs++;
	}
	fclose(f);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: see the comment at the top of bx_hostile.c\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	bool first_set = false;
	int opt;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "serve"))
		o.mode = M_SERVE;
	else if (!strcmp(argv[1], "connect"))
		o.mode = M_CONNECT;
	else if (!strcmp(argv[1], "flood"))
		o.mode = M_FLOOD;
	else
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	optind = 2;
	while ((opt = getopt(argc, argv,
			     "a:p:K:NWA:k:e:n:r:t:l:R:S:X:vb:J:YP:s:ZBF:q:")) != -1) {
		switch (opt) {
		case 'b': o.bind_addr = optarg; break;
		case 'J': o.pairfile = optarg; break;
		case 'Y': o.yes = true; break;
		case 'P': o.spray = atoi(optarg); break;
		case 's': o.spray_svc = atoi(optarg); break;
		case 'Z': o.zero_epoch = true; break;
		case 'B': o.bad_proofs = true; break;
		case 'q': o.rate = atoi(optarg); break;
		case 'F':
			for (char *t = strtok(optarg, ","); t && nfsrc < 64;
			     t = strtok(NULL, ","))
				fsrc[nfsrc++] = t;
			break;
		case 'a': o.addr = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 'K': o.keyfile = optarg; break;
		case 'N': o.no_auth = true; break;
		case 'W': o.wrong_key = true; break;
		case 'A':
			o.attack = -1;
			for (int i = 0; i <= A_RELAY; i++)
				if (!strcmp(optarg, attack_name[i]))
					o.attack = i;
			if (o.attack < 0)
				usage();
			break;
		case 'k': o.first = atoi(optarg); first_set = true; break;
		case 'e': o.every = atoi(optarg); break;
		case 'n': o.max_attacks = atoi(optarg); break;
		case 'r': o.max_answered = atol(optarg); break;
		case 't': o.secs = atoi(optarg); break;
		case 'l': o.logfile = optarg; break;
		case 'R': o.relay = optarg; break;
		case 'S': o.stride = atol(optarg); break;
		case 'X': o.xport = atoi(optarg); break;
		case 'v': o.verbose = true; break;
		default: usage();
		}
	}
	if (optind != argc || o.every < 1 || o.port <= 0 ||
	    (o.mode != M_SERVE && !o.addr) || (o.mode == M_FLOOD && !nfsrc) ||
	    (o.attack == A_RELAY && !o.relay) ||
	    ((o.no_auth || o.wrong_key) && !o.keyfile && o.mode == M_SERVE))
		usage();
	if (!first_set)
		o.first = o.attack == A_STALE ? 2 : 1;
	if (o.keyfile && read_key(o.keyfile))
		return 2;
	if (o.pairfile && read_pairs(o.pairfile))
		return 2;
	/* Without -K, -W and -N change nothing: there is no proof. */
	if (o.mode == M_CONNECT && !o.keyfile && !o.pairfile && o.wrong_key) {
		/* A wrong proof still needs a key: make one up. */
		rand_bytes(key, sizeof(key));
		bx_auth_kid(key, key_kid);
		o.keyfile = "(random)";
	}
	rand_bytes(ckey, sizeof(ckey));
	if (o.logfile) {
		desc_log = fopen(o.logfile, "a");
		if (!desc_log) {
			note("%s: %s", o.logfile, strerror(errno));
			return 2;
		}
		setvbuf(desc_log, NULL, _IOLBF, 0);
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rand_bytes(&epoch, sizeof(epoch));
	epoch |= 1;

	g_ch = rdma_create_event_channel();
	if (!g_ch) {
		note("rdma_create_event_channel: %s (rdma_ucm loaded?)",
		      strerror(errno));
		return 2;
	}
	fcntl(g_ch->fd, F_SETFL, fcntl(g_ch->fd, F_GETFL) | O_NONBLOCK);
	if (o.mode == M_FLOOD)
		return flood();
	return o.mode == M_SERVE ? serve() : do_connect();
}
