# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""bx's Python binding: :class:`Bx`, :class:`Buffer`, :class:`Message`."""

from __future__ import annotations

import ctypes
import errno
import functools
import itertools
import threading
import weakref
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

from . import _arrays, _native
from ._native import oserror

__all__ = ["Bx", "Buffer", "Message", "Info"]

_lib_lock = threading.Lock()
_default_lib: Optional[_native.Lib] = None


def _get_lib() -> _native.Lib:
    global _default_lib
    with _lib_lock:
        if _default_lib is None:
            _default_lib = _native.Lib()
        return _default_lib


# ---- memory -----------------------------------------------------------------

class _Mapping:
    """The region's address range, shared by every object that points
    into it (the region's array, each :class:`Buffer`). When the handle
    closes while some of them live on, the range is filled with anonymous
    memory so that they read zeros instead of faulting; it is unmapped
    again once the last of them is gone."""

    def __init__(self, addr: int, size: int) -> None:
        self.addr = addr
        self.size = size
        self.placeholder = False

    def fill(self) -> None:
        libc = _libc()
        if libc is None:
            return
        PROT_RW, MAP_PRIVATE, MAP_ANON = 3, 0x02, 0x20
        MAP_FIXED_NOREPLACE = 0x100000
        p = libc.mmap(self.addr, self.size, PROT_RW,
                      MAP_PRIVATE | MAP_ANON | MAP_FIXED_NOREPLACE, -1, 0)
        if p == self.addr:
            self.placeholder = True
        elif p not in (None, ctypes.c_void_p(-1).value):
            libc.munmap(p, self.size)   # a kernel that took it as a hint

    def __del__(self) -> None:
        if self.placeholder:
            self.placeholder = False
            libc = _libc()
            if libc is not None:
                libc.munmap(self.addr, self.size)


@functools.lru_cache(maxsize=None)
def _libc() -> Optional[ctypes.CDLL]:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.restype = ctypes.c_int
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


class Buffer:
    """Memory inside a handle's region (:meth:`Bx.alloc`).

    A writable buffer object: ``memoryview(buf)``, ``numpy.frombuffer(buf,
    dtype)`` and ``torch.frombuffer(buf, dtype=...)`` all see the region's
    memory itself, without a copy; ``buf[i]``, ``buf[a:b]`` (a
    memoryview) and ``buf[a:b] = data`` work as on a bytearray, and
    ``len(buf)`` is its size. ``offset`` is its offset in the region,
    ``address`` its address. :meth:`free` returns it (also at the end of a
    ``with`` block); the handle's :meth:`Bx.close` frees all at once.

    Instances are ctypes arrays (``ctypes.c_ubyte * size``) made by
    :meth:`Bx.alloc`; do not create them directly.
    """

    offset: int
    address: int
    _owner: Any = None
    _inflight = 0
    __hash__ = object.__hash__      # ctypes arrays have none

    def __getitem__(self, key):  # type: ignore[override]
        return memoryview(self).cast("B")[key]

    def __setitem__(self, key, value) -> None:  # type: ignore[override]
        memoryview(self).cast("B")[key] = value

    def __bytes__(self) -> bytes:
        return memoryview(self).tobytes()

    def __repr__(self) -> str:
        return f"<bx.Buffer offset={self.offset} size={len(self)}>"

    def __enter__(self) -> "Buffer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()

    def free(self) -> None:
        """Give the buffer back to the region's allocator. Raises
        :class:`BufferError` while an asynchronous operation uses it;
        a second call does nothing."""
        owner = self._owner() if self._owner is not None else None
        if owner is not None:
            owner.free(self)


@functools.lru_cache(maxsize=1024)
def _buffer_type(size: int) -> type:
    return type("Buffer", (Buffer, ctypes.c_ubyte * size), {})


def _region_type(size: int) -> type:
    return ctypes.c_ubyte * size


# ---- results ------------------------------------------------------------------

@dataclass(frozen=True)
class Info:
    """What :meth:`Bx.info` reports: ``features`` (``BX_FEAT_*`` bits)
    and ``ndevs`` (RDMA devices bx has bound)."""
    features: int
    ndevs: int


