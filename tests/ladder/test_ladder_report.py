"""`arena ladder report`'s list of matches and its viewer pages, on a small real ladder: real bot
processes, a real server, a real SQLite file, the report read back as HTML."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from support import arena
from support.ladder import HEURISTIC, RANDOM, RANDOM_2, crasher, ladder_file

# --------------------------------------------------------------------------- reading the page


@dataclass
class Cell:
    attrs: dict[str, str]
    text: str = ""
    links: list[str] = field(default_factory=list)


@dataclass
class Row:
    attrs: dict[str, str]
    cells: list[Cell] = field(default_factory=list)


@dataclass
class Table:
    attrs: dict[str, str]
    head: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)


class Page(HTMLParser):
    """The tables of a page (header texts and body rows), its scripts and its asset references."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tables: list[Table] = []
        self.scripts: list[str] = []
        self.references: list[str] = []  # every src and href
        self._cell: Cell | None = None
        self._th: list[str] | None = None
        self._script: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.references += [values[k] for k in ("src", "href") if k in values]
        if tag == "table":
            self.tables.append(Table(values))
        elif tag == "tr" and self.tables:
            self.tables[-1].rows.append(Row(values))
        elif tag == "td" and self.tables:
            self._cell = Cell(values)
            self.tables[-1].rows[-1].cells.append(self._cell)
        elif tag == "th":
            self._th = []
        elif tag == "a" and self._cell is not None:
            self._cell.links.append(values.get("href", ""))
        elif tag == "script":
            self._script = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._cell = None
        elif tag == "th" and self._th is not None:
            self.tables[-1].head.append("".join(self._th).strip())
            self._th = None
        elif tag == "script" and self._script is not None:
            self.scripts.append("".join(self._script))
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.text += data
        if self._th is not None:
            self._th.append(data)
        if self._script is not None:
            self._script.append(data)

    def matches(self) -> Table:
        table = next(t for t in self.tables if "matches" in t.attrs.get("class", "").split())
        table.rows = [row for row in table.rows if row.cells]  # not the header's
        return table


def seat_cells(row: Row, css: str) -> list[Cell]:
    """The row's cells of one kind (bot, points, faults) in seat order."""
    cells = [c for c in row.cells if css in c.attrs.get("class", "").split() and "data-seat" in c.attrs]
    return sorted(cells, key=lambda c: int(c.attrs["data-seat"]))


def replay_cell(row: Row) -> Cell:
    return next(c for c in row.cells if "replay" in c.attrs.get("class", "").split())


# --------------------------------------------------------------------------- the ladder


@dataclass
class Ladder:
    directory: Path
    db: Path
    replay_dir: Path


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Ladder:
    """Eight one-deal matches: the six of the clean table (heuristic, random, random-2) first, then
    two with a bot that crashes at its sixth request, so faults and crashes in the last two."""
    directory = tmp_path_factory.mktemp("report")
    head = "name = 'report'\nseed = 4\ndeals = 1\nconcurrency = 2\n[faults]\nreconnect_grace_ms = 300\n"
    path = ladder_file(directory, head, HEURISTIC, RANDOM, RANDOM_2, crasher(6))
    run = arena("ladder", "run", path, "--max-matches", "8", "--no-progress")
    assert run.returncode == 0, run.stderr
    return Ladder(directory, directory / "ladder.sqlite", directory / "ladder-replays")


def recorded(db: Path) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM matches ORDER BY seq").fetchall()
    finally:
        conn.close()


def faults_by_seat(db: Path) -> dict[tuple[int, int], list[tuple[int | None, int | None]]]:
    conn = sqlite3.connect(db)
    found: dict[tuple[int, int], list[tuple[int | None, int | None]]] = {}
    for seq, seat, deal, step in conn.execute(
        "SELECT match_seq, seat, deal, step FROM faults ORDER BY rowid"
    ):
        found.setdefault((seq, seat), []).append((deal, step))
    conn.close()
    return found


def troubled(db: Path) -> set[int]:
    conn = sqlite3.connect(db)
    seqs = {s for (s,) in conn.execute("SELECT match_seq FROM faults")}
    seqs |= {s for (s,) in conn.execute("SELECT match_seq FROM exits WHERE crashed = 1")}
    seqs |= {s for (s,) in conn.execute("SELECT seq FROM matches WHERE forfeited IS NOT NULL")}
    conn.close()
    return seqs


def no_external_assets(text: str, page: Page) -> None:
    assert not [r for r in page.references if re.match(r"\s*(https?:)?//", r)]
    assert not re.search(r"url\(\s*['\"]?\s*(https?:)?//", text)  # no stylesheet fetches either
    assert not re.search(r"@import", text)
    # An XML namespace is a name, not an address: the drawn cards' SVG elements need it.
    named = text.replace('"http://www.w3.org/2000/svg"', "")
    assert "http://" not in named and "https://" not in named


# --------------------------------------------------------------------------- the tests


