"""An OpenAI-compatible Chat Completions server on 127.0.0.1 for wire-level tests.

It replays scripted replies in the exact wire format (a JSON body, or server-sent
events with tool-call deltas when the request asks for `stream: true`), records every
request body, and can answer with the provider errors real integrations meet: a 400
`context_length_exceeded`, a 429 with `retry-after`, a 500, a reply slower than the
client's timeout, an empty reply and tool-call arguments that are not valid JSON.

Its usage reports `prompt_tokens_details.cached_tokens` as OpenAI's prompt cache
does: the prefix a request shares with the previous one (none when the tools
changed), in 128-token steps, nothing below 1,024 tokens (a token is four characters here).

    with WireServer() as server:
        server.script(reply("hello"))
        model = server.chat_model()
        model.invoke("hi")
        server.requests[0]["messages"]
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langchain_openai import ChatOpenAI

MODEL = "gpt-wire-test"


@dataclass(frozen=True)
class Call:
    """One tool call of a scripted reply; `arguments` is sent verbatim (may be broken)."""

    name: str
    arguments: str
    id: str


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a completion, or an HTTP error, or a delay past the timeout."""

    content: str | None = None
    calls: tuple[Call, ...] = ()
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def reply(content: str | None = None, *calls: Call) -> Reply:
    """A completion: text (`None` is sent as JSON `null`) and tool calls."""
    return Reply(content=content, calls=tuple(calls))


def tool(name: str, args: dict[str, Any] | str, call_id: str) -> Call:
    """A tool call; a `str` `args` is sent as is (use it for malformed JSON)."""
    return Call(name, args if isinstance(args, str) else json.dumps(args), call_id)


def context_length_exceeded() -> Reply:
    """The 400 a provider answers when the prompt is longer than the model's window."""
    message = "This model's maximum context length is 128000 tokens."
    return Reply(
        status=400,
        error={
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        },
    )


def rate_limited(
    retry_after: str | None = "0",
    *,
    retry_after_ms: str | None = None,
    message: str = "Rate limit reached",
) -> Reply:
    """A 429 with a `retry-after` header (seconds), `retry-after-ms`, or neither."""
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    return Reply(
        status=429,
        error={"message": message, "type": "requests", "code": "rate_limit_exceeded"},
        headers=headers,
    )


def server_error() -> Reply:
    """A 500."""
    return Reply(status=500, error={"message": "The server had an error", "type": "server_error"})


def slow(seconds: float, content: str = "too late") -> Reply:
    """A completion sent only after `seconds` (longer than the client's timeout)."""
    return Reply(content=content, delay=seconds)


def pairing_error(messages: Sequence[dict[str, Any]]) -> str | None:
    """What OpenAI rejects in a request's tool-call pairing, or `None` when it is valid.

    Every assistant `tool_calls` entry must be answered by a `tool` message right
    after it (one per id), and a `tool` message must answer a call just made.
    """
    open_ids: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_ids:
                return f"messages[{i}]: a 'tool' message must answer a preceding 'tool_calls'"
            open_ids.remove(message["tool_call_id"])
            continue
        if open_ids:
            return f"messages[{i}]: tool_call_ids did not have response messages: {open_ids}"
        if role == "assistant":
            open_ids = [c["id"] for c in message.get("tool_calls") or []]
    if open_ids:
        return f"tool_call_ids did not have response messages: {open_ids}"
    return None


def _message(r: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.content, "refusal": None}
    if r.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in r.calls
        ]
    return message


CACHE_MIN_TOKENS = 1024
CACHE_STEP_TOKENS = 128


def prompt_text(body: dict[str, Any]) -> str:
    """The part of a request a prompt cache keys on, as one text: the tools (a change
    there misses everything), then the messages as `prompt_tokens` counts them."""
    return json.dumps(body.get("tools", [])) + "\n" + json.dumps(body.get("messages", []))


def cached_tokens(previous: str | None, current: str) -> int:
    """Tokens of `current` a prefix cache holding `previous` serves, as OpenAI rounds them."""
    if previous is None or previous.split("\n", 1)[0] != current.split("\n", 1)[0]:
        return 0
    same = -len(current.split("\n", 1)[0]) - 1  # the tools are not counted as prompt
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        same += 1
    tokens = same // 4
    return 0 if tokens < CACHE_MIN_TOKENS else tokens - tokens % CACHE_STEP_TOKENS


def _usage(body: dict[str, Any], r: Reply, cached: int = 0) -> dict[str, Any]:
    prompt = len(json.dumps(body.get("messages", []))) // 4
    completion = len(r.content or "") // 4 + sum(len(c.arguments) for c in r.calls) // 4
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": min(cached, prompt)},
    }


