/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bxnl.h: a small, self-contained generic netlink client (no libmnl), for
 * bxctl and bx's selftests. Header-only: every function is static
 * inline.
 *
 *   struct bxnl nl;
 *   bxnl_open(&nl);                          socket, ext ACK, strict checks
 *   bxnl_resolve(&nl, "bx", "events");       family id and group id
 *   bxnl_msg_init(&m, nl.family, cmd, 1);    build a request
 *   bxnl_put_u32(&m, BX_A_..., v);
 *   bxnl_do(&nl, &m, cb, arg);               request, replies, ACK
 *   bxnl_dump(&nl, &m, cb, arg);             NLM_F_DUMP, all parts
 *   bxnl_join(&nl, nl.mcgrp); bxnl_recv_events(&nl, cb, arg);
 *   bxnl_close(&nl);
 *
 * Functions return 0 or a negative errno. After a failed request, nl.ext
 * holds the kernel's extended ACK (message, offset of the offending
 * attribute in the request, missing attribute, valid range).
 *
 * Nothing the kernel sends is trusted: every message and attribute length
 * is checked against what was received before anything is read, replies
 * must come from the kernel with our port id and sequence number, and the
 * typed getters check the exact payload size. A dump is collected whole
 * and handed to the callback only once it is complete and consistent: a
 * dump marked NLM_F_DUMP_INTR is drained and started again (up to
 * BXNL_DUMP_TRIES times).
 */
#ifndef BXNL_H
#define BXNL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK		270
#endif

#define BXNL_MSG_MAX		8192	/* largest request we build */
#define BXNL_DUMP_TRIES		5
#define BXNL_EXT_MSG_MAX	256

/* The extended ACK of the last error (or warning) the kernel reported. */
struct bxnl_ext {
	char		msg[BXNL_EXT_MSG_MAX];	/* NLMSGERR_ATTR_MSG or "" */
	bool		has_off;
	uint32_t	off;		/* NLMSGERR_ATTR_OFFS: from the request's nlmsghdr */
	bool		has_miss;
	uint32_t	miss_type;	/* NLMSGERR_ATTR_MISS_TYPE */
	bool		has_range;	/* NLMSGERR_ATTR_POLICY: unsigned range */
	uint64_t	min, max;
};

struct bxnl {
	int		fd;
	uint32_t	portid;
	uint32_t	seq;
	uint16_t	family;		/* resolved by bxnl_resolve() */
	uint32_t	mcgrp;		/* the group bxnl_resolve() looked up, or 0 */
	int		dump_tries;	/* attempts the last dump needed */
	unsigned int	dump_parts;	/* datagrams the last dump arrived in */
	struct bxnl_ext	ext;
	unsigned char	*buf;		/* receive buffer */
	size_t		bufsz;
};

struct bxnl_msg {
	union {
		struct nlmsghdr	nlh;
		unsigned char	buf[BXNL_MSG_MAX];
	} u;
	bool		overflow;	/* a put did not fit: the send fails */
};

/* A reply, dump part or event; @nlh was checked to hold a genlmsghdr. */
typedef int (*bxnl_cb_t)(const struct nlmsghdr *nlh, void *arg);

/* ---- socket -------------------------------------------------------------- */

static inline int bxnl_open(struct bxnl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t salen = sizeof(sa);
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(nl->fd, (struct sockaddr *)&sa, &salen) ||
	    salen != sizeof(sa) || sa.nl_family != AF_NETLINK)
		goto err;
	nl->portid = sa.nl_pid;
	/* Error messages and offsets; no echo of our request in ACKs. */
	if (setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)))
		goto err;
	(void)setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	/* Strict checking of dump requests too. */
	(void)setsockopt(nl->fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one,
			 sizeof(one));
	nl->seq = (uint32_t)getpid() << 8;
	nl->bufsz = 32768;
	nl->buf = malloc(nl->bufsz);
	if (!nl->buf) {
		errno = ENOMEM;
		goto err;
	}
	return 0;
