// SPDX-License-Identifier: GPL-2.0
/*
 * bx: the memory a connection's peer can reach.
 *
 * Scope. Every connection has a protection domain of its own: its QP,
 * its registration QP and every MR registered for its operations are in
 * it, and nothing else is. An RDMA READ or WRITE arriving on another
 * connection's QP cannot use those MRs, whatever key it names, so a peer
 * reaches only the buffers of operations on its own connection (the
 * model of rdma_rw's per-QP MR pools and nvme-rdma's queue-owned
 * registrations). Within a connection, each registration gets a random
 * key byte (the part of an rkey the consumer owns; the rest is the MR's
 * index) and a random iova with the buffer's page offset, so neither a
 * neighbouring key nor an old descriptor names a live registration, and
 * no kernel or DMA address goes on the wire (the iova is what the peer
 * sees as "addr"; xprtrdma randomizes it too). MRs are reused in FIFO
 * order, the least recently invalidated first.
 *
 * Rendezvous buffers are registered (REG_MR) before, and invalidated
 * (LOCAL_INV) after, every operation that exposes them. Those are local
 * work requests, and they must not share a send queue with traffic: on a
 * retransmission rxe rewinds its requester to the first unacknowledged
 * WQE and executes again every local operation behind it that already ran
 * (req_retry()/__req_next_wqe() in 6.12), so a REG_MR finds its MR
 * already valid and the QP dies. Each connection therefore has a second
 * RC QP, in its PD, that carries only registrations and invalidations. It
 * is connected to itself and never transmits, so it never retries. Its
 * completions arrive on the connection's CQ.
 *
 * Fencing. An operation completes only once its peer can no longer
 * reach its buffer: its MRs were invalidated, or the connection's QP is
 * in the error state for good (conn->fenced, set by the teardown after
 * draining it). A failed invalidation ends the connection, and the
 * operation waits for the fence (op.c). MRs are freed with the PD at
 * teardown, never handed to another connection.
 */

#include <linux/random.h>
#include <rdma/ib_cache.h>

#include "conn.h"
#include "reg.h"

/* MRs allocated at a time when a connection runs short. */
#define BX_MRS_CHUNK	16

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
		struct net_device *ndev = bx_compat_ib_port_netdev(dev, port);

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

/*
 * Create @conn's PD and its registration QP (on conn->cq, which must
 * have room for BX_CONN_MRS_MAX registrations and as many
 * invalidations). bx_reg_free() undoes a partial setup.
 */
int bx_reg_init(struct bx_conn *conn)
{
	struct ib_device *dev = bx_conn_ibdev(conn);
	struct ib_qp_init_attr attr = {};
	int ret;

	conn->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(conn->pd)) {
		ret = PTR_ERR(conn->pd);
		conn->pd = NULL;
		return ret;
	}
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = conn->cm_id->port_num;
	/* A REG_MR and a LOCAL_INV per MR, and ib_drain_qp()'s markers. */
	attr.cap.max_send_wr = 2 * BX_CONN_MRS_MAX + 1;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	conn->reg_qp = ib_create_qp(conn->pd, &attr);
	if (IS_ERR(conn->reg_qp)) {
		ret = PTR_ERR(conn->reg_qp);
		conn->reg_qp = NULL;
		return ret;
	}
	ret = reg_qp_connect(conn->reg_qp, conn->cm_id->port_num);
	if (ret)
		return ret;
	spin_lock(&conn->mr_lock);
	conn->reg_live = true;
	spin_unlock(&conn->mr_lock);
	return 0;
}

/*
 * Stop posting registrations and flush what is queued: their completion
 * handlers run before this returns. The teardown calls it once the
 * connection's QP is drained (conn->fenced).
 */
void bx_reg_drain(struct bx_conn *conn)
{
	if (!conn->reg_qp)
		return;
	spin_lock(&conn->mr_lock);
	conn->reg_live = false;
	spin_unlock(&conn->mr_lock);
	ib_drain_qp(conn->reg_qp);
}

