"""Pages of a kept text and ranked passages of the archive, each under a token cap.

Pure functions over text: the tools (`recall.tools`) fetch the text and fence what
these return. A "line" is a line of the text wrapped at 2,000 characters, so a
one-line JSON result pages like any other. A pattern is plain text matched without
regard to case (never a regular expression: a generated pattern cannot hang it).
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.scoring import rank_texts
from langgraph_context.tokens import TokenCounter, truncate_text

__all__ = ["PageError", "page_lines", "read_page", "search_passages"]

LINE_CHARS = 2_000
PASSAGE_LINES = 12


class PageError(InvalidArgumentError):
    """A request the text cannot answer (a bad range or pattern): told to the model."""


def page_lines(text: str) -> list[str]:
    r"""The text's lines, each longer one wrapped at 2,000 characters.

    Example:
        >>> [len(x) for x in page_lines("a\n" + "b" * 4500)]
        [1, 2000, 2000, 500]
    """
    lines: list[str] = []
    for line in text.split("\n"):
        if len(line) <= LINE_CHARS:
            lines.append(line)
            continue
        lines.extend(line[i : i + LINE_CHARS] for i in range(0, len(line), LINE_CHARS))
    return lines


def _fill(
    numbered: list[tuple[int, str]], max_result_tokens: int, token_counter: TokenCounter
) -> list[tuple[int, str]]:
    """The longest run from the start of `numbered` whose rendering fits `max_result_tokens`."""
    out: list[tuple[int, str]] = []
    used = 0
    for number, line in numbered:
        cost = int(token_counter(f"{number}| {line}\n"))
        if used + cost > max_result_tokens:
            break
        out.append((number, line))
        used += cost
    if not out and numbered:  # a line alone over the cap: its head
        number, line = numbered[0]
        room = max(0, max_result_tokens - int(token_counter(f"{number}| \n")))
        out.append((number, truncate_text(line, room, token_counter=token_counter)))
    return out


def _render(numbered: list[tuple[int, str]]) -> str:
    return "\n".join(f"{number}| {line}" for number, line in numbered)


def read_page(
    text: str,
    *,
    offset: int = 1,
    lines: int | None = None,
    pattern: str | None = None,
    max_result_tokens: int,
    token_counter: TokenCounter,
) -> tuple[str, str]:
    r"""One page of `text`: from line `offset`, or the lines holding `pattern`.

    Args:
        text: The kept text.
        offset: First line (1-based); with `pattern`, the first line searched.
        lines: Most lines shown (`None`: as many as fit).
        pattern: Show only lines containing this text (case-insensitive).
        max_result_tokens: Most tokens of the page.
        token_counter: Counter for the cap.

    Returns:
        `(where, page)`: a line saying which lines are shown and how to go on, and
        the numbered lines.

    Raises:
        PageError: If `offset` is outside the text, `lines` is below 1, or
            `pattern` is blank.

    Example:
        >>> where, page = read_page("a\nb\nc", offset=2, max_result_tokens=50, token_counter=len)
        >>> where, page
        ('lines 2-3 of 3 (the end)', '2| b\n3| c')
    """
    numbered = list(enumerate(page_lines(text), start=1))
    total = len(numbered)
    if isinstance(offset, bool) or not isinstance(offset, int) or not 1 <= offset <= total:
        msg = f"offset must be a line number from 1 to {total}, got {offset!r}"
        raise PageError(msg)
    if lines is not None and (isinstance(lines, bool) or not isinstance(lines, int) or lines < 1):
        msg = f"lines must be a positive number of lines, got {lines!r}"
        raise PageError(msg)
    rest = numbered[offset - 1 :]
    if pattern is not None:
        if not isinstance(pattern, str) or not pattern.strip():
            msg = "pattern must be non-empty text to find (plain text, any case)"
            raise PageError(msg)
        needle = pattern.casefold()
        rest = [(n, line) for n, line in rest if needle in line.casefold()]
        if not rest:
            return f"no line from {offset} to {total} contains {pattern!r}", ""
    shown = _fill(rest[:lines] if lines else rest, max_result_tokens, token_counter)
    last = shown[-1][0]
    if pattern is not None:
        more = len(rest) - len(shown)
        tail = f"; {more} more from offset={last + 1}" if more else ""
        return f"{len(shown)} of {len(rest)} matching lines (of {total}){tail}", _render(shown)
    after = f"next: offset={last + 1}" if last < total else "the end"
    return f"lines {shown[0][0]}-{last} of {total} ({after})", _render(shown)


def search_passages(
    query: str,
    texts: Sequence[tuple[str, str]],
    *,
    max_result_tokens: int,
    token_counter: TokenCounter,
) -> list[tuple[str, int, int, str]]:
    r"""The passages of the kept texts most relevant to `query`, best first, within the cap.

    Each text is split into passages of 12 lines, ranked with the package's BM25
    (`scoring.rank_texts`); the best are taken while they fit `max_result_tokens`.

    Args:
        query: What to look for.
        texts: `(handle, text)` pairs.
        max_result_tokens: Most tokens of all passages shown.
        token_counter: Counter for the cap.

    Returns:
        `(handle, first line, last line, numbered passage)` tuples, best first.

    Example:
        >>> hits = search_passages("error", [("out-1", "ok\nerror: disk full")],
        ...     max_result_tokens=100, token_counter=len)
        >>> hits[0][:3]
        ('out-1', 1, 2)
    """
    passages: list[tuple[str, list[tuple[int, str]]]] = []
    for handle, text in texts:
        numbered = list(enumerate(page_lines(text), start=1))
        for i in range(0, len(numbered), PASSAGE_LINES):
            passages.append((handle, numbered[i : i + PASSAGE_LINES]))
    ranked = rank_texts(query, ["\n".join(line for _, line in p) for _, p in passages])
    out: list[tuple[str, int, int, str]] = []
    used = 0
    for index, _ in ranked:
        handle, numbered = passages[index]
        shown = (
            _fill(numbered, max_result_tokens - used, token_counter)
            if used < max_result_tokens
            else []
        )
        if not shown or (len(shown) < len(numbered) and out):
            continue  # a passage that no longer fits whole is left for a later call
        body = _render(shown)
        used += int(token_counter(body))
        out.append((handle, shown[0][0], shown[-1][0], body))
        if used >= max_result_tokens:
            break
    return out
