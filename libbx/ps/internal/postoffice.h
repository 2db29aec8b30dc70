/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * ps-lite's Postoffice over bxps (bxps.h): the process's node, started
 * from DMLC_* by ps::Start(), with its ranks, groups, key ranges,
 * barriers and exit callback. Header-only; the node is one per process
 * (a function-local static shared by every translation unit).
 */
#ifndef BX_PS_POSTOFFICE_H_
#define BX_PS_POSTOFFICE_H_

#include <bxps.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "ps/base.h"
#include "ps/internal/logging.h"
#include "ps/range.h"

namespace ps {

/* ps-lite's Environment: the process's environment variables. */
class Environment {
 public:
  static Environment* Get() {
    static Environment e;
    return &e;
  }
  const char* find(const char* k) { return std::getenv(k); }
  void set(const char* k, const std::string& v) { setenv(k, v.c_str(), 1); }
};

class Postoffice {
 public:
  static Postoffice* Get() {
    static Postoffice po;
    return &po;
  }

  /* Join the job (bxps_start()); with @do_barrier meet every node. */
  void Start(int customer_id, const char* argv0, bool do_barrier) {
    (void)argv0;
    std::lock_guard<std::mutex> lk(start_mu_);
    if (node_) {
      ++starts_;
      if (do_barrier) Barrier(customer_id, kScheduler + kServerGroup + kWorkerGroup);
      return;
    }
    struct bxps_cfg cfg;
    const char* bad = nullptr;
    int ret = bxps_cfg_env(&cfg, &bad);
    CHECK_EQ(ret, 0) << "environment: " << (bad ? bad : "?") << " missing or bad";
    struct bxps* n = nullptr;
    ret = bxps_start(&n, &cfg);
    CHECK_EQ(ret, 0) << "bxps_start: " << std::strerror(-ret);
    node_ = n;
    starts_ = 1;
    /* What ps-lite's Postoffice still answers after Finalize(). */
    role_ = bxps_role(n);
    rank_ = bxps_rank(n);
    num_servers_ = bxps_num_servers(n);
    num_workers_ = bxps_num_workers(n);
    {
      /* The region's bounds, to tell its blocks (Free()). */
      uint64_t size = 0;
      region_lo_ = static_cast<char*>(bxps_region(n, &size));
      region_hi_ = region_lo_ + size;
      region_cap_ = static_cast<size_t>(size / 2);
    }
    if (do_barrier) Barrier(customer_id, kScheduler + kServerGroup + kWorkerGroup);
  }

  /* Leave: barrier, the exit callback, then the node is gone. */
  void Finalize(int customer_id, bool do_barrier) {
    (void)customer_id;
    std::lock_guard<std::mutex> lk(start_mu_);
    if (!node_) return;
    if (do_barrier) bxps_barrier(node_, BXPS_ALL);
    if (--starts_ > 0) return;
    if (exit_callback_) exit_callback_();
    exit_callback_ = nullptr;
    /* The node stays ours until its handlers stopped (they may call node()). */
    bxps_finalize(node_, 0);
    node_ = nullptr;
  }

  /* Wait for every live node of @node_group (0 or -errno; ps-lite: void). */
  int Barrier(int customer_id, int node_group) {
    (void)customer_id;
    CHECK(node_) << "ps::Start() first";
    if (!(node_group & bxps_role(node_))) return 0;
    return bxps_barrier(node_, node_group);
  }

  void RegisterExitCallback(const std::function<void()>& cb) { exit_callback_ = cb; }

  struct bxps* node() const {
    CHECK(node_) << "ps::Start() first";
    return node_;
  }
  bool started() const { return node_ != nullptr; }

  /* Valid from Start() on, also after Finalize(). */
  int my_rank() const { return Known(), rank_; }
  int num_servers() const { return Known(), num_servers_; }
  int num_workers() const { return Known(), num_workers_; }
  bool is_worker() const { return Known(), role_ == BXPS_WORKER; }
  bool is_server() const { return Known(), role_ == BXPS_SERVER; }
  bool is_scheduler() const { return Known(), role_ == BXPS_SCHEDULER; }
  int verbose() const { return logging::Verbose(); }

  static int WorkerRankToID(int rank) { return rank * 2 + 9; }
  static int ServerRankToID(int rank) { return rank * 2 + 8; }
  static int IDtoRank(int id) { return std::max((id - 8) / 2, 0); }

  /* The node ids of a group (or the node itself). */
  std::vector<int> GetNodeIDs(int node_id) const {
    if (node_id >= 8) return std::vector<int>(1, node_id);
    int ids[256];
    int cnt = bxps_node_ids(node(), node_id, ids, 256);
    return std::vector<int>(ids, ids + cnt);
  }

  const std::vector<Range>& GetServerKeyRanges() {
    std::lock_guard<std::mutex> lk(start_mu_);
    if (ranges_.empty()) {
      for (int r = 0; r < num_servers(); ++r) {
        uint64_t b, e;
        bxps_server_range(node(), r, &b, &e);  // before Finalize()
        ranges_.push_back(Range(b, e));
      }
    }
    return ranges_;
  }

  /*
   * Region memory for SArray (arrays of 256 bytes and more, up to half
   * the region in all; the rest is the node's buffers), else the heap.
   * A region block starts with its size, 64 bytes before the array.
   */
  void* Alloc(size_t bytes) {
    struct bxps* n = node_;
    if (n && bytes >= 256 && region_used_ + bytes <= region_cap_) {
      char* p = static_cast<char*>(bxps_alloc(n, bytes + 64));
      if (p) {
        region_used_ += bytes;
        std::memcpy(p, &bytes, sizeof(bytes));
        return p + 64;
      }
    }
    return std::malloc(bytes ? bytes : 1);
  }
  void Free(void* p) {
    char* q = static_cast<char*>(p);
    if (!q) return;
    if (q >= region_lo_ && q < region_hi_) {
      /* After Finalize the region is gone, and its blocks with it. */
      struct bxps* n = node_;
      size_t bytes;
      std::memcpy(&bytes, q - 64, sizeof(bytes));
      if (n) {
        region_used_ -= bytes;
        bxps_free(n, q - 64);
      }
      return;
    }
    std::free(p);
  }

 private:
  Postoffice() {}
  void Known() const { CHECK(role_) << "ps::Start() first"; }
  int role_ = 0;
  int rank_ = 0;
  int num_servers_ = 0;
  int num_workers_ = 0;
  std::mutex start_mu_;
  std::atomic<struct bxps*> node_{nullptr};
  int starts_ = 0;
  std::function<void()> exit_callback_;
  std::vector<Range> ranges_;
  std::atomic<size_t> region_used_{0};
  size_t region_cap_ = 0;
  char* region_lo_ = nullptr;
  char* region_hi_ = nullptr;
};

namespace internal {
inline void* Alloc(size_t bytes) { return Postoffice::Get()->Alloc(bytes); }
inline void Free(void* p) { Postoffice::Get()->Free(p); }
}  // namespace internal

}  // namespace ps

#endif  // BX_PS_POSTOFFICE_H_
