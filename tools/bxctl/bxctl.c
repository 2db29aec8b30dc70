// SPDX-License-Identifier: GPL-2.0
/*
 * bxctl: show and tune bx through its generic netlink family "bx"
 * (Documentation/netlink/specs/bx.yaml), in the manner of iproute2's
 * rdma and ss. See usage() or tools/bxctl/README.md.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
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
#include "bxnl.h"

#define BXCTL_VERSION	"0.1"

static const char *prog = "bxctl";
static bool json, details;
static struct bxnl nl;

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
	F_S32,
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

static const struct field dev_fields[] = {
	{ BX_A_DEV_NAME,	"name",		F_STR, false },
	{ BX_A_DEV_PORT,	"port",		F_U32, false },
	{ BX_A_DEV_NETDEV,	"netdev",	F_STR, false },
	{ 0 }
};

static const struct field conn_fields[] = {
	{ BX_A_CONN_PEER_ID,		"peer-id",	  F_U32, false },
	{ BX_A_CONN_PEER_ADDR,		"peer-addr",	  F_ADDR, false },
	{ BX_A_CONN_LANE,		"lane",		  F_U32, false },
	{ BX_A_CONN_STATE,		"state",	  F_STATE, false },
	{ BX_A_CONN_ACTIVE,		"active",	  F_FLAG, false },
	{ BX_A_CONN_DEV_NAME,		"dev-name",	  F_STR, false },
	{ BX_A_CONN_QPN,		"qpn",		  F_U32, false },
	{ BX_A_CONN_ERR,		"err",		  F_ERRNO, false },
	{ BX_A_CONN_PEER_EPOCH,		"peer-epoch",	  F_HEX64, true },
	{ BX_A_CONN_AWAITING,		"awaiting",	  F_U32, false },
	{ BX_A_CONN_PEER_RESTARTS,	"peer-restarts",  F_U32, false },
	{ BX_A_CONN_TX_MSGS,		"tx-msgs",	  F_U64, false },
	{ BX_A_CONN_RX_MSGS,		"rx-msgs",	  F_U64, false },
	{ BX_A_CONN_CREDITS,		"credits",	  F_U32, true },
	{ BX_A_CONN_CREDITS_MAX,	"credits-max",	  F_U32, false },
	{ BX_A_CONN_GRANT,		"grant",	  F_U32, false },
	{ BX_A_CONN_CREDIT_STALLS,	"credit-stalls",  F_U64, false },
	{ BX_A_CONN_CREDIT_UPDATES,	"credit-updates", F_U64, false },
	{ BX_A_CONN_WND_BYTES_INFLIGHT, "wnd-bytes-inflight", F_U64, true },
	{ BX_A_CONN_WND_OPS_INFLIGHT,	"wnd-ops-inflight", F_U32, false },
	{ BX_A_CONN_WND_PEAK_BYTES,	"wnd-peak-bytes", F_U64, false },
	{ BX_A_CONN_WND_WAITS,		"wnd-waits",	  F_U64, false },
	{ BX_A_CONN_RD_BYTES_INFLIGHT,	"rd-bytes-inflight", F_U64, true },
	{ BX_A_CONN_RD_READS_INFLIGHT,	"rd-reads-inflight", F_U32, false },
	{ BX_A_CONN_RD_PEAK_BYTES,	"rd-peak-bytes",  F_U64, false },
	{ BX_A_CONN_BUSY_RETRIES,	"busy-retries",	  F_U64, false },
	{ BX_A_CONN_RNR,		"rnr",		  F_U64, false },
	{ BX_A_CONN_PARKED,		"parked",	  F_U32, false },
	{ BX_A_CONN_RECOVERIES,		"recoveries",	  F_U32, false },
	{ BX_A_CONN_RECOVERED_OPS,	"recovered-ops",  F_U64, false },
	{ BX_A_CONN_RECOVER_FAILED,	"recover-failed", F_U64, false },
	{ BX_A_CONN_DUP_PUSHES,		"dup-pushes",	  F_U64, false },
	{ BX_A_CONN_WND_SMALL_INFLIGHT, "wnd-small-inflight", F_U32, false },
	{ BX_A_CONN_SMALL_PASSES,	"small-passes",	  F_U64, false },
	{ BX_A_CONN_AUTH,		"auth",		  F_FLAG, true },
	{ BX_A_CONN_PEER_VIOLATIONS,	"peer-violations", F_U32, false },
	{ BX_A_CONN_PEER_REFUSED,	"peer-refused",	  F_U32, false },
	{ BX_A_CONN_PEER_REFUSING_MS,	"peer-refusing-ms", F_U32, false },
	{ 0 }
};

static const struct field proc_fields[] = {
	{ BX_A_PROC_PID,		"pid",		F_U32, false },
	{ BX_A_PROC_BYTES_TX,		"bytes-tx",	F_U64, false },
	{ BX_A_PROC_BYTES_RX,		"bytes-rx",	F_U64, false },
	{ BX_A_PROC_INFLIGHT,		"inflight",	F_U32, false },
	{ BX_A_PROC_REGION_BYTES,	"region-bytes",	F_U64, false },
	{ 0 }
};

static const struct field stats_fields[] = {
	{ BX_A_STATS_CONNS,		"conns",	 F_U32, false },
	{ BX_A_STATS_OPS_INFLIGHT,	"ops-inflight",	 F_U64, false },
	{ BX_A_STATS_MRS_INUSE,		"mrs-inuse",	 F_U64, false },
	{ BX_A_STATS_REGION_BYTES,	"region-bytes",	 F_U64, false },
	{ BX_A_STATS_COPIED_BYTES,	"copied-bytes",	 F_U64, false },
	{ BX_A_STATS_TX_BYTES_INFLIGHT, "tx-bytes-inflight", F_U64, false },
	{ BX_A_STATS_TX_PEAK_BYTES,	"tx-peak-bytes", F_U64, false },
	{ BX_A_STATS_RX_BYTES_INFLIGHT, "rx-bytes-inflight", F_U64, false },
	{ BX_A_STATS_RX_PEAK_BYTES,	"rx-peak-bytes", F_U64, false },
	{ BX_A_STATS_BUSY_RETRIES,	"busy-retries",	 F_U64, false },
	{ BX_A_STATS_RNR_EVENTS,	"rnr-events",	 F_U64, false },
	{ BX_A_STATS_DUP_PUSHES,	"dup-pushes",	 F_U64, false },
	{ BX_A_STATS_RECOVERED_OPS,	"recovered-ops", F_U64, false },
	{ BX_A_STATS_RECOVER_FAILED,	"recover-failed", F_U64, false },
	{ BX_A_STATS_TX_SMALL_INFLIGHT, "tx-small-inflight", F_U32, false },
	{ BX_A_STATS_SMALL_PASSES,	"small-passes",	 F_U64, false },
	{ BX_A_STATS_PEERS,		"peers",	 F_U32, false },
	{ BX_A_STATS_PIECES,		"pieces",	 F_U64, false },
	{ 0 }
};

static const struct field tun_fields[] = {
	{ BX_A_TUNABLES_WND_KB,		"wnd-kb",	 F_U32, false },
	{ BX_A_TUNABLES_WND_OPS,	"wnd-ops",	 F_U32, false },
	{ BX_A_TUNABLES_HOST_WND_KB,	"host-wnd-kb",	 F_U32, false },
	{ BX_A_TUNABLES_HOST_WND_OPS,	"host-wnd-ops",	 F_U32, false },
	{ BX_A_TUNABLES_RX_WND_KB,	"rx-wnd-kb",	 F_U32, false },
	{ BX_A_TUNABLES_RD_MAX,		"rd-max",	 F_U32, false },
	{ BX_A_TUNABLES_CREDIT_BATCH,	"credit-batch",	 F_U32, false },
	{ BX_A_TUNABLES_RDV_THRESHOLD,	"rdv-threshold", F_U32, false },
	{ BX_A_TUNABLES_DRR_QUANTUM,	"drr-quantum",	 F_U32, false },
	{ BX_A_TUNABLES_FLOW_CONTROL,	"flow-control",	 F_U8, false },
	{ BX_A_TUNABLES_PIECE_KB,	"piece-kb",	 F_U32, false },
	{ BX_A_TUNABLES_CONNECT_TIMEOUT_MS, "connect-timeout-ms", F_U32, false },
	{ BX_A_TUNABLES_ACK_TIMEOUT,	"ack-timeout",	 F_U32, false },
	{ BX_A_TUNABLES_RECOVER_MS,	"recover-ms",	 F_U32, false },
	{ BX_A_TUNABLES_RD_DEPTH,	"rd-depth",	 F_U32, false },
	{ BX_A_TUNABLES_REFUSE_MS,	"refuse-ms",	 F_U32, false },
	{ BX_A_TUNABLES_PEER_LINGER_MS,	"peer-linger-ms", F_U32, false },
	{ BX_A_TUNABLES_USER_OPS_MAX,	"user-ops-max",	 F_U32, false },
	{ BX_A_TUNABLES_USER_PEERS_MAX,	"user-peers-max", F_U32, false },
	{ BX_A_TUNABLES_USER_SERVICES_MAX, "user-services-max", F_U32, false },
	{ BX_A_TUNABLES_REGION_CAP_MB,	"region-cap-mb", F_U32, false },
	{ BX_A_TUNABLES_OP_TIMEOUT_MS,	"op-timeout-ms", F_U32, false },
	{ BX_A_TUNABLES_PROOF_MS,	"proof-ms",	 F_U32, false },
	{ BX_A_TUNABLES_SECRET_OVERLAP_MS, "secret-overlap-ms", F_U32, false },
	{ BX_A_TUNABLES_REMOTE_PEERS_MAX, "remote-peers-max", F_U32, false },
	{ BX_A_TUNABLES_OP_TIMEOUT_MAX_MS, "op-timeout-max-ms", F_U32, false },
	{ BX_A_TUNABLES_USER_WND_PCT,	"user-wnd-pct",	 F_U32, false },
	{ BX_A_TUNABLES_QPS_PER_PEER,	"qps-per-peer",	 F_U32, false },
	{ 0 }
};

/* admit-get, but for the allow-list (printed apart, admit_cb()). */
static const struct field admit_fields[] = {
	{ BX_A_ADMIT_SECRET_ON,		"secret-on",	 F_U8, false },
	{ BX_A_ADMIT_REFUSED,		"refused",	 F_U64, false },
	{ BX_A_ADMIT_AUTH_FAILURES,	"auth-failures", F_U64, false },
	{ BX_A_ADMIT_VIOLATIONS,	"violations",	 F_U64, false },
	{ BX_A_ADMIT_CHALLENGES,	"challenges",	 F_U64, false },
	{ BX_A_ADMIT_STALE_COOKIES,	"stale-cookies", F_U64, false },
	{ BX_A_ADMIT_SECRET_PREV,	"secret-prev",	 F_U8, false },
	{ BX_A_ADMIT_PAIRKEYS,		"pairkeys",	 F_U32, false },
	{ 0 }
};

