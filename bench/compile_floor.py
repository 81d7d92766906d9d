"""spec -> cubin against its floor, one bare ptxas run on the same PTX, and the epilogue's code.

For each case (f16 128x128x32, bf16 + bias + gelu, tf32, s8, a ResNet-50 conv) and each tcjit
binary given (`--tcjit LABEL=PATH`, e.g. main's build beside this one), in one run, alternating
so that load drifts hit every side alike:
  - `tcjit compile SPEC --config C --cubin -o X` in a fresh process: wall time and CPU time (the
    process and its ptxas child, from getrusage(RUSAGE_CHILDREN));
  - `ptxas -v -arch=sm_80 -O3` (the runtime's command, runtime/jit/ptxas_compiler.cpp) on the
    PTX that binary emits for the case: the floor;
  - the PTX's size, the stage times tcjit reports (--json: LLVM IR, optimization, PTX emission,
    ptxas), and with --sass the cubin's SASS instruction count (bench/sass_stats.py);
  - `tcjit --version`: the process's start-up alone.
Medians of --reps runs. The ratio tcjit / ptxas is the figure: CPU time on a loaded machine (the
wall time waits for other jobs). --cutlass CUBIN (repeatable, LABEL=PATH) adds an anchor's SASS
count. --env LABEL=NAME=VALUE runs that label with one more environment variable (e.g. the same
binary with TCJIT_EPILOGUE_UNROLL=1).

Usage: python bench/compile_floor.py --tcjit before=OTHER/build/tcjit --tcjit after=build/tcjit
       [--reps 5] [--sass] [--cutlass gelu=X.cubin] [--out FILE.md] [--cases f16,gelu]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PTXAS = os.environ.get("TCJIT_PTXAS", "/usr/local/cuda/bin/ptxas")

CASES = {
    "f16": ("gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32", "128x128x32 w64x64 s3"),
    "gelu": ("gemm m=4096 n=4096 k=4096 a=bf16 b=bf16:col c=bf16 acc=f32 bias=col act=gelu",
             "128x128x32 w64x64 s3"),
    "tf32": ("gemm m=4096 n=4096 k=4096 a=f32 b=f32:col c=f32 acc=f32 math=tf32",
             "128x128x32 w64x64 s3"),
    "s8": ("gemm m=4096 n=4096 k=4096 a=s8 b=s8:col c=s8 acc=s32 alpha=0.01",
           "128x128x64 w64x64 s3"),
    "conv": ("conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 x=f16 acc=f32 bias=col act=relu",
             "128x128x32 w64x64 s3"),
}


def timed(cmd, env):
    """(wall ms, CPU ms of the process and its children) of one run; raises on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = (time.perf_counter() - t0) * 1000.0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError("'%s' failed (%d):\n%s" % (" ".join(cmd), r.returncode, r.stderr[-2000:]))
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000.0
    return wall, cpu, r.stdout


