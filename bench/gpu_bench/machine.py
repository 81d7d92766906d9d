"""The machine a run measured on: the GPU (from tcjit_gpu_bench info), the CUDA toolkit and driver
tcjit found (tcjit doctor --json), tcjit's version and the host."""

import json
import os
import platform
import socket

from . import procs


def doctor(tcjit, timeout=60, env=None):
    """`tcjit doctor --json` as a dict, or {"error": ...}."""
    done = procs.run([tcjit, "doctor", "--json"], timeout, env=env)
    try:
        doc = json.loads(done.stdout)
        if isinstance(doc, dict):
            return doc
    except ValueError:
        pass
    return {"error": f"tcjit doctor {procs.describe_failure(done, timeout)}"}


def gpu_from_doctor(doc):
    """(gpus, problem): the GPUs doctor lists, or why there is none."""
    driver = doc.get("driver") or {}
    if "error" in doc:
        return [], doc["error"]
    if not driver.get("found"):
        problem = driver.get("problem") or "no CUDA driver"
        return [], problem.split("; use --device")[0]  # tcjit's own advice is not bench/gpu's
    gpus = driver.get("gpus") or []
    return gpus, (None if gpus else "the CUDA driver sees no GPU")


def toolkit(doc):
    """{piece: "version at path"} of the toolkit doctor found."""
    out = {}
    for piece, found in (doc.get("toolkit") or {}).items():
        if isinstance(found, dict) and found.get("found"):
            out[piece] = " ".join(x for x in (found.get("version"), found.get("path")) if x)
        elif isinstance(found, dict):
            out[piece] = "not found"
    return out


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def host():
    return {"hostname": socket.gethostname(), "os": platform.platform(), "cpu": cpu_name(),
            "cpus": os.cpu_count(), "python": platform.python_version()}


def describe(device, doc, tcjit_version):
    driver = (doc.get("driver") or {}) if isinstance(doc, dict) else {}
    return {"gpu": device, "driver_version": driver.get("version"),
            "toolkit": toolkit(doc if isinstance(doc, dict) else {}),
            "tcjit": tcjit_version, "host": host()}
