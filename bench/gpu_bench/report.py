"""The report of a bench/gpu run: checks a results document, writes <stamp>.json (every figure),
<stamp>.md (correctness, the GEMM and conv tables with ratios and % of peak, model quality, what
could not be measured) and the PNG charts (charts.py, when matplotlib imports). Every time in it
was measured on the device; the cost model's predictions appear only as the model-quality
ratios, named so."""

import json
import os

SCHEMA = "tcjit-gpu-bench/1"
REQUIRED = {"schema": str, "stamp": str, "created_at": str, "quick": bool, "machine": dict,
            "correctness": dict, "not_measured": list}
OPTIONAL = {"race": dict, "model_quality": list, "torch": dict}


DETAIL_CHARS = 240  # of a failure's message in the md table


class ResultsError(ValueError):
    """A results document bench/gpu did not write: says what is wrong."""


def check(doc):
    if not isinstance(doc, dict):
        raise ResultsError(f"expected a JSON object, found {type(doc).__name__}")
    if doc.get("schema") != SCHEMA:
        raise ResultsError(f"\"schema\" is {doc.get('schema')!r}, expected {SCHEMA!r} (a file "
                           "written by bench/gpu)")
    for key, kind in REQUIRED.items():
        if not isinstance(doc.get(key), kind):
            raise ResultsError(f"\"{key}\" is missing or not a {kind.__name__}")
    for key, kind in OPTIONAL.items():
        if doc.get(key) is not None and not isinstance(doc[key], kind):
            raise ResultsError(f"\"{key}\" is not a {kind.__name__} (nor null)")
    if "/" in doc["stamp"] or not doc["stamp"].strip():
        raise ResultsError(f"\"stamp\" {doc['stamp']!r} is not a file name")
    for part in ("gemm", "conv"):
        for i, row in enumerate((doc.get("race") or {}).get(part) or []):
            if not isinstance(row, dict) or not isinstance(row.get("problem"), dict) or \
                    not isinstance(row.get("columns"), list):
                raise ResultsError(f"race.{part}[{i}] has no problem object and columns array")
            for j, col in enumerate(row["columns"]):
                if not isinstance(col, dict) or not isinstance(col.get("column"), str):
                    raise ResultsError(f"race.{part}[{i}].columns[{j}] has no column name")
                if col.get("ok") and not _is_number(col.get("median_ms")):
                    raise ResultsError(f"race.{part}[{i}].columns[{j}] is ok without median_ms")
    return doc


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise ResultsError(f"cannot read it: {e.strerror}") from None
    except ValueError as e:
        raise ResultsError(f"not JSON: {e}") from None
    return check(doc)


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def fmt_ms(x):
    return f"{x:.4g}" if _is_number(x) else "-"


def fmt_ratio(x):
    return f"{x:.2f}x" if _is_number(x) else "-"


def fmt_pct(x):
    return f"{x:.0f}%" if _is_number(x) else "-"


def measured(col):
    """A column's median when it was measured (never a prediction) and its output was not found
    wrong, else None."""
    if not col or not col.get("ok") or col.get("provenance", "measured") != "measured" or \
            col.get("wrong"):
        return None
    return col["median_ms"] if _is_number(col.get("median_ms")) else None


def time_cell(col):
    if col and col.get("ok") and col.get("wrong") and _is_number(col.get("median_ms")):
        return f"{fmt_ms(col['median_ms'])} (wrong)"
    return fmt_ms(measured(col))


def pick(columns, *, tcjit, words, fastest=False):
    """The first column (tcjit's, or an anchor's) whose name holds one of the words; with
    fastest, the fastest measured of them (cuDNN's best of mode A and of mode B)."""
    found = [c for c in columns if c["column"].startswith("tcjit") == tcjit and
             any(w in c["column"].lower() for w in words)]
    timed = [c for c in found if measured(c) is not None]
    if fastest and timed:
        return min(timed, key=measured)
    return found[0] if found else None


def speed_ratio(tcjit_col, other_ms):
    """other's time / tcjit's time: above 1, tcjit is faster."""
    mine = measured(tcjit_col)
    return other_ms / mine if mine and _is_number(other_ms) else None


def torch_ms(doc, kind, problem):
    for row in (doc.get("torch") or {}).get("rows", []):
        if row.get("kind") == kind and row.get("problem") == problem and row.get("ok"):
            return row.get("median_ms")
    return None


