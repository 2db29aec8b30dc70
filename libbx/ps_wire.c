// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * bxps's wire format, node table, key ranges and element sums
 * (ps_wire.h). Pure C: no libbx call, no allocation; host-tested by
 * tools/testing/unit/ps_test.c and fuzz_ps.c.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <string.h>

#include "ps_wire.h"
#include "wire_le.h"

unsigned int psw_dtype_size(unsigned int dtype)
{
	static const unsigned char size[PSW_DT_MAX + 1] = {
		[PSW_DT_F32] = 4, [PSW_DT_F64] = 8, [PSW_DT_F16] = 2,
		[PSW_DT_BF16] = 2, [PSW_DT_I32] = 4, [PSW_DT_I64] = 8,
		[PSW_DT_U8] = 1, [PSW_DT_U64] = 8,
	};

	return dtype <= PSW_DT_MAX ? size[dtype] : 0;
}

uint64_t psw_key(const struct psw_msg *m, uint32_t i)
{
	return get64(m->keys + 8ull * i);
}

int32_t psw_len(const struct psw_msg *m, uint32_t i)
{
	return (int32_t)get32(m->lens + 4ull * i);
}

/* Bytes of a lengths table of @nkeys entries, padded to 8. */
static uint64_t lens_size(uint32_t nkeys)
{
	return (4ull * nkeys + 7) & ~7ull;
}

uint64_t psw_size(uint32_t nkeys, uint64_t vbytes, bool lens, uint32_t blen)
{
	uint64_t size = PSW_HDR_LEN + 8ull * nkeys + blen;

	if (lens)
		size += lens_size(nkeys);
	/* bx moves at most 16 MiB; anything near 2^32 is refused here. */
	if (vbytes > UINT32_MAX || size + vbytes > UINT32_MAX)
		return 0;
	return size + vbytes;
}

void psw_encode_hdr(void *buf, const struct psw_msg *m)
{
	uint8_t *p = buf;

	memset(p, 0, PSW_HDR_LEN);
	put32(p, PSW_MAGIC);
	p[4] = PSW_VERSION;
	p[5] = m->type;
	p[6] = m->dtype;
	p[7] = m->flags;
	put32(p + 8, (uint32_t)m->cmd);
	put32(p + 12, (uint32_t)m->status);
	put32(p + 16, m->sender);
	put16(p + 20, m->app);
	put16(p + 22, m->customer);
	put64(p + 24, m->id);
	put32(p + 32, (uint32_t)m->priority);
	put32(p + 36, m->nkeys);
	put64(p + 40, m->vbytes);
	put32(p + 48, m->blen);
	put32(p + 52, m->part);
}

uint64_t psw_encode(void *buf, uint64_t cap, const struct psw_msg *m,
		    const uint64_t *keys, const int32_t *lens)
{
	bool has_lens = m->flags & PSW_F_LENS;
	uint64_t size = psw_size(m->nkeys, m->vbytes, has_lens, m->blen);
	uint8_t *p = buf;

	if (!size || size > cap)
		return 0;
	psw_encode_hdr(p, m);
	p += PSW_HDR_LEN;
	for (uint32_t i = 0; i < m->nkeys; i++, p += 8)
		put64(p, keys[i]);
	if (has_lens) {
		memset(p, 0, lens_size(m->nkeys));
		for (uint32_t i = 0; i < m->nkeys; i++)
			put32(p + 4ull * i, (uint32_t)lens[i]);
		p += lens_size(m->nkeys);
	}
	if (m->vbytes)
		memcpy(p, m->vals, m->vbytes);
	p += m->vbytes;
	if (m->blen)
		memcpy(p, m->body, m->blen);
	return size;
}

int psw_peek(const void *buf, uint64_t len, struct psw_msg *m)
{
	const uint8_t *p = buf;

	/* The header must be whole and ours before any field is believed. */
	if (len < PSW_HDR_LEN || get32(p) != PSW_MAGIC || p[4] != PSW_VERSION)
		return -EBADMSG;
	memset(m, 0, sizeof(*m));
	m->type = p[5];
	m->dtype = p[6];
	m->flags = p[7];
	m->cmd = (int32_t)get32(p + 8);
	m->status = (int32_t)get32(p + 12);
	m->sender = get32(p + 16);
	m->app = get16(p + 20);
	m->customer = get16(p + 22);
	m->id = get64(p + 24);
	m->priority = (int32_t)get32(p + 32);
	m->nkeys = get32(p + 36);
	m->vbytes = get64(p + 40);
	m->blen = get32(p + 48);
	m->part = get32(p + 52);
	return 0;
}

