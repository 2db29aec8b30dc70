// SPDX-License-Identifier: GPL-2.0
/*
 * Requests per second and latency of ps-lite's KVWorker over bx, written
 * against ps-lite's API: worker rank 0 runs push, pull and push-pull of
 * one key of S bytes (float values) to server 0's default handle with Q
 * requests outstanding, for D seconds per cell; the other workers only
 * meet the barriers. Launched from DMLC_* like any ps-lite program.
 * With -b B the servers hold pushes and answer B at a time (a handler that
 * replies after it returned): a cell of Q = B pushes completes only if B
 * requests are in flight at once, and then goes in rounds of Q.
 *
 *   pslite_bench [-o push,pull,pushpull] [-q 1,16,64] [-s 4,4096,...]
 *                [-d SECS] [-b B]
 *
 * One line per cell:
 *   pslite_bench: op OP outstanding Q bytes S reqs N rate R/s
 *                 p50_us A p99_us B errors E
 * and the same as a record (tools/bench/benchrec.h; tools/bench/README.md,
 * "Records"): bench "pslite_bench", kind "result", cell {op, depth, size},
 * metrics {n, ops_s, p50_us, p99_us, errors}.
 */
#include <ps/ps.h>

#include "../bench/benchrec.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace ps;
using Clock = std::chrono::steady_clock;

static std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

/* Answers pushes @batch at a time, once that many are held. */
struct BatchHandle {
  size_t batch;
  std::vector<KVMeta> held;
  void operator()(const KVMeta& meta, const KVPairs<float>& /* data */, KVServer<float>* server) {
    if (!meta.push) {
      server->Response(meta, KVPairs<float>());
      return;
    }
    held.push_back(meta);
    if (held.size() < batch) return;
    for (const KVMeta& m : held) server->Response(m, KVPairs<float>());
    held.clear();
  }
};

static void Cell(KVWorker<float>* kv, const std::string& op, int q, size_t bytes, double secs,
                 bool rounds) {
  size_t n = std::max<size_t>(bytes / sizeof(float), 1);
  SArray<Key> keys(1, 0);
  SArray<float> vals(n, 1.0f);
  std::vector<SArray<float>> outs(q, SArray<float>(n));
  std::vector<int> ts(q, -1);
  std::vector<Clock::time_point> t0(q);
  std::vector<double> lat;
  auto issue = [&](int slot) {
    t0[slot] = Clock::now();
    if (op == "push")
      ts[slot] = kv->ZPush(keys, vals);
    else if (op == "pull")
      ts[slot] = kv->ZPull(keys, &outs[slot]);
    else
      ts[slot] = kv->ZPushPull(keys, vals, &outs[slot]);
  };
  /* The key exists (a pull of it has its length) before timing. */
  if (!rounds) kv->Wait(kv->ZPush(keys, vals));
  auto start = Clock::now();
  auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
  long reqs = 0;
  int errors = 0;
  auto done = [&](int slot) {
    errors += kv->Wait(ts[slot]) != 0;
    ts[slot] = -1;
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0[slot]).count());
    ++reqs;
  };
  if (rounds) {
    /* All Q issued, all Q answered, again until the time is up. */
    do {
      for (int i = 0; i < q; ++i) issue(i);
      for (int i = 0; i < q; ++i) done(i);
    } while (Clock::now() < end);
  } else {
    for (int i = 0; i < q; ++i) issue(i);
    for (int slot = 0;; slot = (slot + 1) % q) {
      done(slot);
      if (Clock::now() < end) {
        issue(slot);
        continue;
      }
      bool any = false;
      for (int t : ts) any |= t >= 0;
      if (!any) break;
    }
  }
  double el = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(lat.begin(), lat.end());
  std::printf(
      "pslite_bench: op %s outstanding %d bytes %zu reqs %ld rate %.0f/s p50_us %.0f p99_us %.0f "
      "errors %d\n",
      op.c_str(), q, bytes, reqs, reqs / el, lat[lat.size() / 2], lat[lat.size() * 99 / 100],
      errors);
  struct benchrec r;
  benchrec_begin(&r, stdout, "pslite_bench", "result");
  benchrec_str(&r, "op", op.c_str());
  benchrec_int(&r, "depth", q);
  benchrec_uint(&r, "size", bytes);
  benchrec_metrics(&r);
  benchrec_int(&r, "n", reqs);
  benchrec_num(&r, "ops_s", "%.0f", reqs / el);
  benchrec_num(&r, "p50_us", "%.0f", lat[lat.size() / 2]);
  benchrec_num(&r, "p99_us", "%.0f", lat[lat.size() * 99 / 100]);
  benchrec_int(&r, "errors", errors);
  benchrec_end(&r);
}

int main(int argc, char** argv) {
  std::string ops = "push,pull,pushpull", qs = "1,16,64", sizes = "4,4096,65536,1048576";
  double secs = 3;
  int c, batch = 0;
  while ((c = getopt(argc, argv, "o:q:s:d:b:")) != -1) {
    switch (c) {
      case 'o': ops = optarg; break;
      case 'q': qs = optarg; break;
      case 's': sizes = optarg; break;
      case 'd': secs = std::atof(optarg); break;
      case 'b': batch = std::atoi(optarg); break;
      default: return 2;
    }
  }
  Start(0);
  KVServer<float>* server = nullptr;
  if (IsServer()) {
    server = new KVServer<float>(0);
    if (batch > 0)
      server->set_request_handle(BatchHandle{static_cast<size_t>(batch), {}});
    else
      server->set_request_handle(KVServerDefaultHandle<float>());
  }
  RegisterExitCallback([server]() { delete server; });
  if (IsWorker() && MyRank() == 0) {
    KVWorker<float> kv(0, 0);
    for (const std::string& op : Split(ops))
      for (const std::string& q : Split(qs))
        for (const std::string& s : Split(sizes))
          Cell(&kv, op, std::atoi(q.c_str()), std::strtoul(s.c_str(), nullptr, 10), secs,
               batch > 0);
  }
  Finalize(0, true);
  return 0;
}
