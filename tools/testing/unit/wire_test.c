// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for kmod/wire.c, compiled from the kernel source with
 * the shims in ./shim, under ASan and UBSan.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../../../kmod/wire.h"
#include "unit.h"

#define MAXI 4096

static u8 buf[BX_WIRE_HDR_LEN + BX_WIRE_MAX_RDV * BX_WIRE_RDV_LEN + MAXI + 64];
static u8 payload[MAXI];

static struct bx_msg valid(u8 type, u32 len, u8 nrdv)
{
	struct bx_msg m = {
		.type = type, .credits = 7, .service = 0x10203, .req_id = 42,
		.seq = 1000, .len = len,
	};

	switch (type) {
	case BX_MSG_PUSH_RDV:
		m.nrdv = nrdv;
		for (u8 i = 0; i < nrdv; i++) {
			m.rdv[i].addr = 0x7f0000001000ull + i * 0x200000ull;
			m.rdv[i].rkey = 0x1234 + i;
			m.rdv[i].len = len / nrdv + (i < len % nrdv);
		}
		break;
	case BX_MSG_PULL_REQ:
		m.nrdv = nrdv;
		for (u8 i = 0; i < nrdv; i++) {
			m.rdv[i].addr = 0x7f0000002000ull + i * 0x200000ull;
			m.rdv[i].rkey = 0x5678 + i;
			m.rdv[i].len = 1 << 21;
		}
		break;
	case BX_MSG_NACK:
		m.status = BX_ST_NOSVC;
		break;
	case BX_MSG_READY:
		m.service = 0;
		m.req_id = 0;
		m.seq = 0;
		break;
	}
	if (len && (type == BX_MSG_PUSH || type == BX_MSG_PULL_REQ ||
		    type == BX_MSG_PULL_RESP))
		m.payload = payload;
	return m;
}

static const struct { u8 type; u32 len; u8 nrdv; size_t size; } shapes[] = {
	{ BX_MSG_CREDIT, 0, 0, 32 },
	{ BX_MSG_PUSH, 0, 0, 32 },
	{ BX_MSG_PUSH, 1, 0, 33 },
	{ BX_MSG_PUSH, MAXI, 0, 32 + MAXI },
	{ BX_MSG_PUSH_RDV, 1 << 20, 1, 48 },
	{ BX_MSG_PUSH_RDV, 16 << 20, 8, 32 + 8 * 16 },
	{ BX_MSG_PUSH_RDV, 100, 16, 32 + 16 * 16 },
	{ BX_MSG_PUSH_DONE, 0, 0, 32 },
	{ BX_MSG_PULL_REQ, 0, 1, 48 },
	{ BX_MSG_PULL_REQ, 100, 3, 32 + 48 + 100 },
	{ BX_MSG_PULL_RESP, 63, 0, 95 },
	{ BX_MSG_PULL_WRITTEN, 1 << 20, 0, 32 },
	{ BX_MSG_NACK, 0, 0, 32 },
	{ BX_MSG_READY, 0, 0, 32 },
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static size_t build(u8 type, u32 len, u8 nrdv)
{
	struct bx_msg m = valid(type, len, nrdv);

	return bx_wire_build(buf, sizeof(buf), &m);
}

UNIT_TEST(layout_is_fixed)
{
	CHECK_EQ(sizeof(struct bx_wire_hdr), 32);
	CHECK_EQ(sizeof(struct bx_wire_rdv), 16);
	CHECK_EQ(offsetof(struct bx_wire_hdr, service), 4);
	CHECK_EQ(offsetof(struct bx_wire_hdr, req_id), 8);
	CHECK_EQ(offsetof(struct bx_wire_hdr, seq), 16);
	CHECK_EQ(offsetof(struct bx_wire_hdr, len), 24);
	CHECK_EQ(offsetof(struct bx_wire_hdr, status), 28);
	CHECK_EQ(offsetof(struct bx_wire_hdr, nrdv), 29);
	CHECK_EQ(offsetof(struct bx_wire_hdr, lag), 30);
}

UNIT_TEST(big_endian_on_the_wire)
{
	struct bx_msg m = valid(BX_MSG_CREDIT, 0, 0);

	m.credits = 0x0102;
	m.service = 0x03040506;
	CHECK_EQ(bx_wire_build(buf, sizeof(buf), &m), 32);
	CHECK_EQ(buf[0], BX_MSG_CREDIT);
	CHECK_EQ(buf[2], 0x01);
	CHECK_EQ(buf[3], 0x02);
	CHECK_EQ(buf[4], 0x03);
	CHECK_EQ(buf[7], 0x06);
}

UNIT_TEST(roundtrip_every_shape)
{
	for (size_t i = 0; i < NSHAPES; i++) {
		struct bx_msg m = valid(shapes[i].type, shapes[i].len,
					shapes[i].nrdv), p;
		size_t n = bx_wire_build(buf, sizeof(buf), &m);

		CHECK_EQ(n, shapes[i].size);
		CHECK_EQ(bx_wire_size(&m), n);
		/* Parse sets every field it defines, whatever was there. */
		memset(&p, 0xa5, sizeof(p));
		CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), 0);
		CHECK_EQ(p.type, m.type);
		CHECK_EQ(p.flags, m.flags);
		CHECK_EQ(p.lag, m.lag);
		CHECK_EQ(p.credits, m.credits);
		CHECK_EQ(p.service, m.service);
		CHECK_EQ(p.req_id, m.req_id);
		CHECK_EQ(p.seq, m.seq);
		CHECK_EQ(p.len, m.len);
		CHECK_EQ(p.status, m.status);
		CHECK_EQ(p.nrdv, m.nrdv);
		for (u8 k = 0; k < m.nrdv; k++) {
			CHECK_EQ(p.rdv[k].addr, m.rdv[k].addr);
			CHECK_EQ(p.rdv[k].rkey, m.rdv[k].rkey);
			CHECK_EQ(p.rdv[k].len, m.rdv[k].len);
		}
		if (m.type == BX_MSG_PUSH_RDV)
			CHECK_EQ(p.rdv_total, m.len);
		else if (m.type == BX_MSG_PULL_REQ)
			CHECK_EQ(p.rdv_total, (u64)m.nrdv << 21);
		else
			CHECK_EQ(p.rdv_total, 0);
		if (m.payload) {
			CHECK(p.payload == buf + n - m.len);
			CHECK(!memcmp(p.payload, payload, m.len));
		} else {
			CHECK(p.payload == NULL);
		}
	}
}

