"""Correctness on the device: the verification matrix (bench/workloads/device_matrix.tcjit) run
with `tcjit run - --device cuda --json` for each backend, and the gpu-labelled GoogleTest binary.
Every failure is kept with its spec, config and backend."""

import json
import os
import re

from . import procs

SINGLE_CASE_LIMIT = 240  # seconds for one case rerun alone
LABEL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*:\s*(\S.*)$")


def read_matrix(path, quick):
    """The matrix's entries: [{name, spec, config (None: heuristic), quick}] in file order; with
    quick, only the lines marked `#@ quick`. Every line must carry a label (the report names each
    failure by it)."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text, _, comment = line.partition("#")
            if not text.strip():
                continue
            m = LABEL.match(text)
            if not m:
                raise ValueError(f"{path}:{number}: a matrix line needs a label (name: spec)")
            marks = comment[1:].strip() if comment.startswith("@") else ""
            config = None
            if "config=" in marks:
                marks, _, config = marks.partition("config=")
                config = config.strip() or None
            is_quick = "quick" in marks.split()
            if quick and not is_quick:
                continue
            entries.append({"name": m.group(1), "spec": m.group(2).strip(), "config": config,
                            "quick": is_quick})
    return entries


def groups_by_config(entries):
    """[(config or None, [entries])] in first-appearance order: one `tcjit run` per group."""
    groups = {}
    for e in entries:
        groups.setdefault(e["config"], []).append(e)
    return list(groups.items())


def workload_text(entries):
    return "".join(f"{e['name']}: {e['spec']}\n" for e in entries)


def _outcome(entry, backend, record):
    """One case's outcome from `tcjit run --json`'s object (or None: no object for it)."""
    out = {"name": entry["name"], "spec": entry["spec"], "backend": backend,
           "config_forced": entry["config"], "result": "error"}
    if record is None:
        out["error"] = "tcjit run gave no result for this case"
        return out
    out["result"] = record.get("result", "error")
    out["config"] = record.get("config") or entry["config"]
    verify = record.get("verify") or {}
    for key in ("elements", "mismatches", "max_abs_error", "worst_error_over_tolerance"):
        if key in verify:
            out[key] = verify[key]
    for key in ("failure", "error", "kernel"):
        if record.get(key):
            out[key] = record[key]
    return out


def run_group(tcjit, backend, config, entries, db, timeout, env=None):
    """Runs one group in one process; returns the outcomes. A process that dies or prints no
    JSON (a crash, a timeout) gets its cases rerun one by one, so that one bad kernel does not
    hide the others' results."""
    cmd = [tcjit, "run", "-", "--device", "cuda", "--backend", backend, "--json", "--db", db]
    if config:
        cmd += ["--config", config]
    done = procs.run(cmd, timeout, stdin=workload_text(entries), env=env)
    records = _parse_run_json(done.stdout)
    if records is not None:
        by_name = {r.get("name"): r for r in records if isinstance(r, dict)}
        return [_outcome(e, backend, by_name.get(e["name"])) for e in entries]
    why = procs.describe_failure(done, timeout)
    if len(entries) == 1:
        out = _outcome(entries[0], backend, None)
        out["error"] = f"tcjit run {why}"
        return [out]
    results = []
    for e in entries:  # one case compiles and verifies in seconds: a hang costs less alone
        results += run_group(tcjit, backend, config, [e], db, min(timeout, SINGLE_CASE_LIMIT), env)
    return results


def _parse_run_json(text):
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, list) else None


def run_matrix(tcjit, entries, db, backends, timeout_per_group, log=print, env=None):
    """Every entry on every backend: {cases, ok, failures: [...], by_backend: {b: {ok, failed}},
    outcomes: [...]}."""
    outcomes = []
    for backend in backends:
        for config, group in groups_by_config(entries):
            log(f"bench/gpu: correctness, {backend}: {len(group)} case(s) at "
                f"{config or 'the heuristic config'}")
            outcomes += run_group(tcjit, backend, config, group, db, timeout_per_group, env)
    return summarize(outcomes, backends)


def summarize(outcomes, backends):
    by_backend = {b: {"ok": 0, "failed": 0, "error": 0} for b in backends}
    for o in outcomes:
        kind = o["result"] if o["result"] in ("ok", "failed") else "error"
        by_backend.setdefault(o["backend"], {"ok": 0, "failed": 0, "error": 0})[kind] += 1
    failures = [o for o in outcomes if o["result"] != "ok"]
    return {"cases": len(outcomes), "ok": len(outcomes) - len(failures), "failures": failures,
            "by_backend": by_backend, "outcomes": outcomes}


def run_gtest(binary, json_path, timeout, env=None):
    """The gpu-labelled test binary with --gtest_output=json: {binary, tests, failed, skipped,
    failures: [{test, message}], skipped_tests: [{test, message}]} or {binary, error}. Skip
    reasons come from its output (GoogleTest's JSON has none)."""
    done = procs.run([binary, f"--gtest_output=json:{json_path}"], timeout, env=env)
    try:
        with open(json_path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        started = [line[13:].strip() for line in done.stdout.splitlines()
                   if line.startswith("[ RUN      ] ")]
        last = f" (the last test started: {started[-1]})" if started else ""
        return {"binary": binary, "error": f"{os.path.basename(binary)} "
                f"{procs.describe_failure(done, timeout)}; it wrote no JSON report{last}"}
    result = read_gtest_json(doc, skip_reasons(done.stdout))
    result["binary"] = binary
    if done.returncode != 0 and not result["failures"]:
        result["failures"].append({"test": "(the binary)",
                                   "message": procs.describe_failure(done, timeout)})
        result["failed"] += 1
    return result


def skip_reasons(stdout):
    """{test: message} of GTEST_SKIP() << message, from GoogleTest's console output."""
    reasons, current, lines = {}, None, []
    for line in (stdout or "").splitlines():
        if line.startswith("[ RUN      ] "):
            current, lines = line[13:].strip(), []
        elif line.startswith("[  SKIPPED ] ") and current and line[13:].startswith(current):
            reasons[current] = " ".join(x.strip() for x in lines if x.strip() and
                                        not x.strip().endswith(": Skipped"))
            current = None
        elif current:
            lines.append(line)
    return reasons


def read_gtest_json(doc, reasons=None):
    tests = failed = skipped = 0
    failures, skipped_tests = [], []
    for suite in doc.get("testsuites", []):
        for test in suite.get("testsuite", []):
            name = f"{suite.get('name')}.{test.get('name')}"
            tests += 1
            messages = [f.get("failure", "") for f in test.get("failures", [])]
            if messages:
                failed += 1
                failures.append({"test": name, "message": "\n".join(messages)})
            elif test.get("result") == "SKIPPED":
                skipped += 1
                skipped_tests.append({"test": name, "message": (reasons or {}).get(name, "")})
    return {"tests": tests, "failed": failed, "skipped": skipped, "failures": failures,
            "skipped_tests": skipped_tests}
