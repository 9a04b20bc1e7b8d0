"""A strong reference bot: it searches over the cards it cannot see (PIMC).

    python -m arena_bot.search_bot [--think-ms MS] [--iterations N] [--address HOST:PORT] [--token TOKEN]

At each decision with more than one legal action it samples full deals consistent with what its
seat has been sent, plays every legal action out to the end of the deal in each of them with a
cheap rollout policy, and picks the action with the best average points (`arena.search`, the
layer `arena replay analyze` uses too). It needs the `arena` package beside the SDK
(`pip install -e . -e clients/python` in the project).

* Information: the sampler is fed the seat's `View` and legal actions from the decision request,
  turned into the observation dict the server built them from (`observation`): never anything
  the seat was not sent.
* Budget: `--think-ms` (env ``ARENA_THINK_MS``, default 1000) per decision at most, less when the
  clock is short: the request's `time_limit_ms` (per-decision limit plus bank) and `bank_ms` give
  the time left, and the bot keeps a margin and spreads the bank over the decisions left.
  `--iterations N` (env ``ARENA_ITERATIONS``) stops after N sampled deals instead, which makes the
  bot deterministic for a seed whatever the machine's speed (the clock still caps it).
* Seed: ``ARENA_BOT_SEED`` (and each match's seed in a persistent process); each decision's search
  is seeded from it and the decision's place in the match.

Subclass `SearchBot` to change the budget (`budget_ms`), the rollout policy (`policy`) or the
choice among the estimates (`choose`).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Sequence

from arena.search import Evaluation, NoConsistentDeal, Policy, evaluate, greedy

from arena_bot import heuristic_bot
from arena_bot.match import Bot, action_text
from arena_bot.observation import request_observation as observation
from arena_bot.sdk import main
from arena_bot.v1 import arena_pb2

DEFAULT_THINK_MS = 1000.0
MARGIN_MS = 150.0  # kept for the answer's way back and the process's own hiccups
DECISIONS_AHEAD = 30  # the bank is spread over about this many more decisions
CONFIDENCE = 1.0  # standard errors by which the search must beat the heuristic's choice


def seed_from_env() -> str:
    return os.environ.get("ARENA_BOT_SEED", "")


class SearchBot(Bot):
    """PIMC over the hidden cards; `decide` answers a `DecisionRequest`."""

    name = "search"
    version = "1"

    def __init__(
        self,
        think_ms: float = DEFAULT_THINK_MS,
        iterations: int | None = None,
        seed: str | None = None,
        policy: Policy = greedy,
        confidence: float = CONFIDENCE,
    ) -> None:
        self.think_ms = think_ms
        self.confidence = confidence
        self.iterations = iterations
        self.seed = seed if seed is not None else seed_from_env()
        self.policy = policy
        self.last: Evaluation | None = None  # the estimate behind the last answer (None: forced)
        self.fallbacks = 0  # answers the heuristic gave because no consistent deal was found
        self.searched: list[float] = []  # seconds of each searched decision of the match
        self.increment_ms = 0  # added to the bank after every answer (the match's time control)

    def on_match_start(self, start: arena_pb2.MatchStart) -> None:
        self.searched = []
        self.increment_ms = start.time_control.increment_ms

    def on_match_end(self, end: arena_pb2.MatchEnd) -> None:
        """One line on stderr (the bot's log): the time its searched decisions took."""
        n = len(self.searched)
        if n:
            mean, longest = 1000 * sum(self.searched) / n, 1000 * max(self.searched)
            line = f"search: {n} decisions searched, {mean:.0f} ms mean, {longest:.0f} ms max"
            print(line, file=sys.stderr)

    def reseed(self) -> None:
        """Take the seed of the next match from ``ARENA_BOT_SEED`` (a persistent process)."""
        self.seed = seed_from_env()

    def budget_ms(self, request: arena_pb2.DecisionRequest) -> float:
        """Time to think: `think_ms`, less what the clock cannot spare.

        The request's `time_limit_ms` is the per-decision limit plus the bank (`bank_ms`); the
        increment (from `MatchStart`) comes back after every answer, so most of it may be spent."""
        limit = request.time_limit_ms
        if limit <= 0:
            return self.think_ms  # a tool asking without a clock
        per_decision = max(0, limit - request.bank_ms)
        spare = 0.6 * per_decision + request.bank_ms / DECISIONS_AHEAD + 0.8 * self.increment_ms
        return max(1.0, min(self.think_ms, spare - MARGIN_MS, limit - 2 * MARGIN_MS))

    def decision_seed(self, request: arena_pb2.DecisionRequest) -> int:
        """A seed of this decision: the bot's seed and the decision's place in the match."""
        view = request.view
        key = f"{self.seed}|{request.deal}|{view.seat}|{view.phase}|{view.trick_number}|{len(view.hand)}"
        key += f"|{len(view.trick.cards)}|{len(view.declarations)}|{len(view.round_answers)}"
        return random.Random(key).getrandbits(63)

    def choose(self, evaluation: Evaluation, default: str) -> str:
        """The search's best action when it beats `default` (the heuristic's choice) by more than
        `confidence` standard errors of the paired difference, else `default`: with few samples
        the estimates are noisy, and a noisy argmax is worse than a sound rule of thumb."""
        best = evaluation.best
        if best == default or default not in evaluation.outcomes:
            return best
        gain, error = evaluation.advantage(best, default)
        return best if gain > self.confidence * error else default

    def decide(self, request: arena_pb2.DecisionRequest) -> arena_pb2.Action:
        started = time.perf_counter()
        legal = list(request.legal_actions)
        if not legal:
            raise ValueError(f"request {request.request_id} offers no legal action")
        if len(legal) == 1:
            self.last = None
            return legal[0]
        view = observation(request)
        budget = self.budget_ms(request) - (time.perf_counter() - started) * 1000.0
        try:
            self.last = evaluate(
                view,
                think_ms=max(1.0, budget),
                iterations=self.iterations,
                seed=self.decision_seed(request),
                policy=self.policy,
            )
        except NoConsistentDeal as error:  # never for a view the server sent; answer anyway
            print(f"search: {error}; the heuristic answers", file=sys.stderr)
            self.fallbacks += 1
            return heuristic_bot.decide(request)
        default = action_text(heuristic_bot.decide(request))
        self.searched.append(time.perf_counter() - started)
        choice = self.choose(self.last, default)
        return next(a for a in legal if action_text(a) == choice)


def run(argv: Sequence[str] | None = None) -> None:
    """Console entry point: one seat with this bot (`--think-ms`, `--iterations`, the SDK's options)."""
    parser = argparse.ArgumentParser(add_help=False)
    think_ms = float(os.environ.get("ARENA_THINK_MS", DEFAULT_THINK_MS))
    parser.add_argument("--think-ms", type=float, default=think_ms)
    iterations = os.environ.get("ARENA_ITERATIONS")
    parser.add_argument("--iterations", type=int, default=int(iterations) if iterations else None)
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    sys.argv = [sys.argv[0], *rest]
    bot = SearchBot(think_ms=args.think_ms, iterations=args.iterations)
    main(bot, name="search", new_match=bot.reseed)


if __name__ == "__main__":
    run()
