"""`python -m benchmarks TARGET`, run as a real subprocess from the repository's root, briefly.

Only what each benchmark prints is checked (its fields, and that its ratios are its own rates'
quotients), never how fast anything is: the machine may be busy.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.engine import VARIANT_NAMES
from arena.replay.samples import SAMPLES, SAMPLES_DIR
from arena.replay.verify import verify_replay
from benchmarks.__main__ import build_parser

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str | float | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )


# --------------------------------------------------------------------------- the command line


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[Any]:
    found: list[Any] = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_subparsers(sub, (*path, name)))
    return found


def test_every_target_prints_its_help() -> None:
    """`--help` of every target formats (a stray `%` in a help text would raise)."""
    commands = _subparsers(build_parser())
    targets = {path[0] for path, _ in commands if path}
    assert targets == {
        *("engine", "server", "ladder", "replay", "arena", "research", "web", "bot", "strength", "inprocess"),
        *("sandbox", "luck", "decide", "instructions"),
    }
    for path, parser in commands:
        assert parser.format_help().startswith("usage: python -m benchmarks"), path


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["frobnicate"],
        ["engine", "--variant", "danish"],
        ["engine", "--variant", "danish", "--seconds", "-1"],
        ["engine", "--option", "redeal=auto", "--seconds", "1"],
        ["--variant", "danish", "--seconds", "1"],
    ],
    ids=lambda args: " ".join(args) or "(none)",
)
def test_wrong_arguments_exit_2(args: list[str]) -> None:
    proc = bench(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "usage:" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_the_arena_command_has_no_bench() -> None:
    """The benchmarks are not part of the product's command."""
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "bench", "engine", "--seconds", "0.1"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "invalid choice: 'bench'" in proc.stderr


# --------------------------------------------------------------------------- engine and search


def test_bench_engine_json() -> None:
    """One variant: its rates, the build that ran, and OpenSpiel's hearts in the same run when installed."""
    proc = bench("engine", "--variant", "danish", "--seconds", 0.3, "--seed", 1, "--json")
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout)
    assert measured["build"] in ("compiled", "pure")
    [row] = measured["variants"]
    assert {"deals", "actions", "seconds", "actions_per_s", "deals_per_s"} <= set(row)
    assert row["variant"] == "danish"
    assert row["deals"] >= 1
    assert row["actions"] > row["deals"]
    assert row["seconds"] >= 0.3
    assert row["actions_per_s"] > 0
    if importlib.util.find_spec("pyspiel") is None:
        assert measured["anchor"] is None and "hearts_actions_per_s" not in row
    else:
        assert measured["anchor"].startswith("open_spiel ") and measured["anchor"].endswith(" hearts")
        assert row["hearts_actions_per_s"] > 0 and row["ratio_to_hearts"] > 0
        assert measured["hearts_actions_per_s"] == row["hearts_actions_per_s"]


def test_bench_engine_text_every_variant() -> None:
    """Without --variant every variant runs, a row each, under a title naming the build."""
    proc = bench("engine", "--seconds", 0.1)
    assert proc.returncode == 0, proc.stderr
    title, header, *rows = proc.stdout.splitlines()
    assert title.startswith("engine bench: ") and (" compiled build" in title or " pure build" in title)
    assert ("hearts" in title) != ("not installed" in title)
    assert header.split()[:3] == ["variant", "deals", "actions/s"]
    assert [row.split()[0] for row in rows] == list(VARIANT_NAMES)


def test_bench_engine_text_without_anchor() -> None:
    proc = bench(
        "engine", "--variant", "grosstarock", "--option", "nolo_cancels=cards_only", "--seconds", 0.1,
        "--no-anchor",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    title, header, row = proc.stdout.splitlines()
    assert title.endswith("without an anchor (--no-anchor)")
    assert header.split() == ["variant", "deals", "actions/s"]
    assert row.split()[:2] == ["grosstarock", "nolo_cancels=cards_only"]


def test_bench_engine_runs_american() -> None:
    """`python -m benchmarks engine --variant american` measures whole deals like the other variants."""
    proc = bench("engine", "--variant", "american", "--seconds", 0.2, "--json", timeout=60)
    assert proc.returncode == 0, proc.stderr
    [measured] = json.loads(proc.stdout)["variants"]
    assert measured["variant"] == "american" and measured["deals"] >= 1
    assert measured["actions"] > measured["deals"]
    assert measured["options"] == {"trischaken_leader": "dealer", "trischaken_scoring": "pairwise"}


def test_bench_bot_prints_its_rates() -> None:
    proc = bench("bot", "--variant", "german-1754", "--seconds", 0.2, "--think-ms", 20, "--json")
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout)
    assert measured["build"] in ("compiled", "pure")
    (row,) = measured["variants"]
    assert row["variant"] == "german-1754"
    for key in ("samples_per_s", "copies_per_s", "rollouts_per_s", "decisions_per_s"):
        assert row[key] > 0
    assert row["samples_per_decision"] >= 1


