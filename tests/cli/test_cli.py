"""The `arena` command, run as a real subprocess (`python -m arena ...`)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import ROOT, arena

from arena.cli import build_parser

CASES: dict[str, tuple[str, ...]] = {
    "grosstarock": ("--variant", "grosstarock"),
    "grosstarock-all-blanks": ("--variant", "grosstarock", "--option", "ladons=all_blanks"),
    "german-1754": ("--variant", "german-1754"),
    "german-1754-4p": ("--variant", "german-1754", "--option", "players=4"),
    "danish": ("--variant", "danish"),
    "danish-auto-redeal": ("--variant", "danish", "--option", "redeal=auto"),
    "danish-pots": ("--variant", "danish-pots"),
    "american": ("--variant", "american"),
}
SEATS = {"german-1754-4p": 4, "american": 4}
POT_NAMES = {"danish": {"king", "pagat"}, "danish-pots": {"king", "pagat"}}
DEALS = 4
SEED = 7
LINE_KEYS = ["variant", "deal", "dealer", "card_points", "deltas", "pots", "annulled", "scores"]




def assert_user_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 1, nothing on stdout, one line on stderr containing every needle."""
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), (needle, lines[0])
    return lines[0]


@dataclass
class Simulation:
    case: str
    stdout: str
    lines: list[dict[str, Any]]
    records: Path