#define ATTR_MAX	64	/* above every BX_A_*_MAX */

_Static_assert(BX_A_CONN_MAX < ATTR_MAX && BX_A_STATS_MAX < ATTR_MAX &&
	      BX_A_PROC_MAX < ATTR_MAX && BX_A_DEV_MAX < ATTR_MAX &&
	      BX_A_TUNABLES_MAX < ATTR_MAX && BX_A_ADMIT_MAX < ATTR_MAX,
	      "ATTR_MAX too small");

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

static void fmt_addr(const struct nlattr *a, char *buf, size_t len)
{
	struct in6_addr a6;

	snprintf(buf, len, "?");
	if (!bxnl_get(a, &a6, sizeof(a6)))
		return;
	if (IN6_IS_ADDR_V4MAPPED(&a6))
		inet_ntop(AF_INET, &a6.s6_addr[12], buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, &a6, buf, (socklen_t)len);
}

/*
 * Format attribute @a as field @f into @buf: for text (@js false) or as
 * a JSON value. False if absent or malformed (flags: never).
 */
static bool fmt_field(const struct field *f, const struct nlattr *a, bool js,
		      char *buf, size_t len)
{
	uint64_t u64;
	uint32_t u32;
	int32_t s32;
	uint8_t u8;
	const char *s;

	switch (f->fmt) {
	case F_U8:
		if (!bxnl_get_u8(a, &u8))
			return false;
		snprintf(buf, len, "%u", u8);
		return true;
	case F_U32:
		if (!bxnl_get_u32(a, &u32))
			return false;
		snprintf(buf, len, "%" PRIu32, u32);
		return true;
	case F_S32:
	case F_ERRNO:
		if (!bxnl_get_s32(a, &s32))
			return false;
		snprintf(buf, len, "%" PRId32, s32);
		return true;
	case F_U64:
		if (!bxnl_get_u64(a, &u64))
			return false;
		snprintf(buf, len, "%" PRIu64, u64);
		return true;
	case F_HEX64:
		if (!bxnl_get_u64(a, &u64))
			return false;
		snprintf(buf, len, js ? "%" PRIu64 : "%#" PRIx64, u64);
		return true;
	case F_FLAG:
		snprintf(buf, len, "%s", a ? "true" : "false");
		return true;
	case F_STATE:
		if (!bxnl_get_u32(a, &u32))
			return false;
		s = state_name(u32);
		if (s)
			snprintf(buf, len, js ? "\"%s\"" : "%s", s);
		else
			snprintf(buf, len, js ? "\"%" PRIu32 "\"" : "%" PRIu32, u32);
		return true;
	case F_ADDR: {
		char tmp[INET6_ADDRSTRLEN];

		if (!a || bxnl_len(a) != sizeof(struct in6_addr))
			return false;
		fmt_addr(a, tmp, sizeof(tmp));
		snprintf(buf, len, js ? "\"%s\"" : "%s", tmp);
		return true;
	}
	case F_STR:
		s = bxnl_get_str(a);
		if (!s)
			return false;
		if (js) {
			/* Escaped by the caller, who prints strings itself. */
			snprintf(buf, len, "%s", s);
		} else {
			snprintf(buf, len, "%s", s);
			sanitize(buf);
		}
		return true;
	}
	return false;
}

