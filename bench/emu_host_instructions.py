#!/usr/bin/env python3
"""Emulator cost in host instructions (valgrind's callgrind), per GEMM: deterministic.

`bench/emu_run_rate.py` times `tcjit run` and is only as steady as the machine; this counts the
host instructions the emulator's workers execute (the inclusive cost of execute_launch's worker,
every CTA and every thread of the launch) for the same GEMMs, so a change to the emulator can be
judged on a loaded or slow machine: fewer instructions per warp-instruction is the same work done
cheaper (the time per instruction still differs between code paths: x87 or a cache miss costs
more than an add). Each binary runs each spec once under callgrind (about 50x slower than a plain
run), after an untimed run that fills its kernel database. Needs valgrind (Debian: valgrind).
Usage:
  bench/emu_host_instructions.py [--only TEXT] [--db DIR] TCJIT [TCJIT...]
A TCJIT may be a wrapper script that execs tcjit (children are traced).
"""
import argparse, glob, json, os, re, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emu_run_rate import SPECS, run_once  # noqa: E402

# The worker that emulates the CTAs of a launch (runtime/emu/executor.cpp).
WORKER = re.compile(r"execute_launch\(tcjit::emu::LaunchRequest const&\)::\{lambda\(unsigned int\)"
                    r"#1\}::operator\(\)\(unsigned int\) const")


def worker_instructions(out_files):
    """The worker's inclusive instruction count in the callgrind outputs (the traced process)."""
    best = 0
    for f in out_files:
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", f],
                              capture_output=True, text=True, check=True).stdout
        for line in text.splitlines():
            m = re.match(r"\s*([0-9,]+)\s", line)
            if m and WORKER.search(line) and "=>" not in line:
                best = max(best, int(m.group(1).replace(",", "")))
    return best


def count(tcjit, spec, db, work):
    env = dict(os.environ, TCJIT_DB=db)
    prefix = os.path.join(work, "callgrind.out")
    for f in glob.glob(prefix + ".*"):
        os.remove(f)
    out = subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                          f"--callgrind-out-file={prefix}.%p", tcjit, "run", spec, "--device",
                          "emu", "--seed", "7", "--json"], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{tcjit} run '{spec}' under callgrind failed ({out.returncode}):\n"
                 f"{out.stderr[-2000:]}")
    report = json.loads(out.stdout)[0]
    n = worker_instructions(glob.glob(prefix + ".*"))
    if n == 0:
        sys.exit(f"{tcjit}: no emulator worker in the callgrind output (was it built with symbols "
                 "and run on the emulator?)")
    return n, report["counters"]["warp_instructions"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="512",
                   help="substring of the spec names to run (default: the 512 ones; '' for all)")
    p.add_argument("--db", default=None, help="directory for the kernel databases (default: temp)")
    p.add_argument("tcjit", nargs="+")
    a = p.parse_args()
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    work = tempfile.mkdtemp(prefix="emu-callgrind-")
    dbdir = a.db or work
    dbs = [os.path.join(dbdir, f"k{i}.db") for i in range(len(a.tcjit))]
    print("| GEMM | warp-instr | " +
          " | ".join(f"{os.path.relpath(t)}: M host instr (per warp-instr)" for t in a.tcjit) +
          " |")
    print("|---|---|" + "---|" * len(a.tcjit))
    for name, spec in SPECS.items():
        if a.only and a.only not in name:
            continue
        cells, first, wi = [], None, 0
        for i, (t, db) in enumerate(zip(a.tcjit, dbs)):
            run_once(t, spec, db)  # compiles and stores the kernel: not counted
            n, wi = count(t, spec, db, work)
            first = first or n
            # later binaries: how many times fewer instructions than the first
            cells.append(f"{n / 1e6:.1f} ({n / wi:.0f})" + (f", {first / n:.3f}x" if i else ""))
        print(f"| {name} | {wi} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
