"""The public input schema of an agent's state: its keys minus the internal ones."""

from __future__ import annotations

from typing import Any, NotRequired, Required

from typing_extensions import TypedDict, get_type_hints, is_typeddict

__all__ = ["INTERNAL_STATE_KEYS", "public_input_schema"]

INTERNAL_STATE_KEYS = frozenset(
    {
        "llm_input_messages",  # the model's view, private to one call
        "compaction",  # the compaction node's record
        "compaction_requested",  # set by the request_compaction tool
        "token_usage",  # reported usage of the last call
        "briefing",  # the maintainer's per-turn briefing
        "session",  # session statistics
        "injection_flags",  # the output guard's findings
        "terminal_cwd",  # the terminal's working directory, written by its `cd`
    }
)
"""State keys the agents write for themselves; a client never sends them."""


def public_input_schema(state_schema: type[Any], name: str) -> type[Any] | None:
    """A TypedDict of `state_schema`'s keys a client may send (`None` if not a TypedDict).

    LangGraph publishes a graph's input schema (`get_input_jsonschema`, Studio, the
    SDK) from this, so internal keys (`llm_input_messages`, `compaction`, ...) are not
    offered as inputs. Each key keeps its annotation (and reducer).
    """
    if not is_typeddict(state_schema):
        return None
    hints = get_type_hints(state_schema, include_extras=True)
    required: frozenset[str] = getattr(state_schema, "__required_keys__", frozenset())
    fields = {
        key: (Required[hint] if key in required else NotRequired[hint])
        for key, hint in hints.items()
        if key not in INTERNAL_STATE_KEYS
    }
    schema: type[Any] = TypedDict(name, fields)  # type: ignore[misc]  # a runtime-built schema
    return schema
