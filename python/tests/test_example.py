# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Host test of examples/embedding_ps.py: launched by torchrun (two
workers, two servers on this host), the same training over
torch.distributed.rpc pinned to TensorPipe's uv transport reaches
exactly the parameters of the one-process reference, the servers'
figures and balance are reported, and the ibv transport says why it
cannot run here (no RDMA device on the host), and with --records every
line of figures is followed by its record, the same figures as numbers.
The run over bx, and over ibv, is selftests/bx/python.sh's torch case,
in three guests."""

import json
import os
import re
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EX = os.path.join(HERE, "..", "examples", "embedding_ps.py")
SIZE = ["--rows", "20000", "--dim", "16", "--steps", "20"]


def torch_rpc():
    try:
        import torch.distributed.rpc as rpc
    except ImportError:
        return False
    return rpc.is_available()


pytestmark = pytest.mark.skipif(not torch_rpc(),
                                reason="no torch with distributed.rpc")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def digest(out, t):
    m = re.search(rf"embedding_ps: transport={t} params sha256 "
                  r"([0-9a-f]{64})$", out, re.M)
    assert m, out
    return m.group(1)


def records(out):
    """Each record of out (torchrun's) with the line its process printed
    before it: (line, record) pairs."""
    last, pairs = {}, []
    for ln in out.splitlines():
        m = re.match(r"(\[default\d+\]:)?(.*)$", ln)
        who, text = m.group(1), m.group(2)
        if text.startswith("bench-record "):
            pairs.append((last.get(who, ""), json.loads(text[13:])))
        last[who] = text
    return pairs


def same_figures(line, rec):
    """Whether a line "embedding_ps: ... k=v ..." has its record's
    figures (lists comma-separated) and cell."""
    c = rec["cell"]
    if rec["kind"] == "run":
        return line == f"embedding_ps: run transport={c['transport']}: " \
            f"{c['what']}"
    words = dict(w.split("=", 1) for w in line.split() if "=" in w)
    for k, v in list(c.items()) + list(rec["metrics"].items()):
        if isinstance(v, str):
            ok = v in line
        elif isinstance(v, list):
            ok = [float(x) for x in words[k].split(",")] == v
        else:
            ok = float(words[k]) == v
        if not ok:
            return False
    return True


def env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(HERE, ".."), os.environ.get("PYTHONPATH", "")]))


def run(*args, timeout=180):
    return subprocess.run([sys.executable, EX, *args], capture_output=True,
                          text=True, timeout=timeout, env=env())


def torchrun(tmp_path, nproc, *args):
    """The example in nproc processes by torchrun on this host."""
    return subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone",
         "--nproc_per_node", str(nproc), "--redirects", "1", "--tee", "1",
         "--log_dir", str(tmp_path), "--master_port", str(free_port()),
         EX, *args],
        capture_output=True, text=True, timeout=300, env=env())


def test_rpc_by_torchrun_reaches_the_reference(tmp_path):
    """Lock-step and --mode sync (rpc-uv:sync, in the same launch): RPC
    reaches the one-process reference of each mode bit for bit (bx does
    in the guests' test); the two modes differ."""
    ref = run("--transport", "local", "--workers", "2", *SIZE)
    assert ref.returncode == 0, ref.stderr
    sref = run("--transport", "local", "--workers", "2", "--mode", "sync",
               *SIZE)
    assert sref.returncode == 0, sref.stderr
    assert digest(sref.stdout, "local") != digest(ref.stdout, "local")
    tr = torchrun(tmp_path, 4, "--transport", "rpc-uv,rpc-ibv,rpc-uv:sync",
                  "--nservers", "2", "--records", "--step-log", "-", *SIZE)
    out = tr.stdout
    assert tr.returncode == 0, out + tr.stderr
    recs = records(out)
    kinds = [(r["kind"], r["cell"]["transport"]) for _, r in recs]
    for t in ("rpc-uv", "rpc-uv:sync"):
        assert kinds.count(("run", t)) == kinds.count(("servers", t)) == \
            kinds.count(("params", t)) == 1, kinds
        assert kinds.count(("result", t)) == kinds.count(("steps", t)) == 2
    assert kinds.count(("unavailable", "rpc-ibv")) == 1, kinds
    for line, r in recs:
        assert r["v"] == 1 and r["bench"] == "embedding_ps", r
        assert line.startswith("embedding_ps: "), (line, r)
        assert same_figures(line, r), (line, r)
        if r["kind"] == "run":
            assert r["cell"]["kernel"] == os.uname().release, r
    assert digest(out, "rpc-uv") == digest(ref.stdout, "local")
    assert digest(out, "rpc-uv:sync") == digest(sref.stdout, "local")
    assert re.search(r"run transport=rpc-uv: .*uv \(TCP\).*2 worker\(s\), "
                     r"2 server\(s\), 20000 rows x 16, 20 steps, lock-step",
                     out)
    assert re.search(r"run transport=rpc-uv:sync: .*uv \(TCP\).*20 steps, "
                     r"sync \(each step's mean applied by the servers\)", out)
    for w in (0, 1):
        assert re.search(rf"transport=rpc-uv worker={w} steps=20 .*"
                         r"pull_us_p99=\d+ .*cpu_ms_per_step=", out), out
    m = re.search(r"transport=rpc-uv servers=2 server_cpu_ms_per_step=[\d.]+ "
                  r"server_host_cpu_ms_per_step=[\d.]+ "
                  r"keys_pulled=(\d+),(\d+) keys_pushed=\d+,\d+ "
                  r"rdma_pkts=0 tcp_segs=\d+", out)
    assert m, out
    a, b = int(m.group(1)), int(m.group(2))
    assert min(a, b) > 0.7 * max(a, b)      # the permutation balances
    assert re.search(r"transport=rpc-ibv unavailable: no RDMA device", out)


def test_overlap_by_torchrun(tmp_path):
    """rpc-uv:overlap (--overlap on for that run), after rpc-uv in
    lock-step in the same launch: step n + 1's pull on the wire with
    step n's push (rpc_async here; bx.kv's futures in the guests' test);
    the updates stay exact, every worker reports."""
    tr = torchrun(tmp_path, 3, "--transport", "rpc-uv,rpc-uv:overlap",
                  "--nservers", "1", *SIZE)
    out = tr.stdout
    assert tr.returncode == 0, out + tr.stderr
    assert "run transport=rpc-uv:overlap: " in out
    assert "20 steps, overlap (pull of step n + 1 with push of step n)" \
        in out, out
    assert "20 steps, lock-step" in out, out
    digest(out, "rpc-uv:overlap")
    for w in (0, 1):
        assert re.search(rf"transport=rpc-uv:overlap worker={w} steps=20 ",
                         out), out


def test_arguments():
    r = run("--transport", "local", "--classes", "32", "--dim", "16")
    assert r.returncode != 0 and "--classes" in r.stderr
    r = run("--transport", "tcp")
    assert r.returncode != 0 and "--transport: tcp" in r.stderr
    r = run("--transport", "local", "--mode", "sync", "--free")
    assert r.returncode != 0 and "not with --free" in r.stderr
    r = run("--transport", "rpc-uv:sync", "--overlap", "on")
    assert r.returncode != 0 and "not with --free" in r.stderr
    for t in ("bx:fast", "local:sync"):
        r = run("--transport", t)
        assert r.returncode != 0 and f"--transport: {t};" in r.stderr
    r = run("--transport", "rpc-uv", "--rows", "100")
    assert r.returncode != 0 and "no worker" in r.stderr
