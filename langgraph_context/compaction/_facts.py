"""Deterministic fact extraction from message text and tool calls (private to `snapshot.py`).

Paths, error lines, identifiers, commands and open items are found by rules and
copied verbatim (clipped), never invented. Scans of long texts are memoized.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langgraph_context._memo import memo_by_text

REQUEST_CHARS = 400
"""Longest excerpt kept of one evicted user request."""
ERROR_LINE_CHARS = 200
"""Longest excerpt kept of one error line."""
COMMAND_CHARS = 200
SCAN_CHARS = 20_000
MAX_ITEMS = 500
"""Most entries a snapshot section keeps over all compactions of a thread (its state
stays bounded): the first `FIRST_ITEMS` (the task, the first ids) and the latest."""
FIRST_ITEMS = 20
IDS_PER_MESSAGE = 20
IDENTIFIER_VERDICTS = 2048
"""Words whose `is_identifier` verdict is kept (at most 48 characters each: under 1 MB)."""

PATH_ARG_KEYS = ("file_path", "path", "notebook_path", "filename", "file", "filepath")
COMMAND_ARG_KEYS = ("command", "cmd")
EDIT_TOOLS = frozenset({"edit", "multiedit", "write", "write_file", "edit_file", "notebookedit"})
READ_TOOLS = frozenset({"read", "read_file", "view", "cat"})
# Shell commands that print file contents: their output is code or data, not errors.
READ_COMMANDS = frozenset({"cat", "head", "tail", "less", "more", "bat", "nl"})


PATH_RE = re.compile(
    r"(?<![\w:/.@~-])(?:~?/|\.{1,2}/)?(?:[\w@+-][\w@.+-]*/)+[\w@+-][\w@+-]*\.[A-Za-z][A-Za-z0-9]{0,7}\b"
)
ERROR_RE = re.compile(
    r"\b(error|errors|exception|traceback|failed|failure|fatal|panic|undefined|"
    r"cannot|could not|not found|denied|invalid)\b|\*\* \(",
    re.IGNORECASE,
)
# The lookaheads ask whether the word holds a digit and a letter: lazy, each stops at
# the first one (a greedy one ran to the word's end and backtracked); same matches.
ID_RE = re.compile(r"(?<![\w/.-])(?=[\w-]*?\d)(?=[\w-]*?[A-Za-z])[A-Za-z0-9][\w-]{2,47}(?![\w/])")
# Not an identifier: a quantity (`405-token`, `3-day`: a number with its unit), a
# duration (`42s`, `1m05s`, `250ms`), a size (`10kb`, `2GiB`), a number in scientific
# notation (`1e-9`), a format spec (`02d`, `08x`), an ordinal (`2nd`), an encoding
# (`utf-8`, `latin-1`) or a counter glued to a word (`done0`).
_QUANTITY = re.compile(r"\d+-[a-z]+")
_NOT_AN_ID = re.compile(
    r"(?:\d+(?:ms|us|ns|[hmsd]))+"
    r"|\d+(?:\.\d+)?(?:[kmgt]i?b|b|px|x|%)"
    r"|\d+(?:\.\d+)?e[-+]?\d+"
    r"|0\d*[a-z]|\d+[dfxeg]"
    r"|\d+(?:st|nd|rd|th)"
    r"|(?:utf|ucs|latin|iso|cp|windows|ascii)[-_]?\d+(?:[-_]\d+)*"
    r"|[a-z]+0",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=IDENTIFIER_VERDICTS)
def is_identifier(word: str) -> bool:
    """Whether an `ID_RE` match names something (not a quantity, duration or encoding).

    The verdicts of the latest words are kept: logs repeat theirs (hosts, timestamps'
    parts), and two full matches cost about 2.5 us a word.
    """
    return not (_QUANTITY.fullmatch(word) or _NOT_AN_ID.fullmatch(word))


# `ID_RE` led by the character before the id instead of a lookbehind: the search then
# tries only the positions after a delimiter (a leading character set is skipped to in
# C), not every position; a text scanned is led by a space. Same matches (group 1) in
# the same order: a test checks them against `ID_RE`.
_DELIMITED_ID_RE = re.compile(
    r"[^\w/.-](?=[\w-]*?\d)(?=[\w-]*?[A-Za-z])([A-Za-z0-9][\w-]{2,47})(?![\w/])"
)
# The same pattern with ASCII classes, for an ASCII text (most logs): `\w` and `\d`
# then test a byte class instead of Unicode categories, about a third faster, and
# classify every ASCII character as the Unicode classes do, so the matches are the same.
_ASCII_DELIMITED_ID_RE = re.compile(_DELIMITED_ID_RE.pattern, re.ASCII)


OPEN_RE = re.compile(r"^\s*(?:[-*]\s*\[ \]|todo\b|next\b|pending\b)[:\s]", re.IGNORECASE)


def is_read_call(call: Mapping[str, Any]) -> bool:
    """Whether a tool call reads a file (by tool name, or a `command` that prints files)."""
    if str(call.get("name", "")).lower() in READ_TOOLS:
        return True
    command = call.get("args", {}).get("command")
    if not isinstance(command, str) or not command.strip():
        return False
    return command.split(maxsplit=1)[0] in READ_COMMANDS


def dedup(items: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return _bounded(tuple(seen))


def _bounded(items: tuple[Any, ...]) -> tuple[Any, ...]:
    """The first `FIRST_ITEMS` and the latest entries, `MAX_ITEMS` in all."""
    if len(items) <= MAX_ITEMS:
        return items
    return items[:FIRST_ITEMS] + items[len(items) - (MAX_ITEMS - FIRST_ITEMS) :]


def merge_uses(
    old: Sequence[tuple[str, str]], new: Sequence[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    order: dict[str, list[str]] = {}
    for path, use in (*old, *new):
        uses = order.setdefault(path, [])
        if use not in uses:
            uses.append(use)
    return _bounded(tuple((path, use) for path, uses in order.items() for use in uses))


def render_files(uses: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    grouped: dict[str, list[str]] = {}
    for path, use in uses:
        grouped.setdefault(path, []).append(use)
    out = []
    for path, kinds in grouped.items():
        shown: list[str] = [k for k in ("edited", "read", "used") if k in kinds]
        if not shown and "in output" in kinds and "mentioned" not in kinds:
            shown = ["in output"]  # only seen inside a tool's output: not touched
        out.append(f"{path} ({', '.join(shown)})" if shown else path)
    return _bounded(tuple(out))


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return


def describe_call(call: Mapping[str, Any]) -> str:
    args = call.get("args") or {}
    key = next((args[k] for k in (*PATH_ARG_KEYS, *COMMAND_ARG_KEYS) if k in args), None)
    if key is None:
        brief = json.dumps(args, ensure_ascii=False, default=str)
    else:
        brief = str(key)
    return f"{call.get('name', '?')}({clip(brief, 80)})"


def read_call(
    call: Mapping[str, Any],
    uses: list[tuple[str, str]],
    commands: list[str],
    ids: list[str],
    open_items: list[str],
) -> None:
    name = str(call.get("name", ""))
    args = call.get("args") or {}
    lowered = name.lower()
    for key in PATH_ARG_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            use = "used"
            if lowered in EDIT_TOOLS:
                use = "edited"
            elif lowered in READ_TOOLS:
                use = "read"
            uses.append((value, use))
    for key in COMMAND_ARG_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            commands.append(clip(value, COMMAND_CHARS))
    todos = args.get("todos")
    if isinstance(todos, list):
        open_items.clear()
        for todo in todos:
            if isinstance(todo, Mapping) and todo.get("status") not in ("completed", "done"):
                open_items.append(f"[{todo.get('status', 'pending')}] {todo.get('content', '')}")
    for value in strings(args):
        if len(value) <= 64:
            ids.extend(ID_RE.findall(value))


def error_lines(text: str, *, force: bool) -> list[str]:
    hits = list(text_facts(text)[1])
    if not hits and force and text.strip():
        first = next(line for line in text.splitlines() if line.strip())
        hits = [clip(first, ERROR_LINE_CHARS)]
    return hits[:3]


@memo_by_text(500_000)  # 0.5 MB; keeps no text (an lru_cache kept 8,192)
def text_ids(text: str) -> tuple[str, ...]:
    """Identifier-like tokens of a text (its first `SCAN_CHARS`), at most a few per text.

    Quantities (`405-token`, `3-day`), durations, sizes, format specs and encodings
    are left out (`is_identifier`): they would take the room of the ids the next
    turns need.
    """
    found: dict[str, None] = {}
    rejected: set[str] = set()  # a word repeats (a date per log line): checked once
    scanned = " " + text[:SCAN_CHARS]
    pattern = _ASCII_DELIMITED_ID_RE if scanned.isascii() else _DELIMITED_ID_RE
    for match in pattern.finditer(scanned):
        word = match.group(1)
        if word in found or word in rejected:
            continue
        if not is_identifier(word):
            rejected.add(word)
            continue
        found[word] = None
        if len(found) == IDS_PER_MESSAGE:
            break
    return tuple(found)


@memo_by_text(500_000)  # 0.5 MB; keeps no text (an lru_cache kept 8,192)
def text_facts(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Return (paths, error lines, open-item lines) of a text; memoized by the text.

    Very long texts are scanned in their first and last `SCAN_CHARS` characters, where
    command output puts its errors and summaries.
    """
    if len(text) > 2 * SCAN_CHARS:
        text = text[:SCAN_CHARS] + "\n" + text[-SCAN_CHARS:]
    # Every path has a slash: a text without one (most logs) skips the scan.
    paths = tuple(dict.fromkeys(PATH_RE.findall(text))) if "/" in text else ()
    errors: list[str] = []
    for start, end in _error_spans(text):
        clipped = clip(text[start:end].strip(), ERROR_LINE_CHARS)
        if clipped and clipped not in errors:
            errors.append(clipped)
    opens = tuple(
        clip(line.strip(), REQUEST_CHARS) for line in text.splitlines() if OPEN_RE.match(line)
    )
    return paths, tuple(errors), opens


