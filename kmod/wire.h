/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the wire format. Every on-wire structure and constant lives here.
 *
 * Every SEND on a bx connection starts with a struct bx_wire_hdr (32
 * bytes, big-endian). PUSH_RDV and PULL_REQ carry hdr.nrdv (1..16)
 * struct bx_wire_rdv (16 bytes each) right after the header; types with
 * inline data carry it last:
 *
 *   type          after the header        hdr.len means
 *   CREDIT        nothing                 0
 *   PUSH          payload                 payload bytes (inline)
 *   PUSH_RDV      rdv[nrdv] (source)      bytes to RDMA READ (sum of rdv)
 *   PUSH_DONE     nothing                 0; status says how it ended
 *   PULL_REQ      rdv[nrdv] (sink), data  request payload bytes (inline)
 *   PULL_RESP     payload                 response bytes (inline)
 *   PULL_WRITTEN  nothing                 response bytes RDMA-written
 *   NACK          nothing                 0; status != OK
 *   READY         nothing                 0
 *
 * A PULL_REQ sink whose first descriptor has rkey 0 grants no remote
 * access: it is the only descriptor, its addr is 0 and its len is the
 * requester's capacity for an inline response (at most
 * BX_WIRE_INLINE_MAX). A rendezvous transfer (PUSH_RDV, a keyed sink,
 * PULL_WRITTEN) moves at most BX_WIRE_XFER_MAX bytes.
 *
 * A descriptor's addr is not an address of the granting host: it is the
 * start of a registration whose iova was chosen at random (a page offset
 * kept), valid only on the connection it was sent on and only until its
 * operation ends (Documentation/bx.rst, "Trust model").
 *
 * This file and wire.c are pure: they also compile in user space for the
 * host unit tests and the fuzzer (tools/testing/unit).
 */
#ifndef _BX_WIRE_H
#define _BX_WIRE_H

#include <linux/types.h>
#include <linux/build_bug.h>

enum bx_wire_type {
	BX_MSG_CREDIT		= 1,
	BX_MSG_PUSH		= 2,
	BX_MSG_PUSH_RDV		= 3,
	BX_MSG_PUSH_DONE	= 4,
	BX_MSG_PULL_REQ		= 5,
	BX_MSG_PULL_RESP	= 6,
	BX_MSG_PULL_WRITTEN	= 7,
	BX_MSG_NACK		= 8,
	BX_MSG_READY		= 9,	/* the initiator checked the accept */
	__BX_MSG_MAX,
};

/* Status codes on the wire; mapped to errnos at the edges, never raw. */
enum bx_wire_status {
	BX_ST_OK	= 0,
	BX_ST_NOSVC	= 1,	/* no such service bound: -ECONNREFUSED */
	BX_ST_NOBUFS	= 2,	/* no receive buffer fits: -ENOBUFS */
	BX_ST_TOOBIG	= 3,	/* does not fit the sink: -EMSGSIZE */
	BX_ST_REMOTE_IO	= 4,	/* RDMA transfer failed: -EREMOTEIO */
	BX_ST_CANCELED	= 5,	/* server went away: -ECONNABORTED */
	BX_ST_BUSY	= 6,	/* no receive buffer posted: send again later */
	BX_ST_AGAIN	= 7,	/* push: send again later with the same seq */
	__BX_ST_MAX,
};

/* hdr.flags */
#define BX_WIRE_F_MORE_CREDIT	0x01	/* sender is short of credits */
#define BX_WIRE_F_KNOWN		BX_WIRE_F_MORE_CREDIT

#define BX_WIRE_MAX_RDV		16
/* The largest inline payload (PUSH, PULL_REQ, PULL_RESP). */
#define BX_WIRE_INLINE_MAX	4096
/* The largest rendezvous transfer: BX_MSG_MAX of the uapi. */
#define BX_WIRE_XFER_MAX	(16U << 20)

