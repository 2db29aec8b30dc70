// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the registration QP of a device.
 *
 * Rendezvous buffers are registered (REG_MR) before, and invalidated
 * (LOCAL_INV) after, every operation that exposes them. Those are local
 * work requests, and they must not share a send queue with traffic: on a
 * retransmission rxe rewinds its requester to the first unacknowledged
 * WQE and executes again every local operation behind it that already ran
 * (req_retry()/__req_next_wqe() in 6.12), so a REG_MR finds its MR
 * already valid and the QP dies. Each device therefore has one RC QP that
 * carries only registrations and invalidations. It is connected to itself
 * and never transmits, so it never retries; MRs belong to the device's
 * PD, so the rkeys it registers work on every connection of the device.
 * The cost is that a rendezvous operation waits for its registration to
 * complete before the message publishing the rkey is sent, which any
 * cross-QP scheme needs anyway.
 */

#include <rdma/ib_cache.h>
#include <rdma/mr_pool.h>

#include "conn.h"
#include "dev.h"
#include "reg.h"

#define BX_DEV_MRS	1024

static int reg_qp_connect(struct ib_qp *qp, u32 port)
{
	struct ib_device *dev = qp->device;
	struct ib_qp_attr a = {};
	union ib_gid gid;
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.port_num = port;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	ret = rdma_query_gid(dev, port, 0, &gid);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.min_rnr_timer = 12;
	a.ah_attr.type = rdma_ah_find_type(dev, port);
	rdma_ah_set_port_num(&a.ah_attr, port);
	rdma_ah_set_grh(&a.ah_attr, &gid, 0, 0, 1, 0);
	if (a.ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE) {
		struct net_device *ndev = ib_device_get_netdev(dev, port);

		if (!ndev)
			return -ENODEV;
		memcpy(a.ah_attr.roce.dmac, ndev->dev_addr, ETH_ALEN);
		dev_put(ndev);
	}
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 0;
	a.rnr_retry = 0;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

int bx_reg_init(struct bx_dev *bdev)
{
	struct ib_device *dev = bdev->ibdev;
	struct ib_qp_init_attr attr = {};
	int ret;

	spin_lock_init(&bdev->reg_lock);
	INIT_LIST_HEAD(&bdev->mrs);
	bdev->reg_cq = ib_alloc_cq(dev, bdev, 4096, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(bdev->reg_cq)) {
		ret = PTR_ERR(bdev->reg_cq);
		bdev->reg_cq = NULL;
		return ret;
	}
	attr.send_cq = bdev->reg_cq;
	attr.recv_cq = bdev->reg_cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = 1;
	attr.cap.max_send_wr = 4000;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	bdev->reg_qp = ib_create_qp(bdev->pd, &attr);
	if (IS_ERR(bdev->reg_qp)) {
		ret = PTR_ERR(bdev->reg_qp);
		bdev->reg_qp = NULL;
		goto err_free_cq;
	}
	ret = reg_qp_connect(bdev->reg_qp, rdma_start_port(dev));
	if (ret)
		goto err_destroy_qp;
	ret = ib_mr_pool_init(bdev->reg_qp, &bdev->mrs, BX_DEV_MRS,
			      IB_MR_TYPE_MEM_REG, BX_SEG_PAGES, 0);
	if (ret)
		goto err_destroy_qp;
	bdev->reg_live = true;
	return 0;

err_destroy_qp:
	ib_destroy_qp(bdev->reg_qp);
	bdev->reg_qp = NULL;
err_free_cq:
	ib_free_cq(bdev->reg_cq);
	bdev->reg_cq = NULL;
	return ret;
}

/*
 * After every connection of the device is gone: stop posting, flush what
 * is queued (completion handlers release their MRs), free the pool.
 */
void bx_reg_uninit(struct bx_dev *bdev)
{
	if (!bdev->reg_qp)
		return;
	spin_lock(&bdev->reg_lock);
	bdev->reg_live = false;
	spin_unlock(&bdev->reg_lock);
	ib_drain_qp(bdev->reg_qp);
	ib_mr_pool_destroy(bdev->reg_qp, &bdev->mrs);
	ib_destroy_qp(bdev->reg_qp);
	ib_free_cq(bdev->reg_cq);
	bdev->reg_qp = NULL;
	bdev->reg_cq = NULL;
}

/* Post a chain of REG_MR/LOCAL_INV; -ENODEV once the device is going. */
int bx_reg_post(struct bx_dev *bdev, struct ib_send_wr *first)
{
	int ret = -ENODEV;

	spin_lock(&bdev->reg_lock);
	if (bdev->reg_live)
		ret = ib_post_send(bdev->reg_qp, first, NULL);
	spin_unlock(&bdev->reg_lock);
	return ret;
}

struct ib_mr *bx_reg_mr_get(struct bx_dev *bdev)
{
	return ib_mr_pool_get(bdev->reg_qp, &bdev->mrs);
}

void bx_reg_mr_put(struct bx_dev *bdev, struct ib_mr *mr)
{
	ib_mr_pool_put(bdev->reg_qp, &bdev->mrs, mr);
}
