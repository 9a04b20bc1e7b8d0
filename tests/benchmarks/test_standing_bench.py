"""`python -m benchmarks arena`, small: a real server and lobby bots in driver processes, a short window.

Only behaviour is checked (every bot connected, matches played and recorded with their
replays, no lost result, no server error), never timings: the machine may be busy.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.__main__ import main
from benchmarks.arena import bench_arena
from benchmarks.common import percentile


def test_bench_arena_plays_and_loses_nothing() -> None:
    measured = bench_arena(bots=9, seconds=4, drivers=2)
    assert measured.connected == 9
    assert measured.matches_in_window > 0 and measured.decisions > 0
    assert measured.round_trip_decisions > 0
    assert measured.matches_by_state.get("finished", 0) >= measured.matches_in_window
    assert measured.matches_seen_ended == measured.matches_by_state["finished"]
    assert measured.lost_results == 0
    assert measured.matches_cut_off == 0 and measured.matches_unfinished == 0
    assert measured.faults == 0 and measured.stream_errors == {}
    assert measured.server_errors == 0, measured.server_error_events
    assert measured.rss_peak_mib >= measured.rss_baseline_mib > 0
    json.dumps(measured.to_dict())


def test_bench_arena_command_validates(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["arena", "--bots", "0"])
    assert "at least 1" in capsys.readouterr().err
    assert main(["arena", "--bots", "2", "--seconds", "1"]) == 1
    assert "cannot fill a table of 3" in capsys.readouterr().err


def test_percentile() -> None:
    assert percentile([], 99) == 0.0
    assert percentile([3, 1, 2], 50) == 2.0
    assert percentile(list(range(1, 101)), 99) == 99.0


def test_bench_arena_servers_runs_one_then_two_servers_on_one_postgresql() -> None:
    from postgres import unavailable

    from benchmarks.arena import bench_arena_servers
    from benchmarks.postgres import PostgresUnavailable, find_bindir

    try:
        find_bindir()
    except PostgresUnavailable as exc:
        unavailable(str(exc))
    runs = bench_arena_servers(servers=2, bots=6, seconds=2, drivers=1)
    assert [run.servers for run in runs] == [1, 2]
    for run in runs:
        assert run.connected == 6 and run.matches_in_window > 0 and run.decisions_per_s > 0
        assert len(run.server_cpu_percent) == run.servers and all(c > 0 for c in run.server_cpu_percent)
        assert run.matches_recorded >= run.matches_in_window
        assert run.database_commits_per_match > 0 and run.database_cpu_percent > 0
        assert sum(run.hosted) == run.matches_recorded
        assert run.lost_results == 0 and run.server_errors == 0
        json.dumps(run.to_dict())
