"""Errors: the exception's type and its what/where/fix message, for bad specs, wrong dtypes,
misaligned views, arrays that are neither row- nor column-major, and shapes that do not fit."""

import numpy as np
import pytest

from conftest import tcjit


def test_bad_spec_is_a_spec_error_with_the_diagnostics(rt):
    with pytest.raises(tcjit.SpecError) as info:
        rt.prepare("gemm m=64 n=64 k=64 a=fp16:row b=f16")
    e = info.value
    assert isinstance(e, ValueError) and isinstance(e, tcjit.Error)
    assert "unknown dtype 'fp16' (did you mean 'f16'?)" in str(e)
    assert e.where == "prepare" and e.code == "bad_spec"
    assert "how to fix:" in str(e) and e.how_to_fix


def test_wrong_dtype(rt):
    op = rt.prepare("gemm m=16 n=16 k=16 a=f16 b=f16")
    a = np.zeros((16, 16), np.float32)
    with pytest.raises(tcjit.SpecError, match="operand a: the array holds f32 but the spec's a "
                                              "is f16") as info:
        op(a, np.zeros((16, 16), np.float16))
    assert "how to fix: pass a float16 array" in str(info.value)


def test_misaligned_view(rt):
    op = rt.prepare("gemm m=16 n=16 k=16 a=f16 b=f16")
    raw = np.zeros(16 * 16 * 2 + 1, np.uint8)
    a = raw[1:].view(np.float16).reshape(16, 16)
    with pytest.raises(tcjit.ArgumentError, match="not aligned to its 2-byte elements"):
        op(a, np.zeros((16, 16), np.float16))


def test_non_contiguous_array(rt):
    op = rt.prepare("gemm m=16 n=16 k=16 a=f16 b=f16")
    a = np.zeros((16, 32), np.float16)[:, ::2]
    with pytest.raises(tcjit.ArgumentError, match="neither row- nor column-major") as info:
        op(a, np.zeros((16, 16), np.float16))
    assert "np.ascontiguousarray" in str(info.value)


def test_layout_and_shape_mismatch(rt):
    op = rt.prepare("gemm m=16 n=16 k=32 a=f16 b=f16:col")
    a = np.zeros((16, 32), np.float16)
    with pytest.raises(tcjit.SpecError, match="operand b: the array is row-major but the spec's "
                                              "b is col-major"):
        op(a, np.zeros((32, 16), np.float16))
    with pytest.raises(tcjit.SpecError, match="the arrays give k=16 but the spec's k is 32"):
        op(np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16, order="F"))


def test_size_outside_the_spec_is_the_runtimes_error(rt):
    op = rt.prepare("gemm m=1..32 n=16 k=16 a=f16 b=f16")
    with pytest.raises(tcjit.Error) as info:
        op(np.zeros((64, 16), np.float16), np.zeros((16, 16), np.float16))
    assert "m = 64 is outside the prepared range m=1..32" in str(info.value)
    assert info.value.where == "launch" and "GemmArgs" not in str(info.value)


def test_on_miss_fail_is_not_found_in_python_words(tmp_path):
    rt = tcjit.Runtime(device="emu", db=str(tmp_path / "k.db"), on_miss="fail")
    with pytest.raises(tcjit.NotFoundError) as info:
        rt.prepare("gemm m=16 n=16 k=16 a=f16 b=f16")
    assert "MissPolicy" not in str(info.value)


def test_bad_option(tmp_path):
    with pytest.raises(tcjit.ArgumentError, match="unknown on_miss 'sometimes'"):
        tcjit.Runtime(device="emu", db=False, on_miss="sometimes")


def test_unsupported_packed_dtype():
    from tcjit import _arrays
    with pytest.raises(tcjit.UnsupportedError, match="packs several elements"):
        _arrays.numpy_dtype("s4")


def test_matmul_shapes_that_do_not_fit(rt):
    with pytest.raises(tcjit.SpecError, match="a's columns must equal b's rows"):
        tcjit.matmul(np.zeros((4, 8), np.float16), np.zeros((4, 8), np.float16))
