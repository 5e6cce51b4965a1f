"""The compaction node in compiled graphs: both modes, triggers, summaries, failures."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_context.compaction import (
    Archive,
    CompactionStateMixin,
    SummaryOptions,
    create_compaction_node,
)
from langgraph_context.compaction.options import CompactionKeys
from langgraph_context.compaction.provenance import compaction_kind, split_fenced
from langgraph_context.messages import validate_history
from langgraph_context.state import NoteStateMixin, PlanStateMixin
from langgraph_context.tokens import count_tokens


class State(MessagesState, PlanStateMixin, NoteStateMixin, CompactionStateMixin):
    """Messages, plan, notes and the compaction keys."""


PLAN = [
    {"content": "find the bug", "status": "in_progress"},
    {"content": "fix", "status": "pending"},
]
NOTES = {"constraints": "never edit config/prod.exs"}


def worker(state: State) -> dict[str, Any]:
    """Append one tool round with a large output, like an agent reading a file."""
    n = len(state["messages"])
    call = {"name": "Read", "args": {"file_path": f"lib/mod_{n}.ex"}, "id": f"call-{n}"}
    return {
        "messages": [
            AIMessage("", tool_calls=[call]),
            ToolMessage(
                f"defmodule Mod{n} do\n" + "  def f, do: :ok\n" * 60, tool_call_id=f"call-{n}"
            ),
        ]
    }


def chatter(state: State) -> dict[str, Any]:
    """Append a long assistant answer (text that clearing tool outputs cannot shrink)."""
    n = len(state["messages"])
    return {"messages": [AIMessage(f"answer {n}: " + "the module compiles cleanly. " * 40)]}


def build(node: Any, *, work: Any = worker) -> Any:
    """START -> work -> compaction -> END, checkpointed."""
    graph = StateGraph(State)
    graph.add_node("worker", work)
    graph.add_node("compaction", node)
    graph.add_edge(START, "worker")
    graph.add_edge("worker", "compaction")
    graph.add_edge("compaction", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_replace_mode_many_compactions_keep_plan_and_notes() -> None:
    """Twenty turns in one thread: history stays valid and in budget, plan and notes intact."""
    # Cut just under the budget every time (no hysteresis): the most compactions.
    app = build(create_compaction_node(trigger_tokens=1500, target_tokens=1500))
    config = {"configurable": {"thread_id": "t1"}}
    app.invoke(
        {"messages": [SystemMessage("You fix bugs."), HumanMessage("Fix lib/app.ex")],
         "plan": PLAN, "note": NOTES},
        config,
    )  # fmt: skip
    for turn in range(20):
        state = app.invoke({"messages": [HumanMessage(f"continue {turn}")]}, config)
        assert validate_history(state["messages"]) == []
        assert count_tokens(state["messages"]) <= 1500
        assert state["plan"] == PLAN
        assert state["note"] == NOTES
        assert state["messages"][0].content == "You fix bugs."
    assert state["compaction"]["count"] >= 10
    assert state["compaction"]["last"]["within_budget"] is True
    snapshot = [m for m in state["messages"] if compaction_kind(m) == "snapshot"]
    assert len(snapshot) == 1
    assert "continue 3" in snapshot[0].content
    # the kept task stays where every earlier request had it (the prompt cache covers
    # it); the snapshot stands where the evicted middle was
    assert state["messages"][1].content == "Fix lib/app.ex"
    assert state["messages"][2] is snapshot[0] or state["messages"][2] == snapshot[0]
    assert state["messages"][-1].type == "tool"
    assert any(m.content == "continue 19" for m in state["messages"])


def test_replace_mode_records_stats_and_trigger() -> None:
    """Stats of the latest compaction are stored in state with the trigger that fired."""
    app = build(create_compaction_node(trigger_tokens=600, trigger=("messages", 6)))
    config = {"configurable": {"thread_id": "t2"}}
    state = app.invoke({"messages": [HumanMessage("go")]}, config)
    assert "compaction" not in state
    state = app.invoke({"messages": [HumanMessage("more")]}, config)
    state = app.invoke({"messages": [HumanMessage("more")]}, config)
    last = state["compaction"]["last"]
    assert last["trigger"] == "messages>=6"
    assert last["mode"] == "replace"
    assert last["tokens_before"] > last["tokens_after"]
    assert last["tokens_after"] == count_tokens(state["messages"])


def test_view_mode_leaves_history_untouched_and_writes_view() -> None:
    """In view mode the state history grows untouched; the view fits the budget."""
    app = build(create_compaction_node(trigger_tokens=900, mode="view"))
    config = {"configurable": {"thread_id": "t3"}}
    app.invoke({"messages": [HumanMessage("Fix lib/app.ex")], "plan": PLAN}, config)
    for turn in range(8):
        state = app.invoke({"messages": [HumanMessage(f"turn {turn}")]}, config)
        view = state["llm_input_messages"]
        assert validate_history(view) == []
        assert count_tokens(view) <= 900
    assert len(state["messages"]) == 1 + 9 * 2 + 8
    assert not any(compaction_kind(m) for m in state["messages"])
    assert state["plan"] == PLAN


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_view_mode_as_pre_model_hook_of_create_react_agent(scripted: Any) -> None:
    """The view node works as create_react_agent's pre_model_hook; the model sees the view."""
    from langgraph.prebuilt import create_react_agent

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return f"contents of {path}\n" + "line\n" * 200

    calls = [
        AIMessage(
            "", tool_calls=[{"name": "read_file", "args": {"path": f"f{i}.py"}, "id": f"r{i}"}]
        )
        for i in range(6)
    ]
    model = scripted(responses=[*calls, AIMessage("done")])
    hook = create_compaction_node(trigger_tokens=1200, mode="view")
    agent = create_react_agent(
        model, [read_file], pre_model_hook=hook, checkpointer=InMemorySaver()
    )
    state = agent.invoke(
        {"messages": [HumanMessage("read six files")]}, {"configurable": {"thread_id": "a"}}
    )
    assert state["messages"][-1].content == "done"
    assert len(state["messages"]) == 1 + 6 * 2 + 1
    assert len(model.seen) == 7
    for seen in model.seen:
        assert validate_history(seen) == []
        assert count_tokens(seen) <= 1200
    assert count_tokens(state["messages"]) > 1200
    assert model.seen[-1][-1].type == "tool"


