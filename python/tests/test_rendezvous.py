# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Host tests of bx.kv.Rendezvous and bx.torch: servers and workers of
the fake library (fakelib.py FakeKV, one process) meeting through a
store -- a dict-backed store without torch, torch's HashStore and a
local TCPStore with a client per thread --, and processes started by
torchrun (three agents, as on three hosts) meeting through the agent's
store (rdv_job.py)."""

import os
import re
import socket
import subprocess
import sys
import threading
from datetime import timedelta

import pytest

np = pytest.importorskip("numpy")

from bx import kv                               # noqa: E402

from fakelib import FakeKV                      # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SVC = 44


class DictStore:
    """The store protocol without torch: set, get, add, check."""

    def __init__(self):
        self.d = {}
        self.lock = threading.Lock()

    def set(self, k, v):
        with self.lock:
            self.d[k] = v.encode() if isinstance(v, str) else v

    def get(self, k):
        with self.lock:
            return self.d[k]

    def add(self, k, n):
        with self.lock:
            v = int(self.d.get(k, b"0")) + n
            self.d[k] = str(v).encode()
            return v

    def check(self, keys):
        with self.lock:
            return all(k in self.d for k in keys)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job(stores, lib, nworkers=2, key_max=1000):
    """Two servers and nworkers workers, each a thread with its own
    store client: every worker pushes its rows once, meets the others,
    pulls the sums; the servers stop when all are done."""
    errors, got = [], {}
    nservers = 2

    def server(i, st):
        try:
            rdv = kv.Rendezvous(st, timeout=30)
            srv = rdv.serve(i, nservers, key_max=key_max, val_len=2,
                            service=SVC, addr=f"192.0.2.{i + 2}", lib=lib)
            rdv.wait_done(nworkers, timeout=30)
            srv.close()
        except BaseException as e:
            errors.append(e)

    def worker(r, st):
        try:
            rdv = kv.Rendezvous(st, timeout=30)
            w = rdv.worker(nservers, lib=lib)
            assert w.servers == ["192.0.2.2", "192.0.2.3"]
            keys = np.array([1, key_max // 2, key_max - 1], dtype=np.int64)
            rdv.barrier("up", nworkers)
            w.push(keys, np.full((3, 2), r + 1, np.float32))
            rdv.barrier("pushed", nworkers)
            got[r] = w.pull(keys)
            rdv.barrier("pulled", nworkers)
            w.close()
            rdv.done()
        except BaseException as e:
            errors.append(e)

    ts = [threading.Thread(target=server, args=(i, stores[i]))
          for i in range(nservers)]
    ts += [threading.Thread(target=worker, args=(r, stores[nservers + r]))
           for r in range(nworkers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not errors, errors
    total = sum(range(1, nworkers + 1))
    for r in range(nworkers):
        assert (got[r] == total).all()


def test_dict_store():
    st = DictStore()
    job([st] * 4, FakeKV())
    assert int(st.get("bx/done")) == 2
    info = kv.Rendezvous(st).servers(2)
    assert [(i.begin, i.end) for i in info] == [(0, 500), (500, 1000)]
    assert info[1].addr == "192.0.2.3" and info[0].service == SVC


def test_hash_store():
    dist = pytest.importorskip("torch.distributed")
    st = dist.HashStore()
    job([st] * 4, FakeKV())


def test_tcp_store_client_per_thread():
    dist = pytest.importorskip("torch.distributed")
    port = free_port()
    master = dist.TCPStore("127.0.0.1", port, None, True,
                           timedelta(seconds=30), wait_for_workers=False)
    clients = [dist.TCPStore("127.0.0.1", port, None, False,
                             timedelta(seconds=30)) for _ in range(5)]
    job(clients, FakeKV(), nworkers=3)
    del master


def test_prefixes_separate_jobs():
    st = DictStore()
    lib = FakeKV()
    a, b = kv.Rendezvous(st, "bx/a"), kv.Rendezvous(st, "bx/b")
    sa = a.serve(0, 1, key_max=10, val_len=1, service=SVC, addr="1.2.3.4",
                 lib=lib)
    with pytest.raises(TimeoutError, match="bx/b/server/0"):
        b.servers(1, timeout=0.1)
    sa.close()


def test_worker_checks_the_servers():
    st = DictStore()
    r = kv.Rendezvous(st)
    r.publish(kv.ServerInfo(0, "192.0.2.2", SVC, 0, 10, 2))
    r.publish(kv.ServerInfo(1, "192.0.2.3", SVC, 11, 20, 2))
    with pytest.raises(ValueError, match="gap"):
        r.worker(2, lib=FakeKV())
    r.publish(kv.ServerInfo(1, "192.0.2.3", SVC, 10, 20, 4))
    with pytest.raises(ValueError, match="val_len"):
        r.worker(2, lib=FakeKV())


def test_wait_done_stops():
    st = DictStore()
    stop = threading.Event()
    stop.set()
    with pytest.raises(InterruptedError):
        kv.Rendezvous(st).wait_done(1, stop=stop)
    with pytest.raises(TimeoutError):
        kv.Rendezvous(st).wait_done(1, timeout=0.1)


def test_even_bounds_and_address(monkeypatch):
    assert kv.even_bounds(10, 3) == [0, 4, 7, 10]
    with pytest.raises(ValueError):
        kv.even_bounds(1, 2)
    monkeypatch.setenv("BX_ADDR", "192.0.2.9")
    assert kv.local_address() == "192.0.2.9"
    monkeypatch.delenv("BX_ADDR")
    assert kv.local_address("127.0.0.1") == "127.0.0.1"


def test_bx_torch_store_needs_a_launcher(monkeypatch):
    pytest.importorskip("torch.distributed")
    import bx.torch as bxt
    for v in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setattr(bxt, "_store", None)
    with pytest.raises(ValueError, match="torchrun"):
        bxt.store()
    assert bxt.Future is __import__("torch").futures.Future
    assert kv.future_type() is bxt.Future


def test_torchrun_three_agents(tmp_path):
    """torchrun on three "hosts" (agents with node ranks 0, 1, 2, the
    first with two worker processes): the last two ranks serve, the
    others work; all meet through the agent's TCPStore."""
    pytest.importorskip("torch.distributed")
    port = str(free_port())
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(HERE), HERE, os.environ.get("PYTHONPATH", "")]))
    procs = []
    for node, nproc in ((0, 2), (1, 1), (2, 1)):
        # --redirects/--tee 1: torch 1.13's torchrun fails at its
        # default (0) on Python 3.11 (Std.from_str, an IntFlag's 0).
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "torch.distributed.run", "--nnodes", "3",
             "--node_rank", str(node), "--nproc_per_node", str(nproc),
             "--master_addr", "127.0.0.1", "--master_port", port,
             "--redirects", "1", "--tee", "1",
             "--log_dir", str(tmp_path / f"log{node}"),
             os.path.join(HERE, "rdv_job.py"), "--nservers", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=env))
    out = ""
    for p in procs:
        o, _ = p.communicate(timeout=120)
        out += o
        assert p.returncode == 0, o
    for r, role in ((0, "worker"), (1, "worker"), (2, "server"),
                    (3, "server")):
        assert re.search(rf"rdv_job: rank {r} of 4 {role} ok", out), out
