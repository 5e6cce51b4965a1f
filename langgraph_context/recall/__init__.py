"""Restorable context: cut tool output and evicted history kept under handles, read back.

`RecallMiddleware` (for `create_agent`; on by default in `create_context_agent`) cuts a
long tool result to its two ends with a notice naming its handle, keeps its full text
(the graph's store per user and thread, else checkpointed state), archives what a
compaction evicts, and binds `read_tool_output` and `search_history`.
"""

from langgraph_context.recall.archive import (
    RecallEntry,
    RecallLimits,
    RecallStateMixin,
    adelete_recall,
    delete_recall,
    merge_recall,
    merge_texts,
    recall_namespace,
)
from langgraph_context.recall.middleware import RecallAgentState, RecallMiddleware
from langgraph_context.recall.node import create_offload_node
from langgraph_context.recall.read import PageError
from langgraph_context.recall.tools import (
    create_read_tool_output_tool,
    create_search_history_tool,
)

__all__ = [
    "PageError",
    "RecallAgentState",
    "RecallEntry",
    "RecallLimits",
    "RecallMiddleware",
    "RecallStateMixin",
    "adelete_recall",
    "create_offload_node",
    "create_read_tool_output_tool",
    "create_search_history_tool",
    "delete_recall",
    "merge_recall",
    "merge_texts",
    "recall_namespace",
]