/* Every type is accepted only at its exact size. */
UNIT_TEST(exact_size_only)
{
	struct bx_msg p;

	for (size_t i = 0; i < NSHAPES; i++) {
		size_t n = build(shapes[i].type, shapes[i].len, shapes[i].nrdv);

		CHECK_EQ(bx_wire_parse(buf, n - 1, MAXI, &p), -EBADMSG);
		CHECK_EQ(bx_wire_parse(buf, n + 1, MAXI, &p), -EBADMSG);
	}
	for (size_t n = 0; n < BX_WIRE_HDR_LEN; n++)
		CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
}

UNIT_TEST(push_lag)
{
	struct bx_msg m = valid(BX_MSG_PUSH, 16, 0), p;
	size_t n;

	m.seq = 100;
	m.lag = 99;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), 0);
	CHECK_EQ(p.lag, 99);
	m.lag = BX_WIRE_LAG_UNKNOWN;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), 0);
	/* The floor must be a push number: >= 1. */
	m.lag = 100;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	/* No floor without a number. */
	m.seq = 0;
	m.lag = 1;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	/* Nor on a type that is not a push. */
	m = valid(BX_MSG_PULL_RESP, 16, 0);
	m.lag = 1;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
}

UNIT_TEST(unknown_type_flags_status_resv)
{
	struct bx_msg m = valid(BX_MSG_CREDIT, 0, 0), p;

	CHECK_EQ(bx_wire_build(buf, sizeof(buf), &m), 32);
	buf[0] = 0;
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), -EBADMSG);
	buf[0] = __BX_MSG_MAX;
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), -EBADMSG);
	buf[0] = 0xff;
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), -EBADMSG);
	buf[0] = BX_MSG_CREDIT;
	buf[1] = 0x80;
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), -EBADMSG);
	buf[1] = BX_WIRE_F_MORE_CREDIT;
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), 0);
	buf[31] = 1;
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), -EBADMSG);
	/* A status on a type that has none. */
	m.status = BX_ST_NOBUFS;
	bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), -EBADMSG);
	/* Unknown status code. */
	m = valid(BX_MSG_NACK, 0, 0);
	m.status = __BX_ST_MAX;
	bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), -EBADMSG);
	/* A NACK must carry an error. */
	m.status = BX_ST_OK;
	bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), -EBADMSG);
}

