"""tcjit's implicit-GEMM conv2d fprop kernels against CUTLASS's, side by side, in one run.

For four ResNet-50 layers at n = 32 (f16 NHWC in and out, f32 accumulate) it takes tcjit's
default config (`tcjit compile` prints it) and builds CUTLASS's
cutlass::conv::device::ImplicitGemmConvolution of kernel::DefaultConv2dFprop
(bench/anchors/cutlass_conv.cu) with the same CTA tile, warp tile, stages and alignment, then
measures, without a GPU: (1) compile latency, spec -> cubin (`tcjit compile SPEC --cubin`, a fresh
process) against source -> cubin (`nvcc -cubin -arch=sm_80 -O3 -std=c++17`, a fresh process);
(2) the SASS of each cubin: registers, spills, main-loop instructions per HMMA (sass_stats.py).

The CUTLASS iterator: kOptimized where the channels take 16-byte vectors; otherwise (the C = 3
stem) the first of kFixedChannels, kFewChannels, kAnalytic that CUTLASS builds at tcjit's stages
and alignment and whose can_implement accepts the layer, then the same at 2 stages (CUTLASS's
register-staged pipeline). Every attempt is recorded with its error. Writes
bench/results/<date>-conv.json (every figure) and <date>-conv.md.

Usage: build/bench-venv/bin/python bench/conv_compare.py [--reps N] [--keep-work]
       build/bench-venv/bin/python bench/conv_compare.py --render RESULT.json   (Markdown only)
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "anchors"))

import compare  # noqa: E402  (log, median, run_json, parse_config)
import cutlass_build  # noqa: E402  (cuda_home, cutlass_include, cutlass_version, _timed)
import sass_stats  # noqa: E402

from compare import log, median, parse_config  # noqa: E402
from report import fmt, ratio, table  # noqa: E402

SOURCE = os.path.join(HERE, "anchors", "cutlass_conv.cu")
KERNEL = "cutlass_anchor_conv2d_fprop"
LAYERS = [
    ("res2 3x3", "conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 x=f16 acc=f32"),
    ("res2 1x1 reduce", "conv2d n=32 h=56 w=56 c=256 k=64 r=1 s=1 x=f16 acc=f32"),
    ("res3 3x3", "conv2d n=32 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 x=f16 acc=f32"),
    ("conv1 stem C=3", "conv2d n=32 h=224 w=224 c=3 k=64 r=7 s=7 pad=3 stride=2 x=f16 acc=f32"),
]
SLOW_NVCC_MS = 60000.0  # one nvcc build over a minute: measure it once
NVCC_FLAGS = ["-cubin", "-arch=sm_80", "-O3", "-std=c++17", "-w"]
PTXAS_INFO = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                        r"(\d+) bytes spill loads")
PTXAS_REGS = re.compile(r"Used (\d+) registers")


def problem_of(spec):
    """The conv2d sizes of a spec (defaults: pad 0, stride 1)."""
    words = dict(w.split("=", 1) for w in spec.split()[1:] if "=" in w)
    p = {key: int(words.get(key, default)) for key, default in
         (("n", 0), ("h", 0), ("w", 0), ("c", 0), ("k", 0), ("r", 1), ("s", 1), ("pad", 0),
          ("stride", 1))}
    p["p"] = (p["h"] + 2 * p["pad"] - p["r"]) // p["stride"] + 1
    p["q"] = (p["w"] + 2 * p["pad"] - p["s"]) // p["stride"] + 1
    p["gemm_m"] = p["n"] * p["p"] * p["q"]
    p["gemm_n"], p["gemm_k"] = p["k"], p["r"] * p["s"] * p["c"]
    return p


def first_errors(text, count=3):
    lines = [ln.strip() for ln in text.splitlines() if "error:" in ln]
    lines = [re.sub(r"^.*?/include/", "", ln) for ln in lines]  # the venv's path is noise
    return lines[:count] or [text.strip()[-300:]]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


class ConvBench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.tcjit = os.path.join(self.build, "tcjit")
        self.tool = os.path.join(self.build, "bench", "tcjit_bench")
        self.work = tempfile.mkdtemp(prefix="tcjit-conv-bench-")
        self.nvcc = os.path.join(cutlass_build.cuda_home(), "bin", "nvcc")
        self.include = cutlass_build.cutlass_include()
        self.tcjit_cache, self.cutlass_cache, self.attempt_cache = {}, {}, {}
        self.unmeasured = []

    # ---- tcjit ------------------------------------------------------------------------------
    def tcjit_compile(self, spec, config=None):
        """`tcjit compile SPEC [--config C] --cubin -o X.cubin`, a fresh process, reps times."""
        key = (spec, config)
        if key in self.tcjit_cache:
            return self.tcjit_cache[key]
        out_dir = os.path.join(self.work, "tcjit%d" % len(self.tcjit_cache))
        os.makedirs(out_dir)
        cubin = os.path.join(out_dir, "tcjit.cubin")
        cmd = [self.tcjit, "compile", spec] + (["--config", config] if config else []) + [
            "--cubin", "-o", cubin]
        walls, stage_runs, text = [], [], ""
        for _ in range(self.args.reps):
            t0 = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, text=True)
            walls.append((time.perf_counter() - t0) * 1000.0)
            if r.returncode != 0:
                raise RuntimeError("'%s' failed (%d):\n%s" % (" ".join(cmd), r.returncode,
                                                             (r.stdout + r.stderr)[-2000:]))
            text = r.stdout + r.stderr
            times = re.search(r"^times\s+(.*)$", text, re.M)
            stage_runs.append({k: float(v) for k, v in
                               re.findall(r"(\w+) ([\d.]+) ms", times.group(1))} if times else {})
        cfg = re.search(r"^config\s+(.+?)\s*(\(default\))?\s*$", text, re.M)
        ptxas = re.search(r"^ptxas\s+\S+: (\d+) registers, (\d+) B spill stores, (\d+) B spill "
                          r"loads, (\d+) B stack, (\d+) B shared memory", text, re.M)
        cta = re.search(r"CTA (\d+x\d+x\d+), (\d+) warps", text)
        result = {
            "command": "tcjit compile '%s'%s --cubin -o X.cubin" % (
                spec, " --config '%s'" % config if config else ""),
            "config": cfg.group(1), "config_is_default": bool(cfg.group(2)),
            "kernel": re.search(r"^kernel\s+(\S+)", text, re.M).group(1), "cubin": cubin,
            "cubin_bytes": os.path.getsize(cubin),
            "threads": 32 * int(cta.group(2)) if cta else None,
            "ptxas": dict(zip(("registers", "spill_store_bytes", "spill_load_bytes", "stack_bytes",
                               "shared_bytes"), map(int, ptxas.groups()))) if ptxas else None,
            "compile": {"process_ms": walls, "median_ms": median(walls), "reps": len(walls),
                        "stages_ms": {k: median([s.get(k, 0.0) for s in stage_runs])
                                      for k in stage_runs[-1]}},
            "output": text,
        }
        self.tcjit_cache[key] = result
        return result

    def tcjit_shipped_config(self, spec):
        """The config tcjit's runtime ships on a cache miss (find_or_compile_kernel: the default,
        or the next spill-free one), from tcjit_bench compile; None when it cannot be asked."""
        if not os.path.exists(self.tool):
            self.unmeasured.append("tcjit's shipped config: %s is not built" % self.tool)
            return None
        r = compare.run_json([self.tool, "compile", "--spec", spec, "--reps", "1", "--out",
                              os.path.join(self.work, "shipped%d" % len(self.tcjit_cache))])
        # the scratch database's path is noise
        return {"config": r["config"], "how": re.sub(r", stored in \S+$", "", r["how"])}

    # ---- CUTLASS ----------------------------------------------------------------------------
    @staticmethod
    def macros(b):
        return ["-DBM=%d" % b["bm"], "-DBN=%d" % b["bn"], "-DBK=%d" % b["bk"], "-DWM=%d" % b["wm"],
                "-DWN=%d" % b["wn"], "-DSTAGES=%d" % b["stages"], "-DALIGN_A=%d" % b["align_a"],
                "-DALIGN_B=%d" % b["align_b"], "-DITERATOR=%s" % b["iterator"],
                "-DSTRIDE_SUPPORT=%s" % b["stride_support"]]

    @staticmethod
    def build_key(b):
        return tuple(b[k] for k in ("bm", "bn", "bk", "wm", "wn", "stages", "align_a", "align_b",
                                    "iterator", "stride_support"))

    def build_dir(self, b):
        return os.path.join(self.work, "cutlass_" + "_".join(map(str, self.build_key(b))))

    def host_check(self, b, problem):
        """Builds the host program of this CUTLASS build and asks it about the layer."""
        out_dir = self.build_dir(b)
        exe = os.path.join(out_dir, "cutlass_conv_params")
        if not os.path.exists(exe):
            os.makedirs(out_dir, exist_ok=True)
            r = subprocess.run([self.nvcc, "-std=c++17", "-w", "-DANCHOR_HOST",
                                "-I" + self.include] + self.macros(b) +
                               ["-x", "cu", SOURCE, "-o", exe], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError("host build failed: " + "; ".join(first_errors(r.stderr)))
        args = [str(problem[k]) for k in ("n", "h", "w", "c", "k", "r", "s", "pad", "stride")]
        out = compare.run_json([exe] + args)
        out.pop("params", None)
        return out

    def attempt(self, b, problem):
        """One nvcc build of a candidate (untimed) and CUTLASS's can_implement for the layer."""
        key = self.build_key(b) + tuple(problem[k] for k in ("c", "k", "r", "s", "pad", "stride"))
        if key in self.attempt_cache:
            return self.attempt_cache[key]
        out_dir = self.build_dir(b)
        os.makedirs(out_dir, exist_ok=True)
        cubin = os.path.join(out_dir, "cutlass.cubin")
        rec = {"iterator": b["iterator"], "stages": b["stages"], "align_a": b["align_a"],
               "align_b": b["align_b"]}
        # -Xptxas -v for ptxas's own spill figures; the timed builds do not pass it.
        r = subprocess.run([self.nvcc] + NVCC_FLAGS + ["-Xptxas", "-v", "-I" + self.include] +
                           self.macros(b) + [SOURCE, "-o", cubin], capture_output=True, text=True)
        if r.returncode != 0:
            rec.update(ok=False, why="does not compile: " + " | ".join(first_errors(r.stderr)))
        else:
            info, regs = PTXAS_INFO.search(r.stderr), PTXAS_REGS.search(r.stderr)
            rec["ptxas"] = {"registers": int(regs.group(1)) if regs else None,
                            "stack_bytes": int(info.group(1)) if info else None,
                            "spill_store_bytes": int(info.group(2)) if info else None,
                            "spill_load_bytes": int(info.group(3)) if info else None}
            try:
                host = self.host_check(b, problem)
                rec["host"] = host
                rec["ok"] = host["can_implement"] == "Success"
                if not rec["ok"]:
                    rec["why"] = "compiles, but can_implement says: " + host["can_implement"]
            except Exception as e:
                rec.update(ok=False, why=str(e)[:400])
        self.attempt_cache[key] = rec
        return rec

    def choose_cutlass(self, cfg, problem):
        """CUTLASS's build for a tcjit config: (build, [attempts])."""
        base = {"bm": cfg["bm"], "bn": cfg["bn"], "bk": cfg["bk"], "wm": cfg["wm"],
                "wn": cfg["wn"], "stages": cfg["stages"], "align_a": cfg["va"],
                "align_b": cfg["vb"],
                "stride_support": "kUnity" if problem["stride"] == 1 else "kStrided"}
        if cfg["va"] * 2 == 16 and cfg["vb"] * 2 == 16:  # 16-byte vectors: the optimized iterator
            candidates = [dict(base, iterator="kOptimized")]
        else:
            candidates = []
            for stages in sorted({cfg["stages"], 2}, reverse=True):
                candidates += [
                    # fixed channels: one access per filter tap, AccessSize == C
                    dict(base, stages=stages, iterator="kFixedChannels", align_a=problem["c"],
                         align_b=problem["c"]),
                    dict(base, stages=stages, iterator="kFewChannels"),
                    dict(base, stages=stages, iterator="kAnalytic"),
                ]
        attempts = []
        for b in candidates:
            rec = self.attempt(b, problem)
            attempts.append(rec)
            if rec["ok"]:
                return b, attempts
        return None, attempts

    def cutlass_compile(self, b, case_name):
        """nvcc -cubin of the source, a fresh process, reps times (once if over a minute)."""
        key = self.build_key(b)
        if key in self.cutlass_cache:
            return self.cutlass_cache[key]
        out_dir = self.build_dir(b)
        cubin = os.path.join(out_dir, "cutlass.cubin")
        cmd = [self.nvcc] + NVCC_FLAGS + ["-I" + self.include] + self.macros(b) + [SOURCE, "-o",
                                                                                  cubin]
        runs = []
        for _ in range(self.args.reps):
            runs.append(cutlass_build._timed(cmd))
            if runs[0] > SLOW_NVCC_MS:
                break
        result = {"command": "nvcc %s -I<nvidia-cutlass>/include %s bench/anchors/cutlass_conv.cu"
                             " -o X.cubin" % (" ".join(NVCC_FLAGS), " ".join(self.macros(b))),
                  "cubin": cubin, "cubin_bytes": os.path.getsize(cubin), "kernel": KERNEL,
                  "built_for": case_name,
                  "compile": {"process_ms": runs, "median_ms": median(runs), "reps": len(runs)}}
        self.cutlass_cache[key] = result
        return result

    # ---- SASS ---------------------------------------------------------------------------------
    @staticmethod
    def static(cubin, kernel):
        s = sass_stats.analyse(cubin, kernel)
        loop = s["main_loop"] or {}
        instrs = sass_stats.disassemble(cubin)[kernel]
        local = {"STL": 0, "LDL": 0}
        loop_local = {"STL": 0, "LDL": 0}
        lo = int(loop["start"], 16) if loop else -1
        hi = int(loop["end"], 16) if loop else -2
        for addr, op, _, _ in instrs:
            base = sass_stats.base_opcode(op)
            if base in local:
                local[base] += 1
                if lo <= addr <= hi:
                    loop_local[base] += 1
        return {"registers": s["resources"].get("REG"), "stack": s["resources"].get("STACK"),
                "local": s["resources"].get("LOCAL"), "calls": s["calls"],
                "kernel_instructions": s["instructions"], "kernel_counts": s["kernel_counts"],
                "local_memory_instructions": local,
                "main_loop_local_memory_instructions": loop_local,
                "main_loop": loop, "instructions_per_mma": loop.get("instructions_per_mma")}

    # ---- one case -----------------------------------------------------------------------------
    def case(self, name, spec, kind, note="", tcjit_config=None, cutlass_build_=None):
        """tcjit's kernel of `spec` (its default config, or tcjit_config) against CUTLASS's (the
        build chosen for that config, or cutlass_build_)."""
        log("%s: tcjit" % name)
        problem = problem_of(spec)
        tc = self.tcjit_compile(spec, tcjit_config)
        cfg = parse_config(tc["config"])
        result = {"name": name, "kind": kind, "spec": spec, "problem": problem, "note": note,
                  "tcjit": {k: v for k, v in tc.items() if k not in ("cubin", "output")}}
        result["tcjit"]["static"] = self.static(tc["cubin"], tc["kernel"])
        if cfg["split_k"] != 1 or "pc" in tc["config"]:
            self.unmeasured.append("%s: tcjit's config %s has split-K or channel padding; the "
                                   "CUTLASS anchor builds neither" % (name, tc["config"]))
            return result
        log("%s: cutlass for %s" % (name, tc["config"]))
        if cutlass_build_ is None:
            b, attempts = self.choose_cutlass(cfg, problem)
        else:
            b, attempts = cutlass_build_, [self.attempt(cutlass_build_, problem)]
            if not attempts[0]["ok"]:
                b = None
        result["cutlass_attempts"] = attempts
        if b is None:
            self.unmeasured.append("%s: no CUTLASS build at %s: %s" % (
                name, tc["config"], "; ".join("%s s%d a%d/%d: %s" % (
                    a["iterator"], a["stages"], a["align_a"], a["align_b"], a["why"])
                    for a in attempts)))
            return result
        cu = self.cutlass_compile(b, name)
        chosen = attempts[-1]
        c = {k: v for k, v in cu.items() if k != "cubin"}
        c.update(build=b, ptxas=chosen["ptxas"], host=chosen["host"],
                 threads=chosen["host"]["block"][0], shared_bytes=chosen["host"]["shared"])
        c["static"] = self.static(cu["cubin"], KERNEL)
        c["version"] = cutlass_build.cutlass_version()
        result["cutlass"] = c
        t, s = result["tcjit"], c
        result["ratios_tcjit_over_cutlass"] = {
            "compile_ms": ratio(t["compile"]["median_ms"], s["compile"]["median_ms"]),
            "registers": ratio(t["static"]["registers"], s["static"]["registers"]),
            "main_loop_instructions_per_mma": ratio(t["static"]["instructions_per_mma"],
                                                    s["static"]["instructions_per_mma"]),
            "kernel_instructions": ratio(t["static"]["kernel_instructions"],
                                         s["static"]["kernel_instructions"]),
            "cubin_bytes": ratio(t["cubin_bytes"], s["cubin_bytes"]),
        }
        return result

    def layer_cases(self, name, spec):
        cases = [self.case(name, spec, "layer")]
        main = cases[0]
        problem = problem_of(spec)
        if problem["c"] % 8 == 0:
            return cases
        tcfg = parse_config(main["tcjit"]["config"])
        # The padded row below is measured even where CUTLASS builds nothing at tcjit's config.
        b = main["cutlass"]["build"] if "cutlass" in main else {
            "stages": tcfg["stages"],
            "stride_support": "kUnity" if problem["stride"] == 1 else "kStrided"}
        # Same stages as CUTLASS's build, when CUTLASS had to drop to fewer.
        if "cutlass" in main and b["stages"] != tcfg["stages"]:
            words = main["tcjit"]["config"].split()
            words[2] = "s%d" % b["stages"]
            cases.append(self.case(
                name + ", both %d stages" % b["stages"], spec, "extra",
                "tcjit's default config at CUTLASS's stage count (--config)",
                tcjit_config=" ".join(words), cutlass_build_=b))
        # The config tcjit's runtime ships, when the CLI's default is not it (spill fallback).
        shipped = self.tcjit_shipped_config(spec)
        main["tcjit"]["shipped"] = shipped
        if shipped and parse_config(shipped["config"]) != tcfg:
            cases.append(self.case(
                name + ", tcjit's shipped config", spec, "extra",
                "the config tcjit's runtime compiles on a cache miss (%s)" % shipped["how"],
                tcjit_config=shipped["config"]))
        # c padded to 4 (8 above 4): what CUTLASS's SM80 kernel generator offers the stem
        # (kFixedChannels, channel counts 4 and 8), against tcjit's default for the padded spec.
        padded = 4 if problem["c"] <= 4 else 8
        pspec = re.sub(r"\bc=%d\b" % problem["c"], "c=%d" % padded, spec)
        pdefault = self.tcjit_compile(pspec)["config"]
        pcfg = parse_config(pdefault)
        pconfig, pnote = None, ""
        if pcfg["bk"] < 32:  # SM80's multistage mma needs two warp k-steps: a 32-wide K-tile
            words = pdefault.split()
            pnote = "; both at a 32-wide K-tile (tcjit's default is %s; CUTLASS builds no " \
                "%d-wide one)" % (words[0], pcfg["bk"])
            words[0] = "%dx%dx32" % (pcfg["bm"], pcfg["bn"])
            pconfig, pcfg["bk"] = " ".join(words), 32
        fixed = {"bm": pcfg["bm"], "bn": pcfg["bn"], "bk": pcfg["bk"], "wm": pcfg["wm"],
                 "wn": pcfg["wn"], "stages": pcfg["stages"], "align_a": padded,
                 "align_b": padded, "iterator": "kFixedChannels",
                 "stride_support": b["stride_support"]}
        cases.append(self.case(
            name.replace("C=%d" % problem["c"], "").strip() + " padded to C=%d" % padded, pspec,
            "extra", "c zero-padded to %d (x and filter): CUTLASS's kFixedChannels with one "
            "%d-byte access per tap%s" % (padded, 2 * padded, pnote), tcjit_config=pconfig,
            cutlass_build_=fixed))
        return cases

    def environment(self):
        def first_line(cmd):
            try:
                return subprocess.run(cmd, capture_output=True,
                                      text=True).stdout.strip().splitlines()[-1]
            except Exception as e:
                return "unavailable: %s" % e
        cuda = cutlass_build.cuda_home()
        return {"date": datetime.datetime.now().isoformat(timespec="seconds"),
                "host": platform.node(), "cpu": platform.processor() or platform.machine(),
                "cores": os.cpu_count(), "python": platform.python_version(),
                "git": first_line(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]),
                "tcjit": first_line([self.tcjit, "--version"]),
                "tcjit_binary_sha256": sha256(self.tcjit),
                "tcjit_binary_mtime": datetime.datetime.fromtimestamp(
                    os.path.getmtime(self.tcjit)).isoformat(timespec="seconds"),
                "ptxas": first_line([os.path.join(cuda, "bin", "ptxas"), "--version"]),
                "nvcc": first_line([os.path.join(cuda, "bin", "nvcc"), "--version"]),
                "cutlass": cutlass_build.cutlass_version(), "reps": self.args.reps,
                "load_average_start": os.getloadavg()[0]}


