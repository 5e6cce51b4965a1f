"""`langgraph-context bench`: run the benchmarks, then write a Markdown report with plots.

The benchmarks live next to the package in a source checkout (`benchmarks/`); they are
run as `python -m benchmarks` from the repository root and leave JSON in
`benchmarks/results/`. The report reads those files: recall vs budget per method
(`locomo.json`), tokens per model call with and without compaction (`turns.json`),
fact retention vs budget per method (`compaction.json`), and the scalar figures of
the other benchmarks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langgraph_context.cli._errors import CLIError

__all__ = ["REPORT_NAME", "repo_root", "run_bench", "write_report"]

REPORT_NAME = "report.md"
_NOT_RUN = 2  # the runner's exit code when it refuses to start (argparse's usage error)
_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def repo_root(package_dir: Path | None = None) -> Path:
    """Return the source checkout holding the package and its `benchmarks/`.

    Args:
        package_dir: The installed `langgraph_context` folder (default: this one).

    Returns:
        The repository root.

    Raises:
        CLIError: If no `benchmarks` package sits next to the package (not a checkout).
    """
    root = (package_dir if package_dir is not None else _PACKAGE_DIR).parent
    if not (root / "benchmarks" / "__main__.py").is_file():
        msg = (
            f"no benchmarks/ next to the installed package ({root}): "
            "`bench` needs a source checkout (git clone, then pip install -e .)"
        )
        raise CLIError(msg)
    return root


def _pyplot() -> Any:
    try:
        import matplotlib  # noqa: PLC0415 - optional dependency, loaded on demand
    except ImportError as exc:
        msg = "matplotlib is required for the plots: pip install 'langgraph-context[dev]'"
        raise CLIError(msg) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 - after choosing the backend

    return plt


def _load(results: Path, name: str) -> dict[str, Any] | None:
    path = results / f"{name}.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CLIError(f"{path}: cannot read the results ({exc})") from exc
    if not isinstance(data, dict):
        raise CLIError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _thousands() -> Any:
    from matplotlib.ticker import FuncFormatter  # noqa: PLC0415 - matplotlib is optional

    return FuncFormatter(lambda value, _pos: f"{value:,.0f}")


def _cell(value: Any) -> str:
    """A table cell: nothing measured is a dash, never `None`."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value)


def _md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def _locomo(plt: Any, data: Mapping[str, Any], out: Path) -> list[str]:
    recall: Mapping[str, Mapping[str, float]] = data.get("recall", {})
    if not recall:
        return []
    budgets = sorted({int(b) for row in recall.values() for b in row})
    fig, ax = plt.subplots(figsize=(10, 5))
    for method, row in recall.items():
        xs = [b for b in budgets if str(b) in row]
        style = "-o" if method.startswith("ours") else "--."
        ax.plot(
            xs,
            [row[str(b)] for b in xs],
            style,
            label=method,
            linewidth=2 if method.startswith("ours") else 1.2,
        )
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(budgets, [f"{b:,}" for b in budgets])
    ax.set_xlabel("context budget (cl100k tokens)")
    ax.set_ylabel("evidence recall")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"LoCoMo: evidence recall vs budget ({data.get('questions', '?')} questions)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(out / "locomo_recall.png", dpi=120, bbox_inches="tight")
    plt.close(fig)
    lines = [
        "## Evidence recall vs budget (LoCoMo)",
        "",
        "![recall vs budget](locomo_recall.png)",
        "",
    ]
    rows = [
        [m, *(f"{r.get(str(b), float('nan')):.3f}" for b in budgets)] for m, r in recall.items()
    ]
    return lines + _md_table(["method", *(f"{b:,}" for b in budgets)], rows)


