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

Anthropic caches differently, and `Meter.measure_breakpoints` models it: a prefix is
written only up to a block marked `cache_control` (a breakpoint), and a request reads a
prefix only where one of its breakpoints, or one of the 20 blocks before it, ends a
prefix written earlier. Every configuration gets the marks Anthropic's own LangChain
middleware (`AnthropicPromptCachingMiddleware`) sets: the tool list, the system message
and the request's last block; a configuration may add its own marks to messages
(`request_chunks` finds and strips them, so the other meters see the same bytes).
Priced: read tokens at `cached_input`, tokens up to the last breakpoint not read at
`cache_write`, the rest at `input`. Here a block is one message (a message's content
blocks are not counted apart), and there is no minimum cacheable length or lifetime.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import tiktoken
from langchain_core.messages import BaseMessage
from langchain_openai import ChatOpenAI

from langgraph_context.context.breakpoints import has_cache_mark
from langgraph_context.tokens.counter import DEFAULT_ENCODING

PRICES = Path(__file__).with_name("prices.json")
PER_TOKENS = 1_000_000
_SYSTEM_ROLES = frozenset({"system", "developer"})
LOOKBACK_BLOCKS = 20  # Anthropic checks a breakpoint and the blocks before it, about 20

Encode = Callable[[str], Sequence[Any]]


def load_prices(path: Path = PRICES) -> dict[str, Any]:
    """Read the price tables (USD per 1M tokens) and the date they were read."""
    return json.loads(path.read_text())


def price(tokens: int, cached: int, table: dict[str, float]) -> float:
    """Price one call's input: `cached` tokens at the cached rate, the rest at the write rate."""
    return ((tokens - cached) * table["cache_write"] + cached * table["cached_input"]) / PER_TOKENS


_PAYLOAD = ChatOpenAI(model="gpt-4.1", api_key="offline-no-calls")  # type: ignore[arg-type]


def unmarked(message: BaseMessage) -> tuple[BaseMessage, bool]:
    """`message` without `cache_control` marks, and whether it carried one.

    A content that is one plain text block is metered as its string, marked or not
    (a mark turns a string into such a block), so a mark never changes the bytes.
    """
    content = message.content
    if not isinstance(content, list):
        return message, False
    had = has_cache_mark(message)
    blocks = [
        {k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
        for b in content
    ]
    lone = blocks[0] if len(blocks) == 1 else None
    if isinstance(lone, dict) and lone.get("type") == "text" and set(lone) == {"type", "text"}:
        return message.model_copy(update={"content": lone["text"]}), had
    return (message.model_copy(update={"content": blocks}) if had else message), had


def request_chunks(
    messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]]
) -> tuple[list[str], list[bool], list[bool]]:
    """Serialize a request: the tool list, then each message, as compact JSON strings.

    Returns:
        The chunks; per chunk, whether it is a system message (the tool chunk is
        counted as system: it is the fixed head of every request); and per chunk,
        whether its message carried a `cache_control` mark (stripped from the chunk).
    """
    stripped = [unmarked(m) for m in messages]
    messages = [m for m, _ in stripped]
    # langchain-openai's own request conversion, the dicts its client sends
    payload = _PAYLOAD._get_request_payload(list(messages))
    dumps = lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    chunks = [dumps(tools)] if tools else []
    system = [True] if tools else []
    marked = [False] if tools else []
    items = payload["messages"]
    flags = [m for _, m in stripped] if len(items) == len(stripped) else [False] * len(items)
    for item, flag in zip(items, flags, strict=True):
        chunks.append(dumps(item))
        system.append(item.get("role") in _SYSTEM_ROLES)
        marked.append(flag)
    return chunks, system, marked


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
        self._written: set[bytes] = set()

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

    def measure_breakpoints(
        self, chunks: list[str], system: list[bool], marked: list[bool]
    ) -> tuple[int, int]:
        """Anthropic's cache for one request: (tokens read, tokens written).

        Breakpoints: the last leading system chunk (tools and system message), the
        last chunk, and every marked chunk. The read is the longest prefix ending at a
        breakpoint or up to 19 chunks before one that an earlier request wrote; the
        write is what lies between the read and the last breakpoint. Each breakpoint's
        prefix is remembered as written.
        """
        sizes = [len(self.tokens(c)) for c in chunks]
        ends = list(itertools.accumulate(sizes))
        digest = hashlib.sha256()
        prefixes = []
        for chunk in chunks:
            digest.update(chunk.encode())
            digest.update(b"\x00")
            prefixes.append(digest.copy().digest())
        lead = next((i for i, s in enumerate(system) if not s), len(chunks))
        points = {i for i, m in enumerate(marked) if m}
        if lead:
            points.add(lead - 1)
        if chunks:
            points.add(len(chunks) - 1)
        read = 0
        for point in sorted(points, reverse=True):
            for j in range(point, max(-1, point - LOOKBACK_BLOCKS), -1):
                if prefixes[j] in self._written:
                    read = max(read, ends[j])
                    break
        last = max(points, default=-1)
        written = max(0, (ends[last] if last >= 0 else 0) - read)
        self._written.update(prefixes[i] for i in points)
        return read, written


def price_breakpoints(tokens: int, read: int, written: int, table: dict[str, float]) -> float:
    """Price one call under Anthropic's cache: read, written and plain input tokens."""
    plain = tokens - read - written
    return (
        read * table["cached_input"] + written * table["cache_write"] + plain * table["input"]
    ) / PER_TOKENS
