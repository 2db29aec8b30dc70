// SPDX-License-Identifier: GPL-2.0
/*
 * bx: peer admission.
 *
 * What stands between a host that can reach bx's rdma_cm port and a
 * connection that carries operations (cm.c applies it; the handshake is
 * wire.h's, its cryptography auth.c's):
 *
 *  - The allow-list: networks whose hosts may connect, set by an admin
 *    (module parameter "allow", netlink allow-set). Empty, the default,
 *    allows every address. It applies both ways: bx neither accepts a
 *    connection from, nor starts one to, an address outside it.
 *  - The cookie: a first request is answered by a challenge, with a
 *    cookie only a host receiving at the request's address gets; only a
 *    request that sends it back is looked at further. Nothing is kept in
 *    between, so requests cost the acceptor no memory, no QP and no peer.
 *  - The cluster secret (32 random bytes, set by an admin through netlink,
 *    never readable back; the previous one stays good for
 *    secret_overlap_ms beside a new one). With one, the request that
 *    answers the challenge proves it under the initiator's own host key,
 *    and the accept proves it under the acceptor's; a peer and a
 *    connection are made only after the request's proof checked out.
 *    Without a secret, any host on an allowed network that receives at
 *    its address and speaks bx's handshake is a peer, as it claims to be.
 *  - Refusal after violations: a host that broke the protocol (a wrong
 *    or missing proof after a valid cookie, a malformed or unexpected
 *    message, an RDMA access outside what it was granted, silence where
 *    its READY was due) is refused for refuse_ms, doubling with each
 *    further violation up to 64 times that. Refusals live in a table of
 *    their own, by address, of fixed size. Our own connections to a
 *    refused host are not held back: the application chose that peer.
 *
 * Refusals, challenges, stale cookies, failed proofs and violations are
 * counted (netlink admit-get, conn-get) and logged at a limited rate, so
 * that a hostile host cannot flood the log.
 */

#include <linux/inet.h>
#include <linux/in.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <net/ipv6.h>

#include "admit.h"
#include "auth.h"
#include "params.h"

atomic64_t bx_admit_refused_connects = ATOMIC64_INIT(0);
atomic64_t bx_admit_auth_failures = ATOMIC64_INIT(0);
atomic64_t bx_admit_violations = ATOMIC64_INIT(0);
atomic64_t bx_admit_challenges = ATOMIC64_INIT(0);
atomic64_t bx_admit_stale_cookies = ATOMIC64_INIT(0);

/* ---- allow-list ---------------------------------------------------------- */

struct bx_allow {
	struct rcu_head	rcu;
	unsigned int	n;
	struct bx_allow_net	nets[] __counted_by(n);
};

/* Readers under RCU; bx_admit_lock serializes the writers. */
static struct bx_allow __rcu *bx_allow;
static DEFINE_MUTEX(bx_admit_lock);

/* @sa's address as 16 bytes, IPv4 as v4-mapped IPv6. */
void bx_admit_addr_v6(const struct sockaddr *sa, u8 out[16])
{
	struct in6_addr a;

	if (sa->sa_family == AF_INET)
		ipv6_addr_set_v4mapped(((const struct sockaddr_in *)sa)->sin_addr.s_addr,
				       &a);
	else
		a = ((const struct sockaddr_in6 *)sa)->sin6_addr;
	memcpy(out, &a, 16);
}

static bool net_has(const struct bx_allow_net *net, const struct in6_addr *a)
{
	return ipv6_prefix_equal(&net->addr, a, net->plen);
}

/* May @sa connect to us, and we to it? */
bool bx_admit_allowed(const struct sockaddr *sa)
{
	const struct bx_allow *al;
	struct in6_addr a;
	bool ok = true;
	unsigned int i;

	bx_admit_addr_v6(sa, a.s6_addr);
	rcu_read_lock();
	al = rcu_dereference(bx_allow);
	if (al && al->n) {
		ok = false;
		for (i = 0; i < al->n && !ok; i++)
			ok = net_has(&al->nets[i], &a);
	}
	rcu_read_unlock();
	return ok;
}

/*
 * Replace the allow-list with @n networks (0: allow all). A prefix must
 * leave no host bits set (-EINVAL), as ip-route(8) insists.
 */
