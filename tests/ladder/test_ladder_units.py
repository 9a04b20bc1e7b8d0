"""Ladder parts that need no server: seating, the ladder file, the database, the statistics."""

from __future__ import annotations

import io
import itertools
import json
import logging
import math
import os
import random
import re
import sqlite3
import sys
from collections import Counter
from pathlib import Path

import pytest
import structlog
from rich.console import Console
from support import arena

from arena.cli import main
from arena.engine import deck_for
from arena.ladder.config import LadderFileError, load_ladder
from arena.ladder.run import leader_note
from arena.ladder.schedule import build_schedule
from arena.ladder.sprt import SCALES, WEIGHTS, PairTest, t_llr
from arena.ladder.store import MatchRecord, Store, StoreError
from arena.logs import configure
from arena.progress import Bar, route_logs
from arena.ratings import Ratings, mean_ci, t95
from arena.replay.summary import DealRow

GOOD = """
variant = "grosstarock"
seed = 3
deal_sets = 2
deals = 1
[[bots]]
name = "a"
command = "{python} -c pass"
[[bots]]
name = "b"
command = "{python} -c pass"
[[bots]]
name = "c"
command = "{python} -c pass"
"""


# --------------------------------------------------------------------------- seating


@pytest.mark.parametrize(
    ("bots", "seats", "seating", "deal_sets"),
    [
        (3, 3, "permutations", 2),
        (4, 3, "permutations", 1),
        (5, 3, "permutations", 2),
        (4, 4, "rotations", 3),
        (6, 4, "rotations", 3),
        (5, 4, "permutations", 1),
    ],
)
def test_the_duplicate_arrangement_is_balanced(bots: int, seats: int, seating: str, deal_sets: int) -> None:
    names = [f"bot{i}" for i in range(bots)]
    schedule = build_schedule(names, seats, deal_sets, seed=5, seating=seating)
    assert len({m.key for m in schedule}) == len(schedule)
    for deal_set in range(deal_sets):
        matches = [m for m in schedule if m.deal_set == deal_set]
        # One deck sequence per deal set: every match of the set has the same seed.
        assert len({m.seed for m in matches}) == 1
        # Each bot in each seat equally often on these decks, at each table and overall.
        for table in {m.table for m in matches}:
            at_table = [m for m in matches if m.table == table]
            seat_counts = Counter((bot, seat) for m in at_table for seat, bot in enumerate(m.bots))
            members = set(at_table[0].bots)
            assert set(seat_counts) == {(bot, seat) for bot in members for seat in range(seats)}
            assert len(set(seat_counts.values())) == 1
        # Every two bots meet equally often.
        meetings = Counter(frozenset(pair) for m in matches for pair in itertools.combinations(m.bots, 2))
        assert len(meetings) == math.comb(bots, 2)
        assert len(set(meetings.values())) == 1
    assert len({m.seed for m in schedule}) == deal_sets  # other deal sets, other decks
    decks = {m.deal_set: [str(c) for c in deck_for(m.seed, 0)] for m in schedule}
    assert len({tuple(d) for d in decks.values()}) == deal_sets
    if seats == 4 and seating == "rotations":
        # Over three deal sets each two bots sit opposite (seat k and k+2) equally often.
        opposite = Counter(frozenset((m.bots[k], m.bots[k + 2])) for m in schedule for k in range(2))
        assert len(opposite) == math.comb(bots, 2) and len(set(opposite.values())) == 1


def test_three_seats_play_all_six_permutations() -> None:
    schedule = build_schedule(["x", "y", "z"], 3, 1, seed=0, seating="permutations")
    assert sorted(m.bots for m in schedule) == sorted(itertools.permutations(["x", "y", "z"]))


# --------------------------------------------------------------------------- the ladder file


