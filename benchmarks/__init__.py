"""Benchmarks: run one with `python -m benchmarks.<name>`, all with `python -m benchmarks`."""
