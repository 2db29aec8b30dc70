// SPDX-License-Identifier: GPL-2.0
/*
 * A program written against ps-lite's public API (its documentation and
 * headers' names), built against bx's <ps/ps.h> and launched like
 * ps-lite's programs: one scheduler, servers and workers from DMLC_*.
 * selftests/bx/pslite.sh runs it across four guests.
 *
 *   pslite_test main   every worker, in turn:
 *     push_pull  1000 keys over all servers, 3 rounds pushed from two
 *                threads with 16 requests outstanding each (callbacks
 *                counted), then pulled: every sum exact
 *     lens       ZPush of region SArrays with a length per key (1..3),
 *                sent without a copy (bxps's counters), ZPull: lengths
 *                and sums exact
 *     pushpull   PushPull answers at least this worker's push
 *     aggregate  a custom handle that answers a round's pushes only when
 *                every worker pushed; cmd and priority reach it
 *     types      int64 and half values summed exactly
 *     simple     SimpleApp request to the server group, every server
 *                answers with its rank
 *     slicer     set_slicer sends every key to the server after its
 *                owner: pulled through it, the sums; by key range, zeros;
 *                bxps_sliced refuses a server out of range, an unknown
 *                op, descending keys and an empty slice (-EINVAL)
 *     badlen     (worker 0) a push whose length is not the stored one
 *                fails with the error of the server that owns the key
 *   pslite_test kill   workers keep requests in flight to both servers
 *                while server 1 is killed: its requests fail with rank 1,
 *                server 0's go on; worker 1 pushes on for 3 s more, which
 *                the final barrier (with server 1's arrival from before
 *                its death) must wait for
 *
 * A worker prints "pslite: ok CASE" or "pslite: FAIL CASE: why" and
 * exits non-zero if any case failed.
 */
#include <ps/ps.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

using namespace ps;

static int failed;

#define EXPECT(cond, what)                                                    \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::printf("pslite: FAIL %s: %s (%s:%d)\n", what, #cond, __FILE__, __LINE__); \
      std::fflush(stdout);                                                    \
      ++failed;                                                               \
      return;                                                                 \
    }                                                                         \
  } while (0)

static void ok(const char* what) {
  std::printf("pslite: ok %s (rank %d)\n", what, MyRank());
  std::fflush(stdout);
}

/* Key i of n, spread over the whole key space (so over every server). */
static Key spread(int i, int n, int lane) {
  return (kMaxKey / 4 / n) * 4 * static_cast<Key>(i) + static_cast<Key>(lane);
}

static void WorkersBarrier() { Postoffice::Get()->Barrier(0, kWorkerGroup); }

static void PushPull(KVWorker<float>* kv) {
  const int n = 1000, rounds = 3, per_thread = 16;
  std::vector<Key> keys(n);
  std::vector<float> vals(n);
  for (int i = 0; i < n; ++i) {
    keys[i] = spread(i, n, 0);
    vals[i] = static_cast<float>(i + 1);
  }
  std::atomic<int> callbacks(0);
  auto pusher = [&](int t) {
    for (int r = t; r < rounds; r += 2) {
      std::vector<int> ts;
      /* 16 outstanding: each push of one key in 16 slices. */
      for (int s = 0; s < per_thread; ++s) {
        std::vector<Key> k;
        std::vector<float> v;
        for (int i = s; i < n; i += per_thread) {
          k.push_back(keys[i]);
          v.push_back(vals[i]);
        }
        ts.push_back(kv->Push(k, v, {}, 0, [&callbacks]() { ++callbacks; }));
      }
      for (int t2 : ts) kv->Wait(t2);
    }
  };
  std::thread a(pusher, 0), b(pusher, 1);
  a.join();
  b.join();
  EXPECT(callbacks == per_thread * rounds, "push_pull");
  WorkersBarrier();
  std::vector<float> got;
  int st = kv->Wait(kv->Pull(keys, &got));
  EXPECT(st == 0, "push_pull");
  EXPECT(got.size() == static_cast<size_t>(n), "push_pull");
  for (int i = 0; i < n; ++i)
    EXPECT(got[i] == vals[i] * rounds * NumWorkers(), "push_pull");
  /* Into a sized vector (its own memory). */
  std::vector<float> into(n, -1);
  EXPECT(kv->Wait(kv->Pull(keys, &into)) == 0, "push_pull");
  for (int i = 0; i < n; ++i) EXPECT(into[i] == got[i], "push_pull");
  WorkersBarrier();
  ok("push_pull");
}

