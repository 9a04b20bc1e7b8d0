"""The research bridge in the referee's process (`inprocess:bridge ...`): a seeded policy and a
seeded OpenSpiel bot play the same match, to the replay line, as the same bridge in bot processes
over gRPC (a real server on 127.0.0.1, real processes); bad arguments fail when the spec loads."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
import trio
from support.inprocess import normalised

pytest.importorskip("pettingzoo")
pytest.importorskip("pyspiel")

from arena.engine import find_variant
from arena.referee.runner import MatchConfig
from arena.referee.seat import TimeControl
from arena.server.inprocess import InProcessError, load_bot
from arena.server.local import EXAMPLE_BOTS, play_match

BRIDGE = f"{shlex.quote(sys.executable)} -m arena.research.bridge"
AGENTS = ("--policy random --seed policy-7", "--openspiel random --seed openspiel-7")


def test_bridge_agents_in_process_play_as_the_bridge_processes_do(tmp_path: Path) -> None:
    config = MatchConfig(
        find_variant("grosstarock"),
        deals=2,
        seed=35,
        seat_names=("policy", "openspiel", "heuristic"),
        time_control=TimeControl(per_decision_ms=10_000, bank_ms=0),
    )
    processes = [f"{BRIDGE} {agent}" for agent in AGENTS] + [EXAMPLE_BOTS["heuristic"]]
    inprocess = [f"inprocess:bridge {agent}" for agent in AGENTS] + ["inprocess:heuristic"]
    replays = []
    for name, bots in (("grpc", processes), ("in", inprocess)):
        played = trio.run(play_match, config, bots, tmp_path / name)
        assert played.runner.replay_path is not None
        replays.append(normalised(played.runner.replay_path))
    over_grpc, in_process = replays
    assert in_process == over_grpc
    hellos = [(line["bot_name"], line["bot_version"]) for line in in_process if line["type"] == "hello"]
    assert hellos == [("policy-random", ""), ("openspiel-random", "2"), ("heuristic", "")]
    end = in_process[-1]
    assert end["type"] == "match_end" and end["termination"] == "completed"
    assert end["faults"] == {"0": 0, "1": 0, "2": 0}


def test_a_bridge_spec_takes_the_bridges_arguments_and_refuses_bad_ones_in_one_line() -> None:
    bot = load_bot("inprocess:bridge --openspiel ismcts --simulations 40 --worlds 16 --uct-c 10")
    assert bot.argv == ("--openspiel", "ismcts", "--simulations", "40", "--worlds", "16", "--uct-c", "10")
    _, made = bot.new("a seed")
    assert (made.name, made._bot.simulations, made._bot.uct_c, made._bot.seed) == (
        "openspiel-ismcts",
        40,
        10.0,
        "a seed",
    )
    for spec, error in [
        ("inprocess:bridge", "one of the arguments --policy --openspiel is required"),
        ("inprocess:bridge --openspiel ismcts --simulations 0", "must be at least 1"),
        ("inprocess:bridge --policy random --address x", "unrecognised arguments: --address x"),
        ("inprocess:bridge --policy no_such_module:act", "cannot load policy 'no_such_module:act'"),
        ("inprocess:random --policy random", "'RandomBot' takes no arguments"),
        ("inprocess:bridge --policy 'random", "No closing quotation"),
    ]:
        with pytest.raises(InProcessError, match=error):
            load_bot(spec)
