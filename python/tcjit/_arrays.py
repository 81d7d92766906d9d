"""Arrays in and out: dtypes, layouts and leading dimensions read from an array's strides, and the
checks of an array against a spec (docs/python.md, "Arrays").

NumPy arrays (and anything NumPy takes through ``np.from_dlpack``: CPU DLPack tensors) are host
arrays: on the emulator they are copied in and out. On a CUDA device, objects with
``__cuda_array_interface__`` or ``__dlpack__`` are device arrays used in place.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence

import numpy as np

from . import _tcjit

try:  # bf16 and fp8 host arrays (PyPI's ml_dtypes; a dependency of the package)
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    _ml = None

# tcjit dtype -> NumPy dtype of a host array holding it (tf32: 32-bit storage, as f32).
_NUMPY_OF: dict[str, Any] = {
    "f16": np.dtype(np.float16),
    "tf32": np.dtype(np.float32),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "s8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8),
    "s32": np.dtype(np.int32),
}
if _ml is not None:
    _NUMPY_OF["bf16"] = np.dtype(_ml.bfloat16)
    _NUMPY_OF["e4m3"] = np.dtype(_ml.float8_e4m3fn)
    _NUMPY_OF["e5m2"] = np.dtype(_ml.float8_e5m2)

# Packed types (two or eight elements a byte) have no NumPy array of their own.
_PACKED = {"s4", "u4", "b1"}

# DLPack / __cuda_array_interface__ type -> tcjit dtype.
_TYPESTR = {"<f2": "f16", "<f4": "f32", "<f8": "f64", "|i1": "s8", "|u1": "u8", "<i4": "s32"}
_DLPACK = {(2, 16): "f16", (2, 32): "f32", (2, 64): "f64", (0, 8): "s8", (1, 8): "u8",
           (0, 32): "s32", (4, 16): "bf16"}


def numpy_dtype(tcjit_dtype: str) -> np.dtype:
    """The NumPy dtype of a host array holding ``tcjit_dtype`` elements."""
    if tcjit_dtype in _PACKED:
        raise _tcjit.UnsupportedError(
            f"tcjit: arrays: dtype {tcjit_dtype} packs several elements in a byte and has no "
            "NumPy array type\nhow to fix: run it from the command line (tcjit run) or the C++ API")
    if tcjit_dtype not in _NUMPY_OF:
        raise _tcjit.UnsupportedError(
            f"tcjit: arrays: dtype {tcjit_dtype} needs ml_dtypes for its host arrays\n"
            "how to fix: pip install ml_dtypes")
    return _NUMPY_OF[tcjit_dtype]


def dtype_name(dtype: Any, where: str) -> str:
    """The tcjit name of a NumPy dtype (float32 -> "f32")."""
    dtype = np.dtype(dtype)
    for name, np_dtype in _NUMPY_OF.items():
        if name != "tf32" and np_dtype == dtype:
            return name
    supported = ", ".join(f"{d} ({n})" for n, d in _NUMPY_OF.items() if n != "tf32")
    raise _tcjit.SpecError(
        f"tcjit: {where}: dtype {dtype} is not one tcjit runs\n"
        f"how to fix: use one of {supported}")


@dataclasses.dataclass
class ArrayView:
    """What tcjit needs of an array: where its elements are and how they are laid out."""

    obj: Any                  # the caller's object
    host: Optional[np.ndarray]  # the NumPy view of a host array (None on a device)
    address: int              # of element [0, 0, ...]
    shape: tuple
    strides: tuple            # in elements
    dtype: str                # tcjit's name
    itemsize: int
    device: bool              # a CUDA device array


def _from_cuda_interface(obj: Any, where: str) -> ArrayView:
    cai = obj.__cuda_array_interface__
    typestr = cai["typestr"]
    dtype = _TYPESTR.get(typestr)
    if dtype is None:
        raise _tcjit.SpecError(f"tcjit: {where}: __cuda_array_interface__ type {typestr} is not "
                               "one tcjit runs\nhow to fix: use f16, bf16, f32, f64, s8, u8 or s32")
    itemsize = int(typestr[2:])
    shape = tuple(int(s) for s in cai["shape"])
    strides = cai.get("strides")
    if strides is None:  # C-contiguous
        strides, step = [], 1
        for s in reversed(shape):
            strides.insert(0, step)
            step *= s
    else:
        strides = [int(s) // itemsize for s in strides]
    return ArrayView(obj, None, int(cai["data"][0]), shape, tuple(strides), dtype, itemsize, True)


def _from_dlpack_device(obj: Any, where: str) -> ArrayView:
    address, shape, strides, code, bits, device_type = _tcjit.dlpack_info(obj)
    dtype = _DLPACK.get((code, bits))
    if dtype is None:
        raise _tcjit.SpecError(f"tcjit: {where}: DLPack type (code {code}, {bits} bits) is not "
                               "one tcjit runs\nhow to fix: use f16, bf16, f32, f64, s8, u8 or s32")
    return ArrayView(obj, None, address, tuple(shape), tuple(strides), dtype, bits // 8,
                     device_type != 1)


def view(obj: Any, where: str, on_device: bool) -> ArrayView:
    """Reads an array: a NumPy array (or a CPU DLPack tensor, through np.from_dlpack) on the
    emulator; a CUDA array on a GPU."""
    if on_device and not isinstance(obj, np.ndarray):
        if hasattr(obj, "__cuda_array_interface__"):
            return _from_cuda_interface(obj, where)
        if hasattr(obj, "__dlpack__"):
            return _from_dlpack_device(obj, where)
    if isinstance(obj, np.ndarray):
        host = obj
    elif hasattr(obj, "__dlpack__"):
        try:
            host = np.from_dlpack(obj)
        except (BufferError, RuntimeError, TypeError) as e:
            raise _tcjit.ArgumentError(
                f"tcjit: {where}: the emulator takes host arrays; this DLPack object is not one "
                f"NumPy can read ({e})\nhow to fix: pass a NumPy array or a CPU tensor") from None
    elif hasattr(obj, "__cuda_array_interface__"):
        raise _tcjit.ArgumentError(
            f"tcjit: {where}: a CUDA array was given to a runtime on the emulator\n"
            "how to fix: pass NumPy arrays, or open tcjit.Runtime(device=\"cuda\") on a GPU")
    else:
        raise _tcjit.ArgumentError(
            f"tcjit: {where}: expected an array (NumPy, or an object with __dlpack__ or "
            f"__cuda_array_interface__), got {type(obj).__name__}\n"
            "how to fix: pass np.asarray(value)")
    dtype = dtype_name(host.dtype, where)
    itemsize = host.dtype.itemsize
    address = host.__array_interface__["data"][0]
    if address % itemsize:
        raise _tcjit.ArgumentError(
            f"tcjit: {where}: the array's data at 0x{address:x} is not aligned to its "
            f"{itemsize}-byte elements\nhow to fix: pass a copy (np.ascontiguousarray(a).copy())")
    if any(s % itemsize for s in host.strides):
        raise _tcjit.ArgumentError(
            f"tcjit: {where}: strides {host.strides} are not whole elements\n"
            "how to fix: pass np.ascontiguousarray(a)")
    strides = tuple(s // itemsize for s in host.strides)
    return ArrayView(obj, host, address, host.shape, strides, dtype, itemsize, False)


@dataclasses.dataclass
class Matrix:
    """A (batch of) matrices: layout "row" or "col", the leading dimension and batch stride in
    elements."""

    batch: int
    rows: int
    cols: int
    layout: str
    ld: int
    batch_stride: int


def matrix(v: ArrayView, where: str) -> Matrix:
    """The layout of a 2-D (rows x cols) or 3-D (batch x rows x cols) array from its strides: rows
    contiguous (row-major) or columns contiguous (column-major), each row or column `ld`
    elements apart; batches one after the other."""
    if len(v.shape) not in (2, 3):
        raise _tcjit.ArgumentError(
            f"tcjit: {where}: expected a matrix (2-D) or a batch of matrices (3-D), got "
            f"{len(v.shape)}-D shape {v.shape}\nhow to fix: reshape it")
    batch = v.shape[0] if len(v.shape) == 3 else 1
    rows, cols = v.shape[-2:]
    srow, scol = v.strides[-2:]
    if scol == 1 or cols == 1 and srow != 1:
        layout, ld = "row", srow if rows > 1 else cols
    elif srow == 1:
        layout, ld = "col", scol if cols > 1 else rows
    else:
        raise _tcjit.ArgumentError(
            f"tcjit: {where}: the array is neither row- nor column-major (strides {v.strides} "
            f"elements): neither its rows nor its columns are contiguous\n"
            "how to fix: pass np.ascontiguousarray(a) (row-major) or np.asfortranarray(a)")
    inner, outer = (cols, rows) if layout == "row" else (rows, cols)
    ld = max(ld, inner)
    if ld < inner:  # pragma: no cover - overlapping rows
        raise _tcjit.ArgumentError(f"tcjit: {where}: rows overlap\nhow to fix: pass a copy")
    batch_stride = ld * outer
    if len(v.shape) == 3 and batch > 1 and v.strides[0] != batch_stride:
        raise _tcjit.ArgumentError(
            f"tcjit: {where}: the batches are {v.strides[0]} elements apart; tcjit takes them "
            f"one after the other ({batch_stride} elements apart)\n"
            "how to fix: pass np.ascontiguousarray(a)")
    return Matrix(batch, rows, cols, layout, ld, batch_stride)


def contiguous_tensor(v: ArrayView, where: str, dims: str) -> tuple:
    """The sizes of a C-contiguous tensor whose dimensions are named by `dims` ("nhwc")."""
    if len(v.shape) != len(dims):
        raise _tcjit.ArgumentError(
            f"tcjit: {where}: expected a {len(dims)}-D {dims.upper()} tensor, got shape "
            f"{v.shape}\nhow to fix: reshape it")
    if not _c_contiguous(v.shape, v.strides):
        raise _tcjit.ArgumentError(
            f"tcjit: {where}: the tensor is not contiguous in {dims.upper()} order (strides "
            f"{v.strides} elements)\nhow to fix: pass np.ascontiguousarray(x)")
    return tuple(v.shape)


def _c_contiguous(shape: tuple, strides: tuple) -> bool:
    step = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size > 1 and stride != step:
            return False
        step *= size
    return True


def channels_last(v: ArrayView) -> ArrayView:
    """An N,C,spatial-shaped tensor stored channels-last (torch.channels_last) seen as NHWC: the
    same memory, its dimensions reordered. Other tensors are returned as they are."""
    if len(v.shape) < 4 or _c_contiguous(v.shape, v.strides):
        return v
    order = (0,) + tuple(range(2, len(v.shape))) + (1,)
    shape = tuple(v.shape[i] for i in order)
    strides = tuple(v.strides[i] for i in order)
    if not _c_contiguous(shape, strides):
        return v
    host = v.host.transpose(order) if v.host is not None else None
    return dataclasses.replace(v, host=host, shape=shape, strides=strides)


def span_bytes(v: ArrayView) -> int:
    """The bytes from element [0, ...] to the last element, inclusive (rows' padding included):
    what is copied to and from the emulator."""
    if any(s == 0 for s in v.shape):
        return 0
    return (sum((n - 1) * s for n, s in zip(v.shape, v.strides)) + 1) * v.itemsize


def empty_matrix(batch: int, rows: int, cols: int, layout: str, ld: int, dtype: str,
                 batched: bool) -> np.ndarray:
    """A new host matrix (batch) in `layout` with leading dimension `ld`."""
    npt = numpy_dtype(dtype)
    if layout == "row":
        full = np.empty((batch, rows, ld), dtype=npt)[:, :, :cols]
    else:
        full = np.empty((batch, cols, ld), dtype=npt)[:, :, :rows].transpose(0, 2, 1)
    return full if batched else full[0]


def check_same_device(views: Sequence[ArrayView], on_device: bool) -> None:
    for v in views:
        if v.device != on_device:
            raise _tcjit.ArgumentError(
                "tcjit: launch: a host array was given to a runtime on a CUDA device\n"
                "how to fix: pass CUDA arrays (torch, CuPy), or open tcjit.Runtime(device=\"emu\")")
