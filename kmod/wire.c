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
	       type == BX_MSG_PULL_RESP || type == BX_MSG_AUTH;
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
	/* A proof is one MAC, in a message that carries nothing else. */
	if (msg->type == BX_MSG_AUTH &&
	    (msg->len != BX_WIRE_MAC_LEN || msg->service || msg->req_id ||
	     msg->seq))
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

/*
 * Parse the peer's handshake. Transports pad private data (RoCE: to 56
 * bytes), so @len may exceed the structure; the padding is not ours to
 * judge. Everything in the structure is.
 */
int bx_wire_conn_parse(const void *buf, size_t len, struct bx_conn_params *p)
{
	const struct bx_wire_conn *w = buf;

	/* Too short to be a handshake: an old or foreign client. */
	if (!buf || len < BX_WIRE_CONN_LEN)
		return -EPROTO;
	if (be32_to_cpu(w->magic) != BX_WIRE_MAGIC ||
	    w->version != BX_WIRE_VERSION ||
	    (w->flags & ~BX_WIRE_CONN_F_KNOWN) || w->resv1)
		return -EPROTO;
	/* Without a proof the nonce is reserved. */
	if (!(w->flags & BX_WIRE_CONN_F_AUTH) &&
	    memchr_inv(w->nonce, 0, sizeof(w->nonce)))
		return -EPROTO;
	p->flags = w->flags;
	p->credits = be16_to_cpu(w->credits);
	p->msg_size = be32_to_cpu(w->msg_size);
	p->epoch = be64_to_cpu(w->epoch);
	memcpy(p->nonce, w->nonce, sizeof(p->nonce));
	/* A peer must be able to take a credit update and a full header. */
	if (p->credits < BX_WIRE_MIN_CREDITS || p->msg_size < BX_WIRE_MIN_MSG)
		return -EPROTO;
	return 0;
}

void bx_wire_conn_build(struct bx_wire_conn *w, const struct bx_conn_params *p)
{
	memset(w, 0, sizeof(*w));
	w->magic = cpu_to_be32(BX_WIRE_MAGIC);
	w->version = BX_WIRE_VERSION;
	w->flags = p->flags;
	w->credits = cpu_to_be16(p->credits);
	w->msg_size = cpu_to_be32(p->msg_size);
	w->epoch = cpu_to_be64(p->epoch);
	if (p->flags & BX_WIRE_CONN_F_AUTH)
		memcpy(w->nonce, p->nonce, sizeof(w->nonce));
}

static const char auth_label[2][8] = {
	[BX_WIRE_AUTH_ACCEPT]	= "bx-acc",
	[BX_WIRE_AUTH_INIT]	= "bx-init",
};

/* The bytes a handshake proof covers (wire.h). */
void bx_wire_auth_input(u8 out[BX_WIRE_AUTH_INPUT_LEN],
			enum bx_wire_auth_role role, const u8 init_addr[16],
			const u8 acc_addr[16], const struct bx_wire_conn *req,
			const struct bx_wire_conn *acc)
{
	memcpy(out, auth_label[role], 8);
	memcpy(out + 8, init_addr, 16);
	memcpy(out + 24, acc_addr, 16);
	memcpy(out + 40, req, BX_WIRE_CONN_LEN);
	memcpy(out + 40 + BX_WIRE_CONN_LEN, acc, BX_WIRE_CONN_LEN);
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
