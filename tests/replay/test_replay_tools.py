"""`arena replay verify|show|ask` on real replays written by `arena play`.

The replays come from real matches: a server on a free port and bot processes dialling in over
gRPC (`arena.play.play_matches`). Damaged replays are made from them by editing their lines.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
from support import BOTS, arena, cards_in

from arena.engine import VARIANT_NAMES, Card, DealState, find_variant, observation
from arena.referee import runner as referee
from arena.referee.runner import MatchConfig
from arena.referee.seat import TimeControl
from arena.replay import verify as verify_module
from arena.replay.log import REPLAY_VERSION
from arena.replay.read import Replay
from arena.replay.samples import SAMPLES, SAMPLES_DIR
from arena.replay.show import render
from arena.replay.timeline import banks_after, clocks, walk
from arena.replay.verify import verify_bytes, verify_replay
from arena.server.local import EXAMPLE_BOTS, default_bots, play_matches

SCRIPTED = BOTS / "scripted_bot.py"
HEURISTIC = EXAMPLE_BOTS["heuristic"]
RANDOM = EXAMPLE_BOTS["random"]


def scripted(behaviour: str) -> str:
    return (
        f"env BEHAVIOUR={shlex.quote(behaviour)} {shlex.quote(sys.executable)} {shlex.quote(str(SCRIPTED))}"
    )




def config(
    variant: str, deals: int, seed: int, options: dict[str, str] | None = None, **kw: Any
) -> MatchConfig:
    v = find_variant(variant, options or {})
    return MatchConfig(v, deals, seed, tuple(f"bot{i}" for i in range(v.seats)), **kw)


@dataclass
class Played:
    path: Path
    runner: referee.MatchRunner


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Played]:
    """Real matches, all at once on one server: clean, faulty, drawing on the bank, forfeited."""
    directory = tmp_path_factory.mktemp("replays")
    tight = TimeControl(per_decision_ms=800, bank_ms=0, increment_ms=0)
    banked = TimeControl(per_decision_ms=1_200, bank_ms=1_500, increment_ms=100)
    jobs = {
        "clean": (config("grosstarock", 2, 11), default_bots(3)),
        "danish": (config("danish", 1, 12), default_bots(3)),
        "american": (config("american", 1, 17), default_bots(4)),
        "faults": (
            config("grosstarock", 1, 13, time_control=tight),
            [scripted("illegal-always"), scripted("sleep:3"), scripted("exit:5")],
        ),
        "bank": (config("danish", 1, 14, time_control=banked), [scripted("sleep:2"), RANDOM, RANDOM]),
        "forfeit": (
            config("german-1754", 2, 15, fault_policy="forfeit"),
            [RANDOM, scripted("exit:4"), RANDOM],
        ),
    }
    results = trio.run(play_matches, list(jobs.values()), directory)
    out = {}
    for name, result in zip(jobs, results, strict=True):
        assert result.runner.replay_path is not None, name
        out[name] = Played(result.runner.replay_path, result.runner)
    return out


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `.jsonl.part` log of a match whose server stopped in the middle of a deal."""
    directory = tmp_path_factory.mktemp("crashed")

    async def play_until_cut() -> None:
        job = (config("grosstarock", 2, 16), [RANDOM, RANDOM, scripted("sleep:12")])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_matches, [job], directory)
            with trio.fail_after(60):
                while True:  # stop the server once the log is well into deal 0
                    parts = list(directory.glob("*.jsonl.part"))
                    if parts and parts[0].read_text().count("\n") > 25:
                        break
                    await trio.sleep(0.02)
            nursery.cancel_scope.cancel()

    trio.run(play_until_cut)
    [part] = directory.glob("*.jsonl.part")
    assert not list(directory.glob("*.jsonl"))
    return part


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    text = "".join(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n" for line in lines)
    path.write_text(text)
    return path


def problem_of(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line `arena replay verify` prints on stderr for a replay that does not hold."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("arena replay verify: ")
    return line


# --------------------------------------------------------------------------- the samples


def test_every_sample_verifies_and_has_its_listed_shape() -> None:
    files = sorted(SAMPLES_DIR.glob("*.jsonl"))
    assert {f.stem for f in files} == {s.name for s in SAMPLES}
    proc = arena("replay", "verify", "--json", *files)
    assert proc.returncode == 0, proc.stderr
    reports = {Path(r["file"]).stem: r for r in map(json.loads, proc.stdout.splitlines())}
    for sample in SAMPLES:
        report = reports[sample.name]
        assert report["ok"] and report["complete"] and report["problem"] is None
        header = lines_of(SAMPLES_DIR / f"{sample.name}.jsonl")[0]
        variant = find_variant(sample.variant, sample.options)
        assert (header["variant"], header["options"]) == (variant.name, dict(variant.options))
        assert (header["seed"], header["deals"]) == (sample.seed, sample.deals)
        assert report["actions"] > 60 * sample.deals


def test_samples_cover_every_variant_of_the_issue() -> None:
    names = {(s.variant, s.options.get("players", "3")) for s in SAMPLES}
    for variant in ("grosstarock", "german-1754", "danish", "danish-pots"):
        assert (variant, "3") in names
    assert ("german-1754", "4") in names
    assert {s.variant for s in SAMPLES} == set(VARIANT_NAMES)


def test_the_samples_script_plays_fresh_replays_that_verify(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli.samples", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    made = sorted(tmp_path.glob("*.jsonl"))
    assert {p.stem for p in made} == {s.name for s in SAMPLES}
    for path in made:
        assert verify_replay(path).ok, path


# --------------------------------------------------------------------------- verify


def test_verify_accepts_real_replays_of_every_kind(played: dict[str, Played]) -> None:
    proc = arena("replay", "verify", *(p.path for p in played.values()))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(": ok · ") == len(played)
    assert "match forfeit" in proc.stdout


def test_verify_checks_files_in_parallel_with_the_same_verdicts(
    played: dict[str, Played], tmp_path: Path
) -> None:
    lines = lines_of(played["clean"].path)
    lines[-1]["pot_split"] = [1, -1, 0]
    files = [
        *(p.path for p in played.values()),
        write_lines(tmp_path / "split.jsonl", lines),
        tmp_path / "none.jsonl",
    ]
    one = arena("replay", "verify", "--json", "--jobs", "1", *files)
    two = arena("replay", "verify", "--json", "--jobs", "2", *files)
    assert one.returncode == two.returncode == 1
    assert one.stderr == two.stderr and "none.jsonl: no such file" in one.stderr

    def strip(out: str) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in json.loads(x).items() if k not in ("seconds", "actions_per_s")}
            for x in out.splitlines()
        ]

    assert strip(one.stdout) == strip(two.stdout)
    verdicts = strip(one.stdout)
    assert [Path(v["file"]) for v in verdicts] == files[:-1]
    assert [v["ok"] for v in verdicts] == [True] * len(played) + [False]
    assert "the match_end's pot_split is [1,-1,0]; expected [0,0,0]" in verdicts[-1]["problem"]["text"]


def test_verify_counts_every_action_and_checks_the_fault_substitutes(played: dict[str, Played]) -> None:
    for name, p in played.items():
        replay = verify_replay(p.path, collect=True)
        assert replay.ok, (name, replay.problem)
        logged = [line for line in lines_of(p.path) if line["type"] == "action"]
        assert replay.actions == len(logged) == sum(len(d.decisions) for d in replay.deals)
        assert [d.fault for deal in replay.deals for d in deal.decisions] == [
            line.get("fault") for line in logged
        ]
    faulty = verify_replay(played["faults"].path, collect=True)
    kinds = {d.fault["kind"] for deal in faulty.deals for d in deal.decisions if d.fault}
    assert kinds == {"illegal", "timeout", "crash"}
    forfeit = verify_replay(played["forfeit"].path)
    assert played["forfeit"].runner.termination == "forfeit" and forfeit.ok and forfeit.complete


def _verdict(replay: Replay) -> tuple[Any, ...]:
    deals = [(d.index, d.result, d.scores, d.decisions) for d in replay.deals]
    counts = (replay.actions, replay.deals_done, replay.open_steps, replay.cut_tail)
    return (replay.problem, *counts, replay.match_end, deals, replay.notes)


def _both_ways(data: bytes, name: str, collect: bool = False) -> Replay:
    """Verify `data` as text where it can and line by line only; the two must agree in everything."""
    fast = verify_bytes(data, name, collect)
    verify_module._TEXT_CHECK = False
    try:
        careful = verify_bytes(data, name, collect)
    finally:
        verify_module._TEXT_CHECK = True
    assert _verdict(fast) == _verdict(careful), (name, fast.problem, careful.problem)
    return fast


def _edits(text: str, rng: Any) -> list[str]:
    """Edits of a replay log, most of them still JSON: what the text check must tell apart.

    Some change an action line and its deal record entry alike, so that the two still agree.
    """
    lines = text.splitlines()
    deal_lines = {json.loads(x)["deal"]: i for i, x in enumerate(lines) if x.startswith('{"type":"deal",')}
    actions = [
        (i, json.loads(x))
        for i, x in enumerate(lines)
        if x.startswith('{"type":"action",') and '"fault"' not in x
    ]
    actions = [(i, a) for i, a in actions if a["deal"] in deal_lines]
    out = []
    for attempt in range(160):
        edited = list(lines)
        index = rng.randrange(1, len(edited))
        line = edited[index]
        kind = attempt % 10
        if kind == 0:  # a value changed, written back as the referee writes
            obj = json.loads(line)
            _set(obj, rng.choice(_paths(obj)), rng.choice([*ODD_VALUES, 0, 1, 2, "T21", "pass", 7]))
            edited[index] = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        elif kind == 1:  # the same object written otherwise: spaces, escaped text, another key order
            obj = json.loads(line)
            compact = json.dumps(obj, separators=(",", ":"))  # escapes any non-ASCII text
            edited[index] = rng.choice([json.dumps(obj), compact, json.dumps(dict(reversed(obj.items())))])
        elif kind == 2:  # a line lost or doubled
            if rng.random() < 0.5:
                del edited[index]
            else:
                edited.insert(index, line)
        elif kind == 3:  # two lines swapped
            other = min(index + 1, len(edited) - 1)
            edited[index], edited[other] = edited[other], edited[index]
        elif kind == 4:  # one digit changed
            digits = [i for i, ch in enumerate(line) if ch.isdigit()]
            at = rng.choice(digits)
            edited[index] = line[:at] + str((int(line[at]) + rng.randrange(1, 10)) % 10) + line[at + 1 :]
        elif kind in (5, 6) and actions:  # an action line and its record entry changed alike
            index, action = rng.choice(actions)
            deal = deal_lines[action["deal"]]
            if kind == 5:  # as text: a think time with a leading zero, a sign, a fraction, a space
                mark = '"think_ms":'
                change = rng.choice(["0", "-", "1.", "+", " ", "00"])
                edited[index] = edited[index].replace(mark, mark + change)
                at = -1
                for _ in range(action["step"] + 1):
                    at = edited[deal].index(mark, at + 1)
                edited[deal] = edited[deal][: at + len(mark)] + change + edited[deal][at + len(mark) :]
            else:  # as values: another seat, card or action, or another think time
                record = json.loads(edited[deal])
                entry = record["record"]["actions"][action["step"]]
                key = rng.choice(["seat", "think_ms", "card", "type", "name", "suit"])
                value = rng.choice([0, 1, 2, 3, 4, -1, 10**20, True, "T21", "EX", "pass", "play", "S", None])
                for obj in (action["action"] if key not in ("seat", "think_ms") else action, entry):
                    if value is None:
                        obj.pop(key, None)
                    else:
                        obj[key] = value
                edited[index] = json.dumps(action, separators=(",", ":"), ensure_ascii=False)
                edited[deal] = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        elif kind == 7 and deal_lines:  # the result or the scores of a deal line
            deal = rng.choice(list(deal_lines.values()))
            obj = json.loads(edited[deal])
            paths = [p for p in _paths(obj) if p[0] == "scores" or p[:2] == ("record", "result")]
            _set(obj, rng.choice(paths), rng.choice([*ODD_VALUES, 0, 1, -3, "x"]))
            edited[deal] = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        elif kind == 8 and '},{"seat":' in line:  # an entry's think time moved into the next one
            think = line.index(',"think_ms":')
            after = line.index('},{"seat":', think)
            value = line[think + 12 : after]  # still JSON: the next entry has the key twice
            edited[index] = line[:think] + '},{"seat":' + value + ',"think_ms":' + line[after + 10 :]
        else:  # a connection line inside a deal
            edited.insert(index, '{"type":"connection","seat":1,"event":"disconnected","detail":""}')
        out.append("\n".join(edited) + "\n")
    return out


def test_the_text_check_of_whole_deals_gives_the_line_by_line_verdicts(
    played: dict[str, Played], crashed: Path
) -> None:
    """A deal as the referee wrote it is checked as text; every edit must get the verdict of JSON."""
    import random

    rng = random.Random(3)
    sources = [*(p.path for p in played.values()), crashed, *sorted(SAMPLES_DIR.glob("*.jsonl"))]
    for path in sources:
        text = path.read_text()
        assert _both_ways(text.encode(), path.name).problem is None
        _both_ways(text.encode(), path.name, collect=True)
        for number, edited in enumerate(_edits(text, rng)):
            name = f"{number}-{path.name}"
            _both_ways(edited.encode(), name)
            if number % 10 == 0:
                _both_ways(edited.encode(), name, collect=True)


def test_deals_as_the_referee_wrote_them_are_not_read_line_by_line(
    played: dict[str, Played], monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[int] = []
    original = verify_module._Checker._deal_end

    def spy(self: Any, number: int, obj: dict[str, Any]) -> None:
        read.append(number)
        original(self, number, obj)

    monkeypatch.setattr(verify_module._Checker, "_deal_end", spy)
    for name in ("clean", "danish", "american", "forfeit"):  # no fault in a deal, no connection line
        assert verify_replay(played[name].path).ok
    for path in SAMPLES_DIR.glob("*.jsonl"):
        assert verify_replay(path).ok
    assert read == []
    assert verify_replay(played["faults"].path).ok and read  # a fault: line by line


ENGINE_CONFIGS = [
    *((name, {}) for name in VARIANT_NAMES),
    ("german-1754", {"players": "4"}),
    ("danish", {"redeal": "auto"}),
    ("danish-pots", {"red_pips": "straight", "counting": "p001"}),
    ("american", {"trischaken_leader": "forehand"}),
]


@pytest.mark.parametrize(("name", "options"), ENGINE_CONFIGS, ids=lambda x: str(x or ""))
def test_apply_alone_accepts_exactly_the_legal_actions(name: str, options: dict[str, str]) -> None:
    """A replay applies actions without asking for legal_actions(); apply then decides a card play
    or a discard by its card alone. It must accept exactly what legal_actions() lists."""
    import random

    from arena.engine import CARDS, Action, Match
    from arena.engine import actions as A
    from arena.engine.deal import AMERICAN_BONUSES

    rng = random.Random(name)
    variant = find_variant(name, options)
    fool = Card.parse("EX")
    odd = [Action("play", CARDS[77], "S"), Action("play", 5), Action("discard", None), A.PASS]  # type: ignore[arg-type]
    odd += [A.make("announce", name=n) for n in ("vole", "nolo", "x", *AMERICAN_BONUSES)]
    for seed in range(3):
        match = Match(variant, seed=seed, deals=variant.seats)
        while not match.is_over():
            state = match.start_deal()
            while not state.is_terminal():
                legal = state.legal_actions()
                seat = state.current_player
                assert seat is not None
                for action in {*legal, *A.PLAY, *A.DISCARD, *odd}:
                    assert state._allows(seat, action) == (action in legal), (action, state)
                state._legal = None  # so that apply decides alone, as in a replay
                # Seed 0 plays Trischaken (all pass), seed 1 a Rufer (the lowest bid: a called King)
                # and keeps the Fool as long as it may (G54-FOOL-2, DK-FOOL-3); seed 2 is random.
                if seed < 2 and state.phase == "bid":
                    action = legal[0] if seed == 1 and state.contract is None else A.PASS
                else:
                    choices = [a for a in legal if a.card != fool] if seed == 1 else legal
                    action = rng.choice(choices or legal)
                state.apply(action)
            match.finish_deal(state)


def test_the_clock_is_computed_again_exactly(played: dict[str, Played]) -> None:
    for name in ("clean", "faults", "bank"):
        p = played[name]
        replay = verify_replay(p.path, collect=True)
        assert banks_after(replay) == [seat.bank_ms for seat in p.runner.seats], name
    replay = verify_replay(played["bank"].path, collect=True)
    table = clocks(replay)
    decisions = [(deal.index, d) for deal in replay.deals for d in deal.decisions]  # in match order
    at = next(i for i, (_, d) in enumerate(decisions) if d.think_ms > 1_200)  # the 2 s sleep drew on the bank
    slow_deal, slow = decisions[at]
    later_deal, later = next((k, d) for k, d in decisions[at + 1 :] if d.seat == slow.seat)
    before = table[slow_deal, slow.step].bank_ms
    assert table[later_deal, later.step].bank_ms == before - (slow.think_ms - 1_200) + 100
    assert table[later_deal, later.step].limit_ms == 1_200 + table[later_deal, later.step].bank_ms
    faulty = verify_replay(played["faults"].path, collect=True)
    timeout = next(d for d in faulty.deals[0].decisions if d.fault and d.fault["kind"] == "timeout")
    assert timeout.think_ms >= 800 and clocks(faulty)[0, timeout.step].limit_ms == 800


def test_a_truncated_replay_is_checked_up_to_the_cut(played: dict[str, Played], tmp_path: Path) -> None:
    lines = played["clean"].path.read_text().splitlines(keepends=True)
    deal1 = next(i for i, line in enumerate(lines) if '"type":"deal_start","deal":1' in line)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[: deal1 + 21]))
    proc = arena("replay", "verify", cut)
    line = problem_of(proc)
    assert "truncated" in line and f"after line {deal1 + 21}" in line
    assert "holds before the problem: deal 0 complete, deal 1 steps 0–19" in proc.stdout
    replay = verify_replay(cut)
    deal0 = sum(1 for x in lines[:deal1] if '"type":"action"' in x)
    assert replay.actions == deal0 + 20 and replay.deals_done == 1


