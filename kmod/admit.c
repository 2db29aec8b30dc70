// SPDX-License-Identifier: GPL-2.0
/*
 * bx: peer admission.
 *
 * Three checks stand between a host that can reach bx's rdma_cm port and
 * a connection that carries operations (cm.c applies them):
 *
 *  - The allow-list: networks whose hosts may connect, set by an admin
 *    (module parameter "allow", netlink allow-set). Empty, the default,
 *    allows every address. It applies both ways: bx neither accepts a
 *    connection from, nor starts one to, an address outside it.
 *  - The cluster secret, set by an admin through netlink (never readable
 *    back). With one, each side of a new connection proves that it knows
 *    it: a challenge-response over nonces of both sides, HMAC-SHA256 from
 *    the crypto API over the transcript of the handshake (wire.h). A
 *    connection that would replace a live one, or announce a new
 *    incarnation of its peer, counts only once its initiator's proof
 *    checked out. Without a secret, any host on an allowed network that
 *    speaks bx's handshake is a peer, as it claims to be.
 *  - Refusal after violations: a peer whose connection ended in a
 *    protocol violation (a malformed or unexpected message, an RDMA
 *    access outside what it was granted, a failed proof) is refused for
 *    refuse_ms, doubling with each further violation up to 64 times that.
 *    Our own connections to it are not held back: the application chose
 *    that peer.
 *
 * Refusals and violations are counted (netlink admit-get, conn-get) and
 * logged at a limited rate, so that a hostile host cannot flood the log.
 */

#include <crypto/hash.h>
#include <linux/inet.h>
#include <linux/in.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <net/ipv6.h>

#include "admit.h"
#include "conn.h"
#include "params.h"

atomic64_t bx_refused_connects = ATOMIC64_INIT(0);
atomic64_t bx_auth_failures = ATOMIC64_INIT(0);
atomic64_t bx_violations = ATOMIC64_INIT(0);

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
void bx_addr_v6(const struct sockaddr *sa, u8 out[16])
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
bool bx_allowed(const struct sockaddr *sa)
{
	const struct bx_allow *al;
	struct in6_addr a;
	bool ok = true;
	unsigned int i;

	bx_addr_v6(sa, a.s6_addr);
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
int bx_allow_set(const struct bx_allow_net *nets, unsigned int n)
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
int bx_allow_each(int (*fn)(const struct bx_allow_net *, void *), void *arg)
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
		ret = bx_allow_set(nets, n);
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

/* ---- the cluster secret ------------------------------------------------- */

/* hmac(sha256) keyed with the secret, or NULL; under bx_admit_lock. */
static struct crypto_shash *bx_hmac;

/*
 * Set the cluster secret (@len bytes, BX_SECRET_MIN..BX_SECRET_MAX), or
 * clear it (@len 0). Connections up already stay; new ones follow it.
 */
int bx_secret_set(const u8 *key, unsigned int len)
{
	struct crypto_shash *tfm = NULL, *old;
	int ret;

	if (len && (len < BX_SECRET_MIN || len > BX_SECRET_MAX))
		return -EINVAL;
	if (len) {
		tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
		if (IS_ERR(tfm))
			return PTR_ERR(tfm);
		ret = crypto_shash_setkey(tfm, key, len);
		if (ret) {
			crypto_free_shash(tfm);
			return ret;
		}
	}
	mutex_lock(&bx_admit_lock);
	old = bx_hmac;
	WRITE_ONCE(bx_hmac, tfm);
	mutex_unlock(&bx_admit_lock);
	if (old || tfm)
		pr_info("cluster secret %s\n", tfm ? "set" : "cleared");
	crypto_free_shash(old);
	return 0;
}

bool bx_secret_on(void)
{
	return READ_ONCE(bx_hmac);
}

/*
 * The proof of @role over the handshake of a connection from @init to
 * @acc (wire.h); -ENOKEY without a secret. Process context.
 */
int bx_auth_mac(u8 mac[BX_WIRE_MAC_LEN], enum bx_wire_auth_role role,
		const struct sockaddr *init, const struct sockaddr *acc,
		const struct bx_wire_conn *req, const struct bx_wire_conn *rep)
{
	u8 in[BX_WIRE_AUTH_INPUT_LEN], ia[16], aa[16];
	int ret = -ENOKEY;

	bx_addr_v6(init, ia);
	bx_addr_v6(acc, aa);
	bx_wire_auth_input(in, role, ia, aa, req, rep);
	mutex_lock(&bx_admit_lock);
	if (bx_hmac) {
		SHASH_DESC_ON_STACK(desc, bx_hmac);

		desc->tfm = bx_hmac;
		ret = crypto_shash_digest(desc, in, sizeof(in), mac);
		shash_desc_zero(desc);
	}
	mutex_unlock(&bx_admit_lock);
	return ret;
}

/* Does @mac prove the secret? (In constant time; false without one.) */
bool bx_auth_check(const u8 mac[BX_WIRE_MAC_LEN], enum bx_wire_auth_role role,
		   const struct sockaddr *init, const struct sockaddr *acc,
		   const struct bx_wire_conn *req,
		   const struct bx_wire_conn *rep)
{
	u8 want[BX_WIRE_MAC_LEN];
	bool ok;

	ok = !bx_auth_mac(want, role, init, acc, req, rep) &&
	     !crypto_memneq(want, mac, sizeof(want));
	memzero_explicit(want, sizeof(want));
	if (!ok)
		atomic64_inc(&bx_auth_failures);
	return ok;
}

/* ---- refusals ------------------------------------------------------------ */

/* A connect request from @sa was refused, @why. */
void bx_refused(const struct sockaddr *sa, const char *why)
{
	atomic64_inc(&bx_refused_connects);
	pr_info_ratelimited("refused a connection from %pISc: %s\n", sa, why);
}

/*
 * @peer broke the protocol (@what): count it, and refuse its connect
 * requests for a while, longer with each violation.
 */
void bx_peer_violation(struct bx_peer *peer, const char *what)
{
	unsigned int ms = READ_ONCE(bx_refuse_ms), n;

	spin_lock(&peer->sess_lock);
	n = ++peer->violations;
	ms <<= min(n - 1, 6U);
	peer->refuse_until = jiffies + msecs_to_jiffies(ms);
	spin_unlock(&peer->sess_lock);
	atomic64_inc(&bx_violations);
	pr_warn_ratelimited("peer %pISc: %s (violation %u): its connections are refused for %u ms\n",
			    &peer->addr, what, n, ms);
}

/* Milliseconds @peer's connect requests are still refused for (0: none). */
unsigned int bx_peer_refusing(struct bx_peer *peer)
{
	unsigned long until;

	spin_lock(&peer->sess_lock);
	until = peer->refuse_until;
	spin_unlock(&peer->sess_lock);
	if (!until || time_after_eq(jiffies, until))
		return 0;
	return jiffies_to_msecs(until - jiffies);
}

void bx_admit_uninit(void)
{
	bx_secret_set(NULL, 0);
	bx_allow_set(NULL, 0);
	rcu_barrier();
}
