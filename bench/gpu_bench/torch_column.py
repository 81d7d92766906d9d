"""The torch column: torch.matmul (addmm/baddbmm with bias+gelu, torch._int_mm for s8) and
torch.nn.functional.conv2d (dgrad: torch.nn.grad.conv2d_input, wgrad: conv2d_weight) on tensors
of the race's shapes and dtypes, timed as the race times: CUDA events around each repetition,
warm-up, L2 flushed before each repetition by writing a buffer of twice the L2, median and
spread of the repetitions. The flush is queued before the start event, so the host's launch of
the operation overlaps it and launch latency is not counted. Imported only when torch is."""

import math
import statistics

WARMUP = 5
L2_FALLBACK_BYTES = 64 << 20


def available():
    """(torch module or None, why not)."""
    try:
        import torch  # noqa: PLC0415 (optional)
    except Exception as e:  # an ImportError, or a broken install
        return None, f"PyTorch does not import here ({type(e).__name__}: {e})"
    try:
        if not torch.cuda.is_available():
            return None, f"PyTorch {torch.__version__} sees no CUDA device"
    except Exception as e:
        return None, f"torch.cuda failed: {e}"
    return torch, None


def percentile(values, q):
    s = sorted(values)
    at = (len(s) - 1) * q
    lo, hi = math.floor(at), math.ceil(at)
    return s[lo] + (s[hi] - s[lo]) * (at - lo)


def spread(times):
    return {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
            "p25_ms": percentile(times, 0.25), "p75_ms": percentile(times, 0.75),
            "reps": len(times)}


def _timer(torch, l2_bytes):
    flush = torch.empty(max(2 * l2_bytes, 1 << 20), dtype=torch.uint8, device="cuda")

    def measure(fn, reps):
        for _ in range(WARMUP):
            fn()
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(reps)]
        for start, end in events:
            flush.zero_()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return [start.elapsed_time(end) for start, end in events]

    return measure


def _pair(p, key, default):
    """(h, w) of a conv parameter given as `key` (a number or [h, w]) or as key_h and key_w."""
    value = p.get(key)
    if value is None:
        return (int(p.get(f"{key}_h", default)), int(p.get(f"{key}_w", default)))
    if isinstance(value, (list, tuple)):
        return (int(value[0]), int(value[-1]))
    return (int(value), int(value))


def gemm_flops(p):
    return 2.0 * p["m"] * p["n"] * p["k"] * p.get("batch", 1)


