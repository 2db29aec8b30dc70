#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""A parameter server for a sparse-embedding model, over bx (bx.kv) or
over torch.distributed.rpc (TensorPipe over TCP), side by side.

The model: an embedding table of ROWS rows of DIM floats and a dense
layer (DIM -> CLASSES, weights and bias), all kept on NSERVERS servers
that own even ranges of the keys (rows 0 .. ROWS-1, then the dense
layer's CLASSES weight rows and its bias row). Each step, each worker
draws a deterministic batch (BATCH samples of BAG row ids and a label),
pulls the rows it needs and the dense layer, computes the loss of
mean(bag) -> linear -> cross-entropy with torch, and pushes its updates.

Updates are integers in units of 2^-8 (round(-lr * grad * 256), at
most 32 units a step): sums of them are exact in float32 in any order,
so whatever the transport and the interleaving of workers, the servers
reach the same parameters bit for bit. Workers step in lock-step (a
barrier after each push), so each step's pulls see all earlier pushes.

    # servers (one per host; --shard 0 .. NSERVERS-1)
    embedding_ps.py serve --transport bx --shard 0 --nservers 2
    embedding_ps.py serve --transport rpc --shard 0 --nservers 2 \\
        --master 192.0.2.1 --workers 1
    # the workers (processes on this host), then the final parameters
    embedding_ps.py train --transport bx --servers 192.0.2.2,192.0.2.3
    embedding_ps.py train --transport rpc --nservers 2 --master 192.0.2.1

Each worker prints a line "embedding_ps: ..." with its per-step time,
pull and push latency percentiles (microseconds) and CPU time per step;
worker 0 then pulls every parameter and prints
"embedding_ps: params sha256 HEX" (--dump FILE: and saves them, .npy).

--step-log FILE (default: $EMBEDDING_PS_STEP_LOG) also records every
step, for plots: each worker appends lines
"embedding_ps: steps transport=T worker=W from=S step_ms=A,B,..
pull_us=A,B,.. push_us=A,B,.." (STEP_LOG_CHUNK steps a line, from step
S on) to FILE, or prints them before its summary line if FILE is "-".
"""

import argparse
import hashlib
import multiprocessing as mp
import os
import resource
import signal
import sys
import threading
import time

import numpy as np

SCALE = 256.0           # updates are integers in units of 1/SCALE
MAX_UNITS = 32          # per key and step
STEP_LOG_CHUNK = 50     # steps per line of --step-log


# ---- the model's parameters ---------------------------------------------------

class Shape:
    def __init__(self, a):
        self.rows, self.dim, self.classes = a.rows, a.dim, a.classes
        if self.classes > self.dim:
            raise SystemExit("--classes must be at most --dim")
        self.keys = self.rows + self.classes + 1     # + weight rows, bias
        self.nservers = a.nservers

    def bounds(self):
        """Server s owns [b[s], b[s + 1]): bxkv's even split."""
        n, k = self.nservers, self.keys
        return [s * (k // n) + min(s, k % n) for s in range(n + 1)]

    def dense_keys(self):
        return np.arange(self.rows, self.keys, dtype=np.uint64)


def mix(x):
    """A 32-bit integer hash, elementwise (numpy uint64 arrays)."""
    x = (x ^ (x >> np.uint64(16))) * np.uint64(0x7feb352d)
    x &= np.uint64(0xffffffff)
    x = (x ^ (x >> np.uint64(15))) * np.uint64(0x846ca68b)
    x &= np.uint64(0xffffffff)
    return x ^ (x >> np.uint64(16))


def initial(keys, dim):
    """Initial values of keys: multiples of 1/SCALE in [-0.25, 0.25]."""
    k = np.asarray(keys, dtype=np.uint64)[:, None] * np.uint64(dim) + \
        np.arange(dim, dtype=np.uint64)
    return ((mix(k) % np.uint64(129)).astype(np.float32) - 64) / SCALE


def batch(step, worker, a):
    """Deterministic row ids (BATCH x BAG) and labels of a worker's step."""
    i = np.arange(a.batch * a.bag, dtype=np.uint64).reshape(a.batch, a.bag)
    seed = np.uint64((a.seed * 1000003 + step * 7919 + worker) & 0xffffffff)
    # A skewed id distribution, as embedding lookups have: low ids often.
    h = mix(i * np.uint64(2654435761) + seed)
    ids = (h % np.uint64(a.rows)) >> (h % np.uint64(3))
    labels = (ids.sum(axis=1) % np.uint64(a.classes)).astype(np.int64)
    return ids, labels


# ---- transports -------------------------------------------------------------------

class BxTransport:
    """A bx.kv worker of the servers."""

    name = "bx"

    def __init__(self, a, shape):
        from bx import kv
        self.w = kv.Worker(a.servers.split(","), key_max=shape.keys,
                           val_len=shape.dim, service=a.service,
                           timeout_ms=60000)
        self.dim = shape.dim

    def pull(self, keys):
        out = np.empty(len(keys) * self.dim, dtype=np.float32)
        self.w.pull(keys, out)
        return out.reshape(-1, self.dim)

    def push(self, keys, deltas):
        self.w.push(keys, np.ascontiguousarray(deltas, dtype=np.float32))

    def close(self):
        self.w.close()


# torch.distributed.rpc: each server process holds its range in _STORE;
# workers call these (module-level, so that RPC can name them).
_STORE = {}


def _rpc_pull(keys):
    import torch
    s = _STORE["t"]
    return s[torch.as_tensor(keys, dtype=torch.int64) - _STORE["begin"]]


def _rpc_push(keys, deltas):
    import torch
    with _STORE["lock"]:
        s = _STORE["t"]
        s.index_add_(0, torch.as_tensor(keys, dtype=torch.int64) -
                     _STORE["begin"], deltas)


class RpcTransport:
    """Keys split per server and sent at once (rpc_async), as bxkv does."""

    name = "rpc"

    def __init__(self, a, shape):
        self.b = np.array(shape.bounds(), dtype=np.uint64)
        self.dim = shape.dim

    def _split(self, keys):
        cut = np.searchsorted(keys, self.b[1:-1])
        return np.split(np.arange(len(keys)), cut)

    def pull(self, keys):
        from torch.distributed import rpc
        futs = []
        for s, idx in enumerate(self._split(keys)):
            if len(idx):
                futs.append((idx, rpc.rpc_async(
                    f"ps{s}", _rpc_pull,
                    args=(keys[idx].astype(np.int64),))))
        out = np.empty((len(keys), self.dim), dtype=np.float32)
        for idx, f in futs:
            out[idx] = f.wait().numpy()
        return out

    def push(self, keys, deltas):
        import torch
        from torch.distributed import rpc
        futs = []
        for s, idx in enumerate(self._split(keys)):
            if len(idx):
                futs.append(rpc.rpc_async(
                    f"ps{s}", _rpc_push,
                    args=(keys[idx].astype(np.int64),
                          torch.from_numpy(np.ascontiguousarray(
                              deltas[idx], dtype=np.float32)))))
        for f in futs:
            f.wait()

    def close(self):
        pass


class LocalTransport:
    """All parameters in this process (one worker): the reference."""

    name = "local"

    def __init__(self, a, shape):
        keys = np.arange(shape.keys, dtype=np.uint64)
        self.t = initial(keys, shape.dim)

    def pull(self, keys):
        return self.t[keys.astype(np.int64)].copy()

    def push(self, keys, deltas):
        np.add.at(self.t, keys.astype(np.int64), deltas)

    def close(self):
        pass


def rpc_env(a):
    os.environ.setdefault("MASTER_ADDR", a.master)
    os.environ.setdefault("MASTER_PORT", str(a.port))
    if a.ifname:
        os.environ.setdefault("TP_SOCKET_IFNAME", a.ifname)
        os.environ.setdefault("GLOO_SOCKET_IFNAME", a.ifname)


def rpc_init(a, name, rank):
    from torch.distributed import rpc
    rpc_env(a)
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=4,
                                           rpc_timeout=120,
                                           init_method=f"tcp://{a.master}:"
                                           f"{a.port}")
    rpc.init_rpc(name, rank=rank, world_size=a.nservers + a.workers,
                 rpc_backend_options=opts)


# ---- serve ----------------------------------------------------------------------------

def serve(a):
    shape = Shape(a)
    b = shape.bounds()
    begin, end = b[a.shard], b[a.shard + 1]
    init = initial(np.arange(begin, end, dtype=np.uint64), shape.dim)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if a.transport == "bx":
        from bx import kv
        with kv.Server(begin, end, shape.dim, a.service) as srv:
            np.asarray(srv.values)[:] = init
            srv.start()
            print(f"embedding_ps: serving [{begin}, {end}) ready",
                  flush=True)
            while not stop.wait(0.2):
                pass
            srv.stop()
            st = srv.stats()
        print(f"embedding_ps: served pulls {st.pulls} pushes {st.pushes} "
              f"bad {st.bad} errors {st.errors}", flush=True)
        return 0
    import torch
    from torch.distributed import rpc
    _STORE.update(t=torch.from_numpy(init), begin=begin,
                  lock=threading.Lock())
    print(f"embedding_ps: serving [{begin}, {end}) ready", flush=True)
    rpc_init(a, f"ps{a.shard}", a.workers + a.shard)
    rpc.shutdown()          # waits for every worker's shutdown
    print("embedding_ps: served", flush=True)
    return 0


# ---- train ------------------------------------------------------------------------------

def say(line):
    """One line in one write: worker processes share stdout."""
    os.write(1, (line + "\n").encode())


def pct(xs, p):
    return float(np.percentile(np.asarray(xs), p)) if xs else 0.0


def step_log(path, name, rank, steps, pulls, pushes):
    """Every step's time (ms), pull and push latency (us), as lines of
    at most STEP_LOG_CHUNK steps, into path ("-": stdout) in one write."""
    out = []
    for i in range(0, len(steps), STEP_LOG_CHUNK):
        j = i + STEP_LOG_CHUNK
        out.append(f"embedding_ps: steps transport={name} worker={rank} "
                   f"from={i} "
                   f"step_ms={','.join(f'{x:.3f}' for x in steps[i:j])} "
                   f"pull_us={','.join(f'{x:.0f}' for x in pulls[i:j])} "
                   f"push_us={','.join(f'{x:.0f}' for x in pushes[i:j])}\n")
    data = "".join(out).encode()
    if path == "-":
        os.write(1, data)
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def step_update(rows, inv, dense, labels, a):
    """The loss of a step and the integer updates of its pulled rows and
    of the dense layer."""
    import torch
    import torch.nn.functional as F
    r = torch.from_numpy(rows).requires_grad_(True)
    d = torch.from_numpy(dense).requires_grad_(True)
    x = r[torch.from_numpy(inv)].view(a.batch, a.bag, a.dim).mean(1)
    w, bias = d[:a.classes], d[a.classes, :a.classes]
    loss = F.cross_entropy(x @ w.t() + bias, torch.from_numpy(labels))
    loss.backward()

    def units(g):
        u = torch.round(-a.lr * g * SCALE).clamp_(-MAX_UNITS, MAX_UNITS)
        return (u / SCALE).numpy()
    return float(loss), units(r.grad), units(d.grad)


def worker(a, rank, barrier):
    import torch
    torch.set_num_threads(1)
    shape = Shape(a)
    if a.transport == "rpc":
        rpc_init(a, f"worker{rank}", rank)
    tp = {"bx": BxTransport, "rpc": RpcTransport,
          "local": LocalTransport}[a.transport](a, shape)
    dk = shape.dense_keys()
    pulls, pushes, steps, losses = [], [], [], []
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    for s in range(a.steps):
        t0 = time.perf_counter()
        ids, labels = batch(s, rank, a)
        uniq, inv = np.unique(ids.ravel(), return_inverse=True)
        keys = np.concatenate([uniq, dk])
        t1 = time.perf_counter()
        vals = tp.pull(keys)
        t2 = time.perf_counter()
        loss, du, dd = step_update(vals[:len(uniq)], inv,
                                   vals[len(uniq):], labels, a)
        t3 = time.perf_counter()
        tp.push(keys, np.concatenate([du, dd]))
        t4 = time.perf_counter()
        if barrier is not None:
            barrier.wait()
        pulls.append((t2 - t1) * 1e6)
        pushes.append((t4 - t3) * 1e6)
        steps.append((time.perf_counter() - t0) * 1e3)
        losses.append(loss)
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime)
    n = max(a.steps, 1)
    if a.step_log:
        step_log(a.step_log, tp.name, rank, steps, pulls, pushes)
    say(f"embedding_ps: transport={tp.name} worker={rank} steps={a.steps} "
          f"step_ms_mean={np.mean(steps):.3f} step_ms_p50={pct(steps, 50):.3f} "
          f"step_ms_p99={pct(steps, 99):.3f} "
          f"pull_us_p50={pct(pulls, 50):.0f} pull_us_p99={pct(pulls, 99):.0f} "
          f"push_us_p50={pct(pushes, 50):.0f} push_us_p99={pct(pushes, 99):.0f} "
          f"cpu_ms_per_step={cpu * 1e3 / n:.3f} "
          f"loss_first={losses[0] if losses else 0:.4f} "
          f"loss_last={losses[-1] if losses else 0:.4f}")
    rc = 0
    if rank == 0:
        allk = np.arange(shape.keys, dtype=np.uint64)
        params = np.concatenate([tp.pull(allk[i:i + 4096])
                                 for i in range(0, len(allk), 4096)])
        digest = hashlib.sha256(params.tobytes()).hexdigest()
        say(f"embedding_ps: params sha256 {digest}")
        if a.dump:
            np.save(a.dump, params)
        # Every value a multiple of 1/SCALE: the updates stayed exact.
        if not np.array_equal(params * SCALE, np.round(params * SCALE)):
            print("embedding_ps: parameters not multiples of 1/256",
                  file=sys.stderr)
            rc = 1
    tp.close()
    if a.transport == "rpc":
        from torch.distributed import rpc
        rpc.shutdown()
    return rc


