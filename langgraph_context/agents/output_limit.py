"""`create_agent` middleware that cuts each long tool result once, as the tool returns it.

The middleware twin of `compaction.create_tool_output_limit_node`: a result over
`max_result_tokens` reaches the history already cut to its two ends around a notice, so the
model never sees (and a later compaction never rewrites) the long text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from langgraph_context._steps import signed
from langgraph_context.compaction.entry import arrived_tool_result
from langgraph_context.compaction.options import check_positive
from langgraph_context.tokens import TokenCounter, resolve_counter

__all__ = ["ToolOutputLimitMiddleware"]

_Result = ToolMessage | Command[Any]


class ToolOutputLimitMiddleware(AgentMiddleware):
    """Cut each tool result over `max_result_tokens` to its two ends as the tool returns it.

    A result that is one JSON object or array first loses the whitespace outside its
    strings (lossless; see `compaction.minify_tool_result`), unless `minify_json=False`.

    Args:
        max_result_tokens: Most tokens one tool result keeps (notice included).
        minify_json: Minify JSON results before measuring them.
        token_counter: Counter for the limit (default: offline tiktoken).
        name: Middleware name, unique per agent.

    Raises:
        ValueError: If `max_result_tokens` is not a positive int.
    """

    def __init__(
        self,
        max_result_tokens: int = 1_000,
        *,
        minify_json: bool = True,
        token_counter: TokenCounter | BaseLanguageModel | None = None,
        name: str = "tool_output_limit",
    ) -> None:
        super().__init__()
        check_positive("max_result_tokens", max_result_tokens)
        self.max_result_tokens = max_result_tokens
        self.minify_json = minify_json
        self._counter = resolve_counter(token_counter)
        self._name = name

    @property
    def name(self) -> str:
        """The middleware's name."""
        return self._name

    def _cut(self, result: _Result) -> _Result:
        if isinstance(result, Command):
            return self._cut_command(result)
        short = arrived_tool_result(
            result,
            self.max_result_tokens,
            minify_json=self.minify_json,
            token_counter=self._counter,
        )
        return result if short is None else short

    def _cut_command(self, command: Command[Any]) -> Command[Any]:
        """A command's tool messages cut (an inner middleware's, e.g. recall's offload)."""
        update = command.update
        messages = update.get("messages") if isinstance(update, dict) else None
        if not isinstance(update, dict) or not isinstance(messages, list):
            return command  # a Command updating state its own way: left alone
        cut = [self._cut(m) if isinstance(m, ToolMessage) else m for m in messages]
        return dataclasses.replace(command, update={**update, "messages": cut})

    @signed
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], _Result]
    ) -> _Result:
        """Run the tool, then cut its result if it is over the limit."""
        return self._cut(handler(request))

    @signed
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[_Result]]
    ) -> _Result:
        """Async twin of `wrap_tool_call`."""
        return self._cut(await handler(request))
