# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Host tests of tensors and arrays as they are (bx._arrays, bx.kv and
bx.Bx over the fake library): keys of any integer type (int64 tensors
included) without copies or in one vectorized step, negative keys
refused, values and out= as tensors and ndarrays used where they lie,
non-contiguous input copied once (push) or refused (out=), wrong types
and shapes refused, region-backed tensors from Worker.empty() and
Bx.empty(), and no element-wise path anywhere (arrays and tensors whose
Python-level element access raises go through every call)."""

import array
import ctypes
import gc

import pytest

np = pytest.importorskip("numpy")

import bx                                      # noqa: E402
from bx import _arrays, kv                     # noqa: E402

from fakelib import FakeKV, FakeLib            # noqa: E402

VL = 4
SVC = 40


def torch_or_skip():
    return pytest.importorskip("torch")


@pytest.fixture
def lib():
    return FakeKV()


@pytest.fixture
def two(lib):
    s0 = kv.Server(0, 500, VL, SVC, lib=lib)
    s1 = kv.Server(500, 1000, VL, SVC, lib=lib)
    w = kv.Worker(["192.0.2.1", "192.0.2.2"], key_max=1000, val_len=VL,
                  service=SVC, lib=lib)
    yield s0, s1, w
    w.close()
    s0.close()
    s1.close()


def vals_for(keys):
    k = np.asarray(keys, dtype=np.float32)[:, None]
    return (k + np.arange(VL, dtype=np.float32)).ravel()


# ---- element access that must not happen --------------------------------------

class NoElems(np.ndarray):
    """An ndarray whose elements cannot be reached from Python: any
    element-wise conversion of it fails the test."""

    def __iter__(self):
        raise AssertionError("iterated element by element")

    def __getitem__(self, i):
        raise AssertionError("indexed element by element")

    def tolist(self):
        raise AssertionError("tolist")

    def item(self, *a):
        raise AssertionError("item")


def no_elems(a):
    return np.asarray(a).view(NoElems)


def torch_no_elems(t):
    torch = torch_or_skip()

    class NoElemsT(torch.Tensor):
        def __iter__(self):
            raise AssertionError("iterated element by element")

        def __getitem__(self, i):
            raise AssertionError("indexed element by element")

        def tolist(self):
            raise AssertionError("tolist")

        def item(self):
            raise AssertionError("item")

    return t.as_subclass(NoElemsT)


# ---- keys -------------------------------------------------------------------------

def test_keys_int64_ndarray_no_copy():
    a = np.arange(0, 3000, 3, dtype=np.int64)
    c = _arrays.uints(a, 8, "keys")
    assert ctypes.addressof(c) == a.ctypes.data        # a view: same bits
    assert list(c[:3]) == [0, 3, 6] and len(c) == 1000


def test_keys_int64_tensor_no_copy():
    torch = torch_or_skip()
    t = torch.arange(0, 3000, 3, dtype=torch.int64)
    c = _arrays.uints(t, 8, "keys")
    assert ctypes.addressof(c) == t.data_ptr()
    assert c[999] == 2997


@pytest.mark.parametrize("dt", ["int8", "uint16", "int32", "uint32",
                                "uint64"])
def test_keys_every_integer_type(dt):
    a = np.arange(0, 100, dtype=dt)
    c = _arrays.uints(a, 8, "keys")
    assert list(c) == list(range(100))


def test_keys_kinds(two):
    torch = torch_or_skip()
    _, _, w = two
    keys = [3, 499, 500, 999]
    for k in (np.array(keys, dtype=np.int64), np.array(keys, np.uint64),
              np.array(keys, np.int32), torch.tensor(keys),
              torch.tensor(keys, dtype=torch.int32), array.array("q", keys),
              array.array("Q", keys), keys, tuple(keys), range(0, 0)):
        w.push(k, vals_for(list(k)))
    # Pushed 9 times (the empty range pushed nothing).
    assert np.array_equal(w.pull(np.array(keys)).ravel(),
                          9 * vals_for(keys))


@pytest.mark.parametrize("make", [
    lambda: np.array([1, -2], dtype=np.int64),
    lambda: [1, -2],
    lambda: array.array("q", [1, -2]),
])
def test_negative_keys_refused(two, make):
    _, _, w = two
    with pytest.raises(ValueError, match="negative|uint64"):
        w.push(make(), np.zeros(2 * VL, np.float32))


def test_negative_tensor_keys_refused(two):
    torch = torch_or_skip()
    _, _, w = two
    with pytest.raises(ValueError, match="negative"):
        w.pull(torch.tensor([5, -1]))


def test_bad_key_types(two):
    torch = torch_or_skip()
    _, _, w = two
    for k in (np.array([1.0]), torch.tensor([1.0]), torch.tensor([True]),
              [1.5]):
        with pytest.raises(TypeError, match="integers"):
            w.pull(k)
    with pytest.raises(ValueError, match="one dimension"):
        w.pull(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="one dimension"):
        w.pull(torch.zeros((2, 2), dtype=torch.int64))


def test_lens_any_integer_type(lib):
    torch = torch_or_skip()
    lens = torch.tensor([1 + k % 3 for k in range(10)], dtype=torch.int64)
    with kv.Server(0, 10, service=SVC, lens=lens, lib=lib) as s, \
            kv.Worker(["192.0.2.1"], key_max=10, service=SVC,
                      lib=lib) as w:
        keys = torch.tensor([1, 2, 9])
        ls = lens[keys]
        w.push(keys, torch.ones(int(ls.sum())), lens=ls)
        assert s.value(9).tolist() == [1.0]
        with pytest.raises(ValueError, match="negative"):
            w.pull(keys, lens=torch.tensor([1, -2, 1]))


# ---- values -------------------------------------------------------------------------

def test_tensor_values_in_and_out(two):
    torch = torch_or_skip()
    s0, s1, w = two
    keys = torch.tensor([1, 2, 700], dtype=torch.int64)
    v = torch.arange(3 * VL, dtype=torch.float32).view(3, VL)
    w.push(keys, v)                                # (n, val_len)
    w.push(keys, v.reshape(-1))                    # (n * val_len,)
    out = torch.zeros(3, VL)
    assert w.pull(keys, out) is out
    assert torch.equal(out, 2 * v)
    flat = torch.zeros(3 * VL)
    w.pull(keys, flat)
    assert torch.equal(flat, 2 * v.reshape(-1))
    # Without out=: the kind of the keys, shaped (n, val_len).
    got = w.pull(keys)
    assert isinstance(got, torch.Tensor) and got.shape == (3, VL)
    assert torch.equal(got, 2 * v)
    got = w.pull(keys.numpy())
    assert isinstance(got, np.ndarray) and got.shape == (3, VL)
    assert isinstance(w.pull([1, 2, 700]), array.array)
    # A tensor that requires grad is read as it is.
    w.push(keys, v.clone().requires_grad_(True))
    assert torch.equal(w.pull(keys), 3 * v)
    assert torch.equal(s1.tensor()[200], 3 * v[2])


def test_contiguous_values_used_where_they_lie():
    torch = torch_or_skip()
    t = torch.ones(1_600_000)
    m = _arrays.values(t, "float32", 1_600_000, False, "values")
    assert m.addr == t.data_ptr() and m.nbytes == 6_400_000
    a = np.ones(1_600_000, dtype=np.float32)
    m = _arrays.values(a, "float32", 1_600_000, True, "out")
    assert m.addr == a.ctypes.data


def test_non_contiguous_push_copied_once_out_refused(two):
    torch = torch_or_skip()
    _, _, w = two
    keys = [1, 2]
    big = torch.arange(2 * VL * 2, dtype=torch.float32).view(2 * VL, 2)
    col = big[:, 0]                                 # strided
    assert not col.is_contiguous()
    w.push(keys, col)
    assert torch.equal(w.pull(torch.tensor(keys)).reshape(-1), col)
    m = _arrays.values(col, "float32", 2 * VL, False, "values")
    assert m.addr != col.data_ptr() and m.keep.is_contiguous()
    a = np.arange(4 * VL, dtype=np.float32)[::2]
    w.push([3, 4], a)
    assert np.array_equal(w.pull(np.array([3, 4])).ravel(), a)
    with pytest.raises(ValueError, match="not contiguous"):
        w.pull(keys, torch.zeros(2 * VL, 2)[:, 0])
    with pytest.raises(ValueError, match="not contiguous"):
        w.pull(keys, np.zeros(4 * VL, np.float32)[::2])
    # A transposed (n, val_len) is (val_len, n) in memory: refused too.
    with pytest.raises(ValueError):
        w.pull(keys, torch.zeros(VL, 2).t())


def test_wrong_type_and_shape(two):
    torch = torch_or_skip()
    _, _, w = two
    keys = torch.tensor([1, 2])
    with pytest.raises(TypeError, match="float32 expected, not "
                       "torch.float64"):
        w.pull(keys, torch.zeros(2, VL, dtype=torch.float64))
    with pytest.raises(TypeError, match="float32"):
        w.push(keys, torch.zeros(2, VL, dtype=torch.float16))
    with pytest.raises(TypeError, match="float32 expected, not int32"):
        w.pull(keys, np.zeros((2, VL), np.int32))
    with pytest.raises(ValueError, match=r"shape \(4, 2\)"):
        w.pull(keys, torch.zeros(VL, 2))           # right size, wrong shape
    with pytest.raises(ValueError, match="shape"):
        w.pull(keys, np.zeros(2 * VL + 1, np.float32))
    with pytest.raises(ValueError, match="shape"):
        w.push(keys, torch.zeros(3, VL))
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(2 * VL, np.float32)
        ro.flags.writeable = False
        w.pull(keys, ro)
    with pytest.raises(TypeError, match="writable"):
        w.pull(keys, [0.0] * 2 * VL)


def test_dlpack_values(two):
    torch = torch_or_skip()
    _, _, w = two

    class Capsule:
        """Only __dlpack__: neither a tensor nor a buffer."""

        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    w.push(Capsule(torch.tensor([5, 6])), Capsule(torch.ones(2 * VL)))
    assert np.array_equal(w.pull(np.array([5, 6])).ravel(),
                          np.ones(2 * VL))


def test_no_element_wise_path(two):
    """Keys and values of 1.6 M floats whose elements Python cannot
    reach: only whole-array operations happen (no loop, no tolist)."""
    torch = torch_or_skip()
    _, _, w = two
    keys = no_elems(np.arange(0, 1000, 10, dtype=np.int64))
    vals = no_elems(np.ones(100 * VL, np.float32))
    w.push(keys, vals)
    out = no_elems(np.zeros(100 * VL, np.float32))
    w.pull(keys, out)
    tk = torch_no_elems(torch.arange(0, 1000, 10))
    tv = torch_no_elems(torch.ones(100, VL))
    w.push(tk, tv)
    w.pull(tk, torch_no_elems(torch.zeros(100, VL)))
    # Big ones: conversion only (the fake server applies per element).
    n = 400_000
    big_k = torch_no_elems(torch.arange(n))
    big_v = torch_no_elems(torch.ones(n, VL))
    assert len(_arrays.uints(big_k, 8, "keys")) == n
    assert _arrays.values(big_v, "float32", n * VL, False, "values",
                          (n, VL)).addr == big_v.data_ptr()


def test_no_torch_import_needed():
    """The package works with NumPy alone: torch is never imported by
    bx itself for arrays (a process without torch stays without)."""
    import subprocess
    import sys
    code = ("import sys, numpy as np; from bx import kv, _arrays; "
            "c = _arrays.uints(np.arange(3, dtype=np.int64), 8, 'k'); "
            "m = _arrays.values([1.0, 2.0], 'float32', 2, False, 'v'); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


# ---- region-backed tensors and arrays ------------------------------------------

def region_of(lib, w):
    d = lib.handles[lib.kv[w._w]["h"]]
    return d["region"], d["region"] + d["size"]


def test_worker_empty_is_region_memory(two, lib):
    torch = torch_or_skip()
    _, _, w = two
    lo, hi = region_of(lib, w)
    t = w.empty((3, VL))
    assert t.dtype == torch.float32 and t.shape == (3, VL)
    assert lo <= t.data_ptr() < hi
    keys = torch.tensor([1, 2, 600])
    w.push(keys, torch.full((3, VL), 2.0))
    assert w.pull(keys, t) is t and (t == 2.0).all()
    a = w.empty_array((3, VL))
    assert a.dtype == np.float32 and lo <= a.ctypes.data < hi
    w.pull(keys, a)
    assert (a == 2.0).all()
    nb = len(lib.handles[lib.kv[w._w]["h"]]["bufs"])
    del t, a
    gc.collect()
    assert len(lib.handles[lib.kv[w._w]["h"]]["bufs"]) == nb - 2
    h = w.empty(5, dtype=torch.float16)
    assert h.dtype == torch.float16 and lo <= h.data_ptr() < hi


def test_worker_empty_views_outlive_close(lib):
    torch_or_skip()
    w = kv.Worker(["192.0.2.1"], key_max=8, val_len=2, service=SVC, lib=lib)
    t = w.empty((2, 2))
    t.fill_(3.0)
    w.close()
    assert t.sum().item() == 0.0       # zeros, not a fault
    del t
    gc.collect()


def test_server_tensor_and_array(lib):
    torch = torch_or_skip()
    with kv.Server(0, 4, 2, SVC, lib=lib) as s:
        s.tensor().copy_(torch.arange(8, dtype=torch.float32).view(4, 2))
        assert s.array()[3].tolist() == [6.0, 7.0]
        assert s.value(1).tolist() == [2.0, 3.0]


# ---- bx core's buffers ---------------------------------------------------------------

@pytest.fixture
def b():
    fake = FakeLib()
    h = bx.Bx(1 << 20, lib=fake)
    yield h, fake
    h.close()


def test_core_tensor_outside_region_sent(b):
    torch = torch_or_skip()
    h, fake = b
    resp = h.alloc(64)
    t = torch.arange(4, dtype=torch.int32)        # not in the region
    assert h.push(1, 5, t) == 16
    assert h.pull(1, 5, t, resp) == 16
    assert bytes(resp[:16]) == t.numpy().tobytes()[::-1]
    # Non-contiguous: one strided copy into the temporary buffer.
    col = torch.arange(8, dtype=torch.int32).view(4, 2)[:, 1]
    assert h.pull(1, 5, col, resp) == 16
    assert bytes(resp[:16]) == col.contiguous().numpy().tobytes()[::-1]
    a = np.arange(8, dtype=np.int16)[::2]
    assert h.pull(1, 5, a, resp) == 8
    assert bytes(resp[:8]) == np.ascontiguousarray(a).tobytes()[::-1]
    assert len(fake.handles[1]["bufs"]) == 1     # temporaries freed
    with pytest.raises(ValueError, match="contiguous"):
        h.recv(5, torch.zeros(8, 2)[:, 0])


def test_core_empty(b):
    torch = torch_or_skip()
    h, fake = b
    t = h.empty((4, 4), dtype=torch.int32)
    req = h.empty(8, dtype="uint8")
    req[:] = np.arange(8, dtype=np.uint8)
    assert h._span(t)[0] == t.data_ptr()          # used as it is
    assert h.pull(1, 5, req, t) == 8
    assert bytes(t.numpy().tobytes()[:8]) == bytes(range(8))[::-1]
    f = h.pull_async(1, 5, req, t)
    assert f.result() == 8
    n = len(fake.handles[1]["bufs"])
    del t, req, f
    gc.collect()
    assert len(fake.handles[1]["bufs"]) == n - 2
