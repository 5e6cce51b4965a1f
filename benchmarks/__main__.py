"""Run every benchmark in turn: `python -m benchmarks [--quick]`.

Each benchmark prints its own table and writes `benchmarks/results/<name>.json`.
`--quick` passes each benchmark its smoke-run options (smaller samples); the full run
takes about ten minutes on two cores.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

# name -> extra arguments for a quick run
BENCHMARKS: dict[str, list[str]] = {
    "tokens": [],
    "imports": ["--runs", "5"],
    "locomo": [],
    "compaction": ["--quick"],
    "turns": ["--quick"],
    "notes": ["--sizes", "1000", "--queries", "20"],
    "injection": [],
    "agents": ["--turns", "10"],
    "bill": ["--quick"],
    "scale": ["--quick"],
}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks as subprocesses; return non-zero if any failed."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="smaller samples, a smoke run")
    parser.add_argument("names", nargs="*", help=f"which to run: {', '.join(BENCHMARKS)}")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}")
    failed = []
    for name in args.names or list(BENCHMARKS):
        extra = BENCHMARKS[name] if args.quick else []
        print(f"\n=== benchmarks.{name} {' '.join(extra)}", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, "-m", f"benchmarks.{name}", *extra])
        print(f"=== benchmarks.{name}: exit {code} in {time.perf_counter() - started:.0f} s")
        if code:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