def _turns(plt: Any, data: Mapping[str, Any], out: Path) -> list[str]:
    sessions: Mapping[str, Mapping[str, Any]] = data.get("sessions", {})
    if not sessions:
        return []
    shown = list(sessions.items())  # every session: a plot that drops one hides it
    columns = 2 if len(shown) > 1 else 1
    rows_n = -(-len(shown) // columns)
    fig, axes = plt.subplots(rows_n, columns, figsize=(7 * columns, 3.4 * rows_n), squeeze=False)
    for ax in axes.flat[len(shown) :]:
        ax.set_visible(False)
    window = data.get("window")
    for ax, (name, session) in zip(axes.flat, shown, strict=False):
        full, compacted = session.get("full", []), session.get("compacted", [])
        ax.plot(range(1, len(full) + 1), full, color="tab:red", label="without compaction")
        ax.plot(range(1, len(compacted) + 1), compacted, color="tab:green", label="with compaction")
        if window:
            ax.axhline(window, color="grey", linestyle=":", label=f"window {window:,}")
        ax.set_title(f"session {name}: tokens sent per model call")
        ax.set_xlabel("model call")
        ax.set_ylabel("tokens")
        ax.yaxis.set_major_formatter(_thousands())
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out / "turns_tokens.png", dpi=120)
    plt.close(fig)
    lines = [
        "## Tokens per model call, with and without compaction",
        "",
        f"Window {window}, trigger {data.get('trigger')}, target {data.get('target')}.",
        "",
        "![tokens per call](turns_tokens.png)",
        "",
        f"Plotted: {', '.join(f'`{name}`' for name, _ in shown)}.",
        "",
    ]
    rows = []
    for name, s in sessions.items():
        full, comp = s.get("total_full", 0), s.get("total_compacted", 0)
        saved = f"{1 - comp / full:.0%}" if full else ""
        rows.append(
            [
                name,
                s.get("calls"),
                s.get("compactions"),
                s.get("invalid_views"),
                f"{full:,}",
                f"{comp:,}",
                saved,
            ]
        )
    header = ["session", "calls", "compactions", "invalid", "sent (full)", "sent (ours)", "saved"]
    return lines + _md_table(header, rows)


def _compaction(plt: Any, data: Mapping[str, Any], out: Path) -> list[str]:
    datasets = [
        (label, data[label]["rows"])
        for label in ("claude-code-sessions", "tau-bench-airline")
        if isinstance(data.get(label), Mapping) and data[label].get("rows")
    ]
    if not datasets:
        return []
    fig, axes = plt.subplots(1, len(datasets), figsize=(6.5 * len(datasets), 4.8), squeeze=False)
    for ax, (label, rows) in zip(axes[0], datasets, strict=True):
        methods: dict[str, list[tuple[float, float]]] = {}
        for row in rows:
            if row.get("retention_pct") is not None:
                methods.setdefault(row["method"], []).append((row["budget"], row["retention_pct"]))
        for method, points in methods.items():
            points.sort()
            ours = method.startswith("ours")
            ax.plot(
                [100 * b for b, _ in points],
                [v for _, v in points],
                "-o" if ours else "--.",
                label=method,
            )
        ax.set_title(f"{label}: early key facts kept")
        ax.set_xlabel("budget (% of the full history)")
        ax.set_ylabel("retention (%)")
        ax.set_ylim(0, 102)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "compaction_retention.png", dpi=120)
    plt.close(fig)
    lines = [
        "## Compaction: fact retention vs budget",
        "",
        "![retention vs budget](compaction_retention.png)",
        "",
        "Retention is the share of early key facts (ids, paths, errors) still present",
        "after compaction; `over` counts points where a method's output exceeded the",
        "budget (a retention bought by overflowing is not a win). `kept %` is retention,",
        "`needed %` retention where the history exceeded the budget, `size %` the median",
        "tokens after as a share of the budget, `ms` the median latency.",
        "",
    ]
    columns = {
        "budget": "budget", "points": "points", "invalid": "invalid",
        "over_budget": "over", "retention_pct": "kept %", "needed_retention_pct": "needed %",
        "tokens_after_pct_budget_median": "size %", "latency_ms_median": "ms",
    }  # fmt: skip
    for label, rows in datasets:
        lines += [f"### {label}", ""]
        table = [
            [r.get("method"), *(_budget(r.get(c)) if c == "budget" else r.get(c) for c in columns)]
            for r in rows
        ]
        lines += _md_table(["method", *columns.values()], table)
    generated = data.get("generated")
    if isinstance(generated, list) and generated:
        keys = [k for k in generated[0] if k != "method"]
        lines += ["### generated messy histories", ""]
        lines += _md_table(
            ["method", *(_SHORT.get(k, k) for k in keys)],
            [[g.get("method"), *(g.get(k) for k in keys)] for g in generated],
        )
    return lines


_SHORT = {
    "inputs_invalid": "bad inputs",
    "invalid_outputs": "invalid",
    "silent_overflows": "silent over",
    "over_budget_though_feasible": "over, feasible",
}


