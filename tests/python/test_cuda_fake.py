"""The CUDA path on tcjit's fake libcuda (tests/cuda/fake_libcuda.cpp: host memory for device
memory, launches recorded, kernels not run): CUDA arrays (__cuda_array_interface__) are used in
place, their addresses passed as the kernel's parameters, the launch enqueued on the stream given
(a torch-style stream object, a raw handle) without copies or a synchronization. The results are
not checked: the fake driver runs no kernel (on a GPU: test_torch.py)."""

import ctypes
import os
import struct

import numpy as np
import pytest

from conftest import tcjit

FAKE = os.environ.get("TCJIT_FAKE_LIBCUDA_SO1", "")
pytestmark = pytest.mark.skipif(not os.path.isfile(FAKE),
                                reason="the fake libcuda is not built (TCJIT_FAKE_LIBCUDA_SO1)")


class DeviceArray:
    """A CUDA array as a framework hands it over: __cuda_array_interface__ only."""

    def __init__(self, rt, shape, typestr, strides=None):
        itemsize = int(typestr[2:])
        self.nbytes = int(np.prod(shape)) * itemsize
        self.address = rt._rt.allocate(self.nbytes)
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (self.address, False), "version": 3,
                                         "strides": strides}


class TorchLikeStream:
    def __init__(self, handle):
        self.cuda_stream = handle


@pytest.fixture
def fake():
    lib = ctypes.CDLL(FAKE, mode=ctypes.RTLD_GLOBAL)
    lib.fake_cuda_last_launch_stream.restype = ctypes.c_void_p
    lib.fake_cuda_last_launch_params.restype = ctypes.c_size_t
    lib.fake_cuda_call_log.restype = ctypes.c_char_p
    return lib


def last_params(fake):
    buffer = ctypes.create_string_buffer(4096)
    size = fake.fake_cuda_last_launch_params(buffer)
    return buffer.raw[:size]


def test_gemm_on_cuda_arrays_in_place(fake):
    rt = tcjit.Runtime(device="cuda", db=False)
    assert not rt.is_emulator
    a = DeviceArray(rt, (64, 32), "<f2")
    b = DeviceArray(rt, (32, 48), "<f2", strides=(2, 64))   # column-major
    d = DeviceArray(rt, (64, 48), "<f2")
    bias = DeviceArray(rt, (48,), "<f2")
    op = rt.prepare("gemm m=64 n=48 k=32 a=f16 b=f16:col bias=col act=relu")
    launches = fake.fake_cuda_launch_count()
    fake.fake_cuda_reset_call_log()
    assert op(a, b, out=d, bias=bias, stream=TorchLikeStream(0x7000)) is d
    assert fake.fake_cuda_launch_count() == launches + 1
    assert fake.fake_cuda_last_launch_stream() == 0x7000
    params = last_params(fake)
    pa, pb, pc, pd, pbias = struct.unpack_from("<5Q", params)
    assert (pa, pb, pd, pbias) == (a.address, b.address, d.address, bias.address)
    log = fake.fake_cuda_call_log().decode()
    assert "cuMemcpy" not in log and "Synchronize" not in log, log


def test_raw_stream_handle_and_conv(fake):
    rt = tcjit.Runtime(device="cuda", db=False)
    x = DeviceArray(rt, (2, 8, 8, 16), "<f2")
    w = DeviceArray(rt, (16, 3, 3, 16), "<f2")
    y = DeviceArray(rt, (2, 8, 8, 16), "<f2")
    tcjit.conv2d(x, w, padding=1, out=y, runtime=rt, stream=0x7100)
    assert fake.fake_cuda_last_launch_stream() == 0x7100


def test_host_arrays_are_refused_on_a_gpu(fake):
    rt = tcjit.Runtime(device="cuda", db=False)
    op = rt.prepare("gemm m=16 n=16 k=16 a=f16 b=f16")
    d = DeviceArray(rt, (16, 16), "<f2")
    with pytest.raises(tcjit.ArgumentError, match="a host array was given to a runtime on a CUDA"):
        op(np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16), out=d)
