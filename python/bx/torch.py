# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""bx for PyTorch users: torch.distributed's store as bx.kv's rendezvous,
and the future type of bx's asynchronous calls.

Processes started by ``torchrun`` (or any launcher that sets
``MASTER_ADDR``, ``MASTER_PORT``, ``RANK`` and ``WORLD_SIZE``) find
each other through torch.distributed's store -- the default process
group's if one is initialized, else the ``env://`` rendezvous store
(under ``torchrun``'s static rendezvous the agent's ``TCPStore``,
otherwise a ``TCPStore`` hosted by rank 0 at ``MASTER_ADDR:MASTER_PORT``,
multi-tenant, so ``init_process_group``/``init_rpc`` with ``env://``
can share it)::

    import bx.torch
    rdv = bx.torch.rendezvous()            # a bx.kv.Rendezvous
    rank, world = bx.torch.rank(), bx.torch.world_size()
    if rank >= world - NSERVERS:           # the last ranks serve
        srv = rdv.serve(rank - (world - NSERVERS), NSERVERS,
                        key_max=KEYS, val_len=64, service=4400)
        rdv.wait_done(world - NSERVERS)
        srv.close()
    else:
        w = rdv.worker(NSERVERS)
        t = w.empty((256, 64))             # region-backed float32
        w.pull(keys, t)                    # keys: an int64 tensor
        ...
        rdv.done()

Importing this module imports torch; ``import bx`` does not.

:data:`Future`: the type bx.kv's asynchronous calls will return
(``torch.futures.Future``, so ``torch.futures.collect_all`` and
``then`` compose with them); :func:`bx.kv.future_type` picks it when
torch can be imported, ``concurrent.futures.Future`` otherwise.
"""

from __future__ import annotations

import os
import threading
from datetime import timedelta
from typing import Any, Optional

import torch
import torch.distributed as dist

from .rendezvous import Rendezvous

__all__ = ["store", "rendezvous", "rank", "world_size", "local_rank",
           "Future"]

Future = torch.futures.Future

_lock = threading.Lock()
_store: Any = None


def rank() -> int:
    """``$RANK`` (0 without a launcher)."""
    return int(os.environ.get("RANK", "0"))


def world_size() -> int:
    """``$WORLD_SIZE`` (1 without a launcher)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def local_rank() -> int:
    """``$LOCAL_RANK`` (0 without a launcher)."""
    return int(os.environ.get("LOCAL_RANK", "0"))


def store(timeout: float = 300.0) -> Any:
    """torch.distributed's store for this process: the default process
    group's when one is initialized, else the ``env://`` rendezvous's
    (made once per process; ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``
    and ``WORLD_SIZE`` must be set: ``ValueError`` otherwise)."""
    global _store
    if dist.is_available() and dist.is_initialized():
        return dist.distributed_c10d._get_default_store()
    with _lock:
        if _store is None:
            missing = [v for v in ("MASTER_ADDR", "MASTER_PORT", "RANK",
                                   "WORLD_SIZE") if not os.environ.get(v)]
            if missing:
                raise ValueError("bx.torch.store: no process group and "
                                 f"{', '.join(missing)} not set (start "
                                 "with torchrun, or set them)")
            _store, _, _ = next(dist.rendezvous(
                "env://", timeout=timedelta(seconds=timeout)))
        return _store


def rendezvous(prefix: str = "bx", timeout: float = 300.0,
               store_: Optional[Any] = None) -> Rendezvous:
    """A :class:`bx.kv.Rendezvous` over :func:`store` (or ``store_``)."""
    return Rendezvous(store_ if store_ is not None else store(timeout),
                      prefix=prefix, timeout=timeout)
