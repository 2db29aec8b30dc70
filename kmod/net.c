// SPDX-License-Identifier: GPL-2.0
/*
 * bx: network namespaces.
 *
 * A file belongs to the network namespace of the process that opened it,
 * and so does all it creates: its services are bound in that namespace
 * only (two namespaces may bind the same number), the peers it resolves
 * are peers of that namespace, and their connections are made there. The
 * netlink family answers in every namespace with that namespace's
 * objects alone, and its events go to the namespace of their object.
 *
 * A namespace reaches peers only through an RDMA device whose network
 * device is in it: BX_IOC_PEER fails with -ENETUNREACH in one that has
 * none (a container sharing the host's RDMA devices, whose network
 * devices are the host's), rather than use the host's connections.
 * Connect requests are accepted in the initial namespace, where Soft-RoCE
 * (rxe) routes and listens.
 */

#include <linux/netdevice.h>
#include <net/netns/generic.h>

#include "conn.h"
#include "dev.h"
#include "net.h"

static unsigned int bx_net_id;

static int __net_init bx_net_init_one(struct net *net)
{
	struct bx_net *bn = net_generic(net, bx_net_id);

	xa_init(&bn->services);
	return 0;
}

static void __net_exit bx_net_exit_one(struct net *net)
{
	struct bx_net *bn = net_generic(net, bx_net_id);

	/* Every file of the namespace, which held it, is gone. */
	WARN_ON_ONCE(!xa_empty(&bn->services));
	xa_destroy(&bn->services);
	bx_peers_net_exit(net);
}

static struct pernet_operations bx_net_ops = {
	.init	= bx_net_init_one,
	.exit	= bx_net_exit_one,
	.id	= &bx_net_id,
	.size	= sizeof(struct bx_net),
};

struct bx_net *bx_net(const struct net *net)
{
	return net_generic(net, bx_net_id);
}

/* Is a network device of a bound RDMA device's port in @net? */
bool bx_net_has_rdma(struct net *net)
{
	return bx_dev_in_net(NULL, net);
}

int bx_net_init(void)
{
	return register_pernet_subsys(&bx_net_ops);
}

void bx_net_uninit(void)
{
	unregister_pernet_subsys(&bx_net_ops);
}
