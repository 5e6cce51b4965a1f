"""Load LoCoMo conversations as turn packets plus evidence-annotated questions."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from langgraph_context.packet import ContextPacket

DATA_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "locomo"
EVIDENCE_CATEGORIES = frozenset({1, 2, 3, 4})
_SESSION_RE = re.compile(r"session_(\d+)")
_EVIDENCE_RE = re.compile(r"D:?(\d+):(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass(frozen=True)
class Conversation:
    name: str
    speakers: tuple[str, str]
    turns: tuple[ContextPacket, ...]
    questions: tuple[Question, ...]


def data_dir() -> Path:
    """Return the LoCoMo folder (env `LGC_DATA_DIR` overrides the shared data root)."""
    override = os.environ.get("LGC_DATA_DIR")
    return Path(override) / "locomo" if override else DATA_DIR


def _parse_date(raw: str) -> datetime | None:
    try:
        return datetime.strptime(raw.strip(), _DATE_FORMAT)
    except ValueError:
        return None


def turn_text(turn: dict[str, str]) -> str:
    """Render one turn the way a chat transcript would show it."""
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def load_conversation(path: Path) -> Conversation:
    """Read one LoCoMo file into turn packets (in order) and its answerable questions."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    sessions = sorted((int(m.group(1)), key) for key in raw if (m := _SESSION_RE.fullmatch(key)))
    turns: list[ContextPacket] = []
    for number, key in sessions:
        date_raw = raw.get(f"{key}_date_time", "")
        when = _parse_date(date_raw)
        for position, turn in enumerate(raw[key]):
            turns.append(
                ContextPacket(
                    turn_text(turn),
                    type="message",
                    source=turn["dia_id"],
                    timestamp=when.timestamp() + position if when else None,
                    metadata={
                        "speaker": turn["speaker"],
                        "session": number,
                        "session_date": date_raw,
                        "thread": path.stem,
                    },
                )
            )
    known = {t.source for t in turns}
    questions: list[Question] = []
    for qa in raw["qa"]:
        if qa.get("category") not in EVIDENCE_CATEGORIES:
            continue
        evidence = (
            frozenset(
                f"D{m.group(1)}:{m.group(2)}"
                for item in qa.get("evidence", [])
                for m in _EVIDENCE_RE.finditer(item)
            )
            & known
        )
        if evidence:
            questions.append(Question(qa["question"], evidence, qa["category"]))
    speakers = (raw["speaker_a"], raw["speaker_b"])
    return Conversation(path.stem, speakers, tuple(turns), tuple(questions))


def load_all(folder: Path | None = None) -> list[Conversation]:
    """Load every conversation of the folder (empty list when the folder is absent)."""
    folder = folder or data_dir()
    if not folder.is_dir():
        return []
    return [load_conversation(p) for p in sorted(folder.glob("*.json"))]