def test_bench_strength_pairs_the_bots_by_complete_deal_set(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from arena.ladder.store import MatchRecord, Store
    from arena.replay.summary import DealRow

    bots = [SimpleNamespace(name=n, remote=False, command=n) for n in ("search", "heuristic", "random")]
    store = Store.open(tmp_path / "s.sqlite", "s", {"variant": "danish"}, bots)
    # Two arrangements per deal set; search's edge over heuristic is 10, 20, 30 per deal.
    plan = {0: 10, 1: 20, 2: 30, 3: 1000}
    for deal_set, edge in plan.items():
        arrangements = [("search", "heuristic", "random"), ("heuristic", "random", "search")]
        for k, seats in enumerate(arrangements[: 1 if deal_set == 3 else 2]):  # deal set 3 is incomplete
            points = [{"search": edge, "heuristic": 0, "random": -edge}[bot] for bot in seats]
            store.record(
                MatchRecord(
                    key=f"{deal_set}:{k}",
                    deal_set=deal_set,
                    table=0,
                    arrangement=k,
                    seed=deal_set,
                    seats=list(seats),
                    match_id=f"{deal_set:08d}{k:08d}",
                    termination="completed",
                    forfeited=None,
                    scores=points,
                    decisions=3,
                    started=0.0,
                    finished=1.0,
                    replay=None,
                    deals=[DealRow(0, points, [26, 26, 26], False, [True] * 3)],
                    exits=[(0, False)] * 3,
                ),
                {},
            )
    store.close()
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text("search: 10 decisions searched, 100 ms mean, 400 ms max\n")
    (logs / "b.log").write_text("noise\nsearch: 30 decisions searched, 200 ms mean, 900 ms max\n")
    proc = bench("strength", tmp_path / "s.sqlite", "--logs", logs, "--json", timeout=60)
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["variant"] == "danish" and row["deal_sets"] == 3 and row["deals"] == 6
    assert row["diff_per_deal"] == 20.0
    assert row["ci95"] == round(4.303 * 10 / 3**0.5, 2)  # t(2) · sd 10 / √3
    assert row["points_per_deal"] == {"heuristic": 0.0, "random": -20.0, "search": 20.0}
    assert row["decisions_searched"] == 40 and row["ms_per_decision_mean"] == 175.0
    assert row["ms_per_decision_max"] == 900.0


def test_bench_research_prints_every_loop() -> None:
    pytest.importorskip("pettingzoo")
    proc = bench("research", "--variant", "danish", "--seconds", 0.2, "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    measured = json.loads(proc.stdout)
    assert set(measured["loops"]) == {"engine", "env", "raw_env", "floor", "openspiel", "hearts"}
    assert all(loop["steps"] > 0 and loop["deals"] > 0 for loop in measured["loops"].values())
    assert measured["env_vs_engine"] > 0 and measured["floor_vs_engine"] > 0


# --------------------------------------------------------------------------- replays


def test_bench_replay_prints_both_rates() -> None:
    proc = bench("replay", "--seconds", 0.5, "--json")
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout)
    total_actions = sum(verify_replay(SAMPLES_DIR / f"{s.name}.jsonl").actions for s in SAMPLES)
    assert measured["total"]["actions"] == total_actions
    assert len(measured["variants"]) == len(SAMPLES)
    for row in [*measured["variants"], measured["total"]]:
        assert row["verify_actions_per_s"] > 0 and row["engine_actions_per_s"] > 0
        assert row["ratio"] == pytest.approx(
            row["verify_actions_per_s"] / row["engine_actions_per_s"], rel=0.01
        )
    many = measured["processes"]
    assert many["jobs"] >= 1 and many["verify_actions_per_s"] > 0
    text = bench("replay", "--seconds", 0.3, "--jobs", 2)
    assert text.returncode == 0 and "verify/s" in text.stdout and "engine/s" in text.stdout
    assert "all, verify in 2 processes" in text.stdout


def test_bench_replay_refuses_a_replay_that_does_not_verify(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in (SAMPLES_DIR / "grosstarock.jsonl").read_text().splitlines()]
    lines[-1]["scores"][0] += 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    proc = bench("replay", bad, "--seconds", 0.2)
    assert proc.returncode == 1 and "does not verify" in proc.stderr


# --------------------------------------------------------------------------- the referee


def test_bench_server_json_measures_the_referee_its_transport_and_raw_grpc() -> None:
    """Two matches for half a second: the referee's decisions, the raw rings and the referee's
    transport with no referee (the bridged echo server) all ran, and each ratio is theirs."""
    proc = bench("server", "--matches", 2, "--seconds", 0.5, "--idle-bots", 0, "--json")
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout)
    assert measured["matches"] == 2 and measured["decisions"] > 0
    decisions, raw, bridge = (
        measured[key] for key in ("decisions_per_s", "raw_roundtrips_per_s", "bridge_roundtrips_per_s")
    )
    assert decisions > 0 and raw > 0 and bridge > 0
    assert measured["ratio"] == pytest.approx(decisions / raw, abs=2e-3)
    assert measured["bridge_ratio"] == pytest.approx(bridge / raw, abs=2e-3)
    assert measured["ratio_to_bridge"] == pytest.approx(decisions / bridge, abs=2e-3)
    assert measured["server_cpu_us_per_bridge_roundtrip"] > 0
    # the requests' size is what the bots received: a request holds a whole view
    assert measured["request_bytes"] > 100 and measured["reply_bytes"] > 0
