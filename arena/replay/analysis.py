"""`arena replay analyze`: the search's opinion of every recorded decision of a match.

For each decision of the seats asked for, the deal is rebuilt up to it and the acting seat's
`observation()` (what it was sent, nothing more) is handed to the search (`arena.search.evaluate`),
which estimates the points per deal each legal action is worth to that seat. The action played is
compared with the search's preferred one: its *loss* is the best value less the played action's.
The result is an analysis file beside the replay (`NAME.analysis.json`; the format is in
replays/FORMAT.md, "Analysis files"), which `arena replay html` draws on the decision panel.

Decisions are independent, so they are searched in parallel, one process per core. Each decision
gets its own seed, derived from the analysis seed and the decision's place in the match, and a
fixed iteration budget, so the file is the same byte for byte whatever the number of processes.
A time budget (`think_ms`) is the alternative; its results depend on the machine's speed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from ..engine import observation
from ..search import NoConsistentDeal, evaluate
from .read import Replay, is_int
from .timeline import walk

ANALYSIS_FORMAT = "arena-analysis"
ANALYSIS_VERSION = 1
ANALYSIS_SUFFIX = ".analysis.json"
COSTLIEST_PER_SEAT = 3  # the decisions of each seat the viewer marks as its costliest
DIGITS = 2  # values and losses are written in points to two decimals


class AnalysisError(Exception):
    """An analysis file that cannot be read, is damaged, or belongs to another replay; or a
    decision the search cannot analyse (no deal fits the seat's view)."""


@dataclass(frozen=True)
class Point:
    """The search's view of one recorded decision."""

    deal: int
    step: int
    seat: int
    played: str  # the action as `str(Action)`, as in an observation's `legal_actions`
    best: str  # the search's preferred action (the played one for a forced decision)
    values: dict[str, float]  # every legal action → estimated points per deal; {} when forced
    loss: float  # the highest value less values[played] (≥ 0); 0 for a forced decision

    @property
    def forced(self) -> bool:
        """One legal action: nothing to search."""
        return not self.values

    def to_json(self) -> dict[str, Any]:
        return {
            "deal": self.deal,
            "step": self.step,
            "seat": self.seat,
            "played": self.played,
            "best": self.best,
            "loss": self.loss,
            "values": self.values,
        }


@dataclass
class Analysis:
    """An analysis file's content."""

    replay: str  # the replay's file name
    replay_sha256: str  # of the replay's bytes when analysed
    match_id: str
    seed: int
    iterations: int | None  # the budget per decision; None with `think_ms`
    think_ms: int | None  # the time per decision; None with `iterations`
    seats: list[int]  # the seats analysed
    points: list[Point] = field(default_factory=list)  # in match order

    def to_json(self) -> dict[str, Any]:
        return {
            "format": ANALYSIS_FORMAT,
            "version": ANALYSIS_VERSION,
            "replay": {"file": self.replay, "sha256": self.replay_sha256, "match_id": self.match_id},
            "search": {"seed": self.seed, "iterations": self.iterations, "think_ms": self.think_ms},
            "seats": self.seats,
            "decisions": [point.to_json() for point in self.points],
        }

    def text(self) -> str:
        """The file's text: one JSON object, a decision per line for readable diffs."""
        head = self.to_json()
        decisions = head.pop("decisions")
        body = json.dumps(head, ensure_ascii=False)[:-1]
        rows = ",\n".join("  " + json.dumps(d, ensure_ascii=False) for d in decisions)
        return f'{body}, "decisions": [\n{rows}\n]}}\n'

    def costliest(self, seat: int, count: int = COSTLIEST_PER_SEAT) -> list[Point]:
        """The seat's decisions that cost most by the search's estimate (a loss above 0 only)."""
        lost = [p for p in self.points if p.seat == seat and p.loss > 0]
        return sorted(lost, key=lambda p: (-p.loss, p.deal, p.step))[:count]

    def total_loss(self, seat: int) -> float:
        return round(sum(p.loss for p in self.points if p.seat == seat), DIGITS)


def analysis_path(replay_path: Path) -> Path:
    """Where the analysis of a replay goes: beside it, ``X.jsonl`` (or ``X.jsonl.part``) →
    ``X.analysis.json``."""
    name = replay_path.name
    for suffix in (".jsonl.part", ".jsonl"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return replay_path.with_name(name + ANALYSIS_SUFFIX)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def decision_seed(seed: int, deal: int, step: int) -> int:
    """The search's seed for one decision: the same whichever process searches it, in any order."""
    digest = hashlib.sha256(f"{seed}:analysis:{deal}:{step}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# --------------------------------------------------------------------------- searching


@dataclass(frozen=True)
class Task:
    """One decision to search: what crosses to a worker process."""

    index: int  # its place in the match's order
    deal: int
    step: int
    seat: int
    played: str
    view: dict[str, Any]  # the acting seat's observation before the decision
    seed: int
    iterations: int | None
    think_ms: int | None


def tasks(
    replay: Replay, seats: Iterable[int], seed: int, iterations: int | None, think_ms: int | None
) -> list[Task]:
    """The decisions of `seats` in the verified part of the replay, each with its seat's view."""
    wanted = set(seats)
    out: list[Task] = []
    for log in replay.deals:
        for state, decision in walk(replay, log):
            if decision is None or decision.seat not in wanted:
                continue
            out.append(
                Task(
                    len(out),
                    log.index,
                    decision.step,
                    decision.seat,
                    str(decision.action),
                    observation(state, decision.seat),
                    decision_seed(seed, log.index, decision.step),
                    iterations,
                    think_ms,
                )
            )
    return out


def search(task: Task) -> tuple[int, Point]:
    """Search one decision (in a worker process, or in this one)."""
    legal: list[str] = task.view["legal_actions"]
    if task.played not in legal:  # a verified replay only holds legal actions
        raise AnalysisError(f"deal {task.deal}, step {task.step}: {task.played} is not among {legal}")
    if len(legal) == 1:
        return task.index, Point(task.deal, task.step, task.seat, task.played, task.played, {}, 0.0)
    try:
        if task.think_ms is not None:
            found = evaluate(task.view, think_ms=task.think_ms, seed=task.seed)
        else:
            found = evaluate(task.view, seed=task.seed, iterations=task.iterations)
    except NoConsistentDeal as exc:
        raise AnalysisError(
            f"deal {task.deal}, step {task.step}: the search found no deal consistent with seat "
            f"{task.seat}'s view: {exc}"
        ) from None
    values = {action: round(float(found.values[action]), DIGITS) for action in legal}
    best = found.best if found.best in values else max(legal, key=lambda a: values[a])
    loss = max(0.0, round(max(values.values()) - values[task.played], DIGITS))
    return task.index, Point(task.deal, task.step, task.seat, task.played, best, values, loss)


def run_tasks(todo: list[Task], jobs: int, advance: Callable[[], None] | None = None) -> list[Point]:
    """Every task's point, in the tasks' order; `jobs` processes at once (1: in this process)."""
    found: dict[int, Point] = {}
    if jobs <= 1 or len(todo) < 2:
        results: Iterator[tuple[int, Point]] = map(search, todo)
        for index, point in results:
            found[index] = point
            if advance is not None:
                advance()
        return [found[t.index] for t in todo]
    import multiprocessing

    # fork: the workers start at once with the parent's imports (the engine, the search); the
    # command has started no thread. Each decision is one item: their costs differ a lot.
    context = multiprocessing.get_context("fork")
    with context.Pool(processes=min(jobs, len(todo)), initializer=_worker_signals) as pool:
        for index, point in pool.imap_unordered(search, todo, chunksize=1):
            found[index] = point
            if advance is not None:
                advance()
    return [found[t.index] for t in todo]


def _worker_signals() -> None:
    """A worker leaves Ctrl-C to the parent, which ends the pool (terminate: SIGTERM, the default
    action, not the command's handler inherited through fork)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def analyse(
    replay: Replay,
    replay_path: Path,
    seats: list[int],
    *,
    seed: int,
    iterations: int | None,
    think_ms: int | None,
    jobs: int,
    advance: Callable[[], None] | None = None,
    todo: list[Task] | None = None,
) -> Analysis:
    """The analysis of `seats`' decisions in the verified part of `replay` (read from `replay_path`)."""
    if todo is None:
        todo = tasks(replay, seats, seed, iterations, think_ms)
    return Analysis(
        replay=replay_path.name,
        replay_sha256=file_sha256(replay_path),
        match_id=str(replay.header.get("match_id", "")),
        seed=seed,
        iterations=iterations,
        think_ms=think_ms,
        seats=sorted(seats),
        points=run_tasks(todo, jobs, advance),
    )


# --------------------------------------------------------------------------- the file


def write_analysis(path: Path, analysis: Analysis) -> None:
    """Write the file in one atomic step: a reader never sees half of it."""
    partial = path.with_name(path.name + ".part")
    partial.write_text(analysis.text(), encoding="utf-8")
    os.replace(partial, path)


def read_analysis(path: Path, replay_path: Path | None = None) -> Analysis:
    """Read and check an analysis file; with `replay_path`, check that it was made for that replay.

    Raises `AnalysisError` with one line saying what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnalysisError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AnalysisError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise AnalysisError(f"{path}: not an analysis file: invalid JSON{where}") from None
    analysis = _parse(path, data)
    if replay_path is not None:
        digest = file_sha256(replay_path)
        if digest != analysis.replay_sha256:
            raise AnalysisError(
                f"{path} was made for another replay ({analysis.replay}, sha256 "
                f"{analysis.replay_sha256[:12]}…), not {replay_path.name} (sha256 {digest[:12]}…): "
                f"run arena replay analyze {replay_path} again"
            )
    return analysis


def _parse(path: Path, data: Any) -> Analysis:
    def bad(reason: str) -> AnalysisError:
        return AnalysisError(f"{path}: damaged analysis file: {reason}")

    if not isinstance(data, dict) or data.get("format") != ANALYSIS_FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise AnalysisError(
            f"{path}: not an analysis file: format is {found!r}, expected {ANALYSIS_FORMAT!r}"
        )
    version = data.get("version")
    if not is_int(version) or version < 1:
        raise bad(f"version {version!r}")
    if version > ANALYSIS_VERSION:
        raise AnalysisError(
            f"{path}: analysis version {version} is newer than this arena reads (≤ {ANALYSIS_VERSION})"
        )
    replay, settings, seats, decisions = (data.get(k) for k in ("replay", "search", "seats", "decisions"))
    if not isinstance(replay, dict) or not all(isinstance(replay.get(k), str) for k in ("file", "sha256")):
        raise bad("'replay' must name the file and its sha256")
    if not isinstance(settings, dict) or not is_int(settings.get("seed")):
        raise bad("'search' must hold the seed")
    iterations, think_ms = settings.get("iterations"), settings.get("think_ms")
    if not all(value is None or (is_int(value) and value > 0) for value in (iterations, think_ms)) or (
        (iterations is None) == (think_ms is None)
    ):
        raise bad("'search' must hold either iterations or think_ms, a positive whole number")
    if not isinstance(seats, list) or not all(is_int(s) and s >= 0 for s in seats):
        raise bad("'seats' must be a list of seats")
    if not isinstance(decisions, list):
        raise bad("'decisions' must be a list")
    points = [_point(entry, n, bad) for n, entry in enumerate(decisions)]
    return Analysis(
        replay=replay["file"],
        replay_sha256=replay["sha256"],
        match_id=str(replay.get("match_id", "")),
        seed=settings["seed"],
        iterations=iterations,
        think_ms=think_ms,
        seats=list(seats),
        points=points,
    )


def _point(entry: object, n: int, bad: Callable[[str], AnalysisError]) -> Point:
    if not isinstance(entry, dict):
        raise bad(f"decision {n} is not an object")
    fields: dict[str, Any] = entry
    deal, step, seat = fields.get("deal"), fields.get("step"), fields.get("seat")
    played, best, loss, values = (
        fields.get("played"),
        fields.get("best"),
        fields.get("loss"),
        fields.get("values"),
    )
    if not (is_int(deal) and is_int(step) and is_int(seat) and min(deal, step, seat) >= 0):
        raise bad(f"decision {n}: deal, step and seat must be whole numbers")
    if not isinstance(played, str) or not isinstance(best, str):
        raise bad(f"decision {n}: played and best must be actions")
    if not isinstance(values, dict) or not all(_number(v) for v in values.values()):
        raise bad(f"decision {n}: values must map actions to numbers")
    if values and (played not in values or best not in values):
        raise bad(f"decision {n}: the played and the best action must have values")
    if not _number(loss) or loss < 0:
        raise bad(f"decision {n}: loss must be a number from 0")
    return Point(deal, step, seat, played, best, {str(k): float(v) for k, v in values.items()}, float(loss))


def _number(value: object) -> TypeGuard[int | float]:
    """A finite number as JSON reads it (not a bool)."""
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


def check_against(analysis: Analysis, replay: Replay) -> None:
    """Every analysed decision is in the replay, by that seat, with that action (the sha256 already
    says so for a file that was not edited; this names the first decision that differs)."""
    recorded = {(log.index, d.step): (d.seat, str(d.action)) for log in replay.deals for d in log.decisions}
    for point in analysis.points:
        if recorded.get((point.deal, point.step)) != (point.seat, point.played):
            raise AnalysisError(
                f"the analysis does not match the replay at deal {point.deal}, step {point.step}: "
                f"it has seat {point.seat} playing {point.played}"
            )