/**
 * struct bx_wire_hdr - header of every bx message
 * @type:	enum bx_wire_type
 * @flags:	BX_WIRE_F_*; unknown bits are a protocol error
 * @credits:	receive credits the sender grants with this message
 * @service:	destination service (push, pull request) or 0
 * @req_id:	sender's id of the operation; echoed in responses
 * @seq:	PUSH, PUSH_RDV: the push's number (replay.h); other types: 0
 *		(not checked)
 * @len:	see the table at the top of this file
 * @status:	enum bx_wire_status (responses, PUSH_DONE, NACK)
 * @nrdv:	number of struct bx_wire_rdv after the header
 * @lag:	PUSH, PUSH_RDV with a seq: @seq minus the sender's floor, the
 *		oldest push whose outcome it does not know yet (< @seq), or
 *		BX_WIRE_LAG_UNKNOWN; otherwise zero
 */
struct bx_wire_hdr {
	__u8	type;
	__u8	flags;
	__be16	credits;
	__be32	service;
	__be64	req_id;
	__be64	seq;
	__be32	len;
	__u8	status;
	__u8	nrdv;
	__be16	lag;
};

#define BX_WIRE_LAG_UNKNOWN	0xffff

/**
 * struct bx_wire_rdv - a buffer segment the peer may access by RDMA, for
 *	exactly one operation (see Documentation/bx.rst, "Trust model")
 * @addr:	remote address as registered
 * @rkey:	remote key; 0 means "no remote access granted"
 * @len:	bytes the peer may access
 */
struct bx_wire_rdv {
	__be64	addr;
	__be32	rkey;
	__be32	len;
};

#define BX_WIRE_HDR_LEN		32
#define BX_WIRE_RDV_LEN		16

static_assert(sizeof(struct bx_wire_hdr) == BX_WIRE_HDR_LEN);
static_assert(sizeof(struct bx_wire_rdv) == BX_WIRE_RDV_LEN);

/* A segment in host byte order. */
struct bx_rdv {
	u64	addr;
	u32	rkey;
	u32	len;
};

/**
 * struct bx_msg - a message in host byte order
 * @rdv_total:	sum of rdv[].len (parse output; 0 for a PULL_REQ whose
 *		sink has no key)
 * @rdv:	descriptors; parse fills the first @nrdv and leaves the rest
 *		as they were
 * @payload:	inline payload inside the received buffer (parse), or the
 *		bytes to copy (build; NULL: the caller places them)
 */
struct bx_msg {
	u8		type;
	u8		flags;
	u16		credits;
	u32		service;
	u64		req_id;
	u64		seq;
	u32		len;
	u8		status;
	u8		nrdv;
	u16		lag;
	u64		rdv_total;
	struct bx_rdv	rdv[BX_WIRE_MAX_RDV];
	const void	*payload;
};

/*
 * Connection handshake: the rdma_cm private data of the connect request
 * (struct bx_wire_req, 56 bytes: all a RoCE or InfiniBand request
 * carries), of the reject that challenges it (struct bx_wire_challenge)
 * and of the accept (struct bx_wire_accept).
 *
 * Nothing is kept for a request before it proved something:
 *
 *   initiator                              acceptor
 *   req {params, epoch, nonce}        ->
 *                                     <-   reject: challenge {cookie,
 *                                          the secrets it knows (kids)}
 *   req {same, cookie, kid, proof}    ->   checks cookie and proof, only
 *                                          then makes a peer and a
 *                                          connection
 *                                     <-   accept {params, epoch, proof}
 *   checks the proof; READY           ->   the acceptor sends nothing
 *                                          before READY
 *
 * A peer may have several connections (lanes, qps_per_peer): each
 * request names its lane, and the accept echoes it. A request for a
 * lane the acceptor does not take (at or above its qps_per_peer) is
 * refused, once it proved what a request proves, by a reject carrying
 * struct bx_wire_lanes: the initiator uses fewer lanes from then on.
 * Lane 0's request is the same bytes as a request before lanes (whose
 * msg_size was a be32 below 64 KiB), and an acceptor that predates
 * lanes answers any request with lane 0: the initiator then uses one.
 *
 * The cookie is a MAC of the acceptor's own, over the request's
 * parameters, both addresses and a time bucket: a request can answer a
 * challenge only from the address the challenge went to, within
 * proof_ms, and the acceptor keeps no state in between (as TCP's SYN
 * cookies). Without a cluster secret the challenge names no secret and
 * the requests carry no proof; the cookie round trip stays. With one,
 * the proofs are HMAC-SHA256 (cut to BX_WIRE_MAC_LEN) under the prover's
 * own host key, derived from the secret and its address (auth.c), over
 * the transcript: both addresses, the request, and for the acceptor the
 * accept, so neither can be replayed, reflected or moved to another pair
 * of hosts. A request that offers its proof with a cookie still valid
 * (the initiator keeps the last one a peer gave it) skips the challenge.
 * Transports pad private data (RoCE: a request to 56 bytes, a reject to
 * 148, an accept to 196); the padding is not checked.
 */