int bx_admit_allow_set(const struct bx_allow_net *nets, unsigned int n)
{
	struct bx_allow *al = NULL, *old;
	unsigned int i;

	if (n > BX_ALLOW_MAX)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		struct in6_addr m;

		if (nets[i].plen > 128)
			return -EINVAL;
		ipv6_addr_prefix(&m, &nets[i].addr, nets[i].plen);
		if (!ipv6_addr_equal(&m, &nets[i].addr))
			return -EINVAL;
	}
	if (n) {
		al = kzalloc(struct_size(al, nets, n), GFP_KERNEL);
		if (!al)
			return -ENOMEM;
		al->n = n;
		memcpy(al->nets, nets, n * sizeof(*nets));
	}
	mutex_lock(&bx_admit_lock);
	old = rcu_replace_pointer(bx_allow, al,
				  lockdep_is_held(&bx_admit_lock));
	mutex_unlock(&bx_admit_lock);
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

/*
 * Call @fn on each network of the allow-list, in order, until it returns
 * nonzero, which is returned. Under RCU: @fn must not sleep.
 */
int bx_admit_allow_each(int (*fn)(const struct bx_allow_net *, void *), void *arg)
{
	const struct bx_allow *al;
	unsigned int i;
	int ret = 0;

	rcu_read_lock();
	al = rcu_dereference(bx_allow);
	for (i = 0; al && i < al->n && !ret; i++)
		ret = fn(&al->nets[i], arg);
	rcu_read_unlock();
	return ret;
}

/* "10.0.0.0/8" or "fd00::/8" (a bare address: the host alone). */
static int net_parse(const char *s, size_t len, struct bx_allow_net *net)
{
	const char *end, *slash = memchr(s, '/', len);
	size_t alen = slash ? slash - s : len;
	unsigned int plen = 0, max;
	char num[4];
	__be32 v4;

	if (in4_pton(s, alen, (u8 *)&v4, -1, &end) && end == s + alen) {
		ipv6_addr_set_v4mapped(v4, &net->addr);
		max = 32;
	} else if (in6_pton(s, alen, net->addr.s6_addr, -1, &end) &&
		   end == s + alen) {
		max = 128;
	} else {
		return -EINVAL;
	}
	plen = max;
	if (slash) {
		size_t nlen = len - alen - 1;

		if (!nlen || nlen >= sizeof(num))
			return -EINVAL;
		memcpy(num, slash + 1, nlen);
		num[nlen] = 0;
		if (kstrtouint(num, 10, &plen) || plen > max)
			return -EINVAL;
	}
	net->plen = plen + (max == 32 ? 96 : 0);
	return 0;
}

