"""`arena replay show`: a replay as text, deal by deal and trick by trick.

The omniscient view shows the bot each seat's Hello named, every hand, every decision with its
think time and clock, the faults and connection events (and a bot that came back as another bot
or version), the running card points, the declarations and the payments. The view of one seat
(`seat=N`) is built only from what that seat was told: its `observation()` before each of its
decisions (its hand, the legal actions it was offered), the public version of every action (a
discard without its card), the public faults, and its own clock and bot. It never reads another
seat's hand, so it cannot show one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TextIO

from ..engine import Action, DealState, Trick, observation
from .read import BotHello, DealLog, Decision, Replay
from .timeline import (
    PHASE_NAMES,
    SUIT_SYMBOLS,
    Clock,
    Event,
    action_text,
    card_text,
    clocks,
    events,
    hand_text,
    public_action,
    running_points,
    trick_points,
    walk,
)


def seconds_text(ms: int) -> str:
    return f"{ms / 1000:g} s" if ms % 1000 == 0 or ms >= 10_000 else f"{ms} ms"


def _signed(values: Iterable[int]) -> str:
    return " ".join(f"{v:+d}" if v else "0" for v in values)


def _plain(values: Iterable[Any]) -> str:
    return " ".join(str(v) for v in values)


def bot_text(hello: BotHello | None) -> str:
    """The bot a seat's Hello named, as the header shows it."""
    if hello is None:
        return "no Hello in the log"
    unset = " (protocol version unset, taken as 1)" if hello.protocol_version == 0 else ""
    return f"bot {hello.bot}{unset}"


def render_header(replay: Replay, out: TextIO, seat: int | None = None) -> None:
    """The match; with `seat`, only that seat's bot (no seat is told which bots the others run)."""
    h = replay.header
    variant = replay.variant
    assert variant is not None
    options = ", ".join(f"{k}={v}" for k, v in variant.options.items())
    per, bank, increment = replay.time_control
    print(
        f"{variant.name} ({options or 'no options'}) · match {h.get('match_id', '?')} · "
        f"seed {h.get('seed')} · {h.get('deals')} dealer turns",
        file=out,
    )
    clock = f"{seconds_text(per)} per decision + bank {seconds_text(bank)}"
    if increment:
        clock += f" (+{seconds_text(increment)} per decision)"
    if replay.latency_allowance_ms:
        clock += f" · latency allowance up to {replay.latency_allowance_ms} ms per decision"
    cpu = h.get("cpu_clock")
    if isinstance(cpu, dict):  # checked by verify: the seats whose clocks charged CPU, not wall time
        clock += f" · CPU clock for seat {', '.join(map(str, cpu.get('seats', [])))}"
    print(f"clock: {clock} · fault policy {h.get('fault_policy')}", file=out)
    # Version 1 logs have no hello lines: they do not say which bots played.
    hellos = replay.first_hellos() if h.get("version", 1) != 1 else []
    for index, name in enumerate(h.get("seats", [])):
        bot = f" · {bot_text(hellos[index])}" if index < len(hellos) and seat in (None, index) else ""
        print(f"  seat {index}: {name}{bot}", file=out)


def render(
    replay: Replay,
    out: TextIO,
    deal: int | None = None,
    seat: int | None = None,
    start: int = 0,
) -> None:
    """Render the deals of `replay` (or only `deal`), from decision `start` of each deal on."""
    render_header(replay, out, seat)
    times = clocks(replay)
    between = events(replay)
    for log in replay.deals:
        if deal is not None and log.index != deal:
            continue
        print(file=out)
        if seat is None:
            _Omniscient(replay, log, times, out, between).render(start)
        else:
            _SeatView(replay, log, times, out, between, seat).render(start)
    if deal is None:  # connection events between the last deal and the end of the match
        shown = {log.index for log in replay.deals}
        for (at, _), found in sorted(between.items()):
            for event in found:
                if at not in shown and seat in (None, event.seat):
                    print(event_line(event), file=out)
    end = replay.match_end
    if end is not None and deal is None:
        print(file=out)
        print(f"match {end.get('termination')}", file=out)
        if end.get("forfeited") is not None:
            print(f"  seat {end['forfeited']} forfeited", file=out)
        if end.get("reason"):  # an aborted match: why (a number beyond int64)
            print(f"  {end['reason']}", file=out)
        if any(end.get("pot_split") or []):  # null: an aborted match's pots were not split
            print(f"  pot split    {_plain(end['pot_split'])}", file=out)
        print(f"  final scores {_plain(end.get('scores', []))}", file=out)
        faults = end.get("faults", {})
        if any(faults.values()):
            print(f"  faults       {_plain(faults.get(str(s), 0) for s in range(replay.seats))}", file=out)