/* Print the fields of one object as a JSON object. */
static void print_json_obj(const struct field *fields,
			   const struct nlattr **tb, const char *event)
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
		if (!fmt_field(f, tb[f->type], true, buf, sizeof(buf)))
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
static void print_text_pairs(const struct field *fields,
			     const struct nlattr **tb, bool wrap)
{
	bool first = true;
	char buf[256];

	for (const struct field *f = fields; f->name; f++) {
		if (f->fmt == F_FLAG) {
			if (tb[f->type]) {
				printf("%s%s", first ? "" : " ", f->name);
				first = false;
			}
			continue;
		}
		if (!fmt_field(f, tb[f->type], false, buf, sizeof(buf)))
			continue;
		if (wrap && f->brk && !first)
			printf("\n   ");
		printf("%s%s %s", first ? "" : " ", f->name, buf);
		first = false;
	}
}

/* One "name  value" line per field, aligned. */
static void print_text_lines(const struct field *fields,
			     const struct nlattr **tb)
{
	size_t w = 0;
	char buf[256];

	for (const struct field *f = fields; f->name; f++)
		if (strlen(f->name) > w)
			w = strlen(f->name);
	for (const struct field *f = fields; f->name; f++)
		if (fmt_field(f, tb[f->type], false, buf, sizeof(buf)))
			printf("%-*s  %s\n", (int)w, f->name, buf);
}

