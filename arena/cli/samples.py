"""Play the sample replays again: `python -m arena.cli.samples [DIR]` (default replays/samples).

What the samples are is in `arena.replay.samples`.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path

import trio

from ..engine import find_variant
from ..logs import configure
from ..referee.runner import MatchConfig
from ..replay.samples import BOT_SEED, SAMPLES, SAMPLES_DIR, Sample
from ..server.local import default_bots, play_matches


def make_samples(directory: Path, samples: tuple[Sample, ...] = SAMPLES) -> list[Path]:
    """Play every sample match at once on one server; write `<name>.jsonl` files to `directory`."""
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
        print("usage: python -m arena.cli.samples [DIR]", file=sys.stderr)
        return 2
    configure(logging.WARNING)
    directory = Path(argv[0]) if argv else SAMPLES_DIR
    for path in make_samples(directory):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
