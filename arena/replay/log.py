"""The replay log of a match: JSON lines written as the match goes.

Line types, in order: ``header``; per deal ``deal_start``, one ``action`` per
decision (with think time and fault), ``deal`` (the complete deal record of
replays/FORMAT.md, each action annotated with ``think_ms`` and ``fault``);
``connection`` lines whenever a seat drops or comes back; ``match_end`` last.

Lines are buffered and handed to the operating system at most `FLUSH_AFTER_S`
after they are written: the referee calls `flush_if_due` before each request and
while it waits for an answer. A flush per line cost a system call per decision,
and with it a hand-over of the GIL to the gRPC thread, a tenth of a decision's CPU.
So if the server process is killed, the log loses at most the lines of the last
`FLUSH_AFTER_S` (and the move in flight); an error, a cancellation or a shutdown
closes the file through `abandon` or `complete` and loses nothing. Nothing is
fsynced before the match ends: after a crash of the operating system itself, what
survives is the OS's choice. The log is written to ``<id>.jsonl.part`` and renamed
to ``<id>.jsonl`` when the match ends: a file with the final name is always complete.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

REPLAY_FORMAT = "arena-replay"
REPLAY_VERSION = 1
FLUSH_AFTER_S = 0.05


class ReplayWriter:
    def __init__(self, directory: Path, match_id: str, flush_after_s: float = FLUSH_AFTER_S) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.final_path = directory / f"{match_id}.jsonl"
        self.partial_path = directory / f"{match_id}.jsonl.part"
        self.flush_after_s = flush_after_s
        self._file: IO[str] | None = self.partial_path.open("w", encoding="utf-8")
        self._due: float | None = None  # time.monotonic() by which the buffered lines are flushed

    def write(self, line: dict[str, Any]) -> None:
        self.write_json(json.dumps(line, separators=(",", ":"), ensure_ascii=False))

    def write_json(self, text: str) -> None:
        """Write one line already encoded: a JSON object on one line, as `write` would encode it."""
        if self._file is None:
            raise ValueError("the replay is already complete")
        self._file.write(text + "\n")
        if self._due is None:
            self._due = time.monotonic() + self.flush_after_s

    def flush_if_due(self) -> float | None:
        """Flush if the oldest buffered line is due; else the seconds until it is (None: nothing buffered)."""
        due = self._due
        if due is None:
            return None
        left = due - time.monotonic()
        if left > 0:
            return left
        self.flush()
        return None

    def flush(self) -> None:
        if self._file is not None and self._due is not None:
            self._file.flush()
        self._due = None

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