#define BX_WIRE_MAGIC		0x62780000	/* "bx\0\0" */
#define BX_WIRE_VERSION		2
#define BX_WIRE_MIN_CREDITS	3
/* A peer's buffers must hold the largest message bx sends. */
#define BX_WIRE_MIN_MSG		(BX_WIRE_HDR_LEN + \
				 BX_WIRE_MAX_RDV * BX_WIRE_RDV_LEN + \
				 BX_WIRE_INLINE_MAX)

#define BX_WIRE_NONCE_LEN	8
#define BX_WIRE_COOKIE_LEN	8
#define BX_WIRE_KID_LEN		4	/* which cluster secret (auth.c) */
#define BX_WIRE_MAC_LEN		16	/* a proof: HMAC-SHA256, cut */
#define BX_WIRE_KIDS_MAX	2	/* secrets a host knows at once */

/* struct bx_wire_req.flags, struct bx_wire_accept.flags (PROOF) */
#define BX_WIRE_REQ_F_COOKIE	0x01	/* answers a challenge: @cookie */
#define BX_WIRE_REQ_F_PROOF	0x02	/* proves secret @kid: @mac */
#define BX_WIRE_REQ_F_KNOWN	(BX_WIRE_REQ_F_COOKIE | BX_WIRE_REQ_F_PROOF)

/**
 * struct bx_wire_req - the connect request
 * @magic:	BX_WIRE_MAGIC
 * @version:	BX_WIRE_VERSION
 * @flags:	BX_WIRE_REQ_F_*; PROOF only with COOKIE; unknown bits are a
 *		protocol error
 * @credits:	receive buffers the sender has posted: initial send
 *		credits of the other side
 * @lane:	which of the sender's connections to the acceptor this is
 *		(0 to its qps_per_peer - 1); the acceptor checks it against
 *		its own limit
 * @resv:	0
 * @msg_size:	bytes of each of those buffers: the largest message the
 *		other side may send
 * @kid:	PROOF: the secret it proves (one the challenge named); else 0
 * @epoch:	the sender's incarnation (changes when its module reloads),
 *		never 0
 * @nonce:	random, new for each connection
 * @cookie:	COOKIE: the challenge's cookie; else 0
 * @mac:	PROOF: the initiator's proof (auth.c); else 0
 */
struct bx_wire_req {
	__be32	magic;
	__u8	version;
	__u8	flags;
	__be16	credits;
	__u8	lane;
	__u8	resv;
	__be16	msg_size;
	__u8	kid[BX_WIRE_KID_LEN];
	__be64	epoch;
	__u8	nonce[BX_WIRE_NONCE_LEN];
	__u8	cookie[BX_WIRE_COOKIE_LEN];
	__u8	mac[BX_WIRE_MAC_LEN];
};

#define BX_WIRE_REQ_LEN		56
/* The part of a request its proof covers: all but the proof. */
#define BX_WIRE_REQ_SIGNED	(BX_WIRE_REQ_LEN - BX_WIRE_MAC_LEN)
static_assert(sizeof(struct bx_wire_req) == BX_WIRE_REQ_LEN);

/* struct bx_wire_challenge.type, struct bx_wire_lanes.type */
#define BX_WIRE_REJ_CHALLENGE	1
#define BX_WIRE_REJ_LANES	2

/**
 * struct bx_wire_challenge - a reject that asks for the cookie
 * @magic, @version: as a request's
 * @type:	BX_WIRE_REJ_CHALLENGE
 * @nkid:	secrets the acceptor knows (0: none, no proof wanted), at
 *		most BX_WIRE_KIDS_MAX
 * @resv:	0
 * @cookie:	to send back in the request
 * @kid:	the first @nkid name them, the newest first; the rest 0
 */
