#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""What handing tensors and arrays to bx costs, against a memcpy of the
same bytes (a benchmark for make bench, not a test: nothing asserted).

On the host, without /dev/bx: the calls go through bx.kv and bx.Bx to a
stand-in library that does what libbx does with the values -- one
memcpy into (push) or out of (pull) its registered buffers -- and
nothing else. So a call's time is bx's Python path (key conversion,
argument checks, addresses) plus that one copy, and "ratio" is its time
over a plain memcpy of the values' bytes: 1 means the Python path costs
nothing, 2 that it costs one more memcpy (the target: at most 2).

    bench_convert.py [--values 1600000] [--dim 64] [--reps 30]

Prints lines "convert: case=NAME values=N bytes=B ms=M memcpy_ms=C
ratio=R overhead_us=O", the first one "case=memcpy": each case runs in
--reps rounds paired with a memcpy (the same moment's cache and load);
M and C are the medians, R the median of the rounds' ratios, O of the
rounds' differences (what bx's Python path adds, whatever the size).
After each line its record (tools/bench/README.md, "Records"), which
tools/bench/report.py reads: "bench-record {JSON}", bench
"bench_convert", kind "result", cell case, values, size (B) and reps,
metrics ms, memcpy_ms, ratio and overhead_us as the line has them.
"""

import argparse
import ctypes
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np                                    # noqa: E402

import bx                                              # noqa: E402
from bx import kv                                      # noqa: E402

_libc = ctypes.CDLL(None)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                       ctypes.c_int, ctypes.c_int, ctypes.c_long]


def anon(n):
    """n bytes of anonymous memory (mmap, as a region is)."""
    p = _libc.mmap(None, n, 3, 0x22, -1, 0)
    ctypes.memset(p, 1, n)              # fault the pages in, once
    return p


class CopyLib:
    """libbx's work on the values, and only that: a push copies them
    into its buffers, a pull copies them out (once each)."""

    has_kv = True

    def __init__(self, nbytes):
        self.n = nbytes
        self.buf = anon(nbytes)
        self.reg = anon(64 << 20)
        self.brk = 0

    # bx.kv.Worker
    def kv_worker_create(self, *a, **k):
        return 1

    def kv_worker_destroy(self, w):
        pass

    def kv_push(self, w, keys, n, vals, lens=0):
        ctypes.memmove(self.buf, vals, self.n)

    def kv_pull(self, w, keys, n, vals, lens=0):
        ctypes.memmove(vals, self.buf, self.n)

    def kv_last_error(self, w):
        return 0, -1

    def kv_buf_alloc(self, w, size):
        return self.alloc(size)

    def kv_buf_free(self, w, addr):
        pass

    def alloc(self, size):
        off = (self.brk + 4095) // 4096 * 4096
        self.brk = off + size
        return self.reg + off

    # bx.Bx
    def open(self):
        return 1

    def close(self, h):
        pass

    def setup(self, h, size, cq):
        pass

    def region(self, h):
        return self.reg

    def region_size(self, h):
        return 64 << 20

    def buf_alloc(self, h, size):
        return self.alloc(size)

    def buf_free(self, h, addr):
        self.brk = 0

    def push(self, h, peer, service, addr, n, timeout_ms):
        return n


def paired(fn, base, reps):
    """Medians of fn's time and base's (ms), of their ratio and of
    fn's time less base's (us), in rounds of one of each."""
    fn()
    base()                                  # warm: first-touch, caches
    tf, tb, rs, ds = [], [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        base()
        t1 = time.perf_counter()
        fn()
        t2 = time.perf_counter()
        tb.append(t1 - t0)
        tf.append(t2 - t1)
        rs.append((t2 - t1) / (t1 - t0))
        ds.append((t2 - t1) - (t1 - t0))
    m = statistics.median
    return m(tf) * 1e3, m(tb) * 1e3, m(rs), m(ds) * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--values", type=int, default=1_600_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    nkeys = a.values // a.dim
    nb = nkeys * a.dim * 4
    lib = CopyLib(nb)
    src, dst = anon(nb), anon(nb)
    def memcpy():
        ctypes.memmove(dst, src, nb)
    out = [("memcpy",) + paired(memcpy, memcpy, a.reps)]
    w = kv.Worker(["192.0.2.1"], key_max=1 << 40, val_len=a.dim, service=1,
                  lib=lib)
    keys64 = np.arange(0, nkeys * 3, 3, dtype=np.int64)
    vals = np.ones((nkeys, a.dim), dtype=np.float32)
    cases = [("push_ndarray_int64_keys", lambda: w.push(keys64, vals)),
             ("pull_ndarray_out", lambda: w.pull(keys64, vals))]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        tk = torch.from_numpy(keys64.copy())
        tv = torch.ones(nkeys, a.dim)
        reg = w.empty((nkeys, a.dim))
        strided = torch.ones(nkeys, 2 * a.dim)[:, ::2]
        cases += [("push_tensor_int64_keys", lambda: w.push(tk, tv)),
                  ("pull_tensor_out", lambda: w.pull(tk, tv)),
                  ("pull_region_tensor_out", lambda: w.pull(tk, reg)),
                  ("push_strided_tensor", lambda: w.push(tk, strided))]
        b = bx.Bx(64 << 20, lib=lib)
        flat = torch.ones(nkeys * a.dim)
        cases.append(("bx_push_tensor_outside_region",
                      lambda: b.push(1, 5, flat)))
    for name, fn in cases:
        out.append((name,) + paired(fn, memcpy, a.reps))
    for name, t, base, r, d in out:
        print(f"convert: case={name} values={nkeys * a.dim} bytes={nb} "
              f"ms={t:.3f} memcpy_ms={base:.3f} ratio={r:.2f} "
              f"overhead_us={d:.0f}", flush=True)
        rec = {"v": 1, "bench": "bench_convert", "kind": "result",
               "cell": {"case": name, "values": nkeys * a.dim, "size": nb,
                        "reps": a.reps},
               "metrics": {"ms": round(t, 3), "memcpy_ms": round(base, 3),
                           "ratio": round(r, 2), "overhead_us": round(d)}}
        print("bench-record " + json.dumps(rec, separators=(",", ":")),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
