"""The sample replays in replays/samples: one small match per variant, played as `arena play` plays.

    python -m arena.replay.samples [DIR]      (DIR defaults to replays/samples)

Each sample is a real match: a server on a free port, the example bots as separate processes
(one heuristic bot, the others random with a fixed seed) dialling in over gRPC, the referee's
replay log renamed to `<name>.jsonl`. Think times and match ids differ from one run to the
next; what the tests hold the samples to is that they verify and have the shape listed here.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SAMPLES_DIR = Path(__file__).resolve().parent.parent.parent / "replays" / "samples"
BOT_SEED = "samples"


@dataclass(frozen=True)
class Sample:
    name: str  # the file is <name>.jsonl
    variant: str
    seed: int
    deals: int  # dealer turns
    options: dict[str, str] = field(default_factory=dict)


SAMPLES = (
    Sample("grosstarock", "grosstarock", seed=1, deals=1),
    Sample("german-1754", "german-1754", seed=2, deals=1),
    Sample("german-1754-4p", "german-1754", seed=3, deals=1, options={"players": "4"}),
    Sample("danish", "danish", seed=4, deals=2),
    Sample("danish-pots", "danish-pots", seed=5, deals=1),
    Sample("american", "american", seed=6, deals=1),
)


def make_samples(directory: Path, samples: tuple[Sample, ...] = SAMPLES) -> list[Path]:
    """Play every sample match at once on one server; write `<name>.jsonl` files to `directory`."""
    import trio

    from ..engine import find_variant
    from ..play import default_bots, play_matches
    from ..referee.runner import MatchConfig

    jobs = []
    for sample in samples:
        variant = find_variant(sample.variant, sample.options)
        bots = default_bots(variant.seats)
        names = tuple(f"seat{i}:{bot.split()[-1]}" for i, bot in enumerate(bots))
        jobs.append((MatchConfig(variant, sample.deals, sample.seed, names), bots))
    directory.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get("ARENA_BOT_SEED")
    os.environ["ARENA_BOT_SEED"] = BOT_SEED  # the random bots' choices, the same on every run
    try:
        with tempfile.TemporaryDirectory(prefix="arena-samples-") as scratch:
            played = trio.run(play_matches, jobs, Path(scratch))
            out = []
            for sample, result in zip(samples, played, strict=True):
                source = result.runner.replay_path
                if source is None or result.runner.termination != "completed":
                    raise RuntimeError(f"the {sample.name} sample match did not complete")
                target = directory / f"{sample.name}.jsonl"
                target.write_bytes(source.read_bytes())
                out.append(target)
            return out
    finally:
        if previous is None:
            del os.environ["ARENA_BOT_SEED"]
        else:
            os.environ["ARENA_BOT_SEED"] = previous


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: python -m arena.replay.samples [DIR]", file=sys.stderr)
        return 2
    import logging

    from ..logs import configure

    configure(logging.WARNING)
    directory = Path(argv[0]) if argv else SAMPLES_DIR
    for path in make_samples(directory):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
