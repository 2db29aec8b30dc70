# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Host tests of bx.kv: no /dev/bx needed. The fake library (fakelib.py
FakeKV: servers in the same process) for arguments, sharding, values,
errors and closing; the real libbx.so.0 for its structures and for the
errors it gives without bx."""

import array
import ctypes
import errno
import gc
import os

import numpy as np
import pytest

from bx import _native, kv

from fakelib import FakeKV

VL = 4
SVC = 40


@pytest.fixture
def lib():
    return FakeKV()


@pytest.fixture
def two(lib):
    """Two servers over [0, 1000), and a worker of both."""
    s0 = kv.Server(0, 500, VL, SVC, lib=lib)
    s1 = kv.Server(500, 1000, VL, SVC, lib=lib)
    w = kv.Worker(["192.0.2.1", "192.0.2.2"], key_max=1000, val_len=VL,
                  service=SVC, lib=lib)
    yield s0, s1, w
    w.close()
    s0.close()
    s1.close()


def vals_for(keys, scale=1.0):
    """key k's values: k, k + 1, ... (times scale), float32."""
    k = np.asarray(keys, dtype=np.float32)[:, None]
    return ((k + np.arange(VL, dtype=np.float32)) * scale).ravel()


def test_push_pull_across_servers(two):
    s0, s1, w = two
    keys = np.array([0, 3, 499, 500, 501, 999], dtype=np.uint64)
    w.push(keys, vals_for(keys))
    w.push(keys, vals_for(keys))
    got = np.frombuffer(w.pull(keys), dtype=np.float32)
    assert got.tolist() == (2 * vals_for(keys)).tolist()
    # Each server holds its own half, in its store, without a copy.
    store0 = np.asarray(s0.values)
    assert store0.shape == (500, VL)
    assert store0[499].tolist() == (2 * vals_for([499])).tolist()
    assert np.asarray(s1.values)[0].tolist() == \
        (2 * vals_for([500])).tolist()
    assert s1.value(999).tolist() == (2 * vals_for([999])).tolist()
    assert np.asarray(s0.values)[1].tolist() == [0.0] * VL
    assert s0.stats().keys_pushed == 6 and s1.stats().keys_pushed == 6


def test_many_keys_and_argument_kinds(two):
    s0, s1, w = two
    keys = list(range(0, 1000, 3))
    w.push(keys, vals_for(keys).tolist())            # lists
    w.push(array.array("Q", keys), array.array("f", vals_for(keys)))
    w.push(np.array(keys, dtype=np.int64), vals_for(keys))  # signed
    ro = vals_for(keys)
    ro.flags.writeable = False
    w.push(tuple(keys), ro)                           # read-only values
    out = np.zeros(len(keys) * VL, dtype=np.float32)
    assert w.pull(keys, out) is out
    assert out.tolist() == (4 * vals_for(keys)).tolist()
    # Into the worker's region: no copy.
    buf = w.buffer(len(keys))
    assert len(buf) == len(keys) * VL
    w.pull(keys, buf)
    assert np.frombuffer(buf, dtype=np.float32).tolist() == out.tolist()
    buf.free()
    with pytest.raises(ValueError):
        buf.free()
    # No keys: nothing to do.
    w.push([], [])
    assert len(w.pull([])) == 0


def test_bounds(lib):
    a = kv.Server(10, 20, 1, SVC, lib=lib)
    b = kv.Server(20, 100, 1, SVC + 2, lib=lib)
    w = kv.Worker(["192.0.2.1"], bounds=[10, 20], val_len=1, service=SVC,
                  lib=lib)
    w.push([10, 19], [1.0, 2.0])
    assert list(w.pull([10, 19])) == [1.0, 2.0]
    with pytest.raises(OSError) as e:
        w.push([20], [1.0])
    assert e.value.errno == errno.ERANGE and e.value.server == -1
    for o in (w, a, b):
        o.close()


@pytest.mark.parametrize("keys,err", [([5, 3], errno.EINVAL),
                                      ([3, 3], errno.EINVAL),
                                      ([1000], errno.ERANGE)])
