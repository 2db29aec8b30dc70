# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""bx.kv's servers and workers meeting through a key-value store.

The store is torch.distributed's (``TCPStore``, ``PrefixStore``,
``HashStore``, ``FileStore``, the process group's, the one ``torchrun``'s
agent hosts: :func:`bx.torch.store`), or any object with its methods
``set``, ``get``, ``add`` and ``check`` (``wait`` is used when it has
one). Nothing of bx's own: servers ``set`` what a worker needs to reach
them, workers ``get`` it, barriers are an ``add`` and a ``wait``.
torch is not imported here::

    from bx import kv
    rdv = kv.Rendezvous(store)              # e.g. bx.torch.store()

    # server s of N (its address: $BX_ADDR, or the one that reaches
    # $MASTER_ADDR); keys [0, key_max) split evenly
    srv = rdv.serve(s, N, key_max=1 << 20, val_len=64, service=4400)
    rdv.wait_done(nworkers)                 # until every worker is done
    srv.close()

    # a worker: waits for the N servers' entries
    w = rdv.worker(N)
    ...
    rdv.barrier("step", nworkers)           # all workers, any store
    rdv.done()

Keys (under ``prefix``, default ``bx``): ``PREFIX/server/S`` (JSON:
address, service, key range, val_len, dtype, msg_max), ``PREFIX/done``
(a count), ``PREFIX/barrier/NAME/GEN/{count,go}``, and what
:meth:`Rendezvous.put` sets. A store that serves several jobs (one run
after another) needs a prefix per job.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any, Dict, List, Optional, Sequence

__all__ = ["Rendezvous", "ServerInfo", "even_bounds", "local_address"]


