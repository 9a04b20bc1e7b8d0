"""`arena ladder report DB -o DIR`: an HTML page with the standings and plots (matplotlib, Agg).

DIR/index.html links three PNG files beside it: ratings over matches, the distribution of
each bot's points per deal, and the mean points per deal with their 95% intervals. It shows
what each bot said of itself in Hello (name, version; a version that changed over the ladder
is pointed out), and lists every match: the bots by seat, their points and faults, the
termination, sortable by any column (a few lines of inline script: the page needs no network).

Each listed match links to its replay in the viewer (`arena replay html`'s page), written as
DIR/replays/<match_id>.html from the replay log in the ladder's replay directory. Pages are
written for the last `replay_pages` matches and the last `replay_pages` matches with a fault,
a crash or a forfeit (all with None); a page already there and newer than its log is kept
and linked. A match whose log is gone says so instead of linking.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display, no GUI toolkit

import matplotlib.pyplot as plt

from ..ratings import Ratings
from ..replay.html import render_html
from ..replay.log import FAULT_KINDS
from ..replay.read import ReplayReadError
from ..replay.verify import verify_replay
from .stats import BotStanding, Standings, process_modes, standings
from .store import has_table

DEFAULT_REPLAY_PAGES = 50  # viewer pages: the last N matches, and the last N with a fault

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: right; }
th:nth-child(2), td:nth-child(2) { text-align: left; }
table.cross td:first-child, table.cross th:first-child { text-align: left; }
td.pos { color: #1a7f37; } td.neg { color: #b42318; }
img { max-width: 100%; display: block; margin: 1em 0; }
.note { color: #555; font-size: 0.9em; }
.warn { color: #b42318; }
.wide { overflow-x: auto; }
td.hello, th.hello { text-align: left; }
table.matches { font-size: 0.9em; }
table.matches th, table.matches td { padding: 0.2em 0.5em; white-space: nowrap; }
table.matches td.bot, table.matches th.bot { text-align: left; border-left: 1px solid #ddd; }
table.matches td.match { font-family: ui-monospace, monospace; font-size: 0.9em; }
table.matches td.best { font-weight: bold; }
table.matches td.fault { background: #fdecea; }
table.matches td.term, table.matches .replay { text-align: left; }
table.sortable th { cursor: pointer; user-select: none; white-space: nowrap; }
table.sortable th[data-dir=asc]::after { content: " ▲"; }
table.sortable th[data-dir=desc]::after { content: " ▼"; }
"""

# Click a header to sort by its column (again: the other way). A cell sorts by its data-sort
# attribute if it has one, else by its text; numbers as numbers.
SORT_SCRIPT = """
for (const table of document.querySelectorAll("table.sortable")) {
  const heads = [...table.tHead.rows[0].cells];
  heads.forEach((th, column) => th.addEventListener("click", () => {
    const dir = th.dataset.dir === "asc" ? "desc" : "asc";
    heads.forEach(h => delete h.dataset.dir);
    th.dataset.dir = dir;
    const key = row => { const c = row.cells[column]; return c.dataset.sort ?? c.textContent.trim(); };
    const rows = [...table.tBodies[0].rows];
    const numeric = rows.every(r => key(r) !== "" && !isNaN(Number(key(r))));
    const order = (a, b) => numeric ? Number(a) - Number(b) : a.localeCompare(b, undefined, {numeric: true});
    rows.sort((a, b) => (dir === "asc" ? 1 : -1) * order(key(a), key(b)));
    table.tBodies[0].append(...rows);
  }));
}
"""


def write_report(
    conn: sqlite3.Connection,
    directory: Path,
    replay_dir: Path | None = None,
    replay_pages: int | None = DEFAULT_REPLAY_PAGES,
) -> Path:
    """Write DIR/index.html, its plots and the matches' viewer pages (see the module docstring).
    Without `replay_dir` no viewer page is written."""
    directory.mkdir(parents=True, exist_ok=True)
    table = standings(conn)
    order = [b.name for b in table.bots]
    _plot_ratings(conn, order, directory / "ratings.png")
    _plot_scores(conn, order, directory / "scores.png")
    _plot_means(table, directory / "points.png")
    matches = _matches(conn)
    _viewer_pages(matches, replay_dir, directory, replay_pages)
    index = directory / "index.html"
    index.write_text(_page(table, matches, replay_pages, process_modes(conn)), encoding="utf-8")
    return index


# --------------------------------------------------------------------------- matches


@dataclass
class MatchRow:
    seq: int
    match_id: str
    deal_set: int
    seats: list[str]
    scores: list[int]
    termination: str
    forfeited: int | None
    seconds: float
    replay: str | None  # the log's file name in the replay directory
    faults: list[list[tuple[str, int | None, int | None]]]  # per seat: (kind, deal, step) of each
    crashed: list[bool]
    hellos: list[tuple[str, str] | None]  # per seat: (name, version) of its Hello, if recorded
    page: str = ""  # the viewer page, relative to DIR, once written
    missing: str = ""  # why there is no page

    @property
    def troubled(self) -> bool:
        return self.forfeited is not None or any(self.crashed) or any(self.faults)


