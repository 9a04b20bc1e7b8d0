"""The replay log of a match: JSON lines written as the match goes.

Line types, in order: ``header``; per deal ``deal_start``, one ``action`` per
decision (with think time and fault), ``deal`` (the complete deal record of
replays/FORMAT.md, each action annotated with ``think_ms`` and ``fault``);
``connection`` lines whenever a seat drops or comes back; ``match_end`` last.

Each line is flushed as it is written, so a crash loses at most the move in
flight.  The log is written to ``<id>.jsonl.part`` and renamed to ``<id>.jsonl``
when the match ends: a file with the final name is always complete.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

REPLAY_FORMAT = "arena-replay"
REPLAY_VERSION = 1


class ReplayWriter:
    def __init__(self, directory: Path, match_id: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.final_path = directory / f"{match_id}.jsonl"
        self.partial_path = directory / f"{match_id}.jsonl.part"
        self._file: IO[str] | None = self.partial_path.open("w", encoding="utf-8")

    def write(self, line: dict[str, Any]) -> None:
        if self._file is None:
            raise ValueError("the replay is already complete")
        self._file.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")
        self._file.flush()

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
