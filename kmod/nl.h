/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the generic netlink family "bx" (Documentation/netlink/specs/bx.yaml;
 * policies and ops in the generated nl-gen.c).
 */
#ifndef _BX_NL_H
#define _BX_NL_H

#include <net/genetlink.h>
#include <linux/bx_netlink.h>

int bx_nl_init(void);
void bx_nl_uninit(void);

#endif /* _BX_NL_H */