/* ---- tables ------------------------------------------------------------- */

#define TBL_COLS	16

struct table {
	int	ncols;
	char	**cells;	/* row-major, ncols per row; row 0 = header */
	size_t	n, cap;
};

static void tbl_add(struct table *t, const char *s)
{
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		char **c = realloc(t->cells, ncap * sizeof(*c));

		if (!c) {
			fprintf(stderr, "%s: out of memory\n", prog);
			exit(1);
		}
		t->cells = c;
		t->cap = ncap;
	}
	t->cells[t->n] = strdup(s ? s : "-");
	if (!t->cells[t->n]) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	t->n++;
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
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->n = t->cap = 0;
}

/* The text of attribute @type of @fields in @tb, or "-". */
static const char *cell(const struct field *fields, const struct nlattr **tb,
			int type, char *buf, size_t len)
{
	for (const struct field *f = fields; f->name; f++)
		if (f->type == type)
			return fmt_field(f, tb[type], false, buf, len) ? buf : "-";
	return "-";
}

/* ---- errors ------------------------------------------------------------- */

/*
 * Report a failed request: the kernel's extended ACK (naming the
 * offending attribute of @req by its name in @fields) and the errno text.
 */
static int nl_error(const char *what, int err, const struct bxnl_msg *req,
		    const struct field *fields)
{
	const char *attr = NULL;

	if (req && fields && nl.ext.has_off)
		attr = field_name(fields, bxnl_attr_at(req, nl.ext.off));
	fprintf(stderr, "%s: %s: ", prog, what);
	if (attr)
		fprintf(stderr, "%s: ", attr);
	if (nl.ext.msg[0]) {
		fprintf(stderr, "%s", nl.ext.msg);
		if (nl.ext.has_range)
			fprintf(stderr, " (valid range %" PRIu64 "..%" PRIu64 ")",
				nl.ext.min, nl.ext.max);
		if (nl.ext.has_miss) {
			const char *m = fields ? field_name(fields, (int)nl.ext.miss_type) : NULL;

			if (m)
				fprintf(stderr, " (missing %s)", m);
			else
				fprintf(stderr, " (missing attribute %" PRIu32 ")",
					nl.ext.miss_type);
		}
		fprintf(stderr, ": ");
	}
	fprintf(stderr, "%s", strerror(-err));
	if (err == -EPERM)
		fprintf(stderr, " (needs CAP_NET_ADMIN)");
	fputc('\n', stderr);
	return 1;
}

static int nl_setup(const char *grp)
{
	int ret = bxnl_open(&nl);

	if (ret) {
		fprintf(stderr, "%s: netlink socket: %s\n", prog, strerror(-ret));
		return 1;
	}
	ret = bxnl_resolve(&nl, BX_FAMILY_NAME, grp);
	if (ret == -ENOENT) {
		fprintf(stderr,
			"%s: generic netlink family \"%s\" not found: is the bx module loaded?\n",
			prog, BX_FAMILY_NAME);
		return 1;
	}
	if (ret)
		return nl_error("resolving family " BX_FAMILY_NAME, ret, NULL, NULL);
	return 0;
}

/* ---- dumps and gets ------------------------------------------------------ */

struct collect {
	const struct field	*fields;
	struct table		tbl;
	unsigned int		n;
	int			(*row)(struct collect *c, const struct nlattr **tb);
};

static int collect_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[ATTR_MAX + 1];
	struct collect *c = arg;

	if (bxnl_parse_genl(nlh, tb, ATTR_MAX)) {
		fprintf(stderr, "%s: malformed message from the kernel\n", prog);
		return -EPROTO;
	}
	if (json) {
		/* Only complete, consistent dumps get here: no partial output. */
		putchar(c->n ? ',' : '[');
		print_json_obj(c->fields, tb, NULL);
	} else if (c->row) {
		c->row(c, tb);
	} else {
		print_text_pairs(c->fields, tb, details);
		putchar('\n');
	}
	c->n++;
	return 0;
}

