"""The model's context window: its profile size, the usage it reports, its overflow error.

Three facts a provider knows better than an offline counter:

* the window: LangChain chat models carry a `profile` (langchain-core 1.x) whose
  `max_input_tokens` is the model's context window;
* the size of a request: an answer's `usage_metadata["input_tokens"]` is what the
  provider counted; its ratio to what the offline counter counted for the same
  request corrects later estimates (`TokenUsage`, kept in state per thread);
* the refusal: a request over the window is answered with an error (OpenAI's 400
  `context_length_exceeded`, Anthropic's `invalid_request_error` "prompt is too
  long"), recognized here by type, code and message without importing either SDK.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from langchain_core.exceptions import ContextOverflowError as _CoreOverflow
from langchain_core.messages import AIMessage
from typing_extensions import TypedDict

__all__ = [
    "TokenUsage",
    "corrected_tokens",
    "is_context_overflow",
    "model_window",
    "reported_input_tokens",
    "usage_ratio",
]

USAGE_KEY = "token_usage"
MIN_USAGE_RATIO = 0.5
MAX_USAGE_RATIO = 4.0

_OVERFLOW_CODES = frozenset({"context_length_exceeded", "string_above_max_length"})
_OVERFLOW_PHRASES = (
    "context_length_exceeded",
    "maximum context length",
    "prompt is too long",
    "context window",
    "input tokens exceed",
    "too many tokens",
)
_WRAPPER_ATTRS = ("bound", "runnable", "default")  # RunnableBinding, fallbacks, configurable


class TokenUsage(TypedDict, total=False):
    """What the last model call of a thread taught about token counts.

    Attributes:
        reported: Input tokens the provider reported for the last call.
        counted: Tokens the offline counter counted for the same request.
        window: The model's context window (explicit, or from its profile), if known.
    """

    reported: int
    counted: int
    window: int


def model_window(model: Any) -> int | None:
    """Return the model's context window from its profile, or `None` when unknown.

    Wrapped models (`bind_tools`, `with_retry`, `with_fallbacks`, a configurable
    model's default) are looked through.

    Args:
        model: A chat model, possibly wrapped; anything else gives `None`.

    Returns:
        `profile["max_input_tokens"]` when it is a positive int.

    Example:
        >>> from langchain_core.language_models import FakeListChatModel
        >>> model_window(FakeListChatModel(responses=[], profile={"max_input_tokens": 8000}))
        8000
    """
    seen: set[int] = set()
    while model is not None and id(model) not in seen:
        seen.add(id(model))
        profile = getattr(model, "profile", None)
        if isinstance(profile, Mapping):
            window = profile.get("max_input_tokens")
            if isinstance(window, int) and not isinstance(window, bool) and window > 0:
                return window
        model = next((getattr(model, a) for a in _WRAPPER_ATTRS if hasattr(model, a)), None)
    return None


def reported_input_tokens(message: Any) -> int | None:
    """Return the input tokens a provider reported on an answer, or `None`."""
    if not isinstance(message, AIMessage) or not message.usage_metadata:
        return None
    reported = message.usage_metadata.get("input_tokens")
    return reported if isinstance(reported, int) and reported > 0 else None


def usage_ratio(usage: Any) -> float | None:
    """Return reported / counted input tokens of a `TokenUsage`, clamped, or `None`.

    The ratio is clamped to [`MIN_USAGE_RATIO`, `MAX_USAGE_RATIO`]: an estimate off by
    more than that is more likely a wrong report (cached or batched usage) than a
    wrong count.

    Example:
        >>> usage_ratio({"reported": 150, "counted": 100})
        1.5
    """
    if not isinstance(usage, Mapping):
        return None
    reported, counted = usage.get("reported"), usage.get("counted")
    if not (isinstance(reported, int) and isinstance(counted, int)) or reported <= 0:
        return None
    if counted <= 0:
        return None
    return min(MAX_USAGE_RATIO, max(MIN_USAGE_RATIO, reported / counted))


def corrected_tokens(tokens: int, ratio: float | None) -> int:
    """Counted tokens in the provider's units (`tokens` itself without a ratio)."""
    return tokens if ratio is None else math.ceil(tokens * ratio)


def _texts(exc: BaseException) -> str:
    parts = [str(exc), str(getattr(exc, "message", "") or "")]
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            parts.append(str(error.get("message", "")))
    return " ".join(parts).lower()


def _code(exc: BaseException) -> str | None:
    code = getattr(exc, "code", None)
    if isinstance(code, str):
        return code
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, Mapping) else None
    found = error.get("code") if isinstance(error, Mapping) else None
    return found if isinstance(found, str) else None


def is_context_overflow(exc: BaseException) -> bool:
    """Whether `exc` is a provider refusing a request as longer than the model's window.

    Recognized: langchain-core's `ContextOverflowError` (what `langchain-openai` and
    `langchain-anthropic` raise), an error with code `context_length_exceeded` (the
    OpenAI SDK), and a 400 / bad-request error whose message says the prompt is too
    long or over the maximum context length (Anthropic's `invalid_request_error`,
    OpenAI-compatible servers).

    Example:
        >>> is_context_overflow(ValueError("prompt is too long"))
        False
    """
    if isinstance(exc, _CoreOverflow):
        return True
    if _code(exc) in _OVERFLOW_CODES:
        return True
    status = getattr(exc, "status_code", None)
    bad_request = status == 400 or type(exc).__name__ in ("BadRequestError", "InvalidRequestError")
    return bad_request and any(p in _texts(exc) for p in _OVERFLOW_PHRASES)
