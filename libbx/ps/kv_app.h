/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * ps-lite's key-value applications over bxps (bxps.h): KVWorker<Val>
 * (Push, Pull, PushPull, their zero-copy Z forms, Wait, callbacks, lens,
 * cmd, priority), KVServer<Val> (a request handle, Response now or
 * later) and KVServerDefaultHandle<Val>. Val is one of float, double,
 * int32_t, int64_t, uint32_t, uint64_t, uint8_t, char, ps::float16,
 * ps::bfloat16. What differs from ps-lite: Documentation/pslite.rst.
 */
#ifndef BX_PS_KV_APP_H_
#define BX_PS_KV_APP_H_

#include <bxps.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ps/base.h"
#include "ps/internal/logging.h"
#include "ps/internal/postoffice.h"
#include "ps/range.h"
#include "ps/sarray.h"
#include "ps/simple_app.h"

namespace ps {

/* IEEE half and bfloat16 values, summed in float by the servers. */
struct float16 {
  uint16_t bits;
};
struct bfloat16 {
  uint16_t bits;
};

/* The element type bx sends for Val. */
template <typename Val>
struct DataType;
#define BX_PS_DTYPE(T, V) \
  template <>             \
  struct DataType<T> {    \
    static const int value = V; \
  }
BX_PS_DTYPE(float, BXPS_F32);
BX_PS_DTYPE(double, BXPS_F64);
BX_PS_DTYPE(int32_t, BXPS_I32);
BX_PS_DTYPE(uint32_t, BXPS_I32);
BX_PS_DTYPE(long, BXPS_I64);
BX_PS_DTYPE(long long, BXPS_I64);
BX_PS_DTYPE(unsigned long, BXPS_U64);
BX_PS_DTYPE(unsigned long long, BXPS_U64);
BX_PS_DTYPE(uint8_t, BXPS_U8);
BX_PS_DTYPE(char, BXPS_U8);
BX_PS_DTYPE(float16, BXPS_F16);
BX_PS_DTYPE(bfloat16, BXPS_BF16);
#undef BX_PS_DTYPE

/* A request's keys, values and lengths. */
template <typename Val>
struct KVPairs {
  SArray<Key> keys;
  SArray<Val> vals;
  SArray<int> lens;
  int priority = 0;
};

/* What a server's handle learns of a request besides its data. */
struct KVMeta {
  int cmd = 0;
  bool push = false;
  bool pull = false;
  int sender = 0;
  int timestamp = 0;
  int customer_id = 0;
  uint64_t key = 0;
  uint64_t addr = 0;
  int val_len = 0;
  int option = 0;
  int priority = 0;
  int app_id = 0;
  /* bx: the part of the sender's request, its element type */
  uint32_t part_ = 0;
  int dtype_ = 0;
};

namespace internal {
/* A view of @n elements at @p owned by @owner (a received message). */
template <typename T>
SArray<T> View(const std::shared_ptr<void>& owner, const void* p, size_t n) {
  SArray<T> a;
  if (n) a.reset(static_cast<T*>(const_cast<void*>(p)), n, [owner](T*) {});
  return a;
}
}  // namespace internal

template <typename Val>
class KVWorker {
 public:
  using Callback = std::function<void()>;
  /* Per server: whether it gets a part, and the part. */
  using SlicedKVs = std::vector<std::pair<bool, KVPairs<Val>>>;
  using Slicer = std::function<void(const KVPairs<Val>& send,
                                    const std::vector<Range>& ranges, SlicedKVs* sliced)>;

  explicit KVWorker(int app_id, int customer_id = 0)
      : app_id_(app_id), customer_id_(customer_id) {}
  virtual ~KVWorker() {}

  /*
   * Split requests with @slicer instead of by the servers' key ranges
   * (bxps_sliced()): sliced[i] goes to server i. A pull's answers are put
   * together in the order of the parts' first keys.
   */
  void set_slicer(const Slicer& slicer) {
    CHECK(slicer) << "invalid slicer";
    slicer_ = slicer;
  }

