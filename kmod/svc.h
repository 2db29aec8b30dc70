/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: services -- the numbers files bind, the RECV buffers they post and
 * the pull requests waiting for their REPLY (tokens).
 */
#ifndef _BX_SVC_H
#define _BX_SVC_H

#include <linux/list.h>
#include <linux/types.h>

#include "wire.h"

struct bx_conn;
struct bx_file;
struct bx_sqe;

/* A RECV buffer posted to a service (BX_OP_RECV). */
struct bx_recv {
	struct list_head	node;
	u64			user_data;
	u64			off;
	u32			len;
};

/* A pull request awaiting BX_OP_REPLY, in file->reqs under its token. */
struct bx_req {
	struct bx_conn		*conn;
	u64			req_id;
	u32			peer_id;
	u32			capacity;
	u8			nrdv;
	struct bx_rdv		rdv[BX_WIRE_MAX_RDV];
};

int bx_svc_bind(struct bx_file *f, u32 service);
int bx_svc_unbind(struct bx_file *f, u32 service);
int bx_svc_post_recv(struct bx_file *f, const struct bx_sqe *sqe);
struct bx_file *bx_svc_take_recv(struct bx_conn *conn, u32 service, u32 need,
				 struct bx_recv **out, u8 *st);
int bx_svc_add_req(struct bx_file *f, struct bx_req *req,
		   struct bx_conn *conn, const struct bx_msg *msg,
		   u32 capacity, u32 *token);
struct bx_req *bx_svc_take_req(struct bx_file *f, u64 token, u32 len,
			       int *err);
void bx_svc_release(struct bx_file *f);

#endif /* _BX_SVC_H */
