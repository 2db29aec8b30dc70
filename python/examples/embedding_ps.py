#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""A parameter server for a sparse-embedding model, over bx (bx.kv) and
over torch.distributed.rpc pinned to each of TensorPipe's transports,
side by side, launched by torchrun.

The model: an embedding table of ROWS rows of DIM floats (default 1 M x
64) and a dense layer (DIM -> CLASSES, weights and bias), all kept on
NSERVERS servers. Rows are placed by a permutation of their ids (key =
id * A mod ROWS, A coprime to ROWS), so that the hot low ids of the
skewed batches spread over all servers' even key ranges; the dense
layer's CLASSES weight rows and its bias row follow as keys ROWS ..
ROWS + CLASSES. Each step, each worker draws a deterministic batch
(BATCH samples of BAG row ids and a label), pulls the rows it needs and
the dense layer, computes the loss of mean(bag) -> linear ->
cross-entropy with torch, and pushes its updates (as tensors: int64
keys, float32 values; over bx into and out of region-backed tensors).

Updates are integers in units of 2^-8 (round(-lr * grad * 256), at most
32 units a step), summed by the servers as they arrive: sums of them
are exact in float32 in any order. In lock-step (the default) the
workers meet after their pulls and after their pushes, so each step's
pulls see exactly the earlier steps' pushes, and every transport reaches
the same parameters bit for bit, as does the one-process reference
(--transport local); each server hashes its shard, and worker 0 prints
"embedding_ps: transport=T params sha256 HEX" (the sha256 of the
shards' sha256s). --free lets the workers run without meeting
(Hogwild-style; the parameters then depend on the interleaving).

Launch: every process by torchrun (or any launcher that sets
MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE); the last NSERVERS ranks
serve, the others are workers; all find each other through
torch.distributed's store (bx.torch.rendezvous(): the servers publish
their address, service and key range, the workers read them, barriers
and shutdown go through the store too)::

    # three hosts: workers on the first, a server on each other
    torchrun --nnodes 3 --node_rank 0 --nproc_per_node 2 \\
        --master_addr 192.0.2.1 --master_port 29500 \\
        embedding_ps.py --nservers 2 --transport bx,rpc-uv,rpc-ibv
    torchrun --nnodes 3 --node_rank 1 --nproc_per_node 1 ... (same)
    torchrun --nnodes 3 --node_rank 2 --nproc_per_node 1 ... (same)
    # the reference, one process
    embedding_ps.py --transport local --workers 2

(torch 1.13's torchrun on Python 3.11 needs --redirects 1 --tee 1:
its default, 0, fails.) --transport takes a list, run one after the
other in the same processes (torch is imported once):

bx        bx.kv over /dev/bx: RDMA over the host's rxe device, one shared
          connection per peer host; the servers are libbx's C serving
          thread (bxkv), the worker's pull lands in its region.
rpc-uv    torch.distributed.rpc, TensorPipe pinned to its uv transport
          (TCP) and basic channel; the servers are Python functions.
rpc-ibv   the same pinned to TensorPipe's ibv transport (RDMA verbs on
          the host's device); "unavailable: WHY" when a process has no
          device or libibverbs.
local     the one-process reference (--workers simulated in lock-step).

Each worker prints "embedding_ps: transport=T worker=R ..." with its
step time, pull and push latency percentiles (microseconds) and CPU
time per step; worker 0 also "embedding_ps: transport=T servers ..."
with the servers' process CPU and their hosts' CPU per step (measured
on the servers, over the training steps only), the keys each served
(the balance), and the RDMA packets and TCP segments their hosts sent
meanwhile (what the transport really ran on). --step-log FILE (default
$EMBEDDING_PS_STEP_LOG) records every step: lines "embedding_ps: steps
transport=T worker=W from=S step_ms=A,B,.. pull_us=A,B,.. push_us=..."
(STEP_LOG_CHUNK steps a line), or printed before the summary if FILE is
"-". Worker 0 says "embedding_ps: progress transport=T step S of N"
every --progress seconds (10).

--records follows each of these lines of figures (and "run", "params"
and "unavailable") with its record, a line "bench-record {JSON}" in
the format of tools/bench/README.md ("Records"; bench "embedding_ps"),
which tools/bench/report.py reads: the same figures, as numbers; the
"run" record also has the release of the kernel the worker runs on
("kernel", as uname -r says it).

--overlap on issues step n + 1's pull before step n's push and waits
for both at once (bx.kv's push_async and pull_async; RPC's rpc_async):
the pull may or may not see the other workers' step n, so the workers
do not meet each step and the parameters depend on the interleaving (as
with --free).

