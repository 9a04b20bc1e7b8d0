"""Live tables: each running match's public events, kept once and read by every web viewer.

A `MatchFeed` is one more spectator link of a match (the runner's `broadcast` sends it the
same `pb.Event`s as the gRPC Spectate stream: played cards, bids, a discard without its
card). The runner calls `send` on the trio thread and it only appends to a list and wakes
the parked viewers: it never waits and never copies an event per viewer. Each viewer keeps
only a cursor into that list and sends what it has not sent yet, at most `FRAME_S` apart; a
viewer whose connection does not take its data in time is dropped by the HTTP side (its
send timeout), so nothing is buffered per viewer beyond the socket.

The list holds the current deal only (from its `deal_started`): a late viewer gets the
current position as those events plus the scores so far, then the updates.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import trio
from google.protobuf.json_format import MessageToDict

from ..live import Hub
from ..referee.runner import MatchRunner
from ..v1 import arena_pb2 as pb

FRAME_S = 0.5
"""The shortest time between two updates to one viewer: many decisions make one update."""


def event_dict(event: pb.Event) -> dict[str, Any]:
    """A public event as JSON data: `{"deal": 0, "action_taken": {"seat": 1, "action": {...}}}`."""
    data = MessageToDict(event, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    return data


class MatchFeed:
    """One match's public events for the web (a `Link` of its runner's spectators)."""

    def __init__(self, runner: MatchRunner, on_close: Callable[[MatchFeed], None]) -> None:
        self.runner = runner
        self.match_id = runner.match_id
        self.open = True
        self.deal = -1
        self.scores: list[int] = [0] * len(runner.config.seat_names)
        self.deals_done = 0
        self._events: list[pb.Event] = []  # the current deal's, as the runner sent them
        self._json: list[str] = []  # their JSON text, made when a viewer first needs it
        self.base = 0  # the index, counted over the whole match, of `_events[0]`
        self._batch: tuple[int, int, str] = (-1, -1, "")  # the last batch made: viewers share it
        self._lot = trio.lowlevel.ParkingLot()
        self._on_close = on_close

    # -- the runner's side (trio thread, inside `broadcast`): cheap and never blocking

    def send(self, message: Any) -> None:
        if not isinstance(message, pb.Event):
            return
        if message.WhichOneof("kind") == "deal_started":
            self.base += len(self._events)
            self._events, self._json = [], []
            self.deal = message.deal
        elif message.WhichOneof("kind") == "deal_ended":
            self.scores = list(message.deal_ended.scores)
            self.deals_done = message.deal + 1
        self._events.append(message)
        self._lot.unpark_all()

    def close(self, code: Any = None, details: str = "") -> None:
        if self.open:
            self.open = False
            self._lot.unpark_all()
            self._on_close(self)

    # -- the viewers' side

    @property
    def end(self) -> int:
        """One past the index of the last event so far, counted over the whole match."""
        return self.base + len(self._events)

    def events_since(self, cursor: int) -> tuple[list[str], int]:
        """The JSON texts of the events from `cursor` on (from the deal's start if that is gone)."""
        start = max(cursor, self.base) - self.base
        while len(self._json) < len(self._events):
            self._json.append(json.dumps(event_dict(self._events[len(self._json)]), separators=(",", ":")))
        return self._json[start:], self.end

    def batch_since(self, cursor: int) -> tuple[str, int]:
        """`events_since` as one JSON array text ("" when there is none), made once for every
        viewer at the same cursor (viewers started together stay together)."""
        start, end, text = self._batch
        if (start, end) != (cursor, self.end):
            events, end = self.events_since(cursor)
            text = "[" + ",".join(events) + "]" if events else ""
            self._batch = (cursor, end, text)
        return text, end

    def snapshot(self) -> dict[str, Any]:
        """The current position: the match, its scores so far and the current deal's events."""
        events, _ = self.events_since(self.base)
        c = self.runner.config
        return {
            "match_id": self.match_id,
            "variant": c.variant.name,
            "seats": list(c.seat_names),
            "deals": c.deals,
            "deals_done": self.deals_done,
            "scores": self.scores,
            "state": self.runner.state.value,
            "events": [json.loads(e) for e in events],
        }

    async def wait_past(self, cursor: int) -> None:
        """Return once there is an event at or past `cursor`, or the match has ended."""
        if self.open and self.end <= cursor:
            await self._lot.park()


class Feeds:
    """A feed for every match the hub creates from now on, while it runs."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.feeds: dict[str, MatchFeed] = {}
        hub.match_watchers.append(self._watch)

    def _watch(self, runner: MatchRunner) -> None:
        feed = MatchFeed(runner, self._closed)
        self.feeds[runner.match_id] = feed
        runner.spectators.append(feed)

    def _closed(self, feed: MatchFeed) -> None:
        self.feeds.pop(feed.match_id, None)

    def get(self, match_id: str) -> MatchFeed | None:
        return self.feeds.get(match_id)