def event_line(event: Event) -> str:
    return f"  {'⚠' if event.kind == 'fault' else '⚡'} {event.text}"


class _Deal:
    """What both views share: the deal's heading, the notes between decisions."""

    def __init__(
        self,
        replay: Replay,
        log: DealLog,
        times: dict[tuple[int, int], Clock],
        out: TextIO,
        between: dict[tuple[int, int], list[Event]],
    ) -> None:
        self.replay = replay
        self.log = log
        self.times = times
        self.out = out
        self.notes = {step: found for (deal, step), found in between.items() if deal == log.index}
        self.phase = ""
        self.trick_no = -1

    def line(self, text: str = "") -> None:
        print(text, file=self.out)

    def heading(self, state: DealState, who: str = "") -> None:
        pots = (
            " · pots " + " ".join(f"{k} {v}" for k, v in state.pots_start.items()) if state.pots_start else ""
        )
        out = f" · seat {state.sitting_out} sits out" if state.sitting_out is not None else ""
        self.line(
            f"── deal {self.log.index}{who} · dealer seat {state.dealer} · "
            f"forehand seat {state.forehand}{out}{pots} ──"
        )

    def phase_heading(self, phase: str, trick_no: int, leader: int | None) -> None:
        if phase == "play":
            if trick_no != self.trick_no or self.phase != "play":
                self.trick_no = trick_no
                self.line(f"trick {trick_no} · seat {leader} leads")
        elif phase != self.phase:
            name = PHASE_NAMES.get(phase, phase)
            if phase == "announce" and trick_no > 0:
                name += f" before trick {trick_no}"
            self.line(name)
        self.phase = phase

    def note_lines(self, step: int, only: int | None = None) -> None:
        """Connection events, protocol faults and changed bots before `step`; with `only`, just that
        seat's own: the referee tells no other seat about them."""
        for event in self.notes.get(step, []):
            if only is None or event.seat == only:
                self.line(event_line(event))

    def result_lines(self, result: dict[str, Any], ledger: bool) -> None:
        self.line("result" + (" · annulled (redeal)" if result.get("annulled") else ""))
        self.line(f"  card points  {_plain(result.get('card_points', []))}")
        self.line(f"  deltas       {_signed(result.get('deltas', []))}")
        if result.get("pots"):
            self.line("  pots         " + " ".join(f"{k} {v:+d}" for k, v in result["pots"].items()))
        if ledger:
            by_rule: dict[str, list[str]] = {}
            for entry in result.get("ledger", []):
                source, target = entry.get("from"), entry.get("to")
                payer = f"seat {source}" if isinstance(source, int) else str(source)
                payee = f"seat {target}" if isinstance(target, int) else str(target)
                by_rule.setdefault(str(entry.get("rule")), []).append(
                    f"{payer} → {payee} {entry.get('amount')}"
                )
            for rule, payments in by_rule.items():
                self.line(f"  {rule:<12} {', '.join(payments)}")
        if self.log.scores is not None:
            self.line(f"  scores       {_plain(self.log.scores)}")

    def stopped(self) -> None:
        if self.log.result is None:
            problem = self.replay.problem
            end = self.replay.match_end or {}
            if problem is not None:
                self.line(f"the log stops being valid here: {problem}")
            elif end.get("termination") == "forfeit":
                self.line(f"the match ends here: seat {end.get('forfeited')} forfeited")
            else:
                self.line("the log ends here: the match did not finish this deal")


