"""The sequential test of a pair: is either of two bots stronger than the other by the effect?

Observations are score differences x (A's points − B's, one per deal set: `decide.py` for a
ladder's pairs, `ab.py` for `ladder ab`), taken as normal with mean μ and standard deviation σ,
σ estimated from the observations so far (the usual approximation for an unknown σ). `PairTest`
runs two one-sided SPRTs: μ = 0 against μ = +δ and against μ = −δ, δ = effect · σ, so the effect
is stated in standard deviations and the test needs no knowledge of a variant's point scale.

An earlier test weighed μ = +δ against μ = −δ alone; with no difference it still declared one
bot stronger sooner or later, in most runs (docs/LADDER.md, "Ladders that stop when they know").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PairTest:
    """Two one-sided SPRTs on a pair's observations: "no difference" (μ = 0) against "A is
    stronger by the effect" (μ = +δ), and against "B is" (μ = −δ), δ = effect · σ. For normal
    observations each side's log-likelihood ratio is

        LLR± = ± effect · Σx / σ − n · effect² / 2,

    σ estimated from the observations so far. A side decides its alternative at
    LLR ≥ ln((1 − β) / (α/2)) and rejects it at LLR ≤ ln(β / (1 − α/2)). The verdict is "A" or
    "B" (that side's alternative decided), "equal" (both alternatives rejected: the two are
    closer than the effect), or None. α is the probability of declaring either stronger when
    they are equal (α/2 each way), β that of missing a difference of the effect.
    """

    alpha: float = 0.05
    beta: float = 0.05
    effect: float = 0.3
    min_n: int = 6  # no decision on fewer observations: σ is too uncertain below that

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("alpha and beta are probabilities strictly between 0 and 0.5")
        if self.effect <= 0:
            raise ValueError("the effect is positive")
        if self.min_n < 2:
            raise ValueError("the test needs at least two observations to estimate σ")

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / (self.alpha / 2))

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha / 2))

    def llrs(self, xs: Sequence[float]) -> tuple[float, float]:
        """(LLR of "A stronger" against "equal", LLR of "B stronger" against "equal")."""
        n = len(xs)
        if n < 2:
            return 0.0, 0.0
        mean = sum(xs) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
        drift = n * self.effect**2 / 2
        if sd == 0:  # identical observations: certainty of a difference, or of none
            if not mean:
                return -drift, -drift
            return (math.inf, -math.inf) if mean > 0 else (-math.inf, math.inf)
        signal = self.effect * sum(xs) / sd
        return signal - drift, -signal - drift

    def decide(self, xs: Sequence[float]) -> str | None:
        """ "A", "B", "equal", or None while the evidence lies between the bounds."""
        if len(xs) < self.min_n:
            return None
        a, b = self.llrs(xs)
        if a >= self.upper:
            return "A"
        if b >= self.upper:
            return "B"
        if a <= self.lower and b <= self.lower:
            return "equal"
        return None