def _matches(conn: sqlite3.Connection) -> list[MatchRow]:
    rows: list[MatchRow] = []
    by_seq: dict[int, MatchRow] = {}
    for row in conn.execute(
        "SELECT seq, match_id, deal_set, seats, scores, termination, forfeited, seconds, replay "
        "FROM matches ORDER BY seq"
    ):
        seats = json.loads(row["seats"])
        match = MatchRow(
            seq=row["seq"],
            match_id=row["match_id"],
            deal_set=row["deal_set"],
            seats=seats,
            scores=json.loads(row["scores"]),
            termination=row["termination"],
            forfeited=row["forfeited"],
            seconds=row["seconds"],
            replay=row["replay"],
            faults=[[] for _ in seats],
            crashed=[False] * len(seats),
            hellos=[None] * len(seats),
        )
        rows.append(match)
        by_seq[match.seq] = match
    for seq, seat, kind, deal, step in conn.execute(
        "SELECT match_seq, seat, kind, deal, step FROM faults ORDER BY rowid"
    ):
        by_seq[seq].faults[seat].append((kind, deal, step))
    for seq, seat in conn.execute("SELECT match_seq, seat FROM exits WHERE crashed = 1"):
        by_seq[seq].crashed[seat] = True
    if has_table(conn, "hellos"):
        for seq, seat, name, version in conn.execute("SELECT match_seq, seat, name, version FROM hellos"):
            by_seq[seq].hellos[seat] = (name, version)
    return rows


def _viewer_pages(
    matches: list[MatchRow], replay_dir: Path | None, directory: Path, limit: int | None
) -> None:
    """Write the chosen matches' viewer pages; link every match whose page is there and current."""
    if limit is None:
        chosen = {m.seq for m in matches}
    else:
        recent = matches[-limit:] if limit else []
        troubled = [m for m in matches if m.troubled][-limit:] if limit else []
        chosen = {m.seq for m in recent} | {m.seq for m in troubled}
    pages = directory / "replays"
    for match in matches:
        source = replay_dir / match.replay if replay_dir is not None and match.replay else None
        if source is None or not source.is_file():
            match.missing = "replay gone"
            continue
        name = f"replays/{re.sub(r'[^A-Za-z0-9_.-]', '_', match.match_id)}.html"
        target = directory / name
        if target.is_file() and target.stat().st_mtime >= source.stat().st_mtime:
            match.page = name  # written by an earlier report
            continue
        if match.seq not in chosen:
            match.missing = "no page"
            continue
        try:
            replay = verify_replay(source, collect=True)
        except ReplayReadError:
            match.missing = "replay unreadable"
            continue
        if replay.variant is None:  # the header itself is unusable
            match.missing = "replay unreadable"
            continue
        pages.mkdir(exist_ok=True)
        partial = target.with_suffix(".html.part")
        partial.write_text(render_html(replay), encoding="utf-8")
        os.replace(partial, target)
        match.page = name


