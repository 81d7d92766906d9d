"""The one place that reads tcjit_gpu_bench's JSON (`info --json`, `race --json FILE`,
`model-quality --json FILE`). Everything else in bench/gpu sees only the normalized form these
functions return, so a change of the tool's output is absorbed here.

The tool writes (bench/gpu_tool/device_json.cpp, race_json.cpp, model_quality_db.cpp):
  info:          {name, arch, sms, sm_clock_mhz, memory_clock_mhz, l2_bytes, driver,
                  driver_version, peaks: {gpu, source, tflops: {f16, bf16, tf32, s8, f64,
                  f32_simt}} | null, peaks_why_not}
  race:          {device: <info>, options, timing_method, problems: [{kind: gemm|conv, name,
                  dtype, spec (tcjit's DSL text), flops, math_unit, bias_gelu | pass, errors,
                  columns: [{column, source, variant, pick, measured, config, origin, error,
                  timing: {median_us, min_us, max_us, p25_us, p75_us, reps, ...}, tflops,
                  percent_of_peak, verification: {checked, ok, max_abs_error, ...} | null}]}]}
  model-quality: {problems: [{spec, key_hash, candidates, kendall_tau_b,
                  winner_predicted_over_measured, regret_top1, regret_top_k, k, ...}], skipped}
An older draft of the interface ({gemm: [{problem, columns}], conv: [...]}, columns with *_ms,
and a model-quality list) is read too.

Normalized forms (every figure measured on the device; None where the tool gave none):
  device:  {name, arch, sm_clock_mhz, memory_clock_mhz, driver, sms, peak_tflops: {dtype: x},
            and whatever else the tool said}
  race:    {device, gemm: [row], conv: [row], errors: [text]}; row = {problem: {name, dtype,
           spec, m, n, k, batch, bias_gelu | pass, n, h, w, c, k, r, s, pad, stride, dilation,
           groups}, columns: [column]}; column = {column, ok, why_not, config_or_algo,
           median_ms, min_ms, max_ms, p25_ms, p75_ms, reps, tflops, percent_of_peak, verified,
           max_error}
  quality: [{problem, candidates, kendall_tau, winner_predicted_over_measured, regret_top1,
             regret_top8, k}]
"""


class ToolJsonError(ValueError):
    """The tool's JSON is not of the shape bench/gpu reads: says which part and what."""


DEVICE_KEYS = ("name", "arch", "sm_clock_mhz", "memory_clock_mhz", "driver", "sms")
GEMM_PROBLEM_KEYS = ("name", "m", "n", "k", "dtype")
CONV_PROBLEM_KEYS = ("name", "pass", "n", "h", "w", "c", "k", "r", "s")  # pad, stride: a number,
# [h, w], or pad_h/pad_w and stride_h/stride_w (problems.h's ConvProblem); absent: 0 and 1
TIMES = (("median_ms", "median_us"), ("min_ms", "min_us"), ("max_ms", "max_us"),
         ("p25_ms", "p25_us"), ("p75_ms", "p75_us"))
COLUMN_NUMBERS = ("median_ms", "min_ms", "max_ms", "p25_ms", "p75_ms", "reps", "tflops",
                  "percent_of_peak", "max_error")


def _object(value, where):
    if not isinstance(value, dict):
        raise ToolJsonError(f"{where}: expected a JSON object, found {type(value).__name__}")
    return value


def _list(value, where):
    if not isinstance(value, list):
        raise ToolJsonError(f"{where}: expected a JSON array, found {type(value).__name__}")
    return value


def _number(value, where):
    if value is None or value == "inf":
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolJsonError(f"{where}: expected a number, found {value!r}")
    return value


def device(info):
    """The device object of `info --json` (or of the race's "device")."""
    info = _object(info, "device")
    if "device" in info and isinstance(info["device"], dict):  # {"device": {...}}
        info = info["device"]
    out = {key: info.get(key) for key in DEVICE_KEYS}
    if not isinstance(out["name"], str) or not out["name"]:
        raise ToolJsonError("device: no \"name\" (the GPU's name)")
    peaks = info.get("peak_tflops")
    if peaks is None and isinstance(info.get("peaks"), dict):
        peaks = info["peaks"].get("tflops")
    peaks = _object(peaks or {}, "device.peaks.tflops")
    out["peak_tflops"] = {str(k): _number(v, f"device.peaks.tflops.{k}") for k, v in peaks.items()}
    for key, value in info.items():  # keep what else the tool says (l2_bytes, peaks_why_not ...)
        out.setdefault(key, value)
    return out


def spec_dims(spec):
    """The sizes in tcjit's DSL text of a problem: {"m": 4096, "pad": [1, 1], ...}."""
    out = {}
    for word in str(spec or "").split()[1:]:
        key, eq, value = word.partition("=")
        if not eq:
            continue
        parts = value.split(",")
        if all(p.lstrip("-").isdigit() for p in parts):
            numbers = [int(p) for p in parts]
            out[key] = numbers[0] if len(numbers) == 1 else numbers
    return out


def _timing_ms(col):
    """*_ms of a column: from "timing" (microseconds) or from *_ms keys."""
    timing = col.get("timing")
    out = {}
    for ms, us in TIMES:
        if isinstance(timing, dict):
            value = _number(timing.get(us), f"timing.{us}")
            out[ms] = value / 1000.0 if isinstance(value, (int, float)) else None
        else:
            out[ms] = col.get(ms)
    out["reps"] = timing.get("reps") if isinstance(timing, dict) else col.get("reps")
    return out


