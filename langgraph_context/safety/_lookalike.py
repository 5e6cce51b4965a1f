r"""Find the fence's tags and their look-alikes in untrusted text, byte-exactly.

A model may read `&lt;/untrusted-data-x&gt;`, `<\/untrusted-data-x>`, a tag in
full-width brackets or a tag split by a zero-width space as the end of the fence.
The matching view decodes HTML entities, JSON and URL escapes, drops invisible
characters (format characters and stray combining marks), applies NFKC and case
folding, strips accents, maps Cyrillic/Greek letters and
look-alike brackets, slashes and dashes to ASCII, and remembers for every view
character the span of original text it came from, so a match is replaced in the
original and nothing else changes.
"""

# The look-alike characters are the very thing this module matches.
# ruff: noqa: RUF001

from __future__ import annotations

import html
import re
import unicodedata

from langgraph_context.safety._shadow import is_hidden
from langgraph_context.safety.patterns import BOUNDARY_TAG_PREFIX

_ESCAPE = re.compile(
    r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?"
    r"|\\+(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|/)"
    r"|%[0-9a-fA-F]{2}"
)
_PUNCT = {
    # brackets
    "‹": "<", "〈": "<", "\u2329": "<", "⟨": "<", "˂": "<", "ᐸ": "<", "❮": "<", "❬": "<",
    "≺": "<", "«": "<", "⧼": "<", "›": ">", "〉": ">", "\u232a": ">", "⟩": ">", "˃": ">",
    "ᐳ": ">", "❯": ">", "❭": ">", "≻": ">", "»": ">", "⧽": ">",
    # slashes
    "⁄": "/", "∕": "/", "⧸": "/", "╱": "/", "⟋": "/", "\\": "/",
    # dashes
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "⁃": "-",
}  # fmt: skip
_LETTERS = {
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x",
    "і": "i", "ѕ": "s", "ԁ": "d", "һ": "h", "ı": "i", "ս": "u", "ꭒ": "u", "ʋ": "u",
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "η": "n", "ո": "n", "ռ": "n",
}  # fmt: skip

_NAME = BOUNDARY_TAG_PREFIX.replace("-", r"[\s_-]*")
TAG = re.compile(rf"<\s*/?\s*{_NAME}(?:[^<>\n]{{0,120}}>)?|/\s*{_NAME}[\w-]*\s*>")
"""A fence tag in the view: opening or closing, with or without its suffix."""


def _char(char: str) -> str:
    if is_hidden(char):
        return ""
    if char in _PUNCT:
        return _PUNCT[char]
    normal = unicodedata.normalize("NFKC", char).casefold()
    # The tag is ASCII: a letter with an accent (`ú`) reads as its base letter.
    bare = unicodedata.normalize("NFKD", normal)
    return "".join(_PUNCT.get(c, _LETTERS.get(c, c)) for c in bare if not is_hidden(c))


def _decode(token: str) -> str:
    if token.startswith("&"):
        return html.unescape(token)
    if token.startswith("%"):
        return chr(int(token[1:], 16))
    body = token.lstrip("\\")
    if body == "/":
        return "/"
    return chr(int(body[1:], 16))


def view(text: str) -> tuple[str, list[tuple[int, int]] | None]:
    """Return the matching view of `text` and each view character's original span.

    The spans are `None` when the view is aligned with the text (index i comes from
    character i), which is the case for ASCII text without escapes.
    """
    escapes = [m for m in _ESCAPE.finditer(text) if _decode(m.group()) != m.group()]
    if not escapes and text.isascii():
        return text.lower().replace("\\", "/"), None
    table = {c: _char(c) for c in set(text)}
    if not escapes and all(len(v) == 1 for v in table.values()):
        # One view character per character (no invisible ones, no ligatures): aligned.
        return text.translate({ord(c): v for c, v in table.items()}), None
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    for match in [*escapes, None]:
        stop = match.start() if match is not None else len(text)
        for index in range(at, stop):
            for piece in table[text[index]]:
                pieces.append(piece)
                spans.append((index, index + 1))
        if match is not None:
            for piece in "".join(_char(c) for c in _decode(match.group())):
                pieces.append(piece)
                spans.append(match.span())
            at = match.end()
    return "".join(pieces), spans


def fold(text: str) -> str:
    """The view of a short text, for searching copies of it (e.g. the boundary)."""
    return view(text)[0]


def tag_spans(text: str, *needles: str) -> list[tuple[int, int]]:
    """Original-text spans of fence tags and of copies of `needles` (merged, sorted)."""
    lowered = text.lower()
    if (
        text.isascii()
        and "&" not in text
        and "%" not in text
        and BOUNDARY_TAG_PREFIX[:9] not in lowered.replace("\\", "")
        and not any(n and n in lowered for n in needles)
    ):
        return []
    shown, spans = view(text)
    found = [m.span() for m in TAG.finditer(shown)]
    for needle in needles:
        if needle:
            target = fold(needle)
            found += [(m.start(), m.end()) for m in re.finditer(re.escape(target), shown)]
    out: list[tuple[int, int]] = []
    for low, high in sorted(found):
        if high <= low:
            continue
        start, end = (low, high) if spans is None else (spans[low][0], spans[high - 1][1])
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out
