"""Load the prompt-injection corpus shared by the safety tests and the benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPUS_PATH = Path(__file__).resolve().parent / "data" / "injection_corpus.json"


def load_corpus() -> dict[str, list[dict[str, Any]]]:
    """Return `{"attacks": [...], "benign": [...]}`, each item with id, category, text."""
    return json.loads(CORPUS_PATH.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


CORPUS = load_corpus()
ATTACKS = CORPUS["attacks"]
BENIGN = CORPUS["benign"]
