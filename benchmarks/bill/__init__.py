"""The bill benchmark: what prompt caching makes each configuration cost."""
