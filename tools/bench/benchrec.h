/* SPDX-License-Identifier: GPL-2.0 */
/*
 * benchrec.h: a benchmark's machine-readable records, the format
 * tools/bench/README.md ("Records") describes and tools/bench/report.py
 * reads: one line per record, the prefix "bench-record " and a JSON object
 *
 *   bench-record {"v":1,"bench":"bxperf","kind":"result",
 *                 "cell":{"tag":"sweep","size":64},"metrics":{"mean_us":51.5}}
 *
 * (on one line). Header only, C11 and C++, no library:
 *
 *   struct benchrec r;
 *
 *   benchrec_begin(&r, stdout, "bxperf", "result");
 *   benchrec_str(&r, "tag", tag);             (fields of "cell")
 *   benchrec_uint(&r, "size", size);
 *   benchrec_metrics(&r);
 *   benchrec_num(&r, "mean_us", "%.1f", x);   (fields of "metrics")
 *   benchrec_end(&r);
 *
 * Fields before benchrec_metrics() go into "cell" (what was measured),
 * after it into "metrics" (what was measured there). benchrec_num()
 * prints a number in the program's own precision, and a value that is
 * not finite as null (not measured). benchrec_kv() adds a "KEY=VALUE"
 * of the command line (a caller's parameter: a round, a setting), a
 * number if VALUE is a decimal integer, else a string. A list of pairs
 * of integers (a histogram): benchrec_list(), benchrec_pair() for each,
 * benchrec_list_end(). The record is written to the stream under its
 * lock and flushed at benchrec_end().
 */
#ifndef BENCHREC_H
#define BENCHREC_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BENCHREC_PREFIX		"bench-record "
#define BENCHREC_VERSION	1

struct benchrec {
	FILE	*f;
	int	n;		/* fields (or items) written in the open object */
};

static inline void benchrec_qstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The next field's key, after a comma if it is not the first. */
static inline void benchrec_key(struct benchrec *r, const char *key)
{
	if (r->n++)
		fputc(',', r->f);
	benchrec_qstr(r->f, key);
	fputc(':', r->f);
}

static inline void benchrec_begin(struct benchrec *r, FILE *f,
				  const char *bench, const char *kind)
{
	r->f = f;
	r->n = 0;
	flockfile(f);
	fprintf(f, "%s{\"v\":%d,\"bench\":", BENCHREC_PREFIX,
		BENCHREC_VERSION);
	benchrec_qstr(f, bench);
	fputs(",\"kind\":", f);
	benchrec_qstr(f, kind);
	fputs(",\"cell\":{", f);
}

static inline void benchrec_metrics(struct benchrec *r)
{
	fputs("},\"metrics\":{", r->f);
	r->n = 0;
}

static inline void benchrec_end(struct benchrec *r)
{
	fputs("}}\n", r->f);
	fflush(r->f);
	funlockfile(r->f);
}

static inline void benchrec_str(struct benchrec *r, const char *key,
				const char *s)
{
	benchrec_key(r, key);
	benchrec_qstr(r->f, s);
}

static inline void benchrec_int(struct benchrec *r, const char *key,
				long long v)
{
	benchrec_key(r, key);
	fprintf(r->f, "%lld", v);
}

static inline void benchrec_uint(struct benchrec *r, const char *key,
				 unsigned long long v)
{
	benchrec_key(r, key);
	fprintf(r->f, "%llu", v);
}

/* @fmt: one conversion of a double ("%.1f", "%.3f", "%g"). */
static inline void benchrec_num(struct benchrec *r, const char *key,
				const char *fmt, double v)
{
	benchrec_key(r, key);
	if (isfinite(v))
		fprintf(r->f, fmt, v);
	else
		fputs("null", r->f);
}

static inline void benchrec_null(struct benchrec *r, const char *key)
{
	benchrec_key(r, key);
	fputs("null", r->f);
}

/* "KEY=VALUE": VALUE a number if it is a decimal integer, else a string. */
static inline void benchrec_kv(struct benchrec *r, const char *kv)
{
	const char *eq = strchr(kv, '=');
	const char *v = eq ? eq + 1 : "";
	const char *d = v + (*v == '-');
	size_t nd = strspn(d, "0123456789");
	char key[64];

	snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - kv) : (int)strlen(kv), kv);
	benchrec_key(r, key);
	if (nd && !d[nd] && (nd == 1 || d[0] != '0'))
		fputs(v, r->f);
	else
		benchrec_qstr(r->f, v);
}

static inline void benchrec_list(struct benchrec *r, const char *key)
{
	benchrec_key(r, key);
	fputc('[', r->f);
	r->n = 0;
}

static inline void benchrec_pair(struct benchrec *r, long long a, long long b)
{
	fprintf(r->f, "%s[%lld,%lld]", r->n++ ? "," : "", a, b);
}

/* Closes the list; the object it is in has had a field at least. */
static inline void benchrec_list_end(struct benchrec *r)
{
	fputc(']', r->f);
	r->n = 1;
}

#endif /* BENCHREC_H */
