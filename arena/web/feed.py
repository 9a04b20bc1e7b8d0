"""Live tables: each running match's public events, kept once and read by every web viewer.

A `MatchFeed` is one more spectator link of a match (the runner's `broadcast` sends it the
same `pb.Event`s as the gRPC Spectate stream: played cards, bids, a discard without its
card). The runner calls `send` on the trio thread and it only appends to a list and wakes
the viewers parked on an idle match: it never waits and never copies an event per viewer.
Each viewer keeps only a cursor into that list. Viewers wake by groups on a shared clock
(`ViewerClock`), each every `FRAME_S` (longer when there are more viewers than the site's
budget of updates a second, `UPDATES_PER_S`, allows), and the first one of a group's tick makes that tick's
update, encoded once as the bytes of a server-sent event, which every viewer at the same
cursor then sends as it is: the work per viewer per frame of a match in play is one wakeup
and one socket write.

A viewer whose connection does not take its data is dropped by the HTTP side when one write
has waited `send_timeout_s` (app.py); until then it holds a cursor and the one update it is
writing, never a queue: a stuck viewer cannot make the server buffer more than that and what
the kernel's socket buffer holds, and the runner never waits for it.

The list holds the current deal only (from its `deal_started`): a late viewer gets the
current position as those events plus the scores so far, then the updates.

Each update also carries the drawn table's state (`arena/replay/table.py`), made from the
public facts of the runner's deal in play (`MatchRunner.deal_state`) for all the match's viewers
at once, only when a viewer is sent an update, and at most once every `TABLE_S` of the viewers'
clock (the ten groups' ticks in between send the same one): a table costs more than a viewer's
write, and this way the site's viewers cost the referee what they did before the tables were
drawn. The runner's side only notes the time of each event (the clock of the seat to act runs
from it). The table holds what every seat knows and nothing else (no hand, no laid-away card,
the partner once public).
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from json.encoder import encode_basestring_ascii as _string  # what json.dumps uses for a str
from typing import Any

import trio
from google.protobuf.json_format import MessageToDict
from sse_starlette import ServerSentEvent

from ..live import Hub
from ..referee.runner import MatchRunner
from ..replay.table import LABELS, js_int, public_view, table_state
from ..v1 import arena_pb2 as pb

KEEP_ENDED = 500
"""Ended matches of this server listed by the site (as the hub keeps for ListMatches); the
standing arena's are in its store as well, for good."""

FRAME_S = 0.5
"""The time between two updates to one viewer, at least: many decisions make one update."""
UPDATES_PER_S = 200
"""The site's budget of live updates a second, all viewers together: beyond `FRAME_S` ×
this many viewers, each one's frame grows (`ViewerClock.frame`), so that watching costs the
referee the same however many watch. Each update is work on the server's trio thread, the one
the referee decides on, so the budget bounds what viewers take from the matches (docs/ARENA.md,
"The site's budget of updates")."""
VIEWER_GROUPS = 10
"""Live viewers wake in this many groups spread over each frame (`ViewerClock`)."""
TABLE_S = FRAME_S
"""A match's drawn table is made again at most this often (viewers' clock time): an update sent
meanwhile carries the last one made, a little behind its events."""
PING_S = 15.0
"""A live viewer that has been sent nothing for this long (its match waits for its bots, or
they think) is sent a keep-alive comment, so that a proxy keeps its connection open."""


def viewer_frame(frame_s: float, viewers: int, updates_per_s: float) -> float:
    """The time between two updates to one of `viewers` viewers: `frame_s`, or longer when they
    would be more than `updates_per_s` updates a second in all."""
    return max(frame_s, viewers / updates_per_s)


