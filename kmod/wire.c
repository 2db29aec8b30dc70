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

/* What each message type may carry: parse and build read it once. */
#define WT_VALID	0x01	/* a type of this protocol */
#define WT_RDV		0x02	/* 1..BX_WIRE_MAX_RDV descriptors follow */
#define WT_INLINE	0x04	/* len bytes of payload follow */
#define WT_PUSH		0x08	/* numbered: may carry a lag */
#define WT_STATUS	0x10	/* carries a status */
#define WT_RDMA_LEN	0x20	/* len counts bytes RDMA moves, none follow */

static const u8 wire_types[__BX_MSG_MAX] = {
	[BX_MSG_CREDIT]		= WT_VALID,
	[BX_MSG_PUSH]		= WT_VALID | WT_INLINE | WT_PUSH,
	[BX_MSG_PUSH_RDV]	= WT_VALID | WT_RDV | WT_PUSH | WT_RDMA_LEN,
	[BX_MSG_PUSH_DONE]	= WT_VALID | WT_STATUS,
	[BX_MSG_PULL_REQ]	= WT_VALID | WT_RDV | WT_INLINE,
	[BX_MSG_PULL_RESP]	= WT_VALID | WT_INLINE | WT_STATUS,
	[BX_MSG_PULL_WRITTEN]	= WT_VALID | WT_STATUS | WT_RDMA_LEN,
	[BX_MSG_NACK]		= WT_VALID | WT_STATUS,
	[BX_MSG_READY]		= WT_VALID,
};

/* The WT_* bits of @type; 0 for a type this protocol does not have. */
static u8 wire_type(u8 type)
{
	return type < __BX_MSG_MAX ? wire_types[type] : 0;
}

static size_t wire_size(u8 t, const struct bx_msg *msg)
{
	return BX_WIRE_HDR_LEN + (size_t)msg->nrdv * BX_WIRE_RDV_LEN +
	       ((t & WT_INLINE) ? msg->len : 0);
}

size_t bx_wire_size(const struct bx_msg *msg)
{
	return wire_size(wire_type(msg->type), msg);
}

/*
 * Decode and check the @msg->nrdv descriptors at @rdv of a PUSH_RDV or
 * PULL_REQ, in one pass.
 */
