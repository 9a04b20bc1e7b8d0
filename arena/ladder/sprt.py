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
its verdict closer to a coin toss; with none at all it still decides, sooner or later, in most
runs (it answers "which is stronger, if one is by the effect?"; `PairTest` below answers "is
either?").
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
    they are equal (α/2 each way), β that of missing a difference of the effect. Unlike `SPRT`,
    which weighs +δ against −δ and so separates equal bots sooner or later, this test tells
    equal bots apart no more often than α, at the price of more observations when they differ.
    """

    alpha: float = 0.05
    beta: float = 0.05
    effect: float = 0.3
    min_n: int = 6

    def __post_init__(self) -> None:
        SPRT(self.alpha, self.beta, self.effect, self.min_n)  # the same checks

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
