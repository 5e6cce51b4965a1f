"""The `langgraph-context` command line: demo, chat, xray and bench.

Also home of the settings read from the environment (`cli.models`), which the served
graphs in `graphs/` use. The commands themselves load only when `main` runs.
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line with `argv` (default: `sys.argv[1:]`) and return its exit code."""
    from langgraph_context.cli._main import main as run  # noqa: PLC0415 - keeps imports lazy

    return run(argv)
