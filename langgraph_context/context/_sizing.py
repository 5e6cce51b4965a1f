"""Packet sizes as the builder packs them: rendered, with tags and wrappers, memoized."""

from __future__ import annotations

import functools
from collections.abc import Callable

from langgraph_context._memo import SizedMemo
from langgraph_context.context.structure import UntrustedRenderer, render_packet
from langgraph_context.packet import ContextPacket
from langgraph_context.safety.boundary import Fence, protect_packet
from langgraph_context.tokens import TokenCounter

__all__ = ["PacketSizer"]

# A fixed, random-looking boundary of the default length, used only to measure costs.
_COST_BOUNDARY = "5e0c9a7d31b84f26"
COST_MEMO_CHARS = 64_000_000
"""Default bound of a sizer's memo, in characters of packet text held."""


class PacketSizer:
    """Measure what each packet costs in the rendered context, remembering sizes.

    Args:
        max_memo_chars: Bound of the memo, in characters of packet text held; the
            least recently used sizes are dropped first.
    """

    def __init__(self, *, max_memo_chars: int | None = None) -> None:
        bound = COST_MEMO_CHARS if max_memo_chars is None else max_memo_chars
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
    ) -> list[int]:
        """Each packet's rendered size (tags, wrappers, newline), what it really costs.

        With no renderer or the default fixed-boundary one, a packet's rendering depends
        only on its content, type, source, trust and section, so sizes are memoized:
        rendering (sanitizing) 1,000 packets was half of a warm build's time. A
        caller's own renderer is always called.

        Args:
            packets: The packets.
            wrap: The renderer from `renderer`.
            token_counter: The counter (part of the memo key).
            section_for: Maps a packet type to its section key.

        Returns:
            One cost per packet.
        """
        counter = token_counter
        deterministic = (
            wrap is None
            or (isinstance(wrap, Fence) and wrap.boundary == _COST_BOUNDARY)
            or (
                isinstance(wrap, functools.partial)
                and wrap.func is protect_packet
                and wrap.keywords.get("boundary") == _COST_BOUNDARY
            )
        )
        if not deterministic:
            return [
                counter(render_packet(p, section_for(p.type), wrap_untrusted=wrap)) + 1
                for p in packets
            ]
        memo = self._memo
        costs = []
        for p in packets:
            section = section_for(p.type)
            shape = wrap if isinstance(wrap, Fence) else wrap is None
            key = (p.content, p.type, p.source, p.is_trusted, section, shape, id(counter))
            cost = memo.get(key)
            if cost is None:
                cost = counter(render_packet(p, section, wrap_untrusted=wrap)) + 1
                memo.put(key, cost, size=len(p.content) + 64)
            costs.append(cost)
        return costs
