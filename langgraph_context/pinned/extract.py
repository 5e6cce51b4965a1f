"""Optional LLM extractor: turn a user's message into standing constraints.

Off unless you add its node to your graph. The model is asked to list the standing
rules a message sets (one per line) or answer `NONE`; each rule becomes a constraint
with `source="extractor"` (untrusted data), or `source="user"` when the rule is whole
sentences of the user's message (`pinned.provenance`). Rules already recorded are
deduplicated by the reducer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.messages import content_text
from langgraph_context.pinned.provenance import user_quote
from langgraph_context.pinned.tools import MAX_CONSTRAINT_CHARS
from langgraph_context.state import Constraint, constraint_id, get_state_value

__all__ = [
    "aextract_constraints",
    "create_constraint_extractor_node",
    "extract_constraints",
    "parse_constraints",
]

DEFAULT_MAX_EXTRACTED = 5
DEFAULT_EXTRACTION_PROMPT = (
    "You maintain the standing rules of a long-running task. Read the user's message "
    "below and list every rule it sets for all future work: preferences, prohibitions, "
    "required tools, formats or conventions (for example 'Use pyproject.toml, never "
    "requirements.txt'). Ignore one-off requests, questions and facts. Write each rule "
    "as one short imperative sentence on its own line, with no numbering or commentary. "
    "If the message sets no standing rule, answer exactly NONE."
)

_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|rule\s*\d*\s*:)\s*", re.IGNORECASE)


def parse_constraints(reply: str, *, limit: int = DEFAULT_MAX_EXTRACTED) -> list[str]:
    r"""Return the rules listed in an extractor reply (bullets stripped, `NONE` ignored).

    Args:
        reply: The model's answer.
        limit: At most this many rules are kept.

    Returns:
        Rules in order, without duplicates or over-long lines.

    Example:
        >>> parse_constraints("- Use uv for installs\n2. Never edit setup.cfg\nNONE")
        ['Use uv for installs', 'Never edit setup.cfg']
    """
    rules: list[str] = []
    for line in reply.splitlines():
        rule = " ".join(_BULLET.sub("", line).split()).strip("\"'`")
        if not rule or rule.rstrip(".").upper() == "NONE" or len(rule) > MAX_CONSTRAINT_CHARS:
            continue
        if rule not in rules:
            rules.append(rule)
    return rules[:limit]


def _prompt(text: str, prompt: str) -> list[BaseMessage]:
    return [SystemMessage(prompt), HumanMessage(text)]


def extract_constraints(
    text: str, *, model: BaseChatModel, prompt: str = DEFAULT_EXTRACTION_PROMPT
) -> list[str]:
    """Ask `model` which standing rules `text` (a user message) sets.

    Args:
        text: The user's message.
        model: Any chat model.
        prompt: The system prompt of the extraction call.

    Returns:
        The rules, possibly empty.
    """
    if not text.strip():
        return []
    reply = model.invoke(_prompt(text, prompt))
    return parse_constraints(content_text(reply.content))


async def aextract_constraints(
    text: str, *, model: BaseChatModel, prompt: str = DEFAULT_EXTRACTION_PROMPT
) -> list[str]:
    """Async twin of `extract_constraints`.

    Args:
        text: The user's message.
        model: Any chat model.
        prompt: The system prompt of the extraction call.

    Returns:
        The rules, possibly empty.
    """
    if not text.strip():
        return []
    reply = await model.ainvoke(_prompt(text, prompt))
    return parse_constraints(content_text(reply.content))


def _latest_user_text(state: Any, messages_key: str) -> str:
    messages: Sequence[BaseMessage] = get_state_value(state, messages_key, [])
    if messages and isinstance(messages[-1], HumanMessage):
        return content_text(messages[-1].content)
    return ""


def _entries(rules: list[str], text: str) -> list[Constraint]:
    """The rules as constraints: a rule that is whole sentences of `text` is the user's."""
    said = [HumanMessage(text)]
    return [
        Constraint(
            id=constraint_id(rule),
            text=rule,
            status="active",
            source="user" if user_quote(rule, said) is not None else "extractor",
        )
        for rule in rules
    ]


def create_constraint_extractor_node(
    model: BaseChatModel,
    *,
    messages_key: str = "messages",
    constraints_key: str = "constraints",
    prompt: str = DEFAULT_EXTRACTION_PROMPT,
) -> RunnableLambda[Any, dict[str, Any]]:
    """Create a node that records the constraints set by the newest user message.

    Place it first (`START -> extract -> agent`). It calls the model only when the
    last message is from the user, so tool rounds cost nothing.

    Args:
        model: The chat model that reads the message.
        messages_key: State key of the messages.
        constraints_key: State key of the constraints (a `constraint_reducer` channel).
        prompt: The extraction system prompt.

    Returns:
        A node (sync and async) returning `{constraints_key: [...]}` or `{}`.

    Raises:
        TypeError: If `model` is not a chat model.
        ValueError: If `prompt` is empty.
    """
    if not isinstance(model, BaseChatModel):
        msg = f"model must be a langchain BaseChatModel, got {type(model).__name__}"
        raise InvalidTypeError(msg)
    if not isinstance(prompt, str) or not prompt.strip():
        msg = f"prompt must be a non-empty string, got {prompt!r}"
        raise InvalidArgumentError(msg)

    def extract(state: Any) -> dict[str, Any]:
        text = _latest_user_text(state, messages_key)
        rules = extract_constraints(text, model=model, prompt=prompt) if text else []
        return {constraints_key: _entries(rules, text)} if rules else {}

    async def aextract(state: Any) -> dict[str, Any]:
        text = _latest_user_text(state, messages_key)
        rules = await aextract_constraints(text, model=model, prompt=prompt) if text else []
        return {constraints_key: _entries(rules, text)} if rules else {}

    return RunnableLambda(extract, afunc=aextract, name="extract_constraints")
