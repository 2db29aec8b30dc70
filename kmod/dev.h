/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: per-RDMA-device context.
 */
#ifndef _BX_DEV_H
#define _BX_DEV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/if.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

/**
 * struct bx_dev - bx's context for one RDMA device
 * @ibdev:	the device; valid until our ib_client remove() returns
 * @node:	entry in bx_devs, under bx_devs_lock
 * @ref:	lifetime; the ib_client holds one reference from add() to
 *		remove(), every user (connection, file) holds its own
 * @index:	stable small number for names and debugfs
 * @event_handler: port events, which kick teardowns waiting for a port
 *		(struct bx_dev_ops, @port_event)
 * @removing:	remove() began: no teardown waits for a port any more
 *
 * The device holds no verbs objects of its own: every connection has its
 * protection domain, QPs and MRs (reg.c), so that what one peer may
 * reach is separate from what another may.
 */
struct bx_dev {
	struct ib_device	*ibdev;
	struct list_head	node;
	struct kref		ref;
	u32			index;
	struct ib_event_handler	event_handler;
	bool			removing;
};

/**
 * struct bx_dev_ops - what the connections registered for devices' events
 * @port_event:	a port went up or down, or a device is going: teardowns
 *		waiting for a port look again
 * @remove:	tear down, and wait for, every connection on @bdev (NULL:
 *		on any device) before ib_core frees it
 *
 * Called in process context; they may sleep.
 */
struct bx_dev_ops {
	void (*port_event)(void);
	void (*remove)(struct bx_dev *bdev);
};

void bx_dev_register(const struct bx_dev_ops *ops);
int bx_dev_init(void);
void bx_dev_uninit(void);
void bx_dev_put(struct bx_dev *bdev);
struct bx_dev *bx_dev_get(struct ib_device *ibdev);
unsigned int bx_dev_count(void);
struct net;
bool bx_dev_in_net(struct bx_dev *bdev, struct net *net);

/**
 * struct bx_dev_info - a port of a bound device at one moment (netlink,
 * debugfs)
 * @name:	the RDMA device's name
 * @index:	struct bx_dev's @index
 * @port:	the port's number
 * @netdev:	the network device under the port, "" if none
 * @state:	the port's state (queried ports only, bx_devs_each())
 * @mtu:	its active MTU in bytes (likewise)
 */
struct bx_dev_info {
	char			name[IB_DEVICE_NAME_MAX];
	u32			index;
	u32			port;
	char			netdev[IFNAMSIZ];
	enum ib_port_state	state;
	int			mtu;
};

void bx_dev_snapshot(struct bx_dev *bdev, struct bx_dev_info *di);
int bx_devs_each(struct net *net, bool ports, unsigned long *pos,
		 unsigned int *gen,
		 int (*fn)(const struct bx_dev_info *, void *), void *arg);

#endif /* _BX_DEV_H */
