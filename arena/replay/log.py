"""The replay log of a match: JSON lines written as the match goes.

Line types, in order: ``header``; per deal ``deal_start``, one ``action`` per
decision (with think time and fault), ``deal`` (the complete deal record of
replays/FORMAT.md, each action annotated with ``think_ms`` and ``fault``);
``connection`` lines whenever a seat drops or comes back, ``hello`` lines (since
version 2) whenever the referee accepts a bot's Hello; ``match_end`` last.

Lines are buffered and handed to the operating system in batches: the writer
reports its first unflushed line to `on_pending`, and the referee flushes every
pending log `FLUSH_AFTER_S` later (`arena.referee.runner`), and flushes a match's log
before it sends each decision request. So several lines written in one go (a move,
its trick, the deal's end) cost one system call, yet every move before a request the
bot sees is with the OS: a killed server process loses at most the move in flight.
An error, a cancellation or a shutdown closes the file through `abandon` or
`complete` and loses nothing. Nothing is
fsynced before the match ends: after a crash of the operating system itself, what
survives is the OS's choice. The log is written to ``<id>.jsonl.part`` and renamed
to ``<id>.jsonl`` when the match ends: a file with the final name is always complete.
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

REPLAY_FORMAT = "arena-replay"
# 2 added the `hello` line; 3 the `rtt_ms` and `allowance_ms` of action lines under a latency
# allowance. Lower versions are read as before.
REPLAY_VERSION = 3
FLUSH_AFTER_S = 0.05


# The format's vocabulary: what the referee writes and the verifier accepts. String enums, so that
# a line holds the same strings as before and a member equals its string.
class FaultKind(enum.StrEnum):
    ILLEGAL = "illegal"  # `max_invalid` invalid answers to one request
    TIMEOUT = "timeout"
    DISCONNECT = "disconnect"  # no bot connected, and none came back within the grace
    CRASH = "crash"  # the bot's process ended
    PROTOCOL = "protocol"  # a message the protocol does not allow: the stream ends


class ConnectionEvent(enum.StrEnum):
    DISCONNECTED = "disconnected"
    RECONNECTED = "reconnected"
    CRASHED = "crashed"


class FaultPolicy(enum.StrEnum):
    SUBSTITUTE = "substitute"  # a legal action chosen from the match seed plays for the seat
    FORFEIT = "forfeit"  # the match ends at a seat's first fault in a decision


class Termination(enum.StrEnum):
    COMPLETED = "completed"
    FORFEIT = "forfeit"
    # A match that ended by an error or a shutdown: it writes no `match_end` line. One whose
    # scores or pots left int64 (arena/referee/limits.py) writes one, with its `reason`.
    ABORTED = "aborted"


FAULT_KINDS: tuple[str, ...] = tuple(k.value for k in FaultKind)
CONNECTION_EVENTS: tuple[str, ...] = tuple(e.value for e in ConnectionEvent)
FAULT_POLICIES: tuple[str, ...] = tuple(p.value for p in FaultPolicy)
TERMINATIONS: tuple[str, ...] = tuple(t.value for t in Termination)  # of `match_end`

# A line as compact JSON, by one encoder made once and without the check for circular references:
# a line is a tree of dicts, lists and scalars built just before, and that check (an id in a dict
# for every container) was about a tenth of the encoding of a deal's record.
_ENCODE_LINE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode


class ReplayWriter:
    def __init__(
        self, directory: Path, match_id: str, on_pending: Callable[[ReplayWriter], None] | None = None
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.final_path = directory / f"{match_id}.jsonl"
        self.partial_path = directory / f"{match_id}.jsonl.part"
        self._file: IO[str] | None = self.partial_path.open("w", encoding="utf-8")
        # Called with the writer when a line is written while none was pending; without it,
        # every line is flushed as it is written.
        self.on_pending = on_pending
        self.pending = False  # lines written and not flushed yet

    def write(self, line: dict[str, Any]) -> None:
        self.write_json(_ENCODE_LINE(line))

    def write_json(self, text: str) -> None:
        """Write one line already encoded: a JSON object on one line, as `write` would encode it."""
        if self._file is None:
            raise ValueError("the replay is already complete")
        self._file.write(text + "\n")
        if self.on_pending is None:
            self._file.flush()
        elif not self.pending:
            self.pending = True
            self.on_pending(self)

    def flush(self) -> None:
        """Hand the lines written so far to the operating system."""
        if self._file is not None and self.pending:
            self._file.flush()
        self.pending = False

    def complete(self) -> Path:
        """Close the log and give it its final name in one atomic rename."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            os.replace(self.partial_path, self.final_path)
        return self.final_path

    def abandon(self) -> None:
        """Close without completing: the `.part` file stays as the record of what happened."""
        if self._file is not None:
            self._file.close()
            self._file = None
