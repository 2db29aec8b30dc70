// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for libbx/ps_wire.c, bxps's wire format, under ASan
 * and UBSan: data messages round trip with every optional part; every
 * malformed header field, size and length refused; control messages and
 * the node table round trip and refuse garbage; node ids and ranks;
 * key ranges cover [0, 2^64 - 1) once and psw_split() agrees with a
 * linear scan; sums of every element type, f16 and bf16 conversions.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../../libbx/ps_wire.h"
#include "unit.h"

#define BUF_MAX (1u << 20)

/* 8-byte aligned, as bx's region buffers are. */
static uint64_t msgbuf[BUF_MAX / 8];
static uint64_t keys[4096];
static int32_t lens[4096];
static float vals[65536];

static struct psw_msg req(uint8_t flags, uint32_t nkeys, uint64_t vbytes)
{
	struct psw_msg m = {
		.type = PSW_T_REQ, .dtype = PSW_DT_F32, .flags = flags,
		.cmd = -3, .sender = 9, .app = 2, .customer = 5, .id = 77,
		.priority = -1, .nkeys = nkeys, .vbytes = vbytes, .part = 1,
		.vals = (const uint8_t *)vals,
	};

	return m;
}

UNIT_TEST(round_trip)
{
	struct psw_msg m, d;
	uint64_t size;

	for (uint32_t i = 0; i < 100; i++) {
		keys[i] = 3 * i + 1;
		lens[i] = (int32_t)(i % 4);
	}
	for (uint32_t i = 0; i < 1000; i++)
		vals[i] = (float)i;
	/* Values even per key. */
	m = req(PSW_F_PUSH, 100, 400 * 4);
	size = psw_encode(msgbuf, sizeof(msgbuf), &m, keys, NULL);
	CHECK_EQ(size, PSW_HDR_LEN + 800 + 1600);
	CHECK_EQ(psw_decode(msgbuf, size, &d), 0);
	CHECK_EQ(d.type, PSW_T_REQ);
	CHECK_EQ(d.cmd, -3);
	CHECK_EQ(d.priority, -1);
	CHECK_EQ(d.sender, 9);
	CHECK_EQ(d.app, 2);
	CHECK_EQ(d.customer, 5);
	CHECK_EQ(d.id, 77);
	CHECK_EQ(d.part, 1);
	CHECK_EQ(d.nkeys, 100);
	CHECK(d.lens == NULL);
	CHECK(d.body == NULL);
	CHECK(((uintptr_t)d.vals & 7) == 0);
	for (uint32_t i = 0; i < 100; i++)
		CHECK_EQ(psw_key(&d, i), keys[i]);
	CHECK(!memcmp(d.vals, vals, 1600));
	/* With lengths: sum(0..3 repeated) = 150 floats. */
	m = req(PSW_F_PUSH | PSW_F_LENS, 100, 150 * 4);
	size = psw_encode(msgbuf, sizeof(msgbuf), &m, keys, lens);
	CHECK_EQ(psw_decode(msgbuf, size, &d), 0);
	for (uint32_t i = 0; i < 100; i++)
		CHECK_EQ(psw_len(&d, i), lens[i]);
	/* An odd number of keys: the lengths padded with zeros. */
	m = req(PSW_F_PUSH | PSW_F_LENS, 3, (0 + 1 + 2) * 4);
	size = psw_encode(msgbuf, sizeof(msgbuf), &m, keys, lens);
	CHECK_EQ(size, PSW_HDR_LEN + 24 + 16 + 12);
	CHECK_EQ(psw_decode(msgbuf, size, &d), 0);
	CHECK(((uintptr_t)d.vals & 7) == 0);
	((uint8_t *)msgbuf)[PSW_HDR_LEN + 24 + 12] = 1;
	CHECK_EQ(psw_decode(msgbuf, size, &d), -EBADMSG);
	/* A pull with the lengths it expects, no values. */
	m = req(PSW_F_PULL | PSW_F_LENS, 100, 0);
	size = psw_encode(msgbuf, sizeof(msgbuf), &m, keys, lens);
	CHECK_EQ(psw_decode(msgbuf, size, &d), 0);
	CHECK(d.vals == NULL);
	/* SimpleApp with a body. */
	m = req(PSW_F_SIMPLE, 0, 0);
	m.dtype = 0;
	m.body = (const uint8_t *)"hello";
	m.blen = 5;
	size = psw_encode(msgbuf, sizeof(msgbuf), &m, NULL, NULL);
	CHECK_EQ(psw_decode(msgbuf, size, &d), 0);
	CHECK_EQ(d.blen, 5);
	CHECK(!memcmp(d.body, "hello", 5));
	/* An error answer. */
	m = req(PSW_F_PUSH, 0, 0);
	m.type = PSW_T_RESP;
	m.status = -EINVAL;
	size = psw_encode(msgbuf, sizeof(msgbuf), &m, NULL, NULL);
	CHECK_EQ(psw_decode(msgbuf, size, &d), 0);
	CHECK_EQ(d.status, -EINVAL);
	/* Too small a buffer. */
	m = req(PSW_F_PUSH, 100, 400 * 4);
	CHECK_EQ(psw_encode(msgbuf, 100, &m, keys, NULL), 0);
}