def test_view_mode_chains_after_a_context_node() -> None:
    """With messages_key=output_key='llm_input_messages' it compacts what a context node built."""
    seen: list[list[Any]] = []

    def context(state: State) -> dict[str, Any]:
        return {"llm_input_messages": [SystemMessage("ctx rules"), *state["messages"]]}

    def model(state: State) -> dict[str, Any]:
        seen.append(state["llm_input_messages"])
        return {}

    graph = StateGraph(State)
    graph.add_node("worker", worker)
    graph.add_node("context", context)
    graph.add_node(
        "compaction",
        create_compaction_node(trigger_tokens=700, mode="view", messages_key="llm_input_messages"),
    )
    graph.add_node("model", model)
    graph.add_edge(START, "worker")
    graph.add_edge("worker", "context")
    graph.add_edge("context", "compaction")
    graph.add_edge("compaction", "model")
    graph.add_edge("model", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "c"}}
    for turn in range(6):
        app.invoke({"messages": [HumanMessage(f"t{turn}")]}, config)
    assert seen[-1][0].content == "ctx rules"
    assert count_tokens(seen[-1]) <= 700
    assert validate_history(seen[-1]) == []
    assert len(app.get_state(config).values["messages"]) == 6 * 3


def summarizer(scripted: Any, n: int = 10) -> Any:
    """A scripted summarizer answering 'summary 1', 'summary 2', ..."""
    return scripted(responses=[AIMessage(f"summary {i}") for i in range(1, n + 1)])


