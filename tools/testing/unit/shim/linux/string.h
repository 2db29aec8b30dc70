/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_STRING_H
#define _SHIM_LINUX_STRING_H

#include <stddef.h>
#include <string.h>

/* lib/string.c: the first byte of @start that is not @c, or NULL. */
static inline void *memchr_inv(const void *start, int c, size_t bytes)
{
	const unsigned char *p = start;

	for (size_t i = 0; i < bytes; i++)
		if (p[i] != (unsigned char)c)
			return (void *)(p + i);
	return NULL;
}

/* A memset the compiler may not drop (secrets on the stack). */
static inline void memzero_explicit(void *s, size_t count)
{
	memset(s, 0, count);
	__asm__ __volatile__("" : : "r"(s) : "memory");
}

#endif