def test_a_corrupt_line_stops_the_check_there(played: dict[str, Played], tmp_path: Path) -> None:
    lines = played["clean"].path.read_text().splitlines(keepends=True)
    index = [i for i, line in enumerate(lines) if '"type":"action"' in line][30]
    lines[index] = lines[index][:40] + "\n"  # a line cut in half, as a bad edit or a bad disk leaves it
    bad = tmp_path / "corrupt.jsonl"
    bad.write_text("".join(lines))
    line = problem_of(arena("replay", "verify", bad))
    assert f"line {index + 1} is not valid JSON" in line
    replay = verify_replay(bad)
    assert replay.problem is not None and replay.problem.kind == "damage"
    assert replay.actions == 30  # every action before the damage was checked


def test_a_line_that_is_not_utf8_is_damage(played: dict[str, Played], tmp_path: Path) -> None:
    data = played["clean"].path.read_bytes().split(b"\n")
    start = next(i for i, line in enumerate(data) if line.startswith(b'{"type":"deal_start"'))
    data[start + 4] = data[start + 4][:20] + b"\xff\xfe" + data[start + 4][20:]
    bad = tmp_path / "bytes.jsonl"
    bad.write_bytes(b"\n".join(data))
    assert f"line {start + 5} is not UTF-8 text" in problem_of(arena("replay", "verify", bad))
    assert verify_replay(bad).actions == 3  # the three lines after deal 0's deal_start are actions