static void Lens(KVWorker<float>* kv) {
  const int n = 300;
  SArray<Key> keys(n);
  SArray<int> lens(n);
  int total = 0;
  for (int i = 0; i < n; ++i) {
    keys[i] = spread(i, n, 1);
    lens[i] = 1 + i % 3;
    total += lens[i];
  }
  SArray<float> vals(total);
  for (int i = 0, off = 0; i < n; ++i)
    for (int j = 0; j < lens[i]; ++j) vals[off++] = static_cast<float>(i * 10 + j);
  struct bxps_stats before, after;
  bxps_stats(Postoffice::Get()->node(), &before);
  EXPECT(kv->Wait(kv->ZPush(keys, vals, lens)) == 0, "lens");
  bxps_stats(Postoffice::Get()->node(), &after);
  /* Keys, lengths and values went from the region as they were. */
  EXPECT(after.zero_copy - before.zero_copy >= static_cast<uint64_t>(total) * 4 + n * 8,
         "lens");
  WorkersBarrier();
  SArray<float> got;
  SArray<int> got_lens;
  EXPECT(kv->Wait(kv->ZPull(keys, &got, &got_lens)) == 0, "lens");
  EXPECT(got.size() == static_cast<size_t>(total), "lens");
  EXPECT(got_lens.size() == static_cast<size_t>(n), "lens");
  for (int i = 0, off = 0; i < n; ++i) {
    EXPECT(got_lens[i] == lens[i], "lens");
    for (int j = 0; j < lens[i]; ++j, ++off)
      EXPECT(got[off] == vals[off] * NumWorkers(), "lens");
  }
  WorkersBarrier();
  ok("lens");
}

static void PushPullOnce(KVWorker<float>* kv) {
  const int n = 64;
  std::vector<Key> keys(n);
  std::vector<float> vals(2 * n, 1), outs;
  std::vector<int> lens;
  for (int i = 0; i < n; ++i) keys[i] = spread(i, n, 2);
  EXPECT(kv->Wait(kv->PushPull(keys, vals, &outs, &lens)) == 0, "pushpull");
  EXPECT(outs.size() == static_cast<size_t>(2 * n), "pushpull");
  EXPECT(lens.size() == static_cast<size_t>(n) && lens[0] == 2, "pushpull");
  for (float v : outs) EXPECT(v >= 1 && v <= NumWorkers(), "pushpull");
  WorkersBarrier();
  EXPECT(kv->Wait(kv->Pull(keys, &outs)) == 0, "pushpull");
  for (float v : outs) EXPECT(v == NumWorkers(), "pushpull");
  WorkersBarrier();
  ok("pushpull");
}

/*
 * The aggregating server of app 1: a round's pushes are held until all
 * workers pushed, then summed into the store and all answered at once.
 * A pull answers the store; cmd 7 on pushes, priority 3, or an error.
 */
struct Aggregator {
  struct State {
    std::mutex mu;
    std::vector<KVMeta> held;
    std::vector<float> sum;
    std::vector<float> store;
  };
  std::shared_ptr<State> st = std::make_shared<State>();
  void operator()(const KVMeta& meta, const KVPairs<float>& data, KVServer<float>* server) {
    std::lock_guard<std::mutex> lk(st->mu);
    std::vector<KVMeta>& held = st->held;
    std::vector<float>& sum = st->sum;
    std::vector<float>& store = st->store;
    if (meta.pull) {
      KVPairs<float> res;
      res.keys = data.keys;
      res.vals.resize(data.keys.size());
      for (size_t i = 0; i < data.keys.size(); ++i)
        res.vals[i] = i < store.size() ? store[i] : 0;
      server->Response(meta, res);
      return;
    }
    if (meta.cmd != 7 || meta.priority != 3) return server->ResponseError(meta, -EPROTO);
    if (sum.empty()) sum.assign(data.vals.size(), 0);
    for (size_t i = 0; i < data.vals.size() && i < sum.size(); ++i) sum[i] += data.vals[i];
    held.push_back(meta);
    if (held.size() < static_cast<size_t>(NumWorkers())) return;
    store = sum;
    sum.clear();
    for (const KVMeta& m : held) server->Response(m);
    held.clear();
  }
};

