// SPDX-License-Identifier: GPL-2.0
/*
 * bxctl: show and tune bx through its generic netlink family "bx"
 * (Documentation/netlink/specs/bx.yaml), in the manner of iproute2's
 * rdma and ss. See usage() or tools/bxctl/README.md. It speaks netlink
 * through the client generated from the spec (tools/lib/ynl/bx-user.h)
 * on the kernel's YNL library (tools/lib/ynl/README.md).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/bx_netlink.h>

#include "auth.h"
#include "bx-user.h"
#include "ynl.h"

#define BXCTL_VERSION	"0.1"

static const char *prog = "bxctl";
static bool json, details;
static struct ynl_sock *ys;	/* nl_setup(): the family "bx" */

/* ---- output helpers ----------------------------------------------------- */

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Printable copy of a kernel string for tables (no control characters). */
static void sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			*s = '?';
}

/* ---- attribute descriptions --------------------------------------------- */

enum fmt {
	F_U8,		/* number */
	F_U32,
	F_U64,
	F_HEX64,	/* u64, hex in text, number in JSON */
	F_STR,
	F_FLAG,		/* true/false */
	F_ADDR,		/* struct in6_addr; v4-mapped shown as IPv4 */
	F_STATE,	/* enum bx_conn_state */
	F_ERRNO,	/* s32, negative errno */
};

struct field {
	uint16_t	type;
	const char	*name;
	enum fmt	fmt;
	bool		brk;	/* text details: start a new line here */
};

/*
 * One attribute of a reply as the generated client parsed it, whatever
 * its type there; a reply becomes an array of them indexed by attribute
 * type, which the field tables below print.
 */
struct val {
	bool		on;	/* present */
	uint64_t	u;	/* unsigned numbers, the state */
	int64_t		s;	/* F_ERRNO */
	const char	*str;	/* F_STR */
	const void	*bin;	/* F_ADDR */
	size_t		len;	/* its length, checked where it is used */
};

/*
 * The objects' attributes, in the order bxctl prints them:
 * X(attribute, member of the generated struct, name, format, brk).
 */
#define DEV_FIELDS(X)							\
	X(BX_A_DEV_NAME,	name,	"name",		F_STR, false)	\
	X(BX_A_DEV_PORT,	port,	"port",		F_U32, false)	\
	X(BX_A_DEV_NETDEV,	netdev,	"netdev",	F_STR, false)

#define CONN_FIELDS(X)							\
	X(BX_A_CONN_PEER_ID, peer_id, "peer-id", F_U32, false)		\
	X(BX_A_CONN_PEER_ADDR, peer_addr, "peer-addr", F_ADDR, false)	\
	X(BX_A_CONN_LANE, lane, "lane", F_U32, false)			\
	X(BX_A_CONN_STATE, state, "state", F_STATE, false)		\
	X(BX_A_CONN_ACTIVE, active, "active", F_FLAG, false)		\
	X(BX_A_CONN_DEV_NAME, dev_name, "dev-name", F_STR, false)	\
	X(BX_A_CONN_QPN, qpn, "qpn", F_U32, false)			\
	X(BX_A_CONN_ERR, err, "err", F_ERRNO, false)			\
	X(BX_A_CONN_PEER_EPOCH, peer_epoch, "peer-epoch", F_HEX64, true) \
	X(BX_A_CONN_AWAITING, awaiting, "awaiting", F_U32, false)	\
	X(BX_A_CONN_PEER_RESTARTS, peer_restarts, "peer-restarts", F_U32, false) \
	X(BX_A_CONN_TX_MSGS, tx_msgs, "tx-msgs", F_U64, false)		\
	X(BX_A_CONN_RX_MSGS, rx_msgs, "rx-msgs", F_U64, false)		\
	X(BX_A_CONN_CREDITS, credits, "credits", F_U32, true)		\
	X(BX_A_CONN_CREDITS_MAX, credits_max, "credits-max", F_U32, false) \
	X(BX_A_CONN_GRANT, grant, "grant", F_U32, false)		\
	X(BX_A_CONN_CREDIT_STALLS, credit_stalls, "credit-stalls", F_U64, false) \
	X(BX_A_CONN_CREDIT_UPDATES, credit_updates, "credit-updates", F_U64, false) \
	X(BX_A_CONN_WND_BYTES_INFLIGHT, wnd_bytes_inflight, "wnd-bytes-inflight", F_U64, true) \
	X(BX_A_CONN_WND_OPS_INFLIGHT, wnd_ops_inflight, "wnd-ops-inflight", F_U32, false) \
	X(BX_A_CONN_WND_PEAK_BYTES, wnd_peak_bytes, "wnd-peak-bytes", F_U64, false) \
	X(BX_A_CONN_WND_WAITS, wnd_waits, "wnd-waits", F_U64, false)	\
	X(BX_A_CONN_RD_BYTES_INFLIGHT, rd_bytes_inflight, "rd-bytes-inflight", F_U64, true) \
	X(BX_A_CONN_RD_READS_INFLIGHT, rd_reads_inflight, "rd-reads-inflight", F_U32, false) \
	X(BX_A_CONN_RD_PEAK_BYTES, rd_peak_bytes, "rd-peak-bytes", F_U64, false) \
	X(BX_A_CONN_BUSY_RETRIES, busy_retries, "busy-retries", F_U64, false) \
	X(BX_A_CONN_RNR, rnr, "rnr", F_U64, false)			\
	X(BX_A_CONN_PARKED, parked, "parked", F_U32, false)		\
	X(BX_A_CONN_RECOVERIES, recoveries, "recoveries", F_U32, false)	\
	X(BX_A_CONN_RECOVERED_OPS, recovered_ops, "recovered-ops", F_U64, false) \
	X(BX_A_CONN_RECOVER_FAILED, recover_failed, "recover-failed", F_U64, false) \
	X(BX_A_CONN_DUP_PUSHES, dup_pushes, "dup-pushes", F_U64, false)	\
	X(BX_A_CONN_WND_SMALL_INFLIGHT, wnd_small_inflight, "wnd-small-inflight", F_U32, false) \
	X(BX_A_CONN_SMALL_PASSES, small_passes, "small-passes", F_U64, false) \
	X(BX_A_CONN_AUTH, auth, "auth", F_FLAG, true)			\
	X(BX_A_CONN_PEER_VIOLATIONS, peer_violations, "peer-violations", F_U32, false) \
	X(BX_A_CONN_PEER_REFUSED, peer_refused, "peer-refused", F_U32, false) \
	X(BX_A_CONN_PEER_REFUSING_MS, peer_refusing_ms, "peer-refusing-ms", F_U32, false)

#define PROC_FIELDS(X)							\
	X(BX_A_PROC_PID, pid, "pid", F_U32, false)			\
	X(BX_A_PROC_BYTES_TX, bytes_tx, "bytes-tx", F_U64, false)	\
	X(BX_A_PROC_BYTES_RX, bytes_rx, "bytes-rx", F_U64, false)	\
	X(BX_A_PROC_INFLIGHT, inflight, "inflight", F_U32, false)	\
	X(BX_A_PROC_REGION_BYTES, region_bytes, "region-bytes", F_U64, false)

#define STATS_FIELDS(X)							\
	X(BX_A_STATS_CONNS, conns, "conns", F_U32, false)		\
	X(BX_A_STATS_OPS_INFLIGHT, ops_inflight, "ops-inflight", F_U64, false) \
	X(BX_A_STATS_MRS_INUSE, mrs_inuse, "mrs-inuse", F_U64, false)	\
	X(BX_A_STATS_REGION_BYTES, region_bytes, "region-bytes", F_U64, false) \
	X(BX_A_STATS_COPIED_BYTES, copied_bytes, "copied-bytes", F_U64, false) \
	X(BX_A_STATS_TX_BYTES_INFLIGHT, tx_bytes_inflight, "tx-bytes-inflight", F_U64, false) \
	X(BX_A_STATS_TX_PEAK_BYTES, tx_peak_bytes, "tx-peak-bytes", F_U64, false) \
	X(BX_A_STATS_RX_BYTES_INFLIGHT, rx_bytes_inflight, "rx-bytes-inflight", F_U64, false) \
	X(BX_A_STATS_RX_PEAK_BYTES, rx_peak_bytes, "rx-peak-bytes", F_U64, false) \
	X(BX_A_STATS_BUSY_RETRIES, busy_retries, "busy-retries", F_U64, false) \
	X(BX_A_STATS_RNR_EVENTS, rnr_events, "rnr-events", F_U64, false) \
	X(BX_A_STATS_DUP_PUSHES, dup_pushes, "dup-pushes", F_U64, false) \
	X(BX_A_STATS_RECOVERED_OPS, recovered_ops, "recovered-ops", F_U64, false) \
	X(BX_A_STATS_RECOVER_FAILED, recover_failed, "recover-failed", F_U64, false) \
	X(BX_A_STATS_TX_SMALL_INFLIGHT, tx_small_inflight, "tx-small-inflight", F_U32, false) \
	X(BX_A_STATS_SMALL_PASSES, small_passes, "small-passes", F_U64, false) \
	X(BX_A_STATS_PEERS, peers, "peers", F_U32, false)		\
	X(BX_A_STATS_PIECES, pieces, "pieces", F_U64, false)