def test_a_good_ladder_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "l.toml"
    path.write_text(GOOD)
    config = load_ladder(path)
    assert [b.name for b in config.bots] == ["a", "b", "c"]
    assert config.bots[0].argv[0] == sys.executable
    assert config.database == tmp_path / "l.sqlite"
    assert config.seating == "permutations" and config.deals == 1 and config.deal_sets == 2
    assert config.time_control.latency_allowance_ms == 0  # off unless asked
    before = config.identity()
    path.write_text(GOOD + "[time_control]\nlatency_allowance_ms = 250\n")
    allowed = load_ladder(path)
    assert allowed.time_control.latency_allowance_ms == 250
    assert allowed.identity() != before  # a ladder cannot be resumed with another allowance
    assert config.referees == max(1, os.cpu_count() or 1)  # one referee process per core
    path.write_text("referees = 3\n" + GOOD)
    assert load_ladder(path).referees == 3
    assert load_ladder(path).identity() == before  # how many referees is no part of the results


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ('variant = "x"\nseed = = 2\n', ["invalid TOML", "line 2"]),
        (GOOD + "concurency = 2\n", ["unknown key 'concurency'"]),
        (GOOD.replace('variant = "grosstarock"', 'variant = "skat"'), ["variant", "unknown variant 'skat'"]),
        (GOOD + "[options]\nladons = 'some'\n", ["variant", "ladons"]),
        (GOOD.replace("deals = 1", "deals = 0"), ["deals", "at least 1"]),
        (GOOD.replace("seed = 3", "seed = 'x'"), ["seed", "whole number"]),
        (GOOD + "[time_control]\nper_decision_ms = -5\n", ["time_control.per_decision_ms"]),
        (GOOD + "[time_control]\nlatency_allowance_ms = -1\n", ["time_control.latency_allowance_ms"]),
        (GOOD + "[faults]\npolicy = 'ignore'\n", ["faults.policy", "substitute, forfeit"]),
        (GOOD.replace('name = "c"', 'name = "a"'), ["two bots are named 'a'"]),
        (GOOD.replace("{python} -c pass", "no-such-program-xyz", 1), ["bots[0] (a).command", "not found"]),
        (GOOD.split('[[bots]]\nname = "c"')[0], ["at least 3 bots, got 2"]),
        (GOOD + '[[bots]]\nname = "r"\ntoken = "0123456789abcdef0123"\n', ["remote bot needs a fixed port"]),
        ("referees = 0\n" + GOOD, ["referees", "at least 1"]),
        ("port = 5\nreferees = 2\n" + GOOD, ["referees", "a fixed port is one referee server"]),
        ("port = 5\n" + GOOD + '[[bots]]\nname = "r"\ntoken = "short"\n', ["at least 16 characters"]),
        (
            "port = 5\n" + GOOD + '[[bots]]\nname = "r"\ntoken_env = "ARENA_TEST_UNSET_TOKEN"\n',
            ["ARENA_TEST_UNSET_TOKEN"],
        ),
        (GOOD + '[[bots]]\nname = "d"\ncommand = "x"\ntoken = "0123456789abcdef0123"\n', ["exactly one of"]),
        (
            "port = 5\n" + GOOD + '[[bots]]\nname = "r"\ntoken = "0123456789abcdef0123"\n'
            '[[bots]]\nname = "s"\ntoken = "0123456789abcdef0123"\n',
            ["same token"],
        ),
    ],
)
def test_a_wrong_ladder_file_is_one_clear_line_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, needles: list[str]
) -> None:
    path = tmp_path / "ladder.toml"
    path.write_text(text)
    with pytest.raises(LadderFileError) as raised:
        load_ladder(path)
    for needle in needles:
        assert needle in str(raised.value)
    status = main(["ladder", "run", str(path)])
    err = capsys.readouterr().err
    assert status == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena ladder run: ") and str(path) in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ladder.toml"]  # no database, no replays


def test_wrong_command_lines_exit_2(tmp_path: Path) -> None:
    assert arena("ladder", "run").returncode == 2
    assert arena("ladder", "run", tmp_path / "l.toml", "--concurrency", "0").returncode == 2
    wrong = arena("ladder", "ab", "heuristic", "random", "--against", "random")
    assert wrong.returncode == 2 and "give 2 --against bots" in wrong.stderr
    assert (
        arena("ladder", "ab", "heuristic", "random", "--against", "x", "y", "--alpha", "0.7").returncode == 2
    )
    missing = arena("ladder", "ab", "heuristic", "no-such-bot-xyz", "--against", "random", "random")
    assert missing.returncode == 2 and "no-such-bot-xyz" in missing.stderr
    ab = ("ladder", "ab", "heuristic", "random", "--against", "random", "random")
    old = arena(*ab, "--min-deals", "8")  # per deck, before the observation was per deal set
    assert old.returncode == 2 and "--min-deals is now --min-deal-sets" in old.stderr
    one = arena(*ab, "--min-deal-sets", "1")
    assert one.returncode == 2 and "at least two deal sets" in one.stderr
    assert arena("ladder", "report", tmp_path / "x.sqlite").returncode == 2  # -o is required


