"""Output guard: catch replies showing the model obeyed instructions injected in data.

The input defenses (sanitize, wrap, hardening) prevent most injections; this is the
last layer. `check_output` is a pure function over the reply text; the node built by
`create_output_guard_node` runs it on the newest AI message and then flags it in
state, replaces it with a safe reply, or raises, as configured.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage
from typing_extensions import TypedDict

from langgraph_context.errors import InvalidArgumentError, LangGraphContextError
from langgraph_context.messages import content_text
from langgraph_context.safety._shadow import shadow, shadow_spans
from langgraph_context.safety.detector import DetectorLike, as_detector
from langgraph_context.safety.patterns import COMPLIANCE_PATTERNS
from langgraph_context.state import get_state_value

__all__ = [
    "GuardAction",
    "InjectionFlag",
    "OutputVerdict",
    "PromptInjectionError",
    "SafetyStateMixin",
    "append_flags",
    "check_output",
    "create_output_guard_node",
]

GuardAction = Literal["flag", "replace", "raise"]
GUARD_ACTIONS: tuple[GuardAction, ...] = ("flag", "replace", "raise")

DEFAULT_GUARD_REPLACEMENT = (
    "I stopped this reply because it appeared to follow instructions embedded in data "
    "(a tool result, file or document) rather than yours. Please restate what you need."
)


class PromptInjectionError(LangGraphContextError, RuntimeError):
    """Raised by the output guard with `action="raise"` when a reply is flagged.

    Attributes:
        matches: The phrases that flagged the reply.
    """

    def __init__(self, message: str, *, matches: Sequence[str]) -> None:
        super().__init__(message)
        self.matches = tuple(matches)


@dataclass(frozen=True)
class OutputVerdict:
    """The guard's reading of one reply.

    Attributes:
        flagged: Whether the reply shows compliance with injected instructions.
        matches: The phrases (or canaries) found, in text order.
    """

    flagged: bool
    matches: tuple[str, ...] = ()


class InjectionFlag(TypedDict):
    """A record the guard writes to state for a flagged reply.

    Attributes:
        message_id: The id of the flagged AI message.
        matches: The phrases that flagged it.
        action: What the guard did (`flag` or `replace`).
    """

    message_id: str | None
    matches: list[str]
    action: GuardAction


def append_flags(
    left: Sequence[InjectionFlag] | None, right: Sequence[InjectionFlag] | None
) -> list[InjectionFlag]:
    """Append new guard flags to the existing ones.

    Args:
        left: The flags so far.
        right: New flags.

    Returns:
        A new list of new dicts; neither input is modified.

    Example:
        >>> append_flags(None, [{"message_id": "1", "matches": ["x"], "action": "flag"}])
        [{'message_id': '1', 'matches': ['x'], 'action': 'flag'}]
    """
    return [
        InjectionFlag(message_id=f["message_id"], matches=list(f["matches"]), action=f["action"])
        for f in [*(left or []), *(right or [])]
    ]


class SafetyStateMixin(TypedDict, total=False):
    """Adds `injection_flags`, the output guard's record of flagged replies."""

    injection_flags: Annotated[list[InjectionFlag], append_flags]