# ---- the report ----------------------------------------------------------------------------
def build_text(b):
    return "%s %dx%dx%d w%dx%d s%d align %d/%d %s" % (
        b["iterator"], b["bm"], b["bn"], b["bk"], b["wm"], b["wn"], b["stages"], b["align_a"],
        b["align_b"], b["stride_support"])


def render(result):
    env, cases = result["environment"], result["cases"]
    both = [c for c in cases if "cutlass" in c]
    md = ["# tcjit vs CUTLASS: ResNet-50 conv2d fprop — %s\n" % env["date"]]
    md.append(
        "Measured in one run on `%s` (%d cores), commit `%s` (tcjit binary %s, sha256 %s, built "
        "%s); CUTLASS %s (nvidia-cutlass headers), %s. No GPU: nothing here ran a kernel. "
        "Compile times are medians over fresh processes; the machine may be shared, so compare "
        "ratios within this run rather than absolute times across runs. Reproduce: "
        "`build/bench-venv/bin/python bench/conv_compare.py --reps %d`.\n" % (
            env["host"], env["cores"], env["git"], env["tcjit"], env["tcjit_binary_sha256"],
            env["tcjit_binary_mtime"], env["cutlass"], env["nvcc"], env["reps"]))
    if "load_average_start" in env:
        md.append("1-minute load average: %.2f at the start, %.2f at the end of the run.\n" % (
            env["load_average_start"], env["load_average_end"]))
    layers = [c for c in both if c["kind"] == "layer"]
    md.append("## Summary (medians over the %d layers, tcjit / CUTLASS)\n" % len(layers))

    def med(key):
        return median([c["ratios_tcjit_over_cutlass"][key] for c in layers
                       if c["ratios_tcjit_over_cutlass"][key] is not None])
    md.append("- compile, spec/source → cubin: tcjit takes **%s** CUTLASS's (nvcc) time." %
              fmt(med("compile_ms"), 3, "x"))
    md.append("  (CUTLASS's nvcc takes **%s** tcjit's.)" % fmt(median(
        [ratio(c["cutlass"]["compile"]["median_ms"], c["tcjit"]["compile"]["median_ms"])
         for c in layers]), 1, "x"))
    md.append("- registers: **%s**; main-loop SASS instructions per HMMA: **%s**." % (
        fmt(med("registers"), 2, "x"), fmt(med("main_loop_instructions_per_mma"), 2, "x")))
    for c in layers:
        b, t = c["cutlass"]["build"], parse_config(c["tcjit"]["config"])
        if (b["stages"], b["align_a"], b["align_b"]) != (t["stages"], t["va"], t["vb"]):
            md.append("- %s: CUTLASS builds no kernel at tcjit's %d stages and %d/%d-element "
                      "alignment; its nearest is `%s` (the builds tried are listed below). The "
                      "extra rows compare at equal stages, tcjit's shipped config, and C padded "
                      "for CUTLASS's kFixedChannels." % (c["name"], t["stages"], t["va"], t["vb"],
                                                         build_text(b)))
    md.append("")

    md.append("## Cases, configs and builds\n")
    md.append("tcjit: the config `tcjit compile` prints for the spec (its default) unless the "
              "case says otherwise. CUTLASS: `cutlass::conv::device::ImplicitGemmConvolution` of "
              "`kernel::DefaultConv2dFprop<half_t NHWC, half_t NHWC, half_t NHWC, float, "
              "OpClassTensorOp, Sm80, GemmShape<BM,BN,BK>, GemmShape<WM,WN,BK>, GemmShape<16,8,16>,"
              " LinearCombination<half_t,8,float,float>, GemmIdentityThreadblockSwizzle<1>, STAGES,"
              " OpMultiplyAdd, ITERATOR, STRIDE_SUPPORT, ALIGN_A, ALIGN_B>` "
              "(`bench/anchors/cutlass_conv.cu`). CUTLASS's kernel takes every size at run time, "
              "so one build serves every layer with the same macros (then it is built and timed "
              "once); tcjit's kernel has every size but n built in.\n")
    rows = []
    for c in cases:
        cu = c.get("cutlass")
        rows.append([c["name"], "`%s`" % c["spec"], "`%s`" % c["tcjit"]["config"],
                     "`%s`" % build_text(cu["build"]) if cu else "— (no build)",
                     cu["host"]["can_implement"] if cu else "—",
                     "%s / %s" % (c["tcjit"]["threads"], cu["threads"] if cu else "—"),
                     "%s / %s" % (c["tcjit"]["ptxas"]["shared_bytes"] if c["tcjit"]["ptxas"]
                                  else "—", cu["shared_bytes"] if cu else "—")])
    md.append(table(["case", "spec", "tcjit config", "CUTLASS build (iterator tile warp stages "
                     "align A/B stride support)", "CUTLASS can_implement", "threads tcjit / "
                     "CUTLASS", "shared B tcjit / CUTLASS"], rows))
    for c in cases:
        if c["note"]:
            md.append("- %s: %s." % (c["name"], c["note"]))
        shipped = c["tcjit"].get("shipped")
        if shipped and parse_config(shipped["config"]) == parse_config(c["tcjit"]["config"]):
            md.append("- %s: tcjit's runtime (cache miss) ships this config: %s." % (
                c["name"], shipped["how"]))
    md.append("")

    md.append("## 1. Compile latency (ms, median of fresh processes)\n")
    md.append("tcjit: wall time of `tcjit compile SPEC --cubin -o X.cubin` (parse, LLVM, PTX, "
              "ptxas; its own stage times: `emit_ptx`, `ptxas`). CUTLASS: wall time of `nvcc "
              "-cubin -arch=sm_80 -O3 -std=c++17 -w -I<cutlass> -D... cutlass_conv.cu`.\n")
    rows = []
    for c in both:
        t, cu = c["tcjit"], c["cutlass"]
        st = t["compile"]["stages_ms"]
        rows.append([c["name"], fmt(t["compile"]["median_ms"]), t["compile"]["reps"],
                     fmt(st.get("emit_ptx")), fmt(st.get("ptxas")),
                     fmt(cu["compile"]["median_ms"]) + (
                         "" if cu["built_for"] == c["name"] else
                         " (the build of %s)" % cu["built_for"]), cu["compile"]["reps"],
                     fmt(c["ratios_tcjit_over_cutlass"]["compile_ms"], 3, "x"),
                     fmt(ratio(cu["compile"]["median_ms"], t["compile"]["median_ms"]), 1, "x")])
    md.append(table(["case", "tcjit", "reps", "tcjit emit_ptx", "tcjit ptxas", "CUTLASS nvcc",
                     "reps", "tcjit / CUTLASS", "CUTLASS / tcjit"], rows))

    md.append("## 2. SASS of each cubin\n")
    md.append("Registers and local memory from `cuobjdump --dump-resource-usage`; spills from "
              "ptxas (tcjit: its `compile` output; CUTLASS: one extra, untimed `nvcc -Xptxas -v` "
              "build of the same source); STL/LDL counted in the SASS; the main loop and its "
              "instructions per HMMA by `bench/sass_stats.py` (the backward branch range with the "
              "most HMMA; every instruction but NOP over the HMMA in it).\n")
    rows = []
    for c in both:
        t, cu = c["tcjit"], c["cutlass"]
        for who, a, ptx in (("tcjit", t, t["ptxas"] or {}), ("CUTLASS", cu, cu["ptxas"] or {})):
            s = a["static"]
            loop = s["main_loop"] or {}
            rows.append([c["name"], who, s["registers"],
                         "%s / %s" % (ptx.get("spill_store_bytes"), ptx.get("spill_load_bytes")),
                         s["stack"], "%d / %d" % (s["local_memory_instructions"]["STL"],
                                                  s["local_memory_instructions"]["LDL"]),
                         s["kernel_instructions"], a["cubin_bytes"], loop.get("instructions"),
                         loop.get("math"), fmt(s["instructions_per_mma"], 2),
                         "%d / %d" % (s["main_loop_local_memory_instructions"]["STL"],
                                      s["main_loop_local_memory_instructions"]["LDL"])])
        r = c["ratios_tcjit_over_cutlass"]
        rows.append([c["name"], "**tcjit / CUTLASS**", fmt(r["registers"], 2, "x"), "", "", "",
                     fmt(r["kernel_instructions"], 2, "x"), fmt(r["cubin_bytes"], 2, "x"), "", "",
                     "**%s**" % fmt(r["main_loop_instructions_per_mma"], 2, "x"), ""])
    md.append(table(["case", "kernel", "registers", "spill B store / load", "stack B",
                     "STL / LDL", "SASS instructions", "cubin B", "main loop instructions",
                     "main loop HMMA", "instructions per HMMA", "main loop STL / LDL"], rows))
    md.append("Main-loop instruction classes (counts in the loop):\n")
    rows = []
    for c in both:
        for who, a in (("tcjit", c["tcjit"]), ("CUTLASS", c["cutlass"])):
            n = (a["static"]["main_loop"] or {}).get("counts", {})
            rows.append([c["name"], who] + [n.get(k, "—") for k in (
                "mma", "ldsm", "ldgsts", "ldg", "sts", "lds", "bar", "int_arith", "move",
                "branch")])
    md.append(table(["case", "kernel", "HMMA", "LDSM", "LDGSTS", "LDG", "STS", "LDS", "BAR",
                     "int arith", "moves", "branches"], rows))

    md.append("## CUTLASS builds tried\n")
    md.append("For a config whose vectors are 16 bytes, kOptimized. Otherwise, in order, at "
              "tcjit's stages then at 2: kFixedChannels (AccessSize = C), kFewChannels, "
              "kAnalytic, at tcjit's alignment; the first that compiles for sm_80 and whose "
              "`can_implement` accepts the layer is taken.\n")
    rows = []
    for c in cases:
        for a in c.get("cutlass_attempts", []):
            rows.append([c["name"], a["iterator"], a["stages"], "%d/%d" % (a["align_a"],
                                                                            a["align_b"]),
                         "yes" if a["ok"] else "no", a.get("why", "").replace("|", "/")])
    md.append(table(["case", "iterator", "stages", "align A/B", "taken", "why not"], rows))

    md.append("## What could not be measured, and why\n")
    md += ["- " + u for u in result["unmeasured"]] or ["- nothing"]
    md.append("\nThe whole run took %.0f s.\n" % result["seconds"])
    return "\n".join(md)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--reps", type=int, default=3, help="fresh-process compiles per measure")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--keep-work", action="store_true",
                   help="keep the scratch folder of cubins and CUTLASS builds")
    p.add_argument("--render", metavar="JSON",
                   help="only rewrite the Markdown beside an earlier run's JSON")
    args = p.parse_args()
    if args.render:
        with open(args.render) as f:
            result = json.load(f)
        path = os.path.splitext(args.render)[0] + ".md"
        with open(path, "w") as f:
            f.write(render(result))
        print(path)
        return
    if args.reps < 1:
        p.error("--reps must be >= 1")
    bench = ConvBench(args)
    started = time.time()
    env = bench.environment()
    cases = []
    for name, spec in LAYERS:
        try:
            cases += bench.layer_cases(name, spec)
        except Exception as e:
            import traceback
            traceback.print_exc()
            bench.unmeasured.append("%s: %s" % (name, str(e)[:500]))
    bench.unmeasured += [
        "run time, TFLOP/s and profiler counters: there is no GPU on this machine; nothing was "
        "launched",
        "emulator counters (either kernel): `tcjit_bench emu` runs GEMM specs only (its "
        "reference, inputs and CUTLASS Params program are the GEMM's); the conv anchor's host "
        "program prints its Params bytes for such a launch, but nothing drives it yet",
        "CUTLASS through NVRTC, and tcjit's in-process (warm) compile: this comparison times "
        "fresh processes only (bench/run measures both for GEMMs)",
    ]
    env["load_average_end"] = os.getloadavg()[0]
    if sha256(bench.tcjit) != env["tcjit_binary_sha256"]:
        bench.unmeasured.append("build/tcjit changed during the run (rebuilt by someone): figures "
                                "may mix two tcjit builds")
    result = {"environment": env, "layers": [{"name": n, "spec": s} for n, s in LAYERS],
              "cases": cases, "unmeasured": bench.unmeasured, "seconds": time.time() - started}
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, datetime.date.today().isoformat() + "-conv")
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    with open(stem + ".md", "w") as f:
        f.write(render(result))
    log("wrote %s.json and %s.md" % (stem, stem))
    if args.keep_work:
        log("kept the cubins and builds in " + bench.work)
    else:
        shutil.rmtree(bench.work, ignore_errors=True)
    print(stem + ".md")


if __name__ == "__main__":
    main()