def _plot_ratings(conn: sqlite3.Connection, order: list[str], path: Path) -> None:
    series: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    for seq, bot, mu, sigma in conn.execute(
        "SELECT match_seq, bot, mu, sigma FROM ratings ORDER BY match_seq"
    ):
        series[bot].append((seq, mu, sigma))
    last = conn.execute("SELECT MAX(seq) FROM matches").fetchone()[0] or 0
    start = Ratings([]).model
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for name in order:
        if name not in series:
            continue
        points = [(0, start.mu, start.sigma), *series[name]]
        if points[-1][0] < last:  # hold the last value to the end of the ladder
            points = [*points, (last, points[-1][1], points[-1][2])]
        xs = [p[0] for p in points]
        mus = [p[1] for p in points]
        (line,) = ax.step(xs, mus, where="post", label=name)
        ax.fill_between(
            xs, [m - p[2] for m, p in zip(mus, points, strict=True)],
            [m + p[2] for m, p in zip(mus, points, strict=True)],
            step="post", alpha=0.15, color=line.get_color(),
        )  # fmt: skip
    ax.set_xlabel("matches recorded")
    ax.set_ylabel("rating μ (band: ±σ)")
    ax.set_title("OpenSkill Plackett–Luce ratings over the ladder")
    ax.grid(alpha=0.3)
    if series:
        ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _plot_scores(conn: sqlite3.Connection, order: list[str], path: Path) -> None:
    points: dict[str, list[int]] = defaultdict(list)
    for bot, value in conn.execute("SELECT bot, points FROM deals WHERE annulled = 0 AND active = 1"):
        points[bot].append(value)
    names = [n for n in order if points.get(n)]
    fig, ax = plt.subplots(figsize=(9, 0.6 * max(len(order), 3) + 1.5))
    if names:
        ax.boxplot([points[n] for n in names], vert=False, tick_labels=names, showmeans=True, whis=(5, 95))
        ax.invert_yaxis()  # the leader on top, as in the table
    ax.axvline(0, color="#888", linewidth=0.8)
    ax.set_xlabel("game points per deal (box: quartiles, whiskers: 5–95%, triangle: mean)")
    ax.set_title("Score distributions")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _plot_means(table: Standings, path: Path) -> None:
    bots = [b for b in table.bots if b.deals]
    fig, ax = plt.subplots(figsize=(9, 0.5 * max(len(table.bots), 3) + 1.5))
    if bots:
        ys = list(range(len(bots)))
        errors = [0.0 if math.isinf(b.ci95) else b.ci95 for b in bots]
        ax.errorbar([b.points_per_deal for b in bots], ys, xerr=errors, fmt="o", capsize=4)
        ax.set_yticks(ys, [b.name for b in bots])
        ax.invert_yaxis()
    ax.axvline(0, color="#888", linewidth=0.8)
    ax.set_xlabel("mean game points per deal, with 95% confidence interval")
    ax.set_title("Points per deal")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _cell(value: float, digits: int = 1) -> str:
    css = "pos" if value > 0 else "neg" if value < 0 else ""
    return f'<td class="{css}">{value:+.{digits}f}</td>'


def _processes(modes: dict[str, int]) -> str:
    """How the bot ran: `per-match 12, persistent 6` (– in a file from before it was recorded)."""
    return ", ".join(f"{mode} {n}" for mode, n in sorted(modes.items())) or "–"


def _hello(bot: BotStanding) -> str:
    """The standings' cell of what the bot said in Hello."""
    e = html.escape
    if bot.hello is None:
        return '<td class="hello">–</td>'
    text = f"{e(bot.hello.name) or '(no name)'} {e(bot.hello.version) or '(no version)'}"
    if bot.hello.changed:
        versions = ", ".join(e(v) or "(none)" for v in bot.hello.versions)
        text += f' <span class="warn">(changed over the ladder: {versions})</span>'
    return f'<td class="hello">{text}</td>'


def _fault_title(faults: list[tuple[str, int | None, int | None]], crashed: bool) -> str:
    counts: dict[str, int] = defaultdict(int)
    for kind, _, _ in faults:
        counts[kind] += 1
    parts = [f"{kind} ×{n}" for kind, n in counts.items()]
    if crashed:
        parts.append("the process ended before the match")
    return ", ".join(parts)


def _matches_table(matches: list[MatchRow], replay_pages: int | None) -> str:
    e = html.escape
    seats = max((len(m.seats) for m in matches), default=0)
    head = ['<th>#</th><th>match</th><th class="replay">replay</th><th>deal set</th>']
    for s in range(seats):
        head.append(
            f'<th class="bot">seat {s}</th><th title="seat {s}">points</th><th title="seat {s}">faults</th>'
        )
    head.append("<th>termination</th><th>seconds</th>")
    rows = []
    for m in matches:
        best = max(m.scores, default=0)
        link = f'<a href="{e(m.page)}">view</a>' if m.page else f'<span class="note">{m.missing}</span>'
        cells = [
            f'<td data-sort="{m.seq}">{m.seq}</td><td class="match">{e(m.match_id)}</td>'
            f'<td class="replay">{link}</td><td>{m.deal_set}</td>'
        ]
        for s, bot in enumerate(m.seats):
            hello = m.hellos[s]
            said = f' title="Hello: {e(hello[0])} {e(hello[1])}"' if hello else ""
            cells.append(f'<td class="bot" data-seat="{s}"{said}>{e(bot)}</td>')
            score = m.scores[s] if s < len(m.scores) else 0
            css = "points best" if score == best and len(set(m.scores)) > 1 else "points"
            cells.append(f'<td class="{css}" data-seat="{s}" data-sort="{score}">{score:+d}</td>')
            faults, crashed = m.faults[s], m.crashed[s]
            text = f"{len(faults)}{' ✝' if crashed else ''}"
            if (faults or crashed) and m.page:
                first = next(((d, st) for _, d, st in faults if d is not None and st is not None), None)
                where = f"#deal={first[0]}&amp;step={first[1]}&amp;seat=all" if first else ""
                text = f'<a href="{e(m.page)}{where}">{text}</a>'
            title = _fault_title(faults, crashed)
            attributes = f' title="{e(title)}"' if title else ""
            css = "faults fault" if faults or crashed else "faults"
            cells.append(
                f'<td class="{css}" data-seat="{s}" data-sort="{len(faults)}"{attributes}>{text}</td>'
            )
        cells.extend('<td class="bot"></td><td></td><td></td>' for _ in range(seats - len(m.seats)))
        termination = m.termination + (f" (seat {m.forfeited})" if m.forfeited is not None else "")
        cells.append(
            f'<td class="term">{e(termination)}</td><td data-sort="{m.seconds}">{m.seconds:.1f}</td>'
        )
        rows.append(f'<tr data-match="{e(m.match_id)}">{"".join(cells)}</tr>')
    chosen = (
        "every match"
        if replay_pages is None
        else f"the last {replay_pages} matches and the last {replay_pages} with a fault, a crash or a forfeit"
    )
    return f"""<h2>Matches</h2>
<p class="note">Click a column's header to sort by it. Points: the match's final scores; faults:
decisions the server made for the seat (✝: its process ended early); a fault count links to the
first fault's position in the replay. Viewer pages are written for {chosen}
(<code>--replay-pages</code>); “no page”: not chosen, “replay gone”: its log is no longer in the
replay directory.</p>
<div class="wide"><table class="matches sortable">
<thead><tr>{"".join(head)}</tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table></div>
"""


