"""Import time of the package: now versus a baseline commit.

`python -m benchmarks.imports [--baseline REV] [--runs N]` times, in fresh
interpreters, `import langgraph_context` and the import a user writes to build an
agent (`from langgraph_context import create_context_agent`), for this checkout and
for the package as it was at `REV` (default: the commit before the package redesign),
extracted with `git archive`. Prints medians in milliseconds and writes
`benchmarks/results/imports.json`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from benchmarks._common import REPO, write_result

BASELINE = "6430678"  # main before the "One house" redesign
STATEMENTS = {
    "import langgraph_context": "import langgraph_context",
    "from langgraph_context import create_context_agent": (
        "from langgraph_context import create_context_agent"
    ),
}
TIMER = "import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"


def _extract(rev: str, into: Path) -> Path:
    """Write the package as it was at `rev` into `into`; return the folder to put on sys.path."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev, "langgraph_context"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _median_ms(root: Path, statement: str, runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(root)}
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", TIMER.format(stmt=statement)],
            check=True,
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
        )
        times.append(float(out.stdout.strip()) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Time the imports and print a table; return 0."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.imports")
    parser.add_argument("--baseline", default=BASELINE, help="git revision to compare with")
    parser.add_argument("--runs", type=int, default=15, help="fresh interpreters per figure")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        roots = {"now": REPO, f"baseline {args.baseline}": _extract(args.baseline, Path(tmp))}
        figures = {
            label: {name: _median_ms(root, stmt, args.runs) for name, stmt in STATEMENTS.items()}
            for label, root in roots.items()
        }
    base = figures[f"baseline {args.baseline}"]
    print(f"median of {args.runs} fresh interpreters, ms")
    print(f"{'statement':<55} {'baseline':>9} {'now':>9} {'ratio':>7}")
    for name in STATEMENTS:
        now = figures["now"][name]
        print(f"{name:<55} {base[name]:>9.0f} {now:>9.0f} {now / base[name]:>7.2f}")
    write_result("imports", {"runs": args.runs, "baseline": args.baseline, "ms": figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