def test_an_illegal_action_names_deal_step_seat_and_what_was_legal(
    played: dict[str, Played], tmp_path: Path
) -> None:
    lines = lines_of(played["clean"].path)
    record = next(line for line in lines if line["type"] == "deal" and line["deal"] == 1)["record"]
    state = DealState(find_variant("grosstarock"), record["dealer"], [Card.parse(c) for c in record["deck"]])
    step = next(i for i, a in enumerate(record["actions"]) if a["type"] == "play")
    for action in record["actions"][:step]:
        replay_record_step(state, action)
    seat = record["actions"][step]["seat"]
    legal = {str(a) for a in state.legal_actions()}
    held = {str(c) for c in state.hands[seat]}
    other = next(str(c) for h in state.hands for c in h if str(c) not in held)  # a card another seat holds
    for line in lines:  # the same edit in the action line and in the deal record
        if line["type"] == "action" and (line["deal"], line["step"]) == (1, step):
            line["action"]["card"] = other
    record["actions"][step]["card"] = other
    bad = write_lines(tmp_path / "illegal.jsonl", lines)
    line = problem_of(arena("replay", "verify", bad))
    where = f"deal 1, step {step}, seat {seat}: "
    assert f"{where}play {other} is illegal: {other} is not in the hand of seat {seat}" in line
    assert "expected one of: " in line
    listed = set(line.split("expected one of: ")[1].split(" (line")[0].split(", "))
    assert listed == legal


