/* SPDX-License-Identifier: GPL-2.0 */
/* glibc's <errno.h> itself includes <linux/errno.h>: chain to the real one. */
#ifndef _SHIM_LINUX_ERRNO_H
#define _SHIM_LINUX_ERRNO_H

#include_next <linux/errno.h>
#include <errno.h>

#endif
