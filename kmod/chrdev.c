// SPDX-License-Identifier: GPL-2.0
/*
 * bx: /dev/bx, the user API (see uapi/linux/bx.h for the contract).
 *
 * Each open file is a struct bx_file (file.c). The misc device's fops
 * carry THIS_MODULE as owner, so an open file pins the module and rmmod
 * fails with -EWOULDBLOCK until the last file is closed.
 */

#include <linux/error-injection.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/miscdevice.h>
#include <net/ipv6.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/bx.h>

#include "chrdev.h"
#include "conn.h"
#include "dev.h"
#include "file.h"
#include "net.h"
#include "op.h"
#include "svc.h"
#include "params.h"

#define BX_MMAP_REGION	0ULL
#define BX_MMAP_CQ	BIT_ULL(32)

static int bx_open(struct inode *inode, struct file *filp)
{
	struct bx_file *f = bx_file_new(filp);

	if (IS_ERR(f))
		return PTR_ERR(f);
	filp->private_data = f;
	return 0;
}
ALLOW_ERROR_INJECTION(bx_open, ERRNO);

/* The process closed the file, or died: it leaves, its operations end. */
static int bx_release(struct inode *inode, struct file *filp)
{
	struct bx_file *f = filp->private_data;

	bx_file_unlist(f);
	bx_submit_release(f);
	bx_file_close(f);
	return 0;
}

/*
 * Copy in a size-versioned structure: the caller's size must be at least
 * @ver0; a larger one must have zeros past what we know (-E2BIG).
 */
