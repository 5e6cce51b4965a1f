"""Argument parsing and dispatch for `langgraph-context`; every failure is one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from langgraph_context.cli._errors import CLIError

_Handler = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise CLIError(f"{self.prog}: {message} (see --help)", exit_code=2)


def _options(args: argparse.Namespace) -> Any:
    from langgraph_context.cli.chat import ModelOptions  # noqa: PLC0415 - lazy: fast --help

    return ModelOptions(model=args.model, base_url=args.base_url, factory=args.model_factory)


def _run_demo(args: argparse.Namespace) -> int:
    from langgraph_context.cli.demo import run_demo  # noqa: PLC0415 - lazy: fast --help

    return run_demo(workspace=args.workspace, options=_options(args))


def _run_chat(args: argparse.Namespace) -> int:
    from langgraph_context.cli.chat import run_chat  # noqa: PLC0415 - lazy: fast --help

    return run_chat(
        options=_options(args),
        db=args.db,
        thread=args.thread,
        window=args.window,
        prices=args.prices,
    )


def _prices(text: str) -> Any:
    """`--prices` read by `report.parse_prices`; argparse names the option in its error."""
    from langgraph_context.cli.report import parse_prices  # noqa: PLC0415 - lazy: fast --help
    from langgraph_context.errors import LangGraphContextError  # noqa: PLC0415

    try:
        return parse_prices(text)
    except LangGraphContextError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _add_prices_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prices",
        type=_prices,
        default=None,
        help="cost the calls at these USD per 1M tokens: a JSON file or "
        "input=2,cached_input=0.5,output=8[,cache_write=2.5]",
    )


def _run_report(args: argparse.Namespace) -> int:
    from langgraph_context.cli.chat import DEFAULT_DB  # noqa: PLC0415 - lazy: fast --help
    from langgraph_context.cli.report import run_report  # noqa: PLC0415

    return run_report(db=args.db or DEFAULT_DB, thread=args.thread, prices=args.prices)


def _add_model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="model name (default: $LGC_MODEL or gpt-4o-mini)")
    parser.add_argument(
        "--base-url", help="OpenAI-compatible endpoint (default: $LGC_BASE_URL/$OPENAI_BASE_URL)"
    )
    parser.add_argument(
        "--model-factory",
        help="a model factory registered via $LGC_MODEL_FACTORIES (default: openai)",
    )


def _run_xray(args: argparse.Namespace) -> int:
    from langgraph_context.cli.xray import run_xray  # noqa: PLC0415 - lazy: keep --help fast

    return run_xray(
        args.file,
        query=args.query,
        budget=args.budget,
        fmt=args.format,
        index=args.index,
        as_json=args.json,
        show_context=args.show_context,
        show_snapshot=args.show_snapshot,
    )


def _run_bench(args: argparse.Namespace) -> int:
    from langgraph_context.cli.bench import run_bench  # noqa: PLC0415 - lazy: keep --help fast

    return run_bench(args.names, quick=args.quick, out=args.out, data=args.data)


def build_parser() -> argparse.ArgumentParser:
    """Build the parser with one sub-command per job."""
    parser = _Parser(
        prog="langgraph-context",
        description="Context engineering for LangGraph agents.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    demo = sub.add_parser("demo", help="run the offline showcase (no API key needed)")
    demo.add_argument(
        "--workspace", type=Path, default=Path.cwd(), help="folder the agent explores"
    )
    _add_model_flags(demo)
    demo.set_defaults(handler=_run_demo)
    chat = sub.add_parser("chat", help="chat with the context agent (needs a model)")
    _add_model_flags(chat)
    chat.add_argument("--db", type=Path, default=None, help="SQLite file for threads")
    chat.add_argument("--thread", default="default", help="thread id to continue or start")
    chat.add_argument("--window", type=int, default=16_000, help="model context window in tokens")
    _add_prices_flag(chat)
    chat.set_defaults(handler=_run_chat)
    report = sub.add_parser(
        "report", help="a saved chat thread's session report: calls, cache hit rate, cost"
    )
    report.add_argument("--db", type=Path, default=None, help="SQLite file the chat saved to")
    report.add_argument("--thread", default="default", help="thread id (default: default)")
    _add_prices_flag(report)
    report.set_defaults(handler=_run_report)
    xray = sub.add_parser("xray", help="tokens, validity, context and compaction of a transcript")
    xray.add_argument(
        "file", type=Path, help="OpenAI JSON, Claude Code JSONL or OpenHands trajectory JSON"
    )
    xray.add_argument("--query", default=None, help="query to build for (default: last user)")
    xray.add_argument("--budget", type=int, default=4000, help="token budget (default 4000)")
    xray.add_argument(
        "--format",
        choices=("auto", "openai", "claude", "openhands"),
        default="auto",
        help="transcript format (auto: by extension and content)",
    )
    xray.add_argument("--index", type=int, default=0, help="trajectory to take from a list")
    xray.add_argument("--json", action="store_true", help="print a JSON summary")
    xray.add_argument(
        "--show-context", action="store_true", help="print the assembled context as well"
    )
    xray.add_argument(
        "--show-snapshot", action="store_true", help="print the compaction's state snapshot"
    )
    xray.set_defaults(handler=_run_xray)
    bench = sub.add_parser("bench", help="run the benchmarks and write a report with plots")
    bench.add_argument("--quick", action="store_true", help="smaller samples, a smoke run")
    bench.add_argument(
        "--out", type=Path, default=None, help="report folder (default benchmarks/results/report)"
    )
    bench.add_argument(
        "--data",
        type=Path,
        default=None,
        help="shared data folder holding locomo/, claude-code-sessions/, tau-bench-airline/ "
        "(default: $LGC_DATA_DIR, else ../shared/data beside the checkout)",
    )
    bench.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    bench.set_defaults(handler=_run_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: Arguments (defaults to `sys.argv[1:]`).

    Returns:
        The process exit code: 0 on success, 1 on a failed command, 2 on bad usage.
    """
    try:
        args = build_parser().parse_args(argv)
        handler: _Handler = args.handler
        return handler(args)
    except CLIError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
