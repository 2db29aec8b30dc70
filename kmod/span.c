// SPDX-License-Identifier: GPL-2.0
/*
 * bx: an operation's buffer in pieces of the region (see span.h). Pure;
 * also compiled into the host unit tests.
 */
#include <linux/errno.h>
#include <linux/string.h>

#include "span.h"

/* One piece, or none for an empty buffer; checked by the caller. */
void bx_span_flat(struct bx_spans *sp, u64 off, u32 len)
{
	sp->total = len;
	sp->n = len ? 1 : 0;
	sp->s[0].off = off;
	sp->s[0].len = len;
}

/*
 * @sp from @n struct bx_vec a process gave (BX_SQE_F_VEC), each checked:
 * 1 to BX_VEC_MAX of them, reserved fields zero, at least one byte each
 * and inside a region of @region_size bytes (-EINVAL); at most
 * BX_MSG_MAX bytes in all (-EMSGSIZE).
 */
int bx_span_set(struct bx_spans *sp, const struct bx_vec *v, unsigned int n,
		u64 region_size)
{
	u64 total = 0;
	unsigned int i;

	if (!n || n > BX_VEC_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (v[i].resv || !v[i].len)
			return -EINVAL;
		/* Inside the region, without overflowing. */
		if (v[i].off > region_size || v[i].len > region_size - v[i].off)
			return -EINVAL;
		total += v[i].len;
		sp->s[i].off = v[i].off;
		sp->s[i].len = v[i].len;
	}
	if (total > BX_MSG_MAX)
		return -EMSGSIZE;
	sp->total = total;
	sp->n = n;
	return 0;
}

/* Segments of at most @seg_max bytes @sp is cut into, none across pieces. */
unsigned int bx_span_segs(const struct bx_spans *sp, u32 seg_max)
{
	unsigned int i, segs = 0;

	for (i = 0; i < sp->n; i++)
		segs += (sp->s[i].len + seg_max - 1) / seg_max;
	return segs;
}

/*
 * Byte @at of @sp: its region offset in *@off, and how many bytes from it
 * are contiguous in the region, at most @max (0: @at is past the end).
 */
u32 bx_span_run(const struct bx_spans *sp, u64 at, u32 max, u64 *off)
{
	u64 pos = 0;
	u32 room;
	u8 i;

	for (i = 0; i < sp->n; pos += sp->s[i].len, i++) {
		if (at >= pos + sp->s[i].len)
			continue;
		*off = sp->s[i].off + (at - pos);
		room = sp->s[i].len - (u32)(at - pos);
		return max < room ? max : room;
	}
	return 0;
}

/* Copy the first @len bytes of @sp (in the region at @base) to @dst. */
void bx_span_gather(const struct bx_spans *sp, const void *base, void *dst,
		    u32 len)
{
	u32 done = 0, n;
	u64 off;

	while (done < len && (n = bx_span_run(sp, done, len - done, &off))) {
		memcpy((u8 *)dst + done, (const u8 *)base + off, n);
		done += n;
	}
}

/* Copy @len bytes from @src into the first @len bytes of @sp at @base. */
void bx_span_scatter(const struct bx_spans *sp, void *base, const void *src,
		     u32 len)
{
	u32 done = 0, n;
	u64 off;

	while (done < len && (n = bx_span_run(sp, done, len - done, &off))) {
		memcpy((u8 *)base + off, (const u8 *)src + done, n);
		done += n;
	}
}