int psw_decode(const void *buf, uint64_t len, struct psw_msg *m)
{
	const uint8_t *p = buf;
	unsigned int esize;
	uint64_t size, total;
	bool lens;

	if (psw_peek(buf, len, m))
		return -EBADMSG;
	/* Known type, flags and element type; reserved bytes zero. */
	if (m->type != PSW_T_REQ && m->type != PSW_T_RESP)
		return -EBADMSG;
	if (m->flags & ~PSW_F_ALL || get64(p + 56))
		return -EBADMSG;
	if (m->dtype > PSW_DT_MAX)
		return -EBADMSG;
	esize = psw_dtype_size(m->dtype);
	lens = m->flags & PSW_F_LENS;
	/* A request is one kind: SimpleApp, or push and/or pull. */
	if (m->type == PSW_T_REQ &&
	    !!(m->flags & PSW_F_SIMPLE) == !!(m->flags & (PSW_F_PUSH | PSW_F_PULL)))
		return -EBADMSG;
	if (m->type == PSW_T_REQ && m->status)
		return -EBADMSG;
	/* An error answer carries nothing but its header. */
	if (m->type == PSW_T_RESP && m->status &&
	    (m->status > 0 || m->nkeys || m->vbytes || m->blen || lens))
		return -EBADMSG;
	/* Values need an element type of whose size they are a multiple. */
	if (m->vbytes && (!esize || m->vbytes % esize))
		return -EBADMSG;
	/* The counts add up to the message's size, exactly. */
	size = psw_size(m->nkeys, m->vbytes, lens, m->blen);
	if (!size || size != len)
		return -EBADMSG;
	m->keys = p + PSW_HDR_LEN;
	m->lens = lens ? m->keys + 8ull * m->nkeys : NULL;
	m->vals = m->keys + 8ull * m->nkeys + (lens ? lens_size(m->nkeys) : 0);
	m->body = m->vals + m->vbytes;
	/* The padding after the lengths is zero. */
	if (lens && (m->nkeys & 1) && get32(m->lens + 4ull * m->nkeys))
		return -EBADMSG;
	if (!m->vbytes)
		m->vals = NULL;
	if (!m->blen)
		m->body = NULL;
	/* Keys strictly ascending. */
	for (uint32_t i = 1; i < m->nkeys; i++)
		if (psw_key(m, i) <= psw_key(m, i - 1))
			return -EBADMSG;
	if (!lens)
		return 0;
	/* Lengths >= 0, summing to the values (or, without, expected). */
	total = 0;
	for (uint32_t i = 0; i < m->nkeys; i++) {
		int32_t l = psw_len(m, i);

		if (l < 0)
			return -EBADMSG;
		total += (uint64_t)l;
	}
	if (m->vbytes && total * esize != m->vbytes)
		return -EBADMSG;
	/* Lengths without values: only as a pull's expectation. */
	if (!m->vbytes && total && !(m->type == PSW_T_REQ &&
				     m->flags == (PSW_F_PULL | PSW_F_LENS)))
		return -EBADMSG;
	return 0;
}

void psw_ctrl_encode(void *buf, uint8_t op, int32_t arg, uint32_t service,
		     const char *addr)
{
	uint8_t *p = buf;

	memset(p, 0, PSW_CTRL_LEN);
	put32(p, PSW_CMAGIC);
	p[4] = PSW_VERSION;
	p[5] = op;
	put32(p + 8, (uint32_t)arg);
	put32(p + 12, service);
	if (addr)
		strncpy((char *)p + 16, addr, PSW_ADDR_LEN - 1);
}

/* A NUL-terminated text of at most PSW_ADDR_LEN - 1 chars at @p. */
static int get_addr(const uint8_t *p, char *addr)
{
	if (!memchr(p, 0, PSW_ADDR_LEN))
		return -EBADMSG;
	memcpy(addr, p, PSW_ADDR_LEN);
	return 0;
}

