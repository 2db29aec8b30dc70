// SPDX-License-Identifier: GPL-2.0
/*
 * bx: wire format encode and parse. Pure code, shared with user space.
 *
 * The parser never trusts the peer: each type is accepted only at its
 * exact size, every length is checked against what was actually received
 * (as wireguard/receive.c does), and unknown types, flags, statuses or
 * non-zero fields that must be zero are errors (-EBADMSG). A message the
 * parser accepts can be acted on without further length checks.
 */

#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include "wire.h"

static bool has_rdv(u8 type)
{
	return type == BX_MSG_PUSH_RDV || type == BX_MSG_PULL_REQ;
}

static bool has_inline(u8 type)
{
	return type == BX_MSG_PUSH || type == BX_MSG_PULL_REQ ||
	       type == BX_MSG_PULL_RESP;
}

static bool is_push(u8 type)
{
	return type == BX_MSG_PUSH || type == BX_MSG_PUSH_RDV;
}

static bool has_status(u8 type)
{
	return type == BX_MSG_PUSH_DONE || type == BX_MSG_PULL_RESP ||
	       type == BX_MSG_PULL_WRITTEN || type == BX_MSG_NACK;
}

/* Whether hdr.len may be non-zero without inline bytes following. */
static bool has_rdma_len(u8 type)
{
	return type == BX_MSG_PUSH_RDV || type == BX_MSG_PULL_WRITTEN;
}

size_t bx_wire_size(const struct bx_msg *msg)
{
	return BX_WIRE_HDR_LEN + (size_t)msg->nrdv * BX_WIRE_RDV_LEN +
	       (has_inline(msg->type) ? msg->len : 0);
}

/* Check the descriptor list of a PUSH_RDV or PULL_REQ. */
static int check_rdv(struct bx_msg *msg, u32 max_inline)
{
	u64 total = 0;
	u8 i;

	/*
	 * A sink without a key: the only descriptor, capacity only, for a
	 * response that travels inline.
	 */
	if (msg->type == BX_MSG_PULL_REQ && !msg->rdv[0].rkey)
		return (msg->nrdv == 1 && !msg->rdv[0].addr &&
			msg->rdv[0].len <= max_inline) ? 0 : -EBADMSG;

	for (i = 0; i < msg->nrdv; i++) {
		/* Every granted segment has a key and at least one byte. */
		if (!msg->rdv[i].rkey || !msg->rdv[i].len)
			return -EBADMSG;
		total += msg->rdv[i].len;
	}
	msg->rdv_total = total;
	/* A push moves exactly the bytes its segments grant. */
	if (msg->type == BX_MSG_PUSH_RDV && total != msg->len)
		return -EBADMSG;
	/* No transfer is larger than an operation may be. */
	if (total > BX_WIRE_XFER_MAX)
		return -EBADMSG;
	return 0;
}

int bx_wire_parse(const void *buf, size_t received, u32 max_inline,
		  struct bx_msg *msg)
{
	const struct bx_wire_hdr *hdr = buf;
	const struct bx_wire_rdv *rdv;
	u8 i;

	/* Shorter than a header: nothing in it can be trusted. */
	if (received < BX_WIRE_HDR_LEN)
		return -EBADMSG;

	/*
	 * Every field but the descriptors is set here; rdv[] is filled up
	 * to nrdv below and is not to be read beyond it. Zeroing all of
	 * @msg (16 descriptors, 304 bytes) was a quarter of the cost of
	 * parsing a CREDIT.
	 */
	msg->rdv_total = 0;
	msg->payload = NULL;
	msg->type = hdr->type;
	msg->flags = hdr->flags;
	msg->credits = be16_to_cpu(hdr->credits);
	msg->service = be32_to_cpu(hdr->service);
	msg->req_id = be64_to_cpu(hdr->req_id);
	msg->seq = be64_to_cpu(hdr->seq);
	msg->len = be32_to_cpu(hdr->len);
	msg->status = hdr->status;
	msg->nrdv = hdr->nrdv;
	msg->lag = be16_to_cpu(hdr->lag);

