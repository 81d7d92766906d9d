"""docs/python.md's examples run as they are written: every ```python block, in order, in one
namespace (as a reader pastes them one after the other)."""

import pathlib
import re

import pytest

from conftest import tcjit  # noqa: F401 - skips the file when the module is not built

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_examples_run(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 5
    monkeypatch.setenv("TCJIT_DB", str(tmp_path / "kernels.db"))
    namespace = {}
    try:
        for block in blocks:
            exec(compile(block, str(DOC), "exec"), namespace)
    finally:
        tcjit.set_default_runtime(None)


def test_help_shows_an_example():
    assert "Example::" in tcjit.matmul.__doc__ and "tcjit.matmul(a, b" in tcjit.matmul.__doc__
    for name in tcjit.__all__:
        obj = getattr(tcjit, name)
        if callable(obj):
            assert obj.__doc__, f"tcjit.{name} has no docstring"
