"""Smoke test of `benchmarks.scale`: its three measurements run and report sane figures."""

from __future__ import annotations

from benchmarks.__main__ import BENCHMARKS
from benchmarks.scale.__main__ import (
    build_curve,
    growth_exponent,
    middleware_turns,
    retained_messages,
)


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


def test_growth_exponent_reads_linear_and_quadratic_curves() -> None:
    """The log-log fit gives 1 for time proportional to size and 2 for its square."""
    sizes = [1_000, 3_000, 10_000, 100_000]
    linear = [{"packets": n, "warm_ms": 0.01 * n} for n in sizes]
    square = [{"packets": n, "warm_ms": 1e-6 * n * n} for n in sizes]
    assert abs(growth_exponent(linear, "warm_ms") - 1.0) < 1e-9
    assert abs(growth_exponent(square, "warm_ms") - 2.0) < 1e-9
