"""Messages carry the time they entered the thread into selection and the rendered context."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.context.gather import message_time, messages_to_packets


def test_message_time_reads_stamps_and_provider_metadata() -> None:
    """Our stamp, a provider's ISO time and epoch milliseconds all become POSIX seconds."""
    stamped = HumanMessage("a", additional_kwargs={"timestamp": "2023-05-08T13:56:00Z"})
    provider = AIMessage("b", response_metadata={"created_at": "2023-05-08T13:56:00+00:00"})
    millis = AIMessage("c", response_metadata={"created": 1683554160000})
    assert message_time(stamped) == message_time(provider) == message_time(millis) == 1683554160.0
    assert message_time(HumanMessage("d")) is None
    assert message_time(HumanMessage("e", additional_kwargs={"timestamp": "soon"})) is None


def test_message_packets_are_dated() -> None:
    """A stamped message becomes a packet with that timestamp."""
    packets = messages_to_packets([HumanMessage("hi", additional_kwargs={"timestamp": 10.0})])
    assert packets[0].timestamp == 10.0


def test_context_names_the_day_and_a_dated_query_finds_its_turn() -> None:
    """[Context] shows a day line per day; "on 9 May, 2023" picks that day's turn."""
    history = [
        HumanMessage(
            f"I cooked pasta {i}",
            name="Nate",
            additional_kwargs={"timestamp": f"2023-05-{d}T12:00"},
        )
        for i, d in enumerate(["08", "09", "10"])
    ]
    builder = ContextBuilder(config=ContextConfig(max_tokens=90, output_instructions=""))
    result = builder.build_result("What did Nate cook on 9 May, 2023?", history)
    assert "(9 May 2023)\nNate: I cooked pasta 1" in result.text
    assert "Nate: I cooked pasta 1" in [p.content for p in result.selected]
    assert result.tokens <= 90