/* Dump @cmd; rows via @c (tables) or JSON. */
static int run_dump(uint8_t cmd, const char *what, struct collect *c)
{
	struct bxnl_msg m;
	int ret;

	bxnl_msg_init(&m, nl.family, cmd, BX_FAMILY_VERSION);
	ret = bxnl_dump(&nl, &m, collect_cb, c);
	if (json) {
		if (!ret || c->n)
			printf("%s]\n", c->n ? "" : "[");
	} else if (!ret && c->tbl.ncols) {
		tbl_print(&c->tbl);
	}
	if (ret == -EINTR) {
		fprintf(stderr, "%s: %s: the objects kept changing during %d dumps\n",
			prog, what, nl.dump_tries);
		return 1;
	}
	if (ret)
		return nl_error(what, ret, &m, c->fields);
	return 0;
}

static int dev_row(struct collect *c, const struct nlattr **tb)
{
	char b[256];

	tbl_add(&c->tbl, cell(dev_fields, tb, BX_A_DEV_NAME, b, sizeof(b)));
	tbl_add(&c->tbl, cell(dev_fields, tb, BX_A_DEV_PORT, b, sizeof(b)));
	tbl_add(&c->tbl, cell(dev_fields, tb, BX_A_DEV_NETDEV, b, sizeof(b)));
	return 0;
}

static int cmd_dev(void)
{
	struct collect c = { .fields = dev_fields, .row = dev_row };

	if (!json && !details) {
		c.tbl.ncols = 3;
		tbl_add(&c.tbl, "NAME");
		tbl_add(&c.tbl, "PORT");
		tbl_add(&c.tbl, "NETDEV");
	} else {
		c.row = NULL;
	}
	return run_dump(BX_CMD_DEV_GET, "dev", &c);
}

static int conn_row(struct collect *c, const struct nlattr **tb)
{
	const struct field *F = conn_fields;
	char b[256], b2[64];
	uint32_t x, y;
	uint64_t q;

	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_PEER_ID, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_PEER_ADDR, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_LANE, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_STATE, b, sizeof(b)));
	tbl_add(&c->tbl, tb[BX_A_CONN_ACTIVE] ? "out" : "in");
	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_DEV_NAME, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_QPN, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_AWAITING, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_TX_MSGS, b, sizeof(b)));
	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_RX_MSGS, b, sizeof(b)));
	if (bxnl_get_u32(tb[BX_A_CONN_CREDITS], &x) &&
	    bxnl_get_u32(tb[BX_A_CONN_CREDITS_MAX], &y))
		snprintf(b2, sizeof(b2), "%" PRIu32 "/%" PRIu32, x, y);
	else
		snprintf(b2, sizeof(b2), "-");
	tbl_add(&c->tbl, b2);
	if (bxnl_get_u64(tb[BX_A_CONN_WND_BYTES_INFLIGHT], &q) &&
	    bxnl_get_u32(tb[BX_A_CONN_WND_OPS_INFLIGHT], &x))
		snprintf(b2, sizeof(b2), "%" PRIu64 "/%" PRIu32, q, x);
	else
		snprintf(b2, sizeof(b2), "-");
	tbl_add(&c->tbl, b2);
	tbl_add(&c->tbl, cell(F, tb, BX_A_CONN_ERR, b, sizeof(b)));
	return 0;
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

	if (!json && !details)
		conn_header(&c);
	else
		c.row = NULL;
	return run_dump(BX_CMD_CONN_GET, "conn", &c);
}

static int proc_row(struct collect *c, const struct nlattr **tb)
{
	char b[256];

	for (const struct field *f = proc_fields; f->name; f++)
		tbl_add(&c->tbl, cell(proc_fields, tb, f->type, b, sizeof(b)));
	return 0;
}

static int cmd_proc(void)
{
	struct collect c = { .fields = proc_fields, .row = proc_row };

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
	return run_dump(BX_CMD_PROC_GET, "proc", &c);
}

struct single {
	const struct field	*fields;
	bool			pairs;	/* text: name value pairs, not lines */
	bool			got;
};

static int single_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[ATTR_MAX + 1];
	struct single *s = arg;

	if (bxnl_parse_genl(nlh, tb, ATTR_MAX)) {
		fprintf(stderr, "%s: malformed message from the kernel\n", prog);
		return -EPROTO;
	}
	if (s->got)
		return 0;
	s->got = true;
	if (json) {
		print_json_obj(s->fields, tb, NULL);
		putchar('\n');
	} else if (s->pairs) {
		print_text_pairs(s->fields, tb, true);
		putchar('\n');
	} else {
		print_text_lines(s->fields, tb);
	}
	return 0;
}

/*
 * One connection (a peer's on @lane), every attribute: an object, or
 * pairs over a few lines.
 */
static int cmd_conn_get(uint32_t peer, uint32_t lane)
{
	struct single s = { .fields = conn_fields, .pairs = true };
	struct bxnl_msg m;
	int ret;

	bxnl_msg_init(&m, nl.family, BX_CMD_CONN_GET, BX_FAMILY_VERSION);
	bxnl_put_u32(&m, BX_A_CONN_PEER_ID, peer);
	if (lane)
		bxnl_put_u32(&m, BX_A_CONN_LANE, lane);
	ret = bxnl_do(&nl, &m, single_cb, &s);
	if (ret)
		return nl_error("conn", ret, &m, conn_fields);
	if (!s.got) {
		fprintf(stderr, "%s: conn: no reply from the kernel\n", prog);
		return 1;
	}
	return 0;
}

