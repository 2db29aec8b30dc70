# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""The client half of selftests/bx/python.sh, on guest 1, against
guest_server.py on guest 0 (BX_PY_SERVER: its address, BX_PY_SERVICE:
its service). Skipped elsewhere. Every payload is checked byte for byte:
pushes by the server (its "bad" counter), replies here."""

import errno
import json
import os
import struct
import time
from concurrent.futures import as_completed

import pytest

import bx
from guestproto import message, pattern

np = pytest.importorskip("numpy")

SERVER = os.environ.get("BX_PY_SERVER")
SERVICE = int(os.environ.get("BX_PY_SERVICE", "0"))
pytestmark = pytest.mark.skipif(not SERVER, reason="no BX_PY_SERVER")

SIZES = [0, 8, 9, 63, 64, 4095, 4096, 4097, 65536, 1 << 20, 4 << 20]
# Deadline of the operations that must succeed: generous, since the
# server is Python in an emulated guest (a slow host makes it slower).
DEADLINE = 120000


@pytest.fixture(scope="module")
def b():
    with bx.Bx(region_size=64 << 20, cq_entries=512) as h:
        yield h


@pytest.fixture(scope="module")
def peer(b):
    return b.peer(SERVER)


def stat(b, peer):
    with b.alloc(4096) as resp:
        n = b.pull(peer, SERVICE, b"STAT", resp, DEADLINE)
        return json.loads(bytes(resp[:n]))


def stat_pushes(b, peer, pushes, timeout=10.0):
    """The server's counters once it has handled ``pushes`` pushes (or
    the timeout passed): a push completes when it is delivered to the
    server's host, before the server process has handled it."""
    end = time.monotonic() + timeout
    while True:
        st = stat(b, peer)
        if st["pushes"] >= pushes or time.monotonic() > end:
            return st
        time.sleep(0.05)


def patt(seed, size):
    return b"PATT" + struct.pack("<II", seed, size)


def test_info(b):
    info = b.info()
    assert info.features & bx.FEAT_DATA and info.ndevs >= 1
    assert b.region_size == 64 << 20 and b.eager_max > 0
    assert b.fileno() >= 0


def test_push_sync(b, peer):
    before = stat(b, peer)
    for seed, n in enumerate(SIZES):
        with b.alloc(max(n, 1)) as buf:
            buf[:n] = message(seed, n)
            assert b.push(peer, SERVICE, buf[:n], DEADLINE) == n
    after = stat_pushes(b, peer, before["pushes"] + len(SIZES))
    assert after["pushes"] - before["pushes"] == len(SIZES)
    assert after["push_bytes"] - before["push_bytes"] == sum(SIZES)
    assert after["bad"] == 0


def test_push_bytes_copied(b, peer):
    before = stat(b, peer)
    assert b.push(peer, SERVICE, message(99, 5000), DEADLINE) == 5000
    after = stat_pushes(b, peer, before["pushes"] + 1)
    assert after["pushes"] - before["pushes"] == 1 and after["bad"] == 0


def test_pull_sync(b, peer):
    with b.alloc(4 << 20) as resp:
        for seed, n in enumerate(SIZES):
            got = b.pull(peer, SERVICE, patt(seed + 1000, n), resp, DEADLINE)
            assert got == n
            assert np.array_equal(np.frombuffer(resp, np.uint8, n),
                                  pattern(seed + 1000, n))


def test_pull_echo(b, peer):
    """A request of 4 KiB, the most a pull carries (EMSGSIZE above)."""
    with b.alloc(8192) as req, b.alloc(8192) as resp:
        data = pattern(5, 4092).tobytes()
        req[:4] = b"ECHO"
        req[4:4096] = data
        assert b.pull(peer, SERVICE, req[:4096], resp, DEADLINE) == 4092
        assert bytes(resp[:4092]) == data[::-1]
        with pytest.raises(OSError) as ei:
            b.pull(peer, SERVICE, req[:4097], resp, DEADLINE)
        assert ei.value.errno == errno.EMSGSIZE


def test_async_many(b, peer):
    """64 pulls and 64 pushes in flight at once, by futures."""
    before = stat(b, peer)
    n, size = 64, 65536
    resp = b.alloc(n * size)
    pushes = [b.alloc(size) for _ in range(n)]
    for i, p in enumerate(pushes):
        p[:] = message(5000 + i, size)
    futs = {}
    for i in range(n):
        futs[b.pull_async(peer, SERVICE, patt(2000 + i, size - i),
                          resp[i * size:(i + 1) * size])] = ("pull", i)
        futs[b.push_async(peer, SERVICE, pushes[i])] = ("push", i)
    assert b.in_flight > 0
    for f in as_completed(futs, timeout=120):
        kind, i = futs[f]
        if kind == "pull":
            assert f.result() == size - i
            got = np.frombuffer(resp, np.uint8, size - i, i * size)
            assert np.array_equal(got, pattern(2000 + i, size - i))
        else:
            assert f.result() == size
    assert b.in_flight == 0
    for p in pushes:
        p.free()
    resp.free()
    after = stat_pushes(b, peer, before["pushes"] + n)
    assert after["pushes"] - before["pushes"] == n and after["bad"] == 0


