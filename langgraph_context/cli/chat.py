"""`langgraph-context chat`: talk to the context agent on an OpenAI-compatible model.

Each turn runs `create_context_agent` (plan, note and constraint tools; the context
middleware assembling every model call; the compaction middleware guarding the window)
with threads persisted in SQLite. While the agent works a spinner runs and each tool
call and its result are shown as one line; after each answer, how much of the window the
model was sent and whether the history was compacted. A failed model call (network, key,
rate limit) is printed as one line and the session goes on. Type `/compact` to compact
the history before the next model call, `/exit` (or end the input) to leave; the
thread's session report (`agents.session_report`) is printed on the way out.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_context.agents import (
    CompactionMiddleware,
    SessionMiddleware,
    create_context_agent,
    session_report,
)
from langgraph_context.cli._errors import CLIError
from langgraph_context.cli._render import console, usage_bar
from langgraph_context.cli.models import (
    API_KEY_ENV_VARS,
    BASE_URL_ENV_VARS,
    DEFAULT_MODEL_FACTORY,
    MODEL_ENV_VAR,
    resolve_chat_model,
)
from langgraph_context.compaction.options import DEFAULT_REQUEST_KEY
from langgraph_context.messages import content_text
from langgraph_context.providers import Prices
from langgraph_context.tokens import count_tokens

__all__ = [
    "DEFAULT_DB",
    "DEFAULT_WINDOW",
    "ModelOptions",
    "check_model",
    "context_budget",
    "model_configured",
    "model_error",
    "run_chat",
]

DEFAULT_DB = Path.home() / ".cache" / "langgraph-context" / "chat.sqlite"
DEFAULT_WINDOW = 16_000
SYSTEM_PROMPT = (
    "You are a helpful assistant with a plan, notes and pinned items. Record the user's "
    "standing rules with record_constraint, keep a plan for multi-step work, and save "
    "facts worth keeping with write_note."
)


class ModelOptions:
    """The model chosen on the command line (flags override the environment).

    Args:
        model: Model name (`--model`), else `LGC_MODEL`.
        base_url: OpenAI-compatible endpoint (`--base-url`), else the environment.
        factory: A registered model factory name (`--model-factory`, default `openai`).
    """

    def __init__(
        self, *, model: str | None = None, base_url: str | None = None, factory: str | None = None
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.factory = factory or DEFAULT_MODEL_FACTORY
        self.factory_given = factory is not None

    def explicit(self) -> bool:
        """Whether a model was chosen by flags (`--model`, `--base-url`, `--model-factory`)."""
        return bool(self.model or self.base_url or self.factory_given)

    def config(self, thread_id: str) -> RunnableConfig:
        """The run config selecting this model for `thread_id`."""
        configurable: dict[str, Any] = {"thread_id": thread_id, "model_factory": self.factory}
        if self.model:
            configurable["model"] = self.model
        return {"configurable": configurable}

    def apply_environment(self) -> None:
        """Make `--base-url` visible to the `openai` factory (this process only)."""
        if self.base_url:
            os.environ[BASE_URL_ENV_VARS[0]] = self.base_url


def model_configured(options: ModelOptions) -> bool:
    """Whether a model was configured by flags or the environment."""
    if options.model or options.base_url or options.factory != DEFAULT_MODEL_FACTORY:
        return True
    names = (*API_KEY_ENV_VARS, *BASE_URL_ENV_VARS, MODEL_ENV_VAR)
    return any(os.environ.get(name) for name in names)


def model_error(exc: Exception, options: ModelOptions) -> CLIError:
    """Turn a failed model call into one readable line naming the endpoint."""
    where = options.base_url or next(
        (os.environ[n] for n in BASE_URL_ENV_VARS if os.environ.get(n)), "the OpenAI API"
    )
    kind = type(exc).__name__
    first = str(exc).splitlines()[0] if str(exc) else kind
    return CLIError(f"the model at {where} failed ({kind}): {first}")


def context_budget(window: int) -> int:
    """Tokens of assembled context the model is sent, for a `window`-token model.

    The window minus room for the reply (a quarter, at most 4,096 tokens) and the
    system prompt, which the agent puts in front of the assembled context.
    """
    return max(1, window - min(window // 4, 4_096) - count_tokens(SYSTEM_PROMPT))


class _InputMeter(BaseCallbackHandler):
    """Remembers the size of the last input a chat model was actually sent."""

    def __init__(self) -> None:
        self.tokens = 0

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        """Count the messages of this model call (the last call of a turn wins)."""
        self.tokens = count_tokens(messages[0]) if messages else 0


def check_model(options: ModelOptions, thread: str) -> None:
    """Build the configured model once, turning any failure into one `CLIError` line."""
    try:
        resolve_chat_model(options.config(thread))
    except Exception as exc:  # a user's factory may raise anything
        kind = type(exc).__name__
        first = str(exc).splitlines()[0] if str(exc) else kind
        msg = first if isinstance(exc, (ValueError, TypeError)) else f"{kind}: {first}"
        raise CLIError(f"cannot build the model: {msg}") from exc


def _check_db(db: Path) -> None:
    """Refuse a `--db` that is a folder or a file SQLite cannot open, before chatting."""
    if db.is_dir():
        msg = f"--db {str(db)!r} is a directory; pass a SQLite file path"
        raise CLIError(msg)
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"cannot create the thread database folder {str(db.parent)!r}: {exc}"
        raise CLIError(msg) from exc
    if not db.exists():
        return
    try:
        with closing(sqlite3.connect(db)) as conn:
            conn.execute("PRAGMA schema_version").fetchone()
    except sqlite3.Error as exc:
        msg = f"--db {str(db)!r} is not a SQLite database: {exc}"
        raise CLIError(msg) from exc


def run_chat(
    *,
    options: ModelOptions,
    db: Path | None = None,
    thread: str = "default",
    window: int = DEFAULT_WINDOW,
    read_line: Callable[[str], str] | None = None,
    prices: Prices | None = None,
) -> int:
    """Run the interactive chat loop; return the exit code.

    Args:
        options: The model to use.
        db: SQLite file holding the threads (default `DEFAULT_DB`).
        thread: The thread to continue or start.
        window: The model's context window in tokens: the assembled input is kept to
            `context_budget(window)` and compaction keeps the stored history under it.
        read_line: Reads one user line (default: the built-in `input`); EOF ends the chat.
        prices: A price table (`--prices`): the report on the way out costs the calls.

    Returns:
        0 when the user leaves.

    Raises:
        CLIError: If no model is configured, the window is too small, or the model
            cannot be built. A model call that fails during the chat is printed and
            the session goes on.
    """
    if not model_configured(options):
        msg = (
            "chat needs a model: pass --model/--base-url (any OpenAI-compatible endpoint) "
            "or set OPENAI_API_KEY"
        )
        raise CLIError(msg)
    if window < 1_000:
        msg = f"--window must be at least 1000 tokens, got {window}"
        raise CLIError(msg)
    read = read_line or input
    options.apply_environment()
    check_model(options, thread)
    db = (db or DEFAULT_DB).expanduser()
    _check_db(db)
    out = console()
    compaction = CompactionMiddleware(window // 2, trigger=("fraction", 0.8), context_window=window)
    config = options.config(thread)
    meter = _InputMeter()
    run_config: RunnableConfig = {**config, "callbacks": [meter]}
    out.print(f"chat on thread {thread!r} (saved in {db}); /exit to leave", markup=False)
    with SqliteSaver.from_conn_string(str(db)) as saver:
        try:
            saver.setup()
        except sqlite3.Error as exc:
            msg = f"--db {str(db)!r} is not a usable SQLite database: {exc}"
            raise CLIError(msg) from exc
        graph = create_context_agent(
            resolve_chat_model,
            system_prompt=SYSTEM_PROMPT,
            context=True,
            max_tokens=context_budget(window),
            compaction=compaction,
            middleware=[SessionMiddleware()],
            checkpointer=saver,
        )
        _loop(graph, read, out, run_config, meter=meter, window=window, options=options)
        report = session_report(graph.get_state(config).values, prices=prices)
        out.print(report, markup=False, highlight=False, soft_wrap=True)  # lines kept whole
    return 0


def _loop(
    graph: Any,
    read: Callable[[str], str],
    out: Any,
    run_config: RunnableConfig,
    *,
    meter: _InputMeter,
    window: int,
    options: ModelOptions,
) -> None:
    """Read lines until `/exit` or end of input; `/compact` requests a compaction."""
    compactions = _compactions(graph.get_state(run_config).values)
    while True:
        try:
            line = read("you> ").strip()
        except EOFError:
            break
        if line in ("/exit", "/quit"):
            break
        if line == "/compact":
            graph.update_state(run_config, {DEFAULT_REQUEST_KEY: True})
            out.print("compaction requested: it runs before the next model call")
            continue
        if not line:
            continue
        try:
            with out.status("thinking...", spinner="dots"):
                _stream_turn(graph, line, run_config, out)
        except Exception as exc:  # the provider's errors are many: print, keep the session
            out.print(f"error: {model_error(exc, options)}", markup=False, highlight=False)
            out.print("the session goes on: send the message again, or /exit", markup=False)
            continue
        state = graph.get_state(run_config).values
        reply = state["messages"][-1]
        text = content_text(reply.content) if isinstance(reply, AIMessage) else ""
        out.print(f"assistant> {text}", markup=False, highlight=False)
        out.print(usage_bar(meter.tokens, window))
        now = _compactions(state)
        if now > compactions:
            out.print(f"history compacted ({now} so far in this thread)")
        compactions = now


_SHOWN_CHARS = 100  # a tool call or result is shown on one line, cut to this many characters


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN_CHARS else flat[: _SHOWN_CHARS - 3] + "..."


def _stream_turn(graph: Any, line: str, run_config: RunnableConfig, out: Any) -> None:
    """Run one turn, printing each tool call and each tool result as the agent makes them."""
    turn = {"messages": [HumanMessage(line)]}
    for update in graph.stream(turn, run_config, stream_mode="updates"):
        for message in _new_messages(update):
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    args = ", ".join(f"{k}={v!r}" for k, v in call.get("args", {}).items())
                    shown = _one_line(f"{call['name']}({args})")
                    out.print(f"  -> {shown}", markup=False, highlight=False)
            elif isinstance(message, ToolMessage):
                mark = "error" if message.status == "error" else "ok"
                text = _one_line(content_text(message.content))
                shown = f"  <- {message.name or 'tool'} [{mark}]: {text}"
                out.print(shown, markup=False, highlight=False)


def _new_messages(update: dict[str, Any]) -> list[Any]:
    """The messages one streamed update adds (a node may return one update or a list)."""
    found: list[Any] = []
    for node_update in update.values():
        parts = node_update if isinstance(node_update, list | tuple) else [node_update]
        for part in parts:
            messages = part.get("messages", []) if isinstance(part, dict) else []
            found += messages if isinstance(messages, list) else []
    return found


def _compactions(state: Any) -> int:
    record = (state or {}).get("compaction") or {}
    return int(record.get("count", 0))