class ViewerClock:
    """When live viewers send their updates: each viewer once a frame, the viewers dealt
    round `groups` groups whose ticks are spread over the frame. The frame is `frame_s`, or
    longer when more viewers follow the clock than `updates_per_s` allows at that frame.

    One task keeps the time and, at a group's tick, wakes the group's parked viewers at once:
    trio runs them in one batch, and the first of them makes the update that the others at the
    same cursor send as it is. The referee waits for one group's writes at a time, never for
    every viewer's at once, and a viewer's wait is a parking lot's (no timer of its own)."""

    def __init__(
        self, frame_s: float = FRAME_S, groups: int = VIEWER_GROUPS, updates_per_s: float = UPDATES_PER_S
    ) -> None:
        self.frame_s = frame_s
        self.groups = groups
        self.updates_per_s = updates_per_s
        self.viewers = 0  # following the clock now (`join` to `leave`)
        self._lots = [trio.lowlevel.ParkingLot() for _ in range(groups)]
        self._ticks = [0.0] * groups  # each group's last tick (trio time): the frame's name
        self._dealt = 0
        self._wanted = trio.Event()

    def join(self) -> int:
        """A new viewer follows the clock: its group. `leave` when it stops."""
        self.viewers += 1
        self._dealt += 1
        return self._dealt % self.groups

    def leave(self) -> None:
        self.viewers -= 1

    def frame(self) -> float:
        """The time between two updates to one viewer now."""
        return viewer_frame(self.frame_s, self.viewers, self.updates_per_s)

    async def tick(self, group: int) -> float:
        """Wait for the group's next tick; its time, the same for every viewer of the group."""
        self._wanted.set()
        await self._lots[group].park()
        return self._ticks[group]

    async def run(self) -> None:
        while True:
            if not any(self._lots):  # nobody waits: sleep until a viewer does
                self._wanted = trio.Event()
                await self._wanted.wait()
            # When the frame changes (viewers come or go) the ticks move onto the new step: a
            # group may tick once early or late, and no viewer waits more than a frame or two.
            step = self.frame() / self.groups
            tick = (math.floor(trio.current_time() / step) + 1) * step
            await trio.sleep_until(tick)
            group = round(tick / step) % self.groups
            self._ticks[group] = tick
            self._lots[group].unpark_all()


_UPDATE_HEAD, _UPDATE_TAIL = ServerSentEvent(data="\0", event="update").encode().split(b"\0")
"""sse-starlette's encoding of an `update` event around its data: the data goes between them."""


_TABLE_HEAD, _TABLE_TAIL = ServerSentEvent(data="\0", event="table").encode().split(b"\0")


def encode_table(table: str) -> bytes:
    """A `table` server-sent event whose data is `table` (JSON text: one `data:` line)."""
    return _TABLE_HEAD + table.encode() + _TABLE_TAIL


def encode_update(events: list[str]) -> bytes:
    """An `update` server-sent event whose data is the JSON array of `events` (JSON texts).

    The same bytes as `ServerSentEvent(data=..., event="update").encode()`, which would search
    the whole text for line breaks with a regular expression, on every update of every table, to
    split it into `data:` lines: JSON text has none (the encoder escapes them within strings), so
    it is one `data:` line, put between the library's own encoding of the rest."""
    return _UPDATE_HEAD + ("[" + ",".join(events) + "]").encode() + _UPDATE_TAIL


def event_dict(event: pb.Event) -> dict[str, Any]:
    """A public event as JSON data: `{"deal": 0, "action_taken": {"seat": 1, "action": {...}}}`.

    The same as protobuf's `MessageToDict` (field names as in the proto, every field), read
    field by field: `MessageToDict` works through descriptors and costs more than the
    referee's own work on a decision, and every event of a watched match passes here once."""
    kind = event.WhichOneof("kind")
    body: dict[str, Any]
    if kind == "action_taken":
        taken = event.action_taken
        body = {"seat": taken.seat}
        if taken.HasField("action"):
            a = taken.action
            body["action"] = {"type": a.type, "card": a.card, "suit": a.suit, "name": a.name}
    elif kind == "trick_completed":
        trick = event.trick_completed
        body = {"number": trick.number, "winner": trick.winner}
    elif kind == "deal_started":
        started = event.deal_started
        body = {"dealer": started.dealer, "pots": {k: js_int(v) for k, v in started.pots.items()}}
    elif kind == "deal_ended":
        ended = event.deal_ended
        body = {
            "annulled": ended.annulled,
            "card_points": list(ended.card_points),
            "deltas": [js_int(d) for d in ended.deltas],
            "pots": {k: js_int(v) for k, v in ended.pots.items()},
            "scores": [js_int(s) for s in ended.scores],
        }
    elif kind == "fault":
        fault = event.fault
        body = {"seat": fault.seat, "kind": fault.kind, "detail": fault.detail}
    else:  # no kind
        return json_mapping(event)
    return {"deal": event.deal, kind: body}


