# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""bx: Python binding of libbx, the user-space library of bx, the
host-wide RDMA transport.

Pure Python over ``libbx.so.0`` with :mod:`ctypes` (no compiler at
install). The region's memory is exposed as buffer objects, so numpy and
torch arrays over it cost no copy::

    import bx, numpy

    with bx.Bx(region_size=64 << 20) as b:
        peer = b.peer("192.0.2.1")
        buf = b.alloc(4 << 20)
        a = numpy.frombuffer(buf, dtype=numpy.float32)
        a[:] = 1.0
        b.push(peer, 7, buf)                 # synchronous
        f = b.pull_async(peer, 8, b"req", buf)
        print(f.result())                    # bytes of the reply

A server::

    with bx.Bx(region_size=16 << 20) as b:
        b.bind(8)
        buf, out = b.alloc(65536), b.alloc(65536)
        while True:
            m = b.recv(8, buf)
            if m.is_request:
                out[:4] = b"done"
                b.reply(m, out[:4])

Errors are :class:`OSError` with libbx's errno (as Python's subclass for
it, e.g. ``TimeoutError``, ``ConnectionResetError``).

:mod:`bx.kv` is libbx's key-value layer (``bxkv``): servers that own
key ranges and workers that push and pull many keys at once.
"""

from ._native import (CQE_F_COPIED, CQE_F_PUSH, CQE_F_REQUEST, FEAT_DATA,
                      FEAT_INFO, MSG_MAX, SERVICE_PRIV, Lib)
from .core import Buffer, Bx, Info, Message
from . import kv

__version__ = "0.1.0"

__all__ = ["Bx", "Buffer", "Message", "Info", "Lib", "kv", "CQE_F_PUSH",
           "CQE_F_REQUEST", "CQE_F_COPIED", "FEAT_INFO", "FEAT_DATA",
           "MSG_MAX", "SERVICE_PRIV", "__version__"]
