// SPDX-License-Identifier: GPL-2.0
/*
 * bx: fallbacks for what older kernels lack (compat.h).
 */
#include <linux/netdevice.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

/*
 * The network device of @ibdev's @port, held (dev_put() it), or NULL.
 * ib_device_get_netdev() is exported from 6.12; before, the netdev of the
 * port's first GID entry is the same one for RoCE (rxe included).
 */
struct net_device *bx_compat_ib_port_netdev(struct ib_device *ibdev, u32 port)
{
#ifdef BX_HAVE_IB_DEVICE_GET_NETDEV
	return ib_device_get_netdev(ibdev, port);
#else
	const struct ib_gid_attr *attr;
	struct net_device *ndev;

	attr = rdma_get_gid_attr(ibdev, port, 0);
	if (IS_ERR(attr))
		return NULL;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (IS_ERR(ndev))
		ndev = NULL;
	else
		dev_hold(ndev);
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	return ndev;
#endif
}
