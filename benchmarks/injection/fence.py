"""What the default fence changes in benign real tool output, and what it stops.

Run: `.venv/bin/python -m benchmarks.injection.fence`

1. Every tool result of the Claude Code sessions in the shared data folder is fenced
   the way the builder fences it (`Fence`, no in-band rewriting) and with the opt-in
   rewriting (`sanitize_untrusted`); the figure is how many results change (all are
   benign), and the CPU time per 10k characters.
2. An attack corpus of closing-tag look-alikes (`tests/data/fence_lookalikes.json`):
   how many survive inside the fence (a look-alike survives when the look-alike view
   still finds a tag or the boundary in the item after fencing).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from benchmarks.injection.__main__ import data_dir
from langgraph_context.messages import content_text
from langgraph_context.packet import ContextPacket
from langgraph_context.safety import sanitize_untrusted
from langgraph_context.safety._lookalike import tag_spans
from langgraph_context.safety.boundary import Fence, neutralize_tags
from langgraph_context.transcripts import load_claude_code_session

REPO = Path(__file__).resolve().parents[2]
LOOKALIKES = REPO / "tests" / "data" / "fence_lookalikes.json"
BOUNDARY = "5e0c9a7d31b84f26"


def tool_outputs() -> list[str]:
    """Every tool result text of the Claude Code sessions (empty if the data is absent)."""
    folder = data_dir() / "claude-code-sessions"
    texts: list[str] = []
    for path in sorted(folder.glob("*.jsonl")):
        for message in load_claude_code_session(path):
            if message.type == "tool":
                text = content_text(message.content)
                if text:
                    texts.append(text)
    return texts


def altered(texts: list[str]) -> dict[str, object]:
    """How many texts the default fence and the opt-in rewriting change, and their speed."""
    fence = Fence(BOUNDARY)
    started = time.process_time()
    fenced = sum(neutralize_tags(t, BOUNDARY) != t for t in texts)
    elapsed = time.process_time() - started
    rewritten = sum(sanitize_untrusted(t) != t for t in texts)
    chars = sum(len(t) for t in texts)
    items = [fence(ContextPacket(t, type="tool", source="t")) for t in texts[:50]]
    assert all(BOUNDARY not in item for item in items)
    return {
        "tool_results": len(texts),
        "altered_by_fence": fenced,
        "altered_by_opt_in_rewriting": rewritten,
        "fence_cpu_ms_per_10k_chars": round(elapsed * 1000 / max(chars, 1) * 10_000, 3),
    }


def neutralized(item: str) -> bool:
    """Whether no fence tag or boundary copy is left, as the look-alike view sees it."""
    return not tag_spans(item, BOUNDARY)


def survivors() -> tuple[int, int, list[str]]:
    """Look-alikes of the closing tag that survive inside the fence."""
    corpus = json.loads(LOOKALIKES.read_text(encoding="utf-8"))
    left = []
    for case in corpus:
        text = f"before {case['text'].replace('{B}', BOUNDARY)} after"
        if not neutralized(neutralize_tags(text, BOUNDARY)):
            left.append(case["name"])
    return len(corpus) - len(left), len(corpus), left


def main() -> None:
    """Print the figures."""
    texts = tool_outputs()
    if texts:
        print(json.dumps(altered(texts), indent=2))
    else:
        print("Claude Code sessions not found (set LGC_DATA_DIR)")
    stopped, total, left = survivors()
    print(f"closing-tag look-alikes neutralized: {stopped}/{total}; surviving: {left}")


if __name__ == "__main__":
    main()
