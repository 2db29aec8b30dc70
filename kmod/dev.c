// SPDX-License-Identifier: GPL-2.0
/*
 * bx: RDMA device binding.
 *
 * bx registers an ib_client; ib_core calls add() for every RDMA device that
 * exists when we register or appears later, and remove() before a device
 * goes away or when we unregister. Each bound device gets a struct bx_dev
 * (its connections take references to it; each has verbs objects of
 * its own, reg.c).
 *
 * Lifetime: add() creates the bx_dev with one reference owned by the
 * binding and links it into bx_devs. remove() unlinks it, which stops new
 * users from finding it, tears down every connection on it -- all verbs
 * objects must be gone before ib_core's remove() returns -- and drops the
 * binding's reference.
 * Connections and operations may keep the bx_dev's memory alive a little
 * longer through their references; they no longer touch the device. The
 * port event handler is registered last in add() and unregistered first
 * in remove(); ib_core's unregistration waits for a running handler.
 */

#include <linux/error-injection.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/idr.h>

#include <linux/bx_netlink.h>

#include "dev.h"
#include "event.h"

/*
 * bx_devs_lock protects bx_devs, bx_ndevs and bx_devs_gen. Taken in
 * process context only: from ib_client add()/remove() (which may sleep)
 * and from readers such as debugfs and netlink (bx_devs_each()) and
 * BX_IOC_GET_INFO.
 */
static DEFINE_MUTEX(bx_devs_lock);
static LIST_HEAD(bx_devs);
static unsigned int bx_ndevs;
/* Changes with every add to or removal from bx_devs (netlink dumps). */
static unsigned int bx_devs_gen = 1;

/*
 * The connections' handlers (bx_dev_register()); set once at load before
 * any connection exists, kept until unload.
 */
static const struct bx_dev_ops *bx_dev_ops;

void bx_dev_register(const struct bx_dev_ops *ops)
{
	WRITE_ONCE(bx_dev_ops, ops);
}

/* Teardowns waiting for a port look again. */
static void dev_port_event(void)
{
	const struct bx_dev_ops *ops = READ_ONCE(bx_dev_ops);

	if (ops)
		ops->port_event();
}

/* Allocates bx_dev.index; internally locked. */
static DEFINE_IDA(bx_dev_ida);

static struct ib_client bx_ib_client;

/* Runs in ib_core's event work, after its port cache was updated. */
static void bx_dev_event(struct ib_event_handler *handler, struct ib_event *ev)
{
	struct bx_dev *bdev = container_of(handler, struct bx_dev,
					   event_handler);

	if (ev->event != IB_EVENT_PORT_ACTIVE && ev->event != IB_EVENT_PORT_ERR)
		return;
	pr_info("%s port %u %s\n", dev_name(&bdev->ibdev->dev),
		ev->element.port_num,
		ev->event == IB_EVENT_PORT_ACTIVE ? "active" : "down");
	dev_port_event();
}

static void bx_dev_release(struct kref *ref)
{
	struct bx_dev *bdev = container_of(ref, struct bx_dev, ref);

	/* The verbs objects went in bx_dev_remove(): only memory is left. */
	ida_free(&bx_dev_ida, bdev->index);
	kfree(bdev);
}

void bx_dev_put(struct bx_dev *bdev)
{
	kref_put(&bdev->ref, bx_dev_release);
}

static int bx_dev_add(struct ib_device *ibdev)
{
	struct bx_dev *bdev;
	int ret;

	/* bx speaks RC over RoCE/IB; iWARP and usNIC are out of scope. */
	if (rdma_node_get_transport(ibdev->node_type) != RDMA_TRANSPORT_IB)
		return -EOPNOTSUPP;

	bdev = kzalloc(sizeof(*bdev), GFP_KERNEL);
	if (!bdev)
		return -ENOMEM;

	ret = ida_alloc(&bx_dev_ida, GFP_KERNEL);
	if (ret < 0)
		goto err_free_bdev;
	bdev->index = ret;

	bdev->ibdev = ibdev;
	kref_init(&bdev->ref);
	ib_set_client_data(ibdev, &bx_ib_client, bdev);
	INIT_IB_EVENT_HANDLER(&bdev->event_handler, ibdev, bx_dev_event);
	ib_register_event_handler(&bdev->event_handler);

	mutex_lock(&bx_devs_lock);
	list_add_tail(&bdev->node, &bx_devs);
	bx_ndevs++;
	bx_devs_gen++;
	mutex_unlock(&bx_devs_lock);

	pr_info("bound %s\n", dev_name(&ibdev->dev));
	bx_event_dev(bdev, BX_CMD_DEV_ADD_NTF);
	return 0;

err_free_bdev:
	kfree(bdev);
	return ret;
}
ALLOW_ERROR_INJECTION(bx_dev_add, ERRNO);

static void bx_dev_remove(struct ib_device *ibdev, void *client_data)
{
	struct bx_dev *bdev = client_data;

	mutex_lock(&bx_devs_lock);
	list_del(&bdev->node);
	bx_ndevs--;
	bx_devs_gen++;
	mutex_unlock(&bx_devs_lock);
	bx_event_dev(bdev, BX_CMD_DEV_DEL_NTF);

	/* Teardowns waiting for a port to come back stop waiting. */
	ib_unregister_event_handler(&bdev->event_handler);
	WRITE_ONCE(bdev->removing, true);
	dev_port_event();

	/* Every connection on the device goes before ib_core frees it. */
	if (READ_ONCE(bx_dev_ops))
		bx_dev_ops->remove(bdev);
	pr_info("released %s\n", dev_name(&ibdev->dev));
	bx_dev_put(bdev);
}