def test_bad_keys_from_the_library(two, keys, err):
    _, _, w = two
    with pytest.raises(OSError) as e:
        w.push(keys, [0.0] * (len(keys) * VL))
    assert e.value.errno == err and e.value.server == -1


def test_bad_arguments(two):
    _, _, w = two
    with pytest.raises(ValueError):
        w.push([-1], [0.0] * VL)
    with pytest.raises(ValueError):
        w.push([1 << 64], [0.0] * VL)
    with pytest.raises(TypeError):
        w.push([1.5], [0.0] * VL)
    with pytest.raises(ValueError):
        w.push([1, 2], [0.0] * VL)                        # too few
    with pytest.raises(TypeError):
        w.push([1], np.zeros(VL, dtype=np.float64))       # not float32
    with pytest.raises(ValueError):
        w.pull([1], np.zeros((VL, 2), dtype=np.float32)[:, 0])  # strided
    with pytest.raises(TypeError):
        w.pull([1], [0.0] * VL)                           # not writable
    ro = np.zeros(VL, dtype=np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        w.pull([1], ro)
    with pytest.raises(TypeError):
        kv.Worker("192.0.2.1", key_max=10, val_len=1, service=SVC,
                  lib=FakeKV())
    with pytest.raises(ValueError):
        kv.Worker(["192.0.2.1"], val_len=1, service=SVC, lib=FakeKV())


def test_server_error_names_the_server(two, lib):
    _, _, w = two
    lib.kv_fail(errno.ETIMEDOUT, 1)
    with pytest.raises(TimeoutError) as e:
        w.pull([1, 600])
    assert e.value.server == 1
    lib.kv_fail(errno.ECONNRESET, 0)
    with pytest.raises(ConnectionResetError) as e:
        w.push([1], [1.0] * VL)
    assert e.value.server == 0
    w.push([1], [1.0] * VL)          # the next call is fine again


def test_apply_callback(lib):
    seen = []

    def sgd(key, dst, src):
        seen.append(key)
        d = np.frombuffer(dst, dtype=np.float32)
        d -= 0.5 * np.frombuffer(src, dtype=np.float32)

    with kv.Server(0, 8, 2, SVC, apply=sgd, lib=lib) as s, \
            kv.Worker(["192.0.2.1"], key_max=8, val_len=2, service=SVC,
                      lib=lib) as w:
        np.asarray(s.values)[:] = 10.0
        w.push([1, 7], [2.0, 4.0, 6.0, 8.0])
        assert seen == [1, 7]
        assert list(w.pull([1, 7])) == [9.0, 8.0, 7.0, 6.0]
        assert np.asarray(s.values)[0].tolist() == [10.0, 10.0]


def test_apply_exception_raised_by_poll(lib):
    def bad(key, dst, src):
        raise RuntimeError(f"no key {key}")

    s = kv.Server(0, 8, 1, SVC, apply=bad, lib=lib)
    w = kv.Worker(["192.0.2.1"], key_max=8, val_len=1, service=SVC,
                  lib=lib)
    w.push([3], [1.0])
    with pytest.raises(RuntimeError, match="no key 3"):
        s.poll(0)
    assert s.poll(0) == 0             # raised once
    w.close()
    s.close()


def test_start_stop_poll(lib):
    with kv.Server(0, 8, 1, SVC, lib=lib) as s:
        assert "idle" in repr(s)
        s.start()
        assert "serving" in repr(s)
        with pytest.raises(OSError) as e:
            s.poll(0)
        assert e.value.errno == errno.EBUSY
        s.stop()
        assert s.poll(0) == 0
    assert s.closed and "closed" in repr(s)
    with pytest.raises(ValueError):
        s.values
    s.close()                         # again: nothing


def test_closed_views_read_zeros(lib):
    s = kv.Server(0, 1024, 4, SVC, lib=lib)
    store = np.asarray(s.values)
    store[:] = 7.0
    w = kv.Worker(["192.0.2.1"], key_max=1024, val_len=4, service=SVC,
                  lib=lib)
    buf = w.buffer(2)
    w.pull([0, 1], buf)
    view = np.frombuffer(buf, dtype=np.float32)
    assert view.tolist() == [7.0] * 8
    w.close()
    s.close()
    assert store.sum() == 0 and view.sum() == 0   # not a fault
    with pytest.raises(ValueError):
        w.pull([0])
    del store, view, buf
    gc.collect()


def test_worker_buffers_freed_with_the_worker(lib):
    w = kv.Worker(["192.0.2.1"], key_max=10, val_len=1, service=SVC,
                  lib=lib)
    with w.buffer(4) as b:
        assert "floats=4" in repr(b)
    w.close()
    assert not lib.handles


def lens_of(k):
    """Key k's length in the lens tests: 1 + k % 5 floats."""
    return 1 + k % 5


@pytest.fixture
def two_lens(lib):
    """Two servers over [0, 100), key k of lens_of(k) floats."""
    s0 = kv.Server(0, 50, service=SVC, lib=lib,
                   lens=[lens_of(k) for k in range(50)])
    s1 = kv.Server(50, 100, service=SVC, lib=lib,
                   lens=np.array([lens_of(k) for k in range(50, 100)],
                                 dtype=np.uint32))
    w = kv.Worker(["192.0.2.1", "192.0.2.2"], key_max=100, service=SVC,
                  lib=lib)
    yield s0, s1, w
    w.close()
    s0.close()
    s1.close()


def test_lens_push_pull(two_lens):
    s0, s1, w = two_lens
    keys = [0, 3, 4, 49, 50, 51, 99]
    lens = [lens_of(k) for k in keys]
    vals = np.concatenate([np.full(lens_of(k), k, dtype=np.float32)
                           for k in keys])
    w.push(keys, vals, lens=lens)
    w.push(np.array(keys, dtype=np.uint64), vals,
           lens=np.array(lens, dtype=np.uint32))
    got = np.frombuffer(w.pull(keys, lens=lens), dtype=np.float32)
    assert got.tolist() == (2 * vals).tolist()
    buf = w.buffer(floats=sum(lens))
    w.pull(keys, buf, lens)
    assert np.frombuffer(buf, dtype=np.float32).tolist() == \
        (2 * vals).tolist()
    # The stores: one dimension, each key its stretch.
    assert np.asarray(s0.values).shape == (sum(map(lens_of, range(50))),)
    assert s0.value_len(4) == 5 and s1.value_len(99) == 5
    assert s1.value(51).tolist() == [102.0, 102.0]
    assert "x lens" in repr(s0)


def test_lens_refused(two_lens, lib):
    s0, s1, w = two_lens
    # Not the server's length: a pull is refused, a push dropped there.
    with pytest.raises(OSError) as e:
        w.pull([3], lens=[1])
    assert e.value.errno == errno.EREMOTEIO and e.value.server == 0
    w.push([61], [1.0], lens=[1])
    assert s1.value(61).tolist() == [0.0, 0.0]
    assert s1.stats().bad == 1
    # Zero, none at all (the worker has no val_len), the wrong count.
    with pytest.raises(OSError) as e:
        w.pull([3], lens=[0])
    assert e.value.errno == errno.EINVAL and e.value.server == -1
    with pytest.raises(OSError) as e:
        w.pull([3])
    assert e.value.errno == errno.EINVAL
    with pytest.raises(ValueError):
        w.pull([3, 4], lens=[4])
    with pytest.raises(ValueError):
        w.push([3], [1.0] * 4, lens=[-1])
    with pytest.raises(ValueError):
        w.push([3], [1.0] * 3, lens=[4])      # values not sum(lens)
    with pytest.raises(ValueError):
        kv.Server(0, 10, service=SVC, lens=[1] * 9, lib=lib)
    with pytest.raises(OSError) as e:
        kv.Server(0, 2, 4, SVC, lens=[1, 1], lib=lib)   # both
    assert e.value.errno == errno.EINVAL


def test_real_library_structures_and_errors():
    try:
        lib = _native.Lib()
    except OSError:
        pytest.skip("no libbx.so.0 (set BX_LIBBX)")
    assert lib.has_kv
    assert ctypes.sizeof(_native.KvWorkerCfg) == 64
    assert ctypes.sizeof(_native.KvServerCfg) == 64
    with pytest.raises(OSError) as e:
        kv.Worker([], key_max=10, val_len=1, service=SVC, lib=lib)
    assert e.value.errno == errno.EINVAL
    with pytest.raises(OSError) as e:
        kv.Server(5, 5, 1, SVC, lib=lib)
    assert e.value.errno == errno.EINVAL
    # Lengths and a val_len, or a length of 0: refused before /dev/bx.
    for vl, lens in ((1, [1, 1]), (0, [1, 0])):
        with pytest.raises(OSError) as e:
            kv.Server(0, 2, vl, SVC, lens=lens, lib=lib)
        assert e.value.errno == errno.EINVAL


# ---- asynchronous calls ------------------------------------------------------

def test_async_push_pull_futures(two):
    s0, s1, w = two
    keys = np.arange(0, 1000, 7, dtype=np.int64)
    futs = [w.push_async(keys, vals_for(keys)) for _ in range(3)]
    for f in futs:
        assert f.wait() is None
    got = w.pull_async(keys).wait()
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got.ravel(), vals_for(keys, 3.0))
    out = np.zeros(len(keys) * VL, dtype=np.float32)
    assert w.pull_async(keys, out).wait() is out
    np.testing.assert_array_equal(out, vals_for(keys, 3.0))
    # Never more lanes than asked for (2), however many calls wait.
    assert 1 <= len(w._lanes) <= 2