def test_standings_of_a_file_that_is_not_a_ladder_database(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    before = other.read_bytes()
    for args in (
        ("standings", other),
        ("report", other, "-o", tmp_path / "r"),
        ("standings", tmp_path / "none"),
    ):
        done = arena("ladder", *args)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    ladder = tmp_path / "l.toml"
    ladder.write_text(f'database = "{other.name}"\n' + GOOD)
    done = arena("ladder", "run", ladder)
    assert done.returncode == 1 and "not a ladder database" in done.stderr
    assert other.read_bytes() == before


# --------------------------------------------------------------------------- the database


def _record(key: str, seq_points: list[int]) -> MatchRecord:
    return MatchRecord(
        key=key,
        deal_set=0,
        table=0,
        arrangement=0,
        seed=1,
        seats=["a", "b", "c"],
        match_id="0123456789abcdef",
        termination="completed",
        forfeited=None,
        scores=seq_points,
        decisions=10,
        started=0.0,
        finished=1.0,
        replay=None,
        deals=[DealRow(0, seq_points, [26, 26, 26], False, [True, True, True])],
        exits=[(0, False)] * 3,
    )


def test_the_database_records_each_match_once_and_belongs_to_one_ladder(tmp_path: Path) -> None:
    config_path = tmp_path / "l.toml"
    config_path.write_text(GOOD)
    config = load_ladder(config_path)
    store = Store.open(config.database, config.name, config.identity(), config.bots)
    with pytest.raises(StoreError, match="another `arena ladder run`"):
        Store.open(config.database, config.name, config.identity(), config.bots)
    assert store.record(_record("0:a,b,c", [10, -5, -5]), {"a": (26.0, 8.0)}) == 1
    assert store.record(_record("0:a,b,c", [10, -5, -5]), {"a": (27.0, 8.0)}) is None
    assert store.done_keys() == {"0:a,b,c"}
    store.close()

    changed = load_ladder(config_path)
    config_path.write_text(GOOD.replace("seed = 3", "seed = 4"))
    with pytest.raises(StoreError, match="other seed"):
        Store.open(changed.database, changed.name, load_ladder(config_path).identity(), changed.bots)
    config_path.write_text(GOOD.replace("deal_sets = 2", "deal_sets = 5"))  # more deal sets: fine
    more = load_ladder(config_path)
    store = Store.open(more.database, more.name, more.identity(), more.bots)
    assert store.done_keys() == {"0:a,b,c"}
    rows = store.conn.execute("SELECT bot, points FROM deals ORDER BY seat").fetchall()
    assert [tuple(r) for r in rows] == [("a", 10), ("b", -5), ("c", -5)]
    store.close()


# --------------------------------------------------------------------------- statistics


def test_t_quantiles_and_the_confidence_interval() -> None:
    assert t95(1) == pytest.approx(12.706, abs=1e-3)
    assert t95(10) == pytest.approx(2.228, abs=1e-3)
    assert t95(60) == pytest.approx(2.0003, abs=1e-3)
    assert t95(10_000) == pytest.approx(1.9602, abs=1e-3)
    ci = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert ci.mean == 3.0 and ci.sd == pytest.approx(math.sqrt(2.5))
    assert ci.half_width == pytest.approx(2.776 * math.sqrt(2.5) / math.sqrt(5), rel=1e-3)
    assert math.isinf(mean_ci([4.0]).half_width)


def test_ratings_follow_the_points_and_a_forfeit_ranks_last() -> None:
    ratings = Ratings(["a", "b", "c"])
    deal = DealRow(0, [30, -10, -20], [40, 20, 18], False, [True, True, True])
    for _ in range(5):
        ratings.update(["a", "b", "c"], [deal], None)
    mu = {bot: r.mu for bot, r in ratings.ratings.items()}
    assert mu["a"] > mu["b"] > mu["c"]
    assert ratings.leader() is not None and ratings.leader()[0] == "a"  # type: ignore[index]
    annulled = DealRow(1, [-10, 0, 0], [0, 0, 0], True, [True, True, True])
    before = dict(mu)
    ratings.update(["a", "b", "c"], [annulled], None)
    assert {bot: r.mu for bot, r in ratings.ratings.items()} == before
    ratings.update(["a", "b", "c"], [], forfeited=0)
    assert ratings.ratings["a"].mu < before["a"]


def test_pair_test_bounds_and_decisions() -> None:
    test = PairTest(alpha=0.05, beta=0.05, effect=0.3, min_n=6)
    assert test.upper == pytest.approx(math.log(0.95 / 0.025))
    assert test.lower == pytest.approx(math.log(WEIGHTS[0] * 0.05 / 0.975))
    rng = random.Random(1)
    stronger = [rng.gauss(0.8, 1.0) for _ in range(40)]
    assert test.decide(stronger[:5]) is None  # too few observations, however clear
    assert test.decide(stronger) == "A"
    assert test.decide([-x for x in stronger]) == "B"
    # Only the direction of the observations counts: a change of the points' scale changes nothing.
    assert test.llrs([100 * x for x in stronger]) == pytest.approx(test.llrs(stronger), rel=1e-9)
    # Centred on no difference with many observations: both alternatives rejected.
    equal = [x - sum(stronger) / 40 for x in stronger] * 4
    assert test.decide(equal) == "equal"
    # Every deal set alike: a difference far beyond the effect, found on few, but not infinite.
    a, b = test.llrs([20.0] * 6)
    assert test.upper < a < 20 and b < 0
    # No difference at all in any deal set: evidence against either being stronger, growing.
    assert test.llrs([0.0] * 10)[0] < test.llrs([0.0] * 5)[0] < 0
    with pytest.raises(ValueError):
        PairTest(alpha=0.6)
    with pytest.raises(ValueError):
        PairTest(min_n=1)


def _closed_form_llr(xs: list[float], theta: float) -> float:
    """The invariant LLR of two or three observations, from I_1(s) = √(2π) e^(s²/2) Φ(s),
    I_2 = 1 + s·I_1, I_3 = s·I_2 + I_1 and I_2(0) = 1, I_3(0) = √(π/2)."""
    s = theta * sum(xs) / math.sqrt(sum(x * x for x in xs))
    i1 = math.sqrt(2 * math.pi) * math.exp(s * s / 2) * (1 + math.erf(s / math.sqrt(2))) / 2
    i2 = 1 + s * i1
    ratio = i2 if len(xs) == 2 else (s * i2 + i1) / math.sqrt(math.pi / 2)
    return -len(xs) * theta * theta / 2 + math.log(ratio)


@pytest.mark.parametrize(("xs", "theta"), [([1.0, 1.0], 0.3), ([1.0, -2.0], 0.6), ([3.0, 1.0, 2.0], 1.2)])
def test_the_t_test_llr_on_tiny_inputs_is_exact(xs: list[float], theta: float) -> None:
    total, squares = sum(xs), sum(x * x for x in xs)
    assert t_llr(len(xs), total, squares, theta) == pytest.approx(_closed_form_llr(xs, theta), abs=1e-6)
    # The pair test's LLR of each side is the mixture over θ = effect · SCALES.
    mixed = sum(w * math.exp(_closed_form_llr(xs, 0.3 * k)) for w, k in zip(WEIGHTS, SCALES, strict=True))
    assert PairTest(effect=0.3).llrs(xs)[0] == pytest.approx(math.log(mixed), abs=1e-6)
    assert PairTest(effect=0.3).llrs(xs)[1] == PairTest(effect=0.3).llrs([-x for x in xs])[0]


def test_with_no_difference_the_likelihood_ratio_averages_one() -> None:
    # What makes the error bound hold at any budget: with no difference the likelihood ratio's
    # mean is one. For two observations their direction is uniform on the circle; averaged over
    # it, exp(t_llr) is 1, where a σ estimated and plugged in gives an unbounded mean (σ̂ → 0).
    for theta in (0.3, 1.2):
        angles = [2 * math.pi * (i + 0.5) / 600 for i in range(600)]
        mean = sum(math.exp(t_llr(2, math.cos(a) + math.sin(a), 1.0, theta)) for a in angles) / 600
        assert mean == pytest.approx(1.0, abs=1e-6)


def _run(test: PairTest, rng: random.Random, mean: float, cap: int) -> tuple[str | None, int]:
    n, total, squares = 0, 0.0, 0.0
    while n < cap:
        x = rng.gauss(mean, 1.0)
        n, total, squares = n + 1, total + x, squares + x * x
        if n >= test.min_n:
            a, b = test.sums_llrs(n, total, squares)
            if a >= test.upper or b >= test.upper:
                return ("A" if a >= test.upper else "B"), n
            if a <= test.lower and b <= test.lower:
                return "equal", n
    return None, n


def test_equal_bots_are_mostly_not_separated_and_a_real_difference_stops_early() -> None:
    # A/A: 120 pairs of equal bots (normal deal-set observations), tested after every deal set up
    # to 30: either is declared stronger in at most α = 0.05 of them, give or take the binomial
    # 99% bound over 120 runs (12). `python -m benchmarks decide --calibrate` measures the rate
    # without a budget, over thousands of runs.
    test = PairTest()
    rng = random.Random(34)
    said = [_run(test, rng, 0.0, 30)[0] for _ in range(120)]
    assert sum(v in ("A", "B") for v in said) <= 12
    # One sd of a difference: found, in A's favour, every time, well before 40 deal sets.
    found = [_run(test, rng, 1.0, 40) for _ in range(40)]
    assert all(v == "A" for v, _ in found), found
    assert sum(n for _, n in found) / 40 < 20


def test_standings_json_of_an_empty_ladder(tmp_path: Path) -> None:
    path = tmp_path / "l.toml"
    path.write_text(GOOD)
    config = load_ladder(path)
    Store.open(config.database, config.name, config.identity(), config.bots).close()
    done = arena("ladder", "standings", config.database, "--json")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    assert table["matches_done"] == 0 and [b["deals"] for b in table["bots"]] == [0, 0, 0]
    assert all(b["ci95"] is None for b in table["bots"])


def test_the_progress_bar_shows_rate_time_left_and_leader_with_the_log_lines_above_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    terminal = Console(file=out, force_terminal=True, color_system=None, width=110, soft_wrap=True)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: JSON log lines
    configure(logging.INFO)
    route_logs("ladder", on=terminal)
    try:
        with Bar("matches", per_minute=True, on=terminal).start(10, done=2) as bar:
            bar.progress.tasks[0].start_time -= 60  # this run began a minute ago
            bar.advance(leader_note(("random", 3.0)))
            bar.advance(leader_note(("heuristic", 12.3)))
            bar.refresh()
            fields = bar.fields()
            # The clock runs on while the test does: a loaded machine adds a moment to the minute.
            assert (fields["done"], fields["total"]) == (4, 10)
            assert fields["per_min"] == pytest.approx(2.0, abs=0.05)
            assert fields["eta_s"] == pytest.approx(180, abs=5)
            structlog.get_logger(component="ladder").warning("bot crashed", bot="random", status=1)
            structlog.get_logger(component="referee").info("seat connected")  # not the ladder's
    finally:
        structlog.reset_defaults()
    # What the terminal shows, line by line: each redraw starts with a carriage return.
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    shown = [line for line in re.split(r"[\r\n]", text) if line]
    bar_line = " 4/10 matches  2.0/min  elapsed 0:01:00  ETA 0:03:00  leader heuristic (12.3)"
    assert shown[-1].startswith("━") and shown[-1].endswith(bar_line)  # left on screen at the end
    # The log line is printed whole on a line of its own, and the bar drawn again below it.
    [crash] = [i for i, line in enumerate(shown) if "bot crashed" in line]
    assert json.loads(shown[crash]) | {"timestamp": None} == {
        "component": "ladder",
        "bot": "random",
        "status": 1,
        "event": "bot crashed",
        "level": "warning",
        "timestamp": None,
    }
    assert shown[crash + 1].endswith(bar_line)
    assert "seat connected" not in out.getvalue()


def test_without_a_terminal_no_bar_is_drawn_and_the_log_lines_are_plain(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(logging.INFO)
    route_logs("ladder")
    try:
        with Bar("matches", per_minute=True).start(3) as bar:
            bar.advance("leader a (1.0)")
            structlog.get_logger(component="ladder").info("match recorded", **bar.fields())
        assert not bar.shown and bar.fields()["done"] == 1
    finally:
        structlog.reset_defaults()
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert json.loads(line)["event"] == "match recorded" and json.loads(line)["total"] == 3