/* Also what "set" takes (the names), in this order. */
#define TUN_FIELDS(X)							\
	X(BX_A_TUNABLES_WND_KB, wnd_kb, "wnd-kb", F_U32, false)		\
	X(BX_A_TUNABLES_WND_OPS, wnd_ops, "wnd-ops", F_U32, false)	\
	X(BX_A_TUNABLES_HOST_WND_KB, host_wnd_kb, "host-wnd-kb", F_U32, false) \
	X(BX_A_TUNABLES_HOST_WND_OPS, host_wnd_ops, "host-wnd-ops", F_U32, false) \
	X(BX_A_TUNABLES_RX_WND_KB, rx_wnd_kb, "rx-wnd-kb", F_U32, false) \
	X(BX_A_TUNABLES_RD_MAX, rd_max, "rd-max", F_U32, false)		\
	X(BX_A_TUNABLES_CREDIT_BATCH, credit_batch, "credit-batch", F_U32, false) \
	X(BX_A_TUNABLES_RDV_THRESHOLD, rdv_threshold, "rdv-threshold", F_U32, false) \
	X(BX_A_TUNABLES_DRR_QUANTUM, drr_quantum, "drr-quantum", F_U32, false) \
	X(BX_A_TUNABLES_FLOW_CONTROL, flow_control, "flow-control", F_U8, false) \
	X(BX_A_TUNABLES_PIECE_KB, piece_kb, "piece-kb", F_U32, false)	\
	X(BX_A_TUNABLES_CONNECT_TIMEOUT_MS, connect_timeout_ms, "connect-timeout-ms", F_U32, false) \
	X(BX_A_TUNABLES_ACK_TIMEOUT, ack_timeout, "ack-timeout", F_U32, false) \
	X(BX_A_TUNABLES_RECOVER_MS, recover_ms, "recover-ms", F_U32, false) \
	X(BX_A_TUNABLES_RD_DEPTH, rd_depth, "rd-depth", F_U32, false)	\
	X(BX_A_TUNABLES_REFUSE_MS, refuse_ms, "refuse-ms", F_U32, false) \
	X(BX_A_TUNABLES_PEER_LINGER_MS, peer_linger_ms, "peer-linger-ms", F_U32, false) \
	X(BX_A_TUNABLES_USER_OPS_MAX, user_ops_max, "user-ops-max", F_U32, false) \
	X(BX_A_TUNABLES_USER_PEERS_MAX, user_peers_max, "user-peers-max", F_U32, false) \
	X(BX_A_TUNABLES_USER_SERVICES_MAX, user_services_max, "user-services-max", F_U32, false) \
	X(BX_A_TUNABLES_REGION_CAP_MB, region_cap_mb, "region-cap-mb", F_U32, false) \
	X(BX_A_TUNABLES_OP_TIMEOUT_MS, op_timeout_ms, "op-timeout-ms", F_U32, false) \
	X(BX_A_TUNABLES_PROOF_MS, proof_ms, "proof-ms", F_U32, false)	\
	X(BX_A_TUNABLES_SECRET_OVERLAP_MS, secret_overlap_ms, "secret-overlap-ms", F_U32, false) \
	X(BX_A_TUNABLES_REMOTE_PEERS_MAX, remote_peers_max, "remote-peers-max", F_U32, false) \
	X(BX_A_TUNABLES_OP_TIMEOUT_MAX_MS, op_timeout_max_ms, "op-timeout-max-ms", F_U32, false) \
	X(BX_A_TUNABLES_USER_WND_PCT, user_wnd_pct, "user-wnd-pct", F_U32, false) \
	X(BX_A_TUNABLES_QPS_PER_PEER, qps_per_peer, "qps-per-peer", F_U32, false)

/* admit-get, but for the allow-list (printed apart, print_admit()). */
#define ADMIT_FIELDS(X)							\
	X(BX_A_ADMIT_SECRET_ON, secret_on, "secret-on", F_U8, false)	\
	X(BX_A_ADMIT_REFUSED, refused, "refused", F_U64, false)		\
	X(BX_A_ADMIT_AUTH_FAILURES, auth_failures, "auth-failures", F_U64, false) \
	X(BX_A_ADMIT_VIOLATIONS, violations, "violations", F_U64, false) \
	X(BX_A_ADMIT_CHALLENGES, challenges, "challenges", F_U64, false) \
	X(BX_A_ADMIT_STALE_COOKIES, stale_cookies, "stale-cookies", F_U64, false) \
	X(BX_A_ADMIT_SECRET_PREV, secret_prev, "secret-prev", F_U8, false) \
	X(BX_A_ADMIT_PAIRKEYS, pairkeys, "pairkeys", F_U32, false)

#define FIELD(A, m, name, fmt, brk)	{ A, name, fmt, brk },

static const struct field dev_fields[] = { DEV_FIELDS(FIELD) { 0 } };
static const struct field conn_fields[] = { CONN_FIELDS(FIELD) { 0 } };
static const struct field proc_fields[] = { PROC_FIELDS(FIELD) { 0 } };
static const struct field stats_fields[] = { STATS_FIELDS(FIELD) { 0 } };
static const struct field tun_fields[] = { TUN_FIELDS(FIELD) { 0 } };
static const struct field admit_fields[] = { ADMIT_FIELDS(FIELD) { 0 } };

#define ATTR_MAX	64	/* above every BX_A_*_MAX */

_Static_assert(BX_A_CONN_MAX < ATTR_MAX && BX_A_STATS_MAX < ATTR_MAX &&
	      BX_A_PROC_MAX < ATTR_MAX && BX_A_DEV_MAX < ATTR_MAX &&
	      BX_A_TUNABLES_MAX < ATTR_MAX && BX_A_ADMIT_MAX < ATTR_MAX,
	      "ATTR_MAX too small");

/* Every tunable and connection attribute of the spec is shown. */
#define FIELD_ONE(a, m, n, f, brk) + 1
_Static_assert(0 TUN_FIELDS(FIELD_ONE) == BX_A_TUNABLES_MAX,
	       "TUN_FIELDS lists every tunable of bx.yaml");
_Static_assert(0 CONN_FIELDS(FIELD_ONE) == BX_A_CONN_MAX - 1 /* pad */,
	       "CONN_FIELDS lists every connection attribute of bx.yaml");
#undef FIELD_ONE

/*
 * A generated struct (@r) into values (@v) by its field list: numbers
 * and flags are present by their bit in _present, strings and binary
 * attributes by their length there.
 */
#define GET_NUM(r, m, v)	if ((r)->_present.m) { (v)->on = true; (v)->u = (r)->m; }
#define GET_F_U8		GET_NUM
#define GET_F_U32		GET_NUM
#define GET_F_U64		GET_NUM
#define GET_F_HEX64		GET_NUM
#define GET_F_STATE		GET_NUM
#define GET_F_ERRNO(r, m, v)	if ((r)->_present.m) { (v)->on = true; (v)->s = (r)->m; }
#define GET_F_FLAG(r, m, v)	if ((r)->_present.m) (v)->on = true;
#define GET_F_STR(r, m, v)	if ((r)->_present.m##_len && (r)->m) { (v)->on = true; (v)->str = (r)->m; }
#define GET_F_ADDR(r, m, v)						\
	if ((r)->_present.m##_len && (r)->m) {				\
		(v)->on = true;						\
		(v)->bin = (r)->m;					\
		(v)->len = (r)->_present.m##_len;			\
	}
#define GET(A, m, name, fmt, brk)	GET_##fmt(r, m, &v[A])

#define DEFINE_VALS(fn, type, FIELDS)					\
static void fn(const type *r, struct val *v)				\
{									\
	memset(v, 0, (ATTR_MAX + 1) * sizeof(*v));			\
	FIELDS(GET)							\
}

DEFINE_VALS(dev_vals, struct bx_dev_get_rsp_dump, DEV_FIELDS)
DEFINE_VALS(dev_add_vals, struct bx_dev_add_ntf_rsp, DEV_FIELDS)
DEFINE_VALS(dev_del_vals, struct bx_dev_del_ntf_rsp, DEV_FIELDS)
DEFINE_VALS(conn_vals, struct bx_conn_get_rsp, CONN_FIELDS)
DEFINE_VALS(proc_vals, struct bx_proc_get_rsp_dump, PROC_FIELDS)
DEFINE_VALS(stats_vals, struct bx_stats_get_rsp, STATS_FIELDS)
DEFINE_VALS(tun_vals, struct bx_tunables_get_rsp, TUN_FIELDS)
DEFINE_VALS(admit_vals, struct bx_admit_get_rsp, ADMIT_FIELDS)

static const char *field_name(const struct field *fields, int type)
{
	for (const struct field *f = fields; f->name; f++)
		if (f->type == type)
			return f->name;
	return NULL;
}

static const char *state_name(uint32_t s)
{
	switch (s) {
	case BX_CONN_STATE_CONNECTING:	return "connecting";
	case BX_CONN_STATE_UP:		return "up";
	case BX_CONN_STATE_DOWN:	return "down";
	}
	return NULL;
}

/* A struct in6_addr of @len bytes (else "?"). */
static void fmt_addr(const void *a, size_t alen, char *buf, size_t len)
{
	struct in6_addr a6;

	snprintf(buf, len, "?");
	if (!a || alen != sizeof(a6))
		return;
	memcpy(&a6, a, sizeof(a6));
	if (IN6_IS_ADDR_V4MAPPED(&a6))
		inet_ntop(AF_INET, &a6.s6_addr[12], buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, &a6, buf, (socklen_t)len);
}

/*
 * Format value @a as field @f into @buf: for text (@js false) or as
 * a JSON value. False if absent or malformed (flags: never).
 */
