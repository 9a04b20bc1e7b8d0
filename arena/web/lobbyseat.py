"""A person seated by the standing arena's lobby, as a bot is (`arena serve --http ADDR --play`).

The person gives a registered player's token (registered as a bot is, docs/ARENA.md) and a
variant; the site joins the lobby for them with an in-process lobby stream, the same mechanism
as the hosted bots' (`arena.standing.hosted.HostedLink`): the same checks (revoked, paused, join
rate, variants open to the player, matches at once), the same matchmaking, the same recording
and rating of the result. The stream carries the person's clock (`LobbyLink.person_clock`),
which the lobby gives every table it seats the person at. When the lobby's `Seated` comes, the
seat is taken by a `HumanLink` (as a hosted bot's process would dial in with the seat token)
and the stream leaves the lobby: one table per join, so a person is never seated at a second
table while playing, nor after closing the page.

With `opponents`, the person chooses the table instead of matchmaking: bots of the arena waiting
in the lobby now (registered bots dialled in, hosted bots) for that variant, seated at once by
the lobby's own `Tables.seat`, so the match is recorded and rated as any other.

Each waiting person has a secret page token (the table's token once seated); a page that stopped
asking for its place for `absent_s` has left the queue.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog
import trio

from ..referee.runner import MatchRunner
from ..referee.seat import TimeControl
from ..standing.hosted import HostedLink
from ..standing.lobby import Lobby
from ..standing.matchmaking import Candidate
from ..standing.state import LobbyStream
from ..v1 import arena_pb2 as pb
from .human import ABSENT_S, CHECK_S, TableError, Tables

log = structlog.get_logger()

MAX_WAITING = 32
"""People waiting in this server's lobby at once from the site; more are refused (503)."""
STATUS = {"RESOURCE_EXHAUSTED": 429, "INVALID_ARGUMENT": 400, "UNAVAILABLE": 503}
"""The site's answer to a join the lobby refuses with this gRPC status (otherwise 403)."""
KEEP_LEFT = 200
"""Ended places kept so that their pages can still read how they ended."""


class JoinError(ValueError):
    """The lobby turned the person away: `status` is the site's answer (401, 403, 409, 429, 503)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class PersonLink(HostedLink):
    """A person's lobby stream: in this process, like a hosted bot's, with the person's clock."""

    def __init__(self, place: Place, seats: LobbySeats, clock: TimeControl) -> None:
        super().__init__(lambda m: seats.message(place, m), lambda why: seats.closed(place, why))
        self.peer = "person"
        self.person_clock = clock