  int Push(const std::vector<Key>& keys, const std::vector<Val>& vals,
           const std::vector<int>& lens = {}, int cmd = 0, const Callback& cb = nullptr,
           int priority = 0) {
    Ctx* c = new Ctx(cb);
    return Send(BXPS_F_PUSH_, keys.data(), keys.size(), vals.data(), vals.size(),
                lens.empty() ? nullptr : lens.data(), lens.size(), cmd, priority, c);
  }

  int Pull(const std::vector<Key>& keys, std::vector<Val>* vals,
           std::vector<int>* lens = nullptr, int cmd = 0, const Callback& cb = nullptr,
           int priority = 0) {
    Ctx* c = new Ctx(cb);
    c->vec_vals = CHECK_NOTNULL(vals);
    c->vec_lens = lens;
    return Recv(BXPS_F_PULL_, keys.data(), keys.size(), nullptr, 0, vals->data(),
                vals->size(), lens, cmd, priority, c);
  }

  int PushPull(const std::vector<Key>& keys, const std::vector<Val>& vals,
               std::vector<Val>* outs, std::vector<int>* lens = nullptr, int cmd = 0,
               const Callback& cb = nullptr, int priority = 0) {
    Ctx* c = new Ctx(cb);
    c->vec_vals = CHECK_NOTNULL(outs);
    c->vec_lens = lens;
    return Recv(BXPS_F_PUSH_ | BXPS_F_PULL_, keys.data(), keys.size(), vals.data(),
                vals.size(), outs->data(), outs->size(), lens, cmd, priority, c);
  }

  /* Wait until @timestamp is done: 0 or -errno (ps-lite: void). */
  int Wait(int timestamp) {
    return bxps_wait(Postoffice::Get()->node(), timestamp, nullptr);
  }

  /* bx: a done request's status, and the rank of the server that failed. */
  int Status(int timestamp, int* rank = nullptr) {
    int st = 0, r = -1;
    int ret = bxps_test(Postoffice::Get()->node(), timestamp, &st, &r);
    if (rank) *rank = r;
    return ret < 0 ? ret : ret == 0 ? -EINPROGRESS : st;
  }

  int ZPush(const SArray<Key>& keys, const SArray<Val>& vals, const SArray<int>& lens = {},
            int cmd = 0, const Callback& cb = nullptr, int priority = 0) {
    Ctx* c = new Ctx(cb);
    c->keys = keys;
    c->vals = vals;
    c->lens = lens;
    return Send(BXPS_F_PUSH_, keys.data(), keys.size(), vals.data(), vals.size(),
                lens.empty() ? nullptr : lens.data(), lens.size(), cmd, priority, c);
  }

  int ZPull(const SArray<Key>& keys, SArray<Val>* vals, SArray<int>* lens = nullptr,
            int cmd = 0, const Callback& cb = nullptr, int priority = 0) {
    Ctx* c = new Ctx(cb);
    c->keys = keys;
    c->sa_vals = CHECK_NOTNULL(vals);
    c->sa_lens = lens;
    return ZRecv(BXPS_F_PULL_, keys, SArray<Val>(), vals, lens, cmd, priority, c);
  }

  int ZPushPull(const SArray<Key>& keys, const SArray<Val>& vals, SArray<Val>* outs,
                SArray<int>* lens = nullptr, int cmd = 0, const Callback& cb = nullptr,
                int priority = 0) {
    Ctx* c = new Ctx(cb);
    c->keys = keys;
    c->vals = vals;
    c->sa_vals = CHECK_NOTNULL(outs);
    c->sa_lens = lens;
    return ZRecv(BXPS_F_PUSH_ | BXPS_F_PULL_, keys, vals, outs, lens, cmd, priority, c);
  }

 private:
  enum { BXPS_F_PUSH_ = 1, BXPS_F_PULL_ = 2 };

  /* What a request holds until it is done. */
  struct Ctx {
    explicit Ctx(const Callback& c) : cb(c) {}
    Callback cb;
    SArray<Key> keys;
    SArray<Val> vals;
    SArray<int> lens;
    std::vector<Val>* vec_vals = nullptr;
    std::vector<int>* vec_lens = nullptr;
    SArray<Val>* sa_vals = nullptr;
    SArray<int>* sa_lens = nullptr;
    bool kept = false;  // the library keeps the answer (bxps_result)
    SlicedKVs sliced;   // the slicer's parts, sent from here
  };