@pytest.fixture(scope="module", params=list(CASES))
def simulation(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Simulation:
    case: str = request.param
    records = tmp_path_factory.mktemp(case) / "records"
    proc = arena("simulate", *CASES[case], "--deals", DEALS, "--seed", SEED, "--json", "--records", records)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    return Simulation(case, proc.stdout, lines, records)


@pytest.fixture(scope="module")
def good_record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    records = tmp_path_factory.mktemp("good") / "records"
    proc = arena("simulate", "--variant", "grosstarock", "--deals", 1, "--seed", 3, "--records", records)
    assert proc.returncode == 0, proc.stderr
    record: dict[str, Any] = json.loads((records / "deal-0000.json").read_text())
    return record


# --------------------------------------------------------------------------- simulate


def test_simulate_json_lines(simulation: Simulation) -> None:
    seats = SEATS.get(simulation.case, 3)
    lines = simulation.lines
    # A Danish redeal is an extra (annulled) deal; every other deal is one dealer turn.
    dealer_turns = sum(
        1 for line in lines if not line["annulled"] or not line["variant"].startswith("danish")
    )
    assert dealer_turns == DEALS
    assert [line["deal"] for line in lines] == list(range(len(lines)))
    running = [0] * seats
    step = 1 if lines[0]["variant"] == "grosstarock" else -1  # G-SEAT-2
    dealer = 0  # G-SEAT-6
    for line in lines:
        # G-SEAT-5: the deal passes on, except after a Danish redeal.
        assert line["dealer"] == dealer
        if not (line["annulled"] and line["variant"] == "danish"):
            dealer = (dealer + step) % seats
        assert list(line)[: len(LINE_KEYS)] == LINE_KEYS
        assert line["variant"] == CASES[simulation.case][1]
        assert isinstance(line["annulled"], bool)
        assert len(line["card_points"]) == seats
        assert all(isinstance(v, int | float) for v in line["card_points"])
        assert len(line["deltas"]) == seats
        assert all(type(v) is int for v in line["deltas"])
        assert set(line["pots"]) == (POT_NAMES.get(line["variant"], set()))
        assert all(type(v) is int for v in line["pots"].values())
        # G-PAY-3: every deal is zero-sum between players and pots.
        assert sum(line["deltas"]) + sum(line["pots"].values()) == 0
        assert len(line["scores"]) == seats
        running = [s + d for s, d in zip(running, line["deltas"], strict=True)]
        if not line["pots"]:
            assert line["scores"] == running
    for line in lines[:-1]:
        assert "match_end" not in line
    end = lines[-1]["match_end"]
    assert set(end) == {"pot_split", "final_scores"}
    assert len(end["pot_split"]) == len(end["final_scores"]) == seats
    if not lines[-1]["pots"]:
        assert end["pot_split"] == [0] * seats
    # G-PAY-3: after the final pot split the match is zero-sum.
    assert sum(end["final_scores"]) == 0


def test_simulate_is_deterministic(simulation: Simulation) -> None:
    again = arena("simulate", *CASES[simulation.case], "--deals", DEALS, "--seed", SEED, "--json")
    assert again.returncode == 0, again.stderr
    assert again.stdout == simulation.stdout


def test_simulate_other_seed_differs() -> None:
    one = arena("simulate", "--variant", "danish", "--deals", 2, "--seed", 1, "--json")
    two = arena("simulate", "--variant", "danish", "--deals", 2, "--seed", 2, "--json")
    assert one.returncode == two.returncode == 0
    assert one.stdout != two.stdout


def test_simulate_table() -> None:
    proc = arena("simulate", "--variant", "danish-pots", "--deals", 3, "--seed", 1)
    assert proc.returncode == 0, proc.stderr
    assert "final scores" in proc.stdout
    assert "danish-pots" in proc.stdout.splitlines()[0]


# --------------------------------------------------------------------------- records and score


def test_records_score_back_to_the_simulate_lines(simulation: Simulation) -> None:
    files = sorted(simulation.records.iterdir())
    assert [f.name for f in files] == [f"deal-{i:04d}.json" for i in range(len(simulation.lines))]
    for path, line in zip(files, simulation.lines, strict=True):
        record = json.loads(path.read_text())
        assert record["format"] == "arena-deal"
        assert record["variant"] == line["variant"]
        assert record["dealer"] == line["dealer"]
        proc = arena("score", path, "--json")
        assert proc.returncode == 0, proc.stderr
        expected = {k: v for k, v in line.items() if k not in ("scores", "match_end")}
        assert json.loads(proc.stdout) == expected


def test_score_table(tmp_path: Path, good_record: dict[str, Any]) -> None:
    proc = arena("score", write(tmp_path, good_record))
    assert proc.returncode == 0, proc.stderr
    assert "deltas" in proc.stdout
    assert "ledger" in proc.stdout


def test_format_example_scores(tmp_path: Path) -> None:
    """The complete example of replays/FORMAT.md is a valid record and prints what the doc says."""
    text = (ROOT / "replays" / "FORMAT.md").read_text()
    blocks = re.findall(r"```(?:json)?\n(.*?)```", text, flags=re.DOTALL)
    record = json.loads(blocks[0])
    proc = arena("score", write(tmp_path, record), "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == blocks[1].strip()


def write(tmp_path: Path, record: Any) -> Path:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    return path


def test_score_unknown_card(tmp_path: Path, good_record: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(good_record))
    bad["deck"][5] = "ZZ"
    assert_user_error(arena("score", write(tmp_path, bad)), "ZZ")


def test_score_duplicate_card(tmp_path: Path, good_record: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(good_record))
    bad["deck"][1] = bad["deck"][0]
    assert_user_error(arena("score", write(tmp_path, bad)), bad["deck"][0])


def test_score_short_deck(tmp_path: Path, good_record: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(good_record))
    del bad["deck"][-1]
    assert_user_error(arena("score", write(tmp_path, bad)), "77")


def test_score_illegal_action(tmp_path: Path, good_record: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(good_record))
    actions = bad["actions"]
    # A play of the card the next player plays in the same trick: not in this player's hand.
    k = next(
        i
        for i in range(len(actions) - 1)
        if actions[i]["type"] == actions[i + 1]["type"] == "play"
        and actions[i]["seat"] != actions[i + 1]["seat"]
        and "EX" not in (actions[i]["card"], actions[i + 1]["card"])
        and i > 40
    )
    actions[k] = {"seat": actions[k]["seat"], "type": "play", "card": actions[k + 1]["card"]}
    line = assert_user_error(arena("score", write(tmp_path, bad)), f"step {k}")
    assert actions[k]["card"] in line


def test_score_unfinished_deal(tmp_path: Path, good_record: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(good_record))
    del bad["actions"][-1]
    del bad["result"]
    assert_user_error(arena("score", write(tmp_path, bad)), f"after {len(bad['actions'])} actions")


def test_score_extra_action(tmp_path: Path, good_record: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(good_record))
    bad["actions"].append(bad["actions"][-1])
    assert_user_error(arena("score", write(tmp_path, bad)), f"step {len(bad['actions']) - 1}", "over")


def test_score_wrong_seat(tmp_path: Path, good_record: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(good_record))
    bad["actions"][10]["seat"] = (bad["actions"][10]["seat"] + 1) % 3
    assert_user_error(arena("score", write(tmp_path, bad)), "step 10", "G-SEAT-4")


def test_score_changed_result(tmp_path: Path, good_record: dict[str, Any]) -> None:
    bad = json.loads(json.dumps(good_record))
    bad["result"]["deltas"][0] += 1
    assert_user_error(arena("score", write(tmp_path, bad)), "deltas", "differs")


@pytest.mark.parametrize(("field", "value"), [("options", ["ladons", "pips"]), ("pots", [60, 60])])
def test_score_malformed_header(tmp_path: Path, good_record: dict[str, Any], field: str, value: Any) -> None:
    bad = dict(good_record, **{field: value})
    assert_user_error(arena("score", write(tmp_path, bad)), field)


def test_score_malformed_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"format": "arena-deal", "deck": [')
    assert_user_error(arena("score", path), "invalid JSON", "line 1")


def test_score_not_an_object(tmp_path: Path) -> None:
    assert_user_error(arena("score", write(tmp_path, [1, 2, 3])), "JSON object")


def test_score_missing_file(tmp_path: Path) -> None:
    assert_user_error(arena("score", tmp_path / "nope.json"), "nope.json", "no such file")


def test_simulate_records_dir_is_a_file(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("")
    proc = arena("simulate", "--variant", "grosstarock", "--deals", 1, "--seed", 1, "--records", target)
    assert_user_error(proc, "--records", "is a file, not a folder")


# --------------------------------------------------------------------------- command line errors


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["frobnicate"],
        ["simulate", "--variant", "grosstarock", "--deals", "3"],
        ["simulate", "--variant", "grosstarock", "--deals", "0", "--seed", "1"],
        ["simulate", "--variant", "grosstarock", "--deals", "x", "--seed", "1"],
        ["simulate", "--variant", "no-such-game", "--deals", "1", "--seed", "1"],
        ["simulate", "--variant", "danish", "--deals", "1", "--seed", "1", "--option", "redeal"],
        ["simulate", "--variant", "danish", "--deals", "1", "--seed", "1", "--option", "redeal=never"],
        ["simulate", "--variant", "danish", "--deals", "1", "--seed", "1", "--option", "colour=red"],
        ["score"],
    ],
    ids=lambda args: " ".join(args) or "(none)",
)
def test_wrong_arguments_exit_2(args: list[str]) -> None:
    proc = arena(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "usage:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


Command = tuple[tuple[str, ...], argparse.ArgumentParser]


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[Command]:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_subparsers(sub, (*path, name)))
    return found


def test_every_command_prints_its_help() -> None:
    """`--help` of every command and subcommand formats (a stray `%` in a help text would raise)."""
    commands = _subparsers(build_parser())
    assert len(commands) > 20
    for path, parser in commands:
        assert parser.format_help().startswith("usage: arena"), path