def sass_count(cubin):
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sass_stats.py")
    r = subprocess.run([sys.executable, tool, cubin], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    d = json.loads(r.stdout)
    return {"instructions": d["instructions"], "registers": d["resources"].get("REG"),
            "main_loop": d["main_loop"]["instructions"] if d.get("main_loop") else None}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tcjit", action="append", required=True, help="LABEL=PATH (repeatable)")
    p.add_argument("--env", action="append", default=[], help="LABEL=NAME=VALUE for a label")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--sass", action="store_true", help="count SASS (needs the anchors venv)")
    p.add_argument("--cutlass", action="append", default=[], help="LABEL=CUBIN: its SASS count")
    p.add_argument("--out", help="write the Markdown table here too")
    args = p.parse_args()

    sides = []
    for t in args.tcjit:
        label, path = t.split("=", 1)
        env = dict(os.environ)
        for e in args.env:
            lab, kv = e.split("=", 1)
            if lab == label:
                name, value = kv.split("=", 1)
                env[name] = value
        sides.append((label, os.path.abspath(path), env))
    work = tempfile.mkdtemp(prefix="compile_floor-")
    for _, _, env in sides:  # no user cache, no user config
        env.setdefault("TCJIT_DB", os.path.join(work, "db"))
        env["HOME"] = work
        env["XDG_CACHE_HOME"] = os.path.join(work, "cache")

    rows = []
    # start-up alone
    start = {label: ([], []) for label, _, _ in sides}
    for _ in range(args.reps):
        for label, tool, env in sides:
            w, c, _ = timed([tool, "--version"], env)
            start[label][0].append(w)
            start[label][1].append(c)
    for case in args.cases.split(","):
        spec, config = CASES[case]
        for label, tool, env in sides:
            ptx = os.path.join(work, "%s-%s.ptx" % (label, case))
            _, _, out = timed([tool, "compile", spec, "--config", config, "--no-ptxas", "-o", ptx,
                               "--json"], env)
            ptx_bytes = os.path.getsize(ptx)
            samples = {"tcjit_wall": [], "tcjit_cpu": [], "ptxas_wall": [], "ptxas_cpu": [],
                       "stages": []}
            cubin = os.path.join(work, "%s-%s.cubin" % (label, case))
            for _ in range(args.reps):
                w, c, out = timed([tool, "compile", spec, "--config", config, "--cubin", "-o",
                                   cubin, "--json"], env)
                samples["tcjit_wall"].append(w)
                samples["tcjit_cpu"].append(c)
                samples["stages"].append(json.loads(out)["times_ms"])
                w, c, _ = timed([PTXAS, "-v", "-arch=sm_80", "-O3", ptx, "-o",
                                 os.path.join(work, "bare.cubin")], env)
                samples["ptxas_wall"].append(w)
                samples["ptxas_cpu"].append(c)
            med = {k: statistics.median(v) for k, v in samples.items() if k != "stages"}
            stages = {}
            for s in samples["stages"][0]:
                stages[s] = statistics.median(x.get(s, 0.0) for x in samples["stages"])
            llvm = sum(stages.get(s, 0.0) for s in ("build_llvm_ir", "link_libdevice",
                                                       "optimize_llvm", "emit_ptx"))
            row = {"case": case, "side": label, "ptx_kb": ptx_bytes / 1024.0, **med,
                   "ratio_cpu": med["tcjit_cpu"] / med["ptxas_cpu"],
                   "ratio_wall": med["tcjit_wall"] / med["ptxas_wall"],
                   "llvm_ms": llvm, "emit_ptx_ms": stages.get("emit_ptx", 0.0),
                   "ptxas_in_tcjit_ms": stages.get("ptxas", 0.0)}
            if args.sass:
                row["sass"] = sass_count(cubin)
            rows.append(row)
            print(json.dumps(row), flush=True)

    lines = ["| case | binary | PTX KB | tcjit CPU ms | bare ptxas CPU ms | CPU ratio | "
             "wall ratio | LLVM ms (emit_ptx) | SASS instr (regs) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        sass = r.get("sass")
        sass_text = "%d (%s)" % (sass["instructions"], sass["registers"]) if sass else "-"
        lines.append("| %s | %s | %.1f | %.0f | %.0f | %.2fx | %.2fx | %.0f (%.0f) | %s |" % (
            r["case"], r["side"], r["ptx_kb"], r["tcjit_cpu"], r["ptxas_cpu"], r["ratio_cpu"],
            r["ratio_wall"], r["llvm_ms"], r["emit_ptx_ms"], sass_text))
    for label, _, _ in sides:
        lines.append("")
        lines.append("start-up (`tcjit --version`), %s: %.1f ms CPU, %.1f ms wall (medians)" % (
            label, statistics.median(start[label][1]), statistics.median(start[label][0])))
    for c in args.cutlass:
        label, path = c.split("=", 1)
        s = sass_count(path)
        if s:
            lines.append("")
            lines.append("CUTLASS %s: %d SASS instructions (%s registers), main loop %s" % (
                label, s["instructions"], s["registers"], s["main_loop"]))
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