  static void Done(struct bxps* n, int64_t id, int status, int rank, void* arg) {
    (void)rank;
    Ctx* c = static_cast<Ctx*>(arg);
    struct bxps_result res;
    if (status == 0 && c->kept && bxps_result(n, id, &res) == 0) {
      size_t nv = res.val_bytes / sizeof(Val);
      if (c->vec_vals) {
        c->vec_vals->assign(static_cast<Val*>(res.vals), static_cast<Val*>(res.vals) + nv);
        std::free(res.vals);
      } else if (c->sa_vals) {
        c->sa_vals->reset(static_cast<Val*>(res.vals), nv, [](Val* p) { std::free(p); });
      } else {
        std::free(res.vals);
      }
      if (c->vec_lens)
        c->vec_lens->assign(res.lens, res.lens + res.nkeys);
      else if (c->sa_lens)
        c->sa_lens->CopyFrom(res.lens, res.nkeys);
      std::free(res.lens);
    }
    if (c->cb) c->cb();
    delete c;
  }

  struct bxps_opts Opts(int cmd, int priority, Ctx* c) const {
    struct bxps_opts o;
    std::memset(&o, 0, sizeof(o));
    o.app = app_id_;
    o.customer = customer_id_;
    o.dtype = DataType<Val>::value;
    o.cmd = cmd;
    o.priority = priority;
    o.done = &Done;
    o.arg = c;
    return o;
  }

  static struct bxps_kv KV(const Key* keys, size_t nkeys, const Val* vals, size_t nvals,
                           const int* lens, size_t nlens) {
    struct bxps_kv kv;
    std::memset(&kv, 0, sizeof(kv));
    kv.keys = keys;
    kv.nkeys = static_cast<uint32_t>(nkeys);
    kv.vals = vals;
    kv.val_bytes = nvals * sizeof(Val);
    if (nlens) {
      CHECK_EQ(nlens, nkeys) << "lens must have one length per key";
      kv.lens = reinterpret_cast<const int32_t*>(lens);
    }
    return kv;
  }

  int Check(int64_t id, Ctx* c) {
    if (id < 0) {
      /* Refused before anything was sent (keys, lengths): ps-lite aborts. */
      delete c;
      LOG(FATAL) << "request refused: " << std::strerror(static_cast<int>(-id));
    }
    return static_cast<int>(id);
  }

  int Send(int what, const Key* keys, size_t nkeys, const Val* vals, size_t nvals,
           const int* lens, size_t nlens, int cmd, int priority, Ctx* c) {
    struct bxps_opts o = Opts(cmd, priority, c);
    struct bxps_kv kv = KV(keys, nkeys, vals, nvals, lens, nlens);
    return Check(Issue(what, o, kv, c), c);
  }

  /* @kv to the servers: split by their key ranges, or by the slicer. */
  int64_t Issue(int what, const struct bxps_opts& o, const struct bxps_kv& kv, Ctx* c) {
    struct bxps* n = Postoffice::Get()->node();
    if (!slicer_) {
      if (!(what & BXPS_F_PULL_)) return bxps_push(n, &o, &kv);
      return what & BXPS_F_PUSH_ ? bxps_pushpull(n, &o, &kv) : bxps_pull(n, &o, &kv);
    }
    /* The caller's data, seen (not copied) as ps-lite's KVPairs. */
    KVPairs<Val> send;
    Key* k = const_cast<Key*>(kv.keys);
    send.keys = SArray<Key>(k, kv.nkeys);
    if (kv.vals && (what & BXPS_F_PUSH_))
      send.vals = SArray<Val>(static_cast<Val*>(const_cast<void*>(kv.vals)),
                              kv.val_bytes / sizeof(Val));
    if (kv.lens) send.lens = SArray<int>(const_cast<int*>(kv.lens), kv.nkeys);
    send.priority = o.priority;
    const std::vector<Range>& ranges = Postoffice::Get()->GetServerKeyRanges();
    c->sliced.clear();
    slicer_(send, ranges, &c->sliced);
    CHECK_LE(c->sliced.size(), ranges.size()) << "a part for each server at most";
    std::vector<struct bxps_slice> sl;
    for (size_t i = 0; i < c->sliced.size(); i++) {
      const KVPairs<Val>& p = c->sliced[i].second;
      if (!c->sliced[i].first || p.keys.empty()) continue;
      struct bxps_slice x;
      std::memset(&x, 0, sizeof(x));
      x.server = static_cast<int>(i);
      x.kv = KV(p.keys.data(), p.keys.size(), p.vals.data(), p.vals.size(),
                p.lens.empty() ? nullptr : p.lens.data(), p.lens.size());
      sl.push_back(x);
    }
    std::stable_sort(sl.begin(), sl.end(), [](const bxps_slice& a, const bxps_slice& b) {
      return a.kv.keys[0] < b.kv.keys[0];
    });
    int op = (what & BXPS_F_PUSH_ ? BXPS_OP_PUSH : 0) | (what & BXPS_F_PULL_ ? BXPS_OP_PULL : 0);
    return bxps_sliced(n, &o, op, sl.data(), static_cast<uint32_t>(sl.size()));
  }

