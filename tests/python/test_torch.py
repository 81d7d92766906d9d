"""torch tensors (when torch is installed): a CPU tensor on the emulator through DLPack, and on a
GPU CUDA tensors used in place on torch's current stream (skipped without one, with the
reason)."""

import numpy as np
import pytest

from conftest import assert_close, gemm_reference, random_array, tcjit

torch = pytest.importorskip("torch", reason="torch is not installed")


def test_cpu_tensor_on_the_emulator(rt):
    rng = np.random.default_rng(50)
    a = torch.from_numpy(random_array((32, 32), np.float16, rng))
    b = torch.from_numpy(random_array((32, 32), np.float16, rng))
    d = tcjit.matmul(a, b)
    ref, mag = gemm_reference(a.numpy(), b.numpy())
    assert_close(d, ref, mag, "f16")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_cuda_tensors_in_place():
    rt = tcjit.Runtime(device="cuda", db=False)
    a = torch.randn(128, 64, device="cuda", dtype=torch.float16)
    b = torch.randn(64, 96, device="cuda", dtype=torch.float16)
    out = torch.empty(128, 96, device="cuda", dtype=torch.float16)
    tcjit.matmul(a, b, out=out, runtime=rt)  # on torch.cuda.current_stream()
    torch.cuda.current_stream().synchronize()
    ref = (a.double() @ b.double())
    assert torch.allclose(out.double(), ref, rtol=2e-3, atol=2e-2)
