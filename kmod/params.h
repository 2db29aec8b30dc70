/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: tunables (module parameters, writable at runtime through
 * /sys/module/bx/parameters/). Readers use READ_ONCE(); every value is
 * range-checked when written. Documentation/bx.rst, "Tunables".
 */
#ifndef _BX_PARAMS_H
#define _BX_PARAMS_H

#include <linux/types.h>

extern bool bx_flow_control;
extern unsigned int bx_wnd_kb;
extern unsigned int bx_wnd_ops;
extern unsigned int bx_host_wnd_kb;
extern unsigned int bx_host_wnd_ops;
extern unsigned int bx_rx_wnd_kb;
extern unsigned int bx_rd_max;
extern unsigned int bx_rd_depth;
extern unsigned int bx_credit_batch;
extern unsigned int bx_rdv_threshold;
extern unsigned int bx_drr_quantum;
extern unsigned int bx_piece_kb;
extern unsigned int bx_connect_timeout_ms;
extern unsigned int bx_ack_timeout;
extern unsigned int bx_recover_ms;
extern unsigned int bx_refuse_ms;
extern unsigned int bx_peer_linger_ms;
extern unsigned int bx_user_ops_max;
extern unsigned int bx_user_peers_max;
extern unsigned int bx_user_services_max;
extern unsigned int bx_op_timeout_ms;

#endif /* _BX_PARAMS_H */