/* Encode a good push of 10 keys, 2 floats each, with lengths. */
static uint64_t good(void)
{
	struct psw_msg m = req(PSW_F_PUSH | PSW_F_LENS, 10, 80);

	for (uint32_t i = 0; i < 10; i++) {
		keys[i] = 100 + i;
		lens[i] = 2;
	}
	return psw_encode(msgbuf, sizeof(msgbuf), &m, keys, lens);
}

UNIT_TEST(refused)
{
	uint8_t *p = (uint8_t *)msgbuf;
	struct psw_msg d;
	uint64_t size = good();
	static const struct { unsigned int off; uint8_t val; } bad[] = {
		{ 0, 0 },		/* magic */
		{ 4, 2 },		/* version */
		{ 5, 0 }, { 5, 3 },	/* type */
		{ 6, PSW_DT_MAX + 1 },	/* dtype */
		{ 6, 0 },		/* values without a type */
		{ 7, 0x10 },		/* unknown flag */
		{ 7, PSW_F_PUSH | PSW_F_SIMPLE | PSW_F_LENS },
		{ 7, PSW_F_LENS },	/* neither push, pull nor simple */
		{ 12, 1 },		/* status in a request */
		{ 36, 11 },		/* nkeys */
		{ 40, 84 },		/* vbytes */
		{ 48, 1 },		/* blen */
		{ 56, 1 }, { 63, 1 },	/* reserved */
		{ PSW_HDR_LEN + 8, 100 },	/* keys not ascending */
		{ PSW_HDR_LEN + 80, 3 },	/* lengths not the values */
		{ PSW_HDR_LEN + 80 + 3, 0x80 },	/* negative length */
	};

	CHECK_EQ(psw_decode(msgbuf, size, &d), 0);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		good();
		p[bad[i].off] = bad[i].val;
		if (psw_decode(msgbuf, size, &d) != -EBADMSG) {
			printf("# case %u (offset %u) accepted\n", i,
			       bad[i].off);
			CHECK(0);
		}
	}
	good();
	/* Truncated, padded, header only. */
	CHECK_EQ(psw_decode(msgbuf, size - 1, &d), -EBADMSG);
	CHECK_EQ(psw_decode(msgbuf, size + 8, &d), -EBADMSG);
	CHECK_EQ(psw_decode(msgbuf, PSW_HDR_LEN - 1, &d), -EBADMSG);
	/* Peek still tells the sender of a broken one. */
	p[40] = 3;
	CHECK_EQ(psw_decode(msgbuf, size, &d), -EBADMSG);
	CHECK_EQ(psw_peek(msgbuf, size, &d), 0);
	CHECK_EQ(d.sender, 9);
	CHECK_EQ(d.id, 77);
	/* An error answer with a payload. */
	{
		struct psw_msg m = req(PSW_F_PUSH, 1, 4);

		m.type = PSW_T_RESP;
		m.status = -EIO;
		size = psw_encode(msgbuf, sizeof(msgbuf), &m, keys, NULL);
		CHECK_EQ(psw_decode(msgbuf, size, &d), -EBADMSG);
		m.status = 5;
		m.nkeys = 0;
		m.vbytes = 0;
		size = psw_encode(msgbuf, sizeof(msgbuf), &m, keys, NULL);
		CHECK_EQ(psw_decode(msgbuf, size, &d), -EBADMSG);
	}
	/* Lengths without values in a push. */
	{
		struct psw_msg m = req(PSW_F_PUSH | PSW_F_LENS, 10, 0);

		size = psw_encode(msgbuf, sizeof(msgbuf), &m, keys, lens);
		CHECK_EQ(psw_decode(msgbuf, size, &d), -EBADMSG);
	}
	/* Values not a multiple of the element. */
	{
		struct psw_msg m = req(PSW_F_PUSH, 1, 6);

		size = psw_encode(msgbuf, sizeof(msgbuf), &m, keys, NULL);
		CHECK_EQ(psw_decode(msgbuf, size, &d), -EBADMSG);
	}
	/* Counts that overflow. */
	CHECK_EQ(psw_size(UINT32_MAX, UINT64_MAX, true, UINT32_MAX), 0);
	CHECK_EQ(psw_size(1, 1ull << 33, false, 0), 0);
}