def test_the_report_lists_every_match_and_links_its_replay_in_the_viewer(
    ladder: Ladder, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    done = arena("ladder", "report", ladder.db, "-o", out)
    assert done.returncode == 0, done.stderr
    text = (out / "index.html").read_text()
    page = Page(text)
    table = page.matches()
    matches = recorded(ladder.db)
    assert len(matches) == 8
    faults = faults_by_seat(ladder.db)
    assert any(seq >= 7 for seq, _ in faults)  # the crashing bot played the last two
    # How each bot ran, from the database's processes table (run information the standings JSON leaves out).
    with sqlite3.connect(ladder.db) as conn:
        ran = dict(conn.execute("SELECT bot, mode || ' ' || COUNT(*) FROM processes GROUP BY bot, mode"))
    assert {row.cells[1].text: row.cells[-1].text for row in page.tables[0].rows if row.cells} == ran
    rows = {row.attrs["data-match"]: row for row in table.rows}
    assert len(table.rows) == len(matches) and set(rows) == {m["match_id"] for m in matches}
    for match in matches:
        row = rows[match["match_id"]]
        assert row.cells[0].text == str(match["seq"])
        assert [c.text for c in seat_cells(row, "bot")] == json.loads(match["seats"])
        assert [int(c.attrs["data-sort"]) for c in seat_cells(row, "points")] == json.loads(match["scores"])
        counts = [int(c.attrs["data-sort"]) for c in seat_cells(row, "faults")]
        assert counts == [len(faults.get((match["seq"], s), [])) for s in range(3)]
        assert any(c.text == match["termination"] for c in row.cells)
        # Eight matches, fewer than the default 50: every one has its viewer page.
        (link,) = replay_cell(row).links
        assert link == f"replays/{match['match_id']}.html"
        viewer = (out / link).read_text()
        assert match["match_id"] in viewer and "<script>" in viewer
        no_external_assets(viewer, Page(viewer))
        # A fault count links to the first fault's position in that page.
        for seat, cell in enumerate(seat_cells(row, "faults")):
            placed = [(d, s) for d, s in faults.get((match["seq"], seat), []) if d is not None]
            if not placed:
                assert cell.links == [] or cell.links == [link]
            else:
                deal, step = placed[0]
                assert cell.links == [f"{link}#deal={deal}&step={step}&seat=all"]
    assert table.head[:3] == ["#", "match", "replay"]
    assert table.head.count("points") == 3 and table.head.count("faults") == 3
    # The columns sort on a click: the inline script, and the table it works on.
    assert "sortable" in table.attrs["class"].split()
    assert any('addEventListener("click"' in s and "table.sortable" in s for s in page.scripts)
    no_external_assets(text, page)
    # The Hello column of the standings: what the example bots say.
    assert "Hello: name, version" in text and "heuristic (no version)" in text


def test_viewer_pages_for_the_last_n_and_the_troubled_and_rows_whose_replay_is_gone(
    ladder: Ladder, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    done = arena("ladder", "report", ladder.db, "-o", out, "--replay-pages", "1")
    assert done.returncode == 0, done.stderr
    matches = recorded(ladder.db)
    last_troubled = max(troubled(ladder.db))
    chosen = {matches[-1]["seq"], last_troubled}
    rows = Page((out / "index.html").read_text()).matches().rows
    for match, row in zip(matches, rows, strict=True):
        cell = replay_cell(row)
        if match["seq"] in chosen:
            assert cell.links == [f"replays/{match['match_id']}.html"]
        else:
            assert cell.links == [] and cell.text == "no page"
    assert len(list((out / "replays").glob("*.html"))) == len(chosen)
    assert not list((out / "replays").glob("*.part"))

    # The first match's replay log is gone; every other match gets its page, the earlier ones kept.
    copy = tmp_path / "replays"
    copy.mkdir()
    for log in ladder.replay_dir.glob("*.jsonl"):
        shutil.copy2(log, copy / log.name)  # with its time: the pages written from it stay current
    (copy / matches[0]["replay"]).unlink()
    kept = {p.name: p.stat().st_mtime_ns for p in (out / "replays").glob("*.html")}
    again = arena(
        "ladder", "report", ladder.db, "-o", out, "--replay-pages", "all", "--replay-dir", copy
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    rows = Page((out / "index.html").read_text()).matches().rows
    states = Counter("link" if replay_cell(r).links else replay_cell(r).text for r in rows)
    assert states == Counter({"link": 7, "replay gone": 1})
    assert replay_cell(rows[0]).text == "replay gone" and replay_cell(rows[0]).links == []
    assert {p.name: p.stat().st_mtime_ns for p in (out / "replays").glob("*.html") if p.name in kept} == kept

    nothing = arena("ladder", "report", ladder.db, "-o", tmp_path / "none", "--replay-pages", "0")
    assert nothing.returncode == 0, nothing.stderr
    assert not (tmp_path / "none" / "replays").exists()
    rows = Page((tmp_path / "none" / "index.html").read_text()).matches().rows
    assert {replay_cell(r).text for r in rows} == {"no page"}
    bad = arena("ladder", "report", ladder.db, "-o", tmp_path / "x", "--replay-pages", "some")
    assert bad.returncode == 2 and "--replay-pages" in bad.stderr
