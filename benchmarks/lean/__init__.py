"""Lean per call: per-call pieces, memory per finished thread, cold builds."""
