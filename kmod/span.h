/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: an operation's buffer as pieces of its file's region -- one piece,
 * or up to BX_VEC_MAX of them given with BX_SQE_F_VEC -- and the byte
 * arithmetic over it: checking the pieces, finding byte @at, cutting the
 * buffer into registered segments, gathering and scattering inline data.
 * Pure; also compiled into the host unit tests.
 */
#ifndef _BX_SPAN_H
#define _BX_SPAN_H

#include <linux/types.h>
#include <linux/bx.h>

/* A piece: @len bytes at region offset @off. */
struct bx_span {
	u64	off;
	u32	len;
};

/**
 * struct bx_spans - a buffer of the region in pieces
 * @total:	bytes in all, at most BX_MSG_MAX
 * @n:		pieces in use (0 for an empty buffer)
 * @s:		the pieces, in the buffer's order, each at least one byte
 */
struct bx_spans {
	u32		total;
	u8		n;
	struct bx_span	s[BX_VEC_MAX];
};

void bx_span_flat(struct bx_spans *sp, u64 off, u32 len);
int bx_span_set(struct bx_spans *sp, const struct bx_vec *v, unsigned int n,
		u64 region_size);
unsigned int bx_span_segs(const struct bx_spans *sp, u32 seg_max);
u32 bx_span_run(const struct bx_spans *sp, u64 at, u32 max, u64 *off);
void bx_span_gather(const struct bx_spans *sp, const void *base, void *dst,
		    u32 len);
void bx_span_scatter(const struct bx_spans *sp, void *base, const void *src,
		     u32 len);

#endif /* _BX_SPAN_H */
