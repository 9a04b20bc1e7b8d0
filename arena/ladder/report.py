"""`arena ladder report DB -o DIR`: an HTML page with the standings and plots (matplotlib, Agg).

DIR/index.html links three PNG files beside it: ratings over matches, the distribution of
each bot's points per deal, and the mean points per deal with their 95% intervals.
"""

from __future__ import annotations

import html
import math
import sqlite3
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display, no GUI toolkit

import matplotlib.pyplot as plt

from ..ratings import Ratings
from ..replay.log import FAULT_KINDS
from .stats import Standings, standings

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 64em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: right; }
th:nth-child(2), td:nth-child(2) { text-align: left; }
table.cross td:first-child, table.cross th:first-child { text-align: left; }
td.pos { color: #1a7f37; } td.neg { color: #b42318; }
img { max-width: 100%; display: block; margin: 1em 0; }
.note { color: #555; font-size: 0.9em; }
"""


def write_report(conn: sqlite3.Connection, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    table = standings(conn)
    order = [b.name for b in table.bots]
    _plot_ratings(conn, order, directory / "ratings.png")
    _plot_scores(conn, order, directory / "scores.png")
    _plot_means(table, directory / "points.png")
    index = directory / "index.html"
    index.write_text(_page(table), encoding="utf-8")
    return index


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


def _page(table: Standings) -> str:
    e = html.escape
    options = ", ".join(f"{k}={v}" for k, v in table.options.items())
    rows = []
    for b in table.bots:
        ci = "" if math.isinf(b.ci95) else f" ± {b.ci95:.1f}"
        points = f"{b.points_per_deal:+.1f}{ci}" if b.deals else "–"
        rows.append(
            f"<tr><td>{b.rank}</td><td>{e(b.name)}{' (remote)' if b.remote else ''}</td>"
            f"<td>{b.rating:.2f}</td><td>{b.mu:.2f}</td><td>{b.sigma:.2f}</td><td>{b.matches}</td>"
            f"<td>{b.deals}</td><td>{points}</td></tr>"
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
<th>points per deal (95% CI)</th></tr>
{"".join(rows)}
</table>
<p class="note">Rating: OpenSkill Plackett–Luce from each deal's game points, ordered by μ − 3σ.
Points per deal: the game points won or lost in each played deal.</p>
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
</body></html>
"""
