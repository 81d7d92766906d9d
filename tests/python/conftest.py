"""Fixtures of the Python package's tests: a runtime on the emulator with its own database, and
the independent NumPy references (float64 / int64) the results are checked against."""

import os

import numpy as np
import pytest

tcjit = pytest.importorskip("tcjit", reason="the tcjit module is not built (PYTHONPATH=build/python)")
ml_dtypes = pytest.importorskip("ml_dtypes")


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "kernels.db")


@pytest.fixture
def rt(db_path):
    runtime = tcjit.Runtime(device="emu", db=db_path)
    tcjit.set_default_runtime(runtime)
    yield runtime
    tcjit.set_default_runtime(None)


def random_array(shape, dtype, rng, order="C"):
    """Values exactly representable in `dtype` (small integers / binary fractions), so that the
    reference sees the same inputs as the kernel."""
    np_dtype = np.dtype(dtype)
    if np_dtype.kind in "iu":
        low = 0 if np_dtype.kind == "u" else -8
        values = rng.integers(low, 8, size=shape)
    else:
        values = rng.integers(-8, 9, size=shape) / 8.0
    return np.asarray(values, dtype=np_dtype, order=order)


def gemm_reference(a, b, c=None, alpha=1.0, beta=0.0, bias=None, act=None):
    """(D, magnitude) in float64: D = act(alpha a@b + beta c + bias); magnitude = |alpha| |a|@|b|
    + |beta c| + |bias|, the scale of the tolerance."""
    a64 = np.asarray(a, dtype=np.float64)
    b64 = np.asarray(b, dtype=np.float64)
    acc = a64 @ b64
    mag = np.abs(alpha) * (np.abs(a64) @ np.abs(b64))
    d = alpha * acc
    if c is not None and beta != 0:
        d = d + beta * np.asarray(c, dtype=np.float64)
        mag = mag + np.abs(beta * np.asarray(c, dtype=np.float64))
    if bias is not None:
        d = d + np.asarray(bias, dtype=np.float64)
        mag = mag + np.abs(np.asarray(bias, dtype=np.float64))
    if act == "relu":
        d = np.maximum(d, 0)
    return d, mag


# Relative tolerance of a result, against the magnitude of its terms: the output's rounding (half
# an ulp of its precision) plus the inputs' rounding to tf32 (10 mantissa bits) where it applies.
RTOL = {"f16": 2 ** -10, "bf16": 2 ** -7, "f32": 2 ** -20, "tf32": 2 ** -9, "f64": 2 ** -48,
        "s32": 0, "s8": 0}


def assert_close(result, reference, magnitude, dtype):
    got = np.asarray(result, dtype=np.float64)
    tolerance = RTOL[dtype] * (magnitude + np.abs(reference)) + 1e-30
    worst = np.max(np.abs(got - reference) - tolerance)
    assert worst <= 0, f"{np.sum(np.abs(got - reference) > tolerance)} elements outside the " \
                       f"tolerance (worst excess {worst})"


def conv_reference(x, w, stride, pad, dilation, groups):
    """NHWC/NDHWC x, KRSC/KTRSC w -> y NHWC in float64, and |x| * |w| for the tolerance."""
    x64, w64 = np.asarray(x, np.float64), np.asarray(w, np.float64)
    nd = x64.ndim - 2
    spatial, filt = x64.shape[1:-1], w64.shape[1:-1]
    out = [(i + 2 * pad[d] - (dilation[d] * (f - 1) + 1)) // stride[d] + 1
           for d, (i, f) in enumerate(zip(spatial, filt))]
    padded = np.pad(x64, [(0, 0)] + [(p, p) for p in pad] + [(0, 0)])
    n, c, k = x64.shape[0], x64.shape[-1], w64.shape[0]
    cg, kg = c // groups, k // groups
    y = np.zeros((n, *out, k))
    mag = np.zeros((n, *out, k))
    for tap in np.ndindex(*filt):
        index = tuple(slice(tap[d] * dilation[d], tap[d] * dilation[d] + stride[d] * (out[d] - 1)
                            + 1, stride[d]) for d in range(nd))
        window = padded[(slice(None),) + index]
        for g in range(groups):
            xs = window[..., g * cg:(g + 1) * cg]
            ws = w64[(slice(g * kg, (g + 1) * kg),) + tap]
            y[..., g * kg:(g + 1) * kg] += xs @ ws.T
            mag[..., g * kg:(g + 1) * kg] += np.abs(xs) @ np.abs(ws).T
    return y, mag