static void Aggregate() {
  KVWorker<float> kv(1, 0);
  /* Keys of server 0 only: one aggregator sees every worker. */
  std::vector<Key> keys = {1, 2, 3};
  std::vector<float> vals = {1, 2, 3};
  for (int round = 1; round <= 3; ++round) {
    int ts = kv.Push(keys, vals, {}, 7, nullptr, 3);
    EXPECT(kv.Wait(ts) == 0, "aggregate");
    /* Answered only after every worker pushed this round. */
    std::vector<float> got;
    EXPECT(kv.Wait(kv.Pull(keys, &got)) == 0, "aggregate");
    for (size_t i = 0; i < keys.size(); ++i)
      EXPECT(got[i] == vals[i] * NumWorkers(), "aggregate");
    WorkersBarrier();
  }
  /* Another cmd is refused by the handle: the request fails. */
  if (MyRank() == 0) {
    int rank = -2;
    int ts = kv.Push(keys, vals, {}, 8, nullptr, 3);
    EXPECT(kv.Wait(ts) == -EPROTO, "aggregate");
    kv.Status(ts, &rank);
    EXPECT(rank == 0, "aggregate");
  }
  WorkersBarrier();
  ok("aggregate");
}

static void Types() {
  KVWorker<int64_t> k64(2, 0);
  KVWorker<float16> k16(3, 0);
  std::vector<Key> keys = {spread(0, 2, 3), spread(1, 2, 3)};
  std::vector<int64_t> big = {(1ll << 40) + MyRank(), -(1ll << 41)};
  EXPECT(k64.Wait(k64.Push(keys, big)) == 0, "types");
  std::vector<float16> half(2);
  half[0].bits = 0x3c00;  // 1.0
  half[1].bits = 0xb800;  // -0.5
  EXPECT(k16.Wait(k16.Push(keys, half)) == 0, "types");
  WorkersBarrier();
  std::vector<int64_t> got;
  EXPECT(k64.Wait(k64.Pull(keys, &got)) == 0, "types");
  int64_t w = NumWorkers(), ranks = w * (w - 1) / 2;
  EXPECT(got.size() == 2 && got[0] == (1ll << 40) * w + ranks && got[1] == -(1ll << 41) * w,
         "types");
  std::vector<float16> hgot;
  EXPECT(k16.Wait(k16.Pull(keys, &hgot)) == 0, "types");
  float h0 = internal::Float16ToFloat(hgot[0].bits), h1 = internal::Float16ToFloat(hgot[1].bits);
  EXPECT(h0 == static_cast<float>(w) && h1 == -0.5f * static_cast<float>(w), "types");
  WorkersBarrier();
  ok("types");
}

static void Simple(SimpleApp* app, std::vector<std::string>* answers, std::mutex* mu) {
  {
    std::lock_guard<std::mutex> lk(*mu);
    answers->clear();
  }
  int ts = app->Request(5, "ping", kServerGroup);
  EXPECT(app->Wait(ts) == 0, "simple");
  std::lock_guard<std::mutex> lk(*mu);
  EXPECT(answers->size() == static_cast<size_t>(NumServers()), "simple");
  for (int r = 0; r < NumServers(); ++r) {
    bool found = false;
    for (const std::string& s : *answers) found |= s == "pong" + std::to_string(r);
    EXPECT(found, "simple");
  }
  ok("simple");
}

/* ps-lite's set_slicer: every key to the server after the one owning it. */
static void NextServer(const KVPairs<float>& send, const std::vector<Range>& ranges,
                       KVWorker<float>::SlicedKVs* sliced) {
  size_t S = ranges.size(), n = send.keys.size();
  size_t per = n ? send.vals.size() / n : 0;
  sliced->assign(S, std::make_pair(false, KVPairs<float>()));
  for (size_t i = 0; i < n; ++i) {
    Key k = send.keys[i];
    size_t owner = 0;
    while (owner + 1 < S && k >= ranges[owner].end()) ++owner;
    auto& to = (*sliced)[(owner + 1) % S];
    to.first = true;
    to.second.keys.push_back(k);
    for (size_t j = 0; j < per; ++j) to.second.vals.push_back(send.vals[i * per + j]);
  }
}

