"""Submitted versions in offline ladders: a ladder bot with `version = "NAME@N"` runs that
version's built tree in the sandbox, on a CPU clock, as the standing arena runs a hosted version
(`processes.start_version`, the same limits and backstop); `ladder.player.SubmittedVersions`.

Every named version is looked up and unpacked before the first match, so a wrong name, a
version that is not active or a store that cannot be read is one clear error and nothing runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..sandbox import Sandbox
from ..standing.store import Store, StoreError
from ..standing.versions import VersionRecord, Versions
from .processes import RuntimeConfig, Trees, start_version


class LadderVersionError(ValueError):
    """A named version that cannot play: unknown, not active, or its store unreadable."""


def parse_version(text: str) -> tuple[str, int]:
    """`NAME@N` as (name, number); ValueError otherwise."""
    name, at, number = text.rpartition("@")
    if not at or not name or not number.isdigit() or int(number) < 1:
        raise ValueError(f"expected a submitted version as NAME@N, got {text!r}")
    return name, int(number)


class LadderVersions:
    """The versions a ladder's bots name, from the arena store at `store` (a SQLite path or a
    postgresql:// URL), their trees unpacked under `work_dir` (`arena bot build --work-dir`:
    the same directory shares the trees and the C++ protocol library)."""

    def __init__(self, store: str, work_dir: Path, names: Iterable[str]) -> None:
        self.config = RuntimeConfig(work_dir.resolve(), build_poll_s=0)
        self.records: dict[str, tuple[VersionRecord, Path]] = {}
        wanted = sorted(set(names))
        if not wanted:
            return
        if "://" not in store and not Path(store).is_file():
            raise LadderVersionError(f"{store}: no arena store here (store = PATH, or --store)")
        try:
            opened = Store(store)
        except StoreError as exc:
            raise LadderVersionError(f"{store}: {exc}") from None
        try:
            versions = Versions(opened)
            trees = Trees(versions, self.config.work_dir / "trees")
            for text in wanted:
                self.records[text] = self._prepare(versions, trees, text)
        except StoreError as exc:
            raise LadderVersionError(f"{store}: {exc}") from None
        finally:
            opened.close()

    @staticmethod
    def _prepare(versions: Versions, trees: Trees, text: str) -> tuple[VersionRecord, Path]:
        try:
            name, number = parse_version(text)
        except ValueError as exc:
            raise LadderVersionError(str(exc)) from None
        record = versions.version(name, number)
        if record.state != "active":
            why = f" ({record.reason})" if record.reason else ""
            raise LadderVersionError(
                f"{text} is {record.state}{why}: only an active version plays (arena bot build)"
            )
        return record, trees.tree(record)

    def version(self, text: str) -> VersionRecord:
        return self.records[text][0]

    def start(self, version: str, env: dict[str, str] | None, socket: Path, output: Path) -> Sandbox:
        record, tree = self.records[version]
        wall = self.config.per_match_wall_s if env is not None else None
        return start_version(record, tree, self.config, socket, env, output, wall)