static bool fmt_field(const struct field *f, const struct val *a, bool js,
		      char *buf, size_t len)
{
	const char *s;

	if (!a->on && f->fmt != F_FLAG)
		return false;
	switch (f->fmt) {
	case F_U8:
	case F_U32:
	case F_U64:
		snprintf(buf, len, "%" PRIu64, a->u);
		return true;
	case F_ERRNO:
		snprintf(buf, len, "%" PRId64, a->s);
		return true;
	case F_HEX64:
		snprintf(buf, len, js ? "%" PRIu64 : "%#" PRIx64, a->u);
		return true;
	case F_FLAG:
		snprintf(buf, len, "%s", a->on ? "true" : "false");
		return true;
	case F_STATE:
		s = state_name((uint32_t)a->u);
		if (s)
			snprintf(buf, len, js ? "\"%s\"" : "%s", s);
		else
			snprintf(buf, len, js ? "\"%" PRIu32 "\"" : "%" PRIu32,
				 (uint32_t)a->u);
		return true;
	case F_ADDR: {
		char tmp[INET6_ADDRSTRLEN];

		if (a->len != sizeof(struct in6_addr))
			return false;
		fmt_addr(a->bin, a->len, tmp, sizeof(tmp));
		snprintf(buf, len, js ? "\"%s\"" : "%s", tmp);
		return true;
	}
	case F_STR:
		/* JSON: escaped by the caller, who prints strings itself. */
		snprintf(buf, len, "%s", a->str);
		if (!js)
			sanitize(buf);
		return true;
	}
	return false;
}

/* Print the fields of one object as a JSON object. */
static void print_json_obj(const struct field *fields, const struct val *v,
			   const char *event)
{
	bool first = true;
	char buf[256];

	putchar('{');
	if (event) {
		printf("\"event\":");
		jstr(stdout, event);
		first = false;
	}
	for (const struct field *f = fields; f->name; f++) {
		if (!fmt_field(f, &v[f->type], true, buf, sizeof(buf)))
			continue;
		printf("%s\"%s\":", first ? "" : ",", f->name);
		if (f->fmt == F_STR)
			jstr(stdout, buf);
		else
			fputs(buf, stdout);
		first = false;
	}
	putchar('}');
}

/* "name value" pairs; @wrap: break lines where a field says so. */
static void print_text_pairs(const struct field *fields, const struct val *v,
			     bool wrap)
{
	bool first = true;
	char buf[256];

	for (const struct field *f = fields; f->name; f++) {
		if (f->fmt == F_FLAG) {
			if (v[f->type].on) {
				printf("%s%s", first ? "" : " ", f->name);
				first = false;
			}
			continue;
		}
		if (!fmt_field(f, &v[f->type], false, buf, sizeof(buf)))
			continue;
		if (wrap && f->brk && !first)
			printf("\n   ");
		printf("%s%s %s", first ? "" : " ", f->name, buf);
		first = false;
	}
}

/* One "name  value" line per field, aligned. */
static void print_text_lines(const struct field *fields, const struct val *v)
{
	size_t w = 0;
	char buf[256];

	for (const struct field *f = fields; f->name; f++)
		if (strlen(f->name) > w)
			w = strlen(f->name);
	for (const struct field *f = fields; f->name; f++)
		if (fmt_field(f, &v[f->type], false, buf, sizeof(buf)))
			printf("%-*s  %s\n", (int)w, f->name, buf);
}

/* ---- tables ------------------------------------------------------------- */

#define TBL_COLS	16

struct table {
	int	ncols;
	char	**cells;	/* row-major, ncols per row; row 0 = header */
	size_t	n, cap;
};

static void *xalloc(void *p)
{
	if (!p) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return p;
}

static void tbl_add(struct table *t, const char *s)
{
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;

		t->cells = xalloc(realloc(t->cells, ncap * sizeof(*t->cells)));
		t->cap = ncap;
	}
	t->cells[t->n] = xalloc(strdup(s ? s : "-"));
	t->n++;
}

static void tbl_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->n = t->cap = 0;
}

static void tbl_print(struct table *t)
{
	size_t w[TBL_COLS] = { 0 };

	for (size_t i = 0; i < t->n; i++) {
		size_t l = strlen(t->cells[i]);

		if (l > w[i % t->ncols])
			w[i % t->ncols] = l;
	}
	for (size_t i = 0; i < t->n; i++) {
		int c = (int)(i % t->ncols);

		if (c == t->ncols - 1)
			printf("%s\n", t->cells[i]);
		else
			printf("%-*s  ", (int)w[c], t->cells[i]);
	}
	tbl_free(t);
}

/* The text of attribute @type of @fields in @v, or "-". */
static const char *cell(const struct field *fields, const struct val *v,
			int type, char *buf, size_t len)
{
	for (const struct field *f = fields; f->name; f++)
		if (f->type == type)
			return fmt_field(f, &v[type], false, buf, len) ? buf : "-";
	return "-";
}

/* ---- errors ------------------------------------------------------------- */

/*
 * The type of the attribute of the socket's last request (still in its
 * buffer) that starts at offset @off from its nlmsghdr (an extended
 * ACK's NLMSGERR_ATTR_OFFS), or -1.
 */
static int req_attr_at(unsigned int off)
{
	const struct nlmsghdr *nlh = ys->nlh;
	const struct nlattr *a;

	if (!nlh)
		return -1;
	ynl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if ((size_t)((const char *)a - (const char *)nlh) == off)
			return (int)ynl_attr_type(a);
	return -1;
}

/*
 * Report a failed request: the kernel's extended ACK (naming the
 * offending attribute of the request, if @req, by its name in @fields)
 * and the errno text; or what the library found wrong with a reply.
 */
static int nl_error(const char *what, const struct field *fields, bool req)
{
	const struct ynl_error *e = &ys->err;
	const char *attr = NULL;
	int code = (int)e->code;

	if (code >= __YNL_ERRNO_END) {
		/* The library's own: a malformed or unexpected reply. */
		fprintf(stderr, "%s: %s: %s\n", prog, what, e->msg);
		return 1;
	}
	if (!code)	/* send() or recv() failed: the library kept errno */
		code = errno ? errno : EIO;
	if (req && fields && e->attr_offs)
		attr = field_name(fields, req_attr_at(e->attr_offs));
	fprintf(stderr, "%s: %s: ", prog, what);
	if (attr)
		fprintf(stderr, "%s: ", attr);
	if (e->ext.msg[0]) {
		fprintf(stderr, "%s", e->ext.msg);
		if (e->ext.has_range)
			fprintf(stderr, " (valid range %" PRIu64 "..%" PRIu64 ")",
				(uint64_t)e->ext.min, (uint64_t)e->ext.max);
		if (e->ext.has_miss) {
			const char *m = fields ? field_name(fields, (int)e->ext.miss_type) : NULL;

			if (m)
				fprintf(stderr, " (missing %s)", m);
			else
				fprintf(stderr, " (missing attribute %" PRIu32 ")",
					(uint32_t)e->ext.miss_type);
		}
		fprintf(stderr, ": ");
	}
	fprintf(stderr, "%s", strerror(code));
	if (code == EPERM)
		fprintf(stderr, " (needs CAP_NET_ADMIN)");
	fputc('\n', stderr);
	return 1;
}

/* A socket of family "bx" (again: a new one) in ys. */
static int nl_setup(void)
{
	struct ynl_error err = { 0 };
	int one = 1;

	if (ys)
		ynl_sock_destroy(ys);
	errno = 0;
	ys = ynl_sock_create(&ynl_bx_family, &err);
	if (!ys) {
		if (err.code == ENOENT) {
			fprintf(stderr,
				"%s: generic netlink family \"%s\" not found: is the bx module loaded?\n",
				prog, BX_FAMILY_NAME);
		} else if (err.code && err.code < __YNL_ERRNO_END) {
			fprintf(stderr, "%s: netlink socket: %s: %s\n", prog,
				err.msg, strerror((int)err.code));
		} else {
			fprintf(stderr, "%s: resolving family %s: %s\n", prog,
				BX_FAMILY_NAME, err.msg[0] ? err.msg :
				strerror(errno ? errno : ENOMEM));
		}
		return 1;
	}
	/* Strict checking of dump requests too. */
	(void)setsockopt(ynl_socket_get_fd(ys), SOL_NETLINK,
			 NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	return 0;
}

/* ---- dumps and gets ------------------------------------------------------ */

#define DUMP_TRIES	5

/*
 * A dump, whole and consistent: one the kernel marked NLM_F_DUMP_INTR
 * (the objects changed while it ran) starts over on a new socket (the
 * library leaves the rest of it in the old one), DUMP_TRIES times at
 * most. The list, or NULL (reported).
 */
static void *dump(void *(*fn)(struct ynl_sock *), const char *what)
{
	for (int try = 1;; try++) {
		void *list = fn(ys);

		if (list)
			return list;
		if (ys->err.code != YNL_ERROR_DUMP_INTER) {
			nl_error(what, NULL, false);
			return NULL;
		}
		if (try == DUMP_TRIES) {
			fprintf(stderr, "%s: %s: the objects kept changing during %d dumps\n",
				prog, what, try);
			return NULL;
		}
		if (nl_setup())
			return NULL;
	}
}

static void *dev_dump(struct ynl_sock *s) { return bx_dev_get_dump(s); }
static void *conn_dump(struct ynl_sock *s) { return bx_conn_get_dump(s); }
static void *proc_dump(struct ynl_sock *s) { return bx_proc_get_dump(s); }

struct collect {
	const struct field	*fields;
	struct table		tbl;
	unsigned int		n;
	void			(*row)(struct collect *c, const struct val *v);
};

/* One object of a complete, consistent dump: no partial output. */
static void collect(struct collect *c, const struct val *v)
{
	if (json) {
		putchar(c->n ? ',' : '[');
		print_json_obj(c->fields, v, NULL);
	} else if (c->row) {
		c->row(c, v);
	} else {
		print_text_pairs(c->fields, v, details);
		putchar('\n');
	}
	c->n++;
}

static int collect_end(struct collect *c)
{
	if (json)
		printf("%s]\n", c->n ? "" : "[");
	else if (c->tbl.ncols)
		tbl_print(&c->tbl);
	return 0;
}

static void dev_row(struct collect *c, const struct val *v)
{
	char b[256];

	tbl_add(&c->tbl, cell(dev_fields, v, BX_A_DEV_NAME, b, sizeof(b)));
	tbl_add(&c->tbl, cell(dev_fields, v, BX_A_DEV_PORT, b, sizeof(b)));
	tbl_add(&c->tbl, cell(dev_fields, v, BX_A_DEV_NETDEV, b, sizeof(b)));
}

static int cmd_dev(void)
{
	struct collect c = { .fields = dev_fields, .row = dev_row };
	struct bx_dev_get_rsp_list *l;
	struct val v[ATTR_MAX + 1];

	if (!json && !details) {
		c.tbl.ncols = 3;
		tbl_add(&c.tbl, "NAME");
		tbl_add(&c.tbl, "PORT");
		tbl_add(&c.tbl, "NETDEV");
	} else {
		c.row = NULL;
	}
	l = dump(dev_dump, "dev");
	if (!l) {
		tbl_free(&c.tbl);
		return 1;
	}
	ynl_dump_foreach(l, o) {
		dev_vals(o, v);
		collect(&c, v);
	}
	bx_dev_get_rsp_list_free(l);
	return collect_end(&c);
}

static void conn_row(struct collect *c, const struct val *v)
{
	const struct field *F = conn_fields;
	char b[256], b2[64];

	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_PEER_ID, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_PEER_ADDR, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_LANE, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_STATE, b, sizeof(b)));
	tbl_add(&c->tbl, v[BX_A_CONN_ACTIVE].on ? "out" : "in");
	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_DEV_NAME, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_QPN, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_AWAITING, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_TX_MSGS, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_RX_MSGS, b, sizeof(b)));
	if (v[BX_A_CONN_CREDITS].on && v[BX_A_CONN_CREDITS_MAX].on)
		snprintf(b2, sizeof(b2), "%" PRIu64 "/%" PRIu64,
			 v[BX_A_CONN_CREDITS].u, v[BX_A_CONN_CREDITS_MAX].u);
	else
		snprintf(b2, sizeof(b2), "-");
	tbl_add(&c->tbl, b2);
	if (v[BX_A_CONN_WND_BYTES_INFLIGHT].on && v[BX_A_CONN_WND_OPS_INFLIGHT].on)
		snprintf(b2, sizeof(b2), "%" PRIu64 "/%" PRIu64,
			 v[BX_A_CONN_WND_BYTES_INFLIGHT].u,
			 v[BX_A_CONN_WND_OPS_INFLIGHT].u);
	else
		snprintf(b2, sizeof(b2), "-");
	tbl_add(&c->tbl, b2);
	tbl_add(&c->tbl, cell(F, v, BX_A_CONN_ERR, b, sizeof(b)));
}

