"""A pluggable injection detector: the package's rules plus any scorer you bring.

The rules (`find_injections`) catch the phrasings they were written for; a model
catches others. A `Detector` runs both: the rules, and a scorer that rates a whole
text. Any of these is a scorer:

* a callable `(text) -> float | bool` (a probability, a logit with your own
  threshold, or a verdict);
* an object with a `score(text) -> float` method;
* a scikit-learn style classifier over raw text with `predict_proba([text])`
  (a `Pipeline` of a vectorizer and a classifier); the last column is the score.

Pass a `Detector` (or a bare scorer) wherever the package detects: `find_injections`,
`sanitize_untrusted`, `wrap_untrusted`/`Fence`, `ContextBuilder(detector=...)`,
`render_pinned`, `create_hot_issue_node` and the output guard. Detection stays a
signal: untrusted text is fenced whatever the detector says.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from langgraph_context._memo import SizedMemo
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError

__all__ = [
    "Detector",
    "DetectorLike",
    "InjectionScorer",
    "ProbabilityClassifier",
    "ScoringModel",
    "as_detector",
]

DEFAULT_SCORE_THRESHOLD = 0.5
"""A text whose score reaches this is flagged (for probabilities and verdicts)."""

# Scores are remembered per detector by text (bounded by the characters held): the
# builder shows the same tool results and notes on every call.
_MEMO_CHARS = 4_000_000


@runtime_checkable
class ScoringModel(Protocol):
    """An object that rates one text: higher means more likely injected instructions."""

    def score(self, text: str, /) -> float:
        """The text's score."""
        ...


@runtime_checkable
class ProbabilityClassifier(Protocol):
    """A scikit-learn style classifier over raw texts (e.g. a vectorizer pipeline)."""

    def predict_proba(self, texts: list[str], /) -> Any:
        """One row of class probabilities per text; the last column is "injection"."""
        ...


InjectionScorer = Callable[[str], float | bool] | ScoringModel | ProbabilityClassifier
"""Anything `Detector` accepts as its scorer."""


def _score_function(scorer: InjectionScorer) -> Callable[[str], Any]:
    """The scorer as a plain function of one text (its raw answer, unchecked)."""
    if isinstance(scorer, ProbabilityClassifier):
        return lambda text: scorer.predict_proba([text])[0][-1]
    if isinstance(scorer, ScoringModel):
        return scorer.score
    if callable(scorer):
        return scorer
    msg = (
        "scorer must be a callable (text) -> float | bool, an object with score(text), "
        f"or a classifier with predict_proba([text]); got {type(scorer).__name__}"
    )
    raise InvalidTypeError(msg)


@dataclass(frozen=True)
class Detector:
    """Injection detection: the package's rules, a scorer, or both.

    The scorer is called once per distinct text (its answers are remembered, least
    recently used out first), so it must be deterministic.

    Attributes:
        scorer: Rates a whole text (see `InjectionScorer`); `None` for rules only.
        threshold: A score at or above it flags the text (`True` counts as 1.0).
        rules: Also run the package's phrase and marker rules (`find_injections`).

    Raises:
        TypeError: If `scorer` is not a scorer, or `threshold` is not a number.
        ValueError: If `threshold` is not finite, or neither rules nor a scorer is on.

    Example:
        >>> detector = Detector(lambda text: "wire the funds" in text)
        >>> detector.flags("Please wire the funds today."), detector.flags("Lunch at noon.")
        (True, False)
        >>> detector.score("Lunch at noon.")
        0.0
    """

    scorer: InjectionScorer | None = None
    threshold: float = DEFAULT_SCORE_THRESHOLD
    rules: bool = True
    _memo: SizedMemo[str, float] = field(
        default_factory=lambda: SizedMemo(_MEMO_CHARS),
        init=False,
        repr=False,
        compare=False,
        hash=False,
    )

    def __post_init__(self) -> None:
        if self.scorer is not None:
            _score_function(self.scorer)
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)):
            msg = f"threshold must be a number, got {self.threshold!r}"
            raise InvalidTypeError(msg)
        if not math.isfinite(self.threshold):
            msg = f"threshold must be finite, got {self.threshold!r}"
            raise InvalidArgumentError(msg)
        if not isinstance(self.rules, bool):
            msg = f"rules must be a bool, got {self.rules!r}"
            raise InvalidTypeError(msg)
        if not self.rules and self.scorer is None:
            msg = "a Detector needs rules=True or a scorer"
            raise InvalidArgumentError(msg)

    def score(self, text: str) -> float | None:
        """Return the scorer's rating of `text` (`None` without a scorer).

        Raises:
            TypeError: If the scorer answers with something other than a bool or a
                finite number (the message names the scorer and the answer).
        """
        if self.scorer is None:
            return None
        known = self._memo.get(text)
        if known is not None:
            return known
        raw = _score_function(self.scorer)(text)
        if hasattr(raw, "item") and not isinstance(raw, (bool, int, float)):
            raw = raw.item()  # a NumPy scalar
        if isinstance(raw, bool):
            return 1.0 if raw else 0.0
        if not isinstance(raw, (int, float)) or not math.isfinite(raw):
            msg = f"scorer {self.scorer!r} must return a bool or a finite number, got {raw!r}"
            raise InvalidTypeError(msg)
        value = float(raw)
        self._memo.put(text, value, size=64 + len(text))
        return value

    def flags(self, text: str) -> bool:
        """Whether the scorer rates `text` at or above the threshold (never without one)."""
        value = self.score(text)
        return value is not None and value >= self.threshold


DetectorLike = Detector | InjectionScorer
"""A `Detector`, or a bare scorer (wrapped as `Detector(scorer)`: rules plus the scorer)."""


def as_detector(detector: DetectorLike | None) -> Detector | None:
    """Return `detector` as a `Detector` (a bare scorer gets the rules beside it).

    Args:
        detector: A `Detector`, a scorer, or `None`.

    Returns:
        The `Detector`, or `None` for `None` (the rules alone, as before).

    Raises:
        TypeError: If `detector` is neither.

    Example:
        >>> as_detector(lambda text: 0.9).rules
        True
    """
    if detector is None or isinstance(detector, Detector):
        return detector
    return Detector(detector)
