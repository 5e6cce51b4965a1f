"""Select: pack the most valuable packets for a query under a token budget.

The score used for packing is `(relevance_weight * relevance + recency_weight *
recency) * type_weight`, where relevance comes from `context.relevance` and recency
is the packet's rank from oldest (0) to newest (1). Pinned packets come first, then
the rest by score, skipping what does not fit, near-duplicates of kept packets and
packets below `min_relevance`. Measured on LoCoMo; see `benchmarks/locomo`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import sub, truediv
from typing import Literal

from langchain_core.embeddings import Embeddings

from langgraph_context.context._dates import timestamp_seconds
from langgraph_context.context.config import DEFAULT_CONFIG, ContextConfig
from langgraph_context.context.relevance import arelevance_scores, relevance_scores
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.packet import ContextPacket
from langgraph_context.scoring import tokenize
from langgraph_context.tokens import TokenCounter, resolve_counter

__all__ = [
    "Drop",
    "DropReason",
    "ScoredPacket",
    "Selection",
    "aselect_packets",
    "pack_packets",
    "select_packets",
]

DropReason = Literal[
    "duplicate", "below_min_relevance", "over_budget", "trimmed", "summarized", "reranked"
]


@dataclass(frozen=True)
class ScoredPacket:
    """A packet with the numbers selection gave it.

    Attributes:
        packet: The packet (token count filled in).
        relevance: Relevance to the query in [0, 1].
        score: The packing score (higher is kept first).
        index: Its position in the input sequence.
    """

    packet: ContextPacket
    relevance: float
    score: float
    index: int


@dataclass(frozen=True)
class Drop:
    """A packet left out, and why.

    Attributes:
        packet: The packet.
        reason: `duplicate`, `below_min_relevance`, `over_budget`, `trimmed` (removed
            by compression), `summarized` (replaced by a summary) or `reranked` (left
            out by the builder's reranker).
    """

    packet: ContextPacket
    reason: DropReason


@dataclass(frozen=True)
class Selection:
    """The outcome of `select_packets`.

    Attributes:
        selected: Kept packets with their scores, in input order.
        dropped: Left-out packets with their reasons, in input order.
        max_selected_tokens: The token budget selection packed into.
        tokens: Tokens used by the selected packets.
    """

    selected: tuple[ScoredPacket, ...]
    dropped: tuple[Drop, ...] = field(default_factory=tuple)
    max_selected_tokens: int = 0
    tokens: int = 0

    @property
    def packets(self) -> list[ContextPacket]:
        """The selected packets, in input order."""
        return [s.packet for s in self.selected]


def _recency(packets: Sequence[ContextPacket]) -> list[float]:
    n = len(packets)
    if n < 2:
        return [1.0] * n
    stamps = [timestamp_seconds(p.timestamp) for p in packets]
    if all(s is not None for s in stamps):
        order = sorted(range(n), key=lambda i: (stamps[i], i))
    else:
        order = list(range(n))
    recency = [0.0] * n
    for rank, i in enumerate(order):
        recency[i] = rank / (n - 1)
    return recency


def _over_test(floors: Sequence[int]) -> Callable[[int, int], bool]:
    """`test(i, room)`: whether packet `i`'s floor is over `room`.

    A lazy floor's own test may settle it cheaply; looked up once per pack.
    """
    over = getattr(floors, "over", None)
    if callable(over):
        return over  # type: ignore[no-any-return]
    return lambda i, room: floors[i] > room


def pack_packets(
    packets: Sequence[ContextPacket],
    relevance: Sequence[float],
    *,
    max_selected_tokens: int,
    config: ContextConfig = DEFAULT_CONFIG,
    costs: Sequence[int] | None = None,
    cost_floors: Sequence[int] | None = None,
    token_counter: TokenCounter | None = None,
) -> Selection:
    """Pack scored packets under `max_selected_tokens` (the packing half of `select_packets`).

    Packets are taken by score; a cost is read only for a packet the pack reaches
    whose floor still fits, so a lazy `costs` (`PacketSizer.costs`) measures only
    those: a cold build over 10,000 new packets measures the hundred or so near
    the budget, not all of them.

    Args:
        packets: Candidates (with token counts filled in unless `costs` is given).
        relevance: One relevance in [0, 1] per packet (e.g. from `relevance_scores`).
        max_selected_tokens: Maximum total cost of the kept packets.
        config: Weights, `min_relevance` and `duplicate_threshold`.
        costs: Cost of each packet when it differs from its `token_count` (e.g. its
            rendered size with tags and wrappers); read only where needed.
        cost_floors: A lower bound of each cost: a packet whose floor does not fit is
            dropped as over budget without its cost being read.
        token_counter: Fills in the `token_count` of kept packets that lack one
            (packets left out keep theirs, possibly `None`).

    Returns:
        The selection, kept packets in input order.

    Raises:
        ValueError: If `relevance`, `costs` or `cost_floors` do not match `packets`
            in length.
    """
    if any(
        values is not None and len(values) != len(packets)
        for values in (relevance, costs, cost_floors)
    ):
        msg = "relevance, costs and cost_floors must have one value per packet"
        raise InvalidArgumentError(msg)
    recency = _recency(packets)
    scores = [
        (config.relevance_weight * relevance[i] + config.recency_weight * recency[i])
        * config.type_weights.get(packet.type, 1.0)
        for i, packet in enumerate(packets)
    ]
    # Indices, not objects, through the sort and the packing loop: one ScoredPacket per
    # kept packet instead of one per candidate. Ties: the later packet first (the input
    # runs backwards, and a reversed sort keeps equal keys in input order).
    pinned = [i for i, packet in enumerate(packets) if packet.pinned]
    backwards = (i for i in reversed(range(len(packets))) if not packets[i].pinned)
    rest = sorted(backwards, key=scores.__getitem__, reverse=True)
    kept: list[int] = []
    dropped: dict[int, DropReason] = {}
    kept_terms = _KeptTerms(config.duplicate_threshold)
    used = 0
    surely_over = None if cost_floors is None else _over_test(cost_floors)
    for i in pinned + rest:
        packet = packets[i]
        if not packet.pinned and relevance[i] < config.min_relevance:
            dropped[i] = "below_min_relevance"
            continue
        if surely_over is not None and surely_over(i, max_selected_tokens - used):
            dropped[i] = "over_budget"
            continue
        size = costs[i] if costs is not None else packet.token_count or 0
        if used + size > max_selected_tokens:
            dropped[i] = "over_budget"
            continue
        terms = frozenset(tokenize(packet.content)) if not packet.pinned else frozenset()
        if terms and not kept_terms.keep(terms):
            dropped[i] = "duplicate"
            continue
        kept.append(i)
        used += size
    kept.sort()
    counted = [
        packets[i] if token_counter is None else packets[i].with_token_count(token_counter)
        for i in kept
    ]
    selected = tuple(
        ScoredPacket(p, relevance[i], scores[i], i) for p, i in zip(counted, kept, strict=True)
    )
    drops = tuple(Drop(packets[i], reason) for i, reason in sorted(dropped.items()))
    return Selection(selected, drops, max_selected_tokens, used)


# Distinct terms up to which `_KeptTerms` compares bit masks: a mask of 4,096 bits is
# 512 bytes, and an AND of two costs about what a set intersection of a few terms does.
_MAX_MASK_BITS = 4096


class _KeptTerms:
    """The kept packets' term sets; `keep` refuses a near-duplicate of one of them.

    A near-duplicate has a Jaccard overlap (intersection over union) of at least
    `threshold` with a kept set, or is equal to one. Each set is also a bit mask over
    the terms met so far, so a new set is compared with all kept ones in C (`&` and
    `bit_count` over the masks): a pack of 70 packets made 2,400 set intersections in
    Python, 1.2 ms. Past `_MAX_MASK_BITS` distinct terms the sets are compared.
    """

    def __init__(self, threshold: float) -> None:
        self._threshold = threshold
        self._exact: set[frozenset[str]] = set()
        self._sets: list[frozenset[str]] = []
        self._sizes: list[int] = []
        self._bits: dict[str, int] | None = {}  # `None` once over `_MAX_MASK_BITS`
        self._masks: list[int] = []

    def keep(self, terms: frozenset[str]) -> bool:
        """Keep `terms` unless it is a near-duplicate of a kept set (`False`)."""
        if terms in self._exact:
            return False
        mask = self._mask(terms)
        if self._threshold < 1.0 and self._sets:
            size = len(terms)
            if mask is None:
                shared = [len(terms & other) for other in self._sets]
            else:
                shared = list(map(int.bit_count, map(mask.__and__, self._masks)))
            unions = map(sub, map(size.__add__, self._sizes), shared)
            if max(map(truediv, shared, unions)) >= self._threshold:
                return False
        self._exact.add(terms)
        self._sets.append(terms)
        self._sizes.append(len(terms))
        if mask is not None:
            self._masks.append(mask)
        return True

    def _mask(self, terms: frozenset[str]) -> int | None:
        """`terms` as a bit mask (new terms get the next bits), or `None` past the bound."""
        bits = self._bits
        if bits is None:
            return None
        for term in terms.difference(bits):
            bits[term] = 1 << len(bits)
        if len(bits) > _MAX_MASK_BITS:
            self._bits = None
            self._masks = []
            return None
        return sum(map(bits.__getitem__, terms))


def _prepare(
    packets: Sequence[ContextPacket], max_tokens: int, token_counter: TokenCounter | None
) -> list[ContextPacket]:
    if max_tokens < 0:
        msg = f"max_selected_tokens must be >= 0, got {max_tokens}"
        raise InvalidArgumentError(msg)
    counter = resolve_counter(token_counter)
    return [p.with_token_count(counter) for p in packets]


def select_packets(
    packets: Sequence[ContextPacket],
    query: str,
    *,
    max_selected_tokens: int,
    config: ContextConfig = DEFAULT_CONFIG,
    token_counter: TokenCounter | None = None,
    embeddings: Embeddings | None = None,
) -> Selection:
    """Keep the most valuable packets whose token counts add up to at most `max_selected_tokens`.

    Pinned packets are taken first (in input order) whenever they fit; the others by
    score, skipping any that would overflow, any near-duplicate of a kept packet, and
    any below `config.min_relevance`.

    Args:
        packets: Candidate packets.
        query: What the context is for.
        max_selected_tokens: Maximum sum of the selected packets' token counts.
        config: Weights and thresholds.
        token_counter: Counts packets lacking `token_count` (default: cl100k).
        embeddings: Optional LangChain embeddings for hybrid relevance.

    Returns:
        The selection (kept packets in input order) and every drop with its reason.

    Raises:
        ValueError: If `max_selected_tokens` is negative.

    Example:
        >>> packets = [ContextPacket("the cat sat"), ContextPacket("a dog barked")]
        >>> counter = lambda s: 3
        >>> chosen = select_packets(packets, "dog", max_selected_tokens=3, token_counter=counter)
        >>> chosen.packets[0].content
        'a dog barked'
    """
    prepared = _prepare(packets, max_selected_tokens, token_counter)
    relevance = relevance_scores(prepared, query, config=config, embeddings=embeddings)
    return pack_packets(prepared, relevance, max_selected_tokens=max_selected_tokens, config=config)


async def aselect_packets(
    packets: Sequence[ContextPacket],
    query: str,
    *,
    max_selected_tokens: int,
    config: ContextConfig = DEFAULT_CONFIG,
    token_counter: TokenCounter | None = None,
    embeddings: Embeddings | None = None,
) -> Selection:
    """Async twin of `select_packets` (embeddings are awaited).

    Args:
        packets: Candidate packets.
        query: What the context is for.
        max_selected_tokens: Maximum sum of the selected packets' token counts.
        config: Weights and thresholds.
        token_counter: Counts packets lacking `token_count`.
        embeddings: Optional LangChain embeddings for hybrid relevance.

    Returns:
        The selection and every drop with its reason.

    Raises:
        ValueError: If `max_selected_tokens` is negative.
    """
    prepared = _prepare(packets, max_selected_tokens, token_counter)
    relevance = await arelevance_scores(prepared, query, config=config, embeddings=embeddings)
    return pack_packets(prepared, relevance, max_selected_tokens=max_selected_tokens, config=config)
