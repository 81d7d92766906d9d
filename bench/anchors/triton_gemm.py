"""Triton anchor for bench/run: the matmul Triton's own tutorial teaches (block pointers stepped
along K, K tail masked, M/N wrapped), compiled for sm_80 without a GPU with
GPUTarget("cuda", 80, 32) at the tcjit config's block sizes, warps and stages.

A row-major (lda), B column-major (ldb), C row-major (ldc); M, N, K and the leading dimensions
carry Triton's divisibility-by-16 hint when they have it, as triton.jit specializes its integer
arguments (so, like the JIT, the kernel is specialized to that property of the problem).

Run as a program (a fresh process, for cold timings):
  python triton_gemm.py --dtype f16 --bm 128 --bn 128 --bk 32 --warps 4 --stages 3 \
      --m 4096 --n 4096 --k 4096 --lda 4096 --ldb 4096 --ldc 4096 --reps 5 --out DIR
prints one JSON object (per-repetition stage times in ms, the PTX entry name, scratch sizes) and
writes DIR/triton.ptx and DIR/triton.cubin.
"""
import argparse
import json
import os
import sys
import tempfile
import time

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, stated

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

TRITON_TYPES = {"f16": "fp16", "bf16": "bf16", "tf32": "fp32", "s8": "i8"}
OUT_TYPES = {"f16": "fp16", "bf16": "bf16", "tf32": "fp32", "s8": "i32"}


@triton.jit
def tcjit_anchor_matmul(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc, BM: tl.constexpr,
                        BN: tl.constexpr, BK: tl.constexpr, INT_ACC: tl.constexpr,
                        TF32: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = (pid_m * BM + tl.arange(0, BM)) % M
    offs_n = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * lda + offs_k[None, :]
    b_ptrs = b_ptr + offs_n[None, :] * ldb + offs_k[:, None]
    if INT_ACC:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0)
        if TF32:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK
    c = acc.to(c_ptr.dtype.element_ty)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + rows[:, None] * ldc + cols[None, :]
    tl.store(c_ptrs, c, mask=(rows[:, None] < M) & (cols[None, :] < N))


def make_source(dtype, bm, bn, bk, m, n, k, lda, ldb, ldc):
    tin, tout = TRITON_TYPES[dtype], OUT_TYPES[dtype]
    signature = {"a_ptr": "*" + tin, "b_ptr": "*" + tin, "c_ptr": "*" + tout, "M": "i32",
                 "N": "i32", "K": "i32", "lda": "i32", "ldb": "i32", "ldc": "i32",
                 "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "INT_ACC": "constexpr",
                 "TF32": "constexpr"}
    constexprs = {"BM": bm, "BN": bn, "BK": bk, "INT_ACC": dtype == "s8", "TF32": dtype == "tf32"}
    div16 = [["tt.divisibility", 16]]
    attrs = {(0,): div16, (1,): div16, (2,): div16}  # pointers: 16-byte aligned allocations
    for index, value in ((3, m), (4, n), (5, k), (6, lda), (7, ldb), (8, ldc)):
        if value % 16 == 0:
            attrs[(index,)] = div16
    return triton.compiler.ASTSource(fn=tcjit_anchor_matmul, signature=signature,
                                     constexprs=constexprs, attrs=attrs)


def compile_once(args):
    """One uncached compile; returns (kernel, {stage: ms}, total ms)."""
    stage_ms = {}

    def listener(src, metadata, metadata_group, times, cache_hit):
        stage_ms["init"] = times.ir_initialization / 1000.0
        for stage, us in times.lowering_stages:
            stage_ms[stage] = us / 1000.0

    triton.knobs.compilation.listener = listener
    triton.knobs.compilation.always_compile = True
    src = make_source(args.dtype, args.bm, args.bn, args.bk, args.m, args.n, args.k, args.lda,
                      args.ldb, args.ldc)
    target = GPUTarget("cuda", 80, 32)
    t0 = time.perf_counter()
    kernel = triton.compile(src, target=target,
                            options={"num_warps": args.warps, "num_stages": args.stages})
    total = (time.perf_counter() - t0) * 1000.0
    triton.knobs.compilation.listener = None
    return kernel, stage_ms, total


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtype", choices=sorted(TRITON_TYPES), required=True)
    for name in ("bm", "bn", "bk", "warps", "stages", "m", "n", "k", "lda", "ldb", "ldc"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # A private cache directory: no repetition is ever a cache hit.
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tcjit-bench-triton-")
    runs = []
    kernel = None
    for _ in range(args.reps):
        kernel, stages, total = compile_once(args)
        runs.append({"stages_ms": stages, "total_ms": total})
    with open(os.path.join(args.out, "triton.ptx"), "w") as f:
        f.write(kernel.asm["ptx"])
    with open(os.path.join(args.out, "triton.cubin"), "wb") as f:
        f.write(kernel.asm["cubin"])
    md = kernel.metadata
    json.dump({"runs": runs, "name": md.name, "shared": md.shared, "num_warps": md.num_warps,
               "global_scratch_size": getattr(md, "global_scratch_size", 0),
               "profile_scratch_size": getattr(md, "profile_scratch_size", 0),
               "triton_version": triton.__version__}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