static void conn_header(struct collect *c)
{
	static const char *const hdr[] = {
		"PEER-ID", "PEER", "LANE", "STATE", "DIR", "DEV", "QPN", "AWAIT",
		"TX-MSGS", "RX-MSGS", "CREDITS", "INFLIGHT-BYTES/OPS", "ERR",
	};

	c->tbl.ncols = (int)(sizeof(hdr) / sizeof(hdr[0]));
	for (int i = 0; i < c->tbl.ncols; i++)
		tbl_add(&c->tbl, hdr[i]);
}

static int cmd_conn(void)
{
	struct collect c = { .fields = conn_fields, .row = conn_row };
	struct bx_conn_get_list *l;
	struct val v[ATTR_MAX + 1];

	if (!json && !details)
		conn_header(&c);
	else
		c.row = NULL;
	l = dump(conn_dump, "conn");
	if (!l) {
		tbl_free(&c.tbl);
		return 1;
	}
	ynl_dump_foreach(l, o) {
		conn_vals(o, v);
		collect(&c, v);
	}
	bx_conn_get_list_free(l);
	return collect_end(&c);
}

static void proc_row(struct collect *c, const struct val *v)
{
	char b[256];

	for (const struct field *f = proc_fields; f->name; f++)
		tbl_add(&c->tbl, cell(proc_fields, v, f->type, b, sizeof(b)));
}

static int cmd_proc(void)
{
	struct collect c = { .fields = proc_fields, .row = proc_row };
	struct bx_proc_get_rsp_list *l;
	struct val v[ATTR_MAX + 1];

	if (!json && !details) {
		c.tbl.ncols = 5;
		tbl_add(&c.tbl, "PID");
		tbl_add(&c.tbl, "BYTES-TX");
		tbl_add(&c.tbl, "BYTES-RX");
		tbl_add(&c.tbl, "INFLIGHT");
		tbl_add(&c.tbl, "REGION-BYTES");
	} else {
		c.row = NULL;
	}
	l = dump(proc_dump, "proc");
	if (!l) {
		tbl_free(&c.tbl);
		return 1;
	}
	ynl_dump_foreach(l, o) {
		proc_vals(o, v);
		collect(&c, v);
	}
	bx_proc_get_rsp_list_free(l);
	return collect_end(&c);
}

/* Did a "do" reply come? The library hands back an empty one if not. */
static bool any_val(const char *what, const struct val *v)
{
	for (int i = 0; i <= ATTR_MAX; i++)
		if (v[i].on)
			return true;
	fprintf(stderr, "%s: %s: no reply from the kernel\n", prog, what);
	return false;
}

/* One object: JSON, name value pairs (@pairs) or a line per field. */
static void print_single(const struct field *fields, const struct val *v,
			 bool pairs)
{
	if (json) {
		print_json_obj(fields, v, NULL);
		putchar('\n');
	} else if (pairs) {
		print_text_pairs(fields, v, true);
		putchar('\n');
	} else {
		print_text_lines(fields, v);
	}
}

/*
 * One connection (a peer's on @lane), every attribute: an object, or
 * pairs over a few lines.
 */
static int cmd_conn_get(uint32_t peer, uint32_t lane)
{
	struct bx_conn_get_req *req = xalloc(bx_conn_get_req_alloc());
	struct val v[ATTR_MAX + 1];
	struct bx_conn_get_rsp *rsp;
	int ret;

	bx_conn_get_req_set_peer_id(req, peer);
	if (lane)
		bx_conn_get_req_set_lane(req, lane);
	rsp = bx_conn_get(ys, req);
	bx_conn_get_req_free(req);
	if (!rsp)
		return nl_error("conn", conn_fields, true);
	/* The values point into rsp: printed before it is freed. */
	conn_vals(rsp, v);
	ret = any_val("conn", v) ? 0 : 1;
	if (!ret)
		print_single(conn_fields, v, true);
	bx_conn_get_rsp_free(rsp);
	return ret;
}

static int cmd_stats(void)
{
	struct bx_stats_get_rsp *rsp = bx_stats_get(ys);
	struct val v[ATTR_MAX + 1];

	if (!rsp)
		return nl_error("stats", stats_fields, true);
	stats_vals(rsp, v);
	bx_stats_get_rsp_free(rsp);
	if (!any_val("stats", v))
		return 1;
	print_single(stats_fields, v, false);
	return 0;
}

static int cmd_tunables(void)
{
	struct bx_tunables_get_rsp *rsp = bx_tunables_get(ys);
	struct val v[ATTR_MAX + 1];

	if (!rsp)
		return nl_error("tunables", tun_fields, true);
	tun_vals(rsp, v);
	bx_tunables_get_rsp_free(rsp);
	if (!any_val("tunables", v))
		return 1;
	print_single(tun_fields, v, false);
	return 0;
}

/* ---- set ----------------------------------------------------------------- */

static const struct field *tunable_by_name(const char *name)
{
	char n[64];

	snprintf(n, sizeof(n), "%s", name);
	for (char *p = n; *p; p++)
		if (*p == '_')
			*p = '-';
	for (const struct field *f = tun_fields; f->name; f++)
		if (!strcmp(f->name, n))
			return f;
	return NULL;
}

static bool parse_u32(const char *s, uint32_t *v)
{
	unsigned long long x;
	char *end;

	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return false;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

static bool parse_bool(const char *s, uint8_t *v)
{
	static const char *const yes[] = { "1", "y", "yes", "on", "true" };
	static const char *const no[] = { "0", "n", "no", "off", "false" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*v = 1;
			return true;
		}
		if (!strcasecmp(s, no[i])) {
			*v = 0;
			return true;
		}
	}
	return false;
}

/* Tunable @type := @v in @req, by the generated setter of its member. */
#define TUN_SET(A, m, name, fmt, brk)					\
	case A:								\
		bx_tunables_set_req_set_##m(req, v);			\
		break;

static void tun_set(struct bx_tunables_set_req *req, int type, uint32_t v)
{
	switch (type) {
	TUN_FIELDS(TUN_SET)
	}
}

static int cmd_set(int argc, char **argv)
{
	bool seen[ATTR_MAX + 1] = { false };
	struct bx_tunables_set_req *req;
	int ret;

	if (argc == 0 || argc % 2) {
		fprintf(stderr, "%s: usage: %s set NAME VALUE [NAME VALUE...]\n",
			prog, prog);
		return 1;
	}
	/* Arguments first: nothing goes to the kernel if one is bad. */
	req = xalloc(bx_tunables_set_req_alloc());
	for (int i = 0; i < argc; i += 2) {
		const struct field *f = tunable_by_name(argv[i]);
		uint32_t v;
		uint8_t b;

		if (!f) {
			fprintf(stderr, "%s: set: unknown tunable \"%s\"; one of:",
				prog, argv[i]);
			for (f = tun_fields; f->name; f++)
				fprintf(stderr, " %s", f->name);
			fputc('\n', stderr);
			goto bad;
		}
		if (seen[f->type]) {
			fprintf(stderr, "%s: set: %s given twice\n", prog, f->name);
			goto bad;
		}
		seen[f->type] = true;
		if (f->fmt == F_U8) {
			if (!parse_bool(argv[i + 1], &b)) {
				fprintf(stderr, "%s: set: %s: \"%s\" is not 0/1 (off/on)\n",
					prog, f->name, argv[i + 1]);
				goto bad;
			}
			v = b;
		} else if (!parse_u32(argv[i + 1], &v)) {
			fprintf(stderr, "%s: set: %s: \"%s\" is not an unsigned 32-bit number\n",
				prog, f->name, argv[i + 1]);
			goto bad;
		}
		tun_set(req, f->type, v);
	}
	ret = nl_setup();
	if (!ret && bx_tunables_set(ys, req))
		ret = nl_error("set", tun_fields, true);
	else if (!ret && ys->err.ext.msg[0])
		fprintf(stderr, "%s: set: warning: %s\n", prog, ys->err.ext.msg);
	bx_tunables_set_req_free(req);
	return ret;
bad:
	bx_tunables_set_req_free(req);
	return 1;
}

