"""Turns a bench/compare.py result (bench/results/<date>.json) into a Markdown report and two PNG
charts beside it: compile latency and main-loop instructions per MMA.

Usage: python report.py RESULT.json    writes RESULT.md, RESULT-compile.png, RESULT-ipm.png
"""
import json
import os
import statistics
import sys

NAMES = {"tcjit": "tcjit", "cutlass": "CUTLASS", "triton": "Triton"}


def fmt(v, digits=1, unit=""):
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "**NO**"
    if isinstance(v, int):
        return "%d%s" % (v, unit)
    return ("%." + str(digits) + "f%s") % (v, unit)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def ordered(case):
    """(name, anchor) in the order tcjit, CUTLASS, Triton."""
    return [(n, case["anchors"][n]) for n in NAMES if n in case["anchors"]]


def case_name(c):
    return "%s %s" % (c["problem"], c["dtype"])


def compile_rows(cases):
    rows = []
    for c in cases:
        a = c["anchors"]
        base = a["tcjit"]["compile"]["warm"]["total_ms"]
        for name in ("tcjit", "cutlass", "triton"):
            if name not in a:
                continue
            comp = a[name]["compile"]
            if name == "cutlass":
                cold = comp["cold"]
                rows.append([case_name(c), "CUTLASS (nvcc)", "—", "—", "—",
                             fmt(cold["spec_to_ptx_ms"]), fmt(cold["ptx_to_cubin_ms"]),
                             fmt(cold["total_ms"]), fmt(ratio(cold["total_ms"], base), 1, "x")])
                if "nvrtc_warm" not in comp:  # the s4 / sparse anchors: nvcc only
                    continue
                rt = comp["nvrtc_warm"], comp["nvrtc_cold"]
                rows.append([case_name(c), "CUTLASS (NVRTC)", fmt(rt[0]["spec_to_ptx_ms"]), "—",
                             fmt(rt[0]["total_ms"]), fmt(rt[1]["spec_to_ptx_ms"]), "—",
                             fmt(rt[1]["total_ms"]), fmt(ratio(rt[0]["total_ms"], base), 1, "x")])
                continue
            w, cd = comp["warm"], comp["cold"]
            rows.append([case_name(c), NAMES[name], fmt(w["spec_to_ptx_ms"]),
                         fmt(w["ptx_to_cubin_ms"]), fmt(w["total_ms"]), fmt(cd["spec_to_ptx_ms"]),
                         fmt(cd["ptx_to_cubin_ms"]), fmt(cd["total_ms"]),
                         fmt(ratio(w["total_ms"], base), 1, "x")])
    return rows


def static_rows(cases):
    rows = []
    for c in cases:
        base = c["anchors"]["tcjit"].get("static", {}).get("instructions_per_mma")
        for name, a in ordered(c):
            s = a.get("static")
            if not s:
                continue
            loop = s["main_loop"] or {}
            k = loop.get("counts", {})
            ipm = s.get("instructions_per_mma")
            rows.append([case_name(c), NAMES[name], fmt(s["registers"]), fmt(s["stack"]),
                         fmt(s["local"]), fmt(a["shared_bytes"]), fmt(s["calls"]),
                         fmt(loop.get("instructions")), fmt(loop.get("math")), fmt(k.get("ldsm")),
                         fmt(k.get("ldgsts")), fmt(k.get("bar")), fmt(k.get("int_arith")),
                         fmt(k.get("move")), fmt(ipm, 2), fmt(ratio(base, ipm), 2, "x")])
    return rows


def emulator_rows(cases):
    rows = []
    for c in cases:
        for name, a in ordered(c):
            e = a.get("emulator")
            if not e:
                continue
            rows.append([case_name(c), NAMES[name], fmt(e["ok"]), fmt(e["max_error_over_tolerance"], 3),
                         fmt(e["warp_instructions"]), fmt(e["mma"]),
                         fmt(e["instructions_per_mma"], 2), fmt(e["bank_conflicts"]),
                         fmt(100 * e["global_load_efficiency"], 0, "%"),
                         fmt(100 * e["global_store_efficiency"], 0, "%"), fmt(e["device_ms"], 0),
                         fmt(e["warp_instructions_per_s"] / 1e6, 2)])
    return rows


def predicted_rows(cases):
    rows = []
    for c in cases:
        for name, a in ordered(c):
            p = a.get("predicted")
            if not p:
                continue
            cells = [case_name(c), NAMES[name]]
            for gpu in ("a100", "h100"):
                q = p[gpu]
                cells += [fmt(q["tflops"], 1) if q["launchable"] else "not launchable",
                          "%s, %d CTA/SM, %d waves" % (q["bound"], q["ctas_per_sm"], q["waves"])
                          if q["launchable"] else q["why_not"]]
            rows.append(cells)
    return rows