UNIT_TEST(lengths_from_the_wire)
{
	size_t n = build(BX_MSG_PUSH, 100, 0);
	struct bx_msg m, p;

	/* Inline beyond the receiver's limit, even if "received". */
	CHECK_EQ(bx_wire_parse(buf, n, 99, &p), -EBADMSG);
	/* A huge length cannot wrap the size computation. */
	buf[24] = buf[25] = buf[26] = buf[27] = 0xff;
	CHECK_EQ(bx_wire_parse(buf, n, UINT32_MAX, &p), -EBADMSG);
	/* Length on a type that has none. */
	m = valid(BX_MSG_CREDIT, 0, 0);
	m.len = 5;
	bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, 32, MAXI, &p), -EBADMSG);
}

UNIT_TEST(descriptor_counts)
{
	struct bx_msg m, p;
	size_t n;

	/* Descriptors on a type that has none. */
	n = build(BX_MSG_PUSH, 10, 0);
	buf[29] = 1;
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	CHECK_EQ(bx_wire_parse(buf, n + 16, MAXI, &p), -EBADMSG);
	/* None, or too many, where they are required. */
	m = valid(BX_MSG_PUSH_RDV, 100, 1);
	m.nrdv = 0;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	m = valid(BX_MSG_PUSH_RDV, 100, 16);
	n = bx_wire_build(buf, sizeof(buf), &m);
	buf[29] = 17;
	CHECK_EQ(bx_wire_parse(buf, n + 16, MAXI, &p), -EBADMSG);
	/* Build refuses what cannot be encoded. */
	m.nrdv = BX_WIRE_MAX_RDV + 1;
	CHECK_EQ(bx_wire_build(buf, sizeof(buf), &m), 0);
}

UNIT_TEST(rendezvous_descriptors)
{
	struct bx_msg m, p;
	size_t n;

	/* Segments must add up to exactly the push length. */
	m = valid(BX_MSG_PUSH_RDV, 4096, 2);
	m.rdv[1].len--;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	/* Every segment has a key and a length. */
	m = valid(BX_MSG_PUSH_RDV, 10, 2);
	m.rdv[1].rkey = 0;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	m = valid(BX_MSG_PULL_REQ, 0, 2);
	m.rdv[1].len = 0;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	/* Sink segments summing past 4 GiB. */
	m = valid(BX_MSG_PULL_REQ, 0, 3);
	m.rdv[0].len = m.rdv[1].len = m.rdv[2].len = 0x60000000;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	/* A keyless sink with an address, or with more segments. */
	m = valid(BX_MSG_PULL_REQ, 0, 1);
	m.rdv[0].rkey = 0;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	m = valid(BX_MSG_PULL_REQ, 0, 2);
	m.rdv[0].rkey = 0;
	m.rdv[0].addr = 0;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	/* An eager-only sink: no key, no address, a capacity... */
	m = valid(BX_MSG_PULL_REQ, 0, 1);
	m.rdv[0].rkey = 0;
	m.rdv[0].addr = 0;
	m.rdv[0].len = MAXI;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), 0);
	CHECK_EQ(p.rdv[0].len, MAXI);
	/* ...for an inline response: no larger than one. */
	m.rdv[0].len = MAXI + 1;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
}

/* Nothing a peer sends may ask for more than one operation can move. */
UNIT_TEST(transfer_caps)
{
	struct bx_msg m, p;
	size_t n;

	/* A sink of exactly BX_WIRE_XFER_MAX, and one byte more. */
	m = valid(BX_MSG_PULL_REQ, 0, 8);
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), 0);
	CHECK_EQ(p.rdv_total, BX_WIRE_XFER_MAX);
	m.rdv[7].len++;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	/* A push source likewise. */
	m = valid(BX_MSG_PUSH_RDV, BX_WIRE_XFER_MAX, 16);
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), 0);
	m = valid(BX_MSG_PUSH_RDV, BX_WIRE_XFER_MAX + 16, 16);
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	/* And a response said to be RDMA-written. */
	m = valid(BX_MSG_PULL_WRITTEN, BX_WIRE_XFER_MAX, 0);
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), 0);
	m.len++;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
}