def _column(col, where):
    col = _object(col, where)
    name = col.get("column")
    if not isinstance(name, str) or not name:
        raise ToolJsonError(f"{where}: no \"column\" name")
    verification = col.get("verification")
    out = {"column": name, "ok": bool(col.get("ok", col.get("measured"))),
           "why_not": col.get("why_not") or col.get("error") or None,
           "config_or_algo": col.get("config_or_algo") or col.get("config"),
           "verified": col.get("verified"), "max_error": col.get("max_error")}
    if isinstance(verification, dict):
        out["verified"] = verification.get("ok") if verification.get("checked") else None
        out["max_error"] = verification.get("max_abs_error")
        if verification.get("checked") and not verification.get("ok"):
            out["wrong"] = verification.get("worst") or "outside the tolerance"
    out.update(_timing_ms(col))
    out["tflops"], out["percent_of_peak"] = col.get("tflops"), col.get("percent_of_peak")
    for key in COLUMN_NUMBERS:
        out[key] = _number(out[key], f"{where} ({name}).{key}")
    if out["ok"] and not isinstance(out["median_ms"], (int, float)):
        raise ToolJsonError(f"{where} ({name}): measured but no median time")
    if not out["ok"] and not out["why_not"]:
        out["why_not"] = "not measured (the tool gave no reason)"
    return out


def _problem(row, where):
    """The problem of a row: the draft's "problem" object, or the tool's row with its spec's
    sizes."""
    if isinstance(row.get("problem"), dict):
        return dict(row["problem"])
    problem = {k: v for k, v in row.items()
               if k in ("name", "dtype", "spec", "flops", "math_unit", "bias_gelu", "pass")}
    problem.update({k: v for k, v in spec_dims(row.get("spec")).items() if k not in problem})
    if row.get("kind") == "conv":
        problem.setdefault("dtype", "f16")
    if not problem.get("name"):
        raise ToolJsonError(f"{where}: no problem name")
    return problem


def _rows(rows, keys, where):
    out = []
    for i, row in enumerate(_list(rows, where)):
        row = _object(row, f"{where}[{i}]")
        problem = _problem(row, f"{where}[{i}]")
        missing = [k for k in keys if k not in problem]
        if missing:
            raise ToolJsonError(f"{where}[{i}].problem: missing {', '.join(missing)}")
        if "m" in problem:
            problem.setdefault("batch", 1)
        columns = [_column(c, f"{where}[{i}].columns[{j}]")
                   for j, c in enumerate(_list(row.get("columns"), f"{where}[{i}].columns"))]
        out.append({"problem": problem, "columns": columns,
                    "errors": [str(e) for e in row.get("errors") or []]})
    return out


def race(doc):
    """The race's JSON file, normalized. A measured column without percent_of_peak gets it from
    its TFLOP/s and the device's peak for the problem's dtype (conv: f16), when both are given."""
    doc = _object(doc, "race")
    if "problems" in doc:  # the tool's form: one list, each row with its kind
        problems = _list(doc["problems"], "race.problems")
        for i, p in enumerate(problems):
            if _object(p, f"race.problems[{i}]").get("kind") not in ("gemm", "conv"):
                raise ToolJsonError(f"race.problems[{i}]: kind {p.get('kind')!r} is neither "
                                    "gemm nor conv")
        gemm = [p for p in problems if p["kind"] == "gemm"]
        conv = [p for p in problems if p["kind"] == "conv"]
    else:
        gemm, conv = doc.get("gemm", []), doc.get("conv", [])
    out = {
        "device": device(doc["device"]) if doc.get("device") is not None else None,
        "gemm": _rows(gemm, GEMM_PROBLEM_KEYS, "race.gemm"),
        "conv": _rows(conv, CONV_PROBLEM_KEYS, "race.conv"),
    }
    peaks = (out["device"] or {}).get("peak_tflops") or {}
    for row in out["gemm"] + out["conv"]:
        peak = peaks.get(row["problem"].get("dtype", "f16"))
        for col in row["columns"]:
            if col["ok"] and col["percent_of_peak"] is None and \
                    isinstance(col["tflops"], (int, float)) and isinstance(peak, (int, float)) \
                    and peak > 0:
                col["percent_of_peak"] = 100.0 * col["tflops"] / peak
    return out


def model_quality(doc):
    """model-quality's JSON file, normalized: one row per problem tuned by measurement."""
    if isinstance(doc, dict) and "problems" in doc:
        doc = doc["problems"]
    out = []
    for i, row in enumerate(_list(doc, "model-quality")):
        row = _object(row, f"model-quality[{i}]")
        problem = row.get("problem", row.get("spec"))
        if problem is None:
            raise ToolJsonError(f"model-quality[{i}]: no \"problem\" (nor \"spec\")")
        if isinstance(problem, dict):
            problem = problem.get("name") or problem.get("spec") or str(problem)
        tau = row.get("kendall_tau", row.get("kendall_tau_b"))
        top8 = row.get("regret_top8", row.get("regret_top_k"))
        item = {"problem": str(problem),
                "candidates": _number(row.get("candidates"), f"model-quality[{i}].candidates"),
                "kendall_tau": _number(tau, f"model-quality[{i}].kendall_tau"),
                "winner_predicted_over_measured": _number(
                    row.get("winner_predicted_over_measured"), f"model-quality[{i}].winner"),
                "regret_top1": _number(row.get("regret_top1"), f"model-quality[{i}].regret_top1"),
                "regret_top8": _number(top8, f"model-quality[{i}].regret_top8"),
                "k": row.get("k", 8)}
        out.append(item)
    return out


def model_quality_skipped(doc):
    """What model-quality left out and why (texts)."""
    return [str(s) for s in doc.get("skipped") or []] if isinstance(doc, dict) else []