def test_replace_mode_with_model_running_summary(scripted: Any) -> None:
    """The summary is extended round after round: the next call sees the previous one."""
    model = summarizer(scripted)
    node = create_compaction_node(
        trigger_tokens=900,
        model=model,
        keep=("messages", 4),
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    app = build(node, work=chatter)
    config = {"configurable": {"thread_id": "s"}}
    app.invoke({"messages": [HumanMessage("Fix lib/app.ex")], "note": NOTES}, config)
    for turn in range(6):
        state = app.invoke({"messages": [HumanMessage(f"turn {turn}")]}, config)
        assert validate_history(state["messages"]) == []
    assert len(model.seen) >= 2
    second = model.seen[1][-1].content
    assert "Earlier summary (extend it)" in second
    assert "summary 1" in second
    summaries = [m for m in state["messages"] if compaction_kind(m) == "summary"]
    assert len(summaries) == 1
    prose = split_fenced(summaries[0].content)[1][0]  # the first fence holds the prose
    assert prose == f"summary {len(model.seen)}"
    assert state["compaction"]["summary"]["text"] == f"summary {len(model.seen)}"
    assert state["compaction"]["last"]["strategy"] in ("summary", "clear_tool_results")
    assert state["note"] == NOTES


def failing_model() -> Any:
    """A summarizer whose provider is down."""

    def boom(_: Any) -> Any:
        raise RuntimeError("provider down")

    return RunnableLambda(boom)


def test_replace_mode_summarizer_failure_falls_back_to_rules() -> None:
    """When the summarizer fails, rules compact the history into budget; the error is kept."""
    node = create_compaction_node(
        trigger_tokens=600, model=failing_model(), summary_options=SummaryOptions(retries=1)
    )
    app = build(node, work=chatter)
    config = {"configurable": {"thread_id": "f"}}
    for turn in range(3):
        state = app.invoke({"messages": [HumanMessage(f"turn {turn}")]}, config)
        assert count_tokens(state["messages"]) <= 600
        assert validate_history(state["messages"]) == []
    assert not any(compaction_kind(m) == "summary" for m in state["messages"])
    assert "provider down" in state["compaction"]["error"]
    assert state["compaction"]["last"]["summarizer_calls"] == 2
    assert state["compaction"]["last"]["fallback"] is True
    assert state["compaction"]["count"] >= 1


def test_view_mode_summarizer_failure_falls_back_to_rules() -> None:
    """In view mode a failed summary falls back to rule-based compaction of the view."""
    node = create_compaction_node(
        trigger_tokens=600,
        mode="view",
        model=failing_model(),
        summary_options=SummaryOptions(retries=0),
    )
    app = build(node, work=chatter)
    config = {"configurable": {"thread_id": "vf"}}
    for turn in range(4):
        state = app.invoke({"messages": [HumanMessage(f"turn {turn}")]}, config)
    assert count_tokens(state["llm_input_messages"]) <= 600
    assert validate_history(state["llm_input_messages"]) == []
    assert "provider down" in state["compaction"]["error"]


def test_view_mode_with_model_reuses_running_summary(scripted: Any) -> None:
    """In view mode later turns extend the stored summary instead of resummarizing all."""
    model = summarizer(scripted)
    node = create_compaction_node(
        trigger_tokens=900,
        mode="view",
        model=model,
        keep=("tokens", 400),
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    app = build(node, work=chatter)
    config = {"configurable": {"thread_id": "vs"}}
    for turn in range(8):
        state = app.invoke({"messages": [HumanMessage(f"turn {turn}")]}, config)
        view = state["llm_input_messages"]
        assert validate_history(view) == []
    assert len(model.seen) >= 2
    assert "summary 1" in model.seen[1][-1].content
    assert compaction_kind(view[0]) == "summary"
    assert view[-1].content.startswith("answer")
    assert "turn 7" in [m.content for m in view]
    assert len(state["messages"]) == 8 * 2


async def test_async_replace_mode_with_model(scripted: Any) -> None:
    """The node's async path summarizes with ainvoke and keeps the history valid."""
    model = summarizer(scripted)
    app = build(
        create_compaction_node(
            trigger_tokens=900, model=model, summary_options=SummaryOptions(max_summary_tokens=100)
        ),
        work=chatter,
    )
    config = {"configurable": {"thread_id": "as"}}
    for turn in range(5):
        state = await app.ainvoke({"messages": [HumanMessage(f"turn {turn}")]}, config)
        assert validate_history(state["messages"]) == []
        assert count_tokens(state["messages"]) <= 900
    assert model.seen
    assert any(compaction_kind(m) == "summary" for m in state["messages"])


async def test_async_view_mode_rule_based() -> None:
    """The async path of the rule-based view node writes a budgeted view."""
    app = build(create_compaction_node(trigger_tokens=700, mode="view"))
    config = {"configurable": {"thread_id": "av"}}
    for turn in range(5):
        state = await app.ainvoke({"messages": [HumanMessage(f"turn {turn}")]}, config)
    assert count_tokens(state["llm_input_messages"]) <= 700


def test_explicit_request_triggers_and_is_reset() -> None:
    """A truthy request key forces a compaction and is set back to False."""
    node = create_compaction_node(trigger_tokens=400, trigger=("tokens", 100_000))
    app = build(node)
    config = {"configurable": {"thread_id": "r"}}
    state = app.invoke({"messages": [HumanMessage("a")]}, config)
    state = app.invoke({"messages": [HumanMessage("b")]}, config)
    assert "compaction" not in state
    state = app.invoke({"messages": [HumanMessage("c")], "compaction_requested": True}, config)
    assert state["compaction_requested"] is False
    assert state["compaction"]["last"]["trigger"] == "request"
    assert count_tokens(state["messages"]) <= 400


@pytest.mark.parametrize(
    ("trigger", "expected"),
    [
        (("tool_output", 200), "tool_output>=200"),
        (("fraction", 0.5), "fraction>=0.5"),
        ([("messages", 1000), ("tokens", 300)], "tokens>=300"),
    ],
)
def test_triggers(trigger: Any, expected: str) -> None:
    """Each trigger kind fires the compaction and is named in the stats."""
    node = create_compaction_node(trigger_tokens=5000, trigger=trigger, context_window=600)
    app = build(node)
    state = app.invoke({"messages": [HumanMessage("x")]}, {"configurable": {"thread_id": "tr"}})
    assert state["compaction"]["last"]["trigger"] == expected


def test_archive_evicted_messages_to_notes() -> None:
    """Evicted text is archived to a new note; existing notes are kept."""
    node = create_compaction_node(trigger_tokens=700, archive=Archive(note_key="note"))
    app = build(node)
    config = {"configurable": {"thread_id": "ar"}}
    app.invoke({"messages": [HumanMessage("Fix lib/app.ex")], "note": NOTES}, config)
    for turn in range(3):
        state = app.invoke({"messages": [HumanMessage(f"t{turn}")]}, config)
    assert state["note"]["constraints"] == NOTES["constraints"]
    archived = [k for k in state["note"] if k.startswith("compaction/evicted-")]
    assert archived
    assert "defmodule" in state["note"][archived[0]]


def test_archive_evicted_messages_to_store() -> None:
    """With archive_namespace, evicted text goes to the graph's store, one item per run."""
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore()
    graph = StateGraph(State)
    graph.add_node("worker", worker)
    graph.add_node(
        "compaction",
        create_compaction_node(trigger_tokens=700, archive=Archive(namespace=("archive", "t"))),
    )
    graph.add_edge(START, "worker")
    graph.add_edge("worker", "compaction")
    graph.add_edge("compaction", END)
    app = graph.compile(checkpointer=InMemorySaver(), store=store)
    config = {"configurable": {"thread_id": "st"}}
    for turn in range(4):
        state = app.invoke({"messages": [HumanMessage(f"t{turn}")]}, config)
    items = store.search(("archive", "t"))
    assert len(items) == state["compaction"]["count"] >= 1
    assert "defmodule" in items[0].value["text"]
    assert items[0].value["messages"] > 0


def test_archive_to_store_without_store_raises() -> None:
    """Archiving to a store in a graph compiled without one raises a clear error."""
    app = build(create_compaction_node(trigger_tokens=300, archive=Archive(namespace=("archive",))))
    config = {"configurable": {"thread_id": "nostore"}}
    first = {"messages": [HumanMessage("read " * 300)], "compaction_requested": True}
    with pytest.raises(ValueError, match=r"Archive\(namespace=...\) needs a store"):
        app.invoke(first, config)


def test_replace_mode_keeps_a_pending_tool_call_at_the_end() -> None:
    """Between model and tools, the final AI call awaiting results is kept as is."""
    node = create_compaction_node(trigger_tokens=300)
    pending = AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": "p1"}])
    history = [HumanMessage("x " * 400), AIMessage("y " * 400), HumanMessage("ok"), pending]
    out = node.invoke({"messages": history})
    assert out["messages"][-1] is pending
    assert validate_history(out["messages"][1:], allow_pending_tool_calls=True) == []


def test_view_mode_never_sends_an_unanswered_call() -> None:
    """A view for the model is strictly valid: an unanswered call gets a cancelled result."""
    node = create_compaction_node(trigger_tokens=300, mode="view")
    pending = AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": "p1"}])
    out = node.invoke({"messages": [HumanMessage("x " * 400), HumanMessage("ok"), pending]})
    assert validate_history(out["llm_input_messages"]) == []
    assert out["llm_input_messages"][-1].type == "tool"


def test_view_mode_repairs_invalid_input_even_without_trigger() -> None:
    """An invalid history is repaired in the view even when no trigger fires."""
    node = create_compaction_node(trigger_tokens=10_000, mode="view")
    out = node.invoke({"messages": [HumanMessage("x"), ToolMessage("stray", tool_call_id="q")]})
    assert [m.type for m in out["llm_input_messages"]] == ["human"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"trigger_tokens": 0}, "trigger_tokens must be a positive int"),
        ({"mode": "inline"}, "mode must be one of"),
        ({"trigger": ("often", 3)}, "trigger must be"),
        ({"trigger": ("tokens", -1)}, "needs a positive value"),
        ({"trigger": ("fraction", 1.5)}, "needs 0 < f <= 1"),
        ({"context_window": 0}, "context_window must be a positive int"),
        ({"keep": ("turns", 3)}, "keep must be"),
        ({"strategy": "random"}, "strategy must be one of"),
        ({"messages_key": ""}, "messages_key must be a non-empty string"),
    ],
)
def test_bad_configuration_raises(kwargs: dict, match: str) -> None:
    """Invalid options raise ValueError at construction, naming the parameter."""
    options = {"trigger_tokens": 100, **kwargs}
    with pytest.raises(ValueError, match=match):
        create_compaction_node(**options)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: SummaryOptions(style="poem"), "style must be one of"),  # type: ignore[arg-type]
        (lambda: SummaryOptions(prompt="  "), "prompt must be a non-empty string"),
        (lambda: CompactionKeys(output_key=""), "output_key must be a non-empty string"),
        (lambda: CompactionKeys(state_key=""), "state_key must be a non-empty string"),
        (lambda: CompactionKeys(request_key=""), "request_key must be a non-empty string"),
        (lambda: Archive(namespace=()), "namespace must be a non-empty tuple"),
        (lambda: Archive(note_key=""), "note_key must be a non-empty string"),
        (Archive, "Archive needs note_key, namespace or sink"),
    ],
)
def test_bad_option_groups_raise(build: Any, match: str) -> None:
    """The node's option groups check themselves when built, naming the field."""
    with pytest.raises(ValueError, match=match):
        build()