err:
	one = -errno;
	close(nl->fd);
	nl->fd = -1;
	return one ? one : -EIO;
}

static inline void bxnl_close(struct bxnl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
	free(nl->buf);
	nl->buf = NULL;
}

static inline int bxnl_join(struct bxnl *nl, uint32_t group)
{
	if (!group)
		return -EINVAL;
	if (setsockopt(nl->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group,
		       sizeof(group)))
		return -errno;
	return 0;
}

/* ---- building requests ------------------------------------------------- */

static inline struct nlmsghdr *bxnl_msg_init(struct bxnl_msg *m, uint16_t type,
					     uint8_t cmd, uint8_t version)
{
	struct genlmsghdr *g;

	memset(&m->u.nlh, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	m->overflow = false;
	m->u.nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->u.nlh.nlmsg_type = type;
	g = (struct genlmsghdr *)(m->u.buf + NLMSG_HDRLEN);
	g->cmd = cmd;
	g->version = version;
	return &m->u.nlh;
}

/* Append raw bytes, no alignment (for tests that build bad attributes). */
static inline int bxnl_put_raw(struct bxnl_msg *m, const void *data, size_t len)
{
	size_t at = m->u.nlh.nlmsg_len;

	if (at > sizeof(m->u.buf) || len > sizeof(m->u.buf) - at) {
		m->overflow = true;
		return -EMSGSIZE;
	}
	if (len)
		memcpy(m->u.buf + at, data, len);
	m->u.nlh.nlmsg_len = (uint32_t)(at + len);
	return 0;
}

static inline int bxnl_put(struct bxnl_msg *m, uint16_t type, const void *data,
			   size_t len)
{
	size_t at = NLMSG_ALIGN(m->u.nlh.nlmsg_len);
	size_t tot = NLA_HDRLEN + len;
	struct nlattr nla;

	if (len > UINT16_MAX - NLA_HDRLEN || at > sizeof(m->u.buf) ||
	    NLA_ALIGN(tot) > sizeof(m->u.buf) - at) {
		m->overflow = true;
		return -EMSGSIZE;
	}
	memset(m->u.buf + m->u.nlh.nlmsg_len, 0, at - m->u.nlh.nlmsg_len);
	nla.nla_len = (uint16_t)tot;
	nla.nla_type = type;
	memcpy(m->u.buf + at, &nla, sizeof(nla));
	if (len)
		memcpy(m->u.buf + at + NLA_HDRLEN, data, len);
	memset(m->u.buf + at + tot, 0, NLA_ALIGN(tot) - tot);
	m->u.nlh.nlmsg_len = (uint32_t)(at + NLA_ALIGN(tot));
	return 0;
}

static inline int bxnl_put_u8(struct bxnl_msg *m, uint16_t type, uint8_t v)
{
	return bxnl_put(m, type, &v, sizeof(v));
}

static inline int bxnl_put_u16(struct bxnl_msg *m, uint16_t type, uint16_t v)
{
	return bxnl_put(m, type, &v, sizeof(v));
}

static inline int bxnl_put_u32(struct bxnl_msg *m, uint16_t type, uint32_t v)
{
	return bxnl_put(m, type, &v, sizeof(v));
}

static inline int bxnl_put_u64(struct bxnl_msg *m, uint16_t type, uint64_t v)
{
	return bxnl_put(m, type, &v, sizeof(v));
}

static inline int bxnl_put_str(struct bxnl_msg *m, uint16_t type, const char *s)
{
	return bxnl_put(m, type, s, strlen(s) + 1);
}

static inline int bxnl_put_flag(struct bxnl_msg *m, uint16_t type)
{
	return bxnl_put(m, type, NULL, 0);
}

/* Open a nested attribute; bxnl_nest_end() closes it. */
static inline int bxnl_nest_start(struct bxnl_msg *m, uint16_t type,
				  uint32_t *at)
{
	*at = NLMSG_ALIGN(m->u.nlh.nlmsg_len);
	return bxnl_put(m, type | NLA_F_NESTED, NULL, 0);
}

static inline void bxnl_nest_end(struct bxnl_msg *m, uint32_t at)
{
	struct nlattr nla;

	if (m->overflow)
		return;
	memcpy(&nla, m->u.buf + at, sizeof(nla));
	nla.nla_len = (uint16_t)(m->u.nlh.nlmsg_len - at);
	memcpy(m->u.buf + at, &nla, sizeof(nla));
}

/*
 * The type of the attribute of request @m that starts at offset @off from
 * its nlmsghdr (an extended ACK's NLMSGERR_ATTR_OFFS), or -1.
 */
static inline int bxnl_attr_at(const struct bxnl_msg *m, uint32_t off)
{
	size_t at = NLMSG_HDRLEN + GENL_HDRLEN, end = m->u.nlh.nlmsg_len;
	struct nlattr nla;

	if (end > sizeof(m->u.buf))
		return -1;
	while (at + NLA_HDRLEN <= end) {
		memcpy(&nla, m->u.buf + at, sizeof(nla));
		if (at == off)
			return nla.nla_type & NLA_TYPE_MASK;
		if (nla.nla_len < NLA_HDRLEN)
			return -1;
		at += NLA_ALIGN(nla.nla_len);
	}
	return -1;
}

/* ---- parsing ------------------------------------------------------------ */

/*
 * Index the attributes in @data (@len bytes) by type into @tb[0..@max]
 * (types above @max are skipped, a repeated type keeps the last). Fails
 * with -EPROTO if an attribute's length is below its header or runs past
 * @len, or if bytes are left over.
 */
static inline int bxnl_parse(const void *data, size_t len,
			     const struct nlattr **tb, unsigned int max)
{
	const unsigned char *p = data;
	size_t at = 0;

	memset(tb, 0, (max + 1) * sizeof(*tb));
	while (len - at >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)(p + at);
		unsigned int type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len - at)
			return -EPROTO;
		if (type <= max)
			tb[type] = a;
		at += NLA_ALIGN(a->nla_len);
		if (at > len)		/* padding of the last one missing */
			at = len;
	}
	return at == len ? 0 : -EPROTO;
}

