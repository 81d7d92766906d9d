"""Convolutions through the package on the emulator against a float64 NumPy reference: conv2d and
conv3d with stride, padding, dilation, groups (depthwise too), bias and activations, channels-last
inputs, and Operation.conv for dgrad."""

import numpy as np
import pytest

from conftest import assert_close, conv_reference, ml_dtypes, random_array, tcjit


@pytest.mark.parametrize("groups,stride,pad,dilation", [(1, 1, 1, 1), (2, 2, 1, 1),
                                                        (1, 1, 2, 2), (16, 1, 1, 1)],
                         ids=["plain", "groups2-stride2", "dilation2", "depthwise"])
def test_conv2d(rt, groups, stride, pad, dilation):
    rng = np.random.default_rng(10)
    x = random_array((2, 9, 10, 16), np.float16, rng)
    w = random_array((16, 3, 3, 16 // groups), np.float16, rng)
    y = tcjit.conv2d(x, w, stride=stride, padding=pad, dilation=dilation, groups=groups)
    ref, mag = conv_reference(x, w, (stride,) * 2, (pad,) * 2, (dilation,) * 2, groups)
    assert y.shape == ref.shape
    assert_close(y, ref, mag, "f16")


def test_conv2d_bias_relu_bf16(rt):
    rng = np.random.default_rng(11)
    x = random_array((1, 8, 8, 32), ml_dtypes.bfloat16, rng)
    w = random_array((16, 3, 3, 32), ml_dtypes.bfloat16, rng)
    bias = random_array((16,), ml_dtypes.bfloat16, rng)
    y = tcjit.conv2d(x, w, bias=bias, padding=(1, 0), act="relu")
    ref, mag = conv_reference(x, w, (1, 1), (1, 0), (1, 1), 1)
    ref = np.maximum(ref + np.asarray(bias, np.float64), 0)
    assert_close(y, ref, mag + np.abs(np.asarray(bias, np.float64)), "bf16")


def test_conv2d_from_a_channels_last_nchw_view(rt):
    rng = np.random.default_rng(12)
    nhwc = random_array((2, 6, 6, 8), np.float16, rng)
    nchw_channels_last = nhwc.transpose(0, 3, 1, 2)  # shape N,C,H,W, memory NHWC
    w = random_array((8, 3, 3, 8), np.float16, rng)
    y = tcjit.conv2d(nchw_channels_last, w, padding=1)
    ref, mag = conv_reference(nhwc, w, (1, 1), (1, 1), (1, 1), 1)
    assert_close(y, ref, mag, "f16")


@pytest.mark.parametrize("groups", [1, 2])
def test_conv3d(rt, groups):
    rng = np.random.default_rng(13)
    x = random_array((1, 4, 5, 6, 8), np.float16, rng)
    w = random_array((8, 3, 3, 3, 8 // groups), np.float16, rng)
    y = tcjit.conv3d(x, w, padding=1, groups=groups)
    ref, mag = conv_reference(x, w, (1,) * 3, (1,) * 3, (1,) * 3, groups)
    assert_close(y, ref, mag, "f16")


def test_symbolic_batch_reused(rt):
    op = rt.prepare("conv2d n=? h=8 w=8 c=16 k=16 r=3 s=3 pad=1 x=f16")
    rng = np.random.default_rng(14)
    w = random_array((16, 3, 3, 16), np.float16, rng)
    for n in (1, 3):
        x = random_array((n, 8, 8, 16), np.float16, rng)
        y = op.conv(x, w)
        ref, mag = conv_reference(x, w, (1, 1), (1, 1), (1, 1), 1)
        assert y.shape == (n, 8, 8, 16)
        assert_close(y, ref, mag, "f16")


def test_dgrad_through_operation_conv(rt):
    # dx = conv_transpose(dy, w): checked against the adjoint identity <dx, x> = <dy, fprop(x)>.
    rng = np.random.default_rng(15)
    op = rt.prepare("conv2d n=1 h=6 w=6 c=8 k=8 r=3 s=3 pad=1 x=f32 math=f32 pass=dgrad")
    dy = random_array((1, 6, 6, 8), np.float32, rng)
    w = random_array((8, 3, 3, 8), np.float32, rng)
    dx = op.conv(dy, w)
    x = random_array((1, 6, 6, 8), np.float32, rng)
    fprop, _ = conv_reference(x, w, (1, 1), (1, 1), (1, 1), 1)
    lhs = float(np.sum(np.asarray(dx, np.float64) * x))
    rhs = float(np.sum(np.asarray(dy, np.float64) * fprop))
    assert abs(lhs - rhs) <= 1e-5 * (np.sum(np.abs(dy)) * np.sum(np.abs(w)) * 8)
