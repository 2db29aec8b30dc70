/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_BUILD_BUG_H
#define _SHIM_LINUX_BUILD_BUG_H

/* The kernel's one-or-two-argument static_assert. */
#undef static_assert
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)
#define BUILD_BUG_ON(cond) static_assert(!(cond))

#endif