struct bx_wire_challenge {
	__be32	magic;
	__u8	version;
	__u8	type;
	__u8	nkid;
	__u8	resv;
	__u8	cookie[BX_WIRE_COOKIE_LEN];
	__u8	kid[BX_WIRE_KIDS_MAX][BX_WIRE_KID_LEN];
};

#define BX_WIRE_CHALLENGE_LEN	24
static_assert(sizeof(struct bx_wire_challenge) == BX_WIRE_CHALLENGE_LEN);

/**
 * struct bx_wire_lanes - a reject that refuses the request's lane
 * @magic, @version: as a request's
 * @type:	BX_WIRE_REJ_LANES
 * @lanes:	lanes the acceptor takes from a peer (its qps_per_peer),
 *		at least 1
 * @resv:	0
 */
struct bx_wire_lanes {
	__be32	magic;
	__u8	version;
	__u8	type;
	__u8	lanes;
	__u8	resv;
};

#define BX_WIRE_LANES_LEN	8
static_assert(sizeof(struct bx_wire_lanes) == BX_WIRE_LANES_LEN);

/**
 * struct bx_wire_accept - the acceptor's private data
 * @magic, @version, @credits, @msg_size, @epoch: as a request's
 * @flags:	BX_WIRE_REQ_F_PROOF, as the request's
 * @lane:	the request's lane (an acceptor before lanes sends 0)
 * @resv:	0
 * @mac:	PROOF: the acceptor's proof, with the request's secret
 */
struct bx_wire_accept {
	__be32	magic;
	__u8	version;
	__u8	flags;
	__be16	credits;
	__be32	msg_size;
	__u8	lane;
	__u8	resv[3];
	__be64	epoch;
	__u8	mac[BX_WIRE_MAC_LEN];
};

#define BX_WIRE_ACCEPT_LEN	40
#define BX_WIRE_ACCEPT_SIGNED	(BX_WIRE_ACCEPT_LEN - BX_WIRE_MAC_LEN)
static_assert(sizeof(struct bx_wire_accept) == BX_WIRE_ACCEPT_LEN);

/* A request or an accept in host byte order (bytes as they go). */
struct bx_conn_params {
	u8	flags;
	u8	lane;
	u16	credits;
	u32	msg_size;
	u64	epoch;
	u8	kid[BX_WIRE_KID_LEN];
	u8	nonce[BX_WIRE_NONCE_LEN];
	u8	cookie[BX_WIRE_COOKIE_LEN];
	u8	mac[BX_WIRE_MAC_LEN];
};

/* A challenge in host byte order. */
struct bx_wire_chal {
	u8	nkid;
	u8	cookie[BX_WIRE_COOKIE_LEN];
	u8	kid[BX_WIRE_KIDS_MAX][BX_WIRE_KID_LEN];
};

int bx_wire_req_parse(const void *buf, size_t len, struct bx_conn_params *p);
void bx_wire_req_build(struct bx_wire_req *w, const struct bx_conn_params *p);
int bx_wire_accept_parse(const void *buf, size_t len,
			 struct bx_conn_params *p);
void bx_wire_accept_build(struct bx_wire_accept *w,
			  const struct bx_conn_params *p);
int bx_wire_challenge_parse(const void *buf, size_t len,
			    struct bx_wire_chal *c);
void bx_wire_challenge_build(struct bx_wire_challenge *w,
			     const struct bx_wire_chal *c);
int bx_wire_lanes_parse(const void *buf, size_t len, u8 *lanes);
void bx_wire_lanes_build(struct bx_wire_lanes *w, u8 lanes);

int bx_wire_parse(const void *buf, size_t received, u32 max_inline,
		  struct bx_msg *msg);
size_t bx_wire_size(const struct bx_msg *msg);
size_t bx_wire_build(void *buf, size_t bufsize, const struct bx_msg *msg);
u32 bx_wire_rdv_piece(const struct bx_rdv *rdv, u8 nrdv, u64 at, u32 max, u8 *idx,
		      u32 *in);

#endif /* _BX_WIRE_H */
