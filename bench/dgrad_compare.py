"""Strided dgrad: tcjit before and after the phase decomposition, beside CUTLASS's strided dgrad.

For the ResNet-50 strided layers' data gradients (f16 NHWC, f32 accumulate) it takes the config
the `--after` tcjit chooses by default and, at that same config:
  (1) the emulator's counters (`tcjit run`, at n = --emu-n): mma and warp-instructions per dgrad,
      for the `--before` binary (the dense implicit GEMM, zeros included) and the `--after` one
      (one dense GEMM per stride phase), beside the dense count computed from the shapes and the
      useful one (dense / stride^2);
  (2) the SASS of each cubin (`tcjit compile --cubin`): registers, spills, kernel instructions and
      the main loop's instructions per HMMA (sass_stats.py), beside CUTLASS's
      DefaultConv2dDgrad with StrideSupport::kStrided (bench/anchors/cutlass_conv.cu -DANCHOR_DGRAD) built with
      the same CTA tile, warp tile, stages and alignment.
No GPU is needed. Writes a Markdown table to stdout (and --json FILE: every figure).

Usage: build/bench-venv/bin/python bench/dgrad_compare.py --before OTHER/build/tcjit
           [--after build/tcjit] [--emu-n 1] [--no-cutlass] [--json FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "anchors"))

import sass_stats  # noqa: E402

LAYERS = [
    ("res3 3x3 s2 (56->28, c=k=128)",
     "conv2d n=32 h=56 w=56 c=128 k=128 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32"),
    ("res3 1x1 s2 downsample (56->28, c=256 k=512)",
     "conv2d n=32 h=56 w=56 c=256 k=512 r=1 s=1 stride=2 pass=dgrad x=f16 acc=f32"),
]
NVCC_FLAGS = ["-cubin", "-arch=sm_80", "-O3", "-std=c++17", "-w"]
CUTLASS_KERNEL = "cutlass_anchor_conv2d_dgrad"


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("'%s' failed (%d):\n%s" % (" ".join(cmd), r.returncode,
                                                     (r.stdout + r.stderr)[-3000:]))
    return r.stdout + r.stderr


def with_n(spec, n):
    return re.sub(r"\bn=\d+", "n=%d" % n, spec)


def words(spec):
    return {k: int(v.split(",")[0]) for k, v in
            (w.split("=", 1) for w in spec.split()[1:] if "=" in w) if re.match(r"^[\d,]+$", v)}


def dense_mma(spec, cfg):
    """The dense implicit GEMM's mma count: CTAs x K-tiles x mma per K-tile (m16n8k16)."""
    p = words(spec)
    m, n, k = p["n"] * p["h"] * p["w"], p["c"], p.get("r", 1) * p.get("s", 1) * p["k"]
    bm, bn, bk = cfg

    def tiles(v, t):
        return (v + t - 1) // t
    return tiles(m, bm) * tiles(n, bn) * tiles(k, bk) * (bm // 16) * (bn // 8) * (bk // 16)


class Bench:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="tcjit-dgrad-bench-")
        self.env = dict(os.environ, HOME=self.work, XDG_CACHE_HOME=os.path.join(self.work, "c"),
                        TCJIT_DB=os.path.join(self.work, "db.sqlite"))

    def compile(self, tcjit, spec, config, tag):
        cubin = os.path.join(self.work, tag + ".cubin")
        out = run([tcjit, "compile", spec] + (["--config", config] if config else []) +
                  ["--cubin", "-o", cubin], self.env)
        cfg = re.search(r"^config\s+(.+?)\s*(\(default\))?\s*$", out, re.M).group(1)
        kernel = re.search(r"^kernel\s+(\S+)", out, re.M).group(1)
        return cfg, self.static(cubin, kernel)

    @staticmethod
    def static(cubin, kernel):
        s = sass_stats.analyse(cubin, kernel)
        loop = s["main_loop"] or {}
        return {"registers": s["resources"].get("REG"), "stack": s["resources"].get("STACK"),
                "kernel_instructions": s["instructions"],
                "instructions_per_mma": loop.get("instructions_per_mma")}

    def emulate(self, tcjit, spec, config):
        out = run([tcjit, "run", with_n(spec, self.args.emu_n), "--config", config], self.env)
        c = re.search(r"^counters:\s+(\d+) warp-instructions, (\d+) mma", out, re.M)
        ok = re.search(r"^result:\s+ok", out, re.M) is not None
        return {"warp_instructions": int(c.group(1)), "mma": int(c.group(2)), "verified": ok}

    def cutlass(self, cfg_words):
        include = os.path.join(sys.prefix, "lib", "python%d.%d" % sys.version_info[:2],
                               "site-packages", "cutlass_library", "source", "include")
        nvcc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
        macros = ["-D%s=%s" % kv for kv in cfg_words.items()]
        cubin = os.path.join(self.work, "cutlass_%s.cubin" % "_".join(map(str, cfg_words.values())))
        if not os.path.exists(cubin):
            run([nvcc] + NVCC_FLAGS + ["-I" + include, "-DANCHOR_DGRAD"] + macros +
                [os.path.join(HERE, "anchors", "cutlass_conv.cu"), "-o", cubin])
        return self.static(cubin, CUTLASS_KERNEL), " ".join(macros)