/* The attributes after the genlmsghdr of a checked message. */
static inline int bxnl_parse_genl(const struct nlmsghdr *nlh,
				  const struct nlattr **tb, unsigned int max)
{
	const unsigned char *p = (const unsigned char *)nlh;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EPROTO;
	return bxnl_parse(p + NLMSG_HDRLEN + GENL_HDRLEN,
			  nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, tb, max);
}

static inline uint8_t bxnl_genl_cmd(const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *g = (const struct genlmsghdr *)
		((const unsigned char *)nlh + NLMSG_HDRLEN);

	return g->cmd;
}

static inline const void *bxnl_data(const struct nlattr *a)
{
	return (const unsigned char *)a + NLA_HDRLEN;
}

static inline size_t bxnl_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

/* Typed getters: false unless @a is there with exactly the right size. */
static inline bool bxnl_get(const struct nlattr *a, void *v, size_t len)
{
	if (!a || bxnl_len(a) != len)
		return false;
	memcpy(v, bxnl_data(a), len);
	return true;
}

static inline bool bxnl_get_u8(const struct nlattr *a, uint8_t *v)
{
	return bxnl_get(a, v, sizeof(*v));
}

static inline bool bxnl_get_u16(const struct nlattr *a, uint16_t *v)
{
	return bxnl_get(a, v, sizeof(*v));
}

static inline bool bxnl_get_u32(const struct nlattr *a, uint32_t *v)
{
	return bxnl_get(a, v, sizeof(*v));
}

