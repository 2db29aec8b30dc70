/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bx: what differs between the kernels bx builds on (Debian 12's 6.1 and
 * 6.12). Kbuild includes this before every file (-include) and defines
 * BX_HAVE_* from probes of the kernel's own headers, not from version
 * numbers, so that a stable kernel with a backport gets the new API.
 * Each fallback is the old kernel's way of doing the same thing.
 */
#ifndef _BX_COMPAT_H
#define _BX_COMPAT_H

#include <linux/mm.h>
#include <net/genetlink.h>
#include <net/netlink.h>

/* crypto_memneq(): crypto/utils.h from 6.5, crypto/algapi.h before. */
#ifdef BX_HAVE_CRYPTO_UTILS_H
#include <crypto/utils.h>
#else
#include <crypto/algapi.h>
#endif

/* vm_flags_set()/vm_flags_clear(): 6.3; before, vm_flags was writable. */
#ifndef BX_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma,
				  vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/* genlmsg_iput(): 6.7; before, genl_info has no family: bx's one. */
#ifndef BX_HAVE_GENLMSG_IPUT
extern struct genl_family bx_nl_family;

static inline void *genlmsg_iput(struct sk_buff *skb,
				 const struct genl_info *info)
{
	return genlmsg_put(skb, info->snd_portid, info->snd_seq,
			   &bx_nl_family, 0, info->genlhdr->cmd);
}
#endif

/*
 * Multicast groups only CAP_NET_ADMIN may join: GENL_MCAST_CAP_NET_ADMIN
 * from 6.7; before, genl_bind() checks GENL_UNS_ADMIN_PERM in the group's
 * flags (nl_test checks that an unprivileged join fails either way).
 */
#ifndef GENL_MCAST_CAP_NET_ADMIN
#define GENL_MCAST_CAP_NET_ADMIN	GENL_UNS_ADMIN_PERM
#endif

/*
 * NLA_POLICY_FULL_RANGE(): the generated policies' ranges are const; the
 * policy's pointer is const from 6.2 (only ever read, before too).
 */
#ifndef BX_HAVE_NLA_CONST_RANGE
#undef NLA_POLICY_FULL_RANGE
#define NLA_POLICY_FULL_RANGE(tp, _range) {				\
	.type = NLA_ENSURE_UINT_OR_BINARY_TYPE(tp),			\
	.validation_type = NLA_VALIDATE_RANGE_PTR,			\
	.range = (struct netlink_range_validation *)(_range),		\
}
#endif

/*
 * Generic netlink's split ops (6.2): before, one struct genl_ops per
 * command; nl-gen-compat.c builds that table from the generated one.
 */
#ifndef BX_HAVE_GENL_SPLIT_OPS
void bx_nl_compat_ops(void);
#else
static inline void bx_nl_compat_ops(void)
{
}
#endif

struct ib_device;
struct net_device;
/* The network device of an RDMA port, held, or NULL (see dev.c). */
struct net_device *bx_compat_ib_port_netdev(struct ib_device *ibdev, u32 port);

#endif /* _BX_COMPAT_H */
