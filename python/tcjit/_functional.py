"""tcjit.matmul, tcjit.conv2d, tcjit.conv3d: the spec built from the arrays, the operation
prepared once per spec on the default runtime (or the one given) and reused by every later call
(docs/python.md, "Functional shortcuts")."""

from __future__ import annotations

import threading
from typing import Any, Optional, Sequence, Union

from . import _arrays, _tcjit
from ._runtime import Operation, Runtime

_lock = threading.Lock()
_default: Optional[Runtime] = None
# (id of the runtime, spec text) -> Operation: each call after the first is served from here.
_operations: dict = {}


def default_runtime() -> Runtime:
    """The runtime the shortcuts use when none is given: Runtime() (device "auto", the default
    database), opened at the first call."""
    global _default
    with _lock:
        if _default is None:
            _default = Runtime()
        return _default


def set_default_runtime(runtime: Optional[Runtime]) -> None:
    """Makes `runtime` the one the shortcuts use (None: open Runtime() at the next call)."""
    global _default
    with _lock:
        _default = runtime
        _operations.clear()


def _operation(spec: str, runtime: Optional[Runtime]) -> Operation:
    rt = runtime or default_runtime()
    key = (id(rt), spec)
    with _lock:
        op = _operations.get(key)
    if op is None:
        op = rt.prepare(spec)
        with _lock:
            _operations[key] = op
    return op


def _number(value: float) -> str:
    return repr(float(value)).rstrip("0").rstrip(".") if float(value) != int(value) \
        else str(int(value))


def _operand(m: _arrays.Matrix, dtype: str, name: str, packed_inner: int) -> str:
    text = f"{name}={dtype}:{m.layout}"
    return text + (f" ld{name}={m.ld}" if m.ld != packed_inner else "")


def matmul(a: Any, b: Any, *, bias: Any = None, act: Optional[str] = None, alpha: float = 1.0,
           beta: float = 0.0, c: Any = None, out: Any = None, out_dtype: Any = None,
           math: str = "auto", runtime: Optional[Runtime] = None, stream: Any = None) -> Any:
    """D = act(alpha * a @ b + beta * c + bias) on tensor cores.

    a (m x k) and b (k x n): 2-D, or 3-D with a batch first; row- or column-major, leading
    dimensions from the strides. bias: n values (one per output column; shape (m, 1): one per
    row). act: relu, tanh, sigmoid, elu, gelu, gelu_tanh, softplus, swish. out_dtype: the
    output's dtype (default: the DSL's: a's, s32 for int8, f32 for tf32). math: "auto", "tf32"
    or "f32" for float32 inputs. The spec is built from the arrays and prepared once; later calls
    with the same shapes and dtypes reuse the operation.

    Example::

        >>> import numpy as np, tcjit
        >>> tcjit.set_default_runtime(tcjit.Runtime(device="emu", db=False))
        >>> a = np.random.rand(64, 32).astype(np.float16)
        >>> b = np.random.rand(32, 48).astype(np.float16)
        >>> d = tcjit.matmul(a, b, act="relu")
        >>> d.shape, d.dtype
        ((64, 48), dtype('float16'))
    """
    rt = runtime or default_runtime()
    on_device = not rt.is_emulator
    va, vb = _arrays.view(a, "operand a", on_device), _arrays.view(b, "operand b", on_device)
    ma, mb = _arrays.matrix(va, "operand a"), _arrays.matrix(vb, "operand b")
    if ma.cols != mb.rows:
        raise _tcjit.SpecError(
            f"tcjit: matmul: a is {ma.rows} x {ma.cols} and b is {mb.rows} x {mb.cols}: a's "
            f"columns must equal b's rows\nhow to fix: pass a (m x k) and b (k x n)")
    if va.dtype != vb.dtype:
        raise _tcjit.SpecError(f"tcjit: matmul: a is {va.dtype} and b is {vb.dtype}\n"
                               "how to fix: convert both to one dtype")
    m, k, n = ma.rows, ma.cols, mb.cols
    words = [f"gemm m={m} n={n} k={k} batch={ma.batch}",
             _operand(ma, va.dtype, "a", k if ma.layout == "row" else m),
             _operand(mb, vb.dtype, "b", n if mb.layout == "row" else k)]
    target = out if out is not None else c
    if target is not None:
        vt = _arrays.view(target, "out" if out is not None else "operand c", on_device)
        mt = _arrays.matrix(vt, "out")
        words.append(_operand(mt, vt.dtype, "c", n if mt.layout == "row" else m))
    elif out_dtype is not None:
        words.append(f"c={_arrays.dtype_name(out_dtype, 'out_dtype')}:row")
    if va.dtype == "f32":
        words.append(f"math={math}")
    bias_1d = bias
    if bias is not None:
        vbias = _arrays.view(bias, "bias", on_device)
        per_row = len(vbias.shape) == 2 and vbias.shape == (m, 1) and n != 1
        words.append("bias=row" if per_row else "bias=col")
        if len(vbias.shape) == 2 and vbias.host is not None:
            bias_1d = vbias.host.reshape(-1)
    words.append(f"alpha={_number(alpha)} beta={_number(beta)} act={act or 'none'}")
    op = _operation(" ".join(words), rt)
    return op(a, b, c, out=out, bias=bias_1d, stream=stream)


