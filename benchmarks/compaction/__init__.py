"""Compaction benchmark: ours vs trim_messages, langmem and SummarizationMiddleware."""
