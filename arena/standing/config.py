"""The standing arena's settings, checked when they are read."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..engine import VARIANT_NAMES, find_variant
from ..referee.seat import TimeControl


@dataclass(frozen=True)
class ArenaConfig:
    """How the standing arena runs; `arena serve --arena-config FILE` reads it from TOML."""

    variants: tuple[str, ...] = VARIANT_NAMES
    deals: int = 0  # dealer turns per match; 0 = one per seat
    per_decision_ms: int = 5_000
    bank_ms: int = 30_000
    increment_ms: int = 0
    latency_allowance_ms: int = 0  # see TimeControl; 0 charges a bot's network to its clock
    max_matches_per_bot: int = 4  # at once, over all of a bot's lobby streams
    joins_per_minute: float = 20.0  # per bot, after a burst of `join_burst`
    join_burst: int = 5
    pause_after: int = 3  # matches in a row with a fault pause a bot ...
    pause_s: float = 600.0  # ... for this long (or until `arena bots resume`)
    reconnect_grace_s: float = 10.0
    start_timeout_s: float = 30.0
    tick_s: float = 0.2  # how often tables are formed
    revocation_poll_s: float = 1.0  # how often the store is read for tokens revoked by `arena bots`
    # Several servers on one PostgreSQL store (docs/ARENA.md): how often a server says it lives,
    # and how long the others wait for it before recording its matches as aborted.
    heartbeat_s: float = 1.0
    server_dead_after_s: float = 5.0
    # Submitted bots this server runs (`arena serve --hosted`, docs/SUBMIT.md): matches at once of
    # each hosted bot on this server, how long a warm process may idle, how often the store is
    # read for the active versions.
    hosted_matches: int = 1
    hosted_idle_s: float = 60.0
    hosted_poll_s: float = 1.0

    def __post_init__(self) -> None:
        for name in self.variants:
            find_variant(name)  # raises ConfigError with the known names
        if not self.variants:
            raise ValueError("the arena runs at least one variant")
        if self.latency_allowance_ms < 0:
            raise ValueError("latency_allowance_ms is 0 or more")
        for name in ("max_matches_per_bot", "join_burst", "pause_after", "hosted_matches"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} is at least 1")
        for name in (
            "joins_per_minute",
            "pause_s",
            "tick_s",
            "revocation_poll_s",
            "start_timeout_s",
            "heartbeat_s",
            "server_dead_after_s",
            "hosted_idle_s",
            "hosted_poll_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.server_dead_after_s < 2 * self.heartbeat_s:
            raise ValueError("server_dead_after_s is at least twice heartbeat_s")

    @classmethod
    def from_toml(cls, path: Path) -> ArenaConfig:
        """Read the `[arena]` table of a TOML file; unknown keys are an error."""
        with path.open("rb") as file:
            data = tomllib.load(file).get("arena", {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"{path}: unknown [arena] keys {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        if "variants" in data:
            data["variants"] = tuple(data["variants"])
        try:
            return replace(cls(), **data)
        except TypeError as exc:
            raise ValueError(f"{path}: {exc}") from None

    @property
    def time_control(self) -> TimeControl:
        return TimeControl(self.per_decision_ms, self.bank_ms, self.increment_ms, self.latency_allowance_ms)