def test_async_futures_compose_with_torch(two):
    torch = pytest.importorskip("torch")
    _, _, w = two
    assert kv.future_type() is torch.futures.Future
    keys = torch.tensor([1, 2, 600], dtype=torch.int64)
    f = w.push_async(keys, torch.ones(3, VL))
    assert isinstance(f, torch.futures.Future)
    done = torch.futures.collect_all([f, w.push_async(keys, torch.ones(3, VL))])
    done.wait()
    pulled = w.pull_async(keys).then(lambda fut: fut.value().sum().item())
    assert pulled.wait() == 2 * 3 * VL


def test_async_errors_on_the_future(two, lib):
    _, _, w = two
    # Argument errors at once; the request's own on its future.
    with pytest.raises(ValueError):
        w.push_async([1, 2], [1.0])
    with pytest.raises(ValueError):
        w.pull_async([-1])
    lib.kv_fail(errno.ETIMEDOUT, 1)
    f = w.pull_async([1, 600])
    with pytest.raises(TimeoutError) as e:
        f.wait()
    assert e.value.server == 1
    w.push_async([1], [1.0] * VL).wait()      # the next call is fine again


class GatedKV(FakeKV):
    """A pull of key 0 blocks until a push of key 1 came: two calls of
    one worker that cannot finish one after the other."""

    def __init__(self):
        super().__init__()
        import threading
        self.gate = threading.Event()

    def kv_pull(self, w, keys, n, vals, lens=0):
        if n and ctypes.c_uint64.from_address(keys).value == 0:
            if not self.gate.wait(30):
                raise AssertionError("the push did not come meanwhile")
        super().kv_pull(w, keys, n, vals, lens)

    def kv_push(self, w, keys, n, vals, lens=0):
        super().kv_push(w, keys, n, vals, lens)
        if n and ctypes.c_uint64.from_address(keys).value == 1:
            self.gate.set()


