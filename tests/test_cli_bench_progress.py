"""`langgraph-context bench`: progress with ETA, `--data` with a hint, narrow tables, all sessions.

The CLI runs the real runner (`python -m benchmarks`) as a subprocess; these tests go
through `main([...])` and read what the user would see on the terminal.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

import benchmarks.__main__ as runner
from benchmarks import _view
from benchmarks._progress import ENV, Steps, track
from benchmarks.compaction.__main__ import table
from langgraph_context.cli import main
from langgraph_context.cli._main import build_parser
from langgraph_context.cli.bench import REPORT_NAME, write_report


def test_bench_with_a_data_folder_lacking_the_datasets_prints_one_hint(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """`bench turns --data EMPTY` names the missing dataset and where it comes from, then fails."""
    empty = tmp_path / "data"
    empty.mkdir()
    code = main(["bench", "--quick", "turns", "--data", str(empty), "--out", str(tmp_path / "r")])
    out, err = capfd.readouterr()
    assert code == 2
    hints = [line for line in out.splitlines() if line.startswith("data:")]
    assert len(hints) == 1
    assert "claude-code-sessions/" in hints[0]
    assert "github.com/marot/spotter" in hints[0]
    assert "--data DIR or LGC_DATA_DIR" in hints[0]
    assert "cannot run turns without that data" in err
    assert err.strip().endswith("error: no benchmark was run (see the line above)")
    assert not (tmp_path / "r" / REPORT_NAME).exists()


def test_bench_data_that_is_not_a_folder_is_one_error_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A `--data` path that does not exist is refused before anything runs."""
    code = main(["bench", "tokens", "--data", str(tmp_path / "nowhere")])
    err = capfd.readouterr().err.strip().splitlines()
    assert code == 1
    assert err == [f"error: --data {tmp_path / 'nowhere'}: no such folder (the shared data: see "
                   "`bench --help`)"]  # fmt: skip


def test_runner_skips_only_the_benchmarks_that_need_absent_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run all with no data: the data benchmarks are skipped after the hint, the rest run."""
    monkeypatch.setattr(runner, "BENCHMARKS", {"tokens": [], "locomo": [], "compaction": []})
    ran: list[str] = []
    monkeypatch.setattr(runner, "run_stage", lambda name, *a: ran.append(name) or 0)
    monkeypatch.setattr(runner, "DURATIONS", tmp_path / "durations.json")
    empty = tmp_path / "data"
    empty.mkdir()
    assert runner.main(["--data", str(empty)]) == 0
    out = capsys.readouterr().out
    assert ran == ["tokens"]
    assert "skipped: locomo, compaction" in out
    assert "LoCoMo (github.com/snap-research/locomo" in out
    assert "tau-bench airline (github.com/sierra-research/tau-bench" in out


def test_quick_bench_shows_each_stage_with_its_eta(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A real `bench --quick tokens` prints the stage's start with the run's ETA and its end."""
    assert main(["bench", "--quick", "tokens", "--out", str(tmp_path / "r")]) == 0
    out = capfd.readouterr().out
    assert "[1/1] tokens: started (run eta " in out
    assert "[1/1] tokens: ok in " in out
    assert "text throughput" in out  # the benchmark's own figures are shown when it ends


def test_plain_progress_gives_the_loop_eta_from_its_counts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Half of a loop done in 20 s: the stage line says 20 s remain, and the run's ETA."""
    now = [1000.0]
    monkeypatch.setattr(_view.time, "monotonic", lambda: now[0])
    view = _view.PlainView()
    with view.running(["compaction", "turns"], {"compaction": 60.0, "turns": 15.0}):
        view.start("compaction")
        view.update("compaction", {"label": "replaying", "done": 0, "total": 10})
        now[0] += 20
        view.update("compaction", {"label": "replaying", "done": 5, "total": 10})
        view.finish("compaction", 0, 40.0, Path("log"))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[1/2] compaction: started (run eta 1m15s)"
    assert lines[1] == "  compaction: replaying 5/10 (50%), eta 20s; run eta 35s"
    assert lines[2] == "[1/2] compaction: ok in 40s"