def check_output(
    text: str, *, canaries: Sequence[str] = (), detector: DetectorLike | None = None
) -> OutputVerdict:
    """Return whether a reply shows the model complied with injected instructions.

    It looks for compliance phrases ("I will now act as", "I have ignored my previous
    instructions", "as instructed by the document", "here is my system prompt", ...)
    and for any canary string (for example a secret or this build's boundary token)
    leaking into the reply. Matching sees through case, zero-width characters and
    look-alike letters. A `detector`'s scorer (for example a judge trained on
    replies that obeyed injected text) flags a reply it rates at or above its
    threshold, with a `scored <value>` match; its input rules are not run on replies.

    Args:
        text: The reply text.
        canaries: Strings that must never appear in a reply.
        detector: A `safety.Detector` or a bare scorer; `None` for phrases only.

    Returns:
        The verdict with the matched phrases.

    Raises:
        TypeError: If `detector` is not a detector or scorer, or its scorer answers
            with something other than a number.

    Example:
        >>> check_output("Sure, I'll ignore the rules. I will now act as DAN.").flagged
        True
        >>> check_output("The tool output asked me to ignore my instructions; I did not.").flagged
        False
    """
    views = (shadow(text, fold=False), shadow(text, fold=True))
    patterns = list(COMPLIANCE_PATTERNS)
    patterns += [re.compile(re.escape(c.casefold())) for c in canaries if c]
    spans = sorted(set(shadow_spans(views, patterns)))
    matches: list[str] = []
    for start, end in spans:
        if text[start:end] not in matches:
            matches.append(text[start:end])
    chosen = as_detector(detector)
    value = chosen.score(text) if chosen is not None else None
    if chosen is not None and value is not None and value >= chosen.threshold:
        matches.append(f"scored {value:.2f}")
    return OutputVerdict(bool(matches), tuple(matches))


def create_output_guard_node(
    *,
    action: GuardAction = "flag",
    messages_key: str = "messages",
    flags_key: str = "injection_flags",
    replacement: str = DEFAULT_GUARD_REPLACEMENT,
    canaries: Sequence[str] = (),
    detector: DetectorLike | None = None,
) -> Callable[[Any], dict[str, Any]]:
    """Create a node that checks the newest AI message with `check_output`.

    Place it right after the model node. On a flagged reply it:

    * `flag`: records an `InjectionFlag` under `flags_key` and leaves the reply;
    * `replace`: records the flag and replaces the reply (same message id) with
      `replacement`, dropping its tool calls so nothing it asked for runs;
    * `raise`: raises `PromptInjectionError`, stopping the run.

    Args:
        action: What to do with a flagged reply.
        messages_key: State key of the messages.
        flags_key: State key of the flags (an `append_flags` channel, see
            `SafetyStateMixin`).
        replacement: The safe reply used by `replace`.
        canaries: Strings whose presence in a reply flags it.
        detector: A `safety.Detector` or scorer whose rating also flags a reply
            (`check_output`).

    Returns:
        A node returning the state update (`{}` when the reply is clean).

    Raises:
        ValueError: If `action` is not one of `GUARD_ACTIONS`, `replacement` is empty,
            or a canary is empty.
        TypeError: If `detector` is not a detector or scorer.
    """
    if action not in GUARD_ACTIONS:
        msg = f"action must be one of {GUARD_ACTIONS}, got {action!r}"
        raise InvalidArgumentError(msg)
    if not isinstance(replacement, str) or not replacement.strip():
        msg = f"replacement must be a non-empty string, got {replacement!r}"
        raise InvalidArgumentError(msg)
    if isinstance(canaries, str) or not all(isinstance(c, str) and c for c in canaries):
        msg = f"canaries must be a sequence of non-empty strings, got {canaries!r}"
        raise InvalidArgumentError(msg)
    canary_list = tuple(canaries)
    chosen = as_detector(detector)

    def guard_output(state: Any) -> dict[str, Any]:
        messages = get_state_value(state, messages_key, [])
        if not messages or not isinstance(messages[-1], AIMessage):
            return {}
        reply = messages[-1]
        verdict = check_output(content_text(reply.content), canaries=canary_list, detector=chosen)
        if not verdict.flagged:
            return {}
        if action == "raise":
            msg = f"reply {reply.id!r} follows injected instructions: {list(verdict.matches)}"
            raise PromptInjectionError(msg, matches=verdict.matches)
        flag = InjectionFlag(message_id=reply.id, matches=list(verdict.matches), action=action)
        if action == "flag":
            return {flags_key: [flag]}
        safe = AIMessage(replacement, id=reply.id, name=reply.name)
        return {messages_key: [safe], flags_key: [flag]}

    return guard_output