def test_async_calls_overlap():
    lib = GatedKV()
    with kv.Server(0, 10, VL, SVC, lib=lib), \
            kv.Worker(["192.0.2.1"], key_max=10, val_len=VL, service=SVC,
                      lib=lib) as w:
        pull = w.pull_async([0])            # waits for the push below
        push = w.push_async([1], [2.0] * VL)
        push.wait()
        assert list(pull.wait()) == [0.0] * VL
        # With one lane the same two would wait for each other.
    lib = GatedKV()
    with kv.Server(0, 10, VL, SVC, lib=lib), \
            kv.Worker(["192.0.2.1"], key_max=10, val_len=VL, service=SVC,
                      lanes=1, lib=lib) as w:
        lib.gate.set()
        w.pull_async([0]).wait()
        assert len(w._lanes) == 1


class OneRegionKV(GatedKV):
    """A second libbx worker's region is refused (the module's region
    cap reached), as on a guest whose processes hold a quarter of its
    memory."""

    workers = 0

    def kv_worker_create(self, *a, **k):
        self.workers += 1
        if self.workers > 1:
            raise OSError(errno.ENOMEM, os.strerror(errno.ENOMEM))
        return super().kv_worker_create(*a, **k)


def test_async_lane_refused_shares_the_lanes():
    lib = OneRegionKV()
    with kv.Server(0, 10, VL, SVC, lib=lib), \
            kv.Worker(["192.0.2.1"], key_max=10, val_len=VL, service=SVC,
                      lib=lib) as w:
        lib.gate.set()
        first = w.push_async([1], [1.0] * VL)
        with pytest.warns(RuntimeWarning, match="no further lane"):
            futs = [w.pull_async([2]) for _ in range(4)]
        first.wait()
        assert all(list(f.wait()) == [0.0] * VL for f in futs)
        assert len(w._lanes) == 1
        assert w.lanes_refused.errno == errno.ENOMEM
        w.push_async([3], [1.0] * VL).wait()     # no further attempt