def test_option_groups_set_the_node_keys() -> None:
    """CompactionKeys renames the view, record and request keys the node writes."""
    keys = CompactionKeys(output_key="view", state_key="rec", request_key="ask")
    node = create_compaction_node(trigger_tokens=10_000, mode="view", keys=keys)
    out = node.invoke({"messages": [HumanMessage("hi")], "ask": True})
    assert set(out) == {"view", "rec", "ask"}
    assert out["ask"] is False
    assert out["rec"]["last"]["trigger"] == "request"


def test_replace_mode_never_clears_the_tool_results_the_agent_has_not_seen() -> None:
    """Agent -> tools -> compaction -> agent: the agent always sees its latest tool outputs."""
    seen: list[list[Any]] = []

    def agent(state: State) -> dict[str, Any]:
        seen.append(list(state["messages"]))
        n = len(seen)
        if isinstance(state["messages"][-1], HumanMessage):
            calls = [
                {"name": "read", "args": {"path": f"src/f{n}.py"}, "id": "call_1"},
                {"name": "bash", "args": {"command": f"pytest -k t{n}"}, "id": "call_2"},
            ]
            return {"messages": [AIMessage("", tool_calls=calls)]}
        return {"messages": [AIMessage(f"done turn {n} " + "blah " * 30)]}

    def tools(state: State) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        return {
            "messages": [
                ToolMessage(f"output of {c['name']} " + "x y z " * 200, tool_call_id=c["id"])
                for c in last.tool_calls
            ]
        }

    def route(state: State) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(State)
    graph.add_node("compaction", create_compaction_node(trigger_tokens=1500))
    graph.add_node("agent", agent)
    graph.add_node("tools", tools)
    graph.add_edge(START, "compaction")
    graph.add_edge("compaction", "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "compaction")
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "seen"}}
    app.invoke({"messages": [SystemMessage("You help."), HumanMessage("fix src/main.py")]}, config)
    for turn in range(6):
        state = app.invoke({"messages": [HumanMessage(f"turn {turn} continue")]}, config)
        assert validate_history(state["messages"]) == []
    after_tools = [s for s in seen if isinstance(s[-1], ToolMessage)]
    assert len(after_tools) == 7
    assert state["compaction"]["count"] > 0
    for messages in after_tools:
        assert all(str(m.content).startswith("output of") for m in messages[-2:])


