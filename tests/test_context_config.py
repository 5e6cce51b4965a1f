"""Tests for `ContextConfig` validation."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_context.context import ContextConfig, ContextPacket
from langgraph_context.context.config import DEFAULT_SECTION_TITLES, SEED_SECTION_ORDER


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_tokens": 0}, r"max_tokens must be > 0, got 0"),
        ({"max_tokens": 1.5}, r"max_tokens must be an int"),
        ({"max_tokens": True}, r"max_tokens must be an int"),
        ({"reserve_ratio": 1.5}, r"reserve_ratio must be a number within \[0, 1\], got 1.5"),
        ({"reserve_ratio": 1.0}, r"reserve_ratio must be < 1"),
        ({"min_relevance": -0.1}, r"min_relevance must be a number within \[0, 1\]"),
        ({"relevance_weight": float("nan")}, r"relevance_weight must be a number"),
        ({"relevance_weight": 0.0, "recency_weight": 0.0}, r"must be > 0"),
        ({"neighbor_weight": 2}, r"neighbor_weight must be a number within"),
        ({"neighbor_window": -1}, r"neighbor_window must be an int >= 0, got -1"),
        ({"speaker_boost": -1.0}, r"speaker_boost must be >= 0"),
        ({"date_boost": float("inf")}, r"date_boost must be >= 0"),
        ({"segment_weight": -0.1}, r"segment_weight must be >= 0"),
        ({"segment_key": ""}, r"segment_key must be a non-empty str"),
        ({"embedding_weight": -0.5}, r"embedding_weight must be a number within"),
        ({"duplicate_threshold": 1.2}, r"duplicate_threshold must be a number"),
        ({"duplicate_threshold": 0.0}, r"duplicate_threshold must be > 0"),
        ({"type_weights": {"note": -1.0}}, r"type_weights\['note'\] must be >= 0"),
        ({"type_sections": {"note": "footer"}}, r"type_sections\['note'\] has 'footer'; valid"),
        ({"section_order": ("role", "task")}, r"section_order must list each of"),
        ({"section_order": ("role", "nope")}, r"section_order has 'nope'; valid sections"),
        ({"section_titles": {"role": "R"}}, r"section_titles lacks a title for task"),
        (
            {"section_titles": {**DEFAULT_SECTION_TITLES, "evidence": " "}},
            r"section_titles lacks a title for evidence",
        ),
        ({"compress_order": ("task",)}, r"compress_order may not contain 'task'"),
        ({"compress_order": ("misc",)}, r"compress_order has 'misc'"),
    ],
)
def test_invalid_config_is_rejected_naming_the_field(kwargs: dict[str, Any], match: str) -> None:
    """Every out-of-range or unknown value raises ValueError naming the field."""
    with pytest.raises(ValueError, match=match):
        ContextConfig(**kwargs)


def test_valid_config_and_helpers() -> None:
    """A valid config exposes its reserve in tokens and maps types to sections."""
    config = ContextConfig(max_tokens=1000, reserve_ratio=0.25, section_order=SEED_SECTION_ORDER)
    assert config.reserve_tokens == 250
    assert config.section_for("constraint") == "state"
    assert config.section_for("hot_issue") == "state"
    assert config.section_for("something-new") == "evidence"


def test_packet_rejects_bad_values() -> None:
    """Packets validate content type, relevance range and token count."""
    with pytest.raises(TypeError, match="content must be str"):
        ContextPacket(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="relevance must be within"):
        ContextPacket("x", relevance=2.0)
    with pytest.raises(ValueError, match="token_count must be >= 0"):
        ContextPacket("x", token_count=-1)