def conv_flops(p):
    ph, pw = _pair(p, "pad", 0)
    sh, sw = _pair(p, "stride", 1)
    dh, dw = _pair(p, "dilation", 1)
    out_h = (p["h"] + 2 * ph - dh * (p["r"] - 1) - 1) // sh + 1
    out_w = (p["w"] + 2 * pw - dw * (p["s"] - 1) - 1) // sw + 1
    groups = p.get("groups", 1) or 1
    return 2.0 * p["n"] * out_h * out_w * p["k"] * p["r"] * p["s"] * (p["c"] // groups)


def _gemm_op(torch, p):
    """(the operation, or None and why): D = A(m x k, row) x B(k x n, col) [+ bias, gelu]."""
    dtype, batch = p["dtype"], p.get("batch", 1)
    m, n, k = p["m"], p["n"], p["k"]
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    if dtype == "s8":
        if batch != 1 or p.get("bias_gelu"):
            return None, "torch has no batched or bias+gelu int8 GEMM (torch._int_mm: 2-D only)"
        if not hasattr(torch, "_int_mm"):
            return None, "this torch has no torch._int_mm (int8 GEMM)"
        a = torch.randint(-8, 8, (m, k), dtype=torch.int8, device="cuda")
        bt = torch.randint(-8, 8, (n, k), dtype=torch.int8, device="cuda")
        return (lambda: torch._int_mm(a, bt.t())), None
    types = {"f16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}
    if dtype not in types:
        return None, f"no torch equivalent of dtype {dtype}"
    t = types[dtype]
    a = torch.randn(batch, m, k, dtype=t, device="cuda")
    b = torch.randn(batch, n, k, dtype=t, device="cuda").transpose(-1, -2)  # column-major
    if batch == 1:
        a, b = a[0], b[0]
    if not p.get("bias_gelu"):
        return (lambda: torch.matmul(a, b)), None
    bias = torch.randn(n, dtype=t, device="cuda")
    gelu = torch.nn.functional.gelu
    if batch == 1:
        return (lambda: gelu(torch.addmm(bias, a, b))), None
    return (lambda: gelu(torch.baddbmm(bias, a, b))), None


def _conv_op(torch, p):
    t = {"f16": torch.float16, "bf16": torch.bfloat16}.get(p.get("dtype", "f16"))
    if t is None:
        return None, f"no torch conv for dtype {p.get('dtype')} in this column"
    torch.backends.cudnn.allow_tf32 = False
    groups = p.get("groups", 1) or 1
    stride, pad, dil = _pair(p, "stride", 1), _pair(p, "pad", 0), _pair(p, "dilation", 1)
    last = torch.channels_last
    x = torch.randn(p["n"], p["c"], p["h"], p["w"], dtype=t, device="cuda").to(memory_format=last)
    w = torch.randn(p["k"], p["c"] // groups, p["r"], p["s"], dtype=t, device="cuda").to(
        memory_format=last)
    y = torch.nn.functional.conv2d(x, w, None, stride, pad, dil, groups)
    dy = torch.randn_like(y).to(memory_format=last)
    grad = torch.nn.grad
    ops = {
        "fprop": lambda: torch.nn.functional.conv2d(x, w, None, stride, pad, dil, groups),
        "dgrad": lambda: grad.conv2d_input(x.shape, w, dy, stride, pad, dil, groups),
        "wgrad": lambda: grad.conv2d_weight(x, w.shape, dy, stride, pad, dil, groups),
    }
    if p["pass"] not in ops:
        return None, f"unknown conv pass {p['pass']}"
    return ops[p["pass"]], None


def measure(torch, race, reps, log=print):
    """The torch column for the race's problems: {version, cuda, cudnn, settings, rows}; a row
    {kind, problem, ok, why_not, median_ms ..., tflops, percent_of_peak}."""
    device = (race or {}).get("device") or {}
    peaks = device.get("peak_tflops") or {}
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or device.get("l2_bytes") or L2_FALLBACK_BYTES
    timer = _timer(torch, int(l2))
    rows = []
    for kind, make, flops in (("gemm", _gemm_op, gemm_flops), ("conv", _conv_op, conv_flops)):
        for race_row in (race or {}).get(kind, []):
            p = race_row["problem"]
            row = {"kind": kind, "problem": p, "ok": False, "why_not": None}
            try:
                op, why = make(torch, p)
                if op is None:
                    row["why_not"] = why
                else:
                    log(f"bench/gpu: torch, {kind} {p['name']}")
                    row.update(spread(timer(op, reps)))
                    row["ok"] = True
                    row["tflops"] = flops(p) / (row["median_ms"] * 1e-3) / 1e12
                    peak = peaks.get(p.get("dtype", "f16"))
                    row["percent_of_peak"] = (100.0 * row["tflops"] / peak) if peak else None
            except Exception as e:  # out of memory, an unsupported shape: said, not fatal
                row["why_not"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            finally:
                torch.cuda.empty_cache()
            rows.append(row)
    torch.backends.cuda.matmul.allow_tf32 = False
    return {"version": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "settings": "tf32 rows with torch.backends.cuda.matmul.allow_tf32 = True (off for "
                        "the others); cudnn.benchmark off (cuDNN's heuristics, torch's default); "
                        f"L2 flush buffer {2 * int(l2) >> 20} MiB; {WARMUP} warm-up runs",
            "rows": rows}