/* ---- admission ------------------------------------------------------------ */

/* "a.b.c.d/N" or "x::y/N" (no prefix: the host) as an allow-set network. */
static bool parse_net(const char *s, struct in6_addr *a, uint8_t *plen)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	unsigned int max = 128;
	uint32_t n;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = 0;
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, buf, &a->s6_addr[12]) == 1) {
		a->s6_addr[10] = a->s6_addr[11] = 0xff;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, a) != 1) {
		return false;
	}
	n = max;
	if (slash && (!parse_u32(slash, &n) || n > max))
		return false;
	*plen = (uint8_t)(n + 128 - max);
	return true;
}

/* The secure posture: bx.rst, "Trust model". */
static void warn_open(void)
{
	fprintf(stderr, "%s: warning: bx accepts connections from any host that "
		"reaches it: no allow-list and no cluster secret (bxctl allow, "
		"bxctl secret; Documentation/bx.rst, \"Trust model\")\n", prog);
}

static void print_admit(const struct bx_admit_get_rsp *rsp)
{
	struct val v[ATTR_MAX + 1];
	bool first = true;

	admit_vals(rsp, v);
	printf(json ? "{\"allow\":[" : "allow");
	/* Every net attribute, in order; one without both parts is left out. */
	for (unsigned int i = 0; i < rsp->n_net; i++) {
		const struct bx_net *n = &rsp->net[i];
		char buf[INET6_ADDRSTRLEN];
		uint8_t plen = n->prefix_len;

		if (!n->_present.addr_len || !n->addr || !n->_present.prefix_len)
			continue;
		fmt_addr(n->addr, n->_present.addr_len, buf, sizeof(buf));
		if (strchr(buf, ':') == NULL)
			plen -= 96;
		printf(json ? "%s\"%s/%u\"" : "%s%s/%u",
		       json ? (first ? "" : ",") : " ", buf, plen);
		first = false;
	}
	if (json) {
		printf("],");
		print_json_obj(admit_fields, v, NULL);
		putchar('}');
		putchar('\n');
	} else {
		printf(first ? " any\n" : "\n");
		print_text_lines(admit_fields, v);
	}
	if (first && v[BX_A_ADMIT_SECRET_ON].on && !v[BX_A_ADMIT_SECRET_ON].u)
		warn_open();
}

static int cmd_admit(void)
{
	struct bx_admit_get_rsp *rsp = bx_admit_get(ys);
	struct val v[ATTR_MAX + 1];

	if (!rsp)
		return nl_error("admit", admit_fields, true);
	admit_vals(rsp, v);
	if (!rsp->n_net && !any_val("admit", v)) {
		bx_admit_get_rsp_free(rsp);
		return 1;
	}
	print_admit(rsp);
	bx_admit_get_rsp_free(rsp);
	return 0;
}

/* allow NET... | allow any: replace the allow-list. */
static int cmd_allow(int argc, char **argv)
{
	struct bx_allow_set_req *req;
	struct bx_net *nets;
	int ret;

	if (!argc) {
		fprintf(stderr, "%s: usage: %s allow NET... | any\n", prog, prog);
		return 1;
	}
	if (argc == 1 && !strcmp(argv[0], "any"))
		argc = 0;
	req = xalloc(bx_allow_set_req_alloc());
	nets = argc ? xalloc(calloc((size_t)argc, sizeof(*nets))) : NULL;
	__bx_allow_set_req_set_net(req, nets, (unsigned int)argc);
	for (int i = 0; i < argc; i++) {
		struct in6_addr a;
		uint8_t plen;

		if (!parse_net(argv[i], &a, &plen)) {
			fprintf(stderr, "%s: allow: \"%s\" is not an address or ADDR/LEN\n",
				prog, argv[i]);
			bx_allow_set_req_free(req);
			return 1;
		}
		nets[i].addr = xalloc(malloc(sizeof(a)));
		memcpy(nets[i].addr, &a, sizeof(a));
		nets[i]._present.addr_len = sizeof(a);
		nets[i]._present.prefix_len = 1;
		nets[i].prefix_len = plen;
	}
	ret = nl_setup();
	if (!ret && bx_allow_set(ys, req))
		ret = nl_error("allow", admit_fields, true);
	bx_allow_set_req_free(req);
	return ret;
}

/* Wipe the request just sent (a secret or keys) from the socket's buffer. */
static void wipe_request(void)
{
	if (ys && ys->nlh)
		memset(ys->nlh, 0, ys->nlh->nlmsg_len);
}

#define SECRET_LEN	32	/* bytes of a cluster secret, no fewer nor more */

/*
 * secret generate FILE: 32 random bytes into a new FILE, mode 0600 (it
 * must not exist: a secret is never overwritten by accident).
 */
static int secret_generate(const char *path)
{
	unsigned char key[SECRET_LEN];
	ssize_t n;
	int fd, ret = 1;

	if (getrandom(key, sizeof(key), 0) != sizeof(key)) {
		fprintf(stderr, "%s: secret: no random bytes: %s\n", prog,
			strerror(errno));
		return 1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "%s: secret: %s: %s\n", prog, path,
			strerror(errno));
		goto out;
	}
	/* Whatever the umask: 0600. */
	n = fchmod(fd, 0600) ? -1 : write(fd, key, sizeof(key));
	if (n != (ssize_t)sizeof(key) || fsync(fd)) {
		fprintf(stderr, "%s: secret: writing %s: %s\n", prog, path,
			strerror(errno));
		unlink(path);
	} else {
		ret = 0;
	}
	close(fd);
out:
	memset(key, 0, sizeof(key));
	return ret;
}

/*
 * Read the secret: exactly 32 bytes from FILE, which only its owner may
 * read ("-": standard input). A shorter or longer file, or one others
 * can read, is refused: the proofs are MACs an eavesdropper sees, and
 * only a secret of full strength, kept secret, resists guessing.
 */
static int secret_read(const char *path, unsigned char key[SECRET_LEN])
{
	unsigned char extra;
	struct stat st;
	size_t n;
	FILE *f;

	f = strcmp(path, "-") ? fopen(path, "rbe") : stdin;
	if (!f) {
		fprintf(stderr, "%s: secret: %s: %s\n", prog, path,
			strerror(errno));
		return 1;
	}
	if (f != stdin && (fstat(fileno(f), &st) || (st.st_mode & 077))) {
		fprintf(stderr, "%s: secret: %s may be read by others (chmod 600 it)\n",
			prog, path);
		fclose(f);
		return 1;
	}
	n = fread(key, 1, SECRET_LEN, f);
	if (n == SECRET_LEN && fread(&extra, 1, 1, f))
		n++;
	if (f != stdin)
		fclose(f);
	if (n != SECRET_LEN) {
		fprintf(stderr, "%s: secret: %s must hold exactly %d random bytes (bxctl secret generate FILE)\n",
			prog, path, SECRET_LEN);
		memset(key, 0, SECRET_LEN);
		return 1;
	}
	return 0;
}

/*
 * secret FILE | - | clear: set the cluster secret from FILE, or clear it;
 * secret generate FILE: make a new one.
 */
/*
 * secret FILE | - | clear: set the cluster secret from FILE, or clear it;
 * secret generate FILE: make a new one.
 */
static int cmd_secret(int argc, char **argv)
{
	unsigned char key[SECRET_LEN];
	struct bx_secret_set_req *req;
	int ret;

	if (argc == 2 && !strcmp(argv[0], "generate"))
		return secret_generate(argv[1]);
	if (argc != 1) {
		fprintf(stderr, "%s: usage: %s secret FILE | - | clear | generate FILE\n",
			prog, prog);
		return 1;
	}
	req = xalloc(bx_secret_set_req_alloc());
	if (strcmp(argv[0], "clear")) {
		if (secret_read(argv[0], key)) {
			bx_secret_set_req_free(req);
			return 1;
		}
		bx_secret_set_req_set_secret(req, key, sizeof(key));
		memset(key, 0, sizeof(key));
		xalloc(req->secret);
	}
	ret = nl_setup();
	if (!ret && bx_secret_set(ys, req)) {
		wipe_request();
		ret = nl_error("secret", admit_fields, false);
	}
	wipe_request();
	if (req->secret)
		memset(req->secret, 0, req->_present.secret_len);
	bx_secret_set_req_free(req);
	return ret;
}

/*
 * Open @path to write a new secret file: mode 0600 whatever the umask,
 * never over an existing file. A FILE of the caller's on success.
 */
static FILE *secret_create(const char *path)
{
	FILE *f;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return NULL;
	}
	return f;
}

static void hex(FILE *f, const unsigned char *p, size_t n)
{
	while (n--)
		fprintf(f, "%02x", *p++);
}

static bool unhex(const char *s, unsigned char *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (!isxdigit((unsigned char)s[2 * i]) ||
		    !isxdigit((unsigned char)s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = (unsigned char)v;
	}
	return s[2 * n] == 0;
}

/* An address as the kernel keys it: struct in6_addr, IPv4 v4-mapped. */
static bool parse_addr16(const char *s, unsigned char out[16])
{
	struct in_addr a4;

	if (inet_pton(AF_INET6, s, out) == 1)
		return true;
	if (inet_pton(AF_INET, s, &a4) != 1)
		return false;
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, &a4, 4);
	return true;
}