@dataclass(frozen=True)
class Message:
    """A received push or pull request (:meth:`Bx.recv`).

    ``data`` is a memoryview of the message in the receive buffer (no
    copy: valid while that buffer is); ``offset`` its region offset.
    ``token`` is set for a pull request: answer it with :meth:`Bx.reply`
    (at most ``resp_max`` bytes); it is ``None`` for a push. ``copied``:
    bx moved the payload by CPU copy (at most ``Bx.eager_max`` bytes)."""
    service: int
    peer: int
    data: memoryview
    offset: int
    flags: int
    token: Optional[int]
    resp_max: int

    @property
    def is_request(self) -> bool:
        """A pull request, to be answered with :meth:`Bx.reply`."""
        return self.token is not None

    @property
    def copied(self) -> bool:
        return bool(self.flags & _native.CQE_F_COPIED)


BufferLike = Any
"""A :class:`Buffer`, a C-contiguous buffer object inside the region (a
slice of :attr:`Bx.region`, a numpy array over it, :meth:`Bx.empty`), a
torch tensor over it, or -- for data that is only sent -- any tensor,
array, ``__dlpack__`` or bytes-like object, contiguous or not, which is
copied into a temporary buffer of the region first (one memcpy or one
strided copy)."""


def _closed() -> ValueError:
    return ValueError("operation on a closed bx handle")


class _Op:
    """An asynchronous operation in flight: its future, what to make of
    its completion, and the buffers it keeps in use."""
    __slots__ = ("future", "kind", "bufs", "temp", "recv_buf", "keep")

    def __init__(self, future: Future, kind: str, bufs: tuple,
                 temp: Optional[Buffer], recv_buf: Any = None,
                 keep: tuple = ()) -> None:
        self.future = future
        self.kind = kind
        self.bufs = bufs
        self.temp = temp
        self.recv_buf = recv_buf
        self.keep = keep         # the caller's arrays: alive until done


# ---- the handle ---------------------------------------------------------------