def _worker_main(a, rank, barrier):
    sys.exit(worker(a, rank, barrier))


def train(a):
    if a.transport == "local" and a.workers != 1:
        raise SystemExit("--transport local: one worker")
    if a.workers == 1:
        return worker(a, 0, None)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(a.workers)
    procs = [ctx.Process(target=_worker_main, args=(a, r, barrier))
             for r in range(a.workers)]
    for p in procs:
        p.start()
    rc = 0
    for p in procs:
        p.join()
        rc |= p.exitcode != 0
    return rc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", choices=["serve", "train"])
    ap.add_argument("--transport", choices=["bx", "rpc", "local"],
                    default="bx")
    ap.add_argument("--shard", type=int, default=0, help="serve: which")
    ap.add_argument("--nservers", type=int, default=2)
    ap.add_argument("--servers", default="",
                    help="bx: the servers' addresses, shard 0 first")
    ap.add_argument("--service", type=int, default=4400, help="bx")
    ap.add_argument("--master", default="127.0.0.1",
                    help="rpc: the address of worker 0 (rank 0)")
    ap.add_argument("--port", type=int, default=29500, help="rpc")
    ap.add_argument("--ifname", default="", help="rpc: TP_SOCKET_IFNAME")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--classes", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--bag", type=int, default=4)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dump", default="", help="train: save the params")
    ap.add_argument("--step-log", metavar="FILE",
                    default=os.environ.get("EMBEDDING_PS_STEP_LOG", ""),
                    help="train: append every step's times to FILE "
                    "('-': stdout; default $EMBEDDING_PS_STEP_LOG)")
    a = ap.parse_args(argv)
    return serve(a) if a.cmd == "serve" else train(a)


if __name__ == "__main__":
    sys.exit(main())
