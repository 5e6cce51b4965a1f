"""Seeded random messy histories (the property tests' shapes, at benchmark scale)."""

from __future__ import annotations

import random

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

_WORDS = ["lib/app.ex", "error", "ok", "run", "test", "flight", "HAT136", "the", "a", "fix"]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 60)))


def _content(rng: random.Random) -> str | list:
    roll = rng.random()
    if roll < 0.1:
        return ""
    if roll < 0.2:
        blocks: list = [{"type": "text", "text": _text(rng)}]
        if rng.random() < 0.5:
            blocks.append({"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}})
        return blocks
    return _text(rng)


def generate(seed: int) -> list[BaseMessage]:
    """One history: parallel calls, repeated ids, missing and orphan results, systems."""
    rng = random.Random(seed)
    out: list[BaseMessage] = []
    if rng.random() < 0.8:
        out.append(SystemMessage("rules " + _text(rng)))
    counter = 0
    for _ in range(rng.randint(1, 40)):
        kind = rng.choices(["human", "ai", "calls", "orphan", "system"], [3, 2, 5, 0.05, 0.2])[0]
        if kind == "human":
            out.append(HumanMessage(_content(rng), id=f"m{counter}"))
        elif kind == "ai":
            out.append(AIMessage(_content(rng), id=f"m{counter}"))
        elif kind == "system":
            out.append(SystemMessage("mid rules", id=f"m{counter}"))
        elif kind == "orphan":
            out.append(ToolMessage(_text(rng), tool_call_id="ghost", id=f"m{counter}"))
        else:
            ids = rng.sample(["a", "b", "c", "d", "e"], rng.randint(1, 3))  # ids repeat
            calls = [{"name": "tool", "args": {"q": _text(rng)}, "id": i} for i in ids]
            out.append(AIMessage(_content(rng), tool_calls=calls, id=f"m{counter}"))
            for i in ids:
                counter += 1
                if rng.random() < 0.98:
                    out.append(ToolMessage(_content(rng), tool_call_id=i, id=f"m{counter}"))
        counter += 1
    return out