/* READY: a bare header, credits aside. */
UNIT_TEST(ready_message)
{
	struct bx_msg m, p;
	size_t n;

	m = valid(BX_MSG_READY, 0, 0);
	m.credits = 5;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(n, BX_WIRE_HDR_LEN);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), 0);
	CHECK_EQ(p.credits, 5);
	m.len = 16;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	m.len = 0;
	m.req_id = 1;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
	m.req_id = 0;
	m.service = 3;
	n = bx_wire_build(buf, sizeof(buf), &m);
	CHECK_EQ(bx_wire_parse(buf, n, MAXI, &p), -EBADMSG);
}

UNIT_TEST(build_refuses_small_buffers)
{
	struct bx_msg m = valid(BX_MSG_PUSH, 100, 0);

	CHECK_EQ(bx_wire_build(buf, 131, &m), 0);
	CHECK_EQ(bx_wire_build(buf, 132, &m), 132);
	m.type = 0;
	CHECK_EQ(bx_wire_build(buf, sizeof(buf), &m), 0);
}

/*
 * Reference property over random inputs: whatever the parser accepts is
 * canonical, i.e. building the parsed message gives back the same bytes.
 * A parser that accepted junk in any field would fail this.
 */
UNIT_TEST(random_inputs_canonical)
{
	u64 x = 0x9e3779b97f4a7c15ull;
	static u8 again[sizeof(buf)];
	int accepted = 0;

	for (int iter = 0; iter < 200000; iter++) {
		struct bx_msg p;
		size_t n, i;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* Start from a valid message, then damage it. */
		i = x % NSHAPES;
		n = build(shapes[i].type, shapes[i].len, shapes[i].nrdv);
		if (n > 4096 + 64)
			continue;
		for (int k = (x >> 8) % 4; k > 0; k--) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[x % (n + 1)] = (u8)(x >> 32);
		}
		if ((x >> 40) % 8 == 0)
			n = (x >> 44) % (n + 2);
		if (bx_wire_parse(buf, n, MAXI, &p))
			continue;
		accepted++;
		CHECK_EQ(bx_wire_build(again, sizeof(again), &p), n);
		CHECK(!memcmp(again, buf, n));
	}
	CHECK(accepted > 1000);
}

/* Flip each byte of @pd[0..@n) in turn: parse must fail unless @ok[i]. */
static int flips_refused(u8 *pd, size_t n, size_t len, const bool *ok,
			 int (*parse)(const void *, size_t, void *))
{
	u8 out[256];
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		pd[i] ^= 0x80;
		if (!ok[i] && !parse(pd, len, out))
			bad++;
		pd[i] ^= 0x80;
	}
	return bad;
}

static int req_parse(const void *b, size_t l, void *o)
{
	return bx_wire_req_parse(b, l, o);
}

static int acc_parse(const void *b, size_t l, void *o)
{
	return bx_wire_accept_parse(b, l, o);
}

static int chal_parse(const void *b, size_t l, void *o)
{
	return bx_wire_challenge_parse(b, l, o);
}

static int lanes_parse(const void *b, size_t l, void *o)
{
	return bx_wire_lanes_parse(b, l, o);
}

