# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""bx.kv: libbx's key-value layer (``bxkv``, ``<bx/bxkv.h>``) in the manner
of ps-lite: servers that each own a range of keys, workers that push and
pull many keys at once, each call split per server and sent in parallel.

Every key has ``val_len`` float32 values, or, ps-lite's ``lens``, a
length of its own: a server given ``lens`` (one per key of its range)
stores each key's, and a worker's calls then name the keys' lengths
(``lens=``, which must be the servers'). Keys are strictly ascending
integers of any type -- an int64 tensor or array (torch's index type) is
used as it is, other types converted in one vectorized step, negative
ones refused. Values are float32 torch tensors, NumPy arrays,
``__dlpack__`` objects or buffers (``array.array('f')``, a
:meth:`Worker.buffer`), ``len(keys) * val_len`` of them, flat or shaped
``(len(keys), val_len)``, key ``keys[i]`` owning
``values[i * val_len:(i + 1) * val_len]`` (with ``lens``: ``sum(lens)``
of them, key ``keys[i]`` the ``lens[i]`` after those of the keys before
it). They are used where they lie, never element by element: libbx
copies them once, or for a pull into the worker's region
(:meth:`Worker.empty`) not at all::

    import numpy as np
    from bx import kv

    # on each server host (server s of N owns the s-th range)
    with kv.Server(begin=0, end=500_000, val_len=16, service=40) as srv:
        srv.array()[:] = 1.0         # numpy view of the store, no copy
        srv.start()                  # serves from a thread of its own
        ...

    # on a worker
    with kv.Worker(["192.0.2.1", "192.0.2.2"], key_max=1_000_000,
                   val_len=16, service=40) as w:
        keys = np.array([3, 499_999, 500_000])     # int64
        w.push(keys, np.ones((3, 16), dtype=np.float32))
        vals = w.pull(keys)                        # a new (3, 16) array
        out = w.empty((3, 16))                     # a tensor in the region:
        w.pull(keys, out)                          # no copy at all

    # keys of lengths of their own (an embedding row and a bias, say)
    kv.Server(0, 1000, service=42, lens=[8 if k % 2 else 1
                                         for k in range(1000)])
    w.push([0, 1], np.ones(9, dtype=np.float32), lens=[1, 8])

Recovery is bx's (Documentation/bx.rst, "Key-value layer"): a push
request is applied exactly once across reconnects, or the call fails; a
pull is sent again after a connection failure until the deadline. A
failed call raises :class:`OSError` (as Python's subclass for the errno)
whose ``server`` attribute is the index of the server whose request
failed (-1: none). Pushes to the other servers of that call may have been
applied.
"""

from __future__ import annotations

import array
import ctypes
import functools
import itertools
import queue
import sys
import threading
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

from . import _arrays, _native
from .core import _get_lib, _Mapping
from .rendezvous import Rendezvous, ServerInfo, even_bounds, local_address

__all__ = ["Server", "Worker", "ServerStats", "KVBuffer", "Rendezvous",
           "ServerInfo", "even_bounds", "local_address", "future_type"]

PAGE = 4096

ApplyFn = Callable[[int, memoryview, memoryview], None]
HandleFn = Callable[[Any, Any, Any], None]


def future_type() -> type:
    """The future type of :meth:`Worker.push_async` and
    :meth:`Worker.pull_async`: ``torch.futures.Future`` when
    torch can be imported -- ``torch.futures.collect_all``, ``wait_all``
    and ``then`` compose with them --, else
    ``concurrent.futures.Future``. Decided once per process."""
    return _future_type()


@functools.lru_cache(maxsize=1)
def _future_type() -> type:
    try:
        import torch.futures
    except ImportError:
        import concurrent.futures
        return concurrent.futures.Future
    return torch.futures.Future


@dataclass(frozen=True)
class ServerStats:
    """A server's counters (``struct bxkv_server_stats``)."""
    pulls: int
    pushes: int
    keys_pulled: int
    keys_pushed: int
    zero_copy: int
    parked: int
    bad: int
    errors: int


def _placeholder(arrays: List[Any]) -> None:
    """After the memory under ``arrays`` (ctypes arrays, and whatever views
    of them live on) was unmapped: map anonymous memory over their pages
    so that they read zeros instead of faulting; unmapped again with the
    last of them (each holds the one mapping)."""
    if not arrays:
        return
    lo = min(ctypes.addressof(a) for a in arrays) // PAGE * PAGE
    hi = max(ctypes.addressof(a) + ctypes.sizeof(a) for a in arrays)
    m = _Mapping(lo, (hi - lo + PAGE - 1) // PAGE * PAGE)
    m.fill()
    for a in arrays:
        a._mapping = m


def _views_alive(arr: Any) -> bool:
    """Whether anything but its owner (and getrefcount's argument) holds
    ``arr``: a memoryview, a NumPy array over it."""
    return arr is not None and sys.getrefcount(arr) > 3


def _uints(vals: Any, ctype: Any, what: str) -> Any:
    """A C array of ``ctype`` (``c_uint32``, ``c_uint64``) for ``vals``
    (:func:`bx._arrays.uints`: the caller's memory when it is contiguous
    and of that width, else one vectorized conversion)."""
    return _arrays.uints(vals, ctypes.sizeof(ctype), what)


def _total(cl: Any) -> int:
    """The sum of a C array of lengths, without a Python loop when NumPy
    is there."""
    np = _arrays.numpy()
    if np is None or not len(cl):
        return sum(cl)
    return int(np.frombuffer(cl, dtype=np.uint32).sum(dtype=np.uint64))


def _offsets(cl: Any) -> Any:
    """0 and the running sums of lengths (a key's floats start there)."""
    np = _arrays.numpy()
    if np is None:
        return array.array("Q", itertools.chain(
            (0,), itertools.accumulate(cl)))
    off = np.zeros(len(cl) + 1, dtype=np.uint64)
    np.cumsum(np.frombuffer(cl, dtype=np.uint32), out=off[1:])
    return off


class Server:
    """A key-value server (``bxkv_server_create()``): keys
    ``[begin, end)``, ``val_len`` floats each, or with ``lens`` (``end -
    begin`` lengths, each >= 1; then ``val_len`` is 0) key ``begin + i``
    ``lens[i]`` floats; all 0 at first. Pulls come to ``service``, pushes
    to ``service + 1`` (both bound here, so one server per service number
    and host).

    A push is summed into the stored values, or, with ``apply``, handed
    to ``apply(key, dst, src)`` per key (memoryviews of ``val_len``
    floats, format ``f``: ``dst`` the stored values to update, ``src``
    the pushed ones), e.g. an SGD step. It runs in the serving thread; an
    exception in it is kept and raised by the next :meth:`poll`,
    :meth:`stop` or :meth:`close` (the key's values stay as ``apply``
    left them).

    With ``handle``, each push request is handed to ``handle(keys, vals,
    lens)`` whole, once per request (``bxkv_server_set_handle()``):
    NumPy arrays (memoryviews without NumPy) of its keys (uint64,
    ascending), their values (float32, key after key) and each key's
    length (uint32), over the request's own memory, valid during the
    call only; it updates the store itself (:meth:`array`, e.g.
    ``store[keys - begin] += vals.reshape(-1, val_len)``) or keeps what it
    needs (a step's aggregate). Exceptions as for ``apply``; not both.

    ``msg_max``, ``nrecv``, ``npush``, ``nreply``: ``struct
    bxkv_server_cfg`` (0: its defaults); the workers' ``msg_max`` must be
    the same.
    """

    def __init__(self, begin: int, end: int, val_len: int = 0,
                 service: int = 0, *, lens: Any = None, msg_max: int = 0,
                 nrecv: int = 0, npush: int = 0, nreply: int = 0,
                 apply: Optional[ApplyFn] = None,
                 handle: Optional[HandleFn] = None, lib: Any = None) -> None:
        if apply is not None and handle is not None:
            raise ValueError("apply or handle, not both")
        self._lib = lib if lib is not None else _get_lib()
        self.begin, self.end, self.val_len = begin, end, val_len
        self.service = service
        self._apply = apply
        self._apply_err: Optional[BaseException] = None
        self._cfn = None
        # Per-key lengths: key begin + i at floats [off[i], off[i + 1]).
        self._off: Optional[array.array] = None
        cl = None
        if lens is not None:
            cl = _uints(lens, ctypes.c_uint32, "lens")
            if len(cl) != end - begin:
                raise ValueError(f"lens: {len(cl)} lengths, "
                                 f"{end - begin} keys")
            self._off = _offsets(cl)
        if apply is not None:
            self._cfn = _native.KV_APPLY(self._call_apply)
        self._s: Optional[int] = self._lib.kv_server_create(
            begin, end, val_len, service, msg_max, nrecv, npush, nreply,
            self._cfn, cl)
        self._fin = weakref.finalize(self, self._lib.kv_server_destroy,
                                     self._s)
        self._handle_fn = handle
        self._hfn = None
        if handle is not None:
            self._hfn = _native.KV_HANDLE(self._call_handle)
            try:
                self._lib.kv_server_set_handle(self._s, self._hfn)
            except BaseException:
                self._fin()
                raise
        n = int(self._off[-1]) if self._off is not None else \
            (end - begin) * val_len
        addr = self._lib.kv_server_value(self._s, begin)
        self._store: Any = (ctypes.c_float * n).from_address(addr)
        self._running = False

    def _call_apply(self, key, dst, src, n, _arg) -> None:
        try:
            d = (ctypes.c_float * n).from_address(
                ctypes.addressof(dst.contents))
            s = (ctypes.c_float * n).from_address(
                ctypes.addressof(src.contents))
            self._apply(key, memoryview(d).cast("B").cast("f"),
                        memoryview(s).cast("B").cast("f"))
        except BaseException as e:   # raised in the caller's thread
            if self._apply_err is None:
                self._apply_err = e

    def _call_handle(self, _s, p, _arg) -> None:
        try:
            r = p.contents
            n, nv = r.nkeys, r.nvals
            keys = (ctypes.c_uint64 * n).from_address(
                ctypes.addressof(r.keys.contents)) if n else \
                (ctypes.c_uint64 * 0)()
            lens = (ctypes.c_uint32 * n).from_address(
                ctypes.addressof(r.lens.contents)) if n else \
                (ctypes.c_uint32 * 0)()
            vals = (ctypes.c_float * nv).from_address(
                ctypes.addressof(r.vals.contents)) if nv else \
                (ctypes.c_float * 0)()
            np = _arrays.numpy()
            if np is not None:
                args = (np.frombuffer(keys, dtype=np.uint64),
                        np.frombuffer(vals, dtype=np.float32),
                        np.frombuffer(lens, dtype=np.uint32))
            else:
                args = tuple(memoryview(a).cast("B").cast(c)
                             for a, c in ((keys, "Q"), (vals, "f"),
                                          (lens, "I")))
            self._handle_fn(*args)
        except BaseException as e:   # raised in the caller's thread
            if self._apply_err is None:
                self._apply_err = e

    def _raise_apply(self) -> None:
        e, self._apply_err = self._apply_err, None
        if e is not None:
            raise e

    def _handle(self) -> int:
        if self._s is None:
            raise ValueError("bx.kv.Server is closed")
        return self._s

    @property
    def values(self) -> memoryview:
        """The store: a writable memoryview of ``(end - begin, val_len)``
        floats (format ``f``), key ``begin + i`` in row ``i``; with
        ``lens``, of all the keys' floats back to back (one dimension).
        NumPy: ``numpy.asarray(srv.values)``. Set the initial values
        before serving; not synchronized with serving."""
        self._handle()
        mv = memoryview(self._store).cast("B")
        if self._off is not None:
            return mv.cast("f")
        return mv.cast("f", (self.end - self.begin, self.val_len))

    def array(self) -> Any:
        """:attr:`values` as a NumPy array, ``(end - begin, val_len)``
        (one dimension with ``lens``): the store itself, no copy."""
        np = _arrays.numpy()
        if np is None:
            raise TypeError("Server.array: no NumPy")
        return np.asarray(self.values)

    def tensor(self) -> Any:
        """:attr:`values` as a torch tensor of float32, shaped as
        :meth:`array`: the store itself, no copy (``torch.frombuffer``).
        Set the initial values with it, e.g. ``srv.tensor().copy_(t)``."""
        import torch
        v = self.values
        return torch.frombuffer(v.cast("B"), dtype=torch.float32).view(
            v.shape)

    def value_len(self, key: int) -> int:
        """How many floats ``key`` has."""
        if not self.begin <= key < self.end:
            raise KeyError(key)
        if self._off is None:
            return self.val_len
        i = key - self.begin
        return int(self._off[i + 1] - self._off[i])

    def value(self, key: int) -> memoryview:
        """The floats of ``key`` (a row of :attr:`values`, or its
        stretch of them with ``lens``)."""
        n = self.value_len(key)
        self._handle()
        i = key - self.begin
        i = int(self._off[i]) if self._off is not None else \
            i * self.val_len
        return memoryview(self._store).cast("B").cast("f")[i:i + n]

    def start(self) -> None:
        """Serve from a thread of libbx's own until :meth:`stop`."""
        self._lib.kv_server_start(self._handle())
        self._running = True

    def stop(self) -> None:
        """End the serving thread (nothing if none runs)."""
        if self._s is not None:
            self._lib.kv_server_stop(self._s)
        self._running = False
        self._raise_apply()

    def poll(self, timeout_ms: int = -1) -> int:
        """Serve what has arrived, waiting up to ``timeout_ms`` (-1: until
        something completes); the number of completions handled.
        ``OSError`` ``EBUSY`` while :meth:`start`'s thread runs."""
        n = self._lib.kv_server_poll(self._handle(), timeout_ms)
        self._raise_apply()
        return n

    def stats(self) -> ServerStats:
        return ServerStats(**self._lib.kv_server_stats(self._handle()))

    @property
    def closed(self) -> bool:
        return self._s is None

    def close(self) -> None:
        """Stop serving, unbind, free. Views of :attr:`values` that live
        on read zeros from then on."""
        if self._s is None:
            return
        try:
            self._lib.kv_server_stop(self._s)
        except OSError:
            pass
        store, self._store = self._store, None
        alive = _views_alive(store)
        self._fin()
        self._s = None
        if alive:
            _placeholder([store])
        self._raise_apply()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._s is None else \
            ("serving" if self._running else "idle")
        vl = self.val_len if self._off is None else "lens"
        return (f"<bx.kv.Server [{self.begin}, {self.end}) x {vl} "
                f"service={self.service} {state}>")


class KVBuffer:
    """Float32 memory in a worker's bx region (:meth:`Worker.buffer`): a
    pull into it lands there directly. A writable buffer object (format
    ``f``): ``numpy.frombuffer(buf, numpy.float32)`` is a view of it.
    :meth:`free` returns it (also at the end of a ``with`` block).

    Instances are ctypes arrays (``ctypes.c_float * n``) made by
    :meth:`Worker.buffer`; do not create them directly."""

    _worker: Any = None
    __hash__ = object.__hash__      # ctypes arrays have none

    def free(self) -> None:
        """Give it back (a second call: ``ValueError``)."""
        w = self._worker() if self._worker is not None else None
        if w is not None:
            w.free(self)

    def __enter__(self) -> "KVBuffer":
        return self

    def __exit__(self, *exc: Any) -> None:
        w = self._worker() if self._worker is not None else None
        if w is not None and not w.closed and \
                w._bufs.get(ctypes.addressof(self)) is self:
            w.free(self)

    def __repr__(self) -> str:
        return f"<bx.kv.KVBuffer floats={len(self)}>"  # type: ignore


@functools.lru_cache(maxsize=1024)
def _kvbuffer_type(n: int) -> type:
    return type("KVBuffer", (KVBuffer, ctypes.c_float * n), {})


class _Block(KVBuffer):
    """Bytes of a worker's region under an :meth:`Worker.empty` tensor
    or array: freed when the last of them is gone."""

    def free(self) -> None:
        raise ValueError("freed with the last tensor or array over it")

    def __exit__(self, *exc: Any) -> None:
        pass


@functools.lru_cache(maxsize=1024)
def _block_type(n: int) -> type:
    return type("_Block", (_Block, ctypes.c_ubyte * n), {})


class _Lane:
    """One thread and the libbx worker it calls (``bxkv`` serializes the
    calls of a worker): the worker's own (``own``: under its lock, shared
    with the synchronous calls) or one of its own, which the thread
    destroys when it ends. Runs the tasks of its queue in order; ``None``
    ends it. It holds the worker weakly: a worker collected unclosed
    fails what is still queued."""

    def __init__(self, owner: "Worker", handle: int, own: bool) -> None:
        self.handle, self.own, self.lib = handle, own, owner._lib
        self.pending = 0            # queued and running, under owner._alock
        self.q: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run,
                                       args=(weakref.ref(owner),),
                                       name="bx.kv lane", daemon=True)
        self.thread.start()

    def _run(self, ref: Any) -> None:
        while True:
            task = self.q.get()
            if task is None:
                break
            fut, fn, k, vals, cl, result = task
            err: Optional[BaseException] = None
            owner = ref()
            try:
                if owner is None:
                    raise ValueError("bx.kv.Worker is closed")
                if self.own:
                    owner._call(fn, k, vals, cl)
                else:
                    owner._call_on(self.handle, fn, k, vals, cl)
                with owner._alock:
                    self.pending -= 1
            except BaseException as e:      # the future carries it
                err = e
                if owner is not None:
                    with owner._alock:
                        self.pending -= 1
            del owner
            if err is None:
                fut.set_result(result)
            else:
                fut.set_exception(err)
        if not self.own:
            self.lib.kv_worker_destroy(self.handle)

    @staticmethod
    def stop_all(lanes: "List[_Lane]", join: bool) -> None:
        """End ``lanes`` (emptied) once they ran what is queued."""
        stopping = list(lanes)
        lanes.clear()
        for lane in stopping:
            lane.q.put(None)
        if join:
            for lane in stopping:
                lane.thread.join()


class Worker:
    """A key-value worker (``bxkv_worker_create()``).

    ``servers``: their addresses, server 0 first. The partition: server
    ``s`` owns the ``s``-th of ``len(servers)`` even parts of ``[0,
    key_max)``, or ``[bounds[s], bounds[s + 1])`` with ``bounds``
    (``len(servers) + 1`` ascending keys). ``val_len``, ``service`` and
    ``msg_max`` are the servers'. ``timeout_ms``: each call's deadline
    (0: 30 s); ``max_inflight``: requests in flight per server (0: 8);
    ``region_size``: bytes of the worker's bx region (0: 64 MiB).
    ``val_len`` may be 0 if every call names its keys' ``lens``.

    The synchronous calls of one worker are serialized (a lock).
    :meth:`push_async` and :meth:`pull_async` return at once with a
    future (:func:`future_type`) and run on ``lanes`` threads, each with
    a libbx worker of its own after the first (the worker's), so that
    that many calls are on the wire together: a pull of step n + 1 while
    the push of step n is on its way.
    """

    def __init__(self, servers: Sequence[str], *, service: int,
                 val_len: int = 0,
                 key_max: int = 0, bounds: Optional[Sequence[int]] = None,
                 msg_max: int = 0, timeout_ms: int = 0,
                 max_inflight: int = 0, region_size: int = 0,
                 lanes: int = 2, lib: Any = None) -> None:
        if isinstance(servers, str):
            raise TypeError("servers: a sequence of addresses")
        if bounds is None and key_max <= 0:
            raise ValueError("key_max or bounds is needed")
        self._lib = lib if lib is not None else _get_lib()
        self.servers = list(servers)
        self.val_len, self.service = val_len, service
        # The values' type: float32 (the typed values of the ps-lite
        # issue will add float16, bfloat16, int32, int64).
        self.dtype = "float32"
        self._lock = threading.Lock()
        self._w: Optional[int] = self._lib.kv_worker_create(
            self.servers, val_len, service, key_max,
            None if bounds is None else list(bounds), msg_max, timeout_ms,
            max_inflight, region_size)
        self._fin = weakref.finalize(self, self._lib.kv_worker_destroy,
                                     self._w)
        self._bufs: "weakref.WeakValueDictionary[int, Any]" = \
            weakref.WeakValueDictionary()
        if lanes < 1:
            raise ValueError("lanes: at least 1")
        self._nlanes = lanes
        self._args = (self.servers, val_len, service, key_max,
                      None if bounds is None else list(bounds), msg_max,
                      timeout_ms, max_inflight, region_size)
        self._lanes: List[_Lane] = []
        self._alock = threading.Lock()      # _lanes and their counts
        #: Why a lane could not be added (an OSError), else None.
        self.lanes_refused: Optional[OSError] = None
        weakref.finalize(self, _Lane.stop_all, self._lanes, False)

    def _handle(self) -> int:
        if self._w is None:
            raise ValueError("bx.kv.Worker is closed")
        return self._w

    # -- buffers --
    def buffer(self, nkeys: int = 0, *,
               floats: Optional[int] = None) -> KVBuffer:
        """Room for the values of ``nkeys`` keys (of ``val_len``), or
        for ``floats`` floats (keys of lengths of their own), in the
        worker's region."""
        n = max(nkeys, 0) * self.val_len if floats is None else \
            max(floats, 0)
        addr = self._lib.kv_buf_alloc(self._handle(), max(n, 1) * 4)
        buf = _kvbuffer_type(n).from_address(addr)
        self._bufs[addr] = buf
        buf._worker = weakref.ref(self)
        return buf

    def free(self, buf: KVBuffer) -> None:
        """Return a :meth:`buffer` (a second call: ``ValueError``)."""
        addr = ctypes.addressof(buf)
        if isinstance(buf, _Block):
            raise ValueError("memory of empty(): freed with the last "
                             "tensor or array over it")
        if self._bufs.get(addr) is not buf:
            raise ValueError("not a live buffer of this worker")
        del self._bufs[addr]
        self._lib.kv_buf_free(self._handle(), addr)

    # -- arguments --
    def _lens(self, lens: Any, nkeys: int) -> Tuple[Any, int]:
        """The C array of ``lens`` (None: none) and the values of all
        ``nkeys`` keys."""
        if lens is None:
            return None, nkeys * self.val_len
        cl = _uints(lens, ctypes.c_uint32, "lens")
        if len(cl) != nkeys:
            raise ValueError(f"lens: {len(cl)} lengths, {nkeys} keys")
        return cl, _total(cl)

    def _rows(self, nkeys: int, lens: Any) -> Optional[Tuple[int, int]]:
        """The 2-D shape values may also have: (keys, val_len)."""
        return None if lens is not None or not self.val_len else \
            (nkeys, self.val_len)

    def _values(self, vals: Any, want: int, writable: bool,
                rows: Optional[Tuple[int, int]] = None) -> _arrays.Mem:
        """The memory of ``want`` values of the worker's type in
        ``vals`` (:func:`bx._arrays.values`): as it is when contiguous,
        else copied once (push) or refused (``out=``)."""
        return _arrays.values(vals, self.dtype, want, writable,
                              "out" if writable else "values", rows)

    def _out(self, keys: Any, n: int, rows: Optional[Tuple[int, int]]
             ) -> Any:
        """A new result of ``n`` values for a pull without ``out=``, of
        the kind of ``keys``: a torch tensor, an ndarray, else an
        ``array.array``."""
        shape = rows if rows is not None else (n,)
        if _arrays.is_tensor(keys):
            return sys.modules["torch"].empty(shape, dtype=getattr(
                sys.modules["torch"], self.dtype))
        np = _arrays.numpy()
        if np is not None and isinstance(keys, np.ndarray):
            return np.empty(shape, dtype=self.dtype)
        return array.array(_arrays.DTYPES[self.dtype][0], bytes(
            _arrays.DTYPES[self.dtype][1] * n))

    def _call(self, fn: Callable[..., None], keys: Any, vals: _arrays.Mem,
              lens: Any) -> None:
        """A call on the worker's own libbx worker, under its lock."""
        with self._lock:
            self._call_on(self._handle(), fn, keys, vals, lens)

    def _call_on(self, w: int, fn: Callable[..., None], keys: Any,
                 vals: _arrays.Mem, lens: Any) -> None:
        """A call on libbx worker ``w`` (the caller has it alone); a
        failure names the server whose request failed."""
        n = len(keys)
        try:
            fn(w, ctypes.addressof(keys) if n else 0, n,
               vals.addr if n else 0,
               ctypes.addressof(lens) if lens is not None and n else 0)
        except OSError as e:
            _, e.server = self._lib.kv_last_error(w)
            raise

    def _in_region(self, mem: _arrays.Mem) -> bool:
        """Whether ``mem`` lies in a buffer of this worker's region."""
        for addr, b in list(self._bufs.items()):
            if addr <= mem.addr and mem.addr + mem.nbytes <= \
                    addr + ctypes.sizeof(b):
                return True
        return False

    def _submit(self, fn: Callable[..., None], k: Any, vals: _arrays.Mem,
                cl: Any, result: Any) -> Any:
        """Queue a call on a lane: the worker's own for memory of its
        region (no copy there), else the least busy; a new lane while
        there are fewer than ``lanes`` and all are busy."""
        fut = _future_type()()
        with self._alock:
            w = self._handle()
            if not self._nlanes:
                raise ValueError("bx.kv.Worker is closed")
            if not self._lanes:
                self._lanes.append(_Lane(self, w, True))
            if len(vals) and self._in_region(vals):
                lane = self._lanes[0]
            else:
                lane = min(self._lanes, key=lambda ln: ln.pending)
                if lane.pending and len(self._lanes) < self._nlanes:
                    lane = self._new_lane() or lane
            lane.pending += 1
            lane.q.put((fut, fn, k, vals, cl, result))
        return fut

    def _new_lane(self) -> "Optional[_Lane]":
        """Another lane with a libbx worker of its own (under _alock), or
        None if its worker cannot be had (its region over the host's or
        the user's limit, say): the calls then share the lanes there are,
        no more are tried, and :attr:`lanes_refused` says why."""
        try:
            h = self._lib.kv_worker_create(*self._args)
        except OSError as e:
            self._nlanes = len(self._lanes)
            self.lanes_refused = e
            warnings.warn(f"bx.kv: no further lane ({e}); the "
                          f"asynchronous calls share {len(self._lanes)}",
                          RuntimeWarning, stacklevel=4)
            return None
        lane = _Lane(self, h, False)
        self._lanes.append(lane)
        return lane

    def push_async(self, keys: Any, values: Any, lens: Any = None) -> Any:
        """:meth:`push`, returning at once: a future (:func:`future_type`)
        whose result is ``None``, or whose ``wait()`` (``result()``)
        raises what :meth:`push` would. Argument errors raise here.
        ``values`` must stay unchanged until it is done (as ps-lite's
        ``ZPush``); pushes of one worker may be applied in any order."""
        k = _uints(keys, ctypes.c_uint64, "keys")
        cl, n = self._lens(lens, len(k))
        return self._submit(self._lib.kv_push, k, self._values(
            values, n, False, self._rows(len(k), lens)), cl, None)

    def pull_async(self, keys: Any, out: Any = None, lens: Any = None
                   ) -> Any:
        """:meth:`pull`, returning at once: a future whose result is
        ``out`` (or the new tensor or array) once the values are in it.
        ``out`` in the worker's region (:meth:`empty`) is filled with no
        copy (on the worker's own lane); elsewhere libbx copies once."""
        k = _uints(keys, ctypes.c_uint64, "keys")
        cl, n = self._lens(lens, len(k))
        rows = self._rows(len(k), lens)
        if out is None:
            out = self._out(keys, n, rows)
        return self._submit(self._lib.kv_pull, k,
                            self._values(out, n, True, rows), cl, out)

    # -- calls --
    def push(self, keys: Any, values: Any, lens: Any = None) -> None:
        """Apply ``values`` to ``keys`` on their servers (summed, or the
        servers' ``apply``).

        ``keys``: integers of any type and container, strictly
        ascending: a NumPy array or torch tensor of int64 (torch's index
        type), uint64 or another integer type, a buffer, a sequence;
        converted in one step, negative keys refused (``ValueError``).
        ``values``: ``len(keys) * val_len`` float32 values (with
        ``lens``: ``sum(lens)``) of shape ``(n,)`` or ``(len(keys),
        val_len)``: a torch tensor, an ndarray, an object with
        ``__dlpack__``, a buffer, or a sequence of numbers; used where
        they lie (libbx copies them into its requests once), a
        non-contiguous array or tensor copied once first. ``lens``: each
        key's length (integers as ``keys``), the servers'. A push whose
        lengths are not the server's is dropped there (counted in its
        ``bad``).

        Raises :class:`OSError` with ``server``: ``EINVAL`` (``server``
        -1) for keys not strictly ascending, a length of 0 or neither
        ``lens`` nor ``val_len``, ``ERANGE`` for a key outside the
        partition, or the failed request's errno (``TimeoutError``,
        ``ConnectionResetError``: a push of unknown outcome,
        ``EREMOTEIO``: refused by the server). ``TypeError`` for values
        of another type than float32 or keys not integers,
        ``ValueError`` for a wrong size or shape."""
        k = _uints(keys, ctypes.c_uint64, "keys")
        cl, n = self._lens(lens, len(k))
        self._call(self._lib.kv_push, k,
                   self._values(values, n, False, self._rows(len(k), lens)),
                   cl)

    def pull(self, keys: Any, out: Any = None, lens: Any = None) -> Any:
        """The values of ``keys`` (as for :meth:`push`), into ``out`` and
        returned.

        ``out``: a writable, contiguous float32 tensor, ndarray or buffer
        of ``len(keys) * val_len`` values (``sum(lens)``), shape ``(n,)``
        or ``(len(keys), val_len)``; in the worker's region
        (:meth:`empty`, :meth:`buffer`) the values land there with no
        copy at all, elsewhere libbx copies them in once. Another type:
        ``TypeError``; another size or shape, read-only or not
        contiguous: ``ValueError``. Without ``out``: a new tensor of
        shape ``(len(keys), val_len)`` if ``keys`` is a tensor, a new
        ndarray if it is an ndarray (``(sum(lens),)`` with ``lens``),
        else a flat ``array.array('f')``. Lengths not the server's:
        ``EREMOTEIO`` (refused)."""
        k = _uints(keys, ctypes.c_uint64, "keys")
        cl, n = self._lens(lens, len(k))
        rows = self._rows(len(k), lens)
        if out is None:
            out = self._out(keys, n, rows)
        self._call(self._lib.kv_pull, k, self._values(out, n, True, rows),
                   cl)
        return out

    def empty(self, shape: Any, dtype: Any = None) -> Any:
        """A tensor or ndarray of ``shape`` in the worker's region: a pull
        into it moves no byte through the CPU in this process, a push
        from it is copied once by libbx (as any other memory).

        ``dtype``: a ``torch.dtype`` gives a tensor (``None``:
        ``torch.float32``, as ``torch.empty``), a NumPy dtype or its name
        an ndarray (:meth:`empty_array`). Its memory is returned to the
        region when the tensor or array (and every view of it) is gone,
        or when the worker closes (views then read zeros). bx.kv's calls
        take float32; other types are for the typed values to come."""
        if dtype is None:
            try:
                import torch
            except ImportError:
                raise TypeError("Worker.empty: no torch; "
                                "use empty_array() for an ndarray") \
                    from None
            dtype = torch.float32
        return _arrays.empty_over(self._block, shape, dtype)

    def empty_array(self, shape: Any, dtype: Any = "float32") -> Any:
        """:meth:`empty` as a NumPy array (``dtype`` a NumPy dtype)."""
        return _arrays.empty_over(self._block, shape, dtype)

    def _block(self, nbytes: int) -> Any:
        """Region memory that goes back to the region with the last
        reference to it."""
        addr = self._lib.kv_buf_alloc(self._handle(), nbytes)
        blk = _block_type(nbytes).from_address(addr)
        self._bufs[addr] = blk
        blk._worker = weakref.ref(self)
        weakref.finalize(blk, Worker._release_block, blk._worker, addr)
        return blk

    @staticmethod
    def _release_block(ref: Any, addr: int) -> None:
        w = ref()
        if w is not None and w._w is not None:
            try:
                w._lib.kv_buf_free(w._w, addr)
            except (OSError, ValueError):
                pass

    # -- lifetime --
    @property
    def closed(self) -> bool:
        return self._w is None

    def close(self) -> None:
        """Free the worker (no call may run). Buffers that live on read
        zeros from then on."""
        if self._w is None:
            return
        # The lanes finish what was queued, then end; no new ones.
        with self._alock:
            self._nlanes = 0
            lanes = list(self._lanes)
            self._lanes.clear()
        _Lane.stop_all(lanes, True)
        with self._lock:
            live = list(self._bufs.values())
            self._bufs = weakref.WeakValueDictionary()
            self._fin()
            self._w = None
        if live:
            _placeholder(live)

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._w is None else "open"
        return (f"<bx.kv.Worker servers={len(self.servers)} "
                f"val_len={self.val_len} service={self.service} {state}>")
