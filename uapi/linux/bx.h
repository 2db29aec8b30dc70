/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/*
 * bx: host-wide RDMA transport for parameter servers -- user API.
 *
 * /dev/bx is a misc character device. Every open file is an independent
 * context; all contexts of a host share the module's RDMA connections.
 *
 * Conventions (apply to every command):
 *
 *  - Structures use fixed-width types only, 64-bit fields are
 *    __aligned_u64, pointers travel as __u64, padding is explicit.
 *  - Fields named resv* and flag bits not defined here must be zero;
 *    otherwise the command fails with -EINVAL.
 *  - Structures that may grow begin with a __u32 size field set by the
 *    caller to sizeof() of the structure it was compiled against. The
 *    kernel accepts any size >= the first published size
 *    (BX_*_SIZE_VER0). Input structures larger than the kernel's must
 *    have zeros in the part the kernel does not know (else -E2BIG);
 *    output structures are truncated to the caller's size, or
 *    zero-filled past the kernel's.
 *  - The structure size encoded in a command number is that of the
 *    first version and never changes; the size field governs copying.
 *  - Unknown commands fail with -ENOTTY. 32-bit callers use the same
 *    structures (compat_ioctl).
 *
 * Commands:
 *
 *  BX_IOC_GET_INFO (struct bx_info, read/write)
 *	Describe the module: API features (BX_FEAT_*), number of bound RDMA
 *	devices. Errors: -EFAULT (bad pointer), -EINVAL (size too small or
 *	resv non-zero).
 *
 *  BX_IOC_SETUP (struct bx_setup, read/write)
 *	Once per open file: allocate the file's region (registered memory the
 *	process maps and carves buffers from) and its completion ring, and
 *	return where to mmap them and the ring's layout. Errors: -EBUSY
 *	(already set up), -EINVAL (sizes out of range, not page multiples,
 *	resv/flags), -ENOMEM (module-wide region cap or RLIMIT_MEMLOCK).
 *
 *  mmap(2) of the file at setup.region_mmap_off / setup.cq_mmap_off with
 *	exactly region_size / cq_mmap_size bytes, MAP_SHARED. Anything else
 *	fails with -EINVAL; before BX_IOC_SETUP with -ENXIO. Mappings are not
 *	inherited across fork(2) (the child still shares the file).
 *
 *  BX_IOC_PEER (struct bx_peer_addr, read/write)
 *	Resolve an IPv4/IPv6 address of a peer's RDMA interface to a peer id
 *	used in submissions. The connection is set up on first use and shared
 *	by every process of the host. The file holds the peer until it is
 *	closed, which keeps the id valid for it. Errors: -EINVAL,
 *	-EAFNOSUPPORT, -ENOSPC (the user holds user_peers_max peers, or the
 *	peer table is full, its last entries kept for CAP_NET_ADMIN),
 *	-ENETUNREACH (no RDMA device's network device is in the file's
 *	network namespace).
 *
 *  BX_IOC_BIND / BX_IOC_UNBIND (struct bx_bind, write)
 *	Own / release a service number on this host; pushes and pulls sent to
 *	it arrive on this file. Numbers below BX_SERVICE_PRIV need
 *	CAP_NET_BIND_SERVICE. Errors: -EADDRINUSE (bound by another file),
 *	-EACCES (a privileged number without the capability), -EINVAL
 *	(service 0 or resv), -ENOENT (unbind of a service not bound here),
 *	-ENOSPC (the user has user_services_max services bound).
 *
 *  BX_IOC_SUBMIT (struct bx_submit, write)
 *	Submit up to 256 struct bx_sqe in one call. Returns the number
 *	accepted (>= 1), or a negative errno if the first one is refused;
 *	each accepted one ends with exactly one struct bx_cqe in the ring.
 *	Validation errors are returned synchronously: -EINVAL (opcode, flags,
 *	resv, peer id, buffer outside the region, overflowing lengths),
 *	-EBUSY (as many operations in flight as the ring has entries, or as
 *	the user may have: user_ops_max),
 *	-ENOENT (unknown reply token), -EMSGSIZE (reply larger than the
 *	requester's buffer), -ENOTCONN (RECV for a service not bound here),
 *	-ENXIO (no BX_IOC_SETUP yet).
 *	Every push, pull and reply has a deadline (bx_sqe.timeout_ms): one
 *	that has not completed by then completes with -ETIMEDOUT, and gives
 *	back its window, registrations and region. It certainly did not
 *	reach the peer's application, except a push already sent, which then
 *	completes with -ECONNRESET (outcome unknown) and a pull, whose
 *	request the server may have seen. One still awaiting its response a
 *	second past its deadline ends its connection (the other operations
 *	on it are recovered: bx.rst, "Recovery semantics"). Closing the
 *	file cancels whatever it has queued at once; what is on the wire
 *	ends at its response or its deadline.
 *	With @wait set, a call that had all @nr accepted then sleeps until
 *	the ring holds at least @wait completions, saving the poll(2) of a
 *	caller that waits for its answers anyway; a signal ends the sleep
 *	early. Either way it returns the number accepted.
 *
 *  poll(2): EPOLLIN while the completion ring is not empty.
 */
