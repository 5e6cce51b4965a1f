"""`ContextBuilder`: Gather, Select, Structure and Compress in one call.

The budget is honest: the task, the output rules, every section header, evidence
tags and untrusted-text wrappers all count against `max_tokens`, and the reserve for
system instructions is held back before packets are packed. The compress stage then
guarantees the final text fits, by the configured counter.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langgraph_context._gc import paused_gc
from langgraph_context.context._calls import Call, Steps, adrive, drive
from langgraph_context.context._fallback import asummary_or_trim, summary_or_trim
from langgraph_context.context._inputs import build_inputs, check_query
from langgraph_context.context._reuse import Reuse
from langgraph_context.context._sizing import LazyCosts, PacketSizer
from langgraph_context.context.compress import (
    DEFAULT_SUMMARY_TOKENS,
    Compressed,
    compress_context,
    insert_summary,
)
from langgraph_context.context.config import DEFAULT_CONFIG, ContextConfig
from langgraph_context.context.gather import (
    DEFAULT_STATE_SOURCES,
    GatherResult,
    QuerySource,
    StateSource,
    agather_packets,
    gather_packets,
)
from langgraph_context.context.relevance import arelevance_scores, relevance_scores
from langgraph_context.context.rerank import Reranker, rerank_selection
from langgraph_context.context.result import ContextResult
from langgraph_context.context.select import (
    Drop,
    ScoredPacket,
    Selection,
    pack_packets,
)
from langgraph_context.context.structure import UntrustedRenderer, structure_context
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.packet import ContextPacket
from langgraph_context.safety.boundary import (
    HARDENING_INSTRUCTION,
    Fence,
    keyed_boundary,
    untrusted_findings,
)
from langgraph_context.safety.detector import DetectorLike, as_detector
from langgraph_context.tokens import TokenCounter, resolve_counter

__all__ = ["ContextBuilder"]

logger = logging.getLogger(__name__)


class ContextBuilder:
    """Assemble a budgeted, sectioned context from history, state and sources.

    Args:
        config: Budget, weights and template (`ContextConfig()` by default).
        token_counter: Counts every text (default: offline cl100k).
        sources: Query sources searched on each build: `BaseRetriever`, `BaseStore`,
            `StoreSource`, or callables `(query) -> Iterable[ContextPacket | Document | str]`.
        state_sources: Callables `(state) -> Iterable[ContextPacket]` read when a
            build gets `state` (default: messages, plan, notes).
        embeddings: Optional LangChain embeddings for hybrid relevance.
        wrap_untrusted: Renders untrusted packets. By default (`protect_untrusted`)
            each build fences them with a `safety.Fence` whose boundary is keyed by
            their text (stable for the same packets, unguessable without the process
            key): one fence per run of untrusted items in a section, each item
            labelled with its source, its text byte-identical except fence tags and
            their look-alikes. Injection findings in what is shown are logged and
            reported in `ContextResult.findings`.
        hardening: Text appended to [Role & Policies] (default with
            `protect_untrusted`: `safety.HARDENING_INSTRUCTION`, added only to builds
            that contain untrusted packets).
        protect_untrusted: Fence untrusted packets and harden the role section when
            no `wrap_untrusted` is given. `False` renders them as plain text.
        sanitize: Also rewrite fenced text in-band with `safety.sanitize_untrusted`
            (and, in `create_context_node`, the tool results it passes on verbatim).
            Off by default: the fence is the guarantee.
        detector: A `safety.Detector` or any scorer (callable or classifier, see
            `safety.InjectionScorer`) used for the findings and for `sanitize`;
            `None` for the package's rules alone.
        summarizer: Optional chat model that summarises the packets of the first
            section of `config.compress_order` ([Context] by default) that did not fit,
            into one entry at the top of that section, fenced as data; if it raises, they
            are trimmed (logged as a warning).
        max_summary_tokens: Room kept in the budget for that summary.
        reranker: Optional stage after selection: `(query, packets) -> packets` to
            keep, best first (`context.rerank`). Default: none.

    Raises:
        TypeError: If `config` is not a `ContextConfig`, `wrap_untrusted` is not
            callable, `summarizer` is not a chat model, `reranker` is not callable or
            `detector` is not a detector or scorer.
        ValueError: If `max_summary_tokens` is below 1.

    Example:
        >>> builder = ContextBuilder(config=ContextConfig(max_tokens=200))
        >>> text = builder.build("Where is the report?", system_instructions="Be brief.")
        >>> text.splitlines()[:2]
        ['[Role & Policies]', 'Be brief.']
    """

    def __init__(
        self,
        *,
        config: ContextConfig = DEFAULT_CONFIG,
        token_counter: TokenCounter | None = None,
        sources: Sequence[QuerySource] = (),
        state_sources: Sequence[StateSource] = DEFAULT_STATE_SOURCES,
        embeddings: Embeddings | None = None,
        wrap_untrusted: UntrustedRenderer | None = None,
        hardening: str | None = None,
        protect_untrusted: bool = True,
        sanitize: bool = False,
        summarizer: BaseChatModel | None = None,
        max_summary_tokens: int = DEFAULT_SUMMARY_TOKENS,
        reranker: Reranker | None = None,
        detector: DetectorLike | None = None,
    ) -> None:
        if not isinstance(config, ContextConfig):
            msg = f"config must be a ContextConfig, got {type(config).__name__}"
            raise InvalidTypeError(msg)
        if wrap_untrusted is not None and not callable(wrap_untrusted):
            msg = f"wrap_untrusted must be callable, got {type(wrap_untrusted).__name__}"
            raise InvalidTypeError(msg)
        if summarizer is not None and not isinstance(summarizer, BaseChatModel):
            msg = (
                f"summarizer must be a chat model (BaseChatModel), got {type(summarizer).__name__}"
            )
            raise InvalidTypeError(msg)
        if reranker is not None and not callable(reranker):
            msg = f"reranker must be callable (query, packets) -> packets, got {reranker!r}"
            raise InvalidTypeError(msg)
        if max_summary_tokens < 1:
            msg = f"max_summary_tokens must be >= 1, got {max_summary_tokens}"
            raise InvalidArgumentError(msg)
        if summarizer is not None and max_summary_tokens >= config.max_tokens:
            msg = f"max_summary_tokens ({max_summary_tokens}) must be below config.max_tokens"
            raise InvalidArgumentError(f"{msg} ({config.max_tokens})")
        self.config = config
        self.token_counter = resolve_counter(token_counter)
        self.sources = tuple(sources)
        self.state_sources = tuple(state_sources)
        self.embeddings = embeddings
        self.wrap_untrusted = wrap_untrusted
        self.protect_untrusted = protect_untrusted
        self.sanitize = sanitize
        self.hardening = hardening
        self.summarizer = summarizer
        self.max_summary_tokens = max_summary_tokens
        self.reranker = reranker
        self.detector = as_detector(detector)
        self._sizer = PacketSizer()
        self._reuse = Reuse()  # the latest builds over the same inputs (`_reuse`)

    def _protection(self, gathered: GatherResult) -> tuple[UntrustedRenderer | None, str | None]:
        """The renderer (default: a fence keyed by the untrusted texts) and hardening text."""
        if self.wrap_untrusted is not None or not self.protect_untrusted:
            return self.wrap_untrusted, self.hardening
        untrusted = [p.content for p in gathered.packets if not p.is_trusted]
        if not untrusted:
            return None, self.hardening
        # Keyed by the fenced texts: the same packets render to the same bytes (a cache
        # hit for the provider), and no packet can predict the boundary that fences it.
        untrusted.sort()
        fence = Fence(keyed_boundary(*untrusted), sanitize=self.sanitize, detector=self.detector)
        return fence, self.hardening if self.hardening is not None else HARDENING_INSTRUCTION

    # -- budget ------------------------------------------------------------------

    def fixed_tokens(self, query: str, system_instructions: str | None = None) -> int:
        """Tokens a build for `query` needs before any packet, counted generously.

        Role (with the instructions and, when untrusted text may appear, the hardening
        text), task, output and every section header. `create_context_node` keeps this
        much room for the context so recent messages cannot crowd out the role or task.

        Args:
            query: The query (rendered in [Task]).
            system_instructions: The role text, if any.

        Returns:
            An upper bound on those sections' tokens by the builder's counter.
        """
        key = self._reuse.fixed_key(self, query, system_instructions)
        known = self._reuse.fixed(key)
        if known is not None:
            return known
        role = (
            [ContextPacket(system_instructions, type="system", source="system", pinned=True)]
            if system_instructions
            else []
        )
        hardening = self.hardening
        if self.wrap_untrusted is None and self.protect_untrusted and hardening is None:
            hardening = HARDENING_INSTRUCTION
        fixed = self._skeleton_cost(query, role, (None, hardening))[0]
        self._reuse.keep_fixed(key, fixed)
        return fixed

    def _skeleton_cost(
        self,
        query: str,
        role: list[ContextPacket],
        protection: tuple[UntrustedRenderer | None, str | None],
    ) -> tuple[int, int]:
        """Tokens of the fixed sections plus every header, and of the role section."""
        wrap, hardening = protection
        skeleton = structure_context(
            role, query, config=self.config, wrap_untrusted=wrap, hardening=hardening
        )
        role_section = skeleton.section("role")
        role_text = role_section.render() if role_section.entries else ""
        # Count every header as if its section were present: a safe upper bound.
        headers = "\n\n".join(
            self.config.section_titles[name] for name in ("state", "evidence", "context")
        )
        fixed = self.token_counter(skeleton.text) + self.token_counter(headers) + 6
        if isinstance(wrap, Fence):
            # One fence; more runs of untrusted items are trimmed by the compress stage.
            fixed += self.token_counter(f"{wrap.open('document')}\n{wrap.close()}") + 2
        return fixed, self.token_counter(role_text)

    def _split(
        self, packets: Iterable[ContextPacket]
    ) -> tuple[list[ContextPacket], list[ContextPacket]]:
        items = list(packets)
        roles = {t for t in {p.type for p in items} if self.config.section_for(t) == "role"}
        rest = [p for p in items if p.type not in roles] if roles else items
        return [p for p in items if p.type in roles], rest

    def _packet_budget(
        self,
        query: str,
        role: list[ContextPacket],
        max_tokens: int,
        protection: tuple[UntrustedRenderer | None, str | None],
    ) -> tuple[int, int]:
        """The packets' budget and the summary's, for one build."""
        fixed, role_tokens = self._skeleton_cost(query, role, protection)
        reserve = int(max_tokens * self.config.reserve_ratio)
        available = max(0, max_tokens - fixed - max(0, reserve - role_tokens))
        room = self._summary_room(available)
        return max(0, available - room), max(0, room - 8)

    def _summary_room(self, available: int) -> int:
        """Room for the summary line: `max_summary_tokens` + 8, at most a third of `available`."""
        if self.summarizer is None:
            return 0
        return min(self.max_summary_tokens + 8, available // 3)

    # -- pipeline ----------------------------------------------------------------

    def _prepare(
        self,
        query: str,
        gathered: GatherResult,
        max_tokens: int | None,
        protection: tuple[UntrustedRenderer | None, str | None],
    ) -> tuple[int, list[ContextPacket], list[ContextPacket], LazyCosts, tuple[int, int]]:
        limit = self.config.max_tokens if max_tokens is None else max_tokens
        if limit < 1:
            msg = f"max_tokens must be >= 1, got {limit}"
            raise InvalidArgumentError(msg)
        role, rest = self._split(gathered.packets)
        budget = self._packet_budget(query, role, limit, protection)
        costs = self._sizer.costs(
            rest,
            PacketSizer.renderer(protection[0]),
            token_counter=self.token_counter,
            section_for=self.config.section_for,
        )
        return limit, role, rest, costs, budget

    def _left_out(self, selection: Selection) -> tuple[str, list[str], set[int]]:
        """The over-budget packets of the first trimmable section, for the summarizer."""
        if self.summarizer is None or not self.config.compress_order:
            return "", [], set()
        section = self.config.compress_order[0]
        left = [
            d.packet
            for d in selection.dropped
            if d.reason == "over_budget" and self.config.section_for(d.packet.type) == section
        ]
        return section, [p.content for p in left], {id(p) for p in left}

    def _result(
        self,
        gathered: GatherResult,
        selection: Selection,
        compressed: Compressed,
        started: float,
        max_tokens: int,
        summarized: set[int],
    ) -> ContextResult:
        removed = {id(d.packet) for d in compressed.dropped}
        selected = tuple(s.packet for s in selection.selected if id(s.packet) not in removed)
        dropped = tuple(
            Drop(d.packet, "summarized") if id(d.packet) in summarized else d
            for d in (*selection.dropped, *compressed.dropped)
        )
        section_tokens = {
            s.name: self.token_counter(s.render()) for s in compressed.context.sections if s.entries
        }
        shown = self.wrap_untrusted is None and self.protect_untrusted and not self.sanitize
        findings = untrusted_findings(selected, detector=self.detector) if shown else ()
        result = ContextResult(
            text=compressed.text,
            tokens=compressed.tokens,
            max_tokens=max_tokens,
            section_tokens=section_tokens,
            selected=selected,
            dropped=dropped,
            failures=gathered.failures,
            gathered=len(gathered.packets),
            truncated=compressed.truncated,
            findings=findings,
            elapsed_ms=(time.perf_counter() - started) * 1000,
        )
        logger.debug("context built: %s", result.stats)
        return result

    def _replayed(self, known: ContextResult) -> None:
        """Log a build read back as a build of its packets does (findings, debug line)."""
        if known.findings:
            untrusted_findings(known.selected, detector=self.detector)
        if logger.isEnabledFor(logging.DEBUG):  # `stats` is not free: made when shown
            logger.debug("context built: %s", known.stats)

    def _steps(
        self,
        user_query: str,
        sources: Mapping[str, Any],
        max_tokens: int | None,
    ) -> Steps[ContextResult]:
        """The build pipeline; yields the gather, relevance and summarizer calls."""
        started = time.perf_counter()
        gathered: GatherResult = yield Call(
            gather_packets,
            agather_packets,
            (user_query,),
            {**sources, "sources": self.sources, "state_sources": self.state_sources},
        )
        key = self._reuse.build_key(self, user_query, gathered, max_tokens)
        if (known := self._reuse.build(key, started)) is not None:
            self._replayed(known)
            return known
        protection = self._protection(gathered)
        limit, role, rest, costs, (budget, max_summary_tokens) = self._prepare(
            user_query, gathered, max_tokens, protection
        )
        relevance: list[float] = yield Call(
            relevance_scores,
            arelevance_scores,
            (rest, user_query),
            {"config": self.config, "embeddings": self.embeddings},
        )
        floors, counter = costs.floors, self.token_counter  # ranked first, measured lazily
        selection = pack_packets(
            rest,
            relevance,
            max_selected_tokens=budget,
            config=self.config,
            costs=costs,
            cost_floors=floors,
            token_counter=counter,
        )
        if self.reranker is not None:
            selection = rerank_selection(
                selection, user_query, self.reranker, section_for=self.config.section_for
            )
        items: list[ScoredPacket | ContextPacket] = [*role, *selection.selected]
        wrap, hardening = protection
        structured = structure_context(
            items, user_query, config=self.config, wrap_untrusted=wrap, hardening=hardening
        )
        section, lines, left = self._left_out(selection)
        if lines and self.summarizer is not None and max_summary_tokens > 0:
            summary: str = yield Call(
                summary_or_trim,
                asummary_or_trim,
                (lines,),
                {
                    "model": self.summarizer,
                    "section": section,
                    "max_summary_tokens": max_summary_tokens,
                    "token_counter": self.token_counter,
                },
            )
            if summary:  # fenced as data (a model wrote it), unless protection is off
                protect = self.protect_untrusted or self.wrap_untrusted is not None
                structured = insert_summary(
                    structured, section, summary, protect=protect, hardening=self.hardening
                )
            left = left if summary else set()
        compressed = compress_context(
            structured, max_tokens=limit, token_counter=self.token_counter, config=self.config
        )
        result = self._result(gathered, selection, compressed, started, limit, left)
        self._reuse.keep(key, result)
        return result

    def build_result(
        self,
        user_query: str,
        conversation_history: Sequence[Any] | None = None,
        system_instructions: str | None = None,
        custom_packets: Iterable[ContextPacket] | None = None,
        *,
        state: Any = None,
        max_tokens: int | None = None,
    ) -> ContextResult:
        """Build the context and return it with its statistics.

        Args:
            user_query: What the next model call must answer.
            conversation_history: Messages or OpenAI-style dicts.
            system_instructions: Rendered in [Role & Policies]; never trimmed.
            custom_packets: Extra candidate packets.
            state: Graph state read by the state sources.
            max_tokens: Overrides `config.max_tokens` for this build.

        Returns:
            The text (at most `max_tokens` tokens) with per-section tokens and drops.

        Raises:
            ValueError: If `max_tokens` is below 1.
            TypeError: If `user_query` is not a string.
        """
        with paused_gc():  # coercing the inputs is CPU-bound like the pipeline's steps
            inputs = build_inputs(conversation_history, system_instructions, custom_packets, state)
        check_query(user_query)
        return drive(self._steps(user_query, inputs, max_tokens))

    async def abuild_result(
        self,
        user_query: str,
        conversation_history: Sequence[Any] | None = None,
        system_instructions: str | None = None,
        custom_packets: Iterable[ContextPacket] | None = None,
        *,
        state: Any = None,
        max_tokens: int | None = None,
    ) -> ContextResult:
        """Async twin of `build_result`: the same arguments, result and errors.

        Query sources, embeddings and the summarizer are awaited.
        """
        with paused_gc():
            inputs = build_inputs(conversation_history, system_instructions, custom_packets, state)
        check_query(user_query)
        return await adrive(self._steps(user_query, inputs, max_tokens))

    def build(
        self,
        user_query: str,
        conversation_history: Sequence[Any] | None = None,
        system_instructions: str | None = None,
        custom_packets: Iterable[ContextPacket] | None = None,
    ) -> str:
        """Build the context text (see `build_result` for the statistics).

        Args:
            user_query: What the next model call must answer.
            conversation_history: Messages or OpenAI-style dicts.
            system_instructions: Rendered in [Role & Policies]; never trimmed.
            custom_packets: Extra candidate packets.

        Returns:
            The assembled text, at most `config.max_tokens` tokens.
        """
        return self.build_result(
            user_query, conversation_history, system_instructions, custom_packets
        ).text

    async def abuild(
        self,
        user_query: str,
        conversation_history: Sequence[Any] | None = None,
        system_instructions: str | None = None,
        custom_packets: Iterable[ContextPacket] | None = None,
    ) -> str:
        """Async twin of `build`: the same arguments and result."""
        result = await self.abuild_result(
            user_query, conversation_history, system_instructions, custom_packets
        )
        return result.text
