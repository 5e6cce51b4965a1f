"""Matching views of a text that see through invisible characters and look-alike letters.

Patterns run on a *shadow* of the text: NFKC-normalized, case-folded, without
format characters (Unicode Cf: zero-width, BOM, word joiner, bidi controls) and
stray combining marks, and (in the folded view) with common Cyrillic
and Greek homoglyphs and leetspeak digits mapped to Latin letters. Every shadow
character remembers the index of the original character it came from, so a match in
the shadow maps back to a span of the original text.
"""

# Look-alike letters and typographic quotes are the very thing these tables match.
# ruff: noqa: RUF001

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Zero-width, joiner, soft hyphen, word joiner, BOM, bidi embedding/override/isolate.
INVISIBLE = frozenset(
    [
        0x00AD,
        0x180E,
        0x200B,
        0x200C,
        0x200D,
        0x200E,
        0x200F,
        0x2060,
        0x2061,
        0x2062,
        0x2063,
        0x2064,
        0xFEFF,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    ]
)

_LOOKALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
    "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j",
    "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "ɡ": "g", "ı": "i",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y",
    # Leetspeak
    "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s",
}  # fmt: skip
_ASCII_FOLD = str.maketrans({k: v for k, v in _LOOKALIKES.items() if k.isascii()})


@dataclass(frozen=True)
class Shadow:
    """A matching view of a text.

    Attributes:
        text: The normalized text patterns run on.
        origin: For each character of `text`, the index of its source character.
        length: The length of the original text.
    """

    text: str
    origin: Sequence[int]
    length: int

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Map a shadow span `[start, end)` to the original text."""
        if start >= end:
            at = self.origin[start] if start < len(self.origin) else self.length
            return at, at
        return self.origin[start], self.origin[end - 1] + 1


def is_hidden(char: str) -> bool:
    """Whether `char` draws nothing a reader sees: a format character or combining mark.

    Format characters (Unicode category Cf: zero-width space, word joiner, BOM, bidi
    controls, soft hyphen, tag characters) and combining and enclosing marks on their
    own (Mn, Me: `u\u0338` reads as `u` struck through) can split or disguise a word
    without changing how a model reads it.
    """
    return ord(char) in INVISIBLE or unicodedata.category(char) in _HIDDEN_CATEGORIES


_HIDDEN_CATEGORIES = frozenset({"Cf", "Mn", "Me"})


def _normal(char: str, fold: bool) -> str:
    if is_hidden(char):
        return ""
    normal = unicodedata.normalize("NFKC", char).casefold()
    if fold:
        normal = "".join(_LOOKALIKES.get(c, c) for c in normal)
    return normal


def shadow(text: str, *, fold: bool) -> Shadow:
    """Return the matching view of `text`; `fold` also maps look-alikes to Latin."""
    if text.isascii():
        # NFKC and case folding keep ASCII one character per character: no index table.
        lowered = text.lower()
        view = lowered.translate(_ASCII_FOLD) if fold else lowered
        return Shadow(view, range(len(text)), len(text))
    table = {char: _normal(char, fold) for char in set(text)}
    if all(len(normal) == 1 for normal in table.values()):
        # Every character maps to exactly one: translate in C, indexes stay aligned.
        view = text.translate({ord(char): normal for char, normal in table.items()})
        return Shadow(view, range(len(text)), len(text))
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for piece in table[char]:
            chars.append(piece)
            origin.append(index)
    return Shadow("".join(chars), origin, len(text))


@functools.cache
def needs_plain_view(pattern: re.Pattern[str]) -> bool:
    """Whether a pattern is written with letters that folding maps away (Cyrillic, Greek)."""
    return any(not char.isascii() and char in _LOOKALIKES for char in pattern.pattern)


_HIT = "hit"


def shadow_spans(
    views: Iterable[Shadow], patterns: Iterable[re.Pattern[str]]
) -> list[tuple[int, int]]:
    """Return the original-text spans where any pattern matches any view.

    A pattern with a group named `hit` reports that group's span, not the whole match.
    """
    spans: list[tuple[int, int]] = []
    views = list(views)
    for pattern in patterns:
        for view in views:
            for match in pattern.finditer(view.text):
                start, end = view.span(*match.span(_HIT if _HIT in pattern.groupindex else 0))
                if end > start:
                    spans.append((start, end))
    return spans