#ifndef _UAPI_LINUX_BX_H
#define _UAPI_LINUX_BX_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/const.h>

#define BX_DEVICE_NAME		"bx"

/* ioctl magic; free in Documentation/userspace-api/ioctl/ioctl-number.rst */
#define BX_IOC_MAGIC		0xBB

/* Features announced in bx_info.features and bx_setup.features. */
#define BX_FEAT_INFO		_BITULL(0)	/* BX_IOC_GET_INFO */
#define BX_FEAT_DATA		_BITULL(1)	/* setup, peers, push, pull */
#define BX_FEAT_VEC		_BITULL(2)	/* BX_SQE_F_VEC */

/**
 * struct bx_info - module description, filled by BX_IOC_GET_INFO
 * @size:	in: sizeof(struct bx_info) as known to the caller;
 *		out: the size the kernel filled (min of both)
 * @resv0:	must be zero
 * @features:	out: BX_FEAT_* bits the module supports
 * @ndevs:	out: number of RDMA devices currently bound
 * @resv1:	must be zero
 */
struct bx_info {
	__u32		size;
	__u32		resv0;
	__aligned_u64	features;
	__u32		ndevs;
	__u32		resv1;
};

#define BX_INFO_SIZE_VER0	24

#define BX_IOC_GET_INFO		_IOWR(BX_IOC_MAGIC, 0x00, struct bx_info)

/* Limits. */
#define BX_REGION_MAX		_BITULL(32)	/* bytes per file */
#define BX_CQ_ENTRIES_MAX	32768
#define BX_SUBMIT_MAX		256
#define BX_MSG_MAX		(16U << 20)	/* bytes per push/pull */
#define BX_SERVICE_PRIV		1024	/* services below: privileged */

/**
 * struct bx_cq_offsets - layout of the completion ring mapping
 *
 * Byte offsets from the start of the mapping. The kernel produces entries
 * at *tail and publishes them with a store-release of *tail; user space
 * reads *tail with load-acquire, consumes entries from *head, and returns
 * them with a store-release of *head. Each side writes only its own index
 * (the indices are on separate cache lines); indices are free-running
 * __u32, the entry for index i is cqes[i & *ring_mask]. The ring does not
 * overflow: submissions fail with -EBUSY while in-flight operations plus
 * unconsumed entries fill it. *overflow counts entries the kernel had to
 * drop anyway because user space corrupted *head; it stays 0 otherwise.
 */
struct bx_cq_offsets {
	__u32	head;
	__u32	tail;
	__u32	ring_mask;
	__u32	ring_entries;
	__u32	cqes;
	__u32	overflow;
	__aligned_u64 resv1;
};

/**
 * struct bx_setup - BX_IOC_SETUP
 * @size:		in: sizeof(struct bx_setup)
 * @flags:		in: must be 0
 * @region_size:	in: bytes, a multiple of 4096, 4 KiB .. BX_REGION_MAX
 * @cq_entries:		in: power of two, 8 .. BX_CQ_ENTRIES_MAX
 * @resv0:		must be 0
 * @features:		out: BX_FEAT_*
 * @region_mmap_off:	out: mmap offset of the region
 * @cq_mmap_off:	out: mmap offset of the completion ring
 * @cq_mmap_size:	out: bytes to map for the ring
 * @cq_off:		out: ring layout
 * @eager_max:		out: largest payload sent inline (by copy); larger
 *			ones move by RDMA straight between regions
 * @resv1:		must be 0
 */
struct bx_setup {
	__u32		size;
	__u32		flags;
	__aligned_u64	region_size;
	__u32		cq_entries;
	__u32		resv0;
	__aligned_u64	features;
	__aligned_u64	region_mmap_off;
	__aligned_u64	cq_mmap_off;
	__aligned_u64	cq_mmap_size;
	struct bx_cq_offsets cq_off;
	__u32		eager_max;
	__u32		resv1;
};

#define BX_SETUP_SIZE_VER0	96

/**
 * struct bx_peer_addr - BX_IOC_PEER
 * @family:	in: AF_INET or AF_INET6
 * @resv0:	must be 0
 * @id:		out: peer id for struct bx_sqe
 * @addr:	in: address in network byte order (IPv4: first 4 bytes)
 */
struct bx_peer_addr {
	__u16	family;
	__u16	resv0;
	__u32	id;
	__u8	addr[16];
};

/**
 * struct bx_bind - BX_IOC_BIND, BX_IOC_UNBIND
 * @service:	service number, not 0
 * @resv0:	must be 0
 */
struct bx_bind {
	__u32	service;
	__u32	resv0;
};

/* struct bx_sqe.opcode */
enum {
	BX_OP_PUSH	= 1,	/* deliver off/len to service on peer */
	BX_OP_PULL	= 2,	/* send request off/len, response to resp_* */
	BX_OP_RECV	= 3,	/* offer off/len to receive for service */
	BX_OP_REPLY	= 4,	/* answer the pull request @token with off/len */
};

