"""Property tests: compaction never yields an invalid or silently over-budget history."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.compaction import compact_messages
from langgraph_context.compaction.provenance import mark_later_system
from langgraph_context.messages import validate_history
from langgraph_context.tokens import count_tokens

texts = st.text(alphabet="abc xyz/._-019\n", max_size=120)
contents = st.one_of(
    texts,
    st.just(""),
    st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, texts),
            st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
        ),
        max_size=3,
    ),
)
EXAMPLES = int(os.environ.get("LGC_PROPERTY_EXAMPLES", "150"))  # 10000 for the full run
ids = st.sampled_from(["a", "b", "c", "d"])  # few ids: repeats are common


@st.composite
def messages(draw: Any) -> list:
    """Messy histories: parallel calls, repeated ids, missing/orphan results, systems."""
    out: list = []
    if draw(st.booleans()):
        out.append(SystemMessage(draw(texts) or "rules"))
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["human", "ai", "calls", "tool", "system"]))
        if kind == "human":
            out.append(HumanMessage(draw(contents)))
        elif kind == "ai":
            out.append(AIMessage(draw(contents)))
        elif kind == "system":
            out.append(SystemMessage(draw(texts) or "mid rules"))
        elif kind == "tool":
            out.append(ToolMessage(draw(contents), tool_call_id=draw(ids)))
        else:
            call_ids = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
            calls = [{"name": "t", "args": {"p": draw(texts)}, "id": i} for i in call_ids]
            out.append(AIMessage(draw(texts), tool_calls=calls))
            for i in call_ids:
                if draw(st.integers(0, 4)):  # sometimes a result is missing
                    out.append(ToolMessage(draw(contents), tool_call_id=i))
    return out


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    history=messages(),
    budget=st.integers(1, 400),
    strategy=st.sampled_from(["auto", "clear_tool_results", "drop_oldest", "drop_middle"]),
    snapshot=st.booleans(),
)
def test_output_always_valid_and_budget_honest(
    history: list, budget: int, strategy: str, snapshot: bool
) -> None:
    """Every output validates; it is within budget or says it is not, truthfully."""
    result = compact_messages(history, target_tokens=budget, strategy=strategy, snapshot=snapshot)  # type: ignore[arg-type]
    assert validate_history(result.messages) == []
    real = count_tokens(result.messages) if result.messages else 0
    assert result.stats.tokens_after == real
    assert result.stats.within_budget == (real <= budget)
    if not result.stats.within_budget:
        assert result.stats.note
    systems = [m for m in mark_later_system(history) if isinstance(m, SystemMessage)]
    kept = [m for m in result.messages if isinstance(m, SystemMessage)]
    assert kept == systems  # every one kept, in order; later ones marked untrusted


@settings(max_examples=100, deadline=None)
@given(history=messages(), budget=st.integers(1, 30))
def test_exact_counter_budget(history: list, budget: int) -> None:
    """With `len` as counter (one per message) budgets hold exactly when achievable."""
    result = compact_messages(history, target_tokens=budget, token_counter=len, snapshot=False)
    assert validate_history(result.messages) == []
    assert result.stats.tokens_after == len(result.messages)
    assert result.stats.within_budget == (len(result.messages) <= budget)


@settings(max_examples=60, deadline=None)
@given(history=messages())
def test_input_not_mutated(history: list) -> None:
    """Compaction never changes the caller's messages."""
    before = [m.model_copy(deep=True) for m in history]
    compact_messages(history, target_tokens=50)
    assert history == before
