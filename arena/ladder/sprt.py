"""A sequential probability ratio test between "A is stronger" and "B is stronger".

Observations are score differences x = (A's points − B's points) on one deal, taken as normal
with mean μ and standard deviation σ. The two hypotheses are μ = +δ (A stronger) and μ = −δ
(B stronger), with δ = effect · σ, so the effect is stated in standard deviations and the test
needs no knowledge of a variant's point scale. For normal observations the log-likelihood
ratio of the two is

    LLR = 2δ · Σx / σ² = 2 · effect · Σx / σ,

with σ estimated from the observations so far (the usual approximation for an unknown σ).
Wald's bounds: decide "A" when LLR ≥ ln((1 − β) / α), "B" when LLR ≤ ln(β / (1 − α)).

α is the probability of deciding "A" when in truth B is stronger by the effect, β that of
deciding "B" when A is. A true difference smaller than the effect makes the test slower and
its verdict closer to a coin toss; with none at all it ends at the limit, undecided.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SPRT:
    alpha: float = 0.05
    beta: float = 0.05
    effect: float = 0.3
    min_n: int = 8  # no decision on fewer observations: σ is too uncertain below that

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("alpha and beta are probabilities strictly between 0 and 0.5")
        if self.effect <= 0:
            raise ValueError("the effect is positive")
        if self.min_n < 2:
            raise ValueError("the test needs at least two observations to estimate σ")

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    def llr(self, xs: Sequence[float]) -> float:
        n = len(xs)
        if n < 2:
            return 0.0
        mean = sum(xs) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
        if sd == 0:  # identical observations: certainty either way, or none
            return math.copysign(math.inf, mean) if mean else 0.0
        return 2 * self.effect * sum(xs) / sd

    def decide(self, xs: Sequence[float]) -> str | None:
        """The verdict so far: "A", "B", or None while the evidence lies between the bounds."""
        if len(xs) < self.min_n:
            return None
        llr = self.llr(xs)
        if llr >= self.upper:
            return "A"
        if llr <= self.lower:
            return "B"
        return None