def fact_history() -> list[Any]:
    """A request, four lookups whose outputs each carry one fact, and a question."""
    history: list[Any] = [SystemMessage("sys"), HumanMessage("look up the deploy tokens")]
    for i in range(4):
        call = {"name": "lookup", "args": {"q": f"q{i}"}, "id": f"c{i}"}
        history += [
            AIMessage("", tool_calls=[call]),
            ToolMessage(f"FACT-{i}: token TOK-{i} " + "pad " * 300, tool_call_id=f"c{i}"),
            AIMessage(f"noted {i} " + "talk " * 150),
        ]
    return [*history, HumanMessage("what were the tokens?")]


@pytest.mark.parametrize("mode", ["replace", "view"])
def test_summarizer_reads_original_tool_outputs_not_placeholders(scripted: Any, mode: str) -> None:
    """The summarizer sees the tool outputs it folds in; the archive holds the originals."""
    model = summarizer(scripted)
    archive = Archive(note_key="note") if mode == "replace" else None
    node = create_compaction_node(
        trigger_tokens=800,
        mode=mode,
        model=model,
        summary_options=SummaryOptions(max_summary_tokens=100),
        archive=archive,
    )
    graph = StateGraph(State)
    graph.add_node("compaction", node)
    graph.add_edge(START, "compaction")
    graph.add_edge("compaction", END)
    app = graph.compile(checkpointer=InMemorySaver())
    state = app.invoke({"messages": fact_history()}, {"configurable": {"thread_id": mode}})
    assert state["compaction"]["last"]["strategy"] == "summary"
    prompts = "\n".join(str(call[-1].content) for call in model.seen)
    assert "[Tool output cleared" not in prompts
    visible = state["messages"] if mode == "replace" else state["llm_input_messages"]
    for i in range(4):
        kept = any(str(m.content).startswith(f"FACT-{i}:") for m in visible)
        assert kept or f"TOK-{i}" in prompts
    assert validate_history(visible) == []
    assert count_tokens(visible) <= 800
    if mode == "replace":
        archived = "\n".join(v for k, v in state["note"].items() if k.startswith("compaction/"))
        assert all(f"TOK-{i}" in archived for i in range(4))
        assert archived.count("FACT-0:") == 1


