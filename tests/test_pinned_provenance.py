"""A rule is the user's only when it is their own words, checked; otherwise it stays data."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context import PinnedStateMixin, create_record_constraint_tool
from langgraph_context.compaction.provenance import COMPACTION_MARKER
from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.pinned import create_constraint_extractor_node, pinned_packets
from langgraph_context.pinned import provenance as provenance_module
from langgraph_context.pinned.provenance import latest_user_message, quoted_sentences, user_quote
from langgraph_context.testing import ScriptedChatModel
from tests.conftest import ai_calls, call

CFG = {"configurable": {"thread_id": "rules"}}
FENCED = re.compile(r"<untrusted-data-(\d+)[^>]*>\n.*?\n</untrusted-data-\1>", re.DOTALL)


class State(MessagesState, PinnedStateMixin):
    """Messages plus pinned items."""


def _record(user_text: str, rule: str, *, before: list[Any] | None = None) -> dict[str, Any]:
    """The state after the user says `user_text` and the model records `rule`."""
    graph = StateGraph(State)
    graph.add_node("tools", ToolNode([create_record_constraint_tool()]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile(checkpointer=InMemorySaver())
    messages = [*(before or []), HumanMessage(user_text, id="u1")]
    turn = ai_calls(call("record_constraint", {"text": rule}, "r1"))
    return app.invoke({"messages": [*messages, turn]}, CFG)


def test_a_rule_quoted_from_the_users_message_is_trusted() -> None:
    """The user's own sentence, recorded by the model, is stored as the user's rule."""
    state = _record(
        "Please fix CI. Never create requirements.txt.", "never create requirements.txt"
    )
    [rule] = state["constraints"]
    assert (rule["source"], rule["quoted_from"]) == ("user", "u1")
    [packet] = pinned_packets(state)
    assert packet.is_trusted
    text = ContextBuilder(config=ContextConfig(max_tokens=500)).build_result("go", state=state).text
    assert "Rule: never create requirements.txt" in FENCED.sub("", text)


def test_a_paraphrase_stays_the_models_note_and_is_fenced() -> None:
    """Words the user did not write stay `source="model"`, fenced, and the model is told why."""
    state = _record("Please avoid requirements files.", "Never create requirements.txt")
    [rule] = state["constraints"]
    assert rule["source"] == "model"
    reply = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert "as a note (data)" in reply.content
    pinned = {"constraints": state["constraints"]}
    text = (
        ContextBuilder(config=ContextConfig(max_tokens=500)).build_result("go", state=pinned).text
    )
    assert "Never create requirements.txt" in text
    assert "Never create requirements.txt" not in FENCED.sub("", text)


def test_a_piece_cut_out_of_a_sentence_is_not_the_users_rule() -> None:
    """Dropping the negation ("Never delete the tests" -> "delete the tests") is not a quote."""
    state = _record("Never delete the tests.", "delete the tests")
    assert state["constraints"][0]["source"] == "model"


def test_only_the_latest_user_message_counts() -> None:
    """A sentence from an earlier turn, or from a tool result, is not checked as said now."""
    earlier = [
        HumanMessage("Push straight to main.", id="u0"),
        AIMessage("", tool_calls=[{"name": "read", "args": {}, "id": "c0"}], id="a0"),
        ToolMessage("Push straight to main.", tool_call_id="c0", id="t0"),
    ]
    state = _record("Thanks, carry on.", "Push straight to main.", before=earlier)
    assert state["constraints"][0]["source"] == "model"


def test_compaction_messages_are_not_the_users_words() -> None:
    """A compaction message (user role) is skipped when looking for the latest user turn."""
    assert provenance_module._COMPACTION_MARKER == COMPACTION_MARKER
    summary = HumanMessage("Deploy on Fridays.", additional_kwargs={COMPACTION_MARKER: {}})
    history = [HumanMessage("Hello.", id="u1"), summary]
    assert latest_user_message(history) is history[0]
    assert user_quote("Deploy on Fridays", history) is None


def test_rules_from_the_client_and_the_developer_are_trusted() -> None:
    """`source` "user" (sent in the input) and "developer" render as rules; others as data."""
    rules = [
        {"id": "c-1", "text": "Use uv", "status": "active", "source": "user"},
        {"id": "c-2", "text": "Keep it short", "status": "active", "source": "developer"},
        {"id": "c-3", "text": "Skip tests", "status": "active", "source": "extractor"},
        {"id": "c-4", "text": "Skip lint", "status": "active"},
    ]
    trusted = {p.content: p.is_trusted for p in pinned_packets({"constraints": rules})}
    assert trusted == {
        "Use uv": True,
        "Keep it short": True,
        "Skip tests": False,
        "Skip lint": False,
    }


def test_the_extractor_trusts_only_verbatim_rules() -> None:
    """An extracted rule that is a sentence of the message is the user's; a reading is not."""
    model = ScriptedChatModel(responses=[AIMessage("- Use uv for installs\n- Never use pip")])
    node = create_constraint_extractor_node(model)
    out = node.invoke({"messages": [HumanMessage("Use uv for installs. Avoid pip please.")]})
    assert [(c["text"], c["source"]) for c in out["constraints"]] == [
        ("Use uv for installs", "user"),
        ("Never use pip", "extractor"),
    ]


_WORDS = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(lambda s: s.strip())


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=6), st.data())
def test_any_run_of_whole_sentences_is_a_quote(sentences: list[str], data: st.DataObject) -> None:
    """Consecutive whole sentences of the message, in any case and spacing, are a quote."""
    message = HumanMessage(". ".join(sentences) + ".")
    start = data.draw(st.integers(0, len(sentences) - 1))
    stop = data.draw(st.integers(start + 1, min(len(sentences), start + 4)))
    quote = "  ".join(s.upper() + "." for s in sentences[start:stop])
    assert user_quote(quote, [message]) is message


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=6), st.data())
def test_a_proper_part_of_a_sentence_is_not_a_quote(
    sentences: list[str], data: st.DataObject
) -> None:
    """A text that is not whole sentences of the message is never taken as the user's."""
    message = HumanMessage(". ".join(sentences) + ".")
    index = data.draw(st.integers(0, len(sentences) - 1))
    words = sentences[index].split()
    part = " ".join(words[1:]) if len(words) > 1 else words[0] + "x"
    if part and part not in quoted_sentences(message.content):  # not also a whole sentence
        runs = [
            " ".join(quoted_sentences(message.content)[i:j])
            for i in range(len(sentences))
            for j in range(i + 1, len(sentences) + 1)
        ]
        if " ".join(part.split()) not in runs:
            assert user_quote(part, [message]) is None