  /* Pull or push-pull into a vector: its memory if sized, else resized. */
  int Recv(int what, const Key* keys, size_t nkeys, const Val* vals, size_t nvals,
           Val* out, size_t nout, std::vector<int>* lens, int cmd, int priority, Ctx* c) {
    struct bxps_opts o = Opts(cmd, priority, c);
    const int* want = nullptr;
    if (lens && lens->size() == nkeys && (what & BXPS_F_PULL_) && !(what & BXPS_F_PUSH_))
      want = lens->data();
    struct bxps_kv kv = KV(keys, nkeys, vals, nvals, want, want ? nkeys : 0);
    if (nout) {
      o.out = out;
      o.out_cap = nout * sizeof(Val);
      if (lens) {
        lens->resize(nkeys);
        o.out_lens = reinterpret_cast<int32_t*>(lens->data());
      }
    } else {
      c->kept = true;
    }
    return Check(Issue(what, o, kv, c), c);
  }

  int ZRecv(int what, const SArray<Key>& keys, const SArray<Val>& vals, SArray<Val>* out,
            SArray<int>* lens, int cmd, int priority, Ctx* c) {
    struct bxps_opts o = Opts(cmd, priority, c);
    const int* want = nullptr;
    if (lens && lens->size() == keys.size() && !(what & BXPS_F_PUSH_)) want = lens->data();
    struct bxps_kv kv = KV(keys.data(), keys.size(), vals.data(), vals.size(), want,
                           want ? keys.size() : 0);
    if (!out->empty()) {
      o.out = out->data();
      o.out_cap = out->size() * sizeof(Val);
      if (lens) {
        lens->resize(keys.size());
        o.out_lens = reinterpret_cast<int32_t*>(lens->data());
      }
    } else {
      c->kept = true;
    }
    return Check(Issue(what, o, kv, c), c);
  }

  int app_id_;
  int customer_id_;
  Slicer slicer_;
};

template <typename Val>
class KVServer {
 public:
  using ReqHandle =
      std::function<void(const KVMeta& req_meta, const KVPairs<Val>& req_data, KVServer* server)>;

  /* bx: @nthreads handle threads, requests split by key range. */
  explicit KVServer(int app_id, int nthreads = 1) : app_id_(app_id), nthreads_(nthreads) {}

  virtual ~KVServer() {
    if (registered_ && Postoffice::Get()->started())
      bxps_set_handler(Postoffice::Get()->node(), app_id_, nullptr, nullptr, 0);
  }

  void set_request_handle(const ReqHandle& request_handle) {
    CHECK(request_handle) << "invalid request handle";
    request_handle_ = request_handle;
    if (registered_) return;
    int ret = bxps_set_handler(Postoffice::Get()->node(), app_id_, &OnRequest, this,
                               static_cast<unsigned int>(nthreads_));
    CHECK_EQ(ret, 0) << "app " << app_id_ << " has a handler already";
    registered_ = true;
  }

