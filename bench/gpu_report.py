#!/usr/bin/env python3
"""Redraws a bench/gpu report from its results JSON: <stamp>.md and the PNG charts (with
matplotlib), and a copy of the JSON when --out is another folder.

    python3 bench/gpu_report.py --from bench/results/2026-11-27-gpu.json [--out DIR]

Exit status: 0 written, 2 bad command line or a file that is not a bench/gpu results JSON."""

import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from gpu_bench import report  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser(prog="bench/gpu_report.py", description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="source", required=True, metavar="RESULTS.json",
                        help="a results JSON written by bench/gpu")
    parser.add_argument("--out", metavar="DIR", help="where to write (default: the JSON's folder)")
    args = parser.parse_args(argv)
    try:
        doc = report.load(args.source)
    except report.ResultsError as e:
        print(f"bench/gpu_report.py: error: {args.source}: {e}", file=sys.stderr)
        return 2
    out = args.out or os.path.dirname(os.path.abspath(args.source))
    if os.path.exists(out) and not os.path.isdir(out):
        print(f"bench/gpu_report.py: error: --out {out} is not a folder", file=sys.stderr)
        return 2
    for path in report.write(doc, out):
        print(f"bench/gpu_report.py: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