static inline bool bxnl_get_s32(const struct nlattr *a, int32_t *v)
{
	return bxnl_get(a, v, sizeof(*v));
}

static inline bool bxnl_get_u64(const struct nlattr *a, uint64_t *v)
{
	return bxnl_get(a, v, sizeof(*v));
}

/* A NUL-terminated string within the payload, or NULL. */
static inline const char *bxnl_get_str(const struct nlattr *a)
{
	size_t len;

	if (!a)
		return NULL;
	len = bxnl_len(a);
	if (!len || memchr(bxnl_data(a), 0, len) == NULL)
		return NULL;
	return bxnl_data(a);
}

/* ---- receiving ---------------------------------------------------------- */

/*
 * One datagram into nl->buf (grown to fit). Returns its length or a
 * negative errno; -ENOBUFS means the socket overran (events were lost).
 */
static inline ssize_t bxnl_recv(struct bxnl *nl)
{
	struct sockaddr_nl sa;
	struct iovec iov;
	struct msghdr mh;
	ssize_t n;

	for (;;) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = nl->buf;
		iov.iov_len = nl->bufsz;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_name = &sa;
		mh.msg_namelen = sizeof(sa);
		n = recvmsg(nl->fd, &mh, MSG_PEEK | MSG_TRUNC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if ((size_t)n > nl->bufsz) {
			unsigned char *b = realloc(nl->buf, (size_t)n);

			if (!b)
				return -ENOMEM;
			nl->buf = b;
			nl->bufsz = (size_t)n;
			continue;
		}
		n = recvmsg(nl->fd, &mh, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (mh.msg_flags & MSG_TRUNC)
			return -EMSGSIZE;
		/* Only the kernel speaks to us. */
		if (mh.msg_namelen != sizeof(sa) || sa.nl_family != AF_NETLINK ||
		    sa.nl_pid != 0)
			continue;
		return n;
	}
}

/*
 * The next message of a datagram: *@at is the offset into nl->buf, @n the
 * datagram's length. NULL at the end; *@bad set if what is left is not a
 * well-formed message.
 */
static inline const struct nlmsghdr *bxnl_next(struct bxnl *nl, size_t *at,
					       size_t n, bool *bad)
{
	const struct nlmsghdr *nlh;

	*bad = false;
	if (*at >= n)
		return NULL;
	if (n - *at < NLMSG_HDRLEN) {
		*bad = true;
		return NULL;
	}
	nlh = (const struct nlmsghdr *)(nl->buf + *at);
	if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > n - *at) {
		*bad = true;
		return NULL;
	}
	*at += NLMSG_ALIGN(nlh->nlmsg_len);
	return nlh;
}

/* Extended ACK TLVs (@len bytes at @p) into nl->ext. */
static inline void bxnl_parse_ext(struct bxnl *nl, const unsigned char *p,
				  size_t len)
{
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	const char *s;

	if (bxnl_parse(p, len, tb, NLMSGERR_ATTR_MAX))
		return;
	s = bxnl_get_str(tb[NLMSGERR_ATTR_MSG]);
	if (s)
		snprintf(nl->ext.msg, sizeof(nl->ext.msg), "%s", s);
	nl->ext.has_off = bxnl_get_u32(tb[NLMSGERR_ATTR_OFFS], &nl->ext.off);
	nl->ext.has_miss = bxnl_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE],
					&nl->ext.miss_type);
	if (tb[NLMSGERR_ATTR_POLICY]) {
		const struct nlattr *pt[NL_POLICY_TYPE_ATTR_MAX + 1];
		const struct nlattr *pol = tb[NLMSGERR_ATTR_POLICY];

		if (!bxnl_parse(bxnl_data(pol), bxnl_len(pol), pt,
				NL_POLICY_TYPE_ATTR_MAX))
			nl->ext.has_range =
				bxnl_get_u64(pt[NL_POLICY_TYPE_ATTR_MIN_VALUE_U],
					     &nl->ext.min) &&
				bxnl_get_u64(pt[NL_POLICY_TYPE_ATTR_MAX_VALUE_U],
					     &nl->ext.max);
	}
}