class Bx:
    """One open ``/dev/bx`` (``bx_open()``), with its region once set up.

    ::

        with bx.Bx(region_size=64 << 20) as b:
            peer = b.peer("192.0.2.1")
            buf = b.alloc(1 << 20)
            numpy.frombuffer(buf, numpy.float32)[:] = 1.0
            b.push(peer, 7, buf)

    ``region_size`` (bytes, a multiple of 4096) sets the region up at
    once (:meth:`setup`), with ``cq_entries`` completion slots (a power
    of two, 8..32768: the bound on asynchronous operations in flight).

    Errors are the :class:`OSError` of libbx's errno, as the subclass
    Python has for it (``FileNotFoundError``: bx not loaded;
    ``TimeoutError``, ``ConnectionResetError``, ``ConnectionRefusedError``,
    plain ``OSError`` with ``errno.EBUSY``... see libbx(3)). A closed handle raises
    :class:`ValueError`, as a closed file does. Every method may be
    called from any thread, but not concurrently with :meth:`close`.

    Asynchronous operations (``*_async``) return a
    :class:`concurrent.futures.Future`; a thread of the handle reaps their
    completions (``bx_reap()``) from the first one on, and runs the
    futures' callbacks. Their buffers must stay allocated until the
    future is done (:meth:`Buffer.free` refuses meanwhile). That thread
    holds the handle: close it (or use ``with``) once asynchronous
    operations were used.

    ``lib`` is the library to call (:class:`bx._native.Lib`, by default
    ``libbx.so.0`` loaded once per process).
    """

    def __init__(self, region_size: Optional[int] = None,
                 cq_entries: int = 256, *, lib: Any = None) -> None:
        self._lib = lib if lib is not None else _get_lib()
        self._h: Optional[int] = None
        self._lock = threading.Lock()
        self._ops: Dict[int, _Op] = {}
        self._ids = itertools.count(1)
        self._reaper: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self._region_arr: Any = None
        self._mapping: Optional[_Mapping] = None
        self._bufs: "weakref.WeakValueDictionary[int, Buffer]" = \
            weakref.WeakValueDictionary()
        # Every Buffer made, freed or not, while it lives (or a view
        # of it does): close() must know whether memory is still seen.
        self._seen: "weakref.WeakSet[Buffer]" = weakref.WeakSet()
        self._h = self._lib.open()
        self._fin = weakref.finalize(self, Bx._release, self._lib, self._h)
        if region_size is not None:
            try:
                self.setup(region_size, cq_entries)
            except BaseException:
                self.close()
                raise

    @staticmethod
    def _release(lib: Any, h: int) -> None:
        lib.close(h)

    # -- lifetime --
    def __enter__(self) -> "Bx":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._h is None:
            return "<bx.Bx closed>"
        return f"<bx.Bx fd={self.fileno()} region={self.region_size}>"

    @property
    def closed(self) -> bool:
        return self._h is None

    def _handle(self) -> int:
        h = self._h
        if h is None:
            raise _closed()
        return h

    def close(self) -> None:
        """Close the handle (``bx_close()``); a second call does nothing.

        Asynchronous operations still in flight end: their futures fail
        with ``OSError(ECANCELED)`` -- bx cancels what is queued, and
        what is already on the wire ends without telling this process
        (a push's outcome is then unknown). Buffers and views of the
        region that outlive the handle read zeros from then on (the range
        is filled with anonymous memory), instead of faulting."""
        if self._h is None:
            return
        self._stop.set()
        if self._reaper is not None and \
                self._reaper is not threading.current_thread():
            self._reaper.join()
        self._reaper = None
        with self._lock:
            ops, self._ops = self._ops, {}
        for op in ops.values():
            if not op.future.done():
                op.future.set_exception(oserror(errno.ECANCELED))
        mapping = self._mapping
        self._fin()          # bx_close(): unmaps the region
        self._h = None
        if mapping is not None and self._exported():
            mapping.fill()
        self._region_arr = None
        self._mapping = None
        self._bufs = weakref.WeakValueDictionary()
        self._seen = weakref.WeakSet()

    def _exported(self) -> bool:
        """Whether anything still points into the region: a Buffer, or a
        view of :attr:`region` (each holds the region's array)."""
        import sys
        if len(self._seen):
            return True
        # self._region_arr and getrefcount's own argument.
        return self._region_arr is not None and \
            sys.getrefcount(self._region_arr) > 2

    def fileno(self) -> int:
        """The file descriptor, readable while completions wait
        (``bx_fd()``)."""
        return self._lib.fd(self._handle())

    def info(self) -> Info:
        """The module's features and bound RDMA devices
        (``bx_get_info()``)."""
        features, ndevs = self._lib.get_info(self._handle())
        return Info(features, ndevs)

    # -- region --
    def setup(self, region_size: int, cq_entries: int = 256) -> None:
        """Create and map the region and the completion ring
        (``bx_setup()``): ``EBUSY`` if done already, ``EINVAL`` for sizes
        out of range, ``ENOMEM`` past the module's cap or
        ``RLIMIT_MEMLOCK``."""
        h = self._handle()
        self._lib.setup(h, region_size, cq_entries)
        addr = self._lib.region(h)
        size = self._lib.region_size(h)
        self._mapping = _Mapping(addr, size)
        arr = _region_type(size).from_address(addr)
        arr._bx_mapping = self._mapping
        self._region_arr = arr

    @property
    def region(self) -> memoryview:
        """The whole region as a writable memoryview (format ``B``), for
        ``numpy.frombuffer`` / ``torch.frombuffer`` without copies.
        ``ValueError`` before :meth:`setup`."""
        self._handle()
        if self._region_arr is None:
            raise ValueError("no region: call setup() first")
        return memoryview(self._region_arr).cast("B")

    @property
    def region_size(self) -> int:
        """Bytes in the region (0 before :meth:`setup`)."""
        return self._lib.region_size(self._handle())

    @property
    def eager_max(self) -> int:
        """Payloads up to this size are copied by the CPU, larger ones
        move without copies."""
        return self._lib.eager_max(self._handle())

    def alloc(self, size: int) -> Buffer:
        """A :class:`Buffer` of ``size`` bytes in the region, 64-byte
        aligned (page-aligned from 4 KiB) (``bx_buf_alloc()``).
        ``MemoryError`` when the region is full (``ENOMEM``); ``OSError``
        ``ENXIO`` before :meth:`setup`."""
        h = self._handle()
        try:
            addr = self._lib.buf_alloc(h, size)
        except OSError as e:
            if e.errno == errno.ENOMEM:
                raise MemoryError(f"bx region full: no {size} bytes") from e
            raise
        buf = _buffer_type(size).from_address(addr)
        buf.offset = addr - self._mapping.addr
        buf.address = addr
        buf._owner = weakref.ref(self)
        buf._bx_mapping = self._mapping
        buf._inflight = 0
        self._bufs[addr] = buf
        self._seen.add(buf)
        return buf

    def free(self, buf: Buffer) -> None:
        """Free a :class:`Buffer` (``bx_buf_free()``); see
        :meth:`Buffer.free`; nothing once the handle is closed (which
        freed them all)."""
        h = self._h
        if h is None:
            return
        if getattr(buf, "_auto", False):
            raise ValueError("memory of empty(): freed with the last "
                             "tensor or array over it")
        with self._lock:
            if getattr(buf, "_inflight", 0):
                raise BufferError("bx buffer in use by an operation in flight")
            if self._bufs.get(buf.address) is not buf:
                return                     # freed already
            del self._bufs[buf.address]
        self._lib.buf_free(h, buf.address)

    # -- peers and services --
    def peer(self, addr: str) -> int:
        """The peer id of an IPv4 or IPv6 address (``bx_peer()``)."""
        return self._lib.peer(self._handle(), addr)

    def bind(self, service: int) -> None:
        """Receive what is sent to ``service`` on this host
        (``bx_bind()``): ``OSError`` ``EADDRINUSE``, ``EACCES`` (below
        1024 without ``CAP_NET_BIND_SERVICE``), ``EINVAL`` (0)."""
        self._lib.bind(self._handle(), service)

    def unbind(self, service: int) -> None:
        """Stop receiving on ``service``; posted receives end with
        ``ECANCELED``."""
        self._lib.unbind(self._handle(), service)

    # -- buffers of operations --
    def _span(self, obj: BufferLike, writable: bool = False
              ) -> Tuple[int, int, Optional[Buffer]]:
        """(address, length, Buffer or None) of a buffer in the region.
        Data outside it, read-only or not contiguous comes back with
        address -1: the caller copies it (once) unless it must be
        ``writable``, which refuses it."""
        if isinstance(obj, Buffer):
            if self._bufs.get(obj.address) is not obj:
                raise ValueError("bx buffer freed or of another handle")
            return obj.address, len(obj), obj
        np = _arrays.numpy()
        if np is not None and not isinstance(obj, np.ndarray) and \
                not _arrays.is_tensor(obj) and hasattr(obj, "__dlpack__") \
                and not _arrays._is_buffer(obj):
            obj = np.from_dlpack(obj)
        addr: Optional[int]
        if _arrays.is_tensor(obj):
            n = obj.element_size() * obj.nelement()
            ok = obj.is_contiguous() and obj.device.type == "cpu"
            addr = obj.data_ptr() if ok else None
            what = "tensor is not contiguous or not on the CPU"
        else:
            mv = memoryview(obj)
            n = mv.nbytes
            ok = mv.c_contiguous
            addr = None
            if ok and not mv.readonly and n:
                addr = ctypes.addressof(
                    ctypes.c_char.from_buffer(mv.cast("B")))
            what = "buffer is not C-contiguous"
        if writable and not ok:
            raise ValueError(what)
        m = self._mapping
        if m is None:
            raise oserror(errno.ENXIO)
        if addr is not None and m.addr <= addr and addr + n <= m.addr + m.size:
            return addr, n, None
        if writable:
            raise ValueError("buffer is not inside the bx region "
                             "(use Bx.alloc(), Bx.empty() or a view of "
                             "Bx.region)")
        return -1, n, None

    def _data(self, obj: BufferLike) -> Tuple[int, int, Optional[Buffer],
                                              Optional[Buffer]]:
        """_span() of data to send, copied into a temporary Buffer (the
        fourth item) when it lies outside the region: one memcpy (or one
        strided copy), never element by element."""
        addr, n, buf = self._span(obj)
        if addr >= 0:
            return addr, n, buf, None
        tmp = self.alloc(max(n, 1))
        try:
            _arrays.copy_into(tmp, obj)
        except BaseException:
            self.free(tmp)
            raise
        return tmp.address, n, tmp, tmp

    def empty(self, shape: Any, dtype: Any = None) -> Any:
        """A tensor (``dtype`` a ``torch.dtype``; ``None``:
        ``torch.float32``) or ndarray (a NumPy dtype or its name) of
        ``shape`` over a new :class:`Buffer`: operations use it without
        copies. The buffer is freed when the tensor or array and every
        view of it are gone (or at :meth:`close`)."""
        if dtype is None:
            import torch
            dtype = torch.float32
        return _arrays.empty_over(self._block, shape, dtype)

    def _block(self, nbytes: int) -> Buffer:
        buf = self.alloc(nbytes)
        buf._owner = None            # not Buffer.free(): the finalizer's
        buf._auto = True
        weakref.finalize(buf, Bx._release_block, weakref.ref(self),
                         buf.address)
        return buf

    @staticmethod
    def _release_block(ref: Any, addr: int) -> None:
        b = ref()
        if b is not None and b._h is not None:
            try:
                b._lib.buf_free(b._h, addr)
            except (OSError, ValueError):
                pass

    def _sync(self, tmp: Optional[Buffer], call: Any, *args: Any) -> int:
        """A synchronous call whose data may be the temporary copy
        ``tmp`` (_data()): freed after it, except after a TimeoutError,
        when the operation still runs in the background."""
        try:
            return call(*args)
        except TimeoutError:
            tmp = None
            raise
        finally:
            if tmp is not None:
                self.free(tmp)

    def _message(self, cqe: _native.Cqe) -> Message:
        data = self.region[cqe.off:cqe.off + max(cqe.res, 0)]
        token = cqe.token if cqe.flags & _native.CQE_F_REQUEST else None
        return Message(service=cqe.service, peer=cqe.peer, data=data,
                       offset=cqe.off, flags=cqe.flags, token=token,
                       resp_max=cqe.resp_max)

    # -- synchronous operations --
    #
    # timeout_ms: -1 waits until the operation ends (each has bx's own
    # deadline as well). On TimeoutError the operation still completes
    # in the background: its buffers must stay allocated (a temporary
    # copy of bytes-like data is left allocated then).

    def push(self, peer: int, service: int, data: BufferLike,
             timeout_ms: int = -1) -> int:
        """Deliver ``data`` to ``service`` on ``peer`` (``bx_push()``);
        returns the bytes sent. Sent again only when it certainly was not
        delivered; ``ConnectionResetError`` and the like leave its fate
        unknown (libbx(3), "Recovery")."""
        h = self._handle()
        addr, n, _, tmp = self._data(data)
        return self._sync(tmp, self._lib.push, h, peer, service, addr, n,
                          timeout_ms)

    def pull(self, peer: int, service: int, request: BufferLike,
             response: BufferLike, timeout_ms: int = -1) -> int:
        """Send ``request`` to ``service`` on ``peer`` and wait for the
        server's reply into ``response`` (a region buffer: its length is
        the capacity); returns the reply's size (``bx_pull()``). A
        request carries at most 4096 bytes (``EMSGSIZE``). Sent
        again after connection errors until the timeout: requests must be
        idempotent."""
        h = self._handle()
        raddr, cap, _ = self._span(response, writable=True)
        addr, n, _, tmp = self._data(request)
        return self._sync(tmp, self._lib.pull, h, peer, service, addr, n,
                          raddr, cap, timeout_ms)

    def recv(self, service: int, buf: BufferLike,
             timeout_ms: int = -1) -> Message:
        """Wait for one message on a bound ``service`` into ``buf``
        (``bx_recv()``). After ``TimeoutError`` the receive stays
        posted: a message that comes later still fills ``buf`` but is not
        reported (libbx drops the late completion) -- a server that must
        stop now and then uses :meth:`recv_async` instead."""
        h = self._handle()
        addr, cap, _ = self._span(buf, writable=True)
        cqe = self._lib.recv(h, service, addr, cap, timeout_ms)
        return self._message(cqe)

    def reply(self, request: Union[Message, int], data: BufferLike,
              timeout_ms: int = -1) -> int:
        """Answer a pull request (a :class:`Message` or its token) with
        ``data`` (``bx_reply()``); returns the bytes sent. ``EMSGSIZE``:
        more than the requester's buffer holds; ``ENOENT``: unknown or
        used token."""
        h = self._handle()
        token = _token(request)
        addr, n, _, tmp = self._data(data)
        return self._sync(tmp, self._lib.reply, h, token, addr, n,
                          timeout_ms)

    # -- asynchronous operations --
    def _submit(self, kind: str, bufs: tuple, tmp: Optional[Buffer],
                call, recv_buf: Any = None, keep: tuple = ()) -> Future:
        fut: Future = Future()
        fut.set_running_or_notify_cancel()   # bx cannot take it back
        ud = next(self._ids)
        op = _Op(fut, kind, bufs, tmp, recv_buf, keep)
        with self._lock:
            self._ops[ud] = op
            for b in bufs:
                if b is not None:
                    b._inflight += 1
        try:
            call(ud)
        except BaseException:
            self._finish(ud)
            if tmp is not None:
                self.free(tmp)
            raise
        self._start_reaper()
        return fut

    def _finish(self, ud: int) -> Optional[_Op]:
        with self._lock:
            op = self._ops.pop(ud, None)
            if op is not None:
                for b in op.bufs:
                    if b is not None:
                        b._inflight -= 1
        return op

    def push_async(self, peer: int, service: int,
                   data: BufferLike) -> "Future[int]":
        """:meth:`push` without waiting (``bx_push_async()``): a future
        of the bytes sent. No resend by the library: bx's own recovery
        only."""
        h = self._handle()
        addr, n, buf, tmp = self._data(data)
        return self._submit("push", (buf,), tmp, lambda ud:
                            self._lib.push_async(h, peer, service, addr, n,
                                                 ud), keep=(data,))

    def pull_async(self, peer: int, service: int, request: BufferLike,
                   response: BufferLike) -> "Future[int]":
        """:meth:`pull` without waiting (``bx_pull_async()``): a future
        of the reply's size."""
        h = self._handle()
        raddr, cap, rbuf = self._span(response, writable=True)
        addr, n, buf, tmp = self._data(request)
        return self._submit("pull", (buf, rbuf), tmp, lambda ud:
                            self._lib.pull_async(h, peer, service, addr, n,
                                                 raddr, cap, ud),
                            keep=(request, response))

    def recv_async(self, service: int, buf: BufferLike) -> "Future[Message]":
        """Post ``buf`` to receive one message on ``service``
        (``bx_recv_async()``): a future of the :class:`Message`;
        ``OSError(ECANCELED)`` when the service is unbound first."""
        h = self._handle()
        addr, cap, b = self._span(buf, writable=True)
        return self._submit("recv", (b,), None, lambda ud:
                            self._lib.recv_async(h, service, addr, cap, ud),
                            keep=(buf,))

    def reply_async(self, request: Union[Message, int],
                    data: BufferLike) -> "Future[int]":
        """:meth:`reply` without waiting (``bx_reply_async()``)."""
        h = self._handle()
        token = _token(request)
        addr, n, buf, tmp = self._data(data)
        return self._submit("reply", (buf,), tmp, lambda ud:
                            self._lib.reply_async(h, token, addr, n, ud),
                            keep=(data,))

    @property
    def in_flight(self) -> int:
        """Asynchronous operations whose futures are not done yet."""
        return len(self._ops)

    def _start_reaper(self) -> None:
        with self._lock:
            if self._reaper is not None or self._stop.is_set():
                return
            t = threading.Thread(target=self._reap_loop, daemon=True,
                                 name=f"bx-reaper-{self.fileno()}")
            self._reaper = t
        t.start()

    def _reap_loop(self) -> None:
        h = self._h
        while not self._stop.is_set():
            try:
                cqes = self._lib.reap(h, 64, 100)
            except OSError as e:
                with self._lock:
                    ops, self._ops = self._ops, {}
                for op in ops.values():
                    op.future.set_exception(e)
                return
            for cqe in cqes:
                self._complete(cqe)

    def _complete(self, cqe: _native.Cqe) -> None:
        op = self._finish(cqe.user_data)
        if op is None:
            return
        if op.temp is not None and self._h is not None:
            try:
                self.free(op.temp)
            except (OSError, ValueError):
                pass
        if cqe.res < 0:
            op.future.set_exception(oserror(-cqe.res))
        elif op.kind == "recv":
            op.future.set_result(self._message(cqe))
        else:
            op.future.set_result(cqe.res)


def _token(request: Union[Message, int]) -> int:
    if isinstance(request, Message):
        if request.token is None:
            raise ValueError("a push has no reply")
        return request.token
    return int(request)
