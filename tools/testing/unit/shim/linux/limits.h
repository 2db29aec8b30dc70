/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_LIMITS_H
#define _SHIM_LINUX_LIMITS_H

#include_next <linux/limits.h>
#include <stdint.h>

#define U8_MAX		UINT8_MAX
#define U16_MAX		UINT16_MAX
#define U32_MAX		UINT32_MAX
#define U64_MAX		UINT64_MAX
#define S32_MAX		INT32_MAX

#endif
