"""Tool schemas inferred once per signature (`toolkit.ToolSpec.build`, `count_tool_tokens`).

An agent build made each of our tools' pydantic argument schemas again (about 4 ms and
300 objects a tool, 40 ms a `create_context_agent`). The schema is now kept by the
function's code and signature: these tests check that a kept schema is what inference
gives, that anything the inference reads makes a new one, and that the agent's tools
still validate their arguments through a real graph.
"""

from __future__ import annotations

import gc
import json
import weakref
from typing import Annotated, Any

from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, StructuredTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from langgraph_context import create_context_agent
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import count_tokens
from langgraph_context.tokens.tools import count_tool_tokens
from langgraph_context.toolkit import ToolSpec
from langgraph_context.tools.state_notes import create_write_note_tool

SPEC = ToolSpec("lookup", "Look an order up.")


def _factory(limit: int) -> StructuredTool:
    def lookup(
        order_id: str, tool_call_id: Annotated[str, InjectedToolCallId], n: int = limit
    ) -> str:
        """Look an order up."""
        return f"{order_id}:{n}"

    return SPEC.build(lookup)  # type: ignore[return-value]


def _inferred(made: StructuredTool) -> dict[str, Any]:
    """What `from_function` infers for the same function, with no kept schema."""
    fresh = StructuredTool.from_function(made.func, name=made.name, description=made.description)
    return fresh.args_schema.model_json_schema()  # type: ignore[union-attr]


def test_a_factory_built_twice_shares_one_schema_equal_to_inference() -> None:
    first, second = _factory(3), _factory(3)
    assert first.args_schema is second.args_schema
    assert second.args_schema.model_json_schema() == _inferred(second)  # type: ignore[union-attr]
    assert second.tool_call_schema.model_json_schema() == first.tool_call_schema.model_json_schema()  # type: ignore[union-attr]


def test_what_inference_reads_makes_a_new_schema() -> None:
    three, five = _factory(3), _factory(5)  # the default differs
    assert three.args_schema is not five.args_schema
    assert five.args_schema.model_json_schema() == _inferred(five)  # type: ignore[union-attr]
    renamed = ToolSpec("find", "Look an order up.").build(three.func)  # type: ignore[arg-type]
    assert renamed.args_schema is not three.args_schema


def test_an_unhashable_default_is_inferred_each_time() -> None:
    def pick(items: list[str] = ["a"]) -> str:  # noqa: B006 (the unhashable default is the point)
        """Pick one."""
        return items[0]

    a, b = SPEC.build(pick), SPEC.build(pick)
    assert a.args_schema is not b.args_schema
    assert a.args_schema.model_json_schema() == b.args_schema.model_json_schema()  # type: ignore[union-attr]


def test_tool_token_count_is_that_of_the_converted_schemas() -> None:
    @tool
    def free(x: int) -> int:
        """Plain function tool."""
        return x

    tools = [create_write_note_tool(), _factory(3), free]
    text = json.dumps(
        [convert_to_openai_tool(t) for t in tools],
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    assert count_tool_tokens(tools) == count_tokens(text)
    assert count_tool_tokens(tools) == count_tokens(text)  # kept, same
    longer = create_write_note_tool(description="Save a note. " * 20)  # same schema class
    alone = json.dumps([convert_to_openai_tool(longer)], ensure_ascii=False, separators=(",", ":"))
    assert count_tool_tokens([longer]) == count_tokens(alone) > count_tool_tokens([tools[0]])


def test_kept_schemas_still_validate_through_a_real_agent() -> None:
    """Two agents built from the same factories: the second's tool rejects a bad argument
    with an error the model can act on, and runs a good one."""
    for _ in range(2):
        model = ScriptedChatModel(
            responses=[
                ai_calls(tool_call("write_note", {"file_name": 7}, "bad")),
                ai_calls(tool_call("write_note", {"file_name": "todo", "content": "go"}, "ok")),
                ai_calls(content="noted"),
            ]
        )
        agent = create_context_agent(model, [], checkpointer=InMemorySaver())
        out = agent.invoke(
            {"messages": [HumanMessage("note it")]}, {"configurable": {"thread_id": "t"}}
        )
        results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
        assert results["bad"].status == "error"
        assert results["ok"].status != "error"
        assert "todo" in out["note"]


def test_an_object_default_is_not_kept_alive() -> None:
    """A default made per build (here an object) keeps the function out of the memo,
    which would otherwise hold the object until 256 other schemas pushed it out."""

    class Handle:
        pass

    def make(handle: Handle) -> StructuredTool:
        def use(x: int, h: object = handle) -> str:
            """Use it."""
            return str(x)

        return SPEC.build(use)  # type: ignore[return-value]

    handle = Handle()
    gone = weakref.ref(handle)
    made = make(handle)
    assert made.invoke({"x": 1}) == "1"
    del made, handle
    gc.collect()
    assert gone() is None


def test_equal_defaults_of_other_types_get_their_own_schema() -> None:
    """1, True and 1.0 are equal keys but not equal schemas (a review found them shared)."""

    def make(default: Any) -> StructuredTool:
        def scale(x: float = default) -> str:
            """Scale it."""
            return str(x)

        return SPEC.build(scale)  # type: ignore[return-value]

    for default in (1, True, 1.0, 2.5):
        made = make(default)
        props = made.args_schema.model_json_schema()["properties"]  # type: ignore[union-attr]
        assert props["x"]["default"] == default
        assert type(props["x"]["default"]) is type(default)


def test_a_tool_subclass_is_converted_each_time() -> None:
    """A tool class of its own may compute its schema from its state: never kept (the
    memo's key, name, description and argument schema, would be the same)."""

    class Narrow(BaseModel):
        x: int

    class Wide(BaseModel):
        x: int
        why: str = Field(description="Why the call is made, in a full sentence or two.")

    class Switch(StructuredTool):
        wide: bool = False

        @property
        def tool_call_schema(self) -> Any:
            return Wide if self.wide else Narrow

    def run(x: int) -> str:
        return str(x)

    narrow = Switch(name="same", description="One.", func=run, args_schema=Narrow)
    wide = Switch(name="same", description="One.", func=run, args_schema=Narrow, wide=True)
    assert count_tool_tokens([wide]) > count_tool_tokens([narrow])
    assert count_tool_tokens([narrow]) < count_tool_tokens([wide])
