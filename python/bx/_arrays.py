# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Arrays and tensors as libbx's memory, without element-wise paths.

libbx takes addresses: of keys (uint64), of lengths (uint32) and of
values. This module turns what a caller has -- a NumPy array, a torch
tensor, an object with ``__dlpack__``, any buffer object, or a sequence
of numbers -- into an address and a size:

- at no cost when the memory already has the type libbx wants and is
  contiguous (its address is passed as it is; libbx then copies it into
  or out of its region once, or not at all when it lies in the region);
- else in one vectorized step: ``ndarray.astype`` or a view (keys of
  any integer type, int64 -- torch's index type -- included), one
  strided copy of a non-contiguous array or tensor that is only read,
  ``numpy.asarray``/``array.array`` for a list.

Never element by element in Python. Neither NumPy nor torch is needed
to import this module: torch is never imported here (an object is a
tensor only if torch is loaded already), NumPy on first use.

Element types by name (:data:`DTYPES`): bx.kv's calls take float32 now;
the conversions already take a ``dtype`` for the typed values to come
(float16, bfloat16, int32, int64).
"""

from __future__ import annotations

import array
import ctypes
import functools
import math
import sys
from typing import Any, Callable, Optional, Tuple

__all__ = ["DTYPES", "Mem", "uints", "values", "dtype_name", "is_tensor",
           "numpy", "copy_into", "empty_over", "nbytes_of"]

# name: (struct format characters, itemsize, NumPy's name or None)
DTYPES = {
    "float32": ("f", 4, "float32"),
    "float16": ("e", 2, "float16"),
    "bfloat16": ("", 2, None),           # torch only
    "int32": ("i", 4, "int32"),
    "int64": ("q", 8, "int64"),
}
_FMT = {"f": "float32", "e": "float16", "d": "float64", "b": "int8",
        "B": "uint8", "h": "int16", "H": "uint16", "i": "int32",
        "I": "uint32", "q": "int64", "Q": "uint64", "?": "bool"}


@functools.lru_cache(maxsize=None)
def numpy() -> Any:
    """NumPy, or None when it is not installed."""
    try:
        import numpy as np
    except ImportError:
        return None
    return np


def _torch() -> Any:
    """torch if the process has imported it (a tensor needs it loaded)."""
    return sys.modules.get("torch")


def is_tensor(obj: Any) -> bool:
    t = _torch()
    return t is not None and isinstance(obj, t.Tensor)


def _is_ndarray(obj: Any) -> bool:
    np = numpy()
    return np is not None and isinstance(obj, np.ndarray)


def dtype_name(obj: Any) -> str:
    """The element type of an array, tensor or buffer, as a name
    (``float32``, ``int64``, ``uint64`` ...)."""
    if is_tensor(obj):
        return str(obj.dtype).replace("torch.", "")
    if _is_ndarray(obj):
        return obj.dtype.name if obj.dtype.isnative else \
            obj.dtype.name + " (not native byte order)"
    mv = memoryview(obj)
    f = mv.format.lstrip("@=<")
    if f in ("l", "L"):
        f = "q" if f == "l" else "Q"
    return _FMT.get(f, "format %r" % mv.format)


def _np_dtype(name: str) -> Any:
    np = numpy()
    n = DTYPES[name][2]
    if n is None:
        raise TypeError(f"{name}: NumPy has no such type (use a torch "
                        "tensor)")
    return np.dtype(n)


def _torch_dtype(name: str) -> Any:
    return getattr(_torch(), name)


class Mem:
    """An address and what keeps its memory alive."""
    __slots__ = ("addr", "nbytes", "n", "keep")

    def __init__(self, addr: int, nbytes: int, n: int, keep: Any) -> None:
        self.addr, self.nbytes, self.n, self.keep = addr, nbytes, n, keep

    def __len__(self) -> int:
        return self.n


# ---- keys and lengths: unsigned integers ------------------------------------

def uints(vals: Any, width: int, what: str) -> Any:
    """A C array (``c_uint64`` for width 8, ``c_uint32`` for 4) over
    ``vals``, integers of any type: the caller's memory when it already
    is contiguous unsigned (or non-negative signed) of that width, else
    one vectorized conversion. Negative or too large values:
    ``ValueError``; not integers: ``TypeError``."""
    ctype = ctypes.c_uint64 if width == 8 else ctypes.c_uint32
    a = _uint_array(vals, width, what)
    if isinstance(a, array.array):
        n = len(a)
        addr = a.buffer_info()[0] if n else 0
    else:                                  # an ndarray
        n = a.shape[0]
        addr = a.ctypes.data if n else 0
    if not n:
        return (ctype * 0)()
    c = (ctype * n).from_address(addr)
    c._bx_keep = a
    return c


def _uint_array(vals: Any, width: int, what: str) -> Any:
    np = numpy()
    code = "Q" if width == 8 else "I"
    if is_tensor(vals):
        t = vals.detach()
        if t.is_floating_point() or t.is_complex() or \
                t.dtype == _torch().bool:
            raise TypeError(f"{what}: integers, not {dtype_name(t)}")
        if t.dim() != 1:
            raise ValueError(f"{what}: one dimension, not "
                             f"{tuple(t.shape)}")
        if t.device.type != "cpu":
            t = t.cpu()
        if np is None:
            raise TypeError(f"{what}: a tensor needs NumPy")
        return _np_uints(t.numpy(), width, what)
    if np is not None:
        if isinstance(vals, np.ndarray):
            return _np_uints(vals, width, what)
        if hasattr(vals, "__dlpack__") and not _is_buffer(vals):
            return _np_uints(np.from_dlpack(vals), width, what)
    try:
        mv = memoryview(vals)
    except TypeError:
        mv = None
    if mv is not None:
        if mv.ndim == 1 and mv.c_contiguous and mv.itemsize == width and \
                mv.format.lstrip("<=@") in (("Q", "L") if width == 8
                                            else ("I", "L")):
            a = array.array(code)
            if mv.readonly:
                a.frombytes(mv)           # one copy
                return a
            return _Borrowed(mv, width)
        if np is not None:
            return _np_uints(np.asarray(mv), width, what)
        vals = mv.tolist()
    if np is not None:
        if not hasattr(vals, "__len__"):
            vals = list(vals)
        try:
            a = np.asarray(vals)
        except (ValueError, TypeError, OverflowError) as e:
            raise TypeError(f"{what}: integers ({e})") from None
        if a.dtype.kind in "iu" or (a.size == 0 and a.ndim == 1):
            return _np_uints(a.astype(np.uint64 if a.size == 0 else
                                      a.dtype, copy=False), width, what)
        if a.dtype.kind != "O":
            raise TypeError(f"{what}: integers, not {a.dtype.name}")
    # Without NumPy, or Python ints beyond int64: array.array converts
    # in C and refuses negatives and floats itself.
    try:
        return array.array(code, vals)
    except OverflowError as e:
        raise ValueError(f"{what}: not all uint{8 * width} ({e})") from None
    except TypeError as e:
        raise TypeError(f"{what}: integers ({e})") from None


def _is_buffer(obj: Any) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


class _Borrowed:
    """A caller's writable uint64/uint32 buffer, used as it is."""

    def __init__(self, mv: memoryview, width: int) -> None:
        self.mv = mv
        self.shape = (mv.nbytes // width,)
        self.ctypes = self
        self.data = ctypes.addressof(ctypes.c_char.from_buffer(mv.cast("B"))) \
            if mv.nbytes else 0


def _np_uints(a: Any, width: int, what: str) -> Any:
    np = numpy()
    if a.dtype.kind not in "iu":
        raise TypeError(f"{what}: integers, not {a.dtype.name}")
    if a.ndim != 1:
        raise ValueError(f"{what}: one dimension, not {a.shape}")
    if a.dtype.kind == "i" and a.size and a.min() < 0:
        raise ValueError(f"{what}: negative ({int(a.min())}); "
                         f"uint{8 * width} expected")
    if width == 4 and a.size and a.dtype.itemsize > 4 and \
            int(a.max()) > 0xffffffff:
        raise ValueError(f"{what}: {int(a.max())} is not a uint32")
    want = np.dtype(np.uint64 if width == 8 else np.uint32)
    if a.dtype.itemsize == width and a.dtype.isnative and \
            a.flags.c_contiguous:
        return a.view(want)               # no copy: same bits
    return np.ascontiguousarray(a, dtype=want)


# ---- values -------------------------------------------------------------------

def _shape_ok(shape: Tuple[int, ...], want: int,
              rows: Optional[Tuple[int, int]]) -> bool:
    if shape == (want,):
        return True
    return rows is not None and tuple(shape) == rows


def _shape_str(want: int, rows: Optional[Tuple[int, int]]) -> str:
    s = f"({want},)"
    return s + (f" or {rows}" if rows is not None else "")


def values(obj: Any, dtype: str, want: int, writable: bool, what: str,
           rows: Optional[Tuple[int, int]] = None) -> Mem:
    """The memory of ``want`` values of ``dtype`` in ``obj``.

    ``obj``: a torch tensor (CPU), an ndarray, an object with
    ``__dlpack__``, a buffer object of that type, or -- read only -- a
    sequence of numbers. Its shape must be ``(want,)`` or ``rows``
    (``(nkeys, val_len)``), else ``ValueError``; a type other than
    ``dtype``: ``TypeError``. Contiguous memory is used as it is. Read
    only (``writable`` false): non-contiguous memory is copied once
    (one strided copy), a sequence converted in one call. To be written
    (``out=``): non-contiguous or read-only memory is refused
    (``ValueError``)."""
    np = numpy()
    size = DTYPES[dtype][1]
    if is_tensor(obj):
        return _tensor_values(obj, dtype, want, writable, what, rows)
    if np is not None and not isinstance(obj, np.ndarray) and \
            hasattr(obj, "__dlpack__") and not _is_buffer(obj):
        obj = np.from_dlpack(obj)      # read-only view
    if np is not None and isinstance(obj, np.ndarray):
        a = obj
        if a.dtype != _np_dtype(dtype):
            raise TypeError(f"{what}: {dtype} expected, not "
                            f"{dtype_name(a)}")
        if not _shape_ok(a.shape, want, rows):
            raise ValueError(f"{what}: shape {a.shape}, "
                             f"{_shape_str(want, rows)} expected")
        if writable and not a.flags.writeable:
            raise ValueError(f"{what}: read-only")
        if not a.flags.c_contiguous:
            if writable:
                raise ValueError(f"{what}: not contiguous (pass a "
                                 "contiguous array and copy it back)")
            a = np.ascontiguousarray(a)          # the one copy
        return Mem(a.ctypes.data if want else 0, want * size, want, a)
    try:
        mv = memoryview(obj)
    except TypeError:
        mv = None
    if mv is None:
        if writable:
            raise TypeError(f"{what}: a writable {dtype} array, tensor "
                            "or buffer")
        return _sequence(obj, dtype, want, what)
    f = mv.format.lstrip("<=@")
    if mv.itemsize != size or f != DTYPES[dtype][0]:
        raise TypeError(f"{what}: {dtype} expected, not "
                        f"{dtype_name(mv)}")
    if mv.nbytes != want * size or (mv.ndim > 1 and
                                    not _shape_ok(mv.shape, want, rows)):
        raise ValueError(f"{what}: {mv.nbytes // size} values, shape "
                         f"{mv.shape}; {_shape_str(want, rows)} expected")
    if writable and mv.readonly:
        raise ValueError(f"{what}: read-only")
    if not mv.c_contiguous:
        if writable:
            raise ValueError(f"{what}: not contiguous")
        b = mv.tobytes()                           # the one copy
        return Mem(_bytes_addr(b), len(b), want, b)
    if not mv.nbytes:
        return Mem(0, 0, 0, mv)
    if mv.readonly:
        if np is not None:
            a = np.frombuffer(mv, dtype=np.uint8)
            return Mem(a.ctypes.data, mv.nbytes, want, a)
        b = mv.tobytes()
        return Mem(_bytes_addr(b), len(b), want, b)
    return Mem(ctypes.addressof(ctypes.c_char.from_buffer(mv.cast("B"))),
               mv.nbytes, want, mv)


def _bytes_addr(b: bytes) -> int:
    return ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p).value or 0


def _tensor_values(t: Any, dtype: str, want: int, writable: bool,
                   what: str, rows: Optional[Tuple[int, int]]) -> Mem:
    if t.dtype != _torch_dtype(dtype):
        raise TypeError(f"{what}: torch.{dtype} expected, not {t.dtype}")
    if not _shape_ok(tuple(t.shape), want, rows):
        raise ValueError(f"{what}: shape {tuple(t.shape)}, "
                         f"{_shape_str(want, rows)} expected")
    if t.device.type != "cpu":
        if writable:
            raise TypeError(f"{what}: a CPU tensor, not {t.device}")
        t = t.cpu()                              # the one copy
    if t.requires_grad:
        t = t.detach()
    if not t.is_contiguous():
        if writable:
            raise ValueError(f"{what}: not contiguous (pass a contiguous "
                             "tensor and copy it back)")
        t = t.contiguous()                       # the one copy
    return Mem(t.data_ptr() if want else 0, want * DTYPES[dtype][1], want, t)


def _sequence(obj: Any, dtype: str, want: int, what: str) -> Mem:
    """Numbers of a list or tuple, converted by NumPy or array.array in
    one call."""
    np = numpy()
    size = DTYPES[dtype][1]
    if np is not None:
        try:
            a = np.asarray(obj, dtype=_np_dtype(dtype))
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: numbers ({e})") from None
        a = np.ascontiguousarray(a.reshape(-1))
        got = a.shape[0]
    else:
        try:
            a = array.array(DTYPES[dtype][0], obj)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: numbers ({e})") from None
        got = len(a)
    if got != want:
        raise ValueError(f"{what}: {got} values, {want} expected")
    if not want:
        return Mem(0, 0, 0, a)
    addr = a.ctypes.data if np is not None else a.buffer_info()[0]
    return Mem(addr, want * size, want, a)


# ---- copies and region-backed arrays ------------------------------------------

def nbytes_of(obj: Any) -> int:
    if is_tensor(obj):
        return obj.numel() * obj.element_size()
    if _is_ndarray(obj):
        return obj.nbytes
    return memoryview(obj).nbytes


def copy_into(dst: Any, obj: Any) -> None:
    """Copy ``obj`` (a tensor, array or buffer object, contiguous or
    not) into the writable buffer ``dst`` of its size: one memcpy, or
    one strided copy."""
    n = nbytes_of(obj)
    if not n:
        return
    if is_tensor(obj):
        t = obj.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.is_contiguous():
            ctypes.memmove(ctypes.addressof(dst), t.data_ptr(), n)
        else:
            _torch().frombuffer(dst, dtype=t.dtype, count=t.numel()) \
                .view(t.shape).copy_(t)
        return
    np = numpy()
    if np is not None and not isinstance(obj, np.ndarray) and \
            not _is_buffer(obj) and hasattr(obj, "__dlpack__"):
        obj = np.from_dlpack(obj)
    if np is not None and isinstance(obj, np.ndarray):
        np.copyto(np.frombuffer(dst, dtype=obj.dtype,
                                count=obj.size).reshape(obj.shape), obj)
        return
    mv = memoryview(obj)
    if not mv.c_contiguous:
        if np is not None:
            np.copyto(np.frombuffer(dst, dtype=np.uint8, count=n)
                      .reshape(mv.shape + (mv.itemsize,)),
                      np.asarray(mv).view(np.uint8).reshape(
                          mv.shape + (mv.itemsize,)))
            return
        mv = memoryview(mv.tobytes())
    memoryview(dst).cast("B")[:n] = mv.cast("B")


def _shape(shape: Any) -> Tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(s) for s in shape)


def empty_over(alloc: Callable[[int], Any], shape: Any,
               dtype: Any) -> Any:
    """A tensor (``dtype`` a ``torch.dtype``) or ndarray (a NumPy dtype
    or name) of ``shape`` over ``alloc(nbytes)``, a writable buffer
    object (region memory); it keeps that object alive."""
    shp = _shape(shape)
    n = math.prod(shp)
    t = _torch()
    if t is not None and isinstance(dtype, t.dtype):
        size = t.empty((), dtype=dtype).element_size()
        buf = alloc(max(n * size, 1))
        if not n:
            return t.empty(shp, dtype=dtype)
        return t.frombuffer(buf, dtype=dtype, count=n).view(shp)
    np = numpy()
    if np is None:
        raise TypeError("dtype: a torch dtype, or NumPy for arrays")
    d = np.dtype(dtype)
    buf = alloc(max(n * d.itemsize, 1))
    return np.frombuffer(buf, dtype=d, count=n).reshape(shp)
