"""Static kernel quality at one tile config, tcjit (one or more builds: before/after) beside CUTLASS
and Triton built with the same tiles: registers, stack, spills and the main loop's SASS
(instructions, integer instructions and moves per MMA; bench/sass_stats.py). No emulator, no
timing: what compare.py's measure 2 reports, for any config rather than only the default one.

Usage (from the checkout, with the anchors' venv, bench/README.md):
  build/bench-venv/bin/python bench/config_quality.py \\
      --tcjit before=/path/to/main/build/tcjit --tcjit after=build/tcjit \\
      --case tf32:1024:default --case s8:1024:"128x128x64 w64x64 s3" [--out FILE.json]
A case is DTYPE:SIZE:CONFIG (DTYPE as compare.py's: f16, bf16, tf32, s8; CONFIG "default" or
tile words; the anchors are built with the config tcjit's last build resolves it to).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "anchors"))

import compare  # noqa: E402  (DTYPES, parse_config)
import cutlass_build  # noqa: E402
import sass_stats  # noqa: E402


def tcjit_cubin(tcjit, spec, config, out, env):
    cmd = [tcjit, "compile", spec, "--cubin", "-o", out]
    if config != "default":
        cmd += ["--config", config]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    text = r.stdout + r.stderr
    m = re.search(r"^config\s+(\S+ \S+ \S+ \S+ \S+ \S+ \S+)", text, re.M)
    ptxas = re.search(r"^ptxas\s+\S+: (\d+) registers, (\d+) B spill stores, (\d+) B spill loads",
                      text, re.M)
    return m.group(1), int(ptxas.group(2)) + int(ptxas.group(3))


def quality(cubin, kernel=None, spill=None):
    s = sass_stats.analyse(cubin, kernel)
    loop = s["main_loop"]
    mma = loop["math"] or 1
    return {"registers": s["resources"].get("REG"), "stack": s["resources"].get("STACK"),
            "spill_bytes": spill, "kernel_instructions": s["instructions"],
            "loop_instructions": loop["instructions"], "mma": loop["math"],
            "int_arith": loop["counts"]["int_arith"], "moves": loop["counts"]["move"],
            "instructions_per_mma": loop["instructions_per_mma"],
            "int_per_mma": loop["counts"]["int_arith"] / mma}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tcjit", action="append", required=True, help="LABEL=PATH of a tcjit CLI")
    p.add_argument("--case", action="append", required=True, help="DTYPE:SIZE:CONFIG")
    p.add_argument("--out", help="write the rows as JSON here too")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="tcjit-config-quality-")
    env = dict(os.environ)
    env["TCJIT_DB"] = os.path.join(work, "db")  # no cache hits from elsewhere
    env["TRITON_PTXAS_PATH"] = os.path.join(cutlass_build.cuda_home(), "bin", "ptxas")
    rows = []
    for case in args.case:
        dtype, size, config = case.split(":", 2)
        n = int(size)
        spec = "gemm m=%d n=%d k=%d %s" % (n, n, n, compare.DTYPES[dtype]["spec"])
        resolved = None
        for i, labelled in enumerate(args.tcjit):
            label, path = labelled.split("=", 1)
            cubin = os.path.join(work, "%s_%s_%d.cubin" % (dtype, label, i))
            resolved, spill = tcjit_cubin(os.path.abspath(path), spec, config, cubin, env)
            rows.append(dict(case=case, config=resolved, kernel="tcjit " + label,
                             **quality(cubin, spill=spill)))
        cfg = compare.parse_config(resolved)
        out_dir = os.path.join(work, "cutlass_" + dtype)
        nv = cutlass_build.build_nvcc(dtype, cfg, out_dir, 1)
        rows.append(dict(case=case, config=resolved, kernel="CUTLASS",
                         **quality(nv["cubin"], nv["kernel"])))
        warps = (cfg["bm"] // cfg["wm"]) * (cfg["bn"] // cfg["wn"])
        tri_dir = os.path.join(work, "triton_" + dtype)
        subprocess.run([sys.executable, os.path.join(HERE, "anchors", "triton_gemm.py"), "--dtype",
                        dtype, "--bm", str(cfg["bm"]), "--bn", str(cfg["bn"]), "--bk",
                        str(cfg["bk"]), "--warps", str(warps), "--stages", str(cfg["stages"]),
                        "--m", size, "--n", size, "--k", size, "--lda", size, "--ldb", size,
                        "--ldc", size, "--reps", "1", "--out", tri_dir], check=True, env=env,
                       capture_output=True)
        rows.append(dict(case=case, config=resolved, kernel="Triton",
                         **quality(os.path.join(tri_dir, "triton.cubin"))))
    print("| case | config | kernel | regs | stack | spill B | kernel SASS | loop instrs | MMA "
          "| int | moves | instrs/MMA | int/MMA |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        spill = "-" if r["spill_bytes"] is None else r["spill_bytes"]
        print("| %s | %s | %s | %s | %s | %s | %d | %d | %d | %d | %d | %.2f | %.2f |" % (
            r["case"].split(":")[0] + " " + r["case"].split(":")[1] + "^3", r["config"],
            r["kernel"], r["registers"], r["stack"], spill, r["kernel_instructions"],
            r["loop_instructions"], r["mma"], r["int_arith"], r["moves"],
            r["instructions_per_mma"], r["int_per_mma"]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