def _per_dim(value: Union[int, Sequence[int]], nd: int, name: str) -> list:
    values = [value] * nd if isinstance(value, int) else list(value)
    if len(values) != nd:
        raise _tcjit.SpecError(f"tcjit: conv: {name} has {len(values)} values for {nd} spatial "
                               f"dimensions\nhow to fix: give one number or {nd}")
    return values


def _conv(nd: int, x: Any, w: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
          groups: int, act: Optional[str], out: Any, runtime: Optional[Runtime],
          stream: Any) -> Any:
    rt = runtime or default_runtime()
    on_device = not rt.is_emulator
    op_name, act_dims, filt_dims = ("conv2d", "nhwc", "krsc") if nd == 2 else \
        ("conv3d", "ndhwc", "ktrsc")
    vx = _arrays.channels_last(_arrays.view(x, "x", on_device))
    vw = _arrays.view(w, "filter", on_device)
    xs = _arrays.contiguous_tensor(vx, "x", act_dims)
    ws = _arrays.contiguous_tensor(vw, "filter", filt_dims)
    if vx.dtype != vw.dtype:
        raise _tcjit.SpecError(f"tcjit: {op_name}: x is {vx.dtype} and the filter {vw.dtype}\n"
                               "how to fix: convert both to one dtype")
    if ws[-1] * groups != xs[-1]:
        raise _tcjit.SpecError(
            f"tcjit: {op_name}: x has {xs[-1]} channels, the filter {ws[-1]} per group with "
            f"groups={groups}\nhow to fix: the filter's last dimension is c / groups (KRSC)")
    spatial = "dhw"[3 - nd:]
    filt = "trs"[3 - nd:]
    words = [op_name, f"n={xs[0]}"]
    words += [f"{d}={s}" for d, s in zip(spatial, xs[1:-1])]
    words += [f"c={xs[-1]}", f"k={ws[0]}"]
    words += [f"{d}={s}" for d, s in zip(filt, ws[1:-1])]
    for key, value in (("pad", padding), ("stride", stride), ("dilation", dilation)):
        words.append(f"{key}=" + ",".join(str(v) for v in _per_dim(value, nd, key)))
    words += [f"groups={groups}", f"x={vx.dtype}:{act_dims}", f"filter={vw.dtype}:{filt_dims}",
              f"act={act or 'none'}"]
    if vx.dtype == "f32":
        words.append("math=auto")
    if bias is not None:
        words.append("bias=col")
    op = _operation(" ".join(words), rt)
    return op.conv(x, w, out=out, bias=bias, stream=stream)


def conv2d(x: Any, w: Any, *, bias: Any = None, stride: Union[int, Sequence[int]] = 1,
           padding: Union[int, Sequence[int]] = 0, dilation: Union[int, Sequence[int]] = 1,
           groups: int = 1, act: Optional[str] = None, out: Any = None,
           runtime: Optional[Runtime] = None, stream: Any = None) -> Any:
    """A 2-D convolution (forward) on tensor cores: y = act(conv(x, w) + bias).

    x: NHWC (n, h, w, c), contiguous, or an (n, c, h, w) tensor stored channels-last. w: KRSC
    (k, r, s, c / groups). bias: k values. stride, padding, dilation: one number or (h, w).
    Returns y, NHWC (n, p, q, k), of x's dtype. Prepared once per shape; later calls reuse it.

    Example::

        >>> import numpy as np, tcjit
        >>> tcjit.set_default_runtime(tcjit.Runtime(device="emu", db=False))
        >>> x = np.random.rand(1, 8, 8, 16).astype(np.float16)   # NHWC
        >>> w = np.random.rand(32, 3, 3, 16).astype(np.float16)  # KRSC
        >>> tcjit.conv2d(x, w, padding=1, act="relu").shape
        (1, 8, 8, 32)
    """
    return _conv(2, x, w, bias, stride, padding, dilation, groups, act, out, runtime, stream)


def conv3d(x: Any, w: Any, *, bias: Any = None, stride: Union[int, Sequence[int]] = 1,
           padding: Union[int, Sequence[int]] = 0, dilation: Union[int, Sequence[int]] = 1,
           groups: int = 1, act: Optional[str] = None, out: Any = None,
           runtime: Optional[Runtime] = None, stream: Any = None) -> Any:
    """A 3-D convolution (forward): x NDHWC (n, d, h, w, c), w KTRSC (k, t, r, s, c / groups);
    returns y NDHWC. Otherwise as conv2d.

    Example::

        >>> x = np.random.rand(1, 4, 4, 4, 8).astype(np.float16)
        >>> w = np.random.rand(8, 3, 3, 3, 8).astype(np.float16)
        >>> tcjit.conv3d(x, w, padding=1).shape
        (1, 4, 4, 4, 8)
    """
    return _conv(3, x, w, bias, stride, padding, dilation, groups, act, out, runtime, stream)