def replay_record_step(state: DealState, action: dict[str, Any]) -> bool:
    """Apply a record's action; False, so that it can stand in a search for the first match."""
    from arena.engine import Action

    state.apply(Action.from_dict(action))
    return False


def test_an_action_line_that_disagrees_with_the_deal_record(
    played: dict[str, Played], tmp_path: Path
) -> None:
    lines = lines_of(played["clean"].path)
    target = next(
        line for line in lines if line["type"] == "action" and line["deal"] == 0 and line["step"] == 40
    )
    record = next(line for line in lines if line["type"] == "deal" and line["deal"] == 0)["record"]
    think = target["think_ms"]
    assert record["actions"][40]["think_ms"] == think
    target["think_ms"] += 7
    bad = write_lines(tmp_path / "disagree.jsonl", lines)
    line = problem_of(arena("replay", "verify", bad))
    assert f"deal 0, step 40, seat {target['seat']}: the deal record (line " in line
    assert (
        f'"think_ms":{think}}}; expected ' in line and f'"think_ms":{think + 7}}}, as the action line' in line
    )


def test_a_changed_result_or_score_is_a_discrepancy(played: dict[str, Played], tmp_path: Path) -> None:
    lines = lines_of(played["clean"].path)
    deal = next(line for line in lines if line["type"] == "deal" and line["deal"] == 1)
    true_deltas = list(deal["record"]["result"]["deltas"])
    deal["record"]["result"]["deltas"][0] += 1
    line = problem_of(arena("replay", "verify", write_lines(tmp_path / "result.jsonl", lines)))
    assert "deal 1: the recorded result's deltas is" in line
    assert f"expected {json.dumps(true_deltas, separators=(',', ':'))} (replayed)" in line

    lines = lines_of(played["clean"].path)
    end = lines[-1]
    end["scores"][1] -= 5
    line = problem_of(arena("replay", "verify", write_lines(tmp_path / "scores.jsonl", lines)))
    assert "the match_end's scores is" in line