/*
 * keys derive SECRET SELF OUT PEER...: the keys of the pairs (SELF, PEER)
 * under the cluster secret in SECRET, written to a new OUT (mode 0600)
 * for host SELF alone, one "PEER KID KEY" line each (hex). A host given
 * OUT and not the secret proves itself to those peers, and cannot act
 * as any other host.
 */
static int keys_derive(int argc, char **argv)
{
	unsigned char secret[SECRET_LEN], self[16], peer[16], kid[4], key[32];
	int ret = 1;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "%s: usage: %s keys derive SECRET SELF OUT PEER...\n",
			prog, prog);
		return 1;
	}
	if (!parse_addr16(argv[1], self)) {
		fprintf(stderr, "%s: keys: \"%s\" is not an address\n", prog,
			argv[1]);
		return 1;
	}
	for (int i = 3; i < argc; i++)
		if (!parse_addr16(argv[i], peer)) {
			fprintf(stderr, "%s: keys: \"%s\" is not an address\n",
				prog, argv[i]);
			return 1;
		}
	if (secret_read(argv[0], secret))
		return 1;
	f = secret_create(argv[2]);
	if (!f)
		goto out;
	bx_auth_kid(secret, kid);
	for (int i = 3; i < argc; i++) {
		parse_addr16(argv[i], peer);
		bx_auth_pair_key(secret, self, peer, key);
		fprintf(f, "%s ", argv[i]);
		hex(f, kid, sizeof(kid));
		fputc(' ', f);
		hex(f, key, sizeof(key));
		fputc('\n', f);
	}
	memset(key, 0, sizeof(key));
	if (fclose(f)) {
		fprintf(stderr, "%s: keys: writing %s: %s\n", prog, argv[2],
			strerror(errno));
		unlink(argv[2]);
		goto out;
	}
	ret = 0;
out:
	memset(secret, 0, sizeof(secret));
	return ret;
}
/* Free a keys-set request, its keys wiped first. */
static void keys_free(struct bx_keys_set_req *req)
{
	for (unsigned int i = 0; i < req->n_pairkey; i++)
		if (req->pairkey[i].key)
			memset(req->pairkey[i].key, 0,
			       req->pairkey[i]._present.key_len);
	bx_keys_set_req_free(req);
}

/* A copy of @len bytes at @p (the generated request frees it). */
static void *dup_bytes(const void *p, size_t len)
{
	return memcpy(xalloc(malloc(len)), p, len);
}

/*
 * keys FILE | clear: set this host's pair keys from FILE ("PEER KID KEY"
 * lines, as keys derive writes them; readable by its owner alone), or
 * clear them.
 */
static int cmd_keys(int argc, char **argv)
{
	struct bx_keys_set_req *req;
	struct stat st;
	char line[256];
	int ret = 0, n = 0;
	FILE *f;

	if (argc >= 1 && !strcmp(argv[0], "derive"))
		return keys_derive(argc - 1, argv + 1);
	if (argc != 1) {
		fprintf(stderr, "%s: usage: %s keys FILE | clear | derive SECRET SELF OUT PEER...\n",
			prog, prog);
		return 1;
	}
	req = xalloc(bx_keys_set_req_alloc());
	if (strcmp(argv[0], "clear")) {
		f = fopen(argv[0], "re");
		if (!f) {
			fprintf(stderr, "%s: keys: %s: %s\n", prog, argv[0],
				strerror(errno));
			keys_free(req);
			return 1;
		}
		if (fstat(fileno(f), &st) || (st.st_mode & 077)) {
			fprintf(stderr, "%s: keys: %s may be read by others (chmod 600 it)\n",
				prog, argv[0]);
			fclose(f);
			keys_free(req);
			return 1;
		}
		while (!ret && fgets(line, sizeof(line), f)) {
			char addr[64], kidh[16], keyh[80];
			unsigned char a[16], kid[4], key[32];

			n++;
			*strchrnul(line, '#') = 0;
			if (strspn(line, " \t\r\n") == strlen(line))
				continue;
			if (sscanf(line, "%63s %15s %79s", addr, kidh, keyh) != 3 ||
			    !parse_addr16(addr, a) ||
			    !unhex(kidh, kid, sizeof(kid)) ||
			    !unhex(keyh, key, sizeof(key))) {
				fprintf(stderr, "%s: keys: %s:%d: not \"ADDR KID KEY\" (hex)\n",
					prog, argv[0], n);
				ret = 1;
			} else {
				struct bx_pairkey *pk;

				pk = xalloc(realloc(req->pairkey, (req->n_pairkey + 1) *
						    sizeof(*pk)));
				req->pairkey = pk;
				pk += req->n_pairkey++;
				memset(pk, 0, sizeof(*pk));
				pk->addr = dup_bytes(a, sizeof(a));
				pk->_present.addr_len = sizeof(a);
				pk->kid = dup_bytes(kid, sizeof(kid));
				pk->_present.kid_len = sizeof(kid);
				pk->key = dup_bytes(key, sizeof(key));
				pk->_present.key_len = sizeof(key);
			}
			memset(key, 0, sizeof(key));
			memset(keyh, 0, sizeof(keyh));
		}
		memset(line, 0, sizeof(line));
		fclose(f);
		if (ret) {
			keys_free(req);
			return 1;
		}
	}
	ret = nl_setup();
	if (!ret && bx_keys_set(ys, req)) {
		wipe_request();
		ret = nl_error("keys", admit_fields, false);
	}
	wipe_request();
	keys_free(req);
	return ret;
}


/* The words of each line of @path, # comments and blank lines left out. */
static int conf_words(const char *path, char ***words, int *n)
{
	char line[512], **w = NULL;
	int cnt = 0, cap = 0;
	FILE *f;

	*words = NULL;
	*n = 0;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		char *save, *t;

		*strchrnul(line, '#') = 0;
		for (t = strtok_r(line, " \t\r\n", &save); t;
		     t = strtok_r(NULL, " \t\r\n", &save)) {
			if (cnt == cap) {
				char **nw = realloc(w, (cap = cap * 2 + 16) *
						    sizeof(*w));

				if (!nw)
					goto nomem;
				w = nw;
			}
			w[cnt] = strdup(t);
			if (!w[cnt])
				goto nomem;
			cnt++;
		}
	}
	fclose(f);
	*words = w;
	*n = cnt;
	return 1;
nomem:
	fclose(f);
	while (cnt--)
		free(w[cnt]);
	free(w);
	return -ENOMEM;
}

static void conf_free(char **w, int n)
{
	while (n--)
		free(w[n]);
	free(w);
}

/*
 * apply [DIR]: the configuration in DIR (default /etc/bx), as the udev
 * rule runs it whenever bx loads: DIR/allow (networks, as "bxctl
 * allow"; "any" clears the list), DIR/secret (the cluster secret, mode
 * 0600), DIR/keys (pair keys, mode 0600) and DIR/tunables ("NAME VALUE"
 * pairs, as "bxctl set"). A file that is not there, or names nothing,
 * changes nothing. Warns when bx may then be open to any host (no
 * networks in DIR/allow, no secret or keys).
 */