async def test_async_archive_to_an_async_only_store() -> None:
    """The async node archives with `aput`, so async-only stores (sqlite, postgres) work."""
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    async with AsyncSqliteStore.from_conn_string(":memory:") as store:
        await store.setup()
        graph = StateGraph(State)
        graph.add_node("worker", worker)
        graph.add_node(
            "compaction",
            create_compaction_node(trigger_tokens=700, archive=Archive(namespace=("archive",))),
        )
        graph.add_edge(START, "worker")
        graph.add_edge("worker", "compaction")
        graph.add_edge("compaction", END)
        app = graph.compile(checkpointer=InMemorySaver(), store=store)
        config = {"configurable": {"thread_id": "async-store"}}
        for turn in range(4):
            state = await app.ainvoke({"messages": [HumanMessage(f"t{turn}")]}, config)
        items = await store.asearch(("archive",))
        assert len(items) == state["compaction"]["count"] >= 1
        assert "defmodule" in items[0].value["text"]


def test_repeated_call_ids_keep_every_result_through_the_node() -> None:
    """A parallel round whose calls share one id keeps both results across turns."""

    def weather(state: State) -> dict[str, Any]:
        calls = [
            {"name": "weather", "args": {"city": city}, "id": "0"} for city in ("Paris", "Rome")
        ]
        return {
            "messages": [
                AIMessage("", tool_calls=calls),
                ToolMessage("Paris: 21C", tool_call_id="0"),
                ToolMessage("Rome: 28C", tool_call_id="0"),
                AIMessage("Paris 21C, Rome 28C"),
            ]
        }

    app = build(create_compaction_node(trigger_tokens=10_000, mode="replace"), work=weather)
    config = {"configurable": {"thread_id": "dup-ids"}}
    for turn in range(3):
        state = app.invoke({"messages": [HumanMessage(f"weather {turn}?")]}, config)
    results = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert results == ["Paris: 21C", "Rome: 28C"] * 3
    assert validate_history(state["messages"]) == []


def long_chat() -> list[Any]:
    """Thirty short exchanges: about 1,600 tokens, far under a 5,000-token budget."""
    history: list[Any] = [SystemMessage("sys")]
    for i in range(30):
        history += [HumanMessage(f"q{i} " + "w " * 20), AIMessage(f"a{i} " + "v " * 20)]
    return history


