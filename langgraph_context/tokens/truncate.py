"""`truncate_text`: the package's one token-budget text truncation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from langchain_core.language_models import BaseLanguageModel

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.tokens._cut import bpe_cut
from langgraph_context.tokens.counter import (
    TiktokenCounter,
    TokenCounter,
    _checked_count,
    resolve_counter,
)

__all__ = ["truncate_text"]


def truncate_text(
    text: str,
    max_text_tokens: int,
    *,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    marker: str | Callable[[int], str] = "",
    keep: Literal["head", "ends"] = "head",
) -> str:
    """Cut `text` to at most `max_text_tokens` tokens: the package's one text truncation.

    Args:
        text: The text to fit.
        max_text_tokens: The ceiling, by `token_counter`.
        token_counter: The counter (`None` = offline tiktoken, `len` = characters).
        marker: With `keep="head"`, appended to a cut text (dropped too if even it does
            not fit; the kept prefix then loses trailing whitespace). With
            `keep="ends"`, put between the two kept ends; `{n}` in it is replaced by
            the number of characters left out. A callable is given the text's
            token count and returns the marker (called only when the text is cut).
        keep: `"head"` keeps the longest fitting prefix; `"ends"` keeps as much of the
            start and the end (equal shares) as fits around the marker.

    With the package's tiktoken counter the text is encoded once and cut on token
    boundaries (`tokens._cut`); with `keep="ends"`, a text whose two ends alone are
    over the limit is encoded at its ends only, and a callable marker is then given
    its total estimated from them (the cut is counted exactly either way). The
    counter's memo gets the count of the text returned (which the caller counts
    next), never a candidate. Other counters are searched for the longest cut that fits.

    Returns:
        `text` itself when it fits, else the longest cut that fits (possibly "").

    Raises:
        InvalidTypeError: If `text` or `marker` is not a string, `max_text_tokens` not an
            int, or the counter returns a non-number.
        InvalidArgumentError: If `max_text_tokens` is negative, `keep` is unknown, or the
            counter returns a negative or non-finite count.

    Example:
        >>> truncate_text("abcdef", 4, token_counter=len)
        'abcd'
        >>> truncate_text("abcdefghij", 6, token_counter=len, marker="..")
        'abcd..'
        >>> truncate_text("abcdefghij", 6, token_counter=len, marker="|", keep="ends")
        'ab|ij'
    """
    for name, value in (("text", text), ("marker", marker)):
        if not isinstance(value, str) and not (name == "marker" and callable(value)):
            msg = f"{name} must be a string, got {type(value).__name__}"
            raise InvalidTypeError(msg)
    if not isinstance(max_text_tokens, int) or isinstance(max_text_tokens, bool):
        msg = f"max_text_tokens must be an int, got {type(max_text_tokens).__name__}"
        raise InvalidTypeError(msg)
    if max_text_tokens < 0:
        msg = f"max_text_tokens must be >= 0, got {max_text_tokens}"
        raise InvalidArgumentError(msg)
    if not isinstance(keep, str) or keep not in ("head", "ends"):
        msg = f"keep must be 'head' or 'ends', got {keep!r}"
        raise InvalidArgumentError(msg)
    resolved = resolve_counter(token_counter)
    count: TokenCounter
    if isinstance(resolved, TiktokenCounter):
        known = resolved.remembered(text)  # a memo hit, never a new entry
        if known is not None and known <= max_text_tokens:
            return text
        encoding = resolved.encoding
        if encoding is not None:
            cut = bpe_cut(encoding, text, max_text_tokens, lambda n: _marker(marker, n), keep)
            if cut is not None:
                resolved.remember(*cut)  # what is kept is counted next: its count is known
                return cut[0]
        count = resolved.count_fresh
    else:

        def count(value: str, /) -> int:
            return _checked_count(resolved, value)

    size = count(text)
    if size <= max_text_tokens:
        return text
    marker = _marker(marker, size)
    if keep == "ends":
        return _keep_ends(text, max_text_tokens, count, marker)
    if marker and count(marker) > max_text_tokens:
        marker = ""
    low = _longest_fit(len(text), lambda n: count(text[:n] + marker) <= max_text_tokens)
    if not marker:
        return text[:low]
    return text[:low].rstrip() + marker if low else marker


def _marker(marker: str | Callable[[int], str], size: int) -> str:
    """The marker for a text of `size` tokens (a callable marker is asked)."""
    if isinstance(marker, str):
        return marker
    shown = marker(size)
    if not isinstance(shown, str):
        msg = f"marker must return a string, got {type(shown).__name__}"
        raise InvalidTypeError(msg)
    return shown


def _keep_ends(text: str, max_tokens: int, count: TokenCounter, marker: str) -> str:
    def cut(half: int) -> str:
        return text[:half] + marker.replace("{n}", str(len(text) - 2 * half)) + text[-half:]

    half = _longest_fit(len(text) // 2, lambda n: n == 0 or count(cut(n)) <= max_tokens)
    if half:
        return cut(half)
    return text[: _longest_fit(len(text), lambda n: count(text[:n]) <= max_tokens)]


def _longest_fit(limit: int, fits: Callable[[int], bool]) -> int:
    """The largest n in [0, limit] with `fits(n)`, for a `fits` true up to some point."""
    low, high = 0, limit  # invariant: fits(low); nothing above high fits
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low
