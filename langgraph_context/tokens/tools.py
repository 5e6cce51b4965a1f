"""How many tokens an agent's tool definitions add to every request.

A provider renders the tool definitions ahead of the messages on every call, so they
are a fixed part of each request's budget, like the system prompt. Counted here as the
compact JSON of the OpenAI tool schemas (`convert_to_openai_tool`), which is what
`langchain-openai` sends; other providers' renderings differ by a few tokens per tool.

Each plain `StructuredTool`'s JSON is kept (`TOOL_JSON_KEPT` entries, least recently
used out) by its name, description and argument schema class: what the conversion reads.
Converting builds a pydantic class per tool (about 1 ms), and every agent build counts
its tools.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from langgraph_context._memo import SizedMemo
from langgraph_context.errors import InvalidTypeError
from langgraph_context.tokens.counter import TokenCounter, count_tokens

__all__ = ["count_tool_tokens"]

TOOL_JSON_KEPT = 256
"""Tools whose compact JSON schema is kept process-wide (a few hundred bytes each)."""
_JSON: SizedMemo[tuple[Any, ...], str] = SizedMemo(TOOL_JSON_KEPT)


def _tool_json(item: Any) -> str:
    """The compact JSON of `item`'s OpenAI tool schema (kept for a plain `StructuredTool`)."""
    key = None
    # A plain `StructuredTool` (what `ToolSpec.build` makes) without metadata: the
    # conversion reads nothing else; a subclass may compute its schema from its state.
    if type(item) is StructuredTool and isinstance(item.args_schema, type) and not item.metadata:
        key = (item.name, item.description, item.args_schema)
        text = _JSON.get(key)  # the memo locks its writes
        if text is not None:
            return text
    text = json.dumps(
        convert_to_openai_tool(item), ensure_ascii=False, separators=(",", ":"), default=str
    )
    if key is not None:
        _JSON.put(key, text)
    return text


def count_tool_tokens(
    tools: Sequence[Any], *, token_counter: TokenCounter | BaseLanguageModel | None = None
) -> int:
    """Count the tokens the tool definitions add to each request.

    Args:
        tools: Tools as `bind_tools` takes them (`BaseTool`, functions, pydantic
            models, OpenAI tool dicts).
        token_counter: Counter for the schema text (default: offline tiktoken).

    Returns:
        The tokens of the tools' compact JSON schemas; 0 for no tools.

    Raises:
        InvalidTypeError: If an item cannot be turned into a tool schema.

    Example:
        >>> from langchain_core.tools import tool
        >>> @tool
        ... def lookup(order_id: str) -> str:
        ...     '''Look an order up.'''
        ...     return order_id
        >>> count_tool_tokens([lookup]) > 10
        True
    """
    if not tools:
        return 0
    schemas = []
    for index, item in enumerate(tools):
        try:
            schemas.append(_tool_json(item))
        except (TypeError, ValueError) as exc:
            msg = f"tools[{index}] is not a tool ({type(item).__name__}): {exc}"
            raise InvalidTypeError(msg) from exc
    # the same text as `json.dumps` of the list: items joined by the compact separator
    return count_tokens(f"[{','.join(schemas)}]", token_counter=token_counter)
