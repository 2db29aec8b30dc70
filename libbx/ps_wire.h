/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * bxps's wire format (the ps-lite-style layer, bxps.h): pure C, no libbx
 * call, no allocation, so that the host unit tests and the fuzzer run it
 * as it is. Internal to libbx (not installed).
 *
 * Data messages. A request (worker to server, or any node to any node
 * for SimpleApp) and its response are each one bx push to the other
 * node's service (small messages) or service + 1 (larger ones):
 *
 *   offset  size  field
 *   0       4     magic     PSW_MAGIC, little-endian
 *   4       1     version   PSW_VERSION
 *   5       1     type      PSW_T_REQ or PSW_T_RESP
 *   6       1     dtype     element type of the values (PSW_DT_*), 0: none
 *   7       1     flags     PSW_F_PUSH, _PULL, _SIMPLE, _LENS
 *   8       4     cmd       ps-lite's cmd (SimpleApp: head), signed
 *   12      4     status    response: 0 or a negative errno; request: 0
 *   16      4     sender    node id of the sender
 *   20      2     app       ps-lite's app_id
 *   22      2     customer  ps-lite's customer_id
 *   24      8     id        the requester's request id (echoed)
 *   32      4     priority  signed
 *   36      4     nkeys     keys, little-endian
 *   40      8     vbytes    bytes of values
 *   48      4     blen      bytes of body (SimpleApp)
 *   52      4     part      which of the request's messages (echoed)
 *   56      8     resv      zero
 *   64      8*k   keys      little-endian uint64, strictly ascending
 *   ..      4*k   lens      with PSW_F_LENS: each key's elements, signed
 *                           32-bit, >= 0, little-endian, zero-padded to
 *                           a multiple of 8 bytes
 *   ..      vbytes values   in key order, host element format
 *   ..      blen  body      bytes
 *
 * Keys, lengths and values are 8-byte aligned in a receive buffer (the
 * handler reads them in place); every count adds up to the message's
 * size exactly, and
 * psw_decode() checks it all before anything is used. With PSW_F_LENS
 * the lengths sum to vbytes / element size; a pull request may carry
 * lengths without values: the lengths it expects. A response whose status
 * is not 0 carries nothing else.
 *
 * Control messages are bx pulls (request at most 4 KiB) to the scheduler
 * (REGISTER, BARRIER) or to any node (WATCH):
 *
 *   0   4  magic PSW_CMAGIC   4  1 version   5  1 op (PSW_C_*)
 *   6   2  resv (0)           8  4 arg       12 4 service
 *   16  48 addr (REGISTER: the node's address, text, NUL-padded)
 *
 * REGISTER's arg is the role, BARRIER's the group. Answers: REGISTER gets
 * the node table (psw_table_*), BARRIER and WATCH a 16-byte control
 * message of op PSW_C_DONE (arg: 0 or a negative errno), PSW_C_ALIVE
 * (watch: still here, ask again) or PSW_C_BYE (watch: finalized).
 *
 * Node table: a control header of op PSW_C_TABLE, arg = the number of
 * nodes, service = the receiver's own node id, then per node 64 bytes:
 * id (4), role (4), service (4), resv (4), addr (48, NUL-padded text).
 */
#ifndef BX_PS_WIRE_H
#define BX_PS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PSW_MAGIC	0x53505842u	/* "BXPS" */
#define PSW_CMAGIC	0x43505842u	/* "BXPC" */
#define PSW_VERSION	1
#define PSW_HDR_LEN	64u
#define PSW_CTRL_LEN	64u
#define PSW_ENTRY_LEN	64u
#define PSW_ADDR_LEN	48u
/* bx's limit on a pull request (Documentation/bx.rst, "Limits"). */
#define PSW_PULL_REQ_MAX 4096u

#define PSW_T_REQ	1
#define PSW_T_RESP	2

#define PSW_F_PUSH	0x01u
#define PSW_F_PULL	0x02u
#define PSW_F_SIMPLE	0x04u
#define PSW_F_LENS	0x08u
#define PSW_F_ALL	0x0fu

/* Element types (bxps.h repeats them as BXPS_*). */
#define PSW_DT_NONE	0
#define PSW_DT_F32	1
#define PSW_DT_F64	2
#define PSW_DT_F16	3
#define PSW_DT_BF16	4
#define PSW_DT_I32	5
#define PSW_DT_I64	6
#define PSW_DT_U8	7
#define PSW_DT_U64	8
#define PSW_DT_MAX	8

#define PSW_C_REGISTER	1
#define PSW_C_BARRIER	2
#define PSW_C_WATCH	3
#define PSW_C_TABLE	4
#define PSW_C_DONE	5
#define PSW_C_ALIVE	6
#define PSW_C_BYE	7

/* Roles, also the group bits (ps-lite's kScheduler, kServerGroup, ...). */
#define PSW_ROLE_SCHEDULER	1
#define PSW_ROLE_SERVER		2
#define PSW_ROLE_WORKER		4

/* A decoded data message; the pointers point into it. */
struct psw_msg {
	uint8_t		type;
	uint8_t		dtype;
	uint8_t		flags;
	int32_t		cmd;
	int32_t		status;
	uint32_t	sender;
	uint16_t	app;
	uint16_t	customer;
	uint64_t	id;
	int32_t		priority;
	uint32_t	nkeys;
	uint64_t	vbytes;
	uint32_t	blen;
	uint32_t	part;
	const uint8_t	*keys;		/* nkeys little-endian uint64 */
	const uint8_t	*vals;		/* vbytes */
	const uint8_t	*lens;		/* PSW_F_LENS: nkeys int32, or NULL */
	const uint8_t	*body;		/* blen */
};

/* A decoded control message. */
struct psw_ctrl {
	uint8_t		op;
	int32_t		arg;
	uint32_t	service;
	char		addr[PSW_ADDR_LEN];	/* NUL-terminated */
};

/* One node of the table. */
struct psw_node {
	uint32_t	id;
	uint32_t	role;
	uint32_t	service;
	char		addr[PSW_ADDR_LEN];	/* NUL-terminated */
};

/** psw_dtype_size() - bytes of one element of @dtype; 0: unknown/none. */
unsigned int psw_dtype_size(unsigned int dtype);

/** psw_key() - key @i of a decoded message (i < nkeys). */
uint64_t psw_key(const struct psw_msg *m, uint32_t i);

/** psw_len() - length @i of a decoded message with lengths. */
int32_t psw_len(const struct psw_msg *m, uint32_t i);

/**
 * psw_size() - bytes of a data message (0: too large for 32-bit bx)
 * @nkeys, @vbytes, @lens (a table of nkeys lengths follows), @blen
 */
uint64_t psw_size(uint32_t nkeys, uint64_t vbytes, bool lens, uint32_t blen);

/**
 * psw_encode_hdr() - write the 64-byte header of @m (its counts and
 * scalars; the pointers are ignored) into @buf
 */
void psw_encode_hdr(void *buf, const struct psw_msg *m);

/**
 * psw_encode() - write header and the pieces of @m into @buf (@cap bytes)
 * (@m->lens, if set, is host-order int32). Return: the message's size,
 * or 0 if it does not fit.
 */
uint64_t psw_encode(void *buf, uint64_t cap, const struct psw_msg *m,
		    const uint64_t *keys, const int32_t *lens);

/**
 * psw_decode() - check and decode a received data message
 * @buf: the message, 8-byte aligned; @len: its size
 * Return: 0; -EBADMSG (not a message of this version; sizes that do not
 * add up; keys not ascending; lengths negative or not matching the
 * values; an unknown type, element type or flag; a reserved field not
 * zero; a response with an error and a payload).
 */
int psw_decode(const void *buf, uint64_t len, struct psw_msg *m);

/**
 * psw_peek() - the header of a message that psw_decode() refused, if it
 * is whole: who sent it, which request, which type (to answer the sender
 * with an error). Return: 0, or -EBADMSG if not even that can be read.
 */
int psw_peek(const void *buf, uint64_t len, struct psw_msg *m);

/** psw_ctrl_encode() - a control message (PSW_CTRL_LEN bytes) into @buf. */
void psw_ctrl_encode(void *buf, uint8_t op, int32_t arg, uint32_t service,
		     const char *addr);

/** psw_ctrl_decode() - check a control message (exact size). 0/-EBADMSG. */
int psw_ctrl_decode(const void *buf, uint64_t len, struct psw_ctrl *c);

/** psw_table_size() - bytes of a table of @n nodes. */
uint64_t psw_table_size(uint32_t n);

/**
 * psw_table_encode() - the node table for the node of id @you
 * Return: bytes written, 0 if it does not fit @cap.
 */
uint64_t psw_table_encode(void *buf, uint64_t cap, const struct psw_node *nodes,
			  uint32_t n, uint32_t you);

/**
 * psw_table_decode() - check and decode a node table into @nodes (room
 * for @max); *@n: nodes, *@you: the receiver's id.
 * Return: 0; -EBADMSG (sizes, an address without NUL, a bad role, an id
 * twice or not one of the receiver's table); -ENOSPC (more than @max).
 */
int psw_table_decode(const void *buf, uint64_t len, struct psw_node *nodes,
		     uint32_t max, uint32_t *n, uint32_t *you);

/*
 * ps-lite's node ids: the scheduler is 1, server rank r is 8 + 2r,
 * worker rank r is 9 + 2r; groups are the role bits.
 */
uint32_t psw_node_id(uint32_t role, uint32_t rank);
/** psw_id_role() - the role of node id @id (0: none). */
uint32_t psw_id_role(uint32_t id);
/** psw_id_rank() - the rank of node id @id (scheduler: 0). */
uint32_t psw_id_rank(uint32_t id);

/**
 * psw_range() - server @rank's keys of @nservers: [*begin, *end), an even
 * split of [0, UINT64_MAX), the last one to UINT64_MAX (ps-lite's kMaxKey)
 */
void psw_range(uint32_t nservers, uint32_t rank, uint64_t *begin,
	       uint64_t *end);

/**
 * psw_split() - which keys go to which server: server s gets keys
 * [first[s], first[s + 1]) (@first: nservers + 1 entries)
 * Return: 0; -EINVAL (keys not strictly ascending, or the last key
 * UINT64_MAX, which no server owns).
 */
int psw_split(uint32_t nservers, const uint64_t *keys, size_t nkeys,
	      size_t *first);

/*
 * Element-wise sum dst[i] += src[i] for @n elements of @dtype (f16 and
 * bf16 summed in float, rounded to nearest even). -EINVAL: no such type.
 */
int psw_sum(unsigned int dtype, void *dst, const void *src, uint64_t n);

/* Half and bfloat16 conversions (exported for the tests). */
float psw_f16_to_f32(uint16_t h);
uint16_t psw_f32_to_f16(float f);
float psw_bf16_to_f32(uint16_t h);
uint16_t psw_f32_to_bf16(float f);

#endif /* BX_PS_WIRE_H */
