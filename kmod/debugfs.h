/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _BX_DEBUGFS_H
#define _BX_DEBUGFS_H

void bx_debugfs_init(void);
void bx_debugfs_uninit(void);

#endif /* _BX_DEBUGFS_H */
