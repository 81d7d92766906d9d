"""tcjit.Runtime and tcjit.Operation: a device and its kernel cache, and prepared operations
called on arrays (docs/python.md)."""

from __future__ import annotations

import os
from typing import Any, Optional, Union

import numpy as np

from . import _arrays, _tcjit
from ._arrays import ArrayView

# The C++ API's words in its messages, as the Python API spells them.
_VOCABULARY = [
    ("RuntimeOptions::db_path", "Runtime(db=...)"),
    ("RuntimeOptions::device", "Runtime(device=...)"),
    ("RuntimeOptions::arch", "Runtime(arch=...)"),
    ("RuntimeOptions::on_miss", "Runtime(on_miss=...)"),
    ("RuntimeOptions::backend", "Runtime(backend=...)"),
    ("set use_database = false", "pass db=False"),
    ("MissPolicy::heuristic", 'on_miss="heuristic"'),
    ("MissPolicy::fail", 'on_miss="fail"'),
    ("MissPolicy::tune", 'on_miss="tune"'),
    ("MissPolicy::background", 'on_miss="background"'),
    ("a MissPolicy other than fail", 'an on_miss other than "fail"'),
    ("Operation::config_for", "Operation.config_for"),
    ("with GemmArgs", "with the arrays' sizes"),
    ("with ConvArgs", "with the arrays' sizes"),
    ("GemmArgs::", ""),
    ("ConvArgs::", ""),
]


def _python_words(error: BaseException) -> BaseException:
    """The error with the C++ API's names in its message written as the Python API's."""
    if not isinstance(error, _tcjit.Error) or not error.args:
        return error
    text = str(error.args[0])
    for cpp, py in _VOCABULARY:
        text = text.replace(cpp, py)
    error.args = (text,) + error.args[1:]
    for attr in ("problem", "how_to_fix"):
        value = getattr(error, attr, "")
        for cpp, py in _VOCABULARY:
            value = value.replace(cpp, py)
        setattr(error, attr, value)
    return error


def spec_words(text: str) -> dict:
    """The key=value words of a canonical spec, with "op" for its operation."""
    words = text.split()
    fields = {"op": words[0]}
    for word in words[1:]:
        key, _, value = word.partition("=")
        fields[key] = value
    return fields


def _size(value: str) -> Optional[int]:
    """A fixed size, or None for `?` and ranges."""
    return int(value) if value.isdigit() else None


def _stream_handle(stream: Any, views: list) -> int:
    """A CUstream handle: an int, an object with .cuda_stream (torch) or .ptr (CuPy) or
    __cuda_stream__; None takes the framework's current stream of the first array that has one
    (torch.cuda.current_stream(), cupy.cuda.get_current_stream()), else the device's own (0)."""
    if stream is None:
        for v in views:
            module = type(v.obj).__module__.split(".")[0]
            if module == "torch":
                import torch  # noqa: PLC0415 - only with torch tensors
                return int(torch.cuda.current_stream(v.obj.device).cuda_stream)
            if module == "cupy":
                import cupy  # noqa: PLC0415 - only with CuPy arrays
                return int(cupy.cuda.get_current_stream().ptr)
        return 0
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise _tcjit.ArgumentError(
        f"tcjit: launch: stream= takes a torch or CuPy stream, an object with __cuda_stream__ or "
        f"a CUstream handle (int), got {type(stream).__name__}\nhow to fix: pass one of those")


class _DeviceBuffers:
    """The emulator's copies of host arrays for one launch: allocated, copied in, copied out and
    freed (with the GIL released in each step)."""

    def __init__(self, rt: "_tcjit.Runtime"):
        self._rt = rt
        self._owned: list = []

    def __enter__(self) -> "_DeviceBuffers":
        return self

    def __exit__(self, *exc: Any) -> None:
        for address in self._owned:
            self._rt.free(address)

    def allocate(self, nbytes: int) -> int:
        address = self._rt.allocate(max(nbytes, 1))
        self._owned.append(address)
        return address

    def copy_in(self, v: Optional[ArrayView]) -> int:
        if v is None:
            return 0
        if v.device:
            return v.address
        nbytes = _arrays.span_bytes(v)
        address = self.allocate(nbytes)
        if nbytes:
            self._rt.copy_to_device(address, v.address, nbytes)
        return address

    def copy_out(self, v: ArrayView, address: int) -> None:
        if not v.device and _arrays.span_bytes(v):
            self._rt.copy_to_host(v.address, address, _arrays.span_bytes(v))