def test_a_wrong_seat_is_a_discrepancy(played: dict[str, Played], tmp_path: Path) -> None:
    lines = lines_of(played["clean"].path)
    deal = next(line for line in lines if line["type"] == "deal" and line["deal"] == 0)
    step = next(i for i, a in enumerate(deal["record"]["actions"]) if a["type"] == "play")
    true_seat = deal["record"]["actions"][step]["seat"]
    wrong = (true_seat + 1) % 3
    deal["record"]["actions"][step]["seat"] = wrong
    for line in lines:
        if line["type"] == "action" and (line["deal"], line["step"]) == (0, step):
            line["seat"] = wrong
    line = problem_of(arena("replay", "verify", write_lines(tmp_path / "seat.jsonl", lines)))
    assert f"deal 0, step {step}: seat {wrong} acted; expected seat {true_seat} to act" in line


def test_a_substitute_the_referee_would_not_have_drawn(played: dict[str, Played], tmp_path: Path) -> None:
    lines = lines_of(played["faults"].path)
    record = next(line for line in lines if line["type"] == "deal")["record"]
    variant = find_variant("grosstarock")
    state = DealState(variant, record["dealer"], [Card.parse(c) for c in record["deck"]])
    step, entry = next(
        (step, entry)
        for step, entry in enumerate(record["actions"])
        if ("fault" in entry and len(state.legal_actions()) > 1) or replay_record_step(state, entry)
    )
    other = next(a for a in state.legal_actions() if str(a) != _text(entry))
    swapped = {
        "seat": entry["seat"],
        **other.to_dict(),
        "think_ms": entry["think_ms"],
        "fault": entry["fault"],
    }
    record["actions"][step] = swapped
    for line in lines:
        if line["type"] == "action" and line["step"] == step:
            line["action"] = other.to_dict()
    line = problem_of(arena("replay", "verify", write_lines(tmp_path / "substitute.jsonl", lines)))
    where = f"deal 0, step {step}, seat {entry['seat']}: "
    assert f"{where}{other} was played after a {entry['fault']['kind']} fault" in line
    assert f"expected the referee's substitute, {_text(entry)}" in line


def _text(entry: dict[str, Any]) -> str:
    from arena.engine import Action

    return str(Action.from_dict(entry))


