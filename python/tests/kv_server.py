# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""A bx.kv server for selftests/bx/python.sh: serves [begin, end) with
val_len floats per key (all 0 at first) until SIGTERM. With --apply the
pushes go through a Python apply callback per key, with --handle through
a Python handler per request (numpy, both summing as the default does),
so that the values a worker sees are the same every way. Prints
"ready" once serving, and at the end its counters and the handler's
calls: "python kv serve: pulls N pushes N ... bad N errors N handled N".
"""

import argparse
import signal
import threading

import numpy as np

from bx import kv


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-s", "--service", type=int, required=True)
    ap.add_argument("-b", "--begin", type=int, required=True)
    ap.add_argument("-e", "--end", type=int, required=True)
    ap.add_argument("-l", "--val-len", type=int, default=4)
    ap.add_argument("-M", "--msg-max", type=int, default=0)
    ap.add_argument("--apply", action="store_true")
    ap.add_argument("--handle", action="store_true")
    args = ap.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def add(key, dst, src):
        d = np.frombuffer(dst, dtype=np.float32)
        d += np.frombuffer(src, dtype=np.float32)

    calls = [0]

    def handle(keys, vals, lens):
        # Every key has val_len floats here: one vectorized step.
        calls[0] += 1
        st = srv.array().reshape(-1, args.val_len)
        st[(keys - np.uint64(args.begin)).astype(np.int64)] += \
            vals.reshape(-1, args.val_len)

    with kv.Server(args.begin, args.end, args.val_len, args.service,
                   msg_max=args.msg_max, apply=add if args.apply else None,
                   handle=handle if args.handle else None) as srv:
        srv.start()
        print("ready", flush=True)
        while not stop.wait(0.2):
            pass
        srv.stop()
        st = srv.stats()
    print("python kv serve: " + " ".join(
        f"{k} {getattr(st, k)}" for k in st.__dataclass_fields__) +
        f" handled {calls[0]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
