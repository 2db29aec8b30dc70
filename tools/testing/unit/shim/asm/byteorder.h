/* SPDX-License-Identifier: GPL-2.0 */
/* User-space shim: the kernel's byte order helpers over <endian.h>. */
#ifndef _SHIM_ASM_BYTEORDER_H
#define _SHIM_ASM_BYTEORDER_H

#include <endian.h>
#include <linux/types.h>

#define cpu_to_be16(x) ((__be16)htobe16(x))
#define cpu_to_be32(x) ((__be32)htobe32(x))
#define cpu_to_be64(x) ((__be64)htobe64(x))
#define be16_to_cpu(x) ((u16)be16toh(x))
#define be32_to_cpu(x) ((u32)be32toh(x))
#define be64_to_cpu(x) ((u64)be64toh(x))
#define cpu_to_le32(x) ((__le32)htole32(x))
#define le32_to_cpu(x) ((u32)le32toh(x))

#endif
