// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the generated netlink family (nl-gen.c) on kernels without split
 * ops (before 6.2). Compiled instead of nl-gen.c there: the generated
 * table becomes a table of struct genl_ops, with a command's "do" and
 * "dump" in two entries, which such kernels refuse; bx_nl_compat_ops()
 * merges them into one entry per command before the family registers.
 */
#define genl_split_ops	genl_ops
#define split_ops	ops
#define n_split_ops	n_ops
#include "nl-gen.c"
#undef genl_split_ops
#undef split_ops
#undef n_split_ops

static struct genl_ops bx_nl_ops_merged[ARRAY_SIZE(bx_nl_ops)];

void bx_nl_compat_ops(void)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < ARRAY_SIZE(bx_nl_ops); i++) {
		const struct genl_ops *op = &bx_nl_ops[i];
		struct genl_ops *m = NULL;

		for (j = 0; j < n; j++)
			if (bx_nl_ops_merged[j].cmd == op->cmd)
				m = &bx_nl_ops_merged[j];
		if (!m) {
			m = &bx_nl_ops_merged[n++];
			m->cmd = op->cmd;
		}
		if (op->doit)
			m->doit = op->doit;
		if (op->dumpit)
			m->dumpit = op->dumpit;
		if (op->policy) {
			m->policy = op->policy;
			m->maxattr = op->maxattr;
		}
		/* The GENL_CMD_CAP_* bits are the new kernels' own. */
		m->flags |= op->flags & (GENL_ADMIN_PERM | GENL_UNS_ADMIN_PERM);
	}
	bx_nl_family.ops = bx_nl_ops_merged;
	bx_nl_family.n_ops = n;
}
