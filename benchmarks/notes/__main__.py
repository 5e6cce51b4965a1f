"""Note search latency (file and LangGraph-store backends) and terminal `grep -rn` speed.

Run from the repository root:

    .venv/bin/python -m benchmarks.notes [--sizes 1000 10000] [--queries 50]

Prints a table and writes `benchmarks/results/notes.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from langgraph.store.memory import InMemoryStore

from langgraph_context.notebook import FileNotebookStore, LangGraphNotebookStore, Note
from langgraph_context.notebook.base import NOTE_TYPES
from langgraph_context.notebook.format import render_note
from langgraph_context.tools.terminal import Terminal

RESULTS = Path(__file__).resolve().parents[1] / "results" / "notes.json"
WORDS = [
    "cache",
    "pool",
    "timeout",
    "retry",
    "parser",
    "schema",
    "index",
    "migration",
    "token",
    "budget",
    "context",
    "summary",
    "compaction",
    "planner",
    "agent",
    "store",
    "thread",
    "checkpoint",
    "latency",
    "error",
    "blocker",
    "deploy",
    "queue",
    "worker",
    "lock",
    "file",
    "rename",
    "atomic",
    "yaml",
    "markdown",
    "search",
    "rank",
    "score",
    "relevance",
    "vector",
    "embedding",
    "chunk",
    "prompt",
    "model",
    "tool",
    "message",
    "history",
    "window",
    "memory",
    "constraint",
    "issue",
    "test",
    "failure",
    "flaky",
    "network",
    "database",
    "postgres",
    "sqlite",
    "config",
    "user",
    "project",
    "branch",
    "merge",
]


def _note(rng: random.Random, i: int) -> Note:
    title = " ".join(rng.choices(WORDS, k=4))
    body = " ".join(rng.choices(WORDS, k=rng.randint(40, 120)))
    stamp = f"2025-01-{1 + i % 28:02d}T{i % 24:02d}:00:00.000000+00:00"
    tags = tuple(dict.fromkeys(rng.choices(WORDS, k=2)))
    return Note(f"note_bench_{i:06d}", title, body, rng.choice(NOTE_TYPES), tags, stamp, stamp)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _latencies(store: Any, queries: list[str], **filters: Any) -> dict[str, float]:
    samples = []
    for query in queries:
        start = time.perf_counter()
        store.search(query, limit=10, **filters)
        samples.append(time.perf_counter() - start)
    samples.sort()
    return {
        "p50_ms": _ms(statistics.median(samples)),
        "p95_ms": _ms(samples[int(0.95 * (len(samples) - 1))]),
    }


def bench_file_store(size: int, queries: list[str], workdir: Path) -> dict[str, Any]:
    rng = random.Random(size)
    root = workdir / f"file-{size}"
    root.mkdir()
    for i in range(size):
        (root / f"note_bench_{i:06d}.md").write_text(render_note(_note(rng, i)), encoding="utf-8")
    start = time.perf_counter()
    store = FileNotebookStore(root)
    store.list(limit=1)  # first open: parse every file, rebuild the index
    cold_open = time.perf_counter() - start
    start = time.perf_counter()
    store.search(queries[0])
    first = time.perf_counter() - start
    warm = _latencies(store, queries)
    filtered = _latencies(store, queries, note_type="blocker")
    start = time.perf_counter()
    for i in range(50):
        store.create(f"new {i}", "fresh body", note_type="action")
    create = (time.perf_counter() - start) / 50
    return {
        "backend": "file",
        "notes": size,
        "open_rebuild_ms": _ms(cold_open),
        "first_search_ms": _ms(first),
        "search": warm,
        "search_blocker_filter": filtered,
        "create_ms": _ms(create),
    }


def bench_langgraph_store(size: int, queries: list[str]) -> dict[str, Any]:
    rng = random.Random(size)
    base = InMemoryStore()
    namespace = ("notes", "bench")
    for i in range(size):
        note = _note(rng, i)
        base.put(namespace, note.id, note.to_dict(), index=False)
    store = LangGraphNotebookStore(base, namespace=namespace)
    start = time.perf_counter()
    store.search(queries[0])
    first = time.perf_counter() - start
    return {
        "backend": "langgraph-inmemory",
        "notes": size,
        "first_search_ms": _ms(first),
        "search": _latencies(store, queries),
        "search_blocker_filter": _latencies(store, queries, note_type="blocker"),
    }


def bench_grep(workdir: Path, files: int = 10_000) -> dict[str, Any]:
    root = workdir / "tree"
    per_dir = 100
    for d in range(files // per_dir):
        folder = root / f"d{d:03d}"
        folder.mkdir(parents=True)
        for f in range(per_dir):
            text = f"alpha\nneedle {d}-{f}\nomega\n" + "filler line\n" * 20
            (folder / f"f{f:03d}.txt").write_text(text)
    terminal = Terminal(root)
    runs = {}
    for command in [
        "grep -rn needle .",
        "grep -rl needle . | wc -l",
        "grep -rc omega . | tail -n 1",
    ]:
        start = time.perf_counter()
        result = terminal.run(command)
        runs[command] = {
            "seconds": round(time.perf_counter() - start, 3),
            "truncated": result.truncated,
            "output_bytes": len(result.output.encode()),
            "exit_code": result.exit_code,
        }
    return {
        "files": files,
        "timeout_s": terminal.timeout,
        "cap": terminal.max_output_chars,
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(0)
    queries = [" ".join(rng.choices(WORDS, k=rng.randint(1, 4))) for _ in range(args.queries)]
    workdir = Path(tempfile.mkdtemp(prefix="lgc-notes-bench-"))
    try:
        search = []
        for size in args.sizes:
            search.append(bench_file_store(size, queries, workdir))
            search.append(bench_langgraph_store(size, queries))
        grep = bench_grep(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"{'backend':<20}{'notes':>7}{'open ms':>10}{'1st ms':>9}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'p50 flt':>9}{'create ms':>11}"
    )
    for row in search:
        print(
            f"{row['backend']:<20}{row['notes']:>7}{row.get('open_rebuild_ms', '-'):>10}"
            f"{row['first_search_ms']:>9}{row['search']['p50_ms']:>9}{row['search']['p95_ms']:>9}"
            f"{row['search_blocker_filter']['p50_ms']:>9}{row.get('create_ms', '-'):>11}"
        )
    print(
        f"\nterminal over {grep['files']} files (timeout {grep['timeout_s']}s, cap {grep['cap']} B)"
    )
    for command, run in grep["runs"].items():
        print(
            f"  {command:<32} {run['seconds']:>6.3f}s  truncated={run['truncated']}"
            f"  bytes={run['output_bytes']}"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    payload = {"search": search, "grep": grep, "queries": args.queries, "cpu_count": os.cpu_count()}
    RESULTS.write_text(json.dumps(payload, indent=2))
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
