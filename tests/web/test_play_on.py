"""Play on from a recorded position (`arena.web.playon`): the new match starts from exactly the
recording's state at that decision, records the decisions before it as they were, and its replay
verifies. Real in-process example bots play on; the recordings are the repository's samples."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from arena.engine import observation
from arena.referee.seat import TimeControl
from arena.replay.read import Replay
from arena.replay.verify import verify_replay
from arena.server.inprocess import load_bot, seat_inprocess
from arena.web.playon import PlayOnError, PlayOnRunner, play_on_config

SAMPLES = Path(__file__).resolve().parents[2] / "replays" / "samples"
CLOCK = TimeControl(per_decision_ms=5_000, bank_ms=5_000)


def _play_on(replay: Replay, deal: int, step: int, replay_dir: Path) -> PlayOnRunner:
    assert replay.variant is not None
    names = tuple(f"random-{s}" for s in range(replay.variant.seats))
    config = play_on_config(replay, deal, names, CLOCK, max_invalid=3)
    runner = PlayOnRunner("00000000000000aa", config, replay_dir, replay, deal, step)

    async def main() -> None:
        for seat in range(replay.variant.seats):  # type: ignore[union-attr]
            seat_inprocess(runner, seat, load_bot("inprocess:random"), seed=str(seat))
        await runner.run()

    trio.run(main)
    return runner


def _lines(path: Path, kind: str) -> list[str]:
    return [line for line in path.read_text().splitlines() if f'"type":"{kind}"' in line]


@pytest.mark.parametrize(
    ("sample", "deal", "where"),
    [("danish.jsonl", 1, 0.5), ("american.jsonl", 0, 0.3), ("grosstarock.jsonl", 0, 0.0)],
)
def test_play_on_starts_from_the_recorded_state(tmp_path: Path, sample: str, deal: int, where: float) -> None:
    replay = verify_replay(SAMPLES / sample, collect=True)
    assert replay.variant is not None and replay.ok
    step = int(len(replay.deal(deal).decisions) * where)
    recorded, decision = replay.position(deal, step)
    runner = _play_on(replay, deal, step, tmp_path)
    started = runner.start_state
    assert started is not None
    assert started.current_player == recorded.current_player == decision.seat
    assert started.legal_actions() == recorded.legal_actions()
    for seat in range(replay.variant.seats):
        assert observation(started, seat) == observation(recorded, seat)
    # Everything before the fork is the recording's, line for line (think times included).
    assert runner.replay_path is not None
    played = verify_replay(runner.replay_path, collect=True)
    assert played.ok and played.complete, played.problem
    assert played.header["seed"] == replay.header["seed"]
    before = [d for d in range(deal)]
    for index in before:
        assert [(x.seat, x.action, x.think_ms) for x in played.deal(index).decisions] == [
            (x.seat, x.action, x.think_ms) for x in replay.deal(index).decisions
        ]
        assert played.deal(index).result == replay.deal(index).result
    prefix = [(x.seat, x.action, x.think_ms) for x in replay.deal(deal).decisions[:step]]
    assert [(x.seat, x.action, x.think_ms) for x in played.deal(deal).decisions[:step]] == prefix
    assert _lines(runner.replay_path, "deal_start")[: deal + 1] == _lines(SAMPLES / sample, "deal_start")[
        : deal + 1
    ]


def test_a_position_the_replay_does_not_hold_is_refused(tmp_path: Path) -> None:
    replay = verify_replay(SAMPLES / "grosstarock.jsonl", collect=True)
    names = ("a", "b", "c")
    config = play_on_config(replay, 0, names, CLOCK, max_invalid=3)
    steps = len(replay.deal(0).decisions)
    with pytest.raises(PlayOnError, match=f"decisions 0 to {steps - 1}, not {steps}"):
        PlayOnRunner("00000000000000ab", config, tmp_path, replay, 0, steps)
    with pytest.raises(PlayOnError, match="deal 1: the replay has deals 0 to 0"):
        play_on_config(replay, 1, names, CLOCK, max_invalid=3)