UNIT_TEST(handshake_request)
{
	struct bx_conn_params in = { .credits = 128, .msg_size = 8192,
				     .epoch = 0x1122334455667788ull }, out;
	u8 pd[56] = { 0 };
	bool ok[56] = { 0 };

	memset(in.nonce, 0xa5, sizeof(in.nonce));
	bx_wire_req_build((struct bx_wire_req *)pd, &in);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), 0);
	CHECK_EQ(out.credits, 128);
	CHECK_EQ(out.msg_size, 8192);
	CHECK_EQ(out.epoch, 0x1122334455667788ull);
	CHECK(!memcmp(out.nonce, in.nonce, sizeof(in.nonce)));
	CHECK_EQ(bx_wire_req_parse(pd, BX_WIRE_REQ_LEN - 1, &out), -EPROTO);
	CHECK_EQ(bx_wire_req_parse(NULL, 56, &out), -EPROTO);
	/*
	 * A first request: every byte but credits, size, epoch and nonce is
	 * fixed (magic, version, flags, and kid, cookie and proof zero).
	 */
	for (int i = 6; i < 12; i++)
		ok[i] = true;
	for (int i = 16; i < 32; i++)
		ok[i] = true;
	ok[7] = false;	/* credits 128 ^ 0x80: below 3 */
	ok[9] = false;	/* the byte after the lane: reserved */
	CHECK_EQ(flips_refused(pd, sizeof(pd), sizeof(pd), ok, req_parse), 0);
	/*
	 * The lane: byte 8, any value (the acceptor checks it against its
	 * qps_per_peer); lane 0 is the request from before lanes, whose
	 * msg_size was a be32 there.
	 */
	CHECK_EQ(out.lane, 0);
	CHECK_EQ(pd[8], 0);
	CHECK_EQ(pd[9], 0);
	CHECK_EQ(pd[10], 0x20);
	CHECK_EQ(pd[11], 0);
	in.lane = 7;
	bx_wire_req_build((struct bx_wire_req *)pd, &in);
	CHECK_EQ(pd[8], 7);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), 0);
	CHECK_EQ(out.lane, 7);
	CHECK_EQ(out.msg_size, 8192);
	in.lane = 255;
	bx_wire_req_build((struct bx_wire_req *)pd, &in);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), 0);
	CHECK_EQ(out.lane, 255);
	pd[9] = 1;
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), -EPROTO);
	in.lane = 0;
	/* Epoch 0 names no incarnation. */
	in.epoch = 0;
	bx_wire_req_build((struct bx_wire_req *)pd, &in);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), -EPROTO);
	in.epoch = 1;
	/* With a cookie and a proof, both go out and come back. */
	in.flags = BX_WIRE_REQ_F_COOKIE | BX_WIRE_REQ_F_PROOF;
	memset(in.cookie, 0x11, sizeof(in.cookie));
	memset(in.kid, 0x22, sizeof(in.kid));
	memset(in.mac, 0x33, sizeof(in.mac));
	bx_wire_req_build((struct bx_wire_req *)pd, &in);
	CHECK_EQ(pd[5], 3);
	CHECK_EQ(pd[12], 0x22);
	CHECK_EQ(pd[32], 0x11);
	CHECK_EQ(pd[55], 0x33);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), 0);
	CHECK(!memcmp(out.cookie, in.cookie, 8) && !memcmp(out.kid, in.kid, 4) &&
	      !memcmp(out.mac, in.mac, 16));
	/* A proof without a cookie; a kid or proof without the flag. */
	pd[5] = BX_WIRE_REQ_F_PROOF;
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), -EPROTO);
	pd[5] = BX_WIRE_REQ_F_COOKIE;
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), -EPROTO);
	memset(pd + 12, 0, 4);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), -EPROTO);
	memset(pd + 40, 0, 16);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), 0);
	pd[5] = 0;
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), -EPROTO);
	pd[5] = 4;
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), -EPROTO);
	/* A peer must take bx's largest message: header, 16 descriptors,
	 * the largest inline payload.
	 */
	CHECK_EQ(BX_WIRE_MIN_MSG, 32 + 16 * 16 + 4096);
	in.flags = 0;
	in.credits = 2;
	bx_wire_req_build((struct bx_wire_req *)pd, &in);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), -EPROTO);
	in.credits = 3;
	in.msg_size = BX_WIRE_MIN_MSG - 1;
	bx_wire_req_build((struct bx_wire_req *)pd, &in);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), -EPROTO);
	in.msg_size = BX_WIRE_MIN_MSG;
	bx_wire_req_build((struct bx_wire_req *)pd, &in);
	CHECK_EQ(bx_wire_req_parse(pd, sizeof(pd), &out), 0);
}

