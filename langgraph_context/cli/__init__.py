"""The `langgraph-context` command line: demo, chat, report, xray and bench.

Also home of the settings read from the environment (`cli.models`), which the served
graphs in `graphs/` use. The commands themselves load only when `main` runs.
"""

from __future__ import annotations

__all__ = ["main"]


_CLI_MODULES = ("rich", "langgraph.checkpoint.sqlite")


def _missing_modules() -> list[str]:
    """The `cli` extra's modules that are not installed."""
    import importlib.util  # noqa: PLC0415 - keeps `import langgraph_context.cli` light

    missing = []
    for name in _CLI_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    return missing


def main(argv: list[str] | None = None) -> int:
    """Run the command line with `argv` (default: `sys.argv[1:]`) and return its exit code."""
    import sys  # noqa: PLC0415

    missing = _missing_modules()
    if missing:
        print(
            f"langgraph-context: the command line needs {', '.join(missing)}: "
            "pip install 'langgraph-context[cli]'",
            file=sys.stderr,
        )
        return 2
    from langgraph_context.cli._main import main as run  # noqa: PLC0415 - keeps imports lazy

    return run(argv)
