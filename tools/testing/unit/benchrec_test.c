// SPDX-License-Identifier: GPL-2.0
/*
 * tools/bench/benchrec.h, the benchmarks' records: the exact line of a
 * record, strings escaped, numbers in the caller's precision, values not
 * measured as null, -k KEY=VALUE typed, lists of pairs.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../bench/benchrec.h"

/* What fn wrote as records, in a string to free. */
static char *capture(void (*fn)(FILE *f))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f);
	fclose(f);
	return buf;
}

static int same(char *got, const char *want)
{
	int ok = got && !strcmp(got, want);

	if (!ok)
		printf("# got  %s# want %s", got ? got : "(null)\n", want);
	free(got);
	return ok;
}

static void one(FILE *f)
{
	struct benchrec r;

	benchrec_begin(&r, f, "bxperf", "result");
	benchrec_str(&r, "tag", "sweep");
	benchrec_uint(&r, "size", 65536);
	benchrec_int(&r, "mix", 0);
	benchrec_metrics(&r);
	benchrec_uint(&r, "n", 12);
	benchrec_num(&r, "mean_us", "%.1f", 51.46);
	benchrec_num(&r, "secs", "%.3f", 2.0);
	benchrec_end(&r);
}

UNIT_TEST(record_line)
{
	CHECK(same(capture(one),
		   "bench-record {\"v\":1,\"bench\":\"bxperf\",\"kind\":\"result\","
		   "\"cell\":{\"tag\":\"sweep\",\"size\":65536,\"mix\":0},"
		   "\"metrics\":{\"n\":12,\"mean_us\":51.5,\"secs\":2.000}}\n"));
}

static void empty(FILE *f)
{
	struct benchrec r;

	benchrec_begin(&r, f, "x", "y");
	benchrec_metrics(&r);
	benchrec_end(&r);
}

UNIT_TEST(empty_objects)
{
	CHECK(same(capture(empty), "bench-record {\"v\":1,\"bench\":\"x\",\"kind\":\"y\","
		   "\"cell\":{},\"metrics\":{}}\n"));
}

static void escapes(FILE *f)
{
	struct benchrec r;

	benchrec_begin(&r, f, "b", "k");
	benchrec_str(&r, "s", "a\"b\\c\n\x01");
	benchrec_metrics(&r);
	benchrec_end(&r);
}

UNIT_TEST(strings_escaped)
{
	CHECK(same(capture(escapes), "bench-record {\"v\":1,\"bench\":\"b\",\"kind\":\"k\","
		   "\"cell\":{\"s\":\"a\\\"b\\\\c\\u000a\\u0001\"},\"metrics\":{}}\n"));
}

static void nulls(FILE *f)
{
	struct benchrec r;

	benchrec_begin(&r, f, "b", "k");
	benchrec_metrics(&r);
	benchrec_num(&r, "nan", "%.1f", NAN);
	benchrec_num(&r, "inf", "%.1f", INFINITY);
	benchrec_num(&r, "neg", "%.1f", -1.0);
	benchrec_null(&r, "none");
	benchrec_end(&r);
}

UNIT_TEST(not_measured_is_null)
{
	CHECK(same(capture(nulls), "bench-record {\"v\":1,\"bench\":\"b\",\"kind\":\"k\","
		   "\"cell\":{},\"metrics\":{\"nan\":null,\"inf\":null,\"neg\":-1.0,"
		   "\"none\":null}}\n"));
}

static void kvs(FILE *f)
{
	static const char *const kv[] = {
		"round=3", "set=on-m2", "z=007", "m=-5", "e=", "zero=0", "f=1.5", "minus=-",
	};
	struct benchrec r;

	benchrec_begin(&r, f, "b", "k");
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		benchrec_kv(&r, kv[i]);
	benchrec_metrics(&r);
	benchrec_end(&r);
}

UNIT_TEST(kv_typed)
{
	CHECK(same(capture(kvs), "bench-record {\"v\":1,\"bench\":\"b\",\"kind\":\"k\","
		   "\"cell\":{\"round\":3,\"set\":\"on-m2\",\"z\":\"007\",\"m\":-5,"
		   "\"e\":\"\",\"zero\":0,\"f\":\"1.5\",\"minus\":\"-\"},\"metrics\":{}}\n"));
}

static void lists(FILE *f)
{
	struct benchrec r;

	benchrec_begin(&r, f, "b", "k");
	benchrec_metrics(&r);
	benchrec_int(&r, "per", 32);
	benchrec_list(&r, "h");
	benchrec_pair(&r, 180, 3);
	benchrec_pair(&r, 181, 1);
	benchrec_list_end(&r);
	benchrec_list(&r, "empty");
	benchrec_list_end(&r);
	benchrec_int(&r, "after", 1);
	benchrec_end(&r);
}

UNIT_TEST(lists_of_pairs)
{
	CHECK(same(capture(lists), "bench-record {\"v\":1,\"bench\":\"b\",\"kind\":\"k\","
		   "\"cell\":{},\"metrics\":{\"per\":32,\"h\":[[180,3],[181,1]],"
		   "\"empty\":[],\"after\":1}}\n"));
}

int main(void)
{
	return unit_run();
}
