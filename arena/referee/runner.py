"""The referee: runs one match as a trio task, seat by seat, decision by decision.

A match knows `Seat`s, not gRPC: a seat receives messages through whatever link
is attached to it (`send`), and its bot's messages arrive in its inbox (`LinkHost`
judges them first).  Every
decision runs under a deadline; faults (illegal answers, timeouts, disconnects,
crashes, protocol errors) are recorded and handled by the match's fault policy.

The seats, their inboxes and the time control are in `seat.py`; the replay's `action` line
and the flusher of replay logs in `record.py`.
"""

from __future__ import annotations

import contextlib
import math
import random
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import structlog
import trio

from .. import __version__
from ..engine import (
    Action,
    ActionError,
    DealState,
    IllegalActionError,
    Match,
    Variant,
    deal_record,
)
from ..protocol import (
    ViewEncoder,
    action_from_message,
    action_taken_event,
    request_message,
    trick_completed_event,
)
from ..replay.log import (
    REPLAY_FORMAT,
    REPLAY_VERSION,
    ConnectionEvent,
    FaultKind,
    FaultPolicy,
    ReplayWriter,
    Termination,
)
from ..replay.summary import Results
from ..v1 import arena_pb2 as pb
from .cpuclock import CpuClock, CpuMeter, cpu_clock_header, late_detail
from .limits import OutOfRange, check_deal, match_end_line, match_end_message
from .record import action_line, complete_replay, deal_line, latency_fields, replay_flusher
from .seat import (
    ALARM,
    Alarm,
    CloseReason,
    Fault,
    InboxItem,
    Link,
    LinkChange,
    LinkHost,
    Seat,
    TimeControl,
)
from .seat import MatchState as MatchState  # re-exported: it lived here first

log = structlog.get_logger()

# A match whose bots answer synchronously (in-process) never waits: it lets the other tasks of its
# trio run (other matches, the watchdog, the flusher, the server) once this long has passed.
YIELD_AFTER_S = 0.005


@dataclass(frozen=True)
class MatchConfig:
    variant: Variant
    deals: int
    seed: int
    seat_names: tuple[str, ...]
    time_control: TimeControl = TimeControl()  # noqa: RUF009 (frozen: one shared default is safe)
    fault_policy: FaultPolicy | str = FaultPolicy.SUBSTITUTE  # a string is made a `FaultPolicy` here
    max_invalid: int = 3
    reconnect_grace_s: float = 10.0
    start_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if len(self.seat_names) != self.variant.seats:
            raise ValueError(
                f"{self.variant.name} has {self.variant.seats} seats, got {len(self.seat_names)} names"
            )
        try:
            object.__setattr__(self, "fault_policy", FaultPolicy(self.fault_policy))
        except ValueError:
            raise ValueError(f"fault policy {self.fault_policy!r}: expected substitute or forfeit") from None
        if self.deals < 1:
            raise ValueError("a match has at least one deal")
        if self.max_invalid < 1:
            raise ValueError("max_invalid is at least 1")


class Decided(NamedTuple):
    """A decision's outcome: the action played, the measured time, the fault, the latency used."""

    action: Action
    think_ms: int
    fault: Fault | None
    rtt_ms: int | None  # the seat's round-trip estimate when asked (None: off, or no estimate yet)
    allowance_ms: int  # the part of think_ms not charged to the seat's clock
    cpu_ms: int | None = None  # the CPU charged, for a seat on a CPU clock


class Forfeit(Exception):
    def __init__(self, fault: Fault) -> None:
        super().__init__(fault.detail)
        self.fault = fault