def event_json(event: pb.Event) -> str:
    """`event_dict` as compact JSON text (`json.dumps` with `separators=(",", ":")`), byte for
    byte. A played card, a bid, a call, a trick's end (most events by far) is written straight
    from its fields, each string escaped by `json`'s own encoder: a watched match passes every event
    here once, at the rate the referee decides."""
    kind = event.WhichOneof("kind")
    if kind == "action_taken" and event.action_taken.HasField("action"):
        taken = event.action_taken
        a = taken.action
        return (
            f'{{"deal":{event.deal},"action_taken":{{"seat":{taken.seat},"action":{{"type":{_string(a.type)},'
            f'"card":{_string(a.card)},"suit":{_string(a.suit)},"name":{_string(a.name)}}}}}}}'
        )
    if kind == "trick_completed":
        t = event.trick_completed
        return f'{{"deal":{event.deal},"trick_completed":{{"number":{t.number},"winner":{t.winner}}}}}'
    return json.dumps(event_dict(event), separators=(",", ":"))


def json_mapping(message: Any) -> dict[str, Any]:
    """Protobuf's JSON mapping of a message, with the proto's field names and every field."""
    return MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


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
        # The frame being sent: its tick, the end it stops at, and its update per start cursor.
        self._frame_at = -1.0
        self._frame_end = 0
        self._updates: dict[int, bytes] = {}
        self._lot = trio.lowlevel.ParkingLot()
        self._on_close = on_close
        self._event_ms = now_ms()  # when the last event came: the clock of the seat to act runs from it
        self._table_at = -1  # the `end` the table below was made at
        self._table_tick = -math.inf  # and the viewers' tick it was made at
        self._table = b""

    # -- the runner's side (trio thread, inside `broadcast`): cheap and never blocking

    def send(self, message: Any) -> None:
        if not isinstance(message, pb.Event):
            return
        kind = message.WhichOneof("kind")
        if kind == "deal_started":
            self.base += len(self._events)
            self._events, self._json = [], []
            self.deal = message.deal
        elif kind == "deal_ended":
            self.scores = list(message.deal_ended.scores)
            self.deals_done = message.deal + 1
        self._events.append(message)
        self._event_ms = int(time.time() * 1000)
        self._lot.unpark_all()

    def close(self, code: Any = None, details: str = "") -> None:
        if self.open:
            self.open = False
            self._lot.unpark_all()
            self._on_close(self)

    def wake(self) -> None:
        """Wake the viewers that wait for an event, to see whether a keep-alive is due."""
        self._lot.unpark_all()

    # -- the viewers' side

    @property
    def end(self) -> int:
        """One past the index of the last event so far, counted over the whole match."""
        return self.base + len(self._events)

    def events_since(self, cursor: int, end: int | None = None) -> list[str]:
        """The JSON texts of the events from `cursor` (from the deal's start if that is gone) to
        `end` (the last so far if None), both counted over the whole match."""
        start = max(cursor, self.base) - self.base
        while len(self._json) < len(self._events):
            self._json.append(event_json(self._events[len(self._json)]))
        return self._json[start:] if end is None else self._json[start : max(0, end - self.base)]

    def update_at(self, frame: float, cursor: int) -> tuple[bytes, int]:
        """The `update` event (b"" if none) for a viewer at `cursor` woken at tick `frame`, and
        its new cursor. Every viewer of one tick stops at the same end, so the viewers that
        were in step stay in step and share one update, made by the first of them."""
        if frame != self._frame_at:
            self._frame_at, self._frame_end, self._updates = frame, self.end, {}
        end = self._frame_end
        update = self._updates.get(cursor)
        if update is None:
            events = self.events_since(cursor, end) if cursor < end else []
            update = self._updates[cursor] = (
                encode_update(events) + self.table_event(frame) if events else b""
            )
        return update, max(cursor, end)

    def table(self) -> dict[str, Any] | None:
        """The drawn table now as every seat sees it (`arena.replay.table`), None before a deal."""
        state = self.runner.deal_state
        if state is None:
            return None
        c = self.runner.config
        per = c.time_control.per_decision_ms
        clocks: list[dict[str, Any] | None] = []
        for seat in self.runner.seats:
            limit = per + seat.bank_ms
            deadline = self._event_ms + limit if seat.index == state.turn else None
            clocks.append({"deadline_ms": deadline, "limit_ms": limit, "bank_ms": seat.bank_ms})
        return table_state(
            public_view(state),
            c.seat_names,
            scores=self.scores,
            clocks=clocks,
            deal=self.deal,
            deals=c.deals,
            now_ms=now_ms(),
        )

    def table_event(self, tick: float = math.inf) -> bytes:
        """The `table` event for viewers woken at `tick`: the table now, or the one made less than
        `TABLE_S` ago (one for every viewer of the match meanwhile). A tick of -1 (the match's
        last update) or none always gets the table now."""
        stale = tick < 0 or tick == math.inf or tick - self._table_tick >= TABLE_S
        if self._table_at != self.end and stale:
            table = self.table()
            self._table = encode_table(json.dumps(table, separators=(",", ":"))) if table is not None else b""
            self._table_at, self._table_tick = self.end, tick
        return self._table

    def snapshot(self) -> str:
        """The current position as JSON text: the match, its scores so far and the current
        deal's events (their JSON texts joined, not decoded and encoded again)."""
        c = self.runner.config
        head = {
            "match_id": self.match_id,
            "variant": c.variant.name,
            "seats": list(c.seat_names),
            "deals": c.deals,
            "deals_done": self.deals_done,
            "scores": [js_int(s) for s in self.scores],
            "state": self.runner.state.value,
            "table": self.table(),
            "labels": LABELS,
        }
        return json.dumps(head)[:-1] + ', "events": [' + ",".join(self.events_since(self.base)) + "]}"

    async def wait_past(self, cursor: int) -> None:
        """Return once there is an event at or past `cursor`, or the match has ended."""
        if self.open and self.end <= cursor:
            await self._lot.park()