int psw_ctrl_decode(const void *buf, uint64_t len, struct psw_ctrl *c)
{
	const uint8_t *p = buf;

	/* Exactly one control message of this version. */
	if (len != PSW_CTRL_LEN || get32(p) != PSW_CMAGIC ||
	    p[4] != PSW_VERSION || get16(p + 6))
		return -EBADMSG;
	c->op = p[5];
	if (c->op < PSW_C_REGISTER || c->op > PSW_C_BYE ||
	    c->op == PSW_C_TABLE)
		return -EBADMSG;
	c->arg = (int32_t)get32(p + 8);
	c->service = get32(p + 12);
	return get_addr(p + 16, c->addr);
}

uint64_t psw_table_size(uint32_t n)
{
	return PSW_CTRL_LEN + (uint64_t)n * PSW_ENTRY_LEN;
}

uint64_t psw_table_encode(void *buf, uint64_t cap, const struct psw_node *nodes,
			  uint32_t n, uint32_t you)
{
	uint64_t size = psw_table_size(n);
	uint8_t *p = buf;

	if (size > cap)
		return 0;
	psw_ctrl_encode(p, PSW_C_TABLE, (int32_t)n, you, NULL);
	p += PSW_CTRL_LEN;
	for (uint32_t i = 0; i < n; i++, p += PSW_ENTRY_LEN) {
		memset(p, 0, PSW_ENTRY_LEN);
		put32(p, nodes[i].id);
		put32(p + 4, nodes[i].role);
		put32(p + 8, nodes[i].service);
		strncpy((char *)p + 16, nodes[i].addr, PSW_ADDR_LEN - 1);
	}
	return size;
}

int psw_table_decode(const void *buf, uint64_t len, struct psw_node *nodes,
		     uint32_t max, uint32_t *n, uint32_t *you)
{
	const uint8_t *p = buf;
	bool found = false;
	uint32_t cnt;

	/* A control header of op TABLE, then exactly its entries. */
	if (len < PSW_CTRL_LEN || get32(p) != PSW_CMAGIC ||
	    p[4] != PSW_VERSION || p[5] != PSW_C_TABLE || get16(p + 6))
		return -EBADMSG;
	cnt = get32(p + 8);
	if (len != psw_table_size(cnt))
		return -EBADMSG;
	if (cnt > max)
		return -ENOSPC;
	*you = get32(p + 12);
	for (uint32_t i = 0; i < cnt; i++) {
		const uint8_t *e = p + PSW_CTRL_LEN + (uint64_t)i * PSW_ENTRY_LEN;
		struct psw_node *nd = &nodes[i];

		nd->id = get32(e);
		nd->role = get32(e + 4);
		nd->service = get32(e + 8);
		/* Known role, matching its id; reserved zero; text address. */
		if (get32(e + 12) || !nd->id || psw_id_role(nd->id) != nd->role)
			return -EBADMSG;
		if (get_addr(e + 16, nd->addr))
			return -EBADMSG;
		for (uint32_t j = 0; j < i; j++)
			if (nodes[j].id == nd->id)
				return -EBADMSG;
		found |= nd->id == *you;
	}
	*n = cnt;
	/* The receiver is one of the table's nodes. */
	return found ? 0 : -EBADMSG;
}

uint32_t psw_node_id(uint32_t role, uint32_t rank)
{
	if (role == PSW_ROLE_SCHEDULER)
		return 1;
	return 8 + 2 * rank + (role == PSW_ROLE_WORKER);
}

uint32_t psw_id_role(uint32_t id)
{
	if (id == 1)
		return PSW_ROLE_SCHEDULER;
	if (id < 8)
		return 0;
	return id & 1 ? PSW_ROLE_WORKER : PSW_ROLE_SERVER;
}

uint32_t psw_id_rank(uint32_t id)
{
	return id < 8 ? 0 : (id - 8) / 2;
}

void psw_range(uint32_t nservers, uint32_t rank, uint64_t *begin,
	       uint64_t *end)
{
	uint64_t step = UINT64_MAX / nservers;

	*begin = step * rank;
	*end = rank + 1 == nservers ? UINT64_MAX : step * (rank + 1);
}