def parse_config(text):
    m = re.match(r"(\d+)x(\d+)x(\d+) w(\d+)x(\d+) s(\d+).* va(\d+) vb(\d+)", text)
    bm, bn, bk, wm, wn, st, va, vb = map(int, m.groups())
    return {"BM": bm, "BN": bn, "BK": bk, "WM": wm, "WN": wn, "STAGES": st, "ALIGN_A": va,
            "ALIGN_B": vb}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the tcjit CLI of the build to compare against")
    ap.add_argument("--after", default=os.path.join(ROOT, "build", "tcjit"))
    ap.add_argument("--emu-n", type=int, default=1)
    ap.add_argument("--no-cutlass", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    b = Bench(args)
    rows = []
    for name, spec in LAYERS:
        config, after_static = b.compile(args.after, spec, None, "after")
        _, before_static = b.compile(args.before, spec, config, "before")
        cw = parse_config(config)
        before_emu = b.emulate(args.before, spec, config)
        after_emu = b.emulate(args.after, spec, config)
        p = words(spec)
        dense = dense_mma(with_n(spec, args.emu_n), (cw["BM"], cw["BN"], cw["BK"]))
        row = {"name": name, "spec": spec, "config": config, "emu_n": args.emu_n,
               "dense_mma_from_shapes": dense, "stride": p["stride"],
               "before": {"static": before_static, "emulator": before_emu},
               "after": {"static": after_static, "emulator": after_emu}}
        if not args.no_cutlass:
            row["cutlass"], row["cutlass_macros"] = b.cutlass(cw)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print("| layer | config | emulator mma (n=%d): dense from shapes / before / after | "
          "before / after | warp-instr. before / after | main-loop instr./HMMA before / after"
          " / CUTLASS | registers before / after / CUTLASS | kernel SASS instr. before / after"
          " / CUTLASS |" % args.emu_n)
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        be, ae = r["before"]["emulator"], r["after"]["emulator"]
        bs, as_ = r["before"]["static"], r["after"]["static"]
        cs = r.get("cutlass") or {}

        def f(v):
            return "-" if v is None else ("%.2f" % v if isinstance(v, float) else str(v))
        print("| %s | `%s` | %d / %d / %d | %.2fx fewer | %d / %d | %s / %s / %s | %s / %s / %s |"
              " %s / %s / %s |" % (
                  r["name"], r["config"], r["dense_mma_from_shapes"], be["mma"], ae["mma"],
                  be["mma"] / ae["mma"], be["warp_instructions"], ae["warp_instructions"],
                  f(bs["instructions_per_mma"]), f(as_["instructions_per_mma"]),
                  f(cs.get("instructions_per_mma")), f(bs["registers"]), f(as_["registers"]),
                  f(cs.get("registers")), f(bs["kernel_instructions"]),
                  f(as_["kernel_instructions"]), f(cs.get("kernel_instructions"))))
        if not (be["verified"] and ae["verified"]):
            print("\n(!) %s: not verified on the emulator (before %s, after %s)" % (
                r["name"], be["verified"], ae["verified"]))


if __name__ == "__main__":
    main()