def tf32_note(cases):
    """Names the tf32 kernels flagged on the emulator whose PTX has no cvt.rna.tf32.f32 (CUTLASS
    rounds in integer arithmetic instead and passes; one that neither rounds fails)."""
    raw = sorted({NAMES[n] for c in cases if c["dtype"] == "tf32"
                  for n, a in ordered(c)
                  if a.get("emulator") and not a["emulator"]["ok"]
                  and a["emulator"].get("ptx_rounds_tf32") is False})
    if not raw:
        return ""
    return ("\ntf32: the PTX of %s has no `cvt.rna.tf32.f32`: it feeds raw f32 bits to "
            "`mma...tf32`, whose hardware ignores the low 13 mantissa bits (truncation, biased "
            "toward zero). tcjit's tolerance model assumes inputs rounded to nearest as cuBLAS "
            "and CUTLASS do (CUTLASS rounds in integer arithmetic), and flags truncation by design (docs/numerics.md, \"No input "
            "term\"): a difference of numerics, not an emulator fault.\n" % ", ".join(raw))


def summary(cases):
    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None
    out = {}
    for name, key in (("cutlass", "cold"), ("triton", "warm")):
        out["compile_" + name] = med([ratio(c["anchors"][name]["compile"][key]["total_ms"],
                                            c["anchors"]["tcjit"]["compile"]["warm"]["total_ms"])
                                      for c in cases if name in c["anchors"]])
        out["compile_" + name + "_nvrtc"] = med(
            [ratio(c["anchors"][name]["compile"]["nvrtc_warm"]["total_ms"],
                   c["anchors"]["tcjit"]["compile"]["warm"]["total_ms"])
             for c in cases if name == "cutlass" and name in c["anchors"]
             and "nvrtc_warm" in c["anchors"][name]["compile"]])
        out["ipm_" + name] = med([ratio(c["anchors"]["tcjit"].get("static", {}).get("instructions_per_mma"),
                                        c["anchors"][name].get("static", {}).get("instructions_per_mma"))
                                  for c in cases if name in c["anchors"]])
    return out


def charts(result, stem):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = result["cases"]
    labels = [case_name(c) for c in cases]
    series = [
        ("tcjit (warm)", lambda a: a["tcjit"]["compile"]["warm"]["total_ms"]),
        ("Triton (warm)", lambda a: a["triton"]["compile"]["warm"]["total_ms"]),
        ("CUTLASS NVRTC (warm)", lambda a: a["cutlass"]["compile"]["nvrtc_warm"]["total_ms"]),
        ("CUTLASS nvcc", lambda a: a["cutlass"]["compile"]["cold"]["total_ms"]),
    ]
    files = []
    for fname, ylabel, ser, log in (
            ("compile", "spec/source -> cubin, ms (log scale)", series, True),
            ("ipm", "main-loop SASS instructions per MMA",
             [(NAMES[n], (lambda n: lambda a: a[n]["static"]["instructions_per_mma"])(n))
              for n in ("tcjit", "cutlass", "triton")], False)):
        fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(labels) + 2), 4.2))
        width = 0.8 / len(ser)
        for i, (name, get) in enumerate(ser):
            values = []
            for c in cases:
                try:
                    values.append(get(c["anchors"]) or 0)
                except (KeyError, TypeError):
                    values.append(0)
            ax.bar([x + i * width for x in range(len(cases))], values, width, label=name)
        ax.set_xticks([x + width * (len(ser) - 1) / 2 for x in range(len(cases))])
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
            ax.set_ylim(bottom=10)
        ax.legend(fontsize=8)
        ax.set_title(("Compile latency" if log else "Main-loop instructions per MMA (sm_80 SASS)")
                     + ", " + result["environment"]["date"][:10])
        fig.tight_layout()
        path = stem + "-" + fname + ".png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    return files


