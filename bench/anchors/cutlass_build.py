"""Builds the CUTLASS anchor (bench/anchors/cutlass_gemm.cu) for one tcjit config and times it.

nvcc (a fresh process each time, so every figure is cold): source -> PTX (nvcc -ptx), PTX -> cubin
(ptxas, the toolkit's), source -> cubin (nvcc -cubin). NVRTC, in this process through ctypes: the
same source -> PTX (-arch=compute_80) and -> cubin (-arch=sm_80); the first compile is cold, the
rest warm. CUTLASS's headers are the nvidia-cutlass package's (bench/setup).
"""
import ctypes
import os
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "cutlass_gemm.cu")
SPARSE_SOURCE = os.path.join(HERE, "cutlass_sparse_gemm.cu")
DTYPE_MACROS = {"f16": "ANCHOR_DTYPE_F16", "bf16": "ANCHOR_DTYPE_BF16", "tf32": "ANCHOR_DTYPE_TF32",
                "s8": "ANCHOR_DTYPE_S8", "s4": "ANCHOR_DTYPE_S4",
                "sparse_f16": "ANCHOR_DTYPE_F16", "sparse_s4": "ANCHOR_DTYPE_S4"}
KERNEL = "cutlass_anchor_gemm"
SPARSE_KERNEL = "cutlass_anchor_sparse_gemm"


def source(dtype):
    """The anchor's source: the 2:4-sparse dtypes build SparseGemm, the rest Gemm."""
    return SPARSE_SOURCE if dtype.startswith("sparse_") else SOURCE


def kernel(dtype):
    return SPARSE_KERNEL if dtype.startswith("sparse_") else KERNEL


def cuda_home():
    return os.environ.get("CUDA_HOME", "/usr/local/cuda")


def cutlass_include():
    import cutlass_library
    path = os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include")
    if not os.path.exists(os.path.join(path, "cutlass", "gemm", "device", "gemm.h")):
        raise FileNotFoundError("CUTLASS headers not found under " + path +
                                " (bench/setup installs nvidia-cutlass)")
    return path


def cutlass_version():
    import importlib.metadata
    return importlib.metadata.version("nvidia-cutlass")


def defines(dtype, cfg):
    out = ["-D" + DTYPE_MACROS[dtype], "-DBM=%d" % cfg["bm"], "-DBN=%d" % cfg["bn"],
           "-DBK=%d" % cfg["bk"], "-DWM=%d" % cfg["wm"], "-DWN=%d" % cfg["wn"],
           "-DSTAGES=%d" % cfg["stages"]]
    if not dtype.startswith("sparse_"):  # SparseGemm takes CUTLASS's default (128-bit) alignment
        out += ["-DALIGN_A=%d" % cfg["va"], "-DALIGN_B=%d" % cfg["vb"]]
    return out


