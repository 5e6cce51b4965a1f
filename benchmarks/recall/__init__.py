"""Recall benchmarks: facts recoverable after a cut or an eviction, and the needle test."""
