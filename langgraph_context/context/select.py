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
    seen_exact: set[frozenset[str]] = set()
    kept_terms: list[frozenset[str]] = []
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
        if terms and _is_duplicate(terms, seen_exact, kept_terms, config.duplicate_threshold):
            dropped[i] = "duplicate"
            continue
        if terms:
            seen_exact.add(terms)
            kept_terms.append(terms)
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


def _is_duplicate(
    terms: frozenset[str],
    seen_exact: set[frozenset[str]],
    kept_terms: list[frozenset[str]],
    threshold: float,
) -> bool:
    if terms in seen_exact:
        return True
    if threshold >= 1.0:
        return False
    size = len(terms)
    for other in kept_terms:
        count = len(other)
        # Jaccard <= smaller/larger: a pair this uneven cannot reach the threshold
        smaller, larger = (size, count) if size < count else (count, size)
        if smaller < threshold * larger:
            continue
        # the union's size from the intersection's, without building the union
        shared = len(terms & other)
        if shared / (size + count - shared) >= threshold:
            return True
    return False


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