def _timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    ms = (time.perf_counter() - t0) * 1000.0
    if r.returncode != 0:
        raise RuntimeError("'%s' failed:\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    return ms


def build_nvcc(dtype, cfg, out_dir, reps):
    """nvcc -ptx, ptxas, nvcc -cubin, `reps` times each; writes cutlass.ptx and cutlass.cubin."""
    os.makedirs(out_dir, exist_ok=True)
    nvcc = os.path.join(cuda_home(), "bin", "nvcc")
    ptxas = os.path.join(cuda_home(), "bin", "ptxas")
    common = [nvcc, "-std=c++17", "-arch=sm_80", "-I" + cutlass_include(), "-w"] + defines(dtype, cfg)
    ptx = os.path.join(out_dir, "cutlass.ptx")
    cubin = os.path.join(out_dir, "cutlass.cubin")
    ptxas_cubin = os.path.join(out_dir, "cutlass_ptxas.cubin")
    runs = {"source_to_ptx_ms": [], "ptx_to_cubin_ms": [], "source_to_cubin_ms": []}
    for _ in range(reps):
        runs["source_to_ptx_ms"].append(_timed(common + ["-ptx", source(dtype), "-o", ptx]))
        runs["ptx_to_cubin_ms"].append(_timed([ptxas, "-arch=sm_80", ptx, "-o", ptxas_cubin]))
        runs["source_to_cubin_ms"].append(_timed(common + ["-cubin", source(dtype), "-o", cubin]))
    return {"runs": runs, "ptx": ptx, "cubin": cubin, "kernel": kernel(dtype)}


def build_params_program(dtype, cfg, out_dir):
    """The host program that prints the kernel's launch shape and Params bytes."""
    nvcc = os.path.join(cuda_home(), "bin", "nvcc")
    exe = os.path.join(out_dir, "cutlass_params")
    subprocess.run([nvcc, "-std=c++17", "-w", "-DANCHOR_HOST", "-I" + cutlass_include()] +
                   defines(dtype, cfg) + ["-x", "cu", source(dtype), "-o", exe], check=True,
                   capture_output=True)
    return exe


class Nvrtc:
    """libnvrtc through ctypes (the toolkit's)."""

    def __init__(self):
        self.lib = ctypes.CDLL(os.path.join(cuda_home(), "lib64", "libnvrtc.so"))
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def version(self):
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        return "%d.%d" % (major.value, minor.value)

    def compile(self, source, options, want):
        """Compiles; returns the PTX (want='ptx') or cubin (want='cubin') bytes."""
        prog = ctypes.c_void_p()
        self._check(self.lib.nvrtcCreateProgram(ctypes.byref(prog), source, b"cutlass_gemm.cu", 0,
                                                None, None), prog)
        try:
            opts = (ctypes.c_char_p * len(options))(*options)
            rc = self.lib.nvrtcCompileProgram(prog, len(options), opts)
            if rc != 0:
                size = ctypes.c_size_t()
                self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
                log = ctypes.create_string_buffer(size.value)
                self.lib.nvrtcGetProgramLog(prog, log)
                raise RuntimeError("NVRTC failed: " + log.value.decode(errors="replace")[-3000:])
            get_size = self.lib.nvrtcGetPTXSize if want == "ptx" else self.lib.nvrtcGetCUBINSize
            get = self.lib.nvrtcGetPTX if want == "ptx" else self.lib.nvrtcGetCUBIN
            size = ctypes.c_size_t()
            self._check(get_size(prog, ctypes.byref(size)), prog)
            buf = ctypes.create_string_buffer(size.value)
            self._check(get(prog, buf), prog)
            return buf.raw
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(prog))

    def _check(self, rc, prog):
        if rc != 0:
            raise RuntimeError("NVRTC: " + self.lib.nvrtcGetErrorString(rc).decode())


def build_nvrtc(dtype, cfg, reps):
    """source -> PTX and source -> cubin through NVRTC, `reps` times each, in this process."""
    nvrtc = Nvrtc()
    with open(source(dtype), "rb") as f:
        text = f.read()
    base = [b"-std=c++17", b"-default-device", b"-w", ("-I" + cutlass_include()).encode(),
            ("-I" + os.path.join(cuda_home(), "include")).encode(),
            ("-I" + os.path.join(cuda_home(), "include", "cccl")).encode()]
    base += [d.encode() for d in defines(dtype, cfg)]
    runs = {"source_to_ptx_ms": [], "source_to_cubin_ms": []}
    for _ in range(reps):
        t0 = time.perf_counter()
        nvrtc.compile(text, base + [b"-arch=compute_80"], "ptx")
        runs["source_to_ptx_ms"].append((time.perf_counter() - t0) * 1000.0)
        t0 = time.perf_counter()
        nvrtc.compile(text, base + [b"-arch=sm_80"], "cubin")
        runs["source_to_cubin_ms"].append((time.perf_counter() - t0) * 1000.0)
    return {"runs": runs, "version": nvrtc.version()}


def median(values):
    return statistics.median(values) if values else None