/* struct bx_sqe.flags */
#define BX_SQE_F_VEC		_BITUL(0)	/* a gathered/scattered buffer */

/**
 * struct bx_vec - one piece of a buffer given as several (BX_SQE_F_VEC)
 * @off:	region offset
 * @len:	bytes, at least 1
 * @resv:	must be 0
 *
 * With BX_SQE_F_VEC an operation's buffer is the concatenation of 1 to
 * BX_VEC_MAX pieces of the region, listed in an array of struct bx_vec in
 * the caller's memory, which the kernel copies at submission: a PUSH's
 * or a REPLY's source (@off: the array's address, @len: its entries), a
 * PULL's response sink (@resp_off: the address, @resp_len: the entries;
 * the request stays @off/@len). The peer sees one buffer. The total is
 * at most BX_MSG_MAX; a buffer moved by RDMA is registered in at most 16
 * segments of at most 1 MiB, none across two pieces (else -EMSGSIZE).
 * Not for RECV (-EINVAL). Announced by BX_FEAT_VEC.
 */
struct bx_vec {
	__aligned_u64	off;
	__u32		len;
	__u32		resv;
};

#define BX_VEC_MAX		8

/**
 * struct bx_sqe - one operation for BX_IOC_SUBMIT
 * @opcode:	BX_OP_*
 * @flags:	BX_SQE_F_*; others must be 0
 * @resv0:	must be 0
 * @peer:	PUSH, PULL: id from BX_IOC_PEER
 * @user_data:	returned in the operation's completion
 * @off:	region offset of the payload (PUSH), request (PULL), receive
 *		buffer (RECV) or response (REPLY)
 * @len:	bytes at @off; RECV: capacity
 * @service:	PUSH, PULL: destination service; RECV: a service bound by
 *		this file
 * @resp_off:	PULL: region offset where the response lands
 * @resp_len:	PULL: capacity at @resp_off
 * @timeout_ms:	PUSH, PULL, REPLY: the operation's deadline, in ms from its
 *		submission; 0: the module's op_timeout_ms. Past it, the
 *		operation completes with -ETIMEDOUT (see BX_IOC_SUBMIT).
 *		RECV: must be 0 (a RECV waits until a message comes, or its
 *		service is unbound)
 * @resv2:	must be 0
 */
struct bx_sqe {
	__u8		opcode;
	__u8		flags;
	__u16		resv0;
	__u32		peer;
	__aligned_u64	user_data;
	__aligned_u64	off;
	__u32		len;
	__u32		service;
	__aligned_u64	resp_off;
	__u32		resp_len;
	__u32		timeout_ms;
	__aligned_u64	token;
	__aligned_u64	resv2;
};

/**
 * struct bx_submit - BX_IOC_SUBMIT
 * @sqes:	pointer to @nr struct bx_sqe
 * @nr:		1 .. BX_SUBMIT_MAX
 * @wait:	0, or completions to wait for: at most the ring's entries
 */
struct bx_submit {
	__aligned_u64	sqes;
	__u32		nr;
	__u32		wait;
};

/* struct bx_cqe.flags */
#define BX_CQE_F_PUSH		_BITUL(0)	/* RECV got a push */
#define BX_CQE_F_REQUEST	_BITUL(1)	/* RECV got a pull request */
#define BX_CQE_F_COPIED		_BITUL(2)	/* payload moved by CPU copy */

/**
 * struct bx_cqe - one completion
 * @user_data:	of the submission (RECV: of the RECV that got the message)
 * @res:	bytes transferred (PULL: response bytes; RECV: message
 *		bytes at @off), or a negative errno
 * @flags:	BX_CQE_F_*
 * @off:	RECV: region offset of the message (the RECV's buffer)
 * @token:	RECV of a pull request: pass to BX_OP_REPLY; a file's
 *		tokens are not reused until 2^31 requests later, so a
 *		second REPLY with the same token fails with -ENOENT
 * @service:	RECV: the service the message was sent to
 * @peer:	RECV: id of the sending peer
 * @resp_max:	RECV of a pull request: bytes the requester can take
 * @resv0:	zero
 */
struct bx_cqe {
	__aligned_u64	user_data;
	__s32		res;
	__u32		flags;
	__aligned_u64	off;
	__aligned_u64	token;
	__u32		service;
	__u32		peer;
	__u32		resp_max;
	__u32		resv0;
};

#define BX_IOC_SETUP		_IOWR(BX_IOC_MAGIC, 0x01, struct bx_setup)
#define BX_IOC_PEER		_IOWR(BX_IOC_MAGIC, 0x02, struct bx_peer_addr)
#define BX_IOC_BIND		_IOW(BX_IOC_MAGIC, 0x03, struct bx_bind)
#define BX_IOC_UNBIND		_IOW(BX_IOC_MAGIC, 0x04, struct bx_bind)
#define BX_IOC_SUBMIT		_IOW(BX_IOC_MAGIC, 0x05, struct bx_submit)

#endif /* _UAPI_LINUX_BX_H */
