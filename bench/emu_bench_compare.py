#!/usr/bin/env python3
"""Two bench_emu binaries side by side: runs them in turn (A B A B ...), each with the same
--benchmark_filter, and prints per benchmark the median warp-instructions per second of each, per
wall-clock second and per CPU second of the benchmark's thread (with one worker thread, /1, the
CPU-second rate is the steadier on a loaded machine), and their ratio (of the CPU-second rates for one worker, of the wall-clock rates for all cores,
`/0`, and of the times for BM_EmuLoad). Usage:
  bench/emu_bench_compare.py [--rounds N] [--filter REGEX] BEFORE/bench_emu AFTER/bench_emu
"""
import argparse, json, statistics, subprocess


def run(binary, flt):
    out = subprocess.run([binary, f"--benchmark_filter={flt}", "--benchmark_format=json",
                          "--benchmark_min_time=0.5"], capture_output=True, text=True, check=True)
    res = {}
    for b in json.loads(out.stdout)["benchmarks"]:
        rate = b.get("warp_instr_per_s")
        if rate is None:  # BM_EmuLoad: milliseconds
            res[b["name"]] = (b["real_time"], b["cpu_time"])
            continue
        per_iter = rate * b["real_time"] / 1e3  # real_time in ms
        res[b["name"]] = (rate / 1e6, per_iter / b["cpu_time"] * 1e3 / 1e6)
    return res


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--filter", default="EmuGemm|EmuLoad/./0|EmuMma/[0-4]/1|EmuSgemm/1")
    p.add_argument("before")
    p.add_argument("after")
    a = p.parse_args()
    runs = {a.before: [], a.after: []}
    for _ in range(a.rounds):
        for binary in (a.before, a.after):
            runs[binary].append(run(binary, a.filter))
    names = [n for n in runs[a.after][0] if n in runs[a.before][0]]
    print("| benchmark | before: M/s wall, M/s CPU | after: M/s wall, M/s CPU | after/before |")
    print("|---|---|---|---|")
    for n in names:
        cells = []
        med = {}
        for binary in (a.before, a.after):
            w = statistics.median(r[n][0] for r in runs[binary])
            c = statistics.median(r[n][1] for r in runs[binary])
            med[binary] = c
            cells.append(f"{w:.2f}, {c:.2f}")
        if n.split("/")[2] == "0" and "EmuLoad" not in n:  # all cores: the wall-clock rate
            cells = [c.split(",")[0] + ", -" for c in cells]
            med = {b: statistics.median(r[n][0] for r in runs[b]) for b in (a.before, a.after)}
        ratio = med[a.after] / med[a.before]
        if "EmuLoad" in n:  # times: before/after
            ratio = med[a.before] / med[a.after]
            cells = [c.replace(",", " ms wall,") + " ms CPU" for c in cells]
        print(f"| {n} | {cells[0]} | {cells[1]} | {ratio:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
