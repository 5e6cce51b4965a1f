"""`langgraph-context bench`: the report writer, the checkout check and one real quick run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from langgraph_context.cli import bench, main
from langgraph_context.cli._errors import CLIError
from langgraph_context.cli.bench import REPORT_NAME, repo_root, write_report

PNG = b"\x89PNG\r\n\x1a\n"

LOCOMO = {
    "questions": 10,
    "recall": {
        "recency": {"500": 0.1, "1000": 0.2, "2000": 0.3},
        "ours (no embeddings)": {"500": 0.7, "1000": 0.8, "2000": 0.9},
    },
}
TURNS = {
    "window": 1000,
    "trigger": 0.8,
    "target": 0.5,
    "sessions": {
        "s1": {
            "calls": 4,
            "compactions": 1,
            "invalid_views": 0,
            "full": [100, 600, 900, 1200],
            "compacted": [100, 600, 400, 700],
            "total_full": 2800,
            "total_compacted": 1800,
        }
    },
}
COMPACTION = {
    "claude-code-sessions": {
        "rows": [
            {"method": "ours (rules)", "budget": 0.25, "retention_pct": 98.0, "points": 3},
            {"method": "ours (rules)", "budget": 0.5, "retention_pct": 99.0, "points": 3},
            {"method": "trim_messages", "budget": 0.25, "retention_pct": 40.0, "points": 3},
            {"method": "trim_messages", "budget": 0.5, "retention_pct": None, "points": 0},
        ]
    },
    "generated": [{"method": "ours (rules)", "histories": 5, "invalid_outputs": 0}],
}


def _results(folder: Path, **files: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        text = data if isinstance(data, str) else json.dumps(data)
        (folder / f"{name}.json").write_text(text, encoding="utf-8")
    return folder


def _fake_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A source tree with a `benchmarks/tokens` package and results, used as the checkout."""
    root = tmp_path / "repo"
    (root / "langgraph_context").mkdir(parents=True)
    for folder in (root / "benchmarks", root / "benchmarks" / "tokens"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__main__.py").write_text("", encoding="utf-8")
    _results(root / "benchmarks" / "results", tokens={"tokens_per_second": 5})
    monkeypatch.setattr(bench, "_PACKAGE_DIR", root / "langgraph_context")
    return root


def test_report_has_plots_and_tables(tmp_path: Path) -> None:
    """All three plots are written as PNGs and the report links them and tabulates figures."""
    results = _results(
        tmp_path / "results",
        locomo=LOCOMO,
        turns=TURNS,
        compaction=COMPACTION,
        tokens={"tokens_per_second": 123, "nested": {"depth": 1, "pipe": "a|b"}, "xs": [1, 2]},
    )
    report = write_report(results, tmp_path / "out")
    assert report == tmp_path / "out" / REPORT_NAME
    for png in ("locomo_recall.png", "turns_tokens.png", "compaction_retention.png"):
        assert (tmp_path / "out" / png).read_bytes().startswith(PNG), png
    text = report.read_text(encoding="utf-8")
    assert "![recall vs budget](locomo_recall.png)" in text
    assert "| ours (no embeddings) | 0.700 | 0.800 | 0.900 |" in text
    assert "| s1 | 4 | 1 | 0 | 2,800 | 1,800 | 36% |" in text
    assert "### claude-code-sessions" in text
    assert "### generated messy histories" in text
    assert "| tokens_per_second | 123 |" in text
    assert "| nested.depth | 1 |" in text
    assert "| nested.pipe | a\\|b |" in text
    assert "xs" not in text


def test_long_scalar_lists_are_capped(tmp_path: Path) -> None:
    """A benchmark with many figures shows the first 40 and says how many more there are."""
    results = _results(tmp_path / "results", many={f"k{i:02}": i for i in range(45)})
    text = write_report(results, tmp_path / "out").read_text(encoding="utf-8")
    assert "| k39 | 39 |" in text
    assert "k40" not in text
    assert "... 5 more figures in `many.json`." in text


def test_report_skips_missing_benchmarks(tmp_path: Path) -> None:
    """With only scalar results, no plot is drawn and the figures are still listed."""
    results = _results(tmp_path / "results", notes={"p50_ms": 1.5}, locomo={"questions": 0})
    report = write_report(results, tmp_path / "out")
    assert not list((tmp_path / "out").glob("*.png"))
    assert "| p50_ms | 1.5 |" in report.read_text(encoding="utf-8")


def test_report_without_results_fails(tmp_path: Path) -> None:
    """An empty or missing results folder is a clear error."""
    with pytest.raises(CLIError, match="no benchmark results"):
        write_report(tmp_path / "absent", tmp_path / "out")


def test_report_with_broken_json_fails(tmp_path: Path) -> None:
    """A corrupt results file is named in the error."""
    results = _results(tmp_path / "results", locomo="{nope")
    with pytest.raises(CLIError, match=r"locomo\.json: cannot read the results"):
        write_report(results, tmp_path / "out")


def test_report_with_non_object_json_fails(tmp_path: Path) -> None:
    """A results file that is not a JSON object is rejected."""
    results = _results(tmp_path / "results", turns=[1, 2])
    with pytest.raises(CLIError, match="expected a JSON object, got list"):
        write_report(results, tmp_path / "out")


def test_missing_matplotlib_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without matplotlib, bench fails before running anything, with one line."""
    _fake_checkout(tmp_path, monkeypatch)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    called: list[Any] = []
    monkeypatch.setattr(bench.subprocess, "call", lambda *a, **k: called.append(a) or 0)
    assert main(["bench", "tokens"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: matplotlib is required for the plots: pip install 'langgraph-context[dev]'"
    ]
    assert called == []


def test_not_a_source_checkout_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An installed package without benchmarks/ beside it fails with one line."""
    monkeypatch.setattr(bench, "_PACKAGE_DIR", tmp_path / "site-packages" / "langgraph_context")
    assert main(["bench"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "needs a source checkout" in err[0]
    with pytest.raises(CLIError, match="no benchmarks/ next to the installed package"):
        repo_root(tmp_path / "x" / "langgraph_context")


def test_unknown_benchmark_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A benchmark name that does not exist exits 2 and lists the valid ones."""
    _fake_checkout(tmp_path, monkeypatch)
    assert main(["bench", "tokens", "speed"]) == 2
    assert (
        capsys.readouterr().err.strip() == "error: unknown benchmark(s) speed; choose from tokens"
    )


def test_bench_runs_from_the_root_and_writes_the_default_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Benchmarks run as `python -m benchmarks` in the checkout; the report goes in results/."""
    root = _fake_checkout(tmp_path, monkeypatch)
    seen: list[tuple[list[str], Path]] = []

    def call(command: list[str], *, cwd: Path) -> int:
        seen.append((command, cwd))
        return 0

    monkeypatch.setattr(bench.subprocess, "call", call)
    assert main(["bench", "--quick", "tokens"]) == 0
    assert seen == [([sys.executable, "-m", "benchmarks", "--quick", "tokens"], root)]
    report = root / "benchmarks" / "results" / "report" / REPORT_NAME
    assert f"wrote {report}" in capsys.readouterr().out
    assert "| tokens_per_second | 5 |" in report.read_text(encoding="utf-8")


def test_failed_benchmark_still_writes_the_report_then_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failing benchmark exits 1 with one line, after writing the report from what exists."""
    _fake_checkout(tmp_path, monkeypatch)
    monkeypatch.setattr(bench.subprocess, "call", lambda *a, **k: 3)
    out = tmp_path / "report"
    assert main(["bench", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        "error: benchmarks failed (exit 3); the report covers the results on disk"
    )
    assert (out / REPORT_NAME).is_file()


def test_quick_tokens_benchmark_end_to_end(tmp_path: Path) -> None:
    """A real `bench --quick tokens` runs the benchmark and reports its figures."""
    try:
        repo_root()
    except CLIError:
        pytest.skip("not a source checkout")
    out = tmp_path / "report"
    assert main(["bench", "--quick", "tokens", "--out", str(out)]) == 0
    text = (out / REPORT_NAME).read_text(encoding="utf-8")
    assert "## tokens" in text
    assert "| tokens_per_second |" in text


def test_out_that_is_a_file_fails_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out` naming a file is one error line, and no benchmark is run for nothing."""
    _fake_checkout(tmp_path, monkeypatch)
    called: list[Any] = []
    monkeypatch.setattr(bench.subprocess, "call", lambda *a, **k: called.append(a) or 0)
    out = tmp_path / "taken"
    out.write_text("not a folder", encoding="utf-8")
    assert main(["bench", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: cannot use --out")
    assert called == []
