/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: what exists once per network namespace (net.c).
 */
#ifndef _BX_NET_H
#define _BX_NET_H

#include <linux/xarray.h>
#include <net/net_namespace.h>

/**
 * struct bx_net - bx in one network namespace
 * @services:	service number -> struct bx_service bound by a file opened
 *		in the namespace (op.c, under bx_services_lock)
 */
struct bx_net {
	struct xarray	services;
};

int bx_net_init(void);
void bx_net_uninit(void);
struct bx_net *bx_net(const struct net *net);
bool bx_net_has_rdma(struct net *net);

#endif /* _BX_NET_H */
