"""Context assembly: packets and the Gather-Select-Structure-Compress pipeline."""

from langgraph_context.context.breakpoints import (
    CacheBreakpoints,
    mark_cache_breakpoints,
    mark_cache_points,
)
from langgraph_context.context.builder import ContextBuilder
from langgraph_context.context.compress import (
    Compressed,
    acompress_context,
    asummarize_lines,
    compress_context,
    summarize_lines,
)
from langgraph_context.context.config import (
    ContextConfig,
    SectionName,
)
from langgraph_context.context.gather import (
    GatherResult,
    QuerySource,
    SourceFailure,
    StateSource,
    StoreSource,
    agather_packets,
    gather_packets,
    message_packets,
    note_packets,
    plan_packets,
)
from langgraph_context.context.node import (
    ContextStateMixin,
    create_context_node,
)
from langgraph_context.context.relevance import arelevance_scores, relevance_scores
from langgraph_context.context.rerank import Reranker, rerank_selection
from langgraph_context.context.result import ContextResult
from langgraph_context.context.select import (
    Drop,
    DropReason,
    ScoredPacket,
    Selection,
    aselect_packets,
    pack_packets,
    select_packets,
)
from langgraph_context.context.stamp import (
    stamp_message,
    stamp_messages,
)
from langgraph_context.context.structure import (
    Entry,
    Section,
    StructuredContext,
    UntrustedRenderer,
    render_packet,
    structure_context,
)
from langgraph_context.packet import (
    ContextPacket,
)

__all__ = [
    "CacheBreakpoints",
    "Compressed",
    "ContextBuilder",
    "ContextConfig",
    "ContextPacket",
    "ContextResult",
    "ContextStateMixin",
    "Drop",
    "DropReason",
    "Entry",
    "GatherResult",
    "QuerySource",
    "Reranker",
    "ScoredPacket",
    "Section",
    "SectionName",
    "Selection",
    "SourceFailure",
    "StateSource",
    "StoreSource",
    "StructuredContext",
    "UntrustedRenderer",
    "acompress_context",
    "agather_packets",
    "arelevance_scores",
    "aselect_packets",
    "asummarize_lines",
    "compress_context",
    "create_context_node",
    "gather_packets",
    "mark_cache_breakpoints",
    "mark_cache_points",
    "message_packets",
    "note_packets",
    "pack_packets",
    "plan_packets",
    "relevance_scores",
    "render_packet",
    "rerank_selection",
    "select_packets",
    "stamp_message",
    "stamp_messages",
    "structure_context",
    "summarize_lines",
]
