#!/bin/sh
# run_filecheck.sh FILECHECK CHECKFILE OUT [--append FILE] -- COMMAND [ARGS...]
#
# Runs COMMAND with its standard output and error in OUT (a command that fails fails the test,
# its output shown), appends FILE after it when given (the PTX that `tcjit compile -o FILE`
# wrote, then the report it printed, in that order in OUT), and checks OUT with FileCheck:
#   - the CHECK lines of CHECKFILE, in order (the default prefix);
#   - when CHECKFILE has FILE-NOT lines, those over the whole of OUT (`--check-prefix=FILE`):
#     a CHECK-NOT only covers the range between its neighbouring matches, a FILE-NOT everything.
# Registered by tests/codegen/filecheck/filecheck_tests.cmake.
set -u
filecheck=$1
checkfile=$2
out=$3
shift 3
append=
if [ "${1:-}" = "--append" ]; then
  append=$2
  shift 2
fi
[ "${1:-}" = "--" ] && shift
rm -f "$out" ${append:+"$append"}
if ! "$@" >"$out.cmd" 2>&1; then
  echo "run_filecheck.sh: the command failed: $*" >&2
  cat "$out.cmd" >&2
  exit 1
fi
if [ -n "$append" ]; then
  cat "$append" "$out.cmd" >"$out" || exit 1
else
  cat "$out.cmd" >"$out" || exit 1
fi
rm -f "$out.cmd"
"$filecheck" --input-file "$out" "$checkfile" || exit 1
if grep -q 'FILE-NOT:' "$checkfile"; then
  "$filecheck" --input-file "$out" --check-prefix=FILE "$checkfile" || exit 1
fi
exit 0
