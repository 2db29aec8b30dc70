# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""The server half of selftests/bx/python.sh, on guest 0: binds a
service, keeps receive buffers posted (recv_async), checks every push
byte for byte and answers pulls as guestproto.py says. Prints "ready"
once bound, and at SIGTERM its counters, "bad 0" when every push was
intact; exits 0 then."""

import argparse
import json
import signal
import struct
import sys
from concurrent.futures import FIRST_COMPLETED, wait

import bx
from guestproto import check_message, pattern

RECV_BUFS = 4
RECV_CAP = 4 << 20


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-s", "--service", type=int, required=True)
    args = ap.parse_args()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    st = {"pushes": 0, "push_bytes": 0, "bad": 0, "requests": 0,
          "errors": 0, "reply_errors": 0, "held": 0, "released": 0}
    held = []
    with bx.Bx(region_size=32 << 20, cq_entries=256) as b:
        b.bind(args.service)
        bufs = [b.alloc(RECV_CAP) for _ in range(RECV_BUFS)]
        posted = {b.recv_async(args.service, buf): buf for buf in bufs}
        print("ready", flush=True)

        def reply(m, data):
            try:
                b.reply(m, data, 30000)
            except OSError as e:
                st["reply_errors"] += 1
                print(f"reply: {e}", flush=True)

        while not stop:
            done, _ = wait(posted, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                buf = posted.pop(f)
                try:
                    m = f.result()
                except OSError as e:
                    st["errors"] += 1
                    print(f"recv: {e}", flush=True)
                    m = None
                if m is not None and not m.is_request:
                    st["pushes"] += 1
                    st["push_bytes"] += len(m.data)
                    if not check_message(m.data):
                        st["bad"] += 1
                        print(f"bad push of {len(m.data)} bytes", flush=True)
                elif m is not None:
                    st["requests"] += 1
                    code, rest = bytes(m.data[:4]), m.data[4:]
                    if code == b"PATT":
                        seed, size = struct.unpack_from("<II", rest)
                        with b.alloc(max(size, 1)) as out:
                            out[:size] = pattern(seed, size)
                            reply(m, out[:size])
                    elif code == b"ECHO":
                        reply(m, bytes(rest)[::-1])
                    elif code == b"STAT":
                        reply(m, json.dumps(st).encode())
                    elif code == b"HOLD":
                        held.append(m.token)
                        st["held"] += 1
                    elif code == b"FREE":
                        n = len(held)
                        for t in held:
                            reply(t, b"late")
                        held.clear()
                        st["released"] += n
                        reply(m, str(n).encode())
                    else:
                        st["bad"] += 1
                        reply(m, b"?")
                posted[b.recv_async(args.service, buf)] = buf
        b.unbind(args.service)
        wait(posted, timeout=10)
    print("python serve: " + " ".join(f"{k} {v}" for k, v in st.items()),
          flush=True)
    return 0 if st["bad"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
