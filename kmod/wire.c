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
#include <linux/string.h>
#include <asm/byteorder.h>

#include "wire.h"

/* Bytes that follow the header for each type, before the inline payload. */
static size_t ext_len(u8 type)
{
	return (type == BX_MSG_PUSH_RDV || type == BX_MSG_PULL_REQ) ?
		BX_WIRE_RDV_LEN : 0;
}

static bool has_inline(u8 type)
{
	return type == BX_MSG_PUSH || type == BX_MSG_PULL_REQ ||
	       type == BX_MSG_PULL_RESP;
}

static bool has_status(u8 type)
{
	return type == BX_MSG_PUSH_DONE || type == BX_MSG_PULL_RESP ||
	       type == BX_MSG_PULL_WRITTEN || type == BX_MSG_NACK;
}

int bx_wire_parse(const void *buf, size_t received, u32 max_inline,
		  struct bx_msg *msg)
{
	const struct bx_wire_hdr *hdr = buf;
	size_t need;

	/* Shorter than a header: nothing in it can be trusted. */
	if (received < BX_WIRE_HDR_LEN)
		return -EBADMSG;

	memset(msg, 0, sizeof(*msg));
	msg->type = hdr->type;
	msg->flags = hdr->flags;
	msg->credits = be16_to_cpu(hdr->credits);
	msg->service = be32_to_cpu(hdr->service);
	msg->req_id = be64_to_cpu(hdr->req_id);
	msg->seq = be64_to_cpu(hdr->seq);
	msg->len = be32_to_cpu(hdr->len);
	msg->status = be32_to_cpu(hdr->status);

	/* Unknown type or flag bits: a peer we do not understand. */
	if (msg->type == 0 || msg->type >= __BX_MSG_MAX)
		return -EBADMSG;
	if (msg->flags & ~BX_WIRE_F_KNOWN)
		return -EBADMSG;
	/* Status only where a status is defined, and only known codes. */
	if (msg->status >= __BX_ST_MAX ||
	    (msg->status && !has_status(msg->type)))
		return -EBADMSG;
	/* A NACK without an error is meaningless. */
	if (msg->type == BX_MSG_NACK && msg->status == BX_ST_OK)
		return -EBADMSG;
	/* Inline payload only for types that carry one, within the limit. */
	if (!has_inline(msg->type) && msg->type != BX_MSG_PUSH_RDV &&
	    msg->type != BX_MSG_PULL_WRITTEN && msg->len)
		return -EBADMSG;
	if (has_inline(msg->type) && msg->len > max_inline)
		return -EBADMSG;

	/* Exact size: header + extension + inline payload, nothing more. */
	need = BX_WIRE_HDR_LEN + ext_len(msg->type) +
	       (has_inline(msg->type) ? msg->len : 0);
	if (received != need)
		return -EBADMSG;

	if (ext_len(msg->type)) {
		const struct bx_wire_rdv *rdv = (const void *)(hdr + 1);

		msg->rdv_addr = be64_to_cpu(rdv->addr);
		msg->rdv_rkey = be32_to_cpu(rdv->rkey);
		msg->rdv_len = be32_to_cpu(rdv->len);
		/* A push source is exactly the advertised length, and real. */
		if (msg->type == BX_MSG_PUSH_RDV &&
		    (!msg->len || msg->rdv_len != msg->len || !msg->rdv_rkey))
			return -EBADMSG;
		/* Sink without a key: nothing may be written remotely. */
		if (msg->type == BX_MSG_PULL_REQ && !msg->rdv_rkey &&
		    msg->rdv_addr)
			return -EBADMSG;
	}
	if (has_inline(msg->type) && msg->len)
		msg->payload = (const u8 *)buf + BX_WIRE_HDR_LEN +
			       ext_len(msg->type);
	return 0;
}

/*
 * Build the header (and extension) of @msg into @buf. The inline payload,
 * msg->len bytes, is copied from msg->payload when set; a caller that
 * places the payload itself passes NULL. Returns the message length, or
 * 0 if @bufsize is too small or @msg is malformed.
 */
size_t bx_wire_build(void *buf, size_t bufsize, const struct bx_msg *msg)
{
	struct bx_wire_hdr *hdr = buf;
	size_t total;

	if (msg->type == 0 || msg->type >= __BX_MSG_MAX)
		return 0;
	total = BX_WIRE_HDR_LEN + ext_len(msg->type) +
		(has_inline(msg->type) ? msg->len : 0);
	if (total > bufsize)
		return 0;

	hdr->type = msg->type;
	hdr->flags = msg->flags;
	hdr->credits = cpu_to_be16(msg->credits);
	hdr->service = cpu_to_be32(msg->service);
	hdr->req_id = cpu_to_be64(msg->req_id);
	hdr->seq = cpu_to_be64(msg->seq);
	hdr->len = cpu_to_be32(msg->len);
	hdr->status = cpu_to_be32(msg->status);
	if (ext_len(msg->type)) {
		struct bx_wire_rdv *rdv = (void *)(hdr + 1);

		rdv->addr = cpu_to_be64(msg->rdv_addr);
		rdv->rkey = cpu_to_be32(msg->rdv_rkey);
		rdv->len = cpu_to_be32(msg->rdv_len);
	}
	if (has_inline(msg->type) && msg->len && msg->payload)
		memcpy((u8 *)buf + BX_WIRE_HDR_LEN + ext_len(msg->type),
		       msg->payload, msg->len);
	return total;
}