def test_a_newer_version_or_unknown_variant_is_refused_clearly(
    played: dict[str, Played], tmp_path: Path
) -> None:
    lines = lines_of(played["clean"].path)
    lines[0]["version"] = REPLAY_VERSION + 1
    line = problem_of(arena("replay", "verify", write_lines(tmp_path / "newer.jsonl", lines)))
    newer = REPLAY_VERSION + 1
    assert f"replay log version {newer} is newer than this arena reads (≤ {REPLAY_VERSION})" in line
    lines[0]["version"] = REPLAY_VERSION
    lines[0]["variant"] = "tarock-2099"
    line = problem_of(arena("replay", "verify", write_lines(tmp_path / "unknown.jsonl", lines)))
    assert "unknown variant 'tarock-2099'" in line
    record = {"format": "arena-deal", "version": 1}
    line = problem_of(arena("replay", "verify", write_lines(tmp_path / "record.jsonl", [record])))
    assert "not a replay log but a deal record (format 'arena-deal'): arena score reads it" in line


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert "the file is empty" in problem_of(arena("replay", "verify", empty))
    assert "no such file" in problem_of(arena("replay", "verify", tmp_path / "missing.jsonl"))
    assert "is a directory" in problem_of(arena("replay", "verify", tmp_path))


def test_the_part_file_of_a_crashed_match_verifies_up_to_where_it_stops(
    crashed: Path, tmp_path: Path
) -> None:
    proc = arena("replay", "verify", crashed)
    assert proc.returncode == 0, proc.stderr
    assert "the match has not ended (a .part log)" in proc.stdout
    replay = verify_replay(crashed)
    assert (
        replay.ok and not replay.complete and replay.actions == crashed.read_text().count('"type":"action"')
    )
    # The crash cut its last line in half: what precedes still holds; the cut line is not read.
    torn = tmp_path / "torn.jsonl.part"
    torn.write_text(crashed.read_text() + '{"type":"action","deal":0,"st')
    proc = arena("replay", "verify", torn)
    assert proc.returncode == 0, proc.stderr
    assert "its last line was cut off" in proc.stdout
    # The same file under the final name is a truncated replay.
    final = tmp_path / "torn.jsonl"
    final.write_text(torn.read_text())
    assert "is not valid JSON" in problem_of(arena("replay", "verify", final))


def test_verify_with_stats_prints_a_rate(played: dict[str, Played]) -> None:
    proc = arena("replay", "verify", "--stats", played["clean"].path)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r" · [\d,]+ actions/s$", proc.stdout.strip())


# --------------------------------------------------------------------------- show

SYMBOLS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}
RANK = r"(?:10|[2-9AJCQK])(?![0-9])"
TAROK = r"(?:2[01]|1[0-9]|[1-9])(?![0-9])"


def shown_cards(text: str) -> set[str]:
    """Every card a `show` output names: ♠K, hand groups like ♠ 9 10 K, T21, T 1 15 21, EX."""
    found: set[str] = set()
    for symbol, rank in re.findall(rf"([♠♥♦♣])({RANK})", text):
        found.add(SYMBOLS[symbol] + rank)
    for symbol, ranks in re.findall(rf"([♠♥♦♣])((?: {RANK})+)", text):
        found |= {SYMBOLS[symbol] + r for r in ranks.split()}
    found |= {f"T{n}" for n in re.findall(rf"\bT({TAROK})", text)}
    for numbers in re.findall(rf"\bT((?: {TAROK})+)", text):
        found |= {f"T{n}" for n in numbers.split()}
    if re.search(r"\bEX\b", text):
        found.add("EX")
    return found


def knowledge(replay: Replay, deal: int, seat: int) -> list[set[str]]:
    """known[k]: every card in the seat's observations before decisions 0…k (and at the end, last)."""
    known: list[set[str]] = []
    cumulative: set[str] = set()
    for state, _ in walk(replay, replay.deal(deal)):
        cumulative |= {str(c) for c in cards_in(observation(state, seat))}
        known.append(set(cumulative))
    return known


def chunks(text: str) -> list[tuple[int, str]]:
    """The output split at each decision line `#N`: (N, the lines from it to the next one); -1 first."""
    out: list[tuple[int, str]] = [(-1, "")]
    for line in text.splitlines():
        marker = re.match(r"  #(\d+) ", line)
        if marker:
            out.append((int(marker.group(1)), ""))
        out[-1] = (out[-1][0], out[-1][1] + line + "\n")
    return out


@pytest.mark.parametrize("name", ["clean", "danish", "american"])
def test_a_seat_view_shows_no_card_the_seat_did_not_know_then(played: dict[str, Played], name: str) -> None:
    """Each part of `show --seat N` names only cards in N's observations up to that point."""
    path = played[name].path
    replay = verify_replay(path, collect=True)
    for log in replay.deals:
        omniscient = io.StringIO()
        render(replay, omniscient, deal=log.index)
        assert shown_cards(omniscient.getvalue()) == {str(Card(i)) for i in range(78)}  # every hand is there
        for seat in range(replay.seats):
            known = knowledge(replay, log.index, seat)
            out = io.StringIO()
            render(replay, out, deal=log.index, seat=seat)
            for step, chunk in chunks(out.getvalue()):
                # What decision `step` led to (a trick won, a talon shown) is known before the next one.
                allowed = known[min(step + 1, len(known) - 1)]
                seen = shown_cards(chunk)
                assert seen <= allowed, f"seat {seat} at #{step} was shown {sorted(seen - allowed)}:\n{chunk}"
            assert {str(c) for c in replay_start_hand(replay, log.index, seat)} <= shown_cards(out.getvalue())
            assert "offered" in out.getvalue() and "your turn · time " in out.getvalue()
            # The same check fails on the omniscient view: it names cards the seat did not know.
            header = chunks(omniscient.getvalue())[0][1]
            assert not shown_cards(header) <= known[0]
    proc = arena("replay", "show", path, "--deal", 0, "--seat", 1)  # the command prints the same
    assert proc.returncode == 0, proc.stderr
    expected = io.StringIO()
    render(replay, expected, deal=0, seat=1)
    assert proc.stdout == expected.getvalue()