def _budget(value: Any) -> Any:
    return f"{value:.0%}" if isinstance(value, float) else value


_MAX_FIGURES = 40


def _flatten(data: Mapping[str, Any], prefix: str = "") -> list[list[Any]]:
    """Scalar leaves of nested objects as `[dotted.key, value]` rows (lists are skipped)."""
    rows: list[list[Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            rows += _flatten(value, f"{name}.")
        elif isinstance(value, (int, float, str, bool)):
            text = str(value).replace("|", "\\|").replace("\n", " ")
            rows.append([name, text])
    return rows


def _scalars(name: str, data: Mapping[str, Any]) -> list[str]:
    rows = _flatten(data)
    if not rows:
        return []
    lines = [f"## {name}", "", *_md_table(["figure", "value"], rows[:_MAX_FIGURES])]
    if len(rows) > _MAX_FIGURES:
        lines += [f"... {len(rows) - _MAX_FIGURES} more figures in `{name}.json`.", ""]
    return lines


def write_report(results: Path, out: Path) -> Path:
    """Write `report.md` and its PNG plots into `out` from the JSON files in `results`.

    Args:
        results: Folder holding `<benchmark>.json` files.
        out: Folder for the report (created if missing).

    Returns:
        The path of the Markdown report.

    Raises:
        CLIError: If matplotlib is missing, a results file is unreadable, or no
            results are found.
    """
    plt = _pyplot()
    found = sorted(p.stem for p in results.glob("*.json")) if results.is_dir() else []
    if not found:
        raise CLIError(f"no benchmark results (*.json) in {results}: run the benchmarks first")
    _report_folder(out)
    lines = ["# langgraph-context benchmark report", "", f"Results read from `{results}`.", ""]
    plotted = {"locomo": _locomo, "turns": _turns, "compaction": _compaction}
    for name, section in plotted.items():
        data = _load(results, name)
        if data is not None:
            lines += section(plt, data, out)
    for name in found:
        if name not in plotted:
            data = _load(results, name)
            if data is not None:
                lines += _scalars(name, data)
    report = out / REPORT_NAME
    try:
        report.write_text("\n".join(lines), encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot write {report}: {exc}") from exc
    return report


def _report_folder(out: Path) -> Path:
    """Create the report folder now, so a bad `--out` fails before the long run."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"cannot use --out {str(out)!r} as the report folder: {exc}"
        raise CLIError(msg) from exc
    return out


def run_bench(
    names: Sequence[str], *, quick: bool = False, out: Path | None = None, data: Path | None = None
) -> int:
    """Run the benchmarks from the source checkout, then write the report.

    Args:
        names: Benchmarks to run (empty: all).
        quick: Pass `--quick` (smaller samples).
        out: Report folder (default `benchmarks/results/report/`).
        data: The shared data folder (default `$LGC_DATA_DIR`, else `../shared/data`
            beside the checkout). Benchmarks needing data it lacks are skipped with a
            one-line hint naming the datasets and where they come from.

    Returns:
        0 on success.

    Raises:
        CLIError: If this is not a source checkout, matplotlib is missing, `out`
            cannot be a folder (checked before running), `data` is not a folder, the
            runner refused to start (exit 2: a named benchmark lacks its data), or a
            benchmark failed (the report is still written from what exists).
    """
    root = repo_root()
    known = sorted(p.parent.name for p in (root / "benchmarks").glob("*/__main__.py"))
    unknown = [n for n in names if n not in known]
    if unknown:
        msg = f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(known)}"
        raise CLIError(msg, exit_code=2)
    _pyplot()  # fail before a long run, not after it
    if data is not None and not data.is_dir():
        raise CLIError(f"--data {data}: no such folder (the shared data: see `bench --help`)")
    results = root / "benchmarks" / "results"
    folder = _report_folder(out if out is not None else results / "report")
    command = [sys.executable, "-m", "benchmarks", *(["--quick"] if quick else [])]
    command += [*(["--data", str(data.resolve())] if data is not None else []), *names]
    code = subprocess.call(command, cwd=root)
    if code == _NOT_RUN:  # the runner refused (e.g. named benchmarks lack their data)
        raise CLIError("no benchmark was run (see the line above)", exit_code=_NOT_RUN)
    report = write_report(results, folder)
    print(f"wrote {report}")
    if code:
        raise CLIError(f"benchmarks failed (exit {code}); the report covers the results on disk")
    return 0
