"""Helpers shared by the benchmarks: data location, timing, result files."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"


def data_dir() -> Path:
    """Return the shared data folder (`LGC_DATA_DIR` or `../shared/data` beside the repo)."""
    return Path(os.environ.get("LGC_DATA_DIR", REPO.parent / "shared" / "data")).resolve()


def median_ms(fn: Callable[[], Any], *, repeat: int = 7) -> float:
    """Run `fn` `repeat` times; return the median wall time in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def write_result(name: str, payload: dict[str, Any]) -> Path:
    """Write a benchmark's figures to `benchmarks/results/<name>.json`."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    return path