def replay_start_hand(replay: Replay, deal: int, seat: int) -> list[Card]:
    state, _ = next(walk(replay, replay.deal(deal)))
    return list(state.hands[seat])


def test_show_renders_tricks_faults_think_times_and_payments(played: dict[str, Played]) -> None:
    proc = arena("replay", "show", played["faults"].path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    replay = verify_replay(played["faults"].path, collect=True)
    decisions = replay.deals[0].decisions
    for d in decisions:  # every decision with its think time
        assert re.search(rf"#{d.step}\s+seat {d.seat}\s.*\b{d.think_ms} ms of ", out), d
    assert "trick 1 · seat " in out and " wins trick 25 · " in out
    assert "⚠ illegal fault: 3 invalid answers" in out
    assert "⚠ timeout fault: no answer within 800 ms" in out
    assert "⚠ crash fault: no bot connected" in out
    assert "⚡ seat 2 crashed" in out
    assert re.search(r"so far \d+ \d+ \d+", out)  # running card points
    result = replay.deals[0].result
    assert result is not None and "deltas" in out
    for rule in {t["rule"] for t in result["ledger"]}:  # the payments, by rule
        assert re.search(rf"^  {re.escape(rule)} +(seat|king|pagat)", out, re.M), rule
    assert "match completed" in out


def test_show_from_a_step_starts_with_the_position_there(played: dict[str, Played]) -> None:
    path = played["clean"].path
    proc = arena("replay", "show", path, "--deal", 1, "--from", 50)
    assert proc.returncode == 0, proc.stderr
    assert "… position before step 50" in proc.stdout
    assert "#49 " not in proc.stdout and "#50 " in proc.stdout
    seat_view = arena("replay", "show", path, "--deal", 1, "--from", 50, "--seat", 2)
    assert "… position before step 50" in seat_view.stdout and "#49 " not in seat_view.stdout


def test_show_of_a_damaged_replay_shows_what_holds_and_says_where_it_stops(
    played: dict[str, Played], tmp_path: Path
) -> None:
    lines = played["clean"].path.read_text().splitlines(keepends=True)
    index = [i for i, line in enumerate(lines) if '"type":"action"' in line][20]
    lines[index] = "{not json\n"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines))
    proc = arena("replay", "show", bad)
    assert proc.returncode == 1
    assert "#19 " in proc.stdout and "#20 " not in proc.stdout
    assert f"line {index + 1} is not valid JSON" in proc.stdout
    assert proc.stderr.startswith("arena replay show: ") and "shown up to the problem" in proc.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--seat", "3"], "--seat 3: the replay has seats 0–2"),
        (["--deal", "9"], "--deal 9: the replay has deals 0–1"),
        (["--deal", "0", "--from", "999"], "--from 999: deal 0 has decisions 0–"),
        (["--seat", "x"], "expected a whole number"),
        (["--from", "-1"], "expected a number of 0 or more"),
    ],
)
def test_show_wrong_arguments_exit_2(played: dict[str, Played], args: list[str], needle: str) -> None:
    proc = arena("replay", "show", played["clean"].path, *args)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr


# --------------------------------------------------------------------------- ask


def test_ask_puts_the_heuristic_bot_back_into_its_own_decisions(played: dict[str, Played]) -> None:
    """The example heuristic bot is a pure function of its request: asked again, it answers as recorded."""
    path = played["clean"].path
    replay = verify_replay(path, collect=True)
    mine = [(deal.index, d) for deal in replay.deals for d in deal.decisions if d.seat == 0]
    picks = [next(x for x in mine if x[1].action.type == kind) for kind in ("discard", "play")]
    picks.append(next(x for x in mine if x[1].action.type == "play" and x[0] == 1 and x[1].step > 40))
    for deal, decision in picks:
        proc = arena(
            "replay", "ask", path, "--deal", deal, "--step", decision.step, "--bot", HEURISTIC, "--json"
        )
        assert proc.returncode == 0, proc.stderr
        asked = json.loads(proc.stdout)
        assert asked["recorded"]["action"] == str(decision.action)
        assert asked["bot"]["outcome"] == "answered" and asked["same"], asked
        clock = clocks(replay)[deal, decision.step]
        assert asked["clock"] == {"limit_ms": clock.limit_ms, "bank_ms": clock.bank_ms}


def test_ask_a_random_bot_without_a_clock_prints_both_answers(played: dict[str, Played]) -> None:
    path = played["clean"].path
    replay = verify_replay(path, collect=True)
    decision = next(d for d in replay.deals[0].decisions if d.seat == 1 and d.action.type == "play")
    proc = arena("replay", "ask", path, "--deal", 0, "--step", decision.step, "--bot", RANDOM, "--no-clock")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"deal 0, decision {decision.step}: seat 1 to act (play" in out
    assert "clock     none (--no-clock)" in out
    recorded = re.search(r"recorded  (\S+)", out)
    answered = re.search(r"bot       (\S+)\s+\d+ ms · (the same|different)", out)
    assert recorded and answered, out
    offered = out.split("offered   (")[1].split(") ", 1)[1].splitlines()[0].split(", ")
    assert recorded.group(1) in offered and answered.group(1) in offered


