"""Results that wait on disk until the store takes them: the pending-results journal.

A match's replay is complete on disk (fsynced, renamed); then, before its bots are told it ended
(the runner's `before_end`), its server writes a small record of what the store must learn (the
result; for a match cut off when the server stops, that it was aborted) to
``REPLAY_DIR/pending-results/MATCH_ID.json``, fsynced, before it asks the store; the record goes
once the store has it. So a result survives a database that is
down, a server that stops meanwhile (the next server started on the same replay directory records
it) and a server that dies; and it is recorded exactly once, because the store takes a result
only for a match it still has running (`Store.finish_match`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import structlog

log = structlog.get_logger()

PENDING_DIR = "pending-results"
MATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass
class PendingRecord:
    """What the store must learn about one match: `kind` 'result' (it finished; its replay is
    `replay` in the replay directory) or 'abort' (it did not finish, for `reason`)."""

    match_id: str
    kind: str
    variant: str
    bots: list[str]
    ended_ms: int
    replay: str = ""
    termination: str = ""
    forfeited: int | None = None
    scores: list[int] = field(default_factory=list)
    reason: str = ""


class Journal:
    """The pending records of one replay directory (worker threads)."""

    def __init__(self, replay_dir: Path) -> None:
        self.replay_dir = replay_dir
        self.directory = replay_dir / PENDING_DIR
        self._unreadable: set[Path] = set()  # logged once each

    def _path(self, match_id: str) -> Path:
        if not MATCH_ID.fullmatch(match_id):
            raise ValueError(f"match id {match_id!r} cannot name a file")
        return self.directory / f"{match_id}.json"

    def save(self, record: PendingRecord) -> None:
        """Write the record durably: a temporary file fsynced, renamed, the directory fsynced."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(record.match_id)
        partial = path.with_suffix(".part")
        with partial.open("w", encoding="utf-8") as file:
            json.dump(asdict(record), file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, path)
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def remove(self, match_id: str) -> None:
        self._path(match_id).unlink(missing_ok=True)

    def load(self) -> list[PendingRecord]:
        """Every pending record, oldest end first; an unreadable file is logged and left alone."""
        records = []
        try:
            paths = sorted(self.directory.glob("*.json"))
        except OSError:
            return []
        for path in paths:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                records.append(PendingRecord(**data))
            except FileNotFoundError:
                continue  # recorded meanwhile (by another server sharing the replay directory)
            except (OSError, ValueError, TypeError) as exc:
                if path not in self._unreadable:
                    self._unreadable.add(path)
                    log.error("unreadable pending result left in place", path=str(path), error=str(exc))
        records.sort(key=lambda r: (r.ended_ms, r.match_id))
        return records
