# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""bx.kv across guests (selftests/bx/python.sh, case kv): this guest is
the worker of two servers (kv_server.py) that own the halves of
[0, BX_KV_KEYS), each val_len BX_KV_VL floats, messages of BX_KV_MSG
bytes at most so that every large call is cut into many requests. The
servers start from zeros and sum what is pushed: each test pushes small
integers and checks the exact sums (float32 is exact for them).

test_outage runs alone (BX_KV_OUTAGE=1), while the second server's link
is down for a while: every push succeeds and each is applied exactly
once."""

import errno
import os
import subprocess
import time

import numpy as np
import pytest

from bx import kv

SERVERS = os.environ.get("BX_KV_SERVERS", "").split(",")
SVC = int(os.environ.get("BX_KV_SERVICE", "0"))
KEYS = int(os.environ.get("BX_KV_KEYS", "0"))
VL = int(os.environ.get("BX_KV_VL", "4"))
MSG = int(os.environ.get("BX_KV_MSG", "0"))
OUTAGE = os.environ.get("BX_KV_OUTAGE") == "1"

pytestmark = pytest.mark.skipif(len(SERVERS) < 2 or not SVC or not KEYS,
                                reason="BX_KV_SERVERS (two), BX_KV_SERVICE "
                                "and BX_KV_KEYS are needed")
half = KEYS // 2


@pytest.fixture(scope="module")
def w():
    with kv.Worker(SERVERS, key_max=KEYS, val_len=VL, service=SVC,
                   msg_max=MSG, timeout_ms=60000) as wk:
        yield wk


def pull(w, keys):
    return np.frombuffer(w.pull(keys), dtype=np.float32).reshape(-1, VL)


def ones(n, v=1.0):
    return np.full(n * VL, v, dtype=np.float32)


# Keys lo, lo + step, ... below hi. Each test compares with what it
# pulled first, so that the tests' sums do not mix.
def keys_of(lo, hi, step):
    return np.arange(lo, hi, step, dtype=np.uint64)


@pytest.mark.skipif(OUTAGE, reason="outage round")
def test_many_keys_spanning_both_servers(w):
    keys = keys_of(1, KEYS, 7)                      # both halves, sparse
    assert (keys < half).any() and (keys >= half).any()
    before = pull(w, keys)
    for r in range(3):
        w.push(keys, ones(len(keys), r + 1))
    got = pull(w, keys)
    assert (got == before + 6).all()


@pytest.mark.skipif(OUTAGE, reason="outage round")
def test_lens_calls(w):
    # The lens calls (bxkv_push_lens, _pull_lens), each key the servers'
    # val_len: a list on each server.
    keys = keys_of(half - 50, half + 50, 3)
    lens = np.full(len(keys), VL, dtype=np.uint32)
    before = pull(w, keys)
    w.push(keys, ones(len(keys), 2), lens=lens)
    got = np.frombuffer(w.pull(keys, lens=lens), dtype=np.float32)
    assert (got.reshape(-1, VL) == before + 2).all()


@pytest.mark.skipif(OUTAGE, reason="outage round")
def test_dense_run_across_the_boundary_into_the_region(w):
    keys = np.arange(half - 3000, half + 3000, dtype=np.uint64)
    vals = (keys.astype(np.float32)[:, None] % 1000 +
            np.arange(VL, dtype=np.float32)).ravel()
    before = pull(w, keys)
    w.push(keys, vals)
    buf = w.buffer(len(keys))
    assert w.pull(keys, buf) is buf
    got = np.frombuffer(buf, dtype=np.float32).reshape(-1, VL)
    assert (got == before + vals.reshape(-1, VL)).all()
    buf.free()


@pytest.mark.skipif(OUTAGE, reason="outage round")
def test_one_key_per_server_and_torch(w):
    keys = [3, half + 3]
    w.push(keys, [2.0] * (2 * VL))
    got = pull(w, keys)
    try:
        import torch
    except ImportError:
        return
    out = w.buffer(2)
    t = torch.frombuffer(out, dtype=torch.float32)
    w.pull(keys, out)
    assert t.tolist() == got.ravel().tolist()
    out.free()


@pytest.mark.skipif(OUTAGE, reason="outage round")
def test_tensors_as_they_are(w):
    """As a PyTorch user calls it: int64 tensor keys, (n, val_len)
    tensors in and out, a region-backed tensor, strided values."""
    torch = pytest.importorskip("torch")
    keys = torch.arange(half - 500, half + 500, 9, dtype=torch.int64)
    before = w.pull(keys)
    assert before.shape == (len(keys), VL) and before.dtype == torch.float32
    v = torch.arange(len(keys) * VL, dtype=torch.float32).view(-1, VL) % 7
    w.push(keys, v)
    out = torch.empty(len(keys), VL)
    assert w.pull(keys, out) is out and torch.equal(out, before + v)
    reg = w.empty((len(keys), VL))
    w.pull(keys, reg)
    assert torch.equal(reg, before + v)
    wide = torch.zeros(len(keys) * VL, 2)
    wide[:, 1] = 1.0
    w.push(keys, wide[:, 1])                     # strided: copied once
    w.pull(keys.numpy(), reg)                    # int64 ndarray keys
    assert torch.equal(reg, before + v + 1)
    with pytest.raises(ValueError, match="negative"):
        w.pull(torch.tensor([-1, 2]))
    with pytest.raises(ValueError, match="not contiguous"):
        w.pull(keys, torch.zeros(len(keys) * VL, 2)[:, 0])
    with pytest.raises(TypeError, match="float32"):
        w.pull(keys, torch.zeros(len(keys), VL, dtype=torch.float64))
    with pytest.raises(ValueError, match="shape"):
        w.pull(keys, torch.zeros(VL, len(keys)))


@pytest.mark.skipif(OUTAGE, reason="outage round")
def test_async_calls(w):
    """push_async and pull_async over bx: many calls on the wire at
    once (the worker's lanes), sums exact, futures torch's when torch
    is there, a region-backed out filled on the worker's own lane."""
    keys = keys_of(2, KEYS, 11)
    before = pull(w, keys)
    pushes = [w.push_async(keys, ones(len(keys))) for _ in range(8)]
    for f in pushes:
        assert f.wait() is None
    out = w.empty_array((len(keys), VL))
    pulls = [w.pull_async(keys) for _ in range(3)] + \
        [w.pull_async(keys, out)]
    for f in pulls:
        got = f.wait()
        assert (np.asarray(got).reshape(-1, VL) == before + 8).all()
    assert pulls[-1].wait() is out
    assert len(w._lanes) == 2
    try:
        import torch.futures
    except ImportError:
        return
    both = torch.futures.collect_all([w.pull_async(keys),
                                      w.push_async(keys, ones(len(keys)))])
    both.wait()
    assert (pull(w, keys) == before + 9).all()


@pytest.mark.skipif(OUTAGE, reason="outage round")
def test_bad_keys(w):
    with pytest.raises(OSError) as e:
        w.push([KEYS], ones(1))
    assert e.value.errno == errno.ERANGE and e.value.server == -1
    with pytest.raises(OSError) as e:
        w.pull([half + 8, 8])
    assert e.value.errno == errno.EINVAL


def downs():
    """Connections to the second server this host's bx logged down."""
    log = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    return log.count(f"bx: connection to {SERVERS[1]} down")


@pytest.mark.skipif(not OUTAGE, reason="runs alone, with the outage")
def test_outage(w):
    keys = np.concatenate([keys_of(half - 800, half + 800, 1),
                           keys_of(0, KEYS, 400)])
    keys = np.unique(keys)
    before = pull(w, keys)
    secs = float(os.environ.get("BX_KV_SECS", "25"))
    w.push(keys[:1], ones(1, 0.0))
    # The servers' guests wait at this bxrig barrier: the outage starts
    # once this worker is up and pushing (python.sh).
    bar = os.environ.get("BX_KV_BARRIER")
    if bar:
        subprocess.run(["bxrig", "barrier", bar, "300"], check=True)
    # At least secs of pushes, and on until this host's bx logged its
    # connection to the second server down (the outage ended it) and
    # some more pushes went through after, within 90 s.
    d0, n, worst, start, met = downs(), 0, 0.0, time.monotonic(), None
    while True:
        now = time.monotonic()
        if now - start >= 90 or (now - start >= secs and met is not None
                                 and now - met >= 3):
            break
        w.push(keys, ones(len(keys)))               # must not fail
        n += 1
        worst = max(worst, time.monotonic() - now)
        if n % 5 == 0:
            assert (pull(w, keys) == before + n).all()
            if met is None and downs() > d0:
                met = time.monotonic()
    got = pull(w, keys)
    print(f"python kv outage: pushes {n} slowest_ms {int(worst * 1000)}")
    # Each push applied exactly once, across the reconnect.
    assert (got == before + n).all()
    assert met is not None, "the outage did not end the connection"