class _Omniscient(_Deal):
    def render(self, start: int) -> None:
        tricks = declared = 0
        skat_shown = False
        for state, decision in walk(self.replay, self.log):
            step = decision.step if decision is not None else len(self.log.decisions)
            if step == 0:
                self.heading(state)
                self.hands(state, "hands")
            # What the previous decision led to: a trick won, the dealer's published skat, the
            # declarations the engine makes by itself (danish).
            visible = step > start or (step == start and start == 0)
            for trick in state.tricks[tricks:]:
                if visible:
                    self.trick_end(state, trick)
            tricks = len(state.tricks)
            if state.skat_public and not skat_shown:
                skat_shown = True
                if visible:
                    self.line(f"        the skat shows {_skat_public(state.skat_public)}")
            if visible:
                self.new_declarations(state, declared)
            declared = len(state.declarations)
            if step == start and start > 0:
                self.line(f"… position before step {start}")
                self.hands(state, "hands now")
                self.position(state)
            if decision is None:
                self.end(state)
                return
            if step < start:
                continue
            self.note_lines(step)
            leader = state.trick[0][0] if state.trick else state.turn
            self.phase_heading(state.phase, state.trick_no, leader)
            self.decision_line(decision, len(state.legal_actions()))

    def hands(self, state: DealState, title: str) -> None:
        self.line(title)
        for seat in range(state.seats):
            if seat == state.sitting_out:
                continue
            role = " dealer" if seat == state.dealer else ""
            cards = [str(c) for c in state.hands[seat]]
            self.line(f"  seat {seat}{role:<7} ({len(cards):>2})  {hand_text(cards)}")
        if state.skat:
            self.line(
                f"  laid away by seat {state.discarder}  {hand_text([str(c) for c in sorted(state.skat)])}"
            )
        if state.talon:
            self.line(f"  talon ({len(state.talon)})  {hand_text([str(c) for c in state.talon])}")

    def position(self, state: DealState) -> None:
        if state.trick:
            self.line("  trick so far  " + "  ".join(f"seat {s} {card_text(str(c))}" for s, c in state.trick))
        self.line(
            f"  tricks won   {_plain(state.tricks_won)} · card points so far {_plain(running_points(state))}"
        )

    def decision_line(self, decision: Decision, legal: int) -> None:
        clock = self.times[self.log.index, decision.step]
        text = f"  #{decision.step:<4} seat {decision.seat}  {action_text(decision.action)}"
        timing = f"{decision.think_ms} ms of {seconds_text(clock.limit_ms)}"
        if self.replay.latency_allowance_ms:
            rtt = "no estimate yet" if decision.rtt_ms is None else f"rtt {decision.rtt_ms} ms"
            timing += f" ({rtt}, {decision.allowance_ms} ms allowed, {clock.charged_ms} ms charged)"
        if decision.cpu_ms is not None:  # a seat on a CPU clock
            timing += f" ({decision.cpu_ms} ms of CPU charged)"
        choice = f" · 1 of {legal}" if legal > 1 else " · forced"
        self.line(f"{text:<44}{timing}{choice}")
        if decision.fault is not None:
            kind, detail = decision.fault.get("kind"), decision.fault.get("detail")
            self.line(f"        ⚠ {kind} fault: {detail}; the referee played {action_text(decision.action)}")

    def new_declarations(self, state: DealState, seen: int) -> None:
        for declaration in state.declarations[seen:]:
            self.line(f"        {declaration_text(declaration.public())}")

    def trick_end(self, state: DealState, trick: Trick) -> None:
        running = running_points(state)
        self.line(
            f"        seat {trick.winner} wins trick {trick.number} · {trick_points(trick)} card points · "
            f"so far {_plain(running)}"
        )

    def end(self, state: DealState) -> None:
        self.note_lines(len(self.log.decisions))
        if self.log.result is not None:
            self.result_lines(self.log.result, ledger=True)
        else:
            self.stopped()


