"""Context assembly: packets and the Gather-Select-Structure-Compress pipeline."""

from langgraph_context.context.packet import TRUSTED_PACKET_TYPES, ContextPacket

__all__ = ["TRUSTED_PACKET_TYPES", "ContextPacket"]
