/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * What libbx's files share and do not export (libbx.map keeps every
 * other symbol local).
 */
#ifndef BX_INTERNAL_H
#define BX_INTERNAL_H

#include <stdbool.h>

/* The operation certainly did not reach the peer's application. */
bool bx_err_not_delivered(int err);
/* A connection failure: the peer may or may not have seen it. */
bool bx_err_conn_failed(int err);

#endif /* BX_INTERNAL_H */