/* Module parameter "allow": a comma-separated list of networks. */
static int allow_param_set(const char *val, const struct kernel_param *kp)
{
	struct bx_allow_net *nets;
	unsigned int n = 0;
	const char *p = val;
	int ret = 0;

	nets = kcalloc(BX_ALLOW_MAX, sizeof(*nets), GFP_KERNEL);
	if (!nets)
		return -ENOMEM;
	while (*p && *p != '\n') {
		size_t len = strcspn(p, ",\n");

		if (len) {
			if (n == BX_ALLOW_MAX) {
				ret = -E2BIG;
				break;
			}
			ret = net_parse(p, len, &nets[n++]);
			if (ret)
				break;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (!ret)
		ret = bx_admit_allow_set(nets, n);
	kfree(nets);
	return ret;
}

static int allow_param_get(char *buf, const struct kernel_param *kp)
{
	const struct bx_allow *al;
	unsigned int i;
	int len = 0;

	rcu_read_lock();
	al = rcu_dereference(bx_allow);
	for (i = 0; al && i < al->n; i++) {
		const struct bx_allow_net *net = &al->nets[i];

		if (ipv6_addr_v4mapped(&net->addr))
			len += scnprintf(buf + len, PAGE_SIZE - len, "%s%pI4/%u",
					 i ? "," : "", &net->addr.s6_addr32[3],
					 net->plen - 96);
		else
			len += scnprintf(buf + len, PAGE_SIZE - len, "%s%pI6c/%u",
					 i ? "," : "", &net->addr, net->plen);
	}
	rcu_read_unlock();
	len += scnprintf(buf + len, PAGE_SIZE - len, "\n");
	return len;
}

static const struct kernel_param_ops allow_param_ops = {
	.set	= allow_param_set,
	.get	= allow_param_get,
};
module_param_cb(allow, &allow_param_ops, NULL, 0644);
MODULE_PARM_DESC(allow, "networks whose hosts may be peers, e.g. 10.0.0.0/8,fd00::/8 (empty: any)");

/* ---- cluster secrets ---------------------------------------------------- */

/**
 * struct bx_secret - a cluster secret as the handshake uses it
 * @key:	32 random bytes (auth.h says why no fewer)
 * @kid:	its name in challenges and requests
 * @set:	this slot holds one
 */
struct bx_secret {
	u8	key[BX_AUTH_KEY_LEN];
	u8	kid[BX_WIRE_KID_LEN];
	bool	set;
};

/*
 * The current secret, which this host proves, and the one before it,
 * still accepted until @prev_until (jiffies): a rolling change. A leaf
 * lock, process context (CM handlers, netlink).
 */
static DEFINE_SPINLOCK(bx_secret_lock);
static struct bx_secret bx_secret_cur, bx_secret_prev;
static unsigned long bx_secret_prev_until;

/* The cookie key: the acceptor's own, random at each load. */
static u8 bx_cookie_key[BX_AUTH_KEY_LEN];

/* The previous secret, if it is still good; bx_secret_lock held. */
static bool secret_prev_valid(void)
{
	lockdep_assert_held(&bx_secret_lock);
	return bx_secret_prev.set &&
	       time_before(jiffies, bx_secret_prev_until);
}

/*
 * Set the cluster secret (@len bytes: BX_SECRET_LEN), or clear it (@len
 * 0: the previous one goes too). The current one stays accepted for
 * secret_overlap_ms beside the new one. Connections up already stay;
 * new ones follow.
 */
int bx_admit_secret_set(const u8 *key, unsigned int len)
{
	struct bx_secret s = {};
	bool was;

	if (len && len != BX_SECRET_LEN)
		return -EINVAL;
	if (len) {
		memcpy(s.key, key, len);
		bx_auth_kid(s.key, s.kid);
		s.set = true;
	}
	spin_lock(&bx_secret_lock);
	was = bx_secret_cur.set;
	if (!len) {
		memzero_explicit(&bx_secret_prev, sizeof(bx_secret_prev));
	} else if (!was || crypto_memneq(bx_secret_cur.key, s.key,
					 sizeof(s.key))) {
		bx_secret_prev = bx_secret_cur;
		bx_secret_prev_until = jiffies +
			msecs_to_jiffies(READ_ONCE(bx_secret_overlap_ms));
	}
	bx_secret_cur = s;
	spin_unlock(&bx_secret_lock);
	memzero_explicit(&s, sizeof(s));
	if (was || len)
		pr_info("cluster secret %s\n", len ? "set" : "cleared");
	return 0;
}

bool bx_admit_secret_on(void)
{
	return READ_ONCE(bx_secret_cur.set);
}

/* Is the secret before the current one still accepted? */
bool bx_admit_secret_prev_on(void)
{
	bool on;

	spin_lock(&bx_secret_lock);
	on = secret_prev_valid();
	spin_unlock(&bx_secret_lock);
	return on;
}

/* ---- pair keys ------------------------------------------------------------- */

/*
 * Keys of pairs this host is part of, given by an admin who derived them
 * from the cluster secret (bxctl keys): a host given these and not the
 * secret proves itself to those peers alone and cannot act as another
 * member. Readers under RCU; bx_admit_lock serializes the writers.
 */
struct bx_pairkeys {
	struct rcu_head		rcu;
	unsigned int		n;
	struct bx_pairkey	k[] __counted_by(n);
};

static struct bx_pairkeys __rcu *bx_pairkeys;

static void pairkeys_free(struct rcu_head *rcu)
{
	kfree_sensitive(container_of(rcu, struct bx_pairkeys, rcu));
}

/* Replace the pair keys with @n of them (0: none). */
int bx_admit_pairkeys_set(const struct bx_pairkey *k, unsigned int n)
{
	struct bx_pairkeys *pk = NULL, *old;

	if (n > BX_PAIRKEYS_MAX)
		return -E2BIG;
	if (n) {
		pk = kzalloc(struct_size(pk, k, n), GFP_KERNEL);
		if (!pk)
			return -ENOMEM;
		pk->n = n;
		memcpy(pk->k, k, n * sizeof(*k));
	}
	mutex_lock(&bx_admit_lock);
	old = rcu_replace_pointer(bx_pairkeys, pk,
				  lockdep_is_held(&bx_admit_lock));
	mutex_unlock(&bx_admit_lock);
	if (old)
		call_rcu(&old->rcu, pairkeys_free);
	return 0;
}

unsigned int bx_admit_pairkeys_count(void)
{
	const struct bx_pairkeys *pk;
	unsigned int n;

	rcu_read_lock();
	pk = rcu_dereference(bx_pairkeys);
	n = pk ? pk->n : 0;
	rcu_read_unlock();
	return n;
}

/* Does this host want proofs: a cluster secret, or pair keys? */
bool bx_admit_auth(void)
{
	return bx_admit_secret_on() || bx_admit_pairkeys_count();
}

/*
 * The kids this host can prove towards the host at @peer (16 bytes),
 * its preference first: its pair keys for that host, then the cluster
 * secret, the current one first. At most BX_WIRE_KIDS_MAX.
 */
static u8 peer_kids(const u8 peer[16], u8 kid[BX_WIRE_KIDS_MAX][BX_WIRE_KID_LEN])
{
	const struct bx_pairkeys *pk;
	const struct bx_secret *s[2];
	u8 n = 0, i, j;

	rcu_read_lock();
	pk = rcu_dereference(bx_pairkeys);
	for (i = 0; pk && i < pk->n && n < BX_WIRE_KIDS_MAX; i++)
		if (!memcmp(pk->k[i].addr, peer, 16))
			memcpy(kid[n++], pk->k[i].kid, BX_WIRE_KID_LEN);
	rcu_read_unlock();
	spin_lock(&bx_secret_lock);
	s[0] = bx_secret_cur.set ? &bx_secret_cur : NULL;
	s[1] = secret_prev_valid() ? &bx_secret_prev : NULL;
	for (i = 0; i < 2 && n < BX_WIRE_KIDS_MAX; i++) {
		if (!s[i])
			continue;
		for (j = 0; j < n && memcmp(kid[j], s[i]->kid, BX_WIRE_KID_LEN);
		     j++)
			;
		if (j == n)
			memcpy(kid[n++], s[i]->kid, BX_WIRE_KID_LEN);
	}
	spin_unlock(&bx_secret_lock);
	return n;
}

/*
 * The key of the pair @self and @peer (16 bytes each) under the secret
 * named @kid: a pair key given for @peer, else derived from a cluster
 * secret this host holds. False if it has neither.
 */
static bool pair_key(const u8 kid[BX_WIRE_KID_LEN], const u8 self[16],
		     const u8 peer[16], u8 key[BX_AUTH_KEY_LEN])
{
	const struct bx_pairkeys *pk;
	const struct bx_secret *s = NULL;
	bool found = false;
	u8 secret[BX_AUTH_KEY_LEN];
	unsigned int i;

	rcu_read_lock();
	pk = rcu_dereference(bx_pairkeys);
	for (i = 0; pk && i < pk->n && !found; i++)
		if (!memcmp(pk->k[i].addr, peer, 16) &&
		    !memcmp(pk->k[i].kid, kid, BX_WIRE_KID_LEN)) {
			memcpy(key, pk->k[i].key, BX_AUTH_KEY_LEN);
			found = true;
		}
	rcu_read_unlock();
	if (found)
		return true;
	spin_lock(&bx_secret_lock);
	if (bx_secret_cur.set &&
	    !memcmp(bx_secret_cur.kid, kid, BX_WIRE_KID_LEN))
		s = &bx_secret_cur;
	else if (secret_prev_valid() &&
		 !memcmp(bx_secret_prev.kid, kid, BX_WIRE_KID_LEN))
		s = &bx_secret_prev;
	if (s)
		memcpy(secret, s->key, sizeof(secret));
	spin_unlock(&bx_secret_lock);
	if (!s)
		return false;
	bx_auth_pair_key(secret, self, peer, key);
	memzero_explicit(secret, sizeof(secret));
	return true;
}

/* ---- the handshake ------------------------------------------------------ */

/* Cookies live in buckets of a second (auth.c). */
static u64 cookie_bucket(void)
{
	return ktime_get_seconds();
}

static u32 cookie_max_age(void)
{
	return DIV_ROUND_UP(READ_ONCE(bx_proof_ms), MSEC_PER_SEC);
}

/*
 * The challenge to request @p from @init to @acc: a cookie, and the
 * secrets this host can prove towards @init. Nothing is kept.
 */
void bx_admit_challenge(const struct sockaddr *init,
			const struct sockaddr *acc,
			const struct bx_conn_params *p, struct bx_wire_chal *c)
{
	u8 ia[16], aa[16];

	bx_admit_addr_v6(init, ia);
	bx_admit_addr_v6(acc, aa);
	memset(c, 0, sizeof(*c));
	bx_auth_cookie(bx_cookie_key, cookie_bucket(), ia, aa, p, c->cookie);
	c->nkid = peer_kids(ia, c->kid);
	atomic64_inc(&bx_admit_challenges);
}

/*
 * Does request @p carry a cookie of ours, young enough, for these
 * addresses? Then it comes from @init: only a host that receives at an
 * address gets the challenge sent there.
 */
bool bx_admit_cookie_ok(const struct sockaddr *init,
			const struct sockaddr *acc,
			const struct bx_conn_params *p)
{
	u8 ia[16], aa[16];

	if (!(p->flags & BX_WIRE_REQ_F_COOKIE))
		return false;
	bx_admit_addr_v6(init, ia);
	bx_admit_addr_v6(acc, aa);
	if (bx_auth_cookie_ok(bx_cookie_key, cookie_bucket(),
			      cookie_max_age(), ia, aa, p))
		return true;
	atomic64_inc(&bx_admit_stale_cookies);
	return false;
}

/*
 * Check request @req (its bytes) with parameters @p from @init to @acc:
 * 0 if it proves the key of this pair of hosts under a secret this host
 * holds, or this host wants no proof and it offers none; -EACCES
 * otherwise, with @why.
 */
int bx_admit_check_req(const struct sockaddr *init, const struct sockaddr *acc,
		       const struct bx_wire_req *req,
		       const struct bx_conn_params *p, const char **why)
{
	u8 ia[16], aa[16], key[BX_AUTH_KEY_LEN], want[BX_WIRE_MAC_LEN];
	bool ok;

	if (!bx_admit_auth()) {
		*why = "a proof offered, but no secret is set";
		return p->flags & BX_WIRE_REQ_F_PROOF ? -EACCES : 0;
	}
	if (!(p->flags & BX_WIRE_REQ_F_PROOF)) {
		*why = "no proof of the cluster secret";
		return -EACCES;
	}
	bx_admit_addr_v6(init, ia);
	bx_admit_addr_v6(acc, aa);
	if (!pair_key(p->kid, aa, ia, key)) {
		*why = "a proof under a secret this host has no key of";
		return -EACCES;
	}
	bx_auth_init_mac(key, ia, aa, req, want);
	ok = !crypto_memneq(want, p->mac, sizeof(want));
	memzero_explicit(key, sizeof(key));
	if (!ok) {
		atomic64_inc(&bx_admit_auth_failures);
		*why = "a wrong proof of the cluster secret";
		return -EACCES;
	}
	return 0;
}

/*
 * The acceptor's proof in @accept, over request @req it checked, under
 * the request's secret; -ENOKEY if its key is gone meanwhile.
 */
int bx_admit_accept_mac(const struct sockaddr *init, const struct sockaddr *acc,
			const struct bx_wire_req *req,
			struct bx_wire_accept *accept)
{
	u8 ia[16], aa[16], key[BX_AUTH_KEY_LEN];

	bx_admit_addr_v6(init, ia);
	bx_admit_addr_v6(acc, aa);
	if (!pair_key(req->kid, aa, ia, key))
		return -ENOKEY;
	bx_auth_acc_mac(key, ia, aa, req, accept, accept->mac);
	memzero_explicit(key, sizeof(key));
	return 0;
}

/*
 * The initiator's answer (@p) to challenge @c from the host at @acc: the
 * cookie, and the secret to prove (PROOF set, its kid) or none. -EACCES
 * if the two hosts cannot agree: one wants proofs and the other not, or
 * they share no secret.
 */
int bx_admit_answer(const struct sockaddr *acc, const struct bx_wire_chal *c,
		    struct bx_conn_params *p)
{
	u8 mine[BX_WIRE_KIDS_MAX][BX_WIRE_KID_LEN], aa[16], n, i, j;

	bx_admit_addr_v6(acc, aa);
	n = peer_kids(aa, mine);
	p->flags = BX_WIRE_REQ_F_COOKIE;
	memcpy(p->cookie, c->cookie, sizeof(p->cookie));
	memset(p->kid, 0, sizeof(p->kid));
	if (!n && !c->nkid)
		return 0;
	/* Ours in our order of preference. */
	for (i = 0; i < n; i++)
		for (j = 0; j < c->nkid; j++)
			if (!memcmp(mine[i], c->kid[j], BX_WIRE_KID_LEN)) {
				memcpy(p->kid, mine[i], BX_WIRE_KID_LEN);
				p->flags |= BX_WIRE_REQ_F_PROOF;
				return 0;
			}
	return -EACCES;
}

/*
 * Our proof in request @req (PROOF set, its kid ours): -ENOKEY if that
 * key is gone meanwhile.
 */
int bx_admit_req_mac(const struct sockaddr *init, const struct sockaddr *acc,
		     struct bx_wire_req *req)
{
	u8 ia[16], aa[16], key[BX_AUTH_KEY_LEN];

	bx_admit_addr_v6(init, ia);
	bx_admit_addr_v6(acc, aa);
	if (!pair_key(req->kid, ia, aa, key))
		return -ENOKEY;
	bx_auth_init_mac(key, ia, aa, req, req->mac);
	memzero_explicit(key, sizeof(key));
	return 0;
}

/*
 * Does accept @accept (parsed into @p) answer our request @req as a host
 * that follows the protocol does? It answers only a request that sent a
 * cookie back (a first request gets a challenge), and proves the pair's
 * key whenever this host wants proofs (then the request proved it too).
 * In constant time.
 */
bool bx_admit_check_accept(const struct sockaddr *init,
			   const struct sockaddr *acc,
			   const struct bx_wire_req *req,
			   const struct bx_wire_accept *accept,
			   const struct bx_conn_params *p)
{
	u8 ia[16], aa[16], key[BX_AUTH_KEY_LEN], want[BX_WIRE_MAC_LEN];
	bool proof = req->flags & BX_WIRE_REQ_F_PROOF, ok;

	if (!(req->flags & BX_WIRE_REQ_F_COOKIE) ||
	    !!(p->flags & BX_WIRE_REQ_F_PROOF) != proof ||
	    (!proof && bx_admit_auth()))
		return false;
	if (!proof)
		return true;
	bx_admit_addr_v6(init, ia);
	bx_admit_addr_v6(acc, aa);
	if (!pair_key(req->kid, ia, aa, key))
		return false;
	bx_auth_acc_mac(key, ia, aa, req, accept, want);
	memzero_explicit(key, sizeof(key));
	ok = !crypto_memneq(want, p->mac, sizeof(want));
	if (!ok)
		atomic64_inc(&bx_admit_auth_failures);
	return ok;
}

/* ---- refusals ------------------------------------------------------------ */

/**
 * struct bx_refusal - what bx remembers of an address that broke the
 *	protocol: a fixed table (BX_REFUSALS), never the peer table, so
 *	that hosts which never proved anything cost no peer
 * @addr:	the address, IPv4 v4-mapped
 * @violations:	its violations since it came into the table
 * @refused:	its connect requests refused since
 * @until:	its requests are refused until then (jiffies)
 * @used:	in use
 */
struct bx_refusal {
	struct in6_addr	addr;
	u32		violations;
	u32		refused;
	unsigned long	until;
	bool		used;
};

#define BX_REFUSALS	256

/* The table; a leaf lock, any context. */
static DEFINE_SPINLOCK(bx_refusals_lock);
static struct bx_refusal bx_refusals[BX_REFUSALS];

/*
 * The entry of @a, or with @make a new one: a free slot, else the one
 * whose refusal ended longest ago, else the one that ends soonest.
 * bx_refusals_lock held.
 */
static struct bx_refusal *refusal(const struct in6_addr *a, bool make)
{
	struct bx_refusal *r, *victim = NULL;

	lockdep_assert_held(&bx_refusals_lock);
	for (r = bx_refusals; r < bx_refusals + BX_REFUSALS; r++) {
		if (r->used && ipv6_addr_equal(&r->addr, a))
			return r;
		if (!make)
			continue;
		if (!r->used) {
			if (!victim || victim->used)
				victim = r;
		} else if (!victim || (victim->used &&
				       time_before(r->until, victim->until))) {
			victim = r;
		}
	}
	if (victim) {
		memset(victim, 0, sizeof(*victim));
		victim->addr = *a;
		victim->used = true;
	}
	return victim;
}

/*
 * The host at @sa broke the protocol (@what): count it, and refuse its
 * connect requests for refuse_ms, doubling with each further violation
 * up to 64 times that.
 */
void bx_admit_violation(const struct sockaddr *sa, const char *what)
{
	unsigned int ms = READ_ONCE(bx_refuse_ms), n;
	struct bx_refusal *r;
	struct in6_addr a;

	bx_admit_addr_v6(sa, a.s6_addr);
	spin_lock(&bx_refusals_lock);
	r = refusal(&a, true);
	n = ++r->violations;
	ms <<= min(n - 1, 6U);
	r->until = jiffies + msecs_to_jiffies(ms);
	spin_unlock(&bx_refusals_lock);
	atomic64_inc(&bx_admit_violations);
	pr_warn_ratelimited("host %pISc: %s (violation %u): its connect requests are refused for %u ms\n",
			    sa, what, n, ms);
}

/* Milliseconds @sa's connect requests are still refused for (0: none). */
unsigned int bx_admit_refusing(const struct sockaddr *sa)
{
	unsigned long left = 0;
	struct bx_refusal *r;
	struct in6_addr a;

	bx_admit_addr_v6(sa, a.s6_addr);
	spin_lock(&bx_refusals_lock);
	r = refusal(&a, false);
	if (r && time_before(jiffies, r->until))
		left = r->until - jiffies;
	spin_unlock(&bx_refusals_lock);
	return jiffies_to_msecs(left);
}

/* A connect request from @sa was refused, @why: counted. */
void bx_admit_refused(const struct sockaddr *sa, const char *why)
{
	struct bx_refusal *r;
	struct in6_addr a;

	bx_admit_addr_v6(sa, a.s6_addr);
	spin_lock(&bx_refusals_lock);
	r = refusal(&a, false);
	if (r)
		r->refused++;
	spin_unlock(&bx_refusals_lock);
	atomic64_inc(&bx_admit_refused_connects);
	pr_info_ratelimited("refused a connection from %pISc: %s\n", sa, why);
}

/* What the table holds of @sa, for a peer's dump (zeros: nothing). */
void bx_admit_record(const struct sockaddr *sa, u32 *violations,
		     u32 *refused, u32 *refusing_ms)
{
	struct bx_refusal *r;
	struct in6_addr a;

	bx_admit_addr_v6(sa, a.s6_addr);
	*violations = *refused = 0;
	spin_lock(&bx_refusals_lock);
	r = refusal(&a, false);
	if (r) {
		*violations = r->violations;
		*refused = r->refused;
	}
	spin_unlock(&bx_refusals_lock);
	*refusing_ms = bx_admit_refusing(sa);
}

void bx_admit_init(void)
{
	get_random_bytes(bx_cookie_key, sizeof(bx_cookie_key));
}

void bx_admit_uninit(void)
{
	bx_admit_secret_set(NULL, 0);
	bx_admit_pairkeys_set(NULL, 0);
	memzero_explicit(bx_cookie_key, sizeof(bx_cookie_key));
	bx_admit_allow_set(NULL, 0);
	rcu_barrier();
}
