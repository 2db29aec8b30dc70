/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _BX_CHRDEV_H
#define _BX_CHRDEV_H

int bx_chrdev_init(void);
void bx_chrdev_uninit(void);

#endif /* _BX_CHRDEV_H */
