"""The package's one error base class.

Every error this package raises on purpose derives from `LangGraphContextError`, and
also from the built-in class a caller would expect (`ValueError` for bad input,
`RuntimeError` for a refused operation), so existing `except ValueError:` code keeps
working while `except LangGraphContextError:` catches all of them.
"""

from __future__ import annotations

__all__ = ["InvalidArgumentError", "InvalidTypeError", "LangGraphContextError"]


class LangGraphContextError(Exception):
    """Base class of every error raised by `langgraph_context`."""


class InvalidArgumentError(LangGraphContextError, ValueError):
    """A value the caller passed is not allowed; the message names it and what is."""


class InvalidTypeError(LangGraphContextError, TypeError):
    """A value the caller passed has the wrong type; the message names it and what is."""
