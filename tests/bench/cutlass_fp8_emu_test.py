"""CUTLASS's own fp8 GEMM on tcjit's PTX emulator: bench/anchors/cutlass_gemm.cu built with
-DANCHOR_DTYPE_E4M3 (cutlass::gemm::device::Gemm, float_e4m3_t x float_e4m3_t -> f32, arch Sm89,
instruction 16x8x32) by nvcc -arch=sm_89, its Params printed by the anchor's host program, and the
PTX run by `tcjit_bench emu --abi cutlass` against tcjit's CPU reference (the tolerance model).
The PTX is nvcc's and CUTLASS's: nobody here wrote its mma.sync ... e4m3 or its fragment code.

Environment: TCJIT_BENCH (the tcjit_bench binary). Skips (exit 0, "OK (skipped=1)") without nvcc
or CUTLASS's headers (the PyPI nvidia-cutlass package of scripts/setup).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "bench", "anchors", "cutlass_gemm.cu")
CONFIG = ["-DANCHOR_DTYPE_E4M3", "-DBM=64", "-DBN=64", "-DBK=64", "-DWM=32", "-DWN=32",
          "-DSTAGES=3", "-DALIGN_A=16", "-DALIGN_B=16"]
# tails in M, N and K (not multiples of the 64x64x64 tile), and full tiles
SPECS = ["gemm m=128 n=96 k=256 a=e4m3:row b=e4m3:col c=f32:row acc=f32",
         "gemm m=100 n=72 k=192 a=e4m3:row b=e4m3:col c=f32:row acc=f32"]


def skip(why):
    print("skipped: " + why)
    print("OK (skipped=1)")
    sys.exit(0)


def main():
    nvcc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    if not os.path.exists(nvcc):
        skip("no nvcc at " + nvcc)
    try:
        import cutlass_library
    except ImportError:
        skip("CUTLASS's headers (python package nvidia-cutlass) are not installed")
    include = os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include")
    bench = os.environ["TCJIT_BENCH"]
    with tempfile.TemporaryDirectory(prefix="tcjit_cutlass_fp8_") as tmp:
        ptx = os.path.join(tmp, "cutlass_fp8.ptx")
        params = os.path.join(tmp, "cutlass_fp8_params")
        common = [nvcc, "-std=c++17", "-w", "-I" + include] + CONFIG
        subprocess.run(common + ["-arch=sm_89", "-ptx", SOURCE, "-o", ptx], check=True)
        subprocess.run(common + ["-DANCHOR_HOST", SOURCE, "-o", params], check=True)
        with open(ptx) as f:
            text = f.read()
        assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32" in text, "no fp8 mma in the PTX"
        failures = 0
        for spec in SPECS:
            run = subprocess.run([bench, "emu", "--spec", spec, "--abi", "cutlass", "--ptx", ptx,
                                  "--kernel", "cutlass_anchor_gemm", "--params-program", params],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print("FAIL %s: tcjit_bench emu exited %d\n%s" % (spec, run.returncode,
                                                                  run.stderr[-3000:]))
                failures += 1
                continue
            result = json.loads(run.stdout)
            report, mma = result["report"], result["counters"]["mma_instructions"]
            ok = report["ok"] and report["count"] > 0 and mma > 0
            print("%s %s: %d elements, %d mismatches, %d mma, max error/tolerance %g" % (
                "ok  " if ok else "FAIL", spec, report["count"], report["mismatches"], mma,
                report["max_error_over_tolerance"]))
            failures += not ok
    if failures:
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
