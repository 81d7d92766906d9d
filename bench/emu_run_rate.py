#!/usr/bin/env python3
"""Emulator speed as `tcjit run` reports it: warp-instructions / device time, per GEMM.

Runs each spec with every given tcjit binary, alternating (A B A B ...), `--json`, and prints the
median rate (M warp-instructions/s) and device ms per binary. Paired, so a loaded machine affects
both alike; compare ratios. Usage:
  bench/emu_run_rate.py [--reps N] [--db DIR] TCJIT [TCJIT...]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

SPECS = {
    "f16 512x512x256": "gemm m=512 n=512 k=256 a=f16:row b=f16:col c=f16:row acc=f32",
    "bf16 512x512x256": "gemm m=512 n=512 k=256 a=bf16:row b=bf16:col c=bf16:row acc=f32",
    "s8 512x512x512": "gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s32:row acc=s32",
    "f32 SIMT 256^3": "gemm m=256 n=256 k=256 a=f32:row b=f32:col c=f32:row acc=f32 math=f32",
    "f16 1024^3": "gemm m=1024 n=1024 k=1024 a=f16:row b=f16:col c=f16:row acc=f32",
}


def run_once(tcjit, spec, db):
    env = dict(os.environ, TCJIT_DB=db)
    out = subprocess.run([tcjit, "run", spec, "--device", "emu", "--seed", "7", "--json"],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{tcjit} run '{spec}' failed ({out.returncode}):\n{out.stderr}{out.stdout}")
    r = json.loads(out.stdout)[0]
    return r["counters"]["warp_instructions"], r["verify"]["device_ms"], r["counters"]["mma"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--db", default=None, help="directory for the kernel databases (default: temp)")
    p.add_argument("--only", default=None, help="substring of the spec names to run")
    p.add_argument("tcjit", nargs="+")
    a = p.parse_args()
    dbdir = a.db or tempfile.mkdtemp(prefix="emu-rate-")
    dbs = [os.path.join(dbdir, f"k{i}.db") for i in range(len(a.tcjit))]
    print(f"| GEMM | warp-instr | mma | " +
          " | ".join(f"{os.path.relpath(t)} ms, M/s" for t in a.tcjit) + " |")
    print("|---|---|---|" + "---|" * len(a.tcjit))
    for name, spec in SPECS.items():
        if a.only and a.only not in name:
            continue
        for t, db in zip(a.tcjit, dbs):  # compile once (not timed: device_ms excludes it)
            run_once(t, spec, db)
        ms = [[] for _ in a.tcjit]
        wi = mma = 0
        for _ in range(a.reps):
            for i, (t, db) in enumerate(zip(a.tcjit, dbs)):
                wi, d, mma = run_once(t, spec, db)
                ms[i].append(d)
        cells = []
        for m in ms:
            med = statistics.median(m)
            cells.append(f"{med:.1f} ms, {wi / med / 1e3:.1f}")
        print(f"| {name} | {wi} | {mma} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