	/* Unknown type, flag bits or reserved bits: not our protocol. */
	if (msg->type == 0 || msg->type >= __BX_MSG_MAX)
		return -EBADMSG;
	if (msg->flags & ~BX_WIRE_F_KNOWN)
		return -EBADMSG;
	/* A floor only on a numbered push, and below its number. */
	if (msg->lag && (!is_push(msg->type) || !msg->seq ||
			 (msg->lag != BX_WIRE_LAG_UNKNOWN &&
			  msg->lag >= msg->seq)))
		return -EBADMSG;
	/* Status only where a status is defined, and only known codes. */
	if (msg->status >= __BX_ST_MAX ||
	    (msg->status && !has_status(msg->type)))
		return -EBADMSG;
	/* A NACK without an error is meaningless. */
	if (msg->type == BX_MSG_NACK && msg->status == BX_ST_OK)
		return -EBADMSG;
	/* Descriptors exactly where they belong, 1..16 of them. */
	if (has_rdv(msg->type) ?
	    (!msg->nrdv || msg->nrdv > BX_WIRE_MAX_RDV) : msg->nrdv)
		return -EBADMSG;
	/* A length only where the type gives it a meaning. */
	if (msg->len && !has_inline(msg->type) && !has_rdma_len(msg->type))
		return -EBADMSG;
	/* Inline payload within the receiver's limit. */
	if (has_inline(msg->type) && msg->len > max_inline)
		return -EBADMSG;
	/* READY carries nothing but credits. */
	if (msg->type == BX_MSG_READY &&
	    (msg->service || msg->req_id || msg->seq))
		return -EBADMSG;
	/* An RDMA-written response is no larger than any transfer. */
	if (has_rdma_len(msg->type) && msg->len > BX_WIRE_XFER_MAX)
		return -EBADMSG;
	/* Exact size: header + descriptors + inline payload, nothing more. */
	if (received != bx_wire_size(msg))
		return -EBADMSG;

	rdv = (const struct bx_wire_rdv *)(hdr + 1);
	for (i = 0; i < msg->nrdv; i++) {
		msg->rdv[i].addr = be64_to_cpu(rdv[i].addr);
		msg->rdv[i].rkey = be32_to_cpu(rdv[i].rkey);
		msg->rdv[i].len = be32_to_cpu(rdv[i].len);
	}
	if (msg->nrdv && check_rdv(msg, max_inline))
		return -EBADMSG;

	if (has_inline(msg->type) && msg->len)
		msg->payload = (const u8 *)(rdv + msg->nrdv);
	return 0;
}

/*
 * Build @msg into @buf: header, descriptors and, when msg->payload is set,
 * the inline payload (msg->len bytes). Returns the message length, or 0
 * if @bufsize is too small or @msg has a type or descriptor count that
 * cannot be encoded.
 */
size_t bx_wire_build(void *buf, size_t bufsize, const struct bx_msg *msg)
{
	struct bx_wire_hdr *hdr = buf;
	struct bx_wire_rdv *rdv;
	size_t total;
	u8 i;

	if (msg->type == 0 || msg->type >= __BX_MSG_MAX ||
	    msg->nrdv > BX_WIRE_MAX_RDV)
		return 0;
	total = bx_wire_size(msg);
	if (total > bufsize)
		return 0;

	hdr->type = msg->type;
	hdr->flags = msg->flags;
	hdr->credits = cpu_to_be16(msg->credits);
	hdr->service = cpu_to_be32(msg->service);
	hdr->req_id = cpu_to_be64(msg->req_id);
	hdr->seq = cpu_to_be64(msg->seq);
	hdr->len = cpu_to_be32(msg->len);
	hdr->status = msg->status;
	hdr->nrdv = msg->nrdv;
	hdr->lag = cpu_to_be16(msg->lag);
	rdv = (struct bx_wire_rdv *)(hdr + 1);
	for (i = 0; i < msg->nrdv; i++) {
		rdv[i].addr = cpu_to_be64(msg->rdv[i].addr);
		rdv[i].rkey = cpu_to_be32(msg->rdv[i].rkey);
		rdv[i].len = cpu_to_be32(msg->rdv[i].len);
	}
	if (has_inline(msg->type) && msg->len && msg->payload)
		memcpy(rdv + msg->nrdv, msg->payload, msg->len);
	return total;
}