static int cmd_apply(int argc, char **argv)
{
	const char *dir = argc ? argv[0] : "/etc/bx";
	char path[PATH_MAX], **w;
	int n, ret = 0, r;
	bool open_any = true, secret = false;

	if (argc > 1) {
		fprintf(stderr, "%s: usage: %s apply [DIR]\n", prog, prog);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/allow", dir);
	r = conf_words(path, &w, &n);
	if (r < 0) {
		fprintf(stderr, "%s: apply: %s: %s\n", prog, path, strerror(-r));
		return 1;
	}
	/* A file with no network (a template) leaves the list as it is. */
	if (r > 0 && n) {
		ret |= cmd_allow(n, w);
		open_any = n == 1 && !strcmp(w[0], "any");
	}
	if (r > 0)
		conf_free(w, n);
	snprintf(path, sizeof(path), "%s/secret", dir);
	if (!access(path, F_OK)) {
		char *args[] = { path };

		r = cmd_secret(1, args);
		secret = !r;
		ret |= r;
	}
	snprintf(path, sizeof(path), "%s/keys", dir);
	if (!access(path, F_OK)) {
		char *args[] = { path };

		r = cmd_keys(1, args);
		secret |= !r;
		ret |= r;
	}
	snprintf(path, sizeof(path), "%s/tunables", dir);
	r = conf_words(path, &w, &n);
	if (r < 0) {
		fprintf(stderr, "%s: apply: %s: %s\n", prog, path, strerror(-r));
		return 1;
	}
	if (r > 0 && n)
		ret |= cmd_set(n, w);
	if (r > 0)
		conf_free(w, n);
	if (open_any && !secret)
		warn_open();
	return ret ? 1 : 0;
}

/* ---- monitor ------------------------------------------------------------- */

static const char *event_name(uint8_t cmd, const struct field **fields)
{
	switch (cmd) {
	case BX_CMD_CONN_UP_NTF:
		*fields = conn_fields;
		return "conn-up";
	case BX_CMD_CONN_DOWN_NTF:
		*fields = conn_fields;
		return "conn-down";
	case BX_CMD_PEER_RESTART_NTF:
		*fields = conn_fields;
		return "peer-restart";
	case BX_CMD_RECOVERING_NTF:
		*fields = conn_fields;
		return "recovering";
	case BX_CMD_RECOVERED_NTF:
		*fields = conn_fields;
		return "recovered";
	case BX_CMD_DEV_ADD_NTF:
		*fields = dev_fields;
		return "dev-add";
	case BX_CMD_DEV_DEL_NTF:
		*fields = dev_fields;
		return "dev-del";
	}
	*fields = NULL;
	return NULL;
}

/* The text line of a connection event: the essentials. */
static const struct field conn_event_fields[] = {
	{ BX_A_CONN_PEER_ID,	"peer-id",	F_U32, false },
	{ BX_A_CONN_PEER_ADDR,	"peer",		F_ADDR, false },
	{ BX_A_CONN_STATE,	"state",	F_STATE, false },
	{ BX_A_CONN_ACTIVE,	"active",	F_FLAG, false },
	{ BX_A_CONN_DEV_NAME,	"dev",		F_STR, false },
	{ BX_A_CONN_QPN,	"qpn",		F_U32, false },
	{ BX_A_CONN_ERR,	"err",		F_ERRNO, false },
	{ BX_A_CONN_PEER_EPOCH,	"peer-epoch",	F_HEX64, false },
	{ BX_A_CONN_PEER_RESTARTS, "peer-restarts", F_U32, false },
	{ BX_A_CONN_PARKED,	"parked",	F_U32, false },
	{ BX_A_CONN_RECOVERED_OPS, "recovered-ops", F_U64, false },
	{ BX_A_CONN_RECOVER_FAILED, "recover-failed", F_U64, false },
	{ 0 }
};


/*
 * The controller's notifications (a family came or went: bx loaded or
 * unloaded) through the YNL library too: nlctrl's spec has none, so its
 * family description is here, with the family's name for the only
 * attribute wanted.
 */
static const struct ynl_policy_attr ctrl_policy[CTRL_ATTR_FAMILY_NAME + 1] = {
	[CTRL_ATTR_FAMILY_NAME] = { .name = "family-name", .type = YNL_PT_NUL_STR, },
};

static const struct ynl_policy_nest ctrl_nest = {
	.max_attr = CTRL_ATTR_FAMILY_NAME,
	.table = ctrl_policy,
};

static int ctrl_ntf_parse(const struct nlmsghdr *nlh, struct ynl_parse_arg *yarg)
{
	const struct nlattr *attr;
	char *name = yarg->data;

	ynl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (ynl_attr_type(attr) != CTRL_ATTR_FAMILY_NAME)
			continue;
		if (ynl_attr_validate(yarg, attr))
			return YNL_PARSE_CB_ERROR;
		snprintf(name, GENL_NAMSIZ, "%s", ynl_attr_get_str(attr));
	}
	return YNL_PARSE_CB_OK;
}

static void ctrl_ntf_free(struct ynl_ntf_base_type *ntf)
{
	free(ntf);
}

#define CTRL_NTF {							\
	.policy = &ctrl_nest,						\
	.cb = ctrl_ntf_parse,						\
	.alloc_sz = sizeof(struct ynl_ntf_base_type) + GENL_NAMSIZ,	\
	.free = ctrl_ntf_free,						\
}

static const struct ynl_ntf_info ctrl_ntf_info[] = {
	[CTRL_CMD_NEWFAMILY]	= CTRL_NTF,
	[CTRL_CMD_DELFAMILY]	= CTRL_NTF,
	[CTRL_CMD_NEWMCAST_GRP]	= CTRL_NTF,
	[CTRL_CMD_DELMCAST_GRP]	= CTRL_NTF,
};

static const struct ynl_family ctrl_family = {
	.name		= "nlctrl",
	.hdr_len	= sizeof(struct genlmsghdr),
	.ntf_info	= ctrl_ntf_info,
	.ntf_info_size	= YNL_ARRAY_SIZE(ctrl_ntf_info),
};

/* Print one event; true when @limit events are done. */
static bool mon_print(struct ynl_ntf_base_type *ntf, unsigned long *count,
		      unsigned long limit)
{
	const struct field *fields;
	struct val v[ATTR_MAX + 1];
	const char *name;

	name = event_name(ntf->cmd, &fields);
	if (!name)
		return false;
	if (fields == dev_fields && ntf->cmd == BX_CMD_DEV_ADD_NTF)
		dev_add_vals(&((struct bx_dev_add_ntf *)ntf)->obj, v);
	else if (fields == dev_fields)
		dev_del_vals(&((struct bx_dev_del_ntf *)ntf)->obj, v);
	else
		conn_vals(&((struct bx_conn_get_ntf *)ntf)->obj, v);
	if (json) {
		print_json_obj(fields, v, name);
	} else {
		printf("%s ", name);
		print_text_pairs(fields == conn_fields ? conn_event_fields : fields,
				 v, false);
	}
	putchar('\n');
	fflush(stdout);
	++*count;
	return limit && *count >= limit;
}

/*
 * The events queued on ys, printed; true when @limit are done. An event
 * the library cannot parse (malformed, or of a newer module) is skipped.
 */
static bool mon_drain(unsigned long *count, unsigned long limit)
{
	struct ynl_ntf_base_type *ntf;
	bool done = false;

	ys->err.msg[0] = 0;
	errno = 0;
	if (ynl_ntf_check(ys) < 0) {
		if (errno == ENOBUFS)
			fprintf(stderr, "%s: monitor: events lost (receive buffer overrun)\n",
				prog);
		else
			fprintf(stderr, "%s: monitor: an event skipped: %s\n", prog,
				ys->err.msg[0] ? ys->err.msg :
				"malformed, or not known to this bxctl");
	}
	while (!done && (ntf = ynl_ntf_dequeue(ys))) {
		done = mon_print(ntf, count, limit);
		ynl_ntf_free(ntf);
	}
	return done;
}

/* Join "events" on ys. */
static int mon_subscribe(void)
{
	int sz = 1 << 20;

	if (ynl_subscribe(ys, BX_MCGRP_EVENTS))
		return nl_error("monitor: joining group " BX_MCGRP_EVENTS, NULL,
				false);
	/* Events can come in bursts (a device with many connections). */
	(void)setsockopt(ynl_socket_get_fd(ys), SOL_SOCKET, SO_RCVBUF, &sz,
			 sizeof(sz));
	return 0;
}

static int cmd_monitor(unsigned long limit)
{
	struct ynl_sock *ctl;
	unsigned long count = 0;
	int ret;

	/*
	 * The controller's group first, so a reload is never missed; bx's
	 * last, so that once every socket of the process has joined a
	 * group it is listening (selftests/bx/lib.sh, mon_ready).
	 */
	ctl = ynl_sock_create(&ctrl_family, NULL);
	ret = nl_setup();
	if (!ret && ctl && ynl_subscribe(ctl, "notify")) {
		ynl_sock_destroy(ctl);
		ctl = NULL;
	}
	if (!ret)
		ret = mon_subscribe();
	if (ret) {
		if (ctl)
			ynl_sock_destroy(ctl);
		return ret;
	}
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = ys ? ynl_socket_get_fd(ys) : -1, .events = POLLIN },
			{ .fd = ctl ? ynl_socket_get_fd(ctl) : -1, .events = POLLIN },
		};
		struct ynl_ntf_base_type *ntf;
		bool reload = false;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: monitor: poll: %s\n", prog,
				strerror(errno));
			ret = 1;
			break;
		}
		if (p[0].revents && mon_drain(&count, limit))
			break;
		if (!p[1].revents)
			continue;
		(void)ynl_ntf_check(ctl);
		while ((ntf = ynl_ntf_dequeue(ctl))) {
			reload |= ntf->cmd == CTRL_CMD_NEWFAMILY &&
				  !strcmp((const char *)ntf->data, BX_FAMILY_NAME);
			ynl_ntf_free(ntf);
		}
		/*
		 * Our family came back (module reloaded): a new socket of
		 * its new ids. Unloading dropped every member of the old
		 * group, so join even if the ids are the same as before.
		 */
		if (reload) {
			if (ys && mon_drain(&count, limit))
				break;
			if ((nl_setup() || mon_subscribe()) && ys) {
				ynl_sock_destroy(ys);
				ys = NULL;
			}
		}
	}
	if (ctl)
		ynl_sock_destroy(ctl);
	return ret;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"NAME\n"