class MatchRunner(LinkHost):
    """One match: its seats, its engine match, its replay log."""

    def __init__(self, match_id: str, config: MatchConfig, replay_dir: Path) -> None:
        self.match_id = match_id
        self.config = config
        self.replay_dir = replay_dir
        self.state = MatchState.WAITING
        self.seats = [
            Seat(i, name, secrets.token_urlsafe(24), config.time_control.bank_ms)
            for i, name in enumerate(config.seat_names)
        ]
        self.match = Match(config.variant, seed=config.seed, deals=config.deals)
        self.spectators: list[Link] = []
        # The deal in play (changed in place as it goes), read by the live tables (web/feed.py).
        self.deal_state: DealState | None = None
        self.replay_path: Path | None = None
        self.termination: Termination | str = ""  # "" until the match ends
        self.forfeited: int | None = None
        self.abort_reason = ""  # why a match that ran ended aborted (limits.py)
        self.done = trio.Event()
        # Awaited once the replay is complete and before any bot is told the match ended: a service
        # makes the result durable there (the standing arena journals it), so nobody hears of a
        # result that a crash could still lose.
        self.before_end: Callable[[], Awaitable[None]] | None = None
        self._all_ready = trio.Event()
        self._request_ids = iter(range(1, 2**62))
        self.decisions = 0
        self._writer: ReplayWriter | None = None  # opened when the match runs
        self._early: list[dict[str, Any]] = []  # lines of before that, written after the header
        # What the replay says of the results, counted as its lines are written: what
        # `read_results` would read back from the finished log, without reading it.
        self.results = Results.empty(len(self.seats))
        # The decision in progress is woken at `_alarm` (trio time) by the watchdog task.
        self._alarm = math.inf
        self._alarm_scope: trio.CancelScope | None = None
        self._waiting: Seat | None = None
        self._yielded = 0.0  # time.perf_counter() when `_play` last let other tasks run
        self._now = trio.current_time  # the run's clock, read without trio's lookups once it runs
        self.log = log.bind(match_id=match_id)

    # ------------------------------------------------------------------ links (called on the trio thread)

    def seat_for(self, seat_index: int) -> Seat:
        return self.seats[seat_index]

    def _hello_accepted(self, seat: Seat, hello: pb.Hello, was_away: bool) -> None:
        if was_away:
            self._write({"type": "connection", "seat": seat.index, "event": ConnectionEvent.RECONNECTED})
        self._write(
            {
                "type": "hello",
                "seat": seat.index,
                "bot_name": hello.bot_name,
                "bot_version": hello.bot_version,
                "protocol_version": hello.protocol_version,
            }
        )
        self._check_ready()

    def _link_lost(self, seat: Seat) -> None:
        self._write({"type": "connection", "seat": seat.index, "event": ConnectionEvent.DISCONNECTED})
        self.log.info("bot disconnected", seat=seat.index)

    def _fault_recorded(self, seat: Seat, detail: str) -> None:
        fault = Fault(seat.index, FaultKind.PROTOCOL, detail)
        seat.faults.append(fault)
        self._write({"type": "fault", **fault.to_dict()})

    def mark_crashed(self, seat_index: int, detail: str) -> None:
        """The launcher saw the bot's process end: later faults of this seat are crashes."""
        seat = self.seats[seat_index]
        seat.crashed = True
        line = {"type": "connection", "seat": seat_index, "event": ConnectionEvent.CRASHED, "detail": detail}
        self._write(line)
        self._push(seat, LinkChange(False))  # a pending decision applies the fault policy now
        self._check_ready()

    def clock_cpu(self, seat_index: int, meter: CpuMeter) -> None:
        """Charge `seat_index`'s decisions the CPU that `meter` measures (arena/referee/cpuclock.py),
        not wall time. Before the match starts only: the replay's header names these seats."""
        if self._writer is not None:
            raise RuntimeError("a seat's CPU clock is set before the match starts")
        self.seats[seat_index].cpu_meter = meter

    def _check_ready(self) -> None:
        """The match starts once every seat has said Hello or its bot is known to be dead."""
        if all(s.hello or s.crashed for s in self.seats):
            self._all_ready.set()

    # ------------------------------------------------------------------ the match

    def _match_start(self, seat: int) -> pb.MatchStart:
        c = self.config
        return pb.MatchStart(
            match_id=self.match_id,
            variant=c.variant.name,
            options=dict(c.variant.options),
            seat=seat,
            seat_names=list(c.seat_names),
            time_control=c.time_control.message(),
            deals=c.deals,
            server_version=__version__,
        )

    def _write(self, line: dict[str, Any]) -> None:
        if self._writer is not None:
            self._writer.write(line)
            self.results.add(line)
        else:  # a bot that said Hello before `run` opened the log
            self._early.append(line)

    def broadcast(self, event: bytes | pb.Event) -> None:
        """Queue a public event for every seat (it goes out with the seat's next message).

        Events are kept encoded: every seat's request carries the same bytes.
        """
        data = event if isinstance(event, bytes) else event.SerializeToString()
        for seat in self.seats:
            if seat.link is not None:
                seat.events.append(data)
        if self.spectators:
            message = event if isinstance(event, pb.Event) else pb.Event.FromString(data)
            for spectator in list(self.spectators):
                if spectator.open:
                    spectator.send(message)
                else:
                    self.spectators.remove(spectator)

    async def run(self) -> None:
        c = self.config
        self._writer = ReplayWriter(self.replay_dir, self.match_id, replay_flusher().add)
        self._now = trio.lowlevel.current_clock().current_time
        self._write(
            {
                "type": "header",
                "format": REPLAY_FORMAT,
                "version": REPLAY_VERSION,
                "server_version": __version__,
                "match_id": self.match_id,
                "variant": c.variant.name,
                "options": dict(c.variant.options),
                "seed": c.seed,
                "deals": c.deals,
                "seats": list(c.seat_names),
                "time_control": c.time_control.header(),
                "fault_policy": c.fault_policy,
                "max_invalid": c.max_invalid,
                **cpu_clock_header([s.index for s in self.seats if s.cpu_meter is not None]),
            }
        )
        for line in self._early:
            self._write(line)
        self._early = []
        try:
            with trio.move_on_after(c.start_timeout_s):
                await self._all_ready.wait()
            now = trio.current_time()
            for seat in self.seats:
                if not seat.hello and seat.disconnected_at is None:
                    seat.disconnected_at = now - c.reconnect_grace_s  # never came: no grace
            self.state = MatchState.RUNNING
            self.log.info("match started", variant=c.variant.name, deals=c.deals)
            try:
                await self._play_watched()
                self.termination = Termination.COMPLETED
            except Forfeit as forfeit:
                self.termination = Termination.FORFEIT
                self.forfeited = forfeit.fault.seat
            except OutOfRange as exc:
                self.termination, self.abort_reason = Termination.ABORTED, str(exc)
            faults = {s.index: len(s.faults) for s in self.seats}
            end_line, self.abort_reason = match_end_line(
                self.match, self.termination, self.forfeited, faults, self.abort_reason
            )
            self.termination = Termination(end_line["termination"])
            self._write(end_line)
            synchronous = all(getattr(seat.link, "synchronous", False) for seat in self.seats)
            self.replay_path = replay = await complete_replay(self._writer, synchronous)
            self.state = MatchState.FINISHED
            if self.before_end is not None:
                with trio.CancelScope(shield=True):  # a stopping server still keeps the result
                    try:
                        await self.before_end()
                    except Exception:
                        self.log.exception("the match's end could not be made durable")
            end = match_end_message(self.match, self.termination, replay.name, self.abort_reason)
            for seat in self.seats:
                seat.flush_events()
                seat.send(pb.ServerMessage(match_end=end))
                if seat.link is not None:
                    seat.link.close()
            self.log.info(
                "match finished", termination=self.termination, scores=self.match.scores, reason=end.reason
            )
        except BaseException:
            self.state = MatchState.ABORTED
            self.termination = Termination.ABORTED
            self._writer.abandon()
            for seat in self.seats:
                if seat.link is not None:
                    seat.link.close(CloseReason.ABORTED, "the match was aborted")
            raise
        finally:
            for spectator in self.spectators:
                spectator.close()
            self.done.set()

    async def _play_watched(self) -> None:
        """`_play`, with the watchdog that wakes a decision at its deadline."""
        forfeit: Forfeit | OutOfRange | None = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watchdog)
            try:
                await self._play()
            except (Forfeit, OutOfRange) as exc:
                forfeit = exc  # raised below, not wrapped in the nursery's exception group
            finally:
                nursery.cancel_scope.cancel()
        if forfeit is not None:
            raise forfeit

    async def _watchdog(self) -> None:
        """Push an `Alarm` into the waiting seat's inbox when `_alarm` passes.

        One sleeping task per match instead of a cancel scope per decision: entering, leaving
        and expiring those took about a sixth of the trio thread's time. Each decision moves
        the alarm to its own deadline, usually later than the one the watchdog sleeps until:
        that costs nothing but one extra wake-up when the old deadline passes.
        """
        while True:
            with trio.CancelScope(deadline=self._alarm) as scope:
                self._alarm_scope = scope
                await trio.sleep_forever()
            if trio.current_time() >= self._alarm:
                self._alarm = math.inf
                if self._waiting is not None:
                    with contextlib.suppress(trio.WouldBlock):  # a full inbox wakes the decision anyway
                        self._waiting.inbox.send_nowait(ALARM)

    def _set_alarm(self, when: float) -> None:
        self._alarm = when
        scope = self._alarm_scope
        if scope is not None and when < scope.deadline:
            scope.deadline = when

    async def _play(self) -> None:
        match = self.match
        allowance_on = self.config.time_control.latency_allowance_ms > 0
        while not match.is_over():
            deal = match.deal_index
            state = match.start_deal()
            self.deal_state = state
            views = ViewEncoder(state)
            notes: list[dict[str, Any]] = []
            self._write(
                {
                    "type": "deal_start",
                    "deal": deal,
                    "dealer": state.dealer,
                    "pots": dict(state.pots_start),
                    "stakes": state.stakes,
                    "deck": [str(c) for c in state.deck],
                }
            )
            self.broadcast(
                pb.Event(deal=deal, deal_started=pb.DealStarted(dealer=state.dealer, pots=state.pots_start))
            )
            while not state.is_terminal():
                seat = state.current_player
                assert seat is not None
                tricks_before = len(state.tricks)
                decision = await self._decide(self.seats[seat], state, views, deal, len(notes))
                action = decision.action
                state.apply(action)
                self.decisions += 1
                self._record(decision, deal, seat, notes, allowance_on)
                if time.perf_counter() - self._yielded >= YIELD_AFTER_S:
                    # A decision waits (and yields) only when its answer is not there yet.
                    await trio.lowlevel.checkpoint()
                    self._yielded = time.perf_counter()
                public = action if action.type != "discard" else Action("discard")  # the card stays hidden
                self.broadcast(action_taken_event(deal, seat, public))
                if len(state.tricks) > tricks_before:
                    trick = state.tricks[-1]
                    self.broadcast(trick_completed_event(deal, trick.number, trick.winner))
            result = match.finish_deal(state)
            record = deal_record(state, deal, actions=False)  # `deal_line` adds them
            assert self._writer is not None  # opened by `run`
            self._writer.write_json(deal_line(deal, record, state.history, notes, list(match.scores)))
            self.results.add_deal(deal, record["result"], {seat for seat, _ in state.history})
            check_deal(match, result, deal)  # exact in the replay; beyond int64, never sent wrapped
            self.broadcast(
                pb.Event(
                    deal=deal,
                    deal_ended=pb.DealEnded(
                        annulled=result.annulled,
                        card_points=result.card_points,
                        deltas=result.deltas,
                        pots=result.pots,
                        scores=match.scores,
                    ),
                )
            )
            for each in self.seats:
                each.flush_events()

    def _record(
        self, decision: Decided, deal: int, seat: int, notes: list[dict[str, Any]], allowance_on: bool
    ) -> None:
        """Write the decision's `action` line, and keep its note for the deal's record."""
        action, think_ms, fault = decision.action, decision.think_ms, decision.fault
        note: dict[str, Any] = {"think_ms": think_ms}
        if fault is not None:
            note["fault"] = {"kind": fault.kind, "detail": fault.detail}
        notes.append(note)
        step = len(notes) - 1
        if fault is None and self._writer is not None and decision.cpu_ms is None:  # the common line
            latency = latency_fields(decision.rtt_ms, decision.allowance_ms) if allowance_on else ""
            self._writer.write_json(action_line(deal, step, seat, action, think_ms, latency))
            self.results.decisions[seat] += 1
            return
        line = {"type": "action", "deal": deal, "step": step, "seat": seat, "action": action.to_dict()}
        line.update(note)
        if allowance_on:
            line.update(rtt_ms=decision.rtt_ms, allowance_ms=decision.allowance_ms)
        if decision.cpu_ms is not None:
            line["cpu_ms"] = decision.cpu_ms
        self._write(line)

    async def _decide(
        self, seat: Seat, state: DealState, views: ViewEncoder, deal: int, step: int
    ) -> Decided:
        """Ask `seat` for its action under the clock; apply the fault policy when it fails.

        Under a latency allowance the seat's round-trip estimate, capped by the allowance, is
        added to its deadline and taken off the time charged (never more than the decision took).
        """
        tc = self.config.time_control
        legal = state.legal_actions()
        limit_ms = tc.per_decision_ms + seat.bank_ms
        rtt_ms = seat.round_trip.estimate_ms() if tc.latency_allowance_ms else None
        credit_ms = min(rtt_ms, tc.latency_allowance_ms) if rtt_ms is not None else 0
        request_id = next(self._request_ids)
        data = request_message(
            request_id, deal, views.view(seat.index), legal, limit_ms, seat.bank_ms, seat.events
        )
        seat.events = []
        seat.pending, seat.pending_message = request_id, data
        start = self._now()
        deadline = start + (limit_ms + credit_ms) / 1000
        clock = None if seat.cpu_meter is None else CpuClock(seat.cpu_meter, limit_ms, start)
        sent_on = seat.link if seat.hello else None  # a round-trip sample needs one connection
        if self._writer is not None and self._writer.pending and not getattr(sent_on, "synchronous", False):
            # Every move before this request reaches the OS before the request leaves: a killed
            # server loses at most the move in flight (an in-process bot dies with the server).
            self._writer.flush()
        seat.send(data)
        rejected_before = seat.rejected
        self._waiting = seat
        answer = await self._answer(seat, state, legal, request_id, deadline, limit_ms, clock)
        seat.pending, seat.pending_message = None, b""
        self._waiting = None
        elapsed_ms = (self._now() - start) * 1000
        think_ms = int(elapsed_ms)
        used_ms = min(credit_ms, think_ms)
        cpu_ms = None
        if clock is not None:
            cpu_ms, used_ms = clock.used_ms(), 0
            if cpu_ms > limit_ms and not isinstance(answer, Fault):  # over between two looks
                answer = Fault(
                    seat.index, FaultKind.TIMEOUT, f"{cpu_ms} ms of CPU (the limit is {limit_ms} ms)"
                )
        if isinstance(answer, Fault):
            action = self._fault(seat, answer, legal, deal, step)
            return Decided(action, think_ms, answer, rtt_ms, used_ms, cpu_ms)
        if tc.latency_allowance_ms and seat.rejected == rejected_before and seat.link is sent_on is not None:
            seat.round_trip.add(elapsed_ms)  # samples for the allowance, which alone reads them
        self._charge(seat, think_ms - used_ms if cpu_ms is None else cpu_ms)
        return Decided(answer, think_ms, None, rtt_ms, used_ms, cpu_ms)

    async def _answer(
        self,
        seat: Seat,
        state: DealState,
        legal: Sequence[Action],
        request_id: int,
        deadline: float,
        limit_ms: int,
        clock: CpuClock | None = None,
    ) -> Action | Fault:
        """Wait for a legal answer to `request_id`: the action, or the fault that ended the wait.
        On a CPU clock `deadline` is ignored: the wait wakes to look at the CPU used (`clock`)."""
        c = self.config
        invalid = 0
        while True:
            now = self._now()
            wait_until = deadline if clock is None else clock.next_look(now)
            if seat.disconnected_at is not None:
                grace_end = seat.disconnected_at + c.reconnect_grace_s
                if seat.crashed or grace_end <= now:
                    return Fault(seat.index, self._absent(seat), "no bot connected")
                wait_until = min(wait_until, grace_end)
            item: InboxItem | None = None
            if now < wait_until:
                # A synchronous link has answered already: no alarm, wake-up or checkpoint.
                item = seat.inbox.take()
                if item is None:
                    self._set_alarm(wait_until)
                    item = await seat.inbox.receive()
            if item is None or isinstance(item, Alarm):
                now = self._now()
                if now >= deadline if clock is None else clock.over(now):
                    kind = FaultKind.TIMEOUT if seat.disconnected_at is None else self._absent(seat)
                    return Fault(seat.index, kind, late_detail(limit_ms, clock, now))
                continue
            if isinstance(item, LinkChange) or item.request_id != request_id:
                continue  # a stale or early reply is ignored (see the .proto)
            try:
                candidate = action_from_message(item.action)
                if candidate not in legal:
                    state.apply(candidate)  # raises IllegalActionError naming the rule
                    raise AssertionError("an action outside the legal list was accepted")  # pragma: no cover
                return candidate
            except (IllegalActionError, ActionError) as exc:
                invalid += 1
                self._reject(seat, request_id, exc, deadline)
                if invalid >= c.max_invalid:
                    return Fault(seat.index, FaultKind.ILLEGAL, f"{invalid} invalid answers, the last: {exc}")

    @staticmethod
    def _absent(seat: Seat) -> FaultKind:
        """The fault of a seat whose bot is not connected."""
        return FaultKind.CRASH if seat.crashed else FaultKind.DISCONNECT

    def _reject(
        self, seat: Seat, request_id: int, exc: IllegalActionError | ActionError, deadline: float
    ) -> None:
        """Tell the bot why its answer is refused; it may answer again before the deadline."""
        seat.rejected += 1
        rule = exc.rule if isinstance(exc, IllegalActionError) else "protocol"
        time_left = max(0, int((deadline - trio.current_time()) * 1000))
        reason = str(exc)
        rejected = pb.ActionRejected(request_id=request_id, reason=reason, rule=rule, time_left_ms=time_left)
        seat.send(pb.ServerMessage(rejected=rejected))

    def _fault(self, seat: Seat, fault: Fault, legal: Sequence[Action], deal: int, step: int) -> Action:
        """Record `fault` and tell every seat; the action the fault policy plays for the seat, or
        `Forfeit`."""
        c = self.config
        seat.faults.append(fault)
        if fault.kind is FaultKind.TIMEOUT:
            seat.bank_ms = 0
        self.broadcast(
            pb.Event(deal=deal, fault=pb.Fault(seat=seat.index, kind=fault.kind, detail=fault.public_detail))
        )
        self.log.warning("fault", seat=seat.index, kind=fault.kind, detail=fault.detail, deal=deal, step=step)
        if c.fault_policy == FaultPolicy.FORFEIT:
            raise Forfeit(fault)
        # substitute: a legal action chosen deterministically from the match seed
        return random.Random(f"{c.seed}:substitute:{deal}:{step}").choice(legal)

    def _charge(self, seat: Seat, charged_ms: int) -> None:
        """Charge a decision's time to the seat's clock: what exceeds `per_decision_ms` comes off
        the bank, then the increment is added."""
        tc = self.config.time_control
        over = charged_ms - tc.per_decision_ms
        if over > 0:
            seat.bank_ms = max(0, seat.bank_ms - over)
        seat.bank_ms += tc.increment_ms
