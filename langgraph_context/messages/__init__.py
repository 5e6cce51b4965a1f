"""Messages: coercion from message-like input, and the tool-call pairing rules.

Every public function that takes a history accepts LangChain messages, OpenAI-style
dicts, `(role, content)` pairs and strings; `as_messages` is the one place that
converts and checks, so the rest of the package works on well-formed `BaseMessage`.
Anything else raises `InvalidTypeError` / `InvalidArgumentError` naming the item and
its position (`messages[3]: a tool message needs tool_call_id`).

Calls and results (one rule for every function here):

* The calls of an AI message are its `tool_calls` and its `invalid_tool_calls` (a
  reply whose arguments did not parse: `langchain-openai` sends those too, so they
  need a result like any other), or, when it has neither, the OpenAI-format
  `tool_calls` left in its `additional_kwargs` (sent in that case). Anthropic-native
  `tool_use` content blocks of an AI message are calls as well, merged by id with the
  others as `langchain-anthropic` does. `tool_use` blocks in other messages are
  ordinary content.
* The results are `ToolMessage`s and Anthropic-native `tool_result` content blocks of
  a `HumanMessage`. A human message holding any `tool_result` block is a result
  message: it belongs to the tool round before it, like a `ToolMessage`, even when it
  also holds text. `tool_result` blocks in other messages are ordinary content.

A history is valid when every result directly follows (within one block of results)
the AI message that made its call, every call has an id and gets exactly one result
before the next non-result message, and the conversation does not open with a result.
Ids are paired per block, so the same id may appear again later in a history. Invalid
calls are never pending: no tool node runs them, so `allow_pending_tool_calls` does
not excuse them.

`validate_history` reports violations; `repair_history` fixes them without losing any
user or assistant text (an unanswered call gets an error `ToolMessage`: "cancelled",
or for an invalid call the parse error and the bad arguments, as LangGraph's ToolNode
reports a failing tool); `group_tool_rounds` gives the atomic units that trimming and
compaction may cut between; `provider_ready_history` is the last step before a
model call (repaired, nothing empty, user turns merged so roles alternate).
"""

from langgraph_context.messages._blocks import (
    PROVIDER_COMPACTION_BLOCK as PROVIDER_COMPACTION_BLOCK,
)
from langgraph_context.messages._blocks import (
    REASONING_BLOCKS as REASONING_BLOCKS,
)
from langgraph_context.messages._blocks import (
    is_provider_compaction,
    last_provider_compaction,
)
from langgraph_context.messages._coerce import MessageLike, as_messages, content_text
from langgraph_context.messages._cuts import safe_cut_points, truncate_messages

# A constant: importable from here (its module is private), not part of `__all__`.
from langgraph_context.messages._history import CANCELLED_TOOL_RESULT as CANCELLED_TOOL_RESULT
from langgraph_context.messages._history import (
    HistoryRepair,
    HistoryViolation,
    ViolationKind,
    group_tool_rounds,
    repair_history,
    tool_result_ids,
    validate_history,
)
from langgraph_context.messages._ready import at_most_cache_marks, provider_ready_history

__all__ = [
    "HistoryRepair",
    "HistoryViolation",
    "MessageLike",
    "ViolationKind",
    "as_messages",
    "at_most_cache_marks",
    "content_text",
    "group_tool_rounds",
    "is_provider_compaction",
    "last_provider_compaction",
    "provider_ready_history",
    "repair_history",
    "safe_cut_points",
    "tool_result_ids",
    "truncate_messages",
    "validate_history",
]
