"""A text far over a cut's limit, encoded only at its two ends (and a few samples).

The piece boundaries of `tokens._cut` let a text be cut keeping its ends without
encoding its middle: a start up to a boundary encodes to exactly the whole text's
first tokens, an end from a boundary to its last ones. Each end is first encoded to
a little under half the limit and grows (from the boundary where it stops) when the
cut asks for more. When the two ends and a few boundary-aligned stretches of the
middle hold more tokens than the limit, the text is over it for certain (stretches
between boundaries add their own tokens, the rest of the middle adds more); the cut
is made and counted exactly from the ends, and only the text's total (which the
marker is given) is estimated.

Most long tool output (logs, prose, JSON with spaces) looks alike from end to end:
then no stretch is encoded. The piece boundaries inside the middle are counted (a
byte scan, no encoding): each piece holds a token at least, so they prove the text
over; the middle's tokens are estimated twice, at the ends' tokens per byte and per
boundary. When the two agree (within `_AGREE`), the text is taken as even and their
mean is the estimate (within 4% of the exact total on the tests' logs, prose and
JSON). When they do not (dense ends around plain prose, text without boundaries), or
the boundaries do not prove it over, the stretches are encoded as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate
from typing import Any, overload

_SPACE, _NEWLINE = 0x20, 0x0A


def _is_letter(byte: int) -> bool:
    return 0x41 <= byte <= 0x5A or 0x61 <= byte <= 0x7A


_BOUNDARY = re.compile(rb"\n[\x21-\x7e]| [A-Za-z]")  # the two piece boundaries, found fast
_LINE = re.compile(rb"\n[\x21-\x7e]")  # the newline boundary alone
_FIRST_SHARE = 47  # percent of the limit each end is first encoded to (it grows on demand)
_GROW = 8  # tokens an end grows by beyond what the cut asks (it may ask for a few more)
_GUESS = 3  # bytes per token first assumed when sizing an end (it grows when short)
_MOST_SHARE = 0.7  # above this share of the text in its two ends, encode it whole
_SAMPLES, _SAMPLE_BYTES = 3, 160  # stretches of the middle encoded to estimate its tokens
_SAMPLE_SHARE = 32  # a stretch spans 1/32 of the middle (on to a boundary), as with 4 stretches
_AGREE = 1.12  # the two estimates of an even text's middle are this close (the tests' <= 1.04)
# A byte map under which the two piece boundaries are three byte pairs: " a" (a space,
# an ASCII letter), "\na" and "\nb" (a newline, a printable non-space), so `bytes.count`
# finds them in C (a regular expression's `findall` takes ~30x as long on a 4 kB log).
_KINDS = bytes(
    b if b in b" \n" else 0x61 if _is_letter(b) else 0x62 if 0x21 <= b <= 0x7E else 0x63
    for b in range(256)
)


class _Beyond(LookupError):
    """A token of the middle was asked for, which a text encoded only at its ends lacks."""


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
    least = max(1, need - _GROW)  # an end this long is kept (the cut grows it if need be)
    head: list[int] = []
    tail: list[int] = []
    end, start = 0, len(data)
    most = int(len(data) * _MOST_SHARE)
    guess = float(_GUESS)
    while len(head) < least or len(tail) < least:
        for at_head in (True, False):
            have = len(head) if at_head else len(tail)
            if have >= least:
                continue
            # the tail is sized at the head's bytes per token: a margin, not a second encode
            more = need - have + (0 if at_head else 2 * _GROW)
            grown = _grown(encoding, data, (end, start), at_head, more * guess)
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
    even = _even_middle(data, (end, start), known, max_tokens)
    if even is not None:
        return _Ends(head, tail, known + even, (encoding, data, end, start))
    density = known / (end + len(data) - start)
    sampled, middle = _middle_tokens(encoding, data, (end, start), density)
    if known + sampled <= max_tokens:
        return None  # maybe not over: count it whole
    return _Ends(head, tail, known + middle, (encoding, data, end, start))


def _marks(kinds: bytes, start: int, stop: int) -> int:
    """Piece boundaries in `kinds[start:stop]` (`kinds`: a text under `_KINDS`)."""
    return (
        kinds.count(b" a", start, stop)
        + kinds.count(b"\na", start, stop)
        + kinds.count(b"\nb", start, stop)
    )


def _even_middle(data: bytes, middle: tuple[int, int], known: int, max_tokens: int) -> int | None:
    """The middle's estimated tokens when it looks like the ends and proves the text over.

    `None` when its piece boundaries leave the text possibly within `max_tokens`, or the
    middle's tokens estimated at the ends' tokens per byte and per boundary disagree.
    """
    end, start = middle
    kinds = data.translate(_KINDS)
    inside = _marks(kinds, end + 1, start)  # each piece between them is a token at least
    floor = inside + 1
    if known + floor <= max_tokens:
        return None
    marks = _marks(kinds, 0, end) + _marks(kinds, start, len(data))
    if not marks or not inside:
        return None
    by_bytes = (start - end) * known / (end + len(data) - start)
    by_marks = inside * known / marks
    if max(by_bytes, by_marks) > _AGREE * min(by_bytes, by_marks):
        return None
    return max(floor, round((by_bytes + by_marks) / 2))


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