static int copy_sized_in(void *kbuf, size_t ksize, size_t ver0,
			 const void __user *uarg, u32 *usize)
{
	if (get_user(*usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (*usize < ver0)
		return -EINVAL;
	return copy_struct_from_user(kbuf, ksize, uarg, *usize);
}

static int copy_sized_out(void __user *uarg, void *kbuf, size_t ksize,
			  u32 usize)
{
	*(u32 *)kbuf = min_t(u32, usize, ksize);
	if (copy_to_user(uarg, kbuf, min_t(u32, usize, ksize)))
		return -EFAULT;
	if (usize > ksize && clear_user(uarg + ksize, usize - ksize))
		return -EFAULT;
	return 0;
}

/* Output-only: a newer caller's larger struct just gets zeros past ours. */
static long bx_ioc_get_info(void __user *uarg)
{
	struct bx_info info = {};
	u32 usize;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < BX_INFO_SIZE_VER0)
		return -EINVAL;
	if (copy_from_user(&info, uarg, min_t(u32, usize, sizeof(info))))
		return -EFAULT;
	if (info.resv0 || info.resv1)
		return -EINVAL;
	info.features = BX_FEAT_INFO | BX_FEAT_DATA | BX_FEAT_VEC;
	info.ndevs = bx_dev_count();
	return copy_sized_out(uarg, &info, sizeof(info), usize);
}

static long bx_ioc_setup(struct bx_file *f, void __user *uarg)
{
	struct bx_region *region;
	struct bx_setup s = {};
	u32 usize;
	int ret;

	ret = copy_sized_in(&s, sizeof(s), BX_SETUP_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (s.flags || s.resv0 || s.resv1)
		return -EINVAL;
	if (!s.region_size || s.region_size > BX_REGION_MAX ||
	    !PAGE_ALIGNED(s.region_size))
		return -EINVAL;
	if (s.cq_entries < 8 || s.cq_entries > BX_CQ_ENTRIES_MAX ||
	    !is_power_of_2(s.cq_entries))
		return -EINVAL;

	mutex_lock(&f->setup_lock);
	if (f->region) {
		ret = -EBUSY;
		goto out;
	}
	ret = bx_region_create(s.region_size, f->cap_ipc_lock, &region);
	if (ret)
		goto out;
	ret = bx_cq_init(&f->cq, s.cq_entries, &s.cq_off, &s.cq_mmap_size,
			 f->cap_ipc_lock);
	if (ret) {
		bx_region_put(region);
		goto out;
	}
	s.features = BX_FEAT_INFO | BX_FEAT_DATA | BX_FEAT_VEC;
	s.region_mmap_off = BX_MMAP_REGION;
	s.cq_mmap_off = BX_MMAP_CQ;
	s.eager_max = BX_EAGER_MAX;
	ret = copy_sized_out(uarg, &s, sizeof(s), usize);
	if (ret) {
		bx_cq_uninit(&f->cq);
		bx_region_put(region);
		goto out;
	}
	/* Publish last: submit and mmap look only at f->region. */
	smp_store_release(&f->region, region);
out:
	mutex_unlock(&f->setup_lock);
	return ret;
}

/*
 * The peer of @addr for @f: one the file holds already, or one it takes
 * now -- made if the table has none, charged to the file's user for as
 * long as it stays in the table (peer.c). With a reference for the
 * caller.
 */
static struct bx_peer *file_peer(struct bx_file *f, const struct sockaddr *addr)
{
	struct bx_peer *peer;
	int ret;

	peer = bx_peer_find_or_create(f->net, addr, f->cap_admin ?
				      BX_PEER_ADMIN : BX_PEER_LOCAL, f->user);
	if (IS_ERR(peer) || xa_load(&f->peers, peer->id))
		return peer;
	/* The file's own reference, besides the caller's. */
	bx_peer_hold(peer);
	ret = xa_insert(&f->peers, peer->id, peer, BX_GFP_CHARGED);
	if (ret) {
		bx_peer_put(peer);
		/* -EBUSY: a racing BX_IOC_PEER of this file stored it. */
		if (ret != -EBUSY) {
			bx_peer_put_unused(peer);
			return ERR_PTR(ret);
		}
	}
	return peer;
}

/*
 * BX_IOC_PEER: the peer of an address, created if new. The file holds it
 * from then on (its id stays valid for the file); a new one is charged
 * to its user: -ENOSPC past user_peers_max, or when only the table's
 * reserve for CAP_NET_ADMIN is left.
 */
static long bx_ioc_peer(struct bx_file *f, void __user *uarg)
{
	struct sockaddr_storage ss = {};
	struct bx_peer_addr p;
	struct bx_peer *peer_k;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	if (p.resv0)
		return -EINVAL;
	if (p.family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		/* The unused tail of an IPv4 address must be zero. */
		if (memchr_inv(p.addr + 4, 0, sizeof(p.addr) - 4))
			return -EINVAL;
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, p.addr, 4);
		if (sin->sin_addr.s_addr == htonl(INADDR_ANY) ||
		    ipv4_is_multicast(sin->sin_addr.s_addr) ||
		    sin->sin_addr.s_addr == htonl(INADDR_BROADCAST))
			return -EINVAL;
	} else if (p.family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, p.addr, 16);
		if (ipv6_addr_any(&sin6->sin6_addr) ||
		    ipv6_addr_is_multicast(&sin6->sin6_addr))
			return -EINVAL;
	} else {
		return -EAFNOSUPPORT;
	}
	/* Not through the host's devices from a namespace without one. */
	if (!bx_net_has_rdma(f->net))
		return -ENETUNREACH;
	peer_k = file_peer(f, (struct sockaddr *)&ss);
	if (IS_ERR(peer_k))
		return PTR_ERR(peer_k);
	p.id = peer_k->id;
	bx_peer_put(peer_k);
	return copy_to_user(uarg, &p, sizeof(p)) ? -EFAULT : 0;
}

static long bx_ioc_service(struct bx_file *f, void __user *uarg, bool bind)
{
	struct bx_bind s;

	if (copy_from_user(&s, uarg, sizeof(s)))
		return -EFAULT;
	if (s.resv0 || !s.service)
		return -EINVAL;
	if (!bx_file_region(f))
		return -ENXIO;
	return bind ? bx_svc_bind(f, s.service) :
		      bx_svc_unbind(f, s.service);
}

#define SQE_BATCH 8

