"""A scripted, offline, multi-session run of the codebase maintainer on a real folder.

`run_maintainer_demo(workspace)` drives `create_codebase_maintainer_graph` with a
scripted policy instead of an LLM (no key, no network). The policy reacts to what the
tools really return, so the notes it writes hold real facts about the folder:

* session 1, `explore`: lists the Python files, writes a plan, records the layout as
  a `reference` note;
* session 1, `analyze`: greps `# TODO` / `# FIXME` comments and records them as an
  `action` note (or a `conclusion` when there are none), ticks the plan;
* session 2, `plan` ("tomorrow"): a new graph on the same SQLite checkpoint and note
  folder picks the thread up, ticks the plan and records the next steps as a
  `task_state` note.

It returns the transcript, the final plan and the notes, and prints them as it goes.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_context.agents.maintainer import create_codebase_maintainer_graph
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import content_text
from langgraph_context.notebook.files import FileNotebookStore
from langgraph_context.state import PlanItem, render_plan
from langgraph_context.tokens import count_tokens

__all__ = ["MaintainerDemo", "run_maintainer_demo"]

_FIND = (
    "find . -name '*.py' -not -path './.venv/*' -not -path './.git/*' "
    "-not -path '*/node_modules/*' | sort | head -n 60"
)
_GREP = (
    "grep -rnE '#[[:space:]]*(TODO|FIXME)' --include=*.py --exclude-dir=.venv "
    "--exclude-dir=.git . | head -n 12"
)
_PLAN = ["map the layout", "find TODO and FIXME comments", "decide the next steps"]

Step = Callable[[list[BaseMessage]], AIMessage]


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def _tool_text(messages: list[BaseMessage], call_id: str) -> str:
    for message in reversed(messages):
        if isinstance(message, ToolMessage) and message.tool_call_id == call_id:
            return content_text(message.content)
    return ""


def _layout(files: str) -> str:
    paths = [line.strip() for line in files.splitlines() if line.startswith("./")]
    folders: dict[str, int] = {}
    for path in paths:
        parts = path[2:].split("/")
        key = parts[0] if len(parts) > 1 else "(top level)"
        folders[key] = folders.get(key, 0) + 1
    lines = [f"- {name}/: {n} Python file(s)" for name, n in sorted(folders.items())]
    head = f"{len(paths)} Python files listed (first 60 at most), by top-level folder:"
    return "\n".join([head, *lines])


class _Policy(BaseChatModel):
    """Replays scripted steps; each step sees the messages it is called with."""

    steps: list[Any]
    index: int = 0
    input_tokens: list[int] = []  # noqa: RUF012 - pydantic copies the default per instance

    @property
    def _llm_type(self) -> str:
        return "scripted-maintainer-policy"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> _Policy:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.input_tokens.append(count_tokens(messages))
        step: Step = self.steps[min(self.index, len(self.steps) - 1)]
        self.index += 1
        return ChatResult(generations=[ChatGeneration(message=step(messages))])


def _session_one() -> list[Step]:
    def explore(_: list[BaseMessage]) -> AIMessage:
        return AIMessage(
            "",
            tool_calls=[
                _call("terminal", {"command": _FIND}, "explore-1"),
                _call("write_plan", {"plan": _PLAN}, "plan-1"),
            ],
        )

    def record_layout(messages: list[BaseMessage]) -> AIMessage:
        layout = _layout(_tool_text(messages, "explore-1"))
        args = {"title": "Layout", "content": layout, "note_type": "reference"}
        return AIMessage("", tool_calls=[_call("notebook_create", args, "note-1")])

    def answer_layout(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage("Mapped the layout and saved it as the 'Layout' reference note.")

    def grep(_: list[BaseMessage]) -> AIMessage:
        return AIMessage("", tool_calls=[_call("terminal", {"command": _GREP}, "grep-1")])

    def record_markers(messages: list[BaseMessage]) -> AIMessage:
        found = [line for line in _tool_text(messages, "grep-1").splitlines() if line[:2] == "./"]
        if found:
            args = {
                "title": "Open TODO/FIXME comments",
                "content": "\n".join(f"- {line[:160]}" for line in found[:8]),
                "note_type": "action",
                "tags": ["todo"],
            }
        else:
            args = {
                "title": "No TODO/FIXME comments",
                "content": "grep found no `# TODO` or `# FIXME` comment in Python files.",
                "note_type": "conclusion",
            }
        update = {"update_plans": [{"content": _PLAN[0], "status": "done"}]}
        return AIMessage(
            "",
            tool_calls=[
                _call("notebook_create", args, "note-2"),
                _call("update_plan", update, "plan-2"),
            ],
        )

    def answer_markers(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage("Recorded the TODO/FIXME findings as a note; the layout step is done.")

    return [explore, record_layout, answer_layout, grep, record_markers, answer_markers]


def _session_two() -> list[Step]:
    def resume(messages: list[BaseMessage]) -> AIMessage:
        system = content_text(messages[0].content) if messages else ""
        titles = re.findall(r"^- \[\w+\] (.+?) \(id ", system, flags=re.MULTILINE)
        content = "Resumed from yesterday's checkpoint. Notes on record: " + (
            "; ".join(titles) or "none"
        )
        content += ".\nNext: work through the action notes, one change and one test at a time."
        update = {"update_plans": [{"content": _PLAN[1], "status": "done"}]}
        args = {"title": "Next steps", "content": content, "note_type": "task_state"}
        return AIMessage(
            "",
            tool_calls=[
                _call("update_plan", update, "plan-3"),
                _call("notebook_create", args, "note-3"),
            ],
        )

    def answer(_: list[BaseMessage]) -> AIMessage:
        return AIMessage("Picked up where we left off; the next steps are recorded.")

    return [resume, answer]


@dataclass
class MaintainerDemo:
    """What the demo did.

    Attributes:
        transcript: One line per user turn, tool call, tool result and answer.
        plan: The plan at the end.
        notes: `(type, title)` of every saved note, most recent first.
        messages: Messages in the thread's state at the end.
        max_input_tokens: Tokens of the largest model input (assembled context).
    """

    transcript: list[str] = field(default_factory=list)
    plan: list[PlanItem] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    messages: int = 0
    max_input_tokens: int = 0


def _turn(
    graph: Any, inputs: dict[str, Any], config: dict[str, Any], demo: MaintainerDemo, echo: Any
) -> dict[str, Any]:
    before = len(graph.get_state(config).values.get("messages", []))
    mode = inputs.get("mode", "")
    line = f"user ({mode}): {content_text(inputs['messages'][0].content)}"
    demo.transcript.append(line)
    echo(line)
    out: dict[str, Any] = graph.invoke(inputs, config)
    names: dict[str, str] = {}
    for message in out["messages"][before + 1 :]:
        if isinstance(message, AIMessage):
            names.update({str(c["id"]): c["name"] for c in message.tool_calls})
        if isinstance(message, AIMessage) and message.tool_calls:
            lines = [f"  -> {c['name']}({_short(c['args'])})" for c in message.tool_calls]
        elif isinstance(message, ToolMessage):
            first = content_text(message.content).strip().splitlines() or ["(empty)"]
            name = names.get(message.tool_call_id, message.name or "tool")
            lines = [f"  <- {name}: {first[0][:100]}"]
        else:
            lines = [f"assistant: {content_text(message.content)}"]
        for text in lines:
            demo.transcript.append(text)
            echo(text)
    return out


def _short(args: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= 90 else text[:87] + "..."


def run_maintainer_demo(
    workspace: str | Path,
    *,
    state_dir: str | Path | None = None,
    echo: Callable[[str], None] = print,
) -> MaintainerDemo:
    """Run the scripted two-session maintainer demo on `workspace`.

    Args:
        workspace: The folder to explore (read-only).
        state_dir: Where the SQLite checkpoint and the notes go (default: a
            temporary directory, removed when the demo ends).
        echo: Called with each transcript line (default `print`).

    Returns:
        The transcript, the final plan and notes, and a few counts.

    Raises:
        ValueError: If `workspace` is not a directory.
    """
    root = Path(workspace)
    if not root.is_dir():
        msg = f"workspace must be a directory, got {str(workspace)!r}"
        raise InvalidArgumentError(msg)
    if state_dir is None:
        with tempfile.TemporaryDirectory(prefix="lgc-") as tmp:
            return _run_demo(root, Path(tmp), echo)
    return _run_demo(root, Path(state_dir), echo)


def _run_demo(root: Path, state: Path, echo: Callable[[str], None]) -> MaintainerDemo:
    """The two sessions on `root`, with checkpoint and notes in `state`."""
    state.mkdir(parents=True, exist_ok=True)
    notes = state / "notes"
    db = str(state / "maintainer.sqlite")
    config: dict[str, Any] = {"configurable": {"thread_id": "maintainer-demo"}}
    demo = MaintainerDemo()
    sessions = [
        (
            _session_one(),
            [
                {"messages": [HumanMessage("Map this codebase.")], "mode": "explore"},
                {"messages": [HumanMessage("Any TODO or FIXME left?")], "mode": "analyze"},
            ],
        ),
        (
            _session_two(),
            [{"messages": [HumanMessage("Where did we leave off?")], "mode": "plan"}],
        ),
    ]
    out: dict[str, Any] = {}
    policies: list[_Policy] = []
    for number, (steps, turns) in enumerate(sessions, 1):
        echo(f"== session {number}: a new graph on {db}")
        policy = _Policy(steps=steps)
        policies.append(policy)
        with SqliteSaver.from_conn_string(db) as saver:
            graph = create_codebase_maintainer_graph(
                policy, workspace=root, notes=notes, checkpointer=saver
            )
            for inputs in turns:
                out = _turn(graph, inputs, config, demo, echo)
    demo.plan = list(out.get("plan", []))
    demo.notes = [(n.type, n.title) for n in FileNotebookStore(notes).list()]
    demo.messages = len(out.get("messages", []))
    demo.max_input_tokens = max(n for p in policies for n in p.input_tokens)
    echo(
        f"== {demo.messages} messages in the thread; largest model input "
        f"{demo.max_input_tokens} tokens"
    )
    echo("== plan\n" + render_plan(demo.plan))
    echo("== notes in " + str(notes))
    for kind, title in demo.notes:
        echo(f"- [{kind}] {title}")
    return demo
