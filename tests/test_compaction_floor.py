"""With a summarizer model, compaction keeps every fact that rules alone keep."""

from __future__ import annotations

from typing import Any

import pytest
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
        trigger_tokens=BUDGET, mode="view", model=model, summary_options=options
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


def _wallet_history() -> list[BaseMessage]:
    """Six lookups whose outputs alone name the user's payment ids, then a new request."""
    messages: list[BaseMessage] = [
        SystemMessage("Follow the airline policy. " * 60),
        HumanMessage("What do I have on file? My user id is mia_li_3668."),
    ]
    for n in range(6):
        call = {"name": "get_user_details", "args": {"user_id": "mia_li_3668"}, "id": f"c{n}"}
        messages.append(AIMessage("", tool_calls=[call]))
        output = f'{{"payment": "credit_card_{4421486 + n}", "note": "' + "ok " * 40 + '"}'
        messages.append(ToolMessage(output, tool_call_id=f"c{n}"))
    messages.append(AIMessage("You have several cards on file."))
    messages.append(HumanMessage("Fine, change the flight to business."))
    return messages


class _Failing(FakeListChatModel):
    """A summarizer whose every call fails."""

    def _call(self, *args: Any, **kwargs: Any) -> str:
        raise RuntimeError("provider unavailable")


def _wallet_view(model: Any) -> tuple[list[BaseMessage], dict[str, Any]]:
    node = create_compaction_node(
        trigger_tokens=850,
        target_tokens=700,
        mode="view",
        model=model,
        summary_options=SummaryOptions(max_summary_tokens=40),
    )
    out = node.invoke({"messages": _wallet_history()})
    return list(out["llm_input_messages"]), out["compaction"]["last"]


def test_clearing_that_fits_but_forgets_does_not_replace_the_rules() -> None:
    """Clearing tool results alone fits the budget but drops ids the rules' snapshot keeps.

    Before the fix the node with a model stopped at that clearing pass (no summary, no
    floor check) and the payment ids were gone; now the summary runs and the floor holds.
    """
    rules, rules_stats = _wallet_view(None)
    assert rules_stats["strategy"] == "drop_middle"
    assert "credit_card_4421486" in " ".join(str(m.content) for m in rules)
    forgetful = FakeListChatModel(responses=["The user asked about cards."] * 10)
    with_model, stats = _wallet_view(forgetful)
    assert stats["summarizer_calls"] == 1
    assert lost_facts(rules, with_model) == []
    assert "credit_card_4421486" in " ".join(str(m.content) for m in with_model)


def test_failed_summarizer_falls_back_to_the_rules_not_to_the_lossy_clearing() -> None:
    """When the summarizer fails, the fallback keeps every fact the rules keep."""
    rules, _ = _wallet_view(None)
    with_model, stats = _wallet_view(_Failing(responses=[""]))
    assert stats["fallback"] is True
    assert lost_facts(rules, with_model) == []


@pytest.mark.parametrize("words", [40, 50])
def test_over_the_high_mark_a_summarizer_aims_where_the_rules_do(words: int) -> None:
    """Over the high mark, with a long latest request, a summary keeps the rules' facts.

    The rules-only node leaves room above what must stay for its snapshot; the summary
    path once aimed lower, so its floor was computed at that lower budget and the first
    request's reservation id (ZFA04Y) was lost with a summarizer but kept without one.
    """
    history = _history()
    history[-1] = HumanMessage(
        "Which flights did you find? " + "Please list every detail. " * words
    )
    options = SummaryOptions(max_summary_tokens=40)

    def view(model: Any) -> list[BaseMessage]:
        node = create_compaction_node(
            trigger_tokens=BUDGET, mode="view", model=model, summary_options=options
        )
        return list(node.invoke({"messages": history})["llm_input_messages"])

    rules = view(None)
    with_model = view(FakeListChatModel(responses=["The user asked about flights."] * 10))
    assert history_facts(rules)
    assert lost_facts(rules, with_model) == []