static struct ib_client bx_ib_client = {
	.name	= "bx",
	.add	= bx_dev_add,
	.remove	= bx_dev_remove,
};

/* The bound bx_dev of @ibdev with a reference, or NULL if unbound. */
struct bx_dev *bx_dev_get(struct ib_device *ibdev)
{
	struct bx_dev *bdev, *found = NULL;

	mutex_lock(&bx_devs_lock);
	list_for_each_entry(bdev, &bx_devs, node) {
		if (bdev->ibdev == ibdev) {
			kref_get(&bdev->ref);
			found = bdev;
			break;
		}
	}
	mutex_unlock(&bx_devs_lock);
	return found;
}

/* Has @bdev a port whose network device is in @net? bx_devs_lock held. */
static bool dev_port_in_net(struct bx_dev *bdev, struct net *net)
{
	struct net_device *ndev;
	bool in = false;
	u32 port;

	rdma_for_each_port(bdev->ibdev, port) {
		ndev = bx_compat_ib_port_netdev(bdev->ibdev, port);
		if (!ndev)
			continue;
		in = net_eq(dev_net(ndev), net);
		dev_put(ndev);
		if (in)
			break;
	}
	return in;
}

/* Is @bdev (NULL: any bound device) reachable from @net (net.c)? */
bool bx_dev_in_net(struct bx_dev *bdev, struct net *net)
{
	struct bx_dev *d;
	bool in = false;

	mutex_lock(&bx_devs_lock);
	list_for_each_entry(d, &bx_devs, node) {
		if (bdev && d != bdev)
			continue;
		in = dev_port_in_net(d, net);
		if (in)
			break;
	}
	mutex_unlock(&bx_devs_lock);
	return in;
}

unsigned int bx_dev_count(void)
{
	unsigned int n;

	mutex_lock(&bx_devs_lock);
	n = bx_ndevs;
	mutex_unlock(&bx_devs_lock);
	return n;
}

/*
 * @bdev's port @port: its names; with @query, also its state, if
 * ib_query_port() answers (else false).
 */
static bool dev_snapshot(struct bx_dev *bdev, u32 port, bool query,
			 struct bx_dev_info *di)
{
	struct ib_device *ibdev = bdev->ibdev;
	struct net_device *ndev;
	struct ib_port_attr attr;

	memset(di, 0, sizeof(*di));
	if (query) {
		if (ib_query_port(ibdev, port, &attr))
			return false;
		di->state = attr.state;
		di->mtu = ib_mtu_enum_to_int(attr.active_mtu);
	}
	strscpy(di->name, dev_name(&ibdev->dev), sizeof(di->name));
	di->index = bdev->index;
	di->port = port;
	ndev = bx_compat_ib_port_netdev(ibdev, port);
	if (ndev) {
		strscpy(di->netdev, netdev_name(ndev), sizeof(di->netdev));
		dev_put(ndev);
	}
	return true;
}

/* @bdev as netlink shows it: its first port (for its events). */
void bx_dev_snapshot(struct bx_dev *bdev, struct bx_dev_info *di)
{
	dev_snapshot(bdev, rdma_start_port(bdev->ibdev), false, di);
}

/* @fn on each port of @bdev that answers a query; bx_devs_lock held. */
static int dev_ports_each(struct bx_dev *bdev,
			  int (*fn)(const struct bx_dev_info *, void *),
			  void *arg)
{
	struct bx_dev_info di;
	u32 port;
	int ret;

	rdma_for_each_port(bdev->ibdev, port) {
		if (!dev_snapshot(bdev, port, true, &di))
			continue;
		ret = fn(&di, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * bx_devs_each - call @fn on a snapshot of each bound device
 * @net:	only the devices reachable from it (NULL: every one)
 * @ports:	each port that answers a query, with its state (debugfs),
 *		instead of the first port without it (netlink)
 * @pos:	devices of the list to skip, then how many are done (a
 *		dump resumes there); NULL: from the first
 * @gen:	if not NULL, set to the list's generation, which changes
 *		with every add and removal (a dump's consistency)
 * @fn:		returns nonzero to stop: that device is not done
 * @arg:	for @fn
 *
 * Runs under bx_devs_lock, in process context: @fn may sleep. Returns
 * what @fn returned to stop, else 0.
 */
int bx_devs_each(struct net *net, bool ports, unsigned long *pos,
		 unsigned int *gen,
		 int (*fn)(const struct bx_dev_info *, void *), void *arg)
{
	unsigned long i = 0, skip = pos ? *pos : 0;
	struct bx_dev_info di;
	struct bx_dev *bdev;
	int ret = 0;

	mutex_lock(&bx_devs_lock);
	if (gen)
		*gen = bx_devs_gen;
	list_for_each_entry(bdev, &bx_devs, node) {
		if (i++ < skip)
			continue;
		if (!net || dev_port_in_net(bdev, net)) {
			if (ports) {
				ret = dev_ports_each(bdev, fn, arg);
			} else {
				bx_dev_snapshot(bdev, &di);
				ret = fn(&di, arg);
			}
			if (ret)
				break;
		}
		if (pos)
			*pos = i;
	}
	mutex_unlock(&bx_devs_lock);
	return ret;
}

int bx_dev_init(void)
{
	return ib_register_client(&bx_ib_client);
}

void bx_dev_uninit(void)
{
	/* Calls remove() for every bound device before returning. */
	ib_unregister_client(&bx_ib_client);
	WARN_ON(!list_empty(&bx_devs));
}