def one_node_graph(node: Any) -> Any:
    """START -> compaction -> END, checkpointed."""
    graph = StateGraph(State)
    graph.add_node("compaction", node)
    graph.add_edge(START, "compaction")
    graph.add_edge("compaction", END)
    return graph.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize(
    ("options", "state"),
    [
        ({"trigger": ("messages", 20)}, {}),
        ({"trigger": ("fraction", 0.5), "context_window": 3000}, {}),
        ({"trigger": ("tokens", 10**6)}, {"compaction_requested": True}),
        ({"trigger": ("messages", 20), "keep": ("messages", 6)}, {}),
    ],
)
@pytest.mark.parametrize("with_model", [False, True])
def test_a_trigger_firing_under_max_tokens_compacts(
    scripted: Any, options: dict, state: dict, with_model: bool
) -> None:
    """A fired trigger or request compacts even when the history fits max_tokens."""
    model = summarizer(scripted) if with_model else None
    app = one_node_graph(create_compaction_node(trigger_tokens=5000, model=model, **options))
    history = long_chat()
    out = app.invoke({"messages": history, **state}, {"configurable": {"thread_id": "under"}})
    last = out["compaction"]["last"]
    assert last["strategy"] == ("summary" if with_model else last["strategy"]) != "none"
    assert count_tokens(out["messages"]) < count_tokens(history)
    assert validate_history(out["messages"]) == []
    assert out["messages"][-1].content == history[-1].content
    assert out["compaction_requested"] is False if state else True
    if with_model:
        assert len(model.seen) == 1
    if "keep" in options:
        assert [m.content for m in out["messages"][-6:]] == [m.content for m in history[-6:]]


def test_view_mode_keeps_a_mid_conversation_system_message_every_turn(scripted: Any) -> None:
    """In view mode with a running summary, a later system message is never summarized away."""
    model = summarizer(scripted)
    node = create_compaction_node(
        trigger_tokens=900,
        mode="view",
        model=model,
        summary_options=SummaryOptions(max_summary_tokens=60),
    )
    app = build(node, work=chatter)
    config = {"configurable": {"thread_id": "policy"}}
    app.invoke({"messages": [SystemMessage("You help."), HumanMessage("start")]}, config)
    policy = SystemMessage("POLICY UPDATE: never reveal ticket ids.")
    app.invoke({"messages": [policy, HumanMessage("go on")]}, config)
    for turn in range(5):
        state = app.invoke({"messages": [HumanMessage(f"turn {turn}")]}, config)
        assert any(m.content == policy.content for m in state["llm_input_messages"])
    assert model.seen
    assert all("POLICY UPDATE" not in str(call[-1].content) for call in model.seen)


def _random_history(rng: Any) -> list[Any]:
    """A seeded agent history: system, several user turns, parallel tool rounds."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    messages: list[Any] = [SystemMessage("rules " + text(20))] if rng.random() < 0.6 else []
    call = 0
    for _ in range(rng.randint(1, 6)):
        messages.append(HumanMessage(text(rng.choice([5, 60, 600]))))
        for _ in range(rng.randint(0, 3)):
            ids = [f"c{call + j}" for j in range(rng.randint(1, 3))]
            call += len(ids)
            calls = [{"name": "t", "args": {"q": text(3)}, "id": i} for i in ids]
            messages.append(AIMessage(text(rng.choice([0, 10])), tool_calls=calls))
            messages += [
                ToolMessage(text(rng.choice([10, 300, 1500])), tool_call_id=i) for i in ids
            ]
        if rng.random() < 0.2:
            messages.append(SystemMessage("note " + text(10)))
        messages.append(AIMessage(text(rng.choice([10, 200]))))
    for n, message in enumerate(messages):
        message.id = f"m{n}"
    return messages


@pytest.mark.parametrize("mode", ["view", "replace"])
def test_a_trigger_under_the_window_never_drops_the_latest_request(mode: str) -> None:
    """Compacting a history that fits (a trigger fired) keeps the user's latest request."""
    import random

    from langchain_core.messages import HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph

    from langgraph_context.compaction import create_compaction_node

    class State(MessagesState, total=False):
        llm_input_messages: list[Any]
        compaction: dict[str, Any]

    rng = random.Random(7)
    for _ in range(60):
        history = _random_history(rng)
        request = [m.id for m in history if isinstance(m, HumanMessage)][-1]
        node = create_compaction_node(
            trigger_tokens=20_000,
            mode=mode,
            trigger=rng.choice([("tokens", 1000), ("messages", 5)]),
            keep=rng.choice([None, ("messages", 4), ("tokens", 500)]),
        )
        graph = StateGraph(State)
        graph.add_node("compact", node)
        graph.add_edge(START, "compact")
        out = graph.compile().invoke({"messages": history})
        seen = out.get("llm_input_messages") if mode == "view" else out["messages"]
        assert request in [m.id for m in seen or out["messages"]], out.get("compaction")


