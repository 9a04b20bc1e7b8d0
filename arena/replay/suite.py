"""Position suites: a seat's costliest decisions, as a file a bot can be asked again.

`arena replay analyze FILE --seat N --suite OUT` writes the seat's costliest decisions of the
analysis (`Analysis.costliest`) to a suite file; `arena replay suite OUT --bot CMD` asks a bot
every position of it (`arena.conformance.ask.ask_suite`) and says which it now answers well.

A suite is self-contained: each position carries the deal record of the deal up to the decision
(`arena.engine.deal_record`: variant, options, dealer, pots, deck, the actions before it), so it
needs neither the replay nor the analysis any more, and the search's value of every legal
action there, which is what an answer is judged by. Format (one JSON object):

    {"format": "arena-positions", "version": 1,
     "positions": [{"id": "MATCH:DEAL:STEP", "source": {"replay", "sha256", "match_id", "deal",
                    "step", "bot"}, "seat": N, "record": {…deal record…}, "played": "play SK",
                    "best": "play S7", "values": {"play SK": -3.1, …}, "loss": 4.2,
                    "search": {"seed", "iterations", "think_ms"}}, …]}

An answer is *good* when the search values it within `tolerance` points of its best action.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import DealState, RecordError, deal_record, replay_record
from .analysis import COSTLIEST_PER_SEAT, Analysis
from .read import Replay, is_int

SUITE_FORMAT = "arena-positions"
SUITE_VERSION = 1


class SuiteError(Exception):
    """A suite file that cannot be read or is damaged; one line saying what and where."""


@dataclass(frozen=True)
class SuitePosition:
    id: str  # MATCH:DEAL:STEP, unique in a suite
    seat: int
    state: DealState  # the deal up to the decision, the seat to act
    played: str  # what the seat played in the match
    best: str  # the search's preferred action
    values: dict[str, float]  # every legal action → the search's estimated points
    loss: float  # of the played action
    source: dict[str, Any] = field(default_factory=dict)  # replay, sha256, match_id, deal, step, bot
    search: dict[str, Any] = field(default_factory=dict)  # seed, iterations, think_ms

    def loss_of(self, action: str) -> float:
        """The search's best value less `action`'s (inf for an action it did not value)."""
        if action not in self.values:
            return math.inf
        return round(max(self.values.values()) - self.values[action], 2)

    def good(self, action: str, tolerance: float = 0.0) -> bool:
        return self.loss_of(action) <= tolerance

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "seat": self.seat,
            "record": deal_record(self.state),
            "played": self.played,
            "best": self.best,
            "values": self.values,
            "loss": self.loss,
            "search": self.search,
        }


def costliest_positions(
    replay: Replay, analysis: Analysis, seat: int, count: int = COSTLIEST_PER_SEAT, bot: str = ""
) -> list[SuitePosition]:
    """The seat's `count` costliest decisions of `analysis` (of `replay`), as suite positions."""
    match_id = analysis.match_id or analysis.replay
    out = []
    for point in analysis.costliest(seat, count):
        state, _ = replay.position(point.deal, point.step)
        out.append(
            SuitePosition(
                id=f"{match_id}:{point.deal}:{point.step}",
                seat=seat,
                state=state,
                played=point.played,
                best=point.best,
                values=dict(point.values),
                loss=point.loss,
                source={
                    "replay": analysis.replay,
                    "sha256": analysis.replay_sha256,
                    "match_id": analysis.match_id,
                    "deal": point.deal,
                    "step": point.step,
                    "bot": bot,
                },
                search={
                    "seed": analysis.seed,
                    "iterations": analysis.iterations,
                    "think_ms": analysis.think_ms,
                },
            )
        )
    return out


def suite_text(positions: Iterable[SuitePosition]) -> str:
    rows = ",\n".join("  " + json.dumps(p.to_json(), ensure_ascii=False) for p in positions)
    head = json.dumps({"format": SUITE_FORMAT, "version": SUITE_VERSION}, ensure_ascii=False)[:-1]
    return f'{head}, "positions": [\n{rows}\n]}}\n'


def write_suite(path: Path, positions: list[SuitePosition], append: bool = False) -> int:
    """Write the suite atomically; with `append`, the positions of the file already there first
    (a position already in it is not added twice). The number of positions written."""
    if append and path.exists():
        known = read_suite(path)
        ids = {p.id for p in known}
        positions = known + [p for p in positions if p.id not in ids]
    partial = path.with_name(path.name + ".part")
    partial.write_text(suite_text(positions), encoding="utf-8")
    os.replace(partial, path)
    return len(positions)


def read_suite(path: Path) -> list[SuitePosition]:
    """The positions of a suite file, each rebuilt and checked through the engine."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SuiteError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise SuiteError(f"{path}: not a position suite: invalid JSON{where}") from None
    if not isinstance(data, dict) or data.get("format") != SUITE_FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise SuiteError(f"{path}: not a position suite: format is {found!r}, expected {SUITE_FORMAT!r}")
    version = data.get("version")
    if not is_int(version) or not 1 <= version <= SUITE_VERSION:
        raise SuiteError(f"{path}: suite version {version!r} is not one this arena reads (≤ {SUITE_VERSION})")
    entries = data.get("positions")
    if not isinstance(entries, list):
        raise SuiteError(f"{path}: damaged suite: 'positions' must be a list")
    out: list[SuitePosition] = []
    seen: set[str] = set()
    for n, entry in enumerate(entries):
        position = _position(entry, functools.partial(_bad, f"{path}: position {n}"))
        if position.id in seen:
            raise SuiteError(f"{path}: position {n}: id {position.id!r} appears twice")
        seen.add(position.id)
        out.append(position)
    return out


def _bad(where: str, why: str) -> SuiteError:
    return SuiteError(f"{where}: {why}")


def _position(entry: object, bad: Callable[[str], SuiteError]) -> SuitePosition:
    if not isinstance(entry, dict):
        raise bad("not an object")
    ident, seat, played, best = (entry.get(k) for k in ("id", "seat", "played", "best"))
    values, loss = entry.get("values"), entry.get("loss")
    if not isinstance(ident, str) or not ident:
        raise bad("'id' must be a non-empty string")
    if not is_int(seat) or seat < 0:
        raise bad("'seat' must be a seat")
    if not isinstance(played, str) or not isinstance(best, str):
        raise bad("'played' and 'best' must be actions")
    if not isinstance(values, dict) or not all(
        (is_int(v) or isinstance(v, float)) and math.isfinite(v) for v in values.values()
    ):
        raise bad("'values' must map actions to numbers")
    if not (is_int(loss) or isinstance(loss, float)) or loss < 0:
        raise bad("'loss' must be a number from 0")
    try:
        state = replay_record(entry.get("record"))  # type: ignore[arg-type]
    except RecordError as exc:
        raise bad(f"its deal record does not replay: {exc}") from None
    if state.is_terminal() or state.current_player != seat:
        raise bad(f"its deal record does not leave seat {seat} to act")
    legal = {str(a) for a in state.legal_actions()}
    if set(values) != legal:
        raise bad("'values' must value exactly the legal actions of the position")
    if played not in legal or best not in legal:
        raise bad("'played' and 'best' must be legal actions of the position")
    source, search = entry.get("source", {}), entry.get("search", {})
    return SuitePosition(
        id=ident,
        seat=seat,
        state=state,
        played=played,
        best=best,
        values={str(k): float(v) for k, v in values.items()},
        loss=float(loss),
        source=source if isinstance(source, dict) else {},
        search=search if isinstance(search, dict) else {},
    )
