"""GEMMs through the package on the emulator, checked against NumPy's float64 product: every dtype
the runtime runs, layouts and leading dimensions from strides, epilogues, batches, symbolic
sizes."""

import numpy as np
import pytest

from conftest import assert_close, gemm_reference, ml_dtypes, random_array, tcjit

# (input dtype name, NumPy dtype, output dtype name, extra spec words)
DTYPES = [
    ("f16", np.float16, "f16", ""),
    ("f16", np.float16, "f32", "c=f32"),
    ("bf16", ml_dtypes.bfloat16, "bf16", ""),
    ("bf16", ml_dtypes.bfloat16, "f32", "c=f32"),
    ("tf32", np.float32, "f32", ""),
    ("f32", np.float32, "tf32", "math=tf32"),
    ("f32", np.float32, "f32", "math=f32"),
    ("f64", np.float64, "f64", ""),
    ("s8", np.int8, "s32", ""),
    ("s8", np.int8, "s8", "c=s8"),
    ("u8", np.uint8, "s32", ""),
]


@pytest.mark.parametrize("dtype,np_dtype,out,words", DTYPES,
                         ids=[f"{d[0]}-{d[2]}" for d in DTYPES])
def test_every_dtype(rt, dtype, np_dtype, out, words):
    rng = np.random.default_rng(1)
    m, n, k = 32, 24, 64
    op = rt.prepare(f"gemm m={m} n={n} k={k} a={dtype} b={dtype} {words}")
    a = random_array((m, k), np_dtype, rng)
    b = random_array((k, n), np_dtype, rng)
    if out == "s8":  # s8 outputs saturate: keep the products small
        a, b = (a // 4).astype(np.int8), (b // 4).astype(np.int8)
    d = op(a, b)
    ref, mag = gemm_reference(a, b)
    assert d.shape == (m, n)
    assert_close(d, ref, mag, "tf32" if out == "tf32" else out)


@pytest.mark.parametrize("la,lb,lc", [("row", "row", "row"), ("row", "col", "row"),
                                      ("col", "row", "col"), ("col", "col", "col")])
def test_layouts_from_strides(rt, la, lb, lc):
    rng = np.random.default_rng(2)
    m, n, k = 40, 32, 48
    order = {"row": "C", "col": "F"}
    a = random_array((m, k), np.float16, rng, order[la])
    b = random_array((k, n), np.float16, rng, order[lb])
    d = tcjit.matmul(a, b, out=np.empty((m, n), np.float16, order=order[lc]))
    op = rt.prepare(f"gemm m={m} n={n} k={k} a=f16:{la} b=f16:{lb} c=f16:{lc}")
    assert op.origin == "memory"  # matmul prepared the same spec
    assert d.flags.f_contiguous if lc == "col" else d.flags.c_contiguous
    ref, mag = gemm_reference(a, b)
    assert_close(d, ref, mag, "f16")


def test_leading_dimensions_from_a_padded_view(rt):
    rng = np.random.default_rng(3)
    base = random_array((64, 72), np.float16, rng)
    a = base[:, :64]            # lda = 72
    b = random_array((64, 40), np.float16, rng)
    d = tcjit.matmul(a, b)
    ref, mag = gemm_reference(a, b)
    assert_close(d, ref, mag, "f16")
    op = rt.prepare("gemm m=64 n=40 k=64 a=f16 b=f16 lda=72")
    assert op.origin == "memory"


def test_bias_and_activation_epilogue(rt):
    rng = np.random.default_rng(4)
    a = random_array((32, 64), np.float16, rng)
    b = random_array((64, 48), np.float16, rng)
    c = random_array((32, 48), np.float16, rng)
    bias = random_array((48,), np.float16, rng)
    d = tcjit.matmul(a, b, bias=bias, act="relu", alpha=0.5, beta=2.0, c=c)
    ref, mag = gemm_reference(a, b, c=c, alpha=0.5, beta=2.0, bias=bias, act="relu")
    assert_close(d, ref, mag, "f16")
    row_bias = random_array((32, 1), np.float16, rng)
    d = tcjit.matmul(a, b, bias=row_bias)
    ref, mag = gemm_reference(a, b, bias=row_bias)
    assert_close(d, ref, mag, "f16")


def test_batched(rt):
    rng = np.random.default_rng(5)
    a = random_array((3, 16, 32), ml_dtypes.bfloat16, rng)
    b = random_array((3, 32, 24), ml_dtypes.bfloat16, rng)
    d = tcjit.matmul(a, b, out_dtype=np.float32)
    assert d.shape == (3, 16, 24) and d.dtype == np.float32
    for i in range(3):
        ref, mag = gemm_reference(a[i], b[i])
        assert_close(d[i], ref, mag, "f32")


def test_symbolic_sizes_reused_across_calls(rt):
    op = rt.prepare("gemm m=? n=32 k=1..256 a=f16 b=f16:col act=relu")
    rng = np.random.default_rng(6)
    for m, k in [(16, 64), (33, 128), (7, 256)]:
        a = random_array((m, k), np.float16, rng)
        b = random_array((k, 32), np.float16, rng, "F")
        d = op(a, b)
        ref, mag = gemm_reference(a, b, act="relu")
        assert d.shape == (m, 32)
        assert_close(d, ref, mag, "f16")
    assert op.config_for(m=7, k=256)


def test_matmul_served_from_the_cache_after_the_first_call(rt):
    rng = np.random.default_rng(7)
    a = random_array((16, 16), np.float16, rng)
    b = random_array((16, 16), np.float16, rng)
    tcjit.matmul(a, b)
    from tcjit import _functional
    cached = dict(_functional._operations)
    tcjit.matmul(a * 2, b)
    assert _functional._operations == cached and len(cached) == 1


def test_operation_properties(rt):
    op = rt.prepare("gemm m=128 n=128 k=64 a=f16 b=f16:col")
    assert op.spec.startswith("gemm m=128 n=128 k=64 batch=1 a=f16:row b=f16:col")
    assert len(op.key) == 16 and op.key_text
    assert op.origin == "compiled_now"
    assert op.config and op.predicted_time_us > 0
    assert op.workspace_bytes() >= 0
    assert rt.prepare("gemm m=128 n=128 k=64 a=f16 b=f16:col").origin == "memory"
