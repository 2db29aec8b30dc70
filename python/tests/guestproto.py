# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""What the guest tests' client (test_guest.py) and server
(guest_server.py) agree on: payload patterns and request codes.

A push carries message(seed, n): its seed and size in 8 bytes, then
pattern(seed, n - 8); the server checks every byte. A pull request
starts with a 4-byte code:

  PATT seed size   the reply is pattern(seed, size)
  ECHO data        the reply is data reversed
  STAT             the reply is the server's counters, as JSON
  HOLD             no reply until FREE (the requester times out or
                   closes meanwhile)
  FREE             every held request is answered (b"late"), the reply
                   is how many
"""

import struct

import numpy as np

HDR = struct.Struct("<II")


def pattern(seed: int, n: int) -> np.ndarray:
    """n bytes that depend on every bit of seed and on their position."""
    i = np.arange(n, dtype=np.uint64)
    x = (i + np.uint64(seed) * np.uint64(0x9E3779B1)) * np.uint64(0x5851F42D)
    return ((x >> np.uint64(29)) & np.uint64(0xFF)).astype(np.uint8)


def message(seed: int, n: int) -> bytes:
    """A push payload of n bytes (0, or at least 8)."""
    if n == 0:
        return b""
    return HDR.pack(seed, n) + pattern(seed, n - 8).tobytes()


def check_message(data) -> bool:
    """Whether data is a message() intact."""
    n = len(data)
    if n == 0:
        return True
    if n < HDR.size:
        return False
    seed, size = HDR.unpack_from(data)
    body = np.frombuffer(data, dtype=np.uint8, offset=HDR.size)
    return size == n and np.array_equal(body, pattern(seed, n - HDR.size))