@dataclass
class Place:
    """One person's place in the lobby's queue, then at a table."""

    id: str
    token: str  # the page's; the table's token once seated
    bot: str  # the registered player
    variant: str
    state: str = "waiting"  # waiting, seated, left
    reason: str = ""  # why it left
    match_id: str = ""
    seat: int = -1
    since: float = field(default_factory=trio.current_time)
    seen_at: float = field(default_factory=trio.current_time)
    polls: int = 0
    link: PersonLink | None = None
    changed: trio.Event = field(default_factory=trio.Event)

    def wake(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    def describe(self) -> dict[str, object]:
        answer: dict[str, object] = {"place": self.id, "bot": self.bot, "variant": self.variant}
        answer.update(state=self.state, reason=self.reason)
        if self.state == "waiting":
            answer["waiting_s"] = round(trio.current_time() - self.since, 1)
        if self.state == "seated":
            url = f"/play/{self.match_id}#token={self.token}"
            answer.update(match_id=self.match_id, seat=self.seat, url=url)
        return answer


class LobbySeats:
    """The people the site put in the lobby's queue (trio thread)."""

    def __init__(self, lobby: Lobby, tables: Tables, absent_s: float = ABSENT_S) -> None:
        self.lobby = lobby
        self.tables = tables
        self.absent_s = absent_s
        self.places: dict[str, Place] = {}
        self._left: list[str] = []

    def variants(self) -> list[str]:
        return list(self.lobby.config.variants)

    def waiting_bots(self) -> dict[str, list[str]]:
        """The bots waiting in the lobby now with room for a match, each with its variants."""
        bots: dict[str, list[str]] = {}
        for stream in self.lobby.streams.values():
            if not isinstance(stream.link, PersonLink) and self._free(stream):
                known = bots.setdefault(stream.bot, [])
                known.extend(v for v in stream.variants if v not in known)
        return bots

    def _free(self, stream: LobbyStream) -> bool:
        limit = self.lobby.config.max_matches_per_bot
        return len(stream.running) < stream.capacity and self.lobby.running_by_bot[stream.bot] < limit

    def get(self, place_id: str) -> Place | None:
        return self.places.get(place_id)

    async def join(self, token: str, variant: str, clock: TimeControl, opponents: Sequence[str]) -> Place:
        """The registered player of `token` waits for a table of `variant` (or sits at once at a
        table with `opponents`, bots waiting in the lobby)."""
        lobby, state = self.lobby, self.lobby.state
        if lobby.cluster is not None:
            raise JoinError(409, "people are seated by the lobby of a single-server arena only")
        if variant not in lobby.config.variants:
            raise TableError(f"variant: this arena plays {', '.join(lobby.config.variants)}")
        seats = state.variants[variant].seats
        if opponents and (len(opponents) != seats - 1 or len(set(opponents)) != len(opponents)):
            raise TableError(f"opponents: {seats - 1} different bots for a table of {variant}")
        if sum(1 for p in self.places.values() if p.state == "waiting") >= MAX_WAITING:
            raise JoinError(503, f"{MAX_WAITING} people are waiting in the lobby; try again later")
        bot = await state.db(state.store.bot_by_token, token)
        if bot is None:
            raise JoinError(401, "no player registered in this arena has this token")
        ratings = await state.db(state.store.ratings_of, bot.name)
        place = Place(secrets.token_hex(8), secrets.token_urlsafe(24), bot.name, variant)
        chosen: list[LobbyStream] = []
        if opponents:  # checked before joining, so a refusal leaves nothing behind
            waiting = {
                s.bot: s
                for s in lobby.streams.values()
                if variant in s.variants and self._free(s) and not isinstance(s.link, PersonLink)
            }
            for name in opponents:
                if name == bot.name or name not in waiting:
                    raise TableError(f"{name!r} is not waiting in the lobby for {variant} now")
                chosen.append(waiting[name])
        link = PersonLink(place, self, clock)
        place.link = link
        request = pb.LobbyJoin(variants=[variant], max_matches=1)
        refusal = lobby.join(bot, request, link, ratings)
        if refusal is not None:
            link.open = False
            status = STATUS.get(refusal.code.name, 403)
            raise JoinError(status, refusal.details)
        self.places[place.id] = place
        log.info("a person waits in the lobby", bot=bot.name, variant=variant, opponents=list(opponents))
        if chosen:
            mine = lobby.streams[link.id]
            table = [Candidate(s.bot, s.link.id, 25.0, s.waiting_since) for s in [mine, *chosen]]
            lobby.tables.seat(variant, table)
        state.nursery.start_soon(self._watch, place)
        return place

    def message(self, place: Place, message: pb.LobbyMessage) -> None:
        if message.WhichOneof("kind") != "seated" or place.match_id or place.state != "waiting":
            return
        seated = message.seated
        runner = self.lobby.state.hub.matches.get(seated.match_id)
        if runner is None:
            return
        place.match_id, place.seat = seated.match_id, seated.seat
        # After the lobby's round: its seat is taken (a Hello) and its stream leaves the lobby.
        # The place says `seated` only then, so its page never asks for a table not there yet.
        self.lobby.state.nursery.start_soon(self._sit, place, runner)

    async def _sit(self, place: Place, runner: MatchRunner) -> None:
        assert place.link is not None
        self.tables.adopt(runner, place.seat, place.token)
        place.state = "seated"
        place.link.close(details="seated")
        log.info("the lobby seated a person", bot=place.bot, match_id=place.match_id, seat=place.seat)
        place.wake()

    def closed(self, place: Place, why: str) -> None:
        """The stream ended: seated, or turned away (paused, revoked, draining, left)."""
        if place.link is not None:
            self.lobby.leave(place.link)
        if place.state == "waiting" and not place.match_id:  # a seat given meanwhile is taken
            place.state, place.reason = "left", why
            self._forget(place)
        place.wake()

    def leave(self, place: Place, why: str = "left the queue") -> None:
        if place.state == "waiting" and place.link is not None:
            place.link.close(details=why)

    async def wait(self, place: Place, timeout_s: float) -> None:
        """Until the place changes (seated, left) or `timeout_s` passed."""
        place.polls += 1
        try:
            if place.state == "waiting":
                with trio.move_on_after(timeout_s):
                    await place.changed.wait()
        finally:
            place.polls -= 1
            place.seen_at = trio.current_time()

    async def _watch(self, place: Place) -> None:
        """A page that stopped asking has left the queue."""
        while place.state == "waiting":
            await trio.sleep(CHECK_S)
            away = 0.0 if place.polls else trio.current_time() - place.seen_at
            if place.state == "waiting" and away > self.absent_s:
                self.leave(place, "the page stopped asking")
        if place.state == "seated":
            self._forget(place)

    def _forget(self, place: Place) -> None:
        self._left.append(place.id)
        while len(self._left) > KEEP_LEFT:
            self.places.pop(self._left.pop(0), None)