UNIT_TEST(ctrl_and_table)
{
	struct psw_node nodes[4] = {
		{ 1, PSW_ROLE_SCHEDULER, 8000, "10.0.0.1" },
		{ 8, PSW_ROLE_SERVER, 8002, "10.0.0.2" },
		{ 9, PSW_ROLE_WORKER, 8004, "10.0.0.3" },
		{ 10, PSW_ROLE_SERVER, 8006, "fe80::1" },
	}, out[4];
	uint8_t *p = (uint8_t *)msgbuf;
	struct psw_ctrl c;
	uint32_t n, you;
	uint64_t size;

	psw_ctrl_encode(msgbuf, PSW_C_REGISTER, PSW_ROLE_WORKER, 8004,
			"192.168.1.1");
	CHECK_EQ(psw_ctrl_decode(msgbuf, PSW_CTRL_LEN, &c), 0);
	CHECK_EQ(c.op, PSW_C_REGISTER);
	CHECK_EQ(c.arg, PSW_ROLE_WORKER);
	CHECK_EQ(c.service, 8004);
	CHECK(!strcmp(c.addr, "192.168.1.1"));
	CHECK_EQ(psw_ctrl_decode(msgbuf, PSW_CTRL_LEN - 1, &c), -EBADMSG);
	p[5] = PSW_C_TABLE;
	CHECK_EQ(psw_ctrl_decode(msgbuf, PSW_CTRL_LEN, &c), -EBADMSG);
	p[5] = 99;
	CHECK_EQ(psw_ctrl_decode(msgbuf, PSW_CTRL_LEN, &c), -EBADMSG);
	psw_ctrl_encode(msgbuf, PSW_C_WATCH, 0, 9, NULL);
	memset(p + 16, 'x', PSW_ADDR_LEN);	/* no NUL */
	CHECK_EQ(psw_ctrl_decode(msgbuf, PSW_CTRL_LEN, &c), -EBADMSG);

	size = psw_table_encode(msgbuf, sizeof(msgbuf), nodes, 4, 9);
	CHECK_EQ(size, psw_table_size(4));
	CHECK_EQ(psw_table_decode(msgbuf, size, out, 4, &n, &you), 0);
	CHECK_EQ(n, 4);
	CHECK_EQ(you, 9);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(out[i].id, nodes[i].id);
		CHECK_EQ(out[i].role, nodes[i].role);
		CHECK_EQ(out[i].service, nodes[i].service);
		CHECK(!strcmp(out[i].addr, nodes[i].addr));
	}
	CHECK_EQ(psw_table_decode(msgbuf, size, out, 3, &n, &you), -ENOSPC);
	CHECK_EQ(psw_table_decode(msgbuf, size - 1, out, 4, &n, &you), -EBADMSG);
	/* Receiver not in the table; duplicate id; role not the id's. */
	size = psw_table_encode(msgbuf, sizeof(msgbuf), nodes, 4, 11);
	CHECK_EQ(psw_table_decode(msgbuf, size, out, 4, &n, &you), -EBADMSG);
	nodes[3].id = 8;
	size = psw_table_encode(msgbuf, sizeof(msgbuf), nodes, 4, 9);
	CHECK_EQ(psw_table_decode(msgbuf, size, out, 4, &n, &you), -EBADMSG);
	nodes[3].id = 11;
	size = psw_table_encode(msgbuf, sizeof(msgbuf), nodes, 4, 9);
	CHECK_EQ(psw_table_decode(msgbuf, size, out, 4, &n, &you), -EBADMSG);
	CHECK_EQ(psw_table_encode(msgbuf, 64, nodes, 4, 9), 0);
}