static void Slicer() {
  const int n = 64;
  KVWorker<float> sliced(0, 0), plain(0, 0);
  sliced.set_slicer(NextServer);
  std::vector<Key> keys(n);
  std::vector<float> ones(n, 1.0f);
  for (int i = 0; i < n; ++i) keys[i] = spread(i, n, 5);
  EXPECT(sliced.Wait(sliced.Push(keys, ones)) == 0, "slicer");
  WorkersBarrier();
  /* Through the slicer: every worker's push, summed. */
  std::vector<float> got;
  EXPECT(sliced.Wait(sliced.Pull(keys, &got)) == 0 && got.size() == keys.size(), "slicer");
  for (int i = 0; i < n; ++i) EXPECT(got[i] == static_cast<float>(NumWorkers()), "slicer");
  /* By key range: the owners never saw these keys (they answer 0). */
  std::vector<float> owners;
  EXPECT(plain.Wait(plain.Pull(keys, &owners)) == 0 && owners.size() == keys.size(),
         "slicer");
  for (int i = 0; i < n; ++i) EXPECT(owners[i] == 0.0f, "slicer");
  /* Slices refused before anything is sent. */
  struct bxps* node = Postoffice::Get()->node();
  struct bxps_opts o;
  std::memset(&o, 0, sizeof(o));
  o.dtype = BXPS_F32;
  uint64_t k2[2] = {5, 3};
  float v2[2] = {1, 1};
  struct bxps_slice bad;
  std::memset(&bad, 0, sizeof(bad));
  bad.server = NumServers();  // no such server
  bad.kv.keys = k2;
  bad.kv.nkeys = 1;
  bad.kv.vals = v2;
  bad.kv.val_bytes = sizeof(float);
  EXPECT(bxps_sliced(node, &o, BXPS_OP_PUSH, &bad, 1) == -EINVAL, "slicer");
  bad.server = 0;
  EXPECT(bxps_sliced(node, &o, 8, &bad, 1) == -EINVAL, "slicer");  // no such op
  bad.kv.nkeys = 2;  // descending
  bad.kv.val_bytes = 2 * sizeof(float);
  EXPECT(bxps_sliced(node, &o, BXPS_OP_PUSH, &bad, 1) == -EINVAL, "slicer");
  bad.kv.nkeys = 0;  // empty
  bad.kv.val_bytes = 0;
  EXPECT(bxps_sliced(node, &o, BXPS_OP_PULL, &bad, 1) == -EINVAL, "slicer");
  WorkersBarrier();
  ok("slicer");
}

static void BadLen(KVWorker<float>* kv) {
  if (MyRank() == 0) {
    Key key = spread(1, 2, 4);  // the last server's
    std::vector<Key> keys = {key};
    std::vector<float> two = {1, 2}, three = {1, 2, 3};
    EXPECT(kv->Wait(kv->Push(keys, two, {2})) == 0, "badlen");
    int ts = kv->Push(keys, three, {3});
    int rank = -2;
    EXPECT(kv->Wait(ts) == -EINVAL, "badlen");
    EXPECT(kv->Status(ts, &rank) == -EINVAL && rank == NumServers() - 1, "badlen");
    /* A pull expecting the wrong length is refused too. */
    std::vector<float> out;
    std::vector<int> lens = {5};
    EXPECT(kv->Wait(kv->Pull(keys, &out, &lens)) == -EINVAL, "badlen");
    /* And the right one still works. */
    lens = {2};
    EXPECT(kv->Wait(kv->Pull(keys, &out, &lens)) == 0 && out.size() == 2 && out[1] == 2,
           "badlen");
  }
  WorkersBarrier();
  ok("badlen");
}

