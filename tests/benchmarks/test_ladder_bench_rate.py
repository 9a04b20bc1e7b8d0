"""`python -m benchmarks ladder`'s deals per second from a ladder's database: the first wave left out."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.ladder.store import SCHEMA
from benchmarks.ladder import recorded_rate


def _database(path: Path, matches: list[tuple[float, float]], deals: int = 3) -> Path:
    """A ladder database with `matches` (started, finished), each of `deals` deals and 30 decisions a deal."""
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA)
        for seq, (started, finished) in enumerate(matches, 1):
            conn.execute(
                "INSERT INTO matches (seq, key, deal_set, table_no, arrangement, seed, seats, match_id,"
                " termination, forfeited, scores, decisions, started, finished, seconds)"
                " VALUES (?, ?, 0, 0, 0, 1, '[]', ?, 'completed', NULL, '[]', ?, ?, ?, ?)",
                (seq, f"k{seq}", f"m{seq}", 30 * deals, started, finished, finished - started),
            )
            for deal in range(deals):
                conn.execute(
                    "INSERT INTO deals (match_seq, deal, seat, bot, points, card_points, annulled, active)"
                    " VALUES (?, ?, 0, 'a', 0, 0, 0, 1)",
                    (seq, deal),
                )
    return path


def test_the_first_wave_is_left_out(tmp_path: Path) -> None:
    # Two slots: matches 1 and 2 start at 0 and end together at 1.0; then one ends every 0.5 s.
    matches = [(0.0, 1.0), (0.0, 1.01), (1.0, 1.5), (1.01, 2.0), (1.5, 2.5), (2.0, 3.0)]
    rate, per_deal = recorded_rate(_database(tmp_path / "l.sqlite", matches), slots=2)
    # After the second match's end (1.01): 4 matches of 3 deals in 1.99 s, the steady 6 deals/s.
    assert rate == pytest.approx(12 / 1.99, rel=1e-3)
    assert per_deal == 30
    # Counted from the first end, the wave's second match would be in it: 15 deals in 2 s.
    assert rate < 15 / 2.0


def test_a_ladder_within_one_wave_is_timed_from_its_start(tmp_path: Path) -> None:
    matches = [(0.5, 2.0), (0.5, 2.5)]
    rate, _ = recorded_rate(_database(tmp_path / "l.sqlite", matches), slots=4)
    assert rate == pytest.approx(6 / 2.0)