UNIT_TEST(ids_ranges_split)
{
	uint64_t b, e, prev_end = 0, st = 12345;
	size_t first[8];

	CHECK_EQ(psw_node_id(PSW_ROLE_SCHEDULER, 0), 1);
	CHECK_EQ(psw_node_id(PSW_ROLE_SERVER, 0), 8);
	CHECK_EQ(psw_node_id(PSW_ROLE_WORKER, 0), 9);
	CHECK_EQ(psw_node_id(PSW_ROLE_SERVER, 3), 14);
	CHECK_EQ(psw_node_id(PSW_ROLE_WORKER, 3), 15);
	CHECK_EQ(psw_id_role(14), PSW_ROLE_SERVER);
	CHECK_EQ(psw_id_role(15), PSW_ROLE_WORKER);
	CHECK_EQ(psw_id_role(1), PSW_ROLE_SCHEDULER);
	CHECK_EQ(psw_id_role(3), 0);
	CHECK_EQ(psw_id_rank(15), 3);
	for (uint32_t s = 1; s <= 7; s++) {
		prev_end = 0;
		for (uint32_t r = 0; r < s; r++) {
			psw_range(s, r, &b, &e);
			CHECK_EQ(b, prev_end);
			CHECK(e > b);
			prev_end = e;
		}
		CHECK(prev_end == UINT64_MAX);
	}
	/* psw_split() against a scan of the ranges. */
	for (int round = 0; round < 200; round++) {
		uint32_t s = 1 + (uint32_t)(unit_rnd(&st) % 7), nk = 0;
		uint64_t k = unit_rnd(&st) % 1000;

		while (nk < 500) {
			keys[nk++] = k;
			k += 1 + unit_rnd(&st) % (UINT64_MAX / 400);
			if (k < keys[nk - 1] || k == UINT64_MAX)
				break;
		}
		CHECK_EQ(psw_split(s, keys, nk, first), 0);
		CHECK_EQ(first[0], 0);
		CHECK_EQ(first[s], nk);
		for (uint32_t r = 0; r < s; r++) {
			psw_range(s, r, &b, &e);
			for (size_t i = first[r]; i < first[r + 1]; i++)
				CHECK(keys[i] >= b && keys[i] < e);
		}
	}
	keys[0] = 5;
	keys[1] = 5;
	CHECK_EQ(psw_split(2, keys, 2, first), -EINVAL);
	keys[1] = UINT64_MAX;
	CHECK_EQ(psw_split(2, keys, 2, first), -EINVAL);
	CHECK_EQ(psw_split(3, keys, 0, first), 0);
	CHECK_EQ(first[3], 0);
}

