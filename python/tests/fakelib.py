# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""A stand-in for bx._native.Lib, for the host tests (no /dev/bx).

The region is anonymous memory mapped with libc's mmap() and unmapped at
close, as libbx does; the allocator hands out aligned pieces in order.
Asynchronous pushes, pulls and replies complete at once (a pull's reply
is its request reversed); receives wait for deliver(). fail(errno) makes
the next call fail.
"""

import ctypes
import errno
import threading

from bx._native import CQE_F_PUSH, CQE_F_REQUEST, Cqe, check

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                       ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


class FakeLib:
    def __init__(self):
        self.handles = {}
        self.next = 1
        self.closed = []
        self.fail_next = 0
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)

    def _maybe_fail(self):
        e, self.fail_next = self.fail_next, 0
        check(-e)

    def _hd(self, h):
        if h not in self.handles:
            raise AssertionError(f"handle {h} used after close")
        return self.handles[h]

    def open(self):
        self._maybe_fail()
        h = self.next
        self.next += 1
        self.handles[h] = {"region": 0, "size": 0, "brk": 0, "bufs": set(),
                           "services": set(), "cqes": [], "recvs": []}
        return h

    def close(self, h):
        d = self.handles.pop(h)
        if d["region"]:
            _libc.munmap(d["region"], d["size"])
        self.closed.append(h)

    def fd(self, h):
        self._hd(h)
        return 100 + h

    def get_info(self, h):
        self._maybe_fail()
        return 3, 1

    def setup(self, h, size, cq):
        d = self._hd(h)
        self._maybe_fail()
        if d["region"]:
            check(-errno.EBUSY)
        if size % 4096 or not size:
            check(-errno.EINVAL)
        p = _libc.mmap(None, size, 3, 0x22, -1, 0)
        d["region"], d["size"] = p, size

    def region(self, h):
        return self._hd(h)["region"]

    def region_size(self, h):
        return self._hd(h)["size"]

    def eager_max(self, h):
        return 4096

    def buf_alloc(self, h, size):
        d = self._hd(h)
        self._maybe_fail()
        if not d["region"]:
            check(-errno.ENXIO)
        align = 4096 if size >= 4096 else 64
        off = (d["brk"] + align - 1) // align * align
        if off + size > d["size"]:
            check(-errno.ENOMEM)
        d["brk"] = off + size
        d["bufs"].add(d["region"] + off)
        return d["region"] + off

    def buf_free(self, h, addr):
        d = self._hd(h)
        if addr not in d["bufs"]:
            check(-errno.EINVAL)
        d["bufs"].remove(addr)

    def peer(self, h, addr):
        self._maybe_fail()
        if not addr.startswith("192.0.2."):
            check(-errno.EINVAL)
        return int(addr.rsplit(".", 1)[1])

    def bind(self, h, service):
        self._maybe_fail()
        self._hd(h)["services"].add(service)

    def unbind(self, h, service):
        d = self._hd(h)
        if service not in d["services"]:
            check(-errno.ENOENT)
        d["services"].remove(service)
        with self.lock:
            keep = []
            for r in d["recvs"]:
                if r[0] == service:
                    d["cqes"].append(_cqe(r[3], -errno.ECANCELED))
                else:
                    keep.append(r)
            d["recvs"] = keep
            self.cond.notify_all()

    def _in_region(self, d, addr, n):
        if not (d["region"] <= addr and addr + n <= d["region"] + d["size"]):
            check(-errno.EINVAL)

    # synchronous: as the asynchronous ones, waited for
    def push(self, h, peer, service, addr, n, timeout_ms):
        self._maybe_fail()
        self._in_region(self._hd(h), addr, n)
        return n

    def pull(self, h, peer, service, addr, n, raddr, cap, timeout_ms):
        self._maybe_fail()
        d = self._hd(h)
        self._in_region(d, addr, n)
        self._in_region(d, raddr, cap)
        data = ctypes.string_at(addr, n)[::-1][:cap]
        ctypes.memmove(raddr, data, len(data))
        return len(data)

    def recv(self, h, service, addr, cap, timeout_ms):
        check(-errno.ETIMEDOUT)

    def reply(self, h, token, addr, n, timeout_ms):
        self._maybe_fail()
        return n

    def _post(self, h, cqe):
        with self.lock:
            self._hd(h)["cqes"].append(cqe)
            self.cond.notify_all()

    def push_async(self, h, peer, service, addr, n, ud):
        self.push(h, peer, service, addr, n, -1)
        if not self.hold:
            self._post(h, _cqe(ud, n))

    def pull_async(self, h, peer, service, addr, n, raddr, cap, ud):
        r = self.pull(h, peer, service, addr, n, raddr, cap, -1)
        if not self.hold:
            self._post(h, _cqe(ud, r))

    def reply_async(self, h, token, addr, n, ud):
        self._maybe_fail()
        self._post(h, _cqe(ud, n))

    def recv_async(self, h, service, addr, cap, ud):
        self._maybe_fail()
        d = self._hd(h)
        if service not in d["services"]:
            check(-errno.ENOTCONN)
        with self.lock:
            d["recvs"].append((service, addr, cap, ud))

    hold = False

    def deliver(self, h, service, data, token=None, peer=1):
        """A message for service lands in the first posted receive."""
        d = self._hd(h)
        with self.lock:
            for i, (svc, addr, cap, ud) in enumerate(d["recvs"]):
                if svc == service and cap >= len(data):
                    del d["recvs"][i]
                    ctypes.memmove(addr, bytes(data), len(data))
                    c = _cqe(ud, len(data))
                    c.off = addr - d["region"]
                    c.service, c.peer = service, peer
                    if token is None:
                        c.flags = CQE_F_PUSH
                    else:
                        c.flags, c.token, c.resp_max = CQE_F_REQUEST, token, 512
                    d["cqes"].append(c)
                    self.cond.notify_all()
                    return
        raise AssertionError("no receive posted")

    def reap(self, h, max_n, timeout_ms):
        with self.lock:
            d = self._hd(h)
            if not d["cqes"]:
                self.cond.wait(timeout_ms / 1000)
            out, d["cqes"] = d["cqes"][:max_n], d["cqes"][max_n:]
            return out


def _cqe(ud, res):
    c = Cqe()
    c.user_data, c.res = ud, res
    return c