/* Are @n bytes at @p all zero? */
static bool zeros(const u8 *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

/* The fields a request and an accept share; -EPROTO unless usable. */
static int conn_fields(u32 magic, u8 version, u16 credits, u32 msg_size,
		       u64 epoch, struct bx_conn_params *p)
{
	if (magic != BX_WIRE_MAGIC || version != BX_WIRE_VERSION)
		return -EPROTO;
	p->credits = credits;
	p->msg_size = msg_size;
	p->epoch = epoch;
	/*
	 * A peer must be able to take a credit update and a full header;
	 * epoch 0 names no incarnation (an unverified or forged one).
	 */
	if (p->credits < BX_WIRE_MIN_CREDITS || p->msg_size < BX_WIRE_MIN_MSG ||
	    !p->epoch)
		return -EPROTO;
	return 0;
}

/*
 * Parse a connect request. Transports pad private data, so @len may
 * exceed the structure; the padding is not ours to judge. Everything in
 * the structure is.
 */
int bx_wire_req_parse(const void *buf, size_t len, struct bx_conn_params *p)
{
	const struct bx_wire_req *w = buf;

	/* Too short to be a request: an old or foreign client. */
	if (!buf || len < BX_WIRE_REQ_LEN)
		return -EPROTO;
	if (conn_fields(be32_to_cpu(w->magic), w->version,
			be16_to_cpu(w->credits), be32_to_cpu(w->msg_size),
			be64_to_cpu(w->epoch), p))
		return -EPROTO;
	p->flags = w->flags;
	if (p->flags & ~BX_WIRE_REQ_F_KNOWN)
		return -EPROTO;
	/* A proof answers a challenge; what a request lacks is zero. */
	if ((p->flags & BX_WIRE_REQ_F_PROOF) &&
	    !(p->flags & BX_WIRE_REQ_F_COOKIE))
		return -EPROTO;
	if (!(p->flags & BX_WIRE_REQ_F_COOKIE) &&
	    !zeros(w->cookie, sizeof(w->cookie)))
		return -EPROTO;
	if (!(p->flags & BX_WIRE_REQ_F_PROOF) &&
	    (!zeros(w->kid, sizeof(w->kid)) || !zeros(w->mac, sizeof(w->mac))))
		return -EPROTO;
	memcpy(p->kid, w->kid, sizeof(p->kid));
	memcpy(p->nonce, w->nonce, sizeof(p->nonce));
	memcpy(p->cookie, w->cookie, sizeof(p->cookie));
	memcpy(p->mac, w->mac, sizeof(p->mac));
	return 0;
}

void bx_wire_req_build(struct bx_wire_req *w, const struct bx_conn_params *p)
{
	memset(w, 0, sizeof(*w));
	w->magic = cpu_to_be32(BX_WIRE_MAGIC);
	w->version = BX_WIRE_VERSION;
	w->flags = p->flags;
	w->credits = cpu_to_be16(p->credits);
	w->msg_size = cpu_to_be32(p->msg_size);
	w->epoch = cpu_to_be64(p->epoch);
	memcpy(w->nonce, p->nonce, sizeof(w->nonce));
	if (p->flags & BX_WIRE_REQ_F_COOKIE)
		memcpy(w->cookie, p->cookie, sizeof(w->cookie));
	if (p->flags & BX_WIRE_REQ_F_PROOF) {
		memcpy(w->kid, p->kid, sizeof(w->kid));
		memcpy(w->mac, p->mac, sizeof(w->mac));
	}
}

/* Parse an accept (padded as a request may be). */
int bx_wire_accept_parse(const void *buf, size_t len,
			 struct bx_conn_params *p)
{
	const struct bx_wire_accept *w = buf;

	if (!buf || len < BX_WIRE_ACCEPT_LEN)
		return -EPROTO;
	memset(p, 0, sizeof(*p));
	if (conn_fields(be32_to_cpu(w->magic), w->version,
			be16_to_cpu(w->credits), be32_to_cpu(w->msg_size),
			be64_to_cpu(w->epoch), p))
		return -EPROTO;
	p->flags = w->flags;
	if ((p->flags & ~BX_WIRE_REQ_F_PROOF) || w->resv)
		return -EPROTO;
	if (!(p->flags & BX_WIRE_REQ_F_PROOF) &&
	    !zeros(w->mac, sizeof(w->mac)))
		return -EPROTO;
	memcpy(p->mac, w->mac, sizeof(p->mac));
	return 0;
}

void bx_wire_accept_build(struct bx_wire_accept *w,
			  const struct bx_conn_params *p)
{
	memset(w, 0, sizeof(*w));
	w->magic = cpu_to_be32(BX_WIRE_MAGIC);
	w->version = BX_WIRE_VERSION;
	w->flags = p->flags & BX_WIRE_REQ_F_PROOF;
	w->credits = cpu_to_be16(p->credits);
	w->msg_size = cpu_to_be32(p->msg_size);
	w->epoch = cpu_to_be64(p->epoch);
	if (w->flags)
		memcpy(w->mac, p->mac, sizeof(w->mac));
}

/*
 * Parse a reject's private data as a challenge: -EPROTO for anything
 * else (a plain refusal carries none, and reads as zeros).
 */
int bx_wire_challenge_parse(const void *buf, size_t len,
			    struct bx_wire_chal *c)
{
	const struct bx_wire_challenge *w = buf;
	u8 i;

	if (!buf || len < BX_WIRE_CHALLENGE_LEN)
		return -EPROTO;
	if (be32_to_cpu(w->magic) != BX_WIRE_MAGIC ||
	    w->version != BX_WIRE_VERSION || w->type != BX_WIRE_REJ_CHALLENGE ||
	    w->nkid > BX_WIRE_KIDS_MAX || w->resv)
		return -EPROTO;
	for (i = w->nkid; i < BX_WIRE_KIDS_MAX; i++)
		if (!zeros(w->kid[i], BX_WIRE_KID_LEN))
			return -EPROTO;
	c->nkid = w->nkid;
	memcpy(c->cookie, w->cookie, sizeof(c->cookie));
	memcpy(c->kid, w->kid, sizeof(c->kid));
	return 0;
}

void bx_wire_challenge_build(struct bx_wire_challenge *w,
			     const struct bx_wire_chal *c)
{
	u8 i;

	memset(w, 0, sizeof(*w));
	w->magic = cpu_to_be32(BX_WIRE_MAGIC);
	w->version = BX_WIRE_VERSION;
	w->type = BX_WIRE_REJ_CHALLENGE;
	w->nkid = c->nkid;
	memcpy(w->cookie, c->cookie, sizeof(w->cookie));
	for (i = 0; i < c->nkid && i < BX_WIRE_KIDS_MAX; i++)
		memcpy(w->kid[i], c->kid[i], BX_WIRE_KID_LEN);
}

/*
 * The next piece of a rendezvous transfer over the peer's segments
 * @rdv[0..@nrdv): it begins at byte @at of the transfer, moves at most
 * @max bytes and stays within one segment. Returns its length (0 if @at
 * is past the segments' end), with the segment in *@idx and the offset
 * of @at in it in *@in.
 */
u32 bx_rdv_piece(const struct bx_rdv *rdv, u8 nrdv, u64 at, u32 max, u8 *idx,
		 u32 *in)
{
	u64 pos = 0;
	u32 room;
	u8 i;

	for (i = 0; i < nrdv; pos += rdv[i].len, i++) {
		if (at >= pos + rdv[i].len)
			continue;
		*idx = i;
		*in = at - pos;
		room = rdv[i].len - *in;
		return max < room ? max : room;
	}
	return 0;
}