UNIT_TEST(sums)
{
	float f[3] = { 1.5f, -2, 0 }, g[3] = { 0.25f, 2, 1e-3f };
	double d[2] = { 1, 2 }, dd[2] = { 0.5, -4 };
	int32_t i32[2] = { INT32_MAX, -5 }, j32[2] = { 1, 5 };
	int64_t i64[1] = { 1ll << 40 }, j64[1] = { -(1ll << 41) };
	uint16_t h[2], hh[2];
	uint8_t u[1] = { 250 }, uu[1] = { 10 };

	CHECK_EQ(psw_sum(PSW_DT_F32, f, g, 3), 0);
	CHECK(f[0] == 1.75f && f[1] == 0 && f[2] == 1e-3f);
	CHECK_EQ(psw_sum(PSW_DT_F64, d, dd, 2), 0);
	CHECK(d[0] == 1.5 && d[1] == -2);
	CHECK_EQ(psw_sum(PSW_DT_I32, i32, j32, 2), 0);
	CHECK_EQ(i32[0], INT32_MIN);
	CHECK_EQ(i32[1], 0);
	CHECK_EQ(psw_sum(PSW_DT_I64, i64, j64, 1), 0);
	CHECK_EQ(i64[0], -(1ll << 40));
	CHECK_EQ(psw_sum(PSW_DT_U8, u, uu, 1), 0);
	CHECK_EQ(u[0], 4);
	CHECK_EQ(psw_sum(0, u, uu, 1), -EINVAL);
	/* Half: exact values, rounding, limits. */
	CHECK(psw_f16_to_f32(psw_f32_to_f16(1.0f)) == 1.0f);
	CHECK(psw_f16_to_f32(psw_f32_to_f16(-0.5f)) == -0.5f);
	CHECK(psw_f16_to_f32(psw_f32_to_f16(65504.0f)) == 65504.0f);
	CHECK_EQ(psw_f32_to_f16(1e6f), 0x7c00);		/* inf */
	CHECK_EQ(psw_f32_to_f16(5.9604645e-8f), 1);	/* smallest */
	CHECK_EQ(psw_f32_to_f16(1.0f + 1.0f / 4096), 0x3c00);	/* to even */
	CHECK(psw_f16_to_f32(psw_f32_to_f16(6.1035156e-5f)) == 6.1035156e-5f);
	h[0] = psw_f32_to_f16(1.5f);
	h[1] = psw_f32_to_f16(100);
	hh[0] = psw_f32_to_f16(0.25f);
	hh[1] = psw_f32_to_f16(-1);
	CHECK_EQ(psw_sum(PSW_DT_F16, h, hh, 2), 0);
	CHECK(psw_f16_to_f32(h[0]) == 1.75f);
	CHECK(psw_f16_to_f32(h[1]) == 99);
	/* Every half round-trips through float. */
	for (uint32_t x = 0; x < 0x10000; x++) {
		if ((x & 0x7c00) == 0x7c00 && (x & 0x3ff))
			continue;	/* NaN */
		CHECK_EQ(psw_f32_to_f16(psw_f16_to_f32((uint16_t)x)), x);
	}
	/* bfloat16. */
	CHECK(psw_bf16_to_f32(psw_f32_to_bf16(3.0f)) == 3.0f);
	CHECK_EQ(psw_f32_to_bf16(1.0f + 1.0f / 256), 0x3f80);	/* to even */
	h[0] = psw_f32_to_bf16(2);
	hh[0] = psw_f32_to_bf16(0.5f);
	CHECK_EQ(psw_sum(PSW_DT_BF16, h, hh, 1), 0);
	CHECK(psw_bf16_to_f32(h[0]) == 2.5f);
	CHECK_EQ(psw_dtype_size(PSW_DT_BF16), 2);
	CHECK_EQ(psw_dtype_size(PSW_DT_MAX + 1), 0);
}

int main(void)
{
	return unit_run();
}
