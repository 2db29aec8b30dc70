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


class FakeKV(FakeLib):
    """FakeLib with the key-value layer: servers live in this object (as
    if each on a host of its own), found by their service and key range; a worker's calls apply to them
    at once. kv_fail(errno, server) makes the next call's request to
    that server fail."""

    def __init__(self):
        super().__init__()
        self.has_kv = True
        self.kv = {}
        self.kv_next = 1
        self.kv_failing = None

    def kv_fail(self, err, server):
        self.kv_failing = (err, server)

    def _kvd(self, s):
        if s not in self.kv:
            raise AssertionError(f"kv object {s} used after destroy")
        return self.kv[s]

    def kv_server_create(self, begin, end, val_len, service, msg_max=0,
                         nrecv=0, npush=0, nreply=0, apply=None, lens=None):
        self._maybe_fail()
        if end <= begin or (not val_len) == (lens is None) or not service:
            check(-errno.EINVAL)
        if lens is not None and (len(lens) != end - begin or
                                 not all(lens)):
            check(-errno.EINVAL)
        ls = list(lens) if lens is not None else [val_len] * (end - begin)
        off = [0]
        for n in ls:
            off.append(off[-1] + n)
        size = (off[-1] * 4 + 4095) // 4096 * 4096
        p = _libc.mmap(None, size, 3, 0x22, -1, 0)
        s, self.kv_next = self.kv_next, self.kv_next + 1
        self.kv[s] = {"begin": begin, "end": end, "val_len": val_len,
                      "off": off, "handle": s,
                      "service": service, "addr": p, "size": size,
                      "apply": apply, "running": False,
                      "stats": dict.fromkeys(
                          ("pulls", "pushes", "keys_pulled", "keys_pushed",
                           "zero_copy", "parked", "bad", "errors"), 0)}
        return s

    def kv_server_set_handle(self, s, fn):
        d = self._kvd(s)
        if d["running"]:
            check(-errno.EBUSY)
        d["handle_fn"] = fn

    def kv_server_destroy(self, s):
        d = self.kv.pop(s)
        _libc.munmap(d["addr"], d["size"])

    def kv_server_value(self, s, key):
        d = self._kvd(s)
        if not d["begin"] <= key < d["end"]:
            return 0
        return d["addr"] + d["off"][key - d["begin"]] * 4

    def kv_server_value_len(self, s, key):
        d = self._kvd(s)
        if not d["begin"] <= key < d["end"]:
            return 0
        i = key - d["begin"]
        return d["off"][i + 1] - d["off"][i]

    def kv_server_poll(self, s, timeout_ms):
        if self._kvd(s)["running"]:
            check(-errno.EBUSY)
        return 0

    def kv_server_start(self, s):
        d = self._kvd(s)
        if d["running"]:
            check(-errno.EBUSY)
        d["running"] = True

    def kv_server_stop(self, s):
        self._kvd(s)["running"] = False

    def kv_server_stats(self, s):
        return dict(self._kvd(s)["stats"])

    def kv_worker_create(self, servers, val_len, service, key_max=0,
                         bounds=None, msg_max=0, timeout_ms=0,
                         max_inflight=0, region_size=0):
        self._maybe_fail()
        n = len(servers)
        if not n:
            check(-errno.EINVAL)
        if bounds is None:
            bounds = [s * (key_max // n) + min(s, key_max % n)
                      for s in range(n + 1)]
        if len(bounds) != n + 1 or any(a >= b for a, b in
                                       zip(bounds, bounds[1:])):
            check(-errno.EINVAL)
        w, self.kv_next = self.kv_next, self.kv_next + 1
        h = self.open()
        self.setup(h, region_size or (1 << 20), 64)
        self.kv[w] = {"bounds": bounds, "val_len": val_len,
                      "service": service, "h": h, "last": (0, -1)}
        return w

    def kv_worker_destroy(self, w):
        self.close(self.kv.pop(w)["h"])

    def kv_buf_alloc(self, w, size):
        return self.buf_alloc(self._kvd(w)["h"], size)

    def kv_buf_free(self, w, addr):
        self.buf_free(self._kvd(w)["h"], addr)

    def kv_last_error(self, w):
        return self._kvd(w)["last"]

    def _kv_call(self, w, keys, n, vals, push, lens=0):
        d = self._kvd(w)
        d["last"] = (0, -1)
        bounds = d["bounds"]
        ks = list((ctypes.c_uint64 * n).from_address(keys)) if n else []
        ls = list((ctypes.c_uint32 * n).from_address(lens)) if lens else \
            [d["val_len"]] * n
        off = [0]
        for ln in ls:
            off.append(off[-1] + ln)

        def err(e, srv):
            d["last"] = (-e, srv)
            check(-e)
        if not all(ls):
            err(errno.EINVAL, -1)
        if any(a >= b for a, b in zip(ks, ks[1:])):
            err(errno.EINVAL, -1)
        if ks and (ks[0] < bounds[0] or ks[-1] >= bounds[-1]):
            err(errno.ERANGE, -1)
        reqs = {}
        for i, k in enumerate(ks):
            srv = max(j for j in range(len(bounds) - 1) if bounds[j] <= k)
            if self.kv_failing and self.kv_failing[1] == srv:
                e, self.kv_failing = self.kv_failing[0], None
                err(e, srv)
            sd = next((x for x in self.kv.values()
                       if x.get("service") == d["service"] and
                       x["begin"] <= k < x["end"]), None)
            if sd is None:
                err(errno.ETIMEDOUT, srv)
            vl = ls[i]
            if self.kv_server_value_len(sd["handle"], k) != vl:
                sd["stats"]["bad"] += 1
                if not push:
                    err(errno.EREMOTEIO, srv)
                continue
            dst = self.kv_server_value(sd["handle"], k)
            src = vals + off[i] * 4
            if push and sd.get("handle_fn") is not None:
                # One request per server and call (bxkv's, below msg_max).
                reqs.setdefault(sd["handle"], []).append((k, src, vl))
                continue
            if not push:
                ctypes.memmove(src, dst, vl * 4)
                sd["stats"]["keys_pulled"] += 1
            elif sd["apply"] is not None:
                P = ctypes.POINTER(ctypes.c_float)
                sd["apply"](k, ctypes.cast(dst, P), ctypes.cast(src, P),
                            vl, None)
                sd["stats"]["keys_pushed"] += 1
            else:
                a = (ctypes.c_float * vl).from_address(dst)
                b = (ctypes.c_float * vl).from_address(src)
                for j in range(vl):
                    a[j] += b[j]
                sd["stats"]["keys_pushed"] += 1
        for h, items in reqs.items():
            sd = self.kv[h]
            from bx._native import KvPush
            nk = len(items)
            nv = sum(vl for _, _, vl in items)
            ka = (ctypes.c_uint64 * nk)(*[k for k, _, _ in items])
            la = (ctypes.c_uint32 * nk)(*[vl for _, _, vl in items])
            va = (ctypes.c_float * max(nv, 1))()
            at = 0
            for _, src, vl in items:
                ctypes.memmove(ctypes.addressof(va) + at * 4, src, vl * 4)
                at += vl
            p = KvPush(keys=ka, lens=la,
                       vals=ctypes.cast(va, ctypes.POINTER(ctypes.c_float)),
                       nkeys=nk, nvals=nv)
            sd["handle_fn"](None, ctypes.pointer(p), None)
            sd["stats"]["keys_pushed"] += nk

    def kv_push(self, w, keys, n, vals, lens=0):
        self._kv_call(w, keys, n, vals, True, lens)

    def kv_pull(self, w, keys, n, vals, lens=0):
        self._kv_call(w, keys, n, vals, False, lens)