def test_ask_a_bot_that_dies_or_a_step_that_is_not_there(played: dict[str, Played]) -> None:
    path = played["clean"].path
    proc = arena(
        "replay",
        "ask",
        path,
        "--deal",
        0,
        "--step",
        20,
        "--bot",
        f"{sys.executable} -c 'import sys; sys.exit(4)'",
    )
    assert proc.returncode == 1
    assert "bot       no answer: " in proc.stdout
    assert "the bot process exited with status 4" in proc.stderr
    proc = arena("replay", "ask", path, "--deal", 0, "--step", 500, "--bot", HEURISTIC)
    assert proc.returncode == 2 and "--step 500: deal 0 has decisions 0–" in proc.stderr
    proc = arena("replay", "ask", path, "--deal", 0, "--step", 1, "--bot", "'unclosed")
    assert proc.returncode == 2 and "--bot:" in proc.stderr


def test_verify_bytes_is_what_the_file_verification_does(played: dict[str, Played]) -> None:
    path = played["danish"].path
    assert verify_bytes(path.read_bytes(), str(path)).actions == verify_replay(path).actions


# --------------------------------------------------------------------------- damage of every kind

ODD_VALUES: list[Any] = [None, [], {}, "x", -1, 10**20, True, 1.5, ["SK"], {"kind": 1}, "SK"]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path inside a JSON value (dict keys and list indices)."""
    out: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in items:
        out.append((*prefix, key))
        out.extend(_paths(item, (*prefix, key)))
    return out


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def test_no_damage_makes_the_tools_fail_without_a_clear_problem(played: dict[str, Played]) -> None:
    """Hundreds of edits of a real replay: every tool reads what holds and names the first problem."""
    import random

    from arena.replay.html import render_html

    source = played["faults"].path.read_text()
    lines = source.splitlines()
    rng = random.Random(5)
    for attempt in range(300):
        edited = list(lines)
        index = rng.randrange(len(edited))
        kind = attempt % 4
        if kind == 0:  # a value of the wrong kind anywhere in a line
            obj = json.loads(edited[index])
            path = rng.choice(_paths(obj))
            _set(obj, path, rng.choice(ODD_VALUES))
            edited[index] = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        elif kind == 1:  # a line lost
            del edited[index]
        elif kind == 2:  # two lines swapped
            other = min(index + 1, len(edited) - 1)
            edited[index], edited[other] = edited[other], edited[index]
        else:  # a line cut short or garbled
            edited[index] = edited[index][: rng.randrange(len(edited[index]))] + rng.choice(
                ["", "\x00", "}", "ü"]
            )
        text = "\n".join(edited) + "\n"
        replay = verify_bytes(text.encode(), "edited.jsonl", collect=True)
        touched = lines[index : index + 2] if kind == 2 else lines[index : index + 1]
        quiet = ('"type":"connection"', '"type":"hello"')
        if kind in (1, 2) and text != source and not any(q in x for x in touched for q in quiet):
            # Only where a connection event or a Hello was logged is not checked: neither changes
            # a decision.
            assert replay.problem is not None, (attempt, index)
        if replay.problem is not None:
            assert str(replay.problem) and replay.problem.kind in ("damage", "discrepancy", "unsupported")
        if replay.variant is not None:
            render(replay, io.StringIO())
            for seat in range(3):
                render(replay, io.StringIO(), seat=seat)
            if attempt % 15 == 0:
                assert "replay-data" in render_html(replay)


def test_latency_fields_are_read_from_version_3_and_damage_before(
    played: dict[str, Played], tmp_path: Path
) -> None:
    """An action line's `rtt_ms` and `allowance_ms` (a latency allowance) verify in a version 3
    log and lower the clock's charge; in an older log, or out of range, they are damage."""
    lines = lines_of(played["clean"].path)
    lines[0]["time_control"]["latency_allowance_ms"] = 300
    first = next(i for i, line in enumerate(lines) if line["type"] == "action")
    think = lines[first]["think_ms"] = 40
    deal_line = next(line for line in lines if line["type"] == "deal")
    deal_line["record"]["actions"][0]["think_ms"] = think  # the record mirrors the action line
    lines[first].update(rtt_ms=30, allowance_ms=30)
    good = write_lines(tmp_path / "allowance.jsonl", lines)
    assert verify_replay(good).ok
    shown = arena("replay", "show", good, "--deal", "0")
    assert shown.returncode == 0, shown.stderr
    assert "latency allowance up to 300 ms per decision" in shown.stdout
    assert "40 ms of" in shown.stdout and "(rtt 30 ms, 30 ms allowed, 10 ms charged)" in shown.stdout

    lines[first]["allowance_ms"] = think + 1  # more than the decision took
    line = problem_of(arena("replay", "verify", write_lines(tmp_path / "over.jsonl", lines)))
    assert "allowance_ms from 0 to think_ms" in line
    lines[first]["allowance_ms"] = 30
    lines[0]["version"] = 2
    line = problem_of(arena("replay", "verify", write_lines(tmp_path / "v2.jsonl", lines)))
    assert "unknown field(s) ['allowance_ms', 'rtt_ms']" in line
