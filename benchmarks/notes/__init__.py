"""Benchmark: note search latency at 1,000 and 10,000 notes; terminal grep over 10,000 files."""
