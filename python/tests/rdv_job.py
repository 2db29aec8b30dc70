#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""One process of a bx.kv job started by torchrun (test_rendezvous.py on
the host, over the fake library; selftests/bx/python.sh's rdv case in
three guests, over bx): the last --nservers ranks serve a part of the
keys each, the others are workers. They meet through torch.distributed's
store (bx.torch.rendezvous()); each worker pushes ones to every key it
is given, the workers meet, each pulls and checks the sums, and says it
is done; a server stops once all are. Prints "rdv_job: rank R of N ROLE
ok" (with the real library, the servers' counters too)."""

import argparse
import os
import sys



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nservers", type=int, default=2)
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=8)
    ap.add_argument("--service", type=int, default=4600)
    ap.add_argument("--fake", action="store_true", default=None,
                    help="the fake library (default: without /dev/bx)")
    a = ap.parse_args()
    import torch
    import bx.torch as bxt
    lib = None
    if a.fake or (a.fake is None and not os.path.exists("/dev/bx")):
        from fakelib import FakeKV
        lib = FakeKV()
    rank, world = bxt.rank(), bxt.world_size()
    nworkers = world - a.nservers
    rdv = bxt.rendezvous(prefix="rdv_job", timeout=300)
    if rank >= nworkers:
        s = rank - nworkers
        srv = rdv.serve(s, a.nservers, key_max=a.keys, val_len=a.dim,
                        service=a.service, lib=lib)
        rdv.wait_done(nworkers, timeout=600)
        st = srv.stats()
        srv.close()
        print(f"rdv_job: rank {rank} of {world} server ok: server {s} "
              f"[{srv.begin}, {srv.end}) at {srv.bx_info.addr} "
              f"pushes {st.pushes} bad {st.bad} errors {st.errors}",
              flush=True)
        return 0
    w = rdv.worker(a.nservers, lib=lib, timeout_ms=60000)
    # Every worker the same keys, spread over all servers: int64 as
    # torch indexes, through a region-backed tensor. (The fake library's
    # servers live in their own processes: no calls then.)
    keys = torch.arange(rank % 7, a.keys, 97, dtype=torch.int64)
    if lib is None:
        w.push(keys, torch.ones(len(keys), a.dim))
    rdv.barrier("pushed", nworkers)
    out = w.empty((len(keys), a.dim))
    if lib is None:
        w.pull(keys, out)
    rdv.barrier("pulled", nworkers)
    if lib is None:
        # Each worker's keys start at its rank % 7: the keys of the
        # workers of the same rank % 7 got one push each.
        same = sum(1 for r in range(nworkers) if r % 7 == rank % 7)
        if not bool((out == same).all()):
            print(f"rdv_job: rank {rank}: sums {out.unique()} not {same}",
                  flush=True)
            return 1
    w.close()
    rdv.done()
    print(f"rdv_job: rank {rank} of {world} worker ok: {len(keys)} keys "
          f"over {w.servers}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