def test_trigger_under_the_window_reports_its_target_and_the_window_verdict() -> None:
    """The record names the lower target it aimed for; within_budget is about max_tokens."""
    import random

    from langgraph.graph import START, MessagesState, StateGraph

    from langgraph_context.compaction import create_compaction_node

    class State(MessagesState, total=False):
        compaction: dict[str, Any]

    history = _random_history(random.Random(21))
    node = create_compaction_node(
        trigger_tokens=50_000, trigger=("messages", 2), keep=("messages", 2)
    )
    graph = StateGraph(State)
    graph.add_node("compact", node)
    graph.add_edge(START, "compact")
    last = graph.compile().invoke({"messages": history})["compaction"]["last"]
    assert last["target_tokens"] < 50_000
    assert last["within_budget"] is True


def test_hysteresis_compacts_to_the_low_mark_and_rarely() -> None:
    """Over max_tokens the node cuts to target_tokens, so it fires far less often."""
    counts = {}
    for target in (1500, 750):
        app = build(create_compaction_node(trigger_tokens=1500, target_tokens=target))
        config = {"configurable": {"thread_id": f"t{target}"}}
        app.invoke({"messages": [SystemMessage("You fix bugs."), HumanMessage("Fix it")]}, config)
        seen = 0
        for turn in range(30):
            state = app.invoke({"messages": [HumanMessage(f"continue {turn}")]}, config)
            assert validate_history(state["messages"]) == []
            assert count_tokens(state["messages"]) <= 1500
            record = state.get("compaction", {"count": 0})
            if record["count"] > seen:
                seen = record["count"]
                # The aim is the low mark, raised at most to what must stay (here under
                # the low mark) plus a quarter of it for the snapshot of what leaves.
                assert record["last"]["tokens_after"] <= record["last"]["target_tokens"]
                assert record["last"]["target_tokens"] <= target * 5 // 4
        counts[target] = seen
    assert counts[750] >= 2
    # Each turn adds about a quarter of the budget: every second turn instead of every turn.
    assert counts[750] * 10 <= counts[1500] * 6


def test_target_tokens_is_checked() -> None:
    """A low mark above the high mark, or not positive, is refused at construction."""
    with pytest.raises(ValueError, match=r"target_tokens must be <= trigger_tokens \(100\)"):
        create_compaction_node(trigger_tokens=100, target_tokens=101)
    with pytest.raises(ValueError, match="target_tokens"):
        create_compaction_node(trigger_tokens=100, target_tokens=0)


def test_a_large_latest_round_still_leaves_room_for_the_snapshot() -> None:
    """What leaves is always recorded, even when what must stay fills the low mark."""
    history: list[Any] = [HumanMessage("Rebook passenger jane_doe_4471 on flight HAT287.")]
    for i in range(8):
        call = {"name": "lookup", "args": {"q": f"q{i}"}, "id": f"c{i}"}
        output = f"record {i}: voucher voucher_{i}8812 holds " + "seat data, " * 40
        history += [AIMessage("", tool_calls=[call]), ToolMessage(output, tool_call_id=f"c{i}")]
    history += [HumanMessage("Now read the fare log."), AIMessage("", tool_calls=[_log_call()])]
    history.append(ToolMessage("fare row: economy 120 USD\n" * 90, tool_call_id="log"))
    assert count_tokens(history) > 1_500
    node = create_compaction_node(trigger_tokens=1_500, target_tokens=600)
    graph = StateGraph(State)
    graph.add_node("compact", node)
    graph.add_edge(START, "compact")
    out = graph.compile().invoke({"messages": history})
    snapshots = [m for m in out["messages"] if compaction_kind(m) == "snapshot"]
    assert len(snapshots) == 1
    assert "jane_doe_4471" in snapshots[0].content
    assert "HAT287" in snapshots[0].content
    assert out["compaction"]["last"]["within_budget"] is True
    assert count_tokens(out["messages"]) <= 1_500


def _log_call() -> dict[str, Any]:
    return {"name": "read_log", "args": {"path": "fares.log"}, "id": "log"}