def even_bounds(key_max: int, n: int) -> List[int]:
    """bxkv's even split of ``[0, key_max)`` over ``n`` servers: server
    ``s`` owns ``[b[s], b[s + 1])``."""
    if n <= 0 or key_max < n:
        raise ValueError(f"{n} servers for {key_max} keys")
    return [s * (key_max // n) + min(s, key_max % n) for s in range(n + 1)]


def local_address(peer: str = "") -> str:
    """This host's address as ``peer`` (default ``$MASTER_ADDR``) sees
    it: ``$BX_ADDR`` if set, else the source address the kernel picks
    to reach ``peer`` (a UDP socket's connect: nothing is sent)."""
    env = os.environ.get("BX_ADDR")
    if env:
        return env
    peer = peer or os.environ.get("MASTER_ADDR", "") or "127.0.0.1"
    fam = socket.AF_INET6 if ":" in peer else socket.AF_INET
    with socket.socket(fam, socket.SOCK_DGRAM) as s:
        try:
            s.connect((peer, 9))
        except OSError:
            return "127.0.0.1"
        return s.getsockname()[0]


@dataclass(frozen=True)
class ServerInfo:
    """What a server publishes: enough for a worker to reach it."""
    index: int
    addr: str
    service: int
    begin: int
    end: int
    val_len: int
    dtype: str = "float32"
    msg_max: int = 0
    lens: bool = False


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, (bytes, bytearray)) else str(v)


class Rendezvous:
    """Servers and workers of one bx.kv job meeting through ``store``.

    ``timeout``: seconds a wait (a server's entry, a barrier) may take
    before ``TimeoutError``."""

    def __init__(self, store: Any, prefix: str = "bx",
                 timeout: float = 300.0) -> None:
        self.store = store
        self.prefix = prefix.rstrip("/")
        self.timeout = timeout
        self._gens: Dict[str, int] = {}
        self._lock = threading.Lock()

    def _k(self, *parts: Any) -> str:
        return "/".join([self.prefix] + [str(p) for p in parts])

    # -- waiting --------------------------------------------------------------
    def _wait(self, keys: Sequence[str], timeout: Optional[float] = None,
              stop: Optional[threading.Event] = None) -> None:
        """Until every key is set: the store's ``wait`` (woken when the
        key is set), else ``check`` every 10 ms."""
        t = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        wait = getattr(self.store, "wait", None)
        if wait is not None and stop is None:
            try:
                wait(list(keys), timedelta(seconds=t))
                return
            except RuntimeError as e:      # torch's stores time out so
                if "imeout" not in str(e) and "imed out" not in str(e):
                    raise
                raise TimeoutError(f"bx rendezvous: {list(keys)} not set "
                                   f"within {t:g} s") from None
        while not self.store.check(list(keys)):
            if stop is not None and stop.is_set():
                raise InterruptedError("bx rendezvous: stopped")
            if time.monotonic() > deadline:
                raise TimeoutError(f"bx rendezvous: {list(keys)} not set "
                                   f"within {t:g} s")
            time.sleep(0.01)

    # -- values -----------------------------------------------------------------
    def put(self, name: str, value: Any) -> None:
        """Set ``PREFIX/NAME`` to ``value`` as JSON."""
        self.store.set(self._k(name), json.dumps(value))

    def get(self, name: str, timeout: Optional[float] = None) -> Any:
        """``PREFIX/NAME``'s JSON value, once it is set."""
        k = self._k(name)
        self._wait([k], timeout)
        return json.loads(_text(self.store.get(k)))

    # -- servers ----------------------------------------------------------------
    def publish(self, info: ServerInfo) -> None:
        """Make a server known to the workers."""
        self.put(f"server/{info.index}", asdict(info))

    def serve(self, index: int, nservers: int, *, val_len: int = 0,
              service: int, key_max: int = 0,
              bounds: Optional[Sequence[int]] = None,
              addr: Optional[str] = None, start: bool = True,
              lib: Any = None, **server_kwargs: Any) -> Any:
        """Server ``index`` of ``nservers``: a :class:`bx.kv.Server` over
        its part of ``[0, key_max)`` (:func:`even_bounds`), or of
        ``bounds``, started (``start``) and published at ``addr``
        (default :func:`local_address`). Set its values before workers
        pull them: with ``start=False``, then :meth:`bx.kv.Server.start`
        and :meth:`publish` it (``srv.bx_info``)."""
        from .kv import Server
        b = list(bounds) if bounds is not None else \
            even_bounds(key_max, nservers)
        if len(b) != nservers + 1 or not 0 <= index < nservers:
            raise ValueError(f"server {index} of {nservers}, "
                             f"{len(b)} bounds")
        srv = Server(b[index], b[index + 1], val_len, service, lib=lib,
                     **server_kwargs)
        info = ServerInfo(index=index, addr=addr or local_address(),
                          service=service, begin=b[index],
                          end=b[index + 1], val_len=val_len,
                          msg_max=server_kwargs.get("msg_max", 0),
                          lens=server_kwargs.get("lens") is not None)
        srv.bx_info = info
        if start:
            srv.start()
            self.publish(info)
        return srv

    def servers(self, nservers: int,
                timeout: Optional[float] = None) -> List[ServerInfo]:
        """The entries of servers ``0 .. nservers - 1``, once all are
        published."""
        keys = [self._k(f"server/{s}") for s in range(nservers)]
        self._wait(keys, timeout)
        return [ServerInfo(**json.loads(_text(self.store.get(k))))
                for k in keys]

    def worker(self, nservers: int, timeout: Optional[float] = None,
               lib: Any = None, **worker_kwargs: Any) -> Any:
        """A :class:`bx.kv.Worker` of the ``nservers`` published servers
        (their addresses, service, key ranges as ``bounds``, val_len,
        msg_max); ``worker_kwargs`` go to it (``timeout_ms``,
        ``region_size`` ...)."""
        from .kv import Worker
        infos = self.servers(nservers, timeout)
        for a, b in zip(infos, infos[1:]):
            if a.end != b.begin:
                raise ValueError(f"bx rendezvous: servers {a.index} and "
                                 f"{b.index} leave a gap or overlap")
        if len({(i.service, i.val_len, i.msg_max, i.dtype)
                for i in infos}) != 1:
            raise ValueError("bx rendezvous: servers of different "
                             "service, val_len, msg_max or dtype")
        i0 = infos[0]
        worker_kwargs.setdefault("msg_max", i0.msg_max)
        return Worker([i.addr for i in infos], service=i0.service,
                      val_len=i0.val_len,
                      bounds=[i0.begin] + [i.end for i in infos],
                      lib=lib, **worker_kwargs)

    # -- barriers and shutdown ------------------------------------------------------
    def barrier(self, name: str, n: int,
                timeout: Optional[float] = None) -> None:
        """Wait until ``n`` participants have called ``barrier(name,
        n)`` (their ``k``-th call meets the others' ``k``-th)."""
        with self._lock:
            gen = self._gens[name] = self._gens.get(name, 0) + 1
        k = self._k("barrier", name, gen)
        if self.store.add(k + "/count", 1) == n:
            self.store.set(k + "/go", "1")
        self._wait([k + "/go"], timeout)

    def done(self) -> int:
        """A worker is done (and needs the servers no more); the count
        so far."""
        return self.store.add(self._k("done"), 1)

    def wait_done(self, n: int, timeout: Optional[float] = None,
                  stop: Optional[threading.Event] = None) -> None:
        """A server's shutdown: until ``n`` workers called :meth:`done`
        (or ``stop`` is set: ``InterruptedError``; ``timeout`` seconds
        passed: ``TimeoutError``; by default no deadline, as training
        takes what it takes)."""
        k = self._k("done")
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.store.add(k, 0) < n:
            if stop is not None and stop.is_set():
                raise InterruptedError("bx rendezvous: stopped")
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"bx rendezvous: {n} workers not done "
                                   f"within {timeout:g} s")
            time.sleep(0.05)
