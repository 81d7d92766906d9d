"""Tests of bench/gpu (the script) and bench/gpu_report.py, run by ctest (label bench):

  NoGpu        this machine has no GPU driver: one line, exit 0, nothing under --out (the real
               tcjit and, when built, the real tcjit_gpu_bench; and a tool that exits 4)
  Arguments    command-line errors exit 2 and write nothing
  Report       the report of a synthetic results JSON with known figures: ratios, % of peak,
               every failure, what was not measured, a JSON copy; a malformed JSON is refused
  FakeDriver   the real tcjit on the fake libcuda: the quick matrix's real JSON read case by case
  ToolJson     the adapter of tcjit_gpu_bench's JSON: normalized, wrong shapes named
  Matrix       the device matrix covers every dtype, conv pass, groups, depthwise, split-K and
               epilogue (its quick subset too), and tcjit takes every spec and forced config
  TorchColumn  the torch column's FLOP counts and spread of repetitions
  FakeGpuRun   a whole run from a bundle-shaped folder whose bin/ holds fakes of tcjit,
               tcjit_gpu_bench and test_gpu: both backends, --quick, a crashed process's cases
               rerun one by one, the failure listed with its spec and config, exit 3; an
               unreadable race JSON; SIGTERM mid-run (exit 130, what was measured reported);
               SIGKILL mid-run (its JSON so far is left, and gpu_report.py draws it)

Environment (set by tests/bench/CMakeLists.txt): TCJIT (the built tcjit), TCJIT_BUILD (the build
tree, for its tcjit_gpu_bench when built), TCJIT_FAKE_DRIVER_DIR (the folder of tests/cuda's fake
libcuda.so.1)."""

import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
GPU = os.path.join(SOURCE, "bench", "gpu")
REPORT = os.path.join(SOURCE, "bench", "gpu_report.py")


def run(cmd, **kw):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("LD_LIBRARY_PATH", None)  # no fake driver: this machine's real situation
    env.update(kw.pop("env", {}))
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, **kw)


def write_exe(path, body):
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"#!{sys.executable}\n" + textwrap.dedent(body))
    os.chmod(path, 0o755)


def tree(path):
    return sorted(os.path.relpath(os.path.join(d, f), path)
                  for d, _, files in os.walk(path) for f in files)


class Scratch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tcjit-bench-gpu-test.")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.home = os.path.join(self.tmp, "home")
        os.makedirs(self.home)
        self.env = {"HOME": self.home, "TCJIT_DB": os.path.join(self.home, "k.db"),
                    "XDG_CACHE_HOME": os.path.join(self.home, "cache")}


