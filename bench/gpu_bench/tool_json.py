"""The one place that reads tcjit_gpu_bench's JSON (`info --json`, `race --json FILE`,
`model-quality --json FILE`). Everything else in bench/gpu sees only the normalized form these
functions return, so a change of the tool's output is absorbed here.

Normalized forms (every figure measured on the device; None where the tool gave none):
  device:  {name, arch, sm_clock_mhz, memory_clock_mhz, driver, sms, peak_tflops: {dtype: x}}
  race:    {device, gemm: [row], conv: [row]}; row = {problem: {...}, columns: [column]}
           column = {column, ok, why_not, config_or_algo, median_ms, min_ms, max_ms, p25_ms,
                     p75_ms, reps, tflops, percent_of_peak, verified, max_error}
  quality: [{problem, candidates, kendall_tau, winner_predicted_over_measured, regret_top1,
             regret_top8}]
"""


class ToolJsonError(ValueError):
    """The tool's JSON is not of the shape bench/gpu reads: says which part and what."""


DEVICE_KEYS = ("name", "arch", "sm_clock_mhz", "memory_clock_mhz", "driver", "sms")
GEMM_PROBLEM_KEYS = ("name", "m", "n", "k", "batch", "dtype", "bias_gelu")
CONV_PROBLEM_KEYS = ("name", "pass", "n", "h", "w", "c", "k", "r", "s")  # pad, stride: a number,
# [h, w], or pad_h/pad_w and stride_h/stride_w (problems.h's ConvProblem); absent: 0 and 1
COLUMN_NUMBERS = ("median_ms", "min_ms", "max_ms", "p25_ms", "p75_ms", "reps", "tflops",
                  "percent_of_peak", "max_error")
QUALITY_KEYS = ("candidates", "kendall_tau", "winner_predicted_over_measured", "regret_top1",
                "regret_top8")


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
    if "device" in info and isinstance(info["device"], dict):  # {"device": {...}} from info
        info = info["device"]
    out = {key: info.get(key) for key in DEVICE_KEYS}
    if not isinstance(out["name"], str) or not out["name"]:
        raise ToolJsonError("device: no \"name\" (the GPU's name)")
    peaks = _object(info.get("peak_tflops") or {}, "device.peak_tflops")
    out["peak_tflops"] = {str(k): _number(v, f"device.peak_tflops.{k}") for k, v in peaks.items()}
    for key, value in info.items():  # keep what else the tool says about the device (L2 ...)
        out.setdefault(key, value)
    return out


def _column(col, where):
    col = _object(col, where)
    name = col.get("column")
    if not isinstance(name, str) or not name:
        raise ToolJsonError(f"{where}: no \"column\" name")
    out = {"column": name, "ok": bool(col.get("ok")), "why_not": col.get("why_not"),
           "config_or_algo": col.get("config_or_algo"), "verified": col.get("verified")}
    for key in COLUMN_NUMBERS:
        out[key] = _number(col.get(key), f"{where} ({name}).{key}")
    if out["ok"] and not isinstance(out["median_ms"], (int, float)):
        raise ToolJsonError(f"{where} ({name}): ok but no median_ms")
    if not out["ok"] and not out["why_not"]:
        out["why_not"] = "not measured (the tool gave no reason)"
    return out


def _rows(rows, keys, where):
    out = []
    for i, row in enumerate(_list(rows, where)):
        row = _object(row, f"{where}[{i}]")
        problem = _object(row.get("problem"), f"{where}[{i}].problem")
        missing = [k for k in keys if k not in problem]
        if missing:
            raise ToolJsonError(f"{where}[{i}].problem: missing {', '.join(missing)}")
        columns = [_column(c, f"{where}[{i}].columns[{j}]")
                   for j, c in enumerate(_list(row.get("columns"), f"{where}[{i}].columns"))]
        out.append({"problem": dict(problem), "columns": columns})
    return out


def race(doc):
    """The race's JSON file, normalized. A measured column without percent_of_peak gets it from
    its TFLOP/s and the device's peak for the problem's dtype (conv: f16), when both are given."""
    doc = _object(doc, "race")
    out = {
        "device": device(doc["device"]) if doc.get("device") is not None else None,
        "gemm": _rows(doc.get("gemm", []), GEMM_PROBLEM_KEYS, "race.gemm"),
        "conv": _rows(doc.get("conv", []), CONV_PROBLEM_KEYS, "race.conv"),
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
    if isinstance(doc, dict) and "problems" in doc:  # tolerate {"problems": [...]}
        doc = doc["problems"]
    out = []
    for i, row in enumerate(_list(doc, "model-quality")):
        row = _object(row, f"model-quality[{i}]")
        if "problem" not in row:
            raise ToolJsonError(f"model-quality[{i}]: no \"problem\"")
        problem = row["problem"]
        if isinstance(problem, dict):
            problem = problem.get("name") or problem.get("spec") or str(problem)
        item = {"problem": str(problem)}
        for key in QUALITY_KEYS:
            item[key] = _number(row.get(key), f"model-quality[{i}].{key}")
        out.append(item)
    return out