static void Kill(KVWorker<float>* kv) {
  Key k0 = 5, k1 = kMaxKey - 5;  // server 0's, and the last server's
  int ok0 = 0, ok0_after = 0, fail1 = 0, bad = 0;
  std::vector<int> t0, t1;
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
    /* Eight in flight to each server. */
    while (t1.size() < 8) t1.push_back(kv->Push({k1}, {1}));
    while (t0.size() < 8) t0.push_back(kv->Push({k0}, {1}));
    int st = kv->Wait(t1.front()), rank = -2;
    kv->Status(t1.front(), &rank);
    t1.erase(t1.begin());
    if (st) {
      fail1++;
      if (rank != NumServers() - 1) {
        bad++;
        std::printf("pslite: kill: last server's request: %d from rank %d\n", st, rank);
      }
    }
    st = kv->Wait(t0.front());
    kv->Status(t0.front(), &rank);
    t0.erase(t0.begin());
    if (st == 0) {
      ok0++;
      ok0_after += fail1 > 0;
    } else {
      bad++;
      std::printf("pslite: kill: server 0's request: %d from rank %d\n", st, rank);
    }
    if (fail1 >= 16 && ok0_after >= 16) break;
  }
  for (int t : t0) bad += kv->Wait(t) != 0;
  for (int t : t1) kv->Wait(t);
  /*
   * Worker 1 goes on for a while: the other worker, server 0 and the
   * scheduler are at the final barrier, with the killed server's arrival
   * from before its death; the barrier must wait for this worker.
   */
  if (MyRank() == 1) {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < end) {
      int st = kv->Wait(kv->Push({k0}, {1}));
      if (st) {
        bad++;
        std::printf("pslite: kill: server 0's late request: %d\n", st);
      } else {
        ok0_after++;
      }
    }
  }
  std::printf("pslite: kill: server 0 ok %d (%d after), last server failed %d, wrong %d\n", ok0,
              ok0_after, fail1, bad);
  EXPECT(fail1 >= 16 && ok0_after >= 16 && bad == 0, "kill");
  ok("kill");
}

/* A crash says where, for the test's log (addr2line reads the offsets). */
static void on_crash(int sig) {
  void* frames[32];
  int n = backtrace(frames, 32);
  dprintf(2, "pslite: signal %d, backtrace:\n", sig);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Stopped by the test's timeout: say what this node sent and answered. */
static struct bxps* g_node;
static void on_term(int sig) {
  struct bxps_stats st;
  if (g_node) {
    bxps_stats(g_node, &st);
    dprintf(2, "pslite: signal %d: requests %llu responses %llu handled %llu retries %llu bad %llu errors %llu\n",
            sig, (unsigned long long)st.requests, (unsigned long long)st.responses,
            (unsigned long long)st.handled, (unsigned long long)st.retries,
            (unsigned long long)st.bad, (unsigned long long)st.errors);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "main";
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGABRT, on_crash);
  Start(0);
  g_node = Postoffice::Get()->node();
  signal(SIGTERM, on_term);
  KVServer<float>* s0 = nullptr;
  KVServer<float>* s1 = nullptr;
  KVServer<int64_t>* s2 = nullptr;
  KVServer<float16>* s3 = nullptr;
  if (IsServer()) {
    /* Two handle threads, requests split by key range. */
    s0 = new KVServer<float>(0, 2);
    s0->set_request_handle(KVServerDefaultHandle<float>());
    s1 = new KVServer<float>(1);
    s1->set_request_handle(Aggregator());
    s2 = new KVServer<int64_t>(2);
    s2->set_request_handle(KVServerDefaultHandle<int64_t>());
    s3 = new KVServer<float16>(3);
    s3->set_request_handle(KVServerDefaultHandle<float16>());
    std::printf("pslite: server %d up (pid %d)\n", MyRank(), static_cast<int>(getpid()));
    std::fflush(stdout);
  }
  RegisterExitCallback([s0, s1, s2, s3]() {
    delete s0;
    delete s1;
    delete s2;
    delete s3;
  });
  std::mutex mu;
  std::vector<std::string> answers;
  SimpleApp app(9, 0);
  app.set_request_handle([](const SimpleData& req, SimpleApp* a) {
    a->Response(req, req.head == 5 ? "pong" + std::to_string(MyRank()) : "?");
  });
  app.set_response_handle([&](const SimpleData& res, SimpleApp*) {
    std::lock_guard<std::mutex> lk(mu);
    answers.push_back(res.body);
  });
  if (IsWorker()) {
    KVWorker<float> kv(0, 0);
    if (mode == "kill") {
      Kill(&kv);
    } else {
      PushPull(&kv);
      Lens(&kv);
      PushPullOnce(&kv);
      Aggregate();
      Types();
      Simple(&app, &answers, &mu);
      Slicer();
      BadLen(&kv);
    }
  }
  Finalize(0, true);
  if (IsWorker()) std::printf("pslite: worker %s\n", failed ? "FAILED" : "done");
  return failed ? 1 : 0;
}