"    bxctl - show and tune bx, the host-wide RDMA transport\n"
"\n"
"SYNOPSIS\n"
"    bxctl [OPTIONS] dev [show]\n"
"    bxctl [OPTIONS] conn [show] [peer ID [lane N]]\n"
"    bxctl [OPTIONS] proc [show]\n"
"    bxctl [OPTIONS] stats [show]\n"
"    bxctl [OPTIONS] tunables [show]\n"
"    bxctl set NAME VALUE [NAME VALUE...]\n"
"    bxctl [OPTIONS] admit [show]\n"
"    bxctl allow NET... | any\n"
"    bxctl secret FILE | - | clear | generate FILE\n"
"    bxctl keys FILE | clear | derive SECRET SELF OUT PEER...\n"
"    bxctl apply [DIR]\n"
"    bxctl [OPTIONS] monitor [-c N]\n"
"    bxctl -h | -V\n"
"\n"
"DESCRIPTION\n"
"    bxctl talks to the bx kernel module over its generic netlink family\n"
"    \"bx\" (Documentation/netlink/specs/bx.yaml).\n"
"\n"
"    dev        RDMA devices bx is bound to: name, port, network device.\n"
"    conn       Connections to peer hosts, qps_per_peer (lanes) per peer:\n"
"               peer id and address, lane, state (connecting, up, down),\n"
"               direction (out: this host connected), device, QP number,\n"
"               operations awaiting a response, messages, credits, send\n"
"               window, error. With \"peer ID\", that one connection (lane\n"
"               0, or \"lane N\") with every counter.\n"
"    proc       Processes with /dev/bx open: pid, payload bytes sent and\n"
"               received, operations in flight, region size.\n"
"    stats      Host-wide counters.\n"
"    tunables   Current tunables (Documentation/bx.rst, \"Tunables\").\n"
"    set        Set tunables, all in one request: all or nothing. Names\n"
"               as in tunables (wnd-kb, wnd-ops, host-wnd-kb,\n"
"               host-wnd-ops, rx-wnd-kb, rd-max, credit-batch,\n"
"               rdv-threshold, drr-quantum, flow-control, piece-kb,\n"
"               connect-timeout-ms, ack-timeout, recover-ms, rd-depth,\n"
"               refuse-ms, peer-linger-ms, user-ops-max, user-peers-max,\n"
"               user-services-max, op-timeout-ms, region-cap-mb,\n"
"               proof-ms, secret-overlap-ms, remote-peers-max,\n"
"               op-timeout-max-ms, user-wnd-pct, qps-per-peer;\n"
"               \"_\" for \"-\" works too). Needs CAP_NET_ADMIN. A value\n"
"               out of range is refused by the kernel, which says why.\n"
"    admit      Who may be a peer: the allow-list (\"any\" when empty),\n"
"               whether a cluster secret is set, connect requests refused,\n"
"               failed proofs, protocol violations of peers.\n"
"    allow      Replace the allow-list: only hosts in these networks\n"
"               (ADDR/LEN, IPv4 or IPv6; an address alone: that host) may\n"
"               connect, or be connected to; \"any\" clears it. Needs\n"
"               CAP_NET_ADMIN.\n"
"    secret     Set the cluster secret from FILE (\"-\": standard input),\n"
"               which must hold exactly 32 random bytes and be readable\n"
"               by its owner alone, or clear it; \"generate FILE\" makes\n"
"               one (mode 0600; FILE must not exist). With a secret,\n"
"               every new connection proves it both ways, each host under\n"
"               its own key; the one before stays good for\n"
"               secret-overlap-ms. Needs CAP_NET_ADMIN; never shown.\n"
"    keys       Set this host's pair keys from FILE (\"PEER KID KEY\" lines,\n"
"               mode 0600), or clear them; \"derive\" writes such a FILE\n"
"               (OUT) for host SELF from the cluster secret SECRET. A\n"
"               host given its pair keys and not the secret proves itself\n"
"               to those peers and cannot act as another host. Needs\n"
"               CAP_NET_ADMIN (derive: none); never shown.\n"
"    apply      Apply DIR (default /etc/bx): DIR/allow (networks, one or\n"
"               more per line), DIR/secret, DIR/keys, DIR/tunables (NAME VALUE\n"
"               pairs); the packaged udev rule runs it when bx loads.\n"
"               Warns if bx is then open to any host.\n"
"    monitor    Print one line per event (conn-up, conn-down, peer-restart,\n"
"               recovering, recovered, dev-add, dev-del) until killed;\n"
"               follows bx across a module\n"
"               reload.\n"
"\n"
"OPTIONS\n"
"    -j, --json     JSON: one document per command (an array for dev,\n"
"                   conn and proc, an object otherwise); monitor prints\n"
"                   one object per line, with \"event\" first.\n"
"    -d, --details  conn/dev/proc: every attribute, as name value pairs.\n"
"    -c, --count N  monitor: exit after N events.\n"
"    -h, --help     This text.\n"
"    -V, --version  Version.\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 on any error, with the kernel's extended ACK message\n"
"    (if any) and the errno text on stderr.\n"
"\n"
"EXAMPLES\n"
"    bxctl conn\n"
"    bxctl -j conn show peer 1\n"
"    bxctl set wnd-kb 1024 wnd-ops 256\n"
"    bxctl -j monitor -c 2\n");
}

static bool is(const char *arg, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(arg, *names))
			return true;
	return false;
}

static const char *const A_DEV[] = { "dev", "device", "devices", NULL };
static const char *const A_CONN[] = { "conn", "conns", "connection",
				      "connections", NULL };
static const char *const A_PROC[] = { "proc", "procs", "process",
				      "processes", NULL };
static const char *const A_STATS[] = { "stats", "stat", "statistics", NULL };
static const char *const A_TUN[] = { "tunables", "tunable", "tun", NULL };
static const char *const A_SET[] = { "set", NULL };
static const char *const A_MON[] = { "monitor", "mon", NULL };
static const char *const A_SHOW[] = { "show", "list", "get", NULL };
static const char *const A_ADMIT[] = { "admit", "admission", NULL };

static int bad_args(const char *obj, const char *arg)
{
	fprintf(stderr, "%s: %s: unexpected argument \"%s\"; see %s -h\n",
		prog, obj, arg, prog);
	return 1;
}

/* "[show]" and nothing else. */
static int only_show(const char *obj, int argc, char **argv)
{
	if (argc > 0 && is(argv[0], A_SHOW)) {
		argc--;
		argv++;
	}
	return argc ? bad_args(obj, argv[0]) : 0;
}

int main(int argc, char **argv)
{
	unsigned long count = 0;
	bool have_count = false;
	char **pos;
	int npos = 0, ret;

	pos = calloc((size_t)argc + 1, sizeof(*pos));
	if (!pos)
		return 1;
	/* Options anywhere (only numbers after -c), "--" ends them. */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			while (++i < argc)
				pos[npos++] = argv[i];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			pos[npos++] = argv[i];
		} else if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "-d") || !strcmp(a, "--details")) {
			details = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("bxctl %s (bx netlink family version %d)\n",
			       BXCTL_VERSION, BX_FAMILY_VERSION);
			return 0;
		} else if (!strcmp(a, "-c") || !strcmp(a, "--count")) {
			char *end;

			if (++i >= argc) {
				fprintf(stderr, "%s: -c needs a number\n", prog);
				return 1;
			}
			errno = 0;
			count = strtoul(argv[i], &end, 10);
			if (errno || *end || !*argv[i] || argv[i][0] == '-' || !count) {
				fprintf(stderr, "%s: -c: \"%s\" is not a positive number\n",
					prog, argv[i]);
				return 1;
			}
			have_count = true;
		} else {
			fprintf(stderr, "%s: unknown option \"%s\"; see %s -h\n",
				prog, a, prog);
			return 1;
		}
	}
	if (!npos) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(pos[0], "help")) {
		usage(stdout);
		return 0;
	}
	if (have_count && !is(pos[0], A_MON)) {
		fprintf(stderr, "%s: -c is for monitor only\n", prog);
		return 1;
	}

	if (is(pos[0], A_DEV)) {
		ret = only_show("dev", npos - 1, pos + 1);
		if (!ret)
			ret = nl_setup();
		if (!ret)
			ret = cmd_dev();
	} else if (is(pos[0], A_CONN)) {
		int i = 1;
		uint32_t peer = 0, lane = 0;
		bool one = false;

		if (i < npos && is(pos[i], A_SHOW))
			i++;
		if (i < npos && !strcmp(pos[i], "peer"))
			i++;
		if (i < npos) {
			if (!parse_u32(pos[i], &peer)) {
				fprintf(stderr, "%s: conn: \"%s\" is not a peer id\n",
					prog, pos[i]);
				return 1;
			}
			one = true;
			i++;
			if (i + 1 < npos && !strcmp(pos[i], "lane")) {
				if (!parse_u32(pos[i + 1], &lane)) {
					fprintf(stderr, "%s: conn: \"%s\" is not a lane\n",
						prog, pos[i + 1]);
					return 1;
				}
				i += 2;
			}
		} else if (i > 1 && !strcmp(pos[i - 1], "peer")) {
			fprintf(stderr, "%s: conn: peer needs an id\n", prog);
			return 1;
		}
		if (i < npos)
			return bad_args("conn", pos[i]);
		ret = nl_setup();
		if (!ret)
			ret = one ? cmd_conn_get(peer, lane) : cmd_conn();
	} else if (is(pos[0], A_PROC)) {
		ret = only_show("proc", npos - 1, pos + 1);
		if (!ret)
			ret = nl_setup();
		if (!ret)
			ret = cmd_proc();
	} else if (is(pos[0], A_STATS)) {
		ret = only_show("stats", npos - 1, pos + 1);
		if (!ret)
			ret = nl_setup();
		if (!ret)
			ret = cmd_stats();
	} else if (is(pos[0], A_TUN)) {
		if (npos > 1 && !strcmp(pos[1], "set")) {
			ret = cmd_set(npos - 2, pos + 2);
		} else {
			ret = only_show("tunables", npos - 1, pos + 1);
			if (!ret)
				ret = nl_setup();
			if (!ret)
				ret = cmd_tunables();
		}
	} else if (is(pos[0], A_SET)) {
		ret = cmd_set(npos - 1, pos + 1);
	} else if (is(pos[0], A_ADMIT)) {
		ret = only_show("admit", npos - 1, pos + 1);
		if (!ret)
			ret = nl_setup();
		if (!ret)
			ret = cmd_admit();
	} else if (!strcmp(pos[0], "allow")) {
		ret = cmd_allow(npos - 1, pos + 1);
	} else if (!strcmp(pos[0], "secret")) {
		ret = cmd_secret(npos - 1, pos + 1);
	} else if (!strcmp(pos[0], "keys")) {
		ret = cmd_keys(npos - 1, pos + 1);
	} else if (!strcmp(pos[0], "apply")) {
		ret = cmd_apply(npos - 1, pos + 1);
	} else if (is(pos[0], A_MON)) {
		if (npos > 1)
			return bad_args("monitor", pos[1]);
		ret = cmd_monitor(count);
	} else {
		fprintf(stderr, "%s: unknown object \"%s\"; see %s -h\n",
			prog, pos[0], prog);
		ret = 1;
	}
	if (fflush(stdout) || ferror(stdout)) {
		if (!ret)
			fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno));
		ret = 1;
	}
	if (ys)
		ynl_sock_destroy(ys);
	free(pos);
	return ret;
}
