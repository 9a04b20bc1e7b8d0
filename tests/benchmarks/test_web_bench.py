"""`python -m benchmarks web`, small: a real server and site, quick bots, real viewers over loopback.

Only behaviour is checked (every viewer got its position and then updates in every window,
the referee decided on both sides, the numbers are there), never timings: the machine may be
busy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest
import trio

from benchmarks.web_until import web_until


def test_bench_web_measures_both_sides_with_live_viewers() -> None:
    # Through the command, as users run it: with --json its output is the JSON alone (the
    # server runs in the bench's process; its log lines go to stderr, at warning level).
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "web", "--matches", "2", "--viewers", "6",
         "--seconds", "1.5", "--rounds", "1", "--frame", "0.25", "--updates-per-s", "12", "--json"],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    measured = SimpleNamespace(**json.loads(proc.stdout))
    assert measured.windows == 4
    assert measured.decisions_per_s_0 > 0 and measured.decisions_per_s_n > 0
    assert measured.server_cpu_us_per_decision_0 > 0 and measured.server_cpu_us_per_decision_n > 0
    # by thread: the referee's (trio) and the gRPC loop's both work on each side, and the
    # threads add up to about the process (each thread's count is in whole clock ticks, and a
    # worker thread that ended in the window is only in the process's)
    for by_thread, whole in (
        (measured.server_threads_cpu_us_per_decision_0, measured.server_cpu_us_per_decision_0),
        (measured.server_threads_cpu_us_per_decision_n, measured.server_cpu_us_per_decision_n),
    ):
        assert set(by_thread) == {"trio", "grpc-io", "other"}
        assert by_thread["trio"] > 0 and by_thread["grpc-io"] > 0
        assert 0.5 * whole <= sum(by_thread.values()) <= 1.5 * whole
    # 6 viewers on a budget of 12 updates a second: each one's frame is 0.5 s, not 0.25 s. Each
    # was kept up to date the whole window at that frame: about 3 updates in 1.5 s, not 6.
    assert measured.viewer_frame_s == 0.5
    assert 2 <= measured.viewer_updates_min <= 4, measured.viewer_updates_min
    assert measured.viewer_bytes_per_s > 0 and measured.viewers_process_cpu_share >= 0


def test_web_until_does_the_same_work_in_each_window_ticked_by_events() -> None:
    """The instruction count's workload (`benchmarks.web_until`), uncounted: three windows of
    at least the decisions asked, the viewers' groups ticking by the matches' events in each
    (never by time), the viewers sent their updates in theirs."""
    windows = trio.run(web_until, 6, 300, 20)
    assert [w["window"] for w in windows] == ["zero1", "viewers", "zero2"]
    for window in windows:
        assert window["decisions"] >= 300
        assert window["ticks"] == pytest.approx(window["events"] / 20, abs=1)
    assert windows[1]["received"]["viewers"] == 6 and windows[1]["received"]["updates_min"] >= 1