def render(result, stem):
    env = result["environment"]
    cases = result["cases"]
    s = summary(cases)
    md = ["# tcjit vs CUTLASS and Triton — %s%s\n" % (env["date"], " (quick)" if env["quick"] else ""),
          "Measured in one run on `%s` (%s cores), commit `%s`; CUTLASS %s, Triton %s, %s. Every "
          "cubin comes from the toolkit's ptxas (%s). Compile times are medians of %d runs; the "
          "machine may be shared, so compare ratios within this run rather than absolute times.\n"
          % (env["host"], env["cores"], env["git"], env["cutlass"], env["triton"], env["nvcc"],
             env["ptxas"], env["reps"]),
          "## Summary (medians over the cases)\n",
          "- compile, spec/source → cubin: CUTLASS via nvcc takes **%s** tcjit's (warm) time, "
          "via NVRTC (warm) **%s**; Triton (warm) **%s**." % (
              fmt(s.get("compile_cutlass"), 1, "x"), fmt(s.get("compile_cutlass_nvrtc"), 1, "x"),
              fmt(s.get("compile_triton"), 1, "x")),
          "- main-loop SASS instructions per MMA: tcjit issues **%s** CUTLASS's and **%s** "
          "Triton's.\n" % (fmt(s.get("ipm_cutlass"), 2, "x"), fmt(s.get("ipm_triton"), 2, "x")),
          "## 1. Compile latency (ms)\n",
          "tcjit: spec → PTX in process, then PTX → cubin as the runtime does on a cache miss "
          "(ptxas check + nvJitLink link + store). CUTLASS: nvcc (each a fresh process: "
          "`nvcc -ptx`, `ptxas`, `nvcc -cubin`) and NVRTC in process (source → PTX with "
          "compute_80, source → cubin with sm_80). Triton: `triton.compile` of an `ASTSource` for "
          "`GPUTarget(\"cuda\", 80, 32)`, no cache; its `cubin` stage is PTX → cubin. Cold: a "
          "fresh process (its first compile); warm: later compiles in the same process. "
          "`x tcjit` is the warm total over tcjit's warm total.\n",
          table(["case", "compiler", "spec→PTX warm", "PTX→cubin warm", "total warm",
                 "spec→PTX cold", "PTX→cubin cold", "total cold", "x tcjit"], compile_rows(cases)),
          "## 2. Static kernel quality (sm_80 SASS of the cubin each ships)\n",
          "Registers, stack and local bytes from `cuobjdump --dump-resource-usage`; the main loop "
          "is the backward-branch range of `nvdisasm` output holding the most MMAs "
          "(bench/sass_stats.py). `calls`: CALLs to other functions (the loop-exit "
          "`CALL.REL.NOINC` idiom excluded). `tcjit/x`: tcjit's instructions per MMA over this "
          "row's.\n",
          table(["case", "kernel", "regs", "stack", "local", "shared B", "calls", "loop instrs",
                 "MMA", "LDSM", "LDGSTS", "BAR", "int arith", "moves", "instrs/MMA", "tcjit/x"],
                static_rows(cases)),
          "## 3. On tcjit's PTX emulator (same inputs, checked against the CPU reference)\n",
          "Each kernel's PTX (tcjit's from LLVM, CUTLASS's from nvcc, Triton's from Triton) run "
          "by tcjit's emulator on the inputs tcjit's own verification uses, D compared with the "
          "reference under the tolerance model (docs/numerics.md). Dynamic PTX warp-instructions "
          "per MMA; bank conflicts are extra shared-memory wavefronts; efficiencies are useful "
          "bytes over 32-byte sectors moved.\n",
          table(["case", "kernel", "correct", "max err/tol", "warp-instrs", "MMA", "instrs/MMA",
                 "bank conflicts", "load eff", "store eff", "emulator ms", "M warp-instr/s"],
                emulator_rows(cases)),
          tf32_note(cases),
          "## 4. Predicted TFLOP/s (model, not measured)\n",
          "**Predicted** by the tuner's analytical model (tuner/perf_model.h, docs/perf_model.md) "
          "from each kernel's tile, threads, registers, shared memory and main-loop instructions "
          "per MMA; no GPU ran these kernels. TOP/s for s8.\n",
          table(["case", "kernel", "A100 predicted", "A100 bound", "H100 predicted", "H100 bound"],
                predicted_rows(cases)),
          "## 5. tcjit's own\n"]
    own = result.get("tcjit_own", {})
    if own.get("db_lookup_ns"):
        md.append(table(["database lookup (bench_db)", "ns"],
                        [[k, fmt(v, 0)] for k, v in own["db_lookup_ns"].items()] +
                        [["`tcjit db show KEY` in a fresh process",
                          fmt(own.get("db_show_fresh_process_ms", 0) * 1e6, 0)]]))
    if own.get("emulator_speed"):
        md.append("\nEmulator speed by instruction mix (tcjit's default kernel, all cores). The goal "
                  "set in warp-instructions/s (≥ 10 M for f16 GEMM kernels, ≥ 20 M for f32 "
                  "SIMT) counts every PTX instruction; a leaner main loop issues fewer per mma for "
                  "the same emulated work, so mma/s is given too.\n\n")
        md.append(table(["mix", "spec", "warp-instructions", "mma", "ms", "M warp-instr/s",
                         "M mma/s", "correct"],
                        [[k, "`%s`" % v["spec"], fmt(v["warp_instructions"]), fmt(v.get("mma")),
                          fmt(v["device_ms"], 0), fmt(v["warp_instructions_per_s"] / 1e6, 2),
                          fmt(v.get("mma", 0) / v["device_ms"] / 1e3, 2), fmt(v["ok"])]
                         for k, v in own["emulator_speed"].items()]))
    md.append("\n## Not measured\n")
    md += ["- " + u for u in result.get("unmeasured", [])] or ["- nothing"]
    md.append("\nThe whole run took %.0f s. Charts: compile latency `%s`, instructions per MMA "
              "`%s`.\n" % (result["seconds"], os.path.basename(stem) + "-compile.png",
                           os.path.basename(stem) + "-ipm.png"))
    return "\n".join(md)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    with open(path) as f:
        result = json.load(f)
    stem = os.path.splitext(path)[0]
    with open(stem + ".md", "w") as f:
        f.write(render(result, stem))
    charts(result, stem)
    print(stem + ".md")


if __name__ == "__main__":
    main()
