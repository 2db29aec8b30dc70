/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: what the lower layers report to those above without calling them:
 * a device came or went, a connection went up or down, a peer began or
 * ended a recovery. The interface that publishes them (netlink, nl.c)
 * registers its handlers here; until it has, and after it left, an event
 * goes nowhere.
 */
#ifndef _BX_EVENT_H
#define _BX_EVENT_H

#include <linux/types.h>

struct bx_conn;
struct bx_dev;
struct bx_peer;

/**
 * struct bx_event_ops - who hears of the objects' events
 * @dev:	a device was bound or released (@cmd: BX_CMD_DEV_*_NTF)
 * @conn:	a connection went up or down, its peer restarted
 * @peer:	a peer began or ended a recovery
 *
 * Each is called from process context and must not fail.
 */
struct bx_event_ops {
	void (*dev)(struct bx_dev *bdev, u8 cmd);
	void (*conn)(struct bx_conn *conn, u8 cmd);
	void (*peer)(struct bx_peer *peer, u8 cmd);
};

void bx_event_register(const struct bx_event_ops *ops);
void bx_event_dev(struct bx_dev *bdev, u8 cmd);
void bx_event_conn(struct bx_conn *conn, u8 cmd);
void bx_event_peer(struct bx_peer *peer, u8 cmd);

#endif /* _BX_EVENT_H */
