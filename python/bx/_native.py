# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""libbx.so.0 through ctypes (ABI mode: no compiler, no headers).

:class:`Lib` is the one place that knows libbx's C signatures. Each
method takes and returns plain Python values (addresses as ``int``) and
raises :class:`OSError` for a negative errno, so that :mod:`bx.core` can
run over a stand-in with the same methods (the host tests' fake).
"""

from __future__ import annotations

import ctypes
import errno
import os
from ctypes import (POINTER, Structure, byref, c_char_p, c_int, c_int32,
                    c_size_t, c_uint, c_uint32, c_uint64, c_void_p)
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["Lib", "Cqe", "Info", "KV_APPLY", "KV_HANDLE", "KvPush",
           "check", "oserror", "SONAME"]

SONAME = "libbx.so.0"

# <linux/bx.h>
CQE_F_PUSH = 1 << 0
CQE_F_REQUEST = 1 << 1
CQE_F_COPIED = 1 << 2
FEAT_INFO = 1 << 0
FEAT_DATA = 1 << 1
MSG_MAX = 16 << 20
SERVICE_PRIV = 1024
REGION_MAX = 1 << 32
CQ_ENTRIES_MAX = 32768
USER_DATA_MAX = (1 << 63) - 1


class Info(Structure):
    """struct bx_info."""
    _fields_ = [("size", c_uint32), ("resv0", c_uint32),
                ("features", c_uint64), ("ndevs", c_uint32),
                ("resv1", c_uint32)]


class Cqe(Structure):
    """struct bx_cqe: one completion."""
    _fields_ = [("user_data", c_uint64), ("res", c_int32),
                ("flags", c_uint32), ("off", c_uint64), ("token", c_uint64),
                ("service", c_uint32), ("peer", c_uint32),
                ("resp_max", c_uint32), ("resv0", c_uint32)]


assert ctypes.sizeof(Info) == 24 and ctypes.sizeof(Cqe) == 48

# <bx/bxkv.h>
KV_APPLY = ctypes.CFUNCTYPE(None, c_uint64, POINTER(ctypes.c_float),
                            POINTER(ctypes.c_float), c_uint32, c_void_p)


class KvPush(Structure):
    """struct bxkv_push."""
    _fields_ = [("keys", POINTER(c_uint64)), ("lens", POINTER(c_uint32)),
                ("vals", POINTER(ctypes.c_float)), ("nkeys", c_uint32),
                ("nvals", c_uint64)]


KV_HANDLE = ctypes.CFUNCTYPE(None, c_void_p, POINTER(KvPush), c_void_p)


class KvServerCfg(Structure):
    """struct bxkv_server_cfg."""
    _fields_ = [("begin", c_uint64), ("end", c_uint64),
                ("val_len", c_uint32), ("service", c_uint32),
                ("msg_max", c_uint32), ("nrecv", c_uint32),
                ("npush", c_uint32), ("nreply", c_uint32),
                ("apply", KV_APPLY), ("apply_arg", c_void_p),
                ("lens", POINTER(c_uint32))]


class KvServerStats(Structure):
    """struct bxkv_server_stats."""
    _fields_ = [(n, c_uint64) for n in
                ("pulls", "pushes", "keys_pulled", "keys_pushed",
                 "zero_copy", "parked", "bad", "errors")]


class KvWorkerCfg(Structure):
    """struct bxkv_worker_cfg."""
    _fields_ = [("servers", POINTER(c_char_p)), ("nservers", c_uint),
                ("key_max", c_uint64), ("bounds", POINTER(c_uint64)),
                ("val_len", c_uint32), ("service", c_uint32),
                ("msg_max", c_uint32), ("timeout_ms", c_int),
                ("max_inflight", c_uint32), ("region_size", c_uint64)]


assert ctypes.sizeof(KvServerCfg) == 64 and ctypes.sizeof(KvWorkerCfg) == 64
assert ctypes.sizeof(KvServerStats) == 64


def oserror(err: int) -> OSError:
    """The :class:`OSError` of a positive errno.

    ``OSError(errno, strerror)`` picks the subclass Python has for the
    number: ``ConnectionResetError``, ``TimeoutError``,
    ``FileNotFoundError``, ``ConnectionRefusedError``, ... ."""
    return OSError(err, os.strerror(err))


def check(ret: int) -> int:
    """Raise for libbx's negative errno returns; pass the rest through."""
    if ret < 0:
        raise oserror(-ret)
    return ret


_PROTOS = {
    # name: (restype, argtypes)
    "bx_open": (c_int, [POINTER(c_void_p), c_uint]),
    "bx_close": (None, [c_void_p]),
    "bx_fd": (c_int, [c_void_p]),
    "bx_get_info": (c_int, [c_void_p, POINTER(Info)]),
    "bx_setup": (c_int, [c_void_p, c_uint64, c_uint32]),
    "bx_region": (c_void_p, [c_void_p]),
    "bx_region_size": (c_uint64, [c_void_p]),
    "bx_eager_max": (c_uint32, [c_void_p]),
    "bx_buf_alloc": (c_int, [c_void_p, c_size_t, POINTER(c_void_p)]),
    "bx_buf_free": (c_int, [c_void_p, c_void_p]),
    "bx_peer": (c_int, [c_void_p, c_char_p, POINTER(c_uint32)]),
    "bx_bind": (c_int, [c_void_p, c_uint32]),
    "bx_unbind": (c_int, [c_void_p, c_uint32]),
    "bx_push_async": (c_int, [c_void_p, c_uint32, c_uint32, c_void_p,
                              c_uint32, c_uint64]),
    "bx_pull_async": (c_int, [c_void_p, c_uint32, c_uint32, c_void_p,
                              c_uint32, c_void_p, c_uint32, c_uint64]),
    "bx_recv_async": (c_int, [c_void_p, c_uint32, c_void_p, c_uint32,
                              c_uint64]),
    "bx_reply_async": (c_int, [c_void_p, c_uint64, c_void_p, c_uint32,
                               c_uint64]),
    "bx_reap": (c_int, [c_void_p, POINTER(Cqe), c_uint, c_int]),
    "bx_push": (c_int, [c_void_p, c_uint32, c_uint32, c_void_p, c_uint32,
                        c_int]),
    "bx_pull": (c_int, [c_void_p, c_uint32, c_uint32, c_void_p, c_uint32,
                        c_void_p, c_uint32, c_int]),
    "bx_recv": (c_int, [c_void_p, c_uint32, c_void_p, c_uint32,
                        POINTER(Cqe), c_int]),
    "bx_reply": (c_int, [c_void_p, c_uint64, c_void_p, c_uint32, c_int]),
}

# The key-value layer (LIBBX_0.3): optional, so that the binding still
# loads an older libbx.so.0 (bx.kv then raises ENOSYS).
_KV_PROTOS = {
    "bxkv_server_create": (c_int, [POINTER(c_void_p), POINTER(KvServerCfg)]),
    "bxkv_server_destroy": (None, [c_void_p]),
    "bxkv_server_value": (c_void_p, [c_void_p, c_uint64]),
    "bxkv_server_value_len": (c_uint32, [c_void_p, c_uint64]),
    "bxkv_server_poll": (c_int, [c_void_p, c_int]),
    "bxkv_server_start": (c_int, [c_void_p]),
    "bxkv_server_stop": (c_int, [c_void_p]),
    "bxkv_server_stats": (None, [c_void_p, POINTER(KvServerStats)]),
    "bxkv_worker_create": (c_int, [POINTER(c_void_p), POINTER(KvWorkerCfg)]),
    "bxkv_worker_destroy": (None, [c_void_p]),
    "bxkv_buf_alloc": (c_int, [c_void_p, c_size_t, POINTER(c_void_p)]),
    "bxkv_buf_free": (c_int, [c_void_p, c_void_p]),
    "bxkv_push": (c_int, [c_void_p, c_void_p, c_size_t, c_void_p]),
    "bxkv_pull": (c_int, [c_void_p, c_void_p, c_size_t, c_void_p]),
    "bxkv_push_lens": (c_int, [c_void_p, c_void_p, c_size_t, c_void_p,
                               c_void_p]),
    "bxkv_pull_lens": (c_int, [c_void_p, c_void_p, c_size_t, c_void_p,
                               c_void_p]),
    "bxkv_last_error": (c_int, [c_void_p, POINTER(c_int)]),
}


def _candidates(path: Optional[str]) -> List[str]:
    if path:
        return [path]
    env = os.environ.get("BX_LIBBX")
    if env:
        return [env]
    return [SONAME]


class Lib:
    """libbx, loaded with :func:`ctypes.CDLL` (which drops the GIL in
    every call, so a thread blocked in :meth:`reap` or a synchronous
    operation does not stop the others).

    ``path`` (or ``$BX_LIBBX``) names the library file; by default the
    dynamic loader looks ``libbx.so.0`` up as usual (``LD_LIBRARY_PATH``,
    ``ld.so.cache``). Raises :class:`OSError` when it cannot be loaded.
    """

    def __init__(self, path: Optional[str] = None) -> None:
        names = _candidates(path)
        last: Optional[OSError] = None
        for name in names:
            try:
                self._dll = ctypes.CDLL(name)
                break
            except OSError as e:
                last = e
        else:
            raise OSError(errno.ENOENT,
                          f"cannot load {names[0]} ({last}); install libbx "
                          "or set BX_LIBBX to its path")
        self.path = names[0]
        for name, (res, args) in _PROTOS.items():
            fn = getattr(self._dll, name)
            fn.restype = res
            fn.argtypes = args
            setattr(self, "_" + name[3:], fn)
        self.has_kv = True
        for name, (res, args) in _KV_PROTOS.items():
            fn = getattr(self._dll, name, None)
            if fn is None:
                self.has_kv = False
                break
            fn.restype = res
            fn.argtypes = args
            setattr(self, "_" + name, fn)

    def _kv(self) -> None:
        if not self.has_kv:
            raise OSError(errno.ENOSYS, f"{self.path} has no bxkv "
                          "(libbx 0.3 or later)")

    # Handles --------------------------------------------------------------
    def open(self) -> int:
        h = c_void_p()
        check(self._open(byref(h), 0))
        return h.value

    def close(self, h: int) -> None:
        self._close(h)

    def fd(self, h: int) -> int:
        return self._fd(h)

    def get_info(self, h: int) -> Tuple[int, int]:
        info = Info()
        check(self._get_info(h, byref(info)))
        return info.features, info.ndevs

    def setup(self, h: int, region_size: int, cq_entries: int) -> None:
        check(self._setup(h, region_size, cq_entries))

    def region(self, h: int) -> int:
        return self._region(h) or 0

    def region_size(self, h: int) -> int:
        return self._region_size(h)

    def eager_max(self, h: int) -> int:
        return self._eager_max(h)

    def buf_alloc(self, h: int, size: int) -> int:
        p = c_void_p()
        check(self._buf_alloc(h, size, byref(p)))
        return p.value

    def buf_free(self, h: int, addr: int) -> None:
        check(self._buf_free(h, addr))

    def peer(self, h: int, addr: str) -> int:
        p = c_uint32()
        check(self._peer(h, addr.encode(), byref(p)))
        return p.value

    def bind(self, h: int, service: int) -> None:
        check(self._bind(h, service))

    def unbind(self, h: int, service: int) -> None:
        check(self._unbind(h, service))

    # Operations -------------------------------------------------------------
    def push(self, h, peer, service, addr, n, timeout_ms) -> int:
        return check(self._push(h, peer, service, addr, n, timeout_ms))

    def pull(self, h, peer, service, addr, n, raddr, cap, timeout_ms) -> int:
        return check(self._pull(h, peer, service, addr, n, raddr, cap,
                                timeout_ms))

    def recv(self, h, service, addr, cap, timeout_ms) -> Cqe:
        cqe = Cqe()
        check(self._recv(h, service, addr, cap, byref(cqe), timeout_ms))
        return cqe

    def reply(self, h, token, addr, n, timeout_ms) -> int:
        return check(self._reply(h, token, addr, n, timeout_ms))

    def push_async(self, h, peer, service, addr, n, ud) -> None:
        check(self._push_async(h, peer, service, addr, n, ud))

    def pull_async(self, h, peer, service, addr, n, raddr, cap, ud) -> None:
        check(self._pull_async(h, peer, service, addr, n, raddr, cap, ud))

    def recv_async(self, h, service, addr, cap, ud) -> None:
        check(self._recv_async(h, service, addr, cap, ud))

    def reply_async(self, h, token, addr, n, ud) -> None:
        check(self._reply_async(h, token, addr, n, ud))

    def reap(self, h: int, max_n: int, timeout_ms: int) -> List[Cqe]:
        arr = (Cqe * max_n)()
        n = check(self._reap(h, arr, max_n, timeout_ms))
        return list(arr[:n])

    # Key-value layer (bxkv) ---------------------------------------------------
    def kv_server_create(self, begin: int, end: int, val_len: int,
                         service: int, msg_max: int = 0, nrecv: int = 0,
                         npush: int = 0, nreply: int = 0,
                         apply: Optional[Any] = None,
                         lens: Optional[Any] = None) -> int:
        """``apply``: a :data:`KV_APPLY` function pointer, or None;
        ``lens``: a ctypes array of ``end - begin`` uint32, or None."""
        self._kv()
        cfg = KvServerCfg(begin=begin, end=end, val_len=val_len,
                          service=service, msg_max=msg_max, nrecv=nrecv,
                          npush=npush, nreply=nreply)
        if apply is not None:
            cfg.apply = apply
        if lens is not None:
            cfg.lens = ctypes.cast(lens, POINTER(c_uint32))
        s = c_void_p()
        check(self._bxkv_server_create(byref(s), byref(cfg)))
        return s.value

    def kv_server_set_handle(self, s: int, fn: Optional[Any]) -> None:
        """``fn``: a :data:`KV_HANDLE` function pointer, or None (libbx
        0.5: bxkv_server_set_handle)."""
        set_handle = getattr(self._dll, "bxkv_server_set_handle", None)
        if set_handle is None:
            raise OSError(errno.ENOSYS, f"{self.path} has no "
                          "bxkv_server_set_handle (libbx 0.5 or later)")
        set_handle.restype = c_int
        set_handle.argtypes = [c_void_p, KV_HANDLE, c_void_p]
        check(set_handle(s, fn if fn is not None else KV_HANDLE(), None))

    def kv_server_destroy(self, s: int) -> None:
        self._bxkv_server_destroy(s)

    def kv_server_value(self, s: int, key: int) -> int:
        return self._bxkv_server_value(s, key) or 0

    def kv_server_value_len(self, s: int, key: int) -> int:
        return self._bxkv_server_value_len(s, key)

    def kv_server_poll(self, s: int, timeout_ms: int) -> int:
        return check(self._bxkv_server_poll(s, timeout_ms))

    def kv_server_start(self, s: int) -> None:
        check(self._bxkv_server_start(s))

    def kv_server_stop(self, s: int) -> None:
        check(self._bxkv_server_stop(s))

    def kv_server_stats(self, s: int) -> Dict[str, int]:
        st = KvServerStats()
        self._bxkv_server_stats(s, byref(st))
        return {n: getattr(st, n) for n, _ in KvServerStats._fields_}

    def kv_worker_create(self, servers: Sequence[str], val_len: int,
                         service: int, key_max: int = 0,
                         bounds: Optional[Sequence[int]] = None,
                         msg_max: int = 0, timeout_ms: int = 0,
                         max_inflight: int = 0, region_size: int = 0) -> int:
        self._kv()
        addrs = (c_char_p * len(servers))(*[a.encode() for a in servers])
        cfg = KvWorkerCfg(servers=ctypes.cast(addrs, POINTER(c_char_p)),
                          nservers=len(servers), key_max=key_max,
                          val_len=val_len, service=service, msg_max=msg_max,
                          timeout_ms=timeout_ms, max_inflight=max_inflight,
                          region_size=region_size)
        if bounds is not None:
            arr = (c_uint64 * len(bounds))(*bounds)
            cfg.bounds = ctypes.cast(arr, POINTER(c_uint64))
        w = c_void_p()
        check(self._bxkv_worker_create(byref(w), byref(cfg)))
        return w.value

    def kv_worker_destroy(self, w: int) -> None:
        self._bxkv_worker_destroy(w)

    def kv_buf_alloc(self, w: int, size: int) -> int:
        p = c_void_p()
        check(self._bxkv_buf_alloc(w, size, byref(p)))
        return p.value

    def kv_buf_free(self, w: int, addr: int) -> None:
        check(self._bxkv_buf_free(w, addr))

    def kv_push(self, w: int, keys: int, n: int, vals: int,
                lens: int = 0) -> None:
        """``lens``: the address of ``n`` uint32 lengths, or 0."""
        if lens:
            check(self._bxkv_push_lens(w, keys, n, vals, lens))
        else:
            check(self._bxkv_push(w, keys, n, vals))

    def kv_pull(self, w: int, keys: int, n: int, vals: int,
                lens: int = 0) -> None:
        if lens:
            check(self._bxkv_pull_lens(w, keys, n, vals, lens))
        else:
            check(self._bxkv_pull(w, keys, n, vals))

    def kv_last_error(self, w: int) -> Tuple[int, int]:
        srv = c_int(-1)
        ret = self._bxkv_last_error(w, byref(srv))
        return ret, srv.value