/*
 * An NLMSG_ERROR message: its error (0 for an ACK), with the extended ACK
 * stored in nl->ext.
 */
static inline int bxnl_parse_error(struct bxnl *nl, const struct nlmsghdr *nlh)
{
	const unsigned char *p = (const unsigned char *)nlh;
	struct nlmsgerr e;
	size_t at = NLMSG_HDRLEN + sizeof(e);

	if (nlh->nlmsg_len < at)
		return -EPROTO;
	memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
	if (e.error > 0 || e.error < -4095)
		return -EPROTO;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
			/* Our request is echoed: skip its payload. */
			if (e.msg.nlmsg_len < NLMSG_HDRLEN ||
			    e.msg.nlmsg_len - NLMSG_HDRLEN > nlh->nlmsg_len - at)
				return e.error;
			at += NLMSG_ALIGN(e.msg.nlmsg_len - NLMSG_HDRLEN);
		}
		if (at <= nlh->nlmsg_len)
			bxnl_parse_ext(nl, p + at, nlh->nlmsg_len - at);
	}
	return e.error;
}

/* NLMSG_DONE of a dump: its error, with an extended ACK if any. */
static inline int bxnl_parse_done(struct bxnl *nl, const struct nlmsghdr *nlh)
{
	const unsigned char *p = (const unsigned char *)nlh;
	int err = 0;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(err))
		return 0;	/* old kernels: an empty DONE */
	memcpy(&err, p + NLMSG_HDRLEN, sizeof(err));
	if (err > 0 || err < -4095)
		return -EPROTO;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		bxnl_parse_ext(nl, p + NLMSG_HDRLEN + sizeof(err),
			       nlh->nlmsg_len - NLMSG_HDRLEN - sizeof(err));
	return err;
}

/* ---- requests ----------------------------------------------------------- */

static inline int bxnl_send(struct bxnl *nl, struct bxnl_msg *m, uint16_t flags)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	ssize_t n;

	if (m->overflow)
		return -EMSGSIZE;
	m->u.nlh.nlmsg_flags = flags;
	m->u.nlh.nlmsg_seq = ++nl->seq;
	m->u.nlh.nlmsg_pid = 0;
	memset(&nl->ext, 0, sizeof(nl->ext));
	do {
		n = sendto(nl->fd, m->u.buf, m->u.nlh.nlmsg_len, 0,
			   (struct sockaddr *)&sa, sizeof(sa));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == m->u.nlh.nlmsg_len ? 0 : -EIO;
}

/* Is @nlh an answer to our request (our port, our sequence number)? */
static inline bool bxnl_ours(const struct bxnl *nl, const struct nlmsghdr *nlh)
{
	return nlh->nlmsg_seq == nl->seq && nlh->nlmsg_pid == nl->portid;
}

/*
 * A "do" request: send @m (NLM_F_REQUEST | NLM_F_ACK), hand each reply of
 * type @m's to @cb (may be NULL), and return the ACK's error (or the
 * first negative value @cb returned).
 */
static inline int bxnl_do(struct bxnl *nl, struct bxnl_msg *m, bxnl_cb_t cb,
			  void *arg)
{
	uint16_t type = m->u.nlh.nlmsg_type;
	int ret, cbret = 0;

	ret = bxnl_send(nl, m, NLM_F_REQUEST | NLM_F_ACK);
	if (ret)
		return ret;
	for (;;) {
		const struct nlmsghdr *nlh;
		size_t at = 0;
		ssize_t n;
		bool bad;

		n = bxnl_recv(nl);
		if (n < 0)
			return (int)n;
		while ((nlh = bxnl_next(nl, &at, (size_t)n, &bad))) {
			if (!bxnl_ours(nl, nlh))
				continue;	/* stale, or an event */
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				ret = bxnl_parse_error(nl, nlh);
				return cbret ? cbret : ret;
			}
			if (nlh->nlmsg_type != type)
				continue;
			if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
				return -EPROTO;
			if (cb && !cbret) {
				ret = cb(nlh, arg);
				if (ret < 0)
					cbret = ret;
			}
		}
		if (bad)
			return -EPROTO;
	}
}