def race_table(doc, kind, anchor):
    """The table rows of one part (gemm or conv): (header, rows, chart data)."""
    rows, chart = [], []
    part = (doc.get("race") or {}).get(kind) or []
    names = []
    for row in part:
        for col in row["columns"]:
            if col["column"] not in names:
                names.append(col["column"])
    has_torch = any(r.get("kind") == kind for r in (doc.get("torch") or {}).get("rows", []))
    header = ["problem"] + [f"{n} ms" for n in names] + (["torch ms"] if has_torch else [])
    header += [f"tcjit/{anchor} (heuristic vs first)", f"tcjit/{anchor} (tuned vs best)",
               "% of peak (tcjit tuned)",
               f"% of peak ({anchor} best)"] + (["tcjit/torch"] if has_torch else [])
    for row in part:
        cols = row["columns"]
        by_name = {c["column"]: c for c in cols}
        heur = pick(cols, tcjit=True, words=("heuristic",))
        tuned = pick(cols, tcjit=True, words=("tuned",))
        anchor_first = pick(cols, tcjit=False, words=("heuristic", "first"))
        anchor_best = pick(cols, tcjit=False, words=("best",), fastest=True)
        r_heur = speed_ratio(heur, measured(anchor_first))
        r_best = speed_ratio(tuned, measured(anchor_best))
        t_ms = torch_ms(doc, kind, row["problem"])
        cells = [problem_text(kind, row["problem"])]
        cells += [time_cell(by_name.get(n)) for n in names]
        cells += [fmt_ms(t_ms)] if has_torch else []
        cells += [fmt_ratio(r_heur), fmt_ratio(r_best),
                  fmt_pct(tuned.get("percent_of_peak") if measured(tuned) else None),
                  fmt_pct(anchor_best.get("percent_of_peak") if measured(anchor_best) else None)]
        cells += [fmt_ratio(speed_ratio(tuned, t_ms))] if has_torch else []
        rows.append(cells)
        chart.append({"label": cells[0], "heuristic": r_heur, "best": r_best,
                      "peak_tcjit": tuned.get("percent_of_peak") if measured(tuned) else None,
                      "peak_anchor": (anchor_best.get("percent_of_peak")
                                      if measured(anchor_best) else None)})
    return header, rows, chart


def race_configs(doc, kind):
    """(header, rows): each column's config or algorithm and its spread (p25-p75 ms, reps)."""
    part = (doc.get("race") or {}).get(kind) or []
    names = []
    for row in part:
        for col in row["columns"]:
            if col["column"] not in names:
                names.append(col["column"])
    rows = []
    for row in part:
        by_name = {c["column"]: c for c in row["columns"]}
        cells = [problem_text(kind, row["problem"])]
        for n in names:
            col = by_name.get(n)
            if measured(col) is None:
                cells.append("-")
                continue
            cells.append(f"{col.get('config_or_algo') or '?'} ({fmt_ms(col.get('p25_ms'))}-"
                         f"{fmt_ms(col.get('p75_ms'))} ms, {col.get('reps') or '?'} reps)")
        rows.append(cells)
    return ["problem"] + names, rows


def problem_text(kind, p):
    if kind == "gemm":
        batch = f" x{p['batch']}" if p.get("batch", 1) != 1 else ""
        epilogue = " +bias+gelu" if p.get("bias_gelu") else ""
        return f"{p['name']} {p['m']}x{p['n']}x{p['k']}{batch} {p['dtype']}{epilogue}"
    return f"{p['name']} {p['pass']} n={p['n']} {p.get('dtype', 'f16')}"


def md_table(header, rows):
    esc = [[str(c).replace("|", "\\|").replace("\n", " ") for c in r] for r in [header] + rows]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in esc[1:]])


def not_measured(doc):
    """Every (what, why) that has no figure: parts, race columns, torch rows."""
    out = [(n.get("what", "?"), n.get("why", "?")) for n in doc["not_measured"]]
    for kind in ("gemm", "conv"):
        for row in (doc.get("race") or {}).get(kind) or []:
            label = problem_text(kind, row["problem"])
            out += [(label, str(e)) for e in row.get("errors") or []]
            for col in row["columns"]:
                if not col.get("ok"):
                    out.append((f"{label}: {col['column']}", col.get("why_not") or "not measured"))
                elif col.get("wrong"):
                    out.append((f"{label}: {col['column']}", "timed, but its output failed the "
                                f"check against the reference ({col['wrong']}): no ratio"))
    for row in (doc.get("torch") or {}).get("rows", []):
        if not row.get("ok"):
            out.append((f"{problem_text(row['kind'], row['problem'])}: torch",
                        row.get("why_not") or "not measured"))
    return out