def _writable(v: ArrayView, where: str) -> None:
    if v.host is not None and not v.host.flags.writeable:
        raise _tcjit.ArgumentError(f"tcjit: {where}: the array is read-only\n"
                                   "how to fix: pass a writable array (or none: one is returned)")


def _workspace(workspace: Any, on_device: bool) -> tuple:
    if workspace is None:
        return 0, 0
    v = _arrays.view(workspace, "workspace", on_device)
    return v.address, _arrays.span_bytes(v)


class Operation:
    """A prepared GEMM or convolution (Runtime.prepare). Call it on arrays:
    ``op(a, b)`` for a GEMM, ``op.conv(x, w)`` for a convolution.

    Example::

        rt = tcjit.Runtime(device="emu")
        op = rt.prepare("gemm m=? n=64 k=64 a=f16 b=f16:col")
        d = op(a, b)        # a: (m, 64) float16, b: (64, 64) float16 column-major
    """

    def __init__(self, runtime: "Runtime", op: "_tcjit.Operation"):
        self._runtime = runtime
        self._op = op
        self._words = spec_words(op.spec_text)

    def __repr__(self) -> str:
        return f"tcjit.Operation({self.spec!r})"

    @property
    def spec(self) -> str:
        """The canonical DSL text (every default written out)."""
        return self._op.spec_text

    @property
    def key(self) -> str:
        """The problem key's hash (16 hex digits), as `tcjit db ls` shows it."""
        return self._op.key

    @property
    def key_text(self) -> str:
        """The canonical problem key."""
        return self._op.key_text

    @property
    def origin(self) -> str:
        """Where the kernel came from: "memory", "database", "compiled_now" or "tuned_now"."""
        return self._op.origin

    @property
    def config(self) -> str:
        """The tile config of the kernel ("64x64x32 w32x32 s3 k1 g1 va8 vb8")."""
        return self._call(self._op.config)

    @property
    def kernel_id(self) -> str:
        """The compiled kernel's identity (shared by operations with one kernel)."""
        return self._call(self._op.kernel_id)

    @property
    def ready(self) -> bool:
        """Whether the kernel is compiled (a symbolic spec's compiles in the background)."""
        return self._op.ready()

    @property
    def predicted_time_us(self) -> Optional[float]:
        """The time (microseconds) a launch at the spec's sizes takes: measured when the database
        has it, else the cost model's prediction; None for symbolic sizes or without an
        estimate."""
        estimate = self.predicted_time()
        return None if estimate is None else estimate[0]

    def predicted_time(self, **sizes: int) -> Optional[tuple]:
        """(microseconds, measured) of a launch at these sizes (m=, n=, k=, batch= for a GEMM; n=
        for a convolution; unset: the spec's), or None."""
        try:
            if self._words["op"] == "gemm":
                return self._call(self._op.predicted_time, **sizes)
            return self._call(self._op.predicted_time_conv, **sizes)
        except _tcjit.Error:
            if sizes:
                raise
            return None  # symbolic sizes: there is no time at "the spec's sizes"

    def config_for(self, *, m: int = 0, n: int = 0, k: int = 0, batch: int = 0) -> str:
        """The config of the kernel a GEMM launch with these sizes runs (a tuned dispatch table's
        bucket for them)."""
        return self._call(self._op.config_for, m=m, n=n, k=k, batch=batch)

    def workspace_bytes(self, **sizes: int) -> int:
        """Bytes of workspace a launch with these sizes needs (m=, n=, k=, batch= for a GEMM; n=
        for a convolution; 0: none). Pass a buffer of at least that many as ``workspace=``."""
        if self._words["op"] == "gemm":
            return self._call(self._op.workspace_bytes, **sizes)
        return self._call(self._op.workspace_bytes_conv, **sizes)

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except _tcjit.Error as e:
            raise _python_words(e) from None

    # ---- GEMM ----------------------------------------------------------------------------------

    def _check_matrix(self, v: ArrayView, operand: str, rows: int, cols: int,
                      batch: Optional[int]) -> _arrays.Matrix:
        w = self._words
        where = f"operand {operand}"
        dtype, layout = w[operand].split(":")
        if v.dtype != dtype and not (dtype == "tf32" and v.dtype == "f32"):
            raise _tcjit.SpecError(
                f"tcjit: {where}: the array holds {v.dtype} but the spec's {operand} is {dtype}\nhow to fix: pass a "
                f"{_arrays.numpy_dtype(dtype)} array (a.astype(...)), or prepare a spec with "
                f"{operand}={v.dtype}")
        mat = _arrays.matrix(v, where)
        if (mat.rows, mat.cols) != (rows, cols):
            raise _tcjit.SpecError(
                f"tcjit: {where}: shape {v.shape[-2:]} does not fit: {operand} is {rows} x {cols} "
                f"here\nhow to fix: pass arrays whose sizes agree (a: m x k, b: k x n, c: m x n)")
        if batch is not None and mat.batch != batch:
            raise _tcjit.SpecError(f"tcjit: {where}: batch {mat.batch}, expected {batch}\n"
                                   "how to fix: pass arrays with one batch size")
        if mat.layout != layout and min(rows, cols) > 1:
            raise _tcjit.SpecError(
                f"tcjit: {where}: the array is {mat.layout}-major but the spec's {operand} is "
                f"{layout}-major\nhow to fix: pass np.ascontiguousarray(x) for row, "
                f"np.asfortranarray(x) for col, or prepare {operand}=...:{mat.layout}")
        ld_key = "ld" + operand
        inner = cols if layout == "row" else rows
        expected_ld = int(w[ld_key]) if ld_key in w else inner
        ld = mat.ld if mat.layout == layout else inner
        if ld != expected_ld and min(rows, cols) > 1:
            raise _tcjit.SpecError(
                f"tcjit: {where}: the array's {'rows' if layout == 'row' else 'columns'} are "
                f"{ld} elements apart but the spec says {ld_key}={expected_ld}\n"
                f"how to fix: prepare the spec with {ld_key}={ld}, or pass a contiguous array")
        return mat

    def __call__(self, a: Any, b: Any, c: Any = None, *, out: Any = None, bias: Any = None,
                 stream: Any = None, workspace: Any = None) -> Any:
        """D = act(alpha * A @ B + beta * C + bias) on arrays: a (m x k), b (k x n), c and out
        (m x n), each 2-D or 3-D (batch first); bias 1-D (n values for bias=col, m for
        bias=row). Dtypes, layouts (row/col) and leading dimensions are read from the arrays and
        must match the spec. Returns out (a new array when not given). On the emulator NumPy
        arrays are copied in and out; on a GPU CUDA arrays are used in place and the launch is
        asynchronous on `stream` (default: the framework's current stream)."""
        w = self._words
        if w["op"] != "gemm":
            raise _tcjit.ArgumentError("tcjit: launch: this operation is a convolution\n"
                                       "how to fix: call op.conv(x, w)")
        on_device = not self._runtime._rt.is_emulator
        va = _arrays.view(a, "operand a", on_device)
        vb = _arrays.view(b, "operand b", on_device)
        batched = len(va.shape) == 3
        m, k = va.shape[-2:]
        n = vb.shape[-1] if len(vb.shape) >= 2 else 0
        batch = va.shape[0] if batched else 1
        self._check_matrix(va, "a", m, k, None)
        self._check_matrix(vb, "b", k, n, batch if len(vb.shape) == 3 else None)
        for name, size in (("m", m), ("n", n), ("k", k), ("batch", batch)):
            fixed = _size(w[name])
            if fixed is not None and fixed != size:
                raise _tcjit.SpecError(
                    f"tcjit: launch: the arrays give {name}={size} but the spec's {name} is "
                    f"{fixed} (a: {va.shape}, b: {vb.shape})\nhow to fix: pass arrays of the "
                    f"spec's sizes, or prepare it with {name}=? to take any")
        if len(vb.shape) == 2 and batch > 1:
            raise _tcjit.SpecError("tcjit: operand b: a is a batch of matrices but b is one\n"
                                   "how to fix: pass b with the same batch")
        beta = float(w["beta"])
        if c is None and beta != 0:
            raise _tcjit.ArgumentError(f"tcjit: launch: the spec has beta={w['beta']}, so C is "
                                       "read: pass c\nhow to fix: op(a, b, c)")
        vc = _arrays.view(c, "operand c", on_device) if c is not None else None
        if vc is not None:
            self._check_matrix(vc, "c", m, n, batch if batched else None)
        dtype, layout = w["c"].split(":")
        if out is None:
            if on_device:
                raise _tcjit.ArgumentError("tcjit: launch: on a CUDA device pass out= (the "
                                           "result's array)\nhow to fix: allocate it with your "
                                           "framework and pass out=")
            ld = int(w["ldc"]) if "ldc" in w else (n if layout == "row" else m)
            out = _arrays.empty_matrix(batch, m, n, layout, ld, dtype, batched)
        vd = _arrays.view(out, "out", on_device)
        self._check_matrix(vd, "c", m, n, batch if batched else None)
        _writable(vd, "out")
        vbias = self._bias(bias, m, n, on_device, dtype)
        _arrays.check_same_device([v for v in (va, vb, vc, vd, vbias) if v], on_device)
        sizes = dict(m=m, n=n, k=k, batch=batch)
        stream_handle = _stream_handle(stream, [va, vb, vd]) if on_device else 0
        ws = _workspace(workspace, on_device)
        with _DeviceBuffers(self._runtime._rt) as buffers:
            pa, pb = buffers.copy_in(va), buffers.copy_in(vb)
            pbias = buffers.copy_in(vbias)
            if on_device:
                pd = vd.address
                pc = vc.address if vc is not None else 0
            else:
                # D is also C: C's values are copied into D's buffer (C is read before D is
                # written), then D is copied out.
                pd = buffers.copy_in(vc) if beta != 0 else \
                    buffers.allocate(_arrays.span_bytes(vd))
                pc = pd if beta != 0 else 0
            self._call(self._op.launch, pa, pb, pc, pd, pbias, stream=stream_handle,
                       workspace=ws[0], workspace_bytes=ws[1], **sizes)
            if not on_device:
                buffers.copy_out(vd, pd)
        return out

    def _bias(self, bias: Any, rows: int, cols: int, on_device: bool, out_dtype: str) -> Optional[ArrayView]:
        w = self._words
        kind = w.get("bias", "none")
        if bias is None:
            if kind != "none":
                raise _tcjit.ArgumentError(f"tcjit: launch: the spec has bias={kind}: pass bias=\n"
                                           "how to fix: op(..., bias=b)")
            return None
        if kind == "none":
            raise _tcjit.ArgumentError("tcjit: launch: a bias was given but the spec has none\n"
                                       "how to fix: prepare the spec with bias=col (or row)")
        v = _arrays.view(bias, "bias", on_device)
        expected = rows if kind == "row" else cols
        if len(v.shape) != 1 or v.shape[0] != expected or (v.strides[0] != 1 and expected > 1):
            raise _tcjit.SpecError(
                f"tcjit: bias: expected a contiguous 1-D array of {expected} values (bias={kind}), "
                f"got shape {v.shape}\nhow to fix: pass np.ascontiguousarray(bias).reshape(-1)")
        if v.dtype != out_dtype:
            raise _tcjit.SpecError(
                f"tcjit: bias: the array holds {v.dtype} but the bias has the output's dtype "
                f"{out_dtype}\nhow to fix: bias.astype({_arrays.numpy_dtype(out_dtype)})")
        return v

    # ---- convolutions --------------------------------------------------------------------------

    def conv(self, a: Any, b: Any, *, out: Any = None, bias: Any = None, c: Any = None,
             stream: Any = None, workspace: Any = None) -> Any:
        """Runs the convolution on arrays, in cuDNN's naming: fprop takes (x, filter) and returns
        y; dgrad takes (dy, filter) and returns dx; wgrad takes (x, dy) and returns dw.
        Activations are NHWC (NDHWC), contiguous, or an N,C,H,W-shaped channels-last tensor;
        the filter KRSC (KTRSC). bias: k values (c for dgrad). c: the output's prior values, read
        when beta != 0 (its array is written)."""
        w = self._words
        if w["op"] == "gemm":
            raise _tcjit.ArgumentError("tcjit: launch: this operation is a GEMM\n"
                                       "how to fix: call op(a, b)")
        on_device = not self._runtime._rt.is_emulator
        spatial = "hw" if w["op"] == "conv2d" else "dhw"
        names = {"x": "n" + spatial + "c", "filter": "k" + ("rs" if len(spatial) == 2 else "trs")
                 + "c", "y": "n" + spatial + "c"}
        pass_ = w["pass"]
        inputs, output = {"fprop": (("x", "filter"), "y"), "dgrad": (("y", "filter"), "x"),
                          "wgrad": (("x", "y"), "filter")}[pass_]
        views = {}
        for role, arr in zip(inputs, (a, b)):
            views[role] = self._check_tensor(_arrays.view(arr, role, on_device), role, names)
        n = views["x"].shape[0] if "x" in views else views["y"].shape[0]
        if c is not None and out is None:
            out = c
        if float(w["beta"]) != 0 and c is None:
            raise _tcjit.ArgumentError(f"tcjit: launch: the spec has beta={w['beta']}: pass c= "
                                       "(the output's prior values)\nhow to fix: op.conv(..., c=)")
        shape = self._tensor_shape(output, n)
        if out is None:
            if on_device:
                raise _tcjit.ArgumentError("tcjit: launch: on a CUDA device pass out=\n"
                                           "how to fix: allocate it with your framework")
            out = np.empty(shape, dtype=_arrays.numpy_dtype(w[output].split(":")[0]))
        vout = self._check_tensor(_arrays.view(out, "out", on_device), output, names)
        if vout.shape != shape:
            raise _tcjit.SpecError(f"tcjit: out: shape {vout.shape}, expected {shape}\n"
                                   "how to fix: pass out of the convolution's output shape")
        _writable(vout, "out")
        channels = int(w["c"]) if pass_ == "dgrad" else int(w["k"])
        vbias = self._bias(bias, 0, channels, on_device, w[output].split(":")[0])
        _arrays.check_same_device([v for v in (*views.values(), vout, vbias) if v], on_device)
        stream_handle = _stream_handle(stream, [*views.values(), vout]) if on_device else 0
        ws = _workspace(workspace, on_device)
        with _DeviceBuffers(self._runtime._rt) as buffers:
            ptr = {role: buffers.copy_in(v) for role, v in views.items()}
            ptr[output] = buffers.copy_in(vout) if (on_device or float(w["beta"]) != 0) \
                else buffers.allocate(_arrays.span_bytes(vout))
            pbias = buffers.copy_in(vbias)
            self._call(self._op.launch_conv, ptr["x"], ptr["filter"], ptr["y"], pbias, n,
                       stream=stream_handle, workspace=ws[0], workspace_bytes=ws[1])
            if not on_device:
                buffers.copy_out(vout, ptr[output])
        return out

    def _tensor_shape(self, role: str, n: int) -> tuple:
        w = self._words
        spatial_in = [int(w[d]) for d in ("d", "h", "w") if d in w]
        filt = [int(w[d]) for d in ("t", "r", "s") if d in w]
        nd = len(filt)

        def per_dim(key: str) -> list:
            values = [int(v) for v in w[key].split(",")]
            return values * nd if len(values) == 1 else values

        pad, stride, dil = per_dim("pad"), per_dim("stride"), per_dim("dilation")
        out = [(i + 2 * p - (d * (f - 1) + 1)) // s + 1
               for i, f, p, s, d in zip(spatial_in, filt, pad, stride, dil)]
        c, k, g = int(w["c"]), int(w["k"]), int(w["groups"])
        return {"x": (n, *spatial_in, c), "y": (n, *out, k), "filter": (k, *filt, c // g)}[role]

    def _check_tensor(self, v: ArrayView, role: str, names: dict) -> ArrayView:
        w = self._words
        dtype, layout = w[role].split(":")
        if layout != names[role]:
            raise _tcjit.UnsupportedError(
                f"tcjit: {role}: the spec's layout {layout} is not one arrays are given in\n"
                f"how to fix: prepare the spec with {role}={dtype}:{names[role]}")
        if role != "filter":
            v = _arrays.channels_last(v)
        if v.dtype != dtype and not (dtype == "tf32" and v.dtype == "f32"):
            raise _tcjit.SpecError(
                f"tcjit: {role}: the array holds {v.dtype} but the spec's {role} is {dtype}\n"
                f"how to fix: pass a {_arrays.numpy_dtype(dtype)} array")
        shape = _arrays.contiguous_tensor(v, role, names[role])
        expected = self._tensor_shape(role, shape[0] if role != "filter" else 1)
        if role == "filter" and shape != expected or role != "filter" and shape[1:] != expected[1:]:
            raise _tcjit.SpecError(
                f"tcjit: {role}: shape {shape} does not fit the spec: {role} is "
                f"{'x'.join(map(str, expected[1:] if role != 'filter' else expected))} "
                f"({names[role].upper()}{', after the batch' if role != 'filter' else ''})\n"
                "how to fix: pass arrays of the spec's sizes")
        return v


class Runtime:
    """A device and its kernel cache: prepare() turns a spec into an Operation whose kernel comes
    from memory, the kernel database, or is compiled (or tuned) now.

    device: "auto" (CUDA when there is a GPU, else the emulator), "cuda" or "emu".
    db: the kernel database's path; None: $TCJIT_DB, else ~/.cache/tcjit/kernels.db; False: none.
    on_miss: "heuristic" (compile the cost model's best config), "fail", "tune" (tune now) or
    "background" (compile now, tune on a thread and switch to the winner).
    backend: "llvm" or "nvrtc".

    Example::

        rt = tcjit.Runtime(device="emu", db=False)
        op = rt.prepare("gemm m=64 n=64 k=64 a=f16 b=f16:col")
        d = op(np.ones((64, 64), np.float16), np.ones((64, 64), np.float16, order="F"))
    """

    def __init__(self, device: str = "auto", db: Union[str, os.PathLike, None, bool] = None,
                 on_miss: str = "heuristic", backend: str = "llvm", *, arch: str = "",
                 tune_budget: int = 24, emulator_timeout: float = 0.0):
        use_database = db is not False
        db_path = "" if db is None or db is False or db is True else os.fspath(db)
        try:
            self._rt = _tcjit.Runtime(device=device, db_path=db_path, use_database=use_database,
                                      on_miss=on_miss, backend=backend, arch=arch,
                                      tune_budget=tune_budget, emulator_timeout=emulator_timeout)
        except _tcjit.Error as e:
            raise _python_words(e) from None

    def __repr__(self) -> str:
        return f"tcjit.Runtime(device={self.device_name!r}, arch={self.arch!r})"

    def prepare(self, spec: str) -> Operation:
        """Prepares one GEMM or convolution given in the DSL (docs/dsl.md); sizes may be symbolic
        (m=?, m=1..8192) and are then taken from the arrays of each call. Raises SpecError for
        bad text (with the diagnostics), NotFoundError under on_miss="fail"."""
        try:
            return Operation(self, self._rt.prepare(spec))
        except _tcjit.Error as e:
            raise _python_words(e) from None

    def wait_for_tuning(self) -> None:
        """Blocks until every background tune (on_miss="background") has finished."""
        self._rt.wait_for_tuning()

    @property
    def device_name(self) -> str:
        """The device ("tcjit PTX emulator (sm_80)", or the GPU's name)."""
        return self._rt.device_name

    @property
    def is_emulator(self) -> bool:
        """Whether the device is tcjit's PTX emulator."""
        return self._rt.is_emulator

    @property
    def arch(self) -> str:
        """The arch kernels are compiled for ("sm_80")."""
        return self._rt.arch

    @property
    def database_path(self) -> str:
        """The kernel database's path ("" without one)."""
        return self._rt.database_path