def completion(body: dict[str, Any], r: Reply, n: int, cached: int = 0) -> dict[str, Any]:
    """The non-streamed `chat.completion` object of a reply."""
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", MODEL),
        "choices": [
            {
                "index": 0,
                "message": _message(r),
                "logprobs": None,
                "finish_reason": "tool_calls" if r.calls else "stop",
            }
        ],
        "usage": _usage(body, r, cached),
        "system_fingerprint": "fp_wire",
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def chunks(body: dict[str, Any], r: Reply, n: int, cached: int = 0) -> Iterator[dict[str, Any]]:
    """The `chat.completion.chunk` objects of a streamed reply, as OpenAI sends them.

    The role comes first, then content in small pieces, then each tool call: a first
    delta with its index, id and name and empty arguments, then argument fragments
    carrying only the index. The finish reason closes the choice; a usage-only chunk
    follows when `stream_options.include_usage` is set.
    """
    base = {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": body.get("model", MODEL),
        "system_fingerprint": "fp_wire",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice]}

    yield chunk({"role": "assistant", "content": "" if r.content is not None else None})
    if r.content:
        for piece in _pieces(r.content, 7):
            yield chunk({"content": piece})
    for index, call in enumerate(r.calls):
        head = {"index": index, "id": call.id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        for piece in _pieces(call.arguments, 5):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if r.calls else "stop")
    if (body.get("stream_options") or {}).get("include_usage"):
        yield {**base, "choices": [], "usage": _usage(body, r, cached)}


class WireServer:
    """A scripted Chat Completions endpoint in a thread; use as a context manager.

    Attributes:
        requests: Every request body received, parsed, in order (errors included).
        headers: The headers of each request, in the same order.
        times: When each request arrived (`time.monotonic()`), in the same order.
        cached: The `cached_tokens` reported for each answered request, in order.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.cached: list[int] = []
        self._last_prompt: str | None = None
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        """The `base_url` to give an OpenAI client."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one (a 500 when none is left)."""
        with self._lock:
            self._replies.extend(replies)

    def script_first(self, r: Reply) -> None:
        """Put a reply back at the front of the queue (the request was refused)."""
        with self._lock:
            self._replies.insert(0, r)

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        with self._lock:
            return len(self._replies)

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[Reply, int]:
        """Record a request and return its reply and sequence number."""
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.times.append(time.monotonic())
            n = len(self.requests)
            if not self._replies:
                return Reply(status=500, error={"message": "no scripted reply left"}), n
            return self._replies.pop(0), n

    def cache(self, body: dict[str, Any]) -> int:
        """Serve `body` from the prefix cache of the previous answered request."""
        text = prompt_text(body)
        with self._lock:
            found = cached_tokens(self._last_prompt, text)
            self._last_prompt = text
            self.cached.append(found)
        return found

    def chat_model(self, **kwargs: Any) -> ChatOpenAI:
        """A real `ChatOpenAI` client pointed at this server (no retries unless asked)."""
        options: dict[str, Any] = {
            "model": MODEL,
            "base_url": self.base_url,
            "api_key": "sk-wire-test",
            "max_retries": 0,
            "timeout": 10,
        }
        options.update(kwargs)
        return ChatOpenAI(**options)

    def messages(self, n: int = -1) -> list[dict[str, Any]]:
        """The `messages` of request `n` (default: the latest)."""
        return list(self.requests[n]["messages"])

    def __enter__(self) -> WireServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler(server: WireServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Keep the test output quiet."""

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            r, n = server.next_reply(body, headers)
            invalid = pairing_error(body.get("messages", []))
            if invalid is not None:  # as OpenAI does, before any scripted reply is used
                server.script_first(r)
                r = Reply(status=400, error={"message": invalid, "type": "invalid_request_error"})
            if r.delay:
                time.sleep(r.delay)
            if r.status != 200:
                self._send(r.status, {"error": r.error}, r.headers)
            elif body.get("stream"):
                self._stream(body, r, n, server.cache(body))
            else:
                self._send(200, completion(body, r, n, server.cache(body)), {})

        def _send(self, status: int, payload: Any, extra: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any], r: Reply, n: int, cached: int) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for item in chunks(body, r, n, cached):
                self.wfile.write(f"data: {json.dumps(item)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def tool_names(body: dict[str, Any]) -> list[str]:
    """Names of the tools a request offered."""
    return [t["function"]["name"] for t in body.get("tools", [])]


def schema_texts(bodies: Sequence[dict[str, Any]]) -> str:
    """Every tool schema sent in `bodies`, as one JSON text (for leak checks)."""
    return json.dumps([t for b in bodies for t in b.get("tools", [])])
