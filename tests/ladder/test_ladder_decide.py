"""Adaptive ladders (`[decide]`, arena/ladder/decide.py): one paired observation per deal set,
the standings' verdict on each pair to decide, and the run that plays deal sets only where a
pair is still undecided and stops when every one is separated. The scheduling is driven here by
a stand-in for the referee that records made-up results in a real SQLite file; the last test
runs a real adaptive ladder of the example bots."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
from support import arena
from support.ladder import HEURISTIC, RANDOM, RANDOM_2, ladder_file

from arena.ladder.config import LadderFileError, load_ladder
from arena.ladder.decide import Decide, pair_observations, seat_deals, verdict
from arena.ladder.run import RunSummary, play_until_decided
from arena.ladder.schedule import ScheduledMatch, build_schedule
from arena.ladder.stats import standings
from arena.ladder.store import MatchRecord, Store
from arena.replay.summary import DealRow

DEALS = 2


def noise(*parts: object) -> int:
    """A made-up but fixed number in -10…10."""
    return hashlib.sha256(repr(parts).encode()).digest()[0] % 21 - 10


def results_of(strength: dict[str, int], noisy: set[str]) -> Callable[[ScheduledMatch], MatchRecord]:
    """A match's made-up record: each seat's points per deal are its bot's strength, plus the
    deck's luck for that seat (which the duplicate cancels), plus for `noisy` bots a deal set's
    form (which it does not)."""

    def play(m: ScheduledMatch) -> MatchRecord:
        deals = []
        for deal in range(DEALS):
            points = [
                strength[bot]
                + 5 * noise(m.deal_set, deal, seat)
                + (noise(m.deal_set, bot) if bot in noisy else 0)
                for seat, bot in enumerate(m.bots)
            ]
            deals.append(DealRow(deal, points, [0] * len(points), False, [True] * len(points)))
        scores = [sum(d.points[s] for d in deals) for s in range(len(m.bots))]
        return MatchRecord(
            m.key, m.deal_set, m.table, m.arrangement, m.seed, list(m.bots), m.key, "completed",
            None, scores, 0, 0.0, 1.0, None, deals=deals,
        )  # fmt: skip

    return play


def adaptive(tmp_path: Path, bots: list[str], decide: str, budget: int = 12) -> tuple[Path, Store]:
    bot_tables = "".join(
        f'[[bots]]\nname = "{b}"\ncommand = "{{python}} -m arena_bot.random_bot"\n' for b in bots
    )
    path = ladder_file(
        tmp_path, f"seed = 3\ndeal_sets = {budget}\ndeals = {DEALS}\n[decide]\n{decide}\n", bot_tables
    )
    config = load_ladder(path)
    return path, Store.open(config.database, config.name, config.identity(), config.bots)


def run_adaptive(path: Path, store: Store, play: Callable[[ScheduledMatch], MatchRecord]) -> RunSummary:
    config = load_ladder(path)
    schedule = build_schedule(
        [b.name for b in config.bots], config.seats, config.deal_sets, config.seed, "permutations"
    )
    summary = RunSummary(planned=len(schedule), recorded_before=0)

    async def record(batch: list[ScheduledMatch]) -> None:
        for m in batch:
            store.record(play(m), {})

    trio.run(play_until_decided, config, store, schedule, record, summary)
    return summary


def played_tables(store: Store) -> dict[int, set[int]]:
    found: dict[int, set[int]] = {}
    for deal_set, table in store.conn.execute("SELECT deal_set, table_no FROM matches"):
        found.setdefault(deal_set, set()).add(table)
    return found


def test_a_ranking_stops_at_the_first_deal_set_that_separates_every_adjacent_pair(tmp_path: Path) -> None:
    path, store = adaptive(tmp_path, ["a", "b", "c"], "min_deal_sets = 3", budget=20)
    summary = run_adaptive(path, store, results_of({"a": 40, "b": 20, "c": 0}, {"a", "b", "c"}))
    assert summary.decided is True
    table = standings(store.conn, load_ladder(path).decide)
    # The pairs are adjacent by points per deal (the luck of the cards may reorder the ratings).
    assert sorted(table.bots, key=lambda b: -b.points_per_deal)[0].name == "a"
    assert [(p.higher, p.lower, p.separated, p.stronger) for p in table.pairs] == [
        ("a", "b", True, "a"), ("b", "c", True, "b"),
    ]  # fmt: skip
    played = len(played_tables(store))
    assert 3 <= played < 20
    # One deal set fewer did not separate both: it stopped at the first that did.
    rows = [r for r in seat_deals(store.conn, 6) if r.deal_set < played - 1]
    test = Decide(min_deal_sets=3).test()
    assert not all(verdict(rows, a, b, test).resolved for a, b in (("a", "b"), ("b", "c")))
    store.close()


def test_it_plays_only_the_tables_of_undecided_pairs_and_stops_at_its_budget(tmp_path: Path) -> None:
    # c and d are the same bot: luck aside (which the permutations cancel) they score alike,
    # so their pair is never separated; a and b are far above.
    path, store = adaptive(tmp_path, ["a", "b", "c", "d"], "min_deal_sets = 3", budget=8)
    summary = run_adaptive(path, store, results_of({"a": 60, "b": 30, "c": 0, "d": 0}, {"a", "b"}))
    assert summary.decided is False
    tables = played_tables(store)
    assert sorted(tables) == list(range(8))  # the budget: every deal set
    assert tables[0] == {0, 1, 2, 3}  # at first all four tables of three
    # Once a > b > the rest is settled, only the tables where c and d both sit: (a,c,d), (b,c,d).
    assert tables[7] == {2, 3}
    pairs = standings(store.conn, load_ladder(path).decide).pairs
    assert [p.separated for p in pairs] == [True, True, False]
    assert pair_observations(seat_deals(store.conn, 6), "c", "d") == [0.0] * 8
    store.close()


def test_a_pair_to_decide_is_decided_alone(tmp_path: Path) -> None:
    path, store = adaptive(tmp_path, ["a", "b", "c", "d"], 'pair = ["b", "a"]\nmin_deal_sets = 3')
    summary = run_adaptive(path, store, results_of({"a": 60, "b": 30, "c": 0, "d": 0}, {"a", "b"}))
    assert summary.decided is True
    pairs = standings(store.conn, load_ladder(path).decide).pairs
    assert [(p.higher, p.lower, p.stronger) for p in pairs] == [("a", "b", "a")]
    assert all(tables == {0, 1} for tables in played_tables(store).values())  # (a,b,c), (a,b,d)
    store.close()


def test_a_table_partly_played_gives_no_observation(tmp_path: Path) -> None:
    _, store = adaptive(tmp_path, ["a", "b", "c"], "")
    play = results_of({"a": 2, "b": 1, "c": 0}, set())
    for m in build_schedule(["a", "b", "c"], 3, 2, 3, "permutations")[:9]:  # deal set 0, half of 1
        store.record(play(m), {})
    assert len(pair_observations(seat_deals(store.conn, 6), "a", "b")) == 1
    store.close()


@pytest.mark.parametrize(
    ("decide", "error"),
    [
        ('pair = ["a", "x"]', "decide.pair: expected two of the ladder's bots"),
        ("confidence = 1.5", r"decide.confidence: expected a number between 0.5 and 1 \(exclusive\)"),
        ("colour = 1", "decide: unknown key 'colour'"),
    ],
)
def test_a_bad_decide_table_is_one_error_naming_the_key(tmp_path: Path, decide: str, error: str) -> None:
    bots = "".join(f'[[bots]]\nname = "{b}"\ncommand = "{{python}} -m arena_bot.random_bot"\n' for b in "abc")
    path = ladder_file(tmp_path, f"[decide]\n{decide}\n", bots)
    with pytest.raises(LadderFileError, match=error):
        load_ladder(path)


def test_an_adaptive_ladder_of_the_example_bots_resumed_stops_before_its_budget(tmp_path: Path) -> None:
    head = "seed = 4\ndeal_sets = 6\ndeals = 1\nconcurrency = 2\nreferees = 1\n"
    head += '[decide]\npair = ["heuristic", "random"]\nmin_deal_sets = 2\n'
    bots = [
        bot.replace("{python} -m arena_bot.", "inprocess:").replace("_bot", "")
        for bot in (HEURISTIC, RANDOM, RANDOM_2)
    ]
    path = ladder_file(tmp_path, head, *bots)  # the example bots in the referee's process: quick
    first = arena("ladder", "run", path, "--no-progress", "--max-matches", "3", "--json")
    assert first.returncode == 0, first.stderr[-3000:]
    assert json.loads(first.stdout)["matches_done"] == 3
    done = arena("ladder", "run", path, "--no-progress", "--json")  # goes on where it stopped
    assert done.returncode == 0, done.stderr[-3000:]
    table = json.loads(done.stdout)
    [pair] = table["pairs"]
    assert pair["separated"] and pair["stronger"] == "heuristic", pair
    assert table["matches_done"] < table["matches_planned"] == 36
    with sqlite3.connect(tmp_path / "ladder.sqlite") as conn:
        sets = conn.execute("SELECT COUNT(DISTINCT deal_set) FROM matches").fetchone()[0]
    assert pair["deal_sets"] == sets == table["matches_done"] // 6
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert any(line["event"] == "ladder decided" for line in lines)
