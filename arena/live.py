"""The live layer: every running match of a server, its seat tokens and its spectators.

`Hub` lives on the trio thread. The transport (arena/server) authenticates a bot stream
by looking its token up in `Hub.tokens` and hands the stream to the seat's host; the
services (the standing arena, ladders, the conformance kit) start matches through
`create_match` or lend a seat host for a while with `admit`. Nothing here knows gRPC
beyond the generated message types.
"""

from __future__ import annotations

import collections
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import structlog
import trio

from .referee.runner import MatchConfig, MatchRunner, MatchState
from .referee.seat import Link
from .v1 import arena_pb2 as pb

log = structlog.get_logger()

KEEP_FINISHED = 500
"""Ended matches kept in memory for ListMatches; older ones are only on disk (their replays)."""


class SeatHost(Protocol):
    """What a bot stream talks to: a match (`MatchRunner`) or a position runner (`PositionRunner`)."""

    def attach(self, seat_index: int, link: Link) -> None: ...

    def deliver(self, seat_index: int, link: Link, message: Any) -> None: ...

    def detach(self, seat_index: int, link: Link) -> None: ...

    def reject(self, seat_index: int, link: Link, detail: str) -> None: ...


class Hub:
    """Every match of this server, on the trio thread."""

    def __init__(self, replay_dir: Path, nursery: trio.Nursery) -> None:
        self.replay_dir = replay_dir
        self.nursery = nursery
        self.matches: dict[str, MatchRunner] = {}
        # Read from the transport's thread to authenticate streams; written only here.
        self.tokens: dict[str, tuple[SeatHost, int]] = {}
        self.keep_ended = KEEP_FINISHED
        self._ended: collections.deque[str] = collections.deque()
        # Called with each new match before it runs (the web's live tables attach a spectator).
        self.match_watchers: list[Callable[[MatchRunner], None]] = []

    def create_match(
        self,
        config: MatchConfig,
        tokens: Mapping[int, str] | None = None,
        match_id: str | None = None,
        make: Callable[[str, MatchConfig, Path], MatchRunner] = MatchRunner,
    ) -> MatchRunner:
        """Start a match; `tokens` gives chosen seats a token of the caller's (e.g. a remote bot's),
        `match_id` an id chosen by the caller (the standing arena books it in its store first),
        `make` a runner of the caller's (a match played on from a recorded position)."""
        match_id = match_id or secrets.token_hex(8)
        if match_id in self.matches:
            raise ValueError(f"match {match_id} exists already")
        runner = make(match_id, config, self.replay_dir)
        for seat_index, token in (tokens or {}).items():
            if token in self.tokens:
                raise ValueError(f"token of seat {seat_index} already speaks for another seat")
            runner.seats[seat_index].token = token
        self.matches[match_id] = runner
        for seat in runner.seats:
            self.tokens[seat.token] = (runner, seat.index)
        for watch in self.match_watchers:
            watch(runner)
        self.nursery.start_soon(self._run, runner)
        return runner

    async def _run(self, runner: MatchRunner) -> None:
        try:
            await runner.run()
        except Exception:  # one match's failure never takes down the server or another match
            runner.log.exception("match aborted")
        finally:
            for seat in runner.seats:
                self.tokens.pop(seat.token, None)
            # A standing server runs matches for days: forget the oldest ended ones.
            self._ended.append(runner.match_id)
            while len(self._ended) > self.keep_ended:
                self.matches.pop(self._ended.popleft(), None)

    def cut_off(self) -> list[str]:
        """The matches that ended without finishing (a stop, or a failure of the server's)."""
        return [m for m, runner in self.matches.items() if runner.state is not MatchState.FINISHED]

    def forget(self, match_id: str) -> None:
        """Drop an ended match from memory now (a long ladder keeps no finished runners)."""
        self.matches.pop(match_id, None)

    def revoke_seat(self, token: str) -> None:
        """A seat token stops authenticating streams (its bot's own token was revoked)."""
        self.tokens.pop(token, None)

    @contextmanager
    def admit(self, host: SeatHost, tokens: Mapping[int, str]) -> Iterator[None]:
        """Let streams with these seat tokens reach `host` for the `with` block.

        For seat hosts that are not matches (a `PositionRunner`): ListMatches, GetReplay and
        Spectate never see them."""
        for seat_index, token in tokens.items():
            self.tokens[token] = (host, seat_index)
        try:
            yield
        finally:
            for token in tokens.values():
                self.tokens.pop(token, None)

    def list_matches(self) -> list[pb.MatchInfo]:
        return [
            pb.MatchInfo(
                match_id=r.match_id,
                variant=r.config.variant.name,
                state=r.state.value,
                seat_names=list(r.config.seat_names),
                deals_done=r.match.turns_done,
                deals=r.config.deals,
                scores=[] if r.abort_reason else r.match.scores,  # aborted: they may be beyond int64
            )
            for r in self.matches.values()
        ]

    def replay_path(self, match_id: str) -> tuple[str, Path | None]:
        runner = self.matches.get(match_id)
        if runner is not None:
            return runner.state.value, runner.replay_path
        path = self.replay_dir / f"{match_id}.jsonl"
        return ("finished", path) if path.exists() else ("unknown", None)

    def add_spectator(self, match_id: str, link: Link) -> bool:
        runner = self.matches.get(match_id)
        if runner is None or runner.state in (MatchState.FINISHED, MatchState.ABORTED):
            return False
        runner.spectators.append(link)
        return True
