# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Host test of examples/embedding_ps.py: the same training over
torch.distributed.rpc (two server processes and the worker, over
loopback TCP) reaches exactly the parameters of the in-process
reference. The run over bx is selftests/bx/python.sh's torch case."""

import os
import re
import socket
import subprocess
import sys

import pytest

EX = os.path.join(os.path.dirname(__file__), "..", "examples",
                  "embedding_ps.py")
STEPS = "20"


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


def digest(out):
    m = re.search(r"^embedding_ps: params sha256 ([0-9a-f]{64})$", out, re.M)
    assert m, out
    return m.group(1)


def run(*args, timeout=120):
    return subprocess.run([sys.executable, EX, *args], capture_output=True,
                          text=True, timeout=timeout)


def test_rpc_reaches_the_reference_parameters():
    ref = run("train", "--transport", "local", "--steps", STEPS)
    assert ref.returncode == 0, ref.stderr
    assert re.search(r"transport=local worker=0 steps=20 .*"
                     r"pull_us_p99=\d+ .*cpu_ms_per_step=", ref.stdout)
    port = str(free_port())
    servers = [subprocess.Popen([sys.executable, EX, "serve", "--transport",
                                 "rpc", "--shard", str(s), "--port", port],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for s in (0, 1)]
    try:
        tr = run("train", "--transport", "rpc", "--steps", STEPS,
                 "--port", port)
    finally:
        outs = [s.communicate(timeout=60) for s in servers]
    assert tr.returncode == 0, tr.stderr
    for s, (o, e) in zip(servers, outs):
        assert s.returncode == 0 and "served" in o, e
    assert digest(tr.stdout) == digest(ref.stdout)


def test_arguments():
    r = run("train", "--transport", "local", "--workers", "2")
    assert r.returncode != 0 and "one worker" in r.stderr
    r = run("train", "--classes", "32", "--dim", "16")
    assert r.returncode != 0 and "--classes" in r.stderr
