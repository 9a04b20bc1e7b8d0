"""The standing arena's ratings on luck-adjusted points (arena/standing/luck.py), on a real store.

Matches are recorded as the arena records them: `summarise` reads the replay (a sample the
referee wrote, or one written here in the same format with chosen points), `Store.finish_match`
rates and stores it.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.engine import Card, find_variant
from arena.ratings import Ratings
from arena.replay.summary import read_results
from arena.search.luck import expectation_deck, luck
from arena.standing.pending import PendingRecord
from arena.standing.results import summarise
from arena.standing.store import Store

SAMPLES = Path(__file__).resolve().parents[2] / "replays" / "samples"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with contextlib.closing(Store(str(tmp_path / "arena.db"))) as opened:
        for name in ("a", "b", "c", "d"):
            opened.register_bot(name)
        yield opened


def record(path: Path, match_id: str, bots: list[str]) -> PendingRecord:
    """The pending record the server writes for the finished match of replay `path`."""
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    end = lines[-1]
    assert end["type"] == "match_end"
    return PendingRecord(
        match_id=match_id,
        kind="result",
        variant=lines[0]["variant"],
        bots=bots,
        ended_ms=1,
        replay=path.name,
        termination=end["termination"],
        forfeited=end["forfeited"],
        scores=[int(s) for s in end["scores"]],
    )


def finish(store: Store, path: Path, match_id: str, bots: list[str]) -> None:
    pending = record(path, match_id, bots)
    store.start_match(match_id, pending.variant, seed=1, deals=1, bots=bots)
    result, rate = summarise(pending, path.parent)
    store.finish_match(result, pause_after=3, pause_ms=1000, rate=rate)


def starts(path: Path) -> list[tuple[int, list[str]]]:
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    return [(line["dealer"], line["deck"]) for line in lines if line["type"] == "deal_start"]


def test_a_recorded_match_carries_raw_and_adjusted_scores(store: Store, tmp_path: Path) -> None:
    """A referee's Danish replay of two deals: raw scores as played (pots included), adjusted
    ones the raw less each seat's luck on both deals; standings and recent matches show both."""
    path = Path(shutil.copy(SAMPLES / "danish.jsonl", tmp_path / "danish.jsonl"))
    variant = find_variant("danish", {"redeal": "claim"})
    raw = record(path, "m1", ["a", "b", "c"]).scores
    taken = [0.0, 0.0, 0.0]
    rows = read_results(path, 3).deals
    for (dealer, deck), row in zip(starts(path), rows, strict=True):
        for seat, value in enumerate(luck(variant, dealer, [Card.parse(c) for c in deck])):
            if row.active[seat] and not row.annulled:
                taken[seat] += value
    assert any(abs(t) > 1 for t in taken)  # the cards were not neutral
    finish(store, path, "m1", ["a", "b", "c"])
    table = {s.bot: s for s in store.standings("danish", recent=1)}
    for seat, bot in enumerate(["a", "b", "c"]):
        standing = table[bot]
        assert standing.score == raw[seat]  # the raw score keeps its meaning
        assert standing.adjusted_deals == standing.deals == 2
        assert standing.adjusted_score == pytest.approx(raw[seat] - taken[seat])
        assert standing.to_dict()["mean_adjusted_score_per_deal"] == pytest.approx(
            (raw[seat] - taken[seat]) / 2, abs=1e-3
        )
        assert standing.recent[0].scores == raw
        assert standing.recent[0].adjusted_scores == pytest.approx(
            [r - t for r, t in zip(raw, taken, strict=True)]
        )


def write_replay(path: Path, variant: str, dealer: int, deck: list[str], points: list[int]) -> None:
    """A one-deal match's replay in the referee's format with the given deck and points."""
    seats = len(points)
    actions = [{"seat": seat} for seat in range(seats)]
    lines = [
        {"type": "header", "variant": variant, "options": {}, "seed": 1, "deals": 1},
        {"type": "deal_start", "deal": 0, "dealer": dealer, "pots": {}, "stakes": True, "deck": deck},
        {
            "type": "deal",
            "deal": 0,
            "record": {
                "actions": actions,
                "result": {"deltas": points, "card_points": [0] * seats, "annulled": False},
            },
        },
        {"type": "match_end", "termination": "completed", "forfeited": None, "scores": points},
    ]
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))


def test_ratings_follow_the_adjusted_ranking(store: Store, tmp_path: Path) -> None:
    """A deal whose raw points rank the seats a > b > c while the cards favoured a so much that
    the adjusted points rank b > c > a: the ratings follow the adjusted ranking."""
    variant = find_variant("grosstarock")
    deck = expectation_deck(5)
    value = luck(variant, 0, deck)
    assert value[0] > 40 and value[1] < -10 and value[2] < -20  # the deck's luck, fixed forever
    points = [10, 5, -15]
    path = tmp_path / "m2.jsonl"
    write_replay(path, "grosstarock", 0, [c.code for c in deck], points)
    finish(store, path, "m2", ["a", "b", "c"])
    mu = {s.bot: s.mu for s in store.standings("grosstarock")}
    assert mu["b"] > mu["c"] > mu["a"]  # adjusted: 23.2, 14.7, -37.9
    raw = Ratings(["a", "b", "c"])
    raw.update(["a", "b", "c"], read_results(path, 3).deals, None)
    assert raw.of(["a"])["a"][0] > raw.of(["b"])["b"][0]  # what raw points would have said


def test_american_stays_raw(store: Store, tmp_path: Path) -> None:
    """In american the control predicts nothing useful: ratings rank raw points, no adjusted score."""
    path = tmp_path / "m3.jsonl"
    write_replay(path, "american", 0, [c.code for c in expectation_deck(5)], [30, 10, -15, -25])
    finish(store, path, "m3", ["a", "b", "c", "d"])
    table = store.standings("american", recent=1)
    assert [s.bot for s in sorted(table, key=lambda s: -s.mu)] == ["a", "b", "c", "d"]
    assert all(s.adjusted_deals == 0 and s.to_dict()["mean_adjusted_score_per_deal"] is None for s in table)
    assert table[0].recent[0].adjusted_scores == [None] * 4


def test_a_schema_4_store_gains_the_adjusted_columns(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    Store(str(path)).close()
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:  # as a schema 4 store left it
        conn.execute("ALTER TABLE match_seats DROP COLUMN adjusted_score")
        conn.execute("ALTER TABLE ratings DROP COLUMN adjusted_score")
        conn.execute("ALTER TABLE ratings DROP COLUMN adjusted_deals")
        conn.execute("UPDATE arena_schema SET version = 4")
    with contextlib.closing(Store(str(path))) as store:
        for name in ("a", "b", "c"):
            store.register_bot(name)
        replay = tmp_path / "m4.jsonl"
        write_replay(replay, "grosstarock", 0, [c.code for c in expectation_deck(5)], [10, 5, -15])
        finish(store, replay, "m4", ["a", "b", "c"])
        assert {s.bot: s.adjusted_deals for s in store.standings("grosstarock")} == {"a": 1, "b": 1, "c": 1}