UNIT_TEST(handshake_accept)
{
	struct bx_conn_params in = { .credits = 64, .msg_size = 8192,
				     .epoch = 9 }, out;
	u8 pd[196] = { 0 };
	bool ok[40] = { 0 };

	bx_wire_accept_build((struct bx_wire_accept *)pd, &in);
	CHECK_EQ(bx_wire_accept_parse(pd, sizeof(pd), &out), 0);
	CHECK_EQ(out.credits, 64);
	CHECK_EQ(out.epoch, 9);
	CHECK_EQ(out.flags, 0);
	CHECK_EQ(bx_wire_accept_parse(pd, BX_WIRE_ACCEPT_LEN - 1, &out), -EPROTO);
	/* The padding a transport adds is not checked. */
	pd[100] = 1;
	CHECK_EQ(bx_wire_accept_parse(pd, sizeof(pd), &out), 0);
	for (int i = 16; i < 24; i++)
		ok[i] = true;	/* the epoch */
	for (int i = 6; i < 12; i++)
		ok[i] = true;	/* credits 64, msg_size 8192: still usable */
	ok[12] = true;		/* the lane: the initiator compares it */
	CHECK_EQ(flips_refused(pd, 40, sizeof(pd), ok, acc_parse), 0);
	/* The lane echoed, the rest of the word reserved. */
	in.lane = 3;
	bx_wire_accept_build((struct bx_wire_accept *)pd, &in);
	CHECK_EQ(pd[12], 3);
	CHECK_EQ(bx_wire_accept_parse(pd, sizeof(pd), &out), 0);
	CHECK_EQ(out.lane, 3);
	pd[13] = 1;
	CHECK_EQ(bx_wire_accept_parse(pd, sizeof(pd), &out), -EPROTO);
	in.lane = 0;
	in.flags = BX_WIRE_REQ_F_PROOF;
	memset(in.mac, 0x44, sizeof(in.mac));
	bx_wire_accept_build((struct bx_wire_accept *)pd, &in);
	CHECK_EQ(bx_wire_accept_parse(pd, sizeof(pd), &out), 0);
	CHECK(!memcmp(out.mac, in.mac, 16));
	pd[5] = BX_WIRE_REQ_F_COOKIE | BX_WIRE_REQ_F_PROOF;
	CHECK_EQ(bx_wire_accept_parse(pd, sizeof(pd), &out), -EPROTO);
	pd[5] = 0;
	CHECK_EQ(bx_wire_accept_parse(pd, sizeof(pd), &out), -EPROTO);
	in.flags = 0;
	in.epoch = 0;
	bx_wire_accept_build((struct bx_wire_accept *)pd, &in);
	CHECK_EQ(bx_wire_accept_parse(pd, sizeof(pd), &out), -EPROTO);
}

UNIT_TEST(handshake_lanes_reject)
{
	struct bx_wire_lanes w;
	bool ok[8] = { 0 };
	u8 pd[148] = { 0 }, lanes = 0;
	struct bx_wire_chal c;

	bx_wire_lanes_build(&w, 4);
	memcpy(pd, &w, sizeof(w));
	CHECK_EQ(sizeof(w), 8);
	CHECK_EQ(pd[5], BX_WIRE_REJ_LANES);
	CHECK_EQ(pd[6], 4);
	CHECK_EQ(bx_wire_lanes_parse(pd, sizeof(pd), &lanes), 0);
	CHECK_EQ(lanes, 4);
	/* Not a challenge, nor a challenge one of these. */
	CHECK_EQ(bx_wire_challenge_parse(pd, sizeof(pd), &c), -EPROTO);
	CHECK_EQ(bx_wire_lanes_parse(pd, BX_WIRE_LANES_LEN - 1, &lanes), -EPROTO);
	CHECK_EQ(bx_wire_lanes_parse(NULL, 8, &lanes), -EPROTO);
	ok[6] = true;	/* 4 ^ 0x80 lanes: still some */
	CHECK_EQ(flips_refused(pd, 8, sizeof(pd), ok, lanes_parse), 0);
	/* No lane at all is not a refusal of a lane. */
	pd[6] = 0;
	CHECK_EQ(bx_wire_lanes_parse(pd, sizeof(pd), &lanes), -EPROTO);
	/* The padding a transport adds is not checked. */
	pd[6] = 1;
	pd[100] = 9;
	CHECK_EQ(bx_wire_lanes_parse(pd, sizeof(pd), &lanes), 0);
	CHECK_EQ(lanes, 1);
}