def _page(
    table: Standings, matches: list[MatchRow], replay_pages: int | None, modes: dict[str, dict[str, int]]
) -> str:
    e = html.escape
    options = ", ".join(f"{k}={v}" for k, v in table.options.items())
    rows = []
    for b in table.bots:
        ci = "" if math.isinf(b.ci95) else f" ± {b.ci95:.1f}"
        points = f"{b.points_per_deal:+.1f}{ci}" if b.deals else "–"
        rows.append(
            f"<tr><td>{b.rank}</td><td>{e(b.name)}{' (remote)' if b.remote else ''}</td>"
            f"<td>{b.rating:.2f}</td><td>{b.mu:.2f}</td><td>{b.sigma:.2f}</td><td>{b.matches}</td>"
            f"<td>{b.deals}</td><td>{points}</td>{_hello(b)}<td>{_processes(modes.get(b.name, {}))}</td></tr>"
        )
    names = [b.name for b in table.bots]
    cross = ["<tr><th></th>" + "".join(f"<th>{e(n)}</th>" for n in names) + "</tr>"]
    for row_name in names:
        cells = []
        for column in names:
            entry = table.crosstable.get(row_name, {}).get(column)
            cells.append("<td>·</td>" if row_name == column or entry is None else _cell(entry[0]))
        cross.append(f"<tr><td>{e(row_name)}</td>{''.join(cells)}</tr>")
    faults = ["<tr><th>rank</th><th>bot</th>" + "".join(f"<th>{k}</th>" for k in FAULT_KINDS)]
    faults[0] += "<th>crashed</th><th>forfeits</th></tr>"
    for b in table.bots:
        counts = "".join(f"<td>{b.faults.get(k, 0)}</td>" for k in FAULT_KINDS)
        faults.append(
            f"<tr><td>{b.rank}</td><td>{e(b.name)}</td>{counts}<td>{b.crashes}</td><td>{b.forfeits}</td></tr>"
        )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ladder {e(table.name)}</title>
<style>{STYLE}</style></head><body>
<h1>Ladder {e(table.name)}</h1>
<p>{e(table.variant)}{f" ({e(options)})" if options else ""}: {table.matches_done} of
{table.matches_planned} matches recorded, {table.deals} deals.</p>
<h2>Standings</h2>
<table><tr><th>rank</th><th>bot</th><th>rating</th><th>μ</th><th>σ</th><th>matches</th><th>deals</th>
<th>points per deal (95% CI)</th><th class="hello">Hello: name, version</th>
<th>processes (matches)</th></tr>
{"".join(rows)}
</table>
<p class="note">Rating: OpenSkill Plackett–Luce from each deal's game points, ordered by μ − 3σ.
Points per deal: the game points won or lost in each played deal. Hello: the name and version
the bot's latest recorded Hello gave (the bot's program says them; the ladder knows the bot by its
name in the ladder file).</p>
<img src="ratings.png" alt="ratings over matches">
<img src="points.png" alt="mean points per deal with 95% intervals">
<img src="scores.png" alt="distributions of points per deal">
<h2>Crosstable</h2>
<p class="note">Mean points per deal of the row's bot minus the column's, in the deals they played
at the same table.</p>
<table class="cross">{"".join(cross)}</table>
<h2>Faults</h2>
<p class="note">Faulted decisions by kind (the server played for the bot); crashed: matches in
which the bot's process ended early; forfeits: matches lost by the forfeit policy.</p>
<table>{"".join(faults)}</table>
{_matches_table(matches, replay_pages)}
<script>{SORT_SCRIPT}</script>
</body></html>
"""