def now_ms() -> int:
    return int(time.time() * 1000)


def match_summary(runner: MatchRunner, started_ms: int, finished_ms: int | None) -> dict[str, Any]:
    """A match of this server as the site lists it (as `data.match` gives a stored one)."""
    c = runner.config
    return {
        "match_id": runner.match_id,
        "variant": c.variant.name,
        "deals": c.deals,
        "state": runner.state.value,
        "termination": runner.termination,
        "started_ms": started_ms,
        "finished_ms": finished_ms,
        "has_replay": runner.replay_path is not None,
        "seats": [
            {"bot": seat.name, "score": js_int(score), "faults": len(seat.faults)}
            for seat, score in zip(runner.seats, runner.match.scores, strict=False)
        ],
        "deals_done": runner.match.turns_done,
    }


class Feeds:
    """A feed for every match the hub creates from now on, while it runs, and a summary of the
    last `KEEP_ENDED` that ended: every match this server ran since it started, whoever
    created it (the standing arena, an operator's CreateMatch)."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.feeds: dict[str, MatchFeed] = {}
        self._started_ms: dict[str, int] = {}  # of the running ones
        self._ended: OrderedDict[str, dict[str, Any]] = OrderedDict()
        hub.match_watchers.append(self._watch)

    def _watch(self, runner: MatchRunner) -> None:
        feed = MatchFeed(runner, self._closed)
        self.feeds[runner.match_id] = feed
        self._started_ms[runner.match_id] = now_ms()
        runner.spectators.append(feed)

    def _closed(self, feed: MatchFeed) -> None:
        self.feeds.pop(feed.match_id, None)
        started = self._started_ms.pop(feed.match_id, now_ms())
        self._ended[feed.match_id] = match_summary(feed.runner, started, now_ms())
        while len(self._ended) > KEEP_ENDED:
            self._ended.popitem(last=False)

    async def keep_alive(self, every_s: float = PING_S) -> None:
        """Every `every_s`, wake every idle viewer (one timer for the whole site)."""
        while True:
            await trio.sleep(every_s)
            for feed in list(self.feeds.values()):
                feed.wake()

    def get(self, match_id: str) -> MatchFeed | None:
        return self.feeds.get(match_id)

    def summary(self, match_id: str) -> dict[str, Any] | None:
        """A match of this server, running or among the last ended, or None."""
        feed = self.feeds.get(match_id)
        if feed is not None:
            return match_summary(feed.runner, self._started_ms[match_id], None)
        ended = self._ended.get(match_id)
        return dict(ended, seats=[dict(s) for s in ended["seats"]]) if ended is not None else None

    def matches(self, bot: str = "", state: str = "", before_ms: int = 0) -> list[dict[str, Any]]:
        """This server's matches, newest first, optionally with a seat named `bot`, in `state`,
        started before `before_ms`."""
        found = []
        for match_id in [*self.feeds, *self._ended]:
            match = self.summary(match_id)
            if match is None:
                continue
            if bot and not any(seat["bot"] == bot for seat in match["seats"]):
                continue
            if (state and match["state"] != state) or (before_ms and match["started_ms"] >= before_ms):
                continue
            found.append(match)
        found.sort(key=lambda m: (m["started_ms"], m["match_id"]), reverse=True)
        return found
