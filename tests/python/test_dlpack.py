"""DLPack: arrays in and out through NumPy's __dlpack__ (an object that has only __dlpack__ is
taken as a CPU tensor on the emulator; the result goes back out the same way), and the DLPack
description the package reads of an array (used in place on a GPU)."""

import numpy as np

from conftest import assert_close, gemm_reference, random_array, tcjit


class DLPackOnly:
    """A CPU tensor as another framework hands it over: __dlpack__ and nothing else."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_round_trip_through_dlpack(rt):
    rng = np.random.default_rng(40)
    a = random_array((32, 48), np.float32, rng)
    b = random_array((48, 16), np.float32, rng)
    d = tcjit.matmul(DLPackOnly(a), DLPackOnly(b), math="f32")
    back = np.from_dlpack(DLPackOnly(d))
    assert np.shares_memory(back, d)
    ref, mag = gemm_reference(a, b)
    assert_close(back, ref, mag, "f32")


def test_dlpack_info_reads_the_array_in_place():
    from tcjit import _tcjit
    a = np.zeros((4, 6), np.float16)[:, 1:5]
    address, shape, strides, code, bits, device = _tcjit.dlpack_info(a)
    assert address == a.__array_interface__["data"][0]
    assert shape == [4, 4] and strides == [6, 1]
    assert (code, bits, device) == (2, 16, 1)  # kDLFloat, 16 bits, kDLCPU
