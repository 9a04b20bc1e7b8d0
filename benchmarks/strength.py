"""How much stronger one bot of a duplicate ladder is than another: the search bot's table.

`python -m benchmarks strength DB ...` reads finished ladders (`ladders/strength*.toml`, docs/LADDER.md)
and prints, per ladder, the deals each bot played, its points per deal, and the mean of A's
points per deal minus B's with a Student-t 95% interval. The independent unit is the deal set:
its matches deal the same decks to every seat arrangement, so the luck of the cards cancels
within it, and deal sets are independent of each other (a Danish redeal shifts the decks within
one match, which the deal set's mean absorbs). Only complete deal sets count. With the search
bot's logs beside the replays, the time of its decisions too (its `search:` line per match).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.ladder.store import connect
from arena.ratings import mean_ci

_LOG_LINE = re.compile(r"^search: (\d+) decisions searched, (\d+) ms mean, (\d+) ms max", re.MULTILINE)


@dataclass(frozen=True)
class Strength:
    ladder: str
    variant: str
    deal_sets: int
    deals: int  # deals each bot played in the complete deal sets
    points: dict[str, float]  # bot → points per deal
    a: str
    b: str
    diff: float  # A's points per deal minus B's
    ci95: float  # half width of the 95% interval of `diff`
    decisions: int  # searched decisions found in the logs
    ms_mean: float
    ms_max: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "ladder": self.ladder,
            "variant": self.variant,
            "deal_sets": self.deal_sets,
            "deals": self.deals,
            "points_per_deal": {k: round(v, 2) for k, v in self.points.items()},
            "a": self.a,
            "b": self.b,
            "diff_per_deal": round(self.diff, 2),
            "ci95": round(self.ci95, 2),
            "decisions_searched": self.decisions,
            "ms_per_decision_mean": round(self.ms_mean, 1),
            "ms_per_decision_max": round(self.ms_max, 1),
        }


def strength(db: Path, a: str, b: str, logs: Path | None = None) -> Strength:
    """The comparison of bots `a` and `b` in the ladder database `db`."""
    conn = connect(db, readonly=True)
    try:
        ladder = conn.execute("SELECT name, identity FROM ladder WHERE id = 1").fetchone()
        identity = json.loads(ladder["identity"])
        matches = conn.execute("SELECT seq, deal_set FROM matches").fetchall()
        per_set: dict[int, list[int]] = defaultdict(list)
        for row in matches:
            per_set[row["deal_set"]].append(row["seq"])
        full = max((len(v) for v in per_set.values()), default=0)
        complete = {s for s, seqs in per_set.items() if len(seqs) == full}
        set_of = {row["seq"]: row["deal_set"] for row in matches}
        sums: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        totals: dict[str, list[int]] = defaultdict(list)
        for row in conn.execute("SELECT match_seq, bot, points FROM deals WHERE annulled = 0 AND active = 1"):
            deal_set = set_of[row["match_seq"]]
            if deal_set in complete:
                sums[deal_set][row["bot"]].append(row["points"])
                totals[row["bot"]].append(row["points"])
    finally:
        conn.close()
    diffs = []
    for deal_set in sorted(complete):
        bots = sums[deal_set]
        if bots[a] and bots[b]:
            diffs.append(sum(bots[a]) / len(bots[a]) - sum(bots[b]) / len(bots[b]))
    ci = mean_ci(diffs)
    decisions, total_ms, longest = 0, 0.0, 0.0
    if logs is not None and logs.is_dir():
        for path in logs.glob("*.log"):
            for n, mean, top in _LOG_LINE.findall(path.read_text(errors="replace")):
                decisions += int(n)
                total_ms += int(n) * int(mean)
                longest = max(longest, float(top))
    return Strength(
        ladder=ladder["name"],
        variant=str(identity.get("variant", "")),
        deal_sets=len(diffs),
        deals=len(totals[a]),
        points={bot: sum(p) / len(p) for bot, p in sorted(totals.items()) if p},
        a=a,
        b=b,
        diff=ci.mean,
        ci95=ci.half_width,
        decisions=decisions,
        ms_mean=total_ms / decisions if decisions else 0.0,
        ms_max=longest,
    )