--mode sync aggregates synchronously: the servers keep a step's pushes
(bx: a bx.kv handler called once per push request, with arrays; RPC:
the push function) and, once every worker pushed, apply their mean,
rounded to whole units, before any worker pulls the next step. The
workers and servers meet through the store after the pushes and after
the apply. Every transport reaches the reference's parameters in this
mode too (--transport local --mode sync).
A transport of the list may name its own mode, T:sync, T:async or
T:overlap (async with --overlap on), e.g. --transport
bx,rpc-uv,bx:sync,rpc-uv:sync (both modes in one launch) or
bx,bx:overlap (lock-step against overlap); its lines then say
transport=T:MODE.
"""

import argparse
import ctypes
import glob
import hashlib
import json
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
INIT_CHUNK = 65536      # keys per piece of the initial values
TRANSPORTS = ("bx", "rpc-uv", "rpc-ibv", "local")

WHAT = {
    "bx": "bx.kv over /dev/bx (RDMA RC over the host's rxe/RoCE device, "
          "one shared connection per peer host); servers: libbx's bxkv "
          "serving thread (C); worker pulls land in region-backed tensors",
    "rpc-uv": "torch.distributed.rpc, TensorPipe pinned to transport uv "
              "(TCP) and channel basic; servers: Python functions (GIL)",
    "rpc-ibv": "torch.distributed.rpc, TensorPipe pinned to transport ibv "
               "(RDMA verbs, RC over the host's rxe/RoCE device) and "
               "channel basic; servers: Python functions (GIL)",
    "local": "the one-process reference (no network)",
}


# ---- the model's parameters -------------------------------------------------------

class Shape:
    def __init__(self, a):
        self.rows, self.dim, self.classes = a.rows, a.dim, a.classes
        if self.classes > self.dim:
            raise SystemExit("--classes must be at most --dim")
        self.keys = self.rows + self.classes + 1     # + weight rows, bias
        self.nservers = a.nservers
        # The permutation of row ids: key = id * mult mod rows.
        m = max(1, int(self.rows * 0.6180339887))
        while np.gcd(m, self.rows) != 1:
            m += 1
        self.mult = np.uint64(m)

    def bounds(self):
        """Server s owns [b[s], b[s + 1]): bxkv's even split."""
        n, k = self.nservers, self.keys
        return [s * (k // n) + min(s, k % n) for s in range(n + 1)]

    def row_keys(self, ids):
        """The keys of row ids (uint64 arrays): a permutation of [0,
        rows), so that the hot ids spread over the servers."""
        return (ids * self.mult) % np.uint64(self.rows)

    def dense_keys(self):
        return np.arange(self.rows, self.keys, dtype=np.uint64)


def mix(x):
    """A 32-bit integer hash, elementwise (numpy uint64 arrays)."""
    x = (x ^ (x >> np.uint64(16))) * np.uint64(0x7feb352d)
    x &= np.uint64(0xffffffff)
    x = (x ^ (x >> np.uint64(15))) * np.uint64(0x846ca68b)
    x &= np.uint64(0xffffffff)
    return x ^ (x >> np.uint64(16))


def initial(begin, end, dim):
    """Initial values of keys [begin, end): multiples of 1/SCALE in
    [-0.25, 0.25]."""
    k = np.arange(begin, end, dtype=np.uint64)[:, None] * np.uint64(dim) + \
        np.arange(dim, dtype=np.uint64)
    return ((mix(k) % np.uint64(129)).astype(np.float32) - 64) / SCALE


def fill_initial(store, begin, dim):
    """store[i] = the initial values of key begin + i, piece by piece."""
    for i in range(0, len(store), INIT_CHUNK):
        j = min(i + INIT_CHUNK, len(store))
        store[i:j] = initial(begin + i, begin + j, dim)


def batch(step, worker, a):
    """Deterministic row ids (BATCH x BAG) and labels of a worker's step."""
    i = np.arange(a.batch * a.bag, dtype=np.uint64).reshape(a.batch, a.bag)
    seed = np.uint64((a.seed * 1000003 + step * 7919 + worker) & 0xffffffff)
    # A skewed id distribution, as embedding lookups have: low ids often.
    h = mix(i * np.uint64(2654435761) + seed)
    ids = (h % np.uint64(a.rows)) >> (h % np.uint64(3))
    labels = (ids.sum(axis=1) % np.uint64(a.classes)).astype(np.int64)
    return ids, labels


def shard_result(vals):
    """A shard's sha256 and whether every value is a multiple of
    1/SCALE (the updates stayed exact), piece by piece."""
    h = hashlib.sha256()
    exact = True
    for i in range(0, len(vals), INIT_CHUNK):
        v = np.ascontiguousarray(vals[i:i + INIT_CHUNK])
        h.update(memoryview(v).cast("B"))
        s = v * np.float32(SCALE)
        exact = exact and bool(np.array_equal(s, np.round(s)))
    return h.hexdigest(), exact


def mean_update(keys, vals, nworkers, dim):
    """A sync step's update: the pushes (keys arrays, (n, dim) value
    arrays) summed per key, divided by the workers, rounded to whole
    units: (unique keys, their update)."""
    k = np.concatenate(keys)
    v = np.concatenate([x.reshape(-1, dim) for x in vals])
    uniq, inv = np.unique(k, return_inverse=True)
    units = np.zeros((len(uniq), dim), dtype=np.float64)
    np.add.at(units, inv, np.round(v.astype(np.float64) * SCALE))
    return uniq, (np.round(units / nworkers) / SCALE).astype(np.float32)


class SyncStore:
    """A server's pushes of the current step (sync mode), applied at its
    end to ``vals`` (the shard, keys from ``begin``)."""

    def __init__(self, vals, begin, nworkers, dim):
        self.vals, self.begin, self.nworkers, self.dim = \
            vals, begin, nworkers, dim
        self.keys, self.deltas = [], []
        self.lock = threading.Lock()

    def add(self, keys, deltas):
        with self.lock:
            self.keys.append(np.array(keys, dtype=np.int64))
            self.deltas.append(np.array(deltas, dtype=np.float32))

    def apply(self):
        with self.lock:
            if self.keys:
                uniq, upd = mean_update(self.keys, self.deltas,
                                        self.nworkers, self.dim)
                self.vals[uniq - self.begin] += upd
            self.keys, self.deltas = [], []


def params_digest(shas):
    """The parameters' digest: sha256 of the shards' sha256s in order."""
    return hashlib.sha256(",".join(shas).encode()).hexdigest()


# ---- what a host spent: for the servers' figures --------------------------------

def host_counters():
    """This host's busy CPU (ms), RDMA packets sent (every device's
    port counters) and TCP segments sent."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = sum(v) - v[3] - (v[4] if len(v) > 4 else 0)
    tick = os.sysconf("SC_CLK_TCK")
    pkts = 0
    for p in glob.glob("/sys/class/infiniband/*/ports/*/hw_counters/"
                       "sent_pkts"):
        try:
            with open(p) as f:
                pkts += int(f.read())
        except (OSError, ValueError):
            pass
    segs = 0
    try:
        with open("/proc/net/snmp") as f:
            rows = [ln.split() for ln in f if ln.startswith("Tcp:")]
        segs = int(rows[1][rows[0].index("OutSegs")])
    except (OSError, ValueError, IndexError):
        pass
    return busy * 1000.0 / tick, pkts, segs


def process_cpu_ms():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return (ru.ru_utime + ru.ru_stime) * 1e3


def ibv_problem():
    """Why TensorPipe's ibv transport cannot run in this process, or
    None."""
    devs = sorted(glob.glob("/sys/class/infiniband/*"))
    if not devs:
        return "no RDMA device (/sys/class/infiniband is empty)"
    active = [d for d in devs for p in glob.glob(d + "/ports/*/state")
              if "ACTIVE" in open(p).read()]
    if not active:
        return f"no active RDMA port ({', '.join(map(os.path.basename, devs))})"
    try:
        ctypes.CDLL("libibverbs.so.1")
    except OSError as e:
        return f"libibverbs.so.1 not loadable ({e})"
    return None


# ---- transports ----------------------------------------------------------------------

def _done_future(value):
    """A completed future of the type bx.kv's asynchronous calls will
    return."""
    from bx import kv
    f = kv.future_type()()
    f.set_result(value)
    return f


class Transport:
    """pull(keys) -> (n, dim) float32 tensor; push(keys, deltas); keys an
    int64 tensor, ascending; pull_async and push_async: futures of the
    same (torch.futures.Future)."""

    def pull_async(self, keys):
        return _done_future(self.pull(keys))

    def push_async(self, keys, deltas):
        self.push(keys, deltas)
        return _done_future(None)

    def pushed_per_server(self):
        return None

    def close(self):
        pass


class BxTransport(Transport):
    """A bx.kv worker of the published servers; pulls land in a
    region-backed tensor (no copy in this process)."""

    def __init__(self, a, shape, rdv):
        import torch
        # A region of 16 MiB (libbx's default is 64) for the worker and
        # for its second lane each: a guest's processes share the
        # module's region cap, a quarter of its memory.
        self.w = rdv.worker(a.nservers, timeout_ms=120000,
                            region_size=16 << 20)
        self.b = np.array(shape.bounds(), dtype=np.int64)
        self.cap = a.batch * a.bag + shape.classes + 1
        # Two: step n + 1's pull lands while step n's values are in use.
        self.outs = [self.w.empty((self.cap, shape.dim),
                                  dtype=torch.float32) for _ in range(2)]
        self.n = 0
        self.pushed = np.zeros(a.nservers, dtype=np.int64)

    def _next_out(self, keys):
        self.n += 1
        return self.outs[self.n % 2][:len(keys)]

    def pull(self, keys):
        out = self._next_out(keys)
        self.w.pull(keys, out)
        return out

    def pull_async(self, keys):
        return self.w.pull_async(keys, self._next_out(keys))

    def _count(self, keys):
        s = np.searchsorted(self.b, keys.numpy(), side="right") - 1
        self.pushed += np.bincount(s, minlength=len(self.pushed))

    def push(self, keys, deltas):
        self.w.push(keys, deltas)
        self._count(keys)

    def push_async(self, keys, deltas):
        self._count(keys)
        return self.w.push_async(keys, deltas)

    def pushed_per_server(self):
        return self.pushed.tolist()

    def close(self):
        self.w.close()


# torch.distributed.rpc: each server process holds its range in _SHARD;
# workers call these (module-level, so that RPC can name them).
_SHARD = {}


def _rpc_pull(keys):
    with _SHARD["lock"]:             # RPC's threads: the count exact
        _SHARD["pulled"] += len(keys)
    return _SHARD["t"][keys - _SHARD["begin"]]


def _rpc_push(keys, deltas):
    with _SHARD["lock"]:
        if _SHARD.get("sync") is not None:
            _SHARD["sync"].add(keys.numpy(), deltas.numpy())
        else:
            _SHARD["t"].index_add_(0, keys - _SHARD["begin"], deltas)
        _SHARD["pushed"] += len(keys)


class RpcTransport(Transport):
    """Keys split per server and sent at once (rpc_async), as bxkv
    does."""

    def __init__(self, a, shape, rdv):
        self.b = np.array(shape.bounds(), dtype=np.int64)
        self.dim = shape.dim

    def _split(self, keys):
        cut = np.searchsorted(keys.numpy(), self.b[1:-1])
        return np.split(np.arange(len(keys)), cut)

    def pull_async(self, keys):
        import torch
        from torch.distributed import rpc
        parts = []
        for s, idx in enumerate(self._split(keys)):
            if len(idx):
                parts.append((idx, rpc.rpc_async(
                    f"ps{s}", _rpc_pull, args=(keys[idx],))))

        def assemble(_):
            out = torch.empty((len(keys), self.dim))
            for idx, f in parts:
                out[idx] = f.value()
            return out
        return torch.futures.collect_all([f for _, f in parts]).then(
            assemble)

    def pull(self, keys):
        return self.pull_async(keys).wait()

    def push_async(self, keys, deltas):
        import torch
        from torch.distributed import rpc
        futs = []
        for s, idx in enumerate(self._split(keys)):
            if len(idx):
                futs.append(rpc.rpc_async(f"ps{s}", _rpc_push,
                                          args=(keys[idx], deltas[idx])))
        return torch.futures.collect_all(futs).then(
            lambda fut: [f.wait() for f in fut.value()] and None)

    def push(self, keys, deltas):
        self.push_async(keys, deltas).wait()


def rpc_init(a, name, rank, world, tp):
    """torch.distributed.rpc over TensorPipe's transport tp (uv, ibv)
    alone, and its basic channel (the tensors over that transport too),
    meeting through env:// (the launcher's store)."""
    from torch.distributed import rpc
    if a.ifname:
        os.environ.setdefault("TP_SOCKET_IFNAME", a.ifname)
        os.environ.setdefault("GLOO_SOCKET_IFNAME", a.ifname)
    opts = rpc.TensorPipeRpcBackendOptions(
        num_worker_threads=4, rpc_timeout=300, init_method="env://",
        _transports=[tp], _channels=["basic"])
    rpc.init_rpc(name, rank=rank, world_size=world,
                 rpc_backend_options=opts)


# ---- the steps ---------------------------------------------------------------------------

def say(line, rec=""):
    """One line, and its record, in one write: processes share stdout."""
    os.write(1, (line + "\n" + rec).encode())


def record(a, kind, cell, metrics=None):
    """With --records, the record of a line: "bench-record {JSON}" (see
    tools/bench/README.md, "Records"); else nothing."""
    if not a.records:
        return ""
    o = {"v": 1, "bench": "embedding_ps", "kind": kind, "cell": cell,
         "metrics": metrics or {}}
    return "bench-record " + json.dumps(o, separators=(",", ":")) + "\n"


def figures(figs):
    """Figures (name, value, decimals) as the line's "name=value" text
    and as the record's numbers, rounded alike."""
    text = " ".join(f"{k}={float(v):.{d}f}" for k, v, d in figs)
    return text, {k: round(float(v), d) if d else round(float(v))
                  for k, v, d in figs}


def pct(xs, p):
    return float(np.percentile(np.asarray(xs), p)) if xs else 0.0


def step_log(a, name, rank, steps, pulls, pushes):
    """Every step's time (ms), pull and push latency (us), as lines of
    at most STEP_LOG_CHUNK steps (with their records), into a.step_log
    ("-": stdout) in one write."""
    path = a.step_log
    out = []
    for i in range(0, len(steps), STEP_LOG_CHUNK):
        j = i + STEP_LOG_CHUNK
        ms = [round(x, 3) for x in steps[i:j]]
        pu = [round(x) for x in pulls[i:j]]
        ps = [round(x) for x in pushes[i:j]]
        out.append(f"embedding_ps: steps transport={name} worker={rank} "
                   f"from={i} "
                   f"step_ms={','.join(f'{x:.3f}' for x in ms)} "
                   f"pull_us={','.join(str(x) for x in pu)} "
                   f"push_us={','.join(str(x) for x in ps)}\n")
        out.append(record(a, "steps",
                          {"transport": name, "worker": rank, "from": i},
                          {"step_ms": ms, "pull_us": pu, "push_us": ps}))
    data = "".join(out).encode()
    if path == "-":
        os.write(1, data)
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def step_keys(s, rank, a, shape):
    """A step's keys (an ascending int64 tensor: the batch's rows, then
    the dense layer's), the index of each sample's rows among them, and
    the labels."""
    import torch
    ids, labels = batch(s, rank, a)
    uniq, inv = np.unique(shape.row_keys(ids.ravel()), return_inverse=True)
    keys = np.concatenate([uniq, shape.dense_keys()]).astype(np.int64)
    return torch.from_numpy(keys), len(uniq), torch.from_numpy(inv), \
        torch.from_numpy(labels)


def step_update(vals, nrows, inv, labels, a):
    """The loss of a step and the integer updates (a float32 tensor) of
    its pulled rows and the dense layer."""
    import torch
    import torch.nn.functional as F
    p = vals.detach().requires_grad_(True)
    r, d = p[:nrows], p[nrows:]
    x = r[inv].view(a.batch, a.bag, a.dim).mean(1)
    w, bias = d[:a.classes], d[a.classes, :a.classes]
    loss = F.cross_entropy(x @ w.t() + bias, labels)
    loss.backward()
    u = torch.round(-a.lr * p.grad * SCALE).clamp_(-MAX_UNITS, MAX_UNITS)
    return float(loss), u / SCALE


def train(a, name, rank, nworkers, shape, rdv, tp):
    """A worker's steps over tp; returns its summary line and its
    record."""
    import torch
    torch.set_num_threads(1)
    overlap = a.overlap == "on"
    sync = a.mode == "sync"
    lock = not a.free and not overlap and not sync and nworkers > 1
    pulls, pushes, steps, losses = [], [], [], []
    cpu0 = process_cpu_ms()
    shown = time.monotonic()
    ahead = None            # --overlap: this step's pull, issued earlier
    for s in range(a.steps):
        if rank == 0 and a.progress and \
                time.monotonic() - shown >= a.progress:
            shown = time.monotonic()
            say(f"embedding_ps: progress transport={name} step {s} of "
                f"{a.steps}")
        t0 = time.perf_counter()
        if ahead is None:
            keys, nrows, inv, labels = step_keys(s, rank, a, shape)
            t1 = time.perf_counter()
            vals = tp.pull_async(keys).wait()
        else:
            (keys, nrows, inv, labels), fut, t1 = ahead
            vals = fut.wait()
        t2 = time.perf_counter()
        if lock:
            rdv.barrier("pulled", nworkers)
        loss, deltas = step_update(vals, nrows, inv, labels, a)
        t3 = time.perf_counter()
        if overlap and s + 1 < a.steps:
            # Step s + 1's pull on the wire with step s's push.
            nxt = step_keys(s + 1, rank, a, shape)
            ahead = (nxt, tp.pull_async(nxt[0]), time.perf_counter())
            tp.push_async(keys, deltas).wait()
        else:
            tp.push(keys, deltas)
        t4 = time.perf_counter()
        if lock:
            rdv.barrier("pushed", nworkers)
        if sync:
            # Every push of the step in; the servers apply their mean.
            rdv.barrier("sync/pushed", nworkers + a.nservers)
            rdv.barrier("sync/applied", nworkers + a.nservers)
        pulls.append((t2 - t1) * 1e6)
        pushes.append((t4 - t3) * 1e6)
        steps.append((time.perf_counter() - t0) * 1e3)
        losses.append(loss)
    cpu = process_cpu_ms() - cpu0
    n = max(a.steps, 1)
    if a.step_log:
        step_log(a, name, rank, steps, pulls, pushes)
    text, m = figures((
        ("steps", a.steps, 0),
        ("step_ms_mean", np.mean(steps) if steps else 0, 3),
        ("step_ms_p50", pct(steps, 50), 3),
        ("step_ms_p99", pct(steps, 99), 3),
        ("pull_us_p50", pct(pulls, 50), 0),
        ("pull_us_p99", pct(pulls, 99), 0),
        ("push_us_p50", pct(pushes, 50), 0),
        ("push_us_p99", pct(pushes, 99), 0),
        ("cpu_ms_per_step", cpu / n, 3),
        ("loss_first", losses[0] if losses else 0, 4),
        ("loss_last", losses[-1] if losses else 0, 4)))
    return (f"embedding_ps: transport={name} worker={rank} {text}",
            record(a, "result", {"transport": name, "worker": rank}, m))


def mode_text(a):
    if a.mode == "sync":
        return "sync (each step's mean applied by the servers)"
    if a.overlap == "on":
        return "overlap (pull of step n + 1 with push of step n)"
    return "free" if a.free else "lock-step"


# ---- the roles of one transport ---------------------------------------------------------

def worker_run(a, name, rank, nworkers, world, shape, store):
    from bx import kv
    rdv = kv.Rendezvous(store, prefix=f"embedding_ps/{name}", timeout=600)
    base = name.split(":")[0]
    if base == "rpc-ibv":
        # Every process says whether ibv can run there; all skip if one
        # cannot (init_rpc would hang or fail on some ranks only).
        rdv.put(f"ibv/{rank}", ibv_problem())
        why = [p for r in range(world)
               if (p := rdv.get(f"ibv/{r}")) is not None]
        if why:
            if rank == 0:
                say(f"embedding_ps: transport={name} unavailable: "
                    f"{why[0]}", record(a, "unavailable",
                                        {"transport": name, "why": why[0]}))
            return 0
    if base == "bx":
        tp = BxTransport(a, shape, rdv)
    else:
        rpc_init(a, f"worker{rank}", rank, world, base[4:])
        tp = RpcTransport(a, shape, rdv)
    rdv.barrier("ready", nworkers)
    if rank == 0:
        rdv.put("train/start", time.time())
    line, rec = train(a, name, rank, nworkers, shape, rdv, tp)
    rdv.put(f"pushed/{rank}", tp.pushed_per_server())
    rdv.barrier("trained", nworkers)
    if rank == 0:
        rdv.put("train/end", time.time())
    say(line, rec)
    rc = 0
    if rank == 0:
        res = [rdv.get(f"result/{s}") for s in range(a.nservers)]
        n = max(a.steps, 1)
        cpu, m = figures((
            ("server_cpu_ms_per_step", sum(r["cpu_ms"] for r in res) / n, 3),
            ("server_host_cpu_ms_per_step",
             sum(r["host_cpu_ms"] for r in res) / n, 3)))
        m["keys_pulled"] = [r["pulled"] for r in res]
        m["keys_pushed"] = [r["pushed"] for r in res]
        m["rdma_pkts"] = sum(r["rdma_pkts"] for r in res)
        m["tcp_segs"] = sum(r["tcp_segs"] for r in res)
        say(f"embedding_ps: transport={name} servers={a.nservers} {cpu} "
            f"keys_pulled={','.join(str(k) for k in m['keys_pulled'])} "
            f"keys_pushed={','.join(str(k) for k in m['keys_pushed'])} "
            f"rdma_pkts={m['rdma_pkts']} tcp_segs={m['tcp_segs']}",
            record(a, "servers", {"transport": name, "servers": a.nservers},
                   m))
        sha = params_digest([r["sha256"] for r in res])
        say(f"embedding_ps: transport={name} params sha256 {sha}",
            record(a, "params", {"transport": name, "sha256": sha}))
        if not all(r["exact"] for r in res):
            say(f"embedding_ps: transport={name}: parameters not "
                "multiples of 1/256")
            rc = 1
    tp.close()
    rdv.done()
    if base != "bx":
        from torch.distributed import rpc
        rpc.shutdown()
    return rc


def server_run(a, name, s, nworkers, world, rank, shape, store):
    from bx import kv
    rdv = kv.Rendezvous(store, prefix=f"embedding_ps/{name}", timeout=600)
    b = shape.bounds()
    begin, end = b[s], b[s + 1]
    base = name.split(":")[0]
    if base == "rpc-ibv":
        rdv.put(f"ibv/{rank}", ibv_problem())
        if any(rdv.get(f"ibv/{r}") is not None for r in range(world)):
            return 0
    srv = sync = None
    if base == "bx":
        if a.mode == "sync":
            # One call per push request, with its arrays: kept for the
            # step's mean (vals is bound below, before any push).
            kw = {"handle": lambda k, v, _l: sync.add(k, v)}
        else:
            kw = {}
        srv = rdv.serve(s, a.nservers, bounds=b, val_len=shape.dim,
                        service=a.service, start=False, **kw)
        fill_initial(srv.array(), begin, shape.dim)
        vals = srv.array()
        if a.mode == "sync":
            sync = SyncStore(vals, begin, nworkers, shape.dim)
        srv.start()
        rdv.publish(srv.bx_info)
    else:
        import torch
        t = torch.empty((end - begin, shape.dim))
        fill_initial(t.numpy(), begin, shape.dim)
        vals = t.numpy()
        if a.mode == "sync":
            sync = SyncStore(vals, begin, nworkers, shape.dim)
        _SHARD.update(t=t, begin=begin, lock=threading.Lock(), pulled=0,
                      pushed=0, sync=sync)
        rpc_init(a, f"ps{s}", rank, world, base[4:])
    say(f"embedding_ps: transport={name} server {s} of {a.nservers} "
        f"[{begin}, {end}) ready")
    # No deadline while the workers train: they take what they take.
    rdv.get("train/start", timeout=86400)
    cpu0, (host0, pk0, sg0) = process_cpu_ms(), host_counters()
    for _ in range(a.steps if sync is not None else 0):
        rdv.barrier("sync/pushed", nworkers + a.nservers, timeout=86400)
        if srv is not None:
            # Every push the workers made is in bx's queue: handle them
            # all here (the serving thread stopped), then serve again.
            srv.stop()
            while srv.poll(0) > 0:
                pass
        sync.apply()
        if srv is not None:
            srv.start()
        rdv.barrier("sync/applied", nworkers + a.nservers, timeout=86400)
    rdv.get("train/end", timeout=86400)
    cpu1, (host1, pk1, sg1) = process_cpu_ms(), host_counters()
    if srv is not None:
        # Every push applied: as many keys as the workers pushed here.
        want = sum(rdv.get(f"pushed/{r}")[s] for r in range(nworkers))
        deadline = time.monotonic() + 120
        while srv.stats().keys_pushed < want and \
                time.monotonic() < deadline:
            time.sleep(0.01)
        st = srv.stats()
        pulled, pushed = st.keys_pulled, st.keys_pushed
    else:
        with _SHARD["lock"]:
            pulled, pushed = _SHARD["pulled"], _SHARD["pushed"]
    sha, exact = shard_result(vals)
    rdv.put(f"result/{s}", {"cpu_ms": cpu1 - cpu0,
                            "host_cpu_ms": host1 - host0,
                            "rdma_pkts": pk1 - pk0, "tcp_segs": sg1 - sg0,
                            "pulled": pulled, "pushed": pushed,
                            "sha256": sha, "exact": exact})
    if srv is not None:
        rdv.wait_done(nworkers)
        st = srv.stats()
        del vals
        srv.close()
        say(f"embedding_ps: transport={name} served pulls {st.pulls} "
            f"pushes {st.pushes} bad {st.bad} errors {st.errors}")
    else:
        from torch.distributed import rpc
        rpc.shutdown()          # waits for every worker's shutdown
        say(f"embedding_ps: transport={name} served")
    return 0


# ---- the reference ----------------------------------------------------------------------

class LocalTransport(Transport):
    """All parameters in this process: the reference."""

    def __init__(self, shape):
        self.t = np.empty((shape.keys, shape.dim), dtype=np.float32)
        fill_initial(self.t, 0, shape.dim)

    def pull(self, keys):
        import torch
        return torch.from_numpy(self.t[keys.numpy()])

    def push(self, keys, deltas):
        np.add.at(self.t, keys.numpy(), deltas.numpy())


def local(a, shape):
    """--workers simulated in lock-step: each step all pull the state
    after the earlier steps, then all pushes are applied."""
    tp = LocalTransport(shape)
    losses = []
    for s in range(a.steps):
        pushes = []
        for r in range(a.workers):
            keys, nrows, inv, labels = step_keys(s, r, a, shape)
            loss, deltas = step_update(tp.pull(keys), nrows, inv, labels, a)
            pushes.append((keys, deltas))
            losses.append(loss)
        if a.mode == "sync":
            uniq, upd = mean_update([k.numpy() for k, _ in pushes],
                                    [d.numpy() for _, d in pushes],
                                    a.workers, shape.dim)
            tp.t[uniq] += upd
            continue
        for keys, deltas in pushes:
            tp.push(keys, deltas)
    b = shape.bounds()
    res = [shard_result(tp.t[b[s]:b[s + 1]]) for s in range(a.nservers)]
    text, m = figures((("steps", a.steps, 0),
                       ("loss_first", losses[0] if losses else 0, 4),
                       ("loss_last", losses[-1] if losses else 0, 4)))
    say(f"embedding_ps: transport=local workers={a.workers} {text}",
        record(a, "local", {"transport": "local", "workers": a.workers}, m))
    sha = params_digest([r[0] for r in res])
    say(f"embedding_ps: transport=local params sha256 {sha}",
        record(a, "params", {"transport": "local", "sha256": sha}))
    return 0 if all(r[1] for r in res) else 1


# ---- main --------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--transport", default="bx",
                    help="a comma-separated list of "
                    f"{', '.join(TRANSPORTS)}, run one after the other")
    ap.add_argument("--nservers", type=int, default=2,
                    help="the last NSERVERS ranks serve")
    ap.add_argument("--workers", type=int, default=1,
                    help="local: the workers simulated (under a launcher "
                    "the ranks before the servers are the workers)")
    ap.add_argument("--service", type=int, default=4400, help="bx")
    ap.add_argument("--ifname", default="",
                    help="rpc: TP_SOCKET_IFNAME (e.g. eth0)")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--classes", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--bag", type=int, default=4)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--free", action="store_true",
                    help="workers do not meet each step (Hogwild-style; "
                    "the parameters then depend on the interleaving)")
    ap.add_argument("--mode", choices=["async", "sync"], default="async",
                    help="async: each push applied as it arrives; sync: "
                    "a step's updates summed before the next pull")
    ap.add_argument("--overlap", choices=["off", "on"], default="off",
                    help="pull step n + 1 while pushing step n")
    ap.add_argument("--progress", type=float, default=10, metavar="SECS",
                    help="worker 0 says which step it is at, every SECS "
                    "seconds (0: never)")
    ap.add_argument("--step-log", metavar="FILE",
                    default=os.environ.get("EMBEDDING_PS_STEP_LOG", ""),
                    help="append every step's times to FILE "
                    "('-': stdout; default $EMBEDDING_PS_STEP_LOG)")
    ap.add_argument("--records", action="store_true",
                    help="follow each line of figures with its record "
                    "(bench-record {JSON}, for tools/bench/report.py)")
    a = ap.parse_args(argv)
    names = [t for t in a.transport.split(",") if t]
    modes = {t: t.partition(":")[2] or a.mode for t in names}
    bad = [t for t in names if t.partition(":")[0] not in TRANSPORTS or
           modes[t] not in ("async", "sync", "overlap") or
           t.startswith("local:")]
    if bad or not names:
        ap.error(f"--transport: {', '.join(bad) or 'none'}; one or more of "
                 f"{', '.join(TRANSPORTS)}; all but local may end in "
                 ":sync, :async or :overlap")
    if "sync" in modes.values() and (a.free or a.overlap == "on"):
        ap.error("--mode sync meets every step: not with --free or "
                 "--overlap on")
    shape = Shape(a)
    if names == ["local"]:
        say(f"embedding_ps: run transport=local: {WHAT['local']}",
            record(a, "run", {"transport": "local", "what": WHAT["local"],
                              "workers": a.workers, "servers": a.nservers,
                              "rows": shape.rows, "dim": shape.dim,
                              "steps": a.steps,
                              "kernel": os.uname().release}))
        return local(a, shape)
    if "local" in names:
        ap.error("--transport local runs alone (one process)")
    import bx.torch as bxt
    rank, world = bxt.rank(), bxt.world_size()
    nworkers = world - a.nservers
    if nworkers < 1:
        ap.error(f"WORLD_SIZE {world}: {a.nservers} servers and no worker "
                 "(start with torchrun, the servers the last ranks)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    store = bxt.store(timeout=600)
    rc = 0
    for name in names:
        ra = argparse.Namespace(**vars(a))
        ra.mode = modes[name]
        if ra.mode == "overlap":
            ra.mode, ra.overlap = "async", "on"
        if rank == 0:
            what = (f"{WHAT[name.partition(':')[0]]}; "
                    f"{nworkers} worker(s), {a.nservers} server(s), "
                    f"{shape.rows} rows x {shape.dim}, {a.steps} steps, "
                    f"{mode_text(ra)}")
            say(f"embedding_ps: run transport={name}: {what}",
                record(ra, "run", {"transport": name, "what": what,
                                   "workers": nworkers,
                                   "servers": a.nservers, "rows": shape.rows,
                                   "dim": shape.dim, "steps": a.steps,
                                   "kernel": os.uname().release}))
        if rank < nworkers:
            rc |= worker_run(ra, name, rank, nworkers, world, shape, store)
        else:
            rc |= server_run(ra, name, rank - nworkers, nworkers, world,
                             rank, shape, store)
    return rc


if __name__ == "__main__":
    sys.exit(main())
