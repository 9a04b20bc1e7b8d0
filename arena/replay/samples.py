"""The sample replays in replays/samples: one small match per variant, played as `arena play` plays.

    python -m arena.cli.samples [DIR]      (plays them again; DIR defaults to replays/samples)

Each sample is a real match: a server on a free port, the example bots as separate processes
(one heuristic bot, the others random with a fixed seed) dialling in over gRPC, the referee's
replay log renamed to `<name>.jsonl`. Think times and match ids differ from one run to the
next; what the tests hold the samples to is that they verify and have the shape listed here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "replays" / "samples"
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
