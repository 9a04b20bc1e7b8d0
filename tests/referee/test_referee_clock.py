"""The referee's clock, on trio's mock clock: per-decision limit, bank, increment, latency allowance."""

from __future__ import annotations

from pathlib import Path

from referee_bots import Bot, config, play

from arena.referee.seat import TimeControl


def test_a_bot_that_never_answers_in_time_times_out_at_its_limit_and_loses_its_bank(tmp_path: Path) -> None:
    tc = TimeControl(per_decision_ms=1_000, bank_ms=2_000)
    played = play(tmp_path, config(tc), [Bot(), Bot(think=lambda n: 10.0), Bot()])
    slow = played.actions(seat=1)
    assert slow and all(line["fault"]["kind"] == "timeout" for line in slow)
    assert all(line["fault"]["detail"].startswith("no answer within") for line in slow)
    # The first decision has the whole clock, limit and bank; a timeout empties the bank.
    assert [line["think_ms"] for line in slow] == [3_000] + [1_000] * (len(slow) - 1)
    limits = [(r.time_limit_ms, r.bank_ms) for r in played.bots[1].requests]
    assert limits == [(3_000, 2_000)] + [(1_000, 0)] * (len(limits) - 1)
    assert played.runner.seats[1].bank_ms == 0
    assert [seat for seat, _ in played.faults()] == [1] * len(slow)
    # Substitute (the default policy): the match is completed, the others untouched.
    assert played.end["termination"] == "completed"
    assert played.end["faults"] == {"0": 0, "1": len(slow), "2": 0}
    assert played.runner.seats[0].bank_ms == played.runner.seats[2].bank_ms == 2_000


def test_time_over_the_per_decision_limit_comes_off_the_bank_until_it_is_gone(tmp_path: Path) -> None:
    tc = TimeControl(per_decision_ms=1_000, bank_ms=1_000)
    played = play(tmp_path, config(tc), [Bot(), Bot(), Bot(think=lambda n: 1.3125)])
    banks = [r.bank_ms for r in played.bots[2].requests]
    assert banks[:5] == [1_000, 688, 376, 64, 0]  # 312 ms over the limit each time (whole ms)
    lines = played.actions(seat=2)
    assert [line.get("fault", {}).get("kind") for line in lines[:4]] == [None] * 3 + ["timeout"]
    assert [line["think_ms"] for line in lines[:4]] == [1_312] * 3 + [1_064]
    assert all(line["fault"]["kind"] == "timeout" for line in lines[3:])


def test_the_increment_is_added_after_every_answer_in_time(tmp_path: Path) -> None:
    tc = TimeControl(per_decision_ms=1_000, bank_ms=500, increment_ms=250)
    played = play(tmp_path, config(tc), [Bot(think=lambda n: 1.125), Bot(), Bot()])
    banks = [r.bank_ms for r in played.bots[0].requests]
    # 125 ms over the limit each time, 250 ms back: 125 ms more at each decision.
    assert banks == [500 + 125 * n for n in range(len(banks))]
    assert played.faults() == []
    assert played.runner.seats[0].bank_ms == 500 + 125 * len(banks)
    # A quick bot banks the whole increment.
    quick = [r.bank_ms for r in played.bots[1].requests]
    assert quick == [500 + 250 * n for n in range(len(quick))]


def test_the_latency_allowance_is_the_measured_round_trip_capped(tmp_path: Path) -> None:
    """A bot that always takes 312.5 ms, against 250 ms per decision: without an allowance its bank
    runs out and it times out; with one, once its round trip is known, it is charged nothing."""
    slow = 0.3125
    without = play(
        tmp_path / "without",
        config(TimeControl(per_decision_ms=250, bank_ms=500)),
        [Bot(think=lambda n: slow), Bot(), Bot()],
    )
    assert [r.bank_ms for r in without.bots[0].requests[:4]] == [500, 438, 376, 314]
    assert "timeout" in {line.get("fault", {}).get("kind") for line in without.actions(seat=0)}
    assert all("rtt_ms" not in line for line in without.actions())  # off: the lines say nothing

    with_allowance = play(
        tmp_path / "with",
        config(TimeControl(per_decision_ms=250, bank_ms=500, latency_allowance_ms=400)),
        [Bot(think=lambda n: slow), Bot(), Bot()],
    )
    lines = with_allowance.actions(seat=0)
    assert with_allowance.faults() == []
    # No estimate before three answers on the connection; then the windowed minimum, 312 ms,
    # under the 400 ms cap: added to the deadline and taken off the charge.
    assert [(line["rtt_ms"], line["allowance_ms"]) for line in lines[:4]] == [
        (None, 0),
        (None, 0),
        (None, 0),
        (312, 312),
    ]
    assert all((line["rtt_ms"], line["allowance_ms"]) == (312, 312) for line in lines[3:])
    assert all(line["think_ms"] == 312 for line in lines)
    banks = [r.bank_ms for r in with_allowance.bots[0].requests]
    assert banks == [500, 438, 376] + [314] * (len(banks) - 3)
    # The request's limit is the clock without the allowance: the bot is not told about it.
    assert with_allowance.bots[0].requests[3].time_limit_ms == 250 + 314
    assert with_allowance.lines[0]["time_control"]["latency_allowance_ms"] == 400


def test_the_allowance_is_capped_by_the_match_setting(tmp_path: Path) -> None:
    tc = TimeControl(per_decision_ms=500, bank_ms=2_000, latency_allowance_ms=125)
    played = play(tmp_path, config(tc), [Bot(think=lambda n: 0.8125), Bot(), Bot()])
    lines = played.actions(seat=0)
    assert {(line["rtt_ms"], line["allowance_ms"]) for line in lines[3:]} == {(812, 125)}
    banks = [r.bank_ms for r in played.bots[0].requests]
    # 312 ms over the limit for the first three answers, then 187 once the round trip is known.
    assert banks[:6] == [2_000, 1_688, 1_376, 1_064, 877, 690]