static long bx_ioc_submit(struct bx_file *f, void __user *uarg)
{
	struct bx_sqe sqes[SQE_BATCH];
	struct bx_submit s;
	struct bx_sqe __user *usqe;
	u32 done = 0;

	if (copy_from_user(&s, uarg, sizeof(s)))
		return -EFAULT;
	if (!s.nr || s.nr > BX_SUBMIT_MAX)
		return -EINVAL;
	if (!bx_file_region(f))
		return -ENXIO;
	if (s.wait > f->cq.mask + 1)
		return -EINVAL;
	usqe = u64_to_user_ptr(s.sqes);
	while (done < s.nr) {
		u32 n = min_t(u32, s.nr - done, SQE_BATCH), i;

		if (copy_from_user(sqes, usqe + done, n * sizeof(sqes[0])))
			return done ? done : -EFAULT;
		for (i = 0; i < n; i++) {
			int ret = bx_submit_sqe(f, &sqes[i]);

			if (ret)
				return done ? done : ret;
			done++;
		}
	}
	/*
	 * Like poll(2), but without its own system call. A corrupt head
	 * from user space can only end this process's sleep early.
	 */
	if (s.wait)
		wait_event_interruptible(f->cq.wait,
					 bx_cq_pending(&f->cq) >= s.wait);
	return done;
}

static long bx_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct bx_file *f = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case BX_IOC_GET_INFO:
		return bx_ioc_get_info(uarg);
	case BX_IOC_SETUP:
		return bx_ioc_setup(f, uarg);
	case BX_IOC_PEER:
		return bx_ioc_peer(f, uarg);
	case BX_IOC_BIND:
		return bx_ioc_service(f, uarg, true);
	case BX_IOC_UNBIND:
		return bx_ioc_service(f, uarg, false);
	case BX_IOC_SUBMIT:
		return bx_ioc_submit(f, uarg);
	default:
		return -ENOTTY;
	}
}

static int bx_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct bx_file *f = filp->private_data;
	struct bx_region *region = bx_file_region(f);
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;

	if (!region)
		return -ENXIO;
	if (off == BX_MMAP_REGION)
		return bx_region_mmap(region, vma);
	if (off == BX_MMAP_CQ)
		return bx_region_mmap(f->cq.mem, vma);
	return -EINVAL;
}

static __poll_t bx_poll(struct file *filp, poll_table *wait)
{
	struct bx_file *f = filp->private_data;

	if (!bx_file_region(f))
		return 0;
	poll_wait(filp, &f->cq.wait, wait);
	return bx_cq_readable(&f->cq) ? EPOLLIN | EPOLLRDNORM : 0;
}

static const struct file_operations bx_fops = {
	.owner		= THIS_MODULE,
	.open		= bx_open,
	.release	= bx_release,
	.unlocked_ioctl	= bx_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= bx_mmap,
	.poll		= bx_poll,
	.llseek		= noop_llseek,
};

/*
 * Stable object state in /sys/class/misc/bx/ (the tunables are in
 * /sys/module/bx/parameters/; details in debugfs and netlink).
 */
static ssize_t epoch_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%016llx\n", bx_conn_epoch);
}
static DEVICE_ATTR_RO(epoch);

static ssize_t devices_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", bx_dev_count());
}
static DEVICE_ATTR_RO(devices);

static ssize_t conns_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", bx_conn_count());
}
static DEVICE_ATTR_RO(conns);

static ssize_t recovering_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", bx_conn_peers_recovering());
}
static DEVICE_ATTR_RO(recovering);

static ssize_t files_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", bx_files_count());
}
static DEVICE_ATTR_RO(files);

static struct attribute *bx_attrs[] = {
	&dev_attr_epoch.attr,
	&dev_attr_devices.attr,
	&dev_attr_conns.attr,
	&dev_attr_recovering.attr,
	&dev_attr_files.attr,
	NULL,
};
ATTRIBUTE_GROUPS(bx);

static struct miscdevice bx_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= BX_DEVICE_NAME,
	.fops	= &bx_fops,
	.mode	= 0666,
	.groups	= bx_groups,
};

int bx_chrdev_init(void)
{
	return misc_register(&bx_misc);
}

void bx_chrdev_uninit(void)
{
	misc_deregister(&bx_misc);
}