class NoGpu(Scratch):
    def check_one_line(self, args, out):
        p = run([sys.executable, GPU] + args + ["--out", out], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(len(lines), 1, p.stdout)
        self.assertRegex(lines[0], r"^bench/gpu: no GPU here \(.+\); nothing measured$")
        self.assertEqual(p.stderr, "")
        return lines[0]

    def test_real_machine_prints_one_line_and_writes_nothing(self):
        tcjit = os.environ["TCJIT"]
        args = ["--tcjit", tcjit]
        tool = os.path.join(os.environ.get("TCJIT_BUILD", ""), "bench", "gpu_tool",
                            "tcjit_gpu_bench")
        if os.access(tool, os.X_OK):
            args += ["--tool", tool]
        out = os.path.join(self.tmp, "results")
        self.check_one_line(args, out)
        self.assertFalse(os.path.exists(out), "bench/gpu created --out without a GPU")
        os.makedirs(out)  # an existing folder stays empty
        self.check_one_line(args, out)
        self.assertEqual(tree(out), [])
        self.assertEqual(tree(self.home), [], "bench/gpu wrote under HOME without a GPU")

    def test_tool_exit_4_gives_its_reason(self):
        tool = os.path.join(self.tmp, "tool")
        write_exe(tool, """\
            import sys
            sys.stderr.write("tcjit_gpu_bench: no CUDA driver (libcuda.so.1 not found)\\n")
            sys.exit(4)
            """)
        out = os.path.join(self.tmp, "results")
        line = self.check_one_line(["--tool", tool, "--tcjit", os.environ["TCJIT"]], out)
        self.assertEqual(line, "bench/gpu: no GPU here (no CUDA driver (libcuda.so.1 not "
                               "found)); nothing measured")
        self.assertFalse(os.path.exists(out))


class Arguments(Scratch):
    def check_usage_error(self, args, words):
        out = os.path.join(self.tmp, "results")
        p = run([sys.executable, GPU] + args + ["--out", out], env=self.env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(words, p.stderr)
        self.assertFalse(os.path.exists(out))

    def test_unknown_option(self):
        self.check_usage_error(["--fast"], "unrecognized arguments: --fast")

    def test_missing_tcjit(self):
        self.check_usage_error(["--tcjit", os.path.join(self.tmp, "nope")], "--tcjit")

    def test_missing_tool(self):
        self.check_usage_error(["--tool", os.path.join(self.tmp, "nope")], "--tool")

    def test_out_is_a_file(self):
        path = os.path.join(self.tmp, "file")
        open(path, "w").close()
        p = run([sys.executable, GPU, "--out", path], env=self.env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("is not a folder", p.stderr)

    def test_option_without_value(self):
        self.check_usage_error(["--tool"], "expected one argument")

    def test_no_binaries_found(self):
        root = os.path.join(self.tmp, "bare")
        shutil.copytree(os.path.join(SOURCE, "bench"), os.path.join(root, "bench"),
                        ignore=shutil.ignore_patterns("results", "*.cpp", "__pycache__"))
        p = run([sys.executable, os.path.join(root, "bench", "gpu")], env=self.env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("found neither tcjit nor tcjit_gpu_bench", p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertFalse(os.path.exists(os.path.join(root, "bench", "results")))

    def test_report_needs_from(self):
        p = run([sys.executable, REPORT], env=self.env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--from", p.stderr)


def column(name, ms, peak=None, ok=True, why=None):
    return {"column": name, "ok": ok, "why_not": why, "config_or_algo": "x",
            "median_ms": ms if ok else None, "min_ms": ms, "max_ms": ms, "p25_ms": ms,
            "p75_ms": ms, "reps": 20, "tflops": None, "percent_of_peak": peak,
            "verified": ok, "max_error": 0.0}


GEMM = {"name": "4096^3", "m": 4096, "n": 4096, "k": 4096, "batch": 1, "dtype": "f16",
        "bias_gelu": False}
CONV = {"name": "res2_3x3", "pass": "wgrad", "n": 32, "h": 56, "w": 56, "c": 64, "k": 64,
        "r": 3, "s": 3, "pad": 1, "stride": 1}


def synthetic_race():
    return copy.deepcopy({
        "device": {"name": "Fake H100", "arch": "sm_90", "sm_clock_mhz": 1980,
                   "memory_clock_mhz": 2619, "driver": "580.1", "sms": 132,
                   "peak_tflops": {"f16": 989.4, "s8": 1978.9}},
        "gemm": [{"problem": GEMM, "columns": [
            column("tcjit heuristic", 2.0, 6.9), column("tcjit tuned", 1.0, 13.9),
            column("cuBLASLt heuristic first", 1.5, 9.3),
            column("cuBLASLt best of 8", 1.2, 11.6)]}],
        "conv": [{"problem": CONV, "columns": [
            column("tcjit heuristic", 0.5), column("tcjit tuned", 0.4, 40.0),
            column("cuDNN heuristic A first", 0.6),
            column("cuDNN heuristic B first", None, ok=False, why="no engine for this layout"),
            column("cuDNN mode A best of 8", 0.45, 35.0),  # the best is the fastest "best"
            column("cuDNN mode B best of 8", 0.3, 53.3)]}],
    })


def gemm_spec(p):
    return (f"gemm m={p['m']} n={p['n']} k={p['k']} batch={p['batch']} a={p['dtype']}:row "
            f"b={p['dtype']}:col c={p['dtype']}:row acc=f32")


def tool_form(race):
    """The race as tcjit_gpu_bench writes it (bench/gpu_tool/race_json.cpp): one problems list,
    each problem with its spec text, columns with times in microseconds."""
    problems = []
    for kind in ("gemm", "conv"):
        for row in race[kind]:
            p = row["problem"]
            spec = gemm_spec(p) if kind == "gemm" else (
                f"conv2d n={p['n']} h={p['h']} w={p['w']} c={p['c']} k={p['k']} r={p['r']} "
                f"s={p['s']} pad={p['pad']} stride={p['stride']} pass={p['pass']} x=f16 acc=f32")
            out = {"kind": kind, "name": p["name"], "dtype": p.get("dtype", "f16"), "spec": spec,
                   "flops": 1.0, "math_unit": "f16", "columns": [], "errors": []}
            out.update({"bias_gelu": p["bias_gelu"]} if kind == "gemm" else {"pass": p["pass"]})
            for c in row["columns"]:
                col = {"column": c["column"], "source": c["column"].split()[0], "variant": "x",
                       "measured": c["ok"], "config": c["config_or_algo"]}
                if c["ok"]:
                    col["timing"] = {f"{k}_us": c[f"{k}_ms"] * 1000 for k in
                                     ("median", "min", "max", "p25", "p75")}
                    col["timing"].update(reps=c["reps"], warmup=3, l2_flush_bytes=104857600)
                    col.update(tflops=c["tflops"], percent_of_peak=c["percent_of_peak"])
                    col["verification"] = {"checked": True, "ok": True, "max_abs_error": 0.0}
                else:
                    col.update(error=c["why_not"], verification=None)
                out["columns"].append(col)
            problems.append(out)
    device = dict(race["device"])
    device["peaks"] = {"gpu": "H100", "source": "x", "tflops": device.pop("peak_tflops")}
    return {"tool": "tcjit_gpu_bench race", "measured": True, "device": device,
            "problems": problems}


def synthetic_results():
    failure = {"name": "c_f16_dgrad", "backend": "nvrtc", "result": "failed",
               "spec": "conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 "
                       "acc=f32",
               "config": "64x32x32 w32x32 s3 k1 g1 va8 vb8", "config_forced": "64x32x32 w32x32 s3",
               "elements": 1008, "mismatches": 7, "worst_error_over_tolerance": 3.5,
               "failure": "element 17: 2.5 vs 1.0"}
    return {
        "schema": "tcjit-gpu-bench/1", "stamp": "2030-01-02-gpu",
        "created_at": "2030-01-02T03:04:05Z",
        "quick": False, "command": "bench/gpu",
        "machine": {"gpu": synthetic_race()["device"], "driver_version": "13.0",
                    "toolkit": {"ptxas": "13.0 /usr/local/cuda/bin/ptxas"}, "tcjit": "9.9.9",
                    "host": {"hostname": "node1", "os": "Linux", "cpu": "cpu", "cpus": 16,
                             "python": "3.11"}},
        "correctness": {
            "matrix": {"workload": "bench/workloads/device_matrix.tcjit", "cases": 4, "ok": 3,
                       "failures": [failure], "outcomes": [],
                       "by_backend": {"llvm": {"ok": 2, "failed": 0, "error": 0},
                                      "nvrtc": {"ok": 1, "failed": 1, "error": 0}}},
            "gpu_tests": {"binary": "bin/test_gpu", "tests": 5, "failed": 1, "skipped": 0,
                          "failures": [{"test": "CudaDevice.Launch", "message": "boom\nmore"}],
                          "skipped_tests": []}},
        "race": synthetic_race(),
        "model_quality": [{"problem": "4096^3 f16", "candidates": 64, "kendall_tau": 0.8125,
                           "winner_predicted_over_measured": 1.25, "regret_top1": 1.05,
                           "regret_top8": 1.0}],
        "torch": {"version": "2.5.0", "cuda": "12.4", "cudnn": 90100, "settings": "s",
                  "rows": [{"kind": "gemm", "problem": GEMM, "ok": True, "median_ms": 1.1,
                            "percent_of_peak": 12.0},
                           {"kind": "conv", "problem": CONV, "ok": False,
                            "why_not": "OutOfMemoryError: CUDA out of memory"}]},
        "not_measured": [{"what": "GPU tests", "why": "whatever"}],
    }


class Report(Scratch):
    def write_json(self, doc, name="results.json"):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def test_synthetic_results(self):
        doc = synthetic_results()
        source = self.write_json(doc)
        out = os.path.join(self.tmp, "report")
        p = run([sys.executable, REPORT, "--from", source, "--out", out], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "2030-01-02-gpu.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f), doc)  # the JSON copy holds every figure
        with open(os.path.join(out, "2030-01-02-gpu.md"), encoding="utf-8") as f:
            md = f.read()
        gemm = next(line for line in md.splitlines() if line.startswith("| 4096^3"))
        # times, then tcjit/cuBLASLt: heuristic 1.5/2.0, best 1.2/1.0; % of peak; tcjit/torch
        self.assertEqual(gemm, "| 4096^3 4096x4096x4096 f16 | 2 | 1 | 1.5 | 1.2 | 1.1 | 0.75x "
                               "| 1.20x | 14% | 12% | 1.10x |")
        conv = next(line for line in md.splitlines() if line.startswith("| res2_3x3"))
        self.assertEqual(conv, "| res2_3x3 wgrad n=32 f16 | 0.5 | 0.4 | 0.6 | - | 0.45 | 0.3 | "
                               "- | 1.20x | 0.75x | 40% | 53% | - |")
        self.assertIn("| res2_3x3 wgrad n=32 f16 | x (0.5-0.5 ms, 20 reps) | x (0.4-0.4 ms, 20 "
                      "reps) | x (0.6-0.6 ms, 20 reps) | - | x (0.45-0.45 ms, 20 reps) | "
                      "x (0.3-0.3 ms, 20 reps) |", md)
        self.assertIn("Fake H100 (sm_90, 132 SMs), SM clock 1980 MHz", md)
        self.assertIn("3 of 4 cases ok (llvm: 2 ok, 0 failed, 0 errors; nvrtc: 1 ok, 1 failed", md)
        self.assertIn("| nvrtc | c_f16_dgrad | `conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 "
                      "pass=dgrad x=f16 acc=f32` | 64x32x32 w32x32 s3 k1 g1 va8 vb8 | failed | "
                      "worst error/tolerance 3.5; 7 of 1008 elements outside; element 17: 2.5 "
                      "vs 1.0 |", md)
        self.assertIn("- FAILED CudaDevice.Launch: boom", md)
        self.assertIn("| 4096^3 f16 | 64 | 0.812 | 1.25 | 1.050 | 1.000 |", md)
        self.assertIn("- res2_3x3 wgrad n=32 f16: cuDNN heuristic B first: no engine for this "
                      "layout", md)
        self.assertIn("- res2_3x3 wgrad n=32 f16: torch: OutOfMemoryError", md)
        self.assertIn("- GPU tests: whatever", md)
        try:
            import matplotlib  # noqa: F401
            self.assertTrue(os.path.exists(os.path.join(out, "2030-01-02-gpu-gemm.png")))
            self.assertIn("![2030-01-02-gpu-gemm](2030-01-02-gpu-gemm.png)", md)
        except ImportError:
            self.assertIn("Not drawn: matplotlib does not import here", md)
            self.assertIn("`python3 bench/gpu_report.py --from 2030-01-02-gpu.json`", md)

    def test_predicted_column_is_not_shown_as_measured(self):
        doc = synthetic_results()
        doc["race"]["gemm"][0]["columns"][1]["provenance"] = "predicted"
        doc["race"]["gemm"][0]["columns"][2]["wrong"] = "element 5: 2 vs 1"  # timed, but wrong
        # and: a driver known by its API version only, no clocks, a long failure message
        doc["machine"]["gpu"].update(driver=None, sm_clock_mhz=None)
        doc["machine"]["driver_version"] = 12080
        doc["correctness"]["matrix"]["failures"][0]["failure"] = "x" * 1000
        out = os.path.join(self.tmp, "report")
        p = run([sys.executable, REPORT, "--from", self.write_json(doc), "--out", out],
                env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "2030-01-02-gpu.md"), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("SM clock ? MHz", md)
        self.assertIn("- driver: 12.8;", md)
        self.assertIn("x" * 240 + " ... (the JSON has all of it)", md)
        self.assertNotIn("x" * 241, md)
        gemm = next(line for line in md.splitlines() if line.startswith("| 4096^3"))
        self.assertTrue(
            gemm.startswith("| 4096^3 4096x4096x4096 f16 | 2 | - | 1.5 (wrong) | 1.2 |"), gemm)
        self.assertIn("| 1.1 | - | - | - | 12% |", gemm)  # no ratio with a wrong or predicted time
        self.assertIn("- 4096^3 4096x4096x4096 f16: cuBLASLt heuristic first: timed, but its "
                      "output failed the check against the reference (element 5: 2 vs 1)", md)

    def check_refused(self, text, words):
        source = self.write_json(text)
        out = os.path.join(self.tmp, "report")
        p = run([sys.executable, REPORT, "--from", source, "--out", out], env=self.env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"bench/gpu_report.py: error: {source}: ", p.stderr)
        self.assertIn(words, p.stderr)
        self.assertFalse(os.path.exists(out))

    def test_malformed_json_is_refused(self):
        self.check_refused("{\"schema\": ", "not JSON")
        self.check_refused("[]", "expected a JSON object, found list")
        doc = synthetic_results()
        doc["schema"] = "something else"
        self.check_refused(json.dumps(doc), "\"schema\" is 'something else'")
        doc = synthetic_results()
        del doc["machine"]
        self.check_refused(json.dumps(doc), "\"machine\" is missing")
        doc = synthetic_results()
        doc["race"]["gemm"][0]["columns"][0]["median_ms"] = None
        self.check_refused(json.dumps(doc), "race.gemm[0].columns[0] is ok without median_ms")

    def test_missing_file_is_refused(self):
        p = run([sys.executable, REPORT, "--from", os.path.join(self.tmp, "none.json")],
                env=self.env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("cannot read it", p.stderr)


FAKE_TCJIT = """\
import json, os, signal, sys
args = sys.argv[1:]
log = os.environ["FAKE_LOG"]
if args == ["--version"]:
    print("tcjit 9.9.9")
elif args[:2] == ["doctor", "--json"]:
    print(json.dumps({"tcjit": "9.9.9", "driver": {"found": True, "version": "13.0", "gpus": [
        {"ordinal": 0, "name": "Fake H100", "arch": "sm_90", "sms": 132}]},
        "toolkit": {"ptxas": {"found": True, "path": "/cuda/bin/ptxas", "version": "13.0"}}}))
elif args[0] == "run":
    assert args[1] == "-" and args[args.index("--device") + 1] == "cuda" and "--json" in args
    backend = args[args.index("--backend") + 1]
    config = args[args.index("--config") + 1] if "--config" in args else None
    entries = [line.split(":", 1) for line in sys.stdin.read().splitlines() if line.strip()]
    names = [n for n, _ in entries]
    with open(log, "a") as f:
        f.write(json.dumps({"backend": backend, "config": config, "names": names}) + "\\n")
    if backend == "nvrtc" and "c_f16_dgrad" in names and len(names) > 1:
        os.kill(os.getpid(), signal.SIGSEGV)
    out, status = [], 0
    for name, spec in entries:
        bad = backend == "nvrtc" and name == "c_f16_dgrad"
        out.append({"name": name, "spec": spec.strip(), "config": (config or "128x128x32") + " k1",
                    "verify": {"elements": 100, "mismatches": 7 if bad else 0,
                               "max_abs_error": 1.5,
                               "worst_error_over_tolerance": 3.5 if bad else 0.5},
                    "result": "failed" if bad else "ok"})
        if bad:
            out[-1]["failure"] = "element 17: 2.5 vs 1.0"
            status = 3
    print(json.dumps(out))
    sys.exit(status)
else:
    sys.exit(2)
"""

FAKE_TOOL = """\
import json, os, sys
sys.path.insert(0, os.environ["FAKE_DATA"])
import fake_data
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps({"tool": args}) + "\\n")
if args == ["info", "--json"]:
    print(json.dumps(fake_data.race()["device"]))
    sys.exit(0)
sys.stderr.write(f"{args[0]}: 4096^3 f16: tcjit heuristic 2000 us\\n")
sys.stderr.flush()
path = args[args.index("--json") + 1]
assert os.path.basename(os.path.dirname(args[args.index("--db") + 1])).endswith("-raw")
if args[0] == "race" and os.environ.get("FAKE_RACE_HANG"):
    import time
    time.sleep(120)
doc = fake_data.race() if args[0] == "race" else fake_data.quality()
if args[0] == "race" and os.environ.get("FAKE_RACE_BAD"):
    doc["problems"] = {"not": "a list"}
with open(path, "w") as f:
    json.dump(doc, f)
"""

FAKE_TEST_GPU = """\
import json, sys
print("[ RUN      ] CudaDevice.Streams\\ntests/gpu/x.cpp:12: Skipped\\nno second stream here\\n"
      "[  SKIPPED ] CudaDevice.Streams (0 ms)")
path = sys.argv[1].split("json:", 1)[1]
json.dump({"tests": 2, "testsuites": [{"name": "CudaDevice", "testsuite": [
    {"name": "Launch", "status": "RUN", "result": "COMPLETED"},
    {"name": "Streams", "status": "RUN", "result": "SKIPPED"}]}]}, open(path, "w"))
"""


def make_fake_bundle(tmp, tcjit=None):
    """A bundle-shaped folder: bench/ copied from the source, bin/ with the fake tool, the fake
    test_gpu and the fake tcjit (or a link to the real `tcjit` given, and then no test_gpu)."""
    bundle = os.path.join(tmp, "tcjit-9.9.9-linux-x86_64")
    shutil.copytree(os.path.join(SOURCE, "bench"), os.path.join(bundle, "bench"),
                    ignore=shutil.ignore_patterns("results", "*.cpp", "__pycache__"))
    os.makedirs(os.path.join(bundle, "bin"))
    if tcjit:
        os.symlink(tcjit, os.path.join(bundle, "bin", "tcjit"))
    else:
        write_exe(os.path.join(bundle, "bin", "tcjit"), FAKE_TCJIT)
        write_exe(os.path.join(bundle, "bin", "test_gpu"), FAKE_TEST_GPU)
    write_exe(os.path.join(bundle, "bin", "tcjit_gpu_bench"), FAKE_TOOL)
    data = os.path.join(tmp, "data")
    os.makedirs(data)
    with open(os.path.join(data, "fake_data.py"), "w", encoding="utf-8") as f:
        f.write(f"import json\nRACE = {json.dumps(tool_form(synthetic_race()))!r}\n"
                f"QUALITY = {json.dumps(synthetic_results()['model_quality'])!r}\n"
                "def race(): return json.loads(RACE)\n"
                "def quality(): return json.loads(QUALITY)\n")
    return bundle, data


class FakeGpuRun(Scratch):
    """bench/gpu from a bundle-shaped folder (bin/ with fakes, bench/ copied from the source)."""

    def make_bundle(self):
        return make_fake_bundle(self.tmp)


    def test_quick_run_from_bundle(self):
        bundle, data = self.make_bundle()
        log = os.path.join(self.tmp, "calls.jsonl")
        out = os.path.join(self.tmp, "results")
        env = dict(self.env, FAKE_LOG=log, FAKE_DATA=data)
        p = run([sys.executable, os.path.join(bundle, "bench", "gpu"), "--quick", "--out", out],
                env=env, cwd=self.tmp)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)  # one kernel failed
        with open(log, encoding="utf-8") as f:
            calls = [json.loads(line) for line in f]
        runs = [c for c in calls if "backend" in c]
        quick = self.quick_names()
        for backend in ("llvm", "nvrtc"):
            ran = [n for c in runs if c["backend"] == backend for n in c["names"]]
            if backend == "nvrtc":  # the crashed group's cases, then each again alone
                self.assertEqual(ran.count("c_f16_dgrad"), 2)
                ran = list(dict.fromkeys(ran))
            self.assertEqual(sorted(ran), sorted(quick), backend)
        tool_calls = [c["tool"] for c in calls if "tool" in c]
        self.assertEqual(tool_calls[0], ["info", "--json"])
        self.assertEqual(tool_calls[1][:2], ["race", "--quick"])
        self.assertEqual(tool_calls[2][0], "model-quality")
        self.assertIn("\n  race: 4096^3 f16: tcjit heuristic 2000 us\n", p.stdout)  # live

        stamp = [f for f in os.listdir(out) if f.endswith(".json")][0][:-5]
        self.assertRegex(stamp, r"^\d{4}-\d\d-\d\d-gpu-quick$")
        with open(os.path.join(out, stamp + ".json"), encoding="utf-8") as f:
            doc = json.load(f)
        matrix = doc["correctness"]["matrix"]
        self.assertEqual(matrix["cases"], 2 * len(quick))
        self.assertEqual([(f["backend"], f["name"], f["config"]) for f in matrix["failures"]],
                         [("nvrtc", "c_f16_dgrad", "64x32x32 w32x32 s3 k1")])
        self.assertEqual(doc["correctness"]["gpu_tests"]["skipped"], 1)
        self.assertEqual(doc["machine"]["gpu"]["name"], "Fake H100")
        self.assertEqual(doc["machine"]["tcjit"], "9.9.9")
        self.assertEqual(doc["race"]["gemm"][0]["columns"][1]["median_ms"], 1.0)
        with open(os.path.join(out, stamp + ".md"), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("| nvrtc | c_f16_dgrad | `conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 "
                      "stride=2 pass=dgrad x=f16 acc=f32` | 64x32x32 w32x32 s3 k1 | failed |", md)
        self.assertIn("| 1.20x |", md)
        self.assertIn("- skipped CudaDevice.Streams: no second stream here", md)
        self.assertIn("torch column: ", md)  # no torch here, or no GPU for it: said why
        self.assertTrue(os.path.isdir(os.path.join(out, stamp + "-raw")))
        self.assertEqual(os.listdir(bundle + "/bench/gpu_bench").count("__pycache__"), 0)

    def test_unreadable_race_json_is_reported(self):
        bundle, data = self.make_bundle()
        os.remove(os.path.join(bundle, "bin", "test_gpu"))  # absent: skipped quietly
        out = os.path.join(self.tmp, "results")
        env = dict(self.env, FAKE_LOG=os.path.join(self.tmp, "log"), FAKE_DATA=data,
                   FAKE_RACE_BAD="1")
        p = run([sys.executable, os.path.join(bundle, "bench", "gpu"), "--out", out], env=env)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertNotIn("test_gpu", p.stdout)
        md_name = [f for f in os.listdir(out) if f.endswith(".md")][0]
        self.assertRegex(md_name, r"^\d{4}-\d\d-\d\d-gpu\.md$")  # not --quick
        with open(os.path.join(out, md_name), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("- race (tcjit vs cuBLASLt/cuDNN): its JSON could not be read "
                      "(race.problems: expected a JSON array, found dict)", md)
        self.assertIn("- GPU tests: no test_gpu binary here", md)
        self.assertIn("| 4096^3 f16 | 64 | 0.812 |", md)  # model quality still reported

    def start_hanging_race(self):
        """bench/gpu --quick, once its race (which hangs) has started; (process, out)."""
        bundle, data = self.make_bundle()
        log = os.path.join(self.tmp, "log")
        out = os.path.join(self.tmp, "results")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", FAKE_LOG=log, FAKE_DATA=data,
                   FAKE_RACE_HANG="1", **self.env)
        p = subprocess.Popen([sys.executable, os.path.join(bundle, "bench", "gpu"), "--quick",
                              "--out", out], env=env, stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
        for _ in range(1200):  # until the race has started (the matrix and tests are done)
            if os.path.exists(log):
                with open(log, encoding="utf-8") as f:
                    if '"race"' in f.read():
                        break
            time.sleep(0.05)
        return p, out

    def test_killed_run_leaves_its_json(self):
        p, out = self.start_hanging_race()
        os.killpg(p.pid, signal.SIGKILL)  # bench/gpu and the hanging tool
        p.communicate(timeout=120)
        self.assertEqual(p.returncode, -signal.SIGKILL)
        json_name = [f for f in os.listdir(out) if f.endswith(".json")]
        self.assertEqual(len(json_name), 1, os.listdir(out))
        self.assertEqual([f for f in os.listdir(out) if f.endswith(".md")], [])
        r = run([sys.executable, REPORT, "--from", os.path.join(out, json_name[0])],
                env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, json_name[0][:-5] + ".md"), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("quick run, cut short", md)
        self.assertIn("| nvrtc | c_f16_dgrad |", md)  # the matrix was saved before the race

    def test_sigterm_keeps_what_was_measured(self):
        p, out = self.start_hanging_race()
        p.send_signal(signal.SIGTERM)
        stdout, _ = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 130, stdout)
        md_name = [f for f in os.listdir(out) if f.endswith(".md")][0]
        with open(os.path.join(out, md_name), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("- the rest of the run: interrupted", md)
        self.assertIn("| nvrtc | c_f16_dgrad |", md)  # the matrix, measured before, kept

    def quick_names(self):
        names = []
        with open(os.path.join(SOURCE, "bench", "workloads", "device_matrix.tcjit")) as f:
            for line in f:
                text, _, comment = line.partition("#")
                if text.strip() and comment.startswith("@") and "quick" in comment.split(
                        "config=")[0].split():
                    names.append(text.split(":", 1)[0].strip())
        self.assertGreater(len(names), 10)
        return names


class FakeDriver(Scratch):
    """The real tcjit on tests/cuda's fake libcuda.so.1 (one sm_90 "GPU" whose launches do
    nothing): bench/gpu --quick runs the matrix through `tcjit run - --device cuda --json` and
    reads every case's real JSON (the outputs, never written, fail their verification)."""

    def test_quick_matrix_through_the_real_tcjit(self):
        driver = os.environ.get("TCJIT_FAKE_DRIVER_DIR", "")
        if not os.path.exists(os.path.join(driver, "libcuda.so.1")):
            self.skipTest("the fake driver is not built (target tcjit_fake_libcuda_so1)")
        out = os.path.join(self.tmp, "results")
        # The real tcjit from a bundle-shaped folder whose race tool is the fake (the real one would
        # race for many minutes on a driver whose launches do nothing) and which has no test_gpu.
        bundle, data = make_fake_bundle(self.tmp, tcjit=os.path.abspath(os.environ["TCJIT"]))
        env = dict(self.env, LD_LIBRARY_PATH=driver, FAKE_LOG=os.path.join(self.tmp, "calls"),
                   FAKE_DATA=data)
        p = run([sys.executable, os.path.join(bundle, "bench", "gpu"), "--quick", "--out", out],
                env=env, cwd=self.tmp)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        stamp = [f for f in os.listdir(out) if f.endswith(".json")][0]
        with open(os.path.join(out, stamp), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(doc["machine"]["gpu"]["arch"], "sm_90")
        outcomes = doc["correctness"]["matrix"]["outcomes"]
        llvm = [o for o in outcomes if o["backend"] == "llvm"]
        self.assertEqual(len(outcomes), 2 * len(llvm))
        self.assertGreater(len(llvm), 10)
        for o in llvm:  # each case ran and was verified: its config, element count and verdict
            self.assertEqual(o["result"], "failed", o)
            self.assertGreater(o["elements"], 0, o)
            self.assertRegex(o["config"], r"^\d+x\d+x\d+ w\d+x\d+ ", o)
            if o["config_forced"]:
                self.assertTrue(o["config"].startswith(o["config_forced"]), o)
            self.assertIn("out of tolerance", o["failure"])


class ToolJson(unittest.TestCase):
    """The one adapter of tcjit_gpu_bench's JSON."""

    def setUp(self):
        sys.path.insert(0, os.path.join(SOURCE, "bench"))
        sys.dont_write_bytecode = True
        from gpu_bench import tool_json
        self.tj = tool_json

    def test_race_is_normalized(self):
        doc = synthetic_race()
        doc["gemm"][0]["columns"][1].update(percent_of_peak=None, tflops=98.94)
        race = self.tj.race(doc)
        self.assertEqual(race["device"]["name"], "Fake H100")
        tuned = race["gemm"][0]["columns"][1]
        self.assertAlmostEqual(tuned["percent_of_peak"], 10.0)  # 98.94 of f16's 989.4
        self.assertEqual(race["conv"][0]["columns"][3]["why_not"], "no engine for this layout")
        self.assertEqual(self.tj.device({"device": doc["device"]})["sms"], 132)

    def test_the_tools_own_form(self):
        doc = tool_form(synthetic_race())
        doc["problems"][0]["columns"][2]["verification"] = {
            "checked": True, "ok": False, "max_abs_error": 3.0, "worst": "element 5: 2 vs 1"}
        doc["problems"][1]["errors"] = ["cuDNN: no operands"]
        race = self.tj.race(doc)
        self.assertEqual(race["device"]["peak_tflops"]["f16"], 989.4)
        gemm, conv = race["gemm"][0], race["conv"][0]
        self.assertEqual({k: gemm["problem"][k] for k in ("name", "m", "n", "k", "batch",
                                                           "dtype", "bias_gelu")}, GEMM)
        self.assertEqual(conv["problem"]["pad"], 1)
        self.assertEqual(conv["problem"]["pass"], "wgrad")
        tuned = gemm["columns"][1]
        self.assertEqual((tuned["ok"], tuned["median_ms"], tuned["reps"], tuned["verified"]),
                         (True, 1.0, 20, True))
        self.assertEqual(gemm["columns"][2]["wrong"], "element 5: 2 vs 1")
        self.assertEqual(conv["columns"][3]["why_not"], "no engine for this layout")
        self.assertEqual(conv["errors"], ["cuDNN: no operands"])
        quality = self.tj.model_quality({"problems": [
            {"spec": "gemm m=1", "candidates": 16, "kendall_tau_b": 0.5, "k": 8,
             "winner_predicted_over_measured": 0.9, "regret_top1": 1.1, "regret_top_k": 1.0}],
            "skipped": ["abc on H100: not measured"]})
        self.assertEqual(quality, [{"problem": "gemm m=1", "candidates": 16, "kendall_tau": 0.5,
                                    "winner_predicted_over_measured": 0.9, "regret_top1": 1.1,
                                    "regret_top8": 1.0, "k": 8}])
        self.assertEqual(self.tj.model_quality_skipped({"skipped": ["x"]}), ["x"])

    def test_wrong_shapes_are_named(self):
        doc = synthetic_race()
        del doc["gemm"][0]["problem"]["k"]
        with self.assertRaisesRegex(self.tj.ToolJsonError, r"race.gemm\[0\].problem: missing k"):
            self.tj.race(doc)
        doc = synthetic_race()
        doc["conv"][0]["columns"][0]["median_ms"] = "fast"
        with self.assertRaisesRegex(self.tj.ToolJsonError, "expected a number, found 'fast'"):
            self.tj.race(doc)
        with self.assertRaisesRegex(self.tj.ToolJsonError, "no \"name\""):
            self.tj.device({"sms": 1})
        with self.assertRaisesRegex(self.tj.ToolJsonError, r"model-quality\[0\]: no \"problem\""):
            self.tj.model_quality([{"kendall_tau": 1}])


class Matrix(Scratch):
    """bench/workloads/device_matrix.tcjit: what it covers, and that tcjit takes every line."""

    def setUp(self):
        super().setUp()
        sys.path.insert(0, os.path.join(SOURCE, "bench"))
        sys.dont_write_bytecode = True
        from gpu_bench import correctness
        self.workload = os.path.join(SOURCE, "bench", "workloads", "device_matrix.tcjit")
        self.full = correctness.read_matrix(self.workload, quick=False)
        self.quick = correctness.read_matrix(self.workload, quick=True)

    def kinds(self, entries):
        """What a set of entries covers, as words."""
        out = set()
        for e in entries:
            words = dict(w.split("=", 1) for w in e["spec"].split()[1:] if "=" in w)
            op = e["spec"].split()[0]
            dtype = (words.get("a") or words.get("x")).split(":")[0]
            math = words.get("math")
            out.add({"tf32": "tf32", "f32": "simt"}.get(math, dtype))
            if op != "gemm":
                out.add(words.get("pass", "fprop"))
                groups = int(words.get("groups", 1))
                out.add("depthwise" if groups > 1 and groups == int(words["c"]) else
                        "groups" if groups > 1 else "dense")
            if e["config"] and any(w.startswith("k") and w[1:].isdigit() and int(w[1:]) > 1
                                   for w in e["config"].split()):
                out.add("split-K")
            if "batch" in words:
                out.add("batch")
            if "act" in words:
                out.add("epilogue")
        return out

    def test_quick_subset_covers_each_kind(self):
        want = {"f16", "bf16", "tf32", "s8", "f64", "simt", "fprop", "dgrad", "wgrad", "groups",
                "depthwise", "split-K", "epilogue"}
        self.assertLessEqual(want, self.kinds(self.quick))
        self.assertLessEqual(want | {"u8", "batch"}, self.kinds(self.full))
        self.assertLess(len(self.quick), len(self.full) / 2)
        self.assertEqual(len({e["name"] for e in self.full}), len(self.full))

    def test_tcjit_takes_every_spec_and_forced_config(self):
        tcjit = os.environ["TCJIT"]
        p = run([tcjit, "explain", self.workload], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        headers = [line for line in p.stdout.splitlines() if line.startswith("== ")]
        self.assertEqual(len(headers), len(self.full))
        for e in self.full:
            if e["config"]:
                p = run([tcjit, "compile", e["spec"], "--config", e["config"]], env=self.env)
                self.assertEqual(p.returncode, 0, f"{e['name']}: {p.stderr}")


FAKE_TORCH = """\
# A stand-in for torch with the calls torch_column makes: tensors carry a shape and a dtype, and
# every operation is recorded with the tf32 switch at that moment; each event pair times 2 ms.
import types
__version__ = "0.0-fake"
version = types.SimpleNamespace(cuda="12.9")
float16, bfloat16, float32, int8, uint8 = "float16", "bfloat16", "float32", "int8", "uint8"
channels_last = "channels_last"
calls = []
backends = types.SimpleNamespace(
    cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)),
    cudnn=types.SimpleNamespace(allow_tf32=True, version=lambda: 90100))


class Tensor:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype
    def zero_(self): return self
    def to(self, memory_format=None): return self
    def transpose(self, a, b):
        s = list(self.shape); s[a], s[b] = s[b], s[a]
        return Tensor(s, self.dtype)
    def t(self): return Tensor(self.shape[::-1], self.dtype)
    def __getitem__(self, i): return Tensor(self.shape[1:], self.dtype)


def _op(name, *tensors, shape=None):
    calls.append((name, tensors[0].dtype, backends.cuda.matmul.allow_tf32))
    return Tensor(shape or tensors[0].shape, tensors[0].dtype)


def empty(n, dtype=None, device=None): return Tensor((n,), dtype)
def randn(*shape, dtype=None, device=None): return Tensor(shape, dtype)
def randint(lo, hi, shape, dtype=None, device=None): return Tensor(shape, dtype)
def randn_like(t): return Tensor(t.shape, t.dtype)
def matmul(a, b): return _op("matmul", a, b)
def addmm(bias, a, b): return _op("addmm", a, b)
def baddbmm(bias, a, b): return _op("baddbmm", a, b)
def _int_mm(a, b): return _op("_int_mm", a, b)


class _Event:
    count = 0
    def __init__(self, enable_timing=False): pass
    def record(self): pass
    def elapsed_time(self, end): return 2.0


def _conv2d(x, w, bias, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    p = (h + 2 * pad[0] - dil[0] * (w.shape[2] - 1) - 1) // stride[0] + 1
    q = (wd + 2 * pad[1] - dil[1] * (w.shape[3] - 1) - 1) // stride[1] + 1
    return _op("conv2d", x, w, shape=(n, w.shape[0], p, q))


cuda = types.SimpleNamespace(
    is_available=lambda: True, synchronize=lambda: None, empty_cache=lambda: None,
    get_device_properties=lambda i: types.SimpleNamespace(L2_cache_size=50 << 20), Event=_Event)
nn = types.SimpleNamespace(
    functional=types.SimpleNamespace(conv2d=_conv2d, gelu=lambda t: _op("gelu", t)),
    grad=types.SimpleNamespace(
        conv2d_input=lambda size, w, dy, *a: _op("conv2d_input", dy, shape=size),
        conv2d_weight=lambda x, size, dy, *a: _op("conv2d_weight", x, shape=size)))
"""


class TorchColumn(unittest.TestCase):
    """The torch column's arithmetic, and its calls on a stand-in for torch (its timing needs
    torch and a GPU)."""

    def setUp(self):
        sys.path.insert(0, os.path.join(SOURCE, "bench"))
        sys.dont_write_bytecode = True
        from gpu_bench import torch_column
        self.tc = torch_column

    def test_flops(self):
        self.assertEqual(self.tc.gemm_flops({"m": 16, "n": 4096, "k": 4096, "batch": 2}),
                         2.0 * 16 * 4096 * 4096 * 2)
        # ResNet-50's stem: 224 -> 112 with pad 3, stride 2, 7x7
        stem = {"n": 32, "h": 224, "w": 224, "c": 3, "k": 64, "r": 7, "s": 7, "pad": 3,
                "stride": 2}
        self.assertEqual(self.tc.conv_flops(stem), 2.0 * 32 * 112 * 112 * 64 * 7 * 7 * 3)
        split = dict(stem, pad=None, stride=None, pad_h=3, pad_w=3, stride_h=2, stride_w=2)
        self.assertEqual(self.tc.conv_flops(split), self.tc.conv_flops(stem))
        grouped = {"n": 1, "h": 8, "w": 8, "c": 32, "k": 32, "r": 3, "s": 3, "pad": [1, 1],
                   "groups": 32}
        self.assertEqual(self.tc.conv_flops(grouped), 2.0 * 64 * 32 * 9)

    def test_measure_on_a_stand_in_for_torch(self):
        tmp = tempfile.mkdtemp(prefix="tcjit-fake-torch.")
        self.addCleanup(shutil.rmtree, tmp, True)
        os.makedirs(os.path.join(tmp, "torch"))
        with open(os.path.join(tmp, "torch", "__init__.py"), "w", encoding="utf-8") as f:
            f.write(FAKE_TORCH)
        sys.path.insert(0, tmp)
        self.addCleanup(sys.path.remove, tmp)
        self.addCleanup(sys.modules.pop, "torch", None)
        torch, why = self.tc.available()
        self.assertIsNone(why)
        race = synthetic_race()
        gemm = race["gemm"][0]
        for extra in ({"dtype": "tf32"}, {"dtype": "bf16", "batch": 8, "bias_gelu": True},
                      {"dtype": "s8"}, {"dtype": "s8", "batch": 2}):
            race["gemm"].append({"problem": dict(gemm["problem"], **extra), "columns": []})
        for pass_ in ("fprop", "dgrad"):
            race["conv"].append({"problem": dict(CONV, **{"pass": pass_}), "columns": []})
        out = self.tc.measure(torch, race, 20, log=lambda *_: None)
        rows = out["rows"]
        self.assertEqual([r["ok"] for r in rows], [True, True, True, True, False, True, True,
                                                    True])
        self.assertIn("int8", rows[4]["why_not"])
        f16 = rows[0]
        self.assertEqual((f16["median_ms"], f16["reps"]), (2.0, 20))
        self.assertAlmostEqual(f16["tflops"], 2.0 * 4096 ** 3 / 2e-3 / 1e12)
        self.assertAlmostEqual(f16["percent_of_peak"], 100 * f16["tflops"] / 989.4)
        self.assertIsNone(rows[1]["percent_of_peak"])  # no tf32 peak given
        calls = sorted(set(torch.calls))
        self.assertIn(("matmul", "float32", True), calls)  # tf32 on for the tf32 row only
        self.assertIn(("matmul", "float16", False), calls)
        self.assertIn(("baddbmm", "bfloat16", False), calls)
        self.assertIn(("_int_mm", "int8", False), calls)
        for name in ("conv2d", "conv2d_input", "conv2d_weight"):
            self.assertIn((name, "float16", False), calls)
        self.assertFalse(torch.backends.cuda.matmul.allow_tf32)  # left as torch's default

    def test_spread(self):
        s = self.tc.spread([5.0, 1.0, 3.0, 2.0, 4.0])
        self.assertEqual((s["median_ms"], s["min_ms"], s["max_ms"], s["p25_ms"], s["p75_ms"],
                          s["reps"]), (3.0, 1.0, 5.0, 2.0, 4.0, 5))


if __name__ == "__main__":
    unittest.main()