  /* Answer @req (now, or later from any thread). */
  void Response(const KVMeta& req, const KVPairs<Val>& res = KVPairs<Val>()) {
    struct bxps_req r = Req(req);
    struct bxps_kv kv;
    std::memset(&kv, 0, sizeof(kv));
    kv.keys = res.keys.data();
    kv.nkeys = static_cast<uint32_t>(res.keys.size());
    kv.vals = res.vals.data();
    kv.val_bytes = res.vals.size() * sizeof(Val);
    if (!res.lens.empty()) {
      CHECK_EQ(res.lens.size(), res.keys.size());
      kv.lens = reinterpret_cast<const int32_t*>(res.lens.data());
    }
    r.dtype = DataType<Val>::value;
    bxps_respond(Postoffice::Get()->node(), &r, &kv, nullptr, 0);
  }

  /* bx: answer @req with an error (-errno): the worker's request fails. */
  void ResponseError(const KVMeta& req, int err) {
    struct bxps_req r = Req(req);
    bxps_respond_err(Postoffice::Get()->node(), &r, err);
  }

 private:
  static struct bxps_req Req(const KVMeta& m) {
    struct bxps_req r;
    std::memset(&r, 0, sizeof(r));
    r.sender = m.sender;
    r.id = m.timestamp;
    r.app = m.app_id;
    r.customer = m.customer_id;
    r.cmd = m.cmd;
    r.push = m.push;
    r.pull = m.pull;
    r.part = m.part_;
    r.dtype = m.dtype_;
    return r;
  }

  static void OnRequest(struct bxps* n, const struct bxps_req* r, void* arg) {
    KVServer* s = static_cast<KVServer*>(arg);
    KVMeta meta;
    meta.cmd = r->cmd;
    meta.push = r->push;
    meta.pull = r->pull;
    meta.sender = r->sender;
    meta.timestamp = static_cast<int>(r->id);
    meta.customer_id = r->customer;
    meta.priority = r->priority;
    meta.app_id = r->app;
    meta.part_ = r->part;
    meta.dtype_ = r->dtype;
    if (r->simple || (r->kv.val_bytes && r->dtype != DataType<Val>::value) ||
        r->kv.val_bytes % sizeof(Val)) {
      /* Not this server's kind of request: refuse it, do not guess. */
      bxps_req_release(n, r->buf);
      bxps_respond_err(n, r, -EINVAL);
      return;
    }
    void* buf = r->buf;
    std::shared_ptr<void> owner(buf, [](void* b) {
      if (Postoffice::Get()->started()) bxps_req_release(Postoffice::Get()->node(), b);
    });
    KVPairs<Val> data;
    data.keys = internal::View<Key>(owner, r->kv.keys, r->kv.nkeys);
    data.vals = internal::View<Val>(owner, r->kv.vals, r->kv.val_bytes / sizeof(Val));
    if (r->kv.lens) data.lens = internal::View<int>(owner, r->kv.lens, r->kv.nkeys);
    data.priority = r->priority;
    owner.reset();
    s->request_handle_(meta, data, s);
  }