static int cmd_get(uint8_t cmd, const char *what, const struct field *fields)
{
	struct single s = { .fields = fields };
	struct bxnl_msg m;
	int ret;

	bxnl_msg_init(&m, nl.family, cmd, BX_FAMILY_VERSION);
	ret = bxnl_do(&nl, &m, single_cb, &s);
	if (ret)
		return nl_error(what, ret, &m, fields);
	if (!s.got) {
		fprintf(stderr, "%s: %s: no reply from the kernel\n", prog, what);
		return 1;
	}
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

static int cmd_set(int argc, char **argv)
{
	bool seen[ATTR_MAX + 1] = { false };
	struct bxnl_msg m;
	int ret;

	if (argc == 0 || argc % 2) {
		fprintf(stderr, "%s: usage: %s set NAME VALUE [NAME VALUE...]\n",
			prog, prog);
		return 1;
	}
	/* Arguments first: nothing goes to the kernel if one is bad. */
	bxnl_msg_init(&m, 0, BX_CMD_TUNABLES_SET, BX_FAMILY_VERSION);
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
			return 1;
		}
		if (seen[f->type]) {
			fprintf(stderr, "%s: set: %s given twice\n", prog, f->name);
			return 1;
		}
		seen[f->type] = true;
		if (f->fmt == F_U8) {
			if (!parse_bool(argv[i + 1], &b)) {
				fprintf(stderr, "%s: set: %s: \"%s\" is not 0/1 (off/on)\n",
					prog, f->name, argv[i + 1]);
				return 1;
			}
			ret = bxnl_put_u8(&m, f->type, b);
		} else {
			if (!parse_u32(argv[i + 1], &v)) {
				fprintf(stderr, "%s: set: %s: \"%s\" is not an unsigned 32-bit number\n",
					prog, f->name, argv[i + 1]);
				return 1;
			}
			ret = bxnl_put_u32(&m, f->type, v);
		}
		if (ret) {
			fprintf(stderr, "%s: set: too many values\n", prog);
			return 1;
		}
	}
	ret = nl_setup(NULL);
	if (ret)
		return ret;
	m.u.nlh.nlmsg_type = nl.family;
	ret = bxnl_do(&nl, &m, NULL, NULL);
	if (ret)
		return nl_error("set", ret, &m, tun_fields);
	if (nl.ext.msg[0])
		fprintf(stderr, "%s: set: warning: %s\n", prog, nl.ext.msg);
	return 0;
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

static int admit_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[ATTR_MAX + 1], *nt[BX_A_NET_MAX + 1];
	const struct nlattr *a;
	size_t off, len = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	const unsigned char *p = (const unsigned char *)nlh + NLMSG_HDRLEN +
				 GENL_HDRLEN;
	bool *got = arg, first = true;
	uint8_t on;

	if (bxnl_parse_genl(nlh, tb, ATTR_MAX)) {
		fprintf(stderr, "%s: malformed message from the kernel\n", prog);
		return -EPROTO;
	}
	*got = true;
	printf(json ? "{\"allow\":[" : "allow");
	/* Every net attribute, in order: bxnl_parse keeps the last alone. */
	for (off = 0; off + NLA_HDRLEN <= len; off += NLA_ALIGN(a->nla_len)) {
		char buf[INET6_ADDRSTRLEN];
		uint8_t plen;

		a = (const struct nlattr *)(p + off);
		if (a->nla_len < NLA_HDRLEN || a->nla_len > len - off)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) != BX_A_ADMIT_NET)
			continue;
		if (bxnl_parse(bxnl_data(a), bxnl_len(a), nt, BX_A_NET_MAX) ||
		    !nt[BX_A_NET_ADDR] || !bxnl_get_u8(nt[BX_A_NET_PREFIX_LEN],
							&plen))
			continue;
		fmt_addr(nt[BX_A_NET_ADDR], buf, sizeof(buf));
		if (strchr(buf, ':') == NULL)
			plen -= 96;
		printf(json ? "%s\"%s/%u\"" : "%s%s/%u",
		       json ? (first ? "" : ",") : " ", buf, plen);
		first = false;
	}
	if (json) {
		printf("],");
		print_json_obj(admit_fields, tb, NULL);
		putchar('}');
		putchar('\n');
	} else {
		printf(first ? " any\n" : "\n");
		print_text_lines(admit_fields, tb);
	}
	if (first && bxnl_get_u8(tb[BX_A_ADMIT_SECRET_ON], &on) && !on)
		warn_open();
	return 0;
}

static int cmd_admit(void)
{
	struct bxnl_msg m;
	bool got = false;
	int ret;

	bxnl_msg_init(&m, nl.family, BX_CMD_ADMIT_GET, BX_FAMILY_VERSION);
	ret = bxnl_do(&nl, &m, admit_cb, &got);
	if (ret)
		return nl_error("admit", ret, &m, admit_fields);
	if (!got) {
		fprintf(stderr, "%s: admit: no reply from the kernel\n", prog);
		return 1;
	}
	return 0;
}

