/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
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
 */
#ifndef _UAPI_LINUX_BX_H
#define _UAPI_LINUX_BX_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/const.h>

#define BX_DEVICE_NAME		"bx"

/* ioctl magic; free in Documentation/userspace-api/ioctl/ioctl-number.rst */
#define BX_IOC_MAGIC		0xBB

/* Features announced in bx_info.features. */
#define BX_FEAT_INFO		_BITULL(0)	/* BX_IOC_GET_INFO */

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

#endif /* _UAPI_LINUX_BX_H */
