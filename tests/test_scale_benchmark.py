"""Smoke test of `benchmarks.scale`: its three measurements run and report sane figures."""

from __future__ import annotations

from benchmarks.__main__ import BENCHMARKS
from benchmarks.scale.__main__ import build_curve, middleware_turns, retained_messages


def test_scale_benchmark_measures_a_small_curve_and_session() -> None:
    """A two-point build curve, a four-turn session, and no counted message kept alive."""
    curve = build_curve([100, 200], rounds=1)
    assert [row["packets"] for row in curve] == [100, 200]
    assert all(row["warm_ms"] > 0 and row["floor_ms"] > 0 for row in curve)
    assert all(row["x_floor"] == row["warm_ms"] / row["floor_ms"] for row in curve)
    assert curve[1]["slope"] == curve[1]["warm_ms"] / curve[0]["warm_ms"] / 2
    assert len(middleware_turns(4)) == 4
    assert retained_messages() == 0
    assert BENCHMARKS["scale"] == ["--quick"]
