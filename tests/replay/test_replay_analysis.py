"""`arena replay analyze` on a real match with a planted blunder, and the viewer's marks.

The match is played by the referee as `arena play` plays one: seats 0 and 2 are the heuristic
example bot, seat 1 the heuristic bot with one planted blunder (tests/bots/blunder_bot.py): before
trick 1 it announces a Vole it cannot make, which costs it 52 to each other player (DUM-ANN-2).
The analysis, from seat 1's view only, must find that decision its costliest, with a loss of
about those 104 points.

(A King thrown away was tried first: in grosstarock a seat can only throw a King away when it
cannot follow suit and has no tarok, or follows a suit that another seat has already trumped, and
in both cases the King is mostly lost anyway; the search rightly found such throws cheap.)
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import trio
from support import BOTS

# The viewer test drives the same headless Chromium as the replay page's tests.
from support.browser import Browser

from arena.engine import Action, find_variant
from arena.referee.runner import MatchConfig
from arena.referee.seat import TimeControl
from arena.replay.analysis import (
    AnalysisError,
    analysis_path,
    check_against,
    read_analysis,
    search,
    tasks,
)
from arena.replay.read import Replay
from arena.replay.table import action_label  # the viewer's words
from arena.replay.timeline import action_text
from arena.replay.verify import verify_replay
from arena.server.local import EXAMPLE_BOTS, play_matches

BLUNDER_BOT = BOTS / "blunder_bot.py"
SEED = 9
ITERATIONS = 3  # samples per decision: few, to keep CI fast; a failed Vole costs the same in each
SEAT = 1


@dataclass(frozen=True)
class Planted:
    replay_path: Path
    replay: Replay
    deal: int
    step: int  # the decision where seat 1 announced its Vole


def arena(*args: str | Path | int, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    directory = tmp_path_factory.mktemp("analysis")
    bots = [
        EXAMPLE_BOTS["heuristic"],
        f"{shlex.quote(sys.executable)} {shlex.quote(str(BLUNDER_BOT))}",
        EXAMPLE_BOTS["heuristic"],
    ]
    names = ("heuristic", "blunder", "heuristic")
    config = MatchConfig(find_variant("grosstarock"), 1, SEED, names, TimeControl(5_000, 10_000, 0))
    [played] = trio.run(play_matches, [(config, bots)], directory)
    path = played.runner.replay_path
    assert path is not None and path.name.endswith(".jsonl"), "the match did not complete"
    replay = verify_replay(path, collect=True)
    assert replay.ok, replay.problem
    [step] = [
        d.step for d in replay.deals[0].decisions if d.seat == SEAT and str(d.action) == "announce vole"
    ]
    result = replay.deals[0].result
    assert result is not None
    paid = [
        (t["to"], t["amount"]) for t in result["ledger"] if t["from"] == SEAT and t["rule"] == "DUM-BON-5"
    ]
    assert sorted(paid) == [(0, 52), (2, 52)], "the Vole should have failed"
    return Planted(path, replay, 0, step)


@pytest.fixture(scope="module")
def analysed(planted: Planted) -> dict[str, Any]:
    """`arena replay analyze` of seat 1 on two processes, and the file it wrote."""
    proc = arena(
        "replay",
        "analyze",
        planted.replay_path,
        "--seat",
        SEAT,
        "--iterations",
        ITERATIONS,
        "--jobs",
        2,
    )
    assert proc.returncode == 0, proc.stderr
    path = analysis_path(planted.replay_path)
    return {"stdout": proc.stdout, "path": path, "bytes": path.read_bytes()}


def test_the_failed_vole_is_the_seats_costliest_decision(planted: Planted, analysed: dict[str, Any]) -> None:
    analysis = read_analysis(analysed["path"], planted.replay_path)
    check_against(analysis, planted.replay)
    ours = [d for d in planted.replay.deals[0].decisions if d.seat == SEAT]
    assert [(p.deal, p.step) for p in analysis.points] == [(0, d.step) for d in ours]
    [costliest, *_] = analysis.costliest(SEAT)
    assert (costliest.deal, costliest.step) == (planted.deal, planted.step), (
        f"the costliest decision is step {costliest.step} ({costliest.played}, loss {costliest.loss}), "
        f"not the Vole announced at step {planted.step}"
    )
    assert costliest.played == "announce vole" and costliest.best == "pass"
    # The failed Vole's 52 to each other player, give or take what the samples disagree on.
    assert costliest.loss >= 80, costliest
    assert set(costliest.values) == {str(a) for a in _legal(planted, planted.step)}
    # The command names it first among seat 1's costliest decisions.
    lines = analysed["stdout"].splitlines()
    first = lines[lines.index(next(line for line in lines if line.startswith("seat 1"))) + 1]
    played = action_text(planted.replay.deals[0].decisions[planted.step].action)  # the command's words
    assert first.startswith(f"  deal 0, step {planted.step}: played {played} ("), analysed["stdout"]


def _legal(planted: Planted, step: int) -> list[Any]:
    state, _ = planted.replay.position(planted.deal, step)
    return state.legal_actions()


def test_the_same_seed_gives_the_same_file_on_any_number_of_processes(
    planted: Planted, analysed: dict[str, Any], tmp_path: Path
) -> None:
    one = tmp_path / "one.analysis.json"
    proc = arena(
        "replay", "analyze", planted.replay_path, "--seat", SEAT,
        "--iterations", ITERATIONS, "--jobs", 1, "-o", one,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert one.read_bytes() == analysed["bytes"]
    other = tmp_path / "other.analysis.json"
    proc = arena(
        "replay", "analyze", planted.replay_path, "--seat", SEAT,
        "--iterations", ITERATIONS, "--seed", 1, "-o", other,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    values = [p.values for p in read_analysis(other).points]
    assert values != [p.values for p in read_analysis(one).points]  # another seed, other samples


def test_analyze_errors_are_one_line(planted: Planted, tmp_path: Path) -> None:
    missing = arena("replay", "analyze", tmp_path / "nothing.jsonl")
    assert missing.returncode == 1
    assert missing.stderr.strip().count("\n") == 0 and missing.stderr.startswith("arena replay analyze: ")
    assert "nothing.jsonl" in missing.stderr

    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text('{"type": "header", "format": "arena-replay", "version": 3, "variant": "nonsense"}\n')
    proc = arena("replay", "analyze", corrupt)
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("arena replay analyze: ")
    assert not analysis_path(corrupt).exists()

    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\x00\xffnot json\n")
    proc = arena("replay", "analyze", garbage)
    assert proc.returncode == 1 and proc.stderr.strip().count("\n") == 0, proc.stderr

    # A seat the table does not have is a wrong command line, as for `arena replay show --seat`.
    seat = arena("replay", "analyze", planted.replay_path, "--seat", 3)
    assert seat.returncode == 2
    assert seat.stderr.strip().splitlines()[-1].endswith("--seat 3: the replay has seats 0–2")


def test_a_damaged_or_foreign_analysis_is_refused_in_one_line(
    planted: Planted, analysed: dict[str, Any], tmp_path: Path
) -> None:
    page = tmp_path / "page.html"
    cases = {
        "not json": (b"{", "not an analysis file: invalid JSON at line 1 column 2"),
        "other format": (
            b'{"format": "arena-replay"}',
            "format is 'arena-replay', expected 'arena-analysis'",
        ),
        "newer": (
            analysed["bytes"].replace(b'"version": 1', b'"version": 9', 1),
            "analysis version 9 is newer than this arena reads (≤ 1)",
        ),
        "bad loss": (
            analysed["bytes"].replace(b'"loss": ', b'"loss": "none", "was": ', 1),
            "damaged analysis file: decision 0: loss must be a number from 0",
        ),
        "another replay": (
            analysed["bytes"].replace(b'"sha256": "', b'"sha256": "0', 1),
            "was made for another replay",
        ),
    }
    for name, (data, expected) in cases.items():
        bad = tmp_path / f"{name.replace(' ', '-')}.analysis.json"
        bad.write_bytes(data)
        with pytest.raises(AnalysisError) as refused:
            read_analysis(bad, planted.replay_path)
        assert expected in str(refused.value) and "\n" not in str(refused.value), name
    # The command says so in one line, exit 1, and writes no page.
    proc = arena("replay", "html", planted.replay_path, "-o", page, "--analysis", bad)
    assert proc.returncode == 1 and not page.exists(), proc.stdout
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert proc.stderr.startswith("arena replay html: ") and "was made for another replay" in proc.stderr
    # Another seat, the same bytes otherwise: the decisions do not match the replay.
    text = json.loads(analysed["bytes"])
    text["decisions"][0]["seat"] = 0
    analysis = read_analysis(_written(tmp_path / "moved.analysis.json", text))
    with pytest.raises(AnalysisError, match=f"deal 0, step {text['decisions'][0]['step']}: it has seat 0"):
        check_against(analysis, planted.replay)
    # Without --analysis, the one beside the replay is taken; --no-analysis leaves it out.
    proc = arena("replay", "html", planted.replay_path, "-o", page)
    assert proc.returncode == 0 and "the analysis of" in proc.stdout, proc.stderr
    proc = arena("replay", "html", planted.replay_path, "-o", page, "--no-analysis")
    assert proc.returncode == 0 and "analysis" not in proc.stdout, proc.stderr


def _written(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_the_page_marks_the_costliest_decisions(
    browser: Browser, planted: Planted, analysed: dict[str, Any], tmp_path: Path
) -> None:
    page = tmp_path / "analysed.html"
    proc = arena("replay", "html", planted.replay_path, "-o", page)
    assert proc.returncode == 0, proc.stderr
    analysis = read_analysis(analysed["path"], planted.replay_path)
    costliest = analysis.costliest(SEAT)
    blunder = costliest[0]
    assert blunder.step == planted.step

    browser.open(f"{page.as_uri()}#deal=0&step={planted.step}&seat=all")
    js = browser.js
    assert js("document.getElementById('costly-rank').textContent") == "costliest decision 1 of seat 1"
    loss = js("document.getElementById('search-loss').textContent")
    played = action_label(planted.replay.deals[0].decisions[planted.step].action)
    assert loss.startswith(f"played {played} (") and loss.endswith(
        f"estimated loss {blunder.loss:.2f} points"
    )
    best = js("document.getElementById('search-best').textContent")
    assert best.startswith(f"prefers {action_label(Action.parse(blunder.best))} (")
    # Every legal action carries its value; the search's choice is outlined, the played one chosen.
    options = js("[...document.querySelectorAll('#offered .opt')].map(e => [e.className, e.textContent])")
    assert len(options) == len(blunder.values)
    assert [c for c, _ in options if "best" in c] and [c for c, _ in options if "chosen" in c]
    assert all(any(ch.isdigit() for ch in text.split()[-1]) for _, text in options)

    # The timeline marks each of seat 1's costliest decisions with its rank; the list jumps there.
    marked = js(
        "[...document.querySelectorAll('#timeline div.costly')].map(e => [+e.dataset.step, +e.dataset.rank])"
    )
    assert sorted(marked, key=lambda m: m[1]) == [[p.step, rank] for rank, p in enumerate(costliest, 1)]
    browser.open(f"{page.as_uri()}#deal=0&step=0&seat=all")
    entries = js("[...document.querySelectorAll('#mistakes div[data-step]')].map(e => +e.dataset.step)")
    assert entries == [p.step for p in costliest]
    browser.click("#mistakes div[data-step]")
    assert js("location.hash") == f"#deal=0&step={planted.step}&seat=all"
    shot = tmp_path / "analysed.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 20_000

    # Seat 0's view shows nothing of seat 1's analysis; seat 1's view shows its own.
    browser.open(f"{page.as_uri()}#deal=0&step={planted.step}&seat=0")
    assert js("document.getElementById('search')") is None
    assert js("document.querySelectorAll('#timeline div.costly').length") == 0
    assert js("document.querySelectorAll('#mistakes div[data-step]').length") == 0
    browser.open(f"{page.as_uri()}#deal=0&step={planted.step}&seat=1")
    assert js("document.getElementById('costly-rank').textContent") == "costliest decision 1 of seat 1"
    # Only the costliest decisions up to now: a later one would show a card not yet seen.
    shown = js("[...document.querySelectorAll('#mistakes div[data-step]')].map(e => +e.dataset.step)")
    assert shown == [p.step for p in costliest if p.step <= planted.step]


def test_a_time_budget_instead_of_iterations(planted: Planted, tmp_path: Path) -> None:
    timed = tmp_path / "timed.analysis.json"
    proc = arena("replay", "analyze", planted.replay_path, "--seat", SEAT, "--think-ms", 20, "-o", timed)
    assert proc.returncode == 0, proc.stderr
    assert "20 ms each" in proc.stdout
    analysis = read_analysis(timed, planted.replay_path)
    assert (analysis.iterations, analysis.think_ms) == (None, 20)
    assert analysis.costliest(SEAT)[0].step == planted.step  # at least one sample per decision
    both = arena("replay", "analyze", planted.replay_path, "--think-ms", 20, "--iterations", 3)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_a_view_no_deal_fits_is_a_clear_error(planted: Planted) -> None:
    """A view that no deal could produce (here seat 2's Kings declaration made 7 cards long, more
    than the Kings and trull there are outside seat 1's hand) stops the analysis with one line
    naming the decision, not a traceback from a worker."""
    task = next(t for t in tasks(planted.replay, [SEAT], 0, 2, None) if t.view["phase"] == "play")
    view = json.loads(json.dumps(task.view))
    kings = [d for d in view["declarations"] if d["seat"] == 2 and d["name"] == "kings"]
    assert kings, view["declarations"]
    kings[0]["size"] = 7
    with pytest.raises(AnalysisError, match=f"deal 0, step {task.step}: the search found no deal consistent"):
        search(replace(task, view=view))
