"""Run the conformance cases against a bot command and judge every answer."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import trio

from ..engine import find_variant
from ..live import Hub
from ..referee.position import PositionResult, PositionRunner, Probe
from ..referee.seat import TimeControl
from ..server.app import serve
from ..server.local import launch_bot
from . import DEFAULT_PER_DECISION_MS
from .spec import Case

# Starts the bot for a seat and returns when it has exited: (owner, seat, token, command, address, log).
Launch = Callable[[PositionRunner, int, str, str, str, Path], Awaitable[object]]

DEFAULT_TIME_CONTROL = TimeControl(per_decision_ms=DEFAULT_PER_DECISION_MS, bank_ms=0, increment_ms=0)


@dataclass(frozen=True)
class CaseResult:
    case: Case
    passed: bool
    detail: str
    result: PositionResult | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "variant": self.case.variant,
            "case": self.case.name,
            "title": self.case.title,
            "seat": self.case.seat,
            "passed": self.passed,
            "detail": self.detail,
        }
        if self.case.options:
            out["options"] = dict(self.case.options)
        if self.result is not None:
            out["outcome"] = self.result.outcome
            out["think_ms"] = self.result.think_ms
        return out


def _text(action: Any) -> str:
    return " ".join(p for p in (action.type, action.card, action.name, action.suit) if p) or "an empty action"


def judge(case: Case, result: PositionResult) -> tuple[bool, str]:
    """Pass only for a legal first answer, on time, tagged with the request's id, and no fault."""
    if result.wrong_ids:
        ids = ", ".join(str(i) for i in result.wrong_ids)
        return False, f"answered with request id {ids}; the request's id is {result.request_id}"
    answers = [a for a in result.answers if a.matched]
    if answers and not answers[0].legal:
        first = answers[0]
        rule = f" ({first.rule})" if first.rule not in first.reason else ""
        return False, f"illegal answer '{_text(first.action)}': {first.reason}{rule}"
    if result.faults:
        return False, "protocol fault: " + "; ".join(result.faults)
    if result.outcome == "timeout":
        return False, result.detail
    if result.outcome == "gone":
        if Probe.DROP in case.position.probes:
            return False, f"did not come back after the stream broke ({result.detail})"
        return False, f"the bot was gone ({result.detail})"
    if result.outcome == "skipped":
        return False, f"not asked: {result.detail}"
    if result.outcome != "answered" or result.action is None:
        return False, f"{result.outcome}: {result.detail}"
    if Probe.DROP in case.position.probes and result.reconnects < 1:
        return False, "answered without dialling again"
    return True, f"{result.action} in {result.think_ms} ms"


def _groups(cases: Sequence[Case]) -> list[list[Case]]:
    """Cases one bot process can answer in a row: same variant, options and seat; in kit order."""

    def key(c: Case) -> tuple[str, tuple[tuple[str, str], ...], int]:
        return c.variant, tuple(sorted(c.options.items())), c.seat

    order = {k: i for i, k in enumerate(dict.fromkeys(key(c) for c in cases))}
    return [list(g) for _, g in itertools.groupby(sorted(cases, key=lambda c: order[key(c)]), key=key)]


async def run_cases(
    command: str,
    cases: Sequence[Case],
    *,
    time_control: TimeControl = DEFAULT_TIME_CONTROL,
    reconnect_grace_s: float = 5.0,
    start_timeout_s: float = 20.0,
    log_dir: Path,
    host: str = "127.0.0.1",
    unix: Path | None = None,
    launcher: Launch = launch_bot,
) -> list[CaseResult]:
    """Ask the bot `command` about every case over a real server; one result per case, in order.

    A bot process plays the cases of one variant, options and seat in a row; if it dies or stays
    away, the case it was asked fails and a new process takes the rest. A bot that never says
    Hello fails every case left.

    `launcher` starts the bot (`server.local.launch_bot`: a local process); with `unix` the server
    also listens on that Unix socket (a sandboxed bot's way in, `arena.submissions.accept`)."""
    judged: dict[int, CaseResult] = {}
    never_came = ""
    async with trio.open_nursery() as nursery:
        hub, port = await nursery.start(partial(serve, host, 0, log_dir, unix=unix))
        address = f"{host}:{port}"
        for group in _groups(cases):
            remaining = group
            launch = 0
            while remaining:
                if never_came:
                    judged.update({id(c): CaseResult(c, False, never_came) for c in remaining})
                    break
                launch += 1
                first = remaining[0]
                variant = find_variant(first.variant, dict(first.options))
                runner = PositionRunner(
                    variant,
                    first.seat,
                    [c.position for c in remaining],
                    time_control,
                    reconnect_grace_s=reconnect_grace_s,
                    start_timeout_s=start_timeout_s,
                )
                log_path = log_dir / f"{first.variant}-seat{first.seat}-{first.name}-{launch}.log"
                await _run_one(hub, runner, command, address, log_path, launcher)
                later = []
                for case, result in zip(remaining, runner.results, strict=True):
                    if result.outcome == "skipped":
                        later.append(case)
                    else:
                        passed, detail = judge(case, result)
                        judged[id(case)] = CaseResult(case, passed, detail, result)
                if len(later) == len(remaining):  # nothing was asked: the bot never said Hello
                    never_came = f"the bot never connected ({runner.results[0].detail}); see {log_path}"
                remaining = later
        nursery.cancel_scope.cancel()
    return [judged[id(c)] for c in cases]


async def _run_one(
    hub: Hub, runner: PositionRunner, command: str, address: str, log_path: Path, launcher: Launch
) -> None:
    exited = trio.Event()

    async def bot() -> None:
        try:
            await launcher(runner, runner.seat, runner.token, command, address, log_path)
        finally:
            exited.set()

    async with trio.open_nursery() as nursery:
        with hub.admit(runner, {runner.seat: runner.token}):
            nursery.start_soon(bot)
            await runner.run()
        with trio.move_on_after(2):  # let it see MatchEnd and exit by itself
            await exited.wait()
        nursery.cancel_scope.cancel()


def table(results: Sequence[CaseResult]) -> str:
    """The pass/fail table, one line per case, and a summary line."""
    rows = [("variant", "case", "seat", "result", "detail")]
    for r in results:
        variant = r.case.variant + "".join(f" {k}={v}" for k, v in sorted(r.case.options.items()))
        rows.append((variant, r.case.name, str(r.case.seat), "pass" if r.passed else "FAIL", r.detail))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + "  " + row[4]
        for row in rows
    ]
    passed = sum(r.passed for r in results)
    lines.append(f"{len(results)} cases: {passed} passed, {len(results) - passed} failed")
    return "\n".join(lines)
