"""Tokens sent per model call over a real session, with and without compaction."""
