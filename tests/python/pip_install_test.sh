#!/usr/bin/env bash
# `pip install .` from the checkout into a fresh venv (no PYTHONPATH, nothing of build/), then the
# README's Python example run from another folder, and the wheel's contents: the package, its
# stubs, the module and libtcjit.so, and no second copy of LLVM.
# Usage: pip_install_test.sh SOURCE_DIR WORK_DIR PYTHON
set -euo pipefail
src="$1" work="$2" python="$3"
rm -rf "$work"
mkdir -p "$work"
"$python" -m venv "$work/venv"
unset PYTHONPATH
start=$(date +%s)
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "$src"
echo "pip install .: $(( ($(date +%s) - start) / 60 )) min"
pkg=$("$work/venv/bin/python" -c "import tcjit, os; print(os.path.dirname(tcjit.__file__))")
case "$pkg" in "$work"/venv/*) ;; *) echo "tcjit imported from $pkg, not the venv" >&2; exit 1 ;; esac
for f in __init__.py _tcjit.pyi py.typed libtcjit.so.0.1; do
  [ -f "$pkg/$f" ] || { echo "the installed package lacks $f" >&2; exit 1; }
done
ls "$pkg"/_tcjit*.so >/dev/null
if ls "$pkg" | grep -qi llvm; then echo "the package holds a copy of LLVM" >&2; exit 1; fi
readelf -d "$pkg"/_tcjit*.so | grep -q 'R.*PATH.*\$ORIGIN' || { echo "no RUNPATH \$ORIGIN" >&2; exit 1; }
# The README's example, as a user runs it.
example=$(awk '/^<!-- python-example -->/ {on=1; next} on && /^```python/ {code=1; next}
               code && /^```/ {exit} code {print}' "$src/README.md")
[ -n "$example" ] || { echo "README.md has no python-example block" >&2; exit 1; }
cd "$work"
TCJIT_DB="$work/kernels.db" "$work/venv/bin/python" -c "$example"
