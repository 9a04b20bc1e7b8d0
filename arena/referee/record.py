"""What the referee writes to a match's replay log besides `ReplayWriter` itself: the `action`
line of a decision without a fault, encoded by hand (it is written once per decision), the
completion of a log, and the one flusher task that flushes the logs of every match of a trio run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import structlog
import trio

from ..engine import Action
from ..replay.log import FLUSH_AFTER_S, ReplayWriter

log = structlog.get_logger()


@lru_cache(maxsize=4096)  # the actions of every variant are a few hundred values
def _action_json(action: Action) -> str:
    return json.dumps(action.to_dict(), separators=(",", ":"), ensure_ascii=False)


def action_line(deal: int, step: int, seat: int, action: Action, think_ms: int, latency: str = "") -> str:
    """The replay's `action` line of a decision without a fault, as `ReplayWriter.write` encodes it;
    `latency` is `latency_fields(…)` under a latency allowance."""
    return (
        f'{{"type":"action","deal":{deal},"step":{step},"seat":{seat},'
        f'"action":{_action_json(action)},"think_ms":{think_ms}{latency}}}'
    )


# As `ReplayWriter.write` encodes a line (arena/replay/log.py).
_ENCODE_LINE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode
# Where a deal line's hand-encoded actions go: no value of a deal's record encodes to it.
_ACTIONS_MARK = "\x00actions"
_ACTIONS_JSON = _ENCODE_LINE(_ACTIONS_MARK)


@lru_cache(maxsize=16384)  # a few hundred actions by a few seats
def _entry_head(seat: int, action: Action) -> str:
    """A deal line's action entry up to its time: `{"seat":…,<the action's fields>,"think_ms":`."""
    return f'{{"seat":{seat},{_action_json(action)[1:-1]},"think_ms":'


def deal_line(
    deal: int,
    record: dict[str, Any],
    history: Sequence[tuple[int, Action]],
    notes: list[dict[str, Any]],
    scores: list[int],
) -> str:
    """The replay's `deal` line, as `ReplayWriter.write` encodes `{"type": "deal", "deal": deal,
    "record": record, "scores": scores}` once the record has its `actions`: an entry for each action
    of `history`, `{"seat": …, **action.to_dict(), **note}` with its decision's note. `record` is
    `deal_record(state, deal, actions=False)`. An entry with only its time is encoded by hand (a
    deal has about ninety), any other by the encoder."""
    entries = [
        f"{_entry_head(seat, action)}{note['think_ms']}}}"
        if len(note) == 1 and "think_ms" in note
        else _ENCODE_LINE({"seat": seat, **action.to_dict(), **note})
        for (seat, action), note in zip(history, notes, strict=True)
    ]
    line = _ENCODE_LINE(
        {"type": "deal", "deal": deal, "record": {**record, "actions": _ACTIONS_MARK}, "scores": scores}
    )
    return line.replace(_ACTIONS_JSON, "[" + ",".join(entries) + "]", 1)


def latency_fields(rtt_ms: int | None, allowance_ms: int) -> str:
    """An action line's `rtt_ms` and `allowance_ms`, as `ReplayWriter.write` encodes them."""
    return f',"rtt_ms":{"null" if rtt_ms is None else rtt_ms},"allowance_ms":{allowance_ms}'


async def complete_replay(writer: ReplayWriter, in_thread: bool) -> Path:
    """Complete the log (`ReplayWriter.complete`: flush, fsync, rename); with `in_thread`, in a
    worker thread, so that the other matches of this trio play on while the disk syncs. Only for
    a match no bot can send to meanwhile (every seat's link synchronous): a message arriving then
    would be judged after its `match_end` line."""
    if not in_thread:
        return writer.complete()
    writer.flush()  # here: the flusher finds nothing left to write while the thread syncs
    with trio.CancelScope(shield=True):  # a stopping server still keeps the result
        path = await trio.to_thread.run_sync(writer.complete)
    return path


class ReplayFlusher:
    """Flushes the replay logs of every match of a trio run, `FLUSH_AFTER_S` after their first line.

    One task for all matches: a timer per match, or a flush per line, cost a wake-up or a
    system call (and a GIL hand-over) per decision.
    """

    def __init__(self) -> None:
        # A set: a match flushes its log before each request, so its writer is added again at
        # every decision; the flusher flushes it once.
        self.pending: set[ReplayWriter] = set()
        self.wake = trio.Event()

    def add(self, writer: ReplayWriter) -> None:
        self.pending.add(writer)
        self.wake.set()

    async def run(self) -> None:
        while True:
            await self.wake.wait()
            await trio.sleep(FLUSH_AFTER_S)
            self.wake = trio.Event()
            writers, self.pending = self.pending, set()
            for writer in writers:
                try:
                    writer.flush()
                except OSError:  # a system task must not raise; the match sees the error on its next write
                    log.exception("replay flush failed", path=str(writer.partial_path))


_FLUSHER: trio.lowlevel.RunVar[ReplayFlusher] = trio.lowlevel.RunVar("replay_flusher")


def replay_flusher() -> ReplayFlusher:
    try:
        return _FLUSHER.get()
    except LookupError:
        flusher = ReplayFlusher()
        _FLUSHER.set(flusher)
        trio.lowlevel.spawn_system_task(flusher.run, name="replay flusher")
        return flusher
