"""The tools: explain, resolve, tune and the database, with the JSON of the command line's --json
(the same documents: checked against `tcjit ... --json` where the CLI is built)."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

from conftest import random_array, tcjit

SPEC = "gemm m=64 n=64 k=64 a=f16 b=f16:col"
CLI = pathlib.Path(os.environ.get("TCJIT_CLI", ""))


def test_explain_is_the_clis_json():
    doc = tcjit.explain(SPEC)
    assert doc["compiles"] is True and doc["flops"] == 2 * 64 ** 3
    assert doc["spec"].startswith("gemm m=64 n=64 k=64 batch=1")
    assert isinstance(tcjit.explain([SPEC, SPEC.replace("64", "128", 1)]), list)
    if CLI.is_file():
        out = subprocess.run([str(CLI), "explain", "--json", SPEC], check=True,
                             capture_output=True, text=True).stdout
        assert json.loads(out) == [doc]


def test_tune_resolve_and_database(db_path):
    rows = tcjit.tune(SPEC, budget=2, db=db_path, device="emu", progress=False)
    assert len(rows) == 1
    row = rows[0]["sizes"][0]
    assert row["config"] and row["provenance"] == "predicted"
    resolved = tcjit.resolve(SPEC, db=db_path)
    assert resolved["kernels"][0]["origin"].startswith("tuned")
    db = tcjit.Database(db_path)
    listed = db.ls()
    assert resolved["kernels"][0]["config"] == row["config"]
    assert [r["hash"] for r in listed] == [resolved["hash"]] == [row["key"]]
    shown = db.show(listed[0]["hash"])
    assert shown["key"] == listed[0]["key"] and len(shown["results"]) == 2  # budget=2
    records = db.export()
    assert records[0]["type"] == "tcjit-kernels-db"
    assert sum(1 for r in records if r.get("hash") == row["key"]) == 1  # the problem
    with pytest.raises(tcjit.NotFoundError):
        db.show("gemm m=8 n=8 k=8 a=f16 b=f16")
    if CLI.is_file():
        out = subprocess.run([str(CLI), "db", "ls", "--json", "--db", db_path], check=True,
                             capture_output=True, text=True).stdout
        assert json.loads(out) == listed


def test_a_tuned_config_serves_the_runtime(db_path):
    rows = tcjit.tune(SPEC, budget=2, db=db_path, device="emu", progress=False)
    rt = tcjit.Runtime(device="emu", db=db_path)
    op = rt.prepare(SPEC)
    assert op.origin == "database"
    rng = np.random.default_rng(20)
    a = random_array((64, 64), np.float16, rng)
    b = random_array((64, 64), np.float16, rng, "F")
    d = op(a, b)
    assert np.array_equal(d, (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16))
    assert op.config == rows[0]["sizes"][0]["config"]


def test_progress_bar(db_path, capsys):
    tcjit.tune(SPEC, budget=2, db=db_path, device="emu", progress=True)
    err = capsys.readouterr().err
    assert "[1/1]" in err and "|" in err