/*
 * A dump: send @m with NLM_F_DUMP and collect every part until
 * NLMSG_DONE. If any part carries NLM_F_DUMP_INTR (the objects changed
 * while it ran) the dump starts over, at most BXNL_DUMP_TRIES times in
 * all (then -EINTR). @cb sees the objects of one consistent dump only.
 */
static inline int bxnl_dump(struct bxnl *nl, struct bxnl_msg *m, bxnl_cb_t cb,
			    void *arg)
{
	uint16_t type = m->u.nlh.nlmsg_type;
	unsigned char *acc = NULL;
	size_t acclen = 0, cap = 0;
	int ret = -EINTR, try;

	nl->dump_parts = 0;
	for (try = 1; try <= BXNL_DUMP_TRIES; try++) {
		bool intr = false, done = false;

		nl->dump_tries = try;
		nl->dump_parts = 0;
		acclen = 0;
		ret = bxnl_send(nl, m, NLM_F_REQUEST | NLM_F_DUMP);
		if (ret)
			goto out;
		while (!done) {
			const struct nlmsghdr *nlh;
			size_t at = 0;
			ssize_t n;
			bool bad, any = false;

			n = bxnl_recv(nl);
			if (n < 0) {
				ret = (int)n;
				goto out;
			}
			while ((nlh = bxnl_next(nl, &at, (size_t)n, &bad))) {
				if (!bxnl_ours(nl, nlh))
					continue;
				any = true;
				if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
					intr = true;
				if (nlh->nlmsg_type == NLMSG_ERROR) {
					ret = bxnl_parse_error(nl, nlh);
					if (!ret)	/* an ACK: not for a dump */
						continue;
					goto out;
				}
				if (nlh->nlmsg_type == NLMSG_DONE) {
					ret = bxnl_parse_done(nl, nlh);
					if (ret)
						goto out;
					done = true;
					break;
				}
				if (nlh->nlmsg_type != type ||
				    !(nlh->nlmsg_flags & NLM_F_MULTI))
					continue;
				if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) {
					ret = -EPROTO;
					goto out;
				}
				if (NLMSG_ALIGN(nlh->nlmsg_len) > cap - acclen) {
					size_t ncap = cap ? cap * 2 : 16384;
					unsigned char *p;

					while (NLMSG_ALIGN(nlh->nlmsg_len) > ncap - acclen)
						ncap *= 2;
					p = realloc(acc, ncap);
					if (!p) {
						ret = -ENOMEM;
						goto out;
					}
					acc = p;
					cap = ncap;
				}
				memcpy(acc + acclen, nlh, nlh->nlmsg_len);
				acclen += NLMSG_ALIGN(nlh->nlmsg_len);
			}
			if (bad) {
				ret = -EPROTO;
				goto out;
			}
			if (any)
				nl->dump_parts++;
		}
		if (!intr)
			break;
		ret = -EINTR;
	}
	if (ret == -EINTR)
		goto out;
	ret = 0;
	for (size_t at = 0; at < acclen && cb;) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(acc + at);

		ret = cb(nlh, arg);
		if (ret < 0)
			break;
		ret = 0;
		at += NLMSG_ALIGN(nlh->nlmsg_len);
	}
out:
	free(acc);
	return ret;
}

/*
 * Wait for multicast messages and hand those of type @type (a family id;
 * 0: of any generic netlink family) to @cb, until @cb returns non-zero
 * (returned; 1 means "enough") or an error. -ENOBUFS: the socket overran
 * and events were lost (call again to go on).
 */