UNIT_TEST(handshake_challenge)
{
	struct bx_wire_chal in = { .nkid = 1 }, out;
	u8 pd[148] = { 0 };
	bool ok[24] = { 0 };

	/* A plain reject (zeros) is no challenge. */
	CHECK_EQ(bx_wire_challenge_parse(pd, sizeof(pd), &out), -EPROTO);
	memset(in.cookie, 0x55, sizeof(in.cookie));
	memset(in.kid[0], 0x66, 4);
	memset(in.kid[1], 0x77, 4);	/* beyond nkid: not sent */
	bx_wire_challenge_build((struct bx_wire_challenge *)pd, &in);
	CHECK_EQ(pd[20], 0);
	CHECK_EQ(bx_wire_challenge_parse(pd, sizeof(pd), &out), 0);
	CHECK_EQ(out.nkid, 1);
	CHECK(!memcmp(out.cookie, in.cookie, 8) && !memcmp(out.kid[0], in.kid[0], 4));
	CHECK_EQ(bx_wire_challenge_parse(pd, 23, &out), -EPROTO);
	for (int i = 8; i < 20; i++)
		ok[i] = true;	/* the cookie and the first kid */
	CHECK_EQ(flips_refused(pd, 24, sizeof(pd), ok, chal_parse), 0);
	pd[6] = 3;
	CHECK_EQ(bx_wire_challenge_parse(pd, sizeof(pd), &out), -EPROTO);
	pd[6] = 2;
	CHECK_EQ(bx_wire_challenge_parse(pd, sizeof(pd), &out), 0);
	pd[6] = 0;
	CHECK_EQ(bx_wire_challenge_parse(pd, sizeof(pd), &out), -EPROTO);
	memset(pd + 16, 0, 4);
	CHECK_EQ(bx_wire_challenge_parse(pd, sizeof(pd), &out), 0);
	CHECK_EQ(out.nkid, 0);
}

UNIT_TEST(rdv_piece)
{
	const struct bx_rdv fixed[3] = { { .len = 100 }, { .len = 50 },
					 { .len = 200 } };
	u32 in = 7;
	u8 idx = 7;

	CHECK_EQ(bx_wire_rdv_piece(fixed, 3, 0, 1000, &idx, &in), 100);
	CHECK(idx == 0 && in == 0);
	CHECK_EQ(bx_wire_rdv_piece(fixed, 3, 99, 1000, &idx, &in), 1);
	CHECK(idx == 0 && in == 99);
	CHECK_EQ(bx_wire_rdv_piece(fixed, 3, 100, 1000, &idx, &in), 50);
	CHECK(idx == 1 && in == 0);
	CHECK_EQ(bx_wire_rdv_piece(fixed, 3, 149, 10, &idx, &in), 1);
	CHECK_EQ(bx_wire_rdv_piece(fixed, 3, 150, 30, &idx, &in), 30);
	CHECK(idx == 2 && in == 0);
	CHECK_EQ(bx_wire_rdv_piece(fixed, 3, 349, 30, &idx, &in), 1);
	CHECK(idx == 2 && in == 199);
	CHECK_EQ(bx_wire_rdv_piece(fixed, 3, 350, 30, &idx, &in), 0);
	CHECK_EQ(bx_wire_rdv_piece(fixed, 3, ~0ull, 30, &idx, &in), 0);
	CHECK_EQ(bx_wire_rdv_piece(fixed, 0, 0, 30, &idx, &in), 0);

	/* Random segments (some near 4 GiB, so positions pass 32 bits) and
	 * random piece sizes: the pieces tile the transfer exactly, each
	 * within one segment, where a running sum says it is.
	 */
	u64 seed = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 2000; round++) {
		struct bx_rdv rdv[BX_WIRE_MAX_RDV];
		u64 start[BX_WIRE_MAX_RDV], total = 0, at = 0;
		u8 n, last = 0;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		n = 1 + (seed >> 33) % BX_WIRE_MAX_RDV;
		for (u8 i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1;
			rdv[i].len = (seed >> 60) == 0 ? 0xffffffffu - (seed >> 40) % 4096 :
				     1 + (seed >> 33) % (1u << 21);
			start[i] = total;
			total += rdv[i].len;
		}
		while (at < total) {
			u32 max, got;

			seed = seed * 6364136223846793005ull + 1;
			max = 1 + (seed >> 33) % (1u << 19);
			got = bx_wire_rdv_piece(rdv, n, at, max, &idx, &in);
			CHECK(got > 0 && got <= max);
			CHECK(idx < n && idx >= last);
			CHECK_EQ(start[idx] + in, at);
			CHECK((u64)in + got <= rdv[idx].len);
			last = idx;
			at += got;
		}
		CHECK_EQ(at, total);
		CHECK_EQ(bx_wire_rdv_piece(rdv, n, at, 1, &idx, &in), 0);
	}
}

int main(void)
{
	return unit_run();
}