  int app_id_;
  int nthreads_;
  bool registered_ = false;
  ReqHandle request_handle_;
};

namespace internal {
template <typename Val>
inline void Add(Val& a, const Val& b) { a += b; }
inline float Float16ToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  float f;
  if (exp == 0) {
    f = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  bits = sign | (exp == 31 ? 0x7f800000u | (man << 13) : ((exp + 112) << 23) | (man << 13));
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
template <>
inline void Add(float16& a, const float16& b) {
  /* Summed by the same rule as bxps's store (libbx/ps_wire.c). */
  float s = Float16ToFloat(a.bits) + Float16ToFloat(b.bits);
  uint32_t bits;
  std::memcpy(&bits, &s, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000u, man = bits & 0x7fffffu;
  int e = static_cast<int>((bits >> 23) & 0xff) - 112;
  if ((bits & 0x7f800000u) == 0x7f800000u || e >= 31) {
    a.bits = static_cast<uint16_t>(sign | 0x7c00u);
  } else if (e <= 0) {
    float m = (s < 0 ? -s : s) * 16777216.0f;
    uint32_t i = static_cast<uint32_t>(m);
    float frac = m - static_cast<float>(i);
    if (frac > 0.5f || (frac == 0.5f && (i & 1))) i++;
    a.bits = static_cast<uint16_t>(sign | i);
  } else {
    man |= static_cast<uint32_t>(e) << 23;
    man += 0xfffu + ((man >> 13) & 1);
    a.bits = static_cast<uint16_t>(sign | (man >> 13));
  }
}
template <>
inline void Add(bfloat16& a, const bfloat16& b) {
  uint32_t x = static_cast<uint32_t>(a.bits) << 16, y = static_cast<uint32_t>(b.bits) << 16;
  float fx, fy;
  std::memcpy(&fx, &x, 4);
  std::memcpy(&fy, &y, 4);
  fx += fy;
  std::memcpy(&x, &fx, 4);
  x += 0x7fffu + ((x >> 16) & 1);
  a.bits = static_cast<uint16_t>(x >> 16);
}
}  // namespace internal

/*
 * The default handle: pushes sum into a store (a key's first push sets
 * it), pulls read it, each key with its own length (lens, or the values
 * split evenly); a key never pushed reads as zeros of the length asked
 * (1 without lens). A length that is not the stored one is answered
 * with -EINVAL (ResponseError).
 */
template <typename Val>
struct KVServerDefaultHandle {
  void operator()(const KVMeta& req_meta, const KVPairs<Val>& req_data, KVServer<Val>* server) {
    std::lock_guard<std::mutex> lk(*mu);
    size_t n = req_data.keys.size();
    bool lens = req_data.lens.size() == n && n;
    size_t even = 0;
    if (req_meta.push && !lens) {
      if (!n || req_data.vals.size() % n) {
        if (n || req_data.vals.size()) return server->ResponseError(req_meta, -EINVAL);
      } else {
        even = req_data.vals.size() / n;
      }
    }
    if (req_meta.push) {
      size_t off = 0;
      for (size_t i = 0; i < n; ++i) {
        size_t l = lens ? static_cast<size_t>(req_data.lens[i]) : even;
        auto it = store.find(req_data.keys[i]);
        if (it != store.end() && it->second.size() != l)
          return server->ResponseError(req_meta, -EINVAL);
        off += l;
      }
      if (off != req_data.vals.size()) return server->ResponseError(req_meta, -EINVAL);
      off = 0;
      for (size_t i = 0; i < n; ++i) {
        size_t l = lens ? static_cast<size_t>(req_data.lens[i]) : even;
        std::vector<Val>& v = store[req_data.keys[i]];
        if (v.empty()) {
          v.assign(req_data.vals.data() + off, req_data.vals.data() + off + l);
        } else {
          for (size_t j = 0; j < l; ++j) internal::Add(v[j], req_data.vals[off + j]);
        }
        off += l;
      }
    }
    KVPairs<Val> res;
    if (req_meta.pull) {
      res.keys = req_data.keys;
      res.lens.resize(n);
      size_t total = 0;
      for (size_t i = 0; i < n; ++i) {
        auto it = store.find(req_data.keys[i]);
        size_t want = lens ? static_cast<size_t>(req_data.lens[i]) : 0;
        size_t l = it != store.end() ? it->second.size() : want ? want : 1;
        if (want && l != want) return server->ResponseError(req_meta, -EINVAL);
        res.lens[i] = static_cast<int>(l);
        total += l;
      }
      res.vals.resize(total);
      size_t off = 0;
      for (size_t i = 0; i < n; ++i) {
        auto it = store.find(req_data.keys[i]);
        size_t l = static_cast<size_t>(res.lens[i]);
        if (it != store.end())
          std::memcpy(res.vals.data() + off, it->second.data(), l * sizeof(Val));
        else
          std::memset(static_cast<void*>(res.vals.data() + off), 0, l * sizeof(Val));
        off += l;
      }
    }
    server->Response(req_meta, res);
  }

  std::unordered_map<Key, std::vector<Val>> store;
  std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
};

}  // namespace ps

#endif  // BX_PS_KV_APP_H_
