"""bench/run's driver: tcjit against CUTLASS and Triton, side by side, in one run on this machine.

For each GEMM problem and dtype it compiles tcjit's kernel (as the runtime does on a cache miss)
and builds each anchor with the same CTA tile, warp tile (CUTLASS), warps, stages and alignment,
then measures: (1) compile latency, cold and warm; (2) static kernel quality from the shipped
cubin (cuobjdump, nvdisasm: registers, spills, main-loop SASS); (3) each kernel's PTX on tcjit's
emulator with the same inputs, checked against the CPU reference; (4) the tuner's model's
predicted TFLOP/s on A100 and H100; (5) tcjit's own latencies and emulator speed. Writes
bench/results/<date>.json; bench/report.py turns it into Markdown and charts.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "anchors"))

import sass_stats  # noqa: E402
import cutlass_build  # noqa: E402

DTYPES = {
    "f16": {"spec": "a=f16:row b=f16:col c=f16:row acc=f32", "mma": "16x8x16", "bytes": "2,2,2"},
    "bf16": {"spec": "a=bf16:row b=bf16:col c=bf16:row acc=f32", "mma": "16x8x16",
             "bytes": "2,2,2"},
    "tf32": {"spec": "a=f32:row b=f32:col c=f32:row acc=f32 math=tf32", "mma": "16x8x8",
             "bytes": "4,4,4"},
    "s8": {"spec": "a=s8:row b=s8:col c=s32:row acc=s32", "mma": "16x8x32", "bytes": "1,1,4"},
    # Types Triton has no path for (no int4 or 2:4-sparse dot): tcjit and CUTLASS only, and not in
    # the default run (--dtypes s4,sparse_f16). CUTLASS's Params of these kernels (packed int4, the
    # sparse metadata) are not given to the emulator here: tests/cutlass runs them there.
    "s4": {"spec": "a=s4:row b=s4:col c=s32:row acc=s32", "mma": "16x8x64", "bytes": "0.5,0.5,4",
           "triton": False, "emulate_anchors": False, "predict": False},
    # tcjit's default K-tile for it is 32, one mma.sp per warp per K-tile; CUTLASS's SparseGemm
    # refuses that ("requires at least two warp-level GEMM operations", mma_sparse_base.h): both
    # are built at K-tile 64.
    "sparse_f16": {"spec": "a=f16:row b=f16:col c=f16:row acc=f32 sparse=2:4", "mma": "16x8x32",
                   "bytes": "2,2,2", "triton": False, "emulate_anchors": False, "predict": False,
                   "config": "128x128x64 w64x32 s3 k1 g1 va8 vb8"},
    # mma.sp m16n8k128 (4:8 by pairs); two warp-level mma.sp per K-tile for SparseGemm: K-tile 256
    "sparse_s4": {"spec": "a=s4:row b=s4:col c=s32:row acc=s32 sparse=2:4", "mma": "16x8x128",
                  "bytes": "0.5,0.5,4", "triton": False, "emulate_anchors": False,
                  "predict": False, "config": "128x128x256 w64x32 s3 k1 g1 va32 vb32"},
}
DEFAULT_DTYPES = ["f16", "bf16", "tf32", "s8"]
# name, M, N, K, run on the emulator (4096^3 is ~64x the 1024^3 run: minutes per kernel there)
PROBLEMS = [
    ("4096^3", 4096, 4096, 4096, False),
    ("1024^3", 1024, 1024, 1024, True),
    ("skinny 16x4096x4096", 16, 4096, 4096, True),
    ("odd 1000^3", 1000, 1000, 1000, True),
]
QUICK_PROBLEMS = [PROBLEMS[1]]
QUICK_DTYPES = ["f16"]
ANCHORS = ("tcjit", "cutlass", "triton")


def log(msg):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def median(values):
    return statistics.median(values) if values else None


def run_json(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("'%s' failed (%d):\n%s" % (" ".join(cmd)[:300], r.returncode,
                                                       r.stderr[-3000:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def parse_config(text):
    """'128x128x32 w64x64 s3 k1 g1 va8 vb8' -> dict."""
    m = re.match(r"(\d+)x(\d+)x(\d+) w(\d+)x(\d+) s(\d+) k(\d+) g(\d+) va(\d+) vb(\d+)", text)
    if not m:
        raise ValueError("unexpected config text: " + text)
    keys = ("bm", "bn", "bk", "wm", "wn", "stages", "split_k", "group", "va", "vb")
    return dict(zip(keys, map(int, m.groups())))


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.tool = os.path.join(self.build, "bench", "tcjit_bench")
        self.tcjit = os.path.join(self.build, "tcjit")
        self.work = tempfile.mkdtemp(prefix="tcjit-bench-")
        self.env = dict(os.environ)
        # Every anchor's cubin comes from the same ptxas: the toolkit's (Triton bundles its own).
        self.env["TRITON_PTXAS_PATH"] = os.path.join(cutlass_build.cuda_home(), "bin", "ptxas")
        self.env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
        self.cutlass_cache = {}
        self.unmeasured = []

    # ---- tcjit ------------------------------------------------------------------------------
    def tcjit_compile(self, spec, out_dir, config=None):
        reps = self.args.reps
        forced = ["--config", config] if config else []
        warm = run_json([self.tool, "compile", "--spec", spec, "--reps", str(reps + 1), "--out",
                         out_dir] + forced)
        cold_runs, cold_wall = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            r = run_json([self.tool, "compile", "--spec", spec, "--reps", "1"] + forced)
            cold_wall.append((time.perf_counter() - t0) * 1000.0)
            cold_runs.append(r["runs"][0])
        steady = warm["runs"][1:]
        return {
            "config": warm["config"], "kernel": warm["kernel"], "ptx": warm["ptx"],
            "cubin": warm.get("cubin"), "threads": warm["threads"],
            "shared_bytes": warm["shared_bytes"], "recorded_registers": warm["recorded_registers"],
            "recorded_spill_bytes": warm["recorded_spill_bytes"],
            "compile": {
                "warm": {k: median([r[k] for r in steady])
                         for k in ("spec_to_ptx_ms", "ptx_to_cubin_ms", "total_ms")},
                "cold": {k: median([r[k] for r in cold_runs])
                         for k in ("spec_to_ptx_ms", "ptx_to_cubin_ms", "total_ms")},
                "cold_process_ms": median(cold_wall),
                "stages_warm_ms": {k: median([r["stages_ms"][k] for r in steady])
                                   for k in steady[0]["stages_ms"]},
                "reps": reps,
            },
        }

    # ---- Triton -----------------------------------------------------------------------------
    def triton_compile(self, dtype, cfg, m, n, k, warps, out_dir):
        script = os.path.join(HERE, "anchors", "triton_gemm.py")
        base = [sys.executable, script, "--dtype", dtype, "--bm", str(cfg["bm"]), "--bn",
                str(cfg["bn"]), "--bk", str(cfg["bk"]), "--warps", str(warps), "--stages",
                str(cfg["stages"]), "--m", str(m), "--n", str(n), "--k", str(k), "--lda", str(k),
                "--ldb", str(k), "--ldc", str(n)]
        reps = self.args.reps
        warm = run_json(base + ["--reps", str(reps + 1), "--out", out_dir], env=self.env)
        cold, cold_wall = [], []
        cold_dir = os.path.join(out_dir, "cold")
        for _ in range(reps):
            t0 = time.perf_counter()
            r = run_json(base + ["--reps", "1", "--out", cold_dir], env=self.env)
            cold_wall.append((time.perf_counter() - t0) * 1000.0)
            cold.append(r["runs"][0])

        def split(run):
            st = run["stages_ms"]
            to_cubin = st.get("cubin", 0.0)
            return {"spec_to_ptx_ms": run["total_ms"] - to_cubin, "ptx_to_cubin_ms": to_cubin,
                    "total_ms": run["total_ms"]}

        steady = [split(r) for r in warm["runs"][1:]]
        colds = [split(r) for r in cold]
        keys = ("spec_to_ptx_ms", "ptx_to_cubin_ms", "total_ms")
        return {
            "kernel": warm["name"], "ptx": os.path.join(out_dir, "triton.ptx"),
            "cubin": os.path.join(out_dir, "triton.cubin"), "threads": 32 * warps,
            "shared_bytes": warm["shared"], "version": warm["triton_version"],
            "compile": {
                "warm": {k_: median([r[k_] for r in steady]) for k_ in keys},
                "cold": {k_: median([r[k_] for r in colds]) for k_ in keys},
                "cold_process_ms": median(cold_wall),
                "stages_warm_ms": {s: median([r["stages_ms"].get(s, 0) for r in warm["runs"][1:]])
                                   for s in warm["runs"][1]["stages_ms"]},
                "reps": reps,
            },
        }

    # ---- CUTLASS ----------------------------------------------------------------------------
    def cutlass_compile(self, dtype, cfg, out_dir):
        key = (dtype, cfg["bm"], cfg["bn"], cfg["bk"], cfg["wm"], cfg["wn"], cfg["stages"],
               cfg["va"], cfg["vb"])
        if key in self.cutlass_cache:
            return self.cutlass_cache[key]
        reps = self.args.reps
        nv = cutlass_build.build_nvcc(dtype, cfg, out_dir, reps)
        r = nv["runs"]
        if DTYPES[dtype].get("emulate_anchors", True) is False:
            return self.cutlass_nvcc_only(dtype, nv, key)
        rt = cutlass_build.build_nvrtc(dtype, cfg, reps + 1)
        params = cutlass_build.build_params_program(dtype, cfg, out_dir)
        shape = run_json([params, "1024", "1024", "1024", "0", "0", "0", "0"])
        result = {
            "kernel": nv["kernel"], "ptx": nv["ptx"], "cubin": nv["cubin"],
            "params_program": params, "threads": shape["block"][0],
            "shared_bytes": shape["shared"], "version": cutlass_build.cutlass_version(),
            "compile": {
                # nvcc has no warm state: every invocation is a fresh process.
                "cold": {"spec_to_ptx_ms": median(r["source_to_ptx_ms"]),
                         "ptx_to_cubin_ms": median(r["ptx_to_cubin_ms"]),
                         "total_ms": median(r["source_to_cubin_ms"])},
                "nvrtc_cold": {"spec_to_ptx_ms": rt["runs"]["source_to_ptx_ms"][0],
                               "total_ms": rt["runs"]["source_to_cubin_ms"][0]},
                "nvrtc_warm": {"spec_to_ptx_ms": median(rt["runs"]["source_to_ptx_ms"][1:]),
                               "total_ms": median(rt["runs"]["source_to_cubin_ms"][1:])},
                "nvrtc_version": rt["version"],
                "reps": reps,
            },
        }
        self.cutlass_cache[key] = result
        return result

    def cutlass_nvcc_only(self, dtype, nv, key):
        """The nvcc build alone (the s4 and sparse anchors): no NVRTC timing, no Params program."""
        r = nv["runs"]
        result = {
            "kernel": nv["kernel"], "ptx": nv["ptx"], "cubin": nv["cubin"], "threads": None,
            "shared_bytes": None, "version": cutlass_build.cutlass_version(),
            "compile": {"cold": {"spec_to_ptx_ms": median(r["source_to_ptx_ms"]),
                                 "ptx_to_cubin_ms": median(r["ptx_to_cubin_ms"]),
                                 "total_ms": median(r["source_to_cubin_ms"])},
                        "reps": self.args.reps},
        }
        self.unmeasured.append("CUTLASS %s: NVRTC compile time and the emulator run not measured "
                               "here (tests/cutlass runs this kernel on the emulator)" % dtype)
        self.cutlass_cache[key] = result
        return result

    # ---- measures 2-4 -----------------------------------------------------------------------
    def static(self, entry):
        s = sass_stats.analyse(entry["cubin"], entry["kernel"])
        loop = s["main_loop"] or {}
        return {"registers": s["resources"].get("REG"), "stack": s["resources"].get("STACK"),
                "local": s["resources"].get("LOCAL"), "calls": s["calls"],
                "kernel_instructions": s["instructions"],
                "main_loop": loop, "instructions_per_mma": loop.get("instructions_per_mma")}

    def emulate(self, name, spec, entry, cfg, warps, m, n):
        cmd = [self.tool, "emu", "--spec", spec, "--abi", name]
        if name == "tcjit":
            cmd += ["--config", entry["config"]]
        else:
            cmd += ["--ptx", entry["ptx"], "--kernel", entry["kernel"]]
        if name == "triton":
            grid = "%d,%d" % (-(-m // cfg["bm"]), -(-n // cfg["bn"]))
            cmd += ["--grid", grid, "--block", str(32 * warps), "--shared",
                    str(entry["shared_bytes"])]
        if name == "cutlass":
            cmd += ["--params-program", entry["params_program"]]
        r = run_json(cmd)
        c = r["counters"]
        with open(entry["ptx"]) as f:
            rounds_tf32 = "cvt.rna.tf32.f32" in f.read()
        return {"ok": r["report"]["ok"], "ptx_rounds_tf32": rounds_tf32, "mismatches": r["report"]["mismatches"],
                "max_error_over_tolerance": r["report"]["max_error_over_tolerance"],
                "device_ms": r["device_ms"], "warp_instructions": c["warp_instructions"],
                "mma": c["mma_instructions"],
                "instructions_per_mma": c["warp_instructions"] / max(1, c["mma_instructions"]),
                "bank_conflicts": c["shared_bank_conflicts"],
                "global_load_efficiency": c["global_load_efficiency"],
                "global_store_efficiency": c["global_store_efficiency"],
                "warp_instructions_per_s": c["warp_instructions"] / (r["device_ms"] / 1000.0),
                "counters": c}

    def predict(self, dtype, cfg, entry, static, m, n, k):
        out = {}
        if DTYPES[dtype].get("predict", True) is False:
            self.unmeasured.append("predicted TFLOP/s %s: not asked of the model for this type "
                                   "in this harness" % dtype)
            return out
        if not static.get("instructions_per_mma") or not static.get("registers"):
            return out
        for gpu in ("a100", "h100"):
            out[gpu] = run_json([
                self.tool, "predict", "--gpu", gpu, "--math", dtype,
                "--tile", "%dx%dx%d" % (cfg["bm"], cfg["bn"], cfg["bk"]),
                "--mma", DTYPES[dtype]["mma"], "--bytes", DTYPES[dtype]["bytes"],
                "--threads", str(entry["threads"]), "--registers", str(static["registers"]),
                "--shared", str(entry["shared_bytes"]),
                "--ipm", str(static["instructions_per_mma"]),
                "--split-k", str(cfg["split_k"]), "--m", str(m), "--n", str(n), "--k", str(k)])
        return out

    # ---- one problem x dtype ------------------------------------------------------------------
    def case(self, pname, m, n, k, emulate, dtype):
        spec = "gemm m=%d n=%d k=%d %s" % (m, n, k, DTYPES[dtype]["spec"])
        case_dir = os.path.join(self.work, re.sub(r"\W+", "_", pname) + "_" + dtype)
        log("%s %s: tcjit" % (pname, dtype))
        result = {"problem": pname, "m": m, "n": n, "k": k, "dtype": dtype, "spec": spec,
                  "anchors": {}}
        tc = self.tcjit_compile(spec, os.path.join(case_dir, "tcjit"), DTYPES[dtype].get("config"))
        cfg = parse_config(tc["config"])
        warps = tc["threads"] // 32
        result["config"] = tc["config"]
        entries = {"tcjit": tc}
        log("%s %s: cutlass (%s)" % (pname, dtype, tc["config"]))
        try:
            entries["cutlass"] = self.cutlass_compile(dtype, cfg, os.path.join(case_dir, "cutlass"))
        except Exception as e:  # an anchor that does not build is named, with the reason
            self.unmeasured.append("CUTLASS %s %s: %s" % (pname, dtype, str(e)[:500]))
        log("%s %s: triton" % (pname, dtype))
        if DTYPES[dtype].get("triton", True) is False:
            self.unmeasured.append("Triton %s %s: skipped, Triton has no %s path" %
                                   (pname, dtype, dtype))
        else:
            try:
                entries["triton"] = self.triton_compile(dtype, cfg, m, n, k, warps,
                                                        os.path.join(case_dir, "triton"))
            except Exception as e:
                self.unmeasured.append("Triton %s %s: %s" % (pname, dtype, str(e)[:500]))
        for name, entry in entries.items():
            a = {"compile": entry["compile"], "threads": entry["threads"],
                 "shared_bytes": entry["shared_bytes"]}
            if "version" in entry:
                a["version"] = entry["version"]
            if name == "tcjit":
                a["recorded_registers"] = entry["recorded_registers"]
                a["recorded_spill_bytes"] = entry["recorded_spill_bytes"]
            try:
                a["static"] = self.static(entry)
                a["predicted"] = self.predict(dtype, cfg, entry, a["static"], m, n, k)
            except Exception as e:
                self.unmeasured.append("static %s %s %s: %s" % (name, pname, dtype, str(e)[:300]))
            if emulate and (name == "tcjit" or DTYPES[dtype].get("emulate_anchors", True)):
                log("%s %s: %s on the emulator" % (pname, dtype, name))
                try:
                    a["emulator"] = self.emulate(name, spec, entry, cfg, warps, m, n)
                except Exception as e:
                    self.unmeasured.append("emulator %s %s %s: %s" % (name, pname, dtype,
                                                                       str(e)[:500]))
            result["anchors"][name] = a
        return result

    # ---- measure 5: tcjit's own -------------------------------------------------------------
    def own(self):
        out = {}
        log("tcjit: database lookup latency")
        bench_db = os.path.join(self.build, "bench", "bench_db")
        r = subprocess.run([bench_db, "--benchmark_format=json", "--benchmark_min_time=0.2"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            out["db_lookup_ns"] = {b["name"]: b["real_time"] for b in json.loads(r.stdout)["benchmarks"]
                                   if b.get("time_unit") == "ns"}
        else:
            self.unmeasured.append("bench_db failed: " + r.stderr[-300:])
        db = os.path.join(self.work, "own.db")
        spec = "gemm m=64 n=64 k=64 " + DTYPES["f16"]["spec"]
        run = subprocess.run([self.tcjit, "run", spec, "--db", db, "--device", "emu"],
                             capture_output=True, text=True)
        key = re.search(r"key:\s+([0-9a-f]{16})", run.stdout)
        if run.returncode == 0 and key:
            walls = []
            for _ in range(max(5, self.args.reps)):
                t0 = time.perf_counter()
                subprocess.run([self.tcjit, "db", "show", key.group(1), "--db", db],
                               capture_output=True, check=True)
                walls.append((time.perf_counter() - t0) * 1000.0)
            out["db_show_fresh_process_ms"] = median(walls)
        else:
            self.unmeasured.append("tcjit run for the database latency failed: " + run.stderr[-300:])
        log("tcjit: emulator speed by instruction mix")
        # Sizes that run for 0.1-2 s, so that module load and copies do not dominate.
        mixes = [("f32 SIMT", "gemm m=512 n=512 k=512 a=f32:row b=f32:col c=f32:row acc=f32 math=f32")]
        for dtype in (QUICK_DTYPES if self.args.quick else DEFAULT_DTYPES):
            mixes.append((dtype + " mma", "gemm m=1024 n=1024 k=1024 " + DTYPES[dtype]["spec"]))
        mixes.append(("f64 mma", "gemm m=256 n=256 k=256 a=f64:row b=f64:col c=f64:row acc=f64"))
        out["emulator_speed"] = {}
        for name, spec in mixes:
            r = run_json([self.tool, "emu", "--spec", spec, "--abi", "tcjit"])
            out["emulator_speed"][name] = {
                "spec": spec, "warp_instructions": r["counters"]["warp_instructions"],
                "mma": r["counters"]["mma_instructions"],
                "device_ms": r["device_ms"], "ok": r["report"]["ok"],
                "warp_instructions_per_s":
                    r["counters"]["warp_instructions"] / (r["device_ms"] / 1000.0)}
        self.unmeasured.append("tuner candidates per second: not part of this run (`tcjit tune` "
                               "prints its own time per problem; README, Tuning)")
        self.unmeasured.append("tcjit's NVRTC backend: not written yet; only the LLVM backend is "
                               "measured")
        self.unmeasured.append("convolution layers: measured by bench/conv_compare.py against "
                               "CUTLASS's implicit-GEMM convolutions (bench/results/*-conv.md)")
        return out

    def environment(self):
        def first_line(cmd):
            try:
                return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[-1]
            except Exception as e:
                return "unavailable: %s" % e
        cuda = cutlass_build.cuda_home()
        try:
            import triton
            triton_version = triton.__version__
        except ImportError:
            triton_version = None  # not needed by the s4 / sparse cases
        return {"date": datetime.datetime.now().isoformat(timespec="seconds"),
                "host": platform.node(), "cpu": platform.processor() or platform.machine(),
                "cores": os.cpu_count(), "python": platform.python_version(),
                "git": first_line(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]),
                "ptxas": first_line([os.path.join(cuda, "bin", "ptxas"), "--version"]),
                "nvcc": first_line([os.path.join(cuda, "bin", "nvcc"), "--version"]),
                "triton": triton_version, "cutlass": cutlass_build.cutlass_version(),
                "quick": self.args.quick, "reps": self.args.reps}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true", help="one problem (1024^3 f16) per measure")
    p.add_argument("--reps", type=int, default=5, help="repetitions per compile measure (>= 5)")
    p.add_argument("--dtypes", help="comma-separated dtypes (default f16,bf16,tf32,s8; also s4, "
                   "sparse_f16, sparse_s4); with --quick, the 1024^3 problem only")
    p.add_argument("--no-own", action="store_true",
                   help="skip measure 5 (tcjit's own database and emulator latencies)")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--keep-work", action="store_true",
                   help="keep the scratch folder of PTX, cubins and anchors' builds")
    args = p.parse_args()
    if args.reps < 1:
        p.error("--reps must be >= 1")
    bench = Bench(args)
    started = time.time()
    problems = QUICK_PROBLEMS if args.quick else PROBLEMS
    dtypes = QUICK_DTYPES if args.quick else DEFAULT_DTYPES
    if args.dtypes:
        dtypes = args.dtypes.split(",")
        unknown = [d for d in dtypes if d not in DTYPES]
        if unknown:
            p.error("unknown dtype(s) %s; known: %s" % (",".join(unknown), ",".join(DTYPES)))
    cases = []
    for pname, m, n, k, emulate in problems:
        for dtype in dtypes:
            try:
                cases.append(bench.case(pname, m, n, k, emulate, dtype))
            except Exception as e:
                traceback.print_exc()
                bench.unmeasured.append("%s %s: %s" % (pname, dtype, str(e)[:500]))
    own = {} if args.no_own else bench.own()
    if args.no_own:
        bench.unmeasured.append("tcjit's own latencies: skipped (--no-own)")
    result = {"environment": bench.environment(), "cases": cases, "tcjit_own": own,
              "unmeasured": list(dict.fromkeys(bench.unmeasured)), "seconds": time.time() - started}
    os.makedirs(args.out, exist_ok=True)
    stem = datetime.date.today().isoformat() + ("-quick" if args.quick else "")
    if args.dtypes:
        stem += "-" + args.dtypes.replace(",", "-")
    path = os.path.join(args.out, stem + ".json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    log("wrote " + path)
    if args.keep_work:
        log("kept the PTX, cubins and builds in " + bench.work)
    else:
        shutil.rmtree(bench.work, ignore_errors=True)
    print(path)


if __name__ == "__main__":
    main()