# `ERROR_RE`'s words, lowercased (`fail` for `failed` and `failure`, `error` for `errors`).
_ERROR_WORDS = (
    "error", "exception", "traceback", "fail", "fatal", "panic", "undefined", "cannot",
    "could not", "not found", "denied", "invalid",
)  # fmt: skip
_ERROR_MARK = "** ("


def _error_spans(text: str) -> list[tuple[int, int]]:
    r"""The `(start, end)` of each line (between newlines) that `ERROR_RE` matches in.

    `ERROR_RE` (case-insensitive, led by `\b`) is tried at every position: about 1 ms
    for a 5 kB log. A match holds no newline, and in ASCII text lowering keeps every
    position and is what `IGNORECASE` does; so only the lines where a lowered word
    starts a word (`str.find`, in C), or where the mark is, can match, and only those
    are searched (`\b` reads a newline and an end of text alike). Other text is
    searched as a whole.
    """
    size = len(text)
    if not text.isascii():  # Unicode case folds (U+017F for `s`): no shortcut
        spans: dict[tuple[int, int], None] = {}
        for match in ERROR_RE.finditer(text):
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            spans[start, size if end == -1 else end] = None
        return list(spans)
    lowered = text.lower()
    starts: set[int] = set()
    for word in _ERROR_WORDS:
        at = lowered.find(word)
        while at != -1:
            before = lowered[at - 1] if at else " "
            if not (before.isalnum() or before == "_"):  # `\b` before the word
                starts.add(lowered.rfind("\n", 0, at) + 1)
            at = lowered.find(word, at + 1)
    at = text.find(_ERROR_MARK)
    while at != -1:
        starts.add(text.rfind("\n", 0, at) + 1)
        at = text.find(_ERROR_MARK, at + 1)
    lines: list[tuple[int, int]] = []
    for start in sorted(starts):
        end = text.find("\n", start)
        end = size if end == -1 else end
        if ERROR_RE.search(text, start, end):
            lines.append((start, end))
    return lines
