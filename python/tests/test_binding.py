# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Host tests of the binding: no /dev/bx needed. The real libbx.so.0
(BX_LIBBX, else the loader's search) for loading and errors; the fake
library (fakelib.py) for the region, buffers, futures and closing."""

import ctypes
import errno
import gc
import os

import pytest

import bx
from bx import _native
from bx._native import check, oserror

from fakelib import FakeLib


# ---- errors -------------------------------------------------------------------

@pytest.mark.parametrize("err,cls", [
    (errno.ENOENT, FileNotFoundError),
    (errno.ETIMEDOUT, TimeoutError),
    (errno.ECONNRESET, ConnectionResetError),
    (errno.ECONNREFUSED, ConnectionRefusedError),
    (errno.ECONNABORTED, ConnectionAbortedError),
    (errno.EACCES, PermissionError),
    (errno.EAGAIN, BlockingIOError),
])
def test_errno_subclass(err, cls):
    e = oserror(err)
    assert type(e) is cls
    assert e.errno == err and e.strerror == os.strerror(err)
    with pytest.raises(cls):
        check(-err)


@pytest.mark.parametrize("err", [errno.EBUSY, errno.EINVAL, errno.EHOSTDOWN,
                                 errno.EMSGSIZE, errno.ENXIO, errno.ECANCELED])
def test_errno_plain(err):
    with pytest.raises(OSError) as ei:
        check(-err)
    assert ei.value.errno == err


def test_check_passes_counts():
    assert check(0) == 0 and check(4096) == 4096


# ---- the real library -----------------------------------------------------------

def real_lib():
    try:
        return _native.Lib()
    except OSError as e:
        pytest.skip(f"libbx.so.0 not loadable: {e}")


def test_lib_loads_every_function():
    lib = real_lib()
    for name in _native._PROTOS:
        assert callable(getattr(lib, "_" + name[3:]))


def test_lib_missing_file():
    with pytest.raises(OSError) as ei:
        _native.Lib("/nonexistent/libbx.so.0")
    assert ei.value.errno == errno.ENOENT
    assert "BX_LIBBX" in str(ei.value)


def test_open_without_module():
    lib = real_lib()
    if os.path.exists("/dev/bx"):
        pytest.skip("/dev/bx exists here")
    with pytest.raises(FileNotFoundError):
        bx.Bx(lib=lib)


def test_structs_match_uapi():
    assert ctypes.sizeof(_native.Cqe) == 48
    assert _native.Cqe.res.offset == 8 and _native.Cqe.token.offset == 24
    assert _native.Cqe.resp_max.offset == 40


# ---- the binding over the fake ----------------------------------------------------

@pytest.fixture
def fake():
    return FakeLib()


@pytest.fixture
def b(fake):
    h = bx.Bx(1 << 20, lib=fake)
    yield h
    h.close()


def test_open_error_mapped(fake):
    fake.fail_next = errno.ENOMEM
    with pytest.raises(OSError) as ei:
        bx.Bx(lib=fake)
    assert ei.value.errno == errno.ENOMEM


def test_setup_error_closes(fake):
    fake.fail_next = 0
    with pytest.raises(OSError):
        bx.Bx(4095, lib=fake)
    assert fake.closed == [1] and not fake.handles


def test_close_twice_and_after(fake):
    h = bx.Bx(65536, lib=fake)
    h.close()
    h.close()
    assert h.closed and fake.closed == [1]
    for call in (lambda: h.alloc(64), lambda: h.peer("192.0.2.1"),
                 lambda: h.bind(5), lambda: h.region, h.fileno,
                 lambda: h.push(1, 5, b"x")):
        with pytest.raises(ValueError):
            call()


def test_context_manager(fake):
    with bx.Bx(65536, lib=fake) as h:
        assert not h.closed and h.region_size == 65536
    assert h.closed and fake.closed == [1]


def test_finalizer_closes(fake):
    bx.Bx(65536, lib=fake)
    gc.collect()
    assert fake.closed == [1]


def test_setup_twice(b):
    with pytest.raises(OSError) as ei:
        b.setup(65536)
    assert ei.value.errno == errno.EBUSY


def test_alloc_before_setup(fake):
    with bx.Bx(lib=fake) as h:
        with pytest.raises(OSError) as ei:
            h.alloc(64)
        assert ei.value.errno == errno.ENXIO
        with pytest.raises(ValueError):
            h.region


def test_alloc_full(b):
    with pytest.raises(MemoryError):
        b.alloc(2 << 20)


def test_buffer_is_region_memory(b):
    np = pytest.importorskip("numpy")
    buf = b.alloc(8192)
    assert buf.offset % 4096 == 0 and len(buf) == 8192
    assert buf.address == ctypes.addressof(
        ctypes.c_char.from_buffer(b.region)) + buf.offset
    a = np.frombuffer(buf, dtype=np.uint32)
    a[:] = np.arange(2048, dtype=np.uint32)
    r = np.frombuffer(b.region, dtype=np.uint32)
    assert (r[buf.offset // 4:buf.offset // 4 + 2048] == a).all()
    buf[0:4] = b"\x01\x02\x03\x04"
    assert a[0] == 0x04030201
    assert bytes(buf[:4]) == b"\x01\x02\x03\x04" and buf[1] == 2
    assert memoryview(buf).nbytes == 8192 and not memoryview(buf).readonly


def test_buffer_torch(b):
    torch = pytest.importorskip("torch")
    buf = b.alloc(4096)
    t = torch.frombuffer(buf, dtype=torch.float32)
    t[:] = 2.5
    np = pytest.importorskip("numpy")
    assert (np.frombuffer(buf, dtype=np.float32) == 2.5).all()
    # a tensor over the region is an operation's buffer as it is
    assert b._span(t)[:2] == (buf.address, 4096)


def test_small_alignment(b):
    x, y = b.alloc(10), b.alloc(10)
    assert x.offset % 64 == 0 and y.offset % 64 == 0 and x.offset != y.offset


def test_free(b, fake):
    buf = b.alloc(128)
    buf.free()
    buf.free()              # a second time: nothing
    assert not fake.handles[1]["bufs"]
    with pytest.raises(ValueError):
        b.push(1, 5, buf)   # freed: not an operation's buffer
    with b.alloc(64) as x:
        assert x.address in fake.handles[1]["bufs"]
    assert not fake.handles[1]["bufs"]


def test_outside_region(b):
    with pytest.raises(ValueError):
        b.pull(1, 5, b"req", bytearray(64))
    with pytest.raises(ValueError):
        b.recv(5, bytearray(64))


def test_sync_ops(b, fake):
    req = b.alloc(64)
    req[:5] = b"hello"
    resp = b.alloc(64)
    n = b.pull(1, 5, req[:5], resp)
    assert n == 5 and bytes(resp[:5]) == b"olleh"
    # bytes-like data is copied into a temporary buffer, freed after
    assert b.push(1, 5, b"abc") == 3
    assert b.pull(1, 5, b"xyz", resp) == 3 and bytes(resp[:3]) == b"zyx"
    assert len(fake.handles[1]["bufs"]) == 2
    # a view of the region is used as it is
    assert b.push(1, 5, b.region[4096:8192]) == 4096


def test_sync_error(b, fake):
    fake.fail_next = errno.ECONNRESET
    with pytest.raises(ConnectionResetError):
        b.push(1, 5, b"abc")
    assert not fake.handles[1]["bufs"]


def test_peer_and_bind(b, fake):
    assert b.peer("192.0.2.2") == 2
    with pytest.raises(OSError) as ei:
        b.peer("nonsense")
    assert ei.value.errno == errno.EINVAL
    b.bind(9)
    b.unbind(9)
    with pytest.raises(FileNotFoundError):
        b.unbind(9)
    assert b.info() == bx.Info(3, 1)


def test_async_futures(b, fake):
    resp = b.alloc(64)
    futs = [b.pull_async(1, 5, bytes([i, 0, 1]), resp) for i in range(10)]
    assert [f.result(5) for f in futs] == [3] * 10
    assert b.push_async(1, 5, b"x" * 100).result(5) == 100
    assert b.in_flight == 0
    assert len(fake.handles[1]["bufs"]) == 1    # temporaries freed


def test_async_submit_error(b, fake):
    fake.fail_next = errno.EBUSY
    with pytest.raises(OSError) as ei:
        b.push_async(1, 5, b"x")
    assert ei.value.errno == errno.EBUSY
    assert b.in_flight == 0 and not fake.handles[1]["bufs"]


def test_recv_async(b, fake):
    b.bind(7)
    buf = b.alloc(256)
    f = b.recv_async(7, buf)
    with pytest.raises(BufferError):
        buf.free()          # in use by the receive
    fake.deliver(1, 7, b"pushed")
    m = f.result(5)
    assert bytes(m.data) == b"pushed" and m.offset == buf.offset
    assert m.service == 7 and m.peer == 1 and not m.is_request
    with pytest.raises(ValueError):
        b.reply(m, b"no")
    f = b.recv_async(7, buf)
    fake.deliver(1, 7, b"req", token=77)
    m = f.result(5)
    assert m.is_request and m.token == 77 and m.resp_max == 512
    assert b.reply_async(m, b"answer").result(5) == 6
    buf.free()
    # unbinding cancels posted receives
    f = b.recv_async(7, b.alloc(64))
    b.unbind(7)
    with pytest.raises(OSError) as ei:
        f.result(5)
    assert ei.value.errno == errno.ECANCELED


def test_recv_unbound(b):
    with pytest.raises(OSError) as ei:
        b.recv_async(8, b.alloc(64))
    assert ei.value.errno == errno.ENOTCONN


def test_future_cannot_be_cancelled(b, fake):
    fake.hold = True
    f = b.push_async(1, 5, b"x")
    assert not f.cancel() and f.running()


def test_close_with_ops_in_flight(fake):
    h = bx.Bx(65536, lib=fake)
    fake.hold = True
    buf = h.alloc(4096)
    futs = [h.push_async(1, 5, buf) for _ in range(4)]
    done = []
    futs[0].add_done_callback(lambda f: done.append(f.exception()))
    h.close()
    for f in futs:
        with pytest.raises(OSError) as ei:
            f.result(0)
        assert ei.value.errno == errno.ECANCELED
    assert done[0].errno == errno.ECANCELED
    assert fake.closed == [1]


def test_views_outlive_close(fake):
    np = pytest.importorskip("numpy")
    h = bx.Bx(65536, lib=fake)
    buf = h.alloc(4096)
    a = np.frombuffer(buf, dtype=np.uint8)
    v = h.region[:16]
    a[:] = 9
    h.close()
    # the range now holds zeros instead of faulting
    assert (a == 0).all() and bytes(v) == bytes(16)
    a[:] = 1                # and takes writes
    buf.free()              # nothing: the handle freed it
    m = h._mapping or buf._bx_mapping
    assert m.placeholder
    del a, v, buf, m
    gc.collect()


def test_view_of_freed_buffer_outlives_close(fake):
    h = bx.Bx(65536, lib=fake)
    buf = h.alloc(4096)
    v = buf[0:8]
    buf.free()
    del buf
    h.close()
    assert bytes(v) == bytes(8)


def test_no_placeholder_without_views(fake):
    h = bx.Bx(65536, lib=fake)
    h.alloc(64)             # dropped at once
    m = h._mapping
    h.close()
    assert not m.placeholder