def _known(x):
    return "?" if x is None or x == "" else x


def driver_text(v):
    """The CUDA driver's version: 13000 (cuDriverGetVersion's encoding) as 13.0, text as is."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 1000:
        return f"{v // 1000}.{v % 1000 // 10}"
    return str(_known(v))


def machine_section(doc):
    m = doc["machine"]
    gpu = {k: _known(v) for k, v in (m.get("gpu") or {}).items()}
    peaks = ", ".join(f"{k} {v:g}" for k, v in ((m.get("gpu") or {}).get("peak_tflops") or {})
                      .items() if _is_number(v))
    driver = gpu.get("driver", "?")
    if driver == "?":
        driver = driver_text(m.get("driver_version"))
    host = m.get("host") or {}
    toolkit = "; ".join(f"{k} {v}" for k, v in (m.get("toolkit") or {}).items())
    lines = [
        f"- GPU: {gpu.get('name', '?')} ({gpu.get('arch', '?')}, {gpu.get('sms', '?')} SMs), "
        f"SM clock {gpu.get('sm_clock_mhz', '?')} MHz, memory clock "
        f"{gpu.get('memory_clock_mhz', '?')} MHz; peak TFLOP/s: {peaks or '?'}",
        f"- driver: {driver}; CUDA toolkit: "
        f"{toolkit or '?'}",
        f"- tcjit {m.get('tcjit', '?')}; host {host.get('hostname', '?')}, {host.get('os', '?')}, "
        f"{host.get('cpu', '?')} ({host.get('cpus', '?')} CPUs), Python {host.get('python', '?')}",
    ]
    torch = doc.get("torch")
    if torch:
        lines.append(f"- PyTorch {torch.get('version')} (CUDA {torch.get('cuda')}, cuDNN "
                     f"{torch.get('cudnn')}): {torch.get('settings')}")
    return lines


def correctness_section(doc):
    c = doc["correctness"]
    lines = ["## Correctness on the device", ""]
    matrix = c.get("matrix")
    if matrix:
        per = "; ".join(f"{b}: {v['ok']} ok, {v['failed']} failed, {v['error']} errors"
                        for b, v in matrix["by_backend"].items())
        subset = ", its --quick subset" if doc["quick"] else ""
        lines.append(f"Verification matrix (`{matrix.get('workload', 'device_matrix.tcjit')}`"
                     f"{subset}; each output against the CPU reference under the tolerance model): "
                     f"{matrix['ok']} of {matrix['cases']} cases ok ({per}).")
        if matrix["failures"]:
            lines += ["", "Failures:", ""]
            rows = [[f["backend"], f["name"], f"`{f['spec']}`",
                     f.get("config") or f.get("config_forced") or "heuristic", f["result"],
                     detail(f)] for f in matrix["failures"]]
            lines.append(md_table(["backend", "case", "spec", "config", "result", "detail"], rows))
    else:
        lines.append("Verification matrix: not run (see \"Not measured\").")
    tests = c.get("gpu_tests")
    lines.append("")
    if tests and "error" not in tests:
        lines.append(f"GPU tests (`{os.path.basename(tests.get('binary', 'test_gpu'))}`): "
                     f"{tests['tests']} tests, {tests['failed']} failed, {tests['skipped']} "
                     "skipped.")
        for f in tests["failures"]:
            first = f["message"].splitlines()[0] if f["message"] else ""
            lines.append(f"- FAILED {f['test']}: {first}")
        for s in tests.get("skipped_tests", []):
            lines.append(f"- skipped {s['test']}: {s.get('message') or 'no reason given'}")
    elif tests:
        lines.append(f"GPU tests: {tests['error']}")
    else:
        lines.append("GPU tests: not run (see \"Not measured\").")
    return lines


def detail(f):
    parts = []
    worst = f.get("worst_error_over_tolerance")
    if _is_number(worst) or worst == "inf":
        parts.append(f"worst error/tolerance {worst:.4g}" if _is_number(worst)
                     else "worst error/tolerance inf")
    if f.get("mismatches"):
        parts.append(f"{f['mismatches']} of {f.get('elements', '?')} elements outside")
    for key in ("failure", "error"):
        if f.get(key):
            text = " ".join(str(f[key]).split())
            parts.append(text if len(text) <= DETAIL_CHARS else
                         text[:DETAIL_CHARS] + " ... (the JSON has all of it)")
    return "; ".join(parts) or "-"


def quality_section(doc):
    rows = doc.get("model_quality")
    lines = ["## How good the cost model was", ""]
    if rows is None:
        return lines + ["Not measured (see \"Not measured\")."]
    lines += ["For each problem tuned by measurement: Kendall tau between the model's predicted "
              "order and the measured order of the candidates; the winner's predicted time over "
              "its measured time; the regret of the model's top-1 and top-8 (the measured time "
              "of its pick over the measured best).", ""]
    table = [[r["problem"], r.get("candidates", "-"), _fmt(r.get("kendall_tau"), ".3f"),
              _fmt(r.get("winner_predicted_over_measured"), ".2f"),
              _fmt(r.get("regret_top1"), ".3f"), _fmt(r.get("regret_top8"), ".3f")]
             for r in rows]
    if not rows:
        return lines[:2] + ["No problem tuned by measurement was found in the race's database "
                            "(see \"Not measured\")."]
    k = rows[0].get("k", 8)
    return lines + [md_table(["problem", "candidates", "Kendall tau", "winner predicted/measured",
                              "regret top-1", f"regret top-{k}"], table)]


def _fmt(x, spec):
    return format(x, spec) if _is_number(x) else "-"


def markdown(doc, charts, charts_why_not):
    title = "quick run" if doc["quick"] else "full run"
    if doc.get("complete") is False:
        title += ", cut short (the JSON of a run that was killed)"
    gpu = (doc["machine"].get("gpu") or {}).get("name", "?")
    lines = [f"# tcjit on {gpu}: bench/gpu, {title} ({doc['created_at']})", ""]
    lines += machine_section(doc) + [""]
    lines += ["Every time below was measured on this GPU (CUDA events, L2 flushed, median of the "
              "repetitions); no figure of the cost model is shown as a time. Ratios are speed "
              "ratios, the other's time over tcjit's: above 1.00x tcjit is faster.", ""]
    lines += correctness_section(doc) + [""]
    for kind, anchor, title in (("gemm", "cuBLASLt", "GEMM: tcjit vs cuBLASLt"),
                                ("conv", "cuDNN", "Convolution: tcjit vs cuDNN")):
        header, rows, _ = race_table(doc, kind, anchor)
        lines += [f"## {title}", ""]
        lines += [md_table(header, rows) if rows else "Not measured (see \"Not measured\")."]
        if rows:
            lines += ["", "Config or algorithm of each column, with the middle half of its "
                      "repetitions:", "", md_table(*race_configs(doc, kind))]
        lines += [""]
    lines += quality_section(doc) + [""]
    lines += ["## Charts", ""]
    if charts:
        lines += [f"![{os.path.splitext(c)[0]}]({c})" for c in charts]
    else:
        lines.append(f"Not drawn: {charts_why_not}. Draw them later on a machine with "
                     f"matplotlib: `python3 bench/gpu_report.py --from {doc['stamp']}.json`.")
    lines += ["", "## Not measured", ""]
    missing = not_measured(doc)
    lines += [f"- {what}: {why}" for what, why in missing] or ["Nothing: every part ran."]
    return "\n".join(lines) + "\n"


def write(doc, out_dir, draw=True):
    """Writes <stamp>.json, <stamp>.md and the charts into out_dir; returns the paths."""
    check(doc)
    os.makedirs(out_dir, exist_ok=True)
    stamp = doc["stamp"]
    json_path = os.path.join(out_dir, f"{stamp}.json")
    with open(json_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    charts, why_not = [], "matplotlib is not installed here"
    if draw:
        from . import charts as charts_module  # noqa: PLC0415
        parts = [(kind, anchor, race_table(doc, kind, anchor)[2])
                 for kind, anchor in (("gemm", "cuBLASLt"), ("conv", "cuDNN"))]
        charts, why_not = charts_module.draw(stamp, parts, out_dir)
    md_path = os.path.join(out_dir, f"{stamp}.md")
    with open(md_path, "w", encoding="utf-8") as f:
        f.write(markdown(doc, charts, why_not))
    return [json_path, md_path] + [os.path.join(out_dir, c) for c in charts]