def test_torch_zero_copy(b, peer):
    """Tensors over the region are operations' buffers as they are."""
    torch = pytest.importorskip("torch")
    before = stat(b, peer)
    with b.alloc(1 << 20) as buf, b.alloc(4096) as req, \
            b.alloc(4096) as resp:
        t = torch.frombuffer(buf, dtype=torch.uint8)
        t[:] = torch.frombuffer(bytearray(message(77, 1 << 20)),
                                dtype=torch.uint8)
        assert b.push(peer, SERVICE, t, DEADLINE) == 1 << 20
        # a float tensor as a request: ECHO in its first 4 bytes
        f = torch.frombuffer(req, dtype=torch.float32)
        f[:] = torch.arange(1024, dtype=torch.float32)
        req[:4] = b"ECHO"
        n = b.pull(peer, SERVICE, f, resp, DEADLINE)
        assert n == 4092
        r = torch.frombuffer(resp, dtype=torch.uint8)[:n].flip(0)
        assert torch.equal(r, torch.frombuffer(req, dtype=torch.uint8)[4:])
    after = stat_pushes(b, peer, before["pushes"] + 1)
    assert after["pushes"] - before["pushes"] == 1 and after["bad"] == 0


def test_no_service(b, peer):
    """Refused until the call's timeout: libbx sends a refused push again
    (the service may be starting), then reports the refusal."""
    with pytest.raises(ConnectionRefusedError):
        b.push(peer, SERVICE + 1, b"nobody", 2000)


@pytest.mark.skipif(not os.environ.get("BX_PY_SLOW_PEER"),
                    reason="needs the server's link slowed (python.sh)")
def test_slow_refusal(b, peer):
    """Refusals that take a round trip of tens of ms (python.sh delays
    the server's frames) and timeouts spread over a back-off cycle of
    libbx's retries: each call still reports the refusal. (libbx sends
    no attempt that the deadline would cut short, which would end in
    TimeoutError with the push under way.)"""
    for i in range(14):
        with pytest.raises(ConnectionRefusedError):
            b.push(peer, SERVICE + 1, b"nobody", 300 + 10 * i)


def test_timeout(b, peer):
    """A pull the server holds: TimeoutError at our deadline."""
    resp = b.alloc(4096)            # stays allocated: it is still in flight
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        b.pull(peer, SERVICE, b"HOLD", resp, 500)
    assert 0.4 < time.monotonic() - t0 < 10


def test_close_with_ops_in_flight(b, peer):
    before = stat(b, peer)
    h = bx.Bx(region_size=16 << 20)
    p = h.peer(SERVER)
    resp = h.alloc(4096)
    held = [h.pull_async(p, SERVICE, b"HOLD", resp) for _ in range(8)]
    deadline = time.monotonic() + 30
    while stat(b, peer)["held"] - before["held"] < 8:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    bufs = [h.alloc(1 << 20) for _ in range(8)]
    for i, x in enumerate(bufs):
        x[:] = message(7000 + i, 1 << 20)
    pushes = [h.push_async(p, SERVICE, x) for x in bufs]
    v = np.frombuffer(bufs[0], np.uint8)
    h.close()
    h.close()
    for f in held:
        assert f.done()
        with pytest.raises(OSError) as ei:
            f.result(0)
        assert ei.value.errno == errno.ECANCELED
    ok = 0
    for f in pushes:
        assert f.done()
        if f.exception() is None:
            ok += 1
        else:
            assert f.exception().errno == errno.ECANCELED
    assert not v.any()              # the view outlived the handle: zeros
    # What reached the wire arrives, whole; nothing arrives twice.
    deadline = time.monotonic() + 30
    while True:
        s = stat(b, peer)
        got = s["pushes"] - before["pushes"]
        if got >= ok or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert ok <= got <= len(pushes) and s["bad"] == 0
    # The held requests (and test_timeout's) are answered late.
    with b.alloc(64) as r:
        n = b.pull(peer, SERVICE, b"FREE", r, DEADLINE)
        assert int(bytes(r[:n])) >= 8
    # the service still works
    with b.alloc(4096) as r:
        assert b.pull(peer, SERVICE, patt(1, 4096), r, DEADLINE) == 4096
        assert np.array_equal(np.frombuffer(r, np.uint8), pattern(1, 4096))


def test_server_clean(b, peer):
    assert stat(b, peer)["bad"] == 0