/* allow NET... | allow any: replace the allow-list. */
static int cmd_allow(int argc, char **argv)
{
	struct bxnl_msg m;
	int ret;

	if (!argc) {
		fprintf(stderr, "%s: usage: %s allow NET... | any\n", prog, prog);
		return 1;
	}
	bxnl_msg_init(&m, 0, BX_CMD_ALLOW_SET, BX_FAMILY_VERSION);
	if (!(argc == 1 && !strcmp(argv[0], "any"))) {
		for (int i = 0; i < argc; i++) {
			struct in6_addr a;
			uint32_t at;
			uint8_t plen;

			if (!parse_net(argv[i], &a, &plen)) {
				fprintf(stderr, "%s: allow: \"%s\" is not an address or ADDR/LEN\n",
					prog, argv[i]);
				return 1;
			}
			if (bxnl_nest_start(&m, BX_A_ADMIT_NET, &at) ||
			    bxnl_put(&m, BX_A_NET_ADDR, &a, sizeof(a)) ||
			    bxnl_put_u8(&m, BX_A_NET_PREFIX_LEN, plen)) {
				fprintf(stderr, "%s: allow: too many networks\n", prog);
				return 1;
			}
			bxnl_nest_end(&m, at);
		}
	}
	ret = nl_setup(NULL);
	if (ret)
		return ret;
	m.u.nlh.nlmsg_type = nl.family;
	ret = bxnl_do(&nl, &m, NULL, NULL);
	return ret ? nl_error("allow", ret, &m, admit_fields) : 0;
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
static int cmd_secret(int argc, char **argv)
{
	unsigned char key[SECRET_LEN];
	struct bxnl_msg m;
	int ret;

	if (argc == 2 && !strcmp(argv[0], "generate"))
		return secret_generate(argv[1]);
	if (argc != 1) {
		fprintf(stderr, "%s: usage: %s secret FILE | - | clear | generate FILE\n",
			prog, prog);
		return 1;
	}
	bxnl_msg_init(&m, 0, BX_CMD_SECRET_SET, BX_FAMILY_VERSION);
	if (strcmp(argv[0], "clear")) {
		if (secret_read(argv[0], key))
			return 1;
		bxnl_put(&m, BX_A_ADMIT_SECRET, key, sizeof(key));
		memset(key, 0, sizeof(key));
	}
	ret = nl_setup(NULL);
	if (ret)
		return ret;
	m.u.nlh.nlmsg_type = nl.family;
	ret = bxnl_do(&nl, &m, NULL, NULL);
	memset(&m, 0, sizeof(m));
	return ret ? nl_error("secret", ret, &m, admit_fields) : 0;
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

/*
 * keys FILE | clear: set this host's pair keys from FILE ("PEER KID KEY"
 * lines, as keys derive writes them; readable by its owner alone), or
 * clear them.
 */
static int cmd_keys(int argc, char **argv)
{
	struct bxnl_msg m;
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
	bxnl_msg_init(&m, 0, BX_CMD_KEYS_SET, BX_FAMILY_VERSION);
	if (strcmp(argv[0], "clear")) {
		f = fopen(argv[0], "re");
		if (!f) {
			fprintf(stderr, "%s: keys: %s: %s\n", prog, argv[0],
				strerror(errno));
			return 1;
		}
		if (fstat(fileno(f), &st) || (st.st_mode & 077)) {
			fprintf(stderr, "%s: keys: %s may be read by others (chmod 600 it)\n",
				prog, argv[0]);
			fclose(f);
			return 1;
		}
		while (!ret && fgets(line, sizeof(line), f)) {
			char addr[64], kidh[16], keyh[80];
			unsigned char a[16], kid[4], key[32];
			uint32_t at;

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
			} else if (bxnl_nest_start(&m, BX_A_ADMIT_PAIRKEY, &at) ||
				   bxnl_put(&m, BX_A_PAIRKEY_ADDR, a, 16) ||
				   bxnl_put(&m, BX_A_PAIRKEY_KID, kid, 4) ||
				   bxnl_put(&m, BX_A_PAIRKEY_KEY, key, 32)) {
				fprintf(stderr, "%s: keys: too many keys in %s\n",
					prog, argv[0]);
				ret = 1;
			} else {
				bxnl_nest_end(&m, at);
			}
			memset(key, 0, sizeof(key));
			memset(keyh, 0, sizeof(keyh));
		}
		memset(line, 0, sizeof(line));
		fclose(f);
		if (ret) {
			memset(&m, 0, sizeof(m));
			return 1;
		}
	}
	ret = nl_setup(NULL);
	if (ret)
		return ret;
	m.u.nlh.nlmsg_type = nl.family;
	ret = bxnl_do(&nl, &m, NULL, NULL);
	memset(&m, 0, sizeof(m));
	return ret ? nl_error("keys", ret, &m, admit_fields) : 0;
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

struct mon {
	unsigned long	count, limit;
	uint32_t	ctrl_grp;	/* nlctrl "notify": bx unloaded/reloaded */
};

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
 * Our family came back (module reloaded): follow its new ids. Unloading
 * dropped every member of the old group, so join even if the id is the
 * same as before.
 */
static void mon_ctrl(const struct nlmsghdr *nlh, struct mon *st)
{
	struct bxnl_family f = { .name = BX_FAMILY_NAME, .grp = BX_MCGRP_EVENTS };
	uint8_t cmd = bxnl_genl_cmd(nlh);

	(void)st;
	if (cmd != CTRL_CMD_NEWFAMILY && cmd != CTRL_CMD_NEWMCAST_GRP)
		return;
	if (bxnl_family_cb(nlh, &f) || !f.found)
		return;
	nl.family = f.id;
	if (f.grp_id && !bxnl_join(&nl, f.grp_id))
		nl.mcgrp = f.grp_id;
}

static int mon_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[ATTR_MAX + 1];
	const struct field *fields;
	struct mon *st = arg;
	const char *name;
	uint8_t cmd;

	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		mon_ctrl(nlh, st);
		return 0;
	}
	if (nlh->nlmsg_type != nl.family)
		return 0;
	cmd = bxnl_genl_cmd(nlh);
	if (bxnl_parse_genl(nlh, tb, ATTR_MAX)) {
		fprintf(stderr, "%s: monitor: malformed event (cmd %u)\n", prog, cmd);
		return 0;
	}
	name = event_name(cmd, &fields);
	if (json) {
		if (name) {
			print_json_obj(fields, tb, name);
		} else {
			printf("{\"event\":\"cmd-%u\"}", cmd);
		}
		putchar('\n');
	} else if (name) {
		printf("%s ", name);
		print_text_pairs(fields == conn_fields ? conn_event_fields : fields,
				 tb, false);
		putchar('\n');
	} else {
		printf("cmd-%u\n", cmd);
	}
	fflush(stdout);
	st->count++;
	return st->limit && st->count >= st->limit ? 1 : 0;
}