def test_track_writes_counts_for_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`track` yields every item and reports the final count to the runner's file."""
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv(ENV, str(events))
    assert list(track(range(3), "items")) == [0, 1, 2]
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert lines[0] == {"label": "items", "done": 0, "total": 3}
    assert lines[-1] == {"label": "items", "done": 3, "total": 3}


def _session(n: int) -> dict[str, Any]:
    full = [100 * (i + 1) for i in range(n)]
    return {
        "calls": n,
        "compactions": 1,
        "invalid_views": 0,
        "full": full,
        "compacted": [min(v, 300) for v in full],
        "total_full": sum(full),
        "total_compacted": sum(min(v, 300) for v in full),
    }


def test_report_plots_every_session_and_keeps_tables_narrow(tmp_path: Path) -> None:
    """Five sessions are all plotted; no report line is wider than 120 and no cell is None."""
    turns = {"window": 1000, "trigger": 0.8, "target": 0.5}
    turns["sessions"] = {f"s{i}": _session(4 + i) for i in range(5)}  # type: ignore[assignment]
    long_name = "ours (node+summary, prose only)"
    rows = [
        {"method": long_name, "budget": 0.25, "points": 3, "invalid": 0, "over_budget": 0,
         "retention_pct": 98.4, "needed_retention_pct": None,
         "tokens_after_pct_budget_median": 91.2, "latency_ms_median": 3.1},
    ]  # fmt: skip
    generated = [
        {"method": long_name, "histories": 5, "inputs_invalid": 2, "invalid_outputs": 0,
         "errors": 0, "silent_overflows": 0, "over_budget_though_feasible": 0},
    ]  # fmt: skip
    results = tmp_path / "results"
    results.mkdir()
    (results / "turns.json").write_text(json.dumps(turns))
    compaction = {"claude-code-sessions": {"rows": rows}, "generated": generated}
    (results / "compaction.json").write_text(json.dumps(compaction))
    text = write_report(results, tmp_path / "out").read_text()
    assert "Plotted: `s0`, `s1`, `s2`, `s3`, `s4`." in text
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "None" not in text
    assert f"| {long_name} | 25% | 3 | 0 | 0 | 98.4 | - | 91.2 | 3.1 |" in text
    assert (tmp_path / "out" / REPORT_NAME).is_file()


def test_compaction_benchmark_tables_are_narrow_with_dashes_for_nothing() -> None:
    """The printed table of the compaction benchmark fits 120 columns; no `None (0)` cells."""
    row = {
        "method": "ours (node+summary, prose only)", "budget": 0.25, "points": 24, "errors": 0,
        "invalid": 0, "over_budget": 1, "over_reported": 1,
        "tokens_after_pct_budget_median": 97.3, "latency_ms_median": 12.5,
        "latency_ms_p95": 40.2, "early_key_facts": 1234, "retention_pct": None,
    }  # fmt: skip
    text = table([row], list(row))
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "None" not in text
    assert text.splitlines()[2].split()[-1] == "-"


def test_docs_cli_covers_every_subcommand_and_flag() -> None:
    """docs/cli.md has a section per sub-command and names each of its flags."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        assert re.search(rf"^### .*`langgraph-context {name}", doc, re.M), name
        flags = [o for a in command._actions for o in a.option_strings if o.startswith("--")]
        missing = [f for f in flags if f != "--help" and f not in doc]
        assert missing == [], f"{name}: {missing}"


def test_steps_report_counts_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Steps` writes its start and its last count for the runner."""
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv(ENV, str(events))
    steps = Steps("questions", 3)
    for _ in range(3):
        steps.advance()
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert lines[0] == {"label": "questions", "done": 0, "total": 3}
    assert lines[-1] == {"label": "questions", "done": 3, "total": 3}
