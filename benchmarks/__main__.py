"""Run every benchmark in turn: `python -m benchmarks [--quick] [--data DIR] [names]`.

Each benchmark runs as its own process, writes `benchmarks/results/<name>.json` and
its printed tables to `benchmarks/results/logs/<name>.log` (shown when it ends). The
runner draws a progress bar per stage with an ETA: from the counts the benchmark
reports (`benchmarks._progress.track`), and for the whole run from the durations of
the last run (`benchmarks/results/durations.json`). `--quick` passes each benchmark
its smoke-run options. Benchmarks that need the shared data are skipped, with a
one-line hint naming the datasets and where they come from, when it is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import REPO, RESULTS, data_dir
from benchmarks._progress import ENV
from benchmarks._view import LiveView, PlainView, View

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
    "lean": ["--quick"],
    "recall": ["--quick"],
}
# the shared datasets: folder -> what it is and where it comes from
DATASETS = {
    "locomo": "LoCoMo (github.com/snap-research/locomo, data/locomo10.zip)",
    "claude-code-sessions": "Claude Code sessions (github.com/marot/spotter, test/fixtures)",
    "tau-bench-airline": "tau-bench airline (github.com/sierra-research/tau-bench, "
    "historical_trajectories/gpt-4o-airline.json)",
}
NEEDS = {
    "locomo": ("locomo",),
    "compaction": ("claude-code-sessions", "tau-bench-airline"),
    "turns": ("claude-code-sessions",),
    "bill": ("claude-code-sessions", "tau-bench-airline"),
}
DURATIONS = RESULTS / "durations.json"
LOGS = RESULTS / "logs"


def data_hint(folder: Path, missing: list[str]) -> str:
    """One line naming the missing datasets, where they come from and how to point at them."""
    wanted = "; ".join(DATASETS[m] for m in missing)
    folders = ", ".join(f"{m}/" for m in missing)
    return f"data: {folder} has no {folders}. Get {wanted}; then pass --data DIR or LGC_DATA_DIR."


def _durations(quick: bool) -> dict[str, float]:
    try:
        return dict(json.loads(DURATIONS.read_text())["quick" if quick else "full"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _save_durations(quick: bool, measured: dict[str, float]) -> None:
    try:
        saved = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        saved = {}
    mode = "quick" if quick else "full"
    saved[mode] = {**saved.get(mode, {}), **measured}
    DURATIONS.parent.mkdir(parents=True, exist_ok=True)
    DURATIONS.write_text(json.dumps(saved, indent=1) + "\n")


def _read_events(path: Path, offset: int) -> tuple[dict[str, Any] | None, int]:
    """The newest progress event appended since `offset`, and the new offset."""
    try:
        with path.open(encoding="utf-8") as handle:
            handle.seek(offset)
            lines = handle.read().splitlines()
            offset = handle.tell()
    except OSError:
        return None, offset
    for line in reversed(lines):
        try:
            return dict(json.loads(line)), offset
        except ValueError:
            continue
    return None, offset


def run_stage(name: str, extra: list[str], view: View, folder: Path) -> int:
    """Run one benchmark as a process, feeding its progress events to `view`."""
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{name}.log"
    events = folder / f"{name}.jsonl"
    env = {**os.environ, ENV: str(events)}
    command = [sys.executable, "-m", f"benchmarks.{name}", *extra]
    offset = 0
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        while process.poll() is None:
            time.sleep(0.25)
            event, offset = _read_events(events, offset)
            view.update(name, event)
    event, offset = _read_events(events, offset)
    view.update(name, event)
    view.output(log.read_text(encoding="utf-8", errors="replace"))
    return process.returncode


def _chosen(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    """The benchmarks to run; those needing absent data are dropped (or refused if named)."""
    folder = data_dir()
    chosen = args.names or list(BENCHMARKS)
    missing = sorted({d for n in chosen for d in NEEDS.get(n, ()) if not (folder / d).exists()})
    if not missing:
        return chosen
    print(data_hint(folder, missing), flush=True)
    blocked = [n for n in chosen if set(NEEDS.get(n, ())) & set(missing)]
    if args.names:
        parser.exit(2, f"cannot run {', '.join(blocked)} without that data\n")
    print(f"skipped: {', '.join(blocked)}", flush=True)
    return [n for n in chosen if n not in blocked]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks as subprocesses with progress; return non-zero if any failed."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="smaller samples, a smoke run")
    parser.add_argument("--data", type=Path, help="the shared data folder (or $LGC_DATA_DIR)")
    parser.add_argument("names", nargs="*", help=f"which to run: {', '.join(BENCHMARKS)}")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}")
    if args.data is not None:
        if not args.data.is_dir():
            parser.error(f"--data {args.data}: not a folder")
        os.environ["LGC_DATA_DIR"] = str(args.data.resolve())
    chosen = _chosen(args, parser)
    expected = _durations(args.quick)
    view: View = LiveView() if sys.stdout.isatty() else PlainView()
    failed, measured = [], {}
    with tempfile.TemporaryDirectory() as folder, view.running(chosen, expected):
        for name in chosen:
            view.start(name)
            started = time.monotonic()
            code = run_stage(name, BENCHMARKS[name] if args.quick else [], view, Path(folder))
            measured[name] = round(time.monotonic() - started, 1)
            view.finish(name, code, measured[name], LOGS / f"{name}.log")
            if code:
                failed.append(name)
    _save_durations(args.quick, {n: s for n, s in measured.items() if n not in failed})
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
