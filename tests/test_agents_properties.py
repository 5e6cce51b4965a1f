"""Property: the context agent's history and every model input stay valid and bounded."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context import count_tokens
from langgraph_context.agents import CompactionMiddleware, ContextMiddleware, create_context_agent
from langgraph_context.messages import validate_history
from tests.conftest import ScriptedChatModel, ai_calls, call

VIEW_BUDGET = 1200


@tool
def read(path: str, size: int) -> str:
    """Return `size` words of a fake file."""
    return f"{path}: " + " ".join(f"w{i}" for i in range(size))


# A turn: a list of tool rounds, each a list of parallel read sizes (in words).
turns_strategy = st.lists(
    st.lists(st.lists(st.integers(min_value=1, max_value=120), min_size=1, max_size=3), max_size=2),
    min_size=1,
    max_size=6,
)


def _script(turns: list[list[list[int]]]) -> list[AIMessage]:
    responses: list[AIMessage] = []
    for t, rounds in enumerate(turns):
        for r, sizes in enumerate(rounds):
            calls = [
                call("read", {"path": f"t{t}r{r}c{c}.py", "size": size}, f"t{t}r{r}c{c}")
                for c, size in enumerate(sizes)
            ]
            responses.append(ai_calls(*calls))
        responses.append(AIMessage(f"turn {t} done"))
    return responses


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(turns=turns_strategy)
def test_history_and_model_inputs_stay_valid_and_bounded(turns: list[list[list[int]]]) -> None:
    """Any mix of parallel tool rounds: valid state, valid views, views within budget."""
    model = ScriptedChatModel(responses=_script(turns))
    graph = create_context_agent(
        model,
        [read],
        compaction=CompactionMiddleware(trigger_tokens=900, mode="replace"),
        context=ContextMiddleware(VIEW_BUDGET),
        checkpointer=InMemorySaver(),
    )
    config: dict[str, Any] = {"configurable": {"thread_id": "p"}}
    for t in range(len(turns)):
        out = graph.invoke({"messages": [HumanMessage(f"turn {t}")]}, config)
        assert validate_history(out["messages"]) == []
        assert out["messages"][-1].content == f"turn {t} done"
    for seen in model.seen:
        assert validate_history(seen[1:]) == []
        assert count_tokens(seen) <= VIEW_BUDGET + 10