static inline int bxnl_recv_events(struct bxnl *nl, uint16_t type, bxnl_cb_t cb,
				   void *arg)
{
	for (;;) {
		const struct nlmsghdr *nlh;
		size_t at = 0;
		ssize_t n;
		bool bad;
		int ret;

		n = bxnl_recv(nl);
		if (n < 0)
			return (int)n;
		while ((nlh = bxnl_next(nl, &at, (size_t)n, &bad))) {
			if ((type ? nlh->nlmsg_type != type :
				    nlh->nlmsg_type < NLMSG_MIN_TYPE) ||
			    nlh->nlmsg_pid != 0 ||
			    nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
				continue;
			ret = cb(nlh, arg);
			if (ret)
				return ret;
		}
		if (bad)
			return -EPROTO;
	}
}

/* ---- the controller ----------------------------------------------------- */

struct bxnl_family {
	const char	*name;		/* only this family, or NULL: any */
	const char	*grp;		/* group to look up, or NULL */
	uint16_t	id;
	uint32_t	grp_id;
	bool		found;
};

/* CTRL_CMD_GETFAMILY reply (also a CTRL_CMD_NEWFAMILY notification). */
static inline int bxnl_family_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct bxnl_family *f = arg;
	const struct nlattr *grps;
	size_t at = 0, len;
	uint16_t id;

	if (bxnl_parse_genl(nlh, tb, CTRL_ATTR_MAX) ||
	    !bxnl_get_u16(tb[CTRL_ATTR_FAMILY_ID], &id))
		return -EPROTO;
	if (f->name) {
		const char *name = bxnl_get_str(tb[CTRL_ATTR_FAMILY_NAME]);

		if (!name || strcmp(name, f->name))
			return 0;
	}
	f->found = true;
	f->id = id;
	f->grp_id = 0;
	grps = tb[CTRL_ATTR_MCAST_GROUPS];
	if (!f->grp || !grps)
		return 0;
	len = bxnl_len(grps);
	/* A nest of nests (indexed 1..n), each with a name and an id. */
	while (len - at >= NLA_HDRLEN) {
		const struct nlattr *g = (const struct nlattr *)
			((const unsigned char *)bxnl_data(grps) + at);
		const struct nlattr *gt[CTRL_ATTR_MCAST_GRP_MAX + 1];
		const char *name;

		if (g->nla_len < NLA_HDRLEN || g->nla_len > len - at)
			return -EPROTO;
		at += NLA_ALIGN(g->nla_len);
		if (at > len)
			at = len;
		if (bxnl_parse(bxnl_data(g), bxnl_len(g), gt,
			       CTRL_ATTR_MCAST_GRP_MAX))
			return -EPROTO;
		name = bxnl_get_str(gt[CTRL_ATTR_MCAST_GRP_NAME]);
		if (name && !strcmp(name, f->grp) &&
		    bxnl_get_u32(gt[CTRL_ATTR_MCAST_GRP_ID], &f->grp_id))
			break;
	}
	return 0;
}

/*
 * Resolve family @name (and its multicast group @grp, unless NULL) into
 * nl->family and nl->mcgrp. -ENOENT: no such family (module not loaded);
 * -ESRCH: the family has no such group.
 */
static inline int bxnl_resolve(struct bxnl *nl, const char *name,
			       const char *grp)
{
	struct bxnl_family f = { .name = name, .grp = grp };
	struct bxnl_msg m;
	int ret;

	bxnl_msg_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	bxnl_put_str(&m, CTRL_ATTR_FAMILY_NAME, name);
	ret = bxnl_do(nl, &m, bxnl_family_cb, &f);
	if (ret)
		return ret;
	if (!f.found)
		return -ENOENT;
	nl->family = f.id;
	nl->mcgrp = f.grp_id;
	if (grp && !f.grp_id)
		return -ESRCH;
	return 0;
}

#endif /* BXNL_H */