class _SeatView(_Deal):
    def __init__(
        self,
        replay: Replay,
        log: DealLog,
        times: dict[tuple[int, int], Clock],
        out: TextIO,
        between: dict[tuple[int, int], list[Event]],
        seat: int,
    ) -> None:
        super().__init__(replay, log, times, out, between)
        self.seat = seat

    def render(self, start: int) -> None:
        seat = self.seat
        seen_tricks = 0
        seen_declarations = 0
        skat_shown = False
        talon_shown: dict[str, Any] = {}
        for state, decision in walk(self.replay, self.log):
            view = observation(state, seat)  # everything below comes from this view
            step = decision.step if decision is not None else len(self.log.decisions)
            if step == 0:
                self.seat_heading(view)
                self.line(f"your hand ({len(view['hand'])})  {hand_text(view['hand'])}")
            # What the previous decision led to, as this seat was told it.
            if step > start or (step == start and start == 0):
                talon_shown = self.public_facts(view, talon_shown)
                seen_tricks = self.tricks(view, seen_tricks)
                seen_declarations = self.declarations(view, seen_declarations)
                if view.get("skat_public") and not skat_shown:
                    self.line(f"        the skat shows {_skat_public(view['skat_public'])}")
            else:
                seen_tricks = len(view["tricks"])
                seen_declarations = len(view["declarations"])
                talon_shown = {k: view.get(k) for k in AMERICAN_FACTS}
            skat_shown = bool(view.get("skat_public"))
            if step == start and start > 0:
                self.line(f"… position before step {start}")
                self.line(f"your hand ({len(view['hand'])})  {hand_text(view['hand'])}")
                if view.get("trick"):
                    plays = "  ".join(f"seat {s} {card_text(c)}" for s, c in view["trick"]["cards"])
                    self.line(f"  trick so far  {plays}")
                self.line(f"  tricks won   {_plain(view['tricks_won'])}")
            if decision is None:
                if step >= start:
                    self.end(view)
                return
            if step < start:
                continue
            self.note_lines(step, only=seat)
            leader = view["trick"]["leader"] if view.get("trick") else view["to_act"]
            self.phase_heading(view["phase"], view["trick_number"], leader)
            if decision.seat == seat:
                self.own_decision(view, decision)
            else:
                self.other_decision(decision)

    def public_facts(self, view: dict[str, Any], seen: dict[str, Any]) -> dict[str, Any]:
        """`american`: the contract, the called card, the talon when shown, the partner once known."""
        now = {k: view.get(k) for k in AMERICAN_FACTS}
        for key in AMERICAN_FACTS:
            value = now[key]
            if value is None or value == seen.get(key):
                continue
            if key == "talon":
                self.line(f"        the talon is shown: {hand_text(value)}")
            elif key == "called":
                self.line(f"        the called card: {card_text(value)}")
            elif key == "partner":
                partner = "nobody: the declarer plays alone" if value == -1 else f"seat {value}"
                self.line(f"        the declarer's partner, as you know it: {partner}")
            else:
                self.line(f"        {key.replace('_', ' ')}: {value}")
        return now

    def seat_heading(self, view: dict[str, Any]) -> None:
        out = f" · seat {view['sitting_out']} sits out" if view.get("sitting_out") is not None else ""
        pots = view.get("pots_start")
        pot_text = " · pots " + " ".join(f"{k} {v}" for k, v in pots.items()) if pots else ""
        self.line(
            f"── deal {self.log.index} · seen by seat {self.seat} · dealer seat {view['dealer']} · "
            f"forehand seat {view['forehand']}{out}{pot_text} ──"
        )

    def own_decision(self, view: dict[str, Any], decision: Decision) -> None:
        clock = self.times[self.log.index, decision.step]
        per = self.replay.time_control[0]
        self.line(
            f"  #{decision.step:<4} your turn · time {clock.limit_ms} ms ({per} + bank {clock.bank_ms})"
        )
        self.line(f"        hand     {hand_text(view['hand'])}")
        if view.get("skat"):
            self.line(f"        your skat {hand_text(view['skat'])}")
        legal = view.get("legal_actions", [])
        offered = ", ".join(_offered_text(a) for a in legal)
        self.line(f"        offered  ({len(legal)}) {offered}")
        self.line(f"        answered {action_text(decision.action)} · {decision.think_ms} ms")
        if decision.fault is not None:
            kind, detail = decision.fault.get("kind"), decision.fault.get("detail")
            self.line(f"        ⚠ {kind} fault: {detail}; the referee played it for you")

    def other_decision(self, decision: Decision) -> None:
        self.line(
            f"  #{decision.step:<4} seat {decision.seat}  {action_text(public_action(decision.action))}"
        )
        if decision.fault is not None:
            kind, detail = decision.fault.get("kind"), decision.fault.get("detail")
            self.line(f"        ⚠ seat {decision.seat} {kind} fault: {detail}")

    def tricks(self, view: dict[str, Any], seen: int) -> int:
        for trick in view["tricks"][seen:]:
            self.line(f"        seat {trick['winner']} wins trick {trick['number']}")
        return len(view["tricks"])

    def declarations(self, view: dict[str, Any], seen: int) -> int:
        for declaration in view["declarations"][seen:]:
            self.line(f"        {declaration_text(declaration)}")
        return len(view["declarations"])

    def end(self, view: dict[str, Any]) -> None:
        self.note_lines(len(self.log.decisions), only=self.seat)
        result = view.get("result")
        if result is not None and self.log.result is not None:
            self.result_lines(result, ledger=False)
        else:
            self.stopped()


AMERICAN_FACTS = ("contract", "declarer", "called", "talon", "partner", "petit_sec")


def declaration_text(public: dict[str, Any]) -> str:
    """A declaration as published, without cards: ``seat 1 holds cavallerie ♥ (4 cards): …``."""
    suit = str(public.get("suit") or "")
    suit = f" {SUIT_SYMBOLS.get(suit, suit)}" if suit else ""
    return (
        f"seat {public['seat']} holds {public['name']}{suit} ({public['size']} cards): "
        f"receives {public['value']} from each"
    )


def _offered_text(text: str) -> str:
    return action_text(Action.parse(text))


def _skat_public(published: dict[str, Any]) -> str:
    shown = published.get("shown") or []
    text = f"{published.get('taroks', 0)} tarok(s) laid away"
    if shown:
        text += " · shown: " + " ".join(card_text(c) for c in shown)
    return text