def test_async_region_out_and_close(two):
    _, _, w = two
    out = w.empty_array((2, VL))
    f = w.pull_async([3, 700], out)
    assert f.wait() is out
    assert w._lanes[0].own
    queued = [w.push_async([5], [1.0] * VL) for _ in range(20)]
    w.close()                       # runs what was queued, then ends
    assert all(f.done() for f in queued)
    with pytest.raises(ValueError):
        w.push_async([5], [1.0] * VL)


# ---- a handler per request -----------------------------------------------------

def test_handle_once_per_request_with_arrays(lib):
    calls = []

    def handle(keys, vals, lens):
        calls.append((keys.copy(), vals.copy(), lens.copy()))
        st = s.array().reshape(-1, VL)
        st[keys.astype(np.int64)] += 2 * vals.reshape(-1, VL)

    s = kv.Server(0, 100, VL, SVC, handle=handle, lib=lib)
    with s, kv.Worker(["192.0.2.1"], key_max=100, val_len=VL, service=SVC,
                      lib=lib) as w:
        keys = np.array([3, 7, 50], dtype=np.int64)
        w.push(keys, vals_for(keys))
        assert len(calls) == 1                      # once, not per key
        k, v, ln = calls[0]
        assert k.dtype == np.uint64 and list(k) == [3, 7, 50]
        assert v.dtype == np.float32 and (v == vals_for(keys)).all()
        assert ln.dtype == np.uint32 and list(ln) == [VL] * 3
        got = np.frombuffer(w.pull(keys), dtype=np.float32)
        assert (got == 2 * vals_for(keys)).all()


def test_handle_exception_and_arguments(lib):
    def bad(keys, vals, lens):
        raise RuntimeError("handler broke")

    with pytest.raises(ValueError, match="not both"):
        kv.Server(0, 10, VL, SVC, apply=lambda *a: None, handle=bad, lib=lib)
    s = kv.Server(0, 10, VL, SVC, handle=bad, lib=lib)
    with kv.Worker(["192.0.2.1"], key_max=10, val_len=VL, service=SVC,
                   lib=lib) as w:
        w.push([1], [1.0] * VL)
        with pytest.raises(RuntimeError, match="handler broke"):
            s.poll(0)
    s.close()


def test_handle_in_the_real_library():
    """The real libbx has the call (and refuses a server that serves)."""
    try:
        lib = _native.Lib(os.environ.get("BX_LIBBX"))
    except OSError:
        pytest.skip("no libbx.so.0 (set BX_LIBBX)")
    assert hasattr(lib._dll, "bxkv_server_set_handle")
