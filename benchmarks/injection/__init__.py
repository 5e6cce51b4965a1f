"""Prompt-injection defense: corpus detection and false-positive rates, real-output scan."""
