/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal TAP/KTAP test harness for bx's host unit tests, with the same
 * "# Totals:" line as kselftest so one summary parser reads every tier.
 *
 *   UNIT_TEST(name) { ... CHECK(cond); CHECK_EQ(a, b); ... }
 *   int main(void) { return unit_run(); }
 */
#ifndef BX_UNIT_H
#define BX_UNIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct unit_test {
	const char *name;
	void (*fn)(int *failed);
};

#define UNIT_MAX 128
static struct unit_test unit_tests[UNIT_MAX];
static int unit_ntests;

#define UNIT_TEST(name)							\
	static void unit_##name(int *unit_failed);			\
	__attribute__((constructor)) static void unit_reg_##name(void)	\
	{								\
		if (unit_ntests < UNIT_MAX)				\
			unit_tests[unit_ntests++] =			\
				(struct unit_test){ #name, unit_##name }; \
	}								\
	static void unit_##name(int *unit_failed)

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("# %s:%d: CHECK(%s) failed\n", __FILE__,	\
		       __LINE__, #cond);				\
		(*unit_failed)++;					\
		return;							\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b) {							\
		printf("# %s:%d: %s == %s failed: %lld != %lld\n",	\
		       __FILE__, __LINE__, #a, #b, _a, _b);		\
		(*unit_failed)++;					\
		return;							\
	}								\
} while (0)

static inline int unit_run(void)
{
	int pass = 0, fail = 0;

	printf("TAP version 13\n1..%d\n", unit_ntests);
	for (int i = 0; i < unit_ntests; i++) {
		int failed = 0;

		unit_tests[i].fn(&failed);
		printf("%sok %d %s\n", failed ? "not " : "", i + 1,
		       unit_tests[i].name);
		failed ? fail++ : pass++;
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       pass, fail);
	return fail ? 1 : 0;
}

/* xorshift64: the tests' reproducible pseudo-random numbers (*s != 0). */
static inline uint64_t unit_rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

#endif