/*
 * Free the MRs, the registration QP and the PD. Every MR is back (each
 * operation that held some ended in the drains before); one that is not
 * would outlive its PD.
 */
void bx_reg_free(struct bx_conn *conn)
{
	struct ib_mr *mr, *tmp;
	u32 freed = 0;

	list_for_each_entry_safe(mr, tmp, &conn->mr_free, qp_entry) {
		list_del(&mr->qp_entry);
		ib_dereg_mr(mr);
		freed++;
	}
	WARN_ON_ONCE(freed != conn->mr_count || conn->mr_inuse);
	conn->mr_count = 0;
	if (conn->reg_qp) {
		ib_destroy_qp(conn->reg_qp);
		conn->reg_qp = NULL;
	}
	if (conn->pd) {
		ib_dealloc_pd(conn->pd);
		conn->pd = NULL;
	}
}

/* Post a chain of REG_MR/LOCAL_INV; -ENODEV once the teardown drains. */
int bx_reg_post(struct bx_conn *conn, struct ib_send_wr *first)
{
	int ret = -ENODEV;

	spin_lock(&conn->mr_lock);
	if (conn->reg_live)
		ret = ib_post_send(conn->reg_qp, first, NULL);
	spin_unlock(&conn->mr_lock);
	return ret;
}

/* Add up to BX_MRS_CHUNK MRs to @conn's pool; process context. */
static void mr_grow(struct bx_conn *conn)
{
	int i;

	for (i = 0; i < BX_MRS_CHUNK; i++) {
		struct ib_mr *mr;

		spin_lock(&conn->mr_lock);
		if (!conn->reg_live || conn->mr_count >= BX_CONN_MRS_MAX) {
			spin_unlock(&conn->mr_lock);
			return;
		}
		/* Counted before it exists: a racing grower stops in time. */
		conn->mr_count++;
		spin_unlock(&conn->mr_lock);

		mr = ib_alloc_mr(conn->pd, IB_MR_TYPE_MEM_REG, BX_SEG_PAGES);
		spin_lock(&conn->mr_lock);
		if (IS_ERR(mr))
			conn->mr_count--;
		else
			list_add_tail(&mr->qp_entry, &conn->mr_free);
		spin_unlock(&conn->mr_lock);
		if (IS_ERR(mr))
			return;
	}
}

/*
 * An MR of @conn's PD, the least recently used first; allocates more
 * while the connection has fewer than BX_CONN_MRS_MAX. NULL when none
 * is left: the caller waits for bx_reg_mr_put().
 */
struct ib_mr *bx_reg_mr_get(struct bx_conn *conn)
{
	struct ib_mr *mr;
	bool grown = false;

	for (;;) {
		spin_lock(&conn->mr_lock);
		mr = list_first_entry_or_null(&conn->mr_free, struct ib_mr,
					      qp_entry);
		if (mr) {
			list_del(&mr->qp_entry);
			conn->mr_inuse++;
		}
		spin_unlock(&conn->mr_lock);
		if (mr || grown)
			return mr;
		mr_grow(conn);
		grown = true;
	}
}

/*
 * Give @mr back to the end of @conn's pool; the caller wakes who waits
 * for one (bx_send_mr_freed()).
 */
void bx_reg_mr_put(struct bx_conn *conn, struct ib_mr *mr)
{
	spin_lock(&conn->mr_lock);
	list_add_tail(&mr->qp_entry, &conn->mr_free);
	conn->mr_inuse--;
	spin_unlock(&conn->mr_lock);
}

/* The key byte of the next registration: random, never the last one. */
u32 bx_reg_mr_key(u32 old)
{
	u8 key;

	do {
		key = get_random_u8();
	} while (key == (u8)old);
	return key;
}

/*
 * The iova a registration is published at: random, with the buffer's
 * offset in its page kept (the device finds the byte in the page from
 * it). Bit 63 stays clear, so that iova + length cannot wrap.
 */
u64 bx_reg_mr_iova(u64 iova)
{
	return (get_random_u64() & GENMASK_ULL(62, PAGE_SHIFT)) |
	       (iova & ~PAGE_MASK);
}
