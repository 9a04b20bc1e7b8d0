"""The sequential test of a pair: is either of two bots stronger than the other by the effect?

Observations are score differences x (A's points − B's, one per deal set: `decide.py` for a
ladder's pairs, `ab.py` for `ladder ab`), taken as normal with mean μ and an unknown standard
deviation σ. The hypotheses are on θ = μ / σ, the difference in standard deviations, so the
effect needs no knowledge of a variant's point scale.

σ is not estimated and plugged in: an earlier version did, and an early underestimate (the first
few deal sets happening to agree) counted as evidence, so equal bots were declared different in
6 to 7% of runs left to run until a verdict, against a nominal 5%. The likelihood ratio here is
that of the *scale-invariant* part of the data (the observations up to a common positive factor,
which carries everything about θ and nothing about σ): Wald's sequential t-test. It depends on
the data only through n and z = Σx / √Σx², and, being an exact likelihood ratio, under θ = 0 it
is a martingale of mean one, so by Ville's inequality it ever reaches 1/a with probability at
most a, however long the test runs and from the first observation on:

    LR_θ = e^(−nθ²/2) · I_n(θz) / I_n(0),   I_n(s) = ∫₀^∞ v^(n−1) e^(−v²/2 + s·v) dv.

"Stronger by the effect" is the composite "θ ≥ effect": the statistic of each side is a mixture
of LR_θ over θ = effect · 2^k (k = 0 … 4; half the weight at the effect itself), still a
martingale under θ = 0, which grows fast when the true difference is many times the effect.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# The alternatives θ = effect · 2^k of each side, and their weights (half on the effect itself:
# the smallest difference that matters is the one a test must not be slow to find).
SCALES = (1.0, 2.0, 4.0, 8.0, 16.0)
WEIGHTS = (0.5, 0.125, 0.125, 0.125, 0.125)


def log_moment(n: int, s: float) -> float:
    """log I_n(s) = log ∫₀^∞ v^(n−1) exp(−v²/2 + s·v) dv, for n ≥ 1.

    Integrated as ∫ exp(n·u − e^(2u)/2 + s·e^u) du (v = e^u): smooth and unimodal on the whole
    line, so the trapezoid rule on a grid around its peak converges geometrically."""
    root = math.sqrt(s * s + 4 * n)
    # where n − v² + s·v = 0; for s < 0 in the form that does not subtract nearly equal numbers
    peak_v = (s + root) / 2 if s >= 0 else 2 * n / (root - s)
    peak_u = math.log(peak_v)
    width = 1 / math.sqrt(peak_v * peak_v + n)  # the peak's standard deviation in u
    low = peak_u - max(8 * width, 20 / n)  # the left tail falls as e^(n·u) only
    high = peak_u + 8 * width
    steps = int((high - low) / (width / 2)) + 1
    step = (high - low) / steps
    top = n * peak_u - peak_v * peak_v / 2 + s * peak_v
    total = 0.0
    for i in range(steps + 1):
        u = low + i * step
        v = math.exp(u)
        total += math.exp(n * u - v * v / 2 + s * v - top)
    return top + math.log(total * step)


def log_moment_at_zero(n: int) -> float:
    """log I_n(0) = log(2^(n/2 − 1) Γ(n/2))."""
    return (n / 2 - 1) * math.log(2) + math.lgamma(n / 2)


def t_llr(n: int, total: float, squares: float, theta: float) -> float:
    """The log-likelihood ratio of θ against 0 of the scale-invariant part of n observations
    with sum `total` and sum of squares `squares` (Wald's sequential t-test)."""
    z = total / math.sqrt(squares) if squares > 0 else 0.0  # all zero: no direction at all
    return -n * theta * theta / 2 + log_moment(n, theta * z) - log_moment_at_zero(n)


def mixture_llr(n: int, total: float, squares: float, effect: float) -> float:
    """The log of the weighted mixture of LR_θ over θ = effect · SCALES."""
    logs = [t_llr(n, total, squares, effect * k) for k in SCALES]
    top = max(logs)
    return top + math.log(sum(w * math.exp(x - top) for w, x in zip(WEIGHTS, logs, strict=True)))


@dataclass(frozen=True)
class PairTest:
    """Two one-sided sequential tests on a pair's observations: "no difference" (θ = 0) against
    "A is stronger by the effect or more" (θ ≥ effect), and against "B is" (θ ≤ −effect).

    Each side's LLR is `mixture_llr` (module docstring). A side decides its alternative at
    LLR ≥ ln((1 − β) / (α/2)): with equal bots it ever gets there with probability at most
    α/2 / (1 − β), whatever the budget. It rejects its alternative at
    LLR ≤ ln(w · β / (1 − α/2)), w = the weight at the effect: the mixture is at least w times
    the LR at the effect, whose inverse is a martingale when the difference is the effect, so a
    difference of the effect is missed with probability at most β / (1 − α/2). The verdict is
    "A" or "B" (that side's alternative decided), "equal" (both rejected: the two are closer
    than the effect), or None. No verdict on fewer than `min_n` observations (the guarantees do
    not need it; it is the least evidence a user will accept).
    """

    alpha: float = 0.05
    beta: float = 0.05
    effect: float = 0.3
    min_n: int = 6

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("alpha and beta are probabilities strictly between 0 and 0.5")
        if self.effect <= 0:
            raise ValueError("the effect is positive")
        if self.min_n < 2:
            raise ValueError("the test needs at least two observations")

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / (self.alpha / 2))

    @property
    def lower(self) -> float:
        return math.log(WEIGHTS[0] * self.beta / (1 - self.alpha / 2))

    def llrs(self, xs: Sequence[float]) -> tuple[float, float]:
        """(LLR of "A stronger" against "equal", LLR of "B stronger" against "equal")."""
        return self.sums_llrs(len(xs), math.fsum(xs), math.fsum(x * x for x in xs))

    def sums_llrs(self, n: int, total: float, squares: float) -> tuple[float, float]:
        """`llrs` of n observations with sum `total` and sum of squares `squares`: all it reads."""
        if n < 2:
            return 0.0, 0.0
        return (
            mixture_llr(n, total, squares, self.effect),
            mixture_llr(n, -total, squares, self.effect),
        )

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
