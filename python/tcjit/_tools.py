"""The tools of the command line as functions: explain, resolve, tune and the kernel database,
each returning what the command prints with --json, parsed (one schema: docs/cli.md,
docs/schemas/; docs/python.md, "Tools")."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Iterable, Optional, Union

from . import _tcjit

PathLike = Union[str, os.PathLike, None]


def _path(db: PathLike) -> str:
    return "" if db is None else os.fspath(db)


def _specs_text(specs: Union[str, Iterable[str]]) -> str:
    """A spec, a workload's text, a workload file's path, or a list of specs, as workload text."""
    if isinstance(specs, os.PathLike) or isinstance(specs, str) and "\n" not in specs and \
            not specs.lstrip().startswith(("gemm", "conv")) and os.path.isfile(specs):
        with open(specs, encoding="utf-8") as f:
            return f.read()
    if isinstance(specs, str):
        return specs
    return "\n".join(specs)


def explain(spec: Union[str, Iterable[str]], *, arch: str = "sm_80", db: PathLike = None) -> Any:
    """What `tcjit explain --json` says of a spec: its implicit GEMM, roofline, alignment, the
    tensor-core rules it breaks and the config the runtime would compile. A dict for one spec,
    a list of dicts for a workload (several specs).

    Example::

        >>> tcjit.explain("gemm m=64 n=64 k=64 a=f16 b=f16:col")["compiles"]
        True
    """
    result = json.loads(_tcjit.explain(_specs_text(spec), arch=arch, db_path=_path(db)))
    return result[0] if len(result) == 1 and isinstance(spec, str) else result


def resolve(spec: Union[str, Iterable[str]], *, db: PathLike = None, arch: str = "sm_80",
            backend: str = "llvm") -> Any:
    """What `tcjit resolve --json` says: the kernels a runtime preparing the spec would get from
    the database (tuned, stored or the heuristic's), without compiling or writing anything. A
    dict for one spec, a list for a workload."""
    result = json.loads(_tcjit.resolve(_specs_text(spec), db_path=_path(db), arch=arch,
                                       backend=backend))
    return result[0] if len(result) == 1 and isinstance(spec, str) else result


class _ProgressBar:
    """A one-line progress display on stderr (tqdm's look, no dependency), redrawn at most ten
    times a second."""

    def __init__(self) -> None:
        self._last = 0.0
        self._width = 0

    def __call__(self, kind: str, index: int, count: int, name: str, text: str, done: int,
                 planned: int, failed: int, best_config: str, best_us: float,
                 elapsed: float) -> None:
        if kind == "setup":
            return
        if kind == "finished":
            self._show(f"[{index}/{count}] {name}: {text}", end="\n")
            return
        now = time.monotonic()
        if kind == "progress" and now - self._last < 0.1:
            return
        self._last = now
        filled = int(20 * done / planned) if planned else 0
        bar = "#" * filled + "-" * (20 - filled)
        best = f" best {best_us:.2f} us {best_config}" if best_config else ""
        rate = f" {done / elapsed:.1f} it/s" if elapsed > 0 and done else ""
        self._show(f"[{index}/{count}] {name} |{bar}| {done}/{planned}{rate}{best}")

    def _show(self, line: str, end: str = "") -> None:
        pad = max(0, self._width - len(line))
        sys.stderr.write("\r" + line + " " * pad + end)
        sys.stderr.flush()
        self._width = 0 if end else len(line)


def tune(workload_or_specs: Union[str, Iterable[str]], *, budget: Union[int, str] = 24,
         db: PathLike = None, device: str = "auto", arch: str = "auto",
         strategy: str = "model-topk", backend: str = "llvm", retune: bool = False,
         jobs: int = 0, seed: int = 1, progress: Optional[bool] = None) -> list:
    """Tunes each distinct problem into the kernel database, as `tcjit tune` does; returns
    `tcjit tune --json`'s list (one dict per problem). budget: configs per problem, or a time
    ("90s", "10m"). progress: a progress bar on stderr (default: when stderr is a terminal).
    Without a GPU each time is the cost model's prediction, every candidate verified on the
    emulator. Ctrl-C stops after the candidate being measured (what is done is stored).

    Example::

        >>> rows = tcjit.tune("gemm m=128 n=128 k=64 a=f16 b=f16:col", budget=4, db="/tmp/k.db")
        >>> rows[0]["best"]["config"]
        '...'
    """
    if progress is None:
        progress = sys.stderr.isatty()
    text = _tcjit.tune(_specs_text(workload_or_specs), db_path=_path(db), budget=str(budget),
                       device=device, arch=arch, strategy=strategy, backend=backend,
                       retune=retune, jobs=jobs, seed=seed,
                       on_event=_ProgressBar() if progress else None)
    return json.loads(text)


class Database:
    """A kernel database (SQLite), read as `tcjit db` reads it: ls(), show(key), export(). It is
    opened read-only by each call; nothing is written.

    Example::

        >>> db = tcjit.Database("/tmp/k.db")
        >>> [row["key"] for row in db.ls()]
    """

    def __init__(self, path: PathLike = None):
        self.path = _path(path) or _tcjit.default_db_path()

    def __repr__(self) -> str:
        return f"tcjit.Database({self.path!r})"

    def ls(self) -> list:
        """`tcjit db ls --json`: one dict per stored problem (key, hash, op, dtype, arch, shape,
        the decided config and time...)."""
        return json.loads(_tcjit.db_ls(self.path))

    def show(self, key: str, *, arch: str = "") -> dict:
        """`tcjit db show KEY --json`: a problem (its key, hash, or a spec) with its results,
        binaries and dispatch tables. Raises NotFoundError when it is not stored."""
        return json.loads(_tcjit.db_show(self.path, key, arch))

    def export(self) -> list:
        """`tcjit db export`: every record (problems, binaries, results, dispatch tables,
        calibrations) as a list of dicts, one per JSON Lines record."""
        return [json.loads(line) for line in _tcjit.db_export(self.path).splitlines() if line]
