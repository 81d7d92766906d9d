"""tcjit: a JIT kernel generator and autotuner for NVIDIA tensor cores, from Python.

Describe a GEMM or a convolution in tcjit's DSL (or let tcjit.matmul / tcjit.conv2d build it from
your arrays); tcjit checks it against the tensor cores' rules, picks a tile configuration,
compiles it through LLVM's NVPTX backend, runs it on a GPU or on its own PTX emulator, and caches
the result in a kernel database. Full reference: docs/python.md.

Example (on the emulator, no GPU needed)::

    import numpy as np, tcjit
    rt = tcjit.Runtime(device="emu", db=False)
    op = rt.prepare("gemm m=? n=64 k=32 a=f16 b=f16 act=relu")
    a = np.random.rand(48, 32).astype(np.float16)
    b = np.random.rand(32, 64).astype(np.float16)
    d = op(a, b)                     # (48, 64) float16
    print(op.config, op.origin)
"""

from ._tcjit import (ArgumentError, DatabaseError, DeviceError, Error, NotFoundError,
                     SpecError, UnsupportedError, __version__)
from ._functional import conv2d, conv3d, default_runtime, matmul, set_default_runtime
from ._runtime import Operation, Runtime
from ._tools import Database, explain, resolve, tune

__all__ = [
    "ArgumentError", "Database", "DatabaseError", "DeviceError", "Error", "NotFoundError",
    "Operation", "Runtime", "SpecError", "UnsupportedError", "__version__", "conv2d", "conv3d",
    "default_runtime", "explain", "matmul", "resolve", "set_default_runtime", "tune",
]
