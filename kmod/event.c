// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the objects' events, passed up to whoever registered (event.h).
 */
#include <linux/compiler.h>

#include "event.h"

/*
 * Set at load before any object exists (main.c brings netlink up first)
 * and cleared at unload after they all went: never while an event runs.
 */
static const struct bx_event_ops *bx_event_ops;

void bx_event_register(const struct bx_event_ops *ops)
{
	WRITE_ONCE(bx_event_ops, ops);
}

void bx_event_dev(struct bx_dev *bdev, u8 cmd)
{
	const struct bx_event_ops *ops = READ_ONCE(bx_event_ops);

	if (ops)
		ops->dev(bdev, cmd);
}

void bx_event_conn(struct bx_conn *conn, u8 cmd)
{
	const struct bx_event_ops *ops = READ_ONCE(bx_event_ops);

	if (ops)
		ops->conn(conn, cmd);
}

void bx_event_peer(struct bx_peer *peer, u8 cmd)
{
	const struct bx_event_ops *ops = READ_ONCE(bx_event_ops);

	if (ops)
		ops->peer(peer, cmd);
}
