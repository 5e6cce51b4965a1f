"""`langgraph-context demo`: the package at work on a real folder.

Without a model, a scripted policy stands in for the LLM (and the demo says so): the
graphs, nodes and tools are the real ones and work on real input, the folder given
as `--workspace` (default: the current directory).

1. The codebase maintainer explores the folder over two sessions with a SQLite
   checkpoint, writing a plan and persistent notes from what its terminal returns.
2. The context builder assembles a budgeted context for a question from those notes,
   the plan, a pinned rule and the folder's files, and shows where the tokens went.
3. The compaction node shrinks a long exploration history (real terminal output of
   the folder's files) to a budget, tool-pair safe, and shows the state snapshot.

Only when a model is chosen on the command line (`--model`, `--base-url` or
`--model-factory`) does the maintainer run on it instead; environment variables such
as `OPENAI_API_KEY` alone never make the demo call an LLM.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from langgraph_context.agents import create_codebase_maintainer_graph
from langgraph_context.cli._errors import CLIError
from langgraph_context.cli._render import console, usage_bar
from langgraph_context.cli.chat import ModelOptions, check_model, model_error
from langgraph_context.cli.demo_script import run_maintainer_demo
from langgraph_context.cli.models import resolve_chat_model
from langgraph_context.compaction import CompactionStateMixin, create_compaction_node
from langgraph_context.context import ContextBuilder, ContextConfig, ContextPacket
from langgraph_context.messages import content_text, validate_history
from langgraph_context.notebook.files import FileNotebookStore
from langgraph_context.notebook.packets import notebook_packets
from langgraph_context.scoring import score_texts
from langgraph_context.state import render_plan
from langgraph_context.tokens import count_tokens
from langgraph_context.tools import create_terminal_tool

__all__ = ["run_demo"]

QUESTION = "Where is token counting implemented, and what should be done next?"
CONTEXT_BUDGET = 1_500
COMPACTION_BUDGET = 6_000
MAX_FILES = 40


def _head(path: Path, lines: int = 25) -> str | None:
    """The first `lines` lines of a file (`None` when it cannot be read)."""
    try:
        with path.open(errors="replace") as handle:
            return "".join(line for _, line in zip(range(lines), handle, strict=False))
    except OSError:
        return None  # unreadable (permissions, vanished): the demo goes on without it


def _relevant_files(workspace: Path, question: str) -> list[Path]:
    """The `MAX_FILES` Python files most relevant to `question`, best first.

    Scored with the package's BM25 (`scoring.score_texts`) over each file's path
    (weighted three times) and head, so the files that answer the question are
    candidates whatever their name's place in the alphabet; ties keep path order.
    """
    files = _python_files(workspace, limit=None)
    # The path counts three times: a module's name says what it holds.
    paths = [str(p.relative_to(workspace)).replace("/", " ").replace("_", " ") for p in files]
    texts = [
        f"{path}\n{path}\n{path}\n{_head(p) or ''}" for path, p in zip(paths, files, strict=True)
    ]
    scores = score_texts(question, texts)
    ranked = sorted(range(len(files)), key=lambda i: -scores[i])
    return [files[i] for i in ranked[:MAX_FILES]]


def _python_files(workspace: Path, *, limit: int | None = MAX_FILES) -> list[Path]:
    skip = {".venv", ".git", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
    files: list[Path] = []
    try:
        for p in sorted(workspace.rglob("*.py")):
            # Dangling symlinks and folders named *.py are skipped, not read.
            if not skip.intersection(p.relative_to(workspace).parts) and p.is_file():
                files.append(p)
    except OSError as exc:
        msg = f"cannot list the Python files of {str(workspace)!r}: {exc}"
        raise CLIError(msg) from exc
    return files if limit is None else files[:limit]


def _section(out: Console, title: str) -> None:
    out.print()
    out.rule(f"[bold]{title}")


def _maintainer(out: Console, workspace: Path, state_dir: Path) -> FileNotebookStore:
    _section(out, "1. Codebase maintainer: two sessions, SQLite checkpoint, persistent notes")
    run_maintainer_demo(
        workspace,
        state_dir=state_dir,
        echo=lambda line: out.print(line, markup=False, highlight=False),
    )
    return FileNotebookStore(state_dir / "notes")


def _context(out: Console, workspace: Path, notes: FileNotebookStore) -> None:
    _section(out, f"2. Context assembly for: {QUESTION!r}")
    packets: list[ContextPacket] = notebook_packets(notes.search(QUESTION, limit=10))
    for path in _relevant_files(workspace, QUESTION):
        head = _head(path)
        if head is None:
            continue
        packets.append(
            ContextPacket(head, type="retrieved", source=str(path.relative_to(workspace)))
        )
    packets.append(
        ContextPacket(
            "Never modify files in this folder: the demo is read-only.",
            type="constraint",
            pinned=True,
        )
    )
    builder = ContextBuilder(config=ContextConfig(max_tokens=CONTEXT_BUDGET))
    result = builder.build_result(QUESTION, custom_packets=packets)
    table = Table(title="tokens per section", show_edge=False)
    table.add_column("section")
    table.add_column("tokens", justify="right")
    for name, tokens in result.section_tokens.items():
        table.add_row(name, f"{tokens:,}")
    out.print(table)
    out.print(usage_bar(result.tokens, CONTEXT_BUDGET))
    reasons: dict[str, int] = {}
    for drop in result.dropped:
        reasons[drop.reason] = reasons.get(drop.reason, 0) + 1
    kept = [p.source or p.type for p in result.selected][:8]
    out.print(
        f"{len(packets)} candidate packets: {len(result.selected)} selected, dropped "
        f"{reasons or 'none'}; first selected: {', '.join(kept)}"
    )


class _CompactionState(MessagesState, CompactionStateMixin):
    pass


def _exploration_history(workspace: Path) -> list[BaseMessage]:
    """Run the real read-only terminal on every file: the history an explorer builds."""
    terminal = create_terminal_tool(workspace)
    history: list[BaseMessage] = [
        SystemMessage("You maintain this codebase. Read before you change anything."),
        HumanMessage("Read every Python file and tell me what each one does."),
    ]
    for i, path in enumerate(_python_files(workspace)):
        call_id = f"read-{i}"
        command = f"head -n 120 {path.relative_to(workspace)}"
        call = {"name": terminal.name, "args": {"command": command}, "id": call_id}
        history.append(AIMessage("", tool_calls=[call]))
        history.append(terminal.invoke({**call, "type": "tool_call"}))
    history.append(HumanMessage("Now summarize what you learned."))
    return history


def _compaction(out: Console, workspace: Path) -> None:
    _section(out, f"3. Compaction node (replace mode, rules only) at {COMPACTION_BUDGET:,} tokens")
    history = _exploration_history(workspace)
    graph = StateGraph(_CompactionState)
    graph.add_node("compact", create_compaction_node(trigger_tokens=COMPACTION_BUDGET))
    graph.add_edge(START, "compact")
    graph.add_edge("compact", END)
    app = graph.compile(checkpointer=InMemorySaver())
    before = count_tokens(history)
    config: RunnableConfig = {"configurable": {"thread_id": "demo"}}
    state: dict[str, Any] = app.invoke(cast(Any, {"messages": history}), config)
    after_messages = state["messages"]
    after = count_tokens(after_messages)
    last = state.get("compaction", {}).get("last", {})
    out.print(
        f"history of {len(history)} messages, {before:,} tokens "
        f"(real terminal output of {len(history) // 2 - 1} files)"
    )
    out.print(usage_bar(before, COMPACTION_BUDGET))
    snapshot = next((m for m in after_messages if m.additional_kwargs.get("lgc_compaction")), None)
    if not last:
        out.print(f"under the budget: nothing compacted ({len(after_messages)} messages kept)")
    else:
        added = "a state snapshot added" if snapshot is not None else "no snapshot added"
        out.print(
            f"after compaction ({last.get('strategy', '?')}): {len(after_messages)} messages, "
            f"{after:,} tokens; {last.get('tool_results_cleared', 0)} old tool outputs "
            f"cleared, {last.get('messages_dropped', 0)} messages dropped, {added}"
        )
    out.print(usage_bar(after, COMPACTION_BUDGET))
    problems = validate_history(after_messages)
    out.print(
        "tool calls and results still paired: "
        + ("yes" if not problems else f"NO ({len(problems)} problems)")
    )
    if snapshot is not None:
        lines = content_text(snapshot.content).splitlines()
        out.print(Panel("\n".join(lines[:12]), title="state snapshot (first lines)"), markup=False)


def _llm_maintainer(out: Console, workspace: Path, options: ModelOptions) -> int:
    """One real LLM turn of the codebase maintainer on `workspace`."""
    options.apply_environment()
    config = options.config("demo")
    check_model(options, "demo")
    model = resolve_chat_model(config)
    out.print(
        Panel(
            f"Running the codebase maintainer on a real model ({options.factory}, "
            f"{options.model or 'default model'}) over {workspace}.",
            title="langgraph-context demo (LLM)",
        )
    )
    with tempfile.TemporaryDirectory(prefix="lgc-demo-") as tmp:
        graph = create_codebase_maintainer_graph(
            model, workspace=workspace, notes=Path(tmp) / "notes", checkpointer=InMemorySaver()
        )
        request = HumanMessage("Map this codebase, keep a plan, and note what matters.")
        try:
            state = graph.invoke({"messages": [request], "mode": "explore"}, config)
        except Exception as exc:
            raise model_error(exc, options) from exc
        reply = state["messages"][-1]
        out.print(Panel(content_text(reply.content), title="maintainer"), markup=False)
        out.print("plan:\n" + render_plan(list(state.get("plan", []))), markup=False)
        for note in FileNotebookStore(Path(tmp) / "notes").list():
            out.print(f"- [{note.type}] {note.title}", markup=False)
    return 0


def run_demo(*, workspace: Path, options: ModelOptions | None = None) -> int:
    """Run the showcase on `workspace`; return the exit code.

    Args:
        workspace: The folder to explore (read-only).
        options: The model flags; `None`, or options without `--model`, `--base-url`
            or `--model-factory`, run the offline showcase (scripted policy, no LLM)
            whatever the environment says.

    Returns:
        0 on success.

    Raises:
        CLIError: If `workspace` is not a directory or the model fails.
    """
    workspace = workspace.expanduser().resolve()
    if not workspace.is_dir():
        msg = f"workspace {str(workspace)!r} is not a directory"
        raise CLIError(msg)
    out = console()
    if options is not None and options.explicit():
        return _llm_maintainer(out, workspace, options)
    out.print(
        Panel(
            "No LLM is used in this demo: a scripted policy plays the model. "
            "Every graph, node and tool is real and works on real files under "
            f"{workspace}.\nPass --model / --base-url / --model-factory to run the same "
            "agent on an LLM.",
            title="langgraph-context demo",
        )
    )
    with tempfile.TemporaryDirectory(prefix="lgc-demo-") as tmp:
        notes = _maintainer(out, workspace, Path(tmp))
        _context(out, workspace, notes)
    _compaction(out, workspace)
    return 0
