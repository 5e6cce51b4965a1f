"""The `langgraph-context` command line: demo, chat, xray and bench."""

from langgraph_context.cli._main import main

__all__ = ["main"]
