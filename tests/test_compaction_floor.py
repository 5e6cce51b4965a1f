"""With a summarizer model, compaction keeps every fact that rules alone keep."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.compaction import SummaryOptions, create_compaction_node
from langgraph_context.compaction._floor import history_facts, lost_facts

BUDGET = 900


def _history() -> list[BaseMessage]:
    """A long policy prompt, then tool rounds that each name a file and an id."""
    messages: list[BaseMessage] = [
        SystemMessage("Follow the airline policy. " * 60),
        HumanMessage("Change reservation ZFA04Y to the cheapest economy flight."),
    ]
    for n in range(8):
        call = {"name": "lookup", "args": {"path": f"data/res{n}.json"}, "id": f"c{n}"}
        messages.append(AIMessage(f"Looking up HAT{n:03d}.", tool_calls=[call]))
        messages.append(ToolMessage(f"flight HAT{n:03d} " + "seat ok. " * 30, tool_call_id=f"c{n}"))
    messages.append(HumanMessage("Which flights did you find?"))
    return messages


def _view(model: Any) -> list[BaseMessage]:
    options = SummaryOptions(max_summary_tokens=40)
    node = create_compaction_node(
        max_tokens=BUDGET, mode="view", model=model, summary_options=options
    )
    out = node.invoke({"messages": _history()})
    return list(out["llm_input_messages"])


def test_summarizer_keeps_every_fact_the_rules_keep() -> None:
    """A summarizer that forgets every fact still leaves all the rules-only facts in view."""
    rules = _view(None)
    with_model = _view(FakeListChatModel(responses=["The user asked about flights."] * 10))
    assert history_facts(rules)
    assert lost_facts(rules, with_model) == []


def test_lost_facts_names_what_a_history_forgets() -> None:
    """`lost_facts` lists the facts of the floor that the candidate never mentions."""
    floor = [HumanMessage("open src/app.py for order W123")]
    candidate = [HumanMessage("open src/app.py")]
    assert lost_facts(floor, candidate) == ["W123"]
