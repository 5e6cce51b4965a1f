"""What depends on the model's provider: its prompt cache, measured, and how a model is given.

`PromptCacheMiddleware` reads the cache figures each provider reports, keeps a
bounded per-thread record with the hit rate and its cost at a `Prices` table, and
sets OpenAI's `prompt_cache_key`. `ModelFactory` and `ContextSettings` are how the
prebuilt agents take a model that is chosen per run.
"""

from langgraph_context.providers.models import ContextSettings, ModelFactory
from langgraph_context.providers.prompt_cache import (
    CacheCall,
    CacheUsage,
    Prices,
    PromptCacheMiddleware,
    cache_cost,
    cache_hit_rate,
)

__all__ = [
    "CacheCall",
    "CacheUsage",
    "ContextSettings",
    "ModelFactory",
    "Prices",
    "PromptCacheMiddleware",
    "cache_cost",
    "cache_hit_rate",
]