static int parse_rdv(const struct bx_wire_rdv *rdv, struct bx_msg *msg,
		     u32 max_inline)
{
	bool unkeyed = false;
	u64 total = 0;
	u8 i;

	for (i = 0; i < msg->nrdv; i++) {
		msg->rdv[i].addr = be64_to_cpu(rdv[i].addr);
		msg->rdv[i].rkey = be32_to_cpu(rdv[i].rkey);
		msg->rdv[i].len = be32_to_cpu(rdv[i].len);
		unkeyed |= !msg->rdv[i].rkey || !msg->rdv[i].len;
		total += msg->rdv[i].len;
	}
	/*
	 * A sink without a key: the only descriptor, capacity only, for a
	 * response that travels inline.
	 */
	if (msg->type == BX_MSG_PULL_REQ && !msg->rdv[0].rkey)
		return (msg->nrdv == 1 && !msg->rdv[0].addr &&
			msg->rdv[0].len <= max_inline) ? 0 : -EBADMSG;
	/* Every granted segment has a key and at least one byte. */
	if (unkeyed)
		return -EBADMSG;
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
	u8 t;

	/* Shorter than a header: nothing in it can be trusted. */
	if (received < BX_WIRE_HDR_LEN)
		return -EBADMSG;
	/* Unknown type: not our protocol. */
	t = wire_type(hdr->type);
	if (!t)
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

	/* Unknown flag bits: not our protocol either. */
	if (msg->flags & ~BX_WIRE_F_KNOWN)
		return -EBADMSG;
	/* A floor only on a numbered push, and below its number. */
	if (msg->lag && (!(t & WT_PUSH) || !msg->seq ||
			 (msg->lag != BX_WIRE_LAG_UNKNOWN &&
			  msg->lag >= msg->seq)))
		return -EBADMSG;
	/* Status only where a status is defined, and only known codes. */
	if (msg->status &&
	    (msg->status >= __BX_ST_MAX || !(t & WT_STATUS)))
		return -EBADMSG;
	/* A NACK without an error is meaningless. */
	if (msg->type == BX_MSG_NACK && msg->status == BX_ST_OK)
		return -EBADMSG;
	/* Descriptors exactly where they belong, 1..16 of them. */
	if ((t & WT_RDV) ? !msg->nrdv || msg->nrdv > BX_WIRE_MAX_RDV :
	    msg->nrdv)
		return -EBADMSG;
	/*
	 * A length only where the type gives it a meaning: inline payload
	 * within the receiver's limit, an RDMA length no larger than any
	 * transfer.
	 */
	if (msg->len &&
	    ((t & WT_INLINE) ? msg->len > max_inline :
	     !(t & WT_RDMA_LEN) || msg->len > BX_WIRE_XFER_MAX))
		return -EBADMSG;
	/* READY carries nothing but credits. */
	if (msg->type == BX_MSG_READY &&
	    (msg->service || msg->req_id || msg->seq))
		return -EBADMSG;
	/* Exact size: header + descriptors + inline payload, nothing more. */
	if (received != wire_size(t, msg))
		return -EBADMSG;
	if (!msg->nrdv) {
		if (msg->len && (t & WT_INLINE))
			msg->payload = hdr + 1;
		return 0;
	}

	rdv = (const struct bx_wire_rdv *)(hdr + 1);
	if (parse_rdv(rdv, msg, max_inline))
		return -EBADMSG;
	if (msg->len && (t & WT_INLINE))
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
	u8 i, t;

	t = wire_type(msg->type);
	if (!t || msg->nrdv > BX_WIRE_MAX_RDV)
		return 0;
	total = wire_size(t, msg);
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
	if ((t & WT_INLINE) && msg->len && msg->payload)
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
			be16_to_cpu(w->credits), be16_to_cpu(w->msg_size),
			be64_to_cpu(w->epoch), p))
		return -EPROTO;
	/* Any lane parses: the acceptor checks it against its limit. */
	if (w->resv)
		return -EPROTO;
	p->lane = w->lane;
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
	w->lane = p->lane;
	w->msg_size = cpu_to_be16(p->msg_size);
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
	if ((p->flags & ~BX_WIRE_REQ_F_PROOF) ||
	    !zeros(w->resv, sizeof(w->resv)))
		return -EPROTO;
	p->lane = w->lane;
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
	w->lane = p->lane;
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
u32 bx_wire_rdv_piece(const struct bx_rdv *rdv, u8 nrdv, u64 at, u32 max, u8 *idx,
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

/* Parse a reject's private data as a lane refusal: -EPROTO otherwise. */
int bx_wire_lanes_parse(const void *buf, size_t len, u8 *lanes)
{
	const struct bx_wire_lanes *w = buf;

	if (!buf || len < BX_WIRE_LANES_LEN)
		return -EPROTO;
	/* At least lane 0 is taken: a refusal never names 0 lanes. */
	if (be32_to_cpu(w->magic) != BX_WIRE_MAGIC ||
	    w->version != BX_WIRE_VERSION || w->type != BX_WIRE_REJ_LANES ||
	    !w->lanes || w->resv)
		return -EPROTO;
	*lanes = w->lanes;
	return 0;
}

void bx_wire_lanes_build(struct bx_wire_lanes *w, u8 lanes)
{
	memset(w, 0, sizeof(*w));
	w->magic = cpu_to_be32(BX_WIRE_MAGIC);
	w->version = BX_WIRE_VERSION;
	w->type = BX_WIRE_REJ_LANES;
	w->lanes = lanes;
}
