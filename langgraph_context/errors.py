"""The package's one error base class.

Every error this package raises on purpose derives from `LangGraphContextError`, and
also from the built-in class a caller would expect (`ValueError` for bad input,
`RuntimeError` for a refused operation), so existing `except ValueError:` code keeps
working while `except LangGraphContextError:` catches all of them.
"""

from __future__ import annotations

__all__ = [
    "ContextWindowError",
    "InvalidArgumentError",
    "InvalidTypeError",
    "LangGraphContextError",
]


class LangGraphContextError(Exception):
    """Base class of every error raised by `langgraph_context`."""


class InvalidArgumentError(LangGraphContextError, ValueError):
    """A value the caller passed is not allowed; the message names it and what is."""


class InvalidTypeError(LangGraphContextError, TypeError):
    """A value the caller passed has the wrong type; the message names it and what is."""


class ContextWindowError(LangGraphContextError, RuntimeError):
    """The provider refused a request as over the model's context window, even compacted.

    Attributes:
        sent_tokens: Tokens (offline count) of the first refused request's history.
        retried_tokens: Tokens (offline count) of the compacted history, refused again.
        window: The model's context window, when known.
    """

    def __init__(self, *, sent_tokens: int, retried_tokens: int, window: int | None) -> None:
        self.sent_tokens = sent_tokens
        self.retried_tokens = retried_tokens
        self.window = window
        known = f"{window} tokens" if window is not None else "unknown (no profile)"
        super().__init__(
            "the provider refused the request as over the model's context window twice: "
            f"{sent_tokens} tokens sent, then {retried_tokens} after compacting; "
            f"window {known}. Lower the agent's max_tokens or the compaction's trigger_tokens."
        )
