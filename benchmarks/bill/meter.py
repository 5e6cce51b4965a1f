"""What one model call costs: its request as tokens, the cached prefix, the price.

A request is serialized the way the OpenAI chat API receives it: langchain-openai's
own payload conversion (`ChatOpenAI._get_request_payload`) turns the messages into
chat-completions dicts, and the bound tools are converted with
`convert_to_openai_tool`. The request is a list of *chunks*: the tool list first (the
provider renders tool definitions ahead of the messages), then one chunk per message,
each the compact JSON of its dict. Each chunk is tokenized on its own with the
package's offline cl100k encoding (as a chat template does, messages are separated by
special tokens, so a token never spans two messages) and the request's tokens are the
chunks' tokens in order.

The cached part of a call is the exact token-level common prefix of its token sequence
and the previous call's. No minimum cacheable length (OpenAI: 1,024 tokens) and no
block rounding (128 tokens) are applied.

Price of a call under a table: uncached tokens at `cache_write` (the input price where
writing the cache costs nothing extra), cached tokens at `cached_input`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import tiktoken
from langchain_core.messages import BaseMessage
from langchain_openai import ChatOpenAI

from langgraph_context.tokens import DEFAULT_ENCODING

PRICES = Path(__file__).with_name("prices.json")
PER_TOKENS = 1_000_000
_SYSTEM_ROLES = frozenset({"system", "developer"})

Encode = Callable[[str], Sequence[Any]]


def load_prices(path: Path = PRICES) -> dict[str, Any]:
    """Read the price tables (USD per 1M tokens) and the date they were read."""
    return json.loads(path.read_text())


def price(tokens: int, cached: int, table: dict[str, float]) -> float:
    """Price one call's input: `cached` tokens at the cached rate, the rest at the write rate."""
    return ((tokens - cached) * table["cache_write"] + cached * table["cached_input"]) / PER_TOKENS


_PAYLOAD = ChatOpenAI(model="gpt-4.1", api_key="offline-no-calls")  # type: ignore[arg-type]


def request_chunks(
    messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]]
) -> tuple[list[str], list[bool]]:
    """Serialize a request: the tool list, then each message, as compact JSON strings.

    Returns:
        The chunks and, per chunk, whether it is a system message (the tool chunk is
        counted as system: it is the fixed head of every request).
    """
    # langchain-openai's own request conversion, the dicts its client sends
    payload = _PAYLOAD._get_request_payload(list(messages))
    dumps = lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    chunks = [dumps(tools)] if tools else []
    system = [True] if tools else []
    for item in payload["messages"]:
        chunks.append(dumps(item))
        system.append(item.get("role") in _SYSTEM_ROLES)
    return chunks, system


def common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Length of the common prefix of two sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class Meter:
    """Tokenize requests (memoized per chunk) and compare each with the previous one.

    Args:
        encode: Text to tokens; default the package's offline cl100k encoding.
    """

    def __init__(self, encode: Encode | None = None) -> None:
        if encode is None:
            encoding = tiktoken.get_encoding(DEFAULT_ENCODING)
            encode = lambda text: encoding.encode(text, disallowed_special=())  # noqa: E731
        self._encode = encode
        self._memo: dict[str, Sequence[Any]] = {}
        self._previous: list[str] = []

    def tokens(self, chunk: str) -> Sequence[Any]:
        """The tokens of one chunk."""
        hit = self._memo.get(chunk)
        if hit is None:
            hit = self._memo[chunk] = self._encode(chunk)
        return hit

    def measure(self, chunks: list[str]) -> tuple[int, int]:
        """Return (tokens, tokens repeating the previous request's prefix); remember `chunks`."""
        total = sum(len(self.tokens(c)) for c in chunks)
        cached = 0
        for old, new in zip(self._previous, chunks, strict=False):
            if old == new:
                cached += len(self.tokens(new))
                continue
            cached += common_prefix(self.tokens(old), self.tokens(new))
            break
        self._previous = chunks
        return total, cached
