/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: the generic netlink family "bx" (Documentation/netlink/specs/bx.yaml;
 * policies and ops in the generated nl-gen.c).
 */
#ifndef _BX_NL_H
#define _BX_NL_H

#include <net/genetlink.h>
#include <linux/bx_netlink.h>

struct bx_conn;
struct bx_dev;
struct bx_peer;

int bx_nl_init(void);
void bx_nl_uninit(void);

/* Events on the "events" group; from process context, never fail. */
void bx_nl_conn_event(struct bx_conn *conn, u8 cmd);
void bx_nl_dev_event(struct bx_dev *bdev, u8 cmd);
void bx_nl_peer_event(struct bx_peer *peer, u8 cmd);

#endif /* _BX_NL_H */
