"""Tests for the LoCoMo loader used by benchmarks/locomo (on a tiny synthetic file)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.locomo.data import load_all, load_conversation


def test_loader_builds_turn_packets_and_answerable_questions(tmp_path: Path) -> None:
    """Turns keep order, speaker, date and caption; evidence ids are normalised."""
    raw = {
        "speaker_a": "Ann",
        "speaker_b": "Bob",
        "session_2_date_time": "1:56 pm on 8 May, 2023",
        "session_2": [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "I ran a race"},
            {
                "speaker": "Bob",
                "dia_id": "D2:2",
                "text": "Look",
                "blip_caption": "a photo of a cat",
            },
        ],
        "events_session_2": {"ignored": True},
        "qa": [
            {
                "question": "What did Ann run?",
                "answer": "a race",
                "evidence": ["D:2:1"],
                "category": 4,
            },
            {"question": "Adversarial?", "answer": "x", "evidence": ["D2:1"], "category": 5},
            {"question": "Missing evidence", "answer": "x", "evidence": ["D9:9"], "category": 1},
        ],
    }
    path = tmp_path / "locomo" / "99.json"
    path.parent.mkdir()
    path.write_text(json.dumps(raw))
    conv = load_conversation(path)
    assert [t.content for t in conv.turns] == [
        "Ann: I ran a race",
        "Bob: Look [shares a photo of a cat]",
    ]
    assert conv.turns[0].metadata["session_date"] == "1:56 pm on 8 May, 2023"
    assert conv.turns[0].timestamp is not None
    assert [(q.text, set(q.evidence)) for q in conv.questions] == [("What did Ann run?", {"D2:1"})]
    assert [c.name for c in load_all(path.parent)] == ["99"]
    assert load_all(tmp_path / "absent") == []
