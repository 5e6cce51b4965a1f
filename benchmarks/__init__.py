"""Benchmarks: speed and quality measurements, each runnable as `python -m benchmarks.<name>`."""