static int cmd_monitor(unsigned long limit)
{
	struct mon st = { .limit = limit };
	struct bxnl ctl;
	int ret;

	/* The controller's group first, so a reload is never missed. */
	if (!bxnl_open(&ctl)) {
		if (!bxnl_resolve(&ctl, "nlctrl", "notify"))
			st.ctrl_grp = ctl.mcgrp;
		bxnl_close(&ctl);
	}
	ret = nl_setup(BX_MCGRP_EVENTS);
	if (ret)
		return ret;
	if (st.ctrl_grp)
		(void)bxnl_join(&nl, st.ctrl_grp);
	ret = bxnl_join(&nl, nl.mcgrp);
	if (ret)
		return nl_error("monitor: joining group " BX_MCGRP_EVENTS, ret,
				NULL, NULL);
	/* Events can come in bursts (a device with many connections). */
	{
		int sz = 1 << 20;

		(void)setsockopt(nl.fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	for (;;) {
		ret = bxnl_recv_events(&nl, 0, mon_cb, &st);
		if (ret == 1)
			return 0;
		if (ret == -ENOBUFS) {
			fprintf(stderr, "%s: monitor: events lost (receive buffer overrun)\n",
				prog);
			continue;
		}
		if (ret < 0)
			return nl_error("monitor", ret, NULL, NULL);
	}
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

	nl.fd = -1;
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
			ret = nl_setup(NULL);
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
		ret = nl_setup(NULL);
		if (!ret)
			ret = one ? cmd_conn_get(peer, lane) : cmd_conn();
	} else if (is(pos[0], A_PROC)) {
		ret = only_show("proc", npos - 1, pos + 1);
		if (!ret)
			ret = nl_setup(NULL);
		if (!ret)
			ret = cmd_proc();
	} else if (is(pos[0], A_STATS)) {
		ret = only_show("stats", npos - 1, pos + 1);
		if (!ret)
			ret = nl_setup(NULL);
		if (!ret)
			ret = cmd_get(BX_CMD_STATS_GET, "stats", stats_fields);
	} else if (is(pos[0], A_TUN)) {
		if (npos > 1 && !strcmp(pos[1], "set")) {
			ret = cmd_set(npos - 2, pos + 2);
		} else {
			ret = only_show("tunables", npos - 1, pos + 1);
			if (!ret)
				ret = nl_setup(NULL);
			if (!ret)
				ret = cmd_get(BX_CMD_TUNABLES_GET, "tunables",
					      tun_fields);
		}
	} else if (is(pos[0], A_SET)) {
		ret = cmd_set(npos - 1, pos + 1);
	} else if (is(pos[0], A_ADMIT)) {
		ret = only_show("admit", npos - 1, pos + 1);
		if (!ret)
			ret = nl_setup(NULL);
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
	bxnl_close(&nl);
	free(pos);
	return ret;
}