int psw_split(uint32_t nservers, const uint64_t *keys, size_t nkeys,
	      size_t *first)
{
	uint32_t s = 0;
	uint64_t b, e;

	for (size_t i = 1; i < nkeys; i++)
		if (keys[i] <= keys[i - 1])
			return -EINVAL;
	if (nkeys && keys[nkeys - 1] == UINT64_MAX)
		return -EINVAL;
	first[0] = 0;
	psw_range(nservers, 0, &b, &e);
	for (size_t i = 0; i < nkeys; i++) {
		while (keys[i] >= e) {
			first[++s] = i;
			psw_range(nservers, s, &b, &e);
		}
	}
	while (s < nservers)
		first[++s] = nkeys;
	return 0;
}

float psw_f16_to_f32(uint16_t h)
{
	uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff, bits;
	float f;

	if (exp == 0) {
		/* Zero or subnormal: man * 2^-24. */
		f = (float)man * (1.0f / 16777216.0f);	/* exact */
		return sign ? -f : f;
	}
	if (exp == 31)
		bits = sign | 0x7f800000u | (man << 13);
	else
		bits = sign | ((exp + 112) << 23) | (man << 13);
	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t psw_f32_to_f16(float f)
{
	uint32_t bits, sign, man;
	int exp;

	memcpy(&bits, &f, sizeof(bits));
	sign = (bits >> 16) & 0x8000u;
	if ((bits & 0x7f800000u) == 0x7f800000u)	/* inf, NaN */
		return sign | 0x7c00u | ((bits & 0x7fffffu) ? 0x200u : 0);
	exp = (int)((bits >> 23) & 0xff) - 127 + 15;
	man = bits & 0x7fffffu;
	if (exp >= 31)
		return sign | 0x7c00u;
	if (exp <= 0) {
		/* Subnormal half (or zero): round man * 2^-24 to even. */
		float a = (f < 0 ? -f : f) * 16777216.0f;	/* 2^24, exact */
		uint32_t i = (uint32_t)a;
		float frac = a - (float)i;

		if (frac > 0.5f || (frac == 0.5f && (i & 1)))
			i++;
		return sign | (uint16_t)i;
	}
	/* Round to nearest even on the 13 bits dropped. */
	man |= (uint32_t)exp << 23;
	man += 0xfffu + ((man >> 13) & 1);
	return sign | (uint16_t)(man >> 13);
}

float psw_bf16_to_f32(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t psw_f32_to_bf16(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	if ((bits & 0x7fffffffu) > 0x7f800000u)	/* NaN stays NaN */
		return (uint16_t)((bits >> 16) | 0x40);
	bits += 0x7fffu + ((bits >> 16) & 1);
	return (uint16_t)(bits >> 16);
}

#define SUM_LOOP(type) do {					\
	type *d = dst;						\
	const type *s = src;					\
	for (uint64_t i = 0; i < n; i++)			\
		d[i] += s[i];					\
} while (0)

int psw_sum(unsigned int dtype, void *dst, const void *src, uint64_t n)
{
	uint16_t *d16 = dst;
	const uint16_t *s16 = src;

	switch (dtype) {
	case PSW_DT_F32:
		SUM_LOOP(float);
		return 0;
	case PSW_DT_F64:
		SUM_LOOP(double);
		return 0;
	case PSW_DT_I32:
		/* Wrap-around as ps-lite's int sums (unsigned: defined). */
		SUM_LOOP(uint32_t);
		return 0;
	case PSW_DT_I64:
	case PSW_DT_U64:
		SUM_LOOP(uint64_t);
		return 0;
	case PSW_DT_U8:
		SUM_LOOP(uint8_t);
		return 0;
	case PSW_DT_F16:
		for (uint64_t i = 0; i < n; i++)
			d16[i] = psw_f32_to_f16(psw_f16_to_f32(d16[i]) +
						psw_f16_to_f32(s16[i]));
		return 0;
	case PSW_DT_BF16:
		for (uint64_t i = 0; i < n; i++)
			d16[i] = psw_f32_to_bf16(psw_bf16_to_f32(d16[i]) +
						 psw_bf16_to_f32(s16[i]));
		return 0;
	}
	return -EINVAL;
}
